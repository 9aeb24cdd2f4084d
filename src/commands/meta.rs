//! `bsi completions`, `bsi man` and `bsi help`: generated from the command
//! line definition.

use super::Out;
use crate::cli;
use bsi_core::error::{Error, Result, exit};

/// Prints the completion script of `shell` on stdout.
pub(crate) fn completions(out: &Out, shell: clap_complete::Shell) -> Result<u8> {
    let mut cmd = cli::command();
    let mut buf: Vec<u8> = Vec::new();
    clap_complete::generate(shell, &mut cmd, "bsi", &mut buf);
    out.raw(&buf)?;
    Ok(exit::OK)
}

/// Prints the man page, in roff, on stdout.
pub(crate) fn man(out: &Out) -> Result<u8> {
    let mut buf: Vec<u8> = Vec::new();
    clap_mangen::Man::new(cli::command())
        .render(&mut buf)
        .map_err(|e| Error::io("cannot render the man page", e))?;
    out.raw(&buf)?;
    Ok(exit::OK)
}

/// Prints the long help of bsi or of the command named by `path`.
pub(crate) fn help(out: &Out, path: &[String], width: usize) -> Result<u8> {
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
    out.raw(text.as_bytes())?;
    Ok(exit::OK)
}
