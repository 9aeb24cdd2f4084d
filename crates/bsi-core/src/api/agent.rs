//! A session of an agent tool, as its hooks see it: what it is told when it
//! starts (the claims, fresh from the remote when it answers, and what
//! others' commits changed under its own), and what it still holds when
//! the agent stops. Data only: the door words it.

use chrono::{DateTime, FixedOffset};

use crate::claims::session_claims;
use crate::drift::Drift;
use crate::error::{Error, Result};
use crate::publish::{self, Freshness};
use crate::registry::{Claim, Registry};
use crate::scope::Scope;
use crate::settings::Settings;
use crate::store::Brain;

/// What an agent is told of the brain when its session starts.
#[derive(Debug, Clone)]
pub struct Briefing {
    /// The session's active claims.
    pub own: Vec<Claim>,
    /// Other sessions' active claims: not to edit inside.
    pub others: Vec<Claim>,
    /// The stale claims, every session's: still not free.
    pub stale: Vec<Claim>,
    /// How current the claims are.
    pub fresh: Freshness,
    /// What others' commits changed under the session's claims since it
    /// opened them (a clone without bsi's hooks, a forced escape); empty
    /// when it could not be read (said in the brain's notes).
    pub drift: Vec<Drift>,
}

/// The briefing of `session` in `brain`: the registry read as `bsi status`
/// reads it (fetched when the remote answers), split into the session's
/// claims and the others'.
pub fn briefing(
    brain: &Brain,
    settings: &Settings,
    session: &str,
    now: DateTime<FixedOffset>,
) -> Result<Briefing> {
    let (view, fresh) = publish::read(brain, settings, now, false)?;
    let drift = match crate::audit::drift_of(brain, &view.registry, Some(session), now.timestamp())
    {
        Ok(drift) => drift,
        Err(e) => {
            brain
                .notes
                .push(format!("warning: the claims' drift could not be read: {e}"));
            Vec::new()
        }
    };
    let (own, others) = split(&view.registry, session);
    Ok(Briefing {
        own,
        others,
        stale: view.registry.stale_claims.clone(),
        fresh,
        drift,
    })
}

/// The active claims of `reg`: the session's, then the others'.
fn split(reg: &Registry, session: &str) -> (Vec<Claim>, Vec<Claim>) {
    reg.active_claims
        .iter()
        .cloned()
        .partition(|c| c.session == session)
}

/// What `session` still holds when its agent stops: its active claims,
/// then its stale ones (`true`), read as an edit hook reads the registry
/// (no fetch). When it holds any, the end of the turn refreshes the copy
/// of its uncommitted work ([`super::keep::refresh`]). Empty where bsi is
/// not set up.
pub fn at_stop(brain: &Brain, settings: &Settings, session: &str) -> Result<Vec<(Scope, bool)>> {
    let remote = settings.remote().ok().flatten();
    let reg = match brain.view(remote.as_ref()) {
        Ok(v) => v.registry,
        Err(Error::NoRegistry { .. }) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let held = held(&reg, session);
    if !held.is_empty() {
        super::keep::refresh_or_say(brain, &reg, session);
    }
    Ok(held)
}

/// The scopes `session` holds in `reg`: active, then stale (`true`).
fn held(reg: &Registry, session: &str) -> Vec<(Scope, bool)> {
    let (active, stale) = session_claims(reg, session, None);
    active
        .iter()
        .map(|&i| (reg.active_claims[i].scope.clone(), false))
        .chain(
            stale
                .iter()
                .map(|&i| (reg.stale_claims[i].scope.clone(), true)),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::tests::{claim, registry};

    fn file(f: &str) -> Scope {
        Scope::File(f.into())
    }

    #[test]
    fn a_session_holds_its_active_claims_then_its_stale_ones() {
        let reg = registry(
            &[
                claim("s1", "a", file("a.md")),
                claim("s2", "a", file("b.md")),
            ],
            &[
                claim("s1", "a", file("c.md")),
                claim("s2", "a", file("d.md")),
            ],
        );
        assert_eq!(
            held(&reg, "s1"),
            [(file("a.md"), false), (file("c.md"), true)]
        );
        assert!(held(&reg, "s3").is_empty());
    }

    #[test]
    fn the_briefing_tells_the_sessions_claims_from_the_others() {
        let reg = registry(
            &[
                claim("s1", "a", file("a.md")),
                claim("s2", "a", file("b.md")),
                claim("s1", "a", file("e.md")),
            ],
            &[],
        );
        let (own, others) = split(&reg, "s1");
        let scopes = |c: &[Claim]| c.iter().map(|c| c.scope.clone()).collect::<Vec<_>>();
        assert_eq!(scopes(&own), [file("a.md"), file("e.md")]);
        assert_eq!(scopes(&others), [file("b.md")]);
    }
}
