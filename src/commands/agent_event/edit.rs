//! Before an edit: the tool's event read as the files it changes, each
//! judged in the brain of the work tree that holds it by the one decision
//! of the core ([`bsi_core::api::edit::decide`], which MCP's `check` asks
//! too), a claim on the first write made by the core when it decides one,
//! and the outcome answered in the tool's words. After an edit (Gemini
//! CLI's `AfterTool`): the message kept for the model.

use std::fs;
use std::path::{Path, PathBuf};

use super::super::Ctx;
use super::super::edits::{brain_rel, resolved};
use super::common::{
    event_dir, fail_open, guarded, known_session_or_say, map_of, name_for_refusal, nothing,
    open_at, session_or_new,
};
use super::decided::Judging;
use super::shell::{RealDisk, discard_in};
use crate::agents::{self, Answer, EditOp, FileEdit, HookKind, PreEdit, Tool, Verdict, sessions};
use bsi_core::api::settings::Settings;
use bsi_core::api::store::{Brain, FirstFetch};
use bsi_core::api::{self, edit::ForEdit};
use bsi_core::error::Result;
use bsi_core::guard::edit::{EditDecision, Target};
use bsi_core::guard::touch::{self, Current, Located, Place, Shape, Touch, Tree};
use bsi_core::registry::Registry;

/// The answer to a pre-edit event.
pub(super) fn judge(ctx: &Ctx, tool: Tool, input: &str) -> Result<Answer> {
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

/// The edits grouped by the work tree their file is in, as the core
/// groups them ([`touch::by_work_tree`]): each file's work tree asked of
/// git, with its path's links resolved.
fn by_work_tree(cwd: &Path, edits: &[FileEdit]) -> Vec<(PathBuf, Vec<FileEdit>)> {
    let tree_of = |dir: &Path| {
        let git = bsi_core::api::git::Git::discover(dir).ok()?;
        let top = git.workdir().ok()?;
        let common = git.common_dir();
        Some(Tree {
            top: fs::canonicalize(&top).unwrap_or(top),
            common: fs::canonicalize(&common).unwrap_or(common),
        })
    };
    let located = edits.iter().map(|e| {
        let at = resolved(&e.path).and_then(|real| {
            let dir = if real.is_dir() {
                real.clone()
            } else {
                real.parent()
                    .map_or_else(|| real.clone(), Path::to_path_buf)
            };
            let tree = tree_of(&dir)?;
            Some(Located { real, dir, tree })
        });
        (at, e.clone())
    });
    touch::by_work_tree(cwd, tree_of(cwd).as_ref(), located.collect())
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
    Ok(match api::edit::for_edit(&brain, &settings)? {
        ForEdit::Judge(reg) => Ok((ctx, brain, settings, *reg)),
        ForEdit::Off => Err(agents::answer(tool, &Verdict::Allow)),
        ForEdit::NotSetUp(e) => Err(fail_open(
            tool,
            HookKind::Edit,
            &format!("{e} (bsi is not set up in this repository: `bsi init`)"),
        )),
    })
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
    let site = (&brain, &settings, &reg);
    for m in &moves {
        if let Some(a) = discard_in(&ctx, tool, site, m, (session_id, shell))? {
            return Ok(a);
        }
    }
    let mut targets = targets(&brain, &edits);
    if targets.is_empty() {
        return Ok(agents::answer(tool, &Verdict::Allow));
    }
    // From here on an error must not let an overlap through: a session
    // that cannot be read or named only makes every claim someone else's.
    let map = map_of(&brain);
    let rules = api::edit::rules(&brain, &settings);
    let mut session = known_session_or_say(&ctx, &map, tool, session_id);
    // Claiming needs a session: then one is named now if the agent has none.
    if rules.claim_on_write && session.is_none() {
        session = session_or_new(&ctx, &map, tool, session_id)
            .ok()
            .map(|(s, _)| s);
    }
    let decision = api::edit::decide(&rules, &reg, session.as_deref(), &mut targets);
    let this = Judging {
        ctx: &ctx,
        brain: &brain,
        settings: &settings,
        tool,
        targets: &targets,
        rules: &rules,
    };
    match decision {
        EditDecision::Deny {
            copy: None,
            findings,
            judged,
            claim,
        } => {
            let name = name_for_refusal(&ctx, &map, tool, session_id, session);
            let reason = this.refusal(&reg, &name, (&judged, &findings), &claim);
            Ok(agents::answer(tool, &Verdict::Deny { reason }))
        }
        decision => this.answer(&reg, session.as_deref(), decision),
    }
}

/// The paths of the edits inside the brain, with their old and new text,
/// as the core makes them ([`touch::targets`]) of what each file holds now
/// and after.
fn targets(brain: &Brain, edits: &[FileEdit]) -> Vec<Target> {
    let place = |path: &Path| match brain_rel(&brain.root, path) {
        Some(rel) => Place::Brain(rel),
        None if resolved(path).is_some_and(|p| p == brain.root) => Place::Root,
        None => Place::Outside,
    };
    let touches: Vec<Touch> = edits
        .iter()
        .map(|e| {
            let at = place(&e.path);
            let now = match at {
                Place::Brain(_) => Current::of(fs::read(&e.path)),
                _ => Current::Unreadable,
            };
            let after = agents::new_text(e, now.text()).ok();
            let shape = match &e.op {
                EditOp::Replace(_) => Shape::Replace,
                EditOp::Delete => Shape::Delete,
                EditOp::Move { to, .. } => match brain_rel(&brain.root, to) {
                    Some(rel) => Shape::Move {
                        to: Place::Brain(rel),
                        to_now: Current::of(fs::read(to)),
                    },
                    None => Shape::Move {
                        to: Place::Outside,
                        to_now: Current::Unreadable,
                    },
                },
                EditOp::Rewrite { by } => Shape::Rewrite { by: by.clone() },
                EditOp::Append { .. } => Shape::Append,
                EditOp::WholeFile => Shape::WholeFile,
                EditOp::Write { .. }
                | EditOp::Patch(_)
                | EditOp::Insert { .. }
                | EditOp::Discard(_) => Shape::Change,
            };
            Touch {
                at,
                now,
                after,
                shape,
            }
        })
        .collect();
    touch::targets(&touches)
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
