//! The registry on its own branch: one set of claims for every work tree
//! and branch of a clone, a readable copy in each, the migration of a brain
//! that still tracks BRAIN-INDEX.md, and content branches bsi never moves.

use crate::common::{Brain, snapshot};
use crate::transcript::Transcript;

#[test]
fn a_claim_in_one_worktree_is_seen_and_enforced_in_another_and_back() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&["hook", "install"]).ok();
    let (_place, wt) = b.worktree("wt-b", Some("feature"));
    t.note("A second work tree, $TMP/bsi-test/wt-b, on a new branch feature.");

    // Main work tree claims a folder; the second work tree, on its own
    // branch, sees it, is refused, and cannot commit into it.
    t.bsi(&[
        "open",
        "agents/",
        "--session",
        "s-main",
        "--agent",
        "claude",
    ])
    .ok();
    t.bsi_at(&wt, &["status"], &[]).ok();
    assert!(
        std::fs::read_to_string(wt.join("BRAIN-INDEX.md"))
            .expect("copy in the second work tree")
            .contains("| s-main | agents/ |")
    );
    t.bsi_at(
        &wt,
        &[
            "open",
            "agents/alice.md",
            "--session",
            "s-wt",
            "--agent",
            "codex",
        ],
        &[],
    )
    .code(3);
    std::fs::write(wt.join("agents/alice.md"), "# Alice\n\nfrom the worktree\n").expect("write");
    t.note("agents/alice.md edited in the second work tree.");
    t.git_in(&wt, &["add", "agents/alice.md"], &[]).ok();
    t.git_in(
        &wt,
        &["commit", "-q", "-m", "into agents"],
        &[("BSI_SESSION", "s-wt")],
    )
    .code(1);
    t.git_in(&wt, &["reset", "-q", "--hard"], &[]).ok();

    // And the other way round.
    t.bsi_at(
        &wt,
        &["open", "projets/", "--session", "s-wt", "--agent", "codex"],
        &[],
    )
    .ok();
    t.bsi(&["open", "projets/plan.md", "--session", "s-main2"])
        .code(3);
    b.write("projets/plan.md", "# Plan\n\nrewritten from main\n");
    t.note("projets/plan.md edited in the main work tree.");
    t.git(&["commit", "-q", "-am", "into projets"]).code(1);
    t.git(&["reset", "-q", "--hard"]).ok();
    t.check("branch/a_claim_in_one_worktree_is_seen_and_enforced_in_another_and_back.txt");

    // One registry: one branch, one log, whatever is checked out.
    assert_eq!(b.active().len(), 2);
    assert_eq!(
        b.git_at(&wt, None, &["rev-parse", "brain-index"]).stdout,
        b.git(&["rev-parse", "brain-index"])
    );
    // Neither branch got a bsi commit, and both work trees are clean.
    assert!(!b.git(&["log", "--format=%s", "main"]).contains("bsi:"));
    assert!(!b.git(&["log", "--format=%s", "feature"]).contains("bsi:"));
    assert_eq!(b.status(), "");
    assert_eq!(b.git_at(&wt, None, &["status", "--porcelain"]).stdout, "");
}

#[test]
fn a_detached_head_or_another_branch_reads_the_same_registry() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "agents/", "--session", "s1"]).ok();
    t.git(&["checkout", "-q", "-b", "elsewhere"]).ok();
    t.bsi(&["status"]).ok();
    t.git(&["checkout", "-q", "--detach"]).ok();
    t.bsi(&["open", "agents/bob.md", "--session", "s2"]).code(3);
    t.bsi(&["close", "s1"]).ok();
    t.git(&["checkout", "-q", "main"]).ok();
    t.bsi(&["status"]).ok();
    t.check("branch/a_detached_head_or_another_branch_reads_the_same_registry.txt");
    assert_eq!(b.head_commits(), 1);
}

/// A brain as older bsi left it: the registry tracked on main, with active,
/// stale and history rows, prose and an unknown column.
pub(crate) fn old_layout() -> (Brain, String) {
    let b = Brain::bare_repo();
    let registry = "# BRAIN-INDEX\r\n\r\nOur own prose | kept.\r\n\r\n## Claims actifs\r\n\r\n| Session | Scope | Niveau | Agent | Ouvert le | Expire le | Note | Team |\r\n|---|---|---|---|---|---|---|---|\r\n| s-old | agents/ | dir | alice | 2026-03-14 09:00 +00:00 | 2026-03-14 11:00 +00:00 | tidy | red |\r\n\r\n## Claims stale — contrôle requis\r\n\r\n| Session | Scope | Niveau | Agent | Ouvert le | Expire le | Raison probable |\r\n|---|---|---|---|---|---|---|\r\n| s-stale | notes.md | file | bob | 2026-03-13 09:00 +00:00 | 2026-03-13 11:00 +00:00 | TTL expiré sans fermeture |\r\n\r\n## Historique\r\n\r\n| Session | Scope | Niveau | Agent | Ouvert | Fermé | Statut | Note |\r\n|---|---|---|---|---|---|---|---|\r\n| s-done | README.md | file | carol | 2026-03-12 09:00 +00:00 | 2026-03-12 10:00 +00:00 | completed |  |\r\n\r\nA closing remark.";
    b.write("BRAIN-INDEX.md", registry);
    b.write("agents/alice.md", "# Alice\n");
    b.write("notes.md", "# Notes\n");
    b.write("README.md", "# Brain\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-q", "-m", "the brain, with its registry tracked"]);
    (b, registry.to_string())
}

