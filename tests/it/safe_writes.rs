//! One truth in every layout: the registry branch checked out in a work
//! tree, a file of the user's where the copy goes, a migration that cannot
//! finish — bsi refuses before it writes, and loses nothing.

use std::fs;

use crate::branch::old_layout;
use crate::common::{Brain, REGISTRY_BRANCH, bin};

/// The registry branch checked out in a linked work tree (the old hand
/// repair): bsi must not move it under that work tree, where a later
/// `git commit -a` would revert every claim written meanwhile.
#[test]
fn a_write_is_refused_while_the_registry_branch_is_checked_out_in_a_work_tree() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    let before = b.git(&["rev-parse", REGISTRY_BRANCH]);
    let (_place, fix) = b.worktree(REGISTRY_BRANCH, None);
    let user = b.user_state();
    let r = b.bsi(&["open", "README.md", "--session", "s2"]);
    r.code(1)
        .stderr_has("is checked out in the work tree")
        .stderr_has(&fix.display().to_string())
        .stderr_has("bsi repair");
    assert_eq!(b.git(&["rev-parse", REGISTRY_BRANCH]), before);
    assert_eq!(b.active().len(), 1);
    assert_eq!(b.user_state(), user);
    // The work tree there is still what it checked out: nothing to revert.
    assert_eq!(b.git_at(&fix, None, &["status", "--porcelain"]).stdout, "");
    // Every write is refused the same way, `sync` and the watchdog too.
    b.bsi(&["close", "s1"]).code(1);
    b.bsi(&["watchdog"]).code(1);
    assert_eq!(b.git(&["rev-parse", REGISTRY_BRANCH]), before);
    // Reads still work.
    b.bsi(&["status"]).ok();
    // Once the work tree leaves the branch, writes go on.
    b.git_at(&fix, None, &["switch", "-q", "--detach"]).ok();
    b.bsi(&["open", "README.md", "--session", "s2"]).ok();
    assert_eq!(b.active().len(), 2);
}

const BROKEN_ROW: &str = "| s-bad | agents/bob.md | file |\n";

/// A registry broken by hand on its branch, with a claim in it.
fn broken() -> (Brain, String) {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    let good = b.registry();
    let bad = good.replacen(
        "|------|\n| s1 |",
        &format!("|------|\n{BROKEN_ROW}| s1 |"),
        1,
    );
    assert_ne!(bad, good, "the row goes in the active table");
    b.commit_registry(&bad, "a hand edit gone wrong");
    b.bsi(&["status"]).code(5).stderr_has("bsi repair");
    (b, bad)
}

#[test]
fn repair_from_a_file_publishes_the_fixed_registry_and_keeps_every_row() {
    let (b, bad) = broken();
    let bare = b.publish_to_bare();
    let commits = b.commits();
    let user = b.user_state();
    let scratch = tempfile::tempdir().expect("tempdir");
    // An edit that is still invalid is refused with its line, nothing written.
    let still_bad = scratch.path().join("still-bad.md");
    fs::write(&still_bad, &bad).expect("write");
    b.bsi(&["repair", "--from", still_bad.to_str().expect("utf-8")])
        .code(5)
        .stderr_has("line ");
    assert_eq!(b.commits(), commits);
    // The fixed text lands, on the remote too.
    let fixed = scratch.path().join("fixed.md");
    fs::write(&fixed, bad.replace(BROKEN_ROW, "")).expect("write");
    b.bsi(&["repair", "--from", fixed.to_str().expect("utf-8")])
        .ok()
        .stdout_has("Repaired");
    assert_eq!(b.registry(), bad.replace(BROKEN_ROW, ""));
    assert_eq!(b.commits(), commits + 1);
    assert!(b.last_subject().starts_with("bsi: repair"));
    let remote = b.git(&["ls-remote", "origin", REGISTRY_BRANCH]);
    assert!(remote.starts_with(b.git(&["rev-parse", REGISTRY_BRANCH]).trim()));
    assert_eq!(b.active().len(), 1, "the claim s1 is kept");
    b.bsi(&["status"]).ok();
    assert_eq!(b.user_state(), user);
    drop(bare);
}

