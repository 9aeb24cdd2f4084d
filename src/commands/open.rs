//! `bsi open`: claim scopes for a session, all or none.

use std::io::Write;

use chrono::Duration;

use super::{Ctx, Ending, Form, WriteCommand, check_note};
use crate::cli::OpenArgs;
use crate::output::{self, ClaimJson};
use bsi_core::api;
use bsi_core::api::git::Oid;
use bsi_core::api::resolve;
use bsi_core::claims::open::{Outcome, Owned, Place};
use bsi_core::claims::queue;
use bsi_core::claims::scopes_summary;
use bsi_core::error::{Error, Result, exit};
use bsi_core::scope::Scope;
use bsi_core::values::{AgentName, Ttl};
use bsi_core::words::{Here, assignment, command_line};

/// What `bsi open` was asked.
pub(crate) struct Request {
    pub(crate) scopes: Vec<String>,
    pub(crate) ttl: Option<Duration>,
    pub(crate) agent: Option<AgentName>,
    pub(crate) note: Option<String>,
    /// `--wait`: how long to keep a refused request and retry.
    pub(crate) wait: Option<std::time::Duration>,
    /// With `--wait`, take a place in the queue (not `--no-queue`).
    pub(crate) queue: bool,
}

pub(crate) use bsi_core::session::new_session_id;

/// Runs `bsi open`. (With `--shell`, the caller prints `(exit N)` when it
/// does not exit 0.)
pub(crate) fn run(ctx: &Ctx, args: OpenArgs) -> Result<u8> {
    let req = Request {
        scopes: args.scopes,
        ttl: args.ttl.map(Ttl::duration),
        agent: args.agent,
        note: args.note,
        wait: args.wait.as_deref().map(super::parse_wait).transpose()?,
        queue: !args.no_queue,
    };
    let w = WriteCommand::open(ctx)?;
    let config = &w.settings.config;
    let scopes = api::open::scopes(&w.brain, &ctx.cwd, &req.scopes)?;
    let actor = ctx.actor(req.agent.as_ref(), config)?;
    let note = req.note.unwrap_or_default();
    check_note(&note)?;
    // A session named with no agent name given: its claims join it as the
    // agent it was opened by, as `close` acts as it.
    let actor = drawn_if_none(ctx, actor).adopting(&w.site());
    let opening = api::open::open(
        &w.site(),
        &actor,
        &api::open::Request {
            scopes: &scopes,
            ttl: w.settings.ttl(req.ttl),
            note: &note,
            wait: req.wait,
            queue: req.queue,
        },
        &mut Announcer(ctx),
        &api::Stop::new(),
    )?;
    let session = opening.session;
    let generated = actor.drawn;
    let named_agent = req.agent.as_ref().map(AgentName::as_str);
    let reopened = opening.reopened;
    let joined = req.wait.is_some() && req.queue;
    // The commands it prints are written for the directory it runs in.
    let here = ctx.here(&w.brain);
    let code = w.report(opening.applied, |outcome, commit| {
        report(
            ctx,
            (&session, &here),
            named_agent,
            (generated, joined, &scopes),
            outcome,
            commit,
        )
    })?;
    if reopened && (code == exit::OK || code == exit::UNPUBLISHED) {
        // An id left in the environment after `bsi close` (or given
        // again): the claims join that ended session, which is right for
        // its commits (they carry the id the shell still exports) but is
        // said, with the way to a new session.
        ctx.out().err_line(format_args!(
            "note: session {session} was closed before; these claims reopen it under the same id, named by BSI_SESSION or --session. For a new session instead: `{}`, `unset BSI_SESSION`, then `bsi open` again.",
            command_line(["bsi", "close", &session]),
        ));
    }
    if code == exit::OK || code == exit::UNPUBLISHED {
        // A section claimed before its heading is written reserves it.
        let new_headings = scopes
            .iter()
            .filter_map(|s| resolve::new_heading(&w.brain.root, s))
            .filter(|n| !(n.nearest.is_none() && ctx.verbosity.is_quiet()))
            .map(|n| new_heading_words(&n, &session, &here));
        // A claim on a path that is not there protects nothing until it
        // is made: said once it is granted, with the path it may have meant.
        // A note (a new path in a folder that exists) is a sentence `-q`
        // leaves out; a warning (its folder is missing too) is always said.
        let absent = scopes
            .iter()
            .filter_map(|s| resolve::absent(&w.brain.root, s, &w.brain.copy_name()))
            .filter(|a| !(a.parent_exists && ctx.verbosity.is_quiet()))
            .map(|a| absent_words(&a, &session, &here));
        ctx.out().err_lines(new_headings.chain(absent));
        // A clone whose commits nothing checks: the claim holds at every
        // agent's edit, but not at this clone's commits until the guard is
        // installed. Said with the one command that installs it.
        if ctx.form != Form::Json
            && !ctx.verbosity.is_quiet()
            && super::views::unguarded(&w.brain.git)
        {
            ctx.out().err_line(format_args!("note: {UNGUARDED_NOTE}"));
        }
    }
    Ok(code)
}

