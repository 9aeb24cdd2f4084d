//! `bsi hook`: install and remove the git hooks, and what they run — the
//! pre-commit guard and the session trailer.

use std::io::Write;
use std::path::Path;

use super::{Ctx, open_command, verify};
use crate::cli::HookAction;
use crate::config::HookMode;
use crate::error::{Error, Result, exit};
use crate::git::{ChangesOf, Git};
use crate::guard::{ClaimIndex, Finding, Region};
use crate::hooks;
use crate::output;
use crate::registry::{Claim, Registry};
use crate::scope::Scope;
use crate::settings::Settings;
use crate::store::Brain;
use crate::trailer;
use crate::words::command_line;

pub(crate) fn run(ctx: &Ctx, action: HookAction) -> Result<u8> {
    match action {
        HookAction::Install => install(ctx),
        HookAction::Uninstall => uninstall(ctx),
        HookAction::PreCommit { .. } => pre_commit(ctx),
        HookAction::PrepareCommitMsg { file, .. } => prepare_commit_msg(ctx, &file),
        HookAction::Edit { .. } | HookAction::SessionStart { .. } | HookAction::Stop { .. } => {
            match super::agent_hook::event_of(&action) {
                Some((tool, kind)) => Ok(super::agent_hook::run(Ok(ctx.clone()), tool, kind)),
                None => Ok(exit::OK),
            }
        }
    }
}

fn install(ctx: &Ctx) -> Result<u8> {
    let git = Git::discover(&ctx.cwd)?;
    let dir = git.hooks_dir()?;
    let exe = std::env::current_exe().ok();
    let program = exe.as_deref().and_then(Path::to_str);
    let mut out = std::io::stdout().lock();
    for name in hooks::HOOKS {
        let outcome = hooks::install(&dir, name, program)?;
        writeln!(
            out,
            "{name}: {} ({})",
            outcome.describe(),
            dir.join(name).display()
        )
        .map_err(Error::output)?;
    }
    // The registry's merge driver, so `git pull` merges claims by rows.
    if let Ok(brain) = ctx.brain() {
        match brain.register_merge_driver() {
            Ok(true) => {
                writeln!(out, "merge driver: registered for {}", brain.rel)
                    .map_err(Error::output)?;
            }
            Ok(false) => {}
            Err(e) => {
                writeln!(
                    out,
                    "merge driver: not registered ({e}); `bsi sync` registers it later"
                )
                .map_err(Error::output)?;
            }
        }
    }
    Ok(exit::OK)
}

fn uninstall(ctx: &Ctx) -> Result<u8> {
    let git = Git::discover(&ctx.cwd)?;
    let dir = git.hooks_dir()?;
    let mut out = std::io::stdout().lock();
    for name in hooks::HOOKS {
        let outcome = hooks::uninstall(&dir, name)?;
        writeln!(
            out,
            "{name}: {} ({})",
            outcome.describe(),
            dir.join(name).display()
        )
        .map_err(Error::output)?;
    }
    Ok(exit::OK)
}

fn pre_commit(ctx: &Ctx) -> Result<u8> {
    let mut err = std::io::stderr().lock();
    let (brain, settings) = open_for_hook(ctx, &mut err)?;
    let mode = settings.hook_mode;
    if mode == HookMode::Off {
        return Ok(exit::OK);
    }
    let Some(reg) = hook_registry(&brain, &settings, &mut err)? else {
        return Ok(exit::OK);
    };
    let session = ctx.env_session()?;
    let session = session.as_deref();
    let index = ClaimIndex::new(&reg);
    // `git commit -a`, `git commit PATHS` and `-i` hand the hook a temporary
    // index: judge that one, which is what the commit records.
    let index_file = std::env::var_os("GIT_INDEX_FILE")
        .filter(|p| !p.is_empty())
        .map(|p| ctx.cwd.join(p));
    let changes = verify::read_changes(&brain, ChangesOf::Staged(index_file.as_deref()))?;

    let registry_staged = changes.iter().any(|c| c.path == brain.rel);
    let md = verify::markdown_extra(&brain);
    let findings = verify::check_changes(&brain, &index, session, &changes, &md);
    if findings.is_empty() && !registry_staged {
        return Ok(exit::OK);
    }

    let refuse_claimed = mode != HookMode::Warn;
    let mut refused = false;
    if registry_staged {
        refused |= refuse_claimed;
        say_registry_staged(&mut err, &brain, refuse_claimed);
    }
    let judged = judge(&findings, session, mode, "commit");
    refused |= judged.refused;
    for line in &judged.lines {
        let _ = writeln!(err, "{line}");
    }
    say_ways_out(&mut err, &judged, session);
    if refused {
        let _ = writeln!(
            err,
            "bsi: commit refused. `git commit --no-verify` skips this check; `git config bsi.hookMode warn` only reports"
        );
        Ok(exit::CONFLICT)
    } else {
        Ok(exit::OK)
    }
}

