//! Where the registry lives: `BRAIN-INDEX.md` on a branch of its own
//! (`brain-index` by default), apart from the content, so every branch and
//! work tree of a clone sees the same claims. A change is one commit on that
//! branch, made without the index or any work tree; the branch's reference
//! moves by compare-and-swap under the clone's writer lock ([`lock`]).
//!
//! What a command reads is the union of the local registry branch (which
//! holds changes not yet published) and its remote-tracking copy (what the
//! remote held at the last fetch), merged by rows when they diverged. Each
//! work tree also gets an untracked, git-excluded copy of the registry at
//! the brain root, for people to read ([`Brain::refresh_copy`]).

pub(crate) mod alive;
pub(crate) mod lock;
pub(crate) mod requests;
mod seen;
mod state;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::git::Oid;
use chrono::{DateTime, FixedOffset};

use crate::error::{Error, Result};
use crate::git::Git;
use crate::git_cli::Remote;
use crate::markdown::Outline;
use crate::registry::{self, REGISTRY_FILE, Registry};
use crate::scope::Scope;
use crate::words::shell_word;

pub use lock::FAULT_POINTS;
pub(crate) use lock::WriterLock;
use state::State;

/// The registry's path in the registry branch.
pub const BRANCH_FILE: &str = REGISTRY_FILE;

/// The file of the registry branch, next to the registry, that records the
/// brain root of a brain in a subdirectory: the root's path from the root of
/// the work tree, with `/`, on one line. `bsi init` (and `bsi migrate`)
/// write it in the branch's first commit, so every clone and work tree finds
/// the same root without `--registry` or `BSI_REGISTRY`. No file: the root
/// of the work tree (every brain made there, and those made before it).
pub const ROOT_FILE: &str = "BRAIN-ROOT";

/// The first lines of the work-tree copy of the registry.
pub(crate) fn copy_banner(branch: &str) -> String {
    format!(
        "<!-- bsi: this file is a COPY of the registry, rewritten by bsi; editing it changes nothing.\n     The live registry is {BRANCH_FILE} on the git branch `{branch}`: see it with `bsi status`. -->\n"
    )
}

/// Where a brain is, found before its settings are read (they are read
/// from its root): the repository, the brain root and the registry's copy.
pub struct Site {
    /// The repository.
    pub git: Git,
    /// Absolute path of the work-tree copy of the registry.
    pub registry: PathBuf,
    /// Directory holding the copy: scopes are relative to it.
    pub root: PathBuf,
    /// The registry copy's path from the work-tree root, with `/` (what
    /// git names it); [`Brain::copy_name`] is the same file from the brain
    /// root.
    pub copy_path: String,
    /// The work tree root.
    pub workdir: PathBuf,
}

impl Site {
    /// The brain root relative to the work tree root, with `/`: empty at
    /// the work tree root.
    pub fn root_rel(&self) -> String {
        root_of_rel(&self.copy_path)
    }

    /// The brain root recorded on the registry branch `branch` ([`ROOT_FILE`])
    /// and kept ([`Site::root_record`]): `None` when nothing records one. A
    /// record that is not a directory of the work tree, or that a later
    /// commit changed, is an error: bsi never follows it.
    pub fn recorded_root(&self, branch: &str, remote: Option<&Remote>) -> Result<Option<String>> {
        let record = self.root_record(branch, remote)?;
        match record.trouble {
            Some(trouble) => Err(trouble.into_error(branch)),
            None => Ok(record.kept),
        }
    }

    /// The brain root the registry branch `branch` records, read from the
    /// local branch and from `remote`'s copy as last fetched. The root is
    /// fixed at its first record: the first valid [`ROOT_FILE`] of the
    /// branch's history (its first commit's, as `bsi init` writes it). A
    /// later commit that changes it (by hand: bsi never does), a copy that
    /// disagrees with the local branch, or a record that is not a directory
    /// of the work tree is [`RootRecord::trouble`], with the root kept.
    ///
    /// Cheap on every run: the first record is remembered by the clone
    /// (`<git dir>/bsi/brain-root`), and the history is walked only when a
    /// tip's record differs from it (or nothing is remembered yet).
    pub fn root_record(&self, branch: &str, remote: Option<&Remote>) -> Result<RootRecord> {
        let mut tips = Vec::new();
        if let Some(tip) = self.git.ref_target(&format!("refs/heads/{branch}")) {
            tips.push((branch.to_string(), tip));
        }
        if let Some(r) = remote
            && let Some(tip) = self.git.ref_target(&r.tracking_ref())
        {
            tips.push((format!("{}/{branch}", r.name), tip));
        }
        let memo = RootMemo::new(&self.git.common_dir().join("bsi"), branch);
        let mut record = RootRecord::default();
        // The root the first tip read keeps (the local branch's, when any).
        let mut first_seen: Option<Option<String>> = None;
        for (at, tip) in tips {
            let now = self.root_text_at(tip)?;
            let now_root = now.as_deref().map(parse_root);
            let now_key = match &now_root {
                None => Some(String::new()),
                Some(Ok(r)) => Some(r.clone()),
                Some(Err(_)) => None,
            };
            let remembered = memo.read();
            let first = match (&now_key, &remembered) {
                // The usual run: the tip says what the clone remembers.
                (Some(k), Some(m)) if k == m => FirstRoot {
                    kept: now_root.clone().and_then(std::result::Result::ok),
                    known: true,
                    changed_in: None,
                },
                _ => self.first_root(tip)?,
            };
            let first_key = first.kept.clone().unwrap_or_default();
            match &first_seen {
                None => {
                    first_seen = Some(first.kept.clone());
                    record.kept = first.kept.clone();
                }
                // Two histories that keep two roots: the local branch's
                // wins, the other is trouble.
                Some(kept) if kept.clone().unwrap_or_default() != first_key => {
                    record.trouble.get_or_insert(RootTrouble::Changed {
                        at,
                        first: kept.clone().unwrap_or_default(),
                        now: now.clone().unwrap_or_default(),
                        commit: Some(tip),
                    });
                    continue;
                }
                Some(_) => {}
            }
            let trouble = match (&now_root, first.known) {
                (Some(Err(reason)), false) => Some(RootTrouble::Invalid {
                    at,
                    reason: reason.clone(),
                }),
                _ if now_key.as_deref() != Some(first_key.as_str()) => Some(RootTrouble::Changed {
                    at,
                    first: first_key.clone(),
                    now: now.clone().unwrap_or_default(),
                    commit: first.changed_in.or(Some(tip)),
                }),
                _ => None,
            };
            match trouble {
                Some(t) => {
                    record.trouble.get_or_insert(t);
                }
                None if first.known => memo.write(&first_key),
                None => {}
            }
        }
        Ok(record)
    }

    /// The text of [`ROOT_FILE`] at `commit`, if it has one.
    fn root_text_at(&self, commit: Oid) -> Result<Option<String>> {
        Ok(self
            .git
            .file_at(commit, ROOT_FILE)?
            .map(|b| String::from_utf8_lossy(&b).into_owned()))
    }

    /// The first valid record of the history of `tip` (first parents), and
    /// the last commit that changed the file.
    fn first_root(&self, tip: Oid) -> Result<FirstRoot> {
        // Newest first: every commit that changed the file.
        let changes = self.git.journal(tip, ROOT_FILE, None)?;
        let Some(oldest) = changes.last() else {
            // Never changed: what the tip says, the branch always said.
            let text = self.root_text_at(tip)?;
            return Ok(match text.as_deref().map(parse_root) {
                None => FirstRoot::known(None, None),
                Some(Ok(r)) => FirstRoot::known(Some(r), None),
                Some(Err(_)) => FirstRoot::unknown(),
            });
        };
        let last_change = changes.first().map(|c| c.id);
        // A file added after the first commit: the first record was none.
        let in_first_commit = self.git.log_range(oldest.id, None)?.len() <= 1;
        if !in_first_commit {
            return Ok(FirstRoot::known(None, last_change));
        }
        // The first record that is valid (a removal is: the work tree root).
        for c in changes.iter().rev() {
            match self.root_text_at(c.id)?.as_deref().map(parse_root) {
                None => return Ok(FirstRoot::known(None, last_change)),
                Some(Ok(r)) => return Ok(FirstRoot::known(Some(r), last_change)),
                Some(Err(_)) => {}
            }
        }
        Ok(FirstRoot::unknown())
    }
}

