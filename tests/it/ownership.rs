//! Ownership by session: a session acts on its own claims freely, on
//! another session's (of the same agent or not) only with the recorded
//! `--force`; a shell with no session of its own acts as the session it
//! names. And every next command bsi prints here runs as printed, in the
//! context it was printed for: each is taken from the output and run
//! through `sh -c`.

use std::process::Command;

use crate::common::{Brain, Run, bin, clean_env};

/// Session A of agent `claude`, as its shell sees it.
const A: [(&str, &str); 2] = [("BSI_SESSION", "sess-a"), ("BSI_AGENT", "claude")];
/// Session B of the same agent.
const B: [(&str, &str); 2] = [("BSI_SESSION", "sess-b"), ("BSI_AGENT", "claude")];

/// The commands between backticks in `text` that start with `bsi `, in
/// order.
pub(crate) fn commands(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|c| c.starts_with("bsi "))
        .map(String::from)
        .collect()
}

/// The one printed command that starts with `prefix`.
#[track_caller]
pub(crate) fn printed(text: &str, prefix: &str) -> String {
    let found: Vec<String> = commands(text)
        .into_iter()
        .filter(|c| c.starts_with(prefix))
        .collect();
    assert!(!found.is_empty(), "no `{prefix}…` printed in:\n{text}");
    found[0].clone()
}

/// Runs `line` exactly as printed through `sh -c`, in the brain, with the
/// binary under test first on PATH and `env` added.
pub(crate) fn sh(b: &Brain, line: &str, env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new("sh");
    clean_env(&mut cmd, b.path());
    let dir = bin().parent().expect("bin dir").to_path_buf();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![dir];
    dirs.extend(std::env::split_paths(&path));
    cmd.env("PATH", std::env::join_paths(dirs).expect("PATH"))
        .env("BSI_NOW", &b.now)
        .current_dir(b.path())
        .arg("-c")
        .arg(line);
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::from_output(cmd.output().expect("run sh"))
}

/// The session id `open` printed (`Session: ID`).
fn session_of(r: &Run) -> String {
    r.stdout
        .lines()
        .find_map(|l| l.strip_prefix("Session: "))
        .expect("the session printed")
        .trim()
        .to_string()
}

#[test]
fn a_session_closes_another_session_of_the_same_agent_only_forced_and_recorded() {
    let b = Brain::new();
    b.bsi_env(&["open", "agents/bob.md"], &B).ok();
    b.bsi_env(&["open", "agents/alice.md"], &A).ok();
    let (reg, n) = (b.registry(), b.commits());

    let refused = b.bsi_env(&["close", "sess-b"], &A);
    refused
        .code(1)
        .stderr_has("not this session's")
        .stderr_has("acts for session sess-a");
    b.bsi_env(&["renew", "sess-b", "--ttl", "3h"], &A)
        .code(1)
        .stderr_has("not this session's");
    assert_eq!((b.registry(), b.commits()), (reg, n), "nothing written");

    // The printed way runs as printed in A's shell, and is recorded.
    let forced = printed(&refused.stderr, "bsi close sess-b");
    assert_eq!(forced, "bsi close sess-b --force");
    sh(&b, &forced, &A)
        .ok()
        .stdout_has("Forced: these were another session's claims");
    let history = b.history();
    assert_eq!(history.len(), 1, "{history:?}");
    assert!(
        history[0].contains("| sess-b | agents/bob.md |"),
        "{history:?}"
    );
    assert!(
        history[0].contains("closed by claude (session sess-a) with --force"),
        "{history:?}"
    );
    let message = b.git(&["log", "-1", "--format=%B", "brain-index"]);
    assert!(message.contains("BSI-Action: force-close"), "{message}");
    assert!(message.contains("BSI-Agent: claude"), "{message}");
    // A's own claim is untouched, and closes without ceremony.
    assert_eq!(b.active().len(), 1);
    assert!(b.active()[0].contains("sess-a"));

    // B is told at its next close: done before, when and by whom.
    b.bsi_env(&["close"], &B)
        .ok()
        .stdout_has("Already closed — sess-b")
        .stdout_has("closed by claude (session sess-a) with --force");
    b.bsi_env(&["renew"], &B)
        .code(1)
        .stderr_has("closed by claude (session sess-a) with --force");
    b.bsi_env(&["close"], &A)
        .ok()
        .stdout_has("Claim closed — sess-a");
    assert!(b.active().is_empty());
}

