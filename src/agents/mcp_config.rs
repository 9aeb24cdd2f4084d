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
//! leaves it as it is, and uninstalling one keeps it while the other still
//! has bsi's hooks in the work tree ([`still_used_by`]: read from the other
//! tool's hook settings, so no count of users has to be kept in step).
//!
//! These files are the project's, often committed: the server runs `bsi`
//! found on `PATH`, never a path of one machine. Only the server named
//! `bsi` is touched, and only when it runs `bsi mcp`. JSON files are
//! edited as their bytes ([`super::jsonc`]): the server is one member
//! added, and taken out again as exactly those bytes, so every other byte
//! (comments, order, inline objects, escapes, line ends) stays. [`merge`]
//! and [`unmerge`] are pure.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::Tool;
use super::install::write_atomic;
use super::jsonc;
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

/// `existing` (the file's text; `None`: no file) with bsi's server. The
/// server is added as one member at the end of the servers' table (the
/// table added at the end of the file when there is none): every other
/// byte stays, and [`unmerge`] takes out exactly those bytes again.
pub fn merge(tool: Tool, existing: Option<&str>) -> std::result::Result<Merged, SettingsError> {
    if let McpSettings::Toml { .. } = tool.mcp_settings() {
        return merge_toml(tool, existing.unwrap_or(""));
    }
    let text = existing.unwrap_or("");
    let key = servers_key(tool);
    let want = server_json(tool);
    if text.trim().is_empty() {
        let mut root = Map::new();
        root.insert(key.into(), json!({ NAME: want }));
        return Ok(Merged::Changed(render(&root, text)));
    }
    let root = parse(text)?;
    let Some(servers) = root.member(key) else {
        return Ok(Merged::Changed(jsonc::insert_member(
            text,
            &root,
            key,
            &json!({ NAME: want }),
        )));
    };
    let servers = &servers.value;
    if servers.members().is_none() {
        return Err(SettingsError::Shape(key.into()));
    }
    let Some(ours) = servers.member(NAME) else {
        return Ok(Merged::Changed(jsonc::insert_member(
            text, servers, NAME, &want,
        )));
    };
    let v = ours.value.to_value();
    if v == want {
        return Ok(Merged::Already);
    }
    if !entry_is_ours(&v) {
        return Ok(Merged::Foreign);
    }
    if shared_with_other(
        tool,
        v.get("args").and_then(Value::as_array).map(Vec::as_slice),
    ) {
        return Ok(Merged::Already);
    }
    Ok(Merged::Changed(jsonc::replace_value(text, ours, &want)))
}

/// `existing` without bsi's server (and without the servers' table when it
/// held only that); `None` when bsi's server is not there. An empty text
/// means the file holds nothing else: it is the file a first install
/// created, with nothing added since.
pub fn unmerge(tool: Tool, existing: &str) -> std::result::Result<Option<String>, SettingsError> {
    if let McpSettings::Toml { .. } = tool.mcp_settings() {
        return unmerge_toml(existing);
    }
    if existing.trim().is_empty() {
        return Ok(None);
    }
    let root = parse(existing)?;
    let key = servers_key(tool);
    let Some(table) = root.member(key) else {
        return Ok(None);
    };
    let Some(members) = table.value.members() else {
        return Ok(None);
    };
    let Some(at) = members.iter().rposition(|m| m.key == NAME) else {
        return Ok(None);
    };
    if !entry_is_ours(&members[at].value.to_value()) {
        return Ok(None);
    }
    let out = jsonc::remove_member(existing, &table.value, at);
    // A table left with nothing, not even a comment: install added it.
    let again = parse(&out)?;
    let out = match again.member(key) {
        Some(t)
            if t.value.members().is_some_and(<[_]>::is_empty)
                && existing_blank(&out[t.value.start + 1..t.value.end - 1]) =>
        {
            let i = again
                .members()
                .and_then(|ms| ms.iter().rposition(|m| m.key == key))
                .unwrap_or(0);
            jsonc::remove_member(&out, &again, i)
        }
        _ => out,
    };
    // What a first install created (see [`merge`]), with nothing added
    // since: no file.
    if out == EMPTIED {
        return Ok(Some(String::new()));
    }
    Ok(Some(out))
}

