//! `bsi whoami`: the current session (`BSI_SESSION`), the agent, and the
//! session's claims. Read only.

use super::Ctx;
use super::views as status;
use crate::cli::WhoamiArgs;
use bsi_core::api;
use bsi_core::error::{Error, Result, exit};
use bsi_core::words::command_line;

pub(crate) fn run(ctx: &Ctx, args: &WhoamiArgs) -> Result<u8> {
    let offline = args.offline;
    let out = ctx.out();
    if ctx.env_session()?.is_none() {
        return Err(Error::NoCurrentSession);
    }
    let (brain, settings) = ctx.open()?;
    let actor = ctx.actor(None, &settings.config)?;
    let seen = api::views::whoami(&ctx.site(&brain, &settings), &actor, offline)?;
    let sync = status::sync_state(ctx, &brain, &settings, &seen.view, &seen.fresh);
    out.json(|| status::WhoAmIJson::new(&seen, ctx.now))?;
    // The view is what `whoami` is asked for: it prints even with -q,
    // without the lines that say what to do next.
    out.show(|w| {
        let api::views::WhoAmI {
            session,
            agent,
            by_default,
            active,
            stale,
            ended_by_others,
            ..
        } = &seen;
        // The commands printed are written for the directory it runs in.
        let here = ctx.here(&brain);
        let typed = |stored: &str| {
            bsi_core::scope::Scope::parse_stored(stored)
                .map_or_else(|_| stored.to_string(), |s| here.scope(&s))
        };
        writeln!(w, "Session: {session}")?;
        if *by_default {
            writeln!(w, "Agent: {agent} (no claim yet: the name a new claim gets)")?;
        } else {
            writeln!(w, "Agent: {agent}")?;
        }
        for e in ended_by_others {
            writeln!(
                w,
                "Ended by another: {} ({}, {}): no longer this session's; `{}` claims it again.",
                e.scope,
                e.by_another().unwrap_or_default(),
                e.closed,
                command_line(["bsi", "open", &typed(&e.scope), "--session", session])
            )?;
        }
        if active.is_empty() && stale.is_empty() {
            writeln!(w, "This session holds no claim.")?;
            if !ctx.verbosity.is_quiet() {
                writeln!(
                    w,
                    "Next: `{}` before editing.",
                    command_line(["bsi", "open", "SCOPE", "--session", session])
                )?;
            }
        } else {
            write!(w, "{}", status::render_claims(active, stale, ctx))?;
            let overdue = active
                .iter()
                .any(|c| bsi_core::ttl::stale_reason(c.opened, c.expires, ctx.now).is_some());
            if ctx.verbosity.is_quiet() {
                // The claims only.
            } else if overdue {
                writeln!(
                    w,
                    "Next: an overdue claim cannot be renewed: `bsi close` once the work is committed, then `bsi open SCOPE` again if it goes on."
                )?;
            } else if !active.is_empty() {
                writeln!(
                    w,
                    "Next: `bsi close` when the work is committed, `bsi renew` if it needs longer."
                )?;
            }
        }
        if let Some(s) = &sync {
            status::print_sync(w, s)?;
        }
        Ok(())
    })?;
    Ok(exit::OK)
}
