//! `bsi hook install|uninstall|pre-commit|prepare-commit-msg`: git's hooks —
//! installing them, and what they run: the pre-commit guard and the
//! session trailer.

use std::io::{Read, Write};
use std::path::Path;

use super::{Ctx, Lines};
use crate::cli::GitHook;
use crate::doors::{fresh, judged, transaction};
use crate::githooks;
use crate::hook_managers;
use bsi_core::api::audit;
use bsi_core::api::git::{ChangesOf, CommitInfo, Git, MergeOf, Oid};
use bsi_core::api::settings::Settings;
use bsi_core::api::store::{Brain, FirstFetch};
use bsi_core::config::HookMode;
use bsi_core::error::{Error, Result, exit};
use bsi_core::guard::{ClaimIndex, merge, verdict};
use bsi_core::registry::Registry;
use bsi_core::trailer;

pub(crate) fn run(ctx: &Ctx, action: GitHook) -> Result<u8> {
    match action {
        GitHook::Install => install(ctx),
        GitHook::Uninstall => uninstall(ctx),
        GitHook::PreCommit { .. } => pre_commit(ctx, Door::Commit),
        GitHook::PreMergeCommit => pre_commit(ctx, Door::Merge),
        GitHook::ReferenceTransaction { state } => reference_transaction(ctx, &state),
        GitHook::PrepareCommitMsg { file, .. } => prepare_commit_msg(ctx, &file),
        GitHook::PostCheckout { previous, .. } => post_checkout(ctx, &previous),
    }
}

/// Says what install or uninstall did, one line per hook and file, then
/// what is left for the user to do.
fn install_report(out: &mut Lines, r: &hook_managers::Report) -> Result<()> {
    for d in &r.done {
        out.line(format_args!(
            "{}: {} ({})",
            d.name,
            d.what,
            d.path.display()
        ))?;
    }
    for n in &r.notes {
        out.line(n)?;
    }
    Ok(())
}

fn install(ctx: &Ctx) -> Result<u8> {
    let program = ctx.exe.as_deref().and_then(Path::to_str);
    let mut out = ctx.out().sentences();
    let git = Git::discover(&ctx.cwd)?;
    let layout = hook_managers::Layout::read(&git)?;
    let hooks = hook_managers::hooks_of(&layout, githooks::HOOKS);
    install_report(
        &mut out,
        &hook_managers::install(&layout, &hooks, program, ctx.places.path.as_deref())?,
    )?;
    // What `bsi status` reads to say when the guard is off here.
    git.set_config(hook_managers::INSTALLED_KEY, "true")?;
    // The registry's merge driver, so `git pull` merges claims by rows.
    if let Ok((brain, settings)) = ctx.open() {
        fetch_registry(&brain, &settings, &mut out)?;
        match brain.register_merge_driver(program) {
            Ok(true) => {
                out.line(format_args!(
                    "merge driver: registered for {}",
                    brain.copy_path
                ))?;
            }
            Ok(false) => {}
            Err(e) => {
                out.line(format_args!(
                    "merge driver: not registered ({e}); run `bsi hook install` again once that is mended"
                ))?;
            }
        }
    }
    if let Some(note) = super::no_registry_note(ctx) {
        out.line(note)?;
    }
    Ok(exit::OK)
}

/// A clone that leaves the registry branch out of what its remote fetches
/// (single-branch, shallow): the branch is added, and fetched now.
fn fetch_registry(brain: &Brain, settings: &Settings, out: &mut Lines) -> Result<()> {
    let Ok(Some(remote)) = settings.remote() else {
        return Ok(());
    };
    let Some(note) = brain.fetch_registry_too(&remote)? else {
        return Ok(());
    };
    let fetched = match bsi_core::api::git::local_remote::fetch(
        &brain.workdir,
        &remote,
        false,
        settings.connection_timeout,
    ) {
        Ok(_) => format!("fetched {} now", remote.label()),
        Err(bsi_core::api::git_cli::FetchError::NoBranch) => {
            format!("{} has no registry branch yet", remote.name)
        }
        Err(e) => format!(
            "{} could not be fetched now ({e}); `{}` brings it once {} is reachable",
            remote.label(),
            bsi_core::words::command_line(["git", "fetch", &remote.name]),
            remote.name
        ),
    };
    out.line(format_args!("registry fetch: {note}; {fetched}"))
}

