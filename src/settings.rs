//! Where the registry lives and where it is published: each value resolved
//! once per run, in one order — flag > environment > git config (this
//! clone) > `.bsi.toml` (the brain) > default.
//!
//! | setting | flag / environment | git config | `.bsi.toml` | default |
//! |---|---|---|---|---|
//! | registry branch | — | `bsi.registryBranch` | `registry_branch` | `brain-index` |
//! | remote | `--remote` / `BSI_REMOTE` | `bsi.remote` | `remote` | the registry branch's upstream, else the current branch's, else the only remote, else the one remote that has the registry branch |
//! | publish timeout | `BSI_PUBLISH_TIMEOUT` | `bsi.publishTimeout` | `publish_timeout` | 120s |
//! | connection timeout | `BSI_CONNECTION_TIMEOUT` | `bsi.connectionTimeout` | `connection_timeout` | 10s |
//! | history kept | — | — | `history_keep` | 200 rows |
//! | hook mode | — | `bsi.hookMode` | `hook_mode` | normal |
//! | agent | `--agent` / `BSI_AGENT` | — | `default_agent` | `user@host` |
//! | TTL | `--ttl` | — | `default_ttl` | 2h |
//!
//! [`config`](crate::config) only parses `.bsi.toml`; reading it, and every
//! other source, is here.

use std::path::Path;
use std::time::Duration;

use crate::config::{self, CONFIG_FILE, Config, HookMode};
use crate::error::{Error, Result};
use crate::git::Git;
use crate::git_cli::Remote;

/// The registry branch when nothing else is set.
pub const DEFAULT_BRANCH: &str = "brain-index";
/// How long a write retries pushes that lost a race, when nothing else is set.
pub const DEFAULT_PUBLISH_TIMEOUT: Duration = Duration::from_secs(120);
/// How long one fetch or push may take, when nothing else is set.
pub const DEFAULT_CONNECTION_TIMEOUT: Duration = Duration::from_secs(10);
/// History rows kept in the registry when nothing else is set.
pub const DEFAULT_HISTORY_KEEP: usize = 200;
/// How long a read command waits for the remote before it shows the local state.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// The resolved settings of a run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The brain's `.bsi.toml`.
    pub config: Config,
    /// The registry branch's short name.
    pub branch: String,
    /// The remote named by a flag, the environment or a configuration,
    /// before the fallbacks of [`Settings::remote`].
    pub named_remote: Option<String>,
    /// How long a write retries pushes that lost a race.
    pub publish_timeout: Duration,
    /// How long one fetch or push may take (whatever is left of the race
    /// budget) before the remote counts as unreachable.
    pub connection_timeout: Duration,
    /// History rows kept in the registry; older rows move to the archive.
    pub history_keep: usize,
    /// How the pre-commit hook treats changes.
    pub hook_mode: HookMode,
    /// Why a clone's `bsi.hookMode` was ignored, when it was.
    pub hook_mode_warning: Option<String>,
}

/// Reads `.bsi.toml` in `root`; no file is the default configuration.
pub fn load_config(root: &Path) -> Result<Config> {
    let path = root.join(CONFIG_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
        Err(e) => return Err(Error::io(format!("cannot read {}", path.display()), e)),
    };
    config::parse(&text).map_err(|source| Error::Config { path, source })
}

/// The agent name from a flag, the environment and a `.bsi.toml`.
pub fn agent_name(flag: Option<&str>, env: Option<&str>, config: &Config) -> String {
    match flag.or(env).or(config.default_agent.as_deref()) {
        Some(a) => a.trim().to_string(),
        None => default_agent(),
    }
}

/// `user@host`: who holds claims when nothing names an agent.
pub fn default_agent() -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "user".into());
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.trim().is_empty())
        .or_else(|| {
            gethostname::gethostname()
                .into_string()
                .ok()
                .filter(|h| !h.trim().is_empty())
        })
        .map_or_else(|| "localhost".into(), |h| h.trim().to_string());
    format!("{user}@{host}")
}

/// A duration from the environment variable `env`, else the clone's git
/// config `key`, else `fallback` (from `.bsi.toml` or the default).
fn timeout(git: &Git, (env, key): (&str, &str), fallback: Duration) -> Result<Duration> {
    let given = std::env::var(env)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .map(|v| (env.to_string(), v))
        .or_else(|| {
            git.config_string(key)
                .map(|v| (format!("git config {key}"), v))
        });
    match given {
        Some((from, v)) => config::parse_timeout(&v).ok_or_else(|| {
            Error::Usage(format!(
                "{from} is `{v}`; use a duration like `30s`, `2m` or `500ms`"
            ))
        }),
        None => Ok(fallback),
    }
}

