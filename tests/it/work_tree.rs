//! Several sessions in one work tree: a git move an agent runs through its
//! shell tool — `git stash` in every form, `git reset --hard`, `git clean`,
//! a forced checkout or switch, and their spellings through `sh -c`, `env`
//! and `xargs` — is judged by what it would take out of the work tree. One
//! that would take another session's uncommitted work in its claims is
//! refused in every tool's protocol, naming the holder and a form of the
//! move that leaves that work alone; that form, run as printed, takes the
//! agent's own changes and leaves the other session's in the files.

use serde_json::Value;

use crate::agent_hook::{PLAN, TOOLS, denial, event, hook, other_holds};
use crate::common::{Brain, Run};

/// The shell event of `tool` carrying `command`, in the tool's own shape
/// (its fixture in tests/fixtures/agents).
pub(crate) fn shell_event(b: &Brain, tool: &str, command: &str) -> String {
    let name = match tool {
        "claude" => "claude-pretooluse-bash.json",
        "codex" => "codex-pretooluse-bash.json",
        "gemini" => "gemini-beforetool-run-shell-command.json",
        "cursor" => "cursor-pretooluse-shell.json",
        "copilot" => "copilot-pretooluse-bash.json",
        "cline" => "cline-pretooluse-run-commands.json",
        "opencode" => "opencode-tool-execute-before-bash.json",
        _ => unreachable!(),
    };
    let text = event(b, name).replace("/tmp/brain", &b.path().display().to_string());
    let mut v: Value = serde_json::from_str(&text).expect("fixture JSON");
    let c = Value::String(command.to_string());
    match tool {
        "copilot" => v["toolArgs"]["command"] = c,
        "cline" => {
            v["tool_call"]["input"]["commands"] = Value::Array(vec![c]);
            v["preToolUse"]["parameters"]["commands"] =
                Value::String(serde_json::to_string(&[command]).expect("json"));
        }
        "opencode" => v["output"]["args"]["command"] = c,
        _ => v["tool_input"]["command"] = c,
    }
    v.to_string()
}

fn run(b: &Brain, tool: &str, command: &str) -> Run {
    hook(b, "edit", tool, &shell_event(b, tool, command))
}

/// The refusal's text in `tool`'s protocol; `None` when it lets the
/// command through.
fn refused(tool: &str, r: &Run) -> Option<String> {
    match tool {
        "cline" | "opencode" => {
            assert_eq!(r.code, 0, "{r:?}");
            if r.stdout.trim().is_empty() {
                return None;
            }
            let v = r.json();
            match tool {
                "cline" => v
                    .get("overrideInput")
                    .and(v["context"].as_str().map(String::from)),
                _ => v["deny"].as_str().map(String::from),
            }
        }
        _ => denial(tool, r),
    }
}

const OTHERS_GOAL: &str = "goal text, and the other session's unfinished line";

/// A brain where session sess-other holds `projets/plan.md#Goals` and
/// `notes/`, with uncommitted work in both (a changed line, a new file);
/// and the agent's own uncommitted change in a free file.
fn shared_work_tree() -> Brain {
    let b = Brain::new();
    other_holds(&b, "projets/plan.md#Goals");
    other_holds(&b, "notes/");
    b.write("projets/plan.md", &PLAN.replace("goal text", OTHERS_GOAL));
    b.write(
        "notes/draft.md",
        "# Draft\n\nthe other session's new file\n",
    );
    b.write("agents/bob.md", "# Bob\n\nmy own change\n");
    b
}

fn others_work_is_there(b: &Brain, what: &str) {
    assert!(b.read("projets/plan.md").contains(OTHERS_GOAL), "{what}");
    assert!(b.path().join("notes/draft.md").exists(), "{what}");
}

