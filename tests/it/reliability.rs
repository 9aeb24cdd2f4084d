//! Attacks on the promise that the registry stays true: many writers at
//! once, processes killed in the middle of a write, git in awkward states,
//! hostile input, and claims that belong to someone else.
//!
//! `BSI_LONG=1 cargo test --test it reliability -- --nocapture` runs the long
//! modes: more processes and operations, and more than 200 kills.

use std::collections::HashSet;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bsi_core::scope::{Scope, Sections, overlaps};

use crate::common::{Brain, long};

/// A tiny deterministic generator, so a failing run can be replayed.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The plan file's heading tree, for checking section overlaps independently.
struct PlanTree;
impl Sections for PlanTree {
    fn contains(&self, file: &str, outer: &str, inner: &str) -> bool {
        file == "projets/plan.md"
            && matches!(
                (outer, inner),
                ("plan", "goals" | "q1" | "q2" | "risks") | ("goals", "q1" | "q2")
            )
    }
}

const UNIVERSE: &[&str] = &[
    "global",
    "area1/",
    "area2/notes.md",
    "area3/",
    "agents/",
    "agents/alice.md",
    "agents/bob.md",
    "projets/",
    "projets/plan.md",
    "projets/plan.md#Goals",
    "projets/plan.md#Q1",
    "projets/plan.md#Q2",
    "projets/plan.md#Risks",
    "README.md",
];

/// Checks the registry's invariants; returns the parsed status.
fn check_invariants(b: &Brain, settled: bool) -> serde_json::Value {
    let st = b.bsi(&["status", "--json"]);
    st.ok();
    let j = st.json();
    let claims: Vec<(String, Scope)> = ["active", "stale"]
        .iter()
        .flat_map(|k| j[*k].as_array().cloned().unwrap_or_default())
        .map(|c| {
            (
                c["session"].as_str().expect("session").to_string(),
                Scope::parse_stored(c["scope"].as_str().expect("scope")).expect("scope parses"),
            )
        })
        .collect();
    for (i, (s1, a)) in claims.iter().enumerate() {
        for (s2, c) in &claims[i + 1..] {
            assert!(
                s1 == s2 || !overlaps(a, c, &PlanTree),
                "two overlapping claims are held: {s1} {a} and {s2} {c}\n{}",
                b.registry()
            );
        }
    }
    if settled {
        let st = b.status();
        assert!(
            !st.contains("BRAIN-INDEX.md"),
            "registry left uncommitted: {st}"
        );
    }
    j
}

#[derive(Debug, Clone)]
struct Done {
    args: Vec<String>,
    code: i32,
    commit: Option<String>,
}

