//! The copy bsi keeps of each session's uncommitted work inside its claims
//! (`refs/bsi/keep/<session>`, never pushed), and `bsi recover`, which puts
//! the session's own lines back after a person's `git stash`, a hand `git
//! reset --hard`, or anything else that took them out of the files —
//! section by section, never over newer lines, the index untouched.

use crate::agent_hook::{PLAN, event, with_stdin};
use crate::common::{Brain, Run};

/// Claude Code's `Write` of `rel` with `content`, judged by the edit hook
/// for `session`, then made (the hook judges; the tool writes).
fn claude_writes(b: &Brain, session: &str, rel: &str, content: &str) {
    let mut v: serde_json::Value =
        serde_json::from_str(&event(b, "claude-pretooluse-write.json")).expect("fixture");
    v["tool_input"]["file_path"] = b.path().join(rel).display().to_string().into();
    v["tool_input"]["content"] = content.into();
    let r = with_stdin(
        b,
        &["hook", "edit", "--tool", "claude"],
        &v.to_string(),
        &[("BSI_SESSION", session)],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        !r.stdout.contains("\"deny\""),
        "{session}'s own edit is let through: {r:?}"
    );
    b.write(rel, content);
}

fn recover(b: &Brain, session: &str) -> Run {
    b.bsi(&["recover", session])
}

const ADA: &str = "risk text\nada's risk\n";
const BO: &str = "goal text\nbo's goal\n";

fn with(lines: &[(&str, &str)]) -> String {
    lines
        .iter()
        .fold(PLAN.to_string(), |t, (from, to)| t.replace(from, to))
}

/// ada holds Risks and `notes/`, bo holds Goals; each has written through
/// Claude Code's edit hook, none of it committed.
fn two_sessions_at_work() -> Brain {
    let b = Brain::new();
    b.bsi(&["open", "projets/plan.md#Risks", "--session", "ada"])
        .ok();
    b.bsi(&["open", "notes/", "--session", "ada"]).ok();
    b.bsi(&["open", "projets/plan.md#Goals", "--session", "bo"])
        .ok();
    claude_writes(&b, "ada", "projets/plan.md", &with(&[("risk text\n", ADA)]));
    claude_writes(
        &b,
        "bo",
        "projets/plan.md",
        &with(&[("risk text\n", ADA), ("goal text\n", BO)]),
    );
    claude_writes(&b, "ada", "notes/idea.md", "# Idea\n\nada's new file\n");
    b
}

#[test]
fn recover_puts_back_what_a_persons_stash_took_each_session_its_own_lines() {
    let b = two_sessions_at_work();
    let commits = b.commits();
    // A person's `git stash -u`: git has no hook there.
    b.git(&["stash", "-u"]);
    assert_eq!(b.read("projets/plan.md"), PLAN);
    assert!(!b.path().join("notes/idea.md").exists());
    let r = recover(&b, "ada");
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains("Put back ada's uncommitted lines from its copy")
            && r.stdout.contains("- projets/plan.md, section Risks")
            && r.stdout.contains("- notes/idea.md"),
        "{}",
        r.stdout
    );
    // ada's lines alone: bo's are bo's to put back.
    assert_eq!(b.read("projets/plan.md"), with(&[("risk text\n", ADA)]));
    assert_eq!(b.read("notes/idea.md"), "# Idea\n\nada's new file\n");
    let r = recover(&b, "bo");
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains("- projets/plan.md, section Goals"),
        "{}",
        r.stdout
    );
    assert_eq!(
        b.read("projets/plan.md"),
        with(&[("risk text\n", ADA), ("goal text\n", BO)])
    );
    // Only the work tree: the index, HEAD, the stash and the registry are
    // as they were.
    assert_eq!(b.git(&["diff", "--cached", "--name-only"]), "");
    assert_eq!(b.git(&["stash", "list"]).lines().count(), 1);
    assert_eq!(b.commits(), commits);
    // Again: nothing to put back, nothing written.
    let again = recover(&b, "ada");
    assert!(
        again.stdout.contains("Nothing put back"),
        "{}",
        again.stdout
    );
    let doc = b.bsi(&["recover", "ada", "--json"]).json();
    assert_eq!(doc["session"], "ada");
    assert_eq!(doc["restored"], serde_json::json!([]));
    assert!(
        doc["copy"].is_string() && doc["kept_at"].is_string(),
        "{doc}"
    );
}

