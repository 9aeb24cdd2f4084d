//! A session ends its claims (all, or those on a scope): they move to the
//! history with what the audit of its changes found.

use super::{Actor, Site, Stop};
use crate::audit::{self, VerifyOutcome};
use crate::claims::close::{Closing, Handoff, plan};
use crate::claims::job::Job;
use crate::claims::session_claims;
use crate::drift::Drift;
use crate::error::{Error, Result};
use crate::publish::Applied;
use crate::registry::Claim;
use crate::scope::Scope;
use crate::store::View;
use crate::writes::State;

/// What came of a close.
pub struct Closed {
    /// The claims closed with the audit, the commit, where it landed.
    pub applied: Applied<Closing>,
    /// Why the session's changes could not be verified, when they could
    /// not (the close went ahead: an audit alerts, never blocks).
    pub unverified: Option<String>,
    /// The claims closed that commits not of the session changed since
    /// they were opened ([`crate::drift`]).
    pub drift: Vec<Drift>,
}

/// Closes `session`'s claims (those on `scope`) as `actor` acts
/// ([`Actor::owns`]); `force` closes claims of another session.
pub fn close(
    site: &Site<'_>,
    actor: &Actor,
    session: &str,
    scope: Option<&Scope>,
    force: bool,
) -> Result<Closed> {
    let _arriving = site.arriving();
    // The registry as this clone sees it, read once before the lock: the
    // session's audit (alert, never block), and what the plans of the
    // waiters a close may hand over to read of the files (read now, for
    // this writer and for another of the clone that may plan this close
    // for it: the same handoff either way; who waits is read again under
    // the lock).
    let remote = site.settings.remote().ok().flatten();
    let view = site.brain.view(remote.as_ref());
    // The last copy of the session's uncommitted work, taken while its
    // claims still say what is its own (`bsi recover` reads it after).
    if let Ok(v) = view.as_ref() {
        super::keep::refresh_or_say(site.brain, &v.registry, session);
    }
    let (verified, unverified, drift) = audit_session(site, view.as_ref(), session, scope);
    let handoff = handoff_for(site, view.as_ref().ok(), session, scope);
    let job = Job::close(
        session,
        scope,
        (actor, force),
        (verified, site.now),
        Some(&handoff),
    );
    let planned = |reg: &crate::registry::Registry| {
        // Planned here, under the writer lock (or read back from the
        // holder that planned it): who is handed over is decided now.
        handoff
            .decided
            .decide(|| crate::publish::pin_waiters(&site.meeting(), &handoff.alive));
        plan(
            reg,
            session,
            scope,
            (actor, force),
            (verified, site.now),
            Some(&handoff),
        )
    };
    let applied = match site.publish_job((&job, State::Planned), &Stop::new(), planned)? {
        Some(applied) => applied,
        None => site.publish(planned)?,
    };
    Ok(Closed {
        applied,
        unverified,
        drift,
    })
}

/// What a close of `session`'s claims (those on `scope`) needs to hand
/// the queue's first waiters their claims in its own write: the brain's
/// TTL, and the heading trees of the files the closed claims name and of
/// those the waiters known here wait for, and the waiters a live process
/// meeting this writer waits for (one of its clone, or of a clone of this
/// machine sharing its remote on this disk:
/// [`crate::store::Meeting::waiting`]). Only those are handed their claims (a
/// dead waiter's place lapses with its lease, as before); the others take
/// their grant themselves.
fn handoff_for(
    site: &Site<'_>,
    view: Option<&View>,
    session: &str,
    scope: Option<&Scope>,
) -> Handoff {
    let mut files: Vec<Scope> = Vec::new();
    if let Some(view) = view {
        let reg = &view.registry;
        let (active, stale) = session_claims(reg, session, scope);
        files.extend(active.iter().map(|&i| reg.active_claims[i].scope.clone()));
        files.extend(stale.iter().map(|&i| reg.stale_claims[i].scope.clone()));
        let waiting = crate::claims::queue::live_requests(reg, site.now);
        files.extend(waiting.iter().flat_map(|r| r.scopes.iter().cloned()));
    }
    // The live waiters it meets, whether or not this clone's registry has
    // seen their places yet (a waiter of another clone): their records
    // name what they wait for.
    let live = site.meeting().waiting();
    files.extend(live.iter().flat_map(|w| w.scopes.iter().cloned()));
    let alive = live.into_iter().map(|w| w.session).collect();
    Handoff {
        snapshot: site.brain.outlines(&files),
        ttl_seconds: site.settings.ttl(None).num_seconds(),
        max_active_per_agent: site.settings.config.max_active_per_agent,
        alive,
        decided: crate::claims::close::Decided::default(),
    }
}

/// What came of closing several scopes, one after the other: what closed,
/// and each scope that did not with why.
pub struct Each {
    /// The closes made, in the order asked.
    pub closed: Vec<Closed>,
    /// The scopes not closed, each with its error.
    pub kept: Vec<(Scope, Error)>,
}

impl Each {
    /// Every claim closed.
    pub fn claims(&self) -> impl Iterator<Item = &(Claim, bool)> {
        self.closed
            .iter()
            .flat_map(|c| c.applied.report.claims().iter())
    }
}

/// Closes each of `scopes` of `session` on its own, as `actor` acts: a
/// scope the session does not hold is said, and does not keep the others
/// open.
pub fn close_each(
    site: &Site<'_>,
    actor: &Actor,
    session: &str,
    scopes: &[Scope],
    force: bool,
) -> Each {
    let mut each = Each {
        closed: Vec::new(),
        kept: Vec::new(),
    };
    for s in scopes {
        match close(site, actor, session, Some(s), force) {
            Ok(c) => each.closed.push(c),
            Err(e) => each.kept.push((s.clone(), e)),
        }
    }
    each
}

/// What the audit of the session says of its changes, and the drift of
/// the claims it closes; a failure to read them is recorded as `not
/// verified`, with why.
fn audit_session(
    site: &Site<'_>,
    view: std::result::Result<&View, &Error>,
    session: &str,
    scope: Option<&Scope>,
) -> (VerifyOutcome, Option<String>, Vec<Drift>) {
    let audited = view.map_err(ToString::to_string).and_then(|view| {
        let (active, stale) = session_claims(&view.registry, session, scope);
        if active.is_empty() && stale.is_empty() {
            // Nothing to close: the plan says so.
            return Ok((VerifyOutcome::Clean, Vec::new()));
        }
        let reg = &view.registry;
        let closing: Vec<(&Claim, bool)> = active
            .into_iter()
            .map(|i| (&reg.active_claims[i], false))
            .chain(stale.into_iter().map(|i| (&reg.stale_claims[i], true)))
            .collect();
        let read = || -> Result<_> {
            let drift = audit::drift(site.brain, &closing, site.now.timestamp())?;
            let outcome = audit::verify(site.brain, &view.registry, session, false)?.outcome();
            Ok((outcome, drift))
        };
        read().map_err(|e| e.to_string())
    });
    match audited {
        Ok((v, drift)) => (v, None, drift),
        Err(e) => (
            VerifyOutcome::NotVerified,
            Some(format!(
                "the changes of {session} could not be verified: {e}"
            )),
            Vec::new(),
        ),
    }
}
