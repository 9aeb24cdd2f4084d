//! `bsi doctor`: whether this work tree's guard is on — each of bsi's git
//! hooks installed and reached where git runs hooks — and what to run for
//! each hook that is not.

use super::Ctx;
use crate::githooks;
use crate::hook_managers::{self, Health, Layout};
use bsi_core::api::git::Git;
use bsi_core::config::HookMode;
use bsi_core::error::{Error, Result, exit};

pub(crate) fn run(ctx: &Ctx) -> Result<u8> {
    let git = Git::discover(&ctx.cwd)?;
    let layout = Layout::read(&git)?;
    // The report is what `doctor` is asked for: said with -q too.
    let mut out = ctx.out().view();
    let mut off = 0usize;
    out.line(hook_managers::describe(&layout))?;
    let mut path_missing = false;
    for name in hook_managers::hooks_of(&layout, githooks::HOOKS) {
        let health = hook_managers::health(&layout, name, ctx.places.path.as_deref());
        path_missing |= hook_managers::calls_bsi_on_path(&health);
        match health {
            Health::Reached(how) => out.line(format!("{name}: ok: {how}"))?,
            Health::Off { what, fix } => {
                off += 1;
                out.line(format!("{name}: OFF: {what}"))?;
                out.line(format!("  fix: {fix}"))?;
            }
        }
    }
    if path_missing && !hook_managers::on_path("bsi", ctx.places.path.as_deref()) {
        off += 1;
        out.line(
            "bsi on PATH: OFF: the hooks above call `bsi` on PATH, and no bsi is on PATH here",
        )?;
        out.line("  fix: put the folder of the bsi program on PATH (`cargo install` puts it in ~/.cargo/bin)",
        )?;
    }
    match ctx.open() {
        Ok((_, settings)) if settings.hook_mode == HookMode::Off => {
            off += 1;
            out.line("hook mode: OFF: the hooks pass every commit (bsi.hookMode or hook_mode of .bsi.toml is `off`)",
            )?;
            out.line("  fix: run `git config bsi.hookMode normal`, or remove hook_mode = \"off\" from .bsi.toml",
            )?;
        }
        Ok((brain, settings)) => {
            out.line(format!("hook mode: {}", settings.hook_mode.as_str()))?;
            // Not the guard's: said, never counted as a problem of it.
            if let Ok(Some(remote)) = settings.remote() {
                if let Some(why) = brain.meeting_refused(Some(&remote)) {
                    out.line(format!(
                        "clones of this machine: this clone's writes do not meet theirs on {}'s disk: {why}",
                        remote.name
                    ))?;
                } else if let Some(dir) = brain.meeting_shared(Some(&remote)) {
                    out.line(format!(
                        "clones of this machine: this clone's writes meet theirs in {}",
                        dir.display()
                    ))?;
                }
            }
            if let Some(records) = brain.own_alive_record() {
                for line in alive_lines(&records, brain.clock()) {
                    out.line(line)?;
                }
            }
        }
        Err(Error::NoRegistry { .. }) => out.line(
            "registry: none in this repository: the hooks pass every commit until `bsi init`",
        )?,
        Err(e) => out.line(format!("registry: cannot be read ({e})"))?,
    }
    if off == 0 {
        out.line("The guard is on in this work tree.")?;
        Ok(exit::OK)
    } else {
        out.line(format!(
                "The guard is OFF in this work tree: {off} problem{} above; run what each `fix:` line says, then `bsi doctor` again.",
                if off == 1 { "" } else { "s" }
            ),
        )?;
        Ok(exit::GUARD_OFF)
    }
}

/// What this clone's record of places kept alive holds (`store::alive`),
/// once a waiter of the clone wrote one, judged at `now`: a line per
/// place, its lease and whether it lapsed.
fn alive_lines(
    records: &[bsi_core::api::store::alive::Record],
    now: chrono::DateTime<chrono::FixedOffset>,
) -> Vec<String> {
    use bsi_core::registry::render::format_queue_ts;
    if records.is_empty() {
        return vec!["places kept alive: none (no waiter of this clone is in the queue)".into()];
    }
    records
        .iter()
        .map(|r| {
            let left = r.lease - now;
            let state = if left > chrono::Duration::zero() {
                format!("holds for {} s", left.num_seconds())
            } else {
                "lapsed".to_string()
            };
            format!(
                "places kept alive: {} (arrived {}), lease {}: {state}",
                r.session,
                format_queue_ts(r.since),
                format_queue_ts(r.lease)
            )
        })
        .collect()
}
