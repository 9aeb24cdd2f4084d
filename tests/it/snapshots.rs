//! The snapshot harness's review step: an output that differs is written
//! beside its snapshot as `.new`, never over it.

use std::fs;

use crate::common::{check_snapshot, line_diff, scratch};

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
