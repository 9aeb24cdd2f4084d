//! Drift: a claimed part of the brain changed on the content branch by a
//! commit that is not its holder's — made in a clone without bsi's hooks,
//! or let through by a forced escape — and so never refused. The holder
//! is told, since it is the one whose work the change lands under.
//!
//! Pure: the claims, the commits that landed since the oldest of them
//! with who made them, and what each touched (read by
//! [`crate::audit::drift`] through the guard's one reading of a commit),
//! in; the drift out.
//!
//! The rule: a commit drifts a claim when it touched the claim, was made
//! while its holder held it, and its session did not hold that part then
//! — its `BSI-Session` trailer names no session, or one that held no
//! scope covering the claim at that second. Who held what at which second
//! is the one record of the registry's history ([`crate::holdings`]),
//! never the minute a registry row records: a change made under its
//! author's own claim is never drift, in any clone, whatever the order
//! it arrived in. A commit its holder tagged is the holder's own work,
//! whatever it changed. A commit dated ahead of this clock by more than
//! [`LEEWAY_SECS`] (a machine whose clock runs fast) is judged once the
//! clock reaches it.

use crate::guard::Region;
use crate::holdings::Holdings;
use crate::registry::Claim;
use crate::scope::FlatSections;

/// How far ahead of this clock a commit's time may be and still be judged:
/// the leeway the registry's times get between two machines' clocks.
pub const LEEWAY_SECS: i64 = 120;

/// One commit of the content branch, as the rule needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Landed {
    /// Its id, in full.
    pub id: String,
    /// Who made it: `Name <email>`, as git records the author.
    pub author: String,
    /// The session its `BSI-Session` trailer names; `None` without one.
    pub session: Option<String>,
    /// When it was committed, seconds since the epoch.
    pub time: i64,
    /// What it touched of the claims.
    pub touched: Vec<Touch>,
}

/// A claim a commit touched, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    /// The claim, as an index into the claims the rule is given.
    pub claim: usize,
    /// The path changed, relative to the brain root.
    pub path: String,
    /// The lines, for a section claim; `None`: the file as a whole.
    pub region: Option<Region>,
}

/// A claimed part changed by a commit that is not its holder's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// The claim changed under its holder.
    pub claim: Claim,
    /// Whether the claim is stale.
    pub stale: bool,
    /// The commit, in full.
    pub commit: String,
    /// Who made it.
    pub author: String,
    /// The session its trailer names, if any.
    pub session: Option<String>,
    /// The path it changed.
    pub path: String,
    /// The lines, for a section claim.
    pub region: Option<Region>,
}

/// A claim held now, and whether it is stale.
pub type Held<'a> = (&'a Claim, bool);

/// Whether `commit` drifts `claim`: made while its holder held it (by
/// `holdings`, to the second; not ahead of `now` by more than
/// [`LEEWAY_SECS`]) by a session that did not hold the claimed part then.
pub fn drifts(holdings: &Holdings, claim: &Claim, commit: &Landed, now: i64) -> bool {
    let t = commit.time;
    t <= now + LEEWAY_SECS
        && holdings.held_now_at(&claim.session, &claim.scope, t)
        && !commit.session.as_deref().is_some_and(|s| {
            s == claim.session || holdings.held_by(s, &claim.scope, t, &FlatSections)
        })
}

