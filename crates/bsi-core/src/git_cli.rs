//! The only module that runs the system `git` command: fetching and pushing
//! the registry branch (so SSH keys, credential helpers and
//! `GIT_SSH_COMMAND` work as they do for git itself), git's own line
//! merge for the merge driver's fallback, and what libgit2 cannot read in
//! some repositories: an index with a split or sparse index extension, and
//! the objects a partial clone fetches when they are first read.
//!
//! Commands are argument lists, never shell strings. Every git runs with
//! `LC_ALL=C`, so what bsi reads of its output is the same in every locale,
//! and a push's outcome is read from its `--porcelain` status line only.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// The remote that holds the brain's registry branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// The remote's name (`origin`).
    pub name: String,
    /// The registry branch on that remote (`brain-index`).
    pub branch: String,
}

/// How a push ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Push {
    /// The remote branch now points to the commit.
    Pushed,
    /// Another push landed first: fetch and try again.
    Lost,
    /// The remote refused the push for a reason of its own (a hook, a
    /// protected branch): what it said.
    Refused(String),
    /// The remote answered and denied access: credentials it wants and git
    /// may not ask for, or not allowed (HTTP 401/403, an SSH key refused).
    Denied(String),
    /// The remote could not be reached: what git said.
    Unreachable(String),
}

/// How a fetch ended, when it did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchError {
    /// The remote could not be reached (or answered with an error): what git said.
    Unreachable(String),
    /// The remote was reachable but has no registry branch.
    NoBranch,
    /// The remote answered and denied access (see [`Push::Denied`]).
    Denied(String),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Unreachable(why) => f.write_str(why),
            FetchError::NoBranch => f.write_str("the remote has no registry branch"),
            FetchError::Denied(why) => f.write_str(why),
        }
    }
}

impl Remote {
    /// The remote-tracking reference of the registry branch.
    pub fn tracking_ref(&self) -> String {
        format!("refs/remotes/{}/{}", self.name, self.branch)
    }

    /// `remote/branch`, for messages.
    pub fn label(&self) -> String {
        format!("{}/{}", self.name, self.branch)
    }

    /// The fetch refspec that brings the registry branch into its
    /// remote-tracking reference.
    pub fn refspec(&self) -> String {
        format!("+refs/heads/{}:{}", self.branch, self.tracking_ref())
    }

    /// Whether a `git fetch` of this remote with these refspecs
    /// (`remote.<name>.fetch`) brings the registry branch into its
    /// remote-tracking reference: not in a single-branch clone (what
    /// `git clone --depth` makes), whose one refspec names its one branch.
    /// Pure.
    pub fn fetched_by(&self, refspecs: &[String]) -> bool {
        let src = format!("refs/heads/{}", self.branch);
        let dst = self.tracking_ref();
        let glob = |pattern: &str, name: &str| -> Option<String> {
            match pattern.split_once('*') {
                None => (pattern == name).then(String::new),
                Some((pre, post)) => name
                    .strip_prefix(pre)
                    .and_then(|rest| rest.strip_suffix(post))
                    .map(str::to_string),
            }
        };
        let excluded = refspecs
            .iter()
            .filter_map(|r| r.trim().strip_prefix('^'))
            .any(|neg| glob(neg, &src).is_some());
        !excluded
            && refspecs.iter().any(|r| {
                let r = r.trim().trim_start_matches('+');
                let Some((from, to)) = r.split_once(':') else {
                    return false;
                };
                match glob(from, &src) {
                    Some(star) if from.contains('*') => to.replacen('*', &star, 1) == dst,
                    Some(_) => to == dst,
                    None => false,
                }
            })
    }

    /// Fetches the registry branch alone into its remote-tracking reference,
    /// within `timeout`. Nothing else of the repository is touched: no
    /// other branch, no `FETCH_HEAD`, no automatic maintenance.
    pub fn fetch(&self, repo: &Path, timeout: Duration) -> Result<(), FetchError> {
        self.fetch_refs(repo, timeout, false)
    }

    /// [`Remote::fetch`], with the write requests other clones posted
    /// ([`REQUESTS`]): the local copies of requests gone from the remote
    /// are pruned.
    pub fn fetch_with_requests(&self, repo: &Path, timeout: Duration) -> Result<(), FetchError> {
        self.fetch_refs(repo, timeout, true)
    }