#[test]
fn load_many_writers_lose_nothing() {
    let (procs, ops) = if long() { (12, 80) } else { (8, 14) };
    let b = Arc::new(Brain::new());
    let start_commits = b.commits();
    let log: Arc<Mutex<Vec<Done>>> = Arc::default();
    let running = Arc::new(std::sync::atomic::AtomicUsize::new(procs));
    // An observer checks the invariants while the writers run.
    let observer = {
        let b = Arc::clone(&b);
        let running = Arc::clone(&running);
        std::thread::spawn(move || {
            let mut checks = 0;
            while running.load(std::sync::atomic::Ordering::SeqCst) > 0 {
                check_invariants(&b, false);
                checks += 1;
            }
            checks
        })
    };
    let threads: Vec<_> = (0..procs)
        .map(|p| {
            let b = Arc::clone(&b);
            let log = Arc::clone(&log);
            let running = Arc::clone(&running);
            std::thread::spawn(move || {
                let mut rng = Lcg(0x5eed + p as u64);
                let mut held: Vec<String> = Vec::new();
                for k in 0..ops {
                    let fresh = format!("p{p}-s{k}");
                    let session = if held.is_empty() || rng.below(3) == 0 {
                        fresh
                    } else {
                        held[rng.below(held.len())].clone()
                    };
                    // The clock moves forward, with some jitter between writers.
                    let minutes = k * 20 + rng.below(30);
                    let now = format!(
                        "2026-03-{:02}T{:02}:{:02}:00Z",
                        14 + (9 * 60 + minutes) / (24 * 60),
                        ((9 * 60 + minutes) / 60) % 24,
                        minutes % 60
                    );
                    let args: Vec<String> = match rng.below(40) {
                        0 => vec!["open".into(), "global".into(), "--session".into(), session],
                        1..=18 => vec![
                            "open".into(),
                            UNIVERSE[1 + rng.below(UNIVERSE.len() - 1)].into(),
                            "--session".into(),
                            session,
                            "--ttl".into(),
                            format!("{}m", 30 + rng.below(90)),
                        ],
                        19..=26 => vec!["close".into(), session],
                        27..=30 => vec!["renew".into(), session, "--ttl".into(), "1h".into()],
                        31..=35 => vec!["watchdog".into()],
                        _ => {
                            // A person releases a stale claim they can see.
                            let st = b
                                .bsi_env(&["status", "--json"], &[("BSI_NOW", &now)])
                                .json();
                            let stale = st["stale"].as_array().cloned().unwrap_or_default();
                            let target = if stale.is_empty() {
                                format!("p{}-s{}", rng.below(procs), rng.below(3))
                            } else {
                                stale[rng.below(stale.len())]["session"]
                                    .as_str()
                                    .unwrap_or("none")
                                    .to_string()
                            };
                            vec!["release".into(), target, "--confirm".into()]
                        }
                    };
                    let mut full = args.clone();
                    full.push("--json".into());
                    let refs: Vec<&str> = full.iter().map(String::as_str).collect();
                    let r = b.bsi_env(&refs, &[("BSI_NOW", &now)]);
                    let allowed: &[i32] = match args[0].as_str() {
                        "open" => &[0, 3],
                        "watchdog" => &[0, 4],
                        _ => &[0, 1],
                    };
                    assert!(
                        allowed.contains(&r.code),
                        "{args:?} exited {}: {}",
                        r.code,
                        r.stderr
                    );
                    let commit = serde_json::from_str::<serde_json::Value>(&r.stdout)
                        .ok()
                        .and_then(|j| j["commit"].as_str().map(String::from));
                    if r.code == 0 && args[0] == "open" && !held.contains(&args[3]) {
                        held.push(args[3].clone());
                    }
                    if r.code == 0 && args[0] == "close" {
                        held.retain(|h| h != &args[1]);
                    }
                    log.lock().expect("log").push(Done {
                        args,
                        code: r.code,
                        commit,
                    });
                }
                running.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            })
        })
        .collect();
    for t in threads {
        t.join().expect("worker");
    }
    let log = log.lock().expect("log").clone();
    check_invariants(&b, true);
    // Every reported commit exists and changed only the registry; writes
    // published by one push share one, which names each of them.
    let commits: Vec<&String> = log.iter().filter_map(|d| d.commit.as_ref()).collect();
    let unique: HashSet<&String> = commits.iter().copied().collect();
    assert_eq!(
        b.commits(),
        start_commits + unique.len(),
        "commits of the registry vs the commits commands reported"
    );
    for d in &log {
        if let Some(c) = &d.commit {
            let files = b.git(&["show", "--name-only", "--format=", c]);
            assert_eq!(files.trim(), "BRAIN-INDEX.md", "{d:?}");
            let msg = b.git(&["log", "-1", "--format=%B", c]);
            assert!(
                msg.contains(&format!("BSI-Action: {}", d.args[0]))
                    || (d.args[0] == "release" && msg.contains("BSI-Action: release")),
                "{d:?}: {msg}"
            );
            if let Some(session) = d.args.get(if d.args[0] == "open" { 3 } else { 1 })
                && d.args[0] != "watchdog"
                && d.args[0] != "release"
            {
                assert!(
                    msg.contains(&format!("BSI-Session: {session}\n")),
                    "{d:?}: {msg}"
                );
            }
            if d.args[0] == "open" {
                let reg = b.git(&["show", &format!("{c}:BRAIN-INDEX.md")]);
                let row = format!("| {} | {} |", d.args[3], d.args[1]);
                assert!(reg.contains(&row), "{row} missing from its commit {c}");
            }
        } else if d.args[0] == "open" && d.code == 0 {
            // A successful open without a commit re-opened a held scope.
        } else if d.args[0] == "close" && d.code == 0 {
            // A close repeated: the session was closed (or released)
            // before, which is said; nothing to write.
        } else if d.args[0] == "renew" && d.code == 0 {
            // A successful renew without a commit found the time already
            // there: nothing to extend.
        } else {
            assert!(
                d.code != 0 || matches!(d.args[0].as_str(), "watchdog" | "open"),
                "{d:?}"
            );
        }
    }
    let checks = observer.join().expect("observer");
    let refused = log.iter().filter(|d| d.code == 3).count();
    let count = |verb: &str| {
        log.iter()
            .filter(|d| d.args[0] == verb && d.commit.is_some())
            .count()
    };
    eprintln!(
        "load: {procs} processes, {} operations, {} commits (open {}, close {}, renew {}, watchdog {}, release {}), {refused} refused, {checks} observer checks",
        log.len(),
        commits.len(),
        count("open"),
        count("close"),
        count("renew"),
        count("watchdog"),
        count("release")
    );
    assert!(
        count("open") > procs,
        "the load test barely opened anything"
    );
    b.git(&["fsck", "--no-progress", "--strict"]);
}

