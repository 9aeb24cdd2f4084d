//! The plan of `bsi open` (and of the edit hook's claim on the first
//! write): grant every scope or none, and on a refusal the claims in the
//! way and free scopes nearby.

use chrono::{DateTime, Duration, FixedOffset};

use super::Plan;
use super::queue::{self, Request};
use super::{Snapshot, commit_message_about, owned_by, scopes_summary};
use crate::conflict::{self, Decision};
use crate::error::{Error, Result};
use crate::markdown::Outline;
use crate::registry::{Claim, Registry, TableKind, Waiter};
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

/// How a request stands towards the queue of `bsi open --wait`.
#[derive(Debug, Clone, Copy)]
pub enum Queueing {
    /// Not at all: the edit hook's claim on the first write, which claims
    /// only what an edit being made needs and what is free at that moment.
    Ignore,
    /// A plain `bsi open`: refused while live waiters that arrived first
    /// wait for an overlapping scope, but takes no place.
    Respect,
    /// `bsi open --wait`: takes or keeps a place in the queue, arrived at
    /// `since` (a live place of the session already in the queue keeps its
    /// own time; one whose lease has passed is taken again at `now`), and
    /// is granted once nothing blocks it and nobody is ahead.
    Join {
        /// When the waiter arrived.
        since: DateTime<FixedOffset>,
    },
}

/// The plan of the edit hook's claim on first write (the queue is not
/// looked at): grant every scope or none.
pub fn plan(reg: &Registry, c: &Claiming<'_>, snap: &Snapshot) -> Result<Plan<Outcome>> {
    plan_queued(reg, c, snap, Queueing::Ignore)
}

