//! bsi's hooks inside the released agent CLIs (Claude Code, Codex CLI,
//! Gemini CLI), driven headless against a scripted model on 127.0.0.1
//! (tests/agents/fake-model.mjs, speaking each tool's model API).
//!
//! The CLIs are npm packages at the versions `.ci/run` pins, installed in
//! `target/agent-clis` (or the prefix `BSI_AGENT_CLIS` names). A test whose
//! CLI is not there says so and passes, unless `BSI_REQUIRE_AGENT_CLIS` is
//! set (CI sets it): then a missing CLI fails.
//!
//! In every brain another session (`sess-other`) holds
//! `projets/plan.md#Goals`; the scripted model edits that section, edits a
//! free one, claims a file from its shell with `bsi open`, edits it, and
//! stops twice. What the model received is read back from the server's log.
//! Two more runs (Claude Code, and Codex in its `workspace-write` sandbox)
//! claim through bsi's MCP server instead of the shell.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::common::{Brain, Run, bin, scratch};

/// The npm prefix the pinned CLIs are installed in.
fn clis_dir() -> PathBuf {
    match std::env::var_os("BSI_AGENT_CLIS").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/agent-clis"),
    }
}

/// The CLI `name` (`claude`, `codex`, `gemini`), or `None` with the reason
/// printed when it is not installed here.
pub(crate) fn cli(name: &str) -> Option<PathBuf> {
    let exe = clis_dir().join("bin").join(name);
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if exe.exists() && node {
        return Some(exe);
    }
    let why = if node {
        format!("{} is not installed", exe.display())
    } else {
        "node is not on PATH".to_string()
    };
    if std::env::var_os("BSI_REQUIRE_AGENT_CLIS").is_some() {
        panic!("{why}: `.ci/run` installs the pinned agent CLIs");
    }
    println!("skipped: {why} (`.ci/run` installs the pinned agent CLIs)");
    None
}

/// The scripted model: a node process serving one API on 127.0.0.1.
pub(crate) struct FakeModel {
    child: Child,
    log: PathBuf,
    pub port: u16,
}

