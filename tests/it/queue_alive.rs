//! A waiter keeps its place in the queue on its clone's own reference
//! (`refs/bsi/alive/<clone>`), not with a commit of the registry branch:
//! on real clones of a bare remote, a waiter renewing many times writes no
//! `queue-renew` commit, its place holds past its row's lease for a reader
//! of another machine, and it is granted when the holder closes; a waiter
//! killed lapses with its clone's last record and is skipped.

use std::io::BufRead;
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::common::{Brain, Machines};

/// A waiter renewing every 250 ms (`BSI_QUEUE_RENEW_MS`): many renewals in
/// a short wait. Returns once it has said its place.
fn wait_renewing(
    b: &Brain,
    scope: &str,
    session: &str,
) -> (Child, std::thread::JoinHandle<String>) {
    wait_with(b, scope, session, &[("BSI_QUEUE_RENEW_MS", "250")])
}

/// Two clones of one remote, the plan held by a session of `b`.
fn plan_held() -> Machines {
    let m = Machines::new();
    crate::common::hold_plan(&m.b);
    m
}

/// The registry branch's commit subjects on the remote, as `b` fetches it.
fn published_subjects(b: &Brain) -> String {
    b.git(&["fetch", "-q", "origin", "brain-index"]);
    b.git(&["log", "--format=%s", "origin/brain-index"])
}