/// What [`Site::first_root`] found.
struct FirstRoot {
    kept: Option<String>,
    /// A valid record was found (else no record of the history is valid).
    known: bool,
    changed_in: Option<Oid>,
}

impl FirstRoot {
    fn known(kept: Option<String>, changed_in: Option<Oid>) -> FirstRoot {
        FirstRoot {
            kept,
            known: true,
            changed_in,
        }
    }

    fn unknown() -> FirstRoot {
        FirstRoot {
            kept: None,
            known: false,
            changed_in: None,
        }
    }
}

/// The brain root the registry branch keeps, and what is wrong with its
/// records, if anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RootRecord {
    /// The root bsi keeps: the first valid record, from the work tree root
    /// with `/` (empty: the work tree root); `None` when nothing records one.
    pub kept: Option<String>,
    /// A record bsi does not follow.
    pub trouble: Option<RootTrouble>,
}

/// A [`ROOT_FILE`] bsi does not follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootTrouble {
    /// No record of the branch names a directory of the work tree.
    Invalid {
        /// Where it was read: the branch, or the remote's copy of it.
        at: String,
        /// Why it is refused.
        reason: String,
    },
    /// The record at `at` differs from the one the branch keeps.
    Changed {
        /// Where it was read: the branch, or the remote's copy of it.
        at: String,
        /// The root kept (empty: the work tree root).
        first: String,
        /// What `at` records now, as written (empty: nothing).
        now: String,
        /// The commit that changed it, when known.
        commit: Option<Oid>,
    },
}

impl RootTrouble {
    /// The error every command but `bsi repair` stops on.
    pub fn into_error(self, branch: &str) -> Error {
        match self {
            RootTrouble::Invalid { at, reason } => Error::Registry {
                path: PathBuf::from(format!("{at}:{ROOT_FILE}")),
                source: registry::ParseError { line: 1, reason },
            },
            RootTrouble::Changed {
                at,
                first,
                now,
                commit,
            } => Error::RootChanged {
                at,
                branch: branch.to_string(),
                first,
                now: now.trim().to_string(),
                commit: commit.map(|c| c.to_string()[..8].to_string()),
            },
        }
    }
}

/// The first record of the brain root a clone remembers, per registry
/// branch: read and written best effort (a lost file costs one walk).
struct RootMemo {
    path: PathBuf,
    branch: String,
}

impl RootMemo {
    fn new(dir: &Path, branch: &str) -> RootMemo {
        RootMemo {
            path: dir.join("brain-root"),
            branch: branch.to_string(),
        }
    }

    fn read(&self) -> Option<String> {
        let text = fs::read_to_string(&self.path).ok()?;
        let (branch, root) = text.split_once('\n')?;
        (branch == self.branch).then(|| root.trim_end_matches('\n').to_string())
    }

    fn write(&self, root: &str) {
        if self.read().as_deref() == Some(root) {
            return;
        }
        let Some(dir) = self.path.parent() else {
            return;
        };
        let tmp = self.path.with_extension("tmp");
        let _ = fs::create_dir_all(dir)
            .and_then(|()| fs::write(&tmp, format!("{}\n{root}\n", self.branch)))
            .and_then(|()| fs::rename(&tmp, &self.path));
    }
}

/// The directory part of a registry copy's path relative to the work tree.
fn root_of_rel(rel: &str) -> String {
    rel.rsplit_once('/')
        .map_or_else(String::new, |(dir, _)| dir.to_string())
}

/// Reads the text of [`ROOT_FILE`]: one relative path, `/`-separated, with
/// no `.` or `..` part; empty (or `.`) is the work tree root. Pure.
pub fn parse_root(text: &str) -> std::result::Result<String, String> {
    let line = text.trim();
    if line.is_empty() || line == "." {
        return Ok(String::new());
    }
    let bad = line.starts_with('/')
        || line.contains('\\')
        || line.lines().count() > 1
        || line
            .trim_end_matches('/')
            .split('/')
            .any(|part| part.is_empty() || part == "." || part == "..");
    if bad {
        return Err(format!(
            "`{line}` is not a directory of the work tree (a relative path, with /)"
        ));
    }
    if line.split('/').any(is_git_dir_name) {
        return Err(format!(
            "`{line}` is in git's own directory, not in the work tree"
        ));
    }
    Ok(line.trim_end_matches('/').to_string())
}

/// Whether a path part names git's directory (`.git`, in any case: a
/// case-blind file system finds it as `.GIT`).
fn is_git_dir_name(part: &str) -> bool {
    part.eq_ignore_ascii_case(".git")
}

/// A brain: the repository, the brain root, and where its registry lives.
/// Built whole by [`Brain::new`], from its [`Site`] and its settings.
pub struct Brain {
    /// The repository.
    pub git: Git,
    /// Absolute path of the work-tree copy of the registry.
    pub registry: PathBuf,
    /// Directory holding the copy: scopes are relative to it.
    pub root: PathBuf,
    /// The registry copy's path from the work-tree root, with `/` (what
    /// git names it); [`Brain::copy_name`] is the same file from the brain
    /// root.
    pub copy_path: String,
    /// The work tree root.
    pub workdir: PathBuf,
    /// The registry branch's short name.
    pub branch: String,
    /// File endings beyond `.md` and `.markdown` whose headings make
    /// sections (`markdown_extensions` of `.bsi.toml`).
    pub markdown: Vec<String>,
    /// The time of this run: a stale mark met by a renewal in the merge of
    /// the local and the remote registry is judged again at this time.
    pub now: DateTime<FixedOffset>,
    /// When the brain was opened: [`Brain::clock`] moves on from `now`.
    opened: std::time::Instant,
    /// What its IO has to say beside the outcome, for the door to say in
    /// its own channel.
    pub notes: Notes,
    /// Where writers meet ([`Brain::meeting`]), found once a process, and
    /// left for the clone alone when it stops answering
    /// ([`Brain::meet_alone`]).
    meets_in: std::cell::RefCell<Option<Place>>,
    /// How long a disk where a remote is may take to answer.
    conn: Duration,
}

/// Where the writers of a clone meet, as [`Brain::meeting`] found it.
#[derive(Debug, Clone)]
enum Place {
    /// With the other clones of this machine, in the remote's repository.
    Shared(PathBuf),
    /// In the clone alone; with why, when a place shared by the clones of
    /// this machine was found and not used.
    Alone(Option<String>),
}

/// A waiter a live process of this machine waits for
/// ([`Meeting::waiting`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveWaiter {
    /// Its session.
    pub session: String,
    /// The scopes it waits for.
    pub scopes: Vec<Scope>,
}

/// A waiter's record of [`Meeting::mark_waiting`], taken away when dropped
/// ([`WaitingMark::leave`]).
#[derive(Debug)]
pub struct WaitingMark(Option<PathBuf>, Option<Duration>);

/// How long a waiter that leaves waits at most for the writer that took
/// its mark to decide a handoff ([`Meeting::pin`]) to end its write: the
/// longest a write may take, and more. A writer proven dead lets go at
/// once.
const PINNED_AT_MOST: Duration = Duration::from_secs(150);

impl WaitingMark {
    /// Takes the mark away, so no write decided from now on hands this
    /// waiter a claim. `true` when a writer had taken it to decide a
    /// handoff ([`Meeting::pin`]): then it returns once that write ended
    /// (or its writer is gone), and the waiter must look for a grant made
    /// in it — closed again, or said — before it says nothing was written.
    pub fn leave(mut self) -> bool {
        self.take()
    }

