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

use super::{AgentTool, HookKind, Places, Tool, jsonc};
use bsi_core::error::{Error, Result};
use bsi_core::words::shell_word;

/// The settings file of `tool`, relative to the work tree root.
pub fn settings_file(tool: Tool) -> &'static str {
    tool.settings_file()
}

/// One hook entry bsi installs: the tool's event name, the matcher (the
/// tool calls it runs for), and bsi's hook.
pub type HookEntry = (&'static str, Option<&'static str>, HookKind);

/// How bsi's hook entries sit in a tool's settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookLayout {
    /// JSON: `hooks.EVENT` is a list of groups, each a `matcher` and its
    /// `hooks`, each hook a `type` and a `command`; `named`: bsi's hooks
    /// have a `name` too (`bsi-edit`…).
    Grouped {
        /// Each hook of bsi's has a `name`.
        named: bool,
    },
    /// JSON with a `version`: `hooks.EVENT` is a list of flat entries, each
    /// its command and `matcher`.
    Flat {
        /// The key of the entry's command.
        command_key: &'static str,
        /// Each entry has `"type": "command"` first.
        typed: bool,
        /// A matcher an earlier install wrote on bsi's entry is mended.
        mend_matcher: bool,
    },
    /// A file that is bsi's alone, written whole: the tool's own
    /// [`AgentTool::merge`], [`AgentTool::unmerge`] and
    /// [`AgentTool::our_commands`] read and write it.
    Own,
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
    tool.user_settings_file(places)
        .and_then(|p| fs::read_to_string(p).ok())
        .is_some_and(|t| tool.our_commands(&t).len() == tool.entries().len())
}

/// Where install keeps, under the common git directory `common`, what it
/// needs to undo itself.
pub fn records_in(common: &Path) -> PathBuf {
    super::sessions::dir_in(common).join("installed")
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
    command_line(program, &*tool, kind)
}

/// [`hook_command`], for any tool.
fn command_line(program: &str, tool: &dyn AgentTool, kind: HookKind) -> String {
    format!(
        "{} hook {} --tool {} || echo {}",
        shell_word(program),
        kind.subcommand(),
        tool.name(),
        shell_word(&missing_answer(tool, kind))
    )
}

