//! `bsi hook edit|session-start|stop --tool T`: the agent tools' events —
//! before a file edit, when a session starts and when the agent stops —
//! read and answered in the tool's protocol: the door parses the tool's
//! event, calls the core in process, and renders its typed outcome in the
//! tool's words; it decides no rule of its own.
//!
//! Here: the command lines read without clap, the one run of a hook and
//! its dispatch by event. [`edit`] answers before (and after) an edit,
//! [`shell`] a shell command that writes files or takes uncommitted work
//! away, [`session`] a session's start and its stop; [`common`] holds what
//! they share.
//!
//! The edit hook turns the tool's event into (file, old text, new text),
//! each file named as the brain file it reaches (`commands::edits`), asks
//! [`bsi_core::api::edit::decide`] — the decision MCP's `check` asks too —
//! and answers in the tool's protocol. It reads the local registry branch
//! and its remote-tracking copy. It goes to the network once per clone at
//! most: a single-branch or shallow clone that has never fetched the
//! registry fetches it within the hook's bound, and adds the branch to
//! what the clone fetches (a write of its git config). It writes the
//! registry when it claims on the first write (`claim_on_write`) or names a
//! new session in a refusal, and the session map when it gives a tool's
//! session its bsi session.
//!
//! Errors fail open, refusals never do: a broken event, a missing registry
//! or an internal error lets the edit through with a warning; a real overlap
//! with another session's claim is always refused.
//!
//! A hook runs while the agent waits: its own time is bounded
//! ([`HOOK_BOUND`]) whatever the clone's settings say for the command line.

mod common;
mod decided;
mod edit;
mod session;
mod shell;

use std::fs;
use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use super::Ctx;
use crate::agents::{self, Answer, HookKind, Tool, sessions};
use bsi_core::error::Result;
use common::{event_dir, guarded, nothing};

pub use common::HOOK_BOUND;
pub(crate) use common::fail_open;

/// The agent tools' hooks run on every edit an agent makes, and building
/// clap's whole command tree costs a third of such a run. The command lines
/// `bsi agent install` writes — exactly `hook edit|session-start|stop
/// --tool TOOL` — are read here without it, with the environment clap would
/// read (`BSI_REGISTRY`, `BSI_REMOTE`); any other command line, even one
/// that means the same, goes through clap.
pub fn fast_path(args: &[std::ffi::OsString]) -> Option<u8> {
    let args: Vec<&str> = args
        .iter()
        .skip(1)
        .map(|a| a.to_str())
        .collect::<Option<_>>()?;
    let (kind, tool) = match args.as_slice() {
        ["hook", kind, "--tool", tool] => (*kind, *tool),
        _ => return None,
    };
    let kind = match kind {
        "edit" => HookKind::Edit,
        "session-start" => HookKind::SessionStart,
        "stop" => HookKind::Stop,
        _ => return None,
    };
    let tool = Tool::from_name(tool)?;
    Some(run(Ctx::from_env_alone(), tool, kind))
}

/// The tool named on a command line that clap could not read
/// (`--tool claude` or `--tool=claude`).
pub(crate) fn tool_in_args(args: &[String]) -> Option<Tool> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--tool" {
            return it.next().and_then(|t| Tool::from_name(t));
        }
        if let Some(t) = a.strip_prefix("--tool=") {
            return Tool::from_name(t);
        }
    }
    None
}

/// The hook kind of a `bsi hook …` command line clap could not read.
pub(crate) fn kind_in_args(args: &[String]) -> Option<HookKind> {
    // The first word that is no global option must be `hook`.
    let mut at = 1;
    while let Some(a) = args.get(at) {
        match a.as_str() {
            "--registry" | "--remote" => at += 2,
            a if a.starts_with('-') => at += 1,
            _ => break,
        }
    }
    if args.get(at).map(String::as_str) != Some("hook") {
        return None;
    }
    match args.get(at + 1)?.as_str() {
        "edit" => Some(HookKind::Edit),
        "session-start" => Some(HookKind::SessionStart),
        "stop" => Some(HookKind::Stop),
        _ => None,
    }
}

/// Prints an answer and returns its exit code.
pub(crate) fn emit(a: &Answer) -> u8 {
    let _ = std::io::stdout().lock().write_all(a.stdout.as_bytes());
    let _ = std::io::stderr().lock().write_all(a.stderr.as_bytes());
    a.exit_code
}

/// Runs one hook: reads the event on stdin, answers on stdout. Never fails:
/// every error (even a panic) becomes the tool's fail-open answer.
pub(crate) fn run(ctx: Result<Ctx>, tool: Tool, kind: HookKind) -> u8 {
    // What the registry's IO had to say on the way (a file of the user's
    // moved aside, a remote out of reach): said with the answer, on the
    // stream the tools show the user, as the CLI says it on stderr.
    let notes = ctx.as_ref().ok().map(|c| c.notes.clone());
    let mut input = String::new();
    let mut answer = if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        fail_open(tool, kind, &format!("cannot read the hook event: {e}"))
    } else {
        // VS Code runs the hooks of Claude Code's settings and of
        // `.github/hooks` (Copilot CLI's) with events of its own: read as
        // VS Code's, wherever they arrive (and Copilot CLI's, when it runs
        // VS Code's hooks file).
        let tool = agents::vscode::recognise(tool, &input);
        let handled = catch_unwind(AssertUnwindSafe(|| {
            let ctx = ctx?;
            if !first_run(&ctx, tool, kind, &input) {
                return Ok(nothing(tool, kind));
            }
            match kind {
                HookKind::Edit => on_edit(&ctx, tool, &input),
                HookKind::SessionStart => session::session_start(&ctx, tool, &input),
                HookKind::Stop => session::stop(&ctx, tool, &input),
            }
        }));
        match handled {
            Ok(Ok(a)) => a,
            Ok(Err(e)) => fail_open(tool, kind, &e.to_string()),
            Err(_) => fail_open(tool, kind, "internal error (bsi panicked)"),
        }
    };
    for line in notes.map(|n| n.take()).unwrap_or_default() {
        answer.stderr.push_str(&format!("bsi: {line}\n"));
    }
    emit(&answer)
}

