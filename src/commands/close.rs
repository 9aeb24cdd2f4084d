//! `bsi close`: a session ends its claims; they move to the history.

use std::io::Write;

use serde::Serialize;

use super::{Ctx, Ending, WriteCommand, opt_scope};
use crate::cli::CloseArgs;
use crate::output::{self, ClaimJson};
use bsi_core::api;
use bsi_core::api::audit::VerifyOutcome;
use bsi_core::api::git::Oid;
use bsi_core::claims::close::{Closing, Ended, Handed};
use bsi_core::claims::scopes_summary;
use bsi_core::error::{Result, exit};
use bsi_core::registry::{Claim, Status};
use bsi_core::words::command_line;

/// A close's document, with the drift of the claims it closed.
#[derive(Serialize)]
struct WithDrift {
    #[serde(flatten)]
    closed: output::ClosedJson,
    /// The claims closed that commits not of the session changed.
    drift: Vec<super::views::DriftJson>,
    /// The waiters the close granted in the same write.
    handed: Vec<HandedJson>,
}

/// A waiter granted by the close: its session and the claims it holds.
#[derive(Serialize)]
struct HandedJson {
    session: String,
    claims: Vec<ClaimJson>,
}

/// A close repeated: the session's claims were closed before.
#[derive(Serialize)]
struct AlreadyClosed {
    session: String,
    closed: Vec<ClaimJson>,
    /// `already-closed`.
    status: &'static str,
    already_closed: Vec<EndedJson>,
    /// Who acted in the registry commit that ended them, when found.
    by: Option<String>,
    commit: Option<String>,
}

#[derive(Serialize)]
struct EndedJson {
    scope: String,
    agent: String,
    closed: String,
    status: String,
    note: String,
}

pub(crate) fn run(ctx: &Ctx, args: &CloseArgs) -> Result<u8> {
    let CloseArgs {
        session,
        scope,
        force,
        agent,
        ..
    } = args;
    let (session, scope, force, agent) =
        (session.as_ref(), scope.as_deref(), *force, agent.as_ref());
    let w = WriteCommand::open(ctx)?;
    let session = ctx.session(session)?.into_string();
    let scope = opt_scope(&w.brain, ctx, scope)?;
    let actor = ctx.actor(agent, &w.settings.config)?;
    let closed = api::close::close(&w.site(), &actor, &session, scope.as_ref(), force)?;
    if let Some(why) = &closed.unverified {
        let _ = writeln!(ctx.out().plain_err(), "bsi: warning: {why}");
    }
    let session = session.as_str();
    let drift = closed.drift;
    w.report(closed.applied, |closing, commit| match closing {
        Closing::Closed {
            claims,
            verified,
            forced_by,
            handed,
        } => report(
            ctx,
            session,
            (&claims, &verified, forced_by.as_deref()),
            (&drift, &handed),
            commit,
        ),
        Closing::AlreadyClosed(ended) => {
            let by = closed_by(&w, session);
            report_again(ctx, session, &ended, by.as_deref())
        }
    })
}

/// Who acted in the newest registry commit that ended claims of
/// `session` (its agent trailer), read from the registry branch's journal.
fn closed_by(w: &WriteCommand<'_>, session: &str) -> Option<String> {
    let remote = w.settings.remote().ok().flatten();
    let view = w.brain.view(remote.as_ref()).ok()?;
    let tip = view.tip()?;
    let commits = w
        .brain
        .git
        .journal(tip, bsi_core::api::store::BRANCH_FILE, Some(500))
        .ok()?;
    // Each write of a commit several writers shared, apart.
    let writes = commits
        .iter()
        .flat_map(|c| bsi_core::trailer::writes(&c.message));
    writes.map(|w| w.trailers).find_map(|t| {
        let ends = t
            .action
            .as_deref()
            .is_some_and(|a| ["close", "force-close", "release", "force-release"].contains(&a));
        // The session whose claims ended comes first (a close that handed
        // scopes to waiters names them after it).
        (ends && t.sessions.first().is_some_and(|s| s == session))
            .then_some(t.agent)
            .flatten()
    })
}

