//! Cursor: `preToolUse` events for the file tools (`Write`, `Edit`,
//! `StrReplace`, `MultiEdit`, `Delete`) and for `Shell` (the files its
//! commands write), `sessionStart` and `stop`, the
//! answers, and the hook entries of `.cursor/hooks.json`. Cursor names the
//! session `conversation_id` and the project `workspace_roots`.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::doctor::Item;
use super::install::{HookEntry, HookLayout};
use super::mcp_config::McpSettings;
use super::{AgentTool, Places, SessionStart, Stop, Tool, session_start_event, stop_event};
use super::{
    Answer, Briefing, EditOp, EditRequest, EventError, HookKind, PreEdit, Verdict, check_event,
    event_cwd, file_edit, first_line, first_str, object, opt_str, replacement, req_obj,
};

/// Reads a `preToolUse` event.
pub fn parse_edit(input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
    let o = object(input)?;
    check_event(&o, "preToolUse")?;
    let session_id = first_str(&o, &["conversation_id", "session_id"])?;
    let cwd = event_cwd(&o, cwd)?;
    let tool_name = first_str(&o, &["tool_name"])?;
    if tool_name == "Shell" {
        return super::claude::shell(
            super::Tool::CURSOR,
            session_id,
            cwd,
            tool_name,
            &o,
            Some("cwd"),
        );
    }
    let op = match tool_name.as_str() {
        "Write" => {
            let input = req_obj(&o, "tool_input")?;
            if input.contains_key("old_string") {
                EditOp::Replace(vec![replacement(input)?])
            } else {
                let content = opt_str(input, "content")?
                    .or(opt_str(input, "contents")?)
                    .ok_or(EventError::Missing("content"))?;
                EditOp::Write { content }
            }
        }
        "Edit" | "StrReplace" | "search_replace" => {
            EditOp::Replace(vec![replacement(req_obj(&o, "tool_input")?)?])
        }
        "MultiEdit" => {
            let input = req_obj(&o, "tool_input")?;
            let Some(Value::Array(list)) = input.get("edits") else {
                return Err(EventError::Missing("edits"));
            };
            EditOp::Replace(
                list.iter()
                    .map(|e| match e {
                        Value::Object(m) => replacement(m),
                        _ => Err(EventError::BadField {
                            field: "edits",
                            want: "a list of objects",
                        }),
                    })
                    .collect::<Result<_, _>>()?,
            )
        }
        "Delete" => EditOp::Delete,
        _ => return Ok(PreEdit::Other { tool_name }),
    };
    let path = path_of(req_obj(&o, "tool_input")?)?;
    Ok(PreEdit::Edit(EditRequest {
        tool: super::Tool::CURSOR,
        session_id,
        edits: vec![file_edit(&cwd, path, op)],
        cwd,
        tool_name,
    }))
}

fn path_of(input: &Map<String, Value>) -> Result<String, EventError> {
    for k in ["file_path", "path", "target_file"] {
        if let Some(p) = opt_str(input, k)?.filter(|p| !p.is_empty()) {
            return Ok(p);
        }
    }
    Err(EventError::Missing("file_path"))
}

/// The answer to a `preToolUse` event: a refusal is `permission: "deny"`,
/// the reason for the agent in `agent_message`, a line for the person in
/// `user_message`. bsi never answers `permission: "allow"`: the edit hook
/// sees every tool call, and having no objection must not skip the approval
/// Cursor would otherwise ask for.
pub fn answer(verdict: &Verdict) -> Answer {
    match verdict {
        Verdict::Allow => Answer::json(&json!({})),
        Verdict::Claimed { message } => Answer::json(&json!({
            "agent_message": message,
        })),
        Verdict::Deny { reason } => Answer::json(&json!({
            "permission": "deny",
            "agent_message": reason,
            // The reason starts with "bsi: refused: " for the agent; the
            // person reads the first line once, without it.
            "user_message": format!(
                "bsi refused this edit: {}",
                first_line(reason).trim_start_matches("bsi: refused: ")
            ),
        })),
        Verdict::AllowWithWarning { warning } => Answer::json(&json!({
            "user_message": format!("bsi: {warning}"),
        }))
        .with_stderr(warning),
    }
}

