//! What people and agents see: the status table and tree (snapshots, colours
//! off), the current-session workflow (`open --shell`, `whoami`), `--quiet`
//! and `-v`, completions and the man page.

use crate::common::{Brain, snapshot};
use crate::transcript::Transcript;

/// A brain at 13:40 with an active claim, an overdue one the watchdog has not
/// seen, two stale ones, and a claim on a file that does not exist yet.
fn busy_brain() -> (Brain, Vec<(&'static str, &'static str)>) {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1", "--agent", "alice"])
        .ok();
    b.bsi(&[
        "open",
        "projets/plan.md#Goals",
        "--session",
        "s2",
        "--agent",
        "bob",
        "--ttl",
        "4h",
        "--note",
        "goals for Q2",
    ])
    .ok();
    b.bsi(&[
        "open",
        "README.md",
        "--session",
        "s2",
        "--agent",
        "bob",
        "--ttl",
        "1h",
    ])
    .ok();
    let noon = [("BSI_NOW", "2026-03-14T12:00:00Z")];
    b.bsi_env(&["watchdog"], &noon).code(4);
    b.bsi_env(
        &[
            "open",
            "projets/plan.md#Risks",
            "notes/new.md",
            "--session",
            "s3",
            "--agent",
            "carol",
        ],
        &noon,
    )
    .ok();
    (b, vec![("BSI_NOW", "2026-03-14T13:40:00Z")])
}

fn no_escapes(s: &str) {
    assert!(!s.contains('\x1b'), "colour codes in piped output:\n{s}");
}

#[test]
fn status_table_is_grouped_aligned_and_marks_stale_rows() {
    let (b, later) = busy_brain();
    let mut t = Transcript::new(&b);
    let r = t.bsi_env(&["status"], &later);
    r.ok();
    no_escapes(&r.stdout);
    t.bsi_env(&["status", "-v"], &later).ok();
    t.check("ux/status_table_is_grouped_aligned_and_marks_stale_rows.txt");

    // Never colours when NO_COLOR is set or the output is piped.
    let mut env = later.clone();
    env.push(("NO_COLOR", "1"));
    env.push(("TERM", "xterm-256color"));
    let nc = b.bsi_env(&["status"], &env);
    assert_eq!(nc.stdout, r.stdout);
}

#[test]
fn status_of_an_empty_registry_says_what_to_do() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    t.bsi(&["status"]).ok();
    t.check("ux/status_of_an_empty_registry_says_what_to_do.txt");
}

#[test]
fn status_tree_draws_each_claim_where_it_sits() {
    let (b, later) = busy_brain();
    let mut t = Transcript::new(&b);
    let r = t.bsi_env(&["status", "--tree"], &later);
    r.ok();
    no_escapes(&r.stdout);
    t.check("ux/status_tree_draws_each_claim_where_it_sits.txt");
    // Read only.
    assert_eq!(b.status(), "");

    // A global claim sits at the root.
    let g = Brain::new();
    g.bsi(&["open", "global", "--session", "g1", "--agent", "ops"])
        .ok();
    let mut t = Transcript::new(&g);
    t.bsi(&["status", "--tree"]).ok();
    t.bsi(&["status", "--tree", "--json"]).code(2);
    t.check("ux/status_tree_draws_each_claim_where_it_sits-global.txt");
}

