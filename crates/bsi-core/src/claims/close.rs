//! The plan of `bsi close`: a session's claims move to the history.

use chrono::{DateTime, FixedOffset};

use super::Plan;
use super::open::{Claiming, Outcome, Queueing, plan_queued};
use super::{Actor, Snapshot, check_owner, commit_message_about, scopes_summary, session_claims};
use crate::error::{Error, Result};
use crate::registry::{Claim, HistoryEntry, Registry, Status, TableKind, col};
use crate::scope::Scope;

/// What verifying a session came to, as `close` records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum VerifyOutcome {
    /// Nothing outside the session's claims.
    Clean,
    /// Changes outside them: in this many files and sections.
    Overflow {
        /// Files changed outside the claims.
        files: usize,
        /// Sections changed outside the claims.
        sections: usize,
    },
    /// The changes could not be read.
    NotVerified,
}

impl VerifyOutcome {
    /// The note of the history row: empty when clean, else what was found.
    pub fn history_note(self) -> String {
        match self {
            VerifyOutcome::Clean => String::new(),
            other => other.to_string(),
        }
    }
}

impl std::fmt::Display for VerifyOutcome {
    /// `clean`, `overflow: 2 files, 1 section` or `not verified`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerifyOutcome::Clean => f.write_str("clean"),
            VerifyOutcome::Overflow { files, sections } => f.write_str(
                &crate::guard::overflow_note(*files, *sections)
                    .unwrap_or_else(|| "overflow".into()),
            ),
            VerifyOutcome::NotVerified => f.write_str("not verified"),
        }
    }
}

/// What a close may hand to the queue in the same write: what the plans
/// of the waiters' requests read, read before the writer lock.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Handoff {
    /// The heading trees of the files the waiters' scopes name. A waiter
    /// whose section's file is not in it is left to plan its own request.
    pub snapshot: Snapshot,
    /// The time to live of a claim handed over, in seconds: the brain's
    /// default (the waiter renews its claims to the TTL it asked for,
    /// when it asked for another).
    pub ttl_seconds: i64,
    /// The per-agent limit of active claims.
    pub max_active_per_agent: Option<usize>,
    /// The waiting sessions a live process meeting the closing writer
    /// waits for (of its clone, or of a clone of this machine sharing its
    /// remote on this disk; the record proven alive by the process table):
    /// only these are handed claims. A waiter that died keeps a place that
    /// lapses with its lease, never a claim nobody will close; one on
    /// another machine takes its grant itself.
    #[serde(default)]
    pub alive: Vec<String>,
    /// Who of [`Handoff::alive`] was still there when the write was
    /// decided: proven again by whoever plans the close, under the writer
    /// lock, and held from then until the write ends ([`Decided`]). Not
    /// data of the request: each planner decides it where it plans, and
    /// the close's own writer reads it back from the outcome.
    #[serde(skip)]
    pub decided: Decided,
}

/// The waiters a close's write was decided to hand over to, once it is
/// decided ([`Handoff::decided`]), shared by the copies of one request (its
/// writer's plan and the job it filed), with what holds them there until
/// the write ends (a waiter's mark taken by the planner, given back when
/// the last copy goes: the waiter cannot leave unseen meanwhile).
#[derive(Clone, Default)]
pub struct Decided(std::sync::Arc<std::sync::Mutex<Option<DecidedNow>>>);

/// The sessions decided, and what holds them (dropped with the last copy).
pub type DecidedNow = (Vec<String>, Vec<Box<dyn std::any::Any + Send>>);

impl std::fmt::Debug for Decided {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Decided").field(&self.get()).finish()
    }
}

impl Decided {
    /// The sessions decided, once they are.
    pub fn get(&self) -> Option<Vec<String>> {
        let held = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        held.as_ref().map(|(alive, _)| alive.clone())
    }

    /// Decides once, with `decide` (which returns the sessions and what
    /// holds them), unless it was decided before.
    pub fn decide(&self, decide: impl FnOnce() -> DecidedNow) {
        let mut held = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if held.is_none() {
            *held = Some(decide());
        }
    }

    /// Takes `alive` as decided elsewhere (by the holder that planned the
    /// request, as its outcome says).
    pub fn set(&self, alive: Vec<String>) {
        let mut held = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match held.as_mut() {
            Some((was, _)) => *was = alive,
            None => *held = Some((alive, Vec::new())),
        }
    }
}

