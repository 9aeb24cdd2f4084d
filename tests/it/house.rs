//! The shape of the code, kept by tests: the rooms of `src/` import each
//! other without a circle, a command file never calls another command
//! file, and one room writes shell words.

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
        .filter(|n| n != "mod" && n != "views")
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
