//! A person frees another session's claims: the stale ones, or (forced)
//! the active ones too; without `confirm`, what would be freed.

use crate::claims::release::{How, plan};
use crate::error::Result;
use crate::publish::Applied;
use crate::registry::{Claim, Status};
use crate::scope::Scope;
use crate::values::BadValue;

/// Frees `session`'s claims (those on `scope`), recorded as done `by`.
/// `rule`: whether `session` is an id bsi would hand out — an id the
/// registry holds is released as written, one it lacks must follow the
/// rule. The claims freed (or, as a preview, that would be) and how each
/// goes to the history.
pub fn release(
    site: &super::Site<'_>,
    (session, rule): (&str, &std::result::Result<(), BadValue>),
    scope: Option<&Scope>,
    how: How,
    by: &str,
) -> Result<Applied<Vec<(Claim, Status)>>> {
    site.publish(|reg| plan(site.now, reg, (session, rule), scope, how, by))
}