impl FakeModel {
    pub(crate) fn start(api: &str, script: &Value, dir: &Path) -> FakeModel {
        let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/fake-model.mjs");
        let script_path = dir.join("script.json");
        std::fs::write(&script_path, script.to_string()).expect("write script");
        let log = dir.join("requests.jsonl");
        let port_file = dir.join("port");
        let child = Command::new("node")
            .arg(&server)
            .args([
                api.as_ref(),
                script_path.as_os_str(),
                log.as_os_str(),
                port_file.as_os_str(),
            ])
            .stdin(Stdio::null())
            .spawn()
            .expect("start node");
        let deadline = Instant::now() + Duration::from_secs(20);
        let port = loop {
            if let Some(p) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                break p;
            }
            assert!(Instant::now() < deadline, "the fake model did not start");
            std::thread::sleep(Duration::from_millis(20));
        };
        FakeModel { child, log, port }
    }

    /// Every request received, in order.
    pub(crate) fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The requests that were turns of the conversation (offered tools), as
    /// text, in order.
    pub(crate) fn turns(&self) -> Vec<String> {
        self.requests()
            .into_iter()
            .filter(|r| r["turn"].is_number())
            .map(|r| r["body"].to_string())
            .collect()
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A brain where `sess-other` holds `projets/plan.md#Goals`, bsi's hooks
/// for `tool` installed, and a home of its own for the CLI.
pub(crate) struct Setup {
    pub tool: &'static str,
    pub b: Brain,
    pub home: TempDir,
    pub work: TempDir,
}

impl Setup {
    pub(crate) fn new(tool: &'static str) -> Setup {
        let b = Brain::new();
        crate::agent_hook::other_holds(&b, "projets/plan.md#Goals");
        b.bsi(&["agent", "install", tool]).ok();
        Setup {
            tool,
            b,
            home: scratch("bsi-agent-home"),
            work: scratch("bsi-agent-work"),
        }
    }

    /// An absolute path in the brain, as a model would name it.
    pub(crate) fn abs(&self, rel: &str) -> String {
        self.b.path().join(rel).display().to_string()
    }

    /// The CLI's environment: nothing from this machine but `PATH` (with
    /// bsi's directory first), the test's clock, and `extra`.
    pub(crate) fn command(&self, exe: &Path, extra: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(exe);
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.shim()];
        dirs.extend(std::env::split_paths(&path));
        cmd.env_clear()
            .env("PATH", std::env::join_paths(dirs).expect("PATH"))
            .env("HOME", self.home.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("TZ", "UTC")
            .env("LANG", "C")
            .env("USER", "tester")
            .env("BSI_NOW", &self.b.now)
            .env("NO_COLOR", "1")
            .current_dir(self.b.path())
            .stdin(Stdio::null());
        for (k, v) in extra {
            cmd.env(k, v);
        }
        cmd
    }
}

impl Setup {
    /// A directory whose `bsi` keeps each hook event it is given (in
    /// `events/`, named `N-KIND.json`) and runs the real bsi with it.
    fn shim(&self) -> PathBuf {
        let dir = self.work.path().join("shim");
        let events = self.work.path().join("events");
        std::fs::create_dir_all(&events).expect("mkdir");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let script = format!(
            "#!/bin/sh\nif [ \"$1\" = hook ]; then\n  f={events}/$(date +%s%N)-$2.json\n  cat > \"$f\"\n  exec {bsi} \"$@\" < \"$f\"\nfi\nexec {bsi} \"$@\"\n",
            events = events.display(),
            bsi = bin().display()
        );
        let path = dir.join("bsi");
        std::fs::write(&path, script).expect("write shim");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        dir
    }

    /// The hook events the tool sent, in order: (hook kind, event).
    pub(crate) fn events(&self) -> Vec<(String, Value)> {
        let mut names: Vec<PathBuf> = std::fs::read_dir(self.work.path().join("events"))
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        names.sort();
        names
            .into_iter()
            .filter_map(|p| {
                let kind = p.file_stem()?.to_str()?.split_once('-')?.1.to_string();
                let v = serde_json::from_str(&std::fs::read_to_string(&p).ok()?).ok()?;
                Some((kind, v))
            })
            .collect()
    }
}

/// The fixture of tests/fixtures/agents a real event stands for.
fn fixture_of(tool: &str, kind: &str, event: &Value) -> Option<String> {
    // Copilot's camelCase events: `toolName`, `toolArgs`; OpenCode's
    // plugin passes the tool's name in `input.tool`.
    let name = event["tool_name"]
        .as_str()
        .or(event["toolName"].as_str())
        .or(event["input"]["tool"].as_str())
        .unwrap_or("");
    let command = event["tool_input"]["command"].as_str().unwrap_or("");
    // The after-edit events (Gemini CLI's `AfterTool`, Qwen Code's
    // `PostToolUse`) carry the call's result too; bsi reads only their
    // session.
    if event["hook_event_name"] == "AfterTool" || event["hook_event_name"] == "PostToolUse" {
        return None;
    }
    let stem = match (tool, kind, name) {
        (_, "session-start", _) => "sessionstart",
        ("copilot", "stop", _) => "agentstop",
        ("copilot", "edit", "edit") => "pretooluse-edit",
        ("copilot", "edit", "create") => "pretooluse-create",
        ("copilot", "edit", "bash") => "pretooluse-bash",
        ("copilot", "edit", "apply_patch") => "pretooluse-apply-patch",
        ("gemini", "stop", _) => "afteragent",
        (_, "stop", _) => "stop",
        ("claude", "edit", "Edit") => "pretooluse-edit",
        ("claude", "edit", "Write") => "pretooluse-write",
        ("codex", "edit", "Bash") if command.contains("apply_patch") => {
            "pretooluse-bash-apply-patch"
        }
        ("codex", "edit", "Bash") => "pretooluse-bash",
        ("gemini", "edit", "replace") => "beforetool-replace",
        ("gemini", "edit", "write_file") => "beforetool-write-file",
        ("claude", "edit", "Bash") => "pretooluse-bash",
        ("gemini", "edit", "run_shell_command") => "beforetool-run-shell-command",
        ("opencode", "edit", "edit") => "tool-execute-before-edit",
        ("opencode", "edit", "bash") => "tool-execute-before-bash",
        ("opencode", "edit", "write") => "tool-execute-before-write",
        ("kilo", "edit", "edit") => "tool-execute-before-edit",
        ("kilo", "edit", "bash") => "tool-execute-before-bash",
        ("kilo", "edit", "write") => "tool-execute-before-write",
        ("qwen", "edit", "edit") => "pretooluse-edit",
        ("qwen", "edit", "write_file") => "pretooluse-write-file",
        ("qwen", "edit", "run_shell_command") => "pretooluse-run-shell-command",
        _ => return None,
    };
    Some(format!("{tool}-{stem}.json"))
}

/// The top-level keys of an event.
pub(crate) fn shape(v: &Value) -> std::collections::BTreeSet<String> {
    v.as_object()
        .into_iter()
        .flat_map(|o| o.keys().cloned())
        .collect()
}

/// The parameters the CLI declared to the model for its tool `name`
/// (Anthropic `input_schema`, Gemini `functionDeclarations`), from the
/// first turn's request.
pub(crate) fn declared(
    model: &FakeModel,
    name: &str,
) -> Option<std::collections::BTreeSet<String>> {
    let first = model
        .requests()
        .into_iter()
        .find(|r| r["turn"].is_number())?;
    let tools = first["body"]["tools"].as_array()?.clone();
    let decls = tools.iter().flat_map(|t| {
        t["functionDeclarations"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| {
                // Chat Completions: `{"type": "function", "function": {...}}`.
                vec![t.get("function").unwrap_or(t).clone()]
            })
    });
    for d in decls {
        // Chat Completions nests the declaration under `function`.
        let d = if d["function"].is_object() {
            d["function"].clone()
        } else {
            d
        };
        if d["name"] != name {
            continue;
        }
        let schema = [
            &d["input_schema"],
            &d["parametersJsonSchema"],
            &d["parameters"],
        ]
        .into_iter()
        .find(|s| s.is_object())?
        .clone();
        return Some(schema["properties"].as_object()?.keys().cloned().collect());
    }
    None
}

/// The fixtures are copies of what the real tool sends: every event this
/// run captured has the top-level keys of its fixture, no more, no fewer,
/// and the fixture's `tool_input` names only parameters the tool declares
/// to the model today.
pub(crate) fn check_fixtures(tool: &str, s: &Setup, model: &FakeModel) {
    let events = s.events();
    assert!(!events.is_empty(), "no hook event captured");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents");
    let mut compared = 0;
    for (kind, event) in &events {
        let Some(name) = fixture_of(tool, kind, event) else {
            continue;
        };
        let text = std::fs::read_to_string(dir.join(&name)).expect("fixture");
        let fixture: Value = serde_json::from_str(&text).expect("fixture JSON");
        let (real, stored) = (shape(event), shape(&fixture));
        assert_eq!(
            real,
            stored,
            "{name} has drifted from what {tool} sends (real event: {event}): keys only in the real event {:?}, only in the fixture {:?}",
            real.difference(&stored).collect::<Vec<_>>(),
            stored.difference(&real).collect::<Vec<_>>()
        );
        // OpenCode's plugin passes OpenCode's own `input` and `output`:
        // their keys are kept too.
        for part in ["input", "output"] {
            let (real, stored) = (shape(&event[part]), shape(&fixture[part]));
            assert_eq!(
                real, stored,
                "{name}: `{part}` has drifted (real event: {event})"
            );
        }
        if let (Some(tool_name), Some(input)) = (
            event["tool_name"]
                .as_str()
                .or(event["toolName"].as_str())
                .or(event["input"]["tool"].as_str()),
            fixture["tool_input"]
                .as_object()
                .or(fixture["toolArgs"].as_object())
                .or(fixture["output"]["args"].as_object()),
        ) && let Some(params) = declared(model, tool_name)
        {
            let unknown: Vec<&String> = input.keys().filter(|k| !params.contains(*k)).collect();
            assert!(
                unknown.is_empty(),
                "{name}: tool_input keys {unknown:?} are not parameters of {tool_name} as {tool} declares it ({params:?})"
            );
        }
        compared += 1;
    }
    assert!(
        compared >= 3,
        "{tool}: {compared} events compared: {events:?}"
    );
}

/// Runs `cmd` to its end, killed after two minutes.
pub(crate) fn run_bounded(cmd: Command) -> Run {
    run_bounded_within(cmd, Duration::from_secs(120))
}

/// Runs `cmd` to its end, killed after `bound`.
pub(crate) fn run_bounded_within(mut cmd: Command, bound: Duration) -> Run {
    let out_path = tempfile::NamedTempFile::new().expect("tmp");
    let err_path = tempfile::NamedTempFile::new().expect("tmp");
    cmd.stdout(out_path.reopen().expect("reopen"))
        .stderr(err_path.reopen().expect("reopen"));
    let mut child = cmd.spawn().expect("start the CLI");
    let deadline = Instant::now() + bound;
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code().unwrap_or(-1);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break -9;
        }
        std::thread::sleep(Duration::from_millis(25));
    };
    Run {
        code,
        stdout: std::fs::read_to_string(out_path.path()).unwrap_or_default(),
        stderr: std::fs::read_to_string(err_path.path()).unwrap_or_default(),
    }
}