#[test]
fn a_persons_plain_shell_closes_the_session_it_names() {
    let b = Brain::new();
    let opened = b.bsi(&["open", "agents/"]);
    opened.ok();
    let s = session_of(&opened);
    b.bsi(&["close", &s]).ok().stdout_has("Claim closed");
    // Opened under another agent name: naming the session is acting as it.
    let me = b.bsi(&["open", "projets/", "--agent", "me"]);
    me.ok();
    let s = session_of(&me);
    b.bsi(&["close", &s]).ok();
    assert!(b.active().is_empty(), "{:?}", b.active());
    // A name given that is not the holder's is still refused.
    b.bsi(&["open", "agents/", "--session", "s9", "--agent", "alice"])
        .ok();
    b.bsi_env(&["close", "s9"], &[("BSI_AGENT", "bob")])
        .code(1)
        .stderr_has("opened by alice, not by bob");
}

#[test]
fn a_newcomers_typo_fix_runs_as_printed() {
    let b = Brain::new();
    let r = b.bsi(&["open", "agent/alice.md", "--agent", "me"]);
    r.ok();
    let s = session_of(&r);
    let close = printed(&r.stderr, "bsi close");
    let open = printed(&r.stderr, "bsi open agents/alice.md");
    assert_eq!(close, format!("bsi close {s} --scope agent/alice.md"));
    sh(&b, &close, &[]).ok();
    sh(&b, &open, &[]).ok();
    let rows = b.active();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(
        rows[0].contains(&format!("| {s} | agents/alice.md | file | me |")),
        "{rows:?}"
    );
}

#[test]
fn a_refused_opens_next_commands_run_as_printed_for_the_same_agent() {
    let b = Brain::new();
    crate::agent_hook::other_holds(&b, "agents/alice.md");
    let r = b.bsi(&["open", "agents/alice.md", "--agent", "me"]);
    r.code(3);
    let next = r
        .stderr
        .lines()
        .find(|l| l.starts_with("Next:"))
        .expect("a Next line")
        .to_string();
    let free = printed(&next, "bsi open");
    assert!(free.ends_with("--agent me"), "{free}");
    sh(&b, &free, &[]).ok();
    assert!(
        b.active().iter().any(|r| r.contains("| me |")),
        "{:?}",
        b.active()
    );
}

#[test]
fn the_pre_commit_hooks_claim_first_runs_as_printed() {
    let b = Brain::new();
    b.bsi(&["hook", "install"]).ok();
    b.bsi(&[
        "open",
        "agents/alice.md",
        "--session",
        "s1",
        "--agent",
        "me",
    ])
    .ok();
    b.write("agents/bob.md", "# Bob\n\nmore\n");
    b.git(&["add", "agents/bob.md"]);
    let s1 = [("BSI_SESSION", "s1")];
    let commit = b.git_at(b.path(), Some("s1"), &["commit", "-q", "-m", "bob"]);
    let said = format!("{}{}", commit.stdout, commit.stderr);
    let open = printed(&said, "bsi open agents/bob.md");
    assert_eq!(open, "bsi open agents/bob.md --session s1");
    sh(&b, &open, &s1).ok();
    let rows = b.active();
    assert!(
        rows.iter()
            .any(|r| r.contains("| s1 | agents/bob.md | file | me |")),
        "{rows:?}"
    );
}

#[test]
fn an_overdue_claim_is_said_overdue_with_the_watchdog_and_who_may_release_it() {
    let mut b = Brain::new();
    b.bsi(&[
        "open",
        "agents/alice.md",
        "--session",
        "gone",
        "--agent",
        "bob",
    ])
    .ok();
    b.now = "2026-03-14T12:00:00Z".into();
    let r = b.bsi(&["open", "agents/alice.md"]);
    r.code(3)
        .stderr_has("the claim of gone is overdue")
        .stderr_has("so mark it stale: `bsi watchdog`");
    assert!(!r.stderr.contains("wait for gone to close"), "{}", r.stderr);
    assert_eq!(printed(&r.stderr, "bsi watchdog"), "bsi watchdog");
    // The watchdog's documented exit 4: stale claims need a person.
    sh(&b, "bsi watchdog", &[]).code(4);
    let release = printed(&r.stderr, "bsi release");
    assert_eq!(release, "bsi release gone --confirm");
    sh(&b, &release, &[]).ok();
    b.bsi(&["open", "agents/alice.md"]).ok();
}

