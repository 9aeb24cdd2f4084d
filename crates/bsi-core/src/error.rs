//! The library's error type and its exit codes. What to do next about an
//! error is the doors' to say (the `bsi` crate's `hints`).

use std::path::PathBuf;

use chrono::{DateTime, FixedOffset};

use crate::config::ConfigError;
use crate::registry::merge::MergeConflict;
use crate::registry::{Claim, ParseError};
use crate::scope::{Scope, ScopeError, escape_path};
use crate::ttl::TtlError;
use crate::values::BadValue;

/// A brain root (relative to the work tree root) for a sentence.
pub fn root_words(root: &str) -> String {
    if root.is_empty() {
        "the root of the work tree".into()
    } else {
        format!("`{root}/`")
    }
}

/// Scopes joined for a sentence.
fn summary(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Documented exit codes. Scripts depend on them.
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// Any other error.
    pub const ERROR: u8 = 1;
    /// Bad usage: unknown flag, bad scope, bad TTL.
    pub const USAGE: u8 = 2;
    /// A claim was refused because it conflicts with another.
    pub const CONFLICT: u8 = 3;
    /// The watchdog found stale claims: a person must look at them.
    pub const STALE: u8 = 4;
    /// The registry is unreadable or invalid; nothing was written.
    pub const REGISTRY: u8 = 5;
    /// `bsi verify` found changes outside the session's claims.
    pub const OVERFLOW: u8 = 6;
    /// The change is recorded locally but the remote could not be reached:
    /// it is not published yet (`bsi sync` publishes it).
    pub const UNPUBLISHED: u8 = 7;
    /// The remote stayed busy (every push lost a race) for the whole
    /// publish timeout: nothing was written; retry.
    pub const BUSY: u8 = 8;
    /// `bsi doctor` found this work tree's guard off: a hook of bsi's not
    /// installed or not reached, or the hook mode `off`.
    pub const GUARD_OFF: u8 = 9;
}

/// What libgit2 said when it failed, as [`crate::git`] read it: its words,
/// and the part of the repository it concerns (which decides whether the
/// `git` command is asked instead).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LibError {
    /// libgit2's words.
    pub message: String,
    /// The part of the repository.
    pub part: LibPart,
}

/// The part of a repository a libgit2 failure concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibPart {
    /// The object database (an object a partial clone has not fetched).
    Objects,
    /// The index (an extension libgit2 does not read).
    Index,
    /// Anything else.
    Other,
}

