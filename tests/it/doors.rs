//! Every door into a branch besides `git commit`: a merge git concludes by
//! itself, a merge that takes a side whole, revert, cherry-pick, a rebase
//! with a hand-resolved conflict, `git am`, `git update-ref`, submodules —
//! real git commands as users type them, through the installed hooks.

use crate::common::{Brain, Run};
use crate::hooks::{git_as, head, hooked};

/// s1 (alice) holds `projets/plan.md#Goals`, s2 (bob) `#Risks`.
fn sections() -> Brain {
    let b = hooked();
    b.bsi(&[
        "open",
        "projets/plan.md#Goals",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    b.bsi(&[
        "open",
        "projets/plan.md#Risks",
        "--session",
        "s2",
        "--agent",
        "bob",
    ])
    .ok();
    b
}

const PLAN: &str = "projets/plan.md";

/// Rewrites one line of plan.md (`from` to `to`) in the work tree.
fn edit_plan(b: &Brain, from: &str, to: &str) {
    let plan = b.read(PLAN);
    assert!(plan.contains(from), "{from:?} not in {plan}");
    b.write(PLAN, &plan.replacen(from, to, 1));
}

/// A commit of what is staged, past every hook: work that is already there.
fn commit_past_hooks(b: &Brain, msg: &str) {
    b.git(&[
        "-c",
        "core.hooksPath=/dev/null",
        "commit",
        "-q",
        "-a",
        "-m",
        msg,
    ]);
}

/// A git command refused by bsi: git fails, HEAD's branch did not move, and
/// bsi said what to do next.
#[track_caller]
fn refused(b: &Brain, r: &Run, before: &str) {
    assert_ne!(r.code, 0, "refused: {r:?}");
    assert_eq!(head(b), before, "the branch did not move");
    r.stderr_has("inside an active claim of session s1");
    r.stderr_has("under `Goals`");
}

/// Nothing of bsi's said: the command passed without a word.
#[track_caller]
fn silent(r: &Run) {
    r.ok();
    assert!(!r.stderr.contains("bsi"), "{}", r.stderr);
}

fn parents(b: &Brain) -> usize {
    b.git(&["rev-list", "--parents", "-n1", "HEAD"])
        .split_whitespace()
        .count()
        - 1
}

/// One commit on a new branch `feat` and one on `main`, each by its session
/// `(session, section word, message)` editing `<word> text` into
/// `<word> text, <session>`; ends on main and returns its head.
fn diverge(b: &Brain, feat: (&str, &str, &str), main: (&str, &str, &str)) -> String {
    let commit = |(session, word, message): (&str, &str, &str)| {
        edit_plan(
            b,
            &format!("{word} text"),
            &format!("{word} text, {session}"),
        );
        git_as(b, Some(session), &["commit", "-q", "-a", "-m", message]).ok();
    };
    b.git(&["checkout", "-q", "-b", "feat"]);
    commit(feat);
    b.git(&["checkout", "-q", "main"]);
    commit(main);
    head(b)
}

/// Issue case: s1 committed its Goals on main; s2's branch `feat` changed
/// only its Risks. s2 merges with `--no-commit`, takes feat's plan.md whole
/// (`git checkout feat -- plan.md`) and commits: the file is feat's, and
/// s1's committed work is reverted.
#[test]
fn taking_the_other_side_whole_reverts_anothers_work_and_is_refused() {
    let b = sections();
    let before = diverge(&b, ("s2", "risk", "risks"), ("s1", "goal", "goals"));

    git_as(&b, Some("s2"), &["merge", "--no-commit", "-q", "feat"]).ok();
    b.git(&["checkout", "feat", "--", PLAN]);
    let r = git_as(&b, Some("s2"), &["commit", "-q", "-m", "merge feat"]);
    refused(&b, &r, &before);
    r.stderr_has("bsi: commit refused.");
    r.stderr_has("`git -c bsi.hookMode=off commit …` skips this check once");
    assert!(
        b.path().join(".git/MERGE_HEAD").exists(),
        "the merge is still under way"
    );

    // A merge that keeps both sides' work passes.
    b.git(&["checkout", "HEAD", "--", PLAN]);
    edit_plan(&b, "risk text", "risk text, s2");
    b.git(&["add", PLAN]);
    silent(&git_as(
        &b,
        Some("s2"),
        &["commit", "-q", "-m", "merge feat"],
    ));
    assert_eq!(parents(&b), 2);
    let j = b.bsi(&["verify", "s2", "--json"]);
    j.ok();
    assert_eq!(j.json()["clean"], true, "{}", j.stdout);

    // Forced past the hook, the reverting merge is what verify reports.
    b.git(&["reset", "-q", "--hard", &before]);
    git_as(&b, Some("s2"), &["merge", "--no-commit", "-q", "feat"]).ok();
    b.git(&["checkout", "feat", "--", PLAN]);
    git_as(
        &b,
        Some("s2"),
        &[
            "-c",
            "bsi.hookMode=off",
            "commit",
            "-q",
            "-m",
            "merge feat, forced",
        ],
    )
    .ok();
    let merge = head(&b);
    assert_eq!(parents(&b), 2);
    let v = b.bsi(&["verify", "s2"]);
    v.code(6);
    v.stdout_has("under `Goals`");
    v.stdout_has(&format!("(commit {})", &merge[..7]));
}

/// Issue case 1: a merge git concludes by itself runs pre-merge-commit.
/// `git merge -s ours` drops what s1 committed on feat in its Goals.
#[test]
fn a_merge_git_concludes_by_itself_is_judged() {
    let b = sections();
    let before = diverge(&b, ("s1", "goal", "goals"), ("s2", "risk", "risks"));

    let r = git_as(
        &b,
        Some("s2"),
        &["merge", "-q", "-s", "ours", "--no-edit", "feat"],
    );
    refused(&b, &r, &before);
    r.stderr_has("bsi: merge refused.");
    r.stderr_has("`git -c bsi.hookMode=off merge …` skips this check once");
    b.git(&["merge", "--abort"]);

    // The plain merge of s1's committed work passes, judged once.
    let r = git_as(&b, Some("s2"), &["merge", "-q", "--no-edit", "feat"]);
    silent(&r);
    assert_eq!(parents(&b), 2);
    let plan = b.read(PLAN);
    assert!(plan.contains("goal text, s1") && plan.contains("risk text, s2"));
    let j = b.bsi(&["verify", "s2", "--json"]);
    j.ok();
    assert_eq!(j.json()["clean"], true, "{}", j.stdout);
    assert_eq!(j.json()["commits"].as_array().map(Vec::len), Some(2));
}

/// A `git pull` (a merge) of another machine's committed work passes.
#[test]
fn a_pull_of_others_committed_work_passes() {
    let a = sections();
    let remote = a.publish_to_bare();
    let b = Brain::clone_of(remote.path(), "bob");
    b.bsi(&["hook", "install"]).ok();
    edit_plan(&a, "goal text", "goal text, s1");
    git_as(&a, Some("s1"), &["commit", "-q", "-a", "-m", "goals"]).ok();
    a.git(&["push", "-q", "origin", "main"]);
    edit_plan(&b, "risk text", "risk text, s2");
    git_as(&b, Some("s2"), &["commit", "-q", "-a", "-m", "risks"]).ok();
    let r = git_as(&b, Some("s2"), &["pull", "-q", "--no-rebase", "--no-edit"]);
    silent(&r);
    assert_eq!(parents(&b), 2);
    let plan = b.read(PLAN);
    assert!(plan.contains("goal text, s1") && plan.contains("risk text, s2"));
    // Fast-forward and rebase pulls move the branch to commits others made.
    let a2 = Brain::clone_of(remote.path(), "carol");
    a2.bsi(&["hook", "install"]).ok();
    edit_plan(&a, "q1 text", "q1 text, s1");
    git_as(&a, Some("s1"), &["commit", "-q", "-a", "-m", "q1"]).ok();
    a.git(&["push", "-q", "origin", "main"]);
    silent(&git_as(&a2, Some("s2"), &["pull", "-q", "--ff-only"]));
    assert!(a2.read(PLAN).contains("q1 text, s1"));
    silent(&git_as(&b, Some("s2"), &["pull", "-q", "--rebase"]));
    assert!(b.read(PLAN).contains("q1 text, s1"));
}

/// Sets up a commit on branch `feat` that changes s1's Goals (made past the
/// hooks) and one that changes s2's Risks; returns their ids.
fn feat_commits(b: &Brain) -> (String, String) {
    b.git(&["checkout", "-q", "-b", "feat"]);
    edit_plan(b, "goal text", "goal text, feat");
    commit_past_hooks(b, "goals on feat");
    let goals = head(b);
    edit_plan(b, "risk text", "risk text, feat");
    commit_past_hooks(b, "risks on feat");
    let risks = head(b);
    b.git(&["checkout", "-q", "main"]);
    (goals, risks)
}

#[test]
fn cherry_pick_into_anothers_claim_is_refused_and_a_free_one_passes() {
    let b = sections();
    let (goals, risks) = feat_commits(&b);
    let before = head(&b);
    let r = git_as(&b, Some("s2"), &["cherry-pick", &goals]);
    refused(&b, &r, &before);
    r.stderr_has("on its way to main");
    r.stderr_has("bsi: refused: main did not move");
    r.stderr_has("`git cherry-pick --abort`");
    silent(&git_as(&b, Some("s2"), &["cherry-pick", "--abort"]));
    assert_eq!(b.read(PLAN).matches("goal text, feat").count(), 0);
    // Risks is s2's own: the pick lands (with s2's trailer).
    let r = git_as(&b, Some("s2"), &["cherry-pick", &risks]);
    r.ok();
    assert!(!r.stderr.contains("bsi"), "{}", r.stderr);
    assert_ne!(head(&b), before);
    assert!(b.read(PLAN).contains("risk text, feat"));
}

#[test]
fn revert_of_anothers_work_is_refused_and_of_ones_own_passes() {
    let b = sections();
    edit_plan(&b, "goal text", "goal text, s1");
    git_as(&b, Some("s1"), &["commit", "-q", "-a", "-m", "goals"]).ok();
    let goals = head(&b);
    edit_plan(&b, "risk text", "risk text, s2");
    git_as(&b, Some("s2"), &["commit", "-q", "-a", "-m", "risks"]).ok();
    let before = head(&b);
    let r = git_as(&b, Some("s2"), &["revert", "--no-edit", &goals]);
    refused(&b, &r, &before);
    r.stderr_has("main did not move");
    b.git(&["reset", "-q", "--merge"]);
    assert!(b.read(PLAN).contains("goal text, s1"));
    silent(&git_as(&b, Some("s2"), &["revert", "--no-edit", "HEAD"]));
    assert!(!b.read(PLAN).contains("risk text, s2"));
}

#[test]
fn a_rebase_whose_conflict_is_resolved_into_anothers_claim_is_refused() {
    let b = sections();
    // topic: s2 changes its Risks; main: the same line changed meanwhile.
    b.git(&["checkout", "-q", "-b", "topic"]);
    edit_plan(&b, "risk text", "risk text, topic");
    git_as(&b, Some("s2"), &["commit", "-q", "-a", "-m", "risks topic"]).ok();
    b.git(&["checkout", "-q", "main"]);
    edit_plan(&b, "risk text", "risk text, main");
    git_as(&b, Some("s2"), &["commit", "-q", "-a", "-m", "risks main"]).ok();
    b.git(&["checkout", "-q", "topic"]);
    let before = head(&b);

    let r = git_as(&b, Some("s2"), &["rebase", "main"]);
    assert_ne!(r.code, 0, "a conflict: {r:?}");
    // The resolution also rewrites s1's Goals.
    let plan = b.read(PLAN);
    let start = plan.find("<<<<<<<").expect("conflict markers");
    let end = plan.find(">>>>>>>").expect("conflict markers");
    let end = end + plan[end..].find('\n').expect("line end") + 1;
    let resolved = format!("{}risk text, both\n{}", &plan[..start], &plan[end..])
        .replace("goal text", "goal text, by s2");
    b.write(PLAN, &resolved);
    b.git(&["add", PLAN]);
    let r = git_as(
        &b,
        Some("s2"),
        &["-c", "core.editor=true", "rebase", "--continue"],
    );
    r.stderr_has("inside an active claim of session s1");
    r.stderr_has("under `Goals`");
    r.stderr_has("`git rebase --abort`");
    assert_eq!(
        b.git(&["rev-parse", "refs/heads/topic"]).trim(),
        before,
        "topic did not move"
    );
    b.git(&["rebase", "--abort"]);
    assert_eq!(head(&b), before);

    // Resolved inside Risks only: the rebase lands.
    let r = git_as(&b, Some("s2"), &["rebase", "main"]);
    assert_ne!(r.code, 0);
    let plan = b.read(PLAN);
    let start = plan.find("<<<<<<<").expect("conflict markers");
    let end = plan.find(">>>>>>>").expect("conflict markers");
    let end = end + plan[end..].find('\n').expect("line end") + 1;
    b.write(
        PLAN,
        &format!("{}risk text, both\n{}", &plan[..start], &plan[end..]),
    );
    b.git(&["add", PLAN]);
    let r = git_as(
        &b,
        Some("s2"),
        &["-c", "core.editor=true", "rebase", "--continue"],
    );
    r.ok();
    assert!(!r.stderr.contains("bsi"), "{}", r.stderr);
    assert_ne!(b.git(&["rev-parse", "refs/heads/topic"]).trim(), before);
}

#[test]
fn git_am_into_anothers_claim_is_refused_and_a_free_patch_passes() {
    let b = sections();
    let (goals, risks) = feat_commits(&b);
    let patch = |id: &str| {
        let out = b.git(&["format-patch", "-1", "--stdout", id]);
        let p = b.path().join(format!("{}.patch", &id[..7]));
        std::fs::write(&p, out).expect("write patch");
        p.to_string_lossy().into_owned()
    };
    let (pg, pr) = (patch(&goals), patch(&risks));
    // The patches come from elsewhere: no branch here has their commits.
    b.git(&["branch", "-q", "-D", "feat"]);
    let before = head(&b);
    let r = git_as(&b, Some("s2"), &["am", "-q", &pg]);
    refused(&b, &r, &before);
    r.stderr_has("`git am --abort`");
    b.git(&["am", "--abort"]);
    assert_eq!(head(&b), before);
    let r = git_as(&b, Some("s2"), &["am", "-q", &pr]);
    r.ok();
    assert!(!r.stderr.contains("bsi"), "{}", r.stderr);
    assert!(b.read(PLAN).contains("risk text, feat"));
}

#[test]
fn update_ref_to_a_new_commit_is_judged_and_fetch_reset_and_branch_are_not() {
    let b = sections();
    let before = head(&b);
    edit_plan(&b, "goal text", "goal text, by hand");
    b.git(&["add", PLAN]);
    let tree = b.git(&["write-tree"]).trim().to_string();
    let made = b.git_stdin(&["commit-tree", &tree, "-p", &before], "by hand\n");
    let made = made.trim();
    let r = git_as(&b, Some("s2"), &["update-ref", "refs/heads/main", made]);
    refused(&b, &r, &before);
    r.stderr_has("run the command again as `git -c bsi.hookMode=off …`");
    b.git(&["reset", "-q", "--hard"]);
    // No new commit: a branch, a reset back, a reset to another branch's
    // tip; a commit of s2's own found again passes.
    silent(&git_as(&b, Some("s2"), &["branch", "other"]));
    edit_plan(&b, "risk text", "risk text, s2");
    git_as(&b, Some("s2"), &["commit", "-q", "-a", "-m", "risks"]).ok();
    let risks = head(&b);
    silent(&git_as(
        &b,
        Some("s2"),
        &["reset", "-q", "--hard", "HEAD~1"],
    ));
    silent(&git_as(&b, Some("s2"), &["reset", "-q", "--hard", &risks]));
    silent(&git_as(&b, Some("s2"), &["reset", "-q", "--hard", "other"]));
    assert_eq!(head(&b), before);
    // bsi's own writes of the registry branch pass as before.
    b.bsi(&["open", "README.md", "--session", "s3"]).ok();
    b.bsi(&["close", "s3"]).ok();
}

/// Issue case 4: a submodule moved to another commit inside a claimed
/// folder.
#[test]
fn a_submodule_moved_inside_a_claimed_folder_is_judged_and_verified() {
    let b = hooked();
    let lib = crate::common::scratch("bsi-sub");
    let g = |args: &[&str]| {
        let r = std::process::Command::new("git")
            .current_dir(lib.path())
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", lib.path())
            .output()
            .expect("git");
        assert!(r.status.success(), "{r:?}");
        String::from_utf8_lossy(&r.stdout).trim().to_string()
    };
    g(&["init", "-q", "-b", "main"]);
    for (i, msg) in ["one", "two"].iter().enumerate() {
        std::fs::write(lib.path().join("f"), format!("{i}\n")).expect("write");
        g(&["add", "f"]);
        g(&[
            "-c",
            "user.name=x",
            "-c",
            "user.email=x@x",
            "commit",
            "-q",
            "-m",
            msg,
        ]);
    }
    let first = g(&["rev-parse", "HEAD~1"]);
    let url = lib.path().to_string_lossy().into_owned();
    b.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        &url,
        "vendor/lib",
    ]);
    commit_past_hooks(&b, "a submodule");
    b.bsi(&["open", "vendor/", "--session", "s1", "--agent", "alice"])
        .ok();
    b.bsi(&["open", "README.md", "--session", "s2"]).ok();
    let before = head(&b);
    b.git(&["-C", "vendor/lib", "checkout", "-q", &first]);
    b.git(&["add", "vendor/lib"]);
    let r = git_as(&b, Some("s2"), &["commit", "-q", "-m", "older lib"]);
    r.code(1);
    r.stderr_has("vendor/lib is inside an active claim of session s1");
    assert_eq!(head(&b), before);
    git_as(
        &b,
        Some("s2"),
        &["-c", "bsi.hookMode=off", "commit", "-q", "-m", "older lib"],
    )
    .ok();
    let v = b.bsi(&["verify", "s2"]);
    v.code(6);
    v.stdout_has("vendor/lib — outside every scope of s2");
}

