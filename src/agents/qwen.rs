//! Qwen Code: `PreToolUse` events for its `edit`, `write_file`,
//! `notebook_edit` and `run_shell_command` tools, `SessionStart` and
//! `Stop`, the answers, and the hook entries of `.qwen/settings.json`.
//!
//! Qwen Code speaks Claude Code's hook protocol (its hook runner reads
//! `hookSpecificOutput.permissionDecision`, `additionalContext`, a stop's
//! `decision: "block"`), with its own tool names and Claude Code's
//! snake_case inputs: `edit` sends `file_path`, `old_string`,
//! `new_string`, `replace_all`; `write_file` sends `file_path`,
//! `content`; `run_shell_command` sends `command` and, when the model names
//! one, `directory`. So the answers are Claude Code's ([`super::claude`]),
//! but for one thing: Qwen Code drops a `PreToolUse` hook's
//! `additionalContext` when it lets the call through, and gives the model
//! only a `PostToolUse` hook's. So bsi's edit hook also runs after the edit
//! tools (as in Gemini CLI, Qwen Code's ancestor), and hands the model then
//! what it said before the edit (a claim on write).
//!
//! Qwen Code loads a project's hooks only in a trusted folder; folder trust
//! is off unless the user's settings turn it on (`security.folderTrust`),
//! and then `~/.qwen/trustedFolders.json` records it. `--bare`, safe mode
//! and `disableAllHooks` run no hook.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::doctor::Item;
use super::install::{HookEntry, HookLayout};
use super::mcp_config::McpSettings;
use super::{
    AgentTool, Answer, Briefing, EditOp, EditRequest, EventError, FileEdit, HookKind, Places,
    PreEdit, SessionStart, Stop, Tool, Verdict, check_event, event_cwd, file_edit, object, opt_str,
    replacement, req_obj, req_str, session_start_event, stop_event, stop_hook_active,
};

/// The tools whose calls change files, and `run_shell_command`, Qwen Code's
/// shell: the files its commands write are judged too.
pub const EDIT_TOOLS: &str = "edit|write_file|notebook_edit|run_shell_command";

/// Reads a `PreToolUse` event.
pub fn parse_edit(input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
    let o = object(input)?;
    check_event(&o, "PreToolUse")?;
    let session_id = req_str(&o, "session_id")?;
    let cwd = event_cwd(&o, cwd)?;
    let tool_name = req_str(&o, "tool_name")?;
    if tool_name == "run_shell_command" {
        return super::claude::shell(
            Tool::QWEN,
            session_id,
            cwd,
            tool_name,
            &o,
            Some("directory"),
        );
    }
    let Some(edits) = edits_of(&tool_name, &o, &cwd)? else {
        return Ok(PreEdit::Other { tool_name });
    };
    Ok(PreEdit::Edit(EditRequest {
        tool: Tool::QWEN,
        session_id,
        cwd,
        tool_name,
        edits,
    }))
}

/// The file edits of a call of Qwen Code's edit tools; `None` for a tool
/// that edits no file.
fn edits_of(
    tool_name: &str,
    o: &Map<String, Value>,
    cwd: &Path,
) -> Result<Option<Vec<FileEdit>>, EventError> {
    let edit = |op: EditOp, input: &Map<String, Value>| -> Result<FileEdit, EventError> {
        Ok(file_edit(cwd, req_str(input, "file_path")?, op))
    };
    Ok(Some(match tool_name {
        "edit" => {
            let input = req_obj(o, "tool_input")?;
            vec![edit(EditOp::Replace(vec![replacement(input)?]), input)?]
        }
        "write_file" => {
            let input = req_obj(o, "tool_input")?;
            let content = req_str(input, "content")?;
            vec![edit(EditOp::Write { content }, input)?]
        }
        "notebook_edit" => {
            let input = req_obj(o, "tool_input")?;
            let path = opt_str(input, "notebook_path")?
                .or(opt_str(input, "file_path")?)
                .ok_or(EventError::Missing("notebook_path"))?;
            vec![file_edit(cwd, path, EditOp::WholeFile)]
        }
        _ => return Ok(None),
    }))
}

/// A `PostToolUse` event: Qwen Code's session id, and whether the call
/// may have claimed (a shell command that writes nothing did not).
pub fn post_tool_session(input: &str) -> Option<(String, bool)> {
    let o = object(input).ok()?;
    if o.get("hook_event_name").and_then(Value::as_str) != Some("PostToolUse") {
        return None;
    }
    let id = req_str(&o, "session_id").ok()?;
    let shell_without_writes = o.get("tool_name").and_then(Value::as_str)
        == Some("run_shell_command")
        && !o
            .get("tool_input")
            .and_then(|i| i.get("command"))
            .and_then(Value::as_str)
            .is_some_and(super::shell_writes::may_write);
    Some((id, !shell_without_writes))
}

