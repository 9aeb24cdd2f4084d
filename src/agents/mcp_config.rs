//! `bsi mcp` registered in an agent tool's MCP settings, and taken out
//! again: `.mcp.json` (Claude Code, and GitHub Copilot CLI, which reads
//! the same file), `.codex/config.toml` (Codex), `.gemini/settings.json`
//! (Gemini CLI), `.cursor/mcp.json` (Cursor), `opencode.json` (OpenCode:
//! `mcp.bsi`, a `local` server whose `command` is one list).
//!
//! In `.mcp.json` one server named `bsi` serves both Claude Code and
//! Copilot: whichever tool starts it, the server finds its session from the
//! process that started it and the environment it was given, not from its
//! `--tool`. Installing one of them where the other's server is registered
//! leaves it as it is, and uninstalling one takes out only a server that
//! names it.
//!
//! These files are the project's, often committed: the server runs `bsi`
//! found on `PATH`, never a path of one machine. Only the server named
//! `bsi` is touched, and only when it runs `bsi mcp`; every other server
//! and key stays where it was. [`merge`] and [`unmerge`] are pure.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::Tool;
use super::install::write_atomic;
use bsi_core::error::{Error, Result, SettingsError};

/// The server's name in every tool's settings.
pub const NAME: &str = "bsi";

/// The program the settings run: found on `PATH` on every machine.
const PROGRAM: &str = "bsi";

/// Where and how a tool's MCP settings hold bsi's server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpSettings {
    /// A JSON file in the work tree, the server under `key`:
    /// `{"command": "bsi", "args": [...]}`.
    Json {
        /// The file, relative to the work tree root.
        file: &'static str,
        /// The key of the servers' table (`mcpServers`).
        key: &'static str,
        /// `"type": "stdio"` comes first in the entry.
        stdio: bool,
    },
    /// A JSON file in the work tree whose server is a `local` one with one
    /// `command` list: `{"type": "local", "command": ["bsi", ...]}`.
    JsonLocal {
        /// The file, relative to the work tree root.
        file: &'static str,
        /// The key of the servers' table.
        key: &'static str,
    },
    /// A TOML file in the work tree: the table `[mcp_servers.bsi]`, edited
    /// as text so comments and order stay.
    Toml {
        /// The file, relative to the work tree root.
        file: &'static str,
    },
    /// The user's settings only, never the work tree's: bsi writes nothing
    /// there, and names the command that registers its server.
    UserOnly {
        /// The settings file's name.
        file: &'static str,
        /// The command a person runs to register bsi's server.
        add: &'static str,
    },
}

/// The MCP settings file of `tool`, relative to the work tree root (for a
/// tool whose settings are the user's only, the file's name).
pub fn settings_file(tool: Tool) -> &'static str {
    match tool.mcp_settings() {
        McpSettings::Json { file, .. }
        | McpSettings::JsonLocal { file, .. }
        | McpSettings::Toml { file }
        | McpSettings::UserOnly { file, .. } => file,
    }
}

/// The arguments of the server's command.
fn args(tool: Tool) -> [&'static str; 3] {
    ["mcp", "--tool", tool.name()]
}

/// The tool a server's arguments name (`mcp --tool NAME`), if any.
fn named_tool(args: Option<&[Value]>) -> Option<&str> {
    let args = args?;
    let at = args.iter().position(|a| a.as_str() == Some("--tool"))?;
    args.get(at + 1)?.as_str()
}

/// Whether `tool`'s server entry (as arguments) belongs to another tool
/// that reads the same settings file: it is kept for both.
fn shared_with_other(tool: Tool, args: Option<&[Value]>) -> bool {
    let other = named_tool(args).and_then(Tool::from_name);
    other.is_some_and(|o| o != tool && settings_file(o) == settings_file(tool))
}

/// What [`merge`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merged {
    /// The new text, with bsi's server.
    Changed(String),
    /// bsi's server is there as it should be.
    Already,
    /// A server named `bsi` that does not run `bsi mcp`: left alone.
    Foreign,
}

