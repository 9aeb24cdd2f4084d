//! Writing the registry back: rows are spliced into the original text, so
//! every byte bsi did not mean to change stays as it was.

use super::{Claim, HistoryEntry, Language, Registry, Table, TableKind, Waiter, col};
use crate::ttl;

/// One replacement of a byte range of the original text.
#[derive(Debug, Clone)]
pub(crate) struct Splice {
    start: usize,
    end: usize,
    with: String,
    /// Orders several insertions at one offset.
    seq: usize,
    /// A place added to a queue table this edit creates.
    queue: bool,
}

/// Escapes a cell: `\` becomes `\\` and `|` becomes `\|`.
pub fn escape_cell(value: &str) -> String {
    if !value.contains(['|', '\\']) {
        return value.to_string();
    }
    let mut out = String::with_capacity(value.len() + 4);
    for c in value.chars() {
        if c == '|' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Renders a row for `t` from cells given by column name; columns with no
/// value are left empty.
fn row_line(t: &Table, value: impl Fn(&str) -> Option<String>) -> String {
    let mut line = String::from("|");
    for c in &t.columns {
        let v = value(c).unwrap_or_default();
        line.push(' ');
        line.push_str(&escape_cell(&v));
        line.push_str(" |");
    }
    line
}

fn claim_value(c: &Claim, column: &str) -> Option<String> {
    let is = |n: &str| column.trim().eq_ignore_ascii_case(n);
    if is(col::SESSION) {
        Some(c.session.clone())
    } else if is(col::SCOPE) {
        Some(c.scope.to_string())
    } else if is(col::LEVEL) {
        Some(c.level().as_str().to_string())
    } else if is(col::AGENT) {
        Some(c.agent.clone())
    } else if is(col::OPENED) {
        Some(ttl::format_ts(c.opened))
    } else if is(col::EXPIRES) {
        Some(ttl::format_ts(c.expires))
    } else if is(col::NOTE) {
        Some(c.note.clone())
    } else if is(col::REASON) {
        c.reason.clone()
    } else {
        c.extra
            .iter()
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(column.trim()))
            .map(|(_, v)| v.clone())
    }
}

fn history_value(h: &HistoryEntry, column: &str) -> Option<String> {
    let is = |n: &str| column.trim().eq_ignore_ascii_case(n);
    if is(col::SESSION) {
        Some(h.session.clone())
    } else if is(col::SCOPE) {
        Some(h.scope.clone())
    } else if is(col::LEVEL) {
        Some(h.level.clone())
    } else if is(col::AGENT) {
        Some(h.agent.clone())
    } else if is(col::H_OPENED) || is(col::OPENED) {
        Some(h.opened.clone())
    } else if is(col::H_CLOSED) {
        Some(h.closed.clone())
    } else if is(col::H_STATUS) {
        Some(h.status.clone())
    } else if is(col::NOTE) {
        Some(h.note.clone())
    } else {
        h.extra
            .iter()
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(column.trim()))
            .map(|(_, v)| v.clone())
    }
}

/// A queue time: to the millisecond, since the queue's order and leases
/// are finer than the minute of the claim tables.
pub fn format_queue_ts(t: chrono::DateTime<chrono::FixedOffset>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, false)
}

fn waiter_value(w: &Waiter, column: &str) -> Option<String> {
    let is = |n: &str| column.trim().eq_ignore_ascii_case(n);
    if is(col::SESSION) {
        Some(w.session.clone())
    } else if is(col::SCOPE) {
        Some(w.scope.to_string())
    } else if is(col::LEVEL) {
        Some(w.scope.level().as_str().to_string())
    } else if is(col::AGENT) {
        Some(w.agent.clone())
    } else if is(col::SINCE) {
        Some(format_queue_ts(w.since))
    } else if is(col::LEASE) {
        Some(format_queue_ts(w.lease))
    } else {
        w.extra
            .iter()
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(column.trim()))
            .map(|(_, v)| v.clone())
    }
}

impl Registry {
    fn push(&mut self, start: usize, end: usize, with: String) {
        let seq = self.splices.len();
        self.splices.push(Splice {
            start,
            end,
            with,
            seq,
            queue: false,
        });
    }

    /// Whether the file's last line has no line ending.
    fn unterminated(&self) -> bool {
        !self.text.is_empty() && !self.text.ends_with('\n')
    }

    /// Edits are made on the text as if its last line were terminated, and
    /// the final line ending is dropped again when rendering: an offset at
    /// the very end moves past that virtual line ending.
    fn virtual_offset(&self, offset: usize) -> usize {
        if offset == self.text.len() && self.unterminated() {
            offset + self.eol.len()
        } else {
            offset
        }
    }

    fn append_row(&mut self, kind: TableKind, line: String) {
        let end = self.virtual_offset(self.table(kind).end);
        self.push(end, end, format!("{line}{}", self.eol));
    }

    /// Adds a claim at the end of the active or stale table.
    pub fn add_claim(&mut self, kind: TableKind, claim: &Claim) {
        let line = row_line(self.table(kind), |c| claim_value(claim, c));
        self.append_row(kind, line);
    }

    /// The row `claim` would have in the active or stale table, without
    /// its line ending.
    pub(crate) fn claim_line(&self, kind: TableKind, claim: &Claim) -> String {
        row_line(self.table(kind), |c| claim_value(claim, c))
    }