/// The fastest of five runs of `f`, in microseconds: where the kill
/// moments of [`KillMoments`] start from. Only a first guess, never
/// asserted: the span then follows what the kills find.
pub(crate) fn run_time_us(mut f: impl FnMut(usize)) -> u32 {
    let mut times: Vec<u32> = (0..5)
        .map(|i| {
            let t = std::time::Instant::now();
            f(i);
            u32::try_from(t.elapsed().as_micros()).unwrap_or(u32::MAX)
        })
        .collect();
    times.sort_unstable();
    times[0].max(1_000)
}

/// When a kill test kills the command it has just started: at a moment
/// drawn at random within a span that follows what the kills find, not a
/// measure of the machine's speed taken once. A kill that came after the
/// command had finished shortens the span by two fifths; one that
/// interrupted it lengthens it by a fifth. The span settles where about
/// one kill in four comes after the end and the others fall all over the
/// run (its start, its commit, its push), on a fast machine, a slow one,
/// or one whose load changes while the test runs.
pub(crate) struct KillMoments {
    rng: Lcg,
    span_us: f64,
}

impl KillMoments {
    /// Moments drawn from `seed`, in a span that starts at
    /// `first_span_us`.
    pub(crate) fn new(seed: u64, first_span_us: u32) -> KillMoments {
        KillMoments {
            rng: Lcg(seed),
            span_us: f64::from(first_span_us),
        }
    }

    fn next(&mut self) -> Duration {
        Duration::from_micros(self.rng.below(self.span_us as usize) as u64)
    }

    fn learn(&mut self, interrupted: bool) {
        let factor = if interrupted { 1.2 } else { 0.6 };
        self.span_us = (self.span_us * factor).max(200.0);
    }

    /// Runs `attempt(i, pause)` (start a command, kill it after `pause`,
    /// check what it left; `true` when the kill interrupted it) `kills`
    /// times, and more, up to four times as many, while fewer than a
    /// quarter of the kills interrupted the command: a kill test proves
    /// something only when its kills land while the command runs. Returns
    /// the number of kills and how many interrupted the command.
    pub(crate) fn kill(
        &mut self,
        kills: usize,
        mut attempt: impl FnMut(usize, Duration) -> bool,
    ) -> (usize, usize) {
        let (mut done, mut interrupted) = (0, 0);
        while done < kills || (interrupted * 4 < done && done < kills * 4) {
            let hit = attempt(done, self.next());
            self.learn(hit);
            done += 1;
            interrupted += usize::from(hit);
        }
        (done, interrupted)
    }
}

