//! Values that cannot break a door: TTLs and durations past every bound
//! (from the command line, the environment, `.bsi.toml`) are refused with
//! their range, never a panic; the git hooks and the agent tools' hooks
//! keep their fail-open promise whatever the configuration holds; a
//! closed pipe ends every command quietly with success.

use std::process::Command;

use proptest::prelude::*;
use proptest::test_runner::TestRunner;

use crate::common::{Brain, Run, bin, clean_env, output_with_stdin};

fn no_panic(what: &str, r: &Run) {
    assert_ne!(r.code, 101, "{what} panicked: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{what}: {}", r.stderr);
}

/// The figure and its kin: refused with the range, exit 2, nothing
/// written.
#[test]
fn a_ttl_past_every_bound_is_refused_with_its_range() {
    let b = Brain::new();
    let before = (b.commits(), b.user_state());
    for ttl in [
        "2562047788016h",
        "9999999999999999h",
        "99999999999999999999m",
        "8h1m",
    ] {
        let r = b.bsi(&["open", "projets/plan.md", "--ttl", ttl, "--session", "s1"]);
        no_panic(ttl, &r);
        r.code(2)
            .stderr_has(&format!("`{ttl}` is longer than the 8h maximum"))
            .stderr_has("use a TTL from 1m to 8h");
    }
    b.bsi(&["open", "projets/plan.md", "--session", "s1", "--agent", "a"])
        .ok();
    let r = b.bsi(&["renew", "s1", "--ttl", "2562047788016h"]);
    no_panic("renew", &r);
    r.code(2).stderr_has("from 1m to 8h");
    assert_eq!(b.commits(), before.0 + 1, "only the plain open wrote");
    assert_eq!(b.user_state(), before.1);
}

/// `default_ttl = "9999999999999999h"` used to panic every command, refuse
/// every `git commit` and abort every branch update. Now: every command
/// says what is wrong and the range; a commit through the installed hooks
/// goes through with a warning; so does a branch update.
#[test]
fn a_huge_default_ttl_is_a_configuration_error_and_commits_still_land() {
    let b = Brain::new();
    b.bsi(&["hook", "install"]).ok();
    b.write(".bsi.toml", "default_ttl = \"9999999999999999h\"\n");
    let r = b.bsi(&["status"]);
    no_panic("status", &r);
    r.code(2)
        .stderr_has("`default_ttl` is not a TTL: `9999999999999999h` is longer than the 8h maximum: use a TTL from 1m to 8h");
    let r = b.bsi(&["open", "projets/plan.md", "--session", "s1"]);
    no_panic("open", &r);
    r.code(2);
    b.write("agents/alice.md", "# Alice\n\nmore notes\n");
    b.git(&["add", "agents/alice.md"]);
    let commit = b.git_run(&["commit", "-q", "-m", "notes"]);
    no_panic("git commit", &commit);
    commit.code(0).stderr_has("the hook runs with its default");
    // A branch update the reference-transaction hook judges: a cherry-pick.
    b.git(&["checkout", "-q", "-b", "side", "HEAD~1"]);
    let pick = b.git_run(&["cherry-pick", "main"]);
    no_panic("git cherry-pick", &pick);
    pick.code(0);
    assert!(b.read("agents/alice.md").contains("more notes"));
}