/// How long a hook event is remembered as seen: the runs of one event by
/// two settings files start together.
const SEEN_FOR: std::time::Duration = std::time::Duration::from_secs(60);

/// Whether this run is the first of this very session start. Codex CLI
/// runs an entry found in both the user's and the project's hooks files
/// twice (Claude Code and Gemini CLI run it once): the second run of the
/// same session-start event (the same bytes on stdin) answers nothing, so
/// the agent gets one briefing. (Two runs of an edit event give the same
/// verdict, and the stop reminder is sent once by the session map.)
/// Recorded by creating a file named by the event's hash in the
/// clone's `bsi-agents/seen/`, which only one run can create; only in a
/// brain ([`guarded`]), and forgotten after [`SEEN_FOR`].
fn first_run(ctx: &Ctx, tool: Tool, kind: HookKind, input: &str) -> bool {
    use sha1::{Digest, Sha1};
    if !tool.repeats_event(kind) {
        return true;
    }
    let dir = event_dir(ctx, input);
    if !guarded(ctx, tool, &dir) {
        return true;
    }
    let Ok(git) = bsi_core::api::git::Git::discover(&dir) else {
        return true;
    };
    let seen = sessions::dir_in(&git.common_dir()).join("seen");
    if fs::create_dir_all(&seen).is_err() {
        return true;
    }
    let hash = Sha1::digest(format!("{tool} {} {input}", kind.subcommand()).as_bytes());
    let name: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    let old = |p: &Path| {
        p.metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_none_or(|age| age > SEEN_FOR)
    };
    let marker = seen.join(name);
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&marker)
    {
        Ok(_) => {
            // Forget what is old.
            for e in fs::read_dir(&seen).into_iter().flatten().flatten() {
                if old(&e.path()) {
                    let _ = fs::remove_file(e.path());
                }
            }
            true
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if old(&marker) {
                let _ = fs::remove_file(&marker);
                return fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&marker)
                    .is_ok();
            }
            false
        }
        Err(_) => true,
    }
}

/// The answer to an edit event; Cline CLI's first tool call of a session
/// carries the session's briefing ([`session::first_call_briefing`]).
fn on_edit(ctx: &Ctx, tool: Tool, input: &str) -> Result<Answer> {
    if let Some((id, cwd)) = tool.first_call_session(input, &ctx.cwd) {
        // First the session (and its process, which the agent's shell
        // finds it by), then the call.
        let briefing = session::first_call_briefing(ctx, tool, &id, &cwd);
        let answer = edit::judge(ctx, tool, input)?;
        return Ok(match briefing {
            Some(b) => tool.with_briefing(answer, &b),
            None => answer,
        });
    }
    edit::judge(ctx, tool, input)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn only_the_installed_command_lines_skip_clap() {
        let os =
            |s: &str| -> Vec<std::ffi::OsString> { s.split_whitespace().map(Into::into).collect() };
        // What clap must still read: other commands, other spellings,
        // unknown tools and hooks (these return before reading stdin).
        for line in [
            "bsi status",
            "bsi hook pre-commit",
            "bsi hook edit --tool=claude",
            "bsi hook edit --tool nobody",
            "bsi hook commit --tool claude",
            "bsi -q hook edit --tool claude",
            "bsi hook edit --tool claude extra",
        ] {
            assert_eq!(fast_path(&os(line)), None, "{line}");
        }
        // And the ones `bsi agent install` writes are exactly its shape.
        for tool in Tool::ALL {
            for kind in [HookKind::Edit, HookKind::SessionStart, HookKind::Stop] {
                let line = crate::agents::install::hook_command("bsi", tool, kind);
                let words: Vec<&str> = line.split_whitespace().collect();
                assert_eq!(
                    &words[1..5],
                    ["hook", kind.subcommand(), "--tool", tool.name()],
                    "{line}"
                );
            }
        }
    }

    #[test]
    fn a_hook_command_line_is_recognised_even_when_clap_cannot_read_it() {
        assert_eq!(
            kind_in_args(&args("bsi hook edit --tool vim")),
            Some(HookKind::Edit)
        );
        assert_eq!(
            kind_in_args(&args("bsi -q hook session-start")),
            Some(HookKind::SessionStart)
        );
        assert_eq!(kind_in_args(&args("bsi hook pre-commit")), None);
        assert_eq!(kind_in_args(&args("bsi open hook")), None);
        assert_eq!(kind_in_args(&args("bsi open --bad hook edit")), None);
        assert_eq!(
            kind_in_args(&args("bsi --remote origin hook stop")),
            Some(HookKind::Stop)
        );
        assert_eq!(
            tool_in_args(&args("bsi hook stop --tool codex --x")),
            Some(Tool::CODEX)
        );
        assert_eq!(
            tool_in_args(&args("bsi hook stop --tool=cursor")),
            Some(Tool::CURSOR)
        );
        assert_eq!(tool_in_args(&args("bsi hook stop --tool vim")), None);
        assert_eq!(tool_in_args(&args("bsi hook stop --tool")), None);
    }
}