/// After a kill: the registry branch holds a registry every command reads,
/// the user's branch, index and files are as they were, and the next write
/// works and leaves nothing behind.
fn check_after_kill(b: &Brain, user: &(String, String, String), label: &str) {
    // Read-only commands read the branch, whatever the copy holds.
    b.bsi(&["status", "--json"]).ok();
    // The next write command repairs and proceeds.
    let before = b.commits();
    // A short lock wait: a lock the kill left held would fail the command.
    let r = b.bsi_env(
        &[
            "open",
            "README.md",
            "--session",
            &format!("after-{before}"),
            "--json",
        ],
        &[("BSI_LOCK_WAIT_MS", "5000")],
    );
    assert!(
        r.code == 0 || r.code == 3,
        "{label}: next command failed: {}",
        r.stderr
    );
    if r.code == 0 {
        assert_eq!(b.commits(), before + 1, "{label}: one commit per change");
        assert_eq!(b.registry_copy(), b.registry(), "{label}: the copy lags");
    }
    assert_eq!(
        &b.user_state(),
        user,
        "{label}: the user's branch, index or files changed"
    );
    let leftovers: Vec<_> = std::fs::read_dir(b.path())
        .expect("read dir")
        .filter_map(std::result::Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("bsi-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{label}: {leftovers:?}");
    // The writer's record lives in the lock file, empty between writes.
    assert_eq!(
        std::fs::read_to_string(b.path().join(".git/bsi/lock")).expect("lock file"),
        "",
        "{label}: record left behind"
    );
    b.git(&["fsck", "--no-progress"]);
}

#[test]
fn killed_at_every_write_point_the_next_command_repairs() {
    // Every point a local write passes (the push points need a remote: see
    // `remote::a_publish_killed_at_every_write_point_loses_nothing`).
    let points = ["after-lock", "after-record", "after-commit", "after-branch"];
    for p in points {
        assert!(bsi_core::api::store::FAULT_POINTS.contains(&p), "{p}");
    }
    let rounds = if long() { 10 } else { 2 };
    let b = Brain::new();
    let user = b.user_state();
    let mut kills = 0;
    for round in 0..rounds {
        for p in points {
            let before_reg = b.registry();
            let session = format!("k{round}-{p}");
            let scope = format!("area{round}-{p}/");
            let r = b.bsi_env(
                &["open", &scope, "--session", &session],
                &[("BSI_FAULT_POINT", p)],
            );
            assert_ne!(r.code, 0, "{p}: the fault point was not reached");
            kills += 1;
            // Right after the kill: the branch holds the old state, or the new one.
            let reg = b.registry();
            let landed = reg.contains(&format!("| {session} | {scope} |"));
            assert!(
                reg == before_reg || landed,
                "{p}: registry is neither old nor new"
            );
            // Only a kill after the branch moved keeps the change.
            assert_eq!(landed, p == "after-branch", "{p}");
            check_after_kill(&b, &user, p);
        }
    }
    eprintln!("kills at named points: {kills}");
}

#[test]
fn sigkill_at_random_moments_never_corrupts() {
    let kills = if long() { 200 } else { 24 };
    let b = Brain::new();
    let first_span = run_time_us(|i| {
        b.bsi(&["open", &format!("warm{i}/"), "--session", &format!("w{i}")])
            .ok();
    });
    let user = b.user_state();
    let mut landed = 0;
    let (kills, interrupted) = KillMoments::new(42, first_span).kill(kills, |i, pause| {
        let before = b.registry();
        let session = format!("r{i}");
        let scope = format!("zone{i}/");
        let mut child = b
            .command(&["open", &scope, "--session", &session])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(pause);
        let _ = child.kill();
        let status = child.wait().expect("wait");
        let file = b.registry();
        let row = format!("| {session} | {scope} |");
        assert!(
            file == before || file.contains(&row),
            "kill {i}: torn registry"
        );
        check_after_kill(&b, &user, &format!("kill {i}"));
        if status.success() || b.registry().contains(&row) {
            landed += 1;
        }
        // Whatever survived is committed with its own commit.
        if b.registry().contains(&row) {
            let log = b.git(&["log", "--format=%s", "brain-index"]);
            assert!(
                log.contains(&format!("bsi: open {session} {scope}")),
                "kill {i}"
            );
        }
        // Killed by the signal, not finished before it came.
        !status.success()
    });
    eprintln!(
        "random kills: {kills}, of them mid-run: {interrupted}, writes that survived: {landed}"
    );
    // A test of kills that all came after the end proves nothing.
    assert!(
        interrupted * 4 >= kills,
        "only {interrupted} of {kills} kills landed while bsi ran"
    );
}

#[test]
fn a_held_index_lock_does_not_matter_bsi_never_touches_the_index() {
    let b = Brain::new();
    b.write("staged.md", "x\n");
    b.git(&["add", "staged.md"]);
    std::fs::write(b.path().join(".git/index.lock"), "").expect("lock");
    let index = std::fs::read(b.path().join(".git/index")).expect("index");
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    assert_eq!(b.active().len(), 1);
    assert_eq!(
        std::fs::read(b.path().join(".git/index")).expect("index"),
        index
    );
    // Somebody else's lock is theirs: it stays.
    assert!(b.path().join(".git/index.lock").exists());
    std::fs::remove_file(b.path().join(".git/index.lock")).expect("unlock");
    assert!(b.status().contains("A  staged.md"));
}

#[test]
fn a_detached_head_gets_the_commit_and_branches_stay() {
    let b = Brain::new();
    let main = b.git(&["rev-parse", "main"]);
    b.git(&["checkout", "-q", "--detach"]);
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    assert_eq!(b.git(&["rev-parse", "main"]), main);
    assert_eq!(b.last_subject(), "bsi: open s1 agents/");
    assert_eq!(b.status(), "");
}

#[test]
fn claims_work_during_a_merge_or_a_rebase_and_leave_them_as_they_are() {
    let b = Brain::new();
    b.git(&["checkout", "-q", "-b", "other"]);
    b.write("README.md", "# Brain\nother\n");
    b.git(&["commit", "-qam", "other"]);
    b.git(&["checkout", "-q", "main"]);
    b.write("README.md", "# Brain\nmain\n");
    b.git(&["commit", "-qam", "main"]);
    assert_ne!(b.git_run(&["merge", "other"]).code, 0);
    let user = b.user_state();
    let index = std::fs::read(b.path().join(".git/index")).expect("index");
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    assert_eq!(b.active().len(), 1);
    assert_eq!(b.user_state(), user);
    assert_eq!(
        std::fs::read(b.path().join(".git/index")).expect("index"),
        index
    );
    assert!(
        b.path().join(".git/MERGE_HEAD").exists(),
        "the merge goes on"
    );
    b.git(&["merge", "--abort"]);
    b.git(&["checkout", "-q", "other"]);
    assert_ne!(b.git_run(&["rebase", "main"]).code, 0);
    let user = b.user_state();
    b.bsi(&["open", "projets/", "--session", "s2"]).ok();
    b.bsi(&["status"]).ok().stdout_has("s1").stdout_has("s2");
    assert_eq!(b.user_state(), user);
    b.git(&["rebase", "--abort"]);
    assert_eq!(b.active().len(), 2);
}

#[cfg(unix)]
#[test]
fn a_read_only_copy_or_directory_is_left_alone_and_said() {
    use std::os::unix::fs::PermissionsExt;
    let b = Brain::new();
    let copy = b.path().join("BRAIN-INDEX.md");
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let before = b.read("BRAIN-INDEX.md");
    b.bsi(&["open", "agents/", "--session", "s1"])
        .ok()
        .stderr_has("copy of the registry")
        .stderr_has("not updated");
    // The registry itself lives on its branch: the claim holds.
    assert_eq!(b.active().len(), 1);
    assert_eq!(b.read("BRAIN-INDEX.md"), before);
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    std::fs::set_permissions(b.path(), std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let r = b.bsi(&["open", "projets/", "--session", "s2"]);
    std::fs::set_permissions(b.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    r.ok();
    assert_eq!(b.active().len(), 2);
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_fails_cleanly() {
    let b = Brain::new();
    let mnt = b.path().join("full");
    std::fs::create_dir(&mnt).expect("mkdir");
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
        .arg(&mnt)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: cannot mount a small tmpfs here (needs privileges)");
        return;
    }
    let inner = Brain {
        dir: tempfile::TempDir::new_in(&mnt).expect("dir"),
        now: b.now.clone(),
    };
    inner.git(&["init", "-q", "--template=", "-b", "main"]);
    inner.git(&["config", "user.name", "T"]);
    inner.git(&["config", "user.email", "t@x"]);
    inner.bsi(&["init"]).ok();
    // Fill the disk, keeping the repository itself intact.
    let filler = mnt.join("filler");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&filler).expect("filler");
        let chunk = vec![b'x'; 4096];
        while f.write_all(&chunk).is_ok() {}
        let _ = f.sync_all();
    }
    let reg = inner.registry();
    let n = inner.commits();
    let long_note = "n".repeat(400);
    let mut failed = false;
    for i in 0..40 {
        let r = inner.bsi(&[
            "open",
            &format!("d{i}/"),
            "--session",
            &format!("s{i}"),
            "--note",
            &long_note,
        ]);
        if r.code != 0 {
            assert_eq!(r.code, 1, "{}", r.stderr);
            failed = true;
            break;
        }
    }
    let _ = std::fs::remove_file(&filler);
    if failed {
        // Whatever landed is committed and reads back; the next write works.
        inner.bsi(&["status", "--json"]).ok();
        inner.bsi(&["open", "after/", "--session", "after"]).ok();
        assert!(inner.registry().contains("| after | after/ |"));
    } else {
        assert!(inner.commits() > n && inner.registry() != reg);
    }
    drop(inner);
    let _ = std::process::Command::new("umount").arg(&mnt).status();
}

/// A hostile input, the exit code it must give and what the message says.
type Case = (&'static [&'static str], i32, &'static str);

#[test]
fn hostile_scopes_are_refused_or_handled() {
    let b = Brain::new();
    b.write("café/é.md", "# É\n");
    b.write("pipe|name.md", "# P\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-qm", "odd names"]);
    let ten_k = "x".repeat(10_000);
    let cases: [Case; 11] = [
        (&["open", "../x.md"], 2, "outside the brain"),
        (&["open", "agents/../../x.md"], 2, "outside the brain"),
        (&["open", "/etc/passwd"], 2, "absolute path"),
        (&["open", "a\nb.md"], 2, "control character"),
        (&["open", "a\tb.md"], 2, "control character"),
        (
            &["open", "projets/no-such-file.md#No such heading"],
            2,
            "is not a file of the brain",
        ),
        (&["open", "projets/plan.md#"], 2, "section"),
        (&["open", "   "], 2, "empty"),
        (&["open", "x.md", "--session", "a|b"], 2, "not a session id"),
        (&["open", "x.md", "--agent", "a\nb"], 2, "control character"),
        (&["open", "x.md", "--ttl=-2h"], 2, "TTL"),
    ];
    let reg = b.registry();
    let n = b.commits();
    for (args, code, says) in cases {
        let mut args: Vec<&str> = args.to_vec();
        if !args.contains(&"--session") {
            args.extend(["--session", "s1"]);
        }
        b.bsi(&args).code(code).stderr_has(says);
    }
    b.bsi(&["open", &ten_k, "--session", "s1"])
        .code(2)
        .stderr_has("longer than 1024 bytes");
    assert_eq!((b.registry(), b.commits()), (reg, n));

    // A `|` in a name is escaped in the registry and read back whole.
    b.bsi(&["open", "pipe|name.md", "--session", "s1"]).ok();
    assert!(b.registry().contains("| s1 | pipe\\|name.md | file |"));
    assert_eq!(
        b.bsi(&["status", "--json"]).json()["active"][0]["scope"],
        "pipe|name.md"
    );
    // Two normalisation forms of one name are one scope.
    let nfc = "caf\u{e9}/";
    let nfd = "cafe\u{301}/";
    b.bsi(&["open", nfc, "--session", "s2"]).ok();
    b.bsi(&["open", nfd, "--session", "s3"]).code(3);
    b.bsi(&["open", nfd, "--session", "s2"])
        .ok()
        .stdout_has("Already held");
    // Look-alike letters are other names: Cyrillic `а` is not Latin `a`.
    b.bsi(&["open", "\u{430}gents/", "--session", "s4"]).ok();
    b.bsi(&["close", "s4"]).ok();
}

