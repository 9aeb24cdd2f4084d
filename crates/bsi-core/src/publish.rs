//! How a planned registry change lands: on the local registry branch, or —
//! when the brain has a remote — on the remote's registry branch first.
//!
//! The protocol, for every write command and `bsi sync`:
//!
//! 1. under the clone's writer lock, read the registry: the union of the
//!    local branch (pending changes) and the remote as last fetched;
//! 2. run the plan on it: a pure function of that registry and of the
//!    [`crate::claims::Snapshot`] its command read before the lock (the
//!    heading trees and directories it needs), so it does no IO and a retry
//!    costs nothing;
//! 3. commit the result on the last fetched remote tip (git2: blob, tree,
//!    commit; no index, no work tree) and push that commit alone;
//! 4. git refuses a push that does not fast-forward the branch: that is the
//!    compare-and-swap. A lost race fetches the registry branch and goes
//!    back to 1 with jittered exponential backoff, within a time budget; a
//!    plan that keeps the registry as it is (a refusal, nothing to do) is
//!    checked once against a fresh fetch before it is believed;
//! 5. once pushed, the remote-tracking and the local branch move to it and
//!    the work-tree copy is rewritten.
//!
//! An unreachable remote keeps the change on the local branch (pending,
//! exit 7) for `bsi sync`. Content branches are never fetched, pushed,
//! merged or rebased, and the registry branch is never moved while a work
//! tree has it checked out ([`Brain::ensure_branch_free`]).
//!
//! Every write of the registry branch goes through here: [`apply`] for a
//! plan, [`create`] for the branch's first commit (`bsi init`, `bsi
//! migrate`), [`replace`] for a text edited by hand (`bsi repair`).

use std::time::{Duration, Instant};

use crate::git::Oid;
use chrono::{DateTime, FixedOffset};
use rand::RngExt;

use crate::claims::job::{self, Job};
use crate::conflict;
use crate::error::{Error, Result, exit};
use crate::git::local_remote::{self, Fetched};
use crate::git_cli::{FetchError, Posting, Push, Remote};
use crate::registry::merge::Superseded;
use crate::registry::{Claim, Registry, archive};
use crate::settings::{FETCH_TIMEOUT, Settings};
use crate::store::lock::fault;
use crate::store::requests::{self, Requests, Standing};
use crate::store::{BRANCH_FILE, Brain, ROOT_FILE, Tips, View};
use crate::writes::{self, Event, State};

pub use crate::claims::Plan;

/// Where the change went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Landed {
    /// No remote: committed on the local registry branch.
    Local,
    /// On the remote's registry branch, and the local one.
    Published,
    /// Nothing to write, and the decision was made on the remote's state.
    Unchanged,
    /// Nothing to write, but the remote could not be reached: the decision
    /// was made on the registry as last fetched.
    AsLastFetched(Unreached),
    /// Committed on the local branch only: the remote could not be reached.
    Pending(Unreached),
}

/// A remote that could not be reached, and what git said; it reads
/// `origin/brain-index could not be reached (fatal: …)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreached {
    /// `remote/branch`.
    pub remote: String,
    /// git's words.
    pub why: String,
}

impl std::fmt::Display for Unreached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} could not be reached ({})",
            self.remote,
            self.why.trim_end_matches('.')
        )
    }
}

/// A plan carried out.
pub struct Applied<R> {
    /// What the plan reported.
    pub report: R,
    /// The commit holding the change, when one was written.
    pub commit: Option<Oid>,
    /// Where it went.
    pub landing: Landing,
}

/// Where a change went, and what came with it.
pub struct Landing {
    /// Where it went.
    pub landed: Landed,
    /// Pending local changes this write published with its own.
    pub published: Vec<String>,
    /// The registry as it stands after the write.
    pub registry: Registry,
    /// The claims that collide in it, when it published pending changes
    /// (computed once, under the lock): [`Landing::words`] says them.
    pub collisions: Vec<(Claim, Claim)>,
    /// Endings recorded offline that the merge with the remote did not
    /// keep: the remote had already ended those claims otherwise.
    pub superseded: Vec<Superseded>,
}

impl Landing {
    /// `registry`, as it stands where a change went (`landed`).
    pub fn new(landed: Landed, registry: Registry) -> Landing {
        Landing {
            landed,
            published: Vec::new(),
            registry,
            collisions: Vec::new(),
            superseded: Vec::new(),
        }
    }

    /// With the endings of the view it was planned on that were not kept.
    fn superseded(mut self, superseded: Vec<Superseded>) -> Landing {
        self.superseded = superseded;
        self
    }
}

/// How a write runs.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The clock, for the record of the last contact with the remote.
    pub now: DateTime<FixedOffset>,
    /// Fetch before planning even when a remote tip is known (the
    /// watchdog and `sync` judge the remote's present state).
    pub fresh: bool,
    /// Say attempts, rejections and waits on stderr.
    pub verbose: bool,
    /// A hard bound on the write's time (an agent tool's hook): `None` for
    /// the command line's usual waits.
    pub bound: Option<Bound>,
}

/// How long a bounded write may take: past these it gives up or keeps its
/// change on the local branch, never waits longer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// The longest wait for another bsi to let go of the writer lock:
    /// past it, [`Error::Locked`] and nothing written.
    pub lock_wait: Duration,
    /// Every fetch and push of the write together, counted once the lock is
    /// held: past it the change is kept on the local branch
    /// ([`Landed::Pending`]), as when the remote cannot be reached, and a
    /// race lost to other writers is no longer retried.
    pub remote: Duration,
}

/// Plans and writes a change under the writer lock, publishing it when the
/// brain has a remote. `plan` may run several times, against fresh states.
pub fn apply<R>(
    brain: &Brain,
    settings: &Settings,
    opts: Options,
    mut plan: impl FnMut(&Registry) -> Result<Plan<R>>,
) -> Result<Applied<R>> {
    let remote = settings.remote()?;
    let _lock = brain.writer_within("write", opts.bound.map(|b| b.lock_wait))?;
    brain.ensure_branch_free()?;
    match remote {
        None => local(brain, settings.history_keep, &mut plan),
        Some(remote) => Publisher::new(brain, settings, remote, opts).run(&mut plan),
    }
}

/// What [`create`] found.
pub enum Created {
    /// The branch was made with the text asked for: where it went.
    Made(Applied<()>),
    /// A registry exists already, here or on the remote (fetched just now,
    /// or a moment ago by a clone that won the race): nothing was written.
    Exists(View),
}

/// Makes the registry branch with `text` as its first commit, under the
/// writer lock, and publishes it when the brain has a remote; a registry
/// made elsewhere arrives with a fetch first, so no rival is ever made.
/// `lock_for` names the work in the lock's record. With `offline_ok`, an
/// unreachable remote keeps the branch local (pending, like any write);
/// without, it is refused and nothing is written. The work-tree copy is the
/// caller's to write (`bsi migrate` untracks the file first).
pub fn create(
    brain: &Brain,
    settings: &Settings,
    opts: Options,
    (text, message): (String, String),
    lock_for: &str,
    offline_ok: bool,
) -> Result<Created> {
    let remote = settings.remote()?;
    let _lock = brain.writer(lock_for)?;
    brain.ensure_branch_free()?;
    let registry = brain.parse(text)?;
    match remote {
        None => {
            let tips = brain.tips(None);
            if tips.local.is_some() {
                return Ok(Created::Exists(brain.view_of(tips, None)?));
            }
            let (commit, registry) = commit_on(brain, None, registry, &message, None)?;
            move_local(brain, commit, None, &message)?;
            Ok(Created::Made(Applied {
                report: (),
                commit: Some(commit),
                landing: Landing::new(Landed::Local, registry),
            }))
        }
        Some(remote) => {
            Publisher::new(brain, settings, remote, opts).create(registry, &message, offline_ok)
        }
    }
}

/// A registry text as the branch holds it, unparsed (it may be broken):
/// what `bsi repair` edits.
pub struct Raw {
    /// The commit it was read from: the one [`replace`] builds on.
    pub tip: Oid,
    /// The text.
    pub text: String,
}

/// The registry text a write would build on — the local branch when it
/// holds pending changes, else the remote as fetched now — without parsing
/// it. An unreachable remote is an error: a repair is decided on the
/// present state.
pub fn raw(brain: &Brain, settings: &Settings, now: DateTime<FixedOffset>) -> Result<Raw> {
    let remote = settings.remote()?;
    if let Some(r) = &remote {
        match local_remote::fetch(&brain.workdir, r, false, settings.connection_timeout) {
            Ok(_) | Err(FetchError::NoBranch) => {
                brain.heard_from_remote(now);
                fetch_registry_too(brain, r);
            }
            Err(FetchError::Denied(why)) => {
                return Err(Error::RemoteDenied {
                    remote: r.label(),
                    why,
                });
            }
            Err(FetchError::Unreachable(why)) => {
                return Err(Error::Unreachable {
                    remote: r.label(),
                    why,
                });
            }
        }
    }
    let tips = brain.tips(remote.as_ref());
    // Local changes the remote lacks, and a remote that moved on: no
    // repair built on one could be published. `bsi sync` joins them.
    if let (Some(l), Some(t), Some(r)) = (tips.local, tips.tracking, &remote)
        && !brain.git.is_ancestor(l, t)?
        && !brain.git.is_ancestor(t, l)?
    {
        return Err(Error::RepairNeedsSync {
            branch: brain.branch.clone(),
            remote: r.label(),
        });
    }
    let tip = base_of(brain, tips)?.ok_or_else(|| brain.missing_on(remote.as_ref()))?;
    Ok(Raw {
        tip,
        text: brain.text_at(tip)?,
    })
}

/// The commit a write builds on, without parsing: the remote as last
/// fetched, unless the local branch holds commits it lacks.
fn base_of(brain: &Brain, tips: Tips) -> Result<Option<Oid>> {
    Ok(match (tips.local, tips.tracking) {
        (l, None) => l,
        (None, t) => t,
        (Some(l), Some(t)) if brain.git.is_ancestor(l, t)? => Some(t),
        (l, _) => l,
    })
}

/// Writes `registry` (a text edited by hand, parsed by the caller) on the
/// commit `read` was read from, under the writer lock, and publishes it by
/// the same compare-and-swap as every write: refused, with nothing
/// written, when the registry moved since it was read (here or on the
/// remote) or the remote cannot be reached. With `root`, the same commit
/// puts [`ROOT_FILE`] back to the brain root the branch keeps (`None`
/// inside: no file, the work tree root).
pub fn replace(
    brain: &Brain,
    settings: &Settings,
    opts: Options,
    read: &Raw,
    registry: Registry,
    message: &str,
    root: Option<Option<&str>>,
) -> Result<Applied<()>> {
    let remote = settings.remote()?;
    let _lock = brain.writer("repair")?;
    brain.ensure_branch_free()?;
    let moved = || Error::RepairRaced {
        branch: brain.branch.clone(),
    };
    let tips = brain.tips(remote.as_ref());
    if base_of(brain, tips)? != Some(read.tip) {
        return Err(moved());
    }
    let (commit, registry) = match root {
        None => commit_on(brain, Some(read.tip), registry, message, None)?,
        Some(root) => {
            let text = root.filter(|r| !r.is_empty()).map(|r| format!("{r}\n"));
            let files = [
                (BRANCH_FILE, Some(registry.text().as_bytes())),
                (ROOT_FILE, text.as_deref().map(str::as_bytes)),
            ];
            let commit = brain.git.commit_files(Some(read.tip), &files, message)?;
            (commit, registry)
        }
    };
    let landed = match remote {
        None => Landed::Local,
        Some(remote) => {
            let p = Publisher::new(brain, settings, remote, opts);
            match p.remote.push(&brain.workdir, commit, p.conn) {
                Push::Pushed => {
                    p.pushed(tips, commit)?;
                    Landed::Published
                }
                Push::Lost => return Err(moved()),
                Push::Refused(why) => {
                    return Err(Error::RemoteRefused {
                        remote: p.remote.label(),
                        why,
                    });
                }
                Push::Denied(why) => return Err(p.denied(why)),
                Push::Unreachable(why) => {
                    return Err(Error::Unreachable {
                        remote: p.remote.label(),
                        why,
                    });
                }
            }
        }
    };
    move_local(brain, commit, tips.local, message)?;
    brain.refresh_copy(&registry);
    Ok(Applied {
        report: (),
        commit: Some(commit),
        landing: Landing::new(landed, registry),
    })
}

