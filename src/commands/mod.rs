//! One file per subcommand, and what they share: the context of a run (clock,
//! current directory, session and agent from the environment), the shape of
//! a write command (`WriteCommand`) and the helpers that find a session's
//! claims and write commit messages.

mod agent;
pub mod agent_hook;
mod close;
mod hook;
mod init;
mod log;
mod merge_driver;
mod meta;
mod migrate;
mod open;
mod release;
mod renew;
mod status;
mod sync;
mod verify;
mod watchdog;
mod whoami;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use chrono::{DateTime, FixedOffset, Local};

use crate::cli::{Cli, Command};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::git::Oid;
use crate::output;
use crate::publish::{self, Applied, Plan};
use crate::registry::{Claim, Registry};
use crate::resolve;
use crate::scope::Scope;
use crate::settings::Settings;
use crate::store::Brain;
use crate::values::{AgentName, SessionId, Ttl};

/// How much a run says on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    /// `--quiet`: nothing on stdout but what was asked for.
    Quiet,
    /// The default.
    Normal,
    /// `-v`: more detail.
    Verbose,
}

impl Verbosity {
    /// Whether stdout carries only what was asked for.
    pub fn is_quiet(self) -> bool {
        self == Verbosity::Quiet
    }

    /// Whether to say more.
    pub fn is_verbose(self) -> bool {
        self == Verbosity::Verbose
    }
}

/// Where a run's time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// `BSI_NOW` fixed it: bsi's commits carry that time too.
    Pinned,
    /// The system clock.
    System,
}

/// What the human output is shaped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Screen {
    /// Colours on stdout (a terminal or `CLICOLOR_FORCE`, never `NO_COLOR`).
    pub colour: bool,
    /// The width tables fit: `COLUMNS`, else 80.
    pub width: usize,
    /// `COLUMNS`, when it is set to a width.
    pub columns: Option<usize>,
}

/// What a run knows about the world, read once at the edge.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The current directory.
    pub cwd: PathBuf,
    /// The time of this run, in the local zone.
    pub now: DateTime<FixedOffset>,
    /// Where [`Ctx::now`] came from.
    pub clock: Clock,
    /// `--registry` / `BSI_REGISTRY`.
    pub registry: Option<PathBuf>,
    /// `BSI_SESSION`.
    pub env_session: Option<String>,
    /// `BSI_AGENT`.
    pub env_agent: Option<String>,
    /// `--quiet`, `-v` or neither.
    pub verbosity: Verbosity,
    /// Colours and widths.
    pub screen: Screen,
    /// `--remote` / `BSI_REMOTE`: the git remote to publish to.
    pub remote: Option<String>,
}

impl Ctx {
    /// A run in `cwd` at the pinned time `now`, with nothing from the
    /// environment: for tests of the library.
    pub fn at(cwd: &std::path::Path, now: DateTime<FixedOffset>) -> Ctx {
        Ctx {
            cwd: cwd.to_path_buf(),
            now,
            clock: Clock::Pinned,
            registry: None,
            env_session: None,
            env_agent: None,
            verbosity: Verbosity::Quiet,
            screen: Screen {
                colour: false,
                width: 80,
                columns: None,
            },
            remote: None,
        }
    }

    /// Reads the environment.
    pub fn from_env(registry: Option<PathBuf>, remote: Option<String>) -> Result<Ctx> {
        let cwd = std::env::current_dir()
            .map_err(|e| Error::io("cannot read the current directory", e))?;
        let (now, clock) = match std::env::var("BSI_NOW") {
            Ok(s) if !s.trim().is_empty() => (DateTime::parse_from_rfc3339(s.trim())
                .map_err(|e| {
                    Error::BadInput(
                        format!("BSI_NOW=`{s}` is not an RFC 3339 time: {e}"),
                        "give a full time with its zone, like `export BSI_NOW=2026-03-14T09:30:00Z`, or `unset BSI_NOW` to use the clock".into(),
                    )
                })?
                .with_timezone(&Local)
                .fixed_offset(), Clock::Pinned),
            _ => (Local::now().fixed_offset(), Clock::System),
        };
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let colour = output::colour_wanted_or_forced(
            std::io::stdout().is_terminal(),
            std::env::var("NO_COLOR").ok().as_deref(),
            std::env::var("TERM").ok().as_deref(),
            std::env::var("CLICOLOR_FORCE").ok().as_deref(),
        );
        Ok(Ctx {
            cwd,
            now,
            registry,
            env_session: var("BSI_SESSION"),
            env_agent: var("BSI_AGENT"),
            clock,
            verbosity: Verbosity::Normal,
            screen: Screen {
                colour,
                width: output::screen_width(std::env::var("COLUMNS").ok().as_deref()),
                columns: std::env::var("COLUMNS")
                    .ok()
                    .map(|c| output::screen_width(Some(&c))),
            },
            remote,
        })
    }

