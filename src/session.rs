//! Session ids: the `sess-YYYYMMDD-HHMM-xxxx` a new session gets, shared by
//! `bsi open` and the agent tools' session-start hooks, and the rule every
//! session id given to bsi follows.

use rand::RngExt;

use crate::error::{Error, Result};

/// A new session id: `sess-YYYYMMDD-HHMM-xxxx`.
pub fn new_session_id(now: chrono::DateTime<chrono::FixedOffset>) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    let tag: String = (0..4)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    format!("sess-{}-{tag}", now.format("%Y%m%d-%H%M"))
}

/// Session ids go into commit trailers: letters, digits and `._:@+-` only.
pub fn check_session_id(s: &str) -> Result<()> {
    let ok = !s.is_empty()
        && s.len() <= 100
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._:@+-".contains(c));
    if ok {
        Ok(())
    } else {
        Err(Error::BadInput(
            format!(
                "`{}` is not a session id: use up to 100 letters, digits and ._:@+- (like sess-20260314-0930-a3f9)",
                s.escape_debug()
            ),
            "run `bsi status` for the sessions' ids, or leave the id out of `bsi open` to get a new one".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_id_has_the_documented_shape() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-03-14T09:30:00+00:00").expect("time");
        let id = new_session_id(now);
        assert!(id.starts_with("sess-20260314-0930-"), "{id}");
        assert_eq!(id.len(), "sess-20260314-0930-".len() + 4);
        assert!(check_session_id(&id).is_ok());
    }
}
