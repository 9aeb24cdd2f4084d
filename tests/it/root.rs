//! `BRAIN-ROOT`, the brain root the registry branch records in its first
//! commit: kept as first recorded, checked (a directory of the work tree,
//! not git's own), a later change refused as a collision in every clone,
//! and mended by `bsi repair` — which says when `bsi sync` comes first.
//! Real bare remotes and clones.

use std::path::Path;

use crate::common::{Brain, REGISTRY_BRANCH};

/// A commit made by hand (git's plumbing, as a person would) on top of
/// `parent` (none: a first commit) with the registry text of `from` and
/// `BRAIN-ROOT` holding `root`; returns its id.
fn hand_commit(b: &Brain, from: &str, parent: Option<&str>, root: &str) -> String {
    let listing = b.git(&["ls-tree", from]);
    let blob = b.git_stdin(&["hash-object", "-w", "--stdin"], root);
    let mut tree: Vec<String> = listing
        .lines()
        .filter(|l| !l.ends_with("\tBRAIN-ROOT"))
        .map(str::to_string)
        .collect();
    tree.push(format!("100644 blob {}\tBRAIN-ROOT", blob.trim()));
    let tree = b.git_stdin(&["mktree"], &format!("{}\n", tree.join("\n")));
    let mut args = vec!["commit-tree", tree.trim(), "-m", "BRAIN-ROOT by hand"];
    if let Some(p) = parent {
        args.extend(["-p", p]);
    }
    b.git(&args).trim().to_string()
}

