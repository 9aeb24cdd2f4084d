//! Several machines, one registry: a real bare repository as the remote and
//! clones of it as machines, with real `git` fetches and pushes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tempfile::TempDir;

use crate::common::{Brain, clean_env};

/// A remote and two machines.
struct Net {
    _origin: Brain,
    bare: TempDir,
    a: Brain,
    b: Brain,
}

impl Net {
    fn new() -> Net {
        let origin = Brain::new();
        let bare = origin.publish_to_bare();
        let a = Brain::clone_of(bare.path(), "alice");
        let b = Brain::clone_of(bare.path(), "bob");
        Net {
            _origin: origin,
            bare,
            a,
            b,
        }
    }

    /// git in the bare repository.
    fn git(&self, args: &[&str]) -> String {
        let mut cmd = Command::new("git");
        clean_env(&mut cmd, self.bare.path());
        let o = cmd
            .arg("--git-dir")
            .arg(self.bare.path())
            .args(args)
            .output()
            .expect("run git");
        assert!(
            o.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// The registry on the remote's main branch.
    fn registry(&self) -> String {
        self.git(&["show", "main:BRAIN-INDEX.md"])
    }

    /// Active rows of the remote registry naming `needle`.
    fn active_with(&self, needle: &str) -> Vec<String> {
        active_rows(&self.registry())
            .into_iter()
            .filter(|r| r.contains(needle))
            .collect()
    }

    /// Moves the remote away (unreachable) and back.
    fn away(&self) -> PathBuf {
        let to = self.bare.path().with_extension("away");
        std::fs::rename(self.bare.path(), &to).expect("move the remote away");
        to
    }

    fn back(&self, from: &Path) {
        std::fs::rename(from, self.bare.path()).expect("bring the remote back");
    }
}

fn active_rows(text: &str) -> Vec<String> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            inside = h.trim() == "Claims actifs";
            continue;
        }
        if inside && line.starts_with("| ") && !line.starts_with("| Session") {
            out.push(line.to_string());
        }
    }
    out
}

/// Starts bsi on two machines at once and waits for both.
fn both(
    a: &Brain,
    a_args: &[&str],
    b: &Brain,
    b_args: &[&str],
) -> (std::process::Output, std::process::Output) {
    let spawn = |m: &Brain, args: &[&str]| {
        let mut cmd = m.command(args);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd.spawn().expect("spawn bsi")
    };
    let (pa, pb) = (spawn(a, a_args), spawn(b, b_args));
    (
        pa.wait_with_output().expect("wait"),
        pb.wait_with_output().expect("wait"),
    )
}

#[test]
fn init_registers_the_merge_driver() {
    let b = Brain::new();
    let attrs = b.read(".git/info/attributes");
    assert!(attrs.contains("/BRAIN-INDEX.md merge=bsi"), "{attrs}");
    assert_eq!(
        b.git(&["config", "merge.bsi.driver"]).trim(),
        "bsi merge-driver %O %A %B"
    );
    assert_eq!(
        b.git(&["check-attr", "merge", "BRAIN-INDEX.md"]).trim(),
        "BRAIN-INDEX.md: merge: bsi"
    );
    assert_eq!(b.status(), "");
}

#[test]
fn the_same_scope_from_two_machines_at_once_has_one_winner() {
    let n = Net::new();
    for round in 0..20 {
        let scope = format!("race{round}/");
        let (sa, sb) = (format!("a-{round}"), format!("b-{round}"));
        let (oa, ob) = both(
            &n.a,
            &["open", &scope, "--session", &sa],
            &n.b,
            &["open", &scope, "--session", &sb],
        );
        let codes = (oa.status.code(), ob.status.code());
        let (winner, loser, lost) = match codes {
            (Some(0), Some(3)) => (&sa, &sb, &ob),
            (Some(3), Some(0)) => (&sb, &sa, &oa),
            _ => panic!(
                "round {round}: exit codes {codes:?}\n--- a\n{}\n--- b\n{}",
                String::from_utf8_lossy(&oa.stderr),
                String::from_utf8_lossy(&ob.stderr)
            ),
        };
        let stderr = String::from_utf8_lossy(&lost.stderr);
        assert!(stderr.contains(&format!("{winner} holds")), "{stderr}");
        let rows = n.active_with(&format!("| {scope} |"));
        assert_eq!(rows.len(), 1, "round {round}: {rows:?}");
        assert!(rows[0].starts_with(&format!("| {winner} |")), "{rows:?}");
        // The loser left no trace in its own registry.
        for m in [&n.a, &n.b] {
            assert!(!m.registry().contains(&format!("| {loser} |")));
            assert_eq!(m.status(), "");
        }
    }
    // Each machine's registry commit is a child of the remote tip: the log of
    // the remote is one straight line of registry-only commits.
    let log = n.git(&["log", "--format=%s", "--first-parent", "main"]);
    assert_eq!(
        log.lines().filter(|l| l.starts_with("bsi: open")).count(),
        20
    );
    assert_eq!(
        n.git(&["rev-list", "--merges", "--count", "main"]).trim(),
        "0"
    );
}

