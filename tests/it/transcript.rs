//! Whole-output snapshots of a test's commands, with an advancing clock and
//! the test's temporary paths replaced by placeholders.

#![allow(dead_code, unreachable_pub)]

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::{Brain, Run, bin, clean_env, output_with_stdin, scratch_base, snapshot};

/// A test's commands and their whole outputs, written down as one reads
/// them in a terminal and compared with `tests/snapshots/<file>` in one go
/// (the way jj's test environment works): an extra, missing or changed line
/// anywhere fails the test, where a substring check would pass. A
/// transcript that differs waits for review beside its snapshot as
/// `<file>.new` ([`snapshot`] says how to accept it).
///
/// Each command runs one minute after the one before (the first at the
/// brain's clock), so times in the outputs differ from command to command
/// as they would for a person; the test's temporary paths read `$BRAIN`
/// (the brain), `$TMP/<kind>` (its remotes, clones and homes) and `$BSI`
/// (the binary). Each command also gets `BSI_RANDOM_SEED` set to its
/// number in the transcript (0 for the first), so a generated session id is
/// the same on every run and the transcript shows it as it is.
pub struct Transcript<'a> {
    brain: &'a Brain,
    step: i64,
    text: String,
}

impl<'a> Transcript<'a> {
    pub fn new(brain: &'a Brain) -> Transcript<'a> {
        Transcript {
            brain,
            step: 0,
            text: String::new(),
        }
    }

    /// The clock of the next command, and its seed for session ids.
    fn tick(&mut self) -> (String, i64) {
        let start =
            chrono::DateTime::parse_from_rfc3339(&self.brain.now).expect("the brain's clock");
        let (at, seed) = (start + chrono::Duration::minutes(self.step), self.step);
        self.step += 1;
        (at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true), seed)
    }

    /// Runs bsi at the brain's root.
    pub fn bsi(&mut self, args: &[&str]) -> Run {
        self.bsi_full(None, args, &[])
    }

    /// Runs bsi with extra environment variables (`BSI_NOW` among them
    /// replaces the transcript's clock for this command).
    pub fn bsi_env(&mut self, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.bsi_full(None, args, env)
    }

    /// Runs bsi in a subdirectory of the brain.
    pub fn bsi_in(&mut self, sub: &str, args: &[&str]) -> Run {
        self.bsi_full(Some(sub), args, &[])
    }

    /// Runs bsi in a subdirectory with extra environment variables.
    pub fn bsi_in_env(&mut self, sub: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.bsi_full(Some(sub), args, env)
    }

    fn bsi_full(&mut self, sub: Option<&str>, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = Command::new(bin());
        self.record("bsi", sub, args, env, None, &mut cmd)
    }

    /// Runs bsi with `input` on its stdin (an agent tool's event), written
    /// in the transcript as `< what`.
    pub fn bsi_stdin(&mut self, args: &[&str], input: &str, what: &str) -> Run {
        let mut cmd = Command::new(bin());
        self.record("bsi", None, args, &[], Some((input, what)), &mut cmd)
    }

    /// Runs git at the brain's root (a `git commit` through bsi's hooks).
    pub fn git(&mut self, args: &[&str]) -> Run {
        let mut cmd = Command::new("git");
        self.record("git", None, args, &[], None, &mut cmd)
    }

    /// Runs git at the brain's root with extra environment variables
    /// (`BSI_SESSION` for a commit made as a session).
    pub fn git_env(&mut self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = Command::new("git");
        self.record("git", None, args, env, None, &mut cmd)
    }

    /// Runs git in `dir`: a subdirectory of the brain (relative) or another
    /// work tree or clone (absolute), with extra environment variables.
    pub fn git_in(&mut self, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = Command::new("git");
        let dir = dir.to_string_lossy().into_owned();
        self.record("git", Some(&dir), args, env, None, &mut cmd)
    }

    /// Runs bsi in `dir` (as [`Transcript::git_in`]).
    pub fn bsi_at(&mut self, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = Command::new(bin());
        let dir = dir.to_string_lossy().into_owned();
        self.record("bsi", Some(&dir), args, env, None, &mut cmd)
    }

    /// A line of commentary in the transcript.
    pub fn note(&mut self, text: &str) {
        self.text.push_str(&format!("# {text}\n"));
    }

