//! The views the read commands share: the claims table, the counts and
//! next steps, the remote's state and the age of the view. Used by
//! `status`, `status --watch`, `whoami` and `watchdog`; no command of its own.

use bsi_core::api::audit::Unwritten;
use std::io::Write;

use chrono::{DateTime, FixedOffset};
use serde::Serialize;

use super::Ctx;
use crate::output::{self, Paint};
use bsi_core::api::publish::Freshness;
use bsi_core::api::store::Brain;
use bsi_core::registry::Claim;
use bsi_core::ttl;

#[derive(Clone, Serialize)]
pub(crate) struct SyncJson {
    remote: String,
    /// Whether the registry branch was fetched by this command.
    fetched: bool,
    /// Why the remote could not be asked; null when it answered or was not asked.
    unreachable: Option<String>,
    last_sync: Option<String>,
    minutes_since_sync: Option<i64>,
    unpublished: Vec<String>,
    /// The changes of a registry this clone made before its remote existed,
    /// published by this command (said in the text; the JSON's `fetched`
    /// and empty `unpublished` say the remote now holds them).
    #[serde(skip)]
    first_published: Option<usize>,
}

/// Every session's claims, as `status --json`, MCP's `status` and its
/// claims resource give them.
#[derive(Serialize)]
pub(crate) struct StatusJson {
    now: String,
    active: Vec<output::ClaimJson>,
    stale: Vec<output::ClaimJson>,
    collisions: Vec<[output::ClaimJson; 2]>,
    /// Who waits for what (`bsi open --wait`), in order; lapsed places
    /// are not shown.
    queue: Vec<output::WaiterJson>,
    /// The remote's state; null without a remote.
    sync: Option<SyncJson>,
    /// Whether this work tree's commit guard is on, and what is wrong if not.
    guard: crate::hook_managers::GuardState,
    /// Claimed parts changed by commits that are not their holders'.
    drift: Vec<DriftJson>,
    /// Section claims for a heading not written yet (reserved).
    reserved: Vec<String>,
    /// Section claims whose heading was renamed or removed since.
    missing: Vec<String>,
}

/// The scopes of `seen`'s section claims unwritten for `why`.
fn unwritten(seen: &bsi_core::api::views::Status, why: Unwritten) -> Vec<String> {
    seen.unwritten
        .iter()
        .filter(|(_, w)| *w == why)
        .map(|(c, _)| c.scope.to_string())
        .collect()
}

impl StatusJson {
    /// The document of what `status` saw.
    pub(crate) fn new(
        ctx: &Ctx,
        brain: &Brain,
        seen: &bsi_core::api::views::Status,
        sync: Option<SyncJson>,
    ) -> StatusJson {
        let reg = &seen.view.registry;
        StatusJson {
            now: output::rfc3339(ctx.now),
            active: output::ClaimJson::list(reg.active_claims.iter(), false, ctx.now),
            stale: output::ClaimJson::list(reg.stale_claims.iter(), true, ctx.now),
            collisions: output::collisions_json(
                seen.collisions.iter().map(|(a, b)| (a, b)),
                ctx.now,
            ),
            queue: output::WaiterJson::list(&seen.waiting),
            sync,
            guard: crate::hook_managers::guard_state(
                &brain.git,
                crate::githooks::HOOKS,
                ctx.places.path.as_deref(),
            ),
            drift: DriftJson::list(&seen.drift),
            reserved: unwritten(seen, Unwritten::Reserved),
            missing: unwritten(seen, Unwritten::Gone),
        }
    }
}

/// A claimed part changed on the content branch by a commit that is not
/// its holder's, in `status`, `watchdog`, `verify` and `close`.
#[derive(Serialize)]
pub(crate) struct DriftJson {
    /// The holder.
    session: String,
    scope: String,
    /// The commit, in full.
    commit: String,
    /// Who made it: `Name <email>`.
    author: String,
    /// The session its trailer names; null without one.
    by_session: Option<String>,
    path: String,
    start: Option<usize>,
    end: Option<usize>,
    /// `old`: lines of the previous version (removed); null for a file.
    version: Option<&'static str>,
    heading: Option<String>,
}

