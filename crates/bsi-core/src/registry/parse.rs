//! Reading `BRAIN-INDEX.md`.
//!
//! A line scanner that follows the GFM rules the registry relies on: ATX
//! headings, fenced code blocks (whose content is never a heading or a table),
//! and pipe tables made of a header row, a delimiter row and body rows up to the
//! first line that is not a row. It runs at memchr speed and records where each
//! row lies, so a 100,000-row history costs one pass and no allocation per
//! row. A differential test checks it against pulldown-cmark's table parser.

use std::collections::HashSet;
use std::ops::Range;

use chrono::TimeZone;

use super::{Claim, Language, Registry, Table, TableKind, Waiter, col};
use crate::scope::{Level, Scope};
use crate::ttl;

/// The registry could not be understood. Nothing is written when this happens.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}", line_prefix(.line), .reason)]
pub struct ParseError {
    /// 1-based line; 0 when the problem is the file as a whole.
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

/// `line N: `, or nothing when the problem is the file as a whole.
fn line_prefix(line: &usize) -> String {
    if *line == 0 {
        String::new()
    } else {
        format!("line {line}: ")
    }
}

fn err<T>(line: usize, reason: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        line,
        reason: reason.into(),
    })
}

/// A line of the text with its place.
struct Line<'a> {
    no: usize,
    start: usize,
    /// Without the line ending.
    text: &'a str,
    /// Offset just past the line ending.
    end: usize,
}

fn lines(text: &str) -> impl Iterator<Item = Line<'_>> {
    let mut pos = 0;
    text.split_inclusive('\n').enumerate().map(move |(i, raw)| {
        let start = pos;
        pos += raw.len();
        let body = raw.strip_suffix('\n').unwrap_or(raw);
        let body = body.strip_suffix('\r').unwrap_or(body);
        Line {
            no: i + 1,
            start,
            text: body,
            end: pos,
        }
    })
}

/// Normalises a heading for comparison with the three table headings:
/// case, runs of spaces and the kind of dash do not matter.
fn heading_norm(s: &str) -> String {
    s.split_whitespace()
        .map(|w| if w == "-" || w == "–" { "—" } else { w })
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// An ATX heading: `(level, text)`.
pub(crate) fn atx_heading(line: &str) -> Option<(usize, &str)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let level = trimmed.bytes().take_while(|&b| b == b'#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = &trimmed[level..];
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    let mut text = rest.trim();
    // An optional closing sequence of #s, preceded by a space.
    let no_hashes = text.trim_end_matches('#');
    if no_hashes.len() < text.len() && (no_hashes.is_empty() || no_hashes.ends_with([' ', '\t'])) {
        text = no_hashes.trim_end();
    }
    Some((level, text))
}

/// The opening of a fenced code block: its character and length.
fn fence_open(line: &str) -> Option<(u8, usize)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let c = *trimmed.as_bytes().first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = trimmed.bytes().take_while(|&b| b == c).count();
    if n < 3 || (c == b'`' && trimmed[n..].contains('`')) {
        return None;
    }
    Some((c, n))
}

fn fence_close(line: &str, c: u8, n: usize) -> bool {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return false;
    }
    let m = trimmed.bytes().take_while(|&b| b == c).count();
    m >= n && trimmed[m..].trim().is_empty()
}

/// Splits a table row into raw cells (still escaped). Returns `None` when the
/// line holds no unescaped `|`, so it is not a row.
pub(crate) fn split_row(line: &str) -> Option<Vec<&str>> {
    let s = line.trim();
    let mut cells = Vec::new();
    let mut start = 0;
    let mut last = None;
    for i in unescaped_pipes(s) {
        cells.push(&s[start..i]);
        start = i + 1;
        last = Some(i);
    }
    let last = last?;
    cells.push(&s[start..]);
    // A leading and a trailing pipe delimit the row; they are not cells.
    if s.starts_with('|') {
        cells.remove(0);
    }
    if last + 1 == s.len() {
        cells.pop();
    }
    Some(cells.into_iter().map(str::trim).collect())
}

/// Byte offsets of the `|` in `s` that separate cells (not escaped by `\`).
fn unescaped_pipes(s: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = s.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 2,
                b'|' => {
                    i += 1;
                    return Some(i - 1);
                }
                _ => i += 1,
            }
        }
        None
    })
}

