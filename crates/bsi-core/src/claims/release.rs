//! The plan of `bsi release`: a person frees a session's stale claims (and,
//! forced, its active ones); they move to the history.

use chrono::{DateTime, FixedOffset};

use super::Plan;
use super::{commit_message_about, scopes_summary, session_claims};
use crate::error::{Error, Result};
use crate::registry::{Claim, HistoryEntry, Registry, Status, TableKind};
use crate::scope::Scope;
use crate::values::BadValue;

/// `--confirm` and `--force`.
#[derive(Clone, Copy)]
pub struct How {
    /// Write the release (else only say what it would free).
    pub confirm: bool,
    /// Free active claims as well.
    pub force: bool,
}

/// The session's stale claims (and, forced, its active ones) on `scope`
/// move to the history; without `--confirm`, only what would move.
pub fn plan(
    now: DateTime<FixedOffset>,
    reg: &Registry,
    (session, rule): (&str, &Result<(), BadValue>),
    scope: Option<&Scope>,
    How { confirm, force }: How,
    by: &str,
) -> Result<Plan<Vec<(Claim, Status)>>> {
    let (active, stale) = session_claims(reg, session, scope);
    if active.is_empty() && stale.is_empty() {
        rule.clone()?;
        return Err(Error::NotFound(format!(
            "session {session} holds no claim{}",
            match &scope {
                Some(s) => format!(" on {s}"),
                None => String::new(),
            }
        )));
    }
    if !active.is_empty() && !force {
        return Err(Error::StillActive {
            session: session.to_string(),
            scopes: active
                .iter()
                .map(|&i| reg.active_claims[i].scope.clone())
                .collect(),
        });
    }
    let targets: Vec<(Claim, Status)> = stale
        .iter()
        .map(|&i| (reg.stale_claims[i].clone(), Status::Released))
        .chain(
            active
                .iter()
                .map(|&i| (reg.active_claims[i].clone(), Status::ForceReleased)),
        )
        .collect();

    if !confirm {
        return Ok(Plan::Keep(targets));
    }
    let mut edited: Registry = reg.clone();
    for &i in &active {
        edited.remove_claim(TableKind::Active, i);
    }
    for &i in &stale {
        edited.remove_claim(TableKind::Stale, i);
    }
    for (c, s) in &targets {
        edited.add_history(&HistoryEntry::closing(c, now, *s, ""));
    }
    let action = if active.is_empty() {
        "release"
    } else {
        "force-release"
    };
    let scopes: Vec<_> = targets.iter().map(|(c, _)| &c.scope).collect();
    let message = commit_message_about(
        action,
        &[session],
        (&scopes_summary(scopes.iter().copied()), &scopes),
        Some(by),
    );
    Ok(Plan::Write {
        text: edited.render(),
        message,
        report: targets,
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{claim, registry, t0, written};
    use super::*;

    #[test]
    fn release_previews_without_confirm_and_needs_force_for_active_claims() {
        let stale = claim("s1", "a", Scope::File("a.md".into()));
        let live = claim("s2", "a", Scope::File("b.md".into()));
        let reg = registry(&[live], &[stale]);
        let ok = Ok(());
        let preview = How {
            confirm: false,
            force: false,
        };
        let p = plan(t0(), &reg, ("s1", &ok), None, preview, "p").expect("a plan");
        assert!(matches!(p, Plan::Keep(ref t) if t.len() == 1 && t[0].1 == Status::Released));
        let confirm = How {
            confirm: true,
            force: false,
        };
        let after = written(&plan(t0(), &reg, ("s1", &ok), None, confirm, "p").expect("a plan"))
            .expect("written");
        assert!(after.stale_claims.is_empty());
        assert_eq!(after.history_len(), 1);
        assert!(plan(t0(), &reg, ("s2", &ok), None, confirm, "p").is_err());
        let forced = How {
            confirm: true,
            force: true,
        };
        let after = written(&plan(t0(), &reg, ("s2", &ok), None, forced, "p").expect("a plan"))
            .expect("written");
        assert!(after.active_claims.is_empty());
        assert_eq!(after.history_len(), 1);
        assert!(after.text().contains(Status::ForceReleased.as_str()));
    }
}