impl DriftJson {
    pub(crate) fn list(drift: &[bsi_core::drift::Drift]) -> Vec<DriftJson> {
        drift
            .iter()
            .map(|d| DriftJson {
                session: d.claim.session.clone(),
                scope: d.claim.scope.to_string(),
                commit: d.commit.clone(),
                author: d.author.clone(),
                by_session: d.session.clone(),
                path: d.path.clone(),
                start: d.region.as_ref().map(|r| r.start),
                end: d.region.as_ref().map(|r| r.end),
                version: d.region.as_ref().map(|r| match r.side {
                    bsi_core::changes::Side::Old => "old",
                    bsi_core::changes::Side::New => "new",
                }),
                heading: d.region.as_ref().and_then(|r| r.heading.clone()),
            })
            .collect()
    }
}

/// Writes a line per drift to `w`, and says on `out`'s stderr why the
/// drift could not be read when it could not.
pub(crate) fn print_drift(
    w: &mut dyn Write,
    out: &super::Out,
    drift: &[bsi_core::drift::Drift],
    unread: Option<&str>,
) -> std::io::Result<()> {
    for d in drift {
        writeln!(w, "{}", bsi_core::api::audit::drift_line(d))?;
    }
    if let Some(why) = unread {
        let _ = writeln!(
            out.plain_err(),
            "bsi: warning: the claims' drift could not be read: {why}"
        );
    }
    Ok(())
}

/// One session's claims, as `whoami --json` and MCP's `whoami` give them.
#[derive(Serialize)]
pub(crate) struct WhoAmIJson {
    session: String,
    agent: String,
    active: Vec<output::ClaimJson>,
    stale: Vec<output::ClaimJson>,
    /// Its claims another session or a person ended.
    ended_by_others: Vec<EndedByOtherJson>,
}

/// A claim of the session that another ended.
#[derive(Serialize)]
pub(crate) struct EndedByOtherJson {
    scope: String,
    closed: String,
    by: String,
}

impl WhoAmIJson {
    /// The document of what `whoami` saw.
    pub(crate) fn new(
        seen: &bsi_core::api::views::WhoAmI,
        now: DateTime<FixedOffset>,
    ) -> WhoAmIJson {
        WhoAmIJson {
            session: seen.session.clone(),
            agent: seen.agent.clone(),
            active: output::ClaimJson::list(seen.active.iter(), false, now),
            stale: output::ClaimJson::list(seen.stale.iter(), true, now),
            ended_by_others: seen
                .ended_by_others
                .iter()
                .map(|e| EndedByOtherJson {
                    scope: e.scope.clone(),
                    closed: e.closed.clone(),
                    by: e.by_another().unwrap_or_default(),
                })
                .collect(),
        }
    }
}

/// The remote part of a read command's report.
pub(crate) fn sync_state(
    ctx: &Ctx,
    brain: &Brain,
    settings: &bsi_core::api::settings::Settings,
    view: &bsi_core::api::store::View,
    fresh: &Freshness,
) -> Option<SyncJson> {
    let remote = settings.remote().ok().flatten()?;
    let last = brain.last_contact();
    Some(SyncJson {
        remote: remote.label(),
        fetched: matches!(fresh, Freshness::Fetched | Freshness::FirstPublished(_)),
        unreachable: match fresh {
            Freshness::Unreachable(why) => Some(why.clone()),
            _ => None,
        },
        last_sync: last.map(output::rfc3339),
        minutes_since_sync: last.map(|t| (ctx.now - t).num_minutes()),
        first_published: match fresh {
            Freshness::FirstPublished(n) => Some(*n),
            _ => None,
        },
        unpublished: if view.pending {
            brain.pending_changes(view.tips).unwrap_or_default()
        } else {
            Vec::new()
        },
    })
}

/// One line saying how current the view is, when it may not be.
pub(crate) fn age_line(s: &SyncJson) -> Option<String> {
    let age = match s.minutes_since_sync {
        Some(m) => format!(
            "as fetched {} ago",
            ttl::format_duration(chrono::Duration::minutes(m.max(0)))
        ),
        // A clone's registry branch came with the clone, or with a fetch
        // bsi did not make: its age is unknown.
        None => "as this clone last received it (bsi has not fetched it yet)".into(),
    };
    if s.fetched {
        return None;
    }
    Some(match &s.unreachable {
        Some(why) => format!(
            "Remote {} could not be reached ({why}): showing the registry {age}.",
            s.remote
        ),
        None => format!(
            "Remote {} not asked (--offline): showing the registry {age}.",
            s.remote
        ),
    })
}