/// Durations from the environment, git config and `.bsi.toml`, and
/// `--wait`: refused with their range, never a panic.
#[test]
fn durations_past_their_range_are_refused_with_it() {
    let b = Brain::new();
    let r = b.bsi_env(&["status"], &[("BSI_PUBLISH_TIMEOUT", "2562047788016h")]);
    no_panic("BSI_PUBLISH_TIMEOUT", &r);
    r.code(2).stderr_has(
        "BSI_PUBLISH_TIMEOUT is `2562047788016h`, longer than 1h; use a duration from 1ms to 1h",
    );
    let r = b.bsi_env(
        &["status"],
        &[("BSI_CONNECTION_TIMEOUT", "99999999999999999999999ms")],
    );
    no_panic("BSI_CONNECTION_TIMEOUT", &r);
    r.code(2).stderr_has("longer than 1h");
    b.git(&["config", "bsi.connectionTimeout", "0s"]);
    b.bsi(&["status"])
        .code(2)
        .stderr_has("git config bsi.connectionTimeout is `0s`; use a duration from 1ms to 1h");
    b.git(&["config", "--unset", "bsi.connectionTimeout"]);
    b.write(".bsi.toml", "publish_timeout = \"9999999999999999h\"\n");
    b.bsi(&["status"])
        .code(2)
        .stderr_has("`publish_timeout` is `9999999999999999h`, longer than 1h");
    b.write(".bsi.toml", "");
    let r = b.bsi(&[
        "open",
        "projets/plan.md",
        "--session",
        "s1",
        "--wait",
        "2562047788016h",
    ]);
    no_panic("--wait", &r);
    r.code(2)
        .stderr_has("--wait is `2562047788016h`, longer than 24h; use a duration from 1ms to 24h");
}

/// A duration out of its range in git config or the environment refuses a
/// command with its range, but a hook must run whatever it meets: the
/// commit is judged with the default and the value is said. A change
/// inside another session's claim is still refused; a free one lands.
#[test]
fn a_hook_meets_a_duration_out_of_its_range_and_judges_with_the_default() {
    let b = Brain::new();
    b.bsi(&["hook", "install"]).ok();
    b.bsi(&["open", "projets/plan.md", "--session", "s1"]).ok();
    b.git(&["config", "bsi.connectionTimeout", "0s"]);
    b.git(&["config", "bsi.publishTimeout", "2562047788016h"]);
    b.bsi(&["status"])
        .code(2)
        .stderr_has("git config bsi.publishTimeout is `2562047788016h`, longer than 1h");
    let before = b.head_commits();
    b.write("projets/plan.md", "# Plan\n\ns2 was here\n");
    b.git(&["add", "projets/plan.md"]);
    let r = b.git_run(&["commit", "-q", "-m", "inside s1's claim"]);
    no_panic("git commit", &r);
    assert_ne!(r.code, 0, "a commit inside s1's claim landed: {}", r.stderr);
    assert!(r.stderr.contains("s1"), "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "bsi: warning: git config bsi.connectionTimeout is `0s`; use a duration from 1ms to 1h"
        ) && r.stderr.contains("; using 10s"),
        "{}",
        r.stderr
    );
    assert_eq!(b.head_commits(), before);
    b.git(&["reset", "-q", "--hard"]);
    b.write("agents/alice.md", "# Alice\n\nfree notes\n");
    b.git(&["add", "agents/alice.md"]);
    let r = b.git_run(&["commit", "-q", "-m", "free notes"]);
    no_panic("git commit", &r);
    r.code(0)
        .stderr_has("bsi: warning: git config bsi.publishTimeout is `2562047788016h`, longer than 1h; use a duration from 1ms to 1h")
        .stderr_has("; using 120s");
    assert_eq!(b.head_commits(), before + 1);
    // Each warning ends with what drops the value: run as printed, the next
    // commit has nothing to say.
    let printed: Vec<&str> = r
        .stderr
        .lines()
        .filter_map(|l| l.split("Next: `").nth(1)?.split('`').next())
        .collect();
    assert_eq!(
        printed,
        [
            "git config --unset bsi.publishTimeout",
            "git config --unset bsi.connectionTimeout"
        ],
        "{}",
        r.stderr
    );
    for command in printed {
        let mut sh = Command::new("sh");
        clean_env(&mut sh, b.path());
        let ran = sh
            .current_dir(b.path())
            .args(["-c", command])
            .output()
            .expect("run sh");
        assert!(ran.status.success(), "{command}: {ran:?}");
    }
    b.write("agents/alice.md", "# Alice\n\nmore free notes\n");
    b.git(&["add", "agents/alice.md"]);
    let r = b.git_run(&["commit", "-q", "-m", "more free notes"]);
    r.code(0);
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
}

