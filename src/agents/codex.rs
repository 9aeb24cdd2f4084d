//! Codex CLI: hooks with Claude Code's wire format. The edit tool is
//! `apply_patch`, whose patch comes in `tool_input.command`; every file of
//! the patch is an edit. Hooks live in `.codex/hooks.json` at the project
//! root, and Codex runs a new or changed hook only once a person has
//! reviewed and trusted it.

use std::path::Path;

use serde_json::json;

use super::patch::{self, PatchOp};
use std::path::PathBuf;

use super::doctor::Item;
use super::install::{self, HookEntry, HookLayout};
use super::mcp_config::McpSettings;
use super::{
    AgentTool, Places, SessionStart, Stop, Tool, session_start_event, stop_event, stop_hook_active,
};
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
                tool: super::Tool::CODEX,
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
        tool: super::Tool::CODEX,
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
pub(super) const ENTRIES: &[HookEntry] = &[
    ("PreToolUse", Some(EDIT_TOOLS), HookKind::Edit),
    ("SessionStart", None, HookKind::SessionStart),
    ("Stop", None, HookKind::Stop),
];

// --- the doctor: Codex's trust ---------------------------------------------

/// How long the doctor waits for `codex app-server` to list its hooks.
const CODEX_LIST_BOUND: std::time::Duration = std::time::Duration::from_secs(15);

/// One hook as Codex lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedHook {
    /// The file it comes from.
    pub source_path: PathBuf,
    /// Its command line.
    pub command: String,
    /// `trusted`, `untrusted`, `modified` or `managed`.
    pub trust: String,
}

/// Codex's own word on the hooks it would run in `root`: `codex app-server`
/// asked `hooks/list` over stdio (JSON-RPC, one message a line), within
/// [`CODEX_LIST_BOUND`]. `None` when codex is not on PATH or gives no list
/// in time.
pub fn hooks_list(root: &Path, places: &Places) -> Option<Vec<ListedHook>> {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let exe = install::on_path("codex", places.path.as_deref())?;
    let mut child = Command::new(exe)
        .arg("app-server")
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let requests = [
        serde_json::json!({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "bsi", "version": env!("CARGO_PKG_VERSION")}}}),
        serde_json::json!({"method": "initialized"}),
        serde_json::json!({"id": 2, "method": "hooks/list", "params": {"cwds": [root.display().to_string()]}}),
    ];
    let mut stdin = child.stdin.take()?;
    let stdout = child.stdout.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line)
                && v["id"] == 2
            {
                let _ = tx.send(v);
                break;
            }
        }
    });
    for r in &requests {
        if writeln!(stdin, "{r}").is_err() {
            break;
        }
    }
    let answer = rx.recv_timeout(CODEX_LIST_BOUND).ok();
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let data = answer?.get("result")?.get("data")?.as_array()?.clone();
    Some(
        data.iter()
            .flat_map(|e| e["hooks"].as_array().cloned().unwrap_or_default())
            .filter_map(|h| {
                Some(ListedHook {
                    source_path: PathBuf::from(h["sourcePath"].as_str()?),
                    command: h["command"].as_str()?.to_string(),
                    trust: h["trustStatus"].as_str()?.to_string(),
                })
            })
            .collect(),
    )
}

/// The trust item from Codex's own list of bsi's hooks in `settings`.
fn listed_trust(root: &Path, settings: &Path, project: bool, listed: &[ListedHook]) -> Item {
    let ours: Vec<&ListedHook> = listed
        .iter()
        .filter(|h| h.source_path == settings && install::is_bsi_hook(&h.command, &Codex))
        .collect();
    let all = ENTRIES.len();
    let of = |status: &str| ours.iter().filter(|h| h.trust == status).count();
    let trusted = of("trusted") + of("managed");
    let modified = of("modified");
    if project && ours.len() >= all && trusted == ours.len() {
        return Item {
            what: "trust",
            ok: Some(true),
            detail: format!(
                "the project is trusted, and Codex reports bsi's {trusted} hooks of .codex/hooks.json trusted (`codex app-server`)"
            ),
            next: None,
        };
    }
    let detail = if modified > 0 {
        format!(
            "Codex reports {modified} of bsi's hooks of .codex/hooks.json modified since they were trusted (`codex app-server`): it skips them without a word until they are trusted again"
        )
    } else if !project {
        "the project is not trusted: Codex loads no .codex/ folder, bsi's hooks with it".to_string()
    } else {
        format!(
            "the project is trusted; Codex reports {trusted} of bsi's {all} hooks of .codex/hooks.json trusted (`codex app-server`)"
        )
    };
    Item {
        what: "trust",
        ok: Some(false),
        detail,
        next: Some(steps(root)),
    }
}