#[test]
fn after_a_hand_reset_newer_lines_are_never_written_over_and_are_said() {
    let b = two_sessions_at_work();
    b.git(&["reset", "--hard", "-q"]);
    b.git(&["clean", "-fdq"]);
    // Someone writes in Risks since: ada's copy does not go over it.
    let newer = PLAN.replace("risk text\n", "risk text\na newer line\n");
    b.write("projets/plan.md", &newer);
    let r = recover(&b, "ada");
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains("Left as the files have them now:")
            && r.stdout.contains(
                "- projets/plan.md, section Risks: the file has other lines there now (the copy: `git show refs/bsi/keep/ada:work/projets/plan.md`)"
            ),
        "{}",
        r.stdout
    );
    assert_eq!(b.read("projets/plan.md"), newer);
    assert_eq!(b.read("notes/idea.md"), "# Idea\n\nada's new file\n");
    // The command it prints shows the copy, as printed.
    let show = b.git(&["show", "refs/bsi/keep/ada:work/projets/plan.md"]);
    assert!(show.contains("ada's risk"), "{show}");
    let doc = b.bsi(&["recover", "ada", "--json"]).json();
    assert_eq!(doc["left"][0]["why"], "newer_lines", "{doc}");
}

#[test]
fn status_keeps_what_the_hooks_did_not_see_and_close_keeps_the_last_copy() {
    let b = Brain::new();
    b.bsi(&["open", "notes/", "--session", "ada"]).ok();
    // Written by a shell the hooks did not see; `status` for ada keeps it.
    b.write("notes/shell.md", "# Shell\n\nwritten by a script\n");
    b.bsi_env(&["status"], &[("BSI_SESSION", "ada")]).ok();
    // ada closes with the work uncommitted; the copy outlives the claim.
    b.bsi(&["close", "ada"]).ok();
    b.git(&["clean", "-fdq"]);
    let r = recover(&b, "ada");
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(b.read("notes/shell.md"), "# Shell\n\nwritten by a script\n");
    // Committed, the copy has nothing left to keep: it goes.
    b.bsi(&["open", "notes/", "--session", "cy"]).ok();
    b.write("notes/cy.md", "# Cy\n");
    b.bsi_env(&["commit", "-m", "cy's note"], &[("BSI_SESSION", "cy")])
        .ok();
    assert_eq!(
        b.git_run(&["rev-parse", "-q", "--verify", "refs/bsi/keep/cy"])
            .code,
        1
    );
}

#[test]
fn the_copy_is_never_pushed_and_no_copy_is_said_plainly() {
    let b = two_sessions_at_work();
    let remote = b.publish_to_bare();
    b.git(&["push", "-q", "origin", "HEAD"]);
    b.bsi(&["sync"]).ok();
    let refs = b.git(&["ls-remote", &remote.path().display().to_string()]);
    assert!(!refs.contains("refs/bsi/keep"), "{refs}");
    assert!(
        b.git(&["for-each-ref", "refs/bsi/keep"])
            .contains("refs/bsi/keep/ada")
    );
    let r = recover(&b, "nobody");
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains("No copy of nobody's uncommitted work is kept in this clone"),
        "{}",
        r.stdout
    );
}

/// With `claim_on_write`, the first write claims its file and is the
/// session's at once: the copy keeps it, and a person's `git stash` does
/// not lose it.
#[test]
fn the_edit_that_claims_on_the_first_write_is_kept_at_once() {
    let b = Brain::new();
    b.write(".bsi.toml", "claim_on_write = true\n");
    let text = with(&[("risk text\n", ADA)]);
    claude_writes(&b, "ada", "projets/plan.md", &text);
    assert!(
        b.active()
            .iter()
            .any(|r| r.contains("| ada | projets/plan.md | file |")),
        "{:?}",
        b.active()
    );
    let kept = b.git(&["show", "refs/bsi/keep/ada:work/projets/plan.md"]);
    assert_eq!(kept, text);
    b.git(&["stash", "-u"]);
    assert_eq!(b.read("projets/plan.md"), PLAN);
    recover(&b, "ada")
        .ok()
        .stdout_has("- projets/plan.md, section Risks");
    assert_eq!(b.read("projets/plan.md"), text);
}