/// Reads an escaped cell: `\|` is `|`, `\\` is `\`; other backslashes stay.
pub fn unescape_cell(raw: &str) -> String {
    if !raw.contains('\\') {
        return raw.to_string();
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&n) = chars.peek()
            && (n == '|' || n == '\\')
        {
            out.push(n);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

fn is_delimiter_row(cells: &[&str]) -> bool {
    !cells.is_empty()
        && cells.iter().all(|c| {
            let c = c.trim();
            let c = c.strip_prefix(':').unwrap_or(c);
            let c = c.strip_suffix(':').unwrap_or(c);
            !c.is_empty() && c.bytes().all(|b| b == b'-')
        })
}

/// Where one of the three headings was seen.
struct Found {
    kind: TableKind,
    line: usize,
}

const KINDS: [TableKind; 3] = [TableKind::Active, TableKind::Stale, TableKind::History];
/// The tables a heading may open: the three required ones, then the
/// optional queue.
const HEADED: [TableKind; 4] = super::ALL_TABLES;

/// The first pass over the file: where the three tables lie, line by line.
struct Scan {
    tables: [Option<Table>; 4],
    /// The one of our headings whose section is being read.
    current: Option<Found>,
    /// A header row under the current heading, waiting for its delimiter row.
    header: Option<(usize, Vec<String>)>,
    /// Whether the lines are body rows of the current heading's table.
    in_body: bool,
    fence: Option<(u8, usize)>,
    /// A row-like line under one of our headings that no delimiter row followed.
    suspect: Option<(usize, TableKind)>,
    /// The first history row with too many cells: (line, cells, columns).
    bad_history: Option<(usize, usize, usize)>,
    /// A table of ours ended at this blank line: a row-like line next would
    /// be a row silently cut off from it.
    cut: Option<(usize, TableKind)>,
    /// Each heading in either language: French (the spec's) or English.
    norms: Vec<[String; 2]>,
    language: Language,
}

/// The three tables found, in the order of [`KINDS`].
struct Tables {
    active: Table,
    stale: Table,
    history: Table,
    queue: Option<Table>,
    language: Language,
}

/// Parses a registry, with timestamps lacking an offset read in `local`.
pub fn parse_in<Tz: TimeZone>(text: String, local: &Tz) -> Result<Registry, ParseError> {
    reject_nul(&text)?;
    // New rows take the line ending of the file's first line.
    let eol = match text.find('\n') {
        Some(i) if text[..i].ends_with('\r') => "\r\n",
        _ => "\n",
    };
    let mut scan = Scan::new();
    for line in lines(&text) {
        scan.line(&line)?;
    }
    let Tables {
        active,
        stale,
        history,
        queue,
        language,
    } = scan.finish()?;
    let active_claims = read_claims(&text, &active, TableKind::Active, local)?;
    let stale_claims = read_claims(&text, &stale, TableKind::Stale, local)?;
    check_no_duplicate(&active, &active_claims, &stale, &stale_claims)?;
    let queue_present = queue.is_some();
    let queue = queue.unwrap_or_else(|| Table {
        heading_line: 0,
        columns: TableKind::Queue
            .default_columns()
            .iter()
            .map(|c| (*c).to_string())
            .collect(),
        rows: Vec::new(),
        first_row_line: 0,
        end: text.len(),
    });
    let waiters = read_waiters(&text, &queue, local)?;
    Ok(Registry {
        text: std::sync::Arc::new(text),
        eol,
        active,
        stale,
        history,
        queue,
        queue_present,
        waiters,
        active_claims,
        stale_claims,
        splices: Vec::new(),
        language,
    })
}

/// A NUL byte means the file is not a text registry.
fn reject_nul(text: &str) -> Result<(), ParseError> {
    if let Some(at) = text.find('\0') {
        let line = text[..at].matches('\n').count() + 1;
        return err(
            line,
            "the file contains a NUL byte; it is not a text registry",
        );
    }
    Ok(())
}

impl Scan {
    fn new() -> Scan {
        Scan {
            tables: [None, None, None, None],
            current: None,
            header: None,
            in_body: false,
            fence: None,
            suspect: None,
            bad_history: None,
            cut: None,
            norms: HEADED
                .iter()
                .map(|k| {
                    [
                        heading_norm(k.heading_in(Language::French)),
                        heading_norm(k.heading_in(Language::English)),
                    ]
                })
                .collect(),
            language: Language::French,
        }
    }

    /// One line: inside a fence, after a table's end, a body row, a fence
    /// opening or a heading, or a line under one of our headings.
    fn line(&mut self, line: &Line<'_>) -> Result<(), ParseError> {
        let body = if line.no == 1 {
            line.text.strip_prefix('\u{feff}').unwrap_or(line.text)
        } else {
            line.text
        };
        if self.in_fence(body) || self.after_cut(line.no, body)? || self.body_row(line, body) {
            return Ok(());
        }
        if let Some(f) = fence_open(body) {
            self.fence = Some(f);
            self.header = None;
            return Ok(());
        }
        if let Some((level, h)) = atx_heading(body) {
            return self.heading(line.no, level, h);
        }
        self.table_start(line, body)
    }

    /// Whether the line is inside a fenced code block (or closes it).
    fn in_fence(&mut self, body: &str) -> bool {
        let Some((c, n)) = self.fence else {
            return false;
        };
        if fence_close(body, c, n) {
            self.fence = None;
        }
        true
    }

    /// After a blank line that ended one of our tables: blank lines are
    /// skipped (`true`), and a row next is an error.
    fn after_cut(&mut self, no: usize, body: &str) -> Result<bool, ParseError> {
        let Some((blank, kind)) = self.cut else {
            return Ok(false);
        };
        if body.trim().is_empty() {
            return Ok(true);
        }
        self.cut = None;
        if row_cell_count(body).is_some() && atx_heading(body).is_none() {
            return err(
                no,
                format!(
                    "this row comes after the blank line on line {blank}, which ends the `## {}` table: the rows after it are not part of the table. Remove the blank line so the rows are read again",
                    kind.heading()
                ),
            );
        }
        Ok(false)
    }

    /// A body row of the table being read (`true`), or the line that ends it.
    fn body_row(&mut self, line: &Line<'_>, body: &str) -> bool {
        if !self.in_body {
            return false;
        }
        let Some(found) = self.current.as_ref() else {
            self.in_body = false;
            return true;
        };
        let t = self.tables[found.kind as usize]
            .as_mut()
            .expect("table exists while its body is read");
        if let Some(cells) = row_cell_count(body)
            && atx_heading(body).is_none()
        {
            if t.rows.is_empty() {
                t.first_row_line = line.no;
            }
            // History rows are only checked for their cell count: bsi
            // never rewrites them, so their content is not read on the
            // write path. The first bad one is reported once the whole
            // file is known to be a registry.
            if found.kind == TableKind::History
                && cells > t.columns.len()
                && self.bad_history.is_none()
            {
                self.bad_history = Some((line.no, cells, t.columns.len()));
            }
            t.rows.push(line.start..line.end);
            t.end = line.end;
            return true;
        }
        if body.trim().is_empty() {
            self.cut = Some((line.no, found.kind));
        }
        self.in_body = false;
        self.current = None;
        false
    }

    /// A heading: one of our three `##` (once each), or any other, which
    /// ends the current section.
    fn heading(&mut self, no: usize, level: usize, h: &str) -> Result<(), ParseError> {
        self.header = None;
        self.current = None;
        if level != 2 {
            return Ok(());
        }
        let n = heading_norm(h);
        let Some(i) = self.norms.iter().position(|x| x.contains(&n)) else {
            return Ok(());
        };
        if HEADED[i] == TableKind::Active && self.norms[i][1] == n {
            self.language = Language::English;
        }
        if let Some(prev) = &self.tables[i] {
            return err(
                no,
                format!(
                    "a second `## {}` heading (the first is on line {})",
                    HEADED[i].heading(),
                    prev.heading_line
                ),
            );
        }
        self.current = Some(Found {
            kind: HEADED[i],
            line: no,
        });
        Ok(())
    }

    /// Under one of our headings, waiting for its table: a header row, then
    /// its delimiter row.
    fn table_start(&mut self, line: &Line<'_>, body: &str) -> Result<(), ParseError> {
        let Some(found) = self.current.as_ref() else {
            return Ok(());
        };
        if self.tables[found.kind as usize].is_some() {
            // A second table in the same section is prose to us.
            return Ok(());
        }
        match (&self.header, split_row(body)) {
            (None, Some(cells)) => {
                self.header = Some((line.no, cells.iter().map(|c| unescape_cell(c)).collect()));
            }
            (Some((hline, cols)), Some(cells)) if is_delimiter_row(&cells) => {
                if cells.len() != cols.len() {
                    return err(
                        line.no,
                        format!(
                            "the delimiter row has {} cells but the header on line {} has {}",
                            cells.len(),
                            hline,
                            cols.len()
                        ),
                    );
                }
                self.tables[found.kind as usize] = Some(Table {
                    heading_line: found.line,
                    columns: cols.clone(),
                    rows: Vec::new(),
                    first_row_line: line.no + 1,
                    end: line.end,
                });
                self.header = None;
                self.in_body = true;
            }
            (Some((hline, _)), other) => {
                // Not a table after all: GFM reads these lines as a paragraph.
                self.suspect.get_or_insert((*hline, found.kind));
                let next =
                    other.map(|cells| (line.no, cells.iter().map(|c| unescape_cell(c)).collect()));
                self.header = next;
            }
            (None, None) => {}
        }
        Ok(())
    }

    /// The end of the file: all three tables, their columns, then the first
    /// history row with too many cells.
    fn finish(self) -> Result<Tables, ParseError> {
        let [a, s, h, queue] = self.tables;
        let mut out: Vec<Table> = Vec::with_capacity(3);
        for (i, t) in [a, s, h].into_iter().enumerate() {
            match t {
                Some(t) => out.push(t),
                None => return missing_table(KINDS[i], self.suspect),
            }
        }
        // The queue is optional, but a header of it without a delimiter
        // row is not silently no queue.
        if queue.is_none()
            && let Some((line, TableKind::Queue)) = self.suspect
        {
            return missing_table(TableKind::Queue, Some((line, TableKind::Queue)));
        }
        if let Some(q) = &queue {
            check_columns(q, TableKind::Queue)?;
        }
        let history = out.pop().expect("three tables");
        let stale = out.pop().expect("three tables");
        let active = out.pop().expect("three tables");
        for (t, kind) in [
            (&active, TableKind::Active),
            (&stale, TableKind::Stale),
            (&history, TableKind::History),
        ] {
            check_columns(t, kind)?;
        }
        if let Some((line, cells, n)) = self.bad_history {
            return err(
                line,
                format!(
                    "this `## {}` row has {cells} cells but the header has {n}",
                    TableKind::History.heading()
                ),
            );
        }
        Ok(Tables {
            active,
            stale,
            history,
            queue,
            language: self.language,
        })
    }
}

/// The error for a table that was not found: a header without its
/// delimiter row, or no table at all.
fn missing_table<T>(kind: TableKind, suspect: Option<(usize, TableKind)>) -> Result<T, ParseError> {
    if let Some((line, k)) = suspect
        && k == kind
    {
        return err(
            line,
            format!(
                "the table under `## {}` has no delimiter row (`|---|---|`) after its header; it is not a GFM table",
                k.heading()
            ),
        );
    }
    err(
        0,
        format!(
            "no table under a `## {}` heading; a registry needs `## {}`, `## {}` and `## {}` (or, in English, `## {}`, `## {}` and `## {}`), each with its table",
            kind.heading(),
            KINDS[0].heading(),
            KINDS[1].heading(),
            KINDS[2].heading(),
            KINDS[0].heading_in(Language::English),
            KINDS[1].heading_in(Language::English),
            KINDS[2].heading_in(Language::English)
        ),
    )
}

/// A session holds each scope once across the active and stale tables.
fn check_no_duplicate(
    active: &Table,
    active_claims: &[Claim],
    stale: &Table,
    stale_claims: &[Claim],
) -> Result<(), ParseError> {
    let mut seen: HashSet<(&str, &Scope)> = HashSet::new();
    for (i, c) in active_claims.iter().chain(stale_claims.iter()).enumerate() {
        if !seen.insert((c.session.as_str(), &c.scope)) {
            let (t, idx) = if i < active_claims.len() {
                (active, i)
            } else {
                (stale, i - active_claims.len())
            };
            return err(
                t.first_row_line + idx,
                format!(
                    "session {} holds scope {} twice; remove the duplicate row by hand and commit",
                    c.session, c.scope
                ),
            );
        }
    }
    Ok(())
}

/// Parses a registry with the machine's local time zone.
pub fn parse(text: String) -> Result<Registry, ParseError> {
    parse_in(text, &chrono::Local)
}

fn check_columns(t: &Table, kind: TableKind) -> Result<(), ParseError> {
    let mut seen = HashSet::new();
    for c in &t.columns {
        if !seen.insert(c.to_lowercase()) {
            return err(
                t.first_row_line.saturating_sub(2),
                format!("the table `## {}` has two `{c}` columns", kind.heading()),
            );
        }
    }
    for req in kind.required() {
        if t.column(req).is_none() {
            return err(
                t.first_row_line.saturating_sub(2),
                format!(
                    "the table `## {}` has no `{req}` column (it has: {})",
                    kind.heading(),
                    t.columns.join(", ")
                ),
            );
        }
    }
    Ok(())
}

/// The number of cells of a table row, or `None` when the line is not a row
/// (blank, or no unescaped `|`). Counts as [`split_row`] splits, without
/// allocating: this runs on every history row.
fn row_cell_count(line: &str) -> Option<usize> {
    let s = line.trim();
    let bytes = s.as_bytes();
    // One pass counts the pipes and looks for escapes, in blocks the
    // compiler vectorises; a row with a `\\` is counted again, escapes
    // honoured.
    let mut pipes = 0;
    let mut escaped = false;
    for block in bytes.chunks(128) {
        let (mut p, mut e) = (0u8, 0u8);
        for &b in block {
            p += u8::from(b == b'|');
            e |= u8::from(b == b'\\');
        }
        pipes += usize::from(p);
        escaped |= e != 0;
    }
    let trailing = if escaped {
        let mut last = None;
        pipes = 0;
        for i in unescaped_pipes(s) {
            pipes += 1;
            last = Some(i);
        }
        last.is_some_and(|i| i + 1 == s.len())
    } else {
        s.ends_with('|')
    };
    if pipes == 0 {
        return None;
    }
    Some(pipes + 1 - usize::from(s.starts_with('|')) - usize::from(trailing))
}

/// Cells of a row by column, unescaped. Errors on too many cells.
pub(crate) fn row_cells(
    text: &str,
    t: &Table,
    row: &Range<usize>,
    line_no: usize,
    kind: TableKind,
) -> Result<Vec<String>, ParseError> {
    let line = text[row.clone()].trim_end_matches(['\n', '\r']);
    let cells = split_row(line).unwrap_or_default();
    if cells.len() > t.columns.len() {
        return err(
            line_no,
            format!(
                "this `## {}` row has {} cells but the header has {}",
                kind.heading(),
                cells.len(),
                t.columns.len()
            ),
        );
    }
    let mut out: Vec<String> = cells.iter().map(|c| unescape_cell(c)).collect();
    out.resize(t.columns.len(), String::new());
    Ok(out)
}

/// Where a claim table keeps each field.
struct ClaimColumns {
    session: usize,
    scope: usize,
    level: usize,
    opened: usize,
    expires: usize,
    agent: Option<usize>,
    note: Option<usize>,
    reason: Option<usize>,
}

impl ClaimColumns {
    fn of(t: &Table) -> Result<ClaimColumns, ParseError> {
        let idx = |name| t.column(name);
        let (Some(session), Some(scope), Some(level), Some(opened), Some(expires)) = (
            idx(col::SESSION),
            idx(col::SCOPE),
            idx(col::LEVEL),
            idx(col::OPENED),
            idx(col::EXPIRES),
        ) else {
            return err(t.heading_line, "missing columns");
        };
        Ok(ClaimColumns {
            session,
            scope,
            level,
            opened,
            expires,
            agent: idx(col::AGENT),
            note: idx(col::NOTE),
            reason: idx(col::REASON),
        })
    }

    /// Whether column `i` is one bsi reads (the others are kept as they are).
    fn known(&self, i: usize) -> bool {
        [
            self.session,
            self.scope,
            self.level,
            self.opened,
            self.expires,
        ]
        .contains(&i)
            || [self.agent, self.note, self.reason].contains(&Some(i))
    }
}

fn read_claims<Tz: TimeZone>(
    text: &str,
    t: &Table,
    kind: TableKind,
    local: &Tz,
) -> Result<Vec<Claim>, ParseError> {
    let cols = ClaimColumns::of(t)?;
    let mut claims = Vec::with_capacity(t.rows.len());
    for (n, row) in t.rows.iter().enumerate() {
        let line = t.first_row_line + n;
        let cells = row_cells(text, t, row, line, kind)?;
        claims.push(read_claim(t, &cols, cells, line, local)?);
    }
    Ok(claims)
}

/// One claim row, checked: text cells, a session, a scope and its level,
/// two times in order.
fn read_claim<Tz: TimeZone>(
    t: &Table,
    cols: &ClaimColumns,
    cells: Vec<String>,
    line: usize,
    local: &Tz,
) -> Result<Claim, ParseError> {
    let (session, scope) = read_head(&cells, cols.session, cols.scope, line)?;
    check_level(&cells[cols.level], &scope, line)?;
    let opened = read_time(&cells[cols.opened], line, local)?;
    let expires = read_time(&cells[cols.expires], line, local)?;
    if expires < opened {
        return err(line, "the claim expires before it was opened");
    }
    let extra = extra_cells(t, &cells, |i| cols.known(i));
    Ok(Claim {
        session,
        scope,
        agent: cols.agent.map(|i| cells[i].clone()).unwrap_or_default(),
        opened,
        expires,
        note: cols.note.map(|i| cells[i].clone()).unwrap_or_default(),
        reason: cols.reason.map(|i| cells[i].clone()),
        extra,
    })
}

/// What a claim row and a queue row check first: text cells only, a
/// session, a scope.
fn read_head(
    cells: &[String],
    session: usize,
    scope: usize,
    line: usize,
) -> Result<(String, Scope), ParseError> {
    if cells
        .iter()
        .any(|c| c.chars().any(|ch| ch.is_control() && ch != '\t'))
    {
        return err(
            line,
            "a cell holds a control character (a stray carriage return?)",
        );
    }
    let who = cells[session].trim().to_string();
    if who.is_empty() {
        return err(line, "the `Session` cell is empty");
    }
    let scope = Scope::parse_stored(&cells[scope]).map_err(|e| ParseError {
        line,
        reason: format!("bad scope: {e}"),
    })?;
    Ok((who, scope))
}

/// The cells of the columns bsi does not know, by column name, kept as
/// they are.
fn extra_cells(
    t: &Table,
    cells: &[String],
    known: impl Fn(usize) -> bool,
) -> Vec<(String, String)> {
    t.columns
        .iter()
        .enumerate()
        .filter(|(i, _)| !known(*i))
        .map(|(i, c)| (c.clone(), cells[i].clone()))
        .collect()
}

/// The `Level` cell names a level, and the scope's own.
fn check_level(cell: &str, scope: &Scope, line: usize) -> Result<(), ParseError> {
    let level_cell = cell.trim();
    let Some(level) = Level::parse(level_cell) else {
        return err(
            line,
            format!("unknown level `{level_cell}` (expected global, dir, file or section)"),
        );
    };
    if level != scope.level() {
        return err(
            line,
            format!(
                "level `{level}` does not match scope `{scope}`, which is a {} scope",
                scope.level()
            ),
        );
    }
    Ok(())
}

fn read_time<Tz: TimeZone>(
    cell: &str,
    line: usize,
    local: &Tz,
) -> Result<chrono::DateTime<chrono::FixedOffset>, ParseError> {
    ttl::parse_ts(cell, local).ok_or_else(|| ParseError {
        line,
        reason: format!("`{cell}` is not a time (expected YYYY-MM-DD HH:MM ±HH:MM)"),
    })
}

/// The rows of the queue: a session, a scope, two times; a row bsi cannot
/// read is an error like a claim's.
fn read_waiters<Tz: TimeZone>(
    text: &str,
    t: &Table,
    local: &Tz,
) -> Result<Vec<Waiter>, ParseError> {
    let (Some(session), Some(scope), Some(since), Some(lease)) = (
        t.column(col::SESSION),
        t.column(col::SCOPE),
        t.column(col::SINCE),
        t.column(col::LEASE),
    ) else {
        return Ok(Vec::new());
    };
    let agent = t.column(col::AGENT);
    let known = [Some(session), Some(scope), Some(since), Some(lease), agent];
    let mut out = Vec::with_capacity(t.rows.len());
    for (n, row) in t.rows.iter().enumerate() {
        let line = t.first_row_line + n;
        let cells = row_cells(text, t, row, line, TableKind::Queue)?;
        let (who, sc) = read_head(&cells, session, scope, line)?;
        let extra = extra_cells(t, &cells, |i| known.contains(&Some(i)));
        out.push(Waiter {
            session: who,
            scope: sc,
            agent: agent.map(|i| cells[i].clone()).unwrap_or_default(),
            since: read_time(&cells[since], line, local)?,
            lease: read_time(&cells[lease], line, local)?,
            extra,
            seen_ahead: None,
            alive: None,
        });
    }
    Ok(out)
}

/// A history row read back, by column name (for `log`, `verify`, merging).
pub fn history_rows(reg: &Registry) -> Result<Vec<Vec<(String, String)>>, ParseError> {
    let t = &reg.history;
    t.rows
        .iter()
        .enumerate()
        .map(|(n, r)| {
            let cells = row_cells(&reg.text, t, r, t.first_row_line + n, TableKind::History)?;
            Ok(t.columns.iter().cloned().zip(cells).collect())
        })
        .collect()
}
