//! The agent tools (Claude Code, Codex CLI, Gemini CLI, Cursor, GitHub
//! Copilot CLI, Cline CLI, OpenCode, VS Code's agent hooks, Qwen Code, Kilo Code, Auggie): their hook
//! events turned into tool-neutral requests, bsi's answers written back in
//! each tool's own protocol, and bsi's hooks and MCP server installed in
//! their settings.
//!
//! Everything bsi knows of one tool is one implementation of [`AgentTool`]
//! ([`tool`]), in a file of its own: [`claude`], [`codex`], [`gemini`],
//! [`cursor`], [`copilot`], [`cline`], [`opencode`], [`vscode`], [`qwen`], [`kilo`], [`auggie`]. Each
//! parses that tool's events and renders its answers (both pure), and gives
//! its facts: its name and title, the variable that names its session in the agent's
//! shell, its hook entries and settings file, its MCP settings, its trust,
//! what a person must know after install. [`Tool::ALL`] lists the tools
//! once; the command line takes a tool by its name from that list. The
//! rest of bsi holds a [`Tool`] and asks the trait; it never tests which
//! tool it holds.
//!
//! Adding a tool: a file implementing [`AgentTool`], its `mod` line here,
//! and its constant in [`Tool::ALL`] (and, when it keeps user settings
//! under a directory an environment variable moves, that directory in
//! [`Places`]).
//!
//! The shared machinery the tools' implementations use: [`jsonc`] reads a
//! JSON (or JSONC) settings file keeping every member's bytes, and adds or
//! takes out one member as a splice; [`install`] merges
//! hook entries into a JSON settings file (laid out as the tool's
//! [`install::HookLayout`] says) and takes them out again, keeping what
//! undoes it (IO); [`mcp_config`] does the same for bsi's MCP server
//! ([`mcp_config::McpSettings`]); [`doctor`] checks what is installed and
//! asks each tool for its trust. [`patch`] reads Codex's `apply_patch`
//! text, [`shell_writes`] the files a shell command writes. [`new_text`]
//! computes what a file holds after an edit, so the guard can compare old
//! and new text. [`sessions`] maps a tool's session id to a bsi session
//! (IO).
//!
//! What this module does not do: decide. The caller asks the guard which
//! claims an edit touches and hands the [`Verdict`] to [`answer`].

pub mod auggie;
pub mod claude;
pub mod cline;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod doctor;
pub mod gemini;
pub mod install;
pub mod jsonc;
pub mod kilo;
pub mod mcp_config;
pub mod opencode;
pub mod patch;
pub mod qwen;
pub mod sessions;
pub mod shell_writes;
pub mod tool;
pub mod vscode;

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

use bsi_core::guard::discard::Discard;

pub use patch::{Hunk, HunkLine};
pub use tool::{AgentTool, AsAgentTool, Places, Tool};

impl Tool {
    /// Claude Code.
    pub const CLAUDE: Tool = Tool(&claude::Claude);
    /// Codex CLI.
    pub const CODEX: Tool = Tool(&codex::Codex);
    /// Gemini CLI.
    pub const GEMINI: Tool = Tool(&gemini::Gemini);
    /// Cursor.
    pub const CURSOR: Tool = Tool(&cursor::Cursor);
    /// GitHub Copilot CLI.
    pub const COPILOT: Tool = Tool(&copilot::Copilot);
    /// Cline CLI.
    pub const CLINE: Tool = Tool(&cline::Cline);
    /// OpenCode.
    pub const OPENCODE: Tool = Tool(&opencode::Opencode);
    /// VS Code's agent hooks.
    pub const VSCODE: Tool = Tool(&vscode::VsCode);
    /// Qwen Code.
    pub const QWEN: Tool = Tool(&qwen::Qwen);
    /// Kilo Code's CLI.
    pub const KILO: Tool = Tool(&kilo::Kilo);
    /// Auggie (Augment Code's CLI).
    pub const AUGGIE: Tool = Tool(&auggie::Auggie);

    /// Every tool, in the order the documentation lists them: the one list
    /// of the tools bsi knows (the command line takes its names).
    pub const ALL: [Tool; 11] = [
        Tool::CLAUDE,
        Tool::CODEX,
        Tool::GEMINI,
        Tool::CURSOR,
        Tool::COPILOT,
        Tool::CLINE,
        Tool::OPENCODE,
        Tool::VSCODE,
        Tool::QWEN,
        Tool::KILO,
        Tool::AUGGIE,
    ];
}

