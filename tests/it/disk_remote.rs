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