/// The bsi session the session-start context named to the model.
pub(crate) fn briefed_session(turns: &[String]) -> String {
    let first = turns.first().expect("a first turn");
    let at = first
        .find("Your bsi session: ")
        .unwrap_or_else(|| panic!("no session-start context in the first request:\n{first}"));
    first[at + "Your bsi session: ".len()..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect()
}

/// [`check_run`] up to the stop: the briefing, the refusal (file
/// unchanged, the reason in the model's next request), the free edit, the
/// shell's claim as the session's and its edit. Returns the turns and the
/// run's output, for what a tool checks of its stop.
pub(crate) fn check_until_stop(
    s: &Setup,
    model: &FakeModel,
    run: &Run,
    refused_turn: usize,
) -> (Vec<String>, String) {
    let turns = model.turns();
    let ctx = format!(
        "--- CLI stdout\n{}\n--- CLI stderr\n{}",
        run.stdout, run.stderr
    );
    assert_eq!(run.code, 0, "{ctx}");
    assert!(
        turns[0].contains("bsi guards this repository"),
        "the session-start context reaches the model\n{ctx}"
    );
    let session = briefed_session(&turns);
    // Refused before the edit: the model's next request carries the reason.
    let after = &turns[refused_turn + 1];
    assert!(
        after.contains("bsi: refused") && after.contains("sess-other"),
        "the refusal reaches the model: {after}\n{ctx}"
    );
    let plan = s.b.read("projets/plan.md");
    assert!(
        plan.contains("goal text") && !plan.contains("stolen"),
        "{plan}"
    );
    assert!(
        plan.contains("new risk"),
        "the free edit passes: {plan}\n{ctx}"
    );
    // The shell's claim is the hook's session, in the tool's name: its
    // edit passed.
    let alice = s.b.read("agents/alice.md");
    assert!(
        alice.contains("mine now"),
        "own claim edited: {alice}\n{ctx}"
    );
    let active = s.b.active();
    assert!(
        active.iter().any(|r| r.contains("agents/alice.md")
            && r.contains(&session)
            && r.contains(&format!("| {} |", s.tool))),
        "alice.md claimed by {session} as {}: {active:?}",
        s.tool
    );
    (turns, ctx)
}

/// What every tool's run must show: the briefing reached the model, the
/// held section was refused (file unchanged there, the model got bsi's
/// reason), the free edit landed, the shell's `bsi open` is the session's
/// own claim and its next edit passes, and the stop sent the agent back
/// exactly once, even after a further tool call.
pub(crate) fn check_run(
    s: &Setup,
    model: &FakeModel,
    run: &Run,
    script_len: usize,
    refused_turn: usize,
) {
    let (turns, ctx) = check_until_stop(s, model, run, refused_turn);
    // Sent back once: the reason is in the conversation exactly once, and
    // the CLI asked for no turn beyond the script.
    let last = turns.last().expect("turns");
    assert_eq!(
        last.matches("still holds").count(),
        1,
        "sent back exactly once: {last}\n{ctx}"
    );
    assert_eq!(turns.len(), script_len, "turns: {turns:#?}\n{ctx}");
    check_fixtures(s.tool, s, model);
}

/// The script every tool plays, in its own tool names: `read` a file
/// (when the tool needs it before an edit), `edit` (file, old, new),
/// `shell` (command).
pub(crate) fn script(
    read: &dyn Fn(&str) -> Option<Value>,
    edit: &dyn Fn(&str, &str, &str) -> Value,
    shell: &dyn Fn(&str) -> Value,
    open_alice: &str,
) -> (Vec<Value>, usize) {
    let mut turns = Vec::new();
    turns.extend(read("projets/plan.md"));
    let refused = turns.len();
    turns.push(edit("projets/plan.md", "goal text", "stolen goal"));
    turns.push(edit("projets/plan.md", "risk text", "new risk"));
    turns.push(shell(open_alice));
    turns.extend(read("agents/alice.md"));
    turns.push(edit("agents/alice.md", "notes", "mine now"));
    turns.push(json!({"text": "done"}));
    turns.push(shell("echo one more"));
    turns.push(json!({"text": "done, keeping the claim on purpose"}));
    (turns, refused)
}

pub(crate) fn bsi_word() -> String {
    bin().display().to_string()
}

#[test]
fn claude_code() {
    let Some(exe) = cli("claude") else { return };
    let s = Setup::new("claude");
    let (turns, refused) = script(
        &|f| Some(json!({"tool": "Read", "args": {"file_path": s.abs(f)}})),
        &|f, old, new| json!({"tool": "Edit", "args": {"file_path": s.abs(f), "old_string": old, "new_string": new}}),
        &|c| json!({"tool": "Bash", "args": {"command": c, "description": "run"}}),
        &format!("{} open agents/alice.md", bsi_word()),
    );
    let (model, run) = run_claude_allowing(&s, &exe, &json!(turns), "Bash");
    check_run(&s, &model, &run, turns.len(), refused);
}

/// Codex's configuration in a `CODEX_HOME` of its own: the scripted model
/// as a Responses API provider, and the brain a trusted project.
pub(crate) fn codex_home(s: &Setup, port: u16) -> PathBuf {
    let home = s.home.path().join("codex");
    std::fs::create_dir_all(&home).expect("mkdir");
    let config = format!(
        "model = \"gpt-5.1-codex\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nwire_api = \"responses\"\n\n[projects.{:?}]\ntrust_level = \"trusted\"\n",
        s.b.path().display().to_string()
    );
    std::fs::write(home.join("config.toml"), config).expect("write config");
    home
}

/// An `apply_patch` heredoc replacing `old` by `new` in `file`, as a
/// model sends it through Codex's shell tool.
pub(crate) fn patch_command(file: &str, old: &str, new: &str) -> String {
    format!(
        "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: {file}\n@@\n-{old}\n+{new}\n*** End Patch\nPATCH"
    )
}

#[test]
fn codex_cli() {
    let Some(exe) = cli("codex") else { return };
    let s = Setup::new("codex");
    let shell = |c: &str| json!({"tool": "exec_command", "args": {"cmd": c}});
    let (turns, refused) = script(
        &|_| None,
        &|f, old, new| shell(&patch_command(f, old, new)),
        &shell,
        // Codex's sandbox runs the shell where the Codex process is not
        // among its ancestors: bsi finds the session by the thread id Codex
        // sets in the shell; the agent names nothing.
        &format!("{} open agents/alice.md", bsi_word()),
    );
    let model = FakeModel::start("openai", &json!(turns), s.work.path());
    let home = codex_home(&s, model.port);
    let mut cmd = s.command(&exe, &[("CODEX_HOME", home.to_str().expect("utf-8"))]);
    // In the sandbox Codex gives a trusted project, with the git directory
    // added as a writable root (as `bsi agent install codex` says): the
    // agent's own `bsi open` can record its claim.
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
    // The doctor sees what Codex recorded: the project trusted, the hooks
    // reached, and their trust missing (this run bypassed it).
    let mut doctor = s.command(&bin(), &[("CODEX_HOME", home.to_str().expect("utf-8"))]);
    doctor.args(["agent", "doctor", "codex"]);
    let d = Run::from_output(doctor.output().expect("run doctor"));
    d.code(1)
        .stdout_has("ok      hooks")
        .stdout_has("ok      program")
        .stdout_has(
            "MISSING trust    the project is trusted; 0 of .codex/hooks.json's hooks trusted",
        )
        .stdout_has("open `/hooks`")
        .stdout_has(
            "ok      mcp      bsi's MCP server (`bsi mcp`) is registered in .codex/config.toml",
        )
        .stdout_has("ok      reached");
}

/// A hook that cannot run bsi says so to the person, in the tool's own
/// protocol, and lets the edit through.
#[test]
fn claude_code_without_bsi_on_path_warns_and_lets_edits_through() {
    let Some(exe) = cli("claude") else { return };
    let s = Setup::new("claude");
    let turns = json!([
        {"tool": "Read", "args": {"file_path": s.abs("agents/alice.md")}},
        {"tool": "Edit", "args": {"file_path": s.abs("agents/alice.md"), "old_string": "notes", "new_string": "unchecked"}},
        {"text": "done"},
    ]);
    let model = FakeModel::start("anthropic", &turns, s.work.path());
    let url = format!("http://127.0.0.1:{}", model.port);
    let mut cmd = s.command(
        &exe,
        &[
            ("ANTHROPIC_BASE_URL", &url),
            ("ANTHROPIC_API_KEY", "sk-test"),
        ],
    );
    cmd.env("PATH", path_without_bsi());
    cmd.args([
        "-p",
        "do the work",
        "--permission-mode",
        "acceptEdits",
        "--output-format",
        "stream-json",
        "--verbose",
    ]);
    let run = run_bounded(cmd);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(
            "the hook could not run bsi (is it on the PATH Claude Code runs hooks with?)"
        ),
        "{}",
        run.stdout
    );
    assert!(s.b.read("agents/alice.md").contains("unchecked"));
}

