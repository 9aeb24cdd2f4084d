//! `bsi agent install|uninstall TOOL`: bsi's hook entries merged into a
//! tool's project settings file at the work tree root, and taken out again.
//!
//! [`merge`] and [`unmerge`] are pure: they edit the JSON keeping every other
//! key in its place and the file's indentation. Install keeps the bytes the
//! file had before under the common git directory; uninstall puts them back
//! when the file still holds exactly what install wrote, and otherwise takes
//! out only bsi's entries. Idempotent both ways.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::doctor::Places;
use super::{HookKind, Tool, claude, cline, codex, copilot, cursor, gemini, opencode};
use bsi_core::error::{Error, Result};
use bsi_core::words::shell_word;

/// The settings file of `tool`, relative to the work tree root.
pub fn settings_file(tool: Tool) -> &'static str {
    match tool {
        Tool::Claude => claude::SETTINGS,
        Tool::Codex => codex::SETTINGS,
        Tool::Gemini => gemini::SETTINGS,
        Tool::Cursor => cursor::SETTINGS,
        Tool::Copilot => copilot::SETTINGS,
        Tool::Cline => CLINE_HOOK,
        Tool::Opencode => opencode::SETTINGS,
    }
}

/// Cline CLI's hook file under its usual name (bsi takes another when a
/// person's own hook has it: [`settings_path`]).
const CLINE_HOOK: &str = ".clinerules/hooks/PreToolUse";

/// The file that holds bsi's hooks for `tool` in the work tree at `root`:
/// the settings file, or for Cline CLI the hook file of bsi's among those
/// it may take ([`cline::FILE_NAMES`]), else the first it would take.
pub fn settings_path(tool: Tool, root: &Path) -> PathBuf {
    if tool != Tool::Cline {
        return root.join(settings_file(tool));
    }
    let dir = root.join(cline::HOOKS_DIR);
    let files = cline::FILE_NAMES.map(|n| dir.join(n));
    let text = |p: &Path| fs::read_to_string(p).ok();
    files
        .iter()
        .find(|p| text(p).is_some_and(|t| cline::is_ours(&t)))
        .or_else(|| files.iter().find(|p| p.symlink_metadata().is_err()))
        .cloned()
        .unwrap_or_else(|| files[0].clone())
}

/// The user's settings file of `tool`, which a user-level install
/// (`bsi agent install --user`) edits: loaded by the tool wherever it runs,
/// whatever the project's trust. `None` for a tool bsi has no user-level
/// install for, or when the home is unknown.
pub fn user_settings_file(tool: Tool, places: &Places) -> Option<PathBuf> {
    let home = places.home.as_ref();
    match tool {
        Tool::Claude => Some(
            places
                .claude_config
                .clone()
                .or_else(|| home.map(|h| h.join(".claude")))?
                .join("settings.json"),
        ),
        Tool::Codex => Some(
            places
                .codex_home
                .clone()
                .or_else(|| home.map(|h| h.join(".codex")))?
                .join("hooks.json"),
        ),
        Tool::Gemini => Some(home?.join(".gemini").join("settings.json")),
        Tool::Cursor | Tool::Copilot | Tool::Cline | Tool::Opencode => None,
    }
}

/// Where a user-level install keeps the bytes it replaced: in no
/// repository, under the user's state directory (`$XDG_STATE_HOME`, else
/// `~/.local/state`), in `bsi/installed`.
pub fn user_records(places: &Places) -> Option<PathBuf> {
    let state = places
        .state_home
        .clone()
        .or_else(|| places.home.as_ref().map(|h| h.join(".local").join("state")))?;
    Some(state.join("bsi").join("installed"))
}

/// Whether the user-level settings of `tool` hold all of bsi's hooks.
pub fn user_installed(tool: Tool, places: &Places) -> bool {
    user_settings_file(tool, places)
        .and_then(|p| fs::read_to_string(p).ok())
        .is_some_and(|t| our_commands(tool, &t).len() == entries(tool).len())
}

/// The hook entries bsi installs for `tool`: event name, matcher, hook.
pub fn entries(tool: Tool) -> &'static [(&'static str, Option<&'static str>, HookKind)] {
    match tool {
        Tool::Claude => claude::ENTRIES,
        Tool::Codex => codex::ENTRIES,
        Tool::Gemini => gemini::ENTRIES,
        Tool::Cursor => cursor::ENTRIES,
        Tool::Copilot => copilot::ENTRIES,
        Tool::Cline => &[(cline::HOOK, None, HookKind::Edit)],
        Tool::Opencode => opencode::ENTRIES,
    }
}

/// The command a hook runs: `PROGRAM hook edit --tool claude || echo
/// ANSWER`, the program quoted for a POSIX shell when it needs it.
///
/// The program is `bsi`, found on the `PATH` the tool runs hooks with: the
/// settings files are shared (teams commit them), and an absolute path of
/// one machine fails on every other. When bsi does not answer (not on
/// `PATH`, a crash, a usage error), `ANSWER` says so in the tool's own
/// protocol — a message to the person, never a block: exit 2 is the tools'
/// "block", and a failure of bsi must fail open like every other error.
/// bsi's own refusals are JSON on exit 0, which `||` leaves alone.
pub fn hook_command(program: &str, tool: Tool, kind: HookKind) -> String {
    format!(
        "{} hook {} --tool {} || echo {}",
        shell_word(program),
        kind.subcommand(),
        tool.name(),
        shell_word(&missing_answer(tool, kind))
    )
}

/// What a hook says when bsi did not answer, in words.
pub fn missing_text(tool: Tool, kind: HookKind) -> String {
    let then = match kind {
        HookKind::Edit => "this edit goes through unchecked",
        HookKind::SessionStart => "the session starts without its briefing",
        HookKind::Stop => "the agent stops without its reminder",
    };
    format!(
        "bsi: the hook could not run bsi (is it on the PATH {} runs hooks with?); {then}. Next: put bsi on that PATH, then check with `bsi agent doctor {}`.",
        tool.title(),
        tool.name()
    )
}

