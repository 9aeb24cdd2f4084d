//! The documentation's examples, run: the conflict table of docs/scopes.md,
//! every console example of README.md and docs/*.md marked runnable, and
//! the README's tour, run in one shell top to bottom and pasted at once
//! into bash and zsh in a terminal.
//!
//! A console block is runnable when the line before its fence (blank lines
//! aside) is `<!-- bsi:runnable -->`, optionally with `VAR=value` pairs for
//! its environment. Each `$ ` line is a command; the lines under it are what
//! it prints, stdout and stderr together: each of them must be a line of the
//! real output, in order (the output may have more lines). A command must
//! exit 0 unless its comment says `# exit N`. The runnable blocks of one
//! document run in order on one example brain (`examples/example-brain.sh`,
//! with `bsi init` done unless the first command is `bsi init`), at
//! `BSI_NOW=2026-03-14T09:30:00Z` in UTC. The brain's path prints as
//! `/brain`; a generated session id (`sess-YYYYMMDD-HHMM-xxxx`) in the text
//! matches any generated id, and later commands of the document use the
//! real one.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Brain, bin, clean_env};

#[test]
fn every_conflict_rule_in_docs_scopes_holds() {
    let doc = include_str!("../../docs/scopes.md");
    let rules: Vec<(String, String, bool)> = doc
        .lines()
        .filter(|l| l.starts_with("| ") && l[2..].starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let scope = |s: &str| s.trim_matches('`').to_string();
            (
                scope(cells[1]),
                scope(cells[2]),
                cells[3].starts_with("refused"),
            )
        })
        .collect();
    assert!(rules.len() >= 15, "{rules:?}");
    for (held, asked, refused) in rules {
        let b = Brain::new();
        b.bsi(&["open", &held, "--session", "holder"]).ok();
        let r = b.bsi(&["open", &asked, "--session", "other"]);
        if refused {
            r.code(3).stderr_has("holder holds");
        } else {
            r.ok();
        }
    }
}

/// One command of a console example.
#[derive(Debug, Clone)]
struct Step {
    command: String,
    expected: Vec<String>,
    exit: i32,
}

/// A runnable block: where it is, its environment, its steps.
#[derive(Debug, Clone)]
struct Block {
    line: usize,
    env: Vec<(String, String)>,
    steps: Vec<Step>,
}

/// The exit code a command's comment announces (`# exit 3`, `# exit 4: …`).
fn announced_exit(command: &str) -> i32 {
    let Some(i) = command.find("# exit ") else {
        return 0;
    };
    command[i + 7..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or(0)
}

/// A marked fenced block: the line of its fence, the environment of its
/// marker, its lines.
type Marked = (usize, Vec<(String, String)>, Vec<String>);

/// The blocks of `doc` whose fence follows a `<!-- bsi:{marker} … -->` line.
fn blocks(doc: &str, marker: &str) -> Vec<Marked> {
    let lines: Vec<&str> = doc.lines().collect();
    let tag = format!("<!-- bsi:{marker}");
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim();
        if let Some(rest) = l.strip_prefix(&tag) {
            let env: Vec<(String, String)> = rest
                .trim_end_matches("-->")
                .split_whitespace()
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim().is_empty() {
                j += 1;
            }
            assert!(
                j < lines.len() && lines[j].starts_with("```"),
                "line {}: `{tag}` is not followed by a fenced block",
                i + 1
            );
            let mut body = Vec::new();
            let mut k = j + 1;
            while k < lines.len() && !lines[k].starts_with("```") {
                body.push(lines[k].to_string());
                k += 1;
            }
            out.push((j + 1, env, body));
            i = k;
        }
        i += 1;
    }
    out
}

fn console_blocks(doc: &str) -> Vec<Block> {
    blocks(doc, "runnable")
        .into_iter()
        .map(|(line, env, body)| {
            let mut steps: Vec<Step> = Vec::new();
            for l in body {
                if let Some(c) = l.strip_prefix("$ ") {
                    steps.push(Step {
                        command: c.to_string(),
                        expected: Vec::new(),
                        exit: announced_exit(c),
                    });
                } else if let Some(s) = steps.last_mut() {
                    if !l.trim().is_empty() {
                        s.expected.push(l.trim_end().to_string());
                    }
                } else {
                    panic!("line {line}: a runnable block starts with `$ `, not {l:?}");
                }
            }
            Block { line, env, steps }
        })
        .collect()
}

