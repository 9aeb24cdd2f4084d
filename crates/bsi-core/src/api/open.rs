//! A claim request from any door: all its scopes or none, kept in the
//! queue and planned again while it waits (`--wait`, an MCP `claim` with
//! `wait`), until it is granted, the time is up or whoever asked is gone.

use chrono::Duration;

use super::{Actor, Site, Stop};
use crate::claims::job::Job;
use crate::claims::open::{Claiming, Outcome, Owned, Place, Queueing, leave, plan_queued};
use crate::claims::{Plan, queue};
use crate::error::{Error, Result};
use crate::publish::Applied;
use crate::resolve;
use crate::scope::Scope;
use crate::store::Brain;
use crate::wait::{Waiting, Woke};
use crate::writes::{self, Answer, Leaving, State};

/// What is asked: the scopes (resolved by [`scopes`]), for how long, with
/// what note, and whether to wait.
pub struct Request<'a> {
    pub scopes: &'a [Scope],
    pub ttl: Duration,
    pub note: &'a str,
    /// How long to keep a refused request and plan it again.
    pub wait: Option<std::time::Duration>,
    /// While waiting, take a place in the queue.
    pub queue: bool,
}

/// What a wait has to say while it waits: the door renders it.
pub trait Watch {
    /// The wait starts: the claims in the way, the place in the queue.
    fn waiting(&mut self, blockers: &[Owned], place: Option<&Place>, wait: std::time::Duration);
    /// The place in the queue, or who is ahead, changed.
    fn moved(&mut self, place: &Place);
}

/// A door that says nothing while it waits.
pub struct Silent;

impl Watch for Silent {
    fn waiting(&mut self, _: &[Owned], _: Option<&Place>, _: std::time::Duration) {}
    fn moved(&mut self, _: &Place) {}
}

/// What came of a claim request.
pub struct Opening {
    /// The session the claims are in (drawn again when the drawn id was
    /// taken).
    pub session: String,
    /// The plan's outcome, the commit and where it landed.
    pub applied: Applied<Outcome>,
    /// The claims reopen a session that had closed before (its id given
    /// again).
    pub reopened: bool,
    /// Whoever asked went away: nothing was granted after that, and the
    /// place in the queue was given up.
    pub stopped: bool,
}

/// The scopes of a request resolved against the brain, from `cwd`, without
/// repeats: each is a path or a section, never an option (`--session=s`
/// is a file name here). The registry's own copy is refused.
pub fn scopes(brain: &Brain, cwd: &std::path::Path, raw: &[String]) -> Result<Vec<Scope>> {
    let mut scopes: Vec<Scope> = Vec::new();
    for (i, raw_one) in raw.iter().enumerate() {
        let s = resolve::resolve_scope(&brain.root, cwd, raw_one, &brain.markdown)?;
        // `f.md#Open questions` unquoted: two words, and the file has the
        // heading they make. Refused before anything is written.
        if let Scope::Section { file, heading } = &s
            && let Some((whole, taken)) =
                resolve::split_heading(&brain.root, file, heading, &raw[i + 1..])
        {
            return Err(Error::UnquotedHeading {
                words: raw[i..=i + taken].to_vec(),
                file: file.clone(),
                heading: whole,
            });
        }
        if s.file() == Some(brain.copy_name().as_str()) {
            return Err(Error::RegistryNotClaimable);
        }
        if !scopes.contains(&s) {
            scopes.push(s);
        }
    }
    Ok(scopes)
}