/// A value a person might write in `.bsi.toml`, good or bad.
fn toml_line() -> impl Strategy<Value = String> {
    let huge = prop_oneof![
        Just("2562047788016".to_string()),
        Just("9999999999999999".to_string()),
        Just("18446744073709551616".to_string()),
        Just("0".to_string()),
        (0u64..u64::MAX).prop_map(|n| n.to_string()),
        (0u64..600).prop_map(|n| n.to_string()),
    ];
    let unit = prop_oneof![
        Just("h"),
        Just("m"),
        Just("s"),
        Just("ms"),
        Just("d"),
        Just("")
    ];
    let duration = (huge, unit).prop_map(|(n, u)| format!("\"{n}{u}\""));
    let key = prop_oneof![
        Just("default_ttl"),
        Just("publish_timeout"),
        Just("connection_timeout"),
    ];
    let number = prop_oneof![
        Just(i64::MAX),
        Just(i64::MIN),
        Just(0i64),
        Just(-1i64),
        any::<i64>()
    ];
    let count = prop_oneof![Just("max_active_per_agent"), Just("history_keep")];
    prop_oneof![
        (key, duration).prop_map(|(k, v)| format!("{k} = {v}")),
        (count, number).prop_map(|(k, n)| format!("{k} = {n}")),
        "[a-z_]{1,12} = \"[ -~]{0,8}\"".prop_map(|l| l.replace('\\', "")),
        Just("hook_mode = \"loud\"".to_string()),
        Just("default_ttl = 12".to_string()),
        Just("not toml at all [".to_string()),
    ]
}

/// What the environment may hold for a hook.
fn env_value() -> impl Strategy<Value = Option<(&'static str, String)>> {
    prop_oneof![
        2 => Just(None),
        1 => "[0-9]{1,22}(h|m|s|ms)?".prop_map(|v| Some(("BSI_PUBLISH_TIMEOUT", v))),
        1 => "[0-9]{1,22}(h|m|s|ms)?".prop_map(|v| Some(("BSI_CONNECTION_TIMEOUT", v))),
    ]
}

