//! VS Code's agent hooks (Preview): `PreToolUse`, `SessionStart` and `Stop`
//! as VS Code sends them to every hook of its agents (its Copilot, and the
//! Claude and Codex harnesses it runs), the answers, and the hook entries
//! of `.github/hooks/bsi-vscode.json`.
//!
//! VS Code reads hooks from `.github/hooks/*.json` (where Copilot CLI's
//! `bsi.json` is too) and from Claude Code's `.claude/settings.json`, and
//! ignores their matchers: bsi's Copilot and Claude hooks receive its
//! events as well. So an event of VS Code's shape ([`is_event`]: its common
//! `hookEventName` and `sessionId`, where Claude Code sends
//! `hook_event_name` and `session_id`) is read as VS Code's by whichever
//! hook of bsi's it reaches.
//!
//! VS Code's edit tools name files, not lines (`editFiles` sends
//! `{"files": [...]}`): such an edit is judged at file level, so a file in
//! which another session holds any part is refused. A refusal is
//! `hookSpecificOutput.permissionDecision: "deny"` with the reason in
//! `permissionDecisionReason`, as in Claude Code; a stop is held back with
//! `hookSpecificOutput.decision: "block"`.
//!
//! The shapes follow VS Code's hooks documentation ("Agent hooks in Visual
//! Studio Code", "Hooks reference"): VS Code does not run headless, so no
//! released build checks them here.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::doctor::Item;
use super::install::{HookEntry, HookLayout};
use super::mcp_config::McpSettings;
use super::{AgentTool, Places, SessionStart, Stop, Tool, session_start_event, stop_event};
use super::{
    Answer, Briefing, EditOp, EditRequest, EventError, FileEdit, HookKind, PreEdit, Replacement,
    Verdict, event_cwd, file_edit, first_str, object, opt_bool, opt_str, req_str,
};

/// Where VS Code's events name their session: its common `sessionId`
/// (Claude Code's `session_id` when a harness passes that on).
const ID_KEYS: &[&str] = &["sessionId", "session_id"];

/// Whether `input` is an event of VS Code's hooks: a JSON object with its
/// common `hookEventName` and `sessionId`, and without Claude Code's
/// `hook_event_name`. Cheap enough for every hook run.
pub fn is_event(input: &str) -> bool {
    // Most events of the other tools never name the field.
    if !input.contains("\"hookEventName\"") {
        return false;
    }
    let Ok(Value::Object(o)) = serde_json::from_str::<Value>(input) else {
        return false;
    };
    o.get("hookEventName").is_some_and(Value::is_string)
        && o.get("sessionId").is_some_and(Value::is_string)
        && !o.contains_key("hook_event_name")
}

/// The tool whose event `input` is, for a hook of bsi's installed for
/// `tool`: VS Code's events are VS Code's wherever they arrive; and Copilot
/// CLI, which reads every `.github/hooks/*.json` as VS Code does, may run
/// the hooks of `bsi-vscode.json` with its own events (`timestamp` in
/// milliseconds, where VS Code's is a date): those are Copilot's.
pub fn recognise(tool: Tool, input: &str) -> Tool {
    if is_event(input) {
        return Tool::VSCODE;
    }
    if tool == Tool::VSCODE
        && let Ok(Value::Object(o)) = serde_json::from_str::<Value>(input)
        && o.get("timestamp").is_some_and(Value::is_number)
    {
        return Tool::COPILOT;
    }
    tool
}

/// The event's name, checked against `want`.
fn check_event(o: &Map<String, Value>, want: &'static str) -> Result<(), EventError> {
    match opt_str(o, "hookEventName")? {
        Some(got) if got != want => Err(EventError::WrongEvent { got, want }),
        _ => Ok(()),
    }
}

/// A path of a tool's input: `filePath` (VS Code's tools name their
/// parameters in camelCase) or `path`.
fn path_of(input: &Map<String, Value>) -> Result<Option<String>, EventError> {
    Ok(opt_str(input, "filePath")?.or(opt_str(input, "path")?))
}

