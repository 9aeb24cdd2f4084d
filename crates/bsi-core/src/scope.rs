//! Scopes and the conflict rules between them. Pure: no file system here.
//!
//! A scope is what a claim covers: the whole brain (`global`), a directory
//! (`dir/sub/`), a file (`dir/file.md`) or one section of a file
//! (`dir/file.md#Heading text`). Paths are relative to the brain root, use `/`,
//! and are already normalised when a [`Scope`] exists.

use std::fmt;

use serde::Serialize;
use unicode_normalization::UnicodeNormalization;

/// The four levels of the spec, from widest to narrowest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The whole brain.
    Global,
    /// A directory and everything under it.
    Dir,
    /// One file.
    File,
    /// One section of a markdown file, with its subsections.
    Section,
}

impl Level {
    /// The name written in the registry's `Niveau` column and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Global => "global",
            Level::Dir => "dir",
            Level::File => "file",
            Level::Section => "section",
        }
    }

    /// Reads a `Niveau` cell.
    pub fn parse(s: &str) -> Option<Level> {
        match s.trim().to_ascii_lowercase().as_str() {
            "global" => Some(Level::Global),
            "dir" => Some(Level::Dir),
            "file" => Some(Level::File),
            "section" => Some(Level::Section),
            _ => None,
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A normalised scope.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize)]
pub enum Scope {
    /// `global`.
    Global,
    /// A directory, stored with its trailing slash: `agents/`.
    Dir(String),
    /// A file path: `agents/alice.md`.
    File(String),
    /// A section: the file and the heading text as written by the claimant.
    Section {
        /// The file holding the section.
        file: String,
        /// The heading text, without `#` marks, trimmed.
        heading: String,
    },
}

/// Why a scope string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    /// Nothing was given.
    #[error("the scope is empty")]
    Empty,
    /// `/etc/x`, `C:\x`.
    #[error("`{0}` is an absolute path; scopes are relative to the brain root")]
    Absolute(String),
    /// `../x` leaving the root.
    #[error("`{0}` leads outside the brain")]
    Escapes(String),
    /// Newlines, NUL, tabs and the like.
    #[error("the scope contains a control character")]
    Control,
    /// `a.md#` or `#x`.
    #[error("`{0}` names a section without a heading or without a file")]
    BadSection(String),
    /// `a/b.md/#x` and other impossible shapes.
    #[error("`{0}` is not a valid scope: {1}")]
    Invalid(String, &'static str),
}

/// Longest scope accepted, in bytes. Registry cells are meant to be read by people.
pub const MAX_SCOPE_LEN: usize = 1024;

impl Scope {
    /// The level of this scope.
    pub fn level(&self) -> Level {
        match self {
            Scope::Global => Level::Global,
            Scope::Dir(_) => Level::Dir,
            Scope::File(_) => Level::File,
            Scope::Section { .. } => Level::Section,
        }
    }

    /// The file a file or section scope is about.
    pub fn file(&self) -> Option<&str> {
        match self {
            Scope::File(f) | Scope::Section { file: f, .. } => Some(f),
            _ => None,
        }
    }

    /// Parses a scope as stored in the registry (already relative to the root).
    /// A trailing `/` makes a directory.
    pub fn parse_stored(raw: &str) -> Result<Scope, ScopeError> {
        Self::from_relative(raw, false)
    }

