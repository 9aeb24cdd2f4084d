//! `bsi hook edit|session-start|stop --tool T`: each tool's real event
//! shapes (tests/fixtures/agents, named after the documented formats) fed to
//! the real binary on real repositories; and `bsi open --wait`.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Brain, Machines, Run, output_with_stdin};
use crate::transcript::Transcript;

pub(crate) const PLAN: &str = "# Plan\n\nintro\n\n## Goals\n\ngoal text\n\n### Q1\n\nq1 text\n\n### Q2\n\nq2 text\n\n## Risks\n\nrisk text\n";

/// A fixture event, its made-up brain path replaced by `b`'s.
pub(crate) fn event(b: &Brain, name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    text.replace("/home/me/brain", b.path().to_str().expect("utf-8 path"))
}

/// Runs `bsi ARGS` with `input` on stdin and extra environment.
pub(crate) fn with_stdin(b: &Brain, args: &[&str], input: &str, env: &[(&str, &str)]) -> Run {
    let mut cmd = b.command(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    output_with_stdin(&mut cmd, input)
}

pub(crate) fn hook(b: &Brain, kind: &str, tool: &str, input: &str) -> Run {
    with_stdin(b, &["hook", kind, "--tool", tool], input, &[])
}

/// The edit hook of `tool` fed the fixture event `name` as it is.
fn fixture_edit(b: &Brain, tool: &str, name: &str) -> Run {
    hook(b, "edit", tool, &event(b, name))
}

pub(crate) fn other_holds(b: &Brain, scope: &str) {
    b.bsi(&["open", scope, "--session", "sess-other", "--agent", "bob"])
        .ok();
}

/// The refusal's text for the agent, in the tool's protocol; `None` when
/// the answer does not refuse.
pub(crate) fn denial(tool: &str, r: &Run) -> Option<String> {
    assert_eq!(r.code, 0, "refusals and passes exit 0: {r:?}");
    if r.stdout.trim().is_empty() {
        return None;
    }
    let v = r.json();
    let s = |v: &serde_json::Value| v.as_str().map(String::from);
    match tool {
        "claude" | "codex" => (v["hookSpecificOutput"]["permissionDecision"] == "deny")
            .then(|| s(&v["hookSpecificOutput"]["permissionDecisionReason"]))
            .flatten(),
        "gemini" => (v["decision"] == "deny").then(|| s(&v["reason"])).flatten(),
        "cursor" => (v["permission"] == "deny")
            .then(|| s(&v["agent_message"]))
            .flatten(),
        "copilot" => (v["permissionDecision"] == "deny")
            .then(|| s(&v["permissionDecisionReason"]))
            .flatten(),
        _ => unreachable!(),
    }
}

/// An edit event of `tool` that replaces `old` by `new` in `file`.
pub(crate) fn replace_event(b: &Brain, tool: &str, file: &str, old: &str, new: &str) -> String {
    let abs = b.path().join(file);
    let abs = abs.to_str().expect("utf-8");
    match tool {
        "claude" => event(b, "claude-pretooluse-edit.json")
            .replace(&format!("{}/projets/plan.md", b.path().display()), abs)
            .replace("\"goal text\"", &format!("{old:?}"))
            .replace("\"better goal text\"", &format!("{new:?}")),
        "gemini" => event(b, "gemini-beforetool-replace.json")
            .replace("\"projets/plan.md\"", &format!("{file:?}"))
            .replace("\"risk text\"", &format!("{old:?}"))
            .replace("\"no risk\"", &format!("{new:?}"))
            .replace("\"allow_multiple\": true", "\"allow_multiple\": false"),
        "codex" => {
            let patch = format!(
                "*** Begin Patch\n*** Update File: {file}\n@@\n-{old}\n+{new}\n*** End Patch\n"
            );
            let v: serde_json::Value =
                serde_json::from_str(&event(b, "codex-pretooluse-apply-patch.json")).expect("json");
            let mut v = v;
            v["tool_input"]["command"] = serde_json::Value::String(patch);
            v.to_string()
        }
        "cursor" => {
            let text = b.read(file).replacen(old, new, 1);
            let mut v: serde_json::Value =
                serde_json::from_str(&event(b, "cursor-pretooluse-write.json")).expect("json");
            v["tool_input"]["file_path"] = serde_json::Value::String(abs.to_string());
            v["tool_input"]["content"] = serde_json::Value::String(text);
            v.to_string()
        }
        "copilot" => {
            let mut v: serde_json::Value =
                serde_json::from_str(&event(b, "copilot-pretooluse-edit.json")).expect("json");
            v["toolArgs"]["path"] = serde_json::Value::String(abs.to_string());
            v["toolArgs"]["old_str"] = serde_json::Value::String(old.to_string());
            v["toolArgs"]["new_str"] = serde_json::Value::String(new.to_string());
            v.to_string()
        }
        _ => unreachable!(),
    }
}

pub(crate) const TOOLS: [&str; 5] = ["claude", "codex", "gemini", "cursor", "copilot"];

#[test]
fn agent_hook_refuses_an_edit_inside_another_sessions_section_in_each_protocol() {
    for tool in TOOLS {
        let b = Brain::new();
        other_holds(&b, "projets/plan.md#Goals");
        let before = (b.commits(), b.user_state());
        let ev = replace_event(&b, tool, "projets/plan.md", "goal text", "better goal text");
        let mut t = Transcript::new(&b);
        t.note(&format!(
            "{tool} edits projets/plan.md#Goals, which sess-other holds"
        ));
        let r = t.bsi_stdin(&["hook", "edit", "--tool", tool], &ev, "an edit event");
        // The answer is a refusal in the tool's own protocol; the whole of
        // it (holder, expiry, free sections, the commands to run) is in the
        // transcript.
        denial(tool, &r).unwrap_or_else(|| panic!("{tool}: not refused: {r:?}"));
        assert_eq!(b.commits(), before.0, "{tool}: a refusal writes no claim");
        assert_eq!(b.user_state(), before.1);
        // An edit of another section of the same file goes through.
        let ev = replace_event(&b, tool, "projets/plan.md", "risk text", "no risk");
        let r = hook(&b, "edit", tool, &ev);
        assert_eq!(denial(tool, &r), None, "{tool}: {r:?}");
        assert!(!r.stderr.contains("warning"), "{tool}: {}", r.stderr);
        // A stale claim refuses too, and says who frees it.
        let b = Brain::new();
        other_holds(&b, "projets/plan.md#Goals");
        b.bsi_env(&["watchdog"], &[("BSI_NOW", "2026-03-14T20:00:00Z")])
            .code(4)
            .stdout_has("Now stale: sess-other projets/plan.md#Goals (overdue 8h30m)");
        let ev = replace_event(&b, tool, "projets/plan.md", "q1 text", "q1 done");
        t.note("A stale claim refuses too, and says who frees it.");
        let r = t.bsi_stdin(&["hook", "edit", "--tool", tool], &ev, "an edit event");
        denial(tool, &r).expect("refused");
        t.check(&format!("agent_hook/refusal_{tool}.txt"));
    }
}

/// A file whose first section's heading is a command substitution.
const RISKY: &str =
    "# Plan\n\n## Risks $(touch X)\n\nrisk text\n\n## Open questions\n\nquestion text\n";
const RISKS: &str = "projets/risky.md#Risks $(touch X)";
const QUESTIONS: &str = "projets/risky.md#Open questions";

/// Every `bsi open …` command in backquotes in `text`.
fn commands(text: &str) -> Vec<&str> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|c| c.starts_with("bsi open "))
        .collect()
}

