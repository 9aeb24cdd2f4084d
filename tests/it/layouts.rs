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
