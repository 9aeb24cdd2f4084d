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
//!
//! Every room that moves a request asks this machine, from the state it
//! knows the request is in; a move the machine refuses is a bug of that
//! room ([`step`], [`allowed`]: a debug build stops there, a release build
//! goes on as before):
//! - `store::requests` files a request where writers meet (`Planned`, or
//!   `Refused` for a waiter planning again, to `Filed`), gathers it for
//!   the holder of the lock (`Gathered`) and withdraws it (`Withdraw` or
//!   `Stop`); the file a request is kept in is its state's;
//! - `publish` keeps a [`Ledger`] of the requests a holder or a carrier
//!   deals with (`Carry`, then `Land`, `Post` or `Lose`), its own starting
//!   where its writer knows it (sent back by a holder: `Lose`, `Planned`),
//!   withdraws its post (`Withdraw`, `Stop` on an interrupt), skips a
//!   post whose lease lapsed (`Lapse`) by what the machine lets carry, and
//!   hands a close's scope to each waiter whose mark it holds (`Refused`,
//!   `Hand`);
//! - `api::open` files each plan of a waiter from where its request stands
//!   and leaves by [`waiter_leaves`]: a close's grant found is `Hand` then
//!   `Land`, then `Stop` or `TimeUp`.

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

/// `moved`, a move its caller knows the machine allows. One the machine
/// refuses is a bug of the caller: a debug build stops there (every test
/// runs one); a release build goes on with `otherwise`, as the code did
/// before it asked.
pub fn allowed<T>(moved: Result<T, Illegal>, otherwise: T) -> T {
    match moved {
        Ok(to) => to,
        Err(e) => {
            debug_assert!(false, "{e}");
            otherwise
        }
    }
}

/// The state `event` leads a request in `state` to, a move its caller
/// knows the machine allows ([`allowed`]): a request the machine does not
/// let move stays where it stood.
pub fn step(state: State, event: Event) -> State {
    allowed(next(state, event), state)
}

/// Whether a request in `state` may be carried out now: a live post, or
/// one its holder or its own writer has in hand. Never one landed,
/// withdrawn (a lapsed post) or given up.
pub fn may_carry(state: State) -> bool {
    next(state, Event::Carry).is_ok()
}

