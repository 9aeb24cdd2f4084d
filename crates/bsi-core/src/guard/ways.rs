//! The ways out of a refusal, decided once for every door: which holders
//! stand in the way and in what standing (active, overdue, stale), and the
//! words that say what to do about each, with the commands to run.
//!
//! A claim whose time ran out but that the watchdog has not marked stale
//! yet is *overdue*: waiting for its holder may never end, and no one may
//! free it until `bsi watchdog` marks it stale. Every door — `bsi open`'s
//! refusal, the commit hook, the agent tools' edit hook and `bsi mcp` —
//! says so in the same words, from [`Holder::standing`] and [`overdue`].
//! Pure: the caller gives the time.

use chrono::{DateTime, FixedOffset};

use crate::registry::Claim;
use crate::words::command_line;

/// Where a claim in the way stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Standing {
    /// Its holder works under it: wait for it to close, or ask.
    Active,
    /// Its time ran out and the watchdog has not run: `bsi watchdog` marks
    /// it stale, then it can be closed by its holder or freed by a person.
    Overdue,
    /// Marked stale: only its holder's close or a person's release frees it.
    Stale,
}

/// A session holding a claim in the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holder<'a> {
    /// The session.
    pub session: &'a str,
    /// Whether the claim sits in the stale table.
    pub stale: bool,
    /// When the claim's time runs out.
    pub expires: DateTime<FixedOffset>,
}

impl<'a> Holder<'a> {
    /// The holder of `claim` (`stale`: in the stale table).
    pub fn of(claim: &'a Claim, stale: bool) -> Holder<'a> {
        Holder {
            session: &claim.session,
            stale,
            expires: claim.expires,
        }
    }

    /// Where it stands at `now`.
    pub fn standing(&self, now: DateTime<FixedOffset>) -> Standing {
        if self.stale {
            Standing::Stale
        } else if self.expires <= now {
            Standing::Overdue
        } else {
            Standing::Active
        }
    }
}

/// The holders of `claims`, one per session and standing, in order of
/// first appearance.
pub fn holders<'a>(claims: impl IntoIterator<Item = (&'a Claim, bool)>) -> Vec<Holder<'a>> {
    let mut out: Vec<Holder<'a>> = Vec::new();
    for (claim, stale) in claims {
        let h = Holder::of(claim, stale);
        if !out
            .iter()
            .any(|o| o.session == h.session && o.stale == h.stale)
        {
            out.push(h);
        }
    }
    out
}

/// The sessions among `holders` in `standing` at `now`, each once.
pub fn sessions<'a>(
    holders: &[Holder<'a>],
    standing: Standing,
    now: DateTime<FixedOffset>,
) -> Vec<&'a str> {
    let mut out: Vec<&'a str> = Vec::new();
    for h in holders {
        if h.standing(now) == standing && !out.contains(&h.session) {
            out.push(h.session);
        }
    }
    out
}

/// What to do about the overdue claim of `session`, with the commands in
/// the order they run.
pub fn overdue(session: &str) -> String {
    format!(
        "the claim of {session} is overdue (its time ran out; the watchdog has not run): `{}` marks it stale, then its holder closes it (`{}`) or a person who knows {session} is gone frees it: `{}`",
        command_line(["bsi", "watchdog"]),
        command_line(["bsi", "close", session]),
        release(session),
    )
}

/// What to do about the stale claim of `session`.
pub fn stale(session: &str) -> String {
    format!(
        "the claim of {session} is stale: its holder closes it, or a person who knows {session} is gone frees it: `{}`",
        release(session)
    )
}

/// The command a person runs to free the stale claims of `session`.
pub fn release(session: &str) -> String {
    command_line(["bsi", "release", session, "--confirm"])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::tests::{claim as held, t0};
    use crate::scope::Scope;

    fn claim(session: &str, file: &str) -> Claim {
        held(session, "codex", Scope::File(file.into()))
    }

    #[test]
    fn standing_follows_the_table_then_the_clock() {
        let c = claim("s1", "a.md");
        let h = Holder::of(&c, false);
        assert_eq!(h.standing(t0()), Standing::Active);
        assert_eq!(h.standing(c.expires), Standing::Overdue);
        assert_eq!(Holder::of(&c, true).standing(t0()), Standing::Stale);
    }

    #[test]
    fn holders_are_listed_once_per_session_and_table() {
        let a = claim("s1", "a.md");
        let b = claim("s1", "b.md");
        let c = claim("s2", "c.md");
        let hs = holders([(&a, false), (&b, false), (&c, true), (&a, true)]);
        let seen: Vec<(&str, bool)> = hs.iter().map(|h| (h.session, h.stale)).collect();
        assert_eq!(seen, vec![("s1", false), ("s2", true), ("s1", true)]);
        assert_eq!(sessions(&hs, Standing::Stale, t0()), vec!["s2", "s1"]);
    }

    #[test]
    fn the_overdue_words_name_the_watchdog_before_the_release() {
        let w = overdue("gone");
        let watchdog = w.find("`bsi watchdog`").expect("watchdog named");
        let release = w
            .find("`bsi release gone --confirm`")
            .expect("release named");
        assert!(watchdog < release, "{w}");
        assert!(w.contains("overdue"), "{w}");
        assert!(!w.contains("wait for"), "{w}");
    }
}
