//! bsi, the Brain Session Index: claims on the parts of a git-tracked markdown
//! repository (a "brain"), so parallel work sessions do not collide.
//!
//! This crate holds the doors: the command line, git's hooks, the agent
//! tools' hooks, the MCP server, and what renders their answers. Every rule
//! lives in the `bsi_core` crate, which they call in process.
//!
//! # The rooms, and what each may call
//!
//! Each room's last column is every other room its code names, of this
//! crate (`crate::`) or of the core (`bsi_core::`): no more, no less
//! (`tests/it/house.rs` reads the paths of each room's files and checks
//! this table against them). Every room may name the core's `error` types;
//! the column lists the rest. The core's IO rooms are private to it: a
//! door names them only through what its facade re-exports
//! (`bsi_core::api::store::Brain`, written `api::store` here), so the
//! compiler keeps the doors from reaching around it.
//!
//! | room | holds | pure? | may call |
//! |---|---|---|---|
//! | [`run`] | the entry (`lib.rs`, `main.rs`): the agent events' fast path, clap, the error edge | — | [`cli`], [`commands`], [`hints`], [`output`], [`steps`], [`terminal`], `ttl`, `values`, `words` |
//! | [`cli`] | clap definitions, and the tools' names from [`agents`]'s list | yes | [`agents`], `values` |
//! | [`commands`] | `Ctx` (the environment, read once), the one dispatch, one thin file per command: settings → request → snapshot → plan → publish → report; `views` for what read commands share | wiring, IO | every room; never another command file |
//! | [`tree`] | the tree view | yes | [`output`], `scope` |
//! | [`page`] | the live page of the brain as HTML (`bsi serve`, `status --html`), everything from people escaped | yes | `page`, `scope` |
//! | [`output`] | human and JSON shapes, written to the writer they are given (`write_json`); where a write landed, in the words every door gives it (`landing_lines`) | yes | [`hints`], [`steps`], `api`, `api::publish`, `registry`, `scope`, `ttl`, `words` |
//! | [`githooks`] | installing git's hooks (chaining the ones already there); their scripts, which decide in the shell when bsi need not start | IO | [`doors`], `trailer`, `words` |
//! | [`hook_managers`] | where this work tree's hooks are (husky, lefthook, the pre-commit framework, a relative `core.hooksPath`), whether bsi's are reached, installing into each layout | IO, no process | `api::git`, [`githooks`], `words` |
//! | [`doors`] | what git hands the hooks besides `git commit`'s: reference-transaction updates, the mark a passed pre-commit leaves, the operation under way | parse pure / IO | `api::git` |
//! | [`agents`] | the agent tools: event parsing and answers, settings install, the doctor, the session map | parse/answer pure; install, doctor and session map IO | `api::git`, `api::platform`, `guard`, `values`, `words` |
//! | [`hints`] | what to do next about an error as typed steps (what each is for, its command as words, who may take it), attached where the error is reported | yes | `error`, `next`, `registry`, `scope`, `values`, `words` |
//! | [`steps`] | the core's next steps and an error's hint in each medium's words: a shell line, JSON data, an MCP call, a person's step labelled | yes | [`hints`], `next`, `words` |
//! | [`terminal`] | the terminal's width, its keys for the live view | IO | — |
//!
//! No command file calls another, nothing outside [`commands`] reaches into
//! a command file, and the environment is read in `commands::Ctx` (and the
//! few places `tests/it/house.rs` names, with why): that test checks them
//! all.

pub mod agents;
pub mod cli;
pub mod commands;
pub mod doors;
pub mod githooks;
pub mod hints;
pub mod hook_managers;
pub mod output;
pub mod page;
pub mod steps;
pub mod terminal;
pub mod tree;

pub use bsi_core::{Error, Result, exit};

use std::ffi::OsString;
use std::io::Write;

use bsi_core::words::Here;
use clap::FromArgMatches;

