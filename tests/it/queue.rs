//! The queue of `bsi open --wait`, on real repositories: waiters on two
//! machines sharing a bare remote are served in order of arrival, a later
//! request waits its turn, a dead waiter's place lapses, and a request
//! that waiting cannot help is refused with its reason.

use std::io::BufRead;
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use crate::common::{Brain, Machines, NOW, Run};

/// A `bsi open --wait` in the background; its stdout (where it says its
/// place, before its answer) is read as it comes, so the test knows when it
/// has taken its place.
struct Waiter {
    child: Child,
    stdout: std::thread::JoinHandle<String>,
    placed: Receiver<String>,
}

fn spawn(b: &Brain, args: &[&str]) -> Waiter {
    let mut child = b
        .command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bsi");
    let pipe = child.stdout.take().expect("stdout");
    let (tx, placed) = channel();
    let stdout = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufReader::new(pipe).lines() {
            let line = line.expect("read stdout");
            if line.starts_with("Place ") || line.starts_with("First in the queue") {
                let _ = tx.send(line.clone());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    Waiter {
        child,
        stdout,
        placed,
    }
}

/// `session` of `agent` opens `scope`, without waiting.
fn open_as(b: &Brain, scope: &str, session: &str, agent: &str) -> Run {
    b.bsi(&["open", scope, "--session", session, "--agent", agent])
}

/// `session` of `agent` waits up to a minute for `scope`.
fn wait_for(b: &Brain, scope: &str, session: &str, agent: &str) -> Waiter {
    spawn(
        b,
        &[
            "open",
            scope,
            "--session",
            session,
            "--agent",
            agent,
            "--wait",
            "60s",
        ],
    )
}

impl Waiter {
    /// The first line saying its place, once it has one.
    fn placed(&self) -> String {
        self.placed
            .recv_timeout(Duration::from_secs(60))
            .expect("bsi says its place in the queue")
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }

    fn finish(self) -> Run {
        let o = self.child.wait_with_output().expect("wait bsi");
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: self.stdout.join().expect("stdout reader"),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// The sessions granted by the registry branch's commits, oldest first:
/// an `open`, or a close that handed a waiter its claims in its write.
fn opened_in_order(b: &Brain) -> Vec<String> {
    b.git(&["fetch", "-q", "origin", "brain-index"]);
    let log = b.git(&["log", "--reverse", "--format=%s", "origin/brain-index"]);
    granted(&log)
}

/// The sessions granted by the commit subjects of `log`, in order.
fn granted(log: &str) -> Vec<String> {
    let mut out = Vec::new();
    for l in log.lines() {
        if let Some(rest) = l.strip_prefix("bsi: open ") {
            out.push(rest.split(' ').next().unwrap_or_default().to_string());
        }
        for handed in l.split("; handed to ").skip(1) {
            out.push(handed.split(':').next().unwrap_or_default().to_string());
        }
    }
    out
}

/// The time `minutes` after the tests' pinned clock.
fn later(minutes: i64) -> String {
    let t = chrono::DateTime::parse_from_rfc3339(NOW).expect("NOW")
        + chrono::Duration::minutes(minutes);
    t.to_rfc3339()
}

#[test]
fn waiters_on_two_machines_are_served_in_order_of_arrival() {
    let Machines {
        origin: _origin,
        bare: _bare,
        a,
        b,
    } = Machines::new();
    open_as(&a, "projets/plan.md#Goals", "sess-hold", "h").ok();
    // Three waiters, arriving one after the other, from both machines.
    let w1 = wait_for(&b, "projets/plan.md#Goals", "sess-w1", "bob");
    assert_eq!(
        w1.placed(),
        "First in the queue: the scope is yours as soon as it is free."
    );
    let mut w2 = wait_for(&a, "projets/plan.md", "sess-w2", "alice");
    assert!(w2.placed().starts_with(
        "Place 2 in the queue, after sess-w1 (bob, for projets/plan.md#Goals, since "
    ));
    let mut w3 = wait_for(&b, "projets/plan.md#Q1", "sess-w3", "carol");
    // w3's section lies under Goals: behind both.
    let line = w3.placed();
    assert!(
        line.starts_with("Place 3 in the queue, after sess-w1 (bob, "),
        "{line}"
    );
    assert!(
        line.contains("sess-w2 (alice, for projets/plan.md, since "),
        "{line}"
    );

    // Status, on either machine, shows who waits for what and who is ahead.
    let st = a.bsi(&["status"]);
    st.ok()
        .stdout_has("Queue (3 waiting, in order of arrival):");
    st.stdout_has("  1. sess-w1 (bob) waits for projets/plan.md#Goals since ");
    st.stdout_has("first for it");
    st.stdout_has("  2. sess-w2 (alice) waits for projets/plan.md since ");
    st.stdout_has(", after sess-w1\n");
    st.stdout_has(", after sess-w1, sess-w2\n");
    let json = b.bsi(&["status", "--json"]).json();
    let q = json["queue"].as_array().expect("queue");
    let order: Vec<&str> = q
        .iter()
        .map(|w| w["session"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(order, ["sess-w1", "sess-w2", "sess-w3"]);
    assert_eq!(q[1]["scopes"], serde_json::json!(["projets/plan.md"]));
    assert_eq!(q[2]["place"], 3);

    // The holder closes: the first waiter, and only it, is granted.
    a.bsi(&["close", "sess-hold", "--agent", "h"]).ok();
    let r1 = w1.finish();
    r1.ok().stdout_has("Claim opened — projets/plan.md#Goals");
    assert!(
        w2.running() && w3.running(),
        "the others still wait their turn"
    );
    b.bsi(&["close", "sess-w1", "--agent", "bob"]).ok();
    w2.finish()
        .ok()
        .stdout_has("Claim opened — projets/plan.md");
    assert!(w3.running());
    a.bsi(&["close", "sess-w2", "--agent", "alice"]).ok();
    w3.finish()
        .ok()
        .stdout_has("Claim opened — projets/plan.md#Q1");
    assert_eq!(
        opened_in_order(&a),
        ["sess-hold", "sess-w1", "sess-w2", "sess-w3"]
    );
    // Every place left the queue with its grant.
    let st = b.bsi(&["status", "--json"]).json();
    assert_eq!(st["queue"], serde_json::json!([]));
    assert!(!b.bsi(&["status"]).stdout.contains("Queue ("));
    // The user's branch, index and files are untouched by the queue.
    assert_eq!(a.git(&["status", "--porcelain"]), "");
}

/// The handoff: when the holder closes and the first waiter's request now
/// fits, the close grants it in its own write; the waiter learns it from
/// the registry it watches, and its claim is renewed to the longer TTL it
/// asked for. Machine b sees it all through the remote.
#[test]
fn a_close_hands_the_scope_to_the_first_waiter_in_the_same_write() {
    let Machines {
        origin: _origin,
        bare: _bare,
        a,
        b,
    } = Machines::new();
    open_as(&a, "projets/plan.md#Goals", "sess-hold", "h").ok();
    // The waiter is another session of the same clone (a linked work
    // tree would do the same): the close can see it is alive.
    let w1 = spawn(
        &a,
        &[
            "open",
            "projets/plan.md#Goals",
            "--session",
            "sess-w1",
            "--agent",
            "bob",
            "--wait",
            "60s",
            "--ttl",
            "4h",
        ],
    );
    w1.placed();
    let close = a.bsi(&["close", "sess-hold", "--agent", "h"]);
    close.ok().stdout_has(
        "Handed over — sess-w1 was waiting for projets/plan.md#Goals: its claim is granted in the same write",
    );
    // One registry commit ended the holder's claim and granted the
    // waiter's, and took its place out of the queue.
    // (The waiter then renews its grant to the 4h it asked for, in a
    // commit of its own that may land before this look.)
    a.git(&["fetch", "-q", "origin", "brain-index"]);
    let subjects = a.git(&["log", "-3", "--format=%s", "origin/brain-index"]);
    let subjects: Vec<&str> = subjects
        .lines()
        .filter(|s| *s != "bsi: renew sess-w1 projets/plan.md#Goals")
        .collect();
    assert_eq!(
        subjects.first().copied(),
        Some(
            "bsi: close sess-hold projets/plan.md#Goals; handed to sess-w1: projets/plan.md#Goals"
        ),
        "{subjects:?}"
    );
    let st = a.bsi(&["status", "--json"]).json();
    assert_eq!(st["queue"], serde_json::json!([]), "{st}");
    let active = st["active"].as_array().expect("active");
    assert_eq!(active.len(), 1, "{st}");
    assert_eq!(active[0]["session"], "sess-w1");
    assert_eq!(active[0]["agent"], "bob");
    // The waiter's answer: its claim, opened.
    let r = w1.finish();
    r.ok().stdout_has("Claim opened — projets/plan.md#Goals");
    // No open of its own: the grant was the close's; its TTL (4h, not the
    // brain's 2h) is a renewal after it.
    a.git(&["fetch", "-q", "origin", "brain-index"]);
    let log = a.git(&["log", "--format=%s", "origin/brain-index"]);
    assert!(!log.contains("bsi: open sess-w1"), "{log}");
    let st = b.bsi(&["status", "--json"]).json();
    let claim = &st["active"][0];
    let opened = chrono::DateTime::parse_from_rfc3339(claim["opened"].as_str().expect("opened"))
        .expect("a time");
    let expires = chrono::DateTime::parse_from_rfc3339(claim["expires"].as_str().expect("expires"))
        .expect("a time");
    assert_eq!(
        expires - opened,
        chrono::Duration::hours(4),
        "the claim keeps the brain's TTL, not the 4h asked: {claim}"
    );
    assert!(log.contains("bsi: renew sess-w1"), "{log}");
    // Newest first: the waiter's grant by the close, the holder's open.
    assert_eq!(granted(&log), ["sess-w1", "sess-hold"]);
    assert_eq!(a.git(&["status", "--porcelain"]), "");
    assert_eq!(b.git(&["status", "--porcelain"]), "");
}

/// The handoff across the clones of this machine: a waiter of another
/// clone whose remote is the same repository on this disk records itself
/// where the clones' writers meet, so the close proves it alive and grants
/// it. Clones that cannot meet there (as on two machines) do not: the
/// waiter takes its grant itself.
#[test]
fn a_close_hands_over_to_a_live_waiter_of_another_clone_it_meets_on_this_disk() {
    for meet in [true, false] {
        let Machines {
            origin: _origin,
            bare,
            a,
            b,
        } = Machines::new();
        if !meet {
            std::fs::write(bare.path().join("bsi"), "").expect("no meeting there");
        }
        open_as(&a, "projets/plan.md#Goals", "sess-hold", "h").ok();
        let w = wait_for(&b, "projets/plan.md#Goals", "sess-w1", "bob");
        w.placed();
        let records = |dir: std::path::PathBuf| {
            // The records, not the places a close holds one while it
            // decides (`.pinned/`, `.pinners/`).
            std::fs::read_dir(dir).map_or(0, |d| {
                d.filter_map(Result::ok)
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                    .count()
            })
        };
        let meeting = bare.path().join("bsi/writes/brain-index/waiting");
        let own = b.dir.path().join(".git/bsi/waiting");
        assert_eq!(
            (records(meeting.clone()), records(own.clone())),
            if meet { (1, 0) } else { (0, 1) },
            "the waiter's record, where its writers meet"
        );
        let close = a.bsi(&["close", "sess-hold", "--agent", "h"]);
        close.ok();
        let handed = "Handed over — sess-w1 was waiting for projets/plan.md#Goals: its claim is granted in the same write";
        assert_eq!(close.stdout.contains(handed), meet, "{}", close.stdout);
        w.finish()
            .ok()
            .stdout_has("Claim opened — projets/plan.md#Goals");
        b.git(&["fetch", "-q", "origin", "brain-index"]);
        let log = b.git(&["log", "--format=%s", "origin/brain-index"]);
        let subject = log
            .lines()
            .find(|l| l.contains("sess-hold"))
            .expect("the close");
        if meet {
            assert_eq!(
                subject,
                "bsi: close sess-hold projets/plan.md#Goals; handed to sess-w1: projets/plan.md#Goals"
            );
            assert!(!log.contains("bsi: open sess-w1"), "{log}");
        } else {
            assert_eq!(subject, "bsi: close sess-hold projets/plan.md#Goals");
            assert!(log.contains("bsi: open sess-w1"), "{log}");
        }
        assert_eq!(granted(&log), ["sess-w1", "sess-hold"]);
        let st = a.bsi(&["status", "--json"]).json();
        assert_eq!(st["active"][0]["session"], "sess-w1", "{st}");
        assert_eq!(st["queue"], serde_json::json!([]), "{st}");
        // The record went with the wait.
        assert_eq!((records(meeting), records(own)), (0, 0));
        assert_eq!(a.git(&["status", "--porcelain"]), "");
        assert_eq!(b.git(&["status", "--porcelain"]), "");
    }
}

#[test]
fn a_later_request_waits_its_turn_and_a_plain_open_does_not_overtake() {
    let b = Brain::new();
    open_as(&b, "projets/plan.md#Goals", "sess-hold", "h").ok();
    // The waiter wants the whole file: the free Risks section is in its
    // request.
    let w = wait_for(&b, "projets/plan.md", "sess-w1", "bob");
    w.placed();
    let before = (b.commits(), b.registry());
    let r = open_as(&b, "projets/plan.md#Risks", "sess-late", "eve");
    r.code(3).stderr_has("Claim refused — nothing was written.");
    r.stderr_has("Waiting first in the queue: sess-w1 (bob, for projets/plan.md, since ");
    r.stderr_has("which would be place 2");
    r.stderr_has("wait in the queue up to 10m, behind sess-w1 (exit 0 once it is yours, exit 3 if it is still held): `bsi open 'projets/plan.md#Risks' --session sess-late --agent eve --wait 10m`");
    assert_eq!(
        (b.commits(), b.registry()),
        before,
        "a refusal writes nothing"
    );
    let j = b
        .bsi(&[
            "open",
            "projets/plan.md#Risks",
            "--session",
            "sess-late",
            "--json",
        ])
        .json();
    assert_eq!(j["error"], "conflict");
    assert_eq!(j["conflicts"], serde_json::json!([]));
    assert_eq!(j["queue"]["place"], 2);
    assert_eq!(j["queue"]["queued"], false);
    assert_eq!(j["queue"]["ahead"][0]["session"], "sess-w1");
    // A scope nobody waits for is still granted at once.
    open_as(&b, "agents/bob.md", "sess-other", "eve").ok();
    // The holder goes: the waiter is served, the late request was not.
    b.bsi(&["close", "sess-hold", "--agent", "h"]).ok();
    w.finish().ok().stdout_has("Claim opened — projets/plan.md");
    assert!(!b.active().iter().any(|r| r.contains("sess-late")));
}

#[test]
fn a_killed_waiters_place_lapses_with_its_lease() {
    let b = Brain::new();
    open_as(&b, "projets/plan.md#Goals", "sess-hold", "h").ok();
    let mut w = wait_for(&b, "projets/plan.md", "sess-dead", "bob");
    w.placed();
    w.child.kill().expect("kill the waiter");
    let _ = w.finish();
    // Its row is still in the registry, and live at the time it was written.
    assert!(
        b.registry()
            .contains("| sess-dead | projets/plan.md | bob | ")
    );
    assert!(
        b.bsi(&["status"])
            .stdout
            .contains("sess-dead (bob) waits for projets/plan.md")
    );
    // A minute later, its lease has passed: nobody waits.
    let st = b.bsi_env(&["status"], &[("BSI_NOW", &later(1))]);
    st.ok();
    assert!(!st.stdout.contains("Queue ("), "{}", st.stdout);
    let j = b
        .bsi_env(&["status", "--json"], &[("BSI_NOW", &later(1))])
        .json();
    assert_eq!(j["queue"], serde_json::json!([]));
    // And a plain request for what it waited for is granted.
    b.bsi_env(
        &[
            "open",
            "projets/plan.md#Risks",
            "--session",
            "sess-next",
            "--agent",
            "eve",
        ],
        &[("BSI_NOW", &later(1))],
    )
    .ok()
    .stdout_has("Claim opened — projets/plan.md#Risks");
    // The next waiter writes the queue: the lapsed place goes with it.
    let r = b.bsi_env(
        &[
            "open",
            "projets/plan.md#Goals",
            "--session",
            "sess-w2",
            "--agent",
            "al",
            "--wait",
            "1s",
        ],
        &[("BSI_NOW", &later(1))],
    );
    r.code(3);
    assert!(!b.registry().contains("sess-dead"), "{}", b.registry());
}

#[test]
fn a_waiter_that_gives_up_leaves_the_queue() {
    let b = Brain::new();
    open_as(&b, "projets/plan.md#Goals", "sess-hold", "h").ok();
    let before = b.commits();
    let r = b.bsi(&[
        "open",
        "projets/plan.md",
        "--session",
        "sess-me",
        "--agent",
        "al",
        "--wait",
        "1s",
    ]);
    r.code(3).stderr_has("Claim refused — nothing was written.");
    r.stdout_has("in the queue (Ctrl-C stops; the place lapses within 30s).");
    assert_eq!(b.commits(), before + 2, "its place, then its leaving");
    assert_eq!(b.last_subject(), "bsi: unqueue sess-me");
    assert!(!b.registry().contains("sess-me"));
    assert!(b.registry().contains("## File d'attente"));
    assert_eq!(b.git(&["status", "--porcelain"]), "");
}

#[test]
fn a_request_that_waiting_cannot_help_is_refused_with_its_reason() {
    let b = Brain::new();
    b.bsi(&[
        "open",
        "projets/plan.md#Goals",
        "--session",
        "sess-gone",
        "--agent",
        "h",
        "--ttl",
        "2h",
    ])
    .ok();
    // Three hours later the watchdog has marked it stale.
    b.bsi_env(&["watchdog"], &[("BSI_NOW", &later(180))])
        .code(4);
    assert!(b.stale().iter().any(|r| r.contains("sess-gone")));
    let before = (b.commits(), b.registry());
    let r = b.bsi_env(
        &[
            "open",
            "projets/plan.md",
            "--session",
            "sess-me",
            "--agent",
            "al",
            "--wait",
            "10m",
        ],
        &[("BSI_NOW", &later(180))],
    );
    r.code(3).stderr_has(
        "Not queued: waiting cannot help, a STALE claim is in the way and only a person frees it.",
    );
    r.stderr_has("bsi release sess-gone --confirm");
    assert_eq!((b.commits(), b.registry()), before, "no place taken");
    // Over the per-agent limit, it is refused at once too.
    b.write(".bsi.toml", "max_active_per_agent = 1\n");
    open_as(&b, "agents/bob.md", "sess-b1", "zed").ok();
    open_as(&b, "agents/alice.md", "sess-a1", "yan").ok();
    let r = b.bsi(&[
        "open",
        "agents/alice.md",
        "--session",
        "sess-b2",
        "--agent",
        "zed",
        "--wait",
        "10m",
    ]);
    assert_ne!(r.code, 0);
    r.stderr_has("zed");
    assert!(!b.registry().contains("sess-b2"));
}

#[test]
fn an_old_registry_without_a_queue_reads_and_gets_one_with_its_first_waiter() {
    let b = Brain::new();
    let before = b.registry();
    assert!(!before.contains("File d'attente"));
    b.bsi(&["open", "agents/", "--session", "sess-hold", "--agent", "h"])
        .ok();
    let w = wait_for(&b, "agents/bob.md", "sess-w", "bob");
    w.placed();
    let text = b.registry();
    assert!(
        text.contains("\n## File d'attente\n\n| Session | Scope | Agent | Depuis | Bail |\n|---------|-------|-------|--------|------|\n| sess-w | agents/bob.md | bob | 2026-03-14T09:30:"),
        "{text}"
    );
    b.bsi(&["close", "sess-hold", "--agent", "h"]).ok();
    w.finish().ok();
    // Everything above the queue is as it was, but for the claim rows.
    assert!(
        b.registry()
            .starts_with(&before[..before.find("## Claims actifs").expect("heading")])
    );
}

#[test]
fn the_merge_driver_unites_places_and_keeps_a_removal() {
    let b = Brain::new();
    let base_text = format!(
        "{}\n## File d'attente\n\n| Session | Scope | Agent | Depuis | Bail |\n|---|---|---|---|---|\n{}\n",
        b.registry(),
        "| sess-w1 | agents/ | al | 2026-03-14T09:30:01.000Z | 2026-03-14T09:30:31.000Z |"
    );
    let w2 =
        "| sess-w2 | agents/bob.md | bo | 2026-03-14T09:30:02.000Z | 2026-03-14T09:30:32.000Z |";
    let w3 = "| sess-w3 | README.md | cy | 2026-03-14T09:30:03.000Z | 2026-03-14T09:30:33.000Z |";
    // Ours: a second waiter. Theirs: the first one granted (its place
    // gone) and a third waiter.
    let ours = format!("{base_text}{w2}\n");
    let theirs = base_text.replace(
        "| sess-w1 | agents/ | al | 2026-03-14T09:30:01.000Z | 2026-03-14T09:30:31.000Z |\n",
        &format!("{w3}\n"),
    );
    let dir = b.path().join(".git");
    let (pb, po, pt) = (dir.join("m-base"), dir.join("m-ours"), dir.join("m-theirs"));
    std::fs::write(&pb, &base_text).expect("write");
    std::fs::write(&po, &ours).expect("write");
    std::fs::write(&pt, &theirs).expect("write");
    let r = b.bsi(&[
        "merge-driver",
        pb.to_str().expect("utf-8"),
        po.to_str().expect("utf-8"),
        pt.to_str().expect("utf-8"),
    ]);
    r.ok();
    assert!(!r.stderr.contains("falling back"), "{}", r.stderr);
    let merged = std::fs::read_to_string(&po).expect("read");
    let queue = merged.split("## File d'attente").nth(1).expect("one queue");
    assert!(queue.contains(w2) && queue.contains(w3), "{merged}");
    assert!(
        !queue.contains("sess-w1"),
        "a granted place stays gone: {merged}"
    );
    assert_eq!(merged.matches("## File d'attente").count(), 1);
}

#[test]
fn the_merge_driver_judges_a_place_merged_in_by_the_record_that_kept_it_alive() {
    let b = Brain::new();
    let head = format!(
        "{}\n## File d'attente\n\n| Session | Scope | Agent | Depuis | Bail |\n|---|---|---|---|---|\n",
        b.registry()
    );
    let w1 =
        |lease: &str| format!("| sess-w1 | agents/ | al | 2026-03-14T09:30:01.000Z | {lease} |\n");
    let w2 =
        "| sess-w2 | agents/bob.md | bo | 2026-03-14T09:30:05.000Z | 2026-03-14T09:31:05.000Z |\n";
    let base = format!("{head}{}", w1("2026-03-14T09:30:31.000Z"));
    // Ours renewed the first place at 09:30:40, after its row's lease on
    // the side merged in had passed; theirs queued a second waiter.
    let ours = format!("{head}{}", w1("2026-03-14T09:31:10.000Z"));
    let theirs = format!("{base}{w2}");
    let dir = b.path().join(".git");
    let (pb, po, pt) = (dir.join("m-base"), dir.join("m-ours"), dir.join("m-theirs"));
    let merge = |record: bool| -> String {
        std::fs::write(&pb, &base).expect("write");
        std::fs::write(&po, &ours).expect("write");
        std::fs::write(&pt, &theirs).expect("write");
        if record {
            // Another clone's record, as fetched: it kept the first place
            // alive until 09:31:30.
            let blob = b.git_stdin(
                &["hash-object", "-w", "--stdin"],
                "sess-w1\t2026-03-14T09:30:01.000Z\t2026-03-14T09:31:30.000Z\n",
            );
            let tree = b.git_stdin(
                &["mktree"],
                &format!("100644 blob {}\talive\n", blob.trim()),
            );
            let commit = b.git(&["commit-tree", tree.trim(), "-m", "record"]);
            b.git(&[
                "update-ref",
                "refs/bsi/alive-seen/origin/0123abcd",
                commit.trim(),
            ]);
        }
        let r = b.bsi_env(
            &[
                "merge-driver",
                pb.to_str().expect("utf-8"),
                po.to_str().expect("utf-8"),
                pt.to_str().expect("utf-8"),
            ],
            &[("BSI_NOW", "2026-03-14T09:30:50Z")],
        );
        r.ok();
        let merged = std::fs::read_to_string(&po).expect("read");
        let queue = merged
            .split("## File d'attente")
            .nth(1)
            .expect("a queue")
            .to_string();
        queue
            .lines()
            .filter_map(|l| l.strip_prefix("| sess-"))
            .map(|l| l[..2].to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    // By the rows alone the first place lapsed before its renewal: it
    // goes to the end.
    assert_eq!(merge(false), "w2 w1");
    // The record the others read kept it alive: it keeps its place.
    assert_eq!(merge(true), "w1 w2");
}

// --- the handoff decided while the waiter is there ---------------------------

/// Waits, at most a minute, for `what` to hold.
fn until(what: &str, mut ready: impl FnMut() -> bool) {
    let started = std::time::Instant::now();
    while !ready() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "never came: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A push to `bare` that waits in its `pre-receive` hook, once it has
/// touched `<marks>/entered`, until the test touches `<marks>/go` (ten
/// minutes at most): a write held in the middle of its push.
fn hold_pushes(bare: &std::path::Path) -> tempfile::TempDir {
    let marks = crate::common::scratch("bsi-push-held");
    let dir = marks.path().display();
    let hook = bare.join("hooks/pre-receive");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\ncat >/dev/null\ntouch '{dir}/entered'\ni=0\nwhile [ ! -e '{dir}/go' ] && [ $i -lt 6000 ]; do sleep 0.1; i=$((i + 1)); done\nexit 0\n"
        ),
    )
    .expect("write hook");
    let mut perms = std::fs::metadata(&hook).expect("hook").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&hook, perms).expect("chmod");
    marks
}

/// The sessions with an active claim in `b`'s registry as the remote has
/// it.
fn holders(b: &Brain) -> Vec<String> {
    let st = b.bsi(&["status", "--json"]).json();
    st["active"]
        .as_array()
        .expect("active")
        .iter()
        .map(|c| c["session"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A waiter killed while the close waits its turn at the writer lock is
/// not handed the scope: the close proves it alive when its write is
/// decided, not before it waits (before, it held the claim 2 h, with
/// nobody acting for it).
#[test]
fn a_waiter_killed_while_the_close_waits_its_turn_is_not_handed_the_scope() {
    let Machines {
        origin: _origin,
        bare,
        a: b,
        b: _other,
    } = Machines::new();
    open_as(&b, "projets/plan.md#Goals", "sess-hold", "h").ok();
    let mut w = wait_for(&b, "projets/plan.md#Goals", "sess-w1", "bob");
    w.placed();
    // Another write holds the lock, its push held on the way.
    let marks = hold_pushes(bare.path());
    let busy = b
        .command(&["open", "projets/plan.md#Risks", "--session", "sess-x"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run bsi");
    until("the other write pushes", || {
        marks.path().join("entered").exists()
    });
    // The clones of this machine meet in the remote's repository.
    let meeting = bare.path().join("bsi/writes/brain-index");
    // The close files its request and waits its turn; the waiter is
    // alive then.
    let requests = meeting.join("requests");
    let filed = || {
        std::fs::read_dir(&requests).map_or(0, |d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".req"))
                .count()
        })
    };
    let close = b
        .command(&["close", "sess-hold", "--agent", "h"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bsi");
    until("the close waits its turn", || filed() == 1);
    // The waiter dies; then the write in the way ends.
    w.child.kill().expect("kill the waiter");
    let _ = w.finish();
    std::fs::write(marks.path().join("go"), "").expect("let the push through");
    let busy = busy.wait_with_output().expect("the other write");
    assert!(busy.status.success(), "{busy:?}");
    let close = crate::common::Run::from_output(close.wait_with_output().expect("close"));
    close.ok().stdout_has("Claim closed — sess-hold");
    assert!(!close.stdout.contains("Handed over"), "{}", close.stdout);
    assert_eq!(
        b.last_subject(),
        "bsi: close sess-hold projets/plan.md#Goals"
    );
    assert_eq!(holders(&b), ["sess-x"], "{}", b.registry());
    assert_eq!(b.git(&["status", "--porcelain"]), "");
}

/// A `--wait 4s` waiter whose time runs out while the close that hands it
/// the scope is pushing does not say "nothing was written" and then hold
/// the claim: the handoff was decided while it waited, so it waits for
/// that write to end, finds its grant, and says it holds it.
#[test]
fn a_waiter_out_of_time_during_the_close_s_push_finds_its_grant() {
    let Machines {
        origin: _origin,
        bare,
        a,
        b: _b,
    } = Machines::new();
    open_as(&a, "projets/plan.md#Goals", "sess-hold", "h").ok();
    let spawned = std::time::Instant::now();
    let w = spawn(
        &a,
        &[
            "open",
            "projets/plan.md#Goals",
            "--session",
            "sess-w1",
            "--agent",
            "bob",
            "--wait",
            "4s",
        ],
    );
    w.placed();
    let marks = hold_pushes(bare.path());
    let close = a
        .command(&["close", "sess-hold", "--agent", "h"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bsi");
    until("the close pushes", || marks.path().join("entered").exists());
    // The waiter's four seconds run out while the push is held.
    let out = Duration::from_millis(5500);
    std::thread::sleep(out.saturating_sub(spawned.elapsed()));
    std::fs::write(marks.path().join("go"), "").expect("let the push through");
    let close = crate::common::Run::from_output(close.wait_with_output().expect("close"));
    close.ok().stdout_has(
        "Handed over — sess-w1 was waiting for projets/plan.md#Goals: its claim is granted in the same write",
    );
    let r = w.finish();
    r.ok().stdout_has("Claim opened — projets/plan.md#Goals");
    assert!(!r.stderr.contains("nothing was written"), "{}", r.stderr);
    assert_eq!(holders(&a), ["sess-w1"], "{}", a.registry());
    assert_eq!(a.git(&["status", "--porcelain"]), "");
}

/// A stateless MCP `claim` with `wait`, cancelled while the close that
/// hands it the scope is pushing, is not left holding it: its server waits
/// for that write to end, finds the grant and closes it again.
#[test]
fn a_stateless_mcp_claim_cancelled_during_the_close_s_push_is_not_left_the_scope() {
    use std::io::Write;
    let Machines {
        origin: _origin,
        bare,
        a,
        b: _b,
    } = Machines::new();
    open_as(&a, "projets/plan.md#Goals", "sess-hold", "h").ok();
    let mut server = a
        .command(&["mcp"])
        .env("BSI_SESSION", "sess-mine")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start bsi mcp");
    let mut stdin = server.stdin.take().expect("stdin");
    let meta = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test-client", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let call = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": "claim",
            "arguments": {"scopes": ["projets/plan.md#Goals"], "wait": 600},
            "_meta": meta,
        }
    });
    writeln!(stdin, "{call}").expect("send the claim");
    stdin.flush().expect("flush");
    until("the claim waits in the queue", || {
        a.bsi(&["status", "--json"]).json()["queue"][0]["session"] == "sess-mine"
    });
    let marks = hold_pushes(bare.path());
    let close = a
        .command(&["close", "sess-hold", "--agent", "h"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bsi");
    until("the close pushes", || marks.path().join("entered").exists());
    let cancel = serde_json::json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "no longer needed"}
    });
    writeln!(stdin, "{cancel}").expect("cancel the claim");
    stdin.flush().expect("flush");
    // Time for the server to hear it (it looks every 200 ms) before the
    // push goes through.
    std::thread::sleep(Duration::from_secs(2));
    std::fs::write(marks.path().join("go"), "").expect("let the push through");
    let close = crate::common::Run::from_output(close.wait_with_output().expect("close"));
    close.ok();
    // The grant the close decided while the claim waited is closed again
    // by the server that gave up.
    until("the cancelled claim's grant is closed again", || {
        holders(&a).is_empty()
    });
    drop(stdin);
    let status = server.wait().expect("the server ends with its client");
    assert!(status.success(), "{status:?}");
    a.git(&["fetch", "-q", "origin", "brain-index"]);
    let log = a.git(&["log", "-3", "--format=%s", "origin/brain-index"]);
    assert!(log.contains("bsi: close sess-mine"), "{log}");
    assert!(holders(&a).is_empty(), "{}", a.registry());
    assert_eq!(a.git(&["status", "--porcelain"]), "");
}