/// Plans and writes a change like [`apply`], sharing the write with the
/// other writers of the clone waiting for the writer lock: `job` is filed
/// as a request before the wait; whoever holds the lock plans every
/// request waiting, in arrival order, on one tip (each with its own
/// outcome: a refused one refuses no other), commits them as a chain and
/// publishes them with one push. Each writer then reads its own outcome
/// by planning again with `plan` on the registry its request was decided
/// on. `job` must plan what `plan` does; `from` is where its writer knows
/// the request stands (`Planned`, or `Refused` for a waiter planning
/// again), and each move of it here goes through the write machine. `None`
/// when `stop` said to give up before any holder took the request: nothing
/// was written. A bounded write (an agent tool's hook) goes alone, as
/// [`apply`].
pub(crate) fn apply_job<R>(
    brain: &Brain,
    settings: &Settings,
    opts: Options,
    (job, from, stop): (&Job, State, &dyn Fn() -> bool),
    mut plan: impl FnMut(&Registry) -> Result<Plan<R>>,
) -> Result<Option<Applied<R>>> {
    if opts.bound.is_some() {
        return apply(brain, settings, opts, plan).map(Some);
    }
    let remote = settings.remote()?;
    // The writers of the clone meet here, or those of every clone of this
    // machine that shares a remote on its disk.
    let mut meeting = brain.meeting(remote.as_ref());
    let id = requests::new_id();
    let mut filed_late = false;
    // Where the request stands, as this writer knows it.
    let filed = match meeting.requests.file(&id, job, from) {
        // The disk of the place shared by the clones of this machine does
        // not answer: this clone's writers meet in it alone from now on.
        // Filed again under the same id: if the late filing lands there
        // after all, the holder that finds it finds this id carried out.
        Err(e) if meeting.is_shared() => {
            brain.meet_alone(&e.to_string());
            meeting = brain.meeting(remote.as_ref());
            filed_late = true;
            meeting.requests.file(&id, job, from)?
        }
        filed => filed?,
    };
    let requests = &meeting.requests;
    // Whatever happens from here, the request's files go with this writer.
    let _filed = Filed(requests, &id);
    // A holder that carried the request out recorded its outcome before it
    // let go of the lock: read at once, without waiting in turn for the
    // lock behind every other writer it carried out.
    let done = || matches!(requests.standing(&id), Standing::Done(_));
    let mut lock = match meeting.queue_or_stop(brain, "write", &|| stop() || done())? {
        Some(lock) => Some(lock),
        None => match requests.withdraw(&id, Event::Stop) {
            State::Withdrawn => return Ok(None),
            _ if done() => None,
            // A holder took it already: its outcome comes with the lock.
            _ => Some(meeting.queue(brain, "write")?),
        },
    };
    if let Err(e) = brain.ensure_branch_free() {
        // Withdrawn before the lock goes: no later holder carries it out.
        requests.withdraw(&id, Event::Withdraw);
        return Err(e);
    }
    // A request a holder took and sent back, or took and died with, is
    // its writer's again: planned, carried out by itself.
    let sent_back = || writes::step(State::Gathered, Event::Lose);
    let (recorded, own) = match requests.standing(&id) {
        Standing::Done(text) => match serde_json::from_str::<Outcome>(&text) {
            Ok(o) if o.landed != AGAIN => (Some(o), State::Gathered),
            // Sent back by a holder whose write failed (maybe after its
            // push), or unreadable: it may have landed all the same. What
            // follows fetches, and may write: under the lock.
            _ => {
                if lock.is_none() {
                    lock = Some(meeting.queue(brain, "write")?);
                }
                let o = carried_out(brain, settings, remote.as_ref(), opts, &id)?;
                (o, sent_back())
            }
        },
        // The holder that took it died at work: it may have landed.
        Standing::Taken => (
            carried_out(brain, settings, remote.as_ref(), opts, &id)?,
            sent_back(),
        ),
        Standing::Waiting | Standing::Gone => (None, filed),
    };
    if let Some(o) = recorded {
        drop(lock);
        if let (Some(h), Some(alive)) = (job.handoff(), &o.handing) {
            h.decided.set(alive.clone());
        }
        // Carried out by a holder of another clone: the commits it names
        // come with a fetch (in process: the remote is on this disk).
        let missing = [&o.after, &o.base_commit]
            .into_iter()
            .flatten()
            .any(|c| oid(c).is_ok_and(|c| !brain.git.has_object(c)));
        if missing && let Some(r) = &remote {
            let _ = local_remote::fetch(&brain.workdir, r, false, settings.connection_timeout);
        }
        let registry = match o.after.as_deref() {
            Some(after) => brain.judged(brain.registry_at(oid(after)?, None)?),
            None => brain.view(remote.as_ref())?.registry,
        };
        return replay(brain, remote.as_ref(), &o, registry, &mut plan).map(Some);
    }
    // This writer holds the lock: it carries out its own request and
    // every one waiting.
    let lock = match lock {
        Some(lock) => lock,
        None => meeting.queue(brain, "write")?,
    };
    // Writing from this clone: its own writer lock too (the meeting's
    // first, always, so no two writers wait for each other).
    let clone_lock = if meeting.is_shared() {
        Some(brain.writer("write")?)
    } else {
        None
    };
    // Still filed: this writer, holding the lock, gathers it.
    let own = match own {
        State::Filed => requests.take_own(&id),
        own => own,
    };
    let mut jobs = vec![(id.clone(), job.clone())];
    jobs.extend(gathered(requests));
    jobs.sort_by(|a, b| a.0.cmp(&b.0));
    let served = match &remote {
        None => local_batch(brain, settings.history_keep, &jobs, &id),
        // Those filed while the holder planned go in its push too.
        Some(r) => {
            let mut p = Publisher::new(brain, settings, r.clone(), opts);
            p.shared = meeting.is_shared();
            p.filed_late = filed_late;
            p.run_batch((&mut jobs, &|| gathered(requests)), (&id, own))
        }
    };
    let again = serde_json::to_string(&Outcome::again()).unwrap_or_default();
    let batch = match served {
        Ok(batch) => batch,
        Err(e) => {
            // Each writer carries out its own request and hears its own
            // error.
            for (other, _) in jobs.iter().filter(|(j, _)| *j != id) {
                requests.finish(other, &again);
            }
            return Err(e);
        }
    };
    let mut own = None;
    for ((j, job), mut o) in jobs.iter().zip(batch.outcomes) {
        o.handing = job.handoff().and_then(|h| h.decided.get());
        if *j == id {
            own = Some(o);
        } else {
            requests.finish(
                j,
                &serde_json::to_string(&o).unwrap_or_else(|_| again.clone()),
            );
        }
    }
    drop(clone_lock);
    drop(lock);
    let own = own.unwrap_or_else(Outcome::again);
    let mut applied = replay(brain, remote.as_ref(), &own, batch.registry, &mut plan)?;
    if own.commit.is_some() {
        let landing = &mut applied.landing;
        landing.superseded = batch.superseded;
        if !batch.published.is_empty() {
            landing.collisions = conflict::collisions(&landing.registry, &brain.sections())
                .into_iter()
                .map(|(a, b)| (a.clone(), b.clone()))
                .collect();
            landing.published = batch.published;
        }
    }
    Ok(Some(applied))
}

/// Moves each of `ids` by the event `event` names for it, through the
/// write machine ([`writes::Ledger::step`]): a move it does not allow is a
/// bug of this room, caught by the tests; the request stays where it
/// stood, and what it may become is still the machine's to say.
fn machine(ledger: &mut writes::Ledger, ids: &[&str], event: impl Fn(&str) -> Event) {
    for id in ids {
        ledger.step(id, event(id));
    }
}

/// Brings the requests filed since a holder took those waiting.
type More<'a> = &'a dyn Fn() -> Vec<(String, Job)>;

/// How long a holder that found other writers' requests waiting waits
/// for the next to arrive…
const GATHER: Duration = Duration::from_millis(8);
/// …and at most in all.
const GATHER_MOST: Duration = Duration::from_millis(60);

/// The requests waiting, taken. Writers of a clone that start together
/// (agents sent off at once) file their requests a few milliseconds apart:
/// a holder that finds one waiting, or another writer marked arriving
/// ([`Requests::arrive`]), takes those that keep coming, each within
/// [`GATHER`] of the one before or while one is arriving, and for
/// [`GATHER_MOST`] at most, so one push carries the burst rather than the
/// late ones waiting for a push of their own. A writer alone finds none
/// and never waits.
fn gathered(requests: &Requests) -> Vec<(String, Job)> {
    let mut jobs = requests.take_waiting();
    if jobs.is_empty() && !requests.arriving() {
        return jobs;
    }
    let start = Instant::now();
    let mut last = start;
    while (last.elapsed() < GATHER || requests.arriving()) && start.elapsed() < GATHER_MOST {
        std::thread::sleep(Duration::from_millis(2));
        let more = requests.take_waiting();
        if !more.is_empty() {
            last = Instant::now();
            jobs.extend(more);
        }
    }
    jobs
}

/// Removes a request's files once its writer is done with it.
struct Filed<'a>(&'a Requests, &'a str);

impl Drop for Filed<'_> {
    fn drop(&mut self) {
        self.0.forget(self.1);
    }
}

/// The outcome that sends a request back to its own writer.
const AGAIN: &str = "again";

/// Where a shared write left one request, as the writer that carried it
/// out records it for the request's own writer.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Outcome {
    /// `published`, `local`, `unchanged`, `pending`, `as-last-fetched`, or
    /// [`AGAIN`]: not carried out, its writer carries it out itself.
    landed: String,
    /// Why the remote could not be reached (`pending`, `as-last-fetched`).
    why: Option<String>,
    /// The commit that carries the request out, when one was written.
    commit: Option<String>,
    /// The commit whose registry the request was planned on…
    base_commit: Option<String>,
    /// …or that registry's text, when no commit holds it (pending changes
    /// joined with the remote's).
    base_text: Option<String>,
    /// The registry branch's tip the write left.
    after: Option<String>,
    /// For a close that may hand over to the queue: the waiters the write
    /// was decided to hand over to ([`crate::claims::close::Decided`]), so
    /// its writer's report is planned on the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    handing: Option<Vec<String>>,
}

impl Outcome {
    /// Carried out by `commit` (planned on its `parent`), the branch at
    /// `after`: `landed` as [`Outcome::landed`] reads it.
    fn carried_by(landed: &str, (commit, parent): (Oid, Option<Oid>), after: Oid) -> Outcome {
        Outcome {
            landed: landed.into(),
            why: None,
            commit: Some(commit.to_string()),
            base_commit: parent.map(|p| p.to_string()),
            base_text: None,
            after: Some(after.to_string()),
            handing: None,
        }
    }

    fn again() -> Outcome {
        Outcome {
            landed: AGAIN.into(),
            why: None,
            commit: None,
            base_commit: None,
            base_text: None,
            after: None,
            handing: None,
        }
    }

    fn landed(&self, remote: Option<&Remote>) -> Landed {
        let unreached = || Unreached {
            remote: remote.map(Remote::label).unwrap_or_default(),
            why: self.why.clone().unwrap_or_default(),
        };
        match self.landed.as_str() {
            "published" => Landed::Published,
            "local" => Landed::Local,
            "pending" => Landed::Pending(unreached()),
            "as-last-fetched" => Landed::AsLastFetched(unreached()),
            _ => Landed::Unchanged,
        }
    }
}

/// The registry a request was planned on.
#[derive(Clone)]
enum Base {
    Commit(Oid),
    Text(String),
}

fn oid(s: &str) -> Result<Oid> {
    Ok(Oid::from_str(s)?)
}

/// A request's report, read by planning it again on the registry the
/// writer that carried it out planned it on: the same plan on the same
/// input decides the same (a refusal is the same error again).
fn replay<R>(
    brain: &Brain,
    remote: Option<&Remote>,
    o: &Outcome,
    registry: Registry,
    plan: &mut impl FnMut(&Registry) -> Result<Plan<R>>,
) -> Result<Applied<R>> {
    let base = match (&o.base_commit, &o.base_text) {
        (Some(c), _) => brain.registry_at(oid(c)?, None)?,
        (None, Some(t)) => brain.parse(t.clone())?,
        (None, None) => registry.clone(),
    };
    let report = match plan(&brain.judged(base))? {
        Plan::Write { report, .. } | Plan::Keep(report) => report,
    };
    Ok(Applied {
        report,
        commit: o.commit.as_deref().map(oid).transpose()?,
        landing: Landing::new(o.landed(remote), registry),
    })
}

