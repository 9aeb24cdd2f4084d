//! The command line: clap definitions only. Doc comments are the help text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::agents::{HookKind, Tool};
use bsi_core::values::{AgentName, SessionId, Ttl};

/// Brain Session Index: claims on the parts of a git-tracked markdown brain,
/// so parallel sessions (agents and people) do not edit the same thing.
///
/// A session declares what it will edit (`bsi open`), bsi refuses overlapping
/// claims, marks expired ones stale without ever freeing them by itself
/// (`bsi watchdog`), and commits every change of BRAIN-INDEX.md with git, so
/// `bsi log` is the journal of who worked where.
///
/// The registry lives on its own branch (`brain-index`), so every branch and
/// work tree sees the same claims; a readable copy sits at the brain root.
/// With a remote, every change is pushed to its registry branch first: the
/// remote decides the order. Content branches are never touched.
///
/// Exit codes: 0 ok, 1 error, 2 usage (or a bad .bsi.toml), 3 claim refused
/// (conflict; also a commit refused by the pre-commit hook, or colliding
/// claims found by `sync`, `status` or `watchdog`), 4 stale claims found, 5 registry unreadable or
/// invalid (nothing written), 6 `verify` found changes outside the session's
/// claims, 7 recorded locally but not published (remote unreachable; `bsi
/// sync` publishes it later), 8 the remote stayed busy for the whole publish
/// timeout (nothing written: retry), 9 `doctor` found this work tree's guard
/// off.
#[derive(Debug, Parser)]
#[command(
    name = "bsi",
    version,
    propagate_version = true,
    max_term_width = 100,
    disable_help_subcommand = true
)]
pub struct Cli {
    /// Where the readable copy of the registry goes; its directory is the brain root. A relative path starts at the root of the git work tree, wherever bsi runs [default: BRAIN-INDEX.md in the brain root `bsi init` recorded, else at the root of the git work tree].
    #[arg(long, global = true, env = "BSI_REGISTRY", value_name = "PATH")]
    pub registry: Option<PathBuf>,

    /// Print nothing on stdout but what was asked for (JSON, the --shell lines, the views of status and whoami without their next steps); errors still go to stderr.
    #[arg(long, short, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Say more: the commit of each registry change; levels, opening times and whole notes in status; authors and trailers in log; the errors an error comes from (`Caused by:`).
    #[arg(long, short, global = true)]
    pub verbose: bool,