/// The remote's lines of a read command.
pub(crate) fn print_sync(w: &mut dyn Write, s: &SyncJson) -> std::io::Result<()> {
    if let Some(line) = age_line(s) {
        writeln!(w, "{line}")?;
        if let Some(hint) = s
            .unreachable
            .as_deref()
            .and_then(bsi_core::error::address_hint)
        {
            writeln!(w, "{hint}")?;
        }
    }
    if let Some(n) = s.first_published {
        writeln!(
            w,
            "Published the registry to {} ({n} change(s)): the remote had none, as this clone made the registry before the remote was added. Other clones get it with their next bsi command.",
            s.remote
        )?;
    }
    if !s.unpublished.is_empty() {
        writeln!(
            w,
            "NOT PUBLISHED: {} change(s) not yet on {}; run `bsi sync`:",
            s.unpublished.len(),
            s.remote
        )?;
        for p in &s.unpublished {
            writeln!(w, "  {p}")?;
        }
    }
    Ok(())
}

/// The state of a claim for people: time left, overdue, STALE, and its
/// urgency as a colour: stale or overdue red, 30 minutes or less left
/// yellow, more green.
pub(crate) fn state(
    c: &Claim,
    is_stale: bool,
    now: DateTime<FixedOffset>,
) -> (String, Option<Paint>) {
    if is_stale {
        (
            format!("STALE {}", ttl::claim_time(c.opened, c.expires, now)),
            Some(Paint::Red),
        )
    } else if ttl::stale_reason(c.opened, c.expires, now).is_some() {
        (ttl::claim_time(c.opened, c.expires, now), Some(Paint::Red))
    } else if c.expires - now <= chrono::Duration::minutes(30) {
        (ttl::time_left(c.expires, now), Some(Paint::Yellow))
    } else {
        (ttl::time_left(c.expires, now), Some(Paint::Green))
    }
}

/// Whether an active claim is past its expiry, waiting for the watchdog.
pub(crate) fn is_overdue(c: &Claim, now: DateTime<FixedOffset>) -> bool {
    ttl::stale_reason(c.opened, c.expires, now).is_some()
}

/// The claims' table for people, one block per session (its id on a line
/// of its own, whole, then its scopes indented), stale rows marked,
/// times in the reader's zone, fitted to the screen width.
pub(crate) fn table(active: &[Claim], stale: &[Claim], ctx: &Ctx) -> String {
    use output::{Cell, Column, Paint, Shrink, Table};
    let now = ctx.now;
    let mut sessions: Vec<&str> = Vec::new();
    for c in active.iter().chain(stale) {
        if !sessions.contains(&c.session.as_str()) {
            sessions.push(&c.session);
        }
    }
    let zone = output::zone_name(*now.offset());
    let expires_head = format!("EXPIRES ({zone})");
    let opened_head = format!("OPENED ({zone})");
    let col = |header: &str, shrink, order| Column {
        header: header.to_string(),
        shrink,
        order,
    };
    let mut columns = vec![col("SESSION / SCOPE", Shrink::OwnLine, 0)];
    if ctx.verbosity.is_verbose() {
        columns.push(col("LEVEL", Shrink::Never, 0));
    }
    columns.push(col("AGENT", Shrink::End(8), 1));
    if ctx.verbosity.is_verbose() {
        columns.push(col(&opened_head, Shrink::Never, 0));
    }
    columns.extend([
        col(&expires_head, Shrink::Never, 0),
        col("STATE", Shrink::Never, 0),
        // Left out on a screen too narrow for it (60 columns with a stale
        // claim): whole with -v and in a pipe.
        col("NOTE", Shrink::Drop(6), 2),
    ]);
    let mut rows = Vec::new();
    for s in sessions {
        let claims = active
            .iter()
            .map(|c| (c, false))
            .chain(stale.iter().map(|c| (c, true)))
            .filter(|(c, _)| c.session == s);
        rows.push(vec![Cell::painted(s, Some(Paint::Bold))]);
        for (c, is_stale) in claims {
            // Overdue but not yet stale reads `overdue 30m`, stale
            // `STALE overdue 30m`; the line under the table says to run
            // the watchdog.
            let (state, paint) = state(c, is_stale, now);
            let mut row = vec![Cell::new(format!("  {}", c.scope))];
            if ctx.verbosity.is_verbose() {
                row.push(Cell::new(c.level().to_string()));
            }
            row.push(Cell::new(c.agent.as_str()));
            let local =
                |t: DateTime<FixedOffset>| output::short_time(t.with_timezone(now.offset()), now);
            if ctx.verbosity.is_verbose() {
                row.push(Cell::new(local(c.opened)));
            }
            row.extend([
                Cell::new(local(c.expires)),
                Cell::painted(state, paint),
                Cell::painted(c.note.as_str(), Some(Paint::Dim)),
            ]);
            rows.push(row);
        }
    }
    // With -v nothing is shortened: every note whole.
    let width = if ctx.verbosity.is_verbose() {
        usize::MAX
    } else {
        ctx.screen.width()
    };
    Table { columns, rows }.render(width, ctx.screen.colour)
}

