//! OpenCode: its plugin API, not a hooks file. `bsi agent install opencode`
//! writes a small plugin, `.opencode/plugins/bsi.js` ([`plugin`]), which
//! OpenCode loads at startup from the project. Each of its hooks runs
//! `bsi hook edit|session-start|stop --tool opencode` with what OpenCode
//! gave the plugin on stdin, as one JSON object
//! `{"hook", "directory", "input", "output"}` (`hook`: OpenCode's name of
//! the hook; `directory`: the plugin's project directory; `input` and
//! `output`: OpenCode's own arguments to the hook), and follows the JSON
//! answer:
//!
//! - `tool.execute.before` (before every tool call; the plugin asks bsi only
//!   for [`EDIT_TOOLS`]): `{"deny": REASON}` makes the plugin throw, and
//!   OpenCode gives the model the error as the tool's result, the file
//!   untouched; `{"context": TEXT}` (a claim on write, a warning) is added
//!   to the tool's result after it ran (`tool.execute.after`), the only
//!   channel OpenCode gives a plugin to the model when a tool runs.
//! - `experimental.chat.system.transform` (before each model request; bsi
//!   is asked once per OpenCode session): `{"context": TEXT}` goes into the
//!   system prompt, `{"env": {...}}` into every shell command of the
//!   session (`shell.env`).
//! - `session.idle` (the agent ended its turn): `{"prompt": TEXT}` sends
//!   the agent back with TEXT as the next message, where OpenCode's process
//!   outlives the turn (the TUI, `opencode serve`); a plain `opencode run`
//!   exits at that idle first, and no plugin hook can hold it.
//!
//! The parsing and answers here are pure; the plugin's text is too.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::doctor::Item;
use super::install::{self, HookEntry, HookLayout};
use super::mcp_config::McpSettings;
use super::{AgentTool, Places, Tool};
use super::{
    Answer, Briefing, EditOp, EditRequest, EventError, HookKind, PreEdit, Replacement,
    SessionStart, Stop, Verdict, object, opt_bool, opt_str, req_obj, req_str,
};
use bsi_core::error::{Result, SettingsError};

/// The tools whose calls may change files: `edit`, `write`, `apply_patch`
/// (offered to some models instead of the first two) and `bash`, the shell.
pub const EDIT_TOOLS: [&str; 4] = ["edit", "write", "apply_patch", "bash"];

/// The plugin's file, relative to the work tree root: OpenCode loads every
/// `.js` and `.ts` file of `.opencode/plugins/` at startup.
pub const SETTINGS: &str = ".opencode/plugins/bsi.js";

/// The variable the plugin sets, in every shell command of an OpenCode
/// session, to that session's id: bsi finds the session by it.
pub const SESSION_VAR: &str = "BSI_OPENCODE_SESSION";

/// The plugin hooks that run bsi: OpenCode's hook name, and bsi's hook.
pub(super) const ENTRIES: &[HookEntry] = &[
    ("tool.execute.before", None, HookKind::Edit),
    (
        "experimental.chat.system.transform",
        None,
        HookKind::SessionStart,
    ),
    ("session.idle", None, HookKind::Stop),
];

/// The event's parts: the hook's name, the directory, OpenCode's `input`.
fn parts<'a>(
    o: &'a Map<String, Value>,
    want: &'static str,
    fallback: &Path,
) -> Result<(std::path::PathBuf, &'a Map<String, Value>), EventError> {
    match opt_str(o, "hook")? {
        Some(got) if got != want => return Err(EventError::WrongEvent { got, want }),
        None => return Err(EventError::Missing("hook")),
        _ => {}
    }
    let cwd = match opt_str(o, "directory")?.filter(|d| !d.is_empty()) {
        Some(d) => super::clean(&fallback.join(d)),
        None => fallback.to_path_buf(),
    };
    Ok((cwd, req_obj(o, "input")?))
}

/// Reads a `tool.execute.before` event.
pub fn parse_edit(input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
    parse_edit_as(Tool::OPENCODE, input, cwd)
}