/// Reads a `PreToolUse` event.
pub fn parse_edit(input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
    let o = object(input)?;
    check_event(&o, "PreToolUse")?;
    let session_id = first_str(&o, ID_KEYS)?;
    let cwd = event_cwd(&o, cwd)?;
    let tool_name = req_str(&o, "tool_name")?;
    let empty = Map::new();
    let args = match o.get("tool_input") {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => &empty,
        Some(_) => {
            return Err(EventError::BadField {
                field: "tool_input",
                want: "an object",
            });
        }
    };
    let whole = |p: String| file_edit(&cwd, p, EditOp::WholeFile);
    let edits: Vec<FileEdit> = match tool_name.as_str() {
        "editFiles" => match args.get("files") {
            Some(Value::Array(files)) => files
                .iter()
                .map(|f| match f {
                    Value::String(p) => Ok(whole(p.clone())),
                    _ => Err(EventError::BadField {
                        field: "files",
                        want: "a list of paths",
                    }),
                })
                .collect::<Result<_, _>>()?,
            _ => return Err(EventError::Missing("files")),
        },
        "createFile" | "create_file" => {
            let path = path_of(args)?.ok_or(EventError::Missing("filePath"))?;
            match opt_str(args, "content")? {
                Some(content) => vec![file_edit(&cwd, path, EditOp::Write { content })],
                None => vec![whole(path)],
            }
        }
        "replace_string_in_file" => {
            let path = path_of(args)?.ok_or(EventError::Missing("filePath"))?;
            match (opt_str(args, "oldString")?, opt_str(args, "newString")?) {
                (Some(old), Some(new)) => vec![file_edit(
                    &cwd,
                    path,
                    EditOp::Replace(vec![Replacement {
                        old,
                        new,
                        all: false,
                    }]),
                )],
                _ => vec![whole(path)],
            }
        }
        "multi_replace_string_in_file" => match args.get("replacements") {
            Some(Value::Array(list)) => {
                // Per file, in order: its replacements, or `None` once one
                // of them does not send the text it replaces.
                let mut files: Vec<(String, Option<Vec<Replacement>>)> = Vec::new();
                for r in list {
                    let Value::Object(r) = r else {
                        return Err(EventError::BadField {
                            field: "replacements",
                            want: "a list of objects",
                        });
                    };
                    let p = path_of(r)?.ok_or(EventError::Missing("filePath"))?;
                    let rep = match (opt_str(r, "oldString")?, opt_str(r, "newString")?) {
                        (Some(old), Some(new)) => Some(Replacement {
                            old,
                            new,
                            all: false,
                        }),
                        _ => None,
                    };
                    let at = files.iter().position(|(f, _)| *f == p).unwrap_or_else(|| {
                        files.push((p, Some(Vec::new())));
                        files.len() - 1
                    });
                    let reps = &mut files[at].1;
                    match (reps.as_mut(), rep) {
                        (Some(v), Some(rep)) => v.push(rep),
                        _ => *reps = None,
                    }
                }
                files
                    .into_iter()
                    .map(|(p, reps)| match reps {
                        Some(reps) => file_edit(&cwd, p, EditOp::Replace(reps)),
                        None => whole(p),
                    })
                    .collect()
            }
            _ => return Err(EventError::Missing("replacements")),
        },
        "insert_edit_into_file" | "edit_notebook_file" | "deleteFile" | "delete_file" => {
            vec![whole(
                path_of(args)?.ok_or(EventError::Missing("filePath"))?,
            )]
        }
        "runTerminalCommand" | "run_in_terminal" => {
            let Some(command) = opt_str(args, "command")? else {
                return Ok(PreEdit::Other { tool_name });
            };
            return Ok(PreEdit::Shell(super::ShellCommand {
                tool: Tool::VSCODE,
                session_id,
                dir: cwd.clone(),
                cwd,
                tool_name,
                command,
            }));
        }
        _ => return Ok(PreEdit::Other { tool_name }),
    };
    Ok(PreEdit::Edit(EditRequest {
        tool: Tool::VSCODE,
        session_id,
        cwd,
        tool_name,
        edits,
    }))
}