/// The hooks bsi installs in every tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookKind {
    /// Before a file edit: `bsi hook edit`.
    Edit,
    /// When a session starts: `bsi hook session-start`.
    SessionStart,
    /// When the agent is about to stop: `bsi hook stop`.
    Stop,
}

impl HookKind {
    /// The `bsi hook` subcommand that handles it.
    pub fn subcommand(self) -> &'static str {
        match self {
            HookKind::Edit => "edit",
            HookKind::SessionStart => "session-start",
            HookKind::Stop => "stop",
        }
    }
}

/// A hook event that could not be read. The caller fails open: the edit is
/// let through with this as the warning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    /// Stdin is not a JSON object.
    #[error("the hook event is not a JSON object: {0}")]
    NotJson(String),
    /// A field the format requires is missing.
    #[error("the hook event has no `{0}`")]
    Missing(&'static str),
    /// A field has the wrong type.
    #[error("`{field}` in the hook event is not {want}")]
    BadField {
        /// The field.
        field: &'static str,
        /// What it should be.
        want: &'static str,
    },
    /// The event is of another kind than the hook expects.
    #[error("the hook event is `{got}`, not `{want}`")]
    WrongEvent {
        /// `hook_event_name` as sent.
        got: String,
        /// What this hook handles.
        want: &'static str,
    },
    /// Codex's patch text could not be read.
    #[error("the apply_patch text is malformed: {0}")]
    Patch(String),
}

/// A pre-edit event, tool-neutral.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreEdit {
    /// The tool is about to change files.
    Edit(EditRequest),
    /// A shell command: the files it writes are read from its text
    /// ([`shell_writes`]), with the file system at hand, and judged like an
    /// edit; one that writes nothing is allowed untouched.
    Shell(ShellCommand),
    /// Any other tool call (a read, a search…): allowed untouched.
    Other {
        /// The tool's name for it, as sent.
        tool_name: String,
    },
}

/// A shell command an agent is about to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellCommand {
    /// The tool asking.
    pub tool: Tool,
    /// The tool's own session id.
    pub session_id: String,
    /// The directory the event names (else the caller's).
    pub cwd: PathBuf,
    /// The directory the command runs in: `cwd`, or the one the call names
    /// (Codex `workdir`, Gemini `dir_path`, Cursor's `cwd`).
    pub dir: PathBuf,
    /// The tool's name of the call (`Bash`, `run_shell_command`, `Shell`).
    pub tool_name: String,
    /// The command line.
    pub command: String,
}

impl ShellCommand {
    /// The files the command writes, as an edit request; `None` when it
    /// writes none bsi can read.
    pub fn edits(&self, disk: &dyn shell_writes::Disk) -> Option<EditRequest> {
        if !shell_writes::may_write(&self.command) {
            return None;
        }
        let edits = shell_writes::edits(&self.command, &self.dir, disk);
        (!edits.is_empty()).then(|| EditRequest {
            tool: self.tool,
            session_id: self.session_id.clone(),
            cwd: self.cwd.clone(),
            tool_name: self.tool_name.clone(),
            edits,
        })
    }
}

/// What an agent is about to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditRequest {
    /// The tool asking.
    pub tool: Tool,
    /// The tool's own session id (Claude's `session_id`, Cursor's
    /// `conversation_id`…): the key of the session map.
    pub session_id: String,
    /// The directory the event names (else the directory the caller gave).
    pub cwd: PathBuf,
    /// The tool's name of the call (`Edit`, `apply_patch`, `write_file`…).
    pub tool_name: String,
    /// Every file the call changes, in the order given.
    pub edits: Vec<FileEdit>,
}

/// One file an edit changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEdit {
    /// The path as the event gives it.
    pub given: String,
    /// That path resolved against the event's directory, `.` and `..`
    /// removed (lexically: nothing is read).
    pub path: PathBuf,
    /// What happens to the file.
    pub op: EditOp,
}

