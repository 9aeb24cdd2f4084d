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

use serde_json::Value;

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

/// Where the doctor looks, outside the work tree.
#[derive(Debug, Clone, Default)]
pub struct Places {
    /// `PATH`.
    pub path: Option<std::ffi::OsString>,
    /// The user's home.
    pub home: Option<PathBuf>,
    /// `CODEX_HOME` (else `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// `COPILOT_HOME` (else `~/.copilot`).
    pub copilot_home: Option<PathBuf>,
    /// `CLAUDE_CONFIG_DIR` (else `~/.claude`).
    pub claude_config: Option<PathBuf>,
    /// `XDG_STATE_HOME` (else `~/.local/state`).
    pub state_home: Option<PathBuf>,
}

/// Every finding for `tool` in the work tree at `root` (`common`: the
/// common git directory).
pub fn check(tool: Tool, root: &Path, common: &Path, places: &Places) -> Vec<Item> {
    // Without the trailing `/` git gives a work tree: as the tools key it.
    let root: PathBuf = root.components().collect();
    let root = root.as_path();
    let settings = install::settings_path(tool, root);
    let text = fs::read_to_string(&settings).ok();
    let commands = text
        .as_deref()
        .map(|t| install::our_commands(tool, t))
        .unwrap_or_default();
    let rel = settings
        .strip_prefix(root)
        .unwrap_or(&settings)
        .display()
        .to_string();
    let rel = rel.as_str();
    let mut out = Vec::new();
    let all = install::entries(tool).len();
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
    out.push(trust_item(tool, root, &settings, places));
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
                if tool == Tool::Cline {
                    "first tool call"
                } else {
                    "session-start hook"
                }
            )),
        },
    });
    out
}

