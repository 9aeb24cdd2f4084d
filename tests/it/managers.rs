//! Hook managers and hook paths: husky, lefthook and the pre-commit
//! framework — the real tools `.ci/run` installs from their registries — in
//! both install orders, a relative `core.hooksPath` with linked work trees,
//! and `bsi doctor` and `bsi status` saying when the guard is off.
//!
//! Each scenario ends with the same three checks: a commit inside another
//! session's claim is refused, a free commit passes, and the manager's own
//! hook (a lint writing the file `linted`) still runs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Brain, Run, bin, clean_env};
use crate::transcript::Transcript;

/// `PATH` with the binary under test first: the lines bsi adds to shared
/// scripts (husky's, lefthook's, a tracked folder's) call `bsi` on PATH.
fn path_with_bsi() -> String {
    let dir = bin().parent().expect("bin dir").to_path_buf();
    let rest = std::env::var("PATH").unwrap_or_default();
    format!("{}:{rest}", dir.display())
}

/// The program `name` on PATH, or `None` after saying the test is skipped.
fn tool(name: &str) -> Option<PathBuf> {
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    if found.is_none() {
        eprintln!("{name} is not installed: skipped (.ci/run installs it)");
    }
    found
}

/// Runs `program` in `dir` with the tests' clean environment and bsi on PATH.
fn run(b: &Brain, dir: &Path, program: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(program);
    clean_env(&mut cmd, b.path());
    cmd.current_dir(dir)
        .env("BSI_NOW", &b.now)
        .env("PATH", path_with_bsi())
        // The pre-commit framework's cache: out of the work tree.
        .env("PRE_COMMIT_HOME", b.path().join(".git/pre-commit-home"))
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::from_output(cmd.output().expect("run"))
}

fn git(b: &Brain, dir: &Path, session: Option<&str>, args: &[&str]) -> Run {
    let env: Vec<(&str, &str)> = session.map(|s| ("BSI_SESSION", s)).into_iter().collect();
    run(b, dir, Path::new("git"), args, &env)
}

fn bsi(b: &Brain, dir: &Path, args: &[&str]) -> Run {
    run(b, dir, &bin(), args, &[])
}

fn head(b: &Brain, dir: &Path) -> String {
    git(b, dir, None, &["rev-parse", "HEAD"])
        .stdout
        .trim()
        .to_string()
}

