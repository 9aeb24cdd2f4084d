//! A remote that is a repository on this machine's disk: bsi reads it in
//! process instead of starting `git fetch`, and leaves the clone as a fetch
//! would (every object there, the remote-tracking reference at the
//! remote's tip); what git must fetch itself, git fetches.

use crate::remote::Net;

/// What `bsi -v sync` said it read the remote with.
const ON_DISK: &str = "in its repository on this disk";

/// `git fsck` of a clone finds every object whole and reachable.
fn whole(b: &crate::common::Brain) {
    let out = std::process::Command::new("git")
        .current_dir(b.dir.path())
        .args(["fsck", "--no-dangling", "--no-progress"])
        .output()
        .expect("git fsck");
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "git fsck: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_remote_on_this_disk_is_read_in_process_under_every_name_git_gives_it() {
    let n = Net::new();
    let bare = n.bare.path().to_path_buf();
    let before = n.b.user_state();
    let urls = [
        bare.display().to_string(),
        format!("file://{}", bare.display()),
        // Relative to the work tree, as git reads it there.
        pathdiff(&bare, n.b.dir.path()),
    ];
    for (i, url) in urls.iter().enumerate() {
        n.b.git(&["remote", "set-url", "origin", url]);
        let session = format!("sess-disk-{i}");
        n.a.bsi(&["open", &format!("notes-{i}.md"), "--session", &session])
            .ok();
        let run = n.b.bsi(&["-v", "sync"]);
        run.ok().stderr_has(ON_DISK);
        assert_eq!(
            n.b.git(&["rev-parse", "refs/remotes/origin/brain-index"]),
            n.git(&["rev-parse", "brain-index"]),
            "{url}: the remote-tracking reference is the remote's tip"
        );
        n.b.bsi(&["status"]).ok().stdout_has(&session);
        whole(&n.b);
    }
    assert_eq!(n.b.user_state(), before);
}

#[test]
fn a_clone_that_checks_what_it_fetches_is_fetched_by_git() {
    let n = Net::new();
    n.b.git(&["config", "fetch.fsckObjects", "true"]);
    n.a.bsi(&["open", "notes.md", "--session", "sess-checked"])
        .ok();
    let run = n.b.bsi(&["-v", "sync"]);
    run.ok();
    assert!(!run.stderr.contains(ON_DISK), "{}", run.stderr);
    n.b.bsi(&["status"]).ok().stdout_has("sess-checked");
    whole(&n.b);
}

/// `to` relative to `from`, both absolute.
fn pathdiff(to: &std::path::Path, from: &std::path::Path) -> String {
    let to: Vec<_> = to.components().collect();
    let from: Vec<_> = from.components().collect();
    let common = to.iter().zip(&from).take_while(|(a, b)| a == b).count();
    let mut out = std::path::PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to[common..] {
        out.push(c);
    }
    out.display().to_string()
}

