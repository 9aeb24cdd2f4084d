//! `bsi recover [SESSION]`: a session's uncommitted lines put back into
//! the work tree from the copy bsi keeps of them
//! ([`bsi_core::api::keep::recover`]).

use super::Ctx;
use crate::cli::RecoverArgs;
use crate::output;
use bsi_core::api::keep;
use bsi_core::error::{Result, exit};

pub(crate) fn run(ctx: &Ctx, args: &RecoverArgs) -> Result<u8> {
    let session = ctx.session(args.session.as_ref())?.into_string();
    let (brain, settings) = ctx.open()?;
    let remote = settings.remote()?;
    let view = brain.view(remote.as_ref())?;
    let done = keep::recover(&brain, &view.registry, &session)?;
    let out = ctx.out();
    out.json(|| output::RecoverJson::new(&session, &done, ctx.now))?;
    out.show(|w| {
        for line in output::recover_lines(&session, &done, ctx.now) {
            writeln!(w, "{line}")?;
        }
        Ok(())
    })?;
    Ok(exit::OK)
}
