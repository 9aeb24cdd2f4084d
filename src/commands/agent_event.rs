//! `bsi hook edit|session-start|stop --tool T`: the agent tools' events —
//! before a file edit, when a session starts and when the agent stops —
//! read and answered in the tool's protocol.
//!
//! The edit hook turns the tool's event into (file, old text, new text),
//! each file named as the brain file it reaches (`commands::edits`), asks
//! [`bsi_core::guard::edit::decide`] — the decision MCP's `check` asks too —
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

use std::fs;
use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use super::Ctx;
use super::edits::{self, brain_rel, resolved};
use crate::agents::{
    self, Answer, Briefing, EditOp, FileEdit, HookKind, PreEdit, Tool, Verdict, sessions,
};
use crate::output;
use bsi_core::api;
use bsi_core::api::publish::{self, Freshness, Landed};
use bsi_core::api::settings::Settings;
use bsi_core::api::store::{Brain, FirstFetch};
use bsi_core::claims::scopes_summary;
use bsi_core::claims::session_claims;
use bsi_core::config::HookMode;
use bsi_core::error::{Error, Result};
use bsi_core::guard::Finding;
use bsi_core::guard::discard::Discard;
use bsi_core::guard::edit::{self, EditDecision, Rules, Target};
use bsi_core::guard::verdict::{self, Judged};
use bsi_core::registry::{Claim, Registry};
use bsi_core::scope::Scope;
use bsi_core::session::new_session_id;
use bsi_core::ttl;
use bsi_core::words::open_command;
use bsi_core::words::{command_line, shell_word};

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
                HookKind::Edit => edit(&ctx, tool, &input),
                HookKind::SessionStart => session_start(&ctx, tool, &input),
                HookKind::Stop => stop(&ctx, tool, &input),
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

