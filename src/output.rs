//! What bsi prints: the JSON shapes (a contract for scripts) and the helpers
//! of the human printer.

use std::io::Write;

use chrono::{DateTime, FixedOffset, SecondsFormat};
use serde::Serialize;

use bsi_core::api::commit::Committed;
use bsi_core::api::keep::{Left as KeptLeft, Part as KeptPart, Recovered};
use bsi_core::api::publish::{Landed, Landing};
use bsi_core::registry::Claim;
use bsi_core::scope::Level;
use bsi_core::ttl;
use bsi_core::words::{Here, command_line};

/// A claim as shown by `status --json`, in refusals and in confirmations.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimJson {
    /// Session id.
    pub session: String,
    /// Scope as stored.
    pub scope: String,
    /// `global`, `dir`, `file` or `section`.
    pub level: Level,
    /// Holder.
    pub agent: String,
    /// RFC 3339.
    pub opened: String,
    /// RFC 3339.
    pub expires: String,
    /// Free text.
    pub note: String,
    /// Whether it sits in the stale table.
    pub stale: bool,
    /// Why it is stale; null for an active claim.
    pub reason: Option<String>,
    /// Minutes until expiry at the time of the command (negative: overdue).
    pub minutes_left: i64,
}

impl ClaimJson {
    /// Claims that are all active or all stale.
    pub fn list<'a>(
        claims: impl IntoIterator<Item = &'a Claim>,
        stale: bool,
        now: DateTime<FixedOffset>,
    ) -> Vec<ClaimJson> {
        claims
            .into_iter()
            .map(|c| ClaimJson::new(c, stale, now))
            .collect()
    }
}

/// RFC 3339 to the second.
pub fn rfc3339(t: DateTime<FixedOffset>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

impl ClaimJson {
    /// From a registry claim.
    pub fn new(c: &Claim, stale: bool, now: DateTime<FixedOffset>) -> ClaimJson {
        ClaimJson {
            session: c.session.clone(),
            scope: c.scope.to_string(),
            level: c.level(),
            agent: c.agent.clone(),
            opened: rfc3339(c.opened),
            expires: rfc3339(c.expires),
            note: c.note.clone(),
            stale,
            reason: if stale { c.reason.clone() } else { None },
            minutes_left: (c.expires - now).num_minutes(),
        }
    }
}

/// A waiter's request, as `status --json` and refusals show the queue.
#[derive(Debug, Clone, Serialize)]
pub struct WaiterJson {
    /// 1-based place in the whole queue.
    pub place: usize,
    /// Session id.
    pub session: String,
    /// Who waits.
    pub agent: String,
    /// What it waits for, all or none.
    pub scopes: Vec<String>,
    /// RFC 3339, to the millisecond: the queue's order.
    pub since: String,
    /// RFC 3339, to the millisecond: the place lapses then unless renewed.
    pub lease: String,
    /// Where `lease` was read: `row` (the registry's) or `record` (the
    /// later one its waiter's clone published on its own reference).
    pub lease_from: &'static str,
}

impl WaiterJson {
    /// The live requests, in order.
    pub fn list(requests: &[bsi_core::registry::Request]) -> Vec<WaiterJson> {
        requests
            .iter()
            .enumerate()
            .map(|(i, r)| WaiterJson {
                place: i + 1,
                session: r.session.clone(),
                agent: r.agent.clone(),
                scopes: r.scopes.iter().map(ToString::to_string).collect(),
                since: bsi_core::registry::render::format_queue_ts(r.since),
                lease: bsi_core::registry::render::format_queue_ts(r.lease),
                lease_from: if r.lease_from_record { "record" } else { "row" },
            })
            .collect()
    }
}

/// A request's place in the queue, in a refusal of `open --json`.
#[derive(Debug, Clone, Serialize)]
pub struct PlaceJson {
    /// 1-based: the requests ahead, plus one.
    pub place: usize,
    /// Whether the session holds a place (`--wait`).
    pub queued: bool,
    /// The requests ahead that overlap it, in order (their `place` counts
    /// among these).
    pub ahead: Vec<WaiterJson>,
}

impl PlaceJson {
    /// From a plan's place.
    pub fn new(place: usize, queued: bool, ahead: &[bsi_core::registry::Request]) -> PlaceJson {
        PlaceJson {
            place,
            queued,
            ahead: WaiterJson::list(ahead),
        }
    }
}

/// A granted claim request, as `open --json` and MCP's `claim` give it.
#[derive(Debug, Clone, Serialize)]
pub struct OpenedJson {
    /// The session the claims are in.
    pub session: String,
    /// The claims opened now.
    pub opened: Vec<ClaimJson>,
    /// The scopes the session held already.
    pub already_held: Vec<ClaimJson>,
    /// The registry commit; null when nothing was written.
    pub commit: Option<String>,
}

impl OpenedJson {
    /// The claims opened and those held already (with whether each is stale).
    pub fn new(
        session: &str,
        opened: &[Claim],
        held: &[(Claim, bool)],
        commit: Option<String>,
        now: DateTime<FixedOffset>,
    ) -> OpenedJson {
        OpenedJson {
            session: session.to_string(),
            opened: ClaimJson::list(opened, false, now),
            already_held: held
                .iter()
                .map(|(c, st)| ClaimJson::new(c, *st, now))
                .collect(),
            commit,
        }
    }
}

/// A refused claim request, as `open --json` and MCP's `claim` give it.
#[derive(Debug, Clone, Serialize)]
pub struct RefusedJson {
    /// `conflict`.
    pub error: &'static str,
    /// What happened.
    pub message: String,
    /// The ways out, in the words of the door that answers.
    pub hint: String,
    /// The ways out as data: each step, its arguments and who may take it
    /// (the same at every door).
    pub next: serde_json::Value,
    /// The exit code of `open`.
    pub exit: u8,
    /// The session that asked.
    pub session: String,
    /// Each scope asked with the claim in its way.
    pub conflicts: Vec<ConflictJson>,
    /// Free scopes nearby.
    pub alternatives: Vec<String>,
    /// The scopes of the request nobody else holds.
    pub free_in_request: Vec<String>,
    /// The waiters ahead in the queue; null when nobody waits ahead.
    pub queue: Option<PlaceJson>,
}

/// A claim in the way of a requested scope.
#[derive(Debug, Clone, Serialize)]
pub struct ConflictJson {
    /// The scope asked.
    pub requested: String,
    /// The claim in its way.
    #[serde(flatten)]
    pub claim: ClaimJson,
}

/// Claims closed, as `close --json` and MCP's `close` give them.
#[derive(Debug, Clone, Serialize)]
pub struct ClosedJson {
    /// The session.
    pub session: String,
    /// The claims closed.
    pub closed: Vec<ClaimJson>,
    /// Their status in the history (`completed`).
    pub status: &'static str,
    /// What `bsi verify` said: `clean`, `overflow: …` or `not verified`.
    pub verify: String,
    /// Who closed another session's claims with `--force`; null otherwise.
    pub forced_by: Option<String>,
    /// The registry commit; null when nothing was written.
    pub commit: Option<String>,
}

/// Claims renewed, as `renew --json` and MCP's `renew` give them.
#[derive(Debug, Clone, Serialize)]
pub struct RenewedJson {
    /// The session.
    pub session: String,
    /// The claims extended.
    pub renewed: Vec<ClaimJson>,
    /// The claims left as they were.
    pub unchanged: Vec<ClaimJson>,
    /// The registry commit; null when nothing needed extending.
    pub commit: Option<String>,
}

/// An error, as JSON on stdout for a command run with `--json` (the same
/// words go to stderr as text).
#[derive(Debug, Clone, Serialize)]
pub struct ErrorJson {
    /// A short name of the kind of error (`usage`, `refused`, `not-found`…).
    pub error: &'static str,
    /// What happened.
    pub message: String,
    /// What to do next, in the words of the door that answers.
    pub hint: Option<String>,
    /// What to do next as data: each step with `who` may take it, its
    /// `purpose` and its `command` (its words, or null).
    pub next: serde_json::Value,
    /// The exit code.
    pub exit: u8,
}

impl ErrorJson {
    /// From a library error.
    pub fn of(e: &crate::Error) -> ErrorJson {
        ErrorJson::at(e, &Here::root())
    }

    /// From a library error of a run in `here`: the hint's commands
    /// written for it.
    pub fn at(e: &crate::Error, here: &Here) -> ErrorJson {
        let hint = crate::hints::hint_at(e, here);
        ErrorJson::hinted(e, crate::steps::hint_line(&hint), &hint)
    }

    /// From a library error, with its hint as `hint` and in the words a
    /// door gives it (`said`).
    pub fn hinted(e: &crate::Error, said: String, hint: &crate::hints::Hint) -> ErrorJson {
        ErrorJson {
            error: e.kind(),
            message: e.to_string(),
            hint: Some(said),
            next: crate::steps::hint_json(hint),
            exit: e.code(),
        }
    }
}

/// Writes one JSON document to `out` as every `--json` run prints it:
/// indented, with a newline after it. Where it goes is the caller's
/// choice (the command line's output channel: stdout).
pub fn write_json<T: Serialize>(out: &mut dyn Write, value: &T) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)
}

