//! `bsi status`: read only. Active and stale claims with their time left.

use super::Ctx;
use super::views::{
    FREE, GENERIC_NEXT, Shown, StatusJson, claims_view, counts, free_but_queued, is_overdue,
    next_steps, print_drift, print_sync, state, sync_state,
};
use crate::cli::StatusArgs;
use crate::output::{self, Paint};
use crate::tree;
use bsi_core::api;
use bsi_core::api::audit::Unwritten;
use bsi_core::api::resolve;
use bsi_core::api::store::Brain;
use bsi_core::error::{Result, exit};
use bsi_core::registry::{Claim, Registry};

pub(crate) fn run(ctx: &Ctx, args: &StatusArgs) -> Result<u8> {
    let (tree, offline) = (args.tree, args.offline);
    let out = ctx.out();
    let (brain, settings) = ctx.open()?;
    let seen = api::views::status(&ctx.site(&brain, &settings), offline)?;
    if args.html {
        // The page `bsi serve` serves, once: printed even with -q.
        let page = api::views::page(&brain, &seen.view, ctx.now);
        let remote = settings.remote()?;
        let reading = crate::page::Reading {
            brain: brain
                .root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            remote: remote.as_ref().map(|r| r.name.clone()),
            remote_read: matches!(seen.fresh, bsi_core::api::publish::Freshness::Fetched)
                .then_some(ctx.now),
            unreachable: match &seen.fresh {
                bsi_core::api::publish::Freshness::Unreachable(why) => Some(why.clone()),
                _ => None,
            },
            offline,
        };
        out.raw(crate::page::document(&page, &reading, false).as_bytes())?;
        return Ok(exit::OK);
    }
    let sync = sync_state(ctx, &brain, &settings, &seen.view, &seen.fresh);
    let reg = &seen.view.registry;
    // The acting session's uncommitted work, as `status` sees it, kept.
    if let Ok(Some(s)) = ctx.env_session() {
        api::keep::refresh_or_say(&brain, reg, s.as_str());
    }
    let sections = brain.sections();
    let collisions: Vec<(&Claim, &Claim)> = seen.collisions.iter().map(|(a, b)| (a, b)).collect();
    let waiting = &seen.waiting;
    out.json(|| StatusJson::new(ctx, &brain, &seen, sync.clone()))?;
    // The view is what `status` is asked for: it prints even with -q,
    // without the lines that say what to do next.
    out.show(|w| {
        let mut view = if tree {
            render_tree(&brain, reg, &seen.unwritten, ctx)
        } else {
            render(&reg.active_claims, &reg.stale_claims, ctx)
        };
        if !waiting.is_empty() && view.body == FREE {
            view.body = free_but_queued(waiting.len());
        }
        // What is wrong (collisions, claims whose heading is gone) comes
        // before what to do next, which closes the output.
        write!(w, "{}", view.body)?;
        write!(w, "{}", queue_lines(waiting, &sections, ctx.now))?;
        for (a, b) in &collisions {
            writeln!(
                w,
                "{}",
                output::paint(
                    ctx.screen.colour,
                    Paint::Red,
                    &bsi_core::words::collision_line(a, b)
                )
            )?;
        }
        for (c, why) in &seen.unwritten {
            let (scope, session) = (c.scope.to_string(), &c.session);
            let line = match why {
                Unwritten::Reserved => bsi_core::api::audit::reserved_line(&scope, session),
                Unwritten::Gone => bsi_core::api::audit::missing_line(&scope, session),
            };
            writeln!(w, "{line}")?;
        }
        print_drift(w, &out, &seen.drift, seen.drift_unread.as_deref())?;
        // A clone whose commits nothing checks: the one command that
        // guards it, before what to do next.
        if !ctx.verbosity.is_quiet() && super::views::unguarded(&brain.git) {
            writeln!(w, "{}", super::views::UNGUARDED)?;
        }
        // With a collision standing, its own next step replaces the
        // generic one.
        if collisions.is_empty() || view.next != GENERIC_NEXT {
            write!(w, "{}", view.next)?;
        }
        if !collisions.is_empty() && !ctx.verbosity.is_quiet() {
            let here = ctx.here(&brain);
            write!(
                w,
                "{}",
                bsi_core::words::collision_next_at(&here, &collisions)
            )?;
        }
        if let Some(s) = &sync {
            print_sync(w, s)?;
        }
        // The guard this clone installed, when a hook of it is not reached
        // here.
        let guard = if ctx.verbosity.is_quiet() {
            None
        } else {
            crate::hook_managers::status_line(
                &brain.git,
                crate::githooks::HOOKS,
                ctx.places.path.as_deref(),
            )
        };
        if let Some(line) = guard {
            writeln!(w, "{}", output::paint(ctx.screen.colour, Paint::Red, &line))?;
        }
        Ok(())
    })?;
    // A collision stands until one of its sessions closes: say it in the
    // exit code too, for scripts and agents.
    Ok(if collisions.is_empty() {
        exit::OK
    } else {
        exit::CONFLICT
    })
}

