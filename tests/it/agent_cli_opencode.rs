//! bsi's plugin inside the released OpenCode (`opencode run`), driven
//! headless against the scripted model on 127.0.0.1 speaking OpenAI Chat
//! Completions, as an OpenAI-compatible provider of OpenCode's user
//! configuration (tests/agents/fake-model.mjs). The scenarios of
//! tests/it/agent_cli.rs: the held section refused, the free edit passing,
//! the briefing reaching the model, the agent's own `bsi open` its session's
//! claim, claim on write told to the model, a missing bsi failing open with
//! a word, and what the shell writes judged.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::agent_cli::{
    FakeModel, Setup, briefed_session, bsi_word, check_run, check_shell_writes, cli,
    path_without_bsi, run_bounded_within, script, shell_writes_script,
};
use crate::common::{Run, bin};

/// OpenCode's user configuration in the test's home: the scripted model as
/// the provider `fake`, and edits and shell commands allowed without asking
/// (headless, `opencode run` rejects what would ask).
fn opencode_home(s: &Setup, port: u16) {
    let dir = s.home.path().join(".config/opencode");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake",
                "options": {"baseURL": format!("http://127.0.0.1:{port}/v1"), "apiKey": "sk-test"},
                "models": {"fake": {"name": "Fake", "tool_call": true}},
            }
        },
        "model": "fake/fake",
        "permission": {"edit": "allow", "bash": "allow"},
        "autoupdate": false,
        "share": "disabled",
    });
    std::fs::write(dir.join("opencode.json"), config.to_string()).expect("write config");
}

/// Runs `opencode run` in the brain against `turns`; `path` replaces the
/// `PATH` (one without bsi).
fn run_opencode(
    s: &Setup,
    exe: &Path,
    turns: &Value,
    path: Option<std::ffi::OsString>,
) -> (FakeModel, Run) {
    let model = FakeModel::start("chat", turns, s.work.path());
    opencode_home(s, model.port);
    let mut cmd = s.command(
        exe,
        &[
            ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
        ],
    );
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    cmd.args(["run", "--format", "json", "do the work"]);
    // OpenCode's first start in a new home (its database, its own
    // dependencies installed in the background) takes a minute or more on
    // a busy 2-core machine.
    let run = run_bounded_within(cmd, std::time::Duration::from_secs(300));
    (model, run)
}

fn edit(s: &Setup, file: &str, old: &str, new: &str) -> Value {
    json!({"tool": "edit", "args": {"filePath": s.abs(file), "oldString": old, "newString": new}})
}

fn bash(command: &str) -> Value {
    // OpenCode 1.18.33 declares `command`, `timeout` and `workdir`.
    json!({"tool": "bash", "args": {"command": command}})
}

/// The shared scenario in OpenCode's tools; the agent's own `bsi open`
/// names no session: the plugin sets BSI_SESSION in the shell.
fn scenario(s: &Setup) -> (Vec<Value>, usize) {
    script(
        &|_| None,
        &|f, old, new| edit(s, f, old, new),
        &bash,
        &format!("{} open agents/alice.md", bsi_word()),
    )
}

#[test]
fn opencode() {
    let Some(exe) = cli("opencode") else { return };
    let s = Setup::new("opencode");
    let (turns, refused) = scenario(&s);
    // `opencode run` ends when the session goes idle, before the plugin's
    // `session.idle` answer can send the agent back: the run stops at the
    // script's first "done", and the stop is checked as far as bsi's part
    // (the reminder reaching the model: `opencode serve` below).
    let (turns, _) = turns.split_at(turns.len() - 2);
    let (model, run) = run_opencode(&s, &exe, &json!(turns), None);
    check_run_until_stop(&s, &model, &run, turns.len(), refused);
    // The doctor: the plugin's three hooks, bsi on PATH, the MCP server in
    // opencode.json, and a session that reached them.
    let mut doctor = s.command(&bin(), &[]);
    doctor.args(["agent", "doctor", "opencode"]);
    let d = Run::from_output(doctor.output().expect("run doctor"));
    d.code(0)
        .stdout_has("ok      hooks    bsi's 3 hooks are in .opencode/plugins/bsi.js")
        .stdout_has("ok      program")
        .stdout_has(
            "unknown trust    OpenCode loads the project's plugins without a trust step; `--pure`",
        )
        .stdout_has("ok      mcp      bsi's MCP server (`bsi mcp`) is registered in opencode.json")
        .stdout_has("ok      reached");
}

