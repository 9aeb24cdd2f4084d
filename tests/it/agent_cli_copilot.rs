//! bsi's hooks inside the released GitHub Copilot CLI, driven headless
//! (`copilot -p`) against the scripted model on 127.0.0.1: Copilot takes a
//! model provider of one's own (`COPILOT_PROVIDER_BASE_URL`, OpenAI Chat
//! Completions by default, the Responses API with
//! `COPILOT_PROVIDER_WIRE_API=responses`), with `COPILOT_OFFLINE=true` so it
//! reaches nothing else. The same scenarios as tests/it/agent_cli.rs.
//!
//! Copilot's native package unpacks itself into its cache directory
//! (`COPILOT_CACHE_HOME`) on first run: every test shares one, in `target/`,
//! unpacked once before the first run.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::agent_cli::{
    FakeModel, Setup, bsi_word, check_claimed_on_write, check_fixtures, check_run,
    check_shell_writes, cli, last_message, path_without_bsi, run_bounded, script,
    shell_writes_script,
};
use crate::common::{Run, bin};

/// The cache Copilot unpacks its package into, shared by every run.
fn cache_home(exe: &Path) -> PathBuf {
    static CACHE: OnceLock<PathBuf> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/copilot-cache");
            std::fs::create_dir_all(&dir).expect("mkdir");
            let home = tempfile::tempdir().expect("tmp");
            let out = std::process::Command::new(exe)
                .arg("--version")
                .env("HOME", home.path())
                .env("COPILOT_CACHE_HOME", &dir)
                .env("COPILOT_AUTO_UPDATE", "false")
                .output()
                .expect("run copilot --version");
            assert!(out.status.success(), "{out:?}");
            dir
        })
        .clone()
}

/// Copilot's user configuration: the brain a trusted folder (what a person
/// answers at Copilot's first start in it), as Copilot keeps it.
fn trust_the_brain(s: &Setup) {
    let dir = s.home.path().join(".copilot");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("config.json"),
        format!(
            "// User settings belong in settings.json.\n// This file is managed automatically.\n{}\n",
            json!({ "trustedFolders": [s.b.path().display().to_string()] })
        ),
    )
    .expect("write config");
}

/// `copilot -p` on the scripted model speaking `api` (`chat`, or `openai`
/// for the Responses API, where Copilot offers GPT-5 models
/// `apply_patch`).
fn copilot_command(s: &Setup, exe: &Path, api: &str, model: &FakeModel) -> std::process::Command {
    let url = format!("http://127.0.0.1:{}/v1", model.port);
    let cache = cache_home(exe);
    let (model_name, wire) = if api == "openai" {
        ("gpt-5.1-codex", "responses")
    } else {
        ("gpt-4.1", "completions")
    };
    let mut cmd = s.command(
        exe,
        &[
            ("COPILOT_PROVIDER_BASE_URL", &url),
            ("COPILOT_PROVIDER_WIRE_API", wire),
            ("COPILOT_MODEL", model_name),
            ("COPILOT_OFFLINE", "true"),
            ("COPILOT_CACHE_HOME", cache.to_str().expect("utf-8")),
        ],
    );
    // The agent's shell names bsi by its path here, outside the brain:
    // Copilot asks before a command touches a path outside its directories
    // (`--allow-all-tools` does not cover it), and nobody answers in `-p`.
    let bsi_dir = bin().parent().expect("bsi's directory").to_path_buf();
    cmd.args([
        "-p",
        "do the work",
        "--allow-all-tools",
        "--no-auto-update",
        "--no-ask-user",
        "--add-dir",
        bsi_dir.to_str().expect("utf-8"),
    ]);
    cmd
}

/// `copilot -p` run headless on `turns` in the trusted brain; `path`
/// replaces the `PATH` it runs with.
fn run_copilot(
    s: &Setup,
    exe: &Path,
    api: &str,
    turns: &Value,
    path: Option<std::ffi::OsString>,
) -> (FakeModel, Run) {
    let model = FakeModel::start(api, turns, s.work.path());
    trust_the_brain(s);
    let mut cmd = copilot_command(s, exe, api, &model);
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    let run = run_bounded(cmd);
    (model, run)
}

fn edit(s: &Setup, file: &str, old: &str, new: &str) -> Value {
    json!({"tool": "edit", "args": {"path": s.abs(file), "old_str": old, "new_str": new}})
}

fn bash(command: &str) -> Value {
    json!({"tool": "bash", "args": {"command": command, "description": "run"}})
}

