//! What the doors that judge an edit before it happens ask — the agent
//! tools' edit hooks and MCP's `check` — so they decide alike: the rules
//! of the edit decision under a clone's settings, the registry an edit is
//! judged on, the decision itself, the claim on the first write, the copy
//! of what an edit let through leaves; the next steps of an edit refused
//! by the guard; and what a git move that discards uncommitted work would
//! take out of the work tree, as edits for the same decision.

use chrono::{DateTime, FixedOffset};

use super::open::OnWrite;
use super::{Actor, Site};
use crate::claims::open::alternatives;
use crate::config::HookMode;
use crate::error::{Error, Result};
use crate::git::ChangesOf;
use crate::guard::Finding;
use crate::guard::discard::{Becomes, Discard, Uncommitted};
use crate::guard::edit::{self, EditDecision, Rules, Target};
use crate::next::{Conflict, NextStep, Step, Who};
use crate::registry::Registry;
use crate::scope::Scope;
use crate::settings::Settings;
use crate::store::Brain;

/// The rules of the edit decision in `brain` under its settings.
pub fn rules(brain: &Brain, settings: &Settings) -> Rules {
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
pub fn decide<'a>(
    rules: &Rules,
    reg: &'a Registry,
    session: Option<&str>,
    targets: &mut Vec<Target>,
) -> EditDecision<'a> {
    edit::under_folders(targets, reg);
    edit::decide(reg, session, targets, rules)
}

/// What an edit hook judges the edits of a brain on.
#[derive(Debug)]
pub enum ForEdit {
    /// The registry: the local branch and the remote as last fetched.
    Judge(Box<Registry>),
    /// The clone's hook mode is `off`: every edit goes through unjudged.
    Off,
    /// bsi is not set up in this repository: the edit goes through
    /// unchecked, and the door says why.
    NotSetUp(Error),
}

/// The registry the edits of `brain` are judged on, read as an edit hook
/// reads it (no fetch: the local branch and the remote as last fetched),
/// unless the clone's hook mode is `off` or bsi is not set up there.
pub fn for_edit(brain: &Brain, settings: &Settings) -> Result<ForEdit> {
    if settings.hook_mode == HookMode::Off {
        return Ok(ForEdit::Off);
    }
    let remote = settings.remote().ok().flatten();
    match brain.view(remote.as_ref()) {
        Ok(v) => Ok(ForEdit::Judge(Box::new(v.registry))),
        Err(e @ Error::NoRegistry { .. }) => Ok(ForEdit::NotSetUp(e)),
        Err(e) => Err(e),
    }
}

/// The text the edits let through leave, kept as the session's copy of
/// its uncommitted work ([`super::keep::edited`]): the targets whose text
/// after is known; a failure is said in the brain's notes, the edit goes
/// on. Nothing without a session.
pub fn keep(brain: &Brain, reg: &Registry, session: Option<&str>, targets: &[Target]) {
    let Some(session) = session else {
        return;
    };
    let edits: Vec<(&str, &str)> = targets
        .iter()
        .filter_map(|t| Some((t.rel.as_str(), t.new.as_deref()?)))
        .filter(|(rel, _)| !rel.is_empty())
        .collect();
    if edits.is_empty() {
        return;
    }
    if let Err(e) = super::keep::edited(brain, reg, session, &edits) {
        brain.notes.push(format!(
            "warning: the copy of {session}'s uncommitted work was not refreshed: {e}"
        ));
    }
}

/// The claim on the first write an edit decision chose
/// ([`EditDecision::ClaimFirst`]): `scopes`, else `split` when others hold
/// parts of them, opened for `actor` as `bsi open` opens them
/// ([`super::open::on_write`]). An edit the claim made the session's is
/// kept in its copy. `None`: nothing to claim.
pub fn claim_first(
    site: &Site<'_>,
    actor: &Actor,
    (scopes, split): (Vec<Scope>, Option<Vec<Scope>>),
    (ttl, note): (chrono::Duration, &str),
    targets: &[Target],
) -> Result<Option<OnWrite>> {
    let tries: Vec<Vec<Scope>> = std::iter::once(scopes).chain(split).collect();
    let outcome = super::open::on_write(site, actor, &tries, ttl, note)?;
    if let Some(OnWrite::Opened { landing, .. }) = &outcome {
        // The edit is the session's now: its copy keeps it.
        keep(
            site.brain,
            &landing.registry,
            actor.session.as_deref(),
            targets,
        );
    }
    Ok(outcome)
}

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