/// After the holder that took request `id` died at work: whether a
/// commit of the registry branch carries it out (fetched first, as its
/// push may have landed), as its outcome.
fn carried_out(
    brain: &Brain,
    settings: &Settings,
    remote: Option<&Remote>,
    opts: Options,
    id: &str,
) -> Result<Option<Outcome>> {
    if let Some(r) = remote {
        let _ = Publisher::new(brain, settings, r.clone(), opts).fetch()?;
    }
    let tips = brain.tips(remote);
    for (tip, landed) in [(tips.tracking, "published"), (tips.local, "pending")] {
        let Some(tip) = tip else { continue };
        let landed = if remote.is_none() { "local" } else { landed };
        for c in brain.git.recent(tip, 256)? {
            if job::carries(&c.message, id) {
                let mut o = Outcome::carried_by(landed, (c.id, c.parent), tip);
                o.why = (landed == "pending")
                    .then(|| "the write that carried it out ended before its push".into());
                return Ok(Some(o));
            }
        }
    }
    Ok(None)
}

/// How many times, and for how long at least, a writer lets the writer
/// whose request came first carry out its own, before it does.
const FOLLOWS: u32 = 6;
const FOLLOW_FOR: Duration = Duration::from_secs(1);

/// The pause before a writer that lets another carry out its request
/// fetches again: a few milliseconds when the remote is read on this disk,
/// where a look costs no process; else half of this writer's own last
/// push (`exchange`), between [`FOLLOW_PAUSE_MIN`] and
/// [`FOLLOW_PAUSE_MAX`], spread so that followers do not look at once
/// (80–160 ms when no push was timed yet).
///
/// The pause is short because the link cancels out: the carrier fetched
/// when this follower did, and a look reads the remote's references as
/// many round trips after its start (the third message of a fetch) as the
/// carrier's push takes to update the branch after its own (the third
/// message of a push). What a look must wait for is the carrier's CPU —
/// its plan, the remote unpacking its push — not the link: a pause of one
/// push's time put the first look a whole round trip or more after the
/// landing over a slow link, and a look that came too early is followed by
/// another as soon.
fn follow_pause(on_disk: bool, exchange: Option<Duration>) -> Duration {
    if on_disk {
        return Duration::from_millis(rand::rng().random_range(15..=30));
    }
    let Some(exchange) = exchange else {
        return Duration::from_millis(rand::rng().random_range(80..=160));
    };
    let base = exchange
        .mul_f64(0.5)
        .clamp(FOLLOW_PAUSE_MIN, FOLLOW_PAUSE_MAX);
    base.mul_f64(rand::rng().random_range(1.0..=1.25))
}

/// The bounds of a follower's pause over a link: no shorter than a look
/// on a fast one, no longer than a carrier's plan and the remote's
/// unpacking of its push take on a loaded machine, whatever the link.
const FOLLOW_PAUSE_MIN: Duration = Duration::from_millis(40);
const FOLLOW_PAUSE_MAX: Duration = Duration::from_millis(250);

/// This batch's requests posted on the remote.
struct Post {
    /// The clone's name there.
    clone: String,
    /// The commit that holds them.
    commit: Oid,
    /// The registry they were posted on (the commit's parent).
    base: Oid,
    /// The requests it holds, posted again with each renewed lease.
    jobs: Vec<(String, Job)>,
    /// Until when its lease runs ([`job::LEASE_FILE`]).
    expires: DateTime<FixedOffset>,
}

/// How long a post's lease runs: renewed while its writer waits, once half
/// of it is gone, so a writer that stops (killed, stopped, cut off) stops
/// vouching for its requests within this time, and no carrier carries them
/// out past it.
const POST_LEASE: Duration = Duration::from_secs(30);

/// Whether a post's lease no longer holds at `now`: it ran out, or its
/// writer is of this host and proven dead by the process table.
fn lapsed(lease: &job::Lease, now: DateTime<FixedOffset>) -> bool {
    lease.expires < now
        || (lease.host == crate::platform::host()
            && crate::store::lock::recorded_alive(&lease.record) == Some(Some(false)))
}

/// Withdraws the posts `named` (each clone's id and the commit it must
/// still be at) from `remote`, taken back by their writer (`event`:
/// [`Event::Withdraw`] as its write ends, [`Event::Stop`] when it is
/// interrupted): where they stand after, as the machine moves them.
/// `Withdrawn`; or still `Posted` when the remote did not let one go (a
/// carrier took it, or the remote did not answer).
fn withdraw_post(
    remote: &Remote,
    workdir: &std::path::Path,
    named: &[(String, String)],
    conn: Duration,
    event: Event,
) -> State {
    if remote.withdraw(workdir, named, conn).is_empty() {
        writes::step(State::Posted, event)
    } else {
        State::Posted
    }
}

/// Requests carried out since a registry: by whom (the commit, its parent).
type Carried = std::collections::HashMap<String, (Oid, Option<Oid>)>;

/// The requests posted on the remote, as a fetch brought them
/// ([`Publisher::posted_seen`]).
#[derive(Default)]
struct Seen {
    /// Every clone's posted requests, with the commit they are at.
    at: Vec<(String, Oid)>,
    /// This batch's, carried out by another writer: their outcomes.
    carried: std::collections::HashMap<String, Outcome>,
    /// Other clones', to carry out.
    theirs: Vec<(String, Job)>,
}

impl Seen {
    /// The outcomes of `jobs`, in their order: carried out by another
    /// writer, else decided in the chain of `ids` (`outcomes` in the same
    /// order), else sent back to their writers.
    fn of(&self, jobs: &[(String, Job)], ids: &[String], outcomes: Vec<Outcome>) -> Vec<Outcome> {
        let mut decided: std::collections::HashMap<&str, Outcome> =
            ids.iter().map(String::as_str).zip(outcomes).collect();
        jobs.iter()
            .map(|(id, _)| {
                self.carried
                    .get(id)
                    .cloned()
                    .or_else(|| decided.remove(id.as_str()))
                    .unwrap_or_else(Outcome::again)
            })
            .collect()
    }
}

/// What a shared write did: an outcome per request, in their order, and
/// what came with the write.
struct Batch {
    outcomes: Vec<Outcome>,
    /// Pending local changes it published.
    published: Vec<String>,
    superseded: Vec<Superseded>,
    /// The registry after it.
    registry: Registry,
}

/// One request planned in a chain.
enum Planned {
    /// Nothing written for it, decided on this registry.
    Kept(Base),
    /// This commit carries it out, planned on this registry.
    Wrote(Oid, Base),
}

/// The requests planned in order on one registry, each on what the one
/// before left, and committed on `parent`: the writes that decide on the
/// registry their group began from what they decide on the registry the
/// writes before them left (the usual case: distinct sessions on distinct
/// scopes) share one commit, so a burst of writes costs the remote three
/// new objects rather than three a write. A write whose decision rests on
/// one before it in the group (a close that lets an open through, a
/// session asking twice) begins a commit of its own, on the one before:
/// every write is carried out by a commit whose parent decides it as it
/// was decided, and its writer reads its report there.
struct Chain {
    planned: Vec<Planned>,
    /// The last commit, and the registry it holds.
    last: Option<(Oid, Registry)>,
    /// A request was refused or changed nothing: decided on an old fetch,
    /// that may be wrong.
    doubt: bool,
}

/// The writes planned since the last commit of a chain, not yet committed.
struct Group {
    /// Where each is in [`Chain::planned`], its message and its session.
    writes: Vec<(usize, String, String)>,
    /// The registry the group begins from (the last commit's).
    from: Registry,
    /// What the writes planned so far leave.
    text: String,
}

/// For a close that may hand over to the queue, decides under the
/// writer lock, once, which of the waiters its writer found alive are
/// still there ([`crate::claims::close::Decided`]): each one's mark taken
/// and its process proven alive now ([`crate::store::Meeting::pin`]), held
/// until the request is done with, so a waiter that stops or runs out of
/// time meanwhile finds its grant. A waiter whose mark is not here (one of
/// another machine, for a posted request) is left to take its grant itself.
pub(crate) fn decide_handoff(brain: &Brain, job: &Job) {
    if let Some(h) = job.handoff() {
        h.decided
            .decide(|| pin_waiters(&brain.meeting(None), &h.alive));
    }
}

/// The waiters of `alive` that are still there, each mark held
/// ([`crate::store::Meeting::pin`]) and handed by the write machine: a
/// waiter whose mark stands is refused and waiting, and the close's
/// decision moves it by [`Event::Hand`]. What the close's write then does
/// with it the waiter reads as it finds its grant
/// ([`writes::handed_over`]).
pub(crate) fn pin_waiters(
    meeting: &crate::store::Meeting,
    alive: &[String],
) -> crate::claims::close::DecidedNow {
    let mut sessions = Vec::new();
    let mut pins: Vec<Box<dyn std::any::Any + Send>> = Vec::new();
    for session in alive {
        if let Some(pin) = meeting.pin(session)
            && writes::step(State::Refused, Event::Hand) == State::Handed
        {
            sessions.push(session.clone());
            pins.push(Box::new(pin));
        }
    }
    (sessions, pins)
}

fn chain(
    brain: &Brain,
    (jobs, own): (&[(String, Job)], &str),
    (registry, base, parent): (&Registry, Base, Option<Oid>),
    keep: Option<usize>,
    first: impl Fn(String) -> String,
) -> Result<Chain> {
    let mut reg = registry.clone();
    let (mut base, mut parent) = (base, parent);
    let mut c = Chain {
        planned: Vec::with_capacity(jobs.len()),
        last: None,
        doubt: false,
    };
    let mut group: Option<Group> = None;
    // Commits the group: the writes it carries out name that commit, and
    // what follows is planned on the registry it holds.
    let flush = |c: &mut Chain,
                 group: &mut Option<Group>,
                 reg: &mut Registry,
                 base: &mut Base,
                 parent: &mut Option<Oid>|
     -> Result<()> {
        let Some(g) = group.take() else {
            return Ok(());
        };
        let messages: Vec<&str> = g.writes.iter().map(|(_, m, _)| m.as_str()).collect();
        let message = job::joined(&messages);
        let message = if c.last.is_none() {
            first(message)
        } else {
            message
        };
        let (commit, committed) = commit_on(brain, *parent, brain.parse(g.text)?, &message, keep)?;
        for (i, _, _) in &g.writes {
            c.planned[*i] = Planned::Wrote(commit, base.clone());
        }
        *base = Base::Commit(commit);
        *parent = Some(commit);
        *reg = brain.judged(committed.clone());
        c.last = Some((commit, committed));
        Ok(())
    };
    for (id, job) in jobs {
        decide_handoff(brain, job);
        let mut planned = job.plan(&reg);
        if let (Some(g), Ok(Plan::Write { text, message, .. })) = (&group, &planned)
            && text != reg.text()
        {
            // Decided on the group's first registry as on this one, or
            // carried out by a commit of its own.
            let alike = g.writes.iter().all(|(_, _, s)| s != job.session())
                && matches!(job.plan(&g.from),
                    Ok(Plan::Write { message: m, .. }) if m == *message);
            if !alike {
                flush(&mut c, &mut group, &mut reg, &mut base, &mut parent)?;
                planned = job.plan(&reg);
            }
        }
        // A request decided on writes not yet committed is read again on
        // what they leave.
        let here = match &group {
            Some(g) => Base::Text(g.text.clone()),
            None => base.clone(),
        };
        match planned {
            Err(e) => {
                c.doubt |= e.is_refusal();
                c.planned.push(Planned::Kept(here));
            }
            Ok(Plan::Keep(())) => {
                c.doubt = true;
                c.planned.push(Planned::Kept(here));
            }
            Ok(Plan::Write { text, .. }) if text == reg.text() => {
                c.planned.push(Planned::Kept(here));
            }
            Ok(Plan::Write { text, message, .. }) => {
                // Another writer's request names itself: found in the
                // history, it is never carried out twice. The holder's own
                // needs no name (its writer is here to know).
                let message = if id == own {
                    message
                } else {
                    job::tagged(&message, id)
                };
                let g = group.get_or_insert_with(|| Group {
                    writes: Vec::new(),
                    from: reg.clone(),
                    text: String::new(),
                });
                g.writes
                    .push((c.planned.len(), message, job.session().to_string()));
                g.text.clone_from(&text);
                c.planned.push(Planned::Kept(here));
                reg = brain.judged(brain.parse(text)?);
            }
        }
    }
    flush(&mut c, &mut group, &mut reg, &mut base, &mut parent)?;
    Ok(c)
}

