//! A session extends its active claims (all, or those on a scope), within
//! 8h of their opening.

use chrono::Duration;

use super::{Actor, Site};
use crate::claims::renew::{Renewing, plan};
use crate::error::Result;
use crate::publish::Applied;
use crate::scope::Scope;

/// Extends `session`'s active claims (those on `scope`) to `ttl` from now,
/// as `actor` acts ([`Actor::owns`]); `force` renews claims of another
/// session.
pub fn renew(
    site: &Site<'_>,
    actor: &Actor,
    session: &str,
    scope: Option<&Scope>,
    ttl: Duration,
    force: bool,
) -> Result<Applied<Renewing>> {
    site.publish(|reg| plan(site.now, reg, session, scope, ttl, (force, actor)))
}
