//! The core's next steps ([`bsi_core::next`]) in each medium's words: a
//! line with its shell command for the command line, git's hooks and the
//! agent tools' hooks (whose agents run commands in a shell), and a call of
//! bsi's own tools for MCP. An error's hint ([`crate::hints`]) is said the
//! same ways: a `hint:` line, the JSON document's `next`, MCP's calls. A
//! person's step is labelled as such wherever an agent may read it. Pure.

use serde_json::{Value, json};

use bsi_core::next::{NextStep, Step, Who};
use bsi_core::words::{Here, command_line};

use crate::hints::{Hint, HintStep};

/// A step as one line for a shell: what it does, then its command.
/// `same`: the session and agent flags of the run that was answered.
pub fn line(step: &NextStep, same: &[&str]) -> String {
    line_at(step, &Here::root(), same)
}

/// [`line`] printed at `here`: its scopes as typed from there.
pub fn line_at(step: &NextStep, here: &Here, same: &[&str]) -> String {
    let text = format!("{}: `{}`", step.purpose(), step.command_at(here, same));
    labelled(step.who, text)
}

/// `text`, labelled when it is a person's step.
fn labelled(who: Who, text: String) -> String {
    match who {
        Who::Person => format!("a person's step (tell the user): {text}"),
        Who::ThisSession | Who::AnySession => text,
    }
}

/// Every step as lines for a shell, in order.
pub fn lines(steps: &[NextStep], same: &[&str]) -> Vec<String> {
    steps.iter().map(|s| line(s, same)).collect()
}

/// [`lines`] printed at `here`.
pub fn lines_at(steps: &[NextStep], here: &Here, same: &[&str]) -> Vec<String> {
    steps.iter().map(|s| line_at(s, here, same)).collect()
}

/// Every step as lines for an agent whose edit was refused: its own steps
/// end with the edit tried again.
pub fn edit_lines(steps: &[NextStep], same: &[&str]) -> Vec<String> {
    steps
        .iter()
        .map(|s| match s.who {
            Who::ThisSession => format!("{}, then edit again", line(s, same)),
            Who::AnySession | Who::Person => line(s, same),
        })
        .collect()
}

/// The steps as MCP reads them: the calls of bsi's own tools an agent may
/// make (`next_calls`), and the words of every other step: a shell command
/// of its own to run, or a person's step to tell the user about.
pub fn calls(steps: &[NextStep]) -> (Vec<Value>, Vec<String>) {
    let mut calls = Vec::new();
    let mut words = Vec::new();
    for step in steps {
        let why = step.purpose();
        match (&step.step, step.who) {
            (Step::Claim { scopes, .. }, Who::ThisSession) => calls.push(json!({
                "tool": "claim",
                "arguments": {"scopes": scopes.iter().map(ToString::to_string).collect::<Vec<_>>()},
                "why": why,
            })),
            (
                Step::Wait {
                    scopes, seconds, ..
                },
                Who::ThisSession,
            ) => calls.push(json!({
                "tool": "claim",
                "arguments": {
                    "scopes": scopes.iter().map(ToString::to_string).collect::<Vec<_>>(),
                    "wait": seconds,
                },
                "why": why,
            })),
            (_, Who::Person) => words.push(format!("Tell the user: {}", line(step, &[]))),
            (_, Who::ThisSession | Who::AnySession) => {
                words.push(format!("Run in a shell: {}", line(step, &[])));
            }
        }
    }
    (calls, words)
}

/// A call of [`calls`] in words: `claim` {"scopes":[…]} (why).
pub fn call_line(call: &Value) -> String {
    format!(
        "`{}` {} ({})",
        call["tool"].as_str().unwrap_or("claim"),
        call["arguments"],
        call["why"].as_str().unwrap_or("")
    )
}

/// The steps as data, for every JSON document that answers a request.
pub fn json(steps: &[NextStep]) -> Value {
    serde_json::to_value(steps).unwrap_or(Value::Null)
}

/// A step of a hint as words for a shell: what it is for, then its
/// command, if it has one.
pub fn hint_step_line(step: &HintStep) -> String {
    let text = match &step.command {
        Some(argv) => format!("{}: `{}`", step.purpose, command_line(argv)),
        None => step.purpose.clone(),
    };
    labelled(step.who, text)
}

/// A hint as the command line and the hooks say it: its steps in one line
/// (the words after `hint: `).
pub fn hint_line(hint: &Hint) -> String {
    hint.steps
        .iter()
        .map(hint_step_line)
        .collect::<Vec<_>>()
        .join("; ")
}

