//! The core contract: registry, scopes and conflicts, TTL, the commands, and
//! the git journal. Each test checks output and exit code, the registry's
//! bytes, and the git log.

use std::process::Stdio;

use crate::common::{Brain, NOW, snapshot};
use crate::transcript::Transcript;

#[test]
fn init_writes_three_tables_and_commits_once() {
    let b = Brain::new();
    let reg = b.registry();
    assert!(reg.contains("## Claims actifs\n"));
    assert!(reg.contains("## Claims stale — contrôle requis\n"));
    assert!(reg.contains("## Historique\n"));
    assert_eq!(b.commits(), 1);
    assert_eq!(b.last_subject(), "bsi: init BRAIN-INDEX.md on brain-index");
    assert_eq!(b.last_files(), vec!["BRAIN-INDEX.md"]);
    // The content branch is untouched: its one commit, nothing to commit,
    // and a copy of the registry to read that git ignores.
    assert_eq!(b.head_commits(), 1);
    assert_eq!(b.status(), "");
    assert_eq!(b.registry_copy(), reg);
    assert!(
        b.read("BRAIN-INDEX.md")
            .starts_with("<!-- bsi: this file is a COPY")
    );
    // A second init refuses and changes nothing.
    let mut t = Transcript::new(&b);
    t.bsi(&["init"]).code(1);
    assert_eq!(b.registry(), reg);
    assert_eq!(b.commits(), 1);
    t.check("core/init_writes_three_tables_and_commits_once.txt");
}

#[test]
fn init_on_an_unborn_branch_makes_the_first_commit() {
    let b = Brain::bare_repo();
    let mut t = Transcript::new(&b);
    t.bsi(&["init"]).ok();
    assert_eq!(b.commits(), 1);
    t.bsi(&["open", "notes/", "--session", "s1"]).ok();
    assert_eq!(b.commits(), 2);
    t.check("core/init_on_an_unborn_branch_makes_the_first_commit.txt");
}

#[test]
fn open_writes_one_row_and_one_commit_with_trailers() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&[
        "open",
        "agents/",
        "--session",
        "sess-a",
        "--agent",
        "alice",
        "--note",
        "tidy | up",
    ])
    .ok();
    assert_eq!(
        b.active(),
        vec![
            "| sess-a | agents/ | dir | alice | 2026-03-14 09:30 +00:00 | 2026-03-14 11:30 +00:00 | tidy \\| up |"
        ]
    );
    assert_eq!(b.commits(), 2);
    assert_eq!(b.last_subject(), "bsi: open sess-a agents/");
    let msg = b.git(&["log", "-1", "--format=%B", "brain-index"]);
    assert!(msg.contains("BSI-Session: sess-a\n"), "{msg}");
    assert!(msg.contains("BSI-Action: open\n"), "{msg}");
    assert_eq!(b.last_files(), vec!["BRAIN-INDEX.md"]);
    assert_eq!(b.status(), "");
    // The escaped pipe reads back as a pipe.
    let st = t.bsi(&["status", "--json"]);
    assert_eq!(st.json()["active"][0]["note"], "tidy | up");
    t.check("core/open_writes_one_row_and_one_commit_with_trailers.txt");
}

#[test]
fn a_generated_session_id_has_the_spec_format() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "agents/alice.md"]).ok();
    t.check("core/a_generated_session_id_has_the_spec_format.txt");
    let j = b.bsi(&["status", "--json"]).json();
    let id = j["active"][0]["session"]
        .as_str()
        .expect("session")
        .to_string();
    assert_eq!(id.len(), "sess-20260314-0930-a3f9".len(), "{id}");
    assert!(id.starts_with("sess-20260314-0930-"));
    assert!(
        id[19..]
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    );
    assert_eq!(j["active"][0]["agent"], "tester@box");
}

/// In a new brain, `holder` claims `held`, then `other` asks for `wanted`
/// and is refused without a write or a commit. Returns the transcript of
/// the two opens.
fn refused(held: &str, wanted: &str) -> String {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.note(&format!(
        "a new brain: holder holds {held}, other asks for {wanted}"
    ));
    t.bsi(&["open", held, "--session", "holder"]).ok();
    let before = b.registry();
    let commits = b.commits();
    t.bsi(&["open", wanted, "--session", "other"]).code(3);
    assert_eq!(b.registry(), before, "a refused claim writes nothing");
    assert_eq!(b.commits(), commits, "a refused claim commits nothing");
    t.text()
}

#[test]
fn conflict_same_scope() {
    snapshot(
        "core/conflict_same_scope.txt",
        &refused("agents/alice.md", "agents/alice.md"),
    );
}