#[test]
fn disjoint_scopes_from_two_machines_at_once_both_land() {
    let n = Net::new();
    let (oa, ob) = both(
        &n.a,
        &["open", "agents/alice.md", "--session", "sa"],
        &n.b,
        &["open", "agents/bob.md", "--session", "sb"],
    );
    assert_eq!(
        oa.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&oa.stderr)
    );
    assert_eq!(
        ob.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ob.stderr)
    );
    assert_eq!(n.active_with("| sa |").len(), 1);
    assert_eq!(n.active_with("| sb |").len(), 1);
    // Two registry-only commits on the remote.
    let files = n.git(&["log", "-2", "--name-only", "--format=", "main"]);
    assert_eq!(
        files.lines().filter(|l| !l.is_empty()).collect::<Vec<_>>(),
        vec!["BRAIN-INDEX.md", "BRAIN-INDEX.md"]
    );
}

#[test]
fn a_machine_with_unpushed_commits_publishes_only_the_claim() {
    let n = Net::new();
    n.a.write("agents/alice.md", "# Alice\n\nlocal work\n");
    n.a.git(&["commit", "-q", "-am", "local work"]);
    let mine = n.a.git(&["rev-parse", "HEAD"]).trim().to_string();
    let tip_before = n.git(&["rev-parse", "main"]).trim().to_string();

    n.a.bsi(&["open", "projets/", "--session", "sa"])
        .ok()
        .stdout_has("Claim opened — projets/");

    // The claim is on the remote, in a registry-only child of the old tip.
    assert_eq!(n.active_with("| sa | projets/ |").len(), 1);
    assert_eq!(n.git(&["rev-parse", "main~1"]).trim(), tip_before);
    assert_eq!(
        n.git(&["show", "--name-only", "--format=", "main"]).trim(),
        "BRAIN-INDEX.md"
    );
    // The user's commit is unchanged, still local, and never reached the remote.
    assert_eq!(n.a.git(&["rev-parse", "HEAD~1"]).trim(), mine);
    let ahead = n.a.git(&["rev-list", "origin/main..HEAD"]);
    assert!(ahead.lines().any(|l| l == mine), "{ahead}");
    let mut cmd = Command::new("git");
    clean_env(&mut cmd, n.bare.path());
    let st = cmd
        .arg("--git-dir")
        .arg(n.bare.path())
        .args(["cat-file", "-e", &mine])
        .output()
        .expect("git");
    assert!(!st.status.success(), "the user's commit reached the remote");
    // The local branch holds the same registry, the work tree is clean, and
    // the next pull merges without a conflict.
    assert_eq!(n.a.last_files(), vec!["BRAIN-INDEX.md"]);
    assert_eq!(n.a.registry(), n.registry());
    assert_eq!(n.a.status(), "");
    n.a.git(&["pull", "-q", "--no-rebase", "--no-edit"]);
    assert_eq!(n.a.registry(), n.registry());
    assert_eq!(n.a.read("agents/alice.md"), "# Alice\n\nlocal work\n");
}

#[test]
fn the_machine_at_the_remote_tip_fast_forwards() {
    let n = Net::new();
    n.a.bsi(&["open", "agents/", "--session", "sa"]).ok();
    assert_eq!(
        n.a.git(&["rev-parse", "HEAD"]).trim(),
        n.git(&["rev-parse", "main"]).trim()
    );
    assert_eq!(n.a.last_subject(), "bsi: open sa agents/");
    assert_eq!(n.a.status(), "");
    // The other machine sees it after a sync, and is refused.
    n.b.bsi(&["open", "agents/bob.md", "--session", "sb"])
        .code(3)
        .stderr_has("sa holds");
    assert!(!n.b.registry().contains("| sb |"));
}

