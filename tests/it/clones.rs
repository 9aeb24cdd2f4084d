//! Clones and repository formats libgit2 alone cannot serve: shallow and
//! single-branch clones (no registry branch fetched), a partial clone
//! (objects fetched when first read), a split index and a sparse index
//! (index extensions libgit2 does not read). Real `git clone` of a bare
//! remote, real `git commit` through the installed hooks.

use std::path::Path;
use std::process::Command;

use crate::common::{Brain, Machines, NOW, Run, add_config, bin, clean_env, scratch};

/// A clone of `bare` made by `git clone FLAGS file://…`: a third machine,
/// with an identity of its own.
fn clone_with(bare: &Path, flags: &[&str]) -> Brain {
    let dir = scratch("bsi-clone");
    let url = format!("file://{}", bare.display());
    let mut cmd = Command::new("git");
    clean_env(&mut cmd, dir.path());
    let r = Run::from_output(
        cmd.current_dir(dir.path())
            .args(["clone", "-q"])
            .args(flags)
            .arg(&url)
            .arg(dir.path())
            .output()
            .expect("run git"),
    );
    assert_eq!(r.code, 0, "git clone {flags:?}: {}", r.stderr);
    let b = Brain {
        dir,
        now: NOW.to_string(),
    };
    add_config(
        &b.path().join(".git"),
        &[
            ("user", "name", "carol"),
            ("user", "email", "carol@example.com"),
            ("commit", "gpgsign", "false"),
        ],
    );
    b
}

/// Two machines and their remote, `sess-other` (alice's) holding
/// `projets/plan.md#Goals` there.
fn held_on_the_remote() -> Machines {
    let m = Machines::new();
    m.a.bsi(&[
        "open",
        "projets/plan.md#Goals",
        "--session",
        "sess-other",
        "--agent",
        "bob",
    ])
    .ok()
    .stdout_has("Claim opened");
    m
}

const TRACKING: &str = "refs/remotes/origin/brain-index";
const REFSPEC: &str = "+refs/heads/brain-index:refs/remotes/origin/brain-index";

fn has_ref(b: &Brain, name: &str) -> bool {
    b.git_run(&["rev-parse", "--verify", "-q", name]).code == 0
}

fn fetch_refspecs(b: &Brain) -> Vec<String> {
    b.git(&["config", "--get-all", "remote.origin.fetch"])
        .lines()
        .map(String::from)
        .collect()
}

/// Replaces `from` by `to` in `projets/plan.md` (inside `#Goals`) and
/// commits it: what the hook is asked about.
fn commit_goals(b: &Brain, from: &str, to: &str) -> Run {
    let text = b.read("projets/plan.md");
    assert!(text.contains(from), "{text}");
    b.write("projets/plan.md", &text.replacen(from, to, 1));
    b.git(&["add", "projets/plan.md"]);
    b.git_run(&["commit", "-q", "-m", "goals"])
}

/// Commits a new file nobody claims.
fn commit_free(b: &Brain, rel: &str) -> Run {
    b.write(rel, "# Free\n\nmine\n");
    b.git(&["add", rel]);
    b.git_run(&["commit", "-q", "-m", "free"])
}

#[track_caller]
fn refused(r: &Run) {
    assert_eq!(r.code, 1, "the commit landed: {r:?}");
    r.stderr_has("inside an active claim of session sess-other");
    r.stderr_has("commit refused");
}