    /// The row `w` would have in the queue, without its line ending.
    pub(crate) fn waiter_line(&self, w: &Waiter) -> String {
        row_line(&self.queue, |c| waiter_value(w, c))
    }

    /// Removes row `index` of the active or stale table.
    pub fn remove_claim(&mut self, kind: TableKind, index: usize) {
        let r = self.table(kind).rows[index].clone();
        let end = self.virtual_offset(r.end);
        self.push(r.start, end, String::new());
    }

    /// Rewrites row `index` of the active or stale table with `claim`,
    /// keeping the row's own line ending.
    pub fn replace_claim(&mut self, kind: TableKind, index: usize, claim: &Claim) {
        let r = self.table(kind).rows[index].clone();
        let old = &self.text[r.clone()];
        let body_len = old.trim_end_matches(['\n', '\r']).len();
        let line = row_line(self.table(kind), |c| claim_value(claim, c));
        self.push(r.start, r.start + body_len, line);
    }

    /// Appends a row to the history table.
    pub fn add_history(&mut self, entry: &HistoryEntry) {
        let line = row_line(&self.history, |c| history_value(entry, c));
        self.append_row(TableKind::History, line);
    }

    /// Adds a place at the end of the queue; a registry without a queue
    /// table gets one, at the end of the text, with its first place.
    pub fn add_waiter(&mut self, w: &Waiter) {
        let line = row_line(&self.queue, |c| waiter_value(w, c));
        if self.queue_present {
            self.append_row(TableKind::Queue, line);
            return;
        }
        let end = self.virtual_offset(self.text.len());
        let eol = self.eol;
        let first = !self.splices.iter().any(|s| s.start == end && s.queue);
        let with = if first {
            let cols = TableKind::Queue.default_columns();
            let delim = cols
                .iter()
                .map(|c| "-".repeat(c.chars().count() + 2))
                .collect::<Vec<_>>()
                .join("|");
            format!(
                "{eol}## {}{eol}{eol}| {} |{eol}|{delim}|{eol}{line}{eol}",
                TableKind::Queue.heading_in(self.language),
                cols.join(" | ")
            )
        } else {
            format!("{line}{eol}")
        };
        self.push(end, end, with);
        if let Some(s) = self.splices.last_mut() {
            s.queue = true;
        }
    }

    /// Removes row `index` of the queue.
    pub fn remove_waiter(&mut self, index: usize) {
        let r = self.queue.rows[index].clone();
        let end = self.virtual_offset(r.end);
        self.push(r.start, end, String::new());
    }

    /// Rewrites row `index` of the queue with `w` (a renewed lease).
    pub fn replace_waiter(&mut self, index: usize, w: &Waiter) {
        let r = self.queue.rows[index].clone();
        let old = &self.text[r.clone()];
        let body_len = old.trim_end_matches(['\n', '\r']).len();
        let line = row_line(&self.queue, |c| waiter_value(w, c));
        self.push(r.start, r.start + body_len, line);
    }

    /// The text with every recorded edit applied.
    pub fn render(&self) -> String {
        let unterminated = self.unterminated();
        let text: std::borrow::Cow<'_, str> = if unterminated {
            format!("{}{}", self.text, self.eol).into()
        } else {
            self.text.as_str().into()
        };
        let mut sp: Vec<&Splice> = self.splices.iter().collect();
        sp.sort_by_key(|s| (s.start, s.end > s.start, s.seq));
        let extra: usize = sp.iter().map(|s| s.with.len()).sum();
        let mut out = String::with_capacity(text.len() + extra);
        let mut pos = 0;
        for s in sp {
            if s.start < pos {
                // Two edits of one row: the planner never does this.
                continue;
            }
            out.push_str(&text[pos..s.start]);
            out.push_str(&s.with);
            pos = s.end;
        }
        out.push_str(&text[pos..]);
        if unterminated && out.ends_with(self.eol) {
            out.truncate(out.len() - self.eol.len());
        }
        out
    }
}

/// An empty registry with the default language's headings: what
/// `empty_registry_in(Language::French)` gives, kept as the base of the
/// unit, property and fuzz tests' registries (`bsi init` writes
/// [`empty_registry_in`] in the brain's language).
pub fn empty_registry() -> String {
    empty_registry_in(Language::French)
}

/// An empty registry whose headings are in `lang`.
pub fn empty_registry_in(lang: Language) -> String {
    let table = |kind: TableKind| {
        let cols = kind.default_columns();
        let head = format!("| {} |", cols.join(" | "));
        let delim = format!(
            "|{}|",
            cols.iter()
                .map(|c| "-".repeat(c.chars().count() + 2))
                .collect::<Vec<_>>()
                .join("|")
        );
        format!("## {}\n\n{head}\n{delim}\n", kind.heading_in(lang))
    };
    format!(
        "# BRAIN-INDEX\n\n\
         Registry of the sessions working in this brain, kept by `bsi`.\n\
         Do not edit by hand: use `bsi open`, `bsi close`, `bsi watchdog`, `bsi release`.\n\n\
         {}\n{}\n{}",
        table(TableKind::Active),
        table(TableKind::Stale),
        table(TableKind::History)
    )
}
