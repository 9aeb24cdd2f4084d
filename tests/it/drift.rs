//! Drift: a commit from a clone without bsi's hooks rewrites a claimed
//! section and arrives by `git pull`; `status` (human and JSON),
//! `watchdog`, `verify`, `close` and the holder's session-start hook each
//! say which commit, which lines and whose. The holder's own commits are
//! not drift.

use std::path::Path;
use std::process::Command;

use crate::agent_hook::{event, with_stdin};
use crate::common::{Brain, NOW, Run, clean_env};

const PLAN: &str = "projets/plan.md";

/// `NOW` plus `minutes`, as RFC 3339.
fn after(minutes: i64) -> String {
    let t = chrono::DateTime::parse_from_rfc3339(NOW).expect("NOW")
        + chrono::Duration::minutes(minutes);
    t.to_rfc3339()
}

/// Runs git in `dir` with its commits dated `date`, and `BSI_SESSION` set
/// when `session` is.
fn git_dated(dir: &Path, date: &str, session: Option<&str>, args: &[&str]) -> Run {
    let mut cmd = Command::new("git");
    clean_env(&mut cmd, dir);
    cmd.current_dir(dir)
        .env("BSI_NOW", date)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .args(args);
    if let Some(s) = session {
        cmd.env("BSI_SESSION", s);
    }
    Run::from_output(cmd.output().expect("run git"))
}

/// Rewrites one line of the plan in `c` and commits it at `date` with
/// `message`, as `session` when given.
#[track_caller]
fn commit_plan(c: &Brain, date: &str, session: Option<&str>, from: &str, to: &str, message: &str) {
    let plan = c.read(PLAN);
    assert!(plan.contains(from), "{from:?} not in {plan}");
    c.write(PLAN, &plan.replacen(from, to, 1));
    c.git(&["add", PLAN]);
    git_dated(c.path(), date, session, &["commit", "-q", "-m", message]).ok();
}

/// The holder's clone `b` (bsi's hooks on, s1 holds Goals, published) and
/// a clone of the same remote without bsi (no `bsi init`, no hooks).
fn holder_and_hookless() -> (Brain, Brain, tempfile::TempDir) {
    let b = Brain::new();
    b.bsi(&["hook", "install"]).ok();
    let remote = b.publish_to_bare();
    b.bsi(&["open", "projets/plan.md#Goals", "--session", "s1"])
        .ok();
    let other = Brain::clone_of(remote.path(), "bob");
    (b, other, remote)
}

/// `b` pulls what the remote has, then reads as of `NOW` + 5 minutes.
fn pull(b: &mut Brain) {
    b.git(&["pull", "-q", "--no-rebase", "origin", "main"]);
    b.now = after(5);
}

