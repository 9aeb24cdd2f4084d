//! `bsi renew`: extend a session's active claims, up to 8h after opening.

use std::io::Write;

use chrono::Duration;
use serde::Serialize;

use super::{
    Ctx, Ending, WriteCommand, check_owner, open_command, opt_scope, scopes_summary, session_claims,
};
use crate::error::{Error, Result, exit};
use crate::git::Oid;
use crate::output::{self, ClaimJson};
use crate::publish::Plan;
use crate::registry::{Claim, Registry, TableKind};
use crate::scope::Scope;
use crate::ttl;
use crate::values::{AgentName, SessionId};
use crate::words::command_line;

#[derive(Serialize)]
struct Renewed {
    session: String,
    renewed: Vec<ClaimJson>,
    unchanged: Vec<ClaimJson>,
    /// The registry commit; null when nothing needed extending.
    commit: Option<String>,
}

pub(crate) fn run(
    ctx: &Ctx,
    session: Option<&SessionId>,
    ttl_arg: Option<Duration>,
    scope: Option<&str>,
    (force, agent): (bool, Option<&AgentName>),
    json: bool,
) -> Result<u8> {
    let w = WriteCommand::open(ctx)?;
    let session = ctx.session(session)?.into_string();
    let scope = opt_scope(&w.brain, ctx, scope)?;
    let caller = ctx.agent(agent, &w.settings.config)?;
    let ttl = w.settings.ttl(ttl_arg);
    w.run(
        false,
        |reg| plan(ctx, reg, &session, scope.as_ref(), ttl, (force, &caller)),
        |(renewed, unchanged), commit| {
            report(
                ctx,
                session.clone(),
                (renewed, unchanged),
                ttl,
                commit,
                json,
            )
        },
    )
}

/// The claims extended, and those left as they are with why.
type Renewing = (Vec<Claim>, Vec<(Claim, Why)>);

/// Extends the session's active claims (those on `scope`) to `ttl` from
/// now, within 8h of their opening; says why the others stay as they are.
fn plan(
    ctx: &Ctx,
    reg: &Registry,
    session: &str,
    scope: Option<&Scope>,
    ttl: Duration,
    (force, caller): (bool, &str),
) -> Result<Plan<Renewing>> {
    let (active, stale) = session_claims(reg, session, scope);
    if active.is_empty() {
        if !stale.is_empty() {
            return Err(Error::Refused {
                what: format!("the claims of {session} are stale; renew cannot revive them"),
                hint: format!(
                    "a person decides: `{}`, then open again",
                    command_line(["bsi", "release", session, "--confirm"])
                ),
            });
        }
        return Err(Error::NotFound(format!(
            "session {session} holds no active claim"
        )));
    }
    let claims: Vec<&Claim> = active.iter().map(|&i| &reg.active_claims[i]).collect();
    check_owner(&claims, caller, force, "renew")?;

    let now = ttl::to_minute(ctx.now);
    let mut edited: Registry = reg.clone();
    let mut renewed: Vec<Claim> = Vec::new();
    let mut unchanged: Vec<(Claim, Why)> = Vec::new();
    for (&i, c) in active.iter().zip(&claims) {
        let why = if ttl::stale_reason(c.opened, c.expires, ctx.now).is_some() {
            Why::Overdue
        } else if c.expires >= c.opened + ttl::MAX_AGE {
            Why::Ceiling
        } else {
            let expires = ttl::renewed_expiry(c.opened, now, ttl);
            if expires <= c.expires {
                Why::Reaches
            } else {
                let mut n = (*c).clone();
                n.expires = expires;
                edited.replace_claim(TableKind::Active, i, &n);
                renewed.push(n);
                continue;
            }
        };
        unchanged.push(((*c).clone(), why));
    }
    if renewed.is_empty() {
        if unchanged.iter().any(|(_, w)| *w == Why::Reaches) {
            // What was asked already holds: at least `ttl` is left.
            return Ok(Plan::Keep((renewed, unchanged)));
        }
        let overdue: Vec<&Claim> = unchanged
            .iter()
            .filter(|(_, w)| *w == Why::Overdue)
            .map(|(c, _)| c)
            .collect();
        if let Some(c) = overdue.first() {
            return Err(Error::Refused {
                what: format!(
                    "{} of {session} passed its expiry ({}, {}): an overdue claim can no longer be renewed",
                    c.scope,
                    output::local_ts(c.expires, ctx.now),
                    ttl::time_left(c.expires, ctx.now)
                ),
                hint: format!(
                    "close it and claim again: `{}`, then `{}`",
                    command_line(["bsi", "close", session]),
                    open_command(overdue.iter().map(|c| &c.scope), &[])
                ),
            });
        }
        return Err(Error::Refused {
            what: format!(
                "the claims of {session} already reach the 8h maximum after their opening ({})",
                output::local_ts(
                    claims.iter().map(|c| c.expires).max().unwrap_or(now),
                    ctx.now
                )
            ),
            hint: format!(
                "finish before then, or close and claim again: `{}`, then `{}`",
                command_line(["bsi", "close", session]),
                open_command(claims.iter().map(|c| &c.scope), &[])
            ),
        });
    }
    let message = super::commit_message_by(
        "renew",
        &[session],
        &scopes_summary(renewed.iter().map(|c| &c.scope)),
        Some(caller),
    );
    Ok(Plan::Write {
        text: edited.render(),
        message,
        report: (renewed, unchanged),
    })
}

fn report(
    ctx: &Ctx,
    session: String,
    (renewed, unchanged): Renewing,
    ttl: Duration,
    commit: Option<Oid>,
    json: bool,
) -> Result<Ending> {
    if json {
        output::print_json(&Renewed {
            session,
            renewed: ClaimJson::list(renewed.iter(), false, ctx.now),
            unchanged: ClaimJson::list(unchanged.iter().map(|(c, _)| c), false, ctx.now),
            commit: commit.map(|c| c.to_string()),
        })?;
    } else {
        let mut out = ctx.out();
        for c in &renewed {
            let capped = if c.expires == c.opened + ttl::MAX_AGE {
                " (8h maximum)"
            } else {
                ""
            };
            writeln!(
                out,
                "Claim renewed — {}, expires {}{capped}",
                c.scope,
                output::local_ts(c.expires, ctx.now)
            )
            .map_err(Error::output)?;
        }
        for (c, why) in &unchanged {
            let because = match why {
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
                out,
                "Unchanged — {}, expires {} ({because})",
                c.scope,
                output::local_ts(c.expires, ctx.now)
            )
            .map_err(Error::output)?;
        }
        super::note_commit(ctx, &mut out, commit)?;
        if renewed.is_empty() {
            writeln!(
                out,
                "Next: renew nearer the expiry, or ask for more now: `{}`.",
                command_line(["bsi", "renew", &session, "--ttl", "4h"])
            )
            .map_err(Error::output)?;
        } else {
            writeln!(
                out,
                "Next: `{}` when the work is committed.",
                command_line(["bsi", "close", &session])
            )
            .map_err(Error::output)?;
        }
    }
    Ok(Ending::Landed(exit::OK))
}

/// Why a claim was not extended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    /// It already lasts at least the TTL asked for.
    Reaches,
    /// It already reaches 8h after its opening.
    Ceiling,
    /// It passed its expiry: only the watchdog and a person act on it now.
    Overdue,
}
