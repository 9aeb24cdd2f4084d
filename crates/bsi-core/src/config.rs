//! The brain's configuration: `.bsi.toml`, next to the registry.
//!
//! Pure: [`parse`] takes the text and gives a [`Config`] or a
//! [`ConfigError`]; reading the file is [`crate::settings::load_config`]'s. Every key is optional; a missing file is the default
//! configuration. Unknown keys are refused with the nearest valid name, so a
//! typo never silently changes nothing.

use chrono::Duration;
use serde::Deserialize;

use crate::ttl;
use crate::values::Span;

/// The file name, at the brain root (the directory holding the registry).
pub const CONFIG_FILE: &str = ".bsi.toml";

/// Every key bsi understands, in the order of the [`Config`] fields (the
/// documentation groups them differently).
pub const KEYS: &[&str] = &[
    "default_ttl",
    "default_agent",
    "hook_mode",
    "remote",
    "max_active_per_agent",
    "markdown_extensions",
    "registry_branch",
    "publish_timeout",
    "connection_timeout",
    "hook_fetch_timeout",
    "claim_on_write",
    "history_keep",
    "registry_language",
];

/// How strictly the git hooks hold commits to the session's claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HookMode {
    /// The hooks do nothing.
    Off,
    /// The hooks report changes outside the claims, and let the commit pass.
    Warn,
    /// The default.
    #[default]
    Normal,
    /// The hooks refuse every change outside the claims.
    Strict,
}

/// Reads a hook mode name: `off`, `warn`, `normal` or `strict`, in any case.
pub fn parse_hook_mode(raw: &str) -> Option<HookMode> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "off" => Some(HookMode::Off),
        "warn" => Some(HookMode::Warn),
        "normal" | "" => Some(HookMode::Normal),
        "strict" => Some(HookMode::Strict),
        _ => None,
    }
}

impl HookMode {
    /// The name written in `.bsi.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            HookMode::Off => "off",
            HookMode::Warn => "warn",
            HookMode::Normal => "normal",
            HookMode::Strict => "strict",
        }
    }
}

/// The configuration of one brain. Absent keys are `None` (or the default).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    /// TTL of `bsi open` and `bsi renew` when `--ttl` is not given.
    pub default_ttl: Option<Duration>,
    /// Agent name when neither `--agent` nor `BSI_AGENT` is given.
    pub default_agent: Option<String>,
    /// How the git hooks treat changes outside the session's claims.
    pub hook_mode: HookMode,
    /// The git remote the registry is published to.
    pub remote: Option<String>,
    /// At most this many active claims per agent.
    pub max_active_per_agent: Option<usize>,
    /// File name endings, besides `.md` and `.markdown`, whose files have
    /// sections (lowercase, without the dot).
    pub markdown_extensions: Vec<String>,
    /// The branch that holds the registry.
    pub registry_branch: Option<String>,
    /// How long a write keeps retrying a push that lost a race.
    pub publish_timeout: Option<std::time::Duration>,
    /// How long one fetch or push may take before the remote counts as
    /// unreachable.
    pub connection_timeout: Option<std::time::Duration>,
    /// How long a git hook waits for the registry branch it fetches before
    /// judging a commit, before it judges on the view last fetched.
    pub hook_fetch_timeout: Option<std::time::Duration>,
    /// The agent tools' edit hook claims a free scope on an agent's first
    /// edit of it, instead of only refusing edits in other sessions' claims.
    pub claim_on_write: bool,
    /// History rows kept in the registry; older ones move to archive files.
    pub history_keep: Option<usize>,
    /// The words of the headings and stale reasons `bsi init` writes.
    pub registry_language: crate::registry::Language,
    /// The keys this bsi does not know (a typo, or a newer bsi's setting):
    /// ignored, and said as warnings by every command.
    pub unknown: Vec<ConfigError>,
}

