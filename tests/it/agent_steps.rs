//! Every refusal an agent can meet, through every door it uses — its
//! shell (bsi's commands and git's, whose hooks speak on stderr), its
//! tool's edit hook, MCP — read for a next step that acts on another
//! session's claim or commit: closing, renewing or releasing it, `--force`,
//! skipping the guard (`bsi.hookMode=off`), reverting its commit. Such a
//! step may appear only as a person's, labelled so on its own line, and in
//! data only with `who: person`.

use serde_json::{Value, json};

use crate::agent_hook::{PLAN, hook, other_holds, replace_event};
use crate::common::{Brain, Run};
use crate::mcp::{call, connect, doc, runtime, text};

const OTHER: &str = "sess-other";
const ME: &str = "sess-me";

/// The steps an agent must never be handed as its own.
fn acts_on_another(line: &str) -> Option<&'static str> {
    let close = format!("bsi close {OTHER}");
    let renew = format!("bsi renew {OTHER}");
    [
        ("--force", "--force"),
        ("hookMode=off", "the guard skipped"),
        ("bsi release", "a release"),
        ("git revert", "a revert"),
        (close.as_str(), "another's close"),
        (renew.as_str(), "another's renewal"),
    ]
    .into_iter()
    .find(|(bad, _)| line.contains(bad))
    .map(|(_, what)| what)
}

/// Every line of `said` (a refusal as an agent reads it) that offers a
/// step acting on another session's work says it is a person's.
fn check_words(door: &str, said: &str) {
    assert!(!said.trim().is_empty(), "{door}: nothing said");
    for line in said.lines() {
        if let Some(what) = acts_on_another(line) {
            assert!(
                line.to_lowercase().contains("a person's step"),
                "{door}: {what} offered to an agent, not as a person's step:\n{line}\n---\n{said}"
            );
        }
    }
}

/// Typed next steps: one acting on another session is a person's.
fn check_steps(door: &str, steps: &Value) {
    for s in steps.as_array().into_iter().flatten() {
        let kind = s["step"].as_str().unwrap_or_default();
        let on_other = s["session"].as_str().is_some_and(|x| x != ME)
            || matches!(kind, "release" | "close_other" | "force" | "skip_guard");
        if on_other && kind != "wait" {
            assert_eq!(s["who"], "person", "{door}: {s}");
        }
    }
}

fn words(r: &Run) -> String {
    format!("{}\n{}", r.stdout, r.stderr)
}

/// A brain with the commit guard, where sess-other holds Goals with a
/// committed line and an uncommitted one, and sess-me holds Risks.
fn brain() -> Brain {
    let b = Brain::new();
    b.bsi(&["hook", "install"]).ok();
    other_holds(&b, "projets/plan.md#Goals");
    b.bsi(&["open", "projets/plan.md#Risks", "--session", ME])
        .ok();
    b.write(
        "projets/plan.md",
        &PLAN.replace("goal text", "goal text by other"),
    );
    b.git_at(b.path(), Some(OTHER), &["commit", "-qam", "other's goal"])
        .ok();
    b
}

fn me(b: &Brain, args: &[&str]) -> Run {
    b.bsi_at(b.path(), Some(ME), args)
}