#[test]
fn open_shell_prints_only_the_export_lines() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    let r = t.bsi(&["open", "agents/", "--shell", "--agent", "claude"]);
    r.ok();
    let (line, agent) = r.stdout.split_once('\n').expect("two lines");
    let id = line
        .strip_prefix("export BSI_SESSION=sess-20260314-0930-")
        .expect("export line");
    assert_eq!(id.len(), 4, "{line}");
    // The agent given is kept too, so the shell's renew and close act as it.
    assert_eq!(agent, "export BSI_AGENT=claude\n");
    let quoted = t.bsi(&[
        "open",
        "notes/",
        "--shell",
        "--agent",
        "o'neil x",
        "--session",
        "q1",
    ]);
    assert_eq!(
        quoted.stdout,
        "export BSI_SESSION=q1\nexport BSI_AGENT='o'\\''neil x'\n"
    );

    let named = t.bsi(&["open", "projets/", "--session", "s2", "--shell"]);
    named.ok();
    assert_eq!(named.stdout, "export BSI_SESSION=s2\n");

    t.note("A refusal sets nothing and makes `eval` fail with bsi's exit code.");
    let refused = t.bsi(&["open", "agents/alice.md", "--session", "s3", "--shell"]);
    refused.code(3);
    assert_eq!(refused.stdout, "(exit 3)\n");
    // So does any failure: a bad scope, a bad TTL, a bad command line.
    for args in [
        &["open", "nowhere/../../x.md", "--shell"][..],
        &["open", "x.md", "--ttl", "99h", "--shell"],
        &["open", "--shell"],
    ] {
        let bad = t.bsi(args);
        bad.code(2);
        assert_eq!(bad.stdout, "(exit 2)\n", "{args:?}");
    }
    t.bsi(&["open", "x.md", "--shell", "--json"]).code(2);
    t.check("ux/open_shell_prints_only_the_export_lines.txt");
}

#[test]
fn whoami_shows_the_current_session_and_its_claims() {
    let b = Brain::new();
    b.bsi(&[
        "open",
        "agents/",
        "projets/plan.md#Risks",
        "--session",
        "s1",
    ])
    .ok();
    b.bsi(&["open", "README.md", "--session", "s2"]).ok();
    // The agent shown is the one holding the session's claims, not the
    // default of this shell.
    let env = [("BSI_SESSION", "s1"), ("BSI_AGENT", "claude")];
    let mut t = Transcript::new(&b);
    t.bsi_env(&["whoami"], &env).ok();
    let j = b.bsi_env(&["whoami", "--json"], &env).json();
    assert_eq!(j["session"], "s1");
    assert_eq!(j["agent"], "tester@box");
    assert_eq!(j["active"].as_array().map(Vec::len), Some(2));
    assert_eq!(j["stale"].as_array().map(Vec::len), Some(0));

    t.bsi_env(&["whoami"], &[("BSI_SESSION", "s9")]).ok();
    t.bsi(&["whoami"]).code(1);
    t.check("ux/whoami_shows_the_current_session_and_its_claims.txt");
}

#[test]
fn quiet_silences_stdout_and_verbose_names_the_commit() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    let q = t.bsi(&["-q", "open", "agents/", "--session", "s1"]);
    q.ok();
    assert_eq!(q.stdout, "");
    assert_eq!(b.active().len(), 1);
    // What was asked for still prints.
    let j = b.bsi(&["status", "--json", "--quiet"]).json();
    assert_eq!(j["active"][0]["session"], "s1");
    t.note("Errors still go to stderr.");
    t.bsi(&["-q", "close", "nobody"]).code(1);
    t.bsi(&["-q", "-v", "status"]).code(2);

    t.bsi(&["close", "s1", "-v"]).ok();
    // The id named is the registry branch's tip; the transcript writes it
    // as that, so a change of the registry's text alone does not touch it.
    let tip = b.git(&["rev-parse", "brain-index"]);
    let text = t.text();
    assert!(
        text.contains(&format!("Commit: {}\n", tip.trim())),
        "{text}"
    );
    snapshot(
        "ux/quiet_silences_stdout_and_verbose_names_the_commit.txt",
        &text.replace(tip.trim(), "<brain-index>"),
    );
}

