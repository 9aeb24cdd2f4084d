//! `bsi agent install|uninstall`: bsi's hooks in the agent tools' project
//! settings, and the session map every worktree of a clone shares.

use crate::common::{Brain, bin};

const TOOLS: [(&str, &str); 5] = [
    ("claude", ".claude/settings.json"),
    ("codex", ".codex/hooks.json"),
    ("gemini", ".gemini/settings.json"),
    ("cursor", ".cursor/hooks.json"),
    ("copilot", ".github/hooks/bsi.json"),
];

fn json(b: &Brain, rel: &str) -> serde_json::Value {
    serde_json::from_str(&b.read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every hook command in a settings file, in either shape.
fn commands(v: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for list in v["hooks"].as_object().into_iter().flat_map(|h| h.values()) {
        for e in list.as_array().into_iter().flatten() {
            // Copilot's command is its `bash`.
            if let Some(c) = e["command"].as_str().or(e["bash"].as_str()) {
                out.push(c.to_string());
            }
            for h in e["hooks"].as_array().into_iter().flatten() {
                if let Some(c) = h["command"].as_str() {
                    out.push(c.to_string());
                }
            }
        }
    }
    out
}

#[test]
fn agent_install_into_an_empty_project_and_back() {
    for (tool, rel) in TOOLS {
        let b = Brain::new();
        let status = b.git(&["status", "--porcelain"]);
        b.bsi(&["agent", "install", tool])
            .ok()
            .stdout_has(&format!("created {rel}"))
            .stdout_has(&format!("bsi agent uninstall {tool}"));
        let v = json(&b, rel);
        let cmds = commands(&v);
        // `bsi` from PATH: no path of this machine in a shared file, and
        // when bsi cannot run, an answer in the tool's protocol that says so.
        let exe = bin().display().to_string();
        for kind in ["edit", "session-start", "stop"] {
            let want = format!("bsi hook {kind} --tool {tool} || echo '{{");
            assert!(
                cmds.iter()
                    .any(|c| c.starts_with(&want) && c.contains("could not run bsi")),
                "{tool}: {cmds:?}"
            );
        }
        assert!(!cmds.iter().any(|c| c.contains(&exe)), "{cmds:?}");
        match tool {
            "claude" => assert_eq!(
                v["hooks"]["PreToolUse"][0]["matcher"],
                "Edit|MultiEdit|Write|NotebookEdit|Bash"
            ),
            "codex" => assert_eq!(
                v["hooks"]["PreToolUse"][0]["matcher"],
                "apply_patch|Edit|Write|Bash"
            ),
            "gemini" => {
                for event in ["BeforeTool", "AfterTool"] {
                    assert_eq!(
                        v["hooks"][event][0]["matcher"],
                        "write_file|replace|run_shell_command"
                    );
                }
            }
            "copilot" => {
                assert_eq!(v["version"], 1);
                assert_eq!(
                    v["hooks"]["preToolUse"][0]["matcher"],
                    "edit|create|apply_patch|bash"
                );
                assert_eq!(v["hooks"]["preToolUse"][0]["type"], "command");
            }
            _ => assert_eq!(v["version"], 1),
        }
        // Nothing of the user's work changed but the new settings file.
        let top = rel.split('/').next().unwrap_or(rel);
        let after = b.git(&["status", "--porcelain"]);
        let new = format!("?? {top}/");
        assert!(after.lines().any(|l| l == new), "{after}");
        // Claude Code's MCP settings sit at the root (`bsi mcp`, docs/mcp.md).
        let rest: Vec<&str> = after
            .lines()
            .filter(|l| *l != new && *l != "?? .mcp.json")
            .collect();
        assert_eq!(rest, status.lines().collect::<Vec<_>>());
        b.bsi(&["agent", "uninstall", tool])
            .ok()
            .stdout_has("back as it was");
        assert!(!b.path().join(rel).exists(), "{tool}");
        assert!(
            !b.path().join(top).exists(),
            "{tool}: its directory was bsi's"
        );
        assert_eq!(b.git(&["status", "--porcelain"]), status);
    }
}

const CLAUDE_SETTINGS: &str = r#"{
  "permissions": {
    "allow": ["Bash(git status)"]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [{ "type": "command", "command": "./scripts/check-bash.sh" }]
      }
    ],
    "Stop": [
      {
        "hooks": [{ "type": "command", "command": "notify-send done", "timeout": 5 }]
      }
    ]
  },
  "model": "opus"
}
"#;

