//! What to do next, as data: each step with its arguments and who may take
//! it, decided once for every door. The command line renders a step as a
//! shell command, MCP as a call of its own tools, an agent tool's hook as
//! a line of its answer; each door says it in its own words, and none
//! decides which steps there are.
//!
//! A step another session's claim needs — closing it, releasing it — is
//! never an agent's to take: it is [`Who::Person`]'s, and every door that
//! speaks to an agent labels it so. Pure: the caller gives the time.

use chrono::{DateTime, FixedOffset};
use serde::Serialize;

use crate::guard::ways::{self, Standing};
use crate::registry::Claim;
use crate::scope::Scope;
use crate::words::{Here, command_line, open_command_at};

/// Who may take a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Who {
    /// The session that was answered: the agent (or person) itself.
    ThisSession,
    /// Any session, this one included: nothing of anyone's is changed.
    AnySession,
    /// A person, who knows what the sessions involved are doing: never an
    /// agent on its own.
    Person,
}

/// Why a claim is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Why {
    /// A free part next to what was refused.
    Nearby,
    /// The free part of a request granted all or none.
    FreePart,
    /// What a change touches outside the session's claims.
    Outside,
}

/// One thing to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Step {
    /// Claim these free scopes.
    Claim {
        /// The scopes.
        #[serde(serialize_with = "as_written")]
        scopes: Vec<Scope>,
        /// Why they are offered.
        why: Why,
    },
    /// Wait in the queue for these scopes until their holders close.
    Wait {
        /// The scopes asked for.
        #[serde(serialize_with = "as_written")]
        scopes: Vec<Scope>,
        /// The sessions at work that hold them.
        holders: Vec<String>,
        /// The sessions that wait for them ahead in the queue.
        ahead: Vec<String>,
        /// How long to wait, in seconds.
        seconds: u64,
    },
    /// Mark the claims whose time ran out stale (`bsi watchdog`).
    MarkStale {
        /// The session whose claim is overdue.
        session: String,
    },
    /// Free the stale claims of a session that is gone.
    Release {
        /// The session.
        session: String,
    },
    /// Run a refused git move in a form that takes only this session's
    /// own changes, leaving every other session's work in place.
    OwnOnly {
        /// The command's words.
        argv: Vec<String>,
    },
}

/// Scopes as they are written on a command line.
fn as_written<S: serde::Serializer>(scopes: &[Scope], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(scopes.iter().map(ToString::to_string))
}

/// A step, and who may take it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NextStep {
    /// What to do.
    #[serde(flatten)]
    pub step: Step,
    /// Who may do it.
    pub who: Who,
}

/// How long a conflict's wait offers to wait: ten minutes.
pub const WAIT_SECONDS: u64 = 600;

impl NextStep {
    /// The command that takes the step, for a shell, with `same` (the
    /// session and agent flags of the run that was answered) on the commands
    /// that act as that session.
    pub fn command(&self, same: &[&str]) -> String {
        self.command_at(&Here::root(), same)
    }

    /// [`NextStep::command`] printed at `here`: its scopes as typed from
    /// there ([`Here`]).
    pub fn command_at(&self, here: &Here, same: &[&str]) -> String {
        match &self.step {
            Step::Claim { scopes, .. } => open_command_at(here, scopes, same),
            Step::Wait {
                scopes, seconds, ..
            } => {
                let wait = duration_word(*seconds);
                let mut more = same.to_vec();
                more.extend(["--wait", wait.as_str()]);
                open_command_at(here, scopes, &more)
            }
            Step::MarkStale { .. } => command_line(["bsi", "watchdog"]),
            Step::Release { session } => ways::release(session),
            Step::OwnOnly { argv } => command_line(argv),
        }
    }

    /// What the step does, in a few words, for any medium.
    pub fn purpose(&self) -> String {
        match &self.step {
            Step::Claim {
                why: Why::Nearby, ..
            } => "claim a free scope nearby instead".into(),
            Step::Claim {
                why: Why::FreePart, ..
            } => "claim the free part of the request alone".into(),
            Step::Claim {
                why: Why::Outside, ..
            } => "claim what the change touches first".into(),
            Step::Wait {
                holders,
                ahead,
                seconds,
                ..
            } => {
                let mut text = format!("wait in the queue up to {}", duration_word(*seconds));
                if !holders.is_empty() {
                    text.push_str(&format!(" for {} to close", holders.join(" and ")));
                }
                if !ahead.is_empty() {
                    text.push_str(&format!(", behind {}", ahead.join(" and ")));
                }
                text + " (exit 0 once it is yours, exit 3 if it is still held)"
            }
            Step::MarkStale { session } => format!(
                "the claim of {session} is overdue (its time ran out; the watchdog has not run), so mark it stale"
            ),
            Step::Release { session } => {
                format!("free the stale claims of {session}, once sure it is gone")
            }
            Step::OwnOnly { .. } => {
                "take only your own changes, leaving the other sessions' work in place".into()
            }
        }
    }
}

/// `600` as `10m`, `90` as `90s`.
fn duration_word(seconds: u64) -> String {
    if seconds >= 60 && seconds.is_multiple_of(60) {
        format!("{}m", seconds / 60)
    } else {
        format!("{seconds}s")
    }
}

