//! Where the registry lives and where it is published: each value resolved
//! once per run, by [`Settings::resolve`], in one order — flag >
//! environment > git config (this clone) > `.bsi.toml` (the brain) >
//! default. Nothing here reads the environment: the run's context reads it
//! once and hands over what it found ([`Given`]).
//!
//! | setting | flag / environment | git config | `.bsi.toml` | default |
//! |---|---|---|---|---|
//! | registry branch | — | `bsi.registryBranch` | `registry_branch` | `brain-index` |
//! | remote | `--remote` / `BSI_REMOTE` | `bsi.remote` | `remote` | the registry branch's upstream, else the one remote that has the registry branch (then recorded as `bsi.remote`), else the only remote |
//! | publish timeout | `BSI_PUBLISH_TIMEOUT` | `bsi.publishTimeout` | `publish_timeout` | 120s |
//! | connection timeout | `BSI_CONNECTION_TIMEOUT` | `bsi.connectionTimeout` | `connection_timeout` | 10s |
//! | hook fetch timeout | — | `bsi.hookFetchTimeout` | `hook_fetch_timeout` | 1s |
//! | history kept | — | — | `history_keep` | 200 rows |
//! | hook mode | — | `bsi.hookMode` | `hook_mode` | normal |
//! | agent | `--agent` / `BSI_AGENT` | — | `default_agent` | `user@host` |
//! | TTL | `--ttl` | — | `default_ttl` | 2h |
//!
//! The remote never follows the checked-out branch: which remote holds the
//! registry is a fact of the clone, the same on every branch and in every
//! work tree.
//!
//! [`config`](crate::config) only parses `.bsi.toml`; reading it, and every
//! other source, is here.

use std::path::Path;
use std::time::Duration;

use crate::config::{self, CONFIG_FILE, Config, HookMode};
use crate::error::{Error, Result};
use crate::git::Git;
use crate::git_cli::Remote;
use crate::values::Span;

/// The registry branch when nothing else is set.
pub(crate) const DEFAULT_BRANCH: &str = "brain-index";
/// How long a write retries pushes that lost a race, when nothing else is set.
pub(crate) const DEFAULT_PUBLISH_TIMEOUT: Duration = Duration::from_secs(120);
/// How long one fetch or push may take, when nothing else is set.
pub(crate) const DEFAULT_CONNECTION_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a git hook waits for the registry branch before judging a
/// commit on the view last fetched, when nothing else is set.
pub(crate) const DEFAULT_HOOK_FETCH_TIMEOUT: Duration = Duration::from_secs(1);
/// History rows kept in the registry when nothing else is set.
pub(crate) const DEFAULT_HISTORY_KEEP: usize = 200;
/// How long a read command waits for the remote before it shows the local state.
pub(crate) const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// What the command line and the environment say about the settings, read
/// once by the run's context.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Given {
    /// `--remote` / `BSI_REMOTE`.
    pub remote: Option<String>,
    /// `BSI_PUBLISH_TIMEOUT`.
    pub publish_timeout: Option<String>,
    /// `BSI_CONNECTION_TIMEOUT`.
    pub connection_timeout: Option<String>,
    /// A hook's run, which must not fail for a value it cannot use: a
    /// duration out of its range (environment, git config) is said in
    /// [`Settings::warnings`] and its default used, where another run is
    /// refused with the range.
    pub lenient: bool,
}

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
    /// The remote that holds the registry, found once.
    remote: Found,
    /// How long a write retries pushes that lost a race.
    pub publish_timeout: Duration,
    /// How long one fetch or push may take (whatever is left of the race
    /// budget) before the remote counts as unreachable.
    pub connection_timeout: Duration,
    /// How long a git hook waits for the registry branch it fetches before
    /// judging a commit (at most the connection timeout).
    pub hook_fetch_timeout: Duration,
    /// History rows kept in the registry; older rows move to the archive.
    pub history_keep: usize,
    /// How the pre-commit hook treats changes.
    pub hook_mode: HookMode,
    /// Values of this clone's that were ignored, and why: a `bsi.hookMode`
    /// that is no mode; in a hook's run ([`Given::lenient`]), a duration
    /// out of its range.
    pub warnings: Vec<String>,
}

/// The registry's remote as resolved: one, none (a local brain), or why
/// none can be chosen — said only by the commands that need a remote.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Found {
    Remote(Option<Remote>),
    /// A remote named by the settings that this clone does not have.
    NoSuch(String),
    /// Several remotes, and nothing says which one holds the registry.
    Which {
        remotes: Vec<String>,
        holding: Vec<String>,
    },
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