/// What a hook says when bsi did not answer, in words.
pub fn missing_text(tool: &dyn AgentTool, kind: HookKind) -> String {
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
pub fn missing_answer(tool: &dyn AgentTool, kind: HookKind) -> String {
    tool.missing_answer(kind, &missing_text(tool, kind))
        .to_string()
}

/// The commands of bsi's hooks for `tool` in a settings file's text, one
/// per hook kind installed (nothing when the text is not JSON).
pub fn our_commands(tool: Tool, text: &str) -> Vec<String> {
    tool.our_commands(text)
}

/// [`our_commands`] in a JSON settings file ([`HookLayout::Grouped`],
/// [`HookLayout::Flat`]).
pub(super) fn json_commands(tool: &dyn AgentTool, text: &str) -> Vec<String> {
    let Ok(mut root) = parse(text) else {
        return Vec::new();
    };
    let Some(Value::Object(hooks)) = root.get_mut("hooks") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (event, _, kind) in tool.entries() {
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
pub(super) fn is_hook(command: &str, tool: &dyn AgentTool, kind: HookKind) -> bool {
    let command = command.split(" || ").next().unwrap_or(command).trim_end();
    command.ends_with(&format!(
        " hook {} --tool {}",
        kind.subcommand(),
        tool.name()
    ))
}

/// Whether `command` runs one of bsi's hooks for `tool`, of any kind.
pub fn is_bsi_hook(command: &str, tool: &dyn AgentTool) -> bool {
    [HookKind::Edit, HookKind::SessionStart, HookKind::Stop]
        .into_iter()
        .any(|k| is_hook(command, tool, k))
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
    tool.merge(existing, program)
}

/// [`merge`] into a JSON settings file. Hook entries added where there
/// were none are spliced in as their bytes (every other byte of the file
/// stays: comments, layout, escapes); a hook of bsi's repointed or a
/// matcher mended rewrites the file as JSON with its indentation, which a
/// file with comments cannot take.
pub(super) fn json_merge(
    tool: &dyn AgentTool,
    existing: Option<&str>,
    program: &str,
) -> Result<Option<String>, SettingsError> {
    let text = existing.unwrap_or("");
    let mut root = parse(text)?;
    // Only entries added: spliced. Anything else: the file rewritten.
    let mut only_added = !text.trim().is_empty();
    if flat(tool) && !root.contains_key("version") {
        let mut with_version = Map::new();
        with_version.insert("version".into(), json!(1));
        with_version.extend(root);
        root = with_version;
        only_added = false;
    }
    let Value::Object(hooks) = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
    else {
        return Err(SettingsError::Shape("hooks".into()));
    };
    let mut changed = false;
    let mut added: Vec<(&str, Value)> = Vec::new();
    for (event, matcher, kind) in tool.entries() {
        let Value::Array(list) = hooks
            .entry(event.to_string())
            .or_insert_with(|| Value::Array(Vec::new()))
        else {
            return Err(SettingsError::Shape(format!("hooks.{event}")));
        };
        let command = command_line(program, tool, *kind);
        if let HookLayout::Flat {
            mend_matcher: true, ..
        } = tool.hook_layout()
            && mend_flat_matcher(tool, list, *matcher, *kind)
        {
            changed = true;
            only_added = false;
        }
        match find_ours(tool, list, *kind) {
            Some(c) if c.as_str() == Some(&command) => {}
            Some(c) => {
                *c = Value::String(command.clone());
                changed = true;
                only_added = false;
            }
            None => {
                let e = entry(tool, *matcher, &command, *kind);
                added.push((event, e.clone()));
                list.push(e);
                changed = true;
            }
        }
        if mend_matcher(tool, list, *matcher, &command, *kind) {
            changed = true;
            only_added = false;
        }
    }
    if !changed {
        return Ok(None);
    }
    if only_added {
        return splice_added(text, &added);
    }
    if serde_json::from_str::<Value>(text).is_err() && !text.trim().is_empty() {
        return Err(SettingsError::NotJson(
            "bsi would have to rewrite the file, and its comments would be lost".into(),
        ));
    }
    Ok(Some(render(&root, text)))
}

/// `text` with each of `added` (an event and an entry) spliced in: at the
/// end of the event's list, the list at the end of `hooks`, `hooks` at the
/// end of the file's object.
fn splice_added(text: &str, added: &[(&str, Value)]) -> Result<Option<String>, SettingsError> {
    let mut out = text.to_string();
    for (event, e) in added {
        let root = jsonc::parse(&out).map_err(SettingsError::NotJson)?;
        out = match root.member("hooks") {
            None => jsonc::insert_member(&out, &root, "hooks", &json!({ *event: [e] })),
            Some(h) => match h.value.member(event) {
                None => jsonc::insert_member(&out, &h.value, event, &json!([e])),
                Some(list) => jsonc::push_item(&out, &list.value, e),
            },
        };
    }
    Ok(Some(out))
}

/// Whether `tool`'s hook entries are flat (no groups under a matcher), in a
/// file with a `version` ([`HookLayout::Flat`]).
fn flat(tool: &dyn AgentTool) -> bool {
    matches!(tool.hook_layout(), HookLayout::Flat { .. })
}

/// The key of a hook entry's command.
fn command_key(tool: &dyn AgentTool) -> &'static str {
    match tool.hook_layout() {
        HookLayout::Flat { command_key, .. } => command_key,
        HookLayout::Grouped { .. } | HookLayout::Own => "command",
    }
}

/// Points bsi's flat entry `kind` at `matcher` when an earlier install
/// wrote another. Returns whether the list changed.
fn mend_flat_matcher(
    tool: &dyn AgentTool,
    list: &mut [Value],
    matcher: Option<&str>,
    kind: HookKind,
) -> bool {
    let Some(Value::Object(e)) = list
        .iter_mut()
        .find(|e| command_of(e).is_some_and(|c| is_hook(c, tool, kind)))
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

/// The matcher of the group that holds bsi's hook `kind` (Claude Code,
/// Codex and Gemini group hooks under a matcher; Cursor's entries are
/// flat): `Some(None)` for a group without one, `None` when bsi's hook is
/// not there.
fn our_matcher(tool: &dyn AgentTool, list: &[Value], kind: HookKind) -> Option<Option<String>> {
    if flat(tool) {
        return None;
    }
    list.iter().find_map(|g| {
        let Some(Value::Array(inner)) = g.get("hooks") else {
            return None;
        };
        inner
            .iter()
            .any(|h| command_of(h).is_some_and(|c| is_hook(c, tool, kind)))
            .then(|| g.get("matcher").and_then(Value::as_str).map(str::to_string))
    })
}

/// Points the group of bsi's hook `kind` at `matcher` when an earlier
/// install wrote another (before shell commands were judged, the edit hook
/// did not match the shell tool). A group holding other hooks too keeps its
/// matcher: bsi's hook moves to a group of its own. Returns whether the
/// list changed.
fn mend_matcher(
    tool: &dyn AgentTool,
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
            if inner.iter().any(|h| command_of(h).is_some_and(|c| is_hook(c, tool, kind))))
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
        inner.retain(|h| !command_of(h).is_some_and(|c| is_hook(c, tool, kind)));
    }
    list.push(entry(tool, matcher, command, kind));
    true
}

/// The hooks of bsi's in a settings file's text whose matcher is not the
/// one this version installs: (event, matcher found, matcher wanted).
pub fn stale_matchers(tool: Tool, text: &str) -> Vec<(&'static str, String, &'static str)> {
    let Ok(root) = parse(text) else {
        return Vec::new();
    };
    let Some(Value::Object(hooks)) = root.get("hooks") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (event, matcher, kind) in tool.entries() {
        let Some(Value::Array(list)) = hooks.get(*event) else {
            continue;
        };
        if let Some(found) = our_matcher(&*tool, list, *kind)
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
    tool.unmerge(existing)
}

/// [`unmerge`] of a JSON settings file: bsi's hooks taken out as their
/// bytes (with a group, list or `hooks` they leave empty), every other
/// byte left as it is.
pub(super) fn json_unmerge(
    tool: &dyn AgentTool,
    existing: &str,
) -> Result<Option<String>, SettingsError> {
    let root = parse(existing)?;
    if !matches!(root.get("hooks"), None | Some(Value::Object(_))) {
        return Ok(None);
    }
    let mut out = existing.to_string();
    let mut changed = false;
    for (event, _, kind) in tool.entries() {
        // One of bsi's hooks at a time, the text read again after each.
        while let Some(next) = remove_one(tool, &out, event, *kind)? {
            out = next;
            changed = true;
        }
    }
    if !changed {
        return Ok(None);
    }
    let node = jsonc::parse(&out).map_err(SettingsError::NotJson)?;
    if let Some(at) = empty_member(&out, &node, "hooks") {
        out = jsonc::remove_member(&out, &node, at);
    }
    // Nothing left but blanks: the file as bsi writes an empty one.
    let node = jsonc::parse(&out).map_err(SettingsError::NotJson)?;
    if node.members().is_some_and(<[_]>::is_empty)
        && out[node.start + 1..node.end - 1].trim().is_empty()
    {
        return Ok(Some(render(&Map::new(), &out)));
    }
    Ok(Some(out))
}

/// The index of the member `key` of `object` when it is an empty object or
/// list, with nothing but blanks inside.
fn empty_member(text: &str, object: &jsonc::Node, key: &str) -> Option<usize> {
    let members = object.members()?;
    let at = members.iter().rposition(|m| m.key == key)?;
    let v = &members[at].value;
    let inner = v.members().or(v.items())?;
    (inner.is_empty() && text[v.start + 1..v.end - 1].trim().is_empty()).then_some(at)
}

/// `text` without one of bsi's hooks `kind` in `hooks.EVENT` (a group that
/// held only it goes too, and the list when it is left empty); `None` when
/// there is none.
fn remove_one(
    tool: &dyn AgentTool,
    text: &str,
    event: &str,
    kind: HookKind,
) -> Result<Option<String>, SettingsError> {
    let root = jsonc::parse(text).map_err(SettingsError::NotJson)?;
    let Some(hooks) = root.member("hooks") else {
        return Ok(None);
    };
    let Some(list) = hooks.value.member(event) else {
        return Ok(None);
    };
    let Some(items) = list.value.items() else {
        return Ok(None);
    };
    let ours = |v: &Value| command_of(v).is_some_and(|c| is_hook(c, tool, kind));
    let mut out = None;
    for (i, item) in items.iter().enumerate() {
        if flat(tool) {
            if ours(&item.value.to_value()) {
                out = Some(jsonc::remove_member(text, &list.value, i));
                break;
            }
            continue;
        }
        let Some(inner) = item.value.member("hooks") else {
            continue;
        };
        let Some(hs) = inner.value.items() else {
            continue;
        };
        if let Some(h) = hs.iter().position(|h| ours(&h.value.to_value())) {
            out = Some(if hs.len() == 1 {
                jsonc::remove_member(text, &list.value, i)
            } else {
                jsonc::remove_member(text, &inner.value, h)
            });
            break;
        }
    }
    let Some(out) = out else {
        return Ok(None);
    };
    // The list, once empty.
    let root = jsonc::parse(&out).map_err(SettingsError::NotJson)?;
    Ok(Some(match root.member("hooks") {
        Some(h) => match empty_member(&out, &h.value, event) {
            Some(at) => jsonc::remove_member(&out, &h.value, at),
            None => out,
        },
        None => out,
    }))
}

/// The settings' values: JSON, comments and trailing commas read too (a
/// person's settings file may have them; Gemini CLI and VS Code read
/// them).
fn parse(text: &str) -> Result<Map<String, Value>, SettingsError> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match jsonc::parse(text).map(|n| n.to_value()) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(SettingsError::Shape("the top level".into())),
        Err(e) => Err(SettingsError::NotJson(e)),
    }
}

