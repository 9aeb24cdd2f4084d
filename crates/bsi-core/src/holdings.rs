//! Who held what, when: the one record every judging rule reads.
//!
//! The registry's history says it. Each registry commit holds the claims
//! of its moment (active and stale); a claim that one commit holds and its
//! parents did not was granted there — an open, a handoff at a close, a
//! waiter's turn — and one its parents held and it does not was ended
//! there — a close, a release, a handoff away. The record is those grants
//! and ends, each at the second of the commit that made it: not the minute
//! a registry row records, and not the date of any content commit.
//!
//! Pure: the registry's versions in (read by
//! [`crate::audit::holdings`] from the local registry branch and every
//! remote-tracking copy of it, one commit once whichever ref reaches it),
//! the holds out, and the questions asked of them.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::scope::{self, Scope};

/// One registry commit, as the record needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// The commit's id.
    pub id: String,
    /// When it was committed, seconds since the epoch.
    pub time: i64,
    /// Its parents' ids; those not among the versions given are not read.
    pub parents: Vec<String>,
    /// The claims it holds, active and stale: (session, scope).
    pub held: Vec<(String, Scope)>,
}

/// A stretch of time one session held one scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    pub session: String,
    pub scope: Scope,
    /// The second of the registry commit that granted it; `None` when the
    /// grant lies before the versions read (held since before them).
    pub from: Option<i64>,
    /// The second of the registry commit that ended it; `None`: held still.
    pub until: Option<i64>,
}

impl Hold {
    /// Whether it was held at second `t`: after the second of its grant
    /// (a change of that very second is not told apart from the grant, and
    /// counts as made before it), up to the second of its end.
    pub fn held_at(&self, t: i64) -> bool {
        self.from.is_none_or(|f| f < t) && self.until.is_none_or(|u| t <= u)
    }
}

/// Every hold of the registry's history read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holdings {
    holds: Vec<Hold>,
}

/// A grant (`true`) or an end of (session, scope) at a second.
type Event = (i64, bool, (String, Scope));

impl Holdings {
    /// The record of `versions` (any order; merged by commit id, so a
    /// commit reached from two refs counts once). A version none of whose
    /// parents is given holds its claims since before the record; any
    /// other grants what it holds and none of its parents held, and ends
    /// what every parent given held and it does not.
    pub fn of(versions: &[Version]) -> Holdings {
        let mut by_id: HashMap<&str, &Version> = HashMap::new();
        for v in versions {
            by_id.entry(v.id.as_str()).or_insert(v);
        }
        let mut events: Vec<Event> = Vec::new();
        let mut before: BTreeSet<(String, Scope)> = BTreeSet::new();
        let mut ids: Vec<&&Version> = by_id.values().collect();
        ids.sort_by(|a, b| (a.time, &a.id).cmp(&(b.time, &b.id)));
        for v in ids {
            let now: BTreeSet<&(String, Scope)> = v.held.iter().collect();
            let parents: Vec<BTreeSet<&(String, Scope)>> = v
                .parents
                .iter()
                .filter_map(|p| by_id.get(p.as_str()))
                .map(|p| p.held.iter().collect())
                .collect();
            if parents.is_empty() {
                before.extend(now.into_iter().cloned());
                continue;
            }
            for h in &now {
                if parents.iter().all(|p| !p.contains(h)) {
                    events.push((v.time, true, (*h).clone()));
                }
            }
            if let Some((first, rest)) = parents.split_first() {
                for h in first {
                    if !now.contains(h) && rest.iter().all(|p| p.contains(h)) {
                        events.push((v.time, false, (*h).clone()));
                    }
                }
            }
        }
        // In time order, an end of a second before a grant of that second
        // (a handoff: the one ends, the other begins).
        events.sort_by_key(|e| (e.0, e.1));
        let mut open: BTreeMap<(String, Scope), Option<i64>> =
            before.into_iter().map(|k| (k, None)).collect();
        let mut holds = Vec::new();
        for (t, grant, key) in events {
            if grant {
                open.entry(key).or_insert(Some(t));
            } else if let Some(from) = open.remove(&key) {
                holds.push(Hold {
                    session: key.0,
                    scope: key.1,
                    from,
                    until: Some(t),
                });
            }
        }
        holds.extend(open.into_iter().map(|((session, scope), from)| Hold {
            session,
            scope,
            from,
            until: None,
        }));
        Holdings { holds }
    }