#[test]
fn open_without_a_scope_gives_examples_and_a_hint() {
    let b = Brain::new();
    let r = b.bsi(&["open"]);
    r.code(2)
        .stderr_has("bsi open needs at least one SCOPE")
        .stderr_has("hint: for example `bsi open notes/`");
    let j = b.bsi(&["open", "--json"]);
    j.code(2);
    assert_eq!(j.json()["error"], "usage");
    b.bsi(&["open", "--shell"]).code(2).stdout_has("(exit 2)");
}

#[test]
fn closing_twice_is_done_and_says_when_and_by_whom() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1", "--agent", "alice"])
        .ok();
    b.bsi(&["close", "s1"]).ok();
    let n = b.commits();
    b.bsi(&["close", "s1"])
        .ok()
        .stdout_has("Already closed — s1")
        .stdout_has("agents/ — closed 2026-03-14 09:30")
        .stdout_has("Last closed by tester@box");
    let j = b.bsi(&["close", "s1", "--json"]);
    j.ok();
    let doc = j.json();
    assert_eq!(doc["already_closed"][0]["scope"], "agents/");
    assert_eq!(doc["already_closed"][0]["status"], "completed");
    assert_eq!(doc["already_closed"][0]["agent"], "alice");
    assert_eq!(doc["by"], "tester@box");
    assert_eq!(doc["closed"].as_array().map(Vec::len), Some(0));
    assert_eq!(b.commits(), n, "nothing written");
    // A session that never was is still not found.
    b.bsi(&["close", "s-never"])
        .code(1)
        .stderr_has("holds no claim");
}

/// The commit hook and an agent's edit hook say an overdue claim is overdue
/// in the open refusal's words (one rule, `guard::ways`), never "wait for",
/// and the commands they print run as printed, in order.
#[test]
fn every_door_says_an_overdue_claim_is_overdue() {
    let mut b = Brain::new();
    b.bsi(&["hook", "install"]).ok();
    b.bsi(&[
        "open",
        "agents/alice.md",
        "--session",
        "gone",
        "--agent",
        "bob",
    ])
    .ok();
    b.now = "2026-03-14T12:00:00Z".into();
    let before = b.read("agents/alice.md");
    let edited = format!("{before}more\n");

    // An agent's edit.
    let last = before.lines().last().expect("a line").to_string();
    let ev = crate::agent_hook::replace_event(
        &b,
        "claude",
        "agents/alice.md",
        &last,
        &format!("{last} more"),
    );
    let r = crate::agent_hook::hook(&b, "edit", "claude", &ev);
    let denied = crate::agent_hook::denial("claude", &r).expect("the edit is refused");
    assert!(denied.contains("the claim of gone is overdue"), "{denied}");
    assert!(!denied.contains("wait for it"), "{denied}");
    assert!(!denied.contains("--wait"), "{denied}");

    // A commit.
    b.write("agents/alice.md", &edited);
    b.git(&["add", "agents/alice.md"]);
    let c = b.git_at(b.path(), Some("s1"), &["commit", "-q", "-m", "alice"]);
    assert_ne!(c.code, 0, "{c:?}");
    assert!(
        c.stderr.contains("the claim of gone is overdue"),
        "{}",
        c.stderr
    );
    assert!(!c.stderr.contains("wait for gone"), "{}", c.stderr);
    assert_eq!(printed(&c.stderr, "bsi watchdog"), "bsi watchdog");
    sh(&b, "bsi watchdog", &[]).code(4);
    let release = printed(&c.stderr, "bsi release");
    assert_eq!(release, "bsi release gone --confirm");
    sh(&b, &release, &[]).ok();
    // Freed: the same commit now passes the hook.
    b.git_at(b.path(), Some("s1"), &["commit", "-q", "-m", "alice"])
        .ok();
    assert_eq!(b.head_subject(), "alice");
}