/// Whether a server entry runs `bsi mcp` (whatever bsi's path).
fn is_ours(command: Option<&str>, args: Option<&[Value]>) -> bool {
    let named_bsi = command.is_some_and(|c| {
        Path::new(c)
            .file_name()
            .is_some_and(|n| n == "bsi" || n == "bsi.exe")
    });
    named_bsi && args.and_then(|a| a.first()).and_then(Value::as_str) == Some("mcp")
}

/// `existing` (the file's text; `None`: no file) with bsi's server.
pub fn merge(tool: Tool, existing: Option<&str>) -> std::result::Result<Merged, SettingsError> {
    if let McpSettings::Toml { .. } = tool.mcp_settings() {
        return merge_toml(tool, existing.unwrap_or(""));
    }
    let text = existing.unwrap_or("");
    let mut root = parse(text)?;
    let key = servers_key(tool);
    let Value::Object(servers) = root.entry(key).or_insert_with(|| Value::Object(Map::new()))
    else {
        return Err(SettingsError::Shape(key.into()));
    };
    let want = server_json(tool);
    match servers.get(NAME) {
        Some(v) if *v == want => return Ok(Merged::Already),
        Some(v) if !entry_is_ours(v) => {
            return Ok(Merged::Foreign);
        }
        Some(v)
            if shared_with_other(
                tool,
                v.get("args").and_then(Value::as_array).map(Vec::as_slice),
            ) =>
        {
            return Ok(Merged::Already);
        }
        _ => {}
    }
    servers.insert(NAME.into(), want);
    Ok(Merged::Changed(render(&root, text)))
}

/// `existing` without bsi's server (and without `mcpServers` when it held
/// only that); `None` when bsi's server is not there. An empty text means
/// the file holds nothing else.
pub fn unmerge(tool: Tool, existing: &str) -> std::result::Result<Option<String>, SettingsError> {
    if let McpSettings::Toml { .. } = tool.mcp_settings() {
        return unmerge_toml(existing);
    }
    let mut root = parse(existing)?;
    let key = servers_key(tool);
    let Some(Value::Object(servers)) = root.get_mut(key) else {
        return Ok(None);
    };
    let ours = servers.get(NAME).is_some_and(|v| {
        let args = v.get("args").and_then(Value::as_array).map(Vec::as_slice);
        entry_is_ours(v) && !shared_with_other(tool, args)
    });
    if !ours {
        return Ok(None);
    }
    servers.shift_remove(NAME);
    if servers.is_empty() {
        root.shift_remove(key);
    }
    if root.is_empty() {
        return Ok(Some(String::new()));
    }
    Ok(Some(render(&root, existing)))
}

/// The key of the servers' table in a JSON settings file.
fn servers_key(tool: Tool) -> &'static str {
    match tool.mcp_settings() {
        McpSettings::Json { key, .. } | McpSettings::JsonLocal { key, .. } => key,
        McpSettings::Toml { .. } | McpSettings::UserOnly { .. } => "mcpServers",
    }
}

/// Whether a JSON server entry runs `bsi mcp`: `command` and `args`, or
/// OpenCode's one `command` list.
fn entry_is_ours(v: &Value) -> bool {
    match v.get("command") {
        Some(Value::Array(words)) => is_ours(words.first().and_then(Value::as_str), words.get(1..)),
        command => is_ours(
            command.and_then(Value::as_str),
            v.get("args").and_then(Value::as_array).map(Vec::as_slice),
        ),
    }
}

fn server_json(tool: Tool) -> Value {
    let settings = tool.mcp_settings();
    if let McpSettings::JsonLocal { .. } = settings {
        let mut command = vec![PROGRAM];
        command.extend(args(tool));
        return json!({ "type": "local", "command": command });
    }
    let mut s = Map::new();
    if let McpSettings::Json { stdio: true, .. } = settings {
        s.insert("type".into(), json!("stdio"));
    }
    s.insert("command".into(), json!(PROGRAM));
    s.insert("args".into(), json!(args(tool)));
    Value::Object(s)
}

fn parse(text: &str) -> std::result::Result<Map<String, Value>, SettingsError> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(SettingsError::Shape("the top level".into())),
        Err(e) => Err(SettingsError::NotJson(e.to_string())),
    }
}

