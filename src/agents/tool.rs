//! [`AgentTool`]: everything bsi knows of one agent tool, behind one trait.
//! Each tool implements it in a file of its own ([`super::claude`],
//! [`super::codex`]…), and [`Tool::ALL`] lists them once; the rest of bsi
//! asks the trait, never which tool it holds.
//!
//! [`Tool`] is the handle the rest of bsi passes around: a copy of a
//! reference to one of those implementations, compared and shown by its
//! name. [`Places`] are the directories outside the work tree where tools
//! keep their user settings.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::doctor::Item;
use super::install::{self, HookEntry, HookLayout, Installed, Uninstalled};
use super::mcp_config::McpSettings;
use super::{Answer, Briefing, EventError, HookKind, PreEdit, SessionStart, Stop, Verdict};
use bsi_core::error::{Result, SettingsError};

/// Where bsi looks outside the work tree: the tools' user settings, their
/// trust records, bsi's own state.
#[derive(Debug, Clone, Default)]
pub struct Places {
    /// `PATH`.
    pub path: Option<std::ffi::OsString>,
    /// The user's home.
    pub home: Option<PathBuf>,
    /// `CODEX_HOME` (else `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// `COPILOT_HOME` (else `~/.copilot`).
    pub copilot_home: Option<PathBuf>,
    /// `CLAUDE_CONFIG_DIR` (else `~/.claude`).
    pub claude_config: Option<PathBuf>,
    /// `XDG_STATE_HOME` (else `~/.local/state`).
    pub state_home: Option<PathBuf>,
}

/// `self` as a trait object, for the default methods of [`AgentTool`]
/// (implemented for every tool: nothing to write).
pub trait AsAgentTool {
    /// `self`, as `&dyn AgentTool`.
    fn as_agent_tool(&self) -> &dyn AgentTool;
}

impl<T: AgentTool> AsAgentTool for T {
    fn as_agent_tool(&self) -> &dyn AgentTool {
        self
    }
}

/// One agent tool bsi answers: who it is, how its hook events read and its
/// answers are written, how bsi's hooks and MCP server are installed in
/// its settings and taken out again, and what the doctor checks.
///
/// The parsing and answers are pure; install, uninstall and the doctor's
/// checks read and write the tool's files. A method with a default is one
/// most tools share; a tool overrides it where it differs.
pub trait AgentTool: Sync + AsAgentTool {
    // --- who it is --------------------------------------------------------

    /// The name used on the command line (`--tool claude`) and in the
    /// session map.
    fn name(&self) -> &'static str;

    /// The product's name, for messages.
    fn title(&self) -> &'static str;

