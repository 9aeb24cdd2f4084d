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
    let close = |c: &Claim| {
        format!(
            "`{}`",
            command_line(["bsi", "close", &c.session, "--scope", &c.scope.to_string()])
        )
    };
    let ways = match pairs {
        [(a, b)] => format!("{} or {}", close(a), close(b)),
        _ => "`bsi close SESSION --scope SCOPE` for one side of each collision".to_string(),
    };
    format!(
        "Next: both claims are kept until one side gives way: the sessions agree who goes on, and the other runs\n      {ways};\n      a person frees a session that is gone with `bsi release SESSION --confirm --force`.\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
