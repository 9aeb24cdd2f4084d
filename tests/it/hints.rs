//! Every error a newcomer meets says what happened and names the next
//! command to run; the messages of a first hour, one test each.

use crate::common::{Brain, Run};
use crate::transcript::Transcript;

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
    let mut t = Transcript::new(&b);
    hint(&t.bsi(&["open", "agents/", "--note", "two\nlines"]));
    t.note("`|` is refused on the command line as in .bsi.toml.");
    hint(&t.bsi(&["open", "agents/", "--agent", "a|b"]));
    b.write(".bsi.toml", "default_agent = \"a|b\"\n");
    t.note(".bsi.toml: default_agent = \"a|b\"");
    hint(&t.bsi(&["open", "agents/"]));
    t.check("hints/a_note_or_an_agent_that_does_not_fit_a_cell.txt");
    assert!(b.active().is_empty());
}

#[test]
fn a_bad_session_id() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    hint(&t.bsi(&["open", "agents/", "--session", "my session"]));
    hint(&t.bsi(&["close", "a/b"]));
    t.check("hints/a_bad_session_id.txt");
    assert!(b.active().is_empty());
}

#[test]
fn a_remote_that_does_not_exist() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    hint(&t.bsi(&["--remote", "nope", "status"]));
    t.check("hints/a_remote_that_does_not_exist.txt");
}

#[test]
fn an_unparsable_bsi_now() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    hint(&t.bsi_env(&["status"], &[("BSI_NOW", "tomorrow")]));
    t.check("hints/an_unparsable_bsi_now.txt");
}

#[test]
fn sync_without_a_remote() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    hint(&t.bsi(&["sync"]));
    t.check("hints/sync_without_a_remote.txt");
}

#[test]
fn renew_and_close_without_a_session() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    for cmd in ["renew", "close", "whoami"] {
        hint(&t.bsi(&[cmd]));
    }
    t.check("hints/renew_and_close_without_a_session.txt");
}

#[test]
fn a_relative_bsi_registry_starts_at_the_work_tree_root() {
    let b = Brain::bare_repo();
    b.write("brain/notes/a.md", "# A\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-q", "-m", "base"]);
    let env = [("BSI_REGISTRY", "brain/BRAIN-INDEX.md")];
    let mut t = Transcript::new(&b);
    t.bsi_env(&["init"], &env).ok();
    assert!(b.path().join("brain/BRAIN-INDEX.md").is_file());
    t.note("From a subdirectory, the same registry and brain root.");
    t.bsi_in_env("brain/notes", &["open", "a.md", "--session", "s1"], &env)
        .ok();
    t.bsi_env(&["status"], &env).ok();
    t.note("A directory that does not exist is named, with the way out.");
    hint(&t.bsi_env(&["status"], &[("BSI_REGISTRY", "nowhere/BRAIN-INDEX.md")]));
    t.check("hints/a_relative_bsi_registry_starts_at_the_work_tree_root.txt");
    assert!(b.registry().contains("| s1 | notes/a.md |"));
}

#[test]
fn release_without_confirm_is_a_preview_said_once() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    let later = [("BSI_NOW", "2026-03-14T12:00:00Z")];
    b.bsi_env(&["watchdog"], &later).code(4);
    let n = b.commits();
    let mut t = Transcript::new(&b);
    t.bsi_env(&["release", "s1"], &later).ok();
    t.check("hints/release_without_confirm_is_a_preview_said_once.txt");
    assert_eq!(b.commits(), n);
    let j = b.bsi_env(&["release", "s1", "--json"], &later);
    j.ok();
    assert_eq!(j.json()["dry_run"], true);
    assert_eq!(b.commits(), n);
}

#[test]
fn init_on_an_invalid_registry_names_the_fix_not_status() {
    let b = Brain::new();
    let text = b.registry().replace("## Claims actifs", "## Claims");
    b.commit_registry(&text, "a hand edit");
    let mut t = Transcript::new(&b);
    hint(&t.bsi(&["init"]));
    hint(&t.bsi(&["status"]));
    t.check("hints/init_on_an_invalid_registry_names_the_fix_not_status.txt");
}

#[test]
fn json_errors_are_json() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    let mut t = Transcript::new(&b);
    let r = t.bsi_env(
        &["renew", "s1", "--json"],
        &[("BSI_NOW", "2026-03-14T12:00:00Z")],
    );
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
    hint(&r);
    let r = t.bsi(&["close", "--json"]);
    assert_eq!(r.json()["error"], "usage");
    let r = t.bsi(&["status", "--json", "--remote", "nope"]);
    assert_eq!(r.json()["exit"], 2);
    t.check("hints/json_errors_are_json.txt");
}

#[test]
fn renew_right_after_open_succeeds_and_says_why_nothing_moved() {
    let b = Brain::new();
    // The same instant as the open: nothing to extend.
    let at_open = [("BSI_NOW", crate::common::NOW)];
    let mut t = Transcript::new(&b);
    t.bsi_env(&["open", "agents/", "--session", "s1"], &at_open)
        .ok();
    let n = b.commits();
    t.bsi_env(&["renew", "s1"], &at_open).ok();
    assert_eq!(b.commits(), n);
    let j = b.bsi(&["renew", "s1", "--json"]);
    j.ok();
    assert!(j.json()["commit"].is_null(), "{}", j.stdout);
    assert_eq!(j.json()["unchanged"][0]["scope"], "agents/");
    t.bsi_env(&["renew", "s1", "--ttl", "4h"], &at_open).ok();
    assert_eq!(b.commits(), n + 1);
    t.note("Past its expiry, a claim can no longer be renewed.");
    hint(&t.bsi_env(&["renew", "s1"], &[("BSI_NOW", "2026-03-14T14:00:00Z")]));
    t.check("hints/renew_right_after_open_succeeds_and_says_why_nothing_moved.txt");
}

