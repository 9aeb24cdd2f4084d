//! Waiting for the registry to change, for `bsi open --wait`: the local
//! registry branch is watched, and with a remote its registry branch is
//! fetched, with pauses that grow from half a second to five. Nothing is
//! written while waiting; the caller plans again once something changed.

use std::time::{Duration, Instant};

use crate::git_cli::Remote;
use crate::settings::{FETCH_TIMEOUT, Settings};
use crate::store::{Brain, Tips};

/// How often the local registry branch is looked at when there is no
/// remote: reading a reference costs nothing.
const LOCAL_POLL: Duration = Duration::from_millis(200);

/// A wait with a deadline.
pub struct Waiting {
    deadline: Instant,
    remote: Option<Remote>,
    attempt: u32,
}

impl Waiting {
    /// A wait of `wait` from now.
    pub fn new(settings: &Settings, wait: Duration) -> Waiting {
        Waiting {
            deadline: Instant::now() + wait,
            remote: settings.remote().ok().flatten(),
            attempt: 0,
        }
    }

    /// The references the registry is read from, as they are now.
    pub fn tips(&self, brain: &Brain) -> Tips {
        brain.tips(self.remote.as_ref())
    }

    /// Returns `true` as soon as the registry's references differ from
    /// `since` (fetching the remote's between pauses), `false` once the
    /// time is up.
    pub fn until_changed(&mut self, brain: &Brain, since: Tips) -> bool {
        self.until(brain, since, None) == Woke::Changed
    }

    /// Like [`Waiting::until_changed`], and also wakes at `renew` (a
    /// waiter's lease to renew).
    pub fn until(&mut self, brain: &Brain, since: Tips, renew: Option<Instant>) -> Woke {
        loop {
            if self.tips(brain) != since {
                return Woke::Changed;
            }
            let now = Instant::now();
            if now >= self.deadline {
                return Woke::TimeUp;
            }
            if renew.is_some_and(|r| now >= r) {
                return Woke::Renew;
            }
            let left = match renew {
                Some(r) => (self.deadline - now).min(r - now),
                None => self.deadline - now,
            };
            let pause = match self.remote {
                Some(_) => pause(self.attempt),
                None => LOCAL_POLL,
            };
            self.attempt = self.attempt.saturating_add(1);
            std::thread::sleep(pause.min(left));
            if let Some(r) = &self.remote {
                let left = self.deadline.saturating_duration_since(Instant::now());
                if !left.is_zero() {
                    // Unreachable: try again after the next pause.
                    let _ = r.fetch(&brain.workdir, left.min(FETCH_TIMEOUT));
                }
            }
        }
    }
}

/// Why a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Woke {
    /// The registry changed.
    Changed,
    /// A lease is due for renewal.
    Renew,
    /// The wait is over.
    TimeUp,
}

/// The pause before the `attempt`-th fetch: 0.5 s, growing by half each
/// time, at most 5 s.
pub fn pause(attempt: u32) -> Duration {
    let mut ms: u64 = 500;
    for _ in 0..attempt.min(10) {
        ms = ms * 3 / 2;
    }
    Duration::from_millis(ms.min(5000))
}

/// A wait for people: `45s`, `10m`, `1h30m`.
pub fn describe(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{}s", s.max(1))
    } else {
        crate::ttl::format_duration(chrono::Duration::seconds(s as i64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_grow_from_half_a_second_to_five() {
        assert_eq!(pause(0), Duration::from_millis(500));
        assert_eq!(pause(1), Duration::from_millis(750));
        assert!(pause(3) > pause(2));
        assert_eq!(pause(10), Duration::from_secs(5));
        assert_eq!(pause(u32::MAX), Duration::from_secs(5));
    }

    #[test]
    fn waits_are_said_in_seconds_or_minutes() {
        assert_eq!(describe(Duration::from_secs(30)), "30s");
        assert_eq!(describe(Duration::from_secs(600)), "10m");
        assert_eq!(describe(Duration::from_secs(5400)), "1h30m");
    }
}