    /// Builds a scope from a path relative to the brain root. `is_dir` says the
    /// path is a directory on disk, so it is stored with a trailing slash.
    pub fn from_relative(raw: &str, is_dir: bool) -> Result<Scope, ScopeError> {
        // One name, one claim: `é` typed precomposed or decomposed is the same scope.
        let raw: String = raw.trim().nfc().collect();
        let raw = raw.as_str();
        if raw.is_empty() {
            return Err(ScopeError::Empty);
        }
        if raw.chars().any(char::is_control) {
            return Err(ScopeError::Control);
        }
        if raw.len() > MAX_SCOPE_LEN {
            return Err(ScopeError::Invalid(
                truncate(raw, 40),
                "longer than 1024 bytes",
            ));
        }
        if raw.eq_ignore_ascii_case("global") {
            return Ok(Scope::Global);
        }
        let (path, heading) = split_section(raw);
        let heading = heading.map(str::trim);
        if heading.is_some() && (path.is_empty() || heading.is_some_and(str::is_empty)) {
            return Err(ScopeError::BadSection(raw.to_string()));
        }
        let path = path.as_str();
        let trailing = path.ends_with('/') || path.ends_with('\\');
        let norm = normalise_path(path).map_err(|e| match e {
            PathIssue::Absolute => ScopeError::Absolute(raw.to_string()),
            PathIssue::Escapes => ScopeError::Escapes(raw.to_string()),
            PathIssue::Backslash => ScopeError::Invalid(raw.to_string(), "use `/` between names"),
            PathIssue::Spaces => ScopeError::Invalid(
                raw.to_string(),
                "a name in it starts or ends with a space, which a registry cell cannot keep",
            ),
        })?;
        match heading {
            Some(h) => {
                if trailing || norm.is_empty() {
                    return Err(ScopeError::Invalid(
                        raw.to_string(),
                        "a section belongs to a file, not a directory",
                    ));
                }
                Ok(Scope::Section {
                    file: norm,
                    heading: collapse_spaces(h),
                })
            }
            None if norm.is_empty() => Ok(Scope::Global),
            None if trailing || is_dir => Ok(Scope::Dir(format!("{norm}/"))),
            None => Ok(Scope::File(norm)),
        }
    }

    /// True when this scope is, or lies inside, directory `dir` (with slash).
    fn under_dir(&self, dir: &str) -> bool {
        match self {
            Scope::Global => false,
            Scope::Dir(d) => d.starts_with(dir),
            Scope::File(f) | Scope::Section { file: f, .. } => f.starts_with(dir),
        }
    }
}

/// Splits a typed or stored scope at its first `#` that is not written
/// `\#`: the path (with `\#` read as `#`) and the heading, if any. A name
/// containing `#` is written with `\#`: `lang/C\#.md`, `issue\#12/`.
pub fn split_section(raw: &str) -> (String, Option<&str>) {
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if bytes.get(i + 1) == Some(&b'#') => i += 2,
            b'#' => return (raw[..i].replace("\\#", "#"), Some(&raw[i + 1..])),
            _ => i += 1,
        }
    }
    (raw.replace("\\#", "#"), None)
}

/// A path as a scope writes it: `#` in a name becomes `\#`.
pub fn escape_path(path: &str) -> String {
    path.replace('#', "\\#")
}

fn truncate(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// True when `path` names a markdown file, whose headings make sections:
/// it ends in `.md` or `.markdown` (any case), or in one of `extra` (from
/// `markdown_extensions` in `.bsi.toml`, lowercase, without the dot).
pub fn is_markdown(path: &str, extra: &[String]) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    !stem.is_empty()
        && (ext == "md"
            || ext == "markdown"
            || extra
                .iter()
                .any(|e| name.ends_with(&format!(".{e}")) && name.len() > e.len() + 1))
}

/// Compares heading texts the way the spec asks: trimmed, case-insensitive,
/// inner runs of whitespace counted as one space.
pub fn heading_key(text: &str) -> String {
    collapse_spaces(text)
        .nfc()
        .collect::<String>()
        .to_lowercase()
}

fn collapse_spaces(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

enum PathIssue {
    Absolute,
    Spaces,
    Escapes,
    Backslash,
}

/// Lexical normalisation: drops `.` and empty components, resolves `..`
/// inside the path, refuses absolute paths and paths that climb above the root.
fn normalise_path(path: &str) -> Result<String, PathIssue> {
    if path.starts_with('/') || path.starts_with('\\') || has_drive(path) {
        return Err(PathIssue::Absolute);
    }
    if path.contains('\\') {
        return Err(PathIssue::Backslash);
    }
    let mut parts: Vec<&str> = Vec::new();
    for comp in path.split('/') {
        match comp {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(PathIssue::Escapes);
                }
            }
            c if c.trim() != c => return Err(PathIssue::Spaces),
            c => parts.push(c),
        }
    }
    let joined = parts.join("/");
    // `./C:x` would be stored as `C:x`, which reads back as a drive path.
    if has_drive(&joined) {
        return Err(PathIssue::Absolute);
    }
    Ok(joined)
}

fn has_drive(path: &str) -> bool {
    let b = path.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Global => f.write_str("global"),
            Scope::Dir(d) => f.write_str(&escape_path(d)),
            Scope::File(p) => f.write_str(&escape_path(p)),
            Scope::Section { file, heading } => write!(f, "{}#{heading}", escape_path(file)),
        }
    }
}