    fn take(&mut self) -> bool {
        let Some(mark) = self.0.take() else {
            return false;
        };
        let bound = self.1;
        // Renamed first, as a writer deciding a handoff renames it: of the
        // two, exactly one finds it.
        let mut gone = mark.as_os_str().to_owned();
        gone.push(format!(".{}.left", std::process::id()));
        let (m, g) = (mark.clone(), PathBuf::from(gone));
        let left = lock::on_disk_or(bound, true, move || {
            let left = fs::rename(&m, &g).is_ok();
            if left {
                let _ = fs::remove_file(&g);
            }
            left
        });
        if left {
            return false;
        }
        let Some((held, by)) = pinned_paths(&mark) else {
            return false;
        };
        let started = std::time::Instant::now();
        let still_held = |held: &Path| {
            let held = held.to_path_buf();
            lock::on_disk_or(bound, false, move || held.exists())
        };
        while still_held(&held) && started.elapsed() < PINNED_AT_MOST {
            let b = by.clone();
            let pinner = lock::on_disk(bound, move || lock::read_own(&b)).ok();
            if pinner.is_some_and(|r| lock::recorded_alive(&r) == Some(Some(false))) {
                // Its writer died at work: the mark is this waiter's again.
                let (h, b) = (held.clone(), by.clone());
                lock::on_disk_or(bound, (), move || {
                    let _ = fs::remove_file(&h);
                    let _ = fs::remove_file(&b);
                });
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // Given back by the writer: taken away for good.
        lock::on_disk_or(bound, (), move || {
            let _ = fs::remove_file(&mark);
        });
        true
    }
}

impl Drop for WaitingMark {
    fn drop(&mut self) {
        self.take();
    }
}

/// Where a waiter's mark `mark` is while a writer holds it
/// ([`Meeting::pin`]), and that writer's record.
fn pinned_paths(mark: &Path) -> Option<(PathBuf, PathBuf)> {
    let dir = mark.parent()?;
    let name = mark.file_name()?;
    Some((
        dir.join(".pinned").join(name),
        dir.join(".pinners").join(name),
    ))
}

/// A waiter's mark held by the writer deciding a handoff to it
/// ([`Meeting::pin`]), given back when dropped.
#[derive(Debug)]
pub struct Pin {
    mark: PathBuf,
    held: PathBuf,
    by: PathBuf,
    bound: Option<Duration>,
}

impl Drop for Pin {
    fn drop(&mut self) {
        let (held, mark, by) = (self.held.clone(), self.mark.clone(), self.by.clone());
        lock::on_disk_or(self.bound, (), move || {
            let _ = fs::rename(&held, &mark);
            let _ = fs::remove_file(&by);
        });
    }
}

/// A session id as a file name: what is not a letter, a digit, `.`, `-` or
/// `_` becomes `_` (the record inside names the session exactly).
fn file_name_of(session: &str) -> String {
    session
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// What the registry's IO has to say beside a command's outcome (a lock a
/// killed writer left, removed; a copy that could not be written; a file
/// moved aside): kept, never printed here, for the door to say in its own
/// channel (the CLI on stderr, MCP in the tool's result). The clones of
/// one handle share its lines.
#[derive(Debug, Clone, Default)]
pub struct Notes(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl Notes {
    /// Keeps `line` (with its `note:` or `warning:`) for the door.
    pub fn push(&self, line: String) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(line);
    }

    /// [`Notes::push`], unless the same line is kept already.
    pub fn push_once(&self, line: String) {
        let mut lines = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !lines.contains(&line) {
            lines.push(line);
        }
    }

    /// The lines kept so far, in order, leaving none.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// The two references that hold the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tips {
    /// The local registry branch.
    pub local: Option<Oid>,
    /// Its remote-tracking copy: the remote as last fetched.
    pub tracking: Option<Oid>,
}

/// The registry as a command sees it.
pub struct View {
    /// The union of the local branch and the remote as last fetched.
    pub registry: Registry,
    /// The references it was read from.
    pub tips: Tips,
    /// The local branch holds changes the remote has not received.
    pub pending: bool,
    /// Endings of the local branch that the union does not keep: the
    /// remote had already ended those claims otherwise.
    pub superseded: Vec<registry::merge::Superseded>,
}

impl View {
    /// The commit the registry is read from: the local branch when it holds
    /// pending changes, else the remote as last fetched.
    pub fn tip(&self) -> Option<Oid> {
        match (self.pending, self.tips.local, self.tips.tracking) {
            (true, Some(l), _) => Some(l),
            (_, _, Some(t)) => Some(t),
            (_, l, None) => l,
        }
    }
}

impl Brain {
    /// The brain at `site`, with its settings.
    pub fn new(site: Site, settings: &crate::settings::Settings) -> Brain {
        let Site {
            git,
            registry,
            root,
            copy_path,
            workdir,
        } = site;
        Brain {
            git,
            registry,
            root,
            copy_path,
            workdir,
            branch: settings.branch.clone(),
            markdown: settings.config.markdown_extensions.clone(),
            now: chrono::Local::now().fixed_offset(),
            opened: std::time::Instant::now(),
            notes: Notes::default(),
            meets_in: std::cell::RefCell::new(None),
            conn: settings.connection_timeout,
        }
    }

    /// This run's clock as it moves on: `now` plus the time since the
    /// brain was opened (a `bsi open --wait` reads the registry for
    /// minutes).
    pub fn clock(&self) -> DateTime<FixedOffset> {
        self.now + chrono::Duration::from_std(self.opened.elapsed()).unwrap_or_default()
    }

    /// Finds the brain from `cwd`, or from an explicit registry path (the
    /// path of its work-tree copy, whose directory is the brain root).
    pub fn locate(cwd: &Path, registry: Option<&Path>) -> Result<Site> {
        let (git, registry) = if let Some(p) = registry {
            let p = if p.is_absolute() {
                p.to_path_buf()
            } else {
                cwd.join(p)
            };
            let parent = p.parent().unwrap_or(Path::new("/")).to_path_buf();
            let parent = fs::canonicalize(&parent).map_err(|e| {
                Error::io(
                    format!("cannot reach the registry's directory {}", parent.display()),
                    e,
                )
            })?;
            let name = p
                .file_name()
                .ok_or_else(|| Error::Usage(format!("{} is not a file path", p.display())))?;
            (Git::discover(&parent)?, parent.join(name))
        } else {
            let git = Git::discover(cwd)?;
            let root = git.workdir()?;
            (git, root.join(REGISTRY_FILE))
        };
        let workdir = fs::canonicalize(git.workdir()?)
            .map_err(|e| Error::io("cannot resolve the work tree", e))?;
        let root = registry.parent().unwrap_or(&workdir).to_path_buf();
        let root = fs::canonicalize(&root).unwrap_or(root);
        let registry = root.join(registry.file_name().unwrap_or_default());
        let rel_path = registry.strip_prefix(&workdir).map_err(|_| {
            Error::Usage(format!(
                "the registry {} is outside the git work tree {}",
                registry.display(),
                workdir.display()
            ))
        })?;
        let copy_path = rel_path
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        // Git's own directory is not the brain's: a registry there would be
        // in no commit, and git may rewrite what is in it.
        let git_dir = fs::canonicalize(git.git_dir()).unwrap_or_else(|_| git.git_dir());
        let common = fs::canonicalize(git.common_dir()).unwrap_or_else(|_| git.common_dir());
        if copy_path.split('/').any(is_git_dir_name)
            || registry.starts_with(&git_dir)
            || registry.starts_with(&common)
        {
            return Err(Error::Usage(format!(
                "the registry {} is in git's own directory: the brain root is a directory of the work tree",
                registry.display()
            )));
        }
        Ok(Site {
            git,
            registry,
            root,
            copy_path,
            workdir,
        })
    }

    /// The text of [`ROOT_FILE`] for the registry branch's first commit:
    /// `None` for a brain at the work tree root, which records nothing.
    pub fn root_record(&self) -> Option<String> {
        let root = root_of_rel(&self.copy_path);
        (!root.is_empty()).then(|| format!("{root}\n"))
    }

    /// The registry copy's path relative to the brain root (its file name):
    /// how a scope would name it. [`Brain::copy_path`] is the same file from
    /// the work-tree root.
    pub fn copy_name(&self) -> String {
        self.registry
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// `refs/heads/<registry branch>`.
    pub fn local_ref(&self) -> String {
        format!("refs/heads/{}", self.branch)
    }

    fn bsi_dir(&self) -> PathBuf {
        self.git.common_dir().join("bsi")
    }

    fn state(&self) -> State {
        State::new(&self.bsi_dir())
    }

    /// Takes the clone's writer lock: one bsi writes the registry branch at
    /// a time, whichever work tree it runs in.
    pub fn lock(&self) -> Result<WriterLock> {
        WriterLock::take(&self.bsi_dir().join("lock"), None)
    }

    /// The writer lock for the work `what`: taken, what a killed writer
    /// left dealt with (and said in [`Brain::notes`]), and this writer recorded.
    pub fn writer(&self, what: &str) -> Result<WriterLock> {
        self.writer_within(what, None)
    }

    /// [`Brain::writer`], given up when `stop` says so while another
    /// holder keeps it: `None`, nothing taken.
    pub fn writer_or_stop(
        &self,
        what: &str,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<WriterLock>> {
        let Some(mut lock) =
            WriterLock::take_or_stop(&self.bsi_dir().join("lock"), None, stop, None)?
        else {
            return Ok(None);
        };
        if let Some(done) = self.repair(&mut lock) {
            self.notes.push(format!("note: {done}"));
        }
        lock.record(what)?;
        Ok(Some(lock))
    }

    /// This clone's name among those that post write requests on the
    /// remote: drawn once, kept in `bsi/clone-id` of its common git
    /// directory (shared by its linked work trees).
    pub fn clone_id(&self) -> String {
        let path = self.bsi_dir().join("clone-id");
        if let Ok(id) = std::fs::read_to_string(&path) {
            let id = id.trim();
            if !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric()) {
                return id.to_string();
            }
        }
        let id = format!("{:016x}", rand::random::<u64>());
        let _ = std::fs::create_dir_all(self.bsi_dir());
        let _ = lock::replace_file(&path, format!("{id}\n").as_bytes());
        id
    }

    /// Whether `remote` refused a push for the write requests posted with
    /// it ([`Brain::refuse_posts`]).
    pub fn posts_refused(&self, remote: &str) -> bool {
        self.posts_refused_file(remote).exists()
    }

    /// Where [`Brain::refuse_posts`] records `remote` (a remote's name may
    /// hold a `/`).
    fn posts_refused_file(&self, remote: &str) -> PathBuf {
        self.bsi_dir()
            .join("posts-refused")
            .join(remote.replace('/', "%2F"))
    }

    /// Records that `remote` refuses the posted write requests (`why`, its
    /// words): this clone's writes no longer post there.
    pub fn refuse_posts(&self, remote: &str, why: &str) {
        let file = self.posts_refused_file(remote);
        if let Some(dir) = file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = lock::replace_file(&file, format!("{why}\n").as_bytes());
    }

    /// The write requests waiting for this clone's writer lock.
    pub fn requests(&self) -> requests::Requests {
        requests::Requests::new(&self.bsi_dir().join("requests"), None)
    }

    /// Where this clone's writers meet the writers they share a push with
    /// ([`Meeting`]): the other clones of this machine whose remote is the
    /// same repository on its disk, when `remote` is one bsi reads there
    /// ([`crate::git::local_remote::meeting_dir`]); else this clone's own.
    pub fn meeting(&self, remote: Option<&Remote>) -> Meeting {
        match self.place(remote) {
            Place::Shared(dir) => Meeting {
                requests: requests::Requests::new(&dir.join("requests"), Some(self.conn)),
                waiting: dir.join("waiting"),
                shared: Some(dir.join("lock")),
                bound: Some(self.conn),
            },
            Place::Alone(_) => Meeting {
                requests: self.requests(),
                waiting: self.bsi_dir().join("waiting"),
                shared: None,
                bound: None,
            },
        }
    }

    /// Where this process's writers meet, found the first time it is asked.
    fn place(&self, remote: Option<&Remote>) -> Place {
        if let Some(place) = self.meets_in.borrow().as_ref() {
            return place.clone();
        }
        let place = self.find_place(remote);
        *self.meets_in.borrow_mut() = Some(place.clone());
        place
    }

    /// Leaves the place shared by the clones of this machine for the rest
    /// of this process, because `why` (a file there did not answer in
    /// time: the disk of the remote hangs): its writers meet in the clone
    /// alone from now on, and a warning says so.
    pub fn meet_alone(&self, why: &str) {
        let at = match self.meets_in.borrow().as_ref() {
            Some(Place::Shared(dir)) => dir.clone(),
            _ => return,
        };
        self.warn_alone(&at, why);
        *self.meets_in.borrow_mut() = Some(Place::Alone(Some(why.to_string())));
    }

    fn warn_alone(&self, dir: &Path, why: &str) {
        self.notes.push(format!(
            "warning: this clone does not meet the other clones of this machine in {}: {why}; its writes go alone (correct, only not shared with theirs)",
            dir.display()
        ));
    }

    /// Where this clone's writers meet the other clones of this machine
    /// that share `remote` on its disk, when they do: for `bsi doctor`.
    pub fn meeting_shared(&self, remote: Option<&Remote>) -> Option<PathBuf> {
        match self.place(remote) {
            Place::Shared(dir) => Some(dir),
            Place::Alone(_) => None,
        }
    }

    /// Why this clone's writers do not meet the other clones of this
    /// machine that share `remote` on its disk, when a place was found for
    /// them and is not safe to meet in ([`lock::meeting_place`]): for
    /// `bsi doctor`.
    pub fn meeting_refused(&self, remote: Option<&Remote>) -> Option<String> {
        match self.place(remote) {
            Place::Alone(why) => why,
            Place::Shared(_) => None,
        }
    }

    /// Where the writers of this clone meet: the place of the remote's
    /// repository on this disk when it is safe to meet in (made there when
    /// missing, each step bounded as a read of that disk is), else the
    /// clone alone: said in a warning when something was planted there (a
    /// link, a second name), else left to `bsi doctor`.
    fn find_place(&self, remote: Option<&Remote>) -> Place {
        let Some(dir) =
            remote.and_then(|r| crate::git::local_remote::meeting_dir(&self.git, r, self.conn))
        else {
            return Place::Alone(None);
        };
        let at = dir.clone();
        let judged = crate::git::local_remote::within(self.conn, move || lock::meeting_place(&at));
        match judged {
            Ok(Ok(())) => Place::Shared(dir),
            Ok(Err(unsafe_place)) => {
                if unsafe_place.planted {
                    self.warn_alone(&dir, &unsafe_place.why);
                }
                Place::Alone(Some(unsafe_place.why))
            }
            Err(why) => {
                // A disk that does not answer: said, as a remote that
                // cannot be reached is.
                let why = format!("it did not answer ({why})");
                self.warn_alone(&dir, &why);
                Place::Alone(Some(why))
            }
        }
    }

    /// `reg` as a plan reads it: with the queue rows whose lease is
    /// impossible judged ([`Brain::view_of`] does the same).
    pub fn judged(&self, mut reg: Registry) -> Registry {
        self.judge_leases(&mut reg);
        reg
    }

    /// [`Brain::writer`], waiting for another holder at most `at_most`
    /// (else the usual wait): [`crate::error::Error::Locked`] past it.
    pub fn writer_within(&self, what: &str, at_most: Option<Duration>) -> Result<WriterLock> {
        let mut lock = WriterLock::take(&self.bsi_dir().join("lock"), at_most)?;
        if let Some(done) = self.repair(&mut lock) {
            self.notes.push(format!("note: {done}"));
        }
        lock.record(what)?;
        Ok(lock)
    }

    /// Refuses a write while the registry branch is checked out in a work
    /// tree of this clone: moving it there would leave that work tree's
    /// files behind the branch, and a commit made in it later would revert
    /// every change written meanwhile (git itself never moves a branch
    /// checked out anywhere).
    pub fn ensure_branch_free(&self) -> Result<()> {
        let Some(dir) = self.git.checked_out_in(&self.local_ref()) else {
            return Ok(());
        };
        let dir = dir.to_string_lossy().trim_end_matches('/').to_string();
        Err(Error::BranchCheckedOut {
            branch: self.branch.clone(),
            dir,
        })
    }

    /// The two references, as they are now. A remote-tracking copy moved
    /// back from the tip this clone read before, dropping claims, makes
    /// the local branch hold them again first ([`seen`]).
    pub fn tips(&self, remote: Option<&Remote>) -> Tips {
        let local = self.git.ref_target(&self.local_ref());
        let tracking = remote.and_then(|r| self.git.ref_target(&r.tracking_ref()));
        let local = match remote {
            Some(r) => self.hold_seen(r, local, tracking),
            None => local,
        };
        Tips { local, tracking }
    }

    /// A name for the registry at `commit`, for error messages.
    fn label(&self, what: &str) -> PathBuf {
        PathBuf::from(format!("{what}:{BRANCH_FILE}"))
    }

    /// The registry text committed at `commit`.
    pub fn text_at(&self, commit: Oid) -> Result<String> {
        let bytes = self
            .git
            .file_at(commit, BRANCH_FILE)?
            .ok_or_else(|| Error::Registry {
                path: self.label(&self.branch),
                source: registry::ParseError {
                    line: 0,
                    reason: format!("the branch holds no {BRANCH_FILE}"),
                },
            })?;
        String::from_utf8(bytes).map_err(|e| Error::Registry {
            path: self.label(&self.branch),
            source: registry::ParseError {
                line: line_of_byte(e.as_bytes(), e.utf8_error().valid_up_to()),
                reason: "the file is not valid UTF-8".into(),
            },
        })
    }

    /// The registry committed at `commit`: of the local registry branch, or
    /// of its remote-tracking copy on `tracking` — where an error says the
    /// broken line is, and so where to mend it.
    pub fn registry_at(&self, commit: Oid, tracking: Option<&Remote>) -> Result<Registry> {
        let Some(r) = tracking else {
            return self.parse(self.text_at(commit)?);
        };
        let on_remote = |source| Error::RemoteRegistry {
            remote: r.name.clone(),
            branch: r.branch.clone(),
            source,
        };
        let text = self.text_at(commit).map_err(|e| match e {
            Error::Registry { source, .. } => on_remote(source),
            other => other,
        })?;
        registry::parse(text).map_err(on_remote)
    }

    /// Parses a registry text read from the branch.
    pub fn parse(&self, text: String) -> Result<Registry> {
        registry::parse(text).map_err(|source| Error::Registry {
            path: self.label(&self.branch),
            source,
        })
    }

    /// What the registry is, from both references. Refuses when there is
    /// none, or when the brain still keeps it as a tracked file.
    pub fn view(&self, remote: Option<&Remote>) -> Result<View> {
        let tips = self.tips(remote);
        self.view_of(tips, remote)
    }

    /// [`Brain::view`] for references already read (`tips.tracking` is the
    /// remote-tracking copy on `remote`).
    pub fn view_of(&self, tips: Tips, remote: Option<&Remote>) -> Result<View> {
        let mut superseded = Vec::new();
        let (registry, pending) = match (tips.local, tips.tracking) {
            (None, None) => return Err(self.missing_on(remote)),
            (Some(l), None) => (self.registry_at(l, None)?, remote.is_some()),
            (None, Some(t)) => (self.registry_at(t, remote)?, false),
            (Some(l), Some(t)) if self.git.is_ancestor(l, t)? => {
                (self.registry_at(t, remote)?, false)
            }
            (Some(l), Some(t)) if self.git.is_ancestor(t, l)? => (self.registry_at(l, None)?, true),
            (Some(l), Some(t)) => {
                let ours = self.registry_at(l, None)?;
                let theirs = self.registry_at(t, remote)?;
                let base = match self.git.merge_base(l, t)? {
                    Some(b) => self.text_at(b).ok().and_then(|x| registry::parse(x).ok()),
                    None => None,
                };
                // The places the others saw kept alive by their records.
                let merged = self
                    .merge_published(base.as_ref(), &ours, theirs, remote)
                    .map_err(|source| Error::Unmergeable {
                        branch: self.branch.clone(),
                        source,
                    })?;
                superseded = merged.superseded;
                (self.parse(merged.text)?, true)
            }
        };
        let mut registry = registry;
        self.judge_leases(&mut registry);
        Ok(View {
            registry,
            tips,
            pending,
            superseded,
        })
    }

    /// Marks the queue rows whose lease is further ahead of this clone's
    /// clock than a lease is long (their writer's clock is ahead) with when
    /// this clone first read them, recorded in its state: such a place
    /// lapses a lease length after that ([`crate::claims::queue::lapses`]).
    /// Best effort: a record that cannot be written is made again later.
    fn judge_leases(&self, reg: &mut Registry) {
        use crate::claims::queue;
        if reg.waiters.is_empty() {
            return;
        }
        // The places kept alive on their clones' references.
        alive::annotate(reg, &self.alive_records());
        let now = self.clock();
        let later = |w: &registry::Waiter| w.lease > now || w.alive.is_some_and(|a| a.lease > now);
        if !reg.waiters.iter().any(later) {
            return;
        }
        let state = self.state();
        let mut seen = state.sightings();
        if seen.is_empty() && !reg.waiters.iter().any(|w| queue::impossible(w, now)) {
            return;
        }
        let lines: Vec<String> = reg
            .table(registry::TableKind::Queue)
            .rows
            .iter()
            .map(|r| {
                reg.text()[r.clone()]
                    .trim_end_matches(['\n', '\r'])
                    .to_string()
            })
            .collect();
        let mut keys = lines.clone();
        let mut changed = false;
        for (w, line) in reg.waiters.iter_mut().zip(&lines) {
            if let Some((at, _)) = seen.iter().find(|(_, l)| l == line) {
                w.seen_ahead = Some(*at);
            } else if w.lease - now > queue::lease() {
                seen.push((now, line.clone()));
                w.seen_ahead = Some(now);
                changed = true;
            }
            // A record's lease is judged as a row's, under a key of its own:
            // each renewal is a new lease, read first when it is read.
            if let Some(a) = w.alive.as_mut() {
                let key = alive::Record {
                    session: w.session.clone(),
                    since: w.since,
                    lease: a.lease,
                }
                .line();
                if let Some((at, _)) = seen.iter().find(|(_, l)| *l == key) {
                    a.seen_ahead = Some(*at);
                } else if a.lease - now > queue::lease() {
                    seen.push((now, key.clone()));
                    a.seen_ahead = Some(now);
                    changed = true;
                }
                keys.push(key);
            }
        }
        let before = seen.len();
        seen.retain(|(at, l)| keys.contains(l) || *at + queue::lease() >= now);
        if changed || seen.len() != before {
            let _ = state.record_sightings(&seen);
        }
    }

    /// The texts of the archive files of the registry branch (old history
    /// rows, see [`crate::registry::archive`]), oldest month first.
    pub fn archives(&self, view: &View) -> Result<Vec<String>> {
        let Some(tip) = view.tip() else {
            return Ok(Vec::new());
        };
        let mut files = self
            .git
            .files_under(tip, crate::registry::archive::ARCHIVE_DIR)?;
        files.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(files
            .into_iter()
            .filter(|(n, _)| n.ends_with(".md"))
            .map(|(_, b)| String::from_utf8_lossy(&b).into_owned())
            .collect())
    }

    /// The error for a brain without a registry branch: still the old
    /// tracked file, or none at all.
    pub fn missing(&self) -> Error {
        self.missing_on(None)
    }

    /// [`Brain::missing`], for a brain whose remote `remote` has no
    /// registry either (as last fetched).
    pub fn missing_on(&self, remote: Option<&Remote>) -> Error {
        if self.git.tracks(&self.copy_path).unwrap_or(false) {
            Error::NotMigrated {
                path: self.registry.clone(),
                branch: self.branch.clone(),
            }
        } else {
            Error::NoRegistry {
                branch: self.branch.clone(),
                remote: remote.map(Remote::label),
            }
        }
    }

    /// The summary lines of the local changes the remote has not received,
    /// oldest first.
    pub fn pending_changes(&self, tips: Tips) -> Result<Vec<String>> {
        let Some(local) = tips.local else {
            return Ok(Vec::new());
        };
        let hide = match tips.tracking {
            Some(t) => self.git.merge_base(local, t)?,
            None => None,
        };
        let mut out: Vec<String> = self
            .git
            .log_range(local, hide)?
            .into_iter()
            .map(|c| c.message.lines().next().unwrap_or("").to_string())
            .collect();
        out.reverse();
        Ok(out)
    }

    /// Records that the remote answered now.
    pub fn heard_from_remote(&self, now: DateTime<FixedOffset>) {
        let _ = self.state().heard_from_remote(now);
    }

    /// When the remote last answered a fetch or a push of this clone.
    pub fn last_contact(&self) -> Option<DateTime<FixedOffset>> {
        self.state().last_contact()
    }

    /// Deals with what a writer killed in the middle left: lock files of
    /// the registry references, removed only on proof that their writer is
    /// dead and that no process holds them open. Where that cannot be
    /// proven (a process table that hides or cannot read the writer), the
    /// files stay and the report says how to remove them by hand. Returns
    /// what was done.
    pub fn repair(&self, lock: &mut WriterLock) -> Option<String> {
        let record = lock.left_by_dead_writer()?.to_string();
        let present: Vec<PathBuf> = self
            .ref_locks()
            .into_iter()
            .filter(|p| p.exists())
            .collect();
        let dead = lock::writer_is_dead(&record);
        let mut removed = 0;
        let mut kept = Vec::new();
        for path in present {
            if dead
                && crate::platform::held_open(&path) == Some(false)
                && fs::remove_file(&path).is_ok()
            {
                removed += 1;
            } else {
                kept.push(path);
            }
        }
        lock.clear_left();
        let mut said = Vec::new();
        if removed > 0 {
            said.push(format!(
                "removed {removed} lock file(s) a killed bsi left on the registry branch"
            ));
        }
        if !kept.is_empty() {
            let pid = record
                .lines()
                .find_map(|l| l.strip_prefix("pid "))
                .map_or_else(String::new, |p| format!(" (pid {})", p.trim()));
            let paths: Vec<String> = kept.iter().map(|p| p.display().to_string()).collect();
            said.push(format!(
                "left {} lock file(s) on the registry branch in place: the bsi that was writing{pid}, or a git it started, may still be at work, and this system does not let bsi prove otherwise; if no bsi or git is running, remove them: `rm {}`",
                kept.len(),
                paths.join(" ")
            ));
        }
        (!said.is_empty()).then(|| said.join("; "))
    }

    /// The lock files git and libgit2 make while they move the registry
    /// branch or its remote-tracking copies.
    fn ref_locks(&self) -> Vec<PathBuf> {
        let common = self.git.common_dir();
        let mut out = vec![common.join(format!("{}.lock", self.local_ref()))];
        if let Ok(remotes) = fs::read_dir(common.join("refs/remotes")) {
            for r in remotes.flatten() {
                out.push(r.path().join(format!("{}.lock", self.branch)));
            }
        }
        out
    }

    /// Rewrites this work tree's copy of the registry, when it differs, and
    /// keeps it out of git (`info/exclude`). Never fails a command: a copy
    /// that cannot be written is a note ([`Brain::notes`]). A copy path that this work
    /// tree still tracks (a branch from before the migration) is left alone.
    pub fn refresh_copy(&self, registry: &Registry) {
        if let Err(e) = self.write_copy(registry.text()) {
            self.notes.push(format!(
                "warning: the copy of the registry at {} was not updated ({e}); `bsi status` shows the live state",
                self.registry.display()
            ));
        }
    }

    fn write_copy(&self, text: &str) -> Result<()> {
        // HEAD's tree only: reading the index (every file of the brain)
        // would cost more than the rest of a write; a copy forced into the
        // index is the pre-commit hook's to refuse.
        if self.git.head_state(&self.copy_path)?.blob.is_some() {
            self.notes.push(format!(
                "note: {} is still tracked on this branch, so bsi does not write its copy there; the live registry is on branch `{}` (`git pull` brings the commit of `bsi migrate` that untracks it)",
                self.copy_path, self.branch
            ));
            return Ok(());
        }
        self.exclude_copy()?;
        let banner = copy_banner(&self.branch);
        let mut body = String::with_capacity(banner.len() + text.len());
        body.push_str(&banner);
        body.push_str(text);
        match fs::read(&self.registry) {
            Ok(b) if b == body.as_bytes() => return Ok(()),
            // Not a copy bsi wrote (no banner), nor the registry itself (a
            // file `bsi migrate` has just untracked): the user's, kept.
            Ok(b) if !b.starts_with(b"<!-- bsi:") && b != text.as_bytes() => self.move_aside()?,
            _ => {}
        }
        if fs::metadata(&self.registry).is_ok_and(|m| m.permissions().readonly()) {
            return Err(Error::io(
                format!("cannot write {}", self.registry.display()),
                std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    "the copy is read-only",
                ),
            ));
        }
        let tmp = self.root.join(format!(".{}.bsi-tmp", self.copy_name()));
        fs::write(&tmp, body.as_bytes())
            .and_then(|()| fs::rename(&tmp, &self.registry))
            .map_err(|e| {
                let _ = fs::remove_file(&tmp);
                Error::io(format!("cannot write {}", self.registry.display()), e)
            })
    }

    /// Renames a file of the user's found where the copy goes to
    /// `<name>.orig` (`.orig-2`, … when taken), and says where.
    fn move_aside(&self) -> Result<()> {
        let name = self.copy_name();
        let free = (1..)
            .map(|n| match n {
                1 => self.root.join(format!("{name}.orig")),
                n => self.root.join(format!("{name}.orig-{n}")),
            })
            .find(|p| fs::symlink_metadata(p).is_err())
            .expect("a free name");
        fs::rename(&self.registry, &free).map_err(|e| {
            Error::io(
                format!(
                    "cannot move {} (not a copy bsi wrote) aside to {}",
                    self.registry.display(),
                    free.display()
                ),
                e,
            )
        })?;
        self.notes.push(format!(
            "note: {} was not a copy bsi wrote: it is kept, moved to {}; the copy of the registry takes its place",
            self.registry.display(),
            free.display()
        ));
        Ok(())
    }

    /// Adds the copy (and its temp file) to `info/exclude` of the clone,
    /// read by git in every work tree.
    fn exclude_copy(&self) -> Result<()> {
        let info = self.git.common_dir().join("info");
        let path = info.join("exclude");
        let escape = |s: &str| s.replace(' ', "\\ ");
        let (dir, name) = match self.copy_path.rsplit_once('/') {
            Some((d, n)) => (format!("{d}/"), n.to_string()),
            None => (String::new(), self.copy_path.clone()),
        };
        let lines = [
            format!("/{}", escape(&self.copy_path)),
            format!("/{}.{}.bsi-tmp", escape(&dir), escape(&name)),
        ];
        let current = fs::read_to_string(&path).unwrap_or_default();
        let missing: Vec<&String> = lines
            .iter()
            .filter(|l| !current.lines().any(|c| c.trim() == l.as_str()))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        fs::create_dir_all(&info)
            .map_err(|e| Error::io(format!("cannot create {}", info.display()), e))?;
        let mut text = current;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        if !text.contains("# bsi:") {
            text.push_str(
                "# bsi: the work-tree copy of the registry (the live one is on its branch)\n",
            );
        }
        for l in missing {
            text.push_str(l);
            text.push('\n');
        }
        fs::write(&path, text).map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
    }

    /// Registers the registry's merge driver in this clone, for brains
    /// whose content branches still carry the registry as a tracked file
    /// (until `bsi migrate` has reached them): the attribute in
    /// `info/attributes` and `merge.bsi.*` in the clone's config, with the
    /// absolute path of this binary so `git pull` works where bsi is not on
    /// PATH (`program`; `bsi` when it is not known). Returns whether
    /// anything changed.
    pub fn register_merge_driver(&self, program: Option<&str>) -> Result<bool> {
        let mut added = false;
        // git runs the driver with the shell.
        let program = program.map_or_else(|| "bsi".into(), |p| shell_word(p).into_owned());
        let driver = format!("{program} merge-driver %O %A %B");
        let current = self.git.config_string("merge.bsi.driver");
        let ours = current
            .as_deref()
            .is_none_or(|c| c.ends_with(" merge-driver %O %A %B"));
        if ours && current.as_deref() != Some(driver.as_str()) {
            self.git.set_config(
                "merge.bsi.name",
                "bsi registry merge (rows of BRAIN-INDEX.md)",
            )?;
            self.git.set_config("merge.bsi.driver", &driver)?;
            added = true;
        }
        let info = self.git.common_dir().join("info");
        let path = info.join("attributes");
        let line = format!("/{} merge=bsi", self.copy_path.replace(' ', "[[:space:]]"));
        let current = fs::read_to_string(&path).unwrap_or_default();
        if !current.lines().any(|l| l.trim() == line) {
            fs::create_dir_all(&info)
                .map_err(|e| Error::io(format!("cannot create {}", info.display()), e))?;
            let mut text = current;
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&line);
            text.push('\n');
            fs::write(&path, text)
                .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
            added = true;
        }
        Ok(added)
    }
}

/// What a clone with no copy of its remote's registry branch learns when it
/// asks ([`Brain::first_fetch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FirstFetch {
    /// Nothing to ask: the clone has a registry view, no remote, or fetches
    /// the registry branch already (so a remote without one has none).
    NotNeeded,
    /// Fetched now, and added to what the remote fetches: what to say.
    Fetched(String),
    /// Asked: the remote has no registry branch (added to what it fetches,
    /// so `git fetch` brings it once it has one).
    NoneThere,
    /// The remote could not be asked: what to say, with what to run.
    Unreached(String),
}

impl Brain {
    /// Adds the registry branch to what `remote` fetches, when the clone's
    /// refspecs leave it out (a single-branch clone, which `git clone
    /// --depth` makes): `git fetch` and `git pull` then bring the claims.
    /// Returns the note to say once, when it added it.
    pub fn fetch_registry_too(&self, remote: &Remote) -> Result<Option<String>> {
        let key = format!("remote.{}.fetch", remote.name);
        if remote.fetched_by(&self.git.config_values(&key)) {
            return Ok(None);
        }
        self.git.add_config_value(&key, &remote.refspec())?;
        let shallow = if self.git.is_shallow() {
            "a shallow clone, which fetches one branch"
        } else {
            "a single-branch clone"
        };
        Ok(Some(format!(
            "this clone of {} fetched only some branches ({shallow}): the registry branch {} is now one of them (`{}`), so `git fetch` and `git pull` bring the claims too",
            remote.name,
            remote.branch,
            crate::words::command_line(["git", "config", "--add", &key, &remote.refspec()])
        )))
    }

