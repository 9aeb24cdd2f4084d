//! `bsi close`: a session ends its claims; they move to the history.

use std::io::Write;

use serde::Serialize;

use super::verify::{self, VerifyOutcome};
use super::{Ctx, Ending, WriteCommand, check_owner, opt_scope, scopes_summary, session_claims};
use crate::error::{Error, Result, exit};
use crate::git::Oid;
use crate::output::{self, ClaimJson};
use crate::publish::Plan;
use crate::registry::{Claim, HistoryEntry, Registry, Status, TableKind};
use crate::scope::Scope;
use crate::store::Brain;
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
    json: bool,
) -> Result<u8> {
    let w = WriteCommand::open(ctx)?;
    let session = ctx.session(session)?.into_string();
    let scope = opt_scope(&w.brain, ctx, scope)?;
    let caller = ctx.agent(agent, &w.settings.config)?;
    w.run(
        false,
        |reg| {
            plan(
                ctx,
                &w.brain,
                reg,
                &session,
                scope.as_ref(),
                (&caller, force),
            )
        },
        |(targets, verified), commit| report(ctx, &session, &targets, &verified, commit, json),
    )
}

/// The claims closed (and whether each was stale), and what `verify` said.
type Closing = (Vec<(Claim, bool)>, VerifyOutcome);

/// The session's claims (those on `scope`) move to the history, with what
/// `verify` says of its changes.
fn plan(
    ctx: &Ctx,
    brain: &Brain,
    reg: &Registry,
    session: &str,
    scope: Option<&Scope>,
    (caller, force): (&str, bool),
) -> Result<Plan<Closing>> {
    let (active, stale) = session_claims(reg, session, scope);
    if active.is_empty() && stale.is_empty() {
        return Err(Error::NotFound(match scope {
            Some(s) => format!("session {session} holds no claim on {s}"),
            None => format!("session {session} holds no claim"),
        }));
    }
    let targets: Vec<(Claim, bool)> = active
        .iter()
        .map(|&i| (reg.active_claims[i].clone(), false))
        .chain(stale.iter().map(|&i| (reg.stale_claims[i].clone(), true)))
        .collect();
    check_owner(
        &targets.iter().map(|(c, _)| c).collect::<Vec<_>>(),
        caller,
        force,
        "close",
    )?;
    // Alert, never block: an overflow goes into the history note; a
    // clean session closes as plain `completed`.
    let verified = match verify::verify(brain, reg, session, false) {
        Ok(report) => report.outcome(),
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "bsi: warning: the changes of {session} could not be verified: {e}"
            );
            VerifyOutcome::NotVerified
        }
    };
    let note = verified.history_note();
    let mut edited: Registry = reg.clone();
    for &i in &active {
        edited.remove_claim(TableKind::Active, i);
    }
    for &i in &stale {
        edited.remove_claim(TableKind::Stale, i);
    }
    for (c, _) in &targets {
        edited.add_history(&HistoryEntry::closing(c, ctx.now, Status::Completed, &note));
    }
    let message = super::commit_message_by(
        "close",
        &[session],
        &scopes_summary(targets.iter().map(|(c, _)| &c.scope)),
        Some(caller),
    );
    Ok(Plan::Write {
        text: edited.render(),
        message,
        report: (targets, verified),
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
