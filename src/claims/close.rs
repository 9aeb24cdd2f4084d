//! The plan of `bsi close`: a session's claims move to the history.

use chrono::{DateTime, FixedOffset};

use super::Plan;
use super::{Actor, check_owner, commit_message_by, scopes_summary, session_claims};
use crate::error::{Error, Result};
use crate::registry::{Claim, HistoryEntry, Registry, Status, TableKind, col};
use crate::scope::Scope;

/// What verifying a session came to, as `close` records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

/// What a close came to.
#[derive(Debug, Clone)]
pub enum Closing {
    /// The claims closed (and whether each was stale), what `verify` said,
    /// and who forced it when they were another session's.
    Closed {
        /// The claims closed, each with whether it was stale.
        claims: Vec<(Claim, bool)>,
        /// What the audit said.
        verified: VerifyOutcome,
        /// Who closed them with `--force`, when they were not theirs.
        forced_by: Option<String>,
    },
    /// Nothing left to close: the session's claims were closed before, as
    /// the history rows say. A close repeated is done, not an error.
    AlreadyClosed(Vec<Ended>),
}

impl Closing {
    /// The claims closed, each with whether it was stale (none when they
    /// were closed before).
    pub fn claims(&self) -> &[(Claim, bool)] {
        match self {
            Closing::Closed { claims, .. } => claims,
            Closing::AlreadyClosed(_) => &[],
        }
    }

    /// What the audit said, when claims were closed now.
    pub fn verified(&self) -> Option<&VerifyOutcome> {
        match self {
            Closing::Closed { verified, .. } => Some(verified),
            Closing::AlreadyClosed(_) => None,
        }
    }
}

/// A history row of a session: one of its claims that ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// Its scope, as stored.
    pub scope: String,
    /// The agent that held it.
    pub agent: String,
    /// When it ended, as written.
    pub closed: String,
    /// `completed`, `released` or `force-released`.
    pub status: String,
    /// Its note (a forced close says there who forced it).
    pub note: String,
}

/// The history rows of `session` (those on `scope`), newest last.
pub fn ended(reg: &Registry, session: &str, scope: Option<&Scope>) -> Vec<Ended> {
    let Ok(rows) = crate::registry::parse::history_rows(reg) else {
        return Vec::new();
    };
    let cell = |row: &[(String, String)], name: &str| {
        row.iter()
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default()
    };
    let wanted = scope.map(ToString::to_string);
    rows.iter()
        .filter(|row| cell(row, col::SESSION) == session)
        .filter(|row| wanted.as_deref().is_none_or(|w| cell(row, col::SCOPE) == w))
        .map(|row| Ended {
            scope: cell(row, col::SCOPE),
            agent: cell(row, col::AGENT),
            closed: cell(row, col::H_CLOSED),
            status: cell(row, col::H_STATUS),
            note: cell(row, col::NOTE),
        })
        .collect()
}

impl Ended {
    /// Who ended it when its own session did not: the one who forced its
    /// close (the note [`forced_note`] wrote), or a person's release.
    pub fn by_another(&self) -> Option<String> {
        if let Some(by) = self
            .note
            .strip_prefix("closed by ")
            .and_then(|r| r.strip_suffix(" with --force"))
        {
            return Some(format!("closed by {by} with --force"));
        }
        matches!(self.status.as_str(), "released" | "force-released")
            .then(|| format!("{} by a person (`bsi release`)", self.status))
    }
}

/// The words a history row gets when its close was forced by `by`.
pub fn forced_note(by: &str) -> String {
    format!("closed by {by} with --force")
}

/// The session's claims (those on `scope`) move to the history, with what
/// the audit (read before the lock) says of its changes. Another session's
/// claims need `force`; the history row then says who forced it, and the
/// commit's action is `force-close`. A session with nothing left to close
/// and rows in the history was closed before: nothing is written.
pub fn plan(
    reg: &Registry,
    session: &str,
    scope: Option<&Scope>,
    (actor, force): (&Actor<'_>, bool),
    (verified, now): (VerifyOutcome, DateTime<FixedOffset>),
) -> Result<Plan<Closing>> {
    let (active, stale) = session_claims(reg, session, scope);
    if active.is_empty() && stale.is_empty() {
        let before = ended(reg, session, scope);
        if !before.is_empty() {
            return Ok(Plan::Keep(Closing::AlreadyClosed(before)));
        }
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
    let forced = check_owner(
        &targets.iter().map(|(c, _)| c).collect::<Vec<_>>(),
        actor,
        force,
        "close",
    )?;
    let forced_by = forced.then(|| actor.describe());
    // Alert, never block: an overflow goes into the history note; a
    // clean session closes as plain `completed`.
    let mut note = verified.history_note();
    if let Some(by) = &forced_by {
        let said = forced_note(by);
        note = if note.is_empty() {
            said
        } else {
            format!("{note}; {said}")
        };
    }
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
        if forced { "force-close" } else { "close" },
        &[session],
        &scopes_summary(targets.iter().map(|(c, _)| &c.scope)),
        Some(actor.agent),
    );
    Ok(Plan::Write {
        text: edited.render(),
        message,
        report: Closing::Closed {
            claims: targets,
            verified,
            forced_by,
        },
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
        let me = Actor {
            session: Some("s1"),
            agent: "a",
            agent_named: false,
        };
        let p = plan(&reg, "s1", None, (&me, false), (audit, t0())).expect("a plan");
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
            plan(&reg, "s3", None, (&me, false), (VerifyOutcome::Clean, t0())),
            Err(Error::NotFound(_))
        ));
        // Closed again: done before, nothing written, the rows said.
        let again = plan(
            &after,
            "s1",
            None,
            (&me, false),
            (VerifyOutcome::Clean, t0()),
        )
        .expect("a plan");
        match again {
            Plan::Keep(Closing::AlreadyClosed(rows)) => {
                assert_eq!(rows.len(), 2);
                assert!(
                    rows.iter()
                        .all(|r| r.status == "completed" && r.agent == "a")
                );
            }
            _ => panic!("not said as closed before"),
        }
    }

    #[test]
    fn another_sessions_claims_close_only_forced_and_the_history_says_who() {
        let theirs = claim("sess-b", "claude", Scope::File("a.md".into()));
        let reg = registry(&[theirs], &[]);
        let a = Actor {
            session: Some("sess-a"),
            agent: "claude",
            agent_named: false,
        };
        let clean = (VerifyOutcome::Clean, t0());
        assert!(matches!(
            plan(&reg, "sess-b", None, (&a, false), clean),
            Err(Error::NotYourSession { .. })
        ));
        let p = plan(&reg, "sess-b", None, (&a, true), clean).expect("forced");
        let Plan::Write {
            message, report, ..
        } = &p
        else {
            panic!("nothing written")
        };
        assert!(message.contains("BSI-Action: force-close"), "{message}");
        assert!(
            matches!(report, Closing::Closed { forced_by: Some(by), .. } if by == "claude (session sess-a)")
        );
        let rows = ended(&written(&p).expect("written"), "sess-b", None);
        assert_eq!(
            rows[0].note,
            "closed by claude (session sess-a) with --force"
        );
    }
}
