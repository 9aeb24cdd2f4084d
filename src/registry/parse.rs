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

use super::{Claim, Language, Registry, Table, TableKind, col};
use crate::scope::{Level, Scope};
use crate::ttl;

/// The registry could not be understood. Nothing is written when this happens.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct ParseError {
    /// 1-based line; 0 when the problem is the file as a whole.
    pub line: usize,
    /// What is wrong.
    pub reason: String,
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

/// Parses a registry, with timestamps lacking an offset read in `local`.
pub fn parse_in<Tz: TimeZone>(text: String, local: &Tz) -> Result<Registry, ParseError> {
    if text.contains('\0') {
        let line = text[..text.find('\0').unwrap_or(0)].matches('\n').count() + 1;
        return err(
            line,
            "the file contains a NUL byte; it is not a text registry",
        );
    }
    // New rows take the line ending of the file's first line.
    let eol = match text.find('\n') {
        Some(i) if text[..i].ends_with('\r') => "\r\n",
        _ => "\n",
    };
    let mut tables: [Option<Table>; 3] = [None, None, None];
    let mut current: Option<Found> = None;
    // State of the table being read under the current heading.
    let mut header: Option<(usize, Vec<String>)> = None;
    let mut in_body = false;
    let mut fence: Option<(u8, usize)> = None;
    // A row-like line under one of our headings that no delimiter row followed.
    let mut suspect: Option<(usize, TableKind)> = None;
    // The first history row with too many cells: (line, cells, columns).
    let mut bad_history: Option<(usize, usize, usize)> = None;
    // A table of ours ended at this blank line: a row-like line next would
    // be a row silently cut off from it.
    let mut cut: Option<(usize, TableKind)> = None;

    let kinds = [TableKind::Active, TableKind::Stale, TableKind::History];
    // Each heading in either language: French (the spec's) or English.
    let norms: Vec<[String; 2]> = kinds
        .iter()
        .map(|k| {
            [
                heading_norm(k.heading_in(Language::French)),
                heading_norm(k.heading_in(Language::English)),
            ]
        })
        .collect();
    let mut language = Language::French;

    for line in lines(&text) {
        let body = if line.no == 1 {
            line.text.strip_prefix('\u{feff}').unwrap_or(line.text)
        } else {
            line.text
        };
        if let Some((c, n)) = fence {
            if fence_close(body, c, n) {
                fence = None;
            }
            continue;
        }
        if let Some((blank, kind)) = cut {
            if body.trim().is_empty() {
                continue;
            }
            cut = None;
            if row_cell_count(body).is_some() && atx_heading(body).is_none() {
                return err(
                    line.no,
                    format!(
                        "this row comes after the blank line on line {blank}, which ends the `## {}` table: the rows after it are not part of the table. Remove the blank line so the rows are read again",
                        kind.heading()
                    ),
                );
            }
        }
        // Body rows of the table being read.
        if in_body {
            let Some(found) = current.as_ref() else {
                in_body = false;
                continue;
            };
            let t = tables[found.kind as usize]
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
                    && bad_history.is_none()
                {
                    bad_history = Some((line.no, cells, t.columns.len()));
                }
                t.rows.push(line.start..line.end);
                t.end = line.end;
                continue;
            }
            if body.trim().is_empty() {
                cut = Some((line.no, found.kind));
            }
            in_body = false;
            current = None;
        }
        if let Some(f) = fence_open(body) {
            fence = Some(f);
            header = None;
            continue;
        }
        if let Some((level, h)) = atx_heading(body) {
            header = None;
            current = None;
            if level == 2 {
                let n = heading_norm(h);
                if let Some(i) = norms.iter().position(|x| x.contains(&n)) {
                    if kinds[i] == TableKind::Active && norms[i][1] == n {
                        language = Language::English;
                    }
                    if let Some(prev) = &tables[i] {
                        return err(
                            line.no,
                            format!(
                                "a second `## {}` heading (the first is on line {})",
                                kinds[i].heading(),
                                prev.heading_line
                            ),
                        );
                    }
                    current = Some(Found {
                        kind: kinds[i],
                        line: line.no,
                    });
                }
            }
            continue;
        }
        let Some(found) = current.as_ref() else {
            continue;
        };
        // Under one of our headings, waiting for its table.
        if tables[found.kind as usize].is_some() {
            // A second table in the same section is prose to us.
            continue;
        }
        match (&header, split_row(body)) {
            (None, Some(cells)) => {
                header = Some((line.no, cells.iter().map(|c| unescape_cell(c)).collect()));
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
                tables[found.kind as usize] = Some(Table {
                    heading_line: found.line,
                    columns: cols.clone(),
                    rows: Vec::new(),
                    first_row_line: line.no + 1,
                    end: line.end,
                });
                header = None;
                in_body = true;
            }
            (Some((hline, _)), other) => {
                // Not a table after all: GFM reads these lines as a paragraph.
                suspect.get_or_insert((*hline, found.kind));
                let next =
                    other.map(|cells| (line.no, cells.iter().map(|c| unescape_cell(c)).collect()));
                header = next;
            }
            (None, None) => {}
        }
    }

    let mut out: Vec<Table> = Vec::with_capacity(3);
    for (i, t) in tables.into_iter().enumerate() {
        match t {
            Some(t) => out.push(t),
            None => {
                if let Some((line, kind)) = suspect
                    && kind == kinds[i]
                {
                    return err(
                        line,
                        format!(
                            "the table under `## {}` has no delimiter row (`|---|---|`) after its header; it is not a GFM table",
                            kind.heading()
                        ),
                    );
                }
                return err(
                    0,
                    format!(
                        "no table under a `## {}` heading; a registry needs `## {}`, `## {}` and `## {}` (or, in English, `## {}`, `## {}` and `## {}`), each with its table",
                        kinds[i].heading(),
                        kinds[0].heading(),
                        kinds[1].heading(),
                        kinds[2].heading(),
                        kinds[0].heading_in(Language::English),
                        kinds[1].heading_in(Language::English),
                        kinds[2].heading_in(Language::English)
                    ),
                );
            }
        }
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
    if let Some((line, cells, n)) = bad_history {
        return err(
            line,
            format!(
                "this `## {}` row has {cells} cells but the header has {n}",
                TableKind::History.heading()
            ),
        );
    }

    let active_claims = read_claims(&text, &active, TableKind::Active, local)?;
    let stale_claims = read_claims(&text, &stale, TableKind::Stale, local)?;
    let mut seen: HashSet<(&str, &Scope)> = HashSet::new();
    for (i, c) in active_claims.iter().chain(stale_claims.iter()).enumerate() {
        if !seen.insert((c.session.as_str(), &c.scope)) {
            let (t, idx) = if i < active_claims.len() {
                (&active, i)
            } else {
                (&stale, i - active_claims.len())
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
    Ok(Registry {
        text: std::sync::Arc::new(text),
        eol,
        active,
        stale,
        history,
        active_claims,
        stale_claims,
        splices: Vec::new(),
        language,
    })
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

fn read_claims<Tz: TimeZone>(
    text: &str,
    t: &Table,
    kind: TableKind,
    local: &Tz,
) -> Result<Vec<Claim>, ParseError> {
    let idx = |name| t.column(name);
    let (Some(i_sess), Some(i_scope), Some(i_level), Some(i_open), Some(i_exp)) = (
        idx(col::SESSION),
        idx(col::SCOPE),
        idx(col::LEVEL),
        idx(col::OPENED),
        idx(col::EXPIRES),
    ) else {
        return err(t.heading_line, "missing columns");
    };
    let i_agent = idx(col::AGENT);
    let i_note = idx(col::NOTE);
    let i_reason = idx(col::REASON);
    let known: Vec<usize> = [
        Some(i_sess),
        Some(i_scope),
        Some(i_level),
        Some(i_open),
        Some(i_exp),
        i_agent,
        i_note,
        i_reason,
    ]
    .into_iter()
    .flatten()
    .collect();

    let mut claims = Vec::with_capacity(t.rows.len());
    for (n, row) in t.rows.iter().enumerate() {
        let line = t.first_row_line + n;
        let cells = row_cells(text, t, row, line, kind)?;
        if cells
            .iter()
            .any(|c| c.chars().any(|ch| ch.is_control() && ch != '\t'))
        {
            return err(
                line,
                "a cell holds a control character (a stray carriage return?)",
            );
        }
        let session = cells[i_sess].trim().to_string();
        if session.is_empty() {
            return err(line, "the `Session` cell is empty");
        }
        let scope = Scope::parse_stored(&cells[i_scope]).map_err(|e| ParseError {
            line,
            reason: format!("bad scope: {e}"),
        })?;
        let level_cell = cells[i_level].trim();
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
        let opened = ttl::parse_ts(&cells[i_open], local).ok_or_else(|| ParseError {
            line,
            reason: format!(
                "`{}` is not a time (expected YYYY-MM-DD HH:MM ±HH:MM)",
                cells[i_open]
            ),
        })?;
        let expires = ttl::parse_ts(&cells[i_exp], local).ok_or_else(|| ParseError {
            line,
            reason: format!(
                "`{}` is not a time (expected YYYY-MM-DD HH:MM ±HH:MM)",
                cells[i_exp]
            ),
        })?;
        if expires < opened {
            return err(line, "the claim expires before it was opened");
        }
        let extra = t
            .columns
            .iter()
            .enumerate()
            .filter(|(i, _)| !known.contains(i))
            .map(|(i, c)| (c.clone(), cells[i].clone()))
            .collect();
        claims.push(Claim {
            session,
            scope,
            agent: i_agent.map(|i| cells[i].clone()).unwrap_or_default(),
            opened,
            expires,
            note: i_note.map(|i| cells[i].clone()).unwrap_or_default(),
            reason: i_reason.map(|i| cells[i].clone()),
            extra,
        });
    }
    Ok(claims)
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