/// Whether bsi's MCP server is registered in the tool's MCP settings.
fn mcp_item(tool: Tool, root: &Path, places: &Places) -> Item {
    if tool == Tool::Cline {
        return cline_mcp_item(places);
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

/// Whether bsi's MCP server is in Cline CLI's settings, which live in the
/// user's home (its default data directory), never the work tree: bsi reads
/// them and writes nothing there; the command that registers it is said.
fn cline_mcp_item(places: &Places) -> Item {
    let shown = format!("~/{}", mcp_config::CLINE_SETTINGS_IN_HOME);
    let add = format!("`{}`", mcp_config::CLINE_ADD);
    let text = places
        .home
        .as_ref()
        .and_then(|h| fs::read_to_string(h.join(mcp_config::CLINE_SETTINGS_IN_HOME)).ok());
    let fix = format!("edit the `bsi` entry of {shown} to run `bsi mcp --tool cline`");
    let (ok, detail, next) = match text.as_deref().map(mcp_config::cline_registration) {
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

fn trust_item(tool: Tool, root: &Path, settings: &Path, places: &Places) -> Item {
    match tool {
        Tool::Codex => codex_trust(root, settings, places),
        Tool::Gemini => gemini_trust(root, places),
        Tool::Claude => claude_trust(root, places),
        Tool::Cursor => Item {
            what: "trust",
            ok: None,
            detail: "Cursor runs project hooks without a trust step bsi can see".into(),
            next: None,
        },
        Tool::Copilot => copilot_trust(root, places),
        Tool::Cline => Item {
            what: "trust",
            ok: Some(true),
            detail: "Cline CLI runs the hooks in .clinerules/hooks without a trust step".into(),
            next: None,
        },
        Tool::Opencode => Item {
            what: "trust",
            ok: None,
            detail: "OpenCode loads the project's plugins without a trust step; `--pure` (OPENCODE_PURE) loads none, bsi's with them".into(),
            next: None,
        },
    }
}

/// Copilot CLI runs a folder's hooks only when the folder is trusted: a
/// person's answer kept in `trustedFolders` of its `config.json` (JSON
/// after `//` comment lines), or for one run `--trust-folder` or
/// `COPILOT_ALLOW_ALL=true`. Without it the hooks are skipped without a
/// word.
fn copilot_trust(root: &Path, places: &Places) -> Item {
    let config = places
        .copilot_home
        .clone()
        .or_else(|| places.home.as_ref().map(|h| h.join(".copilot")))
        .map(|h| h.join("config.json"));
    let trusted = config
        .as_ref()
        .and_then(|c| fs::read_to_string(c).ok())
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

/// `root` and its parents, as the tools key their trust.
fn ancestors(root: &Path) -> Vec<String> {
    root.ancestors().map(|p| p.display().to_string()).collect()
}

/// The shortcuts that start `tool` without the project's hooks, and
/// whether bsi's user-level install (which none of them skips) is there.
fn bypass_item(tool: Tool, places: &Places) -> Option<Item> {
    let shortcuts = match tool {
        Tool::Gemini => {
            "`gemini --skip-trust`, and any start in a folder Gemini CLI does not trust, load no project settings: bsi's project hooks do not run"
        }
        Tool::Codex => {
            "Codex CLI in a project it does not trust loads no .codex/ folder, and skips a hook not trusted in `/hooks` or changed since (`modified`), without a word"
        }
        Tool::Claude => {
            "`claude --setting-sources user` loads no project settings (bsi's project hooks do not run); `claude --bare` and `disableAllHooks` run no hook at all, the user's included"
        }
        Tool::Cursor | Tool::Copilot | Tool::Cline | Tool::Opencode => return None,
    };
    let user = install::user_settings_file(tool, places)?;
    let install_user =
        bsi_core::words::command_line(["bsi", "agent", "install", "--user", tool.name()]);
    Some(if install::user_installed(tool, places) {
        Item {
            what: "bypass",
            ok: Some(true),
            detail: format!(
                "{shortcuts}; bsi's hooks in {} run there too{}",
                user.display(),
                if tool == Tool::Codex {
                    " (once trusted in `/hooks` themselves)"
                } else {
                    ""
                }
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

/// How long the doctor waits for `codex app-server` to list its hooks.
const CODEX_LIST_BOUND: std::time::Duration = std::time::Duration::from_secs(15);

/// One hook as Codex lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedHook {
    /// The file it comes from.
    pub source_path: PathBuf,
    /// Its command line.
    pub command: String,
    /// `trusted`, `untrusted`, `modified` or `managed`.
    pub trust: String,
}

/// Codex's own word on the hooks it would run in `root`: `codex app-server`
/// asked `hooks/list` over stdio (JSON-RPC, one message a line), within
/// [`CODEX_LIST_BOUND`]. `None` when codex is not on PATH or gives no list
/// in time.
pub fn codex_hooks_list(root: &Path, places: &Places) -> Option<Vec<ListedHook>> {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let exe = install::on_path("codex", places.path.as_deref())?;
    let mut child = Command::new(exe)
        .arg("app-server")
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let requests = [
        serde_json::json!({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "bsi", "version": env!("CARGO_PKG_VERSION")}}}),
        serde_json::json!({"method": "initialized"}),
        serde_json::json!({"id": 2, "method": "hooks/list", "params": {"cwds": [root.display().to_string()]}}),
    ];
    let mut stdin = child.stdin.take()?;
    let stdout = child.stdout.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && v["id"] == 2
            {
                let _ = tx.send(v);
                break;
            }
        }
    });
    for r in &requests {
        if writeln!(stdin, "{r}").is_err() {
            break;
        }
    }
    let answer = rx.recv_timeout(CODEX_LIST_BOUND).ok();
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let data = answer?.get("result")?.get("data")?.as_array()?.clone();
    Some(
        data.iter()
            .flat_map(|e| e["hooks"].as_array().cloned().unwrap_or_default())
            .filter_map(|h| {
                Some(ListedHook {
                    source_path: PathBuf::from(h["sourcePath"].as_str()?),
                    command: h["command"].as_str()?.to_string(),
                    trust: h["trustStatus"].as_str()?.to_string(),
                })
            })
            .collect(),
    )
}

/// The trust item from Codex's own list of bsi's hooks in `settings`.
fn codex_listed_trust(root: &Path, settings: &Path, project: bool, listed: &[ListedHook]) -> Item {
    let ours: Vec<&ListedHook> = listed
        .iter()
        .filter(|h| h.source_path == settings && install::is_bsi_hook(&h.command, Tool::Codex))
        .collect();
    let all = install::entries(Tool::Codex).len();
    let of = |status: &str| ours.iter().filter(|h| h.trust == status).count();
    let trusted = of("trusted") + of("managed");
    let modified = of("modified");
    if project && ours.len() >= all && trusted == ours.len() {
        return Item {
            what: "trust",
            ok: Some(true),
            detail: format!(
                "the project is trusted, and Codex reports bsi's {trusted} hooks of .codex/hooks.json trusted (`codex app-server`)"
            ),
            next: None,
        };
    }
    let detail = if modified > 0 {
        format!(
            "Codex reports {modified} of bsi's hooks of .codex/hooks.json modified since they were trusted (`codex app-server`): it skips them without a word until they are trusted again"
        )
    } else if !project {
        "the project is not trusted: Codex loads no .codex/ folder, bsi's hooks with it".to_string()
    } else {
        format!(
            "the project is trusted; Codex reports {trusted} of bsi's {all} hooks of .codex/hooks.json trusted (`codex app-server`)"
        )
    };
    Item {
        what: "trust",
        ok: Some(false),
        detail,
        next: Some(codex_steps(root)),
    }
}

fn codex_trust(root: &Path, settings: &Path, places: &Places) -> Item {
    let home = places
        .codex_home
        .clone()
        .or_else(|| places.home.as_ref().map(|h| h.join(".codex")));
    let config = home.as_ref().map(|h| h.join("config.toml"));
    let parsed: Option<toml::Table> = config
        .as_ref()
        .and_then(|c| fs::read_to_string(c).ok())
        .and_then(|t| t.parse().ok());
    let shown = config
        .as_ref()
        .map_or("the Codex config.toml".to_string(), |c| {
            c.display().to_string()
        });
    let Some(cfg) = parsed else {
        return Item {
            what: "trust",
            ok: Some(false),
            detail: format!("{shown} trusts neither this project nor bsi's hooks"),
            next: Some(codex_steps(root)),
        };
    };
    let project = cfg
        .get("projects")
        .and_then(|p| p.as_table())
        .is_some_and(|p| {
            ancestors(root).iter().any(|a| {
                p.get(a)
                    .and_then(|e| e.get("trust_level"))
                    .and_then(|t| t.as_str())
                    == Some("trusted")
            })
        });
    if let Some(listed) = codex_hooks_list(root, places) {
        return codex_listed_trust(root, settings, project, &listed);
    }
    let prefix = format!("{}:", settings.display());
    let hooks = cfg
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(|s| s.as_table())
        .map_or(0, |s| {
            s.iter()
                .filter(|(k, v)| k.starts_with(&prefix) && v.get("trusted_hash").is_some())
                .count()
        });
    let all = install::entries(Tool::Codex).len();
    match (project, hooks >= all) {
        (true, true) => Item {
            what: "trust",
            ok: Some(true),
            detail: format!(
                "the project is trusted, and {hooks} hooks of .codex/hooks.json were trusted (bsi cannot tell whether they changed since: Codex then skips them until trusted again)"
            ),
            next: None,
        },
        (p, _) => Item {
            what: "trust",
            ok: Some(false),
            detail: format!(
                "{}; {hooks} of .codex/hooks.json's hooks trusted in {shown}",
                if p {
                    "the project is trusted"
                } else {
                    "the project is not trusted"
                }
            ),
            next: Some(codex_steps(root)),
        },
    }
}

/// What a person does so Codex runs bsi's hooks.
pub fn codex_steps(root: &Path) -> String {
    let root: PathBuf = root.components().collect();
    format!(
        "in `codex` started in {}: trust the project when asked, then open `/hooks` and trust bsi's hooks (Codex runs a project's hooks only when both are trusted)",
        root.display()
    )
}

fn gemini_trust(root: &Path, places: &Places) -> Item {
    let dir = places.home.as_ref().map(|h| h.join(".gemini"));
    let read = |name: &str| -> Option<Value> {
        let text = fs::read_to_string(dir.as_ref()?.join(name)).ok()?;
        serde_json::from_str(&text).ok()
    };
    let trust_off = read("settings.json")
        .is_some_and(|s| s["security"]["folderTrust"]["enabled"] == Value::Bool(false));
    if trust_off {
        return Item {
            what: "trust",
            ok: Some(true),
            detail: "folder trust is off in the user's Gemini settings: project settings load"
                .into(),
            next: None,
        };
    }
    let folders = read("trustedFolders.json");
    // TRUST_FOLDER trusts a folder and what is under it; TRUST_PARENT the
    // folder's parent and what is under that.
    let trusted = folders
        .as_ref()
        .and_then(Value::as_object)
        .is_some_and(|f| {
            f.iter().any(|(path, level)| {
                let base = match level.as_str() {
                    Some("TRUST_FOLDER") => Some(Path::new(path)),
                    Some("TRUST_PARENT") => Path::new(path).parent(),
                    _ => None,
                };
                base.is_some_and(|b| root.starts_with(b))
            })
        });
    if trusted {
        Item {
            what: "trust",
            ok: Some(true),
            detail: "the folder is trusted: Gemini CLI loads its project settings".into(),
            next: None,
        }
    } else {
        Item {
            what: "trust",
            ok: Some(false),
            detail: "the folder is not trusted: Gemini CLI loads no project settings here, so no bsi hook runs".into(),
            next: Some(format!(
                "start `gemini` in {} and trust the folder when asked (`--skip-trust` loads no project settings either)",
                root.display()
            )),
        }
    }
}

fn claude_trust(root: &Path, places: &Places) -> Item {
    let state: Option<Value> = places
        .home
        .as_ref()
        .and_then(|h| fs::read_to_string(h.join(".claude.json")).ok())
        .and_then(|t| serde_json::from_str(&t).ok());
    let accepted = state.as_ref().is_some_and(|s| {
        ancestors(root)
            .iter()
            .any(|a| s["projects"][a]["hasTrustDialogAccepted"] == Value::Bool(true))
    });
    if accepted {
        Item {
            what: "trust",
            ok: Some(true),
            detail: "the workspace is trusted in Claude Code".into(),
            next: None,
        }
    } else {
        Item {
            what: "trust",
            ok: None,
            detail: "no trust of this workspace recorded in ~/.claude.json (`claude -p` runs project hooks without it)".into(),
            next: Some(format!(
                "start `claude` in {} and trust the folder when asked",
                root.display()
            )),
        }
    }
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
        let (_d, root, common, places) = setup(Tool::Copilot);
        let trust = item(&check(Tool::Copilot, &root, &common, &places), "trust");
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
        let trust = item(&check(Tool::Copilot, &root, &common, &places), "trust");
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
        let items = check(Tool::Claude, dir.path(), dir.path(), &Places::default());
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].ok, Some(false));
        assert_eq!(items[0].next.as_deref(), Some("`bsi agent install claude`"));
    }

    #[test]
    fn the_mcp_server_registered_missing_or_foreign() {
        // Cline reads MCP servers from the user's settings only: its own test.
        for tool in Tool::ALL.into_iter().filter(|t| *t != Tool::Cline) {
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
        let (_d, root, common, places) = setup(Tool::Cline);
        let mcp = item(&check(Tool::Cline, &root, &common, &places), "mcp");
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
            .join(mcp_config::CLINE_SETTINGS_IN_HOME);
        fs::create_dir_all(cline.parent().expect("dir")).expect("mkdir");
        let written = r#"{"mcpServers":{"bsi":{"transport":{"type":"stdio","command":"bsi","args":["mcp","--tool","cline"]}}}}"#;
        fs::write(&cline, written).expect("write");
        let mcp = item(&check(Tool::Cline, &root, &common, &places), "mcp");
        assert_eq!(mcp.ok, Some(true), "{mcp:?}");
        assert_eq!(mcp.next, None, "{mcp:?}");
        // Another tool's `--tool`: not as the command registers it.
        fs::write(&cline, written.replace("\"cline\"]", "\"claude\"]")).expect("write");
        let mcp = item(&check(Tool::Cline, &root, &common, &places), "mcp");
        assert_eq!(mcp.ok, Some(false), "{mcp:?}");
        // Another program under bsi's name: said, left alone.
        fs::write(
            &cline,
            r#"{"mcpServers":{"bsi":{"command":"other","args":[]}}}"#,
        )
        .expect("write");
        let mcp = item(&check(Tool::Cline, &root, &common, &places), "mcp");
        assert_eq!(mcp.ok, None, "{mcp:?}");
        assert!(mcp.detail.contains("does not run `bsi mcp`"), "{mcp:?}");
        // A server of another program named bsi: left alone, and said.
        let (_d, root, common, places) = setup(Tool::Gemini);
        let settings = root.join(".gemini/settings.json");
        let mut v: Value =
            serde_json::from_str(&fs::read_to_string(&settings).expect("read")).expect("json");
        v["mcpServers"] = serde_json::json!({"bsi": {"command": "other-tool", "args": ["serve"]}});
        fs::write(&settings, v.to_string()).expect("write");
        let mcp = item(&check(Tool::Gemini, &root, &common, &places), "mcp");
        assert_eq!(mcp.ok, None, "{mcp:?}");
        assert!(
            mcp.detail
                .contains("a server named bsi that does not run `bsi mcp`"),
            "{mcp:?}"
        );
        // `bsi mcp` without the tool's arguments: install again.
        v["mcpServers"] = serde_json::json!({"bsi": {"command": "bsi", "args": ["mcp"]}});
        fs::write(&settings, v.to_string()).expect("write");
        let mcp = item(&check(Tool::Gemini, &root, &common, &places), "mcp");
        assert_eq!(mcp.ok, Some(false), "{mcp:?}");
        assert!(mcp.detail.contains("not as install writes it"), "{mcp:?}");
    }

    #[test]
    fn gemini_folder_trust_and_codex_project_trust() {
        let (_d, root, common, places) = setup(Tool::Gemini);
        let items = check(Tool::Gemini, &root, &common, &places);
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
        let items = check(Tool::Gemini, &root, &common, &places);
        assert_eq!(item(&items, "trust").ok, Some(true));

        let (_d, root, common, places) = setup(Tool::Codex);
        let codex = places.home.as_ref().expect("home").join(".codex");
        fs::create_dir_all(&codex).expect("mkdir");
        let hooks = root.join(".codex/hooks.json").display().to_string();
        let mut config = format!(
            "[projects.{:?}]\ntrust_level = \"trusted\"\n",
            root.display().to_string()
        );
        fs::write(codex.join("config.toml"), &config).expect("write");
        let trust = item(&check(Tool::Codex, &root, &common, &places), "trust");
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
        let trust = item(&check(Tool::Codex, &root, &common, &places), "trust");
        assert_eq!(trust.ok, Some(true), "{trust:?}");
    }
}
