//! Gemini CLI: `BeforeTool` events for `write_file` and `replace`,
//! `SessionStart`, `AfterAgent` (its stop: the end of a turn), the answers,
//! and the hook entries of `.gemini/settings.json`. Gemini CLI reads stdout
//! as JSON whenever the hook exits 0, so even an allow prints `{}`.
//! `BeforeTool` cannot add to the agent's context: what an agent is told
//! when it is let through goes to the person (`systemMessage`).

use std::path::Path;

use serde_json::{Value, json};

use super::{
    Answer, Briefing, EditOp, EditRequest, EventError, HookKind, PreEdit, Replacement, Verdict,
    check_event, event_cwd, file_edit, first_line, object, opt_bool, req_obj, req_str,
};
use std::path::PathBuf;

use super::doctor::Item;
use super::install::{HookEntry, HookLayout};
use super::mcp_config::McpSettings;
use super::{
    AgentTool, Places, SessionStart, Stop, Tool, session_start_event, stop_event, stop_hook_active,
};

/// The tools whose calls change files, and `run_shell_command`, Gemini's
/// shell: the files its commands write are judged too
/// ([`super::shell_writes`]).
pub const EDIT_TOOLS: &str = "write_file|replace|run_shell_command";

/// Gemini's shell tool.
pub const SHELL_TOOL: &str = "run_shell_command";

/// Reads a `BeforeTool` event.
pub fn parse_edit(input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
    let o = object(input)?;
    check_event(&o, "BeforeTool")?;
    let session_id = req_str(&o, "session_id")?;
    let cwd = event_cwd(&o, cwd)?;
    let tool_name = req_str(&o, "tool_name")?;
    if tool_name == SHELL_TOOL {
        return super::claude::shell(
            super::Tool::GEMINI,
            session_id,
            cwd,
            tool_name,
            &o,
            Some("dir_path"),
        );
    }
    let op = match tool_name.as_str() {
        "write_file" => {
            let input = req_obj(&o, "tool_input")?;
            EditOp::Write {
                content: req_str(input, "content")?,
            }
        }
        "replace" => {
            let input = req_obj(&o, "tool_input")?;
            let expected = match input.get("expected_replacements") {
                None | Some(Value::Null) => 1,
                Some(Value::Number(n)) => n.as_u64().unwrap_or(1),
                Some(_) => {
                    return Err(EventError::BadField {
                        field: "expected_replacements",
                        want: "a number",
                    });
                }
            };
            let all = expected > 1 || opt_bool(input, "allow_multiple")?.unwrap_or(false);
            EditOp::Replace(vec![Replacement {
                old: req_str(input, "old_string")?,
                new: req_str(input, "new_string")?,
                all,
            }])
        }
        _ => return Ok(PreEdit::Other { tool_name }),
    };
    let input = req_obj(&o, "tool_input")?;
    let path = req_str(input, "file_path")?;
    Ok(PreEdit::Edit(EditRequest {
        tool: super::Tool::GEMINI,
        session_id,
        edits: vec![file_edit(&cwd, path, op)],
        cwd,
        tool_name,
    }))
}

/// The answer to a `BeforeTool` event: `decision: "deny"` with the reason.
pub fn answer(verdict: &Verdict) -> Answer {
    match verdict {
        Verdict::Allow => Answer::json(&json!({})),
        Verdict::Claimed { message } => Answer::json(&json!({
            "systemMessage": format!("bsi: {}", first_line(message)),
        })),
        Verdict::Deny { reason } => Answer::json(&json!({
            "decision": "deny",
            "reason": reason,
        })),
        Verdict::AllowWithWarning { warning } => Answer::json(&json!({
            "systemMessage": format!("bsi: {warning}"),
        }))
        .with_stderr(warning),
    }
}