#[test]
fn completions_for_every_shell() {
    let b = Brain::bare_repo();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let r = b.bsi(&["completions", shell]);
        r.ok();
        assert!(r.stdout.contains("bsi"), "{shell}");
        assert!(r.stdout.contains("whoami"), "{shell}: no subcommand");
        assert!(r.stdout.contains("ttl"), "{shell}: no flag");
    }
    let mut t = Transcript::new(&b);
    t.bsi(&["completions", "tcsh"]).code(2);
    t.check("ux/completions_for_every_shell.txt");
    // Read in part (`| head -1`): the closed pipe is a quiet success.
    for args in [&["completions", "zsh"][..], &["man"][..]] {
        let mut cmd = b.command(args);
        let mut child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run bsi");
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("wait");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(
            out.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn man_page_is_roff_with_every_command() {
    let b = Brain::bare_repo();
    let r = b.bsi(&["man"]);
    r.ok().stdout_has(".TH bsi 1").stdout_has(".SH NAME");
    for c in ["open", "close", "watchdog", "release", "status", "whoami"] {
        assert!(r.stdout.contains(c), "man page lacks {c}");
    }
}

#[test]
fn a_full_disk_on_stdout_is_an_error_and_a_closed_pipe_a_quiet_end() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    // stdout on a device that is always full: the output is lost, so the
    // command says so and fails.
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        let o = b
            .command(&["status"])
            .stdout(full)
            .output()
            .expect("run bsi");
        assert_eq!(o.status.code(), Some(1));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("cannot write the output"),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // A reader that went away (`bsi log | head -0`): no error, exit 0.
    let mut child = b
        .command(&["log"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("wait");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
}

/// `-q` means the same in every command: only what was asked for on
/// stdout (a table, a log, a JSON document, the shell lines), errors still
/// on stderr.
#[test]
fn quiet_prints_only_what_was_asked_for_in_every_command() {
    let b = Brain::new();
    let mut t = Transcript::new(&b);
    let opened = t.bsi(&["-q", "open", "agents/", "--session", "s1", "--agent", "a"]);
    opened.ok();
    assert_eq!(opened.stdout, "", "a write says nothing with -q");
    let shell = t.bsi(&["-q", "open", "notes/", "--shell", "--agent", "a"]);
    shell.ok();
    assert!(
        shell.stdout.starts_with("export BSI_SESSION="),
        "{}",
        shell.stdout
    );
    assert_eq!(
        shell.stderr, "",
        "the sentences of --shell go nowhere with -q"
    );
    let status = t.bsi(&["-q", "status"]);
    status.ok();
    assert!(
        status.stdout.contains("agents/"),
        "the table: {}",
        status.stdout
    );
    assert!(!status.stdout.contains("Next:"), "{}", status.stdout);
    let log = t.bsi(&["-q", "log"]);
    log.ok();
    assert!(
        log.stdout.contains("open"),
        "the log is what was asked for: {}",
        log.stdout
    );
    let json = t.bsi(&["-q", "status", "--json"]);
    json.ok();
    assert!(json.stdout.trim_start().starts_with('{'), "{}", json.stdout);
    let install = t.bsi(&["-q", "hook", "install"]);
    install.ok();
    assert_eq!(install.stdout, "", "hook install says nothing with -q");
    let refused = t.bsi(&["-q", "open", "agents/alice.md", "--session", "s2"]);
    refused.code(3);
    assert_eq!(refused.stdout, "");
    assert!(
        refused.stderr.contains("conflicts: s1 holds agents/"),
        "{}",
        refused.stderr
    );
    t.check("ux/quiet_prints_only_what_was_asked_for_in_every_command.txt");
}

/// `--session ID` is taken by every command, as `docs/agents.md` tells an
/// agent to pass it to every later `bsi` command: the same as
/// `BSI_SESSION=ID` for that one command.
#[test]
fn every_command_takes_session_as_the_agent_instructions_say() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1", "--agent", "a"])
        .ok();
    let who = b.bsi(&["whoami", "--session", "s1"]);
    who.ok();
    assert!(who.stdout.contains("s1"), "{}", who.stdout);
    assert!(who.stdout.contains("agents/"), "{}", who.stdout);
    b.bsi(&["renew", "--session", "s1", "--ttl", "3h", "--agent", "a"])
        .ok();
    b.bsi(&["verify", "--session", "s1"]).ok();
    b.bsi(&["status", "--session", "s1"]).ok();
    b.bsi(&["log", "--session", "s1"]).ok();
    b.bsi(&["watchdog", "--session", "s1"]).ok();
    b.bsi(&["sync", "--session", "s1"]).code(1);
    // Before the subcommand too, as any global option.
    b.bsi(&["--session", "s1", "whoami"]).ok();
    b.bsi(&["close", "--session", "s1", "--agent", "a"]).ok();
    assert!(
        b.active().iter().all(|r| !r.contains("| s1 |")),
        "{:?}",
        b.active()
    );
    // A positional session still names what is closed; `--session` names
    // the session acting, so another session's claims need --force.
    b.bsi(&["open", "notes/", "--session", "s2", "--agent", "a"])
        .ok();
    b.bsi(&["close", "s2", "--session", "nobody", "--agent", "a"])
        .code(1)
        .stderr_has("acts for session nobody");
    b.bsi(&[
        "close",
        "s2",
        "--session",
        "nobody",
        "--agent",
        "a",
        "--force",
    ])
    .ok();
    assert!(b.active().iter().all(|r| !r.contains("| s2 |")));
    // An id the rule refuses is refused by every command alike.
    b.bsi(&["status", "--session", "bad id"]).code(2);
}

/// A typo in a heading is offered the nearest heading, not the file's first.
#[test]
fn a_heading_typo_suggests_the_nearest_heading() {
    let b = Brain::new();
    // Granted as a new section (a heading may be about to be written),
    // with the heading it may have meant and how to move the claim there.
    let r = b.bsi(&["open", "projets/plan.md#Riskss", "--session", "s1"]);
    r.ok();
    assert!(
        r.stderr.contains(
            "Did you mean `Risks`? Then run `bsi close s1 --scope 'projets/plan.md#Riskss'`, then `bsi open 'projets/plan.md#Risks' --session s1`."
        ),
        "{}",
        r.stderr
    );
}

/// A scope that names nothing is granted (claiming a file before making it
/// is ordinary work), and said: a new file in an existing folder is a note,
/// a path whose folder is missing too a warning naming the existing path
/// nearest by edit distance and the two commands that move the claim.
#[test]
fn a_scope_naming_nothing_is_granted_and_said_with_the_nearest_path() {
    let b = Brain::new();
    // A guarded clone: what stderr says is the scopes' alone.
    b.bsi(&["hook", "install"]).ok();
    let typo = b.bsi(&["open", "agent/alice.md", "--session", "s1", "--agent", "a"]);
    typo.ok()
        .stdout_has("Claim opened — agent/alice.md")
        .stderr_has("warning: nothing exists at `agent/alice.md` (no folder `agent/`)")
        .stderr_has("Did you mean `agents/alice.md`? Then run `bsi close s1 --scope agent/alice.md`, then `bsi open agents/alice.md --session s1`.");
    assert!(
        b.active().iter().any(|r| r.contains("agent/alice.md")),
        "{:?}",
        b.active()
    );
    // The two commands it names move the claim.
    b.bsi(&["close", "s1", "--scope", "agent/alice.md", "--agent", "a"])
        .ok();
    b.bsi(&["open", "agents/alice.md", "--session", "s1", "--agent", "a"])
        .ok();
    assert!(
        b.active().iter().any(|r| r.contains("agents/alice.md")),
        "{:?}",
        b.active()
    );
    assert!(
        !b.active().iter().any(|r| r.contains("agent/alice.md")),
        "{:?}",
        b.active()
    );

    // A new file in a folder that exists: a note, no typo to suggest.
    let new = b.bsi(&[
        "open",
        "projets/roadmap-2027.md",
        "--session",
        "s2",
        "--agent",
        "a",
    ]);
    new.ok().stderr_has(
        "note: `projets/roadmap-2027.md` does not exist yet: claimed as a new file in `projets/`.",
    );
    assert!(!new.stderr.contains("Did you mean"), "{}", new.stderr);
    // A new folder whose name is nowhere near another: the warning, and how to undo.
    let far = b.bsi(&["open", "journal/2026/", "--session", "s3", "--agent", "a"]);
    far.ok()
        .stderr_has("warning: nothing exists at `journal/2026/` (no folder `journal/`)")
        .stderr_has("If it is a typo, run `bsi close s3 --scope journal/2026/`");
    // What exists is granted without a word on stderr.
    let there = b.bsi(&["open", "README.md", "--session", "s4", "--agent", "a"]);
    there.ok();
    assert_eq!(there.stderr, "", "{}", there.stderr);
    // The user's files are untouched: nothing was created.
    assert!(!b.path().join("agent").exists());
    assert!(!b.path().join("projets/roadmap-2027.md").exists());
}

/// The smaller mismatches a newcomer met in the first hour, each with the
/// words that now tell the truth and name the next command.
#[test]
fn the_first_hour_messages_name_the_next_command() {
    // Guards installed before `bsi init` say there is nothing to guard yet.
    let bare = Brain::bare_repo();
    bare.write("a.md", "# A\n");
    bare.git(&["add", "-A"]);
    bare.git(&["commit", "-q", "-m", "a"]);
    for args in [
        &["hook", "install"][..],
        &["agent", "install", "claude"][..],
    ] {
        bare.bsi(args)
            .ok()
            .stdout_has("this brain has no registry")
            .stdout_has("Next: make it once for the brain: `bsi init`.");
    }
    bare.bsi(&["init"]).ok();
    let after = bare.bsi(&["agent", "install", "codex"]);
    assert!(
        !after.ok().stdout.contains("no registry"),
        "{}",
        after.stdout
    );

    // Renewing one's own stale claim: close it, then open it again.
    let b = Brain::new();
    b.bsi(&["open", "agents/alice.md", "--session", "s1", "--agent", "a"])
        .ok();
    b.bsi_env(&["watchdog"], &[("BSI_NOW", "2026-03-14T12:00:00Z")])
        .code(4);
    let renew = b.bsi_env(
        &["renew", "s1", "--agent", "a"],
        &[("BSI_NOW", "2026-03-14T12:01:00Z")],
    );
    renew.code(1).stderr_has(
        "hint: as their holder, close them: `bsi close s1`; then claim them again: `bsi open agents/alice.md --session s1`",
    );
    // Both commands it names work, as written.
    b.bsi_env(
        &["close", "s1", "--agent", "a"],
        &[("BSI_NOW", "2026-03-14T12:01:00Z")],
    )
    .ok();
    // BSI_SESSION left set after close: the next open reuses the id, and says so.
    let again = b.bsi_env(
        &["open", "agents/alice.md", "--agent", "a"],
        &[("BSI_NOW", "2026-03-14T12:01:00Z"), ("BSI_SESSION", "s1")],
    );
    again
        .ok()
        .stdout_has("Session: s1")
        .stderr_has("note: session s1 was closed before; these claims reopen it under the same id")
        .stderr_has("`unset BSI_SESSION`");
    // A session opened for the first time is not told so.
    let fresh = b.bsi(&["open", "README.md", "--session", "s9", "--agent", "a"]);
    assert!(
        !fresh.ok().stderr.contains("closed before"),
        "{}",
        fresh.stderr
    );

    // A remote whose address names nothing: `git remote -v` is named.
    let c = Brain::new();
    c.git(&["remote", "add", "origin", "/nonexistent/brain.git"]);
    c.bsi(&["status"])
        .ok()
        .stdout_has("could not be reached")
        .stdout_has("`git remote -v` shows it");
    let open = c.bsi(&["open", "README.md", "--session", "s2", "--agent", "a"]);
    open.code(7).stderr_has("`git remote -v` shows it");
}

/// `bsi open --wait` says what it waits for on stdout, before its answer;
/// and `status` with nobody holding a claim but a session waiting in the
/// queue says so, instead of calling the brain free.
#[test]
fn status_names_the_waiters_when_nobody_holds_a_claim() {
    use std::io::BufRead;
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1", "--agent", "alice"])
        .ok();
    let mut child = b
        .command(&[
            "open",
            "agents/",
            "--session",
            "s2",
            "--agent",
            "bob",
            "--wait",
            "60s",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run bsi");
    let out = child.stdout.take().expect("stdout");
    let mut said = Vec::new();
    for line in std::io::BufReader::new(out).lines() {
        let line = line.expect("read");
        let placed = line.starts_with("First in the queue");
        said.push(line);
        if placed {
            break;
        }
    }
    assert!(
        said[0].starts_with("Waiting up to 1m for s1 (agents/"),
        "{said:?}"
    );
    // The waiter dies in its place; the holder closes.
    child.kill().expect("kill");
    child.wait().expect("wait");
    b.bsi(&["close", "s1", "--agent", "alice"]).ok();
    let st = b.bsi(&["status"]);
    st.ok()
        .stdout_has(
            "No claims, but 1 session waits in the queue for the scopes below: they come first.",
        )
        .stdout_has("Queue (1 waiting, in order of arrival):")
        .stdout_has("  1. s2 (bob) waits for agents/");
    assert!(
        !st.stdout.contains("the whole brain is free"),
        "{}",
        st.stdout
    );
}

/// A claim on a heading its file does not have yet reserves the new
/// section, with other scopes in the same request; the answer says so,
/// and names the existing heading a typo may have meant. A section of a
/// file that is not there is still refused, nothing written.
#[test]
fn a_heading_not_yet_written_is_claimed_as_a_new_section() {
    let b = Brain::new();
    let r = b.bsi(&[
        "open",
        "projets/plan.md#Q3",
        "agents/alice.md",
        "notes/",
        "--session",
        "s1",
        "--agent",
        "codex",
    ]);
    r.ok()
        .stdout_has("Claim opened — projets/plan.md#Q3")
        .stdout_has("Claim opened — agents/alice.md")
        .stderr_has(
            "note: projets/plan.md has no heading `Q3` yet: this claim reserves the new section.",
        );
    assert!(!r.stderr.contains("Did you mean"), "{}", r.stderr);
    assert!(
        b.active()
            .iter()
            .any(|row| row.contains("projets/plan.md#Q3"))
    );
    // The reserved name is held: another session cannot take it.
    b.bsi(&["open", "projets/plan.md#Q3", "--session", "s2"])
        .code(3);
    // A typo of a heading the file has is granted too, and said.
    b.bsi(&["open", "projets/plan.md#Riskss", "--session", "s3"])
        .ok()
        .stderr_has("Did you mean `Risks`? Then run `bsi close s3 --scope 'projets/plan.md#Riskss'`, then `bsi open 'projets/plan.md#Risks' --session s3`.");
    let (reg, n) = (b.registry(), b.commits());
    b.bsi(&["open", "projets/missing.md#Q3", "--session", "s4"])
        .code(2)
        .stderr_has(
            "projets/missing.md is not a file of the brain, so it has no section `Q3` to claim",
        );
    assert_eq!((b.registry(), b.commits()), (reg, n));
}

#[test]
fn renew_right_after_open_says_the_minute_not_a_contradiction() {
    let b = crate::common::Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    // Thirty seconds later: 1h59m left, and 2h from now ends in the minute
    // the claim already expires.
    let r = b.bsi_env(&["renew", "s1"], &[("BSI_NOW", "2026-03-14T09:30:30Z")]);
    r.ok();
    assert!(
        r.stdout
            .contains("(1h59m left; 2h from now ends in the same minute)"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("already at least"), "{}", r.stdout);
}