/// Where a generated session id starts in `s` at or after `from`, and its
/// length.
fn find_generated_id(s: &str, from: usize) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    let shape = |i: usize| -> bool {
        let p = |k: usize, f: fn(u8) -> bool| b.get(i + k).copied().is_some_and(f);
        s[i..].starts_with("sess-")
            && (5..13).all(|k| p(k, |c| c.is_ascii_digit()))
            && p(13, |c| c == b'-')
            && (14..18).all(|k| p(k, |c| c.is_ascii_digit()))
            && p(18, |c| c == b'-')
            && (19..23).all(|k| p(k, |c| c.is_ascii_lowercase() || c.is_ascii_digit()))
    };
    (from..s.len().saturating_sub(22))
        .filter(|&i| s.is_char_boundary(i))
        .find(|&i| shape(i))
        .map(|i| (i, 23))
}

/// Whether `actual` is the `expected` line, a generated id in `expected`
/// matching any generated id; the ids met are added to `ids`.
fn line_matches(expected: &str, actual: &str, ids: &mut Vec<(String, String)>) -> bool {
    let (mut e, mut a) = (0, 0);
    let mut found = Vec::new();
    while let Some((i, n)) = find_generated_id(expected, e) {
        let lit = &expected[e..i];
        if !actual[a..].starts_with(lit) {
            return false;
        }
        a += lit.len();
        match find_generated_id(actual, a) {
            Some((j, m)) if j == a => {
                found.push((expected[i..i + n].to_string(), actual[j..j + m].to_string()));
                a += m;
            }
            _ => return false,
        }
        e = i + n;
    }
    if actual[a..] != expected[e..] {
        return false;
    }
    for f in found {
        if !ids.iter().any(|(d, _)| *d == f.0) {
            ids.push(f);
        }
    }
    true
}

fn substitute(s: &str, ids: &[(String, String)]) -> String {
    let mut s = s.to_string();
    for (doc, real) in ids {
        s = s.replace(doc.as_str(), real);
    }
    s
}

/// Runs `commands` in one bash process in `dir`, and returns each one's
/// output (stdout and stderr together) and exit code.
fn run_steps(
    dir: &Path,
    home: &Path,
    env: &[(String, String)],
    commands: &[String],
) -> Vec<(String, i32)> {
    run_steps_in(&["bash"], dir, home, env, commands)
}

