//! The core every door calls in process: a typed request (who acts, on
//! what, how) → a snapshot → the plan of [`crate::claims`] → the write
//! protocol of [`crate::publish`] → a typed outcome. The command line and
//! `bsi mcp` are adapters over it: they resolve who acts once (an
//! [`Actor`]), hand it a request, and only render what comes back. Nothing
//! here prints.

pub mod agent;
pub mod close;
pub mod commit;
pub mod edit;
pub mod keep;
pub mod open;
pub mod release;
pub mod renew;
pub mod views;
pub mod watchdog;

mod reach;
pub use reach::{audit, git, git_cli, platform, publish, resolve, settings, store, wait};

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chrono::{DateTime, FixedOffset};

use crate::error::Result;
use crate::publish::{Applied, Plan};
use crate::registry::Registry;
use crate::settings::Settings;
use crate::store::Brain;

/// Where a request is served: the brain and its settings, resolved once
/// by the door, with the time of the request.
pub struct Site<'a> {
    /// The brain.
    pub brain: &'a Brain,
    /// Its settings.
    pub settings: &'a Settings,
    /// The directory relative scopes start from.
    pub cwd: &'a Path,
    /// The time of the request.
    pub now: DateTime<FixedOffset>,
    /// How writes publish.
    pub options: crate::publish::Options,
    /// What a new session id is drawn from (`BSI_RANDOM_SEED`).
    pub random_seed: Option<u64>,
}

impl Site<'_> {
    /// Marks this writer as arriving among the writers it meets (those of
    /// the clone, or of every clone of this machine that shares its remote
    /// on its disk: [`crate::store::Meeting`]), for a write that may share
    /// a push (not a bounded one, which goes alone): a holder gathering a
    /// burst waits for its request.
    pub fn arriving(&self) -> Option<crate::store::requests::Arrival> {
        self.options
            .bound
            .is_none()
            .then(|| self.meeting().requests.arrive())
    }

    /// Where this brain's writers meet ([`crate::store::Meeting`]).
    pub fn meeting(&self) -> crate::store::Meeting {
        let remote = self.settings.remote().ok().flatten();
        self.brain.meeting(remote.as_ref())
    }

    /// Publishes what `plan` decides under the writer lock.
    pub fn publish<R>(&self, plan: impl FnMut(&Registry) -> Result<Plan<R>>) -> Result<Applied<R>> {
        crate::publish::apply(self.brain, self.settings, self.options, plan)
    }

    /// Publishes what `plan` decides, sharing the write with the other
    /// writers of the clone waiting for the writer lock
    /// ([`crate::publish::apply_job`]): `job` is the same plan as data,
    /// its request standing at `from` in the write machine (`Planned`, or
    /// `Refused` for a waiter planning again). `None` when `stop` was set
    /// before any writer took the request: nothing was written.
    pub fn publish_job<R>(
        &self,
        (job, from): (&crate::claims::job::Job, crate::writes::State),
        stop: &Stop,
        plan: impl FnMut(&Registry) -> Result<Plan<R>>,
    ) -> Result<Option<Applied<R>>> {
        crate::publish::apply_job(
            self.brain,
            self.settings,
            self.options,
            (job, from, &|| stop.is_set()),
            plan,
        )
    }
}

/// Who acts, resolved once by the door: the one type every door and
/// every plan reads ([`crate::claims::Actor`]).
pub use crate::claims::Actor;

impl Actor {
    /// A named session acting with no agent name given takes the agent its
    /// claims were recorded by (its active or stale claims', else its
    /// newest history row's), so a session's claims stay one agent's at
    /// every door. A drawn session, and an actor of no session, stay as
    /// they are.
    pub fn adopting(mut self, site: &Site<'_>) -> Actor {
        if self.drawn || self.agent_named {
            return self;
        }
        let Some(session) = self.session.as_deref() else {
            return self;
        };
        let remote = site.settings.remote().ok().flatten();
        let Ok(view) = site.brain.view(remote.as_ref()) else {
            return self;
        };
        let reg = &view.registry;
        let recorded = match reg.all_claims().find(|(c, _)| c.session == session) {
            Some((c, _)) => Some(c.agent.clone()),
            None => crate::claims::close::ended(reg, session, None)
                .pop()
                .map(|e| e.agent),
        };
        if let Some(agent) = recorded.filter(|a| !a.is_empty()) {
            self.agent = agent;
        }
        self
    }
}

/// Set once whoever asked is gone (a cancelled call, a closed client): a
/// wait ends, and nothing more is granted.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    /// A stop not yet set.
    pub fn new() -> Stop {
        Stop::default()
    }

    /// Sets it.
    pub fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether it is set.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// The flag a wait reads.
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }
}
