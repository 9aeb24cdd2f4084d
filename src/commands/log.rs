//! `bsi log`: the journal of sessions, read from the registry's git history.

use chrono::{DateTime, FixedOffset, TimeZone};
use serde::Serialize;

use super::Ctx;
use crate::cli::LogArgs;
use crate::output;
use bsi_core::error::{Result, exit};
use bsi_core::trailer;

#[derive(Serialize)]
struct Entry {
    commit: String,
    time: String,
    author: String,
    action: Option<String>,
    /// Who acted: the [`trailer::AGENT`] trailer (commits of an older bsi have none).
    agent: Option<String>,
    sessions: Vec<String>,
    /// What the change was about: the summary after the action and session.
    what: String,
    summary: String,
    by_bsi: bool,
    #[serde(skip)]
    trailers: Vec<String>,
}

/// The summary line without `bsi: ACTION` and a single session: the scopes.
fn what_of(summary: &str, action: Option<&str>, sessions: &[String]) -> String {
    let Some(action) = action else {
        return summary.to_string();
    };
    let mut rest = summary
        .strip_prefix("bsi: ")
        .and_then(|r| r.strip_prefix(action))
        .unwrap_or(summary)
        .trim_start();
    if let [one] = sessions {
        rest = rest.strip_prefix(one.as_str()).unwrap_or(rest).trim_start();
    }
    rest.to_string()
}

pub(crate) fn run(ctx: &Ctx, args: &LogArgs) -> Result<u8> {
    let limit = args.limit;
    let out = ctx.out();
    let (brain, settings) = ctx.open()?;
    let remote = settings.remote()?;
    let view = brain.view(remote.as_ref())?;
    let tip = view.tip().ok_or_else(|| brain.missing())?;
    let commits = brain
        .git
        .journal(tip, bsi_core::store::BRANCH_FILE, limit)?;
    let entries: Vec<Entry> = commits
        .iter()
        .map(|c| {
            let trailer::Registry {
                sessions,
                action,
                agent,
            } = trailer::Registry::parse(&c.message);
            let time = FixedOffset::east_opt(c.time.1 * 60)
                .and_then(|o| o.timestamp_opt(c.time.0, 0).single())
                .unwrap_or_else(|| DateTime::UNIX_EPOCH.fixed_offset());
            let summary = c.message.lines().next().unwrap_or("").to_string();
            Entry {
                commit: c.id.to_string(),
                time: output::rfc3339(time),
                author: c.author.clone(),
                by_bsi: action.is_some(),
                agent,
                what: what_of(&summary, action.as_deref(), &sessions),
                action,
                sessions,
                summary,
                trailers: trailer::bsi_lines(&c.message)
                    .into_iter()
                    .map(String::from)
                    .collect(),
            }
        })
        .collect();
    out.json(|| &entries)?;
    // The log is what was asked for: printed with --quiet too.
    out.show(|w| {
        if entries.is_empty() {
            writeln!(w, "No commit has touched the registry yet.")
        } else {
            write!(w, "{}", render(&entries, ctx))
        }
    })?;
    Ok(exit::OK)
}

/// One line per change: time (in the reader's zone), action, agent,
/// session, scopes, fitted to the screen's width (whole in a pipe); with `-v`, the
/// commit, its git author and its trailers below each line.
fn render(entries: &[Entry], ctx: &Ctx) -> String {
    use output::{Cell, Column, Paint, Shrink, Table};
    let zone = output::zone_name(*ctx.now.offset());
    let col = |header: String, shrink, order| Column {
        header,
        shrink,
        order,
    };
    let columns = vec![
        col(format!("TIME ({zone})"), Shrink::Never, 0),
        col("ACTION".into(), Shrink::Never, 0),
        col("AGENT".into(), Shrink::End(8), 1),
        // A session id gives way last, its start and its end kept.
        col("SESSION".into(), Shrink::Middle(12), 3),
        col("SCOPES".into(), Shrink::End(12), 2),
    ];
    // A narrow screen drops the year (a pipe keeps it: nothing is cut there).
    let width = ctx.screen.width();
    let format = if width < 80 {
        "%m-%d %H:%M"
    } else {
        "%Y-%m-%d %H:%M"
    };
    let rows = entries
        .iter()
        .map(|e| {
            let time = DateTime::parse_from_rfc3339(&e.time)
                .map(|t| t.with_timezone(ctx.now.offset()).format(format).to_string())
                .unwrap_or_default();
            let (action, agent) = match &e.action {
                Some(a) => (
                    Cell::new(a.as_str()),
                    Cell::new(e.agent.clone().unwrap_or_else(|| "-".into())),
                ),
                // A commit bsi did not write: who made it, from git.
                None => (
                    Cell::painted("by hand", Some(Paint::Yellow)),
                    Cell::new(e.author.split(" <").next().unwrap_or("")),
                ),
            };
            vec![
                Cell::new(time),
                action,
                agent,
                Cell::new(match e.sessions.as_slice() {
                    [] => String::new(),
                    [one] => one.clone(),
                    many => format!("{} sessions", many.len()),
                }),
                Cell::new(e.what.as_str()),
            ]
        })
        .collect();
    let table = Table { columns, rows }.render(width, ctx.screen.colour);
    if !ctx.verbosity.is_verbose() {
        return table;
    }
    let mut out = String::new();
    let mut lines = table.lines();
    if let Some(h) = lines.next() {
        out.push_str(h);
        out.push('\n');
    }
    for (line, e) in lines.zip(entries) {
        out.push_str(line);
        out.push('\n');
        out.push_str(&format!("    commit {} by {}\n", e.commit, e.author));
        for t in &e.trailers {
            out.push_str(&format!("    {t}\n"));
        }
    }
    out
}
