//! Cline CLI: its hook files, the `tool_call` event (`PreToolUse`) for its
//! `editor`, `apply_patch` and `run_commands` tools, and the answers.
//!
//! Cline runs every executable file named after a hook in
//! `.clinerules/hooks/` (`PreToolUse`, `PreToolUse.sh`…) with the event as
//! JSON on stdin, and reads a JSON object back from stdout whatever the exit
//! code. Of its hooks only `PreToolUse` and `PostToolUse` are waited for:
//! `TaskStart` and `TaskComplete` run detached, their output dropped. So
//! bsi installs one hook, `PreToolUse`, which also briefs the agent on the
//! first tool call of a session (what the session-start hook does in the
//! other tools); there is no stop hook whose answer Cline reads: even
//! waited for, `TaskComplete` runs from the agent's after-run hooks, whose
//! results the agent drops, and `submit_and_exit` (a tool call that ends
//! the run, where `PreToolUse` could speak) is offered only in `yolo` mode,
//! where the CLI runs no hook (docs/agent-tools.md, "Cline CLI").
//!
//! A `PreToolUse` answer's `context` reaches the model, after the tool's
//! result, as a `<hook_context>` block; `cancel: true` stops the whole run
//! without a word to the model. A refusal therefore lets the run go on and
//! takes the edit away instead: `overrideInput` replaces the call's input
//! with one each of the three tools fails on without touching a file (a
//! path with a NUL byte, a patch that is no patch, a command that only
//! says it was refused), and `context` gives the model bsi's reason.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::doctor::Item;
use super::install::{self, HookEntry, HookLayout, Installed, Uninstalled};
use super::mcp_config::{self, McpSettings, Registration};
use super::{AgentTool, HookKind, Places, SessionStart};
use super::{
    Answer, Briefing, EditOp, EditRequest, EventError, PreEdit, Replacement, ShellCommand, Stop,
    Tool, Verdict, clean, file_edit, object, opt_str, req_obj, req_str,
};
use bsi_core::error::Result;

/// The project's hook directory, relative to the work tree root.
pub const HOOKS_DIR: &str = ".clinerules/hooks";

/// The project's other hook directory, which Cline CLI reads too (3.0.65:
/// `.clinerules/hooks` and `.cline/hooks`): bsi's hook goes there when
/// `.clinerules` is a file of rules, which Cline still reads.
pub const OTHER_HOOKS_DIR: &str = ".cline/hooks";

/// The hook directory bsi writes in, in the work tree at `root`:
/// `.clinerules/hooks`, unless `.clinerules` is there and is not a
/// directory.
fn hooks_dir(root: &Path) -> PathBuf {
    let rules = root.join(".clinerules");
    match std::fs::metadata(&rules) {
        Ok(m) if !m.is_dir() => root.join(OTHER_HOOKS_DIR),
        _ => root.join(HOOKS_DIR),
    }
}

/// The hook bsi installs.
pub const HOOK: &str = "PreToolUse";

/// The names bsi may give its hook file, in the order it tries them: the
/// first that is absent or already bsi's. Cline runs each of them (a hook
/// name, then an extension it knows), so a person's own `PreToolUse` stays
/// and runs too.
pub const FILE_NAMES: [&str; 3] = ["PreToolUse", "PreToolUse.sh", "PreToolUse.bash"];

/// The first line after the shebang of bsi's hook file: how bsi knows its
/// own.
pub const MARKER: &str = "# bsi: Brain Session Index's edit guard for Cline CLI";

/// The event name Cline sends for `PreToolUse` (`hookName`).
const TOOL_CALL: &str = "tool_call";

/// Cline's shell tool.
pub const SHELL_TOOL: &str = "run_commands";

/// What a refused call's input becomes: every tool bsi judges fails on it
/// before it writes anything. `editor` cannot open a path holding a NUL
/// byte, `apply_patch` finds no patch in `input`, and `run_commands` runs
/// only a command that says the call was refused and fails.
fn refused_input() -> Value {
    let why = "bsi refused this call: the reason follows in the hook context";
    json!({
        "path": format!("\u{0}{why}"),
        "new_text": "",
        "input": why,
        "commands": [format!("echo '{why}' >&2; exit 1")],
    })
}

