//! The agent tools' shell commands through `bsi hook edit --tool T`: each
//! tool's real shell event shape (tests/fixtures/agents) carrying a command
//! that writes files, fed to the real binary on real repositories. A
//! command that writes a file inside another session's claim is refused
//! like an edit; one that writes nothing, or only free files, goes through.

use serde_json::Value;

use crate::agent_hook::{PLAN, TOOLS, denial, event, hook, other_holds};
use crate::common::{Brain, scratch};

/// The shell event of `tool` (its fixture) carrying `command`.
fn shell_event(b: &Brain, tool: &str, command: &str) -> String {
    let name = match tool {
        "claude" => "claude-pretooluse-bash.json",
        "codex" => "codex-pretooluse-bash.json",
        "gemini" => "gemini-beforetool-run-shell-command.json",
        "cursor" => "cursor-pretooluse-shell.json",
        "copilot" => "copilot-pretooluse-bash.json",
        _ => unreachable!(),
    };
    let mut v: Value = serde_json::from_str(&event(b, name)).expect("fixture JSON");
    // Copilot's camelCase events carry the call in `toolArgs`.
    let args = if tool == "copilot" {
        "toolArgs"
    } else {
        "tool_input"
    };
    v[args]["command"] = Value::String(command.to_string());
    v.to_string()
}

fn run(b: &Brain, tool: &str, command: &str) -> crate::common::Run {
    hook(b, "edit", tool, &shell_event(b, tool, command))
}

/// What each tool answers when it lets a call through silently.
fn silent(tool: &str) -> &'static str {
    match tool {
        "claude" | "codex" => "",
        _ => "{}\n",
    }
}

#[test]
fn a_shell_write_inside_another_sessions_claim_is_refused_in_each_protocol() {
    for tool in TOOLS {
        let b = Brain::new();
        other_holds(&b, "projets/plan.md#Goals");
        let before = (b.commits(), b.user_state());
        for command in [
            "sed -i 's/risk text/no risk/' projets/plan.md",
            "cd projets && perl -pi -e 's/a/b/' plan.md",
            "ls > projets/plan.md",
            "git checkout -- projets/plan.md",
            "git restore projets/plan.md",
            "cp agents/bob.md projets/plan.md",
            "truncate -s 0 projets/plan.md",
            "ls | tee projets/plan.md",
            "sudo env LANG=C sed -i.bak s/a/b/ ./projets/plan.md 2>/dev/null",
        ] {
            let r = run(&b, tool, command);
            let why = denial(tool, &r).unwrap_or_else(|| panic!("{tool} `{command}`: {r:?}"));
            // The file, the claim and its holder, what it was read as, and
            // what to do.
            for part in [
                "bsi: refused: projets/plan.md is inside an active claim of session sess-other (agent bob, scope projets/plan.md#Goals",
                "bsi read your shell command as one that rewrites projets/plan.md whole (",
                "use your edit tool rather than the shell",
                "Next, one of:",
                "--wait 10m",
            ] {
                assert!(why.contains(part), "{tool} `{command}`: {why}");
            }
        }
        // Deleted, moved, or under a folder that goes: the section's file
        // goes with it.
        for command in [
            "rm -f projets/plan.md",
            "mv projets/plan.md projets/old.md",
            "rm -rf projets",
            "git rm -r projets",
            "mv projets archive",
        ] {
            let r = run(&b, tool, command);
            let why = denial(tool, &r).unwrap_or_else(|| panic!("{tool} `{command}`: {r:?}"));
            assert!(
                why.contains("projets/plan.md") && why.contains("sess-other"),
                "{tool} `{command}`: {why}"
            );
        }
        assert_eq!((b.commits(), b.user_state()), before, "{tool}");
        assert_eq!(b.read("projets/plan.md"), PLAN);
    }
}

