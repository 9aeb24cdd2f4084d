//! The full `--help` of bsi and of every subcommand at every depth (`bsi
//! hook edit` as well as `bsi hook`), snapshotted so any change to the
//! interface shows in review.

use std::collections::BTreeSet;

use crate::common::{Brain, SNAPSHOTS, snapshot};

/// Subcommand names listed under `Commands:` in `bsi --help`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        // A description wrapped to the next line is indented deeper.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

/// The path of every subcommand under `cmd`, at any depth, parents before
/// their children (`["hook"]`, then `["hook", "edit"]`). The `help`
/// subcommand clap adds is left out: its help is clap's, tested in hints.
fn command_paths(cmd: &clap::Command, above: &[String], out: &mut Vec<Vec<String>>) {
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        let mut path = above.to_vec();
        path.push(sub.get_name().to_string());
        out.push(path.clone());
        command_paths(sub, &path, out);
    }
}

/// Every command's help is its snapshot `help/bsi-<path>.txt`; the
/// commands are found by walking bsi's command tree, so a new subcommand
/// at any depth fails here until its help is reviewed, and the help
/// directory holds exactly these files (a removed command's help is
/// found too).
#[test]
fn help_of_every_command_matches_its_snapshot() {
    let b = Brain::bare_repo();
    let top = b.bsi(&["--help"]);
    top.ok();
    snapshot("help/bsi.txt", &top.stdout);

    let tree = bsi::cli::command();
    let mut paths = Vec::new();
    command_paths(&tree, &[], &mut paths);
    // The tree walked is the binary's: its first level is what `bsi --help`
    // lists (hidden commands aside).
    let listed: BTreeSet<String> = tree
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .map(|s| s.get_name().to_string())
        .collect();
    assert_eq!(
        subcommands(&top.stdout)
            .into_iter()
            .collect::<BTreeSet<_>>(),
        listed
    );
    for want in [
        "init",
        "open",
        "close",
        "renew",
        "watchdog",
        "release",
        "status",
        "whoami",
        "log",
        "completions",
        "man",
        "hook edit",
        "hook install",
        "agent install",
    ] {
        assert!(
            paths.iter().any(|p| p.join(" ") == want),
            "{want} not in {paths:?}"
        );
    }

    let mut files = BTreeSet::from(["bsi.txt".to_string()]);
    for path in &paths {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        let file = format!("bsi-{}.txt", args.join("-"));
        assert!(files.insert(file.clone()), "two commands give {file}");
        args.push("--help");
        let r = b.bsi(&args);
        r.ok();
        assert!(
            r.stdout.contains(&format!("Usage: bsi {}", path.join(" "))),
            "not the help of bsi {}:\n{}",
            path.join(" "),
            r.stdout
        );
        snapshot(&format!("help/{file}"), &r.stdout);
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(SNAPSHOTS)
        .join("help");
    let on_disk: BTreeSet<String> = std::fs::read_dir(&dir)
        .expect("read the help snapshots")
        .map(|e| {
            e.expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| !n.ends_with(crate::common::PENDING))
        .collect();
    let orphans: Vec<&String> = on_disk.difference(&files).collect();
    assert!(
        orphans.is_empty(),
        "help snapshots of no command (delete them): {orphans:?}"
    );
}

#[test]
fn short_help_and_version() {
    let b = Brain::bare_repo();
    b.bsi(&["-h"])
        .ok()
        .stdout_has("Usage: bsi [OPTIONS] <COMMAND>");
    b.bsi(&["--version"])
        .ok()
        .stdout_has(concat!("bsi ", env!("CARGO_PKG_VERSION")));
}