    /// Adds, for each claim held now that the record has no open hold of,
    /// a hold from the last second of the minute its row records: the
    /// registry commit that granted it was not read (a history cut short),
    /// and no change of that minute is taken for one made under it.
    pub fn with_unread<'a>(
        mut self,
        claims: impl IntoIterator<Item = (&'a str, &'a Scope, i64)>,
    ) -> Holdings {
        for (session, scope, minute) in claims {
            let known = self
                .holds
                .iter()
                .any(|h| h.until.is_none() && h.session == session && &h.scope == scope);
            if !known {
                self.holds.push(Hold {
                    session: session.to_string(),
                    scope: scope.clone(),
                    from: Some(minute.div_euclid(60) * 60 + 59),
                    until: None,
                });
            }
        }
        self
    }

    /// Every hold, in no particular order.
    pub fn holds(&self) -> &[Hold] {
        &self.holds
    }

    /// The session that held a scope covering `part` at second `t`.
    pub fn holder_at(&self, part: &Scope, t: i64, sections: &dyn scope::Sections) -> Option<&str> {
        self.holds
            .iter()
            .find(|h| h.held_at(t) && scope::covers(&h.scope, part, sections))
            .map(|h| h.session.as_str())
    }

    /// Whether `session` held a scope covering `part` at second `t`.
    pub fn held_by(
        &self,
        session: &str,
        part: &Scope,
        t: i64,
        sections: &dyn scope::Sections,
    ) -> bool {
        self.holds.iter().any(|h| {
            h.session == session && h.held_at(t) && scope::covers(&h.scope, part, sections)
        })
    }

    /// Whether `session`'s claim on `scope` held now was held at second
    /// `t`: granted before it (the hold still open).
    pub fn held_now_at(&self, session: &str, scope: &Scope, t: i64) -> bool {
        self.holds
            .iter()
            .any(|h| h.until.is_none() && h.session == session && &h.scope == scope && h.held_at(t))
    }

    /// The second `session`'s claim on `scope` held now was granted at;
    /// `None` when held since before the record.
    pub fn granted(&self, session: &str, scope: &Scope) -> Option<Option<i64>> {
        self.holds
            .iter()
            .find(|h| h.until.is_none() && h.session == session && &h.scope == scope)
            .map(|h| h.from)
    }
}

/// Generated histories of grants, handoffs, closes and content commits,
/// with who truly held what: for the property tests of the record and of
/// the rules that read it.
#[cfg(test)]
pub(crate) mod sim {
    use super::Version;
    use crate::scope::Scope;
    use proptest::prelude::*;

    pub(crate) fn s(x: &str) -> Scope {
        Scope::parse_stored(x).expect("scope")
    }

    pub(crate) fn v(id: &str, time: i64, parents: &[&str], held: &[(&str, &str)]) -> Version {
        Version {
            id: id.into(),
            time,
            parents: parents.iter().map(|p| (*p).to_string()).collect(),
            held: held.iter().map(|(a, b)| ((*a).to_string(), s(b))).collect(),
        }
    }

    /// One step of a generated history.
    #[derive(Debug, Clone)]
    pub(crate) enum Step {
        /// A session opens a part, if nobody holds it.
        Open(usize, usize),
        /// A session closes every claim it holds.
        Close(usize),
        /// A session closes, its part handed to a waiter in the same commit.
        Handoff(usize, usize, usize),
        /// A content commit changing a part, by a session or by no session.
        Commit(Option<usize>, usize),
    }

    pub(crate) const SESSIONS: [&str; 3] = ["s1", "s2", "s3"];
    pub(crate) const PARTS: [&str; 3] = ["p.md#A", "p.md#B", "q.md"];

    pub(crate) fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0..3usize, 0..3usize).prop_map(|(a, p)| Step::Open(a, p)),
            (0..3usize).prop_map(Step::Close),
            (0..3usize, 0..3usize, 0..3usize).prop_map(|(a, b, p)| Step::Handoff(a, b, p)),
            (proptest::option::of(0..3usize), 0..3usize).prop_map(|(a, p)| Step::Commit(a, p)),
            (proptest::option::of(0..3usize), 0..3usize).prop_map(|(a, p)| Step::Commit(a, p)),
        ]
    }

    /// A content commit of the simulation: its session, part, second and
    /// who truly held the part then.
    pub(crate) struct Made {
        pub(crate) session: Option<usize>,
        pub(crate) part: usize,
        pub(crate) time: i64,
        pub(crate) holder: Option<usize>,
    }

    /// Runs `steps` one every `gaps` seconds (so many share a minute), and
    /// returns the registry's versions, the content commits, who holds
    /// what at the end and since which second.
    #[allow(clippy::type_complexity)]
    pub(crate) fn simulate(
        steps: &[(Step, i64)],
    ) -> (Vec<Version>, Vec<Made>, [Option<usize>; 3], [i64; 3]) {
        let mut held: [Option<usize>; 3] = [None; 3];
        let mut since = [0_i64; 3];
        let mut t = 1_000_000_i64;
        let snapshot = |held: &[Option<usize>; 3]| -> Vec<(String, Scope)> {
            held.iter()
                .enumerate()
                .filter_map(|(p, h)| h.map(|a| (SESSIONS[a].to_string(), s(PARTS[p]))))
                .collect()
        };
        let mut versions = vec![v("v0", t, &[], &[])];
        let mut made = Vec::new();
        for (step, gap) in steps {
            t += gap;
            let before = held;
            match *step {
                Step::Open(a, p) => {
                    if held[p].is_none() {
                        held[p] = Some(a);
                    }
                }
                Step::Close(a) => {
                    for h in &mut held {
                        if *h == Some(a) {
                            *h = None;
                        }
                    }
                }
                Step::Handoff(a, b, p) => {
                    if held[p] == Some(a) && a != b {
                        for h in &mut held {
                            if *h == Some(a) {
                                *h = None;
                            }
                        }
                        held[p] = Some(b);
                    }
                }
                Step::Commit(session, part) => made.push(Made {
                    session,
                    part,
                    time: t,
                    holder: held[part],
                }),
            }
            for p in 0..3 {
                if held[p] != before[p] {
                    since[p] = t;
                }
            }
            if held != before {
                let parent = versions.last().map(|v| v.id.clone()).unwrap_or_default();
                versions.push(Version {
                    id: format!("v{}", versions.len()),
                    time: t,
                    parents: vec![parent],
                    held: snapshot(&held),
                });
            }
        }
        (versions, made, held, since)
    }
}

