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