/// Everything that can go wrong in bsi.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command line asks for something impossible.
    #[error("{0}")]
    Usage(String),
    /// A session id, an agent name or a note that cannot be used.
    #[error(transparent)]
    Value(#[from] BadValue),
    /// A scope that goes through a symbolic link inside the brain.
    #[error(
        "`{scope}` goes through the symbolic link {link}, so it is another name for {}: a claim names a thing by its one real name",
        target.as_ref().map_or_else(|| "its target".to_string(), |t| format!("`{t}`"))
    )]
    ThroughSymlink {
        /// The scope as typed.
        scope: String,
        /// The link, relative to the brain.
        link: String,
        /// What it names, relative to the brain (`dir/` for a directory);
        /// `None` when the link leads outside the brain or nowhere.
        target: Option<String>,
    },
    /// A scope written as a directory (`a.md/`) that is a file.
    #[error("`{scope}` names a file, not a directory")]
    NotADirectory {
        /// The scope as typed.
        scope: String,
        /// The file, relative to the brain.
        file: String,
    },
    /// A section of a file whose headings make no sections.
    #[error(
        "`{scope}` names a section, but {} is not a markdown file: only the headings of .md and .markdown files (and the endings `markdown_extensions` in .bsi.toml adds) make sections",
        escape_path(file)
    )]
    NotMarkdown {
        /// The scope as typed.
        scope: String,
        /// The file, relative to the brain.
        file: String,
    },
    /// The remote named by a setting does not exist.
    #[error(
        "there is no git remote named `{name}` (from --remote, BSI_REMOTE, git config bsi.remote or .bsi.toml remote)"
    )]
    NoSuchRemote {
        /// The name given.
        name: String,
    },
    /// Several remotes, and nothing says which one holds the registry.
    #[error("{}", which_remote(branch, remotes, holding))]
    WhichRemote {
        /// The registry branch.
        branch: String,
        /// The clone's remotes.
        remotes: Vec<String>,
        /// Those that hold a copy of the registry branch (none or several).
        holding: Vec<String>,
    },
    /// A remote holds the registry, and the settings name another one to
    /// publish to: a second registry there would grant one scope twice.
    #[error(
        "the remote `{holder}` already holds this brain's registry ({label}), but this clone is set to publish to `{named}` (from --remote, BSI_REMOTE, git config bsi.remote or .bsi.toml remote); a second registry there would let two sessions hold the same scope"
    )]
    RegistryElsewhere {
        /// The remote that holds it.
        holder: String,
        /// Its registry branch, as `remote/branch`.
        label: String,
        /// The remote the settings name.
        named: String,
    },
    /// A claim on the registry's own copy.
    #[error("the registry itself cannot be claimed: only bsi writes it")]
    RegistryNotClaimable,
    /// `BSI_NOW` is not a time.
    #[error("BSI_NOW=`{value}` is not an RFC 3339 time: {source}")]
    BadClock {
        /// The variable's value.
        value: String,
        /// Why it does not parse.
        source: chrono::ParseError,
    },
    /// `BSI_RANDOM_SEED` is not a number.
    #[error(
        "BSI_RANDOM_SEED=`{value}` is not a whole number from 0 to {}",
        u64::MAX
    )]
    BadSeed {
        /// The variable's value.
        value: String,
        /// Why it does not parse.
        source: std::num::ParseIntError,
    },
    /// `--registry` or `BSI_REGISTRY` in a directory that does not exist.
    #[error(
        "the registry path {} (from --registry or BSI_REGISTRY) is in a directory that does not exist",
        path.display()
    )]
    RegistryDirMissing {
        /// The registry path asked for.
        path: PathBuf,
    },
    /// `--registry` or `BSI_REGISTRY` names a brain root other than the
    /// one the registry branch records: the same files would have two names.
    #[error(
        "--registry or BSI_REGISTRY puts the brain root at {}, but the registry branch `{branch}` records it at {}: one brain has one root",
        root_words(given),
        root_words(recorded)
    )]
    RootContradicted {
        /// The root the flag or the variable gives, from the work tree
        /// root, with `/` (empty: the work tree root).
        given: String,
        /// The root the registry branch records, in the same form.
        recorded: String,
        /// The registry branch.
        branch: String,
    },
    /// The brain root a commit of the registry branch records differs from
    /// the one the branch recorded first: bsi keeps the first and does not
    /// follow (one file would have two names, and be granted twice).
    #[error(
        "the brain root changed: BRAIN-ROOT on {at} says {}{}, but the registry branch `{branch}` first recorded {}; bsi keeps {} and does not follow a later change",
        root_words(now),
        commit.as_ref().map(|c| format!(" since commit {c}")).unwrap_or_default(),
        root_words(first),
        root_words(first)
    )]
    RootChanged {
        /// Where the change was read: the branch, or the remote's copy.
        at: String,
        /// The registry branch.
        branch: String,
        /// The root kept, from the work tree root (empty: the work tree root).
        first: String,
        /// What `at` records (empty: nothing).
        now: String,
        /// The commit that changed it, abbreviated.
        commit: Option<String>,
    },
    /// `bsi repair` on a local registry branch with changes the remote has
    /// not received, while the remote moved on: its fix could never be
    /// published.
    #[error(
        "the local registry branch `{branch}` holds changes {remote} has not received, and {remote} has changes this clone lacks: a repair built on either would be refused"
    )]
    RepairNeedsSync {
        /// The registry branch.
        branch: String,
        /// The remote, `name/branch`.
        remote: String,
    },
    /// A command that needs a session, and none given.
    #[error("no session given: name one, or set BSI_SESSION")]
    NoSession,
    /// `bsi help` of a command bsi does not have.
    #[error("`{name}` is not a command of `{}`", parent.join(" "))]
    NoSuchCommand {
        /// The name asked for.
        name: String,
        /// The command it was looked for in: `bsi`, `bsi hook`…
        parent: Vec<String>,
    },
    /// A scope was refused.
    #[error("bad scope: {0}")]
    Scope(#[from] ScopeError),
    /// A TTL was refused.
    #[error("bad TTL: {0}")]
    Ttl(#[from] TtlError),
    /// A section scope names a file the brain does not have.
    #[error("{file} is not a file of the brain, so it has no section `{heading}` to claim")]
    NoSuchFile {
        /// The file, from the brain's root.
        file: String,
        /// The heading asked for.
        heading: String,
        /// The brain's file nearest to it by name, when one is close enough
        /// to be what was meant (`plann.md` → `plan.md`).
        nearest: Option<String>,
    },
    /// A heading with spaces given unquoted: the shell split one scope
    /// into several words, and the file has a heading that the words make.
    #[error(
        "`{}` reads as {} scopes: {file} has a heading `{heading}`, and a heading with spaces needs quotes (nothing was written)",
        words.join(" "),
        words.len()
    )]
    UnquotedHeading {
        /// The words as the shell gave them.
        words: Vec<String>,
        /// The file, from the brain's root.
        file: String,
        /// The heading of the file the words begin.
        heading: String,
    },
    /// A section scope names a heading its file does not have.
    #[error("{file} has no heading `{heading}`")]
    NoSuchSection {
        /// The file.
        file: String,
        /// The heading asked for.
        heading: String,
        /// Headings the file does have.
        available: Vec<String>,
    },
    /// The registry could not be parsed.
    #[error("{path}: {source}")]
    Registry {
        /// The registry file.
        path: PathBuf,
        /// Where and what.
        source: ParseError,
    },
    /// The remote's registry, as last fetched, could not be parsed: the
    /// broken line is there, not on the local branch.
    #[error("{remote}/{branch}:{}: {source}", crate::registry::REGISTRY_FILE)]
    RemoteRegistry {
        /// The remote (`origin`).
        remote: String,
        /// Its registry branch (`brain-index`).
        branch: String,
        /// Where and what.
        source: ParseError,
    },
    /// There is no registry yet.
    #[error("this brain has no registry: there is no branch `{branch}` here{}", match remote {
        Some(r) => format!(", and the remote has no `{r}` either (as last fetched)"),
        None => " and no remote to get one from".to_string(),
    })]
    NoRegistry {
        /// The registry branch looked for.
        branch: String,
        /// The remote that has none either, when the brain has one.
        remote: Option<String>,
    },
    /// The brain keeps its registry as a tracked file of the content
    /// branch, as bsi did before the registry branch.
    #[error(
        "{} is a tracked file of this branch: the registry now lives on the branch `{branch}`, and bsi neither reads nor writes claims until the brain is migrated",
        path.display()
    )]
    NotMigrated {
        /// The tracked registry file.
        path: PathBuf,
        /// The registry branch it moves to.
        branch: String,
    },
    /// `bsi init` on a brain that has one.
    #[error("this brain already has a registry, on the branch {0}")]
    RegistryExists(String),
    /// A reference moved under bsi's feet (another program than bsi wrote it).
    #[error("the reference {0} moved while bsi was writing it; nothing was written")]
    Moved(String),
    /// Every push lost a race for the whole publish timeout.
    #[error(
        "{remote} stayed busy: {} lost a race to other writers within {:.1} s; nothing was written",
        if *attempts == 1 { "the one push".to_string() } else { format!("all {attempts} pushes") },
        *waited_ms as f64 / 1000.0
    )]
    Busy {
        /// `remote/branch`.
        remote: String,
        /// Pushes tried.
        attempts: u32,
        /// Milliseconds spent.
        waited_ms: u64,
    },
    /// The remote refused the push for a reason of its own.
    #[error("{remote} refused the push of the registry branch: {why}")]
    RemoteRefused {
        /// `remote/branch`.
        remote: String,
        /// What the remote said.
        why: String,
    },
    /// The remote answered and denied bsi's git access: credentials it
    /// wants and git may not prompt for, or not allowed.
    #[error("{remote} refused bsi's git: {why}; nothing was written")]
    RemoteDenied {
        /// `remote/branch`.
        remote: String,
        /// What the remote and git said.
        why: String,
    },
    /// A git command failed.
    #[error("`{command}` failed: {stderr}")]
    GitFailed {
        /// The command.
        command: String,
        /// What it said.
        stderr: String,
    },
    /// `.bsi.toml` could not be used.
    #[error("{}: {source}", path.display())]
    Config {
        /// The configuration file.
        path: PathBuf,
        /// What is wrong.
        source: ConfigError,
    },
    /// An agent would hold more active claims than the configuration allows.
    #[error(
        "claim refused: agent {agent} would hold {wanted} active claims, and .bsi.toml allows {limit} (max_active_per_agent)"
    )]
    TooManyClaims {
        /// The agent.
        agent: String,
        /// Active claims it would hold.
        wanted: usize,
        /// The limit.
        limit: usize,
    },
    /// Not inside a git work tree.
    #[error("{0} is not inside a git work tree")]
    NotARepo(PathBuf),
    /// The repository is in the middle of a merge, rebase, cherry-pick…
    #[error("the repository is in the middle of a {0}")]
    RepoBusy(String),
    /// Another process holds a lock for too long.
    #[error("{what} is locked by another process ({path})")]
    Locked {
        /// What could not be locked.
        what: &'static str,
        /// The lock file.
        path: PathBuf,
    },
    /// No claim of that session (or scope).
    #[error("{0}")]
    NotFound(String),
    /// An agent settings file bsi cannot edit.
    #[error("{} cannot be edited: {source}", path.display())]
    SettingsUnusable {
        /// The settings file.
        path: PathBuf,
        /// What is wrong with it.
        source: SettingsError,
    },
    /// Claims added to a session of another agent.
    #[error(
        "session {session} belongs to agent {owner}, not to {caller}: its claims are closed and renewed by {owner}"
    )]
    SessionOfAnotherAgent {
        /// The session.
        session: String,
        /// The agent that holds it.
        owner: String,
        /// The agent asking.
        caller: String,
    },
    /// A release of a session that still has active claims, unforced.
    #[error(
        "{session} still has active claims ({}); release frees stale claims",
        summary(scopes)
    )]
    StillActive {
        /// The session.
        session: String,
        /// Its active claims' scopes.
        scopes: Vec<Scope>,
    },
    /// A close or renew of another agent's claim, unforced.
    #[error(
        "{} {} was opened by {}, not by {caller}",
        claim.session,
        claim.scope,
        claim.agent
    )]
    NotTheHolder {
        /// The claim, as the registry has it.
        claim: Box<Claim>,
        /// The agent asking.
        caller: String,
        /// `close` or `renew`.
        verb: &'static str,
    },
    /// A close or renew, unforced, of a claim of another session than the
    /// one the run acts for (the same agent name or not).
    #[error(
        "{} {} is session {}'s claim ({}), not this session's: this command acts for session {acting}",
        claim.session,
        claim.scope,
        claim.session,
        claim.agent
    )]
    NotYourSession {
        /// The claim, as the registry has it.
        claim: Box<Claim>,
        /// The session the run acts for.
        acting: String,
        /// `close` or `renew`.
        verb: &'static str,
    },
    /// `bsi open` with no scope.
    #[error("bsi open needs at least one SCOPE: what the session will edit")]
    NoScope,
    /// A renew of a session whose claims are all stale.
    #[error("the claims of {session} are stale; renew cannot revive them")]
    StaleNotRenewable {
        /// The session.
        session: String,
        /// Its stale scopes.
        scopes: Vec<Scope>,
    },
    /// A renew of claims past their expiry.
    #[error(
        "{} of {} passed its expiry ({}, {}): an overdue claim can no longer be renewed",
        claim.scope,
        claim.session,
        crate::ttl::local_ts(claim.expires, *now),
        crate::ttl::time_left(claim.expires, *now)
    )]
    RenewOverdue {
        /// The first overdue claim, as the registry has it.
        claim: Box<Claim>,
        /// The time of the request.
        now: DateTime<FixedOffset>,
        /// Every overdue claim's scope, to claim again.
        overdue: Vec<Scope>,
    },
    /// A renew of claims already at 8h after their opening.
    #[error(
        "the claims of {session} already reach the 8h maximum after their opening ({})",
        crate::ttl::local_ts(*until, *now)
    )]
    RenewAtCeiling {
        /// The session.
        session: String,
        /// Their latest expiry.
        until: DateTime<FixedOffset>,
        /// The time of the request.
        now: DateTime<FixedOffset>,
        /// Their scopes, to claim again.
        scopes: Vec<Scope>,
    },
    /// A hook of another program, and its chained name taken too.
    #[error(
        "{} is not bsi's hook, and {} is taken too",
        hook.display(),
        chained.display()
    )]
    HookSlotsTaken {
        /// The hook.
        hook: PathBuf,
        /// Where bsi would keep it.
        chained: PathBuf,
    },
    /// A hook script of another program that bsi cannot add its line to.
    #[error("{} is not a sh script: bsi cannot add its line to it", hook.display())]
    HookNotShell {
        /// The script.
        hook: PathBuf,
        /// The hook's name.
        name: String,
    },
    /// The local and the remote registry branch cannot be merged by rows.
    #[error("the local and the remote registry cannot be merged by rows: {source}")]
    Unmergeable {
        /// The registry branch.
        branch: String,
        /// Why.
        source: MergeConflict,
    },
    /// `bsi migrate` on a branch that does not track the registry file.
    #[error("{file} is not tracked on this branch: there is nothing to migrate")]
    NothingToMigrate {
        /// The registry file.
        file: String,
    },
    /// `bsi migrate` with an uncommitted edit of the registry file.
    #[error("{file} differs from its last commit")]
    RegistryEdited {
        /// The registry file.
        file: String,
    },
    /// `bsi migrate` on a detached HEAD: no branch to untrack the file on.
    #[error(
        "`bsi migrate` untracks the registry in a commit on the current branch, and a detached HEAD has none"
    )]
    MigrateDetached,
    /// Every session id drawn in this minute was already given out.
    #[error("every new session id drawn this minute is taken (the last: {last})")]
    SessionIdsExhausted {
        /// The last id drawn.
        last: String,
    },
    /// A session id drawn for a new session is already in the registry.
    #[error("the session id {session} is already in the registry")]
    SessionIdTaken {
        /// The id.
        session: String,
    },
    /// `bsi repair` without an editor.
    #[error("no editor to open the registry in: neither VISUAL nor EDITOR is set")]
    NoEditor,
    /// The editor of `bsi repair` failed.
    #[error("the editor `{editor}` failed ({status}): nothing was written")]
    EditorFailed {
        /// The editor's command.
        editor: String,
        /// How it ended.
        status: String,
        /// Where the text is kept.
        file: PathBuf,
    },
    /// The registry branch moved while a person edited it.
    #[error(
        "the registry branch {branch} moved since its text was read: your edit was not written, so it cannot undo what was written meanwhile"
    )]
    RepairRaced {
        /// The registry branch.
        branch: String,
    },
    /// The registry branch is checked out in a work tree: bsi does not move
    /// it.
    #[error(
        "the registry branch {branch} is checked out in the work tree {dir}: bsi does not move a branch checked out anywhere (a commit made there later would undo every claim written meanwhile)"
    )]
    BranchCheckedOut {
        /// The registry branch.
        branch: String,
        /// The work tree.
        dir: String,
    },
    /// Another clone pushed a registry branch while this one migrated.
    #[error("{remote} received a registry branch a moment ago")]
    MigratedMeanwhile {
        /// `remote/branch`.
        remote: String,
    },
    /// The branch's registry and the registry branch cannot be merged.
    #[error("the registries cannot be merged by rows: {source}")]
    MigrationUnmergeable {
        /// Why.
        source: MergeConflict,
    },
    /// The registry branch lacks rows the branch's registry file holds.
    #[error(
        "the registry branch {branch} exists already, and this branch's {file} holds rows it lacks"
    )]
    RowsMissing {
        /// The registry branch.
        branch: String,
        /// The registry file.
        file: String,
    },
    /// `bsi sync` in a clone without a remote.
    #[error("this clone has no remote to sync the registry branch with")]
    NoRemote,
    /// `bsi whoami` without `BSI_SESSION`.
    #[error("no current session: BSI_SESSION is not set")]
    NoCurrentSession,
    /// The remote could not be reached.
    #[error("{remote} could not be reached: {why}")]
    Unreachable {
        /// `remote/branch`.
        remote: String,
        /// What git said.
        why: String,
    },
    /// libgit2 failed.
    #[error("git: {0}")]
    Git(LibError),
    /// Writing what was asked for to stdout failed (a full disk, a closed
    /// pipe: the latter ends the run quietly, see [`crate::run`]).
    #[error("cannot write the output: {0}")]
    Output(std::io::Error),
    /// A file system operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What bsi was doing.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// Shorthand.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The errors `e` comes from (its [`std::error::Error::source`] chain),