/// A close repeated: done before, said with when and by whom; exit 0.
fn report_again(ctx: &Ctx, session: &str, ended: &[Ended], by: Option<&str>) -> Result<Ending> {
    let out = ctx.out();
    out.json(|| AlreadyClosed {
        session: session.to_string(),
        closed: Vec::new(),
        status: "already-closed",
        already_closed: ended
            .iter()
            .map(|e| EndedJson {
                scope: e.scope.clone(),
                agent: e.agent.clone(),
                closed: e.closed.clone(),
                status: e.status.clone(),
                note: e.note.clone(),
            })
            .collect(),
        by: by.map(String::from),
        commit: None,
    })?;
    out.say(|w| {
        writeln!(
            w,
            "Already closed — {session} holds no claim any more; nothing to do."
        )?;
        for e in ended {
            let how = match e.status.as_str() {
                "completed" => "closed".to_string(),
                other => other.to_string(),
            };
            let note = if e.note.is_empty() {
                String::new()
            } else {
                format!(" ({})", e.note)
            };
            writeln!(w, "  {} — {how} {}{note}", e.scope, e.closed)?;
        }
        if let Some(by) = by {
            writeln!(w, "Last closed by {by}.")?;
        }
        writeln!(
            w,
            "Next: `bsi status` shows what the other sessions still hold; `bsi open SCOPE` starts new work."
        )
    })?;
    Ok(Ending::Kept(exit::OK))
}

fn report(
    ctx: &Ctx,
    session: &str,
    (targets, verified, forced_by): (&[(Claim, bool)], &VerifyOutcome, Option<&str>),
    (drift, handed): (&[bsi_core::drift::Drift], &[Handed]),
    commit: Option<Oid>,
) -> Result<Ending> {
    let out = ctx.out();
    out.json(|| WithDrift {
        drift: super::views::DriftJson::list(drift),
        handed: handed
            .iter()
            .map(|h| HandedJson {
                session: h.session.clone(),
                claims: ClaimJson::list(h.claims.iter(), false, ctx.now),
            })
            .collect(),
        closed: output::ClosedJson {
            session: session.to_string(),
            closed: targets
                .iter()
                .map(|(c, st)| ClaimJson::new(c, *st, ctx.now))
                .collect(),
            status: Status::Completed.as_str(),
            verify: verified.to_string(),
            forced_by: forced_by.map(String::from),
            commit: commit.map(|c| c.to_string()),
        },
    })?;
    out.say(|w| {
        writeln!(
            w,
            "Claim closed — {session} ({})",
            scopes_summary(targets.iter().map(|(c, _)| &c.scope))
        )?;
        if let Some(by) = forced_by {
            writeln!(
                w,
                "Forced: these were another session's claims; the history records them as closed by {by}."
            )?;
        }
        // The waiters the close let through, granted in its write.
        for h in handed {
            writeln!(
                w,
                "Handed over — {} was waiting for {}: its claim is granted in the same write",
                h.session,
                scopes_summary(h.claims.iter().map(|c| &c.scope))
            )?;
        }
        if let VerifyOutcome::Overflow { .. } = verified {
            writeln!(
                w,
                "{verified} outside its claims — `{}` lists them",
                command_line(["bsi", "verify", session])
            )?;
        }
        // What others changed under the claims closed: the holder's last
        // chance to hear of it.
        super::views::print_drift(w, &out, drift, None)?;
        if !drift.is_empty() {
            writeln!(w, "{}", bsi_core::api::audit::drift_summary(drift, session))?;
        }
        super::note_commit(ctx, w, commit)?;
        writeln!(
            w,
            "Next: `bsi status` shows what the other sessions still hold; `bsi open SCOPE` starts new work."
        )
    })?;
    Ok(Ending::Landed(exit::OK))
}
