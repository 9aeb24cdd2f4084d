//! The copy of a session's uncommitted work ([`crate::keep`]): refreshed
//! whenever bsi sees the session's edits — the edit hooks (the text an
//! allowed edit leaves), the stop hooks, `bsi commit`, `close` and
//! `status` (the work tree read) — and put back by `bsi recover`.
//!
//! A copy is one commit with no parent under `refs/bsi/keep/<session>`:
//! `work/<path>` the file as the session left it, `base/<path>` what HEAD
//! had of it then (paths from the work tree root), `scopes` the session's
//! claims then. Each refresh replaces it; nothing piles up, nothing is
//! pushed (bsi pushes its registry branch and its requests by name).

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::git::{ChangesOf, Oid};
use crate::guard::ClaimIndex;
use crate::keep::{self, Kept, Refresh, Restore};
use crate::registry::{Claim, Registry};
use crate::scope::Scope;
use crate::store::Brain;

/// A copy as read: its commit, when it was taken, the session's scopes
/// then, and its files by their path from the work tree root.
struct Copy {
    commit: Oid,
    at: Option<i64>,
    scopes: Vec<Scope>,
    files: BTreeMap<String, Kept>,
}

fn text(bytes: Vec<u8>) -> Option<String> {
    String::from_utf8(bytes).ok()
}

fn read(brain: &Brain, session: &str) -> Result<Option<Copy>> {
    let git = &brain.git;
    let Some(commit) = git.ref_target(&keep::refname(session)) else {
        return Ok(None);
    };
    let bases: BTreeMap<String, Vec<u8>> = git.files_below(commit, "base")?.into_iter().collect();
    let mut files = BTreeMap::new();
    for (path, bytes) in git.files_below(commit, "work")? {
        let (Some(rel), Some(work)) = (brain.brain_path(&path), text(bytes)) else {
            continue;
        };
        let base = bases.get(&path).cloned().and_then(text);
        files.insert(
            path.clone(),
            Kept {
                rel: rel.to_string(),
                base,
                text: work,
            },
        );
    }
    let scopes = git
        .file_at(commit, "scopes")?
        .and_then(text)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| Scope::parse_stored(l).ok())
        .collect();
    Ok(Some(Copy {
        commit,
        at: git.author_time(commit),
        scopes,
        files,
    }))
}

/// The session's claims in `reg` (active and stale).
fn claims_of<'r>(reg: &'r Registry, session: &str) -> Vec<&'r Claim> {
    reg.all_claims()
        .filter(|(c, _)| c.session == session)
        .map(|(c, _)| c)
        .collect()
}

/// Whether one of `scopes` covers the brain file `rel`.
fn covered(scopes: &[&Scope], rel: &str) -> bool {
    scopes.iter().any(|s| match s {
        Scope::Global => true,
        Scope::Dir(d) => rel.starts_with(d.as_str()),
        Scope::File(f) | Scope::Section { file: f, .. } => f == rel,
    })
}

/// The file at `path` (from the work tree root) as text: `Ok(None)` when
/// it is gone, `Err(())` when it is not a regular text file bsi may read
/// (a link is never followed).
fn on_disk(brain: &Brain, path: &str) -> std::result::Result<Option<String>, ()> {
    let abs = brain.workdir.join(path);
    match std::fs::symlink_metadata(&abs) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Ok(m) if m.is_file() => std::fs::read(&abs).ok().and_then(text).map(Some).ok_or(()),
        _ => Err(()),
    }
}

fn at_head(brain: &Brain, head: Option<Oid>, path: &str) -> Result<Option<String>> {
    Ok(match head {
        Some(h) => brain.git.file_at(h, path)?.and_then(text),
        None => None,
    })
}

/// Writes the session's copy: `files` replace it whole (empty: it goes).
fn write(
    brain: &Brain,
    session: &str,
    before: Option<&Copy>,
    scopes: &[&Scope],
    files: &BTreeMap<String, Kept>,
) -> Result<()> {
    let git = &brain.git;
    let name = keep::refname(session);
    let same =
        before.is_some_and(|b| b.files == *files && b.scopes.iter().eq(scopes.iter().copied()));
    if same || (before.is_none() && files.is_empty()) {
        return Ok(());
    }
    if files.is_empty() {
        if let Some(b) = before {
            return git.delete_ref(&name, b.commit);
        }
        return Ok(());
    }
    let scope_text: String = scopes.iter().map(|s| format!("{s}\n")).collect();
    // The tree is written afresh: what the copy had before and has no more
    // goes with it.
    let mut entries: Vec<(String, Vec<u8>)> = vec![("scopes".into(), scope_text.into_bytes())];
    for (path, k) in files {
        entries.push((format!("work/{path}"), k.text.clone().into_bytes()));
        if let Some(b) = &k.base {
            entries.push((format!("base/{path}"), b.clone().into_bytes()));
        }
    }
    let borrowed: Vec<(&str, Option<&[u8]>)> = entries
        .iter()
        .map(|(p, b)| (p.as_str(), Some(b.as_slice())))
        .collect();
    let message = format!(
        "bsi keep: {session}\n\nThe uncommitted work of {session} inside its claims, kept by bsi in\nthis clone (never pushed); `bsi recover {session}` puts it back.\n"
    );
    let commit = git.commit_alone(None, &borrowed, &message)?;
    git.move_ref(&name, commit, before.map(|b| b.commit), "bsi keep")
}

