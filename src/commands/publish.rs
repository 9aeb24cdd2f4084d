//! How a planned registry change lands: in the local repository only, or —
//! when the brain has a remote — on the remote branch first.
//!
//! Publishing: fetch the branch, merge the remote registry with the local one
//! (rows, see [`crate::registry::merge`]), run the plan against that union,
//! build the commit on the remote tip changing only the registry, push it
//! alone. Git refuses a push that does not fast-forward the branch, so of two
//! machines pushing on the same tip exactly one wins; the other fetches again,
//! re-plans against the new union (where the winner's claim now stands) and
//! either is refused or tries again. Only after the push does the local
//! branch take the change. When the remote cannot be reached the change is
//! committed locally and recorded as pending, for `bsi sync`.

use std::time::Duration;

use git2::Oid;
use rand::RngExt;

use super::Ctx;
use crate::error::{Error, Result, exit};
use crate::git::Git;
use crate::registry::{self, Registry};
use crate::remote::{Push, Remote};
use crate::store::{Brain, Loaded, WriterLock};

/// What a command decided, given a registry.
pub(crate) enum Plan<R> {
    /// Write this registry text with this commit message.
    Write {
        /// The new registry.
        text: String,
        /// The commit message.
        message: String,
        /// What to tell the user.
        report: R,
    },
    /// Nothing to write (a refusal, or nothing changed).
    Keep(R),
}

/// Where the change went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Landed {
    /// No remote: committed locally, as always.
    Local,
    /// On the remote branch, and taken into the local branch.
    Published,
    /// Committed locally only: the remote could not be reached.
    Pending(String),
}

/// A plan carried out.
pub(crate) struct Applied<R> {
    pub(crate) report: R,
    /// The local commit holding the change, when one was written.
    pub(crate) commit: Option<Oid>,
    pub(crate) landed: Landed,
}

/// How many times a push that lost a race is tried again.
const MAX_ATTEMPTS: u32 = 12;

/// Plans and writes a change under the writer lock, publishing it when the
/// brain has a remote. `plan` may run several times, against fresh bases.
pub(crate) fn apply<R>(
    ctx: &Ctx,
    brain: &Brain,
    mut plan: impl FnMut(&Registry) -> Result<Plan<R>>,
) -> Result<Applied<R>> {
    let lock = brain.lock()?;
    let loaded = brain.load_for_write(&lock)?;
    let Some(remote) = Remote::configured(
        &brain.git,
        ctx.remote.as_deref(),
        crate::config::load(&brain.root)?.remote.as_deref(),
    )?
    else {
        return local(brain, &lock, &loaded, &mut plan, Landed::Local);
    };
    let _ = brain.register_merge_driver();
    let _busy = brain.busy(&lock, "publish")?;
    for attempt in 0..MAX_ATTEMPTS {
        if let Err(why) = remote.fetch(&brain.workdir) {
            return offline(ctx, brain, &lock, &loaded, &mut plan, &remote, why);
        }
        let view = RemoteView::read(brain, &loaded, &remote)?;
        let union = view.union(brain, &loaded)?;
        let (text, message, report) = match plan(&union)? {
            Plan::Keep(report) => {
                return Ok(Applied {
                    report,
                    commit: None,
                    landed: Landed::Published,
                });
            }
            Plan::Write {
                text,
                message,
                report,
            } => (text, message, report),
        };
        let commit = brain
            .git
            .commit_detached(&brain.rel, text.as_bytes(), view.tip, &message)?;
        match remote.push(&brain.workdir, commit) {
            Push::Pushed => {
                let head = brain.adopt(&lock, &loaded, view.tip, commit, &text, &message)?;
                brain.mark_synced(ctx.now)?;
                return Ok(Applied {
                    report,
                    commit: Some(head),
                    landed: Landed::Published,
                });
            }
            Push::Rejected => backoff(attempt),
            Push::Failed(why) => {
                return offline(ctx, brain, &lock, &loaded, &mut plan, &remote, why);
            }
        }
    }
    Err(lost_too_often(&remote))
}

fn lost_too_often(remote: &Remote) -> Error {
    Error::Refused(
        format!(
            "{} kept moving: {MAX_ATTEMPTS} pushes in a row lost the race; nothing was written",
            remote.label()
        ),
        "retry in a moment".into(),
    )
}