    fn fetch_refs(&self, repo: &Path, timeout: Duration, requests: bool) -> Result<(), FetchError> {
        let refspec = format!("+refs/heads/{}:{}", self.branch, self.tracking_ref());
        let mut cmd = git(repo);
        cmd.args([
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-recurse-submodules",
        ]);
        if requests {
            cmd.arg("--prune");
        }
        // The places other clones keep alive come with the registry: one
        // more refspec, no round trip of its own.
        cmd.args(["--", &self.name, &refspec, &self.alive_refspec()]);
        if requests {
            cmd.arg(format!("+{REQUESTS}*:{}*", self.requests_ref("")));
        }
        let out = run(cmd, timeout).map_err(FetchError::Unreachable)?;
        if out.success {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("couldn't find remote ref") {
            return Err(FetchError::NoBranch);
        }
        if let Some(words) = denial(&stderr) {
            return Err(FetchError::Denied(words));
        }
        Err(FetchError::Unreachable(last_line(&out.stderr)))
    }

    /// Pushes `commit` (a child of the last fetched tip, or a first commit)
    /// to the registry branch. Git refuses a push that does not
    /// fast-forward the branch: that refusal is the compare-and-swap that
    /// orders registry changes.
    pub fn push(&self, repo: &Path, commit: impl std::fmt::Display, timeout: Duration) -> Push {
        self.push_with(repo, commit, Posting::None, timeout).0
    }

    /// [`Remote::push`], with the write requests of [`Posting`]. The
    /// push's outcome, and whether a post landed.
    pub fn push_with(
        &self,
        repo: &Path,
        commit: impl std::fmt::Display,
        posting: Posting<'_>,
        timeout: Duration,
    ) -> (Push, bool) {
        let target = format!("refs/heads/{}", self.branch);
        let mut cmd = git(repo);
        cmd.args(["push", "--porcelain", "--no-verify"]);
        let mut post_ref = None;
        let mut refspecs = vec![format!("{commit}:{target}")];
        match posting {
            Posting::None => {}
            Posting::Post(id, request) => {
                let to = format!("{REQUESTS}{id}");
                refspecs.push(format!("+{request}:{to}"));
                post_ref = Some(to);
            }
            Posting::Take(taken) => {
                if !taken.is_empty() {
                    cmd.arg("--atomic");
                }
                refspecs.extend(leased_deletions(&mut cmd, taken));
            }
        }
        cmd.args(["--", &self.name]).args(refspecs);
        match run(cmd, timeout) {
            Ok(out) => {
                let stdout = String::from_utf8_lossy(&out.stdout);
                let posted = post_ref
                    .is_some_and(|to| matches!(push_outcome(&stdout, "", &to), Push::Pushed));
                (
                    push_outcome(&stdout, &String::from_utf8_lossy(&out.stderr), &target),
                    posted,
                )
            }
            Err(why) => (Push::Unreachable(why), false),
        }
    }

    /// Replaces the post of clone `id`, from commit `old` to `new` (the same
    /// requests with a lease renewed), only while it still holds `old`: a
    /// post another writer took is not put back. Whether it was replaced.
    pub fn renew(
        &self,
        repo: &Path,
        id: &str,
        (old, new): (&str, &str),
        timeout: Duration,
    ) -> bool {
        let to = format!("{REQUESTS}{id}");
        let mut cmd = git(repo);
        cmd.args(["push", "--porcelain", "--no-verify"])
            .arg(format!("--force-with-lease={to}:{old}"))
            .args(["--", &self.name])
            .arg(format!("{new}:{to}"));
        run(cmd, timeout).is_ok_and(|out| {
            push_outcome(&String::from_utf8_lossy(&out.stdout), "", &to) == Push::Pushed
        })
    }

    /// Withdraws posted write requests (id, commit), each deleted only if
    /// it still holds that commit. The ids that could not be withdrawn:
    /// carried out (or withdrawn) already, or the remote did not answer.
    pub fn withdraw(
        &self,
        repo: &Path,
        requests: &[(String, String)],
        timeout: Duration,
    ) -> Vec<String> {
        if requests.is_empty() {
            return Vec::new();
        }
        let mut cmd = git(repo);
        cmd.args(["push", "--porcelain", "--no-verify"]);
        let deletions = leased_deletions(&mut cmd, requests);
        cmd.args(["--", &self.name]).args(deletions);
        let stdout = run(cmd, timeout)
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        requests
            .iter()
            .filter(|(id, _)| push_outcome(&stdout, "", &format!("{REQUESTS}{id}")) != Push::Pushed)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The local copy of the record of places clone `id` keeps alive on
    /// the remote (see `store::alive`).
    pub fn alive_ref(&self, id: &str) -> String {
        format!("refs/bsi/alive-seen/{}/{id}", self.name)
    }

    /// The fetch refspec of the records of places kept alive.
    fn alive_refspec(&self) -> String {
        format!("+{ALIVE}*:{}*", self.alive_ref(""))
    }

    /// Pushes `commit`, this clone's record of the places its waiters keep
    /// alive, forced to its own reference on the remote (clone `id`): no
    /// other writer writes it, so nothing is raced. Whether it landed.
    pub fn push_alive(
        &self,
        repo: &Path,
        commit: impl std::fmt::Display,
        id: &str,
        timeout: Duration,
    ) -> bool {
        let to = format!("{ALIVE}{id}");
        let mut cmd = git(repo);
        cmd.args(["push", "--porcelain", "--no-verify", "--", &self.name])
            .arg(format!("+{commit}:{to}"));
        run(cmd, timeout).is_ok_and(|out| {
            push_outcome(&String::from_utf8_lossy(&out.stdout), "", &to) == Push::Pushed
        })
    }

    /// The local copy of the remote's posted request `id`.
    pub fn requests_ref(&self, id: &str) -> String {
        format!("refs/bsi/posted/{}/{id}", self.name)
    }
}

/// Deletes the posted requests (each clone's id, and the commit it must
/// still be at) in a push: the leases go on `cmd` as options, the deleting
/// refspecs are returned, to follow the remote's name.
fn leased_deletions(cmd: &mut Command, requests: &[(String, String)]) -> Vec<String> {
    requests
        .iter()
        .map(|(id, seen)| {
            cmd.arg(format!("--force-with-lease={REQUESTS}{id}:{seen}"));
            format!(":{REQUESTS}{id}")
        })
        .collect()
}

/// Where write requests are posted on a remote: one reference per clone
/// (`<id>`), a commit whose tree holds the requests of its last write that
/// lost a race, and whose parent is the registry they were planned on.
pub(crate) const REQUESTS: &str = "refs/bsi/requests/";

/// Where each clone keeps alive, on the remote, the places of its waiters
/// in the queue: one reference per clone (`<id>`), forced by that clone
/// alone.
pub(crate) const ALIVE: &str = "refs/bsi/alive/";

/// What a push of the registry branch does with posted write requests.
#[derive(Debug, Clone, Copy)]
pub enum Posting<'a> {
    /// Nothing.
    None,
    /// Posts the requests the push writes (the clone's id, the request
    /// commit) in the same push, whether or not the branch moves: if this
    /// push loses its race, the writer that wins the next one may carry
    /// them out.
    Post(&'a str, &'a str),
    /// Takes the posted requests (each clone's id, and the commit it was
    /// seen at) off the remote in the same atomic push: the branch moves
    /// and every one of them is deleted, or nothing changes. A request
    /// taken or withdrawn meanwhile fails the push like a lost race, so
    /// none is decided by two writers.
    Take(&'a [(String, String)]),
}

/// Reads a push's outcome from its `--porcelain` output: the status line of
/// the ref `target` (`<flag>\t<from>:<to>\t<summary>`). Without such a
/// line git never spoke to the remote. Pure.
pub(crate) fn push_outcome(stdout: &str, stderr: &str, target: &str) -> Push {
    let to = format!(":{target}\t");
    let Some(line) = stdout
        .lines()
        .find(|l| l.len() > 2 && l.as_bytes()[1] == b'\t' && l.contains(&to))
    else {
        return match denial(stderr) {
            Some(words) => Push::Denied(words),
            None => Push::Unreachable(last_line(stderr.as_bytes())),
        };
    };
    let flag = line.as_bytes()[0];
    let summary = line.splitn(3, '\t').nth(2).unwrap_or("").trim();
    match flag {
        // `-`: deleted, as the push asked.
        b' ' | b'*' | b'+' | b'=' | b'-' => Push::Pushed,
        _ => {
            // `[rejected] (fetch first)` / `(non-fast-forward)`: another
            // push landed first. A remote that lost a race on its own ref
            // lock says so in a `[remote rejected]` reason.
            // In an atomic push, a request another writer took first
            // (`stale info`) fails it all: a lost race too.
            let lost = summary.starts_with("[rejected]")
                || (summary.starts_with("[remote rejected]")
                    && [
                        "cannot lock ref",
                        "failed to update ref",
                        "incorrect old value",
                        "atomic",
                    ]
                    .iter()
                    .any(|w| summary.contains(w)));
            if lost {
                Push::Lost
            } else {
                let said: Vec<&str> = stderr
                    .lines()
                    .filter_map(|l| l.strip_prefix("remote:"))
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .collect();
                Push::Refused(if said.is_empty() {
                    summary.to_string()
                } else {
                    format!("{summary}: {}", said.join(" / "))
                })
            }
        }
    }
}

/// What git (under `LC_ALL=C`) says when the remote answered and denied
/// access — an HTTP 401 or 403, credentials it wants and may not prompt
/// for, a password or key the server refused — as the remote's words and
/// git's: `None` when git's words say nothing of the kind. Pure.
pub(crate) fn denial(stderr: &str) -> Option<String> {
    const SIGNS: &[&str] = &[
        "The requested URL returned error: 401",
        "The requested URL returned error: 403",
        "could not read Username for",
        "could not read Password for",
        "Authentication failed for",
        "Permission denied (",
        "Permission denied, please try again",
    ];
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if !lines.iter().any(|l| SIGNS.iter().any(|s| l.contains(s))) {
        return None;
    }
    // The remote's own words first, then git's verdict.
    let said: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("remote:").map(str::trim))
        .filter(|l| !l.is_empty())
        .collect();
    let verdict = lines
        .iter()
        .find(|l| SIGNS.iter().any(|s| l.contains(s)) && l.starts_with("fatal:"))
        .or_else(|| lines.iter().find(|l| SIGNS.iter().any(|s| l.contains(s))))
        .copied()
        .unwrap_or_default();
    let mut words: Vec<&str> = said;
    if !words.contains(&verdict) {
        words.push(verdict);
    }
    Some(words.join(" / "))
}

/// git's own three-way line merge of three files, written into `ours` with
/// conflict markers where the sides disagree, run in `dir`. Returns whether
/// it was clean.
pub fn merge_file(dir: &Path, ours: &Path, base: &Path, theirs: &Path) -> Result<bool> {
    let mut cmd = git(dir);
    cmd.args([
        "merge-file",
        "-L",
        "ours",
        "-L",
        "base",
        "-L",
        "theirs",
        "--",
    ])
    .arg(ours)
    .arg(base)
    .arg(theirs)
    .stdout(Stdio::null());
    let out = run(cmd, Duration::from_secs(60)).map_err(|why| Error::GitFailed {
        command: "git merge-file".into(),
        stderr: why,
    })?;
    match out.code {
        Some(0) => Ok(true),
        Some(n) if n > 0 && n < 128 => Ok(false),
        _ => Err(Error::GitFailed {
            command: "git merge-file".into(),
            stderr: last_line(&out.stderr),
        }),
    }
}

/// How long git may take to read what libgit2 cannot: an index, or an
/// object a partial clone fetches from its promisor remote on first read.
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// One changed path of `git diff --raw`: modes and object ids (hex; all
/// zeros for a side that has none or is read from the work tree), git's
/// status letter, and the path with `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawChange {
    /// The mode on the old side (`0` when added).
    pub old_mode: u32,
    /// The mode on the new side (`0` when deleted).
    pub new_mode: u32,
    /// The old side's object id.
    pub old_id: String,
    /// The new side's object id.
    pub new_id: String,
    /// `A`, `D`, `M`, `T`…
    pub status: char,
    /// The path from the work tree root.
    pub path: String,
}