#[cfg(unix)]
fn make_executable(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(p, fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[cfg(not(unix))]
fn make_executable(_: &Path) {}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(&p, text).expect("write");
}

/// A brain where s1 holds agents/alice.md.
fn claimed() -> Brain {
    let b = Brain::new();
    b.bsi(&[
        "open",
        "agents/alice.md",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    b
}

/// The three checks, in the work tree `dir`: s2's commit into s1's claim
/// is refused and nothing is committed; s2's commit of a free file passes
/// with its session trailer; the manager's lint ran (it wrote `linted`).
#[track_caller]
fn guard_holds(b: &Brain, dir: &Path, what: &str) {
    let _ = fs::remove_file(dir.join("linted"));
    claimed_commit_refused(b, dir, what);

    let _ = fs::remove_file(dir.join("linted"));
    let text = fs::read_to_string(dir.join("README.md")).expect("readme");
    write(dir, "README.md", &format!("{text}free line\n"));
    git(b, dir, None, &["add", "README.md"]).ok();
    let r = git(b, dir, Some("s2"), &["commit", "-q", "-m", "free"]);
    assert_eq!(
        r.code, 0,
        "{what}: a free commit was refused:\n{}",
        r.stderr
    );
    // The warning of a commit outside s2's scopes, once: the
    // reference-transaction hook does not judge again what pre-commit did.
    assert_eq!(
        r.stderr
            .matches("README.md is outside every scope s2 holds")
            .count(),
        1,
        "{what}: {}",
        r.stderr
    );
    let msg = git(b, dir, None, &["log", "-1", "--format=%B"]).stdout;
    assert!(msg.starts_with("free\n"), "{what}: {msg}");
    assert!(msg.contains("BSI-Session: s2"), "{what}: no trailer: {msg}");
    assert!(
        dir.join("linted").exists(),
        "{what}: the manager's own hook did not run"
    );
    let _ = fs::remove_file(dir.join("linted"));
}

/// `bsi doctor` in `dir` says the guard is off (exit 9) and names `needle`;
/// `bsi status` says it too.
#[track_caller]
fn doctor_says_off(b: &Brain, dir: &Path, needle: &str) {
    let r = bsi(b, dir, &["doctor"]);
    r.code(9);
    r.stdout_has(needle).stdout_has("  fix: ");
    bsi(b, dir, &["status", "--offline"])
        .ok()
        .stdout_has("GUARD OFF in this work tree")
        .stdout_has("`bsi doctor`");
    let r = bsi(b, dir, &["status", "--offline", "--json"]);
    r.ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("status --json");
    assert_eq!(v["guard"]["on"], false, "{v}");
    assert_eq!(v["guard"]["installed"], true, "{v}");
    let problems = v["guard"]["problems"].as_array().expect("problems");
    assert!(
        problems
            .iter()
            .any(|p| p["what"].as_str().is_some_and(|w| w.contains(needle))
                && p["fix"].as_str().is_some_and(|f| !f.is_empty())),
        "{v}"
    );
}

#[track_caller]
fn doctor_says_on(b: &Brain, dir: &Path) {
    bsi(b, dir, &["doctor"])
        .ok()
        .stdout_has("The guard is on in this work tree.");
    let s = bsi(b, dir, &["status", "--offline"]);
    s.ok();
    assert!(!s.stdout.contains("GUARD OFF"), "{}", s.stdout);
    let r = bsi(b, dir, &["status", "--offline", "--json"]);
    r.ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("status --json");
    assert_eq!(v["guard"]["on"], true, "{v}");
    assert_eq!(v["guard"]["problems"], serde_json::json!([]), "{v}");
}

// ---------------------------------------------------------------- paths

#[test]
fn a_relative_untracked_hooks_path_is_guarded_in_every_work_tree() {
    let b = claimed();
    let (_place, wt) = b.worktree("feat", Some("feat"));
    b.git(&["config", "core.hooksPath", "local-hooks"]);
    let exclude = b.path().join(".git/info/exclude");
    let text = fs::read_to_string(&exclude).unwrap_or_default();
    fs::write(&exclude, format!("{text}local-hooks/\n")).expect("exclude");
    let lint = "#!/bin/sh\ntouch linted\n";
    for dir in [b.path(), wt.as_path()] {
        write(dir, "local-hooks/pre-commit", lint);
        make_executable(&dir.join("local-hooks/pre-commit"));
    }
    let r = bsi(&b, b.path(), &["hook", "install"]);
    r.ok();
    // One install, both work trees.
    r.stdout_has(&format!("{}", wt.join("local-hooks/pre-commit").display()));
    guard_holds(&b, b.path(), "main work tree");
    guard_holds(&b, &wt, "linked work tree");
    doctor_says_on(&b, &wt);

    // A work tree added later: bsi's post-checkout hook (chaining the
    // user's) installed the guard in its folder, with no step of the user's.
    let (_later, wt2) = b.worktree("late", Some("late"));
    doctor_says_on(&b, &wt2);
    claimed_commit_refused(&b, &wt2, "a work tree added after install");

    // Uninstall from anywhere leaves each folder as it was.
    bsi(&b, &wt, &["hook", "uninstall"]).ok();
    for dir in [b.path(), wt.as_path(), wt2.as_path()] {
        let names: Vec<String> = fs::read_dir(dir.join("local-hooks"))
            .expect("dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        let want: &[&str] = if dir == wt2 { &[] } else { &["pre-commit"] };
        assert_eq!(names, want, "{}", dir.display());
        if dir != wt2 {
            assert_eq!(
                fs::read_to_string(dir.join("local-hooks/pre-commit")).expect("hook"),
                lint
            );
        }
    }
}

/// s2's commit into s1's claim, in the work tree `dir`, is refused: the
/// branch does not move, and the change is put back as it was.
#[track_caller]
fn claimed_commit_refused(b: &Brain, dir: &Path, what: &str) {
    let before = head(b, dir);
    let text = fs::read_to_string(dir.join("agents/alice.md")).expect("alice");
    write(dir, "agents/alice.md", "# Alice\n\nby s2\n");
    git(b, dir, None, &["add", "agents/alice.md"]).ok();
    let r = git(
        b,
        dir,
        Some("s2"),
        &["commit", "-q", "-m", "into s1's claim"],
    );
    assert_ne!(
        r.code, 0,
        "{what}: a commit into s1's claim passed:\n{}",
        r.stderr
    );
    // Said once, whichever hooks the manager runs bsi from.
    assert_eq!(
        r.stderr
            .matches("inside an active claim of session s1")
            .count(),
        1,
        "{what}: said once: {}",
        r.stderr
    );
    assert_eq!(head(b, dir), before, "{what}: nothing committed");
    git(b, dir, None, &["reset", "-q"]).ok();
    git(b, dir, None, &["checkout", "--", "agents/alice.md"]).ok();
    assert_eq!(
        fs::read_to_string(dir.join("agents/alice.md")).expect("alice"),
        text
    );
}

/// A brain where s1 holds agents/alice.md, `core.hooksPath` is `.githooks`
/// (a folder git does not track: excluded), holding the user's own
/// post-checkout, and bsi's guard is installed.
fn untracked_githooks_installed() -> Brain {
    let b = claimed();
    b.git(&["config", "core.hooksPath", ".githooks"]);
    let exclude = b.path().join(".git/info/exclude");
    let text = fs::read_to_string(&exclude).unwrap_or_default();
    fs::write(&exclude, format!("{text}.githooks/\n")).expect("exclude");
    write(
        b.path(),
        ".githooks/post-checkout",
        "#!/bin/sh\necho \"$3\" >> checked-out\n",
    );
    make_executable(&b.path().join(".githooks/post-checkout"));
    bsi(&b, b.path(), &["hook", "install"])
        .ok()
        .stdout_has("post-checkout: installed; the existing hook is kept and runs first");
    b
}

#[test]
fn a_work_tree_added_later_under_an_untracked_hooks_path_is_guarded_by_post_checkout() {
    let b = untracked_githooks_installed();
    let main_head = head(&b, b.path());
    let (_place, wt) = b.worktree("later", Some("later"));
    // The user's post-checkout ran too, in the new work tree.
    assert_eq!(
        fs::read_to_string(wt.join("checked-out")).expect("user's hook ran"),
        "1\n"
    );
    for name in bsi::githooks::HOOKS
        .iter()
        .chain([&bsi::githooks::POST_CHECKOUT])
    {
        let text = fs::read_to_string(wt.join(".githooks").join(name)).expect("installed");
        assert!(bsi::githooks::is_ours(&text), "{name}: {text}");
    }
    // Nothing else in the new work tree changed: only the ignored hooks folder
    // and what the user's hook wrote.
    assert_eq!(
        git(&b, &wt, None, &["status", "--porcelain"]).stdout,
        "?? checked-out\n"
    );
    doctor_says_on(&b, &wt);
    bsi(&b, &wt, &["doctor"])
        .ok()
        .stdout_has("post-checkout: ok: bsi's hook (.githooks/post-checkout)");
    claimed_commit_refused(&b, &wt, "a work tree added after install");
    // A later checkout in a work tree starts no bsi: nothing is said.
    let r = git(&b, &wt, None, &["checkout", "-q", "-b", "other"]);
    r.ok();
    assert_eq!(r.stderr, "", "{}", r.stderr);
    // The user's branch and files in the main work tree are untouched.
    assert_eq!(head(&b, b.path()), main_head);
    assert_eq!(
        git(&b, b.path(), None, &["status", "--porcelain"]).stdout,
        ""
    );
}

#[test]
fn a_work_tree_added_without_post_checkout_is_guarded_by_its_first_bsi_command() {
    let b = untracked_githooks_installed();
    let main_head = head(&b, b.path());
    // Added with the hooks turned off: git ran no post-checkout.
    let place = tempfile::tempdir().expect("tempdir");
    let wt = place.path().join("bare-add");
    git(
        &b,
        b.path(),
        None,
        &[
            "-c",
            "core.hooksPath=/dev/null",
            "worktree",
            "add",
            "-q",
            &wt.to_string_lossy(),
            "-b",
            "bare-add",
        ],
    )
    .ok();
    assert!(!wt.join(".githooks").exists());
    let r = bsi(&b, &wt, &["status", "--offline"]);
    r.ok();
    assert_eq!(
        r.stderr.matches("bsi: this work tree had no guard: bsi's pre-commit, prepare-commit-msg, pre-merge-commit, reference-transaction, post-checkout installed in ").count(),
        1,
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(!r.stdout.contains("GUARD OFF"), "{}", r.stdout);
    // Said once: the next command finds the guard there.
    let r = bsi(&b, &wt, &["status", "--offline"]);
    r.ok();
    assert_eq!(r.stderr, "", "{}", r.stderr);
    doctor_says_on(&b, &wt);
    claimed_commit_refused(&b, &wt, "a work tree guarded by its first command");
    assert_eq!(git(&b, &wt, None, &["status", "--porcelain"]).stdout, "");
    assert_eq!(head(&b, b.path()), main_head);
    assert_eq!(
        git(&b, b.path(), None, &["status", "--porcelain"]).stdout,
        ""
    );
    // After `bsi hook uninstall`, a new work tree is left alone.
    bsi(&b, b.path(), &["hook", "uninstall"]).ok();
    let wt3 = place.path().join("after-uninstall");
    git(
        &b,
        b.path(),
        None,
        &[
            "worktree",
            "add",
            "-q",
            &wt3.to_string_lossy(),
            "-b",
            "after",
        ],
    )
    .ok();
    let r = bsi(&b, &wt3, &["status", "--offline"]);
    r.ok();
    assert_eq!(r.stderr, "", "{}", r.stderr);
    assert!(!wt3.join(".githooks").exists());
}

#[test]
fn a_tracked_hooks_folder_carries_the_guard_into_every_checkout() {
    let b = claimed();
    let lint = "#!/bin/sh\n# the team's lint\ntouch linted\n";
    b.write(".githooks/pre-commit", lint);
    make_executable(&b.path().join(".githooks/pre-commit"));
    b.git(&["add", ".githooks"]);
    b.git(&["commit", "-q", "-m", "team hooks"]);
    b.git(&["config", "core.hooksPath", ".githooks"]);

    // core.hooksPath is .githooks, a folder the repository tracks, holding
    // the team's pre-commit lint; bsi is on PATH.
    let r = bsi(&b, b.path(), &["hook", "install"]);
    r.ok();
    r.stdout_has(&format!(
        "pre-commit: a line calling bsi added ({})",
        b.path().join(".githooks/pre-commit").display()
    ))
    .stdout_has("Commit .githooks/pre-commit, .githooks/prepare-commit-msg, .githooks/pre-merge-commit, .githooks/reference-transaction so that every work tree and clone carries the guard: `git add -- .githooks/pre-commit .githooks/prepare-commit-msg .githooks/pre-merge-commit .githooks/reference-transaction`, then `git commit`");
    assert!(!r.stdout.contains("not on PATH"), "{}", r.stdout);
    // The tracked script is kept, with one line added; nothing is renamed.
    let diff = b.git(&["diff", "--", ".githooks/pre-commit"]);
    let added: Vec<&str> = diff
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .collect();
    assert_eq!(added.len(), 1, "{diff}");
    assert!(
        added[0].starts_with(
            "+if command -v bsi >/dev/null 2>&1; then bsi hook pre-commit \"$@\" || exit $?;"
        ),
        "{diff}"
    );
    assert!(!b.path().join(".githooks/pre-commit.bsi-chained").exists());
    guard_holds(
        &b,
        b.path(),
        "main work tree, before the commit of the hooks",
    );

    // Committed as install says, every checkout carries it.
    git(
        &b,
        b.path(),
        None,
        &[
            "add",
            "--",
            ".githooks/pre-commit",
            ".githooks/prepare-commit-msg",
            ".githooks/pre-merge-commit",
            ".githooks/reference-transaction",
        ],
    )
    .ok();
    git(
        &b,
        b.path(),
        None,
        &["commit", "-q", "-m", "bsi's guard in the team hooks"],
    )
    .ok();
    let (_place, wt) = b.worktree("feat", Some("feat"));
    guard_holds(&b, &wt, "a linked work tree made after the commit");
    doctor_says_on(&b, &wt);
    bsi(&b, b.path(), &["doctor"])
        .ok()
        .stdout_has(".githooks is a folder git tracks")
        .stdout_has("pre-commit: ok: a line in .githooks/pre-commit");
    // Without bsi on PATH the lines cannot run it: doctor says so.
    b.bsi_env(&["doctor"], &[("PATH", "/nonexistent")])
        .code(9)
        .stdout_has("bsi on PATH: OFF");

    // Uninstall takes the lines out again.
    bsi(&b, b.path(), &["hook", "uninstall"])
        .ok()
        .stdout_has("pre-commit: bsi's line removed")
        .stdout_has("prepare-commit-msg: removed (it held only bsi's line)");
    assert_eq!(b.read(".githooks/pre-commit"), lint);
    assert!(!b.path().join(".githooks/prepare-commit-msg").exists());
}

// ---------------------------------------------------------------- husky

/// `.husky/pre-commit`, the script husky's stub runs: a lint.
const HUSKY_LINT: &str = "touch linted\n";

fn husky_setup(b: &Brain, husky: &Path, dir: &Path) {
    run(b, dir, husky, &[], &[]).ok();
    assert_eq!(
        git(b, dir, None, &["config", "core.hooksPath"])
            .stdout
            .trim(),
        ".husky/_"
    );
}

#[test]
fn husky_then_bsi_adds_a_line_that_survives_husky_and_reaches_new_work_trees() {
    let Some(husky) = tool("husky") else { return };
    let b = claimed();
    write(b.path(), ".husky/pre-commit", HUSKY_LINT);
    husky_setup(&b, &husky, b.path());
    let r = bsi(&b, b.path(), &["hook", "install"]);
    r.ok();
    r.stdout_has("pre-commit: a line calling bsi added")
        .stdout_has("git add -- .husky/pre-commit .husky/prepare-commit-msg");
    // husky's stub is husky's: it finds the script by its own name.
    let stub = fs::read_to_string(b.path().join(".husky/_/pre-commit")).expect("stub");
    assert!(stub.contains("/h\""), "{stub}");
    assert!(b.read(".husky/pre-commit").starts_with(HUSKY_LINT));
    guard_holds(&b, b.path(), "husky, then bsi");
    doctor_says_on(&b, b.path());

    // husky runs again (every `npm install`): the guard stays.
    husky_setup(&b, &husky, b.path());
    guard_holds(&b, b.path(), "after husky's re-run");
    bsi(&b, b.path(), &["hook", "install"])
        .ok()
        .stdout_has("pre-commit: already installed");

    // Committed, the line comes with every checkout; husky sets up the new
    // work tree as `npm install` does there.
    git(&b, b.path(), None, &["add", ".husky"]).ok();
    git(&b, b.path(), None, &["commit", "-q", "-m", "husky and bsi"]).ok();
    let (_place, wt) = b.worktree("feat", Some("feat"));
    doctor_says_off(&b, &wt, "husky is not set up in this work tree");
    husky_setup(&b, &husky, &wt);
    guard_holds(&b, &wt, "husky in a linked work tree");

    // Uninstall takes bsi's lines out and leaves husky's script.
    bsi(&b, b.path(), &["hook", "uninstall"]).ok();
    assert_eq!(b.read(".husky/pre-commit"), HUSKY_LINT);
    assert!(!b.path().join(".husky/prepare-commit-msg").exists());
}

#[test]
fn bsi_then_husky_is_found_shadowed_and_install_moves_into_husky() {
    let Some(husky) = tool("husky") else { return };
    let b = claimed();
    bsi(&b, b.path(), &["hook", "install"]).ok();
    write(b.path(), ".husky/pre-commit", HUSKY_LINT);
    husky_setup(&b, &husky, b.path());
    // git now runs husky's stubs: bsi's hooks in .git/hooks are never run.
    doctor_says_off(
        &b,
        b.path(),
        "husky runs .husky/pre-commit, which does not call bsi",
    );
    bsi(&b, b.path(), &["hook", "install"]).ok();
    guard_holds(&b, b.path(), "bsi, then husky");
    doctor_says_on(&b, b.path());
    // Uninstall also takes away bsi's scripts git no longer reads.
    bsi(&b, b.path(), &["hook", "uninstall"]).ok();
    assert!(!b.path().join(".git/hooks/pre-commit").exists());
    assert_eq!(b.read(".husky/pre-commit"), HUSKY_LINT);
}

#[test]
fn an_older_install_over_husky_is_mended() {
    let Some(husky) = tool("husky") else { return };
    let b = claimed();
    write(b.path(), ".husky/pre-commit", HUSKY_LINT);
    husky_setup(&b, &husky, b.path());
    // What earlier bsi did: its script in the stub's place, the stub chained.
    let stubs = b.path().join(".husky/_");
    bsi::githooks::install(&stubs, "pre-commit", Some(&bin().to_string_lossy())).expect("old");
    bsi(&b, b.path(), &["doctor"])
        .code(9)
        .stdout_has("husky's own .husky/pre-commit no longer runs");
    bsi(&b, b.path(), &["hook", "install"]).ok();
    assert!(!stubs.join("pre-commit.bsi-chained").exists());
    guard_holds(&b, b.path(), "an older install, mended");

    // The same older install after husky's re-run wrote its stub over bsi's
    // script: install no longer refuses, and the leftover goes.
    bsi(&b, b.path(), &["hook", "uninstall"]).ok();
    bsi::githooks::install(&stubs, "pre-commit", Some(&bin().to_string_lossy())).expect("old");
    husky_setup(&b, &husky, b.path());
    assert!(stubs.join("pre-commit.bsi-chained").exists());
    bsi(&b, b.path(), &["hook", "install"]).ok();
    assert!(!stubs.join("pre-commit.bsi-chained").exists());
    guard_holds(
        &b,
        b.path(),
        "an older install overwritten by husky, mended",
    );
}

// ---------------------------------------------------------------- lefthook

const LEFTHOOK_YML: &str = "pre-commit:\n  commands:\n    lint:\n      run: touch linted\n";

#[test]
fn lefthook_then_bsi_runs_bsi_as_a_lefthook_command() {
    let Some(lefthook) = tool("lefthook") else {
        return;
    };
    let b = claimed();
    b.write("lefthook.yml", LEFTHOOK_YML);
    run(&b, b.path(), &lefthook, &["install"], &[]).ok();
    let r = bsi(&b, b.path(), &["hook", "install"]);
    r.ok();
    r.stdout_has("pre-commit: bsi added to lefthook's configuration");
    let yml = b.read("lefthook.yml");
    assert!(yml.contains("      run: bsi hook pre-commit\n"), "{yml}");
    // lefthook's own hook stays in place.
    let hook = fs::read_to_string(b.path().join(".git/hooks/pre-commit")).expect("hook");
    assert!(hook.contains("lefthook"), "{hook}");
    guard_holds(&b, b.path(), "lefthook, then bsi");
    // lefthook installs again (its config changed): bsi is still run.
    run(&b, b.path(), &lefthook, &["install"], &[]).ok();
    guard_holds(&b, b.path(), "after lefthook's re-install");
    doctor_says_on(&b, b.path());
    bsi(&b, b.path(), &["hook", "uninstall"]).ok();
    assert_eq!(b.read("lefthook.yml"), LEFTHOOK_YML);
}

#[test]
fn bsi_then_lefthook_is_found_shadowed_and_install_joins_lefthook() {
    let Some(lefthook) = tool("lefthook") else {
        return;
    };
    let b = claimed();
    bsi(&b, b.path(), &["hook", "install"]).ok();
    b.write("lefthook.yml", LEFTHOOK_YML);
    run(&b, b.path(), &lefthook, &["install"], &[]).ok();
    // lefthook put bsi's hook aside as pre-commit.old and never runs it.
    assert!(b.path().join(".git/hooks/pre-commit.old").exists());
    doctor_says_off(&b, b.path(), "put bsi's aside as .git/hooks/pre-commit.old");
    bsi(&b, b.path(), &["hook", "install"]).ok();
    assert!(!b.path().join(".git/hooks/pre-commit.old").exists());
    guard_holds(&b, b.path(), "bsi, then lefthook");
    doctor_says_on(&b, b.path());
}

// ------------------------------------------------------ pre-commit framework

const PRE_COMMIT_CONFIG: &str = "repos:
  - repo: local
    hooks:
      - id: lint
        name: lint
        entry: touch linted
        language: system
        pass_filenames: false
        always_run: true
      - id: bsi-claims
        name: bsi claims
        entry: bsi hook pre-commit
        language: system
        pass_filenames: false
        always_run: true
        verbose: true
        stages: [pre-commit]
      - id: bsi-session-trailer
        name: bsi session trailer
        entry: bsi hook prepare-commit-msg
        language: system
        always_run: true
        stages: [prepare-commit-msg]
";

fn pre_commit_install(b: &Brain, pre_commit: &Path) {
    run(
        b,
        b.path(),
        pre_commit,
        &[
            "install",
            "--hook-type",
            "pre-commit",
            "--hook-type",
            "prepare-commit-msg",
        ],
        &[],
    )
    .ok();
}

fn with_pre_commit_config() -> Brain {
    let b = claimed();
    b.write(".pre-commit-config.yaml", PRE_COMMIT_CONFIG);
    b.git(&["add", ".pre-commit-config.yaml"]);
    b.git(&["commit", "-q", "-m", "pre-commit config"]);
    b
}

#[test]
fn pre_commit_then_bsi_with_a_local_repo_config() {
    let Some(pre_commit) = tool("pre-commit") else {
        return;
    };
    let b = with_pre_commit_config();
    pre_commit_install(&b, &pre_commit);
    let r = bsi(&b, b.path(), &["hook", "install"]);
    r.ok();
    r.stdout_has("pre-commit: run by the pre-commit framework");
    guard_holds(&b, b.path(), "pre-commit, then bsi");
    doctor_says_on(&b, b.path());
}

#[test]
fn bsi_then_pre_commit_with_a_local_repo_config() {
    let Some(pre_commit) = tool("pre-commit") else {
        return;
    };
    let b = with_pre_commit_config();
    bsi(&b, b.path(), &["hook", "install"]).ok();
    pre_commit_install(&b, &pre_commit);
    guard_holds(&b, b.path(), "bsi, then pre-commit");
    doctor_says_on(&b, b.path());
}

/// A brain whose `.pre-commit-config.yaml` runs only a lint.
fn with_lint_only_pre_commit_config() -> Brain {
    let b = claimed();
    b.write(
        ".pre-commit-config.yaml",
        "repos:\n  - repo: local\n    hooks:\n      - id: lint\n        name: lint\n        entry: touch linted\n        language: system\n        pass_filenames: false\n        always_run: true\n",
    );
    b.git(&["add", ".pre-commit-config.yaml"]);
    b.git(&["commit", "-q", "-m", "pre-commit config"]);
    b
}

#[test]
fn pre_commit_then_bsi_without_bsi_in_its_config_chains_and_says_how_to_join() {
    let Some(pre_commit) = tool("pre-commit") else {
        return;
    };
    let b = with_lint_only_pre_commit_config();
    pre_commit_install(&b, &pre_commit);
    let r = bsi(&b, b.path(), &["hook", "install"]);
    r.ok();
    r.stdout_has("pre-commit: installed; the existing hook is kept and runs first")
        .stdout_has(
            "To run bsi from the framework instead, add bsi's hooks to .pre-commit-config.yaml",
        );
    guard_holds(&b, b.path(), "pre-commit, then bsi, chained");
    doctor_says_on(&b, b.path());
}

#[test]
fn bsi_then_pre_commit_without_bsi_in_its_config_runs_bsi_as_legacy() {
    let Some(pre_commit) = tool("pre-commit") else {
        return;
    };
    let b = with_lint_only_pre_commit_config();
    bsi(&b, b.path(), &["hook", "install"]).ok();
    pre_commit_install(&b, &pre_commit);
    bsi(&b, b.path(), &["doctor"])
        .ok()
        .stdout_has("which the pre-commit framework runs first");
    guard_holds(&b, b.path(), "bsi, then pre-commit, legacy");
}

#[test]
fn the_pre_commit_hooks_manifest_is_valid() {
    let Some(pre_commit) = tool("pre-commit") else {
        return;
    };
    let b = Brain::new();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml");
    let r = run(
        &b,
        b.path(),
        &pre_commit,
        &["validate-manifest", &manifest.to_string_lossy()],
        &[],
    );
    r.ok();
    let text = fs::read_to_string(&manifest).expect("manifest");
    for id in ["id: bsi-claims", "id: bsi-session-trailer"] {
        assert!(text.contains(id), "{id}");
    }
}

// ---------------------------------------------------------------- doctor

#[test]
fn doctor_says_what_is_off_and_how_to_mend_it() {
    let b = claimed();
    let mut t = Transcript::new(&b);
    t.note("A clone where `bsi hook install` never ran.");
    t.bsi(&["doctor"]).code(9);
    // status says nothing of a guard this clone never installed.
    assert!(!b.bsi(&["status"]).stdout.contains("GUARD"));
    t.bsi(&["hook", "install"]).ok();
    t.bsi(&["doctor"]).ok();

    t.note("pre-commit made not executable: git skips it.");
    let hook = b.path().join(".git/hooks/pre-commit");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&hook, fs::Permissions::from_mode(0o644)).expect("chmod");
    }
    t.bsi(&["doctor"]).code(9);
    t.bsi(&["status"]).ok();
    make_executable(&hook);

    // bsi's script calls a binary that is gone, and no bsi is on PATH.
    let text = fs::read_to_string(&hook).expect("hook");
    let word = bsi_core::words::shell_word(&bin().to_string_lossy()).into_owned();
    fs::write(&hook, text.replace(&word, "/nowhere/bsi")).expect("write");
    // (doctor runs no program: an empty PATH is enough for it.)
    b.bsi_env(&["doctor"], &[("PATH", "/nonexistent")])
        .code(9)
        .stdout_has("calls bsi at /nowhere/bsi, which is gone, and no bsi is on PATH");
    fs::write(&hook, text).expect("write");

    t.note("The clone turns the guard off.");
    t.git(&["config", "bsi.hookMode", "off"]).ok();
    t.bsi(&["doctor"]).code(9);
    t.check("managers/doctor_says_what_is_off_and_how_to_mend_it.txt");
}

#[test]
fn a_tracked_hook_in_another_language_is_left_alone_and_said() {
    let b = Brain::new();
    let script = "#!/usr/bin/env python3\nprint('lint')\n";
    b.write(".githooks/pre-commit", script);
    make_executable(&b.path().join(".githooks/pre-commit"));
    b.git(&["add", ".githooks"]);
    b.git(&["commit", "-q", "-m", "team hooks"]);
    b.git(&["config", "core.hooksPath", ".githooks"]);
    let r = b.bsi(&["hook", "install"]);
    r.code(1)
        .stderr_has(".githooks/pre-commit is not a sh script: bsi cannot add its line to it")
        .stderr_has("call `bsi hook pre-commit` from it yourself");
    assert_eq!(b.read(".githooks/pre-commit"), script);
    b.bsi(&["doctor"])
        .code(9)
        .stdout_has(".githooks/pre-commit is not bsi's and does not call bsi");
}
