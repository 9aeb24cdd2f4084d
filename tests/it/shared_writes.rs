//! Writes that share a push: the writers of one clone (or of the clones of
//! one machine that share a remote on its disk) waiting for their writer
//! lock are carried out by whoever holds it, on one tip, with one push,
//! each with its own outcome; a holder that dies mid-push leaves every
//! request landed or reported, and none carried out twice. Writers of
//! other machines post their requests on the remote, for the next push
//! that lands to carry out.

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Brain, Run};

/// Where the writers of the clones of a remote on this disk meet: its
/// repository's `bsi/writes/<branch>`.
fn meeting(remote: &Path) -> PathBuf {
    remote.join("bsi/writes/brain-index")
}

/// Takes the writers' lock of `meeting` as another bsi would, until dropped.
fn hold_lock(meeting: &Path) -> File {
    fs::create_dir_all(meeting).expect("mkdir");
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(meeting.join("lock"))
        .expect("open the lock");
    f.lock().expect("lock");
    f
}

/// The requests waiting in `meeting`.
fn waiting(meeting: &Path) -> usize {
    fs::read_dir(meeting.join("requests")).map_or(0, |d| {
        d.flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".req"))
            .count()
    })
}

/// Waits until `n` requests wait for the lock of `meeting`.
fn until_waiting(meeting: &Path, n: usize) {
    let start = Instant::now();
    while waiting(meeting) < n {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{} of {n} requests filed",
            waiting(meeting)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `bsi -v open SCOPE --session SESSION`, started.
fn open(b: &Brain, scope: &str, session: &str, env: &[(&str, &str)]) -> Child {
    let mut cmd = b.command(&["-v", "open", scope, "--session", session]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bsi")
}

fn finish(c: Child) -> Run {
    Run::from_output(c.wait_with_output().expect("wait bsi"))
}

/// What `git ARGS` prints in `dir`.
fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("git");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The rows of the remote's registry naming `session`.
fn remote_rows(remote: &Path, session: &str) -> usize {
    git_in(remote, &["show", "brain-index:BRAIN-INDEX.md"])
        .lines()
        .filter(|l| l.starts_with(&format!("| {session} ")))
        .count()
}

/// A clone of a bare remote, as the writers' machine.
fn machine() -> (Brain, tempfile::TempDir) {
    let origin = Brain::new();
    let remote = origin.publish_to_bare();
    let b = Brain::clone_of(remote.path(), "m");
    b.bsi(&["status"]).ok();
    (b, remote)
}

/// A machine where `sess-holder` holds `projets/`, its user's branch, index
/// and files as they are then, and the writers' lock held (the clone's
/// writers meet in the remote's repository, on this disk).
fn holding_projets() -> (Brain, tempfile::TempDir, (String, String, String), File) {
    let (b, remote) = machine();
    b.bsi(&["open", "projets/", "--session", "sess-holder"])
        .ok();
    let before = b.user_state();
    let lock = hold_lock(&meeting(remote.path()));
    (b, remote, before, lock)
}

#[test]
fn writers_waiting_for_the_lock_share_one_push_and_each_hears_its_own_outcome() {
    let (b, remote, before, lock) = holding_projets();
    let asks = [
        ("agents/alice.md", "sess-a"),
        ("projets/plan.md", "sess-refused"),
        ("agents/bob.md", "sess-b"),
        ("README.md", "sess-c"),
    ];
    let mut children = Vec::new();
    for (i, (scope, session)) in asks.iter().enumerate() {
        children.push(open(&b, scope, session, &[]));
        // Filed in this order: the arrival order the holder plans in.
        until_waiting(&meeting(remote.path()), i + 1);
    }
    drop(lock);
    let runs: Vec<Run> = children.into_iter().map(finish).collect();
    for (i, (scope, session)) in asks.iter().enumerate() {
        let r = &runs[i];
        if *session == "sess-refused" {
            r.code(3);
            assert!(
                r.stderr.contains("sess-holder") && r.stderr.contains("projets/"),
                "the refusal names its own blocker: {}",
                r.stderr
            );
            assert_eq!(remote_rows(remote.path(), session), 0);
        } else {
            r.ok().stdout_has(&format!("Claim opened — {scope}"));
            assert!(
                r.stdout.contains(&format!("Session: {session}")),
                "{}",
                r.stdout
            );
            assert_eq!(remote_rows(remote.path(), session), 1, "{session}");
        }
    }
    // One push carried the three writes: one writer said so, none lost a
    // race, and the remote has one commit carrying them, in arrival order,
    // naming each write and the requests of the other writers.
    let said: Vec<&Run> = runs
        .iter()
        .filter(|r| {
            r.stderr
                .contains("published 3 write(s) of 4 request(s) with one push")
        })
        .collect();
    assert_eq!(
        said.len(),
        1,
        "{:#?}",
        runs.iter().map(|r| &r.stderr).collect::<Vec<_>>()
    );
    assert!(runs.iter().all(|r| !r.stderr.contains("published 1 write")));
    assert_eq!(
        git_in(remote.path(), &["log", "-2", "--format=%s", "brain-index"]),
        "bsi: 3 writes: open sess-a agents/alice.md; open sess-b agents/bob.md; open sess-c README.md\nbsi: open sess-holder projets/\n"
    );
    let body = git_in(remote.path(), &["log", "-1", "--format=%b", "brain-index"]);
    for session in ["sess-a", "sess-b", "sess-c"] {
        assert!(
            body.contains(&format!("BSI-Session: {session}\n")),
            "{body}"
        );
    }
    // The holder's own write needs no name; the refused request's holder
    // names all three.
    let named = body.matches("BSI-Request: ").count();
    assert!((2..=3).contains(&named), "{body}");
    // Every request's files are gone; the user's work is untouched.
    assert_eq!(
        fs::read_dir(meeting(remote.path()).join("requests"))
            .expect("requests")
            .count(),
        0
    );
    assert_eq!(b.user_state(), before);
}

#[test]
fn writers_of_clones_sharing_a_remote_on_this_disk_meet_there_and_share_one_push() {
    let origin = Brain::new();
    let remote = origin.publish_to_bare();
    let clones: Vec<Brain> = ["w", "x", "y"]
        .iter()
        .map(|who| {
            let b = Brain::clone_of(remote.path(), who);
            b.bsi(&["status"]).ok();
            b
        })
        .collect();
    let before: Vec<_> = clones.iter().map(Brain::user_state).collect();
    let meeting = meeting(remote.path());
    let lock = hold_lock(&meeting);
    // x and y ask for one file: the first to arrive is granted, the other
    // refused naming it; w's request is refused by nobody.
    let asks = [
        ("README.md", "sess-w"),
        ("agents/alice.md", "sess-x"),
        ("agents/alice.md", "sess-y"),
    ];
    let mut children = Vec::new();
    for (i, (b, (scope, session))) in clones.iter().zip(asks).enumerate() {
        children.push(open(b, scope, session, &[]));
        until_waiting(&meeting, i + 1);
    }
    drop(lock);
    let runs: Vec<Run> = children.into_iter().map(finish).collect();
    runs[0].ok().stdout_has("Claim opened — README.md");
    runs[1].ok().stdout_has("Claim opened — agents/alice.md");
    runs[2].code(3);
    assert!(
        runs[2].stderr.contains("sess-x") && runs[2].stderr.contains("agents/alice.md"),
        "the refusal names its blocker: {}",
        runs[2].stderr
    );
    assert_eq!(remote_rows(remote.path(), "sess-w"), 1);
    assert_eq!(remote_rows(remote.path(), "sess-x"), 1);
    assert_eq!(remote_rows(remote.path(), "sess-y"), 0);
    // One push from whichever clone held the lock, no race lost, nothing
    // posted: the other clones' writers read their outcome there.
    let said: Vec<&String> = runs.iter().map(|r| &r.stderr).collect();
    assert_eq!(
        said.iter()
            .filter(|s| s.contains("published 2 write(s) of 3 request(s) with one push"))
            .count(),
        1,
        "{said:#?}"
    );
    assert!(
        said.iter()
            .all(|s| !s.contains("lost a race") && !s.contains("posted")),
        "{said:#?}"
    );
    assert_eq!(
        git_in(remote.path(), &["log", "-1", "--format=%s", "brain-index"]),
        "bsi: 2 writes: open sess-w README.md; open sess-x agents/alice.md\n"
    );
    // What the push posted beside the branch (a clone's last post stays
    // until its next write) it carried out: a post holds only what its push
    // writes, so the refused request is not left there for another
    // machine's carrier to take for one still to carry out.
    let (carried, posted) = requests_on(remote.path());
    assert_eq!(carried.len(), 2, "{carried:?}");
    for p in &posted {
        assert!(carried.contains(p), "{p} left posted, never carried out");
    }
    // Each clone sees the claims; no request file is left; no clone's own
    // work moved.
    for (b, state) in clones.iter().zip(before) {
        let active = b.active().join("\n");
        assert!(
            active.contains("| sess-w |") && active.contains("| sess-x |"),
            "{active}"
        );
        assert_eq!(b.user_state(), state);
    }
    assert_eq!(waiting(&meeting), 0);
    assert_eq!(
        fs::read_dir(meeting.join("requests"))
            .expect("requests")
            .count(),
        0
    );
}

#[test]
fn a_write_that_rests_on_one_before_it_in_the_push_gets_its_own_commit() {
    let (b, remote, before, lock) = holding_projets();
    // The close comes first: the open of a file inside the closed folder
    // fits only once it is carried out.
    let mut close = b.command(&["-v", "close", "sess-holder"]);
    close.env("BSI_SESSION", "sess-holder");
    let close = close
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bsi");
    until_waiting(&meeting(remote.path()), 1);
    let other = open(&b, "agents/alice.md", "sess-a", &[]);
    until_waiting(&meeting(remote.path()), 2);
    let inside = open(&b, "projets/plan.md", "sess-b", &[]);
    until_waiting(&meeting(remote.path()), 3);
    drop(lock);
    let close = finish(close);
    let (other, inside) = (finish(other), finish(inside));
    close.ok().stdout_has("Claim closed");
    other.ok().stdout_has("Claim opened — agents/alice.md");
    inside.ok().stdout_has("Claim opened — projets/plan.md");
    // One push; the close and the open beside it share a commit, the open
    // that rests on the close has its own on it.
    let runs = [&close, &other, &inside];
    assert_eq!(
        runs.iter()
            .filter(|r| r
                .stderr
                .contains("published 3 write(s) of 3 request(s) with one push"))
            .count(),
        1,
        "{:#?}",
        runs.iter().map(|r| &r.stderr).collect::<Vec<_>>()
    );
    assert_eq!(
        git_in(remote.path(), &["log", "-3", "--format=%s", "brain-index"]),
        "bsi: open sess-b projets/plan.md\nbsi: 2 writes: close sess-holder projets/; open sess-a agents/alice.md\nbsi: open sess-holder projets/\n"
    );
    assert_eq!(remote_rows(remote.path(), "sess-b"), 1);
    assert_eq!(b.user_state(), before);
}

#[test]
fn a_holder_dead_after_its_push_leaves_every_request_landed_once() {
    let (b, remote) = machine();
    let lock = hold_lock(&meeting(remote.path()));
    let asks = [
        ("agents/alice.md", "sess-a"),
        ("agents/bob.md", "sess-b"),
        ("README.md", "sess-c"),
    ];
    let mut children = Vec::new();
    for (i, (scope, session)) in asks.iter().enumerate() {
        // Whichever takes the lock first carries out all three and dies
        // once its push landed, before it records any outcome.
        children.push(open(
            &b,
            scope,
            session,
            &[("BSI_FAULT_POINT", "after-push")],
        ));
        until_waiting(&meeting(remote.path()), i + 1);
    }
    drop(lock);
    let runs: Vec<Run> = children.into_iter().map(finish).collect();
    let died = runs.iter().filter(|r| r.code != 0).count();
    assert_eq!(
        died,
        1,
        "the holder dies, the others read their outcome: {:#?}",
        runs.iter()
            .map(|r| (&r.code, &r.stderr))
            .collect::<Vec<_>>()
    );
    for (i, (scope, session)) in asks.iter().enumerate() {
        // Landed once, whoever died.
        assert_eq!(remote_rows(remote.path(), session), 1, "{session}");
        if runs[i].code == 0 {
            runs[i].stdout_has(&format!("Claim opened — {scope}"));
        }
    }
    // The next write finds the clone whole: the local branch catches up.
    b.bsi(&["open", "projets/", "--session", "sess-after"]).ok();
    for (_, session) in asks {
        assert_eq!(remote_rows(remote.path(), session), 1, "{session}");
    }
    let active = b.active().join("\n");
    assert!(
        asks.iter()
            .all(|(_, s)| active.contains(&format!("| {s} |")))
            && active.contains("| sess-after |"),
        "{active}"
    );
}

/// A barrier on the remote, for pushes that post write requests (their
/// first attempt): each waits in `pre-receive` until `n` such pushes
/// arrived, so all are planned on one tip and race, and in `post-receive`
/// until `n` landed their posts, so every loser's fetch sees every post.
fn post_barrier(remote: &Path, n: usize) -> tempfile::TempDir {
    let marks = tempfile::tempdir().expect("tempdir");
    let dir = marks.path().display();
    for (hook, mark) in [("pre-receive", "arrived"), ("post-receive", "landed")] {
        let script = format!(
            r#"#!/bin/sh
posts=0
while read -r old new ref; do
  case "$ref" in refs/bsi/requests/*) [ "$new" = 0000000000000000000000000000000000000000 ] || posts=1 ;; esac
done
[ "$posts" = 1 ] || exit 0
touch "{dir}/{mark}.$$"
i=0
while [ "$(ls "{dir}" | grep -c '^{mark}\.')" -lt {n} ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
exit 0
"#
        );
        let path = remote.join("hooks").join(hook);
        fs::write(&path, script).expect("write hook");
        let mut perms = fs::metadata(&path).expect("hook").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        fs::set_permissions(&path, perms).expect("chmod");
    }
    marks
}

/// How many pushes reached `pre-receive` with a post.
fn arrived(marks: &Path) -> usize {
    fs::read_dir(marks).map_or(0, |d| {
        d.flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("arrived."))
            .count()
    })
}

/// Clones of `remote`, one per name, each having read the registry, as
/// machines of their own: they cannot meet in the remote's repository
/// (there, `bsi` is a file), so their writes race and post as those of
/// separate machines do, while the remote is still read on this disk.
fn machines(remote: &Path, names: &[&str]) -> Vec<Brain> {
    fs::write(remote.join("bsi"), "").expect("no meeting there");
    names
        .iter()
        .map(|who| {
            let b = Brain::clone_of(remote, who);
            b.bsi(&["status"]).ok();
            b
        })
        .collect()
}

/// Each clone opens its scope, in order, each started once the push of
/// the one before reached the barrier; every run, to its end.
fn open_at_barrier(
    clones: &[Brain],
    asks: &[(&str, &str)],
    marks: &Path,
    env: &[(&str, &str)],
) -> Vec<Run> {
    let mut children = Vec::new();
    for (i, (b, (scope, session))) in clones.iter().zip(asks).enumerate() {
        children.push(open(b, scope, session, env));
        let start = Instant::now();
        while arrived(marks) < i + 1 {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "push {i} never came"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    children.into_iter().map(finish).collect()
}

/// The requests the registry branch's history carries out (their
/// `BSI-Request` trailers), and those still posted on the remote.
fn requests_on(remote: &Path) -> (Vec<String>, Vec<String>) {
    let git = |args: &[&str]| git_in(remote, args);
    let carried: Vec<String> = git(&[
        "log",
        "--format=%(trailers:key=BSI-Request,valueonly)",
        "brain-index",
    ])
    .lines()
    .filter(|l| !l.trim().is_empty())
    .map(|l| l.trim().to_string())
    .collect();
    let mut posted = Vec::new();
    for r in git(&["for-each-ref", "--format=%(refname)", "refs/bsi/requests/"]).lines() {
        let body = git(&["show", &format!("{r}:requests.json")]);
        let jobs: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&body).expect("the posted requests, as JSON");
        posted.extend(jobs.keys().cloned());
    }
    (carried, posted)
}

#[test]
fn writers_of_other_clones_that_lost_a_race_are_carried_out_by_the_next_push() {
    carried_out_by_the_next_push(Fetch::OnDisk);
}

/// The same, where git fetches: a remote bsi may not read on this disk
/// (one with an `uploadpack` of its own, as a server over SSH or HTTP is
/// read), whose posts come into local copies.
#[test]
fn writers_of_other_clones_that_fetch_with_git_are_carried_out_by_the_next_push() {
    carried_out_by_the_next_push(Fetch::WithGit);
}

#[derive(PartialEq)]
enum Fetch {
    OnDisk,
    WithGit,
}

fn carried_out_by_the_next_push(fetch: Fetch) {
    let origin = Brain::new();
    let remote = origin.publish_to_bare();
    let clones = machines(remote.path(), &["w", "x", "y"]);
    if fetch == Fetch::WithGit {
        for b in &clones {
            b.git(&["config", "remote.origin.uploadpack", "git-upload-pack"]);
        }
    }
    let before: Vec<_> = clones.iter().map(Brain::user_state).collect();
    let marks = post_barrier(remote.path(), 3);
    // x and y ask for the same file: one of them is granted (the first to
    // land, or the first to arrive in a push that carries both), the other
    // refused; w's request is refused by nobody.
    let asks = [
        ("README.md", "sess-w"),
        ("agents/alice.md", "sess-x"),
        ("agents/alice.md", "sess-y"),
    ];
    let runs = open_at_barrier(&clones, &asks, marks.path(), &[]);
    let said: Vec<&String> = runs.iter().map(|r| &r.stderr).collect();
    runs[0].ok().stdout_has("Claim opened — README.md");
    assert_eq!(remote_rows(remote.path(), "sess-w"), 1);
    let (granted, refused) = if runs[1].code == 0 { (1, 2) } else { (2, 1) };
    let name = |i: usize| asks[i].1;
    runs[granted]
        .ok()
        .stdout_has("Claim opened — agents/alice.md");
    runs[refused].code(3);
    assert!(
        runs[refused].stderr.contains(name(granted))
            && runs[refused].stderr.contains("agents/alice.md"),
        "the refusal names its blocker: {}",
        runs[refused].stderr
    );
    assert_eq!(remote_rows(remote.path(), name(granted)), 1);
    assert_eq!(remote_rows(remote.path(), name(refused)), 0);
    // Two lost the first race and posted; the next push that landed
    // decided on both, its own and the other clone's.
    assert!(
        said.iter()
            .filter(|s| s.contains("posted 1 request(s)"))
            .count()
            >= 2,
        "{said:#?}"
    );
    assert!(
        said.iter()
            .any(|s| s.contains("of 2 request(s) with one push")),
        "{said:#?}"
    );
    // Each granted request is carried out once, named in its commit; no
    // request is left posted that was not decided.
    let (carried, posted) = requests_on(remote.path());
    assert_eq!(carried.len(), 2, "{carried:?}");
    assert_ne!(carried[0], carried[1]);
    for p in &posted {
        assert!(carried.contains(p), "{p} left posted, never carried out");
    }
    for (b, state) in clones.iter().zip(before) {
        assert_eq!(b.user_state(), state);
    }
    // Read on this disk, the posts were read where they are: no clone has
    // a local copy of one. Fetched by git, the loser's copies are there
    // until a fetch finds them gone.
    let on_disk = said
        .iter()
        .filter(|s| s.contains("in its repository on this disk"))
        .count();
    let copies: usize = clones
        .iter()
        .map(|b| {
            b.git(&["for-each-ref", "--format=%(refname)", "refs/bsi/posted/"])
                .lines()
                .count()
        })
        .sum();
    match fetch {
        Fetch::OnDisk => assert!(on_disk >= 2 && copies == 0, "{said:#?}"),
        Fetch::WithGit => assert!(on_disk == 0 && copies >= 1, "{said:#?}"),
    }
}

#[test]
fn a_carrier_of_other_clones_dead_after_its_push_leaves_every_request_landed_once() {
    let origin = Brain::new();
    let remote = origin.publish_to_bare();
    let clones = machines(remote.path(), &["w", "x", "y"]);
    let marks = post_barrier(remote.path(), 3);
    let asks = [
        ("README.md", "sess-w"),
        ("agents/alice.md", "sess-x"),
        ("agents/bob.md", "sess-y"),
    ];
    // Every writer dies once a push of its own landed: the one that
    // carries the other clones' requests dies before it says anything.
    let runs = open_at_barrier(
        &clones,
        &asks,
        marks.path(),
        &[("BSI_FAULT_POINT", "after-push")],
    );
    // The winner of the first race died after its push, and so did the
    // carrier of the next: the writer it carried out lives to say so.
    assert!(
        runs.iter().any(|r| r.code == 0),
        "{:#?}",
        runs.iter().map(|r| &r.stderr).collect::<Vec<_>>()
    );
    for (r, (scope, session)) in runs.iter().zip(asks) {
        assert_eq!(remote_rows(remote.path(), session), 1, "{session}");
        if r.code == 0 {
            // Carried out by the writer that died: read from the history.
            r.stdout_has(&format!("Claim opened — {scope}"));
            assert!(
                r.stderr.contains("carried out by another writer's push"),
                "{}",
                r.stderr
            );
        }
    }
    let (carried, _) = requests_on(remote.path());
    let mut unique = carried.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        carried.len(),
        "carried out twice: {carried:?}"
    );
}

#[test]
fn a_writer_refused_after_it_posted_withdraws_its_post() {
    let origin = Brain::new();
    let remote = origin.publish_to_bare();
    let clones = machines(remote.path(), &["x", "y"]);
    let marks = post_barrier(remote.path(), 2);
    let asks = [("agents/alice.md", "sess-x"), ("agents/alice.md", "sess-y")];
    let runs = open_at_barrier(&clones, &asks, marks.path(), &[]);
    // One push landed; the other lost the race with its request posted,
    // and is refused on the registry it fetched: its post goes with it.
    let (won, lost) = if runs[0].code == 0 { (0, 1) } else { (1, 0) };
    runs[won].ok().stdout_has("Claim opened — agents/alice.md");
    runs[lost].code(3);
    assert!(
        runs[lost].stderr.contains("posted 1 request(s)"),
        "{}",
        runs[lost].stderr
    );
    let (carried, posted) = requests_on(remote.path());
    assert_eq!(carried.len(), 1, "{carried:?}");
    // What is left posted is the winner's own request, carried out by its
    // push; nothing of the refused writer.
    assert_eq!(posted, carried);
}

#[test]
fn a_remote_that_refuses_the_posted_requests_gets_the_registry_alone() {
    let origin = Brain::new();
    let remote = origin.publish_to_bare();
    // A server's policy: nothing but branches and tags.
    let hook = remote.path().join("hooks/pre-receive");
    fs::write(
        &hook,
        "#!/bin/sh\nwhile read -r old new ref; do\n  case \"$ref\" in refs/heads/*|refs/tags/*) ;; *) echo \"only branches and tags here: $ref\"; exit 1 ;; esac\ndone\n",
    )
    .expect("write hook");
    let mut perms = fs::metadata(&hook).expect("hook").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(&hook, perms).expect("chmod");
    let b = machines(remote.path(), &["x"]).remove(0);
    let before = b.user_state();
    let first = finish(open(&b, "agents/alice.md", "sess-a", &[]));
    first.ok().stdout_has("Claim opened — agents/alice.md");
    assert!(
        first.stderr.contains("refused the posted requests")
            && first.stderr.contains("only branches and tags here"),
        "{}",
        first.stderr
    );
    assert_eq!(remote_rows(remote.path(), "sess-a"), 1);
    // The next write does not try again.
    let second = finish(open(&b, "agents/bob.md", "sess-b", &[]));
    second.ok().stdout_has("Claim opened — agents/bob.md");
    assert!(
        !second.stderr.contains("refused the posted requests"),
        "{}",
        second.stderr
    );
    assert_eq!(remote_rows(remote.path(), "sess-b"), 1);
    let (_, posted) = requests_on(remote.path());
    assert!(posted.is_empty(), "{posted:?}");
    assert_eq!(b.user_state(), before);
}

/// Names the remote of `b` through `url.<base>.insteadOf`: bsi still reads
/// it on this disk, but cannot see from its files that the branch moved
/// before it pushes, so a write of `b` behind the remote loses its race and
/// posts, as one of a machine elsewhere does.
fn behind_unseen(b: &Brain, remote: &Path) {
    let bare = remote.display().to_string();
    b.git(&["config", &format!("url.{bare}.insteadOf"), "brain-remote:"]);
    b.git(&["remote", "set-url", "origin", "brain-remote:"]);
}

/// Three clones of a remote as machines apart; the first writes, so the
/// next write of the two others loses its race and posts.
fn two_behind() -> (tempfile::TempDir, Vec<Brain>) {
    let origin = Brain::new();
    let remote = origin.publish_to_bare();
    let clones = machines(remote.path(), &["w", "x", "y"]);
    for b in &clones[1..] {
        behind_unseen(b, remote.path());
    }
    clones[0]
        .bsi(&["open", "README.md", "--session", "sess-w"])
        .ok();
    (remote, clones)
}

/// The requests posted on `remote` that no commit carried out.
fn undecided(remote: &Path) -> usize {
    let (carried, posted) = requests_on(remote);
    posted.iter().filter(|p| !carried.contains(p)).count()
}

/// Waits until `n` requests are posted on `remote`, not carried out.
fn until_posted(remote: &Path, n: usize) {
    let start = Instant::now();
    while undecided(remote) < n {
        assert!(start.elapsed() < Duration::from_secs(60), "never posted");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_writer_killed_after_it_posted_is_never_carried_out() {
    let (remote, clones) = two_behind();
    // x loses its race, posts its request, and dies there.
    let x = clones[1].bsi_env(
        &["-v", "open", "agents/", "--session", "sess-x"],
        &[("BSI_FAULT_POINT", "after-post")],
    );
    assert_ne!(x.code, 0);
    x.stderr_has("posted 1 request(s)");
    assert_eq!(undecided(remote.path()), 1, "x's post is there");
    // y loses its race too, seconds later, and finds x's post: its writer
    // is dead, no command will report it, and it is not carried out.
    let y = clones[2].bsi(&["-v", "open", "agents/", "--session", "sess-y"]);
    y.ok().stdout_has("Claim opened — agents/");
    assert_eq!(remote_rows(remote.path(), "sess-x"), 0, "{}", y.stderr);
    assert_eq!(remote_rows(remote.path(), "sess-y"), 1);
}

#[test]
fn a_post_whose_lease_lapsed_is_not_carried_out_and_ctrl_c_withdraws_it() {
    let (remote, clones) = two_behind();
    // x loses its race, posts, and stops there, alive: it renews nothing.
    let mut x = clones[1]
        .command(&["-v", "open", "agents/", "--session", "sess-x"])
        .env("BSI_FAULT_POINT", "after-post:wait")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bsi");
    until_posted(remote.path(), 1);
    // y writes 90 s later by its clock: x's lease (30 s) lapsed.
    let later = chrono::DateTime::parse_from_rfc3339(&clones[2].now).expect("a time")
        + chrono::Duration::seconds(90);
    let y = clones[2].bsi_env(
        &["-v", "open", "agents/", "--session", "sess-y"],
        &[("BSI_NOW", &later.to_rfc3339())],
    );
    y.ok().stdout_has("Claim opened — agents/");
    assert_eq!(remote_rows(remote.path(), "sess-x"), 0, "{}", y.stderr);
    // Ctrl-C: x withdraws its post on the way out.
    let status = std::process::Command::new("kill")
        .args(["-INT", &x.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let start = Instant::now();
    while x.try_wait().expect("wait").is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = x.kill();
            panic!("an interrupted writer never ended");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let x = finish(x);
    assert_eq!(x.code, 130, "{}", x.stderr);
    let (carried, posted) = requests_on(remote.path());
    for p in &posted {
        assert!(carried.contains(p), "{p} left posted: {}", x.stderr);
    }
    assert_eq!(remote_rows(remote.path(), "sess-x"), 0);
}

#[test]
fn a_writer_that_waits_for_a_carrier_renews_its_post_s_lease() {
    let (remote, clones) = two_behind();
    // y posts first, and stays there alive, vouching for its post.
    let mut y = clones[2]
        .command(&["-v", "open", "agents/bob.md", "--session", "sess-y"])
        .env("BSI_FAULT_POINT", "after-post:wait")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bsi");
    until_posted(remote.path(), 1);
    // x posts after it and lets y's writer, which came first, carry both
    // out for a while; its own lease is short, and renewed as it waits.
    let x = clones[1].bsi_env(
        &["-v", "open", "agents/alice.md", "--session", "sess-x"],
        &[("BSI_POST_LEASE_MS", "400")],
    );
    x.ok().stdout_has("Claim opened — agents/alice.md");
    x.stderr_has("came first").stderr_has("renewed the lease");
    assert_eq!(remote_rows(remote.path(), "sess-x"), 1);
    let _ = std::process::Command::new("kill")
        .args(["-INT", &y.id().to_string()])
        .status();
    let start = Instant::now();
    while y.try_wait().expect("wait").is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = y.kill();
            panic!("an interrupted writer never ended");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Whatever y's post became (carried out by x, or withdrawn), nothing is
    // left posted undecided.
    assert_eq!(undecided(remote.path()), 0);
}

/// The journal shows every write of a shared commit as a row of its own:
/// eight writers that waited for the lock, and a ninth opening five files,
/// are nine rows, each with its agent, its session and every scope, and
/// the commit that carried it; through a pipe and in JSON nothing is cut,
/// and a screen 60 columns wide wraps the rows instead of cutting them.
#[test]
fn the_journal_has_one_row_per_write_of_a_shared_commit() {
    let (b, remote) = machine();
    let five: Vec<String> = (1..=5)
        .map(|i| format!("projets/five/the-file-number-{i}.md"))
        .collect();
    let eight: Vec<String> = (0..8)
        .map(|i| format!("agents/team/member-with-a-long-name-{i}.md"))
        .collect();
    for f in five.iter().chain(&eight) {
        b.write(f, "# Notes\n");
    }
    b.git(&["add", "-A"]);
    b.git(&["commit", "-qm", "files"]);
    let lock = hold_lock(&meeting(remote.path()));
    let mut children = Vec::new();
    let mut asks: Vec<(String, String, Vec<String>)> = eight
        .iter()
        .enumerate()
        .map(|(i, f)| {
            (
                format!("sess-writer-{i}"),
                format!("agent-{i}"),
                vec![f.clone()],
            )
        })
        .collect();
    asks.push(("sess-five".into(), "agent-five".into(), five.clone()));
    for (i, (session, agent, scopes)) in asks.iter().enumerate() {
        let mut args = vec!["open"];
        args.extend(scopes.iter().map(String::as_str));
        args.extend(["--session", session, "--agent", agent]);
        let child = b
            .command(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run bsi");
        children.push(child);
        until_waiting(&meeting(remote.path()), i + 1);
    }
    drop(lock);
    for c in children {
        finish(c).ok();
    }
    // Fewer commits than writes: writes shared a commit.
    let commits = git_in(remote.path(), &["log", "--format=%H", "brain-index"])
        .lines()
        .count();

    let json = b.bsi(&["log", "--json"]).json();
    let rows = json.as_array().expect("an array");
    let opens: Vec<&serde_json::Value> = rows.iter().filter(|r| r["action"] == "open").collect();
    assert_eq!(opens.len(), asks.len(), "{json:#}");
    assert!(
        rows.len() > commits,
        "{} rows, {commits} commits",
        rows.len()
    );
    for (session, agent, scopes) in &asks {
        let row = opens
            .iter()
            .find(|r| r["sessions"][0] == session.as_str())
            .unwrap_or_else(|| panic!("no row for {session}: {json:#}"));
        assert_eq!(row["agent"], agent.as_str(), "{row}");
        assert_eq!(row["scopes"], serde_json::json!(scopes), "{row}");
        assert_eq!(row["what"], scopes.join(", "), "{row}");
        assert_eq!(row["commit"].as_str().map(str::len), Some(40), "{row}");
    }

    // Through a pipe: a line each, every scope whole, nothing cut.
    let piped = b.bsi(&["log"]);
    let text = &piped.ok().stdout;
    assert!(!text.contains('…'), "{text}");
    for (session, agent, scopes) in &asks {
        let line = text
            .lines()
            .find(|l| l.contains(session.as_str()))
            .unwrap_or_else(|| panic!("no line for {session}:\n{text}"));
        assert!(line.contains(agent.as_str()), "{line}");
        assert!(line.ends_with(&scopes.join(", ")), "{line}");
    }
    // With -v, each row names its commit and its own trailers.
    let verbose = b.bsi(&["log", "-v"]);
    for (session, _, scopes) in &asks {
        let block = verbose
            .stdout
            .split("\n2")
            .find(|r| r.contains(&format!("BSI-Session: {session}\n")))
            .unwrap_or_else(|| panic!("no row for {session}:\n{}", verbose.stdout));
        assert!(block.contains("    commit "), "{block}");
        for s in scopes {
            assert!(block.contains(&format!("BSI-Scope: {s}\n")), "{block}");
        }
    }

    // 60 columns: every line fits, nothing is cut, every scope is there
    // once the wrapped lines are joined.
    let narrow = b.bsi_env(&["log"], &[("COLUMNS", "60")]);
    let text = &narrow.ok().stdout;
    assert!(!text.contains('…'), "{text}");
    for l in text.lines() {
        assert!(l.chars().count() <= 60, "wider than 60: {l:?}\n{text}");
    }
    // The SCOPES column, its lines joined (a scope breaks after `/`, `-`).
    let at = text
        .lines()
        .next()
        .and_then(|h| h.find("SCOPES"))
        .unwrap_or_else(|| panic!("{text}"));
    let joined: String = text
        .lines()
        .skip(1)
        .map(|l| l.get(at..).unwrap_or("").replace(' ', ""))
        .collect();
    for (_, _, scopes) in &asks {
        for s in scopes {
            assert!(joined.contains(s.as_str()), "{s} missing:\n{text}");
        }
    }
}