/// The plan of `bsi open`: grant every scope or none, honouring the queue
/// as `queueing` says.
pub fn plan_queued(
    reg: &Registry,
    c: &Claiming<'_>,
    snap: &Snapshot,
    queueing: Queueing,
) -> Result<Plan<Outcome>> {
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
    let ahead = match queueing {
        Queueing::Ignore => Vec::new(),
        _ => queue::ahead(reg, session, scopes, now, snap),
    };
    if let (Queueing::Join { .. }, Some(limit)) = (queueing, max_active_per_agent) {
        // A request over the limit would wait for nothing: said at once.
        too_many(
            reg,
            agent,
            grant.len() + blocked_count(scopes, &blockers),
            limit,
        )?;
    }
    if !blockers.is_empty() || !ahead.is_empty() {
        return refused(
            reg,
            c,
            snap,
            queueing,
            Refusal {
                blockers,
                ahead,
                grant,
                held,
            },
        );
    }
    if let Some(limit) = max_active_per_agent {
        too_many(reg, agent, grant.len(), limit)?;
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
    // A waiter granted leaves the queue in the same commit, with the
    // places that lapsed.
    let mine = match queueing {
        Queueing::Join { .. } => queue::rows_of(reg, session),
        _ => Vec::new(),
    };
    if new_claims.is_empty() {
        let report = Outcome::Opened { new_claims, held };
        if mine.is_empty() {
            return Ok(Plan::Keep(report));
        }
        let by = Editor {
            session,
            agent,
            now,
        };
        return Ok(queue_edit(reg, &by, (&mine, &[]), ("unqueue", ""), report));
    }
    let mut edited: Registry = reg.clone();
    for c in &new_claims {
        edited.add_claim(TableKind::Active, c);
    }
    if !mine.is_empty() {
        let mut gone = mine;
        gone.extend(queue::lapsed_rows(reg, session, now));
        remove_rows(&mut edited, gone);
    }
    Ok(Plan::Write {
        text: edited.render(),
        message: commit_message_about(
            "open",
            &[session],
            (&scopes_summary(&grant), &grant.iter().collect::<Vec<_>>()),
            Some(agent),
        ),
        report: Outcome::Opened { new_claims, held },
    })
}

/// What refuses a request: the claims in its way, the waiters ahead of it,
/// and what of it was free or already held.
struct Refusal {
    blockers: Vec<Owned>,
    ahead: Vec<Request>,
    grant: Vec<Scope>,
    held: Vec<(Claim, bool)>,
}

/// The plan of a refused request: its alternatives and what was free; a
/// plain `bsi open` writes nothing, a waiter (`Join`) takes or keeps its
/// place, or leaves the queue when a stale claim is in its way (waiting
/// cannot free it).
fn refused(
    reg: &Registry,
    c: &Claiming<'_>,
    snap: &Snapshot,
    queueing: Queueing,
    Refusal {
        blockers,
        ahead,
        grant,
        held,
    }: Refusal,
) -> Result<Plan<Outcome>> {
    let Claiming {
        session,
        agent,
        scopes,
        now,
        ..
    } = *c;
    // Alternatives for what was refused; what was free in the
    // request is said apart.
    let in_queue = |s: &Scope| {
        ahead
            .iter()
            .any(|r| r.scopes.iter().any(|w| crate::scope::overlaps(w, s, snap)))
    };
    let refused: Vec<Scope> = scopes
        .iter()
        .filter(|s| blockers.iter().any(|b| &b.requested == *s) || in_queue(s))
        .cloned()
        .collect();
    let mut alternatives = alternatives(reg, session, &refused, scopes, snap);
    if !matches!(queueing, Queueing::Ignore) {
        // A scope others wait for is no alternative either.
        alternatives
            .retain(|a| queue::ahead(reg, session, std::slice::from_ref(a), now, snap).is_empty());
    }
    let free: Vec<Scope> = grant.into_iter().filter(|s| !in_queue(s)).collect();
    let Queueing::Join { since } = queueing else {
        let place = (!ahead.is_empty()).then(|| Place {
            place: ahead.len() + 1,
            ahead,
            queued: false,
        });
        return Ok(Plan::Keep(Outcome::Refused {
            blockers,
            alternatives,
            free,
            queue: place,
        }));
    };
    let by = Editor {
        session,
        agent,
        now,
    };
    // Waiting cannot help against a stale claim: only a person frees
    // it. The request leaves the queue (if it was in it) and is refused.
    if blockers.iter().any(|b| b.stale) {
        let mine = queue::rows_of(reg, session);
        let report = Outcome::Refused {
            blockers,
            alternatives,
            free,
            queue: None,
        };
        return Ok(queue_edit(reg, &by, (&mine, &[]), ("unqueue", ""), report));
    }
    let waited: Vec<Scope> = scopes
        .iter()
        .filter(|s| !held.iter().any(|(c, _)| &c.scope == *s))
        .cloned()
        .collect();
    let place = Place {
        place: ahead.len() + 1,
        ahead,
        queued: true,
    };
    let report = Outcome::Refused {
        blockers,
        alternatives,
        free,
        queue: Some(place),
    };
    if !queue::needs_writing(reg, session, &waited, now) {
        return Ok(Plan::Keep(report));
    }
    let since = queue::arrival(reg, session, now, since);
    let rows: Vec<Waiter> = waited
        .iter()
        .map(|s| Waiter {
            session: session.to_string(),
            scope: s.clone(),
            agent: agent.to_string(),
            since,
            lease: now + queue::lease(),
            extra: Vec::new(),
            seen_ahead: None,
            alive: None,
        })
        .collect();
    let mine = queue::rows_of(reg, session);
    let action = if mine.is_empty() {
        "queue"
    } else {
        "queue-renew"
    };
    Ok(queue_edit(
        reg,
        &by,
        (&mine, &rows),
        (action, &scopes_summary(&waited)),
        report,
    ))
}

/// The limit of active claims per agent, for `wanted` more.
fn too_many(reg: &Registry, agent: &str, wanted: usize, limit: usize) -> Result<()> {
    let holding = reg
        .active_claims
        .iter()
        .filter(|c| c.agent.eq_ignore_ascii_case(agent))
        .count();
    if wanted > 0 && holding + wanted > limit {
        return Err(Error::TooManyClaims {
            agent: agent.to_string(),
            wanted: holding + wanted,
            limit,
        });
    }
    Ok(())
}

/// How many requested scopes some claim blocks.
fn blocked_count(scopes: &[Scope], blockers: &[Owned]) -> usize {
    scopes
        .iter()
        .filter(|s| blockers.iter().any(|b| &b.requested == *s))
        .count()
}

/// Removes queue rows, each once, last first so the indexes hold.
fn remove_rows(edited: &mut Registry, mut rows: Vec<usize>) {
    rows.sort_unstable();
    rows.dedup();
    for i in rows.into_iter().rev() {
        edited.remove_waiter(i);
    }
}

/// Who edits the queue, and when.
struct Editor<'a> {
    session: &'a str,
    agent: &'a str,
    now: DateTime<FixedOffset>,
}