#[test]
fn conflict_global_with_anything() {
    snapshot(
        "core/conflict_global_with_anything.txt",
        &[
            refused("global", "projets/plan.md#Goals"),
            refused("projets/plan.md#Q1", "global"),
        ]
        .concat(),
    );
}

#[test]
fn conflict_dir_with_what_is_inside_either_way() {
    snapshot(
        "core/conflict_dir_with_what_is_inside_either_way.txt",
        &[
            refused("agents/", "agents/alice.md"),
            refused("agents/alice.md", "agents/"),
            refused("projets/", "projets/plan.md#Risks"),
        ]
        .concat(),
    );
}

#[test]
fn a_path_that_is_a_directory_on_disk_is_a_dir_scope() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "agents", "--session", "s1"]).ok();
    assert!(b.active()[0].contains("| agents/ | dir |"));
    t.bsi(&["open", "agents/bob.md", "--session", "s2"]).code(3);
    t.check("core/a_path_that_is_a_directory_on_disk_is_a_dir_scope.txt");
}

#[test]
fn conflict_file_with_its_sections() {
    snapshot(
        "core/conflict_file_with_its_sections.txt",
        &[
            refused("projets/plan.md", "projets/plan.md#Q2"),
            refused("projets/plan.md#Risks", "projets/plan.md"),
        ]
        .concat(),
    );
}

#[test]
fn nested_sections_conflict_and_siblings_do_not() {
    // `## Goals` contains `### Q1` in the real file.
    let mut text = [
        refused("projets/plan.md#Goals", "projets/plan.md#q1"),
        refused("projets/plan.md#Q1", "projets/plan.md#goals"),
    ]
    .concat();
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.note("a new brain: siblings do not conflict");
    t.bsi(&["open", "projets/plan.md#Q1", "--session", "s1"])
        .ok();
    t.bsi(&["open", "projets/plan.md#Q2", "--session", "s2"])
        .ok();
    t.bsi(&["open", "projets/plan.md#Risks", "--session", "s3"])
        .ok();
    assert_eq!(b.active().len(), 3);
    // Headings are matched case-insensitively and stored as the file writes them.
    assert!(b.active()[0].contains("projets/plan.md#Q1"));
    text.push_str(&t.text());
    snapshot(
        "core/nested_sections_conflict_and_siblings_do_not.txt",
        &text,
    );
}

/// A granted folder claim reads no directory listing; a refused one still
/// proposes the free folders beside it, read once the plan has refused.
#[test]
fn a_refused_folder_claim_proposes_the_free_folders_beside_it() {
    let b = Brain::new();
    b.write("team/a.md", "# A\n\ntext\n");
    b.write("team/b.md", "# B\n\ntext\n");
    b.write("crew/c.md", "# C\n\ntext\n");
    let granted = b.bsi(&["open", "team/", "--session", "s1", "--json"]);
    granted.code(0);
    assert_eq!(b.active().len(), 1, "{}", b.registry());
    let before = b.registry();
    let r = b.bsi(&["open", "team/", "--session", "s2", "--json"]);
    r.code(3);
    let j = r.json();
    assert_eq!(j["error"], "conflict");
    assert_eq!(j["conflicts"][0]["session"], "s1");
    let alts: Vec<String> = j["alternatives"]
        .as_array()
        .expect("alternatives")
        .iter()
        .map(|v| v.as_str().expect("str").to_string())
        .collect();
    assert!(alts.contains(&"crew/".to_string()), "{alts:?}");
    assert!(!alts.iter().any(|a| a.starts_with("team/")), "{alts:?}");
    // The refusal wrote nothing.
    assert_eq!(b.registry(), before);
    // The human form names the same next command, safe to paste.
    b.bsi(&["open", "team/", "--session", "s2"])
        .code(3)
        .stderr_has("Free nearby: agents/, crew/, projets/, README.md\n")
        .stderr_has("`bsi open agents/ --session s2`");
}

