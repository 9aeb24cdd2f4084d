//! `bsi agent doctor [TOOL]`: for each agent tool, whether bsi's hooks are
//! in its project settings, whether the program they run is there, whether
//! the tool will run them (its trust), and whether a session of the tool
//! has reached them yet — each with the exact step that is missing.
//!
//! Reads only: the settings file, the `PATH`, the tool's user settings
//! (Codex `config.toml`, Gemini `trustedFolders.json`, Claude Code's
//! `~/.claude.json`) and bsi's own record of the last session start.

use std::fs;
use std::path::{Path, PathBuf};

use super::install::{self, PROGRAM};
use super::mcp_config::{self, Registration};
use super::{Tool, sessions};

/// One finding of the doctor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// What was checked: `hooks`, `program`, `trust`, `mcp`, `reached`.
    pub what: &'static str,
    /// `Some(true)`: in order; `Some(false)`: missing; `None`: bsi cannot
    /// tell.
    pub ok: Option<bool>,
    /// What was found.
    pub detail: String,
    /// The step that is missing (a person's, or a command).
    pub next: Option<String>,
}

pub use super::Places;

/// Every finding for `tool` in the work tree at `root` (`common`: the
/// common git directory).
pub fn check(tool: Tool, root: &Path, common: &Path, places: &Places) -> Vec<Item> {
    // Without the trailing `/` git gives a work tree: as the tools key it.
    let root: PathBuf = root.components().collect();
    let root = root.as_path();
    let settings = tool.settings_path(root);
    let text = fs::read_to_string(&settings).ok();
    let commands = text
        .as_deref()
        .map(|t| tool.our_commands(t))
        .unwrap_or_default();
    let rel = settings
        .strip_prefix(root)
        .unwrap_or(&settings)
        .display()
        .to_string();
    let rel = rel.as_str();
    let mut out = Vec::new();
    let all = tool.entries().len();
    let stale = text
        .as_deref()
        .map(|t| install::stale_matchers(tool, t))
        .unwrap_or_default();
    if let Some((event, found, want)) = stale.first() {
        out.push(Item {
            what: "hooks",
            ok: Some(false),
            detail: format!(
                "bsi's {event} hook in {rel} matches `{found}`, not `{want}`: an earlier install, under which the agent's shell commands go unjudged"
            ),
            next: Some(format!("`bsi agent install {}`", tool.name())),
        });
        return out;
    }
    if commands.len() == all {
        out.push(Item {
            what: "hooks",
            ok: Some(true),
            detail: format!("bsi's {all} hooks are in {rel}"),
            next: None,
        });
    } else {
        out.push(Item {
            what: "hooks",
            ok: Some(false),
            detail: if text.is_some() {
                format!("{rel} has {} of bsi's {all} hooks", commands.len())
            } else {
                format!("there is no {rel}")
            },
            next: Some(format!("`bsi agent install {}`", tool.name())),
        });
        return out;
    }
    out.push(program_item(tool, &commands, places));
    out.push(tool.trust(root, &settings, places));
    out.extend(bypass_item(tool, places));
    out.push(mcp_item(tool, root, places));
    let reached = sessions::SessionMap::new(&sessions::dir_in(common)).reached(tool);
    out.push(match reached {
        Some(when) => Item {
            what: "reached",
            ok: Some(true),
            detail: format!(
                "a {} session last reached bsi's hooks at {when}",
                tool.title()
            ),
            next: None,
        },
        None => Item {
            what: "reached",
            ok: None,
            detail: format!(
                "no {} session has reached bsi's hooks in this clone yet",
                tool.title()
            ),
            next: Some(format!(
                "start a {} session here: its {} records it",
                tool.title(),
                tool.reached_by()
            )),
        },
    });
    out
}

