//! The plan of `bsi renew`: a session's active claims extended, within 8h
//! of their opening.

use chrono::{DateTime, Duration, FixedOffset};

use super::Plan;
use super::{Actor, check_owner, commit_message_about, scopes_summary, session_claims};
use crate::error::{Error, Result};
use crate::registry::{Claim, Registry, TableKind};
use crate::scope::Scope;
use crate::ttl;

/// The claims extended, and those left as they are with why.
pub type Renewing = (Vec<Claim>, Vec<(Claim, Why)>);

/// Extends the session's active claims (those on `scope`) to `ttl` from
/// now, within 8h of their opening; says why the others stay as they are.
/// Another session's claims need `force` (the commit's action is then
/// `force-renew`, with who acted).
pub fn plan(
    now: DateTime<FixedOffset>,
    reg: &Registry,
    session: &str,
    scope: Option<&Scope>,
    ttl: Duration,
    (force, actor): (bool, &Actor),
) -> Result<Plan<Renewing>> {
    let (active, stale) = session_claims(reg, session, scope);
    if active.is_empty() {
        if !stale.is_empty() {
            return Err(Error::StaleNotRenewable {
                session: session.to_string(),
                scopes: stale
                    .iter()
                    .map(|&i| reg.stale_claims[i].scope.clone())
                    .collect(),
            });
        }
        let ended = super::close::ended(reg, session, scope);
        return Err(Error::NotFound(match ended.last() {
            Some(e) => format!(
                "session {session} holds no active claim: its claims were closed ({} {}{})",
                e.status,
                e.closed,
                if e.note.is_empty() {
                    String::new()
                } else {
                    format!(", {}", e.note)
                }
            ),
            None => format!("session {session} holds no active claim"),
        }));
    }
    let claims: Vec<&Claim> = active.iter().map(|&i| &reg.active_claims[i]).collect();
    let forced = check_owner(&claims, actor, force, "renew")?;

    let minute = ttl::to_minute(now);
    let mut edited: Registry = reg.clone();
    let mut renewed: Vec<Claim> = Vec::new();
    let mut unchanged: Vec<(Claim, Why)> = Vec::new();
    for (&i, c) in active.iter().zip(&claims) {
        let why = if ttl::stale_reason(c.opened, c.expires, now).is_some() {
            Why::Overdue
        } else if c.expires >= c.opened + ttl::MAX_AGE {
            Why::Ceiling
        } else {
            let expires = ttl::renewed_expiry(c.opened, minute, ttl);
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
            return Err(Error::RenewOverdue {
                claim: Box::new((*c).clone()),
                now,
                overdue: overdue.iter().map(|c| c.scope.clone()).collect(),
            });
        }
        return Err(Error::RenewAtCeiling {
            session: session.to_string(),
            until: claims.iter().map(|c| c.expires).max().unwrap_or(minute),
            now,
            scopes: claims.iter().map(|c| c.scope.clone()).collect(),
        });
    }
    let message = commit_message_about(
        if forced { "force-renew" } else { "renew" },
        &[session],
        (
            &scopes_summary(renewed.iter().map(|c| &c.scope)),
            &renewed.iter().map(|c| &c.scope).collect::<Vec<_>>(),
        ),
        Some(&actor.agent),
    );
    Ok(Plan::Write {
        text: edited.render(),
        message,
        report: (renewed, unchanged),
    })
}

/// Gives `session`'s active claims on `scopes` whose note is empty the
/// note `note`: what a waiter asked for with `--note` when a close handed
/// it the claims (the queue keeps no note). Nothing to write when every
/// one has a note already.
pub fn note(
    reg: &Registry,
    session: &str,
    scopes: &[Scope],
    note: &str,
    agent: &str,
) -> Result<Plan<Vec<Claim>>> {
    let mut edited: Registry = reg.clone();
    let mut noted = Vec::new();
    for (i, c) in reg.active_claims.iter().enumerate() {
        if c.session == session && c.note.is_empty() && scopes.contains(&c.scope) {
            let mut n = c.clone();
            n.note = note.to_string();
            edited.replace_claim(TableKind::Active, i, &n);
            noted.push(n);
        }
    }
    if noted.is_empty() || note.is_empty() {
        return Ok(Plan::Keep(Vec::new()));
    }
    let message = commit_message_about(
        "note",
        &[session],
        (
            &scopes_summary(noted.iter().map(|c| &c.scope)),
            &noted.iter().map(|c| &c.scope).collect::<Vec<_>>(),
        ),
        Some(agent),
    );
    Ok(Plan::Write {
        text: edited.render(),
        message,
        report: noted,
    })
}

/// Why a claim was not extended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// It already lasts at least the TTL asked for.
    Reaches,
    /// It already reaches 8h after its opening.
    Ceiling,
    /// It passed its expiry: only the watchdog and a person act on it now.
    Overdue,
}

#[cfg(test)]
mod tests {
    use super::super::tests::{by, claim, registry, t0, written};
    use super::*;

    #[test]
    fn renew_extends_from_now_and_never_revives_a_stale_claim() {
        let mine = claim("s1", "a", Scope::File("a.md".into()));
        let reg = registry(std::slice::from_ref(&mine), &[]);
        let now = t0() + Duration::hours(1);
        let (a, b) = (by(None, "a", true), by(None, "b", true));
        let p = plan(now, &reg, "s1", None, Duration::hours(4), (false, &a)).expect("a plan");
        let after = written(&p).expect("written");
        assert_eq!(after.active_claims[0].expires, t0() + Duration::hours(5));
        let ok = plan(now, &reg, "s1", None, Duration::minutes(30), (false, &a)).expect("a plan");
        assert!(
            written(&ok).is_none(),
            "already long enough: nothing written"
        );
        let stale = registry(&[], &[mine]);
        let e = plan(now, &stale, "s1", None, Duration::hours(1), (false, &a))
            .err()
            .expect("refused");
        assert!(e.to_string().contains("stale"), "{e}");
        let other = plan(now, &reg, "s1", None, Duration::hours(4), (false, &b))
            .err()
            .expect("not b's");
        assert!(other.to_string().contains("opened by a"), "{other}");
    }
}
