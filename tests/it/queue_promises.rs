//! The queue's promises, on real repositories: a place lapses with its
//! lease and is retaken at the end, whatever a local registry branch says;
//! and a lease further ahead than a lease is long is taken for the
//! writer's clock being wrong, so a dead waiter whose clock is an hour
//! ahead does not hold the scope for the hour.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use crate::common::{Brain, Machines, NOW};

/// The tests' pinned clock plus `seconds`.
fn at(seconds: i64) -> String {
    (chrono::DateTime::parse_from_rfc3339(NOW).expect("NOW") + chrono::Duration::seconds(seconds))
        .to_rfc3339()
}

/// `session` of `agent` runs `bsi open SCOPE --wait 10m` with its clock at
/// `now`, and is killed once it has said its place: the line it said.
fn place_then_die(b: &Brain, scope: &str, session: &str, agent: &str, now: &str) -> String {
    let mut child = b
        .command(&[
            "open",
            scope,
            "--session",
            session,
            "--agent",
            agent,
            "--wait",
            "10m",
        ])
        .env("BSI_NOW", now)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run bsi");
    let mut said = String::new();
    let mut placed = None;
    // Its progress goes to stdout, before the answer that ends the wait.
    for line in BufReader::new(child.stdout.take().expect("stdout")).lines() {
        let line = line.expect("read stdout");
        said.push_str(&line);
        said.push('\n');
        if line.starts_with("Place ") || line.starts_with("First in the queue") {
            placed = Some(line);
            break;
        }
    }
    child.kill().expect("kill the waiter");
    child.wait().expect("wait the waiter");
    placed.unwrap_or_else(|| panic!("bsi says its place in the queue:\n{said}"))
}

/// The queue rows of a registry text.
fn queue_rows(text: &str) -> Vec<String> {
    let queue = text.split("## File d'attente").nth(1).unwrap_or_default();
    queue
        .lines()
        .filter(|l| l.starts_with("| sess-"))
        .map(String::from)
        .collect()
}

#[test]
fn a_waiter_back_from_offline_after_its_lease_passed_rejoins_at_the_end() {
    let Machines {
        origin: _origin,
        bare: _bare,
        a,
        b,
    } = Machines::new();
    crate::common::hold_plan(&b);
    // w1 on machine A arrives first (lease until 0:30); w2 on machine B
    // arrives at 0:20, behind it.
    let w1 = place_then_die(&a, "projets/plan.md", "sess-w1", "al", &at(0));
    assert!(w1.starts_with("First in the queue"), "{w1}");
    let w2 = place_then_die(&b, "projets/plan.md", "sess-w2", "bo", &at(20));
    assert!(
        w2.starts_with("Place 2 in the queue, after sess-w1"),
        "{w2}"
    );
    // Machine A goes offline; at 0:22 w1 renews its place on A's local
    // registry branch alone (lease until 0:52). The published lease
    // passes at 0:30.
    let url = a.git(&["remote", "get-url", "origin"]);
    let url = url.trim();
    let gone = format!("{url}.unreachable");
    a.git(&["remote", "set-url", "origin", &gone]);
    let w1 = place_then_die(&a, "projets/plan.md", "sess-w1", "al", &at(22));
    assert!(w1.starts_with("First in the queue"), "{w1}");
    let local = queue_rows(&a.registry());
    assert!(
        local.len() == 1
            && local[0].starts_with("| sess-w1 | projets/plan.md | al | 2026-03-14T09:30:00.")
            && local[0].contains("| 2026-03-14T09:30:52."),
        "the renewal is on A's local branch, with its first arrival: {local:?}"
    );
    // Back online at 0:36: its place lapsed with the published lease; it
    // is taken again at the end, behind w2.
    a.git(&["remote", "set-url", "origin", url]);
    let w1 = place_then_die(&a, "projets/plan.md", "sess-w1", "al", &at(36));
    assert!(
        w1.starts_with("Place 2 in the queue, after sess-w2 (bo, "),
        "{w1}"
    );
    // What is published says so to everyone.
    b.git(&["fetch", "-q", "origin", "brain-index"]);
    let st = b.bsi_env(&["status"], &[("BSI_NOW", &at(40))]);
    st.ok();
    let first = st.stdout.find("1. sess-w2 (bo) waits for projets/plan.md");
    let second = st.stdout.find("2. sess-w1 (al) waits for projets/plan.md");
    assert!(first.is_some() && second.is_some(), "{}", st.stdout);
    assert!(st.stdout.contains("after sess-w2"), "{}", st.stdout);
    let published = queue_rows(&b.git(&["show", "origin/brain-index:BRAIN-INDEX.md"]));
    assert_eq!(published.len(), 2, "{published:?}");
    assert!(
        published
            .iter()
            .any(|r| r.starts_with("| sess-w1 | projets/plan.md | al | 2026-03-14T09:30:22.")),
        "{published:?}"
    );
    // The user's branch and files are untouched.
    assert_eq!(a.git(&["status", "--porcelain"]), "");
}

#[test]
fn a_dead_waiter_whose_clock_is_an_hour_ahead_lapses_within_a_lease() {
    let b = Brain::new();
    crate::common::hold_plan(&b);
    // A waiter on a machine whose clock is an hour ahead takes its place
    // (lease until 10:30:30 by that clock) and dies.
    let skew = place_then_die(&b, "projets/plan.md#Goals", "sess-skew", "zed", &at(3600));
    assert!(skew.starts_with("First in the queue"), "{skew}");
    b.bsi_env(
        &["close", "sess-hold", "--agent", "h"],
        &[("BSI_NOW", &at(5))],
    )
    .ok();
    // Its lease is impossible at 0:05 (more than 30s ahead): the place is
    // counted from then, lapsing at 0:35. Until then it is first.
    let open = |now: i64| {
        b.bsi_env(
            &[
                "open",
                "projets/plan.md",
                "--session",
                "sess-me",
                "--agent",
                "me",
            ],
            &[("BSI_NOW", &at(now))],
        )
    };
    let r = open(10);
    r.code(3);
    r.stderr_has("sess-skew");
    let st = b.bsi_env(&["status"], &[("BSI_NOW", &at(12))]);
    st.ok();
    assert!(
        st.stdout
            .contains("1. sess-skew (zed) waits for projets/plan.md#Goals"),
        "{}",
        st.stdout
    );
    assert!(
        st.stdout.contains(
            "the clock of zed's machine is ahead by ~1h: its place is counted as lapsing at 09:30:35"
        ),
        "{}",
        st.stdout
    );
    // Past it, nobody waits, and the plain open is granted.
    let st = b
        .bsi_env(&["status", "--json"], &[("BSI_NOW", &at(40))])
        .json();
    assert_eq!(st["queue"], serde_json::json!([]));
    open(40).ok().stdout_has("Claim opened — projets/plan.md");
    assert_eq!(b.git(&["status", "--porcelain"]), "");
}