#[test]
fn agent_install_keeps_other_settings_and_hooks_and_is_idempotent() {
    let b = Brain::new();
    b.write(".claude/settings.json", CLAUDE_SETTINGS);
    b.bsi(&["agent", "install", "claude"])
        .ok()
        .stdout_has("added bsi's hooks to .claude/settings.json");
    let once = b.read(".claude/settings.json");
    let v: serde_json::Value = serde_json::from_str(&once).expect("json");
    // The user's settings and hooks are all there, in their order.
    let keys: Vec<&String> = v.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["permissions", "hooks", "model"]);
    assert_eq!(v["permissions"]["allow"][0], "Bash(git status)");
    let pre = v["hooks"]["PreToolUse"].as_array().expect("list");
    assert_eq!(pre.len(), 2);
    assert_eq!(pre[0]["hooks"][0]["command"], "./scripts/check-bash.sh");
    let stop = v["hooks"]["Stop"].as_array().expect("list");
    assert_eq!(stop[0]["hooks"][0]["timeout"], 5);
    assert_eq!(stop.len(), 2);
    // Twice: no duplicate, not a byte changed.
    b.bsi(&["agent", "install", "claude"])
        .ok()
        .stdout_has("already in .claude/settings.json");
    assert_eq!(b.read(".claude/settings.json"), once);
    assert_eq!(
        commands(&v)
            .iter()
            .filter(|c| c.starts_with("bsi hook edit --tool claude || echo "))
            .count(),
        1
    );
    // Uninstall: the original bytes.
    b.bsi(&["agent", "uninstall", "claude"]).ok();
    assert_eq!(b.read(".claude/settings.json"), CLAUDE_SETTINGS);
    b.bsi(&["agent", "uninstall", "claude"])
        .ok()
        .stdout_has("nothing changed");
    assert_eq!(b.read(".claude/settings.json"), CLAUDE_SETTINGS);
}

#[test]
fn agent_uninstall_after_an_edit_removes_only_bsi_s_hooks() {
    let b = Brain::new();
    b.write(
        ".cursor/hooks.json",
        "{\n  \"version\": 1,\n  \"hooks\": {\n    \"afterFileEdit\": [\n      {\n        \"command\": \"./format.sh\"\n      }\n    ]\n  }\n}\n",
    );
    b.bsi(&["agent", "install", "cursor"]).ok();
    // The user edits the file after install.
    let edited = b
        .read(".cursor/hooks.json")
        .replace("./format.sh", "./format.sh --fast");
    b.write(".cursor/hooks.json", &edited);
    b.bsi(&["agent", "uninstall", "cursor"])
        .ok()
        .stdout_has("removed bsi's hooks from .cursor/hooks.json, kept the rest");
    assert_eq!(
        b.read(".cursor/hooks.json"),
        "{\n  \"version\": 1,\n  \"hooks\": {\n    \"afterFileEdit\": [\n      {\n        \"command\": \"./format.sh --fast\"\n      }\n    ]\n  }\n}\n"
    );
}