#[test]
fn refusal_names_the_holder_and_proposes_free_scopes() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&[
        "open",
        "projets/plan.md#Q1",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    let r = t.bsi(&["open", "projets/plan.md", "--session", "s2", "--json"]);
    r.code(3);
    let j = r.json();
    assert_eq!(j["error"], "conflict");
    let c = &j["conflicts"][0];
    assert_eq!(c["session"], "s1");
    assert_eq!(c["scope"], "projets/plan.md#Q1");
    assert_eq!(c["level"], "section");
    assert_eq!(c["agent"], "alice");
    assert_eq!(c["expires"], "2026-03-14T11:30:00Z");
    assert_eq!(c["stale"], false);
    let alts: Vec<String> = j["alternatives"]
        .as_array()
        .expect("alternatives")
        .iter()
        .map(|v| v.as_str().expect("str").to_string())
        .collect();
    assert!(
        alts.contains(&"projets/plan.md#Risks".to_string()),
        "{alts:?}"
    );
    assert!(alts.contains(&"projets/plan.md#Q2".to_string()), "{alts:?}");
    assert!(
        !alts
            .iter()
            .any(|a| a.ends_with("#Q1") || a.ends_with("#Goals") || a.ends_with("#Plan")),
        "{alts:?}"
    );
    // The human form says the same on stderr.
    t.bsi(&["open", "projets/plan.md", "--session", "s2"])
        .code(3);
    t.check("core/refusal_names_the_holder_and_proposes_free_scopes.txt");
}

#[test]
fn stale_claims_still_block() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "agents/", "--session", "s1"]).ok();
    t.bsi_env(&["watchdog"], &[("BSI_NOW", "2026-03-14T12:00:00Z")])
        .code(4);
    assert_eq!(b.stale().len(), 1);
    let r = t.bsi_env(
        &["open", "agents/bob.md", "--session", "s2", "--json"],
        &[("BSI_NOW", "2026-03-14T12:00:00Z")],
    );
    r.code(3);
    assert_eq!(r.json()["conflicts"][0]["stale"], true);
    t.check("core/stale_claims_still_block.txt");
}

#[test]
fn reopening_a_held_scope_is_a_safe_no_op() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "agents/", "--session", "s1"]).ok();
    let reg = b.registry();
    let n = b.commits();
    t.bsi(&["open", "agents/", "--session", "s1"]).ok();
    assert_eq!(b.registry(), reg);
    assert_eq!(b.commits(), n);
    // BSI_SESSION works the same.
    t.bsi_env(&["open", "agents/"], &[("BSI_SESSION", "s1")])
        .ok();
    assert_eq!(b.commits(), n);
    t.check("core/reopening_a_held_scope_is_a_safe_no_op.txt");
}

#[test]
fn multi_scope_open_is_all_or_none() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "agents/bob.md", "--session", "s1"]).ok();
    let reg = b.registry();
    let n = b.commits();
    t.bsi(&["open", "projets/", "agents/", "--session", "s2"])
        .code(3);
    assert_eq!(b.registry(), reg);
    assert_eq!(b.commits(), n);
    t.bsi(&["open", "projets/", "agents/alice.md", "--session", "s2"])
        .ok();
    assert_eq!(b.active().len(), 3);
    assert_eq!(b.commits(), n + 1);
    assert_eq!(b.last_subject(), "bsi: open s2 projets/, agents/alice.md");
    t.check("core/multi_scope_open_is_all_or_none.txt");
}

#[test]
fn close_moves_claims_to_history_as_completed() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&[
        "open",
        "agents/",
        "projets/plan.md#Goals",
        "--session",
        "s1",
    ])
    .ok();
    let r = t.bsi_env(
        &["close", "--json"],
        &[("BSI_SESSION", "s1"), ("BSI_NOW", "2026-03-14T10:15:00Z")],
    );
    r.ok();
    assert_eq!(r.json()["closed"].as_array().map(Vec::len), Some(2));
    assert!(b.active().is_empty());
    assert_eq!(
        b.history(),
        vec![
            "| s1 | agents/ | dir | tester@box | 2026-03-14 09:30 +00:00 | 2026-03-14 10:15 +00:00 | completed |  |",
            "| s1 | projets/plan.md#Goals | section | tester@box | 2026-03-14 09:30 +00:00 | 2026-03-14 10:15 +00:00 | completed |  |",
        ]
    );
    assert_eq!(
        b.last_subject(),
        "bsi: close s1 agents/, projets/plan.md#Goals"
    );
    // The scope is free again.
    t.bsi_env(
        &["open", "agents/alice.md", "--session", "s2"],
        &[("BSI_NOW", "2026-03-14T10:16:00Z")],
    )
    .ok();
    t.check("core/close_moves_claims_to_history_as_completed.txt");
}

#[test]
fn close_one_scope_and_unknown_sessions() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "agents/", "projets/", "--session", "s1"])
        .ok();
    t.bsi(&["close", "s1", "--scope", "projets"]).ok();
    assert_eq!(b.active().len(), 1);
    let n = b.commits();
    t.bsi(&["close", "nobody"]).code(1);
    t.bsi(&["close"]).code(2);
    assert_eq!(b.commits(), n);
    t.check("core/close_one_scope_and_unknown_sessions.txt");
}