/// What a hook says when bsi did not answer: JSON in `tool`'s protocol.
pub fn missing_answer(tool: Tool, kind: HookKind) -> String {
    let text = missing_text(tool, kind);
    // Claude Code and Codex pass a pre-edit or session-start hook's
    // `additionalContext` to the model (Codex shows the person no
    // `systemMessage` in `codex exec`): the agent learns it too, and can
    // tell the person.
    let event = match kind {
        HookKind::Edit => Some("PreToolUse"),
        HookKind::SessionStart => Some("SessionStart"),
        HookKind::Stop => None,
    };
    match (tool, event) {
        (Tool::Cursor, _) => json!({ "user_message": text }),
        // Copilot shows the person no hook output; the model gets
        // `additionalContext` (also in Copilot's cloud agent on GitHub, which
        // reads the same hooks where bsi is not installed).
        (Tool::Copilot, Some(_)) => json!({ "additionalContext": text }),
        // `agentStop` reads only `decision` and `reason`: "allow" lets the
        // agent stop; the reason stays in Copilot's hook log.
        (Tool::Copilot, None) => json!({ "decision": "allow", "reason": text }),
        // Cline gives the model a hook's `context`.
        (Tool::Cline, _) => json!({ "context": text }),
        (Tool::Claude | Tool::Codex, Some(event)) => json!({
            "systemMessage": text,
            "hookSpecificOutput": { "hookEventName": event, "additionalContext": text },
        }),
        (Tool::Claude | Tool::Codex | Tool::Gemini, _) => json!({ "systemMessage": text }),
        // The plugin's own protocol; the plugin carries these words.
        (Tool::Opencode, _) => json!({ "context": text }),
    }
    .to_string()
}

/// The commands of bsi's hooks for `tool` in a settings file's text, one
/// per hook kind installed (nothing when the text is not JSON).
pub fn our_commands(tool: Tool, text: &str) -> Vec<String> {
    if tool == Tool::Cline {
        return cline::commands_in(text)
            .into_iter()
            .filter(|c| is_ours(c, tool, HookKind::Edit))
            .collect();
    }
    if tool == Tool::Opencode {
        // The plugin's hooks, each running its program.
        let Some(program) = opencode::program_of(text).filter(|_| opencode::is_ours(text)) else {
            return Vec::new();
        };
        return entries(tool)
            .iter()
            .filter(|(hook, _, _)| text.contains(&format!("\"{hook}\"")))
            .map(|(_, _, kind)| hook_command(&program, tool, *kind))
            .collect();
    }
    let Ok(Value::Object(mut root)) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let Some(Value::Object(hooks)) = root.get_mut("hooks") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (event, _, kind) in entries(tool) {
        if let Some(Value::Array(list)) = hooks.get_mut(*event)
            && let Some(c) = find_ours(tool, list, *kind).and_then(|c| c.as_str())
        {
            out.push(c.to_string());
        }
    }
    out
}

/// The program the hooks run.
pub const PROGRAM: &str = "bsi";

/// Where `name` is found on `path` (a `PATH` value), if anywhere.
pub fn on_path(name: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?).find_map(|dir| {
        let p = dir.join(name);
        let meta = fs::metadata(&p).ok()?;
        #[cfg(unix)]
        let runnable = {
            use std::os::unix::fs::PermissionsExt;
            meta.permissions().mode() & 0o111 != 0
        };
        #[cfg(not(unix))]
        let runnable = true;
        (meta.is_file() && runnable).then_some(p)
    })
}

/// Whether `command` runs bsi's hook `kind` for `tool`, whatever the
/// program's path and whatever follows `||` (this version's answer, or the
/// `|| true` of earlier ones).
fn is_ours(command: &str, tool: Tool, kind: HookKind) -> bool {
    let command = command.split(" || ").next().unwrap_or(command).trim_end();
    command.ends_with(&format!(
        " hook {} --tool {}",
        kind.subcommand(),
        tool.name()
    ))
}

/// Whether `command` runs one of bsi's hooks for `tool`, of any kind.
pub fn is_bsi_hook(command: &str, tool: Tool) -> bool {
    [HookKind::Edit, HookKind::SessionStart, HookKind::Stop]
        .into_iter()
        .any(|k| is_ours(command, tool, k))
}

pub use bsi_core::error::SettingsError;

/// `existing` (the file's text, `None` if absent) with bsi's hooks for
/// `tool` added; `None` when they are all there already. A hook of bsi's
/// that runs another program path is pointed at `program`.
pub fn merge(
    tool: Tool,
    existing: Option<&str>,
    program: &str,
) -> Result<Option<String>, SettingsError> {
    let text = existing.unwrap_or("");
    if tool == Tool::Opencode {
        return merge_plugin(existing, program);
    }
    let mut root = parse(text)?;
    if flat(tool) && !root.contains_key("version") {
        let mut with_version = Map::new();
        with_version.insert("version".into(), json!(1));
        with_version.extend(root);
        root = with_version;
    }
    let Value::Object(hooks) = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
    else {
        return Err(SettingsError::Shape("hooks".into()));
    };
    let mut changed = false;
    for (event, matcher, kind) in entries(tool) {
        let Value::Array(list) = hooks
            .entry(event.to_string())
            .or_insert_with(|| Value::Array(Vec::new()))
        else {
            return Err(SettingsError::Shape(format!("hooks.{event}")));
        };
        let command = hook_command(program, tool, *kind);
        if tool == Tool::Copilot {
            changed |= mend_flat_matcher(tool, list, *matcher, *kind);
        }
        match find_ours(tool, list, *kind) {
            Some(c) if c.as_str() == Some(&command) => {}
            Some(c) => {
                *c = Value::String(command.clone());
                changed = true;
            }
            None => {
                list.push(entry(tool, *matcher, &command, *kind));
                changed = true;
            }
        }
        changed |= mend_matcher(tool, list, *matcher, &command, *kind);
    }
    if !changed {
        return Ok(None);
    }
    Ok(Some(render(&root, text)))
}

