//! `bsi commit -m MSG [PATH…]`: the session's own lines of the work tree
//! committed, every other session's left in place ([`bsi_core::api::commit`]).

use super::Ctx;
use crate::agents;
use crate::cli::CommitArgs;
use crate::output;
use bsi_core::api::commit::{self, Request};
use bsi_core::error::{Result, exit};

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
    out.json(|| output::CommitJson::new(&req.session, &done))?;
    out.show(|w| {
        for line in output::commit_lines(&req.session, &done) {
            writeln!(w, "{line}")?;
        }
        Ok(())
    })?;
    Ok(if done.commit.is_some() {
        exit::OK
    } else {
        exit::ERROR
    })
}
