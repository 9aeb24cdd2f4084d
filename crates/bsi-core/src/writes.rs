//! A write's states and transitions, one machine for the writers of one
//! clone, the clones of one machine and other machines: what a request
//! may become from what it is, and what a waiter that leaves answers.
//! Pure: [`next`] takes a state and an event and gives the next state, or
//! says the event cannot happen there ([`Illegal`]).
//!
//! ```text
//!            File             Gather            Carry            Land
//! Planned ─────────► Filed ───────────► Gathered ─────────► Carried ─────────► Landed
//!    │                 │  Withdraw/Stop    │  Post  │ Lose ▲   │ Lose: Gathered    ▲
//!    │ Carry (alone)   ▼                   ▼        └──────┘   │ Post: Posted      │
//!    │              Withdrawn ◄──────── Posted ──── Carry ─────┘                   │
//!    │                          Withdraw/Lapse/Stop                                │
//!    │ Refuse (Gathered, Carried, Planned)                                         │
//!    ▼                       Hand (alive when decided)          Land               │
//! Refused ───────────────────────────────────────► Handed ────────────────────────┘
//!    │  File/Carry: planned again as it waits        │ Lose: Refused
//!    │ Stop/TimeUp
//!    ▼
//! GivenUp ◄──── Stop (Landed by a handoff while it left: closed again)
//! ```
//!
//! The invariants, checked by the model below over every interleaving of
//! three writers with a crash or stop at each transition:
//! - a request is carried out (lands) at most once;
//! - only a live requester is granted: a handoff is decided to a waiter
//!   alive at that moment, whose mark the deciding writer holds until its
//!   write ends;
//! - a requester that reported refusal or gave up is never granted later;
//! - a waiter that stops or runs out of time after a handoff was decided
//!   finds its grant, and closes it (stopped) or says it holds it (time
//!   up).

/// Where one write request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum State {
    /// Decided by its writer's plan, in memory only.
    Planned,
    /// Filed where its writers meet, for whoever holds the lock.
    Filed,
    /// Taken by the holder of the lock (its own writer or another).
    Gathered,
    /// In a commit its holder or carrier pushes.
    Carried,
    /// Posted on the remote, with a lease, for another machine's carrier.
    Posted,
    /// Taken back before anyone carried it out: nothing was written.
    Withdrawn,
    /// Granted by a close's write, decided while its waiter was alive.
    Handed,
    /// On the registry branch.
    Landed,
    /// Its plan refused it (a waiter keeps its place in the queue).
    Refused,
    /// Its writer stopped or ran out of time: nothing of it stands.
    GivenUp,
}

/// What happens to a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    /// Its writer files it where writers meet.
    File,
    /// A holder takes it.
    Gather,
    /// A holder or carrier commits it, to push.
    Carry,
    /// The push that carried it lost its race, it is posted for others.
    Post,
    /// Its writer takes it back (stopped, Ctrl-C) before anyone took it.
    Withdraw,
    /// Its post's lease ran out: no carrier carries it.
    Lapse,
    /// A close decides to grant it (its waiter alive then).
    Hand,
    /// The commit that carries it reaches the branch.
    Land,
    /// The write carrying it did not land (lost race, holder failed).
    Lose,
    /// Its plan refuses it.
    Refuse,
    /// Its writer stops (whoever asked is gone).
    Stop,
    /// Its writer's wait runs out.
    TimeUp,
}

/// An event that cannot happen to a request in that state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a write that is {state:?} cannot take {event:?}")]
pub struct Illegal {
    /// Where the request stood.
    pub state: State,
    /// What was asked of it.
    pub event: Event,
}

/// The state `event` leads a request in `state` to.
pub fn next(state: State, event: Event) -> Result<State, Illegal> {
    use Event as E;
    use State as S;
    let to = match (state, event) {
        (S::Planned, E::File) => S::Filed,
        // A write alone (bounded) or planned again by its own writer.
        (S::Planned | S::Gathered | S::Refused, E::Carry) => S::Carried,
        (S::Planned | S::Gathered | S::Carried, E::Refuse) => S::Refused,
        (S::Planned, E::Stop | E::TimeUp) => S::GivenUp,
        (S::Filed, E::Gather) => S::Gathered,
        (S::Filed, E::Withdraw | E::Stop) => S::Withdrawn,
        // Sent back to its writer, which carries it out itself.
        (S::Gathered, E::Lose) => S::Planned,
        (S::Gathered | S::Carried, E::Post) => S::Posted,
        // Lost its race: planned again on the winner's registry.
        (S::Carried, E::Lose) => S::Gathered,
        (S::Carried | S::Handed, E::Land) => S::Landed,
        // Only a live post: a carrier never carries a lapsed one.
        (S::Posted, E::Carry) => S::Carried,
        (S::Posted, E::Withdraw | E::Lapse | E::Stop) => S::Withdrawn,
        // A waiter plans again as it wakes.
        (S::Refused, E::File) => S::Filed,
        (S::Refused, E::Hand) => S::Handed,
        (S::Refused, E::Stop | E::TimeUp) => S::GivenUp,
        // The close's write did not land: still waiting.
        (S::Handed, E::Lose) => S::Refused,
        // Stopped with a grant a close decided while it waited: the grant
        // is closed again.
        (S::Landed, E::Stop) => S::GivenUp,
        _ => return Err(Illegal { state, event }),
    };
    Ok(to)
}

/// Why a waiter leaves the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Leaving {
    /// Whoever asked went away (a signal, a cancelled MCP call).
    Stopped,
    /// Its wait ran out.
    TimeUp,
}

/// What a waiter that leaves does and says, once its mark is taken away
/// and any write decided while it was there has ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Answer {
    /// Nothing of it stands: it says so ("nothing was written").
    Nothing,
    /// It holds the grant a close decided while it waited: it says so.
    Holds,
    /// It closes again the grant a close decided while it waited, then
    /// says nothing was granted.
    CloseAgain,
}

/// What a waiter leaving for `why` does, `granted` saying whether a close
/// granted it while it waited (read after its mark was taken away: no
/// later write can grant it), and the state its request ends in.
pub fn leaving(why: Leaving, granted: bool) -> (Answer, State) {
    match (why, granted) {
        (_, false) => (Answer::Nothing, State::GivenUp),
        (Leaving::TimeUp, true) => (Answer::Holds, State::Landed),
        (Leaving::Stopped, true) => (Answer::CloseAgain, State::GivenUp),
    }
}

#[cfg(test)]
mod model;