#[test]
fn an_unreachable_remote_records_locally_then_sync_publishes() {
    let n = Net::new();
    let away = n.away();
    let r = n.a.bsi(&["open", "agents/alice.md", "--session", "sa"]);
    r.code(7)
        .stdout_has("Claim opened — agents/alice.md")
        .stderr_has("NOT PUBLISHED");
    assert_eq!(n.a.active().len(), 1);
    assert_eq!(n.a.last_subject(), "bsi: open sa agents/alice.md");
    assert_eq!(n.a.status(), "");
    n.a.bsi(&["status"])
        .ok()
        .stdout_has("NOT PUBLISHED: 1 change(s)")
        .stdout_has("bsi: open sa agents/alice.md");
    n.a.bsi(&["sync"])
        .code(7)
        .stderr_has("could not be reached");
    n.back(&away);
    assert!(n.active_with("| sa |").is_empty());

    n.a.bsi(&["sync"])
        .ok()
        .stdout_has("1 pending change(s) published");
    assert_eq!(n.active_with("| sa | agents/alice.md |").len(), 1);
    let st = n.a.bsi(&["status"]);
    st.ok().stdout_has("Remote origin/main — last sync 0m ago");
    assert!(!st.stdout.contains("NOT PUBLISHED"), "{}", st.stdout);
    let j = n.a.bsi(&["status", "--json"]).json();
    assert_eq!(j["sync"]["unpublished"].as_array().map(Vec::len), Some(0));
    assert_eq!(j["sync"]["minutes_since_sync"], 0);
}

#[test]
fn a_collision_found_at_sync_is_reported_and_nothing_is_dropped() {
    let n = Net::new();
    let away = n.away();
    n.a.bsi(&["open", "agents/alice.md", "--session", "sa"])
        .code(7);
    n.back(&away);
    n.b.bsi(&["open", "agents/", "--session", "sb"]).ok();

    let r = n.a.bsi(&["sync"]);
    r.code(3)
        .stdout_has("COLLISION: sa agents/alice.md overlaps sb agents/")
        .stdout_has("Both claims are kept");
    assert_eq!(n.active_with("| sa |").len(), 1);
    assert_eq!(n.active_with("| sb |").len(), 1);
    assert_eq!(n.a.registry(), n.registry());
    assert_eq!(n.a.status(), "");
    // The other machine sees the collision after its own sync.
    n.b.bsi(&["sync"]).code(3);
    n.b.bsi(&["status"])
        .ok()
        .stdout_has("COLLISION: sb agents/ overlaps sa agents/alice.md");
    n.b.bsi(&["watchdog"]).ok().stdout_has("COLLISION");
}

#[test]
fn a_diverged_clone_pulls_the_registry_through_the_merge_driver() {
    let n = Net::new();
    // Machine A records a claim while the remote is away, and has work of its own.
    let away = n.away();
    n.a.bsi(&["open", "agents/alice.md", "--session", "sa"])
        .code(7);
    n.back(&away);
    n.a.write("README.md", "# Brain\n\nA's work\n");
    n.a.git(&["commit", "-q", "-am", "A's work"]);
    // Machine B publishes a claim of its own.
    n.b.bsi(&["open", "projets/", "--session", "sb"]).ok();

    // Both appended a row at the same place: a line merge would conflict.
    let pull = n.a.git_run(&["pull", "--no-rebase", "--no-edit"]);
    assert_eq!(pull.code, 0, "{}\n{}", pull.stdout, pull.stderr);
    let rows = n.a.active();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(
        rows.iter()
            .any(|r| r.starts_with("| sa | agents/alice.md |"))
    );
    assert!(rows.iter().any(|r| r.starts_with("| sb | projets/ |")));
    assert_eq!(n.a.status(), "");
    assert!(!n.a.registry().contains("<<<<<<<"));
    // The pending claim still reaches the remote.
    n.a.bsi(&["sync"]).ok();
    assert_eq!(n.active_with("| sa |").len(), 1);
    assert_eq!(n.active_with("| sb |").len(), 1);
}

