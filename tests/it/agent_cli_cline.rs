//! bsi's hook inside the released Cline CLI, driven headless (`cline
//! --json PROMPT`) against the scripted model on 127.0.0.1 speaking OpenAI
//! Chat Completions, Cline's `openai` provider with a base URL.
//!
//! Cline waits for one hook of bsi's, `PreToolUse`: the first tool call of
//! a session carries the briefing, a refusal reaches the model as hook
//! context while the call's input is replaced by one the tool fails on,
//! and a claim on the first write is said the same way. What the model
//! received is read back from the server's log.
//!
//! Each run starts Cline's hub daemon, which outlives the CLI: every test
//! gives it a port of its own (`CLINE_HUB_PORT`) and stops it afterwards.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};

use crate::agent_cli::{FakeModel, Setup, bsi_word, cli, path_without_bsi, run_bounded, shape};
use crate::common::Run;

/// A port no one listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Cline's hub daemon started by a run on `port`: stopped when dropped.
struct Hub(u16);

impl Drop for Hub {
    fn drop(&mut self) {
        let want = format!("--port\0{}\0", self.0);
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return;
        };
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else {
                continue;
            };
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline);
            if cmdline.contains("--cline-hub-daemon") && cmdline.contains(&want) {
                let _ = std::process::Command::new("kill")
                    .arg(pid.to_string())
                    .status();
            }
        }
    }
}

/// Cline run on `turns` in the brain, its provider the scripted model;
/// `path` replaces the `PATH` it runs with.
fn run_cline(
    s: &Setup,
    exe: &Path,
    turns: &Value,
    path: Option<&std::ffi::OsStr>,
) -> (FakeModel, Run) {
    let model = FakeModel::start("chat", turns, s.work.path());
    let port = free_port();
    let _hub = Hub(port);
    let port = port.to_string();
    let base = format!("http://127.0.0.1:{}/v1", model.port);
    let env = [("CLINE_HUB_PORT", port.as_str())];
    let mut auth = s.command(exe, &env);
    auth.args([
        "auth", "-p", "openai", "-k", "sk-test", "-m", "fake", "-b", &base,
    ]);
    let a = run_bounded(auth);
    assert_eq!(a.code, 0, "cline auth: {a:?}");
    let mut cmd = s.command(exe, &env);
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    cmd.args(["--json", "do the work"]);
    let run = run_bounded(cmd);
    (model, run)
}

fn ctx(model: &FakeModel, run: &Run) -> String {
    format!(
        "--- CLI stdout\n{}\n--- CLI stderr\n{}\n--- turns\n{:#?}",
        run.stdout,
        run.stderr,
        model.turns()
    )
}

/// The bsi session the briefing named in `turn`.
fn briefed_session(turn: &str) -> String {
    let at = turn
        .find("Your bsi session: ")
        .unwrap_or_else(|| panic!("no briefing in {turn}"));
    turn[at + "Your bsi session: ".len()..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect()
}

/// The fixture a `PreToolUse` event of the real CLI stands for.
fn fixture_of(event: &Value) -> Option<&'static str> {
    let input = &event["tool_call"]["input"];
    Some(match event["tool_call"]["name"].as_str()? {
        "read_files" => "cline-pretooluse-read-files.json",
        "run_commands" => "cline-pretooluse-run-commands.json",
        "editor" if !input["insert_line"].is_null() => "cline-pretooluse-editor-insert.json",
        "editor" if input["old_text"].is_string() => "cline-pretooluse-editor-replace.json",
        "editor" => "cline-pretooluse-editor-create.json",
        _ => return None,
    })
}

/// The parameters Cline declared to the model for its tool `name`, in
/// the first turn's Chat Completions request.
fn declared(model: &FakeModel, name: &str) -> Option<BTreeSet<String>> {
    let first = model
        .requests()
        .into_iter()
        .find(|r| r["turn"].is_number())?;
    let tools = first["body"]["tools"].as_array()?.clone();
    let f = tools.iter().find(|t| t["function"]["name"] == name)?;
    Some(
        f["function"]["parameters"]["properties"]
            .as_object()?
            .keys()
            .cloned()
            .collect(),
    )
}

