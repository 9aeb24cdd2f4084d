//! What a person sees (issue 47): every printed next step runs as printed
//! where it was printed, what a request asked for is kept when the queue
//! grants it, and the words a newcomer meets say what is true.

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{Brain, Run};

/// A `--note` given with `--wait` is the granted claim's note when a close
/// hands the claim over (the queue itself keeps no note).
#[test]
fn a_note_given_with_wait_is_kept_when_the_queue_grants_the_claim() {
    let b = Brain::new();
    crate::common::hold_plan(&b);
    let mut waiter = b
        .command(&[
            "open",
            "projets/plan.md",
            "--session",
            "sess-w",
            "--agent",
            "w",
            "--note",
            "rewriting the risks",
            "--wait",
            "60s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bsi");
    // The waiter has its place once the queue holds it.
    let start = Instant::now();
    while !b.registry().contains("| sess-w |") {
        assert!(start.elapsed() < Duration::from_secs(60), "never queued");
        std::thread::sleep(Duration::from_millis(100));
    }
    b.bsi(&["close", "sess-hold", "--agent", "h"])
        .ok()
        .stdout_has("Handed over — sess-w");
    let status = waiter.wait().expect("wait bsi");
    let mut out = String::new();
    waiter
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("read");
    assert_eq!(status.code(), Some(0), "{out}");
    assert!(out.contains("Claim opened — projets/plan.md"), "{out}");
    let st = b.bsi(&["status", "--json"]).json();
    let active = st["active"].as_array().expect("active");
    assert_eq!(active.len(), 1, "{st}");
    assert_eq!(active[0]["session"], "sess-w");
    assert_eq!(active[0]["note"], "rewriting the risks", "{st}");
    assert_eq!(b.last_subject(), "bsi: note sess-w projets/plan.md");
    assert_eq!(b.git(&["status", "--porcelain"]), "");
}

/// Runs `line` exactly as printed through `sh -c` in the brain's `sub`
/// directory, with the binary under test first on PATH and `env` added.
fn sh_in(b: &Brain, sub: &str, line: &str, env: &[(&str, &str)]) -> std::process::Command {
    let mut cmd = std::process::Command::new("sh");
    crate::common::clean_env(&mut cmd, b.path());
    let dir = crate::common::bin()
        .parent()
        .expect("bin dir")
        .to_path_buf();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![dir];
    dirs.extend(std::env::split_paths(&path));
    cmd.env("PATH", std::env::join_paths(dirs).expect("PATH"))
        .env("BSI_NOW", &b.now)
        .current_dir(b.path().join(sub))
        .arg("-c")
        .arg(line);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// [`sh_in`], run to its end.
fn run_in(b: &Brain, sub: &str, line: &str, env: &[(&str, &str)]) -> Run {
    Run::from_output(sh_in(b, sub, line, env).output().expect("run sh"))
}

/// Every `bsi …` command printed between backticks in `text`, in order.
fn printed(text: &str) -> Vec<String> {
    crate::ownership::commands(text)
}

/// The scopes `session` holds, from the brain's root.
fn held_by(b: &Brain, session: &str) -> Vec<String> {
    let st = b.bsi(&["status", "--json"]).json();
    let mut out: Vec<String> = st["active"]
        .as_array()
        .expect("active")
        .iter()
        .filter(|c| c["session"] == session)
        .map(|c| c["scope"].as_str().expect("scope").to_string())
        .collect();
    out.sort();
    out
}

/// Every command the refusals, hints and notes of `bsi open` print in a
/// subdirectory (`projets/`) is run from there exactly as printed, and does
/// what it said: its scopes are written as typed from there, so none of
/// them claims a path under `projets/` that was meant from the root.
#[test]
fn every_printed_command_runs_as_printed_from_a_subdirectory() {
    let b = Brain::new();
    // A guarded clone: the commands under test are the scopes' alone.
    b.bsi(&["hook", "install"]).ok();
    b.write(
        "projets/ideas.md",
        "# Ideas\n\n## Open questions\n\nwhich?\n",
    );
    b.write("projets/notes.md", "# Notes\n");
    b.bsi(&[
        "open",
        "agents/bob.md",
        "--session",
        "sess-hold",
        "--agent",
        "h",
    ])
    .ok();
    let mut ran = 0;

    // A refusal: the free scope nearby, written from `projets/`.
    let r = b.bsi_in(
        "projets",
        &["open", "../agents/", "--session", "me-a", "--agent", "m"],
    );
    r.code(3);
    let cmds = printed(&r.stderr);
    assert_eq!(
        cmds.first().map(String::as_str),
        Some("bsi open ../agents/alice.md --session me-a --agent m"),
        "{}",
        r.stderr
    );
    run_in(&b, "projets", &cmds[0], &[]).ok();
    ran += 1;
    assert_eq!(held_by(&b, "me-a"), ["agents/alice.md"]);

    // A section of a mistyped file: the file it may have meant.
    let (reg, n) = (b.registry(), b.commits());
    let r = b.bsi_in("projets", &["open", "plann.md#Risks", "--session", "me-b"]);
    r.code(2)
        .stderr_has("projets/plann.md is not a file of the brain")
        .stderr_has("did you mean plan.md? claim its section: `bsi open 'plan.md#Risks'`");
    assert!(!r.stderr.contains("claim the whole file"), "{}", r.stderr);
    assert_eq!((b.registry(), b.commits()), (reg, n));
    for c in printed(&r.stderr) {
        run_in(&b, "projets", &c, &[("BSI_SESSION", "me-b")]).ok();
        ran += 1;
    }
    assert_eq!(held_by(&b, "me-b"), ["projets/plan.md#Risks"]);

    // An unquoted heading with spaces: refused before anything is
    // written, with the quoted form.
    let (reg, n) = (b.registry(), b.commits());
    let r = b.bsi_in(
        "projets",
        &["open", "ideas.md#Open", "questions", "--session", "me-c"],
    );
    r.code(2)
        .stderr_has("projets/ideas.md has a heading `Open questions`")
        .stderr_has("`bsi open 'ideas.md#Open questions'`");
    assert_eq!((b.registry(), b.commits()), (reg, n));
    for c in printed(&r.stderr) {
        run_in(&b, "projets", &c, &[("BSI_SESSION", "me-c")]).ok();
        ran += 1;
    }
    assert_eq!(held_by(&b, "me-c"), ["projets/ideas.md#Open questions"]);

    // A heading typo's note: close the typo, claim the heading meant.
    let r = b.bsi_in("projets", &["open", "plan.md#Goalz", "--session", "me-d"]);
    r.ok().stderr_has("Did you mean `Goals`?");
    let cmds = printed(&r.stderr);
    assert_eq!(
        cmds,
        [
            "bsi close me-d --scope plan.md#Goalz",
            "bsi open plan.md#Goals --session me-d"
        ]
        .map(|c| c
            .replace("plan.md#Goalz", "'plan.md#Goalz'")
            .replace("plan.md#Goals ", "'plan.md#Goals' ")),
        "{}",
        r.stderr
    );
    for c in &cmds {
        run_in(&b, "projets", c, &[]).ok();
        ran += 1;
    }
    assert_eq!(held_by(&b, "me-d"), ["projets/plan.md#Goals"]);

    // A path that is not there: the path it may have meant.
    let r = b.bsi_in("projets", &["open", "../READM.md", "--session", "me-e"]);
    r.ok().stderr_has("Did you mean `README.md`?");
    for c in printed(&r.stderr) {
        run_in(&b, "projets", &c, &[]).ok();
        ran += 1;
    }
    assert_eq!(held_by(&b, "me-e"), ["README.md"]);

    // An overdue claim's renew: close it and claim it again.
    b.bsi_in("projets", &["open", "notes.md", "--session", "me-f"])
        .ok();
    let later = [("BSI_NOW", "2026-03-14T12:00:00Z")];
    let r = run_in(&b, "projets", "bsi renew me-f", &later);
    r.code(1)
        .stderr_has("then claim again: `bsi open notes.md`");
    let cmds = printed(&r.stderr);
    assert_eq!(
        cmds,
        ["bsi close me-f", "bsi open notes.md"],
        "{}",
        r.stderr
    );
    run_in(&b, "projets", &cmds[0], &later).ok();
    run_in(
        &b,
        "projets",
        &cmds[1],
        &[
            ("BSI_NOW", "2026-03-14T12:00:00Z"),
            ("BSI_SESSION", "me-f2"),
        ],
    )
    .ok();
    ran += 2;
    assert_eq!(held_by(&b, "me-f2"), ["projets/notes.md"]);

    // A refusal's wait, taken as printed: granted once the holder closes.
    let r = b.bsi_in(
        "projets",
        &["open", "../agents/bob.md", "--session", "me-g"],
    );
    r.code(3);
    let wait = printed(&r.stderr)
        .into_iter()
        .find(|c| c.contains("--wait"))
        .expect("a wait printed");
    assert_eq!(wait, "bsi open ../agents/bob.md --session me-g --wait 10m");
    let mut waiter = sh_in(&b, "projets", &wait, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run sh");
    let start = Instant::now();
    while !b.registry().contains("| me-g |") {
        assert!(start.elapsed() < Duration::from_secs(60), "never queued");
        std::thread::sleep(Duration::from_millis(100));
    }
    b.bsi(&["close", "sess-hold", "--agent", "h"]).ok();
    assert_eq!(waiter.wait().expect("wait").code(), Some(0));
    ran += 1;
    assert_eq!(held_by(&b, "me-g"), ["agents/bob.md"]);

    assert_eq!(ran, 10);
    // Nothing under `projets/` was claimed by a path meant from the root.
    let all = b.bsi(&["status", "--json"]).json().to_string();
    assert!(!all.contains("projets/agents"), "{all}");
    assert!(!all.contains("projets/README"), "{all}");
}

/// The block an agent's instructions get (docs/agents.md) points to no
/// file of bsi's docs: pasted into a brain, a link to one leads nowhere.
#[test]
fn the_agent_block_points_to_no_file_of_bsis_docs() {
    let doc = include_str!("../../docs/agents.md");
    let start = doc.find("````markdown\n").expect("the block to paste");
    let end = start + 4 + doc[start + 4..].find("````").expect("the block's end");
    let block = &doc[start..end];
    assert!(!block.contains("]("), "a link in the block:\n{block}");
    assert!(!block.contains("json-schema.json"), "{block}");
    assert!(!block.contains("docs/"), "{block}");
}

/// `init` in a clone without bsi's commit guard names the one command
/// that adds it, which runs as printed; a clone guarded first is not told.
#[test]
fn init_names_the_hook_install_an_unguarded_clone_needs() {
    let b = Brain::bare_repo();
    b.write("notes/a.md", "# A\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-q", "-m", "base"]);
    let r = b.bsi(&["init"]);
    r.ok().stdout_has("Next: `bsi hook install` so this clone's commits are checked against the claims; then `bsi open SCOPE` before editing");
    let cmd = printed(&r.stdout).into_iter().next().expect("a command");
    assert_eq!(cmd, "bsi hook install");
    run_in(&b, ".", &cmd, &[]).ok();
    let hook = std::fs::read_to_string(b.path().join(".git/hooks/pre-commit")).expect("hook");
    assert!(hook.contains("bsi"), "{hook}");

    let guarded = Brain::bare_repo();
    guarded.write("notes/a.md", "# A\n");
    guarded.git(&["add", "-A"]);
    guarded.git(&["commit", "-q", "-m", "base"]);
    guarded.bsi(&["hook", "install"]).ok();
    let r = guarded.bsi(&["init"]);
    r.ok();
    assert!(!r.stdout.contains("hook install"), "{}", r.stdout);
}

/// The docs say what the commit hooks do with the network, as the binary
/// does it (`doors::a_claim_published_since_the_last_fetch_refuses_the_commit`
/// runs it): they fetch the registry branch before they judge, bounded,
/// so no page says the pre-commit hook never touches the network.
#[test]
fn the_docs_say_the_commit_hooks_fetch_the_registry_before_they_judge() {
    let pages = [
        (
            "docs/multi-machine.md",
            include_str!("../../docs/multi-machine.md"),
        ),
        (
            "docs/hooks-and-verify.md",
            include_str!("../../docs/hooks-and-verify.md"),
        ),
        (
            "docs/agent-tools.md",
            include_str!("../../docs/agent-tools.md"),
        ),
        ("README.md", include_str!("../../README.md")),
    ];
    for (name, text) in pages {
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for wrong in [
            "pre-commit hook never touches the network",
            "the hook never touches the network",
            "the same claims as the pre-commit hook, never the network",
        ] {
            assert!(!flat.contains(wrong), "{name}: `{wrong}`");
        }
    }
    let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat(pages[0].1).contains("first fetch the registry branch alone, once per git command"),
        "docs/multi-machine.md"
    );
    assert!(
        flat(pages[1].1)
            .contains("after fetching the registry branch alone, bounded by `hook_fetch_timeout`"),
        "docs/hooks-and-verify.md"
    );
}

/// Runs `bsi ARGS` in `b` on a pseudo-terminal `cols` wide (`script` from
/// util-linux), no `COLUMNS` exported: what a person sees. `None` when
/// `script` is not installed (CI installs it).
fn on_screen(b: &Brain, args: &[&str], cols: u16, env: &[(&str, &str)]) -> Option<String> {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: `script` (util-linux) is not installed");
        return None;
    }
    let words: Vec<String> = args
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    let line = format!(
        "stty cols {cols} rows 50 && exec {} {}",
        crate::common::bin().display(),
        words.join(" ")
    );
    let mut script = std::process::Command::new("script");
    crate::common::clean_env(&mut script, b.path());
    let run = script
        .args(["-qec", &line, "/dev/null"])
        .current_dir(b.path())
        .env("BSI_NOW", &b.now)
        .env("TERM", "dumb")
        .env("SHELL", "/bin/sh")
        .envs(env.iter().copied())
        .output()
        .expect("run script");
    Some(String::from_utf8_lossy(&run.stdout).replace("\r\n", "\n"))
}