/// `opencode serve`, whose process outlives a turn, with `opencode run
/// --attach` driving it: the run ends at the first idle as a plain `opencode
/// run` does, and the server goes on with the reminder the plugin's
/// `session.idle` answer sends, once. The whole scenario of
/// tests/it/agent_cli.rs holds, stop included.
#[test]
fn opencode_serve_sends_the_agent_back_once_at_the_stop() {
    let Some(exe) = cli("opencode") else { return };
    let s = Setup::new("opencode");
    let (turns, refused) = scenario(&s);
    let model = FakeModel::start("chat", &json!(turns), s.work.path());
    opencode_home(&s, model.port);
    let env = [
        ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
    ];
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
        .to_string();
    let mut serve = s.command(exe.as_path(), &env);
    serve
        .args(["serve", "--hostname", "127.0.0.1", "--port", &port])
        .stdout(std::process::Stdio::null());
    let server = Server(serve.spawn().expect("start opencode serve"));
    let url = format!("http://127.0.0.1:{port}");
    let mut cmd = s.command(exe.as_path(), &env);
    cmd.args(["run", "--attach", &url, "--format", "json", "do the work"]);
    // The attached run waits for the server to listen (its first start in
    // a new home takes a minute or more on a busy 2-core machine).
    let deadline = Instant::now() + Duration::from_secs(300);
    while std::net::TcpStream::connect(("127.0.0.1", port.parse::<u16>().expect("port"))).is_err() {
        assert!(Instant::now() < deadline, "opencode serve did not listen");
        std::thread::sleep(Duration::from_millis(100));
    }
    let run = run_bounded_within(cmd, Duration::from_secs(300));
    // The run ended at the first idle; the server plays the rest of the
    // script: the reminder's turn, then a second stop, which bsi lets be.
    let stops = || s.events().iter().filter(|(kind, _)| kind == "stop").count();
    let deadline = Instant::now() + Duration::from_secs(120);
    while model.turns().len() < turns.len() || stops() < 2 {
        assert!(
            Instant::now() < deadline,
            "the server did not play the script to its second stop: {} turns, {} stops\n{run:?}\n{:#?}",
            model.turns().len(),
            stops(),
            model.turns()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // A second reminder would be a turn beyond the script: give the second
    // stop's answer the time to come back before counting.
    std::thread::sleep(Duration::from_secs(3));
    drop(server);
    check_run(&s, &model, &run, turns.len(), refused);
}

/// `session` holds the Risks section of `projets/plan.md`, as OpenCode.
fn holds_risks(s: &Setup, session: &str) {
    let active = s.b.active();
    assert!(
        active.iter().any(|r| r.contains("projets/plan.md#Risks")
            && r.contains(session)
            && r.contains("| opencode |")),
        "{active:?}"
    );
}

/// `opencode serve`, stopped when dropped.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .arg(self.0.id().to_string())
            .status();
        let _ = self.0.wait();
    }
}

