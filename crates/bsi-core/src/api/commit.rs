//! `bsi commit`: a session commits its own lines from a work tree several
//! sessions share. Of the work tree's uncommitted changes (under the paths
//! asked for), the hunks inside the session's claims are committed — whole
//! files, sections, new files in claimed folders — with the session's
//! trailer, through `git commit` (so every hook runs, bsi's guard among
//! them); every other hunk stays in the work tree, as it is, and is said:
//! another session's, with its holder, or in no one's claim, with the
//! claim that would make it the session's.
//!
//! The commit is made from an index of its own (HEAD's tree and the own
//! hunks), so what other sessions staged is not committed; afterwards the
//! work tree's index takes the committed text of the committed paths, as
//! `git commit PATH` leaves it.

use crate::error::{Error, Result};
use crate::git::ChangesOf;
use crate::git_cli::{self, IndexEntry};
use crate::guard::discard::within;
use crate::guard::own::{Taken, take};
use crate::guard::{ClaimIndex, Finding};
use crate::publish;
use crate::scope::Scope;
use crate::trailer;

use super::Site;

/// What is asked.
#[derive(Debug, Clone)]
pub struct Request {
    /// The session that commits.
    pub session: String,
    /// The commit message (the session's trailer is added); `None`: one
    /// that names the session and the files.
    pub message: Option<String>,
    /// Pathspecs from the work tree root (`""`: all of it); empty: all.
    pub paths: Vec<String>,
}

/// One file of the commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// From the brain root.
    pub path: String,
    /// The whole change of the file (else some of its hunks).
    pub whole: bool,
}

/// A change left in the work tree, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Left {
    /// From the brain root.
    pub path: String,
    /// Where in the file, when a part of it (`lines 3-5 under `Goals``).
    pub lines: Option<String>,
    /// The session that holds it; `None`: in no one's claim.
    pub holder: Option<String>,
    /// The narrowest scope that would make it the session's, when it is in
    /// no one's claim.
    pub claim: Option<Scope>,
}

/// What was committed.
#[derive(Debug, Clone)]
pub struct Committed {
    /// The new commit; `None` when nothing of the session's was there to
    /// commit (nothing was written).
    pub commit: Option<String>,
    /// Its files.
    pub files: Vec<File>,
    /// What stayed in the work tree.
    pub left: Vec<Left>,
}

/// Commits the session's own hunks (see the module).
pub fn own(site: &Site<'_>, req: &Request) -> Result<Committed> {
    let brain = site.brain;
    let git = &brain.git;
    // The work tree's index is git's to serialise: held from the reading of
    // HEAD to the index written after the commit, so no `git commit` (nor
    // another `bsi commit`) of this work tree lands in between, which would
    // have this commit's tree undo it.
    let _index = IndexLock::take(&git.git_dir())?;
    let (view, _) = publish::read(brain, site.settings, site.now, false)?;
    let reg = &view.registry;
    let index = ClaimIndex::new(reg);
    let head = git.head_commit()?;
    let mut entries = Vec::new();
    let mut files = Vec::new();
    let mut left = Vec::new();
    for change in git.changes(ChangesOf::Worktree)? {
        if !req.paths.is_empty() && !req.paths.iter().any(|p| within(&change.path, p)) {
            continue;
        }
        let Some(rel) = brain.brain_path(&change.path).map(str::to_string) else {
            continue;
        };
        if rel == brain.copy_name() {
            continue;
        }
        let abs = brain.workdir.join(&change.path);
        let meta = std::fs::symlink_metadata(&abs).ok();
        if meta.as_ref().is_some_and(|m| !m.is_file()) && !change.deleted {
            // A link or a folder: not a file bsi reads lines of.
            continue;
        }
        let old = git.old_text(&change);
        let text = std::fs::read(&abs)
            .ok()
            .and_then(|b| String::from_utf8(b).ok());
        let new = match (change.deleted, text) {
            (true, _) => None,
            (false, Some(t)) => Some(t),
            // Not text: judged whole.
            (false, None) => {
                let found = crate::guard::check_change(
                    &index,
                    Some(&req.session),
                    &rel,
                    None,
                    None,
                    &brain.markdown,
                );
                if found.is_empty() {
                    let bytes = std::fs::read(&abs)
                        .map_err(|e| Error::io(format!("cannot read {}", abs.display()), e))?;
                    entries.push(IndexEntry {
                        path: change.path.clone(),
                        blob: Some((mode_of(meta.as_ref()), git.write_blob(&bytes)?.to_string())),
                    });
                    files.push(File {
                        path: rel,
                        whole: true,
                    });
                } else {
                    left.extend(said(&rel, &found));
                }
                continue;
            }
        };
        let old = match (change.old_blob, old) {
            (None, _) => None,
            (Some(_), Some(t)) => Some(t),
            // An old side that is not text: the change is judged whole.
            (Some(_), None) => None,
        };
        match take(
            &index,
            &req.session,
            &rel,
            old.as_deref(),
            new.as_deref(),
            &brain.markdown,
        ) {
            Taken::Whole(text) => {
                entries.push(entry(git, &change.path, text.as_deref(), meta.as_ref())?);
                files.push(File {
                    path: rel,
                    whole: true,
                });
            }
            Taken::Part { text, left: l } => {
                entries.push(entry(git, &change.path, Some(&text), meta.as_ref())?);
                left.extend(said(&rel, &l));
                files.push(File {
                    path: rel,
                    whole: false,
                });
            }
            Taken::Nothing(l) => left.extend(said(&rel, &l)),
        }
    }
    left.dedup();
    if entries.is_empty() {
        return Ok(Committed {
            commit: None,
            files,
            left,
        });
    }
    // An index of the commit's own: HEAD's tree and the own hunks.
    let tmp = git
        .git_dir()
        .join(format!("bsi-commit-{}.index", std::process::id()));
    let _gone = Removed(&tmp);
    let head_hex = head.map(|h| h.to_string());
    git_cli::read_tree(&brain.workdir, &tmp, head_hex.as_deref())?;
    git_cli::update_index(&brain.workdir, Some(&tmp), &entries)?;
    let comment = git
        .config_string("core.commentChar")
        .and_then(|c| c.chars().next())
        .unwrap_or('#');
    let message = req.message.clone().unwrap_or_else(|| {
        let names: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        format!("{}: its lines of {}", req.session, names.join(", "))
    });
    let message =
        trailer::add(&message, trailer::SESSION, &req.session, comment).unwrap_or(message);
    let commit = git_cli::commit_index(
        &brain.workdir,
        &tmp,
        &message,
        &[("BSI_SESSION", req.session.as_str())],
    )?;
    if git
        .head_commit()?
        .and_then(|c| git.parent_ids(c).first().copied())
        != head
    {
        return Err(Error::RepoBusy(format!(
            "commit {} of {}: HEAD moved while it was made (by a command that does not take git's index lock); check `git log -2 --stat`",
            &commit[..commit.len().min(7)],
            req.session
        )));
    }
    // The work tree's index takes what was committed of these paths.
    _index.update(&brain.workdir, &entries)?;
    // What is committed needs no copy any more; what stays does.
    super::keep::refresh_or_say(brain, reg, &req.session);
    Ok(Committed {
        commit: Some(commit),
        files,
        left,
    })
}