/// What an edit does to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditOp {
    /// Replace known strings, in order, each in the result of the one
    /// before (Claude `Edit` and `MultiEdit`, Gemini `replace`).
    Replace(Vec<Replacement>),
    /// Write the whole file (Claude `Write`, Gemini `write_file`, a patch's
    /// `*** Add File`).
    Write {
        /// The new content.
        content: String,
    },
    /// Change the file by patch hunks (a patch's `*** Update File`).
    Patch(Vec<Hunk>),
    /// Move the file to `to`, changed by `hunks` on the way (a patch's
    /// `*** Update File` with `*** Move to`). The file at `path` is gone
    /// afterwards; [`new_text`] gives the text that lands at `to`.
    Move {
        /// The destination, resolved like [`FileEdit::path`].
        to: PathBuf,
        /// The destination as given.
        to_given: String,
        /// Changes made on the way (may be empty).
        hunks: Vec<Hunk>,
    },
    /// Delete the file.
    Delete,
    /// A git move that takes uncommitted work out of the work tree (`git
    /// stash`, `git reset --hard`, `git clean`, a forced checkout): the
    /// edit's path is the directory it runs in, its paths are absolute
    /// until the door makes them the work tree's.
    Discard(Discard),
    /// A change bsi cannot compute (Claude `NotebookEdit`): judged at file
    /// level.
    WholeFile,
    /// Lines added at the end of the file (a shell `>>`, `tee -a`): their
    /// text when known, else [`shell_writes::UNKNOWN_APPEND`] stands for
    /// them, so the append touches the file's last section.
    Append {
        /// The text appended, when bsi can tell.
        content: Option<String>,
    },
    /// Text inserted before a line (Cline's `editor` with `insert_line`):
    /// line 1 is the start of the file, one past the last line its end.
    Insert {
        /// The one-based line the text goes before.
        line: u64,
        /// The text inserted.
        content: String,
    },
    /// The file rewritten with text bsi cannot know (a shell command:
    /// `sed -i`, `cp`, a `>` redirection…): every section of it, and the
    /// file, count as touched.
    Rewrite {
        /// What rewrites it, for the agent (`` `sed -i` ``).
        by: String,
    },
}

/// One string replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    /// The text replaced.
    pub old: String,
    /// What replaces it.
    pub new: String,
    /// Every occurrence, not only the first.
    pub all: bool,
}

impl FileEdit {
    /// Every path this edit touches: the file, and a move's destination.
    pub fn paths(&self) -> Vec<&Path> {
        match &self.op {
            EditOp::Move { to, .. } => vec![self.path.as_path(), to.as_path()],
            _ => vec![self.path.as_path()],
        }
    }
}

/// `path` relative to `root`, with `/` between its parts, as scopes name
/// files; `None` when it is outside `root` (or not UTF-8). Lexical: give
/// `root` in the form the tool uses (canonicalize both when in doubt).
pub fn relative_to(path: &Path, root: &Path) -> Option<String> {
    let rel = clean(path).strip_prefix(clean(root)).ok()?.to_path_buf();
    let parts = rel
        .components()
        .map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Why the new text of an edit is not known: the edit is then judged at file
/// level (it touches the whole file).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileLevel {
    /// A replaced string is not in the file (the tool would refuse the edit;
    /// bsi does not guess where it lands).
    #[error("the text to replace is not in the file: {}", excerpt(.0))]
    OldStringNotFound(String),
    /// A patch hunk does not match the file.
    #[error("a patch hunk does not match the file near: {}", excerpt(.0))]
    HunkNotFound(String),
    /// The file does not exist, and the edit needs its text.
    #[error("the file does not exist")]
    NoSuchFile,
    /// The tool's change cannot be computed (a notebook cell edit).
    #[error("bsi cannot compute this kind of change")]
    Opaque,
    /// A shell command rewrites the file with text bsi cannot know.
    #[error("bsi cannot tell what {0} writes")]
    Unknown(String),
}

fn excerpt(s: &str) -> String {
    let line = s.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let short: String = line.chars().take(60).collect();
    if short.len() < line.len() || s.lines().count() > 1 {
        format!("`{short}…`")
    } else {
        format!("`{short}`")
    }
}