/// Pads `s` with spaces to `width` characters.
pub fn pad(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n >= width {
        s.to_string()
    } else {
        format!("{s}{}", " ".repeat(width - n))
    }
}

/// Renders rows as columns separated by two spaces, the last one unpadded.
pub fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            if i + 1 == r.len() {
                line.push_str(c);
            } else {
                line.push_str(&pad(c, widths[i]));
                line.push_str("  ");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

pub use bsi_core::ttl::{local_ts, local_zone_ts};

/// `09:30` when the day is today, `03-10 09:30` in this year, else
/// `2025-12-31 09:30`.
pub fn short_time(t: DateTime<FixedOffset>, now: DateTime<FixedOffset>) -> String {
    use chrono::Datelike;
    let today = now.with_timezone(t.offset()).date_naive();
    if t.date_naive() == today {
        t.format("%H:%M").to_string()
    } else if t.year() == today.year() {
        t.format("%m-%d %H:%M").to_string()
    } else {
        t.format("%Y-%m-%d %H:%M").to_string()
    }
}

/// A one-line description of a claim, for messages.
pub fn describe(c: &Claim, stale: bool, now: DateTime<FixedOffset>) -> String {
    let agent = if c.agent.is_empty() {
        String::new()
    } else {
        format!(", agent {}", c.agent)
    };
    let state = if stale {
        format!(
            "STALE since {} (a person must release it)",
            local_ts(ttl::end(c.opened, c.expires), now)
        )
    } else {
        format!(
            "expires {} ({})",
            local_ts(c.expires, now),
            ttl::claim_time(c.opened, c.expires, now)
        )
    };
    format!(
        "{} holds {} [{}]{agent}, {state}",
        c.session,
        c.scope,
        c.level()
    )
}

/// An ANSI style for the human printer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    /// Headers.
    Bold,
    /// Stale claims.
    Red,
    /// Claims past their expiry that the watchdog has not moved yet.
    Yellow,
    /// Free parts, confirmations.
    Green,
    /// Secondary text.
    Dim,
    /// No colour.
    Plain,
}

/// Whether to colour: only on a terminal, never when `NO_COLOR` is set to a
/// non-empty value (<https://no-color.org>) or `TERM` is `dumb`.
pub fn colour_wanted(is_terminal: bool, no_color: Option<&str>, term: Option<&str>) -> bool {
    is_terminal && no_color.is_none_or(str::is_empty) && term != Some("dumb")
}

/// [`colour_wanted`], or forced by `CLICOLOR_FORCE` set to anything but `0`
/// (for a pager that shows colours, `less -R`); `NO_COLOR` still wins.
pub fn colour_wanted_or_forced(
    is_terminal: bool,
    no_color: Option<&str>,
    term: Option<&str>,
    force: Option<&str>,
) -> bool {
    let forced = force.is_some_and(|f| !f.is_empty() && f != "0");
    if forced {
        no_color.is_none_or(str::is_empty)
    } else {
        colour_wanted(is_terminal, no_color, term)
    }
}

/// `s` wrapped in the ANSI codes of `p` when `on`.
pub fn paint(on: bool, p: Paint, s: &str) -> String {
    if !on || s.is_empty() || p == Paint::Plain {
        return s.to_string();
    }
    let code = match p {
        Paint::Plain => "0",
        Paint::Bold => "1",
        Paint::Red => "31",
        Paint::Yellow => "33",
        Paint::Green => "32",
        Paint::Dim => "2",
    };
    format!("\x1b[{code}m{s}\x1b[0m")
}

/// One cell of a [`Table`]: its text and its colour on a terminal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cell {
    /// The text.
    pub text: String,
    /// Its colour.
    pub paint: Option<Paint>,
}

