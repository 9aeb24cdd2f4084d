//! One file per subcommand, and what they share: the context of a run (clock,
//! current directory, session and agent from the environment), the output
//! channel every command writes through (`Out`, in `output_channel`), the
//! shape of a write command (`WriteCommand`) and the helpers that find a
//! session's claims and write commit messages.

pub mod agent_event;
mod agent_setup;
mod close;
mod commit;
mod doctor;
mod edits;
mod git_hook;
mod init;
mod log;
mod mcp;
mod merge_driver;
mod meta;
mod migrate;
mod open;
mod output_channel;
mod recover;
mod release;
mod renew;
mod repair;
mod serve;
mod status;
mod sync;
mod verify;
mod views;
mod watch;
mod watchdog;
mod whoami;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use chrono::{DateTime, FixedOffset, Local};

use crate::cli::{Cli, Command, HookAction};
use crate::output;
use bsi_core::api::git::Oid;
use bsi_core::api::publish::{self, Applied};
use bsi_core::api::resolve;
use bsi_core::api::settings::{Given, Settings};
use bsi_core::api::store::Brain;
use bsi_core::config::Config;
use bsi_core::error::{Error, Result};
use bsi_core::scope::Scope;
use bsi_core::values::{AgentName, SessionId};
use bsi_core::words::Here;

pub use output_channel::{Lines, Out};

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

/// The form of what a run prints on stdout, chosen once from the command
/// line (the output channel): a command says what it has to say, and the
/// channel decides where each part goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Sentences and tables for people.
    Human,
    /// `--json`: one JSON document, nothing else.
    Json,
    /// `bsi open --shell`: only the lines an `eval` needs; the sentences go
    /// to stderr.
    Shell,
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
    /// The width views fit: `COLUMNS` when it is set to a usable width,
    /// else the width of the terminal stdout writes to, else no limit
    /// ([`usize::MAX`]: a pipe or a file gets everything whole).
    pub width: usize,
}

impl Screen {
    /// The width a view fits.
    pub fn width(&self) -> usize {
        self.width
    }
}

/// What a run knows about the world, read once at the edge.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The current directory.
    pub cwd: PathBuf,
    /// This program's path (`None` when the system does not say): what
    /// bsi writes into the hooks and the merge driver it installs.
    pub exe: Option<PathBuf>,
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
    /// Text, JSON or shell lines.
    pub form: Form,
    /// Colours and widths.
    pub screen: Screen,
    /// `--remote` / `BSI_REMOTE`: the git remote to publish to.
    pub remote: Option<String>,
    /// `BSI_RANDOM_SEED`: what a generated session id is drawn from.
    pub random_seed: Option<u64>,
    /// `BSI_PUBLISH_TIMEOUT`, as written (the settings read it).
    pub publish_timeout: Option<String>,
    /// `BSI_CONNECTION_TIMEOUT`, as written (the settings read it).
    pub connection_timeout: Option<String>,
    /// `USER`, else `USERNAME`: the user of the default agent name.
    pub user: Option<String>,
    /// `HOSTNAME`: the host of the default agent name (else the system's).
    pub host: Option<String>,
    /// `GIT_INDEX_FILE`: the index a git hook is handed, relative to
    /// [`Ctx::cwd`] or absolute.
    pub git_index_file: Option<PathBuf>,
    /// `CLAUDE_ENV_FILE`: where Claude Code takes a session's environment.
    pub claude_env_file: Option<PathBuf>,
    /// `VISUAL`, else `EDITOR`: the editor of `bsi repair`.
    pub editor: Option<String>,
    /// The agent tool whose session this run acts for, found among its
    /// ancestors: its name is the agent name when nothing else names one.
    pub tool_agent: Option<String>,
    /// The tool session ids agent tools set in their shells' environment
    /// ([`crate::agents::AgentTool::shell_session_var`], e.g. `CODEX_THREAD_ID`).
    pub tool_sessions: Vec<(crate::agents::Tool, String)>,
    /// `GIT_REFLOG_ACTION`: what git says it is doing when it runs a hook
    /// (`merge topic`, `pull`); empty when it says nothing.
    pub git_reflog_action: String,
    /// `PATH`, `HOME` and `CODEX_HOME`: where `bsi agent doctor` looks for
    /// the programs and settings of the agent tools, and the `PATH` the
    /// git hooks' `bsi` is looked for on.
    pub places: crate::agents::doctor::Places,
    /// What the registry's IO had to say during this run (every brain it
    /// opens shares this handle): said on stderr by [`Ctx::say_notes`], or
    /// in its tool's result by `bsi mcp`.
    pub notes: bsi_core::api::store::Notes,
}