/// The tool session of an `AfterTool` event (after `write_file`,
/// `replace` or `run_shell_command`), `None` when the event is another; and
/// whether anything may have been claimed before the call (false for a
/// shell command that writes no file).
pub fn after_tool_session(input: &str) -> Option<(String, bool)> {
    let o = object(input).ok()?;
    if o.get("hook_event_name").and_then(Value::as_str) != Some("AfterTool") {
        return None;
    }
    let id = req_str(&o, "session_id").ok()?;
    let shell_without_writes = o.get("tool_name").and_then(Value::as_str) == Some(SHELL_TOOL)
        && !o
            .get("tool_input")
            .and_then(|i| i.get("command"))
            .and_then(Value::as_str)
            .is_some_and(super::shell_writes::may_write);
    Some((id, !shell_without_writes))
}

/// The answer to `AfterTool`: what bsi claimed for the agent before the
/// edit, as context Gemini appends to the tool's result for the model —
/// `BeforeTool` has no channel to the model but a refusal.
pub fn answer_after_tool(message: Option<&str>) -> Answer {
    match message {
        Some(m) => Answer::json(&json!({
            "hookSpecificOutput": {
                "hookEventName": "AfterTool",
                "additionalContext": m,
            }
        })),
        None => Answer::json(&json!({})),
    }
}

/// The answer to `SessionStart`: the briefing goes into the agent's context.
pub fn answer_session_start(briefing: &Briefing) -> Answer {
    Answer::json(&json!({
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": briefing.context,
        }
    }))
}

/// The answer to `AfterAgent`: `decision: "deny"` sends the agent back with
/// the reason as its next prompt.
pub fn answer_stop(reason: Option<&str>) -> Answer {
    match reason {
        Some(r) => Answer::json(&json!({ "decision": "deny", "reason": r })),
        None => Answer::json(&json!({})),
    }
}

/// What the session-start context says about passing the session to bsi.
/// Gemini gives hooks no way to set the shell's environment, and an
/// `export` does not last from one shell call to the next; but the agent's
/// shell commands run under the Gemini process the session-start hook
/// recorded (`by_process`), and bsi finds the session from there.
pub fn session_note(session: &str, by_process: bool) -> String {
    super::tool::session_note_by_process("Gemini CLI", session, by_process)
}

/// The project settings file, relative to the work tree root.
pub const SETTINGS: &str = ".gemini/settings.json";

/// The hook entries bsi adds to `.gemini/settings.json`.
pub(super) const ENTRIES: &[HookEntry] = &[
    ("BeforeTool", Some(EDIT_TOOLS), HookKind::Edit),
    // The same command after the edit: tells the model what was claimed.
    ("AfterTool", Some(EDIT_TOOLS), HookKind::Edit),
    ("SessionStart", None, HookKind::SessionStart),
    ("AfterAgent", None, HookKind::Stop),
];

/// Whether Gemini CLI loads the project's settings: folder trust off in
/// the user's settings, or the folder trusted in `trustedFolders.json`.
fn trust(root: &Path, places: &Places) -> Item {
    let dir = places.home.as_ref().map(|h| h.join(".gemini"));
    let read = |name: &str| -> Option<Value> {
        let text = std::fs::read_to_string(dir.as_ref()?.join(name)).ok()?;
        serde_json::from_str(&text).ok()
    };
    let trust_off = read("settings.json")
        .is_some_and(|s| s["security"]["folderTrust"]["enabled"] == Value::Bool(false));
    if trust_off {
        return Item {
            what: "trust",
            ok: Some(true),
            detail: "folder trust is off in the user's Gemini settings: project settings load"
                .into(),
            next: None,
        };
    }
    let folders = read("trustedFolders.json");
    // TRUST_FOLDER trusts a folder and what is under it; TRUST_PARENT the
    // folder's parent and what is under that.
    let trusted = folders
        .as_ref()
        .and_then(Value::as_object)
        .is_some_and(|f| {
            f.iter().any(|(path, level)| {
                let base = match level.as_str() {
                    Some("TRUST_FOLDER") => Some(Path::new(path)),
                    Some("TRUST_PARENT") => Path::new(path).parent(),
                    _ => None,
                };
                base.is_some_and(|b| root.starts_with(b))
            })
        });
    if trusted {
        Item {
            what: "trust",
            ok: Some(true),
            detail: "the folder is trusted: Gemini CLI loads its project settings".into(),
            next: None,
        }
    } else {
        Item {
            what: "trust",
            ok: Some(false),
            detail: "the folder is not trusted: Gemini CLI loads no project settings here, so no bsi hook runs".into(),
            next: Some(format!(
                "start `gemini` in {} and trust the folder when asked (`--skip-trust` loads no project settings either)",
                root.display()
            )),
        }
    }
}