/// The file [`merge`] creates where there was none, once its one table is
/// taken out.
const EMPTIED: &str = "{\n}\n";

/// Whether the text inside a table is blanks only.
fn existing_blank(inside: &str) -> bool {
    inside.trim().is_empty()
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

/// The file's text read as JSON (comments and trailing commas too: OpenCode
/// reads its settings as JSONC), its top level an object.
fn parse(text: &str) -> std::result::Result<jsonc::Node, SettingsError> {
    let root = jsonc::parse(text).map_err(SettingsError::NotJson)?;
    if root.members().is_none() {
        return Err(SettingsError::Shape("the top level".into()));
    }
    Ok(root)
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

/// Whether `tool`'s MCP settings in the work tree `root` can take bsi's
/// server: an error when the file cannot be read as the tool's settings.
pub fn check(tool: Tool, root: &Path) -> Result<()> {
    if let McpSettings::UserOnly { .. } = tool.mcp_settings() {
        return Ok(());
    }
    let path = root.join(settings_file(tool));
    let text = read_opt(&path)?;
    merge(tool, text.as_deref())
        .map(|_| ())
        .map_err(|e| unusable(&path, e))
}

/// What [`uninstall`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unregistered {
    /// The server was taken out (the file removed when install created it
    /// and nothing was added since).
    Removed,
    /// No server of bsi's was there.
    Absent,
    /// Another tool that reads the same file (Claude Code and Copilot both
    /// read `.mcp.json`) still has bsi's hooks in this work tree: the
    /// server stays for it, and goes with that tool's own uninstall.
    KeptFor(Tool),
}

/// Takes `bsi mcp` out of `tool`'s MCP settings, unless another tool that
/// reads the same file still has bsi's hooks installed; a file left with
/// nothing else is removed (unless it is the tool's hook settings too,
/// which the hooks' uninstall restores).
pub fn uninstall(tool: Tool, root: &Path) -> Result<(PathBuf, Unregistered)> {
    let path = root.join(settings_file(tool));
    let Some(text) = read_opt(&path)? else {
        return Ok((path, Unregistered::Absent));
    };
    let Some(new) = unmerge(tool, &text).map_err(|e| unusable(&path, e))? else {
        return Ok((path, Unregistered::Absent));
    };
    if let Some(other) = still_used_by(tool, root) {
        return Ok((path, Unregistered::KeptFor(other)));
    }
    if new.is_empty() && settings_file(tool) != super::install::settings_file(tool) {
        fs::remove_file(&path)
            .map_err(|e| Error::io(format!("cannot remove {}", path.display()), e))?;
    } else {
        write_atomic(&path, new.as_bytes())?;
    }
    Ok((path, Unregistered::Removed))
}

/// Another tool whose MCP settings are the same file as `tool`'s and whose
/// hooks are installed in the work tree at `root`: it still uses bsi's
/// server there. Whether a tool is installed is read from its own hook
/// settings, so nothing else has to be kept in step.
pub fn still_used_by(tool: Tool, root: &Path) -> Option<Tool> {
    Tool::ALL.into_iter().find(|other| {
        *other != tool
            && matches!(
                other.mcp_settings(),
                McpSettings::Json { .. } | McpSettings::JsonLocal { .. }
            )
            && settings_file(*other) == settings_file(tool)
            && fs::read_to_string(other.settings_path(root))
                .is_ok_and(|t| !other.our_commands(&t).is_empty())
    })
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
        // Either tool's uninstall can take it out: whether another tool
        // still uses it is for `uninstall` to say (see
        // `a_shared_server_stays_while_another_tool_uses_it`).
        assert_eq!(
            unmerge(Tool::COPILOT, &claude).expect("unmerge"),
            Some(String::new())
        );
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
        assert_eq!(
            unmerge(Tool::CLAUDE, &copilot).expect("unmerge"),
            Some(String::new())
        );
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
    fn a_shared_server_stays_while_another_tool_uses_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let mine = "{\"mcpServers\": {\"x\": {\"command\": \"caf\\u00e9\"}}}";
        fs::write(root.join(".mcp.json"), mine).expect("write");
        install(Tool::CLAUDE, root).expect("claude");
        assert_eq!(
            install(Tool::COPILOT, root).expect("copilot").1,
            Registered::Already
        );
        // Copilot's hooks are installed: Claude Code's uninstall keeps the
        // server.
        let hooks = Tool::COPILOT.settings_path(root);
        let Ok(Some(text)) = super::super::install::merge(Tool::COPILOT, None, "bsi") else {
            panic!("hooks");
        };
        write_atomic(&hooks, text.as_bytes()).expect("hooks");
        assert_eq!(
            uninstall(Tool::CLAUDE, root).expect("claude").1,
            Unregistered::KeptFor(Tool::COPILOT)
        );
        assert!(
            fs::read_to_string(root.join(".mcp.json"))
                .expect("read")
                .contains("\"bsi\"")
        );
        // Once Copilot's hooks are gone, its uninstall takes the server
        // out, and the file is back byte for byte.
        fs::remove_file(&hooks).expect("rm");
        assert_eq!(
            uninstall(Tool::COPILOT, root).expect("copilot").1,
            Unregistered::Removed
        );
        assert_eq!(
            fs::read_to_string(root.join(".mcp.json")).expect("read"),
            mine
        );
        assert_eq!(
            uninstall(Tool::COPILOT, root).expect("again").1,
            Unregistered::Absent
        );
    }

    #[test]
    fn json_settings_come_back_byte_for_byte() {
        let files = [
            // Inline objects, an escape, no final newline.
            (
                Tool::COPILOT,
                "{\"mcpServers\": {\"a\": {\"command\": \"caf\\u00e9\", \"args\": []}}}",
            ),
            // CRLF, tabs, keys in a person's order, no servers' table.
            (
                Tool::CLAUDE,
                "{\r\n\t\"z\": 1,\r\n\t\"a\": {\"b\": 1}\r\n}\r\n",
            ),
            (Tool::CURSOR, "{ }"),
            // JSONC, as OpenCode reads it: comments, trailing commas.
            (
                Tool::OPENCODE,
                "// project settings\n{\n  \"$schema\": \"https://opencode.ai/config.json\", // schema\n  \"mcp\": {\n    \"other\": {\"type\": \"local\", \"command\": [\"x\"]}, /* keep */\n  },\n}\n",
            ),
            (Tool::OPENCODE, "{\n  /* nothing yet */\n}"),
            (Tool::GEMINI, "{\n    \"theme\": \"x\" // mine\n}\n"),
        ];
        for (tool, before) in files {
            let Merged::Changed(after) = merge(tool, Some(before)).expect("merge") else {
                panic!("{tool}: not changed");
            };
            // Every byte of the file is still there, in order.
            let mut rest = after.as_str();
            for c in before.chars() {
                let Some(i) = rest.find(c) else {
                    panic!("{tool}: {c:?} lost in {after}");
                };
                rest = &rest[i + c.len_utf8()..];
            }
            assert_eq!(
                merge(tool, Some(&after)).expect("again"),
                Merged::Already,
                "{after}"
            );
            assert_eq!(registration(tool, Some(&after)), Registration::Registered);
            let back = unmerge(tool, &after).expect("unmerge").expect("was there");
            assert_eq!(back, before, "{tool}: {after}");
        }
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
