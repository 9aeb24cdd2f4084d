//! `bsi watchdog`: expired claims move to the stale table; a person decides.

use serde::Serialize;

use super::views as status;
use super::{Ctx, Ending, WriteCommand};
use crate::output::{self, ClaimJson};
use bsi_core::api;
use bsi_core::api::audit;
use bsi_core::api::git::Oid;
use bsi_core::api::store::Brain;
use bsi_core::claims::watchdog::Seen;
use bsi_core::drift::Drift;
use bsi_core::error::{Result, exit};
use bsi_core::registry::Claim;

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
    let w = WriteCommand::open(ctx)?;
    let by = ctx.agent(None, &w.settings.config)?;
    let api::watchdog::Watched {
        applied,
        collisions,
        drift,
    } = api::watchdog::watchdog(&w.site(), &by)?;
    w.report(applied, |seen, commit| {
        report(ctx, &w.brain, (seen, collisions, drift), commit)
    })
}

fn report(
    ctx: &Ctx,
    brain: &Brain,
    (seen, collisions, drift): (Seen, Vec<(Claim, Claim)>, Result<Vec<Drift>>),
    commit: Option<Oid>,
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
    let out = ctx.out();
    out.json(|| Report {
        active,
        stale,
        moved: ClaimJson::list(moved.iter(), true, ctx.now),
        stale_claims: ClaimJson::list(stale_claims.iter(), true, ctx.now),
        collisions: output::collisions_json(collisions.iter().map(|(a, b)| (a, b)), ctx.now),
        drift: status::DriftJson::list(&drift),
        commit: commit.as_ref().map(ToString::to_string),
    })?;
    out.say(|w| {
        write!(w, "{}", status::counts(active, stale))?;
        for c in &moved {
            writeln!(
                w,
                "Now stale: {} {} ({})",
                c.session,
                c.scope,
                bsi_core::ttl::claim_time(c.opened, c.expires, ctx.now)
            )?;
        }
        // Every stale claim, on every run, as status shows it.
        if stale > 0 {
            write!(w, "{}", status::table(&[], &stale_claims, ctx))?;
        }
        for (a, b) in &collisions {
            writeln!(w, "{}", bsi_core::words::collision_line(a, b))?;
        }
        for line in audit::missing_lines(brain, sections_held.iter()) {
            writeln!(w, "{line}")?;
        }
        status::print_drift(w, &out, &drift, unread.as_deref())?;
        super::note_commit(ctx, w, commit)?;
        if stale > 0 {
            write!(w, "{}", status::next_steps(&stale_claims, 0))?;
        } else if collisions.is_empty() {
            writeln!(
                w,
                "Next: `bsi status` shows who holds what; `bsi open SCOPE` before editing."
            )?;
        }
        if !collisions.is_empty() {
            let pairs: Vec<(&Claim, &Claim)> = collisions.iter().map(|(a, b)| (a, b)).collect();
            write!(w, "{}", bsi_core::words::collision_next(&pairs))?;
        }
        Ok(())
    })?;
    Ok(Ending::Landed(if stale > 0 {
        exit::STALE
    } else if !collisions.is_empty() {
        exit::CONFLICT
    } else {
        exit::OK
    }))
}
