//! `bsi log`: the journal of sessions, read from the registry's git history.

use std::io::Write;

use chrono::{DateTime, FixedOffset, TimeZone};
use serde::Serialize;

use super::Ctx;
use crate::error::{Result, exit};
use crate::output;

#[derive(Serialize)]
struct Entry {
    commit: String,
    time: String,
    author: String,
    action: Option<String>,
    sessions: Vec<String>,
    summary: String,
    by_bsi: bool,
}

fn trailers<'a>(message: &'a str, key: &str) -> Vec<&'a str> {
    message
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(key).then(|| v.trim())
        })
        .collect()
}

pub(crate) fn run(ctx: &Ctx, limit: Option<usize>, json: bool) -> Result<u8> {
    let (brain, settings) = ctx.open()?;
    let remote = settings.remote(&brain.git)?;
    let view = brain.view(remote.as_ref())?;
    let tip = view.tip().ok_or_else(|| brain.missing())?;
    let commits = brain.git.journal(tip, crate::store::BRANCH_FILE, limit)?;
    let entries: Vec<Entry> = commits
        .iter()
        .map(|c| {
            let action = trailers(&c.message, "BSI-Action")
                .first()
                .map(|s| s.to_string());
            let time = FixedOffset::east_opt(c.time.1 * 60)
                .and_then(|o| o.timestamp_opt(c.time.0, 0).single())
                .unwrap_or_else(|| DateTime::UNIX_EPOCH.fixed_offset());
            Entry {
                commit: c.id.to_string(),
                time: output::rfc3339(time),
                author: c.author.clone(),
                by_bsi: action.is_some(),
                action,
                sessions: trailers(&c.message, "BSI-Session")
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                summary: c.message.lines().next().unwrap_or("").to_string(),
            }
        })
        .collect();
    if json {
        output::print_json(&entries);
        return Ok(exit::OK);
    }
    let mut out = ctx.out();
    if entries.is_empty() {
        let _ = writeln!(out, "No commit has touched the registry yet.");
    }
    for e in &entries {
        let mark = if e.by_bsi {
            ""
        } else {
            "  (not written by bsi)"
        };
        let _ = writeln!(
            out,
            "{}  {}  {}  {}{mark}",
            &e.commit[..8],
            &e.time[..16].replace('T', " "),
            e.summary,
            e.author
        );
    }
    Ok(exit::OK)
}