impl Cell {
    /// A plain cell.
    pub fn new(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            paint: None,
        }
    }

    /// A painted cell.
    pub fn painted(text: impl Into<String>, paint: Option<Paint>) -> Cell {
        Cell {
            text: text.into(),
            paint,
        }
    }
}

/// How a column gives way when a table is wider than the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shrink {
    /// Never shortened (scopes, times, states).
    Never,
    /// Cut at the end with `…`, down to this many characters.
    End(usize),
    /// Cut in the middle with `…` (the start and the end of an id stay), down
    /// to this many characters; only once every other column is down to its
    /// least width.
    Middle(usize),
    /// Cut at the end with `…`, down to this many characters; left out when
    /// the table is still too wide with every column at its least width.
    Drop(usize),
    /// Never shortened; a cell wider than half the screen, or too wide to
    /// leave the other columns their least width, takes a line of its own
    /// above the rest of its row, and does not widen the column.
    OwnLine,
    /// Never cut: wrapped onto more lines of its row, down to this many
    /// characters, at spaces, else after a `/`, `#` or `@`, else after a
    /// `-` or `.`, else anywhere.
    Wrap(usize),
    /// [`Shrink::Wrap`] for an id: it gives way only once every other
    /// column is down to its least width.
    WrapId(usize),
}

/// A column: its header and how it shrinks. Columns shrink in the order of
/// `order` (lowest first) until the table fits.
#[derive(Debug, Clone)]
pub struct Column {
    /// The header.
    pub header: String,
    /// How it shrinks.
    pub shrink: Shrink,
    /// When it shrinks, among the shrinkable columns.
    pub order: u8,
}

/// A table for people: columns separated by two spaces, fitted to a width,
/// cells painted one by one (the padding stays unpainted, so alignment
/// holds with colours on). A row of one cell in a table of several columns
/// is a title line (a session above its claims): written whole, never
/// shortened, and not counted in the widths.
#[derive(Debug, Clone)]
pub struct Table {
    /// The columns.
    pub columns: Vec<Column>,
    /// The rows, one cell per column.
    pub rows: Vec<Vec<Cell>>,
}

/// `s` cut to `width` characters, with `…` where text was taken out.
pub fn shorten(s: &str, width: usize, how: Shrink) -> String {
    let n = s.chars().count();
    if n <= width || width == 0 {
        return if width == 0 {
            String::new()
        } else {
            s.to_string()
        };
    }
    let chars: Vec<char> = s.chars().collect();
    match how {
        Shrink::Never | Shrink::OwnLine | Shrink::Wrap(_) | Shrink::WrapId(_) => s.to_string(),
        Shrink::End(_) | Shrink::Drop(_) => chars[..width - 1].iter().collect::<String>() + "…",
        Shrink::Middle(_) => {
            let keep = width - 1;
            let tail = keep / 2;
            let head = keep - tail;
            let mut out: String = chars[..head].iter().collect();
            out.push('…');
            out.extend(&chars[n - tail..]);
            out
        }
    }
}

impl Table {
    /// The column widths that fit `width` characters, shrinking the
    /// shrinkable columns in their order; a table whose fixed columns alone
    /// are too wide stays too wide.
    pub fn widths(&self, width: usize) -> Vec<usize> {
        let caps = self.caps(width);
        self.widths_within(width, &caps)
    }

