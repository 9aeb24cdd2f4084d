//! A temporary brain: a real git repository with a fixed identity, a cleared
//! environment (no global git config, fixed clock and time zone), and helpers
//! to run `bsi` and `git` in it and to read back the registry and the log.

#![allow(dead_code, unreachable_pub)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

/// The binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_bsi"))
}

/// The branch that holds the registry.
pub const REGISTRY_BRANCH: &str = "brain-index";

/// The clock every command sees unless a test says otherwise.
pub const NOW: &str = "2026-03-14T09:30:00Z";

/// A new temporary directory for a test's repositories, homes and remotes.
///
/// On Linux the suite works in `/dev/shm` when it is a tmpfs with room
/// (1 GiB or more): thousands of repositories are made and deleted, and on
/// a disk file system inode allocation alone cost more than half of the
/// suite's system time. `BSI_TEST_TMPDIR` names another place; elsewhere,
/// or without room, the system's temporary directory.
pub fn scratch(prefix: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("{prefix}."))
        .rand_bytes(6)
        .tempdir_in(scratch_base())
        .expect("tempdir")
}

/// The directory [`scratch`] makes its directories in.
pub fn scratch_base() -> &'static Path {
    static BASE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BASE.get_or_init(|| {
        if let Some(dir) = std::env::var_os("BSI_TEST_TMPDIR").filter(|d| !d.is_empty()) {
            return PathBuf::from(dir);
        }
        roomy_tmpfs().unwrap_or_else(std::env::temp_dir)
    })
}

/// `/dev/shm` when `/proc/mounts` shows it as a writable tmpfs of 1 GiB or
/// more (a tmpfs without `size=` gets half the memory).
fn roomy_tmpfs() -> Option<PathBuf> {
    let mounts = fs::read_to_string("/proc/mounts").ok()?;
    let options = mounts.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        (f.len() >= 4 && f[1] == "/dev/shm" && f[2] == "tmpfs").then(|| f[3].to_string())
    })?;
    let opts: Vec<&str> = options.split(',').collect();
    if !opts.contains(&"rw") {
        return None;
    }
    let kib = match opts.iter().find_map(|o| o.strip_prefix("size=")) {
        None => u64::MAX,
        Some(v) => {
            let (digits, unit) =
                v.split_at(v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len()));
            let n: u64 = digits.parse().ok()?;
            match unit {
                "k" | "K" => n,
                "m" | "M" => n * 1024,
                "g" | "G" => n * 1024 * 1024,
                "" => n / 1024,
                _ => return None,
            }
        }
    };
    let dir = PathBuf::from("/dev/shm");
    let probe = tempfile::Builder::new()
        .prefix("bsi-probe")
        .tempdir_in(&dir)
        .ok()?;
    drop(probe);
    (kib >= 1024 * 1024).then_some(dir)
}

/// A brain published to a bare remote, and two clones of it, `alice` and
/// `bob`: two machines sharing one brain.
pub struct Machines {
    pub origin: Brain,
    pub bare: TempDir,
    pub a: Brain,
    pub b: Brain,
}

impl Machines {
    /// Built once per test process with git, then copied: each copy's
    /// remote URL is set to its own bare repository.
    pub fn new() -> Machines {
        static TEMPLATE: std::sync::OnceLock<[PathBuf; 4]> = std::sync::OnceLock::new();
        let template = TEMPLATE.get_or_init(|| {
            let origin = Brain::new();
            let bare = origin.publish_to_bare();
            let a = Brain::clone_of(bare.path(), "alice");
            let b = Brain::clone_of(bare.path(), "bob");
            let url = bare.path().to_path_buf();
            let kept: Vec<PathBuf> = [origin.dir, bare, a.dir, b.dir]
                .into_iter()
                .enumerate()
                .map(|(i, d)| keep_template(d, &format!("net{i}")))
                .collect();
            // The bare repository's old path, once, for the URLs to mend.
            fs::write(
                kept[1].join("bsi-template-url"),
                url.to_string_lossy().as_bytes(),
            )
            .expect("write");
            [
                kept[0].clone(),
                kept[1].clone(),
                kept[2].clone(),
                kept[3].clone(),
            ]
        });
        let old_url = fs::read_to_string(template[1].join("bsi-template-url")).expect("read");
        let copy = |from: &Path, prefix: &str| {
            let dir = scratch(prefix);
            copy_tree(from, dir.path());
            dir
        };
        let bare = copy(&template[1], "bsi-remote");
        let _ = fs::remove_file(bare.path().join("bsi-template-url"));
        let new_url = bare.path().to_string_lossy().into_owned();
        let brain = |from: &Path, prefix: &str| {
            let dir = copy(from, prefix);
            let config = dir.path().join(".git/config");
            let text = fs::read_to_string(&config).expect("read .git/config");
            fs::write(&config, text.replace(&old_url, &new_url)).expect("write .git/config");
            Brain {
                dir,
                now: NOW.to_string(),
            }
        };
        Machines {
            origin: brain(&template[0], "bsi-test"),
            a: brain(&template[2], "bsi-clone"),
            b: brain(&template[3], "bsi-clone"),
            bare,
        }
    }
}