/// What `open` says in a clone without the commit guard.
const UNGUARDED_NOTE: &str = "this clone's commits are not checked against the claims until `bsi hook install` adds the commit guard.";

/// Who opens: `actor` in the session asked for (`--session` or
/// `BSI_SESSION`), else in a new one drawn here.
fn drawn_if_none(ctx: &Ctx, actor: api::Actor) -> api::Actor {
    match actor.session {
        Some(_) => actor,
        None => api::Actor {
            session: Some(new_session_id(ctx.now, ctx.random_seed)),
            drawn: true,
            ..actor
        },
    }
}

/// What `open` says of a granted claim on a heading its file does not have
/// yet: the claim reserves the new section; and the existing heading it may
/// have meant, with how to move the claim to it.
fn new_heading_words(n: &resolve::NewHeading, session: &str, here: &Here) -> String {
    let scope = here.scope(&Scope::Section {
        file: n.file.clone(),
        heading: n.heading.clone(),
    });
    let mut text = format!(
        "note: {} has no heading `{}` yet: this claim reserves the new section. Write the heading (any level) outside the sections others hold, then commit.",
        n.file, n.heading
    );
    if let Some(near) = &n.nearest {
        let meant = here.scope(&Scope::Section {
            file: n.file.clone(),
            heading: near.clone(),
        });
        text.push_str(&format!(
            "\n  Did you mean `{near}`? Then run `{}`, then `{}`.",
            command_line(["bsi", "close", session, "--scope", &scope]),
            command_line(["bsi", "open", &meant, "--session", session])
        ));
    }
    text
}

/// What `open` says of a granted claim on a path that is not there: a new
/// file or folder in an existing folder is a note; a path whose folder is
/// missing too is a warning, most likely a typo. Either names the existing
/// path nearest by edit distance, and how to move the claim to it.
fn absent_words(a: &resolve::Absent, session: &str, here: &Here) -> String {
    let kind = if a.scope.ends_with('/') {
        "folder"
    } else {
        "file"
    };
    let mut text = if a.parent_exists {
        let place = match a.scope.trim_end_matches('/').rsplit_once('/') {
            Some((dir, _)) => format!("in `{dir}/`"),
            None => "at the brain root".to_string(),
        };
        format!(
            "note: `{}` does not exist yet: claimed as a new {kind} {place}.",
            a.scope
        )
    } else {
        format!(
            "warning: nothing exists at `{}` (no folder `{}`): the claim covers a path that is not there.",
            a.scope,
            a.missing_folder.as_deref().unwrap_or_default()
        )
    };
    let close = command_line(["bsi", "close", session, "--scope", &here.path(&a.scope)]);
    match &a.nearest {
        Some(n) => text.push_str(&format!(
            "\n  Did you mean `{n}`? Then run `{close}`, then `{}`.",
            command_line(["bsi", "open", &here.path(n), "--session", session])
        )),
        None if !a.parent_exists => {
            text.push_str(&format!(
                "\n  If it is a typo, run `{close}`, then open the right path."
            ));
        }
        None => {}
    }
    text
}

