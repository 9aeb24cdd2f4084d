//! The only module that talks to git2: finding the repository, reading and
//! writing the registry branch (blob, tree, commit and a compare-and-swap of
//! its reference; never the index or a work tree), and reading changes
//! (staged, in the work tree, or made by a commit) with their hunks, for the
//! hooks and `bsi verify`.
//!
//! Where libgit2 cannot read a repository, git itself is asked
//! ([`crate::git_cli`]): an index with a split-index or sparse-index
//! extension is read through `git diff --raw` and `git ls-files`, and an
//! object a partial clone has not fetched yet through `git cat-file`, which
//! fetches it from the promisor remote within a bounded time.
//!
//! A remote that is a repository on this disk is fetched from in process
//! ([`local_remote`]).

pub(crate) mod local_remote;

use std::path::{Path, PathBuf};

use git2::{
    Delta, Diff, DiffOptions, ErrorClass, ErrorCode, FileMode, Index, ObjectType, Repository,
    RepositoryState, Signature, Sort,
};

/// A git object id: the one git2 type the rest of bsi handles, through here.
pub use git2::Oid;

use crate::error::{Error, Result};
use crate::error::{LibError, LibPart};
use crate::git_cli;

impl From<git2::Error> for Error {
    fn from(e: git2::Error) -> Error {
        let part = if e.class() == ErrorClass::Odb {
            LibPart::Objects
        } else if unreadable_index(&e) {
            LibPart::Index
        } else {
            LibPart::Other
        };
        Error::Git(LibError {
            message: e.to_string(),
            part,
        })
    }
}

/// The repository that holds a brain.
pub struct Git {
    repo: Repository,
    /// The time bsi's commits carry, when the clock is pinned (`BSI_NOW`).
    clock: Option<git2::Time>,
    /// The clone's main repository, opened once when this is a linked
    /// work tree (`None` inside: it could not be opened).
    main: std::cell::OnceCell<Option<Repository>>,
}

/// What HEAD holds for a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadState {
    /// The commit HEAD points to; `None` on an unborn branch.
    pub commit: Option<Oid>,
    /// The blob of the path in that commit.
    pub blob: Option<Oid>,
}

/// A commit that touched the registry, for the journal.
#[derive(Debug, Clone)]
pub struct JournalCommit {
    /// Its id.
    pub id: Oid,
    /// Commit time, seconds since the epoch, and offset in minutes.
    pub time: (i64, i32),
    /// Author name and email.
    pub author: String,
    /// The whole message.
    pub message: String,
}

/// Which changes to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangesOf<'p> {
    /// An index against HEAD: what `git commit` will record. `None` is the
    /// repository's own index; a pre-commit hook passes the file git names
    /// in `GIT_INDEX_FILE` (a temporary index for `git commit -a`,
    /// `git commit PATHS` and `-i`). A merge is read with
    /// [`Git::merge_files`] instead.
    Staged(Option<&'p Path>),
    /// The work tree (with untracked files) against HEAD.
    Worktree,
    /// A commit against its first parent.
    Commit(Oid),
}

/// Which merge to read with [`Git::merge_files`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeOf<'p> {
    /// The index (`GIT_INDEX_FILE`, or the repository's) as the result of
    /// merging `others` into HEAD.
    Index {
        index_file: Option<&'p Path>,
        others: &'p [Oid],
    },
    /// A merge commit.
    Commit(Oid),
}

/// One file of a merge, by its id in each commit (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeFile {
    /// Its path from the work tree root, with `/`.
    pub path: String,
    /// In the first parent.
    pub ours: Option<Oid>,
    /// In the merge base of the first parent and each other parent.
    pub bases: Vec<Option<Oid>>,
    /// In each other parent.
    pub theirs: Vec<Option<Oid>>,
    /// In the result.
    pub result: Option<Oid>,
}

/// The last value `params` (git's `GIT_CONFIG_PARAMETERS`: shell-quoted
/// `'key'='value'` or `'key=value'` words) gives `key`. Section and name
/// compare without case.
fn command_line_config(params: &str, key: &str) -> Option<String> {
    let mut words: Vec<(String, Option<String>)> = Vec::new();
    let mut cur = String::new();
    let mut value: Option<String> = None;
    let mut quoted = false;
    let mut chars = params.chars();
    let mut any = false;
    while let Some(c) = chars.next() {
        let lit = match c {
            '\'' => {
                quoted = !quoted;
                any = true;
                None
            }
            '\\' if !quoted => chars.next(),
            '=' if !quoted && value.is_none() => {
                value = Some(String::new());
                None
            }
            ' ' | '\t' | '\n' if !quoted => {
                if any {
                    words.push((std::mem::take(&mut cur), value.take()));
                }
                any = false;
                None
            }
            c => Some(c),
        };
        if let Some(c) = lit {
            value.as_mut().unwrap_or(&mut cur).push(c);
        }
    }
    if any {
        words.push((cur, value));
    }
    words
        .into_iter()
        .filter_map(|(k, v)| match v {
            Some(v) => Some((k, v)),
            None => k
                .split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string())),
        })
        .rfind(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v)
}

