//! What every event of the agent tools' hooks shares: the hook's time
//! bound, the brain of the directory an event names (and whether bsi's
//! hooks have anything to do there), the agent's bsi session, and the
//! answers that say nothing or let the tool go on unchecked.

use std::fs;
use std::path::{Path, PathBuf};

use super::super::Ctx;
use crate::agents::{self, Answer, HookKind, Tool, Verdict, sessions};
use bsi_core::api::publish;
use bsi_core::api::settings::Settings;
use bsi_core::api::store::Brain;
use bsi_core::error::Result;
use bsi_core::session::new_session_id;

/// How long a hook may wait, whatever the settings say for the command
/// line: the writer lock held by another bsi at most 2 s (a claim on the
/// first write that cannot have it is refused, nothing written), and every
/// fetch and push of one hook together at most 3 s (a claim that cannot be
/// published in that time holds on this machine, and the agent is told to
/// run `bsi sync`). docs/agent-tools.md says these figures.
pub const HOOK_BOUND: publish::Bound = publish::Bound {
    lock_wait: std::time::Duration::from_secs(2),
    remote: std::time::Duration::from_secs(3),
};

/// The fail-open answer, saying what goes on unchecked.
pub(crate) fn fail_open(tool: Tool, kind: HookKind, why: &str) -> Answer {
    let then = match kind {
        HookKind::Edit => "the edit goes through unchecked",
        HookKind::SessionStart => "the session starts without bsi's briefing",
        HookKind::Stop => "the agent stops without bsi's reminder",
    };
    agents::fail_open(tool, kind, &format!("{}; {then}", why.trim_end()))
}

/// The answer that says nothing: an edit let through, a session that
/// starts or stops without a word.
pub(super) fn nothing(tool: Tool, kind: HookKind) -> Answer {
    match kind {
        HookKind::Edit => agents::answer(tool, &Verdict::Allow),
        HookKind::SessionStart | HookKind::Stop => {
            let mut a = agents::fail_open(tool, kind, "");
            a.stderr.clear();
            a
        }
    }
}

/// Whether bsi's hooks of `tool` have anything to do at `dir`: it is in a
/// work tree whose clone has a registry (the local branch or its
/// remote-tracking copy), or whose project settings hold bsi's hooks for
/// `tool` (a brain set up by its team, whose clone has not fetched the
/// registry yet, or not set up at all: the hooks say so there).
///
/// Elsewhere the hooks answer nothing, write nothing and ask no remote:
/// a user-level install (`bsi agent install --user`) runs them in every
/// session of the tool on the machine, in every repository and outside any.
/// Cheap: the repository opened in this process, a file read and a look at
/// two references.
pub(super) fn guarded(ctx: &Ctx, tool: Tool, dir: &Path) -> bool {
    let Ok(git) = bsi_core::api::git::Git::discover(dir) else {
        return false;
    };
    if let Ok(root) = git.workdir()
        && fs::read_to_string(root.join(agents::install::settings_file(tool)))
            .is_ok_and(|t| !agents::install::our_commands(tool, &t).is_empty())
    {
        return true;
    }
    let mut here = ctx.clone();
    here.cwd = dir.to_path_buf();
    let Ok((brain, settings)) = here.open_for_hook() else {
        return false;
    };
    let remote = settings.remote().ok().flatten();
    let tips = brain.tips(remote.as_ref());
    tips.local.is_some() || tips.tracking.is_some()
}

/// The directory an event names, if it names one (else the caller's).
pub(super) fn event_dir(ctx: &Ctx, input: &str) -> PathBuf {
    serde_json::from_str::<serde_json::Value>(input)
        .ok()
        .and_then(|v| {
            ["cwd"]
                .iter()
                .find_map(|k| v[k].as_str().map(PathBuf::from))
                .or_else(|| v["workspace_roots"][0].as_str().map(PathBuf::from))
        })
        .filter(|c| c.is_dir())
        .unwrap_or_else(|| ctx.cwd.clone())
}

/// The brain of the directory an event names.
pub(super) fn open_at(ctx: &Ctx, dir: &Path) -> Result<(Ctx, Brain, Settings)> {
    let mut here = ctx.clone();
    if dir.is_dir() {
        here.cwd = dir.to_path_buf();
    }
    let (brain, mut settings) = here.open_for_hook()?;
    // One fetch or push of a hook waits no longer than a hook's whole
    // remote time.
    settings.connection_timeout = settings.connection_timeout.min(HOOK_BOUND.remote);
    settings.publish_timeout = settings.publish_timeout.min(HOOK_BOUND.remote);
    Ok((here, brain, settings))
}

/// The agent's bsi session: `BSI_SESSION`, else the session map's entry.
pub(super) fn known_session(
    ctx: &Ctx,
    map: &sessions::SessionMap,
    tool: Tool,
    id: &str,
) -> Result<Option<String>> {
    if let Some(s) = ctx.env_session()? {
        return Ok(Some(s.into_string()));
    }
    map.get(tool, id)
}

/// The agent's bsi session, or `None` with a warning when it cannot be
/// read: every claim then counts as another session's.
pub(super) fn known_session_or_say(
    ctx: &Ctx,
    map: &sessions::SessionMap,
    tool: Tool,
    id: &str,
) -> Option<String> {
    known_session(ctx, map, tool, id).unwrap_or_else(|e| {
        ctx.notes.push(format!("warning: {e}; the agent's session is unknown, so every claim counts as another session's"));
        None
    })
}

/// The agent's bsi session, named now (and recorded) when it has none.
pub(super) fn session_or_new(
    ctx: &Ctx,
    map: &sessions::SessionMap,
    tool: Tool,
    id: &str,
) -> Result<(String, bool)> {
    match known_session(ctx, map, tool, id)? {
        Some(s) => Ok((s, false)),
        None => map.get_or_insert_with(tool, id, || new_session_id(ctx.now, ctx.random_seed)),
    }
}

/// The session a refusal names in its commands: `session`, else the
/// agent's, named now; else a new one not recorded.
pub(super) fn name_for_refusal(
    ctx: &Ctx,
    map: &sessions::SessionMap,
    tool: Tool,
    id: &str,
    session: Option<String>,
) -> String {
    session
        .or_else(|| session_or_new(ctx, map, tool, id).ok().map(|(s, _)| s))
        .unwrap_or_else(|| new_session_id(ctx.now, ctx.random_seed))
}

/// The session map of the clone of `brain`.
pub(super) fn map_of(brain: &Brain) -> sessions::SessionMap {
    sessions::SessionMap::new(&sessions::dir_in(&brain.git.common_dir()))
}