/// What git says has changed, for a repository whose index libgit2 cannot
/// read (a split or sparse index): `--cached` compares the index
/// (`index_file`, else the repository's) with `base`; without it, the work
/// tree with `base`. Submodules and renames are left out, as bsi's own
/// reading leaves them.
pub(crate) fn diff_raw(
    workdir: &Path,
    cached: bool,
    base: Option<&str>,
    index_file: Option<&Path>,
) -> Result<Vec<RawChange>> {
    let mut cmd = git(workdir);
    if let Some(f) = index_file {
        cmd.env("GIT_INDEX_FILE", f);
    }
    cmd.args([
        "--no-optional-locks",
        "diff",
        "--raw",
        "-z",
        "--no-abbrev",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=all",
    ]);
    if cached {
        cmd.arg("--cached");
    }
    if let Some(b) = base {
        cmd.arg(b);
    }
    cmd.arg("--");
    let out = read(cmd, "git diff --raw")?;
    parse_raw(&out).ok_or_else(|| Error::GitFailed {
        command: "git diff --raw".into(),
        stderr: "git's output could not be read".into(),
    })
}

/// Reads `git diff --raw -z` output. Pure.
pub(crate) fn parse_raw(out: &[u8]) -> Option<Vec<RawChange>> {
    let mut parts = out.split(|&b| b == 0);
    let mut changes = Vec::new();
    while let Some(meta) = parts.next() {
        if meta.is_empty() {
            continue;
        }
        let meta = std::str::from_utf8(meta).ok()?.strip_prefix(':')?;
        let f: Vec<&str> = meta.split(' ').collect();
        let [old_mode, new_mode, old_id, new_id, status] = f.as_slice() else {
            return None;
        };
        let path = String::from_utf8_lossy(parts.next()?).into_owned();
        changes.push(RawChange {
            old_mode: u32::from_str_radix(old_mode, 8).ok()?,
            new_mode: u32::from_str_radix(new_mode, 8).ok()?,
            old_id: (*old_id).to_string(),
            new_id: (*new_id).to_string(),
            status: status.chars().next()?,
            path,
        });
    }
    Some(changes)
}

