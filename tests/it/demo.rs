//! The example day of the README, run on every test run so it cannot rot.

use std::process::Command;

use crate::common::{bin, clean_env};

#[test]
fn the_example_day_runs_and_shows_each_step() {
    let home = crate::common::scratch("bsi-home");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/demo.sh");
    let mut cmd = Command::new("bash");
    clean_env(&mut cmd, home.path());
    let out = cmd
        .arg(script)
        .env("BSI", bin())
        .env("TMPDIR", home.path())
        // Read as on a terminal 100 columns wide (a pipe cuts nothing).
        .env("COLUMNS", "100")
        .output()
        .expect("run the demo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "demo failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    // Everything a command says is on stdout, in order: a refusal's
    // explanation comes before its exit code.
    assert!(stderr.is_empty(), "the demo wrote on stderr:\n{stderr}");
    let refused = stdout
        .find("Claim refused — nothing was written.")
        .expect("a refusal");
    let exit3 = stdout.find("(exit 3)").expect("exit 3");
    assert!(
        refused < exit3,
        "the refusal is not next to its exit code:\n{stdout}"
    );
    let all = stdout.to_string();
    for want in [
        "$ bsi init",
        "Claim opened — agents/, expires 2026-03-14 11:30 +00:00",
        "Session: sess-20260314-0930-pl02",
        // The overlap refused, with the free section proposed.
        "Claim refused — nothing was written.",
        "Free nearby: projets/plan.md#Risks",
        "(exit 3)",
        // Two sessions share one file by sections.
        "Claim opened — projets/plan.md#Risks",
        "│       ├── #Goals  ← sess-20260314-0930-pl02 (codex, 2h left)",
        "│       └── #Risks  ← sess-20260314-0931-rk03 (gemini, 2h left)",
        // The journal shows who acted.
        "open      gemini      sess-20260314-0931-rk03",
        // The watchdog with a later clock.
        "0 active, 2 stale",
        "Now stale: sess-20260314-0930-ag01 agents/",
        "(exit 4)",
        "STALE overdue 30m",
        // A person releases the stale claim.
        "Claim released — sess-20260314-0930-ag01 agents/ → history as released",
        // The journal.
        "bsi: release sess-20260314-0930-ag01 agents/",
        "release   tester@box  sess-20260314-0930-ag01  agents/",
        "| released | tidy the agents |",
    ] {
        assert!(all.contains(want), "demo output lacks {want:?}:\n{all}");
    }
    assert!(!stdout.contains('\x1b'), "colour codes in piped output");
    // The brain was removed at the end.
    let left: Vec<_> = std::fs::read_dir(home.path())
        .expect("read tmp")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("bsi-demo"))
        .collect();
    assert!(left.is_empty(), "the demo left its brain behind");
}

/// The demo runs the bsi on the PATH, and says what to do when there is
/// none: it never builds one behind the reader's back.
#[test]
fn the_example_day_uses_the_installed_bsi_or_says_how_to_get_one() {
    let home = crate::common::scratch("bsi-home");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/demo.sh");
    let run = |path: &str| {
        let mut cmd = Command::new("bash");
        clean_env(&mut cmd, home.path());
        cmd.arg(script)
            .env("PATH", path)
            .env("TMPDIR", home.path())
            .output()
            .expect("run the demo")
    };
    let system = std::env::var("PATH").unwrap_or_default();
    // No bsi anywhere (git, bash and the rest stay on the PATH): exit 1,
    // how to install one, and nothing built.
    let bare: Vec<String> = std::env::split_paths(&system)
        .filter(|d| !d.join("bsi").exists())
        .map(|d| d.display().to_string())
        .collect();
    let none = run(&bare.join(":"));
    let stderr = String::from_utf8_lossy(&none.stderr);
    assert_eq!(none.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no bsi on the PATH: install it (cargo install --locked --path .)"),
        "{stderr}"
    );
    assert!(none.stdout.is_empty());
    // The bsi on the PATH is the one it runs.
    let dir = bin().parent().expect("bin dir").display().to_string();
    let installed = run(&format!("{dir}:{}", bare.join(":")));
    let stdout = String::from_utf8_lossy(&installed.stdout);
    assert!(
        installed.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    assert!(stdout.contains("$ bsi init"), "{stdout}");
    assert!(stdout.contains("Registry created"), "{stdout}");
}