/// A view for people: what it shows, and what to do next (nothing with
/// `--quiet`), kept apart so other findings can go between them.
pub(crate) struct Shown {
    pub(crate) body: String,
    pub(crate) next: String,
}

/// What to do after reading the claims when nothing needs a person.
pub(crate) const GENERIC_NEXT: &str =
    "Next: `bsi open SCOPE` before editing; it must not overlap the claims above.\n";

/// [`render`] without the closing line for a reader about to claim (whoami
/// says its own).
pub(crate) fn render_claims(active: &[Claim], stale: &[Claim], ctx: &Ctx) -> String {
    let v = claims_view(active, stale, ctx);
    v.body + &v.next
}

pub(crate) fn claims_view(active: &[Claim], stale: &[Claim], ctx: &Ctx) -> Shown {
    let quiet = ctx.verbosity.is_quiet();
    if active.is_empty() && stale.is_empty() {
        return Shown {
            body: FREE.to_string(),
            next: if quiet {
                String::new()
            } else {
                "Next: `bsi open SCOPE` before editing.\n".to_string()
            },
        };
    }
    let overdue = active.iter().filter(|c| is_overdue(c, ctx.now)).count();
    let mut body = table(active, stale, ctx);
    body.push_str(&counts(active.len(), stale.len()));
    Shown {
        body,
        next: if quiet {
            String::new()
        } else {
            next_steps(stale, overdue)
        },
    }
}

/// What a view with no claims says.
pub(crate) const FREE: &str = "No claims: the whole brain is free.\n";

/// What a view with no claims says while `waiting` sessions wait in the
/// queue of `bsi open --wait` (listed below it): the brain is not free for
/// a newcomer, whose plain open of a scope they wait for is refused.
pub(crate) fn free_but_queued(waiting: usize) -> String {
    let who = if waiting == 1 {
        "1 session waits".to_string()
    } else {
        format!("{waiting} sessions wait")
    };
    format!("No claims, but {who} in the queue for the scopes below: they come first.\n")
}

/// `3 active, 2 stale`: the same words in status, whoami and watchdog.
pub(crate) fn counts(active: usize, stale: usize) -> String {
    format!("{active} active, {stale} stale\n")
}

pub(crate) fn next_steps(stale: &[Claim], overdue: usize) -> String {
    let mut s = String::new();
    if overdue > 0 {
        s.push_str("Next: run `bsi watchdog` to mark the overdue claims stale.\n");
    }
    let mut sessions: Vec<&str> = stale.iter().map(|c| c.session.as_str()).collect();
    sessions.sort_unstable();
    sessions.dedup();
    match sessions.as_slice() {
        [] => {}
        [one] => s.push_str(&format!(
            "Next: stale claims still block. A person checks that the session is gone, then runs `{}`.\n",
            bsi_core::words::command_line(["bsi", "release", one, "--confirm"])
        )),
        _ => s.push_str("Next: stale claims still block. A person checks that each session is gone, then runs `bsi release SESSION --confirm`.\n"),
    }
    s
}

/// Whether this clone never had bsi's commit guard installed (no `bsi hook
/// install` here): its commits are not checked against the claims. `false`
/// when the hooks' place cannot be read (`bsi doctor` says why).
pub(crate) fn unguarded(git: &bsi_core::api::git::Git) -> bool {
    crate::hook_managers::Layout::read(git)
        .is_ok_and(|l| !crate::hook_managers::installed_in_clone(git, &l, crate::githooks::HOOKS))
}

/// What `status` says in a clone [`unguarded`]: the one command that
/// guards it.
pub(crate) const UNGUARDED: &str = "Next: `bsi hook install` adds the commit guard: until then this clone's commits are not checked against the claims.";
