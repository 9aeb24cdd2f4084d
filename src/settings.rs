//! Where the registry lives and where it is published: each value resolved
//! once per run, in one order — flag > environment > git config (this
//! clone) > `.bsi.toml` (the brain) > default.
//!
//! | setting | flag / environment | git config | `.bsi.toml` | default |
//! |---|---|---|---|---|
//! | registry branch | — | `bsi.registryBranch` | `registry_branch` | `brain-index` |
//! | remote | `--remote` / `BSI_REMOTE` | `bsi.remote` | `remote` | the registry branch's upstream, else the current branch's, else the only remote, else the one remote that has the registry branch |
//! | publish timeout | `BSI_PUBLISH_TIMEOUT` | `bsi.publishTimeout` | `publish_timeout` | 120s |
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
                return Err(Error::NoSuchRemote { name: name.clone() });
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
            (_, all) => Err(Error::WhichRemote {
                branch: self.branch.clone(),
                remotes: all.to_vec(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Each setting from the sources it is read from, on a new repository
    //! (no commit, no identity needed) whose `.git/config` the test writes.

    use super::*;

    /// A new repository with `entries` in its own git configuration, opened
    /// as bsi opens one.
    fn repo(entries: &[(&str, &str)]) -> (tempfile::TempDir, Git) {
        let dir = tempfile::tempdir().expect("tempdir");
        git2::Repository::init(dir.path()).expect("git init");
        let git = Git::discover(dir.path()).expect("open the repository");
        for (key, value) in entries {
            git.set_config(key, value).expect("git config");
        }
        (dir, git)
    }

    fn toml(text: &str) -> Config {
        config::parse(text).expect("a valid .bsi.toml")
    }

    fn resolve(entries: &[(&str, &str)], file: &str, flag: Option<&str>) -> Result<Settings> {
        let (_dir, git) = repo(entries);
        Settings::resolve(&git, toml(file), flag)
    }

    #[test]
    fn a_brain_without_bsi_toml_has_the_default_configuration() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(load_config(dir.path()).expect("no file"), Config::default());
        std::fs::write(dir.path().join(CONFIG_FILE), "default_ttl = \"4h\"\n").expect("write");
        assert_eq!(
            load_config(dir.path()).expect("read").default_ttl,
            Some(chrono::Duration::hours(4))
        );
        std::fs::write(dir.path().join(CONFIG_FILE), "default_ttl = \"12h\"\n").expect("write");
        match load_config(dir.path()) {
            Err(Error::Config { path, .. }) => assert_eq!(path, dir.path().join(CONFIG_FILE)),
            other => panic!("not a configuration error: {other:?}"),
        }
    }

    #[test]
    fn nothing_set_gives_the_defaults() {
        let s = resolve(&[], "", None).expect("settings");
        assert_eq!(s.branch, DEFAULT_BRANCH);
        assert_eq!(s.named_remote, None);
        assert_eq!(s.history_keep, DEFAULT_HISTORY_KEEP);
        assert_eq!(s.hook_mode, HookMode::Normal);
        assert_eq!(s.hook_mode_warning, None);
        assert_eq!(s.ttl(None), crate::ttl::DEFAULT_TTL);
        if std::env::var_os("BSI_PUBLISH_TIMEOUT").is_none() {
            assert_eq!(s.publish_timeout, DEFAULT_PUBLISH_TIMEOUT);
        }
    }

    #[test]
    fn the_registry_branch_is_git_config_then_bsi_toml() {
        let file = "registry_branch = \"team-claims\"\n";
        assert_eq!(
            resolve(&[], file, None).expect("settings").branch,
            "team-claims"
        );
        let mine = [("bsi.registryBranch", " my-claims ")];
        assert_eq!(
            resolve(&mine, file, None).expect("settings").branch,
            "my-claims"
        );
        // A clone's bad name is an error, not a silent fallback to the file.
        match resolve(&[("bsi.registryBranch", "a..b")], file, None) {
            Err(Error::Usage(m)) => assert!(m.contains("`a..b`"), "{m}"),
            other => panic!("not a usage error: {other:?}"),
        }
    }

    #[test]
    fn the_remote_is_named_by_the_flag_then_git_config_then_bsi_toml() {
        let file = "remote = \"team\"\n";
        let clone = [("bsi.remote", "mine")];
        let named = |entries: &[(&str, &str)], flag| {
            resolve(entries, file, flag).expect("settings").named_remote
        };
        assert_eq!(named(&clone, Some(" flag ")).as_deref(), Some("flag"));
        // A blank flag (BSI_REMOTE= set but empty) names nothing.
        assert_eq!(named(&clone, Some("  ")).as_deref(), Some("mine"));
        assert_eq!(named(&[], None).as_deref(), Some("team"));
    }

    #[test]
    fn the_publish_timeout_is_git_config_then_bsi_toml() {
        if std::env::var_os("BSI_PUBLISH_TIMEOUT").is_some() {
            // The environment comes first: nothing below could be seen.
            return;
        }
        let file = "publish_timeout = \"2m\"\n";
        let timeout = |entries: &[(&str, &str)]| {
            resolve(entries, file, None)
                .expect("settings")
                .publish_timeout
        };
        assert_eq!(timeout(&[]), Duration::from_secs(120));
        assert_eq!(
            timeout(&[("bsi.publishTimeout", "500ms")]),
            Duration::from_millis(500)
        );
        match resolve(&[("bsi.publishTimeout", "soon")], file, None) {
            Err(Error::Usage(m)) => {
                assert!(m.contains("git config bsi.publishTimeout is `soon`"), "{m}");
            }
            other => panic!("not a usage error: {other:?}"),
        }
    }

    #[test]
    fn a_clones_hook_mode_wins_and_a_bad_one_is_said_and_ignored() {
        let file = "hook_mode = \"warn\"\n";
        let s = resolve(&[], file, None).expect("settings");
        assert_eq!((s.hook_mode, s.hook_mode_warning), (HookMode::Warn, None));
        let s = resolve(&[("bsi.hookMode", "STRICT")], file, None).expect("settings");
        assert_eq!((s.hook_mode, s.hook_mode_warning), (HookMode::Strict, None));
        let s = resolve(&[("bsi.hookMode", "loud")], file, None).expect("settings");
        assert_eq!(s.hook_mode, HookMode::Warn);
        let warning = s.hook_mode_warning.expect("a warning");
        assert!(
            warning.contains("`loud`") && warning.contains("using `warn`"),
            "{warning}"
        );
    }

    #[test]
    fn the_agent_is_the_flag_then_the_environment_then_bsi_toml_then_user_at_host() {
        let file = toml("default_agent = \"claude\"\n");
        assert_eq!(agent_name(Some(" codex "), Some("gemini"), &file), "codex");
        assert_eq!(agent_name(None, Some("gemini"), &file), "gemini");
        assert_eq!(agent_name(None, None, &file), "claude");
        let anyone = agent_name(None, None, &Config::default());
        assert_eq!(anyone, default_agent());
        assert!(anyone.contains('@'), "{anyone}");
    }

    #[test]
    fn the_ttl_is_the_flag_then_bsi_toml_then_two_hours() {
        let s = resolve(&[], "default_ttl = \"4h\"\n", None).expect("settings");
        assert_eq!(
            s.ttl(Some(chrono::Duration::minutes(90))),
            chrono::Duration::minutes(90)
        );
        assert_eq!(s.ttl(None), chrono::Duration::hours(4));
        let s = resolve(&[], "", None).expect("settings");
        assert_eq!(s.ttl(None), chrono::Duration::hours(2));
    }

    /// The remote [`Settings::remote`] finds in a repository on branch
    /// `main` with `entries` in its configuration and, when `tracking` names
    /// a remote, that remote's copy of the registry branch.
    fn remote_of(entries: &[(&str, &str)], tracking: Option<&str>) -> Result<Option<Remote>> {
        let (dir, git) = repo(entries);
        let repo = git2::Repository::open(dir.path()).expect("open");
        let tree = repo
            .treebuilder(None)
            .expect("tree")
            .write()
            .expect("write");
        let tree = repo.find_tree(tree).expect("tree");
        let who =
            git2::Signature::new("T", "t@example.com", &git2::Time::new(0, 0)).expect("signature");
        repo.set_head("refs/heads/main").expect("HEAD");
        let refs = ["HEAD".to_string()]
            .into_iter()
            .chain(tracking.map(|r| format!("refs/remotes/{r}/{DEFAULT_BRANCH}")));
        for name in refs {
            repo.commit(Some(&name), &who, &who, "a commit", &tree, &[])
                .expect("commit");
        }
        let settings = Settings::resolve(&git, Config::default(), None)?;
        settings.remote(&git)
    }

    fn at(name: &str) -> Option<Remote> {
        Some(Remote {
            name: name.into(),
            branch: DEFAULT_BRANCH.into(),
        })
    }

    #[test]
    fn the_remote_falls_back_from_upstream_to_the_only_remote_to_the_one_with_the_registry() {
        let origin = ("remote.origin.url", "/nowhere/origin");
        let backup = ("remote.backup.url", "/nowhere/backup");
        assert_eq!(remote_of(&[], None).expect("local"), None);
        assert_eq!(remote_of(&[backup], None).expect("one"), at("backup"));
        // The registry branch's upstream first.
        let upstream = ("branch.brain-index.remote", "backup");
        assert_eq!(
            remote_of(&[origin, backup, upstream], None).expect("upstream"),
            at("backup")
        );
        // Then the current branch's.
        let main = [
            ("branch.main.remote", "backup"),
            ("branch.main.merge", "refs/heads/main"),
        ];
        assert_eq!(
            remote_of(&[origin, backup, main[0], main[1]], None).expect("current"),
            at("backup")
        );
        let registry_first = ("branch.brain-index.remote", "origin");
        assert_eq!(
            remote_of(&[origin, backup, main[0], main[1], registry_first], None).expect("first"),
            at("origin")
        );
        // Else the one remote that has the registry branch.
        assert_eq!(
            remote_of(&[origin, backup], Some("backup")).expect("tracking"),
            at("backup")
        );
        // Else nothing says which: an error that proposes one, not a
        // silently local brain.
        match remote_of(&[origin, backup], None) {
            Err(e @ Error::WhichRemote { .. }) => {
                assert!(e.to_string().contains("2 remotes"), "{e}");
                assert!(e.hint().contains("git config bsi.remote origin"), "{e:?}");
            }
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn a_named_remote_must_exist() {
        let origin = ("remote.origin.url", "/nowhere/origin");
        assert_eq!(
            remote_of(&[origin, ("bsi.remote", "origin")], None).expect("named"),
            at("origin")
        );
        match remote_of(&[origin, ("bsi.remote", "upstream")], None) {
            Err(Error::NoSuchRemote { name }) => assert_eq!(name, "upstream"),
            other => panic!("not refused: {other:?}"),
        }
    }
}