/// Keeps a template directory under a name of this process (statics are
/// never dropped; the next run's sweep removes it).
fn keep_template(dir: TempDir, what: &str) -> PathBuf {
    let kept = dir
        .path()
        .with_file_name(format!("bsi-template-{}-{what}", std::process::id()));
    let _ = fs::remove_dir_all(&kept);
    fs::rename(dir.keep(), &kept).expect("keep the template");
    sweep_templates(kept.parent().expect("parent"));
    kept
}

/// Removes the templates of test processes that have ended (Linux: their
/// `/proc` entry is gone).
fn sweep_templates(base: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("bsi-template-"))
            .and_then(|n| n.split('-').next())
        else {
            continue;
        };
        if pid != std::process::id().to_string() && !Path::new("/proc").join(pid).exists() {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// Copies the directory `from` into the existing directory `to`: files with
/// their permissions (git hooks stay executable), symbolic links as links.
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("dir entry");
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().expect("file type");
        if kind.is_dir() {
            fs::create_dir(&dst).expect("mkdir");
            copy_tree(&src, &dst);
        } else if kind.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(fs::read_link(&src).expect("readlink"), &dst)
                .expect("symlink");
        } else {
            fs::copy(&src, &dst).expect("copy");
        }
    }
}

/// Whether the long modes run (`BSI_LONG=1`): the full sizes of the load,
/// race and many-machine tests. CI runs them; `cargo test` alone runs the
/// same code paths at sizes that keep the developer loop short.
pub fn long() -> bool {
    std::env::var_os("BSI_LONG").is_some_and(|v| !v.is_empty() && v != "0")
}