#[test]
fn a_shallow_or_single_branch_clone_fetches_the_registry_once_hooks_are_installed() {
    let m = held_on_the_remote();
    for (i, flags) in [&["--depth", "1"][..], &["--single-branch"][..]]
        .into_iter()
        .enumerate()
    {
        let c = clone_with(m.bare.path(), flags);
        // The clone fetches its one branch: no registry arrives.
        assert!(!has_ref(&c, TRACKING), "{flags:?}");
        let r = c.bsi(&["hook", "install"]);
        r.ok();
        r.stdout_has(&format!(
            "registry fetch: this clone of origin fetched only some branches ({}",
            if i == 0 {
                "a shallow clone"
            } else {
                "a single-branch clone"
            }
        ));
        r.stdout_has(&format!("`git config --add remote.origin.fetch {REFSPEC}`"));
        r.stdout_has("fetched origin/brain-index now");
        assert!(has_ref(&c, TRACKING), "{flags:?}");
        let specs = fetch_refspecs(&c);
        assert_eq!(
            specs.iter().filter(|s| *s == REFSPEC).count(),
            1,
            "{specs:?}"
        );
        // Said once: installing again adds nothing and says nothing of it.
        let again = c.bsi(&["hook", "install"]);
        again.ok();
        assert!(!again.stdout.contains("registry fetch"), "{again:?}");
        assert_eq!(fetch_refspecs(&c), specs);
        // The guard holds, and lets free work through.
        refused(&commit_goals(&c, "goal text", "goal edit"));
        c.git(&["reset", "-q", "--hard"]);
        commit_free(&c, &format!("notes-{i}.md")).ok();
        // A claim made later reaches the clone with a plain `git fetch`.
        let later = format!("sess-later-{i}");
        let file = ["agents/alice.md", "agents/bob.md"][i];
        m.a.bsi(&["open", file, "--session", &later]).ok();
        c.git(&["fetch", "-q"]);
        c.write(file, "# Changed\n");
        c.git(&["add", file]);
        let r = c.git_run(&["commit", "-q", "-m", "later"]);
        assert_eq!(r.code, 1, "{r:?}");
        r.stderr_has(&format!("inside an active claim of session {later}"));
    }
    // Without the hooks: the first command that fetches the registry adds
    // it to what the clone fetches, and says so once.
    let c = clone_with(m.bare.path(), &["--depth", "1"]);
    let r = c.bsi(&["status"]);
    r.ok().stdout_has("projets/plan.md#Goals");
    r.stderr_has("note: this clone of origin fetched only some branches (a shallow clone");
    assert!(fetch_refspecs(&c).contains(&REFSPEC.to_string()));
    let r = c.bsi(&["status"]);
    r.ok();
    assert!(!r.stderr.contains("note:"), "{r:?}");
}

#[test]
fn a_hook_in_a_clone_that_never_fetched_the_registry_asks_the_remote_or_says_so() {
    let m = held_on_the_remote();
    let c = clone_with(m.bare.path(), &["--single-branch"]);
    // The hook, put in place without `bsi hook install` (by a hook
    // manager, say): nothing has added the registry to what the clone
    // fetches.
    let hook = c.path().join(".git/hooks/pre-commit");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\nexec '{}' hook pre-commit \"$@\"\n",
            bin().display()
        ),
    )
    .expect("write hook");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let url = m.bare.path().to_str().expect("utf-8").to_string();
    // The remote cannot be asked: the hook says so, and what to run.
    c.git(&[
        "remote",
        "set-url",
        "origin",
        "file:///nonexistent/brain.git",
    ]);
    let r = commit_goals(&c, "goal text", "goal edit");
    r.ok();
    r.stderr_has("this clone has never fetched origin/brain-index");
    r.stderr_has("Next: `bsi hook install` once origin is reachable");
    r.stderr_has("This commit is not checked against claims.");
    assert_eq!(
        fetch_refspecs(&c),
        ["+refs/heads/main:refs/remotes/origin/main"]
    );
    // The remote is back: asked once, the registry fetched and added to
    // what the clone fetches, and the claim holds.
    c.git(&["remote", "set-url", "origin", &format!("file://{url}")]);
    let r = commit_goals(&c, "goal edit", "goal edit again");
    refused(&r);
    r.stderr_has("bsi: note: fetched origin/brain-index for the first time");
    assert!(has_ref(&c, TRACKING));
    assert!(fetch_refspecs(&c).contains(&REFSPEC.to_string()));
    // Once fetched, the hook asks nothing: the next run is offline.
    c.git(&[
        "remote",
        "set-url",
        "origin",
        "file:///nonexistent/brain.git",
    ]);
    let r = c.git_run(&["commit", "-q", "-m", "goals"]);
    refused(&r);
    assert!(!r.stderr.contains("never fetched"), "{r:?}");

    // The agents' edit hook, in another single-branch clone whose project
    // settings hold bsi's hooks (as a team commits them): a brain, though
    // the clone has no registry yet.
    let d = clone_with(m.bare.path(), &["--single-branch"]);
    d.bsi(&["agent", "install", "claude"]).ok();
    let ev = crate::agent_hook::replace_event(
        &d,
        "claude",
        "projets/plan.md",
        "goal text",
        "better goal text",
    );
    let r = crate::agent_hook::with_stdin(&d, &["hook", "edit", "--tool", "claude"], &ev, &[]);
    r.ok();
    let v = r.json();
    assert_eq!(
        v["hookSpecificOutput"]["permissionDecision"], "deny",
        "{r:?}"
    );
    r.stderr_has("fetched origin/brain-index for the first time");
}

