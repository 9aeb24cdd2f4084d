//! Codex CLI: hooks with Claude Code's wire format. The edit tool is
//! `apply_patch`, whose patch comes in `tool_input.command`; every file of
//! the patch is an edit. Hooks live in `.codex/hooks.json` at the project
//! root, and Codex runs a new or changed hook only once a person has
//! reviewed and trusted it.

use std::path::Path;

use serde_json::json;

use super::patch::{self, PatchOp};
use super::{
    Answer, Briefing, EditOp, EditRequest, EventError, FileEdit, HookKind, PreEdit, Verdict,
    check_event, claude, event_cwd, file_edit, object, opt_str, req_obj, req_str,
};

/// The tool names of file edits (`Edit` and `Write` are names Codex also
/// matches `apply_patch` by), and `Bash`: Codex's shell tool, through which
/// a model may send a patch (`apply_patch <<'EOF' … EOF`) — for a model
/// Codex offers no `apply_patch` tool to, every edit is a shell command —
/// or write files by other commands ([`super::shell_writes`]).
pub const EDIT_TOOLS: &str = "apply_patch|Edit|Write|Bash";

/// Reads a `PreToolUse` event.
pub fn parse_edit(input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
    let o = object(input)?;
    check_event(&o, "PreToolUse")?;
    let session_id = req_str(&o, "session_id")?;
    let cwd = event_cwd(&o, cwd)?;
    let tool_name = req_str(&o, "tool_name")?;
    // The patch: `command` as documented (`patch`, `input` as other builds
    // name it); paths are relative to `workdir` when the call names one.
    let (command, base) = match o.get("tool_input") {
        Some(serde_json::Value::Object(i)) => (
            opt_str(i, "command")?
                .or(opt_str(i, "patch")?)
                .or(opt_str(i, "input")?),
            match opt_str(i, "workdir")? {
                Some(w) => super::clean(&cwd.join(w)),
                None => cwd.clone(),
            },
        ),
        _ => (None, cwd.clone()),
    };
    let edits = match (tool_name.as_str(), command) {
        ("apply_patch", Some(cmd)) => patch_edits(&cmd, &base)?,
        ("apply_patch", None) => {
            req_obj(&o, "tool_input")?;
            return Err(EventError::Missing("command"));
        }
        // A patch sent through the shell.
        (_, Some(cmd)) if cmd.contains("apply_patch") && cmd.contains("*** Begin Patch") => {
            patch_edits(&cmd, &base)?
        }
        // Any other shell command: the files it writes.
        ("Bash", Some(command)) => {
            return Ok(PreEdit::Shell(super::ShellCommand {
                tool: super::Tool::Codex,
                session_id,
                cwd,
                dir: base,
                tool_name,
                command,
            }));
        }
        _ => match claude::edits_of(&tool_name, &o, &cwd)? {
            Some(e) => e,
            None => return Ok(PreEdit::Other { tool_name }),
        },
    };
    Ok(PreEdit::Edit(EditRequest {
        tool: super::Tool::Codex,
        session_id,
        cwd,
        tool_name,
        edits,
    }))
}

/// The files of a patch as edits, paths resolved against `cwd`.
pub fn patch_edits(text: &str, cwd: &Path) -> Result<Vec<FileEdit>, EventError> {
    Ok(patch::parse(text)?
        .into_iter()
        .map(|f| {
            let op = match f.op {
                PatchOp::Add(content) => EditOp::Write { content },
                PatchOp::Delete => EditOp::Delete,
                PatchOp::Update {
                    move_to: None,
                    hunks,
                } => EditOp::Patch(hunks),
                PatchOp::Update {
                    move_to: Some(to),
                    hunks,
                } => EditOp::Move {
                    to: file_edit(cwd, to.clone(), EditOp::Delete).path,
                    to_given: to,
                    hunks,
                },
            };
            file_edit(cwd, f.path, op)
        })
        .collect())
}

/// The answer to a `PreToolUse` event: Claude Code's.
pub fn answer(verdict: &Verdict) -> Answer {
    claude::answer(verdict)
}

