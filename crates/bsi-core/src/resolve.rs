//! Turning what the user typed into a stored scope, with the file system:
//! paths relative to the current directory, directories recognised on disk,
//! symlinks that lead out of the brain refused, section headings looked up in
//! the file. Also reads brain files for their heading trees, never through a
//! symlink that leaves the brain.

use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};
use crate::markdown::{self, Outline, OutlineSections};
use crate::scope::{Scope, ScopeError, escape_path, heading_key, is_markdown, split_section};

/// Lexically joins `rel` onto `base`, resolving `.` and `..`.
fn lexical_join(base: &Path, rel: &str) -> PathBuf {
    let mut out = base.to_path_buf();
    for comp in Path::new(rel).components() {
        match comp {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            Component::Normal(c) => out.push(c),
            Component::RootDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// The path of `abs` below `root`, with `/`; `None` when outside.
fn below(root: &Path, abs: &Path) -> Option<String> {
    let rel = abs.strip_prefix(root).ok()?;
    Some(
        rel.components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
    )
}

/// Checks that `abs` (a path under `root`) does not lead outside `root`
/// through a symlink: the deepest part of it that exists must resolve inside.
fn check_no_escape(root: &Path, abs: &Path, shown: &str) -> Result<()> {
    let mut probe = abs.to_path_buf();
    loop {
        if fs::symlink_metadata(&probe).is_ok() {
            let real = fs::canonicalize(&probe).unwrap_or_else(|_| probe.clone());
            if !real.starts_with(root) {
                return Err(ScopeError::Escapes(shown.to_string()).into());
            }
            return Ok(());
        }
        if !probe.pop() || !probe.starts_with(root) {
            return Ok(());
        }
    }
}

/// Refuses a scope whose path goes through a symbolic link inside the
/// brain: one thing, one name. The message names the target to claim.
fn check_no_symlink(root: &Path, abs: &Path, shown: &str) -> Result<()> {
    let Ok(rest) = abs.strip_prefix(root) else {
        return Ok(());
    };
    let mut probe = root.to_path_buf();
    for comp in rest.components() {
        probe.push(comp);
        match fs::symlink_metadata(&probe) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = fs::canonicalize(abs).ok().and_then(|real| {
                    let rel = below(root, &real)?;
                    Some(if real.is_dir() {
                        format!("{rel}/")
                    } else {
                        rel
                    })
                });
                return Err(Error::ThroughSymlink {
                    scope: shown.to_string(),
                    link: below(root, &probe).unwrap_or_default(),
                    target,
                });
            }
            Ok(_) => {}
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}

/// Resolves a scope typed in `cwd` for the brain rooted at `root` (both
/// canonical).
pub fn resolve_scope(root: &Path, cwd: &Path, raw: &str, markdown: &[String]) -> Result<Scope> {
    let trimmed = raw.trim();
    if trimmed.chars().any(char::is_control) {
        return Err(ScopeError::Control.into());
    }
    if trimmed.eq_ignore_ascii_case("global") {
        return Ok(Scope::Global);
    }
    let (path_owned, heading) = split_section(trimmed);
    let path_part = path_owned.as_str();
    if trimmed.is_empty() {
        return Err(ScopeError::Empty.into());
    }
    let b = path_part.as_bytes();
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    if path_part.starts_with(['/', '\\']) || drive || Path::new(path_part).is_absolute() {
        return Err(ScopeError::Absolute(raw.to_string()).into());
    }
    if heading.is_some_and(|h| h.trim().is_empty()) || (heading.is_some() && path_part.is_empty()) {
        return Err(ScopeError::BadSection(raw.to_string()).into());
    }
    let abs = lexical_join(cwd, path_part);
    let Some(rel) = below(root, &abs) else {
        return Err(ScopeError::Escapes(raw.to_string()).into());
    };
    check_no_escape(root, &abs, raw)?;
    check_no_symlink(root, &abs, raw)?;
    let trailing_slash = path_part.ends_with('/');
    if trailing_slash && abs.is_file() {
        let file = rel.trim_end_matches('/');
        return Err(Error::NotADirectory {
            scope: raw.to_string(),
            file: file.to_string(),
        });
    }
    let is_dir = heading.is_none() && (trailing_slash || abs.is_dir());
    let stored = match heading {
        Some(h) => format!("{}#{h}", escape_path(&rel)),
        None => escape_path(&rel),
    };
    let scope = Scope::from_relative(&stored, is_dir)?;
    if let Scope::Section { file, heading } = &scope {
        if !is_markdown(file, markdown) {
            return Err(Error::NotMarkdown {
                scope: raw.to_string(),
                file: file.clone(),
            });
        }
        return resolve_section(root, &abs, file, heading);
    }
    if let Scope::File(f) = &scope
        && abs.is_dir()
    {
        return Ok(Scope::Dir(format!("{f}/")));
    }
    Ok(scope)
}

/// Looks a section's heading up in its file, and returns the scope with the
/// heading text as the file writes it.
fn resolve_section(root: &Path, abs: &Path, file: &str, heading: &str) -> Result<Scope> {
    let Some(outline) = outline_at(root, abs) else {
        return Err(if abs.exists() {
            Error::NoSuchSection {
                file: file.to_string(),
                heading: heading.to_string(),
                available: Vec::new(),
            }
        } else {
            Error::NoSuchFile {
                file: file.to_string(),
                heading: heading.to_string(),
                nearest: nearest_file(root, file),
            }
        });
    };
    // The heading may be typed with its inline markup (`The *big* plan`) or
    // without it (`The big plan`): both name the same heading.
    let reduced = markdown::outline(&format!("# {heading}\n"))
        .headings
        .first()
        .map(|h| h.key.clone());
    let key = heading_key(heading);
    let found = outline
        .find(&key)
        .next()
        .or_else(|| reduced.as_deref().and_then(|k| outline.find(k).next()));
    match found {
        Some((_, h)) => Ok(Scope::Section {
            file: file.to_string(),
            heading: h.text.clone(),
        }),
        // A heading the file does not have yet: the claim reserves the
        // new section it will head (`open` says so, see [`new_heading`]).
        None => Ok(Scope::Section {
            file: file.to_string(),
            heading: heading.trim().to_string(),
        }),
    }
}

/// The file of the brain whose path is nearest to `file` (a path from the
/// root that names no file), when one is close enough to be a typo of it:
/// a file of the same directory one or two characters off, in a name long
/// enough for that to be one. Hidden files are left out.
pub(crate) fn nearest_file(root: &Path, file: &str) -> Option<String> {
    let (dir, name) = match file.rsplit_once('/') {
        Some((d, n)) => (format!("{d}/"), n),
        None => (String::new(), file),
    };
    let asked = name.to_lowercase();
    children(root, &dir)
        .into_iter()
        .filter_map(|s| match s {
            Scope::File(f) => Some(f),
            _ => None,
        })
        .map(|f| {
            let own = f.rsplit('/').next().unwrap_or(&f).to_lowercase();
            (strsim::levenshtein(&own, &asked), f)
        })
        .filter(|(d, _)| *d <= 2 && 4 * d <= asked.chars().count())
        .min_by_key(|(d, _)| *d)
        .map(|(_, f)| f)
}

/// When `words` (what followed a section scope on the command line) are
/// the rest of a heading with spaces the shell split apart: the heading of
/// `file` that `heading` and the first of `words` begin (`#Open` then
/// `questions` for `## Open questions`), with how many of `words` it takes.
/// `None` when `heading` is one of the file's headings, or no heading goes
/// on with the next word.
pub(crate) fn split_heading(
    root: &Path,
    file: &str,
    heading: &str,
    words: &[String],
) -> Option<(String, usize)> {
    let outline = read_outline(root, file)?;
    if outline.find(&heading_key(heading)).next().is_some() {
        return None;
    }
    let next = words.first()?;
    let prefix = heading_key(&format!("{heading} {next}"));
    let found = outline
        .headings
        .iter()
        .find(|h| h.key == prefix || h.key.starts_with(&format!("{prefix} ")))
        .or_else(|| outline.headings.iter().find(|h| h.key.starts_with(&prefix)))?;
    // The words the heading takes: as many as make it, or begin it.
    let mut taken = 0;
    let mut text = heading.to_string();
    for w in words {
        let longer = heading_key(&format!("{text} {w}"));
        if found.key == longer
            || found.key.starts_with(&format!("{longer} "))
            || (taken == 0 && found.key.starts_with(&longer))
        {
            text = format!("{text} {w}");
            taken += 1;
        } else {
            break;
        }
    }
    Some((found.text.clone(), taken.max(1)))
}

/// A section claimed before its heading is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewHeading {
    /// The file.
    pub file: String,
    /// The heading, as claimed.
    pub heading: String,
    /// The file's existing heading nearest to it by edit distance, when one
    /// is close enough to be what was meant.
    pub nearest: Option<String>,
}

/// Whether `scope` is a section whose heading its file (in the work tree
/// at `root`) does not have yet: a new section reserved by its claim.
pub fn new_heading(root: &Path, scope: &Scope) -> Option<NewHeading> {
    let Scope::Section { file, heading } = scope else {
        return None;
    };
    let outline = read_outline(root, file)?;
    if outline.find(&heading_key(heading)).next().is_some() {
        return None;
    }
    let asked = heading.to_lowercase();
    let nearest = outline
        .headings
        .iter()
        .map(|h| (strsim::levenshtein(&h.text.to_lowercase(), &asked), &h.text))
        // A typo: one or two characters off, in a heading long enough
        // for that to be one (`Q3` is not a typo of `Q1`).
        .filter(|(d, _)| *d <= 2 && 4 * d <= asked.chars().count())
        .min_by_key(|(d, _)| *d)
        .map(|(_, h)| h.clone());
    Some(NewHeading {
        file: file.clone(),
        heading: heading.clone(),
        nearest,
    })
}

/// Reads `file` (relative to `root`) for its headings, refusing anything that
/// resolves outside the brain.
pub(crate) fn read_outline(root: &Path, file: &str) -> Option<Outline> {
    outline_at(root, &root.join(file))
}

fn outline_at(root: &Path, path: &Path) -> Option<Outline> {
    let real = fs::canonicalize(path).ok()?;
    if !real.starts_with(root) || !real.is_file() {
        return None;
    }
    let text = fs::read_to_string(&real).ok()?;
    Some(markdown::outline(&text))
}

/// A [`crate::scope::Sections`] reading the brain's files under `root`.
pub fn sections(root: &Path) -> OutlineSections<impl Fn(&str) -> Option<Outline> + '_> {
    OutlineSections::new(move |file: &str| read_outline(root, file))
}

/// Entries of a directory of the brain, as scopes, for proposing
/// alternatives. Hidden entries are skipped.
pub(crate) fn children(root: &Path, dir: &str) -> Vec<Scope> {
    let path = root.join(dir);
    let Ok(real) = fs::canonicalize(&path) else {
        return Vec::new();
    };
    if !real.starts_with(root) {
        return Vec::new();
    }
    let Ok(rd) = fs::read_dir(&real) else {
        return Vec::new();
    };
    let mut out: Vec<Scope> = rd
        .filter_map(std::result::Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name.contains('|') {
                return None;
            }
            let ty = e.file_type().ok()?;
            let rel = format!("{dir}{name}");
            if ty.is_dir() {
                Some(Scope::Dir(format!("{rel}/")))
            } else if ty.is_file() {
                Some(Scope::File(rel))
            } else {
                None
            }
        })
        .collect();
    out.sort();
    out
}

