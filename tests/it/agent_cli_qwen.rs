//! bsi's hooks inside the released Qwen Code (`qwen -p`), driven headless
//! against the scripted model on 127.0.0.1 speaking OpenAI Chat Completions
//! (Qwen Code's `openai` auth type: `OPENAI_BASE_URL`, `OPENAI_API_KEY`,
//! `OPENAI_MODEL`; no vendor login). The scenarios of tests/it/agent_cli.rs:
//! the held section refused with the reason reaching the model, the free
//! edit passing, the briefing, the agent's own `bsi open` its session's
//! claim, the stop sending the agent back once, claim on write told to the
//! model, what the shell writes judged, MCP claims in the hooks' session,
//! and a missing bsi failing open with a word.

use std::path::Path;

use serde_json::{Value, json};

use crate::agent_cli::{
    FakeModel, Setup, briefed_session, bsi_word, check_claimed_on_write, check_run,
    check_shell_writes, cli, path_without_bsi, run_bounded, script, shell_writes_script,
};
use crate::common::{Run, bin};

/// Qwen Code run headless on `turns` (`--approval-mode yolo`, its edits and
/// shell commands run without asking; stream-json output); `path` replaces
/// the `PATH` it runs with.
fn run_qwen(
    s: &Setup,
    exe: &Path,
    turns: &Value,
    path: Option<std::ffi::OsString>,
) -> (FakeModel, Run) {
    let model = FakeModel::start("chat", turns, s.work.path());
    let url = format!("http://127.0.0.1:{}/v1", model.port);
    let mut cmd = s.command(
        exe,
        &[
            ("OPENAI_BASE_URL", &url),
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_MODEL", "qwen3-coder-plus"),
            ("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1"),
        ],
    );
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    cmd.args([
        "-p",
        "do the work",
        "--auth-type",
        "openai",
        "--approval-mode",
        "yolo",
        "--output-format",
        "stream-json",
    ]);
    let run = run_bounded(cmd);
    (model, run)
}

fn read(s: &Setup, file: &str) -> Value {
    json!({"tool": "read_file", "args": {"file_path": s.abs(file)}})
}

fn edit(s: &Setup, file: &str, old: &str, new: &str) -> Value {
    json!({"tool": "edit", "args": {"file_path": s.abs(file), "old_string": old, "new_string": new}})
}

fn shell(command: &str) -> Value {
    json!({"tool": "run_shell_command", "args": {"command": command}})
}

#[test]
fn qwen_code() {
    let Some(exe) = cli("qwen") else { return };
    let s = Setup::new("qwen");
    let (turns, refused) = script(
        // Qwen Code's `edit` refuses a file not read in the session.
        &|f| Some(read(&s, f)),
        &|f, old, new| edit(&s, f, old, new),
        &shell,
        // No `--session`: bsi finds the session from the Qwen Code process
        // the shell runs under.
        &format!("{} open agents/alice.md", bsi_word()),
    );
    let (model, run) = run_qwen(&s, &exe, &json!(turns), None);
    check_run(&s, &model, &run, turns.len(), refused);
    // The doctor: the hooks, bsi on PATH, folder trust off (Qwen Code's
    // default), the MCP server in .qwen/settings.json, a session reached.
    let mut doctor = s.command(&bin(), &[]);
    doctor.args(["agent", "doctor", "qwen"]);
    let d = Run::from_output(doctor.output().expect("run doctor"));
    d.code(0)
        .stdout_has("ok      hooks")
        .stdout_has("ok      program")
        .stdout_has("ok      trust    folder trust is off in Qwen Code")
        .stdout_has(
            "ok      mcp      bsi's MCP server (`bsi mcp`) is registered in .qwen/settings.json",
        )
        .stdout_has("ok      reached");
}

#[test]
fn qwen_code_claim_on_write_tells_the_model() {
    let Some(exe) = cli("qwen") else { return };
    let s = Setup::new("qwen");
    s.b.write(".bsi.toml", "claim_on_write = true\n");
    let turns = json!([
        read(&s, "projets/plan.md"),
        edit(&s, "projets/plan.md", "risk text", "new risk"),
        {"text": "done"},
        {"text": "done, keeping the claim on purpose"},
    ]);
    let (model, run) = run_qwen(&s, &exe, &turns, None);
    assert_eq!(run.code, 0, "{run:?}");
    let turns = model.turns();
    check_claimed_on_write(&s, &turns, &turns[2], &format!("{run:?}"));
}

#[test]
fn qwen_code_judges_what_its_shell_writes() {
    let Some(exe) = cli("qwen") else { return };
    let s = Setup::new("qwen");
    let turns = shell_writes_script(&shell);
    let (model, run) = run_qwen(&s, &exe, &json!(turns), None);
    check_shell_writes(&s, &model, &run, turns.len());
}

/// The MCP server Qwen Code starts from `.qwen/settings.json` claims in
/// the session its hooks briefed: the edit after the claim passes.
#[test]
fn qwen_code_claims_through_bsi_s_mcp_server() {
    let Some(exe) = cli("qwen") else { return };
    let s = Setup::new("qwen");
    // Qwen Code names an MCP tool `mcp__SERVER__TOOL`.
    let turns = json!([
        {"tool": "mcp__bsi__claim", "args": {"scopes": ["agents/alice.md"], "note": "by mcp"}},
        read(&s, "agents/alice.md"),
        edit(&s, "agents/alice.md", "notes", "mine now"),
        {"text": "done"},
        {"text": "done, keeping the claim on purpose"},
    ]);
    let (model, run) = run_qwen(&s, &exe, &turns, None);
    let ctx = format!("{run:?}\n{:#?}", model.turns());
    assert_eq!(run.code, 0, "{ctx}");
    let session = briefed_session(&model.turns());
    assert!(
        s.b.read("agents/alice.md").contains("mine now"),
        "the edit after the MCP claim passed\n{ctx}"
    );
    let active = s.b.active();
    assert!(
        active
            .iter()
            .any(|r| r.contains("agents/alice.md") && r.contains(&session)),
        "the MCP claim is the hooks' session {session}: {active:?}\n{ctx}"
    );
}

/// A hook that cannot run bsi says so, in Qwen Code's protocol (Claude
/// Code's), and lets the edit through.
#[test]
fn qwen_code_without_bsi_on_path_warns_and_lets_edits_through() {
    let Some(exe) = cli("qwen") else { return };
    let s = Setup::new("qwen");
    let turns = json!([
        read(&s, "agents/alice.md"),
        edit(&s, "agents/alice.md", "notes", "unchecked"),
        {"text": "done"},
    ]);
    let (model, run) = run_qwen(&s, &exe, &turns, Some(path_without_bsi()));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(s.b.read("agents/alice.md").contains("unchecked"));
    let all = model.turns().join("\n");
    assert!(
        all.contains("the hook could not run bsi"),
        "the model is told: {all}"
    );
}
