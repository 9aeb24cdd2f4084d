//! The collision benchmark: what coordination costs and saves on a shared
//! repository. Run by `bench/collisions.sh`, which builds it and the
//! release binary and draws the plot; see that script for the modes.
//!
//! A generated brain (50 files, 300 sections under nested headings) on a
//! local bare remote; N scripted agents, each on its own clone (every third
//! one in a linked work tree of the clone before it), each doing a seeded
//! stream of tasks. A task names the sections it edits (files drawn with a
//! Zipf-like skew: a few hot files), pulls, holds them for a simulated
//! working time, appends its own lines at the end of each section, commits
//! and pushes (`git pull --rebase` on a rejection; a conflict is resolved
//! the way a hurried agent does: its own version of the file wins).
//!
//! The same task streams run under four strategies:
//! - `none`: git alone;
//! - `file`: one bsi claim per file touched (`bsi open f1 f2 --wait
//!   --no-queue`), what file-reservation tools offer;
//! - `section`: bsi section claims, `bsi open f#H --wait --no-queue`;
//! - `queue`: the same with the fair queue (`bsi open f#H --wait`).
//!
//! Figures per strategy and N: tasks per minute, git conflicts met, edits
//! lost (lines a finished task wrote that are not in the final tree), wait
//! p50/p95/max, the most times one request was overtaken by a later one
//! for an overlapping scope, pushes per task, time inside bsi.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const FILES: usize = 50;
const DIRS: usize = 5;
/// Sections of a file a task may name: three parts, two with a child.
const SECTIONS: [&str; 5] = ["Part 1", "Sub 1a", "Part 2", "Sub 2a", "Part 3"];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Strategy {
    None,
    File,
    Section,
    Queue,
}

impl Strategy {
    fn name(self) -> &'static str {
        match self {
            Strategy::None => "none",
            Strategy::File => "file",
            Strategy::Section => "section",
            Strategy::Queue => "queue",
        }
    }
}

/// A small seeded generator (xorshift64*): the task streams are the same
/// for every strategy and every run.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// File `i`'s path in the brain.
fn file_name(i: usize) -> String {
    format!("d{}/f{:02}.md", i % DIRS, i)
}

/// A file drawn with a Zipf-like skew (exponent 1.1): file 0 is hottest.
fn zipf(rng: &mut Rng) -> usize {
    let weights: Vec<f64> = (0..FILES)
        .map(|i| 1.0 / ((i + 1) as f64).powf(1.1))
        .collect();
    let total: f64 = weights.iter().sum();
    let mut x = rng.unit() * total;
    for (i, w) in weights.iter().enumerate() {
        if x < *w {
            return i;
        }
        x -= w;
    }
    FILES - 1
}

#[derive(Clone, Debug)]
struct Task {
    /// (file index, section index into SECTIONS).
    edits: Vec<(usize, usize)>,
    work: Duration,
}

/// The tasks of one agent; `hot`: every task edits one of the five
/// sections of the hottest file (file 0).
fn tasks_for(seed: u64, agent: usize, count: usize, work: (u64, u64), hot: bool) -> Vec<Task> {
    let mut rng = Rng::new(seed ^ ((agent as u64 + 1) << 32));
    (0..count)
        .map(|_| {
            let files = if rng.unit() < 0.25 { 2 } else { 1 };
            let mut edits: Vec<(usize, usize)> = Vec::new();
            if hot {
                edits.push((0, rng.below(SECTIONS.len())));
            }
            while edits.len() < files && !hot {
                let f = zipf(&mut rng);
                if edits.iter().all(|(g, _)| *g != f) {
                    edits.push((f, rng.below(SECTIONS.len())));
                }
            }
            edits.sort_unstable();
            let ms = work.0 + rng.next() % (work.1 - work.0 + 1);
            Task {
                edits,
                work: Duration::from_millis(ms),
            }
        })
        .collect()
}

/// Whether two section indexes of one file overlap: equal, or a part and
/// its child.
fn sections_overlap(a: usize, b: usize) -> bool {
    let parent = |s: usize| match s {
        1 => Some(0),
        3 => Some(2),
        _ => None,
    };
    a == b || parent(a) == Some(b) || parent(b) == Some(a)
}

