//! Every error a newcomer meets says what happened and names the next
//! command to run; the messages of a first hour, one test each.

use crate::common::{Brain, Run, Transcript};

/// The `hint:` line of an error, which must name a command in backquotes.
#[track_caller]
fn hint(r: &Run) -> String {
    let h = r
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("hint: "))
        .unwrap_or_else(|| panic!("no hint:\n{}", r.stderr))
        .to_string();
    assert!(
        !h.contains("run `bsi help` for the commands"),
        "a generic hint: {h}"
    );
    assert!(h.contains('`'), "the hint names no command: {h}");
    h
}

#[test]
fn claiming_the_registry_itself() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    let r = t.bsi(&["open", "BRAIN-INDEX.md"]);
    hint(&r);
    t.check("hints/claiming_the_registry_itself.txt");
}

#[test]
fn a_note_or_an_agent_that_does_not_fit_a_cell() {
    let b = Brain::new();
    let r = b.bsi(&["open", "agents/", "--note", "two\nlines"]);
    r.code(2).stderr_has("the note contains a newline");
    assert!(hint(&r).contains("--note"));
    // `|` is refused on the command line as in .bsi.toml.
    let r = b.bsi(&["open", "agents/", "--agent", "a|b"]);
    r.code(2).stderr_has("contains `|`");
    assert!(hint(&r).contains("--agent claude"));
    b.write(".bsi.toml", "default_agent = \"a|b\"\n");
    b.bsi(&["open", "agents/"])
        .code(2)
        .stderr_has("default_agent");
    assert!(b.active().is_empty());
}

#[test]
fn a_bad_session_id() {
    let b = Brain::new();
    let r = b.bsi(&["open", "agents/", "--session", "my session"]);
    r.code(2).stderr_has("is not a session id");
    assert!(hint(&r).contains("bsi status"));
    let r = b.bsi(&["close", "a/b"]);
    r.code(2);
    hint(&r);
}

#[test]
fn a_remote_that_does_not_exist() {
    let b = Brain::new();
    let r = b.bsi(&["--remote", "nope", "status"]);
    r.code(2)
        .stderr_has("there is no git remote named `nope`")
        .stderr_has(".bsi.toml remote");
    assert!(hint(&r).contains("git remote -v"));
}

#[test]
fn an_unparsable_bsi_now() {
    let b = Brain::new();
    let r = b.bsi_env(&["status"], &[("BSI_NOW", "tomorrow")]);
    r.code(2)
        .stderr_has("BSI_NOW=`tomorrow` is not an RFC 3339 time");
    let h = hint(&r);
    assert!(
        h.contains("2026-03-14T09:30:00Z") && h.contains("unset BSI_NOW"),
        "{h}"
    );
}

#[test]
fn sync_without_a_remote() {
    let b = Brain::new();
    let r = b.bsi(&["sync"]);
    assert_ne!(r.code, 0);
    let h = hint(&r);
    assert!(
        h.contains("git remote add") && h.contains(".bsi.toml"),
        "{h}"
    );
}

#[test]
fn renew_and_close_without_a_session() {
    let b = Brain::new();
    for cmd in ["renew", "close"] {
        let r = b.bsi(&[cmd]);
        r.code(2).stderr_has("no session given");
        let h = hint(&r);
        assert!(
            h.contains("bsi status") && h.contains("export BSI_SESSION"),
            "{h}"
        );
    }
    let r = b.bsi(&["whoami"]);
    r.code(1);
    assert!(hint(&r).contains("bsi open SCOPE --shell"));
}

#[test]
fn a_relative_bsi_registry_starts_at_the_work_tree_root() {
    let b = Brain::bare_repo();
    b.write("brain/notes/a.md", "# A\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-q", "-m", "base"]);
    let env = [("BSI_REGISTRY", "brain/BRAIN-INDEX.md")];
    b.bsi_env(&["init"], &env).ok();
    assert!(b.path().join("brain/BRAIN-INDEX.md").is_file());
    // From a subdirectory, the same registry and brain root.
    let mut cmd = b.command(&["open", "a.md", "--session", "s1"]);
    cmd.current_dir(b.path().join("brain/notes"))
        .env("BSI_REGISTRY", "brain/BRAIN-INDEX.md");
    let out = cmd.output().expect("run bsi");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    b.bsi_env(&["status"], &env).ok().stdout_has("  notes/a.md");
    // A directory that does not exist is named, with the way out.
    let r = b.bsi_env(&["status"], &[("BSI_REGISTRY", "nowhere/BRAIN-INDEX.md")]);
    r.code(2).stderr_has("does not exist");
    assert!(hint(&r).contains("unset BSI_REGISTRY"));
}