#[test]
fn messages_give_times_in_the_readers_zone() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.note("Written from Paris: the registry keeps +01:00.");
    t.bsi_env(
        &["open", "agents/", "--session", "s1"],
        &[("TZ", "Europe/Paris")],
    )
    .ok();
    assert!(b.active()[0].contains("2026-03-14 12:30 +01:00"));
    t.note("Read in UTC: the same instant, in UTC.");
    t.bsi(&["open", "agents/alice.md", "--session", "s2"])
        .code(3);
    t.bsi(&["status"]).ok();
    t.check("hints/messages_give_times_in_the_readers_zone.txt");
}

#[test]
fn the_owner_may_close_its_stale_claim() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1", "--agent", "claude"])
        .ok();
    let later = [("BSI_NOW", "2026-03-14T12:00:00Z")];
    let mut t = Transcript::new(&b);
    t.bsi_env(&["watchdog"], &later).code(4);
    t.note("Not another agent.");
    hint(&t.bsi_env(&["close", "s1", "--agent", "codex"], &later));
    t.bsi_env(&["close", "s1", "--agent", "claude"], &later)
        .ok();
    t.check("hints/the_owner_may_close_its_stale_claim.txt");
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
    let mut t = Transcript::new(&b);
    hint(&t.bsi(&["help", "opne"]));
    t.check("hints/help_of_a_command_that_does_not_exist.txt");
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
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "agents/", "--session", "s1"]).ok();
    assert!(b.rows("Active claims")[0].contains("| s1 | agents/ |"));
    t.bsi_env(&["watchdog"], &[("BSI_NOW", "2026-03-14T12:00:00Z")])
        .code(4);
    let stale = b.rows("Stale claims — check required");
    assert!(
        stale[0].contains("| TTL expired without closing |"),
        "{stale:?}"
    );
    // A clone without the key reads it as well.
    b.write(".bsi.toml", "");
    t.note(".bsi.toml emptied: a clone without the key.");
    t.bsi_env(&["status"], &[("BSI_NOW", "2026-03-14T12:00:00Z")])
        .ok();
    t.bsi_env(
        &["release", "s1", "--confirm"],
        &[("BSI_NOW", "2026-03-14T12:01:00Z")],
    )
    .ok();
    assert!(b.rows("History")[0].contains("| released |"));
    b.write(".bsi.toml", "registry_language = \"klingon\"\n");
    t.note(".bsi.toml: registry_language = \"klingon\"");
    hint(&t.bsi(&["status"]));
    t.check("hints/an_english_registry_is_read_and_written_by_every_command.txt");
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
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "agents/", "--session", "s1"]).ok();
    t.bsi(&["status"]).ok();
    t.bsi(&["status", "--tree"]).ok();
    t.bsi(&["watchdog"]).ok();
    t.bsi_env(&["whoami"], &[("BSI_SESSION", "s1")]).ok();
    t.check("hints/views_with_nothing_to_fix_end_with_how_to_claim.txt");
}

#[test]
fn quiet_keeps_the_views_and_drops_what_to_do_next() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1", "--agent", "claude"])
        .ok();
    let mut t = Transcript::new(&b);
    for (args, env) in [
        (&["-q", "status"][..], &[][..]),
        (&["-q", "status", "--tree"], &[]),
        (&["-q", "whoami"], &[("BSI_SESSION", "s1")]),
    ] {
        let r = t.bsi_env(args, env);
        assert!(!r.stdout.contains("Next:"), "{args:?}:\n{}", r.stdout);
    }
    t.check("hints/quiet_keeps_the_views_and_drops_what_to_do_next.txt");
}

#[test]
fn verbose_errors_say_what_they_come_from() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.note("Without -v: what happened, then the next step.");
    let plain = t.bsi_env(&["status"], &[("BSI_RANDOM_SEED", "x1")]);
    plain.code(2);
    assert!(!plain.stderr.contains("Caused by"), "{}", plain.stderr);
    t.note("With -v, the error it comes from in between (jj's `Caused by:`).");
    let verbose = t.bsi_env(&["-v", "status"], &[("BSI_RANDOM_SEED", "x1")]);
    verbose.code(2);
    assert_eq!(
        verbose.stderr.lines().collect::<Vec<_>>(),
        [
            plain.stderr.lines().next().expect("error line"),
            "Caused by: invalid digit found in string",
            plain.stderr.lines().nth(1).expect("hint line"),
        ]
    );
    t.note("An error that comes from nothing else says nothing more.");
    let none = t.bsi(&["-v", "whoami"]);
    none.code(1);
    assert!(!none.stderr.contains("Caused by"), "{}", none.stderr);
    t.note("A value clap refuses is reported the same way.");
    t.bsi(&["-v", "open", "agents/", "--session", "my session"])
        .code(2);
    t.check("hints/verbose_errors_say_what_they_come_from.txt");
}