fn file_text(i: usize) -> String {
    let mut s = format!("# File {i}\n\nIntro of file {i}.\n");
    for (k, part) in [(1, true), (2, true), (3, false)] {
        let _ = write!(s, "\n## Part {k}\n\nText of part {k}.\nMore of part {k}.\n");
        if part {
            let _ = write!(
                s,
                "\n### Sub {k}a\n\nText of sub {k}a.\nMore of sub {k}a.\n"
            );
        }
    }
    s
}

/// Appends `lines` at the end of the own body of `heading` (before the
/// next heading of any level).
fn append_in_section(text: &str, heading: &str, lines: &[String]) -> String {
    let all: Vec<&str> = text.lines().collect();
    let Some(h) = all
        .iter()
        .position(|l| l.trim_start_matches('#').trim() == heading && l.starts_with('#'))
    else {
        return text.to_string();
    };
    let mut end = all[h + 1..]
        .iter()
        .position(|l| l.starts_with('#'))
        .map_or(all.len(), |p| h + 1 + p);
    while end > h + 1 && all[end - 1].trim().is_empty() {
        end -= 1;
    }
    let mut out: Vec<String> = all[..end].iter().map(|s| (*s).to_string()).collect();
    out.extend(lines.iter().cloned());
    out.extend(all[end..].iter().map(|s| (*s).to_string()));
    let mut s = out.join("\n");
    s.push('\n');
    s
}

struct Env {
    bsi: PathBuf,
    home: PathBuf,
    /// `--no-handoff`: no close can prove a waiter alive, so none hands
    /// its scope over (the same run without the handoff).
    no_handoff: bool,
}

impl Env {
    fn cmd(&self, prog: &Path, dir: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(prog);
        c.current_dir(dir)
            .args(args)
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_EDITOR", "true")
            .env("LC_ALL", "C")
            .env_remove("BSI_SESSION")
            .env_remove("BSI_AGENT")
            .env_remove("BSI_REMOTE")
            .env_remove("BSI_REGISTRY")
            .env_remove("BSI_NOW");
        c
    }

    fn git(&self, dir: &Path, args: &[&str]) -> Output {
        self.cmd(Path::new("git"), dir, args)
            .output()
            .expect("git runs")
    }

    fn git_ok(&self, dir: &Path, args: &[&str]) {
        let o = self.git(dir, args);
        assert!(
            o.status.success(),
            "git {args:?} in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&o.stderr)
        );
    }

    fn bsi(&self, dir: &Path, args: &[&str]) -> Output {
        self.cmd(&self.bsi, dir, args).output().expect("bsi runs")
    }
}

/// One finished task's claim: when it was asked for and granted (since
/// the run's start), what it covered, and how long the open took.
struct Grant {
    requested: Duration,
    granted: Duration,
    edits: Vec<(usize, usize)>,
    wait: Duration,
}

/// What one agent saw.
#[derive(Default)]
struct Tally {
    finished: usize,
    conflicts: usize,
    pushes: usize,
    bsi_time: Duration,
    busy: Duration,
    /// Per task: (request time, grant time, the scopes' overlap keys, wait).
    grants: Vec<Grant>,
    /// Lines written by finished tasks, per file.
    written: Vec<(usize, String)>,
    failures: Vec<String>,
}