/// printed after it under `-v` as jj does: nothing when there are none,
/// `Caused by: …` for one, else `Caused by:` and one numbered line each.
pub fn caused_by(e: &dyn std::error::Error) -> String {
    let causes: Vec<String> = std::iter::successors(e.source(), |c| c.source())
        .map(ToString::to_string)
        .collect();
    match causes.as_slice() {
        [] => String::new(),
        [one] => format!("Caused by: {one}\n"),
        many => {
            let mut out = String::from("Caused by:\n");
            for (i, c) in many.iter().enumerate() {
                out.push_str(&format!("{}: {c}\n", i + 1));
            }
            out
        }
    }
}

/// A settings file bsi cannot edit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// Not JSON.
    #[error("it is not valid JSON ({0})")]
    NotJson(String),
    /// A value bsi must edit has an unexpected type.
    #[error("`{0}` is not what the tool's format says it is")]
    Shape(String),
    /// A file bsi writes whole (OpenCode's plugin) holds something else.
    #[error("it is a file bsi did not write, in the place of bsi's own")]
    NotOurs,
}

/// The words of [`Error::WhichRemote`].
fn which_remote(branch: &str, remotes: &[String], holding: &[String]) -> String {
    if holding.len() > 1 {
        format!(
            "this clone has {} remotes ({}) and {} of them hold a registry branch `{branch}`",
            remotes.len(),
            remotes.join(", "),
            holding.len()
        )
    } else {
        format!(
            "this clone has {} remotes ({}) and nothing says which one holds the registry branch `{branch}`",
            remotes.len(),
            remotes.join(", ")
        )
    }
}