/// Refusals, errors, hints, notes and `Unchanged —` lines fit a screen of
/// 60 and of 100 columns, broken at spaces with every command in
/// backticks whole; in a pipe nothing is broken or cut.
#[test]
fn refusals_errors_hints_and_notes_fit_the_screen_and_a_pipe_cuts_nothing() {
    let b = Brain::new();
    b.bsi(&[
        "open",
        "agents/bob.md",
        "--session",
        "sess-20260314-0930-held",
        "--agent",
        "an-agent-with-a-long-name",
    ])
    .ok();
    let cases: [&[&str]; 5] = [
        // A refusal: its conflicts line and its Next.
        &[
            "open",
            "agents/bob.md",
            "--session",
            "sess-20260314-0931-mine",
        ],
        // An error and its hint.
        &["open", "projets/a-missing-file-with-a-long-name.md#Risks"],
        // A note with its did-you-mean.
        &[
            "open",
            "projets/plan.md#Riskss",
            "--session",
            "sess-20260314-0932-note",
        ],
        // Unchanged right after the open.
        &[
            "renew",
            "sess-20260314-0930-held",
            "--agent",
            "an-agent-with-a-long-name",
        ],
        // whoami without a session.
        &["whoami"],
    ];
    for cols in [60u16, 100] {
        for args in cases {
            let Some(text) = on_screen(&b, args, cols, &[]) else {
                return;
            };
            assert!(text.trim().len() > 20, "{args:?}: {text}");
            for line in text.lines() {
                // A command longer than the screen is never broken (it
                // would not paste): alone on its line, it overflows.
                let alone = line.trim_start().trim_start_matches('(').starts_with('`')
                    && line.trim_end_matches([';', '.', ')', ',']).ends_with('`')
                    && line.matches('`').count() == 2;
                assert!(
                    alone || line.chars().count() <= usize::from(cols),
                    "{args:?} at {cols}: a line of {} columns:\n{line}\n\n{text}",
                    line.chars().count()
                );
            }
            // Every backticked span opens and closes on one line.
            for line in text.lines() {
                assert_eq!(
                    line.matches('`').count() % 2,
                    0,
                    "{args:?} at {cols}:\n{text}"
                );
            }
        }
    }
    // In a pipe, the hint is one line, whole.
    let r = b.bsi(&["open", "projets/a-missing-file-with-a-long-name.md#Risks"]);
    r.code(2);
    let hint = r
        .stderr
        .lines()
        .find(|l| l.starts_with("hint: "))
        .expect("a hint");
    assert!(hint.chars().count() > 100, "{hint}");
    assert!(
        hint.ends_with(": `bsi open projets/a-missing-file-with-a-long-name.md`"),
        "{hint}"
    );
}