#[test]
fn a_move_that_takes_another_sessions_uncommitted_work_is_refused_in_every_protocol() {
    let b = shared_work_tree();
    let before = (b.commits(), b.user_state());
    let tools = TOOLS.iter().copied().chain(["cline", "opencode"]);
    for tool in tools {
        for command in [
            "git stash",
            "git stash -u",
            "git stash push --include-untracked -m wip",
            "git stash save 'my work'",
            "git stash push -- projets",
            "git reset --hard",
            "git reset --hard HEAD",
            "git clean -fd",
            "git clean -f -- notes",
            "git checkout -f main",
            "git switch --discard-changes main",
            "sh -c 'git stash'",
            "env GIT_PAGER=cat git reset --hard",
            "echo notes | xargs git clean -f",
            "cd projets && git stash",
        ] {
            let r = run(&b, tool, command);
            let why = refused(tool, &r).unwrap_or_else(|| panic!("{tool} `{command}`: {r:?}"));
            assert!(
                why.contains("inside an active claim of session sess-other"),
                "{tool} `{command}`: {why}"
            );
            assert!(
                why.contains("which takes uncommitted changes out of the work tree"),
                "{tool} `{command}`: {why}"
            );
            // Never a step that acts on the other session's claim (a first
            // call's briefing, before the refusal, says how claims work).
            let steps = &why[why.rfind("Next, one of:").expect("next steps")..];
            for bad in [
                "--force",
                "hookMode=off",
                "bsi release",
                "bsi close",
                "revert",
            ] {
                assert!(!steps.contains(bad), "{tool} `{command}`: {bad} in {steps}");
            }
        }
    }
    // Nothing was written, and the work tree is as it was.
    assert_eq!((b.commits(), b.user_state()), before);
    others_work_is_there(&b, "after the refusals");
}

#[test]
fn a_move_that_takes_only_ones_own_or_free_work_goes_through() {
    let b = Brain::new();
    other_holds(&b, "projets/plan.md#Goals");
    // The other session holds Goals but has changed nothing: nothing of
    // theirs is taken.
    b.write("agents/bob.md", "# Bob\n\nmy own change\n");
    for tool in TOOLS.iter().copied().chain(["cline", "opencode"]) {
        for command in [
            "git stash",
            "git stash -u",
            "git reset --hard",
            "git clean -fd",
            "git stash list",
            "git stash pop",
            "git reset --soft HEAD",
            "git checkout main",
            "git clean -n",
        ] {
            let r = run(&b, tool, command);
            assert_eq!(refused(tool, &r), None, "{tool} `{command}`: {r:?}");
        }
    }
    // A change outside Goals, in the file the other session holds a
    // section of, is free too.
    b.write("projets/plan.md", &PLAN.replace("risk text", "my risk"));
    let r = run(&b, "claude", "git stash");
    assert_eq!(refused("claude", &r), None, "{r:?}");
    // Another session's change outside its claim is no claim's: free.
    let r = run(&b, "claude", "git stash -- agents");
    assert_eq!(refused("claude", &r), None, "{r:?}");
}

/// The step of a refusal that takes only the agent's own changes: its
/// command, as printed between backquotes.
fn own_step(why: &str) -> String {
    let line = why
        .lines()
        .find(|l| l.contains("take only your own changes"))
        .unwrap_or_else(|| panic!("no own step in {why}"));
    let start = line.find('`').expect("a command") + 1;
    let end = line.rfind('`').expect("a command");
    line[start..end].to_string()
}

/// Runs `command` in a shell in `dir`, as an agent's shell tool would.
fn shell(b: &Brain, dir: &std::path::Path, command: &str) -> Run {
    let mut cmd = std::process::Command::new("sh");
    crate::common::clean_env(&mut cmd, b.path());
    Run::from_output(
        cmd.current_dir(dir)
            .args(["-c", command])
            .output()
            .expect("run sh"),
    )
}

#[test]
fn the_printed_form_run_as_printed_takes_only_ones_own_changes() {
    for (command, own_gone) in [
        ("git stash -u", true),
        ("git reset --hard", true),
        ("git clean -fd", false),
    ] {
        let b = shared_work_tree();
        // An untracked file of the agent's own, for `git clean`.
        b.write("mine.md", "# Mine\n");
        let r = run(&b, "claude", command);
        let why = refused("claude", &r).unwrap_or_else(|| panic!("`{command}`: {r:?}"));
        let step = own_step(&why);
        assert!(
            !step.contains("notes") && !step.contains("projets"),
            "{step}"
        );
        let ran = shell(&b, b.path(), &step);
        assert_eq!(ran.code, 0, "`{step}`: {ran:?}");
        others_work_is_there(&b, &step);
        if own_gone {
            assert_eq!(b.read("agents/bob.md"), "# Bob\n", "`{step}`");
        }
        if command.starts_with("git clean") {
            assert!(!b.path().join("mine.md").exists(), "`{step}`");
        }
        // The narrower form passes the hook too.
        let again = run(&b, "claude", &step);
        assert_eq!(refused("claude", &again), None, "`{step}`: {again:?}");
    }
}

