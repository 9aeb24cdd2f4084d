//! The git hooks and `bsi verify`: real `git commit` runs through the
//! installed hooks, on real temporary repositories.

use crate::common::{Brain, Run, bin};

/// Runs git with `BSI_SESSION` set (or not): what a session's commit does.
pub(crate) fn git_as(b: &Brain, session: Option<&str>, args: &[&str]) -> Run {
    b.git_at(b.path(), session, args)
}

/// A brain with the hooks installed.
pub(crate) fn hooked() -> Brain {
    let b = Brain::new();
    b.bsi(&["hook", "install"])
        .ok()
        .stdout_has("pre-commit: installed")
        .stdout_has("prepare-commit-msg: installed");
    b
}

pub(crate) fn commit_as(b: &Brain, session: Option<&str>, msg: &str) -> Run {
    git_as(b, session, &["commit", "-q", "-m", msg])
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
    let r = commit_as(&b, Some("s2"), "edit alice");
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("agents/alice.md is inside an active claim of session s1")
        .stderr_has("agent alice, scope agents/, expires 2026-03-14 11:30 +00:00")
        .stderr_has("ways out: wait for s1 to close its claim")
        .stderr_has("bsi release s1 --confirm")
        .stderr_has("--no-verify")
        // Outside s2's own scopes too: a warning.
        .stderr_has("agents/alice.md is outside every scope s2 holds");
    assert_eq!(b.commits(), before, "nothing committed");

    // s1 closes: the same commit goes through.
    b.bsi_env(&["close", "s1"], &[("BSI_AGENT", "alice")]).ok();
    let r = commit_as(&b, Some("s2"), "edit alice");
    r.ok()
        .stderr_has("warning: agents/alice.md is outside every scope s2 holds");
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
    commit_as(&b, None, "no session")
        .code(1)
        .stderr_has("agents/bob.md is inside a stale claim of session s1")
        .stderr_has("BSI_SESSION is not set")
        .stderr_has("bsi release s1 --confirm` (its claim is stale)");
}

#[test]
fn two_sessions_commit_their_own_sections_and_not_each_others() {
    let b = hooked();
    b.bsi(&["open", "projets/plan.md#Goals", "--session", "s1"])
        .ok();
    b.bsi(&["open", "projets/plan.md#Risks", "--session", "s2"])
        .ok();
    let plan = b.read("projets/plan.md");

    // s1 edits a line of Q1, inside its Goals.
    b.write(
        "projets/plan.md",
        &plan.replace("q1 text", "q1 text, by s1"),
    );
    b.git(&["add", "projets/plan.md"]);
    commit_as(&b, Some("s1"), "goals by s1").ok();
    assert_eq!(b.head_subject(), "goals by s1");

    // s2 edits its Risks.
    let plan = b.read("projets/plan.md");
    b.write(
        "projets/plan.md",
        &plan.replace("risk text", "risk text, by s2"),
    );
    b.git(&["add", "projets/plan.md"]);
    let r = commit_as(&b, Some("s2"), "risks by s2");
    r.ok();
    assert!(
        !r.stderr.contains("bsi:"),
        "nothing to report: {}",
        r.stderr
    );
    assert_eq!(b.head_subject(), "risks by s2");

    // s2 now touches Goals' text: that hunk is refused.
    let before = b.commits();
    let plan = b.read("projets/plan.md");
    b.write(
        "projets/plan.md",
        &plan.replace("goal text", "goal text, by s2"),
    );
    b.git(&["add", "projets/plan.md"]);
    commit_as(&b, Some("s2"), "goals by s2")
        .code(1)
        .stderr_has("projets/plan.md line 7 under `Goals` is inside an active claim of session s1")
        .stderr_has("scope projets/plan.md#Goals")
        .stderr_has("line 7 under `Goals` is outside the sections s2 holds in this file");
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
    b.write("projets/plan.md", &plan.replace("## Risks\n\n", ""));
    b.git(&["add", "projets/plan.md"]);
    let before = b.commits();
    commit_as(&b, Some("s1"), "merge risks into goals")
        .code(1)
        .stderr_has(
            "projets/plan.md lines 17-18 under `Risks` in the previous version (removed) is inside an active claim of session s2",
        );
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

    b.bsi(&["hook", "install"])
        .ok()
        .stdout_has("pre-commit: installed; the existing hook is kept and runs first");
    assert_eq!(
        std::fs::read_to_string(dir.join("pre-commit.bsi-chained")).expect("chained"),
        mine
    );

    b.write("README.md", "# Brain\n\nmore\n");
    b.git(&["add", "README.md"]);
    commit_as(&b, None, "readme")
        .ok()
        .stderr_has("local hook ran");
    assert_eq!(b.head_subject(), "readme");

    // Its failure still fails the commit, before bsi runs.
    b.write("STOP", "");
    b.write("README.md", "# Brain\n\neven more\n");
    b.git(&["add", "README.md"]);
    let before = b.commits();
    let r = commit_as(&b, None, "stopped");
    assert_ne!(r.code, 0);
    r.stderr_has("local hook ran");
    assert_eq!(b.commits(), before);

    // Uninstall puts the original hook back, byte for byte.
    b.bsi(&["hook", "uninstall"])
        .ok()
        .stdout_has("pre-commit: removed; the previous hook is back");
    assert_eq!(std::fs::read_to_string(&path).expect("hook"), mine);
    assert!(!dir.join("pre-commit.bsi-chained").exists());
}

