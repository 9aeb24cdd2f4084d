//! `.bsi.toml` at the brain root: every key, unknown keys and bad files.

use crate::common::Brain;
use crate::transcript::Transcript;

#[test]
fn default_ttl_and_default_agent_apply_when_no_flag_says_otherwise() {
    let b = Brain::new();
    b.write(
        ".bsi.toml",
        "# team settings\ndefault_ttl = \"4h\"\ndefault_agent = \"claude\"\n",
    );
    let mut t = Transcript::new(&b);
    t.note(
        ".bsi.toml: default_ttl = \"4h\", default_agent = \"claude\"; the clock starts at 09:30",
    );
    t.bsi(&["open", "agents/", "--session", "s1"]).ok();
    assert!(b.active()[0].contains("| claude |"), "{:?}", b.active());
    t.note("The flag and BSI_AGENT win over the file (at 09:31).");
    t.bsi_env(
        &["open", "README.md", "--session", "s2", "--ttl", "1h"],
        &[("BSI_AGENT", "codex")],
    )
    .ok();
    assert!(b.active()[1].contains("| codex |"), "{:?}", b.active());
    t.note("renew uses the default TTL too, and the default agent owns s1.");
    t.bsi_env(&["renew", "s1"], &[("BSI_NOW", "2026-03-14T12:00:00Z")])
        .ok();
    t.check("config/default_ttl_and_default_agent_apply_when_no_flag_says_otherwise.txt");
    assert!(
        b.active()[0].contains("2026-03-14 16:00 +00:00"),
        "{:?}",
        b.active()
    );
}

#[test]
fn max_active_per_agent_refuses_beyond_the_limit() {
    let b = Brain::new();
    b.write(".bsi.toml", "max_active_per_agent = 2\n");
    let me = [("BSI_AGENT", "claude")];
    let codex = [("BSI_AGENT", "codex")];
    let mut t = Transcript::new(&b);
    t.note(".bsi.toml: max_active_per_agent = 2");
    t.bsi_env(&["open", "agents/", "--session", "s1"], &me).ok();
    t.bsi_env(&["open", "README.md", "--session", "s2"], &me)
        .ok();
    let reg = b.registry();
    let n = b.commits();
    t.bsi_env(&["open", "projets/plan.md#Risks", "--session", "s3"], &me)
        .code(1);
    assert_eq!((b.registry(), b.commits()), (reg.clone(), n));
    t.note("Asking for several scopes at once counts them all.");
    t.bsi_env(&["open", "projets/", "--session", "s4"], &codex)
        .ok();
    let n = b.commits();
    t.bsi_env(
        &["open", "notes/a.md", "notes/b.md", "--session", "s4"],
        &codex,
    )
    .code(1);
    assert_eq!(b.commits(), n);
    t.note("Another agent is not limited by claude's claims; closing frees room.");
    t.bsi_env(&["close", "s2"], &me).ok();
    t.bsi_env(&["open", "notes/", "--session", "s3"], &me).ok();
    t.note("Reopening a scope already held adds nothing and is not refused.");
    let n = b.commits();
    t.bsi_env(&["open", "notes/", "--session", "s3"], &me).ok();
    assert_eq!(b.commits(), n);
    t.check("config/max_active_per_agent_refuses_beyond_the_limit.txt");
}

#[test]
fn unknown_keys_name_the_nearest_valid_one() {
    let b = Brain::new();
    b.write(".bsi.toml", "defualt_ttl = \"4h\"\n");
    let n = b.commits();
    let mut t = Transcript::new(&b);
    t.note(".bsi.toml: defualt_ttl = \"4h\"");
    // Said, and ignored: what an older bsi does with a newer one's key.
    t.bsi(&["open", "agents/", "--session", "s1"]).code(0);
    t.check("config/unknown_keys_name_the_nearest_valid_one.txt");
    assert_eq!(b.commits(), n + 1);
    assert_eq!(b.active().len(), 1);
}

#[test]
fn malformed_files_and_bad_values_are_clear_errors() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    for text in [
        "default_ttl = \"2h\"\nremote = \n",
        "default_ttl = \"12h\"\n",
        "hook_mode = \"loud\"\n",
        "remote = \"\"\n",
        "max_active_per_agent = 0\n",
    ] {
        b.write(".bsi.toml", text);
        t.note(&format!(".bsi.toml: {text:?}"));
        t.bsi(&["open", "agents/", "--session", "s1"]).code(2);
    }
    t.check("config/malformed_files_and_bad_values_are_clear_errors.txt");
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