    /// The natural width of each column: its widest cell or its header
    /// (for ids that wrap, [`Shrink::WrapId`], the widest id: several in a
    /// cell take a line each).
    fn natural(&self, caps: &[usize]) -> Vec<usize> {
        (0..self.columns.len())
            .map(|i| {
                let ids = matches!(self.columns[i].shrink, Shrink::WrapId(_));
                self.rows
                    .iter()
                    .filter(|r| !self.is_title(r))
                    .filter_map(|r| r.get(i))
                    .map(|c| {
                        if ids {
                            c.text
                                .split(' ')
                                .map(|w| w.chars().count())
                                .max()
                                .unwrap_or(0)
                        } else {
                            c.text.chars().count()
                        }
                    })
                    .filter(|&n| n <= caps[i])
                    .chain(std::iter::once(self.columns[i].header.chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// The widest cell each column holds on its row ([`Shrink::OwnLine`]:
    /// half the screen at most, and what leaves the other columns their
    /// least width; any other column: no limit).
    fn caps(&self, width: usize) -> Vec<usize> {
        let n = self.columns.len();
        let natural = self.natural(&vec![usize::MAX; n]);
        (0..n)
            .map(|i| {
                if self.columns[i].shrink != Shrink::OwnLine {
                    return usize::MAX;
                }
                let shown: Vec<usize> = (0..n)
                    .filter(|&j| j != i && natural[j] > 0 && !self.is_empty_column(j))
                    .collect();
                let others: usize = shown
                    .iter()
                    .map(|&j| match self.columns[j].shrink {
                        Shrink::End(m)
                        | Shrink::Middle(m)
                        | Shrink::Drop(m)
                        | Shrink::Wrap(m)
                        | Shrink::WrapId(m) => {
                            natural[j].min(m.max(self.columns[j].header.chars().count()))
                        }
                        Shrink::Never | Shrink::OwnLine => natural[j],
                    })
                    .sum::<usize>()
                    + 2 * shown.len();
                width
                    .saturating_sub(others)
                    .min(width / 2)
                    .max(self.columns[i].header.chars().count())
            })
            .collect()
    }

    /// Whether no row has text in column `i` (the first column always shows).
    fn is_empty_column(&self, i: usize) -> bool {
        i > 0
            && self
                .rows
                .iter()
                .all(|r| r.get(i).is_none_or(|c| c.text.is_empty()))
    }

    fn widths_within(&self, width: usize, caps: &[usize]) -> Vec<usize> {
        let n = self.columns.len();
        let mut w: Vec<usize> = self.natural(caps);
        // Empty columns other than the first are dropped (width 0).
        for (i, wi) in w.iter_mut().enumerate() {
            if self.is_empty_column(i) {
                *wi = 0;
            }
        }
        let total = |w: &[usize]| {
            let shown = w.iter().filter(|x| **x > 0).count();
            w.iter().sum::<usize>() + 2 * shown.saturating_sub(1)
        };
        let mut order: Vec<usize> = (0..n)
            .filter(|&i| !matches!(self.columns[i].shrink, Shrink::Never | Shrink::OwnLine))
            .collect();
        order.sort_by_key(|&i| self.columns[i].order);
        // Two passes: every shrinkable column down to a readable width
        // first (20 characters), then down to its own minimum.
        // An id (Middle, WrapId) gives way only in the second pass.
        for pass in [Some(20), None] {
            for &i in &order {
                let over = total(&w).saturating_sub(width);
                if over == 0 {
                    break;
                }
                if pass.is_some()
                    && matches!(
                        self.columns[i].shrink,
                        Shrink::Middle(_) | Shrink::WrapId(_)
                    )
                {
                    continue;
                }
                let hard = match self.columns[i].shrink {
                    Shrink::End(m)
                    | Shrink::Middle(m)
                    | Shrink::Drop(m)
                    | Shrink::Wrap(m)
                    | Shrink::WrapId(m) => m.max(self.columns[i].header.chars().count()),
                    Shrink::Never | Shrink::OwnLine => w[i],
                };
                let min = pass.map_or(hard, |soft| soft.max(hard));
                if w[i] > min {
                    w[i] -= over.min(w[i] - min);
                }
            }
        }
        // Still too wide: the columns that may go, go.
        for &i in order.iter().rev() {
            if total(&w) <= width {
                break;
            }
            if matches!(self.columns[i].shrink, Shrink::Drop(_)) {
                w[i] = 0;
            }
        }
        w
    }

    fn is_title(&self, row: &[Cell]) -> bool {
        row.len() == 1 && self.columns.len() > 1
    }

    /// The table as text, fitted to `width`, painted when `colour`.
    pub fn render(&self, width: usize, colour: bool) -> String {
        self.render_rows(width, colour).concat()
    }

    /// [`Table::render`], a text per row, the header first: each one line
    /// or more (a wrapped cell, a cell on a line of its own), each line
    /// ending in a newline.
    pub fn render_rows(&self, width: usize, colour: bool) -> Vec<String> {
        let caps = self.caps(width);
        let w = self.widths_within(width, &caps);
        let header: Vec<Cell> = self
            .columns
            .iter()
            .map(|c| Cell::painted(c.header.as_str(), Some(Paint::Bold)))
            .collect();
        let mut blocks = Vec::with_capacity(self.rows.len() + 1);
        for row in std::iter::once(&header).chain(&self.rows) {
            let mut out = String::new();
            if self.is_title(row) {
                let c = &row[0];
                out.push_str(&paint(colour, c.paint.unwrap_or(Paint::Plain), &c.text));
                out.push('\n');
                blocks.push(out);
                continue;
            }
            let last = (0..w.len()).rev().find(|&i| w[i] > 0).unwrap_or(0);
            // Each column's lines on this row.
            let mut cells: Vec<(Vec<String>, Option<Paint>)> = Vec::with_capacity(w.len());
            for (i, &wi) in w.iter().enumerate() {
                if wi == 0 && i > 0 {
                    cells.push((Vec::new(), None));
                    continue;
                }
                let mut cell = row.get(i).cloned().unwrap_or_default();
                if cell.text.chars().count() > caps[i] {
                    // Too long for its column: a line of its own, whole.
                    out.push_str(&paint(
                        colour,
                        cell.paint.unwrap_or(Paint::Plain),
                        &cell.text,
                    ));
                    out.push('\n');
                    cell = Cell::default();
                }
                let lines = match self.columns[i].shrink {
                    Shrink::Wrap(_) | Shrink::WrapId(_) => wrap_cell(&cell.text, wi),
                    how => vec![shorten(&cell.text, wi, how)],
                };
                cells.push((lines, cell.paint));
            }
            let height = cells.iter().map(|(l, _)| l.len()).max().unwrap_or(1).max(1);
            for k in 0..height {
                let mut line = String::new();
                let mut pending = 0usize;
                for (i, &wi) in w.iter().enumerate() {
                    if wi == 0 && i > 0 {
                        continue;
                    }
                    let (lines, p) = &cells[i];
                    let text = lines.get(k).map_or("", String::as_str);
                    let len = text.chars().count();
                    if !text.is_empty() {
                        line.push_str(&" ".repeat(pending));
                        pending = 0;
                        line.push_str(&paint(colour, p.unwrap_or(Paint::Plain), text));
                    }
                    if i < last {
                        pending += wi - len.min(wi) + 2;
                    }
                }
                out.push_str(&line);
                out.push('\n');
            }
            blocks.push(out);
        }
        blocks
    }
}

/// `text` in lines of at most `width` characters, nothing taken out:
/// broken at spaces (the space dropped); a word wider than `width` broken
/// after its last `/`, `#` or `@` that fits, else its last `-` or `.`, else
/// at `width`.
fn wrap_cell(text: &str, width: usize) -> Vec<String> {
    if width == 0 || text.chars().count() <= width {
        return vec![text.to_string()];
    }
    // The pieces, each with whether it begins a word (a space before it).
    let mut pieces: Vec<(String, bool)> = Vec::new();
    for word in text.split(' ') {
        let mut rest: Vec<char> = word.chars().collect();
        let mut starts = true;
        while rest.len() > width {
            // After a folder or before a heading first, then within a name.
            let after = |set: &[char]| rest[..width].iter().rposition(|c| set.contains(c));
            let cut = after(&['/', '#', '@'])
                .or_else(|| after(&['-', '.']))
                .map_or(width, |p| p + 1);
            pieces.push((rest.drain(..cut).collect(), starts));
            starts = false;
        }
        pieces.push((rest.into_iter().collect(), starts));
    }
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for (piece, starts) in pieces {
        let sep = usize::from(starts && !line.is_empty());
        if !line.is_empty() && line.chars().count() + sep + piece.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        } else if sep == 1 {
            line.push(' ');
        }
        line.push_str(&piece);
    }
    lines.push(line);
    lines
}

/// The width views fit: `COLUMNS` when it asks one (see [`columns`]), else
/// the terminal's; through a pipe or into a file, no limit
/// ([`usize::MAX`]): nothing is cut or wrapped there, so `bsi log | grep
/// NAME` finds what a narrow screen would shorten.
pub fn view_width(columns: Option<usize>, terminal: Option<usize>) -> usize {
    columns.or(terminal).unwrap_or(usize::MAX)
}

/// Whether a view of this width cuts anything: a screen, not a pipe.
pub fn is_bounded(width: usize) -> bool {
    width != usize::MAX
}

/// `text` (one line, no colours) broken at spaces into lines of at most
/// `width` characters, the first after `first` characters already on its
/// line, the others to be written after `indent` characters. A span in
/// backticks (a command to paste) is never broken, nor is a word; either,
/// alone on a line and still too long, overflows.
pub fn wrap_words(text: &str, width: usize, first: usize, indent: usize) -> Vec<String> {
    // The words: spans between spaces, a backticked span kept whole.
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_code = false;
    for c in text.chars() {
        if c == '`' {
            in_code = !in_code;
        }
        if c == ' ' && !in_code {
            words.push(std::mem::take(&mut word));
        } else {
            word.push(c);
        }
    }
    words.push(word);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut room = width.saturating_sub(first);
    for w in words {
        let n = w.chars().count();
        let len = line.chars().count();
        if len == 0 {
            line = w;
        } else if len + 1 + n <= room {
            line.push(' ');
            line.push_str(&w);
        } else {
            lines.push(std::mem::take(&mut line));
            room = width.saturating_sub(indent);
            line = w;
        }
    }
    lines.push(line);
    lines
}

/// The labels a line of prose may start with, its continuation written
/// under the text after it.
const LABELS: [&str; 5] = ["error: ", "hint: ", "note: ", "warning: ", "Next: "];

/// `text` (one line of prose) wrapped at spaces to `width`: its lines
/// after the first under the text after its label (`hint: `), else two
/// columns in from its own indentation. `None` when it fits, or is not
/// prose: colours, or columns laid out with runs of spaces (a table).
pub fn prose_lines(text: &str, width: usize) -> Option<Vec<String>> {
    if text.chars().count() <= width || text.contains('\x1b') {
        return None;
    }
    let body = text.trim_start_matches(' ');
    let lead = text.len() - body.len();
    if body.contains("  ") || body.contains('│') || body.contains('├') {
        return None;
    }
    let (label, rest) = match LABELS.iter().find(|l| body.starts_with(*l)) {
        Some(l) => (format!("{}{l}", " ".repeat(lead)), &body[l.len()..]),
        None => (" ".repeat(lead), body),
    };
    let indent = if label.trim().is_empty() {
        lead + 2
    } else {
        label.len()
    };
    let lines = wrap_words(rest, width, label.len(), indent);
    Some(
        lines
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    format!("{label}{l}")
                } else {
                    format!("{}{l}", " ".repeat(indent))
                }
            })
            .collect(),
    )
}

/// A writer for people's sentences on a screen `width` wide: a `Next:` line
/// longer than the screen is wrapped at spaces under its first word (a
/// command in backticks stays whole, so it still pastes), and so are the
/// indented lines that continue it; every other line goes through as
/// written (tables and trees fit themselves). Lines are held until their
/// newline; the rest is written when the writer is flushed or dropped.
pub struct Fitted<W: Write> {
    inner: W,
    width: usize,
    pending: Vec<u8>,
    /// Whether the last line written was a `Next:` line (or continued one).
    in_next: bool,
    /// Whether every line of prose is wrapped, not only `Next:` lines
    /// ([`Fitted::prose`]).
    prose: bool,
}

/// The indentation of a `Next:` line's continuation, under its first word.
const NEXT_INDENT: &str = "      ";

impl<W: Write> Fitted<W> {
    /// Wraps `inner` for a screen `width` wide.
    pub fn new(inner: W, width: usize) -> Fitted<W> {
        Fitted {
            inner,
            width,
            pending: Vec::new(),
            in_next: false,
            prose: false,
        }
    }

