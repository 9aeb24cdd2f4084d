//! The queue of `bsi open --wait`: who waits for what, in which order, and
//! whose place has lapsed. Pure: the registry, a session's request and the
//! clock in; the requests ahead of it out.
//!
//! The rules:
//! - a place is live while its lease (`Bail`) is after `now`; a waiter
//!   renews it while it waits, so a waiter that stopped (killed, machine
//!   off) leaves the queue when its lease passes, without anyone acting;
//! - the order is the time of arrival (`Depuis`), then the row order;
//! - a request is held back by every live request of another session that
//!   arrived before it and overlaps one of its scopes: strict arrival order
//!   per scope, with no overtaking, so a wide request is never starved by
//!   narrow ones slipping past it;
//! - except a request that waits for a claim of the session itself: it
//!   cannot go first anyway, and letting it hold the session back would
//!   lock both;
//! - the queue frees nothing: claims, stale ones too, block as always;
//! - a place lapses with its lease and is retaken at the end: a waiter
//!   whose own rows have all lapsed arrives again at `now`
//!   ([`arrival`]), and the merge of a local registry with the published
//!   one puts a place renewed only locally after the published lease had
//!   passed at the end ([`crate::registry::merge`]);
//! - a lease further ahead of the reader's clock than a lease is long
//!   cannot have been written by a right clock (a waiter writes its clock
//!   plus [`lease`]): the writer's clock is ahead. Such a row lapses a
//!   lease length after this clone first read it ([`lapses`]; the store
//!   records the first sighting of each such row, per clone). A dead
//!   waiter whose clock is ahead so lapses within a lease length of being
//!   read, while a live one, which renews about every ten seconds, writes
//!   a new row each time and holds its place; a right clock's lease is
//!   never judged so.

use chrono::{DateTime, Duration, FixedOffset};

pub use crate::registry::Request;
use crate::registry::{Registry, Waiter};
use crate::scope::{Scope, Sections, overlaps};

pub use crate::registry::lease;

/// A waiter renews its lease once less than this is left: about every
/// ten seconds.
pub fn renew_when_left() -> Duration {
    Duration::seconds(20)
}

/// Whether `w`'s lease is further ahead of `now` than a lease is long: no
/// right clock writes it, so the writer's clock is ahead.
pub fn impossible(w: &Waiter, now: DateTime<FixedOffset>) -> bool {
    w.impossible(now)
}

/// When `w`'s place lapses, as judged at `now`: its lease; but a row whose
/// lease was impossible when this clone first read it (`seen_ahead`, or
/// `now` when not recorded yet) lapses a lease length after that first
/// sighting, if its lease is not earlier.
pub fn lapses(w: &Waiter, now: DateTime<FixedOffset>) -> DateTime<FixedOffset> {
    w.lapses(now)
}

/// How far ahead the clock that wrote `w` is, at least, when its lease is
/// judged impossible: the lease beyond the first sighting plus a lease.
pub fn clock_ahead(w: &Waiter, now: DateTime<FixedOffset>) -> Option<Duration> {
    let ahead = |at: DateTime<FixedOffset>, seen: Option<DateTime<FixedOffset>>| {
        let seen = match seen {
            Some(seen) => seen,
            None if at - now > lease() => now,
            None => return None,
        };
        Some(at - seen - lease()).filter(|d| *d > Duration::zero())
    };
    let record = w.alive.and_then(|a| ahead(a.lease, a.seen_ahead));
    ahead(w.lease, w.seen_ahead).max(record)
}

/// The live requests, in the queue's order: time of arrival, then the row
/// order of their first row.
pub fn live_requests(reg: &Registry, now: DateTime<FixedOffset>) -> Vec<Request> {
    let mut out: Vec<(usize, Request)> = Vec::new();
    for (i, w) in reg.waiters.iter().enumerate() {
        if !w.live(now) {
            continue;
        }
        let (lapse, ahead) = (lapses(w, now), clock_ahead(w, now));
        match out.iter_mut().find(|(_, r)| r.session == w.session) {
            Some((_, r)) => {
                r.since = r.since.min(w.since);
                if lapse < r.lease {
                    r.lease_from_record = w.kept_by_record(now);
                }
                r.lease = r.lease.min(lapse);
                if !r.scopes.contains(&w.scope) {
                    r.scopes.push(w.scope.clone());
                }
                r.clock_ahead = r.clock_ahead.max(ahead);
            }
            None => out.push((
                i,
                Request {
                    session: w.session.clone(),
                    agent: w.agent.clone(),
                    since: w.since,
                    lease: lapse,
                    scopes: vec![w.scope.clone()],
                    clock_ahead: ahead,
                    lease_from_record: w.kept_by_record(now),
                },
            )),
        }
    }
    out.sort_by_key(|(i, r)| (r.since, *i));
    out.into_iter().map(|(_, r)| r).collect()
}