/// A brain at the work tree root, published to a bare remote, with
/// `projets/plan.md#Goals` held by session s1.
fn published() -> (Brain, tempfile::TempDir) {
    let a = Brain::new();
    let bare = a.publish_to_bare();
    a.bsi(&[
        "open",
        "projets/plan.md#Goals",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    (a, bare)
}

/// A hand commit on the remote's registry branch that records `root`.
fn change_root_on_remote(a: &Brain, root: &str) -> String {
    let tip = format!("origin/{REGISTRY_BRANCH}");
    a.git(&["fetch", "-q", "origin"]);
    let parent = a.git(&["rev-parse", &tip]);
    let commit = hand_commit(a, &tip, Some(parent.trim()), root);
    a.git(&[
        "push",
        "-q",
        "origin",
        &format!("{commit}:refs/heads/{REGISTRY_BRANCH}"),
    ]);
    commit
}

fn no_panic(r: &crate::common::Run) {
    assert_ne!(r.code, 101, "panicked: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

/// The case: a hand commit on the remote moves the root to
/// `projets`. A fresh clone used to follow it and grant `plan.md#Goals`
/// (the held `projets/plan.md#Goals` under another name); an old clone
/// kept the old root. Both now refuse as a collision that names both roots,
/// the commit and `bsi repair`; repair puts the first record back, and the
/// same section is then refused as held, from either clone.
#[test]
fn a_root_changed_on_the_remote_is_a_collision_in_old_and_fresh_clones_until_repaired() {
    let (a, bare) = published();
    let changed = change_root_on_remote(&a, "projets\n");
    let fresh = Brain::clone_of(bare.path(), "bob");
    let before = fresh.git(&["rev-parse", &format!("origin/{REGISTRY_BRANCH}")]);
    let r = fresh.bsi(&["open", "plan.md#Goals", "--session", "s2", "--agent", "bob"]);
    no_panic(&r);
    r.code(3)
        .stderr_has("the brain root changed: BRAIN-ROOT on origin/brain-index says `projets/`")
        .stderr_has(&format!("since commit {}", &changed[..8]))
        .stderr_has("first recorded the root of the work tree")
        .stderr_has("to change nothing else): `bsi repair`");
    assert_eq!(
        fresh.git(&["rev-parse", &format!("origin/{REGISTRY_BRANCH}")]),
        before,
        "nothing was published"
    );
    let json = fresh.bsi(&["status", "--json"]);
    json.code(3);
    assert_eq!(json.json()["error"], "root-changed");
    // The old clone, once it fetched, refuses the same way.
    a.git(&["fetch", "-q", "origin"]);
    a.bsi(&["status"])
        .code(3)
        .stderr_has("origin/brain-index says `projets/`");
    // Repair, in the fresh clone: the registry saved as it is, the root put
    // back in one published commit.
    let r = fresh.bsi_env(&["repair"], &[("EDITOR", "true")]);
    r.ok()
        .stdout_has("BRAIN-ROOT says the work tree root again")
        .stdout_has("committed and published");
    let files = fresh.git(&[
        "ls-tree",
        "--name-only",
        &format!("origin/{REGISTRY_BRANCH}"),
    ]);
    assert!(!files.contains("BRAIN-ROOT"), "{files}");
    // One file, one name again: the section is held by s1.
    fresh
        .bsi(&[
            "open",
            "projets/plan.md#Goals",
            "--session",
            "s2",
            "--agent",
            "bob",
        ])
        .code(3)
        .stderr_has("s1 holds projets/plan.md#Goals");
    // The old clone still has the changed copy as last fetched: its repair
    // finds the remote mended and writes nothing.
    a.bsi(&["status"]).code(3);
    let commits = a.commits();
    a.bsi_env(&["repair"], &[("EDITOR", "true")])
        .ok()
        .stdout_has("Nothing changed");
    assert_eq!(a.commits(), commits);
    a.bsi(&["status"]).ok().stdout_has("projets/plan.md#Goals");
    assert_eq!(a.active().len(), 1, "{:?}", a.active());
}

/// A brain in `brain/`, its root changed by hand to the work tree root
/// (the file removed): refused too, and the root kept is `brain`.
#[test]
fn a_root_record_removed_by_hand_is_refused_and_repaired_back() {
    let b = Brain::bare_repo();
    b.write("brain/projets/plan.md", "# Plan\n\n## Goals\n\ngoal text\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-q", "-m", "base"]);
    b.bsi_env(&["init"], &[("BSI_REGISTRY", "brain/BRAIN-INDEX.md")])
        .ok();
    // By hand: BRAIN-ROOT gone from the registry branch.
    let blob = b.git(&["rev-parse", &format!("{REGISTRY_BRANCH}:BRAIN-INDEX.md")]);
    let tree = b.git_stdin(
        &["mktree"],
        &format!("100644 blob {}\tBRAIN-INDEX.md\n", blob.trim()),
    );
    let parent = b.git(&["rev-parse", REGISTRY_BRANCH]);
    let commit = b.git(&[
        "commit-tree",
        tree.trim(),
        "-p",
        parent.trim(),
        "-m",
        "by hand",
    ]);
    b.git(&[
        "update-ref",
        &format!("refs/heads/{REGISTRY_BRANCH}"),
        commit.trim(),
    ]);
    b.bsi(&["status"])
        .code(3)
        .stderr_has("BRAIN-ROOT on brain-index says the root of the work tree")
        .stderr_has("first recorded `brain/`");
    b.bsi_env(&["repair"], &[("EDITOR", "true")])
        .ok()
        .stdout_has("BRAIN-ROOT says `brain` again");
    assert_eq!(
        b.git(&["show", &format!("{REGISTRY_BRANCH}:BRAIN-ROOT")])
            .trim(),
        "brain"
    );
    b.bsi_in(
        "brain",
        &["open", "projets/plan.md", "--session", "s1", "--agent", "a"],
    )
    .ok();
    b.bsi(&[
        "open",
        "brain/projets/plan.md",
        "--session",
        "s2",
        "--agent",
        "b",
    ])
    .code(3);
}

/// A registry branch whose first commit records `..`: every command of a
/// fresh clone used to stop on it with "fix that line with `bsi repair`",
/// and repair stopped on the same error. Repair now mends it: the root is
/// where the clone finds the registry (the work tree root).
#[test]
fn a_root_of_dotdot_in_the_first_commit_is_mended_by_repair() {
    let a = Brain::new();
    let bare = a.publish_to_bare();
    let first = hand_commit(&a, REGISTRY_BRANCH, None, "..\n");
    a.git(&[
        "push",
        "-q",
        "-f",
        "origin",
        &format!("{first}:refs/heads/{REGISTRY_BRANCH}"),
    ]);
    let fresh = Brain::clone_of(bare.path(), "bob");
    let r = fresh.bsi(&["status"]);
    no_panic(&r);
    r.code(5)
        .stderr_has("`..` is not a directory of the work tree")
        .stderr_has("bsi repair");
    let r = fresh.bsi_env(&["repair"], &[("EDITOR", "true")]);
    r.ok()
        .stdout_has("BRAIN-ROOT says the work tree root again");
    fresh.bsi(&["status"]).ok();
    fresh
        .bsi(&[
            "open",
            "projets/plan.md",
            "--session",
            "s1",
            "--agent",
            "bob",
        ])
        .ok();
}

/// `.git` is never a brain root: not by `BSI_REGISTRY` at init, not as a
/// record of the branch (refused as a record that is not a directory of
/// the work tree, and mended by repair).
#[test]
fn git_s_own_directory_is_no_brain_root() {
    let b = Brain::bare_repo();
    b.write("plan.md", "# Plan\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-q", "-m", "base"]);
    let r = b.bsi_env(&["init"], &[("BSI_REGISTRY", ".git/BRAIN-INDEX.md")]);
    r.code(2).stderr_has("in git's own directory");
    assert!(!Path::new(&b.path().join(".git/BRAIN-INDEX.md")).exists());
    assert_eq!(
        b.git_run(&["rev-parse", "--verify", "-q", REGISTRY_BRANCH])
            .code,
        1,
        "no registry branch made"
    );
    // A first record of `.git`, made by hand.
    b.bsi(&["init"]).ok();
    let first = hand_commit(&b, REGISTRY_BRANCH, None, ".git\n");
    b.git(&[
        "update-ref",
        &format!("refs/heads/{REGISTRY_BRANCH}"),
        &first,
    ]);
    b.bsi(&["status"])
        .code(5)
        .stderr_has("`.git` is in git's own directory");
    b.bsi_env(&["repair"], &[("EDITOR", "true")]).ok();
    b.bsi(&["status"]).ok();
}

/// An offline claim waits on the local branch while another clone
/// publishes: the two diverged. `bsi repair` used to say "run again"
/// forever; it now says `bsi sync` must come first, and after it repairs.
#[test]
fn repair_says_when_sync_must_come_first() {
    let (a, bare) = published();
    let c = Brain::clone_of(bare.path(), "carol");
    let away = bare.path().with_extension("away");
    std::fs::rename(bare.path(), &away).expect("move the remote away");
    a.bsi(&[
        "open",
        "agents/alice.md",
        "--session",
        "s3",
        "--agent",
        "alice",
    ])
    .code(7);
    std::fs::rename(&away, bare.path()).expect("bring the remote back");
    c.bsi(&[
        "open",
        "agents/bob.md",
        "--session",
        "s4",
        "--agent",
        "carol",
    ])
    .ok();
    let r = a.bsi_env(&["repair"], &[("EDITOR", "true")]);
    r.code(1)
        .stderr_has("holds changes origin/brain-index has not received")
        .stderr_has("first publish the local changes merged with the remote's: `bsi sync`; then repair again: `bsi repair`");
    a.bsi(&["sync"]).ok();
    a.bsi_env(&["repair"], &[("EDITOR", "true")])
        .ok()
        .stdout_has("Nothing changed");
}
