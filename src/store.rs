//! Where the registry lives and how a change reaches disk and git: the brain's
//! paths, the writer lock, the uncommitted-edit check, the atomic write, the
//! commit, and the repair of a write that a dead bsi left unfinished.
//!
//! A write goes: lock → repair leftovers → read and check → plan (pure) →
//! intent record (in the lock file) → temp file + fsync → rename → commit →
//! index entry → intent cleared → unlock. Each step that fails undoes the ones before it.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use git2::Oid;

use crate::error::{Error, Result};
use crate::git::{Git, HeadState};
use crate::registry::{self, REGISTRY_FILE, Registry};

/// A brain: the registry file and the repository that versions it.
pub struct Brain {
    /// The repository.
    pub git: Git,
    /// Absolute path of the registry file.
    pub registry: PathBuf,
    /// Directory holding the registry: scopes are relative to it.
    pub root: PathBuf,
    /// The registry's path relative to the work tree root, with `/`.
    pub rel: String,
    /// The work tree root.
    pub workdir: PathBuf,
}

/// The registry as read for a command, with what HEAD held when it was read.
pub struct Loaded {
    /// The parsed registry.
    pub registry: Registry,
    /// HEAD when it was read.
    pub head: HeadState,
}

/// How long to wait for another bsi or git to let go of a lock.
const LOCK_WAIT: Duration = Duration::from_secs(30);
/// From this registry size on, the temp file is written on a second thread
/// while the blob is made.
const OVERLAP_FROM: usize = 256 * 1024;
const INDEX_LOCK_WAIT: Duration = Duration::from_secs(2);

/// Points where a test can make bsi die, to prove a write can be repaired.
/// Set `BSI_FAULT_POINT` to one of these names; bsi then aborts there.
pub const FAULT_POINTS: &[&str] = &[
    "after-lock",
    "after-intent",
    "after-temp",
    "after-rename",
    "after-commit",
    "after-index",
];

fn fault(point: &str) {
    if std::env::var_os("BSI_FAULT_POINT").is_some_and(|v| v == point) {
        std::process::abort();
    }
}