/// A waiter's request granted by a close.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handed {
    /// The waiting session.
    pub session: String,
    /// The claims it now holds.
    pub claims: Vec<Claim>,
}

/// The live requests of the queue, in its order, that `reg` (a close
/// applied) now lets through: each granted as its own `open --wait` would
/// be ([`plan_queued`], the queue's order kept), and its places removed.
/// A request whose waiter is not known alive ([`Handoff::alive`]), whose
/// plan fails, or that names a section of a file `handoff` did not read,
/// is left to its waiter.
pub fn handoff(
    reg: &Registry,
    handoff: &Handoff,
    now: DateTime<FixedOffset>,
) -> (Registry, Vec<Handed>) {
    let mut reg = reg.clone();
    let mut handed = Vec::new();
    let alive = handoff
        .decided
        .get()
        .unwrap_or_else(|| handoff.alive.clone());
    for r in super::queue::live_requests(&reg, now) {
        if !alive.contains(&r.session) {
            continue;
        }
        let unread = r.scopes.iter().any(|s| {
            matches!(s, Scope::Section { file, .. } if !handoff.snapshot.worktree.contains_key(file))
        });
        if unread {
            continue;
        }
        let c = Claiming {
            session: &r.session,
            agent: &r.agent,
            scopes: &r.scopes,
            ttl: chrono::Duration::seconds(handoff.ttl_seconds),
            note: "",
            now,
            max_active_per_agent: handoff.max_active_per_agent,
            new_id: false,
        };
        let planned = plan_queued(
            &reg,
            &c,
            &handoff.snapshot,
            Queueing::Join { since: r.since },
        );
        let Ok(Plan::Write {
            text,
            report: Outcome::Opened { new_claims, .. },
            ..
        }) = planned
        else {
            continue;
        };
        if new_claims.is_empty() {
            continue;
        }
        let Ok(next) = crate::registry::parse(text) else {
            continue;
        };
        reg = next;
        handed.push(Handed {
            session: r.session.clone(),
            claims: new_claims,
        });
    }
    (reg, handed)
}

/// What a close came to.
#[derive(Debug, Clone)]
pub enum Closing {
    /// The claims closed (and whether each was stale), what `verify` said,
    /// and who forced it when they were another session's.
    Closed {
        /// The claims closed, each with whether it was stale.
        claims: Vec<(Claim, bool)>,
        /// What the audit said.
        verified: VerifyOutcome,
        /// Who closed them with `--force`, when they were not theirs.
        forced_by: Option<String>,
        /// The waiters whose request the close let through, granted in
        /// the same write ([`handoff`]).
        handed: Vec<Handed>,
    },
    /// Nothing left to close: the session's claims were closed before, as
    /// the history rows say. A close repeated is done, not an error.
    AlreadyClosed(Vec<Ended>),
}

impl Closing {
    /// The claims closed, each with whether it was stale (none when they
    /// were closed before).
    pub fn claims(&self) -> &[(Claim, bool)] {
        match self {
            Closing::Closed { claims, .. } => claims,
            Closing::AlreadyClosed(_) => &[],
        }
    }

    /// The waiters the close granted in its write.
    pub fn handed(&self) -> &[Handed] {
        match self {
            Closing::Closed { handed, .. } => handed,
            Closing::AlreadyClosed(_) => &[],
        }
    }

    /// What the audit said, when claims were closed now.
    pub fn verified(&self) -> Option<&VerifyOutcome> {
        match self {
            Closing::Closed { verified, .. } => Some(verified),
            Closing::AlreadyClosed(_) => None,
        }
    }
}

/// A history row of a session: one of its claims that ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// Its scope, as stored.
    pub scope: String,
    /// The agent that held it.
    pub agent: String,
    /// When it ended, as written.
    pub closed: String,
    /// `completed`, `released` or `force-released`.
    pub status: String,
    /// Its note (a forced close says there who forced it).
    pub note: String,
}