/// Answers whether one section of a file contains another in that file's
/// heading tree. Implemented over real files by the IO layer and over fixed
/// trees in tests.
pub trait Sections {
    /// True when a heading matching `outer` has, below it in `file`'s heading
    /// tree, a heading matching `inner`. Keys are [`heading_key`]s.
    fn contains(&self, file: &str, outer: &str, inner: &str) -> bool;

    /// When [`Sections::contains`] holds only in a version other than the
    /// work tree's (the fetched upstream of the content branch), that
    /// version's name, so a refusal can say why two sections that look
    /// apart here overlap.
    fn elsewhere(&self, _file: &str, _outer: &str, _inner: &str) -> Option<String> {
        None
    }
}

/// A [`Sections`] that knows no file: sections only conflict when equal.
pub struct FlatSections;

impl Sections for FlatSections {
    fn contains(&self, _: &str, _: &str, _: &str) -> bool {
        false
    }
}

/// The conflict rule: two scopes conflict when what they cover intersects.
pub fn overlaps(a: &Scope, b: &Scope, sections: &dyn Sections) -> bool {
    use Scope::*;
    match (a, b) {
        (Global, _) | (_, Global) => true,
        // A name claimed as a file covers what is created under it if it
        // turns out a folder: `new` and `new/` are one name.
        (File(f), other) | (other, File(f)) if other.under_dir(&format!("{f}/")) => true,
        (Dir(d), other) | (other, Dir(d)) => match other {
            Dir(e) => d.starts_with(e.as_str()) || e.starts_with(d.as_str()),
            // `newthing` and `newthing/` are one name: whichever it becomes.
            File(f) | Section { file: f, .. } => {
                other.under_dir(d) || d.strip_suffix('/') == Some(f)
            }
            Global => other.under_dir(d),
        },
        (File(f), File(g)) => f == g,
        (File(f), Section { file, .. }) | (Section { file, .. }, File(f)) => f == file,
        (
            Section {
                file: f1,
                heading: h1,
            },
            Section {
                file: f2,
                heading: h2,
            },
        ) => {
            if f1 != f2 {
                return false;
            }
            let (k1, k2) = (heading_key(h1), heading_key(h2));
            k1 == k2 || sections.contains(f1, &k1, &k2) || sections.contains(f1, &k2, &k1)
        }
    }
}

