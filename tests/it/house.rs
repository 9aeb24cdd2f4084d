//! The shape of the code, kept by tests: the rooms of the two crates (the
//! core, `crates/bsi-core/src/`, and the doors, `src/`) import each other
//! without a circle and as the room tables of their `lib.rs` say, a command
//! file never calls another command file, nothing outside `commands/`
//! reaches into a command file, the environment, the current directory and
//! this program's path are read in `Ctx` (and the few places named here),
//! and one room writes shell words.

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

/// The doors' crate's sources.
fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The core crate's sources.
fn core_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/bsi-core/src")
}

/// Every source file of both crates.
fn all_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    sources(&core_src(), &mut files);
    files
}

/// The top-level room of a file: `claims` for
/// `crates/bsi-core/src/claims/open.rs`; `run` for the doors' `lib.rs` and
/// `main.rs`, `lib` for the core's.
fn room(path: &Path) -> String {
    let (rel, doors) = match path.strip_prefix(src()) {
        Ok(rel) => (rel, true),
        Err(_) => (path.strip_prefix(core_src()).expect("under a src"), false),
    };
    let first = rel.components().next().expect("a component");
    let name = first
        .as_os_str()
        .to_string_lossy()
        .trim_end_matches(".rs")
        .to_string();
    if doors && (name == "lib" || name == "main") {
        "run".to_string()
    } else {
        name
    }
}

/// The rooms a file names: its `crate::` and `bsi_core::` paths, and for
/// the doors' crate root (`run`), the rooms it names as its own modules.
fn named_by(path: &Path) -> BTreeSet<String> {
    let text = code(path);
    let mut named = rooms_named(&text);
    if room(path) == "run" {
        for (room, _) in room_table() {
            let bare = format!("{room}::");
            let found = text.match_indices(&bare).any(|(i, _)| {
                !text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
            });
            if found {
                named.insert(room);
            }
        }
    }
    named
}

