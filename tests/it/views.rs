//! The views people read, snapshotted on one fixture of mixed claims written
//! from two time zones: status at 80 and 120 columns, the tree, the journal,
//! whoami and the watchdog, colours off and forced on, read in two zones.

use crate::common::{self, Brain, snapshot};

/// When the views are read.
const READ_AT: &str = "2026-03-14T13:30:00Z";

/// A brain at 13:30 UTC: a claim stale for days, two overdue claims the
/// watchdog has not seen (one written from Paris), one with 20 minutes
/// left, one with 1h30 left, and long names and notes.
fn fixture() -> Brain {
    let at = |t: &'static str| ("BSI_NOW", t);
    let b = Brain::bare_repo();
    b.write("agents/alice.md", "# Alice\n\nnotes\n");
    b.write("agents/bob.md", "# Bob\n");
    b.write(
        "projets/plan.md",
        "# Plan\n\n## Goals\n\n### Q1\n\n## Risks\n",
    );
    b.write("README.md", "# Brain\n");
    b.write("journal/today.md", "# Today\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-q", "-m", "base"]);
    b.bsi_env(&["init"], &[at("2026-03-10T07:00:00Z")]).ok();
    b.bsi_env(
        &[
            "open",
            "README.md",
            "--session",
            "sess-20260310-0800-old1",
            "--agent",
            "gemini",
            "--ttl",
            "1h",
        ],
        &[at("2026-03-10T08:00:00Z")],
    )
    .ok();
    b.bsi_env(&["watchdog"], &[at("2026-03-10T12:00:00Z")])
        .code(4);
    b.bsi_env(
        &[
            "open",
            "agents/",
            "--session",
            "sess-20260314-1000-ag01",
            "--agent",
            "claude",
            "--note",
            "tidy the agents' notes before the Monday review",
        ],
        &[at("2026-03-14T09:00:00Z"), ("TZ", "Europe/Paris")],
    )
    .ok();
    b.bsi_env(
        &[
            "open",
            "projets/plan.md#Goals",
            "--session",
            "sess-20260314-0900-pl02",
            "--agent",
            "codex",
            "--ttl",
            "4h",
            "--note",
            "goals for Q2",
        ],
        &[at("2026-03-14T09:00:00Z")],
    )
    .ok();
    b.bsi_env(
        &[
            "open",
            "projets/plan.md#Risks",
            "notes/new.md",
            "--session",
            "sess-20260314-1250-rk03",
            "--agent",
            "a-very-long-agent-name@workstation-7",
            "--ttl",
            "1h",
            "--note",
            "risks",
        ],
        &[at("2026-03-14T12:50:00Z")],
    )
    .ok();
    b.bsi_env(
        &[
            "open",
            "journal/",
            "--session",
            "sess-20260314-1300-jr07",
            "--agent",
            "mistral",
        ],
        &[at("2026-03-14T13:00:00Z")],
    )
    .ok();
    b
}

/// The environment of a view read on a screen 80 columns wide.
fn env<'a>(tz: &'a str, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut e = vec![("BSI_NOW", READ_AT), ("TZ", tz), ("COLUMNS", "80")];
    e.extend_from_slice(extra);
    e
}

/// The environment of a view read through a pipe: no `COLUMNS`, no
/// terminal.
fn piped<'a>(tz: &'a str, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut e = vec![("BSI_NOW", READ_AT), ("TZ", tz)];
    e.extend_from_slice(extra);
    e
}

/// Runs `args` with colours forced on, snapshots it as `rel` (a
/// `views/<name>-colour.txt`) and checks it says exactly what `plain_run`
/// said, colours aside.
#[track_caller]
fn colour_twin(b: &Brain, args: &[&str], env: &[(&str, &str)], rel: &str, plain_run: &str) {
    let mut e = env.to_vec();
    e.push(("CLICOLOR_FORCE", "1"));
    let on = b.bsi_env(args, &e);
    assert!(
        on.stdout.contains('\x1b'),
        "no colour in {rel}:\n{}",
        on.stdout
    );
    assert_eq!(
        plain(&on.stdout),
        plain_run,
        "{rel}: colours change the text"
    );
    snapshot(rel, &on.stdout);
}