/// Most entries [`walk`] lists, so a huge brain cannot flood a terminal.
pub const WALK_LIMIT: usize = 5000;

/// The brain's files and directories below `root`, relative with `/`, and
/// whether each is a directory. Hidden entries and `skip` (the registry) are
/// left out; symlinks are listed, never followed. The bool is true when the
/// listing stopped at [`WALK_LIMIT`].
pub fn walk(root: &Path, skip: &str) -> (Vec<(String, bool)>, bool) {
    let mut out = Vec::new();
    let mut stack = vec![String::new()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = fs::read_dir(root.join(&dir)) else {
            continue;
        };
        let mut names: Vec<(String, bool)> = rd
            .filter_map(std::result::Result::ok)
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let ty = e.file_type().ok()?;
                (!name.starts_with('.')).then(|| (format!("{dir}{name}"), ty.is_dir()))
            })
            .filter(|(rel, _)| rel != skip)
            .collect();
        names.sort();
        for (rel, is_dir) in names {
            if out.len() >= WALK_LIMIT {
                return (out, true);
            }
            if is_dir {
                stack.push(format!("{rel}/"));
            }
            out.push((rel, is_dir));
        }
    }
    (out, false)
}

/// A claimed file or folder that names nothing in the work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Absent {
    /// The scope as stored.
    pub scope: String,
    /// Whether the folder it would sit in exists (a new file or folder is
    /// being claimed before it is made).
    pub parent_exists: bool,
    /// The first folder on its path that does not exist, when one is missing.
    pub missing_folder: Option<String>,
    /// The existing path of the same kind nearest to it by edit distance,
    /// when one is close enough to be a typo of it.
    pub nearest: Option<String>,
}

