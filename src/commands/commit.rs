//! `bsi commit -m MSG [PATH…]`: the session's own lines of the work tree
//! committed, every other session's left in place ([`bsi_core::api::commit`]).

use serde::Serialize;

use super::Ctx;
use crate::agents;
use crate::cli::CommitArgs;
use bsi_core::api::commit::{self, Committed, Left, Request};
use bsi_core::error::{Result, exit};
use bsi_core::words::command_line;

#[derive(Serialize)]
struct CommitJson<'a> {
    session: &'a str,
    /// The new commit; null when nothing of the session's was there.
    commit: Option<&'a str>,
    files: Vec<FileJson<'a>>,
    left: Vec<LeftJson<'a>>,
}

#[derive(Serialize)]
struct FileJson<'a> {
    path: &'a str,
    /// The whole change of the file, else the session's hunks of it.
    whole: bool,
}

#[derive(Serialize)]
struct LeftJson<'a> {
    path: &'a str,
    lines: Option<&'a str>,
    /// The session holding it; null when it lies in no one's claim.
    holder: Option<&'a str>,
    /// The scope that would make it the session's, when no one holds it.
    claim: Option<String>,
}

pub(crate) fn run(ctx: &Ctx, args: &CommitArgs) -> Result<u8> {
    let session = ctx.session(None)?;
    let (brain, settings) = ctx.open()?;
    // Paths as given, from where the command runs, made the work tree's.
    let paths = args
        .paths
        .iter()
        .filter_map(|p| {
            let abs = agents::clean(&ctx.cwd.join(p));
            if abs == agents::clean(&brain.workdir) {
                Some(String::new())
            } else {
                agents::relative_to(&abs, &brain.workdir)
            }
        })
        .collect();
    let req = Request {
        session: session.to_string(),
        message: args.message.clone(),
        paths,
    };
    let done = commit::own(&ctx.site(&brain, &settings), &req)?;
    let out = ctx.out();
    out.json(|| json(&req.session, &done))?;
    out.show(|w| {
        let Committed {
            commit,
            files,
            left,
        } = &done;
        match commit {
            Some(id) => {
                let named: Vec<String> = files
                    .iter()
                    .map(|f| {
                        if f.whole {
                            f.path.clone()
                        } else {
                            format!("{} (your lines only)", f.path)
                        }
                    })
                    .collect();
                writeln!(
                    w,
                    "Committed {} for {}: {}",
                    &id[..id.len().min(7)],
                    req.session,
                    named.join(", ")
                )?;
            }
            None => writeln!(
                w,
                "Nothing of {}'s to commit: no uncommitted change lies inside its claims. Nothing was written.",
                req.session
            )?,
        }
        if !left.is_empty() {
            writeln!(w, "Left in the work tree, as it is:")?;
            for l in left {
                writeln!(w, "- {}", left_line(l, &req.session))?;
            }
        }
        Ok(())
    })?;
    Ok(if done.commit.is_some() {
        exit::OK
    } else {
        exit::ERROR
    })
}

/// A change left behind, and what would make it the session's.
fn left_line(l: &Left, session: &str) -> String {
    let place = match &l.lines {
        Some(lines) => format!("{} {lines}", l.path),
        None => l.path.clone(),
    };
    match (&l.holder, &l.claim) {
        (Some(h), _) => format!("{place}: {h}'s, inside its claim (it commits them itself)"),
        (None, Some(scope)) => format!(
            "{place}: in no one's claim; to commit it too, claim it (`{}`) and run bsi commit again",
            command_line(["bsi", "open", &scope.to_string(), "--session", session])
        ),
        (None, None) => format!("{place}: in no one's claim"),
    }
}

fn json<'a>(session: &'a str, c: &'a Committed) -> CommitJson<'a> {
    CommitJson {
        session,
        commit: c.commit.as_deref(),
        files: c
            .files
            .iter()
            .map(|f| FileJson {
                path: &f.path,
                whole: f.whole,
            })
            .collect(),
        left: c
            .left
            .iter()
            .map(|l| LeftJson {
                path: &l.path,
                lines: l.lines.as_deref(),
                holder: l.holder.as_deref(),
                claim: l.claim.as_ref().map(ToString::to_string),
            })
            .collect(),
    }
}
