//! `bsi release`: a person frees a stale claim (or, forced, an active one).

use serde::Serialize;

use super::{Ctx, Ending, WriteCommand, opt_scope};
use crate::cli::ReleaseArgs;
use crate::output::{self, ClaimJson};
use bsi_core::api;
use bsi_core::api::git::Oid;
use bsi_core::claims::release::How;
use bsi_core::error::{Result, exit};
use bsi_core::registry::{Claim, Status};
use bsi_core::scope::Scope;
use bsi_core::values::SessionId;

#[derive(Serialize)]
struct Released {
    session: String,
    released: Vec<ClaimJson>,
    dry_run: bool,
    /// The registry commit; null for a preview.
    commit: Option<String>,
}

pub(crate) fn run(ctx: &Ctx, args: &ReleaseArgs) -> Result<u8> {
    let session = args.session.as_str();
    // An id bsi would not hand out can still be in the registry (edited by
    // hand, like `s1 x`): such rows are released by their id as written;
    // the rule of session ids applies to an id the registry lacks.
    let rule = SessionId::parse(session).map(|_| ());
    if session.trim().is_empty() || session.chars().any(char::is_control) {
        rule.clone()?;
    }
    let w = WriteCommand::open(ctx)?;
    let scope = opt_scope(&w.brain, ctx, args.scope.as_deref())?;
    let by = ctx.agent(None, &w.settings.config)?;
    let how = How {
        confirm: args.confirm,
        force: args.force,
    };
    let applied = api::release::release(&w.site(), (session, &rule), scope.as_ref(), how, &by)?;
    w.report(applied, |targets, commit| {
        report(ctx, session, scope.as_ref(), how, targets, commit)
    })
}

fn report(
    ctx: &Ctx,
    session: &str,
    scope: Option<&Scope>,
    How { confirm, force }: How,
    targets: Vec<(Claim, Status)>,
    commit: Option<Oid>,
) -> Result<Ending> {
    let out = ctx.out();
    let released = || -> Vec<ClaimJson> {
        targets
            .iter()
            .map(|(c, s)| ClaimJson::new(c, *s == Status::Released, ctx.now))
            .collect()
    };
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
        let again = bsi_core::words::command_line(words);
        out.json(|| Released {
            session: session.to_string(),
            released: released(),
            dry_run: true,
            commit: None,
        })?;
        out.say(|w| {
            writeln!(
                w,
                "Nothing released yet (a preview: a release needs --confirm). It would free:"
            )?;
            for (c, s) in &targets {
                writeln!(
                    w,
                    "  {} → history as {}",
                    output::describe(c, *s == Status::Released, ctx.now),
                    s.as_str()
                )?;
            }
            writeln!(
                w,
                "Next: check that the session is really gone, then run `{again}`."
            )
        })?;
        return Ok(Ending::Kept(exit::OK));
    }

    out.json(|| Released {
        session: session.to_string(),
        released: released(),
        dry_run: false,
        commit: commit.map(|c| c.to_string()),
    })?;
    out.say(|w| {
        for (c, s) in &targets {
            writeln!(
                w,
                "Claim released — {} {} → history as {}",
                c.session,
                c.scope,
                s.as_str()
            )?;
        }
        super::note_commit(ctx, w, commit)?;
        writeln!(
            w,
            "Next: the scope is free: `bsi open SCOPE` to claim it, `bsi status` for what is still held."
        )
    })?;
    Ok(Ending::Landed(exit::OK))
}
