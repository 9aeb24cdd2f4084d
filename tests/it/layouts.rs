//! Layouts people really have — several work trees of one clone with
//! different headings, names that do not exist yet, generated ids — and the
//! promise that holds in each: one scope is never granted twice.

use std::fs;

use crate::common::Brain;

const PLAN_Q1_TOP: &str = "# Plan\n\nintro\n\n## Goals\n\ngoal text\n\n## Q1\n\nq1 text\n\n### Q2\n\nq2 text\n\n## Risks\n\nrisk text\n";

/// Work tree 1 on `main` nests `Q1` under `Goals`; work tree 2 on `feat`
/// made `Q1` a heading of its own. A section asked for from `feat` is
/// judged against the heading tree of every work tree, so `Q1` is refused
/// while `Goals` is held.
#[test]
fn a_section_nested_in_another_work_tree_is_refused() {
    let b = Brain::new();
    let (_place, wt) = b.worktree("feat", Some("feat"));
    fs::write(wt.join("projets/plan.md"), PLAN_Q1_TOP).expect("write");
    b.git_at(&wt, None, &["commit", "-qam", "Q1 on its own"])
        .ok();
    b.bsi(&[
        "open",
        "projets/plan.md#Goals",
        "--session",
        "s1",
        "--agent",
        "a",
    ])
    .ok();
    let before = b.registry();
    let r = b.bsi_at(
        &wt,
        None,
        &[
            "open",
            "projets/plan.md#Q1",
            "--session",
            "s2",
            "--agent",
            "b",
        ],
    );
    r.code(3);
    assert!(
        r.stderr
            .contains("projets/plan.md#Q1 conflicts: s1 holds projets/plan.md#Goals"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("on main, `Q1` is under `Goals`, though not in this work tree"),
        "{}",
        r.stderr
    );
    assert_eq!(b.registry(), before, "nothing was written");
    // Nothing to report as a collision afterwards, from either work tree.
    let status = b.bsi(&["status"]);
    status.ok();
    assert!(!status.stdout.contains("COLLISION"), "{}", status.stdout);
    // The user's work trees are untouched.
    let porcelain = b.git_at(&wt, None, &["status", "--porcelain"]);
    assert_eq!(porcelain.stdout, "");
    assert_eq!(b.git(&["status", "--porcelain"]), "");
}

/// In one work tree: move the heading out, ask, check the file out again.
/// The committed version still nests `Q1` under `Goals`: refused.
#[test]
fn a_heading_moved_only_in_the_work_tree_does_not_free_its_section() {
    let b = Brain::new();
    b.bsi(&[
        "open",
        "projets/plan.md#Goals",
        "--session",
        "s1",
        "--agent",
        "a",
    ])
    .ok();
    b.write("projets/plan.md", PLAN_Q1_TOP);
    let r = b.bsi(&[
        "open",
        "projets/plan.md#Q1",
        "--session",
        "s2",
        "--agent",
        "b",
    ]);
    r.code(3);
    assert!(
        r.stderr
            .contains("`Q1` is under `Goals`, though not in this work tree"),
        "{}",
        r.stderr
    );
    b.git(&["checkout", "--", "projets/plan.md"]);
    let again = b.bsi(&[
        "open",
        "projets/plan.md#Q1",
        "--session",
        "s2",
        "--agent",
        "b",
    ]);
    again.code(3);
    // A sibling that nests nowhere stays free.
    b.bsi(&[
        "open",
        "projets/plan.md#Risks",
        "--session",
        "s2",
        "--agent",
        "b",
    ])
    .ok();
}

/// `projets/new` exists neither as a file nor as a folder: a claim on it
/// covers what will be created under it, for other claims and for the
/// commit guard.
#[test]
fn a_claim_on_a_name_not_yet_there_covers_what_is_created_under_it() {
    let b = crate::hooks::hooked();
    b.bsi(&["open", "projets/new", "--session", "s1", "--agent", "a"])
        .ok();
    let before = b.registry();
    let r = b.bsi(&[
        "open",
        "projets/new/x.md",
        "--session",
        "s2",
        "--agent",
        "b",
    ]);
    r.code(3);
    assert!(
        r.stderr
            .contains("projets/new/x.md conflicts: s1 holds projets/new [file]"),
        "{}",
        r.stderr
    );
    assert_eq!(b.registry(), before);
    let deeper = b.bsi(&[
        "open",
        "projets/new/sub/",
        "--session",
        "s2",
        "--agent",
        "b",
    ]);
    deeper.code(3);
    // A commit creating a file under the name, by another session: refused.
    b.write("projets/new/z.md", "# Z\n");
    b.git(&["add", "projets/new/z.md"]);
    let head = b.git(&["rev-parse", "HEAD"]);
    let c = crate::hooks::commit_as(&b, Some("s2"), "z");
    c.code(1);
    assert!(
        c.stderr
            .contains("projets/new/z.md is inside an active claim of session s1"),
        "{}",
        c.stderr
    );
    assert_eq!(b.git(&["rev-parse", "HEAD"]), head, "nothing committed");
    // The holder commits it.
    crate::hooks::commit_as(&b, Some("s1"), "z").ok();
    // A sibling name stays free.
    b.bsi(&[
        "open",
        "projets/newer.md",
        "--session",
        "s2",
        "--agent",
        "b",
    ])
    .ok();
}

/// A generated session id the registry already knows (active, stale or in
/// the history) is drawn again: two sessions never share one by chance.
/// The same seed in the same minute draws the same id, which makes the
/// collision certain here.
#[test]
fn a_generated_id_already_in_the_registry_is_drawn_again() {
    let b = Brain::new();
    let seed = [("BSI_RANDOM_SEED", "7")];
    let first = b.bsi_env(&["open", "agents/alice.md", "--agent", "a"], &seed);
    first.ok();
    let id = first
        .stdout
        .split_whitespace()
        .find(|w| w.starts_with("BSI_SESSION="))
        .and_then(|w| w.strip_prefix("BSI_SESSION="))
        .expect("the new id is named")
        .to_string();
    // Still active: the same draw must not join that session.
    let second = b.bsi_env(&["open", "agents/bob.md", "--agent", "b"], &seed);
    second.ok();
    assert!(
        !second.stdout.contains(&format!("BSI_SESSION={id} ")),
        "{}",
        second.stdout
    );
    let reg = b.registry();
    let holders: Vec<&str> = reg.lines().filter(|l| l.contains("agents/")).collect();
    assert_eq!(holders.len(), 2, "{reg}");
    assert!(
        holders.iter().filter(|l| l.contains(&id)).count() == 1,
        "{reg}"
    );
    // Closed: in the history only, still not handed out again.
    b.bsi(&["close", &id, "--agent", "a"]).ok();
    let third = b.bsi_env(&["open", "notes/", "--agent", "c"], &seed);
    third.ok();
    assert!(
        !third.stdout.contains(&format!("BSI_SESSION={id} ")),
        "{}",
        third.stdout
    );
}

/// A brain in `brain/` of its repository, made with `BSI_REGISTRY`, with
/// the git hooks installed by a command run without it.
fn brain_in_a_subdirectory() -> Brain {
    let b = Brain::bare_repo();
    b.write("README.md", "# Repository\n");
    b.write("brain/projets/plan.md", "# Plan\n\n## Goals\n\ngoal text\n");
    b.write("brain/agents/alice.md", "# Alice\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-q", "-m", "base"]);
    b.bsi_env(&["init"], &[("BSI_REGISTRY", "brain/BRAIN-INDEX.md")])
        .ok();
    b.bsi(&["hook", "install"]).ok();
    b
}