#[test]
fn gemini_cli() {
    let Some(exe) = cli("gemini") else { return };
    let s = Setup::new("gemini");
    let (turns, refused) = script(
        &|_| None,
        &|f, old, new| json!({"tool": "replace", "args": {"file_path": s.abs(f), "old_string": old, "new_string": new, "instruction": "edit"}}),
        &|c| json!({"tool": "run_shell_command", "args": {"command": c}}),
        // No `--session`: bsi finds the Gemini session its hooks know.
        &format!("{} open agents/alice.md", bsi_word()),
    );
    let (model, run) = run_gemini(&s, &exe, &json!(turns), None);
    check_run(&s, &model, &run, turns.len(), refused);
    // Recorded as the tool, as the hooks' own claims are.
    let active = s.b.active();
    assert!(
        active
            .iter()
            .any(|r| r.contains("agents/alice.md") && r.contains("| gemini |")),
        "{active:?}"
    );
}

/// Gemini's user settings: an API key as the auth method, the brain a
/// trusted folder.
pub(crate) fn gemini_home(s: &Setup) {
    let dir = s.home.path().join(".gemini");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("settings.json"),
        json!({"security": {"auth": {"selectedType": "gemini-api-key"}}}).to_string(),
    )
    .expect("write settings");
    std::fs::write(
        dir.join("trustedFolders.json"),
        json!({ s.b.path().display().to_string(): "TRUST_FOLDER" }).to_string(),
    )
    .expect("write trust");
}

/// What claim on the first write shows in every tool, the section `Risks`
/// edited: the model's request after the edit (`after`) names the claim
/// for the agent's session, the edit landed, the row is the session's in
/// the tool's name, and the stop hook sends the agent back about it.
pub(crate) fn check_claimed_on_write(s: &Setup, turns: &[String], after: &str, ctx: &str) {
    check_claim_told(s, turns, after, ctx);
    let last = turns.last().expect("turns");
    assert!(last.contains("still holds projets/plan.md#Risks"), "{ctx}");
}

/// The claim on the first write reached the model (`after`, the turn after
/// the edit), naming the briefed session; the edit was made; the
/// claim is recorded as the tool's.
pub(crate) fn check_claim_told(s: &Setup, turns: &[String], after: &str, ctx: &str) {
    let session = briefed_session(turns);
    assert!(
        after.contains("bsi claimed projets/plan.md#Risks") && after.contains(&session),
        "the claim reaches the model: {after}\n{ctx}"
    );
    assert!(s.b.read("projets/plan.md").contains("new risk"), "{ctx}");
    let active = s.b.active();
    assert!(
        active.iter().any(|r| r.contains("projets/plan.md#Risks")
            && r.contains(&session)
            && r.contains(&format!("| {} |", s.tool))),
        "{active:?}"
    );
}

/// With `claim_on_write`, a free edit in Gemini CLI is claimed for the
/// agent's session, and the model is told — after the edit, the only
/// channel Gemini gives a hook to the model when it lets a tool run.
#[test]
fn gemini_cli_claim_on_write_tells_the_model() {
    let Some(exe) = cli("gemini") else { return };
    let s = Setup::new("gemini");
    s.b.write(".bsi.toml", "claim_on_write = true\n");
    let turns = json!([
        {"tool": "replace", "args": {"file_path": s.abs("projets/plan.md"), "old_string": "risk text", "new_string": "new risk", "instruction": "edit"}},
        {"text": "done"},
    ]);
    let (model, run) = run_gemini(&s, &exe, &turns, None);
    assert_eq!(run.code, 0, "{run:?}");
    let turns = model.turns();
    check_claimed_on_write(&s, &turns, &turns[1], &format!("{run:?}"));
    // Told once.
    let last = turns.last().expect("turns");
    assert_eq!(last.matches("bsi claimed").count(), 1, "{last}");
}

