//! Auggie (Augment Code's CLI, npm `@augmentcode/auggie`): `PreToolUse`
//! events for its file tools (`str-replace-editor`, `save-file`,
//! `remove-files`) and its shell (`launch-process`), `SessionStart` and
//! `Stop`, the answers, and the hook entries of `.augment/settings.json`.
//!
//! Auggie's events name the session `conversation_id` and the project
//! `workspace_roots` (as Cursor's do); its tools take paths relative to
//! the workspace root. Its hook runner reads Claude Code's answers
//! (`hookSpecificOutput.permissionDecision: "deny"` with the reason for the
//! agent, `additionalContext`, a stop's `decision: "block"`), so the
//! answers are [`super::claude`]'s. Its stop event says nothing of a loop:
//! bsi's session map sends the agent back once per set of claims.
//!
//! Auggie runs no model but Augment's service, behind its login: it is not
//! driven here. The shapes follow its released package (the event builder
//! and answer parser of `augment.mjs`, version 0.36.0) and its hooks
//! documentation; the fixtures say so.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::doctor::Item;
use super::install::{HookEntry, HookLayout};
use super::mcp_config::McpSettings;
use super::{
    AgentTool, Answer, Briefing, EditOp, EditRequest, EventError, FileEdit, HookKind, Places,
    PreEdit, Replacement, SessionStart, Stop, Tool, Verdict, check_event, event_cwd, file_edit,
    object, opt_bool, opt_str, req_obj, req_str, session_start_event, stop_event,
};

/// The tools whose calls change files, and `launch-process`, Auggie's
/// shell: the files its commands write are judged too.
pub const EDIT_TOOLS: &str = "str-replace-editor|save-file|remove-files|launch-process";

/// Where Auggie's events name their session.
const ID_KEYS: &[&str] = &["conversation_id"];

/// Reads a `PreToolUse` event.
pub fn parse_edit(input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
    let o = object(input)?;
    check_event(&o, "PreToolUse")?;
    let session_id = super::first_str(&o, ID_KEYS)?;
    let cwd = event_cwd(&o, cwd)?;
    let tool_name = req_str(&o, "tool_name")?;
    if tool_name == "launch-process" {
        return super::claude::shell(Tool::AUGGIE, session_id, cwd, tool_name, &o, Some("cwd"));
    }
    let Some(edits) = edits_of(&tool_name, &o, &cwd)? else {
        return Ok(PreEdit::Other { tool_name });
    };
    Ok(PreEdit::Edit(EditRequest {
        tool: Tool::AUGGIE,
        session_id,
        cwd,
        tool_name,
        edits,
    }))
}

/// The file edits of a call of Auggie's file tools; `None` for a tool that
/// edits no file.
fn edits_of(
    tool_name: &str,
    o: &Map<String, Value>,
    cwd: &Path,
) -> Result<Option<Vec<FileEdit>>, EventError> {
    Ok(Some(match tool_name {
        // `str_replace` sends `old_str_N`/`new_str_N` pairs, N from 1;
        // `insert` sends line numbers only: judged at file level.
        "str-replace-editor" => {
            let input = req_obj(o, "tool_input")?;
            let path = req_str(input, "path")?;
            let mut reps = Vec::new();
            for n in 1.. {
                let text = |k: String| input.get(&k).and_then(Value::as_str).map(str::to_string);
                let (Some(old), Some(new)) =
                    (text(format!("old_str_{n}")), text(format!("new_str_{n}")))
                else {
                    break;
                };
                reps.push(Replacement {
                    old,
                    new,
                    all: false,
                });
            }
            let replace = opt_str(input, "command")?.as_deref() == Some("str_replace");
            let op = if replace && !reps.is_empty() {
                EditOp::Replace(reps)
            } else {
                EditOp::WholeFile
            };
            vec![file_edit(cwd, path, op)]
        }
        // The file's whole text; a last newline is added unless
        // `add_last_line_newline` is false.
        "save-file" => {
            let input = req_obj(o, "tool_input")?;
            let path = req_str(input, "path")?;
            let mut content = req_str(input, "file_content")?;
            if opt_bool(input, "add_last_line_newline")?.unwrap_or(true) && !content.ends_with('\n')
            {
                content.push('\n');
            }
            vec![file_edit(cwd, path, EditOp::Write { content })]
        }
        "remove-files" => {
            let input = req_obj(o, "tool_input")?;
            let Some(Value::Array(paths)) = input.get("file_paths") else {
                return Err(EventError::Missing("file_paths"));
            };
            paths
                .iter()
                .map(|p| match p {
                    Value::String(p) => Ok(file_edit(cwd, p.clone(), EditOp::Delete)),
                    _ => Err(EventError::BadField {
                        field: "file_paths",
                        want: "a list of paths",
                    }),
                })
                .collect::<Result<_, _>>()?
        }
        _ => return Ok(None),
    }))
}