/// The fixtures are copies of what the real CLI sends: each event this
/// run captured has the keys of its fixture, at the top and in
/// `tool_call`, and the fixture's `tool_call.input` names only parameters
/// the CLI declares to the model.
fn check_fixtures(s: &Setup, model: &FakeModel) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents");
    let mut compared = 0;
    for (_, event) in s.events() {
        let Some(name) = fixture_of(&event) else {
            continue;
        };
        let text = std::fs::read_to_string(dir.join(name)).expect("fixture");
        let fixture: Value = serde_json::from_str(&text).expect("fixture JSON");
        for (real, stored) in [
            (&event, &fixture),
            (&event["tool_call"], &fixture["tool_call"]),
        ] {
            assert_eq!(
                shape(real),
                shape(stored),
                "{name} has drifted from what Cline sends (real event: {event})"
            );
        }
        let tool = fixture["tool_call"]["name"].as_str().expect("tool name");
        let params = declared(model, tool).expect("the tool is offered");
        let input = fixture["tool_call"]["input"].as_object().expect("input");
        assert!(
            input.keys().all(|k| params.contains(k)),
            "{name}: {:?} are not all parameters of {tool} ({params:?})",
            input.keys().collect::<Vec<_>>()
        );
        compared += 1;
    }
    compared
}

/// The briefing on the first call, the held section refused (the file
/// unchanged there, the model told why, the run going on), the free edit
/// landing, the shell's `bsi open` the session's own claim.
/// `scope` is an active claim of `session`, recorded as agent cline.
#[track_caller]
fn held_by_cline(s: &Setup, scope: &str, session: &str) {
    let active = s.b.active();
    assert!(
        active
            .iter()
            .any(|r| r.contains(scope) && r.contains(session) && r.contains("| cline |")),
        "{scope} claimed by {session} as cline: {active:?}"
    );
}

#[test]
fn cline_cli() {
    let Some(exe) = cli("cline") else { return };
    let s = Setup::new("cline");
    let plan = s.abs("projets/plan.md");
    let alice = s.abs("agents/alice.md");
    let edit = |file: &str, old: &str, new: &str| json!({"tool": "editor", "args": {"path": file, "old_text": old, "new_text": new}});
    let turns = json!([
        {"tool": "read_files", "args": {"files": [{"path": plan}]}},
        edit(&plan, "goal text", "stolen goal"),
        edit(&plan, "risk text", "new risk"),
        // No `--session`: bsi finds the session from the Cline process.
        {"tool": "run_commands", "args": {"commands": [format!("{} open agents/alice.md", bsi_word())]}},
        edit(&alice, "notes", "mine now"),
        {"text": "done"},
    ]);
    let (model, run) = run_cline(&s, &exe, &turns, None);
    let ctx = ctx(&model, &run);
    assert_eq!(run.code, 0, "{ctx}");
    let sent = model.turns();
    assert_eq!(
        sent.len(),
        6,
        "every turn of the script was asked for\n{ctx}"
    );
    assert!(
        !sent[0].contains("bsi guards this repository")
            && sent[1].contains("bsi guards this repository"),
        "the briefing reaches the model with the first call's result\n{ctx}"
    );
    let session = briefed_session(&sent[1]);
    assert!(
        sent[2].contains("bsi: refused") && sent[2].contains("sess-other"),
        "the refusal reaches the model: {}\n{ctx}",
        sent[2]
    );
    let text = s.b.read("projets/plan.md");
    assert!(
        text.contains("goal text") && !text.contains("stolen"),
        "{text}"
    );
    assert!(
        text.contains("new risk"),
        "the free edit passes: {text}\n{ctx}"
    );
    assert!(s.b.read("agents/alice.md").contains("mine now"), "{ctx}");
    held_by_cline(&s, "agents/alice.md", &session);
    assert!(check_fixtures(&s, &model) >= 3, "{ctx}");
}