/// `text` with the short id of the migration's commit, HEAD of `b`, as
/// `<migration commit>`: its parent is a commit git made at the wall clock,
/// so the id differs from run to run.
#[track_caller]
fn without_migration_id(b: &Brain, text: &str) -> String {
    let id = format!("({})", b.git(&["rev-parse", "--short=8", "HEAD"]).trim());
    assert!(
        text.contains(&id),
        "the migration's commit {id} is not named:\n{text}"
    );
    text.replace(&id, "(<migration commit>)")
}

#[test]
fn an_old_tracked_registry_is_refused_until_migrated_then_moved_byte_for_byte() {
    let (b, registry) = old_layout();
    let mut t = Transcript::new(&b);
    t.note("BRAIN-INDEX.md is tracked on main, as older bsi left it.");
    // Until migrated, writes are refused with the way out.
    for args in [
        &["open", "README.md", "--session", "s1"][..],
        &["status"],
        &["init"],
    ] {
        t.bsi(args).code(5);
    }
    assert_eq!(b.head_commits(), 1);
    // A staged change of the user's survives the migration, staged.
    b.write("README.md", "# Brain\n\nstaged edit\n");
    b.git(&["add", "README.md"]);
    t.note("An edit of README.md is staged.");
    let head = b.git(&["rev-parse", "HEAD"]);
    t.bsi(&["migrate"]).ok();
    // Every byte on the registry branch.
    assert_eq!(b.registry(), registry);
    // One commit on main, its parent the old HEAD, removing only the file.
    assert_eq!(b.git(&["rev-parse", "HEAD~1"]), head);
    assert_eq!(
        b.git(&["show", "--name-status", "--format=", "HEAD"])
            .trim(),
        "D\tBRAIN-INDEX.md"
    );
    assert_eq!(
        b.git(&["diff", "--cached", "--name-only"]).trim(),
        "README.md"
    );
    // The file stays as the readable copy, ignored by git.
    assert_eq!(b.registry_copy(), registry);
    assert_eq!(b.status(), "M  README.md\n");
    // The claims are claims.
    t.bsi(&["open", "agents/alice.md", "--session", "s1"])
        .code(3);
    t.bsi(&["open", "README.md", "--session", "s1"]).ok();
    assert_eq!(b.active().len(), 2);
    // Nothing of bsi is committed on the content branch after that.
    assert_eq!(b.head_commits(), 2);
    t.bsi(&["migrate"]).code(1);
    snapshot(
        "branch/an_old_tracked_registry_is_refused_until_migrated_then_moved_byte_for_byte.txt",
        &without_migration_id(&b, &t.text()),
    );
}

#[test]
fn migration_publishes_and_the_other_clone_follows_with_a_pull() {
    let (b, registry) = old_layout();
    let bare = b.publish_to_bare();
    let other = Brain::clone_of(bare.path(), "bob");
    let o = other.path();
    let mut t = Transcript::new(&b);
    t.note("BRAIN-INDEX.md is tracked on main, pushed; bob cloned it into $TMP/bsi-clone.");
    t.bsi(&["migrate"]).ok();
    t.git(&["push", "-q", "origin", "main"]).ok();
    // The other clone reads the branch at once, even before it pulls:
    // it does not write the copy over the file its branch still tracks.
    t.bsi_at(o, &["status"], &[]).ok();
    assert_eq!(other.status(), "");
    t.git_in(o, &["pull", "-q"], &[]).ok();
    t.bsi_at(o, &["status"], &[]).ok();
    assert_eq!(other.registry_copy(), registry);
    assert_eq!(other.status(), "");
    t.bsi_at(o, &["open", "notes.md", "--session", "s2"], &[])
        .code(3);
    snapshot(
        "branch/migration_publishes_and_the_other_clone_follows_with_a_pull.txt",
        &without_migration_id(&b, &t.text()),
    );
}