impl Chain {
    /// The outcomes: `wrote` for a request written, `kept` for the others.
    fn outcomes(self, wrote: &Landed, kept: &Landed) -> (Vec<Outcome>, Option<(Oid, Registry)>) {
        let after = self.last.as_ref().map(|(c, _)| c.to_string());
        let word = |l: &Landed| match l {
            Landed::Local => "local",
            Landed::Published => "published",
            Landed::Unchanged => "unchanged",
            Landed::AsLastFetched(_) => "as-last-fetched",
            Landed::Pending(_) => "pending",
        };
        let why = |l: &Landed| match l {
            Landed::AsLastFetched(u) | Landed::Pending(u) => Some(u.why.clone()),
            _ => None,
        };
        let outcomes = self
            .planned
            .into_iter()
            .map(|p| {
                let (commit, base, landed) = match p {
                    Planned::Kept(b) => (None, b, kept),
                    Planned::Wrote(c, b) => (Some(c.to_string()), b, wrote),
                };
                let (base_commit, base_text) = match base {
                    Base::Commit(c) => (Some(c.to_string()), None),
                    Base::Text(t) => (None, Some(t)),
                };
                Outcome {
                    landed: word(landed).into(),
                    why: why(landed),
                    commit,
                    base_commit,
                    base_text,
                    after: after.clone(),
                    handing: None,
                }
            })
            .collect();
        (outcomes, self.last)
    }
}

/// A shared write in a brain without remote: the chain on the local branch.
fn local_batch(brain: &Brain, keep: usize, jobs: &[(String, Job)], own: &str) -> Result<Batch> {
    let tips = brain.tips(None);
    let view = brain.view_of(tips, None)?;
    let base = match tips.local {
        Some(l) => Base::Commit(l),
        None => Base::Text(view.registry.text().to_string()),
    };
    let c = chain(
        brain,
        (jobs, own),
        (&view.registry, base, tips.local),
        Some(keep),
        |m| m,
    )?;
    let (outcomes, last) = c.outcomes(&Landed::Local, &Landed::Local);
    let registry = match last {
        Some((commit, registry)) => {
            move_local(brain, commit, tips.local, "bsi: shared write")?;
            registry
        }
        None => view.registry,
    };
    brain.refresh_copy(&registry);
    Ok(Batch {
        outcomes,
        published: Vec::new(),
        superseded: Vec::new(),
        registry,
    })
}

fn local<R>(
    brain: &Brain,
    keep: usize,
    plan: &mut impl FnMut(&Registry) -> Result<Plan<R>>,
) -> Result<Applied<R>> {
    let tips = brain.tips(None);
    let view = brain.view_of(tips, None)?;
    match plan(&view.registry)? {
        Plan::Keep(report) => {
            brain.refresh_copy(&view.registry);
            Ok(Applied {
                report,
                commit: None,
                landing: Landing::new(Landed::Local, view.registry),
            })
        }
        Plan::Write {
            text,
            message,
            report,
        } => commit_locally(
            brain,
            tips,
            tips.local,
            (text, message, report),
            Some(keep),
            Landed::Local,
        ),
    }
}

/// Commits a plan's registry on `parent` and moves the local branch to it
/// (from where `tips` saw it): a brain without remote, or one offline.
fn commit_locally<R>(
    brain: &Brain,
    tips: Tips,
    parent: Option<Oid>,
    (text, message, report): (String, String, R),
    keep: Option<usize>,
    landed: Landed,
) -> Result<Applied<R>> {
    let (commit, registry) = commit_on(brain, parent, brain.parse(text)?, &message, keep)?;
    move_local(brain, commit, tips.local, &message)?;
    brain.refresh_copy(&registry);
    Ok(Applied {
        report,
        commit: Some(commit),
        landing: Landing::new(landed, registry),
    })
}

/// Commits `reg` on `parent`. With `keep`, old history rows beyond it
/// move to the archive files of the registry branch in the same commit
/// ([`archive`]); the registry that was committed is returned. Archiving is
/// only done on a commit whose parent is the branch everyone shares (the
/// remote's tip, or the local branch of a brain without remote): an offline
/// commit never archives, so no archive file can be left behind on a side
/// branch while the merge by rows drops its rows from the table.
fn commit_on(
    brain: &Brain,
    parent: Option<Oid>,
    reg: Registry,
    message: &str,
    keep: Option<usize>,
) -> Result<(Oid, Registry)> {
    let split = keep.and_then(|k| archive::split(&reg, k));
    let (reg, archived, message) = match split {
        None => (reg, Vec::new(), message.to_string()),
        Some(split) => {
            let mut files = Vec::with_capacity(split.moved.len());
            let mut rows = 0;
            for (month, moved) in &split.moved {
                let path = archive::archive_path(month);
                let existing = match parent {
                    Some(p) => brain
                        .git
                        .file_at(p, &path)?
                        .map(|b| String::from_utf8_lossy(&b).into_owned()),
                    None => None,
                };
                rows += moved.lines().count();
                files.push((
                    path,
                    archive::append(existing.as_deref(), &reg, month, moved),
                ));
            }
            let names: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
            let message = with_note(
                message,
                &format!(
                    "Archives {rows} old history row(s) to {}.",
                    names.join(", ")
                ),
            );
            (brain.parse(split.kept)?, files, message)
        }
    };
    let mut files: Vec<(&str, Option<&[u8]>)> = vec![(BRANCH_FILE, Some(reg.text().as_bytes()))];
    files.extend(
        archived
            .iter()
            .map(|(p, t)| (p.as_str(), Some(t.as_bytes()))),
    );
    // The branch's first commit records a brain root in a subdirectory.
    let root = parent.map_or_else(|| brain.root_record(), |_| None);
    if let Some(root) = &root {
        files.push((ROOT_FILE, Some(root.as_bytes())));
    }
    let commit = brain.git.commit_files(parent, &files, &message)?;
    fault("after-commit");
    Ok((commit, reg))
}

/// `message` with a paragraph added before its trailers.
fn with_note(message: &str, note: &str) -> String {
    match message.rsplit_once("\n\n") {
        Some((body, trailers)) => format!("{body}\n\n{note}\n\n{trailers}"),
        None => format!("{message}\n\n{note}\n"),
    }
}

fn move_local(brain: &Brain, to: Oid, expected: Option<Oid>, message: &str) -> Result<()> {
    brain.git.move_ref(
        &brain.local_ref(),
        to,
        expected,
        message.lines().next().unwrap_or("bsi"),
    )?;
    fault("after-branch");
    Ok(())
}

/// What a plan decided, on one view.
enum Decided<R> {
    /// Plan again, on a fresh fetch.
    Again,
    /// Nothing to write: this is the outcome.
    Done(Applied<R>),
    /// Write this.
    Write {
        text: String,
        message: String,
        report: R,
        view: View,
    },
}

/// How one push ended.
enum Step<R> {
    Landed(Box<Applied<R>>),
    Lost,
    Unreachable(String),
}

struct Publisher<'b> {
    brain: &'b Brain,
    remote: Remote,
    opts: Options,
    start: Instant,
    /// How long pushes that lost a race are retried.
    budget: Duration,
    /// How long one fetch or push may take, apart from the budget.
    conn: Duration,
    /// A bounded write: the budget is a hard limit on every fetch and push
    /// together, and running out of it keeps the change locally.
    bounded: bool,
    keep: usize,
    fetched: bool,
    attempts: u32,
    /// Fetches bring the write requests posted on the remote.
    requests: bool,
    /// The last fetch read the remote's repository on this disk, in
    /// process (fetching again costs no process), with the posts of write
    /// requests it read there.
    on_disk: Option<Vec<local_remote::Post>>,
    /// The batch holds requests of writers of other clones of this machine
    /// ([`crate::store::Meeting`]): what cannot be published is not kept
    /// in this clone for them.
    shared: bool,
    /// This writer's own request was filed where the clones of this
    /// machine meet too, too late: that filing may still be carried out
    /// there ([`Publisher::carried_already`]).
    filed_late: bool,
    /// How long this writer's last push took to answer: what one exchange
    /// with the remote costs now, from here (the pause before a follower
    /// looks again is set by it).
    exchange: Option<Duration>,
}

impl<'b> Publisher<'b> {
    fn new(brain: &'b Brain, settings: &Settings, remote: Remote, opts: Options) -> Self {
        Publisher {
            brain,
            remote,
            opts,
            start: Instant::now(),
            budget: opts.bound.map_or(settings.publish_timeout, |b| {
                b.remote.min(settings.publish_timeout)
            }),
            conn: settings.connection_timeout,
            bounded: opts.bound.is_some(),
            keep: settings.history_keep,
            fetched: false,
            attempts: 0,
            requests: false,
            on_disk: None,
            shared: false,
            filed_late: false,
            exchange: None,
        }
    }

    /// [`create`] with a remote.
    fn create(mut self, registry: Registry, message: &str, offline_ok: bool) -> Result<Created> {
        let brain = self.brain;
        let offline = self.fetch()?.err();
        if let (Some(why), false) = (&offline, offline_ok) {
            return Err(Error::Unreachable {
                remote: self.remote.label(),
                why: why.clone(),
            });
        }
        let tips = brain.tips(Some(&self.remote));
        if tips.local.is_some() || tips.tracking.is_some() {
            return Ok(Created::Exists(brain.view_of(tips, Some(&self.remote))?));
        }
        let (commit, registry) = commit_on(brain, None, registry, message, None)?;
        let landed = if let Some(why) = offline {
            Landed::Pending(self.unreached(why))
        } else {
            match self.remote.push(&brain.workdir, commit, self.conn) {
                Push::Pushed => {
                    self.pushed(tips, commit)?;
                    Landed::Published
                }
                // Another clone made the registry a moment ago: theirs
                // is the registry (a few fetches, within the budget).
                Push::Lost => {
                    self.attempts += 1;
                    for retry in 1..=3 {
                        std::thread::sleep(backoff(retry).min(self.remaining()));
                        if self.fetch()?.is_ok() {
                            break;
                        }
                    }
                    let tips = brain.tips(Some(&self.remote));
                    return match tips.tracking {
                        Some(_) => Ok(Created::Exists(brain.view_of(tips, Some(&self.remote))?)),
                        None => Err(Error::Busy {
                            remote: self.remote.label(),
                            attempts: self.attempts,
                            waited_ms: u64::try_from(self.start.elapsed().as_millis())
                                .unwrap_or(u64::MAX),
                        }),
                    };
                }
                Push::Refused(why) => {
                    return Err(Error::RemoteRefused {
                        remote: self.remote.label(),
                        why,
                    });
                }
                Push::Denied(why) => return Err(self.denied(why)),
                Push::Unreachable(why) if offline_ok => Landed::Pending(self.unreached(why)),
                Push::Unreachable(why) => {
                    return Err(Error::Unreachable {
                        remote: self.remote.label(),
                        why,
                    });
                }
            }
        };
        move_local(brain, commit, None, message)?;
        Ok(Created::Made(Applied {
            report: (),
            commit: Some(commit),
            landing: Landing::new(landed, registry),
        }))
    }

    /// Whether the remote-tracking copy is known to be behind before a
    /// write plans on it: there is none, or the remote is on this disk and
    /// its branch is elsewhere (read from its files: a clone of this
    /// machine wrote since), so a fetch costs less than the race the push
    /// would lose.
    fn behind(&self) -> bool {
        let tracking = self.brain.tips(Some(&self.remote)).tracking;
        tracking.is_none()
            || local_remote::branch_tip(&self.brain.git, &self.remote, self.conn.min(FETCH_TIMEOUT))
                .is_some_and(|tip| Some(tip) != tracking)
    }

    /// After a push of `commit` landed: the remote answered, and the
    /// remote-tracking reference takes it (unless a fetch did already).
    fn pushed(&self, tips: Tips, commit: Oid) -> Result<()> {
        let brain = self.brain;
        fault("after-push");
        brain.heard_from_remote(self.opts.now);
        let tracking = self.remote.tracking_ref();
        if brain.git.ref_target(&tracking) != Some(commit) {
            match brain
                .git
                .move_ref(&tracking, commit, tips.tracking, "bsi: pushed")
            {
                Ok(()) | Err(Error::Moved(_)) => {}
                Err(e) => return Err(e),
            }
        }
        fault("after-tracking");
        Ok(())
    }