fn uninstall(ctx: &Ctx) -> Result<u8> {
    let git = Git::discover(&ctx.cwd)?;
    let layout = hook_managers::Layout::read(&git)?;
    let hooks = hook_managers::hooks_of(&layout, githooks::HOOKS);
    install_report(
        &mut ctx.out().sentences(),
        &hook_managers::uninstall(&layout, &hooks)?,
    )?;
    git.unset_config(hook_managers::INSTALLED_KEY)?;
    Ok(exit::OK)
}

/// Which hook judges the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Door {
    /// pre-commit: `git commit`, a merge concluded with it included.
    Commit,
    /// pre-merge-commit: a merge git concludes by itself.
    Merge,
}

fn pre_commit(ctx: &Ctx, door: Door) -> Result<u8> {
    let mut err = ctx.out().plain_err();
    let (mut brain, mut settings) = open_for_hook(ctx, &mut err)?;
    let mode = settings.hook_mode;
    if mode == HookMode::Off {
        return Ok(exit::OK);
    }
    // A hook manager that runs bsi twice for one commit (bsi's own script
    // it kept, and its configuration's call of bsi): judged and said once.
    let head = brain.git.head_commit().ok().flatten();
    if let Some(code) = judged::earlier(&brain.git.git_dir(), head) {
        return Ok(code);
    }
    (brain, settings) = ask_remote_first(ctx, brain, settings, &mut err, "This commit is")?;
    // A merge is judged on what it changes of its own. `git merge` runs
    // pre-merge-commit before it writes MERGE_HEAD: what it merges is read
    // from its command line (FETCH_HEAD for `git pull`).
    let merging = match door {
        Door::Commit => brain.git.merge_heads(),
        Door::Merge => merged_by_git_merge(&brain, &ctx.git_reflog_action),
    };
    if merging.is_empty() && door == Door::Merge {
        // What is merged is not known here: the reference-transaction
        // hook judges the merge commit.
        return Ok(exit::OK);
    }
    fresh_view(&brain, &settings, &mut err, ctx.now);
    let Some(reg) = hook_registry(&brain, &settings, &mut err)? else {
        return Ok(exit::OK);
    };
    let session = ctx.env_session()?;
    let session = session.as_deref();
    let index = ClaimIndex::new(&reg);
    // `git commit -a`, `git commit PATHS` and `-i` hand the hook a temporary
    // index: judge that one, which is what the commit records.
    let index_file = ctx.git_index_file.as_ref().map(|p| ctx.cwd.join(p));
    let md = &brain.markdown;
    let (findings, registry_staged) = if merging.is_empty() {
        let changes = audit::read_changes(&brain, ChangesOf::Staged(index_file.as_deref()))?;
        let staged = changes.iter().any(|c| c.path == brain.copy_path);
        (
            audit::check_changes(&brain, &index, session, &changes, md),
            staged,
        )
    } else {
        let files = brain.git.merge_files(MergeOf::Index {
            index_file: index_file.as_deref(),
            others: &merging,
        })?;
        // A pull into a work tree of the registry branch itself merges the
        // registry with bsi's driver: that is the registry's own history.
        let on_registry = brain.git.head_branch().as_deref() == Some(brain.branch.as_str());
        let staged = !on_registry
            && files
                .iter()
                .any(|f| f.path == brain.copy_path && f.result != f.ours);
        (
            audit::check_merge(&brain, &index, session, &files, md),
            staged,
        )
    };
    let verb = match door {
        Door::Commit => "commit",
        Door::Merge => "merge",
    };
    let refused = report(
        &mut err,
        &brain,
        &findings,
        registry_staged,
        (session, verdict::Source::Index),
        (mode, verb),
        ctx.now,
    );
    let git_dir = brain.git.git_dir();
    // A plain commit: nothing but it lands, so the reference-transaction
    // hook of this command has nothing left to judge (its script sees that
    // without starting bsi). A merge's other parents still land.
    let plain = door == Door::Commit && merging.is_empty();
    if refused {
        let _ = writeln!(
            err,
            "bsi: {verb} refused. A person's step, never an agent's (tell the user): `git -c bsi.hookMode=off {verb} …` skips this check once; `git config bsi.hookMode warn` only reports"
        );
        judged::record(&git_dir, head, exit::CONFLICT, plain);
        return Ok(exit::CONFLICT);
    }
    judged::record(&git_dir, head, exit::OK, plain);
    Ok(exit::OK)
}