    /// The environment variable the tool (or bsi's plugin in it) sets, in
    /// every shell command its agent runs, to the session id its hooks are
    /// given: where the tool's process is not among the shell's ancestors
    /// (Codex runs the shell in a sandbox with a process namespace of its
    /// own), or one process runs many sessions (OpenCode), bsi finds the
    /// session by it.
    fn shell_session_var(&self) -> Option<&'static str> {
        None
    }

    // --- events and answers ----------------------------------------------

    /// Reads a pre-edit event. `cwd` stands in when the event names no
    /// directory. Never panics: a malformed event is an [`EventError`].
    fn parse_edit(&self, input: &str, cwd: &Path) -> Result<PreEdit, EventError>;

    /// The answer to a pre-edit event, in the tool's protocol (`refuses` is
    /// set by [`super::answer`]).
    fn answer(&self, verdict: &Verdict) -> Answer;

    /// Reads a session-start event.
    fn parse_session_start(&self, input: &str, cwd: &Path) -> Result<SessionStart, EventError>;

    /// The answer to a session-start event: the briefing.
    fn answer_session_start(&self, briefing: &Briefing) -> Answer;

    /// Reads a stop event.
    fn parse_stop(&self, input: &str, cwd: &Path) -> Result<Stop, EventError>;

    /// The answer to a stop event: with a reason, the agent is sent back
    /// with it; without one, it stops.
    fn answer_stop(&self, reason: Option<&str>) -> Answer;

    /// The answer of a session-start or stop hook that fails open: the
    /// session starts or stops without bsi's words, `warning` on stderr.
    fn fail_open_quietly(&self, kind: HookKind, warning: &str) -> Answer {
        let _ = kind;
        Answer::default().with_stderr(warning)
    }

    /// What a hook answers, as the tool's JSON, when bsi did not run:
    /// `text` says so (see [`install::hook_command`]).
    fn missing_answer(&self, kind: HookKind, text: &str) -> Value;

    /// How the agent's shell commands reach its bsi session, for the
    /// briefing. `by_process`: the session is recorded with the tool's
    /// process, which the agent's shell commands descend from; `env_file`:
    /// the file the tool gives a session-start hook for the environment of
    /// the session's shell commands (Claude Code's `CLAUDE_ENV_FILE`). May
    /// write that file.
    fn session_note(&self, session: &str, by_process: bool, env_file: Option<&Path>) -> String;

    /// Whether the tool may run one event of `kind` twice (an entry found
    /// in both the user's and the project's hooks), so that the second run
    /// must answer nothing.
    fn repeats_event(&self, kind: HookKind) -> bool {
        let _ = kind;
        false
    }

    /// For a tool that waits for no hook when a session starts: the tool's
    /// session id and directory of a pre-edit event, whose first call of a
    /// session carries the briefing ([`AgentTool::with_briefing`]). `None`
    /// for the other tools.
    fn first_call_session(&self, input: &str, cwd: &Path) -> Option<(String, PathBuf)> {
        let _ = (input, cwd);
        None
    }

    /// A pre-edit answer that also briefs the agent (see
    /// [`AgentTool::first_call_session`]).
    fn with_briefing(&self, answer: Answer, briefing: &str) -> Answer {
        let _ = briefing;
        answer
    }

    /// Whether the model hears what bsi says when it lets an edit through
    /// only after the edit: the message is then kept for the tool's
    /// after-edit event ([`AgentTool::after_edit_session`]).
    fn tells_model_after_edit(&self) -> bool {
        false
    }

    /// An after-edit event (Gemini CLI's `AfterTool`, which bsi's edit hook
    /// also receives): the tool's session id, and whether the edit may have
    /// claimed. `None` for any other event.
    fn after_edit_session(&self, input: &str) -> Option<(String, bool)> {
        let _ = input;
        None
    }

    /// The answer to an after-edit event: the message kept for the model,
    /// if any.
    fn answer_after_edit(&self, message: Option<&str>) -> Answer {
        let _ = message;
        Answer::default()
    }

    // --- bsi's hooks in its settings -------------------------------------

    /// The file that holds bsi's hooks, relative to the work tree root.
    fn settings_file(&self) -> &'static str;

    /// The file that holds bsi's hooks in the work tree at `root`.
    fn settings_path(&self, root: &Path) -> PathBuf {
        root.join(self.settings_file())
    }

    /// The hook entries bsi installs: event name, matcher, hook.
    fn entries(&self) -> &'static [HookEntry];

    /// How the entries sit in the settings file.
    fn hook_layout(&self) -> HookLayout;

    /// The commands of bsi's hooks in a settings file's text, one per hook
    /// kind installed (nothing when the text cannot be read).
    fn our_commands(&self, text: &str) -> Vec<String> {
        install::json_commands(self.as_agent_tool(), text)
    }

    /// `existing` (the file's text, `None` if absent) with bsi's hooks
    /// added; `None` when they are all there already. A hook of bsi's that
    /// runs another program path is pointed at `program`.
    fn merge(
        &self,
        existing: Option<&str>,
        program: &str,
    ) -> std::result::Result<Option<String>, SettingsError> {
        install::json_merge(self.as_agent_tool(), existing, program)
    }

    /// `existing` without bsi's hooks; `None` when it has none.
    fn unmerge(&self, existing: &str) -> std::result::Result<Option<String>, SettingsError> {
        install::json_unmerge(self.as_agent_tool(), existing)
    }

    /// Installs bsi's hooks in the work tree at `root`, the hooks running
    /// `program`. `common` is the common git directory.
    fn install(&self, root: &Path, common: &Path, program: &str) -> Result<(PathBuf, Installed)> {
        let path = root.join(self.settings_file());
        let records = install::records_in(common);
        install::install_file(self.as_agent_tool(), &path, &records, program).map(|did| (path, did))
    }

    /// Removes what [`AgentTool::install`] added in the work tree at
    /// `root`.
    fn uninstall(&self, root: &Path, common: &Path) -> Result<(PathBuf, Uninstalled)> {
        let path = root.join(self.settings_file());
        let records = install::records_in(common);
        install::uninstall_file(self.as_agent_tool(), &path, &records).map(|did| (path, did))
    }

    /// The user's settings file, which a user-level install (`bsi agent
    /// install --user`) edits: loaded by the tool wherever it runs,
    /// whatever the project's trust. `None` for a tool bsi has no
    /// user-level install for, or when the home is unknown.
    fn user_settings_file(&self, places: &Places) -> Option<PathBuf> {
        let _ = places;
        None
    }

    /// What a person must know after install: trust, sandbox.
    fn install_notes(&self, root: &Path, common: &Path) -> Vec<String> {
        let _ = (root, common);
        Vec::new()
    }

    /// What a person must know when an install changed `changed` of bsi's
    /// hooks already in `file` (of the work tree at `root`).
    fn changed_hooks_note(&self, changed: usize, file: &str, root: &Path) -> Option<String> {
        let _ = (changed, file, root);
        None
    }

    /// What a person must know after a user-level install into `shown`.
    fn user_install_note(&self, shown: &str) -> Option<String> {
        let _ = shown;
        None
    }

    // --- bsi's MCP server in its settings --------------------------------

    /// Where and how the tool's MCP settings hold bsi's server.
    fn mcp_settings(&self) -> McpSettings;

    // --- the doctor ------------------------------------------------------

    /// Whether the tool will run the hooks of the work tree at `root`
    /// (`settings`: the file that holds them): its trust.
    fn trust(&self, root: &Path, settings: &Path, places: &Places) -> Item;

    /// The shortcuts that start the tool without the project's hooks, for
    /// a tool with a user-level install, which none of them skips.
    fn project_shortcuts(&self) -> Option<&'static str> {
        None
    }

    /// What the user-level hooks still need to run (said after
    /// [`AgentTool::project_shortcuts`] when they are installed).
    fn user_hooks_note(&self) -> &'static str {
        ""
    }

    /// What records that a session of the tool reached bsi's hooks.
    fn reached_by(&self) -> &'static str {
        "session-start hook"
    }

    /// The doctor's check of bsi's MCP server, for a tool whose MCP
    /// settings are not in the work tree ([`McpSettings::UserOnly`]).
    fn user_mcp_item(&self, places: &Places) -> Option<Item> {
        let _ = places;
        None
    }
}

/// An agent tool bsi answers: one of [`Tool::ALL`].
#[derive(Clone, Copy)]
pub struct Tool(pub(super) &'static dyn AgentTool);

impl Tool {
    /// The tool named `name` (as [`AgentTool::name`] spells it).
    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl std::ops::Deref for Tool {
    type Target = dyn AgentTool;

    fn deref(&self) -> &(dyn AgentTool + 'static) {
        self.0
    }
}

impl PartialEq for Tool {
    fn eq(&self, other: &Tool) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Tool {}

impl std::hash::Hash for Tool {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The briefing's note on passing the session to bsi, for a tool whose
/// agent's shell commands run under the tool's own process (`title`): bsi
/// finds the session from that process when the session-start hook
/// recorded it (`by_process`); else `--session` on every bsi command, as
/// an `export` does not last from one shell command to the next.
pub fn session_note_by_process(title: &str, session: &str, by_process: bool) -> String {
    if by_process {
        format!(
            "the bsi commands you run in your shell act for it: bsi finds it from the {title} process they run under; `--session {session}` names it too"
        )
    } else {
        format!(
            "BSI_SESSION is not set in your shell, and an `export` does not last from one shell command to the next: add `--session {session}` to every bsi command"
        )
    }
}
