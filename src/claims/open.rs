//! The plan of `bsi open` (and of the edit hook's claim on the first
//! write): grant every scope or none, and on a refusal the claims in the
//! way and free scopes nearby.

use chrono::{DateTime, Duration, FixedOffset};

use super::Plan;
use super::{Snapshot, commit_message_by, owned_by, scopes_summary};
use crate::conflict::{self, Decision};
use crate::error::{Error, Result};
use crate::markdown::Outline;
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
    /// The session id was drawn by this run: one the registry already
    /// knows (active, stale or in the history) must be drawn again, or two
    /// sessions would become one.
    pub new_id: bool,
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
        new_id,
    } = *c;
    if new_id && reg.knows_session(session) {
        return Ok(Plan::Keep(Outcome::IdTaken));
    }
    // A session is one agent's: claims added under another agent's
    // session could not be closed or renewed by the one who added them.
    if let Some((c, _)) = reg
        .all_claims()
        .find(|(c, _)| c.session == session && !owned_by(c, agent))
    {
        return Err(Error::SessionOfAnotherAgent {
            session: session.to_string(),
            owner: c.agent.clone(),
            caller: agent.to_string(),
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
    /// The id drawn for a new session is already in the registry: draw
    /// another.
    IdTaken,
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

#[cfg(test)]
mod tests {
    use super::super::tests::{claim, registry, section, t0, written};
    use super::*;

    fn ask<'a>(session: &'a str, agent: &'a str, scopes: &'a [Scope]) -> Claiming<'a> {
        Claiming {
            session,
            agent,
            scopes,
            ttl: Duration::hours(2),
            note: "n",
            now: t0(),
            max_active_per_agent: None,
            new_id: false,
        }
    }

    fn snapshot_of(file: &str, text: &str) -> Snapshot {
        let mut snap = Snapshot::default();
        snap.worktree
            .insert(file.into(), Some(crate::markdown::outline(text)));
        snap
    }

    #[test]
    fn a_free_request_is_written_whole() {
        let reg = registry(&[], &[]);
        let scopes = [Scope::Dir("notes/".into()), Scope::File("a.md".into())];
        let plan = plan(&reg, &ask("s1", "claude", &scopes), &Snapshot::default()).expect("a plan");
        let after = written(&plan).expect("written");
        assert_eq!(after.active_claims.len(), 2);
        assert!(after.active_claims.iter().all(|c| c.session == "s1"));
        let Plan::Write { message, .. } = &plan else {
            unreachable!("written above")
        };
        assert!(
            message.starts_with("bsi: open s1 notes/, a.md"),
            "{message}"
        );
    }

    #[test]
    fn one_overlap_refuses_the_whole_request_and_names_what_was_free() {
        let held = claim("s2", "codex", Scope::File("notes/a.md".into()));
        let reg = registry(&[held], &[]);
        let scopes = [Scope::Dir("notes/".into()), Scope::File("b.md".into())];
        let plan = plan(&reg, &ask("s1", "claude", &scopes), &Snapshot::default()).expect("a plan");
        let Plan::Keep(Outcome::Refused { blockers, free, .. }) = plan else {
            panic!("refused, nothing written")
        };
        assert_eq!(blockers.len(), 1);
        assert_eq!(blockers[0].claim.session, "s2");
        assert_eq!(free, vec![Scope::File("b.md".into())]);
    }

    #[test]
    fn a_stale_claim_is_not_free() {
        let stale = claim("s2", "codex", Scope::File("a.md".into()));
        let reg = registry(&[], &[stale]);
        let scopes = [Scope::File("a.md".into())];
        let plan = plan(&reg, &ask("s1", "claude", &scopes), &Snapshot::default()).expect("a plan");
        assert!(matches!(
            plan,
            Plan::Keep(Outcome::Refused { ref blockers, .. }) if blockers[0].stale
        ));
    }

    #[test]
    fn a_section_nested_under_a_held_one_is_refused_and_siblings_are_offered() {
        let snap = snapshot_of("p.md", "# Plan\n## Goals\n### Q1\n## Risks\n## Budget\n");
        let reg = registry(&[claim("s2", "codex", section("p.md", "Goals"))], &[]);
        let scopes = [section("p.md", "Q1")];
        let plan = plan(&reg, &ask("s1", "claude", &scopes), &snap).expect("a plan");
        let Plan::Keep(Outcome::Refused { alternatives, .. }) = plan else {
            panic!("refused")
        };
        assert!(
            alternatives.contains(&section("p.md", "Risks")),
            "{alternatives:?}"
        );
        assert!(!alternatives.contains(&section("p.md", "Goals")));
    }

    #[test]
    fn a_section_that_nests_only_upstream_is_refused_with_the_version_named() {
        let mut snap = snapshot_of("p.md", "# Plan\n## Goals\n## Q1\n");
        snap.versions.insert(
            "p.md".into(),
            vec![(
                "origin/main".into(),
                crate::markdown::outline("# Plan\n## Goals\n### Q1\n"),
            )],
        );
        let reg = registry(&[claim("s2", "codex", section("p.md", "Goals"))], &[]);
        let scopes = [section("p.md", "Q1")];
        let plan = plan(&reg, &ask("s1", "claude", &scopes), &snap).expect("a plan");
        let Plan::Keep(Outcome::Refused { blockers, .. }) = plan else {
            panic!("refused")
        };
        assert_eq!(
            blockers[0].elsewhere.as_deref(),
            Some("on origin/main, `Q1` is under `Goals`")
        );
    }

    #[test]
    fn a_session_is_one_agents() {
        let reg = registry(&[claim("s1", "claude", Scope::File("a.md".into()))], &[]);
        let scopes = [Scope::File("b.md".into())];
        let e = plan(&reg, &ask("s1", "codex", &scopes), &Snapshot::default())
            .err()
            .expect("refused");
        assert!(e.to_string().contains("belongs to agent claude"), "{e}");
    }

    #[test]
    fn what_the_session_holds_is_kept_and_the_agent_limit_counts_new_claims() {
        let mine = claim("s1", "claude", Scope::File("a.md".into()));
        let reg = registry(&[mine], &[]);
        let scopes = [Scope::File("a.md".into())];
        let again =
            plan(&reg, &ask("s1", "claude", &scopes), &Snapshot::default()).expect("a plan");
        assert!(matches!(
            again,
            Plan::Keep(Outcome::Opened { ref new_claims, ref held }) if new_claims.is_empty() && held.len() == 1
        ));
        let more = [Scope::File("b.md".into())];
        let mut limited = ask("s1", "claude", &more);
        limited.max_active_per_agent = Some(1);
        let e = plan(&reg, &limited, &Snapshot::default())
            .err()
            .expect("over the limit");
        assert!(matches!(
            e,
            Error::TooManyClaims {
                wanted: 2,
                limit: 1,
                ..
            }
        ));
    }

    #[test]
    fn alternatives_come_from_the_snapshot_and_skip_the_registry_copy() {
        let mut snap = Snapshot {
            registry_rel: "BRAIN-INDEX.md".into(),
            ..Snapshot::default()
        };
        snap.listings.insert(
            String::new(),
            vec![
                Scope::File("BRAIN-INDEX.md".into()),
                Scope::Dir("notes/".into()),
                Scope::Dir("agents/".into()),
            ],
        );
        let reg = registry(&[claim("s2", "codex", Scope::Dir("notes/".into()))], &[]);
        let free = alternatives(&reg, "s1", &[Scope::Global], &[Scope::Global], &snap);
        assert_eq!(free, vec![Scope::Dir("agents/".into())]);
    }
}
