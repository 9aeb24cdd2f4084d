//! Values given at the edge — flags, `BSI_SESSION`, `BSI_AGENT`,
//! `.bsi.toml` — each validated once, by its type: a [`SessionId`], an
//! [`AgentName`], a [`Ttl`], a duration of a [`Span`]. The types are clap
//! value parsers too, so a bad flag is refused before any command runs.
//! Every figure is held to its range before it becomes a duration: no
//! value, however long, panics a door. Pure.

use std::fmt;

use chrono::Duration;

use crate::ttl::{self, TtlError};

/// A value refused: what is wrong with it ([`BadValue::hint`]: the next
/// command to run).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadValue {
    /// Not a session id.
    #[error(
        "`{}` is not a session id: use up to 100 letters, digits and ._:@+- (like sess-20260314-0930-a3f9)",
        .given.escape_debug()
    )]
    SessionId {
        /// What was given, without its surrounding blanks.
        given: String,
    },
    /// An agent name holding the registry's column separator.
    #[error("the agent name `{name}` contains `|`, the registry's column separator")]
    AgentSeparator {
        /// The name.
        name: String,
    },
    /// A newline or another control character in a registry cell.
    #[error(
        "the {field} contains a newline or another control character; registry cells hold one line"
    )]
    NotOneLine {
        /// Which cell.
        field: Field,
    },
    /// More bytes than the cell allows.
    #[error("the {field} is longer than {limit} bytes")]
    TooLong {
        /// Which cell.
        field: Field,
        /// Bytes allowed.
        limit: usize,
    },
}

/// The free-text cells a command line fills: the agent and the note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `--agent`, `BSI_AGENT`, `default_agent`.
    Agent,
    /// `--note`.
    Note,
}

impl Field {
    /// The flag that sets it.
    pub fn flag(self) -> &'static str {
        match self {
            Field::Agent => "--agent",
            Field::Note => "--note",
        }
    }

    /// Its longest value, in bytes (the same limits as `default_agent` in
    /// .bsi.toml).
    pub fn limit(self) -> usize {
        match self {
            Field::Agent => 200,
            Field::Note => 500,
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Field::Agent => "agent",
            Field::Note => "note",
        })
    }
}

/// A session id: up to 100 letters, digits and `._:@+-` (it goes into
/// commit trailers and registry cells).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(String);

