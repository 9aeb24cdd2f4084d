//! A registry that stays small: old history rows move to archive files on
//! the registry branch, byte for byte, and every command still sees them.

use crate::common::{Brain, Machines};

fn archive_of(b: &Brain, month: &str) -> String {
    b.git(&["show", &format!("brain-index:archive/{month}.md")])
}

#[test]
fn old_history_rows_move_to_the_archive_byte_for_byte() {
    let b = Brain::new();
    b.write(".bsi.toml", "history_keep = 3\n");
    // Seven sessions open and close a claim each: seven history rows.
    for i in 0..7 {
        let s = format!("s{i}");
        b.bsi(&["open", &format!("area{i}/"), "--session", &s]).ok();
        if i == 0 {
            b.bsi(&["verify", "s0"]).ok();
        }
        b.bsi(&["close", &s]).ok();
    }
    let history = b.history();
    // Up to twice `keep` rows stay; the seventh close moved the four oldest.
    assert_eq!(history.len(), 3, "{history:?}");
    assert!(history[0].starts_with("| s4 |"), "{history:?}");
    let archive = archive_of(&b, "2026-03");
    let moved: Vec<&str> = archive.lines().filter(|l| l.starts_with("| s")).collect();
    assert_eq!(moved.len(), 4, "{archive}");
    for (i, row) in moved.iter().enumerate() {
        assert!(row.starts_with(&format!("| s{i} | area{i}/ |")), "{row}");
    }
    // The commit that moved them says so, and changed nothing else.
    let msg = b.git(&["log", "-1", "--format=%B", "brain-index"]);
    assert!(
        msg.contains("Archives 4 old history row(s) to archive/2026-03.md."),
        "{msg}"
    );
    assert!(msg.contains("BSI-Action: close"), "{msg}");
    // The journal and verify still see the archived sessions.
    let log = b.bsi(&["log", "--json"]).json();
    let sessions: Vec<String> = log
        .as_array()
        .expect("array")
        .iter()
        .flat_map(|e| e["sessions"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s.as_str().map(String::from))
        .collect();
    assert!(sessions.contains(&"s0".to_string()), "{sessions:?}");
    b.bsi(&["verify", "s0"]).ok().stdout_has("s0");
    // More closings append to the same month, byte for byte.
    for i in 7..11 {
        let s = format!("s{i}");
        b.bsi(&["open", &format!("area{i}/"), "--session", &s]).ok();
        b.bsi(&["close", &s]).ok();
    }
    let again = archive_of(&b, "2026-03");
    assert!(again.starts_with(&archive), "the archive was rewritten");
    assert_eq!(again.lines().filter(|l| l.starts_with("| s")).count(), 8);
    assert_eq!(b.history().len(), 3);
    // The user's own untracked file aside, nothing in the work tree.
    assert_eq!(b.status(), "?? .bsi.toml\n");
}

#[test]
fn an_archive_made_on_one_machine_is_seen_and_kept_by_the_other() {
    let Machines {
        origin: _origin,
        bare,
        a,
        b,
    } = Machines::new();
    a.write(".bsi.toml", "history_keep = 1\n");
    // B records a change offline, while A archives on the remote.
    let mut away = bare.path().as_os_str().to_owned();
    away.push("-away");
    std::fs::rename(bare.path(), &away).expect("away");
    b.bsi(&["open", "README.md", "--session", "sb"]).code(7);
    std::fs::rename(&away, bare.path()).expect("back");
    for i in 0..3 {
        let s = format!("a{i}");
        a.bsi(&["open", &format!("area{i}/"), "--session", &s]).ok();
        a.bsi(&["close", &s]).ok();
    }
    assert_eq!(a.history().len(), 1);
    // B publishes its pending claim: the archived rows are not brought back
    // into the table, and the archive stays whole.
    b.bsi(&["sync"]).ok();
    let st = b.bsi(&["status", "--json"]).json();
    assert_eq!(st["active"][0]["session"], "sb");
    let reg = b.git(&["show", "origin/brain-index:BRAIN-INDEX.md"]);
    assert_eq!(reg.matches("| a0 |").count(), 0, "{reg}");
    let archive = b.git(&["show", "origin/brain-index:archive/2026-03.md"]);
    assert_eq!(archive.matches("| a0 |").count(), 1);
    assert_eq!(archive.matches("| a1 |").count(), 1);
}