impl Brain {
    /// Finds the brain from `cwd`, or from an explicit registry path.
    pub fn locate(cwd: &Path, registry: Option<&Path>) -> Result<Brain> {
        let (git, registry) = match registry {
            Some(p) => {
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
            }
            None => {
                let git = Git::discover(cwd)?;
                let root = git.workdir()?;
                (git, root.join(REGISTRY_FILE))
            }
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
        let rel = rel_path
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        Ok(Brain {
            git,
            registry,
            root,
            rel,
            workdir,
        })
    }

    /// The registry's path relative to the brain root (its file name).
    pub fn rel_to_root(&self) -> String {
        self.registry
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    fn bsi_dir(&self) -> PathBuf {
        self.git.git_dir().join("bsi")
    }

    /// The writer lock file. While a write is under way it also holds the
    /// write's intent record; it is empty otherwise. Keeping the record in
    /// the file every writer already holds open costs no file creation or
    /// removal on the write path.
    fn lock_path(&self) -> PathBuf {
        self.bsi_dir().join("lock")
    }

    /// The intent record a write left, if any (empty means none).
    fn pending_intent(&self) -> Option<String> {
        fs::read_to_string(self.lock_path())
            .ok()
            .filter(|s| !s.trim().is_empty())
    }

    fn temp_path(&self) -> PathBuf {
        let name = self
            .registry
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| REGISTRY_FILE.into());
        self.root.join(format!(".{name}.bsi-tmp"))
    }

    /// Takes the writer lock: one bsi writes a registry at a time. The lock
    /// is an OS file lock, so it dies with its process.
    pub fn lock(&self) -> Result<WriterLock> {
        let dir = self.bsi_dir();
        fs::create_dir_all(&dir)
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
        let path = self.lock_path();
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(format!("cannot open the lock file {}", path.display()), e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => wait_for_lock(&file, &path)?,
            Err(fs::TryLockError::Error(e)) => {
                return Err(Error::io(format!("cannot lock {}", path.display()), e));
            }
        }
        fault("after-lock");
        Ok(WriterLock { _file: file })
    }

    /// Reads the registry file, or `None` when it does not exist.
    pub fn read_text(&self) -> Result<Option<String>> {
        match fs::read(&self.registry) {
            Ok(bytes) => String::from_utf8(bytes)
                .map(Some)
                .map_err(|e| Error::Registry {
                    path: self.registry.clone(),
                    source: registry::ParseError {
                        line: line_of_byte(e.as_bytes(), e.utf8_error().valid_up_to()),
                        reason: "the file is not valid UTF-8".into(),
                    },
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(
                format!("cannot read {}", self.registry.display()),
                e,
            )),
        }
    }

    /// Reads and parses the registry for a read-only command. Uncommitted
    /// edits are read as they are.
    ///
    /// While the writer lock file holds a record — a write under way, or one
    /// a dead bsi left — the file may hold a change no commit has: the
    /// committed registry is read instead. A write under way is not waited
    /// for; a dead one is repaired by the next write command.
    pub fn read(&self) -> Result<Registry> {
        if self.pending_intent().is_some() {
            let head = self.git.head_state(&self.rel)?;
            if let Some(blob) = head.blob {
                let bytes = self.git.blob_bytes(blob)?;
                let running = File::open(self.lock_path()).is_ok_and(|f| {
                    matches!(f.try_lock_shared(), Err(fs::TryLockError::WouldBlock))
                });
                if !running {
                    eprintln!(
                        "warning: a bsi write was interrupted; showing the committed registry (the next bsi write command repairs the file)"
                    );
                }
                let text = String::from_utf8(bytes).map_err(|_| Error::Registry {
                    path: self.registry.clone(),
                    source: registry::ParseError {
                        line: 0,
                        reason: "the committed registry is not valid UTF-8".into(),
                    },
                })?;
                return self.parse(text);
            }
        }
        let text = self
            .read_text()?
            .ok_or_else(|| Error::NoRegistry(self.registry.clone()))?;
        self.parse(text)
    }

    fn parse(&self, text: String) -> Result<Registry> {
        registry::parse(text).map_err(|source| Error::Registry {
            path: self.registry.clone(),
            source,
        })
    }

    /// Reads the registry for a write, under the lock: repairs what a dead bsi
    /// left, then refuses if the file or its index entry differs from HEAD.
    pub fn load_for_write(&self, _lock: &WriterLock) -> Result<Loaded> {
        self.git.ensure_clean_state()?;
        if let Some(done) = self.repair()? {
            eprintln!("note: {done}");
        }
        let head = self.git.head_state(&self.rel)?;
        let meta = fs::metadata(&self.registry).ok();
        self.ensure_writable(meta.as_ref())?;
        let index = self.git.index_entry(&self.rel, meta.as_ref())?;
        let text = self.read_text()?;
        let (text, head_blob) = match (text, head.blob) {
            (None, None) => return Err(Error::NoRegistry(self.registry.clone())),
            (None, Some(_)) => return Err(self.dirty("deleted from the work tree")),
            (Some(_), None) => return Err(self.dirty("never committed")),
            (Some(t), Some(b)) => (t, b),
        };
        match index {
            Some((id, _)) if id != head_blob => return Err(self.dirty("staged")),
            None => return Err(self.dirty("removed from the index")),
            Some((_, true)) => {}
            Some((_, false)) => {
                if Git::hash(text.as_bytes())? != head_blob {
                    return Err(self.dirty("modified"));
                }
            }
        }
        let registry = self.parse(text)?;
        Ok(Loaded { registry, head })
    }

    /// A registry or directory marked read-only is a person's decision:
    /// bsi honours it even where the OS would let it write (as root).
    fn ensure_writable(&self, meta: Option<&fs::Metadata>) -> Result<()> {
        let dir_ro = fs::metadata(&self.root).is_ok_and(|m| m.permissions().readonly());
        let file_ro = meta.is_some_and(|m| m.permissions().readonly());
        if file_ro || dir_ro {
            let what = if file_ro { "file" } else { "directory" };
            return Err(Error::Refused(
                format!(
                    "the registry {what} is read-only ({})",
                    if file_ro {
                        self.registry.display()
                    } else {
                        self.root.display()
                    }
                ),
                "make it writable (chmod u+w) if bsi should write it, then retry".into(),
            ));
        }
        Ok(())
    }

    fn dirty(&self, what: &'static str) -> Error {
        Error::DirtyRegistry {
            path: self.registry.clone(),
            what,
        }
    }

    /// Writes `text` as the new registry and commits it with `message`.
    /// On any failure the file, HEAD and the index are as they were.
    pub fn commit(
        &self,
        _lock: &WriterLock,
        loaded: &Loaded,
        text: &str,
        message: &str,
    ) -> Result<Oid> {
        let old_blob = loaded.head.blob;
        // The blob goes into the object database first, hashed once from
        // the bytes in memory; its id is what the intent, the commit and the
        // index entry record. Should a later step fail, it is an unreferenced
        // object that git's garbage collection drops. Meanwhile another
        // thread writes and syncs the temp file: nothing is replaced before
        // the intent is on disk, and the two costs, which both grow with the
        // registry, overlap.
        let tmp = self.temp_path();
        let registry = self.registry.as_path();
        let (blob, temp) = if text.len() < OVERLAP_FROM {
            // Small: a thread would cost more than it saves.
            let temp = write_temp(&tmp, registry, text.as_bytes());
            (self.git.write_blob(text.as_bytes()), temp)
        } else {
            std::thread::scope(|s| {
                let writer = s.spawn(|| write_temp(&tmp, registry, text.as_bytes()));
                let blob = self.git.write_blob(text.as_bytes());
                let temp = writer.join().unwrap_or_else(|_| {
                    Err(Error::io(
                        format!("cannot write {}", tmp.display()),
                        std::io::Error::other("the writer thread panicked"),
                    ))
                });
                (blob, temp)
            })
        };
        let prepared = temp
            .and(blob)
            .and_then(|id| self.wait_for_index_lock().map(|()| id))
            .and_then(|id| self.write_intent(loaded.head, id).map(|()| id));
        let new_blob = match prepared {
            Ok(id) => id,
            Err(e) => {
                let _ = fs::remove_file(&tmp);
                return Err(e);
            }
        };
        fault("after-intent");
        let old_text = loaded.registry.text();
        if let Err(e) = self.install_temp() {
            self.clear_intent();
            return Err(e);
        }
        fault("after-rename");
        let commit = match self
            .git
            .commit_file(&self.rel, new_blob, loaded.head.commit, message)
        {
            Ok(id) => id,
            Err(e) => {
                self.undo_file(old_text);
                return Err(e);
            }
        };
        fault("after-commit");
        if let Err(e) = self.set_index_with_retry(new_blob) {
            // Put everything back: HEAD, then the file.
            let _ = self.git.reset_head(commit, loaded.head.commit);
            self.undo_file(old_text);
            if let Some(b) = old_blob {
                let _ = self.git.set_index_entry(&self.rel, b, &self.registry);
            }
            return Err(e);
        }
        fault("after-index");
        self.clear_intent();
        Ok(commit)
    }

    /// Takes a registry change that is on the remote (commit `published`,
    /// built on the remote tip `tip`) into the local branch: a fast-forward
    /// when HEAD was exactly at `tip`, otherwise a commit of the same
    /// registry text on HEAD (that file only), or nothing when the registry
    /// already reads so. Returns the commit HEAD now has.
    pub fn adopt(
        &self,
        lock: &WriterLock,
        loaded: &Loaded,
        tip: Oid,
        published: Oid,
        text: &str,
        message: &str,
    ) -> Result<Oid> {
        if loaded.head.commit == Some(tip) {
            let new_blob = match self.git.blob_id_at(published, &self.rel)? {
                Some(id) => id,
                None => Git::hash(text.as_bytes())?,
            };
            self.wait_for_index_lock()?;
            self.write_intent(loaded.head, new_blob)?;
            let old_text = loaded.registry.text();
            if let Err(e) = self.write_atomic(text.as_bytes()) {
                self.clear_intent();
                return Err(e);
            }
            if let Err(e) = self.git.fast_forward(tip, published) {
                self.undo_file(old_text);
                return Err(e);
            }
            self.set_index_with_retry(new_blob)?;
            self.clear_intent();
            return Ok(published);
        }
        match loaded.head.commit {
            Some(head) if loaded.registry.text() == text => Ok(head),
            _ => self.commit(lock, loaded, text, message),
        }
    }

    fn state_path(&self, name: &str) -> PathBuf {
        self.bsi_dir().join(name)
    }

    /// Registry changes recorded locally that the remote has not received,
    /// one summary line each, oldest first.
    pub fn pending(&self) -> Vec<String> {
        fs::read_to_string(self.state_path("pending"))
            .map(|s| {
                s.lines()
                    .filter(|l| !l.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Records a change that could not be published.
    pub fn add_pending(&self, summary: &str) -> Result<()> {
        let path = self.state_path("pending");
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
        writeln!(f, "{}", summary.replace(['\n', '\r'], " "))
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
    }

    /// The remote holds every local change: nothing is pending, and `now`
    /// is the time of the last agreement with it.
    pub fn mark_synced(&self, now: chrono::DateTime<chrono::FixedOffset>) -> Result<()> {
        let _ = fs::remove_file(self.state_path("pending"));
        let path = self.state_path("last-sync");
        fs::write(&path, format!("{}\n", now.to_rfc3339()))
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
    }

    /// When the registry last agreed with the remote.
    pub fn last_sync(&self) -> Option<chrono::DateTime<chrono::FixedOffset>> {
        let s = fs::read_to_string(self.state_path("last-sync")).ok()?;
        chrono::DateTime::parse_from_rfc3339(s.trim()).ok()
    }

    /// Registers the registry's merge driver in this clone: the attribute
    /// in `.git/info/attributes` and `merge.bsi.*` in `.git/config`. Values
    /// the user set are kept. Returns whether anything was added.
    pub fn register_merge_driver(&self) -> Result<bool> {
        let mut added = false;
        if self.git.config_string("merge.bsi.driver").is_none() {
            self.git.set_config(
                "merge.bsi.name",
                "bsi registry merge (rows of BRAIN-INDEX.md)",
            )?;
            self.git
                .set_config("merge.bsi.driver", "bsi merge-driver %O %A %B")?;
            added = true;
        }
        let info = self.git.git_dir().join("info");
        let path = info.join("attributes");
        let line = format!("/{} merge=bsi", self.rel.replace(' ', "[[:space:]]"));
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

    /// Creates the registry for `bsi init`: the file must not exist.
    pub fn create(&self, _lock: &WriterLock, text: &str, message: &str) -> Result<Oid> {
        self.git.ensure_clean_state()?;
        if self.registry.exists() {
            return Err(Error::RegistryExists(self.registry.clone()));
        }
        let head = self.git.head_state(&self.rel)?;
        if head.blob.is_some() {
            return Err(self.dirty("deleted from the work tree"));
        }
        self.wait_for_index_lock()?;
        let new_blob = self.git.write_blob(text.as_bytes())?;
        self.write_intent(head, new_blob)?;
        self.write_atomic(text.as_bytes())?;
        let commit = match self
            .git
            .commit_file(&self.rel, new_blob, head.commit, message)
        {
            Ok(id) => id,
            Err(e) => {
                let _ = fs::remove_file(&self.registry);
                self.clear_intent();
                return Err(e);
            }
        };
        if let Err(e) = self.set_index_with_retry(new_blob) {
            let _ = self.git.reset_head(commit, head.commit);
            let _ = fs::remove_file(&self.registry);
            self.clear_intent();
            return Err(e);
        }
        self.clear_intent();
        Ok(commit)
    }

    fn undo_file(&self, old: &str) {
        let _ = self.write_atomic(old.as_bytes());
        self.clear_intent();
    }

    fn set_index_with_retry(&self, blob: Oid) -> Result<()> {
        let start = Instant::now();
        loop {
            match self.git.set_index_entry(&self.rel, blob, &self.registry) {
                Ok(()) => return Ok(()),
                Err(Error::Git(e))
                    if e.code() == git2::ErrorCode::Locked && start.elapsed() < INDEX_LOCK_WAIT =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(Error::Git(e)) if e.code() == git2::ErrorCode::Locked => {
                    return Err(Error::Locked {
                        what: "the git index",
                        path: self.git.index_lock_path(),
                    });
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn wait_for_index_lock(&self) -> Result<()> {
        let path = self.git.index_lock_path();
        let start = Instant::now();
        while path.exists() {
            if start.elapsed() >= INDEX_LOCK_WAIT {
                return Err(Error::Locked {
                    what: "the git index",
                    path,
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Temp file, fsync, rename over the registry, fsync the directory.
    fn write_atomic(&self, bytes: &[u8]) -> Result<()> {
        write_temp(&self.temp_path(), &self.registry, bytes)?;
        self.install_temp()
    }

    /// Renames the temp file written by [`write_temp`] over the registry.
    /// The temp file is removed on failure.
    fn install_temp(&self) -> Result<()> {
        let tmp = self.temp_path();
        fault("after-temp");
        if let Err(e) = fs::rename(&tmp, &self.registry) {
            let _ = fs::remove_file(&tmp);
            return Err(Error::io(
                format!("cannot replace {}", self.registry.display()),
                e,
            ));
        }
        // No fsync of the directory, nor of the intent record: what they
        // would protect is a power cut, and against that the repository
        // itself is as durable as git makes it (libgit2 does not sync
        // objects or refs). A killed process loses nothing the page cache
        // holds; the temp file is synced so the rename never exposes a
        // partly written registry.
        Ok(())
    }

    fn write_intent(&self, head: HeadState, new_blob: Oid) -> Result<()> {
        let path = self.lock_path();
        let body = format!(
            "head {}\nold {}\nnew {}\n",
            head.commit
                .map(|c| c.to_string())
                .unwrap_or_else(|| "-".into()),
            head.blob
                .map(|c| c.to_string())
                .unwrap_or_else(|| "-".into()),
            new_blob
        );
        OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&path)
            .and_then(|mut f| f.write_all(body.as_bytes()))
            .map_err(|e| {
                Error::io(
                    format!("cannot write the intent record to {}", path.display()),
                    e,
                )
            })
    }

    fn clear_intent(&self) {
        let _ = OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(self.lock_path());
    }

    /// A bsi killed while it (libgit2, or the `git fetch` it ran) updated
    /// the index, HEAD or a branch leaves that update's `.lock` file behind,
    /// and git then refuses every later update. The record in the writer
    /// lock file says a bsi died mid-operation; a lock made after it that is
    /// still there after a second (a live git holds one for milliseconds) is
    /// that bsi's, and is removed.
    fn clear_dead_locks(&self) {
        let made = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
        if self.pending_intent().is_none() {
            return;
        }
        let Some(since) = made(&self.lock_path()) else {
            return;
        };
        let mut left: Vec<PathBuf> = self
            .git
            .update_locks()
            .into_iter()
            .filter(|l| made(l).is_some_and(|t| t >= since))
            .collect();
        // A git that is alive keeps its lock file open (`git commit` does so
        // while its editor is open, for minutes): such a lock is never
        // touched. Where open files cannot be listed, a live git is told by
        // its lock going away within a second.
        left.retain(|l| !held_open(l).unwrap_or(false));
        if !Path::new("/proc/self/fd").is_dir() {
            let start = Instant::now();
            while !left.is_empty() && start.elapsed() < Duration::from_secs(1) {
                std::thread::sleep(Duration::from_millis(20));
                left.retain(|l| made(l).is_some_and(|t| t >= since));
            }
        }
        for l in left {
            let _ = fs::remove_file(l);
        }
    }

    /// Records, for the duration of the returned guard, that a bsi is at
    /// work on this repository beyond the registry file (fetching, pushing,
    /// moving the branch): if it dies, the next bsi clears the locks it left.
    pub fn busy<'l>(&self, lock: &'l WriterLock, what: &str) -> Result<Busy<'l>> {
        let path = self.lock_path();
        OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&path)
            .and_then(|mut f| writeln!(f, "busy {what}"))
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
        Ok(Busy { path, _lock: lock })
    }

    /// Finishes or undoes a write that a bsi process did not complete, as
    /// recorded in its intent. Returns what was done, for the user.
    pub fn repair(&self) -> Result<Option<String>> {
        let _ = fs::remove_file(self.temp_path());
        let Some(intent) = self.pending_intent() else {
            return Ok(None);
        };
        let field = |k: &str| {
            intent
                .lines()
                .find_map(|l| l.strip_prefix(k).map(|v| v.trim().to_string()))
                .and_then(|v| Oid::from_str(&v).ok())
        };
        let (old, new) = (field("old "), field("new "));
        self.clear_dead_locks();
        let Some(new) = new else {
            self.clear_intent();
            return Ok(None);
        };
        let head = self.git.head_state(&self.rel)?;
        let on_disk = match self.read_text() {
            Ok(Some(t)) => Some(Git::hash(t.as_bytes())?),
            _ => None,
        };
        let done = if head.blob == Some(new) {
            // The commit landed: only the index may lag behind.
            if on_disk == Some(new) {
                self.set_index_with_retry(new)?;
            }
            Some("finished an interrupted bsi write (its commit had landed)".to_string())
        } else if on_disk == Some(new) {
            // Renamed but never committed: put the committed file back.
            match old {
                Some(old) => {
                    let bytes = self.git.blob_bytes(old)?;
                    self.write_atomic(&bytes)?;
                    self.set_index_with_retry(old)?;
                }
                None => {
                    let _ = fs::remove_file(&self.registry);
                }
            }
            Some("rolled back an interrupted bsi write that never reached a commit".to_string())
        } else {
            None
        };
        self.clear_intent();
        Ok(done)
    }
}

/// Writes `bytes` to the temp file `tmp` next to `registry`, with the
/// registry's permissions, and syncs it. The temp file is removed on failure.
fn write_temp(tmp: &Path, registry: &Path, bytes: &[u8]) -> Result<()> {
    let ctx = |what: &str| format!("cannot {what} {}", tmp.display());
    let res = (|| {
        let mut f = File::create(tmp).map_err(|e| Error::io(ctx("create"), e))?;
        f.write_all(bytes).map_err(|e| Error::io(ctx("write"), e))?;
        if let Ok(meta) = fs::metadata(registry) {
            let _ = f.set_permissions(meta.permissions());
        }
        f.sync_all().map_err(|e| Error::io(ctx("sync"), e))
    })();
    if res.is_err() {
        let _ = fs::remove_file(tmp);
    }
    res
}

/// Waits up to [`LOCK_WAIT`] for the writer lock held by another process.
/// The wait is in the kernel, on a second handle of the same open file (so
/// the lock it takes is `file`'s): the lock passes to a waiter the moment
/// its holder lets go, where polling would leave it idle between polls and
/// make a crowd of writers take longer than the sum of their work.
fn wait_for_lock(file: &File, path: &Path) -> Result<()> {
    let cannot = |e| Error::io(format!("cannot lock {}", path.display()), e);
    let handle = file.try_clone().map_err(cannot)?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // Past the deadline nobody listens; the lock, if it comes, goes
        // with the last handle of the file.
        let _ = tx.send(handle.lock());
    });
    match rx.recv_timeout(LOCK_WAIT) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(cannot(e)),
        Err(_) => Err(Error::Locked {
            what: "the registry",
            path: path.to_path_buf(),
        }),
    }
}

/// See [`Brain::busy`]: clears the record when the work is done.
pub struct Busy<'l> {
    path: PathBuf,
    _lock: &'l WriterLock,
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        let _ = OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&self.path);
    }
}

/// Held while a bsi process reads, checks, writes and commits the registry.
pub struct WriterLock {
    _file: File,
}

/// Whether some process has `path` open, from `/proc/*/fd`; `None` where
/// that cannot be known (no `/proc`).
fn held_open(path: &Path) -> Option<bool> {
    let procs = fs::read_dir("/proc").ok()?;
    let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    for p in procs.flatten() {
        if !p
            .file_name()
            .to_string_lossy()
            .bytes()
            .all(|b| b.is_ascii_digit())
        {
            continue;
        }
        let Ok(fds) = fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        if fds
            .flatten()
            .any(|fd| fs::read_link(fd.path()).is_ok_and(|t| t == target))
        {
            return Some(true);
        }
    }
    Some(false)
}

fn line_of_byte(bytes: &[u8], at: usize) -> usize {
    bytes[..at.min(bytes.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