/// Turns a good registry into a broken one.
type Mutation = fn(String) -> String;

#[test]
fn hostile_registries_are_refused_byte_identical() {
    let broken: &[(&str, Mutation, &str)] = &[
        (
            "missing column",
            |r| {
                r.replacen("| Session | Scope | Niveau | Agent | Ouvert le | Expire le | Note |\n|---------|-------|--------|-------|-----------|-----------|------|", "| Session | Scope | Agent | Ouvert le | Expire le | Note |\n|---|---|---|---|---|---|", 1)
            },
            "no `Niveau` column",
        ),
        (
            "duplicate heading",
            |r| {
                r + "\n## Claims actifs\n\n| Session | Scope | Niveau | Ouvert le | Expire le |\n|---|---|---|---|---|\n"
            },
            "a second `## Claims actifs` heading",
        ),
        (
            "duplicate session and scope",
            |r| {
                let row = "| s1 | agents/ | dir | a | 2026-03-14 09:30 +00:00 | 2026-03-14 11:30 +00:00 |  |\n";
                r.replacen("|------|\n", &format!("|------|\n{row}{row}"), 1)
            },
            "holds scope agents/ twice",
        ),
        (
            "not a GFM table",
            |r| {
                r.replacen(
                    "|---------|-------|--------|-------|-----------|-----------|------|\n",
                    "",
                    1,
                )
            },
            "no delimiter row",
        ),
        (
            "delimiter width",
            |r| {
                r.replacen(
                    "|---------|-------|--------|-------|-----------|-----------|------|",
                    "|---|---|",
                    1,
                )
            },
            "delimiter row has 2 cells",
        ),
        (
            "NUL byte",
            |r| r.replacen("Registry", "Reg\0istry", 1),
            "NUL",
        ),
        (
            "too many cells in history",
            |r| r + "| a | b | c | d | e | f | g | h | i | j |\n",
            "cells but the header has 8",
        ),
    ];
    for (what, f, says) in broken {
        let b = Brain::new();
        let bad = f(b.registry());
        b.commit_registry(&bad, what);
        let n = b.commits();
        for args in [
            &["open", "projets/", "--session", "s9"][..],
            &["watchdog"],
            &["close", "s1"],
            &["status"],
        ] {
            let r = b.bsi(args);
            r.code(5).stderr_has(says);
            assert!(
                r.stderr.contains("line "),
                "{what}: no line in {}",
                r.stderr
            );
        }
        assert_eq!(b.registry(), bad, "{what}: registry rewritten");
        assert_eq!(b.commits(), n, "{what}");
    }
    // Invalid UTF-8.
    let b = Brain::new();
    let mut bytes = b.registry().into_bytes();
    bytes.extend_from_slice(b"\n\xff\xfe\n");
    std::fs::write(b.path().join("bad.bin"), &bytes).expect("write");
    let blob = b.git(&["hash-object", "-w", "bad.bin"]);
    std::fs::remove_file(b.path().join("bad.bin")).expect("rm");
    let tree = b.git_stdin(
        &["mktree"],
        &format!("100644 blob {}\tBRAIN-INDEX.md\n", blob.trim()),
    );
    let commit = b.git(&[
        "commit-tree",
        tree.trim(),
        "-p",
        "brain-index",
        "-m",
        "binary",
    ]);
    b.git(&["update-ref", "refs/heads/brain-index", commit.trim()]);
    b.bsi(&["status"]).code(5).stderr_has("not valid UTF-8");
    b.bsi(&["open", "x.md", "--session", "s"]).code(5);
    assert_eq!(b.git(&["rev-parse", "brain-index"]), commit);
}

