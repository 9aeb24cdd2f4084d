//! Values given at the edge — flags, `BSI_SESSION`, `BSI_AGENT`,
//! `.bsi.toml` — each validated once, by its type: a [`SessionId`], an
//! [`AgentName`], a [`Ttl`]. The types are clap value parsers too, so a bad
//! flag is refused before any command runs. Pure.

use std::fmt;

use chrono::Duration;

use crate::ttl::{self, TtlError};

/// A value refused, with the next command to run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct BadValue {
    /// What is wrong with it.
    pub message: String,
    /// The next command to run.
    pub hint: String,
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
            Err(BadValue {
                message: format!(
                    "`{}` is not a session id: use up to 100 letters, digits and ._:@+- (like sess-20260314-0930-a3f9)",
                    s.escape_debug()
                ),
                hint: "run `bsi status` for the sessions' ids, or leave the id out of `bsi open` to get a new one".into(),
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
        check_line("agent", s)?;
        if s.contains('|') {
            return Err(BadValue {
                message: format!(
                    "the agent name `{s}` contains `|`, the registry's column separator"
                ),
                hint: "run the same command with a name without `|`, like `--agent claude`".into(),
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

/// Free text that lands in a registry cell (`what` is `agent` or `note`):
/// one line, no control characters, at most 200 bytes for an agent and 500
/// for a note.
pub fn check_line(what: &str, s: &str) -> Result<(), BadValue> {
    let flag = if what == "note" { "--note" } else { "--agent" };
    if s.chars().any(char::is_control) {
        return Err(BadValue {
            message: format!(
                "the {what} contains a newline or another control character; registry cells hold one line"
            ),
            hint: format!("run the same command with a one-line {flag} (join the lines with `; `)"),
        });
    }
    // The same limits as `default_agent` in .bsi.toml.
    let limit = if what == "agent" { 200 } else { 500 };
    if s.len() > limit {
        return Err(BadValue {
            message: format!("the {what} is longer than {limit} bytes"),
            hint: format!("run the same command with a shorter {flag}"),
        });
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
            assert!(e.message.contains("is not a session id"), "{e}");
            assert!(e.hint.contains("bsi status"), "{}", e.hint);
        }
    }

    #[test]
    fn an_agent_name_is_one_line_without_a_separator() {
        assert_eq!(
            AgentName::parse(" claude ").map(AgentName::into_string),
            Ok("claude".into())
        );
        assert!(
            AgentName::parse("a|b")
                .expect_err("|")
                .hint
                .contains("--agent claude")
        );
        assert!(
            AgentName::parse("a\nb")
                .expect_err("newline")
                .message
                .contains("control character")
        );
        assert!(AgentName::parse(&"x".repeat(201)).is_err());
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