/// The answer to `SessionStart`: context for the agent. Codex's schema for
/// this answer accepts `hookEventName` and `additionalContext` only (an
/// unknown field makes it drop the whole answer), and has no field that
/// sets the shell's environment: the agent's shell finds the session from
/// the thread id Codex sets in it (see [`session_note`]).
pub fn answer_session_start(briefing: &Briefing) -> Answer {
    Answer::json(&json!({
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": briefing.context,
        }
    }))
}

/// What the session-start context says about passing the session to bsi:
/// Codex cannot set `BSI_SESSION` in the agent's shell, and its sandbox runs
/// the shell where the Codex process is not among its ancestors, but every
/// shell command carries the thread's id (`CODEX_THREAD_ID`, the session id
/// Codex gives hooks) and bsi finds the session by it. The sandbox
/// (`workspace-write`, `read-only`) keeps the agent's shell from writing the
/// git directory where bsi records claims: bsi's MCP tools run outside it.
pub fn session_note(session: &str) -> String {
    format!(
        "the bsi commands you run in your shell act for it: bsi finds it from the CODEX_THREAD_ID Codex sets in your shell; `--session {session}` names it too. If `bsi open` fails with \"Read-only file system\", your sandbox cannot write the git directory: claim with bsi's MCP tool `claim` when it is offered to you (it runs outside the sandbox, as this session), else edit only what is free (the hook checks every edit, and claims it for you when `claim_on_write` is on) and ask the user to let bsi write the git directory (`bsi agent install codex` says how)"
    )
}

/// The project hooks file, relative to the work tree root.
pub const SETTINGS: &str = ".codex/hooks.json";

/// The hook entries bsi adds to `.codex/hooks.json`.
pub(super) const ENTRIES: &[(&str, Option<&str>, HookKind)] = &[
    ("PreToolUse", Some(EDIT_TOOLS), HookKind::Edit),
    ("SessionStart", None, HookKind::SessionStart),
    ("Stop", None, HookKind::Stop),
];

#[cfg(test)]
mod tests {
    use super::super::tests_support::fixture;
    use super::super::{Tool, new_text, parse_edit as parse, parse_session_start, parse_stop};
    use super::*;
    use serde_json::Value;
    use std::path::PathBuf;