/// The answer to `sessionStart`: context for the agent, and `BSI_SESSION`
/// for its shell commands (`env`).
pub fn answer_session_start(briefing: &Briefing) -> Answer {
    let mut out = json!({ "additional_context": briefing.context });
    if let Some(s) = &briefing.session {
        out["env"] = json!({ "BSI_SESSION": s });
    }
    Answer::json(&out)
}

/// The answer to `stop`: a `followup_message` sends the agent back with the
/// reason (the caller gives one only while `loop_count` is 0).
pub fn answer_stop(reason: Option<&str>) -> Answer {
    match reason {
        Some(r) => Answer::json(&json!({ "followup_message": r })),
        None => Answer::default(),
    }
}

/// The project hooks file, relative to the work tree root.
pub const SETTINGS: &str = ".cursor/hooks.json";

/// The hook entries bsi adds to `.cursor/hooks.json`. The edit hook has no
/// matcher: every tool call reaches it, and those that edit no file are let
/// through at once.
pub(super) const ENTRIES: &[HookEntry] = &[
    ("preToolUse", None, HookKind::Edit),
    ("sessionStart", None, HookKind::SessionStart),
    ("stop", None, HookKind::Stop),
];

/// Whether the agent already went on once because of a stop hook: a
/// `loop_count` above 0.
fn loop_count(o: &Map<String, Value>) -> Result<bool, EventError> {
    check_event(o, "stop")?;
    match o.get("loop_count") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Number(n)) => Ok(n.as_u64().is_none_or(|n| n > 0)),
        Some(_) => Err(EventError::BadField {
            field: "loop_count",
            want: "a number",
        }),
    }
}

/// Cursor.
pub struct Cursor;