/// Rebases onto origin/main; a conflict keeps this agent's version of each
/// conflicted file. Returns the conflicts met.
fn pull_rebase(env: &Env, dir: &Path) -> usize {
    let mut conflicts = 0;
    for _ in 0..20 {
        let o = env.git(dir, &["pull", "--rebase", "-q", "origin", "main"]);
        if o.status.success() {
            return conflicts;
        }
        // A fetch racing another work tree of the same clone: try again.
        let in_rebase = env
            .git(dir, &["rev-parse", "--git-path", "rebase-merge"])
            .stdout;
        let rm = PathBuf::from(String::from_utf8_lossy(&in_rebase).trim());
        let rm = if rm.is_absolute() { rm } else { dir.join(rm) };
        if !rm.exists() {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        for _ in 0..50 {
            let u = env.git(dir, &["diff", "--name-only", "--diff-filter=U"]);
            let files: Vec<String> = String::from_utf8_lossy(&u.stdout)
                .lines()
                .map(String::from)
                .collect();
            if files.is_empty() {
                break;
            }
            conflicts += 1;
            for f in &files {
                env.git_ok(dir, &["checkout", "--theirs", "--", f]);
                env.git_ok(dir, &["add", "--", f]);
            }
            let c = env.git(dir, &["-c", "core.editor=true", "rebase", "--continue"]);
            if c.status.success() {
                break;
            }
        }
        if !rm.exists() {
            return conflicts;
        }
    }
    conflicts
}

/// Pushes HEAD to main, rebasing on a rejection. Returns the attempts.
fn push(env: &Env, dir: &Path, tally: &mut Tally) -> bool {
    for _ in 0..200 {
        tally.pushes += 1;
        let o = env.git(dir, &["push", "-q", "origin", "HEAD:main"]);
        if o.status.success() {
            return true;
        }
        tally.conflicts += pull_rebase(env, dir);
    }
    false
}

struct Run {
    strategy: Strategy,
    n: usize,
    tasks: usize,
    work: (u64, u64),
    seed: u64,
    /// The hot-file workload: every task on one file's five sections.
    hot: bool,
}

#[derive(Default, Debug, Clone)]
struct Figures {
    strategy: String,
    n: usize,
    tasks: usize,
    finished: usize,
    wall_s: f64,
    per_min: f64,
    conflicts: usize,
    lost: usize,
    wait_p50_ms: f64,
    wait_p95_ms: f64,
    wait_max_ms: f64,
    overtaken_max: usize,
    pushes_per_task: f64,
    registry_commits_per_task: f64,
    /// Grants a close made in its own write (the handoff).
    handed: usize,
    /// Every task's wait for its claims, in ms.
    waits: Vec<f64>,
    bsi_share: f64,
    bsi_ms_per_task: f64,
    failures: Vec<String>,
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i]
}

