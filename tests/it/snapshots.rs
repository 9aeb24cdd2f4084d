//! The snapshot files themselves: every file in `tests/snapshots/` is read
//! by a test, and the harness's review step (a differing output written
//! beside its snapshot as `.new`, never over it) does what it says.

use std::fs;
use std::path::Path;

use crate::common::{PENDING, SNAPSHOTS, check_snapshot, line_diff, scratch};

/// The snapshot files under `dir`, as paths relative to it with `/`
/// between names, outputs waiting for review (`.new`) aside.
fn snapshot_files(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) {
        for entry in fs::read_dir(dir).expect("read the snapshots directory") {
            let entry = entry.expect("dir entry");
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = format!("{prefix}{name}");
            if entry.file_type().expect("file type").is_dir() {
                walk(&entry.path(), &format!("{rel}/"), out);
            } else if !name.ends_with(PENDING) {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, "", &mut out);
    out.sort();
    out
}

/// The string literals of `source` that name a snapshot: `"dir/name.txt"`,
/// a `format!` string such as `"help/bsi-{c}.txt"` included. Each is found
/// from its `.txt"` back to the quote before it (a snapshot name has no
/// space or quote), so a quote in a char literal or an escaped one
/// elsewhere cannot shift what is read as a literal.
fn snapshot_names_in(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (end, _) in source.match_indices(".txt\"") {
        let before = &source[..end];
        let Some(start) = before.rfind(|c: char| c == '"' || c.is_whitespace()) else {
            continue;
        };
        if !before[start..].starts_with('"') {
            continue;
        }
        let name = format!("{}.txt", &before[start + 1..]);
        if name.contains('/') && !name.starts_with('/') {
            out.push(name);
        }
    }
    out
}

/// Whether `file` is a name `pattern` can give: each `{…}` of a `format!`
/// string stands for any non-empty text.
fn names(pattern: &str, file: &str) -> bool {
    let mut pieces = Vec::new();
    let mut rest = pattern;
    while let Some(open) = rest.find('{') {
        pieces.push(&rest[..open]);
        match rest[open..].find('}') {
            Some(close) => rest = &rest[open + close + 1..],
            None => return pattern == file,
        }
    }
    pieces.push(rest);
    if pieces.len() == 1 {
        return pattern == file;
    }
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    let Some(mut middle) = file.strip_prefix(first) else {
        return false;
    };
    for piece in &pieces[1..pieces.len() - 1] {
        // Each placeholder takes one character at least.
        let Some(at) = middle.get(1..).and_then(|m| m.find(piece)) else {
            return false;
        };
        middle = &middle[1 + at + piece.len()..];
    }
    middle.len() > last.len() && middle.ends_with(last)
}

/// Fails for a file in `tests/snapshots/` that no test reads: the output of
/// a test deleted or renamed, which nobody compares any more and which
/// would mislead a reader about what is tested.
///
/// Found by a static scan of the test sources, not by recording the names
/// the tests read as they run: cargo runs tests in parallel and in any
/// order, and runs only some of them when given a filter, so no test can
/// know that all the others have finished and read their files. Every
/// snapshot name is a string literal in `tests/it/*.rs` (given to
/// `snapshot`, `Transcript::check` or a helper that passes it on), or a
/// `format!` string whose `{…}` stand for any text: those few are less
/// exact, and the help snapshots, named after the command tree, are
/// checked exactly by the help test. Outputs waiting for review (`.new`)
/// are not snapshots: the tests running next to this one write them.
#[test]
fn every_snapshot_file_is_read_by_a_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut used = Vec::new();
    for entry in fs::read_dir(root.join("tests/it")).expect("read tests/it") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            let source = fs::read_to_string(&path).expect("read a test source");
            used.extend(snapshot_names_in(&source));
        }
    }
    assert!(
        used.iter().any(|u| u == "hooks/hooked.txt"),
        "the scan finds no snapshot name: {used:?}"
    );
    let orphans: Vec<String> = snapshot_files(&root.join(SNAPSHOTS))
        .into_iter()
        .filter(|f| !used.iter().any(|u| names(u, f)))
        .collect();
    assert!(
        orphans.is_empty(),
        "no test reads these snapshot files; delete them (or give their test its name back):\n{}",
        orphans
            .iter()
            .map(|o| format!("  {SNAPSHOTS}/{o}\n"))
            .collect::<String>()
    );
}