#[test]
fn the_rooms_import_each_other_without_a_circle() {
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &all_sources() {
        let from = room(f);
        if from == "lib" || from == "run" {
            continue;
        }
        for to in named_by(f) {
            if to != from {
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
    // A command is a file of `commands/`, or a directory of them (its
    // files call each other: `agent_event/edit.rs` calls
    // `super::common::`).
    let command_of = |f: &Path| -> String {
        let rel = f.strip_prefix(&dir).expect("under commands/");
        let first = rel.components().next().expect("a component");
        first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string()
    };
    let commands: BTreeSet<String> = files
        .iter()
        .map(|f| command_of(f))
        // `views` (what read commands show) and `edits` (an edit's path,
        // for the edit hooks and MCP's `check`) are shared by the doors,
        // not commands.
        .filter(|n| n != "mod" && n != "views" && n != "edits")
        .collect();
    for f in &files {
        if *f == dir.join("mod.rs") {
            continue;
        }
        let me = command_of(f);
        let text = code(f);
        for other in commands.iter().filter(|c| **c != me) {
            for form in [
                format!("super::{other}::"),
                format!("super::{other};"),
                format!("super::{{{other}"),
            ] {
                assert!(
                    !text.contains(&form),
                    "{} (of {me}) calls the command {other} ({form})",
                    f.display()
                );
            }
        }
    }
}

#[test]
fn one_room_writes_shell_words() {
    for f in &all_sources() {
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

/// The core's rooms that do IO: private to the core, named by the doors
/// only through what its facade (`bsi_core::api`) re-exports of them.
const IO_ROOMS: [&str; 9] = [
    "store", "publish", "git", "git_cli", "settings", "audit", "wait", "resolve", "platform",
];

/// The core's IO rooms are private to it: a door cannot name them but
/// through the facade, and the compiler keeps that.
#[test]
fn the_cores_io_rooms_are_private_to_it() {
    let lib = fs::read_to_string(core_src().join("lib.rs")).expect("the core's lib.rs");
    for room in IO_ROOMS {
        assert!(
            lib.lines().any(|l| l == format!("mod {room};")),
            "the core's {room} is not a private module"
        );
        assert!(
            !lib.lines().any(|l| l == format!("pub mod {room};")),
            "the core's {room} is public: the doors would reach it around the facade"
        );
    }
    let public: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';'))
        .collect();
    assert!(public.contains(&"api"), "{public:?}");
}

/// The rooms named at the head of each path of `text` that starts with
/// `crate::` or `bsi_core::` — `crate::git::Git`, each of
/// `crate::{git, store::Brain}` — with the crate roots' re-exports
/// (`crate::Error`) as their room.
fn rooms_named(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    let paths = text
        .match_indices("crate::")
        .filter(|(i, _)| !text[..*i].ends_with("bsi_"))
        .map(|(i, p)| i + p.len())
        .chain(text.match_indices("bsi_core::").map(|(i, p)| i + p.len()));
    for at in paths {
        let rest = &text[at..];
        // What a door may name of an IO room is the core's facade's
        // (`bsi_core::api::store::Brain`): named `api::store`.
        if text[..at].ends_with("bsi_core::")
            && let Some(io) = rest.strip_prefix("api::")
            && let Some(name) = IO_ROOMS
                .iter()
                .find(|r| io.strip_prefix(**r).is_some_and(|t| t.starts_with("::")))
        {
            out.insert(format!("api::{name}"));
            continue;
        }
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

/// The room tables of both crates' `lib.rs`: each room and the rooms it
/// may call, `None` for "every room".
fn room_table() -> BTreeMap<String, Option<BTreeSet<String>>> {
    let lib = fs::read_to_string(src().join("lib.rs")).expect("lib.rs")
        + &fs::read_to_string(core_src().join("lib.rs")).expect("the core's lib.rs");
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
        if cells.len() < 4 || cells[0].starts_with("room") {
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
    let mut calls: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &all_sources() {
        let from = room(f);
        if from == "lib" {
            continue;
        }
        let named = named_by(f);
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
        wrong.push(format!("{room}: in the table, not in the sources"));
    }
    assert!(
        wrong.is_empty(),
        "the room tables of src/lib.rs and crates/bsi-core/src/lib.rs are not true:\n{}",
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
        "use crate::{git::{Git, Oid}, store::Brain, Error};\nlet x = crate::ttl::now();\nuse bsi_core::{api, words::shell_word};",
    );
    assert_eq!(
        named.into_iter().collect::<Vec<_>>(),
        ["api", "error", "git", "store", "ttl", "words"]
    );
    let run = table.get("run").cloned().flatten().expect("run's row");
    assert!(run.contains("commands") && run.contains("cli"), "{run:?}");
}

/// The environment variables read outside `Ctx`, each with why it stays
/// where it is: (file, from the repository's root, variable).
const READ_OUTSIDE_CTX: &[(&str, &str)] = &[
    // Test seams, beside the code they steer: a writer killed at a point,
    // a short wait for the writer lock, a short lease, a process table to
    // show bsi.
    ("crates/bsi-core/src/store/lock.rs", "BSI_FAULT_POINT"),
    ("crates/bsi-core/src/store/lock.rs", "BSI_LOCK_WAIT_MS"),
    // A post's lease short enough for a test to see it renewed.
    ("crates/bsi-core/src/store/lock.rs", "BSI_POST_LEASE_MS"),
    // A waiter renewing its place often enough for a test to see many
    // renewals in a short wait.
    ("crates/bsi-core/src/api/open.rs", "BSI_QUEUE_RENEW_MS"),
    // A waiter renewing just before its lease passes, for a test to see a
    // renewal answer after it.
    ("crates/bsi-core/src/api/open.rs", "BSI_QUEUE_RENEW_LEFT_MS"),
    ("crates/bsi-core/src/platform.rs", "BSI_PROC"),
    // Git's own variables, read where bsi does what git would do with
    // them for the git process whose hook it runs.
    ("crates/bsi-core/src/git.rs", "GIT_OBJECT_DIRECTORY"),
    ("crates/bsi-core/src/git.rs", "GIT_CONFIG_PARAMETERS"),
    // clap's help is wrapped before there is a context.
    ("src/lib.rs", "COLUMNS"),
];

#[test]
fn the_environment_is_read_in_ctx() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut wrong = Vec::new();
    for f in &all_sources() {
        let rel = f
            .strip_prefix(root)
            .expect("under the repository")
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "src/commands/mod.rs" {
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
        // Where bsi runs and what it is: read once, with the rest.
        for read in ["env::current_dir(", "env::current_exe("] {
            if text.contains(read) {
                wrong.push(format!("{rel} reads {read})"));
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
    for f in all_sources().iter().filter(|f| room(f) != "commands") {
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

#[test]
fn nothing_outside_git_names_a_git2_type() {
    let git = core_src().join("git");
    for f in all_sources() {
        if f == core_src().join("git.rs") || f.starts_with(&git) {
            continue;
        }
        assert!(
            !code(&f).contains("git2::"),
            "{} names a git2 type: only crate::git does",
            f.display()
        );
    }
}

#[test]
fn the_core_depends_on_no_door_crate() {
    let manifest =
        fs::read_to_string(core_src().join("../Cargo.toml")).expect("the core's manifest");
    let deps: String = manifest
        .split("[dev-dependencies]")
        .next()
        .expect("the dependencies")
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    for door in ["clap", "rmcp", "tokio", "termios", "crossterm", "termcolor"] {
        assert!(
            !deps.contains(door),
            "bsi-core depends on {door}: the doors' crates belong to bsi"
        );
    }
}