impl Ctx {
    /// A run in `cwd` at the pinned time `now`, with nothing from the
    /// environment: for tests of the library.
    pub fn at(cwd: &std::path::Path, now: DateTime<FixedOffset>) -> Ctx {
        Ctx {
            cwd: cwd.to_path_buf(),
            exe: None,
            now,
            clock: Clock::Pinned,
            registry: None,
            env_session: None,
            env_agent: None,
            verbosity: Verbosity::Quiet,
            form: Form::Human,
            screen: Screen {
                colour: false,
                width: 80,
            },
            remote: None,
            random_seed: None,
            publish_timeout: None,
            connection_timeout: None,
            user: None,
            host: None,
            git_index_file: None,
            claude_env_file: None,
            editor: None,
            tool_agent: None,
            tool_sessions: Vec::new(),
            git_reflog_action: String::new(),
            places: crate::agents::doctor::Places::default(),
            notes: bsi_core::api::store::Notes::default(),
        }
    }

    /// Reads the environment, with `BSI_REGISTRY` and `BSI_REMOTE` too: for
    /// a command line read without clap (which reads those two for its
    /// `--registry` and `--remote`).
    pub fn from_env_alone() -> Result<Ctx> {
        let registry = env_os("BSI_REGISTRY").map(PathBuf::from);
        let remote = env_os("BSI_REMOTE").and_then(|v| v.into_string().ok());
        Ctx::from_env(registry, remote)
    }

    /// Reads the environment, once: every variable a command uses is read
    /// here and handed down. The few read elsewhere are named, with why, in
    /// `tests/it/house.rs`, which keeps that list true: the test seams
    /// beside the code they steer (`BSI_FAULT_POINT`, `BSI_LOCK_WAIT_MS`,
    /// `BSI_PROC`), git's own variables where bsi does what git would do
    /// with them, and `COLUMNS` for the help clap prints before there is a
    /// context.
    pub fn from_env(registry: Option<PathBuf>, remote: Option<String>) -> Result<Ctx> {
        let cwd = std::env::current_dir()
            .map_err(|e| Error::io("cannot read the current directory", e))?;
        let (now, clock) = match std::env::var("BSI_NOW") {
            Ok(s) if !s.trim().is_empty() => (
                DateTime::parse_from_rfc3339(s.trim())
                    .map_err(|source| Error::BadClock {
                        value: s.clone(),
                        source,
                    })?
                    .with_timezone(&Local)
                    .fixed_offset(),
                Clock::Pinned,
            ),
            _ => (Local::now().fixed_offset(), Clock::System),
        };
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let random_seed = var("BSI_RANDOM_SEED")
            .map(|s| {
                s.trim()
                    .parse::<u64>()
                    .map_err(|source| Error::BadSeed { value: s, source })
            })
            .transpose()?;
        let colour = output::colour_wanted_or_forced(
            std::io::stdout().is_terminal(),
            std::env::var("NO_COLOR").ok().as_deref(),
            std::env::var("TERM").ok().as_deref(),
            std::env::var("CLICOLOR_FORCE").ok().as_deref(),
        );
        Ok(Ctx {
            cwd,
            exe: std::env::current_exe().ok(),
            now,
            registry,
            env_session: var("BSI_SESSION"),
            env_agent: var("BSI_AGENT"),
            clock,
            verbosity: Verbosity::Normal,
            form: Form::Human,
            screen: Screen {
                colour,
                width: output::view_width(
                    output::columns(var("COLUMNS").as_deref()),
                    crate::terminal::terminal_width(),
                ),
            },
            remote,
            random_seed,
            publish_timeout: var("BSI_PUBLISH_TIMEOUT"),
            connection_timeout: var("BSI_CONNECTION_TIMEOUT"),
            user: var("USER").or_else(|| var("USERNAME")),
            host: var("HOSTNAME"),
            git_index_file: env_os("GIT_INDEX_FILE").map(PathBuf::from),
            claude_env_file: env_os("CLAUDE_ENV_FILE").map(PathBuf::from),
            editor: var("VISUAL").or_else(|| var("EDITOR")),
            tool_agent: None,
            tool_sessions: crate::agents::Tool::ALL
                .into_iter()
                .filter_map(|t| Some((t, var(t.shell_session_var()?)?)))
                .collect(),
            git_reflog_action: std::env::var("GIT_REFLOG_ACTION").unwrap_or_default(),
            places: crate::agents::doctor::Places {
                path: std::env::var_os("PATH"),
                home: std::env::var_os("HOME").map(PathBuf::from),
                codex_home: env_os("CODEX_HOME").map(PathBuf::from),
                copilot_home: env_os("COPILOT_HOME").map(PathBuf::from),
                claude_config: env_os("CLAUDE_CONFIG_DIR").map(PathBuf::from),
                state_home: env_os("XDG_STATE_HOME").map(PathBuf::from),
            },
            notes: bsi_core::api::store::Notes::default(),
        })
    }

