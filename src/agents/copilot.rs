//! GitHub Copilot CLI: `preToolUse` events for `edit`, `create`,
//! `apply_patch` and `bash` (the files its commands write), `sessionStart`
//! and `agentStop`, the answers, and the hook entries of
//! `.github/hooks/bsi.json`.
//!
//! bsi installs the camelCase form of Copilot's hooks (version 1): the
//! events carry `sessionId`, `cwd`, `toolName` and `toolArgs` (an object,
//! or the patch text itself for the freeform `apply_patch`). A refusal is
//! `permissionDecision: "deny"` with the reason in
//! `permissionDecisionReason`, which Copilot hands the model as the tool's
//! result; `additionalContext` reaches the model as a message of its own,
//! from a pre-edit hook (after the tool's result) and from a session-start
//! hook alike. Copilot shows the person no hook's stderr.
//!
//! Copilot reads the same `.github/hooks/*.json` in its cloud agent on
//! GitHub, where bsi is not installed: there each hook's `|| echo` answer
//! lets the call through and tells the model bsi did not run.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::doctor::Item;
use super::install::{HookEntry, HookLayout};
use super::mcp_config::McpSettings;
use super::{AgentTool, Places, SessionStart, Stop, Tool, session_start_event, stop_event};
use super::{
    Answer, Briefing, EditOp, EditRequest, EventError, HookKind, PreEdit, Replacement, Verdict,
    event_cwd, file_edit, first_str, object, opt_str, req_obj, req_str,
};

/// The tools whose calls change files, and `bash`, Copilot's shell (the
/// files its commands write are judged too), as the regular expression of
/// the edit hook's `matcher` (Copilot anchors it: the whole tool name).
pub const EDIT_TOOLS: &str = "edit|create|apply_patch|bash";

/// Reads a `preToolUse` event.
pub fn parse_edit(input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
    let o = object(input)?;
    let session_id = first_str(&o, &["sessionId"])?;
    let cwd = event_cwd(&o, cwd)?;
    let tool_name = first_str(&o, &["toolName"])?;
    if tool_name == "apply_patch" {
        let text = match o.get("toolArgs") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Object(m)) => req_str(m, "input")?,
            None | Some(Value::Null) => return Err(EventError::Missing("toolArgs")),
            Some(_) => {
                return Err(EventError::BadField {
                    field: "toolArgs",
                    want: "the patch text",
                });
            }
        };
        return Ok(PreEdit::Edit(EditRequest {
            tool: super::Tool::COPILOT,
            session_id,
            edits: super::codex::patch_edits(&text, &cwd)?,
            cwd,
            tool_name,
        }));
    }
    let op = match tool_name.as_str() {
        "bash" => {
            let args = req_obj(&o, "toolArgs")?;
            let Some(command) = opt_str(args, "command")? else {
                return Ok(PreEdit::Other { tool_name });
            };
            return Ok(PreEdit::Shell(super::ShellCommand {
                tool: super::Tool::COPILOT,
                session_id,
                dir: cwd.clone(),
                cwd,
                tool_name,
                command,
            }));
        }
        "edit" => {
            let args = req_obj(&o, "toolArgs")?;
            EditOp::Replace(vec![Replacement {
                old: req_str(args, "old_str")?,
                new: opt_str(args, "new_str")?.unwrap_or_default(),
                all: false,
            }])
        }
        "create" => EditOp::Write {
            content: opt_str(req_obj(&o, "toolArgs")?, "file_text")?.unwrap_or_default(),
        },
        _ => return Ok(PreEdit::Other { tool_name }),
    };
    let path = req_str(req_obj(&o, "toolArgs")?, "path")?;
    Ok(PreEdit::Edit(EditRequest {
        tool: super::Tool::COPILOT,
        session_id,
        edits: vec![file_edit(&cwd, path, op)],
        cwd,
        tool_name,
    }))
}