/// Reads a `tool.execute.before` event of `tool`'s plugin: OpenCode's, or
/// a tool built on OpenCode's plugin API (Kilo Code).
pub(super) fn parse_edit_as(tool: Tool, input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
    let o = object(input)?;
    let (cwd, call) = parts(&o, "tool.execute.before", cwd)?;
    let session_id = req_str(call, "sessionID")?;
    let tool_name = req_str(call, "tool")?;
    if !EDIT_TOOLS.contains(&tool_name.as_str()) {
        return Ok(PreEdit::Other { tool_name });
    }
    let args = req_obj(req_obj(&o, "output")?, "args")?;
    let path = |args: &Map<String, Value>| req_str(args, "filePath");
    let edits = match tool_name.as_str() {
        "bash" => {
            let Some(command) = opt_str(args, "command")? else {
                return Ok(PreEdit::Other { tool_name });
            };
            let dir = match opt_str(args, "workdir")?.filter(|d| !d.is_empty()) {
                Some(d) => super::clean(&cwd.join(d)),
                None => cwd.clone(),
            };
            return Ok(PreEdit::Shell(super::ShellCommand {
                tool,
                session_id,
                cwd,
                dir,
                tool_name,
                command,
            }));
        }
        "edit" => vec![super::file_edit(
            &cwd,
            path(args)?,
            EditOp::Replace(vec![Replacement {
                old: req_str(args, "oldString")?,
                new: req_str(args, "newString")?,
                all: opt_bool(args, "replaceAll")?.unwrap_or(false),
            }]),
        )],
        "write" => vec![super::file_edit(
            &cwd,
            path(args)?,
            EditOp::Write {
                content: req_str(args, "content")?,
            },
        )],
        // `apply_patch`: the patch format of Codex.
        _ => super::codex::patch_edits(&req_str(args, "patchText")?, &cwd)?,
    };
    Ok(PreEdit::Edit(EditRequest {
        tool,
        session_id,
        cwd,
        tool_name,
        edits,
    }))
}

/// Reads the event the plugin sends before a session's first model request
/// (`experimental.chat.system.transform`): the session starts for bsi.
pub fn parse_session_start(input: &str, cwd: &Path) -> Result<SessionStart, EventError> {
    parse_session_start_as(Tool::OPENCODE, input, cwd)
}

/// [`parse_session_start`] for `tool`'s plugin.
pub(super) fn parse_session_start_as(
    tool: Tool,
    input: &str,
    cwd: &Path,
) -> Result<SessionStart, EventError> {
    let o = object(input)?;
    let (cwd, input) = parts(&o, "experimental.chat.system.transform", cwd)?;
    Ok(SessionStart {
        tool,
        session_id: req_str(input, "sessionID")?,
        cwd,
        source: None,
    })
}

/// Reads a `session.idle` event. OpenCode says nothing of a loop: bsi's
/// session map sends the agent back once per set of claims.
pub fn parse_stop(input: &str, cwd: &Path) -> Result<Stop, EventError> {
    parse_stop_as(Tool::OPENCODE, input, cwd)
}

/// [`parse_stop`] for `tool`'s plugin.
pub(super) fn parse_stop_as(tool: Tool, input: &str, cwd: &Path) -> Result<Stop, EventError> {
    let o = object(input)?;
    let (cwd, input) = parts(&o, "session.idle", cwd)?;
    Ok(Stop {
        tool,
        session_id: req_str(input, "sessionID")?,
        cwd,
        continued: false,
    })
}

/// The answer to `tool.execute.before`.
pub fn answer(verdict: &Verdict) -> Answer {
    match verdict {
        Verdict::Allow => Answer::json(&json!({})),
        Verdict::Claimed { message } => Answer::json(&json!({ "context": message })),
        Verdict::Deny { reason } => Answer::json(&json!({ "deny": reason })),
        Verdict::AllowWithWarning { warning } => {
            Answer::json(&json!({ "context": format!("bsi: {warning}") })).with_stderr(warning)
        }
    }
}