/// A finished command. A test that runs a command says what it must give:
/// its exit code at least (`.ok()`, `.code(n)`), or reads its output; one
/// dropped unread is a command whose failure would go unnoticed.
#[derive(Debug)]
#[must_use = "assert the exit code (`.ok()`, `.code(n)`) or read the output"]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn from_output(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    /// Asserts the exit code, showing the output when it differs.
    #[track_caller]
    pub fn code(&self, code: i32) -> &Run {
        assert_eq!(
            self.code, code,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }

    #[track_caller]
    pub fn ok(&self) -> &Run {
        self.code(0)
    }

    #[track_caller]
    pub fn stdout_has(&self, s: &str) -> &Run {
        assert!(
            self.stdout.contains(s),
            "stdout lacks {s:?}:\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    #[track_caller]
    pub fn stderr_has(&self, s: &str) -> &Run {
        assert!(
            self.stderr.contains(s),
            "stderr lacks {s:?}:\n{}\n--- stdout\n{}",
            self.stderr,
            self.stdout
        );
        self
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", self.stdout))
    }
}

/// A temporary brain repository.
pub struct Brain {
    pub dir: TempDir,
    pub now: String,
}

/// Environment shared by bsi and git runs: nothing from the user's machine.
pub fn clean_env(cmd: &mut Command, home: &Path) {
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("TZ", "UTC")
        .env("LANG", "C")
        .env("USER", "tester")
        .env("HOSTNAME", "box")
        // git's own housekeeping after a commit, fetch or receive (one more
        // process each, thousands over the suite) is not under test: bsi
        // turns it off for the git it runs, and so do the tests for theirs.
        .env("GIT_CONFIG_COUNT", "3")
        .env("GIT_CONFIG_KEY_0", "maintenance.auto")
        .env("GIT_CONFIG_VALUE_0", "false")
        .env("GIT_CONFIG_KEY_1", "gc.auto")
        .env("GIT_CONFIG_VALUE_1", "0")
        .env("GIT_CONFIG_KEY_2", "receive.autogc")
        .env("GIT_CONFIG_VALUE_2", "false");
}

/// Appends settings to a repository's `.git/config` as `git config` would
/// write them, without a `git` process per key.
pub fn add_config(git_dir: &Path, entries: &[(&str, &str, &str)]) {
    use std::fmt::Write as _;
    let mut text = String::new();
    for (section, key, value) in entries {
        let quoted = value.replace('\\', "\\\\").replace('"', "\\\"");
        writeln!(text, "[{section}]\n\t{key} = \"{quoted}\"").expect("string");
    }
    let path = git_dir.join("config");
    let mut config = fs::read_to_string(&path).expect("read .git/config");
    config.push_str(&text);
    fs::write(&path, config).expect("write .git/config");
}

impl Brain {
    /// An empty repository with an identity, no commit yet.
    pub fn bare_repo() -> Brain {
        let dir = scratch("bsi-test");
        let b = Brain {
            dir,
            now: NOW.to_string(),
        };
        b.git(&["init", "-q", "-b", "main"]);
        add_config(
            &b.path().join(".git"),
            &[
                ("user", "name", "Test Person"),
                ("user", "email", "test@example.com"),
                ("commit", "gpgsign", "false"),
            ],
        );
        b
    }

    /// A repository with a few files and an initialised registry.
    ///
    /// The first call in a test process builds it with git and `bsi init`;
    /// later calls copy that repository file by file (the same bytes,
    /// objects and refs, without the dozen processes each build costs).
    pub fn new() -> Brain {
        static TEMPLATE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
        let template = TEMPLATE.get_or_init(|| {
            let b = Brain::build();
            // Statics are never dropped: the template is kept under a name
            // of this process, and the next run removes it.
            let kept = b
                .path()
                .with_file_name(format!("bsi-template-{}", std::process::id()));
            let _ = fs::remove_dir_all(&kept);
            fs::rename(b.dir.keep(), &kept).expect("keep the template");
            sweep_templates(kept.parent().expect("parent"));
            kept
        });
        let dir = scratch("bsi-test");
        copy_tree(template, dir.path());
        Brain {
            dir,
            now: NOW.to_string(),
        }
    }

    /// What [`Brain::new`] copies.
    fn build() -> Brain {
        let b = Brain::bare_repo();
        b.write("agents/alice.md", "# Alice\n\nnotes\n");
        b.write("agents/bob.md", "# Bob\n");
        b.write(
            "projets/plan.md",
            "# Plan\n\nintro\n\n## Goals\n\ngoal text\n\n### Q1\n\nq1 text\n\n### Q2\n\nq2 text\n\n## Risks\n\nrisk text\n",
        );
        b.write("README.md", "# Brain\n");
        b.git(&["add", "-A"]);
        b.git(&["commit", "-q", "-m", "base"]);
        b.bsi(&["init"]).ok();
        b
    }

    /// A bare repository, `origin` of this brain, holding its `main` branch
    /// (pushed with upstream set): the remote of [`Brain::clone_of`].
    pub fn publish_to_bare(&self) -> TempDir {
        let bare = scratch("bsi-remote");
        let mut cmd = Command::new("git");
        clean_env(&mut cmd, bare.path());
        let r = Run::from_output(
            cmd.current_dir(bare.path())
                .args(["init", "-q", "--bare", "-b", "main"])
                .output()
                .expect("run git"),
        );
        assert_eq!(r.code, 0, "git init --bare: {}", r.stderr);
        // The remote's own housekeeping after a receive (git does not pass
        // the pushing side's settings to it).
        add_config(
            bare.path(),
            &[("receive", "autogc", "false"), ("gc", "auto", "0")],
        );
        let url = bare.path().to_str().expect("utf-8 path");
        self.git(&["remote", "add", "origin", url]);
        self.git(&["push", "-q", "-u", "origin", "main"]);
        if self
            .git_run(&["rev-parse", "--verify", "-q", REGISTRY_BRANCH])
            .code
            == 0
        {
            self.git(&["push", "-q", "origin", REGISTRY_BRANCH]);
        }
        bare
    }

    /// A clone of `remote`, as a second machine: its own identity, and the
    /// registry's merge driver pointing at the binary under test.
    pub fn clone_of(remote: &Path, who: &str) -> Brain {
        let dir = scratch("bsi-clone");
        let mut cmd = Command::new("git");
        clean_env(&mut cmd, dir.path());
        let r = Run::from_output(
            cmd.current_dir(dir.path())
                .arg("clone")
                .arg("-q")
                .arg(remote)
                .arg(dir.path())
                .output()
                .expect("run git"),
        );
        assert_eq!(r.code, 0, "git clone: {}", r.stderr);
        let b = Brain {
            dir,
            now: NOW.to_string(),
        };
        let driver = format!("{} merge-driver %O %A %B", bin().display());
        add_config(
            &b.path().join(".git"),
            &[
                ("user", "name", who),
                ("user", "email", &format!("{who}@example.com")),
                ("commit", "gpgsign", "false"),
                ("merge \"bsi\"", "driver", &driver),
            ],
        );
        b
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin());
        clean_env(&mut cmd, self.path());
        cmd.current_dir(self.path())
            .env("BSI_NOW", &self.now)
            .args(args);
        cmd
    }

    /// Runs bsi at the repository root.
    pub fn bsi(&self, args: &[&str]) -> Run {
        Run::from_output(self.command(args).output().expect("run bsi"))
    }

    /// Runs bsi with extra environment variables.
    pub fn bsi_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = self.command(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Run::from_output(cmd.output().expect("run bsi"))
    }

    /// Runs bsi in a subdirectory.
    pub fn bsi_in(&self, sub: &str, args: &[&str]) -> Run {
        let mut cmd = self.command(args);
        cmd.current_dir(self.path().join(sub));
        Run::from_output(cmd.output().expect("run bsi"))
    }

    /// Runs git in `dir` (another work tree of this repository, say), with
    /// `BSI_SESSION` set when `session` is.
    pub fn git_at(&self, dir: &Path, session: Option<&str>, args: &[&str]) -> Run {
        self.run_at(Command::new("git"), dir, session, args)
    }

    /// Runs bsi in `dir`, with `BSI_SESSION` set when `session` is.
    pub fn bsi_at(&self, dir: &Path, session: Option<&str>, args: &[&str]) -> Run {
        self.run_at(Command::new(bin()), dir, session, args)
    }

    fn run_at(&self, mut cmd: Command, dir: &Path, session: Option<&str>, args: &[&str]) -> Run {
        clean_env(&mut cmd, self.path());
        cmd.current_dir(dir).env("BSI_NOW", &self.now).args(args);
        if let Some(s) = session {
            cmd.env("BSI_SESSION", s);
        }
        Run::from_output(cmd.output().expect("run"))
    }

    /// Runs git and returns its stdout; panics when it fails.
    #[track_caller]
    pub fn git(&self, args: &[&str]) -> String {
        let r = self.git_run(args);
        assert_eq!(r.code, 0, "git {args:?} failed: {}", r.stderr);
        r.stdout
    }

    pub fn git_run(&self, args: &[&str]) -> Run {
        let mut cmd = Command::new("git");
        clean_env(&mut cmd, self.path());
        Run::from_output(
            cmd.current_dir(self.path())
                .args(args)
                .output()
                .expect("run git"),
        )
    }

    /// Runs git with `input` on its stdin and returns its stdout.
    #[track_caller]
    pub fn git_stdin(&self, args: &[&str], input: &str) -> String {
        use std::io::Write;
        let mut cmd = Command::new("git");
        clean_env(&mut cmd, self.path());
        let mut child = cmd
            .current_dir(self.path())
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run git");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
        let r = Run::from_output(child.wait_with_output().expect("wait git"));
        assert_eq!(r.code, 0, "git {args:?} failed: {}", r.stderr);
        r.stdout
    }

    /// Commits `text` as the registry on the registry branch by hand, with
    /// git's plumbing — what a person editing the branch would do.
    pub fn commit_registry(&self, text: &str, message: &str) {
        let blob = self.git_stdin(&["hash-object", "-w", "--stdin"], text);
        let tree = self.git_stdin(
            &["mktree"],
            &format!("100644 blob {}\tBRAIN-INDEX.md\n", blob.trim()),
        );
        let parent = self.git(&["rev-parse", REGISTRY_BRANCH]);
        let commit = self.git(&[
            "commit-tree",
            tree.trim(),
            "-p",
            parent.trim(),
            "-m",
            message,
        ]);
        self.git(&[
            "update-ref",
            &format!("refs/heads/{REGISTRY_BRANCH}"),
            commit.trim(),
        ]);
    }

    /// A linked work tree of this repository in a new temporary directory,
    /// at `name` inside it: on a new branch `new_branch`, or on an existing
    /// branch when `new_branch` is `None` and `name` is that branch. The
    /// directory lives as long as the returned `TempDir`.
    pub fn worktree(&self, name: &str, new_branch: Option<&str>) -> (TempDir, PathBuf) {
        let place = scratch("bsi-wt");
        let wt = place.path().join(name);
        let path = wt.to_str().expect("utf-8 path");
        match new_branch {
            Some(b) => self.git(&["worktree", "add", "-q", path, "-b", b]),
            None => self.git(&["worktree", "add", "-q", path, name]),
        };
        (place, wt)
    }

    pub fn write(&self, rel: &str, content: &str) {
        let p = self.path().join(rel);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, content).expect("write");
    }

    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.path().join(rel)).expect("read")
    }

    /// The repository, opened in this process: the read-back helpers below
    /// read objects and refs with libgit2 instead of starting a `git` for
    /// each (hundreds of them over the suite). What is read is the same
    /// repository bsi and git wrote.
    fn repo(&self) -> git2::Repository {
        git2::Repository::open(self.path()).expect("open the repository")
    }

    /// The commit a revision names (`brain-index`, `HEAD`, `origin/x`).
    fn commit_of<'r>(repo: &'r git2::Repository, rev: &str) -> Option<git2::Commit<'r>> {
        repo.revparse_single(rev).ok()?.peel_to_commit().ok()
    }

    /// The registry as committed on the local registry branch (on its
    /// remote-tracking copy in a clone that has not written yet).
    pub fn registry(&self) -> String {
        let repo = self.repo();
        let commit = Self::commit_of(&repo, REGISTRY_BRANCH)
            .or_else(|| Self::commit_of(&repo, &format!("origin/{REGISTRY_BRANCH}")))
            .expect("a registry branch");
        let entry = commit
            .tree()
            .expect("tree")
            .get_path(Path::new("BRAIN-INDEX.md"))
            .expect("BRAIN-INDEX.md on the registry branch");
        let blob = repo.find_blob(entry.id()).expect("blob");
        String::from_utf8_lossy(blob.content()).into_owned()
    }

    /// The work-tree copy of the registry, without its banner.
    pub fn registry_copy(&self) -> String {
        let text = self.read("BRAIN-INDEX.md");
        match text.split_once("-->\n") {
            Some((banner, rest)) if banner.starts_with("<!-- bsi:") => rest.to_string(),
            _ => text,
        }
    }

    /// Number of commits reachable from `rev`.
    fn count(&self, rev: &str) -> usize {
        let repo = self.repo();
        let mut walk = repo.revwalk().expect("revwalk");
        walk.push(Self::commit_of(&repo, rev).expect("a commit").id())
            .expect("push");
        walk.count()
    }

    /// Number of commits on the registry branch.
    pub fn commits(&self) -> usize {
        self.count(REGISTRY_BRANCH)
    }

    /// Number of commits on HEAD (the user's content branch).
    pub fn head_commits(&self) -> usize {
        self.count("HEAD")
    }

    /// The subject line of the commit `rev` names.
    fn subject(&self, rev: &str) -> String {
        let repo = self.repo();
        let commit = Self::commit_of(&repo, rev).expect("a commit");
        let summary = commit.summary_bytes().unwrap_or_default();
        String::from_utf8_lossy(summary).trim().to_string()
    }

    /// Subject of the last commit of the registry branch.
    pub fn last_subject(&self) -> String {
        self.subject(REGISTRY_BRANCH)
    }

    /// Subject of the last commit on HEAD.
    pub fn head_subject(&self) -> String {
        self.subject("HEAD")
    }

    /// Files changed by the last commit of the registry branch.
    pub fn last_files(&self) -> Vec<String> {
        let repo = self.repo();
        let commit = Self::commit_of(&repo, REGISTRY_BRANCH).expect("a commit");
        let new = commit.tree().expect("tree");
        let old = commit.parent(0).ok().map(|p| p.tree().expect("tree"));
        let diff = repo
            .diff_tree_to_tree(old.as_ref(), Some(&new), None)
            .expect("diff");
        diff.deltas()
            .filter_map(|d| d.new_file().path().or_else(|| d.old_file().path()))
            .map(|p| p.to_string_lossy().into_owned())
            .collect()
    }

    /// What a write command must leave as it was: HEAD, the index and the
    /// work tree (`git status`, the copy of the registry aside).
    pub fn user_state(&self) -> (String, String, String) {
        (
            self.git(&["rev-parse", "HEAD"]),
            self.git(&["status", "--porcelain", "--untracked-files=all"]),
            self.git(&["diff", "--cached", "--name-only"]),
        )
    }

    /// Rows of the registry's table under `heading` (body rows only).
    pub fn rows(&self, heading: &str) -> Vec<String> {
        let text = self.registry();
        let mut out = Vec::new();
        let mut inside = false;
        let mut seen_delim = false;
        for line in text.lines() {
            if line.starts_with("## ") {
                inside = line.trim_start_matches("## ").trim() == heading;
                seen_delim = false;
                continue;
            }
            if inside && line.starts_with('|') {
                if line.starts_with("|--") || line.starts_with("|-") {
                    seen_delim = true;
                } else if seen_delim {
                    out.push(line.to_string());
                }
            }
        }
        out
    }

    pub fn active(&self) -> Vec<String> {
        self.rows("Claims actifs")
    }

    pub fn stale(&self) -> Vec<String> {
        self.rows("Claims stale — contrôle requis")
    }

    pub fn history(&self) -> Vec<String> {
        self.rows("Historique")
    }

    /// `git status --porcelain`.
    pub fn status(&self) -> String {
        self.git(&["status", "--porcelain"])
    }
}