fn setup(env: &Env, root: &Path, n: usize) -> (PathBuf, Vec<PathBuf>) {
    let bare = root.join("origin.git");
    env.git_ok(root, &["init", "-q", "--bare", "-b", "main", "origin.git"]);
    let seed = root.join("seed");
    env.git_ok(root, &["init", "-q", "-b", "main", "seed"]);
    for i in 0..FILES {
        let p = seed.join(file_name(i));
        fs::create_dir_all(p.parent().expect("dir")).expect("mkdir");
        fs::write(&p, file_text(i)).expect("write");
    }
    env.git_ok(&seed, &["add", "-A"]);
    env.git_ok(
        &seed,
        &[
            "-c",
            "user.name=seed",
            "-c",
            "user.email=s@x",
            "commit",
            "-qm",
            "brain",
        ],
    );
    env.git_ok(&seed, &["remote", "add", "origin", "../origin.git"]);
    env.git_ok(&seed, &["push", "-q", "-u", "origin", "main"]);
    let o = env.bsi(&seed, &["init"]);
    assert!(
        o.status.success(),
        "bsi init: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut dirs: Vec<PathBuf> = Vec::new();
    for k in 0..n {
        let dir = root.join(format!("agent{k:02}"));
        if k % 3 == 2 {
            // A linked work tree of the clone before it, on its own branch.
            let base = dirs[k - 1].clone();
            env.git_ok(
                &base,
                &[
                    "worktree",
                    "add",
                    "-q",
                    "-b",
                    &format!("agent{k}"),
                    dir.to_str().expect("utf-8"),
                    "origin/main",
                ],
            );
        } else {
            env.git_ok(
                root,
                &[
                    "clone",
                    "-q",
                    bare.to_str().expect("utf-8"),
                    dir.to_str().expect("utf-8"),
                ],
            );
            env.git_ok(&dir, &["config", "user.name", &format!("agent{k}")]);
            env.git_ok(&dir, &["config", "user.email", &format!("agent{k}@x")]);
        }
        dirs.push(dir);
    }
    (bare, dirs)
}

fn agent(env: &Env, dir: &Path, k: usize, run: &Run, t0: Instant) -> Tally {
    let mut tally = Tally::default();
    let tasks = tasks_for(run.seed, k, run.tasks, run.work, run.hot);
    for (j, task) in tasks.iter().enumerate() {
        let started = Instant::now();
        let session = format!("a{k}-t{j}");
        let agent_name = format!("agent{k}");
        let scopes: Vec<String> = match run.strategy {
            Strategy::None => Vec::new(),
            Strategy::File => task.edits.iter().map(|(f, _)| file_name(*f)).collect(),
            Strategy::Section | Strategy::Queue => task
                .edits
                .iter()
                .map(|(f, s)| format!("{}#{}", file_name(*f), SECTIONS[*s]))
                .collect(),
        };
        let requested = t0.elapsed();
        let mut wait = Duration::ZERO;
        if run.strategy != Strategy::None {
            let mut args: Vec<&str> = vec!["open"];
            args.extend(scopes.iter().map(String::as_str));
            args.extend([
                "--session",
                &session,
                "--agent",
                &agent_name,
                "--wait",
                "10m",
                "-q",
            ]);
            if run.strategy != Strategy::Queue {
                args.push("--no-queue");
            }
            let b = Instant::now();
            let o = env.bsi(dir, &args);
            wait = b.elapsed();
            tally.bsi_time += wait;
            if !o.status.success() {
                tally.failures.push(format!(
                    "{session}: open exit {:?}: {}",
                    o.status.code(),
                    String::from_utf8_lossy(&o.stderr)
                ));
                continue;
            }
        }
        let granted = t0.elapsed();
        // Start from the latest content of what the task edits.
        tally.conflicts += pull_rebase(env, dir);
        std::thread::sleep(task.work);
        let mut mine = Vec::new();
        for (n, (f, s)) in task.edits.iter().enumerate() {
            let path = dir.join(file_name(*f));
            let text = fs::read_to_string(&path).expect("read");
            let lines: Vec<String> = (0..2)
                .map(|i| format!("- {session} edit {n}.{i} of {}", SECTIONS[*s]))
                .collect();
            fs::write(&path, append_in_section(&text, SECTIONS[*s], &lines)).expect("write");
            mine.extend(lines.into_iter().map(|l| (*f, l)));
        }
        env.git_ok(dir, &["commit", "-qam", &format!("task {session}")]);
        let pushed = push(env, dir, &mut tally);
        if run.strategy != Strategy::None {
            let b = Instant::now();
            let o = env.bsi(dir, &["close", &session, "--agent", &agent_name, "-q"]);
            tally.bsi_time += b.elapsed();
            if !o.status.success() {
                tally.failures.push(format!(
                    "{session}: close exit {:?}: {}",
                    o.status.code(),
                    String::from_utf8_lossy(&o.stderr)
                ));
            }
        }
        if pushed {
            tally.finished += 1;
            tally.written.extend(mine);
            tally.grants.push(Grant {
                requested,
                granted,
                edits: task.edits.clone(),
                wait,
            });
        } else {
            tally.failures.push(format!("{session}: push never landed"));
        }
        tally.busy += started.elapsed();
    }
    tally
}

/// Takes the handoff away from a run: a waiter records itself alive in
/// `waiting/` where its writers meet (the remote's `bsi/writes/<branch>/`,
/// or its clone's `.git/bsi/`), and a close hands over only to waiters it
/// finds recorded there. A file in the way of that directory leaves every
/// waiter unrecorded, so each takes its grant itself, as before the
/// handoff; nothing else changes.
fn without_handoff(bare: &Path, dirs: &[PathBuf]) {
    let mut blocked = vec![bare.join("bsi/writes/brain-index/waiting")];
    blocked.extend(
        dirs.iter()
            .filter(|d| d.join(".git").is_dir())
            .map(|d| d.join(".git/bsi/waiting")),
    );
    for path in blocked {
        fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        fs::write(&path, "no handoff in this run\n").expect("write");
    }
}

fn measure(env: &Env, work_root: &Path, run: &Run) -> Figures {
    let root = work_root.join(format!("{}-{}", run.strategy.name(), run.n));
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(&root).expect("mkdir");
    let (bare, dirs) = setup(env, &root, run.n);
    if env.no_handoff {
        without_handoff(&bare, &dirs);
    }
    let env = Arc::new(Env {
        bsi: env.bsi.clone(),
        home: env.home.clone(),
        no_handoff: env.no_handoff,
    });
    let t0 = Instant::now();
    let results = Arc::new(Mutex::new(Vec::new()));
    let mut handles = Vec::new();
    let run = Arc::new(Run { ..*run });
    for (k, dir) in dirs.iter().enumerate() {
        let (env, run, results, dir) = (env.clone(), run.clone(), results.clone(), dir.clone());
        handles.push(std::thread::spawn(move || {
            let t = agent(&env, &dir, k, &run, t0);
            results.lock().expect("lock").push(t);
        }));
    }
    for h in handles {
        h.join().expect("agent thread");
    }
    let wall = t0.elapsed();
    let tallies = Arc::try_unwrap(results)
        .ok()
        .expect("threads done")
        .into_inner()
        .expect("lock");

    // The final tree, as the remote holds it.
    let fin = root.join("final");
    env.git_ok(
        &root,
        &[
            "clone",
            "-q",
            bare.to_str().expect("utf-8"),
            fin.to_str().expect("utf-8"),
        ],
    );
    let mut texts: HashMap<usize, String> = HashMap::new();
    let mut lost = 0;
    for t in &tallies {
        for (f, line) in &t.written {
            let text = texts
                .entry(*f)
                .or_insert_with(|| fs::read_to_string(fin.join(file_name(*f))).unwrap_or_default());
            if !text.lines().any(|l| l == line) {
                lost += 1;
            }
        }
    }
    let registry_commits = {
        let o = env.git(&fin, &["rev-list", "--count", "origin/brain-index"]);
        String::from_utf8_lossy(&o.stdout)
            .trim()
            .parse::<usize>()
            .unwrap_or(1)
            - 1
    };
    // The handoffs: a close that granted a waiter in its write says so in
    // its subject (`; handed to <session>: <scopes>`).
    let handed = {
        let o = env.git(&fin, &["log", "--format=%s", "origin/brain-index"]);
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| l.matches("; handed to ").count())
            .sum::<usize>()
    };
    // Overtakes: a later request for an overlapping scope granted first.
    let all: Vec<&Grant> = tallies.iter().flat_map(|t| t.grants.iter()).collect();
    let overlap = |a: &[(usize, usize)], b: &[(usize, usize)]| {
        a.iter().any(|(f, s)| {
            b.iter().any(|(g, u)| {
                f == g && (run.strategy == Strategy::File || sections_overlap(*s, *u))
            })
        })
    };
    let overtaken_max = if run.strategy == Strategy::None {
        0
    } else {
        all.iter()
            .map(|me| {
                all.iter()
                    .filter(|o| {
                        o.requested > me.requested
                            && o.granted < me.granted
                            && overlap(&me.edits, &o.edits)
                    })
                    .count()
            })
            .max()
            .unwrap_or(0)
    };
    let waits: Vec<f64> = all.iter().map(|g| g.wait.as_secs_f64() * 1000.0).collect();
    let finished: usize = tallies.iter().map(|t| t.finished).sum();
    let busy: Duration = tallies.iter().map(|t| t.busy).sum();
    let bsi: Duration = tallies.iter().map(|t| t.bsi_time).sum();
    let total_wait: f64 = waits.iter().sum();
    let tasks = run.n * run.tasks;
    Figures {
        strategy: run.strategy.name().into(),
        n: run.n,
        tasks,
        finished,
        wall_s: wall.as_secs_f64(),
        per_min: finished as f64 / wall.as_secs_f64() * 60.0,
        conflicts: tallies.iter().map(|t| t.conflicts).sum(),
        lost,
        wait_p50_ms: percentile(&mut waits.clone(), 0.5),
        wait_p95_ms: percentile(&mut waits.clone(), 0.95),
        wait_max_ms: percentile(&mut waits.clone(), 1.0),
        waits,
        overtaken_max,
        pushes_per_task: tallies.iter().map(|t| t.pushes).sum::<usize>() as f64
            / finished.max(1) as f64,
        registry_commits_per_task: registry_commits as f64 / finished.max(1) as f64,
        handed,
        bsi_share: bsi.as_secs_f64() / busy.as_secs_f64().max(1e-9),
        // What bsi costs beside the waits: the close of each task.
        bsi_ms_per_task: (bsi.as_secs_f64() * 1000.0 - total_wait) / finished.max(1) as f64,
        failures: tallies.into_iter().flat_map(|t| t.failures).collect(),
    }
}

