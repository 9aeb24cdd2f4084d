//! What the doors that judge an edit before it happens share — the agent
//! tools' edit hooks and MCP's `check`: a path named by an agent resolved
//! to the brain file it reaches (links followed), and the one decision of
//! [`bsi_core::guard::edit`] under this clone's settings.

use std::fs;
use std::path::{Path, PathBuf};

use crate::agents;
use bsi_core::api::settings::Settings;
use bsi_core::api::store::Brain;
use bsi_core::guard::edit::{self, EditDecision, Rules, Target};
use bsi_core::registry::Registry;

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

/// The rules of the edit decision in `brain` under its settings.
pub(crate) fn rules(brain: &Brain, settings: &Settings) -> Rules {
    Rules {
        mode: settings.hook_mode,
        claim_on_write: settings.config.claim_on_write,
        ttl: settings.ttl(None),
        copy: brain.copy_name(),
        markdown: brain.markdown.clone(),
    }
}

/// The decision on an edit of `targets` by `session` under `rules`, on
/// `reg`; a target that may be a folder takes the claims under it first.
pub(crate) fn decide<'a>(
    rules: &Rules,
    reg: &'a Registry,
    session: Option<&str>,
    targets: &mut Vec<Target>,
) -> EditDecision<'a> {
    edit::under_folders(targets, reg);
    edit::decide(reg, session, targets, rules)
}
