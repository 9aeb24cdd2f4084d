//! `bsi completions` and `bsi man`: generated from the command line definition.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::Cli;
use crate::error::{Error, Result, exit};

/// Prints the completion script of `shell` on stdout.
pub(crate) fn completions(shell: clap_complete::Shell) -> Result<u8> {
    let mut cmd = Cli::command();
    let mut buf: Vec<u8> = Vec::new();
    clap_complete::generate(shell, &mut cmd, "bsi", &mut buf);
    write_stdout(&buf)
}

/// Prints the man page, in roff, on stdout.
pub(crate) fn man() -> Result<u8> {
    let mut buf: Vec<u8> = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut buf)
        .map_err(|e| Error::io("cannot render the man page", e))?;
    write_stdout(&buf)
}

fn write_stdout(bytes: &[u8]) -> Result<u8> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| Error::io("cannot write to stdout", e))?;
    Ok(exit::OK)
}