/// A session whose claim another session closed with `--force` is told by
/// `whoami` (and its JSON), with the command that claims it again, which
/// runs as printed.
#[test]
fn a_session_is_told_when_another_forced_its_claim_closed() {
    let b = Brain::new();
    b.bsi(&[
        "open",
        "agents/alice.md",
        "--session",
        "sess-a",
        "--agent",
        "claude",
    ])
    .ok();
    b.bsi_env(
        &["close", "sess-a", "--force"],
        &[("BSI_SESSION", "sess-b")],
    )
    .ok();
    let a = [("BSI_SESSION", "sess-a")];
    let w = b.bsi_env(&["whoami"], &a);
    w.ok()
        .stdout_has("Ended by another: agents/alice.md (closed by")
        .stdout_has("(session sess-b) with --force");
    let j = b.bsi_env(&["whoami", "--json"], &a).json();
    assert_eq!(j["ended_by_others"][0]["scope"], "agents/alice.md");
    assert!(
        j["ended_by_others"][0]["by"]
            .as_str()
            .is_some_and(|s| s.contains("sess-b")),
        "{j}"
    );
    let again = printed(&w.stdout, "bsi open");
    assert_eq!(again, "bsi open agents/alice.md --session sess-a");
    sh(&b, &again, &[]).ok();
    assert!(
        b.active()
            .iter()
            .any(|r| r.contains("| sess-a | agents/alice.md |")),
        "{:?}",
        b.active()
    );
    // Held again: no longer said.
    let w = b.bsi_env(&["whoami"], &a);
    assert!(!w.stdout.contains("Ended by another"), "{}", w.stdout);
}

/// The "Did you mean" of a granted claim on a path or heading that is not
/// there: its two commands run as printed, in order, and move the claim.
#[test]
fn did_you_mean_commands_run_as_printed_and_move_the_claim() {
    let b = Brain::new();
    let typo = b.bsi(&["open", "agent/alice.md", "--session", "s1", "--agent", "a"]);
    typo.ok();
    let close = printed(&typo.stderr, "bsi close");
    let open = printed(&typo.stderr, "bsi open");
    assert_eq!(close, "bsi close s1 --scope agent/alice.md");
    assert_eq!(open, "bsi open agents/alice.md --session s1");
    sh(&b, &close, &[]).ok();
    sh(&b, &open, &[]).ok();
    let rows = b.active();
    assert!(
        rows.iter()
            .any(|r| r.contains("| s1 | agents/alice.md | file |")),
        "{rows:?}"
    );
    assert!(
        !rows.iter().any(|r| r.contains("agent/alice.md")),
        "{rows:?}"
    );

    let heading = b.bsi(&["open", "projets/plan.md#Riskss", "--session", "s2"]);
    heading.ok();
    let close = printed(&heading.stderr, "bsi close");
    let open = printed(&heading.stderr, "bsi open");
    assert_eq!(close, "bsi close s2 --scope 'projets/plan.md#Riskss'");
    assert_eq!(open, "bsi open 'projets/plan.md#Risks' --session s2");
    sh(&b, &close, &[]).ok();
    sh(&b, &open, &[]).ok();
    let rows = b.active();
    assert!(
        rows.iter()
            .any(|r| r.contains("| s2 | projets/plan.md#Risks | section |")),
        "{rows:?}"
    );
    assert!(!rows.iter().any(|r| r.contains("#Riskss")), "{rows:?}");
}

/// After `bsi renew OTHER --force` (the way its refusal prints), the next
/// commands it prints keep the force they need, and run as printed in the
/// same shell.
#[test]
fn a_forced_renews_next_commands_keep_the_force_and_run_as_printed() {
    let b = Brain::new();
    b.bsi_env(&["open", "agents/bob.md"], &B).ok();
    let refused = b.bsi_env(&["renew", "sess-b", "--ttl", "3h"], &A);
    refused.code(1);
    let forced = printed(&refused.stderr, "bsi renew sess-b");
    assert!(forced.ends_with("--force"), "{forced}");
    // Renewed at open to 2h: the forced renew asks for no more, and says
    // how to ask for more.
    let r = sh(&b, &forced, &A);
    r.ok().stdout_has("Unchanged");
    let more = printed(&r.stdout, "bsi renew sess-b");
    assert_eq!(more, "bsi renew sess-b --ttl 4h --force", "{}", r.stdout);
    let r = sh(&b, &more, &A);
    r.ok().stdout_has("Claim renewed");
    let close = printed(&r.stdout, "bsi close sess-b");
    assert_eq!(close, "bsi close sess-b --force", "{}", r.stdout);
    sh(&b, &close, &A).ok();
    assert!(b.active().is_empty(), "{:?}", b.active());
}