    /// For a hook that finds no registry at all: when the clone's refspecs
    /// leave the registry branch out (a single-branch or shallow clone),
    /// the remote has never been asked whether it holds one, so it is asked
    /// now, once, within `timeout`, and the branch is added to what it
    /// fetches. Nothing is asked when the clone has a registry view, or
    /// fetches the branch already.
    pub fn first_fetch(&self, remote: Option<&Remote>, timeout: std::time::Duration) -> FirstFetch {
        let Some(remote) = remote else {
            return FirstFetch::NotNeeded;
        };
        let tips = self.tips(Some(remote));
        let key = format!("remote.{}.fetch", remote.name);
        if tips.local.is_some()
            || tips.tracking.is_some()
            || remote.fetched_by(&self.git.config_values(&key))
        {
            return FirstFetch::NotNeeded;
        }
        match crate::git::local_remote::fetch(&self.workdir, remote, false, timeout) {
            Ok(_) => {
                let added = self.fetch_registry_too(remote).ok().flatten();
                FirstFetch::Fetched(format!(
                    "fetched {} for the first time{}",
                    remote.label(),
                    added.map_or_else(String::new, |a| format!("; {a}"))
                ))
            }
            Err(crate::git_cli::FetchError::NoBranch) => {
                let _ = self.fetch_registry_too(remote);
                FirstFetch::NoneThere
            }
            Err(
                crate::git_cli::FetchError::Unreachable(why)
                | crate::git_cli::FetchError::Denied(why),
            ) => FirstFetch::Unreached(format!(
                "this clone has never fetched {label}: it fetches only some branches of {name} (a single-branch or shallow clone), and {name} could not be asked now ({why}), so whether it holds claims is unknown. Next: `{install}` once {name} is reachable (it adds {branch} to what {name} fetches, and fetches it)",
                label = remote.label(),
                name = remote.name,
                branch = remote.branch,
                install = crate::words::command_line(["bsi", "hook", "install"]),
            )),
        }
    }
}

/// A file's heading trees in other versions than the work tree, by name.
type Versions = Vec<(String, Outline)>;

/// The heading trees a section claim is judged against, read as they are
/// asked for: each file as this work tree has it and in every version of
/// [`Brain::versions`] (the commit each work tree has checked out, the
/// fetched upstream). A section nested in another in any of them conflicts
/// with it: a heading moved in another work tree or on another machine is
/// not missed. The same versions as a plan's [`crate::claims::Snapshot`].
pub struct BrainSections<'b> {
    brain: &'b Brain,
    /// [`Brain::versions`].
    versions: Vec<(String, Oid)>,
    /// The heading trees read so far, each file's when first asked: the
    /// snapshot's own nesting rule answers on them.
    read: std::cell::RefCell<crate::claims::Snapshot>,
}