/// Copilot reads every `.github/hooks/*.json`: bsi writes a file of its
/// own there, and a project's `.github` (workflows, other hook files) is
/// left byte for byte, before and after uninstall. A `bsi.json` of the
/// project's own, with other hooks, is merged into and restored.
#[test]
fn agent_install_copilot_keeps_the_projects_github_folder() {
    let b = Brain::new();
    let theirs = "{\n  \"version\": 1,\n  \"hooks\": {\n    \"sessionEnd\": [\n      {\n        \"type\": \"command\",\n        \"bash\": \"./scripts/log.sh\"\n      }\n    ]\n  }\n}\n";
    let workflow = "on: push\njobs: {}\n";
    b.write(".github/hooks/audit.json", theirs);
    b.write(".github/workflows/ci.yml", workflow);
    b.git(&["add", ".github"]);
    b.git(&["commit", "-q", "-m", "github"]);
    let status = b.git(&["status", "--porcelain"]);
    b.bsi(&["agent", "install", "copilot"])
        .ok()
        .stdout_has("created .github/hooks/bsi.json")
        .stdout_has("trust");
    assert_eq!(b.read(".github/hooks/audit.json"), theirs);
    assert_eq!(b.read(".github/workflows/ci.yml"), workflow);
    let after = b.git(&["status", "--porcelain"]);
    assert!(
        after.lines().any(|l| l == "?? .github/hooks/bsi.json"),
        "{after}"
    );
    b.bsi(&["agent", "uninstall", "copilot"])
        .ok()
        .stdout_has("back as it was");
    assert!(!b.path().join(".github/hooks/bsi.json").exists());
    assert_eq!(b.read(".github/hooks/audit.json"), theirs);
    assert_eq!(b.git(&["status", "--porcelain"]), status);
    // A `bsi.json` the project already had: merged, then its bytes back.
    b.write(".github/hooks/bsi.json", theirs);
    b.bsi(&["agent", "install", "copilot"])
        .ok()
        .stdout_has("added bsi's hooks to .github/hooks/bsi.json");
    let v = json(&b, ".github/hooks/bsi.json");
    assert_eq!(v["hooks"]["sessionEnd"][0]["bash"], "./scripts/log.sh");
    assert_eq!(commands(&v).len(), 4, "{v}");
    b.bsi(&["agent", "install", "copilot"])
        .ok()
        .stdout_has("already in .github/hooks/bsi.json");
    b.bsi(&["agent", "uninstall", "copilot"]).ok();
    assert_eq!(b.read(".github/hooks/bsi.json"), theirs);
}

#[test]
fn agent_install_refuses_a_broken_settings_file_and_leaves_it() {
    let b = Brain::new();
    b.write(".gemini/settings.json", "{ \"theme\": ");
    b.bsi(&["agent", "install", "gemini"])
        .code(1)
        .stderr_has("not valid JSON");
    assert_eq!(b.read(".gemini/settings.json"), "{ \"theme\": ");
    b.bsi(&["agent", "install", "vim"]).code(2);
}

#[test]
fn agent_state_is_shared_by_every_worktree() {
    let b = Brain::new();
    let second = b.path().join("second");
    b.git(&[
        "worktree",
        "add",
        "-q",
        second.to_str().expect("utf-8"),
        "-b",
        "other",
    ]);
    // The session map: written from one worktree, read from the other.
    let here = bsi::agents::sessions::in_repo(b.path()).expect("map");
    let there = bsi::agents::sessions::in_repo(&second).expect("map");
    assert_eq!(here.path(), there.path());
    let common = b.git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]);
    assert!(here.path().starts_with(common.trim()), "{:?}", here.path());
    let (id, new) = there
        .get_or_insert_with(bsi::agents::Tool::CLAUDE, "abc123", || {
            "sess-20260314-0930-ab12".into()
        })
        .expect("insert");
    assert!(new);
    assert_eq!(
        here.get(bsi::agents::Tool::CLAUDE, "abc123").expect("get"),
        Some(id)
    );
    // Install in the second worktree: its own settings file, undone there.
    let r = b.bsi_in("second", &["agent", "install", "codex"]);
    r.ok().stdout_has("trust");
    assert!(second.join(".codex/hooks.json").exists());
    assert!(!b.path().join(".codex/hooks.json").exists());
    b.bsi_in("second", &["agent", "uninstall", "codex"])
        .ok()
        .stdout_has("back as it was");
    assert!(!second.join(".codex").exists());
}