/// A conflict, as the core decided it: what its next steps are made of.
#[derive(Debug, Clone, Default)]
pub struct Conflict<'a> {
    /// The claims in the way, each with whether it is in the stale table.
    pub held: Vec<(&'a Claim, bool)>,
    /// Free scopes next to what was refused.
    pub nearby: &'a [Scope],
    /// The free part of a request granted all or none.
    pub free: &'a [Scope],
    /// What a change touches outside the session's claims (strict mode).
    pub outside: &'a [Scope],
    /// What the session asked for, or what its change needs.
    pub wanted: &'a [Scope],
    /// The sessions waiting ahead in the queue for what was asked.
    pub ahead: Vec<String>,
    /// Whether the session waited already.
    pub waited: bool,
}

impl Conflict<'_> {
    /// Its next steps at `now`, in order: a free claim, what a change needs
    /// claimed first, the wait for the holders at work, then what frees the
    /// holders that are not at work (the watchdog, then a person's release).
    pub fn steps(&self, now: DateTime<FixedOffset>) -> Vec<NextStep> {
        let holders = ways::holders(self.held.iter().copied());
        let mut steps = Vec::new();
        let mut claim = |scopes: Vec<Scope>, why: Why| {
            steps.push(NextStep {
                step: Step::Claim { scopes, why },
                who: Who::ThisSession,
            });
        };
        if let Some(first) = self.nearby.first() {
            claim(vec![first.clone()], Why::Nearby);
        } else if !self.free.is_empty() {
            claim(self.free.to_vec(), Why::FreePart);
        }
        for s in self.outside {
            claim(vec![s.clone()], Why::Outside);
        }
        let active = ways::sessions(&holders, Standing::Active, now);
        if (!active.is_empty() || !self.ahead.is_empty()) && !self.waited && !self.wanted.is_empty()
        {
            steps.push(NextStep {
                step: Step::Wait {
                    scopes: self.wanted.to_vec(),
                    holders: active.iter().map(ToString::to_string).collect(),
                    ahead: self.ahead.clone(),
                    seconds: WAIT_SECONDS,
                },
                who: Who::ThisSession,
            });
        }
        for s in ways::sessions(&holders, Standing::Overdue, now) {
            steps.push(NextStep {
                step: Step::MarkStale { session: s.into() },
                who: Who::AnySession,
            });
            steps.push(NextStep {
                step: Step::Release { session: s.into() },
                who: Who::Person,
            });
        }
        for s in ways::sessions(&holders, Standing::Stale, now) {
            steps.push(NextStep {
                step: Step::Release { session: s.into() },
                who: Who::Person,
            });
        }
        steps
    }
}

/// The steps an agent may take on its own, and a person's, apart.
pub fn by_who(steps: &[NextStep]) -> (Vec<&NextStep>, Vec<&NextStep>) {
    steps.iter().partition(|s| s.who != Who::Person)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::tests::{claim as held, t0};

    fn claim(session: &str, file: &str) -> Claim {
        held(session, "codex", Scope::File(file.into()))
    }

    #[test]
    fn a_holder_at_work_is_waited_for_and_never_released() {
        let c = claim("a", "notes/plan.md");
        let wanted = [Scope::File("notes/plan.md".into())];
        let mut conflict = Conflict {
            held: vec![(&c, false)],
            wanted: &wanted,
            ..Conflict::default()
        };
        let steps = conflict.steps(t0());
        assert_eq!(steps.len(), 1, "{steps:?}");
        assert_eq!(steps[0].who, Who::ThisSession);
        assert_eq!(
            steps[0].command(&["--session", "b"]),
            "bsi open notes/plan.md --session b --wait 10m"
        );
        conflict.waited = true;
        let after = conflict.steps(t0());
        assert!(after.is_empty(), "{after:?}");
    }

    #[test]
    fn holders_not_at_work_are_a_persons_to_free_after_the_watchdog() {
        let c = claim("gone", "a.md");
        let steps = Conflict {
            held: vec![(&c, false)],
            ..Conflict::default()
        }
        .steps(c.expires);
        let who: Vec<Who> = steps.iter().map(|s| s.who).collect();
        assert_eq!(who, [Who::AnySession, Who::Person]);
        assert_eq!(steps[0].command(&[]), "bsi watchdog");
        assert_eq!(steps[1].command(&[]), "bsi release gone --confirm");
        let stale = Conflict {
            held: vec![(&c, true)],
            ..Conflict::default()
        }
        .steps(t0());
        assert_eq!(stale.len(), 1);
        assert_eq!(stale[0].who, Who::Person);
        let (agent, person) = by_who(&steps);
        assert_eq!((agent.len(), person.len()), (1, 1));
    }

    #[test]
    fn a_free_scope_comes_first_and_one_only() {
        let c = claim("a", "a.md");
        let nearby = [Scope::File("b.md".into()), Scope::File("c.md".into())];
        let steps = Conflict {
            held: vec![(&c, false)],
            nearby: &nearby,
            ..Conflict::default()
        }
        .steps(t0());
        assert_eq!(
            steps[0].step,
            Step::Claim {
                scopes: vec![Scope::File("b.md".into())],
                why: Why::Nearby
            }
        );
    }

    #[test]
    fn a_step_as_json_names_its_kind_and_who() {
        let step = NextStep {
            step: Step::Release {
                session: "s".into(),
            },
            who: Who::Person,
        };
        let v = serde_json::to_value(&step).expect("json");
        assert_eq!(
            v,
            serde_json::json!({"step": "release", "session": "s", "who": "person"})
        );
    }
}