/// With `claim_on_write`, a free edit is claimed for the agent's session,
/// and the model is told with the call's result.
#[test]
fn cline_cli_claim_on_write_tells_the_model() {
    let Some(exe) = cli("cline") else { return };
    let s = Setup::new("cline");
    s.b.write(".bsi.toml", "claim_on_write = true\n");
    let turns = json!([
        {"tool": "editor", "args": {"path": s.abs("projets/plan.md"), "old_text": "risk text", "new_text": "new risk"}},
        {"text": "done"},
    ]);
    let (model, run) = run_cline(&s, &exe, &turns, None);
    let ctx = ctx(&model, &run);
    assert_eq!(run.code, 0, "{ctx}");
    let sent = model.turns();
    let session = briefed_session(&sent[1]);
    assert!(
        sent[1].contains("bsi claimed projets/plan.md#Risks") && sent[1].contains(&session),
        "the claim reaches the model\n{ctx}"
    );
    assert_eq!(
        sent[1].matches("bsi claimed").count(),
        1,
        "told once\n{ctx}"
    );
    assert!(s.b.read("projets/plan.md").contains("new risk"), "{ctx}");
    held_by_cline(&s, "projets/plan.md#Risks", &session);
}

/// What the agent's shell commands write is judged: a rewrite of the held
/// file refused before it runs, an append to a free file let through.
#[test]
fn cline_cli_judges_what_its_shell_writes() {
    let Some(exe) = cli("cline") else { return };
    let s = Setup::new("cline");
    let stolen = crate::agent_hook::PLAN.replace("goal text", "stolen goal");
    let turns = json!([
        {"tool": "run_commands", "args": {"commands": [format!("cat > projets/plan.md <<'EOF'\n{stolen}EOF")]}},
        {"tool": "run_commands", "args": {"commands": ["echo free line >> agents/free.md"]}},
        {"text": "done"},
    ]);
    let (model, run) = run_cline(&s, &exe, &turns, None);
    let ctx = ctx(&model, &run);
    assert_eq!(run.code, 0, "{ctx}");
    let sent = model.turns();
    assert!(
        sent[1].contains("bsi: refused: projets/plan.md line 7 under `Goals` is inside an active claim of session sess-other"),
        "the refusal reaches the model\n{ctx}"
    );
    assert_eq!(
        s.b.read("projets/plan.md"),
        crate::agent_hook::PLAN,
        "{ctx}"
    );
    assert_eq!(s.b.read("agents/free.md"), "free line\n", "{ctx}");
    assert_eq!(sent.len(), 3, "{ctx}");
}

/// A hook that cannot run bsi says so to the model and lets the edit
/// through.
#[test]
fn cline_cli_without_bsi_on_path_warns_and_lets_edits_through() {
    let Some(exe) = cli("cline") else { return };
    let s = Setup::new("cline");
    let turns = json!([
        {"tool": "editor", "args": {"path": s.abs("agents/alice.md"), "old_text": "notes", "new_text": "unchecked"}},
        {"text": "done"},
    ]);
    let path = path_without_bsi();
    let (model, run) = run_cline(&s, &exe, &turns, Some(&path));
    let ctx = ctx(&model, &run);
    assert_eq!(run.code, 0, "{ctx}");
    assert!(
        model.turns()[1]
            .contains("the hook could not run bsi (is it on the PATH Cline CLI runs hooks with?)"),
        "{ctx}"
    );
    assert!(s.b.read("agents/alice.md").contains("unchecked"), "{ctx}");
}