/// The whole run: the briefing reaches the model, the edit inside
/// `sess-other`'s section is refused (reason to the model, file unchanged),
/// the free edit lands, the agent's own `bsi open` in Copilot's shell is
/// the hook's session (found by `COPILOT_AGENT_SESSION_ID`), and the stop
/// sends it back once. Then the doctor reads what Copilot and bsi recorded.
#[test]
fn copilot_cli() {
    let Some(exe) = cli("copilot") else { return };
    let s = Setup::new("copilot");
    let (turns, refused) = script(
        &|_| None,
        &|f, old, new| edit(&s, f, old, new),
        &bash,
        // No `--session`: bsi finds the session from the id Copilot sets
        // in its shell.
        &format!("{} open agents/alice.md", bsi_word()),
    );
    let (model, run) = run_copilot(&s, &exe, "chat", &json!(turns), None);
    check_run(&s, &model, &run, turns.len(), refused);
    // The refusal is the edit tool's result, as Copilot hands it over.
    let after = last_message(&model.turns()[refused + 1]);
    assert!(
        after.contains("Denied by preToolUse hook: bsi: refused"),
        "{after}"
    );
    let mut doctor = s.command(&bin(), &[]);
    doctor.args(["agent", "doctor", "copilot"]);
    let d = Run::from_output(doctor.output().expect("run doctor"));
    d.ok()
        .stdout_has("ok      hooks    bsi's 3 hooks are in .github/hooks/bsi.json")
        .stdout_has("ok      program")
        .stdout_has("ok      trust    the folder is trusted")
        .stdout_has("ok      mcp      bsi's MCP server (`bsi mcp`) is registered in .mcp.json")
        .stdout_has("ok      reached");
}

/// Untrusted, Copilot runs none of the folder's hooks and says nothing:
/// the held section is edited. The doctor names the missing step.
#[test]
fn copilot_cli_runs_no_hook_in_an_untrusted_folder_and_the_doctor_says_so() {
    let Some(exe) = cli("copilot") else { return };
    let s = Setup::new("copilot");
    let turns = json!([edit(&s, "projets/plan.md", "goal text", "stolen goal"), {"text": "done"}]);
    let model = FakeModel::start("chat", &turns, s.work.path());
    let run = run_bounded(copilot_command(&s, &exe, "chat", &model));
    assert_eq!(run.code, 0, "{run:?}");
    // Copilot's rule, not bsi's: no hook of the untrusted folder ran.
    assert!(s.events().is_empty(), "{:?}", s.events());
    assert!(
        s.b.read("projets/plan.md").contains("stolen goal"),
        "an untrusted folder's hooks run now: say so in docs/agent-tools.md"
    );
    let mut doctor = s.command(&bin(), &[]);
    doctor.args(["agent", "doctor", "copilot"]);
    let d = Run::from_output(doctor.output().expect("run doctor"));
    d.code(1)
        .stdout_has("MISSING trust    the folder is not trusted")
        .stdout_has("--trust-folder");
}

/// With `claim_on_write`, a free edit is claimed for the agent's session
/// and the model is told, in the message Copilot adds after the tool's
/// result (`additionalContext`).
#[test]
fn copilot_cli_claim_on_write_tells_the_model() {
    let Some(exe) = cli("copilot") else { return };
    let s = Setup::new("copilot");
    s.b.write(".bsi.toml", "claim_on_write = true\n");
    let turns = json!([
        edit(&s, "projets/plan.md", "risk text", "new risk"),
        {"text": "done"},
        {"text": "done, keeping the claim on purpose"},
    ]);
    let (model, run) = run_copilot(&s, &exe, "chat", &turns, None);
    let turns = model.turns();
    let ctx = format!("{run:?}\n--- turns\n{turns:#?}");
    assert_eq!(run.code, 0, "{ctx}");
    let after = last_message(&turns[1]);
    assert!(
        after.contains("Additional context from preToolUse hook"),
        "{after}\n{ctx}"
    );
    check_claimed_on_write(&s, &turns, &after, &ctx);
}

/// Files written through Copilot's `bash` are judged like edits.
#[test]
fn copilot_cli_judges_what_its_shell_writes() {
    let Some(exe) = cli("copilot") else { return };
    let s = Setup::new("copilot");
    let turns = shell_writes_script(&bash);
    let (model, run) = run_copilot(&s, &exe, "chat", &json!(turns), None);
    check_shell_writes(&s, &model, &run, turns.len());
}