    /// The brain this run works on, and its settings, resolved once.
    pub fn open(&self) -> Result<(Brain, Settings)> {
        let (brain, settings) =
            self.open_with(bsi_core::api::settings::load_config, &self.given())?;
        // A key this bsi does not know is ignored, and said.
        let file = brain.root.join(bsi_core::config::CONFIG_FILE);
        for e in &settings.config.unknown {
            self.notes
                .push(format!("warning: {}: {e} (ignored)", file.display()));
        }
        Ok((brain, settings))
    }

    /// [`Ctx::open`] for a hook, which must run whatever value it meets: a
    /// line of `.bsi.toml` it cannot use, or a duration out of its range,
    /// gives its default alone, said in [`Settings::warnings`]; the keys
    /// that decide what is judged fail closed
    /// ([`bsi_core::api::settings::load_config_for_hook`]).
    pub fn open_for_hook(&self) -> Result<(Brain, Settings)> {
        let unread = std::cell::RefCell::new(Vec::new());
        let config = |root: &std::path::Path| {
            let (config, warnings) = bsi_core::api::settings::load_config_for_hook(root)?;
            *unread.borrow_mut() = warnings;
            Ok(config)
        };
        let given = Given {
            lenient: true,
            ..self.given()
        };
        let (brain, mut settings) = self.open_with(config, &given)?;
        let unread = unread.into_inner();
        settings.warnings.splice(0..0, unread);
        Ok((brain, settings))
    }

    /// The brain and its settings, with the configuration `config` reads
    /// from the brain root. The root is the one the registry branch records
    /// ([`bsi_core::api::store::ROOT_FILE`]) when nothing names a registry; a named
    /// one must agree with it.
    fn open_with(
        &self,
        config: impl Fn(&std::path::Path) -> Result<Config>,
        given: &Given,
    ) -> Result<(Brain, Settings)> {
        let registry = self.registry_path()?;
        let site = self.locate(registry.as_deref())?;
        // Read where the registry branch is (a broken file is said below,
        // once the brain root is known).
        let loaded = config(&site.root);
        let probe = Settings::resolve(
            &site.git,
            loaded.as_ref().cloned().unwrap_or_default(),
            given,
        );
        let recorded = match &probe {
            Ok(s) => site.recorded_root(&s.branch, s.remote().ok().flatten().as_ref())?,
            Err(_) => None,
        };
        let here = site.root_rel();
        match recorded {
            Some(root) if root != here && registry.is_some() => Err(Error::RootContradicted {
                given: here,
                recorded: root,
                branch: probe.map(|s| s.branch).unwrap_or_default(),
            }),
            Some(root) if root != here => {
                let copy = site
                    .workdir
                    .join(&root)
                    .join(bsi_core::registry::REGISTRY_FILE);
                let site = self.locate(Some(&copy))?;
                let config = config(&site.root)?;
                let settings = Settings::resolve(&site.git, config, given)?;
                Ok((self.brain_at(site, &settings), settings))
            }
            _ => {
                loaded?;
                let settings = probe?;
                Ok((self.brain_at(site, &settings), settings))
            }
        }
    }

