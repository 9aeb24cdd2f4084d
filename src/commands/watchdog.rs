//! `bsi watchdog`: expired claims move to the stale table; a person decides.

use std::io::Write;

use serde::Serialize;

use super::{Ctx, commit_message};
use crate::conflict;
use crate::error::{Result, exit};
use crate::output::{self, ClaimJson};
use crate::registry::{Claim, Registry, TableKind};
use crate::resolve;
use crate::ttl;

#[derive(Serialize)]
struct Report {
    active: usize,
    stale: usize,
    moved: Vec<ClaimJson>,
    stale_claims: Vec<ClaimJson>,
    collisions: Vec<[ClaimJson; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    commit: Option<String>,
}

pub(crate) fn run(ctx: &Ctx, json: bool) -> Result<u8> {
    let brain = ctx.brain()?;
    let lock = brain.lock()?;
    let loaded = brain.load_for_write(&lock)?;
    let reg = &loaded.registry;

    let mut edited: Registry = reg.clone();
    let mut moved: Vec<Claim> = Vec::new();
    for (i, c) in reg.active_claims.iter().enumerate() {
        if let Some(reason) = ttl::stale_reason(c.opened, c.expires, ctx.now) {
            let mut s = c.clone();
            s.reason = Some(reason.to_string());
            edited.remove_claim(TableKind::Active, i);
            edited.add_claim(TableKind::Stale, &s);
            moved.push(s);
        }
    }
    let commit = if moved.is_empty() {
        None
    } else {
        let sessions: Vec<&str> = moved.iter().map(|c| c.session.as_str()).collect();
        let message = commit_message("watchdog", &sessions, &format!("{} stale", moved.len()));
        Some(brain.commit(&lock, &loaded, &edited.render(), &message)?)
    };
    drop(lock);

    let active = reg.active_claims.len() - moved.len();
    let mut stale_claims: Vec<&Claim> = reg.stale_claims.iter().collect();
    stale_claims.extend(moved.iter());
    let stale = stale_claims.len();
    let sections = resolve::sections(&brain.root);
    let collisions = conflict::collisions(reg, &sections);

    if json {
        output::print_json(&Report {
            active,
            stale,
            moved: moved
                .iter()
                .map(|c| ClaimJson::new(c, true, ctx.now))
                .collect(),
            stale_claims: stale_claims
                .iter()
                .map(|c| ClaimJson::new(c, true, ctx.now))
                .collect(),
            collisions: collisions
                .iter()
                .map(|(a, b)| {
                    [
                        ClaimJson::new(a, false, ctx.now),
                        ClaimJson::new(b, false, ctx.now),
                    ]
                })
                .collect(),
            commit: commit.as_ref().map(ToString::to_string),
        });
    } else {
        let mut out = ctx.out();
        let _ = writeln!(out, "{active} active claims, {stale} stale");
        for c in &moved {
            let _ = writeln!(
                out,
                "  now stale: {} {} (expired {})",
                c.session,
                c.scope,
                ttl::format_ts(c.expires)
            );
        }
        for (a, b) in &collisions {
            let _ = writeln!(
                out,
                "  COLLISION: {} {} overlaps {} {}",
                a.session, a.scope, b.session, b.scope
            );
        }
        if stale > 0 {
            let _ = writeln!(
                out,
                "Stale claims are not free: a person checks each one, then runs `bsi release SESSION --confirm`."
            );
        }
        super::note_commit(ctx, &mut out, commit);
    }
    Ok(if stale > 0 { exit::STALE } else { exit::OK })
}