    /// Wraps `inner` for a screen `width` wide, every line of prose
    /// included: sentences, refusals, errors, hints and notes, whose lines
    /// longer than the screen are broken at spaces ([`prose_lines`]). A
    /// line laid out in columns (a table, a tree) goes through as written.
    pub fn prose(inner: W, width: usize) -> Fitted<W> {
        Fitted {
            inner,
            width,
            pending: Vec::new(),
            in_next: false,
            prose: true,
        }
    }

    /// Writes one line, its newline included.
    fn line(&mut self, raw: &[u8]) -> std::io::Result<()> {
        let body = raw.strip_suffix(b"\n").unwrap_or(raw);
        if self.prose
            && !body.starts_with(b"Next: ")
            && !(self.in_next && body.starts_with(NEXT_INDENT.as_bytes()))
        {
            self.in_next = false;
            if let Ok(text) = std::str::from_utf8(body)
                && let Some(lines) = prose_lines(text, self.width)
            {
                for l in lines {
                    writeln!(self.inner, "{l}")?;
                }
                return Ok(());
            }
            return self.inner.write_all(raw);
        }
        let next = body.starts_with(b"Next: ");
        let continued = self.in_next && body.starts_with(NEXT_INDENT.as_bytes());
        self.in_next = next || continued;
        let text = match std::str::from_utf8(body) {
            Ok(t) if (next || continued) && !t.contains('\x1b') => t,
            _ => return self.inner.write_all(raw),
        };
        if text.chars().count() <= self.width {
            return self.inner.write_all(raw);
        }
        let (lead, rest) = if next {
            ("Next: ", &text["Next: ".len()..])
        } else {
            (NEXT_INDENT, text.trim_start())
        };
        for (i, l) in wrap_words(rest, self.width, lead.len(), NEXT_INDENT.len())
            .iter()
            .enumerate()
        {
            let lead = if i == 0 { lead } else { NEXT_INDENT };
            writeln!(self.inner, "{lead}{l}")?;
        }
        Ok(())
    }
}

impl<W: Write> Write for Fitted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        while let Some(i) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=i).collect();
            self.line(&line)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            self.line(&rest)?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for Fitted<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// The width `COLUMNS` asks tables to fit: a number of at least 20;
/// unset, empty or anything else asks nothing (each view has its width).
pub fn columns(raw: Option<&str>) -> Option<usize> {
    raw.and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c >= 20)
}

/// The name of a zone for people: `UTC`, or its offset `+01:00`.
pub fn zone_name(offset: FixedOffset) -> String {
    if offset.local_minus_utc() == 0 {
        "UTC".into()
    } else {
        offset.to_string()
    }
}