/// The history rows of `session` (those on `scope`), newest last.
pub fn ended(reg: &Registry, session: &str, scope: Option<&Scope>) -> Vec<Ended> {
    let Ok(rows) = crate::registry::parse::history_rows(reg) else {
        return Vec::new();
    };
    let cell = |row: &[(String, String)], name: &str| {
        row.iter()
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default()
    };
    let wanted = scope.map(ToString::to_string);
    rows.iter()
        .filter(|row| cell(row, col::SESSION) == session)
        .filter(|row| wanted.as_deref().is_none_or(|w| cell(row, col::SCOPE) == w))
        .map(|row| Ended {
            scope: cell(row, col::SCOPE),
            agent: cell(row, col::AGENT),
            closed: cell(row, col::H_CLOSED),
            status: cell(row, col::H_STATUS),
            note: cell(row, col::NOTE),
        })
        .collect()
}

impl Ended {
    /// Who ended it when its own session did not: the one who forced its
    /// close (the note [`forced_note`] wrote), or a person's release.
    pub fn by_another(&self) -> Option<String> {
        if let Some(by) = self
            .note
            .strip_prefix("closed by ")
            .and_then(|r| r.strip_suffix(" with --force"))
        {
            return Some(format!("closed by {by} with --force"));
        }
        matches!(self.status.as_str(), "released" | "force-released")
            .then(|| format!("{} by a person (`bsi release`)", self.status))
    }
}

/// The words a history row gets when its close was forced by `by`.
pub fn forced_note(by: &str) -> String {
    format!("closed by {by} with --force")
}

