//! The user-level install (`bsi agent install --user`): bsi's hooks in the
//! user's settings of Claude Code, Codex CLI and Gemini CLI, which no
//! project trust step or shortcut skips. They guard every brain on the
//! machine, answer nothing elsewhere, and where the project's hooks run too
//! an event is judged once.

use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};

use crate::agent_cli::{
    FakeModel, Setup, bsi_word, check_run, cli, gemini_home, run_bounded, run_claude, script,
};
use crate::common::{Run, bin, scratch};

/// bsi run with only `home` as the user's home (and the state directory
/// under it), in `dir`.
fn bsi_home(home: &Path, dir: &Path, args: &[&str], stdin: Option<&str>) -> Run {
    use std::io::Write;
    let mut cmd = std::process::Command::new(bin());
    crate::common::clean_env(&mut cmd, home);
    cmd.current_dir(dir).args(args);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("run bsi");
    let input = stdin.unwrap_or("").to_string();
    let mut pipe = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("wait");
    let _ = writer.join();
    Run::from_output(out)
}

/// Every file under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(rel) = p.strip_prefix(dir) {
                out.push(rel.display().to_string());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn user_level_install_round_trips_byte_for_byte_outside_any_repository() {
    let home = scratch("bsi-user-home");
    let elsewhere = scratch("bsi-user-cwd");
    let h = home.path();
    let cases = [
        (
            "claude",
            ".claude/settings.json",
            "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./mine.sh\"}]}\n        ]\n    }\n}",
        ),
        (
            "codex",
            ".codex/hooks.json",
            "{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"notify-me\"}]}]}}\n",
        ),
        (
            "gemini",
            ".gemini/settings.json",
            "{\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n  \"ui\": {\"theme\": \"dark\"}\n}\n",
        ),
    ];
    for (tool, rel, original) in cases {
        let path = h.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, original).expect("write");
        bsi_home(
            h,
            elsewhere.path(),
            &["agent", "install", "--user", tool],
            None,
        )
        .ok()
        .stdout_has(&format!("added bsi's hooks to {}", path.display()))
        .stdout_has("elsewhere they answer nothing");
        let text = std::fs::read_to_string(&path).expect("read");
        let v: Value = serde_json::from_str(&text).expect("json");
        // No path of this machine: the hooks run `bsi` from PATH.
        for (_, groups) in v["hooks"].as_object().expect("hooks") {
            for g in groups.as_array().expect("list") {
                for hook in g["hooks"].as_array().expect("hooks") {
                    let c = hook["command"].as_str().expect("command");
                    assert!(
                        c.starts_with("bsi hook ") || !c.contains("bsi"),
                        "{tool}: {c}"
                    );
                }
            }
        }
        assert!(!text.contains(&bin().display().to_string()), "{text}");
        // Again: nothing changes.
        bsi_home(
            h,
            elsewhere.path(),
            &["agent", "install", "--user", tool],
            None,
        )
        .ok()
        .stdout_has("already in");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), text);
        // The original is kept under the state directory, in no repository.
        let kept = files_under(&h.join(".local/state/bsi/installed"));
        assert!(
            kept.iter()
                .any(|f| f.starts_with(&format!("{tool}-")) && f.ends_with(".orig")),
            "{kept:?}"
        );
        bsi_home(
            h,
            elsewhere.path(),
            &["agent", "uninstall", "--user", tool],
            None,
        )
        .ok()
        .stdout_has("is back as it was before `bsi agent install --user`");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            original,
            "{tool}"
        );
    }
    // No file before: created, then removed again.
    let gemini = h.join(".gemini/settings.json");
    std::fs::remove_file(&gemini).expect("rm");
    bsi_home(
        h,
        elsewhere.path(),
        &["agent", "install", "--user", "gemini"],
        None,
    )
    .ok()
    .stdout_has("created");
    bsi_home(
        h,
        elsewhere.path(),
        &["agent", "uninstall", "--user", "gemini"],
        None,
    )
    .ok();
    assert!(!gemini.exists());
    // Cursor has no trust step to skip: no user-level install.
    bsi_home(
        h,
        elsewhere.path(),
        &["agent", "install", "--user", "cursor"],
        None,
    )
    .code(2)
    .stderr_has("Cursor has no user-level install");
    assert!(files_under(elsewhere.path()).is_empty());
}

