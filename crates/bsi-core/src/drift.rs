//! Drift: a claimed part of the brain changed on the content branch by a
//! commit that is not its holder's — made in a clone without bsi's hooks,
//! or let through by a forced escape — and so never refused. The holder
//! is told, since it is the one whose work the change lands under.
//!
//! Pure: the claims, the commits that landed since the oldest of them
//! with who made them, and what each touched (read by
//! [`crate::audit::drift`] through the guard's one reading of a commit),
//! in; the drift out.
//!
//! The rule: a commit drifts a claim when it touched the claim, was made
//! while the claim was held (its commit time after the registry commit
//! that opened the claim), and is not the holder's — its `BSI-Session` trailer names no
//! session, or another session. A commit its holder tagged is the
//! holder's own work, whatever it changed. A commit dated ahead of this
//! clock by more than [`LEEWAY_SECS`] (a machine whose clock runs fast) is
//! judged once the clock reaches it.

use crate::guard::Region;
use crate::registry::Claim;

/// How far ahead of this clock a commit's time may be and still be judged:
/// the leeway the registry's times get between two machines' clocks.
pub const LEEWAY_SECS: i64 = 120;

/// One commit of the content branch, as the rule needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Landed {
    /// Its id, in full.
    pub id: String,
    /// Who made it: `Name <email>`, as git records the author.
    pub author: String,
    /// The session its `BSI-Session` trailer names; `None` without one.
    pub session: Option<String>,
    /// When it was committed, seconds since the epoch.
    pub time: i64,
    /// What it touched of the claims.
    pub touched: Vec<Touch>,
}

/// A claim a commit touched, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    /// The claim, as an index into the claims the rule is given.
    pub claim: usize,
    /// The path changed, relative to the brain root.
    pub path: String,
    /// The lines, for a section claim; `None`: the file as a whole.
    pub region: Option<Region>,
}

/// A claimed part changed by a commit that is not its holder's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// The claim changed under its holder.
    pub claim: Claim,
    /// Whether the claim is stale.
    pub stale: bool,
    /// The commit, in full.
    pub commit: String,
    /// Who made it.
    pub author: String,
    /// The session its trailer names, if any.
    pub session: Option<String>,
    /// The path it changed.
    pub path: String,
    /// The lines, for a section claim.
    pub region: Option<Region>,
}

/// A claim, whether it is stale, and the first second a commit counts as
/// made while it was held: the second after the registry commit that
/// opened it, or the minute the registry row records when that commit is
/// not found.
pub type Since<'a> = (&'a Claim, bool, i64);

/// Whether `commit` drifts the claim held by `holder` since `start`: made
/// while the claim was held (not ahead of `now` by more than
/// [`LEEWAY_SECS`]) by someone other than the holder.
pub fn drifts(holder: &str, start: i64, commit: &Landed, now: i64) -> bool {
    commit.time >= start
        && commit.time <= now + LEEWAY_SECS
        && commit.session.as_deref() != Some(holder)
}

/// Whether reading what `commit` changed can find drift at all: some claim
/// of `claims` was held when it was made by someone else. Lets the reader
/// skip the diff of every other commit.
pub fn may_drift(claims: &[Since<'_>], commit: &Landed, now: i64) -> bool {
    claims
        .iter()
        .any(|(c, _, start)| drifts(&c.session, *start, commit, now))
}

/// The drift of `claims` among `commits` (newest first, as walked): one
/// entry per claim a commit touched while someone else held it, in the
/// order of the commits, then of what each touched. Touches naming no
/// claim of `claims` are ignored.
pub fn drift(claims: &[Since<'_>], commits: &[Landed], now: i64) -> Vec<Drift> {
    let mut out = Vec::new();
    for commit in commits {
        for t in &commit.touched {
            let Some(&(claim, stale, start)) = claims.get(t.claim) else {
                continue;
            };
            if drifts(&claim.session, start, commit, now) {
                out.push(Drift {
                    claim: claim.clone(),
                    stale,
                    commit: commit.id.clone(),
                    author: commit.author.clone(),
                    session: commit.session.clone(),
                    path: t.path.clone(),
                    region: t.region.clone(),
                });
            }
        }
    }
    out
}

impl Drift {
    /// The commit's short id (7 characters).
    pub fn short(&self) -> &str {
        self.commit.get(..7).unwrap_or(&self.commit)
    }

    /// Whose the commit is: `Bob <bob@example.com>, no session` or `…,
    /// session s2`.
    pub fn whose(&self) -> String {
        match &self.session {
            Some(s) => format!("{}, session {s}", self.author),
            None => format!("{}, no session", self.author),
        }
    }

    /// What it changed: `lines 7-8 under `Goals`` or `the file`.
    pub fn what(&self) -> String {
        match &self.region {
            Some(r) => r.describe(),
            None => "the file".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changes::{Kind, Side};
    use crate::scope::Scope;

    fn claim(session: &str, opened: &str) -> Claim {
        let t = chrono::DateTime::parse_from_rfc3339(opened).expect("time");
        Claim {
            session: session.into(),
            scope: Scope::parse_stored("plan.md#Goals").expect("scope"),
            agent: String::new(),
            opened: t,
            expires: t + chrono::Duration::hours(1),
            note: String::new(),
            reason: None,
            extra: Vec::new(),
        }
    }

    fn landed(session: Option<&str>, time: i64) -> Landed {
        Landed {
            id: "0123456789abcdef".into(),
            author: "Bob <bob@example.com>".into(),
            session: session.map(String::from),
            time,
            touched: vec![Touch {
                claim: 0,
                path: "plan.md".into(),
                region: Some(Region {
                    side: Side::New,
                    kind: Kind::Added,
                    start: 7,
                    end: 8,
                    heading: Some("Goals".into()),
                }),
            }],
        }
    }

    #[test]
    fn a_commit_of_another_after_the_claim_opened_drifts_it() {
        let c = claim("s1", "2026-03-14T09:30:00Z");
        let at = c.opened.timestamp();
        let claims = [(&c, false, at)];
        let found = drift(&claims, &[landed(None, at + 60)], at + 600);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].short(), "0123456");
        assert_eq!(found[0].whose(), "Bob <bob@example.com>, no session");
        assert_eq!(found[0].what(), "lines 7-8 under `Goals`");
        let by_s2 = drift(&claims, &[landed(Some("s2"), at + 60)], at + 600);
        assert_eq!(by_s2[0].whose(), "Bob <bob@example.com>, session s2");
    }

    #[test]
    fn the_holders_own_earlier_and_future_commits_do_not_drift() {
        let c = claim("s1", "2026-03-14T09:30:00Z");
        let at = c.opened.timestamp();
        let claims = [(&c, false, at)];
        assert!(drift(&claims, &[landed(Some("s1"), at + 60)], at + 600).is_empty());
        assert!(drift(&claims, &[landed(None, at - 1)], at + 600).is_empty());
        assert!(
            drift(
                &claims,
                &[landed(None, at + 600 + LEEWAY_SECS + 1)],
                at + 600
            )
            .is_empty()
        );
    }
}