#[test]
fn release_without_confirm_is_a_preview_said_once() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    let later = [("BSI_NOW", "2026-03-14T12:00:00Z")];
    b.bsi_env(&["watchdog"], &later).code(4);
    let n = b.commits();
    let r = b.bsi_env(&["release", "s1"], &later);
    r.ok()
        .stdout_has("Nothing released yet")
        .stdout_has("s1 holds agents/ [dir]")
        .stdout_has(
            "Next: check that the session is really gone, then run `bsi release s1 --confirm`.",
        );
    assert_eq!(r.stderr, "");
    assert_eq!(r.stdout.matches("Nothing released").count(), 1);
    assert_eq!(b.commits(), n);
    let j = b.bsi_env(&["release", "s1", "--json"], &later);
    j.ok();
    assert_eq!(j.json()["dry_run"], true);
}

#[test]
fn init_on_an_invalid_registry_names_the_fix_not_status() {
    let b = Brain::new();
    let text = b.registry().replace("## Claims actifs", "## Claims");
    b.commit_registry(&text, "a hand edit");
    let r = b.bsi(&["init"]);
    r.code(5);
    let h = hint(&r);
    assert!(!h.contains("bsi status"), "{h}");
    assert!(h.contains("git worktree add"), "{h}");
    b.bsi(&["status"]).code(5);
}

#[test]
fn json_errors_are_json() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    let r = b.bsi_env(
        &["renew", "s1", "--json"],
        &[("BSI_NOW", "2026-03-14T12:00:00Z")],
    );
    r.code(1);
    let j = r.json();
    assert_eq!(j["error"], "refused");
    assert_eq!(j["exit"], 1);
    assert!(
        j["message"]
            .as_str()
            .is_some_and(|m| m.contains("can no longer be renewed")),
        "{j}"
    );
    assert!(
        j["hint"]
            .as_str()
            .is_some_and(|h| h.contains("bsi close s1")),
        "{j}"
    );
    // The text still goes to stderr.
    r.stderr_has("error: ").stderr_has("hint: ");
    let r = b.bsi(&["close", "--json"]);
    r.code(2);
    assert_eq!(r.json()["error"], "usage");
    let r = b.bsi(&["status", "--json", "--remote", "nope"]);
    r.code(2);
    assert_eq!(r.json()["exit"], 2);
}

#[test]
fn renew_right_after_open_succeeds_and_says_why_nothing_moved() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    let n = b.commits();
    let r = b.bsi(&["renew", "s1"]);
    r.ok().stdout_has(
        "Unchanged — agents/ / expires 2026-03-14 11:30 +00:00 (2h left, already at least 2h from now)",
    )
    .stdout_has("`bsi renew s1 --ttl 4h`");
    assert_eq!(b.commits(), n);
    let j = b.bsi(&["renew", "s1", "--json"]);
    j.ok();
    assert!(j.json()["commit"].is_null(), "{}", j.stdout);
    assert_eq!(j.json()["unchanged"][0]["scope"], "agents/");
    b.bsi(&["renew", "s1", "--ttl", "4h"])
        .ok()
        .stdout_has("Claim renewed — agents/ / expires 2026-03-14 13:30 +00:00");
    // Past its expiry, a claim can no longer be renewed.
    let r = b.bsi_env(&["renew", "s1"], &[("BSI_NOW", "2026-03-14T14:00:00Z")]);
    r.code(1)
        .stderr_has("agents/ of s1 passed its expiry (2026-03-14 13:30 +00:00, overdue 30m)");
    assert!(hint(&r).contains("`bsi close s1`, then `bsi open agents/`"));
}

#[test]
fn messages_give_times_in_the_readers_zone() {
    let b = Brain::new();
    // Written from Paris: the registry keeps +01:00.
    b.bsi_env(
        &["open", "agents/", "--session", "s1"],
        &[("TZ", "Europe/Paris")],
    )
    .ok()
    .stdout_has("expires 2026-03-14 12:30 +01:00");
    assert!(b.active()[0].contains("2026-03-14 12:30 +01:00"));
    // Read in UTC: the same instant, in UTC.
    b.bsi(&["open", "agents/alice.md", "--session", "s2"])
        .code(3)
        .stderr_has("expires 2026-03-14 11:30 +00:00 (2h left)");
    b.bsi(&["status"])
        .ok()
        .stdout_has("EXPIRES (UTC)")
        .stdout_has("11:30");
}

#[test]
fn the_owner_may_close_its_stale_claim() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1", "--agent", "claude"])
        .ok();
    let later = [("BSI_NOW", "2026-03-14T12:00:00Z")];
    b.bsi_env(&["watchdog"], &later).code(4);
    // Not another agent.
    let r = b.bsi_env(&["close", "s1", "--agent", "codex"], &later);
    r.code(1);
    assert!(hint(&r).contains("--force"));
    b.bsi_env(&["close", "s1", "--agent", "claude"], &later)
        .ok()
        .stdout_has("Claim closed — s1 (agents/)");
    assert!(b.stale().is_empty());
    assert!(b.history()[0].contains("| completed |"));
}