/// Over the Responses API Copilot offers GPT-5 models the freeform
/// `apply_patch`, whose hook event carries the patch text itself: a patch
/// inside the held section is refused, a free one lands.
#[test]
fn copilot_cli_apply_patch_is_judged() {
    let Some(exe) = cli("copilot") else { return };
    let s = Setup::new("copilot");
    let patch = |old: &str, new: &str| {
        json!({"tool": "apply_patch", "custom": true, "args": format!(
            "*** Begin Patch\n*** Update File: projets/plan.md\n@@\n-{old}\n+{new}\n*** End Patch\n"
        )})
    };
    let turns = json!([
        patch("goal text", "stolen goal"),
        patch("risk text", "new risk"),
        {"text": "done"},
        {"text": "done, keeping the claim on purpose"},
    ]);
    let (model, run) = run_copilot(&s, &exe, "openai", &turns, None);
    let turns = model.turns();
    let ctx = format!("{run:?}\n--- turns\n{turns:#?}");
    assert_eq!(run.code, 0, "{ctx}");
    assert!(
        turns[1].contains("bsi: refused") && turns[1].contains("sess-other"),
        "{ctx}"
    );
    let plan = s.b.read("projets/plan.md");
    assert!(
        plan.contains("goal text") && !plan.contains("stolen"),
        "{plan}"
    );
    assert!(plan.contains("new risk"), "{plan}\n{ctx}");
    let events = s.events();
    assert!(
        events
            .iter()
            .any(|(_, e)| e["toolName"] == "apply_patch" && e["toolArgs"].is_string()),
        "{events:?}"
    );
    check_fixtures("copilot", &s, &model);
}

/// A hook that cannot run bsi: every call goes through, and the model is
/// told, at the session's start and with the edit (Copilot shows the person
/// no hook output). This is also what Copilot's cloud agent on GitHub
/// meets, reading the same `.github/hooks/bsi.json` where bsi is not
/// installed.
#[test]
fn copilot_cli_without_bsi_on_path_lets_edits_through_and_tells_the_model() {
    let Some(exe) = cli("copilot") else { return };
    let s = Setup::new("copilot");
    let turns = json!([edit(&s, "agents/alice.md", "notes", "unchecked"), {"text": "done"}]);
    let (model, run) = run_copilot(&s, &exe, "chat", &turns, Some(path_without_bsi()));
    let turns = model.turns();
    let ctx = format!("{run:?}\n--- turns\n{turns:#?}");
    assert_eq!(run.code, 0, "{ctx}");
    assert!(s.b.read("agents/alice.md").contains("unchecked"), "{ctx}");
    assert!(
        turns[0].contains("the hook could not run bsi (is it on the PATH GitHub Copilot CLI runs hooks with?); the session starts without its briefing"),
        "the session-start fallback reaches the model\n{ctx}"
    );
    assert!(
        turns[1].contains("the hook could not run bsi (is it on the PATH GitHub Copilot CLI runs hooks with?); this edit goes through unchecked"),
        "the edit fallback reaches the model\n{ctx}"
    );
}

/// One identity for the hook, the shell and MCP: Copilot starts the `bsi`
/// server of `.mcp.json` (registered by `bsi agent install copilot`) with
/// `COPILOT_AGENT_SESSION_ID` in its environment, so its `claim` acts for
/// the session the session-start hook named, and the edit inside that claim
/// passes the edit hook as the session's own.
#[test]
fn copilot_cli_claims_through_mcp_as_the_hooks_session() {
    let Some(exe) = cli("copilot") else { return };
    let s = Setup::new("copilot");
    let turns = json!([
        {"tool": "bsi-claim", "args": {"scopes": ["projets/plan.md#Risks"], "note": "risks"}},
        edit(&s, "projets/plan.md", "risk text", "new risk"),
        {"tool": "bsi-whoami", "args": {}},
        {"text": "done"},
        {"text": "done, keeping the claim on purpose"},
    ]);
    let (model, run) = run_copilot(&s, &exe, "chat", &turns, None);
    let turns = model.turns();
    let ctx = format!("{run:?}\n--- turns\n{turns:#?}");
    assert_eq!(run.code, 0, "{ctx}");
    let session = crate::agent_cli::briefed_session(&turns);
    let granted = last_message(&turns[1]);
    assert!(
        granted.contains("projets/plan.md#Risks") && granted.contains(&session),
        "the grant, for the hook's session: {granted}\n{ctx}"
    );
    assert!(s.b.read("projets/plan.md").contains("new risk"), "{ctx}");
    let who = last_message(&turns[3]);
    assert!(
        who.contains(&format!("Session {session} (agent copilot)")),
        "{who}\n{ctx}"
    );
    let active = s.b.active();
    assert!(
        active.iter().any(|r| r.contains("projets/plan.md#Risks")
            && r.contains(&session)
            && r.contains("| copilot |")),
        "{active:?}"
    );
}