/// The answer to a `preToolUse` event. bsi never answers
/// `permissionDecision: "allow"`: having no objection must not skip the
/// approval Copilot would otherwise ask for.
pub fn answer(verdict: &Verdict) -> Answer {
    match verdict {
        Verdict::Allow => Answer::json(&json!({})),
        Verdict::Claimed { message } => Answer::json(&json!({ "additionalContext": message })),
        Verdict::Deny { reason } => Answer::json(&json!({
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        })),
        // Copilot shows the person no hook output: the agent is told, and
        // can tell the person.
        Verdict::AllowWithWarning { warning } => Answer::json(&json!({
            "additionalContext": format!("bsi: {warning}"),
        }))
        .with_stderr(warning),
    }
}

/// The answer to `sessionStart`: the briefing, as a message to the model.
/// Copilot has no field that sets the shell's environment: the agent's
/// shell finds the session from the id Copilot sets in it (see
/// [`session_note`]).
pub fn answer_session_start(briefing: &Briefing) -> Answer {
    Answer::json(&json!({ "additionalContext": briefing.context }))
}

/// The answer to `agentStop`: `decision: "block"` sends the agent back with
/// the reason as its next prompt.
pub fn answer_stop(reason: Option<&str>) -> Answer {
    match reason {
        Some(r) => Answer::json(&json!({ "decision": "block", "reason": r })),
        None => Answer::json(&json!({})),
    }
}

/// What the session-start context says about passing the session to bsi:
/// Copilot sets `COPILOT_AGENT_SESSION_ID` (the `sessionId` its hooks are
/// given) in every shell command and MCP server it starts, and bsi finds the
/// session by it.
pub fn session_note(session: &str) -> String {
    format!(
        "the bsi commands you run in your shell act for it: bsi finds it from the COPILOT_AGENT_SESSION_ID Copilot sets in your shell; `--session {session}` names it too"
    )
}

/// Whether a stop event comes after the agent already went back once.
pub(super) fn stop_continued(o: &Map<String, Value>) -> Result<bool, EventError> {
    Ok(super::opt_bool(o, "stop_hook_active")?.unwrap_or(false))
}

/// bsi's own hooks file, relative to the work tree root: Copilot reads
/// every `.github/hooks/*.json`.
pub const SETTINGS: &str = ".github/hooks/bsi.json";

/// The hook entries bsi writes in `.github/hooks/bsi.json`.
pub(super) const ENTRIES: &[HookEntry] = &[
    ("preToolUse", Some(EDIT_TOOLS), HookKind::Edit),
    ("sessionStart", None, HookKind::SessionStart),
    ("agentStop", None, HookKind::Stop),
];

/// Copilot CLI runs a folder's hooks only when the folder is trusted: a
/// person's answer kept in `trustedFolders` of its `config.json` (JSON
/// after `//` comment lines), or for one run `--trust-folder` or
/// `COPILOT_ALLOW_ALL=true`. Without it the hooks are skipped without a
/// word.
fn trust(root: &Path, places: &Places) -> Item {
    let config = places
        .copilot_home
        .clone()
        .or_else(|| places.home.as_ref().map(|h| h.join(".copilot")))
        .map(|h| h.join("config.json"));
    let trusted = config
        .as_ref()
        .and_then(|c| std::fs::read_to_string(c).ok())
        .and_then(|t| {
            let json: String = t
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            serde_json::from_str::<Value>(&json).ok()
        })
        .is_some_and(|v| {
            v["trustedFolders"].as_array().is_some_and(|f| {
                f.iter()
                    .filter_map(Value::as_str)
                    .any(|p| root.starts_with(Path::new(p)))
            })
        });
    if trusted {
        Item {
            what: "trust",
            ok: Some(true),
            detail: "the folder is trusted: Copilot CLI runs its hooks".into(),
            next: None,
        }
    } else {
        Item {
            what: "trust",
            ok: Some(false),
            detail: "the folder is not trusted: Copilot CLI runs no hook of .github/hooks here, and says nothing of it".into(),
            next: Some(format!(
                "start `copilot` in {} and trust the folder when asked (for one headless run: `copilot --trust-folder -p …`)",
                root.display()
            )),
        }
    }
}

/// GitHub Copilot CLI.
pub struct Copilot;

