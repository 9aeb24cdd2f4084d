//! The plan of `bsi close`: a session's claims move to the history.

use chrono::{DateTime, FixedOffset};

use super::{check_owner, commit_message_by, scopes_summary, session_claims};
use crate::audit::VerifyOutcome;
use crate::error::{Error, Result};
use crate::publish::Plan;
use crate::registry::{Claim, HistoryEntry, Registry, Status, TableKind};
use crate::scope::Scope;

/// The claims closed (and whether each was stale), and what `verify` said.
pub type Closing = (Vec<(Claim, bool)>, VerifyOutcome);

/// The session's claims (those on `scope`) move to the history, with what
/// the audit (read before the lock) says of its changes.
pub fn plan(
    reg: &Registry,
    session: &str,
    scope: Option<&Scope>,
    (caller, force): (&str, bool),
    (verified, now): (VerifyOutcome, DateTime<FixedOffset>),
) -> Result<Plan<Closing>> {
    let (active, stale) = session_claims(reg, session, scope);
    if active.is_empty() && stale.is_empty() {
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
    check_owner(
        &targets.iter().map(|(c, _)| c).collect::<Vec<_>>(),
        caller,
        force,
        "close",
    )?;
    // Alert, never block: an overflow goes into the history note; a
    // clean session closes as plain `completed`.
    let note = verified.history_note();
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
    let message = commit_message_by(
        "close",
        &[session],
        &scopes_summary(targets.iter().map(|(c, _)| &c.scope)),
        Some(caller),
    );
    Ok(Plan::Write {
        text: edited.render(),
        message,
        report: (targets, verified),
    })
}