/// The text a file holds after `edit`, given its text now (`None`: the file
/// does not exist). `Ok(None)`: the file is gone afterwards (a delete). For a
/// move, the text that lands at the destination. Pure.
pub fn new_text(edit: &FileEdit, current: Option<&str>) -> Result<Option<String>, FileLevel> {
    match &edit.op {
        EditOp::Write { content } => Ok(Some(content.clone())),
        EditOp::Delete => Ok(None),
        EditOp::WholeFile => Err(FileLevel::Opaque),
        EditOp::Rewrite { by } => Err(FileLevel::Unknown(by.clone())),
        // What it leaves is read from git by the door, file by file.
        EditOp::Discard(d) => Err(FileLevel::Unknown(d.said())),
        EditOp::Append { content } => Ok(Some(format!(
            "{}{}",
            current.unwrap_or(""),
            content.as_deref().unwrap_or(shell_writes::UNKNOWN_APPEND)
        ))),
        EditOp::Replace(reps) => replace_all(current, reps).map(Some),
        EditOp::Insert { line, content } => {
            insert_at(current.ok_or(FileLevel::NoSuchFile)?, *line, content).map(Some)
        }
        EditOp::Patch(hunks) | EditOp::Move { hunks, .. } => {
            let text = current.ok_or(FileLevel::NoSuchFile)?;
            patch::apply_hunks(text, hunks).map(Some)
        }
    }
}

/// `text` with `content` inserted before its one-based line `line`, as
/// Cline's editor does it: the file's lines (split at line breaks, the
/// text after the last one counting as a line) get the content's lines
/// spliced in, and are joined again. A line outside `1..=lines + 1` is
/// judged at file level: the editor refuses it too.
fn insert_at(text: &str, line: u64, content: &str) -> Result<String, FileLevel> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    let at = usize::try_from(line)
        .ok()
        .filter(|l| (1..=lines.len() + 1).contains(l))
        .ok_or(FileLevel::Opaque)?
        - 1;
    lines.splice(at..at, content.split('\n'));
    Ok(lines.join("\n"))
}

fn replace_all(current: Option<&str>, reps: &[Replacement]) -> Result<String, FileLevel> {
    let mut text = match current {
        Some(t) => t.to_string(),
        // An empty `old_string` on a missing file creates it (Claude Code).
        None if reps.first().is_some_and(|r| r.old.is_empty()) => String::new(),
        None => return Err(FileLevel::NoSuchFile),
    };
    for r in reps {
        if r.old.is_empty() {
            if text.is_empty() {
                text = r.new.clone();
                continue;
            }
            return Err(FileLevel::OldStringNotFound(String::new()));
        }
        if !text.contains(&r.old) {
            return Err(FileLevel::OldStringNotFound(r.old.clone()));
        }
        text = if r.all {
            text.replace(&r.old, &r.new)
        } else {
            text.replacen(&r.old, &r.new, 1)
        };
    }
    Ok(text)
}

/// What bsi decided about an edit: the seam between the guard and the tools.
/// No answer grants a permission: "allow" means bsi has no objection, and
/// the tool's own rules and approval prompts still apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Let it through, silently.
    Allow,
    /// Let it through and tell the agent what it now holds (claim on first
    /// write).
    Claimed {
        /// The message for the agent: what it now holds, and what next.
        message: String,
    },
    /// Refuse it. The reason is written for the agent: who holds what, the
    /// free alternatives, the next command.
    Deny {
        /// The agent-facing reason.
        reason: String,
    },
    /// Let it through with a warning (an error failed open).
    AllowWithWarning {
        /// What went wrong.
        warning: String,
    },
}

/// What a hook process answers: its exit code and output.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Answer {
    /// The exit code.
    pub exit_code: u8,
    /// Stdout (the tool's JSON, or nothing).
    pub stdout: String,
    /// Stderr (warnings for a person).
    pub stderr: String,
    /// It refuses what the tool asked (a [`Verdict::Deny`]).
    pub refuses: bool,
}

impl Answer {
    fn json(v: &Value) -> Answer {
        Answer {
            exit_code: 0,
            stdout: format!("{v}\n"),
            stderr: String::new(),
            refuses: false,
        }
    }

    fn with_stderr(mut self, msg: &str) -> Answer {
        self.stderr = format!("bsi: {}\n", msg.trim_end());
        self
    }
}

/// Reads a pre-edit event from `tool`. `cwd` stands in when the event names
/// no directory. Never panics: a malformed event is an [`EventError`].
pub fn parse_edit(tool: Tool, input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
    tool.parse_edit(input, cwd)
}

/// The answer to a pre-edit event, in `tool`'s protocol.
pub fn answer(tool: Tool, verdict: &Verdict) -> Answer {
    let mut a = tool.answer(verdict);
    a.refuses = matches!(verdict, Verdict::Deny { .. });
    a
}