#[test]
fn renew_extends_and_never_past_eight_hours() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi_env(
        &["open", "agents/", "--session", "s1", "--ttl", "deep"],
        &[("BSI_NOW", NOW)],
    )
    .ok();
    t.bsi_env(
        &["renew", "s1", "--ttl", "4h"],
        &[("BSI_NOW", "2026-03-14T12:00:00Z")],
    )
    .ok();
    t.bsi_env(
        &["renew", "s1", "--ttl", "4h"],
        &[("BSI_NOW", "2026-03-14T15:00:00Z")],
    )
    .ok();
    assert_eq!(b.last_subject(), "bsi: renew s1 agents/");
    let n = b.commits();
    t.bsi_env(&["renew", "s1"], &[("BSI_NOW", "2026-03-14T16:00:00Z")])
        .code(1);
    assert_eq!(b.commits(), n);
    t.check("core/renew_extends_and_never_past_eight_hours.txt");
}

#[test]
fn ttl_syntax_and_limit() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    let at = [("BSI_NOW", NOW)];
    t.bsi_env(&["open", "agents/", "--session", "s1", "--ttl", "90m"], &at)
        .ok();
    t.bsi_env(
        &["open", "projets/", "--session", "s2", "--ttl", "long"],
        &at,
    )
    .ok();
    let n = b.commits();
    t.bsi(&["open", "README.md", "--session", "s3", "--ttl", "9h"])
        .code(2);
    t.bsi(&["open", "README.md", "--session", "s3", "--ttl", "soon"])
        .code(2);
    assert_eq!(b.commits(), n);
    t.check("core/ttl_syntax_and_limit.txt");
}

#[test]
fn watchdog_marks_expired_and_over_eight_hours_stale() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "agents/", "--session", "s1"]).ok();
    t.bsi(&["open", "projets/", "--session", "s2", "--ttl", "8h"])
        .ok();
    let n = b.commits();
    t.bsi(&["watchdog"]).ok();
    // Nothing expired: no commit.
    assert_eq!(b.commits(), n);
    let r = t.bsi_env(
        &["watchdog", "--json"],
        &[("BSI_NOW", "2026-03-14T12:00:00Z")],
    );
    r.code(4);
    let j = r.json();
    assert_eq!(
        (j["active"].as_u64(), j["stale"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(b.stale().len(), 1);
    assert!(
        b.stale()[0].contains("| s1 | agents/ |")
            && b.stale()[0].contains("TTL expiré sans fermeture")
    );
    assert_eq!(b.last_subject(), "bsi: watchdog s1 stale: agents/");
    // Already stale, nothing new: exit 4 again, no new commit.
    let n = b.commits();
    // Every run names every stale claim, in the words of status.
    t.bsi_env(&["watchdog"], &[("BSI_NOW", "2026-03-14T12:00:00Z")])
        .code(4);
    assert_eq!(b.commits(), n);
    t.check("core/watchdog_marks_expired_and_over_eight_hours_stale.txt");
}

#[test]
fn a_hand_edited_expiry_past_eight_hours_does_not_keep_a_claim_active() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "agents/", "--session", "s1"]).ok();
    let reg = b
        .registry()
        .replace("2026-03-14 11:30 +00:00", "2026-03-15 11:30 +00:00");
    b.commit_registry(&reg, "hand edit");
    t.note("the expiry edited by hand to 2026-03-15 11:30 +00:00");
    t.bsi_env(&["watchdog"], &[("BSI_NOW", "2026-03-14T17:29:00Z")])
        .ok();
    t.bsi_env(&["watchdog"], &[("BSI_NOW", "2026-03-14T17:30:00Z")])
        .code(4);
    assert!(b.stale()[0].contains("8h maximum"));
    t.check("core/a_hand_edited_expiry_past_eight_hours_does_not_keep_a_claim_active.txt");
}

#[test]
fn release_needs_confirm_and_force_for_active_claims() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "agents/", "--session", "s1"]).ok();
    t.bsi(&["open", "projets/", "--session", "s2", "--ttl", "4h"])
        .ok();
    let later = [("BSI_NOW", "2026-03-14T12:00:00Z")];
    t.bsi_env(&["watchdog"], &later).code(4);
    let reg = b.registry();
    let n = b.commits();
    // Without --confirm, a preview: exit 0, said once, on stdout.
    let preview = t.bsi_env(&["release", "s1"], &later);
    preview.ok();
    assert_eq!(preview.stderr, "");
    assert_eq!(preview.stdout.matches("--confirm").count(), 2);
    assert_eq!((b.registry(), b.commits()), (reg.clone(), n));
    t.bsi_env(&["release", "s2", "--confirm"], &later).code(1);
    assert_eq!((b.registry(), b.commits()), (reg, n));
    t.bsi_env(&["release", "s1", "--confirm"], &later).ok();
    assert!(b.stale().is_empty());
    assert!(b.history()[0].contains("| released |"));
    assert_eq!(b.last_subject(), "bsi: release s1 agents/");
    t.bsi_env(&["release", "s2", "--confirm", "--force"], &later)
        .ok();
    assert!(b.history()[1].contains("| force-released |"));
    assert!(b.active().is_empty());
    t.check("core/release_needs_confirm_and_force_for_active_claims.txt");
}