/// A reference-transaction hook that was there before keeps running first,
/// with the updates on its stdin, and bsi still judges after it.
#[test]
fn an_existing_reference_transaction_hook_still_reads_the_updates() {
    let b = Brain::new();
    let hooks = b.path().join(".git/hooks");
    std::fs::create_dir_all(&hooks).expect("mkdir");
    let log = b.path().join(".git/rt.log");
    let script = format!(
        "#!/bin/sh\nprintf '%s:' \"$1\" >> '{}'\ncat >> '{}'\n",
        log.display(),
        log.display()
    );
    let hook = hooks.join("reference-transaction");
    std::fs::write(&hook, script).expect("write hook");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    b.bsi(&["hook", "install"])
        .ok()
        .stdout_has("reference-transaction: installed; the existing hook is kept and runs first");
    b.bsi(&["open", "projets/plan.md#Goals", "--session", "s1"])
        .ok();
    b.bsi(&["open", "projets/plan.md#Risks", "--session", "s2"])
        .ok();
    let _ = std::fs::remove_file(&log);
    edit_plan(&b, "risk text", "risk text, s2");
    silent(&git_as(
        &b,
        Some("s2"),
        &["commit", "-q", "-a", "-m", "risks"],
    ));
    let seen = std::fs::read_to_string(&log).expect("the chained hook ran");
    let main = format!(" {} refs/heads/main", head(&b));
    assert!(seen.contains(&main), "{seen}");
    assert!(
        seen.contains("prepared:") && seen.contains("committed:"),
        "{seen}"
    );
    // bsi still judges after it.
    b.git(&["checkout", "-q", "-b", "feat"]);
    edit_plan(&b, "goal text", "goal text, feat");
    commit_past_hooks(&b, "goals on feat");
    let goals = head(&b);
    b.git(&["checkout", "-q", "main"]);
    let before = head(&b);
    let r = git_as(&b, Some("s2"), &["cherry-pick", &goals]);
    assert_ne!(r.code, 0);
    assert_eq!(head(&b), before);
    r.stderr_has("inside an active claim of session s1");
}