/// A session-start event, tool-neutral.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStart {
    /// The tool.
    pub tool: Tool,
    /// The tool's session id.
    pub session_id: String,
    /// The directory the event names (else the caller's).
    pub cwd: PathBuf,
    /// Why it starts, as the tool says (`startup`, `resume`, `clear`…).
    pub source: Option<String>,
}

/// What bsi tells an agent when its session starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Briefing {
    /// Text put into the agent's context (claims of others, its own, stale
    /// claims that need a person).
    pub context: String,
    /// The agent's bsi session, named in the answer where the tool's
    /// protocol has a field for it; Claude Code's later shell commands get
    /// it through `CLAUDE_ENV_FILE` instead (see [`claude::env_file_line`]).
    pub session: Option<String>,
}

/// Reads a session-start event.
pub fn parse_session_start(
    tool: Tool,
    input: &str,
    cwd: &Path,
) -> Result<SessionStart, EventError> {
    tool.parse_session_start(input, cwd)
}

/// A session-start event of the hooks' common shape: `hook_event_name`
/// `want` (when given), the session id in the first of `id_keys`, the
/// reason in `source` or `trigger`.
fn session_start_event(
    tool: Tool,
    input: &str,
    cwd: &Path,
    want: &'static str,
    id_keys: &[&'static str],
) -> Result<SessionStart, EventError> {
    let o = object(input)?;
    check_event(&o, want)?;
    Ok(SessionStart {
        tool,
        session_id: first_str(&o, id_keys)?,
        cwd: event_cwd(&o, cwd)?,
        source: opt_str(&o, "source")?.or(opt_str(&o, "trigger")?),
    })
}

/// The answer to a session-start event.
pub fn answer_session_start(tool: Tool, briefing: &Briefing) -> Answer {
    tool.answer_session_start(briefing)
}

/// A stop event: the agent is about to end its turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    /// The tool.
    pub tool: Tool,
    /// The tool's session id.
    pub session_id: String,
    /// The directory the event names (else the caller's).
    pub cwd: PathBuf,
    /// The agent already went on once because of a stop hook
    /// (`stop_hook_active`, Cursor's `loop_count` > 0): bsi then lets it
    /// stop, so a stop can never loop.
    pub continued: bool,
}

/// Reads a stop event (Gemini CLI: `AfterAgent`, the end of a turn).
pub fn parse_stop(tool: Tool, input: &str, cwd: &Path) -> Result<Stop, EventError> {
    tool.parse_stop(input, cwd)
}

/// A stop event of the hooks' common shape: whether the agent already went
/// on once read by `continued` (which checks the event's name), the session
/// id in the first of `id_keys`.
fn stop_event(
    tool: Tool,
    input: &str,
    cwd: &Path,
    id_keys: &[&'static str],
    continued: &Continued,
) -> Result<Stop, EventError> {
    let o = object(input)?;
    let continued = continued(&o)?;
    Ok(Stop {
        tool,
        session_id: first_str(&o, id_keys)?,
        cwd: event_cwd(&o, cwd)?,
        continued,
    })
}

/// Reads from a stop event whether the agent already went on once.
type Continued = dyn Fn(&Map<String, Value>) -> Result<bool, EventError>;

/// `stop_hook_active` of a stop event named `want` (Claude Code, Codex,
/// Gemini CLI).
fn stop_hook_active(o: &Map<String, Value>, want: &'static str) -> Result<bool, EventError> {
    check_event(o, want)?;
    Ok(opt_bool(o, "stop_hook_active")?.unwrap_or(false))
}

/// The answer to a stop event: with a reason (the session still holds
/// claims), the agent is sent back once to commit and `bsi close`, or to say
/// why it keeps them; without one, or when it already went back once, it
/// stops.
pub fn answer_stop(tool: Tool, stop: &Stop, reason: Option<&str>) -> Answer {
    let reason = reason.filter(|r| !r.trim().is_empty() && !stop.continued);
    tool.answer_stop(reason)
}

/// The answer when a hook fails on its own error (a broken event, no
/// registry, a panic): the edit goes through with a warning, a session
/// starts or stops without bsi's words; never a block.
pub fn fail_open(tool: Tool, kind: HookKind, warning: &str) -> Answer {
    match kind {
        HookKind::Edit => answer(
            tool,
            &Verdict::AllowWithWarning {
                warning: warning.to_string(),
            },
        ),
        HookKind::SessionStart | HookKind::Stop => tool.fail_open_quietly(kind, warning),
    }
}

/// The first line of a reason, for the short message some tools show a
/// person.
fn first_line(s: &str) -> &str {
    s.lines().find(|l| !l.trim().is_empty()).unwrap_or(s).trim()
}

// --- reading events: shared helpers -------------------------------------

fn object(input: &str) -> Result<Map<String, Value>, EventError> {
    match serde_json::from_str::<Value>(input) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(EventError::NotJson("it is not an object".into())),
        Err(e) => Err(EventError::NotJson(e.to_string())),
    }
}

