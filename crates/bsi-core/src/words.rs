//! Shell words: the one way bsi writes a value into a command for a person
//! or an agent to paste (a hint, a refusal, a hook's answer) or for a shell
//! to run (a hook script, an agent tool's settings). Pure.
//!
//! A word is left bare only when every character of it is inert in `sh`,
//! `bash` and `zsh` alike — zsh with `extended_glob` included, where `#`,
//! `^` and `~` are glob operators and a word starting with `=` names a
//! program. Anything else goes in POSIX single quotes, inside which no
//! character is special, with each `'` written `'\''`.

use crate::registry::Claim;
use std::borrow::Cow;

/// Whether `c` means nothing to sh, bash or zsh anywhere in a word. `=` is
/// left out: zsh expands a word starting with `=` (and, with
/// `magic_equal_subst`, the text after a word's first `=`), and a first
/// word `NAME=…` is an assignment.
fn inert(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+' | ':' | '@' | ',')
}

/// `s` as one shell word: bare when it is made of inert characters, else in
/// single quotes (`it's` becomes `'it'\''s'`). The empty string is `''`.
pub fn shell_word(s: &str) -> Cow<'_, str> {
    if !s.is_empty() && s.chars().all(inert) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(format!("'{}'", s.replace('\'', r"'\''")))
    }
}

/// The value of a word [`shell_word`] wrote; `None` when `word` is not
/// one it writes.
pub fn read_shell_word(word: &str) -> Option<String> {
    if !word.is_empty() && word.chars().all(inert) {
        return Some(word.to_string());
    }
    let inner = word.strip_prefix('\'')?.strip_suffix('\'')?;
    let value = inner.replace(r"'\''", "'");
    (shell_word(&value) == word).then_some(value)
}

/// A command line from its words, each written with [`shell_word`] and
/// joined by spaces: `command_line(["bsi", "open", "a.md#Risks"])` is
/// `bsi open 'a.md#Risks'`.
pub fn command_line<I, S>(words: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut line = String::new();
    for w in words {
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&shell_word(w.as_ref()));
    }
    line
}

/// `NAME=value` for a shell to run, the value written with [`shell_word`]
/// (`name` is a variable name, bare).
pub fn assignment(name: &str, value: &str) -> String {
    format!("{name}={}", shell_word(value))
}

/// `bsi open SCOPE…` followed by `more` words: a command to paste, every
/// word written with [`shell_word`].
pub fn open_command<'a>(
    scopes: impl IntoIterator<Item = &'a crate::scope::Scope>,
    more: &[&str],
) -> String {
    let scopes: Vec<String> = scopes.into_iter().map(ToString::to_string).collect();
    command_line(
        ["bsi", "open"]
            .into_iter()
            .chain(scopes.iter().map(String::as_str))
            .chain(more.iter().copied()),
    )
}

/// Where a command is printed: the directory it was run in, as a path
/// below the brain's root (`projets/`, or empty at the root). The one rule
/// of every printed command: its scopes are written as typed from there,
/// since `bsi` reads a scope relative to the directory it runs in
/// (`../agents/bob.md` printed in `projets/`), so a command runs as printed
/// where it is printed. A directory outside the brain counts as its root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Here {
    /// The directory below the root, each part followed by `/`.
    below: String,
}

impl Here {
    /// The brain's root.
    pub fn root() -> Here {
        Here::default()
    }

    /// The directory `cwd` of the brain rooted at `root` (both canonical):
    /// the root when `cwd` is not below it.
    pub fn of(root: &std::path::Path, cwd: &std::path::Path) -> Here {
        let Ok(rel) = cwd.strip_prefix(root) else {
            return Here::root();
        };
        let mut below = String::new();
        for c in rel.components() {
            below.push_str(&c.as_os_str().to_string_lossy());
            below.push('/');
        }
        Here { below }
    }

    /// A path from the root (`agents/bob.md`, `notes/`) as typed from
    /// here (`../agents/bob.md`; the directory itself is `./`).
    pub fn path(&self, from_root: &str) -> String {
        let here: Vec<&str> = self.below.split('/').filter(|p| !p.is_empty()).collect();
        let dir = from_root.ends_with('/');
        let there: Vec<&str> = from_root.split('/').filter(|p| !p.is_empty()).collect();
        let common = here.iter().zip(&there).take_while(|(a, b)| a == b).count();
        let mut out = "../".repeat(here.len() - common);
        out.push_str(&there[common..].join("/"));
        if out.is_empty() {
            return "./".into();
        }
        if dir && !out.ends_with('/') {
            out.push('/');
        }
        out
    }

    /// A scope as typed from here.
    pub fn scope(&self, scope: &crate::scope::Scope) -> String {
        use crate::scope::{Scope, escape_path};
        match scope {
            Scope::Global => "global".into(),
            Scope::Dir(p) | Scope::File(p) => escape_path(&self.path(p)),
            Scope::Section { file, heading } => {
                format!("{}#{heading}", escape_path(&self.path(file)))
            }
        }
    }

    /// Whether this is the brain's root.
    pub fn is_root(&self) -> bool {
        self.below.is_empty()
    }
}

/// [`open_command`] printed at `here`: its scopes as typed from there.
pub fn open_command_at<'a>(
    here: &Here,
    scopes: impl IntoIterator<Item = &'a crate::scope::Scope>,
    more: &[&str],
) -> String {
    let scopes: Vec<String> = scopes.into_iter().map(|s| here.scope(s)).collect();
    command_line(
        ["bsi", "open"]
            .into_iter()
            .chain(scopes.iter().map(String::as_str))
            .chain(more.iter().copied()),
    )
}