/// The untracked files of the work tree that git does not ignore, with `/`.
pub(crate) fn untracked(workdir: &Path) -> Result<Vec<String>> {
    let mut cmd = git(workdir);
    cmd.args([
        "--no-optional-locks",
        "ls-files",
        "-z",
        "--others",
        "--exclude-standard",
    ]);
    let out = read(cmd, "git ls-files --others")?;
    Ok(out
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect())
}

/// Whether the index holds `rel` (a path from the work tree root).
pub(crate) fn in_index(workdir: &Path, rel: &str) -> Result<bool> {
    let mut cmd = git(workdir);
    cmd.args(["--no-optional-locks", "ls-files", "-z", "--"])
        .arg(format!(":(literal){rel}"));
    Ok(!read(cmd, "git ls-files")?.is_empty())
}

/// The blob id the index holds for `rel` (stage 0), in hex; `None` when
/// the index does not have it.
pub(crate) fn index_blob(workdir: &Path, rel: &str) -> Result<Option<String>> {
    let mut cmd = git(workdir);
    cmd.args(["--no-optional-locks", "ls-files", "-s", "-z", "--"])
        .arg(format!(":(literal){rel}"));
    let out = read(cmd, "git ls-files -s")?;
    let out = String::from_utf8_lossy(&out);
    // `MODE SP ID SP STAGE TAB PATH NUL`, stage 0 only.
    Ok(out
        .split('\0')
        .filter_map(|entry| entry.split_once('\t'))
        .map(|(head, _)| head.split(' ').collect::<Vec<_>>())
        .find(|f| f.get(2) == Some(&"0"))
        .and_then(|f| f.get(1).map(ToString::to_string)))
}

