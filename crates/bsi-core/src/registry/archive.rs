//! A registry that stays small: old rows of `## Historique` move, byte for
//! byte, to one archive file per month on the registry branch
//! (`archive/2026-03.md`), so the cost of a write does not grow with the age
//! of the brain. Pure: a registry in, the kept text and the moved rows out.
//!
//! The rule: when the history holds more than twice `keep` rows, the oldest
//! rows move out until `keep` are left (the history is appended in time
//! order, so the oldest are the first). The doubling keeps archiving rare:
//! once every `keep` closings, not at every write. Each moved row goes to
//! the month of its closing time (`Fermé`), else of its opening, else to
//! `undated`.

use super::parse::{history_rows, parse};
use super::{Registry, TableKind, col};

/// The directory of the archive files on the registry branch.
pub const ARCHIVE_DIR: &str = "archive";

/// What archiving a registry does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// The registry text without the moved rows.
    pub kept: String,
    /// For each month (`2026-03`, or `undated`), in first-seen order, the
    /// moved rows, each with its own line ending.
    pub moved: Vec<(String, String)>,
}

/// The archive file of `month`.
pub fn archive_path(month: &str) -> String {
    format!("{ARCHIVE_DIR}/{month}.md")
}

/// The rows to move, or `None` when the history is within bounds.
pub fn split(reg: &Registry, keep: usize) -> Option<Split> {
    let t = reg.table(TableKind::History);
    let n = t.rows.len();
    let keep = keep.max(1);
    if n <= keep.saturating_mul(2) {
        return None;
    }
    let out = n - keep;
    let cells = history_rows(reg).ok()?;
    let text = reg.text();
    let mut moved: Vec<(String, String)> = Vec::new();
    for (i, range) in t.rows[..out].iter().enumerate() {
        let month = month_of(&cells[i]);
        let row = &text[range.clone()];
        match moved.iter_mut().find(|(m, _)| *m == month) {
            Some((_, rows)) => rows.push_str(row),
            None => moved.push((month, row.to_string())),
        }
    }
    // Rows are consecutive lines: one cut removes them all. The last row of
    // the table stays (keep ≥ 1), so every moved row has its line ending.
    let cut = t.rows[0].start..t.rows[out - 1].end;
    let mut kept = String::with_capacity(text.len() - cut.len());
    kept.push_str(&text[..cut.start]);
    kept.push_str(&text[cut.end..]);
    Some(Split { kept, moved })
}

fn month_of(row: &[(String, String)]) -> String {
    let cell = |name: &str| {
        row.iter()
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_string())
    };
    [col::H_CLOSED, col::H_OPENED]
        .iter()
        .filter_map(|c| cell(c))
        .find_map(|v| {
            let b = v.as_bytes();
            let ok = b.len() >= 7
                && b[..4].iter().all(u8::is_ascii_digit)
                && b[4] == b'-'
                && b[5..7].iter().all(u8::is_ascii_digit);
            ok.then(|| v[..7].to_string())
        })
        .unwrap_or_else(|| "undated".to_string())
}

/// The text of an archive file after `rows` are appended to `existing`
/// (`None`: a new file, whose history table takes the header of `reg`).
/// An archive file is itself a registry whose claim tables stay empty, so
/// everything that reads history rows reads it the same way.
pub fn append(existing: Option<&str>, reg: &Registry, month: &str, rows: &str) -> String {
    let mut out = match existing {
        Some(e) => e.to_string(),
        None => new_file(reg, month),
    };
    if !out.is_empty() && !out.ends_with('\n') {
        out.push_str(reg.eol);
    }
    out.push_str(rows);
    out
}

fn new_file(reg: &Registry, month: &str) -> String {
    let eol = reg.eol;
    let head = header_lines(reg);
    let empty = |kind: TableKind| {
        let cols = kind.default_columns();
        format!(
            "## {h}{eol}{eol}| {c} |{eol}|{d}|{eol}",
            h = kind.heading(),
            c = cols.join(" | "),
            d = cols.iter().map(|_| "---").collect::<Vec<_>>().join("|")
        )
    };
    format!(
        "# BRAIN-INDEX — archive {month}{eol}{eol}History rows moved out of `## {h}` of BRAIN-INDEX.md, byte for byte, oldest first. bsi appends here; `bsi log` and `bsi verify` read them. The claim tables stay empty.{eol}{eol}{a}{eol}{s}{eol}## {h}{eol}{eol}{head}",
        h = TableKind::History.heading(),
        a = empty(TableKind::Active),
        s = empty(TableKind::Stale),
    )
}

/// The header and delimiter lines of the history table, as written.
fn header_lines(reg: &Registry) -> String {
    let t = reg.table(TableKind::History);
    let text = reg.text();
    let before = match t.rows.first() {
        Some(r) => &text[..r.start],
        None => &text[..t.end],
    };
    let mut lines: Vec<&str> = before.split_inclusive('\n').collect();
    let n = lines.len();
    lines.drain(..n.saturating_sub(2));
    let mut out: String = lines.concat();
    if !out.ends_with('\n') {
        out.push_str(reg.eol);
    }
    out
}

/// The history rows of an archive file's text, or `None` when it does not
/// read as a registry.
pub fn rows_of(text: &str) -> Option<Vec<Vec<(String, String)>>> {
    let reg = parse(text.to_string()).ok()?;
    history_rows(&reg).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::render::empty_registry;

    fn with_history(n: usize) -> Registry {
        let mut text = empty_registry();
        for i in 0..n {
            let month = if i < n / 2 { "02" } else { "03" };
            text.push_str(&format!(
                "| s{i} | d/f{i}.md | file | a | 2026-{month}-01 09:00 +00:00 | 2026-{month}-01 10:00 +00:00 | completed | row {i} |\n"
            ));
        }
        parse(text).expect("registry")
    }

    #[test]
    fn within_bounds_nothing_moves() {
        assert_eq!(split(&with_history(10), 5), None);
        assert_eq!(split(&with_history(0), 5), None);
    }

    #[test]
    fn the_oldest_rows_move_byte_for_byte_by_month() {
        let reg = with_history(12);
        let s = split(&reg, 5).expect("split");
        let kept = parse(s.kept.clone()).expect("kept parses");
        assert_eq!(kept.history_len(), 5);
        assert!(s.kept.contains("| s7 |") && !s.kept.contains("| s6 |"));
        assert_eq!(s.moved.len(), 2);
        assert_eq!(s.moved[0].0, "2026-02");
        assert_eq!(s.moved[1].0, "2026-03");
        // Every byte is either kept or moved, in order.
        let moved: String = s.moved.iter().map(|(_, r)| r.as_str()).collect();
        let cut = reg.table(TableKind::History).rows[0].start;
        assert_eq!(
            format!("{}{moved}{}", &s.kept[..cut], &s.kept[cut..]),
            reg.text()
        );
    }

    #[test]
    fn an_archive_file_reads_as_history_and_grows_by_appending() {
        let reg = with_history(12);
        let s = split(&reg, 5).expect("split");
        let (month, rows) = &s.moved[0];
        let first = append(None, &reg, month, rows);
        assert_eq!(rows_of(&first).expect("rows").len(), 6);
        let again = append(Some(&first), &reg, month, rows);
        assert!(again.starts_with(&first));
        assert_eq!(rows_of(&again).expect("rows").len(), 12);
    }
}