/// Pretty JSON with the indentation of `like` (two spaces when it has
/// none), ending with a newline.
fn render(root: &Map<String, Value>, like: &str) -> String {
    let mut out = super::install::render(root, like);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

// --- Codex: TOML, edited as text so comments and order stay -----------------

/// The header of bsi's table in Codex's settings.
const TOML_HEADER: &str = "[mcp_servers.bsi]";

fn toml_block(tool: Tool) -> String {
    let [a, b, c] = args(tool);
    format!("{TOML_HEADER}\ncommand = \"{PROGRAM}\"\nargs = [\"{a}\", \"{b}\", \"{c}\"]\n")
}

fn toml_table(text: &str) -> std::result::Result<toml::Table, SettingsError> {
    text.parse::<toml::Table>()
        .map_err(|e| SettingsError::NotJson(format!("not valid TOML: {}", e.message())))
}

/// The `bsi` entry of `mcp_servers`, read.
fn toml_server(table: &toml::Table) -> Option<(Option<String>, Vec<Value>)> {
    let s = table
        .get("mcp_servers")?
        .as_table()?
        .get(NAME)?
        .as_table()?;
    let command = s
        .get("command")
        .and_then(|c| c.as_str())
        .map(str::to_string);
    let args = s
        .get("args")
        .and_then(|a| a.as_array())
        .map(|a| {
            a.iter()
                .map(|v| v.as_str().map_or(Value::Null, |s| json!(s)))
                .collect()
        })
        .unwrap_or_default();
    Some((command, args))
}

/// The bytes of bsi's table: its header to its last line before the next
/// table (or the end), the blank lines after it left out.
fn toml_span(text: &str) -> Option<(usize, usize)> {
    let mut start = None;
    let mut end = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        match start {
            None if t == TOML_HEADER => start = Some(offset),
            Some(s) if t.starts_with('[') => return Some((s, end)),
            _ => {}
        }
        offset += line.len();
        if start.is_some() && !t.is_empty() {
            end = offset;
        }
    }
    start.map(|s| (s, end))
}

fn merge_toml(tool: Tool, text: &str) -> std::result::Result<Merged, SettingsError> {
    let table = toml_table(text)?;
    let want: Vec<Value> = args(tool).iter().map(|a| json!(a)).collect();
    let mut out = text.to_string();
    match toml_server(&table) {
        Some((command, args)) if command.as_deref() == Some(PROGRAM) && args == want => {
            return Ok(Merged::Already);
        }
        Some((command, args)) if !is_ours(command.as_deref(), Some(&args)) => {
            return Ok(Merged::Foreign);
        }
        Some(_) => {
            // bsi's own table, from another version: written anew.
            let Some((a, b)) = toml_span(text) else {
                return Ok(Merged::Foreign);
            };
            out.replace_range(a..b, &toml_block(tool));
        }
        None => {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&toml_block(tool));
        }
    }
    // An `mcp_servers` written inline cannot take a table after it.
    toml_table(&out).map_err(|_| SettingsError::Shape("mcp_servers".into()))?;
    Ok(Merged::Changed(out))
}

fn unmerge_toml(text: &str) -> std::result::Result<Option<String>, SettingsError> {
    let table = toml_table(text)?;
    let Some((command, args)) = toml_server(&table) else {
        return Ok(None);
    };
    if !is_ours(command.as_deref(), Some(&args)) {
        return Ok(None);
    }
    let Some((a, b)) = toml_span(text) else {
        return Ok(None);
    };
    let mut out = text.to_string();
    out.replace_range(a..b, "");
    // The blank line install put before the table.
    if out[..a].ends_with("\n\n") {
        out.remove(a - 1);
    }
    toml_table(&out).map_err(|_| SettingsError::Shape("mcp_servers".into()))?;
    if out.trim().is_empty() {
        return Ok(Some(String::new()));
    }
    Ok(Some(out))
}

/// Whether `tool`'s MCP settings register bsi's server, as the doctor says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registration {
    /// As install writes it.
    Registered,
    /// A server named `bsi` runs `bsi mcp`, but not as install writes it.
    Differs,
    /// No server named `bsi`.
    Missing,
    /// A server named `bsi` runs something else.
    Foreign,
    /// The file cannot be read as the tool's settings.
    Unreadable,
}