fn trust(root: &Path, settings: &Path, places: &Places) -> Item {
    let home = places
        .codex_home
        .clone()
        .or_else(|| places.home.as_ref().map(|h| h.join(".codex")));
    let config = home.as_ref().map(|h| h.join("config.toml"));
    let parsed: Option<toml::Table> = config
        .as_ref()
        .and_then(|c| std::fs::read_to_string(c).ok())
        .and_then(|t| t.parse().ok());
    let shown = config
        .as_ref()
        .map_or("the Codex config.toml".to_string(), |c| {
            c.display().to_string()
        });
    let Some(cfg) = parsed else {
        return Item {
            what: "trust",
            ok: Some(false),
            detail: format!("{shown} trusts neither this project nor bsi's hooks"),
            next: Some(steps(root)),
        };
    };
    let project = cfg
        .get("projects")
        .and_then(|p| p.as_table())
        .is_some_and(|p| {
            super::doctor::ancestors(root).iter().any(|a| {
                p.get(a)
                    .and_then(|e| e.get("trust_level"))
                    .and_then(|t| t.as_str())
                    == Some("trusted")
            })
        });
    if let Some(listed) = hooks_list(root, places) {
        return listed_trust(root, settings, project, &listed);
    }
    let prefix = format!("{}:", settings.display());
    let hooks = cfg
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(|s| s.as_table())
        .map_or(0, |s| {
            s.iter()
                .filter(|(k, v)| k.starts_with(&prefix) && v.get("trusted_hash").is_some())
                .count()
        });
    let all = ENTRIES.len();
    match (project, hooks >= all) {
        (true, true) => Item {
            what: "trust",
            ok: Some(true),
            detail: format!(
                "the project is trusted, and {hooks} hooks of .codex/hooks.json were trusted (bsi cannot tell whether they changed since: Codex then skips them until trusted again)"
            ),
            next: None,
        },
        (p, _) => Item {
            what: "trust",
            ok: Some(false),
            detail: format!(
                "{}; {hooks} of .codex/hooks.json's hooks trusted in {shown}",
                if p {
                    "the project is trusted"
                } else {
                    "the project is not trusted"
                }
            ),
            next: Some(steps(root)),
        },
    }
}

/// What a person does so Codex runs bsi's hooks.
pub fn steps(root: &Path) -> String {
    let root: PathBuf = root.components().collect();
    format!(
        "in `codex` started in {}: trust the project when asked, then open `/hooks` and trust bsi's hooks (Codex runs a project's hooks only when both are trusted)",
        root.display()
    )
}

/// Codex CLI.
pub struct Codex;