/// The words `sh -c` hands `bsi` when it runs `command` (a pasted command,
/// `bsi` standing in as a function that writes down its arguments), in an
/// empty directory that must stay without a file `X`.
fn words_of(command: &str) -> Vec<String> {
    let dir = crate::common::scratch("bsi-sh");
    let script = format!("bsi() {{ printf '%s\\0' \"$@\" > args; }}\n{command}\n");
    let r = Run::from_output(
        std::process::Command::new("sh")
            .args(["-c", &script])
            .current_dir(dir.path())
            .output()
            .expect("run sh"),
    );
    assert_eq!(r.code, 0, "sh -c {command:?}: {}", r.stderr);
    assert!(!dir.path().join("X").exists(), "{command} ran `touch X`");
    let args = std::fs::read(dir.path().join("args")).expect("the arguments");
    let mut words: Vec<String> = args
        .split(|b| *b == 0)
        .map(|w| String::from_utf8(w.to_vec()).expect("utf-8"))
        .collect();
    assert_eq!(words.pop().as_deref(), Some(""), "{command}");
    words
}

/// What `bsi open` gets from a pasted command: the words after `open` up to
/// the first flag.
fn scopes_opened(command: &str) -> Vec<String> {
    let words = words_of(command);
    assert_eq!(words.first().map(String::as_str), Some("open"), "{command}");
    words[1..]
        .iter()
        .take_while(|w| !w.starts_with("--"))
        .cloned()
        .collect()
}

#[test]
fn a_heading_with_shell_syntax_is_one_argument_in_every_command_bsi_suggests() {
    let b = Brain::new();
    b.write("projets/risky.md", RISKY);
    b.git(&["add", "projets/risky.md"]);
    b.git(&["commit", "-q", "-m", "risky"]);
    other_holds(&b, RISKS);

    // The CLI: the whole file is refused, the free section proposed.
    let r = b.bsi(&["open", "projets/risky.md", "--session", "mine"]);
    r.code(3);
    let cli = commands(&r.stderr);
    assert!(!cli.is_empty(), "{}", r.stderr);
    // Each opens the free section, but the wait in the queue, which asks
    // again for what was refused.
    for c in &cli {
        let asked: &[&str] = if c.contains("--wait") {
            &["projets/risky.md"]
        } else {
            &[QUESTIONS]
        };
        assert_eq!(scopes_opened(c), asked, "{c}");
    }
    // The same command in the JSON hint.
    let r = b.bsi(&["open", "projets/risky.md", "--session", "mine", "--json"]);
    r.code(3);
    let hint = r.json()["hint"].as_str().expect("hint").to_string();
    assert_eq!(commands(&hint), cli, "{hint}");

    // The edit hook of each tool, for an edit inside the held section: the
    // free section, and the held one to wait for, each one argument.
    for tool in TOOLS {
        let ev = replace_event(&b, tool, "projets/risky.md", "risk text", "no risk");
        let r = hook(&b, "edit", tool, &ev);
        let reason = denial(tool, &r).unwrap_or_else(|| panic!("{tool}: not refused: {r:?}"));
        let opened: Vec<Vec<String>> = commands(&reason).into_iter().map(scopes_opened).collect();
        assert_eq!(opened, [vec![QUESTIONS], vec![RISKS]], "{tool}: {reason}");
    }

    // Another session holds the other section: now the CLI proposes the
    // heading with `$(touch X)` in it, as one argument that runs nothing.
    b.bsi(&["close", "sess-other", "--agent", "bob"]).ok();
    other_holds(&b, QUESTIONS);
    let r = b.bsi(&["open", "projets/risky.md", "--session", "mine"]);
    r.code(3);
    let cli = commands(&r.stderr);
    assert!(!cli.is_empty(), "{}", r.stderr);
    for c in cli {
        let asked: &[&str] = if c.contains("--wait") {
            &["projets/risky.md"]
        } else {
            &[RISKS]
        };
        assert_eq!(scopes_opened(c), asked, "{c}");
    }
    assert!(!b.path().join("X").exists());
}

#[test]
fn agent_hook_refuses_a_multi_file_change_touching_one_claimed_file() {
    // Codex: a patch of four files, one of them (deleted) held by another session.
    let b = Brain::new();
    other_holds(&b, "agents/bob.md");
    let r = fixture_edit(&b, "codex", "codex-pretooluse-apply-patch.json");
    let reason = denial("codex", &r).expect("refused");
    assert!(reason.contains("agents/bob.md is inside an active claim of session sess-other"));
    // The same patch with nothing claimed goes through.
    let b = Brain::new();
    let r = fixture_edit(&b, "codex", "codex-pretooluse-apply-patch.json");
    assert_eq!(denial("codex", &r), None);
    // The destination of a move is checked too.
    let b = Brain::new();
    other_holds(&b, "projets/plan-2026.md");
    let r = fixture_edit(&b, "codex", "codex-pretooluse-apply-patch.json");
    assert!(
        denial("codex", &r)
            .expect("refused")
            .contains("projets/plan-2026.md")
    );
    // Claude's MultiEdit: the second edit reaches into the held section.
    let b = Brain::new();
    other_holds(&b, "projets/plan.md#Risks");
    let r = fixture_edit(&b, "claude", "claude-pretooluse-multiedit.json");
    let reason = denial("claude", &r).expect("refused");
    assert!(reason.contains("under `Risks`"), "{reason}");
}