/// Gemini CLI.
pub struct Gemini;

impl AgentTool for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn title(&self) -> &'static str {
        "Gemini CLI"
    }

    fn parse_edit(&self, input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
        parse_edit(input, cwd)
    }

    fn answer(&self, verdict: &Verdict) -> Answer {
        answer(verdict)
    }

    fn parse_session_start(&self, input: &str, cwd: &Path) -> Result<SessionStart, EventError> {
        session_start_event(Tool::GEMINI, input, cwd, "SessionStart", &["session_id"])
    }

    fn answer_session_start(&self, briefing: &Briefing) -> Answer {
        answer_session_start(briefing)
    }

    /// `AfterAgent`, the end of a turn.
    fn parse_stop(&self, input: &str, cwd: &Path) -> Result<Stop, EventError> {
        stop_event(Tool::GEMINI, input, cwd, &["session_id"], &|o| {
            stop_hook_active(o, "AfterAgent")
        })
    }

    fn answer_stop(&self, reason: Option<&str>) -> Answer {
        answer_stop(reason)
    }

    /// Gemini CLI reads stdout as JSON whenever the hook exits 0: `{}`.
    fn fail_open_quietly(&self, _: HookKind, warning: &str) -> Answer {
        Answer {
            exit_code: 0,
            stdout: "{}\n".into(),
            stderr: String::new(),
            refuses: false,
        }
        .with_stderr(warning)
    }

    fn missing_answer(&self, _: HookKind, text: &str) -> Value {
        json!({ "systemMessage": text })
    }

    fn session_note(&self, session: &str, by_process: bool, _: Option<&Path>) -> String {
        session_note(session, by_process)
    }

    /// `BeforeTool` cannot add to the agent's context: `AfterTool` gives the
    /// model what bsi said when it let the edit through.
    fn tells_model_after_edit(&self) -> bool {
        true
    }

    fn after_edit_session(&self, input: &str) -> Option<(String, bool)> {
        after_tool_session(input)
    }

    fn answer_after_edit(&self, message: Option<&str>) -> Answer {
        answer_after_tool(message)
    }

    fn settings_file(&self) -> &'static str {
        SETTINGS
    }

    fn entries(&self) -> &'static [HookEntry] {
        ENTRIES
    }

    fn hook_layout(&self) -> HookLayout {
        HookLayout::Grouped { named: true }
    }

    fn user_settings_file(&self, places: &Places) -> Option<PathBuf> {
        Some(places.home.as_ref()?.join(".gemini").join("settings.json"))
    }

    fn install_notes(&self, _: &Path, _: &Path) -> Vec<String> {
        vec![
            "Gemini CLI loads project settings, bsi's hooks with them, only in a trusted folder; `--skip-trust` loads none.".into(),
        ]
    }

    fn mcp_settings(&self) -> McpSettings {
        McpSettings::Json {
            file: SETTINGS,
            key: "mcpServers",
            stdio: false,
        }
    }

    fn trust(&self, root: &Path, _: &Path, places: &Places) -> Item {
        trust(root, places)
    }

    fn project_shortcuts(&self) -> Option<&'static str> {
        Some(
            "`gemini --skip-trust`, and any start in a folder Gemini CLI does not trust, load no project settings: bsi's project hooks do not run",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::fixture;
    use super::super::{Tool, new_text, parse_edit as parse, parse_session_start, parse_stop};
    use super::*;
    use std::path::PathBuf;

    fn request(name: &str) -> EditRequest {
        super::super::tests_support::edit_request(Tool::GEMINI, name)
    }

    #[test]
    fn write_file_event() {
        let r = request("gemini-beforetool-write-file.json");
        assert_eq!(r.session_id, "gemini-session-7");
        assert_eq!(
            r.edits[0].path,
            PathBuf::from("/home/me/brain/agents/bob.md")
        );
        assert!(
            matches!(&r.edits[0].op, EditOp::Write { content } if content == "# Bob\n\nhello\n")
        );
    }

    #[test]
    fn replace_event() {
        let r = request("gemini-beforetool-replace.json");
        assert_eq!(
            new_text(&r.edits[0], Some("# Plan\n\nrisk text\n\nrisk text\n")),
            Ok(Some("# Plan\n\nno risk\n\nno risk\n".into()))
        );
    }

    #[test]
    fn other_tools_and_events() {
        let shell = r#"{"session_id":"g","cwd":"/b","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}"#;
        let Ok(PreEdit::Shell(cmd)) = parse(Tool::GEMINI, shell, Path::new("/")) else {
            panic!("{shell}");
        };
        assert_eq!(cmd.edits(&super::super::shell_writes::NoDisk), None);
        let writes = shell.replace(
            "\"ls\"",
            "\"truncate -s 0 plan.md\", \"dir_path\": \"projets\"",
        );
        let Ok(PreEdit::Shell(cmd)) = parse(Tool::GEMINI, &writes, Path::new("/")) else {
            panic!("{writes}");
        };
        let r = cmd
            .edits(&super::super::shell_writes::NoDisk)
            .expect("writes");
        assert_eq!(r.edits[0].path, PathBuf::from("/b/projets/plan.md"));
        // After the call: nothing to tell for a shell command that writes
        // nothing, without a look at the session map.
        let after = shell.replace("BeforeTool", "AfterTool");
        assert_eq!(after_tool_session(&after), Some(("g".into(), false)));
        let after = writes.replace("BeforeTool", "AfterTool");
        assert_eq!(after_tool_session(&after), Some(("g".into(), true)));
        let Ok(PreEdit::Other { .. }) = parse(
            Tool::GEMINI,
            &shell.replace("run_shell_command", "read_file"),
            Path::new("/"),
        ) else {
            panic!("a read is no edit");
        };
        let s = parse_session_start(
            Tool::GEMINI,
            &fixture("gemini-sessionstart.json"),
            Path::new("/"),
        )
        .expect("parses");
        assert_eq!(s.session_id, "gemini-session-7");
        let st = parse_stop(
            Tool::GEMINI,
            &fixture("gemini-afteragent.json"),
            Path::new("/"),
        )
        .expect("parses");
        assert!(!st.continued);
        assert!(matches!(
            parse_stop(
                Tool::GEMINI,
                &fixture("gemini-sessionstart.json"),
                Path::new("/")
            ),
            Err(EventError::WrongEvent { .. })
        ));
        let v: Value = serde_json::from_str(&answer_stop(Some("close")).stdout).expect("json");
        assert_eq!(v["decision"], "deny");
        assert_eq!(v["reason"], "close");
        assert_eq!(answer_stop(None).stdout, "{}\n");
    }

    #[test]
    fn answers() {
        assert_eq!(answer(&Verdict::Allow).stdout, "{}\n");
        let d = answer(&Verdict::Deny {
            reason: "held".into(),
        });
        assert_eq!(d.exit_code, 0);
        let v: Value = serde_json::from_str(&d.stdout).expect("json");
        assert_eq!(v["decision"], "deny");
        assert_eq!(v["reason"], "held");
        let w = answer(&Verdict::AllowWithWarning {
            warning: "oops".into(),
        });
        assert_eq!(w.exit_code, 0);
        let v: Value = serde_json::from_str(&w.stdout).expect("json");
        assert!(v.get("decision").is_none());
        assert!(w.stderr.contains("oops"));
        let s = answer_session_start(&Briefing {
            context: "ctx".into(),
            session: None,
        });
        let v: Value = serde_json::from_str(&s.stdout).expect("json");
        assert_eq!(v["hookSpecificOutput"]["additionalContext"], "ctx");
    }
}