/// Issue 23 in Claude Code: with `bsi agent install claude` (which registers
/// `bsi mcp` in `.mcp.json`) in a brain with a bare remote, the model claims
/// a free section through the MCP tool `claim`, edits inside it, and is
/// refused the held section with its holder and the calls that can follow.
#[test]
fn claude_code_claims_through_mcp() {
    let Some(exe) = cli("claude") else { return };
    let s = Setup::new("claude");
    let bare = s.b.publish_to_bare();
    // Headless, Claude Code starts a project's `.mcp.json` servers once the
    // person approved them: here, in the project's local settings.
    s.b.write(
        ".claude/settings.local.json",
        &json!({"enableAllProjectMcpServers": true}).to_string(),
    );
    let plan = s.abs("projets/plan.md");
    let turns = json!([
        {"tool": "Read", "args": {"file_path": plan}},
        {"tool": "mcp__bsi__claim", "args": {"scopes": ["projets/plan.md#Risks"], "note": "risks"}},
        {"tool": "Edit", "args": {"file_path": plan, "old_string": "risk text", "new_string": "new risk"}},
        {"tool": "mcp__bsi__claim", "args": {"scopes": ["projets/plan.md#Goals", "agents/bob.md"]}},
        {"text": "done"},
        {"text": "done, keeping the claim on purpose"},
    ]);
    let (model, run) = run_claude_allowing(&s, &exe, &turns, "mcp__bsi__claim");
    let turns = model.turns();
    let ctx = format!(
        "--- CLI stdout\n{}\n--- CLI stderr\n{}\n--- turns\n{turns:#?}",
        run.stdout, run.stderr
    );
    assert_eq!(run.code, 0, "{ctx}");
    let session = briefed_session(&turns);
    // The server's tools were offered to the model under Claude Code's names.
    assert!(
        declared(&model, "mcp__bsi__claim").is_some_and(|p| p.contains("scopes")),
        "{ctx}"
    );
    // The free claim: granted to the agent's own session.
    let granted = &last_message(&turns[2]);
    assert!(
        granted.contains("projets/plan.md#Risks") && granted.contains(&session),
        "the grant reaches the model: {granted}\n{ctx}"
    );
    // The edit inside it passed the edit hook.
    let text = s.b.read("projets/plan.md");
    assert!(text.contains("new risk"), "{text}\n{ctx}");
    assert!(text.contains("goal text"), "{text}");
    // The held section: refused, all or nothing, with the holder, its expiry
    // and the calls that can follow (the free part alone, or a wait).
    let refused = &last_message(&turns[4]);
    assert!(
        refused.contains("Claim refused")
            && refused.contains("is held by session sess-other (agent bob")
            && refused.contains("until 2026-03-14 11:30 +00:00")
            && refused.contains(r#"{\"scopes\":[\"agents/bob.md\"]}"#)
            && refused.contains(r#"\"wait\":600"#),
        "the refusal reaches the model: {refused}\n{ctx}"
    );
    // The registry, here and on the remote: Risks is the agent's session's,
    // Goals still sess-other's.
    let active = s.b.active();
    assert!(
        active
            .iter()
            .any(|r| r.contains("projets/plan.md#Risks") && r.contains(&session)),
        "{active:?}"
    );
    assert!(
        active
            .iter()
            .any(|r| r.contains("projets/plan.md#Goals") && r.contains("sess-other")),
        "{active:?}"
    );
    assert!(
        !active.iter().any(|r| r.contains("agents/bob.md")
            || (r.contains("projets/plan.md#Goals") && r.contains(&session))),
        "nothing of the refused claim was written: {active:?}"
    );
    let remote = Command::new("git")
        .arg("--git-dir")
        .arg(bare.path())
        .args(["log", "--format=%s", "brain-index"])
        .output()
        .expect("git log");
    let log = String::from_utf8_lossy(&remote.stdout);
    assert!(
        log.lines()
            .next()
            .is_some_and(|l| l.contains("projets/plan.md#Risks") && l.contains(&session)),
        "the claim is the remote registry's last commit: {log}"
    );
    // The user's branch: untouched by the claims.
    let main = s.b.git(&["log", "--format=%s", "main"]);
    assert!(!main.contains(&session), "{main}");
}

/// The last message of a turn's request (what the model just received).
pub(crate) fn last_message(turn: &str) -> String {
    let body: Value = serde_json::from_str(turn).unwrap_or(Value::Null);
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// The names of the tools the CLI offered the model in its first turn.
fn offered(model: &FakeModel) -> Vec<String> {
    let Some(first) = model.requests().into_iter().find(|r| r["turn"].is_number()) else {
        return Vec::new();
    };
    first["body"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// Issue 23 in Codex CLI's `workspace-write` sandbox, where the shell cannot
/// write `.git` and so cannot claim: the MCP server Codex starts from
/// `[mcp_servers.bsi]` runs outside the sandbox, and the model claims,
/// edits and is refused through it.
#[test]
fn codex_cli_claims_through_mcp_in_the_sandbox() {
    let Some(exe) = cli("codex") else { return };
    let s = Setup::new("codex");
    let bare = s.b.publish_to_bare();
    let shell = |c: &str| json!({"tool": "exec_command", "args": {"cmd": c}});
    let claim = |scopes: Value| json!({"tool": "claim", "namespace": "mcp__bsi", "args": {"scopes": scopes}});
    let turns = json!([
        shell(&format!("{} open agents/alice.md --session {{{{session}}}}", bsi_word())),
        claim(json!(["projets/plan.md#Risks"])),
        shell(&patch_command("projets/plan.md", "risk text", "new risk")),
        claim(json!(["projets/plan.md#Goals", "agents/bob.md"])),
        {"text": "done"},
        {"text": "done, keeping the claim on purpose"},
    ]);
    let model = FakeModel::start("openai", &turns, s.work.path());
    let home = codex_home(&s, model.port);
    let mut cmd = s.command(&exe, &[("CODEX_HOME", home.to_str().expect("utf-8"))]);
    cmd.args([
        "exec",
        "--dangerously-bypass-hook-trust",
        "--sandbox",
        "workspace-write",
        // Headless, nobody is asked: the person approved bsi's tools.
        "-c",
        "mcp_servers.bsi.default_tools_approval_mode=\"approve\"",
        "--json",
        "do the work",
    ]);
    let run = run_bounded(cmd);
    let turns = model.turns();
    let ctx = format!(
        "--- CLI stdout\n{}\n--- CLI stderr\n{}\n--- offered {:?}",
        run.stdout,
        run.stderr,
        offered(&model)
    );
    assert_eq!(run.code, 0, "{ctx}");
    let session = briefed_session(&turns);
    let last = |i: usize| {
        let body: Value = serde_json::from_str(&turns[i]).unwrap_or(Value::Null);
        body["input"]
            .as_array()
            .and_then(|m| m.last())
            .map(|m| m["output"].as_str().map_or(m.to_string(), str::to_string))
            .unwrap_or_default()
    };
    // The shell's `bsi open` fails in the sandbox: nothing claimed.
    let shell_open = last(1);
    assert!(
        shell_open.contains("Read-only file system"),
        "the sandbox stops the shell's claim: {shell_open}\n{ctx}"
    );
    // The failure names the ways out, not a retry that fails again.
    assert!(
        shell_open.contains("running the same command again fails the same way")
            && shell_open.contains("MCP tool `claim`")
            && shell_open.contains("`--add-dir`")
            && !shell_open.contains("then run the same command again"),
        "the ways out reach the model: {shell_open}\n{ctx}"
    );
    // The command it names, run as printed in the brain, prints the
    // directory to add.
    let named = "git rev-parse --path-format=absolute --git-common-dir";
    assert!(shell_open.contains(&format!("`{named}`")), "{shell_open}");
    let printed = Command::new("sh")
        .args(["-c", named])
        .current_dir(s.b.path())
        .output()
        .expect("run it");
    assert_eq!(
        std::fs::canonicalize(String::from_utf8_lossy(&printed.stdout).trim()).ok(),
        std::fs::canonicalize(s.b.path().join(".git")).ok()
    );
    assert!(
        !s.b.active().iter().any(|r| r.contains("agents/alice.md")),
        "{:?}\n{ctx}",
        s.b.active()
    );
    // The MCP claim is granted to the agent's session.
    let granted = last(2);
    assert!(
        granted.contains("projets/plan.md#Risks") && granted.contains(&session),
        "the grant reaches the model: {granted}\n{ctx}"
    );
    let text = s.b.read("projets/plan.md");
    assert!(
        text.contains("new risk") && text.contains("goal text"),
        "{text}\n{ctx}"
    );
    let refused = last(4);
    assert!(
        refused.contains(r#""error":"conflict""#)
            && refused.contains(r#""session":"sess-other""#)
            && refused.contains(r#""agent":"bob""#)
            && refused.contains(r#""free_in_request":["agents/bob.md"]"#)
            // bsi's MCP server runs on the real clock, by which the
            // holder's claim (opened at the brain's fixed time) ran out long
            // ago: overdue, not waited for, and the model is told so.
            && !refused.contains(r#""wait":600"#)
            && refused.contains("the claim of sess-other is overdue"),
        "the refusal reaches the model: {refused}\n{ctx}"
    );
    let active = s.b.active();
    assert!(
        active
            .iter()
            .any(|r| r.contains("projets/plan.md#Risks") && r.contains(&session)),
        "{active:?}"
    );
    assert!(
        !active.iter().any(|r| r.contains("agents/bob.md")
            || (r.contains("projets/plan.md#Goals") && r.contains(&session))),
        "{active:?}"
    );
    let remote = Command::new("git")
        .arg("--git-dir")
        .arg(bare.path())
        .args(["log", "--format=%s", "brain-index"])
        .output()
        .expect("git log");
    let log = String::from_utf8_lossy(&remote.stdout);
    assert!(
        log.lines()
            .next()
            .is_some_and(|l| l.contains("projets/plan.md#Risks") && l.contains(&session)),
        "{log}"
    );
}

/// Claude Code run headless on `turns` (stream-json output), the scripted
/// model's requests and the run. `more_args`: more arguments to the CLI.
pub(crate) fn run_claude(
    s: &Setup,
    exe: &Path,
    turns: &Value,
    more_args: &[&str],
) -> (FakeModel, Run) {
    let model = FakeModel::start("anthropic", turns, s.work.path());
    let url = format!("http://127.0.0.1:{}", model.port);
    let mut cmd = s.command(
        exe,
        &[
            ("ANTHROPIC_BASE_URL", &url),
            ("ANTHROPIC_API_KEY", "sk-test"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ],
    );
    cmd.args([
        "-p",
        "do the work",
        "--permission-mode",
        "acceptEdits",
        "--output-format",
        "stream-json",
        "--verbose",
    ]);
    cmd.args(more_args);
    let run = run_bounded(cmd);
    (model, run)
}

/// Claude Code run headless on `turns` with the tool `allowed` allowed
/// (JSON output), the scripted model's requests and the run.
pub(crate) fn run_claude_allowing(
    s: &Setup,
    exe: &Path,
    turns: &Value,
    allowed: &str,
) -> (FakeModel, Run) {
    let model = FakeModel::start("anthropic", turns, s.work.path());
    let url = format!("http://127.0.0.1:{}", model.port);
    let mut cmd = s.command(
        exe,
        &[
            ("ANTHROPIC_BASE_URL", &url),
            ("ANTHROPIC_API_KEY", "sk-test"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ],
    );
    cmd.args([
        "-p",
        "do the work",
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        allowed,
        "--output-format",
        "json",
    ]);
    let run = run_bounded(cmd);
    (model, run)
}

/// With `claim_on_write`, a free edit in Claude Code is claimed for the
/// agent's session, recorded as agent `claude`, and the model's next
/// request carries bsi's words about the claim (`additionalContext`).
#[test]
fn claude_code_claim_on_write_tells_the_model() {
    let Some(exe) = cli("claude") else { return };
    let s = Setup::new("claude");
    s.b.write(".bsi.toml", "claim_on_write = true\n");
    let plan = s.abs("projets/plan.md");
    let turns = json!([
        {"tool": "Read", "args": {"file_path": plan}},
        {"tool": "Edit", "args": {"file_path": plan, "old_string": "risk text", "new_string": "new risk"}},
        {"text": "done"},
        {"text": "done, keeping the claim on purpose"},
    ]);
    let (model, run) = run_claude(&s, &exe, &turns, &[]);
    let turns = model.turns();
    let ctx = format!("{run:?}\n--- turns\n{turns:#?}");
    assert_eq!(run.code, 0, "{ctx}");
    check_claimed_on_write(&s, &turns, &last_message(&turns[2]), &ctx);
    // Told once.
    let last = turns.last().expect("turns");
    assert_eq!(last.matches("bsi claimed").count(), 1, "{last}");
}

/// With `claim_on_write`, a free patch in Codex CLI (sent through its
/// shell, in the sandbox) is claimed for the agent's session by the hook,
/// which runs outside the sandbox, recorded as agent `codex`, and the
/// model's next request carries bsi's words about the claim.
#[test]
fn codex_cli_claim_on_write_tells_the_model() {
    let Some(exe) = cli("codex") else { return };
    let s = Setup::new("codex");
    s.b.write(".bsi.toml", "claim_on_write = true\n");
    let turns = json!([
        {"tool": "exec_command", "args": {"cmd": patch_command("projets/plan.md", "risk text", "new risk")}},
        {"text": "done"},
        {"text": "done, keeping the claim on purpose"},
    ]);
    let (model, run) = run_codex(&s, &exe, &turns, None);
    let turns = model.turns();
    let ctx = format!("{run:?}\n--- turns\n{turns:#?}");
    assert_eq!(run.code, 0, "{ctx}");
    check_claimed_on_write(&s, &turns, &turns[1], &ctx);
}

/// With `claim_on_write` and a remote that never answers, Claude Code's
/// edit goes on within the hook's bound, the claim holds on this machine,
/// and the model is told it is not published and to run `bsi sync`.
#[test]
fn claude_code_claim_on_write_with_a_silent_remote_tells_the_model_to_sync() {
    let Some(exe) = cli("claude") else { return };
    let s = Setup::new("claude");
    let server = crate::truth::Silent::start();
    s.b.git(&[
        "remote",
        "add",
        "origin",
        &format!("git://127.0.0.1:{}/brain.git", server.port),
    ]);
    s.b.write(
        ".bsi.toml",
        "claim_on_write = true\nconnection_timeout = \"60s\"\n",
    );
    let plan = s.abs("projets/plan.md");
    let turns = json!([
        {"tool": "Read", "args": {"file_path": plan}},
        {"tool": "Edit", "args": {"file_path": plan, "old_string": "risk text", "new_string": "new risk"}},
        {"text": "done"},
        {"text": "done, keeping the claim on purpose"},
    ]);
    let (model, run) = run_claude(&s, &exe, &turns, &[]);
    let turns = model.turns();
    let ctx = format!("{run:?}\n--- turns\n{turns:#?}");
    assert_eq!(run.code, 0, "{ctx}");
    let after = last_message(&turns[2]);
    assert!(
        after.contains("bsi claimed projets/plan.md#Risks")
            && after.contains("NOT PUBLISHED")
            && after.contains("Run `bsi sync` once the remote is back"),
        "the model is told to sync: {after}\n{ctx}"
    );
    assert!(s.b.read("projets/plan.md").contains("new risk"));
    let active = s.b.active();
    assert!(
        active
            .iter()
            .any(|r| r.contains("projets/plan.md#Risks") && r.contains("| claude |")),
        "held on this machine: {active:?}"
    );
}

/// This `PATH` without any directory that holds a bsi.
pub(crate) fn path_without_bsi() -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| !d.join("bsi").exists())
        .collect();
    std::env::join_paths(dirs).expect("PATH")
}

/// Gemini CLI run headless on `turns` (`--yolo`, JSON output); `path`
/// replaces the `PATH` it runs with.
pub(crate) fn run_gemini(
    s: &Setup,
    exe: &Path,
    turns: &Value,
    path: Option<std::ffi::OsString>,
) -> (FakeModel, Run) {
    let model = FakeModel::start("gemini", turns, s.work.path());
    let url = format!("http://127.0.0.1:{}", model.port);
    gemini_home(s);
    let mut cmd = s.command(
        exe,
        &[("GEMINI_API_KEY", "test"), ("GOOGLE_GEMINI_BASE_URL", &url)],
    );
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    cmd.args([
        "-p",
        "do the work",
        "--yolo",
        "-m",
        "gemini-2.5-flash",
        "-o",
        "json",
    ]);
    let run = run_bounded(cmd);
    (model, run)
}

/// `codex exec` run headless on `turns`, with its human output (what a
/// person running it sees), in the `workspace-write` sandbox with the git
/// directory added; `path` replaces the `PATH` it runs with.
fn run_codex(
    s: &Setup,
    exe: &Path,
    turns: &Value,
    path: Option<std::ffi::OsString>,
) -> (FakeModel, Run) {
    let model = FakeModel::start("openai", turns, s.work.path());
    let home = codex_home(s, model.port);
    let mut cmd = s.command(exe, &[("CODEX_HOME", home.to_str().expect("utf-8"))]);
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    let git_dir = s.b.path().join(".git");
    cmd.args([
        "exec",
        "--dangerously-bypass-hook-trust",
        "--sandbox",
        "workspace-write",
        "--add-dir",
        git_dir.to_str().expect("utf-8"),
        "do the work",
    ]);
    let run = run_bounded(cmd);
    (model, run)
}

/// What warn mode says about an edit inside `sess-other`'s `#Goals`.
const WARNING: &str = "bsi: warning: projets/plan.md line 7 under `Goals` is inside an active claim of session sess-other (agent bob, scope projets/plan.md#Goals";

/// Warn mode (`git config bsi.hookMode warn`) in Claude Code: the edit
/// inside another session's section passes, and bsi's warning, with one
/// `bsi:`, reaches the person (the hook's `systemMessage`: on screen, and
/// in a headless run's stream with `--include-hook-events`) and the model
/// (`additionalContext`, in its next request).
#[test]
fn claude_code_warn_mode_reaches_the_person_and_the_model() {
    let Some(exe) = cli("claude") else { return };
    let s = Setup::new("claude");
    s.b.git(&["config", "bsi.hookMode", "warn"]);
    let plan = s.abs("projets/plan.md");
    let turns = json!([
        {"tool": "Read", "args": {"file_path": plan}},
        {"tool": "Edit", "args": {"file_path": plan, "old_string": "goal text", "new_string": "stolen goal"}},
        {"text": "done"},
    ]);
    let (model, run) = run_claude(&s, &exe, &turns, &["--include-hook-events"]);
    let turns = model.turns();
    let ctx = format!("{run:?}\n--- turns\n{turns:#?}");
    assert_eq!(run.code, 0, "{ctx}");
    assert!(s.b.read("projets/plan.md").contains("stolen goal"), "{ctx}");
    // The person: the edit hook's answer in the stream.
    let shown: Vec<String> = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["subtype"] == "hook_response" && e["hook_name"] == "PreToolUse:Edit")
        .filter_map(|e| {
            let out: Value = serde_json::from_str(e["stdout"].as_str()?).ok()?;
            out["systemMessage"].as_str().map(str::to_string)
        })
        .collect();
    assert_eq!(shown.len(), 1, "{}", run.stdout);
    assert!(shown[0].starts_with(WARNING), "{shown:?}");
    assert_eq!(shown[0].lines().count(), 1, "one line: {shown:?}");
    // The model.
    let after = last_message(&turns[2]);
    assert!(after.contains(WARNING), "{after}\n{ctx}");
    assert!(!run.stdout.contains("bsi: bsi:") && !after.contains("bsi: bsi:"));
}

/// Warn mode in Gemini CLI: the edit passes; the warning reaches the person
/// on stderr ("Hook system message: bsi: warning: …") and the model after
/// the edit (`AfterTool`, as claim-on-write's message does).
#[test]
fn gemini_cli_warn_mode_reaches_the_person_and_the_model() {
    let Some(exe) = cli("gemini") else { return };
    let s = Setup::new("gemini");
    s.b.git(&["config", "bsi.hookMode", "warn"]);
    let turns = json!([
        {"tool": "replace", "args": {"file_path": s.abs("projets/plan.md"), "old_string": "goal text", "new_string": "stolen goal", "instruction": "edit"}},
        {"text": "done"},
    ]);
    let (model, run) = run_gemini(&s, &exe, &turns, None);
    let turns = model.turns();
    let ctx = format!("{run:?}\n--- turns\n{turns:#?}");
    assert_eq!(run.code, 0, "{ctx}");
    assert!(s.b.read("projets/plan.md").contains("stolen goal"), "{ctx}");
    assert!(
        run.stderr
            .contains(&format!("Hook system message: {WARNING}")),
        "{ctx}"
    );
    assert!(turns[1].contains(WARNING), "{ctx}");
    assert!(!run.stderr.contains("bsi: bsi:") && !turns[1].contains("bsi: bsi:"));
}

/// Warn mode in Codex CLI: the edit passes and the model gets the warning
/// (`additionalContext`, as a developer message of its next request);
/// `codex exec` shows the person only "hook: PreToolUse Completed", not
/// the hook's `systemMessage` (Codex keeps it as a warning entry of the
/// hook's run, which its exec output does not print).
#[test]
fn codex_cli_warn_mode_reaches_the_model_not_the_exec_output() {
    let Some(exe) = cli("codex") else { return };
    let s = Setup::new("codex");
    s.b.git(&["config", "bsi.hookMode", "warn"]);
    let turns = json!([
        {"tool": "exec_command", "args": {"cmd": patch_command("projets/plan.md", "goal text", "stolen goal")}},
        {"text": "done"},
    ]);
    let (model, run) = run_codex(&s, &exe, &turns, None);
    let turns = model.turns();
    let ctx = format!("{run:?}\n--- turns\n{turns:#?}");
    assert_eq!(run.code, 0, "{ctx}");
    assert!(s.b.read("projets/plan.md").contains("stolen goal"), "{ctx}");
    assert!(turns[1].contains(WARNING), "{ctx}");
    assert!(!turns[1].contains("bsi: bsi:"), "{ctx}");
    // What Codex does with it today: not printed.
    assert!(run.stderr.contains("hook: PreToolUse Completed"), "{ctx}");
    assert!(
        !run.stderr.contains("bsi: warning") && !run.stdout.contains("bsi: warning"),
        "Codex now shows the warning to the person: say so in docs/agent-tools.md\n{ctx}"
    );
}

/// A hook that cannot run bsi in Gemini CLI: the person is told on stderr,
/// in the tool's protocol, and the edit goes through.
#[test]
fn gemini_cli_without_bsi_on_path_warns_and_lets_edits_through() {
    let Some(exe) = cli("gemini") else { return };
    let s = Setup::new("gemini");
    let turns = json!([
        {"tool": "replace", "args": {"file_path": s.abs("agents/alice.md"), "old_string": "notes", "new_string": "unchecked", "instruction": "edit"}},
        {"text": "done"},
    ]);
    let (_model, run) = run_gemini(&s, &exe, &turns, Some(path_without_bsi()));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("Hook system message: bsi: the hook could not run bsi (is it on the PATH Gemini CLI runs hooks with?); this edit goes through unchecked."),
        "{run:?}"
    );
    assert!(s.b.read("agents/alice.md").contains("unchecked"));
}

/// A hook that cannot run bsi in Codex CLI: the edit goes through; `codex
/// exec` prints only "hook: PreToolUse Completed" (it shows the person no
/// `systemMessage`), but the model is told, through `additionalContext`,
/// and can tell the person. `bsi agent doctor codex` finds it too.
#[test]
fn codex_cli_without_bsi_on_path_lets_edits_through_and_tells_the_model() {
    let Some(exe) = cli("codex") else { return };
    let s = Setup::new("codex");
    let turns = json!([
        {"tool": "exec_command", "args": {"cmd": patch_command("agents/alice.md", "notes", "unchecked")}},
        {"text": "done"},
    ]);
    let (model, run) = run_codex(&s, &exe, &turns, Some(path_without_bsi()));
    let turns = model.turns();
    let ctx = format!("{run:?}\n--- turns\n{turns:#?}");
    assert_eq!(run.code, 0, "{ctx}");
    assert!(s.b.read("agents/alice.md").contains("unchecked"), "{ctx}");
    assert!(run.stderr.contains("hook: PreToolUse Completed"), "{ctx}");
    assert!(
        turns[0].contains("the hook could not run bsi (is it on the PATH Codex CLI runs hooks with?); the session starts without its briefing"),
        "the session-start fallback reaches the model\n{ctx}"
    );
    assert!(
        turns[1].contains("the hook could not run bsi (is it on the PATH Codex CLI runs hooks with?); this edit goes through unchecked"),
        "the edit fallback reaches the model\n{ctx}"
    );
}

/// Files written through the shell tool are judged like edits: a
/// here-document rewriting the held section is refused before it runs
/// (file unchanged, the model gets bsi's reason), and an append to a free
/// file runs. `shell` is the tool's shell call for a command.
pub(crate) fn shell_writes_script(shell: &dyn Fn(&str) -> Value) -> Vec<Value> {
    let stolen = crate::agent_hook::PLAN.replace("goal text", "stolen goal");
    vec![
        shell(&format!("cat > projets/plan.md <<'EOF'\n{stolen}EOF")),
        shell("echo free line >> agents/free.md"),
        json!({"text": "done"}),
    ]
}

pub(crate) fn check_shell_writes(s: &Setup, model: &FakeModel, run: &Run, script_len: usize) {
    let turns = model.turns();
    let ctx = format!(
        "--- CLI stdout\n{}\n--- CLI stderr\n{}\n--- turns\n{turns:#?}",
        run.stdout, run.stderr
    );
    assert_eq!(run.code, 0, "{ctx}");
    let after = &turns[1];
    assert!(
        after.contains("bsi: refused: projets/plan.md line 7 under `Goals` is inside an active claim of session sess-other"),
        "the refusal reaches the model: {after}\n{ctx}"
    );
    assert_eq!(
        s.b.read("projets/plan.md"),
        crate::agent_hook::PLAN,
        "the held file is unchanged\n{ctx}"
    );
    assert_eq!(
        s.b.read("agents/free.md"),
        "free line\n",
        "the free write ran\n{ctx}"
    );
    assert_eq!(turns.len(), script_len, "{ctx}");
    check_fixtures(s.tool, s, model);
}

#[test]
fn claude_code_judges_what_its_shell_writes() {
    let Some(exe) = cli("claude") else { return };
    let s = Setup::new("claude");
    let turns = shell_writes_script(
        &|c| json!({"tool": "Bash", "args": {"command": c, "description": "write"}}),
    );
    let (model, run) = run_claude_allowing(&s, &exe, &json!(turns), "Bash");
    check_shell_writes(&s, &model, &run, turns.len());
}

#[test]
fn gemini_cli_judges_what_its_shell_writes() {
    let Some(exe) = cli("gemini") else { return };
    let s = Setup::new("gemini");
    let turns =
        shell_writes_script(&|c| json!({"tool": "run_shell_command", "args": {"command": c}}));
    let (model, run) = run_gemini(&s, &exe, &json!(turns), None);
    check_shell_writes(&s, &model, &run, turns.len());
}

#[test]
fn codex_cli_judges_what_its_shell_writes() {
    let Some(exe) = cli("codex") else { return };
    let s = Setup::new("codex");
    let turns = shell_writes_script(&|c| json!({"tool": "exec_command", "args": {"cmd": c}}));
    let model = FakeModel::start("openai", &json!(turns), s.work.path());
    let home = codex_home(&s, model.port);
    let mut cmd = s.command(&exe, &[("CODEX_HOME", home.to_str().expect("utf-8"))]);
    cmd.args([
        "exec",
        "--dangerously-bypass-hook-trust",
        "--sandbox",
        "workspace-write",
        "--json",
        "do the work",
    ]);
    let run = run_bounded(cmd);
    check_shell_writes(&s, &model, &run, turns.len());
}
