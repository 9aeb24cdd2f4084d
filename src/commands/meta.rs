//! `bsi completions`, `bsi man` and `bsi help`: generated from the command
//! line definition.

use std::io::Write;

use crate::cli;
use bsi_core::error::{Error, Result, exit};

/// Prints the completion script of `shell` on stdout.
pub(crate) fn completions(shell: clap_complete::Shell) -> Result<u8> {
    let mut cmd = cli::command();
    let mut buf: Vec<u8> = Vec::new();
    clap_complete::generate(shell, &mut cmd, "bsi", &mut buf);
    write_stdout(&buf)
}

/// Prints the man page, in roff, on stdout.
pub(crate) fn man() -> Result<u8> {
    let mut buf: Vec<u8> = Vec::new();
    clap_mangen::Man::new(cli::command())
        .render(&mut buf)
        .map_err(|e| Error::io("cannot render the man page", e))?;
    write_stdout(&buf)
}

/// Prints the long help of bsi or of the command named by `path`.
pub(crate) fn help(path: &[String], width: usize) -> Result<u8> {
    let mut cmd = cli::command();
    let mut walked = vec!["bsi".to_string()];
    for name in path {
        let Some(sub) = cmd.find_subcommand(name).cloned() else {
            return Err(Error::NoSuchCommand {
                name: name.clone(),
                parent: walked,
            });
        };
        walked.push(name.clone());
        cmd = sub.bin_name(walked.join(" "));
    }
    let text = cmd.term_width(width).render_long_help().to_string();
    write_stdout(text.as_bytes())
}

/// Writes what was asked for on stdout. A failed write is
/// [`Error::Output`], the error of every write to stdout: a reader that
/// closed the pipe (`bsi completions zsh | head -1`) ends the run quietly
/// with success ([`crate::run`]), a full disk says so.
fn write_stdout(bytes: &[u8]) -> Result<u8> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(Error::output)?;
    Ok(exit::OK)
}