/// Where a waiter's request stands once it finds the grant a close's
/// write decided while it waited: handed (the close found it refused and
/// alive, its mark held), then landed with that write.
pub fn handed_over(state: State) -> State {
    step(step(state, Event::Hand), Event::Land)
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

/// What a waiter whose request stands at `state` does as it leaves for
/// `why`, and the state its request ends in, moved by the machine: landed
/// (a close granted it while it waited) it holds the grant when its time
/// ran out, and closes it again when it stopped; refused, it gives up.
/// [`Illegal`] when it cannot leave from there: a handoff decided to it is
/// still being carried out ([`State::Handed`]), which holding its mark
/// rules out.
pub fn leave(state: State, why: Leaving) -> Result<(Answer, State), Illegal> {
    let (answer, end) = leaving(why, state == State::Landed);
    let to = match (state, why) {
        (State::Landed, Leaving::TimeUp) => State::Landed,
        (from, Leaving::Stopped) => next(from, Event::Stop)?,
        (from, Leaving::TimeUp) => next(from, Event::TimeUp)?,
    };
    debug_assert_eq!(to, end, "the machine and the leaving agree");
    Ok((answer, to))
}

/// [`leave`] for a waiter whose request stood at `waiting` (refused;
/// planned when it leaves before its first plan; landed when it found its
/// grant already), `granted` saying whether a close granted it while it
/// waited (read after its mark was taken away): handed over first when it
/// was and had not found it yet ([`handed_over`]), then left. A move the
/// machine refuses is a bug of the caller ([`allowed`]), which then answers
/// as [`leaving`] says.
pub fn waiter_leaves(waiting: State, why: Leaving, granted: bool) -> (Answer, State) {
    let at = match waiting {
        State::Landed => State::Landed,
        _ if granted => handed_over(waiting),
        _ => waiting,
    };
    allowed(leave(at, why), leaving(why, granted))
}

/// The requests one writer deals with in one write, each where the
/// machine says it stands: a holder's and a carrier's (`publish`) moves
/// go through [`next`] here, and what may be carried out is what the
/// machine lets take [`Event::Carry`] — never a request found carried out
/// already, withdrawn or given up.
#[derive(Debug, Default, Clone)]
pub struct Ledger {
    states: std::collections::BTreeMap<String, State>,
}

impl Ledger {
    /// Request `id` as this writer first finds it (its own or one it
    /// gathered: `Gathered`; another machine's post: `Posted`); one it
    /// knows already stays where it stands.
    pub fn found(&mut self, id: &str, state: State) {
        self.states.entry(id.to_string()).or_insert(state);
    }

    /// Where request `id` stands, when this writer knows it.
    pub fn state(&self, id: &str) -> Option<State> {
        self.states.get(id).copied()
    }

    /// Moves request `id` by `event`: its new state, or [`Illegal`] (and
    /// it stays) when the machine does not allow the move from there.
    pub fn moved(&mut self, id: &str, event: Event) -> Result<State, Illegal> {
        let Some(state) = self.states.get_mut(id) else {
            return Err(Illegal {
                state: State::Planned,
                event,
            });
        };
        *state = next(*state, event)?;
        Ok(*state)
    }

    /// [`Ledger::moved`], a move its caller knows the machine allows
    /// ([`allowed`]): request `id`'s state after it.
    pub fn step(&mut self, id: &str, event: Event) -> Option<State> {
        let moved = self.moved(id, event).map(Some);
        allowed(moved, self.state(id))
    }

    /// Whether request `id` may be carried out now ([`may_carry`]).
    pub fn may_carry(&self, id: &str) -> bool {
        self.state(id).is_some_and(may_carry)
    }

    /// Request `id`, carried out by a commit another writer landed: it
    /// is landed, and no move of this writer carries it out again.
    pub fn landed_elsewhere(&mut self, id: &str) {
        let state = self.states.entry(id.to_string()).or_insert(State::Posted);
        *state = match *state {
            State::Landed => State::Landed,
            s => next(s, Event::Carry)
                .and_then(|c| next(c, Event::Land))
                .unwrap_or(State::Landed),
        };
    }
}

#[cfg(test)]
mod model;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ledger_never_lets_a_request_landed_or_withdrawn_be_carried_out() {
        let mut l = Ledger::default();
        l.found("own", State::Gathered);
        l.found("post", State::Posted);
        assert!(l.may_carry("own") && l.may_carry("post"));
        // Carried and lost: planned again, carried again, landed.
        assert_eq!(l.moved("own", Event::Carry), Ok(State::Carried));
        assert_eq!(l.moved("own", Event::Lose), Ok(State::Gathered));
        assert_eq!(l.moved("own", Event::Carry), Ok(State::Carried));
        assert_eq!(l.moved("own", Event::Land), Ok(State::Landed));
        assert!(!l.may_carry("own"));
        assert!(l.moved("own", Event::Carry).is_err());
        assert_eq!(l.state("own"), Some(State::Landed));
        // Found again as gathered: still landed.
        l.found("own", State::Gathered);
        assert!(!l.may_carry("own"));
        // A post whose lease lapsed is never carried out.
        assert_eq!(l.moved("post", Event::Lapse), Ok(State::Withdrawn));
        assert!(!l.may_carry("post"));
        // Carried out by another writer, whatever this one knew of it.
        l.found("gathered", State::Gathered);
        l.landed_elsewhere("gathered");
        l.landed_elsewhere("unknown");
        assert_eq!(l.state("gathered"), Some(State::Landed));
        assert_eq!(l.state("unknown"), Some(State::Landed));
        assert!(!l.may_carry("gathered") && !l.may_carry("unknown"));
        // A request it never found moves nowhere.
        assert!(l.moved("nobody", Event::Land).is_err());
    }

    #[test]
    fn the_moves_of_the_meeting_and_of_a_post_are_the_machine_s() {
        // Filed by its writer, or by a waiter planning again.
        assert_eq!(step(State::Planned, Event::File), State::Filed);
        assert_eq!(step(State::Refused, Event::File), State::Filed);
        // Gathered by a holder, or withdrawn before: never both.
        let gathered = step(State::Filed, Event::Gather);
        assert_eq!(gathered, State::Gathered);
        assert!(next(gathered, Event::Withdraw).is_err());
        let withdrawn = step(State::Filed, Event::Withdraw);
        assert_eq!(withdrawn, State::Withdrawn);
        assert!(next(withdrawn, Event::Gather).is_err());
        // A post taken back, stopped or lapsed is never carried out.
        for e in [Event::Withdraw, Event::Stop, Event::Lapse] {
            assert!(!may_carry(step(State::Posted, e)), "{e:?}");
        }
        assert!(may_carry(State::Posted));
        // Sent back by its holder: its own writer carries it out.
        assert!(may_carry(step(State::Gathered, Event::Lose)));
    }

    #[test]
    fn a_waiter_leaves_by_where_its_request_stands() {
        assert_eq!(handed_over(State::Refused), State::Landed);
        let all = [Leaving::Stopped, Leaving::TimeUp];
        for why in all {
            for granted in [false, true] {
                let (answer, end) = waiter_leaves(State::Refused, why, granted);
                assert_eq!((answer, end), leaving(why, granted), "{why:?} {granted}");
            }
            // A grant it found already is the one it holds.
            assert_eq!(waiter_leaves(State::Landed, why, true), leaving(why, true));
            // Before its first plan: nothing of it stands.
            assert_eq!(
                waiter_leaves(State::Planned, why, false),
                (Answer::Nothing, State::GivenUp)
            );
            // Its handoff on the way: the machine has no such move.
            assert!(leave(State::Handed, why).is_err());
        }
    }
}
