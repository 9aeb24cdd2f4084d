//! Claude Code: `PreToolUse` events for `Edit`, `MultiEdit`, `Write` and
//! `NotebookEdit`, `SessionStart` and `Stop`, the answers, and the hook
//! entries of `.claude/settings.json`.
//!
//! A refusal is exit 0 with `hookSpecificOutput.permissionDecision: "deny"`
//! and the reason in `permissionDecisionReason` (shown to Claude), not exit 2:
//! with JSON, only a deliberate, well-formed answer blocks. Exit 2 is also
//! what any usage error of a command line exits with, so under the exit-code
//! protocol a broken hook command would block every edit, where errors must
//! fail open (the installed commands end in `|| true` for the same reason).
//! The same channel carries what an agent is told when it is let through
//! (`additionalContext`).

use std::io::Write;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::{
    Answer, Briefing, EditOp, EditRequest, EventError, FileEdit, HookKind, PreEdit, Verdict,
    check_event, event_cwd, file_edit, object, opt_str, replacement, req_obj, req_str,
};
use std::path::PathBuf;

use super::doctor::Item;
use super::install::{HookEntry, HookLayout};
use super::mcp_config::McpSettings;
use super::{
    AgentTool, Places, SessionStart, Stop, Tool, session_start_event, stop_event, stop_hook_active,
};

/// The tools whose calls change files, and `Bash`, Claude Code's shell:
/// the files its commands write are judged too ([`super::shell_writes`]).
pub const EDIT_TOOLS: &str = "Edit|MultiEdit|Write|NotebookEdit|Bash";

/// Reads a `PreToolUse` event.
pub fn parse_edit(input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
    let o = object(input)?;
    check_event(&o, "PreToolUse")?;
    let session_id = req_str(&o, "session_id")?;
    let cwd = event_cwd(&o, cwd)?;
    let tool_name = req_str(&o, "tool_name")?;
    if tool_name == "Bash" {
        return shell(super::Tool::CLAUDE, session_id, cwd, tool_name, &o, None);
    }
    let Some(edits) = edits_of(&tool_name, &o, &cwd)? else {
        return Ok(PreEdit::Other { tool_name });
    };
    Ok(PreEdit::Edit(EditRequest {
        tool: super::Tool::CLAUDE,
        session_id,
        cwd,
        tool_name,
        edits,
    }))
}

/// A shell tool's call: `tool_input.command`, run in `tool_input[dir_key]`
/// (relative to `cwd`) when the call names one. Claude Code, Codex, Gemini
/// and Cursor all send this shape.
pub(super) fn shell(
    tool: super::Tool,
    session_id: String,
    cwd: std::path::PathBuf,
    tool_name: String,
    o: &Map<String, Value>,
    dir_key: Option<&'static str>,
) -> Result<PreEdit, EventError> {
    let input = req_obj(o, "tool_input")?;
    let Some(command) = opt_str(input, "command")? else {
        return Ok(PreEdit::Other { tool_name });
    };
    let dir = match dir_key.map(|k| opt_str(input, k)).transpose()?.flatten() {
        Some(d) if !d.is_empty() => super::clean(&cwd.join(d)),
        _ => cwd.clone(),
    };
    Ok(PreEdit::Shell(super::ShellCommand {
        tool,
        session_id,
        cwd,
        dir,
        tool_name,
        command,
    }))
}