/// The queue of `bsi open --wait`, a line per waiter: its place, what it
/// waits for and who is ahead of it. Nothing when nobody waits.
fn queue_lines(
    waiting: &[bsi_core::claims::queue::Request],
    sections: &dyn bsi_core::scope::Sections,
    now: chrono::DateTime<chrono::FixedOffset>,
) -> String {
    if waiting.is_empty() {
        return String::new();
    }
    let mut s = format!("Queue ({} waiting, in order of arrival):\n", waiting.len());
    for (i, r) in waiting.iter().enumerate() {
        let agent = if r.agent.is_empty() {
            String::new()
        } else {
            format!(" ({})", r.agent)
        };
        let ahead: Vec<&str> = waiting[..i]
            .iter()
            .filter(|a| {
                a.scopes.iter().any(|x| {
                    r.scopes
                        .iter()
                        .any(|y| bsi_core::scope::overlaps(x, y, sections))
                })
            })
            .map(|a| a.session.as_str())
            .collect();
        let behind = if ahead.is_empty() {
            "first for it".to_string()
        } else {
            format!("after {}", ahead.join(", "))
        };
        s.push_str(&format!(
            "  {}. {}{agent} waits for {} since {}, {behind}\n",
            i + 1,
            r.session,
            bsi_core::claims::scopes_summary(&r.scopes),
            r.since.with_timezone(now.offset()).format("%H:%M:%S"),
        ));
        if let Some(d) = r.clock_ahead {
            // No right clock writes such a lease: counted from this clone.
            let whose = if r.agent.is_empty() {
                "its machine".to_string()
            } else {
                format!("{}'s machine", r.agent)
            };
            let by = if d.num_seconds() < 90 {
                format!("{}s", d.num_seconds())
            } else {
                bsi_core::ttl::format_duration(d + chrono::Duration::seconds(30))
            };
            s.push_str(&format!(
                "     the clock of {whose} is ahead by ~{by}: its place is counted as lapsing at {}\n",
                r.lease.with_timezone(now.offset()).format("%H:%M:%S"),
            ));
        }
    }
    s
}

/// The human view of a list of claims: the table, the counts and, unless
/// `--quiet`, what to do next.
fn render(active: &[Claim], stale: &[Claim], ctx: &Ctx) -> Shown {
    let mut v = claims_view(active, stale, ctx);
    let any = !active.is_empty() || !stale.is_empty();
    if any && !ctx.verbosity.is_quiet() && v.next.is_empty() {
        v.next = GENERIC_NEXT.to_string();
    }
    v
}

/// The brain's directory tree with each claim where it sits.
fn render_tree(
    brain: &Brain,
    reg: &Registry,
    unwritten: &[(Claim, Unwritten)],
    ctx: &Ctx,
) -> Shown {
    let (paths, cut) = resolve::walk(&brain.root, &brain.copy_name());
    let marks: Vec<tree::Mark> = reg
        .all_claims()
        .map(|(c, is_stale)| {
            let (state, paint) = state(c, is_stale, ctx.now);
            let agent = if c.agent.is_empty() {
                String::new()
            } else {
                format!("{}, ", c.agent)
            };
            // A section not written yet shows where it will be.
            let reserved = unwritten
                .iter()
                .any(|(u, why)| *why == Unwritten::Reserved && u == c);
            let label = if reserved {
                format!("{} ({agent}{state}; reserved, not written yet)", c.session)
            } else {
                format!("{} ({agent}{state})", c.session)
            };
            tree::Mark {
                scope: c.scope.clone(),
                label,
                paint,
            }
        })
        .collect();
    let mut s = tree::render(".", &paths, &marks, ctx.screen.colour, ctx.screen.width());
    if cut {
        s.push_str(&format!(
            "(the tree stops at {} entries)\n",
            resolve::WALK_LIMIT
        ));
    }
    let overdue = reg
        .active_claims
        .iter()
        .filter(|c| is_overdue(c, ctx.now))
        .count();
    s.push_str(&counts(reg.active_claims.len(), reg.stale_claims.len()));
    let next = if ctx.verbosity.is_quiet() {
        String::new()
    } else {
        match next_steps(&reg.stale_claims, overdue) {
            n if n.is_empty() => GENERIC_NEXT.to_string(),
            n => n,
        }
    };
    Shown { body: s, next }
}