/// The edit hook of `tool` fed `input`, run from `dir` (not the brain).
fn hook_from(b: &Brain, dir: &std::path::Path, tool: &str, input: &str) -> Run {
    let mut cmd = b.command(&["hook", "edit", "--tool", tool]);
    cmd.current_dir(dir);
    output_with_stdin(&mut cmd, input)
}

#[test]
fn agent_hook_finds_the_brain_from_the_edited_file_through_links_and_other_work_trees() {
    let b = Brain::new();
    other_holds(&b, "projets/plan.md#Goals");
    // The plain path is refused.
    let r = fixture_edit(&b, "claude", "claude-pretooluse-edit.json");
    let plain = denial("claude", &r).expect("the plain path is refused");
    assert!(
        plain.contains("projets/plan.md line 7 under `Goals`"),
        "{plain}"
    );
    // Through a link to a folder inside the brain, and a link to the file:
    // the file they reach is judged, under its own name.
    std::os::unix::fs::symlink("projets", b.path().join("pj")).expect("symlink");
    std::os::unix::fs::symlink("projets/plan.md", b.path().join("plan-link.md")).expect("symlink");
    let outside = crate::common::scratch("bsi-outside");
    std::fs::write(outside.path().join("plan.md"), PLAN).expect("write");
    std::os::unix::fs::symlink(outside.path().join("plan.md"), b.path().join("away.md"))
        .expect("symlink");
    let before = (b.commits(), b.user_state());
    for name in [
        "claude-pretooluse-edit-dir-link.json",
        "claude-pretooluse-edit-file-link.json",
    ] {
        let r = fixture_edit(&b, "claude", name);
        let reason = denial("claude", &r).unwrap_or_else(|| panic!("{name} let through: {r:?}"));
        assert!(
            reason.contains("projets/plan.md line 7 under `Goals`")
                && reason.contains("sess-other"),
            "{name}: {reason}"
        );
    }
    // A free section through the same link goes through.
    let free = event(&b, "claude-pretooluse-edit-dir-link.json")
        .replace("\"goal text\"", "\"risk text\"")
        .replace("\"better goal text\"", "\"no risk\"");
    assert_eq!(denial("claude", &hook(&b, "edit", "claude", &free)), None);
    // A link that leads out of the brain is not bsi's.
    let away =
        event(&b, "claude-pretooluse-edit-file-link.json").replace("plan-link.md", "away.md");
    let r = hook(&b, "edit", "claude", &away);
    r.ok();
    assert_eq!(r.stdout, "", "{r:?}");
    // The agent runs in another work tree of the clone, or outside any
    // repository: the file's own work tree decides.
    let (_place, wt) = b.worktree("feature", Some("feature"));
    let ev = event(&b, "claude-pretooluse-edit-other-worktree.json")
        .replace("/home/me/worktrees/feature", wt.to_str().expect("utf-8"));
    let r = hook_from(&b, &wt, "claude", &ev);
    assert!(denial("claude", &r).is_some_and(|d| d == plain), "{r:?}");
    let ev = event(&b, "claude-pretooluse-edit-cwd-outside.json")
        .replace("/home/me/scratch", outside.path().to_str().expect("utf-8"));
    let r = hook_from(&b, outside.path(), "claude", &ev);
    assert!(denial("claude", &r).is_some_and(|d| d == plain), "{r:?}");
    assert!(!r.stderr.contains("unchecked"), "{r:?}");
    // Cursor with the brain as its second workspace root.
    let ev = event(&b, "cursor-pretooluse-write-second-root.json")
        .replace("/home/me/notes", outside.path().to_str().expect("utf-8"));
    let r = hook_from(&b, outside.path(), "cursor", &ev);
    let reason = denial("cursor", &r).expect("refused");
    assert!(
        reason.contains("under `Goals`") && reason.contains("sess-other"),
        "{reason}"
    );
    // Nothing written by any of it.
    assert_eq!((b.commits(), b.user_state()), before);
    // A work tree of the clone nested in the brain's (`.worktrees/…`) is
    // its own, and a submodule-like repository nested in the brain stays
    // the brain's: the agent runs at the brain root.
    b.git(&["worktree", "add", "-q", ".worktrees/nested", "-b", "nested"]);
    let file = format!("{}/projets/plan.md", b.path().display());
    let ev = event(&b, "claude-pretooluse-edit.json").replace(
        &file,
        &format!("{}/.worktrees/nested/projets/plan.md", b.path().display()),
    );
    let r = hook(&b, "edit", "claude", &ev);
    assert!(denial("claude", &r).is_some_and(|d| d == plain), "{r:?}");
    other_holds(&b, "vendor/");
    let vendor = b.path().join("vendor/lib");
    std::fs::create_dir_all(&vendor).expect("mkdir");
    let mut git = std::process::Command::new("git");
    crate::common::clean_env(&mut git, b.path());
    git.current_dir(&vendor)
        .args(["init", "-q"])
        .output()
        .expect("git init");
    std::fs::write(vendor.join("notes.md"), PLAN).expect("write");
    let ev = event(&b, "claude-pretooluse-edit.json")
        .replace(&file, &format!("{}/notes.md", vendor.display()));
    let r = hook(&b, "edit", "claude", &ev);
    let reason = denial("claude", &r).expect("refused");
    assert!(reason.contains("vendor/lib/notes.md"), "{reason}");
}