/// One overlapping pair, for people.
pub fn collision_line(a: &Claim, b: &Claim) -> String {
    format!(
        "COLLISION: {} {} overlaps {} {}",
        a.session, a.scope, b.session, b.scope
    )
}

/// What a write that published changes recorded offline says when claims
/// now collide: the collisions and what to do, one text for the CLI's
/// stderr and for an agent hook's answer.
pub fn published_collisions(published: usize, collisions: &[(Claim, Claim)]) -> String {
    let mut text = format!(
        "warning: this also published {published} change(s) recorded offline, and claims now collide:\n"
    );
    for (a, b) in collisions {
        text.push_str(&format!("  {}\n", collision_line(a, b)));
    }
    let pairs: Vec<(&Claim, &Claim)> = collisions.iter().map(|(a, b)| (a, b)).collect();
    text.push_str(&collision_next(&pairs));
    text
}

/// What to do about collisions, the same words wherever they are found
/// (status, watchdog, sync, a write that published them): name the two
/// commands when there is one collision.
pub fn collision_next(pairs: &[(&Claim, &Claim)]) -> String {
    collision_next_at(&Here::root(), pairs)
}

/// [`collision_next`] printed at `here`: its scopes as typed from there.
pub fn collision_next_at(here: &Here, pairs: &[(&Claim, &Claim)]) -> String {
    let close = |c: &Claim| {
        format!(
            "`{}`",
            command_line(["bsi", "close", &c.session, "--scope", &here.scope(&c.scope)])
        )
    };
    let ways = match pairs {
        [(a, b)] => format!("{} or {}", close(a), close(b)),
        _ => "`bsi close SESSION --scope SCOPE` for one side of each collision".to_string(),
    };
    format!(
        "Next: both claims are kept until one side gives way: the sessions agree who goes on, and the other runs {ways}; a person frees a session that is gone with `bsi release SESSION --confirm --force`.\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_is_written_as_typed_from_where_it_is_printed() {
        use crate::scope::Scope;
        let projets = Here::of(
            std::path::Path::new("/b"),
            std::path::Path::new("/b/projets"),
        );
        let deep = Here::of(
            std::path::Path::new("/b"),
            std::path::Path::new("/b/projets/old"),
        );
        let file = Scope::File("agents/bob.md".into());
        assert_eq!(Here::root().scope(&file), "agents/bob.md");
        assert_eq!(projets.scope(&file), "../agents/bob.md");
        assert_eq!(deep.scope(&file), "../../agents/bob.md");
        let own = Scope::Section {
            file: "projets/plan.md".into(),
            heading: "Open questions".into(),
        };
        assert_eq!(projets.scope(&own), "plan.md#Open questions");
        assert_eq!(deep.scope(&own), "../plan.md#Open questions");
        assert_eq!(projets.scope(&Scope::Dir("projets/".into())), "./");
        assert_eq!(deep.scope(&Scope::Dir("projets/".into())), "../");
        assert_eq!(projets.scope(&Scope::Dir("agents/".into())), "../agents/");
        assert_eq!(projets.scope(&Scope::Global), "global");
        assert_eq!(
            open_command_at(&projets, [&own], &["--wait", "10m"]),
            "bsi open 'plan.md#Open questions' --wait 10m"
        );
        let outside = Here::of(std::path::Path::new("/b"), std::path::Path::new("/c"));
        assert!(outside.is_root());
    }

    #[test]
    fn a_word_reads_back_as_its_value() {
        for v in ["bsi", "/x/$(rm)/bsi", "/it's/bsi", "a b", "''"] {
            assert_eq!(read_shell_word(&shell_word(v)).as_deref(), Some(v), "{v}");
        }
        assert_eq!(read_shell_word("$(rm)"), None);
        assert_eq!(read_shell_word("'a"), None);
    }

    #[test]
    fn plain_words_stay_bare() {
        for w in [
            "bsi",
            "/opt/bsi/bin/bsi",
            "notes/a.md",
            "agents/",
            "sess-20260314-0930-a3f9",
            "user@host",
            "a+b:c,d",
            "--session",
        ] {
            assert_eq!(shell_word(w), w);
        }
    }

    #[test]
    fn anything_a_shell_reads_is_quoted() {
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("plan.md#Risks"), "'plan.md#Risks'");
        assert_eq!(shell_word("a.md#Open questions"), "'a.md#Open questions'");
        assert_eq!(
            shell_word("a.md#Risks $(touch X)"),
            "'a.md#Risks $(touch X)'"
        );
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("'"), r"''\'''");
        assert_eq!(shell_word("=ls"), "'=ls'");
        assert_eq!(shell_word("a=b"), "'a=b'");
        for special in [
            "~", "^", "*", "?", "[", "]", "!", "$", "`", "\\", "\"", ";", "&", "|", "<", ">", "(",
            ")", "{", "}", " ", "\t", "\n", "%", "é",
        ] {
            let w = format!("a{special}b");
            assert_eq!(shell_word(&w), format!("'{w}'"), "{special:?}");
        }
    }

    #[test]
    fn a_command_line_quotes_each_word() {
        assert_eq!(
            command_line(["bsi", "open", "p.md#Open questions", "--session", "s1"]),
            "bsi open 'p.md#Open questions' --session s1"
        );
        assert_eq!(command_line(Vec::<String>::new()), "");
        assert_eq!(
            assignment("BSI_AGENT", "me at box"),
            "BSI_AGENT='me at box'"
        );
        assert_eq!(assignment("BSI_SESSION", "s1"), "BSI_SESSION=s1");
    }
}