/// Tools whose hook entries are flat (no groups under a matcher), in a
/// file with a `version`: Cursor, GitHub Copilot CLI.
fn flat(tool: Tool) -> bool {
    matches!(tool, Tool::Cursor | Tool::Copilot)
}

/// The key of a hook entry's command: Copilot's is `bash` (with
/// `powershell` beside it for Windows).
fn command_key(tool: Tool) -> &'static str {
    if tool == Tool::Copilot {
        "bash"
    } else {
        "command"
    }
}

/// Points bsi's flat entry `kind` at `matcher` when an earlier install
/// wrote another. Returns whether the list changed.
fn mend_flat_matcher(
    tool: Tool,
    list: &mut [Value],
    matcher: Option<&str>,
    kind: HookKind,
) -> bool {
    let Some(Value::Object(e)) = list
        .iter_mut()
        .find(|e| command_of(e).is_some_and(|c| is_ours(c, tool, kind)))
    else {
        return false;
    };
    if e.get("matcher").and_then(Value::as_str) == matcher {
        return false;
    }
    match matcher {
        Some(m) => e.insert("matcher".into(), json!(m)),
        None => e.remove("matcher"),
    };
    true
}

/// The plugin bsi writes for OpenCode, running `program`.
pub fn opencode_plugin(program: &str) -> String {
    opencode::plugin(program, &|kind| missing_text(Tool::Opencode, kind))
}

/// OpenCode: the plugin file is bsi's alone, written whole. A file of that
/// name that bsi did not write is left alone.
fn merge_plugin(existing: Option<&str>, program: &str) -> Result<Option<String>, SettingsError> {
    let want = opencode_plugin(program);
    match existing {
        Some(t) if t == want => Ok(None),
        Some(t) if !t.trim().is_empty() && !opencode::is_ours(t) => Err(SettingsError::NotOurs),
        _ => Ok(Some(want)),
    }
}

/// The matcher of the group that holds bsi's hook `kind` (Claude Code,
/// Codex and Gemini group hooks under a matcher; Cursor's entries are
/// flat): `Some(None)` for a group without one, `None` when bsi's hook is
/// not there.
fn our_matcher(tool: Tool, list: &[Value], kind: HookKind) -> Option<Option<String>> {
    if flat(tool) {
        return None;
    }
    list.iter().find_map(|g| {
        let Some(Value::Array(inner)) = g.get("hooks") else {
            return None;
        };
        inner
            .iter()
            .any(|h| command_of(h).is_some_and(|c| is_ours(c, tool, kind)))
            .then(|| g.get("matcher").and_then(Value::as_str).map(str::to_string))
    })
}

/// Points the group of bsi's hook `kind` at `matcher` when an earlier
/// install wrote another (before shell commands were judged, the edit hook
/// did not match the shell tool). A group holding other hooks too keeps its
/// matcher: bsi's hook moves to a group of its own. Returns whether the
/// list changed.
fn mend_matcher(
    tool: Tool,
    list: &mut Vec<Value>,
    matcher: Option<&str>,
    command: &str,
    kind: HookKind,
) -> bool {
    let Some(found) = our_matcher(tool, list, kind) else {
        return false;
    };
    if found.as_deref() == matcher {
        return false;
    }
    let Some(at) = list.iter().position(|g| {
        matches!(g.get("hooks"), Some(Value::Array(inner))
            if inner.iter().any(|h| command_of(h).is_some_and(|c| is_ours(c, tool, kind))))
    }) else {
        return false;
    };
    let alone = matches!(list[at].get("hooks"), Some(Value::Array(i)) if i.len() == 1);
    if alone && let Value::Object(group) = &mut list[at] {
        match matcher {
            Some(m) => {
                group.insert("matcher".into(), json!(m));
            }
            None => {
                group.remove("matcher");
            }
        }
        return true;
    }
    if let Some(Value::Array(inner)) = list[at].get_mut("hooks") {
        inner.retain(|h| !command_of(h).is_some_and(|c| is_ours(c, tool, kind)));
    }
    list.push(entry(tool, matcher, command, kind));
    true
}

/// The hooks of bsi's in a settings file's text whose matcher is not the
/// one this version installs: (event, matcher found, matcher wanted).
pub fn stale_matchers(tool: Tool, text: &str) -> Vec<(&'static str, String, &'static str)> {
    let Ok(Value::Object(root)) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let Some(Value::Object(hooks)) = root.get("hooks") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (event, matcher, kind) in entries(tool) {
        let Some(Value::Array(list)) = hooks.get(*event) else {
            continue;
        };
        if let Some(found) = our_matcher(tool, list, *kind)
            && found.as_deref() != *matcher
        {
            out.push((*event, found.unwrap_or_default(), matcher.unwrap_or("")));
        }
    }
    out
}