/// The answer to `Stop`: `hookSpecificOutput.decision: "block"` sends the
/// agent back with the reason.
pub fn answer_stop(reason: Option<&str>) -> Answer {
    match reason {
        Some(r) => Answer::json(&json!({
            "hookSpecificOutput": {
                "hookEventName": "Stop",
                "decision": "block",
                "reason": r,
            }
        })),
        None => Answer::default(),
    }
}

/// bsi's own hooks file, relative to the work tree root: VS Code reads
/// every `.github/hooks/*.json`.
pub const SETTINGS: &str = ".github/hooks/bsi-vscode.json";

/// The hook entries bsi writes there. VS Code ignores matchers: every
/// tool call reaches the edit hook, which lets through what edits nothing.
pub(super) const ENTRIES: &[HookEntry] = &[
    ("PreToolUse", None, HookKind::Edit),
    ("SessionStart", None, HookKind::SessionStart),
    ("Stop", None, HookKind::Stop),
];

/// What the briefing says of VS Code's edit tools.
pub const FILE_LEVEL_NOTE: &str = "VS Code's edit tools name files, not lines: an edit of a file in which another session holds any section is refused, naming the holder. To edit beside it, claim your section (`bsi open FILE#Section`) and make the change with a tool that sends the text it replaces (`replace_string_in_file`, `multi_replace_string_in_file`), or wait for the holder (`bsi open FILE#Section --wait`)";

/// VS Code (agent hooks, Preview).
pub struct VsCode;