/// How long `git commit` may take, the user's own hooks included.
pub(crate) const COMMIT_TIMEOUT: Duration = Duration::from_secs(600);

/// One entry of an index to set: a blob at a path (with its mode), or the
/// path removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexEntry {
    /// From the work tree root, with `/`.
    pub path: String,
    /// `(mode, blob id)`; `None`: removed.
    pub blob: Option<(u32, String)>,
}

/// Fills the index file `index` (`None`: the work tree's own) from `tree`
/// (`None`: empty), for a commit of chosen entries.
pub(crate) fn read_tree(workdir: &Path, index: &Path, tree: Option<&str>) -> Result<()> {
    let mut cmd = git(workdir);
    cmd.env("GIT_INDEX_FILE", index).arg("read-tree");
    match tree {
        Some(t) => cmd.arg(t),
        None => cmd.arg("--empty"),
    };
    read(cmd, "git read-tree").map(|_| ())
}

/// Sets `entries` in the index file `index` (`None`: the work tree's own
/// index), every other entry left as it is.
pub(crate) fn update_index(
    workdir: &Path,
    index: Option<&Path>,
    entries: &[IndexEntry],
) -> Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    let mut cmd = git(workdir);
    if let Some(i) = index {
        cmd.env("GIT_INDEX_FILE", i);
    }
    cmd.args(["update-index", "--add"]);
    for e in entries {
        match &e.blob {
            Some((mode, id)) => cmd
                .arg("--cacheinfo")
                .arg(format!("{mode:o},{id},{}", e.path)),
            None => cmd.arg("--force-remove").arg(&e.path),
        };
    }
    read(cmd, "git update-index").map(|_| ())
}

