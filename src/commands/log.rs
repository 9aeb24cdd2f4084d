//! `bsi log`: the journal of sessions, read from the registry's git history.

use chrono::DateTime;
use serde::Serialize;

use super::Ctx;
use crate::cli::LogArgs;
use crate::output;
use bsi_core::api;
use bsi_core::error::{Result, exit};
use bsi_core::trailer;

/// One write: a commit of one write is one entry, a commit several
/// writers shared (`bsi: N writes: …`) one entry per write, each naming
/// the commit that carried it.
#[derive(Serialize)]
struct Entry {
    commit: String,
    time: String,
    author: String,
    action: Option<String>,
    /// Who acted: the [`trailer::AGENT`] trailer (commits of an older bsi have none).
    agent: Option<String>,
    sessions: Vec<String>,
    /// The scopes the write is about, whole ([`trailer::SCOPE`]; empty on
    /// commits of an older bsi, whose `what` names them).
    scopes: Vec<String>,
    /// What the change was about: its scopes, whole, else its summary
    /// after the action and session.
    what: String,
    /// The write's own summary line.
    summary: String,
    by_bsi: bool,
    #[serde(skip)]
    trailers: Vec<String>,
}

pub(crate) fn run(ctx: &Ctx, args: &LogArgs) -> Result<u8> {
    let limit = args.limit;
    let out = ctx.out();
    let (brain, settings) = ctx.open()?;
    let remote = settings.remote()?;
    let view = brain.view(remote.as_ref())?;
    let entries: Vec<Entry> = api::views::journal(&brain, &view, limit)?
        .into_iter()
        .map(|w| {
            let what = w.write.what();
            let trailer::Write {
                trailers,
                request,
                summary,
            } = w.write;
            let mut lines: Vec<String> = trailers.render().lines().map(String::from).collect();
            if let Some(r) = &request {
                lines.push(format!("{}: {r}", trailer::REQUEST));
            }
            Entry {
                commit: w.commit,
                time: output::rfc3339(w.time),
                author: w.author,
                by_bsi: trailers.action.is_some(),
                agent: trailers.agent,
                action: trailers.action,
                sessions: trailers.sessions,
                scopes: trailers.scopes,
                what,
                summary,
                trailers: lines,
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

/// One row per write: time (in the reader's zone), action, agent,
/// session, scopes, fitted to the screen's width by wrapping, never by
/// cutting (whole on one line in a pipe); with `-v`, the commit, its git
/// author and the write's trailers below each row.
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
        // Nothing is cut: a narrow screen wraps a row onto more lines,
        // between scopes first; a session id gives way last.
        col("AGENT".into(), Shrink::Wrap(8), 2),
        col("SESSION".into(), Shrink::WrapId(10), 3),
        col("SCOPES".into(), Shrink::Wrap(14), 1),
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
                // Every session it names (a watchdog's, a close that
                // handed scopes to waiters).
                Cell::new(e.sessions.join(" ")),
                Cell::new(e.what.as_str()),
            ]
        })
        .collect();
    let blocks = Table { columns, rows }.render_rows(width, ctx.screen.colour);
    if !ctx.verbosity.is_verbose() {
        return blocks.concat();
    }
    let mut out = String::new();
    let mut blocks = blocks.into_iter();
    if let Some(h) = blocks.next() {
        out.push_str(&h);
    }
    for (block, e) in blocks.zip(entries) {
        out.push_str(&block);
        out.push_str(&format!("    commit {} by {}\n", e.commit, e.author));
        for t in &e.trailers {
            out.push_str(&format!("    {t}\n"));
        }
    }
    out
}
