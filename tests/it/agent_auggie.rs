//! Auggie, which runs only against Augment's service (behind `auggie
//! login`): bsi's install in `.augment/settings.json` beside a person's own
//! settings, and the answers of the real binary to its events
//! (tests/fixtures/agents/auggie-*, from the event builder and answer
//! parser of its released package, 0.36.0).

use serde_json::Value;

use crate::agent_hook::{PLAN, event, hook, other_holds};
use crate::common::Brain;

/// A person's `.augment/settings.json` as people write it: JSONC, a
/// comment, an inline object, an escape, no final newline.
const MINE: &str = "{\n  // my Augment settings\n  \"model\": \"sonnet\",\n  \"mcpServers\": {\"docs\": {\"command\": \"docs-mcp\", \"args\": []}},\n  \"note\": \"caf\\u00e9\"\n}";

#[test]
fn auggie_install_lives_beside_the_person_s_settings_and_uninstall_gives_them_back() {
    let b = Brain::new();
    b.write(".augment/settings.json", MINE);
    b.git(&["add", ".augment/settings.json"]);
    b.git(&["commit", "-qm", "my augment settings"]);
    b.bsi(&["agent", "install", "auggie"])
        .ok()
        .stdout_has(".augment/settings.json")
        .stdout_has("registered the MCP server `bsi mcp` in .augment/settings.json");
    let text = b.read(".augment/settings.json");
    assert!(text.contains("// my Augment settings"), "{text}");
    // bsi's server joins the person's inline object, laid out as it is.
    assert!(
        text.contains(
            "\"mcpServers\": {\"docs\": {\"command\": \"docs-mcp\", \"args\": []}, \"bsi\": {"
        ),
        "{text}"
    );
    assert!(text.contains("\"note\": \"caf\\u00e9\""), "{text}");
    let v: Value = serde_json::from_str(
        &text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .expect("JSON once the comment is gone");
    let pre = &v["hooks"]["PreToolUse"][0];
    assert_eq!(
        pre["matcher"],
        "str-replace-editor|save-file|remove-files|launch-process"
    );
    assert!(
        pre["hooks"][0]["command"]
            .as_str()
            .is_some_and(|c| c.starts_with("bsi hook edit --tool auggie || echo")),
        "{v}"
    );
    assert_eq!(v["mcpServers"]["bsi"]["args"][2], "auggie", "{v}");
    b.bsi(&["agent", "doctor", "auggie"])
        .stdout_has("ok      hooks")
        .stdout_has("ok      mcp");
    b.bsi(&["agent", "uninstall", "auggie"]).ok();
    assert_eq!(b.read(".augment/settings.json"), MINE);
}

#[test]
fn auggie_s_edits_inside_another_session_s_section_are_refused_in_its_protocol() {
    let b = Brain::new();
    b.bsi(&["agent", "install", "auggie"]).ok();
    other_holds(&b, "projets/plan.md#Goals");
    let deny = |r: &crate::common::Run| -> Option<String> {
        assert_eq!(r.code, 0, "{r:?}");
        if r.stdout.trim().is_empty() {
            return None;
        }
        let v = r.json();
        (v["hookSpecificOutput"]["permissionDecision"] == "deny").then(|| {
            v["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
    };
    // The session starts: the briefing goes into Auggie's context.
    let start = hook(
        &b,
        "session-start",
        "auggie",
        &event(&b, "auggie-sessionstart.json"),
    );
    start.ok();
    let context = start.json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(context.contains("bsi guards this repository"), "{context}");
    // `str-replace-editor` inside Goals: refused, naming the holder; the
    // file untouched.
    let held = hook(
        &b,
        "edit",
        "auggie",
        &event(&b, "auggie-pretooluse-str-replace-editor.json"),
    );
    let reason = deny(&held).expect("refused");
    assert!(
        reason.contains("bsi: refused") && reason.contains("sess-other"),
        "{reason}"
    );
    assert_eq!(b.read("projets/plan.md"), PLAN);
    // `remove-files` of the held file: refused; a free new file passes.
    let removed = hook(
        &b,
        "edit",
        "auggie",
        &event(&b, "auggie-pretooluse-remove-files.json"),
    );
    assert!(deny(&removed).is_some(), "{removed:?}");
    let saved = hook(
        &b,
        "edit",
        "auggie",
        &event(&b, "auggie-pretooluse-save-file.json"),
    );
    assert_eq!(deny(&saved), None, "{saved:?}");
    // The shell: a command that writes into the held section is refused.
    let shell = event(&b, "auggie-pretooluse-launch-process.json")
        .replace("bsi status", "echo x > projets/plan.md");
    assert!(deny(&hook(&b, "edit", "auggie", &shell)).is_some());
    // Stop with nothing held: the agent stops.
    let stop = hook(&b, "stop", "auggie", &event(&b, "auggie-stop.json"));
    stop.ok();
    assert!(!stop.stdout.contains("\"block\""), "{stop:?}");
}