/// Cline reads MCP servers from the user's settings only: `bsi agent
/// install cline` prints the command that registers bsi's, run here as
/// printed (`sh -c`, the CLI's home the test's). The model's `claim`
/// through it then acts for the session the hook named, and its edit inside
/// the claim passes the edit hook as its own.
#[test]
fn cline_cli_claims_through_mcp_registered_as_install_says() {
    let Some(exe) = cli("cline") else { return };
    let s = Setup::new("cline");
    let said = s.b.bsi(&["agent", "install", "cline"]);
    said.ok();
    let printed = said
        .stdout
        .split("to give the agent bsi's MCP tools: `")
        .nth(1)
        .and_then(|t| t.split('`').next())
        .unwrap_or_else(|| panic!("no MCP command printed: {}", said.stdout))
        .to_string();
    let mut add = s.command(Path::new("sh"), &[]);
    let clis = exe.parent().expect("the CLIs' directory");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![clis.to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    add.env("PATH", std::env::join_paths(dirs).expect("PATH"))
        .args(["-c", &printed]);
    let added = crate::agent_cli::run_bounded(add);
    assert_eq!(added.code, 0, "`{printed}`: {added:?}");
    // The doctor reads it where the command put it, the user's settings.
    let mut doctor = s.command(&crate::common::bin(), &[]);
    doctor.args(["agent", "doctor", "cline"]);
    Run::from_output(doctor.output().expect("run doctor")).stdout_has(
        "ok      mcp      bsi's MCP server (`bsi mcp`) is registered in ~/.cline/data/settings/cline_mcp_settings.json",
    );
    let plan = s.abs("projets/plan.md");
    let turns = json!([
        {"tool": "bsi__claim", "args": {"scopes": ["projets/plan.md#Risks"], "note": "risks"}},
        {"tool": "editor", "args": {"path": plan, "old_text": "risk text", "new_text": "new risk"}},
        {"tool": "bsi__whoami", "args": {}},
        {"text": "done"},
    ]);
    let (model, run) = run_cline(&s, &exe, &turns, None);
    let ctx = ctx(&model, &run);
    assert_eq!(run.code, 0, "{ctx}");
    let sent = model.turns();
    assert_eq!(sent.len(), 4, "{ctx}");
    let session = briefed_session(&sent[1]);
    assert!(
        sent[1].contains("Claimed projets/plan.md#Risks")
            && sent[1].contains(&format!("for session {session}.")),
        "the grant, for the hook's session\n{ctx}"
    );
    assert!(s.b.read("projets/plan.md").contains("new risk"), "{ctx}");
    assert!(
        sent[3].contains(&format!("Session {session} (agent cline)")),
        "{ctx}"
    );
    held_by_cline(&s, "projets/plan.md#Risks", &session);
}

/// Why bsi installs no stop hook for Cline: a `TaskComplete` hook answering
/// with context runs when the agent has answered (its event as the fixture
/// has it), and the model is asked nothing more, its words never reaching
/// it (docs/agent-tools.md, "Cline CLI", has the source's reasons).
#[test]
fn cline_cli_task_complete_reaches_no_model() {
    let Some(exe) = cli("cline") else { return };
    let s = Setup::new("cline");
    let ran = s.work.path().join("task-complete.json");
    let words = "a reminder from a TaskComplete hook";
    let hook = s.b.path().join(".clinerules/hooks/TaskComplete");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\ncat > '{}'\necho '{{\"context\":\"{words}\"}}'\n",
            ran.display()
        ),
    )
    .expect("write the hook");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let turns = json!([
        {"tool": "run_commands", "args": {"commands": ["ls"]}},
        {"text": "done"},
    ]);
    let (model, run) = run_cline(&s, &exe, &turns, None);
    let ctx = ctx(&model, &run);
    assert_eq!(run.code, 0, "{ctx}");
    // Run detached: it may end after the CLI.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let event = loop {
        if let Some(v) = std::fs::read_to_string(&ran)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        {
            break v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the TaskComplete hook never ran\n{ctx}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/agents/cline-taskcomplete.json"),
        )
        .expect("fixture"),
    )
    .expect("fixture JSON");
    assert_eq!(
        shape(&event),
        shape(&fixture),
        "cline-taskcomplete.json has drifted from what Cline sends: {event}"
    );
    assert_eq!(event["hookName"], "agent_end", "{event}");
    assert_eq!(model.turns().len(), 2, "no turn after the stop\n{ctx}");
    assert!(
        !model
            .requests()
            .iter()
            .any(|r| r.to_string().contains(words)),
        "{ctx}"
    );
}
