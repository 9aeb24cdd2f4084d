//! The shape of the code, kept by tests: the rooms of `src/` import each
//! other without a circle and as the room table of `src/lib.rs` says, a
//! command file never calls another command file, nothing outside
//! `commands/` reaches into a command file, the environment is read in
//! `Ctx` (and the few places named here), and one room writes shell words.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).expect("read src") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a source file: without its unit tests and comment lines.
fn code(path: &Path) -> String {
    let text = fs::read_to_string(path).expect("read");
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level room of a file: `claims` for `src/claims/open.rs`.
fn room(path: &Path) -> String {
    let rel = path.strip_prefix(src()).expect("under src");
    let first = rel.components().next().expect("a component");
    first
        .as_os_str()
        .to_string_lossy()
        .trim_end_matches(".rs")
        .to_string()
}

#[test]
fn the_rooms_import_each_other_without_a_circle() {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let from = room(f);
        if from == "lib" || from == "main" {
            continue;
        }
        let text = code(f);
        for (i, _) in text.match_indices("crate::") {
            let to: String = text[i + 7..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !to.is_empty() && to != from {
                deps.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    // Depth-first search for a back edge.
    fn visit(
        at: &str,
        deps: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == at) {
            let mut circle = path[i..].to_vec();
            circle.push(at.to_string());
            return Some(circle);
        }
        if done.contains(at) {
            return None;
        }
        path.push(at.to_string());
        for next in deps.get(at).into_iter().flatten() {
            if let Some(c) = visit(next, deps, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(at.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for start in deps.keys() {
        let circle = visit(start, &deps, &mut Vec::new(), &mut done);
        assert!(
            circle.is_none(),
            "an import circle: {}",
            circle.unwrap_or_default().join(" -> ")
        );
    }
}

#[test]
fn no_command_file_calls_another() {
    let dir = src().join("commands");
    let mut files = Vec::new();
    sources(&dir, &mut files);
    let commands: Vec<String> = files
        .iter()
        .map(|f| f.file_stem().expect("stem").to_string_lossy().into_owned())
        // `views` (what read commands show) and `edits` (an edit's path
        // and decision, for the edit hooks and MCP's `check`) are shared by
        // the doors, not commands.
        .filter(|n| n != "mod" && n != "views" && n != "edits")
        .collect();
    for f in &files {
        let me = f.file_stem().expect("stem").to_string_lossy().into_owned();
        if me == "mod" {
            continue;
        }
        let text = code(f);
        for other in commands.iter().filter(|c| **c != me) {
            for form in [
                format!("super::{other}::"),
                format!("super::{other};"),
                format!("super::{{{other}"),
            ] {
                assert!(
                    !text.contains(&form),
                    "{me}.rs calls the command file {other}.rs ({form})"
                );
            }
        }
    }
}

#[test]
fn one_room_writes_shell_words() {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    for f in &files {
        if f.ends_with("words.rs") {
            continue;
        }
        let text = code(f);
        for sign in ["'\\\\''", "fn shell_quote", "fn sh_quote"] {
            assert!(
                !text.contains(sign),
                "{} quotes shell words itself ({sign}): use words::shell_word",
                f.display()
            );
        }
    }
}

/// The rooms named at the head of each path of `text` that starts with
/// `crate::` — `crate::git::Git`, each of `crate::{git, store::Brain}` —
/// with the crate root's re-exports (`crate::Error`) as their room.
fn rooms_named(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + 7..];
        let names: Vec<String> = if let Some(group) = rest.strip_prefix('{') {
            // The top-level items of the group, up to its closing brace.
            let mut depth = 0;
            let mut items = vec![String::new()];
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => items.push(String::new()),
                    _ if depth == 0 => items.last_mut().expect("an item").push(c),
                    _ => {}
                }
            }
            items.iter().map(|i| ident(i)).collect()
        } else {
            vec![ident(rest)]
        };
        for n in names {
            let room = match n.as_str() {
                "Error" | "Result" | "exit" => "error".to_string(),
                _ => n,
            };
            if !room.is_empty() && room != "self" {
                out.insert(room);
            }
        }
    }
    out
}

/// The room table of `src/lib.rs`: each room and the rooms it may call,
/// `None` for "every room".
fn room_table() -> BTreeMap<String, Option<BTreeSet<String>>> {
    let lib = fs::read_to_string(src().join("lib.rs")).expect("lib.rs");
    let names = |cell: &str| -> BTreeSet<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(|n| n.trim_end_matches(".rs").to_string())
            .collect()
    };
    let mut table = BTreeMap::new();
    for line in lib.lines() {
        let Some(row) = line.strip_prefix("//! | ") else {
            continue;
        };
        let cells: Vec<&str> = row.split(" | ").collect();
        if cells.len() < 4 || cells[0].starts_with("room") || cells[0].contains("main.rs") {
            continue;
        }
        let calls = cells[3].trim_end_matches(" |");
        let may = if calls.starts_with("every room") {
            None
        } else {
            Some(names(calls))
        };
        for room in names(cells[0]) {
            table.insert(room, may.clone());
        }
    }
    table
}

#[test]
fn the_room_table_says_what_each_room_calls() {
    let table = room_table();
    let mut files = Vec::new();
    sources(&src(), &mut files);
    let mut calls: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let from = room(f);
        if from == "lib" || from == "main" {
            continue;
        }
        let named = rooms_named(&code(f));
        let entry = calls.entry(from.clone()).or_default();
        entry.extend(named.into_iter().filter(|r| *r != from && r != "error"));
    }
    let mut wrong = Vec::new();
    for (room, called) in &calls {
        match table.get(room) {
            None => wrong.push(format!("{room}: not in the table")),
            Some(None) => {}
            Some(Some(may)) => {
                let may: BTreeSet<String> = may.iter().filter(|r| *r != "error").cloned().collect();
                let unlisted: Vec<_> = called.difference(&may).collect();
                let unused: Vec<_> = may.difference(called).collect();
                if !unlisted.is_empty() || !unused.is_empty() {
                    wrong.push(format!(
                        "{room}: calls {unlisted:?} the table does not list; lists {unused:?} it does not call"
                    ));
                }
            }
        }
    }
    for room in table.keys().filter(|r| !calls.contains_key(*r)) {
        wrong.push(format!("{room}: in the table, not in src/"));
    }
    assert!(
        wrong.is_empty(),
        "the room table of src/lib.rs is not true:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_room_table_is_read_as_written() {
    let table = room_table();
    assert_eq!(table.get("commands"), Some(&None));
    let git = table.get("git").cloned().flatten().expect("git's row");
    assert_eq!(git.into_iter().collect::<Vec<_>>(), ["git_cli"]);
    assert!(
        table
            .get("scope")
            .cloned()
            .flatten()
            .expect("scope's row")
            .is_empty()
    );
    let named = rooms_named(
        "use crate::{git::{Git, Oid}, store::Brain, Error};\nlet x = crate::ttl::now();",
    );
    assert_eq!(
        named.into_iter().collect::<Vec<_>>(),
        ["error", "git", "store", "ttl"]
    );
}

/// The environment variables read outside `Ctx`, each with why it stays
/// where it is: (file under `src/`, variable).
const READ_OUTSIDE_CTX: &[(&str, &str)] = &[
    // Test seams, beside the code they steer: a writer killed at a point,
    // a short wait for the writer lock, a process table to show bsi.
    ("store/lock.rs", "BSI_FAULT_POINT"),
    ("store/lock.rs", "BSI_LOCK_WAIT_MS"),
    ("platform.rs", "BSI_PROC"),
    // Git's own variables, read where bsi does what git would do with
    // them for the git process whose hook it runs.
    ("git.rs", "GIT_OBJECT_DIRECTORY"),
    ("git.rs", "GIT_CONFIG_PARAMETERS"),
    // clap's help is wrapped before there is a context.
    ("lib.rs", "COLUMNS"),
];

#[test]
fn the_environment_is_read_in_ctx() {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(src())
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "commands/mod.rs" {
            continue;
        }
        let text = code(f);
        for read in ["env::var(", "env::var_os(", "env::vars("] {
            for (i, _) in text.match_indices(read) {
                let arg = &text[i + read.len()..];
                let var: String = arg
                    .strip_prefix('"')
                    .map(|a| a.chars().take_while(|c| *c != '"').collect())
                    .unwrap_or_default();
                if !READ_OUTSIDE_CTX.contains(&(rel.as_str(), var.as_str())) {
                    wrong.push(format!(
                        "{rel} reads {}",
                        if var.is_empty() {
                            arg.chars().take(30).collect()
                        } else {
                            var
                        }
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the environment is read outside Ctx (src/commands/mod.rs): read it there and hand it down\n{}",
        wrong.join("\n")
    );
}

#[test]
fn nothing_outside_commands_reaches_into_a_command_file() {
    let mut command_files = Vec::new();
    sources(&src().join("commands"), &mut command_files);
    let stems: Vec<String> = command_files
        .iter()
        .map(|f| f.file_stem().expect("stem").to_string_lossy().into_owned())
        .filter(|n| n != "mod")
        .collect();
    let mut files = Vec::new();
    sources(&src(), &mut files);
    for f in files.iter().filter(|f| room(f) != "commands") {
        let text = code(f);
        for stem in &stems {
            let path = format!("commands::{stem}::");
            assert!(
                !text.contains(&path),
                "{} reaches into the command file {stem}.rs ({path}): give `commands` an entry for it",
                f.display()
            );
        }
    }
}
