//! The guard judges exactly what a commit records: every form of
//! `git commit` through the installed hooks, sections in the old and the
//! new version of a file, one name per thing. Each test names the case of
//! the hostile review it answers.

use crate::common::{Brain, Run, Transcript, snapshot};
use crate::hooks::{commit_as, git_as, hooked};

/// Runs git in `dir` with `BSI_SESSION` set (or not).
/// s1 (alice) holds `agents/`, s2 (bob) holds `projets/`.
fn two_sessions() -> Brain {
    let b = hooked();
    b.bsi(&["open", "agents/", "--session", "s1", "--agent", "alice"])
        .ok();
    b.bsi(&["open", "projets/", "--session", "s2", "--agent", "bob"])
        .ok();
    b
}

/// HEAD's commit id, full.
fn head(b: &Brain) -> String {
    b.git(&["rev-parse", "HEAD"]).trim().to_string()
}

/// Compares the transcript with `tests/snapshots/<rel>`, the short id of
/// each commit `named` (its dates, so its id, differ from run to run)
/// written as its label.
#[track_caller]
fn check_naming(t: &Transcript, rel: &str, named: &[(&str, &str)]) {
    let mut text = t.text();
    for (label, id) in named {
        let short = &id[..7];
        assert!(
            text.contains(short),
            "commit {label} ({short}) not named:\n{text}"
        );
        text = text.replace(short, &format!("<{label}>"));
    }
    snapshot(rel, &text);
}

const ALICE_CLAIMED: &str = "agents/alice.md is inside an active claim of session s1";

/// Checks a refused commit: git exits 1, nothing is committed on HEAD and
/// the registry is as it was.
#[track_caller]
fn refused(b: &Brain, r: &Run, before: usize, registry: &str, says: &str) {
    r.code(1).stderr_has(says).stderr_has("commit refused");
    assert_eq!(b.head_commits(), before, "nothing committed");
    assert_eq!(b.registry(), registry, "registry unchanged");
}

// Case 1: `git commit -a`, `git commit PATHS` and `git commit -i`.
#[test]
fn commit_a_paths_and_i_are_judged_on_the_index_git_hands_the_hook() {
    let b = two_sessions();
    let (before, reg) = (b.head_commits(), b.registry());
    b.write("agents/alice.md", "# Alice\n\nchanged by s2\n");

    let r = git_as(&b, Some("s2"), &["commit", "-q", "-a", "-m", "all"]);
    refused(&b, &r, before, &reg, ALICE_CLAIMED);
    let r = git_as(
        &b,
        Some("s2"),
        &["commit", "-q", "-m", "paths", "agents/alice.md"],
    );
    refused(&b, &r, before, &reg, ALICE_CLAIMED);
    let plan = b.read("projets/plan.md");
    b.write("projets/plan.md", &plan.replace("risk text", "risk, s2"));
    b.git(&["add", "projets/plan.md"]);
    let r = git_as(
        &b,
        Some("s2"),
        &["commit", "-q", "-i", "-m", "include", "agents/alice.md"],
    );
    refused(&b, &r, before, &reg, ALICE_CLAIMED);
    // The index the user built is left as it was.
    assert_eq!(
        b.git(&["diff", "--cached", "--name-only"]),
        "projets/plan.md\n"
    );

    // Past the hook, verify of the committer finds what the hook refused.
    git_as(
        &b,
        Some("s2"),
        &["commit", "-q", "-a", "--no-verify", "-m", "forced"],
    )
    .ok();
    let forced = head(&b);
    let mut t = Transcript::new(&b);
    t.note("s2 commits `-a` with --no-verify: <forced>.");
    t.bsi(&["verify", "s2"]).code(6);
    check_naming(
        &t,
        "exact/commit_a_paths_and_i_are_judged_on_the_index_git_hands_the_hook.txt",
        &[("forced", &forced)],
    );
    assert_eq!(b.registry(), reg);
}

