//! A commit is judged once, by what it is: a session's own commit replayed
//! unchanged — `git pull --rebase` after a rejected push, a squash with the
//! same result, a reset back to it — is not judged again against the claims
//! made since; a trailer naming a session that did not hold what the commit
//! changes is no pass. And a session's audit covers its whole life: `close`
//! judges each commit against what the session held when it was made.
//! Real git, real hooks installed by `bsi hook install`, a real bare remote.

use std::process::Command;

use crate::common::{Brain, Machines, Run, clean_env};
use crate::hooks::head;

const PLAN: &str = "projets/plan.md";

/// Moves the clock of bsi (`BSI_NOW`) to 09:MM on the day of the tests:
/// what the registry rows say of opening and closing.
fn at(b: &mut Brain, minute: u32) {
    b.now = format!("2026-03-14T09:{minute:02}:00Z");
}

/// Runs git in `b` as session `session` (or with no `BSI_SESSION`), its
/// commits made at `b`'s clock, as on a machine whose git and bsi read the
/// same clock.
fn git_now(b: &Brain, session: Option<&str>, args: &[&str]) -> Run {
    git_env(b, session, args, &[])
}

fn git_env(b: &Brain, session: Option<&str>, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new("git");
    clean_env(&mut cmd, b.path());
    cmd.current_dir(b.path())
        .env("BSI_NOW", &b.now)
        .env("GIT_AUTHOR_DATE", &b.now)
        .env("GIT_COMMITTER_DATE", &b.now)
        .args(args);
    if let Some(s) = session {
        cmd.env("BSI_SESSION", s);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::from_output(cmd.output().expect("run git"))
}

/// Rewrites one line of plan.md and commits it as `session`.
#[track_caller]
fn commit_plan(b: &Brain, session: Option<&str>, from: &str, to: &str, msg: &str) -> Run {
    let plan = b.read(PLAN);
    assert!(plan.contains(from), "{from:?} not in {plan}");
    b.write(PLAN, &plan.replacen(from, to, 1));
    b.git(&["add", PLAN]);
    git_now(b, session, &["commit", "-q", "-m", msg])
}

/// Commits a new file nobody claims.
#[track_caller]
fn commit_free(b: &Brain, rel: &str) {
    b.write(rel, "# Free\n\nfree text\n");
    b.git(&["add", rel]);
    git_now(b, None, &["commit", "-q", "-m", "free"]).ok();
}

fn open(b: &Brain, scope: &str, session: &str) {
    b.bsi(&["open", scope, "--session", session]).ok();
}

/// A brain with the hooks installed.
fn hooked() -> Brain {
    let b = Brain::new();
    b.bsi(&["hook", "install"]).ok();
    b
}

/// `s1` opened Goals, committed inside it, closed it; then `s2` opened
/// Goals: s1's commit is judged and landed, s2 now holds the section.
fn s1_then_s2(b: &mut Brain) -> String {
    at(b, 30);
    open(b, "projets/plan.md#Goals", "s1");
    at(b, 31);
    commit_plan(b, Some("s1"), "goal text", "goal text by s1", "goals by s1").ok();
    assert!(
        b.git(&["log", "-1", "--format=%B"])
            .contains("BSI-Session: s1")
    );
    at(b, 32);
    b.bsi(&["close", "s1"]).ok();
    at(b, 33);
    open(b, "projets/plan.md#Goals", "s2");
    head(b)
}

#[test]
fn a_rejected_push_then_pull_rebase_lands_ones_own_judged_commit() {
    let mut m = Machines::new();
    m.a.bsi(&["hook", "install"]).ok();
    m.b.bsi(&["hook", "install"]).ok();
    // alice's session s1 holds Goals, commits inside it, closes.
    at(&mut m.a, 30);
    open(&m.a, "projets/plan.md#Goals", "s1");
    at(&mut m.a, 31);
    commit_plan(
        &m.a,
        Some("s1"),
        "goal text",
        "goal text by s1",
        "goals by s1",
    )
    .ok();
    at(&mut m.a, 32);
    m.a.bsi(&["close", "s1"]).ok();
    // Meanwhile bob's s2 claims Goals and pushes other work.
    at(&mut m.b, 33);
    m.b.git(&["pull", "-q", "--no-rebase"]);
    open(&m.b, "projets/plan.md#Goals", "s2");
    commit_free(&m.b, "notes/bob.md");
    m.b.git(&["push", "-q", "origin", "main"]);
    // alice's push is rejected; she fetches (s2's claim arrives) and
    // rebases her own, judged commit on bob's.
    at(&mut m.a, 34);
    let pushed = git_now(&m.a, Some("s1"), &["push", "-q", "origin", "main"]);
    assert_ne!(pushed.code, 0, "rejected: {pushed:?}");
    m.a.git(&["fetch", "-q", "origin"]);
    assert!(m.a.bsi(&["status"]).stdout.contains("s2"));
    let r = git_now(
        &m.a,
        Some("s1"),
        &["pull", "-q", "--rebase", "origin", "main"],
    );
    r.ok();
    assert!(!r.stderr.contains("refused"), "{}", r.stderr);
    assert!(m.a.read(PLAN).contains("goal text by s1"));
    assert!(m.a.read("notes/bob.md").contains("free text"));
    git_now(&m.a, Some("s1"), &["push", "-q", "origin", "main"]).ok();
    // Without BSI_SESSION in the shell, the same.
    assert_eq!(m.a.git(&["status", "--porcelain"]), "");
}

#[test]
fn an_agents_pull_rebase_without_bsi_session_over_its_own_tagged_commit_passes() {
    let mut m = Machines::new();
    m.a.bsi(&["hook", "install"]).ok();
    m.b.bsi(&["hook", "install"]).ok();
    at(&mut m.a, 30);
    open(&m.a, "projets/plan.md#Goals", "agent-1");
    commit_plan(
        &m.a,
        Some("agent-1"),
        "goal text",
        "goal text by agent",
        "goals",
    )
    .ok();
    commit_free(&m.b, "notes/bob.md");
    m.b.git(&["push", "-q", "origin", "main"]);
    assert_ne!(
        git_now(&m.a, None, &["push", "-q", "origin", "main"]).code,
        0
    );
    // The shell that runs the pull has no BSI_SESSION: the commit's trailer
    // says whose it is.
    let r = git_now(&m.a, None, &["pull", "-q", "--rebase", "origin", "main"]);
    r.ok();
    assert!(!r.stderr.contains("refused"), "{}", r.stderr);
    assert!(m.a.read(PLAN).contains("goal text by agent"));
    assert!(
        m.a.git(&["log", "-1", "--format=%B"])
            .contains("BSI-Session: agent-1")
    );
}

#[test]
fn a_squash_of_ones_own_commits_with_the_same_result_passes() {
    let mut b = hooked();
    at(&mut b, 30);
    open(&b, "projets/plan.md#Goals", "s1");
    at(&mut b, 31);
    commit_plan(&b, Some("s1"), "goal text", "goal text one", "goals 1").ok();
    commit_plan(&b, Some("s1"), "goal text one", "goal text two", "goals 2").ok();
    let tree = b.git(&["rev-parse", "HEAD^{tree}"]);
    at(&mut b, 32);
    b.bsi(&["close", "s1"]).ok();
    at(&mut b, 33);
    open(&b, "projets/plan.md#Goals", "s2");
    let r = git_env(
        &b,
        Some("s1"),
        &["rebase", "-q", "-i", "HEAD~2"],
        &[
            ("GIT_SEQUENCE_EDITOR", "sed -i -e '2s/^pick/squash/'"),
            ("GIT_EDITOR", "true"),
        ],
    );
    r.ok();
    assert!(!r.stderr.contains("refused"), "{}", r.stderr);
    assert_eq!(
        b.git(&["rev-list", "--count", "HEAD"]).trim(),
        "2",
        "squashed"
    );
    assert_eq!(b.git(&["rev-parse", "HEAD^{tree}"]), tree);
}

#[test]
fn a_reset_back_to_ones_own_commit_passes() {
    let mut b = hooked();
    let mine = s1_then_s2(&mut b);
    at(&mut b, 34);
    git_now(&b, Some("s1"), &["reset", "-q", "--hard", "HEAD~1"]).ok();
    let r = git_now(&b, Some("s1"), &["reset", "-q", "--hard", "ORIG_HEAD"]);
    r.ok();
    assert!(!r.stderr.contains("refused"), "{}", r.stderr);
    assert_eq!(head(&b), mine);
    // And with no BSI_SESSION at all.
    git_now(&b, None, &["reset", "-q", "--hard", "HEAD~1"]).ok();
    git_now(&b, None, &["reset", "-q", "--hard", "ORIG_HEAD"]).ok();
    assert_eq!(head(&b), mine);
}

#[test]
fn a_commit_tagged_with_a_session_that_did_not_hold_the_section_is_still_refused() {
    let mut b = hooked();
    at(&mut b, 30);
    // s1 holds a folder, not Goals; nobody holds Goals yet: its commit
    // inside Goals lands with a warning.
    open(&b, "agents/", "s1");
    at(&mut b, 31);
    let r = commit_plan(
        &b,
        Some("s1"),
        "goal text",
        "goal text by s1",
        "goals by s1",
    );
    r.ok().stderr_has("outside");
    let outside = head(&b);
    at(&mut b, 33);
    open(&b, "projets/plan.md#Goals", "s2");
    // Back and forth: the commit comes back, tagged s1, but s1 never held
    // Goals. Refused as anyone's.
    at(&mut b, 34);
    git_now(&b, None, &["reset", "-q", "--hard", "HEAD~1"]).ok();
    let before = head(&b);
    let r = git_now(&b, None, &["reset", "-q", "--hard", "ORIG_HEAD"]);
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s2");
    assert_eq!(head(&b), before, "the branch did not move");
    assert_ne!(head(&b), outside);
    // A commit written by hand with s1's trailer, past pre-commit: the
    // same.
    let plan = b.read(PLAN);
    b.write(PLAN, &plan.replacen("goal text", "goal text forged", 1));
    b.git(&["add", PLAN]);
    let r = git_now(
        &b,
        None,
        &[
            "commit",
            "-q",
            "--no-verify",
            "-m",
            "forged\n\nBSI-Session: s1",
        ],
    );
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s2");
    assert_eq!(head(&b), before);
}

#[test]
fn close_judges_each_commit_against_what_the_session_held_when_it_was_made() {
    let mut b = hooked();
    at(&mut b, 30);
    open(&b, "projets/plan.md#Goals", "s1");
    at(&mut b, 31);
    commit_plan(&b, Some("s1"), "goal text", "goal text by s1", "goals").ok();
    at(&mut b, 32);
    b.bsi(&["close", "s1", "--scope", "projets/plan.md#Goals"])
        .ok();
    at(&mut b, 40);
    open(&b, "projets/plan.md#Risks", "s1");
    at(&mut b, 41);
    commit_plan(&b, Some("s1"), "risk text", "risk text by s1", "risks").ok();
    at(&mut b, 42);
    let v = b.bsi(&["verify", "s1", "--json"]).json();
    assert_eq!(v["clean"], true, "{v}");
    assert_eq!(v["commits"].as_array().map(Vec::len), Some(2));
    let r = b.bsi(&["close", "s1"]);
    r.ok();
    assert!(!r.stdout.contains("overflow"), "{}", r.stdout);
    let hist = b.history();
    assert!(hist.iter().all(|row| !row.contains("overflow")), "{hist:?}");
    // A commit made after the claim was closed is still outside it.
    let mut c = hooked();
    at(&mut c, 30);
    open(&c, "projets/plan.md#Goals", "s1");
    open(&c, "agents/", "s1");
    at(&mut c, 32);
    c.bsi(&["close", "s1", "--scope", "projets/plan.md#Goals"])
        .ok();
    at(&mut c, 50);
    commit_plan(&c, Some("s1"), "goal text", "goal text late", "late").ok();
    c.bsi(&["verify", "s1"])
        .code(6)
        .stdout_has("overflow: projets/plan.md");
}

#[test]
fn others_work_fetched_into_a_branch_passes_and_a_refusal_names_no_index() {
    let mut m = Machines::new();
    m.a.bsi(&["hook", "install"]).ok();
    m.b.bsi(&["hook", "install"]).ok();
    // bob's session s2 commits inside its own claim and pushes.
    at(&mut m.b, 30);
    open(&m.b, "projets/plan.md#Goals", "s2");
    commit_plan(
        &m.b,
        Some("s2"),
        "goal text",
        "goal text by s2",
        "goals by s2",
    )
    .ok();
    m.b.git(&["push", "-q", "origin", "main"]);
    // alice, on another branch, fetches main into main: s2's own work.
    m.a.git(&["checkout", "-q", "-b", "side"]);
    m.a.git(&["fetch", "-q", "origin"]);
    let r = git_now(&m.a, None, &["fetch", "-q", "origin", "main:main"]);
    r.ok();
    assert!(!r.stderr.contains("refused"), "{}", r.stderr);
    assert_eq!(
        m.a.git(&["rev-parse", "main"]),
        m.b.git(&["rev-parse", "main"])
    );
    // An untagged commit inside s2's claim, pushed past every hook: refused
    // on the way into main, and the message does not speak of this work
    // tree's index.
    let plan = m.b.read(PLAN);
    m.b.write(
        PLAN,
        &plan.replacen("goal text by s2", "goal text, no tag", 1),
    );
    m.b.git(&[
        "-c",
        "core.hooksPath=/dev/null",
        "commit",
        "-q",
        "-a",
        "-m",
        "untagged",
    ]);
    m.b.git(&["push", "-q", "origin", "main"]);
    let before = m.a.git(&["rev-parse", "main"]);
    let r = git_now(&m.a, None, &["fetch", "-q", "origin", "main:main"]);
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s2");
    r.stderr_has("this work tree's index and files are as they were");
    assert!(!r.stderr.contains("still in the index"), "{}", r.stderr);
    assert_eq!(m.a.git(&["rev-parse", "main"]), before);
}

#[test]
fn a_branch_moved_back_over_another_sessions_work_is_judged_like_its_revert() {
    let mut b = hooked();
    at(&mut b, 30);
    open(&b, "projets/plan.md#Goals", "s3");
    open(&b, "projets/plan.md#Risks", "s2");
    at(&mut b, 31);
    commit_plan(
        &b,
        Some("s3"),
        "goal text",
        "goal text by s3",
        "goals by s3",
    )
    .ok();
    let s3s = head(&b);
    // The revert of s3's commit by s2 is refused…
    at(&mut b, 32);
    let r = git_now(&b, Some("s2"), &["revert", "--no-edit", "HEAD"]);
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s3");
    git_now(&b, None, &["reset", "-q", "--hard"]).ok();
    assert_eq!(head(&b), s3s);
    // …and so is the same change made by moving the branch back, by s2 or
    // by a shell with no session: the branch keeps s3's commit.
    for session in [Some("s2"), None] {
        let r = git_now(&b, session, &["reset", "-q", "--hard", "HEAD~1"]);
        assert_ne!(r.code, 0, "{session:?}: {r:?}");
        r.stderr_has("inside an active claim of session s3");
        r.stderr_has("main did not move");
        assert!(!r.stderr.contains("still in the index"), "{}", r.stderr);
        assert_eq!(head(&b), s3s, "the branch did not move");
        git_now(&b, None, &["reset", "-q", "--hard"]).ok();
        assert!(b.read(PLAN).contains("goal text by s3"));
    }
    // `git branch -f` of main from another branch: the same.
    b.git(&["checkout", "-q", "-b", "side", "HEAD~1"]);
    let r = git_now(&b, Some("s2"), &["branch", "-f", "main", "side"]);
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s3");
    assert_eq!(b.git(&["rev-parse", "main"]).trim(), s3s);
    // While another branch keeps the commit, main may leave it.
    b.git(&["branch", "keep", "main"]);
    git_now(&b, Some("s2"), &["branch", "-f", "main", "side"]).ok();
    git_now(&b, Some("s2"), &["branch", "-f", "main", "keep"]).ok();
    b.git(&["branch", "-D", "keep"]);
    b.git(&["checkout", "-q", "main"]);
    // s2 drops its own commit freely.
    at(&mut b, 33);
    commit_plan(
        &b,
        Some("s2"),
        "risk text",
        "risk text by s2",
        "risks by s2",
    )
    .ok();
    git_now(&b, Some("s2"), &["reset", "-q", "--hard", "HEAD~1"]).ok();
    assert_eq!(head(&b), s3s);
    // s3 drops its own commit freely.
    let r = git_now(&b, Some("s3"), &["reset", "-q", "--hard", "HEAD~1"]);
    r.ok();
    assert!(!r.stderr.contains("refused"), "{}", r.stderr);
    assert!(!b.read(PLAN).contains("by s3"));
}

/// A commit inside s1's Goals, made on a detached HEAD with the guard off,
/// by a shell with no session; back on main, which gets `free` so a merge
/// of the commit is a true merge. Returns the commit.
fn unjudged_commit(b: &mut Brain) -> String {
    at(b, 30);
    open(b, "projets/plan.md#Goals", "s1");
    at(b, 31);
    b.git(&["checkout", "-q", "--detach"]);
    let plan = b.read(PLAN);
    b.write(PLAN, &plan.replacen("goal text", "goal text, unjudged", 1));
    git_now(
        b,
        None,
        &[
            "-c",
            "bsi.hookMode=off",
            "commit",
            "-q",
            "-a",
            "-m",
            "unjudged",
        ],
    )
    .ok();
    let sha = head(b);
    b.git(&["checkout", "-q", "main"]);
    sha
}

#[test]
fn a_commit_never_judged_is_judged_when_it_first_reaches_a_branch() {
    // By a tag, then `merge --ff-only`.
    let mut b = hooked();
    let sha = unjudged_commit(&mut b);
    let before = head(&b);
    b.git(&["tag", "t", &sha]);
    let r = git_now(&b, None, &["merge", "-q", "--ff-only", "t"]);
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s1");
    assert_eq!(head(&b), before);
    // By a remote-tracking branch made by hand, then `reset --hard`.
    git_now(&b, None, &["reset", "-q", "--hard"]).ok();
    b.git(&["update-ref", "refs/remotes/origin/x", &sha]);
    let r = git_now(&b, None, &["reset", "-q", "--hard", "origin/x"]);
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s1");
    assert_eq!(head(&b), before);
    // By `git merge SHA`: pre-merge-commit passes the merge's own changes,
    // and its mark does not let the merged-in commit through.
    git_now(&b, None, &["reset", "-q", "--hard"]).ok();
    commit_free(&b, "notes/free.md");
    let before = head(&b);
    let r = git_now(&b, None, &["merge", "-q", "--no-edit", &sha]);
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s1");
    r.stderr_has("\"unjudged\"");
    assert_eq!(head(&b), before);
    // The commit's holder takes it freely, and a branch made of it is
    // judged too.
    git_now(&b, None, &["reset", "-q", "--hard"]).ok();
    let r = git_now(&b, None, &["branch", "other", &sha]);
    assert_ne!(r.code, 0, "{r:?}");
    git_now(&b, Some("s1"), &["merge", "-q", "--no-edit", &sha]).ok();
    assert!(b.read(PLAN).contains("goal text, unjudged"));
}

#[test]
fn others_judged_work_arriving_without_a_remote_tracking_branch_passes() {
    let mut m = Machines::new();
    m.a.bsi(&["hook", "install"]).ok();
    m.b.bsi(&["hook", "install"]).ok();
    // bob's s2 commits inside its claim, pushes and closes; s3 then holds
    // the section.
    at(&mut m.b, 30);
    open(&m.b, "projets/plan.md#Goals", "s2");
    at(&mut m.b, 31);
    commit_plan(&m.b, Some("s2"), "goal text", "goal text by s2", "by s2").ok();
    m.b.git(&["push", "-q", "origin", "main"]);
    at(&mut m.b, 32);
    m.b.bsi(&["close", "s2"]).ok();
    at(&mut m.b, 33);
    open(&m.b, "projets/plan.md#Goals", "s3");
    // alice, working as s1, knows of s3's claim, and has no remote-tracking
    // branch for main.
    at(&mut m.a, 34);
    m.a.git(&["fetch", "-q", "origin"]);
    assert!(m.a.bsi(&["status"]).stdout.contains("s3"));
    m.a.git(&["update-ref", "-d", "refs/remotes/origin/main"]);
    let url = m.a.git(&["remote", "get-url", "origin"]).trim().to_string();
    let r = git_now(
        &m.a,
        Some("s1"),
        &["pull", "-q", "--no-rebase", &url, "main"],
    );
    r.ok();
    assert!(!r.stderr.contains("refused"), "{}", r.stderr);
    assert!(m.a.read(PLAN).contains("goal text by s2"));
    // s3's own work, fetched straight into main from another branch.
    at(&mut m.b, 35);
    m.b.git(&["pull", "-q", "--no-rebase"]);
    commit_plan(
        &m.b,
        Some("s3"),
        "goal text by s2",
        "goal text by s3",
        "by s3",
    )
    .ok();
    m.b.git(&["push", "-q", "origin", "main"]);
    m.a.git(&["checkout", "-q", "-b", "side"]);
    m.a.git(&["update-ref", "-d", "refs/remotes/origin/main"]);
    let r = git_now(&m.a, Some("s1"), &["fetch", "-q", "origin", "main:main"]);
    r.ok();
    assert!(!r.stderr.contains("refused"), "{}", r.stderr);
    assert_eq!(
        m.a.git(&["rev-parse", "main"]),
        m.b.git(&["rev-parse", "main"])
    );
}

#[test]
fn a_pull_rebase_conflict_resolved_over_another_sessions_held_line_is_judged_as_a_new_change() {
    let mut m = Machines::new();
    // alice's s1 held Goals, committed inside it (not pushed), closed;
    // bob's s3 holds Goals now, and pushed its own line there. alice pulls
    // with a rebase: the two lines conflict. She keeps her own and
    // continues: s3's committed line, in s3's active claim, would be
    // overwritten.
    let (mine, theirs) = s1_unpushed_under_s3s_pushed_line(&mut m, true);
    assert!(m.a.bsi(&["status"]).stdout.contains("s3"));
    let r = git_now(
        &m.a,
        Some("s1"),
        &["pull", "-q", "--rebase", "origin", "main"],
    );
    assert_ne!(r.code, 0, "a conflict: {r:?}");
    let own = m.a.git(&["show", &format!("{mine}:{PLAN}")]);
    m.a.write(PLAN, &own);
    m.a.git(&["add", PLAN]);
    let r = git_env(
        &m.a,
        Some("s1"),
        &["rebase", "--continue"],
        &[("GIT_EDITOR", "true")],
    );
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s3");
    let main =
        m.a.git(&["rev-parse", "refs/heads/main"])
            .trim()
            .to_string();
    let over_theirs =
        m.a.git_run(&["merge-base", "--is-ancestor", &theirs, &main])
            .code
            == 0;
    let text = m.a.git(&["show", &format!("{main}:{PLAN}")]);
    assert!(
        !over_theirs || text.contains("goal text by s3"),
        "main overwrote s3's line: {text}"
    );
}

#[test]
fn an_amend_past_pre_commit_adding_a_line_inside_anothers_claim_is_refused_like_a_new_commit() {
    let mut b = hooked();
    let mine = s1_then_s2(&mut b);
    at(&mut b, 34);
    let plan = b.read(PLAN);
    b.write(
        PLAN,
        &plan.replacen("goal text by s1", "goal text by s1\n\na new goal by s1", 1),
    );
    b.git(&["add", PLAN]);
    // As a new commit: refused.
    let r = git_now(&b, Some("s1"), &["commit", "-q", "-m", "more goals"]);
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s2");
    assert_eq!(head(&b), mine);
    // As an amend of s1's old commit, past pre-commit: refused the same.
    let r = git_now(
        &b,
        Some("s1"),
        &["commit", "-q", "--amend", "--no-verify", "--no-edit"],
    );
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s2");
    assert_eq!(head(&b), mine);
    // Reworded, what it changes the same: it passes.
    b.git(&["reset", "-q", "--hard"]);
    let r = git_now(
        &b,
        Some("s1"),
        &[
            "commit",
            "-q",
            "--amend",
            "--no-verify",
            "-m",
            "goals by s1, reworded\n\nBSI-Session: s1",
        ],
    );
    r.ok();
    assert!(!r.stderr.contains("refused"), "{}", r.stderr);
    assert!(b.read(PLAN).contains("goal text by s1"));
}

#[test]
fn a_commit_made_after_its_session_closed_the_section_is_no_replay_whatever_the_minute() {
    let mut b = hooked();
    at(&mut b, 30);
    open(&b, "projets/plan.md#Goals", "s1");
    at(&mut b, 31);
    b.bsi(&["close", "s1"]).ok();
    // A minute after s1 closed Goals, a commit tagged s1 is forced inside
    // it: s1 did not hold Goals when it was made.
    at(&mut b, 32);
    let plan = b.read(PLAN);
    b.write(PLAN, &plan.replacen("goal text", "goal text late", 1));
    b.git(&["add", PLAN]);
    git_now(
        &b,
        Some("s1"),
        &["-c", "bsi.hookMode=off", "commit", "-q", "-m", "late goals"],
    )
    .ok();
    let late = head(&b);
    at(&mut b, 33);
    open(&b, "projets/plan.md#Goals", "s2");
    git_now(&b, Some("s1"), &["reset", "-q", "--hard", "HEAD~1"]).ok();
    let before = head(&b);
    let r = git_now(&b, Some("s1"), &["reset", "-q", "--hard", "ORIG_HEAD"]);
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s2");
    assert_eq!(head(&b), before);
    assert_ne!(head(&b), late);
}

#[test]
fn a_cherry_pick_conflict_resolved_over_another_sessions_held_line_is_judged_as_a_new_change() {
    let mut b = hooked();
    at(&mut b, 30);
    open(&b, "projets/plan.md#Goals", "s1");
    b.git(&["checkout", "-q", "-b", "side"]);
    at(&mut b, 31);
    commit_plan(
        &b,
        Some("s1"),
        "goal text",
        "goal text by s1",
        "goals by s1",
    )
    .ok();
    at(&mut b, 32);
    b.bsi(&["close", "s1"]).ok();
    b.git(&["checkout", "-q", "main"]);
    at(&mut b, 33);
    open(&b, "projets/plan.md#Goals", "s3");
    at(&mut b, 34);
    commit_plan(
        &b,
        Some("s3"),
        "goal text",
        "goal text by s3",
        "goals by s3",
    )
    .ok();
    let theirs = head(&b);
    at(&mut b, 35);
    let r = git_now(&b, Some("s1"), &["cherry-pick", "side"]);
    assert_ne!(r.code, 0, "a conflict: {r:?}");
    let own = b.git(&["show", &format!("side:{PLAN}")]);
    b.write(PLAN, &own);
    b.git(&["add", PLAN]);
    let r = git_env(
        &b,
        Some("s1"),
        &["cherry-pick", "--continue"],
        &[("GIT_EDITOR", "true")],
    );
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s3");
    assert_eq!(b.git(&["rev-parse", "refs/heads/main"]).trim(), theirs);
    // Past pre-commit, the copy keeps the original's author time: still
    // judged by what it changes, a line s3 wrote.
    let r = git_now(
        &b,
        Some("s1"),
        &["commit", "-q", "--no-verify", "--no-edit"],
    );
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s3");
    assert_eq!(b.git(&["rev-parse", "refs/heads/main"]).trim(), theirs);
}

#[test]
fn a_refused_reset_names_the_one_command_that_puts_the_files_back() {
    let mut b = hooked();
    at(&mut b, 30);
    open(&b, "projets/plan.md#Goals", "s3");
    at(&mut b, 31);
    commit_plan(
        &b,
        Some("s3"),
        "goal text",
        "goal text by s3",
        "goals by s3",
    )
    .ok();
    let s3s = head(&b);
    let status = b.git(&["status", "--porcelain"]);
    // s2's reset over s3's commit: the branch keeps it, but git reset the
    // index and the files first.
    at(&mut b, 32);
    let r = git_now(&b, Some("s2"), &["reset", "-q", "--hard", "HEAD~1"]);
    assert_ne!(r.code, 0, "{r:?}");
    assert_eq!(head(&b), s3s);
    assert!(!b.read(PLAN).contains("by s3"), "git reverted the files");
    let line = r
        .stderr
        .lines()
        .find(|l| l.contains("restores exactly those files"))
        .unwrap_or_else(|| panic!("{}", r.stderr));
    let printed = &line[line.find('`').expect("a command") + 1..line.rfind('`').expect("end")];
    assert!(
        printed.starts_with("git restore --source HEAD"),
        "{printed}"
    );
    // Forcing the move is a person's step.
    for l in r.stderr.lines().filter(|l| l.contains("hookMode=off")) {
        assert!(l.contains("a person's step, never an agent's"), "{l}");
    }
    // Run as printed, from a subdirectory of the work tree.
    let mut sh = std::process::Command::new("sh");
    crate::common::clean_env(&mut sh, b.path());
    let ran = crate::common::Run::from_output(
        sh.current_dir(b.path().join("projets"))
            .args(["-c", printed])
            .output()
            .expect("run sh"),
    );
    assert_eq!(ran.code, 0, "`{printed}`: {ran:?}");
    assert!(b.read(PLAN).contains("goal text by s3"));
    assert_eq!(b.git(&["status", "--porcelain"]), status);
}

/// Two clones with the hooks: in `a`, s1 held Goals, committed inside it
/// (not pushed) and closed; in `b`, s3 holds Goals now and pushed its own
/// line there. `a` has fetched. Returns s1's commit and s3's.
fn s1_unpushed_under_s3s_pushed_line(m: &mut Machines, hooks: bool) -> (String, String) {
    if hooks {
        m.a.bsi(&["hook", "install"]).ok();
    }
    m.b.bsi(&["hook", "install"]).ok();
    at(&mut m.a, 30);
    open(&m.a, "projets/plan.md#Goals", "s1");
    at(&mut m.a, 31);
    commit_plan(
        &m.a,
        Some("s1"),
        "goal text",
        "goal text by s1",
        "goals by s1",
    )
    .ok();
    at(&mut m.a, 32);
    m.a.bsi(&["close", "s1"]).ok();
    let mine = head(&m.a);
    at(&mut m.b, 33);
    m.b.git(&["pull", "-q", "--no-rebase"]);
    open(&m.b, "projets/plan.md#Goals", "s3");
    at(&mut m.b, 34);
    commit_plan(
        &m.b,
        Some("s3"),
        "goal text",
        "goal text by s3",
        "goals by s3",
    )
    .ok();
    m.b.git(&["push", "-q", "origin", "main"]);
    let theirs = head(&m.b);
    at(&mut m.a, 35);
    m.a.git(&["fetch", "-q", "origin"]);
    (mine, theirs)
}

#[test]
fn a_merge_that_keeps_its_own_side_over_anothers_held_line_is_refused_in_every_form() {
    let mut m = Machines::new();
    let (mine, _theirs) = s1_unpushed_under_s3s_pushed_line(&mut m, true);
    let a = &m.a;
    // `git pull --no-rebase` conflicts; s1 keeps its side and commits.
    let r = git_now(
        a,
        Some("s1"),
        &["pull", "-q", "--no-rebase", "origin", "main"],
    );
    assert_ne!(r.code, 0, "a conflict: {r:?}");
    a.git(&["checkout", "--ours", "--", PLAN]);
    a.git(&["add", PLAN]);
    let r = git_now(a, Some("s1"), &["commit", "--no-edit"]);
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s3");
    assert_eq!(head(a), mine);
    a.git(&["merge", "--abort"]);
    // The same past pre-commit: the branch does not take it.
    let r = git_now(
        a,
        Some("s1"),
        &["pull", "-q", "--no-rebase", "origin", "main"],
    );
    assert_ne!(r.code, 0, "a conflict: {r:?}");
    a.git(&["checkout", "--ours", "--", PLAN]);
    a.git(&["add", PLAN]);
    let r = git_now(a, Some("s1"), &["commit", "--no-edit", "--no-verify"]);
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s3");
    assert_eq!(head(a), mine);
    a.git(&["merge", "--abort"]);
    // `-s ours` and `-X ours`, concluded by git itself (pre-merge-commit),
    // and with the hook skipped (the reference transaction).
    for args in [
        &["merge", "-q", "--no-edit", "-s", "ours", "origin/main"][..],
        &["merge", "-q", "--no-edit", "-X", "ours", "origin/main"],
        &[
            "merge",
            "-q",
            "--no-edit",
            "--no-verify",
            "-s",
            "ours",
            "origin/main",
        ],
        &["pull", "-q", "--no-rebase", "-X", "ours", "origin", "main"],
    ] {
        let r = git_now(a, Some("s1"), args);
        assert_ne!(r.code, 0, "{args:?}: {r:?}");
        r.stderr_has("inside an active claim of session s3");
        assert_eq!(head(a), mine, "{args:?}");
        let _ = a.git_run(&["merge", "--abort"]);
        a.git(&["reset", "-q", "--hard", &mine]);
    }
    assert_eq!(a.git(&["status", "--porcelain"]), "");
    // Taking s3's line, the merge lands.
    let r = git_now(
        a,
        Some("s1"),
        &["merge", "-q", "--no-edit", "-X", "theirs", "origin/main"],
    );
    r.ok();
    assert!(a.read(PLAN).contains("goal text by s3"));
}

#[test]
fn a_merge_that_keeps_its_own_side_where_nobody_else_holds_lands() {
    let mut m = Machines::new();
    m.a.bsi(&["hook", "install"]).ok();
    m.b.bsi(&["hook", "install"]).ok();
    // s1 and s3 each changed Risks, which nobody holds; s3 holds Goals.
    at(&mut m.b, 30);
    open(&m.b, "projets/plan.md#Goals", "s3");
    at(&mut m.b, 31);
    commit_plan(&m.b, Some("s3"), "risk text", "risk text by s3", "risks").ok();
    commit_plan(&m.b, Some("s3"), "goal text", "goal text by s3", "goals").ok();
    m.b.git(&["push", "-q", "origin", "main"]);
    at(&mut m.a, 32);
    commit_plan(&m.a, Some("s1"), "risk text", "risk text by s1", "risks").ok();
    m.a.git(&["fetch", "-q", "origin"]);
    let r = git_now(
        &m.a,
        Some("s1"),
        &["pull", "-q", "--no-rebase", "origin", "main"],
    );
    assert_ne!(r.code, 0, "a conflict: {r:?}");
    // s1 resolves Risks with its own line; s3's Goals line, taken in
    // cleanly, stays.
    let theirs = m.a.git(&["show", &format!("origin/main:{PLAN}")]);
    m.a.write(PLAN, &theirs.replace("risk text by s3", "risk text by s1"));
    m.a.git(&["add", PLAN]);
    let r = git_now(&m.a, Some("s1"), &["commit", "--no-edit"]);
    r.ok();
    assert!(!r.stderr.contains("refused"), "{}", r.stderr);
    let plan = m.a.read(PLAN);
    assert!(
        plan.contains("risk text by s1") && plan.contains("goal text by s3"),
        "{plan}"
    );
    // And `-s ours` over s3's Goals line is the merger's change: refused.
    let kept = head(&m.a);
    m.a.git(&["reset", "-q", "--hard", "HEAD~1"]);
    let r = git_now(
        &m.a,
        Some("s1"),
        &["merge", "-q", "--no-edit", "-s", "ours", "origin/main"],
    );
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s3");
    assert_ne!(head(&m.a), kept);
}

#[test]
fn a_merge_from_a_clone_without_hooks_that_drops_the_holders_line_is_told_to_the_holder() {
    let mut m = Machines::new();
    let (_mine, theirs) = s1_unpushed_under_s3s_pushed_line(&mut m, false);
    // In `a`, with no hooks, s1 keeps its own side and pushes.
    let r = git_now(
        &m.a,
        Some("s1"),
        &["pull", "-q", "--no-rebase", "origin", "main"],
    );
    assert_ne!(r.code, 0, "a conflict: {r:?}");
    m.a.git(&["checkout", "--ours", "--", PLAN]);
    m.a.git(&["add", PLAN]);
    git_now(&m.a, Some("s1"), &["commit", "-q", "--no-edit"]).ok();
    let merge = head(&m.a);
    m.a.git(&["push", "-q", "origin", "main"]);
    // s3 pulls: its line is gone, and its status, verify and close say so.
    at(&mut m.b, 36);
    git_now(
        &m.b,
        Some("s3"),
        &["pull", "-q", "--no-rebase", "origin", "main"],
    )
    .ok();
    assert_eq!(head(&m.b), merge);
    assert!(!m.b.read(PLAN).contains("goal text by s3"));
    let short = &merge[..7];
    let said = format!("drift: projets/plan.md#Goals of s3 changed by commit {short}");
    m.b.bsi(&["status"]).ok().stdout_has(&said);
    let v = m.b.bsi(&["status", "--json"]).json();
    assert_eq!(v["drift"][0]["commit"], merge.as_str());
    assert_eq!(v["drift"][0]["session"], "s3");
    m.b.bsi(&["verify", "s3"]).ok().stdout_has(&said);
    // s3's own commit is not drift; the merge alone is.
    assert!(!m.b.bsi(&["status"]).stdout.contains(&theirs[..7]));
    m.b.bsi(&["close", "s3"]).ok().stdout_has(&said);
}