/// A single-branch or shallow clone that never fetched the registry: its
/// remote is asked once, within the connection timeout, by whichever door
/// comes first (`what`: what goes unchecked when it cannot be reached),
/// and the brain is read again when the registry came.
fn ask_remote_first(
    ctx: &Ctx,
    brain: Brain,
    settings: Settings,
    err: &mut impl Write,
    what: &str,
) -> Result<(Brain, Settings)> {
    let remote = settings.remote().ok().flatten();
    match brain.first_fetch(remote.as_ref(), settings.connection_timeout) {
        FirstFetch::Fetched(note) => {
            let _ = writeln!(err, "bsi: note: {note}");
            open_for_hook(ctx, err)
        }
        FirstFetch::Unreached(why) => {
            let _ = writeln!(
                err,
                "bsi: warning: {why}. {what} not checked against claims."
            );
            Ok((brain, settings))
        }
        FirstFetch::NotNeeded | FirstFetch::NoneThere => Ok((brain, settings)),
    }
}

/// A fresh view before judging: the registry branch fetched alone from
/// its remote, within `hook_fetch_timeout` ([`fresh::refresh`]); one line
/// when the commit is judged on the view last fetched instead.
fn fresh_view(
    brain: &Brain,
    settings: &Settings,
    err: &mut impl Write,
    now: chrono::DateTime<chrono::FixedOffset>,
) {
    let remote = settings.remote().ok().flatten();
    if let fresh::Fresh::Older(why) =
        fresh::refresh(brain, remote.as_ref(), settings.hook_fetch_timeout, now)
        && let Some(r) = &remote
    {
        let age = brain.last_contact().map(|t| now - t);
        let _ = writeln!(err, "{}", fresh::older_line(r, &why, age));
    }
}