/// A hint's steps as data, for every JSON document of an error (`next`):
/// each with `who`, `purpose` and `command` (its words, or null).
pub fn hint_json(hint: &Hint) -> Value {
    serde_json::to_value(&hint.steps).unwrap_or(Value::Null)
}

/// A step of a hint as a call of bsi's own tools, when one takes it and it
/// is not a person's: `bsi open SCOPE…` is `claim`, `bsi status` is
/// `status`.
fn hint_call(step: &HintStep) -> Option<Value> {
    if step.who == Who::Person {
        return None;
    }
    let argv: Vec<&str> = step.command.as_ref()?.iter().map(String::as_str).collect();
    match argv.as_slice() {
        ["bsi", "status"] => Some(json!({
            "tool": "status",
            "arguments": {},
            "why": step.purpose,
        })),
        ["bsi", "open", scopes @ ..]
            if !scopes.is_empty() && scopes.iter().all(|s| !s.starts_with('-')) =>
        {
            Some(json!({
                "tool": "claim",
                "arguments": {"scopes": scopes},
                "why": step.purpose,
            }))
        }
        _ => None,
    }
}

/// A hint as MCP says it: the calls of bsi's own tools an agent may make
/// (`next_calls`), and the hint's words, where such a step is said as its
/// call and every other as for a shell.
pub fn hint_calls(hint: &Hint) -> (Vec<Value>, String) {
    let mut calls = Vec::new();
    let mut words = Vec::new();
    for step in &hint.steps {
        match hint_call(step) {
            Some(call) => {
                words.push(format!("call {}", call_line(&call)));
                calls.push(call);
            }
            None => words.push(hint_step_line(step)),
        }
    }
    (calls, words.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bsi_core::scope::Scope;

    #[test]
    fn a_persons_step_is_labelled_and_never_a_call() {
        let steps = [
            NextStep {
                step: Step::Wait {
                    scopes: vec![Scope::File("a.md".into())],
                    holders: vec!["s1".into()],
                    ahead: Vec::new(),
                    seconds: 600,
                },
                who: Who::ThisSession,
            },
            NextStep {
                step: Step::Release {
                    session: "gone".into(),
                },
                who: Who::Person,
            },
        ];
        let shell = lines(&steps, &["--session", "me"]);
        assert!(
            shell[0].ends_with("`bsi open a.md --session me --wait 10m`"),
            "{shell:?}"
        );
        assert!(shell[1].starts_with("a person's step"), "{shell:?}");
        let (calls, words) = calls(&steps);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0]["arguments"]["wait"], 600);
        assert_eq!(words.len(), 1);
        assert!(
            words[0].starts_with("Tell the user: a person's step"),
            "{words:?}"
        );
    }

    #[test]
    fn a_hint_is_one_line_for_a_shell_data_for_json_and_calls_for_mcp() {
        let hint = Hint {
            steps: vec![
                HintStep {
                    who: Who::ThisSession,
                    purpose: "claim it whole".into(),
                    command: Some(vec!["bsi".into(), "open".into(), "my notes.md".into()]),
                },
                HintStep {
                    who: Who::AnySession,
                    purpose: "see the sessions".into(),
                    command: Some(vec!["bsi".into(), "status".into()]),
                },
                HintStep {
                    who: Who::Person,
                    purpose: "to close it anyway".into(),
                    command: Some(vec!["bsi".into(), "open".into(), "a.md".into()]),
                },
                HintStep {
                    who: Who::ThisSession,
                    purpose: "then retry".into(),
                    command: None,
                },
            ],
        };
        assert_eq!(
            hint_line(&hint),
            "claim it whole: `bsi open 'my notes.md'`; see the sessions: `bsi status`; \
             a person's step (tell the user): to close it anyway: `bsi open a.md`; then retry"
        );
        let data = hint_json(&hint);
        assert_eq!(
            data[0],
            json!({"who": "this_session", "purpose": "claim it whole", "command": ["bsi", "open", "my notes.md"]})
        );
        assert_eq!(data[3]["command"], Value::Null);
        let (calls, said) = hint_calls(&hint);
        assert_eq!(calls.len(), 2, "a person's step is never a call: {calls:?}");
        assert_eq!(calls[0]["tool"], "claim");
        assert_eq!(calls[0]["arguments"]["scopes"], json!(["my notes.md"]));
        assert_eq!(calls[1]["tool"], "status");
        assert!(
            said.starts_with(
                "call `claim` {\"scopes\":[\"my notes.md\"]} (claim it whole); call `status`"
            ),
            "{said}"
        );
        assert!(
            said.contains("; a person's step (tell the user): to close it anyway: `bsi open a.md`"),
            "{said}"
        );
    }
}