/// The tool session of an event: Cline's session (`sessionContext.
/// rootSessionId`, shared by the subagents it spawns), else the task.
fn session_of(o: &Map<String, Value>) -> Result<String, EventError> {
    if let Some(Value::Object(c)) = o.get("sessionContext")
        && let Some(Value::String(s)) = c.get("rootSessionId")
        && !s.is_empty()
    {
        return Ok(s.clone());
    }
    req_str(o, "taskId")
}

/// The event's directory: its first workspace root, else the caller's.
fn cwd_of(o: &Map<String, Value>, fallback: &Path) -> PathBuf {
    match o.get("workspaceRoots") {
        Some(Value::Array(roots)) => match roots.first() {
            Some(Value::String(r)) if !r.is_empty() => clean(&fallback.join(r)),
            _ => fallback.to_path_buf(),
        },
        _ => fallback.to_path_buf(),
    }
}

/// Checks `hookName`: Cline sends its runtime's name (`tool_call`); its
/// documentation names the hook (`PreToolUse`).
fn check_hook(o: &Map<String, Value>, want: &[&str], name: &'static str) -> Result<(), EventError> {
    match opt_str(o, "hookName")? {
        Some(got) if !want.contains(&got.as_str()) => {
            Err(EventError::WrongEvent { got, want: name })
        }
        _ => Ok(()),
    }
}

/// The tool session and directory of an event of any kind, for the first
/// call's briefing; `None` when the event is not one bsi reads.
pub fn session_and_cwd(input: &str, cwd: &Path) -> Option<(String, PathBuf)> {
    let o = object(input).ok()?;
    Some((session_of(&o).ok()?, cwd_of(&o, cwd)))
}