/// The file edits of a Claude-shaped tool call, `None` when the tool does
/// not edit files. Codex sends the same shapes.
pub(super) fn edits_of(
    tool_name: &str,
    o: &Map<String, Value>,
    cwd: &Path,
) -> Result<Option<Vec<FileEdit>>, EventError> {
    let edit = |op: EditOp, input: &Map<String, Value>| -> Result<FileEdit, EventError> {
        Ok(file_edit(cwd, req_str(input, "file_path")?, op))
    };
    Ok(Some(match tool_name {
        "Edit" => {
            let input = req_obj(o, "tool_input")?;
            vec![edit(EditOp::Replace(vec![replacement(input)?]), input)?]
        }
        "MultiEdit" => {
            let input = req_obj(o, "tool_input")?;
            let Some(Value::Array(list)) = input.get("edits") else {
                return Err(EventError::Missing("edits"));
            };
            let reps = list
                .iter()
                .map(|e| match e {
                    Value::Object(m) => replacement(m),
                    _ => Err(EventError::BadField {
                        field: "edits",
                        want: "a list of objects",
                    }),
                })
                .collect::<Result<Vec<_>, _>>()?;
            vec![edit(EditOp::Replace(reps), input)?]
        }
        "Write" => {
            let input = req_obj(o, "tool_input")?;
            let content = req_str(input, "content")?;
            vec![edit(EditOp::Write { content }, input)?]
        }
        "NotebookEdit" => {
            let input = req_obj(o, "tool_input")?;
            let path = opt_str(input, "notebook_path")?
                .or(opt_str(input, "file_path")?)
                .ok_or(EventError::Missing("notebook_path"))?;
            vec![file_edit(cwd, path, EditOp::WholeFile)]
        }
        _ => return Ok(None),
    }))
}

/// The answer to a `PreToolUse` event (Codex reads the same).
pub fn answer(verdict: &Verdict) -> Answer {
    match verdict {
        Verdict::Allow => Answer::default(),
        Verdict::Claimed { message } => Answer::json(&json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "additionalContext": message,
            }
        })),
        Verdict::Deny { reason } => Answer::json(&json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        })),
        // To the person (`systemMessage`) and to the agent
        // (`additionalContext`).
        Verdict::AllowWithWarning { warning } => Answer::json(&json!({
            "systemMessage": format!("bsi: {warning}"),
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "additionalContext": format!("bsi: {warning}"),
            }
        }))
        .with_stderr(warning),
    }
}

/// The answer to `SessionStart`: the briefing goes into Claude's context.
/// `BSI_SESSION` reaches its shell commands through `CLAUDE_ENV_FILE`
/// ([`append_env_file`]), not through this answer.
pub fn answer_session_start(briefing: &Briefing) -> Answer {
    Answer::json(&json!({
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": briefing.context,
        }
    }))
}

/// The answer to `Stop` (Codex reads the same): `decision: "block"` sends
/// the agent back with the reason.
pub fn answer_stop(reason: Option<&str>) -> Answer {
    match reason {
        Some(r) => Answer::json(&json!({ "decision": "block", "reason": r })),
        None => Answer::default(),
    }
}

/// The line a session-start hook appends to the file named by
/// `CLAUDE_ENV_FILE`, so Claude's later shell commands have `BSI_SESSION`.
/// `None` when the id is not a plain session id (nothing is quoted).
pub fn env_file_line(session: &str) -> Option<String> {
    let id = bsi_core::values::SessionId::parse(session).ok()?;
    Some(format!(
        "export {}\n",
        bsi_core::words::assignment("BSI_SESSION", &id)
    ))
}

/// Appends [`env_file_line`] to `env_file`, unless its last such line
/// already names this session.
pub fn append_env_file(env_file: &Path, session: &str) -> std::io::Result<()> {
    let Some(line) = env_file_line(session) else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("`{}` is not a session id", session.escape_debug()),
        ));
    };
    let now = match std::fs::read_to_string(env_file) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let last = now
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("export BSI_SESSION="));
    if last == Some(line.trim_end()) {
        return Ok(());
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(env_file)?;
    if !now.is_empty() && !now.ends_with('\n') {
        f.write_all(b"\n")?;
    }
    f.write_all(line.as_bytes())
}

/// The project settings file, relative to the work tree root.
pub const SETTINGS: &str = ".claude/settings.json";

/// The hook entries bsi adds to `.claude/settings.json`: event name, matcher
/// and hook kind.
pub(super) const ENTRIES: &[HookEntry] = &[
    ("PreToolUse", Some(EDIT_TOOLS), HookKind::Edit),
    ("SessionStart", None, HookKind::SessionStart),
    ("Stop", None, HookKind::Stop),
];