// Case 1, the reverse: a false refusal because of what someone else staged.
#[test]
fn committing_only_ones_own_paths_passes_while_others_are_staged() {
    let b = two_sessions();
    b.write("agents/alice.md", "# Alice\n\nby s1, staged\n");
    b.git(&["add", "agents/alice.md"]);
    let plan = b.read("projets/plan.md");
    b.write("projets/plan.md", &plan.replace("risk text", "risk, s2"));
    let reg = b.registry();
    let r = git_as(
        &b,
        Some("s2"),
        &["commit", "-q", "-m", "own only", "projets/plan.md"],
    );
    r.ok();
    assert!(!r.stderr.contains("bsi:"), "nothing to say: {}", r.stderr);
    assert_eq!(
        b.git(&["show", "--name-only", "--format=", "HEAD"]).trim(),
        "projets/plan.md"
    );
    // s1's staged change is still staged, not committed.
    assert_eq!(
        b.git(&["diff", "--cached", "--name-only"]),
        "agents/alice.md\n"
    );
    assert_eq!(b.registry(), reg);
    let mut t = Transcript::new(&b);
    t.bsi(&["verify", "s2"]).ok();
    t.check("exact/committing_only_ones_own_paths_passes_while_others_are_staged.txt");
}

// Case 1: `--amend`, a subdirectory, a linked work tree.
#[test]
fn amend_a_subdirectory_and_a_worktree_are_judged_too() {
    let b = two_sessions();
    let plan = b.read("projets/plan.md");
    b.write("projets/plan.md", &plan.replace("risk text", "risk, s2"));
    b.git(&["add", "projets/plan.md"]);
    commit_as(&b, Some("s2"), "own").ok();
    let (before, reg) = (b.head_commits(), b.registry());

    // --amend: judged against HEAD, as git records it.
    b.write("agents/alice.md", "# Alice\n\namended in by s2\n");
    b.git(&["add", "agents/alice.md"]);
    let r = git_as(&b, Some("s2"), &["commit", "-q", "--amend", "--no-edit"]);
    refused(&b, &r, before, &reg, ALICE_CLAIMED);
    assert_eq!(b.head_subject(), "own");
    b.git(&["reset", "-q", "agents/alice.md"]);
    // Amending with one's own change passes.
    let plan = b.read("projets/plan.md");
    b.write(
        "projets/plan.md",
        &plan.replace("risk, s2", "risk, s2 again"),
    );
    git_as(
        &b,
        Some("s2"),
        &["commit", "-q", "--amend", "--no-edit", "projets/plan.md"],
    )
    .ok();
    assert_eq!(b.head_commits(), before);

    // From a subdirectory.
    let r = b.git_at(
        &b.path().join("projets"),
        Some("s2"),
        &["commit", "-q", "-a", "-m", "from projets/"],
    );
    refused(&b, &r, before, &reg, ALICE_CLAIMED);
    b.git(&["checkout", "-q", "--", "agents/alice.md"]);

    // In a linked work tree: the same hooks, the same claims.
    let other = crate::common::scratch("bsi-wt");
    let wt = other.path().join("side");
    b.git(&[
        "worktree",
        "add",
        "-q",
        wt.to_str().expect("utf-8"),
        "-b",
        "side",
    ]);
    std::fs::write(wt.join("agents/alice.md"), "# Alice\n\nfrom a worktree\n").expect("write");
    let r = b.git_at(&wt, Some("s2"), &["commit", "-q", "-a", "-m", "wt"]);
    r.code(1).stderr_has(ALICE_CLAIMED);
    let side_commits = b.git_at(&wt, None, &["rev-list", "--count", "HEAD"]);
    assert_eq!(side_commits.stdout.trim(), before.to_string());
    std::fs::write(wt.join("projets/plan.md"), "# Plan\n\nfrom a worktree\n").expect("write");
    b.git_at(
        &wt,
        Some("s2"),
        &["commit", "-q", "-m", "wt own", "projets/plan.md"],
    )
    .ok();
    assert_eq!(b.registry(), reg);
}

