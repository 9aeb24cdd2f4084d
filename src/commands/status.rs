//! `bsi status`: read only. Active and stale claims with their time left.

use std::io::Write;

use serde::Serialize;

use super::Ctx;
use crate::conflict;
use crate::error::{Result, exit};
use crate::output::{self, ClaimJson};
use crate::registry::Claim;
use crate::remote::Remote;
use crate::resolve;
use crate::ttl;

#[derive(Serialize)]
struct Status {
    now: String,
    active: Vec<ClaimJson>,
    stale: Vec<ClaimJson>,
    collisions: Vec<[ClaimJson; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sync: Option<SyncJson>,
}

#[derive(Serialize)]
struct SyncJson {
    remote: String,
    last_sync: Option<String>,
    minutes_since_sync: Option<i64>,
    unpublished: Vec<String>,
}

pub(crate) fn run(ctx: &Ctx, json: bool) -> Result<u8> {
    let brain = ctx.brain()?;
    let reg = brain.read()?;
    let sections = resolve::sections(&brain.root);
    let collisions = conflict::collisions(&reg, &sections);
    let sync = Remote::configured(&brain.git, ctx.remote.as_deref())
        .ok()
        .flatten()
        .map(|r| {
            let last = brain.last_sync();
            SyncJson {
                remote: r.label(),
                last_sync: last.map(output::rfc3339),
                minutes_since_sync: last.map(|t| (ctx.now - t).num_minutes()),
                unpublished: brain.pending(),
            }
        });
    if json {
        output::print_json(&Status {
            now: output::rfc3339(ctx.now),
            active: reg
                .active_claims
                .iter()
                .map(|c| ClaimJson::new(c, false, ctx.now))
                .collect(),
            stale: reg
                .stale_claims
                .iter()
                .map(|c| ClaimJson::new(c, true, ctx.now))
                .collect(),
            collisions: collisions
                .iter()
                .map(|(a, b)| {
                    [
                        ClaimJson::new(a, false, ctx.now),
                        ClaimJson::new(b, false, ctx.now),
                    ]
                })
                .collect(),
            sync,
        });
        return Ok(exit::OK);
    }
    let mut out = std::io::stdout().lock();
    let _ = write!(
        out,
        "{}",
        render(&reg.active_claims, &reg.stale_claims, ctx)
    );
    for (a, b) in &collisions {
        let _ = writeln!(
            out,
            "COLLISION: {} {} overlaps {} {}",
            a.session, a.scope, b.session, b.scope
        );
    }
    if let Some(s) = &sync {
        let age = match s.minutes_since_sync {
            Some(m) => format!(
                "last sync {} ago",
                ttl::format_duration(chrono::Duration::minutes(m.max(0)))
            ),
            None => "never synced".into(),
        };
        let _ = writeln!(out, "Remote {} — {age}", s.remote);
        if !s.unpublished.is_empty() {
            let _ = writeln!(
                out,
                "NOT PUBLISHED: {} change(s) recorded while the remote was unreachable; run `bsi sync`:",
                s.unpublished.len()
            );
            for p in &s.unpublished {
                let _ = writeln!(out, "  {p}");
            }
        }
    }
    Ok(exit::OK)
}

/// The human table: one block per session, stale rows marked.
fn render(active: &[Claim], stale: &[Claim], ctx: &Ctx) -> String {
    let now = ctx.now;
    if active.is_empty() && stale.is_empty() {
        return "No claims: the whole brain is free.\n".into();
    }
    let mut sessions: Vec<&str> = Vec::new();
    for c in active.iter().chain(stale) {
        if !sessions.contains(&c.session.as_str()) {
            sessions.push(&c.session);
        }
    }
    let mut rows = vec![vec![
        "SESSION".to_string(),
        "SCOPE".into(),
        "LEVEL".into(),
        "AGENT".into(),
        "EXPIRES".into(),
        "STATE".into(),
    ]];
    for s in sessions {
        let claims = active
            .iter()
            .map(|c| (c, false))
            .chain(stale.iter().map(|c| (c, true)))
            .filter(|(c, _)| c.session == s);
        for (c, is_stale) in claims {
            let state = if is_stale {
                format!("STALE {}", ttl::time_left(c.expires, now))
            } else if ttl::stale_reason(c.opened, c.expires, now).is_some() {
                format!("{} (run bsi watchdog)", ttl::time_left(c.expires, now))
            } else {
                ttl::time_left(c.expires, now)
            };
            rows.push(vec![
                c.session.clone(),
                c.scope.to_string(),
                c.level().to_string(),
                c.agent.clone(),
                output::short_time(c.expires, now),
                state,
            ]);
        }
    }
    let mut s = output::table(&rows);
    s.push_str(&format!("{} active, {} stale\n", active.len(), stale.len()));
    s
}
