//! The git hooks and `bsi verify`: real `git commit` runs through the
//! installed hooks, on real temporary repositories.

use std::path::Path;

use crate::common::{Brain, Run, bin, snapshot};
use crate::transcript::Transcript;

/// Runs git with `BSI_SESSION` set (or not): what a session's commit does.
pub(crate) fn git_as(b: &Brain, session: Option<&str>, args: &[&str]) -> Run {
    b.git_at(b.path(), session, args)
}

/// The environment of a command run as session `id`.
pub(crate) fn session(id: &str) -> [(&'static str, &str); 1] {
    [("BSI_SESSION", id)]
}

/// A brain with the hooks installed; what `bsi hook install` says in a new
/// brain is `tests/snapshots/hooks/hooked.txt`.
pub(crate) fn hooked() -> Brain {
    let b = Brain::new();
    {
        let mut t = Transcript::new(&b);
        t.bsi(&["hook", "install"]).ok();
        t.check("hooks/hooked.txt");
    }
    b
}

pub(crate) fn commit_as(b: &Brain, session: Option<&str>, msg: &str) -> Run {
    git_as(b, session, &["commit", "-q", "-m", msg])
}

/// Compares the transcript with `tests/snapshots/<rel>`, the short id of
/// each commit `named` (its dates, so its id, differ from run to run)
/// written as its label.
#[track_caller]
pub(crate) fn check_naming(t: &Transcript, rel: &str, named: &[(&str, &str)]) {
    let mut text = t.text();
    for (label, id) in named {
        let short = &id[..7];
        assert!(
            text.contains(short),
            "commit {label} ({short}) not named:\n{text}"
        );
        text = text.replace(short, &format!("<{label}>"));
    }
    snapshot(rel, &text);
}

/// `session` commits what is staged past the hook (`git -c bsi.hookMode=off commit`,
/// with `extra` such as `-a`), and `bsi verify` finds it outside the
/// session's claims (exit 6), both in the transcript. Returns the commit.
pub(crate) fn forced_past_the_hook(
    t: &mut Transcript<'_>,
    b: &Brain,
    session_id: &str,
    extra: &[&str],
    msg: &str,
) -> String {
    let mut args = vec!["-c", "bsi.hookMode=off", "commit", "-q"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-m", msg]);
    t.git_env(&args, &session(session_id)).ok();
    let id = head(b);
    t.bsi(&["verify", session_id]).code(6);
    id
}

/// HEAD's commit id, full.
pub(crate) fn head(b: &Brain) -> String {
    b.git(&["rev-parse", "HEAD"]).trim().to_string()
}

/// The line number (from 1) of the first line of `text` equal to `line`.
#[track_caller]
pub(crate) fn line_of(text: &str, line: &str) -> usize {
    text.lines()
        .position(|l| l == line)
        .unwrap_or_else(|| panic!("no line {line:?} in:\n{text}"))
        + 1
}

fn hooks_dir(b: &Brain) -> std::path::PathBuf {
    b.path().join(".git/hooks")
}

#[test]
fn a_commit_into_another_sessions_file_is_refused_until_it_is_closed() {
    let b = hooked();
    b.bsi(&["open", "agents/", "--session", "s1", "--agent", "alice"])
        .ok();
    b.bsi(&["open", "projets/", "--session", "s2", "--agent", "bob"])
        .ok();
    let before = b.commits();
    b.write("agents/alice.md", "# Alice\n\nchanged by s2\n");
    b.git(&["add", "agents/alice.md"]);
    let mut t = Transcript::new(&b);
    t.note("s1 (alice) holds agents/, s2 (bob) projets/; s2 stages a change to agents/alice.md.");
    t.git_env(&["commit", "-q", "-m", "edit alice"], &session("s2"))
        .code(1);
    assert_eq!(b.commits(), before, "nothing committed");

    // s1 closes: the same commit goes through.
    t.bsi_env(&["close", "s1"], &[("BSI_AGENT", "alice")]).ok();
    t.git_env(&["commit", "-q", "-m", "edit alice"], &session("s2"))
        .ok();
    t.check("hooks/a_commit_into_another_sessions_file_is_refused_until_it_is_closed.txt");
    assert_eq!(b.head_subject(), "edit alice");
    assert_eq!(
        b.git(&["show", "--name-only", "--format=", "HEAD"]).trim(),
        "agents/alice.md"
    );
}

#[test]
fn stale_claims_block_too_and_no_session_means_everyone_elses() {
    let mut b = hooked();
    b.bsi(&[
        "open",
        "agents/bob.md",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    // Three hours later the claim is stale.
    b.now = "2026-03-14T12:30:00Z".into();
    b.bsi(&["watchdog"]).code(4);
    b.write("agents/bob.md", "# Bob\n\nmore\n");
    b.git(&["add", "agents/bob.md"]);
    let before = b.head_commits();
    let mut t = Transcript::new(&b);
    t.note(
        "s1 opened agents/bob.md at 09:30 and watchdog marked it stale; agents/bob.md is staged.",
    );
    t.git(&["commit", "-q", "-m", "no session"]).code(1);
    t.check("hooks/stale_claims_block_too_and_no_session_means_everyone_elses.txt");
    assert_eq!(b.head_commits(), before, "nothing committed");
}

#[test]
fn two_sessions_commit_their_own_sections_and_not_each_others() {
    let b = hooked();
    b.bsi(&["open", "projets/plan.md#Goals", "--session", "s1"])
        .ok();
    b.bsi(&["open", "projets/plan.md#Risks", "--session", "s2"])
        .ok();
    let plan = b.read("projets/plan.md");
    let mut t = Transcript::new(&b);

    // s1 edits a line of Q1, inside its Goals.
    b.write(
        "projets/plan.md",
        &plan.replace("q1 text", "q1 text, by s1"),
    );
    b.git(&["add", "projets/plan.md"]);
    t.note("s1 holds projets/plan.md#Goals, s2 #Risks. s1 edits a line of Q1, inside its Goals.");
    t.git_env(&["commit", "-q", "-m", "goals by s1"], &session("s1"))
        .ok();
    assert_eq!(b.head_subject(), "goals by s1");

    // s2 edits its Risks.
    let plan = b.read("projets/plan.md");
    b.write(
        "projets/plan.md",
        &plan.replace("risk text", "risk text, by s2"),
    );
    b.git(&["add", "projets/plan.md"]);
    t.note("s2 edits its Risks: nothing to report.");
    t.git_env(&["commit", "-q", "-m", "risks by s2"], &session("s2"))
        .ok();
    assert_eq!(b.head_subject(), "risks by s2");

    // s2 now touches Goals' text: that hunk is refused.
    let before = b.commits();
    let plan = b.read("projets/plan.md");
    let new = plan.replace("goal text", "goal text, by s2");
    let line = line_of(&new, "goal text, by s2");
    b.write("projets/plan.md", &new);
    b.git(&["add", "projets/plan.md"]);
    t.note(&format!("s2 edits Goals' text (line {line})."));
    let r = t.git_env(&["commit", "-q", "-m", "goals by s2"], &session("s2"));
    r.code(1);
    // The line named is the one the test changed.
    r.stderr_has(&format!(
        "projets/plan.md line {line} under `Goals` is inside an active claim of session s1"
    ));
    t.check("hooks/two_sessions_commit_their_own_sections_and_not_each_others.txt");
    assert_eq!(b.commits(), before);
}

#[test]
fn removing_another_sessions_heading_is_refused() {
    let b = hooked();
    b.bsi(&["open", "projets/plan.md#Goals", "--session", "s1"])
        .ok();
    b.bsi(&["open", "projets/plan.md#Risks", "--session", "s2"])
        .ok();
    // s1 deletes the `## Risks` heading line: its text would fall into Q2.
    let plan = b.read("projets/plan.md");
    let heading = line_of(&plan, "## Risks");
    b.write("projets/plan.md", &plan.replace("## Risks\n\n", ""));
    b.git(&["add", "projets/plan.md"]);
    let before = b.commits();
    let mut t = Transcript::new(&b);
    t.note(&format!(
        "s1 holds projets/plan.md#Goals, s2 #Risks. s1 deletes the `## Risks` heading and the blank line after it (lines {heading}-{}).",
        heading + 1
    ));
    let r = t.git_env(
        &["commit", "-q", "-m", "merge risks into goals"],
        &session("s1"),
    );
    r.code(1);
    // The lines named are those the test removed.
    r.stderr_has(&format!(
        "projets/plan.md lines {heading}-{} under `Risks` in the previous version (removed) are inside an active claim of session s2",
        heading + 1
    ));
    t.check("hooks/removing_another_sessions_heading_is_refused.txt");
    assert_eq!(b.commits(), before);
}

#[test]
fn an_existing_hook_is_chained_and_its_failure_still_fails() {
    let b = Brain::new();
    let dir = hooks_dir(&b);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let mine = "#!/bin/sh\necho \"local hook ran\" >&2\n[ ! -f STOP ] || exit 7\n";
    let path = dir.join("pre-commit");
    std::fs::write(&path, mine).expect("write hook");
    make_executable(&path);

    let mut t = Transcript::new(&b);
    t.note("A pre-commit hook of the user's: it says `local hook ran` and fails when STOP exists.");
    t.bsi(&["hook", "install"]).ok();
    assert_eq!(
        std::fs::read_to_string(dir.join("pre-commit.bsi-chained")).expect("chained"),
        mine
    );

    b.write("README.md", "# Brain\n\nmore\n");
    b.git(&["add", "README.md"]);
    t.git(&["commit", "-q", "-m", "readme"]).ok();
    assert_eq!(b.head_subject(), "readme");

    // Its failure still fails the commit, before bsi runs.
    b.write("STOP", "");
    b.write("README.md", "# Brain\n\neven more\n");
    b.git(&["add", "README.md"]);
    let before = b.commits();
    t.note("STOP written: the user's hook fails.");
    t.git(&["commit", "-q", "-m", "stopped"]).code(1);
    assert_eq!(b.commits(), before);

    // Uninstall puts the original hook back, byte for byte.
    t.bsi(&["hook", "uninstall"]).ok();
    t.check("hooks/an_existing_hook_is_chained_and_its_failure_still_fails.txt");
    assert_eq!(std::fs::read_to_string(&path).expect("hook"), mine);
    assert!(!dir.join("pre-commit.bsi-chained").exists());
}

#[cfg(unix)]
fn make_executable(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[cfg(not(unix))]
fn make_executable(_: &Path) {}

fn listing(dir: &Path) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(std::result::Result::ok)
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read_to_string(e.path()).unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn install_twice_changes_nothing_and_uninstall_leaves_what_was_there() {
    let b = Brain::new();
    // Honour core.hooksPath, relative to the work tree.
    b.git(&["config", "core.hooksPath", "githooks"]);
    let dir = b.path().join("githooks");
    std::fs::create_dir_all(&dir).expect("mkdir");
    b.write("githooks/post-commit", "#!/bin/sh\n");
    let before = listing(&dir);

    let mut t = Transcript::new(&b);
    t.note("core.hooksPath is githooks, which holds a post-commit hook.");
    t.bsi(&["hook", "install"]).ok();
    let once = listing(&dir);
    // An untracked relative folder: post-checkout too, for later work trees.
    assert_eq!(once.len(), 1 + bsi::githooks::HOOKS.len() + 1, "{once:?}");
    assert!(once.iter().any(|(n, _)| n == bsi::githooks::POST_CHECKOUT));
    let script = &once
        .iter()
        .find(|(n, _)| n == "pre-commit")
        .expect("hook")
        .1;
    assert!(
        script.contains("# bsi-managed-hook: pre-commit"),
        "{script}"
    );
    let exe = bin().to_string_lossy().into_owned();
    let word = bsi_core::words::shell_word(&exe);
    assert!(script.contains(&format!("\nbsi={word}\n")), "{script}");
    assert!(!hooks_dir(&b).join("pre-commit").exists());

    t.bsi(&["hook", "install"]).ok();
    assert_eq!(listing(&dir), once);

    t.bsi(&["hook", "uninstall"]).ok();
    assert_eq!(listing(&dir), before);
    t.bsi(&["hook", "uninstall"]).ok();
    t.check("hooks/install_twice_changes_nothing_and_uninstall_leaves_what_was_there.txt");
    assert_eq!(listing(&dir), before);
}

#[test]
fn a_forced_add_of_the_registry_copy_is_refused_and_hook_mode_off_passes() {
    let b = hooked();
    let reg = b.registry();
    b.write("BRAIN-INDEX.md", &format!("{reg}\nhand edit\n"));
    let mut t = Transcript::new(&b);
    // The copy is ignored: only a forced add stages it.
    t.note("BRAIN-INDEX.md edited by hand.");
    t.git(&["add", "-f", "BRAIN-INDEX.md"]).ok();
    let before = b.head_commits();
    t.git(&["commit", "-q", "-m", "hand edit"]).code(1);
    assert_eq!(b.head_commits(), before);
    assert_eq!(b.registry(), reg);

    // The documented escape hatch.
    t.git(&["-c", "bsi.hookMode=off", "commit", "-q", "-m", "hand edit"])
        .ok();
    t.check("hooks/a_forced_add_of_the_registry_copy_is_refused_and_hook_mode_off_passes.txt");
    assert_eq!(b.head_commits(), before + 1);
    assert_eq!(
        b.git(&["show", "--name-only", "--format=", "HEAD"]).trim(),
        "BRAIN-INDEX.md"
    );
    // The registry itself is not changed by that.
    assert_eq!(b.registry(), reg);
}

#[test]
fn warn_mode_reports_and_strict_mode_refuses_outside_changes() {
    let b = hooked();
    b.bsi(&["open", "agents/alice.md", "--session", "s1"]).ok();
    b.bsi(&["open", "projets/", "--session", "s2"]).ok();
    let mut t = Transcript::new(&b);
    t.note("s1 holds agents/alice.md, s2 projets/.");
    t.git(&["config", "bsi.hookMode", "warn"]).ok();
    b.write("agents/alice.md", "# Alice\n\nby s2\n");
    b.git(&["add", "agents/alice.md"]);
    t.note("s2 stages a change to agents/alice.md.");
    t.git_env(&["commit", "-q", "-m", "warned"], &session("s2"))
        .ok();
    assert_eq!(b.head_subject(), "warned");

    t.git(&["config", "bsi.hookMode", "strict"]).ok();
    b.write("README.md", "# Brain\n\nby s2\n");
    b.git(&["add", "README.md"]);
    t.note("s2 stages a change to README.md, in no one's claim.");
    let before = b.head_commits();
    t.git_env(&["commit", "-q", "-m", "strict"], &session("s2"))
        .code(1);
    assert_eq!(b.head_commits(), before);

    t.git(&["config", "bsi.hookMode", "normal"]).ok();
    t.git_env(&["commit", "-q", "-m", "normal"], &session("s2"))
        .ok();
    t.check("hooks/warn_mode_reports_and_strict_mode_refuses_outside_changes.txt");
    assert_eq!(b.head_subject(), "normal");
}

#[test]
fn the_session_trailer_is_added_once() {
    let b = hooked();
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    b.write("agents/alice.md", "# Alice\n\nby s1\n");
    b.git(&["add", "agents/alice.md"]);
    commit_as(&b, Some("s1"), "alice by s1").ok();
    let msg = b.git(&["log", "-1", "--format=%B"]);
    assert_eq!(msg.trim_end(), "alice by s1\n\nBSI-Session: s1");

    // Amending keeps one trailer.
    git_as(&b, Some("s1"), &["commit", "-q", "--amend", "--no-edit"]).ok();
    let msg = b.git(&["log", "-1", "--format=%B"]);
    assert_eq!(msg.matches("BSI-Session: s1").count(), 1, "{msg}");
    git_as(
        &b,
        Some("s1"),
        &[
            "commit",
            "-q",
            "--amend",
            "-m",
            "reworded\n\nBSI-Session: s1",
        ],
    )
    .ok();
    let msg = b.git(&["log", "-1", "--format=%B"]);
    assert_eq!(msg.trim_end(), "reworded\n\nBSI-Session: s1");

    // Without a session, no trailer.
    b.write("README.md", "# Brain\n\nx\n");
    b.git(&["add", "README.md"]);
    commit_as(&b, None, "plain").ok();
    assert_eq!(b.git(&["log", "-1", "--format=%B"]).trim_end(), "plain");
}

#[test]
fn verify_finds_file_and_section_overflow_and_close_records_it() {
    let b = hooked();
    b.bsi(&[
        "open",
        "projets/plan.md#Goals",
        "agents/alice.md",
        "--session",
        "s1",
    ])
    .ok();
    // Work of another session, not s1's business.
    b.write("README.md", "# Brain\n\nother\n");
    b.git(&["add", "README.md"]);
    let mut t = Transcript::new(&b);
    t.note("s1 holds projets/plan.md#Goals and agents/alice.md.");
    t.note("Work of another session, not s1's business:");
    t.git(&[
        "-c",
        "bsi.hookMode=off",
        "commit",
        "-q",
        "-m",
        "someone else",
    ])
    .ok();

    // Inside its claims.
    b.write("agents/alice.md", "# Alice\n\nby s1\n");
    let plan = b.read("projets/plan.md");
    b.write(
        "projets/plan.md",
        &plan.replace("q2 text", "q2 text, by s1"),
    );
    b.git(&["add", "-A"]);
    t.note("s1 changes agents/alice.md and a line of Q2, under Goals.");
    t.git_env(&["commit", "-q", "-m", "in scope"], &session("s1"))
        .ok();
    t.bsi(&["verify", "s1"]).ok();

    // Outside: bob's file, and the Risks section of the plan.
    b.write("agents/bob.md", "# Bob\n\nby s1\n");
    let plan = b.read("projets/plan.md");
    b.write(
        "projets/plan.md",
        &plan.replace("risk text\n", "risk text\nmore risk\nand more\n"),
    );
    b.git(&["add", "-A"]);
    t.note("s1 changes agents/bob.md and adds two lines under Risks, past the hook: <overflow>.");
    let overflow = forced_past_the_hook(&mut t, &b, "s1", &[], "overflow");
    let j = b.bsi(&["verify", "s1", "--json"]);
    j.code(6);
    let j = j.json();
    assert_eq!(j["clean"], false);
    assert_eq!(j["commits"].as_array().map(Vec::len), Some(2));
    let sec = j["overflow"]
        .as_array()
        .expect("overflow")
        .iter()
        .find(|o| o["kind"] == "section")
        .expect("section overflow")
        .clone();
    assert_eq!(sec["path"], "projets/plan.md");
    assert_eq!(
        (sec["start"].as_u64(), sec["end"].as_u64()),
        (Some(20), Some(21))
    );
    assert_eq!(sec["heading"], "Risks");

    // Uncommitted work counts with --worktree.
    b.write("agents/bob.md", "# Bob\n\nby s1\nagain\n");
    t.note("agents/bob.md changed again, not committed.");
    t.bsi(&["verify", "s1", "--worktree"]).code(6);
    b.git(&["checkout", "--", "agents/bob.md"]);

    // close records it, and closes all the same.
    t.bsi(&["close", "s1"]).ok();
    let hist = b.history();
    assert_eq!(hist.len(), 2, "{hist:?}");
    for row in &hist {
        assert!(
            row.contains("| completed | overflow: 1 file, 1 section |"),
            "{row}"
        );
    }
    assert!(b.active().is_empty());

    // After the close, verify reads the scopes back from the history rows
    // and finds the same overflow.
    t.note("Closed: verify reads the scopes back from the history rows.");
    t.bsi(&["verify", "s1"]).code(6);
    assert_eq!(b.bsi(&["verify", "s1", "--json"]).json()["closed"], true);
    t.bsi(&["verify", "nobody"]).code(1);
    check_naming(
        &t,
        "hooks/verify_finds_file_and_section_overflow_and_close_records_it.txt",
        &[("overflow", &overflow)],
    );
}

#[test]
fn a_clean_session_closes_as_plain_completed() {
    let b = hooked();
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    b.write("agents/alice.md", "# Alice\n\nby s1\n");
    b.git(&["add", "-A"]);
    commit_as(&b, Some("s1"), "in scope").ok();
    let mut t = Transcript::new(&b);
    t.note("s1 holds agents/ and committed a change to agents/alice.md.");
    t.bsi(&["verify", "s1", "--worktree"]).ok();
    t.check("hooks/a_clean_session_closes_as_plain_completed.txt");
    let j = b.bsi(&["close", "s1", "--json"]);
    j.ok();
    assert_eq!(j.json()["verify"], "clean");
    assert_eq!(b.history().len(), 1);
    assert!(
        b.history()[0].ends_with("| completed |  |"),
        "{:?}",
        b.history()
    );
    assert!(b.last_subject().starts_with("bsi: close s1"));
}

#[test]
fn the_guard_is_fast_on_many_staged_files_and_claims() {
    let b = hooked();
    // 100 claims of other sessions, and a section claim on one file.
    let scopes: Vec<String> = (0..100).map(|i| format!("claimed/f{i}.md")).collect();
    for i in 0..100 {
        b.write(&format!("claimed/f{i}.md"), "# F\n");
    }
    b.git(&["add", "-A"]);
    b.git(&["commit", "-q", "-m", "claimed files"]);
    let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let mut args = vec!["open"];
    args.extend(refs);
    args.extend(["--session", "other"]);
    b.bsi(&args).ok();
    b.bsi(&["open", "free/", "--session", "me"]).ok();
    for i in 0..100 {
        b.write(&format!("free/n{i}.md"), &format!("# N{i}\n\ntext\n"));
    }
    b.git(&["add", "-A"]);
    // Its speed is bench/run.sh's to measure; here, what it says.
    let r = b.bsi_env(&["hook", "pre-commit"], &[("BSI_SESSION", "me")]);
    r.ok();
    assert_eq!(
        r.stderr, "",
        "nothing to say about 100 files of the session's own"
    );
}

#[test]
fn verify_judges_a_merge_on_what_it_changes_of_its_own() {
    let b = hooked();
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    b.git(&["checkout", "-q", "-b", "other"]);
    b.write("README.md", "# Brain\n\nfrom another branch\n");
    b.git(&["add", "README.md"]);
    git_as(&b, None, &["commit", "-q", "-m", "elsewhere"]).ok();
    b.git(&["checkout", "-q", "main"]);
    b.write("agents/alice.md", "# Alice\n\nby s1\n");
    b.git(&["add", "agents/alice.md"]);
    commit_as(&b, Some("s1"), "alice").ok();
    git_as(
        &b,
        Some("s1"),
        &["merge", "-q", "--no-ff", "-m", "merge other", "other"],
    )
    .ok();
    let msg = b.git(&["log", "-1", "--format=%B"]);
    assert!(msg.contains("BSI-Session: s1"), "{msg}");
    let j = b.bsi(&["verify", "s1", "--json"]);
    j.ok();
    let j = j.json();
    assert_eq!(j["clean"], true);
    // The merge brings another branch's work and changes nothing of its own.
    assert_eq!(j["commits"].as_array().map(Vec::len), Some(2));
}

#[test]
fn the_hook_mode_of_bsi_toml_applies_and_git_config_overrides_it() {
    let b = hooked();
    b.bsi(&["open", "agents/alice.md", "--session", "s1"]).ok();
    b.write(".bsi.toml", "hook_mode = \"warn\"\n");
    b.write("agents/alice.md", "# Alice\n\nby s2\n");
    b.git(&["add", "agents/alice.md"]);
    let mut t = Transcript::new(&b);
    t.note("s1 holds agents/alice.md; .bsi.toml says hook_mode = \"warn\"; s2 stages a change to agents/alice.md.");
    t.git_env(
        &["commit", "-q", "-m", "warned by the brain's setting"],
        &session("s2"),
    )
    .ok();
    assert_eq!(b.head_subject(), "warned by the brain's setting");

    // This clone's git config wins over the shared file.
    t.git(&["config", "bsi.hookMode", "normal"]).ok();
    b.write("agents/alice.md", "# Alice\n\nby s2 again\n");
    b.git(&["add", "agents/alice.md"]);
    t.note("s2 stages another change to agents/alice.md.");
    t.git_env(&["commit", "-q", "-m", "refused"], &session("s2"))
        .code(1);
    assert_eq!(b.head_subject(), "warned by the brain's setting");

    // `off` turns the guard off entirely.
    t.git(&["config", "--unset", "bsi.hookMode"]).ok();
    b.write(".bsi.toml", "hook_mode = \"off\"\n");
    t.note(".bsi.toml says hook_mode = \"off\".");
    t.git_env(&["commit", "-q", "-m", "unguarded"], &session("s2"))
        .ok();
    t.check("hooks/the_hook_mode_of_bsi_toml_applies_and_git_config_overrides_it.txt");
    assert_eq!(b.head_subject(), "unguarded");
}

#[test]
fn hook_install_registers_the_registry_merge_driver() {
    let b = Brain::new();
    // A clone made elsewhere has neither the driver nor the attribute.
    assert!(b.git_run(&["config", "merge.bsi.driver"]).code != 0);
    let mut t = Transcript::new(&b);
    t.bsi(&["hook", "install"]).ok();
    // The absolute path of the binary: `git pull` works without bsi on PATH.
    assert_eq!(
        b.git(&["config", "merge.bsi.driver"]).trim(),
        format!("{} merge-driver %O %A %B", bin().display())
    );
    assert_eq!(
        b.git(&["check-attr", "merge", "--", "BRAIN-INDEX.md"])
            .trim(),
        "BRAIN-INDEX.md: merge: bsi"
    );
    // Twice: nothing more to register.
    t.bsi(&["hook", "install"]).ok();
    t.check("hooks/hook_install_registers_the_registry_merge_driver.txt");
}

/// bsi's hook scripts of `b` calling bsi through a script that appends
/// each call (`hook NAME ARGS…`) to the log it returns: what the hooks
/// start, counted.
fn counting_starts(b: &Brain) -> std::path::PathBuf {
    use bsi_core::words::shell_word;
    let log = b.path().join(".git/bsi-starts.log");
    let counted = b.path().join(".git/bsi-counted");
    let word = |p: &Path| shell_word(p.to_str().expect("utf-8 path")).into_owned();
    std::fs::write(
        &counted,
        format!(
            "#!/bin/sh\necho \"$*\" >>{}\nexec {} \"$@\"\n",
            word(&log),
            word(&bin())
        ),
    )
    .expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&counted, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let (real, counting) = (
        format!("\nbsi={}\n", word(&bin())),
        format!("\nbsi={}\n", word(&counted)),
    );
    for name in bsi::githooks::HOOKS {
        let path = hooks_dir(b).join(name);
        let text = std::fs::read_to_string(&path).expect("hook");
        assert!(text.contains(&real), "{text}");
        std::fs::write(&path, text.replace(&real, &counting)).expect("write");
    }
    log
}

/// The calls of bsi logged since the last look, taken.
fn starts(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let _ = std::fs::remove_file(log);
    text.lines().map(str::to_string).collect()
}

fn message(b: &Brain, rev: &str) -> String {
    b.git(&["log", "-1", "--format=%B", rev])
        .trim_end()
        .to_string()
}

/// A hook starts bsi only when bsi has something to do: the guard of every
/// commit (pre-commit), a trailer to add, a branch update no pre-commit of
/// the same git command judged. A plain commit's reference update, a
/// message that carries the session's trailer already (an amend, each pick
/// of a rebase: git keeps the message) and a commit of no session start
/// nothing more — and every trailer is where it was.
#[test]
fn the_hooks_start_bsi_only_where_it_has_something_to_do() {
    let b = hooked();
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    let log = counting_starts(&b);

    b.write("README.md", "# Brain\n\nplain\n");
    b.git(&["add", "README.md"]);
    commit_as(&b, None, "plain").ok();
    assert_eq!(starts(&log), ["hook pre-commit"]);
    assert_eq!(message(&b, "HEAD"), "plain");
    let base = b.git(&["rev-parse", "HEAD"]).trim().to_string();

    b.write("agents/alice.md", "# Alice\n\nby s1\n");
    b.git(&["add", "agents/alice.md"]);
    commit_as(&b, Some("s1"), "alice").ok();
    assert_eq!(
        starts(&log),
        [
            "hook pre-commit",
            "hook prepare-commit-msg .git/COMMIT_EDITMSG message"
        ]
    );
    assert_eq!(message(&b, "HEAD"), "alice\n\nBSI-Session: s1");

    git_as(&b, Some("s1"), &["commit", "-q", "--amend", "--no-edit"]).ok();
    assert_eq!(starts(&log), ["hook pre-commit"]);
    assert_eq!(message(&b, "HEAD"), "alice\n\nBSI-Session: s1");

    b.write("agents/alice.md", "# Alice\n\nby s1, twice\n");
    b.git(&["add", "agents/alice.md"]);
    commit_as(&b, Some("s1"), "alice again").ok();
    starts(&log);

    // Another line of work under s1's two commits: a rebase replays them,
    // each pick with its message, and its branch update is judged once.
    b.git(&["checkout", "-q", "-b", "other", &base]);
    b.write("projets/notes.md", "# Notes\n\nelsewhere\n");
    b.git(&["add", "projets/notes.md"]);
    commit_as(&b, None, "notes").ok();
    b.git(&["checkout", "-q", "main"]);
    starts(&log);
    git_as(&b, Some("s1"), &["rebase", "-q", "other"]).ok();
    assert_eq!(starts(&log), ["hook reference-transaction prepared"]);
    assert_eq!(message(&b, "HEAD"), "alice again\n\nBSI-Session: s1");
    assert_eq!(message(&b, "HEAD~1"), "alice\n\nBSI-Session: s1");
    assert_eq!(message(&b, "HEAD~2"), "notes");
    // The same with no session in the shell: nothing to add either.
    b.git(&["reset", "-q", "--hard", "ORIG_HEAD"]);
    starts(&log);
    git_as(&b, None, &["rebase", "-q", "other"]).ok();
    assert_eq!(starts(&log), ["hook reference-transaction prepared"]);
    assert_eq!(message(&b, "HEAD~1"), "alice\n\nBSI-Session: s1");

    // A reset back is a branch update no pre-commit judged (over s1's
    // own commit: s1 may drop it).
    git_as(&b, Some("s1"), &["reset", "-q", "--soft", "HEAD~1"]).ok();
    assert_eq!(starts(&log), ["hook reference-transaction prepared"]);
}

/// With no `BSI_SESSION`, the session map may name the session of an agent
/// tool (its variable, or its process): the prepare-commit-msg hook starts
/// bsi, which adds that session's trailer — in a linked work tree too,
/// whose map is the clone's.
#[test]
fn a_session_the_session_map_names_still_gets_its_trailer() {
    let b = hooked();
    b.write(
        ".git/bsi-agents/sessions.json",
        r#"{"version":1,"sessions":[{"tool":"codex","tool_session":"019a-thread","session":"sess-map"}]}"#,
    );
    let log = counting_starts(&b);
    let commit = |dir: &Path, msg: &str, thread: Option<&str>| {
        let mut cmd = std::process::Command::new("git");
        crate::common::clean_env(&mut cmd, b.path());
        cmd.current_dir(dir)
            .env("BSI_NOW", &b.now)
            .args(["commit", "-q", "-m", msg]);
        if let Some(t) = thread {
            cmd.env("CODEX_THREAD_ID", t);
        }
        Run::from_output(cmd.output().expect("run git"))
    };
    b.write("README.md", "# Brain\n\nby the agent\n");
    b.git(&["add", "README.md"]);
    commit(b.path(), "by the agent", Some("019a-thread")).ok();
    assert_eq!(message(&b, "HEAD"), "by the agent\n\nBSI-Session: sess-map");
    let s = starts(&log);
    assert!(
        s.iter().any(|l| l.starts_with("hook prepare-commit-msg")),
        "{s:?}"
    );

    let (_place, wt) = b.worktree("wt", Some("wt"));
    std::fs::write(wt.join("README.md"), "# Brain\n\nin the work tree\n").expect("write");
    b.git_at(&wt, None, &["add", "README.md"]).ok();
    starts(&log);
    commit(&wt, "in the work tree", Some("019a-thread")).ok();
    assert_eq!(
        message(&b, "wt"),
        "in the work tree\n\nBSI-Session: sess-map"
    );
    let s = starts(&log);
    assert!(
        s.iter().any(|l| l.starts_with("hook prepare-commit-msg")),
        "{s:?}"
    );
    // No map: nothing to add, nothing started for it.
    std::fs::remove_file(b.path().join(".git/bsi-agents/sessions.json")).expect("rm");
    std::fs::write(wt.join("README.md"), "# Brain\n\nno map\n").expect("write");
    b.git_at(&wt, None, &["add", "README.md"]).ok();
    commit(&wt, "no map", Some("019a-thread")).ok();
    assert_eq!(message(&b, "wt"), "no map");
    assert_eq!(starts(&log), ["hook pre-commit"]);
}