/// Pairs of overlapping claims, as JSON.
pub fn collisions_json<'a>(
    pairs: impl IntoIterator<Item = (&'a Claim, &'a Claim)>,
    now: DateTime<FixedOffset>,
) -> Vec<[ClaimJson; 2]> {
    pairs
        .into_iter()
        .map(|(a, b)| [ClaimJson::new(a, false, now), ClaimJson::new(b, false, now)])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_cell_keeps_every_character_and_fits() {
        for (text, width) in [
            ("projets/plan.md#Risks, notes/new.md", 17),
            ("a-very-long-agent-name@workstation-7", 8),
            ("sess-20260314-1250-rk03", 10),
            ("abcdefghijklmnopqrstuvwxyz", 7),
            ("short", 10),
        ] {
            let lines = wrap_cell(text, width);
            assert!(
                lines.iter().all(|l| l.chars().count() <= width),
                "{lines:?}"
            );
            // Broken at a space, the space goes; else nothing is lost.
            assert_eq!(lines.concat(), text.replace(' ', ""), "{lines:?}");
        }
        assert_eq!(
            wrap_cell("projets/plan.md#Risks, notes/new.md", 17),
            ["projets/plan.md#", "Risks,", "notes/new.md"]
        );
        assert_eq!(
            wrap_cell("projets/plan.md#Risks", 14),
            ["projets/", "plan.md#Risks"]
        );
        assert_eq!(
            wrap_cell("sess-20260314-1250-rk03", 10),
            ["sess-", "20260314-", "1250-rk03"]
        );
    }

    #[test]
    fn a_wrapping_column_gives_its_row_more_lines() {
        let t = Table {
            columns: vec![
                Column {
                    header: "A".into(),
                    shrink: Shrink::Never,
                    order: 0,
                },
                Column {
                    header: "SCOPES".into(),
                    shrink: Shrink::Wrap(6),
                    order: 1,
                },
            ],
            rows: vec![vec![Cell::new("x"), Cell::new("a/b.md, c/d.md")]],
        };
        assert_eq!(t.render(12, false), "A  SCOPES\nx  a/b.md,\n   c/d.md\n");
        assert_eq!(t.render_rows(12, false).len(), 2);
    }

    /// [`table`], with whole lines painted: `styles[i]` for row `i`.
    fn table_painted(rows: &[Vec<String>], styles: &[Option<Paint>], on: bool) -> String {
        let plain = table(rows);
        if !on {
            return plain;
        }
        let mut out = String::with_capacity(plain.len() + rows.len() * 9);
        for (i, line) in plain.lines().enumerate() {
            match styles.get(i).copied().flatten() {
                Some(p) => out.push_str(&paint(true, p, line)),
                None => out.push_str(line),
            }
            out.push('\n');
        }
        out
    }

    #[test]
    fn colours_only_on_a_terminal_without_no_color() {
        assert!(colour_wanted(true, None, Some("xterm")));
        assert!(colour_wanted(true, Some(""), None));
        assert!(!colour_wanted(false, None, Some("xterm")));
        assert!(!colour_wanted(true, Some("1"), Some("xterm")));
        assert!(!colour_wanted(true, None, Some("dumb")));
        assert!(colour_wanted_or_forced(false, None, None, Some("1")));
        assert!(!colour_wanted_or_forced(false, Some("1"), None, Some("1")));
        assert!(!colour_wanted_or_forced(false, None, None, Some("0")));
        assert!(colour_wanted_or_forced(true, None, None, None));
    }

    fn cols(spec: &[(&str, Shrink, u8)]) -> Vec<Column> {
        spec.iter()
            .map(|(h, shrink, order)| Column {
                header: (*h).to_string(),
                shrink: *shrink,
                order: *order,
            })
            .collect()
    }

    #[test]
    fn shortening_keeps_what_matters() {
        assert_eq!(shorten("tidy the notes", 8, Shrink::End(4)), "tidy th…");
        assert_eq!(
            shorten("sess-20260314-0930-ag01", 11, Shrink::Middle(8)),
            "sess-…-ag01"
        );
        assert_eq!(shorten("short", 8, Shrink::End(4)), "short");
        assert_eq!(shorten("abc", 1, Shrink::End(1)), "…");
        assert_eq!(shorten("abc", 1, Shrink::Middle(1)), "…");
        assert_eq!(shorten("abc", 0, Shrink::End(0)), "");
        assert_eq!(shorten("ééééé", 3, Shrink::End(2)), "éé…");
    }

    #[test]
    fn a_table_fits_its_width_by_shrinking_notes_then_agents_never_scopes() {
        let t = Table {
            columns: cols(&[
                ("SCOPE", Shrink::Never, 0),
                ("AGENT", Shrink::End(5), 1),
                ("NOTE", Shrink::End(5), 2),
            ]),
            rows: vec![
                vec![Cell::new("sess-1")],
                vec![
                    Cell::new("  a/very/long/scope/that/stays.md"),
                    Cell::new("an-agent-with-a-long-name"),
                    Cell::new("a note that goes on and on"),
                ],
                vec![Cell::new("  b.md"), Cell::new("x"), Cell::new("")],
            ],
        };
        for width in [40, 60, 80, 200] {
            let out = t.render(width, false);
            assert!(out.contains("  a/very/long/scope/that/stays.md"), "{out}");
            // A title row is whole and does not widen the columns.
            assert!(out.contains("\nsess-1\n"), "{out}");
            for line in out.lines() {
                assert_eq!(line, line.trim_end(), "trailing spaces in {line:?}");
                assert!(
                    line.chars().count() <= width.max(47),
                    "{width}: {line:?} is {} wide",
                    line.chars().count()
                );
            }
        }
        // Nothing shrinks when it fits.
        assert!(t.render(200, false).contains("a note that goes on and on"));
        // Painted cells keep the same text.
        let on = t.render(60, true);
        assert!(on.contains("\x1b[1mSCOPE\x1b[0m"), "{on}");
    }

    #[test]
    fn a_long_scope_takes_its_own_line_and_leaves_the_notes_their_room() {
        let long = format!("  {}/x.md", "deep/".repeat(20));
        let t = Table {
            columns: cols(&[
                ("SCOPE", Shrink::OwnLine, 0),
                ("AGENT", Shrink::End(5), 1),
                ("NOTE", Shrink::End(5), 2),
            ]),
            rows: vec![
                vec![
                    Cell::new(long.as_str()),
                    Cell::new("alice"),
                    Cell::new("a note of a few words"),
                ],
                vec![Cell::new("  b.md"), Cell::new("bob"), Cell::new("short")],
            ],
        };
        let out = t.render(80, false);
        assert_eq!(
            out,
            format!(
                "SCOPE   AGENT  NOTE\n{long}\n        alice  a note of a few words\n  b.md  bob    short\n"
            )
        );
        // Wide enough, it stays on its row.
        let wide = t.render(250, false);
        assert!(
            wide.lines()
                .nth(1)
                .is_some_and(|l| l.starts_with(&long) && l.ends_with("words")),
            "{wide}"
        );
    }

    #[test]
    fn a_column_that_may_go_goes_when_nothing_else_fits_and_an_id_gives_way_last() {
        let t = Table {
            columns: cols(&[
                ("SCOPE", Shrink::Never, 0),
                ("SESSION", Shrink::Middle(8), 3),
                ("AGENT", Shrink::End(5), 1),
                ("NOTE", Shrink::Drop(5), 2),
            ]),
            rows: vec![
                [
                    "notes/",
                    "sess-20260314-0930-ag01",
                    "claude-the-agent",
                    "a long note here",
                ]
                .iter()
                .map(|c| Cell::new(*c))
                .collect(),
            ],
        };
        // Wide enough once the agent gives way: the id is whole.
        assert_eq!(t.widths(60), vec![6, 23, 9, 16]);
        // Narrower: the agent and the note at their least, then the id.
        assert_eq!(t.widths(36), vec![6, 14, 5, 5]);
        // Narrower still: the note goes.
        assert_eq!(t.widths(26), vec![6, 8, 5, 0]);
        for line in t.render(26, false).lines() {
            assert!(line.chars().count() <= 26, "{line}");
        }
    }

    #[test]
    fn next_lines_wrap_under_their_first_word_and_keep_commands_whole() {
        let mut out = Vec::new();
        {
            let mut f = Fitted::new(&mut out, 40);
            write!(
                f,
                "a table line that is longer than forty characters stays\nNext: run `bsi release sess-20260314-0930-ag01 --confirm` once checked.\n      then more words that follow the next line here\nlast"
            )
            .expect("write");
        }
        let text = String::from_utf8(out).expect("utf-8");
        assert_eq!(
            text,
            "a table line that is longer than forty characters stays
Next: run
      `bsi release sess-20260314-0930-ag01 --confirm`
      once checked.
      then more words that follow the
      next line here
last"
        );
        assert_eq!(
            wrap_words("a b c", usize::MAX, 0, 0),
            vec!["a b c".to_string()]
        );
    }

    #[test]
    fn an_empty_column_is_left_out() {
        let t = Table {
            columns: cols(&[("A", Shrink::Never, 0), ("NOTE", Shrink::End(4), 1)]),
            rows: vec![vec![Cell::new("x"), Cell::new("")]],
        };
        assert_eq!(t.render(80, false), "A\nx\n");
        assert_eq!(columns(Some(" 120 ")), Some(120));
        for unusable in [Some("wide"), Some("3"), Some(""), None] {
            assert_eq!(columns(unusable), None, "{unusable:?}");
        }
    }

    #[test]
    fn times_in_the_readers_zone() {
        let paris = chrono::DateTime::parse_from_rfc3339("2026-03-14T12:30:00+01:00").expect("t");
        let utc_now = chrono::DateTime::parse_from_rfc3339("2026-03-14T09:30:00Z").expect("t");
        assert_eq!(local_ts(paris, utc_now), "2026-03-14 11:30 +00:00");
        assert_eq!(
            short_time(paris.with_timezone(utc_now.offset()), utc_now),
            "11:30"
        );
        let earlier = chrono::DateTime::parse_from_rfc3339("2026-03-10T08:00:00Z").expect("t");
        assert_eq!(short_time(earlier, utc_now), "03-10 08:00");
        let last_year = chrono::DateTime::parse_from_rfc3339("2025-12-31T08:00:00Z").expect("t");
        assert_eq!(short_time(last_year, utc_now), "2025-12-31 08:00");
        assert_eq!(zone_name(*utc_now.offset()), "UTC");
        assert_eq!(zone_name(*paris.offset()), "+01:00");
    }

    #[test]
    fn painting_keeps_alignment() {
        assert_eq!(paint(false, Paint::Red, "x"), "x");
        assert_eq!(paint(true, Paint::Red, "x"), "\x1b[31mx\x1b[0m");
        let rows = vec![
            vec!["A".to_string(), "B".into()],
            vec!["long".to_string(), "c".into()],
        ];
        let plain = table(&rows);
        assert_eq!(plain, "A     B\nlong  c\n");
        assert_eq!(
            table_painted(&rows, &[None, Some(Paint::Red)], false),
            plain
        );
        assert_eq!(
            table_painted(&rows, &[None, Some(Paint::Red)], true),
            "A     B\n\x1b[31mlong  c\x1b[0m\n"
        );
    }
}