    fn run<R>(mut self, plan: &mut impl FnMut(&Registry) -> Result<Plan<R>>) -> Result<Applied<R>> {
        let brain = self.brain;
        if (self.opts.fresh || self.behind())
            && let Err(why) = self.fetch()?
        {
            return self.offline(plan, why);
        }
        loop {
            let tips = brain.tips(Some(&self.remote));
            let view = brain.view_of(tips, Some(&self.remote))?;
            match self.decide(plan, view)? {
                Decided::Again => {}
                Decided::Done(applied) => return Ok(applied),
                Decided::Write {
                    text,
                    message,
                    report,
                    view,
                } => match self.publish(tips, &view, text, message, report)? {
                    Step::Landed(applied) => return Ok(*applied),
                    Step::Lost => {
                        if let Some(why) = self.after_lost_race()? {
                            return self.offline(plan, why);
                        }
                    }
                    Step::Unreachable(why) => return self.offline(plan, why),
                },
            }
        }
    }

    /// [`Publisher::run`] for the requests of a shared write: planned in
    /// order on the remote's last fetched tip, committed ([`chain`]), the
    /// last commit pushed; a lost race plans them all again on the new tip.
    ///
    /// Writers of other clones share pushes too: the first push also posts
    /// the requests on the remote ([`crate::git_cli::REQUESTS`], one
    /// reference per clone), and once a race is lost every fetch brings
    /// those other clones posted. Whichever writer wins the next race
    /// carries out every request it saw, its own and theirs, in commits
    /// naming them, and takes them off the remote in the same atomic push.
    /// A request of this batch another writer carried out is found by its
    /// trailer in the registry's history since the registry it was posted
    /// on, and reported from there; requests still posted when this write
    /// ends are withdrawn. Those `more` brings before the first push join
    /// `jobs`.
    fn run_batch(
        mut self,
        (jobs, more): (&mut Vec<(String, Job)>, More<'_>),
        (own, standing): (&str, State),
    ) -> Result<Batch> {
        let mut posted = None;
        // Where each request stands, moved by the write machine only: the
        // writer's own where it knows it stands, the others as found.
        let mut ledger = writes::Ledger::default();
        ledger.found(own, standing);
        let result = self.batch_loop((jobs, more), own, (&mut posted, &mut ledger));
        let settled = match posted {
            None => result,
            Some(post) => self.settle(jobs, own, &post, result),
        };
        // Nothing of this write is posted any more.
        crate::platform::clear_at_interrupt();
        settled
    }

    fn batch_loop(
        &mut self,
        (jobs, more): (&mut Vec<(String, Job)>, More<'_>),
        own: &str,
        (posted, ledger): (&mut Option<Post>, &mut writes::Ledger),
    ) -> Result<Batch> {
        let mut looked = false;
        let brain = self.brain;
        if (self.opts.fresh || self.behind())
            && let Err(why) = self.fetch()?
        {
            return self.offline_batch((jobs, own), why);
        }
        let clone = brain.clone_id();
        let mut no_posts = brain.posts_refused(&self.remote.name);
        let mut follows = 0;
        // Until when the lease of the post a push makes runs.
        let mut expiry = brain.clock();
        let mut following = None;
        loop {
            self.renew(posted);
            let tips = brain.tips(Some(&self.remote));
            let view = brain.view_of(tips, Some(&self.remote))?;
            let mut seen = self.posted_seen(tips.tracking, &clone, posted.as_ref())?;
            seen.carried
                .extend(self.carried_already(tips.tracking, (jobs, own), &seen)?);
            for (id, _) in jobs.iter() {
                ledger.found(id, State::Gathered);
            }
            for (id, _) in &seen.theirs {
                ledger.found(id, State::Posted);
            }
            for id in seen.carried.keys() {
                ledger.landed_elsewhere(id);
            }
            // What the machine lets be carried out: this batch's requests
            // no other writer carried out, and those of other clones, in
            // arrival order.
            let carriable = |(id, _): &&(String, Job)| ledger.may_carry(id);
            let mut all: Vec<(String, Job)> = jobs.iter().filter(carriable).cloned().collect();
            if all.is_empty() {
                // The push that carried them out took them off the remote.
                *posted = None;
                return Ok(self.carried_batch(jobs, &seen, view));
            }
            all.extend(seen.theirs.iter().filter(carriable).cloned());
            all.sort_by(|a, b| a.0.cmp(&b.0));
            // The writer whose request came first carries out every one it
            // sees; the others let it, rather than all planning and pushing
            // the same requests at once, and carry them out themselves if
            // it has not after a few fetches (it may be gone).
            let patient = follows < FOLLOWS
                || following.is_none_or(|since: Instant| since.elapsed() < FOLLOW_FOR);
            if patient
                && all
                    .first()
                    .is_some_and(|(first, _)| !jobs.iter().any(|(id, _)| id == first))
            {
                following.get_or_insert_with(Instant::now);
                follows += 1;
                let pause = follow_pause(self.on_disk.is_some(), self.exchange);
                self.say(&format!(
                    "a writer of another clone came first and carries out the requests it sees; fetching again in {} ms",
                    pause.as_millis()
                ));
                std::thread::sleep(pause.min(self.remaining()));
                // One fetch looks: when nothing moved it reads the tips and
                // takes no pack, as a look alone would (the same exchange),
                // and when the carrier landed it brings what it decided
                // without a second one. A remote on this disk is read in
                // process.
                match self.fetch()? {
                    Ok(()) => continue,
                    Err(why) => return self.offline_batch((jobs, own), why),
                }
            }
            let published = if view.pending {
                brain.pending_changes(tips)?
            } else {
                Vec::new()
            };
            let base = match tips.tracking {
                Some(t) if !view.pending => Base::Commit(t),
                _ => Base::Text(view.registry.text().to_string()),
            };
            let superseded = view.superseded.clone();
            // Every request is named in its commit: the writer that posted
            // it looks for it there.
            let c = chain(
                brain,
                (&all, ""),
                (&view.registry, base, tips.tracking.or(tips.local)),
                Some(self.keep),
                |m| with_published(m, &published, &superseded),
            )?;
            if c.doubt && !self.fetched {
                match self.fetch()? {
                    Ok(()) => continue,
                    Err(why) => return self.offline_batch((jobs, own), why),
                }
            }
            let ids: Vec<String> = all.iter().map(|(id, _)| id.clone()).collect();
            let Some((last, _)) = c.last else {
                let (outcomes, _) = c.outcomes(&Landed::Unchanged, &Landed::Unchanged);
                let k = kept(brain, (), view, Landed::Unchanged);
                return Ok(Batch {
                    outcomes: seen.of(jobs, &ids, outcomes),
                    published: Vec::new(),
                    superseded: k.landing.superseded,
                    registry: k.landing.registry,
                });
            };
            // Writers of the clone that filed their requests while this one
            // planned are planned with it, once, before its first push.
            if !looked && !self.requests {
                looked = true;
                let late = more();
                if !late.is_empty() {
                    jobs.extend(late);
                    jobs.sort_by(|a, b| a.0.cmp(&b.0));
                    continue;
                }
            }
            let conn = match self.conn_now() {
                Ok(conn) => conn,
                Err(why) => return self.offline_batch((jobs, own), why),
            };
            // The first push posts this batch's requests; once a race is
            // lost, a push takes every request posted that it decided on,
            // carried out or not (its writer decides again those not
            // carried out), and the others found carried out already.
            // (A batch posts once, before its first lost race.)
            let first = !self.requests && !no_posts;
            // Only the requests this push writes are posted: a post stays
            // on the remote once its push lands, and a request it refused,
            // or that changed nothing, is named in no commit, so another
            // writer would take it for one still to carry out. Those left
            // out are this writer's to decide again if the push loses.
            let writing: Vec<(String, Job)> = all
                .iter()
                .zip(&c.planned)
                .filter(|((id, _), p)| {
                    matches!(p, Planned::Wrote(..)) && jobs.iter().any(|(j, _)| j == id)
                })
                .map(|(job, _)| job.clone())
                .collect();
            let request = match (first, tips.tracking) {
                (true, Some(t)) if !writing.is_empty() => Some(self.request_commit(&writing, t)?),
                _ => None,
            };
            if let Some((commit, _)) = request {
                // Interrupted from now on, this writer withdraws the post
                // this push may land before it ends.
                self.withdraw_at_interrupt(&clone, commit);
            }
            let request = request.map(|(commit, expires)| {
                expiry = expires;
                commit
            });
            let taken: Vec<(String, String)> = seen
                .at
                .iter()
                .map(|(id, at)| (id.clone(), at.to_string()))
                .collect();
            let request_id = request.map(|r| r.to_string()).unwrap_or_default();
            let posting = match request {
                Some(_) => Posting::Post(&clone, &request_id),
                None => Posting::Take(&taken),
            };
            let wrote: Vec<&str> = all
                .iter()
                .zip(&c.planned)
                .filter(|(_, p)| matches!(p, Planned::Wrote(..)))
                .map(|((id, _), _)| id.as_str())
                .collect();
            machine(ledger, &wrote, |_| Event::Carry);
            let pushing = Instant::now();
            let (push, post_landed) = self.remote.push_with(&brain.workdir, last, posting, conn);
            self.exchange = Some(pushing.elapsed());
            match push {
                Push::Pushed => {
                    machine(ledger, &wrote, |_| Event::Land);
                    // What this push posted is named by the commit that
                    // landed: nothing to withdraw on an interrupt.
                    crate::platform::clear_at_interrupt();
                    self.pushed(tips, last)?;
                    // What this push took is off the remote (a first push
                    // posted nothing yet).
                    *posted = None;
                    move_local(brain, last, tips.local, "bsi: shared write")?;
                    let writes = c
                        .planned
                        .iter()
                        .filter(|p| matches!(p, Planned::Wrote(..)))
                        .count();
                    self.say(&format!(
                        "published {writes} write(s) of {} request(s) with one push on {} after {} lost race(s), {} ms",
                        all.len(),
                        self.remote.label(),
                        self.attempts,
                        self.start.elapsed().as_millis()
                    ));
                    let (outcomes, last) = c.outcomes(&Landed::Published, &Landed::Unchanged);
                    let registry = last.map(|(_, r)| r).unwrap_or(view.registry);
                    brain.refresh_copy(&registry);
                    return Ok(Batch {
                        outcomes: seen.of(jobs, &ids, outcomes),
                        published,
                        superseded,
                        registry,
                    });
                }
                Push::Lost => {
                    // Those this push posted wait on the remote; the others
                    // are this writer's to plan again.
                    let posts = request.is_some() && tips.tracking.is_some();
                    machine(ledger, &wrote, |id| {
                        if posts && writing.iter().any(|(w, _)| w == id) {
                            Event::Post
                        } else {
                            Event::Lose
                        }
                    });
                    if let (Some(commit), Some(base)) = (request, tips.tracking) {
                        // Counted as posted even when git did not say so:
                        // a post whose answer was lost may have landed; it
                        // is withdrawn at the end.
                        *posted = Some(Post {
                            commit,
                            base,
                            clone: clone.clone(),
                            jobs: writing.clone(),
                            expires: expiry,
                        });
                        self.say(&format!(
                            "posted {} request(s) on {} for the next writer to land to carry out{}",
                            writing.len(),
                            self.remote.label(),
                            if post_landed { "" } else { " (not confirmed)" }
                        ));
                        fault(crate::store::lock::POST_FAULT_POINT);
                    }
                    self.requests = true;
                    if let Some(why) = self.after_lost_race()? {
                        return self.offline_batch((jobs, own), why);
                    }
                }
                // A remote whose policy refuses any reference but its
                // branches refuses the whole push for the post: the write
                // goes again without it, and this clone posts no more there.
                Push::Refused(why) if request.is_some() => {
                    machine(ledger, &wrote, |_| Event::Lose);
                    no_posts = true;
                    brain.refuse_posts(&self.remote.name, &why);
                    self.say(&format!(
                        "{} refused the posted requests ({why}); pushing the registry alone, and posting no more there",
                        self.remote.label()
                    ));
                }
                Push::Refused(why) => {
                    return Err(Error::RemoteRefused {
                        remote: self.remote.label(),
                        why,
                    });
                }
                Push::Denied(why) => return Err(self.denied(why)),
                Push::Unreachable(why) => return self.offline_batch((jobs, own), why),
            }
        }
    }

    /// The commit that posts the batch's requests: the jobs in one file
    /// ([`job::POSTED_FILE`]), on the registry they are planned on, with
    /// the lease this writer gives them ([`job::LEASE_FILE`]), and until
    /// when that lease runs.
    fn request_commit(
        &self,
        jobs: &[(String, Job)],
        base: Oid,
    ) -> Result<(Oid, DateTime<FixedOffset>)> {
        let body = job::posted(jobs)?;
        let lease = crate::store::lock::post_lease(POST_LEASE);
        let expires = self.brain.clock()
            + chrono::Duration::from_std(lease).unwrap_or(chrono::Duration::zero());
        let lease = job::lease(
            expires,
            &crate::platform::host(),
            &crate::store::lock::this_process(),
        );
        let commit = self.brain.git.commit_new_tree(
            base,
            &[
                (job::POSTED_FILE, body.as_bytes()),
                (job::LEASE_FILE, lease.as_bytes()),
            ],
            "bsi: write requests",
        )?;
        Ok((commit, expires))
    }

    /// Until this write ends, an interrupt withdraws the post `commit` of
    /// clone `clone` (only while the remote still holds that commit: one a
    /// carrier took stays taken) before the process ends.
    fn withdraw_at_interrupt(&self, clone: &str, commit: Oid) {
        let remote = self.remote.clone();
        let workdir = self.brain.workdir.clone();
        let named = [(clone.to_string(), commit.to_string())];
        let conn = self.conn.min(FETCH_TIMEOUT);
        crate::platform::at_interrupt(Box::new(move || {
            withdraw_post(&remote, &workdir, &named, conn, Event::Stop);
        }));
    }

    /// Renews the lease of this write's post once half of it is gone: the
    /// same requests posted again with a new lease, in place of the post
    /// the remote holds (only while it holds it: a post a carrier took
    /// stays taken, and what it carried out is read from the history). A
    /// renewal that fails leaves the lease to lapse: no carrier carries the
    /// post out after that, and this writer decides its requests itself.
    fn renew(&self, posted: &mut Option<Post>) {
        let Some(post) = posted.as_mut() else {
            return;
        };
        let half = chrono::Duration::from_std(crate::store::lock::post_lease(POST_LEASE) / 2)
            .unwrap_or(chrono::Duration::zero());
        if post.expires - self.brain.clock() > half {
            return;
        }
        let Ok((commit, expires)) = self.request_commit(&post.jobs, post.base) else {
            return;
        };
        let (old, new) = (post.commit.to_string(), commit.to_string());
        self.withdraw_at_interrupt(&post.clone, commit);
        let conn = self.conn.min(FETCH_TIMEOUT);
        if self
            .remote
            .renew(&self.brain.workdir, &post.clone, (&old, &new), conn)
        {
            self.say(&format!(
                "renewed the lease of the posted request(s) on {}",
                self.remote.label()
            ));
            post.commit = commit;
            post.expires = expires;
        } else {
            // The post is as it was (or taken): withdrawn as it was.
            self.withdraw_at_interrupt(&post.clone, post.commit);
        }
    }

    /// The requests posted on the remote as the last fetch brought them:
    /// this batch's carried out by another writer, found by their trailer
    /// in the registry's history since the registry they were posted on;
    /// other clones' still to carry out (not carried out since theirs, and
    /// not older than the time a writer keeps trying).
    fn posted_seen(&self, tip: Option<Oid>, clone: &str, own: Option<&Post>) -> Result<Seen> {
        let brain = self.brain;
        let mut seen = Seen::default();
        if !self.requests {
            return Ok(seen);
        }
        let Some(tip) = tip else {
            return Ok(seen);
        };
        let mut since: std::collections::HashMap<Oid, Option<Carried>> =
            std::collections::HashMap::new();
        let mut carried_since = |base: Oid| -> Result<Option<Carried>> {
            if let Some(c) = since.get(&base) {
                return Ok(c.clone());
            }
            let c = if base == tip || brain.git.is_ancestor(base, tip)? {
                let mut c = Carried::new();
                for commit in brain.git.log_range(tip, Some(base))? {
                    for id in job::carried(&commit.message) {
                        c.entry(id.to_string())
                            .or_insert((commit.id, commit.parent));
                    }
                }
                Some(c)
            } else {
                None
            };
            since.insert(base, c.clone());
            Ok(c)
        };
        if let Some(post) = own
            && let Some(done) = carried_since(post.base)?
        {
            for (id, by) in done {
                seen.carried
                    .insert(id, Outcome::carried_by("published", by, tip));
            }
        }
        let oldest = self.opts.now
            - chrono::Duration::from_std(self.budget).unwrap_or(chrono::Duration::MAX);
        for post in self.posts()? {
            let (id, at) = (post.clone, post.commit);
            seen.at.push((id.clone(), at));
            if id == clone {
                continue;
            }
            // A request posted on a registry that is not in the branch's
            // history (the branch was moved back since) is not carried out.
            let Some(base) = post.base else {
                continue;
            };
            let Some(done) = carried_since(base)? else {
                continue;
            };
            // A post whose writer no longer vouches for it is not carried
            // out: its lease lapsed, or its writer, of this host, is
            // proven dead (killed after it posted). A post of an earlier
            // bsi, with no lease, is bounded by its requests' time.
            let state = match job::post_lease(&post.files) {
                Some(lease) if lapsed(&lease, brain.clock()) => {
                    writes::step(State::Posted, Event::Lapse)
                }
                _ => State::Posted,
            };
            if !writes::may_carry(state) {
                continue;
            }
            for (jid, j) in job::posted_jobs(&post.files) {
                if !done.contains_key(&jid) && j.time().is_ok_and(|t| t >= oldest) {
                    seen.theirs.push((jid, j));
                }
            }
        }
        Ok(seen)
    }

    /// This batch's requests that a commit of the branch carries out
    /// already, found by their ids in the commits made since the oldest of
    /// them was filed (a minute earlier, for clocks of one machine read a
    /// moment apart): a request whose filing, where the clones of this
    /// machine meet, landed after its writer had stopped waiting for that
    /// disk and carried it out alone under the same id. The writer's own
    /// request (`own`) is looked for only when its filing there was late;
    /// a writer alone reads nothing. A batch of fresh requests reads the
    /// last 32 commits, and those of the last minute.
    fn carried_already(
        &self,
        tip: Option<Oid>,
        (jobs, own): (&[(String, Job)], &str),
        seen: &Seen,
    ) -> Result<Vec<(String, Outcome)>> {
        let Some(tip) = tip else {
            return Ok(Vec::new());
        };
        let open: Vec<&str> = jobs
            .iter()
            .map(|(id, _)| id.as_str())
            .filter(|id| self.filed_late || *id != own)
            .filter(|id| !seen.carried.contains_key(*id))
            .collect();
        let Some(filed) = open.iter().filter_map(|id| requests::filed_at(id)).min() else {
            return Ok(Vec::new());
        };
        // An id's arrival is the system's clock; commits are dated by this
        // brain's (the same, unless a test set it).
        let skew = self.brain.clock().timestamp() - requests::seconds_now();
        let mut found = Vec::new();
        // The last 32 commits whatever their dates (another machine's clock
        // may be behind), then those since the filing.
        for c in self
            .brain
            .git
            .made_since(tip, filed + skew - 60, (32, 256))?
        {
            for id in job::carried(&c.message) {
                if open.contains(&id) && !found.iter().any(|(f, _)| f == id) {
                    let o = Outcome::carried_by("published", (c.id, c.parent), tip);
                    found.push((id.to_string(), o));
                }
            }
        }
        Ok(found)
    }

    /// The posts of write requests on the remote, as the last fetch saw
    /// them: read there, when the remote is on this disk, else from their
    /// local copies (their files: the one of [`job::POSTED_FILE`] and those
    /// under [`job::REQUEST_DIR`]).
    fn posts(&self) -> Result<Vec<local_remote::Post>> {
        if let Some(posts) = &self.on_disk {
            return Ok(posts.clone());
        }
        let git = &self.brain.git;
        let prefix = self.remote.requests_ref("");
        let mut posts = Vec::new();
        for (name, at) in git.refs_under(&prefix) {
            let mut files: Vec<(String, Vec<u8>)> = Vec::new();
            for name in [job::POSTED_FILE, job::LEASE_FILE] {
                if let Some(body) = git.file_at(at, name)? {
                    files.push((name.to_string(), body));
                }
            }
            for (file, body) in git.files_under(at, job::REQUEST_DIR)? {
                files.push((format!("{}/{file}", job::REQUEST_DIR), body));
            }
            posts.push(local_remote::Post {
                clone: name[prefix.len()..].to_string(),
                commit: at,
                base: git.parent_ids(at).first().copied(),
                files,
            });
        }
        Ok(posts)
    }

    /// Every request of the batch was carried out by other writers.
    fn carried_batch(&self, jobs: &[(String, Job)], seen: &Seen, view: View) -> Batch {
        self.say(&format!(
            "carried out by another writer's push on {} after {} lost race(s), {} ms",
            self.remote.label(),
            self.attempts,
            self.start.elapsed().as_millis()
        ));
        let k = kept(self.brain, (), view, Landed::Published);
        Batch {
            outcomes: seen.of(jobs, &[], Vec::new()),
            published: Vec::new(),
            superseded: k.landing.superseded,
            registry: k.landing.registry,
        }
    }

    /// After a batch whose requests are still posted: they are withdrawn.
    /// If they cannot be, another writer took them (or the remote went
    /// away): the registry's history since they were posted says which it
    /// carried out, and a request carried out there is reported so,
    /// whatever this writer decided.
    fn settle(
        &mut self,
        jobs: &[(String, Job)],
        own: &str,
        post: &Post,
        result: Result<Batch>,
    ) -> Result<Batch> {
        let brain = self.brain;
        let conn = self.conn.min(FETCH_TIMEOUT);
        let named = [(post.clone.clone(), post.commit.to_string())];
        // Withdrawn, no carrier carries it out, nor did one before (one
        // that took it took it off the remote).
        let withdrawn = withdraw_post(&self.remote, &brain.workdir, &named, conn, Event::Withdraw);
        if !writes::may_carry(withdrawn)
            || local_remote::fetch(&brain.workdir, &self.remote, false, conn).is_err()
        {
            return result;
        }
        let tips = brain.tips(Some(&self.remote));
        let seen = self.posted_seen(tips.tracking, &post.clone, Some(post))?;
        if seen.carried.is_empty() {
            return result;
        }
        match result {
            Ok(mut batch) => {
                for ((id, _), o) in jobs.iter().zip(batch.outcomes.iter_mut()) {
                    if let Some(c) = seen.carried.get(id) {
                        *o = c.clone();
                    }
                }
                Ok(batch)
            }
            Err(_) if seen.carried.contains_key(own) => {
                let view = brain.view_of(tips, Some(&self.remote))?;
                Ok(self.carried_batch(jobs, &seen, view))
            }
            Err(e) => Err(e),
        }
    }

    /// The remote cannot be reached: the requests' chain goes on the local
    /// branch, pending.
    ///
    /// In a batch shared with other clones, only this writer's own request
    /// is kept here: each other writer is sent back to carry out its own,
    /// so a write held back for the remote is in its own clone.
    fn offline_batch(&self, (all, own): (&[(String, Job)], &str), why: String) -> Result<Batch> {
        let mine: Vec<(String, Job)>;
        let jobs = if self.shared {
            mine = all.iter().filter(|(id, _)| id == own).cloned().collect();
            &mine[..]
        } else {
            all
        };
        let why = self.unreached(why);
        let brain = self.brain;
        let tips = brain.tips(Some(&self.remote));
        let view = brain.view_of(tips, Some(&self.remote))?;
        let parent = base_of(brain, tips)?;
        let base = match parent {
            Some(p) if !view.pending => Base::Commit(p),
            _ => Base::Text(view.registry.text().to_string()),
        };
        let c = chain(
            brain,
            (jobs, own),
            (&view.registry, base, parent),
            None,
            |m| m,
        )?;
        let (outcomes, last) =
            c.outcomes(&Landed::Pending(why.clone()), &Landed::AsLastFetched(why));
        let mut outcomes = outcomes.into_iter();
        let outcomes = all
            .iter()
            .map(|(id, _)| match jobs.iter().any(|(j, _)| j == id) {
                true => outcomes.next().unwrap_or_else(Outcome::again),
                false => Outcome::again(),
            })
            .collect();
        let registry = match last {
            Some((commit, registry)) => {
                move_local(brain, commit, tips.local, "bsi: shared write")?;
                registry
            }
            None => view.registry.clone(),
        };
        brain.refresh_copy(&registry);
        Ok(Batch {
            outcomes,
            published: Vec::new(),
            superseded: view.superseded,
            registry,
        })
    }

    /// Runs the plan on `view`. A refusal, or a plan that writes nothing,
    /// decided on an old fetch may be wrong: it is decided again once on
    /// the remote's present state before it is believed.
    fn decide<R>(
        &mut self,
        plan: &mut impl FnMut(&Registry) -> Result<Plan<R>>,
        view: View,
    ) -> Result<Decided<R>> {
        let brain = self.brain;
        // A place judged lapsed may be kept alive by a record newer than
        // the one last fetched (records only ever extend a place): read
        // again before deciding on it.
        let now = brain.clock();
        if !self.fetched && view.registry.waiters.iter().any(|w| !w.live(now)) {
            return Ok(match self.fetch()? {
                Ok(()) => Decided::Again,
                Err(_) => self.decide_now(plan, view)?,
            });
        }
        self.decide_now(plan, view)
    }

    /// [`Publisher::decide`], with what was read.
    fn decide_now<R>(
        &mut self,
        plan: &mut impl FnMut(&Registry) -> Result<Plan<R>>,
        view: View,
    ) -> Result<Decided<R>> {
        let brain = self.brain;
        let planned = match plan(&view.registry) {
            Err(e) if !self.fetched && e.is_refusal() => {
                return match self.fetch()? {
                    Ok(()) => Ok(Decided::Again),
                    Err(_) => Err(e),
                };
            }
            other => other?,
        };
        Ok(match planned {
            Plan::Keep(report) if !self.fetched => match self.fetch()? {
                Ok(()) => Decided::Again,
                Err(why) => Decided::Done(kept(
                    brain,
                    report,
                    view,
                    Landed::AsLastFetched(self.unreached(why)),
                )),
            },
            Plan::Keep(report) => Decided::Done(kept(brain, report, view, Landed::Unchanged)),
            // A plan that changes nothing only publishes what is pending.
            Plan::Write { text, report, .. } if !view.pending && text == view.registry.text() => {
                Decided::Done(kept(brain, report, view, Landed::Unchanged))
            }
            Plan::Write {
                text,
                message,
                report,
            } => Decided::Write {
                text,
                message,
                report,
                view,
            },
        })
    }

    /// Commits the planned registry on the remote's last fetched tip and
    /// pushes it; once it landed, the remote-tracking and the local branch
    /// take it.
    fn publish<R>(
        &mut self,
        tips: Tips,
        view: &View,
        text: String,
        message: String,
        report: R,
    ) -> Result<Step<R>> {
        let brain = self.brain;
        let registry = brain.parse(text)?;
        let published = if view.pending {
            brain.pending_changes(tips)?
        } else {
            Vec::new()
        };
        // Pending changes published with this one may collide with the
        // remote's claims: found once, here, for `finish` to say.
        let landed = |commit, registry: Registry, published: Vec<String>| {
            let collisions = if published.is_empty() {
                Vec::new()
            } else {
                conflict::collisions(&registry, &brain.sections())
                    .into_iter()
                    .map(|(a, b)| (a.clone(), b.clone()))
                    .collect()
            };
            Applied {
                report,
                commit: Some(commit),
                landing: Landing {
                    landed: Landed::Published,
                    published,
                    registry,
                    collisions,
                    superseded: view.superseded.clone(),
                },
            }
        };
        // The union of pending changes that only reorders the remote's
        // rows is no change: the local branch takes the remote's.
        if let Some(t) = tips.tracking
            && view.pending
            && brain
                .registry_at(t, Some(&self.remote))?
                .same_rows(&registry)
        {
            move_local(brain, t, tips.local, "bsi: adopt the remote registry")?;
            brain.refresh_copy(&registry);
            return Ok(Step::Landed(Box::new(landed(t, registry, published))));
        }
        let message = with_published(message, &published, &view.superseded);
        // On the remote's tip; a remote without the branch yet gets the
        // local history.
        let parent = tips.tracking.or(tips.local);
        let (commit, registry) = commit_on(brain, parent, registry, &message, Some(self.keep))?;
        let conn = match self.conn_now() {
            Ok(conn) => conn,
            Err(why) => return Ok(Step::Unreachable(why)),
        };
        match self.remote.push(&brain.workdir, commit, conn) {
            Push::Pushed => {
                self.pushed(tips, commit)?;
                move_local(brain, commit, tips.local, &message)?;
                self.say(&format!(
                    "published on {} after {} lost race(s), {} ms",
                    self.remote.label(),
                    self.attempts,
                    self.start.elapsed().as_millis()
                ));
                brain.refresh_copy(&registry);
                Ok(Step::Landed(Box::new(landed(commit, registry, published))))
            }
            Push::Lost => Ok(Step::Lost),
            Push::Refused(why) => Err(Error::RemoteRefused {
                remote: self.remote.label(),
                why,
            }),
            Push::Denied(why) => Err(self.denied(why)),
            Push::Unreachable(why) => Ok(Step::Unreachable(why)),
        }
    }

    /// After a push that lost a race: within the time budget, a random
    /// pause, then a fetch of the new tip (`Some(why)` when the remote is
    /// gone meanwhile); past the budget, exit 8.
    fn after_lost_race(&mut self) -> Result<Option<String>> {
        self.attempts += 1;
        if self.bounded && self.remaining().is_zero() {
            // A hook does not wait for the crowd: the change is kept
            // locally, and `bsi sync` publishes it.
            return Ok(Some(format!(
                "{} push(es) lost a race to other writers within {} s",
                self.attempts,
                self.budget.as_secs_f32()
            )));
        }
        if self.start.elapsed() >= self.budget {
            return Err(Error::Busy {
                remote: self.remote.label(),
                attempts: self.attempts,
                waited_ms: u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX),
            });
        }
        let pause = backoff(self.attempts);
        self.say(&format!(
            "push {} lost a race on {}; waiting {} ms, then fetching",
            self.attempts,
            self.remote.label(),
            pause.as_millis()
        ));
        std::thread::sleep(pause.min(self.remaining()));
        // The remote answered the push a moment ago: a fetch that fails now
        // is a server at its connection limit under the same crowd, not a
        // network gone. It is tried again within the budget before the
        // change is kept offline.
        for retry in 1..=3 {
            match self.fetch()? {
                Ok(()) => return Ok(None),
                Err(why) if retry == 3 || self.remaining().is_zero() => return Ok(Some(why)),
                Err(_) => std::thread::sleep(backoff(self.attempts + retry).min(self.remaining())),
            }
        }
        Ok(None)
    }

    fn remaining(&self) -> Duration {
        self.budget.saturating_sub(self.start.elapsed())
    }

    /// How long the next fetch or push may take: the connection timeout,
    /// and in a bounded write no longer than what is left of the budget
    /// (`Err`: nothing is left, the remote is not asked).
    fn conn_now(&self) -> std::result::Result<Duration, String> {
        if !self.bounded {
            return Ok(self.conn);
        }
        let left = self.remaining();
        if left.is_zero() {
            return Err(format!(
                "no answer within the {} s a hook gives the remote",
                self.budget.as_secs_f32()
            ));
        }
        Ok(self.conn.min(left))
    }

    fn say(&self, what: &str) {
        if self.opts.verbose {
            eprintln!("bsi: {what}");
        }
    }

    /// The remote denied access: nothing of this write is kept, since it
    /// could never publish as things are.
    fn denied(&self, why: String) -> Error {
        Error::RemoteDenied {
            remote: self.remote.label(),
            why,
        }
    }

    /// Fetches the registry branch. `Ok(Err)` is why the remote is
    /// unreachable; a remote without the branch is reachable; one that
    /// denies access is an error.
    fn fetch(&mut self) -> Result<Result<(), String>> {
        let conn = match self.conn_now() {
            Ok(conn) => conn,
            Err(why) => return Ok(Err(why)),
        };
        let fetched = local_remote::fetch(&self.brain.workdir, &self.remote, self.requests, conn);
        match &fetched {
            Ok(Fetched::Disk(posts)) => {
                self.say(&format!(
                    "read {} in its repository on this disk{}",
                    self.remote.label(),
                    if self.requests {
                        format!(", with {} post(s) of write requests", posts.len())
                    } else {
                        String::new()
                    }
                ));
                self.on_disk = Some(posts.clone());
            }
            Ok(Fetched::Git) => self.on_disk = None,
            Err(_) => {}
        }
        match fetched {
            Ok(_) | Err(FetchError::NoBranch) => {
                self.fetched = true;
                self.brain.heard_from_remote(self.opts.now);
                fetch_registry_too(self.brain, &self.remote);
                Ok(Ok(()))
            }
            Err(FetchError::Denied(why)) => Err(self.denied(why)),
            Err(FetchError::Unreachable(why)) => {
                self.say(&format!("fetch of {} failed: {why}", self.remote.label()));
                Ok(Err(why))
            }
        }
    }

    /// git's words (from a fetch or a push), with the remote they are about.
    fn unreached(&self, why: String) -> Unreached {
        Unreached {
            remote: self.remote.label(),
            why,
        }
    }

    /// The remote cannot be reached: the change goes on the local branch.
    fn offline<R>(
        &self,
        plan: &mut impl FnMut(&Registry) -> Result<Plan<R>>,
        why: String,
    ) -> Result<Applied<R>> {
        let why = self.unreached(why);
        let brain = self.brain;
        let tips = brain.tips(Some(&self.remote));
        let view = brain.view_of(tips, Some(&self.remote))?;
        match plan(&view.registry)? {
            Plan::Keep(report) => Ok(kept(brain, report, view, Landed::AsLastFetched(why))),
            Plan::Write { text, report, .. } if text == view.registry.text() => {
                Ok(kept(brain, report, view, Landed::AsLastFetched(why)))
            }
            Plan::Write {
                text,
                message,
                report,
            } => {
                let parent = match (tips.local, tips.tracking) {
                    (None, t) => t,
                    (Some(l), Some(t)) if brain.git.is_ancestor(l, t)? => Some(t),
                    (l, _) => l,
                };
                let mut applied = commit_locally(
                    brain,
                    tips,
                    parent,
                    (text, message, report),
                    None,
                    Landed::Pending(why),
                )?;
                applied.landing.superseded = view.superseded;
                Ok(applied)
            }
        }
    }
}

fn kept<R>(brain: &Brain, report: R, view: View, landed: Landed) -> Applied<R> {
    // A local branch behind the remote (a write killed after its push, or
    // nothing written here for a while) catches up: `git log` of the
    // branch is the journal.
    if let Tips {
        local,
        tracking: Some(t),
    } = view.tips
        && local != Some(t)
        && local.is_none_or(|l| brain.git.is_ancestor(l, t).unwrap_or(false))
    {
        let _ = brain
            .git
            .move_ref(&brain.local_ref(), t, local, "bsi: fast-forward");
    }
    brain.refresh_copy(&view.registry);
    Applied {
        report,
        commit: None,
        landing: Landing::new(landed, view.registry).superseded(view.superseded),
    }
}

/// The commit message, with the pending changes it also publishes and the
/// endings recorded offline it does not keep.
fn with_published(message: String, published: &[String], superseded: &[Superseded]) -> String {
    if published.is_empty() && superseded.is_empty() {
        return message;
    }
    let (summary, rest) = message.split_once("\n\n").unwrap_or((&message, ""));
    let mut out = format!("{summary}\n\n");
    if !published.is_empty() {
        out.push_str("Also publishes changes recorded offline:\n");
        for p in published {
            out.push_str(&format!("- {p}\n"));
        }
        out.push('\n');
    }
    if !superseded.is_empty() {
        out.push_str("Not kept, the claim having ended on the remote first:\n");
        for s in superseded {
            out.push_str(&format!("- {s}\n"));
        }
        out.push('\n');
    }
    out.push_str(rest);
    out
}

/// The pause before trying again after the `attempt`-th lost race:
/// random within a ceiling that doubles from 10 ms up to 1 s ("full
/// jitter"), so writers that lost to another do not collide again in step.
pub(crate) fn backoff(attempt: u32) -> Duration {
    let ceiling = (10u64 << attempt.min(7)).min(1000);
    Duration::from_millis(rand::rng().random_range(1..=ceiling))
}

/// Fetches the registry branch for a command that only reads (`status`,
/// `whoami`, `log`), bounded by a short timeout, unless `offline`. Returns
/// the view and, when the remote could not be asked, why.
pub fn read(
    brain: &Brain,
    settings: &Settings,
    now: DateTime<FixedOffset>,
    offline: bool,
) -> Result<(View, Freshness)> {
    let remote = settings.remote()?;
    let fresh = match &remote {
        None => Freshness::Local,
        Some(_) if offline => Freshness::NotAsked,
        Some(r) => match local_remote::fetch(
            &brain.workdir,
            r,
            false,
            FETCH_TIMEOUT.min(settings.connection_timeout),
        ) {
            Ok(_) => {
                brain.heard_from_remote(now);
                fetch_registry_too(brain, r);
                Freshness::Fetched
            }
            // The remote answered and has no registry: one this clone made
            // before the remote existed is published now, so no clone is
            // left without it and no person has to guess.
            Err(FetchError::NoBranch) => {
                brain.heard_from_remote(now);
                match first_publish(brain, settings, r, now)? {
                    Some(n) => Freshness::FirstPublished(n),
                    None => Freshness::Fetched,
                }
            }
            Err(FetchError::Unreachable(why) | FetchError::Denied(why)) => {
                Freshness::Unreachable(why)
            }
        },
    };
    let view = brain.view(remote.as_ref())?;
    brain.refresh_copy(&view.registry);
    Ok((view, fresh))
}

/// After a fetch of the registry branch: adds it to what the remote
/// fetches when the clone leaves it out (a single-branch or shallow
/// clone), and says so once, in the brain's notes.
fn fetch_registry_too(brain: &Brain, remote: &Remote) {
    match brain.fetch_registry_too(remote) {
        Ok(Some(note)) => brain.notes.push(format!("note: {note}")),
        Ok(None) => {}
        Err(e) => brain.notes.push(format!(
            "warning: the registry branch could not be added to what {} fetches ({e}); `git fetch` will not bring the claims",
            remote.name
        )),
    }
}

/// How long a command that only reads waits for the writer lock to publish
/// a registry its remote lacks.
const FIRST_PUBLISH_LOCK_WAIT: Duration = Duration::from_secs(2);

/// Pushes the local registry branch to a remote that has none (a brain
/// initialised before its remote was added): `Some(n)`, the number of its
/// changes published, once the remote holds it; `None` when there is no
/// local branch either, or the push did not land (the view then says the
/// changes are not published, as before).
fn first_publish(
    brain: &Brain,
    settings: &Settings,
    remote: &Remote,
    now: DateTime<FixedOffset>,
) -> Result<Option<usize>> {
    // A command that reads waits a short while only: another bsi holding
    // the lock is writing the registry, and its write publishes it.
    let _lock = match brain.writer_within("publish", Some(FIRST_PUBLISH_LOCK_WAIT)) {
        Ok(lock) => lock,
        Err(Error::Locked { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let tips = brain.tips(Some(remote));
    let (Some(local), None) = (tips.local, tips.tracking) else {
        return Ok(None);
    };
    let changes = brain.pending_changes(tips)?.len();
    let opts = Options {
        now,
        fresh: false,
        verbose: false,
        bound: None,
    };
    let p = Publisher::new(brain, settings, remote.clone(), opts);
    match p.remote.push(&brain.workdir, local, p.conn) {
        Push::Pushed => {
            p.pushed(tips, local)?;
            Ok(Some(changes))
        }
        Push::Lost | Push::Refused(_) | Push::Denied(_) | Push::Unreachable(_) => Ok(None),
    }
}

/// How current a read command's view is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Freshness {
    /// No remote: the local branch is the truth.
    Local,
    /// Fetched just now.
    Fetched,
    /// `--offline`: the remote was not asked.
    NotAsked,
    /// The remote could not be reached: what git said.
    Unreachable(String),
    /// The remote answered without a registry, and this clone's (made
    /// before the remote existed) was published to it just now: its number
    /// of changes.
    FirstPublished(usize),
}

impl Landing {
    /// The exit code this landing makes of a plan that answered `code`: a
    /// change that could not be published turns success into exit 7;
    /// pending changes published now that collide with the remote's claims
    /// turn it into exit 3. (The binary's `output::landing_lines` says
    /// the landing in words.)
    pub fn code(&self, code: u8) -> u8 {
        if code != exit::OK {
            return code;
        }
        if matches!(self.landed, Landed::Pending(_)) {
            exit::UNPUBLISHED
        } else if !self.collisions.is_empty() {
            exit::CONFLICT
        } else {
            code
        }
    }
}

#[cfg(test)]
mod tests {
    //! The write path below the binary: real repositories made with the
    //! `git` command, the registry branch made by [`create`].

    use std::path::Path;
    use std::process::Command;

    use super::*;
    use crate::config::Config;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("LC_ALL", "C")
            .args(args)
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn now() -> chrono::DateTime<chrono::FixedOffset> {
        chrono::DateTime::parse_from_rfc3339("2026-03-14T09:30:00+00:00").expect("time")
    }

    /// A repository with one content commit and a registry made by `bsi init`.
    fn brain() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path();
        git(p, &["init", "-q", "-b", "main"]);
        git(p, &["config", "user.name", "T"]);
        git(p, &["config", "user.email", "t@example.com"]);
        std::fs::create_dir_all(p.join("notes")).expect("mkdir");
        std::fs::write(p.join("notes/a.md"), "# A\n").expect("write");
        git(p, &["add", "-A"]);
        git(p, &["commit", "-q", "-m", "base"]);
        let (brain, settings) = open(p);
        let made = create(
            &brain,
            &settings,
            opts(),
            (
                crate::registry::render::empty_registry(),
                "bsi: init\n".into(),
            ),
            "init",
            true,
        )
        .expect("create");
        assert!(matches!(made, Created::Made(_)));
        dir
    }

    fn open(dir: &Path) -> (Brain, Settings) {
        let site = Brain::locate(dir, None).expect("brain");
        let settings = Settings::resolve(
            &site.git,
            Config::default(),
            &crate::settings::Given::default(),
        )
        .expect("settings");
        (Brain::new(site, &settings), settings)
    }

    /// A plan that appends `extra` to the registry's text.
    fn append(extra: &'static str) -> impl FnMut(&Registry) -> Result<Plan<()>> {
        move |reg| {
            Ok(Plan::Write {
                text: format!("{}{extra}", reg.text()),
                message: format!("bsi: test\n\n{}: test\n", crate::trailer::ACTION),
                report: (),
            })
        }
    }

    fn opts() -> Options {
        Options {
            now: now(),
            fresh: false,
            verbose: false,
            bound: None,
        }
    }

    #[test]
    fn a_local_write_moves_the_registry_branch_and_nothing_else() {
        let dir = brain();
        let p = dir.path();
        let (head, index) = (
            git(p, &["rev-parse", "HEAD"]),
            std::fs::read(p.join(".git/index")).expect("index"),
        );
        let before = git(p, &["rev-parse", "brain-index"]);
        let (brain, settings) = open(p);
        let applied =
            apply(&brain, &settings, opts(), append("\nA closing remark.\n")).expect("apply");
        assert_eq!(applied.landing.landed, Landed::Local);
        let tip = git(p, &["rev-parse", "brain-index"]);
        assert_eq!(
            Some(tip.trim().to_string()),
            applied.commit.map(|c| c.to_string())
        );
        assert_eq!(git(p, &["rev-parse", "brain-index~1"]), before);
        assert!(git(p, &["show", "brain-index:BRAIN-INDEX.md"]).ends_with("A closing remark.\n"));
        // HEAD, the index and the work tree are the user's.
        assert_eq!(git(p, &["rev-parse", "HEAD"]), head);
        assert_eq!(std::fs::read(p.join(".git/index")).expect("index"), index);
        assert_eq!(git(p, &["status", "--porcelain"]), "");
        // The copy follows, after its banner.
        let copy = std::fs::read_to_string(p.join("BRAIN-INDEX.md")).expect("copy");
        assert!(copy.starts_with("<!-- bsi:") && copy.ends_with("A closing remark.\n"));
    }

    #[test]
    fn a_plan_that_keeps_the_registry_writes_no_commit() {
        let dir = brain();
        let p = dir.path();
        let before = git(p, &["rev-parse", "brain-index"]);
        let (brain, settings) = open(p);
        let applied = apply(&brain, &settings, opts(), |_| Ok(Plan::Keep(7))).expect("apply");
        assert_eq!((applied.report, applied.commit), (7, None));
        assert_eq!(git(p, &["rev-parse", "brain-index"]), before);
    }

    #[test]
    fn a_refusing_plan_leaves_no_trace_and_the_lock_free() {
        let dir = brain();
        let p = dir.path();
        let before = git(p, &["rev-parse", "brain-index"]);
        let (brain, settings) = open(p);
        let r: Result<Applied<()>> = apply(&brain, &settings, opts(), |_| {
            Err(Error::NotFound("nothing here".into()))
        });
        assert!(matches!(r, Err(Error::NotFound(_))));
        assert_eq!(git(p, &["rev-parse", "brain-index"]), before);
        assert_eq!(
            std::fs::read_to_string(p.join(".git/bsi/lock")).expect("lock"),
            "",
            "the record is cleared"
        );
        // The next writer gets the lock at once.
        apply(&brain, &settings, opts(), |_| Ok(Plan::Keep(()))).expect("again");
    }

    #[test]
    fn an_unreachable_remote_keeps_the_change_pending_until_it_is_back() {
        let dir = brain();
        let p = dir.path();
        let remote = tempfile::tempdir().expect("tempdir");
        let url = remote.path().join("brain.git");
        git(
            p,
            &["remote", "add", "origin", url.to_str().expect("utf-8")],
        );
        let (brain, settings) = open(p);
        let applied = apply(&brain, &settings, opts(), append("\nremark\n")).expect("offline");
        assert!(matches!(applied.landing.landed, Landed::Pending(_)));
        let tips = brain.tips(settings.remote().expect("remote").as_ref());
        assert!(tips.tracking.is_none() && tips.local.is_some());
        // The remote comes into being: the next write publishes both.
        git(remote.path(), &["init", "-q", "--bare", "brain.git"]);
        let applied = apply(&brain, &settings, opts(), append("more\n")).expect("online");
        assert_eq!(applied.landing.landed, Landed::Published);
        assert_eq!(
            applied.landing.published.len(),
            2,
            "{:?}",
            applied.landing.published
        );
        let theirs = git(&url, &["show", "brain-index:BRAIN-INDEX.md"]);
        assert!(theirs.ends_with("remark\nmore\n"), "{theirs}");
    }

    #[test]
    fn a_bounded_write_keeps_its_change_locally_once_its_time_is_spent() {
        let dir = brain();
        let p = dir.path();
        let remote = tempfile::tempdir().expect("tempdir");
        let url = remote.path().join("brain.git");
        git(remote.path(), &["init", "-q", "--bare", "brain.git"]);
        git(
            p,
            &["remote", "add", "origin", url.to_str().expect("utf-8")],
        );
        let (brain, settings) = open(p);
        // No time for the remote at all: it is not even asked.
        let spent = Options {
            bound: Some(Bound {
                lock_wait: Duration::from_millis(100),
                remote: Duration::ZERO,
            }),
            ..opts()
        };
        let applied = apply(&brain, &settings, spent, append("\nremark\n")).expect("bounded");
        match &applied.landing.landed {
            Landed::Pending(why) => assert!(
                why.why
                    .contains("no answer within the 0 s a hook gives the remote"),
                "{why}"
            ),
            other => panic!("{other:?}"),
        }
        // The same remote, with the usual time: published.
        let applied = apply(&brain, &settings, opts(), append("more\n")).expect("online");
        assert_eq!(applied.landing.landed, Landed::Published);
        // Another writer holds the lock: a bounded write gives up at once.
        let held = brain.lock().expect("lock");
        let r = apply(&brain, &settings, spent, append("late\n"));
        assert!(matches!(r, Err(Error::Locked { .. })));
        drop(held);
    }

    #[test]
    fn repair_removes_a_dead_writers_lock_and_never_a_live_ones() {
        let dir = brain();
        let p = dir.path();
        let (brain, _) = open(p);
        let lock_file = p.join(".git/refs/heads/brain-index.lock");
        std::fs::write(
            p.join(".git/bsi/lock"),
            "busy write\npid 4000000000\nstart 1\n",
        )
        .expect("rec");
        std::fs::write(&lock_file, "").expect("lock");
        let mut lock = brain.lock().expect("writer lock");
        assert!(brain.repair(&mut lock).is_some());
        assert!(!lock_file.exists());
        drop(lock);
        // This process's own record: its writer is alive.
        let me = format!(
            "busy write\npid {}\nstart {}\n",
            std::process::id(),
            crate::platform::start_time(std::process::id()).unwrap_or_default()
        );
        std::fs::write(p.join(".git/bsi/lock"), me).expect("rec");
        std::fs::write(&lock_file, "").expect("lock");
        let mut lock = brain.lock().expect("writer lock");
        let said = brain.repair(&mut lock).expect("a report");
        assert!(lock_file.exists());
        assert!(
            said.starts_with("left 1 lock file(s) on the registry branch in place")
                && said.contains(&format!("(pid {})", std::process::id()))
                && said.contains(&lock_file.display().to_string()),
            "{said}"
        );
    }
}