/// Made with `BSI_REGISTRY=brain/BRAIN-INDEX.md`, the brain keeps `brain/`
/// as its root for the commands run without it: the plan claimed from
/// `brain/` as `projets/plan.md` and asked for from the work tree root as
/// `brain/projets/plan.md` is one file, held once.
#[test]
fn a_brain_in_a_subdirectory_has_one_root_without_bsi_registry() {
    let b = brain_in_a_subdirectory();
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
    .code(3)
    .stderr_has("projets/plan.md");
    let active = b.active();
    assert_eq!(active.len(), 1, "{active:?}");
    assert!(
        active[0].contains("| s1 | projets/plan.md | file |"),
        "{active:?}"
    );
    // Every command finds the copy of the registry in `brain/`.
    b.bsi(&["status"]).ok().stdout_has("projets/plan.md");
    assert!(!b.path().join("BRAIN-INDEX.md").exists());
}

/// The installed pre-commit hook, run without `BSI_REGISTRY`, judges a
/// commit against the claims of the brain in `brain/`, and what it proposes
/// to open names the file as the brain does.
#[test]
fn the_hook_of_a_brain_in_a_subdirectory_refuses_a_commit_inside_a_claim() {
    let b = brain_in_a_subdirectory();
    b.bsi_in(
        "brain",
        &["open", "projets/plan.md", "--session", "s1", "--agent", "a"],
    )
    .ok();
    b.bsi_in(
        "brain",
        &["open", "agents/", "--session", "s2", "--agent", "b"],
    )
    .ok();
    b.write(
        "brain/projets/plan.md",
        "# Plan\n\n## Goals\n\nchanged by s2\n",
    );
    b.git(&["add", "-A"]);
    let before = b.commits();
    let r = b.git_at(
        b.path(),
        Some("s2"),
        &["commit", "-q", "-m", "edit the plan"],
    );
    r.code(1).stderr_has("projets/plan.md");
    assert!(
        !r.stderr.contains("brain/projets/plan.md"),
        "the hook names the file from the work tree root:\n{}",
        r.stderr
    );
    assert_eq!(b.commits(), before, "nothing committed");

    // Outside every claim, in strict mode: the hook proposes the claim,
    // named from the brain root.
    b.git(&["reset", "-q", "--hard"]);
    b.git(&["config", "bsi.hookMode", "strict"]);
    b.write("brain/notes.md", "# Notes\n");
    b.git(&["add", "-A"]);
    let r = b.git_at(b.path(), Some("s2"), &["commit", "-q", "-m", "notes"]);
    r.code(1).stderr_has("bsi open notes.md");
    assert!(!r.stderr.contains("brain/notes.md"), "{}", r.stderr);
}

