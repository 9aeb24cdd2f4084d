//! `bsi watchdog`: expired claims move to the stale table; a person decides.

use std::io::Write;

use serde::Serialize;

use super::views as status;
use super::{Ctx, Ending, WriteCommand};
use crate::output::{self, ClaimJson};
use bsi_core::api;
use bsi_core::audit;
use bsi_core::claims::watchdog::Seen;
use bsi_core::drift::Drift;
use bsi_core::error::{Result, exit};
use bsi_core::git::Oid;
use bsi_core::registry::Claim;
use bsi_core::store::Brain;

#[derive(Serialize)]
struct Report {
    active: usize,
    stale: usize,
    moved: Vec<ClaimJson>,
    stale_claims: Vec<ClaimJson>,
    collisions: Vec<[ClaimJson; 2]>,
    /// Claimed parts changed by commits that are not their holders'.
    drift: Vec<status::DriftJson>,
    /// The registry commit; null when nothing moved.
    commit: Option<String>,
}

pub(crate) fn run(ctx: &Ctx) -> Result<u8> {
    let json = ctx.json();
    let w = WriteCommand::open(ctx)?;
    let by = ctx.agent(None, &w.settings.config)?;
    let api::watchdog::Watched {
        applied,
        collisions,
        drift,
    } = api::watchdog::watchdog(&w.site(), &by)?;
    w.report(applied, |seen, commit| {
        report(ctx, &w.brain, (seen, collisions, drift), commit, json)
    })
}

fn report(
    ctx: &Ctx,
    brain: &Brain,
    (seen, collisions, drift): (Seen, Vec<(Claim, Claim)>, Result<Vec<Drift>>),
    commit: Option<Oid>,
    json: bool,
) -> Result<Ending> {
    let Seen {
        active,
        moved,
        stale_claims,
        sections_held,
    } = seen;
    let stale = stale_claims.len();
    let (drift, unread) = match drift {
        Ok(d) => (d, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };

    if json {
        output::print_json(&Report {
            active,
            stale,
            moved: ClaimJson::list(moved.iter(), true, ctx.now),
            stale_claims: ClaimJson::list(stale_claims.iter(), true, ctx.now),
            collisions: output::collisions_json(collisions.iter().map(|(a, b)| (a, b)), ctx.now),
            drift: status::DriftJson::list(&drift),
            commit: commit.as_ref().map(ToString::to_string),
        })?;
    } else {
        let mut out = ctx.out();
        write!(out, "{}", status::counts(active, stale)).map_err(crate::Error::output)?;
        for c in &moved {
            writeln!(
                out,
                "Now stale: {} {} ({})",
                c.session,
                c.scope,
                bsi_core::ttl::claim_time(c.opened, c.expires, ctx.now)
            )
            .map_err(crate::Error::output)?;
        }
        // Every stale claim, on every run, as status shows it.
        if stale > 0 {
            write!(out, "{}", status::table(&[], &stale_claims, ctx))
                .map_err(crate::Error::output)?;
        }
        for (a, b) in &collisions {
            writeln!(out, "{}", bsi_core::words::collision_line(a, b))
                .map_err(crate::Error::output)?;
        }
        for line in audit::missing_lines(brain, sections_held.iter()) {
            writeln!(out, "{line}").map_err(crate::Error::output)?;
        }
        status::print_drift(&mut out, &drift, unread.as_deref())?;
        super::note_commit(ctx, &mut out, commit)?;
        if stale > 0 {
            write!(out, "{}", status::next_steps(&stale_claims, 0))
                .map_err(crate::Error::output)?;
        } else if collisions.is_empty() {
            writeln!(
                out,
                "Next: `bsi status` shows who holds what; `bsi open SCOPE` before editing."
            )
            .map_err(crate::Error::output)?;
        }
        if !collisions.is_empty() {
            let pairs: Vec<(&Claim, &Claim)> = collisions.iter().map(|(a, b)| (a, b)).collect();
            write!(out, "{}", bsi_core::words::collision_next(&pairs))
                .map_err(crate::Error::output)?;
        }
    }
    Ok(Ending::Landed(if stale > 0 {
        exit::STALE
    } else if !collisions.is_empty() {
        exit::CONFLICT
    } else {
        exit::OK
    }))
}