/// A path as `/`-separated text.
fn slash_path(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// One changed file.
#[derive(Debug, Clone)]
pub struct Change {
    /// Its path from the work tree root, with `/` (the old path when deleted).
    pub path: String,
    /// The file is gone in the new version.
    pub deleted: bool,
    /// Its blob in the new version, when git knows it (not for files read
    /// from the work tree).
    pub new_blob: Option<Oid>,
    /// Its blob in the old version; `None` for an added file.
    pub old_blob: Option<Oid>,
}

/// A commit seen while walking history.
#[derive(Debug, Clone)]
pub struct CommitInfo {
    /// Its id.
    pub id: Oid,
    /// Its first parent.
    pub parent: Option<Oid>,
    /// It has more than one parent.
    pub merge: bool,
    /// Its whole message.
    pub message: String,
}

impl CommitInfo {
    fn of(c: &git2::Commit<'_>) -> CommitInfo {
        CommitInfo {
            id: c.id(),
            parent: c.parent_id(0).ok(),
            merge: c.parent_count() > 1,
            message: String::from_utf8_lossy(c.message_bytes()).into_owned(),
        }
    }
}

/// A commit with who made it and when it was committed.
#[derive(Debug, Clone)]
pub struct Made {
    /// The commit.
    pub info: CommitInfo,
    /// Its author, `Name <email>`.
    pub author: String,
    /// Its commit time, seconds since the epoch.
    pub time: i64,
}

impl Git {
    /// Finds the repository containing `dir`.
    ///
    /// libgit2 is set, for this process, to trust the object database the
    /// way git itself does on ordinary commands: it neither re-hashes every
    /// object it reads nor looks up, before writing a tree or a commit, the
    /// objects bsi has just read or written for it. Both checks cost more
    /// than the rest of a small write put together; `git fsck` is where
    /// objects are verified.
    pub fn discover(dir: &Path) -> Result<Git> {
        git2::opts::strict_object_creation(false);
        git2::opts::strict_hash_verification(false);
        // Across file systems: a sandbox (Codex CLI's, with the git
        // directory added as a writable root) mounts `.git` apart from the
        // work tree, and git itself finds it there.
        let flags = git2::RepositoryOpenFlags::CROSS_FS;
        match Repository::open_ext(dir, flags, std::iter::empty::<&std::ffi::OsStr>()) {
            Ok(repo) if repo.is_bare() => Err(Error::NotARepo(dir.to_path_buf())),
            Ok(repo) => Ok(Git {
                repo,
                clock: None,
                main: std::cell::OnceCell::new(),
            }),
            Err(e) if e.code() == ErrorCode::NotFound => Err(Error::NotARepo(dir.to_path_buf())),
            Err(e) => Err(e.into()),
        }
    }

    /// The clone's main repository (the one holding the common git
    /// directory): this one unless this is a linked work tree, else opened
    /// once and kept. Every question about the clone's work trees asks it,
    /// so one process opens the repository once.
    fn main_repo(&self) -> Option<&Repository> {
        if self.repo.commondir() == self.repo.path() {
            return Some(&self.repo);
        }
        self.main
            .get_or_init(|| Repository::open(self.repo.commondir()).ok())
            .as_ref()
    }

    /// The work tree root.
    pub fn workdir(&self) -> Result<PathBuf> {
        self.repo
            .workdir()
            .map(Path::to_path_buf)
            .ok_or_else(|| Error::NotARepo(self.repo.path().to_path_buf()))
    }

    /// The `.git` directory of this work tree.
    pub fn git_dir(&self) -> PathBuf {
        self.repo.path().to_path_buf()
    }

    /// Refuses when a merge, rebase, cherry-pick or similar is under way.
    pub fn ensure_clean_state(&self) -> Result<()> {
        let what = match self.repo.state() {
            RepositoryState::Clean => return Ok(()),
            RepositoryState::Merge => "merge",
            RepositoryState::Revert | RepositoryState::RevertSequence => "revert",
            RepositoryState::CherryPick | RepositoryState::CherryPickSequence => "cherry-pick",
            RepositoryState::Bisect => "bisect",
            RepositoryState::Rebase
            | RepositoryState::RebaseInteractive
            | RepositoryState::RebaseMerge => "rebase",
            RepositoryState::ApplyMailbox | RepositoryState::ApplyMailboxOrRebase => "git am",
        };
        Err(Error::RepoBusy(what.to_string()))
    }

    /// HEAD's commit and the blob it has at `rel` (a `/` path from the work tree root).
    pub fn head_state(&self, rel: &str) -> Result<HeadState> {
        let commit = match self.repo.head() {
            Ok(h) => h.peel_to_commit()?,
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => {
                return Ok(HeadState {
                    commit: None,
                    blob: None,
                });
            }
            Err(e) => return Err(e.into()),
        };
        let blob = match commit.tree()?.get_path(Path::new(rel)) {
            Ok(entry) if entry.kind() == Some(ObjectType::Blob) => Some(entry.id()),
            Ok(_) => None,
            Err(e) if e.code() == ErrorCode::NotFound => None,
            Err(e) => return Err(e.into()),
        };
        Ok(HeadState {
            commit: Some(commit.id()),
            blob,
        })
    }

    /// The content of a blob; in a partial clone, one not fetched yet is
    /// read through git, which fetches it.
    pub fn blob_bytes(&self, id: Oid) -> Result<Vec<u8>> {
        match self.repo.find_blob(id) {
            Ok(b) => Ok(b.content().to_vec()),
            Err(e) if e.code() == ErrorCode::NotFound && self.is_partial() => {
                git_cli::cat_blob(self.cli_dir(), &id.to_string())?.ok_or_else(|| e.into())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Whether this is a partial clone: objects may be missing, to be
    /// fetched from a promisor remote when read.
    pub fn is_partial(&self) -> bool {
        if self.config_string("extensions.partialClone").is_some() {
            return true;
        }
        self.remotes().iter().any(|r| {
            self.repo
                .config()
                .and_then(|c| c.get_bool(&format!("remote.{r}.promisor")))
                .unwrap_or(false)
        })
    }

    /// The directory git runs in: the work tree.
    fn cli_dir(&self) -> &Path {
        self.repo.workdir().unwrap_or_else(|| self.repo.path())
    }

    /// The id `bytes` would have as a blob, without writing it.
    pub fn hash(bytes: &[u8]) -> Result<Oid> {
        Ok(Oid::from_bytes(&blob_sha1(bytes))?)
    }

    /// Writes `bytes` into the object database as a blob: hashed once, from
    /// the bytes already in memory.
    ///
    /// A large registry is written as a loose object by bsi itself: its id
    /// with the CPU's SHA-1 instructions, then zlib at git's loose-object
    /// level. libgit2 hashes with collision detection, which costs more
    /// than the compression at 100,000 history rows; the object written is
    /// the same, byte for byte.
    pub fn write_blob(&self, bytes: &[u8]) -> Result<Oid> {
        if bytes.len() < LOOSE_BY_HAND || std::env::var_os("GIT_OBJECT_DIRECTORY").is_some() {
            return Ok(self.repo.blob(bytes)?);
        }
        write_loose_blob(&self.repo.commondir().join("objects"), bytes)
    }

    /// The short name of the branch HEAD is on, if it is on one.
    pub fn head_branch(&self) -> Option<String> {
        let head = self.repo.head().ok()?;
        if !head.is_branch() {
            return None;
        }
        head.shorthand().ok().map(String::from)
    }

    /// The work tree, of any of this clone, whose HEAD is on the branch
    /// `refname` (`refs/heads/…`): git refuses to move a branch checked out
    /// anywhere, and so does bsi.
    pub fn checked_out_in(&self, refname: &str) -> Option<PathBuf> {
        fn on(repo: &Repository, refname: &str) -> bool {
            repo.find_reference("HEAD")
                .ok()
                .and_then(|h| h.symbolic_target().ok().flatten().map(|t| t == refname))
                .unwrap_or(false)
        }
        let main = self.main_repo()?;
        if !main.is_bare()
            && on(main, refname)
            && let Some(dir) = main.workdir()
        {
            return Some(dir.to_path_buf());
        }
        let names = main.worktrees().ok()?;
        for name in names.iter().flatten().flatten() {
            let Ok(wt) = main.find_worktree(name) else {
                continue;
            };
            if let Ok(repo) = Repository::open_from_worktree(&wt)
                && on(&repo, refname)
            {
                return Some(wt.path().to_path_buf());
            }
        }
        None
    }

    /// A string value of the repository's git configuration.
    pub fn config_string(&self, key: &str) -> Option<String> {
        // `git -c KEY=VALUE CMD` hands its values to hooks in the
        // environment, which libgit2 does not read.
        if let Some(v) = std::env::var("GIT_CONFIG_PARAMETERS")
            .ok()
            .and_then(|p| command_line_config(&p, key))
        {
            return Some(v).filter(|v| !v.trim().is_empty());
        }
        let cfg = self.repo.config().ok()?;
        cfg.get_string(key).ok().filter(|v| !v.trim().is_empty())
    }

    /// Every value of a multi-valued key of the repository's git
    /// configuration, in order (`remote.origin.fetch`).
    pub fn config_values(&self, key: &str) -> Vec<String> {
        let mut out = Vec::new();
        if let Ok(cfg) = self.repo.config()
            && let Ok(entries) = cfg.multivar(key, None)
        {
            let _ = entries.for_each(|e| {
                if let Ok(v) = e.value() {
                    out.push(v.to_string());
                }
            });
        }
        out
    }

    /// Whether any key of the configuration matches `regex` (libgit2's
    /// pattern over lowercased names: `url\..*\.insteadof`).
    pub fn config_has(&self, regex: &str) -> bool {
        let Ok(cfg) = self.repo.config() else {
            return false;
        };
        let Ok(mut entries) = cfg.entries(Some(regex)) else {
            return false;
        };
        entries.next().is_some()
    }

    /// Adds a value to a multi-valued key of the repository's own
    /// configuration, keeping the values it has (`git config --add`).
    pub fn add_config_value(&self, key: &str, value: &str) -> Result<()> {
        let mut cfg = self.repo.config()?.open_level(git2::ConfigLevel::Local)?;
        // A pattern no value matches: nothing is replaced.
        cfg.set_multivar(key, "a^", value)?;
        Ok(())
    }

    /// Whether this clone is shallow (`git clone --depth`).
    pub fn is_shallow(&self) -> bool {
        self.repo.is_shallow()
    }

    /// Sets a value in the repository's own configuration (`.git/config`).
    pub fn set_config(&self, key: &str, value: &str) -> Result<()> {
        let mut cfg = self.repo.config()?.open_level(git2::ConfigLevel::Local)?;
        cfg.set_str(key, value)?;
        Ok(())
    }

    /// Removes a value from the repository's own configuration; nothing
    /// when it is not set.
    pub fn unset_config(&self, key: &str) -> Result<()> {
        let mut cfg = self.repo.config()?.open_level(git2::ConfigLevel::Local)?;
        match cfg.remove(key) {
            Ok(()) => Ok(()),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// The upstream of the current branch: its remote and the branch name
    /// on that remote (`branch.<name>.remote` and `.merge`).
    pub fn upstream(&self) -> Option<(String, String)> {
        let branch = self.head_branch()?;
        let remote = self.config_string(&format!("branch.{branch}.remote"))?;
        let merge = self.config_string(&format!("branch.{branch}.merge"))?;
        if remote == "." {
            return None;
        }
        let name = merge
            .strip_prefix("refs/heads/")
            .unwrap_or(&merge)
            .to_string();
        Some((remote, name))
    }

    /// Whether the object `id` is in this repository's object database.
    pub fn has_object(&self, id: Oid) -> bool {
        self.repo.odb().is_ok_and(|odb| odb.exists(id))
    }

    /// Whether a remote of that name is configured.
    pub fn has_remote(&self, name: &str) -> bool {
        self.repo.find_remote(name).is_ok()
    }

    /// The names of the configured remotes.
    pub fn remotes(&self) -> Vec<String> {
        self.repo
            .remotes()
            .map(|r| {
                r.iter()
                    .filter_map(|n| n.ok().flatten().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The commits a walk yields, in its order.
    fn commits_of(
        &self,
        walk: impl Iterator<Item = std::result::Result<git2::Oid, git2::Error>>,
    ) -> Result<Vec<CommitInfo>> {
        let mut out = Vec::new();
        for id in walk {
            let c = self.repo.find_commit(id?)?;
            out.push(CommitInfo::of(&c));
        }
        Ok(out)
    }

    /// Commits reachable from `tip` but not from `hide`, newest first.
    pub fn log_range(&self, tip: Oid, hide: Option<Oid>) -> Result<Vec<CommitInfo>> {
        let mut walk = self.repo.revwalk()?;
        walk.push(tip)?;
        if let Some(h) = hide {
            walk.hide(h)?;
        }
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)?;
        self.commits_of(walk)
    }

    /// The last commits of `tip`'s first-parent line, newest first: the
    /// first `at_least`, then on until the first committed before `since`
    /// (seconds since the epoch), `most` in all. A commit dated by a clock
    /// behind the others, at the tip, does not end the walk early, and the
    /// walk reads no more of the history than it yields.
    pub fn made_since(
        &self,
        tip: Oid,
        since: i64,
        (at_least, most): (usize, usize),
    ) -> Result<Vec<CommitInfo>> {
        let mut walk = self.repo.revwalk()?;
        walk.push(tip)?;
        walk.simplify_first_parent()?;
        let mut out = Vec::new();
        for id in walk.take(most) {
            let c = self.repo.find_commit(id?)?;
            if out.len() >= at_least && c.time().seconds() < since {
                break;
            }
            out.push(CommitInfo::of(&c));
        }
        Ok(out)
    }

    /// The first `n` commits of `tip`'s first-parent line, newest first,
    /// each with its commit time (seconds since the epoch).
    pub fn first_parent_times(&self, tip: Oid, n: usize) -> Vec<(Oid, i64)> {
        let Ok(mut walk) = self.repo.revwalk() else {
            return Vec::new();
        };
        if walk.push(tip).is_err() || walk.simplify_first_parent().is_err() {
            return Vec::new();
        }
        walk.take(n)
            .flatten()
            .filter_map(|id| Some((id, self.repo.find_commit(id).ok()?.time().seconds())))
            .collect()
    }

    /// The last `n` commits of `tip`'s first-parent line, newest first.
    pub fn recent(&self, tip: Oid, n: usize) -> Result<Vec<CommitInfo>> {
        let mut walk = self.repo.revwalk()?;
        walk.push(tip)?;
        walk.simplify_first_parent()?;
        self.commits_of(walk.take(n))
    }

    /// The references whose names start with `prefix`, with the commit
    /// each points to, in name order.
    pub fn refs_under(&self, prefix: &str) -> Vec<(String, Oid)> {
        let Ok(refs) = self.repo.references_glob(&format!("{prefix}*")) else {
            return Vec::new();
        };
        let mut out: Vec<(String, Oid)> = refs
            .flatten()
            .filter_map(|r| Some((r.name().ok()?.to_string(), r.peel_to_commit().ok()?.id())))
            .collect();
        out.sort();
        out
    }

    /// The commit a reference points to, if it exists.
    pub fn ref_target(&self, name: &str) -> Option<Oid> {
        let r = self.repo.find_reference(name).ok()?;
        r.peel_to_commit().ok().map(|c| c.id())
    }

    /// The commit each work tree of this repository has checked out — the
    /// main one and every linked one, this one included —, named by its
    /// branch (or `HEAD of PATH` when detached); one entry per commit.
    pub fn worktree_heads(&self) -> Vec<(String, Oid)> {
        let mut out: Vec<(String, Oid)> = Vec::new();
        let mut add = |repo: &Repository| {
            let Ok(head) = repo.head() else {
                return;
            };
            let Ok(commit) = head.peel_to_commit() else {
                return;
            };
            let name = if head.is_branch() {
                head.shorthand().ok().map(String::from)
            } else {
                None
            };
            let name = name.unwrap_or_else(|| {
                format!(
                    "HEAD of {}",
                    repo.workdir().unwrap_or_else(|| repo.path()).display()
                )
            });
            if !out.iter().any(|(_, id)| *id == commit.id()) {
                out.push((name, commit.id()));
            }
        };
        if let Some(main) = self.main_repo()
            && !main.is_bare()
        {
            add(main);
        }
        if let Ok(names) = self.repo.worktrees() {
            for name in names.iter().flatten().flatten() {
                if let Ok(wt) = self.repo.find_worktree(name)
                    && let Ok(repo) = Repository::open_from_worktree(&wt)
                {
                    add(&repo);
                }
            }
        }
        out
    }

    /// The content of `rel` in `commit`, or `None` when it has no such file.
    /// In a partial clone, objects not fetched yet (the file, or the trees
    /// above it) are read through git.
    pub fn file_at(&self, commit: Oid, rel: &str) -> Result<Option<Vec<u8>>> {
        match self.file_at_here(commit, rel) {
            Err(Error::Git(e)) if e.part == LibPart::Objects && self.is_partial() => {
                git_cli::cat_blob(self.cli_dir(), &format!("{commit}:{rel}"))
            }
            other => other,
        }
    }

    fn file_at_here(&self, commit: Oid, rel: &str) -> Result<Option<Vec<u8>>> {
        let tree = self.repo.find_commit(commit)?.tree()?;
        match tree.get_path(Path::new(rel)) {
            Ok(entry) if entry.kind() == Some(ObjectType::Blob) => {
                Ok(Some(self.blob_bytes(entry.id())?))
            }
            Ok(_) => Ok(None),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The files directly under `dir` in `commit`, by name, with their
    /// content; none when there is no such directory.
    pub fn files_under(&self, commit: Oid, dir: &str) -> Result<Vec<(String, Vec<u8>)>> {
        let tree = self.repo.find_commit(commit)?.tree()?;
        let sub = match tree.get_path(Path::new(dir)) {
            Ok(e) if e.kind() == Some(ObjectType::Tree) => self.repo.find_tree(e.id())?,
            Ok(_) => return Ok(Vec::new()),
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let mut out = Vec::new();
        for e in &sub {
            if e.kind() == Some(ObjectType::Blob) {
                let name = String::from_utf8_lossy(e.name_bytes()).into_owned();
                out.push((name, self.blob_bytes(e.id())?));
            }
        }
        Ok(out)
    }

    /// Every file under `dir` in `commit`, at any depth, by its path below
    /// `dir` (with `/`), with its content; none when there is no such
    /// directory.
    pub fn files_below(&self, commit: Oid, dir: &str) -> Result<Vec<(String, Vec<u8>)>> {
        let tree = self.repo.find_commit(commit)?.tree()?;
        let sub = match tree.get_path(Path::new(dir)) {
            Ok(e) if e.kind() == Some(ObjectType::Tree) => self.repo.find_tree(e.id())?,
            Ok(_) => return Ok(Vec::new()),
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let mut ids = Vec::new();
        sub.walk(git2::TreeWalkMode::PreOrder, |parent, e| {
            if e.kind() == Some(ObjectType::Blob) {
                let name = String::from_utf8_lossy(e.name_bytes());
                ids.push((format!("{parent}{name}"), e.id()));
            }
            git2::TreeWalkResult::Ok
        })?;
        ids.into_iter()
            .map(|(path, id)| Ok((path, self.blob_bytes(id)?)))
            .collect()
    }

    /// Removes the reference `name` if it still points at `expected`;
    /// nothing when it is gone already.
    pub fn delete_ref(&self, name: &str, expected: Oid) -> Result<()> {
        match self.repo.find_reference(name) {
            Ok(mut r) if r.target() == Some(expected) => Ok(r.delete()?),
            Ok(_) => Err(Error::Moved(name.to_string())),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// The best common ancestor of two commits, if they have one.
    pub fn merge_base(&self, a: Oid, b: Oid) -> Result<Option<Oid>> {
        match self.repo.merge_base(a, b) {
            Ok(id) => Ok(Some(id)),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether `ancestor` is `descendant` or one of its ancestors.
    pub fn is_ancestor(&self, ancestor: Oid, descendant: Oid) -> Result<bool> {
        Ok(ancestor == descendant || self.repo.graph_descendant_of(descendant, ancestor)?)
    }

    /// The common git directory, shared by every work tree of the clone.
    pub fn common_dir(&self) -> PathBuf {
        self.repo.commondir().to_path_buf()
    }

    /// A commit whose tree is `parent`'s (or empty) with `files` written in
    /// it (`None` removes a file), on `parent`. No reference moves, no
    /// index or work tree is read: the commit of a registry change.
    pub fn commit_files(
        &self,
        parent: Option<Oid>,
        files: &[(&str, Option<&[u8]>)],
        message: &str,
    ) -> Result<Oid> {
        self.commit_tree_of(parent, true, true, files, message)
    }

    /// A commit with no parent whose tree is `on`'s (or empty) with `files`
    /// written in it (`None` removes one): a copy that replaces the one
    /// before it rather than following it, so nothing piles up.
    pub fn commit_alone(
        &self,
        on: Option<Oid>,
        files: &[(&str, Option<&[u8]>)],
        message: &str,
    ) -> Result<Oid> {
        self.commit_tree_of(on, true, false, files, message)
    }

    /// A commit whose tree holds `files` alone, on `parent`: no reference
    /// moves.
    pub fn commit_new_tree(
        &self,
        parent: Oid,
        files: &[(&str, &[u8])],
        message: &str,
    ) -> Result<Oid> {
        let files: Vec<(&str, Option<&[u8]>)> = files.iter().map(|(p, b)| (*p, Some(*b))).collect();
        self.commit_tree_of(Some(parent), false, true, &files, message)
    }

    fn commit_tree_of(
        &self,
        parent: Option<Oid>,
        parents_tree: bool,
        linked: bool,
        files: &[(&str, Option<&[u8]>)],
        message: &str,
    ) -> Result<Oid> {
        let repo = &self.repo;
        let parent = match parent {
            Some(id) => Some(repo.find_commit(id)?),
            None => None,
        };
        let base = match &parent {
            Some(p) if parents_tree => p.tree()?,
            _ => repo.find_tree(repo.treebuilder(None)?.write()?)?,
        };
        let mut builder = git2::build::TreeUpdateBuilder::new();
        for (path, bytes) in files {
            match bytes {
                Some(b) => {
                    let blob = self.write_blob(b)?;
                    builder.upsert(*path, blob, FileMode::Blob);
                }
                None => {
                    builder.remove(*path);
                }
            }
        }
        let tree = repo.find_tree(builder.create_updated(repo, &base)?)?;
        let sig = self.signature();
        let parents: Vec<&git2::Commit<'_>> = parent.iter().filter(|_| linked).collect();
        Ok(repo.commit(None, &sig, &sig, message, &tree, &parents)?)
    }

    /// Points the reference `name` at `to` if it still points at
    /// `expected` (`None`: if it does not exist yet). Atomic: of two
    /// writers that read the same value, one moves it and the other fails
    /// with [`Error::Moved`].
    pub fn move_ref(&self, name: &str, to: Oid, expected: Option<Oid>, log: &str) -> Result<()> {
        let res = match expected {
            Some(old) => self.repo.reference_matching(name, to, true, old, log),
            None => self.repo.reference(name, to, false, log),
        };
        match res {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.code(), ErrorCode::Modified | ErrorCode::Exists) => {
                Err(Error::Moved(name.to_string()))
            }
            Err(e) if e.code() == ErrorCode::Locked => Err(Error::Locked {
                what: "a registry branch reference",
                path: self.repo.commondir().join(format!("{name}.lock")),
            }),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether `rel` is tracked in this work tree: in HEAD's tree or in the
    /// index.
    pub fn tracks(&self, rel: &str) -> Result<bool> {
        if self.head_state(rel)?.blob.is_some() {
            return Ok(true);
        }
        match self.repo.index() {
            Ok(index) => Ok(index.get_path(Path::new(rel), 0).is_some()),
            Err(e) if unreadable_index(&e) => git_cli::in_index(self.cli_dir(), rel),
            Err(e) => Err(e.into()),
        }
    }

    /// The index's blob of `rel` (stage 0), if the index has it.
    pub fn index_blob(&self, rel: &str) -> Result<Option<Oid>> {
        match self.repo.index() {
            Ok(index) => Ok(index.get_path(Path::new(rel), 0).map(|e| e.id)),
            Err(e) if unreadable_index(&e) => {
                Ok(git_cli::index_blob(self.cli_dir(), rel)?
                    .and_then(|hex| Oid::from_str(&hex).ok()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Removes `rel` from the branch HEAD is on in one commit that changes
    /// nothing else, and from the index; every other staged change stays
    /// staged, and the work tree is not touched. For `bsi migrate` only.
    pub fn commit_removal(&self, rel: &str, message: &str) -> Result<Oid> {
        let head = self.repo.head()?;
        let name = head
            .name()
            .ok()
            .filter(|_| head.is_branch())
            .ok_or_else(|| Error::RepoBusy("detached HEAD".into()))?
            .to_string();
        let parent = head.peel_to_commit()?;
        let commit = self.commit_files(Some(parent.id()), &[(rel, None)], message)?;
        let index = match self.repo.index() {
            Ok(index) => Some(index),
            Err(e) if unreadable_index(&e) => None,
            Err(e) => return Err(e.into()),
        };
        self.move_ref(
            &name,
            commit,
            Some(parent.id()),
            message.lines().next().unwrap_or(""),
        )?;
        match index {
            Some(mut index) => {
                if index.get_path(Path::new(rel), 0).is_some() {
                    index.remove_path(Path::new(rel))?;
                    index.write()?;
                }
            }
            None => git_cli::remove_from_index(self.cli_dir(), rel)?,
        }
        Ok(commit)
    }

    /// The author of bsi's commits: the repository's identity, or `bsi` when
    /// none is configured.
    pub fn signature(&self) -> Signature<'static> {
        let (name, email) = match self.repo.signature() {
            Ok(s) => match self.clock {
                None => return s.to_owned(),
                Some(_) => (
                    s.name().unwrap_or("bsi").to_string(),
                    s.email().unwrap_or("bsi@localhost").to_string(),
                ),
            },
            Err(_) => ("bsi".to_string(), "bsi@localhost".to_string()),
        };
        let at = |t: &git2::Time| Signature::new(&name, &email, t);
        match &self.clock {
            Some(t) => at(t),
            None => Signature::now(&name, &email),
        }
        .or_else(|_| Signature::new("bsi", "bsi@localhost", &git2::Time::new(0, 0)))
        .expect("a static identity is valid")
    }

    /// Pins the time of bsi's commits (the clock of `BSI_NOW`), so a demo or
    /// a test has a journal at the times it plays.
    pub fn pin_clock(&mut self, seconds: i64, offset_minutes: i32) {
        self.clock = Some(git2::Time::new(seconds, offset_minutes));
    }

    /// Whether the repository has an identity of its own.
    pub fn has_identity(&self) -> bool {
        self.repo.signature().is_ok()
    }

    /// Commits from `tip` that changed `rel`, newest first, following
    /// first parents.
    pub fn journal(&self, tip: Oid, rel: &str, limit: Option<usize>) -> Result<Vec<JournalCommit>> {
        let mut out = Vec::new();
        let mut walk = self.repo.revwalk()?;
        walk.push(tip)?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)?;
        walk.simplify_first_parent()?;
        let path = Path::new(rel);
        for id in walk {
            let commit = self.repo.find_commit(id?)?;
            let this = commit.tree()?.get_path(path).ok().map(|e| e.id());
            let before = match commit.parent(0) {
                Ok(p) => p.tree()?.get_path(path).ok().map(|e| e.id()),
                Err(_) => None,
            };
            if this == before {
                continue;
            }
            let author = commit.author();
            out.push(JournalCommit {
                id: commit.id(),
                time: (commit.time().seconds(), commit.time().offset_minutes()),
                author: format!(
                    "{} <{}>",
                    author.name().unwrap_or("?"),
                    author.email().unwrap_or("?")
                ),
                message: commit.message().unwrap_or("").to_string(),
            });
            if limit.is_some_and(|l| out.len() >= l) {
                break;
            }
        }
        Ok(out)
    }

    /// `core.hooksPath` as set (`~` expanded, a relative path as written),
    /// `None` when it is not.
    pub fn hooks_path_setting(&self) -> Result<Option<PathBuf>> {
        let cfg = self.repo.config()?.snapshot()?;
        match cfg.get_path("core.hooksPath") {
            Ok(p) => Ok(Some(p)),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The root of every work tree of the clone: the main one (unless the
    /// clone is bare) and each linked one whose folder is there.
    pub fn worktree_roots(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if let Some(main) = self.main_repo()
            && let Some(dir) = main.workdir()
        {
            out.push(dir.to_path_buf());
        }
        if let Ok(names) = self.repo.worktrees() {
            for name in names.iter().flatten().flatten() {
                if let Ok(wt) = self.repo.find_worktree(name)
                    && wt.path().is_dir()
                {
                    out.push(wt.path().to_path_buf());
                }
            }
        }
        out
    }

    /// Whether the index of this work tree holds a file under `rel` (a
    /// folder relative to the work tree root).
    pub fn tracks_under(&self, rel: &Path) -> bool {
        let Some(prefix) = rel.to_str() else {
            return false;
        };
        let prefix = format!("{}/", prefix.trim_start_matches("./").trim_end_matches('/'));
        let Ok(index) = self.repo.index() else {
            return false;
        };
        index.iter().any(|e| e.path.starts_with(prefix.as_bytes()))
    }

    /// The changed files of `of`: a comparison of ids, no content read. An
    /// index libgit2 cannot read (split or sparse index), and the work tree
    /// of a sparse checkout, are read by git.
    pub fn changes(&self, of: ChangesOf<'_>) -> Result<Vec<Change>> {
        // libgit2 takes the files a sparse checkout leaves out of the work
        // tree (skip-worktree) for deleted ones: git knows better.
        let sparse = || {
            self.repo
                .config()
                .and_then(|c| c.get_bool("core.sparseCheckout"))
                .unwrap_or(false)
        };
        if matches!(of, ChangesOf::Worktree) && sparse() {
            return self.changes_by_git(of);
        }
        match self.changes_here(of) {
            Err(Error::Git(e))
                if e.part == LibPart::Index && !matches!(of, ChangesOf::Commit(_)) =>
            {
                self.changes_by_git(of)
            }
            other => other,
        }
    }

    /// [`Git::changes`] of the index or the work tree, as git reads them.
    fn changes_by_git(&self, of: ChangesOf<'_>) -> Result<Vec<Change>> {
        let dir = self.cli_dir();
        let head = self.head_tree()?.map(|t| t.id());
        let (raw, untracked) = if let ChangesOf::Staged(index_file) = of {
            (git_cli::diff_raw(dir, true, None, index_file)?, Vec::new())
        } else {
            let base = match head {
                Some(t) => t,
                None => Oid::hash_object(ObjectType::Tree, &[])?,
            };
            let raw = git_cli::diff_raw(dir, false, Some(&base.to_string()), None)?;
            (raw, git_cli::untracked(dir)?)
        };
        let staged = matches!(of, ChangesOf::Staged(_));
        let merged = match self.repo.refname_to_id("MERGE_HEAD") {
            Ok(id) if staged => Some(self.repo.find_commit(id)?.tree()?),
            _ => None,
        };
        let id = |hex: &str| Oid::from_str(hex).ok().filter(|o| !o.is_zero());
        let mut out = Vec::with_capacity(raw.len() + untracked.len());
        for r in raw {
            const GITLINK: u32 = 0o160000;
            if r.old_mode == GITLINK || r.new_mode == GITLINK {
                continue;
            }
            let deleted = r.status == 'D';
            let new_blob = if deleted || !staged {
                None
            } else {
                id(&r.new_id)
            };
            if let Some(tree) = &merged {
                let theirs = tree.get_path(Path::new(&r.path)).ok().map(|e| e.id());
                if theirs == new_blob {
                    continue;
                }
            }
            out.push(Change {
                path: r.path,
                deleted,
                new_blob,
                old_blob: id(&r.old_id),
            });
        }
        out.extend(untracked.into_iter().map(|path| Change {
            path,
            deleted: false,
            new_blob: None,
            old_blob: None,
        }));
        Ok(out)
    }

    fn changes_here(&self, of: ChangesOf<'_>) -> Result<Vec<Change>> {
        let repo = &self.repo;
        // A work-tree side's id may be computed without the blob being
        // stored: its text is read from the file.
        let from_workdir = matches!(of, ChangesOf::Worktree);
        let mut opts = DiffOptions::new();
        // A submodule moved to another commit (a gitlink) is a change of
        // its path in a commit or the index; in the work tree it would mean
        // opening every submodule, and is left out.
        opts.context_lines(0)
            .include_typechange(true)
            .ignore_submodules(from_workdir);
        let diff: Diff<'_> = match of {
            ChangesOf::Staged(index_file) => {
                let head = self.head_tree()?;
                let index = self.index_at(index_file)?;
                repo.diff_tree_to_index(head.as_ref(), Some(&index), Some(&mut opts))?
            }
            ChangesOf::Worktree => {
                opts.include_untracked(true)
                    .recurse_untracked_dirs(true)
                    .show_untracked_content(true);
                let head = self.head_tree()?;
                repo.diff_tree_to_workdir_with_index(head.as_ref(), Some(&mut opts))?
            }
            ChangesOf::Commit(id) => {
                let commit = repo.find_commit(id)?;
                let parent = match commit.parent(0) {
                    Ok(p) => Some(p.tree()?),
                    Err(_) => None,
                };
                repo.diff_tree_to_tree(parent.as_ref(), Some(&commit.tree()?), Some(&mut opts))?
            }
        };
        let mut out = Vec::with_capacity(diff.deltas().len());
        for delta in diff.deltas() {
            let deleted = delta.status() == Delta::Deleted;
            let file = if deleted {
                delta.old_file()
            } else {
                delta.new_file()
            };
            let Some(fs_path) = file.path() else { continue };
            let path = fs_path
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            let new_id = delta.new_file().id();
            let new_blob = (!deleted && !from_workdir && !new_id.is_zero()).then_some(new_id);
            let old_id = delta.old_file().id();
            let old_blob = (!old_id.is_zero()).then_some(old_id);
            out.push(Change {
                path,
                deleted,
                new_blob,
                old_blob,
            });
        }
        Ok(out)
    }

    fn index_at(&self, index_file: Option<&Path>) -> Result<Index> {
        Ok(match index_file {
            Some(p) => Index::open(p)?,
            None => self.repo.index()?,
        })
    }

    /// The commits a merge under way brings (`MERGE_HEAD`), in order; none
    /// when no merge is under way.
    pub fn merge_heads(&self) -> Vec<Oid> {
        std::fs::read_to_string(self.repo.path().join("MERGE_HEAD"))
            .map(|t| {
                t.lines()
                    .filter_map(|l| Oid::from_str(l.trim()).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The commits of a merge: its first parent and the others; for the
    /// index, HEAD and `others`.
    pub fn merge_parents(&self, of: MergeOf<'_>) -> Result<(Option<Oid>, Vec<Oid>)> {
        match of {
            MergeOf::Index { others, .. } => {
                let head = self.head_commit()?;
                Ok((head, others.to_vec()))
            }
            MergeOf::Commit(id) => {
                let c = self.repo.find_commit(id)?;
                Ok((c.parent_id(0).ok(), c.parent_ids().skip(1).collect()))
            }
        }
    }

    /// The commit HEAD points to; `None` on an unborn branch.
    pub fn head_commit(&self) -> Result<Option<Oid>> {
        match self.repo.head() {
            Ok(h) => Ok(Some(h.peel_to_commit()?.id())),
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Every file a merge may have changed of its own — those the result
    /// changes against the first parent and those another parent changed
    /// since its merge base —, with its version in each commit (by id: a
    /// blob, or a submodule's commit). The result is the index git hands
    /// the hook (its tree is written, as `git commit` will) or a merge
    /// commit's tree.
    pub fn merge_files(&self, of: MergeOf<'_>) -> Result<Vec<MergeFile>> {
        let repo = &self.repo;
        let (ours, others) = self.merge_parents(of)?;
        let result = match of {
            MergeOf::Index { index_file, .. } => {
                let mut index = self.index_at(index_file)?;
                repo.find_tree(index.write_tree_to(repo)?)?
            }
            MergeOf::Commit(id) => repo.find_commit(id)?.tree()?,
        };
        let tree_of = |c: Option<Oid>| -> Result<Option<git2::Tree<'_>>> {
            match c {
                Some(id) => Ok(Some(repo.find_commit(id)?.tree()?)),
                None => Ok(None),
            }
        };
        let ours_tree = tree_of(ours)?;
        let mut sides = Vec::new();
        for &o in &others {
            let base = match ours {
                Some(a) => self.merge_base(a, o)?,
                None => None,
            };
            sides.push((tree_of(base)?, tree_of(Some(o))?));
        }
        let mut paths: Vec<String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut collect = |a: Option<&git2::Tree<'_>>, b: Option<&git2::Tree<'_>>| -> Result<()> {
            let mut opts = DiffOptions::new();
            opts.include_typechange(true);
            let diff = repo.diff_tree_to_tree(a, b, Some(&mut opts))?;
            for d in diff.deltas() {
                for f in [d.old_file(), d.new_file()] {
                    if let Some(p) = f.path() {
                        let p = slash_path(p);
                        if seen.insert(p.clone()) {
                            paths.push(p);
                        }
                    }
                }
            }
            Ok(())
        };
        collect(ours_tree.as_ref(), Some(&result))?;
        for (base, theirs) in &sides {
            collect(base.as_ref(), theirs.as_ref())?;
        }
        let at = |t: Option<&git2::Tree<'_>>, p: &str| -> Option<Oid> {
            let e = t?.get_path(Path::new(p)).ok()?;
            (e.kind() != Some(ObjectType::Tree)).then(|| e.id())
        };
        Ok(paths
            .into_iter()
            .map(|p| MergeFile {
                ours: at(ours_tree.as_ref(), &p),
                result: at(Some(&result), &p),
                bases: sides.iter().map(|(b, _)| at(b.as_ref(), &p)).collect(),
                theirs: sides.iter().map(|(_, t)| at(t.as_ref(), &p)).collect(),
                path: p,
            })
            .collect())
    }

    /// The commit `name` (a branch, tag, `FETCH_HEAD`, an id…) names.
    pub fn resolve_commit(&self, name: &str) -> Option<Oid> {
        let obj = self.repo.revparse_single(name).ok()?;
        obj.peel_to_commit().ok().map(|c| c.id())
    }

    /// The commits `git pull` merges: the lines of `FETCH_HEAD` not marked
    /// `not-for-merge`.
    pub fn fetch_head_merges(&self) -> Vec<Oid> {
        let text = std::fs::read_to_string(self.repo.path().join("FETCH_HEAD")).unwrap_or_default();
        text.lines()
            .filter(|l| !l.contains("\tnot-for-merge\t"))
            .filter_map(|l| Oid::from_str(l.split('\t').next()?.trim()).ok())
            .collect()
    }

    /// The commits a reference moved from `old` to `new` would add that
    /// were never judged (see [`Git::judged_tips`]) and are not `known`,
    /// oldest first. Nothing when `new` is `old` or one of its ancestors,
    /// or is a judged tip itself. A tag, or a remote-tracking branch made
    /// by hand, judges nothing: a commit they alone reach is judged when it
    /// first reaches a branch.
    pub fn landing_commits(
        &self,
        old: Option<Oid>,
        new: Oid,
        known: &[Oid],
    ) -> Result<Vec<CommitInfo>> {
        if let Some(old) = old
            && self.is_ancestor(new, old)?
        {
            return Ok(Vec::new());
        }
        if known.contains(&new) {
            return Ok(Vec::new());
        }
        let judged = self.judged_tips();
        if judged.contains(&new) {
            return Ok(Vec::new());
        }
        let mut walk = self.repo.revwalk()?;
        walk.push(new)?;
        if let Some(old) = old {
            walk.hide(old)?;
        }
        for k in known.iter().chain(&judged) {
            let _ = walk.hide(*k);
        }
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)?;
        self.commits_of(walk)
    }

    /// The tips whose history counts as judged: every branch's (a commit
    /// is judged when it reaches one), and every remote-tracking branch's
    /// that a fetch, a pull, a clone or a push wrote (others' work, judged
    /// where it was made), as its newest reflog entry says; one git keeps
    /// no reflog for counts too. A remote-tracking branch written by hand
    /// (`git update-ref`) and tags do not. A reference whose tip is counted
    /// already is not looked at further: a thousand remote-tracking
    /// branches at a few commits cost a few reflog reads, not a thousand.
    pub fn judged_tips(&self) -> Vec<Oid> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let Ok(refs) = self.repo.references() else {
            return out;
        };
        for r in refs.flatten() {
            let Ok(name) = r.name() else { continue };
            let branch = name.starts_with("refs/heads/");
            if !branch && !name.starts_with("refs/remotes/") {
                continue;
            }
            if r.target().is_some_and(|t| seen.contains(&t)) {
                continue;
            }
            if !branch && !self.fetched(name) {
                continue;
            }
            if let Ok(c) = r.peel_to_commit()
                && seen.insert(c.id())
            {
                out.push(c.id());
            }
        }
        out
    }

    /// Whether the remote-tracking branch `name` was last written by git's
    /// fetch, pull, clone or push (or git keeps no reflog of it).
    fn fetched(&self, name: &str) -> bool {
        let Ok(log) = self.repo.reflog(name) else {
            return true;
        };
        let Some(last) = log.get(0) else {
            return true;
        };
        let message = last.message().ok().flatten().unwrap_or("");
        ["fetch", "pull", "clone", "update by push", "remote: "]
            .iter()
            .any(|p| message.starts_with(p))
    }

    /// When `commit` was first made: its author time, seconds since the
    /// epoch (a rebase, a cherry-pick and `--amend` keep it).
    pub fn author_time(&self, commit: Oid) -> Option<i64> {
        Some(
            self.repo
                .find_commit(commit)
                .ok()?
                .author()
                .when()
                .seconds(),
        )
    }

    /// The parents of `commit`, in order; none for a root commit or one
    /// that cannot be read.
    pub fn parent_ids(&self, commit: Oid) -> Vec<Oid> {
        self.repo
            .find_commit(commit)
            .map(|c| c.parent_ids().collect())
            .unwrap_or_default()
    }

    /// The tree of `commit`.
    pub fn tree_of(&self, commit: Oid) -> Option<Oid> {
        Some(self.repo.find_commit(commit).ok()?.tree_id())
    }

    /// The patch identity of `commit` against its first parent (the empty
    /// tree for a root commit): libgit2's stable patch id, which git's
    /// `git patch-id --stable` gives too — the same for a rebased or
    /// cherry-picked copy that changes the same lines the same way,
    /// whatever its parent and message. `None` for a merge or when the
    /// diff cannot be read.
    pub fn patch_id(&self, commit: Oid) -> Option<Oid> {
        let c = self.repo.find_commit(commit).ok()?;
        if c.parent_count() > 1 {
            return None;
        }
        let old = match c.parent(0) {
            Ok(p) => Some(p.tree().ok()?),
            Err(_) => None,
        };
        let new = c.tree().ok()?;
        let diff = self
            .repo
            .diff_tree_to_tree(old.as_ref(), Some(&new), None)
            .ok()?;
        diff.patchid(None).ok()
    }

    /// The commits reachable from `starts` but not from `hide`, newest
    /// first, at most `limit`.
    pub fn commits_between(
        &self,
        starts: &[Oid],
        hide: Oid,
        limit: usize,
    ) -> Result<Vec<CommitInfo>> {
        let mut walk = self.repo.revwalk()?;
        for s in starts {
            let _ = walk.push(*s);
        }
        let _ = walk.hide(hide);
        walk.set_sorting(Sort::TIME)?;
        self.commits_of(walk.take(limit))
    }

    /// The commits branch `refname` loses when it moves from `old` to
    /// `new` that no other branch and no remote-tracking branch keeps,
    /// newest first, at most `limit`. A commit the remote has is not lost
    /// by moving a local branch back (`git reset --hard ORIG_HEAD` after a
    /// pull): the branch cannot take it from the remote without a forced
    /// push.
    pub fn lost_commits(
        &self,
        refname: &str,
        old: Oid,
        new: Oid,
        limit: usize,
    ) -> Result<Vec<CommitInfo>> {
        let mut walk = self.repo.revwalk()?;
        walk.push(old)?;
        walk.hide(new)?;
        for glob in ["refs/heads/*", "refs/remotes/*"] {
            for r in self.repo.references_glob(glob)?.flatten() {
                if r.name().is_ok_and(|n| n != refname)
                    && let Ok(c) = r.peel_to_commit()
                {
                    let _ = walk.hide(c.id());
                }
            }
        }
        walk.set_sorting(Sort::TIME)?;
        self.commits_of(walk.take(limit))
    }

    /// The text of a blob; `""` for `None` (no such file). `None` when it
    /// cannot be read (a submodule's commit) or is not UTF-8.
    pub fn text_of(&self, id: Option<Oid>) -> Option<String> {
        match id {
            None => Some(String::new()),
            Some(id) => String::from_utf8(self.blob_bytes(id).ok()?).ok(),
        }
    }

    fn head_tree(&self) -> Result<Option<git2::Tree<'_>>> {
        match self.repo.head() {
            Ok(h) => Ok(Some(h.peel_to_commit()?.tree()?)),
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The text of the new version of a change: its blob, else the file in
    /// the work tree; `""` when the file is gone. `None` when it cannot be
    /// read or is not UTF-8.
    pub fn new_text(&self, change: &Change) -> Option<String> {
        if change.deleted {
            return Some(String::new());
        }
        let bytes = match change.new_blob {
            Some(id) => self.blob_bytes(id).ok()?,
            None => std::fs::read(self.workdir().ok()?.join(&change.path)).ok()?,
        };
        String::from_utf8(bytes).ok()
    }

    /// The text of the old version of a change; `""` for an added file.
    /// `None` when it is not UTF-8.
    pub fn old_text(&self, change: &Change) -> Option<String> {
        match change.old_blob {
            None => Some(String::new()),
            Some(id) => String::from_utf8(self.blob_bytes(id).ok()?).ok(),
        }
    }

    /// The commits reachable from `tips` (each once, whichever tip reaches
    /// it) newest first by commit time, down to the first committed before
    /// `since`, at most `limit`: each with its commit time and parents.
    pub fn graph_since(&self, tips: &[Oid], since: i64, limit: usize) -> Vec<(Oid, i64, Vec<Oid>)> {
        let Ok(mut walk) = self.repo.revwalk() else {
            return Vec::new();
        };
        for t in tips {
            let _ = walk.push(*t);
        }
        if walk.set_sorting(Sort::TIME).is_err() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for id in walk.take(limit).flatten() {
            let Ok(c) = self.repo.find_commit(id) else {
                continue;
            };
            let time = c.committer().when().seconds();
            if time < since {
                break;
            }
            out.push((id, time, c.parent_ids().collect()));
        }
        out
    }

    /// The targets of the refs matching `glob` (`refs/remotes/*/brain-index`).
    pub fn refs_glob(&self, glob: &str) -> Vec<Oid> {
        let Ok(refs) = self.repo.references_glob(glob) else {
            return Vec::new();
        };
        refs.flatten()
            .filter_map(|r| r.resolve().ok()?.target())
            .collect()
    }

    /// HEAD's history newest first by commit time, down to the first
    /// commit made before `since` (seconds since the epoch), at most
    /// `limit` commits: with who made each and when it was committed. A
    /// history made before `since` is not read.
    pub fn commits_made_since(&self, since: i64, limit: usize) -> Result<Vec<Made>> {
        let tip = match self.repo.head() {
            Ok(h) => h.peel_to_commit()?.id(),
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => {
                return Ok(Vec::new());
            }
            Err(e) => return Err(e.into()),
        };
        let mut walk = self.repo.revwalk()?;
        walk.push(tip)?;
        walk.set_sorting(Sort::TIME)?;
        let mut out = Vec::new();
        for id in walk.take(limit) {
            let c = self.repo.find_commit(id?)?;
            let time = c.committer().when().seconds();
            if time < since {
                break;
            }
            let a = c.author();
            let author = format!(
                "{} <{}>",
                String::from_utf8_lossy(a.name_bytes()),
                String::from_utf8_lossy(a.email_bytes())
            );
            out.push(Made {
                info: CommitInfo {
                    id: c.id(),
                    parent: c.parent_id(0).ok(),
                    merge: c.parent_count() > 1,
                    message: String::from_utf8_lossy(c.message_bytes()).into_owned(),
                },
                author,
                time,
            });
        }
        Ok(out)
    }

    /// Commits reachable from HEAD but not from `base` (all of HEAD's
    /// history when `None`), newest first.
    pub fn commits_since(&self, base: Option<Oid>) -> Result<Vec<CommitInfo>> {
        match self.repo.head() {
            Ok(h) => self.log_range(h.peel_to_commit()?.id(), base),
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => {
                Ok(Vec::new())
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// Whether libgit2 failed on an index it cannot read: one with a mandatory
/// extension it does not know (git's split index `link`, sparse index
/// `sdir`), which git reads.
/// Whether libgit2 failed on an index it does not read.
fn unreadable_index(e: &git2::Error) -> bool {
    e.class() == ErrorClass::Index
}

/// From this size on, [`Git::write_blob`] writes the loose object itself.
const LOOSE_BY_HAND: usize = 1 << 20;

/// The SHA-1 of `bytes` as a git blob: `blob <len>\0` then the bytes.
fn blob_sha1(bytes: &[u8]) -> [u8; 20] {
    use sha1::{Digest, Sha1};
    let mut h = Sha1::new();
    h.update(format!("blob {}\0", bytes.len()).as_bytes());
    h.update(bytes);
    h.finalize().into()
}

/// Writes a loose blob object under `objects/`: zlib of header and bytes,
/// into a temporary file of the fan-out directory, read-only, then renamed
/// to its name. An object already there is left as it is.
fn write_loose_blob(objects: &Path, bytes: &[u8]) -> Result<Oid> {
    use flate2::{Compression, write::ZlibEncoder};
    use std::io::Write;

    let id = Oid::from_bytes(&blob_sha1(bytes))?;
    let hex = id.to_string();
    let dir = objects.join(&hex[..2]);
    let path = dir.join(&hex[2..]);
    if path.exists() {
        return Ok(id);
    }
    let io =
        |what: &str, e: std::io::Error| Error::io(format!("cannot {what} in {}", dir.display()), e);
    std::fs::create_dir_all(&dir).map_err(|e| io("create the object directory", e))?;
    let tmp = dir.join(format!("tmp_obj_bsi_{}", std::process::id()));
    let written = (|| {
        let file = std::fs::File::create(&tmp)?;
        let mut z = ZlibEncoder::new(
            std::io::BufWriter::with_capacity(1 << 16, file),
            Compression::fast(),
        );
        z.write_all(format!("blob {}\0", bytes.len()).as_bytes())?;
        z.write_all(bytes)?;
        let file = z
            .finish()?
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)?;
        let mut perms = file.metadata()?.permissions();
        perms.set_readonly(true);
        file.set_permissions(perms)?;
        std::fs::rename(&tmp, &path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io("write a blob", e));
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_dash_c_values_are_read_from_the_environment() {
        let p = r#"'alias.e'=''\!'x' 'bsi.hookMode'='warn' 'x.y'='a b'\''c' 'old.form=v'"#;
        assert_eq!(
            command_line_config(p, "bsi.hookmode").as_deref(),
            Some("warn")
        );
        assert_eq!(command_line_config(p, "x.y").as_deref(), Some("a b'c"));
        assert_eq!(command_line_config(p, "alias.e").as_deref(), Some("!x"));
        assert_eq!(command_line_config(p, "old.form").as_deref(), Some("v"));
        assert_eq!(command_line_config(p, "none.such"), None);
        let twice = "'bsi.hookMode'='warn' 'bsi.hookmode'='off'";
        assert_eq!(
            command_line_config(twice, "bsi.hookMode").as_deref(),
            Some("off")
        );
    }

    #[test]
    fn the_blob_id_is_gits() {
        for data in [&b""[..], b"hello\n", &vec![b'x'; 70_000]] {
            assert_eq!(
                Git::hash(data).expect("hash"),
                Oid::hash_object(ObjectType::Blob, data).expect("libgit2 hash")
            );
        }
    }

    #[test]
    fn a_commit_dated_behind_at_the_tip_does_not_end_the_walk_of_what_was_made_since() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init(dir.path()).expect("init");
        let tree = repo
            .find_tree(repo.treebuilder(None).expect("tb").write().expect("tree"))
            .expect("tree");
        // Made at 1000, 2000, 2001; then one by a clock behind, at 500.
        let mut parent: Option<git2::Commit<'_>> = None;
        for (i, at) in [1000, 2000, 2001, 500].into_iter().enumerate() {
            let sig = git2::Signature::new("t", "t@x", &git2::Time::new(at, 0)).expect("sig");
            let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
            let id = repo
                .commit(None, &sig, &sig, &format!("c{i}"), &tree, &parents)
                .expect("commit");
            parent = Some(repo.find_commit(id).expect("commit"));
        }
        let tip = parent.expect("tip").id();
        let git = Git::discover(dir.path()).expect("open");
        let names =
            |v: Vec<CommitInfo>| -> Vec<String> { v.into_iter().map(|c| c.message).collect() };
        // By dates alone the walk would end at the tip.
        assert_eq!(
            names(git.made_since(tip, 1999, (0, 10)).expect("walk")),
            Vec::<String>::new()
        );
        // Read at least two whatever their dates, then on while made since.
        assert_eq!(
            names(git.made_since(tip, 1999, (2, 10)).expect("walk")),
            ["c3", "c2", "c1"]
        );
        assert_eq!(
            names(git.made_since(tip, 0, (2, 3)).expect("walk")),
            ["c3", "c2", "c1"]
        );
    }

    #[test]
    fn a_blob_written_by_hand_is_the_one_libgit2_reads() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init(dir.path()).expect("init");
        let data: Vec<u8> = (0..LOOSE_BY_HAND + 1000).map(|i| (i % 251) as u8).collect();
        let id = write_loose_blob(&dir.path().join(".git/objects"), &data).expect("write");
        assert_eq!(id, Oid::hash_object(ObjectType::Blob, &data).expect("hash"));
        assert_eq!(repo.find_blob(id).expect("blob").content(), &data[..]);
        // Written again: the object is there already, nothing changes.
        assert_eq!(
            write_loose_blob(&dir.path().join(".git/objects"), &data).expect("again"),
            id
        );
    }
}