/// What the settings text `existing` (`None`: no file) registers.
pub fn registration(tool: Tool, existing: Option<&str>) -> Registration {
    match merge(tool, existing) {
        Ok(Merged::Already) => Registration::Registered,
        Ok(Merged::Foreign) => Registration::Foreign,
        Ok(Merged::Changed(_)) => match existing.map(|t| unmerge(tool, t)) {
            Some(Ok(Some(_))) => Registration::Differs,
            _ => Registration::Missing,
        },
        Err(_) => Registration::Unreadable,
    }
}

// --- the files ---------------------------------------------------------------

/// What [`install`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registered {
    /// The server was added (the file created when it did not exist).
    Added,
    /// It was there already.
    Already,
    /// Another server named `bsi` is there: left alone.
    Foreign,
}

/// Registers `bsi mcp` in `tool`'s MCP settings in the work tree `root`.
pub fn install(tool: Tool, root: &Path) -> Result<(PathBuf, Registered)> {
    let path = root.join(settings_file(tool));
    let text = read_opt(&path)?;
    match merge(tool, text.as_deref()).map_err(|e| unusable(&path, e))? {
        Merged::Already => Ok((path, Registered::Already)),
        Merged::Foreign => Ok((path, Registered::Foreign)),
        Merged::Changed(new) => {
            write_atomic(&path, new.as_bytes())?;
            Ok((path, Registered::Added))
        }
    }
}

/// Takes `bsi mcp` out of `tool`'s MCP settings; a file left with nothing
/// else is removed (unless it is the tool's hook settings too, which the
/// hooks' uninstall restores). Returns whether it was there.
pub fn uninstall(tool: Tool, root: &Path) -> Result<(PathBuf, bool)> {
    let path = root.join(settings_file(tool));
    let Some(text) = read_opt(&path)? else {
        return Ok((path, false));
    };
    match unmerge(tool, &text).map_err(|e| unusable(&path, e))? {
        None => Ok((path, false)),
        Some(new)
            if new.is_empty() && settings_file(tool) != super::install::settings_file(tool) =>
        {
            fs::remove_file(&path)
                .map_err(|e| Error::io(format!("cannot remove {}", path.display()), e))?;
            Ok((path, true))
        }
        Some(new) => {
            write_atomic(&path, new.as_bytes())?;
            Ok((path, true))
        }
    }
}

fn read_opt(path: &Path) -> Result<Option<String>> {
    match fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("cannot read {}", path.display()), e)),
    }
}