#[test]
fn status_is_read_only_and_shows_time_left() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "agents/", "--session", "s1", "--agent", "alice"])
        .ok();
    t.bsi_env(&["watchdog"], &[("BSI_NOW", "2026-03-14T12:00:00Z")])
        .code(4);
    t.bsi_env(
        &["open", "projets/", "--session", "s2"],
        &[("BSI_NOW", "2026-03-14T12:00:00Z")],
    )
    .ok();
    let reg = b.registry();
    let n = b.commits();
    t.bsi_env(&["status"], &[("BSI_NOW", "2026-03-14T12:48:00Z")])
        .ok();
    let j = t
        .bsi_env(
            &["status", "--json"],
            &[("BSI_NOW", "2026-03-14T12:48:00Z")],
        )
        .json();
    assert_eq!(j["active"][0]["scope"], "projets/");
    assert_eq!(j["active"][0]["level"], "dir");
    assert_eq!(j["active"][0]["opened"], "2026-03-14T12:00:00Z");
    assert_eq!(j["stale"][0]["session"], "s1");
    assert_eq!(j["stale"][0]["agent"], "alice");
    for k in [
        "session", "scope", "level", "agent", "opened", "expires", "note",
    ] {
        assert!(j["stale"][0].get(k).is_some(), "{k}");
    }
    assert_eq!((b.registry(), b.commits()), (reg, n));
    t.check("core/status_is_read_only_and_shows_time_left.txt");
}

#[test]
fn log_is_the_journal_from_git() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "agents/", "--session", "s1"]).ok();
    b.write("README.md", "# Brain\nmore\n");
    b.git(&["commit", "-qam", "unrelated"]);
    t.note("an unrelated commit on main");
    t.bsi(&["close", "s1"]).ok();
    let j = t.bsi(&["log", "--json"]).json();
    let entries = j.as_array().expect("array");
    assert_eq!(entries.len(), 3, "{j}");
    assert_eq!(entries[0]["action"], "close");
    assert_eq!(entries[0]["sessions"][0], "s1");
    assert_eq!(entries[1]["action"], "open");
    assert_eq!(entries[2]["action"], "init");
    assert_eq!(entries[0]["author"], "Test Person <test@example.com>");
    assert_eq!(entries[0]["agent"], "tester@box");
    assert_eq!(entries[0]["what"], "agents/");
    t.bsi(&["log", "-n", "1"]).ok();
    t.bsi(&["log", "-n", "1", "-v"]).ok();
    t.check("core/log_is_the_journal_from_git.txt");
}

#[test]
fn scopes_from_a_subdirectory_are_stored_from_the_root() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi_in("agents", &["open", "alice.md", "--session", "s1"])
        .ok();
    t.bsi_in(
        "agents",
        &["open", "../projets/plan.md#Risks", "--session", "s2"],
    )
    .ok();
    assert!(b.active()[0].contains("| agents/alice.md | file |"));
    assert!(b.active()[1].contains("| projets/plan.md#Risks | section |"));
    t.bsi_in("agents", &["close", "s1", "--scope", "alice.md"])
        .ok();
    t.check("core/scopes_from_a_subdirectory_are_stored_from_the_root.txt");
}

#[test]
fn bad_scopes_are_refused_before_anything_is_written() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    let reg = b.registry();
    let n = b.commits();
    for bad in [
        "/etc/passwd",
        "../outside.md",
        "agents/../../x",
        "",
        "a\nb.md",
        "plan.md#",
        // A section of a file that is not there (a heading the file does
        // not have yet is a new section: granted).
        "projets/missing.md#Nope",
    ] {
        t.bsi(&["open", bad, "--session", "s1"]).code(2);
    }
    t.bsi(&["open", "BRAIN-INDEX.md", "--session", "s1"])
        .code(2);
    t.bsi(&["open", "x.md", "--session", "bad id"]).code(2);
    t.bsi(&["open", "x.md", "--session", "s1", "--note", "two\nlines"])
        .code(2);
    assert_eq!((b.registry(), b.commits()), (reg, n));
    t.check("core/bad_scopes_are_refused_before_anything_is_written.txt");
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_brain_is_refused() {
    let b = Brain::new();
    let outside = crate::common::scratch("bsi-outside");
    std::fs::write(outside.path().join("secret.md"), "# S\n").expect("write");
    std::os::unix::fs::symlink(outside.path(), b.path().join("link")).expect("symlink");
    let mut t = Transcript::new(&b);
    t.note("link -> $TMP/bsi-outside");
    t.bsi(&["open", "link/secret.md", "--session", "s1"])
        .code(2);
    t.bsi(&["open", "link/", "--session", "s1"]).code(2);
    t.check("core/a_symlink_out_of_the_brain_is_refused.txt");
}