fn widest(s: &str) -> usize {
    s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

fn plain(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn status_fits_80_and_120_columns_in_the_readers_zone() {
    let b = fixture();
    let utc = b.bsi_env(&["status"], &env("UTC", &[]));
    utc.ok()
        .stdout_has("EXPIRES (UTC)")
        // Written from Paris (+01:00), read in UTC: the same instant.
        .stdout_has("  agents/")
        .stdout_has("11:00")
        .stdout_has("03-10 09:00")
        .stdout_has("STALE overdue 4d")
        .stdout_has("20m left")
        .stdout_has("tidy the");
    assert!(widest(&utc.stdout) <= 80, "{}", utc.stdout);
    assert!(!utc.stdout.contains('\x1b'));
    snapshot("views/status-80-utc.txt", &utc.stdout);

    let ny = b.bsi_env(&["status"], &env("America/New_York", &[("COLUMNS", "120")]));
    ny.ok()
        .stdout_has("EXPIRES (-04:00)")
        .stdout_has("07:00")
        .stdout_has("tidy the agents' notes before the");
    assert!(widest(&ny.stdout) <= 120, "{}", ny.stdout);
    snapshot("views/status-120-new-york.txt", &ny.stdout);
    colour_twin(
        &b,
        &["status"],
        &env("America/New_York", &[("COLUMNS", "120")]),
        "views/status-120-new-york-colour.txt",
        &ny.stdout,
    );

    // Every session id is whole, whatever the width.
    for id in [
        "sess-20260310-0800-old1",
        "sess-20260314-1000-ag01",
        "sess-20260314-1250-rk03",
    ] {
        assert!(utc.stdout.contains(&format!("{id}\n")), "{id}");
    }
}

#[test]
fn status_colours_time_left_by_urgency_only_when_asked() {
    let b = fixture();
    let off = b.bsi_env(&["status"], &env("UTC", &[]));
    let on = b.bsi_env(&["status"], &env("UTC", &[("CLICOLOR_FORCE", "1")]));
    on.ok();
    // Red for stale and overdue, yellow for 30 minutes or less, green else.
    assert!(
        on.stdout.contains("\x1b[31mSTALE overdue 4d\x1b[0m"),
        "{}",
        on.stdout
    );
    assert!(
        on.stdout.contains("\x1b[33m20m left\x1b[0m"),
        "{}",
        on.stdout
    );
    assert!(
        on.stdout.contains("\x1b[32m1h30m left\x1b[0m"),
        "{}",
        on.stdout
    );
    // The same text and alignment as without colours.
    assert_eq!(plain(&on.stdout), off.stdout);
    snapshot("views/status-80-colour.txt", &on.stdout);
    // NO_COLOR wins over the force.
    let nc = b.bsi_env(
        &["status"],
        &env("UTC", &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]),
    );
    assert_eq!(nc.stdout, off.stdout);
}

#[test]
fn status_verbose_and_quiet() {
    let b = fixture();
    let v = b.bsi_env(&["status", "-v"], &env("UTC", &[]));
    v.ok()
        .stdout_has("LEVEL")
        .stdout_has("OPENED (UTC)")
        .stdout_has("tidy the agents' notes before the Monday review");
    snapshot("views/status-verbose.txt", &v.stdout);
    // -q keeps the view, drops what to do next.
    let q = b.bsi_env(&["-q", "status"], &env("UTC", &[]));
    q.ok()
        .stdout_has("sess-20260314-1000-ag01")
        .stdout_has("stale\n");
    assert!(!q.stdout.contains("Next:"), "{}", q.stdout);
}

#[test]
fn the_tree_colours_off_and_on() {
    let b = fixture();
    let off = b.bsi_env(&["status", "--tree"], &env("UTC", &[]));
    off.ok();
    snapshot("views/tree.txt", &off.stdout);
    let on = b.bsi_env(
        &["status", "--tree"],
        &env("UTC", &[("CLICOLOR_FORCE", "1")]),
    );
    on.ok();
    assert!(on.stdout.contains('\x1b'));
    assert_eq!(plain(&on.stdout), off.stdout);
    snapshot("views/tree-colour.txt", &on.stdout);
}

#[test]
fn log_shows_agent_action_scopes_and_time_in_80_columns_and_whole_in_a_pipe() {
    let b = fixture();
    let utc = b.bsi_env(&["log"], &env("UTC", &[]));
    utc.ok()
        .stdout_has("TIME (UTC)")
        .stdout_has("open      claude")
        .stdout_has("sess-20260314-1000-ag01  agents/");
    assert!(!utc.stdout.contains("Test Person"), "{}", utc.stdout);
    assert!(widest(&utc.stdout) <= 80, "{}", utc.stdout);
    snapshot("views/log-utc.txt", &utc.stdout);
    // COLUMNS set but empty, or not a width, is unset: through a pipe,
    // nothing is cut.
    let whole = b.bsi_env(&["log"], &piped("UTC", &[]));
    let whole_status = b.bsi_env(&["status"], &piped("UTC", &[]));
    assert!(!whole.stdout.contains('…'), "{}", whole.stdout);
    for columns in ["", "wide"] {
        let log = b.bsi_env(&["log"], &piped("UTC", &[("COLUMNS", columns)]));
        assert_eq!(log.ok().stdout, whole.stdout, "COLUMNS={columns:?}");
        let status = b.bsi_env(&["status"], &piped("UTC", &[("COLUMNS", columns)]));
        assert_eq!(
            status.ok().stdout,
            whole_status.stdout,
            "COLUMNS={columns:?}"
        );
    }
    let paris = b.bsi_env(&["log"], &env("Europe/Paris", &[]));
    paris
        .ok()
        .stdout_has("TIME (+01:00)")
        .stdout_has("2026-03-14 10:00");
    snapshot("views/log-paris.txt", &paris.stdout);
    let v = b.bsi_env(&["log", "-v", "-n", "2"], &env("UTC", &[]));
    v.ok()
        .stdout_has("by Test Person <test@example.com>")
        .stdout_has("BSI-Agent: mistral");
    snapshot("views/log-verbose.txt", &v.stdout);
    colour_twin(
        &b,
        &["log"],
        &env("UTC", &[]),
        "views/log-utc-colour.txt",
        &utc.stdout,
    );
}

#[test]
fn whoami_names_the_sessions_agent() {
    let b = fixture();
    let r = b.bsi_env(
        &["whoami"],
        &env(
            "UTC",
            &[
                ("BSI_SESSION", "sess-20260314-1250-rk03"),
                ("BSI_AGENT", "someone-else"),
            ],
        ),
    );
    r.ok()
        .stdout_has("Agent: a-very-long-agent-name@workstation-7\n");
    assert!(!r.stdout.contains("someone-else"), "{}", r.stdout);
    snapshot("views/whoami.txt", &r.stdout);
    colour_twin(
        &b,
        &["whoami"],
        &env(
            "UTC",
            &[
                ("BSI_SESSION", "sess-20260314-1250-rk03"),
                ("BSI_AGENT", "someone-else"),
            ],
        ),
        "views/whoami-colour.txt",
        &r.stdout,
    );
    let overdue = b.bsi_env(
        &["whoami"],
        &env("UTC", &[("BSI_SESSION", "sess-20260314-1000-ag01")]),
    );
    overdue
        .ok()
        .stdout_has("Agent: claude\n")
        .stdout_has("an overdue claim cannot be renewed");
    snapshot("views/whoami-overdue.txt", &overdue.stdout);
    let none = b.bsi_env(
        &["whoami"],
        &env("UTC", &[("BSI_SESSION", "s9"), ("BSI_AGENT", "claude")]),
    );
    none.ok()
        .stdout_has("Agent: claude (no claim yet: the name a new claim gets)");
}

#[test]
fn the_watchdog_names_every_stale_claim_on_every_run() {
    let b = fixture();
    let first = b.bsi_env(&["watchdog"], &env("UTC", &[]));
    first
        .code(4)
        .stdout_has("Now stale: sess-20260314-1000-ag01 agents/")
        .stdout_has("sess-20260310-0800-old1");
    snapshot("views/watchdog-first.txt", &first.stdout);
    assert_eq!(
        b.last_subject(),
        "bsi: watchdog stale: agents/, projets/plan.md#Goals"
    );
    let again = b.bsi_env(
        &["watchdog"],
        &env("America/New_York", &[("BSI_NOW", "2026-03-14T13:35:00Z")]),
    );
    again.code(4);
    assert!(!again.stdout.contains("Now stale"), "{}", again.stdout);
    for id in [
        "sess-20260310-0800-old1",
        "sess-20260314-1000-ag01",
        "sess-20260314-0900-pl02",
    ] {
        assert!(
            again.stdout.contains(id),
            "{id} not named:\n{}",
            again.stdout
        );
    }
    snapshot("views/watchdog-again.txt", &again.stdout);
    colour_twin(
        &b,
        &["watchdog"],
        &env("America/New_York", &[("BSI_NOW", "2026-03-14T13:35:00Z")]),
        "views/watchdog-again-colour.txt",
        &again.stdout,
    );
    // The same words as status.
    let status = b.bsi_env(
        &["status"],
        &env("America/New_York", &[("BSI_NOW", "2026-03-14T13:35:00Z")]),
    );
    // Scope, agent, expiry and state, cell by cell (a note may be cut to
    // a different width in a different table).
    let cells = |s: &str| {
        s.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .take(4)
            .collect::<Vec<_>>()
            .join(" | ")
    };
    let status_lines: Vec<String> = status.stdout.lines().map(cells).collect();
    for line in again.stdout.lines().filter(|l| l.contains("STALE")) {
        assert!(
            status_lines.contains(&cells(line)),
            "{line:?} not in status:\n{}",
            status.stdout
        );
    }
}

/// Runs bsi in `b` on a pseudo-terminal of `cols` columns (`script` from
/// util-linux), with no `COLUMNS` in the environment (bash does not export
/// it): what a person sees, colours taken out. `None`, with the reason
/// printed, when `script` is not installed (CI installs it).
fn in_terminal(b: &Brain, args: &[&str], cols: u16) -> Option<String> {
    in_terminal_env(b, args, cols, &[])
}

/// [`in_terminal`] with more of the environment.
fn in_terminal_env(b: &Brain, args: &[&str], cols: u16, extra: &[(&str, &str)]) -> Option<String> {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: `script` (util-linux) is not installed");
        return None;
    }
    let line = format!(
        "stty cols {cols} rows 50 && exec {} {}",
        common::bin().display(),
        args.join(" ")
    );
    let mut script = std::process::Command::new("script");
    common::clean_env(&mut script, b.path());
    let run = script
        .args(["-qec", &line, "/dev/null"])
        .current_dir(b.path())
        .env("BSI_NOW", READ_AT)
        .env("TERM", "xterm")
        .env("SHELL", "/bin/sh")
        .envs(extra.iter().copied())
        .output()
        .expect("run script");
    let text = String::from_utf8_lossy(&run.stdout).replace("\r\n", "\n");
    Some(plain(&text))
}

