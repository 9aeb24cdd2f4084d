//! `bsi release`: a person frees a stale claim (or, forced, an active one).

use std::io::Write;

use serde::Serialize;

use super::{Ctx, Ending, WriteCommand, opt_scope, scopes_summary, session_claims};
use crate::error::{Error, Result, exit};
use crate::git::Oid;
use crate::output::{self, ClaimJson};
use crate::publish::Plan;
use crate::registry::{Claim, HistoryEntry, Registry, Status, TableKind};
use crate::scope::Scope;
use crate::values::{BadValue, SessionId};

#[derive(Serialize)]
struct Released {
    session: String,
    released: Vec<ClaimJson>,
    dry_run: bool,
    /// The registry commit; null for a preview.
    commit: Option<String>,
}

/// What `bsi release` is asked for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Request<'a> {
    /// The session, as written on the command line (see below).
    pub(crate) session: &'a str,
    /// `--scope`: only this scope.
    pub(crate) scope: Option<&'a str>,
    /// `--confirm`: release; without it, a preview.
    pub(crate) confirm: bool,
    /// `--force`: active claims too.
    pub(crate) force: bool,
}

pub(crate) fn run(ctx: &Ctx, req: Request<'_>, json: bool) -> Result<u8> {
    let Request {
        session,
        scope,
        confirm,
        force,
    } = req;
    // An id bsi would not hand out can still be in the registry (edited by
    // hand, like `s1 x`): such rows are released by their id as written;
    // the rule of session ids applies to an id the registry lacks.
    let rule = SessionId::parse(session).map(|_| ());
    if session.trim().is_empty() || session.chars().any(char::is_control) {
        rule.clone()?;
    }
    let w = WriteCommand::open(ctx)?;
    let scope = opt_scope(&w.brain, ctx, scope)?;
    let by = ctx.agent(None, &w.settings.config)?;
    let how = How { confirm, force };
    w.run(
        false,
        |reg| plan(ctx, reg, (session, &rule), scope.as_ref(), how, &by),
        |targets, commit| report(ctx, session, scope.as_ref(), how, targets, commit, json),
    )
}

/// `--confirm` and `--force`.
#[derive(Clone, Copy)]
struct How {
    confirm: bool,
    force: bool,
}

/// The session's stale claims (and, forced, its active ones) on `scope`
/// move to the history; without `--confirm`, only what would move.
fn plan(
    ctx: &Ctx,
    reg: &Registry,
    (session, rule): (&str, &Result<(), BadValue>),
    scope: Option<&Scope>,
    How { confirm, force }: How,
    by: &str,
) -> Result<Plan<Vec<(Claim, Status)>>> {
    let (active, stale) = session_claims(reg, session, scope);
    if active.is_empty() && stale.is_empty() {
        rule.clone()?;
        return Err(Error::NotFound(format!(
            "session {session} holds no claim{}",
            match &scope {
                Some(s) => format!(" on {s}"),
                None => String::new(),
            }
        )));
    }
    if !active.is_empty() && !force {
        let list: Vec<&Claim> = active.iter().map(|&i| &reg.active_claims[i]).collect();
        return Err(Error::Refused {
what: format!(
            "{session} still has active claims ({}); release frees stale claims",
            scopes_summary(list.iter().map(|c| &c.scope))
        ),
hint: "ask the session to close, wait for the watchdog to mark them stale, release one stale scope with --scope, or add --force to free active claims as well".into(),
});
    }
    let targets: Vec<(Claim, Status)> = stale
        .iter()
        .map(|&i| (reg.stale_claims[i].clone(), Status::Released))
        .chain(
            active
                .iter()
                .map(|&i| (reg.active_claims[i].clone(), Status::ForceReleased)),
        )
        .collect();

    if !confirm {
        return Ok(Plan::Keep(targets));
    }
    let mut edited: Registry = reg.clone();
    for &i in &active {
        edited.remove_claim(TableKind::Active, i);
    }
    for &i in &stale {
        edited.remove_claim(TableKind::Stale, i);
    }
    for (c, s) in &targets {
        edited.add_history(&HistoryEntry::closing(c, ctx.now, *s, ""));
    }
    let action = if active.is_empty() {
        "release"
    } else {
        "force-release"
    };
    let message = super::commit_message_by(
        action,
        &[session],
        &scopes_summary(targets.iter().map(|(c, _)| &c.scope)),
        Some(by),
    );
    Ok(Plan::Write {
        text: edited.render(),
        message,
        report: targets,
    })
}

fn report(
    ctx: &Ctx,
    session: &str,
    scope: Option<&Scope>,
    How { confirm, force }: How,
    targets: Vec<(Claim, Status)>,
    commit: Option<Oid>,
    json: bool,
) -> Result<Ending> {
    let released: Vec<ClaimJson> = targets
        .iter()
        .map(|(c, s)| ClaimJson::new(c, *s == Status::Released, ctx.now))
        .collect();
    if !confirm {
        // A preview: nothing written, nothing wrong.
        let scope = scope.map(ToString::to_string);
        let mut words = vec!["bsi", "release", session, "--confirm"];
        if let Some(s) = &scope {
            words.extend(["--scope", s]);
        }
        if force {
            words.push("--force");
        }
        let again = crate::words::command_line(words);
        if json {
            output::print_json(&Released {
                session: session.to_string(),
                released,
                dry_run: true,
                commit: None,
            })?;
        } else {
            let mut out = ctx.out();
            writeln!(
                out,
                "Nothing released yet (a preview: a release needs --confirm). It would free:"
            )
            .map_err(Error::output)?;
            for (c, s) in &targets {
                writeln!(
                    out,
                    "  {} → history as {}",
                    output::describe(c, *s == Status::Released, ctx.now),
                    s.as_str()
                )
                .map_err(Error::output)?;
            }
            writeln!(
                out,
                "Next: check that the session is really gone, then run `{again}`."
            )
            .map_err(Error::output)?;
        }
        return Ok(Ending::Kept(exit::OK));
    }

    if json {
        output::print_json(&Released {
            session: session.to_string(),
            released,
            dry_run: false,
            commit: commit.map(|c| c.to_string()),
        })?;
    } else {
        let mut out = ctx.out();
        for (c, s) in &targets {
            writeln!(
                out,
                "Claim released — {} {} → history as {}",
                c.session,
                c.scope,
                s.as_str()
            )
            .map_err(Error::output)?;
        }
        super::note_commit(ctx, &mut out, commit)?;
        writeln!(
            out,
            "Next: the scope is free: `bsi open SCOPE` to claim it, `bsi status` for what is still held."
        ).map_err(Error::output)?;
    }
    Ok(Ending::Landed(exit::OK))
}
