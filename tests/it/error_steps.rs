//! One error, every medium: a claim of a section of a mistyped file
//! (`projets/plann.md#Risks`). The command line (`--json` and its words)
//! and MCP (its error's data) give the same typed next steps — each with
//! who may take it, what it is for and its command as words — the words
//! writing the command for a shell, MCP offering it as a call of its own
//! `claim`. A forced step is a person's, in data and in words.

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::common::Brain;
use crate::mcp::{call, connect, doc, runtime, text};

const TYPO: &str = "projets/plann.md#Risks";

/// The steps every medium gives for the typo.
fn steps() -> Value {
    json!([{
        "who": "this_session",
        "purpose": "did you mean projets/plan.md? claim its section",
        "command": ["bsi", "open", "projets/plan.md#Risks"],
    }])
}

#[test]
fn an_error_gives_the_same_typed_steps_on_the_command_line_and_through_mcp() {
    let b = Brain::new();
    // The command line, --json: the hint as text and its steps as data.
    let r = b.bsi(&["open", TYPO, "--session", "sess-me", "--json"]);
    let j = r.json();
    assert_eq!(j["error"], "scope", "{}", r.stdout);
    assert_eq!(j["next"], steps(), "{}", r.stdout);
    let said =
        "did you mean projets/plan.md? claim its section: `bsi open 'projets/plan.md#Risks'`";
    assert_eq!(j["hint"], said);
    // Its words: the same step, its command written for a shell.
    let r = b.bsi(&["open", TYPO, "--session", "sess-me"]);
    assert_eq!(r.code, j["exit"].as_i64().expect("exit") as i32);
    r.stderr_has(&format!("hint: {said}"));

    // MCP: an error whose data carries the same steps, and the step its
    // `claim` takes as a call, which grants the section.
    runtime().block_on(async {
        let c = connect(
            &b,
            &[],
            &[("BSI_SESSION", "sess-me")],
            crate::mcp::Client::default(),
        )
        .await;
        let args = json!({"scopes": [TYPO]});
        let e = c
            .call_tool(
                CallToolRequestParams::new("claim")
                    .with_arguments(args.as_object().cloned().expect("an object")),
            )
            .await
            .expect_err("no file plann.md");
        let rmcp::ServiceError::McpError(e) = e else {
            panic!("{e:?}");
        };
        let data = e.data.as_ref().expect("data");
        assert_eq!(data["error"], "scope", "{data}");
        assert_eq!(data["next"], steps(), "{data}");
        let calls = data["next_calls"].as_array().expect("next_calls");
        assert_eq!(calls.len(), 1, "{data}");
        assert_eq!(calls[0]["tool"], "claim");
        assert_eq!(
            calls[0]["arguments"],
            json!({"scopes": ["projets/plan.md#Risks"]})
        );
        assert!(
            e.message
                .contains("hint: call `claim` {\"scopes\":[\"projets/plan.md#Risks\"]}"),
            "{}",
            e.message
        );
        let r = call(&c, "claim", calls[0]["arguments"].clone()).await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
        assert_eq!(doc(&r)["opened"][0]["scope"], "projets/plan.md#Risks");
        c.cancel().await.expect("close the client");
    });
    assert!(
        b.active()
            .iter()
            .any(|row| row.contains("sess-me") && row.contains("projets/plan.md#Risks")),
        "{}",
        b.registry()
    );
}

#[test]
fn a_forced_step_of_an_error_is_a_persons_in_data_and_in_words() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "sess-other"]).ok();
    // A close of another session's claim, unforced.
    let r = b.bsi(&["close", "sess-other", "--session", "sess-me", "--json"]);
    let j = r.json();
    let next = j["next"].as_array().expect("next");
    let forced: Vec<&Value> = next
        .iter()
        .filter(|s| {
            s["command"]
                .as_array()
                .is_some_and(|w| w.iter().any(|w| w == "--force"))
        })
        .collect();
    assert_eq!(forced.len(), 1, "{}", r.stdout);
    assert_eq!(forced[0]["who"], "person");
    assert_eq!(
        forced[0]["command"],
        json!(["bsi", "close", "sess-other", "--force"])
    );
    let r = b.bsi(&["close", "sess-other", "--session", "sess-me"]);
    r.stderr_has(
        "a person's step (tell the user): to close it anyway (recorded as forced by this session, and its holder is told): `bsi close sess-other --force`",
    );
    assert!(b.active().iter().any(|row| row.contains("sess-other")));
}
