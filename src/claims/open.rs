//! The plan of `bsi open` (and of the edit hook's claim on the first
//! write): grant every scope or none, and on a refusal the claims in the
//! way and free scopes nearby.

use chrono::{DateTime, Duration, FixedOffset};

use super::{Snapshot, commit_message_by, owned_by, scopes_summary};
use crate::conflict::{self, Decision};
use crate::error::{Error, Result};
use crate::markdown::Outline;
use crate::publish::Plan;
use crate::registry::{Claim, Registry, TableKind};
use crate::scope::{Scope, Sections};
use crate::ttl;

/// What a claim request holds once resolved: the input of [`plan`].
pub struct Claiming<'a> {
    pub session: &'a str,
    pub agent: &'a str,
    pub scopes: &'a [Scope],
    pub ttl: Duration,
    pub note: &'a str,
    pub now: DateTime<FixedOffset>,
    pub max_active_per_agent: Option<usize>,
}

/// The plan of `bsi open` (also the edit hook's claim on first write):
/// grant every scope or none.
pub fn plan(reg: &Registry, c: &Claiming<'_>, snap: &Snapshot) -> Result<Plan<Outcome>> {
    let Claiming {
        session,
        agent,
        scopes,
        ttl,
        note,
        now,
        max_active_per_agent,
    } = *c;
    // A session is one agent's: claims added under another agent's
    // session could not be closed or renewed by the one who added them.
    if let Some((c, _)) = reg
        .all_claims()
        .find(|(c, _)| c.session == session && !owned_by(c, agent))
    {
        return Err(Error::Refused {
            what: format!(
                "session {session} belongs to agent {}, not to {agent}: its claims are closed and renewed by {}",
                c.agent, c.agent
            ),
            hint: format!(
                "open a session of your own (leave out --session and BSI_SESSION, or give a new id), or act as {} with `--agent {}`",
                c.agent, c.agent
            ),
        });
    }
    let mut grant: Vec<Scope> = Vec::new();
    let mut held: Vec<(Claim, bool)> = Vec::new();
    let mut blockers: Vec<Owned> = Vec::new();
    for s in scopes {
        match conflict::decide(reg, session, s, snap) {
            Decision::Grant => grant.push(s.clone()),
            Decision::AlreadyHeld { stale } => {
                if let Some((c, _)) = reg
                    .all_claims()
                    .find(|(c, st)| c.session == session && &c.scope == s && *st == stale)
                {
                    held.push((c.clone(), stale));
                }
            }
            Decision::Refuse(b) => blockers.extend(b.into_iter().map(|b| Owned {
                elsewhere: nested_elsewhere(&b.requested, &b.claim.scope, snap),
                requested: b.requested,
                claim: b.claim.clone(),
                stale: b.stale,
            })),
        }
    }
    if !blockers.is_empty() {
        // Alternatives for what was refused; what was free in the
        // request is said apart.
        let refused: Vec<Scope> = scopes
            .iter()
            .filter(|s| blockers.iter().any(|b| &b.requested == *s))
            .cloned()
            .collect();
        let alternatives = alternatives(reg, session, &refused, scopes, snap);
        return Ok(Plan::Keep(Outcome::Refused {
            blockers,
            alternatives,
            free: grant,
        }));
    }
    if let Some(limit) = max_active_per_agent {
        let holding = reg
            .active_claims
            .iter()
            .filter(|c| c.agent.eq_ignore_ascii_case(agent))
            .count();
        let wanted = holding + grant.len();
        if !grant.is_empty() && wanted > limit {
            return Err(Error::TooManyClaims {
                agent: agent.to_string(),
                wanted,
                limit,
            });
        }
    }
    let opened_at = ttl::to_minute(now);
    let new_claims: Vec<Claim> = grant
        .iter()
        .map(|s| Claim {
            session: session.to_string(),
            scope: s.clone(),
            agent: agent.to_string(),
            opened: opened_at,
            expires: ttl::expiry(opened_at, ttl),
            note: note.to_string(),
            reason: None,
            extra: Vec::new(),
        })
        .collect();
    if new_claims.is_empty() {
        return Ok(Plan::Keep(Outcome::Opened { new_claims, held }));
    }
    let mut edited: Registry = reg.clone();
    for c in &new_claims {
        edited.add_claim(TableKind::Active, c);
    }
    Ok(Plan::Write {
        text: edited.render(),
        message: commit_message_by("open", &[session], &scopes_summary(&grant), Some(agent)),
        report: Outcome::Opened { new_claims, held },
    })
}

