//! What an edit refused by the guard should be followed by: the next steps
//! of its conflict, for every door that judges edits (the agent tools'
//! edit hooks and MCP's `check`), so they offer the same ones; and what a
//! git move that discards uncommitted work would take out of the work
//! tree, as edits for the same decision.

use chrono::{DateTime, FixedOffset};

use crate::claims::open::alternatives;
use crate::error::Result;
use crate::git::ChangesOf;
use crate::guard::Finding;
use crate::guard::discard::{Becomes, Discard, Uncommitted};
use crate::guard::edit::Target;
use crate::next::{Conflict, NextStep, Step, Who};
use crate::registry::Registry;
use crate::scope::Scope;
use crate::store::Brain;

/// The next steps of an edit refused for `findings`: free scopes near the
/// parts the edit needs, `outside` (what it touches outside the session's
/// claims, in strict mode) claimed first, the wait for the holders at work,
/// and what frees the holders that are not.
pub fn steps(
    brain: &Brain,
    reg: &Registry,
    session: &str,
    findings: &[Finding<'_>],
    outside: &[Scope],
    now: DateTime<FixedOffset>,
) -> Vec<NextStep> {
    let mut held = Vec::new();
    let mut wanted: Vec<Scope> = Vec::new();
    for f in findings {
        if let Finding::Claimed {
            path, claim, stale, ..
        } = f
        {
            held.push((*claim, *stale));
            // The part of the file the edit needs.
            let s = match &claim.scope {
                Scope::Section { .. } | Scope::File(_) => claim.scope.clone(),
                _ => Scope::File(path.clone()),
            };
            if !wanted.contains(&s) {
                wanted.push(s);
            }
        }
    }
    let nearby = if wanted.is_empty() {
        Vec::new()
    } else {
        alternatives(reg, session, &wanted, &wanted, &brain.snapshot(&wanted))
    };
    Conflict {
        held,
        nearby: &nearby,
        outside,
        wanted: &wanted,
        ..Conflict::default()
    }
    .steps(now)
}

/// What `discard` would take out of the work tree of `brain`: each
/// uncommitted change it takes, as an edit from the file as it is to what
/// the move leaves there (with its path from the work tree root), for the
/// one edit decision to judge. Files outside the brain's root, and the
/// registry's own files, are not brain files and are left out.
pub fn discarded(brain: &Brain, discard: &Discard) -> Result<Vec<(Target, String)>> {
    let git = &brain.git;
    let head = git.head_commit()?;
    let mut out = Vec::new();
    for change in git.changes(ChangesOf::Worktree)? {
        let untracked = change.old_blob.is_none() && !git.tracks(&change.path)?;
        let staged =
            !untracked && git.index_blob(&change.path)? != git.head_state(&change.path)?.blob;
        let seen = Uncommitted {
            path: change.path.clone(),
            untracked,
            staged,
        };
        let Some(becomes) = discard.takes(&seen) else {
            continue;
        };
        let Some(rel) = brain.brain_path(&change.path).map(str::to_string) else {
            continue;
        };
        if rel == brain.copy_name() {
            continue;
        }
        let now = if change.deleted {
            Some(String::new())
        } else {
            std::fs::read(brain.workdir.join(&change.path))
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
        };
        let then = match becomes {
            Becomes::Gone => Some(String::new()),
            Becomes::Head => match head {
                Some(h) => git
                    .file_at(h, &change.path)?
                    .map_or(Some(String::new()), |b| String::from_utf8(b).ok()),
                None => Some(String::new()),
            },
            Becomes::Index => git.text_of(git.index_blob(&change.path)?),
        };
        let mut target = Target::whole(rel);
        if let (Some(old), Some(new)) = (now, then) {
            target.old = Some(old);
            target.new = Some(new);
        }
        target.shell = Some(format!(
            "takes the uncommitted changes of {} out of the work tree ({})",
            target.rel,
            discard.said()
        ));
        out.push((target, change.path));
    }
    Ok(out)
}

/// The next steps of a move refused for taking other sessions' work out of
/// the work tree: its narrower forms over `own` (paths as the agent's
/// shell names them) first, then the wait for the holders at work, and
/// what frees the holders that are not.
pub fn discard_steps(
    discard: &Discard,
    own: &[String],
    findings: &[Finding<'_>],
    now: DateTime<FixedOffset>,
) -> Vec<NextStep> {
    let mut steps: Vec<NextStep> = discard
        .narrower(own)
        .into_iter()
        .map(|argv| NextStep {
            step: Step::OwnOnly { argv },
            who: Who::ThisSession,
        })
        .collect();
    let mut held = Vec::new();
    let mut wanted: Vec<Scope> = Vec::new();
    for f in findings {
        if let Finding::Claimed { claim, stale, .. } = f {
            held.push((*claim, *stale));
            if !wanted.contains(&claim.scope) {
                wanted.push(claim.scope.clone());
            }
        }
    }
    steps.extend(
        Conflict {
            held,
            wanted: &wanted,
            ..Conflict::default()
        }
        .steps(now),
    );
    steps
}
