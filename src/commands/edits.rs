//! What the doors that judge an edit before it happens share — the agent
//! tools' edit hooks and MCP's `check`: a path named by an agent resolved
//! to the brain file it reaches (links followed). The decision itself, and
//! its rules under the clone's settings, are the core's
//! ([`bsi_core::api::edit`]).

use std::fs;
use std::path::{Path, PathBuf};

use crate::agents;

/// `path` with every symbolic link resolved: the deepest part of it that
/// exists, canonicalized, and the rest as given. `None` when no part of it
/// can be resolved.
pub(crate) fn resolved(path: &Path) -> Option<PathBuf> {
    let mut base = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(real) = fs::canonicalize(&base) {
            let mut full: PathBuf = real;
            for part in rest.iter().rev() {
                full.push(part);
            }
            return Some(full);
        }
        rest.push(base.file_name()?.to_os_string());
        base = base.parent()?.to_path_buf();
    }
}

/// `path` relative to the brain root, with every symbolic link in it
/// resolved: a file named through a link inside the brain (`pj/plan.md`
/// with `pj -> projets`, or a link to the file itself) is the file it
/// reaches. `None` when what it reaches lies outside the root.
pub(crate) fn brain_rel(root: &Path, path: &Path) -> Option<String> {
    match resolved(path) {
        Some(real) => agents::relative_to(&real, root),
        None => agents::relative_to(path, root),
    }
}