/// The brain and its settings. A broken .bsi.toml does not block commits:
/// it is said, and the hook runs with the defaults.
fn open_for_hook(ctx: &Ctx, err: &mut impl Write) -> Result<(Brain, Settings)> {
    let (brain, settings) = match ctx.open() {
        Ok(v) => v,
        Err(e @ Error::Config { .. }) => {
            let _ = writeln!(
                err,
                "bsi: warning: {e}; the hook runs with the default settings"
            );
            ctx.open_with_default_config()?
        }
        Err(e) => return Err(e),
    };
    if let Some(w) = &settings.hook_mode_warning {
        let _ = writeln!(err, "bsi: warning: {w}");
    }
    Ok((brain, settings))
}

/// The local registry branch and the remote as last fetched: the hook
/// never touches the network. `None`: there is nothing to check against.
fn hook_registry(
    brain: &Brain,
    settings: &Settings,
    err: &mut impl Write,
) -> Result<Option<Registry>> {
    let remote = settings.remote(&brain.git).ok().flatten();
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

fn say_registry_staged(err: &mut impl Write, brain: &Brain, refused: bool) {
    let _ = writeln!(
        err,
        "bsi: {}: {} is staged — it is the copy of the registry, which lives on the branch {}; only bsi writes it there",
        label(refused),
        brain.rel,
        brain.branch
    );
    let _ = writeln!(
        err,
        "  take it out of the commit with `{}`, then commit again",
        command_line(["git", "rm", "--cached", &brain.rel])
    );
}

/// The paths changed outside the session's claims that no other session's
/// claim is in the way of: what `bsi open` can claim for it. A path with
/// lines in another's claim is left to the ways out of its holder.
/// Lines of one section become that section; anything else the file.
fn outside_to_claim(findings: &[Finding<'_>]) -> Vec<Scope> {
    let mut out: Vec<Scope> = Vec::new();
    for f in findings {
        if let Finding::Outside { path, region } = f {
            // Another's claim in the way, or a rename whose own hint names
            // the heading to claim.
            let held = findings.iter().any(|g| match g {
                Finding::Claimed { path: p, .. } => p == path,
                Finding::HeadingGone {
                    path: p,
                    renamed_to,
                    ..
                } => p == path && !renamed_to.is_empty(),
                Finding::Outside { .. } => false,
            });
            let scope = match region
                .as_ref()
                .filter(|r| r.kind != crate::changes::Kind::Moved)
            {
                Some(Region {
                    heading: Some(h), ..
                }) => Scope::Section {
                    file: path.clone(),
                    heading: h.clone(),
                },
                _ => Scope::File(path.clone()),
            };
            if !held && !out.contains(&scope) {
                out.push(scope);
            }
        }
    }
    // A whole file already listed covers its sections.
    let whole: Vec<Scope> = out
        .iter()
        .filter(|s| matches!(s, Scope::File(_)))
        .cloned()
        .collect();
    out.retain(|s| match s {
        Scope::Section { file, .. } => !whole.contains(&Scope::File(file.clone())),
        _ => true,
    });
    out
}

/// What the committer can do: per holder of a claim in the way, and for
/// changes outside the session's claims.
fn say_ways_out(err: &mut impl Write, judged: &Judged<'_>, session: Option<&str>) {
    if !judged.holders.is_empty() {
        if session.is_none() {
            let _ = writeln!(
                err,
                "  BSI_SESSION is not set, so every claim counts as another session's"
            );
        }
        for (s, stale) in &judged.holders {
            if *stale {
                let _ = writeln!(
                    err,
                    "  ways out: ask the holder of {s} to close it, or have a person run `{}` (its claim is stale)",
                    command_line(["bsi", "release", s, "--confirm"])
                );
            } else {
                let _ = writeln!(
                    err,
                    "  ways out: wait for {s} to close its claim, ask its holder, or have a person run `{}`",
                    command_line(["bsi", "release", s, "--confirm", "--force"])
                );
            }
        }
    }
    if !judged.outside.is_empty() {
        let (more, who) = match session {
            Some(s) => (vec!["--session", s], ""),
            None => (Vec::new(), " (as the session that commits)"),
        };
        let _ = writeln!(
            err,
            "  claim what you change first: `{}`{who}",
            open_command(&judged.outside, &more)
        );
    }
}

/// The findings of a change as lines for the person or agent who made it,
/// and what they add up to under `mode`: one wording for the pre-commit
/// hook and the agent tools' edit hook.
pub(crate) struct Judged<'a> {
    /// One line per finding (and the command that settles a rename).
    pub(crate) lines: Vec<String>,
    /// Whether `mode` refuses the change.
    pub(crate) refused: bool,
    /// The sessions whose claims the change is inside, and whether stale.
    pub(crate) holders: Vec<(&'a str, bool)>,
    /// Whether something lies outside every scope of the session.
    pub(crate) outside: Vec<Scope>,
}

/// Words the findings of a change (`change`: "commit", "edit"): [`Judged`].
pub(crate) fn judge<'a>(
    findings: &[Finding<'a>],
    session: Option<&str>,
    mode: HookMode,
    change: &str,
) -> Judged<'a> {
    let refuse_claimed = mode != HookMode::Warn;
    let refuse_outside = mode == HookMode::Strict;
    let mut lines: Vec<String> = Vec::new();
    let mut refused = false;
    let mut holders: Vec<(&'a str, bool)> = Vec::new();
    for f in findings {
        match f {
            Finding::Claimed {
                path,
                claim,
                stale,
                region,
            } => {
                refused |= refuse_claimed;
                lines.push(claimed_line(
                    path,
                    claim,
                    *stale,
                    region.as_ref(),
                    refuse_claimed,
                ));
                if !holders.iter().any(|(s, _)| *s == claim.session) {
                    holders.push((&claim.session, *stale));
                }
            }
            Finding::Outside { path, region } => {
                refused |= refuse_outside;
                lines.push(outside_line(path, region.as_ref(), session, refuse_outside));
            }
            Finding::HeadingGone {
                path,
                claim,
                renamed_to,
            } => {
                if !renamed_to.is_empty() {
                    refused |= refuse_claimed;
                }
                heading_gone_lines(&mut lines, path, claim, renamed_to, change, refuse_claimed);
            }
        }
    }
    Judged {
        lines,
        refused,
        holders,
        outside: outside_to_claim(findings),
    }
}

fn label(refused: bool) -> &'static str {
    if refused { "refused" } else { "warning" }
}

/// A change inside another session's claim.
fn claimed_line(
    path: &str,
    claim: &Claim,
    stale: bool,
    region: Option<&Region>,
    refused: bool,
) -> String {
    let (place, verb) = match region {
        Some(r) => (format!("{path} {}", r.describe()), r.verb()),
        None => (path.to_string(), "is"),
    };
    let agent = if claim.agent.is_empty() {
        "unknown agent".to_string()
    } else {
        format!("agent {}", claim.agent)
    };
    format!(
        "bsi: {}: {place} {verb} inside a{} claim of session {} ({agent}, scope {}, {} {})",
        label(refused),
        if stale { " stale" } else { "n active" },
        claim.session,
        claim.scope,
        if stale { "expired" } else { "expires" },
        output::local_zone_ts(claim.expires),
    )
}

/// A change outside every scope the session holds.
fn outside_line(
    path: &str,
    region: Option<&Region>,
    session: Option<&str>,
    refused: bool,
) -> String {
    let who = session.unwrap_or("the session");
    let what = match region {
        Some(r) => format!(
            "{path} {} {} outside the sections {who} holds in this file",
            r.describe(),
            r.verb()
        ),
        None => format!("{path} is outside every scope {who} holds"),
    };
    format!("bsi: {}: {what}", label(refused))
}

/// A change that removes or renames the heading of one of the session's
/// own section claims; a rename to headings it does not hold is refused
/// (`refused`) with the claims to open first.
fn heading_gone_lines(
    lines: &mut Vec<String>,
    path: &str,
    claim: &Claim,
    renamed_to: &[String],
    change: &str,
    refused: bool,
) {
    let heading = match &claim.scope {
        Scope::Section { heading, .. } => heading.as_str(),
        _ => "",
    };
    let who = &claim.session;
    if renamed_to.is_empty() {
        lines.push(format!(
            "bsi: warning: this {change} removes or renames heading `{heading}` of {path}, so the claim {} of {who} names no heading any more; close it with `{}` when done",
            claim.scope,
            command_line(["bsi", "close", who, "--scope", &claim.scope.to_string()])
        ));
        return;
    }
    lines.push(format!(
        "bsi: {}: this {change} renames heading `{heading}` of {path}, which {who} holds, to what {who} does not hold ({}); the claim would then protect nothing",
        label(refused),
        renamed_to
            .iter()
            .map(|h| format!("`{h}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    for h in renamed_to {
        let scope = Scope::Section {
            file: path.to_string(),
            heading: h.clone(),
        };
        lines.push(format!(
            "  claim the new name first: `{}`, then {change} again",
            open_command([&scope], &["--session", who])
        ));
    }
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