/// The project settings file, relative to the work tree root.
pub const SETTINGS: &str = ".augment/settings.json";

/// The hook entries bsi adds to `.augment/settings.json`.
pub(super) const ENTRIES: &[HookEntry] = &[
    ("PreToolUse", Some(EDIT_TOOLS), HookKind::Edit),
    ("SessionStart", None, HookKind::SessionStart),
    ("Stop", None, HookKind::Stop),
];

/// Auggie.
pub struct Auggie;

impl AgentTool for Auggie {
    fn name(&self) -> &'static str {
        "auggie"
    }

    fn title(&self) -> &'static str {
        "Auggie"
    }

    fn parse_edit(&self, input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
        parse_edit(input, cwd)
    }

    fn answer(&self, verdict: &Verdict) -> Answer {
        super::claude::answer(verdict)
    }

    fn parse_session_start(&self, input: &str, cwd: &Path) -> Result<SessionStart, EventError> {
        session_start_event(Tool::AUGGIE, input, cwd, "SessionStart", ID_KEYS)
    }

    fn answer_session_start(&self, briefing: &Briefing) -> Answer {
        super::claude::answer_session_start(briefing)
    }

    /// Auggie's `Stop` has no loop flag: never a continuation.
    fn parse_stop(&self, input: &str, cwd: &Path) -> Result<Stop, EventError> {
        stop_event(Tool::AUGGIE, input, cwd, ID_KEYS, &|o| {
            check_event(o, "Stop").map(|()| false)
        })
    }

    fn answer_stop(&self, reason: Option<&str>) -> Answer {
        super::claude::answer_stop(reason)
    }

    fn missing_answer(&self, kind: HookKind, text: &str) -> Value {
        super::claude::missing_answer(kind, text)
    }

    fn session_note(&self, session: &str, by_process: bool, _: Option<&Path>) -> String {
        if by_process {
            format!(
                "the bsi commands you run in your shell act for it: bsi finds it from the Auggie process they run under; `--session {session}` names it too"
            )
        } else {
            format!(
                "BSI_SESSION is not set in your shell: add `--session {session}` to every bsi command"
            )
        }
    }

    /// Auggie merges the hooks of the user's and the project's settings
    /// files; whether it drops a repeat across them was not seen (it was
    /// not run here), so bsi takes it that both run: the second run of a session start must not brief the agent
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
        Some(places.home.as_ref()?.join(".augment").join("settings.json"))
    }

    fn install_notes(&self, _: &Path, _: &Path) -> Vec<String> {
        vec![
            "Auggie reads hooks from the project's .augment/settings.json and the user's ~/.augment/settings.json; it runs only against Augment's service, after `auggie login`.".into(),
        ]
    }

    /// `mcpServers.bsi` in the same settings file (`auggie mcp add
    /// --project` writes there).
    fn mcp_settings(&self) -> McpSettings {
        McpSettings::Json {
            file: SETTINGS,
            key: "mcpServers",
            stdio: false,
        }
    }

    fn trust(&self, _: &Path, _: &Path, _: &Places) -> Item {
        Item {
            what: "trust",
            ok: None,
            detail: "Auggie has no trust step of its own for project hooks that bsi can read"
                .into(),
            next: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::fixture;
    use super::super::{new_text, parse_edit as parse, shell_writes::NoDisk};
    use super::*;
    use serde_json::json;

    fn request(name: &str) -> EditRequest {
        super::super::tests_support::edit_request(Tool::AUGGIE, name)
    }

    #[test]
    fn str_replace_sends_its_pairs() {
        let r = request("auggie-pretooluse-str-replace-editor.json");
        assert_eq!(r.session_id, "7c0e2f4a-1b3d-4e5f-8a9b-0c1d2e3f4a5b");
        assert_eq!(
            r.edits[0].path,
            PathBuf::from("/home/me/brain/projets/plan.md")
        );
        assert_eq!(
            new_text(&r.edits[0], Some("- goal text\n")),
            Ok(Some("- stolen goal\n".into()))
        );
    }

    #[test]
    fn an_insert_is_judged_at_file_level() {
        let mut v: Value =
            serde_json::from_str(&fixture("auggie-pretooluse-str-replace-editor.json"))
                .expect("json");
        v["tool_input"] = json!({"command": "insert", "path": "projets/plan.md", "insert_line_1": 3, "new_str_1": "x"});
        let Ok(PreEdit::Edit(r)) = parse(Tool::AUGGIE, &v.to_string(), Path::new("/")) else {
            panic!("{v}");
        };
        assert!(matches!(r.edits[0].op, EditOp::WholeFile), "{r:?}");
    }

    #[test]
    fn save_file_adds_the_last_newline_and_remove_files_deletes() {
        let r = request("auggie-pretooluse-save-file.json");
        assert_eq!(
            r.edits[0].op,
            EditOp::Write {
                content: "# New\n\nnotes\n".into()
            }
        );
        let r = request("auggie-pretooluse-remove-files.json");
        assert_eq!(r.edits.len(), 2);
        assert!(r.edits.iter().all(|e| e.op == EditOp::Delete));
    }

    #[test]
    fn launch_process_is_read_for_the_files_it_writes_in_its_cwd() {
        let mut v: Value =
            serde_json::from_str(&fixture("auggie-pretooluse-launch-process.json")).expect("json");
        v["tool_input"]["command"] = json!("echo x >> agents/alice.md");
        v["tool_input"]["cwd"] = json!("/home/me/brain/sub");
        let Ok(PreEdit::Shell(cmd)) = parse(Tool::AUGGIE, &v.to_string(), Path::new("/")) else {
            panic!("{v}");
        };
        let r = cmd.edits(&NoDisk).expect("writes");
        assert_eq!(
            r.edits[0].path,
            PathBuf::from("/home/me/brain/sub/agents/alice.md")
        );
    }

    #[test]
    fn session_start_and_stop_and_answers() {
        let start = super::super::parse_session_start(
            Tool::AUGGIE,
            &fixture("auggie-sessionstart.json"),
            Path::new("/elsewhere"),
        )
        .expect("start");
        assert_eq!(start.cwd, PathBuf::from("/home/me/brain"));
        let stop =
            super::super::parse_stop(Tool::AUGGIE, &fixture("auggie-stop.json"), Path::new("/"))
                .expect("stop");
        assert_eq!(stop.session_id, start.session_id);
        assert!(!stop.continued);
        let deny: Value = serde_json::from_str(
            &Auggie
                .answer(&Verdict::Deny {
                    reason: "bsi: refused".into(),
                })
                .stdout,
        )
        .expect("json");
        assert_eq!(deny["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(deny["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        let back: Value =
            serde_json::from_str(&Auggie.answer_stop(Some("close")).stdout).expect("json");
        assert_eq!(back["decision"], "block");
    }
}
