//! The core's next steps ([`bsi_core::next`]) in each medium's words: a
//! line with its shell command for the command line, git's hooks and the
//! agent tools' hooks (whose agents run commands in a shell), and a call of
//! bsi's own tools for MCP. A person's step is labelled as such wherever an
//! agent may read it. Pure.

use serde_json::{Value, json};

use bsi_core::next::{NextStep, Step, Who};
use bsi_core::words::Here;

/// A step as one line for a shell: what it does, then its command.
/// `same`: the session and agent flags of the run that was answered.
pub fn line(step: &NextStep, same: &[&str]) -> String {
    line_at(step, &Here::root(), same)
}

/// [`line`] printed at `here`: its scopes as typed from there.
pub fn line_at(step: &NextStep, here: &Here, same: &[&str]) -> String {
    let text = format!("{}: `{}`", step.purpose(), step.command_at(here, same));
    match step.who {
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
}
