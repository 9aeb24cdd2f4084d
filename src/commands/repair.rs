//! `bsi repair`: the registry edited by hand, safely. Its text (even one
//! the parser refuses) goes to a file for `$VISUAL` / `$EDITOR`, or comes
//! from `--from FILE`; the result must parse, and it is published by the
//! compare-and-swap of every write: refused when the registry moved since
//! it was read, so no claim written meanwhile is undone. No work tree ever
//! checks the registry branch out.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::Ctx;
use bsi_core::api::publish::{self, Landed};
use bsi_core::api::store::{BRANCH_FILE, Brain, ROOT_FILE};
use bsi_core::claims::commit_message_by;
use bsi_core::error::{Error, Result, exit};
use bsi_core::registry::ParseError;

pub(crate) fn run(ctx: &Ctx, from: Option<&Path>) -> Result<u8> {
    // A brain root recorded badly is mended here, in the same commit.
    let (brain, settings, root_fix) = ctx.open_mending_root()?;
    let read = publish::raw(&brain, &settings, ctx.now)?;
    // Mended meanwhile (another clone's repair, fetched just now): nothing
    // left to put back.
    let root_fix = root_fix.filter(|fix| {
        let at = brain.git.file_at(read.tip, ROOT_FILE).ok().flatten();
        let at = at.map(|b| bsi_core::api::store::parse_root(&String::from_utf8_lossy(&b)));
        let done = match &at {
            None => fix.is_none(),
            Some(Ok(r)) => *r == fix.clone().unwrap_or_default(),
            Some(Err(_)) => false,
        };
        !done
    });
    let (edited, file) = match from {
        Some(path) => (read_text(path)?, path.to_path_buf()),
        None => edit(ctx, &brain, &read.text)?,
    };
    let registry = bsi_core::registry::parse(edited).map_err(|source| {
        if from.is_none() {
            ctx.out().err_line(format_args!(
                "note: your edit is kept in {}: fix it there, then `{}`",
                file.display(),
                bsi_core::words::command_line(["bsi", "repair", "--from", &file.to_string_lossy()])
            ));
        }
        Error::Registry {
            path: file.clone(),
            source,
        }
    })?;
    if registry.text() == read.text && root_fix.is_none() {
        ctx.out()
            .say(|w| writeln!(w, "Nothing changed — the registry is as it was."))?;
        if from.is_none() {
            let _ = std::fs::remove_file(&file);
        }
        return Ok(exit::OK);
    }
    let agent = ctx.agent(None, &settings.config)?;
    let what = match &root_fix {
        None => format!("{BRANCH_FILE} edited by hand"),
        Some(root) => format!(
            "{ROOT_FILE} put back to its first record ({})",
            root.as_deref().unwrap_or(".")
        ),
    };
    let message = commit_message_by("repair", &[], &what, Some(&agent));
    let applied = publish::replace(
        &brain,
        &settings,
        ctx.write_options(false),
        &read,
        registry,
        &message,
        root_fix.as_ref().map(Option::as_deref),
    )?;
    if from.is_none() {
        let _ = std::fs::remove_file(&file);
    }
    let commit = applied.commit.map(|c| c.to_string()[..8].to_string());
    ctx.out().say(|w| {
        if let Some(root) = &root_fix {
            writeln!(
                w,
                "{ROOT_FILE} says {} again, as the registry branch first recorded it.",
                root.as_deref()
                    .map_or_else(|| "the work tree root".to_string(), |r| format!("`{r}`"))
            )?;
        }
        writeln!(
            w,
            "Repaired — {BRANCH_FILE} on branch {} ({}, commit {}).",
            brain.branch,
            match applied.landing.landed {
                Landed::Published => "committed and published",
                _ => "committed",
            },
            commit.unwrap_or_default()
        )
    })?;
    Ok(exit::OK)
}

fn read_text(path: &Path) -> Result<String> {
    let bytes =
        std::fs::read(path).map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    String::from_utf8(bytes).map_err(|_| Error::Registry {
        path: path.to_path_buf(),
        source: ParseError {
            line: 0,
            reason: "the file is not valid UTF-8".into(),
        },
    })
}

/// Writes `text` to a file of the clone's bsi directory, opens the user's
/// editor on it and reads it back.
fn edit(ctx: &Ctx, brain: &Brain, text: &str) -> Result<(String, PathBuf)> {
    let editor = ctx.editor.clone().ok_or(Error::NoEditor)?;
    let dir = brain.git.common_dir().join("bsi");
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    let file = dir.join(format!("repair-{}-{BRANCH_FILE}", std::process::id()));
    std::fs::write(&file, text)
        .map_err(|e| Error::io(format!("cannot write {}", file.display()), e))?;
    // As git runs its editor: through the shell, so EDITOR may hold flags.
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$@\""))
        .arg(&editor)
        .arg(&file)
        .status()
        .map_err(|e| Error::io(format!("cannot run the editor `{editor}`"), e))?;
    if !status.success() {
        return Err(Error::EditorFailed {
            editor,
            status: status.to_string(),
            file,
        });
    }
    Ok((read_text(&file)?, file))
}