impl AgentTool for Copilot {
    fn name(&self) -> &'static str {
        "copilot"
    }

    fn title(&self) -> &'static str {
        "GitHub Copilot CLI"
    }

    fn shell_session_var(&self) -> Option<&'static str> {
        Some("COPILOT_AGENT_SESSION_ID")
    }

    fn parse_edit(&self, input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
        parse_edit(input, cwd)
    }

    fn answer(&self, verdict: &Verdict) -> Answer {
        answer(verdict)
    }

    fn parse_session_start(&self, input: &str, cwd: &Path) -> Result<SessionStart, EventError> {
        session_start_event(Tool::COPILOT, input, cwd, "sessionStart", &["sessionId"])
    }

    fn answer_session_start(&self, briefing: &Briefing) -> Answer {
        answer_session_start(briefing)
    }

    fn parse_stop(&self, input: &str, cwd: &Path) -> Result<Stop, EventError> {
        stop_event(Tool::COPILOT, input, cwd, &["sessionId"], &stop_continued)
    }

    fn answer_stop(&self, reason: Option<&str>) -> Answer {
        answer_stop(reason)
    }

    /// Copilot shows the person no hook's stderr: the model is told its
    /// session starts without bsi's briefing.
    fn fail_open_quietly(&self, kind: HookKind, warning: &str) -> Answer {
        if kind == HookKind::SessionStart {
            Answer::json(&json!({ "additionalContext": format!("bsi: {}", warning.trim_end()) }))
                .with_stderr(warning)
        } else {
            Answer::default().with_stderr(warning)
        }
    }

    fn missing_answer(&self, kind: HookKind, text: &str) -> Value {
        match kind {
            // Copilot shows the person no hook output; the model gets
            // `additionalContext` (also in Copilot's cloud agent on GitHub,
            // which reads the same hooks where bsi is not installed).
            HookKind::Edit | HookKind::SessionStart => json!({ "additionalContext": text }),
            // `agentStop` reads only `decision` and `reason`: "allow" lets
            // the agent stop; the reason stays in Copilot's hook log.
            HookKind::Stop => json!({ "decision": "allow", "reason": text }),
        }
    }

    // Copilot sets the session's id in every shell command and MCP server
    // it starts (`COPILOT_AGENT_SESSION_ID`), mapped by the session-start
    // hook.
    fn session_note(&self, session: &str, _: bool, _: Option<&Path>) -> String {
        session_note(session)
    }

    fn settings_file(&self) -> &'static str {
        SETTINGS
    }

    fn entries(&self) -> &'static [HookEntry] {
        ENTRIES
    }

    /// Flat entries whose command is `bash` (with `powershell` beside it
    /// for Windows), each with `"type": "command"`.
    fn hook_layout(&self) -> HookLayout {
        HookLayout::Flat {
            command_key: "bash",
            typed: true,
            mend_matcher: true,
        }
    }

    fn install_notes(&self, root: &Path, _: &Path) -> Vec<String> {
        vec![
            format!(
                "GitHub Copilot CLI runs a folder's hooks only once the folder is trusted, and skips them without a word until then: start `copilot` in {} and trust it when asked (`--trust-folder` or `COPILOT_ALLOW_ALL=true` trust it for one run).",
                root.display()
            ),
            "Copilot's cloud agent on GitHub reads the same .github/hooks/bsi.json from the default branch, where bsi is not installed: each hook then lets the call through and tells the agent bsi did not run; nothing of bsi guards its edits there: bsi sees its work once it is committed or merged in a clone where bsi's git hooks are installed.".into(),
        ]
    }

    /// The `.mcp.json` Claude Code reads too: one server serves both.
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
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::fixture;
    use super::super::{Tool, new_text, parse_edit as parse, parse_session_start, parse_stop};
    use super::*;
    use std::path::PathBuf;

    fn request(name: &str) -> EditRequest {
        super::super::tests_support::edit_request(Tool::COPILOT, name)
    }

    #[test]
    fn edit_event() {
        let r = request("copilot-pretooluse-edit.json");
        assert_eq!(r.session_id, "0c6e8f64-4d1e-4b8e-9d55-3a1f0e2b7c11");
        assert_eq!(r.cwd, PathBuf::from("/home/me/brain"));
        assert_eq!(r.tool_name, "edit");
        assert_eq!(
            r.edits[0].path,
            PathBuf::from("/home/me/brain/projets/plan.md")
        );
        assert_eq!(
            new_text(&r.edits[0], Some("# Goals\n\ngoal text\n")),
            Ok(Some("# Goals\n\nstolen goal\n".into()))
        );
    }

    #[test]
    fn create_event() {
        let r = request("copilot-pretooluse-create.json");
        assert_eq!(
            r.edits[0].path,
            PathBuf::from("/home/me/brain/agents/new.md")
        );
        assert_eq!(new_text(&r.edits[0], None), Ok(Some("# New\n".into())));
    }

    #[test]
    fn apply_patch_sends_the_patch_text_itself() {
        let r = request("copilot-pretooluse-apply-patch.json");
        assert_eq!(r.tool_name, "apply_patch");
        assert_eq!(
            r.edits[0].path,
            PathBuf::from("/home/me/brain/projets/plan.md")
        );
        assert_eq!(
            new_text(&r.edits[0], Some("risk text\n")),
            Ok(Some("new risk\n".into()))
        );
    }

    #[test]
    fn bash_is_read_for_the_files_it_writes() {
        let got = parse(
            Tool::COPILOT,
            &fixture("copilot-pretooluse-bash.json"),
            Path::new("/"),
        );
        let Ok(PreEdit::Shell(cmd)) = got else {
            panic!("{got:?}");
        };
        assert_eq!(cmd.dir, PathBuf::from("/home/me/brain"));
        let r = cmd
            .edits(&super::super::shell_writes::NoDisk)
            .expect("writes");
        assert_eq!(
            r.edits[0].path,
            PathBuf::from("/home/me/brain/agents/free.md")
        );
        // A read tool is let through untouched.
        let view = fixture("copilot-pretooluse-edit.json").replace("\"edit\"", "\"view\"");
        assert!(matches!(
            parse(Tool::COPILOT, &view, Path::new("/")),
            Ok(PreEdit::Other { .. })
        ));
    }

    #[test]
    fn session_start_and_stop() {
        let s = parse_session_start(
            Tool::COPILOT,
            &fixture("copilot-sessionstart.json"),
            Path::new("/"),
        )
        .expect("parses");
        assert_eq!(s.session_id, "0c6e8f64-4d1e-4b8e-9d55-3a1f0e2b7c11");
        assert_eq!(s.source.as_deref(), Some("new"));
        let st = parse_stop(
            Tool::COPILOT,
            &fixture("copilot-agentstop.json"),
            Path::new("/"),
        )
        .expect("parses");
        assert!(!st.continued);
        let again = fixture("copilot-agentstop.json")
            .replace("\"stop_hook_active\":false", "\"stop_hook_active\":true");
        assert!(
            parse_stop(Tool::COPILOT, &again, Path::new("/"))
                .expect("parses")
                .continued
        );
    }

    #[test]
    fn answers() {
        let d = answer(&Verdict::Deny {
            reason: "bsi: refused: projets/plan.md#Goals is held by sess-1".into(),
        });
        let v: Value = serde_json::from_str(&d.stdout).expect("json");
        assert_eq!(v["permissionDecision"], "deny");
        assert_eq!(
            v["permissionDecisionReason"],
            "bsi: refused: projets/plan.md#Goals is held by sess-1"
        );
        // No objection is not a permission: Copilot's own approval stays.
        assert_eq!(answer(&Verdict::Allow).stdout, "{}\n");
        let c: Value = serde_json::from_str(
            &answer(&Verdict::Claimed {
                message: "you hold a.md".into(),
            })
            .stdout,
        )
        .expect("json");
        assert_eq!(c, json!({"additionalContext": "you hold a.md"}));
        let w = answer(&Verdict::AllowWithWarning {
            warning: "w".into(),
        });
        let v: Value = serde_json::from_str(&w.stdout).expect("json");
        assert_eq!(v, json!({"additionalContext": "bsi: w"}));
        let s = answer_session_start(&Briefing {
            context: "ctx".into(),
            session: Some("sess-1".into()),
        });
        let v: Value = serde_json::from_str(&s.stdout).expect("json");
        assert_eq!(v, json!({"additionalContext": "ctx"}));
        let st: Value = serde_json::from_str(&answer_stop(Some("close")).stdout).expect("json");
        assert_eq!(st, json!({"decision": "block", "reason": "close"}));
    }
}