#[test]
fn a_partial_clone_reads_the_objects_it_lacks_through_git() {
    let m = held_on_the_remote();
    add_config(m.bare.path(), &[("uploadpack", "allowFilter", "true")]);
    let c = clone_with(m.bare.path(), &["--filter=blob:none"]);
    assert_eq!(c.git(&["config", "remote.origin.promisor"]).trim(), "true");
    // The registry's blob is not in the clone until read: git fetches it.
    let r = c.bsi(&["status"]);
    r.ok();
    r.stdout_has("projets/plan.md#Goals");
    c.bsi(&["hook", "install"]).ok();
    refused(&commit_goals(&c, "goal text", "goal edit"));
    c.git(&["reset", "-q", "--hard"]);
    commit_free(&c, "notes.md").ok();
    // A session of this clone commits inside its claim and verifies clean.
    c.bsi(&["open", "agents/alice.md", "--session", "sess-c"])
        .ok();
    c.write("agents/alice.md", "# Alice\n\nmore notes\n");
    c.git(&["add", "agents/alice.md"]);
    c.git_at(c.path(), Some("sess-c"), &["commit", "-q", "-m", "alice"])
        .ok();
    let r = c.bsi(&["verify", "sess-c"]);
    r.ok();
}

/// A brain whose index has an extension libgit2 does not read: git's
/// split index (`link`) or sparse index (`sdir`), with the hooks installed
/// and `sess-other` holding `projets/plan.md#Goals`.
fn with_index(kind: &str) -> Brain {
    let b = Brain::new();
    // A copied brain's index has stale file times: refreshed first.
    b.git(&["update-index", "-q", "--refresh"]);
    if kind == "split" {
        b.git(&["config", "core.splitIndex", "true"]);
        b.git(&["update-index", "--split-index"]);
        let shared = std::fs::read_dir(b.path().join(".git"))
            .expect("read .git")
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("sharedindex."));
        assert!(shared, "no shared index");
    } else {
        b.git(&["sparse-checkout", "init", "--cone", "--sparse-index"]);
        b.git(&["sparse-checkout", "set", "projets"]);
        let sparse = b.git(&["ls-files", "--sparse"]);
        assert!(sparse.lines().any(|l| l == "agents/"), "{sparse}");
    }
    b.bsi(&["hook", "install"]).ok();
    crate::agent_hook::other_holds(&b, "projets/plan.md#Goals");
    b
}