/// `bsi commit` as JSON (`commit-own` in docs/json-schema.json).
#[derive(Serialize)]
pub struct CommitJson<'a> {
    session: &'a str,
    /// The new commit; null when nothing of the session's was there.
    commit: Option<&'a str>,
    files: Vec<CommitFileJson<'a>>,
    left: Vec<CommitLeftJson<'a>>,
}

#[derive(Serialize)]
struct CommitFileJson<'a> {
    path: &'a str,
    /// The whole change of the file, else the session's hunks of it.
    whole: bool,
}

#[derive(Serialize)]
struct CommitLeftJson<'a> {
    path: &'a str,
    lines: Option<&'a str>,
    /// The session holding it; null when it lies in no one's claim.
    holder: Option<&'a str>,
    /// The scope that would make it the session's, when no one holds it.
    claim: Option<String>,
}

impl<'a> CommitJson<'a> {
    /// The document of what `session`'s commit did.
    pub fn new(session: &'a str, c: &'a Committed) -> CommitJson<'a> {
        CommitJson {
            session,
            commit: c.commit.as_deref(),
            files: c
                .files
                .iter()
                .map(|f| CommitFileJson {
                    path: &f.path,
                    whole: f.whole,
                })
                .collect(),
            left: c
                .left
                .iter()
                .map(|l| CommitLeftJson {
                    path: &l.path,
                    lines: l.lines.as_deref(),
                    holder: l.holder.as_deref(),
                    claim: l.claim.as_ref().map(ToString::to_string),
                })
                .collect(),
        }
    }
}

/// What `session`'s commit did, in lines: the commit and its files, then
/// every change left in the work tree with whose it is, or the claim that
/// would make it the session's.
pub fn commit_lines(session: &str, c: &Committed) -> Vec<String> {
    let mut out = Vec::new();
    match &c.commit {
        Some(id) => {
            let named: Vec<String> = c
                .files
                .iter()
                .map(|f| {
                    if f.whole {
                        f.path.clone()
                    } else {
                        format!("{} (your lines only)", f.path)
                    }
                })
                .collect();
            out.push(format!(
                "Committed {} for {session}: {}",
                &id[..id.len().min(7)],
                named.join(", ")
            ));
        }
        None => out.push(format!(
            "Nothing of {session}'s to commit: no uncommitted change lies inside its claims. Nothing was written."
        )),
    }
    if !c.left.is_empty() {
        out.push("Left in the work tree, as it is:".to_string());
        for l in &c.left {
            let place = match &l.lines {
                Some(lines) => format!("{} {lines}", l.path),
                None => l.path.clone(),
            };
            out.push(match (&l.holder, &l.claim) {
                (Some(h), _) => {
                    format!("- {place}: {h}'s, inside its claim (it commits them itself)")
                }
                (None, Some(scope)) => format!(
                    "- {place}: in no one's claim; to commit it too, claim it (`{}`) and run bsi commit again",
                    command_line(["bsi", "open", &scope.to_string(), "--session", session])
                ),
                (None, None) => format!("- {place}: in no one's claim"),
            });
        }
    }
    out
}