/// `existing` without bsi's hooks for `tool` (and without the lists and
/// groups that held only them); `None` when it has none.
pub fn unmerge(tool: Tool, existing: &str) -> Result<Option<String>, SettingsError> {
    if tool == Tool::Opencode {
        // Nothing is left of bsi's plugin.
        return Ok(opencode::is_ours(existing).then(String::new));
    }
    let mut root = parse(existing)?;
    let Some(Value::Object(hooks)) = root.get_mut("hooks") else {
        return Ok(None);
    };
    let mut changed = false;
    for (event, _, kind) in entries(tool) {
        let Some(Value::Array(list)) = hooks.get_mut(*event) else {
            continue;
        };
        let before = list.len();
        if flat(tool) {
            list.retain(|e| !command_of(e).is_some_and(|c| is_ours(c, tool, *kind)));
        } else {
            for group in list.iter_mut() {
                if let Some(Value::Array(inner)) = group.get_mut("hooks") {
                    let n = inner.len();
                    inner.retain(|h| !command_of(h).is_some_and(|c| is_ours(c, tool, *kind)));
                    changed |= inner.len() != n;
                }
            }
            list.retain(|g| !matches!(g.get("hooks"), Some(Value::Array(i)) if i.is_empty()));
        }
        changed |= list.len() != before;
        if list.is_empty() {
            hooks.remove(*event);
        }
    }
    if !changed {
        return Ok(None);
    }
    if hooks.is_empty() {
        root.remove("hooks");
    }
    Ok(Some(render(&root, existing)))
}

fn parse(text: &str) -> Result<Map<String, Value>, SettingsError> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(SettingsError::Shape("the top level".into())),
        Err(e) => Err(SettingsError::NotJson(e.to_string())),
    }
}

fn command_of(v: &Value) -> Option<&str> {
    v.get("command")
        .or_else(|| v.get("bash"))
        .and_then(Value::as_str)
}

/// The `command` value of bsi's hook `kind` in an event's list.
fn find_ours(tool: Tool, list: &mut [Value], kind: HookKind) -> Option<&mut Value> {
    for e in list.iter_mut() {
        if flat(tool) {
            if command_of(e).is_some_and(|c| is_ours(c, tool, kind)) {
                return e.get_mut(command_key(tool));
            }
        } else {
            let Some(Value::Array(inner)) = e.get_mut("hooks") else {
                continue;
            };
            if let Some(h) = inner
                .iter_mut()
                .find(|h| command_of(h).is_some_and(|c| is_ours(c, tool, kind)))
            {
                return h.get_mut("command");
            }
        }
    }
    None
}

fn entry(tool: Tool, matcher: Option<&str>, command: &str, kind: HookKind) -> Value {
    let mut e = Map::new();
    if tool == Tool::Copilot {
        e.insert("type".into(), json!("command"));
        e.insert("bash".into(), json!(command));
        if let Some(m) = matcher {
            e.insert("matcher".into(), json!(m));
        }
    } else if tool == Tool::Cursor {
        e.insert("command".into(), json!(command));
        if let Some(m) = matcher {
            e.insert("matcher".into(), json!(m));
        }
    } else {
        if let Some(m) = matcher {
            e.insert("matcher".into(), json!(m));
        }
        let mut h = Map::new();
        if tool == Tool::Gemini {
            h.insert("name".into(), json!(format!("bsi-{}", kind.subcommand())));
        }
        h.insert("type".into(), json!("command"));
        h.insert("command".into(), json!(command));
        e.insert("hooks".into(), Value::Array(vec![Value::Object(h)]));
    }
    Value::Object(e)
}

/// Pretty JSON with the indentation of `like` (two spaces when it has
/// none) and a final newline unless `like` had text without one.
pub(super) fn render(root: &Map<String, Value>, like: &str) -> String {
    let indent = like
        .lines()
        .skip(1)
        .map(|l| &l[..l.len() - l.trim_start().len()])
        .find(|w| !w.is_empty())
        .unwrap_or("  ");
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    // Serializing a map of JSON values into memory cannot fail.
    let _ = root.serialize(&mut ser);
    let mut out = String::from_utf8_lossy(&buf).into_owned();
    if like.trim().is_empty() || like.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// What `install` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Installed {
    /// The settings file did not exist; bsi created it.
    Created,
    /// bsi's hooks were added to the existing file.
    Merged,
    /// bsi's hooks were there; nothing changed.
    Already,
}

/// What `uninstall` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uninstalled {
    /// The file is back to the bytes it had before install (or gone, when
    /// install created it).
    Restored,
    /// The file changed since install: only bsi's entries were taken out.
    Removed,
    /// bsi's hooks were not there; nothing changed.
    NotInstalled,
}

/// Where install keeps what it needs to undo itself.
struct Record {
    /// The file's bytes before install (absent: there was no file).
    original: PathBuf,
    /// Present when there was no file: says so (and whether its directory
    /// existed).
    absent: PathBuf,
    /// The bytes install last wrote.
    wrote: PathBuf,
}

fn record(dir: &Path, tool: Tool, settings: &Path) -> Record {
    use sha1::{Digest, Sha1};
    let hash = Sha1::digest(settings.to_string_lossy().as_bytes());
    let key: String = hash.iter().take(6).map(|b| format!("{b:02x}")).collect();
    let base = format!("{}-{key}", tool.name());
    Record {
        original: dir.join(format!("{base}.orig")),
        absent: dir.join(format!("{base}.absent")),
        wrote: dir.join(format!("{base}.wrote")),
    }
}

fn read_opt(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("cannot read {}", path.display()), e)),
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename.
pub(super) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.bsi-tmp"));
    fs::write(&tmp, bytes)
        .and_then(|()| fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = fs::remove_file(&tmp);
            Error::io(format!("cannot write {}", path.display()), e)
        })
}

fn remove_opt(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(format!("cannot remove {}", path.display()), e)),
    }
}

fn unusable(path: &Path, source: SettingsError) -> Error {
    Error::SettingsUnusable {
        path: path.to_path_buf(),
        source,
    }
}

/// Installs bsi's hooks for `tool` in the work tree at `root`, the hooks
/// running `program`. `common` is the common git directory.
pub fn install(
    tool: Tool,
    root: &Path,
    common: &Path,
    program: &str,
) -> Result<(PathBuf, Installed)> {
    if tool == Tool::Cline {
        return install_cline(root, program);
    }
    let path = root.join(settings_file(tool));
    let records = super::sessions::dir_in(common).join("installed");
    install_file(tool, &path, &records, program).map(|did| (path, did))
}

