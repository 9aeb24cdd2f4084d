//! What an edit refused by the guard should be followed by: the next steps
//! of its conflict, for every door that judges edits (the agent tools'
//! edit hooks and MCP's `check`), so they offer the same ones.

use chrono::{DateTime, FixedOffset};

use crate::claims::open::alternatives;
use crate::guard::Finding;
use crate::next::{Conflict, NextStep};
use crate::registry::Registry;
use crate::scope::Scope;
use crate::store::Brain;

/// The next steps of an edit refused for `findings`: free scopes near the
/// parts the edit needs, `outside` (what it touches outside the session's
/// claims, in strict mode) claimed first, the wait for the holders at work,
/// and what frees the holders that are not.
pub fn steps(
    brain: &Brain,
    reg: &Registry,
    session: &str,
    findings: &[Finding<'_>],
    outside: &[Scope],
    now: DateTime<FixedOffset>,
) -> Vec<NextStep> {
    let mut held = Vec::new();
    let mut wanted: Vec<Scope> = Vec::new();
    for f in findings {
        if let Finding::Claimed {
            path, claim, stale, ..
        } = f
        {
            held.push((*claim, *stale));
            // The part of the file the edit needs.
            let s = match &claim.scope {
                Scope::Section { .. } | Scope::File(_) => claim.scope.clone(),
                _ => Scope::File(path.clone()),
            };
            if !wanted.contains(&s) {
                wanted.push(s);
            }
        }
    }
    let nearby = if wanted.is_empty() {
        Vec::new()
    } else {
        alternatives(reg, session, &wanted, &wanted, &brain.snapshot(&wanted))
    };
    Conflict {
        held,
        nearby: &nearby,
        outside,
        wanted: &wanted,
        ..Conflict::default()
    }
    .steps(now)
}
