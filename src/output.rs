//! What bsi prints: the JSON shapes (a contract for scripts) and the helpers
//! of the human printer.

use std::io::Write;

use chrono::{DateTime, FixedOffset, SecondsFormat};
use serde::Serialize;

use crate::registry::Claim;
use crate::scope::Level;
use crate::ttl;

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
    /// Why it is stale.
    #[serde(skip_serializing_if = "Option::is_none")]
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

/// Prints one JSON document on stdout.
pub fn print_json<T: Serialize>(value: &T) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer_pretty(&mut out, value);
    let _ = writeln!(out);
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

/// `09:30` when the day is today, else `2026-03-14 09:30`.
pub fn short_time(t: DateTime<FixedOffset>, now: DateTime<FixedOffset>) -> String {
    if t.date_naive() == now.with_timezone(t.offset()).date_naive() {
        t.format("%H:%M").to_string()
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
            ttl::format_ts(c.expires)
        )
    } else {
        format!(
            "expires {} ({})",
            ttl::format_ts(c.expires),
            ttl::time_left(c.expires, now)
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
}

/// Whether to colour: only on a terminal, never when `NO_COLOR` is set to a
/// non-empty value (<https://no-color.org>) or `TERM` is `dumb`.
pub fn colour_wanted(is_terminal: bool, no_color: Option<&str>, term: Option<&str>) -> bool {
    is_terminal && no_color.is_none_or(str::is_empty) && term != Some("dumb")
}

/// `s` wrapped in the ANSI codes of `p` when `on`.
pub fn paint(on: bool, p: Paint, s: &str) -> String {
    if !on || s.is_empty() {
        return s.to_string();
    }
    let code = match p {
        Paint::Bold => "1",
        Paint::Red => "31",
        Paint::Yellow => "33",
        Paint::Green => "32",
        Paint::Dim => "2",
    };
    format!("\x1b[{code}m{s}\x1b[0m")
}

/// [`table`], with whole lines painted: `styles[i]` for row `i`.
pub fn table_painted(rows: &[Vec<String>], styles: &[Option<Paint>], on: bool) -> String {
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

/// One overlapping pair, for people.
pub fn collision_line(a: &Claim, b: &Claim) -> String {
    format!(
        "COLLISION: {} {} overlaps {} {}",
        a.session, a.scope, b.session, b.scope
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_only_on_a_terminal_without_no_color() {
        assert!(colour_wanted(true, None, Some("xterm")));
        assert!(colour_wanted(true, Some(""), None));
        assert!(!colour_wanted(false, None, Some("xterm")));
        assert!(!colour_wanted(true, Some("1"), Some("xterm")));
        assert!(!colour_wanted(true, None, Some("dumb")));
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