/// Writes the guard's verdict on the findings (and a staged registry
/// copy) for the committer ([`verdict::of_change`]); true when it refuses.
fn report(
    err: &mut impl Write,
    brain: &Brain,
    findings: &[bsi_core::guard::Finding<'_>],
    registry_staged: bool,
    who: (Option<&str>, verdict::Source),
    (mode, change): (HookMode, &str),
    now: chrono::DateTime<chrono::FixedOffset>,
) -> bool {
    let copy = registry_staged.then_some((brain.copy_path.as_str(), brain.branch.as_str()));
    let said = verdict::of_change(findings, copy, who, (mode, change), now);
    for line in &said.lines {
        let _ = writeln!(err, "{line}");
    }
    said.refused
}

/// The commits `git merge` (or `git pull`) is merging, read from git's
/// `GIT_REFLOG_ACTION` (`action`); none when they cannot be told.
fn merged_by_git_merge(brain: &Brain, action: &str) -> Vec<Oid> {
    if action.split_whitespace().next() == Some("pull") {
        return brain.git.fetch_head_merges();
    }
    merge::merged_names(action)
        .unwrap_or_default()
        .iter()
        .filter_map(|n| brain.git.resolve_commit(n))
        .collect()
}

/// The reference-transaction hook: in the `prepared` state, judges the
/// commits each branch update lands ([`bsi_core::api::git::Git::landing_commits`])
/// as pre-commit judges a commit, and refuses the transaction when one is
/// refused. Fails open: an error of its own is said and lets the update go.
fn reference_transaction(ctx: &Ctx, state: &str) -> Result<u8> {
    let mut input = String::new();
    let _ = std::io::stdin().read_to_string(&mut input);
    if state != "prepared" {
        return Ok(exit::OK);
    }
    let updates = transaction::parse(&input);
    if !updates.iter().any(transaction::Update::lands_on_branch) {
        return Ok(exit::OK);
    }
    let mut err = ctx.out().plain_err();
    match judge_transaction(ctx, &updates, &mut err) {
        Ok(code) => Ok(code),
        Err(e) => {
            let _ = writeln!(
                err,
                "bsi: warning: the commits of this branch update were not checked ({e}); the update goes through. Next: `bsi verify SESSION` checks them afterwards."
            );
            Ok(exit::OK)
        }
    }
}

fn judge_transaction(
    ctx: &Ctx,
    updates: &[transaction::Update],
    err: &mut impl Write,
) -> Result<u8> {
    // A commit this git command's pre-commit hook passed is not judged
    // again: that is every `git commit`. What is cheap comes first: a
    // reset back, a new branch or a fast-forward to another branch's tip
    // lands no commit, and costs no more than finding the repository.
    let git = Git::discover(&ctx.cwd)?;
    let judged_before = judged::take(&git.git_dir());
    let mut landing = landing_commits(&git, updates, judged_before)?;
    let session = ctx.env_session()?;
    let session = session.as_deref();
    let mut dropped = dropped_commits(&git, updates, judged_before, session)?;
    if landing.is_empty() && dropped.is_empty() {
        return Ok(exit::OK);
    }
    let (brain, settings) = open_for_hook(ctx, err)?;
    let mode = settings.hook_mode;
    let registry_ref = format!("refs/heads/{}", brain.branch);
    landing.retain(|(name, _)| *name != registry_ref);
    dropped.retain(|(name, _)| *name != registry_ref);
    if mode == HookMode::Off || (landing.is_empty() && dropped.is_empty()) {
        return Ok(exit::OK);
    }
    // Where pre-commit asks the remote, this door asks it too (`git commit
    // --no-verify`, `git am` in a fresh shallow clone).
    let (brain, settings) =
        ask_remote_first(ctx, brain, settings, err, "The commits of this update are")?;
    fresh_view(&brain, &settings, err, ctx.now);
    let Some(reg) = hook_registry(&brain, &settings, err)? else {
        return Ok(exit::OK);
    };
    let replaced = replaced_commits(&brain.git, updates)?;
    let judging = Judging {
        brain: &brain,
        reg: &reg,
        index: ClaimIndex::new(&reg),
        session,
        mode,
        now: ctx.now,
        replaced: &replaced,
    };
    let branches = judging.landing(err, &landing)?;
    let (dropping, paths) = judging.dropped(err, &dropped)?;
    Ok(refusal(err, &brain, branches, (dropping, &paths)))
}

/// The commits an update lands on a branch, each once with the branch it
/// goes to: not the one the pre-commit hook of this git command judged
/// (what the other parents of a merge bring still lands: the mark is that
/// commit's), nothing when the branch's content stays what it was and
/// brings no one else's commits under it (a squash of its own commits, a
/// reworded message, `--allow-empty`), and not what remote-tracking
/// branches of the same update bring.
fn landing_commits(
    git: &Git,
    updates: &[transaction::Update],
    judged_before: Option<Option<Oid>>,
) -> Result<Vec<(String, CommitInfo)>> {
    let known: Vec<Oid> = updates
        .iter()
        .filter(|u| u.name.starts_with("refs/remotes/"))
        .filter_map(|u| u.new)
        .collect();
    let mut landing: Vec<(String, CommitInfo)> = Vec::new();
    for u in updates.iter().filter(|u| u.lands_on_branch()) {
        let Some(new) = u.new else { continue };
        let judged_tip = judged_before.is_some_and(|head| head == u.old);
        if judged_tip && git.parent_ids(new) == u.old.into_iter().collect::<Vec<_>>() {
            continue;
        }
        let commits = git.landing_commits(u.old, new, &known)?;
        // The content stays what it was with no one else's work brought in
        // under it: a rebase onto others' commits that ends where the
        // branch was has undone their changes, and is judged.
        if let Some(old) = u.old
            && git
                .tree_of(old)
                .is_some_and(|t| git.tree_of(new) == Some(t))
            && git.commits_between(&[new], old, DROPPED_DEPTH)?.len() == commits.len()
        {
            continue;
        }
        for c in commits {
            let judged = judged_tip && c.id == new;
            if !judged && !landing.iter().any(|(_, l)| l.id == c.id) {
                landing.push((u.name.clone(), c));
            }
        }
    }
    Ok(landing)
}

/// What the reference-transaction hook judges an update's commits with.
struct Judging<'a> {
    brain: &'a Brain,
    reg: &'a Registry,
    index: ClaimIndex<'a>,
    /// The session of this shell, when it has one.
    session: Option<&'a str>,
    mode: HookMode,
    now: chrono::DateTime<chrono::FixedOffset>,
    /// What each branch update leaves behind, by branch
    /// ([`replaced_commits`]).
    replaced: &'a [(String, Vec<CommitInfo>)],
}

