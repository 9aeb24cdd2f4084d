//! bsi, the Brain Session Index: claims on the parts of a git-tracked markdown
//! repository (a "brain"), so parallel work sessions do not collide.
//!
//! Pure rules live in [`scope`], [`ttl`], [`conflict`], [`changes`] (which
//! sections a change touches, from old and new text), [`guard`] (changes
//! against claims), [`trailer`], [`markdown`] (the only pulldown-cmark
//! parser) and [`registry`] (including the row merge of two registries). IO
//! lives in [`store`] (the registry branch, its work-tree copy, the writer
//! lock), [`publish`] (the write protocol: plan, commit, push, retry),
//! [`settings`] (where each setting comes from), [`git`] (the only caller
//! of git2; [`error`] only wraps its error type), [`git_cli`] (the only
//! runner of the `git` command: fetch, push, merge-file), [`platform`]
//! (process checks), [`hooks`] (hook scripts), [`agents`] (the agent tools'
//! hook events, answers and settings), [`resolve`] (the file system view of
//! scopes) and [`wait`] (watching the registry for `bsi open --wait`).
//! [`commands`] ties them together per subcommand.

pub mod agents;
pub mod changes;
pub mod cli;
pub mod commands;
pub mod config;
pub mod conflict;
pub mod error;
pub mod git;
pub mod git_cli;
pub mod guard;
pub mod hooks;
pub mod markdown;
pub mod output;
pub mod platform;
pub mod publish;
pub mod registry;
pub mod resolve;
pub mod scope;
pub mod session;
pub mod settings;
pub mod store;
pub mod trailer;
pub mod tree;
pub mod ttl;
pub mod wait;

pub use error::{Error, Result, exit};

use std::ffi::OsString;
use std::io::Write;

use clap::FromArgMatches;

/// Runs bsi with these arguments and returns the process exit code. Errors
/// are printed on stderr as what happened, then what to do next.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let parsed = cli::command()
        .try_get_matches_from(&args)
        .and_then(|m| cli::Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            if let Some(code) = agent_hook_usage_error(&args, &e) {
                return code;
            }
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    exit::OK
                }
                _ => {
                    if args.iter().any(|a| a == "--shell") {
                        shell_exit(exit::USAGE);
                    }
                    exit::USAGE
                }
            };
        }
    };
    let json = cli.wants_json();
    let shell = cli.wants_shell();
    let code = match commands::run(cli) {
        Ok(code) => code,
        // A reader that closed the pipe (`bsi log | head`) wanted no more:
        // a quiet end, as for any well-behaved filter.
        Err(Error::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => return exit::OK,
        Err(e) => {
            if json && !matches!(e, Error::Output(_)) {
                let _ = output::print_json(&output::ErrorJson::of(&e));
            }
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "error: {e}");
            if let Some(h) = e.hint() {
                let _ = writeln!(err, "hint: {h}");
            }
            e.code()
        }
    };
    if shell && code != exit::OK {
        shell_exit(code);
    }
    code
}

/// For `eval "$(bsi open … --shell)"`: a run that does not exit 0 prints
/// `(exit N)` on stdout, so the `eval` fails with bsi's code instead of
/// succeeding on an empty string.
fn shell_exit(code: u8) {
    if let Err(e) = writeln!(std::io::stdout().lock(), "(exit {code})") {
        eprintln!("error: cannot write the output: {e}");
    }
}

/// A command line of an agent tool's hook that clap cannot read fails open:
/// the tools take exit 2 (clap's usage error) for "block". Returns the exit
/// code once the tool's fail-open answer is printed.
fn agent_hook_usage_error(args: &[OsString], e: &clap::Error) -> Option<u8> {
    if matches!(
        e.kind(),
        clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
    ) {
        return None;
    }
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let kind = commands::agent_hook::kind_in_args(&args)?;
    let why = format!(
        "bsi could not read its command line ({})",
        e.kind().as_str().unwrap_or("usage error")
    );
    let answer = match commands::agent_hook::tool_in_args(&args) {
        Some(tool) => commands::agent_hook::fail_open(tool, kind, &why),
        None => agents::Answer {
            exit_code: exit::OK,
            stdout: String::new(),
            stderr: format!("bsi: {why}; the agent goes on unchecked\n"),
        },
    };
    Some(commands::agent_hook::emit(&answer))
}
