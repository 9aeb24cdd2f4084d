//! Values given at the edge — flags, `BSI_SESSION`, `BSI_AGENT`,
//! `.bsi.toml` — each validated once, by its type: a [`SessionId`], an
//! [`AgentName`], a [`Ttl`]. The types are clap value parsers too, so a bad
//! flag is refused before any command runs. Pure.

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

impl BadValue {
    /// The next command to run.
    pub fn hint(&self) -> String {
        match self {
            BadValue::SessionId { .. } => "run `bsi status` for the sessions' ids, or leave the id out of `bsi open` to get a new one".into(),
            BadValue::AgentSeparator { .. } => {
                "run the same command with a name without `|`, like `--agent claude`".into()
            }
            BadValue::NotOneLine { field } => format!(
                "run the same command with a one-line {} (join the lines with `; `)",
                field.flag()
            ),
            BadValue::TooLong { field, .. } => {
                format!("run the same command with a shorter {}", field.flag())
            }
        }
    }
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
            assert!(e.hint().contains("bsi status"), "{}", e.hint());
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
        assert!(bar.hint().contains("--agent claude"));
        let two = AgentName::parse("a\nb").expect_err("newline");
        assert_eq!(
            two,
            BadValue::NotOneLine {
                field: Field::Agent
            }
        );
        assert!(two.to_string().contains("control character"));
        assert!(two.hint().contains("a one-line --agent"), "{}", two.hint());
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
    fn a_ttl_is_parsed_once() {
        assert_eq!(
            Ttl::parse("deep").map(Ttl::duration),
            Ok(Duration::hours(4))
        );
        assert!(matches!(Ttl::parse("9h"), Err(TtlError::TooLong(_))));
    }
}