/// `git commit -m MESSAGE` of the index file `index`, the hooks run with
/// `env` (the session), within [`COMMIT_TIMEOUT`]: the new commit's id, or
/// what git (or a hook) said when it refused.
pub(crate) fn commit_index(
    workdir: &Path,
    index: &Path,
    message: &str,
    env: &[(&str, &str)],
) -> Result<String> {
    let mut cmd = git(workdir);
    cmd.env("GIT_INDEX_FILE", index)
        .env("GIT_EDITOR", ":")
        .args(["commit", "-q", "-m", message]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run(cmd, COMMIT_TIMEOUT).map_err(|why| Error::GitFailed {
        command: "git commit".into(),
        stderr: why,
    })?;
    if !out.success {
        let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
        let said = if said.is_empty() {
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        } else {
            said
        };
        return Err(Error::GitFailed {
            command: "git commit".into(),
            stderr: said,
        });
    }
    let mut head = git(workdir);
    head.args(["rev-parse", "HEAD"]);
    Ok(String::from_utf8_lossy(&read(head, "git rev-parse HEAD")?)
        .trim()
        .to_string())
}

/// Removes `rel` from the index, the work tree untouched.
pub(crate) fn remove_from_index(workdir: &Path, rel: &str) -> Result<()> {
    let mut cmd = git(workdir);
    cmd.args(["rm", "--cached", "--quiet", "--ignore-unmatch", "--"])
        .arg(format!(":(literal){rel}"));
    read(cmd, "git rm --cached").map(|_| ())
}

/// The content of the object `what` names (`<id>`, or `<commit>:<path>`)
/// as a blob, read by git: in a partial clone git fetches it from the
/// promisor remote when it is missing, within [`READ_TIMEOUT`]. `None` when
/// `<commit>:<path>` names no file.
pub(crate) fn cat_blob(workdir: &Path, what: &str) -> Result<Option<Vec<u8>>> {
    let mut cmd = git(workdir);
    cmd.args(["cat-file", "blob", what]);
    let command = format!("git cat-file blob {what}");
    let out = run(cmd, READ_TIMEOUT).map_err(|why| Error::GitFailed {
        command: command.clone(),
        stderr: why,
    })?;
    if out.success {
        return Ok(Some(out.stdout));
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    if what.contains(':')
        && (stderr.contains("does not exist") || stderr.contains("exists on disk, but not in"))
    {
        return Ok(None);
    }
    Err(Error::GitFailed {
        command,
        stderr: last_line(&out.stderr),
    })
}

/// Runs a git that reads, within [`READ_TIMEOUT`]: its stdout, or what it
/// said when it failed.
fn read(cmd: Command, what: &str) -> Result<Vec<u8>> {
    let out = run(cmd, READ_TIMEOUT).map_err(|why| Error::GitFailed {
        command: what.into(),
        stderr: why,
    })?;
    if out.success {
        Ok(out.stdout)
    } else {
        Err(Error::GitFailed {
            command: what.into(),
            stderr: last_line(&out.stderr),
        })
    }
}

fn git(repo: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(repo)
        .args(["-c", "maintenance.auto=false", "-c", "gc.auto=0"])
        .env("LC_ALL", "C")
        .env("LANGUAGE", "C")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_INDEX_FILE")
        .stdin(Stdio::null());
    cmd
}

struct Output {
    success: bool,
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Runs `cmd` to its end or until `timeout`, when it is killed with every
/// process it started (over SSH, git's `ssh` would otherwise outlive it).
/// Its output is read on threads of its own, so a chatty git never blocks.
///
/// git stays in bsi's process group: a Ctrl-C, or whatever kills bsi with
/// its group, ends the git it runs too, as git's own `ssh` ends with git.
fn run(mut cmd: Command, timeout: Duration) -> Result<Output, String> {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("cannot run git: {e}"))?;
    let (closed, pipes_closed) = std::sync::mpsc::channel();
    let stdout = drain(child.stdout.take(), closed.clone());
    let stderr = drain(child.stderr.take(), closed);
    // git closes its output as it ends: waiting for that, rather than
    // polling for its exit, hears the end at once.
    let start = Instant::now();
    let mut open = 2;
    while open > 0 && start.elapsed() < timeout {
        match pipes_closed.recv_timeout(Duration::from_millis(10)) {
            Ok(()) => open -= 1,
            // A process git started may keep them open after git ended.
            Err(_) if matches!(child.try_wait(), Ok(Some(_))) => break,
            Err(_) => {}
        }
    }
    let status = wait_until(&mut child, timeout.saturating_sub(start.elapsed()));
    let collect = |h: Option<std::thread::JoinHandle<Vec<u8>>>| {
        h.and_then(|h| h.join().ok()).unwrap_or_default()
    };
    if let Some(status) = status {
        Ok(Output {
            success: status.success(),
            code: status.code(),
            stdout: collect(stdout),
            stderr: collect(stderr),
        })
    } else {
        kill_tree(&mut child);
        Err(format!("git gave no answer within {} s", seconds(timeout)))
    }
}

/// A duration in seconds, to a tenth (`3`, `2.5`), for messages.
fn seconds(d: Duration) -> String {
    let tenths = (d.as_millis() + 50) / 100;
    if tenths.is_multiple_of(10) {
        format!("{}", tenths / 10)
    } else {
        format!("{}.{}", tenths / 10, tenths % 10)
    }
}

/// Kills `child` and every process descended from it, and reaps it. The
/// tree is frozen first (stopped processes cannot start others), then
/// killed whole. Where the process table cannot be read, `child` alone.
fn kill_tree(child: &mut Child) {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, Signal, kill_process};
        let signal = |pid: u32, sig| {
            if let Some(p) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
                let _ = kill_process(p, sig);
            }
        };
        let root = child.id();
        signal(root, Signal::STOP);
        let mut tree = vec![root];
        for _ in 0..16 {
            let new: Vec<u32> = crate::platform::descendants(root)
                .into_iter()
                .filter(|p| !tree.contains(p))
                .collect();
            if new.is_empty() {
                break;
            }
            for &p in &new {
                signal(p, Signal::STOP);
            }
            tree.extend(new);
        }
        for &p in &tree {
            signal(p, Signal::KILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Reads `pipe` to its end on a thread of its own, and says so on `closed`.
fn drain<R: Read + Send + 'static>(
    pipe: Option<R>,
    closed: std::sync::mpsc::Sender<()>,
) -> Option<std::thread::JoinHandle<Vec<u8>>> {
    pipe.map(|mut p| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = p.read_to_end(&mut buf);
            let _ = closed.send(());
            buf
        })
    })
}