/// The width of the screen, whatever writes to it: status, log, the tree,
/// whoami, help and the `Next:` lines fit the terminal's real width (60,
/// 80, 150) with no `COLUMNS` exported; `COLUMNS` wins; through a pipe
/// nothing is cut (`bsi log | grep NAME` finds a long agent name and scope)
/// and help wraps at 80. A long scope takes its own line instead of
/// widening every row; the tree draws the claims with their folders and
/// counts the rest, in natural order.
#[test]
fn status_log_tree_and_help_fit_the_terminal_at_60_80_and_150_and_a_pipe_cuts_nothing() {
    let b = fixture();
    let long = "projets/archive/2025/second-half/reviews/quarterly/the-review-of-the-third-quarter-with-notes.md";
    b.write(long, "# Review\n");
    b.write("notes/n1.md", "x\n");
    b.write("notes/n2.md", "x\n");
    b.write("notes/n10.md", "x\n");
    b.bsi_env(
        &[
            "open",
            long,
            "notes/n10.md",
            "notes/n2.md",
            "--agent",
            "alice@laptop-of-alice",
            "--ttl",
            "1h",
            "--note",
            "a review that needs a long sentence to say what it is about",
        ],
        &[("BSI_NOW", "2026-03-14T13:00:00Z")],
    )
    .ok();
    // Every line fits, but the long scope's own: a scope is never cut.
    let fits = |text: &str, cols: usize| {
        for l in text.lines().filter(|l| !l.ends_with(long)) {
            assert!(
                l.chars().count() <= cols,
                "wider than {cols}: {l:?}\n{text}"
            );
        }
    };
    let Some(status80) = in_terminal(&b, &["status"], 80) else {
        return;
    };
    let status150 = in_terminal(&b, &["status"], 150).expect("script");
    let status60 = in_terminal(&b, &["status"], 60).expect("script");
    fits(&status60, 60);
    fits(&status80, 80);
    fits(&status150, 150);
    // At 150 the notes and agents are whole; at 80 they give way.
    assert!(
        status150.contains("tidy the agents' notes before the Monday review"),
        "{status150}"
    );
    assert!(status150.contains("alice@laptop-of-alice"), "{status150}");
    assert!(
        !status80.contains("tidy the agents' notes before the Monday review"),
        "{status80}"
    );
    // The long scope is whole on its own line; the other rows keep their width.
    for s in [&status60, &status80, &status150] {
        assert!(s.contains(&format!("\n  {long}\n")), "{s}");
        assert!(s.lines().any(|l| l.starts_with("  notes/n10.md  ")), "{s}");
    }
    // The `Next:` lines wrap under their first word at 60, the command
    // whole; at 150 each is one line.
    assert!(
        status60.contains("\n      `bsi release sess-20260310-0800-old1 --confirm`.\n"),
        "{status60}"
    );
    assert!(
        status150.contains("\nNext: run `bsi watchdog` to mark the overdue claims stale.\n"),
        "{status150}"
    );
    // COLUMNS wins over the pipe; through a pipe without it, nothing is
    // cut: every note, agent and scope whole.
    let piped80 = b.bsi_env(&["status"], &env("UTC", &[]));
    assert_eq!(piped80.ok().stdout, status80);
    let piped150 = b.bsi_env(&["status"], &env("UTC", &[("COLUMNS", "150")]));
    assert_eq!(piped150.ok().stdout, status150);
    let whole = b.bsi_env(&["status"], &piped("UTC", &[]));
    whole
        .ok()
        .stdout_has("tidy the agents' notes before the Monday review")
        .stdout_has("a review that needs a long sentence to say what it is about")
        .stdout_has("alice@laptop-of-alice");
    assert!(!whole.stdout.contains('…'), "{}", whole.stdout);

    let log60 = in_terminal(&b, &["log"], 60).expect("script");
    let log80 = in_terminal(&b, &["log"], 80).expect("script");
    let log150 = in_terminal(&b, &["log"], 150).expect("script");
    fits(&log60, 60);
    fits(&log80, 80);
    fits(&log150, 150);
    assert!(widest(&log150) > 80, "{log150}");
    assert!(
        log150.contains("sess-20260314-1000-ag01  agents/"),
        "{log150}"
    );
    assert_eq!(b.bsi_env(&["log"], &env("UTC", &[])).ok().stdout, log80);
    // A pipe: `bsi log | grep NAME` finds the long agent and the scopes.
    let whole = b.bsi_env(&["log"], &piped("UTC", &[]));
    let row = whole
        .ok()
        .stdout
        .lines()
        .find(|l| l.contains("alice@laptop-of-alice"))
        .unwrap_or_else(|| panic!("{}", whole.stdout))
        .to_string();
    // (The commit's own summary line, which the log shows, names the
    // first scopes; the table cuts none of it.)
    assert!(row.contains("projets/archive/2025/second-half/"), "{row}");
    assert!(
        whole.stdout.contains(" BRAIN-INDEX.md on brain-index\n"),
        "{}",
        whole.stdout
    );

    // The tree: the claims and their folders, the rest counted.
    let tree = in_terminal(&b, &["status", "--tree"], 80).expect("script");
    let tree60 = in_terminal(&b, &["status", "--tree"], 60).expect("script");
    // Every line fits but the deep file's own (a name is never cut).
    for l in tree60
        .lines()
        .filter(|l| !l.ends_with("the-review-of-the-third-quarter-with-notes.md"))
    {
        assert!(l.chars().count() <= 60, "wider than 60: {l:?}\n{tree60}");
    }
    assert_eq!(
        b.bsi_env(&["status", "--tree"], &env("UTC", &[]))
            .ok()
            .stdout,
        tree
    );
    assert!(!tree.contains("alice.md"), "{tree}");
    assert!(tree.contains("└── … 2 other files"), "{tree}");
    let n2 = tree.find("n2.md").expect("n2");
    let n10 = tree.find("n10.md").expect("n10");
    assert!(n2 < n10, "natural order:\n{tree}");
    assert!(!tree.contains("n1.md"), "{tree}");
    assert!(tree.contains("└── … 1 other file"), "{tree}");
    // At 60 the claims go under their entry, each session id whole.
    assert!(tree60.contains("← sess-20260314-1000-ag01"), "{tree60}");

    // whoami, its claims and what to do next, at 60.
    let whoami60 = in_terminal_env(
        &b,
        &["whoami"],
        60,
        &[("BSI_SESSION", "sess-20260314-1000-ag01")],
    )
    .expect("script");
    assert!(
        whoami60.contains("Session: sess-20260314-1000-ag01\n"),
        "{whoami60}"
    );
    assert!(whoami60.contains("\nNext: "), "{whoami60}");
    fits(&whoami60, 60);

    // Help is wrapped at the terminal's width, words whole; at 80 in a pipe.
    for args in [
        &["--help"][..],
        &["help", "open"][..],
        &["help", "status"][..],
    ] {
        let h60 = in_terminal(&b, args, 60).expect("script");
        let h80 = in_terminal(&b, args, 80).expect("script");
        let h150 = in_terminal(&b, args, 150).expect("script");
        fits(&h60, 60);
        fits(&h80, 80);
        fits(&h150, 150);
        assert!(widest(&h150) > 80, "{h150}");
        assert!(h80.lines().count() > h150.lines().count());
        let piped = b.bsi_env(args, &piped("UTC", &[]));
        assert_eq!(piped.ok().stdout, h80, "{args:?}");
    }
}