#[test]
fn a_hookless_clones_change_pulled_into_a_claimed_section_is_reported_everywhere() {
    let (mut b, other, _remote) = holder_and_hookless();
    commit_plan(
        &other,
        &after(2),
        None,
        "goal text",
        "goal text, rewritten by bob",
        "bob's goals",
    );
    other.git(&["push", "-q", "origin", "main"]);
    pull(&mut b);
    let id = b.git(&["rev-parse", "HEAD"]).trim().to_string();
    let short = &id[..7];
    assert!(b.head_subject().contains("bob's goals"));
    let registry = b.registry();
    let user = b.user_state();

    let said = format!(
        "drift: projets/plan.md#Goals of s1 changed by commit {short} (bob <bob@example.com>, no session), not by s1: line 7 under `Goals` in projets/plan.md; see it with `git show {short} -- projets/plan.md`, then keep it or put those lines back as you had them by hand (only those: the commit may change more)"
    );

    // status, human and JSON.
    let r = b.bsi(&["status"]);
    r.ok().stdout_has(&said);
    let v = b.bsi(&["status", "--json"]).json();
    let d = &v["drift"][0];
    assert_eq!(d["session"], "s1");
    assert_eq!(d["scope"], "projets/plan.md#Goals");
    assert_eq!(d["commit"], id.as_str());
    assert_eq!(d["author"], "bob <bob@example.com>");
    assert!(d["by_session"].is_null());
    assert_eq!(d["path"], PLAN);
    assert_eq!((d["start"].as_u64(), d["end"].as_u64()), (Some(7), Some(7)));
    assert_eq!(d["heading"], "Goals");
    assert_eq!(v["drift"].as_array().map(Vec::len), Some(1));

    // verify: the commit arrived by pull, it is not s1's.
    let r = b.bsi(&["verify", "s1"]);
    r.ok()
        .stdout_has(&said)
        .stdout_has("drift: 1 commit not of s1 changed its claims since they were opened");
    let v = b.bsi(&["verify", "s1", "--json"]).json();
    assert_eq!(v["drift"][0]["commit"], id.as_str());

    // The reads wrote nothing, and left the user's work as it was.
    assert_eq!(b.registry(), registry);
    assert_eq!(b.user_state(), user);

    // The holder's agent, when its session starts again.
    let r = with_stdin(
        &b,
        &["hook", "session-start", "--tool", "claude"],
        &event(&b, "claude-sessionstart.json"),
        &[("BSI_SESSION", "s1")],
    );
    r.ok();
    let context = r.json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context")
        .to_string();
    assert!(
        context.contains("Changed under your claims by commits that are not yours"),
        "{context}"
    );
    assert!(context.contains(&said), "{context}");
    let next = context.find("\nNext:").expect("next");
    assert!(context.find(&said).expect("said") < next, "{context}");

    // watchdog.
    let r = b.bsi(&["watchdog"]);
    r.ok().stdout_has(&said);

    // close: the holder's last chance to hear of it.
    let r = b.bsi(&["close", "s1"]);
    r.ok()
        .stdout_has(&said)
        .stdout_has("drift: 1 commit not of s1 changed its claims since they were opened");
    assert!(b.history().iter().any(|h| h.contains("s1")));
    // Closed: nothing is held, nothing drifts.
    let r = b.bsi(&["status"]);
    assert!(!r.stdout.contains("drift:"), "{}", r.stdout);
}

#[test]
fn close_json_names_the_drift_of_the_claims_it_closes() {
    let (mut b, other, _remote) = holder_and_hookless();
    commit_plan(
        &other,
        &after(2),
        None,
        "goal text",
        "goal text, bob",
        "bob",
    );
    other.git(&["push", "-q", "origin", "main"]);
    pull(&mut b);
    let id = b.git(&["rev-parse", "HEAD"]).trim().to_string();
    let v = b.bsi(&["close", "s1", "--json"]).json();
    assert_eq!(v["verify"], "clean");
    assert_eq!(v["drift"][0]["commit"], id.as_str());
    assert_eq!(v["drift"][0]["session"], "s1");
}

#[test]
fn the_holders_own_commits_are_not_drift_and_another_sessions_are() {
    let (mut b, other, _remote) = holder_and_hookless();
    // s1's own commit, tagged by the hooks of its clone.
    commit_plan(
        &b,
        &after(1),
        Some("s1"),
        "goal text",
        "goal text by s1",
        "s1 goals",
    );
    assert!(
        b.git(&["log", "-1", "--format=%B"])
            .contains("BSI-Session: s1")
    );
    b.git(&["push", "-q", "origin", "main"]);
    // A commit tagged s1 made elsewhere (the holder on its other machine)
    // is s1's own too; one tagged s2 is not.
    other.git(&["pull", "-q", "origin", "main"]);
    commit_plan(
        &other,
        &after(2),
        None,
        "goal text by s1",
        "goal text by s1, again",
        "s1 again\n\nBSI-Session: s1",
    );
    let own = other.git(&["rev-parse", "HEAD"]).trim().to_string();
    commit_plan(
        &other,
        &after(3),
        None,
        "q1 text",
        "q1 text by s2",
        "s2 in Q1\n\nBSI-Session: s2",
    );
    let by_s2 = other.git(&["rev-parse", "HEAD"]).trim().to_string();
    other.git(&["push", "-q", "origin", "main"]);
    pull(&mut b);

    let v = b.bsi(&["status", "--json"]).json();
    let drift = v["drift"].as_array().expect("drift");
    assert_eq!(drift.len(), 1, "{drift:?}");
    assert_eq!(drift[0]["commit"], by_s2.as_str());
    assert_eq!(drift[0]["by_session"], "s2");
    assert_eq!(drift[0]["heading"], "Q1");
    let r = b.bsi(&["verify", "s1"]);
    r.ok().stdout_has(&format!(
        "changed by commit {} (bob <bob@example.com>, session s2), not by s1",
        &by_s2[..7]
    ));
    assert!(!r.stdout.contains(&own[..7]), "{}", r.stdout);
}

