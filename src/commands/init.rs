//! `bsi init`: the registry branch, with an empty registry, committed and
//! published.

use std::io::Write;

use super::Ctx;
use crate::claims::commit_message_by;
use crate::error::{Error, Result, exit};
use crate::git_cli::{FetchError, Push};
use crate::publish::backoff;
use crate::registry::render::empty_registry_in;
use crate::settings::FETCH_TIMEOUT;
use crate::store::BRANCH_FILE;

pub(crate) fn run(ctx: &Ctx) -> Result<u8> {
    let (brain, settings) = ctx.open()?;
    let lock = brain.writer("init")?;
    if brain.git.tracks(&brain.rel)? {
        return Err(brain.missing());
    }
    // Several remotes and none known to hold the registry: ask them first.
    let remote = match settings.remote() {
        Ok(r) => r,
        Err(e) => {
            settings.refuse_rival(&brain.git, &brain.workdir, None)?;
            return Err(e);
        }
    };
    // A registry made elsewhere arrives with a fetch: never make a rival.
    let mut offline = None;
    if let Some(r) = &remote {
        match r.fetch(&brain.workdir, FETCH_TIMEOUT) {
            Ok(()) | Err(FetchError::NoBranch) => brain.heard_from_remote(ctx.now),
            Err(FetchError::Denied(why)) => {
                return Err(Error::RemoteDenied {
                    remote: r.label(),
                    why,
                });
            }
            Err(FetchError::Unreachable(why)) => offline = Some(why),
        }
    }
    let tips = brain.tips(remote.as_ref());
    if tips.local.is_some() || tips.tracking.is_some() {
        let view = brain.view_of(tips, remote.as_ref())?;
        brain.refresh_copy(&view.registry);
        let place = match (tips.tracking, &remote) {
            (Some(_), Some(r)) => r.label(),
            _ => brain.branch.clone(),
        };
        return Err(Error::RegistryExists(place));
    }
    settings.refuse_rival(&brain.git, &brain.workdir, remote.as_ref())?;
    let text = empty_registry_in(settings.config.registry_language);
    let agent = ctx.agent(None, &settings.config)?;
    let message = commit_message_by(
        "init",
        &[],
        &format!("{BRANCH_FILE} on {}", brain.branch),
        Some(&agent),
    );
    let commit = brain
        .git
        .commit_files(None, &[(BRANCH_FILE, Some(text.as_bytes()))], &message)?;
    let mut landed = "committed";
    if let (Some(r), None) = (&remote, &offline) {
        match r.push(&brain.workdir, commit, settings.connection_timeout) {
            Push::Pushed => {
                brain.heard_from_remote(ctx.now);
                brain
                    .git
                    .move_ref(&r.tracking_ref(), commit, None, "bsi: init")
                    .ok();
                landed = "committed and published";
            }
            Push::Lost => {
                // Another clone made the registry a moment ago: take it.
                std::thread::sleep(backoff(1));
                let _ = r.fetch(&brain.workdir, FETCH_TIMEOUT);
                return Err(Error::RegistryExists(r.label()));
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
            Push::Unreachable(why) => offline = Some(why),
        }
    }
    brain
        .git
        .move_ref(&brain.local_ref(), commit, None, "bsi: init")?;
    let registry = brain.parse(text)?;
    brain.refresh_copy(&registry);
    drop(lock);
    let mut out = ctx.out();
    writeln!(
        out,
        "Registry created — {BRANCH_FILE} on branch {} ({landed}, commit {}); a copy to read is at {}",
        brain.branch,
        &commit.to_string()[..8],
        brain.registry.display()
    ).map_err(Error::output)?;
    if !brain.git.has_identity() {
        writeln!(
            out,
            "Note: this repository has no git identity; bsi commits as `bsi <bsi@localhost>`. Set one with `git config user.name` and `git config user.email`."
        ).map_err(Error::output)?;
    }
    writeln!(
        out,
        "Next: `bsi open SCOPE` before editing, `bsi status` to see who holds what."
    )
    .map_err(Error::output)?;
    if let Some(why) = offline {
        eprintln!(
            "warning: {} could not be reached ({why}): the registry branch is NOT PUBLISHED. Run `bsi sync` once the remote is back.",
            remote.map(|r| r.label()).unwrap_or_default()
        );
        return Ok(exit::UNPUBLISHED);
    }
    Ok(exit::OK)
}
