//! Session ids: the `sess-YYYYMMDD-HHMM-xxxx` a new session gets, shared by
//! `bsi open` and the agent tools' session-start hooks (the rule every
//! session id given to bsi follows is [`crate::values::SessionId`]).

use rand::{RngExt, SeedableRng};

/// A new session id: `sess-YYYYMMDD-HHMM-xxxx`, its four characters drawn
/// at random, or from `seed` when one is given (`BSI_RANDOM_SEED`): the same
/// seed and time give the same id, so tests and demos show real ids. One
/// seed gives one id; a run makes one at most.
pub fn new_session_id(now: chrono::DateTime<chrono::FixedOffset>, seed: Option<u64>) -> String {
    let tag = match seed {
        // The generator of the rand version in Cargo.lock: an upgrade of
        // rand may give other ids for a seed.
        Some(seed) => tag(&mut rand::rngs::StdRng::seed_from_u64(seed)),
        None => tag(&mut rand::rng()),
    };
    format!("sess-{}-{tag}", now.format("%Y%m%d-%H%M"))
}

/// Four characters of `[a-z0-9]`.
fn tag(rng: &mut impl rand::Rng) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..4)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: &str) -> chrono::DateTime<chrono::FixedOffset> {
        chrono::DateTime::parse_from_rfc3339(t).expect("time")
    }

    #[test]
    fn a_new_id_has_the_documented_shape() {
        for seed in [None, Some(0), Some(u64::MAX)] {
            let id = new_session_id(at("2026-03-14T09:30:00+00:00"), seed);
            assert!(id.starts_with("sess-20260314-0930-"), "{id}");
            assert_eq!(id.len(), "sess-20260314-0930-".len() + 4);
            assert!(
                id[19..]
                    .bytes()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()),
                "{id}"
            );
            assert!(crate::values::SessionId::parse(&id).is_ok());
        }
    }

    #[test]
    fn a_seed_gives_the_same_id_every_time_and_seeds_differ() {
        let now = at("2026-03-14T09:30:00+00:00");
        let ids: Vec<String> = (0..50).map(|s| new_session_id(now, Some(s))).collect();
        for (s, id) in (0..50).zip(&ids) {
            assert_eq!(&new_session_id(now, Some(s)), id);
        }
        // 36^4 tags: fifty seeds draw fifty of them, not one.
        let distinct: std::collections::HashSet<&String> = ids.iter().collect();
        assert!(distinct.len() > 45, "{ids:?}");
        // The time is the id's own part; the seed draws only the tag.
        let later = new_session_id(at("2026-03-15T18:05:00+00:00"), Some(7));
        assert_eq!(later[..19], *"sess-20260315-1805-");
        assert_eq!(later[19..], new_session_id(now, Some(7))[19..]);
    }
}