#[test]
fn agent_hook_commands_never_block_when_bsi_fails() {
    // Whatever bsi does, a hook command it installed exits 0: exit 2 means
    // "block" to the tools, and errors must fail open.
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents");
    for (tool, rel) in TOOLS {
        let b = Brain::new();
        b.bsi(&["agent", "install", tool]).ok();
        let cmds = commands(&json(&b, rel));
        // Gemini: the edit hook runs after the edit too (`AfterTool`).
        let want = if tool == "gemini" { 4 } else { 3 };
        assert_eq!(cmds.len(), want, "{tool}: {cmds:?}");
        for cmd in cmds {
            for input in [
                "{ not json".to_string(),
                std::fs::read_to_string(fixtures.join(format!(
                    "{tool}-{}.json",
                    match tool {
                        "gemini" => "sessionstart",
                        "copilot" => "agentstop",
                        _ => "stop",
                    }
                )))
                .expect("fixture"),
            ] {
                let mut sh = std::process::Command::new("sh");
                crate::common::clean_env(&mut sh, b.path());
                sh.current_dir(b.path())
                    .arg("-c")
                    .arg(&cmd)
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped());
                let mut child = sh.spawn().expect("sh");
                if let Some(mut stdin) = child.stdin.take() {
                    use std::io::Write;
                    let _ = stdin.write_all(input.as_bytes());
                }
                let out = child.wait_with_output().expect("wait");
                assert_eq!(out.status.code(), Some(0), "{cmd}: {out:?}");
            }
        }
    }
}

/// An install from before shell commands were judged: its edit hooks do not
/// match the shell tool. The doctor says so, and installing again mends the
/// matcher in place.
#[test]
fn agent_install_mends_the_matcher_of_an_earlier_install() {
    let b = Brain::new();
    for (tool, file, old, new) in [
        (
            "claude",
            ".claude/settings.json",
            "Edit|MultiEdit|Write|NotebookEdit",
            "Edit|MultiEdit|Write|NotebookEdit|Bash",
        ),
        (
            "gemini",
            ".gemini/settings.json",
            "write_file|replace",
            "write_file|replace|run_shell_command",
        ),
    ] {
        b.bsi(&["agent", "install", tool]).ok();
        let now = b.read(file);
        b.write(
            file,
            &now.replace(&format!("\"{new}\""), &format!("\"{old}\"")),
        );
        let d = b.bsi(&["agent", "doctor", tool]);
        d.code(1)
            .stdout_has("MISSING hooks    bsi's ")
            .stdout_has(&format!("matches `{old}`, not `{new}`"))
            .stdout_has(&format!("`bsi agent install {tool}`"));
        b.bsi(&["agent", "install", tool]).ok();
        assert_eq!(
            b.read(file),
            now,
            "{tool}: mended to what a fresh install writes"
        );
        let d = b.bsi(&["agent", "doctor", tool]);
        assert!(d.stdout.contains("ok      hooks"), "{tool}: {}", d.stdout);
        // The file was edited by hand here: uninstall takes out bsi's hooks.
        b.bsi(&["agent", "uninstall", tool]).ok();
        let left = std::fs::read_to_string(b.path().join(file)).unwrap_or_default();
        assert!(!left.contains("bsi hook"), "{tool}: {left}");
    }
}

