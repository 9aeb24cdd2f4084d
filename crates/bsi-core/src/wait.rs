//! Waiting for the registry to change, for `bsi open --wait`. The local
//! registry branch is looked at every 200 ms (reading a reference costs
//! nothing), so a close made in this clone or a linked work tree wakes the
//! waiter at once. With a remote its registry branch is also fetched: every
//! half second by the queue's head (the one waiter served next), with pauses
//! growing from half a second to five by everyone else, so the remote sees
//! at most two fetches a second from each queue's head and a slow trickle
//! from the rest. A remote on this disk is looked at like the local branch
//! (its branch read from its files, every 50 ms by the head), and fetched
//! the moment it moves. Nothing is written while waiting; the caller plans
//! again once something changed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::git::{Oid, local_remote};
use crate::git_cli::Remote;
use crate::settings::{FETCH_TIMEOUT, Settings};
use crate::store::{Brain, Tips};

/// How often the local registry branch is looked at: reading a reference
/// costs nothing.
const LOCAL_POLL: Duration = Duration::from_millis(200);

/// How often the queue's head fetches the remote's registry branch: it is
/// served next, so it should notice a close within a fraction of a second.
pub(crate) const HEAD_FETCH: Duration = Duration::from_millis(500);

/// How often the queue's head looks at the registry branch of a remote on
/// this disk: read from the remote's files, it costs as little as the
/// local branch, and a close by another clone of this machine is noticed
/// within this.
const DISK_HEAD_POLL: Duration = Duration::from_millis(50);

/// A wait with a deadline.
pub(crate) struct Waiting {
    deadline: Instant,
    remote: Option<Remote>,
    attempt: u32,
    /// When the remote is fetched next.
    next_fetch: Instant,
    /// The remote's branch as last read from its files, when it is on this
    /// disk: fetched once each time it moves.
    seen_on_disk: Option<Oid>,
    /// Set when whoever waits is gone (a cancelled call, a closed client).
    stop: Option<Arc<AtomicBool>>,
}

impl Waiting {
    /// A wait of `wait` from now.
    pub(crate) fn new(settings: &Settings, wait: Duration) -> Waiting {
        let now = Instant::now();
        Waiting {
            deadline: now + wait,
            remote: settings.remote().ok().flatten(),
            attempt: 0,
            next_fetch: now + pause(0),
            seen_on_disk: None,
            stop: None,
        }
    }

    /// The same wait, which ends ([`Woke::Stopped`]) once `stop` is set.
    pub(crate) fn stopped_by(mut self, stop: Arc<AtomicBool>) -> Waiting {
        self.stop = Some(stop);
        self
    }

    /// The references the registry is read from, as they are now.
    pub(crate) fn tips(&self, brain: &Brain) -> Tips {
        brain.tips(self.remote.as_ref())
    }

    /// Wakes as soon as the registry's references differ from `since`
    /// (fetching the remote's between pauses), once the time is up, when
    /// stopped, or at `renew` (a waiter's lease to renew). `head`: this waiter is served next, and
    /// fetches the remote every [`HEAD_FETCH`] instead of backing off.
    pub(crate) fn until(
        &mut self,
        brain: &Brain,
        since: Tips,
        renew: Option<Instant>,
        head: bool,
    ) -> Woke {
        if head {
            self.attempt = 0;
            self.next_fetch = self.next_fetch.min(Instant::now() + HEAD_FETCH);
        }
        loop {
            if self.stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst)) {
                return Woke::Stopped;
            }
            let tips = self.tips(brain);
            if tips != since {
                return Woke::Changed;
            }
            // A remote on this disk whose branch moved past what was
            // fetched: fetched now (in process), once for each move.
            let on_disk = self
                .remote
                .as_ref()
                .and_then(|r| local_remote::branch_tip(&brain.git, r, FETCH_TIMEOUT));
            if let (Some(r), Some(tip)) = (&self.remote, on_disk)
                && Some(tip) != tips.tracking
                && Some(tip) != self.seen_on_disk
            {
                self.seen_on_disk = Some(tip);
                self.fetch(brain, r);
                continue;
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
            let poll = if head && on_disk.is_some() {
                DISK_HEAD_POLL
            } else {
                LOCAL_POLL
            };
            let mut nap = poll.min(left);
            if self.remote.is_some() {
                nap = nap.min(self.next_fetch.saturating_duration_since(now));
            }
            std::thread::sleep(nap);
            let now = Instant::now();
            if let Some(r) = &self.remote
                && now >= self.next_fetch
            {
                // A remote on this disk is fetched when it moves (above),
                // and on this schedule while a fetch left it unfetched.
                // Unreachable: tried again after the next pause.
                if on_disk.is_none() || on_disk != tips.tracking {
                    self.fetch(brain, r);
                }
                self.attempt = self.attempt.saturating_add(1);
                let every = if head {
                    HEAD_FETCH
                } else {
                    pause(self.attempt)
                };
                self.next_fetch = Instant::now() + every;
            }
        }
    }
}

impl Waiting {
    /// Fetches the remote's registry branch, within what is left of the
    /// wait (in process when the remote is on this disk); an unreachable
    /// remote is tried again later.
    fn fetch(&self, brain: &Brain, remote: &Remote) {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if !left.is_zero() {
            let _ = local_remote::fetch(&brain.workdir, remote, false, left.min(FETCH_TIMEOUT));
        }
    }
}

/// Why a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Woke {
    /// The registry changed.
    Changed,
    /// A lease is due for renewal.
    Renew,
    /// The wait is over.
    TimeUp,
    /// Whoever waited is gone.
    Stopped,
}

/// The pause before the `attempt`-th fetch: 0.5 s, growing by half each
/// time, at most 5 s.
pub(crate) fn pause(attempt: u32) -> Duration {
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
