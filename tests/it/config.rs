//! `.bsi.toml` at the brain root: every key, unknown keys and bad files.

use crate::common::Brain;

#[test]
fn default_ttl_and_default_agent_apply_when_no_flag_says_otherwise() {
    let b = Brain::new();
    b.write(
        ".bsi.toml",
        "# team settings\ndefault_ttl = \"4h\"\ndefault_agent = \"claude\"\n",
    );
    b.bsi(&["open", "agents/", "--session", "s1"])
        .ok()
        .stdout_has("expires 2026-03-14 13:30 +00:00");
    assert!(b.active()[0].contains("| claude |"), "{:?}", b.active());
    // The flag and BSI_AGENT win over the file.
    b.bsi_env(
        &["open", "README.md", "--session", "s2", "--ttl", "1h"],
        &[("BSI_AGENT", "codex")],
    )
    .ok()
    .stdout_has("expires 2026-03-14 10:30 +00:00");
    assert!(b.active()[1].contains("| codex |"), "{:?}", b.active());
    // renew uses the default TTL too, and the default agent owns s1.
    b.bsi_env(&["renew", "s1"], &[("BSI_NOW", "2026-03-14T12:00:00Z")])
        .ok()
        .stdout_has("expires 2026-03-14 16:00 +00:00");
}

#[test]
fn max_active_per_agent_refuses_beyond_the_limit() {
    let b = Brain::new();
    b.write(".bsi.toml", "max_active_per_agent = 2\n");
    let me = [("BSI_AGENT", "claude")];
    b.bsi_env(&["open", "agents/", "--session", "s1"], &me).ok();
    b.bsi_env(&["open", "README.md", "--session", "s2"], &me)
        .ok();
    let reg = b.registry();
    let n = b.commits();
    b.bsi_env(&["open", "projets/plan.md#Risks", "--session", "s3"], &me)
        .code(1)
        .stderr_has("agent claude would hold 3 active claims")
        .stderr_has("max_active_per_agent")
        .stderr_has("hint: close a claim you no longer need");
    assert_eq!((b.registry(), b.commits()), (reg.clone(), n));
    // Asking for several scopes at once counts them all.
    b.bsi_env(
        &["open", "projets/", "--session", "s4"],
        &[("BSI_AGENT", "codex")],
    )
    .ok();
    b.bsi_env(
        &["open", "notes/a.md", "notes/b.md", "--session", "s4"],
        &[("BSI_AGENT", "codex")],
    )
    .code(1)
    .stderr_has("would hold 3");
    // Another agent is not limited by claude's claims; closing frees room.
    b.bsi_env(&["close", "s2"], &me).ok();
    b.bsi_env(&["open", "notes/", "--session", "s3"], &me).ok();
    // Reopening a scope already held adds nothing and is not refused.
    b.bsi_env(&["open", "notes/", "--session", "s3"], &me)
        .ok()
        .stdout_has("Already held");
}

#[test]
fn unknown_keys_name_the_nearest_valid_one() {
    let b = Brain::new();
    b.write(".bsi.toml", "defualt_ttl = \"4h\"\n");
    let n = b.commits();
    b.bsi(&["open", "agents/", "--session", "s1"])
        .code(2)
        .stderr_has("unknown key `defualt_ttl`: did you mean `default_ttl`?")
        .stderr_has(".bsi.toml")
        .stderr_has("hint: fix .bsi.toml");
    assert_eq!(b.commits(), n);
    assert!(b.active().is_empty());
}

#[test]
fn malformed_files_and_bad_values_are_clear_errors() {
    let b = Brain::new();
    for (text, want) in [
        ("default_ttl = \"2h\"\nremote = \n", "line 2"),
        ("default_ttl = \"12h\"\n", "`default_ttl` is not a TTL"),
        ("hook_mode = \"loud\"\n", "use off, warn, normal or strict"),
        (
            "remote = \"\"\n",
            "`remote` must be the name of a git remote",
        ),
        ("max_active_per_agent = 0\n", "at least 1"),
    ] {
        b.write(".bsi.toml", text);
        b.bsi(&["open", "agents/", "--session", "s1"])
            .code(2)
            .stderr_has(want);
    }
    assert!(b.active().is_empty());
    // Keys used by other commands parse without changing what open does.
    b.write(".bsi.toml", "hook_mode = \"strict\"\n");
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
}

#[test]
fn the_file_sits_next_to_the_registry() {
    let b = Brain::bare_repo();
    b.write("brain/notes.md", "# Notes\n");
    b.write("brain/.bsi.toml", "default_agent = \"team-bot\"\n");
    b.write(".bsi.toml", "default_agent = \"not-this-one\"\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-q", "-m", "base"]);
    let env = [("BSI_REGISTRY", "brain/BRAIN-INDEX.md")];
    b.bsi_env(&["init"], &env).ok();
    b.bsi_env(&["open", "brain/notes.md", "--session", "s1"], &env)
        .ok();
    let reg = b.read("brain/BRAIN-INDEX.md");
    assert!(reg.contains("| notes.md | file | team-bot |"), "{reg}");
}