/// What a hook of Claude Code or Codex says when bsi did not run: on a
/// pre-edit or session-start event, `additionalContext` too, which both
/// pass to the model (Codex shows the person no `systemMessage` in `codex
/// exec`): the agent learns it too, and can tell the person.
pub(super) fn missing_answer(kind: HookKind, text: &str) -> Value {
    let event = match kind {
        HookKind::Edit => Some("PreToolUse"),
        HookKind::SessionStart => Some("SessionStart"),
        HookKind::Stop => None,
    };
    match event {
        Some(event) => json!({
            "systemMessage": text,
            "hookSpecificOutput": { "hookEventName": event, "additionalContext": text },
        }),
        None => json!({ "systemMessage": text }),
    }
}

/// Whether Claude Code trusts the workspace: `hasTrustDialogAccepted` of
/// the folder or a parent in `~/.claude.json`.
fn trust(root: &Path, places: &Places) -> Item {
    let state: Option<Value> = places
        .home
        .as_ref()
        .and_then(|h| std::fs::read_to_string(h.join(".claude.json")).ok())
        .and_then(|t| serde_json::from_str(&t).ok());
    let accepted = state.as_ref().is_some_and(|s| {
        super::doctor::ancestors(root)
            .iter()
            .any(|a| s["projects"][a]["hasTrustDialogAccepted"] == Value::Bool(true))
    });
    if accepted {
        Item {
            what: "trust",
            ok: Some(true),
            detail: "the workspace is trusted in Claude Code".into(),
            next: None,
        }
    } else {
        Item {
            what: "trust",
            ok: None,
            detail: "no trust of this workspace recorded in ~/.claude.json (`claude -p` runs project hooks without it)".into(),
            next: Some(format!(
                "start `claude` in {} and trust the folder when asked",
                root.display()
            )),
        }
    }
}

/// Claude Code.
pub struct Claude;