fn report(
    ctx: &Ctx,
    (session, here): (&str, &Here),
    named_agent: Option<&str>,
    (generated, joined, requested): (bool, bool, &[Scope]),
    outcome: Outcome,
    commit: Option<Oid>,
) -> Result<Ending> {
    let out = ctx.out();
    let shell = ctx.form == Form::Shell;
    let (new_claims, held) = match outcome {
        Outcome::Refused {
            blockers,
            alternatives,
            free,
            queue,
        } => {
            let refusal = Refusal {
                blockers: &blockers,
                alternatives: &alternatives,
                free: &free,
                queue: queue.as_ref(),
                hopeless: joined && blockers.iter().any(|b| b.stale),
                requested,
            };
            report_refusal(ctx, (session, generated, named_agent), here, &refusal)?;
            return Ok(Ending::Kept(exit::CONFLICT));
        }
        Outcome::Opened { new_claims, held } => (new_claims, held),
        // Drawn again by `run` until free; an id given by the caller is
        // never refused for this.
        Outcome::IdTaken => {
            return Err(Error::SessionIdTaken {
                session: session.to_string(),
            });
        }
    };

    out.json(|| {
        output::OpenedJson::new(
            session,
            &new_claims,
            &held,
            commit.map(|c| c.to_string()),
            ctx.now,
        )
    })?;
    // The shell keeps the session; an agent named on the command line is
    // kept too, so that the shell's later renew and close act as the
    // holder.
    out.shell(
        std::iter::once(("BSI_SESSION", session))
            .chain(named_agent.map(|a| ("BSI_AGENT", a)))
            .map(|(name, value)| format!("export {}", assignment(name, value))),
    )?;
    // Under --shell, the sentences go to stderr: stdout is the eval's.
    out.say(|w| {
        for c in &new_claims {
            writeln!(
                w,
                "Claim opened — {}, expires {}",
                c.scope,
                output::local_ts(c.expires, ctx.now)
            )?;
        }
        for (c, stale) in &held {
            if *stale {
                writeln!(
                    w,
                    "Already held — {} (STALE: renew cannot revive it; a person must `{}`)",
                    c.scope,
                    command_line(["bsi", "release", &c.session])
                )?;
            } else {
                writeln!(
                    w,
                    "Already held — {}, expires {}",
                    c.scope,
                    output::local_ts(c.expires, ctx.now)
                )?;
            }
        }
        writeln!(w, "Session: {session}")?;
        super::note_commit(ctx, w, commit)?;
        if generated && !shell {
            writeln!(
                w,
                "Next: keep this id for the session's commands and commits: export {} (or open with --shell and eval it)",
                assignment("BSI_SESSION", session)
            )?;
        } else if !new_claims.is_empty() || !held.is_empty() {
            writeln!(
                w,
                "Next: edit only inside your claims, commit with {}, then `{}`.",
                assignment("BSI_SESSION", session),
                command_line(["bsi", "close", session])
            )?;
        }
        Ok(())
    })?;
    Ok(Ending::Landed(exit::OK))
}

/// The line of a waiter's place: `Place 2 in the queue, after sess-a
/// (alice, waiting since 09:30:12).`
fn place_line(p: &Place) -> String {
    if p.ahead.is_empty() {
        return "First in the queue: the scope is yours as soon as it is free.".to_string();
    }
    format!(
        "Place {} in the queue, after {}.",
        p.place,
        ahead_words(&p.ahead)
    )
}

