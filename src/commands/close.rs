//! `bsi close`: a session ends its claims; they move to the history.

use std::io::Write;

use super::{Ctx, Ending, WriteCommand, opt_scope};
use crate::audit::VerifyOutcome;
use crate::claims::scopes_summary;
use crate::core;
use crate::error::{Error, Result, exit};
use crate::git::Oid;
use crate::output::{self, ClaimJson};
use crate::registry::{Claim, Status};
use crate::values::{AgentName, SessionId};
use crate::words::command_line;

pub(crate) fn run(
    ctx: &Ctx,
    session: Option<&SessionId>,
    scope: Option<&str>,
    force: bool,
    agent: Option<&AgentName>,
) -> Result<u8> {
    let json = ctx.json();
    let w = WriteCommand::open(ctx)?;
    let session = ctx.session(session)?.into_string();
    let scope = opt_scope(&w.brain, ctx, scope)?;
    let actor = core::Actor {
        agent: ctx.agent(agent, &w.settings.config)?.into_string(),
        session,
        drawn: false,
    };
    let closed = core::close::close(&w.site(), &actor, scope.as_ref(), force)?;
    if let Some(why) = &closed.unverified {
        let _ = writeln!(std::io::stderr(), "bsi: warning: {why}");
    }
    w.report(closed.applied, |(targets, verified), commit| {
        report(ctx, &actor.session, &targets, &verified, commit, json)
    })
}

fn report(
    ctx: &Ctx,
    session: &str,
    targets: &[(Claim, bool)],
    verified: &VerifyOutcome,
    commit: Option<Oid>,
    json: bool,
) -> Result<Ending> {
    if json {
        output::print_json(&output::ClosedJson {
            session: session.to_string(),
            closed: targets
                .iter()
                .map(|(c, st)| ClaimJson::new(c, *st, ctx.now))
                .collect(),
            status: Status::Completed.as_str(),
            verify: verified.to_string(),
            commit: commit.map(|c| c.to_string()),
        })?;
    } else {
        let mut out = ctx.out();
        writeln!(
            out,
            "Claim closed — {session} ({})",
            scopes_summary(targets.iter().map(|(c, _)| &c.scope))
        )
        .map_err(Error::output)?;
        if let VerifyOutcome::Overflow { .. } = verified {
            writeln!(
                out,
                "{verified} outside its claims — `{}` lists them",
                command_line(["bsi", "verify", session])
            )
            .map_err(Error::output)?;
        }
        super::note_commit(ctx, &mut out, commit)?;
        writeln!(
            out,
            "Next: `bsi status` shows what the other sessions still hold; `bsi open SCOPE` starts new work."
        ).map_err(Error::output)?;
    }
    Ok(Ending::Landed(exit::OK))
}