#[test]
fn work_made_before_the_claim_was_opened_is_not_drift() {
    let (mut b, other, _remote) = holder_and_hookless();
    // Made before s1 opened its claim, pulled after.
    commit_plan(
        &other,
        &after(-3),
        None,
        "goal text",
        "older goal text",
        "older",
    );
    other.git(&["push", "-q", "origin", "main"]);
    pull(&mut b);
    let r = b.bsi(&["status"]);
    r.ok();
    assert!(!r.stdout.contains("drift:"), "{}", r.stdout);
    let v = b.bsi(&["status", "--json"]).json();
    assert_eq!(v["drift"].as_array().map(Vec::len), Some(0));
}

/// `NOW` plus `seconds`, as RFC 3339.
fn after_secs(seconds: i64) -> String {
    let t = chrono::DateTime::parse_from_rfc3339(NOW).expect("NOW")
        + chrono::Duration::seconds(seconds);
    t.to_rfc3339()
}

#[test]
fn work_committed_in_the_claims_minute_counts_from_the_registry_commit_that_opened_it() {
    // The registry records 09:30; the claim was opened at 09:30:30. A
    // commit of 09:30:10 was there before it; one of 09:30:50 is drift.
    let mut b = Brain::new();
    let remote = b.publish_to_bare();
    let other = Brain::clone_of(remote.path(), "bob");
    commit_plan(
        &other,
        &after_secs(10),
        None,
        "goal text",
        "goal text 1",
        "before",
    );
    other.git(&["push", "-q", "origin", "main"]);
    b.git(&["pull", "-q", "--no-rebase", "origin", "main"]);
    b.now = after_secs(30);
    b.bsi(&["open", "projets/plan.md#Goals", "--session", "s1"])
        .ok();
    assert!(
        b.active().iter().any(|r| r.contains("09:30")),
        "{:?}",
        b.active()
    );
    commit_plan(
        &other,
        &after_secs(50),
        None,
        "goal text 1",
        "goal text 2",
        "after",
    );
    let late = other.git(&["rev-parse", "HEAD"]).trim().to_string();
    other.git(&["push", "-q", "origin", "main"]);
    pull(&mut b);
    let v = b.bsi(&["status", "--json"]).json();
    let drift = v["drift"].as_array().expect("drift");
    assert_eq!(drift.len(), 1, "{drift:?}");
    assert_eq!(drift[0]["commit"], late.as_str());
}

/// Writes `rel` in `c` and commits it at `date`, as `session` when given;
/// returns the commit's id.
#[track_caller]
fn commit_file(c: &Brain, date: &str, session: Option<&str>, rel: &str, text: &str) -> String {
    c.write(rel, text);
    c.git(&["add", rel]);
    git_dated(c.path(), date, session, &["commit", "-q", "-m", rel]).ok();
    c.git(&["rev-parse", "HEAD"]).trim().to_string()
}

