//! One conflict, every door: `projets/plan.md#Goals` held by session
//! sess-other, wanted by another session. The command line (`bsi open
//! --json` and its words), each agent tool's edit hook, MCP's `claim` and
//! MCP's `check` answer with the same next steps, as data where the medium
//! carries data and as each step's command where it carries words; none
//! hands an agent a step that acts on another session's claim.

use serde_json::{Value, json};

use crate::agent_hook::{TOOLS, hook, other_holds, replace_event};
use crate::common::Brain;
use crate::mcp::{call, connect, doc, runtime, text};

const GOALS: &str = "projets/plan.md#Goals";

/// The refusal's text for the agent, in each tool's protocol (the five of
/// `agent_hook::denial`, and Cline and OpenCode).
fn reason(tool: &str, b: &Brain) -> String {
    let r = match tool {
        "cline" => {
            let ev = crate::agent_hook::event(b, "cline-pretooluse-editor-replace.json")
                .replace(
                    "/tmp/brain/notes/plan.md",
                    &b.path().join("projets/plan.md").display().to_string(),
                )
                .replace("/tmp/brain", &b.path().display().to_string())
                .replace("\"old goal\"", "\"goal text\"");
            hook(b, "edit", tool, &ev)
        }
        "opencode" => {
            let ev = crate::agent_hook::event(b, "opencode-tool-execute-before-edit.json");
            hook(b, "edit", tool, &ev)
        }
        _ => hook(
            b,
            "edit",
            tool,
            &replace_event(b, tool, "projets/plan.md", "goal text", "better goal text"),
        ),
    };
    assert_eq!(r.code, 0, "{tool}: {r:?}");
    let v = r.json();
    let s = |v: &Value| v.as_str().map(String::from);
    let said = match tool {
        "cline" => s(&v["context"]),
        "opencode" => s(&v["deny"]),
        _ => crate::agent_hook::denial(tool, &r),
    };
    said.unwrap_or_else(|| panic!("{tool}: not refused: {r:?}"))
}

/// The session a hook's refusal names (`Your bsi session: S.`, its last
/// mention: a first call of Cline carries the briefing before it).
fn session_in(reason: &str) -> String {
    let at = reason.rfind("Your bsi session: ").expect("the session") + 18;
    reason[at..]
        .split('.')
        .next()
        .expect("a session")
        .to_string()
}

/// The command a step's words end with, for `session`.
fn command(step: &Value, session: &str) -> String {
    let scopes = |v: &Value| -> Vec<String> {
        v.as_array()
            .expect("scopes")
            .iter()
            .map(|s| {
                let s = s.as_str().expect("a scope");
                if s.contains('#') {
                    format!("'{s}'")
                } else {
                    s.to_string()
                }
            })
            .collect()
    };
    match step["step"].as_str().expect("a step") {
        "claim" => format!(
            "bsi open {} --session {session}",
            scopes(&step["scopes"]).join(" ")
        ),
        "wait" => format!(
            "bsi open {} --session {session} --wait 10m",
            scopes(&step["scopes"]).join(" ")
        ),
        "mark_stale" => "bsi watchdog".into(),
        "release" => format!(
            "bsi release {} --confirm",
            step["session"].as_str().expect("session")
        ),
        other => panic!("a step of no known kind: {other}"),
    }
}

