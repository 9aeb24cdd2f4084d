//! `bsi renew`: extend a session's active claims, up to 8h after opening.

use super::{Ctx, Ending, WriteCommand, opt_scope};
use crate::cli::RenewArgs;
use crate::output::{self, ClaimJson};
use bsi_core::api;
use bsi_core::api::git::Oid;
use bsi_core::claims::renew::{Renewing, Why};
use bsi_core::error::{Result, exit};
use bsi_core::ttl;
use bsi_core::values::Ttl;
use bsi_core::words::command_line;
use chrono::Duration;

pub(crate) fn run(ctx: &Ctx, args: &RenewArgs) -> Result<u8> {
    let RenewArgs {
        session,
        ttl,
        scope,
        force,
        agent,
        ..
    } = args;
    let (session, ttl_arg, scope, force, agent) = (
        session.as_ref(),
        ttl.map(Ttl::duration),
        scope.as_deref(),
        *force,
        agent.as_ref(),
    );
    let w = WriteCommand::open(ctx)?;
    let session = ctx.session(session)?.into_string();
    let scope = opt_scope(&w.brain, ctx, scope)?;
    let actor = ctx.actor(agent, &w.settings.config)?;
    let ttl = w.settings.ttl(ttl_arg);
    let applied = api::renew::renew(&w.site(), &actor, &session, scope.as_ref(), ttl, force)?;
    w.report(applied, |renewing, commit| {
        report(ctx, (session.clone(), force), renewing, ttl, commit)
    })
}

fn report(
    ctx: &Ctx,
    (session, force): (String, bool),
    (renewed, unchanged): Renewing,
    ttl: Duration,
    commit: Option<Oid>,
) -> Result<Ending> {
    let out = ctx.out();
    out.json(|| output::RenewedJson {
        session: session.clone(),
        renewed: ClaimJson::list(renewed.iter(), false, ctx.now),
        unchanged: ClaimJson::list(unchanged.iter().map(|(c, _)| c), false, ctx.now),
        commit: commit.map(|c| c.to_string()),
    })?;
    out.say(|w| {
        for c in &renewed {
            let capped = if c.expires == c.opened + ttl::MAX_AGE {
                " (8h maximum)"
            } else {
                ""
            };
            writeln!(
                w,
                "Claim renewed — {}, expires {}{capped}",
                c.scope,
                output::local_ts(c.expires, ctx.now)
            )?;
        }
        for (c, why) in &unchanged {
            let because = match why {
                // Expiries are kept to the minute: less than `ttl` left
                // may still end in the minute `ttl` from now would.
                Why::Reaches if c.expires - ctx.now < ttl => format!(
                    "{}; {} from now ends in the same minute",
                    ttl::time_left(c.expires, ctx.now),
                    ttl::format_duration(ttl)
                ),
                Why::Reaches => format!(
                    "{}, already at least {} from now",
                    ttl::time_left(c.expires, ctx.now),
                    ttl::format_duration(ttl)
                ),
                Why::Ceiling => "the 8h maximum".into(),
                Why::Overdue => format!(
                    "{}: close it and claim again",
                    ttl::time_left(c.expires, ctx.now)
                ),
            };
            writeln!(
                w,
                "Unchanged — {}, expires {} ({because})",
                c.scope,
                output::local_ts(c.expires, ctx.now)
            )?;
        }
        super::note_commit(ctx, w, commit)?;
        // A renew forced on another's claim: the next commands need the
        // same force to run as printed.
        let forced: &[&str] = if force { &["--force"] } else { &[] };
        if renewed.is_empty() {
            let renew = ["bsi", "renew", session.as_str(), "--ttl", "4h"];
            writeln!(
                w,
                "Next: renew nearer the expiry, or ask for more now: `{}`.",
                command_line(renew.iter().chain(forced))
            )
        } else {
            let close = ["bsi", "close", session.as_str()];
            writeln!(
                w,
                "Next: `{}` when the work is committed.",
                command_line(close.iter().chain(forced))
            )
        }
    })?;
    Ok(Ending::Landed(exit::OK))
}