/// Sleeps before trying again: random, growing with the attempt, so two
/// machines that lost to a third do not collide again in step.
pub(crate) fn backoff(attempt: u32) {
    let ceiling = 20u64 << attempt.min(5);
    let ms = rand::rng().random_range(5..=ceiling);
    std::thread::sleep(Duration::from_millis(ms));
}

fn local<R>(
    brain: &Brain,
    lock: &WriterLock,
    loaded: &Loaded,
    plan: &mut impl FnMut(&Registry) -> Result<Plan<R>>,
    landed: Landed,
) -> Result<Applied<R>> {
    match plan(&loaded.registry)? {
        Plan::Keep(report) => Ok(Applied {
            report,
            commit: None,
            landed: Landed::Local,
        }),
        Plan::Write {
            text,
            message,
            report,
        } => {
            let commit = brain.commit(lock, loaded, &text, &message)?;
            Ok(Applied {
                report,
                commit: Some(commit),
                landed,
            })
        }
    }
}

fn offline<R>(
    ctx: &Ctx,
    brain: &Brain,
    lock: &WriterLock,
    loaded: &Loaded,
    plan: &mut impl FnMut(&Registry) -> Result<Plan<R>>,
    remote: &Remote,
    why: String,
) -> Result<Applied<R>> {
    let why = format!("{} could not be reached ({why})", remote.label());
    let applied = local(brain, lock, loaded, plan, Landed::Pending(why))?;
    if applied.commit.is_some() {
        let summary = brain
            .git
            .journal(&brain.rel, Some(1))?
            .first()
            .and_then(|c| c.message.lines().next().map(String::from))
            .unwrap_or_default();
        brain.add_pending(&format!("{} {summary}", ctx.now.to_rfc3339()))?;
    }
    Ok(applied)
}

/// The remote branch as fetched: its tip, its registry, and the registry of
/// the last commit it shares with HEAD.
pub(crate) struct RemoteView {
    pub(crate) tip: Oid,
    pub(crate) text: String,
    base: Option<String>,
}

impl RemoteView {
    pub(crate) fn read(brain: &Brain, loaded: &Loaded, remote: &Remote) -> Result<RemoteView> {
        let tip = brain
            .git
            .ref_target(&remote.tracking_ref())
            .ok_or_else(|| {
                Error::Usage(format!("{} has no branch {}", remote.name, remote.branch))
            })?;
        let text = text_at(&brain.git, tip, &brain.rel)?.ok_or_else(|| {
            Error::Refused(
                format!("{} has no {}", remote.label(), brain.rel),
                "push the branch that holds the registry first (`git push`), then retry".into(),
            )
        })?;
        let base = match loaded.head.commit {
            Some(head) => match brain.git.merge_base(head, tip)? {
                Some(b) => text_at(&brain.git, b, &brain.rel)?,
                None => None,
            },
            None => None,
        };
        Ok(RemoteView { tip, text, base })
    }

    /// The local registry and the remote one merged by rows.
    pub(crate) fn union(&self, brain: &Brain, loaded: &Loaded) -> Result<Registry> {
        let parse = |t: String| {
            registry::parse(t).map_err(|source| Error::Registry {
                path: brain.registry.clone(),
                source,
            })
        };
        let theirs = parse(self.text.clone())?;
        let ours = &loaded.registry;
        if ours.text() == self.text {
            return Ok(theirs);
        }
        let base = self.base.clone().and_then(|b| registry::parse(b).ok());
        let merged = registry::merge::merge3(base.as_ref(), ours, &theirs).map_err(|e| {
            Error::Refused(
                format!("the local and the remote registry cannot be merged by rows: {e}"),
                "run `git pull` and settle the registry by hand, then retry".into(),
            )
        })?;
        parse(merged)
    }
}

fn text_at(git: &Git, commit: Oid, rel: &str) -> Result<Option<String>> {
    Ok(git
        .file_at(commit, rel)?
        .map(|b| String::from_utf8_lossy(&b).into_owned()))
}

/// The exit code once the report is printed: a change that could not be
/// published is said on stderr and turns success into exit 7.
pub(crate) fn finish(landed: &Landed, code: u8) -> u8 {
    let Landed::Pending(why) = landed else {
        return code;
    };
    eprintln!("warning: {why}.");
    eprintln!(
        "The change is committed here but NOT PUBLISHED: other machines do not see it. Run `bsi sync` once the remote is back."
    );
    if code == exit::OK {
        exit::UNPUBLISHED
    } else {
        code
    }
}