fn main() {
    let mut smoke = false;
    let mut long = false;
    let mut hot = false;
    let mut no_handoff = false;
    let mut bsi = PathBuf::from("target/release/bsi");
    let mut out = PathBuf::from("target/bench-collisions");
    let mut seed: u64 = 25;
    // `--n N` and `--strategy NAME` (each repeatable): only those runs.
    let (mut only_n, mut only_strategy): (Vec<usize>, Vec<String>) = (Vec::new(), Vec::new());
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--smoke" => smoke = true,
            "--long" => long = true,
            "--hot" => hot = true,
            "--no-handoff" => no_handoff = true,
            "--bsi" => bsi = PathBuf::from(args.next().expect("--bsi PATH")),
            "--out" => out = PathBuf::from(args.next().expect("--out DIR")),
            "--seed" => seed = args.next().and_then(|s| s.parse().ok()).expect("--seed N"),
            "--n" => only_n.push(args.next().and_then(|s| s.parse().ok()).expect("--n N")),
            "--strategy" => only_strategy.push(args.next().expect("--strategy NAME")),
            _ => {
                eprintln!(
                    "usage: collisions [--smoke | --long] [--hot] [--no-handoff] [--bsi PATH] [--out DIR] [--seed N] [--n N]... [--strategy none|file|section|queue]..."
                );
                std::process::exit(2);
            }
        }
    }
    let bsi = fs::canonicalize(&bsi).expect("the bsi binary (build it first)");
    fs::create_dir_all(&out).expect("mkdir out");
    let out = fs::canonicalize(&out).expect("out");
    let work = out.join("work");
    let home = out.join("home");
    fs::create_dir_all(&home).expect("home");
    let env = Env {
        bsi,
        home,
        no_handoff,
    };
    let (ns, tasks, work_ms): (Vec<usize>, usize, (u64, u64)) = if hot && smoke {
        (vec![2], 1, (1000, 1500))
    } else if hot {
        // The agents' own work dominates: 1-3 s holding the scope.
        (vec![2, 5, 10, 20], 3, (1000, 3000))
    } else if smoke {
        (vec![2, 3], 2, (10, 30))
    } else if long {
        (vec![2, 5, 10, 20], 6, (50, 200))
    } else {
        (vec![2, 5, 10], 6, (50, 200))
    };
    let strategies: Vec<Strategy> = [
        Strategy::None,
        Strategy::File,
        Strategy::Section,
        Strategy::Queue,
    ]
    .into_iter()
    .filter(|s| only_strategy.is_empty() || only_strategy.iter().any(|o| o == s.name()))
    .collect();
    let ns: Vec<usize> = ns
        .into_iter()
        .filter(|n| only_n.is_empty() || only_n.contains(n))
        .collect();
    let mut rows: Vec<Figures> = Vec::new();
    for &n in &ns {
        for &strategy in &strategies {
            let run = Run {
                strategy,
                n,
                tasks,
                work: work_ms,
                seed,
                hot,
            };
            let f = measure(&env, &work, &run);
            eprintln!(
                "collisions: {:<8} N={:<3} {:>3}/{:<3} tasks  {:>6.1}/min  conflicts {:>3}  lost {:>3}  wait p95 {:>6.0} ms  overtaken {:>2}  bsi {:>4.1}%",
                f.strategy,
                f.n,
                f.finished,
                f.tasks,
                f.per_min,
                f.conflicts,
                f.lost,
                f.wait_p95_ms,
                f.overtaken_max,
                f.bsi_share * 100.0
            );
            for why in f.failures.iter().take(5) {
                eprintln!("collisions:   {why}");
            }
            rows.push(f);
        }
        let _ = fs::remove_dir_all(&work);
    }
    let mut csv = String::from(
        "strategy,n,tasks,finished,wall_s,per_min,conflicts,lost,wait_p50_ms,wait_p95_ms,wait_max_ms,overtaken_max,pushes_per_task,registry_commits_per_task,bsi_share,bsi_ms_per_task,handed\n",
    );
    let mut md = String::from(
        "| strategy | N | tasks/min | conflicts | edits lost | wait p50 / p95 / max (ms) | most overtaken | pushes/task | registry commits/task | time in bsi | bsi close (ms) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for f in &rows {
        let _ = writeln!(
            csv,
            "{},{},{},{},{:.2},{:.1},{},{},{:.0},{:.0},{:.0},{},{:.2},{:.2},{:.3},{:.0},{}",
            f.strategy,
            f.n,
            f.tasks,
            f.finished,
            f.wall_s,
            f.per_min,
            f.conflicts,
            f.lost,
            f.wait_p50_ms,
            f.wait_p95_ms,
            f.wait_max_ms,
            f.overtaken_max,
            f.pushes_per_task,
            f.registry_commits_per_task,
            f.bsi_share,
            f.bsi_ms_per_task,
            f.handed
        );
        let _ = writeln!(
            md,
            "| {} | {} | {:.1} | {} | {} | {:.0} / {:.0} / {:.0} | {} | {:.2} | {:.2} | {:.0} % | {:.0} |",
            f.strategy,
            f.n,
            f.per_min,
            f.conflicts,
            f.lost,
            f.wait_p50_ms,
            f.wait_p95_ms,
            f.wait_max_ms,
            f.overtaken_max,
            f.pushes_per_task,
            f.registry_commits_per_task,
            f.bsi_share * 100.0,
            f.bsi_ms_per_task
        );
    }
    fs::write(out.join("collisions.csv"), &csv).expect("write csv");
    // Every wait, for figures pooled over several runs.
    let mut waits = String::from("strategy,n,wait_ms\n");
    for f in &rows {
        for w in &f.waits {
            let _ = writeln!(waits, "{},{},{:.0}", f.strategy, f.n, w);
        }
    }
    fs::write(out.join("waits.csv"), &waits).expect("write waits");
    fs::write(out.join("collisions.md"), &md).expect("write md");
    print!("{md}");
    // The invariants, judged in every mode: every task finished, and no
    // edit lost under claims.
    let mut bad = Vec::new();
    for f in &rows {
        if f.finished != f.tasks {
            bad.push(format!(
                "{} N={}: {} of {} tasks finished",
                f.strategy, f.n, f.finished, f.tasks
            ));
        }
        if f.strategy != "none" && f.lost > 0 {
            bad.push(format!("{} N={}: {} edits lost", f.strategy, f.n, f.lost));
        }
    }
    if hot {
        // The hot-file targets: 0 conflicts under claims, and at N = 10
        // section claims at least twice file claims' throughput.
        for f in rows
            .iter()
            .filter(|f| f.strategy != "none" && f.conflicts > 0)
        {
            bad.push(format!(
                "{} N={}: {} git conflicts",
                f.strategy, f.n, f.conflicts
            ));
        }
        let at = |name: &str| rows.iter().find(|f| f.n == 10 && f.strategy == name);
        if let (Some(file), Some(section)) = (at("file"), at("section")) {
            let ratio = section.per_min / file.per_min.max(f64::MIN_POSITIVE);
            println!(
                "hot file, N = 10: section claims {ratio:.2}x file claims' throughput (target >= 2x)"
            );
            if ratio < 2.0 {
                bad.push(format!(
                    "section claims at N=10: {ratio:.2}x file claims (target >= 2x)"
                ));
            }
        }
    }
    for b in &bad {
        eprintln!("collisions: FAILED: {b}");
    }
    std::process::exit(i32::from(!bad.is_empty()));
}