#[test]
fn agent_hook_lets_a_whole_file_write_change_only_the_agents_own_section() {
    let b = Brain::new();
    other_holds(&b, "projets/plan.md#Goals");
    b.bsi(&["open", "projets/plan.md#Risks", "--session", "sess-me"])
        .ok();
    let write = |content: &str| {
        let mut v: serde_json::Value =
            serde_json::from_str(&event(&b, "claude-pretooluse-write.json")).expect("json");
        v["tool_input"]["file_path"] =
            serde_json::Value::String(b.path().join("projets/plan.md").display().to_string());
        v["tool_input"]["content"] = serde_json::Value::String(content.to_string());
        v.to_string()
    };
    let env = [("BSI_SESSION", "sess-me")];
    let own = write(&PLAN.replace("risk text", "no risk left"));
    let r = with_stdin(&b, &["hook", "edit", "--tool", "claude"], &own, &env);
    assert_eq!(denial("claude", &r), None, "{r:?}");
    assert_eq!(r.stdout, "", "an allowed edit gets no decision");
    let theirs = write(&PLAN.replace("goal text", "my goals"));
    let r = with_stdin(&b, &["hook", "edit", "--tool", "claude"], &theirs, &env);
    assert!(
        denial("claude", &r)
            .expect("refused")
            .contains("under `Goals`")
    );
    // Outside every claim: allowed in the normal mode, refused in strict.
    let outside = write(&PLAN.replace("intro", "a new intro"));
    let r = with_stdin(&b, &["hook", "edit", "--tool", "claude"], &outside, &env);
    assert_eq!(denial("claude", &r), None);
    b.git(&["config", "bsi.hookMode", "strict"]);
    let r = with_stdin(&b, &["hook", "edit", "--tool", "claude"], &outside, &env);
    let reason = denial("claude", &r).expect("strict refuses");
    assert!(
        reason.contains(
            "claim what the change touches first: `bsi open projets/plan.md --session sess-me`"
        ),
        "{reason}"
    );
    // warn: reported, not refused.
    b.git(&["config", "bsi.hookMode", "warn"]);
    let r = with_stdin(&b, &["hook", "edit", "--tool", "claude"], &theirs, &env);
    assert_eq!(denial("claude", &r), None);
    r.stderr_has("sess-other");
    // One prefix, one line per finding inside another's claim, to the
    // person and to the agent.
    let v = r.json();
    let told = v["systemMessage"].as_str().expect("message");
    assert!(told.starts_with("bsi: warning: projets/plan.md"), "{told}");
    assert!(!told.contains("bsi: bsi:"), "{told}");
    assert_eq!(told.lines().count(), 1, "{told}");
    assert_eq!(v["hookSpecificOutput"]["additionalContext"], told);
    assert!(!r.stderr.contains("bsi: bsi:"), "{}", r.stderr);
}