#[test]
fn a_huge_history_is_archived_on_the_first_write() {
    // 50 MB with BSI_LONG=1; 5 MB otherwise (the same code path).
    let megabytes = if long() { 50 } else { 5 };
    let b = Brain::new();
    let row = "| sess-20260101-0000-abcd | notes/some/long/path/to/a/file.md#Some heading | section | someone@somewhere | 2026-01-01 00:00 +00:00 | 2026-01-01 01:00 +00:00 | completed | a note that pads the row to a realistic length |\n";
    let count = megabytes * 1024 * 1024 / row.len() + 1;
    let mut reg = b.registry();
    reg.reserve(row.len() * count);
    for _ in 0..count {
        reg.push_str(row);
    }
    b.commit_registry(&reg, "big history");
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    // The first write moved all but the newest 200 rows (history_keep's
    // default) to the archive, byte for byte: not one row lost or added.
    let after = b.registry();
    assert_eq!(after.matches(row).count(), 200);
    let archive = b.git(&["show", "brain-index:archive/2026-01.md"]);
    assert_eq!(archive.matches(row).count(), count - 200);
    assert!(after.contains("| s1 | agents/ | dir | tester@box | 2026-03-14 09:30 +00:00 | 2026-03-14 11:30 +00:00 |  |\n"));
    b.bsi(&["close", "s1"]).ok();
    assert!(b.registry().ends_with("| completed |  |\n"));
    b.bsi(&["status", "--json"]).ok();
    assert_eq!(b.registry_copy(), b.registry());
    assert_eq!(b.status(), "");
    // bsi writes a large object itself: git reads it back and finds nothing
    // wrong with it.
    b.git(&["fsck", "--no-progress", "--strict"]);
}

