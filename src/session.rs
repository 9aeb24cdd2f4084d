//! Session ids: the `sess-YYYYMMDD-HHMM-xxxx` a new session gets, shared by
//! `bsi open` and the agent tools' session-start hooks (the rule every
//! session id given to bsi follows is [`crate::values::SessionId`]).

use rand::RngExt;

/// A new session id: `sess-YYYYMMDD-HHMM-xxxx`.
pub fn new_session_id(now: chrono::DateTime<chrono::FixedOffset>) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    let tag: String = (0..4)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    format!("sess-{}-{tag}", now.format("%Y%m%d-%H%M"))
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
        assert!(crate::values::SessionId::parse(&id).is_ok());
    }
}