    /// [`Ctx::open`] for `bsi repair`: a brain root the registry branch
    /// records badly (not a directory of the work tree, or changed after
    /// its first record) does not stop it. The brain opens at the root the
    /// branch keeps (its first valid record; none valid: where
    /// `--registry` or the work tree puts it), and what [`ROOT_FILE`]
    /// must say again comes with it: `Some(root)`, `None` inside for no
    /// file (the work tree root).
    ///
    /// [`ROOT_FILE`]: bsi_core::api::store::ROOT_FILE
    pub(crate) fn open_mending_root(&self) -> Result<(Brain, Settings, Option<Option<String>>)> {
        let registry = self.registry_path()?;
        let site = self.locate(registry.as_deref())?;
        let settings = Settings::resolve(
            &site.git,
            bsi_core::api::settings::load_config(&site.root)?,
            &self.given(),
        )?;
        let remote = settings.remote().ok().flatten();
        let record = site.root_record(&settings.branch, remote.as_ref())?;
        if record.trouble.is_none() {
            let (brain, settings) = self.open()?;
            return Ok((brain, settings, None));
        }
        let here = site.root_rel();
        let root = match record.kept {
            Some(kept) => kept,
            None => here.clone(),
        };
        let fix = Some(Some(root.clone()).filter(|r| !r.is_empty()));
        if root == here {
            return Ok((self.brain_at(site, &settings), settings, fix));
        }
        let copy = site
            .workdir
            .join(&root)
            .join(bsi_core::registry::REGISTRY_FILE);
        let site = self.locate(Some(&copy))?;
        let config = bsi_core::api::settings::load_config(&site.root)?;
        let settings = Settings::resolve(&site.git, config, &self.given())?;
        Ok((self.brain_at(site, &settings), settings, fix))
    }

    /// The brain at `site`, with its settings and this run's time.
    fn brain_at(&self, site: bsi_core::api::store::Site, settings: &Settings) -> Brain {
        let mut brain = Brain::new(site, settings);
        brain.now = self.now;
        brain.notes = self.notes.clone();
        brain
    }

    /// Says on stderr what the registry's IO had to say so far
    /// ([`Ctx::notes`]), each line once.
    pub(crate) fn say_notes(&self) {
        let lines = self.notes.take();
        if !lines.is_empty() {
            self.out().err_lines(lines);
        }
    }

    /// Says on stderr the notes so far, then where a write landed
    /// ([`crate::output::landing_lines`]): the exit code it makes of
    /// `code` ([`publish::Landing::code`]).
    pub(crate) fn say_landing(&self, landing: &publish::Landing, code: u8) -> u8 {
        self.say_notes();
        self.out().err_lines(crate::output::landing_lines(landing));
        landing.code(code)
    }

    /// Finds the brain from the current directory or `registry`, with this
    /// run's clock.
    fn locate(&self, registry: Option<&std::path::Path>) -> Result<bsi_core::api::store::Site> {
        let mut site = Brain::locate(&self.cwd, registry)?;
        if self.clock == Clock::Pinned {
            site.git.pin_clock(
                self.now.timestamp(),
                self.now.offset().local_minus_utc() / 60,
            );
        }
        Ok(site)
    }