/// Installs bsi's hooks for `tool` in the settings file `path`, keeping
/// what undoes it in `records`.
pub fn install_file(tool: Tool, path: &Path, records: &Path, program: &str) -> Result<Installed> {
    let path = path.to_path_buf();
    let before = read_opt(&path)?;
    let text = before
        .as_deref()
        .map(|b| String::from_utf8_lossy(b).into_owned());
    let Some(new) = merge(tool, text.as_deref(), program).map_err(|e| unusable(&path, e))? else {
        return Ok(Installed::Already);
    };
    let rec = record(records, tool, &path);
    let wrote = read_opt(&rec.wrote)?;
    let had_ours = text
        .as_deref()
        .is_some_and(|t| unmerge(tool, t).ok().flatten().is_some());
    let keep_record = if wrote.is_some() && wrote == before {
        // The file is as bsi last wrote it (a moved binary): what it held
        // before the first install is still the original.
        true
    } else if !had_ours {
        // A file without bsi's hooks: these bytes are the original.
        if let Some(b) = &before {
            write_atomic(&rec.original, b)?;
            remove_opt(&rec.absent)?;
        } else {
            write_atomic(&rec.absent, absent_marker(&path).as_bytes())?;
            remove_opt(&rec.original)?;
        }
        true
    } else {
        // bsi's hooks in a file edited since: the original is unknown, and
        // uninstall will take out bsi's entries only.
        remove_opt(&rec.original)?;
        remove_opt(&rec.absent)?;
        remove_opt(&rec.wrote)?;
        false
    };
    write_atomic(&path, new.as_bytes())?;
    if keep_record {
        write_atomic(&rec.wrote, new.as_bytes())?;
    }
    Ok(if before.is_some() {
        Installed::Merged
    } else {
        Installed::Created
    })
}

/// What install records for a settings file that did not exist: `dir` when
/// its directory existed, an empty text when install created that one
/// directory, else how many directories it created (`.github/hooks` in a
/// project without `.github`: 2).
fn absent_marker(path: &Path) -> String {
    let mut missing = 0;
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d.is_dir() {
            break;
        }
        missing += 1;
        dir = d.parent();
    }
    match missing {
        0 => "dir".into(),
        1 => String::new(),
        n => n.to_string(),
    }
}

/// How many directories install created, from [`absent_marker`]'s record.
fn created_levels(marker: &[u8]) -> usize {
    match marker {
        b"dir" => 0,
        b"" => 1,
        m => std::str::from_utf8(m)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0),
    }
}

/// Removes what [`install`] added for `tool` in the work tree at `root`.
pub fn uninstall(tool: Tool, root: &Path, common: &Path) -> Result<(PathBuf, Uninstalled)> {
    if tool == Tool::Cline {
        return uninstall_cline(root);
    }
    let path = root.join(settings_file(tool));
    let records = super::sessions::dir_in(common).join("installed");
    uninstall_file(tool, &path, &records).map(|did| (path, did))
}

/// Removes what [`install_file`] added for `tool` to the settings file
/// `path`, with what it kept in `records`.
pub fn uninstall_file(tool: Tool, path: &Path, records: &Path) -> Result<Uninstalled> {
    let path = path.to_path_buf();
    let rec = record(records, tool, &path);
    let forget = |rec: &Record| -> Result<()> {
        remove_opt(&rec.original)?;
        remove_opt(&rec.absent)?;
        remove_opt(&rec.wrote)
    };
    let Some(now) = read_opt(&path)? else {
        forget(&rec)?;
        return Ok(Uninstalled::NotInstalled);
    };
    let absent = read_opt(&rec.absent)?;
    if read_opt(&rec.wrote)?.as_deref() == Some(now.as_slice()) {
        match (read_opt(&rec.original)?, &absent) {
            (Some(orig), _) => write_atomic(&path, &orig)?,
            (None, Some(marker)) => {
                remove_opt(&path)?;
                // The directories created for this file, only when empty.
                let mut dir = path.parent();
                for _ in 0..created_levels(marker) {
                    let Some(d) = dir else { break };
                    if fs::remove_dir(d).is_err() {
                        break;
                    }
                    dir = d.parent();
                }
            }
            (None, None) => {
                return Err(Error::NotFound(format!(
                    "the record of what {} held before `bsi agent install` is incomplete",
                    path.display()
                )));
            }
        }
        forget(&rec)?;
        return Ok(Uninstalled::Restored);
    }
    let text = String::from_utf8_lossy(&now).into_owned();
    let Some(new) = unmerge(tool, &text).map_err(|e| unusable(&path, e))? else {
        forget(&rec)?;
        return Ok(Uninstalled::NotInstalled);
    };
    let empty = parse(&new)
        .is_ok_and(|m| m.is_empty() || (flat(tool) && m.len() == 1 && m.contains_key("version")));
    if tool == Tool::Opencode || (empty && absent.is_some()) {
        remove_opt(&path)?;
    } else {
        write_atomic(&path, new.as_bytes())?;
    }
    forget(&rec)?;
    Ok(Uninstalled::Removed)
}

/// Cline CLI: bsi's hook is a file of its own in `.clinerules/hooks`,
/// written under the first of its names that no other hook has; a
/// person's own hooks are never touched.
fn install_cline(root: &Path, program: &str) -> Result<(PathBuf, Installed)> {
    let path = settings_path(Tool::Cline, root);
    let want = cline::hook_file(&hook_command(program, Tool::Cline, HookKind::Edit));
    let before = read_opt(&path)?;
    if let Some(b) = &before {
        if *b == want.as_bytes() {
            return Ok((path, Installed::Already));
        }
        if !cline::is_ours(&String::from_utf8_lossy(b)) {
            return Err(Error::Usage(format!(
                "{} already holds hooks of its own under every name bsi may give its hook ({}); nothing was written. Next: rename one of them (Cline runs any `PreToolUse.EXT` it knows), then `bsi agent install cline` again",
                path.parent().unwrap_or(root).display(),
                cline::FILE_NAMES.join(", ")
            )));
        }
    }
    write_atomic(&path, want.as_bytes())?;
    make_executable(&path)?;
    Ok((
        path,
        if before.is_some() {
            Installed::Merged
        } else {
            Installed::Created
        },
    ))
}