/// git's own lock of a work tree's index (`index.lock`), held by bsi: while
/// it stands, no git command of this work tree writes the index or
/// commits from it.
struct IndexLock {
    lock: std::path::PathBuf,
    index: std::path::PathBuf,
}

impl IndexLock {
    /// How long to wait for another git command of the work tree to end.
    const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

    fn take(git_dir: &std::path::Path) -> Result<IndexLock> {
        let index = git_dir.join("index");
        let lock = git_dir.join("index.lock");
        let start = std::time::Instant::now();
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&lock)
            {
                Ok(_) => return Ok(IndexLock { lock, index }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if start.elapsed() >= Self::WAIT {
                        return Err(Error::Locked {
                            what: "the work tree's index (another git command is running)",
                            path: lock,
                        });
                    }
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                Err(e) => {
                    return Err(Error::io(format!("cannot create {}", lock.display()), e));
                }
            }
        }
    }

    /// Sets `entries` in the index, written as git writes it: a new file
    /// that replaces it whole.
    fn update(&self, workdir: &std::path::Path, entries: &[IndexEntry]) -> Result<()> {
        let next = self
            .index
            .with_extension(format!("bsi-{}", std::process::id()));
        let _gone = Removed(&next);
        match std::fs::copy(&self.index, &next) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::io(
                    format!("cannot read {}", self.index.display()),
                    e,
                ));
            }
        }
        git_cli::update_index(workdir, Some(&next), entries)?;
        std::fs::rename(&next, &self.index)
            .map_err(|e| Error::io(format!("cannot write {}", self.index.display()), e))
    }
}

impl Drop for IndexLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.lock);
    }
}

/// Removes a file when dropped.
struct Removed<'p>(&'p std::path::Path);

impl Drop for Removed<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.0);
    }
}

/// The index entry of `path` holding `text` (`None`: removed).
fn entry(
    git: &crate::git::Git,
    path: &str,
    text: Option<&str>,
    meta: Option<&std::fs::Metadata>,
) -> Result<IndexEntry> {
    Ok(IndexEntry {
        path: path.to_string(),
        blob: match text {
            Some(t) => Some((mode_of(meta), git.write_blob(t.as_bytes())?.to_string())),
            None => None,
        },
    })
}

/// A file's mode for the index: executable or not.
fn mode_of(meta: Option<&std::fs::Metadata>) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.is_some_and(|m| m.permissions().mode() & 0o111 != 0) {
            return 0o100_755;
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    0o100_644
}

/// The findings of what was left, as [`Left`]s.
fn said(path: &str, found: &[Finding<'_>]) -> Vec<Left> {
    found
        .iter()
        .filter_map(|f| match f {
            Finding::Claimed { claim, region, .. } => Some(Left {
                path: path.to_string(),
                lines: region.as_ref().map(crate::guard::Region::describe),
                holder: Some(claim.session.clone()),
                claim: None,
            }),
            Finding::Outside { region, .. } => Some(Left {
                path: path.to_string(),
                lines: region.as_ref().map(crate::guard::Region::describe),
                holder: None,
                claim: Some(match region.as_ref().and_then(|r| r.heading.clone()) {
                    Some(h) => Scope::Section {
                        file: path.to_string(),
                        heading: h,
                    },
                    None => Scope::File(path.to_string()),
                }),
            }),
            Finding::HeadingGone { .. } => None,
        })
        .collect()
}