#[test]
fn a_heredoc_write_is_judged_by_section() {
    for tool in TOOLS {
        let b = Brain::new();
        other_holds(&b, "projets/plan.md#Goals");
        // The whole file written back with only Risks changed: free.
        let risks = PLAN.replace("risk text", "no risk");
        let command = format!("cat > projets/plan.md <<'EOF'\n{risks}EOF");
        let r = run(&b, tool, &command);
        assert_eq!(denial(tool, &r), None, "{tool}: {r:?}");
        assert_eq!(r.stdout, silent(tool), "{tool}");
        // With Goals changed: refused, and the line named.
        let goals = PLAN.replace("goal text", "stolen goal");
        for command in [
            format!("cat > projets/plan.md <<'EOF'\n{goals}EOF"),
            format!("cd projets\ncat <<EOF >plan.md\n{goals}EOF\n"),
        ] {
            let r = run(&b, tool, &command);
            let why = denial(tool, &r).unwrap_or_else(|| panic!("{tool}: {r:?}"));
            assert!(
                why.starts_with("bsi: refused: projets/plan.md line 7 under `Goals` is inside an active claim of session sess-other"),
                "{tool}: {why}"
            );
            assert!(!why.contains("read your shell command"), "{why}");
        }
        assert_eq!(b.read("projets/plan.md"), PLAN);
    }
}

#[test]
fn an_append_touches_the_last_section() {
    for tool in TOOLS {
        let b = Brain::new();
        // Goals held: Risks is the last section, free.
        other_holds(&b, "projets/plan.md#Goals");
        for command in [
            "echo more >> projets/plan.md",
            "date >> projets/plan.md",
            "echo x | tee -a projets/plan.md",
        ] {
            let r = run(&b, tool, command);
            assert_eq!(denial(tool, &r), None, "{tool} `{command}`: {r:?}");
        }
        other_holds(&b, "projets/plan.md#Risks");
        let r = run(&b, tool, "date >> projets/plan.md");
        let why = denial(tool, &r).unwrap_or_else(|| panic!("{tool}: {r:?}"));
        assert!(
            why.contains("under `Risks` is inside an active claim")
                && why.contains("appends to the end of projets/plan.md: the added lines belong to its last section"),
            "{tool}: {why}"
        );
    }
}

#[test]
fn a_shell_command_that_writes_nothing_or_only_free_files_goes_through() {
    for tool in TOOLS {
        let b = Brain::new();
        other_holds(&b, "projets/plan.md#Goals");
        let before = (b.commits(), b.user_state(), b.registry_copy());
        for command in [
            "ls -la projets",
            "cat projets/plan.md",
            "grep -n goal projets/plan.md 2>/dev/null",
            "sed -n '1,5p' projets/plan.md",
            "git status --short && git diff",
            "echo x >> agents/free.md",
            "echo 'rm projets/plan.md'",
            "sed -i s/notes/more/ agents/alice.md",
            "rm -f agents/bob.md",
            "echo log > /tmp/bsi-shell-test.log",
            "python3 -c 'open(\"projets/plan.md\", \"w\")'",
        ] {
            let r = run(&b, tool, command);
            r.ok();
            assert_eq!(denial(tool, &r), None, "{tool} `{command}`: {r:?}");
            assert_eq!(r.stdout, silent(tool), "{tool} `{command}`");
            assert_eq!(r.stderr, "", "{tool} `{command}`");
        }
        assert_eq!(
            (b.commits(), b.user_state(), b.registry_copy()),
            before,
            "{tool}: nothing written by the hook"
        );
        assert!(
            !b.path().join(".git/bsi-agents/sessions.json").exists(),
            "{tool}: no session named on the allow path"
        );
    }
}

#[test]
fn a_shell_command_that_writes_nothing_needs_no_brain() {
    // Outside any repository: a command that writes no file is answered
    // without looking for a registry (no warning); one that writes a file
    // there is not bsi's either, and goes through with the usual note.
    let dir = scratch("bsi-shell-nowhere");
    let b = Brain::new();
    for tool in TOOLS {
        let text = shell_event(&b, tool, "ls -la && git log --oneline | head").replace(
            b.path().to_str().expect("utf-8"),
            dir.path().to_str().expect("utf-8"),
        );
        let mut cmd = b.command(&["hook", "edit", "--tool", tool]);
        cmd.current_dir(dir.path());
        let r = crate::common::output_with_stdin(&mut cmd, &text);
        r.ok();
        assert_eq!(r.stdout, silent(tool), "{tool}: {r:?}");
        assert_eq!(r.stderr, "", "{tool}: {r:?}");
    }
}