/// A claim in the way of a requested scope.
pub struct Owned {
    pub requested: Scope,
    pub claim: Claim,
    pub stale: bool,
    /// Why two sections that look apart in the work tree overlap: how they
    /// nest in another version of the file (`on origin/main, `Q1` is under
    /// `Risks``).
    pub elsewhere: Option<String>,
}

/// For two sections of one file that nest only in another version than
/// the work tree's, the words that say so.
fn nested_elsewhere(a: &Scope, b: &Scope, sections: &dyn Sections) -> Option<String> {
    let (
        Scope::Section { file, heading: ha },
        Scope::Section {
            file: file_b,
            heading: hb,
        },
    ) = (a, b)
    else {
        return None;
    };
    if file != file_b {
        return None;
    }
    let (ka, kb) = (crate::scope::heading_key(ha), crate::scope::heading_key(hb));
    if let Some(at) = sections.elsewhere(file, &kb, &ka) {
        return Some(format!("on {at}, `{ha}` is under `{hb}`"));
    }
    sections
        .elsewhere(file, &ka, &kb)
        .map(|at| format!("on {at}, `{hb}` is under `{ha}`"))
}

/// What the plan decided.
pub enum Outcome {
    Opened {
        new_claims: Vec<Claim>,
        held: Vec<(Claim, bool)>,
    },
    Refused {
        blockers: Vec<Owned>,
        alternatives: Vec<Scope>,
        /// Scopes of the request nobody else holds.
        free: Vec<Scope>,
    },
}

/// Free scopes near what was asked: parts of it, then its siblings.
pub fn alternatives(
    reg: &Registry,
    session: &str,
    refused: &[Scope],
    requested: &[Scope],
    snap: &Snapshot,
) -> Vec<Scope> {
    let mut cands: Vec<Scope> = Vec::new();
    for r in refused {
        match r {
            Scope::Global => cands.extend_from_slice(snap.children("")),
            Scope::Dir(d) => {
                cands.extend_from_slice(snap.children(d));
                cands.extend_from_slice(snap.children(parent_dir(d)));
            }
            Scope::File(f) => {
                if let Some(o) = snap.outline(f) {
                    cands.extend(section_scopes(f, o, None));
                }
                cands.extend_from_slice(snap.children(parent_dir(f)));
            }
            Scope::Section { file, heading } => {
                if let Some(o) = snap.outline(file) {
                    let key = crate::scope::heading_key(heading);
                    let parent = o.find(&key).next().map(|(i, _)| i);
                    cands.extend(section_scopes(file, o, parent));
                    let grand = parent.and_then(|i| o.headings[i].parent);
                    cands.extend(section_scopes(file, o, grand));
                    cands.extend(section_scopes(file, o, None));
                }
            }
        }
    }
    let cands = cands
        .into_iter()
        .filter(|c| !requested.contains(c) && c.file() != Some(snap.registry_rel.as_str()));
    conflict::free_among(reg, session, cands, snap, 6)
}

/// Sections directly under heading `parent`; without one, every heading of
/// the file, widest first.
fn section_scopes(file: &str, o: &Outline, parent: Option<usize>) -> Vec<Scope> {
    let mut hs: Vec<_> = o
        .headings
        .iter()
        .filter(|h| parent.is_none() || h.parent == parent)
        .collect();
    hs.sort_by_key(|h| (h.level, h.line));
    hs.into_iter()
        .map(|h| Scope::Section {
            file: file.to_string(),
            heading: h.text.clone(),
        })
        .collect()
}

pub(crate) fn parent_dir(path: &str) -> &str {
    let p = path.strip_suffix('/').unwrap_or(path);
    match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    }
}
