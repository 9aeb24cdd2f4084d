//! The plan of `bsi watchdog`: expired active claims move to the stale
//! table (never freed).

use chrono::{DateTime, FixedOffset};

use super::Plan;
use super::{commit_message_about, scopes_summary};
use crate::registry::{Claim, Registry, TableKind};
use crate::ttl;

/// Expired active claims move to the stale table; the rest of what the
/// watchdog reports is read from the same registry.
pub fn plan(now: DateTime<FixedOffset>, reg: &Registry, by: &str) -> Plan<Seen> {
    let mut edited: Registry = reg.clone();
    let mut moved: Vec<Claim> = Vec::new();
    for (i, c) in reg.active_claims.iter().enumerate() {
        if let Some(reason) = ttl::stale_reason(c.opened, c.expires, now) {
            let mut s = c.clone();
            let max = reason == ttl::STALE_REASON_MAX;
            s.reason = Some(reg.language().stale_reason(max).to_string());
            edited.remove_claim(TableKind::Active, i);
            edited.add_claim(TableKind::Stale, &s);
            moved.push(s);
        }
    }
    let active = reg.active_claims.len() - moved.len();
    let mut stale_claims: Vec<Claim> = reg.stale_claims.clone();
    stale_claims.extend(moved.iter().cloned());
    let sections_held: Vec<Claim> = reg
        .all_claims()
        .filter(|(c, _)| c.scope.level() == crate::scope::Level::Section)
        .map(|(c, _)| c.clone())
        .collect();
    let report = Seen {
        active,
        moved,
        stale_claims,
        sections_held,
    };
    if report.moved.is_empty() {
        return Plan::Keep(report);
    }
    let sessions: Vec<&str> = report.moved.iter().map(|c| c.session.as_str()).collect();
    let message = commit_message_about(
        "watchdog",
        &sessions,
        (
            &format!(
                "stale: {}",
                scopes_summary(report.moved.iter().map(|c| &c.scope))
            ),
            &report.moved.iter().map(|c| &c.scope).collect::<Vec<_>>(),
        ),
        Some(by),
    );
    Plan::Write {
        text: edited.render(),
        message,
        report,
    }
}

/// What the watchdog saw in the registry it checked.
pub struct Seen {
    /// Active claims left.
    pub active: usize,
    /// Claims moved to the stale table now.
    pub moved: Vec<Claim>,
    /// Every stale claim, those moved now included.
    pub stale_claims: Vec<Claim>,
    /// The section claims, to report those naming no heading.
    pub sections_held: Vec<Claim>,
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::super::tests::{claim, registry, t0, written};
    use super::*;
    use crate::scope::Scope;

    #[test]
    fn only_expired_claims_move_and_nothing_is_freed() {
        let live = claim("s1", "a", Scope::File("a.md".into()));
        let reg = registry(std::slice::from_ref(&live), &[]);
        assert!(matches!(plan(t0(), &reg, "w"), Plan::Keep(ref s) if s.moved.is_empty()));
        let later = t0() + Duration::hours(3);
        let p = plan(later, &reg, "w");
        let after = written(&p).expect("written");
        assert!(after.active_claims.is_empty());
        assert_eq!(after.stale_claims.len(), 1);
        assert_eq!(after.stale_claims[0].session, "s1");
        assert!(after.stale_claims[0].reason.is_some());
    }
}