/// The directory of the snapshot files, relative to the package root (where
/// cargo runs the tests, and where the commands a failure prints are run).
pub const SNAPSHOTS: &str = "tests/snapshots";

/// The suffix of an output waiting for review beside its snapshot.
pub const PENDING: &str = ".new";

/// Compares `actual` with the file `tests/snapshots/<rel>`, byte for byte.
///
/// A snapshot is never rewritten by a test run. When the output differs
/// (or the snapshot does not exist yet), it is written beside the snapshot
/// as `<rel>.new` and the test fails, showing the difference and the two
/// commands of the review: `diff -u` to read it, `mv` to accept it. The
/// `.new` files are git-ignored; one left from an earlier run is
/// overwritten when the output still differs, and removed when it matches
/// again, so what lies beside a snapshot is always this run's output or
/// nothing (but for the snapshots of tests that did not run).
#[track_caller]
pub fn snapshot(rel: &str, actual: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(SNAPSHOTS);
    if let Err(why) = check_snapshot(&dir, SNAPSHOTS, rel, actual) {
        panic!("{why}");
    }
}

/// [`snapshot`] for the snapshots in `dir`, which a failure names `shown`:
/// `Err` holds the failure's text.
pub fn check_snapshot(dir: &Path, shown: &str, rel: &str, actual: &str) -> Result<(), String> {
    let path = dir.join(rel);
    let pending = dir.join(format!("{rel}{PENDING}"));
    let expected = match fs::read_to_string(&path) {
        Ok(text) if text == actual => {
            // A leftover of a run whose output differed: out of date now.
            match fs::remove_file(&pending) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("cannot remove {shown}/{rel}{PENDING}: {e}")),
            }
            return Ok(());
        }
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {shown}/{rel}: {e}")),
    };
    let (old, new) = (format!("{shown}/{rel}"), format!("{shown}/{rel}{PENDING}"));
    let wrote = fs::create_dir_all(pending.parent().expect("parent"))
        .and_then(|()| fs::write(&pending, actual));
    let mut why = match &expected {
        Some(expected) => format!(
            "snapshot {old} differs (- snapshot, + this run):\n{}",
            line_diff(expected, actual)
        ),
        None => format!("no snapshot {old}; this run's output:\n{actual}"),
    };
    match wrote {
        Ok(()) => {
            why.push_str(&format!("\nthis run's output is in {new}\n"));
            if expected.is_some() {
                why.push_str(&format!("  review: diff -u {old} {new}\n"));
            }
            why.push_str(&format!("  accept: mv {new} {old}\n"));
        }
        Err(e) => why.push_str(&format!("\n(cannot write {new}: {e})\n")),
    }
    Err(why)
}

