//! A program on the released Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`,
//! through the Claude Code it bundles), driven against the scripted model
//! on 127.0.0.1 speaking the Anthropic Messages API: the program is
//! `examples/claude-agent-sdk/guarded-agent.mjs`, run as shipped, in both
//! of its ways (the project's settings loaded, or bsi's hooks as SDK
//! callbacks). In each, an edit inside another session's section is
//! refused, the file is unchanged, and the refusal reaches the program's
//! model; a free edit passes.
//!
//! The SDK is an npm package at the version `.ci/run` pins, installed in
//! the same prefix as the agent CLIs (`BSI_AGENT_CLIS`); missing, the test
//! says so and passes, unless `BSI_REQUIRE_AGENT_CLIS` is set.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::agent_cli::{FakeModel, Setup, run_bounded};

/// The installed SDK package, or `None` (the reason printed) when it is not
/// installed here.
fn sdk() -> Option<PathBuf> {
    let clis = match std::env::var_os("BSI_AGENT_CLIS").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/agent-clis"),
    };
    let dir = clis.join("lib/node_modules/@anthropic-ai/claude-agent-sdk");
    if dir.join("package.json").exists() {
        return Some(dir);
    }
    let why = format!("{} is not installed", dir.display());
    if std::env::var_os("BSI_REQUIRE_AGENT_CLIS").is_some() {
        panic!("{why}: `.ci/run` installs the pinned Claude Agent SDK");
    }
    println!("skipped: {why} (`.ci/run` installs the pinned Claude Agent SDK)");
    None
}

/// The example program, copied as shipped into a directory of the test's
/// whose `node_modules` holds the installed SDK (as `npm install` would).
fn program(s: &Setup, sdk: &Path) -> PathBuf {
    let dir = s.work.path().join("program");
    let modules = dir.join("node_modules/@anthropic-ai");
    std::fs::create_dir_all(&modules).expect("mkdir");
    std::os::unix::fs::symlink(sdk, modules.join("claude-agent-sdk")).expect("link the SDK");
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/claude-agent-sdk/guarded-agent.mjs");
    let to = dir.join("guarded-agent.mjs");
    std::fs::copy(&example, &to).expect("copy the example");
    to
}

/// Runs the example in the brain with `BSI_SDK_HOOKS=how`, and checks what
/// every way must show.
fn check_guarded(how: &str) {
    let Some(sdk) = sdk() else { return };
    let s = Setup::new("claude");
    let plan = s.abs("projets/plan.md");
    let turns = json!([
        {"tool": "Read", "args": {"file_path": plan}},
        {"tool": "Edit", "args": {"file_path": plan, "old_string": "goal text", "new_string": "stolen goal"}},
        {"tool": "Edit", "args": {"file_path": plan, "old_string": "risk text", "new_string": "new risk"}},
        {"text": "done"},
    ]);
    let model = FakeModel::start("anthropic", &turns, s.work.path());
    let url = format!("http://127.0.0.1:{}", model.port);
    let node = Path::new("node");
    let mut cmd = s.command(
        node,
        &[
            ("ANTHROPIC_BASE_URL", &url),
            ("ANTHROPIC_API_KEY", "sk-test"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("BSI_SDK_HOOKS", how),
        ],
    );
    cmd.arg(program(&s, &sdk)).arg("Tidy the plan.");
    let run = run_bounded(cmd);
    let turns = model.turns();
    let kinds: Vec<String> = s.events().into_iter().map(|(k, _)| k).collect();
    let ctx = format!(
        "--- program stdout\n{}\n--- program stderr\n{}\n--- hook events\n{kinds:?}\n--- turns\n{turns:#?}",
        run.stdout, run.stderr
    );
    assert_eq!(run.code, 0, "{ctx}");
    // The briefing reached the program's model through the project's
    // settings. The SDK runs no `SessionStart` callback of a program (at
    // the pinned release): there the briefing never comes, as
    // docs/agent-tools.md says.
    let briefed = turns[0].contains("bsi guards this repository");
    let started = kinds.iter().any(|k| k == "session-start");
    if how == "settings" {
        assert!(briefed && started, "the briefing reaches the model\n{ctx}");
    } else {
        assert!(
            !briefed && !started,
            "the SDK now runs SessionStart callbacks: say so in docs/agent-tools.md\n{ctx}"
        );
    }
    // Refused before the edit: the file unchanged there, the reason in the
    // model's next request.
    let after = &turns[2];
    assert!(
        after.contains("bsi: refused") && after.contains("sess-other"),
        "the refusal reaches the program's model: {after}\n{ctx}"
    );
    let text = s.b.read("projets/plan.md");
    assert!(
        text.contains("goal text") && !text.contains("stolen"),
        "{text}\n{ctx}"
    );
    assert!(
        text.contains("new risk"),
        "the free edit passes: {text}\n{ctx}"
    );
    assert!(run.stdout.contains("done"), "{ctx}");
}

#[test]
fn an_agent_sdk_program_loading_the_project_s_settings_is_guarded() {
    check_guarded("settings");
}

#[test]
fn an_agent_sdk_program_with_bsi_s_hooks_as_callbacks_is_guarded() {
    check_guarded("callbacks");
}