/// Claims `req.scopes` for `actor`'s own session (a request with none is
/// refused, [`Error::NoSession`]): planned and published under the writer
/// lock; with a wait, a refused request is planned again whenever
/// the registry changes, until it is granted, the time is up or `stop` is
/// set (after which nothing is granted).
pub fn open(
    site: &Site<'_>,
    actor: &Actor,
    req: &Request<'_>,
    watch: &mut dyn Watch,
    stop: &Stop,
) -> Result<Opening> {
    let _arriving = site.arriving();
    let mut session = actor.own_session()?.to_string();
    // A drawn id the registry already knows is drawn again.
    let mut draws: u64 = 0;
    loop {
        let who = Actor {
            session: Some(session.clone()),
            ..actor.clone()
        };
        let (applied, stopped) = publish_waiting(site, (&who, &session), req, watch, stop)?;
        if !matches!(applied.report, Outcome::IdTaken) {
            let reopened = !actor.drawn && reopens_closed(&applied, &session);
            return Ok(Opening {
                session,
                applied,
                reopened,
                stopped,
            });
        }
        draws += 1;
        if draws > 32 {
            return Err(Error::SessionIdsExhausted { last: session });
        }
        session = crate::session::new_session_id(
            site.now,
            site.random_seed.map(|s| s.wrapping_add(draws)),
        );
    }
}

/// The next steps of a refused claim request, the same for every door:
/// the claims in the way (`blockers`), the free scopes nearby and in the
/// request, the waiters ahead in the queue (when the request holds no place
/// of its own), what was asked, and whether the request waited already.
pub fn refusal_steps(
    (blockers, alternatives, free): (&[Owned], &[Scope], &[Scope]),
    queue: Option<&Place>,
    wanted: &[Scope],
    waited: bool,
    now: chrono::DateTime<chrono::FixedOffset>,
) -> Vec<crate::next::NextStep> {
    crate::next::Conflict {
        held: blockers.iter().map(|b| (&b.claim, b.stale)).collect(),
        nearby: alternatives,
        free,
        wanted,
        ahead: queue
            .filter(|p| !p.queued)
            .map(|p| p.ahead.iter().map(|a| a.session.clone()).collect())
            .unwrap_or_default(),
        waited,
        ..crate::next::Conflict::default()
    }
    .steps(now)
}

/// What a claim made for an agent's edit outside its claims
/// (`claim_on_write`) came to.
pub enum OnWrite {
    /// The first of the tries that was free is the session's now.
    Opened {
        /// The claims opened.
        new_claims: Vec<crate::registry::Claim>,
        /// The claims of the try the session held already.
        held: Vec<(crate::registry::Claim, bool)>,
        /// Where the write landed.
        landing: crate::publish::Landing,
    },
    /// None was free: the registry the last refusal saw, for the edit to
    /// be judged again on it ([`crate::guard::edit::after_refused_claim`]).
    Refused(crate::registry::Registry),
    /// Another bsi held the writer lock past the wait (it may be claiming
    /// this very part): nothing was recorded, so the edit waits. `path` is
    /// the lock.
    Busy {
        /// The lock another bsi holds.
        path: std::path::PathBuf,
    },
}

/// Claims for `actor`, before an edit outside its claims, the first of
/// `tries` that is free (each all or none) as `bsi open` claims, without a
/// wait or a place in the queue (and so behind the waiters of the queue).
/// `None` when there is nothing to try.
pub fn on_write(
    site: &Site<'_>,
    actor: &Actor,
    tries: &[Vec<Scope>],
    ttl: Duration,
    note: &str,
) -> Result<Option<OnWrite>> {
    let mut refused = None;
    for scopes in tries {
        let req = Request {
            scopes,
            ttl,
            note,
            wait: None,
            queue: false,
        };
        let applied = match open(site, actor, &req, &mut Silent, &Stop::new()) {
            Ok(opening) => opening.applied,
            Err(Error::Locked { path, .. }) => return Ok(Some(OnWrite::Busy { path })),
            Err(e) => return Err(e),
        };
        match applied.report {
            Outcome::Opened { new_claims, held } => {
                return Ok(Some(OnWrite::Opened {
                    new_claims,
                    held,
                    landing: applied.landing,
                }));
            }
            Outcome::Refused { .. } | Outcome::IdTaken => {
                refused = Some(OnWrite::Refused(applied.landing.registry));
            }
        }
    }
    Ok(refused)
}