    /// The session this command acts for, in every command: what
    /// `export BSI_SESSION=ID` does for one command [default: $BSI_SESSION;
    /// for open, else a new sess-YYYYMMDD-HHMM-xxxx].
    #[arg(
        long = "session",
        id = "session_flag",
        global = true,
        value_name = "ID"
    )]
    pub session_flag: Option<SessionId>,

    /// The git remote whose registry branch holds the claims [default: git config bsi.remote, else .bsi.toml remote, else the upstream of the registry branch, else the one remote that holds the registry branch (then recorded as bsi.remote), else the only remote; never the checked-out branch's upstream; none: local only].
    #[arg(long, global = true, env = "BSI_REMOTE", value_name = "NAME")]
    pub remote: Option<String>,

    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Output format shared by the commands that have one.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct JsonFlag {
    /// Print one JSON document on stdout instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create the registry: an empty BRAIN-INDEX.md on its own branch
    /// (`brain-index`), committed, and published when there is a remote.
    ///
    /// Refused when the brain already has one (here or on the remote); a
    /// brain that still tracks BRAIN-INDEX.md on its content branch is moved
    /// with `bsi migrate`.
    Init,

    /// Move a tracked BRAIN-INDEX.md (the layout of older bsi) to the
    /// registry branch: every row and byte kept, then one commit on the
    /// current branch that untracks the file and changes nothing else.
    ///
    /// A person runs it once per brain; it publishes the registry branch when
    /// there is a remote. Push the untracking commit with your content.
    Migrate,

    /// Claim one or more scopes for a session, all or none.
    ///
    /// SCOPE is `global`, a directory `dir/sub/`, a file `dir/file.md`, or a
    /// section `dir/file.md#Heading text`, relative to the current directory.
    /// A claim that overlaps another session's claim (active or stale) is
    /// refused with exit 3, naming the holder and proposing free scopes.
    Open(OpenArgs),

    /// Close a session's claims: they move to the history as `completed`.
    Close(CloseArgs),

    /// Extend a session's active claims, never past 8h after they were opened.
    Renew(RenewArgs),

    /// Move expired claims (and any older than 8h) to the stale table.
    ///
    /// Prints `N active, M stale`, names the claims it marks now, then lists
    /// every stale claim as `status` does, and exits 4 when M > 0: stale
    /// claims are never freed by bsi, a person decides (`bsi release`).
    Watchdog {
        #[command(flatten)]
        out: JsonFlag,
    },

    /// A person frees a stale claim: it moves to the history as `released`.
    Release(ReleaseArgs),

    /// Show active and stale claims with the time left, grouped by session. Read only.
    ///
    /// With a remote, the registry branch is fetched first (a few seconds at
    /// most); when the remote cannot be reached the local state is shown
    /// with its age. The one write it makes: a registry this clone made
    /// before the remote existed is published to it, and said.
    ///
    /// One block per session, its scopes below it, with agent, expiry (in
    /// this machine's time zone, named in the header), time left and note,
    /// fitted to the screen: $COLUMNS when set, else the terminal's width
    /// (notes and agents are shortened, never scopes or session ids; a
    /// scope wider than half the screen takes a line of its own; on a
    /// screen too narrow for notes their column is left out, and `bsi
    /// status | cat` or `--json` shows them; `-v` shortens nothing and adds
    /// the level and the opening time). In a pipe or a file nothing is
    /// fitted or cut. Stale claims are marked STALE; an active claim
    /// past its expiry shows `overdue` until the watchdog moves it. Colours
    /// by urgency only on a terminal (or with CLICOLOR_FORCE=1), never when
    /// NO_COLOR is set. Exits 3 while two claims collide. When this clone
    /// installed bsi's git hooks and one is not reached in this work tree, a
    /// last line says so (`bsi doctor` says what to do).
    Status(StatusArgs),

    /// Show the current session ($BSI_SESSION), the agent holding its claims, and the claims.
    Whoami(WhoamiArgs),

    /// Serve a live page of the brain on this machine (127.0.0.1 only).
    ///
    /// The brain as a tree of folders, files and sections, each held part
    /// marked with its session, agent, note and time left (stale and
    /// overdue claims marked, sections reserved before they are written),
    /// the queue in order, drift and the latest writes, a row each. The
    /// page updates by itself within a few seconds of any change, another
    /// clone's included (the remote is read every 3s, as `status --watch`
    /// does), and says when it last read the remote. Read only: the page
    /// has no action. Prints the address, then serves until Ctrl-C.
    /// `bsi status --html` writes the same page once, for a CI artefact.
    Serve(ServeArgs),

    /// Check that this work tree's guard is on, and say how to mend it.
    ///
    /// Finds where git runs this work tree's hooks (core.hooksPath, husky,
    /// lefthook, the pre-commit framework) and checks that each of bsi's git
    /// hooks is reached there: installed, executable, not shadowed by a hook
    /// manager or moved aside. Each problem comes with the command that
    /// mends it. Exits 9 when the guard is off, 0 when it is on. Reads files
    /// only: runs no hook and no other program.
    Doctor,

    /// Git hooks that keep commits inside their claims: install, uninstall,
    /// or run one (what the installed hooks do).
    Hook {
        /// What to do.
        #[command(subcommand)]
        action: HookAction,
    },

    /// Commit the session's own lines from a work tree several sessions share.
    ///
    /// Of the work tree's uncommitted changes (under PATHs, else all of
    /// them), commits the hunks inside the session's claims — whole files,
    /// sections, new files in claimed folders — with its `BSI-Session`
    /// trailer, through `git commit` (every hook runs). Every other hunk
    /// stays in the work tree as it is and is listed: another session's,
    /// with its holder, or in no one's claim, with the claim that would make
    /// it the session's. What other sessions staged is not committed.
    /// Exits 1, writing nothing, when nothing of the session's is there.
    Commit(CommitArgs),

    /// Put a session's uncommitted lines back into the work tree.
    ///
    /// bsi keeps a copy of each session's uncommitted work inside its
    /// claims (under refs/bsi/keep/SESSION in this clone, never pushed),
    /// refreshed from its edits, its agent's stops, `commit`, `close` and
    /// `status`. After a `git stash`, a `git reset --hard`, a crash or a bad
    /// revert took that work out of the files, this puts the session's own
    /// lines back, section by section, only where the file has not changed
    /// since: newer lines are never written over, and are listed. Only the
    /// work tree is written; the index and HEAD stay as they are.
    Recover(RecoverArgs),

    /// List what a session changed that its claims do not cover.
    ///
    /// Reads the commits carrying the session's `BSI-Session` trailer, from
    /// HEAD back to the commit that opened its claims (and, with --worktree,
    /// the uncommitted changes). A file outside every scope is an overflow;
    /// in a file where the session holds only sections, a hunk outside them
    /// is one too, shown with its lines and heading. Exits 6 on overflow.
    Verify(VerifyArgs),

    /// Bring the local registry and the remote's into agreement.
    ///
    /// Publishes changes recorded while the remote was unreachable, takes in
    /// the other machines' changes, and reports claims of two machines that
    /// overlap (both are kept; exit 3 until a person settles them).
    Sync {
        #[command(flatten)]
        out: JsonFlag,
    },

    /// Fix the registry by hand, safely: edited in $EDITOR or --from FILE.
    ///
    /// The registry's text is opened in $VISUAL or $EDITOR (or read from
    /// --from FILE, for scripts and agents), checked, then published.
    ///
    /// The edited text must parse (a refusal names the line and why); it is
    /// published only if nobody wrote the registry since it was read, so an
    /// edit never undoes a claim made meanwhile.
    Repair {
        /// Take the new registry text from this file instead of an editor.
        #[arg(long, value_name = "FILE")]
        from: Option<PathBuf>,
    },

    /// Git's merge driver for the registry (registered by `bsi hook install`):
    /// merges the three tables by rows into OURS.
    ///
    /// Claims added on both sides are kept, a claim closed or released on one
    /// side is closed, history rows are united. Other text follows git's line
    /// merge; when it conflicts, the driver fails with conflict markers.
    MergeDriver {
        /// The common ancestor (%O).
        base: PathBuf,
        /// Our version, replaced by the result (%A).
        ours: PathBuf,
        /// Their version (%B).
        theirs: PathBuf,
    },

    /// The journal of sessions: the git history of the registry.
    ///
    /// One row per write (a commit several writers shared gives a row for
    /// each): time (in this machine's time zone), action, the agent that
    /// acted, session and every scope, fitted to the screen ($COLUMNS when
    /// set, else the terminal's width) by wrapping, never by cutting; whole
    /// on one line in a pipe or a file. `-v` adds the commit that
    /// carried each write, its git author and the write's trailers.
    Log(LogArgs),

    /// Print a shell completion script.
    ///
    /// bash: `bsi completions bash > ~/.local/share/bash-completion/completions/bsi`;
    /// zsh: `bsi completions zsh > ~/.zfunc/_bsi`; fish:
    /// `bsi completions fish > ~/.config/fish/completions/bsi.fish`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },

    /// Print the man page (roff): `bsi man > bsi.1 && man ./bsi.1`.
    Man,

    /// Print the help of bsi, or of one command (`bsi help open`).
    Help {
        /// The command, and its subcommand if it has some (`bsi help hook install`).
        #[arg(value_name = "COMMAND")]
        command: Vec<String>,
    },

    /// Serve the claims as MCP tools to an agent tool, over stdio.
    ///
    /// A Model Context Protocol server on stdin and stdout, for the agent's
    /// own session. Tools: claim, close (or release_mine), renew, status, check, whoami;
    /// the resource bsi://claims, with a notice when the registry branch
    /// moves. Each tool runs the same command as the command line. The
    /// session is --session or $BSI_SESSION, else the one the tool's
    /// session-start hook recorded for the tool process that started the
    /// server (--tool), else the one the first claim names. `bsi agent
    /// install` registers it in the tool's MCP settings.
    Mcp {
        /// The agent tool that starts the server.
        #[arg(long, value_enum)]
        tool: Option<Tool>,
    },

    /// Hooks inside the agent tools: install or uninstall them.
    ///
    /// For Claude Code, Codex CLI, Gemini CLI, Cursor and GitHub Copilot CLI, in the tool's
    /// project settings at the work tree root (with --user, for Claude Code, Codex CLI and Gemini
    /// CLI, in the user's settings: every brain on the machine); for Cline CLI, a hook file in
    /// `.clinerules/hooks/`; for OpenCode, a plugin in `.opencode/plugins/`. The hooks run bsi before each file edit (refusing an edit inside
    /// another session's claim), when a session starts (telling the agent
    /// who holds what) and when it stops (reminding it to close its claims).
    Agent {
        /// What to do.
        #[command(subcommand)]
        action: AgentAction,
    },
}