#[test]
fn repair_in_an_editor_is_refused_when_the_registry_moved_meanwhile() {
    let (b, bad) = broken();
    // The registry is fixed once by a script, as an editor would.
    let scratch = tempfile::tempdir().expect("tempdir");
    let fixed = scratch.path().join("fixed.md");
    fs::write(&fixed, bad.replace(BROKEN_ROW, "")).expect("write");
    let editor = scratch.path().join("editor.sh");
    fs::write(
        &editor,
        format!("#!/bin/sh\ncp '{}' \"$1\"\n", fixed.display()),
    )
    .expect("write");
    // While the editor is open, someone else fixes the registry and claims.
    let racing = scratch.path().join("racing.sh");
    fs::write(
        &racing,
        format!(
            "#!/bin/sh\ncp '{fixed}' \"$1\"\n'{bsi}' repair --from '{fixed}' >/dev/null && '{bsi}' open README.md --session s2 >/dev/null\n",
            fixed = fixed.display(),
            bsi = bin().display()
        ),
    )
    .expect("write");
    for f in [&editor, &racing] {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(f, fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    b.bsi_env(&["repair"], &[("EDITOR", racing.to_str().expect("utf-8"))])
        .code(1)
        .stderr_has("moved since");
    // The claim made meanwhile is there: the stale edit did not revert it.
    assert_eq!(b.active().len(), 2);
    let commits = b.commits();
    // Nothing to repair any more: an edit that changes nothing writes nothing.
    b.bsi_env(&["repair"], &[("VISUAL", "true")])
        .ok()
        .stdout_has("Nothing changed");
    assert_eq!(b.commits(), commits);
    // An editor's edit lands when nobody wrote meanwhile (here it drops
    // the claim s2: what the person asked).
    b.bsi_env(&["repair"], &[("VISUAL", editor.to_str().expect("utf-8"))])
        .ok();
    assert_eq!(b.commits(), commits + 1);
    assert_eq!(b.active().len(), 1);
}

/// A file of the user's where the copy of the registry goes is moved aside,
/// byte for byte, and the user is told where.
#[test]
fn an_untracked_file_of_the_users_at_the_copy_path_is_moved_aside_not_overwritten() {
    let b = Brain::bare_repo();
    b.write("README.md", "# Brain\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-q", "-m", "base"]);
    let mine = "# My own index\n\nnotes I keep here\n";
    b.write("BRAIN-INDEX.md", mine);
    b.bsi(&["init"]).ok().stderr_has("BRAIN-INDEX.md.orig");
    assert_eq!(b.read("BRAIN-INDEX.md.orig"), mine);
    assert_eq!(b.registry_copy(), b.registry());
    // Later commands too: the copy is bsi's, a file put there is the user's.
    let again = "something else of mine\n";
    b.write("BRAIN-INDEX.md", again);
    b.bsi(&["status"]).ok().stderr_has("BRAIN-INDEX.md.orig-2");
    assert_eq!(b.read("BRAIN-INDEX.md.orig-2"), again);
    assert_eq!(b.read("BRAIN-INDEX.md.orig"), mine);
    assert_eq!(b.registry_copy(), b.registry());
    // The copy itself, even edited, is bsi's to rewrite: no backup of it.
    let copy = b.read("BRAIN-INDEX.md");
    b.write("BRAIN-INDEX.md", &format!("{copy}an edit of the copy\n"));
    b.bsi(&["status"]).ok();
    assert!(!b.path().join("BRAIN-INDEX.md.orig-3").exists());
    assert_eq!(b.read("BRAIN-INDEX.md"), copy);
}

/// A migration that cannot finish (a detached HEAD: no branch to untrack
/// the file on) writes and pushes nothing.
#[test]
fn migrate_on_a_detached_head_writes_and_pushes_nothing() {
    let (b, _) = old_layout();
    let bare = b.publish_to_bare();
    b.git(&["checkout", "-q", "--detach"]);
    let user = b.user_state();
    let r = b.bsi(&["migrate"]);
    r.code(1);
    assert_eq!(b.git(&["ls-remote", "origin", REGISTRY_BRANCH]), "");
    assert_eq!(
        b.git_run(&["rev-parse", "--verify", "-q", REGISTRY_BRANCH])
            .code,
        1,
        "no local registry branch"
    );
    r.stderr_has("detached HEAD").stderr_has("git switch");
    assert_eq!(b.user_state(), user);
    // On a branch, it goes through.
    b.git(&["checkout", "-q", "main"]);
    b.bsi(&["migrate"]).ok();
    assert_ne!(b.git(&["ls-remote", "origin", REGISTRY_BRANCH]), "");
    drop(bare);
}