#[test]
fn agent_hook_never_refuses_an_agent_its_own_claim() {
    // The session-start hook names the session; the agent opens with it in
    // its shell; its edits there pass, in another process.
    let b = Brain::new();
    let env_file = b.path().join(".git/claude-env");
    let env_file = env_file.to_str().expect("utf-8");
    let r = with_stdin(
        &b,
        &["hook", "session-start", "--tool", "claude"],
        &event(&b, "claude-sessionstart.json"),
        &[("CLAUDE_ENV_FILE", env_file)],
    );
    r.ok();
    let line = std::fs::read_to_string(env_file).expect("env file");
    let session = line
        .trim()
        .strip_prefix("export BSI_SESSION=")
        .expect("export line")
        .to_string();
    assert!(
        r.json()["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .expect("context")
            .contains(&format!("Your bsi session: {session}"))
    );
    b.bsi(&["open", "projets/plan.md#Goals", "--session", &session])
        .ok();
    let ev = event(&b, "claude-pretooluse-edit.json");
    let r = hook(&b, "edit", "claude", &ev);
    assert_eq!(denial("claude", &r), None, "{r:?}");
    // Another Claude session is refused the same edit.
    let r = hook(&b, "edit", "claude", &ev.replace("abc123", "other-chat"));
    assert!(denial("claude", &r).expect("refused").contains(&session));
}

#[test]
fn a_codex_shell_command_acts_for_the_thread_codex_names_in_its_environment() {
    // Codex runs the agent's shell in a sandbox where the Codex process is
    // not among its ancestors, and sets the thread's id (the session id its
    // hooks are given) in every shell command: `bsi open` with no session
    // named is the claim of the session the session-start hook mapped.
    let b = Brain::new();
    // The hook records its tool's process (its nearest ancestor that is no
    // shell): here `timeout`, gone when the shell commands below run, as
    // Codex's process is out of their sight.
    let inner = b.command(&["hook", "session-start", "--tool", "codex"]);
    let mut cmd = std::process::Command::new("timeout");
    cmd.env_clear()
        .current_dir(b.path())
        .arg("60")
        .arg(inner.get_program())
        .args(inner.get_args());
    for (k, v) in inner.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    let start = output_with_stdin(&mut cmd, &event(&b, "codex-sessionstart.json"));
    start.ok();
    let context = start.json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context")
        .to_string();
    let session = context
        .split("Your bsi session: ")
        .nth(1)
        .and_then(|t| t.split(|c: char| c.is_whitespace() || c == '.').next())
        .expect("the session named")
        .to_string();
    assert!(context.contains("CODEX_THREAD_ID"), "{context}");
    assert!(!context.contains("add `--session"), "{context}");
    let thread = [("CODEX_THREAD_ID", "019a-codex-session")];
    b.bsi_env(&["open", "agents/alice.md"], &thread)
        .ok()
        .stdout_has(&session);
    let row = b
        .rows("Claims actifs")
        .into_iter()
        .find(|r| r.contains("agents/alice.md"))
        .expect("the claim's row");
    assert!(row.contains(&session) && row.contains("| codex |"), "{row}");
    // The agent's own patch of its claim passes; another thread's claim of
    // the same file is refused as another session's.
    let patch = event(&b, "codex-pretooluse-apply-patch.json");
    let only_alice = patch.replace(
        "*** Add File: projets/new.md\\n+# New\\n+\\n+fresh\\n*** Delete File: agents/bob.md\\n*** Update File: projets/plan.md\\n*** Move to: projets/plan-2026.md\\n@@\\n-# Plan\\n+# Plan 2026\\n",
        "",
    );
    assert_ne!(only_alice, patch, "the fixture's other files are cut");
    assert_eq!(
        denial("codex", &hook(&b, "edit", "codex", &only_alice)),
        None
    );
    let other = b.bsi_env(
        &["open", "agents/alice.md"],
        &[("CODEX_THREAD_ID", "019a-another-thread")],
    );
    assert_eq!(other.code, 3, "{other:?}");
    assert!(
        other
            .stderr
            .contains(&format!("{session} holds agents/alice.md"))
    );
    // `--session` still names another session.
    b.bsi_env(&["whoami", "--session", "sess-named"], &thread)
        .ok()
        .stdout_has("sess-named");
}

#[test]
fn agent_hook_fails_open_on_a_malformed_event_or_a_missing_registry() {
    let b = Brain::new();
    other_holds(&b, "projets/plan.md");
    for tool in TOOLS {
        for input in ["{not json", "[]", "{\"tool_input\": 3}"] {
            let r = hook(&b, "edit", tool, input);
            r.ok();
            assert_eq!(denial(tool, &r), None, "{tool} {input}");
            r.stderr_has("the edit goes through unchecked");
        }
        for kind in ["session-start", "stop"] {
            let r = hook(&b, kind, tool, "{not json");
            r.ok();
            assert!(!r.stdout.contains("block"), "{tool} {kind}: {r:?}");
        }
    }
    // A command line clap cannot read fails open too (exit 2 would block).
    for args in [
        &["hook", "edit", "--tool", "vim"][..],
        &["hook", "edit"][..],
        &["hook", "stop", "--tool", "claude", "--bad"][..],
        &["hook", "session-start", "--tool=cursor", "extra"][..],
    ] {
        let r = with_stdin(&b, args, "{}", &[]);
        r.ok();
        r.stderr_has("bsi could not read its command line");
    }
    // A session map bsi cannot read fails open for the session only: the
    // overlap is still refused.
    b.write(".git/bsi-agents/sessions.json", "{ not json");
    let r = fixture_edit(&b, "claude", "claude-pretooluse-edit.json");
    assert!(denial("claude", &r).is_some(), "{r:?}");
    r.stderr_has("the agent's session is unknown");
    // Not a brain bsi knows: let through, with a warning.
    let bare = Brain::bare_repo();
    bare.write("projets/plan.md", PLAN);
    bare.git(&["add", "-A"]);
    bare.git(&["commit", "-q", "-m", "base"]);
    let r = hook(
        &bare,
        "edit",
        "claude",
        &event(&bare, "claude-pretooluse-edit.json"),
    );
    r.ok();
    assert_eq!(denial("claude", &r), None);
    // No registry and no project hooks of bsi's: a user-level install's
    // hook there says nothing.
    assert_eq!((r.stdout.as_str(), r.stderr.as_str()), ("", ""));
    // With bsi's project hooks, it says bsi is not set up.
    bare.bsi(&["agent", "install", "claude"]).ok();
    let r = hook(
        &bare,
        "edit",
        "claude",
        &event(&bare, "claude-pretooluse-edit.json"),
    );
    r.ok();
    assert_eq!(denial("claude", &r), None);
    r.stderr_has("bsi init");
}

#[test]
fn agent_hook_allow_path_writes_nothing() {
    let b = Brain::new();
    other_holds(&b, "projets/plan.md#Goals");
    let before = (b.commits(), b.user_state(), b.registry_copy());
    let ev = replace_event(&b, "claude", "projets/plan.md", "risk text", "no risk");
    let r = hook(&b, "edit", "claude", &ev);
    assert_eq!(r.stdout, "");
    assert_eq!((b.commits(), b.user_state(), b.registry_copy()), before);
    assert!(
        !b.path().join(".git/bsi-agents/sessions.json").exists(),
        "no session named on the allow path"
    );
    // Not a file edit at all: untouched.
    let r = fixture_edit(&b, "claude", "claude-pretooluse-bash.json");
    r.ok();
    assert_eq!(r.stdout, "");
}

#[test]
fn agent_hook_claims_a_free_section_on_the_first_write() {
    for tool in ["claude", "gemini"] {
        let b = Brain::new();
        b.write(".bsi.toml", "claim_on_write = true\n");
        other_holds(&b, "projets/plan.md#Goals");
        let commits = b.commits();
        let user = b.user_state();
        let ev = replace_event(&b, tool, "projets/plan.md", "risk text", "no risk");
        let r = hook(&b, "edit", tool, &ev);
        assert_eq!(denial(tool, &r), None, "{tool}: {r:?}");
        assert_eq!(
            b.user_state(),
            user,
            "{tool}: HEAD, index and files untouched"
        );
        r.stdout_has(
            "bsi claimed projets/plan.md#Risks (until 2026-03-14 11:30 +00:00) for your session",
        );
        assert_eq!(b.commits(), commits + 1, "{tool}: one claim");
        let rows: Vec<String> = b
            .active()
            .into_iter()
            .filter(|r| r.contains("projets/plan.md#Risks"))
            .collect();
        assert_eq!(rows.len(), 1, "{tool}: {rows:?}");
        // The next edit of the same session passes without a second claim.
        let again = replace_event(&b, tool, "projets/plan.md", "risk text", "still no risk");
        let r = hook(&b, "edit", tool, &again);
        assert_eq!(denial(tool, &r), None);
        assert!(!r.stdout.contains("claimed"), "{tool}: {}", r.stdout);
        assert_eq!(b.commits(), commits + 1, "{tool}: no second claim");
        // Another session's claim is refused as before.
        let ev = replace_event(&b, tool, "projets/plan.md", "goal text", "mine");
        assert!(denial(tool, &hook(&b, "edit", tool, &ev)).is_some());
        assert_eq!(b.commits(), commits + 1);
    }
    // A change across sections claims the file.
    let b = Brain::new();
    b.write(".bsi.toml", "claim_on_write = true\n");
    let r = fixture_edit(&b, "claude", "claude-pretooluse-multiedit.json");
    r.stdout_has("projets/plan.md (until");
    assert_eq!(b.active().len(), 1);
}

#[test]
fn agent_hook_session_start_shows_the_other_machines_claims() {
    let Machines {
        origin: _origin,
        bare: _bare,
        a,
        b,
    } = Machines::new();
    a.bsi(&[
        "open",
        "agents/alice.md",
        "--session",
        "sess-alice",
        "--agent",
        "alice",
    ])
    .ok();
    for tool in TOOLS {
        let name = format!("{tool}-sessionstart.json");
        let r = hook(&b, "session-start", tool, &event(&b, &name));
        r.ok();
        let v = r.json();
        let context = v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .or(v["additional_context"].as_str())
            .or(v["additionalContext"].as_str())
            .unwrap_or_else(|| panic!("{tool}: {v}"));
        for want in [
            "sess-alice holds agents/alice.md",
            "fetched from the remote just now",
            "Yours: none",
            "--wait 10m",
            "bsi commit --session",
        ] {
            assert!(context.contains(want), "{tool}: {want:?} not in {context}");
        }
    }
    // Stale claims are said apart, for a person.
    a.bsi_env(&["watchdog"], &[("BSI_NOW", "2026-03-14T20:00:00Z")])
        .code(4)
        .stdout_has("Now stale: sess-alice agents/alice.md (overdue 8h30m)");
    let r = hook(
        &b,
        "session-start",
        "claude",
        &event(&b, "claude-sessionstart.json"),
    );
    let context = r.json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context")
        .to_string();
    assert!(context.contains("Stale"), "{context}");
    assert!(context.contains("STALE"), "{context}");
}

#[test]
fn agent_hook_stop_sends_the_agent_back_once_while_it_holds_claims() {
    let b = Brain::new();
    let r = hook(
        &b,
        "session-start",
        "codex",
        &event(&b, "codex-sessionstart.json"),
    );
    let v = r.json();
    // Codex has no field that sets the shell's environment: the context
    // names the session and how the shell's bsi finds it.
    assert!(v["hookSpecificOutput"].get("env").is_none(), "{v}");
    let context = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"));
    let at = context.find("Your bsi session: ").expect("session named") + 18;
    let session: String = context[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    assert!(
        context.contains("bsi finds it from the CODEX_THREAD_ID Codex sets in your shell"),
        "{context}"
    );
    let again = event(&b, "codex-stop.json");
    let stop = again.replace("\"stop_hook_active\": true", "\"stop_hook_active\": false");
    assert_ne!(again, stop, "the fixture has stop_hook_active");
    // Nothing held: it stops.
    assert_eq!(hook(&b, "stop", "codex", &stop).stdout, "");
    b.bsi(&["open", "agents/alice.md", "--session", &session])
        .ok();
    let r = hook(&b, "stop", "codex", &stop);
    let v = r.json();
    assert_eq!(v["decision"], "block");
    let reason = v["reason"].as_str().expect("reason");
    assert!(reason.contains("agents/alice.md"), "{reason}");
    assert!(reason.contains(&format!("bsi close {session}")), "{reason}");
    assert!(
        reason.contains(&format!("bsi commit --session {session}")),
        "{reason}"
    );
    // Back once already: it may stop, whether the tool says so or not
    // (Gemini CLI says `stop_hook_active: false` after any tool call).
    assert_eq!(hook(&b, "stop", "codex", &again).stdout, "");
    assert_eq!(hook(&b, "stop", "codex", &stop).stdout, "");
    // A new claim since: sent back once more.
    b.bsi(&["open", "agents/bob.md", "--session", &session])
        .ok();
    assert_eq!(hook(&b, "stop", "codex", &stop).json()["decision"], "block");
    assert_eq!(hook(&b, "stop", "codex", &stop).stdout, "");
    // Closed: it stops. (`--session`: the hooks ran under this test's
    // process, which the session map now records as the tool's.)
    b.bsi(&["close", &session, "--session", &session]).ok();
    assert_eq!(hook(&b, "stop", "codex", &stop).stdout, "");
}

// --- bsi open --wait -----------------------------------------------------

/// A `bsi open --wait` running in the background, its stderr read as it
/// comes so the test knows when it has started waiting.
struct Waiter {
    child: Child,
    stdout: std::thread::JoinHandle<String>,
    waiting: std::sync::mpsc::Receiver<()>,
}

fn spawn(b: &Brain, args: &[&str]) -> Waiter {
    use std::io::BufRead;
    let mut child = b
        .command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bsi");
    // It says it waits on stdout, before its answer.
    let pipe = child.stdout.take().expect("stdout");
    let (tx, waiting) = std::sync::mpsc::channel();
    let stdout = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufReader::new(pipe).lines() {
            let line = line.expect("read stdout");
            if line.starts_with("Waiting") {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    Waiter {
        child,
        stdout,
        waiting,
    }
}

impl Waiter {
    /// Returns once bsi has said whom it waits for, then lets it poll for
    /// `polls` more (nothing may be written meanwhile).
    fn started(&self, polls: Duration) {
        self.waiting
            .recv_timeout(Duration::from_secs(60))
            .expect("bsi says it is waiting");
        std::thread::sleep(polls);
    }

    fn finish(self) -> Run {
        let o = self.child.wait_with_output().expect("wait bsi");
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: self.stdout.join().expect("stdout reader"),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

#[test]
fn open_wait_is_granted_as_soon_as_the_holder_closes() {
    let b = Brain::new();
    other_holds(&b, "projets/plan.md#Goals");
    let commits = b.commits();
    let start = Instant::now();
    let child = spawn(
        &b,
        &[
            "open",
            "projets/plan.md#Q1",
            "--session",
            "sess-me",
            "--wait",
            "60s",
        ],
    );
    // Local polls come every 200 ms: three of them see the claim held.
    child.started(Duration::from_millis(600));
    assert_eq!(b.commits(), commits + 1, "its place in the queue, only");
    b.bsi(&["close", "sess-other", "--agent", "bob"]).ok();
    let r = child.finish();
    r.ok().stdout_has("Claim opened — projets/plan.md#Q1");
    r.stdout_has("Waiting up to 1m for sess-other (projets/plan.md#Goals, agent bob, until");
    r.stdout_has("First in the queue: the scope is yours as soon as it is free.");
    // Said on stdout, before the answer: in order for a reader of
    // stdout alone.
    assert_eq!(
        r.stdout.matches("Waiting").count(),
        1,
        "one line: {}",
        r.stdout
    );
    let waited = r.stdout.find("Waiting up to").expect("waiting");
    let opened = r.stdout.find("Claim opened").expect("opened");
    assert!(waited < opened, "{}", r.stdout);
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(
        b.commits(),
        commits + 2,
        "the place, then the close that hands the claim over (the place leaves the queue with it)"
    );
    let reg = b.registry();
    let queue = reg
        .split("## File d'attente")
        .nth(1)
        .expect("a queue table");
    assert!(!queue.contains("sess-me"), "{reg}");
}

#[test]
fn open_wait_exits_3_when_the_time_runs_out() {
    let b = Brain::new();
    other_holds(&b, "projets/plan.md#Goals");
    let before = (b.commits(), b.registry());
    let start = Instant::now();
    let r = b.bsi(&[
        "open",
        "projets/plan.md",
        "--session",
        "sess-me",
        "--wait",
        "1s",
        "--no-queue",
    ]);
    r.code(3).stderr_has("Claim refused — nothing was written.");
    r.stdout_has("Waiting up to 1s for sess-other");
    r.stdout_has("nothing is written meanwhile");
    assert!(start.elapsed() >= Duration::from_secs(1));
    assert_eq!((b.commits(), b.registry()), before);
    b.bsi(&["open", "x.md", "--wait", "soon"])
        .code(2)
        .stderr_has("--wait `soon` is not a duration");
}

#[test]
fn open_wait_sees_another_clone_close_through_the_remote() {
    let Machines {
        origin: _origin,
        bare: _bare,
        a,
        b,
    } = Machines::new();
    a.bsi(&["open", "agents/", "--session", "sess-a", "--agent", "alice"])
        .ok();
    let remote_tip = |m: &Brain| m.git(&["ls-remote", "origin", "refs/heads/brain-index"]);
    let tip = remote_tip(&b);
    let child = spawn(
        &b,
        &[
            "open",
            "agents/alice.md",
            "--session",
            "sess-b",
            "--agent",
            "bob",
            "--wait",
            "60s",
            "--no-queue",
        ],
    );
    // The first fetch comes half a second after the wait starts.
    child.started(Duration::from_millis(800));
    assert_eq!(remote_tip(&b), tip, "nothing published while waiting");
    a.bsi(&["close", "sess-a", "--agent", "alice"]).ok();
    let start = Instant::now();
    let r = child.finish();
    r.ok().stdout_has("Claim opened — agents/alice.md");
    r.stdout_has("Waiting up to 1m for sess-a (agents/, agent alice");
    assert!(start.elapsed() < Duration::from_secs(20));
    a.bsi(&["status"]).ok().stdout_has("sess-b");
}

/// The cells of a registry row.
fn cells(row: &str) -> Vec<String> {
    row.trim()
        .trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

/// A claim on the first write is recorded as the tool's agent (or as
/// `default_agent` when the configuration names one), never as the
/// user@host of a command line: `bsi close SESSION --agent TOOL`, as the
/// agent's instructions say, closes it.
#[test]
fn a_claim_on_the_first_write_is_recorded_as_the_tools_agent() {
    for (tool, config, agent) in [
        ("claude", "", "claude"),
        ("codex", "", "codex"),
        ("gemini", "", "gemini"),
        ("cursor", "", "cursor"),
        ("copilot", "", "copilot"),
        ("claude", "default_agent = \"robot\"\n", "robot"),
    ] {
        let b = Brain::new();
        b.write(".bsi.toml", &format!("claim_on_write = true\n{config}"));
        let ev = replace_event(&b, tool, "projets/plan.md", "risk text", "no risk");
        let r = hook(&b, "edit", tool, &ev);
        assert_eq!(denial(tool, &r), None, "{tool}: {r:?}");
        let rows = b.active();
        assert_eq!(rows.len(), 1, "{tool}: {rows:?}");
        let row = cells(&rows[0]);
        // A replacement claims its section; a patch or a whole-file write
        // (Codex, Cursor) the file.
        assert!(row[1].starts_with("projets/plan.md"), "{tool}: {row:?}");
        assert_eq!(row[3], agent, "{tool}: recorded as {row:?}");
        let session = row[0].clone();
        // Another agent name is refused; the tool's own closes it.
        b.bsi(&["close", &session, "--agent", "tester@box"])
            .code(1)
            .stderr_has(&format!("opened by {agent}"));
        b.bsi(&["close", &session, "--agent", agent]).ok();
        assert!(b.active().is_empty(), "{tool}: {:?}", b.active());
    }
}

/// Holds the clone's writer lock (as another bsi at work does) until
/// dropped.
pub(crate) fn hold_writer_lock(b: &Brain) -> std::fs::File {
    let dir = b.path().join(".git/bsi");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("lock"))
        .expect("open the lock");
    f.lock().expect("lock");
    f
}

/// Claim on the first write while another bsi holds the writer lock past
/// the hook's short wait: nothing can be recorded, so the edit is refused
/// for now — never let through unclaimed — with what to do; once the lock
/// is free the same edit is claimed.
#[test]
fn a_claim_on_the_first_write_that_cannot_have_the_lock_refuses_for_now() {
    for tool in ["claude", "gemini"] {
        let b = Brain::new();
        b.write(".bsi.toml", "claim_on_write = true\n");
        let (commits, user) = (b.commits(), b.user_state());
        let held = hold_writer_lock(&b);
        let ev = replace_event(&b, tool, "projets/plan.md", "risk text", "no risk");
        let r = hook(&b, "edit", tool, &ev);
        let reason = denial(tool, &r).unwrap_or_else(|| panic!("{tool}: refused: {r:?}"));
        assert!(reason.starts_with("bsi: refused for now:"), "{reason}");
        assert!(
            reason.contains("another bsi has been writing the registry for more than 2 s"),
            "{reason}"
        );
        assert!(
            reason.contains("try the edit again in a moment"),
            "{reason}"
        );
        assert!(
            reason.contains("`bsi open 'projets/plan.md#Risks' --session sess-"),
            "{reason}"
        );
        assert_eq!(b.commits(), commits, "{tool}: nothing written");
        assert!(b.active().is_empty(), "{tool}");
        assert_eq!(b.user_state(), user);
        drop(held);
        let r = hook(&b, "edit", tool, &ev);
        assert_eq!(denial(tool, &r), None, "{tool}: {r:?}");
        r.stdout_has("bsi claimed projets/plan.md#Risks");
        assert_eq!(b.commits(), commits + 1);
    }
}

/// Claim on the first write when the remote never answers: the hook gives
/// the remote a few seconds (its whole time is bounded, whatever the
/// connection timeout says), keeps the claim on this machine, lets the edit
/// through, and tells the agent, in the tool's channel to the model, that
/// the claim is not published and to run `bsi sync`. The push hangs (a
/// clone that fetched before), or the first fetch does (a new remote).
#[test]
fn a_claim_on_the_first_write_to_a_remote_that_never_answers_holds_locally() {
    let server = crate::truth::Silent::start();
    let url = format!("git://127.0.0.1:{}/brain.git", server.port);
    for (tool, fetched_before) in [("claude", true), ("gemini", true), ("codex", false)] {
        // A clone that fetched the registry from a remote now silent, or a
        // brain whose new remote is silent from the start.
        let net = fetched_before.then(crate::remote::Net::new);
        let fresh = Brain::new();
        let b = net.as_ref().map_or(&fresh, |n| &n.a);
        b.write(
            ".bsi.toml",
            "claim_on_write = true\nconnection_timeout = \"60s\"\n",
        );
        if fetched_before {
            b.git(&["remote", "set-url", "origin", &url]);
        } else {
            b.git(&["remote", "add", "origin", &url]);
        }
        let remote_before = net.as_ref().map(crate::remote::Net::registry);
        let user = b.user_state();
        let ev = replace_event(b, tool, "projets/plan.md", "risk text", "no risk");
        let r = hook(b, "edit", tool, &ev);
        assert_eq!(denial(tool, &r), None, "{tool}: the edit goes on: {r:?}");
        // What the model reads: Claude Code and Codex at once, Gemini CLI
        // after the edit (`AfterTool`).
        let answer = if tool == "gemini" {
            let after = ev.replace("\"BeforeTool\"", "\"AfterTool\"");
            let a = hook(b, "edit", tool, &after);
            a.ok();
            a.json()
        } else {
            r.json()
        };
        let said = answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            said.contains("bsi claimed projets/plan.md"),
            "{tool}: {said}"
        );
        assert!(
            said.contains("warning: origin/brain-index could not be reached"),
            "{tool}: {said}"
        );
        // The words every door gives a change held on this machine only.
        assert!(
            said.contains("The change is committed on the local registry branch but NOT PUBLISHED: other machines do not see it. Run `bsi sync` once the remote is back."),
            "{tool}: {said}"
        );
        // Held here, on the local registry branch; not on the remote.
        let rows = b.active();
        assert!(
            rows.iter().any(|r| r.contains("| projets/plan.md")),
            "{tool}: {rows:?}"
        );
        assert_eq!(
            net.as_ref().map(crate::remote::Net::registry),
            remote_before,
            "{tool}"
        );
        assert_eq!(b.user_state(), user, "{tool}");
    }
}

/// Cline CLI's `PreToolUse`, as the released CLI sends it: the first call
/// of a session carries the briefing; a refusal gives the reason as
/// context and takes the edit away (an input the editor fails on), never
/// `cancel`, which would end the run; a later call is not briefed again.
#[test]
fn cline_refusal_and_first_call_briefing() {
    let b = Brain::new();
    other_holds(&b, "projets/plan.md#Goals");
    let root = b.path().display().to_string();
    let fixture = |name: &str, old: &str, new: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/agents")
            .join(name);
        std::fs::read_to_string(path)
            .expect("fixture")
            .replace(
                "/tmp/brain/notes/plan.md",
                &format!("{root}/projets/plan.md"),
            )
            .replace("/tmp/brain", &root)
            .replace("old goal", old)
            .replace("new goal", new)
    };
    let held = fixture(
        "cline-pretooluse-editor-replace.json",
        "goal text",
        "stolen",
    );
    let r = hook(&b, "edit", "cline", &held);
    assert_eq!(r.code, 0, "{r:?}");
    let v = r.json();
    let context = v["context"].as_str().expect("context");
    assert!(
        context.starts_with("bsi guards this repository"),
        "{context}"
    );
    assert!(
        context.contains("bsi: refused") && context.contains("sess-other"),
        "{context}"
    );
    assert!(v.get("cancel").is_none(), "{v}");
    assert!(
        v["overrideInput"]["path"]
            .as_str()
            .is_some_and(|p| p.starts_with('\u{0}')),
        "{v}"
    );
    // The same session again: refused, not briefed twice.
    let again = hook(&b, "edit", "cline", &held).json();
    let context = again["context"].as_str().expect("context");
    assert!(!context.contains("bsi guards this repository"), "{context}");
    assert!(context.contains("bsi: refused"), "{context}");
    // A free section passes with nothing to say.
    let free = fixture(
        "cline-pretooluse-editor-replace.json",
        "risk text",
        "new risk",
    );
    let r = hook(&b, "edit", "cline", &free);
    assert_eq!(r.json(), serde_json::json!({}), "{r:?}");
    assert_eq!(b.read("projets/plan.md"), PLAN);
}

/// What the registry's IO says on the hooks' path reaches the user as it
/// does through the CLI: a file of the user's at the registry's copy path,
/// moved aside by a session-start hook, is said where it went.
#[test]
fn the_hooks_say_the_notes_of_the_registrys_io() {
    let b = Brain::new();
    let mine = "# My own index\n\nnotes I keep here\n";
    b.write("BRAIN-INDEX.md", mine);
    let r = hook(
        &b,
        "session-start",
        "claude",
        &event(&b, "claude-sessionstart.json"),
    );
    r.ok();
    assert!(
        r.stderr.contains("was not a copy bsi wrote") && r.stderr.contains("BRAIN-INDEX.md.orig"),
        "{r:?}"
    );
    assert_eq!(b.read("BRAIN-INDEX.md.orig"), mine);
    // The answer itself is still the tool's JSON, whole.
    assert!(r.json()["hookSpecificOutput"].is_object(), "{r:?}");
}

/// VS Code's events (tests/fixtures/agents/vscode-*, from its hooks
/// documentation) reach bsi through its own hooks file, and through the
/// Claude Code settings and Copilot CLI hooks VS Code also runs: each door
/// reads them as VS Code's. `editFiles` names files, not lines: an edit of
/// a file in which another session holds a section is refused, naming the
/// holder; a free file passes.
#[test]
fn vscode_edit_files_is_judged_at_file_level_through_every_door() {
    let b = Brain::new();
    other_holds(&b, "projets/plan.md#Risks");
    let held = event(&b, "vscode-pretooluse-editfiles.json");
    for door in ["vscode", "claude", "copilot"] {
        let r = hook(&b, "edit", door, &held);
        let v = r.json();
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecision"], "deny",
            "{door}: {r:?}"
        );
        let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(reason.contains("sess-other"), "{door}: {reason}");
        assert!(reason.contains("projets/plan.md"), "{door}: {reason}");
        assert!(!reason.contains("no session_id"), "{door}: {reason}");
    }
    // A file nobody holds goes through.
    let free = held.replace("projets/plan.md", "notes/free.md");
    for door in ["vscode", "claude"] {
        let r = hook(&b, "edit", door, &free);
        assert_eq!(denial("claude", &r), None, "{door}: {r:?}");
    }
    // A tool that edits nothing passes before any judgement.
    let read = held.replace("\"editFiles\"", "\"readFile\"");
    assert_eq!(denial("claude", &hook(&b, "edit", "vscode", &read)), None);
}

#[test]
fn vscode_session_start_briefs_on_file_level_edits_and_stop_answers_in_its_shape() {
    let b = Brain::new();
    let r = hook(
        &b,
        "session-start",
        "vscode",
        &event(&b, "vscode-sessionstart.json"),
    );
    r.ok();
    let v = r.json();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let context = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(context.contains("name files, not lines"), "{context}");
    assert!(
        context.contains("vscode-session-7f3a") || context.contains("bsi"),
        "{context}"
    );
    // The same event through Claude Code's settings, which VS Code also
    // runs: one briefing, not two.
    let again = hook(
        &b,
        "session-start",
        "claude",
        &event(&b, "vscode-sessionstart.json"),
    );
    again.ok();
    assert!(
        !again.stdout.contains("name files, not lines"),
        "briefed twice: {again:?}"
    );
    // Stop: with nothing held, the agent stops.
    let r = hook(&b, "stop", "vscode", &event(&b, "vscode-stop.json"));
    r.ok();
    assert!(!r.stdout.contains("\"block\""), "{r:?}");
}