/// The answer to a session's start: the briefing for the system prompt,
/// and the variables for its shell commands.
pub fn answer_session_start(briefing: &Briefing) -> Answer {
    let mut out = json!({ "context": briefing.context });
    if let Some(s) = &briefing.session {
        out["env"] = json!({ "BSI_SESSION": s });
    }
    Answer::json(&out)
}

/// The answer to `session.idle`: a prompt sends the agent back.
pub fn answer_stop(reason: Option<&str>) -> Answer {
    match reason {
        Some(r) => Answer::json(&json!({ "prompt": r })),
        None => Answer::json(&json!({})),
    }
}

/// How the session-start context names the agent's session for its shell,
/// in `tool` (OpenCode, or a tool on its plugin API).
pub fn session_note(tool: Tool) -> String {
    format!(
        "BSI_SESSION is set to it in your shell by bsi's {} plugin",
        tool.title()
    )
}

/// The first line of every plugin bsi writes for `tool`: how [`is_ours`]
/// knows it.
fn mark(tool: Tool) -> String {
    format!(
        "// bsi's guard inside {}, written by `bsi agent install {}`.",
        tool.title(),
        tool.name()
    )
}

/// Whether `text` is a plugin bsi wrote (any version) for OpenCode.
pub fn is_ours(text: &str) -> bool {
    is_ours_as(Tool::OPENCODE, text)
}

/// Whether `text` is a plugin bsi wrote (any version) for `tool`.
pub(super) fn is_ours_as(tool: Tool, text: &str) -> bool {
    text.starts_with(&mark(tool))
}

/// The program a plugin of bsi's runs (`const PROGRAM = "…";`), read back.
pub fn program_of(text: &str) -> Option<String> {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("const PROGRAM = "))?;
    serde_json::from_str(line.trim_end().trim_end_matches(';')).ok()
}

/// The plugin's text, running `program`. Every string in it is a JSON
/// string literal, valid JavaScript whatever it holds. When bsi cannot be
/// run (not on `PATH`, a crash, an answer that is no JSON), each hook fails
/// open and says so: `missing` is that word, per hook.
pub fn plugin(program: &str, missing: &dyn Fn(HookKind) -> String) -> String {
    plugin_as(Tool::OPENCODE, program, missing)
}