impl Settings {
    /// Resolves the settings for the repository `git`, with `config` read
    /// from the brain and `remote_flag` from `--remote` / `BSI_REMOTE`.
    pub fn resolve(git: &Git, config: Config, remote_flag: Option<&str>) -> Result<Settings> {
        let branch = match git.config_string("bsi.registryBranch") {
            Some(b) if config::valid_branch_name(b.trim()) => b.trim().to_string(),
            Some(b) => {
                return Err(Error::Usage(format!(
                    "git config bsi.registryBranch is `{b}`, not a plain branch name"
                )));
            }
            None => config
                .registry_branch
                .clone()
                .unwrap_or_else(|| DEFAULT_BRANCH.to_string()),
        };
        let named_remote = remote_flag
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .or_else(|| git.config_string("bsi.remote"))
            .or_else(|| config.remote.clone());
        let publish_timeout = timeout(
            git,
            ("BSI_PUBLISH_TIMEOUT", "bsi.publishTimeout"),
            config.publish_timeout.unwrap_or(DEFAULT_PUBLISH_TIMEOUT),
        )?;
        let connection_timeout = timeout(
            git,
            ("BSI_CONNECTION_TIMEOUT", "bsi.connectionTimeout"),
            config
                .connection_timeout
                .unwrap_or(DEFAULT_CONNECTION_TIMEOUT),
        )?;
        let history_keep = config.history_keep.unwrap_or(DEFAULT_HISTORY_KEEP);
        let (hook_mode, hook_mode_warning) = match git.config_string("bsi.hookMode") {
            Some(m) => match config::parse_hook_mode(&m) {
                Some(mode) => (mode, None),
                None => (
                    config.hook_mode,
                    Some(format!(
                        "git config bsi.hookMode `{}` is not off, warn, normal or strict; using `{}`",
                        m.trim(),
                        config.hook_mode.as_str()
                    )),
                ),
            },
            None => (config.hook_mode, None),
        };
        Ok(Settings {
            config,
            branch,
            named_remote,
            publish_timeout,
            connection_timeout,
            history_keep,
            hook_mode,
            hook_mode_warning,
        })
    }

    /// The agent name: `--agent`, else `BSI_AGENT` (`env`), else
    /// `default_agent` of `.bsi.toml`, else `user@host`.
    pub fn agent(&self, flag: Option<&str>, env: Option<&str>) -> String {
        agent_name(flag, env, &self.config)
    }

    /// The TTL of `open` and `renew`: `--ttl`, else `default_ttl` of
    /// `.bsi.toml`, else 2h.
    pub fn ttl(&self, flag: Option<chrono::Duration>) -> chrono::Duration {
        flag.or(self.config.default_ttl)
            .unwrap_or(crate::ttl::DEFAULT_TTL)
    }

    /// The remote that holds the registry branch, `None` when the brain is
    /// local only: the named one (which must exist), else the upstream of
    /// the registry branch, else the current branch's upstream remote, else
    /// the clone's only remote, else the one remote that has the registry
    /// branch. Several remotes and none of these is an error, not a silent
    /// local-only brain.
    pub fn remote(&self, git: &Git) -> Result<Option<Remote>> {
        let at = |name: String| Remote {
            name,
            branch: self.branch.clone(),
        };
        if let Some(name) = &self.named_remote {
            if !git.has_remote(name) {
                return Err(Error::BadInput(
                    format!(
                        "there is no git remote named `{name}` (from --remote, BSI_REMOTE, git config bsi.remote or .bsi.toml remote)"
                    ),
                    "`git remote -v` lists this clone's remotes: name one of them, or add it with `git remote add NAME URL`".into(),
                ));
            }
            return Ok(Some(at(name.clone())));
        }
        if let Some(r) = git
            .config_string(&format!("branch.{}.remote", self.branch))
            .filter(|r| r != "." && git.has_remote(r))
        {
            return Ok(Some(at(r)));
        }
        if let Some((r, _)) = git.upstream() {
            return Ok(Some(at(r)));
        }
        let remotes = git.remotes();
        if let [only] = remotes.as_slice() {
            return Ok(Some(at(only.clone())));
        }
        // Several remotes and no upstream: the one that has the registry.
        let holding: Vec<&String> = remotes
            .iter()
            .filter(|r| git.ref_target(&at((*r).clone()).tracking_ref()).is_some())
            .collect();
        match (holding.as_slice(), remotes.as_slice()) {
            ([one], _) => Ok(Some(at((*one).clone()))),
            (_, []) => Ok(None),
            // Keeping claims local here would leave them where no other
            // machine looks, with nothing said: ask which remote it is.
            (_, all) => Err({
                let pick = all.iter().find(|r| *r == "origin").unwrap_or(&all[0]);
                Error::BadInput(
                    format!(
                        "this clone has {} remotes ({}) and nothing says which one holds the registry branch `{}`",
                        all.len(),
                        all.join(", "),
                        self.branch
                    ),
                    format!(
                        "choose it for this clone with `git config bsi.remote {pick}`, or for the brain with `remote = \"{pick}\"` in .bsi.toml; then run the same command again"
                    ),
                )
            }),
        }
    }
}