/// Takes out every hook file of bsi's in `.clinerules/hooks` (and the
/// directories, when bsi's file was all they held).
fn uninstall_cline(root: &Path) -> Result<(PathBuf, Uninstalled)> {
    let dir = root.join(cline::HOOKS_DIR);
    let mut removed = None;
    for name in cline::FILE_NAMES {
        let path = dir.join(name);
        if fs::read_to_string(&path).is_ok_and(|t| cline::is_ours(&t)) {
            remove_opt(&path)?;
            removed.get_or_insert(path);
        }
    }
    let Some(path) = removed else {
        return Ok((settings_path(Tool::Cline, root), Uninstalled::NotInstalled));
    };
    // Only when empty: `.clinerules/hooks`, then `.clinerules`.
    if fs::remove_dir(&dir).is_ok()
        && let Some(parent) = dir.parent()
    {
        let _ = fs::remove_dir(parent);
    }
    Ok((path, Uninstalled::Restored))
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .map_err(|e| Error::io(format!("cannot make {} executable", path.display()), e))
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BSI: &str = "/opt/bsi/bin/bsi";

    #[test]
    fn commands_are_quoted_only_when_needed() {
        let edit = hook_command("bsi", Tool::Claude, HookKind::Edit);
        assert!(
            edit.starts_with("bsi hook edit --tool claude || echo '{\"systemMessage\":"),
            "{edit}"
        );
        assert!(
            hook_command("/My Apps/it's/bsi", Tool::Codex, HookKind::Stop)
                .starts_with(r"'/My Apps/it'\''s/bsi' hook stop --tool codex || echo ")
        );
        // Every fallback answer is JSON of the tool's protocol, and never
        // blocks.
        for tool in Tool::ALL {
            for kind in [HookKind::Edit, HookKind::SessionStart, HookKind::Stop] {
                let v: Value = serde_json::from_str(&missing_answer(tool, kind)).expect("json");
                let text = v.to_string();
                assert!(!text.contains("deny") && !text.contains("block"), "{text}");
                assert!(is_ours(&hook_command("bsi", tool, kind), tool, kind));
            }
        }
        // Earlier installs, by absolute path and with `|| true`, are ours.
        assert!(is_ours(
            "/opt/bsi/bin/bsi hook edit --tool claude || true",
            Tool::Claude,
            HookKind::Edit
        ));
        assert!(is_ours(
            "bsi hook stop --tool codex",
            Tool::Codex,
            HookKind::Stop
        ));
        assert!(!is_ours(
            "bsi hook stop --tool claude",
            Tool::Codex,
            HookKind::Stop
        ));
    }

    #[test]
    fn merge_into_nothing_then_again_is_idempotent() {
        // Cline's hook and OpenCode's plugin are files of their own, not
        // entries of a settings file: see `cline_hook_files_round_trip` and
        // `the_opencode_plugin_…`.
        for tool in Tool::ALL
            .into_iter()
            .filter(|t| !matches!(t, Tool::Cline | Tool::Opencode))
        {
            let first = merge(tool, None, BSI).expect("merge").expect("changed");
            assert!(first.ends_with("}\n"), "{first}");
            assert_eq!(merge(tool, Some(&first), BSI), Ok(None), "{tool}");
            let v: Value = serde_json::from_str(&first).expect("json");
            for (event, _, kind) in entries(tool) {
                let list = v["hooks"][event].as_array().expect("list");
                assert_eq!(list.len(), 1, "{tool} {event}");
                assert!(our_commands(tool, &first).contains(&hook_command(BSI, tool, *kind)));
            }
            // Taking it out leaves an empty object (Cursor: its version).
            let out = unmerge(tool, &first).expect("unmerge").expect("changed");
            let want = if flat(tool) {
                "{\n  \"version\": 1\n}\n"
            } else {
                "{}\n"
            };
            assert_eq!(out, want, "{tool}");
            assert_eq!(unmerge(tool, &out), Ok(None));
        }
    }

    #[test]
    fn cline_hook_files_round_trip() {
        let root = tempfile::tempdir().expect("tempdir");
        let root = root.path();
        let hooks = root.join(cline::HOOKS_DIR);
        // A person's own PreToolUse hook: kept, bsi's takes the next name.
        fs::create_dir_all(&hooks).expect("mkdir");
        fs::write(hooks.join("PreToolUse"), "#!/bin/sh\necho '{}'\n").expect("write");
        let (path, did) = install_cline(root, "bsi").expect("install");
        assert_eq!(did, Installed::Created);
        assert_eq!(path, hooks.join("PreToolUse.sh"));
        let text = fs::read_to_string(&path).expect("read");
        assert_eq!(
            our_commands(Tool::Cline, &text),
            vec![hook_command("bsi", Tool::Cline, HookKind::Edit)]
        );
        assert_eq!(settings_path(Tool::Cline, root), path);
        assert_eq!(
            install_cline(root, "bsi").expect("again").1,
            Installed::Already
        );
        // A moved binary: the file is rewritten in place.
        assert_eq!(
            install_cline(root, BSI).expect("moved").1,
            Installed::Merged
        );
        let (_, did) = uninstall_cline(root).expect("uninstall");
        assert_eq!(did, Uninstalled::Restored);
        assert!(!path.exists());
        assert_eq!(
            fs::read_to_string(hooks.join("PreToolUse")).expect("kept"),
            "#!/bin/sh\necho '{}'\n"
        );
        assert_eq!(
            uninstall_cline(root).expect("again").1,
            Uninstalled::NotInstalled
        );
        // Every name taken by another hook: nothing written.
        for name in cline::FILE_NAMES {
            fs::write(hooks.join(name), "#!/bin/sh\n").expect("write");
        }
        assert!(install_cline(root, "bsi").is_err());
        // Nothing else in the directories: they go with bsi's file.
        let fresh = tempfile::tempdir().expect("tempdir");
        install_cline(fresh.path(), "bsi").expect("install");
        uninstall_cline(fresh.path()).expect("uninstall");
        assert!(!fresh.path().join(".clinerules").exists());
    }

    #[test]
    fn the_opencode_plugin_is_written_whole_and_taken_out_whole() {
        let tool = Tool::Opencode;
        let first = merge(tool, None, BSI).expect("merge").expect("changed");
        assert!(super::opencode::is_ours(&first));
        assert_eq!(merge(tool, Some(&first), BSI), Ok(None));
        let commands = our_commands(tool, &first);
        for (_, _, kind) in entries(tool) {
            assert!(
                commands.contains(&hook_command(BSI, tool, *kind)),
                "{commands:?}"
            );
        }
        // Another program: the plugin is written anew, not duplicated.
        let moved = merge(tool, Some(&first), "bsi")
            .expect("merge")
            .expect("changed");
        assert_eq!(moved, opencode_plugin("bsi"));
        assert_eq!(unmerge(tool, &first), Ok(Some(String::new())));
        // A plugin of the same name that bsi did not write is left alone.
        let mine = "export const Mine = async () => ({})\n";
        assert_eq!(merge(tool, Some(mine), BSI), Err(SettingsError::NotOurs));
        assert_eq!(unmerge(tool, mine), Ok(None));
        assert!(our_commands(tool, mine).is_empty());
    }

    #[test]
    fn opencode_install_and_uninstall_leave_the_project_as_it_was() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("wt");
        let common = dir.path().join("git");
        // A project with plugins of its own.
        fs::create_dir_all(root.join(".opencode/plugins")).expect("mkdir");
        fs::write(root.join(".opencode/plugins/mine.js"), "// mine\n").expect("write");
        let (path, did) = install(Tool::Opencode, &root, &common, "bsi").expect("install");
        assert_eq!(did, Installed::Created);
        assert_eq!(path, root.join(".opencode/plugins/bsi.js"));
        assert_eq!(
            install(Tool::Opencode, &root, &common, "bsi")
                .expect("again")
                .1,
            Installed::Already
        );
        assert_eq!(
            uninstall(Tool::Opencode, &root, &common).expect("un").1,
            Uninstalled::Restored
        );
        assert!(!path.exists());
        assert_eq!(
            fs::read_to_string(root.join(".opencode/plugins/mine.js")).expect("read"),
            "// mine\n"
        );
        // No plugins directory before: none after. The plugin edited since
        // install is still bsi's, and goes.
        fs::remove_dir_all(root.join(".opencode")).expect("rm");
        install(Tool::Opencode, &root, &common, "bsi").expect("install");
        fs::write(&path, format!("{}// more\n", opencode_plugin("bsi"))).expect("edit");
        assert_eq!(
            uninstall(Tool::Opencode, &root, &common).expect("un").1,
            Uninstalled::Removed
        );
        assert!(!path.exists());
    }

    #[test]
    fn other_settings_and_hooks_are_kept_in_order() {
        let existing = "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\n                \"matcher\": \"Bash\",\n                \"hooks\": [\n                    {\n                        \"type\": \"command\",\n                        \"command\": \"./check.sh\"\n                    }\n                ]\n            }\n        ]\n    },\n    \"env\": {\n        \"A\": \"1\"\n    }\n}\n";
        let merged = merge(Tool::Claude, Some(existing), BSI)
            .expect("merge")
            .expect("changed");
        assert!(merged.starts_with("{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\n                \"matcher\": \"Bash\","), "{merged}");
        assert!(merged.contains("./check.sh"));
        assert!(
            merged
                .trim_end()
                .ends_with("\"env\": {\n        \"A\": \"1\"\n    }\n}"),
            "{merged}"
        );
        let back = unmerge(Tool::Claude, &merged)
            .expect("unmerge")
            .expect("changed");
        assert_eq!(back, existing);
    }

    #[test]
    fn copilot_entries_are_flat_with_bash_and_their_matcher_is_mended() {
        let first = merge(Tool::Copilot, None, BSI)
            .expect("merge")
            .expect("changed");
        let v: Value = serde_json::from_str(&first).expect("json");
        assert_eq!(v["version"], 1);
        let edit = &v["hooks"]["preToolUse"][0];
        assert_eq!(edit["type"], "command");
        assert_eq!(edit["matcher"], copilot::EDIT_TOOLS);
        assert_eq!(
            edit["bash"].as_str(),
            Some(hook_command(BSI, Tool::Copilot, HookKind::Edit).as_str())
        );
        assert!(edit.get("command").is_none(), "{edit}");
        // An earlier matcher is set to this version's, in place.
        let old = first.replace(copilot::EDIT_TOOLS, "edit|create");
        let mended = merge(Tool::Copilot, Some(&old), BSI)
            .expect("merge")
            .expect("changed");
        assert_eq!(mended, first);
    }

    #[test]
    fn a_moved_binary_is_repointed_not_duplicated() {
        let first = merge(Tool::Gemini, None, "/old/bsi")
            .expect("merge")
            .expect("changed");
        let second = merge(Tool::Gemini, Some(&first), BSI)
            .expect("merge")
            .expect("changed");
        assert!(!second.contains("/old/bsi"));
        // Once before the edit, once after (Gemini takes a claim message then).
        assert_eq!(second.matches(" hook edit --tool gemini").count(), 2);
    }

    #[test]
    fn an_older_matcher_is_mended_on_reinstall() {
        // The edit hook as installed before shell commands were judged.
        let old = merge(Tool::Claude, None, "bsi")
            .expect("merge")
            .expect("changed")
            .replace(
                "Edit|MultiEdit|Write|NotebookEdit|Bash",
                "Edit|MultiEdit|Write|NotebookEdit",
            );
        assert_eq!(
            stale_matchers(Tool::Claude, &old),
            [(
                "PreToolUse",
                "Edit|MultiEdit|Write|NotebookEdit".to_string(),
                claude::EDIT_TOOLS
            )]
        );
        let mended = merge(Tool::Claude, Some(&old), "bsi")
            .expect("merge")
            .expect("changed");
        let v: Value = serde_json::from_str(&mended).expect("json");
        assert_eq!(v["hooks"]["PreToolUse"].as_array().map(Vec::len), Some(1));
        assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], claude::EDIT_TOOLS);
        assert!(stale_matchers(Tool::Claude, &mended).is_empty());
        assert_eq!(merge(Tool::Claude, Some(&mended), "bsi"), Ok(None));
        // Gemini, both hooks of the edit command.
        let old = merge(Tool::Gemini, None, "bsi")
            .expect("merge")
            .expect("changed")
            .replace("write_file|replace|run_shell_command", "write_file|replace");
        assert_eq!(stale_matchers(Tool::Gemini, &old).len(), 2);
        let mended = merge(Tool::Gemini, Some(&old), "bsi")
            .expect("merge")
            .expect("changed");
        assert!(stale_matchers(Tool::Gemini, &mended).is_empty());
        assert_eq!(mended.matches("run_shell_command").count(), 2);
        // A group that holds another hook too keeps its matcher for it; bsi's
        // hook moves to a group of its own.
        let shared = r#"{"hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [
            {"type": "command", "command": "./lint.sh"},
            {"type": "command", "command": "bsi hook edit --tool claude || true"}]}]}}"#;
        let mended = merge(Tool::Claude, Some(shared), "bsi")
            .expect("merge")
            .expect("changed");
        let v: Value = serde_json::from_str(&mended).expect("json");
        let list = v["hooks"]["PreToolUse"].as_array().expect("list");
        assert_eq!(list.len(), 2, "{mended}");
        assert_eq!(list[0]["matcher"], "Edit|Write");
        assert_eq!(list[0]["hooks"].as_array().map(Vec::len), Some(1));
        assert_eq!(list[0]["hooks"][0]["command"], "./lint.sh");
        assert_eq!(list[1]["matcher"], claude::EDIT_TOOLS);
        assert!(stale_matchers(Tool::Claude, &mended).is_empty());
    }

    #[test]
    fn files_bsi_cannot_edit_are_errors() {
        assert!(matches!(
            merge(Tool::Claude, Some("{"), BSI),
            Err(SettingsError::NotJson(_))
        ));
        assert!(matches!(
            merge(Tool::Claude, Some("[]"), BSI),
            Err(SettingsError::Shape(_))
        ));
        assert!(matches!(
            merge(Tool::Claude, Some(r#"{"hooks": []}"#), BSI),
            Err(SettingsError::Shape(_))
        ));
        assert!(matches!(
            merge(Tool::Cursor, Some(r#"{"hooks": {"stop": {}}}"#), BSI),
            Err(SettingsError::Shape(_))
        ));
    }

    #[test]
    fn install_and_uninstall_restore_the_bytes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("wt");
        let common = dir.path().join("git");
        fs::create_dir_all(root.join(".cursor")).expect("mkdir");
        let original = "{\"version\":1,\"hooks\":{\"stop\":[{\"command\":\"./x\"}]}}";
        fs::write(root.join(".cursor/hooks.json"), original).expect("write");
        let (path, did) = install(Tool::Cursor, &root, &common, BSI).expect("install");
        assert_eq!(did, Installed::Merged);
        assert_eq!(
            install(Tool::Cursor, &root, &common, BSI).expect("again").1,
            Installed::Already
        );
        assert_ne!(fs::read_to_string(&path).expect("read"), original);
        assert_eq!(
            uninstall(Tool::Cursor, &root, &common).expect("un").1,
            Uninstalled::Restored
        );
        assert_eq!(fs::read_to_string(&path).expect("read"), original);
        assert_eq!(
            uninstall(Tool::Cursor, &root, &common).expect("un").1,
            Uninstalled::NotInstalled
        );
    }

    #[test]
    fn a_moved_binary_keeps_the_original_and_a_deleted_file_starts_afresh() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("wt");
        let common = dir.path().join("git");
        let settings = root.join(".claude/settings.json");
        fs::create_dir_all(root.join(".claude")).expect("mkdir");
        fs::write(&settings, "{\"model\": \"opus\"}").expect("write");
        install(Tool::Claude, &root, &common, "/old/bsi").expect("install");
        install(Tool::Claude, &root, &common, BSI).expect("re-point");
        assert!(
            !fs::read_to_string(&settings)
                .expect("read")
                .contains("/old/bsi")
        );
        uninstall(Tool::Claude, &root, &common).expect("uninstall");
        assert_eq!(
            fs::read_to_string(&settings).expect("read"),
            "{\"model\": \"opus\"}"
        );
        // Installed, then the file deleted by hand: the next install records
        // that there was no file.
        install(Tool::Claude, &root, &common, BSI).expect("install");
        fs::remove_file(&settings).expect("rm");
        assert_eq!(
            install(Tool::Claude, &root, &common, BSI).expect("again").1,
            Installed::Created
        );
        assert_eq!(
            uninstall(Tool::Claude, &root, &common).expect("un").1,
            Uninstalled::Restored
        );
        assert!(!settings.exists());
        assert!(
            root.join(".claude").is_dir(),
            "the directory was there before"
        );
    }
}