/// [`run_steps`] in the shell `shell` (a program and its options).
fn run_steps_in(
    shell: &[&str],
    dir: &Path,
    home: &Path,
    env: &[(String, String)],
    commands: &[String],
) -> Vec<(String, i32)> {
    let script = format!("exec 2>&1\n{}", instrumented(commands));
    let mut cmd = Command::new(shell[0]);
    cmd.args(&shell[1..]);
    clean_env(&mut cmd, home);
    let path = format!(
        "{}:{}",
        bin().parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.current_dir(dir)
        .env("PATH", path)
        .env("BSI_NOW", "2026-03-14T09:30:00Z")
        .env("TMPDIR", home);
    for (k, v) in env {
        cmd.env(k, v);
    }
    // An interactive shell (`-i`) reads what is pasted, line by line, from
    // its input, as a terminal gives it; any other runs the script.
    let text = if shell.contains(&"-i") {
        cmd.env("PS1", "").env("PS2", "").env("PROMPT", "");
        crate::common::output_with_stdin(&mut cmd, &script).stdout
    } else {
        let out = cmd.arg("-c").arg(&script).output().expect("run the shell");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    results_of(&text, commands.len())
}

/// `commands` as a script that marks where each one's output begins and
/// ends, with its exit code.
fn instrumented(commands: &[String]) -> String {
    let mut script = String::from("__rc=0\n");
    for (i, c) in commands.iter().enumerate() {
        script.push_str(&format!(
            "printf '\\n@@begin {i}\\n'; (exit $__rc)\n{c}\n__rc=$?; printf '\\n@@end {i} %d\\n' $__rc\n"
        ));
    }
    script
}

/// Each command's output and exit code, read from the marks of
/// [`instrumented`] in `text`.
fn results_of(text: &str, n: usize) -> Vec<(String, i32)> {
    let mut results = Vec::new();
    for i in 0..n {
        let begin = format!("\n@@begin {i}\n");
        let end = format!("\n@@end {i} ");
        let Some(b) = text.find(&begin) else {
            results.push((format!("(never ran)\n{text}"), -1));
            continue;
        };
        let body_at = b + begin.len();
        let Some(e) = text[body_at..].find(&end).map(|e| body_at + e) else {
            results.push((format!("(did not finish)\n{}", &text[body_at..]), -1));
            continue;
        };
        let code: i32 = text[e + end.len()..]
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or(-1);
        results.push((text[body_at..e].to_string(), code));
    }
    results
}

fn example_brain(home: &Path) -> PathBuf {
    let dir = home.join("brain");
    let mut cmd = Command::new("bash");
    clean_env(&mut cmd, home);
    let out = cmd
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/example-brain.sh"
        ))
        .arg(&dir)
        .output()
        .expect("make the example brain");
    assert!(
        out.status.success(),
        "example-brain.sh: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::canonicalize(dir).expect("brain path")
}

/// Runs every runnable console block of one document; returns the failures.
fn check_document(name: &str, doc: &str) -> (usize, Vec<String>) {
    let blocks = console_blocks(doc);
    if blocks.is_empty() {
        return (0, Vec::new());
    }
    let home = crate::common::scratch("bsi-home");
    let home_path = std::fs::canonicalize(home.path()).expect("home");
    let brain = example_brain(&home_path);
    let first = blocks[0].steps.first().map(|s| s.command.as_str());
    if !first.is_some_and(|c| c.starts_with("bsi init")) {
        let r = run_steps(&brain, &home_path, &[], &["bsi init".to_string()]);
        assert_eq!(r[0].1, 0, "bsi init: {}", r[0].0);
    }
    let mut ids: Vec<(String, String)> = Vec::new();
    let mut failures = Vec::new();
    let mut count = 0;
    let brain_str = brain.display().to_string();
    for block in &blocks {
        let commands: Vec<String> = block
            .steps
            .iter()
            .map(|s| substitute(&s.command, &ids))
            .collect();
        let results = run_steps(&brain, &home_path, &block.env, &commands);
        for (step, (output, code)) in block.steps.iter().zip(results) {
            count += 1;
            let output = output.replace(&brain_str, "/brain");
            let where_ = format!("{name}:{} `$ {}`", block.line, step.command);
            if code != step.exit {
                failures.push(format!(
                    "{where_}: exit {code}, the doc says {}\n{output}",
                    step.exit
                ));
                continue;
            }
            let actual: Vec<&str> = output.lines().map(str::trim_end).collect();
            let mut at = 0;
            for want in &step.expected {
                let want = substitute(want, &ids);
                if let Some(i) =
                    (at..actual.len()).find(|&i| line_matches(&want, actual[i], &mut ids))
                {
                    at = i + 1;
                } else {
                    failures.push(format!(
                        "{where_}: the doc shows\n  {want}\nwhich the binary does not print (in this order):\n{output}"
                    ));
                    break;
                }
            }
        }
    }
    (count, failures)
}

#[test]
fn every_runnable_console_example_of_the_docs_prints_what_it_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs = vec![root.join("README.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    more.sort();
    docs.extend(more);
    let mut total = 0;
    let mut failures = Vec::new();
    for path in &docs {
        let text = std::fs::read_to_string(path).expect("read doc");
        let name = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        let (n, f) = check_document(&name, &text);
        total += n;
        failures.extend(f);
    }
    assert!(
        failures.is_empty(),
        "{} of {total} documented commands drifted:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(total >= 20, "only {total} runnable commands in the docs");
}

#[test]
fn the_readme_tour_runs_top_to_bottom() {
    tour_in(&["bash"]);
}

/// The tour typed into zsh line by line with the options of an
/// interactive zsh (macOS's shell), where `#` starts no comment.
#[test]
fn the_readme_tour_runs_in_zsh_with_its_interactive_defaults() {
    if Command::new("zsh").arg("-fc").arg("true").output().is_err() {
        eprintln!("zsh is not installed: skipped (CI installs it)");
        return;
    }
    tour_in(&["zsh", "-f", "-i"]);
}

/// The tour's steps: each line, and the exit code it must give. A line
/// `echo '== …'` says what the commands under it do; when it starts with
/// `exit N`, the command right under it exits N, every other exits 0. No
/// line has a `#` comment (zsh reads its words as arguments in a paste)
/// nor a quote inside the quotes of its `echo`.
fn tour_steps() -> (usize, Vec<(String, i32)>) {
    let readme = include_str!("../../README.md");
    let tours = blocks(readme, "tour");
    assert_eq!(tours.len(), 1, "one tour in the README");
    let (line, env, body) = &tours[0];
    assert!(env.is_empty(), "{env:?}");
    let mut steps = Vec::new();
    let mut announced = 0;
    for l in body.iter().map(|l| l.trim()).filter(|l| !l.is_empty()) {
        assert!(
            !l.starts_with('#') && !l.contains(" #"),
            "README.md:{line}: a `#` comment in the tour (zsh, pasted, reads it as words): {l}"
        );
        if let Some(says) = l.strip_prefix("echo '== ") {
            let text = says.strip_suffix('\'').unwrap_or_else(|| panic!("{l}"));
            assert!(
                !text.contains(['\'', '!', '\\', '`', '$']),
                "README.md:{line}: a character a shell may read in {l}"
            );
            announced = text
                .strip_prefix("exit ")
                .map_or(0, |n| n[..1].parse().expect("exit N"));
            steps.push((l.to_string(), 0));
        } else {
            steps.push((l.to_string(), announced));
            announced = 0;
        }
    }
    assert!(steps.len() >= 30, "a short tour: {steps:?}");
    (*line, steps)
}

fn tour_in(shell: &[&str]) {
    let (line, steps) = tour_steps();
    let home = crate::common::scratch("bsi-home");
    let home_path = std::fs::canonicalize(home.path()).expect("home");
    let commands: Vec<String> = steps.iter().map(|(c, _)| c.clone()).collect();
    // The tour starts in a fresh clone of bsi: the repository's root.
    let results = run_steps_in(
        shell,
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &home_path,
        &[],
        &commands,
    );
    check_tour(line, &steps, &results);
}

/// Every step exited as the tour says, and the day went as it tells.
fn check_tour(line: usize, steps: &[(String, i32)], results: &[(String, i32)]) {
    let mut seen = String::new();
    for ((command, want), (output, code)) in steps.iter().zip(results) {
        seen.push_str(&format!("$ {command}\n{output}"));
        assert_eq!(
            code, want,
            "README.md:{line}: `{command}` exited {code}, the tour says {want}\n--- the tour so far\n{seen}"
        );
    }
    let all: String = results.iter().map(|(o, _)| o.as_str()).collect();
    for want in [
        "Registry created",
        "Claim refused — nothing was written.",
        "Free nearby:",
        "Claim renewed",
        "Claim closed",
        "Now stale:",
        "Nothing released yet",
        "Claim released",
        "TIME (UTC)",
        "== Back to the real clock",
    ] {
        assert!(all.contains(want), "the tour never shows {want:?}:\n{seen}");
    }
    assert!(!all.contains("error:"), "an error in the tour:\n{seen}");
    // The release is a person's, after the session `me` closed: the journal
    // credits the user, not the agent name the session exported.
    let release = all
        .lines()
        .find(|l| l.starts_with("2026-") && l.contains(" release "))
        .unwrap_or_else(|| panic!("no release in the journal:\n{seen}"));
    assert!(!release.contains(" me "), "{release}");
    assert!(release.contains("tester@"), "{release}");
}

/// The whole tour pasted at once into a shell in a terminal (tmux), as a
/// person pastes it: with bracketed paste, which zsh and bash read as one
/// block (a `setopt` at its top would not apply to the rest of it), then
/// Enter. Each step's exit code is as the tour says. Skipped, with the
/// reason, when tmux or the shell is not installed (CI installs them).
fn tour_pasted_into(shell: &str, columns: u16) {
    for tool in ["tmux", shell] {
        if Command::new(tool).arg("-c").arg("exit 0").output().is_err()
            && Command::new(tool).arg("-V").output().is_err()
        {
            eprintln!("skipped: {tool} is not installed");
            return;
        }
    }
    let (line, steps) = tour_steps();
    let home = crate::common::scratch("bsi-home");
    let home_path = std::fs::canonicalize(home.path()).expect("home");
    let commands: Vec<String> = steps.iter().map(|(c, _)| c.clone()).collect();
    let out = home_path.join("tour.out");
    let paste = home_path.join("tour.paste");
    // The output goes to a file: the terminal shows the paste and prompts.
    let text = format!(
        "exec >{} 2>&1\n{}printf '\\n@@done\\n'\n",
        out.display(),
        instrumented(&commands)
    );
    std::fs::write(&paste, text).expect("write the paste");
    let sock = home_path.join("tmux.sock");
    let tmux = |args: &[&str]| {
        let mut cmd = Command::new("tmux");
        clean_env(&mut cmd, &home_path);
        let path = format!(
            "{}:{}",
            bin().parent().expect("bin dir").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        cmd.env("PATH", path)
            .env("TERM", "xterm")
            .env("TMPDIR", &home_path)
            .arg("-S")
            .arg(&sock)
            .args(args)
            .output()
            .expect("run tmux")
    };
    let program = if shell == "zsh" {
        "zsh -f -i"
    } else {
        "bash -i"
    };
    let started = tmux(&[
        "new-session",
        "-d",
        "-x",
        &columns.to_string(),
        "-y",
        "40",
        "-c",
        env!("CARGO_MANIFEST_DIR"),
        program,
    ]);
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    let pane = || String::from_utf8_lossy(&tmux(&["capture-pane", "-p"]).stdout).into_owned();
    // The shell is ready when its prompt shows.
    for _ in 0..100 {
        if !pane().trim().is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    tmux(&["load-buffer", paste.to_str().expect("utf-8")]);
    tmux(&["paste-buffer", "-p"]);
    tmux(&["send-keys", "Enter"]);
    let mut done = String::new();
    for _ in 0..1800 {
        done = std::fs::read_to_string(&out).unwrap_or_default();
        if done.contains("\n@@done\n") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let screen = pane();
    let _ = tmux(&["kill-server"]);
    assert!(
        done.contains("\n@@done\n"),
        "the tour pasted into {program} did not finish; the terminal shows:\n{screen}\n--- its output:\n{done}"
    );
    check_tour(line, &steps, &results_of(&done, commands.len()));
}

/// Pasted into a terminal 60 and 100 columns wide: the shell's line
/// editor wraps the long lines of the paste on a narrow screen, and every
/// step still runs as written.
#[test]
fn the_readme_tour_pasted_into_zsh_runs_every_step() {
    tour_pasted_into("zsh", 60);
    tour_pasted_into("zsh", 100);
}

#[test]
fn the_readme_tour_pasted_into_bash_runs_every_step() {
    tour_pasted_into("bash", 60);
    tour_pasted_into("bash", 100);
}

#[test]
fn the_doc_runner_matches_generated_ids_and_exit_codes() {
    let mut ids = Vec::new();
    assert!(line_matches(
        "Session: sess-20260314-0930-ag01",
        "Session: sess-20260314-0930-x7k2",
        &mut ids
    ));
    assert_eq!(
        ids,
        vec![(
            "sess-20260314-0930-ag01".to_string(),
            "sess-20260314-0930-x7k2".to_string()
        )]
    );
    assert!(!line_matches("Session: s1", "Session: s2", &mut ids));
    assert!(!line_matches(
        "Session: sess-20260314-0930-ag01 x",
        "Session: sess-20260314-0930-x7k2 y",
        &mut ids
    ));
    assert_eq!(
        substitute("bsi close sess-20260314-0930-ag01", &ids),
        "bsi close sess-20260314-0930-x7k2"
    );
    assert_eq!(announced_exit("bsi open x   # exit 3: refused"), 3);
    assert_eq!(announced_exit("bsi status   # who holds what"), 0);
}

/// The commands of the agents' block of docs/agents.md, as the block
/// writes them: every inline span that is a command (`bsi …`,
/// `BSI_SESSION=<id> git commit …`, `eval "$(bsi open …)"`), its
/// placeholders filled in.
fn agent_block_commands() -> Vec<String> {
    let doc = include_str!("../../docs/agents.md");
    let start = doc.find("````markdown\n").expect("the block to paste") + 12;
    let end = start + doc[start..].find("\n````").expect("the block's end");
    // Spans broken over two lines are one command.
    let text: String = doc[start..end]
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    text.split('`')
        .skip(1)
        .step_by(2)
        // `the first `bsi open` prints …` names the command in a sentence.
        .filter(|s| *s != "bsi open")
        .filter(|s| {
            s.starts_with("bsi ")
                || s.starts_with("eval \"$(bsi ")
                || (s.starts_with("BSI_SESSION=<id> ") && s.len() > "BSI_SESSION=<id> ".len())
        })
        .map(String::from)
        .collect()
}

/// A command of the block with its placeholders filled in for this brain.
fn fill_in(command: &str, id: &str) -> String {
    let mut c = command.to_string();
    for (from, to) in [
        ("path/one.md path/two.md", "README.md agents/alice.md"),
        ("path/file.md#Heading", "projets/plan.md#Risks"),
        ("path/file.md#", "projets/plan.md#"),
        ("path/file.md", "README.md"),
        ("path/folder/", "agents/"),
        ("<your-name>", "claude"),
        ("<task>", "tidy the notes"),
        ("<message>", "the notes"),
        ("<scope>", "README.md"),
        ("<command>", "open"),
        ("SCOPE", "'projets/plan.md#Goals'"),
        ("…", "--agent claude"),
        ("<id>", id),
    ] {
        c = c.replace(from, to);
    }
    c
}

/// Point 1 of the first hour: the agents' instructions work as written.
/// Every command form of the block runs, in the block's order, in a clone
/// with a remote and the commit guard, as one agent following the rules
/// would (its session id from the first `bsi open`, its name in
/// `BSI_AGENT` as the block allows); none is a usage error, each ends as
/// the block says.
#[test]
fn every_command_of_the_agents_block_runs_as_written() {
    let commands = agent_block_commands();
    assert!(commands.len() >= 15, "{commands:#?}");
    for must in [
        "bsi watchdog",
        "bsi status",
        "bsi renew <id> --agent <your-name> --ttl 2h",
        "bsi close <id> --agent <your-name>",
        "bsi sync",
        "bsi verify",
    ] {
        assert!(
            commands.iter().any(|c| c == must),
            "{must} not in {commands:#?}"
        );
    }
    let m = crate::common::Machines::new();
    let b = &m.a;
    b.bsi(&["hook", "install"]).ok();
    // Headings the block's section commands name (written before they
    // are claimed, as the block says).
    let plan = std::fs::read_to_string(b.path().join("projets/plan.md")).expect("plan");
    b.write(
        "projets/plan.md",
        &format!("{plan}\n## Old name\n\nold\n\n## New name\n\nnew\n\n## New heading\n\nx\n"),
    );
    let mut id = String::new();
    for command in &commands {
        if command.contains("#Old name") {
            // The block closes a claim on the old name: the rename it
            // describes started from one.
            let line = fill_in("bsi open \"path/file.md#Old name\" --session <id>", &id);
            assert_eq!(shell(b, &line, &id).1, 0, "{line}");
        }
        if command.contains("bsi commit") {
            b.write("README.md", "# Brain\n\nedited\n");
            b.write("agents/alice.md", "# Alice\n\nedited\n");
        }
        let line = fill_in(command, &id);
        let (out, code) = shell(b, &line, &id);
        let allowed: &[i32] = match command.as_str() {
            "bsi watchdog" => &[0, 4],
            "bsi verify" => &[0, 6],
            _ => &[0],
        };
        assert!(
            allowed.contains(&code),
            "docs/agents.md: `{command}` (run as `{line}`) exited {code}:\n{out}"
        );
        if id.is_empty()
            && let Some(s) = out.lines().find_map(|l| l.strip_prefix("Session: "))
        {
            id = s.trim().to_string();
        }
    }
    assert!(!id.is_empty(), "no session was opened");
    // The commit the block shows landed, with its two files only.
    let files = b.git(&["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(files.trim(), "README.md\nagents/alice.md");
}

/// Runs one line in bash in `b`, with `BSI_SESSION` (once known) and
/// `BSI_AGENT` set: its output (stdout then stderr) and exit code.
fn shell(b: &Brain, line: &str, id: &str) -> (String, i32) {
    let mut cmd = Command::new("bash");
    clean_env(&mut cmd, b.path());
    let bin_dir = bin().parent().expect("bin dir").to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.current_dir(b.path())
        .env("PATH", path)
        .env("BSI_NOW", &b.now)
        .env("BSI_AGENT", "claude")
        .args(["-c", line]);
    if !id.is_empty() {
        cmd.env("BSI_SESSION", id);
    }
    let out = cmd.output().expect("run bash");
    (
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        out.status.code().unwrap_or(-1),
    )
}