/// A commit is judged once: by pre-commit, or — past it with
/// `--no-verify` — by the reference-transaction hook.
#[test]
fn a_commit_is_judged_once_and_no_verify_does_not_land_it() {
    let b = sections();
    b.git(&["config", "bsi.hookMode", "warn"]);
    edit_plan(&b, "goal text", "goal text, s2");
    let r = git_as(&b, Some("s2"), &["commit", "-q", "-a", "-m", "goals"]);
    r.ok();
    let said = |r: &Run| r.stderr.matches("claim of session s1").count();
    assert_eq!(said(&r), 1, "{}", r.stderr);
    edit_plan(&b, "goal text, s2", "goal text, s2 again");
    let r = git_as(
        &b,
        Some("s2"),
        &["commit", "-q", "-a", "--no-verify", "-m", "goals"],
    );
    r.ok();
    assert_eq!(said(&r), 1, "{}", r.stderr);

    b.git(&["config", "bsi.hookMode", "normal"]);
    edit_plan(&b, "goal text, s2 again", "goal text, s2 once more");
    let before = head(&b);
    let r = git_as(
        &b,
        Some("s2"),
        &["commit", "-q", "-a", "--no-verify", "-m", "goals"],
    );
    refused(&b, &r, &before);
    assert_eq!(said(&r), 1, "{}", r.stderr);
    r.stderr_has("`git -c bsi.hookMode=off commit …` for a commit");
    // The work is still there, staged.
    assert!(b.read(PLAN).contains("goal text, s2 once more"));
    git_as(
        &b,
        Some("s2"),
        &[
            "-c",
            "bsi.hookMode=off",
            "commit",
            "-q",
            "-a",
            "-m",
            "goals",
        ],
    )
    .ok();
    assert_ne!(head(&b), before);
}