impl Judging<'_> {
    /// Judges each commit landing on a branch, says what it finds: the
    /// branches a refused commit was on its way to, each once.
    fn landing<'b>(
        &self,
        err: &mut impl Write,
        landing: &'b [(String, CommitInfo)],
    ) -> Result<Vec<&'b str>> {
        let brain = self.brain;
        let mut branches: Vec<&str> = Vec::new();
        for (branch, c) in landing {
            // A commit says whose it is: with no `BSI_SESSION` in this
            // shell, its trailer's session is the committer's word for it,
            // and its own claims are not another's. Only that: what lies
            // outside them was said when it was made.
            let author = trailer::author_session(&c.message);
            let judge_as = self.session.or(author);
            let mut findings =
                audit::check_commit(brain, &self.index, judge_as, c.id, c.merge, &brain.markdown)?;
            if self.session.is_none() {
                findings.retain(|f| !matches!(f, bsi_core::guard::Finding::Outside { .. }));
            }
            if findings.is_empty() {
                continue;
            }
            // Judged once, by what it is: a commit its author's session
            // made inside its own claims (replayed by a rebase, a reset
            // back to it, or others' work fetched into a branch) keeps that
            // verdict.
            // A copy is its original's replay only when it changes no more
            // than the commits of its session the update leaves behind
            // did: a conflict resolved over another's line, or an amend
            // that adds one, is a new change.
            let originals: Vec<CommitInfo> = self
                .replaced
                .iter()
                .filter(|(name, _)| name == branch)
                .flat_map(|(_, cs)| cs)
                .filter(|o| author.is_some() && trailer::author_session(&o.message) == author)
                .cloned()
                .collect();
            let replay = originals.is_empty() || audit::replays_within(brain, c, &originals)?;
            if author.is_some()
                && replay
                && audit::made_by_holder(brain, self.reg, c, &brain.markdown)?
            {
                continue;
            }
            let _ = writeln!(
                err,
                "bsi: commit {} ({}) on its way to {}:",
                audit::short(c.id),
                subject(&c.message),
                branch_name(branch)
            );
            let refused = report(
                err,
                brain,
                &findings,
                false,
                (judge_as, verdict::Source::Commits),
                (self.mode, "commit"),
                self.now,
            );
            if refused && branches.last() != Some(&branch_name(branch)) {
                branches.push(branch_name(branch));
            }
        }
        Ok(branches)
    }

    /// A branch moved back over another session's commits: judged like the
    /// revert it amounts to, against the claims their session holds now.
    /// The branches that must not move so, each once, and the files of
    /// the commits that hold them there (from the work tree root).
    fn dropped<'b>(
        &self,
        err: &mut impl Write,
        dropped: &'b [(String, CommitInfo)],
    ) -> Result<(Vec<&'b str>, Vec<String>)> {
        let brain = self.brain;
        let mut dropping: Vec<&str> = Vec::new();
        let mut paths: Vec<String> = Vec::new();
        for (branch, c) in dropped {
            let Some(holder) = trailer::author_session(&c.message) else {
                continue;
            };
            let mut findings =
                audit::check_commit(brain, &self.index, None, c.id, c.merge, &brain.markdown)?;
            findings.retain(
                |f| matches!(f, bsi_core::guard::Finding::Claimed { claim, .. } if claim.session == holder),
            );
            if findings.is_empty() {
                continue;
            }
            for f in &findings {
                if let bsi_core::guard::Finding::Claimed { path, .. } = f {
                    let p = brain.workdir_path(path);
                    if !paths.contains(&p) {
                        paths.push(p);
                    }
                }
            }
            let _ = writeln!(
                err,
                "bsi: commit {} ({}) of session {holder} would leave {}:",
                audit::short(c.id),
                subject(&c.message),
                branch_name(branch)
            );
            if report(
                err,
                brain,
                &findings,
                false,
                (self.session, verdict::Source::Commits),
                (self.mode, "commit"),
                self.now,
            ) && !dropping.contains(&branch_name(branch))
            {
                dropping.push(branch_name(branch));
            }
        }
        Ok((dropping, paths))
    }
}