/// [`plugin`] for `tool`: OpenCode, or a tool that loads OpenCode's
/// plugins (Kilo Code). The plugin names `tool` to bsi, and sets `tool`'s
/// [`AgentTool::shell_session_var`] in the session's shell commands.
pub(super) fn plugin_as(tool: Tool, program: &str, missing: &dyn Fn(HookKind) -> String) -> String {
    let s = |v: &str| Value::String(v.to_string()).to_string();
    let tools = EDIT_TOOLS.map(s).join(", ");
    let (mark, name, title) = (mark(tool), tool.name(), tool.title());
    let var = tool.shell_session_var().unwrap_or(SESSION_VAR);
    format!(
        r#"{mark}
// Each hook runs `bsi hook KIND --tool {name}` with what {title} gave it
// on stdin and follows bsi's answer; `bsi agent uninstall {name}` removes
// this file.
import {{ spawn }} from "node:child_process";

const PROGRAM = {program};
const EDIT_TOOLS = new Set([{tools}]);
const MISSING = {{
  edit: {edit},
  "session-start": {start},
  stop: {stop},
}};

// bsi's answer to one hook, as JSON; `{{ missing }}` when bsi did not answer.
function bsi(kind, event) {{
  return new Promise((resolve) => {{
    let out = "";
    let child;
    try {{
      child = spawn(PROGRAM, ["hook", kind, "--tool", {name_lit}], {{
        cwd: event.directory,
        stdio: ["pipe", "pipe", "inherit"],
      }});
    }} catch {{
      return resolve({{ missing: MISSING[kind] }});
    }}
    child.on("error", () => resolve({{ missing: MISSING[kind] }}));
    child.stdout.on("data", (d) => (out += d));
    child.on("close", (code) => {{
      if (code !== 0) return resolve({{ missing: MISSING[kind] }});
      try {{
        resolve(out.trim() ? JSON.parse(out) : {{}});
      }} catch {{
        resolve({{ missing: MISSING[kind] }});
      }}
    }});
    child.stdin.on("error", () => {{}});
    child.stdin.end(JSON.stringify(event));
  }});
}}

export const BsiGuard = async ({{ directory, client }}) => {{
  // Per OpenCode session: bsi's briefing and the shell's variables.
  const sessions = new Map();
  // Per tool call let through: what the model is told with its result.
  const notes = new Map();
  return {{
    "experimental.chat.system.transform": async (input, output) => {{
      if (!input.sessionID) return;
      let s = sessions.get(input.sessionID);
      if (!s) {{
        const a = await bsi("session-start", {{
          hook: "experimental.chat.system.transform",
          directory,
          input: {{ sessionID: input.sessionID }},
        }});
        if (a.missing) console.error(a.missing);
        s = {{ context: a.context ?? a.missing, env: a.env ?? {{}} }};
        sessions.set(input.sessionID, s);
      }}
      if (s.context) output.system.push(s.context);
    }},
    "shell.env": async (input, output) => {{
      const s = sessions.get(input.sessionID);
      if (s) Object.assign(output.env, s.env);
      if (input.sessionID) output.env.{var} = input.sessionID;
    }},
    "tool.execute.before": async (input, output) => {{
      if (!EDIT_TOOLS.has(input.tool)) return;
      const a = await bsi("edit", {{ hook: "tool.execute.before", directory, input, output }});
      if (a.deny) throw new Error(a.deny);
      if (a.missing) console.error(a.missing);
      const note = a.context ?? a.missing;
      if (note) notes.set(input.callID, note);
    }},
    "tool.execute.after": async (input, output) => {{
      const note = notes.get(input.callID);
      if (note === undefined) return;
      notes.delete(input.callID);
      output.output = output.output ? `${{output.output}}\n\n${{note}}` : note;
    }},
    event: async ({{ event }}) => {{
      if (event.type !== "session.idle") return;
      const a = await bsi("stop", {{ hook: "session.idle", directory, input: event.properties }});
      if (a.missing) console.error(a.missing);
      if (!a.prompt) return;
      await client.session.promptAsync({{
        path: {{ id: event.properties.sessionID }},
        body: {{ parts: [{{ type: "text", text: a.prompt }}] }},
      }});
    }},
  }};
}};
"#,
        program = s(program),
        name_lit = s(name),
        edit = s(&missing(HookKind::Edit)),
        start = s(&missing(HookKind::SessionStart)),
        stop = s(&missing(HookKind::Stop)),
    )
}

/// The plugin bsi writes, running `program`, its words for when bsi does
/// not answer taken from [`install::missing_text`].
pub fn plugin_for(program: &str) -> String {
    plugin(program, &|kind| install::missing_text(&Opencode, kind))
}

/// The plugin file is bsi's alone, written whole. A file of that name that
/// bsi did not write is left alone.
fn merge_plugin(existing: Option<&str>, program: &str) -> Result<Option<String>, SettingsError> {
    merge_plugin_as(Tool::OPENCODE, existing, program)
}

/// [`merge_plugin`] for `tool`'s plugin.
pub(super) fn merge_plugin_as(
    tool: Tool,
    existing: Option<&str>,
    program: &str,
) -> Result<Option<String>, SettingsError> {
    let want = plugin_as(tool, program, &|kind| install::missing_text(&*tool, kind));
    match existing {
        Some(t) if t == want => Ok(None),
        Some(t) if !t.trim().is_empty() && !is_ours_as(tool, t) => Err(SettingsError::NotOurs),
        _ => Ok(Some(want)),
    }
}

/// The commands of the hooks of `tool`'s plugin `text`, each running its
/// program.
pub(super) fn plugin_commands(tool: Tool, text: &str) -> Vec<String> {
    let Some(program) = program_of(text).filter(|_| is_ours_as(tool, text)) else {
        return Vec::new();
    };
    ENTRIES
        .iter()
        .filter(|(hook, _, _)| text.contains(&format!("\"{hook}\"")))
        .map(|(_, _, kind)| install::hook_command(&program, tool, *kind))
        .collect()
}