/// `eval "$(bsi open … --shell)"` says its sentences on stderr fitted to
/// `COLUMNS`, and the eval still takes the session.
#[test]
fn shell_sentences_fit_columns_and_the_eval_still_works() {
    let b = Brain::new();
    let r = run_in(
        &b,
        ".",
        "eval \"$(bsi open projets/plan.md#Risks --agent an-agent-with-a-long-name --shell)\" && echo \"session=$BSI_SESSION\"",
        &[("COLUMNS", "60")],
    );
    r.ok().stdout_has("session=sess-");
    assert!(r.stderr.contains("Next: "), "{}", r.stderr);
    for line in r.stderr.lines() {
        assert!(line.chars().count() <= 60, "{line}\n\n{}", r.stderr);
    }
}

/// `status` in a clone whose commits nothing checks names the one command
/// that guards it; run as printed, the line is gone.
#[test]
fn status_names_the_hook_install_an_unguarded_clone_needs() {
    let b = Brain::new();
    let r = b.bsi(&["status"]);
    r.ok();
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("commit guard"))
        .expect("the unguarded line")
        .to_string();
    assert_eq!(
        line,
        "Next: `bsi hook install` adds the commit guard: until then this clone's commits are not checked against the claims."
    );
    let cmds = printed(&line);
    assert_eq!(cmds, ["bsi hook install"]);
    run_in(&b, "projets", &cmds[0], &[]).ok();
    let r = b.bsi(&["status"]);
    r.ok();
    assert!(!r.stdout.contains("commit guard"), "{}", r.stdout);
    // -q keeps the view alone.
    let b = Brain::new();
    let q = b.bsi(&["status", "-q"]);
    assert!(!q.stdout.contains("commit guard"), "{}", q.stdout);
}