impl AgentTool for VsCode {
    fn name(&self) -> &'static str {
        "vscode"
    }

    fn title(&self) -> &'static str {
        "VS Code"
    }

    fn parse_edit(&self, input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
        parse_edit(input, cwd)
    }

    /// The answers of Claude Code's `PreToolUse`, which VS Code reads.
    fn answer(&self, verdict: &Verdict) -> Answer {
        super::claude::answer(verdict)
    }

    fn parse_session_start(&self, input: &str, cwd: &Path) -> Result<SessionStart, EventError> {
        let o = object(input)?;
        check_event(&o, "SessionStart")?;
        session_start_event(Tool::VSCODE, input, cwd, "SessionStart", ID_KEYS)
    }

    fn answer_session_start(&self, briefing: &Briefing) -> Answer {
        super::claude::answer_session_start(briefing)
    }

    fn parse_stop(&self, input: &str, cwd: &Path) -> Result<Stop, EventError> {
        stop_event(Tool::VSCODE, input, cwd, ID_KEYS, &|o| {
            check_event(o, "Stop")?;
            Ok(opt_bool(o, "stop_hook_active")?.unwrap_or(false))
        })
    }

    fn answer_stop(&self, reason: Option<&str>) -> Answer {
        answer_stop(reason)
    }

    fn missing_answer(&self, kind: HookKind, text: &str) -> Value {
        super::claude::missing_answer(kind, text)
    }

    /// VS Code runs one event through every hooks file that holds bsi's
    /// hook (its own, Copilot CLI's, Claude Code's settings): the second
    /// run of one session start answers nothing.
    fn repeats_event(&self, kind: HookKind) -> bool {
        kind == HookKind::SessionStart
    }

    fn session_note(&self, session: &str, _: bool, _: Option<&Path>) -> String {
        format!(
            "pass it to bsi: `export {}` in your terminal, or `--session {session}`. {FILE_LEVEL_NOTE}",
            bsi_core::words::assignment("BSI_SESSION", session)
        )
    }

    fn settings_file(&self) -> &'static str {
        SETTINGS
    }

    fn entries(&self) -> &'static [HookEntry] {
        ENTRIES
    }

    /// VS Code's own format: flat entries, each `"type": "command"` and a
    /// `command`.
    fn hook_layout(&self) -> HookLayout {
        HookLayout::Flat {
            command_key: "command",
            typed: true,
            mend_matcher: false,
        }
    }

    fn install_notes(&self, _: &Path, _: &Path) -> Vec<String> {
        vec![
            "VS Code runs the hooks of .github/hooks (agent hooks are in Preview; an organisation may turn them off), and also bsi's hooks for Claude Code and Copilot CLI when they are installed: bsi reads VS Code's events in each and answers once. Its \"GitHub Copilot Chat Hooks\" output channel shows each run.".into(),
            "VS Code's edit tools name files, not lines: an edit of a file in which another session holds a section is refused, naming the holder.".into(),
        ]
    }

    fn mcp_settings(&self) -> McpSettings {
        McpSettings::Json {
            file: ".vscode/mcp.json",
            key: "servers",
            stdio: true,
        }
    }

    fn trust(&self, _: &Path, _: &Path, _: &Places) -> Item {
        Item {
            what: "trust",
            ok: None,
            detail: "VS Code keeps no record bsi can read of whether it runs this workspace's hooks (agent hooks are in Preview, and `chat.hookFilesLocations` can turn .github/hooks off)".into(),
            next: Some(
                "open the workspace in VS Code, trust it, and check \"Load Hooks\" in its logs"
                    .into(),
            ),
        }
    }

    fn reached_by(&self) -> &'static str {
        "session-start hook"
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::fixture;
    use super::super::{Tool, new_text, parse_session_start, parse_stop};
    use super::*;
    use std::path::PathBuf;

    fn edit(name: &str) -> EditRequest {
        super::super::tests_support::edit_request(Tool::VSCODE, name)
    }

    #[test]
    fn vs_code_events_are_told_from_the_others() {
        for name in [
            "vscode-pretooluse-editfiles.json",
            "vscode-pretooluse-create-file.json",
            "vscode-sessionstart.json",
            "vscode-stop.json",
        ] {
            assert!(is_event(&fixture(name)), "{name}");
        }
        for name in [
            "claude-pretooluse-edit.json",
            "copilot-pretooluse-edit.json",
            "gemini-beforetool-write-file.json",
            "codex-sessionstart.json",
            "cursor-pretooluse-write.json",
        ] {
            assert!(!is_event(&fixture(name)), "{name}");
        }
        assert!(!is_event("not json \"hookEventName\""));
    }

    #[test]
    fn each_event_is_read_as_the_tool_that_sends_it() {
        let vscode = fixture("vscode-pretooluse-editfiles.json");
        for door in [Tool::CLAUDE, Tool::COPILOT, Tool::VSCODE] {
            assert_eq!(recognise(door, &vscode), Tool::VSCODE);
        }
        for name in ["copilot-pretooluse-edit.json", "copilot-sessionstart.json"] {
            assert_eq!(recognise(Tool::VSCODE, &fixture(name)), Tool::COPILOT);
            assert_eq!(recognise(Tool::COPILOT, &fixture(name)), Tool::COPILOT);
        }
        let claude = fixture("claude-pretooluse-edit.json");
        assert_eq!(recognise(Tool::CLAUDE, &claude), Tool::CLAUDE);
        assert_eq!(recognise(Tool::VSCODE, "not json"), Tool::VSCODE);
    }

    #[test]
    fn edit_files_names_files_and_is_judged_at_file_level() {
        let r = edit("vscode-pretooluse-editfiles.json");
        assert_eq!(r.session_id, "vscode-session-7f3a");
        assert_eq!(r.cwd, PathBuf::from("/home/me/brain"));
        assert_eq!(r.tool_name, "editFiles");
        assert_eq!(r.edits.len(), 1);
        assert_eq!(
            r.edits[0].path,
            PathBuf::from("/home/me/brain/projets/plan.md")
        );
        assert!(new_text(&r.edits[0], Some("x")).is_err());
        let r = edit("vscode-pretooluse-create-file.json");
        assert_eq!(
            r.edits[0].path,
            PathBuf::from("/home/me/brain/notes/new.md")
        );
    }

    /// A replacement that sends the text it replaces (VS Code's
    /// `replace_string_in_file` and `multi_replace_string_in_file`, their
    /// camelCase `filePath`, `oldString`, `newString`) is judged by section;
    /// one that does not, at file level.
    #[test]
    fn replacements_that_send_their_text_are_judged_by_section() {
        let event = |tool: &str, input: &str| {
            format!(
                r#"{{"timestamp":"2026-02-09T10:30:00.000Z","cwd":"/b","sessionId":"s","hookEventName":"PreToolUse","tool_name":"{tool}","tool_input":{input}}}"#
            )
        };
        let one = event(
            "replace_string_in_file",
            r#"{"filePath":"/b/a.md","oldString":"x","newString":"y"}"#,
        );
        let Ok(PreEdit::Edit(r)) = parse_edit(&one, Path::new("/")) else {
            panic!("{one}");
        };
        assert_eq!(new_text(&r.edits[0], Some("x\n")), Ok(Some("y\n".into())));
        let many = event(
            "multi_replace_string_in_file",
            r#"{"replacements":[{"filePath":"/b/a.md","oldString":"x","newString":"y"},{"filePath":"/b/c.md"},{"filePath":"/b/a.md","oldString":"z","newString":"w"}]}"#,
        );
        let Ok(PreEdit::Edit(r)) = parse_edit(&many, Path::new("/")) else {
            panic!("{many}");
        };
        assert_eq!(r.edits.len(), 2);
        assert_eq!(
            new_text(&r.edits[0], Some("x z\n")),
            Ok(Some("y w\n".into()))
        );
        assert!(new_text(&r.edits[1], Some("c\n")).is_err());
    }

    #[test]
    fn other_tools_pass_and_malformed_events_are_errors() {
        let read = r#"{"timestamp":"2026-02-09T10:30:00.000Z","cwd":"/b","sessionId":"s","hookEventName":"PreToolUse","tool_name":"readFile","tool_input":{"filePath":"/b/a.md"}}"#;
        assert!(matches!(
            parse_edit(read, Path::new("/")),
            Ok(PreEdit::Other { .. })
        ));
        for bad in [
            r#"{"sessionId":"s","hookEventName":"PreToolUse","tool_name":"editFiles","tool_input":{}}"#,
            r#"{"sessionId":"s","hookEventName":"PreToolUse","tool_name":"editFiles","tool_input":{"files":[1]}}"#,
            r#"{"sessionId":"s","hookEventName":"Stop","tool_name":"editFiles","tool_input":{"files":[]}}"#,
            r#"{"hookEventName":"PreToolUse","tool_name":"editFiles","tool_input":{"files":[]}}"#,
        ] {
            assert!(parse_edit(bad, Path::new("/")).is_err(), "{bad}");
        }
    }

    #[test]
    fn session_start_and_stop() {
        let s = parse_session_start(
            Tool::VSCODE,
            &fixture("vscode-sessionstart.json"),
            Path::new("/"),
        )
        .expect("start");
        assert_eq!(s.session_id, "vscode-session-7f3a");
        let s =
            parse_stop(Tool::VSCODE, &fixture("vscode-stop.json"), Path::new("/")).expect("stop");
        assert!(!s.continued);
        let a = answer_stop(Some("commit, then bsi close"));
        let v: Value = serde_json::from_str(&a.stdout).expect("json");
        assert_eq!(v["hookSpecificOutput"]["decision"], "block");
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "Stop");
    }
}
