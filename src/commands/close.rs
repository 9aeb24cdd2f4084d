//! `bsi close`: a session ends its claims; they move to the history.

use std::io::Write;

use serde::Serialize;

use super::{Ctx, Ending, WriteCommand, opt_scope};
use crate::audit::{self, VerifyOutcome};
use crate::claims::close::plan;
use crate::claims::{scopes_summary, session_claims};
use crate::error::{Error, Result, exit};
use crate::git::Oid;
use crate::output::{self, ClaimJson};
use crate::registry::{Claim, Status};
use crate::scope::Scope;
use crate::values::{AgentName, SessionId};
use crate::words::command_line;

#[derive(Serialize)]
struct Closed {
    session: String,
    closed: Vec<ClaimJson>,
    status: &'static str,
    /// What `bsi verify` said: `clean`, `overflow: …` or `not verified`.
    verify: String,
    /// The registry commit; null when nothing was written.
    commit: Option<String>,
}

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
    let caller = ctx.agent(agent, &w.settings.config)?;
    // The session's audit, read before the lock from the registry as this
    // clone sees it: alert, never block.
    let verified = audit_session(&w, &session, scope.as_ref());
    w.run(
        false,
        |reg| {
            plan(
                reg,
                &session,
                scope.as_ref(),
                (&caller, force),
                (verified, ctx.now),
            )
        },
        |(targets, verified), commit| report(ctx, &session, &targets, &verified, commit, json),
    )
}

/// What the audit of the session says of its changes; a failure to read
/// them is said and recorded as `not verified`.
fn audit_session(w: &WriteCommand<'_>, session: &str, scope: Option<&Scope>) -> VerifyOutcome {
    let remote = w.settings.remote().ok().flatten();
    let audited = w.brain.view(remote.as_ref()).and_then(|view| {
        let (active, stale) = session_claims(&view.registry, session, scope);
        if active.is_empty() && stale.is_empty() {
            // Nothing to close: the plan says so.
            return Ok(VerifyOutcome::Clean);
        }
        audit::verify(&w.brain, &view.registry, session, false).map(|r| r.outcome())
    });
    audited.unwrap_or_else(|e| {
        let _ = writeln!(
            std::io::stderr(),
            "bsi: warning: the changes of {session} could not be verified: {e}"
        );
        VerifyOutcome::NotVerified
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
        output::print_json(&Closed {
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