    /// The brain this run works on, and its settings, resolved once.
    pub fn open(&self) -> Result<(Brain, Settings)> {
        let registry = self.registry_path()?;
        let mut brain = Brain::locate(&self.cwd, registry.as_deref())?;
        brain.now = self.now;
        if self.clock == Clock::Pinned {
            brain.git.pin_clock(
                self.now.timestamp(),
                self.now.offset().local_minus_utc() / 60,
            );
        }
        let config = crate::settings::load_config(&brain.root)?;
        let settings = Settings::resolve(&brain.git, config, self.remote.as_deref())?;
        brain.branch = settings.branch.clone();
        brain.markdown = settings.config.markdown_extensions.clone();
        Ok((brain, settings))
    }

    /// [`Ctx::open`] with the default configuration, for a hook that must
    /// run when `.bsi.toml` cannot be read.
    pub fn open_with_default_config(&self) -> Result<(Brain, Settings)> {
        let registry = self.registry_path()?;
        let mut brain = Brain::locate(&self.cwd, registry.as_deref())?;
        brain.now = self.now;
        let settings = Settings::resolve(&brain.git, Config::default(), self.remote.as_deref())?;
        brain.branch = settings.branch.clone();
        Ok((brain, settings))
    }

    /// `--registry` / `BSI_REGISTRY` made absolute: a relative path starts
    /// at the root of the git work tree, so it names the same file from
    /// every directory.
    fn registry_path(&self) -> Result<Option<PathBuf>> {
        let Some(p) = self.registry.as_deref() else {
            return Ok(None);
        };
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            crate::git::Git::discover(&self.cwd)?.workdir()?.join(p)
        };
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
        if dir.is_some_and(|d| !d.is_dir()) {
            return Err(Error::BadInput(
                format!(
                    "the registry path {} (from --registry or BSI_REGISTRY) is in a directory that does not exist",
                    p.display()
                ),
                "create that directory, or `unset BSI_REGISTRY` to keep the registry's copy at the root of the work tree".into(),
            ));
        }
        Ok(Some(p))
    }

    /// The brain this run works on.
    pub fn brain(&self) -> Result<Brain> {
        Ok(self.open()?.0)
    }

    /// How this run's writes publish.
    pub fn write_options(&self, fresh: bool) -> publish::Options {
        publish::Options {
            now: self.now,
            fresh,
            verbose: self.verbosity.is_verbose(),
        }
    }

    /// Where human output goes: stdout, or nowhere with `--quiet`.
    pub fn out(&self) -> Box<dyn Write> {
        if self.verbosity.is_quiet() {
            Box::new(std::io::sink())
        } else {
            Box::new(std::io::stdout().lock())
        }
    }

    /// The agent name: the flag (checked by clap), `BSI_AGENT`,
    /// `default_agent` of the configuration, else `user@host`; each through
    /// the one rule of [`AgentName`].
    pub fn agent(&self, flag: Option<&AgentName>, config: &Config) -> Result<AgentName> {
        if let Some(a) = flag {
            return Ok(a.clone());
        }
        let name = crate::settings::agent_name(None, self.env_agent.as_deref(), config);
        Ok(AgentName::parse(&name)?)
    }

    /// `BSI_SESSION`, through the rule of [`SessionId`], when it is set.
    pub fn env_session(&self) -> Result<Option<SessionId>> {
        Ok(self
            .env_session
            .as_deref()
            .map(SessionId::parse)
            .transpose()?)
    }

    /// The session named by the argument (checked by clap) or `BSI_SESSION`.
    pub fn session(&self, arg: Option<&SessionId>) -> Result<SessionId> {
        if let Some(s) = arg {
            return Ok(s.clone());
        }
        self.env_session()?.ok_or_else(|| {
            Error::BadInput(
                "no session given: name one, or set BSI_SESSION".into(),
                "name the session (`bsi status` lists them: `bsi close SESSION`), or `export BSI_SESSION=SESSION` for every later command".into(),
            )
        })
    }
}

/// The shape every write command shares (`open`, `close`, `renew`,
/// `release`, `watchdog`): settings resolved once, then the command's
/// session and scopes, a plan against the registry, publish, report.
pub(crate) struct WriteCommand<'c> {
    pub(crate) ctx: &'c Ctx,
    pub(crate) brain: Brain,
    pub(crate) settings: Settings,
}

/// How a write command ends once it has reported.
pub(crate) enum Ending {
    /// This code for the change as planned; where it landed is then said,
    /// and may change it ([`publish::finish`]).
    Landed(u8),
    /// Nothing was meant to be written (a refusal, a preview): this code,
    /// and no word on the landing.
    Kept(u8),
}

