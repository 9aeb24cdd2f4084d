//! Every door into a branch besides `git commit`: a merge git concludes by
//! itself, a merge that takes a side whole, revert, cherry-pick, a rebase
//! with a hand-resolved conflict, `git am`, `git update-ref`, submodules —
//! real git commands as users type them, through the installed hooks.

use crate::common::{Brain, Machines, Run};
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
/// A commit of `Goals` edited by hand on `before`, made with
/// `git commit-tree` (no hook runs) and not on any branch.
fn commit_by_hand(b: &Brain, before: &str) -> String {
    edit_plan(b, "goal text", "goal text, by hand");
    b.git(&["add", PLAN]);
    let tree = b.git(&["write-tree"]).trim().to_string();
    b.git_stdin(&["commit-tree", &tree, "-p", before], "by hand\n")
        .trim()
        .to_string()
}

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
    let made = commit_by_hand(&b, &before);
    let made = made.as_str();
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

/// A transaction of many updates (`git update-ref --stdin`, `git fetch
/// --atomic`, every fetch from git 2.51) is read whole by bsi's script: a
/// branch its last line moves is judged, and the chained hook is handed
/// every line.
#[test]
fn a_batched_transaction_is_read_whole() {
    let b = sections();
    let log = b.path().join(".git/rt.log");
    let chained = b
        .path()
        .join(".git/hooks/reference-transaction.bsi-chained");
    std::fs::write(&chained, format!("#!/bin/sh\ncat >> '{}'\n", log.display()))
        .expect("write hook");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&chained, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let before = head(&b);
    let made = commit_by_hand(&b, &before);
    let made = made.as_str();
    let mut input = String::from("start\n");
    for i in 0..12 {
        input.push_str(&format!("create refs/tags/t{i:02} {before}\n"));
    }
    input.push_str(&format!("update refs/heads/main {made} {before}\ncommit\n"));
    let mut cmd = std::process::Command::new("git");
    crate::common::clean_env(&mut cmd, b.path());
    cmd.current_dir(b.path())
        .env("BSI_NOW", &b.now)
        .env("BSI_SESSION", "s2")
        .args(["update-ref", "--stdin"]);
    let r = crate::common::output_with_stdin(&mut cmd, &input);
    refused(&b, &r, &before);
    let seen = std::fs::read_to_string(&log).expect("the chained hook ran");
    // Each state of the transaction — prepared, then aborted, and on a
    // newer git preparing before them — hands it every update: the 12
    // tags and main (git 2.47 adds HEAD, which follows main).
    let main = format!("{before} {made} refs/heads/main\n");
    let states = seen.matches(&main).count();
    assert!((2..=3).contains(&states), "{seen}");
    for i in 0..12 {
        let tag = format!(" refs/tags/t{i:02}\n");
        assert_eq!(seen.matches(&tag).count(), states, "{seen}");
    }
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

/// One step of [`the_ordinary_git_operations_stay_free`], run in order.
enum Step {
    /// A git command of the acting session s1 on alice's clone, named as
    /// the issue names it. `{root}`, `{url}`, `{wt}` and `{REV}` (a
    /// revision, resolved when the step runs) are filled in.
    Git(&'static str, &'static [&'static str]),
    /// Session s1 on alice's clone commits inside its own `Risks`.
    Mine,
    /// Session s1 edits its `Risks` in the work tree, without a commit.
    Edit,
    /// Session s2 on bob's clone pulls, commits inside its own `Goals` and
    /// pushes: others' judged work waiting on the remote.
    Theirs,
    /// A git command of s2 on bob's clone.
    Bob(&'static [&'static str]),
}

/// Rewrites the line of plan.md that starts with `word` to `word <n>`.
fn bump(b: &Brain, word: &str, n: u32) {
    let plan = b.read(PLAN);
    let line = plan
        .lines()
        .find(|l| l.starts_with(word))
        .unwrap_or_else(|| panic!("no {word:?} line in {plan}"));
    b.write(PLAN, &plan.replacen(line, &format!("{word} {n}"), 1));
}

/// The everyday git of a session that commits inside its own claim while
/// another session, on another clone of the same remote, holds a claim
/// and pushes work inside it: every one of these exits 0. A refusal names
/// the step and what bsi said.
#[test]
fn the_ordinary_git_operations_stay_free() {
    use Step::{Bob, Edit, Git, Mine, Theirs};
    let m = crate::common::Machines::new();
    let (a, b) = (&m.a, &m.b);
    a.bsi(&["hook", "install"]).ok();
    b.bsi(&["hook", "install"]).ok();
    // bob's s2 holds Goals and publishes the claim; alice's s1 holds Risks.
    b.bsi(&[
        "open",
        "projets/plan.md#Goals",
        "--session",
        "s2",
        "--agent",
        "bob",
    ])
    .ok();
    a.bsi(&[
        "open",
        "projets/plan.md#Risks",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    a.git(&["config", "pull.rebase", "false"]);
    assert!(
        a.bsi(&["status"]).stdout.contains("s2"),
        "s2's claim is seen"
    );
    let root = a.git(&["rev-list", "--max-parents=0", "HEAD"]);
    let root = root.trim();
    let url = m.bare.path().to_string_lossy().into_owned();
    let wt_home = crate::common::scratch("bsi-wt");
    let wt = wt_home.path().join("wt").to_string_lossy().into_owned();

    let steps: &[Step] = &[
        Theirs,
        Mine,
        Git("fetch", &["fetch", "-q", "origin"]),
        Git(
            "pull --rebase",
            &["pull", "-q", "--rebase", "origin", "main"],
        ),
        Git(
            "reset --hard ORIG_HEAD after one's own pull",
            &["reset", "-q", "--hard", "ORIG_HEAD"],
        ),
        Git(
            "pull --no-rebase",
            &["pull", "-q", "--no-rebase", "--no-edit", "origin", "main"],
        ),
        Git("push", &["push", "-q", "origin", "main"]),
        Theirs,
        Git("pull --ff-only", &["pull", "-q", "--ff-only"]),
        Theirs,
        Git(
            "pull URL main",
            &["pull", "-q", "--no-rebase", "--no-edit", "{url}", "main"],
        ),
        Theirs,
        Mine,
        Git(
            "pull origin main",
            &["pull", "-q", "--no-edit", "origin", "main"],
        ),
        Theirs,
        Mine,
        Git("fetch, again", &["fetch", "-q", "origin"]),
        Git(
            "rebase of one's own commits",
            &["rebase", "-q", "origin/main"],
        ),
        Git("branch create", &["branch", "topic"]),
        Git("switch", &["switch", "-q", "topic"]),
        Mine,
        Git("checkout of a branch", &["checkout", "-q", "main"]),
        Git("cherry-pick of one's own commit", &["cherry-pick", "topic"]),
        Git("branch rename", &["branch", "-m", "topic", "topic2"]),
        Git("branch delete", &["branch", "-D", "topic2"]),
        Git("switch -c", &["switch", "-q", "-c", "side"]),
        Git("switch back", &["switch", "-q", "main"]),
        Git("branch delete, merged", &["branch", "-d", "side"]),
        Mine,
        Edit,
        Git(
            "commit --amend of one's own commit",
            &["commit", "-q", "-a", "--amend", "--no-edit"],
        ),
        Edit,
        Git("stash push", &["stash", "push", "-q"]),
        Git("stash pop", &["stash", "pop", "-q"]),
        Git("commit", &["commit", "-q", "-a", "-m", "risks, stashed"]),
        Git("tag, light", &["tag", "light"]),
        Git("tag, annotated", &["tag", "-a", "-m", "v1", "v1"]),
        Git("notes add", &["notes", "add", "-m", "reviewed", "HEAD"]),
        Git("replace", &["replace", "{HEAD~1}", "{HEAD~2}"]),
        Git("replace -d", &["replace", "-d", "{HEAD~1}"]),
        Git("bisect start", &["bisect", "start"]),
        Git("bisect bad", &["bisect", "bad", "HEAD"]),
        Git("bisect good", &["bisect", "good", "{root}"]),
        Git("bisect reset", &["bisect", "reset"]),
        Git("gc", &["gc", "-q"]),
        Git("pack-refs", &["pack-refs", "--all"]),
        Bob(&["push", "-q", "origin", "main:refs/heads/gone"]),
        Git("fetch, a new branch", &["fetch", "-q"]),
        Bob(&["push", "-q", "origin", ":refs/heads/gone"]),
        Git("fetch --prune", &["fetch", "-q", "--prune"]),
        Git(
            "worktree add",
            &["worktree", "add", "-q", "-b", "wt", "{wt}"],
        ),
        Git("worktree remove", &["worktree", "remove", "{wt}"]),
    ];

    let (mut mine, mut theirs) = (0, 0);
    let fail = |what: &str, r: &Run| {
        assert!(
            r.code == 0 && !r.stderr.contains("refused"),
            "{what}: exit {}, bsi said:\n{}",
            r.code,
            r.stderr
        );
    };
    for step in steps {
        match step {
            Git(name, args) => {
                let args: Vec<String> = args
                    .iter()
                    .map(|arg| match *arg {
                        "{root}" => root.to_string(),
                        "{url}" => url.clone(),
                        "{wt}" => wt.clone(),
                        _ => match arg.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
                            Some(rev) => a
                                .git(&["--no-replace-objects", "rev-parse", rev])
                                .trim()
                                .to_string(),
                            None => (*arg).to_string(),
                        },
                    })
                    .collect();
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                fail(
                    &format!("{name} (`git {}`)", args.join(" ")),
                    &git_as(a, Some("s1"), &args),
                );
            }
            Mine | Edit => {
                mine += 1;
                bump(a, "risk text", mine);
                if matches!(step, Mine) {
                    let r = git_as(a, Some("s1"), &["commit", "-q", "-a", "-m", "risks"]);
                    fail("s1's commit inside its own Risks", &r);
                }
            }
            Theirs => {
                theirs += 1;
                let r = git_as(b, Some("s2"), &["pull", "-q", "--no-rebase", "--no-edit"]);
                fail("bob's pull", &r);
                bump(b, "goal text", theirs);
                let r = git_as(b, Some("s2"), &["commit", "-q", "-a", "-m", "goals"]);
                fail("s2's commit inside its own Goals", &r);
                fail("bob's push", &git_as(b, Some("s2"), &["push", "-q"]));
            }
            Bob(args) => fail(
                &format!("bob's `git {}`", args.join(" ")),
                &git_as(b, Some("s2"), args),
            ),
        }
    }
    // alice's main holds both sessions' last work; nothing is left over.
    let plan = a.read(PLAN);
    assert!(plan.contains(&format!("goal text {theirs}\n")), "{plan}");
    assert!(plan.contains(&format!("risk text {mine}\n")), "{plan}");
    assert_eq!(a.git(&["status", "--porcelain"]), "");
    assert_eq!(a.git(&["branch", "--show-current"]).trim(), "main");
    let j = a.bsi(&["verify", "s1", "--json"]);
    j.ok();
    assert_eq!(j.json()["clean"], true, "{}", j.stdout);
}

/// The registry branch as machine `b` last fetched it.
const TRACKING: &str = "refs/remotes/origin/brain-index";

/// What a door says when it judged on the view last fetched.
const OLDER_VIEW: &str = "origin/brain-index could not be fetched now";

/// Two machines sharing a remote, bsi's hooks installed on bob's (`b`).
fn machines_with_hooks() -> Machines {
    let m = Machines::new();
    m.b.bsi(&["hook", "install"]).ok();
    m
}

/// alice's session `sess-a` claims plan.md#Goals on her machine, which
/// publishes the claim at once.
fn alice_claims_goals(m: &Machines) {
    m.a.bsi(&[
        "open",
        "projets/plan.md#Goals",
        "--session",
        "sess-a",
        "--agent",
        "alice",
    ])
    .ok()
    .stdout_has("Claim opened");
}

/// bob rewrites a line of Goals and commits it.
fn bob_commits_goals(m: &Machines, to: &str) -> Run {
    edit_plan(&m.b, "goal text", to);
    m.b.git(&["add", PLAN]);
    git_as(&m.b, None, &["commit", "-q", "-m", "goals"])
}

/// Issue case 6: machine 1 claims `projets/plan.md#Goals` and publishes
/// it; machine 2, hooks installed, commits inside Goals without having
/// fetched since. The hook fetches the registry branch first: refused.
#[test]
fn a_claim_published_since_the_last_fetch_refuses_the_commit() {
    let m = machines_with_hooks();
    let last_fetched = m.b.git(&["rev-parse", TRACKING]);
    alice_claims_goals(&m);
    // bob's clone has not fetched since: its view has no claim.
    assert_eq!(m.b.git(&["rev-parse", TRACKING]), last_fetched);
    let before = head(&m.b);
    let r = bob_commits_goals(&m, "goal text, bob");
    assert_ne!(r.code, 0, "the commit landed: {r:?}");
    r.stderr_has("inside an active claim of session sess-a");
    r.stderr_has("commit refused");
    assert!(!r.stderr.contains(OLDER_VIEW), "{}", r.stderr);
    assert_eq!(head(&m.b), before, "the branch did not move");
    // The claim came with the registry branch, fetched alone.
    assert_ne!(m.b.git(&["rev-parse", TRACKING]), last_fetched);
    assert_eq!(
        m.b.git(&["rev-parse", TRACKING]),
        m.a.git(&["rev-parse", "brain-index"])
    );
    // Work outside the claim still lands, without a word of bsi's.
    m.b.git(&["reset", "-q", "--hard"]);
    m.b.write("notes/bob.md", "# Bob\n");
    m.b.git(&["add", "notes/bob.md"]);
    silent(&git_as(&m.b, None, &["commit", "-q", "-m", "free"]));
}

/// The remote gone (its repository moved away): the commit is judged on
/// the claims as last fetched — a claim seen then still refuses, free work
/// lands — and one line says so, once per git command.
#[test]
fn with_the_remote_gone_the_commit_is_judged_on_the_last_view_and_one_line_says_so() {
    let m = machines_with_hooks();
    alice_claims_goals(&m);
    // bob's view is fetched now (`bsi status` fetches, and notes when).
    m.b.bsi(&["status"]).ok();
    let moved = std::path::PathBuf::from(format!("{}-moved", m.bare.path().display()));
    std::fs::rename(m.bare.path(), &moved).expect("move the remote away");
    let before = head(&m.b);
    let r = bob_commits_goals(&m, "goal text, bob");
    assert_ne!(r.code, 0, "the commit landed: {r:?}");
    r.stderr_has("inside an active claim of session sess-a");
    assert_eq!(r.stderr.matches(OLDER_VIEW).count(), 1, "{}", r.stderr);
    r.stderr_has("judged against the claims as fetched 0m ago");
    assert_eq!(head(&m.b), before);
    m.b.git(&["reset", "-q", "--hard"]);
    m.b.write("notes/bob.md", "# Bob\n");
    m.b.git(&["add", "notes/bob.md"]);
    let r = git_as(&m.b, None, &["commit", "-q", "-m", "free"]);
    r.ok();
    assert_eq!(r.stderr.matches(OLDER_VIEW).count(), 1, "{}", r.stderr);
    // Two commits picked by one git command: asked, and said, once.
    m.b.git(&["checkout", "-q", "-b", "side", "HEAD~1"]);
    for n in ["one", "two"] {
        m.b.write(&format!("notes/{n}.md"), "# Note\n");
        m.b.git(&["add", "-A"]);
        m.b.git(&["-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", n]);
    }
    m.b.git(&["checkout", "-q", "main"]);
    let r = git_as(&m.b, None, &["cherry-pick", "main..side"]);
    r.ok();
    assert_eq!(r.stderr.matches(OLDER_VIEW).count(), 1, "{}", r.stderr);
    // What the line proposes runs as printed.
    let line = r
        .stderr
        .lines()
        .find(|l| l.contains(OLDER_VIEW))
        .expect("line");
    assert!(line.contains("`bsi status`"), "{line}");
    m.b.bsi(&["status"]).ok();
    std::fs::rename(&moved, m.bare.path()).expect("put the remote back");
}

/// A remote that does not answer within `hook_fetch_timeout` (here the
/// clone's `bsi.hookFetchTimeout`) is given up at the bound: the commit is
/// judged on the view last fetched, and the line says why.
#[test]
fn a_remote_slower_than_the_bound_is_given_up_and_said() {
    let m = machines_with_hooks();
    m.b.git(&["config", "bsi.hookFetchTimeout", "300ms"]);
    // The remote's side of the fetch hangs.
    m.b.git(&[
        "config",
        "remote.origin.uploadpack",
        "sleep 60; git-upload-pack",
    ]);
    alice_claims_goals(&m);
    let r = bob_commits_goals(&m, "goal text, bob");
    r.ok();
    assert_eq!(r.stderr.matches(OLDER_VIEW).count(), 1, "{}", r.stderr);
    r.stderr_has("(git gave no answer within 0.3 s)");
}

/// A remote on this machine is read, not fetched, when its registry
/// branch is where the clone last saw it — packed or loose, as git reads
/// it — and fetched as soon as it moved: here the fetch itself cannot
/// work, so the line tells which happened.
#[test]
fn a_local_remote_is_fetched_only_when_its_registry_branch_moved() {
    let m = machines_with_hooks();
    let bare = m.bare.path().to_str().expect("utf-8 path");
    let git_bare = |args: &[&str]| {
        let mut all = vec!["--git-dir", bare];
        all.extend_from_slice(args);
        m.b.git(&all)
    };
    git_bare(&["pack-refs", "--all"]);
    assert!(m.bare.path().join("packed-refs").is_file());
    assert!(!m.bare.path().join("refs/heads/brain-index").exists());
    m.b.git(&["config", "remote.origin.uploadpack", "false"]);
    m.b.write("notes/one.md", "# One\n");
    m.b.git(&["add", "-A"]);
    silent(&git_as(&m.b, None, &["commit", "-q", "-m", "one"]));
    // The remote moves: the commit has a claim to fetch, and cannot.
    alice_claims_goals(&m);
    m.b.write("notes/two.md", "# Two\n");
    m.b.git(&["add", "-A"]);
    let r = git_as(&m.b, None, &["commit", "-q", "-m", "two"]);
    r.ok();
    assert_eq!(r.stderr.matches(OLDER_VIEW).count(), 1, "{}", r.stderr);
}