/// A `BSI_REGISTRY` (or `--registry`) that puts the root elsewhere than the
/// registry branch records is refused, with the way out; the recorded one
/// is accepted.
#[test]
fn a_bsi_registry_that_contradicts_the_recorded_root_is_refused() {
    let b = brain_in_a_subdirectory();
    let r = b.bsi_env(&["status"], &[("BSI_REGISTRY", "BRAIN-INDEX.md")]);
    r.code(2)
        .stderr_has("the registry branch `brain-index` records it at `brain/`")
        .stderr_has("`unset BSI_REGISTRY`")
        .stderr_has("`export BSI_REGISTRY=brain/BRAIN-INDEX.md`");
    b.bsi(&["--registry", "brain/projets/BRAIN-INDEX.md", "status"])
        .code(2)
        .stderr_has("puts the brain root at `brain/projets/`");
    b.bsi_env(&["status"], &[("BSI_REGISTRY", "brain/BRAIN-INDEX.md")])
        .ok();
    let r = b.bsi_env(
        &["--json", "open", "agents/", "--session", "s1"],
        &[("BSI_REGISTRY", "BRAIN-INDEX.md")],
    );
    r.code(2);
    assert_eq!(r.json()["error"], "usage", "{}", r.stdout);
    assert!(b.active().is_empty());
}

/// A second clone of a brain in a subdirectory, through a bare remote,
/// finds the same root with nothing set.
#[test]
fn a_second_clone_sees_the_same_brain_root() {
    let b = brain_in_a_subdirectory();
    let bare = b.publish_to_bare();
    let c = Brain::clone_of(bare.path(), "bob");
    c.bsi_in(
        "brain",
        &[
            "open",
            "projets/plan.md",
            "--session",
            "s1",
            "--agent",
            "bob",
        ],
    )
    .ok();
    b.bsi(&["sync"]).ok();
    b.bsi(&[
        "open",
        "brain/projets/plan.md",
        "--session",
        "s2",
        "--agent",
        "a",
    ])
    .code(3);
    assert!(c.path().join("brain/BRAIN-INDEX.md").is_file());
    assert!(!c.path().join("BRAIN-INDEX.md").exists());
    c.bsi(&["status"]).ok().stdout_has("projets/plan.md");
}
