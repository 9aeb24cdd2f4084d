//! What a person sees (issue 47): every printed next step runs as printed
//! where it was printed, what a request asked for is kept when the queue
//! grants it, and the words a newcomer meets say what is true.

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::Brain;

/// A `--note` given with `--wait` is the granted claim's note when a close
/// hands the claim over (the queue itself keeps no note).
#[test]
fn a_note_given_with_wait_is_kept_when_the_queue_grants_the_claim() {
    let b = Brain::new();
    b.bsi(&[
        "open",
        "projets/plan.md",
        "--session",
        "sess-hold",
        "--agent",
        "h",
    ])
    .ok();
    let mut waiter = b
        .command(&[
            "open",
            "projets/plan.md",
            "--session",
            "sess-w",
            "--agent",
            "w",
            "--note",
            "rewriting the risks",
            "--wait",
            "60s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bsi");
    // The waiter has its place once the queue holds it.
    let start = Instant::now();
    while !b.registry().contains("| sess-w |") {
        assert!(start.elapsed() < Duration::from_secs(60), "never queued");
        std::thread::sleep(Duration::from_millis(100));
    }
    b.bsi(&["close", "sess-hold", "--agent", "h"])
        .ok()
        .stdout_has("Handed over — sess-w");
    let status = waiter.wait().expect("wait bsi");
    let mut out = String::new();
    waiter
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("read");
    assert_eq!(status.code(), Some(0), "{out}");
    assert!(out.contains("Claim opened — projets/plan.md"), "{out}");
    let st = b.bsi(&["status", "--json"]).json();
    let active = st["active"].as_array().expect("active");
    assert_eq!(active.len(), 1, "{st}");
    assert_eq!(active[0]["session"], "sess-w");
    assert_eq!(active[0]["note"], "rewriting the risks", "{st}");
    assert_eq!(b.last_subject(), "bsi: note sess-w projets/plan.md");
    assert_eq!(b.git(&["status", "--porcelain"]), "");
}
