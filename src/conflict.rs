//! Deciding whether a request may be granted. Pure: the registry, the
//! request and a [`Sections`] oracle in, decisions out.

use crate::registry::{Claim, Registry};
use crate::scope::{Scope, Sections, covers, overlaps};

/// One claim standing in the way of a requested scope.
#[derive(Debug, Clone)]
pub struct Blocker<'a> {
    /// The scope that was asked for.
    pub requested: Scope,
    /// The claim in the way.
    pub claim: &'a Claim,
    /// Whether that claim is stale (stale is not free).
    pub stale: bool,
}

/// What the registry says about one requested scope for `session`.
#[derive(Debug, Clone)]
pub enum Decision<'a> {
    /// Free: a new claim may be written.
    Grant,
    /// The session already holds exactly this scope (stale or not).
    AlreadyHeld {
        /// Whether the held claim is stale.
        stale: bool,
    },
    /// Claims of other sessions overlap it.
    Refuse(Vec<Blocker<'a>>),
}

/// Decides one scope against every active and stale claim.
pub fn decide<'a>(
    reg: &'a Registry,
    session: &str,
    scope: &Scope,
    sections: &dyn Sections,
) -> Decision<'a> {
    let mut blockers = Vec::new();
    for (claim, stale) in reg.all_claims() {
        if claim.session == session {
            if &claim.scope == scope {
                return Decision::AlreadyHeld { stale };
            }
            continue;
        }
        if overlaps(&claim.scope, scope, sections) {
            blockers.push(Blocker {
                requested: scope.clone(),
                claim,
                stale,
            });
        }
    }
    if blockers.is_empty() {
        Decision::Grant
    } else {
        Decision::Refuse(blockers)
    }
}

/// Keeps the candidates no other session's claim overlaps and that the
/// session does not hold already, at most `max`.
pub fn free_among(
    reg: &Registry,
    session: &str,
    candidates: impl IntoIterator<Item = Scope>,
    sections: &dyn Sections,
    max: usize,
) -> Vec<Scope> {
    let mut out: Vec<Scope> = Vec::new();
    for cand in candidates {
        if out.len() >= max {
            break;
        }
        if out.contains(&cand) {
            continue;
        }
        let taken = reg
            .all_claims()
            .any(|(c, _)| c.session != session && overlaps(&c.scope, &cand, sections));
        // What the session already holds is no alternative to offer it.
        let held = reg
            .active_claims
            .iter()
            .any(|c| c.session == session && covers(&c.scope, &cand, sections));
        if !taken && !held {
            out.push(cand);
        }
    }
    out
}

/// Pairs of claims of different sessions that overlap: a registry can hold
/// them after a merge of two machines' registries, or a hand edit.
pub fn collisions<'a>(reg: &'a Registry, sections: &dyn Sections) -> Vec<(&'a Claim, &'a Claim)> {
    let all: Vec<&Claim> = reg.all_claims().map(|(c, _)| c).collect();
    let mut out = Vec::new();
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            if a.session != b.session && overlaps(&a.scope, &b.scope, sections) {
                out.push((*a, *b));
            }
        }
    }
    out
}