/// `check_run` of tests/it/agent_cli.rs up to the stop: the briefing, the
/// refusal, the free edit, the shell's claim and its edit, the fixtures;
/// then the stop hook's event reached bsi, and bsi's answer sends the agent
/// back (what OpenCode's TUI and server act on).
fn check_run_until_stop(
    s: &Setup,
    model: &FakeModel,
    run: &Run,
    script_len: usize,
    refused_turn: usize,
) {
    let (turns, ctx) = crate::agent_cli::check_until_stop(s, model, run, refused_turn);
    let ctx = format!("{ctx}\n--- turns\n{turns:#?}");
    assert_eq!(turns.len(), script_len, "{ctx}");
    let session = crate::agent_cli::briefed_session(&turns);
    crate::agent_cli::check_fixtures("opencode", s, model);
    // The stop: OpenCode's `session.idle` reached bsi, which answered with
    // a prompt about the claim still held, recorded as sent back once.
    let events = s.events();
    assert!(
        events
            .iter()
            .any(|(kind, e)| kind == "stop" && e["hook"] == "session.idle"),
        "no stop event: {events:?}\n{ctx}"
    );
    let map = std::fs::read_to_string(s.b.path().join(".git/bsi-agents/sessions.json"))
        .expect("session map");
    let map: Value = serde_json::from_str(&map).expect("json");
    assert!(
        map["sessions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|e| e["tool"] == "opencode"
                && e["session"] == session.as_str()
                && e["sent_back"]
                    .as_str()
                    .is_some_and(|w| w.contains("agents/alice.md"))),
        "{map}\n{ctx}"
    );
}

/// With `claim_on_write`, a free edit is claimed for the agent's session,
/// and the model is told with the edit's result.
#[test]
fn opencode_claim_on_write_tells_the_model() {
    let Some(exe) = cli("opencode") else { return };
    let s = Setup::new("opencode");
    s.b.write(".bsi.toml", "claim_on_write = true\n");
    let turns = json!([
        edit(&s, "projets/plan.md", "risk text", "new risk"),
        {"text": "done"},
    ]);
    let (model, run) = run_opencode(&s, &exe, &turns, None);
    let turns = model.turns();
    let ctx = format!("{run:?}\n--- turns\n{turns:#?}");
    assert_eq!(run.code, 0, "{ctx}");
    // As `check_claimed_on_write` of tests/it/agent_cli.rs, but for the
    // stop reminder, which `opencode run` ends before.
    crate::agent_cli::check_claim_told(&s, &turns, &turns[1], &ctx);
    let told = turns[1].matches("bsi claimed").count();
    assert_eq!(told, 1, "told once\n{ctx}");
}

/// Without bsi on its PATH the plugin lets the edit through and says so, to
/// the model (with the edit's result, and in the system prompt) and to the
/// person (stderr).
#[test]
fn opencode_without_bsi_on_path_warns_and_lets_edits_through() {
    let Some(exe) = cli("opencode") else { return };
    let s = Setup::new("opencode");
    let turns = json!([
        edit(&s, "agents/alice.md", "notes", "unchecked"),
        {"text": "done"},
    ]);
    let (model, run) = run_opencode(&s, &exe, &turns, Some(path_without_bsi()));
    let turns = model.turns();
    let ctx = format!("{run:?}\n--- turns\n{turns:#?}");
    assert_eq!(run.code, 0, "{ctx}");
    assert!(s.b.read("agents/alice.md").contains("unchecked"), "{ctx}");
    assert!(
        turns[0].contains("the hook could not run bsi (is it on the PATH OpenCode runs hooks with?); the session starts without its briefing"),
        "the session-start fallback reaches the model\n{ctx}"
    );
    assert!(
        turns[1].contains("the hook could not run bsi (is it on the PATH OpenCode runs hooks with?); this edit goes through unchecked"),
        "the edit fallback reaches the model\n{ctx}"
    );
    assert!(
        run.stderr.contains("this edit goes through unchecked"),
        "and the person\n{ctx}"
    );
}

#[test]
fn opencode_judges_what_its_shell_writes() {
    let Some(exe) = cli("opencode") else { return };
    let s = Setup::new("opencode");
    let turns = shell_writes_script(&bash);
    let (model, run) = run_opencode(&s, &exe, &json!(turns), None);
    check_shell_writes(&s, &model, &run, turns.len());
}