#[test]
fn the_printed_form_is_written_for_the_directory_the_agents_shell_is_in() {
    let b = shared_work_tree();
    let sub = b.path().join("projets");
    // Claude Code's event from a shell in `projets/`.
    let text = shell_event(&b, "claude", "git stash -u");
    let mut v: Value = serde_json::from_str(&text).expect("json");
    v["cwd"] = Value::String(sub.display().to_string());
    let r = hook(&b, "edit", "claude", &v.to_string());
    let why = refused("claude", &r).unwrap_or_else(|| panic!("{r:?}"));
    let step = own_step(&why);
    assert!(step.contains("../agents/bob.md"), "{step}");
    let ran = shell(&b, &sub, &step);
    assert_eq!(ran.code, 0, "`{step}`: {ran:?}");
    others_work_is_there(&b, &step);
    assert_eq!(b.read("agents/bob.md"), "# Bob\n");
}

#[test]
fn a_section_reserved_before_it_is_written_reads_as_reserved_never_missing() {
    let b = Brain::new();
    b.bsi(&[
        "open",
        "projets/plan.md#Schedule",
        "--session",
        "s1",
        "--agent",
        "ada",
    ])
    .ok()
    .stderr_has("this claim reserves the new section");
    let reserved = "reserved: projets/plan.md#Schedule is held by s1 for a section not written yet";
    for args in [
        &["status"][..],
        &["status", "--tree"],
        &["watchdog"],
        &["verify", "s1"],
    ] {
        let r = b.bsi(args);
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(all.contains(reserved), "{args:?}: {all}");
        assert!(!all.contains("missing:"), "{args:?}: {all}");
    }
    let tree = b.bsi(&["status", "--tree"]).stdout;
    assert!(
        tree.contains("#Schedule  ← s1 (ada, 2h left; reserved, not written yet)"),
        "{tree}"
    );
    let status = b.bsi(&["status", "--json"]).json();
    assert_eq!(
        status["reserved"],
        serde_json::json!(["projets/plan.md#Schedule"])
    );
    assert_eq!(status["missing"], serde_json::json!([]));
    let verify = b.bsi(&["verify", "s1", "--json"]).json();
    assert_eq!(
        verify["reserved_sections"],
        serde_json::json!(["projets/plan.md#Schedule"])
    );
    assert_eq!(verify["missing_sections"], serde_json::json!([]));
    // Written and committed, it is a section like the others.
    b.write(
        "projets/plan.md",
        &format!("{PLAN}\n## Schedule\n\nweek 1\n"),
    );
    b.git(&["commit", "-qam", "schedule"]);
    let after = b.bsi(&["status"]).stdout;
    assert!(
        !after.contains("reserved:") && !after.contains("missing:"),
        "{after}"
    );
}

/// The plan with ada's line in Risks and bo's in Goals, neither committed.
fn both_lines() -> String {
    PLAN.replace("risk text\n", "risk text\nada's risk\n")
        .replace("goal text\n", "goal text\nbo's goal\n")
}