/// The end of a judged update: exit 0 when nothing was refused, else what
/// did not move, where the change is now and the way back or past it
/// (exit 3).
fn refusal<'b>(
    err: &mut impl Write,
    brain: &Brain,
    mut branches: Vec<&'b str>,
    (dropping, paths): (Vec<&'b str>, &[String]),
) -> u8 {
    if branches.is_empty() && dropping.is_empty() {
        return exit::OK;
    }
    if branches.is_empty() {
        // git moves the index and the files before the branch: on the
        // branch this work tree is on, they hold the reverted text now.
        let head = brain.git.head_branch();
        let here = dropping.iter().any(|b| head.as_deref() == Some(*b));
        if here && !paths.is_empty() {
            // `:(top)`: the same files from any directory of the work tree.
            let words = bsi_core::guard::discard::restore_from_head(
                paths.iter().map(|p| format!(":(top){p}")),
            );
            let _ = writeln!(
                err,
                "bsi: refused: {} did not move and keeps those commits, but git had already put their files back in the index and the work tree: `{}` restores exactly those files as the branch has them (nothing else of yours is touched).",
                dropping.join(", "),
                bsi_core::words::command_line(&words)
            );
        } else {
            let _ = writeln!(
                err,
                "bsi: refused: {} did not move and keeps those commits; this work tree's index and files are as they were.",
                dropping.join(", ")
            );
        }
        let _ = writeln!(
            err,
            "  next: the session that made them may drop them; a person's step, never an agent's (tell the user): to drop them anyway, run the command again as `git -c bsi.hookMode=off …`"
        );
        return exit::CONFLICT;
    }
    for b in dropping {
        if !branches.contains(&b) {
            branches.push(b);
        }
    }
    let op = transaction::under_way(&brain.git.git_dir());
    // A branch this work tree is not on (`git fetch origin main:main`,
    // `git update-ref`, `git branch -f`): the index and the files never held
    // the change.
    let head = brain.git.head_branch();
    let here =
        op != transaction::UnderWay::Other || branches.iter().any(|b| head.as_deref() == Some(*b));
    if !here {
        let _ = writeln!(
            err,
            "bsi: refused: {} did not move; this work tree's index and files are as they were.",
            branches.join(", ")
        );
        let _ = writeln!(
            err,
            "  next: to land the commits anyway, run the command again as `git -c bsi.hookMode=off …`"
        );
        return exit::CONFLICT;
    }
    let _ = writeln!(
        err,
        "bsi: refused: {} did not move; the change is still in the index and the work tree.",
        branches.join(", ")
    );
    let _ = match op.abort() {
        Some(abort) => writeln!(
            err,
            "  next: `{abort}` goes back to what the branch has; a person's step, never an agent's (tell the user): to land it anyway, run it again as `git -c bsi.hookMode=off {} …`",
            op.command()
        ),
        None => writeln!(
            err,
            "  next: `git status` shows the change; a person's step, never an agent's (tell the user): to land it anyway, run the command again as `git -c bsi.hookMode=off …` (`git -c bsi.hookMode=off commit …` for a commit)"
        ),
    };
    exit::CONFLICT
}