fn wait_until(child: &mut Child, timeout: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    let mut pause = Duration::from_micros(500);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if start.elapsed() >= timeout => return None,
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(10));
            }
            Err(_) => return None,
        }
    }
}

fn last_line(stderr: &[u8]) -> String {
    let s = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = s.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let pick = lines
        .iter()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or(lines.last());
    pick.map_or_else(
        || "git failed without a message".into(),
        std::string::ToString::to_string,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_said_to_a_tenth() {
        assert_eq!(seconds(Duration::from_secs(1)), "1");
        assert_eq!(seconds(Duration::from_micros(2_999_978)), "3");
        assert_eq!(seconds(Duration::from_millis(2_500)), "2.5");
        assert_eq!(seconds(Duration::from_millis(700)), "0.7");
    }

    const BRANCH: &str = "refs/heads/brain-index";

    #[test]
    fn a_push_is_read_from_its_porcelain_line() {
        let ok = "To /srv/brain.git\n*\tabc:refs/heads/brain-index\t[new branch]\nDone\n";
        assert_eq!(push_outcome(ok, "", BRANCH), Push::Pushed);
        let ff = "To x\n \tabc:refs/heads/brain-index\t1111..2222\nDone\n";
        assert_eq!(push_outcome(ff, "", BRANCH), Push::Pushed);
        let lost = "To x\n!\tabc:refs/heads/brain-index\t[rejected] (fetch first)\nDone\n";
        assert_eq!(
            push_outcome(lost, "error: failed to push", BRANCH),
            Push::Lost
        );
        let nff = "To x\n!\tabc:refs/heads/brain-index\t[rejected] (non-fast-forward)\n";
        assert_eq!(push_outcome(nff, "", BRANCH), Push::Lost);
        let race = "To x\n!\tabc:refs/heads/brain-index\t[remote rejected] (cannot lock ref 'refs/heads/brain-index': is at 1 but expected 2)\n";
        assert_eq!(push_outcome(race, "", BRANCH), Push::Lost);
    }

    #[test]
    fn an_atomic_push_is_read_from_the_registry_branchs_line() {
        // git 2.47's words, for a push taking posted requests.
        let ok = "To /srv/brain.git\n-\t:refs/bsi/requests/r1\t[deleted]\n \te0ee977:refs/heads/brain-index\t38bee09..e0ee977\nDone\n";
        assert_eq!(push_outcome(ok, "", BRANCH), Push::Pushed);
        let taken = "To /srv/brain.git\n!\t1033080:refs/heads/brain-index\t[rejected] (atomic push failed)\n!\t(delete):refs/bsi/requests/r1\t[rejected] (stale info)\nDone\n";
        assert_eq!(
            push_outcome(taken, "error: atomic push failed", BRANCH),
            Push::Lost
        );
        let lost = "To /srv/brain.git\n!\t(delete):refs/bsi/requests/r2\t[rejected] (atomic push failed)\n!\tHEAD:refs/heads/brain-index\t[rejected] (non-fast-forward)\nDone\n";
        assert_eq!(push_outcome(lost, "", BRANCH), Push::Lost);
        let remote =
            "To x\n!\tabc:refs/heads/brain-index\t[remote rejected] (atomic transaction failed)\n";
        assert_eq!(push_outcome(remote, "", BRANCH), Push::Lost);
        // A withdrawal: each post's own line.
        let post = |id: &str| format!("{REQUESTS}{id}");
        assert_eq!(push_outcome(ok, "", &post("r1")), Push::Pushed);
        assert_eq!(push_outcome(taken, "", &post("r1")), Push::Lost);
    }

    #[test]
    fn a_policy_refusal_is_not_offline() {
        let out = "To x\n!\tabc:refs/heads/brain-index\t[remote rejected] (pre-receive hook declined)\nDone\n";
        let err =
            "remote: registry pushes are closed today\nTo x\nerror: failed to push some refs\n";
        assert_eq!(
            push_outcome(out, err, BRANCH),
            Push::Refused(
                "[remote rejected] (pre-receive hook declined): registry pushes are closed today"
                    .into()
            )
        );
    }

    #[test]
    fn a_denial_is_told_from_an_unreachable_remote() {
        let forbidden = "remote: Permission to team/brain.git denied to ann.\nfatal: unable to access 'https://h/team/brain.git/': The requested URL returned error: 403\n";
        assert_eq!(
            push_outcome("", forbidden, BRANCH),
            Push::Denied("Permission to team/brain.git denied to ann. / fatal: unable to access 'https://h/team/brain.git/': The requested URL returned error: 403".into())
        );
        let asks = "fatal: could not read Username for 'http://127.0.0.1:8080': terminal prompts disabled\n";
        assert_eq!(
            denial(asks).as_deref(),
            Some(
                "fatal: could not read Username for 'http://127.0.0.1:8080': terminal prompts disabled"
            )
        );
        let key = "git@h: Permission denied (publickey).\r\nfatal: Could not read from remote repository.\n";
        assert_eq!(
            denial(key).as_deref(),
            Some("git@h: Permission denied (publickey).")
        );
        for unreachable in [
            "fatal: unable to access 'http://h/x/': Failed to connect to h port 80 after 0 ms: Couldn't connect to server\n",
            "ssh: connect to host h port 22: Connection refused\nfatal: Could not read from remote repository.\n",
            "fatal: unable to access 'http://h/x/': The requested URL returned error: 502\n",
        ] {
            assert_eq!(denial(unreachable), None, "{unreachable}");
            assert!(matches!(
                push_outcome("", unreachable, BRANCH),
                Push::Unreachable(_)
            ));
        }
    }

    #[test]
    fn a_single_branch_clone_does_not_fetch_the_registry() {
        let r = Remote {
            name: "origin".into(),
            branch: "brain-index".into(),
        };
        let specs = |s: &[&str]| s.iter().map(|x| (*x).to_string()).collect::<Vec<_>>();
        assert!(r.fetched_by(&specs(&["+refs/heads/*:refs/remotes/origin/*"])));
        assert!(r.fetched_by(&specs(&[
            "+refs/heads/main:refs/remotes/origin/main",
            &r.refspec()
        ])));
        assert!(r.fetched_by(&specs(&["refs/heads/brain-*:refs/remotes/origin/brain-*"])));
        assert!(!r.fetched_by(&specs(&["+refs/heads/main:refs/remotes/origin/main"])));
        assert!(!r.fetched_by(&[]));
        // Fetched elsewhere than the tracking reference bsi reads.
        assert!(!r.fetched_by(&specs(&["+refs/heads/*:refs/remotes/other/*"])));
        // Left out by a negative refspec.
        assert!(!r.fetched_by(&specs(&[
            "+refs/heads/*:refs/remotes/origin/*",
            "^refs/heads/brain-index"
        ])));
    }

    #[test]
    fn a_raw_diff_is_read() {
        let out = b":100644 100644 1111111111111111111111111111111111111111 2222222222222222222222222222222222222222 M\0notes/a b.md\0:000000 100644 0000000000000000000000000000000000000000 3333333333333333333333333333333333333333 A\0new.md\0";
        let got = parse_raw(out).expect("read");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].path, "notes/a b.md");
        assert_eq!((got[0].old_mode, got[0].status), (0o100644, 'M'));
        assert_eq!((got[1].old_mode, got[1].status), (0, 'A'));
        assert_eq!(parse_raw(b"").expect("nothing"), Vec::new());
        assert_eq!(parse_raw(b":100644 M\0x\0"), None);
    }

    #[test]
    fn no_status_line_means_unreachable() {
        // A French git would say this; only the missing status line counts.
        let err = "fatal: impossible de lire depuis le dépôt distant\n";
        assert_eq!(
            push_outcome("", err, BRANCH),
            Push::Unreachable("fatal: impossible de lire depuis le dépôt distant".into())
        );
    }
}