/// The live requests of other sessions ahead of `session`'s request for
/// `scopes`: arrived before it (every live one when `session` has no place
/// yet), overlapping one of `scopes`, and not waiting for a claim of
/// `session`. In the queue's order.
pub fn ahead(
    reg: &Registry,
    session: &str,
    scopes: &[Scope],
    now: DateTime<FixedOffset>,
    sections: &dyn Sections,
) -> Vec<Request> {
    let all = live_requests(reg, now);
    let mine = all.iter().position(|r| r.session == session);
    let before = &all[..mine.unwrap_or(all.len())];
    before
        .iter()
        .filter(|r| {
            r.scopes
                .iter()
                .any(|s| scopes.iter().any(|m| overlaps(s, m, sections)))
        })
        .filter(|r| !waits_for(reg, r, session, sections))
        .cloned()
        .collect()
}

/// Whether request `r` overlaps a claim (active or stale) of `session`.
fn waits_for(reg: &Registry, r: &Request, session: &str, sections: &dyn Sections) -> bool {
    reg.all_claims().any(|(c, _)| {
        c.session == session && r.scopes.iter().any(|s| overlaps(s, &c.scope, sections))
    })
}

/// The rows of `session` in the queue, by index.
pub fn rows_of(reg: &Registry, session: &str) -> Vec<usize> {
    reg.waiters
        .iter()
        .enumerate()
        .filter(|(_, w)| w.session == session)
        .map(|(i, _)| i)
        .collect()
}

/// The rows whose lease has passed at `now`, of other sessions than
/// `session`: no one's place, removed by the next queue write.
pub fn lapsed_rows(reg: &Registry, session: &str, now: DateTime<FixedOffset>) -> Vec<usize> {
    reg.waiters
        .iter()
        .enumerate()
        .filter(|(_, w)| w.session != session && !w.live(now))
        .map(|(i, _)| i)
        .collect()
}

/// Whether `session`'s place must be written: missing, lapsed, or for
/// other scopes than `scopes`. A live place is never written again to
/// keep it: its waiter renews its lease on its clone's own reference
/// ([`crate::registry::Waiter::alive`]), not in the registry.
pub fn needs_writing(
    reg: &Registry,
    session: &str,
    scopes: &[Scope],
    now: DateTime<FixedOffset>,
) -> bool {
    let mine: Vec<&Waiter> = reg
        .waiters
        .iter()
        .filter(|w| w.session == session)
        .collect();
    if mine.is_empty() || mine.len() != scopes.len() {
        return true;
    }
    let same = scopes.iter().all(|s| mine.iter().any(|w| &w.scope == s));
    !same || mine.iter().any(|w| !w.live(now))
}

/// Whether `session`'s place, live, has less than [`renew_when_left`] of
/// its lease left at `now`: time its waiter renewed it.
pub fn renewal_due(reg: &Registry, session: &str, now: DateTime<FixedOffset>) -> bool {
    reg.waiters
        .iter()
        .filter(|w| w.session == session)
        .any(|w| w.lapses(now) - now < renew_when_left())
}

/// When `session`'s place lapses, as judged at `now`: the earliest lapse
/// of its rows; `None` when it has none.
pub fn lease_of(
    reg: &Registry,
    session: &str,
    now: DateTime<FixedOffset>,
) -> Option<DateTime<FixedOffset>> {
    reg.waiters
        .iter()
        .filter(|w| w.session == session)
        .map(|w| w.lapses(now))
        .min()
}

/// When `session` takes its place, as planned at `now`: the arrival of
/// its live rows; `now` when it has rows but all have lapsed (a place
/// lapses with its lease and is retaken at the end, whatever arrival its
/// rows say); `new` (its first arrival) when it has none.
pub fn arrival(
    reg: &Registry,
    session: &str,
    now: DateTime<FixedOffset>,
    new: DateTime<FixedOffset>,
) -> DateTime<FixedOffset> {
    match arrived(reg, session, now) {
        Some(since) => since,
        None if reg.waiters.iter().any(|w| w.session == session) => now,
        None => new,
    }
}