/// The registry's branch is held to git's own rule for a branch name
/// (`git check-ref-format --branch`): every name bsi takes, git takes too,
/// and `HEAD` is refused before `bsi init` makes `refs/heads/HEAD`.
#[test]
fn registry_branch_names_follow_gits_rule() {
    let b = Brain::bare_repo();
    let names = [
        "brain-index",
        "claims",
        "team/claims",
        "HEAD",
        "@",
        "-x",
        "x.lock",
        "a.lock/b",
        "a/.hidden",
        ".hidden",
        "a..b",
        "a//b",
        "a/",
        "a.",
        "a@{1}",
        "v1.2/claims_x",
    ];
    for name in names {
        let git = std::process::Command::new("git")
            .args(["check-ref-format", "--branch", name])
            .current_dir(b.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .expect("git check-ref-format");
        if bsi_core::config::valid_branch_name(name) {
            assert!(git.status.success(), "bsi takes {name:?}, git refuses it");
        }
    }
    for name in ["HEAD", "a.lock/b", "a/.hidden", "@"] {
        assert!(!bsi_core::config::valid_branch_name(name), "{name}");
    }
    b.write(".bsi.toml", "registry_branch = \"HEAD\"\n");
    b.bsi(&["init"]).code(2).stderr_has("registry_branch");
    assert!(
        !b.path().join(".git/refs/heads/HEAD").exists(),
        "a branch named HEAD was made"
    );
}

/// A brain whose registry lives on `claims`, with bsi's hooks, and
/// `agents/alice.md` held by s1.
fn on_claims_branch() -> Brain {
    let b = Brain::bare_repo();
    b.write("agents/alice.md", "# Alice\n\nnotes\n");
    b.write(".bsi.toml", "registry_branch = \"claims\"\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-q", "-m", "base"]);
    b.bsi(&["init"]).ok();
    b.bsi(&["hook", "install"]).ok();
    b.bsi(&[
        "open",
        "agents/alice.md",
        "--session",
        "s1",
        "--agent",
        "ada",
    ])
    .ok();
    b
}

/// One line a hook cannot use (a value out of range, a newer bsi's key)
/// is said and left at its default alone: the registry's branch still
/// counts, and a commit into a held file is refused.
#[test]
fn a_bad_line_of_the_config_leaves_the_guard_on_its_registry() {
    let b = on_claims_branch();
    b.write(
        ".bsi.toml",
        "registry_branch = \"claims\"\nhistory_keep = 0\nfuture_setting = \"x\"\n",
    );
    b.write("agents/alice.md", "# Alice\n\nnotes\nmore\n");
    b.git(&["add", "agents/alice.md"]);
    let c = b.git_at(b.path(), Some("s2"), &["commit", "-q", "-m", "alice"]);
    assert_ne!(c.code, 0, "the commit landed: {c:?}");
    assert!(c.stderr.contains("s1"), "{}", c.stderr);
    assert!(c.stderr.contains("history_keep"), "{}", c.stderr);
    assert!(c.stderr.contains("future_setting"), "{}", c.stderr);
    assert_eq!(b.git(&["log", "-1", "--format=%s"]).trim(), "base");
}

/// A key that decides what is judged, unreadable, stops the hook with the
/// file's words, unless the file says `hook_mode = "warn"`.
#[test]
fn an_unreadable_guarding_key_stops_the_hook_unless_the_mode_is_warn() {
    let b = on_claims_branch();
    b.write(".bsi.toml", "registry_branch = \"HEAD\"\n");
    b.write("README.md", "# Brain\n");
    b.git(&["add", "README.md"]);
    let c = b.git_at(b.path(), Some("s2"), &["commit", "-q", "-m", "readme"]);
    assert_ne!(c.code, 0, "the commit landed: {c:?}");
    assert!(
        c.stderr.contains("registry_branch") && c.stderr.contains(".bsi.toml"),
        "{}",
        c.stderr
    );
    b.write(
        ".bsi.toml",
        "registry_branch = \"HEAD\"\nhook_mode = \"warn\"\n",
    );
    let c = b.git_at(b.path(), Some("s2"), &["commit", "-q", "-m", "readme"]);
    assert_eq!(c.code, 0, "{c:?}");
    assert!(c.stderr.contains("registry_branch"), "{}", c.stderr);
}