#[test]
fn a_claim_opened_on_another_clone_counts_from_its_second_there_too() {
    // Two machines, each with bsi's hooks. b pushes a note at 09:30:00;
    // a pulls it and claims `notes/` at 09:30:01. b never wrote the
    // registry: the commit that opened the claim is on its
    // `origin/brain-index` alone. b's note was there before the claim: it
    // is nobody's drift, on either machine.
    let mut a = Brain::new();
    a.bsi(&["hook", "install"]).ok();
    let remote = a.publish_to_bare();
    let mut b = Brain::clone_of(remote.path(), "bob");
    b.bsi(&["hook", "install"]).ok();
    b.bsi(&["status"]).ok();
    let note = commit_file(&b, &after_secs(0), None, "notes/n.md", "# N\n\nb's note\n");
    b.git(&["push", "-q", "origin", "main"]);

    a.git(&["pull", "-q", "--no-rebase", "origin", "main"]);
    a.now = after_secs(1);
    a.bsi(&["open", "notes/", "--session", "s1"]).ok();
    assert!(
        a.active().iter().any(|r| r.contains("notes/")),
        "{:?}",
        a.active()
    );

    b.git(&["pull", "-q", "--no-rebase", "origin", "main"]);
    b.now = after_secs(5);
    for clone in [&a, &b] {
        let r = clone.bsi(&["status"]);
        r.ok();
        assert!(!r.stdout.contains("drift:"), "{}", r.stdout);
        assert!(!r.stdout.contains(&note[..7]), "{}", r.stdout);
        let v = clone.bsi(&["status", "--json"]).json();
        assert_eq!(v["drift"].as_array().map(Vec::len), Some(0), "{v}");
    }

    // A change b forces under the claim, later in the same minute, is
    // drift, on both machines, and nothing else is.
    b.write("notes/n.md", "# N\n\nb's note, again\n");
    b.git(&["add", "notes/n.md"]);
    git_dated(
        b.path(),
        &after_secs(30),
        None,
        &["-c", "bsi.hookMode=off", "commit", "-q", "-m", "forced"],
    )
    .ok();
    let late = b.git(&["rev-parse", "HEAD"]).trim().to_string();
    b.git(&["push", "-q", "origin", "main"]);
    a.git(&["pull", "-q", "--no-rebase", "origin", "main"]);
    a.now = after_secs(40);
    b.now = after_secs(40);
    for clone in [&a, &b] {
        let v = clone.bsi(&["status", "--json"]).json();
        let drift = v["drift"].as_array().expect("drift");
        assert_eq!(drift.len(), 1, "{drift:?}");
        assert_eq!(drift[0]["commit"], late.as_str());
        assert_eq!(drift[0]["session"], "s1");
    }
}

#[test]
fn the_undo_of_a_drifted_file_takes_that_commits_change_of_the_file_alone_as_printed() {
    let (mut b, other, _remote) = holder_and_hookless();
    b.bsi(&["open", "agents/bob.md", "--session", "s1"]).ok();
    // bob changes the held file and a free one in one commit.
    other.write("agents/bob.md", "# Bob\n\nbob's line\n");
    other.write("README.md", "# Brain\n\nbob's free line\n");
    other.git(&["add", "-A"]);
    git_dated(
        other.path(),
        &after(2),
        None,
        &["commit", "-q", "-m", "bob"],
    )
    .ok();
    other.git(&["push", "-q", "origin", "main"]);
    pull(&mut b);
    let r = b.bsi(&["status"]);
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("drift: agents/bob.md of s1"))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(!line.contains("revert"), "{line}");
    let start = line.find("`git show").expect("an undo");
    let undo = &line[line[start + 1..]
        .find("undo that change")
        .map(|i| i + start + 1)
        .expect("undo")..];
    let cmd = &undo[undo.find('`').expect("cmd") + 1..undo.rfind('`').expect("end")];
    let ran = std::process::Command::new("sh")
        .current_dir(b.path())
        .args(["-c", cmd])
        .output()
        .expect("sh");
    assert!(ran.status.success(), "`{cmd}`: {ran:?}");
    // The held file is back; bob's free line stays, uncommitted nothing else.
    assert_eq!(
        b.read("agents/bob.md"),
        b.git(&["show", "HEAD^:agents/bob.md"])
    );
    assert!(b.read("README.md").contains("bob's free line"));
}
