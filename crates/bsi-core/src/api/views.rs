//! What the read requests see: every session's claims (`status`), one
//! session's (`whoami`). Read only.

use chrono::{DateTime, FixedOffset, TimeZone};

use super::{Actor, Site};
use crate::audit;
use crate::claims::close::Ended;
use crate::claims::queue;
use crate::drift::Drift;
use crate::error::Result;
use crate::page::Written;
use crate::publish::{self, Freshness};
use crate::registry::{Claim, Request};
use crate::store::{self, Brain, View};
use crate::trailer;

/// Every session's claims, as the remote has them when it answers.
pub struct Status {
    /// The registry read, and from where.
    pub view: View,
    /// Whether the remote was asked, and what it said.
    pub fresh: Freshness,
    /// Claims of two sessions that overlap.
    pub collisions: Vec<(Claim, Claim)>,
    /// The live places in the queue, in order.
    pub waiting: Vec<Request>,
    /// Claimed parts changed on the content branch by commits that are
    /// not their holders' ([`crate::drift`]).
    pub drift: Vec<Drift>,
    /// Why the drift could not be read, when it could not (the rest of
    /// the view stands).
    pub drift_unread: Option<String>,
    /// Section claims whose heading the file does not have, each with
    /// why: reserved before it is written, or renamed or removed since.
    pub unwritten: Vec<(Claim, audit::Unwritten)>,
}

/// Reads every session's claims (fetched first unless `offline`).
pub fn status(site: &Site<'_>, offline: bool) -> Result<Status> {
    let (view, fresh) = publish::read(site.brain, site.settings, site.now, offline)?;
    let sections = site.brain.sections();
    let collisions = crate::conflict::collisions(&view.registry, &sections)
        .into_iter()
        .map(|(a, b)| (a.clone(), b.clone()))
        .collect();
    let waiting = queue::live_requests(&view.registry, site.now);
    let (drift, drift_unread) =
        match audit::drift_of(site.brain, &view.registry, None, site.now.timestamp()) {
            Ok(d) => (d, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
    let unwritten = audit::unwritten(site.brain, view.registry.all_claims().map(|(c, _)| c))
        .into_iter()
        .map(|(c, why)| (c.clone(), why))
        .collect();
    Ok(Status {
        view,
        fresh,
        collisions,
        waiting,
        drift,
        drift_unread,
        unwritten,
    })
}

/// One session's claims.
pub struct WhoAmI {
    /// The session.
    pub session: String,
    /// The agent that holds its claims (several, joined, if they differ);
    /// without claims, the name a new claim would get.
    pub agent: String,
    /// The session holds no claim: [`WhoAmI::agent`] is the name a new
    /// claim would get.
    pub by_default: bool,
    /// Its active claims.
    pub active: Vec<Claim>,
    /// Its stale claims.
    pub stale: Vec<Claim>,
    /// Its claims another ended (a forced close, a person's release) on
    /// scopes it does not hold again: what the session must be told.
    pub ended_by_others: Vec<Ended>,
    /// The registry read, and from where.
    pub view: View,
    /// Whether the remote was asked, and what it said.
    pub fresh: Freshness,
}

/// Reads `actor`'s own session and its claims (fetched first unless
/// `offline`); [`crate::error::Error::NoSession`] when it has none.
pub fn whoami(site: &Site<'_>, actor: &Actor, offline: bool) -> Result<WhoAmI> {
    let session = actor.own_session()?;
    let (view, fresh) = publish::read(site.brain, site.settings, site.now, offline)?;
    let reg = &view.registry;
    let mine = |claims: &[Claim]| -> Vec<Claim> {
        claims
            .iter()
            .filter(|c| c.session == session)
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
    let by_default = holders.is_empty();
    let agent = if by_default {
        actor.agent.clone()
    } else {
        holders.join(", ")
    };
    let held = |scope: &str| {
        active
            .iter()
            .chain(&stale)
            .any(|c| c.scope.to_string() == scope)
    };
    let ended_by_others = crate::claims::close::ended(reg, session, None)
        .into_iter()
        .filter(|e| e.by_another().is_some() && !held(&e.scope))
        .collect();
    Ok(WhoAmI {
        session: session.to_string(),
        agent,
        by_default,
        active,
        stale,
        ended_by_others,
        view,
        fresh,
    })
}

/// The journal of the registry branch from `view`'s tip: one entry per
/// write, newest first (a commit several writers shared gives one for each
/// of its writes, each naming it), at most `limit`.
pub fn journal(brain: &Brain, view: &View, limit: Option<usize>) -> Result<Vec<Written>> {
    let tip = view.tip().ok_or_else(|| brain.missing())?;
    // A commit carries one write at least: `limit` commits hold enough.
    let commits = brain.git.journal(tip, store::BRANCH_FILE, limit)?;
    let mut out = Vec::new();
    for c in &commits {
        let time = FixedOffset::east_opt(c.time.1 * 60)
            .and_then(|o| o.timestamp_opt(c.time.0, 0).single())
            .unwrap_or_else(|| DateTime::UNIX_EPOCH.fixed_offset());
        for write in trailer::writes(&c.message) {
            out.push(Written {
                commit: c.id.to_string(),
                time,
                author: c.author.clone(),
                write,
            });
        }
    }
    if let Some(l) = limit {
        out.truncate(l);
    }
    Ok(out)
}

/// How many writes [`page`] reads.
pub const PAGE_WRITES: usize = 20;

/// The live page of the brain ([`crate::page`]) as `view` and the work
/// tree have it at `now`: the brain's paths and the headings of its
/// markdown files, the claims, the queue, the drift (none when it cannot
/// be read) and the latest writes.
pub fn page(brain: &Brain, view: &View, now: DateTime<FixedOffset>) -> crate::page::Page {
    let reg = &view.registry;
    let (paths, _cut) = crate::resolve::walk(&brain.root, &brain.copy_name());
    let outlines = paths
        .iter()
        .filter(|(p, is_dir)| !is_dir && crate::scope::is_markdown(p, &brain.markdown))
        .filter_map(|(p, _)| Some((p.clone(), crate::resolve::read_outline(&brain.root, p)?)))
        .collect();
    let drift = audit::drift_of(brain, reg, None, now.timestamp()).unwrap_or_default();
    let writes = journal(brain, view, Some(PAGE_WRITES)).unwrap_or_default();
    crate::page::build(
        crate::page::Read {
            registry: reg,
            paths: &paths,
            outlines: &outlines,
            queue: queue::live_requests(reg, now),
            drift,
            writes,
        },
        now,
    )
}