impl Brain {
    /// What a plan for `scopes` may need of the file system and of git,
    /// read now (before the writer lock): the heading trees of the files
    /// they name — in this work tree, in the commit every work tree of the
    /// clone has checked out, and on the fetched upstream of the content
    /// branch — and the entries of the directories around them.
    pub fn snapshot(&self, scopes: &[crate::scope::Scope]) -> crate::claims::Snapshot {
        let mut snap = self.outlines(scopes);
        self.list(&mut snap, scopes);
        snap
    }

    /// [`Brain::snapshot`] without the directory listings: all a plan
    /// that grants needs. Only a refusal's alternatives read the listings
    /// ([`Brain::list`] adds them once a plan has refused).
    pub fn outlines(&self, scopes: &[crate::scope::Scope]) -> crate::claims::Snapshot {
        let (files, _) = crate::claims::wanted(scopes);
        let mut snap = crate::claims::Snapshot {
            registry_rel: self.copy_name(),
            ..Default::default()
        };
        if files.is_empty() {
            return snap;
        }
        let tips = self.versions();
        for file in files {
            let here = crate::resolve::read_outline(&self.root, &file);
            snap.versions
                .insert(file.clone(), self.outlines_in(&tips, &file));
            snap.worktree.insert(file, here);
        }
        snap
    }