/// The answer to `PostToolUse`: what bsi said before the edit, as context
/// Qwen Code appends to the tool's result for the model.
pub fn answer_post_tool(message: Option<&str>) -> Answer {
    match message {
        Some(m) => Answer::json(&json!({
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": m,
            }
        })),
        None => Answer::default(),
    }
}

/// How the session-start context names the agent's session for its shell:
/// Qwen Code runs the agent's shell commands under its own process.
pub fn session_note(session: &str, by_process: bool) -> String {
    super::tool::session_note_by_process("Qwen Code", session, by_process)
}

/// The project settings file, relative to the work tree root.
pub const SETTINGS: &str = ".qwen/settings.json";

/// The hook entries bsi adds to `.qwen/settings.json`.
pub(super) const ENTRIES: &[HookEntry] = &[
    ("PreToolUse", Some(EDIT_TOOLS), HookKind::Edit),
    // The same command after the edit: tells the model what was claimed.
    ("PostToolUse", Some(EDIT_TOOLS), HookKind::Edit),
    ("SessionStart", None, HookKind::SessionStart),
    ("Stop", None, HookKind::Stop),
];

/// Whether Qwen Code loads the project's hooks: folder trust off (its
/// default) or the folder trusted in `~/.qwen/trustedFolders.json`.
fn trust(root: &Path, places: &Places) -> Item {
    let dir = places.home.as_ref().map(|h| h.join(".qwen"));
    let read = |name: &str| -> Option<Value> {
        let text = std::fs::read_to_string(dir.as_ref()?.join(name)).ok()?;
        serde_json::from_str(&text).ok()
    };
    let trust_on = read("settings.json")
        .is_some_and(|s| s["security"]["folderTrust"]["enabled"] == Value::Bool(true));
    if !trust_on {
        return Item {
            what: "trust",
            ok: Some(true),
            detail: "folder trust is off in Qwen Code (its default): it loads the project's hooks"
                .into(),
            next: None,
        };
    }
    let trusted = read("trustedFolders.json")
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
            detail: "the folder is trusted: Qwen Code loads its project hooks".into(),
            next: None,
        }
    } else {
        Item {
            what: "trust",
            ok: Some(false),
            detail: "folder trust is on and this folder is not trusted: Qwen Code loads no project hooks here".into(),
            next: Some(format!(
                "start `qwen` in {} and trust the folder when asked",
                root.display()
            )),
        }
    }
}

/// Qwen Code.
pub struct Qwen;