/// What is wrong with a `.bsi.toml`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not TOML.
    #[error("line {line}: {message}")]
    Syntax {
        /// 1-based line, 0 when unknown.
        line: usize,
        /// What the TOML parser said.
        message: String,
    },
    /// A key bsi does not know.
    #[error("unknown key `{key}`{}", match .suggestion {
        Some(s) => format!(": did you mean `{s}`?"),
        None => String::new(),
    })]
    UnknownKey {
        /// The key as written.
        key: String,
        /// The nearest valid key, when one is close.
        suggestion: Option<&'static str>,
    },
    /// A known key with a value bsi cannot use.
    #[error("`{key}` {reason}")]
    Value {
        /// The key.
        key: &'static str,
        /// Why the value is refused.
        reason: String,
    },
}

/// The file as serde reads it, before validation.
#[derive(Deserialize)]
struct Raw {
    default_ttl: Option<String>,
    default_agent: Option<String>,
    hook_mode: Option<String>,
    remote: Option<String>,
    max_active_per_agent: Option<i64>,
    markdown_extensions: Option<Vec<String>>,
    registry_branch: Option<String>,
    publish_timeout: Option<String>,
    connection_timeout: Option<String>,
    hook_fetch_timeout: Option<String>,
    claim_on_write: Option<bool>,
    history_keep: Option<i64>,
    registry_language: Option<String>,
}

/// Parses the text of a `.bsi.toml`. Pure.
pub fn parse(text: &str) -> Result<Config, ConfigError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| syntax(text, &e))?;
    let unknown = unknown_keys(&table);
    let raw: Raw = toml::from_str(text).map_err(|e| syntax(text, &e))?;
    // Checked in the order of [`KEYS`]: the first bad value is reported.
    Ok(Config {
        default_ttl: raw.default_ttl.map(default_ttl).transpose()?,
        default_agent: raw.default_agent.map(default_agent).transpose()?,
        hook_mode: raw
            .hook_mode
            .map(hook_mode)
            .transpose()?
            .unwrap_or_default(),
        remote: raw.remote.map(remote).transpose()?,
        max_active_per_agent: raw
            .max_active_per_agent
            .map(|n| at_least_one("max_active_per_agent", n))
            .transpose()?,
        markdown_extensions: raw
            .markdown_extensions
            .unwrap_or_default()
            .into_iter()
            .map(markdown_extension)
            .collect::<Result<Vec<_>, _>>()?,
        registry_branch: raw.registry_branch.map(registry_branch).transpose()?,
        publish_timeout: raw
            .publish_timeout
            .map(|t| timeout("publish_timeout", Span::Publish, t))
            .transpose()?,
        connection_timeout: raw
            .connection_timeout
            .map(|t| timeout("connection_timeout", Span::Connection, t))
            .transpose()?,
        hook_fetch_timeout: raw
            .hook_fetch_timeout
            .map(|t| timeout("hook_fetch_timeout", Span::Connection, t))
            .transpose()?,
        claim_on_write: raw.claim_on_write.unwrap_or(false),
        history_keep: raw
            .history_keep
            .map(|n| at_least_one("history_keep", n))
            .transpose()?,
        registry_language: raw
            .registry_language
            .map(registry_language)
            .transpose()?
            .unwrap_or_default(),
        unknown,
    })
}

/// The keys that decide what a hook judges: where the registry is, how the
/// hooks treat a change. A hook never runs on a default in their place.
pub const GUARDING: [&str; 3] = ["registry_branch", "remote", "hook_mode"];

impl ConfigError {
    /// The key this error is about, when it is about one.
    pub fn key(&self) -> Option<&str> {
        match self {
            ConfigError::Syntax { .. } => None,
            ConfigError::UnknownKey { key, .. } => Some(key),
            ConfigError::Value { key, .. } => Some(key),
        }
    }

    /// Whether a hook that meets it cannot know what to judge: the file is
    /// no TOML at all, or a guarding key ([`GUARDING`]) has a value it
    /// cannot use. An unknown key (a newer bsi's setting) never is.
    pub fn guards(&self) -> bool {
        match self {
            ConfigError::Syntax { .. } => true,
            ConfigError::UnknownKey { .. } => false,
            ConfigError::Value { key, .. } => GUARDING.contains(key),
        }
    }
}