/// The requests ahead, for people.
fn ahead_words(ahead: &[queue::Request]) -> String {
    ahead
        .iter()
        .map(|r| {
            let agent = if r.agent.is_empty() {
                String::new()
            } else {
                format!("{}, ", r.agent)
            };
            format!(
                "{} ({agent}for {}, since {})",
                r.session,
                scopes_summary(&r.scopes),
                r.since.with_timezone(&chrono::Local).format("%H:%M:%S")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What `--wait` says while it waits: said as it happens, and flushed,
/// before the answer that ends the wait, on the same stream for people
/// ([`super::Out::progress`]).
struct Announcer<'c>(&'c Ctx);

impl api::open::Watch for Announcer<'_> {
    fn waiting(&mut self, blockers: &[Owned], place: Option<&Place>, wait: std::time::Duration) {
        let mut progress = self.0.out().progress();
        announce(&mut progress, blockers, place, wait);
        let _ = progress.flush();
    }

    fn moved(&mut self, place: &Place) {
        let mut progress = self.0.out().progress();
        let _ = writeln!(progress, "{}", place_line(place));
        let _ = progress.flush();
    }
}

/// The one line `--wait` prints when it starts waiting: who it waits for,
/// and its place in the queue.
fn announce(
    out: &mut dyn Write,
    blockers: &[Owned],
    place: Option<&Place>,
    wait: std::time::Duration,
) {
    let mut holders: Vec<String> = Vec::new();
    for b in blockers {
        let agent = if b.claim.agent.is_empty() {
            String::new()
        } else {
            format!(", agent {}", b.claim.agent)
        };
        let line = if b.stale {
            format!(
                "{} ({} STALE{agent}: only `{}` by a person frees it)",
                b.claim.session,
                b.claim.scope,
                command_line(["bsi", "release", &b.claim.session])
            )
        } else {
            format!(
                "{} ({}{agent}, until {})",
                b.claim.session,
                b.claim.scope,
                output::local_zone_ts(b.claim.expires)
            )
        };
        if !holders.contains(&line) {
            holders.push(line);
        }
    }
    let wait = bsi_core::api::wait::describe(wait);
    match place {
        Some(p) if p.queued => {
            let holders = if holders.is_empty() {
                String::new()
            } else {
                format!(" for {} to close", holders.join(" and "))
            };
            let _ = writeln!(
                out,
                "Waiting up to {wait}{holders}, in the queue (Ctrl-C stops; the place lapses within {}s).",
                queue::lease().num_seconds()
            );
            let _ = writeln!(out, "{}", place_line(p));
        }
        Some(p) => {
            let _ = writeln!(
                out,
                "Waiting up to {wait}, without a place in the queue, behind {}; nothing is written meanwhile (Ctrl-C stops).",
                ahead_words(&p.ahead)
            );
        }
        None => {
            let _ = writeln!(
                out,
                "Waiting up to {wait} for {} to close; nothing is written meanwhile (Ctrl-C stops).",
                holders.join(" and ")
            );
        }
    }
}

/// What a refusal says.
struct Refusal<'a> {
    blockers: &'a [Owned],
    alternatives: &'a [Scope],
    free: &'a [Scope],
    queue: Option<&'a Place>,
    /// `--wait` gave up at once: a stale claim is in the way.
    hopeless: bool,
    /// What was asked.
    requested: &'a [Scope],
}

fn report_refusal(
    ctx: &Ctx,
    (session, generated, named_agent): (&str, bool, Option<&str>),
    here: &Here,
    r: &Refusal<'_>,
) -> Result<()> {
    let Refusal {
        blockers,
        alternatives,
        free,
        queue,
        ..
    } = *r;
    // The next commands carry what this run was given, so they act for the
    // same session and agent wherever they are run (an id drawn for this
    // run holds nothing: the next command draws its own).
    let mut same: Vec<&str> = Vec::new();
    if !generated {
        same.extend(["--session", session]);
    }
    if let Some(a) = named_agent {
        same.extend(["--agent", a]);
    }
    let steps = api::open::refusal_steps(
        (blockers, alternatives, free),
        queue,
        r.requested,
        false,
        ctx.now,
    );
    let ways = crate::steps::lines_at(&steps, here, &same);
    let out = ctx.out();
    out.json(|| output::RefusedJson {
        error: "conflict",
        message: "claim refused — nothing was written".into(),
        hint: format!("{}.", ways.join("; or ")),
        next: crate::steps::json(&steps),
        exit: exit::CONFLICT,
        session: session.to_string(),
        conflicts: blockers
            .iter()
            .map(|b| output::ConflictJson {
                requested: b.requested.to_string(),
                claim: ClaimJson::new(&b.claim, b.stale, ctx.now),
            })
            .collect(),
        alternatives: alternatives.iter().map(ToString::to_string).collect(),
        free_in_request: free.iter().map(ToString::to_string).collect(),
        queue: queue.map(|p| output::PlaceJson::new(p.place, p.queued, &p.ahead)),
    })?;
    out.refusal(|w| {
        writeln!(w, "Claim refused — nothing was written.")?;
        for b in blockers {
            writeln!(
                w,
                "  {} conflicts: {}{}",
                b.requested,
                output::describe(&b.claim, b.stale, ctx.now),
                b.elsewhere.as_ref().map_or_else(String::new, |there| format!(
                    "; {there}, though not in this work tree"
                ))
            )?;
        }
        if let Some(p) = queue.filter(|p| !p.ahead.is_empty()) {
            writeln!(
                w,
                "  Waiting first in the queue: {} (they arrived before this request, which would be place {}).",
                ahead_words(&p.ahead),
                p.place
            )?;
        }
        if r.hopeless {
            writeln!(
                w,
                "Not queued: waiting cannot help, a STALE claim is in the way and only a person frees it."
            )?;
        }
        if !free.is_empty() {
            writeln!(
                w,
                "Free in this request: {} (a request is granted all or none: open these alone if they are enough)",
                scopes_summary(free)
            )?;
        }
        if !alternatives.is_empty() {
            writeln!(w, "Free nearby: {}", scopes_summary(alternatives))?;
        }
        writeln!(w, "Next: {}.", ways.join("; or "))
    });
    Ok(())
}
