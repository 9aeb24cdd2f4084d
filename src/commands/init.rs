//! `bsi init`: the registry branch, with an empty registry, committed and
//! published.

use super::Ctx;
use bsi_core::api::publish::{self, Created, Landed};
use bsi_core::api::store::BRANCH_FILE;
use bsi_core::claims::commit_message_by;
use bsi_core::error::{Error, Result, exit};
use bsi_core::registry::render::empty_registry_in;

pub(crate) fn run(ctx: &Ctx) -> Result<u8> {
    let (brain, settings) = ctx.open()?;
    if brain.git.tracks(&brain.copy_path)? {
        return Err(brain.missing());
    }
    // Never a rival registry: refused wherever any remote already has one
    // (several remotes and none known to hold it: they are asked first).
    let remote = match settings.remote() {
        Ok(r) => r,
        Err(e) => {
            settings.refuse_rival(&brain.git, &brain.workdir, None)?;
            return Err(e);
        }
    };
    settings.refuse_rival(&brain.git, &brain.workdir, remote.as_ref())?;
    let text = empty_registry_in(settings.config.registry_language);
    let agent = ctx.agent(None, &settings.config)?;
    let message = commit_message_by(
        "init",
        &[],
        &format!("{BRANCH_FILE} on {}", brain.branch),
        Some(&agent),
    );
    let made = publish::create(
        &brain,
        &settings,
        ctx.write_options(false),
        (text, message),
        "init",
        true,
    )?;
    let applied = match made {
        Created::Made(applied) => applied,
        Created::Exists(view) => {
            brain.refresh_copy(&view.registry);
            let place = match settings.remote()? {
                Some(r) if view.tips.tracking.is_some() => r.label(),
                _ => brain.branch.clone(),
            };
            return Err(Error::RegistryExists(place));
        }
    };
    brain.refresh_copy(&applied.landing.registry);
    let commit = applied.commit.expect("the branch's first commit");
    let landed = match applied.landing.landed {
        Landed::Published => "committed and published",
        _ => "committed",
    };
    ctx.out().say(|w| {
        writeln!(
            w,
            "Registry created — {BRANCH_FILE} on branch {} ({landed}, commit {}); a copy to read is at {}",
            brain.branch,
            &commit.to_string()[..8],
            brain.registry.display()
        )?;
        if !brain.git.has_identity() {
            writeln!(
                w,
                "Note: this repository has no git identity; bsi commits as `bsi <bsi@localhost>`. Set yours (your name and address in place of these): `{}` and `{}`.",
                bsi_core::words::command_line(["git", "config", "user.name", "Your Name"]),
                bsi_core::words::command_line(["git", "config", "user.email", "you@example.com"])
            )?;
        }
        if super::views::unguarded(&brain.git) {
            writeln!(
                w,
                "Next: `bsi hook install` so this clone's commits are checked against the claims; then `bsi open SCOPE` before editing, `bsi status` to see who holds what."
            )
        } else {
            writeln!(
                w,
                "Next: `bsi open SCOPE` before editing, `bsi status` to see who holds what."
            )
        }
    })?;
    Ok(ctx.say_landing(&applied.landing, exit::OK))
}