/// `bsi agent install opencode` and back, in a project with an
/// `opencode.json` and a plugin of its own: the plugin and the MCP server
/// are added, then taken out, and every other byte is as it was.
#[test]
fn opencode_install_and_uninstall_keep_the_project_byte_for_byte() {
    let b = crate::common::Brain::new();
    let config = "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"mcp\": {\n    \"other\": {\n      \"type\": \"remote\",\n      \"url\": \"https://example.com/mcp\"\n    }\n  },\n  \"theme\": \"dark\"\n}\n";
    b.write("opencode.json", config);
    b.write(
        ".opencode/plugins/mine.js",
        "export const Mine = async () => ({})\n",
    );
    let status = b.git(&["status", "--porcelain"]);
    b.bsi(&["agent", "install", "opencode"])
        .ok()
        .stdout_has("OpenCode: created .opencode/plugins/bsi.js with bsi's hooks")
        .stdout_has("registered the MCP server `bsi mcp` in opencode.json")
        .stdout_has("`opencode --pure` (or OPENCODE_PURE=1) loads none");
    let plugin = b.read(".opencode/plugins/bsi.js");
    assert!(plugin.contains("const PROGRAM = \"bsi\";"), "{plugin}");
    assert!(
        !plugin.contains(&bin().display().to_string()),
        "no path of this machine"
    );
    let v: Value = serde_json::from_str(&b.read("opencode.json")).expect("json");
    assert_eq!(
        v["mcp"]["bsi"],
        json!({"type": "local", "command": ["bsi", "mcp", "--tool", "opencode"]})
    );
    assert_eq!(v["mcp"]["other"]["url"], "https://example.com/mcp");
    assert_eq!(v["theme"], "dark");
    // Twice: nothing changes.
    b.bsi(&["agent", "install", "opencode"])
        .ok()
        .stdout_has("bsi's hooks are already in .opencode/plugins/bsi.js")
        .stdout_has("the MCP server `bsi mcp` is already in opencode.json");
    b.bsi(&["agent", "uninstall", "opencode"])
        .ok()
        .stdout_has("took the MCP server `bsi mcp` out of opencode.json")
        .stdout_has(".opencode/plugins/bsi.js is back as it was before `bsi agent install`");
    assert_eq!(b.read("opencode.json"), config);
    assert!(!b.path().join(".opencode/plugins/bsi.js").exists());
    assert_eq!(
        b.read(".opencode/plugins/mine.js"),
        "export const Mine = async () => ({})\n"
    );
    assert_eq!(b.git(&["status", "--porcelain"]), status);
    // A plugin of bsi's name that bsi did not write: left alone, and said.
    b.write(".opencode/plugins/bsi.js", "// someone else's\n");
    let r = b.bsi(&["agent", "install", "opencode"]);
    assert_ne!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("it is a file bsi did not write"), "{r:?}");
    assert_eq!(b.read(".opencode/plugins/bsi.js"), "// someone else's\n");
}

/// One identity for the hook, the shell and MCP: OpenCode starts the `bsi`
/// server of `opencode.json` (registered by `bsi agent install opencode`)
/// itself, so bsi finds the session the plugin's session-start named from
/// the OpenCode process; the model's `claim` through it acts for that
/// session, and its edit inside the claim passes the edit hook as its own.
#[test]
fn opencode_claims_through_mcp_as_the_hooks_session() {
    let Some(exe) = cli("opencode") else { return };
    let s = Setup::new("opencode");
    let turns = json!([
        {"tool": "bsi_claim", "args": {"scopes": ["projets/plan.md#Risks"], "note": "risks"}},
        edit(&s, "projets/plan.md", "risk text", "new risk"),
        {"tool": "bsi_whoami", "args": {}},
        {"text": "done"},
    ]);
    let (model, run) = run_opencode(&s, &exe, &turns, None);
    let turns = model.turns();
    let ctx = format!("{run:?}\n--- turns\n{turns:#?}");
    assert_eq!(run.code, 0, "{ctx}");
    assert_eq!(turns.len(), 4, "{ctx}");
    let session = briefed_session(&turns);
    assert!(
        turns[1].contains("Claimed projets/plan.md#Risks")
            && turns[1].contains(&format!("for session {session}.")),
        "the grant, for the hook's session: {}\n{ctx}",
        turns[1]
    );
    assert!(s.b.read("projets/plan.md").contains("new risk"), "{ctx}");
    assert!(
        turns[3].contains(&format!("Session {session} (agent opencode)")),
        "{ctx}"
    );
    holds_risks(&s, &session);
}