/// Cline CLI: bsi's hook is a file of its own in `.clinerules/hooks`; a
/// person's own `PreToolUse` and other hooks stay byte for byte, bsi's
/// takes the next name, the doctor finds it, and uninstall takes out only
/// bsi's file.
#[test]
fn agent_install_cline_keeps_a_persons_own_hooks() {
    let b = Brain::new();
    let mine = "#!/usr/bin/env bash\ninput=$(cat)\necho '{\"context\":\"mine\"}'\n";
    b.write(".clinerules/hooks/PreToolUse", mine);
    b.write(".clinerules/hooks/TaskStart", "#!/bin/sh\nexit 0\n");
    b.write(".clinerules/rules.md", "# Rules\n");
    b.bsi(&["agent", "install", "cline"])
        .ok()
        .stdout_has("created .clinerules/hooks/PreToolUse.sh")
        .stdout_has("cline mcp add bsi --yes -- bsi mcp --tool cline")
        .stdout_has("bsi agent uninstall cline");
    let hook = b.read(".clinerules/hooks/PreToolUse.sh");
    assert!(hook.starts_with("#!/bin/sh\n"), "{hook}");
    assert!(
        hook.contains(
            "\nbsi hook edit --tool cline || echo '{\"context\":\"bsi: the hook could not run bsi"
        ),
        "{hook}"
    );
    assert!(!hook.contains(&bin().display().to_string()), "{hook}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(b.path().join(".clinerules/hooks/PreToolUse.sh"))
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111, "executable");
    b.bsi(&["agent", "install", "cline"])
        .ok()
        .stdout_has("bsi's hooks are already in .clinerules/hooks/PreToolUse.sh");
    b.bsi(&["agent", "doctor", "cline"])
        .stdout_has("ok      hooks    bsi's 1 hooks are in .clinerules/hooks/PreToolUse.sh")
        .stdout_has("ok      trust")
        .stdout_has("cline mcp add bsi --yes -- bsi mcp --tool cline");
    b.bsi(&["agent", "uninstall", "cline"])
        .ok()
        .stdout_has(".clinerules/hooks/PreToolUse.sh is back as it was before `bsi agent install`");
    assert!(!b.path().join(".clinerules/hooks/PreToolUse.sh").exists());
    assert_eq!(b.read(".clinerules/hooks/PreToolUse"), mine);
    assert_eq!(b.read(".clinerules/hooks/TaskStart"), "#!/bin/sh\nexit 0\n");
    assert_eq!(b.read(".clinerules/rules.md"), "# Rules\n");
    b.bsi(&["agent", "uninstall", "cline"])
        .ok()
        .stdout_has("nothing changed");
}

/// Settings files as people write them: inline objects, escapes, no final
/// newline, CRLF, comments and trailing commas where the tool reads JSONC.
#[test]
fn agent_install_then_uninstall_gives_a_persons_files_back_byte_for_byte() {
    let mcp = "{\"mcpServers\": {\"docs\": {\"command\": \"caf\\u00e9\", \"args\": [\"--port\", \"1\"]}}, \"z\": 1, \"a\": {\"b\": 1}}";
    let claude = "{\r\n\t\"model\": \"opus\",\r\n\t\"env\": {\"A\": \"\\u00e9\"}\r\n}";
    let opencode = "// The project's OpenCode settings.\n{\n  \"$schema\": \"https://opencode.ai/config.json\", // schema\n  \"mcp\": {\n    \"docs\": { \"type\": \"local\", \"command\": [\"docs-mcp\"] }, /* ours */\n  },\n  \"theme\": \"caf\\u00e9\",\n}";
    for (tool, files) in [
        ("copilot", vec![(".mcp.json", mcp)]),
        (
            "claude",
            vec![(".mcp.json", mcp), (".claude/settings.json", claude)],
        ),
        ("opencode", vec![("opencode.json", opencode)]),
    ] {
        let b = Brain::new();
        for (rel, text) in &files {
            b.write(rel, text);
        }
        b.bsi(&["agent", "install", tool]).ok();
        let (rel, _) = files[0];
        let installed = b.read(rel);
        if tool == "opencode" {
            // In the `mcp` table, laid out as the file's members are.
            assert!(
                installed.contains(&"\n    \"bsi\": {\n      \"type\": \"local\",".to_string()),
                "{installed}"
            );
            assert!(installed.contains("/* ours */\n    \"bsi\""), "{installed}");
        } else {
            // Inline, as the file's servers are.
            let end = format!("\"args\": [\"mcp\", \"--tool\", \"{tool}\"]}}}}, \"z\"");
            assert!(installed.contains("\"1\"]}, \"bsi\": {\""), "{installed}");
            assert!(installed.contains(&end), "{installed}");
        }
        b.bsi(&["agent", "install", tool]).ok();
        b.bsi(&["agent", "uninstall", tool]).ok();
        for (rel, text) in &files {
            assert_eq!(&b.read(rel), text, "{tool}: {rel}");
        }
    }
}