/// The session's claims (those on `scope`) move to the history, with what
/// the audit (read before the lock) says of its changes. Another session's
/// claims need `force`; the history row then says who forced it, and the
/// commit's action is `force-close`. A session with nothing left to close
/// and rows in the history was closed before: nothing is written.
pub fn plan(
    reg: &Registry,
    session: &str,
    scope: Option<&Scope>,
    (actor, force): (&Actor, bool),
    (verified, now): (VerifyOutcome, DateTime<FixedOffset>),
    queue: Option<&Handoff>,
) -> Result<Plan<Closing>> {
    let (active, stale) = session_claims(reg, session, scope);
    if active.is_empty() && stale.is_empty() {
        let before = ended(reg, session, scope);
        if !before.is_empty() {
            return Ok(Plan::Keep(Closing::AlreadyClosed(before)));
        }
        return Err(Error::NotFound(match scope {
            Some(s) => format!("session {session} holds no claim on {s}"),
            None => format!("session {session} holds no claim"),
        }));
    }
    let targets: Vec<(Claim, bool)> = active
        .iter()
        .map(|&i| (reg.active_claims[i].clone(), false))
        .chain(stale.iter().map(|&i| (reg.stale_claims[i].clone(), true)))
        .collect();
    let forced = check_owner(
        &targets.iter().map(|(c, _)| c).collect::<Vec<_>>(),
        actor,
        force,
        "close",
    )?;
    let forced_by = forced.then(|| actor.describe());
    // Alert, never block: an overflow goes into the history note; a
    // clean session closes as plain `completed`.
    let mut note = verified.history_note();
    if let Some(by) = &forced_by {
        let said = forced_note(by);
        note = if note.is_empty() {
            said
        } else {
            format!("{note}; {said}")
        };
    }
    let mut edited: Registry = reg.clone();
    for &i in &active {
        edited.remove_claim(TableKind::Active, i);
    }
    for &i in &stale {
        edited.remove_claim(TableKind::Stale, i);
    }
    for (c, _) in &targets {
        edited.add_history(&HistoryEntry::closing(c, now, Status::Completed, &note));
    }
    // The first waiters the close lets through are granted in its write,
    // planned on the registry as the close leaves it.
    let closed = queue.and_then(|h| Some((h, crate::registry::parse(edited.render()).ok()?)));
    let handed = match closed {
        Some((h, closed)) => {
            let (after, handed) = handoff(&closed, h, now);
            if !handed.is_empty() {
                edited = after;
            }
            handed
        }
        None => Vec::new(),
    };
    let mut what = scopes_summary(targets.iter().map(|(c, _)| &c.scope));
    if !handed.is_empty() {
        // Several sessions: the summary names the closing one itself.
        what = format!("{session} {what}");
    }
    let mut sessions = vec![session];
    for h in &handed {
        what.push_str(&format!(
            "; handed to {}: {}",
            h.session,
            scopes_summary(h.claims.iter().map(|c| &c.scope))
        ));
        sessions.push(&h.session);
    }
    let message = commit_message_about(
        if forced { "force-close" } else { "close" },
        &sessions,
        (
            &what,
            &targets.iter().map(|(c, _)| &c.scope).collect::<Vec<_>>(),
        ),
        Some(&actor.agent),
    );
    Ok(Plan::Write {
        text: edited.render(),
        message,
        report: Closing::Closed {
            claims: targets,
            verified,
            forced_by,
            handed,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{by, claim, registry, t0, written};
    use super::*;

    #[test]
    fn close_moves_active_and_stale_claims_to_the_history_with_the_audit() {
        let a = claim("s1", "a", Scope::File("a.md".into()));
        let b = claim("s1", "a", Scope::File("b.md".into()));
        let keep = claim("s2", "a", Scope::File("c.md".into()));
        let reg = registry(&[a, keep], &[b]);
        let audit = VerifyOutcome::Overflow {
            files: 1,
            sections: 0,
        };
        let me = by(Some("s1"), "a", false);
        let p = plan(&reg, "s1", None, (&me, false), (audit, t0()), None).expect("a plan");
        let after = written(&p).expect("written");
        assert_eq!(after.active_claims.len(), 1);
        assert_eq!(after.active_claims[0].session, "s2");
        assert!(after.stale_claims.is_empty());
        assert_eq!(after.history_len(), 2);
        let rows = crate::registry::parse::history_rows(&after).expect("history rows");
        assert_eq!(rows.len(), 2);
        for row in &rows {
            let cells: Vec<&str> = row.iter().map(|(_, v)| v.as_str()).collect();
            assert!(cells.contains(&Status::Completed.as_str()), "{cells:?}");
            assert!(cells.iter().any(|v| v.contains("overflow")), "{cells:?}");
        }
        assert!(matches!(
            plan(
                &reg,
                "s3",
                None,
                (&me, false),
                (VerifyOutcome::Clean, t0()),
                None
            ),
            Err(Error::NotFound(_))
        ));
        // Closed again: done before, nothing written, the rows said.
        let again = plan(
            &after,
            "s1",
            None,
            (&me, false),
            (VerifyOutcome::Clean, t0()),
            None,
        )
        .expect("a plan");
        match again {
            Plan::Keep(Closing::AlreadyClosed(rows)) => {
                assert_eq!(rows.len(), 2);
                assert!(
                    rows.iter()
                        .all(|r| r.status == "completed" && r.agent == "a")
                );
            }
            _ => panic!("not said as closed before"),
        }
    }

    #[test]
    fn another_sessions_claims_close_only_forced_and_the_history_says_who() {
        let theirs = claim("sess-b", "claude", Scope::File("a.md".into()));
        let reg = registry(&[theirs], &[]);
        let a = by(Some("sess-a"), "claude", false);
        let clean = (VerifyOutcome::Clean, t0());
        assert!(matches!(
            plan(&reg, "sess-b", None, (&a, false), clean, None),
            Err(Error::NotYourSession { .. })
        ));
        let p = plan(&reg, "sess-b", None, (&a, true), clean, None).expect("forced");
        let Plan::Write {
            message, report, ..
        } = &p
        else {
            panic!("nothing written")
        };
        assert!(message.contains("BSI-Action: force-close"), "{message}");
        assert!(
            matches!(report, Closing::Closed { forced_by: Some(by), .. } if by == "claude (session sess-a)")
        );
        let rows = ended(&written(&p).expect("written"), "sess-b", None);
        assert_eq!(
            rows[0].note,
            "closed by claude (session sess-a) with --force"
        );
    }

    fn waiting(reg: Registry, ws: &[(&str, Scope, i64)]) -> Registry {
        let mut r = reg;
        for (session, scope, since) in ws {
            r.add_waiter(&crate::registry::Waiter {
                session: (*session).into(),
                scope: scope.clone(),
                agent: format!("agent-{session}"),
                since: t0() + chrono::Duration::seconds(*since),
                lease: t0() + chrono::Duration::seconds(60),
                extra: Vec::new(),
                seen_ahead: None,
                alive: None,
            });
        }
        crate::registry::parse(r.render()).expect("a queue parses back")
    }

    fn handing(snapshot: Snapshot) -> Handoff {
        Handoff {
            snapshot,
            ttl_seconds: 7200,
            max_active_per_agent: None,
            alive: vec!["w1".into(), "w2".into()],
            decided: Decided::default(),
        }
    }

    fn me() -> Actor {
        by(Some("s1"), "a", false)
    }

    #[test]
    fn a_close_hands_the_freed_scope_to_the_first_waiter_only_in_its_write() {
        let f = |n: &str| Scope::File(n.into());
        let held = claim("s1", "a", f("a.md"));
        // w1 arrived first and waits for a.md; w2 too, later; w3 waits for
        // b.md, which nobody holds but the close does not concern.
        let reg = waiting(
            registry(&[held], &[]),
            &[("w1", f("a.md"), 1), ("w2", f("a.md"), 2)],
        );
        let h = handing(Snapshot::default());
        let plan = plan(
            &reg,
            "s1",
            None,
            (&me(), false),
            (VerifyOutcome::Clean, t0()),
            Some(&h),
        )
        .expect("a plan");
        let Plan::Write {
            message, report, ..
        } = &plan
        else {
            panic!("the close writes");
        };
        assert!(
            message.starts_with("bsi: close s1 a.md; handed to w1: a.md\n"),
            "{message}"
        );
        assert!(
            message.contains("BSI-Session: s1\nBSI-Session: w1\n"),
            "{message}"
        );
        let handed = report.handed();
        assert_eq!(handed.len(), 1);
        assert_eq!(handed[0].session, "w1");
        assert_eq!(handed[0].claims[0].agent, "agent-w1");
        let after = written(&plan).expect("written");
        let holders: Vec<&str> = after
            .active_claims
            .iter()
            .map(|c| c.session.as_str())
            .collect();
        assert_eq!(holders, ["w1"]);
        // w1's place is gone with its grant; w2 still waits, now behind a
        // claim.
        let left: Vec<&str> = after.waiters.iter().map(|w| w.session.as_str()).collect();
        assert_eq!(left, ["w2"]);
        // Without a handoff, the close writes only the close.
        let (_, plain) = close_s1(&reg, t0(), None);
        assert!(plain.active_claims.is_empty());
        assert_eq!(plain.waiters.len(), 2);
    }

    /// s1 closes all its claims at `now`, handing over with `h`: what the
    /// close handed, and the registry it writes.
    fn close_s1(
        reg: &Registry,
        now: DateTime<FixedOffset>,
        h: Option<&Handoff>,
    ) -> (Vec<Handed>, Registry) {
        let p = plan(
            reg,
            "s1",
            None,
            (&me(), false),
            (VerifyOutcome::Clean, now),
            h,
        )
        .expect("a plan");
        let Plan::Write { report, .. } = &p else {
            panic!("the close writes");
        };
        (report.handed().to_vec(), written(&p).expect("written"))
    }

    #[test]
    fn a_waiter_for_a_section_of_a_file_not_read_is_left_to_plan_its_own_request() {
        let goals = super::super::tests::section("plan.md", "Goals");
        let held = claim("s1", "a", goals.clone());
        let reg = waiting(registry(&[held], &[]), &[("w1", goals, 1)]);
        // The file's headings were not read: nesting cannot be judged.
        let (handed, after) = close_s1(&reg, t0(), Some(&handing(Snapshot::default())));
        assert!(handed.is_empty());
        assert!(after.active_claims.is_empty());
        assert_eq!(after.waiters.len(), 1);
    }

    #[test]
    fn a_lapsed_place_is_handed_nothing() {
        let f = |n: &str| Scope::File(n.into());
        let held = claim("s1", "a", f("a.md"));
        let reg = waiting(registry(&[held], &[]), &[("w1", f("a.md"), 1)]);
        // Two minutes later the lease (one minute after t0) has passed.
        let later = t0() + chrono::Duration::minutes(2);
        let (handed, _) = close_s1(&reg, later, Some(&handing(Snapshot::default())));
        assert!(handed.is_empty());
    }

    #[test]
    fn a_waiter_not_known_alive_is_handed_nothing() {
        let f = |n: &str| Scope::File(n.into());
        let held = claim("s1", "a", f("a.md"));
        let reg = waiting(registry(&[held], &[]), &[("w1", f("a.md"), 1)]);
        let mut h = handing(Snapshot::default());
        h.alive.clear();
        let (handed, after) = close_s1(&reg, t0(), Some(&h));
        assert!(handed.is_empty());
        assert_eq!(after.waiters.len(), 1);
    }
}