/// Whether reading what `commit` changed can find drift at all: some claim
/// of `claims` was held when it was made by someone else. Lets the reader
/// skip the diff of every other commit.
pub fn may_drift(holdings: &Holdings, claims: &[Held<'_>], commit: &Landed, now: i64) -> bool {
    claims.iter().any(|(c, _)| drifts(holdings, c, commit, now))
}

/// The drift of `claims` among `commits` (newest first, as walked): one
/// entry per claim a commit touched while someone else held it, in the
/// order of the commits, then of what each touched. Touches naming no
/// claim of `claims` are ignored.
pub fn drift(holdings: &Holdings, claims: &[Held<'_>], commits: &[Landed], now: i64) -> Vec<Drift> {
    let mut out = Vec::new();
    for commit in commits {
        for t in &commit.touched {
            let Some(&(claim, stale)) = claims.get(t.claim) else {
                continue;
            };
            if drifts(holdings, claim, commit, now) {
                out.push(Drift {
                    claim: claim.clone(),
                    stale,
                    commit: commit.id.clone(),
                    author: commit.author.clone(),
                    session: commit.session.clone(),
                    path: t.path.clone(),
                    region: t.region.clone(),
                });
            }
        }
    }
    out
}

impl Drift {
    /// The commit's short id (7 characters).
    pub fn short(&self) -> &str {
        self.commit.get(..7).unwrap_or(&self.commit)
    }

    /// Whose the commit is: `Bob <bob@example.com>, no session` or `…,
    /// session s2`.
    pub fn whose(&self) -> String {
        match &self.session {
            Some(s) => format!("{}, session {s}", self.author),
            None => format!("{}, no session", self.author),
        }
    }

    /// What it changed: `lines 7-8 under `Goals`` or `the file`.
    pub fn what(&self) -> String {
        match &self.region {
            Some(r) => r.describe(),
            None => "the file".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changes::{Kind, Side};
    use crate::holdings::Version;
    use crate::holdings::sim::{PARTS, SESSIONS, s, simulate, step};
    use crate::scope::Scope;
    use proptest::prelude::*;

    fn claim(session: &str, opened: &str) -> Claim {
        let t = chrono::DateTime::parse_from_rfc3339(opened).expect("time");
        Claim {
            session: session.into(),
            scope: Scope::parse_stored("plan.md#Goals").expect("scope"),
            agent: String::new(),
            opened: t,
            expires: t + chrono::Duration::hours(1),
            note: String::new(),
            reason: None,
            extra: Vec::new(),
        }
    }

    fn landed(session: Option<&str>, time: i64) -> Landed {
        Landed {
            id: "0123456789abcdef".into(),
            author: "Bob <bob@example.com>".into(),
            session: session.map(String::from),
            time,
            touched: vec![Touch {
                claim: 0,
                path: "plan.md".into(),
                region: Some(Region {
                    side: Side::New,
                    kind: Kind::Added,
                    start: 7,
                    end: 8,
                    heading: Some("Goals".into()),
                }),
            }],
        }
    }

    /// The record of one grant: `c`, by the registry commit of second `at`.
    fn granted(c: &Claim, at: i64) -> Holdings {
        Holdings::of(&[
            Version {
                id: "0".into(),
                time: at - 600,
                parents: Vec::new(),
                held: Vec::new(),
            },
            Version {
                id: "1".into(),
                time: at,
                parents: vec!["0".into()],
                held: vec![(c.session.clone(), c.scope.clone())],
            },
        ])
    }

    #[test]
    fn a_commit_of_another_after_the_claim_opened_drifts_it() {
        let c = claim("s1", "2026-03-14T09:30:00Z");
        let at = c.opened.timestamp() + 30;
        let h = granted(&c, at);
        let claims = [(&c, false)];
        let found = drift(&h, &claims, &[landed(None, at + 1)], at + 600);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].short(), "0123456");
        assert_eq!(found[0].whose(), "Bob <bob@example.com>, no session");
        assert_eq!(found[0].what(), "lines 7-8 under `Goals`");
        let by_s2 = drift(&h, &claims, &[landed(Some("s2"), at + 60)], at + 600);
        assert_eq!(by_s2[0].whose(), "Bob <bob@example.com>, session s2");
    }

    #[test]
    fn the_holders_own_earlier_and_future_commits_do_not_drift() {
        let c = claim("s1", "2026-03-14T09:30:00Z");
        let at = c.opened.timestamp() + 30;
        let h = granted(&c, at);
        let claims = [(&c, false)];
        assert!(drift(&h, &claims, &[landed(Some("s1"), at + 60)], at + 600).is_empty());
        // Earlier in the claim's minute, and at the grant's own second.
        assert!(drift(&h, &claims, &[landed(None, at - 29)], at + 600).is_empty());
        assert!(drift(&h, &claims, &[landed(None, at)], at + 600).is_empty());
        assert!(
            drift(
                &h,
                &claims,
                &[landed(None, at + 600 + LEEWAY_SECS + 1)],
                at + 600
            )
            .is_empty()
        );
    }

    proptest! {
        /// In a generated history of grants, handoffs, closes and commits:
        /// no commit made under its author's own claim is drift, and every
        /// commit changing a part another session held then — a claim held
        /// still — is.
        #[test]
        fn drift_is_exactly_the_changes_to_a_part_another_held_then(
            steps in proptest::collection::vec((step(), 1..90i64), 0..40),
        ) {
            let (versions, made, end, since) = simulate(&steps);
            let h = Holdings::of(&versions);
            let t0 = chrono::DateTime::from_timestamp(0, 0).expect("epoch").fixed_offset();
            let claims: Vec<Claim> = end
                .iter()
                .enumerate()
                .filter_map(|(p, a)| a.map(|a| Claim {
                    session: SESSIONS[a].into(),
                    scope: s(PARTS[p]),
                    agent: String::new(),
                    opened: t0,
                    expires: t0,
                    note: String::new(),
                    reason: None,
                    extra: Vec::new(),
                }))
                .collect();
            let held: Vec<Held<'_>> = claims.iter().map(|c| (c, false)).collect();
            let now = made.last().map_or(0, |m| m.time) + 60;
            for m in &made {
                let commit = Landed {
                    id: format!("{:040x}", m.time),
                    author: "a <a@b>".into(),
                    session: m.session.map(|a| SESSIONS[a].to_string()),
                    time: m.time,
                    touched: claims
                        .iter()
                        .enumerate()
                        .filter(|(_, c)| c.scope == s(PARTS[m.part]))
                        .map(|(claim, _)| Touch { claim, path: "p.md".into(), region: None })
                        .collect(),
                };
                let found = drift(&h, &held, std::slice::from_ref(&commit), now);
                let own = m.session.is_some() && m.session == m.holder;
                if own || m.holder.is_none() {
                    prop_assert!(found.is_empty(), "{:?}", found);
                }
                // Drift is told to a holder whose claim is held still: the
                // holder then, if it holds the part now from before then.
                let still = m.holder.is_some_and(|_| {
                    end[m.part] == m.holder && since[m.part] < m.time
                });
                prop_assert_eq!(found.len(), usize::from(still && !own), "{:?}", found);
                if !may_drift(&h, &held, &commit, now) {
                    prop_assert!(found.is_empty());
                }
            }
        }
    }
}