#[test]
fn two_sessions_commit_their_own_lines_of_one_file_from_one_work_tree() {
    let b = Brain::new();
    b.bsi(&["hook", "install"]).ok();
    b.bsi(&["open", "projets/plan.md#Risks", "--session", "ada"])
        .ok();
    b.bsi(&["open", "projets/plan.md#Goals", "--session", "bo"])
        .ok();
    b.write("projets/plan.md", &both_lines());
    b.write("README.md", "# Brain\n\nno one's line\n");
    // `git commit` of the file, as the agent block says: refused, with the
    // way that commits ada's lines alone, and no way that frees bo's.
    b.git_at(b.path(), Some("ada"), &["add", "projets/plan.md"])
        .ok();
    let refused = b.git_at(b.path(), Some("ada"), &["commit", "-qm", "ada"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    let line = refused
        .stderr
        .lines()
        .find(|l| l.contains("commit only your own lines"))
        .unwrap_or_else(|| panic!("{}", refused.stderr));
    // Nothing that frees bo's claim; skipping the check is a person's.
    assert!(!refused.stderr.contains("release"), "{}", refused.stderr);
    for l in refused.stderr.lines().filter(|l| l.contains("hookMode")) {
        assert!(l.contains("A person's step, never an agent's"), "{l}");
    }
    let printed = &line[line.find('`').expect("a command") + 1..line.rfind('`').expect("end")];
    assert_eq!(printed, "bsi commit --session ada");
    b.git(&["reset", "-q"]);
    // Run as printed.
    let words: Vec<&str> = printed.split(' ').collect();
    let ada = b.bsi_at(b.path(), None, &words[1..]);
    assert_eq!(ada.code, 0, "{ada:?}");
    assert!(
        ada.stdout.contains("projets/plan.md (your lines only)")
            && ada
                .stdout
                .contains("line 8 under `Goals`: bo's, inside its claim"),
        "{}",
        ada.stdout
    );
    let committed = b.git(&["show", "HEAD:projets/plan.md"]);
    assert_eq!(
        committed,
        PLAN.replace("risk text\n", "risk text\nada's risk\n")
    );
    assert!(
        b.git(&["log", "-1", "--format=%B"])
            .contains("BSI-Session: ada")
    );
    // bo's line and no one's line are in the files, uncommitted, unstaged.
    assert_eq!(b.read("projets/plan.md"), both_lines());
    assert_eq!(b.git(&["diff", "--cached", "--name-only"]), "");
    // bo commits its own, with a message of its own.
    let bo = b.bsi_at(b.path(), Some("bo"), &["commit", "-m", "bo's goal"]);
    assert_eq!(bo.code, 0, "{bo:?}");
    assert!(
        bo.stdout
            .contains("README.md lines 2-3 under `Brain`: in no one's claim"),
        "{}",
        bo.stdout
    );
    assert_eq!(b.git(&["show", "HEAD:projets/plan.md"]), both_lines());
    assert_eq!(b.git(&["log", "-1", "--format=%s"]).trim(), "bo's goal");
    assert!(
        b.git(&["log", "-1", "--format=%B"])
            .contains("BSI-Session: bo")
    );
    // Nothing of theirs is left: exit 1, nothing written.
    let head = b.git(&["rev-parse", "HEAD"]);
    let none = b.bsi_at(b.path(), Some("bo"), &["commit", "-m", "again"]);
    assert_eq!(none.code, 1, "{none:?}");
    assert!(
        none.stdout.contains("Nothing of bo's to commit"),
        "{}",
        none.stdout
    );
    assert_eq!(b.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(b.read("README.md"), "# Brain\n\nno one's line\n");
    let json = b
        .bsi_at(b.path(), Some("ada"), &["commit", "--json"])
        .json();
    assert_eq!(json["commit"], Value::Null);
    assert_eq!(json["left"][0]["claim"], "README.md#Brain");
}

#[test]
fn mcp_commit_takes_the_sessions_own_lines_and_leaves_the_others() {
    use crate::mcp::{call, connect, runtime, text};
    let b = Brain::new();
    b.bsi(&["open", "projets/plan.md#Risks", "--session", "ada"])
        .ok();
    b.bsi(&["open", "projets/plan.md#Goals", "--session", "bo"])
        .ok();
    b.write("projets/plan.md", &both_lines());
    runtime().block_on(async {
        let c = connect(
            &b,
            &[],
            &[("BSI_SESSION", "ada")],
            crate::mcp::Client::default(),
        )
        .await;
        let r = call(&c, "commit", serde_json::json!({"message": "ada's risks"})).await;
        let said = text(&r);
        assert!(said.contains("Committed"), "{said}");
        assert!(said.contains("bo's, inside its claim"), "{said}");
        let doc = r.structured_content.clone().expect("structured");
        assert_eq!(doc["files"][0]["whole"], false, "{doc}");
        let again = call(&c, "commit", serde_json::json!({})).await;
        assert_eq!(again.is_error, Some(true), "{}", text(&again));
        c.cancel().await.expect("close the client");
    });
    assert_eq!(
        b.git(&["show", "HEAD:projets/plan.md"]),
        PLAN.replace("risk text\n", "risk text\nada's risk\n")
    );
    assert_eq!(b.read("projets/plan.md"), both_lines());
}

#[test]
fn folder_restores_aborts_and_reversed_patches_are_judged_by_what_they_take() {
    let b = shared_work_tree();
    // A diff of the other session's uncommitted change, and of one's own.
    std::fs::write(
        b.path().join("theirs.diff"),
        b.git(&["diff", "--", "projets/plan.md"]),
    )
    .expect("write");
    std::fs::write(
        b.path().join("mine.diff"),
        b.git(&["diff", "--", "agents/bob.md"]),
    )
    .expect("write");
    let before = (b.commits(), b.user_state());
    for tool in TOOLS.iter().copied().chain(["cline", "opencode"]) {
        for command in [
            "git restore .",
            "git restore --worktree projets",
            "git restore --source HEAD --staged --worktree .",
            "git checkout -- .",
            "git checkout HEAD -- projets",
            "git rebase --abort",
            "git am --abort",
            "git apply -R theirs.diff",
            "sh -c 'git restore .'",
        ] {
            let r = run(&b, tool, command);
            let why = refused(tool, &r).unwrap_or_else(|| panic!("{tool} `{command}`: {r:?}"));
            assert!(
                why.contains("inside an active claim of session sess-other"),
                "{tool} `{command}`: {why}"
            );
            if let Some(steps) = why.rfind("Next, one of:").map(|i| &why[i..]) {
                for bad in ["--force", "hookMode=off", "bsi release", "bsi close"] {
                    assert!(!steps.contains(bad), "{tool} `{command}`: {bad} in {steps}");
                }
            }
        }
        // What takes only one's own work, or nothing, goes through: a
        // merge aborted keeps the changes not staged (git's `reset
        // --merge`), `--keep` keeps every uncommitted change.
        for command in [
            "git restore agents",
            "git apply -R mine.diff",
            "git merge --abort",
            "git reset --keep HEAD",
            "git apply --check -R theirs.diff",
        ] {
            let r = run(&b, tool, command);
            assert_eq!(refused(tool, &r), None, "{tool} `{command}`: {r:?}");
        }
    }
    assert_eq!((b.commits(), b.user_state()), before);
    // The printed form of a refused folder restore, run as printed, takes
    // one's own change and leaves the other's.
    let r = run(&b, "claude", "git restore .");
    let step = own_step(&refused("claude", &r).expect("refused"));
    assert_eq!(step, "git restore -- agents/bob.md");
    let ran = shell(&b, b.path(), &step);
    assert_eq!(ran.code, 0, "{ran:?}");
    others_work_is_there(&b, &step);
    assert_eq!(b.read("agents/bob.md"), "# Bob\n");
    // `git reset --keep`, run for real, keeps the other's work.
    shell(&b, b.path(), "git reset -q --keep HEAD").ok();
    others_work_is_there(&b, "reset --keep");
    // Staged, the other's change is what a merge abort would take.
    b.git(&["add", "projets/plan.md"]);
    let r = run(&b, "claude", "git merge --abort");
    assert!(refused("claude", &r).is_some(), "{r:?}");
}

/// Claude Code's `Edit` of `projets/plan.md` for `session`: `old` by `new`.
fn claude_edit(b: &Brain, session: &str, old: &str, new: &str) -> Run {
    let mut v: Value =
        serde_json::from_str(&event(b, "claude-pretooluse-edit.json")).expect("fixture");
    v["session_id"] = Value::String(format!("claude-{session}"));
    v["tool_input"]["old_string"] = Value::String(old.into());
    v["tool_input"]["new_string"] = Value::String(new.into());
    crate::agent_hook::with_stdin(
        b,
        &["hook", "edit", "--tool", "claude"],
        &v.to_string(),
        &[("BSI_SESSION", session)],
    )
}

/// Three agent sessions on real processes in one work tree, each editing
/// its own section of one file through Claude Code's edit hook, one of
/// them trying `git stash` through its shell tool midway (run for real if
/// the hook lets it through, as the tool would), each committing its own
/// lines with `bsi commit` and pushing: every edit ends in the pushed
/// history, tagged with its session, and nothing in a stash.
#[test]
fn three_agents_in_one_work_tree_lose_nothing_to_a_stash_and_push_every_edit() {
    let b = Brain::new();
    b.bsi(&["hook", "install"]).ok();
    let remote = b.publish_to_bare();
    let agents = [("ada", "q1 text"), ("bo", "q2 text"), ("cy", "risk text")];
    for (s, anchor) in agents {
        let scope = match anchor {
            "q1 text" => "projets/plan.md#Q1",
            "q2 text" => "projets/plan.md#Q2",
            _ => "projets/plan.md#Risks",
        };
        b.bsi(&["open", scope, "--session", s, "--agent", "claude"])
            .ok();
    }
    // The tools' own edits are atomic: one writes the file at a time.
    let file = std::sync::Mutex::new(());
    // Midway, all three have uncommitted lines when bo's stash comes.
    let midway = std::sync::Barrier::new(agents.len());
    const ROUNDS: usize = 4;
    std::thread::scope(|scope| {
        for (session, anchor) in agents {
            let (b, file, midway) = (&b, &file, &midway);
            scope.spawn(move || {
                let mut last = anchor.to_string();
                for k in 1..=ROUNDS {
                    let line = format!("{session} line {k}");
                    let new = format!("{last}\n{line}");
                    {
                        let _held = file.lock().expect("lock");
                        let r = claude_edit(b, session, &last, &new);
                        assert_eq!(denial("claude", &r), None, "{session} {k}: {r:?}");
                        let text = b.read("projets/plan.md");
                        assert!(text.contains(&last), "{session} {k}: {text}");
                        b.write("projets/plan.md", &text.replacen(&last, &new, 1));
                    }
                    last = line;
                    if k == 2 {
                        midway.wait();
                    }
                    if session == "bo" && k == 2 {
                        // bo's shell tool: `git stash`, run if let through.
                        let r = run(b, "claude", "git stash");
                        let why = refused("claude", &r);
                        if why.is_none() {
                            shell(b, b.path(), "git stash").ok();
                        }
                        assert!(
                            why.as_deref()
                                .is_some_and(|w| w.contains("another session's work in progress")),
                            "{r:?}"
                        );
                        let c = b.bsi_at(b.path(), Some(session), &["commit", "-m", "bo: so far"]);
                        assert_eq!(c.code, 0, "{c:?}");
                    }
                    if k == 2 {
                        midway.wait();
                    }
                }
                let c = b.bsi_at(
                    b.path(),
                    Some(session),
                    &["commit", "-m", &format!("{session}: its lines")],
                );
                assert_eq!(c.code, 0, "{session}: {c:?}");
                // Pushes of one branch from one work tree race only in
                // order: a late one is behind and goes again.
                let pushed = (0..5).any(|_| {
                    b.git_at(b.path(), Some(session), &["push", "-q", "origin", "HEAD"])
                        .code
                        == 0
                });
                assert!(pushed, "{session} could not push");
            });
        }
    });
    b.git(&["push", "-q", "origin", "HEAD"]);
    let url = remote.path().display().to_string();
    b.git(&["fetch", "-q", &url, "main"]);
    let pushed = b.git(&["show", "FETCH_HEAD:projets/plan.md"]);
    for (session, _) in agents {
        for k in 1..=ROUNDS {
            assert!(
                pushed.contains(&format!("{session} line {k}\n")),
                "{session} line {k} not pushed:\n{pushed}"
            );
        }
        let log = b.git(&["log", "--format=%B", "FETCH_HEAD", "--grep", session]);
        assert!(log.contains(&format!("BSI-Session: {session}")), "{log}");
    }
    let subjects = b.git(&["log", "--format=%s", "FETCH_HEAD"]);
    for s in [
        "ada: its lines",
        "bo: so far",
        "bo: its lines",
        "cy: its lines",
    ] {
        assert!(subjects.contains(s), "{subjects}");
    }
    assert_eq!(b.git(&["stash", "list"]), "");
    assert_eq!(b.git(&["status", "--porcelain", "--", "projets"]), "");
}
