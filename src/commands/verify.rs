//! `bsi verify`: what a session changed that its claims do not cover.

use serde::Serialize;

use super::Ctx;
use crate::cli::VerifyArgs;
use bsi_core::api::audit::{self, VerifyOutcome, describe};
use bsi_core::api::git::Oid;
use bsi_core::changes::Side;
use bsi_core::error::{Error, Result, exit};
use bsi_core::guard::Region;

#[derive(Serialize)]
struct OverflowJson {
    commit: Option<String>,
    path: String,
    kind: &'static str,
    start: Option<usize>,
    end: Option<usize>,
    removal: bool,
    /// `old` when the lines are numbered in the previous version of the
    /// file (removed lines, lines a heading change moved out), else `new`;
    /// null for a file overflow.
    version: Option<&'static str>,
    heading: Option<String>,
}

#[derive(Serialize)]
struct VerifyJson {
    session: String,
    /// The session has closed: checked against the scopes of its history rows.
    closed: bool,
    commits: Vec<String>,
    worktree: bool,
    clean: bool,
    files: usize,
    sections: usize,
    overflow: Vec<OverflowJson>,
    /// Section claims naming a heading the file no longer has.
    missing_sections: Vec<String>,
    reserved_sections: Vec<String>,
    /// The session's claimed parts changed by commits that are not its
    /// own (pulled, or made without bsi's hooks).
    drift: Vec<super::views::DriftJson>,
}

pub(crate) fn run(ctx: &Ctx, args: &VerifyArgs) -> Result<u8> {
    let (session, worktree) = (args.session.as_ref(), args.worktree);
    let out = ctx.out();
    let (brain, settings) = ctx.open()?;
    let session = ctx.session(session)?.into_string();
    let remote = settings.remote()?;
    let view = brain.view(remote.as_ref())?;
    // A closed session is verified against the scopes its history rows
    // name, in the registry or in its archive files.
    let holds = view
        .registry
        .all_claims()
        .any(|(c, _)| c.session == session);
    let closed = if holds {
        Vec::new()
    } else {
        audit::closed_claims(&brain, &view.registry, &brain.archives(&view)?, &session)?
    };
    let reg = view.registry;
    if !holds && closed.is_empty() {
        return Err(Error::NotFound(format!(
            "session {session} holds no claim and has none in the history to verify against"
        )));
    }
    let report = if holds {
        audit::verify(&brain, &reg, &session, worktree)?
    } else {
        audit::verify_against(
            &brain,
            closed.iter().map(|c| (c, false)).collect(),
            &session,
            worktree,
        )?
    };
    let clean = report.overflow.is_empty();
    // Every commit of the content branch since its claims were opened,
    // pulled ones included: the changes others made under its claims.
    let (drift, unread) = if holds {
        match audit::drift_of(&brain, &reg, Some(&session), ctx.now.timestamp()) {
            Ok(d) => (d, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        }
    } else {
        (Vec::new(), None)
    };
    out.json(|| VerifyJson {
        session: session.clone(),
        closed: !holds,
        commits: report.commits.iter().map(Oid::to_string).collect(),
        worktree,
        clean,
        files: report.files,
        sections: report.sections,
        overflow: report
            .overflow
            .iter()
            .map(|o| OverflowJson {
                commit: o.commit.map(|c| c.to_string()),
                path: o.path.clone(),
                kind: if o.region.is_some() {
                    "section"
                } else {
                    "file"
                },
                start: o.region.as_ref().map(|r| r.start),
                end: o.region.as_ref().map(|r| r.end),
                removal: o.region.as_ref().is_some_and(Region::removal),
                version: o.region.as_ref().map(|r| match r.side {
                    Side::Old => "old",
                    Side::New => "new",
                }),
                heading: o.region.as_ref().and_then(|r| r.heading.clone()),
            })
            .collect(),
        missing_sections: report.missing.clone(),
        reserved_sections: report.reserved.clone(),
        drift: super::views::DriftJson::list(&drift),
    })?;
    out.show(|w| {
        let n = report.commits.len();
        writeln!(
            w,
            "Verified {session}: {n} commit{}{}{}",
            if n == 1 { "" } else { "s" },
            if worktree { " and the work tree" } else { "" },
            if closed.is_empty() {
                ""
            } else {
                " (closed: against the scopes its history rows name)"
            }
        )?;
        for o in &report.overflow {
            writeln!(w, "overflow: {}", describe(o, &session))?;
        }
        for m in &report.reserved {
            writeln!(w, "{}", audit::reserved_line(m, &session))?;
        }
        for m in &report.missing {
            writeln!(w, "{}", audit::missing_line(m, &session))?;
        }
        super::views::print_drift(w, &out, &drift, unread.as_deref())?;
        match report.outcome() {
            VerifyOutcome::Clean => {
                writeln!(w, "clean: nothing outside the claims of {session}")?;
            }
            found => writeln!(w, "{found}")?,
        }
        if !drift.is_empty() {
            writeln!(w, "{}", audit::drift_summary(&drift, &session))?;
        }
        Ok(())
    })?;
    Ok(if clean { exit::OK } else { exit::OVERFLOW })
}