    /// Adds to `snap` the entries of the directories around `scopes` that
    /// it does not hold yet: where a refusal's alternatives come from.
    pub fn list(&self, snap: &mut crate::claims::Snapshot, scopes: &[crate::scope::Scope]) {
        let (_, dirs) = crate::claims::wanted(scopes);
        for dir in dirs {
            snap.listings
                .entry(dir)
                .or_insert_with_key(|dir| crate::resolve::children(&self.root, dir));
        }
    }

    /// Every version of the brain's files, besides the work tree, that a
    /// section overlap is judged on: the commit each work tree of the clone
    /// has checked out, and the fetched upstream of the content branch. The
    /// one list for the snapshot of a plan and for [`Brain::sections`].
    fn versions(&self) -> Vec<(String, Oid)> {
        let mut tips = self.git.worktree_heads();
        if let Some((r, b)) = self.git.upstream()
            && let Some(tip) = self.git.ref_target(&format!("refs/remotes/{r}/{b}"))
            && !tips.iter().any(|(_, id)| *id == tip)
        {
            tips.push((format!("{r}/{b}"), tip));
        }
        tips
    }

    /// The heading trees of `file` in `versions`, with their names.
    fn outlines_in(&self, versions: &[(String, Oid)], file: &str) -> Versions {
        versions
            .iter()
            .filter_map(|(name, tip)| {
                let bytes = self.git.file_at(*tip, &self.workdir_path(file)).ok()??;
                Some((
                    name.clone(),
                    crate::markdown::outline(&String::from_utf8_lossy(&bytes)),
                ))
            })
            .collect()
    }