    /// What the command line and the environment say about the settings.
    fn given(&self) -> Given {
        Given {
            remote: self.remote.clone(),
            publish_timeout: self.publish_timeout.clone(),
            connection_timeout: self.connection_timeout.clone(),
            lenient: false,
        }
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
            bsi_core::api::git::Git::discover(&self.cwd)?
                .workdir()?
                .join(p)
        };
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
        if dir.is_some_and(|d| !d.is_dir()) {
            return Err(Error::RegistryDirMissing { path: p });
        }
        Ok(Some(p))
    }

    /// Where this run prints its commands in `brain`: the directory it
    /// runs in, below the brain's root ([`Here`]).
    pub fn here(&self, brain: &Brain) -> Here {
        let cwd = std::fs::canonicalize(&self.cwd).unwrap_or_else(|_| self.cwd.clone());
        Here::of(&brain.root, &cwd)
    }

    /// The brain this run works on.
    pub fn brain(&self) -> Result<Brain> {
        Ok(self.open()?.0)
    }

    /// Where the core serves a request of this run on `brain`.
    pub(crate) fn site<'a>(
        &'a self,
        brain: &'a Brain,
        settings: &'a Settings,
    ) -> bsi_core::api::Site<'a> {
        bsi_core::api::Site {
            brain,
            settings,
            cwd: &self.cwd,
            now: self.now,
            options: self.write_options(false),
            random_seed: self.random_seed,
        }
    }

    /// How this run's writes publish.
    pub fn write_options(&self, fresh: bool) -> publish::Options {
        publish::Options {
            now: self.now,
            fresh,
            verbose: self.verbosity.is_verbose(),
            bound: None,
        }
    }

    /// The output channel of this run: what its form, verbosity and
    /// screen make of what a command says ([`Out`]).
    pub fn out(&self) -> Out {
        Out::new(self.form, self.verbosity, self.screen)
    }

    /// Where a refusal is said: stderr, its `Next:` lines wrapped to the
    /// screen ([`Out::err`]).
    pub(crate) fn err(&self) -> Box<dyn Write> {
        self.out().err()
    }

    /// The agent name: the flag (checked by clap), `BSI_AGENT`,
    /// `default_agent` of the configuration, else the agent tool this run
    /// acts for ([`Ctx::tool_agent`], or the tool whose session
    /// `BSI_SESSION` names — Claude Code sets it in its shell), else
    /// `user@host`; each through the one rule of [`AgentName`].
    pub fn agent(&self, flag: Option<&AgentName>, config: &Config) -> Result<AgentName> {
        if let Some(a) = flag {
            return Ok(a.clone());
        }
        let fallback = match &self.tool_agent {
            Some(tool) => tool.clone(),
            None => self.tool_of_env_session().unwrap_or_else(|| {
                bsi_core::api::settings::default_agent(self.user.as_deref(), self.host.as_deref())
            }),
        };
        let name =
            bsi_core::api::settings::agent_name(None, self.env_agent.as_deref(), config, &fallback);
        Ok(AgentName::parse(&name)?)
    }

    /// Whether the run's agent name was given (`--agent`, `BSI_AGENT`,
    /// `default_agent`) rather than defaulted: see
    /// [`bsi_core::claims::Actor::owns`].
    pub fn agent_named(&self, flag: Option<&AgentName>, config: &Config) -> bool {
        flag.is_some() || self.env_agent.is_some() || config.default_agent.is_some()
    }

    /// Who acts in this run, resolved once: the session it acts for
    /// (`BSI_SESSION`, `--session`, or the agent tool's session; none in a
    /// shell of no session), the agent name (`flag` first) and whether it
    /// was given. No id is drawn here (`open` draws one).
    pub fn actor(&self, flag: Option<&AgentName>, config: &Config) -> Result<bsi_core::api::Actor> {
        Ok(bsi_core::api::Actor {
            session: self.env_session()?.map(SessionId::into_string),
            agent: self.agent(flag, config)?.into_string(),
            agent_named: self.agent_named(flag, config),
            drawn: false,
        })
    }

    /// Sets the session and agent of the agent tool session this run acts
    /// for — the tool process it descends from, or the tool session its
    /// environment names — when the session map of the repository here
    /// records one (the tool's session-start hook does). Quietly nothing
    /// otherwise.
    pub fn find_tool_session(&mut self) {
        if let Some(e) = crate::agents::sessions::of_caller(&self.cwd, &self.tool_sessions) {
            self.env_session = Some(e.session);
            self.tool_agent = Some(e.tool);
        }
    }

    /// The tool this run acts for when `BSI_SESSION` is the session its
    /// session-start hook recorded for the tool session this run belongs
    /// to (found as [`Ctx::find_tool_session`] finds it). Looked up only
    /// when an agent name is wanted and nothing else gives one.
    fn tool_of_env_session(&self) -> Option<String> {
        if self.env_agent.is_some() {
            return None;
        }
        let session = self.env_session.as_deref()?;
        crate::agents::sessions::of_caller(&self.cwd, &self.tool_sessions)
            .filter(|e| e.session == session)
            .map(|e| e.tool)
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
        self.env_session()?.ok_or(Error::NoSession)
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
    /// and may change it ([`Ctx::say_landing`]).
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

    /// Where the core serves this command's request.
    pub(crate) fn site(&self) -> bsi_core::api::Site<'_> {
        self.ctx.site(&self.brain, &self.settings)
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
            Ending::Landed(code) => self.ctx.say_landing(&landing, code),
            Ending::Kept(code) => code,
        })
    }
}

/// What a command that installs a guard says when the brain has no
/// registry yet: the guard has no claims to check until there is one, and
/// the command that makes it. `None` when there is a registry (or the brain
/// cannot be read: the guard's own run says why).
pub(crate) fn no_registry_note(ctx: &Ctx) -> Option<String> {
    let (brain, settings) = ctx.open().ok()?;
    let remote = settings.remote().ok().flatten();
    match brain.view(remote.as_ref()) {
        Err(e @ Error::NoRegistry { .. }) => Some(format!(
            "Note: {e}; the hooks let every change through until there is one.\nNext: {}.",
            crate::steps::hint_line(&crate::hints::hint(&e))
        )),
        _ => None,
    }
}