#[test]
fn no_refusal_hands_an_agent_a_step_on_another_sessions_work() {
    let b = brain();

    // bsi's own commands, as the agent's shell runs them.
    let open = me(&b, &["open", "projets/plan.md#Goals"]);
    open.code(3);
    check_words("bsi open", &words(&open));
    let json = me(&b, &["open", "projets/plan.md#Goals", "--json"]);
    check_steps("bsi open --json", &json.json()["next"]);
    for args in [
        &["close", OTHER][..],
        &["renew", OTHER, "--ttl", "3h"],
        &["release", OTHER, "--confirm"],
        &["close", OTHER, "--scope", "projets/plan.md#Goals"],
    ] {
        let r = me(&b, args);
        assert_ne!(r.code, 0, "{args:?}: {r:?}");
        check_words(&format!("bsi {}", args.join(" ")), &words(&r));
    }

    // git's doors, through the agent's shell: a commit taking the other
    // session's uncommitted line, a revert and a reset of its commit.
    b.write(
        "projets/plan.md",
        &PLAN
            .replace("goal text", "goal text by other\nother's unfinished line")
            .replace("risk text", "risk text by me"),
    );
    let commit = b.git_at(b.path(), Some(ME), &["commit", "-qam", "mine"]);
    assert_ne!(commit.code, 0, "{commit:?}");
    check_words("git commit -a", &words(&commit));
    // The other session's line is said once, as inside its claim: not also
    // as outside the agent's own sections, as if the agent had written it.
    let said = words(&commit);
    assert!(
        said.contains("line 8 under `Goals` is inside an active claim of session sess-other")
            && !said.contains("line 8 under `Goals` is outside"),
        "{said}"
    );
    b.git_at(b.path(), None, &["reset", "-q"]).ok();
    let head = b.git(&["rev-parse", "HEAD"]).trim().to_string();
    // The agent's own lines committed, the other's left: then nothing of
    // its own is left to commit.
    me(&b, &["commit", "-m", "my risks"]).ok();
    let nothing = me(&b, &["commit", "-m", "again"]);
    assert_eq!(nothing.code, 1, "{nothing:?}");
    check_words("bsi commit", &words(&nothing));
    let plan = b.read("projets/plan.md");
    b.write(
        "projets/plan.md",
        &plan.replace("\nother's unfinished line", ""),
    );
    let revert = b.git_at(b.path(), Some(ME), &["revert", "--no-edit", &head]);
    assert_ne!(revert.code, 0, "{revert:?}");
    check_words("git revert", &words(&revert));
    // Commits landing on or leaving a branch have no lines of one's own to
    // pick: the way out is the holder's close, not `bsi commit`.
    let said = words(&revert);
    assert!(
        said.contains("ways out: wait for sess-other to close its claim, or ask its holder")
            && !said.contains("bsi commit"),
        "{said}"
    );
    let _ = b.git_at(b.path(), None, &["revert", "--abort"]);
    b.git_at(b.path(), None, &["reset", "-q", "--hard"]).ok();
    let reset = b.git_at(b.path(), Some(ME), &["reset", "-q", "--hard", "HEAD~2"]);
    assert_ne!(reset.code, 0, "{reset:?}");
    check_words("git reset --hard", &words(&reset));
    assert!(
        !words(&reset).contains("bsi commit")
            && words(&reset).contains("ways out: wait for sess-other to close its claim"),
        "{}",
        words(&reset)
    );
    b.git_at(b.path(), None, &["reset", "-q", "--hard"]).ok();

    // The tool's edit hook: an edit inside the other's section, a shell
    // move that would take its uncommitted work.
    b.write(
        "projets/plan.md",
        &b.read("projets/plan.md").replace(
            "goal text by other",
            "goal text by other\nother's unfinished line",
        ),
    );
    let edit = hook(
        &b,
        "edit",
        "claude",
        &replace_event(
            &b,
            "claude",
            "projets/plan.md",
            "goal text by other",
            "mine",
        ),
    );
    let said = crate::agent_hook::denial("claude", &edit).expect("refused");
    check_words("claude edit", &said);
    for (tool, command) in [("claude", "git stash -u"), ("codex", "git reset --hard")] {
        let r = hook(
            &b,
            "edit",
            tool,
            &crate::work_tree::shell_event(&b, tool, command),
        );
        let said = crate::agent_hook::denial(tool, &r).expect("refused");
        check_words(&format!("{tool} `{command}`"), &said);
    }

    // MCP: a claim, a check, a close and a renewal of another session, a
    // commit with nothing of one's own.
    runtime().block_on(async {
        let c = connect(
            &b,
            &[],
            &[("BSI_SESSION", ME)],
            crate::mcp::Client::default(),
        )
        .await;
        let r = call(&c, "claim", json!({"scopes": ["projets/plan.md#Goals"]})).await;
        assert_eq!(r.is_error, Some(true), "{}", text(&r));
        check_words("mcp claim", &text(&r));
        check_steps("mcp claim", &doc(&r)["next"]);
        for call_ in doc(&r)["next_calls"].as_array().into_iter().flatten() {
            assert_eq!(call_["tool"], "claim", "{call_}");
        }
        let r = call(
            &c,
            "check",
            json!({"path": "projets/plan.md", "lines": [7, 7]}),
        )
        .await;
        check_words("mcp check", &text(&r));
        check_steps("mcp check", &doc(&r)["next"]);
        let r = call(&c, "commit", json!({"message": "x"})).await;
        assert_eq!(r.is_error, Some(true), "{}", text(&r));
        check_words("mcp commit", &text(&r));
        c.cancel().await.expect("close the client");
    });
}