impl Error {
    /// An error writing to stdout.
    pub fn output(source: std::io::Error) -> Error {
        Error::Output(source)
    }

    /// Wraps an IO error with what bsi was doing.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// Whether this is a plan's refusal (a claim not found, not the
    /// caller's, a limit reached), which a fresher registry may lift.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            Error::NotFound(_)
                | Error::TooManyClaims { .. }
                | Error::SessionOfAnotherAgent { .. }
                | Error::StillActive { .. }
                | Error::NotTheHolder { .. }
                | Error::NotYourSession { .. }
                | Error::StaleNotRenewable { .. }
                | Error::RenewOverdue { .. }
                | Error::RenewAtCeiling { .. }
        )
    }

    /// The documented exit code: one per [`Error::kind`].
    pub fn code(&self) -> u8 {
        match self.kind() {
            "usage" | "scope" | "ttl" | "no-such-section" | "config" => exit::USAGE,
            "registry-invalid" | "no-registry" | "not-migrated" => exit::REGISTRY,
            "unreachable" => exit::UNPUBLISHED,
            "busy" => exit::BUSY,
            "root-changed" => exit::CONFLICT,
            _ => exit::ERROR,
        }
    }

    /// A short name of the kind of error, for JSON output.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::RootChanged { .. } => "root-changed",
            Error::Usage(_)
            | Error::Value(_)
            | Error::ThroughSymlink { .. }
            | Error::NotADirectory { .. }
            | Error::NotMarkdown { .. }
            | Error::NoSuchRemote { .. }
            | Error::WhichRemote { .. }
            | Error::RegistryElsewhere { .. }
            | Error::NoEditor
            | Error::RegistryNotClaimable
            | Error::BadClock { .. }
            | Error::BadSeed { .. }
            | Error::RegistryDirMissing { .. }
            | Error::RootContradicted { .. }
            | Error::NoSession
            | Error::NoScope
            | Error::NoSuchCommand { .. } => "usage",
            Error::Scope(_) | Error::NoSuchFile { .. } | Error::UnquotedHeading { .. } => "scope",
            Error::Ttl(_) => "ttl",
            Error::NoSuchSection { .. } => "no-such-section",
            Error::Registry { .. } | Error::RemoteRegistry { .. } => "registry-invalid",
            Error::NoRegistry { .. } => "no-registry",
            Error::NotMigrated { .. } => "not-migrated",
            Error::RegistryExists(_) => "registry-exists",
            Error::Moved(_) => "moved",
            Error::Busy { .. } => "busy",
            Error::RemoteRefused { .. } => "remote-refused",
            Error::RemoteDenied { .. } => "remote-denied",
            Error::GitFailed { .. } => "git-failed",
            Error::Output(_) => "output",
            Error::Config { .. } => "config",
            Error::TooManyClaims { .. } => "too-many-claims",
            Error::NotARepo(_) => "not-a-repo",
            Error::RepoBusy(_) => "repo-busy",
            Error::Locked { .. } => "locked",
            Error::NotFound(_) => "not-found",
            // Refused for the user's own protection. Not a claim conflict:
            // a request that overlaps claims is answered with exit 3 and
            // the claims in its way (`commands::open`).
            Error::SettingsUnusable { .. }
            | Error::SessionOfAnotherAgent { .. }
            | Error::StillActive { .. }
            | Error::NotTheHolder { .. }
            | Error::NotYourSession { .. }
            | Error::StaleNotRenewable { .. }
            | Error::RenewOverdue { .. }
            | Error::RenewAtCeiling { .. }
            | Error::HookSlotsTaken { .. }
            | Error::HookNotShell { .. }
            | Error::Unmergeable { .. }
            | Error::NothingToMigrate { .. }
            | Error::RegistryEdited { .. }
            | Error::MigratedMeanwhile { .. }
            | Error::MigrateDetached
            | Error::SessionIdsExhausted { .. }
            | Error::SessionIdTaken { .. }
            | Error::EditorFailed { .. }
            | Error::RepairRaced { .. }
            | Error::RepairNeedsSync { .. }
            | Error::BranchCheckedOut { .. }
            | Error::MigrationUnmergeable { .. }
            | Error::RowsMissing { .. }
            | Error::NoRemote
            | Error::NoCurrentSession => "refused",
            Error::Unreachable { .. } => "unreachable",
            Error::Git(_) => "git",
            Error::Io { .. } => "io",
        }
    }
}