/// The fail-open answer, saying what goes on unchecked.
pub(crate) fn fail_open(tool: Tool, kind: HookKind, why: &str) -> Answer {
    let then = match kind {
        HookKind::Edit => "the edit goes through unchecked",
        HookKind::SessionStart => "the session starts without bsi's briefing",
        HookKind::Stop => "the agent stops without bsi's reminder",
    };
    agents::fail_open(tool, kind, &format!("{}; {then}", why.trim_end()))
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
fn guarded(ctx: &Ctx, tool: Tool, dir: &Path) -> bool {
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

/// The answer that says nothing: an edit let through, a session that
/// starts or stops without a word.
fn nothing(tool: Tool, kind: HookKind) -> Answer {
    match kind {
        HookKind::Edit => agents::answer(tool, &Verdict::Allow),
        HookKind::SessionStart | HookKind::Stop => {
            let mut a = agents::fail_open(tool, kind, "");
            a.stderr.clear();
            a
        }
    }
}

/// The directory an event names, if it names one (else the caller's).
fn event_dir(ctx: &Ctx, input: &str) -> PathBuf {
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
fn open_at(ctx: &Ctx, dir: &Path) -> Result<(Ctx, Brain, Settings)> {
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
fn known_session(
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

/// The agent's bsi session, named now (and recorded) when it has none.
fn session_or_new(
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

// --- before an edit ------------------------------------------------------

/// The file system, as the shell-command reader asks about it.
struct RealDisk;

impl agents::shell_writes::Disk for RealDisk {
    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }
    fn exists(&self, path: &Path) -> bool {
        path.symlink_metadata().is_ok()
    }
    fn read(&self, path: &Path) -> Option<String> {
        // A patch of at most 4 MiB, never through a link.
        let meta = path.symlink_metadata().ok()?;
        if !meta.is_file() || meta.len() > 4 << 20 {
            return None;
        }
        fs::read_to_string(path).ok()
    }
}

fn edit(ctx: &Ctx, tool: Tool, input: &str) -> Result<Answer> {
    if let Some((id, cwd)) = tool.first_call_session(input, &ctx.cwd) {
        // First the session (and its process, which the agent's shell
        // finds it by), then the call.
        let briefing = first_call_briefing(ctx, tool, &id, &cwd);
        let answer = judge(ctx, tool, input)?;
        return Ok(match briefing {
            Some(b) => tool.with_briefing(answer, &b),
            None => answer,
        });
    }
    judge(ctx, tool, input)
}

/// The answer to a pre-edit event.
fn judge(ctx: &Ctx, tool: Tool, input: &str) -> Result<Answer> {
    if let Some((id, may_have_claimed)) = tool.after_edit_session(input) {
        if !may_have_claimed {
            return Ok(tool.answer_after_edit(None));
        }
        return after_edit(ctx, tool, &id, input);
    }
    let req = match agents::parse_edit(tool, input, &ctx.cwd) {
        Ok(PreEdit::Edit(r)) => r,
        // A shell command: judged only when it writes a file bsi can name;
        // one that writes nothing is let through before any registry read.
        Ok(PreEdit::Shell(cmd)) => match cmd.edits(&RealDisk) {
            Some(r) => r,
            None => return Ok(agents::answer(tool, &Verdict::Allow)),
        },
        Ok(PreEdit::Other { .. }) => return Ok(agents::answer(tool, &Verdict::Allow)),
        Err(_) if !guarded(ctx, tool, &event_dir(ctx, input)) => {
            return Ok(nothing(tool, HookKind::Edit));
        }
        Err(e) => return Ok(fail_open(tool, HookKind::Edit, &e.to_string())),
    };
    if req.edits.is_empty() {
        return Ok(agents::answer(tool, &Verdict::Allow));
    }
    // Each edit is judged in the brain of the work tree that holds its
    // file, whatever directory the event names: the agent may run in
    // another work tree of the clone, outside any repository, or in a
    // Cursor window whose first workspace root is not the brain.
    let mut answers = Vec::new();
    for (dir, edits) in by_work_tree(&req.cwd, &req.edits) {
        let a = edit_in(ctx, tool, (&dir, &req.cwd), &req.session_id, &edits)?;
        if a.refuses {
            return Ok(a);
        }
        answers.push(a);
    }
    let allow = agents::answer(tool, &Verdict::Allow);
    Ok(answers
        .iter()
        .find(|a| **a != allow)
        .or(answers.first())
        .cloned()
        .unwrap_or(allow))
}

/// The edits grouped by the work tree their file is in (its path with
/// symbolic links resolved), each with the directory the brain is found
/// from: the file's own directory (a work tree of the clone nested in
/// another is its own), except for a file of another repository nested in
/// the event's work tree (a submodule), which stays the event's; edits of
/// files in no work tree go with the event's directory.
fn by_work_tree(cwd: &Path, edits: &[FileEdit]) -> Vec<(PathBuf, Vec<FileEdit>)> {
    // A work tree's root and its clone's common git directory.
    let tree_of = |dir: &Path| {
        let git = bsi_core::api::git::Git::discover(dir).ok()?;
        let top = git.workdir().ok()?;
        let common = git.common_dir();
        Some((
            fs::canonicalize(&top).unwrap_or(top),
            fs::canonicalize(&common).unwrap_or(common),
        ))
    };
    let here = tree_of(cwd);
    let mut groups: Vec<(Option<PathBuf>, PathBuf, Vec<FileEdit>)> = Vec::new();
    for e in edits {
        let at_file = resolved(&e.path).and_then(|p| {
            let dir = if p.is_dir() {
                p.clone()
            } else {
                p.parent().map_or_else(|| p.clone(), Path::to_path_buf)
            };
            tree_of(&dir).map(|t| (p, dir, t))
        });
        let (key, dir) = match (at_file, &here) {
            (Some((p, _, (_, common))), Some((top, here_common)))
                if common != *here_common && p.starts_with(top) =>
            {
                (Some(top.clone()), cwd.to_path_buf())
            }
            (Some((_, dir, (top, _))), _) => (Some(top), dir),
            (None, _) => (None, cwd.to_path_buf()),
        };
        match groups.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, _, group)) => group.push(e.clone()),
            None => groups.push((key, dir, vec![e.clone()])),
        }
    }
    groups.into_iter().map(|(_, dir, g)| (dir, g)).collect()
}

/// The brain, settings and registry an edit in `dir` is judged on, read
/// as the hook reads them (the first fetch of a clone that never fetched
/// the registry, the clone's hook mode); or the answer that ends the hook
/// before any judging (mode `off`, bsi not set up, the remote unreached).
#[allow(clippy::type_complexity)]
fn registry_for_edit(
    ctx: &Ctx,
    tool: Tool,
    dir: &Path,
) -> Result<std::result::Result<(Ctx, Brain, Settings, Registry), Answer>> {
    let (mut ctx, mut brain, mut settings) = open_at(ctx, dir)?;
    // A single-branch or shallow clone that never fetched the registry.
    let remote = settings.remote().ok().flatten();
    match brain.first_fetch(remote.as_ref(), settings.connection_timeout) {
        FirstFetch::Fetched(note) => {
            ctx.notes.push(format!("note: {note}"));
            (ctx, brain, settings) = open_at(&ctx, dir)?;
        }
        FirstFetch::Unreached(why) => return Ok(Err(fail_open(tool, HookKind::Edit, &why))),
        FirstFetch::NotNeeded | FirstFetch::NoneThere => {}
    }
    for w in &settings.warnings {
        ctx.notes.push(format!("warning: {w}"));
    }
    let mode = settings.hook_mode;
    if mode == HookMode::Off {
        return Ok(Err(agents::answer(tool, &Verdict::Allow)));
    }
    // The local registry branch and the remote as last fetched.
    let remote = settings.remote().ok().flatten();
    let reg = match brain.view(remote.as_ref()) {
        Ok(v) => v.registry,
        Err(e @ Error::NoRegistry { .. }) => {
            return Ok(Err(fail_open(
                tool,
                HookKind::Edit,
                &format!("{e} (bsi is not set up in this repository: `bsi init`)"),
            )));
        }
        Err(e) => return Err(e),
    };
    Ok(Ok((ctx, brain, settings, reg)))
}

/// The edit hook for the edits of one work tree, its brain found from
/// `dir`; `shell`: the directory the agent's shell runs in, which the
/// commands of a refusal are written for.
fn edit_in(
    ctx: &Ctx,
    tool: Tool,
    (dir, shell): (&Path, &Path),
    session_id: &str,
    edits: &[FileEdit],
) -> Result<Answer> {
    if !guarded(ctx, tool, dir) {
        return Ok(nothing(tool, HookKind::Edit));
    }
    let (ctx, brain, settings, reg) = match registry_for_edit(ctx, tool, dir)? {
        Ok(found) => found,
        Err(answer) => return Ok(answer),
    };
    let (moves, edits): (Vec<FileEdit>, Vec<FileEdit>) = edits
        .iter()
        .cloned()
        .partition(|e| matches!(e.op, EditOp::Discard(_)));
    // A move that takes uncommitted work out of the work tree is judged
    // first, on what it would take.
    for m in &moves {
        if let Some(a) = discard_in(
            &ctx,
            tool,
            (&brain, &settings, &reg),
            m,
            (session_id, shell),
        )? {
            return Ok(a);
        }
    }
    let mut targets = targets(&brain, &edits);
    if targets.is_empty() {
        return Ok(agents::answer(tool, &Verdict::Allow));
    }
    // From here on an error must not let an overlap through: a session
    // that cannot be read or named only makes every claim someone else's.
    let map = sessions::SessionMap::new(&sessions::dir_in(&brain.git.common_dir()));
    let rules = edits::rules(&brain, &settings);
    let mut session = known_session(&ctx, &map, tool, session_id).unwrap_or_else(|e| {
        ctx.notes.push(format!("warning: {e}; the agent's session is unknown, so every claim counts as another session's"));
        None
    });
    // Claiming needs a session: then one is named now if the agent has none.
    if rules.claim_on_write && session.is_none() {
        session = session_or_new(&ctx, &map, tool, session_id)
            .ok()
            .map(|(s, _)| s);
    }
    // The session a refusal names in its commands.
    let name = |session: Option<String>| {
        session
            .or_else(|| {
                session_or_new(&ctx, &map, tool, session_id)
                    .ok()
                    .map(|(s, _)| s)
            })
            .unwrap_or_else(|| new_session_id(ctx.now, ctx.random_seed))
    };
    match edits::decide(&rules, &reg, session.as_deref(), &mut targets) {
        EditDecision::Allow => {
            keep_edits(&brain, &reg, session.as_deref(), &targets);
            Ok(agents::answer(tool, &Verdict::Allow))
        }
        EditDecision::Deny {
            copy,
            findings,
            judged,
            claim,
        } => {
            let reason = match copy {
                Some(copy) => copy_refusal(&brain, &copy),
                None => refusal(
                    ctx.now,
                    &brain,
                    &reg,
                    &name(session),
                    (&judged, &findings),
                    &claim,
                    &targets,
                ),
            };
            Ok(agents::answer(tool, &Verdict::Deny { reason }))
        }
        EditDecision::Warn { copy, judged, .. } => {
            // What is inside other sessions' claims, once each, without
            // the `bsi: ` the tools' answers already start with.
            let copy = copy.map(|c| verdict::copy_edited(&c, &brain.branch, false));
            let warning = copy
                .iter()
                .chain(judged.lines.iter())
                .map(|l| l.strip_prefix("bsi: ").unwrap_or(l))
                .collect::<Vec<_>>()
                .join("\n");
            if let Some(s) = session.as_deref() {
                keep_for_after(&brain, tool, s, &format!("bsi: {warning}"));
            }
            keep_edits(&brain, &reg, session.as_deref(), &targets);
            Ok(agents::answer(tool, &Verdict::AllowWithWarning { warning }))
        }
        EditDecision::ClaimFirst { scopes, split, ttl } => {
            // Only chosen for a known session.
            let Some(s) = session.as_deref() else {
                return Ok(agents::answer(tool, &Verdict::Allow));
            };
            let tries: Vec<Vec<Scope>> = std::iter::once(scopes).chain(split).collect();
            let write = ClaimOnWrite {
                ctx: &ctx,
                brain: &brain,
                settings: &settings,
                tool,
                session: s,
                ttl,
            };
            write.claim(&tries, &targets, &rules)
        }
    }
}

/// The text the edits let through leave, kept as the session's copy of
/// its uncommitted work ([`api::keep::edited`]); a failure is said, the
/// edit goes on.
fn keep_edits(brain: &Brain, reg: &Registry, session: Option<&str>, targets: &[Target]) {
    let Some(session) = session else {
        return;
    };
    let edits: Vec<(&str, &str)> = targets
        .iter()
        .filter_map(|t| Some((t.rel.as_str(), t.new.as_deref()?)))
        .filter(|(rel, _)| !rel.is_empty())
        .collect();
    if edits.is_empty() {
        return;
    }
    if let Err(e) = api::keep::edited(brain, reg, session, &edits) {
        brain.notes.push(format!(
            "warning: the copy of {session}'s uncommitted work was not refreshed: {e}"
        ));
    }
}

/// A git move that takes uncommitted work out of the work tree, judged as
/// the edits it makes there: each change it takes, from the file as it is
/// to what the move leaves. Only other sessions' claims speak against it —
/// a change of one's own, or in no one's claim, may go — and nothing is
/// claimed for it. `None`: nothing speaks against it.
fn discard_in(
    ctx: &Ctx,
    tool: Tool,
    (brain, settings, reg): (&Brain, &Settings, &Registry),
    m: &FileEdit,
    (session_id, shell): (&str, &Path),
) -> Result<Option<Answer>> {
    let EditOp::Discard(asked) = &m.op else {
        return Ok(None);
    };
    // Its paths, from the work tree root; one outside this work tree is
    // not its to take.
    let top = resolved(&brain.workdir).unwrap_or_else(|| brain.workdir.clone());
    let in_tree = |paths: &[String]| -> Option<Vec<String>> {
        let kept: Vec<String> = paths
            .iter()
            .filter_map(|p| {
                let real = resolved(Path::new(p)).unwrap_or_else(|| PathBuf::from(p));
                if real == top {
                    // The work tree itself: all of it.
                    return Some(String::new());
                }
                agents::relative_to(&real, &top)
            })
            .collect();
        (paths.is_empty() || !kept.is_empty()).then_some(kept)
    };
    let discard = match asked.clone() {
        Discard::Stash {
            untracked,
            keep_index,
            paths,
        } => Discard::Stash {
            untracked,
            keep_index,
            paths: match in_tree(&paths) {
                Some(p) => p,
                None => return Ok(None),
            },
        },
        Discard::Clean { dirs, paths } => Discard::Clean {
            dirs,
            paths: match in_tree(&paths) {
                Some(p) => p,
                None => return Ok(None),
            },
        },
        Discard::Restore {
            program,
            staged,
            source,
            paths,
        } => Discard::Restore {
            program,
            staged,
            source,
            paths: match in_tree(&paths) {
                Some(p) => p,
                None => return Ok(None),
            },
        },
        other => other,
    };
    let taken = api::edit::discarded(brain, &discard)?;
    if taken.is_empty() {
        return Ok(None);
    }
    let mut targets: Vec<Target> = taken.iter().map(|(t, _)| t.clone()).collect();
    let map = sessions::SessionMap::new(&sessions::dir_in(&brain.git.common_dir()));
    let session = known_session(ctx, &map, tool, session_id).unwrap_or_else(|e| {
        ctx.notes.push(format!("warning: {e}; the agent's session is unknown, so every claim counts as another session's"));
        None
    });
    let rules = edits::rules(brain, settings).for_discard();
    match edits::decide(&rules, reg, session.as_deref(), &mut targets) {
        EditDecision::Deny {
            findings, judged, ..
        } => {
            // The changes it takes that lie in no other session's claim:
            // the session's own to take, named from the agent's shell.
            let theirs: Vec<&str> = findings
                .iter()
                .filter_map(|f| match f {
                    Finding::Claimed { path, .. } => Some(path.as_str()),
                    _ => None,
                })
                .collect();
            let own: Vec<String> = taken
                .iter()
                .filter(|(t, _)| !theirs.contains(&t.rel.as_str()))
                .map(|(_, p)| relative_from(shell, &brain.workdir.join(p)))
                .collect();
            let steps = api::edit::discard_steps(&discard, &own, &findings, ctx.now);
            let name = session.unwrap_or_else(|| {
                session_or_new(ctx, &map, tool, session_id)
                    .map_or_else(|_| new_session_id(ctx.now, ctx.random_seed), |(s, _)| s)
            });
            let mut reason = judged.lines.join("\n");
            reason.push_str(&format!(
                "\nbsi read your shell command as {}, which takes uncommitted changes out of the work tree: the changes above are another session's work in progress, not yet committed, and would be lost to it (stranded in a stash, or gone). Leave them in place.",
                discard.said()
            ));
            reason.push_str(&format!("\nYour bsi session: {name}. Next, one of:"));
            for line in crate::steps::lines(&steps, &["--session", &name]) {
                reason.push_str(&format!("\n- {line}"));
            }
            reason.push_str("\n- or stop and tell the user whose work is in the way.");
            Ok(Some(agents::answer(tool, &Verdict::Deny { reason })))
        }
        EditDecision::Warn { judged, .. } => {
            let warning = judged
                .lines
                .iter()
                .map(|l| l.strip_prefix("bsi: ").unwrap_or(l))
                .collect::<Vec<_>>()
                .join("\n");
            Ok(Some(agents::answer(
                tool,
                &Verdict::AllowWithWarning { warning },
            )))
        }
        EditDecision::Allow | EditDecision::ClaimFirst { .. } => Ok(None),
    }
}

/// `path` as a shell in `base` names it: relative, with `..` where it
/// lies outside `base`.
fn relative_from(base: &Path, path: &Path) -> String {
    let base = agents::clean(base);
    let path = agents::clean(path);
    let common = base
        .components()
        .zip(path.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = PathBuf::new();
    for _ in base.components().skip(common) {
        out.push("..");
    }
    for c in path.components().skip(common) {
        out.push(c);
    }
    let s = out.to_string_lossy().into_owned();
    if s.is_empty() { ".".into() } else { s }
}

/// The refusal of an edit of the registry's copy.
fn copy_refusal(brain: &Brain, copy: &str) -> String {
    format!(
        "{}.\nNext: change claims with bsi commands (`bsi open`, `bsi close`), and see them with `bsi status`.",
        verdict::copy_edited(copy, &brain.branch, true)
    )
}

/// After an edit (Gemini CLI's `AfterTool`): the message kept for the
/// agent before the edit, if any. Reads the session map only.
fn after_edit(ctx: &Ctx, tool: Tool, tool_session: &str, input: &str) -> Result<Answer> {
    let cwd = serde_json::from_str::<serde_json::Value>(input)
        .ok()
        .and_then(|v| v["cwd"].as_str().map(PathBuf::from))
        .filter(|c| c.is_dir())
        .unwrap_or_else(|| ctx.cwd.clone());
    let Ok(map) = sessions::in_repo(&cwd) else {
        return Ok(tool.answer_after_edit(None));
    };
    let message = map.take_pending(tool, tool_session)?;
    Ok(tool.answer_after_edit(message.as_deref()))
}

/// The answer to a claim on write; Gemini CLI takes the message to the
/// model only after the edit, so it is kept for `AfterTool`.
fn claimed(brain: &Brain, tool: Tool, session: &str, message: String) -> Answer {
    keep_for_after(brain, tool, session, &message);
    agents::answer(tool, &Verdict::Claimed { message })
}

/// Keeps a message for the model of a tool whose pre-edit answer reaches
/// only the person when it lets the edit through (Gemini CLI): its
/// `AfterTool` hook gives it to the model after the edit.
fn keep_for_after(brain: &Brain, tool: Tool, session: &str, message: &str) {
    if tool.tells_model_after_edit() {
        let map = sessions::SessionMap::new(&sessions::dir_in(&brain.git.common_dir()));
        if let Err(e) = map.set_pending(tool, session, message) {
            brain.notes.push(format!("warning: {e}"));
        }
    }
}

/// What a file holds on disk now.
enum Current {
    Missing,
    Text(String),
    Unreadable,
}

impl Current {
    fn read(path: &Path) -> Current {
        match fs::read(path) {
            Ok(bytes) => String::from_utf8(bytes).map_or(Current::Unreadable, Current::Text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Current::Missing,
            Err(_) => Current::Unreadable,
        }
    }

    fn text(&self) -> Option<&str> {
        match self {
            Current::Text(t) => Some(t),
            _ => None,
        }
    }

    /// The old side for the guard: an absent file is empty.
    fn old(&self) -> Option<String> {
        match self {
            Current::Missing => Some(String::new()),
            Current::Text(t) => Some(t.clone()),
            Current::Unreadable => None,
        }
    }
}

/// The paths of the edits inside the brain, with their old and new text.
fn targets(brain: &Brain, edits: &[FileEdit]) -> Vec<Target> {
    let mut out = Vec::new();
    for e in edits {
        let deep = matches!(
            e.op,
            EditOp::Rewrite { .. } | EditOp::Delete | EditOp::Move { .. }
        );
        let rel = match brain_rel(&brain.root, &e.path) {
            Some(rel) => rel,
            // The work tree itself (`git checkout .`, `rm -r .`): every
            // claim in it, found by [`under_folders`].
            None if deep && resolved(&e.path).is_some_and(|p| p == brain.root) => {
                out.push(Target {
                    rel: String::new(),
                    old: None,
                    new: None,
                    replace: false,
                    shell: None,
                    deep: true,
                });
                continue;
            }
            None => continue,
        };
        let current = Current::read(&e.path);
        let replace = matches!(e.op, EditOp::Replace(_));
        let after = agents::new_text(e, current.text());
        if let EditOp::Move { to, .. } = &e.op {
            // The source is gone; the destination gets the text.
            if !in_git_dir(&rel) {
                out.push(Target {
                    rel,
                    old: current.old(),
                    new: Some(String::new()),
                    replace: false,
                    shell: None,
                    deep: true,
                });
            }
            if let Some(to_rel) = brain_rel(&brain.root, to).filter(|r| !in_git_dir(r)) {
                let (old, new) = match after {
                    Ok(Some(text)) => (Current::read(to).old(), Some(text)),
                    _ => (None, None),
                };
                out.push(Target {
                    rel: to_rel,
                    old,
                    new,
                    replace: false,
                    shell: None,
                    deep: true,
                });
            }
            continue;
        }
        if in_git_dir(&rel) {
            continue;
        }
        let (old, new) = match after {
            Ok(Some(text)) => (current.old(), Some(text)),
            Ok(None) => (current.old(), Some(String::new())),
            // Judged at file level.
            Err(_) => (None, None),
        };
        let shell = match &e.op {
            EditOp::Rewrite { by } => Some(format!("rewrites {rel} whole ({by})")),
            EditOp::Append { .. } => Some(format!("appends to the end of {rel}")),
            EditOp::WholeFile => Some(format!("names {rel} but not the lines it changes")),
            _ => None,
        };
        let deep = matches!(e.op, EditOp::Rewrite { .. } | EditOp::Delete);
        out.push(Target {
            rel,
            old,
            new,
            replace,
            shell,
            deep,
        });
    }
    out
}

fn in_git_dir(rel: &str) -> bool {
    rel == ".git" || rel.starts_with(".git/")
}

/// A claim on the first write: what it is made for.
struct ClaimOnWrite<'c> {
    ctx: &'c Ctx,
    brain: &'c Brain,
    settings: &'c Settings,
    tool: Tool,
    session: &'c str,
    ttl: chrono::Duration,
}

impl ClaimOnWrite<'_> {
    /// Opens the first of `tries` that is free for the session, with the
    /// plan of `bsi open`, and lets the edit through; when none is, the
    /// edit is decided again on the registry the refusal saw.
    fn claim(&self, tries: &[Vec<Scope>], targets: &[Target], rules: &Rules) -> Result<Answer> {
        let Self {
            ctx,
            brain,
            settings,
            tool,
            session,
            ttl,
        } = *self;
        // The tool's name, unless the user named an agent: what the agent's
        // own shell commands are recorded as.
        let mut as_tool = ctx.clone();
        as_tool.tool_agent = Some(tool.name().to_string());
        let agent = as_tool.agent(None, &settings.config)?;
        let note = format!("claimed on the first edit ({})", tool.title());
        let site = api::Site {
            brain,
            settings,
            cwd: &ctx.cwd,
            now: ctx.now,
            options: publish::Options {
                bound: Some(HOOK_BOUND),
                ..ctx.write_options(false)
            },
            random_seed: ctx.random_seed,
        };
        let actor = api::Actor {
            session: Some(session.to_string()),
            agent: agent.to_string(),
            agent_named: as_tool.agent_named(None, &settings.config),
            drawn: false,
        };
        let reg = match api::open::on_write(&site, &actor, tries, ttl, &note) {
            Ok(Some(api::open::OnWrite::Opened {
                new_claims,
                held,
                landing,
            })) => {
                // The edit is the session's now: its copy keeps it.
                keep_edits(brain, &landing.registry, Some(session), targets);
                let message = self.opened(&new_claims, &held, &landing);
                return Ok(claimed(brain, tool, session, message));
            }
            Ok(Some(api::open::OnWrite::Refused(reg))) => reg,
            Ok(None) => return Ok(agents::answer(tool, &Verdict::Allow)),
            Ok(Some(api::open::OnWrite::Busy { path })) => {
                let scopes = tries.first().map_or(&[][..], Vec::as_slice);
                let reason = locked(session, scopes, &path);
                return Ok(agents::answer(tool, &Verdict::Deny { reason }));
            }
            Err(e) => return Err(e),
        };
        self.refused(
            &reg,
            tries.first().map_or(&[][..], Vec::as_slice),
            targets,
            rules,
        )
    }

    /// The message of a claim opened on the first write.
    fn opened(
        &self,
        new_claims: &[Claim],
        held: &[(Claim, bool)],
        landing: &publish::Landing,
    ) -> String {
        let session = self.session;
        let held_now: Vec<String> = new_claims
            .iter()
            .map(|c| format!("{} (until {})", c.scope, ttl::format_ts(c.expires)))
            .chain(
                held.iter()
                    .map(|(c, _)| format!("{} (already yours)", c.scope)),
            )
            .collect();
        let mut message = format!(
            "bsi claimed {} for your session {session}: this edit was free and outside your claims.",
            held_now.join(", ")
        );
        // The landing in the words every door gives it (a claim held on
        // this machine only, earlier changes published with it, endings
        // superseded, collisions), then what an agent in a sandbox can do.
        let collided = !landing.collisions.is_empty();
        if collided {
            message.push_str(
                "\nTell the user: two sessions hold overlapping claims until one gives way.",
            );
        }
        for line in output::landing_lines(landing) {
            message.push('\n');
            message.push_str(&line);
        }
        if matches!(landing.landed, Landed::Pending(_)) {
            message.push_str(
                "\nIf your shell may not write the git directory (as in a sandbox), ask the user to run `bsi sync`; it says if another clone claimed the same meanwhile.",
            );
        }
        if collided {
            return message;
        }
        message.push_str(&format!(
            "\nNext: go on; when done, commit only your own lines with `{}` (add `-m MESSAGE` for a message of your own; other sessions' lines in the same files stay in the work tree) and run `{}`.",
            command_line(["bsi", "commit", "--session", session]),
            command_line(["bsi", "close", session])
        ));
        message
    }

    /// The claim was refused: the edit as the core judged it again on the
    /// registry the refusal saw ([`edit::after_refused_claim`]), in the
    /// tool's words.
    fn refused(
        &self,
        reg: &Registry,
        wanted: &[Scope],
        targets: &[Target],
        rules: &Rules,
    ) -> Result<Answer> {
        let (brain, tool, session) = (self.brain, self.tool, self.session);
        let answer = match edit::after_refused_claim(reg, session, targets, rules) {
            EditDecision::Deny {
                copy: _,
                findings,
                judged,
                claim,
            } => {
                let reason = refusal(
                    self.ctx.now,
                    brain,
                    reg,
                    session,
                    (&judged, &findings),
                    &claim,
                    targets,
                );
                Verdict::Deny { reason }
            }
            EditDecision::Warn { judged, .. } => {
                keep_edits(brain, reg, Some(session), targets);
                Verdict::AllowWithWarning {
                    warning: judged
                        .lines
                        .iter()
                        .map(|l| l.strip_prefix("bsi: ").unwrap_or(l))
                        .collect::<Vec<_>>()
                        .join("\n"),
                }
            }
            EditDecision::Allow | EditDecision::ClaimFirst { .. } => Verdict::AllowWithWarning {
                warning: format!(
                    "could not claim {} for {session}: other sessions hold parts of it (the edit itself is outside their claims)",
                    scopes_summary(wanted)
                ),
            },
        };
        Ok(agents::answer(tool, &answer))
    }
}

/// The refusal of an edit whose claim could not be recorded: another bsi
/// held the writer lock past the hook's wait.
fn locked(session: &str, scopes: &[Scope], path: &Path) -> String {
    format!(
        "bsi: refused for now: this edit lies outside your claims, so bsi claims {} for your session {session} first (`claim_on_write`), but another bsi has been writing the registry for more than {} s and the claim could not be recorded. Nothing was written; the file is unchanged.\nNext, one of:\n- try the edit again in a moment;\n- or claim it first: `{}` (it waits longer for the registry), then edit again;\n- if it stays locked, stop and tell the user: another process holds {}.",
        scopes_summary(scopes),
        HOOK_BOUND.lock_wait.as_secs(),
        open_command(scopes, &["--session", session]),
        path.display()
    )
}

/// The refusal for the agent: what is held and by whom (the pre-commit
/// hook's wording), the free alternatives, and the next step. `wanted`:
/// scopes to claim for an edit outside the session's own (strict mode).
fn refusal(
    now: chrono::DateTime<chrono::FixedOffset>,
    brain: &Brain,
    reg: &Registry,
    session: &str,
    (judged, findings): (&Judged<'_>, &[Finding<'_>]),
    wanted: &[Scope],
    targets: &[Target],
) -> String {
    let mut text = judged.lines.join("\n");
    // A shell command or a tool's edit whose lines bsi cannot see: say how
    // it was read, and the way to a change bsi can judge by section.
    let mut said: Vec<&str> = Vec::new();
    for f in findings {
        let path = match f {
            Finding::Claimed { path, .. } | Finding::Outside { path, .. } => path,
            Finding::HeadingGone { .. } => continue,
        };
        let Some(how) = targets
            .iter()
            .find(|t| &t.rel == path)
            .and_then(|t| t.shell.as_deref())
        else {
            continue;
        };
        if said.contains(&path.as_str()) {
            continue;
        }
        said.push(path);
        if how.starts_with("names ") {
            // A tool's edit told at file level (VS Code's `editFiles`, a
            // notebook cell).
            text.push_str(&format!(
                "\nThis edit {how}: bsi judges it at file level, so every section of the file counts as changed. To change only lines outside other sessions' claims, claim your section and use an edit tool that sends the text it replaces."
            ));
            continue;
        }
        text.push_str(&format!("\nbsi read your shell command as one that {how}"));
        if how.starts_with("rewrites") {
            text.push_str(
                ": it cannot see which lines change, so every section of the file counts as changed. To change only lines outside other sessions' claims, use your edit tool rather than the shell: bsi judges its edits by section.",
            );
        } else {
            text.push_str(": the added lines belong to its last section.");
        }
    }
    let steps = api::edit::steps(brain, reg, session, findings, wanted, now);
    text.push_str(&format!("\nYour bsi session: {session}. Next, one of:"));
    for line in crate::steps::edit_lines(&steps, &["--session", session]) {
        text.push_str(&format!("\n- {line}"));
    }
    text.push_str("\n- or stop and tell the user who holds it.");
    text
}

// --- when a session starts -----------------------------------------------

fn session_start(ctx: &Ctx, tool: Tool, input: &str) -> Result<Answer> {
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
fn first_call_briefing(ctx: &Ctx, tool: Tool, id: &str, cwd: &Path) -> Option<String> {
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
    let (view, fresh) = publish::read(&brain, &settings, ctx.now, false)?;
    // What others' commits changed under this session's claims since it
    // opened them (a clone without bsi's hooks, a forced escape).
    let drift = match bsi_core::api::audit::drift_of(
        &brain,
        &view.registry,
        Some(&session),
        ctx.now.timestamp(),
    ) {
        Ok(drift) => drift_briefing(&drift),
        Err(e) => {
            ctx.notes
                .push(format!("warning: the claims' drift could not be read: {e}"));
            String::new()
        }
    };
    let context = briefing(&view.registry, &session, &env_note, (&fresh, &drift), &ctx);
    Ok((context, session))
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

fn claim_line(c: &Claim, stale: bool, now: chrono::DateTime<chrono::FixedOffset>) -> String {
    format!("- {}", output::describe(c, stale, now))
}

/// What the agent is told when its session starts.
fn briefing(
    reg: &Registry,
    session: &str,
    env_note: &str,
    (fresh, drift): (&Freshness, &str),
    ctx: &Ctx,
) -> String {
    let now = ctx.now;
    let mut t = format!(
        "bsi guards this repository: sessions claim what they edit, and an edit inside another session's claim is refused before it happens.\nYour bsi session: {session} ({env_note})."
    );
    t.push_str(match fresh {
        Freshness::Local => "\nClaims (this clone has no remote):",
        Freshness::Fetched | Freshness::FirstPublished(_) => {
            "\nClaims (fetched from the remote just now):"
        }
        Freshness::NotAsked | Freshness::Unreachable(_) => {
            "\nClaims (as last fetched: the remote could not be reached):"
        }
    });
    let own: Vec<&Claim> = reg
        .active_claims
        .iter()
        .filter(|c| c.session == session)
        .collect();
    let others: Vec<&Claim> = reg
        .active_claims
        .iter()
        .filter(|c| c.session != session)
        .collect();
    t.push_str("\nYours:");
    if own.is_empty() {
        t.push_str(" none");
    }
    for c in &own {
        t.push('\n');
        t.push_str(&claim_line(c, false, now));
    }
    t.push_str("\nOther sessions' (do not edit inside them):");
    if others.is_empty() {
        t.push_str(" none");
    }
    for c in &others {
        t.push('\n');
        t.push_str(&claim_line(c, false, now));
    }
    if !reg.stale_claims.is_empty() {
        t.push_str("\nStale (expired, still not free: a person decides with `bsi release SESSION --confirm`; tell the user):");
        for c in &reg.stale_claims {
            t.push('\n');
            t.push_str(&claim_line(c, true, now));
        }
    }
    t.push_str(drift);
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

/// The briefing's paragraph on the drift of the session's claims: nothing
/// when none changed under it.
fn drift_briefing(drift: &[bsi_core::drift::Drift]) -> String {
    if drift.is_empty() {
        return String::new();
    }
    let mut t = String::from(
        "\nChanged under your claims by commits that are not yours (made without bsi's hooks, or forced past them): read each before you go on, and tell the user.",
    );
    for d in drift {
        t.push_str("\n- ");
        t.push_str(&bsi_core::api::audit::drift_line(d));
    }
    t
}

// --- when the agent stops ------------------------------------------------

fn stop(ctx: &Ctx, tool: Tool, input: &str) -> Result<Answer> {
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
    let remote = settings.remote().ok().flatten();
    let reg = match brain.view(remote.as_ref()) {
        Ok(v) => v.registry,
        Err(Error::NoRegistry { .. }) => return Ok(agents::answer_stop(tool, &ev, None)),
        Err(e) => return Err(e),
    };
    let (active, stale) = session_claims(&reg, &session, None);
    if active.is_empty() && stale.is_empty() {
        return Ok(agents::answer_stop(tool, &ev, None));
    }
    // The end of a turn: the session's uncommitted work as it is now kept.
    api::keep::refresh_or_say(&brain, &reg, &session);
    let held: Vec<String> = active
        .iter()
        .map(|&i| reg.active_claims[i].scope.to_string())
        .chain(
            stale
                .iter()
                .map(|&i| format!("{} (stale)", reg.stale_claims[i].scope)),
        )
        .collect();
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
        "bsi: your session {session} still holds {}. Before you stop: commit your own lines with `{}` (`-m MESSAGE` for your message; other sessions' lines stay in the work tree), then run `{}`. If you keep the claims on purpose (the work goes on later), say so and why.",
        held.join(", "),
        command_line(["bsi", "commit", "--session", &session]),
        command_line(["bsi", "close", &session])
    );
    Ok(agents::answer_stop(tool, &ev, Some(&reason)))
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