/// Parses a `.bsi.toml` for a hook, which must run whatever it meets:
/// every key it can read is kept, and each it cannot (a value out of its
/// range, a key it does not know) is left at its default and returned, so
/// one bad line never turns the others into their defaults. A file that
/// is no TOML gives the defaults and its syntax error. Pure.
pub fn parse_lenient(text: &str) -> (Config, Vec<ConfigError>) {
    // The usual file reads in one pass: the hooks run on every commit.
    if let Ok(config) = parse(text) {
        let unknown = config.unknown.clone();
        return (config, unknown);
    }
    let mut table: toml::Table = match toml::from_str(text) {
        Ok(t) => t,
        Err(e) => return (Config::default(), vec![syntax(text, &e)]),
    };
    let mut problems = Vec::new();
    loop {
        let rest = toml::to_string(&table).unwrap_or_default();
        match parse(&rest) {
            Ok(config) => {
                problems.extend(config.unknown.iter().cloned());
                return (config, problems);
            }
            Err(e) => {
                let key = e.key().map(str::to_string);
                problems.push(e);
                match key {
                    Some(k) if table.remove(&k).is_some() => {}
                    // Nothing left to take out: the defaults.
                    _ => return (Config::default(), problems),
                }
            }
        }
    }
}

fn unknown_keys(table: &toml::Table) -> Vec<ConfigError> {
    table
        .keys()
        .filter(|k| !KEYS.contains(&k.as_str()))
        .map(|key| ConfigError::UnknownKey {
            key: key.clone(),
            suggestion: nearest(key),
        })
        .collect()
}

fn default_ttl(s: String) -> Result<Duration, ConfigError> {
    ttl::parse_ttl(&s).map_err(|e| ConfigError::Value {
        key: "default_ttl",
        reason: format!("is not a TTL: {e}"),
    })
}

/// The rule of every agent name ([`crate::values::AgentName`]), and not empty.
fn default_agent(a: String) -> Result<String, ConfigError> {
    match crate::values::AgentName::parse(&a) {
        Ok(name) if !name.is_empty() => Ok(name.into_string()),
        _ => Err(ConfigError::Value {
            key: "default_agent",
            reason: "must be one line of text, not empty, without `|`".into(),
        }),
    }
}

fn hook_mode(m: String) -> Result<HookMode, ConfigError> {
    parse_hook_mode(&m).ok_or_else(|| ConfigError::Value {
        key: "hook_mode",
        reason: format!("is `{}`; use off, warn, normal or strict", m.trim()),
    })
}

fn remote(r: String) -> Result<String, ConfigError> {
    let r = r.trim().to_string();
    if r.is_empty() || r.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Err(ConfigError::Value {
            key: "remote",
            reason: "must be the name of a git remote, like `origin`".into(),
        })
    } else {
        Ok(r)
    }
}

/// A count key (`max_active_per_agent`, `history_keep`): at least 1.
fn at_least_one(key: &'static str, n: i64) -> Result<usize, ConfigError> {
    usize::try_from(n)
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| ConfigError::Value {
            key,
            reason: format!("is {n}; use a whole number of at least 1"),
        })
}

fn markdown_extension(e: String) -> Result<String, ConfigError> {
    let e = e.trim().trim_start_matches('.').to_ascii_lowercase();
    if e.is_empty() || !e.chars().all(|c| c.is_ascii_alphanumeric() || c == '.') {
        Err(ConfigError::Value {
            key: "markdown_extensions",
            reason: format!("holds `{e}`; use file name endings like \"mdx\""),
        })
    } else {
        Ok(e)
    }
}