#[test]
fn bytes_outside_changed_rows_are_kept() {
    let b = Brain::new();
    let custom = "\u{feff}# My brain index\r\n\r\nSome prose | with a pipe.\r\n\r\n## Claims actifs\r\n\r\n| Session | Scope | Niveau | Ouvert le | Expire le | Owner team |\r\n|:--|---|---|---|---|--:|\r\n| keep | README.md | file | 2026-03-14 08:00 +00:00 | 2026-03-14 10:00 +00:00 | red |\r\n\r\n<!-- a comment -->\r\n\r\n## Claims stale — contrôle requis\r\n\r\n| Session | Scope | Niveau | Ouvert le | Expire le | Raison probable |\r\n|---|---|---|---|---|---|\r\n\r\n## Historique\r\n\r\n| Session | Scope | Ouvert | Fermé | Statut |\r\n|---|---|---|---|---|\r\n| old | x.md | 2026-01-01 10:00 | 2026-01-01 11:00 | completed |\r\n\r\n## Other notes\r\n\r\ntrailing text";
    b.commit_registry(custom, "custom registry");
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    let after = b.registry();
    let expected = custom.replace(
        "| red |\r\n",
        "| red |\r\n| s1 | agents/ | dir | 2026-03-14 09:30 +00:00 | 2026-03-14 11:30 +00:00 |  |\r\n",
    );
    assert_eq!(after, expected);
    b.bsi(&["close", "s1"]).ok();
    let closed = custom.replace(
        "| completed |\r\n",
        "| completed |\r\n| s1 | agents/ | 2026-03-14 09:30 +00:00 | 2026-03-14 09:30 +00:00 | completed |\r\n",
    );
    assert_eq!(b.registry(), closed);
    // Moving a row keeps its unknown column when the other table has it too.
    b.bsi_env(&["watchdog"], &[("BSI_NOW", "2026-03-14T10:30:00Z")])
        .code(4);
    assert!(b.registry().contains("| keep | README.md | file | 2026-03-14 08:00 +00:00 | 2026-03-14 10:00 +00:00 | TTL expiré sans fermeture |\r\n"));
    assert!(
        b.registry()
            .ends_with("## Other notes\r\n\r\ntrailing text")
    );
}

#[test]
fn staged_user_files_are_not_swept_into_bsi_commits() {
    let b = Brain::new();
    b.write("agents/alice.md", "# Alice\n\nedited\n");
    b.write("new.md", "new\n");
    b.git(&["add", "agents/alice.md", "new.md"]);
    let staged_before = b.git(&["diff", "--cached", "--name-only"]);
    b.bsi(&["open", "projets/", "--session", "s1"]).ok();
    assert_eq!(b.last_files(), vec!["BRAIN-INDEX.md"]);
    assert_eq!(b.git(&["diff", "--cached", "--name-only"]), staged_before);
    assert!(
        b.git(&["diff", "--cached", "agents/alice.md"])
            .contains("+edited")
    );
    assert!(b.status().contains("A  new.md"));
    assert!(!b.status().contains("BRAIN-INDEX.md"));
}

#[test]
fn editing_the_copy_changes_nothing_and_is_never_committed() {
    let b = Brain::new();
    let before = b.registry();
    let edited = b.read("BRAIN-INDEX.md")
        + "\n| forged | agents/ | dir | x | 2026-03-14 09:00 +00:00 | 2026-03-14 11:00 +00:00 | |\nmanual note\n";
    b.write("BRAIN-INDEX.md", &edited);
    assert_eq!(b.status(), "", "the copy is ignored by git");
    // The forged row is not a claim: agents/ is free.
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    let after = b.registry();
    assert!(!after.contains("forged") && !after.contains("manual note"));
    assert!(after.starts_with(&before[..before.find("## Claims actifs").expect("table")]));
    // The copy is rewritten from the branch.
    assert_eq!(b.registry_copy(), after);
    assert_eq!(b.head_commits(), 1);
    assert_eq!(b.status(), "");
}