    /// The sections oracle of this brain, reading heading trees as they are
    /// asked for: for the views and reports that come after a write.
    pub fn sections(&self) -> BrainSections<'_> {
        BrainSections {
            brain: self,
            versions: self.versions(),
            read: std::cell::RefCell::default(),
        }
    }

    /// The path of a brain file from the work-tree root, with `/`: what
    /// git names it. The one rule between the two, with
    /// [`Brain::brain_path`].
    pub fn workdir_path(&self, file: &str) -> String {
        match self.copy_path.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/{file}"),
            None => file.to_string(),
        }
    }

    /// The brain path of a path git names from the work-tree root; `None`
    /// when it lies outside the brain (a brain in a subdirectory).
    pub fn brain_path<'p>(&self, path: &'p str) -> Option<&'p str> {
        match self.copy_path.rsplit_once('/') {
            Some((dir, _)) => path.strip_prefix(dir)?.strip_prefix('/'),
            None => Some(path),
        }
    }

    /// The path git names from the work-tree root of a brain path: the
    /// other way of [`Brain::brain_path`].
    pub fn work_path(&self, rel: &str) -> String {
        match self.copy_path.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/{rel}"),
            None => rel.to_string(),
        }
    }
}

impl BrainSections<'_> {
    /// The snapshot, with `file`'s heading trees read (in the work tree and
    /// in every version) if they were not yet.
    fn with(&self, file: &str) -> std::cell::Ref<'_, crate::claims::Snapshot> {
        if !self.read.borrow().worktree.contains_key(file) {
            let here = crate::resolve::read_outline(&self.brain.root, file);
            let there = self.brain.outlines_in(&self.versions, file);
            let mut read = self.read.borrow_mut();
            read.worktree.insert(file.to_string(), here);
            read.versions.insert(file.to_string(), there);
        }
        self.read.borrow()
    }
}