fn command_of(v: &Value) -> Option<&str> {
    v.get("command")
        .or_else(|| v.get("bash"))
        .and_then(Value::as_str)
}

/// The `command` value of bsi's hook `kind` in an event's list.
fn find_ours<'a>(
    tool: &dyn AgentTool,
    list: &'a mut [Value],
    kind: HookKind,
) -> Option<&'a mut Value> {
    for e in list.iter_mut() {
        if flat(tool) {
            if command_of(e).is_some_and(|c| is_hook(c, tool, kind)) {
                return e.get_mut(command_key(tool));
            }
        } else {
            let Some(Value::Array(inner)) = e.get_mut("hooks") else {
                continue;
            };
            if let Some(h) = inner
                .iter_mut()
                .find(|h| command_of(h).is_some_and(|c| is_hook(c, tool, kind)))
            {
                return h.get_mut("command");
            }
        }
    }
    None
}

fn entry(tool: &dyn AgentTool, matcher: Option<&str>, command: &str, kind: HookKind) -> Value {
    let mut e = Map::new();
    match tool.hook_layout() {
        HookLayout::Flat {
            command_key, typed, ..
        } => {
            if typed {
                e.insert("type".into(), json!("command"));
            }
            e.insert(command_key.into(), json!(command));
            if let Some(m) = matcher {
                e.insert("matcher".into(), json!(m));
            }
        }
        HookLayout::Grouped { named } => {
            if let Some(m) = matcher {
                e.insert("matcher".into(), json!(m));
            }
            let mut h = Map::new();
            if named {
                h.insert("name".into(), json!(format!("bsi-{}", kind.subcommand())));
            }
            h.insert("type".into(), json!("command"));
            h.insert("command".into(), json!(command));
            e.insert("hooks".into(), Value::Array(vec![Value::Object(h)]));
        }
        HookLayout::Own => {}
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

fn record(dir: &Path, tool: &dyn AgentTool, settings: &Path) -> Record {
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

pub(super) fn read_opt(path: &Path) -> Result<Option<Vec<u8>>> {
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

pub(super) fn remove_opt(path: &Path) -> Result<()> {
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
    tool.install(root, common, program)
}

/// Installs bsi's hooks for `tool` in the settings file `path`, keeping
/// what undoes it in `records`.
pub fn install_file(
    tool: &dyn AgentTool,
    path: &Path,
    records: &Path,
    program: &str,
) -> Result<Installed> {
    let path = path.to_path_buf();
    let before = read_opt(&path)?;
    let text = before
        .as_deref()
        .map(|b| String::from_utf8_lossy(b).into_owned());
    let Some(new) = tool
        .merge(text.as_deref(), program)
        .map_err(|e| unusable(&path, e))?
    else {
        return Ok(Installed::Already);
    };
    let rec = record(records, tool, &path);
    let wrote = read_opt(&rec.wrote)?;
    let had_ours = text
        .as_deref()
        .is_some_and(|t| tool.unmerge(t).ok().flatten().is_some());
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
    tool.uninstall(root, common)
}

/// Removes what [`install_file`] added for `tool` to the settings file
/// `path`, with what it kept in `records`.
pub fn uninstall_file(tool: &dyn AgentTool, path: &Path, records: &Path) -> Result<Uninstalled> {
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
    let Some(new) = tool.unmerge(&text).map_err(|e| unusable(&path, e))? else {
        forget(&rec)?;
        return Ok(Uninstalled::NotInstalled);
    };
    let empty = parse(&new)
        .is_ok_and(|m| m.is_empty() || (flat(tool) && m.len() == 1 && m.contains_key("version")));
    if tool.hook_layout() == HookLayout::Own || (empty && absent.is_some()) {
        remove_opt(&path)?;
    } else {
        write_atomic(&path, new.as_bytes())?;
    }
    forget(&rec)?;
    Ok(Uninstalled::Removed)
}

#[cfg(unix)]
pub(super) fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .map_err(|e| Error::io(format!("cannot make {} executable", path.display()), e))
}

#[cfg(not(unix))]
pub(super) fn make_executable(_: &Path) -> Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{claude, copilot, opencode};
    use super::*;

    const BSI: &str = "/opt/bsi/bin/bsi";

    #[test]
    fn commands_are_quoted_only_when_needed() {
        let edit = hook_command("bsi", Tool::CLAUDE, HookKind::Edit);
        assert!(
            edit.starts_with("bsi hook edit --tool claude || echo '{\"systemMessage\":"),
            "{edit}"
        );
        assert!(
            hook_command("/My Apps/it's/bsi", Tool::CODEX, HookKind::Stop)
                .starts_with(r"'/My Apps/it'\''s/bsi' hook stop --tool codex || echo ")
        );
        // Every fallback answer is JSON of the tool's protocol, and never
        // blocks.
        for tool in Tool::ALL {
            for kind in [HookKind::Edit, HookKind::SessionStart, HookKind::Stop] {
                let v: Value = serde_json::from_str(&missing_answer(&*tool, kind)).expect("json");
                let text = v.to_string();
                assert!(!text.contains("deny") && !text.contains("block"), "{text}");
                assert!(is_hook(&hook_command("bsi", tool, kind), &*tool, kind));
            }
        }
        // Earlier installs, by absolute path and with `|| true`, are ours.
        assert!(is_hook(
            "/opt/bsi/bin/bsi hook edit --tool claude || true",
            &*Tool::CLAUDE,
            HookKind::Edit
        ));
        assert!(is_hook(
            "bsi hook stop --tool codex",
            &*Tool::CODEX,
            HookKind::Stop
        ));
        assert!(!is_hook(
            "bsi hook stop --tool claude",
            &*Tool::CODEX,
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
            .filter(|t| t.hook_layout() != HookLayout::Own)
        {
            let first = merge(tool, None, BSI).expect("merge").expect("changed");
            assert!(first.ends_with("}\n"), "{first}");
            assert_eq!(merge(tool, Some(&first), BSI), Ok(None), "{tool}");
            let v: Value = serde_json::from_str(&first).expect("json");
            for (event, _, kind) in tool.entries() {
                let list = v["hooks"][event].as_array().expect("list");
                assert_eq!(list.len(), 1, "{tool} {event}");
                assert!(our_commands(tool, &first).contains(&hook_command(BSI, tool, *kind)));
            }
            // Taking it out leaves an empty object (Cursor: its version).
            let out = unmerge(tool, &first).expect("unmerge").expect("changed");
            let want = if flat(&*tool) {
                "{\n  \"version\": 1\n}\n"
            } else {
                "{}\n"
            };
            assert_eq!(out, want, "{tool}");
            assert_eq!(unmerge(tool, &out), Ok(None));
        }
    }

    #[test]
    fn the_opencode_plugin_is_written_whole_and_taken_out_whole() {
        let tool = Tool::OPENCODE;
        let first = merge(tool, None, BSI).expect("merge").expect("changed");
        assert!(opencode::is_ours(&first));
        assert_eq!(merge(tool, Some(&first), BSI), Ok(None));
        let commands = our_commands(tool, &first);
        for (_, _, kind) in tool.entries() {
            assert!(
                commands.contains(&hook_command(BSI, tool, *kind)),
                "{commands:?}"
            );
        }
        // Another program: the plugin is written anew, not duplicated.
        let moved = merge(tool, Some(&first), "bsi")
            .expect("merge")
            .expect("changed");
        assert_eq!(moved, opencode::plugin_for("bsi"));
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
        let (path, did) = install(Tool::OPENCODE, &root, &common, "bsi").expect("install");
        assert_eq!(did, Installed::Created);
        assert_eq!(path, root.join(".opencode/plugins/bsi.js"));
        assert_eq!(
            install(Tool::OPENCODE, &root, &common, "bsi")
                .expect("again")
                .1,
            Installed::Already
        );
        assert_eq!(
            uninstall(Tool::OPENCODE, &root, &common).expect("un").1,
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
        install(Tool::OPENCODE, &root, &common, "bsi").expect("install");
        fs::write(&path, format!("{}// more\n", opencode::plugin_for("bsi"))).expect("edit");
        assert_eq!(
            uninstall(Tool::OPENCODE, &root, &common).expect("un").1,
            Uninstalled::Removed
        );
        assert!(!path.exists());
    }

    #[test]
    fn other_settings_and_hooks_are_kept_in_order() {
        let existing = "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\n                \"matcher\": \"Bash\",\n                \"hooks\": [\n                    {\n                        \"type\": \"command\",\n                        \"command\": \"./check.sh\"\n                    }\n                ]\n            }\n        ]\n    },\n    \"env\": {\n        \"A\": \"1\"\n    }\n}\n";
        let merged = merge(Tool::CLAUDE, Some(existing), BSI)
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
        let back = unmerge(Tool::CLAUDE, &merged)
            .expect("unmerge")
            .expect("changed");
        assert_eq!(back, existing);
    }

    #[test]
    fn hooks_are_spliced_into_a_persons_file_and_taken_out_as_their_bytes() {
        let files = [
            // Inline objects, an escape, no final newline, keys in order.
            (
                Tool::CLAUDE,
                "{\"model\": \"opus\", \"env\": {\"A\": \"caf\\u00e9\"}, \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./check.sh\"}]}]}}",
            ),
            // CRLF and tabs.
            (
                Tool::CODEX,
                "{\r\n\t\"hooks\": {\r\n\t\t\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./x\"}]}]\r\n\t}\r\n}\r\n",
            ),
            // Comments and a trailing comma, as Gemini CLI reads them.
            (
                Tool::GEMINI,
                "// mine\n{\n  \"theme\": \"x\", // the theme\n  \"hooks\": {\n    \"BeforeTool\": [{\"matcher\": \"x\", \"hooks\": [{\"type\": \"command\", \"command\": \"./lint\"}]}], /* mine */\n  },\n}\n",
            ),
            (
                Tool::CURSOR,
                "{\"version\": 1, \"hooks\": {\"stop\": [{\"command\": \"./x\"}]}}",
            ),
        ];
        for (tool, before) in files {
            let after = merge(tool, Some(before), BSI)
                .expect("merge")
                .expect("changed");
            // Every byte of the file is still there, in order.
            let mut rest = after.as_str();
            for c in before.chars() {
                let at = rest
                    .find(c)
                    .unwrap_or_else(|| panic!("{tool}: {c:?} lost in {after}"));
                rest = &rest[at + c.len_utf8()..];
            }
            assert_eq!(
                our_commands(tool, &after).len(),
                tool.entries().len(),
                "{after}"
            );
            assert_eq!(merge(tool, Some(&after), BSI), Ok(None), "{after}");
            let back = unmerge(tool, &after).expect("unmerge").expect("changed");
            assert_eq!(back, before, "{tool}: {after}");
        }
        // A repoint needs the file rewritten: refused where it has
        // comments, never half done.
        let commented = merge(Tool::GEMINI, Some("// mine\n{}\n"), "/old/bsi")
            .expect("merge")
            .expect("changed");
        assert!(matches!(
            merge(Tool::GEMINI, Some(&commented), BSI),
            Err(SettingsError::NotJson(_))
        ));
    }

    #[test]
    fn copilot_entries_are_flat_with_bash_and_their_matcher_is_mended() {
        let first = merge(Tool::COPILOT, None, BSI)
            .expect("merge")
            .expect("changed");
        let v: Value = serde_json::from_str(&first).expect("json");
        assert_eq!(v["version"], 1);
        let edit = &v["hooks"]["preToolUse"][0];
        assert_eq!(edit["type"], "command");
        assert_eq!(edit["matcher"], copilot::EDIT_TOOLS);
        assert_eq!(
            edit["bash"].as_str(),
            Some(hook_command(BSI, Tool::COPILOT, HookKind::Edit).as_str())
        );
        assert!(edit.get("command").is_none(), "{edit}");
        // An earlier matcher is set to this version's, in place.
        let old = first.replace(copilot::EDIT_TOOLS, "edit|create");
        let mended = merge(Tool::COPILOT, Some(&old), BSI)
            .expect("merge")
            .expect("changed");
        assert_eq!(mended, first);
    }

    #[test]
    fn a_moved_binary_is_repointed_not_duplicated() {
        let first = merge(Tool::GEMINI, None, "/old/bsi")
            .expect("merge")
            .expect("changed");
        let second = merge(Tool::GEMINI, Some(&first), BSI)
            .expect("merge")
            .expect("changed");
        assert!(!second.contains("/old/bsi"));
        // Once before the edit, once after (Gemini takes a claim message then).
        assert_eq!(second.matches(" hook edit --tool gemini").count(), 2);
    }

    #[test]
    fn an_older_matcher_is_mended_on_reinstall() {
        // The edit hook as installed before shell commands were judged.
        let old = merge(Tool::CLAUDE, None, "bsi")
            .expect("merge")
            .expect("changed")
            .replace(
                "Edit|MultiEdit|Write|NotebookEdit|Bash",
                "Edit|MultiEdit|Write|NotebookEdit",
            );
        assert_eq!(
            stale_matchers(Tool::CLAUDE, &old),
            [(
                "PreToolUse",
                "Edit|MultiEdit|Write|NotebookEdit".to_string(),
                claude::EDIT_TOOLS
            )]
        );
        let mended = merge(Tool::CLAUDE, Some(&old), "bsi")
            .expect("merge")
            .expect("changed");
        let v: Value = serde_json::from_str(&mended).expect("json");
        assert_eq!(v["hooks"]["PreToolUse"].as_array().map(Vec::len), Some(1));
        assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], claude::EDIT_TOOLS);
        assert!(stale_matchers(Tool::CLAUDE, &mended).is_empty());
        assert_eq!(merge(Tool::CLAUDE, Some(&mended), "bsi"), Ok(None));
        // Gemini, both hooks of the edit command.
        let old = merge(Tool::GEMINI, None, "bsi")
            .expect("merge")
            .expect("changed")
            .replace("write_file|replace|run_shell_command", "write_file|replace");
        assert_eq!(stale_matchers(Tool::GEMINI, &old).len(), 2);
        let mended = merge(Tool::GEMINI, Some(&old), "bsi")
            .expect("merge")
            .expect("changed");
        assert!(stale_matchers(Tool::GEMINI, &mended).is_empty());
        assert_eq!(mended.matches("run_shell_command").count(), 2);
        // A group that holds another hook too keeps its matcher for it; bsi's
        // hook moves to a group of its own.
        let shared = r#"{"hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [
            {"type": "command", "command": "./lint.sh"},
            {"type": "command", "command": "bsi hook edit --tool claude || true"}]}]}}"#;
        let mended = merge(Tool::CLAUDE, Some(shared), "bsi")
            .expect("merge")
            .expect("changed");
        let v: Value = serde_json::from_str(&mended).expect("json");
        let list = v["hooks"]["PreToolUse"].as_array().expect("list");
        assert_eq!(list.len(), 2, "{mended}");
        assert_eq!(list[0]["matcher"], "Edit|Write");
        assert_eq!(list[0]["hooks"].as_array().map(Vec::len), Some(1));
        assert_eq!(list[0]["hooks"][0]["command"], "./lint.sh");
        assert_eq!(list[1]["matcher"], claude::EDIT_TOOLS);
        assert!(stale_matchers(Tool::CLAUDE, &mended).is_empty());
    }

    #[test]
    fn files_bsi_cannot_edit_are_errors() {
        assert!(matches!(
            merge(Tool::CLAUDE, Some("{"), BSI),
            Err(SettingsError::NotJson(_))
        ));
        assert!(matches!(
            merge(Tool::CLAUDE, Some("[]"), BSI),
            Err(SettingsError::Shape(_))
        ));
        assert!(matches!(
            merge(Tool::CLAUDE, Some(r#"{"hooks": []}"#), BSI),
            Err(SettingsError::Shape(_))
        ));
        assert!(matches!(
            merge(Tool::CURSOR, Some(r#"{"hooks": {"stop": {}}}"#), BSI),
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
        let (path, did) = install(Tool::CURSOR, &root, &common, BSI).expect("install");
        assert_eq!(did, Installed::Merged);
        assert_eq!(
            install(Tool::CURSOR, &root, &common, BSI).expect("again").1,
            Installed::Already
        );
        assert_ne!(fs::read_to_string(&path).expect("read"), original);
        assert_eq!(
            uninstall(Tool::CURSOR, &root, &common).expect("un").1,
            Uninstalled::Restored
        );
        assert_eq!(fs::read_to_string(&path).expect("read"), original);
        assert_eq!(
            uninstall(Tool::CURSOR, &root, &common).expect("un").1,
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
        install(Tool::CLAUDE, &root, &common, "/old/bsi").expect("install");
        install(Tool::CLAUDE, &root, &common, BSI).expect("re-point");
        assert!(
            !fs::read_to_string(&settings)
                .expect("read")
                .contains("/old/bsi")
        );
        uninstall(Tool::CLAUDE, &root, &common).expect("uninstall");
        assert_eq!(
            fs::read_to_string(&settings).expect("read"),
            "{\"model\": \"opus\"}"
        );
        // Installed, then the file deleted by hand: the next install records
        // that there was no file.
        install(Tool::CLAUDE, &root, &common, BSI).expect("install");
        fs::remove_file(&settings).expect("rm");
        assert_eq!(
            install(Tool::CLAUDE, &root, &common, BSI).expect("again").1,
            Installed::Created
        );
        assert_eq!(
            uninstall(Tool::CLAUDE, &root, &common).expect("un").1,
            Uninstalled::Restored
        );
        assert!(!settings.exists());
        assert!(
            root.join(".claude").is_dir(),
            "the directory was there before"
        );
    }
}