fn registry_branch(b: String) -> Result<String, ConfigError> {
    let b = b.trim().to_string();
    if valid_branch_name(&b) {
        Ok(b)
    } else {
        Err(ConfigError::Value {
            key: "registry_branch",
            reason: format!("is `{b}`; use a plain git branch name, like `brain-index`"),
        })
    }
}

/// A duration key, held to the range of its [`Span`].
fn timeout(key: &'static str, span: Span, t: String) -> Result<std::time::Duration, ConfigError> {
    span.parse(&t).map_err(|e| ConfigError::Value {
        key,
        reason: e.reason(),
    })
}

fn registry_language(l: String) -> Result<crate::registry::Language, ConfigError> {
    crate::registry::Language::parse(&l).ok_or_else(|| ConfigError::Value {
        key: "registry_language",
        reason: format!("is `{}`; use french or english", l.trim()),
    })
}

/// Whether `name` is a branch name bsi accepts for the registry: what
/// `git check-ref-format --branch` accepts, less the rare forms (only
/// ASCII letters, digits and `-_./`). Like git, it refuses `HEAD` (a branch
/// of that name makes every later `HEAD` ambiguous), a component that
/// starts with `.` or ends with `.lock`, and `@` alone.
pub fn valid_branch_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && name != "HEAD"
        && name != "@"
        && !name.starts_with('-')
        && !name.ends_with('.')
        && !name.contains("..")
        && !name.contains("@{")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
        && name
            .split('/')
            .all(|c| !c.is_empty() && !c.starts_with('.') && !c.ends_with(".lock"))
}

fn syntax(text: &str, e: &toml::de::Error) -> ConfigError {
    let line = e.span().map_or(0, |s| {
        text[..s.start.min(text.len())].matches('\n').count() + 1
    });
    ConfigError::Syntax {
        line,
        message: e.message().trim().to_string(),
    }
}