#[test]
fn a_shared_mcp_server_stays_until_the_last_tool_that_uses_it_goes() {
    let mine = "{\n  \"mcpServers\": {\n    \"docs\": {\"command\": \"docs\"}\n  }\n}\n";
    for (first, second) in [("claude", "copilot"), ("copilot", "claude")] {
        let b = Brain::new();
        b.write(".mcp.json", mine);
        b.bsi(&["agent", "install", first]).ok();
        b.bsi(&["agent", "install", second])
            .ok()
            .stdout_has("the MCP server `bsi mcp` is already in .mcp.json");
        let title = if second == "claude" {
            "Claude Code"
        } else {
            "GitHub Copilot CLI"
        };
        b.bsi(&["agent", "uninstall", first])
            .ok()
            .stdout_has("kept the MCP server `bsi mcp` in .mcp.json")
            .stdout_has(title);
        let v: serde_json::Value = serde_json::from_str(&b.read(".mcp.json")).expect("json");
        assert!(v["mcpServers"]["bsi"].is_object(), "{first}: {v}");
        b.bsi(&["agent", "doctor", second])
            .stdout_has("bsi's MCP server");
        b.bsi(&["agent", "uninstall", second])
            .ok()
            .stdout_has("took the MCP server `bsi mcp` out of .mcp.json");
        assert_eq!(b.read(".mcp.json"), mine, "{first} then {second}");
    }
}

#[test]
fn agent_install_opencode_with_settings_it_cannot_read_writes_nothing() {
    let b = Brain::new();
    b.write("opencode.json", "{ \"mcp\": ");
    b.bsi(&["agent", "install", "opencode"]).code(1);
    assert!(!b.path().join(".opencode").exists());
    assert_eq!(b.read("opencode.json"), "{ \"mcp\": ");
    // Installed, then the settings broken by hand: uninstall still takes
    // the plugin out, then says what it could not do.
    b.write("opencode.json", "{}\n");
    b.bsi(&["agent", "install", "opencode"]).ok();
    assert!(b.path().join(".opencode/plugins/bsi.js").exists());
    b.write("opencode.json", "{ \"mcp\": ");
    b.bsi(&["agent", "uninstall", "opencode"])
        .code(1)
        .stdout_has(".opencode/plugins/bsi.js");
    assert!(!b.path().join(".opencode/plugins/bsi.js").exists());
}

#[test]
fn agent_install_cline_beside_a_clinerules_file() {
    let b = Brain::new();
    // Rules in a `.clinerules` file, as Cline still reads them.
    let rules = "Write short notes.\n";
    b.write(".clinerules", rules);
    b.bsi(&["agent", "install", "cline"])
        .ok()
        .stdout_has("created .cline/hooks/PreToolUse")
        .stdout_has("runs the hooks in .cline/hooks");
    assert_eq!(b.read(".clinerules"), rules);
    assert!(
        b.read(".cline/hooks/PreToolUse")
            .contains("bsi hook edit --tool cline")
    );
    b.bsi(&["agent", "install", "cline"])
        .ok()
        .stdout_has("already in .cline/hooks/PreToolUse");
    b.bsi(&["agent", "doctor", "cline"])
        .stdout_has("ok      hooks    bsi's 1 hooks are in .cline/hooks/PreToolUse");
    b.bsi(&["agent", "uninstall", "cline"])
        .ok()
        .stdout_has(".cline/hooks/PreToolUse is back as it was");
    assert!(!b.path().join(".cline").exists());
    assert_eq!(b.read(".clinerules"), rules);
}