impl AgentTool for Qwen {
    fn name(&self) -> &'static str {
        "qwen"
    }

    fn title(&self) -> &'static str {
        "Qwen Code"
    }

    fn parse_edit(&self, input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
        parse_edit(input, cwd)
    }

    fn answer(&self, verdict: &Verdict) -> Answer {
        super::claude::answer(verdict)
    }

    fn parse_session_start(&self, input: &str, cwd: &Path) -> Result<SessionStart, EventError> {
        session_start_event(Tool::QWEN, input, cwd, "SessionStart", &["session_id"])
    }

    fn answer_session_start(&self, briefing: &Briefing) -> Answer {
        super::claude::answer_session_start(briefing)
    }

    fn parse_stop(&self, input: &str, cwd: &Path) -> Result<Stop, EventError> {
        stop_event(Tool::QWEN, input, cwd, &["session_id"], &|o| {
            stop_hook_active(o, "Stop")
        })
    }

    fn answer_stop(&self, reason: Option<&str>) -> Answer {
        super::claude::answer_stop(reason)
    }

    fn missing_answer(&self, kind: HookKind, text: &str) -> Value {
        super::claude::missing_answer(kind, text)
    }

    fn session_note(&self, session: &str, by_process: bool, _: Option<&Path>) -> String {
        session_note(session, by_process)
    }

    /// A `PreToolUse` answer that lets the call through never reaches the
    /// model: `PostToolUse` gives it what bsi said.
    fn tells_model_after_edit(&self) -> bool {
        true
    }

    fn after_edit_session(&self, input: &str) -> Option<(String, bool)> {
        post_tool_session(input)
    }

    fn answer_after_edit(&self, message: Option<&str>) -> Answer {
        answer_post_tool(message)
    }

    /// Qwen Code keeps an entry of the user's settings and the same entry of
    /// the project's apart (its hook registry drops a repeat only within one
    /// source), and runs both: the second run of a session start must not brief the agent
    /// again (two runs of an edit give the same verdict, and the stop
    /// reminder is sent once by the session map).
    fn repeats_event(&self, kind: HookKind) -> bool {
        kind == HookKind::SessionStart
    }

    fn settings_file(&self) -> &'static str {
        SETTINGS
    }

    fn entries(&self) -> &'static [HookEntry] {
        ENTRIES
    }

    fn hook_layout(&self) -> HookLayout {
        HookLayout::Grouped { named: false }
    }

    fn user_settings_file(&self, places: &Places) -> Option<PathBuf> {
        Some(places.home.as_ref()?.join(".qwen").join("settings.json"))
    }

    fn install_notes(&self, _: &Path, _: &Path) -> Vec<String> {
        vec![
            "Qwen Code runs project hooks unless folder trust is on and the folder untrusted; `--bare`, safe mode and `disableAllHooks` run none.".into(),
        ]
    }

    /// `mcpServers.bsi` in the same settings file, as Gemini CLI writes it.
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
            "a folder Qwen Code does not trust (with folder trust on) loads no project settings: bsi's project hooks do not run; `--bare`, safe mode and `disableAllHooks` run no hook at all",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::fixture;
    use super::super::{new_text, parse_edit as parse, shell_writes::NoDisk};
    use super::*;

    fn request(name: &str) -> EditRequest {
        super::super::tests_support::edit_request(Tool::QWEN, name)
    }

    #[test]
    fn edit_event() {
        let r = request("qwen-pretooluse-edit.json");
        assert_eq!(r.tool_name, "edit");
        assert!(r.edits[0].path.ends_with("projets/plan.md"), "{r:?}");
        assert_eq!(
            new_text(&r.edits[0], Some("- goal text\n")),
            Ok(Some("- stolen goal\n".into()))
        );
    }

    #[test]
    fn write_file_event() {
        let r = request("qwen-pretooluse-write-file.json");
        assert!(matches!(r.edits[0].op, EditOp::Write { .. }), "{r:?}");
    }

    #[test]
    fn the_shell_is_read_for_the_files_it_writes_in_its_directory() {
        let event = fixture("qwen-pretooluse-run-shell-command.json");
        let mut v: Value = serde_json::from_str(&event).expect("json");
        v["tool_input"]["command"] = json!("echo x >> agents/alice.md");
        v["tool_input"]["directory"] = json!("sub");
        let Ok(PreEdit::Shell(cmd)) = parse(Tool::QWEN, &v.to_string(), Path::new("/")) else {
            panic!("{v}");
        };
        let cwd = PathBuf::from(v["cwd"].as_str().expect("cwd"));
        assert_eq!(cmd.dir, cwd.join("sub"));
        let r = cmd.edits(&NoDisk).expect("writes");
        assert_eq!(r.edits[0].path, cwd.join("sub/agents/alice.md"));
    }

    #[test]
    fn other_tools_pass_and_answers_are_claude_code_s() {
        let mut v: Value =
            serde_json::from_str(&fixture("qwen-pretooluse-edit.json")).expect("json");
        v["tool_name"] = json!("read_file");
        assert_eq!(
            parse(Tool::QWEN, &v.to_string(), Path::new("/")),
            Ok(PreEdit::Other {
                tool_name: "read_file".into()
            })
        );
        let deny = Qwen.answer(&Verdict::Deny {
            reason: "bsi: refused".into(),
        });
        let d: Value = serde_json::from_str(&deny.stdout).expect("json");
        assert_eq!(d["hookSpecificOutput"]["permissionDecision"], "deny");
        let stop = Qwen.answer_stop(Some("close"));
        let s: Value = serde_json::from_str(&stop.stdout).expect("json");
        assert_eq!(s["decision"], "block");
    }

    #[test]
    fn post_tool_use_is_the_after_edit_event() {
        let mut v: Value =
            serde_json::from_str(&fixture("qwen-pretooluse-edit.json")).expect("json");
        assert_eq!(post_tool_session(&v.to_string()), None);
        v["hook_event_name"] = json!("PostToolUse");
        let (id, claimed) = post_tool_session(&v.to_string()).expect("after");
        assert_eq!(id, v["session_id"].as_str().expect("id"));
        assert!(claimed);
        v["tool_name"] = json!("run_shell_command");
        v["tool_input"] = json!({"command": "ls"});
        assert_eq!(post_tool_session(&v.to_string()).map(|p| p.1), Some(false));
        let a: Value =
            serde_json::from_str(&answer_post_tool(Some("bsi claimed a.md")).stdout).expect("json");
        assert_eq!(
            a["hookSpecificOutput"]["additionalContext"],
            "bsi claimed a.md"
        );
        assert_eq!(answer_post_tool(None).stdout, "");
    }

    #[test]
    fn session_start_and_stop_events() {
        let start = super::super::parse_session_start(
            Tool::QWEN,
            &fixture("qwen-sessionstart.json"),
            Path::new("/elsewhere"),
        )
        .expect("start");
        let stop = super::super::parse_stop(Tool::QWEN, &fixture("qwen-stop.json"), Path::new("/"))
            .expect("stop");
        assert_eq!(start.session_id, stop.session_id);
        assert!(!stop.continued);
    }
}
