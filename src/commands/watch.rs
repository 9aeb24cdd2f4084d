//! `bsi status --watch`: the claims as a live view in the terminal. Redrawn
//! as soon as the registry branch moves in this clone, and after each
//! fetch from the remote (every few seconds), with the age of the view;
//! what changed since the last view is said and highlighted; collisions and
//! stale claims come first; a resized terminal is redrawn at its new
//! width. `q` or Ctrl-C ends it.

use std::collections::BTreeSet;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use chrono::{DateTime, FixedOffset};

use super::Ctx;
use super::views::{counts, table};
use crate::cli::StatusArgs;
use crate::output::{self, Paint};
use bsi_core::api::publish::{self, Freshness};
use bsi_core::conflict;
use bsi_core::error::{Result, exit};
use bsi_core::registry::Registry;

/// How often the remote is asked.
const FETCH_EVERY: Duration = Duration::from_secs(3);

/// How often the clone's own references are looked at (a local change
/// shows within this), and the age line kept current.
const TICK: Duration = Duration::from_millis(200);

/// A claim as the view compares it between two frames.
type Key = (String, String, bool);

pub(crate) fn run(ctx: &Ctx, args: &StatusArgs) -> Result<u8> {
    let offline = args.offline;
    let (brain, settings) = ctx.open()?;
    let remote = settings.remote()?;
    let _keys_mode = crate::terminal::KeysMode::enter();
    let keys = crate::terminal::keys();
    let start = Instant::now();
    let now = || {
        ctx.now
            + chrono::Duration::from_std(start.elapsed())
                .unwrap_or_else(|_| chrono::Duration::zero())
    };
    let mut fetched: Option<(Instant, DateTime<FixedOffset>)> = None;
    let mut fresh = Freshness::Local;
    let mut last_tips = None;
    let mut shown: Option<BTreeSet<Key>> = None;
    let mut changes: Vec<String> = Vec::new();
    let mut changed_at: Option<DateTime<FixedOffset>> = None;
    let mut drawn_at: Option<Instant> = None;
    let mut keys_open = true;
    // The terminal's size, looked at every tick: a resize (SIGWINCH) is
    // redrawn at the new width within a tick, with no signal handler.
    let mut terminal = crate::terminal::terminal_width();
    let mut width = ctx.screen.width;
    loop {
        let resized = crate::terminal::terminal_width();
        let redraw = resized != terminal;
        if let Some(w) = resized.filter(|_| redraw) {
            width = w;
        }
        terminal = resized;
        let due = remote.is_some()
            && !offline
            && fetched.is_none_or(|(at, _)| at.elapsed() >= FETCH_EVERY);
        let reg = if due {
            let (view, f) = publish::read(&brain, &settings, now(), false)?;
            if !matches!(f, Freshness::Unreachable(_)) {
                fetched = Some((Instant::now(), now()));
            }
            fresh = f;
            view.registry
        } else {
            brain.view(remote.as_ref())?.registry
        };
        let tips = brain.tips(remote.as_ref());
        let keys_now = claim_keys(&reg);
        if let Some(before) = &shown
            && *before != keys_now
        {
            changes = describe_changes(before, &keys_now);
            changed_at = Some(now());
        }
        let moved = last_tips != Some(tips) || shown.as_ref() != Some(&keys_now);
        if moved || redraw || drawn_at.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            let mut c = ctx.clone();
            c.now = now();
            c.screen.width = width;
            let frame = frame(
                &c,
                &reg,
                &brain,
                &fresh,
                fetched.map(|f| f.1),
                &changes,
                changed_at,
                remote.as_ref(),
            );
            ctx.out().raw(format!("\x1b[H\x1b[2J{frame}").as_bytes())?;
            drawn_at = Some(Instant::now());
        }
        last_tips = Some(tips);
        shown = Some(keys_now);
        if keys_open {
            match keys.recv_timeout(TICK) {
                // q, Q, Ctrl-C, Ctrl-D.
                Ok(b'q' | b'Q' | 3 | 4) => break,
                Ok(_) | Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => keys_open = false,
            }
        } else {
            std::thread::sleep(TICK);
        }
    }
    ctx.out().raw(b"\n")?;
    Ok(exit::OK)
}

/// Every claim of the registry: session, scope, and whether it is stale.
fn claim_keys(reg: &Registry) -> BTreeSet<Key> {
    reg.all_claims()
        .map(|(c, stale)| (c.session.clone(), c.scope.to_string(), stale))
        .collect()
}

