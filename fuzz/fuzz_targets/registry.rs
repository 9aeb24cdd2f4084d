//! The registry parser on arbitrary bytes: never panics, and whatever it
//! accepts renders back to the same bytes, parses again to the same claims,
//! and survives an edit of every table.
#![no_main]

use bsi_core::registry::{self, HistoryEntry, Status, TableKind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(reg) = registry::parse_in(text.to_string(), &chrono::Utc) else {
        return;
    };
    assert_eq!(reg.render(), text);
    let again = registry::parse_in(reg.render(), &chrono::Utc).expect("accepted text parses again");
    assert_eq!(again.active_claims, reg.active_claims);
    assert_eq!(again.stale_claims, reg.stale_claims);
    // Move the first active claim to the stale table and close the first
    // stale one: the result must parse, with exactly those changes.
    let mut edited = reg.clone();
    let mut expect_active = reg.active_claims.clone();
    let mut expect_stale = reg.stale_claims.clone();
    if let Some(c) = reg.active_claims.first() {
        let mut s = c.clone();
        s.reason = Some("fuzz".into());
        edited.remove_claim(TableKind::Active, 0);
        edited.add_claim(TableKind::Stale, &s);
        expect_active.remove(0);
        expect_stale.push(s);
    }
    if let Some(c) = reg.stale_claims.first() {
        edited.remove_claim(TableKind::Stale, 0);
        edited.add_history(&HistoryEntry::closing(c, c.expires, Status::Released, ""));
        expect_stale.remove(0);
    }
    let out = edited.render();
    let back = registry::parse_in(out, &chrono::Utc).expect("an edited registry parses");
    assert_eq!(back.active_claims.len(), expect_active.len());
    assert_eq!(back.stale_claims.len(), expect_stale.len());
    for (a, b) in back.active_claims.iter().zip(&expect_active) {
        assert_eq!(
            (&a.session, &a.scope, a.opened, a.expires),
            (&b.session, &b.scope, b.opened, b.expires)
        );
    }
});