/// The events a user-level hook gets outside a brain: a write, a session
/// start, a stop, in `dir`.
fn events_in(dir: &Path) -> [(&'static str, String); 3] {
    let d = dir.display().to_string();
    [
        (
            "edit",
            json!({"session_id": "s1", "cwd": d, "hook_event_name": "PreToolUse", "tool_name": "Write",
                   "tool_input": {"file_path": dir.join("notes.md").display().to_string(), "content": "x\n"}})
            .to_string(),
        ),
        (
            "session-start",
            json!({"session_id": "s1", "cwd": d, "hook_event_name": "SessionStart", "source": "startup"})
                .to_string(),
        ),
        (
            "stop",
            json!({"session_id": "s1", "cwd": d, "hook_event_name": "Stop", "stop_hook_active": false})
                .to_string(),
        ),
    ]
}

#[test]
fn outside_a_brain_the_hooks_answer_nothing_and_write_nothing() {
    let home = scratch("bsi-user-home");
    // A plain directory, and a git repository bsi is not set up in.
    let plain = scratch("bsi-user-plain");
    let repo = scratch("bsi-user-repo");
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(repo.path())
        .status()
        .expect("git init");
    assert!(git.success());
    for dir in [plain.path(), repo.path()] {
        for (kind, event) in events_in(dir) {
            let started = Instant::now();
            let r = bsi_home(
                home.path(),
                dir,
                &["hook", kind, "--tool", "claude"],
                Some(&event),
            );
            println!(
                "hook {kind} outside a brain ({}): {:?}",
                if dir == repo.path() {
                    "git repository"
                } else {
                    "plain directory"
                },
                started.elapsed()
            );
            r.ok();
            assert_eq!(r.stdout, "", "{kind} in {}", dir.display());
            assert_eq!(r.stderr, "", "{kind} in {}", dir.display());
        }
    }
    // Nothing written: no session map in the repository, no file elsewhere.
    assert!(!repo.path().join(".git/bsi-agents").exists());
    assert!(files_under(plain.path()).is_empty());
    // Gemini CLI reads stdout as JSON: `{}`, and nothing more.
    let r = bsi_home(
        home.path(),
        plain.path(),
        &["hook", "session-start", "--tool", "gemini"],
        Some(&json!({"session_id": "g", "cwd": plain.path().display().to_string(), "hook_event_name": "SessionStart", "source": "startup"}).to_string()),
    );
    r.ok();
    assert_eq!((r.stdout.as_str(), r.stderr.as_str()), ("{}\n", ""));
}

/// `bsi agent install --user gemini` in the CLI's home, the user's
/// settings of `gemini_home` kept.
fn install_user(s: &Setup, tool: &str) {
    let mut cmd = s.command(&bin(), &[]);
    cmd.args(["agent", "install", "--user", tool]);
    Run::from_output(cmd.output().expect("run bsi")).ok();
}

/// Gemini CLI started with `--skip-trust` in a folder it does not trust
/// loads no project settings, bsi's project hooks with them: the user-level
/// install still refuses the edit inside another session's section, and
/// the whole scenario holds.
#[test]
fn gemini_cli_with_skip_trust_is_refused_by_the_user_level_install() {
    let Some(exe) = cli("gemini") else { return };
    let s = Setup::new("gemini");
    let (turns, refused) = script(
        &|_| None,
        &|f, old, new| json!({"tool": "replace", "args": {"file_path": s.abs(f), "old_string": old, "new_string": new, "instruction": "edit"}}),
        &|c| json!({"tool": "run_shell_command", "args": {"command": c}}),
        &format!("{} open agents/alice.md", bsi_word()),
    );
    let model = FakeModel::start("gemini", &json!(turns), s.work.path());
    let url = format!("http://127.0.0.1:{}", model.port);
    // The user's settings: an API key, and no trusted folder.
    gemini_home(&s);
    std::fs::remove_file(s.home.path().join(".gemini/trustedFolders.json")).expect("rm");
    install_user(&s, "gemini");
    let mut cmd = s.command(
        &exe,
        &[("GEMINI_API_KEY", "test"), ("GOOGLE_GEMINI_BASE_URL", &url)],
    );
    cmd.args([
        "-p",
        "do the work",
        "--yolo",
        "--skip-trust",
        "-m",
        "gemini-2.5-flash",
        "-o",
        "json",
    ]);
    let run = run_bounded(cmd);
    check_run(&s, &model, &run, turns.len(), refused);
    let plan = s.b.read("projets/plan.md");
    assert!(!plan.contains("stolen"), "{plan}");
}

/// The number of hook events of `kind` the tool sent.
fn count(s: &Setup, kind: &str) -> usize {
    s.events().iter().filter(|(k, _)| k == kind).count()
}

/// With the project's hooks and the user's both in effect, Gemini CLI runs
/// the one entry once: one briefing, one judgement per edit.
#[test]
fn gemini_cli_with_project_and_user_hooks_judges_once() {
    let Some(exe) = cli("gemini") else { return };
    let s = Setup::new("gemini");
    let (turns, refused) = script(
        &|_| None,
        &|f, old, new| json!({"tool": "replace", "args": {"file_path": s.abs(f), "old_string": old, "new_string": new, "instruction": "edit"}}),
        &|c| json!({"tool": "run_shell_command", "args": {"command": c}}),
        &format!("{} open agents/alice.md", bsi_word()),
    );
    gemini_home(&s);
    install_user(&s, "gemini");
    let (model, run) = crate::agent_cli::run_gemini(&s, &exe, &json!(turns), None);
    check_run(&s, &model, &run, turns.len(), refused);
    assert_eq!(count(&s, "session-start"), 1, "{:?}", s.events());
    // Before each of the 5 tool calls and after each of the 4 that ran,
    // once each (twice each if both entries ran).
    assert_eq!(count(&s, "edit"), 9, "{:?}", s.events());
}

/// Claude Code with `--setting-sources user` loads no project settings:
/// the user-level install guards the brain; and with both loaded, one
/// entry runs once.
#[test]
fn claude_code_user_level_hooks_guard_and_run_once() {
    let Some(exe) = cli("claude") else { return };
    for sources in ["user", "user,project,local"] {
        let s = Setup::new("claude");
        let (turns, refused) = script(
            &|f| Some(json!({"tool": "Read", "args": {"file_path": s.abs(f)}})),
            &|f, old, new| json!({"tool": "Edit", "args": {"file_path": s.abs(f), "old_string": old, "new_string": new}}),
            &|c| json!({"tool": "Bash", "args": {"command": c, "description": "run"}}),
            &format!("{} open agents/alice.md", bsi_word()),
        );
        install_user(&s, "claude");
        let (model, run) = run_claude(
            &s,
            &exe,
            &json!(turns),
            &["--allowedTools", "Bash", "--setting-sources", sources],
        );
        check_run(&s, &model, &run, turns.len(), refused);
        assert_eq!(count(&s, "session-start"), 1, "{sources}: {:?}", s.events());
    }
}

/// `codex app-server`'s `hooks/list` for `dir`: (key, command, hash,
/// trust) of each hook, as the released CLI reports them.
fn codex_listed(
    exe: &Path,
    codex_home: &Path,
    dir: &Path,
) -> Vec<(String, String, String, String)> {
    use std::io::{BufRead, BufReader, Write};
    let mut child = std::process::Command::new(exe)
        .arg("app-server")
        .env("CODEX_HOME", codex_home)
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("codex app-server");
    let mut stdin = child.stdin.take().expect("stdin");
    for m in [
        json!({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "test", "version": "0"}}}),
        json!({"method": "initialized"}),
        json!({"id": 2, "method": "hooks/list", "params": {"cwds": [dir.display().to_string()]}}),
    ] {
        writeln!(stdin, "{m}").expect("write");
    }
    let mut found = None;
    for line in BufReader::new(child.stdout.take().expect("stdout")).lines() {
        let v: Value = serde_json::from_str(&line.expect("line")).unwrap_or(Value::Null);
        if v["id"] == 2 {
            found = Some(v);
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let v = found.expect("a hooks/list answer");
    v["result"]["data"][0]["hooks"]
        .as_array()
        .expect("hooks")
        .iter()
        .map(|h| {
            let s = |k: &str| h[k].as_str().unwrap_or_default().to_string();
            (s("key"), s("command"), s("currentHash"), s("trustStatus"))
        })
        .collect()
}

/// After an upgrade from an install that wrote an absolute path, installing
/// again changes entries Codex had trusted: Codex then reports them
/// `modified` and skips them. Install says so and what to do; the doctor,
/// reading Codex's own report, says `MISSING trust`, never "ok".
#[test]
fn codex_cli_hooks_changed_by_a_reinstall_are_said_modified() {
    let Some(exe) = cli("codex") else { return };
    let s = Setup::new("codex");
    let hooks = s.b.path().join(".codex/hooks.json");
    // What an earlier version wrote: the binary by its absolute path.
    let old = std::fs::read_to_string(&hooks)
        .expect("read")
        .replace("\"bsi hook ", &format!("\"{} hook ", bin().display()));
    std::fs::write(&hooks, &old).expect("write");
    let home = crate::agent_cli::codex_home(&s, 1);
    // A person trusted those hooks in `/hooks`: Codex records each hash.
    let listed = codex_listed(&exe, &home, s.b.path());
    let ours: Vec<_> = listed.iter().filter(|h| h.1.contains(" hook ")).collect();
    assert_eq!(ours.len(), 3, "{listed:?}");
    let mut config = std::fs::read_to_string(home.join("config.toml")).expect("config");
    for (key, _, hash, _) in &ours {
        config.push_str(&format!(
            "\n[hooks.state.{key:?}]\ntrusted_hash = {hash:?}\n"
        ));
    }
    std::fs::write(home.join("config.toml"), config).expect("write config");
    assert!(
        codex_listed(&exe, &home, s.b.path())
            .iter()
            .filter(|h| h.1.contains(" hook "))
            .all(|h| h.3 == "trusted")
    );
    // The doctor, with codex on its PATH, asks Codex.
    let path = {
        let mut dirs = vec![exe.parent().expect("bin").to_path_buf()];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        std::env::join_paths(dirs).expect("PATH")
    };
    let home_s = home.to_str().expect("utf-8");
    let bsi = |args: &[&str]| {
        let mut cmd = s.command(&bin(), &[("CODEX_HOME", home_s)]);
        cmd.env("PATH", &path).args(args);
        Run::from_output(cmd.output().expect("run bsi"))
    };
    bsi(&["agent", "doctor", "codex"]).stdout_has(
        "ok      trust    the project is trusted, and Codex reports bsi's 3 hooks of .codex/hooks.json trusted (`codex app-server`)",
    );
    // The upgrade: install points the entries at `bsi`.
    bsi(&["agent", "install", "codex"])
        .ok()
        .stdout_has("this install changed 3 of bsi's hooks already in .codex/hooks.json")
        .stdout_has("marks them modified and skips them without a word")
        .stdout_has("open `/hooks` and trust bsi's hooks");
    assert!(
        codex_listed(&exe, &home, s.b.path())
            .iter()
            .filter(|h| h.1.contains(" hook "))
            .all(|h| h.3 == "modified")
    );
    bsi(&["agent", "doctor", "codex"])
        .code(1)
        .stdout_has("MISSING trust    Codex reports 3 of bsi's hooks of .codex/hooks.json modified since they were trusted")
        .stdout_has("next: in `codex` started in");
}

/// With the project's hooks and the user's both in effect, Codex CLI runs
/// the one entry twice (it does not dedupe across files): the second run
/// of the session start answers nothing, so the model gets one briefing;
/// the scenario holds.
#[test]
fn codex_cli_with_project_and_user_hooks_judges_once() {
    let Some(exe) = cli("codex") else { return };
    let s = Setup::new("codex");
    let shell = |c: &str| json!({"tool": "exec_command", "args": {"cmd": c}});
    let (turns, refused) = script(
        &|_| None,
        &|f, old, new| shell(&crate::agent_cli::patch_command(f, old, new)),
        &shell,
        &format!("{} open agents/alice.md", bsi_word()),
    );
    let model = FakeModel::start("openai", &json!(turns), s.work.path());
    let home = crate::agent_cli::codex_home(&s, model.port);
    let home_s = home.to_str().expect("utf-8");
    let mut cmd = s.command(&bin(), &[("CODEX_HOME", home_s)]);
    cmd.args(["agent", "install", "--user", "codex"]);
    Run::from_output(cmd.output().expect("run bsi"))
        .ok()
        .stdout_has(&format!(
            "created {} with bsi's hooks",
            home.join("hooks.json").display()
        ));
    let mut cmd = s.command(&exe, &[("CODEX_HOME", home_s)]);
    let git_dir = s.b.path().join(".git");
    cmd.args([
        "exec",
        "--dangerously-bypass-hook-trust",
        "--sandbox",
        "workspace-write",
        "--add-dir",
        git_dir.to_str().expect("utf-8"),
        "--json",
        "do the work",
    ]);
    let run = run_bounded(cmd);
    check_run(&s, &model, &run, turns.len(), refused);
    // Both entries ran...
    assert_eq!(count(&s, "session-start"), 2, "{:?}", s.events());
    // ...and the model was briefed once.
    let turns = model.turns();
    assert_eq!(
        turns[0].matches("bsi guards this repository").count(),
        1,
        "{}",
        turns[0]
    );
}
