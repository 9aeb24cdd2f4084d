//! bsi's plugin inside the released Kilo Code CLI (`kilo run`), driven
//! headless against the scripted model on 127.0.0.1 speaking OpenAI Chat
//! Completions, as an OpenAI-compatible provider of Kilo's user
//! configuration (no vendor login: Kilo's own gateway is never asked).
//! Kilo is built on OpenCode and loads bsi's OpenCode plugin from
//! `.kilo/plugins/bsi.js`: the scenarios of tests/it/agent_cli.rs up to the
//! stop (a plain `kilo run` exits at its first idle, as `opencode run`
//! does), what the shell writes, and MCP claims from `kilo.json` in the
//! hooks' session.

use std::path::Path;

use serde_json::{Value, json};

use crate::agent_cli::{
    FakeModel, Setup, briefed_session, bsi_word, check_until_stop, cli, run_bounded_within, script,
    shell_writes_script,
};
use crate::common::{Run, bin};

/// Kilo's user configuration in the test's home: the scripted model as
/// the provider `fake`, edits and shell commands allowed without asking.
fn kilo_home(s: &Setup, port: u16) {
    let dir = s.home.path().join(".config/kilo");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let config = json!({
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
    std::fs::write(dir.join("kilo.json"), config.to_string()).expect("write config");
}

/// Runs `kilo run` in the brain against `turns`.
fn run_kilo(s: &Setup, exe: &Path, turns: &Value) -> (FakeModel, Run) {
    let model = FakeModel::start("chat", turns, s.work.path());
    kilo_home(s, model.port);
    let mut cmd = s.command(
        exe,
        &[
            ("KILO_DISABLE_MODELS_FETCH", "1"),
            ("KILO_DISABLE_AUTOUPDATE", "1"),
            ("KILO_DISABLE_SHARE", "1"),
        ],
    );
    cmd.args(["run", "--format", "json", "do the work"]);
    // Kilo's first start in a new home (its database, its own files) takes
    // a minute or more on a busy 2-core machine.
    let run = run_bounded_within(cmd, std::time::Duration::from_secs(300));
    (model, run)
}

fn edit(s: &Setup, file: &str, old: &str, new: &str) -> Value {
    json!({"tool": "edit", "args": {"filePath": s.abs(file), "oldString": old, "newString": new}})
}

fn bash(command: &str) -> Value {
    json!({"tool": "bash", "args": {"command": command, "description": "run"}})
}

#[test]
fn kilo_code() {
    let Some(exe) = cli("kilo") else { return };
    let s = Setup::new("kilo");
    let (turns, refused) = script(
        &|_| None,
        &|f, old, new| edit(&s, f, old, new),
        &bash,
        // No `--session`: the plugin sets BSI_KILO_SESSION in the shell.
        &format!("{} open agents/alice.md", bsi_word()),
    );
    // `kilo run` ends when the session goes idle: the script stops at its
    // first "done", and the stop is checked as far as bsi's part.
    let (turns, _) = turns.split_at(turns.len() - 2);
    let (model, run) = run_kilo(&s, &exe, &json!(turns));
    let (all, ctx) = check_until_stop(&s, &model, &run, refused);
    let ctx = format!("{ctx}\n--- turns\n{all:#?}");
    assert_eq!(all.len(), turns.len(), "{ctx}");
    crate::agent_cli::check_fixtures("kilo", &s, &model);
    // The stop: Kilo's `session.idle` reached bsi, which answered with a
    // prompt about the claim still held.
    let session = briefed_session(&all);
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
            .any(|e| e["tool"] == "kilo"
                && e["session"] == session.as_str()
                && e["sent_back"]
                    .as_str()
                    .is_some_and(|w| w.contains("agents/alice.md"))),
        "{map}\n{ctx}"
    );
    // The doctor: the plugin's three hooks, bsi on PATH, the MCP server in
    // kilo.json, and a session that reached them.
    let mut doctor = s.command(&bin(), &[]);
    doctor.args(["agent", "doctor", "kilo"]);
    let d = Run::from_output(doctor.output().expect("run doctor"));
    d.code(0)
        .stdout_has("ok      hooks    bsi's 3 hooks are in .kilo/plugins/bsi.js")
        .stdout_has("ok      program")
        .stdout_has("unknown trust    Kilo loads the project's plugins without a trust step")
        .stdout_has("ok      mcp      bsi's MCP server (`bsi mcp`) is registered in kilo.json")
        .stdout_has("ok      reached");
}

#[test]
fn kilo_code_judges_what_its_shell_writes_and_claims_through_mcp() {
    let Some(exe) = cli("kilo") else { return };
    let s = Setup::new("kilo");
    // One run for both (each start of Kilo costs a minute here): the shell
    // writes first, then a claim through bsi's MCP server (Kilo names its
    // tools `SERVER_TOOL`) and an edit inside it.
    let mut turns = shell_writes_script(&bash);
    turns.pop();
    let writes = turns.len();
    turns.extend([
        json!({"tool": "bsi_claim", "args": {"scopes": ["projets/plan.md#Risks"], "note": "risks"}}),
        edit(&s, "projets/plan.md", "risk text", "new risk"),
        json!({"text": "done"}),
    ]);
    let (model, run) = run_kilo(&s, &exe, &json!(turns));
    let all = model.turns();
    let ctx = format!("{run:?}\n--- turns\n{all:#?}");
    assert_eq!(run.code, 0, "{ctx}");
    // What the shell wrote: the held file refused (unchanged), the free one
    // written.
    assert!(!s.b.read("projets/plan.md").contains("stolen"), "{ctx}");
    assert_eq!(
        s.b.read("agents/free.md"),
        "free line\n",
        "the free write ran\n{ctx}"
    );
    assert!(
        all[1].contains("bsi: refused: projets/plan.md line 7 under `Goals` is inside an active claim of session sess-other"),
        "{ctx}"
    );
    // The MCP claim is the hooks' session's; the edit inside it passed,
    // the held section is untouched.
    let session = briefed_session(&all);
    assert!(
        all[writes + 1].contains("Claimed projets/plan.md#Risks")
            && all[writes + 1].contains(&format!("for session {session}.")),
        "the grant, for the hook's session\n{ctx}"
    );
    let plan = s.b.read("projets/plan.md");
    assert!(
        plan.contains("new risk") && plan.contains("goal text"),
        "{plan}\n{ctx}"
    );
}

/// With `claim_on_write`, the first edit outside every claim claims its
/// section for Kilo's session and the claim reaches the model once, with
/// the edit's result; the claim is recorded as Kilo's.
#[test]
fn kilo_code_claim_on_write_tells_the_model() {
    let Some(exe) = cli("kilo") else { return };
    let s = Setup::new("kilo");
    s.b.write(".bsi.toml", "claim_on_write = true\n");
    let turns = json!([
        edit(&s, "projets/plan.md", "risk text", "new risk"),
        {"text": "done"},
    ]);
    let (model, run) = run_kilo(&s, &exe, &turns);
    let turns = model.turns();
    let ctx = format!("{run:?}\n--- turns\n{turns:#?}");
    assert_eq!(run.code, 0, "{ctx}");
    crate::agent_cli::check_claim_told(&s, &turns, &turns[1], &ctx);
    let told = turns[1].matches("bsi claimed").count();
    assert_eq!(told, 1, "told once\n{ctx}");
}