/// Reads `.bsi.toml` in `root` for a hook, which must run whatever it
/// meets ([`config::parse_lenient`]): the configuration with every key it
/// could read, and a warning for each it could not, left at its default.
/// A key that decides what is judged ([`config::GUARDING`]), or a file that
/// is no TOML, is never replaced by a default: its error, unless the file
/// says `hook_mode = "warn"`.
pub fn load_config_for_hook(root: &Path) -> Result<(Config, Vec<String>)> {
    let path = root.join(CONFIG_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((Config::default(), Vec::new()));
        }
        Err(e) => return Err(Error::io(format!("cannot read {}", path.display()), e)),
    };
    let (config, problems) = config::parse_lenient(&text);
    if config.hook_mode != HookMode::Warn
        && let Some(source) = problems.iter().find(|p| p.guards())
    {
        return Err(Error::Config {
            path,
            source: source.clone(),
        });
    }
    let warnings = problems
        .iter()
        .map(|p| format!("{}: {p}; the hook runs with its default", path.display()))
        .collect();
    Ok((config, warnings))
}

/// The agent name from a flag, the environment and a `.bsi.toml`, else
/// `fallback` (the run's `user@host`).
pub fn agent_name(
    flag: Option<&str>,
    env: Option<&str>,
    config: &Config,
    fallback: &str,
) -> String {
    match flag.or(env).or(config.default_agent.as_deref()) {
        Some(a) => a.trim().to_string(),
        None => fallback.to_string(),
    }
}

