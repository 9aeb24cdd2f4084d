//! A shell command before it runs: what it writes read from the disk as
//! it is, and a git move that takes uncommitted work out of the work tree
//! (`git stash`, `git reset --hard`, `git clean`…) judged by the core as
//! the edits it makes there, refused in the agent's words when it would
//! take another session's work.

use std::fs;
use std::path::{Path, PathBuf};

use super::super::Ctx;
use super::super::edits::resolved;
use super::common::{known_session_or_say, map_of, name_for_refusal};
use crate::agents::{self, Answer, EditOp, FileEdit, Tool, Verdict};
use bsi_core::api;
use bsi_core::api::settings::Settings;
use bsi_core::api::store::Brain;
use bsi_core::error::Result;
use bsi_core::guard::discard::own_taken;
use bsi_core::guard::edit::{EditDecision, Target};
use bsi_core::registry::Registry;

/// The file system, as the shell-command reader asks about it.
pub(super) struct RealDisk;

impl agents::shell_writes::Disk for RealDisk {
    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }
    fn exists(&self, path: &Path) -> bool {
        path.symlink_metadata().is_ok()
    }
    fn read(&self, path: &Path) -> Option<String> {
        // A patch of at most 4 MiB, never through a link.
        let meta = path.symlink_metadata().ok()?;
        if !meta.is_file() || meta.len() > 4 << 20 {
            return None;
        }
        fs::read_to_string(path).ok()
    }
}

/// A git move that takes uncommitted work out of the work tree, judged as
/// the edits it makes there: each change it takes, from the file as it is
/// to what the move leaves. Only other sessions' claims speak against it —
/// a change of one's own, or in no one's claim, may go — and nothing is
/// claimed for it. `None`: nothing speaks against it.
pub(super) fn discard_in(
    ctx: &Ctx,
    tool: Tool,
    (brain, settings, reg): (&Brain, &Settings, &Registry),
    m: &FileEdit,
    (session_id, shell): (&str, &Path),
) -> Result<Option<Answer>> {
    let EditOp::Discard(asked) = &m.op else {
        return Ok(None);
    };
    // Its paths, from the work tree root; one outside this work tree is
    // not its to take.
    let top = resolved(&brain.workdir).unwrap_or_else(|| brain.workdir.clone());
    let in_tree = |p: &str| {
        let real = resolved(Path::new(p)).unwrap_or_else(|| PathBuf::from(p));
        if real == top {
            // The work tree itself: all of it.
            return Some(String::new());
        }
        agents::relative_to(&real, &top)
    };
    let Some(discard) = asked.in_tree(in_tree) else {
        return Ok(None);
    };
    let taken = api::edit::discarded(brain, &discard)?;
    if taken.is_empty() {
        return Ok(None);
    }
    let mut targets: Vec<Target> = taken.iter().map(|(t, _)| t.clone()).collect();
    let map = map_of(brain);
    let session = known_session_or_say(ctx, &map, tool, session_id);
    let rules = api::edit::rules(brain, settings).for_discard();
    match api::edit::decide(&rules, reg, session.as_deref(), &mut targets) {
        EditDecision::Deny {
            findings, judged, ..
        } => {
            // The changes it takes that are the session's own to take,
            // named from the agent's shell.
            let own: Vec<String> = own_taken(&taken, &findings)
                .into_iter()
                .map(|p| relative_from(shell, &brain.workdir.join(p)))
                .collect();
            let steps = api::edit::discard_steps(&discard, &own, &findings, ctx.now);
            let name = name_for_refusal(ctx, &map, tool, session_id, session);
            let mut reason = judged.lines.join("\n");
            reason.push_str(&format!(
                "\nbsi read your shell command as {}, which takes uncommitted changes out of the work tree: the changes above are another session's work in progress, not yet committed, and would be lost to it (stranded in a stash, or gone). Leave them in place.",
                discard.said()
            ));
            reason.push_str(&format!("\nYour bsi session: {name}. Next, one of:"));
            for line in crate::steps::lines(&steps, &["--session", &name]) {
                reason.push_str(&format!("\n- {line}"));
            }
            reason.push_str("\n- or stop and tell the user whose work is in the way.");
            Ok(Some(agents::answer(tool, &Verdict::Deny { reason })))
        }
        EditDecision::Warn { judged, .. } => {
            let warning = without_prefix(&judged.lines);
            Ok(Some(agents::answer(
                tool,
                &Verdict::AllowWithWarning { warning },
            )))
        }
        EditDecision::Allow | EditDecision::ClaimFirst { .. } => Ok(None),
    }
}

/// Lines of a verdict for a tool's answer, which starts with `bsi: `
/// already: each without its own, one a line.
pub(super) fn without_prefix(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| l.strip_prefix("bsi: ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `path` as a shell in `base` names it: relative, with `..` where it
/// lies outside `base`.
fn relative_from(base: &Path, path: &Path) -> String {
    let base = agents::clean(base);
    let path = agents::clean(path);
    let common = base
        .components()
        .zip(path.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = PathBuf::new();
    for _ in base.components().skip(common) {
        out.push("..");
    }
    for c in path.components().skip(common) {
        out.push(c);
    }
    let s = out.to_string_lossy().into_owned();
    if s.is_empty() { ".".into() } else { s }
}