/// The document of `bsi recover`.
#[derive(Serialize)]
pub struct RecoverJson<'a> {
    session: &'a str,
    /// The copy's commit (`refs/bsi/keep/SESSION`); null when none is kept.
    copy: Option<&'a str>,
    /// When the copy was taken (RFC 3339).
    kept_at: Option<String>,
    restored: Vec<RecoverPartJson<'a>>,
    left: Vec<RecoverPartJson<'a>>,
}

#[derive(Serialize)]
struct RecoverPartJson<'a> {
    path: &'a str,
    /// The section's heading; null for the lines before the first heading
    /// or a file without headings.
    heading: Option<&'a str>,
    /// Why it was left: `newer_lines`, `deleted`, `not_a_file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    why: Option<&'static str>,
}

fn left_word(why: KeptLeft) -> &'static str {
    match why {
        KeptLeft::Newer => "newer_lines",
        KeptLeft::Deleted => "deleted",
        KeptLeft::NotAFile => "not_a_file",
    }
}

fn kept_at(r: &Recovered, now: DateTime<FixedOffset>) -> Option<DateTime<FixedOffset>> {
    r.at.and_then(|s| DateTime::from_timestamp(s, 0))
        .map(|t| t.with_timezone(now.offset()))
}

impl<'a> RecoverJson<'a> {
    /// The document of what recovering `session`'s copy did.
    pub fn new(session: &'a str, r: &'a Recovered, now: DateTime<FixedOffset>) -> RecoverJson<'a> {
        let part = |p: &'a KeptPart, why: Option<&'static str>| RecoverPartJson {
            path: &p.path,
            heading: p.heading.as_deref(),
            why,
        };
        RecoverJson {
            session,
            copy: r.copy.as_deref(),
            kept_at: kept_at(r, now).map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true)),
            restored: r.restored.iter().map(|p| part(p, None)).collect(),
            left: r
                .left
                .iter()
                .map(|(p, why)| part(p, Some(left_word(*why))))
                .collect(),
        }
    }
}

/// What `bsi recover` says, a line each.
pub fn recover_lines(session: &str, r: &Recovered, now: DateTime<FixedOffset>) -> Vec<String> {
    let Some(copy) = &r.copy else {
        return vec![format!(
            "No copy of {session}'s uncommitted work is kept in this clone: nothing to put back. (bsi keeps one from the session's edits through its agent's hooks, its agent's stops, `bsi commit`, `bsi close` and `bsi status`.)"
        )];
    };
    let when = kept_at(r, now)
        .map(|t| format!(" (kept {})", t.format("%Y-%m-%d %H:%M:%S %:z")))
        .unwrap_or_default();
    let place = |p: &KeptPart| match &p.heading {
        Some(h) => format!("{}, section {h}", p.path),
        None => p.path.clone(),
    };
    let mut out = Vec::new();
    if r.restored.is_empty() {
        out.push(format!(
            "Nothing put back: the files already hold {session}'s lines of its copy{when}."
        ));
    } else {
        out.push(format!(
            "Put back {session}'s uncommitted lines from its copy{when}:"
        ));
        out.extend(r.restored.iter().map(|p| format!("- {}", place(p))));
    }
    if !r.left.is_empty() {
        out.push("Left as the files have them now:".to_string());
        for (p, why) in &r.left {
            let show = command_line([
                "git",
                "show",
                &format!("{}:work/{}", bsi_core::keep::refname(session), p.path),
            ]);
            let said = match why {
                KeptLeft::Newer => "the file has other lines there now",
                KeptLeft::Deleted => "the file was deleted since the copy",
                KeptLeft::NotAFile => "what is there now is not a file bsi writes",
            };
            out.push(format!("- {}: {said} (the copy: `{show}`)", place(p)));
        }
    }
    if !r.restored.is_empty() {
        out.push(format!(
            "Only the work tree changed (the index and HEAD did not): `git diff` shows what came back. The copy stays in {} ({}).",
            bsi_core::keep::refname(session),
            &copy[..copy.len().min(7)]
        ));
    }
    out
}

/// The endings recorded offline that the merge with the remote did not
/// keep (each claim ends once: the ending published first), a note each.
pub fn superseded_lines(landing: &Landing) -> Vec<String> {
    landing
        .superseded
        .iter()
        .map(|s| format!("note: {s}."))
        .collect()
}

/// What a write's landing adds to its report, said the same by every door
/// (the CLI on stderr, MCP in the tool's result, an agent tool's hook in
/// its answer): each line a note or a warning, one possibly over several
/// lines. [`Landing::code`] is the exit code it makes.
pub fn landing_lines(landing: &Landing) -> Vec<String> {
    let mut lines = superseded_lines(landing);
    match &landing.landed {
        Landed::Pending(why) => {
            let mut line = format!("warning: {why}.");
            if let Some(hint) = bsi_core::error::address_hint(&why.why) {
                line.push('\n');
                line.push_str(hint);
            }
            line.push_str(
                "\nThe change is committed on the local registry branch but NOT PUBLISHED: other machines do not see it. Run `bsi sync` once the remote is back.",
            );
            lines.push(line);
        }
        Landed::AsLastFetched(why) => lines.push(format!(
            "warning: {why}; this was decided on the registry as last fetched. Run `bsi sync` once the remote is back."
        )),
        _ => {}
    }
    if !landing.collisions.is_empty() {
        lines.push(
            bsi_core::words::published_collisions(landing.published.len(), &landing.collisions)
                .trim_end()
                .to_string(),
        );
    } else if !landing.published.is_empty() && matches!(landing.landed, Landed::Published) {
        // Changes recorded while the remote was out of reach, or before it
        // existed (a registry made before `git remote add`): now everyone's.
        lines.push(format!(
            "note: this also published {} earlier change(s) of this clone that the remote did not have: {}.",
            landing.published.len(),
            landing.published.join("; ")
        ));
    }
    lines
}
