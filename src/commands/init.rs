//! `bsi init`: an empty registry, committed.

use std::io::Write;

use super::{Ctx, commit_message};
use crate::error::{Result, exit};
use crate::registry::render::empty_registry;

pub(crate) fn run(ctx: &Ctx) -> Result<u8> {
    let brain = ctx.brain()?;
    let lock = brain.lock()?;
    let commit = brain.create(
        &lock,
        &empty_registry(),
        &commit_message("init", &[], &brain.rel),
    )?;
    let driver = brain.register_merge_driver();
    drop(lock);
    let mut out = ctx.out();
    if let Err(e) = driver {
        let _ = writeln!(
            out,
            "Note: the registry's merge driver could not be registered ({e}); `bsi sync` registers it later."
        );
    }
    let _ = writeln!(
        out,
        "Registry created — {} (commit {})",
        brain.registry.display(),
        &commit.to_string()[..8]
    );
    if !brain.git.has_identity() {
        let _ = writeln!(
            out,
            "Note: this repository has no git identity; bsi commits as `bsi <bsi@localhost>`. Set one with `git config user.name` and `git config user.email`."
        );
    }
    let _ = writeln!(
        out,
        "Next: `bsi open SCOPE` before editing, `bsi status` to see who holds what."
    );
    Ok(exit::OK)
}
