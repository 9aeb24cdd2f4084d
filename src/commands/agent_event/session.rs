//! When a tool's session starts (or is first seen): its bsi session named
//! and recorded, and the briefing the core gathers ([`api::agent::briefing`])
//! in the agent's words. When the agent stops: what the core says the
//! session still holds ([`api::agent::at_stop`]), and the reminder to
//! commit and close, once per set of claims.

use std::path::Path;

use super::super::Ctx;
use super::common::{event_dir, fail_open, guarded, known_session, nothing, open_at};
use crate::agents::{self, Answer, Briefing, HookKind, Tool, sessions};
use crate::output;
use bsi_core::api;
use bsi_core::api::publish::Freshness;
use bsi_core::error::{Error, Result};
use bsi_core::registry::Claim;
use bsi_core::session::new_session_id;
use bsi_core::words::{command_line, shell_word};

/// The answer to a session-start event.
pub(super) fn session_start(ctx: &Ctx, tool: Tool, input: &str) -> Result<Answer> {
    let ev = match agents::parse_session_start(tool, input, &ctx.cwd) {
        Ok(ev) => ev,
        Err(_) if !guarded(ctx, tool, &event_dir(ctx, input)) => {
            return Ok(nothing(tool, HookKind::SessionStart));
        }
        Err(e) => return Ok(fail_open(tool, HookKind::SessionStart, &e.to_string())),
    };
    if !guarded(ctx, tool, &ev.cwd) {
        return Ok(nothing(tool, HookKind::SessionStart));
    }
    let (context, session) = start(ctx, tool, &ev.session_id, &ev.cwd)?;
    Ok(agents::answer_session_start(
        tool,
        &Briefing {
            context,
            session: Some(session),
        },
    ))
}

/// Cline CLI waits for no hook when a session starts: the first tool call
/// of a session in each Cline process (a resumed session runs in a new one)
/// carries the briefing. `None` for every later call, and where there is
/// no brain to brief on.
pub(super) fn first_call_briefing(ctx: &Ctx, tool: Tool, id: &str, cwd: &Path) -> Option<String> {
    let map = sessions::in_repo(cwd).ok()?;
    let process = tool_process();
    let seen = map
        .entry(tool, id)
        .ok()?
        .is_some_and(|e| process.is_none() || e.process == process);
    if seen {
        return None;
    }
    match start(ctx, tool, id, cwd) {
        Ok((context, _)) => Some(context),
        Err(Error::NoRegistry { .. } | Error::NotARepo(_)) => None,
        Err(e) => {
            ctx.notes.push(format!(
                "warning: {e}; the agent goes on without bsi's briefing"
            ));
            None
        }
    }
}

/// A tool's session starts (or is first seen) in the directory `cwd`: its
/// bsi session named and recorded with the tool's process, and the briefing
/// for the agent. Returns the briefing and the session.
fn start(ctx: &Ctx, tool: Tool, tool_session: &str, cwd: &Path) -> Result<(String, String)> {
    let (ctx, brain, settings) = open_at(ctx, cwd)?;
    let map = sessions::in_repo(&brain.workdir)?;
    // For `bsi agent doctor`: the tool runs bsi's hooks here.
    if let Err(e) = map.mark_reached(tool, &bsi_core::ttl::format_ts(ctx.now)) {
        ctx.notes.push(format!("warning: {e}"));
    }
    let session = match ctx.env_session()? {
        Some(s) => {
            map.set(tool, tool_session, &s)?;
            s.into_string()
        }
        None => {
            map.get_or_insert_with(tool, tool_session, || {
                new_session_id(ctx.now, ctx.random_seed)
            })?
            .0
        }
    };
    // The tool's process: the agent's shell commands and the MCP server it
    // starts descend from it, and find this session by it.
    let by_process =
        tool_process().is_some_and(|process| map.set_process(tool, tool_session, &process).is_ok());
    let env_note = tool.session_note(&session, by_process, ctx.claude_env_file.as_deref());
    let b = api::agent::briefing(&brain, &settings, &session, ctx.now)?;
    Ok((briefing(&b, &session, &env_note, &ctx), session))
}

/// The agent tool's process: the nearest ancestor of this hook that is no
/// shell (tools run a hook through `sh -c`).
fn tool_process() -> Option<String> {
    const SHELLS: [&str; 6] = ["sh", "bash", "dash", "zsh", "ksh", "fish"];
    bsi_core::api::platform::ancestors(8)
        .into_iter()
        .find(|(_, name)| !SHELLS.contains(&name.as_str()))
        .map(|(p, _)| p)
}

