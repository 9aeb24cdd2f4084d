//! `bsi whoami`: the current session (`BSI_SESSION`), the agent, and the
//! session's claims. Read only.

use std::io::Write;

use serde::Serialize;

use super::Ctx;
use super::views as status;
use crate::error::{Error, Result, exit};
use crate::output::{self, ClaimJson};
use crate::registry::Claim;
use crate::words::command_line;

#[derive(Serialize)]
struct WhoAmI {
    session: String,
    agent: String,
    active: Vec<ClaimJson>,
    stale: Vec<ClaimJson>,
}

pub(crate) fn run(ctx: &Ctx, offline: bool) -> Result<u8> {
    let json = ctx.json();
    let Some(session) = ctx.env_session()? else {
        return Err(Error::NoCurrentSession);
    };
    let (brain, settings) = ctx.open()?;
    let agent = ctx.agent(None, &settings.config)?.into_string();
    let (view, fresh) = crate::publish::read(&brain, &settings, ctx.now, offline)?;
    let sync = status::sync_state(ctx, &brain, &settings, &view, &fresh);
    let reg = &view.registry;
    let mine = |claims: &[Claim]| -> Vec<Claim> {
        claims
            .iter()
            .filter(|c| c.session == *session)
            .cloned()
            .collect()
    };
    let (active, stale) = (mine(&reg.active_claims), mine(&reg.stale_claims));
    // The agent is the one that holds the session's claims; without claims,
    // the one a new claim would get.
    let mut holders: Vec<&str> = Vec::new();
    for c in active.iter().chain(&stale) {
        if !c.agent.is_empty() && !holders.iter().any(|h| h.eq_ignore_ascii_case(&c.agent)) {
            holders.push(&c.agent);
        }
    }
    let agent = if holders.is_empty() {
        agent
    } else {
        holders.join(", ")
    };
    let by_default = holders.is_empty();
    if json {
        output::print_json(&WhoAmI {
            session: session.to_string(),
            agent,
            active: ClaimJson::list(active.iter(), false, ctx.now),
            stale: ClaimJson::list(stale.iter(), true, ctx.now),
        })?;
        return Ok(exit::OK);
    }
    // The view is what `whoami` is asked for: it prints even with -q,
    // without the lines that say what to do next.
    let mut out = ctx.asked();
    writeln!(out, "Session: {session}").map_err(Error::output)?;
    if by_default {
        writeln!(
            out,
            "Agent: {agent} (no claim yet: the name a new claim gets)"
        )
        .map_err(Error::output)?;
    } else {
        writeln!(out, "Agent: {agent}").map_err(Error::output)?;
    }
    if active.is_empty() && stale.is_empty() {
        writeln!(out, "This session holds no claim.").map_err(Error::output)?;
        if !ctx.verbosity.is_quiet() {
            writeln!(
                out,
                "Next: `{}` before editing.",
                command_line(["bsi", "open", "SCOPE", "--session", &session])
            )
            .map_err(Error::output)?;
        }
    } else {
        write!(out, "{}", status::render_claims(&active, &stale, ctx)).map_err(Error::output)?;
        let overdue = active
            .iter()
            .any(|c| crate::ttl::stale_reason(c.opened, c.expires, ctx.now).is_some());
        if ctx.verbosity.is_quiet() {
            // The claims only.
        } else if overdue {
            writeln!(
                out,
                "Next: an overdue claim cannot be renewed: `bsi close` once the work is\n      committed, then `bsi open SCOPE` again if it goes on."
            ).map_err(Error::output)?;
        } else if !active.is_empty() {
            writeln!(
                out,
                "Next: `bsi close` when the work is committed, `bsi renew` if it needs longer."
            )
            .map_err(Error::output)?;
        }
    }
    if let Some(s) = &sync {
        status::print_sync(&mut out, s)?;
    }
    Ok(exit::OK)
}