/// Whether `scope` names nothing in the work tree at `root`: a file or
/// folder scope whose path is not there. Sections always name an existing
/// file (they are looked up in it); `global` names the whole brain.
pub fn absent(root: &Path, scope: &Scope, skip: &str) -> Option<Absent> {
    let (path, is_dir) = match scope {
        Scope::File(f) => (f.as_str(), false),
        Scope::Dir(d) => (d.trim_end_matches('/'), true),
        Scope::Global | Scope::Section { .. } => return None,
    };
    if fs::symlink_metadata(root.join(path)).is_ok() {
        return None;
    }
    let parts: Vec<&str> = path.split('/').collect();
    let mut missing_folder = None;
    for i in 1..parts.len() {
        let folder = parts[..i].join("/");
        if !root.join(&folder).is_dir() {
            missing_folder = Some(format!("{folder}/"));
            break;
        }
    }
    let (entries, _) = walk(root, skip);
    let nearest = nearest_path(
        path,
        entries
            .iter()
            .filter(|(_, d)| *d == is_dir)
            .map(|(p, _)| p.as_str()),
    )
    .map(|p| {
        if is_dir {
            format!("{p}/")
        } else {
            p.to_string()
        }
    });
    Some(Absent {
        scope: scope.to_string(),
        parent_exists: missing_folder.is_none(),
        missing_folder,
        nearest,
    })
}

/// The candidate nearest to `typed` by edit distance, when it is close
/// enough to be a typo of it (at most a quarter of its characters, and at
/// least two, changed); the first in order among equals.
pub(crate) fn nearest_path<'a>(
    typed: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let len = typed.chars().count();
    let limit = (len / 4).max(2);
    candidates
        .map(|c| (strsim::levenshtein(typed, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod absent_tests {
    use super::*;

    #[test]
    fn the_nearest_path_is_by_edit_distance() {
        let paths = ["agents/bob.md", "agents/alice.md", "notes/a.md"];
        assert_eq!(
            nearest_path("agent/alice.md", paths.iter().copied()),
            Some("agents/alice.md")
        );
        assert_eq!(
            nearest_path("journal/2026-03-14.md", paths.iter().copied()),
            None
        );
    }
}