/// How many commits a branch update leaves behind are looked at.
const DROPPED_DEPTH: usize = 1000;

/// The commits each branch update leaves behind — reachable from its old
/// tip, not from its new one — with the branch: the originals of what a
/// rebase, an amend or a squash lands in their place; and the commit a
/// cherry-pick under way copies (`CHERRY_PICK_HEAD`), for every branch.
/// Nothing for a fast-forward or a new branch otherwise.
fn replaced_commits(
    git: &Git,
    updates: &[transaction::Update],
) -> Result<Vec<(String, Vec<CommitInfo>)>> {
    let mut picked: Vec<CommitInfo> = Vec::new();
    if let Some(id) = git.resolve_commit("CHERRY_PICK_HEAD")
        && let Some(parent) = git.parent_ids(id).first()
    {
        picked = git.commits_between(&[id], *parent, 1)?;
    }
    let mut out = Vec::new();
    for u in updates.iter().filter(|u| u.lands_on_branch()) {
        let Some(new) = u.new else {
            continue;
        };
        let mut originals = match u.old {
            Some(old) if !git.is_ancestor(old, new)? => {
                git.commits_between(&[old], new, DROPPED_DEPTH)?
            }
            _ => Vec::new(),
        };
        originals.extend(picked.iter().cloned());
        if !originals.is_empty() {
            out.push((u.name.clone(), originals));
        }
    }
    Ok(out)
}

/// The commits a branch update leaves behind (`git reset --hard HEAD~1`,
/// `git branch -f`) and no other branch or remote-tracking branch keeps,
/// that carry another session's trailer (not `session`'s: one's own
/// commits may be dropped freely), with the branch: what a revert of them
/// would take away. A commit the update brings back as a
/// copy (a rebase, by patch identity) is not left behind. A fast-forward
/// and the amend a pre-commit hook judged (its old tip `judged_before`)
/// leave nothing behind worth a walk.
fn dropped_commits(
    git: &Git,
    updates: &[transaction::Update],
    judged_before: Option<Option<Oid>>,
    session: Option<&str>,
) -> Result<Vec<(String, CommitInfo)>> {
    let mut out: Vec<(String, CommitInfo)> = Vec::new();
    for u in updates.iter().filter(|u| u.lands_on_branch()) {
        // `git branch -f` hands the hook no old value: the branch still
        // points to it while the transaction is prepared.
        let old = u.old.or_else(|| git.ref_target(&u.name));
        let (Some(old), Some(new)) = (old, u.new) else {
            continue;
        };
        if judged_before == Some(Some(old))
            || git.is_ancestor(old, new)?
            || git
                .tree_of(old)
                .is_some_and(|t| git.tree_of(new) == Some(t))
        {
            continue;
        }
        // What the branch leaves behind holds every commit it could lose:
        // when none is another session's (a rebase of one's own commits),
        // the branches and remote-tracking branches that might keep them
        // are not read.
        let left = git.commits_between(&[old], new, DROPPED_DEPTH)?;
        if left.len() < DROPPED_DEPTH && !left.iter().any(|c| of_another(c, session)) {
            continue;
        }
        let others: Vec<CommitInfo> = git
            .lost_commits(&u.name, old, new, DROPPED_DEPTH)?
            .into_iter()
            .filter(|c| of_another(c, session))
            .collect();
        if others.is_empty() {
            continue;
        }
        let brought: Vec<Oid> = git
            .commits_between(&[new], old, DROPPED_DEPTH)?
            .iter()
            .filter_map(|c| git.patch_id(c.id))
            .collect();
        for c in others {
            if git.patch_id(c.id).is_some_and(|p| brought.contains(&p)) {
                continue;
            }
            if !out.iter().any(|(_, d)| d.id == c.id) {
                out.push((u.name.clone(), c));
            }
        }
    }
    Ok(out)
}