/// An octopus merge (`git merge b1 b2`) is judged by the same three-way
/// rule, part by part, against each branch it merges: the merger's own
/// change inside another's claim is refused, dropping a branch's work
/// (`-s ours`) is refused, and the plain octopus of others' committed work
/// passes — also when two branches changed the same claimed section.
#[test]
fn an_octopus_merge_is_judged_by_the_three_way_rule() {
    let b = sections();
    // A second line under Goals, s1's own: two branches can change the
    // section at once without a conflict.
    edit_plan(&b, "goal text\n", "goal text\n\ngoal two\n");
    git_as(&b, Some("s1"), &["commit", "-q", "-a", "-m", "goal two"]).ok();
    let branch = |name: &str, from: &str, to: &str| {
        b.git(&["checkout", "-q", "-b", name, "main"]);
        edit_plan(&b, from, to);
        git_as(&b, Some("s1"), &["commit", "-q", "-a", "-m", name]).ok();
    };
    branch("b1", "goal text\n", "goal text, b1\n");
    branch("b2", "q2 text", "q2 text, b2");
    branch("b3", "goal two", "goal two, b3");
    b.git(&["checkout", "-q", "main"]);
    edit_plan(&b, "risk text", "risk text, s2");
    git_as(&b, Some("s2"), &["commit", "-q", "-a", "-m", "risks"]).ok();
    let before = head(&b);
    let user_plan = b.read(PLAN);

    // The merger's own change inside s1's Goals, made during the merge.
    git_as(&b, Some("s2"), &["merge", "--no-commit", "-q", "b1", "b2"]).ok();
    edit_plan(&b, "goal text, b1", "goal text, b1, and s2");
    b.git(&["add", PLAN]);
    let r = git_as(&b, Some("s2"), &["commit", "-q", "-m", "octopus"]);
    refused(&b, &r, &before);
    assert_eq!(r.stderr.matches("claim of session s1").count(), 1);
    b.git(&["merge", "--abort"]);
    assert_eq!(b.read(PLAN), user_plan);

    // A merge git concludes by itself that keeps main's plan (`-s ours`):
    // it drops s1's committed work on b1 and b2.
    let r = git_as(
        &b,
        Some("s2"),
        &["merge", "-q", "-s", "ours", "--no-edit", "b1", "b2"],
    );
    refused(&b, &r, &before);
    r.stderr_has("bsi: merge refused.");
    b.git(&["merge", "--abort"]);
    assert_eq!(b.read(PLAN), user_plan);

    // The plain octopus of s1's committed work passes without a word, also
    // with b1 and b3 both changing the Goals section.
    let r = git_as(
        &b,
        Some("s2"),
        &["merge", "-q", "--no-edit", "b1", "b2", "b3"],
    );
    silent(&r);
    assert_eq!(parents(&b), 4);
    let plan = b.read(PLAN);
    for text in [
        "goal text, b1",
        "q2 text, b2",
        "goal two, b3",
        "risk text, s2",
    ] {
        assert!(plan.contains(text), "{text}: {plan}");
    }
    let j = b.bsi(&["verify", "s2", "--json"]);
    j.ok();
    assert_eq!(j.json()["clean"], true, "{}", j.stdout);
    assert_eq!(b.git(&["status", "--porcelain"]), "");
}

/// The pre-commit hook run by hand (no git command above it) judges the
/// index every time: the mark that spares a hook manager's second run of
/// one commit is kept only for a git command.
#[test]
fn a_pre_commit_hook_run_by_hand_judges_every_time() {
    let b = sections();
    edit_plan(&b, "goal text", "s2 in the goals");
    b.git(&["add", PLAN]);
    let s2 = [("BSI_SESSION", "s2")];
    let first = b.bsi_env(&["hook", "pre-commit"], &s2);
    assert_ne!(first.code, 0, "{first:?}");
    first.stderr_has("inside an active claim of session s1");
    // The same index, judged again: said again.
    let again = b.bsi_env(&["hook", "pre-commit"], &s2);
    assert_eq!(again.code, first.code, "{again:?}");
    again.stderr_has("inside an active claim of session s1");
    // The change put back: the same HEAD, another index, which passes.
    b.git(&["checkout", "-q", "HEAD", "--", PLAN]);
    edit_plan(&b, "risk text", "s2's own risk");
    b.git(&["add", PLAN]);
    silent(&b.bsi_env(&["hook", "pre-commit"], &s2));
    assert!(!b.path().join(".git/bsi-judged").exists());
}