/// A write of the queue alone: the session's rows `mine` replaced by
/// `rows`, and the places that lapsed removed; `action` and `what` name
/// the commit.
fn queue_edit<R>(
    reg: &Registry,
    by: &Editor<'_>,
    (mine, rows): (&[usize], &[Waiter]),
    (action, what): (&str, &str),
    report: R,
) -> Plan<R> {
    let Editor {
        session,
        agent,
        now,
    } = *by;
    if mine.is_empty() && rows.is_empty() {
        return Plan::Keep(report);
    }
    let now_lapsed = queue::lapsed_rows(reg, session, now);
    let mut edited: Registry = reg.clone();
    // A renewal rewrites the rows in place: the order of the table stays.
    let renew = mine.len() == rows.len()
        && mine
            .iter()
            .zip(rows)
            .all(|(&i, w)| reg.waiters[i].scope == w.scope);
    if renew {
        for (&i, w) in mine.iter().zip(rows) {
            edited.replace_waiter(i, w);
        }
        remove_rows(&mut edited, now_lapsed);
    } else {
        let mut gone = mine.to_vec();
        gone.extend(now_lapsed);
        remove_rows(&mut edited, gone);
        for w in rows {
            edited.add_waiter(w);
        }
    }
    // The rows it writes, or those it removes.
    let scopes: Vec<&Scope> = if rows.is_empty() {
        mine.iter()
            .filter_map(|&i| reg.waiters.get(i))
            .map(|w| &w.scope)
            .collect()
    } else {
        rows.iter().map(|w| &w.scope).collect()
    };
    Plan::Write {
        text: edited.render(),
        message: commit_message_about(action, &[session], (what, &scopes), Some(agent)),
        report,
    }
}

/// A session's place in the queue, or the places ahead of a request that
/// takes none.
#[derive(Debug, Clone)]
pub struct Place {
    /// 1-based: the requests ahead, plus one.
    pub place: usize,
    /// The live requests ahead that overlap it, in order.
    pub ahead: Vec<Request>,
    /// Whether the session holds a place (`--wait`).
    pub queued: bool,
}

/// The plan of a waiter that gives up (its wait ran out): its place is
/// removed. Nothing to write when it has none.
pub fn leave(reg: &Registry, session: &str, agent: &str) -> Plan<()> {
    let mine = queue::rows_of(reg, session);
    if mine.is_empty() {
        return Plan::Keep(());
    }
    let scopes: Vec<&Scope> = mine
        .iter()
        .filter_map(|&i| reg.waiters.get(i))
        .map(|w| &w.scope)
        .collect();
    let mut edited: Registry = reg.clone();
    remove_rows(&mut edited, mine);
    Plan::Write {
        text: edited.render(),
        message: commit_message_about("unqueue", &[session], ("", &scopes), Some(agent)),
        report: (),
    }
}

/// The plan of a waiter that keeps its place in the registry itself
/// (`queue-renew`): its live rows written again with a lease from `now`,
/// keeping their arrival, and the places that lapsed removed. Only where
/// its clone's record cannot keep it (the remote out of reach: the row is
/// renewed on the local branch, as the offline rejoin expects), or when a
/// process takes up a place its session holds. Nothing to write when it
/// has no live place (the next plan takes one again).
pub fn renew_place(
    reg: &Registry,
    session: &str,
    agent: &str,
    now: DateTime<FixedOffset>,
) -> Plan<()> {
    let mine = queue::rows_of(reg, session);
    let Some(since) = queue::arrived(reg, session, now) else {
        return Plan::Keep(());
    };
    let rows: Vec<Waiter> = mine
        .iter()
        .filter_map(|&i| reg.waiters.get(i))
        .map(|w| Waiter {
            since,
            lease: now + queue::lease(),
            alive: None,
            seen_ahead: None,
            ..w.clone()
        })
        .collect();
    let scopes: Vec<Scope> = rows.iter().map(|w| w.scope.clone()).collect();
    let by = Editor {
        session,
        agent,
        now,
    };
    queue_edit(
        reg,
        &by,
        (&mine, &rows),
        ("queue-renew", &scopes_summary(&scopes)),
        (),
    )
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
        /// The queue: the session's place (`--wait`), or the waiters a
        /// plain request may not overtake; `None` when nobody waits ahead
        /// and the session has no place.
        queue: Option<Place>,
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
