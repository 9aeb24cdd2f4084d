//! `bsi sync`: the local registry branch and the remote's brought to
//! agreement. Pending local changes are published, the remote's changes come
//! in, and claims of two machines that overlap are both kept and reported.

use serde::Serialize;

use super::Ctx;
use crate::output::{self, ClaimJson};
use bsi_core::api::publish::{self, Landed, Plan};
use bsi_core::conflict;
use bsi_core::error::{Error, Result, exit};

#[derive(Serialize)]
struct Synced {
    remote: String,
    published: usize,
    pushed: bool,
    collisions: Vec<[ClaimJson; 2]>,
    /// Endings recorded offline not kept: the claim had ended elsewhere first.
    superseded: Vec<bsi_core::registry::merge::Superseded>,
}

pub(crate) fn run(ctx: &Ctx) -> Result<u8> {
    let out = ctx.out();
    let (brain, settings) = ctx.open()?;
    let remote = settings.remote()?.ok_or(Error::NoRemote)?;
    let applied = publish::apply(&brain, &settings, ctx.write_options(true), |reg| {
        Ok(Plan::Write {
            text: reg.text().to_string(),
            message: bsi_core::claims::commit_message(
                "sync",
                &[],
                &format!("with {}", remote.label()),
            ),
            report: (),
        })
    })?;
    let landing = &applied.landing;
    ctx.say_notes();
    out.err_lines(crate::output::superseded_lines(landing));
    if let Landed::AsLastFetched(why) | Landed::Pending(why) = &landing.landed {
        return Err(Error::Unreachable {
            remote: why.remote.clone(),
            why: why.why.clone(),
        });
    }
    let reg = &landing.registry;
    let pushed = applied.commit.is_some();
    let sections = brain.sections();
    let collisions = conflict::collisions(reg, &sections);
    out.json(|| Synced {
        remote: remote.label(),
        published: landing.published.len(),
        pushed,
        collisions: output::collisions_json(collisions.iter().copied(), ctx.now),
        superseded: landing.superseded.clone(),
    })?;
    out.say(|w| {
        writeln!(
            w,
            "Synced with {} — {} active, {} stale{}",
            remote.label(),
            reg.active_claims.len(),
            reg.stale_claims.len(),
            match landing.published.len() {
                0 => String::new(),
                n => format!(", {n} pending change(s) published"),
            }
        )?;
        for (a, b) in &collisions {
            writeln!(w, "{}", bsi_core::words::collision_line(a, b))?;
        }
        if !collisions.is_empty() {
            write!(w, "{}", bsi_core::words::collision_next(&collisions))?;
        }
        Ok(())
    })?;
    Ok(if collisions.is_empty() {
        exit::OK
    } else {
        exit::CONFLICT
    })
}