/// Whether the claims just opened are the only ones of a session that had
/// closed before (its rows are in the history, none active or stale).
fn reopens_closed(applied: &Applied<Outcome>, session: &str) -> bool {
    let Outcome::Opened { new_claims, held } = &applied.report else {
        return false;
    };
    if new_claims.is_empty() || !held.is_empty() {
        return false;
    }
    let reg = &applied.landing.registry;
    let standing = reg
        .active_claims
        .iter()
        .chain(&reg.stale_claims)
        .filter(|c| c.session == session)
        .count();
    standing == new_claims.len()
        && crate::registry::parse::history_rows(reg).is_ok_and(|rows| {
            rows.iter().any(|row| {
                row.iter()
                    .any(|(k, v)| k.trim().eq_ignore_ascii_case("session") && v.trim() == session)
            })
        })
}

/// A request that held its place and finds its claims granted: a close
/// let it through and granted it in its own write (the handoff,
/// [`crate::claims::close::handoff`]), so the plan found them held. Those
/// claims are what this request opened; at the brain's TTL, they are
/// renewed to the one it asked for when that differs.
fn handed_over(
    site: &Site<'_>,
    (actor, session): (&Actor, &str),
    req: &Request<'_>,
    mut applied: Applied<Outcome>,
) -> Result<Applied<Outcome>> {
    let Outcome::Opened { new_claims, held } = &mut applied.report else {
        return Ok(applied);
    };
    if !new_claims.is_empty() {
        return Ok(applied);
    }
    let (handed, kept): (Vec<_>, Vec<_>) = std::mem::take(held)
        .into_iter()
        .partition(|(c, stale)| !*stale && opened_while_waiting(site, c));
    *held = kept;
    let mut handed: Vec<crate::registry::Claim> = handed.into_iter().map(|(c, _)| c).collect();
    for c in &mut handed {
        if c.expires == crate::ttl::expiry(c.opened, req.ttl) {
            continue;
        }
        let renewed = super::renew::renew(site, actor, session, Some(&c.scope), req.ttl, false)?;
        if let Some(r) = renewed.report.0.into_iter().find(|r| r.scope == c.scope) {
            *c = r;
        }
        applied.commit = renewed.commit.or(applied.commit);
    }
    // The queue keeps no note: the one the request gave goes on the
    // claims the close handed over.
    if !req.note.is_empty() {
        let scopes: Vec<Scope> = handed.iter().map(|c| c.scope.clone()).collect();
        let noted = site.publish(|reg| {
            crate::claims::renew::note(reg, session, &scopes, req.note, &actor.agent)
        })?;
        for n in noted.report {
            if let Some(c) = handed.iter_mut().find(|c| c.scope == n.scope) {
                *c = n;
            }
        }
        applied.commit = noted.commit.or(applied.commit);
    }
    *new_claims = handed;
    Ok(applied)
}

/// Whether the claim `c` of the waiting session was opened since its
/// request began (a claim's time is kept to the minute): one a close
/// handed over, not one the session held before.
fn opened_while_waiting(site: &Site<'_>, c: &crate::registry::Claim) -> bool {
    c.opened >= crate::ttl::to_minute(site.now)
}

/// The claims of `reg` that a close handed to `session` while it waited
/// for `req`: its active claims on the request's scopes opened since the
/// request began.
fn handed<'r>(
    reg: &'r crate::registry::Registry,
    site: &Site<'_>,
    session: &str,
    req: &Request<'_>,
) -> impl Iterator<Item = &'r crate::registry::Claim> {
    reg.active_claims.iter().filter(move |c| {
        c.session == session && opened_while_waiting(site, c) && req.scopes.contains(&c.scope)
    })
}

