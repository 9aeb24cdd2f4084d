//! `bsi watchdog`: expired claims move to the stale table; a person decides.

use std::io::Write;

use serde::Serialize;

use super::{Ctx, Ending, WriteCommand, status};
use crate::conflict;
use crate::error::{Result, exit};
use crate::git::Oid;
use crate::output::{self, ClaimJson};
use crate::publish::Plan;
use crate::registry::{Claim, Registry, TableKind};
use crate::scope::Sections;
use crate::store::Brain;
use crate::ttl;

#[derive(Serialize)]
struct Report {
    active: usize,
    stale: usize,
    moved: Vec<ClaimJson>,
    stale_claims: Vec<ClaimJson>,
    collisions: Vec<[ClaimJson; 2]>,
    /// The registry commit; null when nothing moved.
    commit: Option<String>,
}

pub(crate) fn run(ctx: &Ctx, json: bool) -> Result<u8> {
    let w = WriteCommand::open(ctx)?;
    let by = ctx.agent(None, &w.settings.config)?;
    let sections = w.brain.sections();
    w.run(
        true,
        |reg| plan(ctx, reg, &sections, &by),
        |seen, commit| report(ctx, &w.brain, seen, commit, json),
    )
}

/// Expired active claims move to the stale table; the rest of what the
/// watchdog reports is read from the same registry.
fn plan(ctx: &Ctx, reg: &Registry, sections: &dyn Sections, by: &str) -> Result<Plan<Seen>> {
    let mut edited: Registry = reg.clone();
    let mut moved: Vec<Claim> = Vec::new();
    for (i, c) in reg.active_claims.iter().enumerate() {
        if let Some(reason) = ttl::stale_reason(c.opened, c.expires, ctx.now) {
            let mut s = c.clone();
            let max = reason == ttl::STALE_REASON_MAX;
            s.reason = Some(reg.language().stale_reason(max).to_string());
            edited.remove_claim(TableKind::Active, i);
            edited.add_claim(TableKind::Stale, &s);
            moved.push(s);
        }
    }
    let active = reg.active_claims.len() - moved.len();
    let mut stale_claims: Vec<Claim> = reg.stale_claims.clone();
    stale_claims.extend(moved.iter().cloned());
    let collisions: Vec<(Claim, Claim)> = conflict::collisions(reg, sections)
        .into_iter()
        .map(|(a, b)| (a.clone(), b.clone()))
        .collect();
    let sections_held: Vec<Claim> = reg
        .all_claims()
        .filter(|(c, _)| c.scope.level() == crate::scope::Level::Section)
        .map(|(c, _)| c.clone())
        .collect();
    let report = Seen {
        active,
        moved,
        stale_claims,
        collisions,
        sections_held,
    };
    if report.moved.is_empty() {
        return Ok(Plan::Keep(report));
    }
    let sessions: Vec<&str> = report.moved.iter().map(|c| c.session.as_str()).collect();
    let message = super::commit_message_by(
        "watchdog",
        &sessions,
        &format!(
            "stale: {}",
            super::scopes_summary(report.moved.iter().map(|c| &c.scope))
        ),
        Some(by),
    );
    Ok(Plan::Write {
        text: edited.render(),
        message,
        report,
    })
}

fn report(ctx: &Ctx, brain: &Brain, seen: Seen, commit: Option<Oid>, json: bool) -> Result<Ending> {
    let Seen {
        active,
        moved,
        stale_claims,
        collisions,
        sections_held,
    } = seen;
    let stale = stale_claims.len();

    if json {
        output::print_json(&Report {
            active,
            stale,
            moved: ClaimJson::list(moved.iter(), true, ctx.now),
            stale_claims: ClaimJson::list(stale_claims.iter(), true, ctx.now),
            collisions: output::collisions_json(collisions.iter().map(|(a, b)| (a, b)), ctx.now),
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
                crate::ttl::claim_time(c.opened, c.expires, ctx.now)
            )
            .map_err(crate::Error::output)?;
        }
        // Every stale claim, on every run, as status shows it.
        if stale > 0 {
            write!(out, "{}", status::table(&[], &stale_claims, ctx))
                .map_err(crate::Error::output)?;
        }
        for (a, b) in &collisions {
            writeln!(out, "{}", output::collision_line(a, b)).map_err(crate::Error::output)?;
        }
        for line in super::verify::missing_lines(brain, sections_held.iter()) {
            writeln!(out, "{line}").map_err(crate::Error::output)?;
        }
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
            write!(out, "{}", output::collision_next(&pairs)).map_err(crate::Error::output)?;
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

/// What the watchdog saw in the registry it checked.
struct Seen {
    active: usize,
    moved: Vec<Claim>,
    stale_claims: Vec<Claim>,
    collisions: Vec<(Claim, Claim)>,
    /// The section claims, to report those naming no heading.
    sections_held: Vec<Claim>,
}