/// What to add when git's words on an unreachable remote say its address
/// names nothing (a wrong path or host, rather than a network down): the
/// command that shows the address.
pub fn address_hint(why: &str) -> Option<&'static str> {
    let w = why.to_lowercase();
    [
        "does not appear to be a git repository",
        "repository not found",
        "no such file or directory",
        "could not resolve host",
        "not a git repository",
        "does not exist",
    ]
    .iter()
    .any(|p| w.contains(p))
    .then_some(
        "The remote's address may be wrong: `git remote -v` shows it, `git remote set-url` mends it.",
    )
}

/// The heading of `available` nearest to `asked` (`Riskss` → `Risks`),
/// for a typo's did-you-mean.
pub fn nearest_heading<'a>(available: &'a [String], asked: &str) -> Option<&'a str> {
    let asked = asked.to_lowercase();
    available
        .iter()
        .min_by_key(|h| strsim::levenshtein(&h.to_lowercase(), &asked))
        .map(String::as_str)
}

/// Whether an I/O error is a write refused by a read-only file system
/// (the sandbox of an agent tool mounts the git directory so).
pub fn read_only(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::ReadOnlyFilesystem || e.raw_os_error() == Some(30)
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;

    use super::{Error, caused_by, exit};
    use crate::claims::tests::claim;
    use crate::scope::Scope;
    use crate::values::BadValue;

    fn section(file: &str, heading: &str) -> Scope {
        Scope::Section {
            file: file.into(),
            heading: heading.into(),
        }
    }

    /// The kind scripts read in JSON and the exit code, for errors of each
    /// family: a bad value or setting, a refusal, the registry, the remote.
    #[test]
    fn each_kind_has_its_exit_code() {
        let at = |t: &str| DateTime::parse_from_rfc3339(t).expect("time");
        let cases = [
            (Error::Usage("a".into()), "usage", exit::USAGE),
            (
                Error::Value(BadValue::SessionId {
                    given: "my session".into(),
                }),
                "usage",
                exit::USAGE,
            ),
            (Error::NoSession, "usage", exit::USAGE),
            (
                Error::NoSuchRemote {
                    name: "upstream".into(),
                },
                "usage",
                exit::USAGE,
            ),
            (
                Error::NoSuchSection {
                    file: "a.md".into(),
                    heading: "x".into(),
                    available: Vec::new(),
                },
                "no-such-section",
                exit::USAGE,
            ),
            (
                Error::NotTheHolder {
                    claim: Box::new(claim("s1", "claude", Scope::File("a.md".into()))),
                    caller: "codex".into(),
                    verb: "close",
                },
                "refused",
                exit::ERROR,
            ),
            (
                Error::RenewAtCeiling {
                    session: "s1".into(),
                    until: at("2026-03-14T17:30:00Z"),
                    now: at("2026-03-14T09:30:00Z"),
                    scopes: vec![Scope::File("a.md".into())],
                },
                "refused",
                exit::ERROR,
            ),
            (Error::NoRemote, "refused", exit::ERROR),
            (Error::NotFound("a".into()), "not-found", exit::ERROR),
            (
                Error::NoRegistry {
                    branch: "b".into(),
                    remote: None,
                },
                "no-registry",
                exit::REGISTRY,
            ),
            (
                Error::Unreachable {
                    remote: "r".into(),
                    why: "w".into(),
                },
                "unreachable",
                exit::UNPUBLISHED,
            ),
            (
                Error::Busy {
                    remote: "r".into(),
                    attempts: 1,
                    waited_ms: 1000,
                },
                "busy",
                exit::BUSY,
            ),
            (
                Error::io("x", std::io::Error::other("e")),
                "io",
                exit::ERROR,
            ),
        ];
        for (e, kind, code) in &cases {
            assert_eq!((e.kind(), e.code()), (*kind, *code), "{e:?}");
        }
        // Only a plan's refusals are decided again on a fresher registry.
        assert!(cases[5].0.is_refusal() && cases[6].0.is_refusal());
        assert!(!cases[7].0.is_refusal() && !cases[2].0.is_refusal());
    }

    /// The words of the named kinds are the sentences they replace.
    #[test]
    fn named_kinds_say_what_happened() {
        let now = DateTime::parse_from_rfc3339("2026-03-14T12:00:00Z").expect("t");
        // The claim expires at 11:30.
        let e = Error::RenewOverdue {
            claim: Box::new(claim("s1", "claude", Scope::File("a.md".into()))),
            now,
            overdue: vec![Scope::File("a.md".into())],
        };
        assert_eq!(
            e.to_string(),
            "a.md of s1 passed its expiry (2026-03-14 11:30 +00:00, overdue 30m): an overdue claim can no longer be renewed"
        );
        let e = Error::StillActive {
            session: "s1".into(),
            scopes: vec![Scope::File("a.md".into()), section("p.md", "Goals")],
        };
        assert_eq!(
            e.to_string(),
            "s1 still has active claims (a.md, p.md#Goals); release frees stale claims"
        );
        let e = Error::WhichRemote {
            branch: "brain-index".into(),
            remotes: vec!["backup".into(), "origin".into()],
            holding: Vec::new(),
        };
        assert_eq!(
            e.to_string(),
            "this clone has 2 remotes (backup, origin) and nothing says which one holds the registry branch `brain-index`"
        );
        let e = Error::ThroughSymlink {
            scope: "x/".into(),
            link: "x".into(),
            target: None,
        };
        assert!(
            e.to_string().contains("another name for its target:"),
            "{e}"
        );
    }

    /// `-v` prints the errors an error comes from, as jj does.
    #[test]
    fn the_causes_are_the_source_chain() {
        assert_eq!(caused_by(&Error::NoSession), "");
        let seed = Error::BadSeed {
            value: "x1".into(),
            source: "x1".parse::<u64>().expect_err("not a number"),
        };
        assert_eq!(
            caused_by(&seed),
            "Caused by: invalid digit found in string\n"
        );

        #[derive(Debug, thiserror::Error)]
        #[error("the lock file is held")]
        struct Held(#[source] Pid);
        #[derive(Debug, thiserror::Error)]
        #[error("process 42 is alive")]
        struct Pid;
        let io = Error::io("cannot lock", std::io::Error::other(Held(Pid)));
        assert_eq!(
            caused_by(&io),
            "Caused by:\n1: the lock file is held\n2: process 42 is alive\n"
        );
    }
}