/// Whether `c` is a commit (not a merge) of a session other than
/// `session`, by its trailer: one a branch may not drop freely.
fn of_another(c: &CommitInfo, session: Option<&str>) -> bool {
    !c.merge && trailer::author_session(&c.message).is_some_and(|a| Some(a) != session)
}

fn branch_name(refname: &str) -> &str {
    refname.strip_prefix("refs/heads/").unwrap_or(refname)
}

fn subject(message: &str) -> String {
    let s = message.lines().next().unwrap_or("").trim();
    format!("\"{s}\"")
}

/// The brain and its settings. A value the hook cannot use (a broken
/// `.bsi.toml`, a duration out of its range, a `bsi.hookMode` that is no
/// mode) does not block commits: it is said, and its default used.
fn open_for_hook(ctx: &Ctx, err: &mut impl Write) -> Result<(Brain, Settings)> {
    let (brain, settings) = ctx.open_for_hook()?;
    for w in &settings.warnings {
        let _ = writeln!(err, "bsi: warning: {w}");
    }
    Ok((brain, settings))
}

/// The local registry branch and the remote as last fetched (by
/// [`fresh_view`] just before). `None`: there is nothing to check against.
fn hook_registry(
    brain: &Brain,
    settings: &Settings,
    err: &mut impl Write,
) -> Result<Option<Registry>> {
    let remote = settings.remote().ok().flatten();
    match brain.view(remote.as_ref()) {
        Ok(v) => Ok(Some(v.registry)),
        // No registry: bsi is not used in this repository.
        Err(Error::NoRegistry { .. }) => Ok(None),
        Err(e @ Error::NotMigrated { .. }) => {
            let _ = writeln!(
                err,
                "bsi: warning: {e}; commits are not checked until then. Next: a person runs `bsi migrate`."
            );
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The post-checkout hook: the first checkout of a new work tree (the
/// previous HEAD all zeros) gets bsi's hooks in its own folder when this
/// clone installed the guard and core.hooksPath gives each work tree its
/// own. Never fails the checkout: an error is said and the checkout stands.
fn post_checkout(ctx: &Ctx, previous: &str) -> Result<u8> {
    if previous.is_empty() || previous.bytes().any(|b| b != b'0') {
        return Ok(exit::OK);
    }
    let program = ctx.exe.as_deref().and_then(Path::to_str);
    let done = Git::discover(&ctx.cwd)
        .and_then(|git| hook_managers::guard_later_work_tree(&git, githooks::HOOKS, program));
    if let Err(e) = done {
        let _ = writeln!(
            ctx.out().plain_err(),
            "bsi: warning: this new work tree is not guarded ({e}). Next: run `bsi hook install` in it."
        );
    }
    Ok(exit::OK)
}

fn prepare_commit_msg(ctx: &Ctx, file: &Path) -> Result<u8> {
    let Some(session) = ctx.env_session()? else {
        return Ok(exit::OK);
    };
    let comment = Git::discover(&ctx.cwd)
        .ok()
        .and_then(|g| g.config_string("core.commentChar"))
        .and_then(|c| {
            let mut chars = c.chars();
            match (chars.next(), chars.next()) {
                (Some(ch), None) => Some(ch),
                _ => None,
            }
        })
        .unwrap_or('#');
    let path = if file.is_absolute() {
        file.to_path_buf()
    } else {
        ctx.cwd.join(file)
    };
    let text = std::fs::read(&path)
        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    let text = String::from_utf8_lossy(&text);
    if let Some(new) = trailer::add(&text, trailer::SESSION, &session, comment) {
        std::fs::write(&path, new)
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
    }
    Ok(exit::OK)
}
