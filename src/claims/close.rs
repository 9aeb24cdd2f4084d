//! The plan of `bsi close`: a session's claims move to the history.

use chrono::{DateTime, FixedOffset};

use super::Plan;
use super::{check_owner, commit_message_by, scopes_summary, session_claims};
use crate::error::{Error, Result};
use crate::registry::{Claim, HistoryEntry, Registry, Status, TableKind};
use crate::scope::Scope;

/// What verifying a session came to, as `close` records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

#[cfg(test)]
mod tests {
    use super::super::tests::{claim, registry, t0, written};
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
        let p = plan(&reg, "s1", None, ("a", false), (audit, t0())).expect("a plan");
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
            plan(&reg, "s3", None, ("a", false), (VerifyOutcome::Clean, t0())),
            Err(Error::NotFound(_))
        ));
    }
}