/// `bsi status --watch` in a real terminal (tmux): the view is redrawn
/// after a claim made from another clone (fetched) and after one made in
/// this clone, says what changed, puts stale claims first, and `q` ends it.
/// Skipped, with the reason, when tmux is not installed (CI installs it).
#[test]
fn the_watch_view_redraws_after_a_claim_from_another_clone() {
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let m = common::Machines::new();
    // In a directory the test removes: the socket goes with it.
    let sock = m.bare.path().join("watch.tmux");
    let sock = sock.to_str().expect("utf-8").to_string();
    let tmux = |args: &[&str]| {
        let mut cmd = std::process::Command::new("tmux");
        common::clean_env(&mut cmd, m.a.path());
        cmd.env("BSI_NOW", common::NOW)
            .env("TERM", "xterm")
            .arg("-S")
            .arg(&sock)
            .args(args)
            .output()
            .expect("run tmux")
    };
    let watch = format!("{} status --watch", common::bin().display());
    let started = tmux(&[
        "new-session",
        "-d",
        "-x",
        "110",
        "-y",
        "40",
        "-c",
        m.a.path().to_str().expect("utf-8"),
        &watch,
    ]);
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    let pane = || String::from_utf8_lossy(&tmux(&["capture-pane", "-p"]).stdout).into_owned();
    // Waits (bounded) until the pane shows `want`: its text then.
    let wait_for = |want: &str| -> String {
        let mut text = String::new();
        for _ in 0..150 {
            text = pane();
            if text.contains(want) {
                return text;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = tmux(&["kill-server"]);
        panic!("the watch view never showed {want:?}:\n{text}");
    };
    let first = wait_for("No claims: the whole brain is free.");
    assert!(first.contains("fetched from origin/brain-index"), "{first}");
    assert!(first.contains("q or Ctrl-C quits"), "{first}");

    // A claim from the other clone: fetched, drawn, said.
    m.b.bsi(&[
        "open",
        "projets/plan.md#Risks",
        "--session",
        "s-bob",
        "--agent",
        "bob",
    ])
    .ok();
    let remote = wait_for("+ s-bob projets/plan.md#Risks opened");
    assert!(remote.contains("  projets/plan.md#Risks"), "{remote}");
    assert!(remote.contains("1 active, 0 stale"), "{remote}");

    // A claim made in this clone shows too.
    m.a.bsi(&["open", "agents/", "--session", "s-al", "--agent", "alice"])
        .ok();
    wait_for("+ s-al agents/ opened");

    // Stale claims come first, before the active ones.
    m.b.bsi(&[
        "open",
        "README.md",
        "--session",
        "s-late",
        "--agent",
        "bob",
        "--ttl",
        "8h",
    ])
    .ok();
    m.b.bsi_env(&["watchdog"], &[("BSI_NOW", "2026-03-14T12:00:00Z")])
        .code(4);
    let stale = wait_for("Stale, still blocking");
    let stale_at = stale.find("Stale, still blocking").expect("stale");
    let active_at = stale.find("\ns-late\n").expect("the active claim");
    assert!(stale_at < active_at, "{stale}");
    assert!(stale.contains("is now STALE"), "{stale}");

    // q ends it, and so does Ctrl-C: the session (the watch's only
    // window) is gone.
    let ends_with = |key: &str| {
        tmux(&["send-keys", key]);
        let mut ended = false;
        for _ in 0..100 {
            if !tmux(&["has-session"]).status.success() {
                ended = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        if !ended {
            let text = pane();
            let _ = tmux(&["kill-server"]);
            panic!("{key} did not end the watch:\n{text}");
        }
    };
    ends_with("q");
    let again = tmux(&[
        "new-session",
        "-d",
        "-x",
        "110",
        "-y",
        "40",
        "-c",
        m.a.path().to_str().expect("utf-8"),
        &watch,
    ]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    wait_for("Stale, still blocking");
    ends_with("C-c");
}

/// `bsi status --watch` started in a terminal 60 columns wide fits it, and
/// redrawn at the new width when the terminal is widened to 100 (a
/// resize, SIGWINCH): the note cut at 60 is whole at 100, the clock and
/// the age of the view share one line again. Skipped, with the reason,
/// when tmux is not installed (CI installs it).
#[test]
fn the_watch_view_is_redrawn_at_the_new_width_after_a_resize() {
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let m = common::Machines::new();
    let note = "tidy the agents' notes before the Monday review";
    m.a.bsi(&[
        "open",
        "agents/",
        "--session",
        "s-al",
        "--agent",
        "alice",
        "--note",
        note,
    ])
    .ok();
    let sock = m.bare.path().join("resize.tmux");
    let sock = sock.to_str().expect("utf-8").to_string();
    let tmux = |args: &[&str]| {
        let mut cmd = std::process::Command::new("tmux");
        common::clean_env(&mut cmd, m.a.path());
        cmd.env("BSI_NOW", common::NOW)
            .env("TERM", "xterm")
            .arg("-S")
            .arg(&sock)
            .args(args)
            .output()
            .expect("run tmux")
    };
    let watch = format!("{} status --watch", common::bin().display());
    let started = tmux(&[
        "new-session",
        "-d",
        "-x",
        "60",
        "-y",
        "30",
        "-c",
        m.a.path().to_str().expect("utf-8"),
        &watch,
    ]);
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    let pane = || String::from_utf8_lossy(&tmux(&["capture-pane", "-p"]).stdout).into_owned();
    let wait_for = |ok: &dyn Fn(&str) -> bool, what: &str| -> String {
        let mut text = String::new();
        for _ in 0..150 {
            text = pane();
            if ok(&text) {
                return text;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = tmux(&["kill-server"]);
        panic!("the watch view never showed {what}:\n{text}");
    };
    let narrow = wait_for(&|t| t.contains("  agents/"), "the claim at 60 columns");
    // At 60: the age of the view under the clock, the note cut, all within.
    assert!(
        narrow.contains("\nfetched from origin/brain-index"),
        "{narrow}"
    );
    assert!(!narrow.contains(note), "{narrow}");
    for l in narrow.lines() {
        assert!(l.chars().count() <= 60, "{l:?}\n{narrow}");
    }
    let resized = tmux(&["resize-window", "-x", "100", "-y", "30"]);
    assert!(
        resized.status.success(),
        "{}",
        String::from_utf8_lossy(&resized.stderr)
    );
    let wide = wait_for(&|t| t.contains(note), "the whole note at 100 columns");
    assert!(
        wide.lines()
            .any(|l| l.starts_with("bsi status --watch · ") && l.contains(" · fetched from")),
        "{wide}"
    );
    tmux(&["send-keys", "q"]);
    let _ = tmux(&["kill-server"]);
}

/// A refused `open` (said on stderr) and a `close` (on stdout) wrap their
/// `Next:` lines at a 60-column terminal, each command kept whole, as every
/// other view does.
#[test]
fn the_next_lines_of_a_refused_open_and_of_a_close_fit_60_columns() {
    let b = fixture();
    b.write("drafts/x.md", "# X\n\n## Part\n");
    b.bsi_env(
        &[
            "open",
            "drafts/x.md",
            "--session",
            "sess-holder-with-a-long-id",
            "--agent",
            "alice",
        ],
        &[("BSI_NOW", READ_AT)],
    )
    .ok();
    let Some(refused) = in_terminal(
        &b,
        &[
            "open",
            "drafts/x.md#Part",
            "--session",
            "sess-second",
            "--agent",
            "bob",
        ],
        60,
    ) else {
        return;
    };
    let closed = in_terminal(
        &b,
        &[
            "close",
            "sess-holder-with-a-long-id",
            "--session",
            "sess-holder-with-a-long-id",
        ],
        60,
    )
    .expect("script");
    for text in [&refused, &closed] {
        let next: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("Next:"))
            .collect();
        assert!(!next.is_empty(), "a Next: line:\n{text}");
        // A command is kept whole: alone on its line, it may be wider.
        for l in next {
            let whole_command =
                l.trim_start().starts_with('`') && l.trim().matches('`').count() == 2;
            assert!(
                l.chars().count() <= 60 || whole_command,
                "wider than 60: {l:?}\n{text}"
            );
        }
    }
    assert!(refused.contains("Claim refused"), "{refused}");
    assert!(closed.contains("Claim closed"), "{closed}");
}