/// Whether bsi's MCP server is registered in the tool's MCP settings.
fn mcp_item(tool: Tool, root: &Path, places: &Places) -> Item {
    if let Some(item) = tool.user_mcp_item(places) {
        return item;
    }
    let rel = mcp_config::settings_file(tool);
    let text = fs::read_to_string(root.join(rel)).ok();
    let install = format!("`bsi agent install {}`", tool.name());
    let (ok, detail, next) = match mcp_config::registration(tool, text.as_deref()) {
        Registration::Registered => (
            Some(true),
            format!("bsi's MCP server (`bsi mcp`) is registered in {rel}"),
            None,
        ),
        Registration::Differs => (
            Some(false),
            format!("{rel} runs `bsi mcp`, but not as install writes it"),
            Some(format!("{install} again")),
        ),
        Registration::Missing if text.is_none() => (
            Some(false),
            format!("there is no {rel}: bsi's MCP server is not registered"),
            Some(install),
        ),
        Registration::Missing => (
            Some(false),
            format!("bsi's MCP server is not registered in {rel}"),
            Some(install),
        ),
        Registration::Foreign => (
            None,
            format!("{rel} has a server named bsi that does not run `bsi mcp`"),
            Some(format!(
                "rename or remove that server in {rel}, then {install} again"
            )),
        ),
        Registration::Unreadable => (
            Some(false),
            format!("{rel} cannot be read as {}'s MCP settings", tool.title()),
            Some(format!("fix {rel}, then {install} again")),
        ),
    };
    Item {
        what: "mcp",
        ok,
        detail,
        next,
    }
}

/// The program a hook's command line runs: its first word, as
/// [`bsi_core::words::shell_word`] wrote it (`'/opt/my tools/bsi' hook edit
/// …`), read back; else the first word as it stands.
fn hook_program(command: &str) -> Option<String> {
    command
        .split_once(" hook ")
        .and_then(|(p, _)| bsi_core::words::read_shell_word(p.trim()))
        .or_else(|| command.split_whitespace().next().map(str::to_string))
}

fn program_item(tool: Tool, commands: &[String], places: &Places) -> Item {
    let programs: Vec<String> = commands.iter().filter_map(|c| hook_program(c)).collect();
    let program = programs.first().cloned().unwrap_or_default();
    let found = if program.contains('/') {
        Path::new(&program)
            .is_file()
            .then(|| PathBuf::from(&program))
    } else {
        install::on_path(&program, places.path.as_deref())
    };
    match found {
        Some(p) if program == PROGRAM => Item {
            what: "program",
            ok: Some(true),
            detail: format!("the hooks run `bsi` from PATH: {}", p.display()),
            next: None,
        },
        Some(p) => Item {
            what: "program",
            ok: None,
            detail: format!(
                "the hooks run {} by its absolute path, which other machines do not have",
                p.display()
            ),
            next: Some(format!(
                "`bsi agent install {}` again: the hooks then run `bsi` from PATH",
                tool.name()
            )),
        },
        None => Item {
            what: "program",
            ok: Some(false),
            detail: format!("the hooks run `{program}`, which is not on this PATH"),
            next: Some(
                "put bsi on the PATH the tool runs hooks with (until then each hook says so and lets edits through)"
                    .into(),
            ),
        },
    }
}

/// `root` and its parents, as the tools key their trust.
pub(super) fn ancestors(root: &Path) -> Vec<String> {
    root.ancestors().map(|p| p.display().to_string()).collect()
}

