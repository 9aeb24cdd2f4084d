//! The library's error type, its exit codes and the hint shown with it.

use std::path::PathBuf;

use crate::config::ConfigError;
use crate::registry::ParseError;
use crate::scope::{Scope, ScopeError};
use crate::ttl::TtlError;
use crate::values::BadValue;
use crate::words::command_line;

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
}

/// Everything that can go wrong in bsi.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command line asks for something impossible.
    #[error("{0}")]
    Usage(String),
    /// A bad value on the command line or in the environment, with the
    /// next command to run for that case.
    #[error("{0}")]
    BadInput(String, String),
    /// A scope was refused.
    #[error("bad scope: {0}")]
    Scope(#[from] ScopeError),
    /// A TTL was refused.
    #[error("bad TTL: {0}")]
    Ttl(#[from] TtlError),
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
    #[error("{remote}/{branch}:{}: {source}", crate::store::BRANCH_FILE)]
    RemoteRegistry {
        /// The remote (`origin`).
        remote: String,
        /// Its registry branch (`brain-index`).
        branch: String,
        /// Where and what.
        source: ParseError,
    },
    /// There is no registry yet.
    #[error("this brain has no registry: there is no branch `{branch}`, here or on its remote")]
    NoRegistry {
        /// The registry branch looked for.
        branch: String,
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
    /// Refused for the user's own protection (not a claim conflict: a
    /// request that overlaps claims is answered with exit 3 and the claims
    /// in its way, see `commands::open`).
    #[error("{what}")]
    Refused {
        /// What was refused, and why.
        what: String,
        /// The next command to run.
        hint: String,
    },
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
    Git(#[from] git2::Error),
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

impl From<BadValue> for Error {
    fn from(e: BadValue) -> Error {
        Error::BadInput(e.message, e.hint)
    }
}

/// Shorthand.
pub type Result<T, E = Error> = std::result::Result<T, E>;

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
            Error::NotFound(_) | Error::Refused { .. } | Error::TooManyClaims { .. }
        )
    }

    /// The documented exit code.
    pub fn code(&self) -> u8 {
        match self {
            Error::Usage(_)
            | Error::BadInput(..)
            | Error::Scope(_)
            | Error::Ttl(_)
            | Error::NoSuchSection { .. }
            | Error::Config { .. } => exit::USAGE,
            Error::Registry { .. }
            | Error::RemoteRegistry { .. }
            | Error::NoRegistry { .. }
            | Error::NotMigrated { .. } => exit::REGISTRY,
            Error::Unreachable { .. } => exit::UNPUBLISHED,
            Error::Busy { .. } => exit::BUSY,
            _ => exit::ERROR,
        }
    }

    /// What the user can do next.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Error::Usage(_) => "run `bsi help` for the commands and their flags".into(),
            Error::BadInput(_, hint) => hint.clone(),
            Error::Scope(_) => {
                "give `global`, a directory `dir/`, a file `dir/file.md` or a section `dir/file.md#Heading`, relative to the brain (`bsi status --tree` shows its paths)".into()
            }
            Error::Ttl(_) => "for example `bsi open SCOPE --ttl 4h` (8h at most; short is 2h, deep 4h, long 8h)".into(),
            Error::NoSuchSection { file, available, .. } if available.is_empty() => format!(
                "the file has no headings: claim the whole file instead (`{}`)",
                command_line(["bsi", "open", &Scope::File(file.clone()).to_string()])
            ),
            Error::NoSuchSection { file, available, .. } => {
                let first = Scope::Section {
                    file: file.clone(),
                    heading: available.first().map_or("Heading", String::as_str).to_string(),
                };
                format!(
                    "its headings are: {}; claim one with `{}`",
                    available.join(", "),
                    command_line(["bsi", "open", &first.to_string()])
                )
            }
            Error::Registry { path, source } => {
                let fix = if source.line == 0 { "fix it" } else { "fix that line" };
                // `branch:file` for the registry branch; a path for a file.
                match path.to_str().and_then(|p| p.split_once(':')).filter(|_| !path.is_absolute()) {
                    Some((branch, _)) => format!(
                        "bsi never rewrites a registry it cannot read: {fix} on the registry branch (`{}`, edit, commit, `git push`), then retry",
                        command_line(["git", "worktree", "add", "../fix", branch])
                    ),
                    None => format!(
                        "bsi never rewrites a registry it cannot read: {fix} in {}, then retry",
                        path.display()
                    ),
                }
            }
            Error::RemoteRegistry { remote, branch, source } => {
                let (fix, what) = if source.line == 0 {
                    ("fix it".to_string(), "registry: fix".to_string())
                } else {
                    (format!("fix line {}", source.line), format!("registry: fix line {}", source.line))
                };
                format!(
                    "the broken copy is {remote}'s, not this clone's branch, and bsi never rewrites a registry it cannot read: {fix} there (`git worktree add --detach ../fix {remote}/{branch}`, edit ../fix/{file}, `git -C ../fix commit -am '{what}'`, `git -C ../fix push {remote} HEAD:{branch}`, `git worktree remove ../fix`), then retry",
                    file = crate::store::BRANCH_FILE
                )
            }
            Error::NoRegistry { .. } => "if another clone created it, `git fetch` brings it; otherwise run `bsi init` once for the brain".into(),
            Error::NotMigrated { .. } => {
                "a person runs `bsi migrate` once for the brain: it moves every row to the registry branch and untracks the file in one commit".into()
            }
            Error::RegistryExists(_) => "use it as it is: `bsi status` shows what it holds (`bsi hook install` adds the commit guard to this clone)".into(),
            Error::Moved(_) => "run the same command again: bsi reads the registry afresh".into(),
            Error::Busy { .. } => {
                "retry the same command in a moment (exit 8 means nothing was written); a longer publish_timeout in .bsi.toml waits longer".into()
            }
            Error::RemoteRefused { .. } => {
                "the remote's own rules refuse pushes to the registry branch: ask whoever runs the remote to allow them, or set registry_branch in .bsi.toml to a branch it accepts".into()
            }
            Error::RemoteDenied { .. } => {
                "bsi's git never prompts: give it credentials it can use unasked (a credential helper for HTTPS, an SSH agent for a key with a passphrase) or get access to the registry branch from whoever runs the remote; `git fetch` by hand shows git's own words; then run the same command again".into()
            }
            Error::GitFailed { .. } => "run the same git command by hand to see the whole error".into(),
            Error::Config { .. } => {
                "fix .bsi.toml (docs/configuration.md lists every key and its values), then run `bsi status` to check it".into()
            }
            Error::TooManyClaims { .. } => {
                "close a claim you no longer need (`bsi close SESSION --scope SCOPE`), or raise max_active_per_agent in .bsi.toml".into()
            }
            Error::NotARepo(_) => "run bsi inside the brain's git repository (`git init` makes one)".into(),
            Error::RepoBusy(_) => "finish it or abort it with git (`git status` says how), then run the same command again".into(),
            Error::Locked { path, .. } => format!(
                "wait for the other process to finish, then run the same command again; if no bsi or git is running, `{}`",
                command_line(["rm", &path.to_string_lossy()])
            ),
            Error::NotFound(_) => "`bsi status` lists the sessions and their scopes".into(),
            Error::Refused { hint, .. } => hint.clone(),
            Error::Unreachable { .. } => {
                "check the network and the remote (`git fetch` shows git's own error), then run `bsi sync` again; local changes stay recorded".into()
            }
            Error::Git(_) => "run `git status` in the brain to see what git says, then retry".into(),
            Error::Io { .. } => "check the path and its permissions, then run the same command again".into(),
            Error::Output(_) => {
                "the output could not be written (a full disk?): free some room, or send the output elsewhere, then run the same command again".into()
            }
        })
    }

    /// A short name of the kind of error, for JSON output.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Usage(_) | Error::BadInput(..) => "usage",
            Error::Scope(_) => "scope",
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
            Error::Refused { .. } => "refused",
            Error::Unreachable { .. } => "unreachable",
            Error::Git(_) => "git",
            Error::Io { .. } => "io",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Error, exit};

    /// Each kind of error has one exit code, whatever its words.
    #[test]
    fn one_exit_code_per_kind() {
        let samples = [
            Error::Usage("a".into()),
            Error::BadInput("a".into(), "h".into()),
            Error::Refused {
                what: "a".into(),
                hint: "h".into(),
            },
            Error::NotFound("a".into()),
            Error::NoRegistry { branch: "b".into() },
            Error::Unreachable {
                remote: "r".into(),
                why: "w".into(),
            },
            Error::Busy {
                remote: "r".into(),
                attempts: 1,
                waited_ms: 1000,
            },
            Error::GitFailed {
                command: "git x".into(),
                stderr: "e".into(),
            },
            Error::io("x", std::io::Error::other("e")),
        ];
        let mut seen: std::collections::HashMap<&str, u8> = std::collections::HashMap::new();
        for e in &samples {
            let code = *seen.entry(e.kind()).or_insert(e.code());
            assert_eq!(code, e.code(), "{} has two exit codes", e.kind());
            assert!(e.hint().is_some(), "{} has no hint", e.kind());
        }
        assert_eq!(seen["usage"], exit::USAGE);
        assert_eq!(seen["refused"], exit::ERROR);
        assert_eq!(seen["no-registry"], exit::REGISTRY);
        assert_eq!(seen["unreachable"], exit::UNPUBLISHED);
        assert_eq!(seen["busy"], exit::BUSY);
    }
}