/// What changed between two views, one phrase per claim.
fn describe_changes(before: &BTreeSet<Key>, after: &BTreeSet<Key>) -> Vec<String> {
    let mut out = Vec::new();
    for (session, scope, stale) in after.difference(before) {
        let was_active = before.contains(&(session.clone(), scope.clone(), false));
        out.push(if *stale && was_active {
            format!("! {session} {scope} is now STALE")
        } else if *stale {
            format!("+ {session} {scope} (stale)")
        } else {
            format!("+ {session} {scope} opened")
        });
    }
    for (session, scope, stale) in before.difference(after) {
        if *stale || !after.contains(&(session.clone(), scope.clone(), true)) {
            out.push(format!("- {session} {scope} ended"));
        }
    }
    out
}

/// One screen of the view.
#[allow(clippy::too_many_arguments)]
fn frame(
    ctx: &Ctx,
    reg: &Registry,
    brain: &bsi_core::api::store::Brain,
    fresh: &Freshness,
    fetched: Option<DateTime<FixedOffset>>,
    changes: &[String],
    changed_at: Option<DateTime<FixedOffset>>,
    remote: Option<&bsi_core::api::git_cli::Remote>,
) -> String {
    let colour = ctx.screen.colour;
    let now = ctx.now;
    let clock = now.format("%H:%M:%S");
    let age = match (remote, fetched, fresh) {
        (None, _, _) => "this clone has no remote".to_string(),
        (Some(r), _, Freshness::Unreachable(why)) => format!(
            "{} could not be reached ({why}); showing the registry as last fetched{}",
            r.label(),
            fetched
                .map(|t| format!(" {} ago", seconds(now - t)))
                .unwrap_or_default()
        ),
        (Some(r), Some(t), _) => format!("fetched from {} {} ago", r.label(), seconds(now - t)),
        (Some(r), None, _) => format!("{} not asked (--offline)", r.label()),
    };
    let head = format!(
        "bsi status --watch · {clock} {}",
        output::zone_name(*now.offset())
    );
    // The age beside the clock, or under it on a narrow screen.
    let sep = if head.chars().count() + 3 + age.chars().count() > ctx.screen.width {
        "\n"
    } else {
        " · "
    };
    let mut s = output::paint(colour, Paint::Bold, &format!("{head}{sep}{age}"));
    s.push_str("\nq or Ctrl-C quits\n\n");
    if let Some(at) = changed_at {
        s.push_str(&output::paint(
            colour,
            Paint::Yellow,
            &format!(
                "Changed at {}: {}",
                at.format("%H:%M:%S"),
                changes.join("; ")
            ),
        ));
        s.push_str("\n\n");
    }
    // What needs a person first: collisions, then stale claims.
    let sections = brain.sections();
    for (a, b) in conflict::collisions(reg, &sections) {
        s.push_str(&output::paint(
            colour,
            Paint::Red,
            &bsi_core::words::collision_line(a, b),
        ));
        s.push('\n');
    }
    let added: Vec<&str> = changes
        .iter()
        .filter_map(|c| c.strip_prefix("+ ").or_else(|| c.strip_prefix("! ")))
        .filter_map(|c| c.split(' ').nth(1))
        .collect();
    let mark = |text: String| -> String {
        if !colour || added.is_empty() {
            return text;
        }
        text.lines()
            .map(|l| {
                let scope = l.trim_start().split("  ").next().unwrap_or("");
                if l.starts_with("  ") && added.contains(&scope) {
                    format!("\x1b[7m{l}\x1b[0m\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect()
    };
    if !reg.stale_claims.is_empty() {
        s.push_str("Stale, still blocking (a person releases them):\n");
        s.push_str(&mark(table(&[], &reg.stale_claims, ctx)));
        s.push('\n');
    }
    if reg.active_claims.is_empty() && reg.stale_claims.is_empty() {
        s.push_str("No claims: the whole brain is free.\n");
    } else if !reg.active_claims.is_empty() {
        s.push_str(&mark(table(&reg.active_claims, &[], ctx)));
    }
    s.push_str(&counts(reg.active_claims.len(), reg.stale_claims.len()));
    s
}

/// `4s`, `2m05s`: the age of a view.
fn seconds(d: chrono::Duration) -> String {
    let s = d.num_seconds().max(0);
    if s < 60 {
        format!("{s}s")
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}