/// Reads a `PreToolUse` (`tool_call`) event.
pub fn parse_edit(input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
    let o = object(input)?;
    check_hook(&o, &[TOOL_CALL, "PreToolUse"], "tool_call")?;
    let session_id = session_of(&o)?;
    let cwd = cwd_of(&o, cwd);
    let call = req_obj(&o, "tool_call")?;
    let tool_name = req_str(call, "name")?;
    let edits = match tool_name.as_str() {
        "editor" => {
            let input = req_obj(call, "input")?;
            let path = req_str(input, "path")?;
            let new = req_str(input, "new_text")?;
            let op = match (input.get("insert_line"), opt_str(input, "old_text")?) {
                (Some(Value::Number(n)), _) => EditOp::Insert {
                    // A line below 1 is refused by the editor: judged at
                    // file level, as a line past the end is.
                    line: n.as_u64().unwrap_or(0),
                    content: new,
                },
                (None | Some(Value::Null), Some(old)) => EditOp::Replace(vec![Replacement {
                    old,
                    new,
                    all: false,
                }]),
                // No text to replace: the editor creates the file (and
                // refuses when it exists), so the whole file is new.
                (None | Some(Value::Null), None) => EditOp::Write { content: new },
                (Some(_), _) => {
                    return Err(EventError::BadField {
                        field: "insert_line",
                        want: "a number",
                    });
                }
            };
            vec![file_edit(&cwd, path, op)]
        }
        "apply_patch" => {
            let input = req_obj(call, "input")?;
            super::codex::patch_edits(&req_str(input, "input")?, &cwd)?
        }
        SHELL_TOOL => {
            let input = req_obj(call, "input")?;
            let command = match input.get("commands") {
                Some(Value::Array(list)) => list
                    .iter()
                    .map(|c| c.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or(EventError::BadField {
                        field: "commands",
                        want: "a list of strings",
                    })?
                    .join("\n"),
                Some(Value::String(c)) => c.clone(),
                None | Some(Value::Null) => return Err(EventError::Missing("commands")),
                Some(_) => {
                    return Err(EventError::BadField {
                        field: "commands",
                        want: "a list of strings",
                    });
                }
            };
            return Ok(PreEdit::Shell(ShellCommand {
                tool: Tool::CLINE,
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
        tool: Tool::CLINE,
        session_id,
        cwd,
        tool_name,
        edits,
    }))
}

/// The answer to a `PreToolUse` event. What the model must read goes in
/// `context`; a refusal also replaces the call's input with one the tool
/// fails on ([`refused_input`]).
pub fn answer(verdict: &Verdict) -> Answer {
    match verdict {
        Verdict::Allow => Answer::json(&json!({})),
        Verdict::Claimed { message } => Answer::json(&json!({ "context": message })),
        Verdict::Deny { reason } => Answer::json(&json!({
            "context": reason,
            "overrideInput": refused_input(),
        })),
        Verdict::AllowWithWarning { warning } => {
            Answer::json(&json!({ "context": format!("bsi: {warning}") })).with_stderr(warning)
        }
    }
}

/// `answer` with the session's briefing before what it tells the model:
/// the first tool call of a session carries it.
pub fn with_briefing(answer: Answer, briefing: &str) -> Answer {
    let mut o = match serde_json::from_str::<Value>(&answer.stdout) {
        Ok(Value::Object(o)) => o,
        _ => Map::new(),
    };
    let context = match o.get("context").and_then(Value::as_str) {
        Some(c) if !c.is_empty() => format!("{briefing}\n\n{c}"),
        _ => briefing.to_string(),
    };
    o.insert("context".into(), Value::String(context));
    Answer {
        stdout: format!("{}\n", Value::Object(o)),
        ..answer
    }
}

/// Reads a `TaskStart` (`agent_start`) or `TaskResume` event.
pub fn parse_session_start(input: &str, cwd: &Path) -> Result<super::SessionStart, EventError> {
    let o = object(input)?;
    check_hook(
        &o,
        &["agent_start", "agent_resume", "TaskStart", "TaskResume"],
        "agent_start",
    )?;
    let source = opt_str(&o, "hookName")?;
    Ok(super::SessionStart {
        tool: Tool::CLINE,
        session_id: session_of(&o)?,
        cwd: cwd_of(&o, cwd),
        source,
    })
}

/// The answer to `TaskStart`: the briefing as context (Cline 3.0 runs
/// `TaskStart` detached and reads none of it; the first `PreToolUse`
/// carries the briefing instead).
pub fn answer_session_start(briefing: &Briefing) -> Answer {
    Answer::json(&json!({ "context": briefing.context }))
}

/// Reads a `TaskComplete` (`agent_end`) event.
pub fn parse_stop(input: &str, cwd: &Path) -> Result<Stop, EventError> {
    let o = object(input)?;
    check_hook(&o, &["agent_end", "TaskComplete"], "agent_end")?;
    Ok(Stop {
        tool: Tool::CLINE,
        session_id: session_of(&o)?,
        cwd: cwd_of(&o, cwd),
        continued: false,
    })
}

/// The answer to `TaskComplete`: Cline runs it detached and reads nothing
/// back (its agent drops what an after-run hook returns, waited for or
/// not): the reminder is context no model reads, and bsi installs no
/// `TaskComplete` hook.
pub fn answer_stop(reason: Option<&str>) -> Answer {
    match reason {
        Some(r) => Answer::json(&json!({ "context": r })),
        None => Answer::json(&json!({})),
    }
}

/// What the briefing says about passing the session to bsi: the agent's
/// shell commands run under the Cline process that ran the hook, and bsi
/// finds the session from there.
pub fn session_note(session: &str, by_process: bool) -> String {
    if by_process {
        format!(
            "the bsi commands you run with run_commands act for it: bsi finds it from the Cline process they run under; `--session {session}` names it too"
        )
    } else {
        format!(
            "BSI_SESSION is not set in your shell, and an `export` does not last from one command to the next: add `--session {session}` to every bsi command"
        )
    }
}

/// The text of bsi's hook file: a POSIX shell script running `command`
/// ([`super::install::hook_command`]) with the event on its stdin.
pub fn hook_file(command: &str) -> String {
    format!("#!/bin/sh\n{MARKER}\n# `bsi agent uninstall cline` takes it out.\n{command}\n")
}

/// Whether `text` is a hook file bsi wrote.
pub fn is_ours(text: &str) -> bool {
    text.lines().nth(1) == Some(MARKER)
}

/// The command lines of bsi's hook file (nothing for another file).
pub fn commands_in(text: &str) -> Vec<String> {
    if !is_ours(text) {
        return Vec::new();
    }
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

// --- bsi's hook file and MCP server ------------------------------------------

/// The file that holds bsi's hook in the work tree at `root`: the hook
/// file of bsi's among those it may take ([`FILE_NAMES`]), else the first
/// it would take.
fn hook_path(root: &Path) -> PathBuf {
    let text = |p: &Path| std::fs::read_to_string(p).ok();
    // bsi's file where an earlier install wrote it, in either directory.
    if let Some(p) = [HOOKS_DIR, OTHER_HOOKS_DIR]
        .into_iter()
        .flat_map(|d| FILE_NAMES.map(|n| root.join(d).join(n)))
        .find(|p| p.is_file() && text(p).is_some_and(|t| is_ours(&t)))
    {
        return p;
    }
    let dir = hooks_dir(root);
    let files = FILE_NAMES.map(|n| dir.join(n));
    files
        .iter()
        .find(|p| p.symlink_metadata().is_err())
        .cloned()
        .unwrap_or_else(|| files[0].clone())
}

/// The directory of bsi's hook file, as a person reads it: relative to the
/// work tree at `root`.
fn shown_dir(root: &Path) -> String {
    let path = hook_path(root);
    let dir = path.parent().unwrap_or(&path);
    dir.strip_prefix(root).unwrap_or(dir).display().to_string()
}

/// Cline CLI: bsi's hook is a file of its own in `.clinerules/hooks`,
/// written under the first of its names that no other hook has; a
/// person's own hooks are never touched.
fn install_hook(root: &Path, program: &str) -> Result<(PathBuf, Installed)> {
    let path = hook_path(root);
    let want = hook_file(&install::hook_command(program, Tool::CLINE, HookKind::Edit));
    let before = install::read_opt(&path)?;
    if let Some(b) = &before {
        if *b == want.as_bytes() {
            return Ok((path, Installed::Already));
        }
        if !is_ours(&String::from_utf8_lossy(b)) {
            return Err(bsi_core::error::Error::Usage(format!(
                "{} already holds hooks of its own under every name bsi may give its hook ({}); nothing was written. Next: rename one of them (Cline runs any `PreToolUse.EXT` it knows), then `bsi agent install cline` again",
                path.parent().unwrap_or(root).display(),
                FILE_NAMES.join(", ")
            )));
        }
    }
    install::write_atomic(&path, want.as_bytes())?;
    install::make_executable(&path)?;
    Ok((
        path,
        if before.is_some() {
            Installed::Merged
        } else {
            Installed::Created
        },
    ))
}

/// Takes out every hook file of bsi's in `.clinerules/hooks` and
/// `.cline/hooks` (and the directories, when bsi's file was all they
/// held).
fn uninstall_hook(root: &Path) -> Result<(PathBuf, Uninstalled)> {
    let mut removed = None;
    for rel in [HOOKS_DIR, OTHER_HOOKS_DIR] {
        let dir = root.join(rel);
        let mut here = false;
        for name in FILE_NAMES {
            let path = dir.join(name);
            if path.is_file() && std::fs::read_to_string(&path).is_ok_and(|t| is_ours(&t)) {
                install::remove_opt(&path)?;
                removed.get_or_insert(path);
                here = true;
            }
        }
        // Only when empty: the hooks directory, then its parent.
        if here
            && std::fs::remove_dir(&dir).is_ok()
            && let Some(parent) = dir.parent()
        {
            let _ = std::fs::remove_dir(parent);
        }
    }
    match removed {
        Some(path) => Ok((path, Uninstalled::Restored)),
        None => Ok((hook_path(root), Uninstalled::NotInstalled)),
    }
}

/// Cline CLI's MCP settings file, in the user's Cline data directory.
pub const MCP_SETTINGS: &str = "cline_mcp_settings.json";

/// The command that registers bsi's server in Cline CLI's settings.
pub const MCP_ADD: &str = "cline mcp add bsi --yes -- bsi mcp --tool cline";

/// Cline CLI's MCP settings, relative to the user's home: its default data
/// directory (`--data-dir` moves it).
pub const MCP_SETTINGS_IN_HOME: &str = ".cline/data/settings/cline_mcp_settings.json";

/// What Cline CLI's MCP settings `text` register under bsi's name:
/// [`MCP_ADD`] writes `{"mcpServers": {"bsi": {"transport": {"type":
/// "stdio", "command": "bsi", "args": ["mcp", "--tool", "cline"]}}}}`
/// (a `command` beside `transport` is read the same way).
pub fn mcp_registration(text: &str) -> Registration {
    let Ok(Value::Object(v)) = serde_json::from_str::<Value>(text) else {
        return Registration::Unreadable;
    };
    let Some(entry) = v.get("mcpServers").and_then(|s| s.get(mcp_config::NAME)) else {
        return Registration::Missing;
    };
    let run = entry.get("transport").unwrap_or(entry);
    let command = run.get("command").and_then(Value::as_str).unwrap_or("");
    let args: Vec<&str> = run
        .get("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let ours = Path::new(command)
        .file_name()
        .is_some_and(|n| n == install::PROGRAM);
    match args.as_slice() {
        ["mcp", "--tool", "cline"] if ours => Registration::Registered,
        ["mcp", ..] if ours => Registration::Differs,
        _ => Registration::Foreign,
    }
}

/// Whether bsi's MCP server is in Cline CLI's settings, which live in the
/// user's home (its default data directory), never the work tree: bsi reads
/// them and writes nothing there; the command that registers it is said.
fn mcp_item(places: &Places) -> Item {
    let shown = format!("~/{MCP_SETTINGS_IN_HOME}");
    let add = format!("`{MCP_ADD}`");
    let text = places
        .home
        .as_ref()
        .and_then(|h| std::fs::read_to_string(h.join(MCP_SETTINGS_IN_HOME)).ok());
    let fix = format!("edit the `bsi` entry of {shown} to run `bsi mcp --tool cline`");
    let (ok, detail, next) = match text.as_deref().map(mcp_registration) {
        Some(Registration::Registered) => (
            Some(true),
            format!("bsi's MCP server (`bsi mcp`) is registered in {shown}"),
            None,
        ),
        Some(Registration::Differs) => (
            Some(false),
            format!("{shown} runs `bsi mcp`, but not as {add} registers it"),
            Some(fix),
        ),
        Some(Registration::Foreign) => (
            None,
            format!("{shown} has a server named bsi that does not run `bsi mcp`"),
            Some(fix),
        ),
        Some(Registration::Unreadable) => (
            None,
            format!("{shown} cannot be read as Cline CLI's MCP settings"),
            Some(format!("fix {shown}, then {add}")),
        ),
        Some(Registration::Missing) | None => (
            None,
            format!(
                "Cline CLI reads MCP servers from the user's settings only: bsi's is not in {shown} (Cline's default data directory; `--data-dir` moves it)"
            ),
            Some(format!("to give the agent bsi's MCP tools: {add}")),
        ),
    };
    Item {
        what: "mcp",
        ok,
        detail,
        next,
    }
}

/// Cline CLI.
pub struct Cline;

impl AgentTool for Cline {
    fn name(&self) -> &'static str {
        "cline"
    }

    fn title(&self) -> &'static str {
        "Cline CLI"
    }

    fn parse_edit(&self, input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
        parse_edit(input, cwd)
    }

    fn answer(&self, verdict: &Verdict) -> Answer {
        answer(verdict)
    }

    fn parse_session_start(&self, input: &str, cwd: &Path) -> Result<SessionStart, EventError> {
        parse_session_start(input, cwd)
    }

    fn answer_session_start(&self, briefing: &Briefing) -> Answer {
        answer_session_start(briefing)
    }

    fn parse_stop(&self, input: &str, cwd: &Path) -> Result<Stop, EventError> {
        parse_stop(input, cwd)
    }

    fn answer_stop(&self, reason: Option<&str>) -> Answer {
        answer_stop(reason)
    }

    /// Cline gives the model a hook's `context`.
    fn missing_answer(&self, _: HookKind, text: &str) -> Value {
        json!({ "context": text })
    }

    fn session_note(&self, session: &str, by_process: bool, _: Option<&Path>) -> String {
        session_note(session, by_process)
    }

    /// Cline waits for no hook when a session starts: the first tool call
    /// of a session carries the briefing.
    fn first_call_session(&self, input: &str, cwd: &Path) -> Option<(String, PathBuf)> {
        session_and_cwd(input, cwd)
    }

    fn with_briefing(&self, answer: Answer, briefing: &str) -> Answer {
        with_briefing(answer, briefing)
    }

    /// The hook file under its usual name (bsi takes another when a
    /// person's own hook has it: [`AgentTool::settings_path`]).
    fn settings_file(&self) -> &'static str {
        ".clinerules/hooks/PreToolUse"
    }

    fn settings_path(&self, root: &Path) -> PathBuf {
        hook_path(root)
    }

    fn entries(&self) -> &'static [HookEntry] {
        &[(HOOK, None, HookKind::Edit)]
    }

    fn hook_layout(&self) -> HookLayout {
        HookLayout::Own
    }

    fn our_commands(&self, text: &str) -> Vec<String> {
        commands_in(text)
            .into_iter()
            .filter(|c| install::is_hook(c, self, HookKind::Edit))
            .collect()
    }

    fn install(&self, root: &Path, _: &Path, program: &str) -> Result<(PathBuf, Installed)> {
        install_hook(root, program)
    }

    fn uninstall(&self, root: &Path, _: &Path) -> Result<(PathBuf, Uninstalled)> {
        uninstall_hook(root)
    }

    fn install_notes(&self, root: &Path, _: &Path) -> Vec<String> {
        vec![format!(
            "Cline CLI runs the hooks in {} without a trust step. It waits for PreToolUse only (TaskStart and TaskComplete run detached, their answers unread): bsi briefs the agent on its first tool call, and has no reminder when it stops.",
            shown_dir(root)
        )]
    }

    // Cline CLI reads MCP servers from the user's settings only
    // (`~/.cline/data/settings/cline_mcp_settings.json`), never the work
    // tree's: `bsi agent install cline` names the command that registers
    // bsi there and writes no file.
    fn mcp_settings(&self) -> McpSettings {
        McpSettings::UserOnly {
            file: MCP_SETTINGS,
            add: MCP_ADD,
        }
    }

    fn trust(&self, root: &Path, _: &Path, _: &Places) -> Item {
        Item {
            what: "trust",
            ok: Some(true),
            detail: format!(
                "Cline CLI runs the hooks in {} without a trust step",
                shown_dir(root)
            ),
            next: None,
        }
    }

    fn reached_by(&self) -> &'static str {
        "first tool call"
    }

    fn user_mcp_item(&self, places: &Places) -> Option<Item> {
        Some(mcp_item(places))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::fixture;
    use super::super::{new_text, parse_edit as parse, shell_writes::NoDisk};
    use super::*;

    fn request(name: &str) -> EditRequest {
        super::super::tests_support::edit_request(Tool::CLINE, name)
    }

    #[test]
    fn editor_events_as_the_released_cli_sends_them() {
        let r = request("cline-pretooluse-editor-create.json");
        assert_eq!(r.session_id, "1796185252112_6oobd");
        assert_eq!(r.cwd, PathBuf::from("/tmp/brain"));
        assert_eq!(r.edits[0].path, PathBuf::from("/tmp/brain/notes/new.md"));
        assert!(matches!(&r.edits[0].op, EditOp::Write { content } if content == "# New\n"));
        let r = request("cline-pretooluse-editor-replace.json");
        assert_eq!(
            new_text(&r.edits[0], Some("# Plan\n\n## Goals\n\nold goal\n")),
            Ok(Some("# Plan\n\n## Goals\n\nnew goal\n".into()))
        );
        let r = request("cline-pretooluse-editor-insert.json");
        assert_eq!(
            new_text(&r.edits[0], Some("# Plan\n\n## Goals\n")),
            Ok(Some("# Plan\ninserted\n\n## Goals\n".into()))
        );
    }

    #[test]
    fn shell_commands_are_read_for_the_files_they_write() {
        let Ok(PreEdit::Shell(cmd)) = parse(
            Tool::CLINE,
            &fixture("cline-pretooluse-run-commands.json"),
            Path::new("/"),
        ) else {
            panic!("a run_commands call is a shell command");
        };
        assert_eq!(cmd.dir, PathBuf::from("/tmp/brain"));
        let r = cmd.edits(&NoDisk).expect("writes");
        assert_eq!(r.edits[0].path, PathBuf::from("/tmp/brain/notes/log.md"));
        let reads = r#"{"hookName":"tool_call","taskId":"t","workspaceRoots":["/b"],"tool_call":{"id":"c","name":"run_commands","input":{"commands":["ls","git status"]}}}"#;
        let Ok(PreEdit::Shell(cmd)) = parse(Tool::CLINE, reads, Path::new("/")) else {
            panic!("{reads}");
        };
        assert_eq!(cmd.session_id, "t");
        assert_eq!(cmd.edits(&NoDisk), None);
    }

    #[test]
    fn patches_other_tools_and_other_events() {
        let patch = r#"{"hookName":"tool_call","taskId":"t","workspaceRoots":["/b"],"tool_call":{"id":"c","name":"apply_patch","input":{"input":"*** Begin Patch\n*** Add File: n.md\n+x\n*** End Patch"}}}"#;
        let Ok(PreEdit::Edit(r)) = parse(Tool::CLINE, patch, Path::new("/")) else {
            panic!("{patch}");
        };
        assert_eq!(r.edits[0].path, PathBuf::from("/b/n.md"));
        let Ok(PreEdit::Other { tool_name }) = parse(
            Tool::CLINE,
            &fixture("cline-pretooluse-read-files.json"),
            Path::new("/"),
        ) else {
            panic!("a read is no edit");
        };
        assert_eq!(tool_name, "read_files");
        assert!(matches!(
            parse(
                Tool::CLINE,
                &fixture("cline-taskstart.json"),
                Path::new("/")
            ),
            Err(EventError::WrongEvent { .. })
        ));
        let s = super::super::parse_session_start(
            Tool::CLINE,
            &fixture("cline-taskstart.json"),
            Path::new("/"),
        )
        .expect("parses");
        assert_eq!(s.session_id, "1796185252112_6oobd");
        assert_eq!(
            session_and_cwd(&fixture("cline-taskstart.json"), Path::new("/")),
            Some(("1796185252112_6oobd".into(), PathBuf::from("/tmp/brain")))
        );
        let st = super::super::parse_stop(
            Tool::CLINE,
            &fixture("cline-taskcomplete.json"),
            Path::new("/"),
        )
        .expect("parses");
        assert!(!st.continued);
    }

    #[test]
    fn a_refusal_takes_the_edit_away_and_tells_the_model() {
        let d = answer(&Verdict::Deny {
            reason: "held by bob".into(),
        });
        assert_eq!(d.exit_code, 0);
        let v: Value = serde_json::from_str(&d.stdout).expect("json");
        assert_eq!(v["context"], "held by bob");
        assert!(v.get("cancel").is_none(), "cancel would stop the whole run");
        let over = &v["overrideInput"];
        assert!(over["path"].as_str().expect("path").starts_with('\u{0}'));
        assert!(
            over["commands"][0]
                .as_str()
                .expect("command")
                .ends_with("exit 1")
        );
        // What the refused input is for each tool: no edit, no write.
        let as_event = |name: &str| {
            json!({"hookName": "tool_call", "taskId": "t", "workspaceRoots": ["/b"],
                   "tool_call": {"id": "c", "name": name, "input": over}})
            .to_string()
        };
        let Ok(PreEdit::Shell(cmd)) = parse(Tool::CLINE, &as_event("run_commands"), Path::new("/"))
        else {
            panic!("shell");
        };
        assert_eq!(cmd.edits(&NoDisk), None);
        assert!(matches!(
            parse(Tool::CLINE, &as_event("apply_patch"), Path::new("/")),
            Err(EventError::Patch(_))
        ));
        assert_eq!(answer(&Verdict::Allow).stdout, "{}\n");
        let c = answer(&Verdict::Claimed {
            message: "claimed".into(),
        });
        let v: Value = serde_json::from_str(&c.stdout).expect("json");
        assert_eq!(v["context"], "claimed");
        let w = answer(&Verdict::AllowWithWarning {
            warning: "oops".into(),
        });
        assert!(w.stderr.contains("oops"));
        assert!(!w.stdout.contains("overrideInput"));
    }

    #[test]
    fn the_briefing_comes_first() {
        let b = with_briefing(answer(&Verdict::Allow), "brief");
        let v: Value = serde_json::from_str(&b.stdout).expect("json");
        assert_eq!(v["context"], "brief");
        let d = with_briefing(
            answer(&Verdict::Deny {
                reason: "held".into(),
            }),
            "brief",
        );
        let v: Value = serde_json::from_str(&d.stdout).expect("json");
        assert_eq!(v["context"], "brief\n\nheld");
        assert!(v["overrideInput"].is_object());
    }

    #[test]
    fn hook_files_are_known_by_their_marker() {
        let text = hook_file("bsi hook edit --tool cline || echo '{}'");
        assert!(is_ours(&text));
        assert_eq!(
            commands_in(&text),
            vec!["bsi hook edit --tool cline || echo '{}'".to_string()]
        );
        assert!(!is_ours("#!/bin/sh\necho mine\n"));
        assert!(commands_in("#!/bin/sh\nbsi hook edit --tool cline\n").is_empty());
    }

    #[test]
    fn cline_hook_files_round_trip() {
        let root = tempfile::tempdir().expect("tempdir");
        let root = root.path();
        let hooks = root.join(HOOKS_DIR);
        // A person's own PreToolUse hook: kept, bsi's takes the next name.
        std::fs::create_dir_all(&hooks).expect("mkdir");
        std::fs::write(hooks.join("PreToolUse"), "#!/bin/sh\necho '{}'\n").expect("write");
        let (path, did) = install_hook(root, "bsi").expect("install");
        assert_eq!(did, Installed::Created);
        assert_eq!(path, hooks.join("PreToolUse.sh"));
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(
            install::our_commands(Tool::CLINE, &text),
            vec![install::hook_command("bsi", Tool::CLINE, HookKind::Edit)]
        );
        assert_eq!(hook_path(root), path);
        assert_eq!(
            install_hook(root, "bsi").expect("again").1,
            Installed::Already
        );
        // A moved binary: the file is rewritten in place.
        assert_eq!(
            install_hook(root, "/opt/bsi/bin/bsi").expect("moved").1,
            Installed::Merged
        );
        let (_, did) = uninstall_hook(root).expect("uninstall");
        assert_eq!(did, Uninstalled::Restored);
        assert!(!path.exists());
        assert_eq!(
            std::fs::read_to_string(hooks.join("PreToolUse")).expect("kept"),
            "#!/bin/sh\necho '{}'\n"
        );
        assert_eq!(
            uninstall_hook(root).expect("again").1,
            Uninstalled::NotInstalled
        );
        // Every name taken by another hook: nothing written.
        for name in FILE_NAMES {
            std::fs::write(hooks.join(name), "#!/bin/sh\n").expect("write");
        }
        assert!(install_hook(root, "bsi").is_err());
        // Nothing else in the directories: they go with bsi's file.
        let fresh = tempfile::tempdir().expect("tempdir");
        install_hook(fresh.path(), "bsi").expect("install");
        uninstall_hook(fresh.path()).expect("uninstall");
        assert!(!fresh.path().join(".clinerules").exists());
    }
}