/// The valid key nearest to `key`, when it is a likely typo.
fn nearest(key: &str) -> Option<&'static str> {
    let k = key.to_ascii_lowercase().replace('-', "_");
    KEYS.iter()
        .map(|&c| (strsim::osa_distance(&k, c), c))
        .filter(|&(d, c)| d <= (c.len() / 3).max(2))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_is_the_default() {
        assert_eq!(parse(""), Ok(Config::default()));
        assert_eq!(Config::default().hook_mode, HookMode::Normal);
    }

    #[test]
    fn every_key_reads() {
        let c = parse(
            "default_ttl = \"4h\"\ndefault_agent = \"claude\"\nhook_mode = \"strict\"\nremote = \"origin\"\nmax_active_per_agent = 3\n",
        )
        .expect("valid");
        assert_eq!(c.default_ttl, Some(Duration::hours(4)));
        assert_eq!(c.default_agent.as_deref(), Some("claude"));
        assert_eq!(c.hook_mode, HookMode::Strict);
        assert_eq!(c.remote.as_deref(), Some("origin"));
        assert_eq!(c.max_active_per_agent, Some(3));
        assert!(!c.claim_on_write, "off unless asked for");
        assert!(
            parse("claim_on_write = true")
                .expect("valid")
                .claim_on_write
        );
        assert!(
            !parse("claim_on_write = false")
                .expect("valid")
                .claim_on_write
        );
        let c = parse("markdown_extensions = [\".MDX\", \"qmd\"]").expect("valid");
        assert_eq!(c.markdown_extensions, vec!["mdx", "qmd"]);
        for (m, want) in [
            ("off", HookMode::Off),
            ("warn", HookMode::Warn),
            ("normal", HookMode::Normal),
        ] {
            let c = parse(&format!("hook_mode = \"{m}\"")).expect("valid");
            assert_eq!(c.hook_mode, want);
            assert_eq!(c.hook_mode.as_str(), m);
        }
    }

    #[test]
    fn a_lenient_read_keeps_every_key_it_can_read() {
        let (c, problems) = parse_lenient(
            "registry_branch = \"claims\"\nhistory_keep = 0\nfuture_setting = \"x\"\nhook_mode = \"strict\"\n",
        );
        assert_eq!(c.registry_branch.as_deref(), Some("claims"));
        assert_eq!(c.hook_mode, HookMode::Strict);
        assert_eq!(c.history_keep, None);
        let keys: Vec<Option<&str>> = problems.iter().map(ConfigError::key).collect();
        assert_eq!(keys, [Some("history_keep"), Some("future_setting")]);
        assert!(problems.iter().all(|p| !p.guards()));
        let (c, problems) = parse_lenient("registry_branch = \"HEAD\"\n");
        assert_eq!(c.registry_branch, None);
        assert!(problems[0].guards());
        let (_, problems) = parse_lenient("not toml = = 1\n");
        assert!(problems[0].guards());
    }

    #[test]
    fn unknown_keys_name_the_nearest() {
        // Said, never refused: an older bsi meets a newer one's settings.
        let unknown = |text: &str| -> String {
            let c = parse(text).expect("an unknown key is no error");
            c.unknown.iter().map(ToString::to_string).collect()
        };
        assert_eq!(
            unknown("defualt_ttl = \"2h\""),
            "unknown key `defualt_ttl`: did you mean `default_ttl`?"
        );
        assert!(unknown("max-active-per-agent = 2").contains("`max_active_per_agent`"));
        assert!(unknown("hookmode = \"off\"").contains("`hook_mode`"));
        assert_eq!(unknown("colour = true"), "unknown key `colour`");
        assert_eq!(
            parse("colour = true\nhook_mode = \"strict\"")
                .expect("read")
                .hook_mode,
            HookMode::Strict
        );
        let e = parse("[remote]\nname = \"origin\"").expect_err("a table");
        assert!(matches!(e, ConfigError::Syntax { .. }), "{e}");
    }

    #[test]
    fn bad_values_say_what_to_use() {
        let bad = [
            ("default_ttl = \"9h\"", "default_ttl"),
            ("default_ttl = \"soon\"", "default_ttl"),
            (
                "default_ttl = \"9999999999999999h\"",
                "use a TTL from 1m to 8h",
            ),
            (
                "publish_timeout = \"9999999999999999h\"",
                "longer than 1h; use a duration from 1ms to 1h",
            ),
            ("connection_timeout = \"0s\"", "from 1ms to 1h"),
            ("default_agent = \"\"", "default_agent"),
            ("hook_mode = \"loud\"", "off, warn, normal or strict"),
            ("remote = \"my remote\"", "remote"),
            ("max_active_per_agent = 0", "at least 1"),
            ("max_active_per_agent = -2", "at least 1"),
            ("markdown_extensions = [\"\"]", "markdown_extensions"),
            ("markdown_extensions = [\"m d\"]", "markdown_extensions"),
        ];
        for (text, want) in bad {
            let e = parse(text).expect_err(text);
            assert!(e.to_string().contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn malformed_toml_gives_the_line() {
        let e = parse("default_ttl = \"2h\"\nremote = \n").expect_err("no value");
        match e {
            ConfigError::Syntax { line, .. } => assert_eq!(line, 2),
            other => panic!("{other:?}"),
        }
        let e = parse("max_active_per_agent = \"two\"").expect_err("wrong type");
        assert!(matches!(e, ConfigError::Syntax { line: 1, .. }), "{e:?}");
        let e = parse("claim_on_write = \"yes\"").expect_err("not a boolean");
        assert!(matches!(e, ConfigError::Syntax { line: 1, .. }), "{e:?}");
        let c = parse("claim_on_writes = true").expect("a typo is said, not refused");
        assert!(
            c.unknown[0].to_string().contains("`claim_on_write`"),
            "{c:?}"
        );
    }

    #[test]
    fn typo_distance() {
        assert_eq!(nearest("defualt_ttl"), Some("default_ttl"));
        assert_eq!(nearest("zzzzzzzz"), None);
        assert_eq!(nearest("remtoe"), Some("remote"));
        assert_eq!(nearest("zzz"), None);
    }
}