/// With `-v`, names the commit of a registry change.
pub(crate) fn note_commit(
    ctx: &Ctx,
    out: &mut dyn Write,
    commit: Option<bsi_core::api::git::Oid>,
) -> std::io::Result<()> {
    if let (true, Some(c)) = (ctx.verbosity.is_verbose(), commit) {
        writeln!(out, "Commit: {c}")?;
    }
    Ok(())
}

/// A note that lands in a registry cell: one line, no control characters.
pub fn check_note(s: &str) -> Result<()> {
    Ok(bsi_core::values::check_line(
        bsi_core::values::Field::Note,
        s,
    )?)
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

/// Reads `--wait DUR`, held to its range ([`bsi_core::values::Span::Wait`]).
pub(super) fn parse_wait(raw: &str) -> Result<std::time::Duration> {
    bsi_core::values::Span::Wait.parse(raw).map_err(|e| {
        Error::Usage(if e.too_long {
            format!("--wait {}", e.reason())
        } else {
            format!(
                "--wait `{}` is not a duration: use one from 1ms to 24h, like 30s, 10m or 1h",
                e.given
            )
        })
    })
}

/// A variable of the environment, unset when empty.
fn env_os(key: &str) -> Option<std::ffi::OsString> {
    std::env::var_os(key).filter(|v| !v.is_empty())
}

/// An agent tool's event (`bsi hook edit|session-start|stop --tool T`)
/// answered before clap is built, which an edit hook's start-up cannot
/// afford; `None` when `args` is not one: clap reads them.
pub fn agent_event_fast_path(args: &[std::ffi::OsString]) -> Option<u8> {
    agent_event::fast_path(args)
}

/// An agent tool's hook whose command line clap refused (`why`), answered
/// open in the tool's protocol (a hook never stops the agent for bsi's
/// own usage error): its exit code. `None` when `args` are not an agent
/// hook's.
pub fn agent_event_unreadable(args: &[std::ffi::OsString], why: &str) -> Option<u8> {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let kind = agent_event::kind_in_args(&args)?;
    let answer = match agent_event::tool_in_args(&args) {
        Some(tool) => agent_event::fail_open(tool, kind, why),
        None => crate::agents::Answer {
            exit_code: crate::exit::OK,
            stdout: String::new(),
            stderr: format!("bsi: {why}; the agent goes on unchecked\n"),
            refuses: false,
        },
    };
    Some(agent_event::emit(&answer))
}

/// Runs a parsed command line. Returns the exit code; a reader that closed
/// the pipe (`bsi log | head`) ends the run quietly with success.
pub fn run(cli: Cli) -> std::result::Result<u8, Box<(Error, Here)>> {
    let (registry, remote) = (cli.registry.clone(), cli.remote.clone());
    let ctx = Ctx::from_env(registry.clone(), remote.clone());
    output_channel::closed_pipe_ends_quietly(run_in(ctx, cli)).map_err(|e| {
        // Where the error's hint is printed: its commands are written for
        // the directory the run was in.
        let here = Ctx::from_env(registry, remote)
            .and_then(|ctx| Ok(ctx.here(&ctx.brain()?)))
            .unwrap_or_default();
        Box::new((e, here))
    })
}

/// Installs bsi's hooks in this work tree when it was added after the
/// clone's guard was installed and has its own hooks folder without them,
/// and says so on stderr; never fails the command.
fn guard_later_work_tree(ctx: &Ctx) {
    let Ok(git) = bsi_core::api::git::Git::discover(&ctx.cwd) else {
        return;
    };
    let program = ctx.exe.as_deref().and_then(std::path::Path::to_str);
    let mut err = ctx.out().plain_err();
    match crate::hook_managers::guard_later_work_tree(&git, crate::githooks::HOOKS, program) {
        Ok(None) => {}
        Ok(Some(done)) => {
            let _ = writeln!(err, "{done}");
        }
        Err(e) => {
            let _ = writeln!(
                err,
                "bsi: warning: this work tree has no guard and bsi could not install it ({e}). Next: `bsi doctor` says what to do."
            );
        }
    }
}

/// What the global flags and the command say about the run: the output
/// form, the session, the verbosity; and a work tree git has not guarded
/// yet, guarded now.
fn settle(ctx: &mut Ctx, cli: &Cli) {
    ctx.form = if cli.wants_json() {
        Form::Json
    } else if cli.wants_shell() {
        Form::Shell
    } else {
        Form::Human
    };
    // `--session ID`, in any command: what `BSI_SESSION=ID` says.
    if let Some(s) = &cli.session_flag {
        ctx.env_session = Some(s.to_string());
    }
    // With no session named: the session of the agent tool process this run
    // descends from, as its session-start hook recorded it. Not for the
    // tool's own events (they name their tool session) nor for `bsi mcp`
    // (which looks at each call: the tool may start a new session).
    let own_lookup = matches!(
        cli.command,
        Command::Hook {
            action: HookAction::Agent(_)
        } | Command::Mcp { .. }
    );
    if ctx.env_session.is_none() && !own_lookup {
        ctx.find_tool_session();
    }
    if cli.quiet {
        ctx.verbosity = Verbosity::Quiet;
    } else if cli.verbose {
        ctx.verbosity = Verbosity::Verbose;
    }
    // A work tree added where git ran no post-checkout hook of bsi's: its
    // first command guards it. Not git's hooks and merge driver (git runs
    // them), nor doctor (it reports what is), nor what reads no repository.
    let mends = !matches!(
        cli.command,
        Command::Hook { .. }
            | Command::Doctor
            | Command::MergeDriver { .. }
            | Command::Completions { .. }
            | Command::Man
            | Command::Help { .. }
    );
    if mends {
        guard_later_work_tree(ctx);
    }
}

/// The one dispatch of a command line: an agent tool's event is answered
/// even when the context cannot be read (it fails open in the tool's
/// protocol); every other command needs the context.
fn run_in(ctx: Result<Ctx>, cli: Cli) -> Result<u8> {
    let mut ctx = match (ctx, &cli.command) {
        (Ok(ctx), _) => ctx,
        (
            Err(e),
            Command::Hook {
                action: HookAction::Agent(ev),
            },
        ) => {
            let (tool, kind) = ev.tool_and_kind();
            return Ok(agent_event::run(Err(e), tool, kind));
        }
        (Err(e), _) => return Err(e),
    };
    settle(&mut ctx, &cli);
    let code = run_command(&ctx, cli);
    ctx.say_notes();
    code
}

/// The command `cli` names, run in `ctx`.
fn run_command(ctx: &Ctx, cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Init => init::run(ctx),
        Command::Migrate => migrate::run(ctx),
        Command::Open(args) => open::run(ctx, args),
        Command::Close(args) => close::run(ctx, &args),
        Command::Renew(args) => renew::run(ctx, &args),
        Command::Watchdog { .. } => watchdog::run(ctx),
        Command::Release(args) => release::run(ctx, &args),
        Command::Status(args) if args.watch => watch::run(ctx, &args),
        Command::Status(args) => status::run(ctx, &args),
        Command::Whoami(args) => whoami::run(ctx, &args),
        Command::Serve(args) => serve::run(ctx, &args),
        Command::Doctor => doctor::run(ctx),
        Command::Log(args) => log::run(ctx, &args),
        Command::Hook {
            action: HookAction::Git(action),
        } => git_hook::run(ctx, action),
        Command::Hook {
            action: HookAction::Agent(ev),
        } => {
            let (tool, kind) = ev.tool_and_kind();
            Ok(agent_event::run(Ok(ctx.clone()), tool, kind))
        }
        Command::Verify(args) => verify::run(ctx, &args),
        Command::Commit(args) => commit::run(ctx, &args),
        Command::Recover(args) => recover::run(ctx, &args),
        Command::Completions { shell } => meta::completions(&ctx.out(), shell),
        Command::Man => meta::man(&ctx.out()),
        // Help wraps at the screen, or at 80 in a pipe (wrapped, not cut).
        Command::Help { command } => meta::help(
            &ctx.out(),
            &command,
            Some(ctx.screen.width())
                .filter(|w| output::is_bounded(*w))
                .unwrap_or(80),
        ),
        Command::Sync { .. } => sync::run(ctx),
        Command::Repair { from } => repair::run(ctx, from.as_deref()),
        Command::MergeDriver { base, ours, theirs } => {
            merge_driver::run(ctx, &base, &ours, &theirs)
        }
        Command::Agent { action } => agent_setup::run(ctx, action),
        Command::Mcp { tool } => mcp::run(ctx, mcp::Request { tool }),
    }
}
