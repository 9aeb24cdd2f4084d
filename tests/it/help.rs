//! The full `--help` of bsi and of every subcommand, snapshotted so any change
//! to the interface shows in review.

use crate::common::{Brain, snapshot};

/// Subcommand names listed under `Commands:` in `bsi --help`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

#[test]
fn help_of_every_command_matches_its_snapshot() {
    let b = Brain::bare_repo();
    let top = b.bsi(&["--help"]);
    top.ok();
    snapshot("help/bsi.txt", &top.stdout);
    let cmds = subcommands(&top.stdout);
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
    ] {
        assert!(cmds.iter().any(|c| c == want), "{want} not in {cmds:?}");
    }
    for c in &cmds {
        let r = b.bsi(&[c, "--help"]);
        r.ok();
        snapshot(&format!("help/bsi-{c}.txt"), &r.stdout);
    }
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