impl AgentTool for Claude {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn title(&self) -> &'static str {
        "Claude Code"
    }

    fn parse_edit(&self, input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
        parse_edit(input, cwd)
    }

    fn answer(&self, verdict: &Verdict) -> Answer {
        answer(verdict)
    }

    fn parse_session_start(&self, input: &str, cwd: &Path) -> Result<SessionStart, EventError> {
        session_start_event(Tool::CLAUDE, input, cwd, "SessionStart", &["session_id"])
    }

    fn answer_session_start(&self, briefing: &Briefing) -> Answer {
        answer_session_start(briefing)
    }

    fn parse_stop(&self, input: &str, cwd: &Path) -> Result<Stop, EventError> {
        stop_event(Tool::CLAUDE, input, cwd, &["session_id"], &|o| {
            stop_hook_active(o, "Stop")
        })
    }

    fn answer_stop(&self, reason: Option<&str>) -> Answer {
        answer_stop(reason)
    }

    fn missing_answer(&self, kind: HookKind, text: &str) -> Value {
        missing_answer(kind, text)
    }

    /// `BSI_SESSION` reaches the agent's shell through `CLAUDE_ENV_FILE`;
    /// without it, through the Claude Code process, else the agent is told
    /// to export it.
    fn session_note(&self, session: &str, by_process: bool, env_file: Option<&Path>) -> String {
        let export = || {
            format!(
                "pass it to bsi: `export {}`",
                bsi_core::words::assignment("BSI_SESSION", session)
            )
        };
        match env_file {
            Some(f) => match append_env_file(f, session) {
                Ok(()) => "BSI_SESSION is set to it in your shell".to_string(),
                Err(e) => {
                    eprintln!("bsi: warning: cannot write CLAUDE_ENV_FILE: {e}");
                    export()
                }
            },
            None if by_process => format!(
                "the bsi commands you run in your shell act for it: bsi finds it from the Claude Code process they run under; `--session {session}` names it too"
            ),
            None => export(),
        }
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
        Some(
            places
                .claude_config
                .clone()
                .or_else(|| places.home.as_ref().map(|h| h.join(".claude")))?
                .join("settings.json"),
        )
    }

    fn install_notes(&self, _: &Path, _: &Path) -> Vec<String> {
        vec![
            "Claude Code runs project hooks once the folder is trusted; `--bare` runs none.".into(),
        ]
    }

    fn mcp_settings(&self) -> McpSettings {
        McpSettings::Json {
            file: ".mcp.json",
            key: "mcpServers",
            stdio: true,
        }
    }

    fn trust(&self, root: &Path, _: &Path, places: &Places) -> Item {
        trust(root, places)
    }

    fn project_shortcuts(&self) -> Option<&'static str> {
        Some(
            "`claude --setting-sources user` loads no project settings (bsi's project hooks do not run); `claude --bare` and `disableAllHooks` run no hook at all, the user's included",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::fixture;
    use super::super::{
        Replacement, Tool, new_text, parse_edit as parse, parse_session_start, parse_stop,
    };
    use super::*;
    use std::path::PathBuf;

    fn edit_request(name: &str) -> EditRequest {
        super::super::tests_support::edit_request(Tool::CLAUDE, name)
    }

    #[test]
    fn edit_event() {
        let r = edit_request("claude-pretooluse-edit.json");
        assert_eq!(r.session_id, "abc123");
        assert_eq!(r.cwd, PathBuf::from("/home/me/brain"));
        assert_eq!(r.tool_name, "Edit");
        assert_eq!(r.edits.len(), 1);
        assert_eq!(
            r.edits[0].path,
            PathBuf::from("/home/me/brain/projets/plan.md")
        );
        assert_eq!(
            r.edits[0].op,
            EditOp::Replace(vec![Replacement {
                old: "goal text".into(),
                new: "better goal text".into(),
                all: false,
            }])
        );
        let text = "# Plan\n\n## Goals\n\ngoal text\n";
        assert_eq!(
            new_text(&r.edits[0], Some(text)),
            Ok(Some("# Plan\n\n## Goals\n\nbetter goal text\n".into()))
        );
    }

    #[test]
    fn multi_edit_event() {
        let r = edit_request("claude-pretooluse-multiedit.json");
        let EditOp::Replace(reps) = &r.edits[0].op else {
            panic!("{r:?}");
        };
        assert_eq!(reps.len(), 2);
        assert!(reps[1].all);
    }

    #[test]
    fn write_event() {
        let r = edit_request("claude-pretooluse-write.json");
        assert!(
            matches!(&r.edits[0].op, EditOp::Write { content } if content.starts_with("# Alice"))
        );
    }

    #[test]
    fn notebook_edit_event_is_file_level() {
        let r = edit_request("claude-pretooluse-notebookedit.json");
        assert_eq!(r.edits[0].op, EditOp::WholeFile);
        assert!(r.edits[0].path.ends_with("analysis.ipynb"));
    }

    #[test]
    fn a_shell_command_is_read_for_the_files_it_writes() {
        let Ok(PreEdit::Shell(cmd)) = parse(
            Tool::CLAUDE,
            &fixture("claude-pretooluse-bash.json"),
            Path::new("/"),
        ) else {
            panic!("not a shell command");
        };
        assert_eq!(cmd.command, "bsi status");
        assert_eq!(cmd.dir, PathBuf::from("/home/me/brain"));
        assert_eq!(cmd.edits(&super::super::shell_writes::NoDisk), None);
        let writes = fixture("claude-pretooluse-bash.json")
            .replace("\"bsi status\"", "\"sed -i s/a/b/ projets/plan.md\"");
        let Ok(PreEdit::Shell(cmd)) = parse(Tool::CLAUDE, &writes, Path::new("/")) else {
            panic!("not a shell command");
        };
        let r = cmd
            .edits(&super::super::shell_writes::NoDisk)
            .expect("writes");
        assert_eq!(r.tool_name, "Bash");
        assert_eq!(
            r.edits[0].path,
            PathBuf::from("/home/me/brain/projets/plan.md")
        );
        assert_eq!(
            r.edits[0].op,
            EditOp::Rewrite {
                by: "`sed -i`".into()
            }
        );
        let read = parse(
            Tool::CLAUDE,
            &fixture("claude-pretooluse-bash.json").replace("\"Bash\"", "\"Grep\""),
            Path::new("/"),
        );
        assert_eq!(
            read,
            Ok(PreEdit::Other {
                tool_name: "Grep".into()
            })
        );
    }

    #[test]
    fn an_edit_without_its_strings_is_an_error() {
        let bad = r#"{"session_id":"s","cwd":"/b","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"/b/a.md"}}"#;
        assert_eq!(
            parse(Tool::CLAUDE, bad, Path::new("/")),
            Err(EventError::Missing("old_string"))
        );
        let wrong = r#"{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{}}"#;
        assert!(matches!(
            parse(Tool::CLAUDE, wrong, Path::new("/")),
            Err(EventError::WrongEvent { .. })
        ));
    }

    #[test]
    fn session_start_and_stop_events() {
        let s = parse_session_start(
            Tool::CLAUDE,
            &fixture("claude-sessionstart.json"),
            Path::new("/"),
        )
        .expect("parses");
        assert_eq!(s.session_id, "abc123");
        assert_eq!(s.source.as_deref(), Some("startup"));
        let st =
            parse_stop(Tool::CLAUDE, &fixture("claude-stop.json"), Path::new("/")).expect("parses");
        assert!(!st.continued);
        let again = fixture("claude-stop.json").replace("false", "true");
        assert!(
            parse_stop(Tool::CLAUDE, &again, Path::new("/"))
                .expect("parses")
                .continued
        );
    }

    #[test]
    fn answers() {
        assert_eq!(answer(&Verdict::Allow), Answer::default());
        let deny = answer(&Verdict::Deny {
            reason: "held by sess-1".into(),
        });
        assert_eq!(deny.exit_code, 0);
        let v: Value = serde_json::from_str(&deny.stdout).expect("json");
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecisionReason"],
            "held by sess-1"
        );
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        let warn = answer(&Verdict::AllowWithWarning {
            warning: "no registry".into(),
        });
        assert_eq!(warn.exit_code, 0);
        assert!(warn.stderr.contains("no registry"));
        let v: Value = serde_json::from_str(&warn.stdout).expect("json");
        // Let through: no decision, the warning told to the agent too.
        assert!(v["hookSpecificOutput"].get("permissionDecision").is_none());
        assert_eq!(
            v["hookSpecificOutput"]["additionalContext"],
            "bsi: no registry"
        );
        let claimed = answer(&Verdict::Claimed {
            message: "you now hold a.md#A".into(),
        });
        let v: Value = serde_json::from_str(&claimed.stdout).expect("json");
        assert_eq!(
            v["hookSpecificOutput"]["additionalContext"],
            "you now hold a.md#A"
        );
        assert!(v["hookSpecificOutput"].get("permissionDecision").is_none());
    }

    #[test]
    fn session_start_answer_puts_context() {
        let a = answer_session_start(&Briefing {
            context: "others hold x".into(),
            session: Some("sess-1".into()),
        });
        let v: Value = serde_json::from_str(&a.stdout).expect("json");
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
        assert_eq!(
            v["hookSpecificOutput"]["additionalContext"],
            "others hold x"
        );
    }

    #[test]
    fn env_file_gets_the_session_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("env");
        std::fs::write(&f, "export OTHER=1").expect("write");
        append_env_file(&f, "sess-20260314-0930-ab12").expect("append");
        append_env_file(&f, "sess-20260314-0930-ab12").expect("append again");
        assert_eq!(
            std::fs::read_to_string(&f).expect("read"),
            "export OTHER=1\nexport BSI_SESSION=sess-20260314-0930-ab12\n"
        );
        assert!(append_env_file(&f, "bad id; rm -rf /").is_err());
        assert_eq!(env_file_line("x y"), None);
    }
}