/// After an edit the guard let through: the text `edits` leave (each a
/// brain path and its new text) kept as the session's copy of those files,
/// where they hold lines of the session's that HEAD lacks. Reads no other
/// file: the edit hook's cost.
pub fn edited(brain: &Brain, reg: &Registry, session: &str, edits: &[(&str, &str)]) -> Result<()> {
    let markdown = &brain.markdown;
    let claims = claims_of(reg, session);
    let scopes: Vec<&Scope> = claims.iter().map(|c| &c.scope).collect();
    let edits: Vec<&(&str, &str)> = edits
        .iter()
        .filter(|(rel, _)| covered(&scopes, rel))
        .collect();
    let before = read(brain, session)?;
    if edits.is_empty() && before.is_none() {
        return Ok(());
    }
    let index = ClaimIndex::from_claims(claims.iter().map(|c| (*c, false)));
    let head = brain.git.head_commit()?;
    let mut files = before.as_ref().map(|b| b.files.clone()).unwrap_or_default();
    for (rel, new) in edits {
        let path = brain.work_path(rel);
        let base = at_head(brain, head, &path)?;
        let kept = Kept {
            rel: rel.to_string(),
            base: base.clone(),
            text: new.to_string(),
        };
        // The session's own edit: its text is the copy, when it holds
        // lines of the session's.
        match keep::refresh(
            &index,
            (session, rel),
            None,
            (base.as_deref(), Some(new)),
            markdown,
        ) {
            Refresh::Take => {
                files.insert(path, kept);
            }
            _ => {
                files.remove(&path);
            }
        }
    }
    write(brain, session, before.as_ref(), &scopes, &files)
}

/// The session's copy brought up to the work tree: each changed file inside
/// its claims that holds lines of the session's becomes its copy, unless
/// the copy holds lines of the session's that neither the file nor HEAD
/// has any more (something took them: the copy stays for `bsi recover`).
pub fn refresh(brain: &Brain, reg: &Registry, session: &str) -> Result<()> {
    let markdown = &brain.markdown;
    let claims = claims_of(reg, session);
    let scopes: Vec<&Scope> = claims.iter().map(|c| &c.scope).collect();
    let before = read(brain, session)?;
    if scopes.is_empty() && before.is_none() {
        return Ok(());
    }
    let index = ClaimIndex::from_claims(claims.iter().map(|c| (*c, false)));
    let git = &brain.git;
    let head = git.head_commit()?;
    let mut paths: Vec<String> = before
        .as_ref()
        .map(|b| b.files.keys().cloned().collect())
        .unwrap_or_default();
    let copy_name = brain.copy_name();
    for change in git.changes(ChangesOf::Worktree)? {
        let Some(rel) = brain.brain_path(&change.path) else {
            continue;
        };
        if rel != copy_name && covered(&scopes, rel) && !paths.contains(&change.path) {
            paths.push(change.path.clone());
        }
    }
    let mut files = BTreeMap::new();
    for path in paths {
        let Some(rel) = brain.brain_path(&path).map(str::to_string) else {
            continue;
        };
        let kept = before.as_ref().and_then(|b| b.files.get(&path));
        let Ok(now) = on_disk(brain, &path) else {
            // Not a text file bsi reads: the copy it had stays.
            if let Some(k) = kept {
                files.insert(path, k.clone());
            }
            continue;
        };
        let base = at_head(brain, head, &path)?;
        match keep::refresh(
            &index,
            (session, &rel),
            kept,
            (base.as_deref(), now.as_deref()),
            markdown,
        ) {
            Refresh::Take => {
                if let Some(text) = now {
                    files.insert(path, Kept { rel, base, text });
                }
            }
            Refresh::Keep => {
                if let Some(k) = kept {
                    files.insert(path, k.clone());
                }
            }
            Refresh::Drop => {}
        }
    }
    write(brain, session, before.as_ref(), &scopes, &files)
}