    fn record(
        &mut self,
        program: &str,
        sub: Option<&str>,
        args: &[&str],
        env: &[(&str, &str)],
        input: Option<(&str, &str)>,
        cmd: &mut Command,
    ) -> Run {
        let (now, seed) = self.tick();
        let dir = sub.map_or_else(
            || self.brain.path().to_path_buf(),
            |s| self.brain.path().join(s),
        );
        clean_env(cmd, self.brain.path());
        cmd.current_dir(&dir)
            .env("BSI_NOW", &now)
            .env("BSI_RANDOM_SEED", seed.to_string())
            .args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let run = match input {
            None => Run::from_output(cmd.output().expect("run")),
            Some((text, _)) => output_with_stdin(cmd, text),
        };
        let mut line = String::from("$ ");
        for (k, v) in env {
            line.push_str(&format!("{k}={} ", shell_word(v)));
        }
        line.push_str(program);
        for a in args {
            line.push(' ');
            line.push_str(&shell_word(a));
        }
        if let Some((_, what)) = input {
            line.push_str(&format!(" < {what}"));
        }
        if let Some(s) = sub {
            line.push_str(&format!("    (in {s}/)"));
        }
        self.text.push_str(&line);
        self.text.push('\n');
        self.text.push_str(&run.stdout);
        if !run.stdout.is_empty() && !run.stdout.ends_with('\n') {
            self.text.push_str("[no newline at the end of stdout]\n");
        }
        if !run.stderr.is_empty() {
            self.text.push_str("[stderr]\n");
            self.text.push_str(&run.stderr);
            if !run.stderr.ends_with('\n') {
                self.text.push('\n');
            }
        }
        self.text.push_str(&format!("[exit {}]\n\n", run.code));
        run
    }

    /// The transcript so far, with the test's paths replaced, after a line
    /// saying how its clock runs.
    pub fn text(&self) -> String {
        let header = format!(
            "# clock: {}, one minute later for each command (BSI_NOW= overrides it)\n",
            self.brain.now
        );
        header + &normalize(&self.text, self.brain.path())
    }

    /// Compares the transcript with `tests/snapshots/<rel>`.
    #[track_caller]
    pub fn check(&self, rel: &str) {
        snapshot(rel, &self.text());
    }
}

/// `arg` as a shell would need it written.
fn shell_word(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_alphanumeric() || "-_./#:=@%+,".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''").replace('\n', "\\n"))
    }
}

/// `text` with the temporary paths of a test replaced by placeholders.
pub fn normalize(text: &str, brain: &Path) -> String {
    let mut out = text.to_string();
    let canonical = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let bin = bin();
    for (path, name) in [(canonical(&bin), "$BSI"), (bin.clone(), "$BSI")] {
        out = out.replace(path.to_string_lossy().as_ref(), name);
    }
    for path in [canonical(brain), brain.to_path_buf()] {
        out = out.replace(path.to_string_lossy().as_ref(), "$BRAIN");
    }
    let base = scratch_base();
    for path in [canonical(base), base.to_path_buf()] {
        out = hide_scratch(&out, &path.to_string_lossy());
    }
    out
}

/// Replaces `<base>/<kind>.<6 random>` by `$TMP/<kind>`.
fn hide_scratch(text: &str, base: &str) -> String {
    let needle = format!("{base}/");
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(&needle) {
        out.push_str(&rest[..i]);
        let after = &rest[i + needle.len()..];
        let kind_len = after
            .find(|c: char| !(c.is_ascii_lowercase() || c == '-'))
            .unwrap_or(after.len());
        let (kind, tail) = after.split_at(kind_len);
        let random = tail
            .strip_prefix('.')
            .filter(|t| t.len() >= 6 && t[..6].chars().all(|c| c.is_ascii_alphanumeric()));
        out.push_str("$TMP/");
        if let Some(t) = random {
            out.push_str(kind);
            rest = &t[6..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn the_placeholders_hide_only_what_varies() {
    assert_eq!(
        hide_scratch("at /s/bsi-clone.Ab3dE9/x and /s/bsi-test.zzzzzz", "/s"),
        "at $TMP/bsi-clone/x and $TMP/bsi-test"
    );
    // A name without its random part is kept.
    assert_eq!(hide_scratch("/s/other", "/s"), "$TMP/other");
    assert_eq!(shell_word("agents/"), "agents/");
    assert_eq!(shell_word("two\nlines"), "'two\\nlines'");
    assert_eq!(shell_word("it's"), "'it'\\''s'");
}