/// The nesting rule of [`crate::claims::Snapshot`], on trees read as they
/// are asked for.
impl crate::scope::Sections for BrainSections<'_> {
    fn contains(&self, file: &str, outer: &str, inner: &str) -> bool {
        crate::scope::Sections::contains(&*self.with(file), file, outer, inner)
    }

    fn elsewhere(&self, file: &str, outer: &str, inner: &str) -> Option<String> {
        crate::scope::Sections::elsewhere(&*self.with(file), file, outer, inner)
    }
}

fn line_of_byte(bytes: &[u8], at: usize) -> usize {
    bytes[..at.min(bytes.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Where writers meet to share a push: the requests they file and the lock
/// they queue on. Whoever takes the lock carries out every request waiting
/// there with one push. The writers of one clone meet in its common git
/// directory; those of the clones of one machine that share a remote on
/// its disk meet in that remote's repository, and the holder — a writer of
/// any of them — carries out the others' requests from its own clone (a
/// request is data: the scopes, the clock and the snapshot its plan reads).
pub struct Meeting {
    /// The requests filed there.
    pub requests: requests::Requests,
    /// Where the waiters of the queue who meet here record that they are
    /// alive ([`Meeting::mark_waiting`]).
    waiting: PathBuf,
    /// The lock of a meeting of several clones; `None` for the clone's own
    /// writer lock.
    shared: Option<PathBuf>,
    /// How long a file there may take to answer: `Some` on the disk of a
    /// remote ([`lock::on_disk`]).
    bound: Option<Duration>,
}

impl Meeting {
    /// Whether writers of other clones meet here too: the holder takes its
    /// own clone's writer lock as well ([`Brain::writer`]), and a writer
    /// carried out by another clone's holder fetches before it reads its
    /// outcome.
    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// Records that this process waits in the queue for `session`, and for
    /// what (its pid and start time, and the scopes, in the meeting's
    /// `waiting/`: the clone's, shared by its work trees, or that of the
    /// clones of this machine sharing a remote on its disk): what a close
    /// by any writer meeting here needs to know the waiter is alive before
    /// it hands it a claim, even when its registry has not seen the
    /// waiter's place yet. Best effort: a record not written only means the
    /// waiter takes its grant itself. Removed when the returned mark is
    /// dropped.
    pub fn mark_waiting(&self, session: &str, scopes: &[Scope]) -> WaitingMark {
        let path = self.waiting.join(file_name_of(session));
        let mut body = format!("session {session}\n");
        for scope in scopes {
            body.push_str(&format!("scope {scope}\n"));
        }
        body.push_str(&lock::this_process());
        let (dir, at) = (self.waiting.clone(), path.clone());
        let shared = self.bound.is_some();
        let written = lock::on_disk_or(self.bound, false, move || {
            (shared || fs::create_dir_all(&dir).is_ok())
                && lock::replace_file(&at, body.as_bytes()).is_ok()
        });
        WaitingMark(written.then_some(path), self.bound)
    }

    /// This meeting, its files read and written at once: what runs on the
    /// thread that bounds them ([`lock::on_disk`]).
    fn here(&self) -> Meeting {
        Meeting {
            requests: self.requests.here(),
            waiting: self.waiting.clone(),
            shared: self.shared.clone(),
            bound: None,
        }
    }

    /// Holds the mark of `session`'s waiter while this writer decides, and
    /// carries out, a write that may hand it a claim: `Some` when the mark
    /// was there and its process is alive now, and then the waiter cannot
    /// leave ([`WaitingMark::leave`]) before the returned pin is dropped,
    /// so a waiter alive when the write is decided finds its grant. `None`
    /// when it left, is dead, or another writer holds it: not handed over.
    pub fn pin(&self, session: &str) -> Option<Pin> {
        let (here, session) = (self.here(), session.to_string());
        let mut pin = lock::on_disk_or(self.bound, None, move || here.pin_here(&session))?;
        pin.bound = self.bound;
        Some(pin)
    }

    fn pin_here(&self, session: &str) -> Option<Pin> {
        let mark = self.waiting.join(file_name_of(session));
        let (held, by) = pinned_paths(&mark)?;
        for dir in [held.parent()?, by.parent()?] {
            match fs::symlink_metadata(dir) {
                Ok(m) if m.file_type().is_dir() => {}
                Ok(_) => return None,
                Err(_) => fs::create_dir(dir).ok()?,
            }
        }
        // This writer's record, new: another writer's means it holds the
        // mark (or held it and died: then it is taken from it).
        let record = || {
            let mut o = fs::OpenOptions::new();
            o.write(true).create_new(true);
            let mut f = lock::opening(&mut o).open(&by)?;
            std::io::Write::write_all(&mut f, lock::this_process().as_bytes())
        };
        if record().is_err() {
            let other = lock::read_own(&by).ok()?;
            if lock::recorded_alive(&other) != Some(Some(false)) {
                return None;
            }
            let _ = fs::rename(&held, &mark);
            fs::remove_file(&by).ok()?;
            record().ok()?;
        }
        if fs::rename(&mark, &held).is_err() {
            let _ = fs::remove_file(&by);
            return None;
        }
        let pin = Pin {
            mark,
            held,
            by,
            bound: None,
        };
        let alive = lock::read_own(&pin.held)
            .ok()
            .is_some_and(|r| lock::recorded_alive(&r) == Some(Some(true)));
        alive.then_some(pin)
    }

    /// The waiters meeting here that a live process waits for
    /// ([`Meeting::mark_waiting`]), as this machine's process table proves
    /// it: a record that cannot be proven alive counts as not there.
    pub fn waiting(&self) -> Vec<LiveWaiter> {
        let here = self.here();
        lock::on_disk_or(self.bound, Vec::new(), move || here.waiting_here())
    }

    fn waiting_here(&self) -> Vec<LiveWaiter> {
        let Ok(entries) = fs::read_dir(&self.waiting) else {
            return Vec::new();
        };
        let mut live: Vec<LiveWaiter> = entries
            .filter_map(Result::ok)
            .filter_map(|e| lock::read_own(&e.path()).ok())
            .filter(|record| lock::recorded_alive(record) == Some(Some(true)))
            .filter_map(|record| {
                let session = lock::field(&record, "session ")?;
                let scopes = record
                    .lines()
                    .filter_map(|l| l.strip_prefix("scope "))
                    .filter_map(|s| Scope::parse_stored(s).ok())
                    .collect();
                Some(LiveWaiter { session, scopes })
            })
            .collect();
        live.sort_by(|a, b| a.session.cmp(&b.session));
        live
    }

    /// Takes the meeting's lock for the work `what`, waiting for another
    /// holder; `None` once `stop` says so while it keeps the lock.
    pub fn queue_or_stop(
        &self,
        brain: &Brain,
        what: &str,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<WriterLock>> {
        let Some(path) = &self.shared else {
            return brain.writer_or_stop(what, stop);
        };
        let Some(mut lock) = WriterLock::take_or_stop(path, None, stop, self.bound)? else {
            return Ok(None);
        };
        lock.record(what)?;
        Ok(Some(lock))
    }

    /// [`Meeting::queue_or_stop`], waiting as long as a writer waits for
    /// a lock.
    pub fn queue(&self, brain: &Brain, what: &str) -> Result<WriterLock> {
        match &self.shared {
            None => brain.writer(what),
            Some(path) => {
                let Some(mut lock) = WriterLock::take_or_stop(path, None, &|| false, self.bound)?
                else {
                    return Err(Error::Locked {
                        what: "the registry",
                        path: path.clone(),
                    });
                };
                lock.record(what)?;
                Ok(lock)
            }
        }
    }
}
#[cfg(test)]
mod tests {
    use super::{parse_root, root_of_rel};

    #[test]
    fn the_recorded_root_is_a_relative_directory_of_the_work_tree() {
        assert_eq!(parse_root("brain\n").as_deref(), Ok("brain"));
        assert_eq!(parse_root(" team/brain/ \n").as_deref(), Ok("team/brain"));
        assert_eq!(parse_root("").as_deref(), Ok(""));
        assert_eq!(parse_root(".\n").as_deref(), Ok(""));
        assert!(parse_root(".git\n").is_err());
        assert!(parse_root("brain/.GIT/x").is_err());
        assert!(parse_root(".github").is_ok());
        for bad in [
            "/brain", "../brain", "a/../b", "a//b", "a/./b", "a\nb", "a\\b",
        ] {
            assert!(parse_root(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(root_of_rel("BRAIN-INDEX.md"), "");
        assert_eq!(root_of_rel("team/brain/BRAIN-INDEX.md"), "team/brain");
    }
}