/// One part of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// From the brain root.
    pub path: String,
    /// The heading of the section whose lines these are; `None`: the
    /// lines before the first heading, or a file without headings.
    pub heading: Option<String>,
}

/// Why a part of the copy was not put back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// The file has other lines there now.
    Newer,
    /// The file (tracked) was deleted since the copy was taken.
    Deleted,
    /// What is at the path now is not a text file bsi writes (a link, a
    /// folder).
    NotAFile,
}

/// What `bsi recover` did.
#[derive(Debug, Clone, Default)]
pub struct Recovered {
    /// The copy's commit, `None` when no copy of the session's work is
    /// kept in this clone.
    pub copy: Option<String>,
    /// When the copy was taken (seconds since the epoch).
    pub at: Option<i64>,
    /// The parts put back into the files.
    pub restored: Vec<Part>,
    /// The parts left as the files have them, and why.
    pub left: Vec<(Part, Left)>,
}

/// [`refresh`], for a door that must go on whatever happens to the copy:
/// a failure is said in the brain's notes.
pub fn refresh_or_say(brain: &Brain, reg: &Registry, session: &str) {
    if let Err(e) = refresh(brain, reg, session) {
        brain.notes.push(format!(
            "warning: the copy of {session}'s uncommitted work was not refreshed: {e}"
        ));
    }
}

/// Puts the session's lines of its copy back into the work tree (see
/// [`keep::restore`]): only its own hunks, only where the file has not
/// changed since; the index, HEAD and every other file untouched.
pub fn recover(brain: &Brain, reg: &Registry, session: &str) -> Result<Recovered> {
    let markdown = &brain.markdown;
    let Some(copy) = read(brain, session)? else {
        return Ok(Recovered::default());
    };
    // The session's claims now, or as the copy recorded them when it has
    // none any more (closed, released).
    let mut claims: Vec<Claim> = claims_of(reg, session).into_iter().cloned().collect();
    if claims.is_empty() {
        let then = chrono::DateTime::from_timestamp(copy.at.unwrap_or(0), 0)
            .unwrap_or_default()
            .fixed_offset();
        claims = copy
            .scopes
            .iter()
            .map(|s| Claim {
                session: session.to_string(),
                scope: s.clone(),
                agent: String::new(),
                opened: then,
                expires: then,
                note: String::new(),
                reason: None,
                extra: Vec::new(),
            })
            .collect();
    }
    let index = ClaimIndex::from_claims(claims.iter().map(|c| (c, false)));
    let mut out = Recovered {
        copy: Some(copy.commit.to_string()),
        at: copy.at,
        ..Recovered::default()
    };
    for (path, kept) in &copy.files {
        let part = |heading: Option<String>| Part {
            path: kept.rel.clone(),
            heading,
        };
        let Ok(now) = on_disk(brain, path) else {
            out.left.push((part(None), Left::NotAFile));
            continue;
        };
        let Restore {
            text,
            restored,
            left,
            deleted,
        } = keep::restore(&index, session, kept, now.as_deref(), markdown);
        if deleted {
            out.left.push((part(None), Left::Deleted));
        }
        out.left
            .extend(left.into_iter().map(|h| (part(h), Left::Newer)));
        if let Some(text) = text {
            put(brain, path, &text)?;
            out.restored.extend(restored.into_iter().map(part));
        }
    }
    Ok(out)
}

/// Writes `text` at `path` (from the work tree root) through a file beside
/// it and a rename; the folders a removed file lived in are made again.
/// Nothing is written through a link.
fn put(brain: &Brain, path: &str, text: &str) -> Result<()> {
    let abs = brain.workdir.join(path);
    let dir = abs.parent().unwrap_or(Path::new("."));
    // Every folder on the way must be a folder of the work tree, not a
    // link to elsewhere.
    let mut at = brain.workdir.clone();
    for c in Path::new(path)
        .parent()
        .into_iter()
        .flat_map(Path::components)
    {
        at.push(c);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Error::io(
                    format!("cannot write {}", abs.display()),
                    std::io::Error::other(format!("{} is not a folder", at.display())),
                ));
            }
            Err(_) => std::fs::create_dir(&at)
                .map_err(|e| Error::io(format!("cannot create {}", at.display()), e))?,
        }
    }
    let mode = std::fs::metadata(&abs).ok().map(|m| m.permissions());
    let name = abs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.bsi-recover"));
    let _ = std::fs::remove_file(&tmp);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
        .and_then(|()| match mode {
            Some(p) => std::fs::set_permissions(&tmp, p),
            None => Ok(()),
        })
        .and_then(|()| std::fs::rename(&tmp, &abs));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(format!("cannot write {}", abs.display()), e)
    })
}