    fn edits(name: &str) -> Vec<FileEdit> {
        match parse(Tool::Codex, &fixture(name), Path::new("/elsewhere")) {
            Ok(PreEdit::Edit(r)) => {
                assert_eq!(r.tool, Tool::Codex);
                assert_eq!(r.session_id, "019a-codex-session");
                r.edits
            }
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn apply_patch_event_names_every_file() {
        let e = edits("codex-pretooluse-apply-patch.json");
        let paths: Vec<_> = e.iter().map(|f| f.path.clone()).collect();
        assert_eq!(
            paths,
            vec![
                PathBuf::from("/home/me/brain/agents/alice.md"),
                PathBuf::from("/home/me/brain/projets/new.md"),
                PathBuf::from("/home/me/brain/agents/bob.md"),
                PathBuf::from("/home/me/brain/projets/plan.md"),
            ]
        );
        assert!(matches!(e[0].op, EditOp::Patch(_)));
        assert!(matches!(&e[1].op, EditOp::Write { content } if content == "# New\n\nfresh\n"));
        assert_eq!(e[2].op, EditOp::Delete);
        let EditOp::Move { to, .. } = &e[3].op else {
            panic!("{:?}", e[3]);
        };
        assert_eq!(to, &PathBuf::from("/home/me/brain/projets/plan-2026.md"));
        assert_eq!(
            e[3].paths(),
            vec![
                Path::new("/home/me/brain/projets/plan.md"),
                Path::new("/home/me/brain/projets/plan-2026.md")
            ]
        );
        // The new text of each file.
        assert_eq!(
            new_text(&e[0], Some("# Alice\n\nnotes\n")),
            Ok(Some("# Alice\n\nbetter notes\n".into()))
        );
        assert_eq!(new_text(&e[2], Some("# Bob\n")), Ok(None));
        assert_eq!(
            new_text(&e[3], Some("# Plan\n\n## Goals\n\ngoal text\n")),
            Ok(Some("# Plan 2026\n\n## Goals\n\ngoal text\n".into()))
        );
    }

    #[test]
    fn a_patch_through_the_shell_is_read_too() {
        let e = edits("codex-pretooluse-bash-apply-patch.json");
        assert_eq!(e.len(), 1);
        assert!(e[0].path.ends_with("agents/alice.md"));
    }

    #[test]
    fn a_workdir_is_where_patch_paths_start() {
        let input = fixture("codex-pretooluse-bash-apply-patch.json").replace(
            "\"tool_input\": {",
            "\"tool_input\": {\"workdir\": \"sub\", ",
        );
        let Ok(PreEdit::Edit(r)) = parse(Tool::Codex, &input, Path::new("/")) else {
            panic!("{input}");
        };
        assert_eq!(
            r.edits[0].path,
            PathBuf::from("/home/me/brain/sub/agents/alice.md")
        );
    }

    #[test]
    fn other_shell_commands_are_not_edits() {
        let got = parse(
            Tool::Codex,
            &fixture("codex-pretooluse-bash.json"),
            Path::new("/"),
        );
        let Ok(PreEdit::Shell(cmd)) = got else {
            panic!("{got:?}");
        };
        assert_eq!(cmd.command, "git status --short");
        assert_eq!(cmd.edits(&super::super::shell_writes::NoDisk), None);
        // One that writes a file, in the call's `workdir`.
        let input = fixture("codex-pretooluse-bash.json")
            .replace("git status --short", "rm old.md")
            .replace(
                "\"tool_input\": {",
                "\"tool_input\": {\"workdir\": \"sub\", ",
            );
        let Ok(PreEdit::Shell(cmd)) = parse(Tool::Codex, &input, Path::new("/")) else {
            panic!("{input}");
        };
        let r = cmd
            .edits(&super::super::shell_writes::NoDisk)
            .expect("writes");
        assert_eq!(r.edits[0].path, PathBuf::from("/home/me/brain/sub/old.md"));
        assert_eq!(r.edits[0].op, EditOp::Delete);
    }

    #[test]
    fn a_broken_patch_is_an_error() {
        let bad = fixture("codex-pretooluse-apply-patch.json").replace("*** End Patch", "");
        assert!(matches!(
            parse(Tool::Codex, &bad, Path::new("/")),
            Err(EventError::Patch(_))
        ));
    }

    #[test]
    fn session_start_and_stop() {
        let s = parse_session_start(
            Tool::Codex,
            &fixture("codex-sessionstart.json"),
            Path::new("/"),
        )
        .expect("parses");
        assert_eq!(s.session_id, "019a-codex-session");
        assert_eq!(s.source.as_deref(), Some("startup"));
        let st =
            parse_stop(Tool::Codex, &fixture("codex-stop.json"), Path::new("/")).expect("parses");
        assert!(st.continued);
        let a = answer_session_start(&Briefing {
            context: "ctx".into(),
            session: Some("sess-1".into()),
        });
        let v: Value = serde_json::from_str(&a.stdout).expect("json");
        // Codex's schema: these two keys and nothing else.
        let keys: Vec<&String> = v["hookSpecificOutput"]
            .as_object()
            .expect("object")
            .keys()
            .collect();
        assert_eq!(keys, ["hookEventName", "additionalContext"]);
        assert_eq!(v.as_object().map(serde_json::Map::len), Some(1));
        assert_eq!(v["hookSpecificOutput"]["additionalContext"], "ctx");
        assert!(session_note("sess-1").contains("CODEX_THREAD_ID"));
        assert!(session_note("sess-1").contains("`--session sess-1` names it too"));
    }

    #[test]
    fn deny_is_claude_s() {
        let v = Verdict::Deny { reason: "r".into() };
        assert_eq!(answer(&v), claude::answer(&v));
    }
}
