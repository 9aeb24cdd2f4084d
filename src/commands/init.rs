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
    drop(lock);
    let mut out = ctx.out();
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