#[test]
fn a_malformed_registry_is_refused_with_its_line_and_left_as_is() {
    let cases: &[(&str, &str)] = &[
        (
            "| s1 | agents/ | dir | tester@box | 2026-03-14 09:30 +00:00 | 2026-03-14 11:30 +00:00 | | extra | cells |",
            "two cells more than the header",
        ),
        (
            "| s1 | agents/ | file | tester@box | 2026-03-14 09:30 +00:00 | 2026-03-14 11:30 +00:00 | |",
            "a level that does not match the scope",
        ),
        (
            "| s1 | agents/ | folder | tester@box | 2026-03-14 09:30 +00:00 | 2026-03-14 11:30 +00:00 | |",
            "an unknown level",
        ),
        (
            "| s1 | agents/ | dir | tester@box | 2026-02-30 09:30 +00:00 | 2026-03-14 11:30 +00:00 | |",
            "an opening time that is not a time",
        ),
        (
            "| s1 | agents/ | dir | tester@box | 2026-03-14 09:30 +00:00 | 2026-03-13 11:30 +00:00 | |",
            "an expiry before the opening",
        ),
    ];
    let mut text = String::new();
    for (row, what) in cases {
        let b = Brain::new();
        let reg = b
            .registry()
            .replacen("|------|\n", &format!("|------|\n{row}\n"), 1);
        b.commit_registry(&reg, "bad row");
        let n = b.commits();
        let mut t = Transcript::new(&b);
        t.note(&format!(
            "a new brain, line 10 of its registry with {what}:"
        ));
        t.note(row);
        for args in [
            &["open", "projets/", "--session", "s2"][..],
            &["status"],
            &["watchdog"],
        ] {
            t.bsi(args).code(5);
        }
        assert_eq!((b.registry(), b.commits()), (reg, n));
        text.push_str(&t.text());
    }
    let b = Brain::new();
    let reg = b.registry().replace("## Historique", "## Histoire");
    b.commit_registry(&reg, "renamed heading");
    let mut t = Transcript::new(&b);
    t.note("a new brain, its `## Historique` heading renamed `## Histoire`");
    t.bsi(&["open", "x.md", "--session", "s"]).code(5);
    assert_eq!(b.registry(), reg);
    text.push_str(&t.text());
    snapshot(
        "core/a_malformed_registry_is_refused_with_its_line_and_left_as_is.txt",
        &text,
    );
}

#[test]
fn no_registry_means_exit_five_with_a_hint() {
    let b = Brain::bare_repo();
    let mut t = Transcript::new(&b);
    t.bsi(&["status"]).code(5);
    t.bsi(&["open", "x.md", "--session", "s"]).code(5);
    t.check("core/no_registry_means_exit_five_with_a_hint.txt");
}

#[test]
fn commits_work_without_any_git_identity() {
    let b = Brain::bare_repo();
    b.git(&["config", "--unset", "user.name"]);
    b.git(&["config", "--unset", "user.email"]);
    let mut t = Transcript::new(&b);
    t.bsi(&["init"]).ok();
    t.bsi(&["open", "x.md", "--session", "s1"]).ok();
    t.check("core/commits_work_without_any_git_identity.txt");
    assert_eq!(
        b.git(&["log", "-1", "--format=%an <%ae>", "brain-index"])
            .trim(),
        "bsi <bsi@localhost>"
    );
}

#[test]
fn a_registry_named_elsewhere_is_used_with_scopes_relative_to_it() {
    let b = Brain::bare_repo();
    b.write("sub/brain/notes.md", "# N\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-qm", "sub"]);
    b.bsi_env(&["init"], &[("BSI_REGISTRY", "sub/brain/BRAIN-INDEX.md")])
        .ok();
    b.bsi(&[
        "--registry",
        "sub/brain/BRAIN-INDEX.md",
        "open",
        "sub/brain/notes.md",
        "--session",
        "s1",
    ])
    .ok();
    let reg = b.read("sub/brain/BRAIN-INDEX.md");
    assert!(reg.contains("| s1 | notes.md | file |"), "{reg}");
    assert!(b.registry().contains("| s1 | notes.md | file |"));
    assert_eq!(b.last_files(), vec!["BRAIN-INDEX.md"]);
    assert_eq!(b.status(), "");
}

fn spawn_many(b: &Brain, argsets: Vec<Vec<String>>) -> Vec<i32> {
    let children: Vec<_> = argsets
        .iter()
        .map(|args| {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            b.command(&refs)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn")
        })
        .collect();
    children
        .into_iter()
        .map(|mut c| c.wait().expect("wait").code().unwrap_or(-1))
        .collect()
}