impl<'c> WriteCommand<'c> {
    /// The brain and its settings.
    pub(crate) fn open(ctx: &'c Ctx) -> Result<WriteCommand<'c>> {
        let (brain, settings) = ctx.open()?;
        Ok(WriteCommand {
            ctx,
            brain,
            settings,
        })
    }

    /// Publishes what `plan` decides under the writer lock (`fresh`: fetch
    /// before planning even when a remote tip is known).
    pub(crate) fn publish<R>(
        &self,
        fresh: bool,
        plan: impl FnMut(&Registry) -> Result<Plan<R>>,
    ) -> Result<Applied<R>> {
        publish::apply(
            &self.brain,
            &self.settings,
            self.ctx.write_options(fresh),
            plan,
        )
    }

    /// Reports what the plan said and the commit that holds it, then where
    /// the change landed: the exit code.
    pub(crate) fn report<R>(
        &self,
        applied: Applied<R>,
        report: impl FnOnce(R, Option<Oid>) -> Result<Ending>,
    ) -> Result<u8> {
        let Applied {
            report: said,
            commit,
            landing,
        } = applied;
        Ok(match report(said, commit)? {
            Ending::Landed(code) => publish::finish(&self.brain, &landing, code),
            Ending::Kept(code) => code,
        })
    }

    /// Plan, publish, report: [`WriteCommand::publish`] then
    /// [`WriteCommand::report`].
    pub(crate) fn run<R>(
        &self,
        fresh: bool,
        plan: impl FnMut(&Registry) -> Result<Plan<R>>,
        report: impl FnOnce(R, Option<Oid>) -> Result<Ending>,
    ) -> Result<u8> {
        let applied = self.publish(fresh, plan)?;
        self.report(applied, report)
    }
}

/// With `-v`, names the commit of a registry change.
pub(crate) fn note_commit(
    ctx: &Ctx,
    out: &mut dyn Write,
    commit: Option<crate::git::Oid>,
) -> Result<()> {
    if let (true, Some(c)) = (ctx.verbosity.is_verbose(), commit) {
        writeln!(out, "Commit: {c}").map_err(Error::output)?;
    }
    Ok(())
}

/// A note that lands in a registry cell: one line, no control characters.
pub fn check_note(s: &str) -> Result<()> {
    Ok(crate::values::check_line("note", s)?)
}

/// Indexes of a session's claims, in the active and the stale table,
/// optionally only those with `scope`.
pub(crate) fn session_claims(
    reg: &Registry,
    session: &str,
    scope: Option<&Scope>,
) -> (Vec<usize>, Vec<usize>) {
    let pick = |claims: &[Claim]| {
        claims
            .iter()
            .enumerate()
            .filter(|(_, c)| c.session == session && scope.is_none_or(|s| &c.scope == s))
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
    };
    (pick(&reg.active_claims), pick(&reg.stale_claims))
}

/// The commit message of a registry change: a summary line and trailers.
pub(crate) fn commit_message(action: &str, sessions: &[&str], what: &str) -> String {
    commit_message_by(action, sessions, what, None)
}

/// [`commit_message`], with a [`crate::trailer::AGENT`] trailer naming who acted, so the
/// journal shows the agent rather than a shared git identity.
pub(crate) fn commit_message_by(
    action: &str,
    sessions: &[&str],
    what: &str,
    agent: Option<&str>,
) -> String {
    let mut uniq: Vec<&str> = Vec::new();
    for s in sessions {
        if !uniq.contains(s) {
            uniq.push(s);
        }
    }
    let mut summary = format!("bsi: {action}");
    if uniq.len() == 1 {
        summary.push(' ');
        summary.push_str(uniq[0]);
    }
    if !what.is_empty() {
        summary.push(' ');
        summary.push_str(what);
    }
    if summary.chars().count() > 100 {
        summary = summary.chars().take(99).collect::<String>() + "…";
    }
    let trailers = crate::trailer::Registry {
        sessions: uniq.iter().map(|s| (*s).to_string()).collect(),
        action: Some(action.to_string()),
        agent: agent.map(String::from),
    };
    format!("{summary}\n\n{}", trailers.render())
}

/// Scopes joined for a summary line.
pub(crate) fn scopes_summary<'a>(scopes: impl IntoIterator<Item = &'a Scope>) -> String {
    scopes
        .into_iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Resolves an optional `--scope` flag.
pub(crate) fn opt_scope(brain: &Brain, ctx: &Ctx, raw: Option<&str>) -> Result<Option<Scope>> {
    raw.map(|r| resolve_lenient(brain, ctx, r)).transpose()
}

/// Resolves a scope naming an existing claim: like [`resolve::resolve_scope`],
/// but a section need not exist in the file any more.
pub(crate) fn resolve_lenient(brain: &Brain, ctx: &Ctx, raw: &str) -> Result<Scope> {
    match resolve::resolve_scope(&brain.root, &ctx.cwd, raw, &brain.markdown) {
        Err(Error::NoSuchSection { file, heading, .. }) => Ok(Scope::Section { file, heading }),
        other => other,
    }
}

/// Refuses to act on a claim opened by another agent unless forced.
pub(crate) fn check_owner(claims: &[&Claim], caller: &str, force: bool, verb: &str) -> Result<()> {
    if force {
        return Ok(());
    }
    if let Some(c) = claims
        .iter()
        .find(|c| !c.agent.is_empty() && !c.agent.eq_ignore_ascii_case(caller))
    {
        return Err(Error::Refused {
            what: format!(
                "{} {} was opened by {}, not by {caller}",
                c.session, c.scope, c.agent
            ),
            hint: format!(
                "as its holder: `bsi {verb} {} --agent {}`; to {verb} another agent's claim anyway, add --force",
                c.session,
                output::shell_quote(&c.agent)
            ),
        });
    }
    Ok(())
}

/// Reads `--wait DUR`.
fn parse_wait(raw: &str) -> Result<std::time::Duration> {
    crate::config::parse_timeout(raw).ok_or_else(|| {
        Error::Usage(format!(
            "--wait `{}` is not a duration: use 30s, 10m or 1h",
            raw.trim()
        ))
    })
}

/// Runs a parsed command line. Returns the exit code.
pub fn run(cli: Cli) -> Result<u8> {
    // The agent tools' hooks fail open, even when the context cannot be read.
    if let Command::Hook { action } = &cli.command
        && let Some((tool, kind)) = agent_hook::event_of(action)
    {
        return Ok(agent_hook::run(
            Ctx::from_env(cli.registry, cli.remote),
            tool,
            kind,
        ));
    }
    let ctx = Ctx::from_env(cli.registry.clone(), cli.remote.clone())?;
    run_with(ctx, cli)
}

/// Runs a parsed command line in `ctx` — the environment of [`run`], or one
/// a test builds: the seam that runs bsi in-process on a prepared
/// repository. The command line's `--quiet` or `-v` (clap lets only one
/// through) replaces the context's verbosity.
pub fn run_with(mut ctx: Ctx, cli: Cli) -> Result<u8> {
    if cli.quiet {
        ctx.verbosity = Verbosity::Quiet;
    } else if cli.verbose {
        ctx.verbosity = Verbosity::Verbose;
    }
    match cli.command {
        Command::Init => init::run(&ctx),
        Command::Migrate => migrate::run(&ctx),
        Command::Open {
            scopes,
            ttl,
            session,
            agent,
            note,
            wait,
            shell,
            out,
        } => open::run(
            &ctx,
            open::Request {
                scopes,
                ttl: ttl.map(Ttl::duration),
                session,
                agent,
                note,
                wait: wait.as_deref().map(parse_wait).transpose()?,
            },
            open::Mode::of(out.json, shell),
        ),
        Command::Close {
            session,
            scope,
            force,
            agent,
            out,
        } => close::run(
            &ctx,
            session.as_ref(),
            scope.as_deref(),
            force,
            agent.as_ref(),
            out.json,
        ),
        Command::Renew {
            session,
            ttl,
            scope,
            force,
            agent,
            out,
        } => renew::run(
            &ctx,
            session.as_ref(),
            ttl.map(Ttl::duration),
            scope.as_deref(),
            (force, agent.as_ref()),
            out.json,
        ),
        Command::Watchdog { out } => watchdog::run(&ctx, out.json),
        Command::Release {
            session,
            confirm,
            scope,
            force,
            out,
        } => release::run(
            &ctx,
            release::Request {
                session: &session,
                scope: scope.as_deref(),
                confirm,
                force,
            },
            out.json,
        ),
        Command::Status { tree, offline, out } => status::run(&ctx, tree, offline, out.json),
        Command::Whoami { offline, out } => whoami::run(&ctx, offline, out.json),
        Command::Log { limit, out } => log::run(&ctx, limit, out.json),
        Command::Hook { action } => hook::run(&ctx, action),
        Command::Verify {
            session,
            worktree,
            out,
        } => verify::run(&ctx, session.as_ref(), worktree, out.json),
        Command::Completions { shell } => meta::completions(shell),
        Command::Man => meta::man(),
        Command::Help { command } => meta::help(&command),
        Command::Sync { out } => sync::run(&ctx, out.json),
        Command::MergeDriver { base, ours, theirs } => {
            merge_driver::run(&ctx, &base, &ours, &theirs)
        }
        Command::Agent { action } => agent::run(&ctx, action),
    }
}