impl AgentTool for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn title(&self) -> &'static str {
        "Codex CLI"
    }

    fn shell_session_var(&self) -> Option<&'static str> {
        Some("CODEX_THREAD_ID")
    }

    fn parse_edit(&self, input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
        parse_edit(input, cwd)
    }

    fn answer(&self, verdict: &Verdict) -> Answer {
        answer(verdict)
    }

    fn parse_session_start(&self, input: &str, cwd: &Path) -> Result<SessionStart, EventError> {
        session_start_event(Tool::CODEX, input, cwd, "SessionStart", &["session_id"])
    }

    fn answer_session_start(&self, briefing: &Briefing) -> Answer {
        answer_session_start(briefing)
    }

    fn parse_stop(&self, input: &str, cwd: &Path) -> Result<Stop, EventError> {
        stop_event(Tool::CODEX, input, cwd, &["session_id"], &|o| {
            stop_hook_active(o, "Stop")
        })
    }

    /// Claude Code's answer.
    fn answer_stop(&self, reason: Option<&str>) -> Answer {
        claude::answer_stop(reason)
    }

    fn missing_answer(&self, kind: HookKind, text: &str) -> serde_json::Value {
        claude::missing_answer(kind, text)
    }

    // Codex's sandbox runs the agent's shell where the Codex process is not
    // seen among its ancestors, but every shell command carries the tool
    // session's id (`CODEX_THREAD_ID`), mapped by the session-start hook.
    fn session_note(&self, session: &str, _: bool, _: Option<&Path>) -> String {
        session_note(session)
    }

    /// Codex runs an entry found in both the user's and the project's hooks
    /// files twice: the second run of a session start must not brief the
    /// agent again (two runs of an edit give the same verdict, and the stop
    /// reminder is sent once by the session map).
    fn repeats_event(&self, kind: HookKind) -> bool {
        kind == HookKind::SessionStart
    }

    fn settings_file(&self) -> &'static str {
        SETTINGS
    }

    fn entries(&self) -> &'static [HookEntry] {
        ENTRIES
    }

    fn hook_layout(&self) -> HookLayout {
        HookLayout::Grouped { named: false }
    }

    fn user_settings_file(&self, places: &Places) -> Option<PathBuf> {
        Some(
            places
                .codex_home
                .clone()
                .or_else(|| places.home.as_ref().map(|h| h.join(".codex")))?
                .join("hooks.json"),
        )
    }

    fn install_notes(&self, root: &Path, common: &Path) -> Vec<String> {
        vec![
            format!(
                "Codex CLI runs project hooks only once a person trusts them, in two steps, and checks no edit until then: {}. Codex keeps each hook's trust by the hash of its entry: after a change of .codex/hooks.json, trust them again.",
                steps(root)
            ),
            format!(
                "In Codex's sandbox (workspace-write, read-only) the agent's shell cannot write the git directory, so its `bsi open` fails: start codex with `--add-dir {}` (or add that path to `sandbox_workspace_write.writable_roots` in your own ~/.codex/config.toml), or let the agent claim with bsi's MCP tool `claim` (registered below: the MCP server runs outside the sandbox, as the agent's session), or set `claim_on_write = true` in .bsi.toml so the edit hook, which runs outside the sandbox, claims for it.",
                bsi_core::words::shell_word(
                    &common
                        .components()
                        .collect::<PathBuf>()
                        .display()
                        .to_string()
                )
            ),
        ]
    }

    fn changed_hooks_note(&self, changed: usize, file: &str, root: &Path) -> Option<String> {
        Some(format!(
            "Codex CLI: this install changed {changed} of bsi's hooks already in {file} (an earlier install ran another program path or matched other tools). Codex keeps a hook's trust by the hash of its entry: it now marks them modified and skips them without a word until a person trusts them again. Next: {}.",
            steps(root)
        ))
    }

    fn user_install_note(&self, shown: &str) -> Option<String> {
        Some(format!(
            "\nCodex CLI runs user hooks too only once a person trusts them: in `codex`, open `/hooks` and trust bsi's hooks from {shown}."
        ))
    }

    fn mcp_settings(&self) -> McpSettings {
        McpSettings::Toml {
            file: ".codex/config.toml",
        }
    }

    fn trust(&self, root: &Path, settings: &Path, places: &Places) -> Item {
        trust(root, settings, places)
    }

    fn project_shortcuts(&self) -> Option<&'static str> {
        Some(
            "Codex CLI in a project it does not trust loads no .codex/ folder, and skips a hook not trusted in `/hooks` or changed since (`modified`), without a word",
        )
    }

    fn user_hooks_note(&self) -> &'static str {
        " (once trusted in `/hooks` themselves)"
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::fixture;
    use super::super::{Tool, new_text, parse_edit as parse, parse_session_start, parse_stop};
    use super::*;
    use serde_json::Value;
    use std::path::PathBuf;

    fn edits(name: &str) -> Vec<FileEdit> {
        match parse(Tool::CODEX, &fixture(name), Path::new("/elsewhere")) {
            Ok(PreEdit::Edit(r)) => {
                assert_eq!(r.tool, Tool::CODEX);
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
        let Ok(PreEdit::Edit(r)) = parse(Tool::CODEX, &input, Path::new("/")) else {
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
            Tool::CODEX,
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
        let Ok(PreEdit::Shell(cmd)) = parse(Tool::CODEX, &input, Path::new("/")) else {
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
            parse(Tool::CODEX, &bad, Path::new("/")),
            Err(EventError::Patch(_))
        ));
    }

    #[test]
    fn session_start_and_stop() {
        let s = parse_session_start(
            Tool::CODEX,
            &fixture("codex-sessionstart.json"),
            Path::new("/"),
        )
        .expect("parses");
        assert_eq!(s.session_id, "019a-codex-session");
        assert_eq!(s.source.as_deref(), Some("startup"));
        let st =
            parse_stop(Tool::CODEX, &fixture("codex-stop.json"), Path::new("/")).expect("parses");
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