fn check_event(o: &Map<String, Value>, want: &'static str) -> Result<(), EventError> {
    match opt_str(o, "hook_event_name")? {
        Some(got) if got != want => Err(EventError::WrongEvent { got, want }),
        _ => Ok(()),
    }
}

fn opt_str(o: &Map<String, Value>, key: &'static str) -> Result<Option<String>, EventError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(EventError::BadField {
            field: key,
            want: "a string",
        }),
    }
}

fn req_str(o: &Map<String, Value>, key: &'static str) -> Result<String, EventError> {
    opt_str(o, key)?.ok_or(EventError::Missing(key))
}

fn first_str(o: &Map<String, Value>, keys: &[&'static str]) -> Result<String, EventError> {
    for k in keys {
        if let Some(s) = opt_str(o, k)?.filter(|s| !s.is_empty()) {
            return Ok(s);
        }
    }
    Err(EventError::Missing(
        keys.first().copied().unwrap_or("session_id"),
    ))
}

fn opt_bool(o: &Map<String, Value>, key: &'static str) -> Result<Option<bool>, EventError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(EventError::BadField {
            field: key,
            want: "true or false",
        }),
    }
}

fn req_obj<'a>(
    o: &'a Map<String, Value>,
    key: &'static str,
) -> Result<&'a Map<String, Value>, EventError> {
    match o.get(key) {
        Some(Value::Object(m)) => Ok(m),
        None | Some(Value::Null) => Err(EventError::Missing(key)),
        Some(_) => Err(EventError::BadField {
            field: key,
            want: "an object",
        }),
    }
}

/// The event's directory: `cwd`, else Cursor's first workspace root, else
/// the caller's.
fn event_cwd(o: &Map<String, Value>, fallback: &Path) -> Result<PathBuf, EventError> {
    if let Some(c) = opt_str(o, "cwd")?.filter(|c| !c.is_empty()) {
        return Ok(clean(&fallback.join(c)));
    }
    if let Some(Value::Array(roots)) = o.get("workspace_roots")
        && let Some(Value::String(r)) = roots.first()
    {
        return Ok(clean(&fallback.join(r)));
    }
    Ok(fallback.to_path_buf())
}

fn file_edit(cwd: &Path, given: String, op: EditOp) -> FileEdit {
    FileEdit {
        path: clean(&cwd.join(&given)),
        given,
        op,
    }
}