/// True when `inner` is covered by `outer` (equal, or nested inside it).
/// Used to tell whether a path or section falls inside a held claim.
pub fn covers(outer: &Scope, inner: &Scope, sections: &dyn Sections) -> bool {
    use Scope::*;
    match (outer, inner) {
        (Global, _) => true,
        (_, Global) => false,
        (File(f), other) if other.under_dir(&format!("{f}/")) => true,
        (Dir(d), other) => other.under_dir(d),
        (File(f), File(g)) => f == g,
        (File(f), Section { file, .. }) => f == file,
        (Section { .. }, File(_) | Dir(_)) | (File(_), Dir(_)) => false,
        (
            Section {
                file: f1,
                heading: h1,
            },
            Section {
                file: f2,
                heading: h2,
            },
        ) => {
            let (k1, k2) = (heading_key(h1), heading_key(h2));
            f1 == f2 && (k1 == k2 || sections.contains(f1, &k1, &k2))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Scope {
        Scope::parse_stored(x).expect("valid scope")
    }

    struct Tree;
    impl Sections for Tree {
        fn contains(&self, file: &str, outer: &str, inner: &str) -> bool {
            file == "a.md" && outer == "a" && inner == "b"
        }
    }

    #[test]
    fn parses_every_level() {
        assert_eq!(s("global"), Scope::Global);
        assert_eq!(s("agents/"), Scope::Dir("agents/".into()));
        assert_eq!(s("./agents//x.md"), Scope::File("agents/x.md".into()));
        assert_eq!(
            s("a.md# Intro  part "),
            Scope::Section {
                file: "a.md".into(),
                heading: "Intro part".into()
            }
        );
        assert_eq!(s("a/../b/"), Scope::Dir("b/".into()));
        assert_eq!(s("a/.."), Scope::Global);
    }

    #[test]
    fn refuses_bad_scopes() {
        assert_eq!(Scope::parse_stored(""), Err(ScopeError::Empty));
        assert!(matches!(
            Scope::parse_stored("/etc"),
            Err(ScopeError::Absolute(_))
        ));
        assert!(matches!(
            Scope::parse_stored("C:/x"),
            Err(ScopeError::Absolute(_))
        ));
        assert!(matches!(
            Scope::parse_stored("../x"),
            Err(ScopeError::Escapes(_))
        ));
        assert!(matches!(
            Scope::parse_stored("a\nb"),
            Err(ScopeError::Control)
        ));
        assert!(matches!(
            Scope::parse_stored("a.md#"),
            Err(ScopeError::BadSection(_))
        ));
        assert!(matches!(
            Scope::parse_stored("#x"),
            Err(ScopeError::BadSection(_))
        ));
        assert!(matches!(
            Scope::parse_stored("d/#x"),
            Err(ScopeError::Invalid(..))
        ));
        assert!(Scope::parse_stored(&"x".repeat(2000)).is_err());
        // Found by fuzzing: a space at the edge of an inner name did not
        // survive the trip through a registry cell.
        assert!(matches!(
            Scope::parse_stored("./ ?"),
            Err(ScopeError::Invalid(..))
        ));
        assert!(matches!(
            Scope::parse_stored("a /b.md"),
            Err(ScopeError::Invalid(..))
        ));
        assert_eq!(s(" a/b.md "), Scope::File("a/b.md".into()));
        // Found by fuzzing: `./P:x` was stored as `P:x`, a drive path.
        assert!(matches!(
            Scope::parse_stored("./P:x"),
            Err(ScopeError::Absolute(_))
        ));
    }

    #[test]
    fn a_hash_in_a_name_is_written_escaped() {
        assert_eq!(s("lang/C\\#.md"), Scope::File("lang/C#.md".into()));
        assert_eq!(s("issue\\#12/"), Scope::Dir("issue#12/".into()));
        assert_eq!(
            s("lang/C\\#.md#Tips #1"),
            Scope::Section {
                file: "lang/C#.md".into(),
                heading: "Tips #1".into()
            }
        );
        for raw in [
            "lang/C\\#.md",
            "issue\\#12/",
            "lang/C\\#.md#Tips #1",
            "a.md#B",
        ] {
            assert_eq!(s(raw).to_string(), raw);
            assert_eq!(s(&s(raw).to_string()), s(raw));
        }
    }

    #[test]
    fn markdown_files_only() {
        assert!(is_markdown("a/b.md", &[]));
        assert!(is_markdown("B.MARKDOWN", &[]));
        assert!(!is_markdown("run.sh", &[]));
        assert!(!is_markdown(".md", &[]));
        assert!(is_markdown("x.mdx", &["mdx".into()]));
    }

    #[test]
    fn conflict_rules() {
        assert!(overlaps(&s("newthing"), &s("newthing/"), &FlatSections));
        assert!(overlaps(&s("a/x.md/"), &s("a/x.md#H"), &FlatSections));
        let f = &FlatSections;
        assert!(overlaps(&s("global"), &s("a.md#x"), f));
        assert!(overlaps(&s("a/"), &s("a/b/c.md"), f));
        assert!(overlaps(&s("a/b/c.md"), &s("a/"), f));
        assert!(!overlaps(&s("a/"), &s("ab/"), f));
        assert!(!overlaps(&s("a/"), &s("ab.md"), f));
        assert!(overlaps(&s("a.md"), &s("a.md#x"), f));
        assert!(!overlaps(&s("a.md"), &s("b.md#x"), f));
        assert!(overlaps(&s("a.md#X"), &s("a.md#x"), f));
        assert!(!overlaps(&s("a.md#x"), &s("a.md#y"), f));
        assert!(overlaps(&s("a.md#A"), &s("a.md#B"), &Tree));
        assert!(overlaps(&s("a.md#B"), &s("a.md#A"), &Tree));
        assert!(!overlaps(&s("a.md#B"), &s("a.md#C"), &Tree));
    }

    #[test]
    fn cover_rules() {
        let f = &FlatSections;
        assert!(covers(&s("global"), &s("x.md"), f));
        assert!(covers(&s("a/"), &s("a/x.md#h"), f));
        assert!(!covers(&s("a/x.md#h"), &s("a/x.md"), f));
        assert!(covers(&s("a.md#A"), &s("a.md#B"), &Tree));
        assert!(!covers(&s("a.md#B"), &s("a.md#A"), &Tree));
    }
}