#[test]
fn sixteen_concurrent_opens_of_distinct_scopes_all_land() {
    let b = Brain::new();
    let n = b.commits();
    let sets = (0..16)
        .map(|i| {
            vec![
                "open".into(),
                format!("area{i}/"),
                "--session".into(),
                format!("s{i}"),
            ]
        })
        .collect();
    let codes = spawn_many(&b, sets);
    assert!(codes.iter().all(|&c| c == 0), "{codes:?}");
    assert_eq!(b.active().len(), 16);
    // Writes published by one push share a commit, which names each.
    let made = b.commits() - n;
    assert!((1..=16).contains(&made), "{made}");
    let subjects = b.git(&["log", "--format=%B", &format!("-{made}"), "brain-index"]);
    for i in 0..16 {
        assert!(
            subjects.contains(&format!("bsi: open s{i} area{i}/\n")),
            "{subjects}"
        );
    }
    assert_eq!(b.status(), "");
    b.git(&["fsck", "--no-progress"]);
}

#[test]
fn sixteen_concurrent_opens_of_one_scope_give_one_winner() {
    let b = Brain::new();
    let n = b.commits();
    let sets = (0..16)
        .map(|i| {
            vec![
                "open".into(),
                "projets/plan.md#Goals".into(),
                "--session".into(),
                format!("s{i}"),
            ]
        })
        .collect();
    let mut codes = spawn_many(&b, sets);
    codes.sort_unstable();
    assert_eq!(codes, [vec![0], vec![3; 15]].concat());
    assert_eq!(b.active().len(), 1);
    assert_eq!(b.commits(), n + 1);
    assert_eq!(b.status(), "");
}

#[test]
fn bsi_now_is_the_clock() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi_env(
        &["open", "x.md", "--session", "s"],
        &[("BSI_NOW", "2026-03-14T10:30:00+01:00")],
    )
    .ok();
    // bsi's commits carry the pinned clock too, so the journal reads in its time.
    assert_eq!(
        b.git(&["log", "-1", "--format=%aI %cI", "brain-index"])
            .trim(),
        "2026-03-14T09:30:00Z 2026-03-14T09:30:00Z"
    );
    t.bsi_env(&["status"], &[("BSI_NOW", "yesterday")]).code(2);
    t.check("core/bsi_now_is_the_clock.txt");
}

/// `BSI_RANDOM_SEED` draws the random part of a generated session id: the
/// same seed gives the same id in another brain, another seed another id;
/// a seed that is not a number is refused before anything is written.
#[test]
fn bsi_random_seed_draws_the_session_id() {
    let generated = |seed: &str| {
        let b = Brain::new();
        let r = b.bsi_env(&["open", "agents/", "--json"], &[("BSI_RANDOM_SEED", seed)]);
        r.ok();
        let id = r.json()["session"].as_str().expect("session").to_string();
        assert!(b.active()[0].starts_with(&format!("| {id} | agents/ |")));
        id
    };
    let id = generated("42");
    assert!(id.starts_with("sess-20260314-0930-"), "{id}");
    assert_eq!(generated("42"), id);
    assert_eq!(generated(" 42 "), id);
    assert_ne!(generated("43"), id);
    let b = Brain::new();
    let n = b.commits();
    let mut t = Transcript::new(&b);
    t.bsi_env(&["open", "agents/"], &[("BSI_RANDOM_SEED", "dice")])
        .code(2);
    t.bsi_env(&["open", "agents/"], &[("BSI_RANDOM_SEED", "-1")])
        .code(2);
    t.check("core/bsi_random_seed_draws_the_session_id.txt");
    assert_eq!(b.commits(), n);
}

#[test]
fn a_refused_request_says_which_of_its_scopes_are_free() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "agents/", "--session", "s1"]).ok();
    let r = t.bsi(&[
        "open",
        "projets/plan.md",
        "agents/alice.md",
        "--session",
        "s2",
        "--json",
    ]);
    r.code(3);
    let j = r.json();
    assert_eq!(j["free_in_request"][0], "projets/plan.md");
    // Alternatives are for the refused scope only: nothing in agents/ is free.
    assert_eq!(j["alternatives"].as_array().map(Vec::len), Some(0), "{j}");
    t.bsi(&[
        "open",
        "projets/plan.md",
        "agents/alice.md",
        "--session",
        "s2",
    ])
    .code(3);
    assert_eq!(b.active().len(), 1);
    t.check("core/a_refused_request_says_which_of_its_scopes_are_free.txt");
}