impl SessionId {
    /// `raw` without its surrounding blanks, if it follows the rule.
    pub fn parse(raw: &str) -> Result<SessionId, BadValue> {
        let s = raw.trim();
        let ok = !s.is_empty()
            && s.len() <= 100
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._:@+-".contains(c));
        if ok {
            Ok(SessionId(s.to_string()))
        } else {
            Err(BadValue::SessionId {
                given: s.to_string(),
            })
        }
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::ops::Deref for SessionId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for SessionId {
    type Err = BadValue;
    fn from_str(s: &str) -> Result<SessionId, BadValue> {
        SessionId::parse(s)
    }
}

/// Who holds claims: one line of at most 200 bytes, without `|` (the
/// registry's column separator).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AgentName(String);

impl AgentName {
    /// `raw` without its surrounding blanks, if it follows the rule.
    pub fn parse(raw: &str) -> Result<AgentName, BadValue> {
        let s = raw.trim();
        check_line(Field::Agent, s)?;
        if s.contains('|') {
            return Err(BadValue::AgentSeparator {
                name: s.to_string(),
            });
        }
        Ok(AgentName(s.to_string()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::ops::Deref for AgentName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AgentName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for AgentName {
    type Err = BadValue;
    fn from_str(s: &str) -> Result<AgentName, BadValue> {
        AgentName::parse(s)
    }
}

/// How long a claim lasts: more than zero, at most 8h ([`ttl::parse_ttl`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ttl(Duration);

impl Ttl {
    /// `2h`, `90m`, `1h30m`, `short`, `deep`, `long`.
    pub fn parse(raw: &str) -> Result<Ttl, TtlError> {
        ttl::parse_ttl(raw).map(Ttl)
    }

    /// The duration.
    pub fn duration(self) -> Duration {
        self.0
    }
}

impl std::str::FromStr for Ttl {
    type Err = TtlError;
    fn from_str(s: &str) -> Result<Ttl, TtlError> {
        Ttl::parse(s)
    }
}

/// What a duration other than a TTL is for, and so its range: how long a
/// write retries (`publish_timeout`, `BSI_PUBLISH_TIMEOUT`), how long one
/// fetch or push may take (`connection_timeout`, `BSI_CONNECTION_TIMEOUT`),
/// how long `bsi open --wait` waits. Written `500ms`, `30s`, `2m`, `1h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// `publish_timeout`: 1ms to 1h.
    Publish,
    /// `connection_timeout`: 1ms to 1h.
    Connection,
    /// `--wait`: 1ms to 24h.
    Wait,
}

/// A duration refused by its [`Span`]: `given` is what was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadSpan {
    /// What it was for.
    pub span: Span,
    /// What was given, without its surrounding blanks.
    pub given: String,
    /// A duration, but longer than the span allows (else not a duration
    /// at all, or zero).
    pub too_long: bool,
}

impl BadSpan {
    /// `is `x`; use a duration from 1ms to 1h, like `30s`, `2m` or
    /// `500ms``: what follows the name of the setting in a message.
    pub fn reason(&self) -> String {
        let (min, max) = (self.span.min_text(), self.span.max_text());
        let what = if self.too_long {
            format!("is `{}`, longer than {max}", self.given.escape_debug())
        } else {
            format!("is `{}`", self.given.escape_debug())
        };
        format!("{what}; use a duration from {min} to {max}, like `30s`, `2m` or `500ms`")
    }
}

impl Span {
    /// The longest duration allowed.
    pub fn max(self) -> std::time::Duration {
        std::time::Duration::from_secs(match self {
            Span::Publish | Span::Connection => 3600,
            Span::Wait => 24 * 3600,
        })
    }

    fn min_text(self) -> &'static str {
        "1ms"
    }

    fn max_text(self) -> &'static str {
        match self {
            Span::Publish | Span::Connection => "1h",
            Span::Wait => "24h",
        }
    }

    /// A duration given in whole seconds (MCP's `wait`), held to the same
    /// range as the written one: more than zero, at most [`Span::max`].
    pub fn of_secs(self, secs: u64) -> Result<std::time::Duration, BadSpan> {
        let d = std::time::Duration::from_secs(secs);
        if secs == 0 || d > self.max() {
            return Err(BadSpan {
                span: self,
                given: format!("{secs}s"),
                too_long: secs > 0,
            });
        }
        Ok(d)
    }

    /// Reads `500ms`, `30s`, `2m` or `1h` (one number, one unit), held to
    /// the span's range: more than zero, at most [`Span::max`].
    pub fn parse(self, raw: &str) -> Result<std::time::Duration, BadSpan> {
        let given = raw.trim();
        let bad = |too_long| BadSpan {
            span: self,
            given: given.to_string(),
            too_long,
        };
        let split = given
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(given.len());
        let (digits, unit) = given.split_at(split);
        let per: u64 = match unit.trim() {
            "ms" => 1,
            "s" => 1000,
            "m" => 60_000,
            "h" => 3_600_000,
            _ => return Err(bad(false)),
        };
        if digits.is_empty() {
            return Err(bad(false));
        }
        // Digits only: a figure that does not parse is too big for any
        // number, and so for the range.
        let ms = digits
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(per))
            .ok_or_else(|| bad(true))?;
        let d = std::time::Duration::from_millis(ms);
        if ms == 0 {
            Err(bad(false))
        } else if d > self.max() {
            Err(bad(true))
        } else {
            Ok(d)
        }
    }
}

/// Free text that lands in a registry cell: one line, no control
/// characters, at most [`Field::limit`] bytes.
pub fn check_line(field: Field, s: &str) -> Result<(), BadValue> {
    if s.chars().any(char::is_control) {
        return Err(BadValue::NotOneLine { field });
    }
    let limit = field.limit();
    if s.len() > limit {
        return Err(BadValue::TooLong { field, limit });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_id_follows_one_rule() {
        assert_eq!(
            SessionId::parse(" s1 ").map(SessionId::into_string),
            Ok("s1".into())
        );
        assert!(SessionId::parse("sess-20260314-0930-a3f9").is_ok());
        for bad in ["", "my session", "a|b", "a/b", &"x".repeat(101)] {
            let e = SessionId::parse(bad).expect_err(bad);
            assert!(
                matches!(&e, BadValue::SessionId { given } if given == bad.trim()),
                "{e:?}"
            );
            assert!(e.to_string().contains("is not a session id"), "{e}");
        }
    }

    #[test]
    fn an_agent_name_is_one_line_without_a_separator() {
        assert_eq!(
            AgentName::parse(" claude ").map(AgentName::into_string),
            Ok("claude".into())
        );
        let bar = AgentName::parse("a|b").expect_err("|");
        assert_eq!(bar, BadValue::AgentSeparator { name: "a|b".into() });
        let two = AgentName::parse("a\nb").expect_err("newline");
        assert_eq!(
            two,
            BadValue::NotOneLine {
                field: Field::Agent
            }
        );
        assert!(two.to_string().contains("control character"));
        assert_eq!(
            AgentName::parse(&"x".repeat(201)),
            Err(BadValue::TooLong {
                field: Field::Agent,
                limit: 200
            })
        );
        assert_eq!(
            check_line(Field::Note, &"x".repeat(501))
                .expect_err("long")
                .to_string(),
            "the note is longer than 500 bytes"
        );
    }

    #[test]
    fn a_duration_is_held_to_the_range_of_what_it_is_for() {
        use std::time::Duration as Std;
        assert_eq!(Span::Publish.parse(" 500ms "), Ok(Std::from_millis(500)));
        assert_eq!(Span::Connection.parse("30s"), Ok(Std::from_secs(30)));
        assert_eq!(Span::Publish.parse("2m"), Ok(Std::from_secs(120)));
        assert_eq!(Span::Publish.parse("1h"), Ok(Std::from_secs(3600)));
        assert_eq!(Span::Wait.parse("24h"), Ok(Std::from_secs(24 * 3600)));
        // The same range in whole seconds, as MCP gives it.
        assert_eq!(Span::Wait.of_secs(86_400), Ok(Std::from_secs(86_400)));
        assert!(Span::Wait.of_secs(86_401).expect_err("25h").too_long);
        assert_eq!(Span::Wait.of_secs(3_601), Span::Wait.parse("3601s"));
        for (span, raw) in [
            (Span::Publish, "61m"),
            (Span::Connection, "3601s"),
            (Span::Wait, "25h"),
            (Span::Wait, "2562047788016h"),
            (Span::Publish, "9999999999999999h"),
            (Span::Connection, "18446744073709551615ms"),
            (Span::Wait, "99999999999999999999999s"),
        ] {
            let e = span.parse(raw).expect_err(raw);
            assert!(e.too_long, "{raw}: {e:?}");
            let reason = e.reason();
            assert!(
                reason.contains(&format!("`{raw}`, longer than")) && reason.contains("from 1ms to"),
                "{reason}"
            );
        }
        for raw in [
            "", "soon", "30", "0s", "0ms", "s", "1d", "1h30m", "-5s", "1.5s",
        ] {
            let e = Span::Wait.parse(raw).expect_err(raw);
            assert!(!e.too_long, "{raw}");
            assert!(
                e.reason().contains("use a duration from 1ms to 24h"),
                "{}",
                e.reason()
            );
        }
    }

    #[test]
    fn a_ttl_is_parsed_once() {
        assert_eq!(
            Ttl::parse("deep").map(Ttl::duration),
            Ok(Duration::hours(4))
        );
        assert!(matches!(Ttl::parse("9h"), Err(TtlError::TooLong(_))));
    }
}