/// The lease of `session`'s row in the published registry.
fn row_lease(b: &Brain, session: &str) -> chrono::DateTime<chrono::FixedOffset> {
    b.git(&["fetch", "-q", "origin", "brain-index"]);
    let text = b.git(&["show", "origin/brain-index:BRAIN-INDEX.md"]);
    let row = text
        .lines()
        .find(|l| l.starts_with(&format!("| {session} |")))
        .unwrap_or_else(|| panic!("{session} has a row:\n{text}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    chrono::DateTime::parse_from_rfc3339(cells[5]).expect("a lease")
}

/// The lease `session`'s clone last published for it on the remote.
fn record_lease(b: &Brain, session: &str) -> chrono::DateTime<chrono::FixedOffset> {
    record_lease_of(b, session).unwrap_or_else(|| panic!("{session} is in a record"))
}

/// [`record_lease`], `None` before its clone published one.
fn record_lease_of(b: &Brain, session: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    b.git(&[
        "fetch",
        "-q",
        "origin",
        "+refs/bsi/alive/*:refs/test-alive/*",
    ]);
    let refs = b.git(&["for-each-ref", "--format=%(refname)", "refs/test-alive/"]);
    let lines: String = refs
        .lines()
        .map(|r| b.git(&["show", &format!("{r}:alive")]))
        .collect();
    let line = lines
        .lines()
        .find(|l| l.starts_with(&format!("{session}\t")))?;
    chrono::DateTime::parse_from_rfc3339(line.split('\t').nth(2)?).ok()
}

#[test]
fn a_waiter_keeps_its_place_on_its_clone_s_ref_with_no_registry_commit() {
    let m = plan_held();
    let (a, b) = (&m.a, &m.b);
    let (child, out) = wait_renewing(a, "projets/plan.md", "sess-w");
    // Eight renewal periods and more.
    std::thread::sleep(Duration::from_millis(2500));
    let log = published_subjects(b);
    assert!(!log.contains("queue-renew"), "{log}");
    assert_eq!(log.matches("bsi: queue sess-w").count(), 1, "{log}");
    // Its clone's record holds the place past the row's lease.
    let (row, record) = (row_lease(b, "sess-w"), record_lease(b, "sess-w"));
    assert!(record > row, "row {row}, record {record}");
    // Another machine reading after the row's lease, before the record's:
    // the waiter still holds its place, and a plain open does not overtake.
    let past_row = (row + chrono::Duration::seconds(1)).to_rfc3339();
    let st = b.bsi_env(&["status"], &[("BSI_NOW", &past_row)]);
    st.ok();
    assert!(
        st.stdout.contains("sess-w (al) waits for projets/plan.md"),
        "{}",
        st.stdout
    );
    let late = b.bsi_env(
        &[
            "open",
            "projets/plan.md",
            "--session",
            "sess-late",
            "--agent",
            "eve",
        ],
        &[("BSI_NOW", &past_row)],
    );
    late.code(3);
    late.stderr_has("sess-w");
    // The holder goes: the waiter is granted.
    b.bsi(&["close", "sess-hold", "--agent", "h"]).ok();
    let o = child.wait_with_output().expect("wait bsi");
    let said = out.join().expect("stdout");
    assert_eq!(o.status.code(), Some(0), "{said}");
    assert!(said.contains("Claim opened — projets/plan.md"), "{said}");
    let log = published_subjects(b);
    assert!(!log.contains("queue-renew"), "{log}");
}

#[test]
fn a_killed_waiter_lapses_with_its_clone_s_last_record_and_is_skipped() {
    let Machines {
        origin: _origin,
        bare: _bare,
        a,
        b,
    } = Machines::new();
    b.bsi(&[
        "open",
        "projets/plan.md#Goals",
        "--session",
        "sess-hold",
        "--agent",
        "h",
    ])
    .ok();
    let (mut child, out) = wait_renewing(&a, "projets/plan.md", "sess-dead");
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().expect("kill the waiter");
    let _ = child.wait();
    let _ = out.join();
    let (row, record) = (row_lease(&b, "sess-dead"), record_lease(&b, "sess-dead"));
    assert!(record > row, "row {row}, record {record}");
    let at = |d: i64| (record + chrono::Duration::seconds(d)).to_rfc3339();
    // Until its last record's lease, its place holds, for another machine.
    let st = b.bsi_env(&["status"], &[("BSI_NOW", &at(-1))]);
    assert!(
        st.stdout
            .contains("sess-dead (al) waits for projets/plan.md"),
        "{}",
        st.stdout
    );
    // After it, nobody waits, and a request for what it waited for is
    // granted: its place is skipped.
    let j = b
        .bsi_env(&["status", "--json"], &[("BSI_NOW", &at(1))])
        .json();
    assert_eq!(j["queue"], serde_json::json!([]));
    b.bsi_env(
        &[
            "open",
            "projets/plan.md#Risks",
            "--session",
            "sess-next",
            "--agent",
            "eve",
        ],
        &[("BSI_NOW", &at(1))],
    )
    .ok()
    .stdout_has("Claim opened — projets/plan.md#Risks");
    assert!(!published_subjects(&b).contains("queue-renew"));
}

/// The arrival of `session`'s row in the published registry.
fn row_since(b: &Brain, session: &str) -> String {
    b.git(&["fetch", "-q", "origin", "brain-index"]);
    let text = b.git(&["show", "origin/brain-index:BRAIN-INDEX.md"]);
    let row = text
        .lines()
        .find(|l| l.starts_with(&format!("| {session} |")))
        .unwrap_or_else(|| panic!("{session} has a row:\n{text}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    cells[4].to_string()
}

/// Starts a waiter for `scope` with `env`; returns once it has said its
/// place.
fn wait_with(
    b: &Brain,
    scope: &str,
    session: &str,
    env: &[(&str, &str)],
) -> (Child, std::thread::JoinHandle<String>) {
    let mut cmd = b.command(&[
        "open",
        scope,
        "--session",
        session,
        "--agent",
        "al",
        "--wait",
        "120s",
    ]);
    cmd.envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run bsi");
    let pipe = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    let out = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufReader::new(pipe).lines() {
            let line = line.expect("read stdout");
            if line.starts_with("Place ") || line.starts_with("First in the queue") {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("bsi says its place in the queue");
    (child, out)
}

/// A waiter for `projets/plan.md` in clone `a`, renewing with 1.5 s of its
/// lease left, behind a remote whose `pre-receive` hook is `script`, the
/// plan held in clone `b`: the clones, the waiter, and its place's first
/// arrival.
#[cfg(unix)]
fn renewing_behind(script: &str) -> (Machines, Child, std::thread::JoinHandle<String>, String) {
    let m = plan_held();
    let hook = m.bare.path().join("hooks/pre-receive");
    std::fs::write(&hook, script).expect("hook");
    let mut perms = std::fs::metadata(&hook).expect("hook").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&hook, perms).expect("chmod");
    let (child, out) = wait_with(
        &m.a,
        "projets/plan.md",
        "sess-w",
        &[("BSI_QUEUE_RENEW_LEFT_MS", "1500")],
    );
    let first = row_since(&m.b, "sess-w");
    (m, child, out, first)
}

/// The arrival of `sess-w`'s place once it is no longer `first` (90 s at
/// most); the waiter stopped, and what it said.
fn arrival_after(
    b: &Brain,
    first: &str,
    (mut child, out): (Child, std::thread::JoinHandle<String>),
) -> (String, String) {
    let started = std::time::Instant::now();
    let mut again = first.to_string();
    while again == first && started.elapsed() < Duration::from_secs(90) {
        std::thread::sleep(Duration::from_millis(500));
        again = row_since(b, "sess-w");
    }
    let _ = child.kill();
    let _ = child.wait();
    (again, out.join().expect("stdout"))
}

#[cfg(unix)]
#[test]
fn a_renewal_that_answers_after_its_lease_is_not_kept_and_the_place_is_taken_again() {
    // The remote answers a push of a record of places kept alive only
    // after 4 s; the waiter renews with 1.5 s of its lease left: its
    // renewal answers after the lease it extends has passed.
    let (m, child, out, first) =
        renewing_behind("#!/bin/sh\nif grep -q ' refs/bsi/alive/'; then sleep 4; fi\nexit 0\n");
    // Its place lapsed with the lease its renewal did not land in time:
    // it takes its place again, a new arrival, in the registry.
    let (again, said) = arrival_after(&m.b, &first, (child, out));
    assert_ne!(again, first, "the place kept its arrival: {said}");
}

#[cfg(unix)]
#[test]
fn a_renewal_in_the_registry_planned_after_its_lease_revives_nothing() {
    // The remote refuses every record of places kept alive: a waiter
    // renews its row in the registry instead, with 1.5 s of its lease left.
    let (m, child, out, first) =
        renewing_behind("#!/bin/sh\ncase $(cat) in *refs/bsi/alive/*) exit 1;; esac\nexit 0\n");
    let b = &m.b;
    // Another writer of the clone holds the writer lock from before the
    // renewal is due (28.5 s into the lease) until after the lease passed
    // (30 s): the renewal plans once it has its turn, too late.
    std::thread::sleep(Duration::from_secs(25));
    let lock = std::fs::File::open(m.a.dir.path().join(".git/bsi/lock")).expect("the writer lock");
    lock.lock().expect("hold the writer lock");
    std::thread::sleep(Duration::from_secs(9));
    lock.unlock().expect("let go");
    // Its place lapsed with the lease it could not renew in time: it takes
    // its place again, a new arrival; no renewal revived the lapsed one.
    let (again, said) = arrival_after(b, &first, (child, out));
    assert_ne!(again, first, "the place kept its arrival: {said}");
    // No commit wrote the place again with its first arrival.
    for commit in b
        .git(&["rev-list", "origin/brain-index"])
        .lines()
        .filter(|c| !c.is_empty())
    {
        let text = b.git(&["show", &format!("{commit}:BRAIN-INDEX.md")]);
        let rows: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("| sess-w |"))
            .collect();
        let renewed = b.git(&["log", "-1", "--format=%s", commit]);
        if renewed.contains("queue-renew") {
            assert!(
                rows.iter()
                    .all(|r| r.split('|').map(str::trim).nth(4) != Some(first.as_str())),
                "{renewed}: {rows:?}"
            );
        }
    }
}

#[test]
fn an_offline_waiter_whose_record_kept_its_place_keeps_it_when_it_comes_back() {
    let n = crate::remote::Net::new();
    crate::common::hold_plan(&n.b);
    let (mut child, out) = wait_with(
        &n.a,
        "projets/plan.md",
        "sess-w",
        &[("BSI_QUEUE_RENEW_MS", "250")],
    );
    let since = row_since(&n.b, "sess-w");
    let row = row_lease(&n.b, "sess-w");
    // Renewed on its record until it holds the place well past its row.
    let started = std::time::Instant::now();
    let mut record = row;
    while record < row + chrono::Duration::seconds(3) && started.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(250));
        record = record_lease_of(&n.b, "sess-w").unwrap_or(row);
    }
    assert!(
        record >= row + chrono::Duration::seconds(3),
        "row {row}, record {record}"
    );
    // Cut off: it renews its row on its local branch alone.
    let away = n.away();
    let started = std::time::Instant::now();
    while !n
        .a
        .git(&["log", "--format=%s", "brain-index"])
        .contains("queue-renew")
        && started.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    let said = out.join().expect("stdout");
    assert!(
        n.a.git(&["log", "--format=%s", "brain-index"])
            .contains("queue-renew"),
        "renewed offline: {said}"
    );
    n.back(&away);
    // Back after its row's lease passed, before its record's: the others
    // saw its place held all along, and it keeps it.
    let at = (row + (record - row) / 2).to_rfc3339();
    n.a.bsi_env(&["sync"], &[("BSI_NOW", &at)]).ok();
    assert_eq!(row_since(&n.b, "sess-w"), since, "moved to the end");
}

#[test]
fn doctor_and_status_say_what_keeps_a_place_alive() {
    let m = plan_held();
    let (a, b) = (&m.a, &m.b);
    assert!(!a.bsi(&["doctor"]).stdout.contains("places kept alive"));
    let (mut child, out) = wait_renewing(a, "projets/plan.md", "sess-w");
    std::thread::sleep(Duration::from_millis(2500));
    let doctor = a.bsi(&["doctor"]);
    doctor.stdout_has("places kept alive: sess-w");
    assert!(doctor.stdout.contains("holds for"), "{}", doctor.stdout);
    let row = row_lease(b, "sess-w");
    let past_row = (row + chrono::Duration::seconds(1)).to_rfc3339();
    let j = b
        .bsi_env(&["status", "--json"], &[("BSI_NOW", &past_row)])
        .json();
    assert_eq!(j["queue"][0]["session"], "sess-w", "{j}");
    assert_eq!(j["queue"][0]["lease_from"], "record", "{j}");
    let _ = child.kill();
    let _ = child.wait();
    let _ = out.join();
    let later = (row + chrono::Duration::seconds(120)).to_rfc3339();
    a.bsi_env(&["doctor"], &[("BSI_NOW", &later)])
        .stdout_has("lapsed");
}