/// `open` in a clone whose commits nothing checks says so, with the one
/// command that guards it; run as printed from a subdirectory, the next
/// open says nothing of it. `--json` and `-q` leave the note out.
#[test]
fn open_tells_an_unguarded_clone_the_one_command_that_guards_it() {
    let b = Brain::new();
    let r = b.bsi(&["open", "agents/bob.md", "--session", "s1"]);
    r.ok();
    let line = r
        .stderr
        .lines()
        .find(|l| l.contains("commit guard"))
        .unwrap_or_else(|| panic!("no unguarded note: {r:?}"))
        .to_string();
    assert_eq!(
        line,
        "note: this clone's commits are not checked against the claims until `bsi hook install` adds the commit guard."
    );
    for args in [
        &["open", "agents/alice.md", "--session", "s2", "--json"][..],
        &["open", "README.md", "--session", "s3", "-q"],
    ] {
        let r = b.bsi(args);
        r.ok();
        assert!(!r.stderr.contains("commit guard"), "{args:?}: {r:?}");
        assert!(!r.stdout.contains("commit guard"), "{args:?}: {r:?}");
    }
    let cmds = printed(&line);
    assert_eq!(cmds, ["bsi hook install"]);
    run_in(&b, "projets", &cmds[0], &[]).ok();
    let r = b.bsi(&["open", "projets/plan.md", "--session", "s4"]);
    r.ok();
    assert!(!r.stderr.contains("commit guard"), "{r:?}");
}