/// The scopes of `req` that a close handed to `session` while it waited
/// ([`handed`]), as the remote has them now (fetched, bounded; else as
/// last fetched).
fn handed_scopes(site: &Site<'_>, session: &str, req: &Request<'_>) -> Vec<Scope> {
    let Ok((view, _)) = crate::publish::read(site.brain, site.settings, site.now, false) else {
        return Vec::new();
    };
    handed(&view.registry, site, session, req)
        .map(|c| c.scope.clone())
        .collect()
}

/// The request's grant, when a close handed `session` every scope
/// of `req` while it waited ([`handed`]), read from the registry as last
/// fetched (the wait fetched it as it woke): what a plan of the request
/// would find, held, with nothing to write.
fn granted_by_close(site: &Site<'_>, session: &str, req: &Request<'_>) -> Option<Applied<Outcome>> {
    let (view, _) = crate::publish::read(site.brain, site.settings, site.now, true).ok()?;
    let claims: Vec<&crate::registry::Claim> = handed(&view.registry, site, session, req).collect();
    let held = req
        .scopes
        .iter()
        .map(|s| {
            claims
                .iter()
                .find(|c| &c.scope == s)
                .map(|c| ((*c).clone(), false))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Applied {
        report: Outcome::Opened {
            new_claims: Vec::new(),
            held,
        },
        commit: None,
        landing: crate::publish::Landing::new(crate::publish::Landed::Unchanged, view.registry),
    })
}

/// Whether `plan` refuses the request (written or not: a refused request
/// may take its place in the queue).
fn refuses(plan: &Plan<Outcome>) -> bool {
    let (Plan::Write { report, .. } | Plan::Keep(report)) = plan;
    matches!(report, Outcome::Refused { .. })
}

/// What a request that was stopped before its plan ran comes to: nothing.
fn nothing() -> Outcome {
    Outcome::Refused {
        blockers: Vec::new(),
        alternatives: Vec::new(),
        free: Vec::new(),
        queue: None,
    }
}

/// A waiter that stops (whoever asked went away), its request standing at
/// `request` in the write machine: its mark taken away first, so no write
/// decided from now on hands it a claim — waiting for a write decided while
/// it was there to end — then the claims such a write handed it are closed
/// again: nothing is granted once whoever asked is gone.
fn stop_waiting(
    site: &Site<'_>,
    (actor, session): (&Actor, &str),
    (req, request): (&Request<'_>, State),
    marked: Option<crate::store::WaitingMark>,
    lease: Option<chrono::DateTime<chrono::FixedOffset>>,
) {
    if let Some(m) = marked {
        m.leave();
    }
    let handed = if lease.is_some() {
        handed_scopes(site, session, req)
    } else {
        Vec::new()
    };
    if let (Answer::CloseAgain, _) =
        writes::waiter_leaves(request, Leaving::Stopped, !handed.is_empty())
    {
        for scope in handed {
            let _ = super::close::close(site, actor, session, Some(&scope), false);
        }
    }
}

/// Where a waiter's plan files its request from: where the request stands
/// (planned, or refused as it waits), or, once it landed with a close's
/// write, a request of its own that only reads the grant.
fn filed_from(request: State) -> State {
    match request {
        State::Landed => State::Planned,
        waiting => waiting,
    }
}

/// How often a waiter renews its place at most, when
/// `BSI_QUEUE_RENEW_MS` says (tests: many renewals in a short wait);
/// else once less than [`queue::renew_when_left`] of its lease is left.
fn renew_every() -> Option<std::time::Duration> {
    std::env::var("BSI_QUEUE_RENEW_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(std::time::Duration::from_millis)
}

/// How much of its lease a waiter has left when it renews it:
/// [`queue::renew_when_left`], unless `BSI_QUEUE_RENEW_LEFT_MS` says
/// otherwise (tests: a renewal made just before its lease passes).
fn renew_when_left() -> chrono::Duration {
    std::env::var("BSI_QUEUE_RENEW_LEFT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or_else(queue::renew_when_left, chrono::Duration::milliseconds)
}

/// Renews `session`'s place at `at`, whose lease `held` it last landed
/// holds until then, on its clone's own record (no commit of the
/// registry); where the record cannot reach the remote, in the registry
/// itself ([`renew_in_registry`]). The new lease, when renewed in time: a
/// renewal that answers only after `held` passed by `now` is not kept —
/// its line leaves the record, so no record revives the lapsed place, and
/// the waiter takes its place again at the end.
fn keep_alive(
    site: &Site<'_>,
    (actor, session): (&Actor, &str),
    (at, held): (
        chrono::DateTime<chrono::FixedOffset>,
        chrono::DateTime<chrono::FixedOffset>,
    ),
    now: &dyn Fn() -> chrono::DateTime<chrono::FixedOffset>,
) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    let remote = site.settings.remote().ok().flatten();
    let reg = crate::publish::read(site.brain, site.settings, at, true)
        .ok()
        .map(|(v, _)| v.registry)?;
    let since = queue::arrived(&reg, session, at)?;
    let lease = at + queue::lease();
    let record = crate::store::alive::Record {
        session: session.to_string(),
        since,
        lease,
    };
    // No longer than the lease it extends holds: a push still running
    // then is late whatever it answers.
    let left = (held - now()).to_std().unwrap_or_default();
    let timeout = crate::settings::FETCH_TIMEOUT.min(left);
    let landed = site.brain.keep_alive(remote.as_ref(), record, timeout);
    if now() >= held {
        site.brain
            .forget_alive(remote.as_ref(), session, crate::settings::FETCH_TIMEOUT);
        site.brain.notes.push(format!(
            "note: {session}'s place was renewed only after its lease had passed: it takes its place again at the end of the queue"
        ));
        return None;
    }
    if landed {
        return Some(lease);
    }
    renew_in_registry(site, (actor, session), held, now)
}

/// Renews `session`'s place by writing its rows again in the registry
/// (`queue-renew`): published when the remote answers, else kept on the
/// local branch. The new lease, when written. Each attempt plans by the
/// clock it runs at (`now`), after its turn at the writer lock and its
/// fetch, and none renews once the lease `held` it extends has passed: a
/// place a reader judged lapsed is never revived (the waiter takes its
/// place again at the end). A renewal planned in time is a registry
/// write like any other: the compare-and-swap orders it with every write
/// that judged the place.
fn renew_in_registry(
    site: &Site<'_>,
    (actor, session): (&Actor, &str),
    held: chrono::DateTime<chrono::FixedOffset>,
    now: &dyn Fn() -> chrono::DateTime<chrono::FixedOffset>,
) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    let planned = std::cell::Cell::new(None);
    let done = site
        .publish(|reg| {
            let at = now();
            if at >= held {
                return Ok(crate::claims::Plan::Keep(()));
            }
            planned.set(Some(at));
            Ok(crate::claims::open::renew_place(
                reg,
                session,
                &actor.agent,
                at,
            ))
        })
        .ok()?;
    done.commit?;
    planned.get().map(|at| at + queue::lease())
}

/// Publishes the claim; with a wait, a refused one takes its place in the
/// queue (unless `req.queue` is false) and is planned again whenever the
/// registry changes or its lease needs renewing, until the wait is over
/// or `stop` is set. Also returns whether it stopped. `session` is
/// `actor`'s own.
fn publish_waiting(
    site: &Site<'_>,
    (actor, session): (&Actor, &str),
    req: &Request<'_>,
    watch: &mut dyn Watch,
    stop: &Stop,
) -> Result<(Applied<Outcome>, bool)> {
    let started = std::time::Instant::now();
    // The clock of a long wait moves on from the request's own.
    let now =
        || site.now + Duration::from_std(started.elapsed()).unwrap_or_else(|_| Duration::zero());
    let mut waiting = req
        .wait
        .map(|w| Waiting::new(site.settings, w).stopped_by(stop.flag()));
    let joins = waiting.is_some() && req.queue;
    let mut since = site.now;
    // The lease last written, when this request holds a place.
    let mut lease: Option<chrono::DateTime<chrono::FixedOffset>> = None;
    let mut said: Option<(usize, Vec<String>)> = None;
    // This process's record as a live waiter, removed when the wait ends.
    let mut marked: Option<crate::store::WaitingMark> = None;
    // The time ran out once already: the mark is gone for good.
    let mut timed_out = false;
    // Where this request stands in the write machine between its plans:
    // planned, then refused while it waits (each plan files it again).
    let mut request = State::Planned;
    let give_up = |lease: Option<_>| {
        if lease.is_some() {
            // Best effort: a place not removed lapses with its lease.
            let _ = site.publish(|reg| Ok(leave(reg, session, &actor.agent)));
        }
    };
    loop {
        let at = now();
        if lease.is_some_and(|l| at >= l) {
            // The place lapsed (the machine slept?): the queue's end.
            since = at;
        }
        // A close may have granted this request in its own write (the
        // handoff): the registry the wait just read says so, and taking
        // the grant needs no write, nor a turn at the writer lock.
        if lease.is_some()
            && let Some(applied) = granted_by_close(site, session, req)
        {
            return Ok((handed_over(site, (actor, session), req, applied)?, false));
        }
        // The references before the plan reads them: anything since is news.
        let tips = waiting.as_ref().map(|w| w.tips(site.brain));
        // Read afresh each time: a heading may have moved while waiting.
        // The directory listings only a refusal's alternatives need are
        // read once a plan has refused.
        let mut snap = site.brain.outlines(req.scopes);
        let mut listed = false;
        let c = Claiming {
            session,
            agent: &actor.agent,
            scopes: req.scopes,
            ttl: req.ttl,
            note: req.note,
            now: at,
            max_active_per_agent: site.settings.config.max_active_per_agent,
            new_id: actor.drawn,
        };
        let queueing = if joins {
            Queueing::Join { since }
        } else {
            Queueing::Respect
        };
        let mut stopped = false;
        let job = Job::open(&c, &snap, queueing);
        let shared = if stop.is_set() {
            None
        } else {
            // This writer's own report, planned again on the registry its
            // request was decided on; a refusal reads the listings its
            // alternatives come from.
            site.publish_job((&job, filed_from(request)), stop, |reg| {
                let plan = plan_queued(reg, &c, &snap, queueing)?;
                if !refuses(&plan) {
                    return Ok(plan);
                }
                let mut full = snap.clone();
                site.brain.list(&mut full, req.scopes);
                plan_queued(reg, &c, &full, queueing)
            })?
        };
        let applied = match shared {
            Some(applied) => applied,
            None => site.publish(|reg| {
                // Under the writer lock: once whoever asked is gone, nothing
                // is granted.
                if stop.is_set() {
                    stopped = true;
                    return Ok(Plan::Keep(nothing()));
                }
                let plan = plan_queued(reg, &c, &snap, queueing)?;
                if listed || !refuses(&plan) {
                    return Ok(plan);
                }
                site.brain.list(&mut snap, req.scopes);
                listed = true;
                plan_queued(reg, &c, &snap, queueing)
            })?,
        };
        if stopped {
            stop_waiting(site, (actor, session), (req, request), marked.take(), lease);
            give_up(lease);
            return Ok((applied, true));
        }
        let applied = if lease.is_some() {
            handed_over(site, (actor, session), req, applied)?
        } else {
            applied
        };
        let (
            Some(w),
            Some(tips),
            Outcome::Refused {
                blockers,
                queue: place,
                ..
            },
        ) = (waiting.as_mut(), tips, &applied.report)
        else {
            return Ok((applied, false));
        };
        if joins && place.is_none() {
            // A stale claim in the way: waiting cannot free it.
            return Ok((applied, false));
        }
        // Its plan refused it (the writer that carried it out moved it
        // so): it waits, refused, and files again as it wakes.
        request = State::Refused;
        if place.as_ref().is_some_and(|p| p.queued) {
            let reg = &applied.landing.registry;
            let first = lease.is_none();
            lease = queue::lease_of(reg, session, at).or(lease);
            // A process that takes up a place its session held, low on
            // lease, writes it once in the registry (on the local branch
            // when the remote is out of reach: the offline rejoin);
            // afterwards its clone's record keeps it.
            if first
                && applied.commit.is_none()
                && queue::renewal_due(reg, session, at)
                && let Some(held) = lease
            {
                lease = renew_in_registry(site, (actor, session), held, &now).or(lease);
            }
            // Alive and waiting, for a close by any writer it meets to
            // hand over to.
            if marked.is_none() && !timed_out {
                marked = Some(site.meeting().mark_waiting(session, req.scopes));
            }
        }
        let ahead: Vec<String> = place
            .iter()
            .flat_map(|p| p.ahead.iter().map(|r| r.session.clone()))
            .collect();
        let n = place.as_ref().map_or(0, |p| p.place);
        match &said {
            None => watch.waiting(blockers, place.as_ref(), req.wait.unwrap_or_default()),
            Some((m, before)) if *m != n || *before != ahead => {
                if let Some(p) = place {
                    watch.moved(p);
                }
            }
            Some(_) => {}
        }
        said = Some((n, ahead));
        // Wake in time to renew the lease.
        let renew = lease.map(|l| {
            let due = l - renew_when_left() - at;
            let due = due.to_std().unwrap_or_default();
            started + started.elapsed() + renew_every().map_or(due, |every| due.min(every))
        });
        // The head of the queue (or a waiter with no queue to keep) is
        // served next: it watches the remote closely.
        let head = place.as_ref().is_none_or(|p| p.place == 1);
        match w.until(site.brain, tips, renew, head) {
            Woke::Changed => {}
            Woke::Renew => {
                let at = now();
                if let Some(l) = lease.filter(|l| at < *l) {
                    lease = keep_alive(site, (actor, session), (at, l), &now).or(Some(l));
                }
            }
            Woke::TimeUp => {
                // Its mark taken away first: no write decided from now on
                // hands it a claim, and one decided while it was there has
                // ended. A close may have handed it its claims meanwhile:
                // granted before the time was up, it is answered as
                // granted (the next plan finds them held).
                if let Some(m) = marked.take() {
                    m.leave();
                }
                let granted =
                    !timed_out && lease.is_some() && !handed_scopes(site, session, req).is_empty();
                if let (Answer::Holds, landed) =
                    writes::waiter_leaves(request, Leaving::TimeUp, granted)
                {
                    // Its request landed with the close's write: what
                    // follows reads the grant.
                    timed_out = true;
                    request = landed;
                    continue;
                }
                give_up(lease);
                return Ok((applied, false));
            }
            Woke::Stopped => {
                stop_waiting(site, (actor, session), (req, request), marked.take(), lease);
                give_up(lease);
                return Ok((applied, true));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiter_files_each_plan_from_where_its_request_stands() {
        // Its first plan, each plan as it wakes refused, and the plan that
        // reads a grant it holds: each a filing the machine allows.
        for waiting in [State::Planned, State::Refused, State::Landed] {
            let filed = writes::next(filed_from(waiting), writes::Event::File);
            assert_eq!(filed, Ok(State::Filed), "{waiting:?}");
        }
        // Granted while it waited, it holds the grant or closes it again.
        let landed = writes::handed_over(State::Refused);
        assert_eq!(
            writes::waiter_leaves(landed, Leaving::TimeUp, true).0,
            Answer::Holds
        );
        assert_eq!(
            writes::waiter_leaves(State::Refused, Leaving::Stopped, true).0,
            Answer::CloseAgain
        );
    }
}