#[cfg(unix)]
fn make_executable(p: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[cfg(not(unix))]
fn make_executable(_: &std::path::Path) {}

fn listing(dir: &std::path::Path) -> Vec<(String, String)> {
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

    b.bsi(&["hook", "install"]).ok();
    let once = listing(&dir);
    assert_eq!(once.len(), 3, "{once:?}");
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
    assert!(script.contains(&format!("bsi='{exe}'")), "{script}");
    assert!(!hooks_dir(&b).join("pre-commit").exists());

    b.bsi(&["hook", "install"])
        .ok()
        .stdout_has("pre-commit: already installed")
        .stdout_has("prepare-commit-msg: already installed");
    assert_eq!(listing(&dir), once);

    b.bsi(&["hook", "uninstall"])
        .ok()
        .stdout_has("pre-commit: removed");
    assert_eq!(listing(&dir), before);
    b.bsi(&["hook", "uninstall"])
        .ok()
        .stdout_has("pre-commit: not installed");
    assert_eq!(listing(&dir), before);
}

#[test]
fn a_forced_add_of_the_registry_copy_is_refused_and_no_verify_passes() {
    let b = hooked();
    let reg = b.registry();
    b.write("BRAIN-INDEX.md", &format!("{reg}\nhand edit\n"));
    // The copy is ignored: only a forced add stages it.
    b.git(&["add", "-f", "BRAIN-INDEX.md"]);
    let before = b.head_commits();
    commit_as(&b, None, "hand edit")
        .code(1)
        .stderr_has("BRAIN-INDEX.md is staged — it is the copy of the registry, which lives on the branch brain-index")
        .stderr_has("git rm --cached BRAIN-INDEX.md");
    assert_eq!(b.head_commits(), before);
    assert_eq!(b.registry(), reg);

    // The documented escape hatch.
    git_as(
        &b,
        None,
        &["commit", "-q", "--no-verify", "-m", "hand edit"],
    )
    .ok();
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
    b.git(&["config", "bsi.hookMode", "warn"]);
    b.write("agents/alice.md", "# Alice\n\nby s2\n");
    b.git(&["add", "agents/alice.md"]);
    commit_as(&b, Some("s2"), "warned")
        .ok()
        .stderr_has("warning: agents/alice.md is inside an active claim of session s1");
    assert_eq!(b.head_subject(), "warned");

    b.git(&["config", "bsi.hookMode", "strict"]);
    b.write("README.md", "# Brain\n\nby s2\n");
    b.git(&["add", "README.md"]);
    commit_as(&b, Some("s2"), "strict")
        .code(1)
        .stderr_has("refused: README.md is outside every scope s2 holds");

    b.git(&["config", "bsi.hookMode", "normal"]);
    commit_as(&b, Some("s2"), "normal")
        .ok()
        .stderr_has("warning: README.md is outside every scope s2 holds");
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
    git_as(
        &b,
        None,
        &["commit", "-q", "--no-verify", "-m", "someone else"],
    )
    .ok();

    // Inside its claims.
    b.write("agents/alice.md", "# Alice\n\nby s1\n");
    let plan = b.read("projets/plan.md");
    b.write(
        "projets/plan.md",
        &plan.replace("q2 text", "q2 text, by s1"),
    );
    b.git(&["add", "-A"]);
    commit_as(&b, Some("s1"), "in scope").ok();
    b.bsi(&["verify", "s1"])
        .ok()
        .stdout_has("Verified s1: 1 commit")
        .stdout_has("clean: nothing outside the claims of s1");

    // Outside: bob's file, and the Risks section of the plan.
    b.write("agents/bob.md", "# Bob\n\nby s1\n");
    let plan = b.read("projets/plan.md");
    b.write(
        "projets/plan.md",
        &plan.replace("risk text\n", "risk text\nmore risk\nand more\n"),
    );
    b.git(&["add", "-A"]);
    git_as(
        &b,
        Some("s1"),
        &["commit", "-q", "--no-verify", "-m", "overflow"],
    )
    .ok();
    let r = b.bsi(&["verify", "s1"]);
    r.code(6)
        .stdout_has("Verified s1: 2 commits")
        .stdout_has("overflow: agents/bob.md — outside every scope of s1")
        .stdout_has(
            "overflow: projets/plan.md lines 20-21 under `Risks` — outside the sections s1 holds in this file",
        )
        .stdout_has("overflow: 1 file, 1 section");
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
    b.bsi(&["verify", "s1", "--worktree"])
        .code(6)
        .stdout_has("agents/bob.md — outside every scope of s1 (work tree)");
    b.git(&["checkout", "--", "agents/bob.md"]);

    // close records it, and closes all the same.
    b.bsi(&["close", "s1"])
        .ok()
        .stdout_has("overflow: 1 file, 1 section outside its claims");
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
    let after = b.bsi(&["verify", "s1"]);
    after
        .code(6)
        .stdout_has("Verified s1: 2 commits (closed: against the scopes its history rows name)")
        .stdout_has("overflow: agents/bob.md — outside every scope of s1")
        .stdout_has("overflow: 1 file, 1 section");
    assert_eq!(b.bsi(&["verify", "s1", "--json"]).json()["closed"], true);
    b.bsi(&["verify", "nobody"])
        .code(1)
        .stderr_has("has none in the history");
}

#[test]
fn a_clean_session_closes_as_plain_completed() {
    let b = hooked();
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    b.write("agents/alice.md", "# Alice\n\nby s1\n");
    b.git(&["add", "-A"]);
    commit_as(&b, Some("s1"), "in scope").ok();
    b.bsi(&["verify", "s1", "--worktree"])
        .ok()
        .stdout_has("clean: nothing outside the claims of s1");
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
fn verify_leaves_out_what_a_merge_brings() {
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
    assert_eq!(j["commits"].as_array().map(Vec::len), Some(1));
}

#[test]
fn the_hook_mode_of_bsi_toml_applies_and_git_config_overrides_it() {
    let b = hooked();
    b.bsi(&["open", "agents/alice.md", "--session", "s1"]).ok();
    b.write(".bsi.toml", "hook_mode = \"warn\"\n");
    b.write("agents/alice.md", "# Alice\n\nby s2\n");
    b.git(&["add", "agents/alice.md"]);
    commit_as(&b, Some("s2"), "warned by the brain's setting")
        .ok()
        .stderr_has("warning: agents/alice.md is inside an active claim of session s1");
    assert_eq!(b.head_subject(), "warned by the brain's setting");

    // This clone's git config wins over the shared file.
    b.git(&["config", "bsi.hookMode", "normal"]);
    b.write("agents/alice.md", "# Alice\n\nby s2 again\n");
    b.git(&["add", "agents/alice.md"]);
    commit_as(&b, Some("s2"), "refused")
        .code(1)
        .stderr_has("s1");
    assert_eq!(b.head_subject(), "warned by the brain's setting");

    // `off` turns the guard off entirely.
    b.git(&["config", "--unset", "bsi.hookMode"]);
    b.write(".bsi.toml", "hook_mode = \"off\"\n");
    commit_as(&b, Some("s2"), "unguarded").ok();
    assert_eq!(b.head_subject(), "unguarded");
}

#[test]
fn hook_install_registers_the_registry_merge_driver() {
    let b = Brain::new();
    // A clone made elsewhere has neither the driver nor the attribute.
    assert!(b.git_run(&["config", "merge.bsi.driver"]).code != 0);
    b.bsi(&["hook", "install"])
        .ok()
        .stdout_has("merge driver: registered for BRAIN-INDEX.md");
    // The absolute path of the binary: `git pull` works without bsi on PATH.
    assert_eq!(
        b.git(&["config", "merge.bsi.driver"]).trim(),
        format!("{} merge-driver %O %A %B", crate::common::bin().display())
    );
    assert_eq!(
        b.git(&["check-attr", "merge", "--", "BRAIN-INDEX.md"])
            .trim(),
        "BRAIN-INDEX.md: merge: bsi"
    );
    // Twice: nothing more to register.
    let again = b.bsi(&["hook", "install"]);
    again.ok();
    assert!(!again.stdout.contains("merge driver"), "{}", again.stdout);
}