// Case 1: concluding a merge.
#[test]
fn a_merge_is_judged_on_what_its_resolution_adds() {
    let b = hooked();
    // Another branch changes bob's file and the README.
    b.git(&["checkout", "-q", "-b", "other"]);
    b.write("agents/bob.md", "# Bob\n\nfrom other\n");
    b.write("README.md", "# Brain\n\nother's line\n");
    git_as(
        &b,
        None,
        &["commit", "-q", "-a", "--no-verify", "-m", "other"],
    )
    .ok();
    b.git(&["checkout", "-q", "main"]);
    b.bsi(&[
        "open",
        "agents/bob.md",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    b.bsi(&[
        "open",
        "README.md",
        "agents/alice.md",
        "--session",
        "s2",
        "--agent",
        "bob",
    ])
    .ok();
    b.write("README.md", "# Brain\n\nmain's line\n");
    b.git(&["add", "README.md"]);
    commit_as(&b, Some("s2"), "readme on main").ok();
    let reg = b.registry();

    let r = git_as(&b, Some("s2"), &["merge", "-q", "other", "-m", "merge"]);
    assert_ne!(r.code, 0, "a conflict on README.md: {r:?}");
    b.write("README.md", "# Brain\n\nmain's line\nother's line\n");
    b.git(&["add", "README.md"]);
    // bob.md comes from the other branch as it is: not the resolution's.
    let r = commit_as(&b, Some("s2"), "merge other");
    r.ok();
    assert!(!r.stderr.contains("bob.md"), "{}", r.stderr);
    assert_eq!(
        b.git(&["rev-list", "--parents", "-n1", "HEAD"])
            .split_whitespace()
            .count(),
        3,
        "a merge commit"
    );
    assert_eq!(b.registry(), reg);

    // A resolution that also edits a claimed file is refused.
    b.git(&["reset", "-q", "--hard", "HEAD~1"]);
    let before = b.head_commits();
    let r = git_as(&b, Some("s2"), &["merge", "-q", "other", "-m", "merge"]);
    assert_ne!(r.code, 0);
    b.write("README.md", "# Brain\n\nresolved\n");
    b.write("agents/bob.md", "# Bob\n\nresolved by s2\n");
    b.git(&["add", "README.md", "agents/bob.md"]);
    let r = commit_as(&b, Some("s2"), "merge other");
    refused(
        &b,
        &r,
        before,
        &reg,
        "agents/bob.md is inside an active claim of session s1",
    );
}

/// s1 (alice) holds `projets/plan.md#Goals`, s2 (bob) `#Risks`.
fn sections() -> Brain {
    let b = hooked();
    b.bsi(&[
        "open",
        "projets/plan.md#Goals",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    b.bsi(&[
        "open",
        "projets/plan.md#Risks",
        "--session",
        "s2",
        "--agent",
        "bob",
    ])
    .ok();
    b
}

// Case 2: a heading inserted inside another session's section.
#[test]
fn a_heading_written_inside_another_sessions_section_does_not_take_its_text() {
    let b = sections();
    let plan = b.read("projets/plan.md");
    let (before, reg) = (b.head_commits(), b.registry());
    for new in [
        // `## Risks` (s2's name) just under `## Goals`, and Goals' line edited.
        plan.replace("## Goals\n\n", "## Goals\n\n## Risks\n\n")
            .replace("goal text", "goal text, mine now"),
        // The heading alone: Goals' lines would move under it.
        plan.replace("## Goals\n\n", "## Goals\n\n## Risks\n\n"),
        // A setext underline turns Goals' line into a heading.
        plan.replace("goal text\n", "goal text\n---\n"),
    ] {
        b.write("projets/plan.md", &new);
        b.git(&["add", "projets/plan.md"]);
        let r = commit_as(&b, Some("s2"), "take goals");
        refused(&b, &r, before, &reg, "inside an active claim of session s1");
        r.stderr_has("under `Goals`");
    }
    // Without any session: `# Misc` above Goals' lines.
    b.write(
        "projets/plan.md",
        &plan.replace("goal text\n", "# Misc\n\ngoal text\n"),
    );
    b.git(&["add", "projets/plan.md"]);
    let mut t = Transcript::new(&b);
    t.note("Without any session: `# Misc` above Goals' lines.");
    t.git(&["commit", "-q", "-m", "misc"]).code(1);
    assert_eq!(b.head_commits(), before, "nothing committed");
    assert_eq!(b.registry(), reg, "registry unchanged");

    // verify of the committer agrees with the hook.
    b.write(
        "projets/plan.md",
        &plan.replace("## Goals\n\n", "## Goals\n\n## Risks\n\n"),
    );
    b.git(&["add", "projets/plan.md"]);
    git_as(
        &b,
        Some("s2"),
        &["commit", "-q", "--no-verify", "-m", "forced"],
    )
    .ok();
    let forced = head(&b);
    t.note("s2 commits `## Risks` under `## Goals` with --no-verify: <forced>.");
    t.bsi(&["verify", "s2"]).code(6);
    check_naming(
        &t,
        "exact/a_heading_written_inside_another_sessions_section_does_not_take_its_text.txt",
        &[("forced", &forced)],
    );
    assert_eq!(b.registry(), reg);
}

// Case 3: a file stored with a decomposed (NFD) name.
#[test]
fn a_decomposed_file_name_is_the_claimed_name() {
    let b = hooked();
    let nfd_file = "cafe\u{301}.md";
    let nfd_dir = "e\u{301}quipe";
    b.write(nfd_file, "# Café\n\ntext\n");
    b.write(&format!("{nfd_dir}/x.md"), "# X\n");
    b.git(&["add", "-A"]);
    git_as(&b, None, &["commit", "-q", "-m", "nfd names"]).ok();
    b.bsi(&[
        "open",
        "caf\u{e9}.md",
        "\u{e9}quipe/",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    let (before, reg) = (b.head_commits(), b.registry());
    b.write(nfd_file, "# Café\n\nchanged by s2\n");
    b.write(&format!("{nfd_dir}/x.md"), "# X\n\nchanged by s2\n");
    b.git(&["add", "-A"]);
    let r = commit_as(&b, Some("s2"), "nfd");
    refused(&b, &r, before, &reg, "inside an active claim of session s1");
    r.stderr_has("scope caf\u{e9}.md")
        .stderr_has("scope \u{e9}quipe/");
}

// Case 4: a renamed heading.
#[test]
fn renaming_a_held_heading_needs_the_new_name_and_a_stale_name_is_reported() {
    let b = sections();
    let plan = b.read("projets/plan.md");
    let (before, reg) = (b.head_commits(), b.registry());
    b.write(
        "projets/plan.md",
        &plan.replace("## Goals", "## Objectives"),
    );
    b.git(&["add", "projets/plan.md"]);
    let r = commit_as(&b, Some("s1"), "rename");
    refused(
        &b,
        &r,
        before,
        &reg,
        "renames heading `Goals` of projets/plan.md",
    );
    r.stderr_has("bsi open \"projets/plan.md#Objectives\" --session s1");

    b.bsi(&[
        "open",
        "projets/plan.md#Objectives",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    let mut t = Transcript::new(&b);
    t.note("Not committed yet: neither name is reported as missing.");
    t.bsi(&["status"]).ok();
    commit_as(&b, Some("s1"), "rename").ok();
    assert_eq!(b.head_subject(), "rename");
    t.note("s1 commits the rename. The old claim names nothing now: verify, status and watchdog say so.");
    t.bsi(&["verify", "s1"]).ok();
    t.bsi(&["status"]).ok();
    t.bsi(&["watchdog"]);
    t.check("exact/renaming_a_held_heading_needs_the_new_name_and_a_stale_name_is_reported.txt");
}

// Case 5: two headings with the same text.
#[test]
fn both_headings_of_one_name_are_protected() {
    let b = hooked();
    b.write(
        "notes.md",
        "# Notes\n\n## Todo\n\na\n\n## Done\n\nb\n\n## Todo\n\nc\n",
    );
    b.git(&["add", "notes.md"]);
    git_as(&b, None, &["commit", "-q", "-m", "notes"]).ok();
    b.bsi(&[
        "open",
        "notes.md#Todo",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    b.bsi(&["open", "notes.md#Done", "--session", "s2", "--agent", "bob"])
        .ok();
    let (before, reg) = (b.head_commits(), b.registry());
    b.write("notes.md", "# Notes\n\n## Todo\n\na\n\n## Done\n\nb\n");
    b.git(&["add", "notes.md"]);
    let r = commit_as(&b, Some("s2"), "drop the second todo");
    refused(
        &b,
        &r,
        before,
        &reg,
        "under `Todo` in the previous version (removed)",
    );
    // verify of the committer sees the same place.
    git_as(
        &b,
        Some("s2"),
        &["commit", "-q", "--no-verify", "-m", "forced"],
    )
    .ok();
    let j = b.bsi(&["verify", "s2", "--json"]).code(6).json();
    let o = &j["overflow"][0];
    assert_eq!(o["heading"], "Todo", "{j}");
    assert_eq!(o["version"], "old", "{j}");
    assert_eq!(o["removal"], true, "{j}");
}

// Case 6: a false refusal at the top of a file.
#[test]
fn the_preamble_belongs_to_the_file_not_to_its_first_section() {
    let b = hooked();
    b.write(
        "notes.md",
        "preamble line\n\n## First\n\nf\n\n## Second\n\ns\n",
    );
    b.git(&["add", "notes.md"]);
    git_as(&b, None, &["commit", "-q", "-m", "notes"]).ok();
    b.bsi(&[
        "open",
        "notes.md#First",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    b.bsi(&[
        "open",
        "notes.md#Second",
        "--session",
        "s2",
        "--agent",
        "bob",
    ])
    .ok();
    let reg = b.registry();
    b.write("notes.md", "## First\n\nf\n\n## Second\n\ns\n");
    b.git(&["add", "notes.md"]);
    let r = commit_as(&b, Some("s2"), "drop the preamble");
    r.ok()
        .stderr_has("warning: notes.md lines 1-2 before the first heading in the previous version (removed) is outside the sections s2 holds");
    assert!(!r.stderr.contains("inside"), "{}", r.stderr);
    assert_eq!(b.head_subject(), "drop the preamble");
    assert_eq!(b.registry(), reg);
    let dropped = head(&b);
    let mut t = Transcript::new(&b);
    t.note("s2 committed the preamble's removal: <dropped>.");
    t.note("verify agrees: outside s2's sections, in no one's.");
    t.bsi(&["verify", "s2"]).code(6);
    b.write(
        "notes.md",
        "new preamble

## First

f

## Second

s
",
    );
    b.git(&["add", "notes.md"]);
    t.note("Without a session nothing is said at all.");
    t.git(&["commit", "-q", "-m", "a new preamble"]).ok();
    check_naming(
        &t,
        "exact/the_preamble_belongs_to_the_file_not_to_its_first_section.txt",
        &[("dropped", &dropped)],
    );
    assert_eq!(b.head_subject(), "a new preamble");
}

// Case 7: sections of files that are not markdown.
#[test]
fn only_markdown_files_have_sections() {
    let b = hooked();
    b.write("run.sh", "# setup\necho hi\n");
    b.write("doc.mdx", "# Intro\n\ntext\n");
    b.git(&["add", "-A"]);
    git_as(&b, None, &["commit", "-q", "-m", "files"]).ok();
    let reg = b.registry();
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "run.sh#setup", "--session", "s1"]).code(2);
    t.bsi(&["open", "doc.mdx#Intro", "--session", "s1"]).code(2);
    t.check("exact/only_markdown_files_have_sections.txt");
    assert_eq!(b.registry(), reg);
    // `.bsi.toml` adds endings.
    b.write(".bsi.toml", "markdown_extensions = [\"mdx\"]\n");
    b.bsi(&[
        "open",
        "doc.mdx#Intro",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    // Whole-file claims of scripts protect every line, comments included.
    b.bsi(&["open", "run.sh", "--session", "s1", "--agent", "alice"])
        .ok();
    let (before, reg) = (b.head_commits(), b.registry());
    b.write("run.sh", "# setup\n# mine\necho hi\n");
    b.git(&["add", "run.sh"]);
    let r = commit_as(&b, Some("s2"), "slip a comment in");
    refused(
        &b,
        &r,
        before,
        &reg,
        "run.sh is inside an active claim of session s1",
    );
}

// Case 8: verify --worktree and the hook map changes the same way.
#[test]
fn verify_worktree_maps_changes_to_sections_as_the_hook_does() {
    let b = hooked();
    b.write("a.md", "# A\n\n## Skills\n\nrust\n\n## Other\n\nx\n");
    b.git(&["add", "a.md"]);
    git_as(&b, None, &["commit", "-q", "-m", "a"]).ok();
    b.bsi(&["open", "a.md#Skills", "--session", "s1", "--agent", "alice"])
        .ok();
    b.write("a.md", "# A\n\n## Skills\n\nrust, git\n\n## Other\n\nx\n");
    let mut t = Transcript::new(&b);
    t.note("a.md changed under `Skills` only, not committed yet.");
    t.bsi(&["verify", "s1", "--worktree"]).ok();
    b.git(&["add", "a.md"]);
    commit_as(&b, Some("s1"), "skills").ok();
    t.note("s1 commits it.");
    t.bsi(&["verify", "s1"]).ok();
    // And outside: both say so, at the same place.
    b.write("a.md", "# A\n\n## Skills\n\nrust, git\n\n## Other\n\ny\n");
    t.note("a.md changed under `Other` too, not committed yet.");
    t.bsi(&["verify", "s1", "--worktree"]).code(6);
    t.check("exact/verify_worktree_maps_changes_to_sections_as_the_hook_does.txt");
    b.git(&["add", "a.md"]);
    commit_as(&b, Some("s1"), "other")
        .ok()
        .stderr_has("a.md line 9 under `Other` is outside the sections s1 holds");
}

// Case 9: two names for one thing.
#[test]
fn symlinks_and_the_directory_form_of_a_file_are_one_name() {
    let b = hooked();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("agents", b.path().join("team")).expect("symlink");
        std::os::unix::fs::symlink("agents/alice.md", b.path().join("alias.md")).expect("symlink");
    }
    b.bsi(&["open", "agents/", "--session", "s1", "--agent", "alice"])
        .ok();
    let reg = b.registry();
    let mut t = Transcript::new(&b);
    #[cfg(unix)]
    {
        t.note("team -> agents, alias.md -> agents/alice.md");
        t.bsi(&["open", "team/", "--session", "s2"]).code(2);
        t.bsi(&["open", "alias.md", "--session", "s3"]).code(2);
    }
    t.bsi(&["open", "agents/alice.md/", "--session", "s4"])
        .code(2);
    assert_eq!(b.registry(), reg);
    b.bsi(&["open", "newthing", "--session", "s5", "--agent", "bob"])
        .ok();
    let reg = b.registry();
    t.note("s5 holds newthing (no such file yet).");
    t.bsi(&["open", "newthing/", "--session", "s6", "--agent", "carol"])
        .code(3);
    t.check("exact/symlinks_and_the_directory_form_of_a_file_are_one_name.txt");
    assert_eq!(b.registry(), reg);
}

// Case 10: names with `#`, headings with markup, sessions of others,
// hand-written ids, blank lines in tables.
#[test]
fn a_name_with_a_hash_is_claimed_with_an_escape() {
    let b = hooked();
    b.write("lang/C#.md", "# C#\n\ntext\n");
    b.write("issue#12/notes.md", "# Notes\n");
    b.git(&["add", "-A"]);
    git_as(&b, None, &["commit", "-q", "-m", "hash names"]).ok();
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "lang/C#.md", "--session", "s1"]).code(2);
    b.bsi(&[
        "open",
        "lang/C\\#.md",
        "issue\\#12/",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    assert!(b.registry().contains("lang/C\\\\#.md"), "{}", b.registry());
    t.note("s1 opens 'lang/C\\#.md' 'issue\\#12/'.");
    t.bsi(&["status"]).ok();
    t.check("exact/a_name_with_a_hash_is_claimed_with_an_escape.txt");
    let (before, reg) = (b.head_commits(), b.registry());
    b.write("lang/C#.md", "# C#\n\nchanged\n");
    b.write("issue#12/notes.md", "# Notes\n\nchanged\n");
    b.git(&["add", "-A"]);
    let r = commit_as(&b, Some("s2"), "hash");
    refused(
        &b,
        &r,
        before,
        &reg,
        "lang/C#.md is inside an active claim of session s1",
    );
    r.stderr_has("issue#12/notes.md is inside an active claim of session s1");
}

#[test]
fn a_heading_with_markup_is_typed_with_or_without_it() {
    let b = hooked();
    b.write("p.md", "# P\n\n## The *big* plan\n\ntext\n");
    b.git(&["add", "p.md"]);
    git_as(&b, None, &["commit", "-q", "-m", "p"]).ok();
    let mut t = Transcript::new(&b);
    t.bsi(&[
        "open",
        "p.md#The *big* plan",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    let reg = b.registry();
    t.bsi(&[
        "open",
        "p.md#The big plan",
        "--session",
        "s2",
        "--agent",
        "bob",
    ])
    .code(3);
    t.check("exact/a_heading_with_markup_is_typed_with_or_without_it.txt");
    assert_eq!(b.registry(), reg);
}

#[test]
fn open_under_another_agents_session_is_refused() {
    let b = hooked();
    b.bsi(&[
        "open",
        "agents/alice.md",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    let reg = b.registry();
    let mut t = Transcript::new(&b);
    t.bsi(&["open", "agents/bob.md", "--session", "s1", "--agent", "bob"])
        .code(1);
    t.check("exact/open_under_another_agents_session_is_refused.txt");
    assert_eq!(b.registry(), reg);
    b.bsi(&[
        "open",
        "agents/bob.md",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
}

#[test]
fn a_hand_written_session_id_can_be_released() {
    let b = hooked();
    b.bsi(&[
        "open",
        "agents/alice.md",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    let edited = b.registry().replacen("| s1 |", "| s1 x |", 1);
    assert!(edited.contains("| s1 x |"));
    b.commit_registry(&edited, "by hand");
    let mut t = Transcript::new(&b);
    t.note("The registry's row of s1 edited by hand to session `s1 x`.");
    t.bsi(&["status"]).ok();
    t.bsi(&["release", "s1 x", "--confirm", "--force"]).ok();
    assert!(b.active().is_empty(), "{:?}", b.active());
    t.note("An id nobody holds is still refused as malformed.");
    t.bsi(&["release", "s2 y", "--confirm"]).code(2);
    t.check("exact/a_hand_written_session_id_can_be_released.txt");
}

#[test]
fn a_blank_line_inside_a_table_makes_the_registry_invalid() {
    let b = hooked();
    b.bsi(&[
        "open",
        "agents/alice.md",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    b.bsi(&["open", "agents/bob.md", "--session", "s2", "--agent", "bob"])
        .ok();
    let text = b.registry();
    let broken = text.replacen("\n| s2 |", "\n\n| s2 |", 1);
    assert_ne!(broken, text);
    let line = broken
        .lines()
        .position(|l| l.starts_with("| s2 |"))
        .expect("row")
        + 1;
    b.commit_registry(&broken, "a sloppy merge fix");
    let mut t = Transcript::new(&b);
    t.note(&format!(
        "A blank line committed by hand before s2's row (line {line} of the registry)."
    ));
    let r = t.bsi(&["status"]);
    // The line numbers are those of the text committed.
    r.code(5)
        .stderr_has(&format!("line {line}: "))
        .stderr_has(&format!("blank line on line {}", line - 1));
    t.check("exact/a_blank_line_inside_a_table_makes_the_registry_invalid.txt");
    assert_eq!(b.registry(), broken, "nothing rewritten");
}
