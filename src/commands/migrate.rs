//! `bsi migrate`: a brain from before the registry branch — `BRAIN-INDEX.md`
//! tracked on the content branch — moved to the registry branch, every byte
//! of the registry kept, then untracked in one commit that changes nothing
//! else. A person runs it once per brain.

use std::io::Write;

use super::Ctx;
use crate::claims::commit_message;
use crate::error::{Error, Result, exit};
use crate::git_cli::{FetchError, Push};
use crate::settings::FETCH_TIMEOUT;
use crate::store::BRANCH_FILE;

pub(crate) fn run(ctx: &Ctx) -> Result<u8> {
    let (brain, settings) = ctx.open()?;
    let lock = brain.writer("migrate")?;
    brain.git.ensure_clean_state()?;
    let (text, registry) = committed_registry(&brain)?;

    let remote = settings.remote()?;
    if let Some(r) = &remote {
        match r.fetch(&brain.workdir, FETCH_TIMEOUT) {
            Ok(()) | Err(FetchError::NoBranch) => brain.heard_from_remote(ctx.now),
            Err(FetchError::Denied(why)) => {
                return Err(Error::RemoteDenied {
                    remote: r.label(),
                    why,
                });
            }
            Err(FetchError::Unreachable(why)) => {
                return Err(Error::Unreachable {
                    remote: r.label(),
                    why,
                });
            }
        }
    }
    let tips = brain.tips(remote.as_ref());
    let published = if tips.local.is_none() && tips.tracking.is_none() {
        create_branch(&brain, &settings, remote.as_ref(), &text, ctx)?
    } else {
        check_rows_present(&brain, tips, remote.as_ref(), &registry)?;
        false
    };
    let untrack = commit_message(
        "migrate",
        &[],
        &format!(
            "untrack {} (the registry lives on branch {})",
            brain.rel, brain.branch
        ),
    );
    let removal = brain.git.commit_removal(&brain.rel, &untrack)?;
    // The file stays in the work tree, now the excluded copy.
    brain.refresh_copy(&registry);
    drop(lock);
    let mut out = ctx.out();
    writeln!(
        out,
        "Migrated — {} now lives on branch {}{}; {} rows kept byte for byte.",
        BRANCH_FILE,
        brain.branch,
        if published { " (published)" } else { "" },
        registry.active_claims.len() + registry.stale_claims.len() + registry.history_len()
    )
    .map_err(Error::output)?;
    writeln!(
        out,
        "This branch has one new commit that untracks {} and changes nothing else ({}).",
        brain.rel,
        &removal.to_string()[..8]
    )
    .map_err(Error::output)?;
    writeln!(
        out,
        "Next: push it with your content (`git push`); other clones take it with `git pull`."
    )
    .map_err(Error::output)?;
    Ok(exit::OK)
}

/// The registry as the current branch committed it: what moves. An edit of
/// it nobody committed would be lost, so it is refused.
fn committed_registry(brain: &crate::store::Brain) -> Result<(String, crate::registry::Registry)> {
    let head = brain.git.head_state(&brain.rel)?;
    let Some(blob) = head.blob else {
        return Err(Error::Refused {
            what: format!(
                "{} is not tracked on this branch: there is nothing to migrate",
                brain.rel
            ),
            hint:
                "`bsi status` shows the registry; `bsi init` creates one for a brain that has none"
                    .into(),
        });
    };
    // The committed registry is what moves: an edit nobody committed
    // would be lost, so it is refused.
    let on_disk = std::fs::read(&brain.registry).ok();
    let committed = brain.git.blob_bytes(blob)?;
    if on_disk.as_deref() != Some(committed.as_slice()) {
        return Err(Error::Refused {
            what: format!("{} differs from its last commit", brain.rel),
            hint: format!(
                "commit the change (`{}`) or undo it (`{}`), then run `bsi migrate` again",
                crate::words::command_line(["git", "commit", &brain.rel]),
                crate::words::command_line(["git", "checkout", "--", &brain.rel])
            ),
        });
    }
    let text = String::from_utf8(committed).map_err(|_| Error::Registry {
        path: brain.registry.clone(),
        source: crate::registry::ParseError {
            line: 0,
            reason: "the file is not valid UTF-8".into(),
        },
    })?;
    let registry = crate::registry::parse(text.clone()).map_err(|source| Error::Registry {
        path: brain.registry.clone(),
        source,
    })?;
    Ok((text, registry))
}

/// Makes the registry branch with `text` as its first commit, and pushes it
/// when there is a remote. Returns whether it was published.
fn create_branch(
    brain: &crate::store::Brain,
    settings: &crate::settings::Settings,
    remote: Option<&crate::git_cli::Remote>,
    text: &str,
    ctx: &Ctx,
) -> Result<bool> {
    let message = commit_message(
        "migrate",
        &[],
        &format!("{} from the content branch to {}", brain.rel, brain.branch),
    );
    let commit = brain
        .git
        .commit_files(None, &[(BRANCH_FILE, Some(text.as_bytes()))], &message)?;
    let mut published = false;
    if let Some(r) = remote {
        match r.push(&brain.workdir, commit, settings.connection_timeout) {
            Push::Pushed => {
                brain.heard_from_remote(ctx.now);
                brain
                    .git
                    .move_ref(&r.tracking_ref(), commit, None, "bsi: migrate")
                    .ok();
                published = true;
            }
            Push::Lost => {
                return Err(Error::Refused {
                    what: format!("{} received a registry branch a moment ago", r.label()),
                    hint:
                        "another clone migrated at the same time: run `git pull`, then `bsi status`"
                            .into(),
                });
            }
            Push::Refused(why) => {
                return Err(Error::RemoteRefused {
                    remote: r.label(),
                    why,
                });
            }
            Push::Denied(why) => {
                return Err(Error::RemoteDenied {
                    remote: r.label(),
                    why,
                });
            }
            Push::Unreachable(why) => {
                return Err(Error::Unreachable {
                    remote: r.label(),
                    why,
                });
            }
        }
    }
    brain
        .git
        .move_ref(&brain.local_ref(), commit, None, "bsi: migrate")?;
    Ok(published)
}

/// The brain was migrated from another clone (or another branch): the rows
/// of this branch's file must all be on the registry branch already.
fn check_rows_present(
    brain: &crate::store::Brain,
    tips: crate::store::Tips,
    remote: Option<&crate::git_cli::Remote>,
    registry: &crate::registry::Registry,
) -> Result<()> {
    let view = brain.view_of(tips, remote)?;
    let merged = crate::registry::merge::merge3(None, &view.registry, registry, brain.now)
        .map_err(|e| Error::Refused {
            what: format!("the registries cannot be merged by rows: {e}"),
            hint: "settle it by hand on the registry branch, then run `bsi migrate` again".into(),
        })?;
    if !brain.parse(merged.text)?.same_rows(&view.registry) {
        return Err(Error::Refused {
            what: format!(
                "the registry branch {} exists already, and this branch's {} holds rows it lacks",
                brain.branch, brain.rel
            ),
            hint: "run `git pull` first (the brain was migrated elsewhere); if rows are still missing, add them on the registry branch by hand".into(),
        });
    }
    Ok(())
}