/// `user@host`, who holds claims when nothing names an agent, from the
/// user name (`USER`, else `USERNAME`) and host name (`HOSTNAME`, else the
/// system's) the run's context read.
pub fn default_agent(user: Option<&str>, host: Option<&str>) -> String {
    let user = user.unwrap_or("user");
    let host = host
        .map(str::to_string)
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

/// A duration given by the environment (`given`, from the variable `env`),
/// else the clone's git config `key`, else `fallback` (from `.bsi.toml` or
/// the default); held to the range of its `span`.
/// A timeout as a person writes it: `500ms`, `2s`.
fn duration_words(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

fn timeout(
    git: &Git,
    (given, env): (Option<&str>, &str),
    (key, span): (&str, Span),
    fallback: Duration,
    lenient: Option<&mut Vec<String>>,
) -> Result<Duration> {
    let given = given
        .filter(|v| !v.trim().is_empty())
        .map(|v| (env.to_string(), v.to_string()))
        .or_else(|| {
            git.config_string(key)
                .map(|v| (format!("git config {key}"), v))
        });
    let Some((from, v)) = given else {
        return Ok(fallback);
    };
    match (span.parse(&v), lenient) {
        (Ok(d), _) => Ok(d),
        (Err(e), Some(warnings)) => {
            // Ends with what removes the value (both names are plain words).
            let next = if from == env {
                format!("unset {env}")
            } else {
                format!("git config --unset {key}")
            };
            warnings.push(format!(
                "{from} {}; using {}. Next: `{next}` to drop it, or set a duration in range",
                e.reason(),
                duration_words(fallback)
            ));
            Ok(fallback)
        }
        (Err(e), None) => Err(Error::Usage(format!("{from} {}", e.reason()))),
    }
}

impl Settings {
    /// Resolves the settings for the repository `git`, with `config` read
    /// from the brain and `given` from the command line and environment.
    pub fn resolve(git: &Git, config: Config, given: &Given) -> Result<Settings> {
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
        let named_remote = given
            .remote
            .as_deref()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .or_else(|| git.config_string("bsi.remote"))
            .or_else(|| config.remote.clone());
        let mut warnings = Vec::new();
        let publish_timeout = timeout(
            git,
            (given.publish_timeout.as_deref(), "BSI_PUBLISH_TIMEOUT"),
            ("bsi.publishTimeout", Span::Publish),
            config.publish_timeout.unwrap_or(DEFAULT_PUBLISH_TIMEOUT),
            given.lenient.then_some(&mut warnings),
        )?;
        let connection_timeout = timeout(
            git,
            (
                given.connection_timeout.as_deref(),
                "BSI_CONNECTION_TIMEOUT",
            ),
            ("bsi.connectionTimeout", Span::Connection),
            config
                .connection_timeout
                .unwrap_or(DEFAULT_CONNECTION_TIMEOUT),
            given.lenient.then_some(&mut warnings),
        )?;
        let hook_fetch_timeout = timeout(
            git,
            (None, ""),
            ("bsi.hookFetchTimeout", Span::Connection),
            config
                .hook_fetch_timeout
                .unwrap_or(DEFAULT_HOOK_FETCH_TIMEOUT),
            given.lenient.then_some(&mut warnings),
        )?
        .min(connection_timeout);
        let history_keep = config.history_keep.unwrap_or(DEFAULT_HISTORY_KEEP);
        let hook_mode = match git.config_string("bsi.hookMode") {
            Some(m) => config::parse_hook_mode(&m).unwrap_or_else(|| {
                warnings.push(format!(
                    "git config bsi.hookMode `{}` is not off, warn, normal or strict; using `{}`",
                    m.trim(),
                    config.hook_mode.as_str()
                ));
                config.hook_mode
            }),
            None => config.hook_mode,
        };
        let remote = find_remote(git, &branch, named_remote.as_deref());
        Ok(Settings {
            config,
            branch,
            named_remote,
            remote,
            publish_timeout,
            connection_timeout,
            hook_fetch_timeout,
            history_keep,
            hook_mode,
            warnings,
        })
    }

    /// The TTL of `open` and `renew`: `--ttl`, else `default_ttl` of
    /// `.bsi.toml`, else 2h.
    pub fn ttl(&self, flag: Option<chrono::Duration>) -> chrono::Duration {
        flag.or(self.config.default_ttl)
            .unwrap_or(crate::ttl::DEFAULT_TTL)
    }

    /// The remote that holds the registry branch, `None` when the brain is
    /// local only, as found once when the settings were resolved: the named
    /// one (which must exist), else the upstream of the registry branch,
    /// else the one remote that has a copy of the registry branch, else the
    /// clone's only remote. Several remotes and none of these is an error,
    /// not a silent local-only brain. The checked-out branch's upstream
    /// plays no part.
    pub fn remote(&self) -> Result<Option<Remote>> {
        match &self.remote {
            Found::Remote(r) => Ok(r.clone()),
            Found::NoSuch(name) => Err(Error::NoSuchRemote { name: name.clone() }),
            Found::Which { remotes, holding } => Err(Error::WhichRemote {
                branch: self.branch.clone(),
                remotes: remotes.clone(),
                holding: holding.clone(),
            }),
        }
    }

    /// `bsi init` only: refuses when a remote of this clone other than
    /// `chosen` already holds the registry branch, asking each with a
    /// bounded fetch of that one branch when no copy of it is known. A
    /// registry on any remote means the brain has one: init must not make a
    /// rival. Found when nothing named a remote, it is recorded as the
    /// clone's `bsi.remote`.
    pub fn refuse_rival(&self, git: &Git, workdir: &Path, chosen: Option<&Remote>) -> Result<()> {
        let Some(found) = git
            .remotes()
            .into_iter()
            .filter(|r| chosen.is_none_or(|c| &c.name != r))
            .map(|name| Remote {
                name,
                branch: self.branch.clone(),
            })
            .find(|r| {
                git.ref_target(&r.tracking_ref()).is_some()
                    || (r.fetch(workdir, FETCH_TIMEOUT).is_ok()
                        && git.ref_target(&r.tracking_ref()).is_some())
            })
        else {
            return Ok(());
        };
        if let (Some(named), Some(_)) = (&self.named_remote, chosen) {
            return Err(Error::RegistryElsewhere {
                holder: found.name.clone(),
                label: found.label(),
                named: named.clone(),
            });
        }
        let _ = git.set_config("bsi.remote", &found.name);
        Err(Error::RegistryExists(found.label()))
    }
}

/// The remote of [`Settings::remote`]; a remote found by its copy of the
/// registry branch is recorded in the clone's git config (`bsi.remote`), so
/// a later remote, a deleted copy or another work tree cannot change it.
fn find_remote(git: &Git, branch: &str, named: Option<&str>) -> Found {
    let at = |name: &str| Remote {
        name: name.to_string(),
        branch: branch.to_string(),
    };
    if let Some(name) = named {
        if !git.has_remote(name) {
            return Found::NoSuch(name.to_string());
        }
        return Found::Remote(Some(at(name)));
    }
    if let Some(r) = git
        .config_string(&format!("branch.{branch}.remote"))
        .filter(|r| r != "." && git.has_remote(r))
    {
        return Found::Remote(Some(at(&r)));
    }
    let remotes = git.remotes();
    let holding: Vec<&String> = remotes
        .iter()
        .filter(|r| git.ref_target(&at(r).tracking_ref()).is_some())
        .collect();
    match (holding.as_slice(), remotes.as_slice()) {
        ([one], _) => {
            // Once found, kept: best effort, the answer is the same next run.
            let _ = git.set_config("bsi.remote", one);
            Found::Remote(Some(at(one)))
        }
        ([], [only]) => Found::Remote(Some(at(only))),
        (_, []) => Found::Remote(None),
        // Keeping claims local here would leave them where no other
        // machine looks, with nothing said: ask which remote it is.
        (_, all) => Found::Which {
            remotes: all.to_vec(),
            holding: holding.iter().map(|r| (*r).clone()).collect(),
        },
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
        let given = Given {
            remote: flag.map(str::to_string),
            ..Given::default()
        };
        Settings::resolve(&git, toml(file), &given)
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
        assert!(s.warnings.is_empty());
        assert_eq!(s.ttl(None), crate::ttl::DEFAULT_TTL);
        assert_eq!(s.publish_timeout, DEFAULT_PUBLISH_TIMEOUT);
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
    fn the_connection_timeout_is_the_environment_then_git_config_then_bsi_toml() {
        let file = toml("connection_timeout = \"4s\"\n");
        let (_dir, git) = repo(&[]);
        let s = Settings::resolve(&git, Config::default(), &Given::default()).expect("settings");
        assert_eq!(s.connection_timeout, DEFAULT_CONNECTION_TIMEOUT);
        let s = Settings::resolve(&git, file.clone(), &Given::default()).expect("settings");
        assert_eq!(s.connection_timeout, Duration::from_secs(4));
        let (_dir, git) = repo(&[("bsi.connectionTimeout", "2s")]);
        let s = Settings::resolve(&git, file.clone(), &Given::default()).expect("settings");
        assert_eq!(s.connection_timeout, Duration::from_secs(2));
        let given = |v: &str| Given {
            connection_timeout: Some(v.to_string()),
            ..Given::default()
        };
        let s = Settings::resolve(&git, file.clone(), &given("700ms")).expect("settings");
        assert_eq!(s.connection_timeout, Duration::from_millis(700));
        match Settings::resolve(&git, file, &given("soon")) {
            Err(Error::Usage(m)) => assert!(m.contains("BSI_CONNECTION_TIMEOUT is `soon`"), "{m}"),
            other => panic!("not a usage error: {other:?}"),
        }
    }

    #[test]
    fn the_hook_fetch_timeout_is_git_config_then_bsi_toml_and_at_most_the_connection_timeout() {
        let hook = |entries: &[(&str, &str)], file: &str| {
            resolve(entries, file, None)
                .expect("settings")
                .hook_fetch_timeout
        };
        assert_eq!(hook(&[], ""), DEFAULT_HOOK_FETCH_TIMEOUT);
        let file = "hook_fetch_timeout = \"3s\"\n";
        assert_eq!(hook(&[], file), Duration::from_secs(3));
        let clone = [("bsi.hookFetchTimeout", "250ms")];
        assert_eq!(hook(&clone, file), Duration::from_millis(250));
        // Never longer than one fetch may take.
        let short = [("bsi.connectionTimeout", "200ms")];
        assert_eq!(hook(&short, file), Duration::from_millis(200));
        match resolve(&[("bsi.hookFetchTimeout", "0s")], "", None) {
            Err(Error::Usage(m)) => {
                assert!(m.contains("git config bsi.hookFetchTimeout is `0s`"), "{m}");
            }
            other => panic!("not a usage error: {other:?}"),
        }
    }

    #[test]
    fn the_publish_timeout_is_the_environment_then_git_config_then_bsi_toml() {
        let (_dir, git) = repo(&[("bsi.publishTimeout", "500ms")]);
        let given = |v: &str| Given {
            publish_timeout: Some(v.to_string()),
            ..Given::default()
        };
        let s = Settings::resolve(&git, Config::default(), &given("3s")).expect("settings");
        assert_eq!(s.publish_timeout, Duration::from_secs(3));
        // Set but blank is not set.
        let s = Settings::resolve(&git, Config::default(), &given(" ")).expect("settings");
        assert_eq!(s.publish_timeout, Duration::from_millis(500));
        match Settings::resolve(&git, Config::default(), &given("soon")) {
            Err(Error::Usage(m)) => assert!(m.contains("BSI_PUBLISH_TIMEOUT is `soon`"), "{m}"),
            other => panic!("not a usage error: {other:?}"),
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
        assert_eq!((s.hook_mode, s.warnings.is_empty()), (HookMode::Warn, true));
        let s = resolve(&[("bsi.hookMode", "STRICT")], file, None).expect("settings");
        assert_eq!(
            (s.hook_mode, s.warnings.is_empty()),
            (HookMode::Strict, true)
        );
        let s = resolve(&[("bsi.hookMode", "loud")], file, None).expect("settings");
        assert_eq!(s.hook_mode, HookMode::Warn);
        let warning = s.warnings.first().expect("a warning").clone();
        assert!(
            warning.contains("`loud`") && warning.contains("using `warn`"),
            "{warning}"
        );
    }

    #[test]
    fn the_agent_is_the_flag_then_the_environment_then_bsi_toml_then_user_at_host() {
        let file = toml("default_agent = \"claude\"\n");
        let me = default_agent(Some("ana"), Some(" box "));
        assert_eq!(me, "ana@box");
        assert_eq!(
            agent_name(Some(" codex "), Some("gemini"), &file, &me),
            "codex"
        );
        assert_eq!(agent_name(None, Some("gemini"), &file, &me), "gemini");
        assert_eq!(agent_name(None, None, &file, &me), "claude");
        assert_eq!(agent_name(None, None, &Config::default(), &me), "ana@box");
        // No user name, no HOSTNAME: still `user@host`.
        let anyone = default_agent(None, Some(""));
        assert!(anyone.starts_with("user@") && anyone.len() > 5, "{anyone}");
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
        let settings = Settings::resolve(&git, Config::default(), &Given::default())?;
        settings.remote()
    }

    fn at(name: &str) -> Option<Remote> {
        Some(Remote {
            name: name.into(),
            branch: DEFAULT_BRANCH.into(),
        })
    }

    #[test]
    fn the_remote_is_the_registry_branchs_upstream_then_the_one_with_the_registry_then_the_only_one()
     {
        let origin = ("remote.origin.url", "/nowhere/origin");
        let backup = ("remote.backup.url", "/nowhere/backup");
        assert_eq!(remote_of(&[], None).expect("local"), None);
        assert_eq!(remote_of(&[backup], None).expect("one"), at("backup"));
        // The registry branch's upstream first.
        let upstream = ("branch.brain-index.remote", "backup");
        assert_eq!(
            remote_of(&[origin, backup, upstream], Some("origin")).expect("upstream"),
            at("backup")
        );
        // Then the one remote that has the registry branch, whatever the
        // checked-out branch follows.
        let main = [
            ("branch.main.remote", "backup"),
            ("branch.main.merge", "refs/heads/main"),
        ];
        assert_eq!(
            remote_of(&[origin, backup, main[0], main[1]], Some("origin")).expect("tracking"),
            at("origin")
        );
        // Else nothing says which, even the checked-out branch's upstream:
        // an error that proposes one, not a silently local brain.
        for entries in [&[origin, backup][..], &[origin, backup, main[0], main[1]]] {
            match remote_of(entries, None) {
                Err(e @ Error::WhichRemote { .. }) => {
                    assert!(e.to_string().contains("2 remotes"), "{e}");
                }
                other => panic!("not refused: {other:?}"),
            }
        }
    }

    #[test]
    fn the_remote_found_by_its_registry_is_recorded_for_the_clone() {
        let (dir, git) = repo(&[
            ("remote.origin.url", "/nowhere/origin"),
            ("remote.fork.url", "/nowhere/fork"),
        ]);
        let repo = git2::Repository::open(dir.path()).expect("open");
        let tree = repo
            .treebuilder(None)
            .expect("tree")
            .write()
            .expect("write");
        let tree = repo.find_tree(tree).expect("tree");
        let who =
            git2::Signature::new("T", "t@example.com", &git2::Time::new(0, 0)).expect("signature");
        let copy = format!("refs/remotes/fork/{DEFAULT_BRANCH}");
        repo.commit(Some(&copy), &who, &who, "a commit", &tree, &[])
            .expect("commit");
        let s = Settings::resolve(&git, Config::default(), &Given::default()).expect("settings");
        assert_eq!(s.remote().expect("found"), at("fork"));
        assert_eq!(git.config_string("bsi.remote").as_deref(), Some("fork"));
        // Kept when the copy is gone: a fact of the clone, not of a fetch.
        repo.find_reference(&copy)
            .expect("ref")
            .delete()
            .expect("delete");
        let s = Settings::resolve(&git, Config::default(), &Given::default()).expect("settings");
        assert_eq!(s.remote().expect("recorded"), at("fork"));
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
