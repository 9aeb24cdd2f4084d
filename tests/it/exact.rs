//! The guard judges exactly what a commit records: every form of
//! `git commit` through the installed hooks, sections in the old and the
//! new version of a file, one name per thing. Each test names the case of
//! the hostile review it answers.

use std::path::Path;

use crate::common::{Brain, Run};
use crate::hooks::{check_naming, commit_as, forced_past_the_hook, git_as, head, hooked, session};
use crate::transcript::Transcript;

/// s1 (alice) holds `agents/`, s2 (bob) holds `projets/`.
fn two_sessions() -> Brain {
    let b = hooked();
    b.bsi(&["open", "agents/", "--session", "s1", "--agent", "alice"])
        .ok();
    b.bsi(&["open", "projets/", "--session", "s2", "--agent", "bob"])
        .ok();
    b
}

/// Checks a refused commit: git exits 1, nothing is committed on HEAD and
/// the registry is as it was (what it says is in the test's transcript).
#[track_caller]
fn refused(b: &Brain, r: &Run, before: usize, registry: &str) {
    r.code(1);
    assert_eq!(b.head_commits(), before, "nothing committed");
    assert_eq!(b.registry(), registry, "registry unchanged");
}

// Case 1: `git commit -a`, `git commit PATHS` and `git commit -i`.
#[test]
fn commit_a_paths_and_i_are_judged_on_the_index_git_hands_the_hook() {
    let b = two_sessions();
    let (before, reg) = (b.head_commits(), b.registry());
    b.write("agents/alice.md", "# Alice\n\nchanged by s2\n");
    let mut t = Transcript::new(&b);
    t.note("s1 (alice) holds agents/, s2 (bob) projets/. agents/alice.md changed, not staged.");
    let r = t.git_env(&["commit", "-q", "-a", "-m", "all"], &session("s2"));
    refused(&b, &r, before, &reg);
    let r = t.git_env(
        &["commit", "-q", "-m", "paths", "agents/alice.md"],
        &session("s2"),
    );
    refused(&b, &r, before, &reg);
    let plan = b.read("projets/plan.md");
    b.write("projets/plan.md", &plan.replace("risk text", "risk, s2"));
    b.git(&["add", "projets/plan.md"]);
    t.note("s2 stages its own change to projets/plan.md.");
    let r = t.git_env(
        &["commit", "-q", "-i", "-m", "include", "agents/alice.md"],
        &session("s2"),
    );
    refused(&b, &r, before, &reg);
    // The index the user built is left as it was.
    assert_eq!(
        b.git(&["diff", "--cached", "--name-only"]),
        "projets/plan.md\n"
    );

    // Past the hook, verify of the committer finds what the hook refused.
    t.note("s2 commits `-a` past the hook (bsi.hookMode=off): <forced>.");
    let forced = forced_past_the_hook(&mut t, &b, "s2", &["-a"], "forced");
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
    let mut t = Transcript::new(&b);
    t.note("s1 (alice) holds agents/, s2 (bob) projets/.");
    t.note("agents/alice.md staged by s1; projets/plan.md changed by s2, not staged.");
    t.git_env(
        &["commit", "-q", "-m", "own only", "projets/plan.md"],
        &session("s2"),
    )
    .ok();
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
    let mut t = Transcript::new(&b);
    t.note("s1 (alice) holds agents/, s2 (bob) projets/. s2 commits its own change.");
    t.git_env(&["commit", "-q", "-m", "own"], &session("s2"))
        .ok();
    let (before, reg) = (b.head_commits(), b.registry());

    // --amend: judged against HEAD, as git records it.
    b.write("agents/alice.md", "# Alice\n\namended in by s2\n");
    b.git(&["add", "agents/alice.md"]);
    t.note("s2 stages a change to agents/alice.md and amends.");
    let r = t.git_env(&["commit", "-q", "--amend", "--no-edit"], &session("s2"));
    refused(&b, &r, before, &reg);
    assert_eq!(b.head_subject(), "own");
    b.git(&["reset", "-q", "agents/alice.md"]);
    // Amending with one's own change passes.
    let plan = b.read("projets/plan.md");
    b.write(
        "projets/plan.md",
        &plan.replace("risk, s2", "risk, s2 again"),
    );
    t.note("agents/alice.md unstaged; s2 amends with its own change.");
    t.git_env(
        &["commit", "-q", "--amend", "--no-edit", "projets/plan.md"],
        &session("s2"),
    )
    .ok();
    assert_eq!(b.head_commits(), before);

    // From a subdirectory.
    t.note("From a subdirectory, agents/alice.md still changed.");
    let r = t.git_in(
        Path::new("projets"),
        &["commit", "-q", "-a", "-m", "from projets/"],
        &session("s2"),
    );
    refused(&b, &r, before, &reg);
    b.git(&["checkout", "-q", "--", "agents/alice.md"]);

    // In a linked work tree: the same hooks, the same claims.
    let (_other, wt) = b.worktree("side", Some("side"));
    std::fs::write(wt.join("agents/alice.md"), "# Alice\n\nfrom a worktree\n").expect("write");
    t.note("In a linked work tree of branch side, agents/alice.md changed.");
    let r = t.git_in(&wt, &["commit", "-q", "-a", "-m", "wt"], &session("s2"));
    r.code(1);
    let side_commits = b.git_at(&wt, None, &["rev-list", "--count", "HEAD"]);
    assert_eq!(side_commits.stdout.trim(), before.to_string());
    std::fs::write(wt.join("projets/plan.md"), "# Plan\n\nfrom a worktree\n").expect("write");
    t.note("There, s2 commits only its own projets/plan.md.");
    t.git_in(
        &wt,
        &["commit", "-q", "-m", "wt own", "projets/plan.md"],
        &session("s2"),
    )
    .ok();
    t.check("exact/amend_a_subdirectory_and_a_worktree_are_judged_too.txt");
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

    // git's own words on the conflict are not bsi's: the merges run outside
    // the transcript.
    let r = git_as(&b, Some("s2"), &["merge", "-q", "other", "-m", "merge"]);
    assert_ne!(r.code, 0, "a conflict on README.md: {r:?}");
    b.write("README.md", "# Brain\n\nmain's line\nother's line\n");
    b.git(&["add", "README.md"]);
    let mut t = Transcript::new(&b);
    t.note("s1 holds agents/bob.md, s2 README.md and agents/alice.md.");
    t.note("Branch other changed agents/bob.md and README.md; s2 merges it into main,");
    t.note("resolves the conflict on README.md and concludes: bob.md comes as the other branch has it.");
    t.git_env(&["commit", "-q", "-m", "merge other"], &session("s2"))
        .ok();
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
    t.note("Reset to before the merge; merged again, the resolution also edits agents/bob.md.");
    let r = t.git_env(&["commit", "-q", "-m", "merge other"], &session("s2"));
    refused(&b, &r, before, &reg);
    t.check("exact/a_merge_is_judged_on_what_its_resolution_adds.txt");
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
    let mut t = Transcript::new(&b);
    t.note("s1 (alice) holds projets/plan.md#Goals, s2 (bob) #Risks.");
    for (what, new) in [
        (
            "s2 writes `## Risks` (its name) just under `## Goals`, and edits Goals' line.",
            plan.replace("## Goals\n\n", "## Goals\n\n## Risks\n\n")
                .replace("goal text", "goal text, mine now"),
        ),
        (
            "The heading alone: Goals' lines would move under it.",
            plan.replace("## Goals\n\n", "## Goals\n\n## Risks\n\n"),
        ),
        (
            "A setext underline turns Goals' line into a heading.",
            plan.replace("goal text\n", "goal text\n---\n"),
        ),
    ] {
        b.write("projets/plan.md", &new);
        b.git(&["add", "projets/plan.md"]);
        t.note(what);
        let r = t.git_env(&["commit", "-q", "-m", "take goals"], &session("s2"));
        refused(&b, &r, before, &reg);
    }
    // Without any session: `# Misc` above Goals' lines.
    b.write(
        "projets/plan.md",
        &plan.replace("goal text\n", "# Misc\n\ngoal text\n"),
    );
    b.git(&["add", "projets/plan.md"]);
    t.note("Without any session: `# Misc` above Goals' lines.");
    let r = t.git(&["commit", "-q", "-m", "misc"]);
    refused(&b, &r, before, &reg);

    // verify of the committer agrees with the hook.
    b.write(
        "projets/plan.md",
        &plan.replace("## Goals\n\n", "## Goals\n\n## Risks\n\n"),
    );
    b.git(&["add", "projets/plan.md"]);
    t.note("s2 commits `## Risks` under `## Goals` past the hook (bsi.hookMode=off): <forced>.");
    let forced = forced_past_the_hook(&mut t, &b, "s2", &[], "forced");
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
    let mut t = Transcript::new(&b);
    t.note("The files are stored as cafe\\u{301}.md and e\\u{301}quipe/x.md (NFD);");
    t.note("s1 (alice) holds café.md and équipe/ typed composed (NFC).");
    let r = t.git_env(&["commit", "-q", "-m", "nfd"], &session("s2"));
    refused(&b, &r, before, &reg);
    // The two forms look the same in the transcript: the scopes are named
    // as they were claimed, composed.
    r.stderr_has("scope caf\u{e9}.md")
        .stderr_has("scope \u{e9}quipe/");
    t.check("exact/a_decomposed_file_name_is_the_claimed_name.txt");
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
    let mut t = Transcript::new(&b);
    t.note("s1 (alice) holds projets/plan.md#Goals, s2 (bob) #Risks. s1 renames `## Goals` to `## Objectives`.");
    let r = t.git_env(&["commit", "-q", "-m", "rename"], &session("s1"));
    refused(&b, &r, before, &reg);

    t.bsi(&[
        "open",
        "projets/plan.md#Objectives",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    t.note("Not committed yet: neither name is reported as missing.");
    t.bsi(&["status"]).ok();
    t.git_env(&["commit", "-q", "-m", "rename"], &session("s1"))
        .ok();
    assert_eq!(b.head_subject(), "rename");
    t.note("s1 committed the rename. The old claim names nothing now: verify, status and watchdog say so.");
    t.bsi(&["verify", "s1"]).ok();
    t.bsi(&["status"]).ok();
    t.bsi(&["watchdog"]).ok();
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
    let mut t = Transcript::new(&b);
    t.note("notes.md has `## Todo`, `## Done`, `## Todo`; s1 (alice) holds #Todo, s2 (bob) #Done.");
    t.note("s2 removes the second `## Todo` and its line.");
    let r = t.git_env(
        &["commit", "-q", "-m", "drop the second todo"],
        &session("s2"),
    );
    refused(&b, &r, before, &reg);
    t.check("exact/both_headings_of_one_name_are_protected.txt");
    // verify of the committer sees the same place.
    git_as(
        &b,
        Some("s2"),
        &["-c", "bsi.hookMode=off", "commit", "-q", "-m", "forced"],
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
    let mut t = Transcript::new(&b);
    t.note("notes.md: a preamble line, `## First`, `## Second`; s1 (alice) holds #First, s2 (bob) #Second.");
    t.note("s2 removes the preamble: <dropped>.");
    t.git_env(&["commit", "-q", "-m", "drop the preamble"], &session("s2"))
        .ok();
    assert_eq!(b.head_subject(), "drop the preamble");
    assert_eq!(b.registry(), reg);
    let dropped = head(&b);
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
    assert_eq!(b.registry(), reg);
    // `.bsi.toml` adds endings.
    b.write(".bsi.toml", "markdown_extensions = [\"mdx\"]\n");
    t.note(".bsi.toml: markdown_extensions = [\"mdx\"]");
    t.bsi(&[
        "open",
        "doc.mdx#Intro",
        "--session",
        "s1",
        "--agent",
        "alice",
    ])
    .ok();
    // Whole-file claims of scripts protect every line, comments included.
    t.bsi(&["open", "run.sh", "--session", "s1", "--agent", "alice"])
        .ok();
    let (before, reg) = (b.head_commits(), b.registry());
    b.write("run.sh", "# setup\n# mine\necho hi\n");
    b.git(&["add", "run.sh"]);
    t.note("s2 adds a comment line to run.sh.");
    let r = t.git_env(&["commit", "-q", "-m", "slip a comment in"], &session("s2"));
    refused(&b, &r, before, &reg);
    t.check("exact/only_markdown_files_have_sections.txt");
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
    t.note("s1 commits it.");
    t.git_env(&["commit", "-q", "-m", "skills"], &session("s1"))
        .ok();
    t.bsi(&["verify", "s1"]).ok();
    // And outside: both say so, at the same place.
    b.write("a.md", "# A\n\n## Skills\n\nrust, git\n\n## Other\n\ny\n");
    t.note("a.md changed under `Other` too, not committed yet.");
    let v = t.bsi(&["verify", "s1", "--worktree"]);
    v.code(6);
    b.git(&["add", "a.md"]);
    t.note("s1 commits it: the hook warns of the same place.");
    let r = t.git_env(&["commit", "-q", "-m", "other"], &session("s1"));
    r.ok();
    t.check("exact/verify_worktree_maps_changes_to_sections_as_the_hook_does.txt");
    // The same place in both, whatever the wording around it.
    let place = v
        .stdout
        .lines()
        .find_map(|l| Some(l.strip_prefix("overflow: ")?.split_once(" — ")?.0))
        .unwrap_or_else(|| panic!("no overflow line:\n{}", v.stdout));
    assert_eq!(place, "a.md line 9 under `Other`");
    assert!(
        r.stderr.contains(&format!("warning: {place} is outside")),
        "the hook names another place than verify ({place}):\n{}",
        r.stderr
    );
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
    let (before, reg) = (b.head_commits(), b.registry());
    b.write("lang/C#.md", "# C#\n\nchanged\n");
    b.write("issue#12/notes.md", "# Notes\n\nchanged\n");
    b.git(&["add", "-A"]);
    t.note("s2 stages changes to lang/C#.md and issue#12/notes.md.");
    let r = t.git_env(&["commit", "-q", "-m", "hash"], &session("s2"));
    refused(&b, &r, before, &reg);
    t.check("exact/a_name_with_a_hash_is_claimed_with_an_escape.txt");
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
