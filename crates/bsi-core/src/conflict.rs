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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::parse;
    use crate::registry::render::empty_registry;
    use crate::scope::FlatSections;

    /// `plan.md`'s heading tree: `Goals` holds `Q1` and `Q2`.
    struct Plan;
    impl Sections for Plan {
        fn contains(&self, file: &str, outer: &str, inner: &str) -> bool {
            file == "plan.md" && outer == "goals" && matches!(inner, "q1" | "q2")
        }
    }

    fn s(x: &str) -> Scope {
        Scope::parse_stored(x).expect("valid scope")
    }

    fn claim(session: &str, scope: &str) -> Claim {
        let opened = chrono::DateTime::parse_from_rfc3339("2026-03-14T09:30:00Z").expect("time");
        Claim {
            session: session.into(),
            scope: s(scope),
            agent: "a".into(),
            opened,
            expires: opened + chrono::Duration::hours(2),
            note: String::new(),
            reason: None,
            extra: Vec::new(),
        }
    }

    /// A registry holding `active` and `stale` claims, as (session, scope).
    fn registry(active: &[(&str, &str)], stale: &[(&str, &str)]) -> Registry {
        let mut reg = parse(empty_registry()).expect("the empty registry parses");
        reg.active_claims = active.iter().map(|(a, b)| claim(a, b)).collect();
        reg.stale_claims = stale.iter().map(|(a, b)| claim(a, b)).collect();
        reg
    }

    /// The blockers of a refusal as (session, scope, stale), or `None` when
    /// the decision is not a refusal.
    fn blockers(d: &Decision<'_>) -> Option<Vec<(String, String, bool)>> {
        match d {
            Decision::Refuse(b) => Some(
                b.iter()
                    .map(|b| (b.claim.session.clone(), b.claim.scope.to_string(), b.stale))
                    .collect(),
            ),
            _ => None,
        }
    }

    #[test]
    fn a_free_scope_is_granted() {
        let reg = registry(&[("s2", "agents/")], &[("s3", "notes/a.md")]);
        for scope in ["projets/", "notes/b.md", "README.md"] {
            assert!(
                matches!(
                    decide(&reg, "s1", &s(scope), &FlatSections),
                    Decision::Grant
                ),
                "{scope}"
            );
        }
        assert!(matches!(
            decide(&registry(&[], &[]), "s1", &s("global"), &FlatSections),
            Decision::Grant
        ));
    }

    #[test]
    fn every_claim_of_another_session_in_the_way_is_named_active_or_stale() {
        let reg = registry(
            &[("s2", "agents/"), ("s4", "projets/"), ("s5", "global")],
            &[("s3", "agents/alice.md")],
        );
        let d = decide(&reg, "s1", &s("agents/alice.md"), &FlatSections);
        assert_eq!(
            blockers(&d).expect("refused"),
            [
                ("s2".into(), "agents/".into(), false),
                ("s5".into(), "global".into(), false),
                ("s3".into(), "agents/alice.md".into(), true),
            ]
        );
        let Decision::Refuse(b) = d else {
            unreachable!()
        };
        assert!(b.iter().all(|b| b.requested == s("agents/alice.md")));
    }

    #[test]
    fn the_sessions_own_claims_never_stand_in_its_way() {
        let reg = registry(&[("s1", "agents/")], &[("s1", "notes/")]);
        for scope in ["agents/alice.md", "notes/a.md", "global"] {
            assert!(
                matches!(
                    decide(&reg, "s1", &s(scope), &FlatSections),
                    Decision::Grant
                ),
                "{scope}"
            );
        }
        // The same scopes are refused to another session.
        assert_eq!(
            blockers(&decide(&reg, "s2", &s("global"), &FlatSections)).expect("refused"),
            [
                ("s1".into(), "agents/".into(), false),
                ("s1".into(), "notes/".into(), true),
            ]
        );
    }

    #[test]
    fn a_scope_held_already_is_said_so_with_its_table() {
        let reg = registry(&[("s1", "agents/")], &[("s1", "notes/a.md")]);
        assert!(matches!(
            decide(&reg, "s1", &s("agents/"), &FlatSections),
            Decision::AlreadyHeld { stale: false }
        ));
        assert!(matches!(
            decide(&reg, "s1", &s("notes/a.md"), &FlatSections),
            Decision::AlreadyHeld { stale: true }
        ));
        // Held already even when a collision (two machines' registries
        // merged) put another session's claim over it: the session keeps
        // what it has, and the collision is said elsewhere.
        let collided = registry(&[("s2", "agents/"), ("s1", "agents/alice.md")], &[]);
        assert!(matches!(
            decide(&collided, "s1", &s("agents/alice.md"), &FlatSections),
            Decision::AlreadyHeld { stale: false }
        ));
    }

    #[test]
    fn sections_conflict_through_the_heading_tree_only() {
        let reg = registry(&[("s2", "plan.md#Goals")], &[]);
        // Apart by their names alone...
        assert!(matches!(
            decide(&reg, "s1", &s("plan.md#Q1"), &FlatSections),
            Decision::Grant
        ));
        // ...but Q1 is under Goals.
        assert_eq!(
            blockers(&decide(&reg, "s1", &s("plan.md#Q1"), &Plan)).expect("refused"),
            [("s2".into(), "plan.md#Goals".into(), false)]
        );
        // A heading elsewhere in the file, and the same heading in another
        // file, are free; the whole file is not.
        assert!(matches!(
            decide(&reg, "s1", &s("plan.md#Risks"), &Plan),
            Decision::Grant
        ));
        assert!(matches!(
            decide(&reg, "s1", &s("other.md#Goals"), &Plan),
            Decision::Grant
        ));
        assert!(blockers(&decide(&reg, "s1", &s("plan.md"), &Plan)).is_some());
    }

    #[test]
    fn free_among_keeps_the_free_candidates_in_order_once_and_at_most_max() {
        let reg = registry(
            &[("s2", "agents/alice.md"), ("s1", "projets/")],
            &[("s3", "notes/")],
        );
        let candidates = [
            "agents/alice.md", // another session's
            "agents/bob.md",
            "notes/a.md",      // under another session's stale claim
            "agents/bob.md",   // twice
            "projets/plan.md", // the session holds it already
            "README.md",
            "docs/",
        ]
        .map(s);
        let free = |max| free_among(&reg, "s1", candidates.clone(), &FlatSections, max);
        assert_eq!(free(10), [s("agents/bob.md"), s("README.md"), s("docs/")]);
        assert_eq!(free(2), [s("agents/bob.md"), s("README.md")]);
        assert!(free(0).is_empty());
        // What the session holds is left out only when it covers the
        // candidate: a folder around the session's own file is offered to
        // it, and taken for anyone else.
        let reg = registry(&[("s1", "agents/alice.md")], &[]);
        let around = || [s("agents/"), s("agents/alice.md")];
        assert_eq!(
            free_among(&reg, "s1", around(), &FlatSections, 10),
            [s("agents/")]
        );
        assert!(free_among(&reg, "s2", around(), &FlatSections, 10).is_empty());
    }

    #[test]
    fn collisions_are_the_overlapping_pairs_of_different_sessions() {
        let reg = registry(
            &[
                ("s1", "agents/"),
                ("s1", "agents/alice.md"),
                ("s2", "agents/bob.md"),
                ("s4", "plan.md#Q1"),
            ],
            &[("s3", "agents/"), ("s5", "plan.md#Goals")],
        );
        let pairs = |sections: &dyn Sections| -> Vec<(String, String)> {
            collisions(&reg, sections)
                .into_iter()
                .map(|(a, b)| {
                    (
                        format!("{} {}", a.session, a.scope),
                        format!("{} {}", b.session, b.scope),
                    )
                })
                .collect()
        };
        let by_name = [
            ("s1 agents/", "s2 agents/bob.md"),
            ("s1 agents/", "s3 agents/"),
            ("s1 agents/alice.md", "s3 agents/"),
            ("s2 agents/bob.md", "s3 agents/"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()));
        assert_eq!(pairs(&FlatSections), by_name);
        // Through the heading tree, Q1 under Goals collides too.
        let mut with_tree = by_name.to_vec();
        with_tree.push(("s4 plan.md#Q1".into(), "s5 plan.md#Goals".into()));
        assert_eq!(pairs(&Plan), with_tree);
        assert!(collisions(&registry(&[("s1", "a/"), ("s2", "b/")], &[]), &Plan).is_empty());
    }
}