/// OpenCode (sst/anomalyco), through a plugin.
pub struct Opencode;

impl AgentTool for Opencode {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn title(&self) -> &'static str {
        "OpenCode"
    }

    /// One process runs many sessions: the plugin sets the session's id in
    /// each of its shell commands.
    fn shell_session_var(&self) -> Option<&'static str> {
        Some(SESSION_VAR)
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

    /// The plugin's own protocol; the plugin carries these words.
    fn missing_answer(&self, _: HookKind, text: &str) -> Value {
        json!({ "context": text })
    }

    fn session_note(&self, _: &str, _: bool, _: Option<&Path>) -> String {
        session_note(Tool::OPENCODE)
    }

    fn settings_file(&self) -> &'static str {
        SETTINGS
    }

    fn entries(&self) -> &'static [HookEntry] {
        ENTRIES
    }

    fn hook_layout(&self) -> HookLayout {
        HookLayout::Own
    }

    /// The plugin's hooks, each running its program.
    fn our_commands(&self, text: &str) -> Vec<String> {
        plugin_commands(Tool::OPENCODE, text)
    }

    fn merge(
        &self,
        existing: Option<&str>,
        program: &str,
    ) -> Result<Option<String>, SettingsError> {
        merge_plugin(existing, program)
    }

    /// Nothing is left of bsi's plugin.
    fn unmerge(&self, existing: &str) -> Result<Option<String>, SettingsError> {
        Ok(is_ours(existing).then(String::new))
    }

    fn install_notes(&self, _: &Path, _: &Path) -> Vec<String> {
        vec![
            "OpenCode loads project plugins, bsi's with them, without a trust step; `opencode --pure` (or OPENCODE_PURE=1) loads none, and then no edit is checked.".into(),
        ]
    }

    /// `mcp.bsi`, a `local` server whose `command` is one list.
    fn mcp_settings(&self) -> McpSettings {
        McpSettings::JsonLocal {
            file: "opencode.json",
            key: "mcp",
        }
    }

    fn trust(&self, _: &Path, _: &Path, _: &Places) -> Item {
        Item {
            what: "trust",
            ok: None,
            detail: "OpenCode loads the project's plugins without a trust step; `--pure` (OPENCODE_PURE) loads none, bsi's with them".into(),
            next: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::fixture;
    use super::super::{Tool, new_text, parse_edit as parse, shell_writes::NoDisk};
    use super::*;
    use std::path::PathBuf;

    fn request(name: &str) -> EditRequest {
        super::super::tests_support::edit_request(Tool::OPENCODE, name)
    }

    #[test]
    fn edit_event() {
        let r = request("opencode-tool-execute-before-edit.json");
        assert!(r.session_id.starts_with("ses_"), "{r:?}");
        assert_eq!(r.tool_name, "edit");
        assert!(r.edits[0].path.ends_with("projets/plan.md"), "{r:?}");
        assert_eq!(
            new_text(&r.edits[0], Some("- goal text\n")),
            Ok(Some("- stolen goal\n".into()))
        );
    }

    #[test]
    fn write_event() {
        let r = request("opencode-tool-execute-before-write.json");
        assert!(matches!(r.edits[0].op, EditOp::Write { .. }), "{r:?}");
    }

    #[test]
    fn apply_patch_is_read_as_codex_s_patch() {
        let text = json!({
            "hook": "tool.execute.before",
            "directory": "/brain",
            "input": {"tool": "apply_patch", "sessionID": "ses_1", "callID": "c"},
            "output": {"args": {"patchText": "*** Begin Patch\n*** Update File: a.md\n@@\n-x\n+y\n*** End Patch"}},
        })
        .to_string();
        let Ok(PreEdit::Edit(r)) = parse(Tool::OPENCODE, &text, Path::new("/")) else {
            panic!("{text}");
        };
        assert_eq!(r.edits[0].path, PathBuf::from("/brain/a.md"));
        assert_eq!(new_text(&r.edits[0], Some("x\n")), Ok(Some("y\n".into())));
    }

    #[test]
    fn bash_is_read_for_the_files_it_writes() {
        let event = fixture("opencode-tool-execute-before-bash.json");
        let Ok(PreEdit::Shell(cmd)) = parse(Tool::OPENCODE, &event, Path::new("/")) else {
            panic!("{event}");
        };
        assert_eq!(cmd.tool_name, "bash");
        let v: Value = serde_json::from_str(&event).expect("json");
        let mut writes = v.clone();
        writes["output"]["args"]["command"] = json!("echo x >> agents/alice.md");
        writes["output"]["args"]["workdir"] = json!("sub");
        let Ok(PreEdit::Shell(cmd)) = parse(Tool::OPENCODE, &writes.to_string(), Path::new("/"))
        else {
            panic!("{writes}");
        };
        let dir = PathBuf::from(v["directory"].as_str().expect("directory"));
        assert_eq!(cmd.dir, dir.join("sub"));
        let r = cmd.edits(&NoDisk).expect("writes");
        assert_eq!(r.edits[0].path, dir.join("sub/agents/alice.md"));
    }

    #[test]
    fn other_tools_pass_untouched() {
        let text = json!({
            "hook": "tool.execute.before",
            "directory": "/brain",
            "input": {"tool": "read", "sessionID": "ses_1", "callID": "c"},
            "output": {"args": {"filePath": "/brain/a.md"}},
        })
        .to_string();
        assert_eq!(
            parse(Tool::OPENCODE, &text, Path::new("/")),
            Ok(PreEdit::Other {
                tool_name: "read".into()
            })
        );
    }

    #[test]
    fn session_start_and_stop_events() {
        let ev = super::super::parse_session_start(
            Tool::OPENCODE,
            &fixture("opencode-sessionstart.json"),
            Path::new("/elsewhere"),
        )
        .expect("session start");
        assert!(ev.session_id.starts_with("ses_"), "{ev:?}");
        assert_ne!(ev.cwd, PathBuf::from("/elsewhere"));
        let stop = super::super::parse_stop(
            Tool::OPENCODE,
            &fixture("opencode-stop.json"),
            Path::new("/"),
        )
        .expect("stop");
        assert_eq!(stop.session_id, ev.session_id);
        assert!(!stop.continued);
        // An event of another hook is an error, not another kind of answer.
        assert!(matches!(
            parse_stop(&fixture("opencode-sessionstart.json"), Path::new("/")),
            Err(EventError::WrongEvent { .. })
        ));
    }

    #[test]
    fn answers_in_the_plugin_s_protocol() {
        let deny = answer(&Verdict::Deny {
            reason: "bsi: refused: held".into(),
        });
        assert_eq!(deny.stdout, "{\"deny\":\"bsi: refused: held\"}\n");
        assert_eq!(answer(&Verdict::Allow).stdout, "{}\n");
        let claimed = answer(&Verdict::Claimed {
            message: "bsi claimed a.md".into(),
        });
        assert_eq!(claimed.stdout, "{\"context\":\"bsi claimed a.md\"}\n");
        let start = answer_session_start(&Briefing {
            context: "bsi guards".into(),
            session: Some("sess-1".into()),
        });
        let v: Value = serde_json::from_str(&start.stdout).expect("json");
        assert_eq!(v["env"]["BSI_SESSION"], "sess-1");
        assert_eq!(
            answer_stop(Some("close")).stdout,
            "{\"prompt\":\"close\"}\n"
        );
        assert_eq!(answer_stop(None).stdout, "{}\n");
    }

    #[test]
    fn the_plugin_is_known_by_its_first_line_and_names_its_program() {
        let text = plugin("/opt/it's \"bsi\"", &|k| format!("no bsi for {k:?}"));
        assert!(is_ours(&text));
        assert!(!is_ours("export const Mine = async () => ({})\n"));
        assert_eq!(program_of(&text).as_deref(), Some("/opt/it's \"bsi\""));
        assert!(text.contains("\"no bsi for Edit\""), "{text}");
        for (hook, _, _) in ENTRIES {
            assert!(text.contains(&format!("\"{hook}\"")), "{hook}");
        }
    }
}