#[test]
fn the_scan_reads_snapshot_names_and_only_them() {
    let source = r#"
        let q = '"'; let e = "say \"hi\"";
        t.check("hooks/hooked.txt");
        snapshot(&format!("help/bsi-{c}.txt"), &r.stdout);
        let not_a_name = "notes.txt"; let absolute = "/etc/x.txt";
        let spaced = "a b/c.txt";
    "#;
    assert_eq!(
        snapshot_names_in(source),
        ["hooks/hooked.txt", "help/bsi-{c}.txt"]
    );
    assert!(names("hooks/hooked.txt", "hooks/hooked.txt"));
    assert!(!names("hooks/hooked.txt", "hooks/hooked2.txt"));
    assert!(names("help/bsi-{c}.txt", "help/bsi-hook-edit.txt"));
    assert!(!names("help/bsi-{c}.txt", "help/bsi-.txt"));
    assert!(!names("help/bsi-{c}.txt", "help/bsi.txt"));
    assert!(names("views/{a}-x-{b}.txt", "views/1-x-2.txt"));
    assert!(!names("views/{a}-x-{b}.txt", "views/1-x-.txt"));
    assert!(!names("views/{a}-x-{b}.txt", "other/1-x-2.txt"));
}

#[test]
fn a_differing_output_waits_beside_its_snapshot_and_never_replaces_it() {
    let dir = scratch("bsi-snapshots");
    let (old, new) = (
        dir.path().join("area/a.txt"),
        dir.path().join("area/a.txt.new"),
    );
    fs::create_dir_all(old.parent().expect("parent")).expect("mkdir");
    fs::write(&old, "one\ntwo\nthree\n").expect("write");

    let why = check_snapshot(dir.path(), "snaps", "area/a.txt", "one\n2\nthree\n")
        .expect_err("a different output fails");
    assert_eq!(fs::read_to_string(&old).expect("read"), "one\ntwo\nthree\n");
    assert_eq!(fs::read_to_string(&new).expect("read"), "one\n2\nthree\n");
    assert!(why.contains("-two\n+2\n"), "{why}");
    assert!(
        why.contains("review: diff -u snaps/area/a.txt snaps/area/a.txt.new\n"),
        "{why}"
    );
    assert!(
        why.contains("accept: mv snaps/area/a.txt.new snaps/area/a.txt\n"),
        "{why}"
    );

    // Another run that still differs overwrites what waits for review.
    check_snapshot(dir.path(), "snaps", "area/a.txt", "one\n3\nthree\n").expect_err("differs");
    assert_eq!(fs::read_to_string(&new).expect("read"), "one\n3\nthree\n");
    // A run that matches again removes it: a stale output is never
    // accepted by mistake.
    check_snapshot(dir.path(), "snaps", "area/a.txt", "one\ntwo\nthree\n").expect("matches");
    assert!(!new.exists());
    assert_eq!(fs::read_to_string(&old).expect("read"), "one\ntwo\nthree\n");

    // A snapshot not written yet: the output waits as `.new` too.
    let why = check_snapshot(dir.path(), "snaps", "area/b.txt", "first\n").expect_err("missing");
    assert!(!dir.path().join("area/b.txt").exists());
    assert_eq!(
        fs::read_to_string(dir.path().join("area/b.txt.new")).expect("read"),
        "first\n"
    );
    assert!(
        why.contains("accept: mv snaps/area/b.txt.new snaps/area/b.txt\n"),
        "{why}"
    );
}

#[test]
fn the_difference_shows_changed_lines_with_their_context() {
    let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
    let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\neleven\n";
    assert_eq!(
        line_diff(old, new),
        "@@ line 3\n 3\n 4\n-5\n+five\n 6\n 7\n@@ line 9\n 9\n 10\n+eleven\n"
    );
    // Changes closer than twice the context share one hunk.
    assert_eq!(
        line_diff("1\n2\n3\n4\n5\n", "1\nb\n3\nd\n5\n"),
        "@@ line 1\n 1\n-2\n+b\n 3\n-4\n+d\n 5\n"
    );
    // A missing final newline is a difference, and is said.
    assert_eq!(
        line_diff("a\nb\n", "a\nb"),
        "@@ line 1\n a\n-b\n+b  [no newline at the end]\n"
    );
    assert_eq!(line_diff("same\n", "same\n"), "");
}