#[test]
fn a_split_or_sparse_index_is_read_through_git() {
    for kind in ["split", "sparse"] {
        let b = with_index(kind);
        // A commit of a file nobody claims passes.
        commit_free(&b, "projets/notes.md").ok();
        // One inside the claim is refused, staged or with `commit -a`.
        refused(&commit_goals(&b, "goal text", "goal edit"));
        b.git(&["reset", "-q"]);
        let r = b.git_run(&["commit", "-q", "-a", "-m", "all"]);
        refused(&r);
        // The work tree is read too, with its untracked files.
        b.bsi(&["open", "projets/notes.md", "--session", "sess-me"])
            .ok();
        b.write("projets/notes.md", "# Free\n\nmine, more\n");
        b.write("projets/new.md", "# New\n");
        let r = b.bsi(&["verify", "sess-me", "--worktree"]);
        assert_eq!(r.code, 6, "{kind}: {r:?}");
        r.stdout_has("projets/plan.md");
        r.stdout_has("projets/new.md");
        assert!(!r.stderr.contains("extension"), "{kind}: {r:?}");
        // The index keeps its format.
        b.git(&["checkout", "-q", "--", "projets/plan.md"]);
        if kind == "split" {
            assert_eq!(b.git(&["config", "core.splitIndex"]).trim(), "true");
        } else {
            assert!(b.git(&["ls-files", "--sparse"]).contains("agents/"));
        }
    }
    // A sparse checkout without a sparse index: the files it leaves out of
    // the work tree are not deletions.
    let b = Brain::new();
    b.git(&["update-index", "-q", "--refresh"]);
    b.git(&["sparse-checkout", "set", "projets"]);
    assert!(!b.path().join("agents/alice.md").exists());
    b.bsi(&["open", "projets/notes.md", "--session", "sess-me"])
        .ok();
    b.write("projets/notes.md", "# Notes\n");
    let r = b.bsi(&["verify", "sess-me", "--worktree"]);
    r.ok();
    assert!(!r.stdout.contains("agents/"), "{r:?}");
    // `bsi init` asks whether the registry is tracked: in the index too.
    let b = Brain::bare_repo();
    b.write("notes.md", "# Notes\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-q", "-m", "base"]);
    b.git(&["config", "core.splitIndex", "true"]);
    b.git(&["update-index", "--split-index"]);
    b.bsi(&["init"]).ok().stdout_has("Registry created");
}

#[test]
fn a_shallow_clone_with_copied_hooks_asks_the_remote_at_every_door() {
    let m = held_on_the_remote();
    m.b.bsi(&["hook", "install"]).ok();
    let c = clone_with(m.bare.path(), &["--depth", "1"]);
    // bsi's hooks copied in by hand: nothing fetched the registry.
    let hooks = c.path().join(".git/hooks");
    for e in std::fs::read_dir(m.b.path().join(".git/hooks")).expect("hooks") {
        let e = e.expect("entry");
        if !e.file_name().to_string_lossy().ends_with(".sample") {
            std::fs::copy(e.path(), hooks.join(e.file_name())).expect("copy hook");
        }
    }
    assert!(!has_ref(&c, TRACKING));
    let before = c.git(&["rev-parse", "HEAD"]);
    // `git commit --no-verify` skips pre-commit: the reference-transaction
    // hook asks the remote as pre-commit would, and the claim holds.
    let text = c.read("projets/plan.md");
    c.write(
        "projets/plan.md",
        &text.replacen("goal text", "goal edit", 1),
    );
    c.git(&["add", "projets/plan.md"]);
    let r = c.git_run(&["commit", "-q", "--no-verify", "-m", "goals"]);
    assert_ne!(r.code, 0, "the commit landed: {r:?}");
    r.stderr_has("bsi: note: fetched origin/brain-index for the first time");
    r.stderr_has("inside an active claim of session sess-other");
    assert_eq!(c.git(&["rev-parse", "HEAD"]), before);
    assert!(has_ref(&c, TRACKING));
    // Free work still lands.
    c.git(&["reset", "-q", "--hard"]);
    commit_free(&c, "notes/free.md").ok();
}