#[cfg(test)]
mod tests {
    use super::sim::{PARTS, SESSIONS, s, simulate, step, v};
    use super::*;
    use crate::scope::FlatSections;
    use proptest::prelude::*;

    #[test]
    fn a_grant_and_a_handoff_are_read_to_the_second() {
        let h = Holdings::of(&[
            v("0", 100, &[], &[]),
            v("1", 130, &["0"], &[("s1", "p.md#Goals")]),
            v("2", 170, &["1"], &[("s3", "p.md#Goals")]),
        ]);
        let part = s("p.md#Goals");
        assert_eq!(h.holder_at(&part, 130, &FlatSections), None);
        assert_eq!(h.holder_at(&part, 131, &FlatSections), Some("s1"));
        assert_eq!(h.holder_at(&part, 170, &FlatSections), Some("s1"));
        assert_eq!(h.holder_at(&part, 171, &FlatSections), Some("s3"));
        assert_eq!(h.granted("s3", &part), Some(Some(170)));
        assert!(h.held_by("s1", &s("p.md#Goals"), 150, &FlatSections));
        assert!(!h.held_by("s1", &s("p.md#Goals"), 171, &FlatSections));
    }

    #[test]
    fn a_commit_reached_from_two_refs_counts_once_and_a_merge_grants_nothing_again() {
        // The local branch and origin/brain-index diverged, then merged.
        let h = Holdings::of(&[
            v("0", 100, &[], &[]),
            v("a", 110, &["0"], &[("s1", "a.md")]),
            v("b", 120, &["0"], &[("s2", "b.md")]),
            v("a", 110, &["0"], &[("s1", "a.md")]),
            v("m", 130, &["a", "b"], &[("s1", "a.md"), ("s2", "b.md")]),
        ]);
        assert_eq!(h.granted("s1", &s("a.md")), Some(Some(110)));
        assert_eq!(h.granted("s2", &s("b.md")), Some(Some(120)));
        assert_eq!(h.holds().len(), 2);
    }

    #[test]
    fn a_claim_the_record_does_not_reach_counts_from_the_end_of_its_minute() {
        let h = Holdings::of(&[v("0", 100, &[], &[])]).with_unread([("s1", &s("a.md"), 125)]);
        assert_eq!(h.granted("s1", &s("a.md")), Some(Some(179)));
        assert!(!h.held_now_at("s1", &s("a.md"), 179));
        assert!(h.held_now_at("s1", &s("a.md"), 180));
        // A claim held before the record began stays held since then.
        let h = Holdings::of(&[v("0", 100, &[], &[("s1", "a.md")])]).with_unread([(
            "s1",
            &s("a.md"),
            60,
        )]);
        assert_eq!(h.granted("s1", &s("a.md")), Some(None));
        assert!(h.held_now_at("s1", &s("a.md"), 5));
    }

    proptest! {
        #[test]
        fn the_record_says_who_held_each_part_at_each_second(
            steps in proptest::collection::vec((step(), 1..90i64), 0..40),
        ) {
            let (versions, made, ..) = simulate(&steps);
            let h = Holdings::of(&versions);
            for m in &made {
                let holder = h.holder_at(&s(PARTS[m.part]), m.time, &FlatSections);
                prop_assert_eq!(holder, m.holder.map(|a| SESSIONS[a]));
            }
        }

        #[test]
        fn the_record_is_the_same_whatever_the_order_and_the_refs_it_is_read_from(
            steps in proptest::collection::vec((step(), 1..90i64), 0..30),
            cut in 0usize..30,
        ) {
            let (versions, ..) = simulate(&steps);
            let one = Holdings::of(&versions);
            // The local branch knows a prefix, the remote-tracking one all:
            // both read, reversed.
            let mut both: Vec<Version> = versions[..cut.min(versions.len())].to_vec();
            both.extend(versions.iter().rev().cloned());
            let two = Holdings::of(&both);
            let key = |h: &Holdings| {
                let mut v: Vec<_> = h.holds().iter().map(|x| format!("{x:?}")).collect();
                v.sort();
                v
            };
            prop_assert_eq!(key(&one), key(&two));
        }
    }
}