#[test]
fn help_of_help_and_of_a_command() {
    let b = Brain::bare_repo();
    b.bsi(&["help", "--help"])
        .ok()
        .stdout_has("Usage: bsi help [COMMAND]...");
    b.bsi(&["help", "open"])
        .ok()
        .stdout_has("Usage: bsi open [OPTIONS] <SCOPE>...");
    b.bsi(&["help", "hook", "install"])
        .ok()
        .stdout_has("Usage: bsi hook install");
    b.bsi(&["help"])
        .ok()
        .stdout_has("Usage: bsi [OPTIONS] <COMMAND>");
    let r = b.bsi(&["help", "opne"]);
    r.code(2);
    assert!(hint(&r).contains("bsi --help"));
}

#[test]
fn global_flags_stay_out_of_the_commands_that_ignore_them() {
    let b = Brain::bare_repo();
    for cmd in ["completions", "man", "merge-driver", "help"] {
        let r = b.bsi(&[cmd, "--help"]);
        r.ok();
        for flag in ["--registry", "--remote", "--quiet", "--verbose"] {
            assert!(!r.stdout.contains(flag), "`bsi {cmd} --help` shows {flag}");
        }
    }
    b.bsi(&["status", "--help"]).ok().stdout_has("--registry");
    // Still accepted where they are written.
    b.bsi(&["-q", "man"]).ok().stdout_has(".TH bsi 1");
}

#[test]
fn an_english_registry_is_read_and_written_by_every_command() {
    let b = Brain::bare_repo();
    b.write("agents/alice.md", "# Alice\n");
    b.write(".bsi.toml", "registry_language = \"english\"\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-q", "-m", "base"]);
    b.bsi(&["init"]).ok();
    let text = b.registry();
    for h in [
        "## Active claims",
        "## Stale claims — check required",
        "## History",
    ] {
        assert!(text.contains(h), "{h} not in\n{text}");
    }
    assert!(!text.contains("Claims actifs"));
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    assert!(b.rows("Active claims")[0].contains("| s1 | agents/ |"));
    b.bsi_env(&["watchdog"], &[("BSI_NOW", "2026-03-14T12:00:00Z")])
        .code(4);
    let stale = b.rows("Stale claims — check required");
    assert!(
        stale[0].contains("| TTL expired without closing |"),
        "{stale:?}"
    );
    // A clone without the key reads it as well.
    b.write(".bsi.toml", "");
    b.bsi_env(&["status"], &[("BSI_NOW", "2026-03-14T12:00:00Z")])
        .ok()
        .stdout_has("STALE overdue 30m");
    b.bsi(&["release", "s1", "--confirm"]).ok();
    assert!(b.rows("History")[0].contains("| released |"));
    b.write(".bsi.toml", "registry_language = \"klingon\"\n");
    b.bsi(&["status"])
        .code(2)
        .stderr_has("`registry_language` is `klingon`; use french or english");
}

#[test]
fn a_french_registry_names_the_eight_hour_ceiling_only_when_reached() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1", "--ttl", "90m"])
        .ok();
    b.bsi(&["open", "projets/", "--session", "s2", "--ttl", "8h"])
        .ok();
    // Swept a day late: the short claim only expired.
    b.bsi_env(&["watchdog"], &[("BSI_NOW", "2026-03-15T12:00:00Z")])
        .code(4);
    let stale = b.stale();
    let row = |s: &str| {
        stale
            .iter()
            .find(|r| r.contains(s))
            .cloned()
            .unwrap_or_default()
    };
    assert!(
        row("| s1 |").contains("| TTL expiré sans fermeture |"),
        "{stale:?}"
    );
    assert!(
        row("| s2 |").contains("| TTL expiré sans fermeture (8h maximum atteint) |"),
        "{stale:?}"
    );
}

#[test]
fn views_with_nothing_to_fix_end_with_how_to_claim() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    for args in [&["status"][..], &["status", "--tree"]] {
        let r = b.bsi(args);
        let last = r.stdout.lines().last().unwrap_or_default().to_string();
        assert_eq!(
            last, "Next: `bsi open SCOPE` before editing; it must not overlap the claims above.",
            "{args:?}:\n{}",
            r.stdout
        );
    }
    b.bsi(&["watchdog"])
        .ok()
        .stdout_has("0 stale\nNext: `bsi status` shows who holds what");
    let w = b.bsi_env(&["whoami"], &[("BSI_SESSION", "s1")]);
    assert_eq!(w.stdout.matches("Next:").count(), 1, "{}", w.stdout);
}

#[test]
fn quiet_keeps_the_views_and_drops_what_to_do_next() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1", "--agent", "claude"])
        .ok();
    for (args, env) in [
        (&["-q", "status"][..], &[][..]),
        (&["-q", "status", "--tree"], &[]),
        (&["-q", "whoami"], &[("BSI_SESSION", "s1")]),
    ] {
        let r = b.bsi_env(args, env);
        r.ok().stdout_has("agents/").stdout_has("1 active, 0 stale");
        assert!(!r.stdout.contains("Next:"), "{args:?}:\n{}", r.stdout);
    }
    b.bsi_env(&["-q", "whoami"], &[("BSI_SESSION", "s1")])
        .ok()
        .stdout_has("Agent: claude");
}
