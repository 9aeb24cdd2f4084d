//! `bsi renew`: extend a session's active claims, up to 8h after opening.

use std::io::Write;

use chrono::Duration;
use serde::Serialize;

use super::{Ctx, check_owner, commit_message, opt_scope, scopes_summary, session_claims};
use crate::error::{Error, Result, exit};
use crate::output::{self, ClaimJson};
use crate::publish::{self, Plan};
use crate::registry::{Claim, Registry, TableKind};
use crate::ttl;

#[derive(Serialize)]
struct Renewed {
    session: String,
    renewed: Vec<ClaimJson>,
    unchanged: Vec<ClaimJson>,
    commit: String,
}

pub(crate) fn run(
    ctx: &Ctx,
    session: Option<&str>,
    ttl_arg: Option<Duration>,
    scope: Option<&str>,
    (force, agent): (bool, Option<&str>),
    json: bool,
) -> Result<u8> {
    let (brain, settings) = ctx.open()?;
    let config = &settings.config;
    let session = ctx.session(session)?;
    let scope = opt_scope(&brain, ctx, scope)?;
    let caller = ctx.agent(agent, config)?;
    let ttl = settings.ttl(ttl_arg);

    let applied = publish::apply(&brain, &settings, ctx.write_options(false), |reg| {
        let (active, stale) = session_claims(reg, &session, scope.as_ref());
        if active.is_empty() {
            if !stale.is_empty() {
                return Err(Error::Refused(
                    format!("the claims of {session} are stale; renew cannot revive them"),
                    format!("a person decides: `bsi release {session} --confirm`, then open again"),
                ));
            }
            return Err(Error::NotFound(format!(
                "session {session} holds no active claim"
            )));
        }
        let claims: Vec<&Claim> = active.iter().map(|&i| &reg.active_claims[i]).collect();
        check_owner(&claims, &caller, force, "renew")?;

        let now = ttl::to_minute(ctx.now);
        let mut edited: Registry = reg.clone();
        let mut renewed: Vec<Claim> = Vec::new();
        let mut unchanged: Vec<Claim> = Vec::new();
        for (&i, c) in active.iter().zip(&claims) {
            if ttl::stale_reason(c.opened, c.expires, ctx.now).is_some() {
                unchanged.push((*c).clone());
                continue;
            }
            let expires = ttl::renewed_expiry(c.opened, now, ttl);
            if expires <= c.expires {
                unchanged.push((*c).clone());
                continue;
            }
            let mut n = (*c).clone();
            n.expires = expires;
            edited.replace_claim(TableKind::Active, i, &n);
            renewed.push(n);
        }
        if renewed.is_empty() {
            return Err(Error::Refused(
            format!(
                "nothing to extend: the claims of {session} already reach {} or have passed their expiry",
                ttl::format_ts(claims.iter().map(|c| c.expires).max().unwrap_or(now))
            ),
            "a claim lives at most 8h after it was opened, and an expired one waits for the watchdog: close it and open a new claim".into(),
        ));
        }
        let message = commit_message(
            "renew",
            &[&session],
            &scopes_summary(renewed.iter().map(|c| &c.scope)),
        );
        Ok(Plan::Write {
            text: edited.render(),
            message,
            report: (renewed, unchanged),
        })
    })?;
    let (renewed, unchanged) = applied.report;
    let commit = applied.commit;

    if json {
        output::print_json(&Renewed {
            session,
            renewed: ClaimJson::list(renewed.iter(), false, ctx.now),
            unchanged: ClaimJson::list(unchanged.iter(), false, ctx.now),
            commit: commit.map(|c| c.to_string()).unwrap_or_default(),
        });
    } else {
        let mut out = ctx.out();
        for c in &renewed {
            let capped = if c.expires == c.opened + ttl::MAX_AGE {
                " (8h maximum)"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "Claim renewed — {} / expires {}{capped}",
                c.scope,
                ttl::format_ts(c.expires)
            );
        }
        for c in &unchanged {
            let _ = writeln!(
                out,
                "Unchanged — {} / expires {}",
                c.scope,
                ttl::format_ts(c.expires)
            );
        }
        super::note_commit(ctx, &mut out, commit);
    }
    Ok(publish::finish(&brain, &applied.landing, exit::OK))
}