/// Runs `cmd` to its end, killed after `limit` if it has not ended by then
/// (the test's safety, not a timing): its output, and whether it ended by
/// itself.
#[cfg(unix)]
fn within(
    mut cmd: std::process::Command,
    limit: std::time::Duration,
) -> (crate::common::Run, bool) {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    // A group of its own: what it started (a hook, the bsi it runs) is
    // killed with it, and holds no pipe open after.
    let mut child = cmd
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let until = std::time::Instant::now() + limit;
    let mut ended = true;
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > until {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            ended = false;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    (crate::common::Run::from_output(out), ended)
}

#[cfg(unix)]
#[test]
fn a_link_planted_where_the_clones_meet_is_never_written_through() {
    let n = Net::new();
    let meeting = n.bare.path().join("bsi/writes/brain-index");
    std::fs::create_dir_all(meeting.join("requests")).expect("meeting");
    // Another user's file, and a link to it planted as the meeting's lock.
    let outside = crate::common::scratch("bsi-planted");
    let target = outside.path().join("precious.txt");
    std::fs::write(&target, "someone's work\n").expect("target");
    std::os::unix::fs::symlink(&target, meeting.join("lock")).expect("plant");
    let run = n.a.bsi(&["open", "notes.md", "--session", "sess-planted"]);
    run.ok();
    assert_eq!(
        std::fs::read_to_string(&target).expect("target"),
        "someone's work\n",
        "the link's target is untouched"
    );
    assert!(
        std::fs::symlink_metadata(meeting.join("lock"))
            .expect("the link")
            .file_type()
            .is_symlink(),
        "the planted link is left as it is"
    );
    // The write is done without the meeting, and said so.
    run.stderr_has("does not meet the other clones");
    assert_eq!(n.active_with("sess-planted").len(), 1);
    // `bsi doctor` says why the meeting is not used.
    n.a.bsi(&["doctor"]).stdout_has("is a symbolic link");
}

#[cfg(unix)]
#[test]
fn a_remote_on_this_disk_whose_branch_never_answers_is_given_up_in_time() {
    let n = Net::new();
    n.a.bsi(&["hook", "install"]).ok();
    n.a.bsi(&["open", "notes.md", "--session", "sess-fifo"])
        .ok();
    // The remote's registry reference becomes a FIFO nobody writes: a read
    // of it blocks forever, as one on a mount that went away.
    let reference = n.bare.path().join("refs/heads/brain-index");
    let _ = std::fs::remove_file(&reference);
    let made = std::process::Command::new("mkfifo")
        .arg(&reference)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let limit = std::time::Duration::from_secs(90);
    let env = [
        ("BSI_CONNECTION_TIMEOUT", "2s"),
        ("BSI_PUBLISH_TIMEOUT", "10s"),
        ("BSI_SESSION", "sess-fifo"),
    ];
    n.a.write("notes.md", "# Notes\n\nchanged\n");
    n.a.git(&["add", "notes.md"]);
    let mut commit = std::process::Command::new("git");
    crate::common::clean_env(&mut commit, n.a.path());
    commit
        .current_dir(n.a.path())
        .args(["commit", "-q", "-m", "notes"])
        .envs(env);
    let (run, ended) = within(commit, limit);
    assert!(ended, "git commit hung: {}", run.stderr);
    // The hook judges against the claims as last fetched, and says so: the
    // session's own file, claimed, is committed.
    run.ok()
        .stderr_has("origin/brain-index could not be fetched now")
        .stderr_has("did not answer");
    let mut open = n.a.command(&["open", "agents/", "--session", "sess-other"]);
    open.envs(env);
    let (run, ended) = within(open, limit);
    assert!(ended, "bsi open hung: {}", run.stderr);
    run.code(7).stderr_has("could not be reached");
    let _ = std::fs::remove_file(&reference);
}

/// Makes a FIFO at `path`, owned by this user: a read or write of it
/// opened without care waits for a writer or reader that never comes.
#[cfg(unix)]
fn fifo(path: &std::path::Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo");
    assert!(made.success());
}

#[cfg(unix)]
#[test]
fn a_fifo_planted_where_the_clones_meet_never_holds_a_write() {
    let n = Net::new();
    let meeting = n.bare.path().join("bsi/writes/brain-index");
    std::fs::create_dir_all(meeting.join("requests")).expect("meeting");
    std::fs::create_dir_all(meeting.join("waiting")).expect("meeting");
    // The meeting's lock a FIFO of this user's: the owner check alone
    // would let it through.
    fifo(&meeting.join("lock"));
    let limit = std::time::Duration::from_secs(90);
    let env = [("BSI_CONNECTION_TIMEOUT", "2s")];
    let mut open =
        n.a.command(&["open", "notes.md", "--session", "sess-fifo-lock"]);
    open.envs(env);
    let (run, ended) = within(open, limit);
    assert!(ended, "bsi open hung: {}", run.stderr);
    run.ok().stderr_has("does not meet the other clones");
    assert_eq!(n.active_with("sess-fifo-lock").len(), 1);
    n.a.bsi(&["doctor"])
        .stdout_has("do not meet theirs")
        .stdout_has("is not a plain file");
    // A waiting mark a FIFO: written over (renamed), never opened.
    std::fs::remove_file(meeting.join("lock")).expect("rm");
    fifo(&meeting.join("waiting/sess-fifo-wait"));
    let mut open = n.b.command(&[
        "open",
        "notes.md",
        "--session",
        "sess-fifo-wait",
        "--wait",
        "1s",
    ]);
    open.envs(env);
    let (run, ended) = within(open, limit);
    assert!(ended, "bsi open --wait hung: {}", run.stderr);
    run.code(3);
    // The clones meet there again, and `bsi doctor` says so.
    n.a.bsi(&["doctor"]).stdout_has("meet theirs in");
}

#[cfg(unix)]
#[test]
fn a_meeting_place_that_stops_answering_is_left_for_the_clone_alone() {
    let n = Net::new();
    // The first look finds the place sound; then every read or write of
    // a file there waits (`meeting-io:wait`), as on a mount gone away.
    let mut open = n.a.command(&["open", "notes.md", "--session", "sess-hung"]);
    open.envs([
        ("BSI_CONNECTION_TIMEOUT", "2s"),
        ("BSI_FAULT_POINT", "meeting-io:wait"),
    ]);
    let (run, ended) = within(open, std::time::Duration::from_secs(45));
    assert!(ended, "bsi open hung: {}", run.stderr);
    run.stderr_has("does not meet the other clones")
        .stderr_has("did not answer");
    assert!(
        run.code == 0 || run.code == 7,
        "{}: {}",
        run.code,
        run.stderr
    );
}
