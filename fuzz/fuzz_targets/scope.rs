//! Scope parsing and the overlap rules on arbitrary strings: never panics,
//! stored forms parse back to themselves, overlap is symmetric, `global`
//! overlaps everything, and covering implies overlapping.
#![no_main]

use bsi_core::scope::{FlatSections, Scope, covers, overlaps};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: (&str, &str)| {
    let (a, b) = data;
    let (Ok(x), Ok(y)) = (Scope::parse_stored(a), Scope::parse_stored(b)) else {
        return;
    };
    assert_eq!(Scope::parse_stored(&x.to_string()), Ok(x.clone()));
    let f = &FlatSections;
    assert_eq!(overlaps(&x, &y, f), overlaps(&y, &x, f));
    assert!(overlaps(&Scope::Global, &x, f));
    assert!(overlaps(&x, &x, f));
    if covers(&x, &y, f) {
        assert!(overlaps(&x, &y, f));
    }
});