/// `.` and `..` removed without reading the file system.
pub fn clean(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A replacement from `old_string` / `new_string` / `replace_all`.
fn replacement(o: &Map<String, Value>) -> Result<Replacement, EventError> {
    Ok(Replacement {
        old: req_str(o, "old_string")?,
        new: req_str(o, "new_string")?,
        all: opt_bool(o, "replace_all")?.unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(op: EditOp) -> FileEdit {
        file_edit(Path::new("/brain"), "notes/a.md".into(), op)
    }

    fn rep(old: &str, new: &str, all: bool) -> Replacement {
        Replacement {
            old: old.into(),
            new: new.into(),
            all,
        }
    }

    #[test]
    fn paths_are_resolved_against_cwd_lexically() {
        let e = file_edit(
            Path::new("/brain/sub"),
            "../notes/./a.md".into(),
            EditOp::Delete,
        );
        assert_eq!(e.path, PathBuf::from("/brain/notes/a.md"));
        let abs = file_edit(
            Path::new("/brain"),
            "/elsewhere/b.md".into(),
            EditOp::Delete,
        );
        assert_eq!(abs.path, PathBuf::from("/elsewhere/b.md"));
    }

    #[test]
    fn paths_relative_to_the_brain() {
        let root = Path::new("/brain");
        assert_eq!(
            relative_to(Path::new("/brain/notes/a.md"), root),
            Some("notes/a.md".into())
        );
        assert_eq!(relative_to(Path::new("/elsewhere/a.md"), root), None);
        assert_eq!(relative_to(Path::new("/brain"), root), None);
        assert_eq!(
            relative_to(Path::new("/brain/x/../a.md"), Path::new("/brain/.")),
            Some("a.md".into())
        );
    }

    #[test]
    fn replace_changes_the_first_occurrence_only() {
        let e = edit(EditOp::Replace(vec![rep("x", "y", false)]));
        assert_eq!(new_text(&e, Some("x x x")), Ok(Some("y x x".into())));
    }

    #[test]
    fn replace_all_changes_every_occurrence() {
        let e = edit(EditOp::Replace(vec![rep("x", "y", true)]));
        assert_eq!(new_text(&e, Some("x x x")), Ok(Some("y y y".into())));
    }

    #[test]
    fn multi_edit_applies_each_replacement_to_the_result_of_the_last() {
        let e = edit(EditOp::Replace(vec![
            rep("# A\n", "# A\n\nnew\n", false),
            rep("new", "newer", false),
        ]));
        assert_eq!(
            new_text(&e, Some("# A\n\n# B\n")),
            Ok(Some("# A\n\nnewer\n\n# B\n".into()))
        );
    }

    #[test]
    fn an_old_string_not_found_is_judged_at_file_level() {
        let e = edit(EditOp::Replace(vec![rep("absent", "y", false)]));
        assert_eq!(
            new_text(&e, Some("text")),
            Err(FileLevel::OldStringNotFound("absent".into()))
        );
        // A later replacement may miss because of an earlier one.
        let e = edit(EditOp::Replace(vec![
            rep("a", "b", true),
            rep("a", "c", false),
        ]));
        assert!(matches!(
            new_text(&e, Some("a")),
            Err(FileLevel::OldStringNotFound(_))
        ));
        let e = edit(EditOp::Replace(vec![rep("a", "b", false)]));
        assert_eq!(new_text(&e, None), Err(FileLevel::NoSuchFile));
    }

    #[test]
    fn an_empty_old_string_creates_a_missing_file() {
        let e = edit(EditOp::Replace(vec![rep("", "# New\n", false)]));
        assert_eq!(new_text(&e, None), Ok(Some("# New\n".into())));
        assert!(new_text(&e, Some("full")).is_err());
    }

    #[test]
    fn an_insert_lands_before_its_line_as_clines_editor_puts_it() {
        let ins = |line| {
            edit(EditOp::Insert {
                line,
                content: "new".into(),
            })
        };
        assert_eq!(
            new_text(&ins(1), Some("a\nb\n")),
            Ok(Some("new\na\nb\n".into()))
        );
        assert_eq!(
            new_text(&ins(3), Some("a\nb\n")),
            Ok(Some("a\nb\nnew\n".into()))
        );
        assert_eq!(
            new_text(&ins(4), Some("a\nb\n")),
            Ok(Some("a\nb\n\nnew".into()))
        );
        assert_eq!(new_text(&ins(5), Some("a\nb\n")), Err(FileLevel::Opaque));
        assert_eq!(new_text(&ins(0), Some("a\n")), Err(FileLevel::Opaque));
        assert_eq!(new_text(&ins(1), None), Err(FileLevel::NoSuchFile));
    }

    #[test]
    fn write_delete_and_notebook() {
        let w = edit(EditOp::Write {
            content: "c".into(),
        });
        assert_eq!(new_text(&w, None), Ok(Some("c".into())));
        assert_eq!(new_text(&edit(EditOp::Delete), Some("c")), Ok(None));
        assert_eq!(
            new_text(&edit(EditOp::WholeFile), Some("c")),
            Err(FileLevel::Opaque)
        );
    }

    #[test]
    fn a_stop_goes_back_only_once() {
        let stop = |continued| Stop {
            tool: Tool::CLAUDE,
            session_id: "s".into(),
            cwd: PathBuf::from("/"),
            continued,
        };
        for tool in [Tool::CLAUDE, Tool::CODEX, Tool::CURSOR] {
            let first = answer_stop(tool, &stop(false), Some("close your claims"));
            assert!(
                first.stdout.contains("close your claims"),
                "{tool}: {first:?}"
            );
            let again = answer_stop(tool, &stop(true), Some("close your claims"));
            assert_eq!(again, Answer::default(), "{tool}");
            assert_eq!(answer_stop(tool, &stop(false), None), Answer::default());
        }
    }

    #[test]
    fn tool_names_round_trip() {
        for t in Tool::ALL {
            assert_eq!(Tool::from_name(t.name()), Some(t));
        }
        assert_eq!(Tool::from_name("vim"), None);
    }

    #[test]
    fn malformed_events_are_errors_not_panics() {
        for tool in Tool::ALL {
            for input in ["", "null", "[1]", "{", "{\"tool_input\": 3}", "\u{0}"] {
                assert!(
                    parse_edit(tool, input, Path::new("/")).is_err(),
                    "{tool} {input:?}"
                );
                assert!(parse_session_start(tool, input, Path::new("/")).is_err());
                assert!(parse_stop(tool, input, Path::new("/")).is_err());
            }
        }
    }

    fn any_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            prop_oneof![
                Just("PreToolUse"),
                Just("BeforeTool"),
                Just("preToolUse"),
                Just("Edit"),
                Just("MultiEdit"),
                Just("Write"),
                Just("apply_patch"),
                Just("replace"),
                Just("Delete"),
                Just("tool_call"),
                Just("editor"),
                Just("run_commands"),
                Just("*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** End Patch"),
                Just(""),
            ]
            .prop_map(|s| Value::String(s.into())),
            ".{0,20}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 6, |inner| {
            let keys = prop_oneof![
                Just("hook_event_name"),
                Just("session_id"),
                Just("conversation_id"),
                Just("cwd"),
                Just("tool_name"),
                Just("tool_input"),
                Just("file_path"),
                Just("old_string"),
                Just("new_string"),
                Just("replace_all"),
                Just("edits"),
                Just("content"),
                Just("command"),
                Just("stop_hook_active"),
                Just("loop_count"),
                Just("expected_replacements"),
                Just("workspace_roots"),
                Just("hookName"),
                Just("taskId"),
                Just("workspaceRoots"),
                Just("tool_call"),
                Just("name"),
                Just("input"),
                Just("path"),
                Just("old_text"),
                Just("new_text"),
                Just("insert_line"),
                Just("commands"),
            ];
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec((keys, inner), 0..8).prop_map(|kv| {
                    Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                }),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn no_event_makes_a_hook_panic(v in any_json(), text in proptest::option::of("[a-z\n]{0,30}")) {
            let input = v.to_string();
            for tool in Tool::ALL {
                if let Ok(PreEdit::Edit(r)) = parse_edit(tool, &input, Path::new("/b")) {
                    for e in &r.edits {
                        let _ = new_text(e, text.as_deref());
                    }
                }
                let _ = parse_session_start(tool, &input, Path::new("/b"));
                let _ = parse_stop(tool, &input, Path::new("/b"));
            }
        }

        #[test]
        fn no_patch_makes_a_hook_panic(
            body in proptest::collection::vec("[ +@*a-z-]{0,6}", 0..16),
            text in "[a-z \n]{0,60}",
        ) {
            let input = format!("*** Begin Patch\n*** Update File: a.md\n{}\n*** End Patch\n", body.join("\n"));
            if let Ok(edits) = codex::patch_edits(&input, Path::new("/b")) {
                for e in &edits {
                    let _ = new_text(e, Some(&text));
                }
            }
        }
    }

    #[test]
    fn fail_open_never_blocks() {
        for tool in Tool::ALL {
            for kind in [HookKind::Edit, HookKind::SessionStart, HookKind::Stop] {
                let a = fail_open(tool, kind, "registry unreadable");
                assert_eq!(a.exit_code, 0, "{tool} {kind:?}");
                assert!(a.stderr.contains("registry unreadable"));
                assert!(!a.stdout.contains("deny") && !a.stdout.contains("block"));
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests_support {
    /// A fixture of tests/fixtures/agents.
    pub(crate) fn fixture(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/agents")
            .join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The edit the fixture `name` of `tool` asks for, as its hook reads it.
    pub(crate) fn edit_request(tool: super::Tool, name: &str) -> super::EditRequest {
        match super::parse_edit(tool, &fixture(name), std::path::Path::new("/elsewhere")) {
            Ok(super::PreEdit::Edit(r)) => r,
            other => panic!("{name}: {other:?}"),
        }
    }
}