#[test]
fn someone_elses_claim_is_not_closed_or_renewed_by_accident() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1", "--agent", "alice"])
        .ok();
    let reg = b.registry();
    let n = b.commits();
    b.bsi_env(&["close", "s1"], &[("BSI_AGENT", "bob")])
        .code(1)
        .stderr_has("opened by alice, not by bob")
        .stderr_has("--force");
    b.bsi_env(&["renew", "s1"], &[("BSI_AGENT", "bob")])
        .code(1)
        .stderr_has("opened by alice");
    assert_eq!((b.registry(), b.commits()), (reg, n));
    b.bsi_env(&["renew", "s1", "--ttl", "3h"], &[("BSI_AGENT", "alice")])
        .ok();
    b.bsi_env(&["close", "s1", "--force"], &[("BSI_AGENT", "bob")])
        .ok();
    assert!(b.history()[0].contains("| completed |"));
}

#[cfg(unix)]
#[test]
fn headings_are_never_read_through_a_symlink_out_of_the_brain() {
    let b = Brain::new();
    let outside = crate::common::scratch("bsi-outside");
    std::fs::write(outside.path().join("doc.md"), "# Secret\n\n## Inside\n").expect("write");
    std::os::unix::fs::symlink(outside.path().join("doc.md"), b.path().join("doc.md"))
        .expect("symlink");
    b.bsi(&["open", "doc.md#Inside", "--session", "s1"])
        .code(2)
        .stderr_has("outside the brain");
    b.bsi(&["open", "doc.md", "--session", "s1"]).code(2);
}