impl AgentTool for Cursor {
    fn name(&self) -> &'static str {
        "cursor"
    }

    fn title(&self) -> &'static str {
        "Cursor"
    }

    fn parse_edit(&self, input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
        parse_edit(input, cwd)
    }

    fn answer(&self, verdict: &Verdict) -> Answer {
        answer(verdict)
    }

    fn parse_session_start(&self, input: &str, cwd: &Path) -> Result<SessionStart, EventError> {
        session_start_event(
            Tool::CURSOR,
            input,
            cwd,
            "sessionStart",
            &["session_id", "conversation_id"],
        )
    }

    fn answer_session_start(&self, briefing: &Briefing) -> Answer {
        answer_session_start(briefing)
    }

    fn parse_stop(&self, input: &str, cwd: &Path) -> Result<Stop, EventError> {
        stop_event(
            Tool::CURSOR,
            input,
            cwd,
            &["session_id", "conversation_id"],
            &loop_count,
        )
    }

    fn answer_stop(&self, reason: Option<&str>) -> Answer {
        answer_stop(reason)
    }

    fn missing_answer(&self, _: HookKind, text: &str) -> Value {
        json!({ "user_message": text })
    }

    /// The session-start answer sets `BSI_SESSION` (`env`).
    fn session_note(&self, _: &str, _: bool, _: Option<&Path>) -> String {
        "BSI_SESSION is set to it in your shell".to_string()
    }

    fn settings_file(&self) -> &'static str {
        SETTINGS
    }

    fn entries(&self) -> &'static [HookEntry] {
        ENTRIES
    }

    fn hook_layout(&self) -> HookLayout {
        HookLayout::Flat {
            command_key: "command",
            typed: false,
            mend_matcher: false,
        }
    }

    fn mcp_settings(&self) -> McpSettings {
        McpSettings::Json {
            file: ".cursor/mcp.json",
            key: "mcpServers",
            stdio: false,
        }
    }

    fn trust(&self, _: &Path, _: &Path, _: &Places) -> Item {
        Item {
            what: "trust",
            ok: None,
            detail: "Cursor runs project hooks without a trust step bsi can see".into(),
            next: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::fixture;
    use super::super::{Tool, new_text, parse_edit as parse, parse_session_start, parse_stop};
    use super::*;
    use std::path::PathBuf;

    fn request(name: &str) -> EditRequest {
        super::super::tests_support::edit_request(Tool::CURSOR, name)
    }

    #[test]
    fn write_event() {
        let r = request("cursor-pretooluse-write.json");
        assert_eq!(r.session_id, "cursor-conv-42");
        assert_eq!(r.cwd, PathBuf::from("/home/me/brain"));
        assert_eq!(
            r.edits[0].path,
            PathBuf::from("/home/me/brain/agents/alice.md")
        );
        assert_eq!(
            new_text(&r.edits[0], Some("old")),
            Ok(Some("# Alice\n\nrewritten\n".into()))
        );
    }

    #[test]
    fn delete_event() {
        let r = request("cursor-pretooluse-delete.json");
        assert_eq!(r.edits[0].op, EditOp::Delete);
    }

    #[test]
    fn shell_is_read_for_the_files_it_writes() {
        let got = parse(
            Tool::CURSOR,
            &fixture("cursor-pretooluse-shell.json"),
            Path::new("/"),
        );
        let Ok(PreEdit::Shell(cmd)) = got else {
            panic!("{got:?}");
        };
        assert_eq!(cmd.dir, PathBuf::from("/home/me/brain"));
        assert_eq!(cmd.edits(&super::super::shell_writes::NoDisk), None);
        let writes = fixture("cursor-pretooluse-shell.json")
            .replace("\"bsi status\"", "\"echo x >> agents/alice.md\"");
        let Ok(PreEdit::Shell(cmd)) = parse(Tool::CURSOR, &writes, Path::new("/")) else {
            panic!("{writes}");
        };
        let r = cmd
            .edits(&super::super::shell_writes::NoDisk)
            .expect("writes");
        assert_eq!(
            r.edits[0].path,
            PathBuf::from("/home/me/brain/agents/alice.md")
        );
    }

    #[test]
    fn session_start_and_stop() {
        let s = parse_session_start(
            Tool::CURSOR,
            &fixture("cursor-sessionstart.json"),
            Path::new("/"),
        )
        .expect("parses");
        assert_eq!(s.session_id, "cursor-conv-42");
        let st =
            parse_stop(Tool::CURSOR, &fixture("cursor-stop.json"), Path::new("/")).expect("parses");
        assert!(!st.continued);
        let looped = fixture("cursor-stop.json").replace("\"loop_count\": 0", "\"loop_count\": 1");
        assert!(
            parse_stop(Tool::CURSOR, &looped, Path::new("/"))
                .expect("parses")
                .continued
        );
    }

    #[test]
    fn answers() {
        let d = answer(&Verdict::Deny {
            reason: "bsi: refused: projets/plan.md#Goals is held by sess-1\nnext: bsi open …"
                .into(),
        });
        let v: Value = serde_json::from_str(&d.stdout).expect("json");
        assert_eq!(v["permission"], "deny");
        assert!(
            v["agent_message"]
                .as_str()
                .is_some_and(|m| m.contains("next:"))
        );
        assert_eq!(
            v["user_message"],
            "bsi refused this edit: projets/plan.md#Goals is held by sess-1"
        );
        // No objection is not a permission: Cursor's own approval stays.
        assert_eq!(answer(&Verdict::Allow).stdout, "{}\n");
        let w = answer(&Verdict::AllowWithWarning {
            warning: "w".into(),
        });
        let v: Value = serde_json::from_str(&w.stdout).expect("json");
        assert!(v.get("permission").is_none());
        assert!(w.stderr.contains('w'));
        let c: Value = serde_json::from_str(
            &answer(&Verdict::Claimed {
                message: "you hold a.md".into(),
            })
            .stdout,
        )
        .expect("json");
        assert!(c.get("permission").is_none());
        assert_eq!(c["agent_message"], "you hold a.md");
        let s = answer_session_start(&Briefing {
            context: "ctx".into(),
            session: Some("sess-1".into()),
        });
        let v: Value = serde_json::from_str(&s.stdout).expect("json");
        assert_eq!(v["additional_context"], "ctx");
        assert_eq!(v["env"]["BSI_SESSION"], "sess-1");
        let st: Value = serde_json::from_str(&answer_stop(Some("close")).stdout).expect("json");
        assert_eq!(st["followup_message"], "close");
    }
}