/// The arguments of `bsi open`.
#[derive(Debug, Args)]
pub struct OpenArgs {
    /// What the session will edit.
    #[arg(required = true, value_name = "SCOPE")]
    pub scopes: Vec<String>,
    /// How long the claim lasts: 2h, 4h, 8h, 90m, or short, deep, long (at most 8h)
    /// [default: default_ttl of .bsi.toml, else 2h].
    #[arg(long, value_name = "DUR")]
    pub ttl: Option<Ttl>,
    /// Who holds the claim [default: $BSI_AGENT, else default_agent of .bsi.toml, else
    /// user@host].
    #[arg(long, value_name = "NAME")]
    pub agent: Option<AgentName>,
    /// A short note shown beside the claim.
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// When refused, wait in the queue until granted or DUR has passed (exit 3 then): 30s,
    /// 10m, 1h. The request takes a place in the registry's queue, with a 30s lease renewed
    /// while it waits; it is granted in order of arrival once nothing blocks it. Reads the
    /// local registry branch every 200 ms; with a remote, the first in line fetches it every
    /// 0.5 s, the others with backoff up to 5 s.
    #[arg(long, value_name = "DUR")]
    pub wait: Option<String>,
    /// With --wait: take no place in the queue; retry whenever the registry changes and
    /// write nothing until granted (whoever asks first after the holder closes wins).
    #[arg(long, requires = "wait")]
    pub no_queue: bool,
    /// Print only `export BSI_SESSION=ID` (and `export BSI_AGENT=NAME` when --agent is
    /// given) on stdout, for `eval "$(bsi open SCOPE --shell)"`; messages go to stderr. When bsi does not exit 0, stdout also gets `(exit N)`, so the
    /// `eval` fails with the same code.
    #[arg(long, conflicts_with = "json")]
    pub shell: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// The arguments of `bsi close`.
#[derive(Debug, Args)]
pub struct CloseArgs {
    /// The session [default: $BSI_SESSION].
    pub session: Option<SessionId>,
    /// Close only this scope.
    #[arg(long, value_name = "SCOPE")]
    pub scope: Option<String>,
    /// Close another session's claims too (recorded as a forced close; that session's `whoami` says so).
    #[arg(long)]
    pub force: bool,
    /// Who is acting [default: $BSI_AGENT, else default_agent of .bsi.toml, else user@host].
    #[arg(long, value_name = "NAME")]
    pub agent: Option<AgentName>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// The arguments of `bsi renew`.
#[derive(Debug, Args)]
pub struct RenewArgs {
    /// The session [default: $BSI_SESSION].
    pub session: Option<SessionId>,
    /// New time left from now [default: default_ttl of .bsi.toml, else 2h].
    #[arg(long, value_name = "DUR")]
    pub ttl: Option<Ttl>,
    /// Renew only this scope.
    #[arg(long, value_name = "SCOPE")]
    pub scope: Option<String>,
    /// Renew another session's claims too (recorded as a forced renew).
    #[arg(long)]
    pub force: bool,
    /// Who is acting [default: $BSI_AGENT, else default_agent of .bsi.toml, else user@host].
    #[arg(long, value_name = "NAME")]
    pub agent: Option<AgentName>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// The arguments of `bsi release`.
#[derive(Debug, Args)]
pub struct ReleaseArgs {
    /// The session whose claims are released.
    // Read as written, not as a `SessionId`: a row edited by hand can
    // hold an id that breaks the rule, and a person must be able to
    // release it; an id the registry lacks is checked by `release`.
    pub session: String,
    /// Confirm the release; without it bsi only says what it would free (a preview, exit 0).
    #[arg(long)]
    pub confirm: bool,
    /// Release only this scope.
    #[arg(long, value_name = "SCOPE")]
    pub scope: Option<String>,
    /// Also release active claims (status `force-released`).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// The arguments of `bsi status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Draw each claim where it sits in the brain's tree: the claimed
    /// paths with their folders, and in each folder a count of the rest.
    #[arg(long, conflicts_with = "json")]
    pub tree: bool,
    /// Do not fetch the registry branch first: show the state as last fetched.
    #[arg(long)]
    pub offline: bool,
    /// A live view in the terminal: redrawn when the registry changes in
    /// this clone, and after each fetch from the remote (every 3s), with
    /// the age of the view; what changed is said and highlighted;
    /// collisions and stale claims first. `q` or Ctrl-C quits.
    #[arg(long, conflicts_with_all = ["json", "tree"])]
    pub watch: bool,
    /// Write the page `bsi serve` serves, once, as a static HTML document
    /// on stdout (for a CI artefact: `bsi status --html > brain.html`).
    #[arg(long, conflicts_with_all = ["json", "tree", "watch"])]
    pub html: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// The arguments of `bsi serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The port on 127.0.0.1; 0 lets the system choose a free one.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub port: u16,
    /// Do not fetch the registry branch: show this clone's copy as last fetched.
    #[arg(long)]
    pub offline: bool,
}

/// The arguments of `bsi whoami`.
#[derive(Debug, Args)]
pub struct WhoamiArgs {
    /// Do not fetch the registry branch first: show the state as last fetched.
    #[arg(long)]
    pub offline: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// The arguments of `bsi commit`.
#[derive(Debug, Args)]
pub struct CommitArgs {
    /// The commit message [default: "SESSION: its lines of FILES"].
    #[arg(long, short = 'm', value_name = "MSG")]
    pub message: Option<String>,
    /// Only changes under these paths (files or folders).
    pub paths: Vec<std::path::PathBuf>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// The arguments of `bsi recover`.
#[derive(Debug, Args)]
pub struct RecoverArgs {
    /// The session [default: $BSI_SESSION].
    pub session: Option<SessionId>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// The arguments of `bsi verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The session [default: $BSI_SESSION].
    pub session: Option<SessionId>,
    /// Also check the uncommitted changes of the work tree.
    #[arg(long)]
    pub worktree: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// The arguments of `bsi log`.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// Show at most N writes.
    #[arg(long, short = 'n', value_name = "N")]
    pub limit: Option<usize>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// `bsi hook` actions: git's hooks, then the agent tools' events.
#[derive(Debug, Subcommand)]
pub enum HookAction {
    /// What git's hooks run, and installing them.
    #[command(flatten)]
    Git(GitHook),
    /// What the agent tools' hooks run.
    #[command(flatten)]
    Agent(AgentEvent),
}

/// `bsi hook` actions of git's hooks.
#[derive(Debug, Subcommand)]
pub enum GitHook {
    /// Install the pre-commit, pre-merge-commit, reference-transaction and
    /// prepare-commit-msg hooks (honours core.hooksPath; post-checkout too
    /// where each work tree has its own hooks folder). A hook already there
    /// is kept and runs first.
    Install,
    /// Remove bsi's hooks and put back the hooks they chained.
    Uninstall,
    /// Check the staged changes against the claims (the pre-commit hook).
    ///
    /// Refuses (exit 3) a change inside another session's claim, active or
    /// stale, and any change to the registry. Warns about changes outside
    /// the scopes of $BSI_SESSION. `git config bsi.hookMode warn` reports
    /// without refusing; `strict` also refuses changes outside the session's
    /// scopes; `git -c bsi.hookMode=off commit` skips the check once.
    PreCommit {
        /// Ignored (file names some hook runners pass).
        #[arg(hide = true)]
        files: Vec<PathBuf>,
    },
    /// Check a merge git concludes by itself (the pre-merge-commit hook).
    ///
    /// Judges what the merge changes of its own, as the pre-commit hook
    /// judges a merge concluded with `git commit`: a part of a file that
    /// differs from the first parent and that no merged branch brought as
    /// it is, or that reverts a merged branch's work.
    PreMergeCommit,
    /// Check the commits a branch update lands (the reference-transaction
    /// hook): revert, cherry-pick, rebase, am, update-ref.
    ///
    /// In the `prepared` state, for each branch (`refs/heads/*`, not the
    /// registry branch) moved to commits that no other branch, tag or
    /// remote-tracking branch has, judges each such commit as the pre-commit
    /// hook judges a commit, and refuses the update (exit 3) when one lands
    /// a change inside another session's claim. A commit the pre-commit hook
    /// judged in the same git command is not judged again. Reads the
    /// updates (`OLD NEW REF` lines) on stdin.
    ReferenceTransaction {
        /// The transaction's state: prepared, committed or aborted.
        state: String,
    },
    /// Guard a new work tree (the post-checkout hook, installed where each
    /// work tree has its own hooks folder: a relative core.hooksPath git
    /// does not track).
    ///
    /// On the first checkout of a work tree (`git worktree add`: the
    /// previous HEAD is all zeros), installs bsi's hooks in its folder when
    /// this clone's guard is installed. Never fails the checkout.
    PostCheckout {
        /// The previous HEAD.
        previous: String,
        /// The new HEAD.
        new: Option<String>,
        /// 1 for a branch checkout, 0 for a file checkout.
        branch: Option<String>,
    },
    /// Add a `BSI-Session: $BSI_SESSION` trailer to the commit message, once
    /// (the prepare-commit-msg hook).
    PrepareCommitMsg {
        /// The file holding the commit message.
        file: PathBuf,
        /// Where the message comes from (message, template, merge, squash, commit).
        source: Option<String>,
        /// The commit being amended or reused.
        commit: Option<String>,
    },
}

/// `bsi hook` actions an agent tool's hook runs.
#[derive(Debug, Clone, Copy, Subcommand)]
pub enum AgentEvent {
    /// Judge an agent tool's pre-edit event (JSON on stdin) against the
    /// claims and answer in that tool's protocol (what `bsi agent install`
    /// sets up).
    ///
    /// An edit inside another session's claim, active or stale, is refused
    /// down to the section, with who holds it and the next step. Errors fail
    /// open: a broken event or a missing registry lets the edit through with
    /// a warning. No network; nothing is written unless `claim_on_write` is
    /// on in .bsi.toml.
    Edit {
        /// The agent tool that sends the event.
        #[arg(long, value_enum)]
        tool: Tool,
    },
    /// Answer an agent tool's session-start event: the claims of others, the
    /// agent's own and stale ones go into its context, and its bsi session
    /// is named (for Claude Code, also appended to $CLAUDE_ENV_FILE).
    SessionStart {
        /// The agent tool that sends the event.
        #[arg(long, value_enum)]
        tool: Tool,
    },
    /// Answer an agent tool's stop event: while the agent's session holds
    /// claims, send it back once to commit its paths and `bsi close`.
    Stop {
        /// The agent tool that sends the event.
        #[arg(long, value_enum)]
        tool: Tool,
    },
}

impl AgentEvent {
    /// The tool and the hook of a `bsi hook edit|session-start|stop`
    /// command.
    pub fn tool_and_kind(self) -> (Tool, HookKind) {
        match self {
            AgentEvent::Edit { tool } => (tool, HookKind::Edit),
            AgentEvent::SessionStart { tool } => (tool, HookKind::SessionStart),
            AgentEvent::Stop { tool } => (tool, HookKind::Stop),
        }
    }
}

/// `bsi agent` actions.
#[derive(Debug, Subcommand)]
pub enum AgentAction {
    /// Add bsi's hooks to the tool's project settings, keeping the rest.
    ///
    /// The file is .claude/settings.json, .codex/hooks.json,
    /// .gemini/settings.json or .cursor/hooks.json at the work tree root.
    /// Every other setting and hook stays; running it twice changes nothing.
    /// The MCP server `bsi mcp` is registered too (.mcp.json,
    /// .codex/config.toml, .gemini/settings.json, .cursor/mcp.json).
    ///
    /// With --user: into the user's settings of Claude Code
    /// (~/.claude/settings.json), Codex CLI ($CODEX_HOME/hooks.json, else
    /// ~/.codex/hooks.json) or Gemini CLI (~/.gemini/settings.json), where
    /// no project trust step or shortcut (Gemini's --skip-trust, an
    /// untrusted Codex project, Claude Code's --setting-sources user) can
    /// skip them. They then guard every brain on the machine and answer
    /// nothing elsewhere. The bytes the file had are kept under
    /// $XDG_STATE_HOME/bsi/installed (else ~/.local/state/bsi/installed).
    Install {
        /// The agent tool.
        #[arg(value_enum)]
        tool: Tool,
        /// Install into the user's settings instead of the project's.
        #[arg(long)]
        user: bool,
    },
    /// Whether each tool will run bsi's hooks, and the step missing.
    ///
    /// For each tool (or the one named): bsi's hooks in its project
    /// settings, the program they run found on PATH, the tool's trust
    /// (Codex project and hook trust, Gemini folder trust, Claude Code
    /// workspace trust), bsi's MCP server in its MCP settings, and whether a
    /// session of the tool has reached the hooks yet. Exit 0 when nothing is
    /// missing, 1 otherwise. Codex's hook trust is read from Codex itself
    /// (`codex app-server`, `hooks/list`) when codex is on PATH, else from
    /// its config.toml. `bypass` names the shortcuts that skip the project's
    /// hooks, and whether the user-level install (--user) covers them.
    Doctor {
        /// The agent tool (default: every tool whose settings file exists).
        #[arg(value_enum)]
        tool: Option<Tool>,
    },
    /// Remove what `bsi agent install` added, and only that.
    ///
    /// A file bsi created is removed; a file it changed gets its bytes back,
    /// or, when it was edited since, loses only bsi's hooks.
    Uninstall {
        /// The agent tool.
        #[arg(value_enum)]
        tool: Tool,
        /// Take them out of the user's settings instead of the project's.
        #[arg(long)]
        user: bool,
    },
}

/// The agent tools bsi has hooks for, by name: the list of
/// [`Tool::ALL`], each with its product's name as help.
impl clap::ValueEnum for Tool {
    fn value_variants<'a>() -> &'a [Tool] {
        &Tool::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).help(self.title()))
    }
}

/// Subcommands whose help and completions do without the global flags:
/// they never read the registry or a remote.
const WITHOUT_GLOBALS: [&str; 4] = ["completions", "man", "merge-driver", "help"];

/// The global flags hidden from those subcommands: their ids and names.
const GLOBALS: [(&str, &str); 5] = [
    ("registry", "registry"),
    ("quiet", "quiet"),
    ("verbose", "verbose"),
    ("remote", "remote"),
    ("session_flag", "session"),
];

/// The error of bsi for a usage error clap found that bsi says better:
/// `bsi open` with no scope gets examples and a hint.
pub fn own_usage_error(e: &clap::Error) -> Option<crate::Error> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::MissingRequiredArgument {
        return None;
    }
    let scope_missing = matches!(
        e.get(ContextKind::InvalidArg),
        Some(ContextValue::Strings(v)) if v.iter().any(|a| a.starts_with("<SCOPE>"))
    );
    let in_open = matches!(
        e.get(ContextKind::Usage),
        Some(ContextValue::StyledStr(u)) if u.to_string().contains("bsi open")
    );
    (scope_missing && in_open).then_some(crate::Error::NoScope)
}

/// The command line definition as bsi uses it: the derived one, with the
/// global flags hidden from the subcommands that ignore them (a subcommand
/// that has its own flag of a global's name does not get the global).
pub fn command() -> clap::Command {
    use clap::{Arg, ArgAction, CommandFactory};
    let mut cmd = Cli::command();
    for sub in WITHOUT_GLOBALS {
        cmd = cmd.mut_subcommand(sub, |mut s| {
            for (id, long) in GLOBALS {
                let a = Arg::new(id).long(long).hide(true);
                s = s.arg(match id {
                    "quiet" | "verbose" => a.action(ArgAction::SetTrue),
                    _ => a.num_args(1),
                });
            }
            s
        });
    }
    cmd
}

impl Cli {
    /// Whether the command is `open --shell`, whose output is `eval`ed.
    pub fn wants_shell(&self) -> bool {
        matches!(&self.command, Command::Open(a) if a.shell)
    }

    /// Whether the command asked for JSON output (errors then come out as
    /// JSON on stdout too).
    pub fn wants_json(&self) -> bool {
        match &self.command {
            Command::Open(OpenArgs { out, .. })
            | Command::Close(CloseArgs { out, .. })
            | Command::Renew(RenewArgs { out, .. })
            | Command::Watchdog { out }
            | Command::Release(ReleaseArgs { out, .. })
            | Command::Status(StatusArgs { out, .. })
            | Command::Whoami(WhoamiArgs { out, .. })
            | Command::Verify(VerifyArgs { out, .. })
            | Command::Commit(CommitArgs { out, .. })
            | Command::Recover(RecoverArgs { out, .. })
            | Command::Sync { out }
            | Command::Log(LogArgs { out, .. }) => out.json,
            _ => false,
        }
    }
}