fn unusable(path: &Path, source: SettingsError) -> Error {
    Error::SettingsUnusable {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_settings_keep_every_other_server_and_key() {
        let before = "{\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"}\n    },\n    \"keep\": 1\n}\n";
        for tool in [Tool::CLAUDE, Tool::GEMINI, Tool::CURSOR, Tool::COPILOT] {
            let Merged::Changed(after) = merge(tool, Some(before)).expect("merge") else {
                panic!("not changed");
            };
            let v: Value = serde_json::from_str(&after).expect("json");
            assert_eq!(v["mcpServers"]["other"]["command"], "x");
            assert_eq!(v["keep"], 1);
            assert_eq!(v["mcpServers"]["bsi"]["command"], "bsi");
            assert_eq!(
                v["mcpServers"]["bsi"]["args"],
                json!(["mcp", "--tool", tool.name()])
            );
            // Four spaces, as the file had.
            assert!(after.contains("\n    \"mcpServers\""), "{after}");
            assert_eq!(merge(tool, Some(&after)).expect("again"), Merged::Already);
            let back = unmerge(tool, &after).expect("unmerge").expect("was there");
            let v: Value = serde_json::from_str(&back).expect("json");
            assert_eq!(v, serde_json::from_str::<Value>(before).expect("json"));
            assert_eq!(unmerge(tool, &back).expect("again"), None);
        }
    }

    #[test]
    fn a_file_of_bsi_alone_is_empty_once_unmerged() {
        let Merged::Changed(after) = merge(Tool::CLAUDE, None).expect("merge") else {
            panic!("not changed");
        };
        assert_eq!(
            unmerge(Tool::CLAUDE, &after).expect("unmerge"),
            Some(String::new())
        );
    }

    #[test]
    fn claude_code_and_copilot_share_one_server_in_mcp_json() {
        assert_eq!(settings_file(Tool::COPILOT), settings_file(Tool::CLAUDE));
        let Merged::Changed(claude) = merge(Tool::CLAUDE, None).expect("merge") else {
            panic!("not changed");
        };
        // Copilot finds Claude Code's server there and keeps it.
        assert_eq!(
            merge(Tool::COPILOT, Some(&claude)).expect("merge"),
            Merged::Already
        );
        assert_eq!(
            registration(Tool::COPILOT, Some(&claude)),
            Registration::Registered
        );
        // Uninstalling Copilot leaves the server Claude Code registered.
        assert_eq!(unmerge(Tool::COPILOT, &claude).expect("unmerge"), None);
        assert_eq!(
            unmerge(Tool::CLAUDE, &claude).expect("unmerge"),
            Some(String::new())
        );
        // And the other way round.
        let Merged::Changed(copilot) = merge(Tool::COPILOT, None).expect("merge") else {
            panic!("not changed");
        };
        assert!(copilot.contains("\"copilot\""), "{copilot}");
        assert_eq!(
            merge(Tool::CLAUDE, Some(&copilot)).expect("merge"),
            Merged::Already
        );
        assert_eq!(unmerge(Tool::CLAUDE, &copilot).expect("unmerge"), None);
        // Gemini's settings are its own: a server naming Claude Code there is
        // bsi's, from another install, and is rewritten.
        let odd =
            r#"{"mcpServers": {"bsi": {"command": "bsi", "args": ["mcp", "--tool", "claude"]}}}"#;
        assert!(matches!(
            merge(Tool::GEMINI, Some(odd)).expect("merge"),
            Merged::Changed(_)
        ));
    }

    #[test]
    fn another_server_named_bsi_is_left_alone() {
        let text = r#"{"mcpServers": {"bsi": {"command": "node", "args": ["x.js"]}}}"#;
        assert_eq!(
            merge(Tool::CURSOR, Some(text)).expect("merge"),
            Merged::Foreign
        );
        assert_eq!(unmerge(Tool::CURSOR, text).expect("unmerge"), None);
        let toml = "[mcp_servers.bsi]\ncommand = \"node\"\n";
        assert_eq!(
            merge(Tool::CODEX, Some(toml)).expect("merge"),
            Merged::Foreign
        );
        assert_eq!(unmerge(Tool::CODEX, toml).expect("unmerge"), None);
    }

    #[test]
    fn codex_toml_keeps_comments_and_other_tables() {
        let before = "# mine\nmodel = \"o\"\n\n[mcp_servers.other]\ncommand = \"x\" # note\n";
        let Merged::Changed(after) = merge(Tool::CODEX, Some(before)).expect("merge") else {
            panic!("not changed");
        };
        assert!(after.starts_with(before), "{after}");
        assert!(
            after.ends_with(
                "[mcp_servers.bsi]\ncommand = \"bsi\"\nargs = [\"mcp\", \"--tool\", \"codex\"]\n"
            ),
            "{after}"
        );
        assert_eq!(
            merge(Tool::CODEX, Some(&after)).expect("again"),
            Merged::Already
        );
        assert_eq!(
            unmerge(Tool::CODEX, &after).expect("unmerge").as_deref(),
            Some(before)
        );
        // Between two tables, and from an older bsi.
        let middle =
            "[mcp_servers.bsi]\ncommand = \"/opt/bsi\"\nargs = [\"mcp\"]\n\n[after]\nx = 1\n";
        let Merged::Changed(m) = merge(Tool::CODEX, Some(middle)).expect("merge") else {
            panic!("not changed");
        };
        assert!(
            m.contains("args = [\"mcp\", \"--tool\", \"codex\"]\n\n[after]\nx = 1\n"),
            "{m}"
        );
        assert_eq!(
            unmerge(Tool::CODEX, &m).expect("unmerge").as_deref(),
            Some("\n[after]\nx = 1\n")
        );
    }

    #[test]
    fn an_inline_mcp_servers_is_refused_not_broken() {
        let text = "mcp_servers = { other = { command = \"x\" } }\n";
        assert!(merge(Tool::CODEX, Some(text)).is_err());
    }
}