#[test]
fn one_conflict_has_the_same_next_steps_at_every_door() {
    let b = Brain::new();
    other_holds(&b, GOALS);

    // The command line, as data.
    let cli = b.bsi(&["open", GOALS, "--session", "sess-b", "--json"]);
    cli.code(3);
    let steps = cli.json()["next"].clone();
    let kinds: Vec<&str> = steps
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["step"].as_str().expect("kind"))
        .collect();
    assert_eq!(kinds, ["claim", "wait"], "{steps}");
    assert_eq!(steps[1]["holders"], json!(["sess-other"]), "{steps}");
    for s in steps.as_array().expect("steps") {
        assert_eq!(s["who"], "this_session", "{steps}");
    }
    // …and in words, each step with its command.
    let words = b.bsi(&["open", GOALS, "--session", "sess-b"]);
    words.code(3);
    for s in steps.as_array().expect("steps") {
        words.stderr_has(&format!("`{}`", command(s, "sess-b")));
    }

    // Each agent tool's edit hook: the same steps, for the hook's session.
    for tool in TOOLS.iter().copied().chain(["cline", "opencode"]) {
        let said = reason(tool, &b);
        let session = session_in(&said);
        for s in steps.as_array().expect("steps") {
            let c = command(s, &session);
            assert!(
                said.contains(&format!("`{c}`")),
                "{tool} lacks `{c}`:\n{said}"
            );
        }
        assert!(!said.contains("--force"), "{tool}: {said}");
        assert!(!said.contains("bsi close sess-other"), "{tool}: {said}");
        assert!(!said.contains("bsi release"), "{tool}: {said}");
    }

    // MCP: `claim` and `check` carry the same steps as data.
    runtime().block_on(async {
        let c = connect(
            &b,
            &[],
            &[("BSI_SESSION", "sess-b")],
            crate::mcp::Client::default(),
        )
        .await;
        let r = call(&c, "claim", json!({"scopes": [GOALS]})).await;
        assert_eq!(r.is_error, Some(true), "{}", text(&r));
        assert_eq!(doc(&r)["next"], steps, "claim: {}", text(&r));
        // Its words give the time as every other door's words do.
        assert!(
            text(&r).contains("until 2026-03-14 11:30 +00:00") && !text(&r).contains("T11:30"),
            "{}",
            text(&r)
        );
        let calls = doc(&r)["next_calls"].as_array().expect("calls").clone();
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert_eq!(calls[0]["arguments"]["scopes"], steps[0]["scopes"]);
        assert_eq!(calls[1]["arguments"]["wait"], 600);

        let lines = {
            let plan = b.read("projets/plan.md");
            let at = plan
                .lines()
                .position(|l| l == "goal text")
                .expect("the line")
                + 1;
            json!([at, at])
        };
        let r = call(
            &c,
            "check",
            json!({"path": "projets/plan.md", "lines": lines}),
        )
        .await;
        assert_eq!(doc(&r)["refused"], true, "{}", text(&r));
        assert_eq!(doc(&r)["next"], steps, "check: {}", text(&r));
        let reason = doc(&r)["reason"].as_str().expect("reason");
        assert!(!reason.contains("--force"), "{reason}");
        assert!(!reason.contains("bsi release"), "{reason}");
        c.cancel().await.expect("close the client");
    });

    // The commands the words print run as printed: the free claim, then,
    // once the holder closed, the wait (granted at once).
    let claim = crate::ownership::printed(&words.stderr, &command(&steps[0], "sess-b"));
    crate::ownership::sh(&b, &claim, &[]).ok();
    b.bsi(&["close", "sess-other", "--session", "sess-other"])
        .ok();
    let wait = crate::ownership::printed(&words.stderr, &command(&steps[1], "sess-b"));
    crate::ownership::sh(&b, &wait, &[]).ok();
    let mine: Vec<String> = b
        .active()
        .into_iter()
        .filter(|r| r.contains("| sess-b |"))
        .collect();
    assert_eq!(mine.len(), 2, "{:?}", b.active());
    assert!(mine.iter().any(|r| r.contains(GOALS)), "{mine:?}");
}

/// A holder whose claim went stale: every door names its release as a
/// person's step, never as the agent's own.
#[test]
fn a_stale_holders_release_is_a_persons_step_at_every_door() {
    let mut b = Brain::new();
    other_holds(&b, GOALS);
    b.now = "2026-03-14T12:00:00Z".into();
    b.bsi(&["watchdog"]).code(4);
    let cli = b.bsi(&["open", GOALS, "--session", "sess-b", "--json"]);
    cli.code(3);
    let steps = cli.json()["next"].clone();
    let release: Vec<&Value> = steps
        .as_array()
        .expect("steps")
        .iter()
        .filter(|s| s["step"] == "release")
        .collect();
    assert_eq!(release.len(), 1, "{steps}");
    assert_eq!(release[0]["who"], "person");
    assert_eq!(release[0]["session"], "sess-other");
    for tool in TOOLS.iter().copied().chain(["cline", "opencode"]) {
        let said = reason(tool, &b);
        let line = said
            .lines()
            .find(|l| l.contains("`bsi release sess-other --confirm`"))
            .unwrap_or_else(|| panic!("{tool}: no release:\n{said}"));
        assert!(line.contains("a person's step"), "{tool}: {line}");
        assert!(!said.contains("--force"), "{tool}: {said}");
    }
    runtime().block_on(async {
        let c = connect(
            &b,
            &[],
            &[("BSI_SESSION", "sess-b")],
            crate::mcp::Client::default(),
        )
        .await;
        let r = call(&c, "claim", json!({"scopes": [GOALS]})).await;
        assert_eq!(doc(&r)["next"], steps, "{}", text(&r));
        let calls = doc(&r)["next_calls"].as_array().expect("calls");
        assert!(
            calls.iter().all(|c| c["tool"] == "claim"),
            "a call acting on another's claim: {calls:?}"
        );
        assert!(
            text(&r).contains("Tell the user: a person's step"),
            "{}",
            text(&r)
        );
        c.cancel().await.expect("close the client");
    });
}