/// The lines that differ between `old` and `new`, each change with two
/// lines of context: `-` lines of `old`, `+` lines of `new`, after an
/// `@@ line N` giving where the hunk starts in `old`.
pub fn line_diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = edit_script(&a, &b);
    const CONTEXT: usize = 2;
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k].0 != ' ').collect();
    let near = |k: usize| {
        changed
            .iter()
            .any(|&c| k + CONTEXT >= c && k <= c + CONTEXT)
    };
    let mut out = String::new();
    let mut shown_last = false;
    for (k, (kind, line, text)) in ops.iter().enumerate() {
        if !near(k) {
            shown_last = false;
            continue;
        }
        if !shown_last {
            out.push_str(&format!("@@ line {}\n", line + 1));
        }
        shown_last = true;
        out.push(*kind);
        if let Some(t) = text.strip_suffix('\n') {
            out.push_str(t);
            out.push('\n');
        } else {
            out.push_str(text);
            out.push_str("  [no newline at the end]\n");
        }
    }
    out
}

/// The edit from `a` to `b`: `(kind, index in a, line)` with kind ` `
/// (kept), `-` or `+`. Minimal (a longest common subsequence) between the
/// common head and tail, unless that middle is too large to compare line
/// by line: then all of it is removed and added.
fn edit_script<'t>(a: &[&'t str], b: &[&'t str]) -> Vec<(char, usize, &'t str)> {
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut ops: Vec<(char, usize, &str)> = (0..head).map(|i| (' ', i, a[i])).collect();
    let (n, m) = (ma.len(), mb.len());
    if (n + 1).saturating_mul(m + 1) > 4_000_000 {
        ops.extend(ma.iter().enumerate().map(|(i, t)| ('-', head + i, *t)));
        ops.extend(mb.iter().map(|t| ('+', head + n, *t)));
    } else {
        let at = |i: usize, j: usize| i * (m + 1) + j;
        let mut lcs = vec![0u32; (n + 1) * (m + 1)];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[at(i, j)] = if ma[i] == mb[j] {
                    lcs[at(i + 1, j + 1)] + 1
                } else {
                    lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && ma[i] == mb[j] {
                ops.push((' ', head + i, ma[i]));
                (i, j) = (i + 1, j + 1);
            } else if i < n && (j == m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
                ops.push(('-', head + i, ma[i]));
                i += 1;
            } else {
                ops.push(('+', head + i, mb[j]));
                j += 1;
            }
        }
    }
    let end = a.len() - tail;
    ops.extend((end..a.len()).map(|i| (' ', i, a[i])));
    ops
}

/// Runs `cmd` with `input` on its stdin.
pub fn output_with_stdin(cmd: &mut Command, input: &str) -> Run {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run");
    // A program may exit before it reads its input (a command line it
    // cannot read): the pipe is then closed, which is no failure.
    let wrote = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes());
    if let Err(e) = wrote {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    Run::from_output(child.wait_with_output().expect("wait"))
}

/// Session sess-hold (agent h) claims `projets/plan.md` in `b`: the file
/// the queue tests' waiters queue for.
pub(crate) fn hold_plan(b: &Brain) {
    b.bsi(&[
        "open",
        "projets/plan.md",
        "--session",
        "sess-hold",
        "--agent",
        "h",
    ])
    .ok();
}
