//! `bsi hook install|uninstall|pre-commit|prepare-commit-msg`: git's hooks —
//! installing them, and what they run: the pre-commit guard and the
//! session trailer.

use std::io::Write;
use std::path::Path;

use super::Ctx;
use crate::audit;
use crate::cli::GitHook;
use crate::config::HookMode;
use crate::error::{Error, Result, exit};
use crate::git::{ChangesOf, Git};
use crate::githooks;
use crate::guard::{ClaimIndex, verdict};
use crate::registry::Registry;
use crate::settings::Settings;
use crate::store::Brain;
use crate::trailer;

pub(crate) fn run(ctx: &Ctx, action: GitHook) -> Result<u8> {
    match action {
        GitHook::Install => install(ctx),
        GitHook::Uninstall => uninstall(ctx),
        GitHook::PreCommit { .. } => pre_commit(ctx),
        GitHook::PrepareCommitMsg { file, .. } => prepare_commit_msg(ctx, &file),
    }
}

/// Runs `each` on every hook of bsi's in this clone's hooks directory and
/// says what it did, one line per hook.
fn each_hook(
    ctx: &Ctx,
    out: &mut dyn Write,
    each: impl Fn(&Path, &str) -> Result<githooks::Outcome>,
) -> Result<()> {
    let dir = Git::discover(&ctx.cwd)?.hooks_dir()?;
    for name in githooks::HOOKS {
        let outcome = each(&dir, name)?;
        writeln!(
            out,
            "{name}: {} ({})",
            outcome.describe(),
            dir.join(name).display()
        )
        .map_err(Error::output)?;
    }
    Ok(())
}

fn install(ctx: &Ctx) -> Result<u8> {
    let exe = std::env::current_exe().ok();
    let program = exe.as_deref().and_then(Path::to_str);
    let mut out = ctx.out();
    each_hook(ctx, &mut out, |dir, name| {
        githooks::install(dir, name, program)
    })?;
    // The registry's merge driver, so `git pull` merges claims by rows.
    if let Ok(brain) = ctx.brain() {
        match brain.register_merge_driver() {
            Ok(true) => {
                writeln!(out, "merge driver: registered for {}", brain.copy_path)
                    .map_err(Error::output)?;
            }
            Ok(false) => {}
            Err(e) => {
                writeln!(
                    out,
                    "merge driver: not registered ({e}); run `bsi hook install` again once that is mended"
                )
                .map_err(Error::output)?;
            }
        }
    }
    if let Some(note) = super::no_registry_note(ctx) {
        writeln!(out, "{note}").map_err(Error::output)?;
    }
    Ok(exit::OK)
}

fn uninstall(ctx: &Ctx) -> Result<u8> {
    each_hook(ctx, &mut ctx.out(), githooks::uninstall)?;
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
    let index_file = ctx.git_index_file.as_ref().map(|p| ctx.cwd.join(p));
    let changes = audit::read_changes(&brain, ChangesOf::Staged(index_file.as_deref()))?;

    let registry_staged = changes.iter().any(|c| c.path == brain.copy_path);
    let findings = audit::check_changes(&brain, &index, session, &changes, &brain.markdown);
    if findings.is_empty() && !registry_staged {
        return Ok(exit::OK);
    }

    let refuse_claimed = verdict::refuses_claimed(mode);
    let mut refused = false;
    let mut lines: Vec<String> = Vec::new();
    if registry_staged {
        refused |= refuse_claimed;
        lines.extend(verdict::registry_staged(
            &brain.copy_path,
            &brain.branch,
            refuse_claimed,
        ));
    }
    let judged = verdict::judge(&findings, session, mode, "commit");
    refused |= judged.refused;
    lines.extend(judged.lines.iter().cloned());
    lines.extend(verdict::ways_out(&judged, session));
    for line in &lines {
        let _ = writeln!(err, "{line}");
    }
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
