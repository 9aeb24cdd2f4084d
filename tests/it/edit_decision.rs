//! One decision on an edit, whichever door asks: the agent tools' edit hook
//! and MCP's `check` give the same answer on the same edit — through a
//! symbolic link, and for the registry's copy in every hook mode.

use crate::agent_hook::{PLAN, denial, event, other_holds, with_stdin};
use crate::common::{Brain, Run};
use crate::mcp::{Client, call, connect, doc, runtime, text};

const SESSION: (&str, &str) = ("BSI_SESSION", "sess-mine");

/// Claude Code's edit hook, for the session `sess-mine`.
fn claude_edit(b: &Brain, input: &str) -> Run {
    with_stdin(b, &["hook", "edit", "--tool", "claude"], input, &[SESSION])
}

/// MCP's `check` of `args`, for the session `sess-mine`: its text and its
/// structured document.
fn check(b: &Brain, args: serde_json::Value) -> (String, serde_json::Value) {
    runtime().block_on(async {
        let c = connect(b, &[], &[SESSION], Client::default()).await;
        let r = call(&c, "check", args).await;
        let out = (text(&r), doc(&r).clone());
        c.cancel().await.expect("stop the server");
        out
    })
}

/// A Claude Code `Write` of `rel` with `content`.
fn write_event(b: &Brain, rel: &str, content: &str) -> String {
    let v: serde_json::Value =
        serde_json::from_str(&event(b, "claude-pretooluse-write.json")).expect("json");
    let mut v = v;
    v["tool_input"]["file_path"] = b.path().join(rel).to_str().expect("utf-8").into();
    v["tool_input"]["content"] = content.into();
    v.to_string()
}

#[test]
fn check_of_a_link_to_a_claimed_file_is_refused_as_the_edit_hook_refuses_it() {
    let b = Brain::new();
    other_holds(&b, "projets/plan.md");
    std::os::unix::fs::symlink("projets/plan.md", b.path().join("alias.md")).expect("symlink");
    let before = (b.registry(), b.commits(), b.user_state());

    let hook = claude_edit(
        &b,
        &event(&b, "claude-pretooluse-edit-file-link.json").replace("plan-link.md", "alias.md"),
    );
    let reason = denial("claude", &hook).unwrap_or_else(|| panic!("let through: {hook:?}"));
    assert!(
        reason.contains("projets/plan.md") && reason.contains("sess-other"),
        "{reason}"
    );

    let (said, d) = check(&b, serde_json::json!({"path": "alias.md"}));
    assert_eq!(d["refused"], true, "{said}");
    assert_eq!(d["decision"], "deny", "{d}");
    // Judged under the name of the file the link reaches.
    assert_eq!(d["path"], "projets/plan.md", "{d}");
    assert_eq!(d["holders"][0]["session"], "sess-other", "{d}");
    assert!(!said.contains("would be allowed"), "{said}");
    assert!(said.contains("sess-other"), "{said}");
    // The same lines through the link: the same answer as the plain path.
    let (_, by_lines) = check(&b, serde_json::json!({"path": "alias.md", "lines": [7]}));
    let (_, plain) = check(
        &b,
        serde_json::json!({"path": "projets/plan.md", "lines": [7]}),
    );
    assert_eq!(by_lines["refused"], true, "{by_lines}");
    assert_eq!(by_lines["findings"], plain["findings"]);

    // Neither door wrote anything.
    assert_eq!((b.registry(), b.commits(), b.user_state()), before);
    assert_eq!(
        std::fs::read_to_string(b.path().join("projets/plan.md")).expect("read"),
        PLAN
    );
}

#[test]
fn the_registry_copy_gets_one_answer_from_check_and_the_hook_in_each_mode() {
    let b = Brain::new();
    let copy = "BRAIN-INDEX.md";
    let text_before = std::fs::read_to_string(b.path().join(copy)).expect("the copy");
    for (mode, refused) in [("warn", false), ("normal", true), ("strict", true)] {
        b.git(&["config", "bsi.hookMode", mode]);
        let before = (b.registry(), b.commits(), b.user_state());

        let hook = claude_edit(&b, &write_event(&b, copy, "# mine now\n"));
        let denied = denial("claude", &hook);
        assert_eq!(denied.is_some(), refused, "{mode}: {hook:?}");
        // Refused or not, the agent is told it is the registry's copy.
        assert!(
            hook.stdout.contains("is the copy of the registry"),
            "{mode}: {hook:?}"
        );

        let (said, d) = check(&b, serde_json::json!({"path": copy}));
        assert_eq!(d["refused"], refused, "{mode}: {said}");
        assert_eq!(d["decision"], if refused { "deny" } else { "warn" }, "{d}");
        assert!(
            said.contains("is the copy of the registry"),
            "{mode}: {said}"
        );

        assert_eq!(
            (b.registry(), b.commits(), b.user_state()),
            before,
            "{mode}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(b.path().join(copy)).expect("the copy"),
        text_before
    );
}