/// When `session` arrived, by its live rows; `None` when it has none.
pub fn arrived(
    reg: &Registry,
    session: &str,
    now: DateTime<FixedOffset>,
) -> Option<DateTime<FixedOffset>> {
    reg.waiters
        .iter()
        .filter(|w| w.session == session && w.live(now))
        .map(|w| w.since)
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::tests::{claim, registry, section, t0};
    use crate::registry::parse;
    use crate::scope::FlatSections as Nested;
    use proptest::prelude::*;

    fn waiter(session: &str, scope: Scope, since_s: i64, lease_s: i64) -> Waiter {
        Waiter {
            session: session.into(),
            scope,
            agent: "a".into(),
            since: t0() + Duration::seconds(since_s),
            lease: t0() + Duration::seconds(lease_s),
            extra: Vec::new(),
            seen_ahead: None,
            alive: None,
        }
    }

    fn with_waiters(base: Registry, ws: &[Waiter]) -> Registry {
        let mut r = base;
        for w in ws {
            r.add_waiter(w);
        }
        parse(r.render()).expect("a queue parses back")
    }

    fn f(name: &str) -> Scope {
        Scope::File(name.into())
    }

    #[test]
    fn the_order_is_arrival_and_lapsed_places_are_no_ones() {
        let reg = with_waiters(
            registry(&[], &[]),
            &[
                waiter("s3", f("a.md"), 3, 60),
                waiter("s1", f("a.md"), 1, 60),
                waiter("dead", f("a.md"), 0, 10),
                waiter("s2", f("b.md"), 2, 60),
                waiter("s2", f("a.md"), 2, 60),
            ],
        );
        let now = t0() + Duration::seconds(20);
        let order: Vec<String> = live_requests(&reg, now)
            .into_iter()
            .map(|r| r.session)
            .collect();
        assert_eq!(order, ["s1", "s2", "s3"]);
        let ahead_of_s3: Vec<String> = ahead(&reg, "s3", &[f("a.md")], now, &Nested)
            .into_iter()
            .map(|r| r.session)
            .collect();
        assert_eq!(ahead_of_s3, ["s1", "s2"]);
        // Only what overlaps holds a request back.
        let for_b: Vec<String> = ahead(&reg, "new", &[f("b.md")], now, &Nested)
            .into_iter()
            .map(|r| r.session)
            .collect();
        assert_eq!(for_b, ["s2"]);
        assert!(ahead(&reg, "s1", &[f("a.md")], now, &Nested).is_empty());
        assert_eq!(lapsed_rows(&reg, "s1", now), vec![2]);
        assert_eq!(arrived(&reg, "dead", now), None);
    }

    #[test]
    fn a_waiter_that_waits_for_my_claim_does_not_hold_me_back() {
        let mine = claim("me", "a", section("p.md", "Goals"));
        let reg = with_waiters(
            registry(&[mine], &[]),
            &[
                waiter("w1", f("p.md"), 0, 60),
                waiter("w2", section("p.md", "Plan"), 1, 60),
            ],
        );
        let ahead: Vec<String> = ahead(&reg, "me", &[section("p.md", "Plan")], t0(), &Nested)
            .into_iter()
            .map(|r| r.session)
            .collect();
        assert_eq!(ahead, ["w2"]);
    }

    #[test]
    fn a_live_place_is_renewed_on_its_clone_s_record_not_in_the_registry() {
        let mut reg = with_waiters(registry(&[], &[]), &[waiter("s", f("a.md"), 0, 30)]);
        assert!(!needs_writing(&reg, "s", &[f("a.md")], t0()));
        // Low on lease: due for renewal, but not written again.
        let low = t0() + Duration::seconds(11);
        assert!(!needs_writing(&reg, "s", &[f("a.md")], low));
        assert!(renewal_due(&reg, "s", low));
        assert!(needs_writing(&reg, "s", &[f("b.md")], t0()));
        assert!(needs_writing(&reg, "t", &[f("a.md")], t0()));
        // Lapsed: written again.
        let late = t0() + Duration::seconds(31);
        assert!(needs_writing(&reg, "s", &[f("a.md")], late));
        // Its clone's record keeps it alive past the row's lease.
        reg.waiters[0].alive = Some(crate::registry::Alive {
            lease: t0() + Duration::seconds(45),
            seen_ahead: None,
        });
        assert!(!needs_writing(&reg, "s", &[f("a.md")], late));
        assert!(!renewal_due(&reg, "s", t0() + Duration::seconds(20)));
        assert!(renewal_due(&reg, "s", late));
        assert_eq!(
            lease_of(&reg, "s", late),
            Some(t0() + Duration::seconds(45))
        );
        assert_eq!(live_requests(&reg, late).len(), 1);
        assert!(lapsed_rows(&reg, "me", late).is_empty());
        assert_eq!(lapsed_rows(&reg, "me", t0() + Duration::seconds(45)), [0]);
    }

    #[test]
    fn a_waiter_whose_rows_lapsed_arrives_again_at_now() {
        let reg = with_waiters(registry(&[], &[]), &[waiter("s", f("a.md"), 0, 30)]);
        let first = t0() - Duration::seconds(5);
        // Live: its own arrival.
        assert_eq!(
            arrival(&reg, "s", t0() + Duration::seconds(20), first),
            t0()
        );
        // Lapsed: now, whatever arrival its rows say.
        let later = t0() + Duration::seconds(35);
        assert_eq!(arrival(&reg, "s", later, first), later);
        // No rows: its first arrival.
        assert_eq!(arrival(&reg, "t", later, first), first);
    }

    #[test]
    fn a_lease_further_ahead_than_a_lease_counts_from_its_first_sighting() {
        // Written by a clock an hour ahead: lease 3630 s after t0.
        let mut w = waiter("skew", f("a.md"), 3600, 3630);
        let now = t0() + Duration::seconds(10);
        assert!(impossible(&w, now));
        // Not recorded yet: counted from now.
        assert_eq!(lapses(&w, now), now + lease());
        // Recorded at 5 s: lapses at 35 s, for any later reading.
        w.seen_ahead = Some(t0() + Duration::seconds(5));
        assert_eq!(lapses(&w, now), t0() + Duration::seconds(35));
        assert!(w.live(t0() + Duration::seconds(34)));
        assert!(!w.live(t0() + Duration::seconds(35)));
        assert!(!w.live(t0() + Duration::seconds(3620)));
        let ahead = clock_ahead(&w, now).expect("ahead");
        assert_eq!(ahead, Duration::seconds(3595));
        let reg = with_waiters(registry(&[], &[]), &[waiter("skew", f("a.md"), 3600, 3630)]);
        let mut reg = reg;
        reg.waiters[0].seen_ahead = Some(t0() + Duration::seconds(5));
        let live = live_requests(&reg, now);
        assert_eq!(live[0].lease, t0() + Duration::seconds(35));
        assert_eq!(live[0].clock_ahead, Some(ahead));
        assert_eq!(lapsed_rows(&reg, "me", t0() + Duration::seconds(36)), [0]);
        // A right clock's lease, read at any time before it passes, is
        // never judged so.
        let right = waiter("ok", f("a.md"), 0, 30);
        for s in 0..30 {
            let at = t0() + Duration::seconds(s);
            assert!(!impossible(&right, at));
            assert_eq!(lapses(&right, at), right.lease);
            assert_eq!(clock_ahead(&right, at), None);
        }
    }

    proptest! {
        /// Whatever the rows, the live requests are each session once, in
        /// arrival order, with no lapsed one; and no request is ahead of
        /// the first.
        #[test]
        fn the_queue_is_ordered_and_live(rows in prop::collection::vec((0u8..4, 0u8..3, 0i64..50, 0i64..80), 0..12), at in 0i64..80) {
            let ws: Vec<Waiter> = rows
                .iter()
                .map(|(s, file, since, lease)| waiter(&format!("s{s}"), f(&format!("f{file}.md")), *since, since + lease))
                .collect();
            let reg = with_waiters(registry(&[], &[]), &ws);
            prop_assert_eq!(reg.waiters.len(), ws.len());
            let now = t0() + Duration::seconds(at);
            let live = live_requests(&reg, now);
            let mut seen = std::collections::HashSet::new();
            for pair in live.windows(2) {
                prop_assert!(pair[0].since <= pair[1].since);
            }
            for r in &live {
                prop_assert!(seen.insert(r.session.clone()));
                prop_assert!(r.lease > now);
            }
            if let Some(first) = live.first() {
                prop_assert!(ahead(&reg, &first.session, &first.scopes, now, &Nested).is_empty());
            }
        }

        /// Whatever the clock of the writer, a row that no one renews is
        /// lapsed a lease after it was first read, for any reader whose
        /// clock reads it then; and a row written by a clock at most as
        /// far ahead as the reader's is judged by its own lease.
        #[test]
        fn a_dead_place_lapses_within_a_lease_of_its_first_reading(
            skew in -7200i64..7200,
            read_after in 0i64..60,
            later in 0i64..7200,
        ) {
            // Written at t0 by a clock `skew` seconds ahead.
            let mut w = waiter("w", f("a.md"), skew, skew + 30);
            let first = t0() + Duration::seconds(read_after);
            if impossible(&w, first) {
                w.seen_ahead = Some(first);
            }
            let at = first + Duration::seconds(later);
            prop_assert!(lapses(&w, at) <= first + lease());
            if w.seen_ahead.is_none() {
                prop_assert_eq!(lapses(&w, at), w.lease);
            }
            if skew <= 0 {
                prop_assert!(w.seen_ahead.is_none());
            }
        }
    }
}