#[test]
fn stale_leftovers_of_a_dead_process_do_not_block() {
    let b = Brain::new();
    // A lock file and a temp file left by a process that no longer exists.
    std::fs::create_dir_all(b.path().join(".git/bsi")).expect("mkdir");
    std::fs::write(b.path().join(".git/bsi/lock"), "").expect("lock");
    std::fs::write(b.path().join(".BRAIN-INDEX.md.bsi-tmp"), "garbage").expect("tmp");
    // A short lock wait: a leftover that blocked would fail the command.
    b.bsi_env(
        &["open", "agents/", "--session", "s1"],
        &[("BSI_LOCK_WAIT_MS", "2000")],
    )
    .ok();
    assert!(!b.path().join(".BRAIN-INDEX.md.bsi-tmp").exists());
}

#[test]
fn locks_left_by_a_dead_bsi_are_cleared_but_a_live_one_is_not() {
    let b = Brain::new();
    let dead_record = "busy write\npid 4000000000\nstart 1\n";
    let lock = b.path().join(".git/refs/heads/brain-index.lock");
    // A bsi died while libgit2 moved the registry branch: its record names
    // a process that no longer exists, and the branch's lock is left.
    std::fs::write(b.path().join(".git/bsi/lock"), dead_record).expect("record");
    std::fs::write(&lock, "").expect("lock");
    b.bsi(&["open", "projets/", "--session", "s2"])
        .ok()
        .stderr_has("note: removed 1 lock file(s) a killed bsi left on the registry branch");
    assert!(!lock.exists());
    assert_eq!(b.active().len(), 1);
    // The same leftovers, but a live process holds the lock open: it is
    // never removed, and the error names it.
    std::fs::write(b.path().join(".git/bsi/lock"), dead_record).expect("record");
    std::fs::write(&lock, "").expect("lock");
    let held = std::fs::OpenOptions::new()
        .append(true)
        .open(&lock)
        .expect("hold");
    b.bsi(&["open", "README.md", "--session", "s3"])
        .code(1)
        .stderr_has("brain-index.lock");
    assert!(lock.exists(), "a live lock was removed");
    drop(held);
    // With no dead bsi behind it, a lock is somebody else's: left alone.
    b.bsi(&["open", "README.md", "--session", "s3"])
        .code(1)
        .stderr_has("is locked");
    assert!(lock.exists());
    std::fs::remove_file(&lock).expect("unlock");
    b.bsi(&["open", "README.md", "--session", "s3"]).ok();
    assert_eq!(b.status(), "");
}

#[test]
fn a_write_killed_before_its_branch_moved_leaves_no_trace() {
    let b = Brain::new();
    let before = b.registry();
    for p in ["after-record", "after-commit"] {
        // Aborted there: a signal, no exit code.
        b.bsi_env(
            &["open", "agents/", "--session", "s1"],
            &[("BSI_FAULT_POINT", p)],
        )
        .code(-1);
        assert_eq!(b.registry(), before, "{p}");
    }
    b.bsi(&["open", "agents/", "--session", "s2"]).ok();
    assert!(!b.registry().contains("| s1 |"));
    b.bsi_env(
        &["open", "projets/", "--session", "s3"],
        &[("BSI_FAULT_POINT", "after-branch")],
    )
    .code(-1);
    // The branch moved: the change holds, and the next command brings the
    // copy up to date.
    assert!(b.registry().contains("| s3 | projets/ |"));
    b.bsi(&["status"]).ok().stdout_has("s3");
    assert_eq!(b.registry_copy(), b.registry());
    assert_eq!(b.status(), "");
}
