//! The documentation's examples, run: the conflict table of docs/scopes.md.

use crate::common::Brain;

#[test]
fn every_conflict_rule_in_docs_scopes_holds() {
    let doc = include_str!("../../docs/scopes.md");
    let rules: Vec<(String, String, bool)> = doc
        .lines()
        .filter(|l| l.starts_with("| ") && l[2..].starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let scope = |s: &str| s.trim_matches('`').to_string();
            (
                scope(cells[1]),
                scope(cells[2]),
                cells[3].starts_with("refused"),
            )
        })
        .collect();
    assert!(rules.len() >= 15, "{rules:?}");
    for (held, asked, refused) in rules {
        let b = Brain::new();
        b.bsi(&["open", &held, "--session", "holder"]).ok();
        let r = b.bsi(&["open", &asked, "--session", "other"]);
        if refused {
            r.code(3).stderr_has("holder holds");
        } else {
            r.ok();
        }
    }
}