#[test]
fn a_close_on_one_machine_is_seen_on_the_other_after_sync() {
    let n = Net::new();
    n.a.bsi(&["open", "agents/", "--session", "sa", "--agent", "alice"])
        .ok();
    n.b.bsi(&["sync"]).ok();
    n.b.bsi(&["status"])
        .ok()
        .stdout_has("sa")
        .stdout_has("1 active, 0 stale");

    n.a.bsi(&["close", "sa", "--agent", "alice"]).ok();
    assert!(n.active_with("| sa |").is_empty());
    // B has not synced: it still reads its own copy.
    n.b.bsi(&["status"]).ok().stdout_has("1 active, 0 stale");
    n.b.bsi(&["sync"])
        .ok()
        .stdout_has("Synced with origin/main — 0 active, 0 stale");
    n.b.bsi(&["status"])
        .ok()
        .stdout_has("No claims: the whole brain is free.");
    assert_eq!(n.b.history().len(), 1);
    assert_eq!(n.b.status(), "");
}

#[test]
fn a_remote_named_in_bsi_toml_is_published_to() {
    let n = Net::new();
    n.a.git(&["branch", "--unset-upstream"]);
    // No upstream and nothing named: local only, the remote does not see it.
    n.a.bsi(&["open", "agents/", "--session", "sa"]).ok();
    assert!(n.active_with("| sa |").is_empty());
    n.a.bsi(&["close", "sa"]).ok();
    // The brain's shared setting names the remote.
    n.a.write(".bsi.toml", "remote = \"origin\"\n");
    n.a.bsi(&["open", "projets/", "--session", "sp"]).ok();
    assert_eq!(n.active_with("| sp |").len(), 1);
    // A name that is not a remote is a usage error, and nothing is written.
    n.a.write(".bsi.toml", "remote = \"nowhere\"\n");
    let before = n.a.registry();
    n.a.bsi(&["open", "README.md", "--session", "sr"])
        .code(2)
        .stderr_has("no git remote named `nowhere`");
    assert_eq!(n.a.registry(), before);
}

#[cfg(unix)]
#[test]
fn a_publish_killed_at_any_moment_loses_nothing_and_invents_nothing() {
    let n = Net::new();
    let kills = if std::env::var_os("BSI_LONG").is_some() {
        60
    } else {
        12
    };
    let mut seed: u64 = 7;
    let mut landed = 0;
    for i in 0..kills {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let pause = (seed >> 33) % 120_000;
        let session = format!("k{i}");
        let scope = format!("zone{i}/");
        // bsi and the git it runs die together, as on a crash or a Ctrl-C
        // of the whole process group.
        let mut cmd = n.a.command(&["open", &scope, "--session", &session]);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(std::time::Duration::from_micros(pause));
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .stderr(Stdio::null())
            .status();
        let _ = child.wait();
        // The next command on that machine settles whatever was half done.
        let s = n.a.bsi(&["sync"]);
        assert!(
            s.code == 0,
            "kill {i}: sync exited {}: {}",
            s.code,
            s.stderr
        );
        let row = format!("| {session} | {scope} |");
        let remote = n.registry().contains(&row);
        let local = n.a.registry().contains(&row);
        assert_eq!(
            remote,
            local,
            "kill {i}: the machine and the remote disagree\nsync: {}{}\nlocal log: {}\nremote log: {}",
            s.stdout,
            s.stderr,
            n.a.git(&["log", "--oneline", "-5"]),
            n.git(&["log", "--oneline", "-5", "main"])
        );
        assert_eq!(n.a.status(), "", "kill {i}: work tree not clean");
        assert_eq!(
            n.a.registry(),
            n.a.git(&["show", "HEAD:BRAIN-INDEX.md"]),
            "kill {i}"
        );
        landed += usize::from(remote);
        // The remote's history stays a line of registry commits.
        assert_eq!(
            n.git(&["rev-list", "--merges", "--count", "main"]).trim(),
            "0"
        );
    }
    eprintln!("publish kills: {kills}, claims that reached the remote: {landed}");
    // The other machine sees exactly what the remote holds.
    n.b.bsi(&["sync"]).ok();
    assert_eq!(n.b.registry(), n.registry());
    n.git(&["fsck", "--no-progress"]);
}
