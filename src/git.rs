//! The only module that talks to git2: finding the repository, reading and
//! writing the registry branch (blob, tree, commit and a compare-and-swap of
//! its reference; never the index or a work tree), and reading changes
//! (staged, in the work tree, or made by a commit) with their hunks, for the
//! hooks and `bsi verify`.

use std::path::{Path, PathBuf};

use git2::{
    Delta, Diff, DiffOptions, ErrorCode, FileMode, Index, ObjectType, Repository, RepositoryState,
    Signature, Sort,
};

/// A git object id: the one git2 type the rest of bsi handles, through here.
pub use git2::Oid;

use crate::error::{Error, Result};

/// The repository that holds a brain.
pub struct Git {
    repo: Repository,
    /// The time bsi's commits carry, when the clock is pinned (`BSI_NOW`).
    clock: Option<git2::Time>,
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
    /// `git commit PATHS` and `-i`). During a merge, a file the index takes
    /// as it is on the merged branch is not counted: that branch's commits
    /// were checked when they were made.
    Staged(Option<&'p Path>),
    /// The work tree (with untracked files) against HEAD.
    Worktree,
    /// A commit against its first parent.
    Commit(Oid),
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
            Ok(repo) => Ok(Git { repo, clock: None }),
            Err(e) if e.code() == ErrorCode::NotFound => Err(Error::NotARepo(dir.to_path_buf())),
            Err(e) => Err(e.into()),
        }
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

    /// The content of a blob.
    pub fn blob_bytes(&self, id: Oid) -> Result<Vec<u8>> {
        Ok(self.repo.find_blob(id)?.content().to_vec())
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

    /// The blob `rel` has in `commit`, if any.
    pub fn blob_id_at(&self, commit: Oid, rel: &str) -> Result<Option<Oid>> {
        let tree = self.repo.find_commit(commit)?.tree()?;
        match tree.get_path(Path::new(rel)) {
            Ok(entry) if entry.kind() == Some(ObjectType::Blob) => Ok(Some(entry.id())),
            Ok(_) => Ok(None),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
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
        let main = Repository::open(self.repo.commondir()).ok()?;
        if !main.is_bare()
            && on(&main, refname)
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
        let cfg = self.repo.config().ok()?;
        cfg.get_string(key).ok().filter(|v| !v.trim().is_empty())
    }

    /// Sets a value in the repository's own configuration (`.git/config`).
    pub fn set_config(&self, key: &str, value: &str) -> Result<()> {
        let mut cfg = self.repo.config()?.open_level(git2::ConfigLevel::Local)?;
        cfg.set_str(key, value)?;
        Ok(())
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

    /// Commits reachable from `tip` but not from `hide`, newest first.
    pub fn log_range(&self, tip: Oid, hide: Option<Oid>) -> Result<Vec<CommitInfo>> {
        let mut walk = self.repo.revwalk()?;
        walk.push(tip)?;
        if let Some(h) = hide {
            walk.hide(h)?;
        }
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)?;
        let mut out = Vec::new();
        for id in walk {
            let c = self.repo.find_commit(id?)?;
            out.push(CommitInfo {
                id: c.id(),
                parent: c.parent_id(0).ok(),
                merge: c.parent_count() > 1,
                message: String::from_utf8_lossy(c.message_bytes()).into_owned(),
            });
        }
        Ok(out)
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
        if let Ok(main) = Repository::open(self.repo.commondir())
            && !main.is_bare()
        {
            add(&main);
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
    pub fn file_at(&self, commit: Oid, rel: &str) -> Result<Option<Vec<u8>>> {
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
        let repo = &self.repo;
        let parent = match parent {
            Some(id) => Some(repo.find_commit(id)?),
            None => None,
        };
        let base = match &parent {
            Some(p) => p.tree()?,
            None => repo.find_tree(repo.treebuilder(None)?.write()?)?,
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
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
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

    /// Deletes the reference `name` if it exists.
    pub fn delete_ref(&self, name: &str) -> Result<()> {
        match self.repo.find_reference(name) {
            Ok(mut r) => Ok(r.delete()?),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether `rel` is tracked in this work tree: in HEAD's tree or in the
    /// index.
    pub fn tracks(&self, rel: &str) -> Result<bool> {
        if self.head_state(rel)?.blob.is_some() {
            return Ok(true);
        }
        Ok(self.repo.index()?.get_path(Path::new(rel), 0).is_some())
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
        let mut index = self.repo.index()?;
        self.move_ref(
            &name,
            commit,
            Some(parent.id()),
            message.lines().next().unwrap_or(""),
        )?;
        if index.get_path(Path::new(rel), 0).is_some() {
            index.remove_path(Path::new(rel))?;
            index.write()?;
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

    /// The directory git runs hooks from: `core.hooksPath` (relative to the
    /// work tree root, `~` expanded), else `hooks/` in the common git
    /// directory, shared by all work trees.
    pub fn hooks_dir(&self) -> Result<PathBuf> {
        let cfg = self.repo.config()?.snapshot()?;
        match cfg.get_path("core.hooksPath") {
            Ok(p) if p.is_absolute() => Ok(p),
            Ok(p) => Ok(self.workdir()?.join(p)),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(self.repo.commondir().join("hooks")),
            Err(e) => Err(e.into()),
        }
    }

    /// The changed files of `of`: a comparison of ids, no content read.
    pub fn changes(&self, of: ChangesOf<'_>) -> Result<Vec<Change>> {
        let repo = &self.repo;
        let mut opts = DiffOptions::new();
        opts.context_lines(0)
            .include_typechange(true)
            .ignore_submodules(true);
        let mut merged: Option<git2::Tree<'_>> = None;
        // A work-tree side's id may be computed without the blob being
        // stored: its text is read from the file.
        let from_workdir = matches!(of, ChangesOf::Worktree);
        let diff: Diff<'_> = match of {
            ChangesOf::Staged(index_file) => {
                let head = self.head_tree()?;
                let index = match index_file {
                    Some(p) => Index::open(p)?,
                    None => repo.index()?,
                };
                if let Ok(id) = repo.refname_to_id("MERGE_HEAD") {
                    merged = Some(repo.find_commit(id)?.tree()?);
                }
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
            if let Some(tree) = &merged {
                let theirs = tree.get_path(fs_path).ok().map(|e| e.id());
                if theirs == new_blob {
                    continue;
                }
            }
            out.push(Change {
                path,
                deleted,
                new_blob,
                old_blob,
            });
        }
        Ok(out)
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

    /// Walks HEAD's first-parent chain, newest first, until `f` returns false.
    pub fn walk_first_parents(&self, f: &mut dyn FnMut(&CommitInfo) -> Result<bool>) -> Result<()> {
        let mut next = match self.repo.head() {
            Ok(h) => Some(h.peel_to_commit()?),
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => None,
            Err(e) => return Err(e.into()),
        };
        while let Some(c) = next {
            let parent = c.parent(0).ok();
            let info = CommitInfo {
                id: c.id(),
                parent: parent.as_ref().map(git2::Commit::id),
                merge: c.parent_count() > 1,
                message: String::from_utf8_lossy(c.message_bytes()).into_owned(),
            };
            if !f(&info)? {
                break;
            }
            next = parent;
        }
        Ok(())
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
    fn the_blob_id_is_gits() {
        for data in [&b""[..], b"hello\n", &vec![b'x'; 70_000]] {
            assert_eq!(
                Git::hash(data).expect("hash"),
                Oid::hash_object(ObjectType::Blob, data).expect("libgit2 hash")
            );
        }
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