/// Runs `bsi ARGS` in `b` with `env` and `input` on stdin.
fn hook_run(b: &Brain, args: &[&str], env: &[(&str, String)], input: &str) -> Run {
    let mut cmd = b.command(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    output_with_stdin(&mut cmd, input)
}

/// Whatever `.bsi.toml` and the environment hold, the real hook entry
/// points never panic, and those documented to fail open do: the
/// reference-transaction hook lets an update that lands no claimed change
/// go (exit 0), the agent tools' edit hook lets the edit through (exit 0),
/// post-checkout never fails, and a broken `.bsi.toml` blocks a commit
/// only where the keys that decide what is judged cannot be read
/// (pre-commit exit 2 with the file's words, else exit 0). Generated cases on one brain (a brain per
/// case would cost a repository each).
#[test]
fn the_hooks_never_panic_and_fail_open_whatever_the_configuration() {
    let b = Brain::new();
    b.bsi(&["hook", "install"]).ok();
    let main = b.git(&["rev-parse", "main"]);
    let main = main.trim();
    let tree = b.git(&["rev-parse", "main^{tree}"]);
    // A commit no branch has yet, landing on main: what a cherry-pick
    // hands the reference-transaction hook.
    let new = b.git(&["commit-tree", tree.trim(), "-p", main, "-m", "landing"]);
    let updates = format!("{main} {} refs/heads/main\n", new.trim());
    let event =
        crate::agent_hook::replace_event(&b, "claude", "projets/plan.md", "goal text", "new goal");
    let zeros = "0".repeat(40);
    let mut runner = TestRunner::new(ProptestConfig {
        cases: if crate::common::long() { 64 } else { 8 },
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let cases = (prop::collection::vec(toml_line(), 1..4), env_value());
    let outcome = runner.run(&cases, |(lines, env)| {
        b.write(".bsi.toml", &format!("{}\n", lines.join("\n")));
        let env: Vec<(&str, String)> = env.into_iter().collect();
        let r = hook_run(
            &b,
            &["hook", "reference-transaction", "prepared"],
            &env,
            &updates,
        );
        no_panic("reference-transaction", &r);
        prop_assert_eq!(r.code, 0, "reference-transaction: {}", r.stderr);
        let r = hook_run(&b, &["hook", "edit", "--tool", "claude"], &env, &event);
        no_panic("edit hook", &r);
        prop_assert_eq!(r.code, 0, "edit hook: {}", r.stderr);
        let r = hook_run(&b, &["hook", "post-checkout", &zeros, main, "1"], &env, "");
        no_panic("post-checkout", &r);
        prop_assert_eq!(r.code, 0, "post-checkout: {}", r.stderr);
        b.write("agents/bob.md", "# Bob\n\nmore\n");
        b.git(&["add", "agents/bob.md"]);
        let r = hook_run(&b, &["hook", "pre-commit"], &env, "");
        b.git(&["reset", "-q"]);
        no_panic("pre-commit", &r);
        // A file whose keys that decide what is judged cannot be read (no
        // TOML, a hook mode that is none) stops the commit with its words,
        // unless it says `warn`; any other bad line is said and skipped.
        let text = b.read(".bsi.toml");
        let (config, problems) = bsi_core::config::parse_lenient(&text);
        let guarding = problems.iter().any(bsi_core::config::ConfigError::guards)
            && config.hook_mode != bsi_core::config::HookMode::Warn;
        if guarding {
            prop_assert_eq!(r.code, 2, "pre-commit: {}", r.stderr);
            prop_assert!(r.stderr.contains(".bsi.toml"), "pre-commit: {}", r.stderr);
        } else if env.is_empty() {
            prop_assert_eq!(r.code, 0, "pre-commit: {}", r.stderr);
        } else {
            // A bad variable is the committer's own to fix: said, with its
            // range, never a panic.
            prop_assert!(r.code == 0 || r.code == 2, "pre-commit: {}", r.stderr);
        }
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
}

/// Runs `bsi ARGS | READER` in bash with `set -o pipefail` in `b`, bsi's
/// stderr to a file: the pipeline's exit code and what bsi said on stderr.
fn pipeline(b: &Brain, args: &str, reader: &str) -> (i32, String) {
    let err = b.path().join(".git/pipe-stderr");
    let script = format!(
        "set -o pipefail; \"$BSI\" {args} 2>'{}' | {reader}",
        err.to_str().expect("utf-8").replace('\'', "")
    );
    let mut cmd = Command::new("bash");
    clean_env(&mut cmd, b.path());
    let out = cmd
        .current_dir(b.path())
        .env("BSI", bin())
        .env("BSI_NOW", &b.now)
        .args(["-c", &script])
        .output()
        .expect("run bash");
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    (out.status.code().unwrap_or(-1), stderr)
}

/// `bsi completions zsh | head -1` used to print `error: cannot write to
/// stdout: Broken pipe` and exit 1. A closed pipe is success, with nothing
/// said, for every command that writes what was asked for.
#[test]
fn a_closed_pipe_ends_every_command_quietly_with_success() {
    let b = Brain::new();
    b.bsi(&["open", "projets/plan.md", "--session", "s1", "--agent", "a"])
        .ok();
    for args in [
        "completions zsh",
        "completions bash",
        "man",
        "help",
        "help open",
        "--help",
        "log",
        "status",
        "status --json",
        "status --tree",
    ] {
        for reader in ["head -1", "true"] {
            let (code, stderr) = pipeline(&b, args, reader);
            assert_eq!(code, 0, "bsi {args} | {reader}: {stderr}");
            assert_eq!(stderr, "", "bsi {args} | {reader}");
        }
    }
    // The same, with the pipe closed before bsi writes a byte: no race.
    for args in [
        &["completions", "zsh"][..],
        &["man"],
        &["help"],
        &["log"],
        &["status"],
    ] {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let mut cmd = b.command(args);
        let out = cmd.stdout(writer).output().expect("run bsi");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}");
    }
}
