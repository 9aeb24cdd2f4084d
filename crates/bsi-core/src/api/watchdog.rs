//! The watchdog: claims whose time ran out move to the stale table (never
//! freed); what the registry holds as it landed is read for the report:
//! collisions, and the drift of every claim.

use crate::audit;
use crate::claims::watchdog::{Seen, plan};
use crate::conflict;
use crate::drift::Drift;
use crate::error::Result;
use crate::publish::Applied;
use crate::registry::Claim;

/// What a run of the watchdog did and saw.
pub struct Watched {
    /// What moved, and what is held, as written.
    pub applied: Applied<Seen>,
    /// The claims that collide in the registry as it landed.
    pub collisions: Vec<(Claim, Claim)>,
    /// The claims (active and stale) changed by commits not their
    /// holders', or why that could not be read.
    pub drift: Result<Vec<Drift>>,
}

/// Moves the claims overdue at the site's time to the stale table,
/// recorded as done `by`, on the remote's present state (fetched first).
pub fn watchdog(site: &super::Site<'_>, by: &str) -> Result<Watched> {
    let mut options = site.options;
    options.fresh = true;
    let applied = crate::publish::apply(site.brain, site.settings, options, |reg| {
        Ok(plan(site.now, reg, by))
    })?;
    // Read from the registry as it landed, after the lock.
    let collisions = conflict::collisions(&applied.landing.registry, &site.brain.sections())
        .into_iter()
        .map(|(a, b)| (a.clone(), b.clone()))
        .collect();
    let drift = audit::drift_of(
        site.brain,
        &applied.landing.registry,
        None,
        site.now.timestamp(),
    );
    Ok(Watched {
        applied,
        collisions,
        drift,
    })
}