/// The shortcuts that start `tool` without the project's hooks, and
/// whether bsi's user-level install (which none of them skips) is there.
fn bypass_item(tool: Tool, places: &Places) -> Option<Item> {
    let shortcuts = tool.project_shortcuts()?;
    let user = tool.user_settings_file(places)?;
    let install_user =
        bsi_core::words::command_line(["bsi", "agent", "install", "--user", tool.name()]);
    Some(if install::user_installed(tool, places) {
        Item {
            what: "bypass",
            ok: Some(true),
            detail: format!(
                "{shortcuts}; bsi's hooks in {} run there too{}",
                user.display(),
                tool.user_hooks_note()
            ),
            next: None,
        }
    } else {
        Item {
            what: "bypass",
            ok: None,
            detail: format!("{shortcuts}; bsi's hooks are not in {}", user.display()),
            next: Some(format!(
                "`{install_user}`: hooks no project shortcut skips, for every brain on this machine"
            )),
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_hook_s_program_is_read_as_its_shell_word() {
        assert_eq!(
            super::hook_program("bsi hook edit --tool claude || echo '{}'").as_deref(),
            Some("bsi")
        );
        assert_eq!(
            super::hook_program("'/opt/my tools/bsi' hook edit --tool codex || true").as_deref(),
            Some("/opt/my tools/bsi")
        );
        assert_eq!(
            super::hook_program("'/o/it'\\''s/bsi' hook stop --tool gemini").as_deref(),
            Some("/o/it's/bsi")
        );
    }

    use super::*;
    use serde_json::Value;

    /// A work tree with bsi's hooks for `tool`, and a home.
    fn setup(tool: Tool) -> (tempfile::TempDir, PathBuf, PathBuf, Places) {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("brain");
        let common = root.join(".git");
        fs::create_dir_all(&common).expect("mkdir");
        install::install(tool, &root, &common, PROGRAM).expect("install");
        let home = dir.path().join("home");
        fs::create_dir_all(&home).expect("mkdir");
        let places = Places {
            path: Some(dir.path().join("nowhere").into_os_string()),
            home: Some(home),
            ..Places::default()
        };
        (dir, root, common, places)
    }

    #[test]
    fn copilot_trust_is_read_from_its_config_json() {
        let (_d, root, common, places) = setup(Tool::COPILOT);
        let trust = item(&check(Tool::COPILOT, &root, &common, &places), "trust");
        assert_eq!(trust.ok, Some(false), "{trust:?}");
        assert!(
            trust
                .next
                .as_deref()
                .is_some_and(|n| n.contains("--trust-folder")),
            "{trust:?}"
        );
        let dir = places.home.as_ref().expect("home").join(".copilot");
        fs::create_dir_all(&dir).expect("mkdir");
        let parent = root.parent().expect("parent").display().to_string();
        fs::write(
            dir.join("config.json"),
            format!(
                "// This file is managed automatically.\n{{\n  \"trustedFolders\": [{}]\n}}\n",
                Value::String(parent)
            ),
        )
        .expect("write");
        let trust = item(&check(Tool::COPILOT, &root, &common, &places), "trust");
        assert_eq!(trust.ok, Some(true), "{trust:?}");
    }

    fn item(items: &[Item], what: &str) -> Item {
        items
            .iter()
            .find(|i| i.what == what)
            .cloned()
            .unwrap_or_else(|| panic!("{what}: {items:?}"))
    }

    #[test]
    fn no_hooks_is_the_first_missing_step() {
        let dir = tempfile::tempdir().expect("tempdir");
        let items = check(Tool::CLAUDE, dir.path(), dir.path(), &Places::default());
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].ok, Some(false));
        assert_eq!(items[0].next.as_deref(), Some("`bsi agent install claude`"));
    }

    #[test]
    fn the_mcp_server_registered_missing_or_foreign() {
        // Cline reads MCP servers from the user's settings only: its own test.
        for tool in Tool::ALL.into_iter().filter(|t| *t != Tool::CLINE) {
            let (_d, root, common, places) = setup(tool);
            mcp_config::install(tool, &root).expect("register");
            let mcp = item(&check(tool, &root, &common, &places), "mcp");
            assert_eq!(mcp.ok, Some(true), "{tool:?}: {mcp:?}");
            mcp_config::uninstall(tool, &root).expect("unregister");
            let mcp = item(&check(tool, &root, &common, &places), "mcp");
            assert_eq!(mcp.ok, Some(false), "{tool:?}: {mcp:?}");
            let install = format!("`bsi agent install {}`", tool.name());
            assert_eq!(mcp.next.as_deref(), Some(install.as_str()), "{mcp:?}");
        }
        // Cline: in the user's settings only; until the command that
        // registers it has run, that command is said.
        let (_d, root, common, places) = setup(Tool::CLINE);
        let mcp = item(&check(Tool::CLINE, &root, &common, &places), "mcp");
        assert_eq!(mcp.ok, None, "{mcp:?}");
        assert!(
            mcp.next
                .as_deref()
                .is_some_and(|n| n.contains("`cline mcp add bsi --yes -- bsi mcp --tool cline`")),
            "{mcp:?}"
        );
        // What `cline mcp add` writes (Cline CLI 3.0.65): registered.
        let cline = places
            .home
            .as_ref()
            .expect("home")
            .join(super::super::cline::MCP_SETTINGS_IN_HOME);
        fs::create_dir_all(cline.parent().expect("dir")).expect("mkdir");
        let written = r#"{"mcpServers":{"bsi":{"transport":{"type":"stdio","command":"bsi","args":["mcp","--tool","cline"]}}}}"#;
        fs::write(&cline, written).expect("write");
        let mcp = item(&check(Tool::CLINE, &root, &common, &places), "mcp");
        assert_eq!(mcp.ok, Some(true), "{mcp:?}");
        assert_eq!(mcp.next, None, "{mcp:?}");
        // Another tool's `--tool`: not as the command registers it.
        fs::write(&cline, written.replace("\"cline\"]", "\"claude\"]")).expect("write");
        let mcp = item(&check(Tool::CLINE, &root, &common, &places), "mcp");
        assert_eq!(mcp.ok, Some(false), "{mcp:?}");
        // Another program under bsi's name: said, left alone.
        fs::write(
            &cline,
            r#"{"mcpServers":{"bsi":{"command":"other","args":[]}}}"#,
        )
        .expect("write");
        let mcp = item(&check(Tool::CLINE, &root, &common, &places), "mcp");
        assert_eq!(mcp.ok, None, "{mcp:?}");
        assert!(mcp.detail.contains("does not run `bsi mcp`"), "{mcp:?}");
        // A server of another program named bsi: left alone, and said.
        let (_d, root, common, places) = setup(Tool::GEMINI);
        let settings = root.join(".gemini/settings.json");
        let mut v: Value =
            serde_json::from_str(&fs::read_to_string(&settings).expect("read")).expect("json");
        v["mcpServers"] = serde_json::json!({"bsi": {"command": "other-tool", "args": ["serve"]}});
        fs::write(&settings, v.to_string()).expect("write");
        let mcp = item(&check(Tool::GEMINI, &root, &common, &places), "mcp");
        assert_eq!(mcp.ok, None, "{mcp:?}");
        assert!(
            mcp.detail
                .contains("a server named bsi that does not run `bsi mcp`"),
            "{mcp:?}"
        );
        // `bsi mcp` without the tool's arguments: install again.
        v["mcpServers"] = serde_json::json!({"bsi": {"command": "bsi", "args": ["mcp"]}});
        fs::write(&settings, v.to_string()).expect("write");
        let mcp = item(&check(Tool::GEMINI, &root, &common, &places), "mcp");
        assert_eq!(mcp.ok, Some(false), "{mcp:?}");
        assert!(mcp.detail.contains("not as install writes it"), "{mcp:?}");
    }

    #[test]
    fn gemini_folder_trust_and_codex_project_trust() {
        let (_d, root, common, places) = setup(Tool::GEMINI);
        let items = check(Tool::GEMINI, &root, &common, &places);
        assert_eq!(item(&items, "hooks").ok, Some(true));
        assert_eq!(item(&items, "program").ok, Some(false), "bsi not on PATH");
        assert_eq!(item(&items, "trust").ok, Some(false));
        let gemini = places.home.as_ref().expect("home").join(".gemini");
        fs::create_dir_all(&gemini).expect("mkdir");
        // Trusting the parent of a sibling trusts the brain too.
        let sibling = root.parent().expect("parent").join("other");
        fs::write(
            gemini.join("trustedFolders.json"),
            serde_json::json!({ sibling.display().to_string(): "TRUST_PARENT" }).to_string(),
        )
        .expect("write");
        let items = check(Tool::GEMINI, &root, &common, &places);
        assert_eq!(item(&items, "trust").ok, Some(true));

        let (_d, root, common, places) = setup(Tool::CODEX);
        let codex = places.home.as_ref().expect("home").join(".codex");
        fs::create_dir_all(&codex).expect("mkdir");
        let hooks = root.join(".codex/hooks.json").display().to_string();
        let mut config = format!(
            "[projects.{:?}]\ntrust_level = \"trusted\"\n",
            root.display().to_string()
        );
        fs::write(codex.join("config.toml"), &config).expect("write");
        let trust = item(&check(Tool::CODEX, &root, &common, &places), "trust");
        assert_eq!(trust.ok, Some(false), "{trust:?}");
        assert!(
            trust.detail.contains("the project is trusted; 0 of"),
            "{trust:?}"
        );
        for key in ["pre_tool_use:0:0", "session_start:0:0", "stop:0:0"] {
            config.push_str(&format!(
                "[hooks.state.{:?}]\ntrusted_hash = \"sha256:x\"\n",
                format!("{hooks}:{key}")
            ));
        }
        fs::write(codex.join("config.toml"), &config).expect("write");
        let trust = item(&check(Tool::CODEX, &root, &common, &places), "trust");
        assert_eq!(trust.ok, Some(true), "{trust:?}");
    }
}