/// Runs bsi with these arguments and returns the process exit code. Errors
/// are printed on stderr as what happened, then what to do next.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    if let Some(code) = commands::agent_event_fast_path(&args) {
        return code;
    }
    // Help is wrapped at the width of the screen it is written to, by the
    // rule of every view (`COLUMNS`, the terminal, else 80).
    let columns = std::env::var("COLUMNS").ok();
    let width = crate::terminal::screen_width(output::columns(columns.as_deref()));
    // An error and its hint fit a screen as every sentence does; in a pipe
    // nothing is cut.
    let fit = output::columns(columns.as_deref()).or_else(crate::terminal::terminal_width);
    let parsed = wrapped(cli::command(), width)
        .try_get_matches_from(&args)
        .and_then(|m| cli::Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            if let Some(code) = agent_hook_usage_error(&args, &e) {
                return code;
            }
            let shell = args.iter().any(|a| a == "--shell");
            // `--shell --json` is refused (they conflict); stdout then gets
            // the `(exit N)` an `eval` needs, not a JSON document before it.
            let json = !shell && args.iter().any(|a| a == "--json");
            // A session id, an agent or a TTL refused by its type: the same
            // message, hint and JSON document as any other error of bsi.
            let code = if let Some(bad) = refused_value(&e).or_else(|| cli::own_usage_error(&e)) {
                let verbose = args.iter().any(|a| a == "-v" || a == "--verbose");
                report_at(&bad, &Here::root(), (json, verbose), fit)
            } else if is_help(&e) {
                let _ = e.print();
                return exit::OK;
            } else {
                if json {
                    // The document every failed --json run prints; clap's
                    // own words, with its tips, still go to stderr.
                    let doc = output::ErrorJson::of(&Error::Usage(clap_message(&e)));
                    let _ = output::write_json(&mut std::io::stdout().lock(), &doc);
                }
                let _ = e.print();
                exit::USAGE
            };
            if shell {
                shell_exit(code);
            }
            return code;
        }
    };
    let json = cli.wants_json();
    let shell = cli.wants_shell();
    let verbose = cli.verbose;
    let code = match commands::run(cli) {
        Ok(code) => code,
        Err(failed) => report_at(&failed.0, &failed.1, (json, verbose), fit),
    };
    if shell && code != exit::OK {
        shell_exit(code);
    }
    code
}

/// `cmd` and every subcommand under it with their help wrapped at `width`
/// (`bsi help open` renders the subcommand's own).
fn wrapped(cmd: clap::Command, width: usize) -> clap::Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    names.iter().fold(cmd.term_width(width), |cmd, name| {
        cmd.mut_subcommand(name, |s| wrapped(s, width))
    })
}

/// Prints an error: as JSON on stdout with `--json`, as what happened and
/// what to do next on stderr (with `-v`, the errors it comes from in
/// between). Returns its exit code.
///
/// The hint's commands are written for `here`, the directory of the run;
/// on a screen `fit` columns wide, both lines are wrapped to it.
fn report_at(e: &Error, here: &Here, (json, verbose): (bool, bool), fit: Option<usize>) -> u8 {
    if json && !matches!(e, Error::Output(_)) {
        let _ = output::write_json(
            &mut std::io::stdout().lock(),
            &output::ErrorJson::at(e, here),
        );
    }
    let mut err: Box<dyn Write> = match fit {
        Some(width) => Box::new(output::Fitted::prose(std::io::stderr().lock(), width)),
        None => Box::new(std::io::stderr().lock()),
    };
    let _ = writeln!(err, "error: {e}");
    if verbose {
        let _ = err.write_all(bsi_core::error::caused_by(e).as_bytes());
    }
    let _ = writeln!(err, "hint: {}", steps::hint_line(&hints::hint_at(e, here)));
    let _ = err.flush();
    e.code()
}

/// The first line of clap's error, without its `error: `.
fn clap_message(e: &clap::Error) -> String {
    let text = e.render().to_string();
    text.lines()
        .next()
        .and_then(|l| l.strip_prefix("error: "))
        .map_or_else(
            || e.kind().as_str().unwrap_or("usage error").to_string(),
            str::to_string,
        )
}

/// Whether clap stopped to show the help or the version (exit 0).
fn is_help(e: &clap::Error) -> bool {
    matches!(
        e.kind(),
        clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
    )
}

/// The error of a typed value ([`values`]) that clap refused, as bsi's own.
fn refused_value(e: &clap::Error) -> Option<Error> {
    if e.kind() != clap::error::ErrorKind::ValueValidation {
        return None;
    }
    let source = std::error::Error::source(e)?;
    if let Some(bad) = source.downcast_ref::<bsi_core::values::BadValue>() {
        return Some(bad.clone().into());
    }
    source
        .downcast_ref::<bsi_core::ttl::TtlError>()
        .map(|t| Error::Ttl(t.clone()))
}

/// For `eval "$(bsi open … --shell)"`: a run that does not exit 0 prints
/// `(exit N)` on stdout, so the `eval` fails with bsi's code instead of
/// succeeding on an empty string.
fn shell_exit(code: u8) {
    match writeln!(std::io::stdout().lock(), "(exit {code})") {
        // Nobody reads any more: nothing to say to anyone.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => eprintln!("error: cannot write the output: {e}"),
        Ok(()) => {}
    }
}

/// A command line of an agent tool's hook that clap cannot read fails open:
/// the tools take exit 2 (clap's usage error) for "block". Returns the exit
/// code once the tool's fail-open answer is printed.
fn agent_hook_usage_error(args: &[OsString], e: &clap::Error) -> Option<u8> {
    if is_help(e) {
        return None;
    }
    let why = format!(
        "bsi could not read its command line ({})",
        e.kind().as_str().unwrap_or("usage error")
    );
    commands::agent_event_unreadable(args, &why)
}
