//! `bsi doctor`: whether this work tree's guard is on — each of bsi's git
//! hooks installed and reached where git runs hooks — and what to run for
//! each hook that is not.

use std::io::Write;

use super::Ctx;
use crate::githooks;
use crate::hook_managers::{self, Health, Layout};
use bsi_core::config::HookMode;
use bsi_core::error::{Error, Result, exit};
use bsi_core::git::Git;

pub(crate) fn run(ctx: &Ctx) -> Result<u8> {
    let git = Git::discover(&ctx.cwd)?;
    let layout = Layout::read(&git)?;
    let mut out = ctx.asked();
    let mut off = 0usize;
    let w = |out: &mut dyn Write, line: &str| writeln!(out, "{line}").map_err(Error::output);
    w(&mut out, &hook_managers::describe(&layout))?;
    let mut path_missing = false;
    for name in hook_managers::hooks_of(&layout, githooks::HOOKS) {
        let health = hook_managers::health(&layout, name, ctx.places.path.as_deref());
        path_missing |= hook_managers::calls_bsi_on_path(&health);
        match health {
            Health::Reached(how) => w(&mut out, &format!("{name}: ok: {how}"))?,
            Health::Off { what, fix } => {
                off += 1;
                w(&mut out, &format!("{name}: OFF: {what}"))?;
                w(&mut out, &format!("  fix: {fix}"))?;
            }
        }
    }
    if path_missing && !hook_managers::on_path("bsi", ctx.places.path.as_deref()) {
        off += 1;
        w(
            &mut out,
            "bsi on PATH: OFF: the hooks above call `bsi` on PATH, and no bsi is on PATH here",
        )?;
        w(
            &mut out,
            "  fix: put the folder of the bsi program on PATH (`cargo install` puts it in ~/.cargo/bin)",
        )?;
    }
    match ctx.open() {
        Ok((_, settings)) if settings.hook_mode == HookMode::Off => {
            off += 1;
            w(
                &mut out,
                "hook mode: OFF: the hooks pass every commit (bsi.hookMode or hook_mode of .bsi.toml is `off`)",
            )?;
            w(
                &mut out,
                "  fix: run `git config bsi.hookMode normal`, or remove hook_mode = \"off\" from .bsi.toml",
            )?;
        }
        Ok((_, settings)) => w(
            &mut out,
            &format!("hook mode: {}", settings.hook_mode.as_str()),
        )?,
        Err(Error::NoRegistry { .. }) => w(
            &mut out,
            "registry: none in this repository: the hooks pass every commit until `bsi init`",
        )?,
        Err(e) => w(&mut out, &format!("registry: cannot be read ({e})"))?,
    }
    if off == 0 {
        w(&mut out, "The guard is on in this work tree.")?;
        Ok(exit::OK)
    } else {
        w(
            &mut out,
            &format!(
                "The guard is OFF in this work tree: {off} problem{} above; run what each `fix:` line says, then `bsi doctor` again.",
                if off == 1 { "" } else { "s" }
            ),
        )?;
        Ok(exit::GUARD_OFF)
    }
}