/// What the agent is told when its session starts.
fn briefing(b: &api::agent::Briefing, session: &str, env_note: &str, ctx: &Ctx) -> String {
    let now = ctx.now;
    let mut t = format!(
        "bsi guards this repository: sessions claim what they edit, and an edit inside another session's claim is refused before it happens.\nYour bsi session: {session} ({env_note})."
    );
    t.push_str(match b.fresh {
        Freshness::Local => "\nClaims (this clone has no remote):",
        Freshness::Fetched | Freshness::FirstPublished(_) => {
            "\nClaims (fetched from the remote just now):"
        }
        Freshness::NotAsked | Freshness::Unreachable(_) => {
            "\nClaims (as last fetched: the remote could not be reached):"
        }
    });
    let list = |t: &mut String, claims: &[Claim], stale: bool| {
        for c in claims {
            t.push_str("\n- ");
            t.push_str(&output::describe(c, stale, now));
        }
    };
    t.push_str("\nYours:");
    if b.own.is_empty() {
        t.push_str(" none");
    }
    list(&mut t, &b.own, false);
    t.push_str("\nOther sessions' (do not edit inside them):");
    if b.others.is_empty() {
        t.push_str(" none");
    }
    list(&mut t, &b.others, false);
    if !b.stale.is_empty() {
        t.push_str("\nStale (expired, still not free: a person decides with `bsi release SESSION --confirm`; tell the user):");
        list(&mut t, &b.stale, true);
    }
    if !b.drift.is_empty() {
        t.push_str(
            "\nChanged under your claims by commits that are not yours (made without bsi's hooks, or forced past them): read each before you go on, and tell the user.",
        );
        for d in &b.drift {
            t.push_str("\n- ");
            t.push_str(&bsi_core::api::audit::drift_line(d));
        }
    }
    t.push_str(&format!(
        "\nNext: before editing, claim what you will change: `{}` (SCOPE: dir/, file.md or {}); if it is held, `{}` waits for it instead of a sleep loop. Other sessions may work in this same work tree: commit only your own lines with `{}` (`-m MESSAGE` for your message; it leaves the others' lines in the files), never `git stash`, `git reset --hard` or `git clean` their work away; then `{}`.",
        command_line(["bsi", "open", "SCOPE", "--session", session]),
        shell_word("file.md#Heading"),
        command_line(["bsi", "open", "SCOPE", "--session", session, "--wait", "10m"]),
        command_line(["bsi", "commit", "--session", session]),
        command_line(["bsi", "close", session])
    ));
    t
}

/// The answer to a stop event.
pub(super) fn stop(ctx: &Ctx, tool: Tool, input: &str) -> Result<Answer> {
    let ev = match agents::parse_stop(tool, input, &ctx.cwd) {
        Ok(ev) => ev,
        Err(_) if !guarded(ctx, tool, &event_dir(ctx, input)) => {
            return Ok(nothing(tool, HookKind::Stop));
        }
        Err(e) => return Ok(fail_open(tool, HookKind::Stop, &e.to_string())),
    };
    if ev.continued || !guarded(ctx, tool, &ev.cwd) {
        return Ok(agents::answer_stop(tool, &ev, None));
    }
    let (ctx, brain, settings) = open_at(ctx, &ev.cwd)?;
    let map = sessions::in_repo(&brain.workdir)?;
    let Some(session) = known_session(&ctx, &map, tool, &ev.session_id)? else {
        return Ok(agents::answer_stop(tool, &ev, None));
    };
    // The end of a turn: the core keeps the session's uncommitted work as
    // it is now when it holds anything.
    let held: Vec<String> = api::agent::at_stop(&brain, &settings, &session)?
        .into_iter()
        .map(|(scope, stale)| match stale {
            false => scope.to_string(),
            true => format!("{scope} (stale)"),
        })
        .collect();
    if held.is_empty() {
        return Ok(agents::answer_stop(tool, &ev, None));
    }
    // Once per set of claims, by bsi's own memory: Gemini CLI says
    // `stop_hook_active: false` on every stop that follows a tool call.
    let what = held.join(", ");
    if map.get(tool, &ev.session_id)?.is_none() {
        // The session came from BSI_SESSION: remembered from now on.
        map.set(tool, &ev.session_id, &session)?;
    }
    if !map.send_back_once(tool, &ev.session_id, &what)? {
        return Ok(agents::answer_stop(tool, &ev, None));
    }
    let reason = format!(
        "bsi: your session {session} still holds {what}. Before you stop: commit your own lines with `{}` (`-m MESSAGE` for your message; other sessions' lines stay in the work tree), then run `{}`. If you keep the claims on purpose (the work goes on later), say so and why.",
        command_line(["bsi", "commit", "--session", &session]),
        command_line(["bsi", "close", &session])
    );
    Ok(agents::answer_stop(tool, &ev, Some(&reason)))
}