#[test]
fn agent_install_vscode_writes_its_own_hooks_file_and_takes_it_out() {
    let b = Brain::new();
    let status = b.git(&["status", "--porcelain"]);
    b.bsi(&["agent", "install", "vscode"])
        .ok()
        .stdout_has("created .github/hooks/bsi-vscode.json")
        .stdout_has("name files, not lines")
        .stdout_has("registered the MCP server `bsi mcp` in .vscode/mcp.json");
    let v = json(&b, ".github/hooks/bsi-vscode.json");
    for (event, kind) in [
        ("PreToolUse", "edit"),
        ("SessionStart", "session-start"),
        ("Stop", "stop"),
    ] {
        let e = &v["hooks"][event][0];
        assert_eq!(e["type"], "command", "{v}");
        assert!(
            e["command"]
                .as_str()
                .is_some_and(|c| c.starts_with(&format!("bsi hook {kind} --tool vscode || echo"))),
            "{v}"
        );
        // VS Code ignores matchers: none is written.
        assert!(e.get("matcher").is_none(), "{v}");
    }
    let mcp = json(&b, ".vscode/mcp.json");
    assert_eq!(mcp["servers"]["bsi"]["args"][2], "vscode");
    b.bsi(&["agent", "doctor", "vscode"]).stdout_has("hooks");
    b.bsi(&["agent", "uninstall", "vscode"]).ok();
    assert_eq!(b.git(&["status", "--porcelain"]), status);
}

/// Qwen Code's settings and Kilo Code's `kilo.json`, as people write them
/// (comments, an inline object, an escape, CRLF, no final newline), come
/// back byte for byte after install and uninstall; a plugin of the
/// person's beside bsi's stays.
#[test]
fn qwen_and_kilo_installs_give_a_person_s_files_back_byte_for_byte() {
    let b = Brain::new();
    let qwen = "{\r\n  // mine\r\n  \"model\": {\"name\": \"qwen3-coder-plus\"},\r\n  \"ui\": {\"theme\": \"caf\\u00e9\"}\r\n}";
    let kilo = "{\n  /* my Kilo settings */\n  \"mcp\": {\"docs\": {\"type\": \"local\", \"command\": [\"docs-mcp\"]}},\n}\n";
    let mine = "export const Mine = async () => ({});\n";
    b.write(".qwen/settings.json", qwen);
    b.write("kilo.json", kilo);
    b.write(".kilo/plugins/mine.js", mine);
    b.bsi(&["agent", "install", "qwen"])
        .ok()
        .stdout_has("registered the MCP server `bsi mcp` in .qwen/settings.json");
    b.bsi(&["agent", "install", "kilo"])
        .ok()
        .stdout_has("registered the MCP server `bsi mcp` in kilo.json");
    let q = b.read(".qwen/settings.json");
    assert!(q.contains("  // mine\r\n"), "{q}");
    assert!(q.contains("bsi hook edit --tool qwen"), "{q}");
    assert!(q.contains("\"PostToolUse\""), "{q}");
    let k = b.read("kilo.json");
    assert!(k.contains("/* my Kilo settings */"), "{k}");
    assert!(k.contains("\"kilo\""), "{k}");
    assert!(
        b.read(".kilo/plugins/bsi.js")
            .contains("\"--tool\", \"kilo\"")
    );
    b.bsi(&["agent", "uninstall", "qwen"]).ok();
    b.bsi(&["agent", "uninstall", "kilo"]).ok();
    assert_eq!(b.read(".qwen/settings.json"), qwen);
    assert_eq!(b.read("kilo.json"), kilo);
    assert_eq!(b.read(".kilo/plugins/mine.js"), mine);
    assert!(!b.path().join(".kilo/plugins/bsi.js").exists());
}
