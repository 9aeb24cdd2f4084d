//! Where the registry lives and where it is published: each value resolved
//! once per run, in one order — flag > environment > git config (this
//! clone) > `.bsi.toml` (the brain) > default.
//!
//! | setting | flag / environment | git config | `.bsi.toml` | default |
//! |---|---|---|---|---|
//! | registry branch | — | `bsi.registryBranch` | `registry_branch` | `brain-index` |
//! | remote | `--remote` / `BSI_REMOTE` | `bsi.remote` | `remote` | the registry branch's upstream, else the current branch's, else the only remote, else the one remote that has the registry branch |
//! | publish timeout | `BSI_PUBLISH_TIMEOUT` | `bsi.publishTimeout` | `publish_timeout` | 120s |

use std::time::Duration;

use crate::config::{self, Config};
use crate::error::{Error, Result};
use crate::git::Git;
use crate::git_cli::Remote;

/// The registry branch when nothing else is set.
pub const DEFAULT_BRANCH: &str = "brain-index";
/// How long a write retries pushes that lost a race, when nothing else is set.
pub const DEFAULT_PUBLISH_TIMEOUT: Duration = Duration::from_secs(120);
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
        let publish_timeout = match std::env::var("BSI_PUBLISH_TIMEOUT")
            .ok()
            .filter(|v| !v.trim().is_empty())
            .map(|v| ("BSI_PUBLISH_TIMEOUT", v))
            .or_else(|| {
                git.config_string("bsi.publishTimeout")
                    .map(|v| ("git config bsi.publishTimeout", v))
            }) {
            Some((from, v)) => config::parse_timeout(&v).ok_or_else(|| {
                Error::Usage(format!(
                    "{from} is `{v}`; use a duration like `30s`, `2m` or `500ms`"
                ))
            })?,
            None => config.publish_timeout.unwrap_or(DEFAULT_PUBLISH_TIMEOUT),
        };
        Ok(Settings {
            config,
            branch,
            named_remote,
            publish_timeout,
        })
    }

    /// The remote that holds the registry branch, `None` when the brain is
    /// local only: the named one (which must exist), else the upstream of
    /// the registry branch, else the current branch's upstream remote, else
    /// the clone's only remote.
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
        Ok(match holding.as_slice() {
            [one] => Some(at((*one).clone())),
            _ => None,
        })
    }
}
