//! `bsi sync`: the local registry and the remote one brought to agreement.
//! Pending local changes are published, the remote's changes come in, and
//! claims of two machines that overlap are both kept and reported.

use std::io::Write;

use serde::Serialize;

use super::Ctx;
use super::publish::{RemoteView, backoff};
use crate::conflict;
use crate::error::{Error, Result, exit};
use crate::output::{self, ClaimJson};
use crate::remote::{Push, Remote};
use crate::resolve;

#[derive(Serialize)]
struct Synced {
    remote: String,
    published: usize,
    pushed: bool,
    collisions: Vec<[ClaimJson; 2]>,
}

const MAX_ATTEMPTS: u32 = 12;

pub(crate) fn run(ctx: &Ctx, json: bool) -> Result<u8> {
    let brain = ctx.brain()?;
    let remote = Remote::configured(
        &brain.git,
        ctx.remote.as_deref(),
        crate::config::load(&brain.root)?.remote.as_deref(),
    )?.ok_or_else(|| {
        Error::Usage(
            "this branch has no upstream and no remote is named: nothing to sync with (set one with `git branch -u`, `git config bsi.remote NAME` or --remote)".into(),
        )
    })?;
    let lock = brain.lock()?;
    let loaded = brain.load_for_write(&lock)?;
    let _ = brain.register_merge_driver();
    let busy = brain.busy(&lock, "sync")?;
    let pending = brain.pending();
    let mut pushed = false;
    let mut merged = None;
    for attempt in 0..MAX_ATTEMPTS {
        remote
            .fetch(&brain.workdir)
            .map_err(|why| Error::Unreachable {
                remote: remote.label(),
                why,
            })?;
        let view = RemoteView::read(&brain, &loaded, &remote)?;
        let union = view.union(&brain, &loaded)?;
        let text = union.text().to_string();
        if text == view.text {
            let message = super::commit_message("sync", &[], &remote.label());
            brain.adopt(&lock, &loaded, view.tip, view.tip, &text, &message)?;
            merged = Some(union);
            break;
        }
        let message = super::commit_message("sync", &[], &format!("with {}", remote.label()));
        let commit = brain
            .git
            .commit_detached(&brain.rel, text.as_bytes(), view.tip, &message)?;
        match remote.push(&brain.workdir, commit) {
            Push::Pushed => {
                brain.adopt(&lock, &loaded, view.tip, commit, &text, &message)?;
                pushed = true;
                merged = Some(union);
                break;
            }
            Push::Rejected => backoff(attempt),
            Push::Failed(why) => {
                return Err(Error::Unreachable {
                    remote: remote.label(),
                    why,
                });
            }
        }
    }
    let Some(reg) = merged else {
        return Err(Error::Refused(
            format!(
                "{} kept moving: {MAX_ATTEMPTS} pushes in a row lost the race",
                remote.label()
            ),
            "run `bsi sync` again in a moment".into(),
        ));
    };
    brain.mark_synced(ctx.now)?;
    drop(busy);
    drop(lock);

    let sections = resolve::sections(&brain.root);
    let collisions = conflict::collisions(&reg, &sections);
    if json {
        output::print_json(&Synced {
            remote: remote.label(),
            published: pending.len(),
            pushed,
            collisions: output::collisions_json(collisions.iter().copied(), ctx.now),
        });
    } else {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "Synced with {} — {} active, {} stale{}",
            remote.label(),
            reg.active_claims.len(),
            reg.stale_claims.len(),
            match pending.len() {
                0 if pushed => ", local changes published".to_string(),
                0 => String::new(),
                n => format!(", {n} pending change(s) published"),
            }
        );
        for (a, b) in &collisions {
            let _ = writeln!(out, "{}", output::collision_line(a, b));
        }
        if !collisions.is_empty() {
            let _ = writeln!(
                out,
                "Both claims are kept: the sessions (or a person) decide who goes on; one of them closes, or a person runs `bsi release SESSION --confirm --force`."
            );
        }
    }
    Ok(if collisions.is_empty() {
        exit::OK
    } else {
        exit::CONFLICT
    })
}
