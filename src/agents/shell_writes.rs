//! The files a shell command writes, read from its text: what an agent's
//! shell tool (Claude Code's `Bash`, Codex's shell, Gemini's
//! `run_shell_command`, Cursor's `Shell`) is about to change, so the edit
//! hook judges it like an edit. Pure: the command, the directory it runs in
//! and a [`Disk`] (the caller's: "is this a directory, does it exist") in;
//! file edits out.
//!
//! The lexer is bsi's own, after POSIX `sh` (quotes, backslashes, `$(…)`,
//! backquotes, operators, redirections, here-documents): the word
//! splitters on crates.io (`shell-words`, `shlex`) split words only and
//! know no `;`, `|`, `>` or here-document, which is where the writes are,
//! and a whole bash parser is far more than a hook that runs on every shell
//! command needs. Linear in the input; the text inside `$(…)`, backquotes
//! and `sh -c '…'` is read the same way, a few levels deep.
//!
//! What is judged (each form also after `sudo`, `env VAR=x`, `command`,
//! `nohup`, `time`, `nice`, `timeout`, `exec`, `VAR=x`, inside `$(…)` and
//! `sh -c '…'`, with `cd DIR &&` moving the base of relative paths):
//! - a redirection `>`, `>|`, `&>`, `2>` to a file: the file rewritten;
//!   its text is known for `cat <<'EOF' … EOF` (a here-document or a
//!   here-string), `echo` and `printf` of plain words, and the edit is then
//!   judged by section like the agent's own `Write`;
//! - `>>`, `&>>`, `tee -a`: lines appended at the end (the file's last
//!   section), their text known in the same cases;
//! - `tee`, `sed -i`, `perl -i`, `truncate`, `dd of=`, `cp`, `install` and
//!   `ln` (their destination), `git checkout [REV] -- PATHS`, `git checkout
//!   PATHS`, `git restore PATHS`: the file rewritten with text bsi cannot
//!   know ([`EditOp::Rewrite`]: every section of it counts as touched);
//! - `rm`, `unlink`, `git rm`: the file deleted; `mv`, `git mv`: moved (its
//!   text lands at the destination).
//!
//! What is not judged, because it cannot be read from the text: a word
//! that needs the shell to expand it (`$VAR`, `*.md`, `~`, `{a,b}`), paths
//! relative to a `cd` whose directory is not a plain word, programs that
//! write files their own way (`python -c`, `node -e`, a script, `awk`,
//! `sed … w FILE`, `find -delete`, `patch`, `git apply`), and anything a
//! `/dev/` path names. Such a command goes through unjudged; the pre-commit
//! hook still judges what it changed when it is committed.
//!
//! The git moves that take uncommitted work out of the work tree — `git
//! stash` (push and save, with `-u`, `-a`, `-k`, pathspecs), `git reset
//! --hard|--merge`, `git clean` (but `-n`), `git checkout -f BRANCH`, `git
//! switch -f|--discard-changes` — are read as an [`EditOp::Discard`] of
//! the directory they run in (also after `xargs`): what they would take is
//! read from git by the door.

use std::path::{Path, PathBuf};

use bsi_core::guard::discard::Discard;

use super::{EditOp, FileEdit, clean};

/// What the caller knows of the file system, asked about destinations
/// (`mv a dir`) and `git checkout` operands only.
pub trait Disk {
    /// `path` is a directory.
    fn is_dir(&self, path: &Path) -> bool;
    /// Something is at `path`.
    fn exists(&self, path: &Path) -> bool;
    /// The text of the file at `path` (a patch `git apply` reads), when it
    /// is a small regular file.
    fn read(&self, _path: &Path) -> Option<String> {
        None
    }
}

/// A disk that holds nothing: every destination is a file name, and `git
/// checkout WORD PATHS` reads WORD as a revision.
pub struct NoDisk;

impl Disk for NoDisk {
    fn is_dir(&self, _: &Path) -> bool {
        false
    }
    fn exists(&self, _: &Path) -> bool {
        false
    }
}

/// How deep `$(…)`, backquotes and `sh -c` are read.
const MAX_DEPTH: usize = 6;

/// The text that stands for appended lines bsi cannot know: one line that
/// is no heading, so the append touches the file's last section.
pub const UNKNOWN_APPEND: &str = "(lines appended by a shell command)\n";

/// Every file `command`, run in `cwd`, would write, and how, in the order
/// written; a file written more than once is one edit. Never panics.
pub fn edits(command: &str, cwd: &Path, disk: &dyn Disk) -> Vec<FileEdit> {
    let mut out = Collected::default();
    read_list(command, Some(clean(cwd)), disk, 0, &mut out);
    out.edits
}

/// Quick check before reading a command through: whether it may write at
/// all. False only when no character that any judged form needs is there.
pub fn may_write(command: &str) -> bool {
    const WORDS: [&str; 16] = [
        ">", "rm", "mv", "cp", "tee", "sed", "perl", "truncate", "git", "install", "ln", "dd",
        "unlink", "sh", "`", "$(",
    ];
    WORDS.iter().any(|w| command.contains(w))
}

#[derive(Default)]
struct Collected {
    edits: Vec<FileEdit>,
    /// Where each path is in `edits`.
    at: std::collections::HashMap<PathBuf, usize>,
}

impl Collected {
    /// A move that discards uncommitted work, run in `here`: never merged
    /// with the edits of a file.
    fn discard(&mut self, given: String, here: PathBuf, d: Discard) {
        self.edits.push(FileEdit {
            given,
            path: here,
            op: EditOp::Discard(d),
        });
    }

    fn push(&mut self, given: String, path: PathBuf, op: EditOp) {
        if let Some(e) = self.at.get(&path).and_then(|&i| self.edits.get_mut(i)) {
            // Written twice: what it holds after both is not known.
            let by = match (&e.op, &op) {
                (EditOp::Rewrite { by }, _) => by.clone(),
                (_, EditOp::Rewrite { by }) => by.clone(),
                _ => "two writes in one command".to_string(),
            };
            if e.op != op {
                e.op = EditOp::Rewrite { by };
            }
            return;
        }
        self.at.insert(path.clone(), self.edits.len());
        self.edits.push(FileEdit { given, path, op });
    }
}

// --- the lexer -------------------------------------------------------------

/// A word, quotes removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Word {
    text: String,
    /// Nothing in it needs the shell to expand it (no `$`, backquote,
    /// unquoted glob, `~` or brace).
    literal: bool,
    /// Some part of it was quoted.
    quoted: bool,
    /// The text of each `$(…)` and backquoted command in it.
    subs: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// `;`, `&`, a newline, `;;`.
    Seq,
    /// `&&`, `||`.
    Cond,
    /// `|`, `|&`.
    Pipe,
    /// `(`.
    Open,
    /// `)`.
    Close,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RedirKind {
    /// `>`, `>|`.
    Out,
    /// `>>`.
    Append,
    /// `&>`, `>&FILE`.
    OutErr,
    /// `&>>`.
    AppendErr,
    /// `>&N`, `<&N`, `>&-`: no file.
    Dup,
    /// `<`.
    In,
    /// `<>`.
    ReadWrite,
    /// `<<`, `<<-`.
    Heredoc,
    /// `<<<`.
    HereString,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Redir {
    fd: Option<u32>,
    kind: RedirKind,
    target: Word,
    /// A here-document's text, `None` when it has expansions bsi does not
    /// make.
    body: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Word(Word),
    Op(Op),
    Redir(Redir),
}

struct Lexer<'a> {
    s: &'a [char],
    i: usize,
    toks: Vec<Tok>,
    /// Here-documents whose text follows the next newline: (token index,
    /// delimiter, quoted, strip tabs).
    pending: Vec<(usize, String, bool, bool)>,
}

fn is_meta(c: char) -> bool {
    matches!(
        c,
        ';' | '&' | '|' | '(' | ')' | '<' | '>' | ' ' | '\t' | '\n'
    )
}

impl Lexer<'_> {
    fn peek(&self, k: usize) -> Option<char> {
        self.s.get(self.i + k).copied()
    }

    fn run(mut self) -> Vec<Tok> {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' => self.i += 1,
                '\\' if self.peek(1) == Some('\n') => self.i += 2,
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                '\n' => {
                    self.i += 1;
                    self.toks.push(Tok::Op(Op::Seq));
                    self.heredoc_bodies();
                }
                ';' => {
                    self.i += 1;
                    while matches!(self.peek(0), Some(';' | '&')) {
                        self.i += 1;
                    }
                    self.toks.push(Tok::Op(Op::Seq));
                }
                '&' => match self.peek(1) {
                    Some('&') => {
                        self.i += 2;
                        self.toks.push(Tok::Op(Op::Cond));
                    }
                    Some('>') => {
                        let append = self.peek(2) == Some('>');
                        self.i += if append { 3 } else { 2 };
                        let kind = if append {
                            RedirKind::AppendErr
                        } else {
                            RedirKind::OutErr
                        };
                        self.redir_target(None, kind);
                    }
                    _ => {
                        self.i += 1;
                        self.toks.push(Tok::Op(Op::Seq));
                    }
                },
                '|' => {
                    let two = matches!(self.peek(1), Some('|' | '&'));
                    let op = if self.peek(1) == Some('|') {
                        Op::Cond
                    } else {
                        Op::Pipe
                    };
                    self.i += if two { 2 } else { 1 };
                    self.toks.push(Tok::Op(op));
                }
                '(' => {
                    self.i += 1;
                    self.toks.push(Tok::Op(Op::Open));
                }
                ')' => {
                    self.i += 1;
                    self.toks.push(Tok::Op(Op::Close));
                }
                '<' | '>' => self.redirection(None),
                _ => {
                    // An IO number: digits right before `<` or `>`.
                    let digits = self.s[self.i..]
                        .iter()
                        .take_while(|c| c.is_ascii_digit())
                        .count();
                    if digits > 0
                        && digits < 6
                        && matches!(self.peek(digits), Some('<' | '>'))
                        && self.peek(digits + 1) != Some('(')
                    {
                        let fd: String = self.s[self.i..self.i + digits].iter().collect();
                        self.i += digits;
                        self.redirection(fd.parse().ok());
                    } else {
                        let start = self.i;
                        let w = self.word();
                        if self.i == start {
                            // Nothing read: step over it.
                            self.i += 1;
                        } else {
                            self.toks.push(Tok::Word(w));
                        }
                    }
                }
            }
        }
        self.heredoc_bodies();
        self.toks
    }

    /// At `<` or `>`.
    fn redirection(&mut self, fd: Option<u32>) {
        let (a, b, c) = (self.peek(0), self.peek(1), self.peek(2));
        // Process substitution: a word, its command read as a `$(…)`.
        if b == Some('(') {
            let mut w = Word::default();
            self.i += 2;
            let inner = self.balanced(')');
            w.text = format!("{}({inner})", a.unwrap_or('<'));
            w.subs.push(inner);
            self.toks.push(Tok::Word(w));
            return;
        }
        let (len, kind) = match (a, b, c) {
            (Some('>'), Some('>'), _) => (2, RedirKind::Append),
            (Some('>'), Some('|'), _) => (2, RedirKind::Out),
            (Some('>'), Some('&'), _) => (2, RedirKind::Dup),
            (Some('>'), _, _) => (1, RedirKind::Out),
            (Some('<'), Some('<'), Some('<')) => (3, RedirKind::HereString),
            (Some('<'), Some('<'), Some('-')) => (3, RedirKind::Heredoc),
            (Some('<'), Some('<'), _) => (2, RedirKind::Heredoc),
            (Some('<'), Some('&'), _) => (2, RedirKind::Dup),
            (Some('<'), Some('>'), _) => (2, RedirKind::ReadWrite),
            _ => (1, RedirKind::In),
        };
        let strip = c == Some('-') && kind == RedirKind::Heredoc;
        let is_out_dup = a == Some('>') && b == Some('&');
        self.i += len;
        if kind == RedirKind::Heredoc {
            while matches!(self.peek(0), Some(' ' | '\t')) {
                self.i += 1;
            }
            let start = self.i;
            let w = self.word();
            let raw_quoted = self.s[start..self.i]
                .iter()
                .any(|c| matches!(c, '\'' | '"' | '\\'));
            let at = self.toks.len();
            if self.i > start {
                self.pending.push((at, w.text.clone(), raw_quoted, strip));
            }
            self.toks.push(Tok::Redir(Redir {
                fd,
                kind,
                target: w,
                body: None,
            }));
            return;
        }
        if is_out_dup {
            // `>&2`, `>&-`: a descriptor; `>&file`: stdout and stderr.
            while matches!(self.peek(0), Some(' ' | '\t')) {
                self.i += 1;
            }
            let w = self.word();
            let dup =
                w.text == "-" || (!w.text.is_empty() && w.text.chars().all(|c| c.is_ascii_digit()));
            let kind = if dup || fd.is_some() {
                RedirKind::Dup
            } else {
                RedirKind::OutErr
            };
            self.toks.push(Tok::Redir(Redir {
                fd,
                kind,
                target: w,
                body: None,
            }));
            return;
        }
        self.redir_target(fd, kind);
    }

    fn redir_target(&mut self, fd: Option<u32>, kind: RedirKind) {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.i += 1;
        }
        let target = if self.peek(0).is_some_and(|c| !is_meta(c)) {
            self.word()
        } else {
            Word::default()
        };
        self.toks.push(Tok::Redir(Redir {
            fd,
            kind,
            target,
            body: None,
        }));
    }

    /// The here-documents whose text starts here.
    fn heredoc_bodies(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for (at, delim, quoted, strip) in pending {
            let mut body = String::new();
            loop {
                if self.i >= self.s.len() {
                    break;
                }
                let end = self.s[self.i..]
                    .iter()
                    .position(|c| *c == '\n')
                    .map_or(self.s.len(), |p| self.i + p);
                let line: String = self.s[self.i..end].iter().collect();
                self.i = (end + 1).min(self.s.len());
                let line = if strip {
                    line.trim_start_matches('\t').to_string()
                } else {
                    line
                };
                if line == delim || line.trim_end_matches('\r') == delim {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            let known = quoted || !body.contains(['$', '`', '\\']);
            if let Some(Tok::Redir(r)) = self.toks.get_mut(at) {
                r.body = known.then_some(body);
            }
        }
    }

    /// The text up to the `close` that ends what was opened just before,
    /// quotes and nested parentheses skipped; the `close` is consumed.
    fn balanced(&mut self, close: char) -> String {
        let open = if close == ')' { '(' } else { '{' };
        let start = self.i;
        let mut depth = 0usize;
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => self.i += 1,
                '\'' => {
                    self.i += 1;
                    while self.peek(0).is_some_and(|c| c != '\'') {
                        self.i += 1;
                    }
                }
                '"' => {
                    self.i += 1;
                    while let Some(c) = self.peek(0) {
                        if c == '\\' {
                            self.i += 1;
                        } else if c == '"' {
                            break;
                        }
                        self.i += 1;
                    }
                }
                c if c == open => depth += 1,
                c if c == close => {
                    if depth == 0 {
                        let inner: String = self.s[start..self.i].iter().collect();
                        self.i += 1;
                        return inner;
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.i += 1;
        }
        self.i = self.i.min(self.s.len());
        self.s[start.min(self.s.len())..].iter().collect()
    }

    /// A backquoted command, the opening backquote consumed.
    fn backquoted(&mut self) -> String {
        let mut inner = String::new();
        while let Some(c) = self.peek(0) {
            self.i += 1;
            match c {
                '`' => return inner,
                '\\' => {
                    if let Some(n) = self.peek(0) {
                        self.i += 1;
                        if !matches!(n, '$' | '`' | '\\') {
                            inner.push('\\');
                        }
                        inner.push(n);
                    }
                }
                c => inner.push(c),
            }
        }
        inner
    }

    /// `$…` in a word: a variable, `${…}`, `$(…)`, `$((…))`, `$'…'`.
    fn dollar(&mut self, w: &mut Word) {
        match self.peek(1) {
            Some('(') => {
                self.i += 2;
                let inner = self.balanced(')');
                w.text.push_str(&format!("$({inner})"));
                if !inner.starts_with('(') {
                    w.subs.push(inner);
                }
                w.literal = false;
            }
            Some('{') => {
                self.i += 2;
                let inner = self.balanced('}');
                w.text.push_str(&format!("${{{inner}}}"));
                w.literal = false;
            }
            Some('\'') => {
                self.i += 2;
                while let Some(c) = self.peek(0) {
                    self.i += 1;
                    if c == '\\' {
                        self.i += 1;
                    } else if c == '\'' {
                        break;
                    }
                }
                w.literal = false;
            }
            Some(c) if c.is_ascii_alphanumeric() || "_?#@*$!-".contains(c) => {
                self.i += 2;
                while self
                    .peek(0)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.i += 1;
                }
                w.literal = false;
            }
            _ => {
                w.text.push('$');
                self.i += 1;
            }
        }
    }

    fn word(&mut self) -> Word {
        let mut w = Word {
            literal: true,
            ..Word::default()
        };
        let start = self.i;
        while let Some(c) = self.peek(0) {
            if is_meta(c) || c == '\r' {
                break;
            }
            match c {
                '\\' => {
                    self.i += 1;
                    match self.peek(0) {
                        Some('\n') => self.i += 1,
                        Some(n) => {
                            w.text.push(n);
                            w.quoted = true;
                            self.i += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    w.quoted = true;
                    self.i += 1;
                    while let Some(c) = self.peek(0) {
                        self.i += 1;
                        if c == '\'' {
                            break;
                        }
                        w.text.push(c);
                    }
                }
                '"' => {
                    w.quoted = true;
                    self.i += 1;
                    while let Some(c) = self.peek(0) {
                        match c {
                            '"' => {
                                self.i += 1;
                                break;
                            }
                            '\\' => {
                                self.i += 1;
                                if let Some(n) = self.peek(0) {
                                    if !matches!(n, '$' | '`' | '"' | '\\' | '\n') {
                                        w.text.push('\\');
                                    }
                                    if n != '\n' {
                                        w.text.push(n);
                                    }
                                    self.i += 1;
                                }
                            }
                            '$' => self.dollar(&mut w),
                            '`' => {
                                self.i += 1;
                                let inner = self.backquoted();
                                w.subs.push(inner);
                                w.literal = false;
                            }
                            c => {
                                w.text.push(c);
                                self.i += 1;
                            }
                        }
                    }
                }
                '$' => self.dollar(&mut w),
                '`' => {
                    self.i += 1;
                    let inner = self.backquoted();
                    w.subs.push(inner);
                    w.literal = false;
                }
                '*' | '?' | '[' => {
                    w.literal = false;
                    w.text.push(c);
                    self.i += 1;
                }
                '~' if self.i == start => {
                    w.literal = false;
                    w.text.push(c);
                    self.i += 1;
                }
                '{' | '}' => {
                    w.text.push(c);
                    self.i += 1;
                    // `{` and `}` alone are reserved words, not braces.
                    let alone = self.i - start == 1 && self.peek(0).is_none_or(is_meta);
                    if !alone {
                        w.literal = false;
                    }
                }
                c => {
                    w.text.push(c);
                    self.i += 1;
                }
            }
        }
        w
    }
}

fn lex(input: &str) -> Vec<Tok> {
    let chars: Vec<char> = input.chars().collect();
    Lexer {
        s: &chars,
        i: 0,
        toks: Vec::new(),
        pending: Vec::new(),
    }
    .run()
}

// --- commands --------------------------------------------------------------

/// A simple command: its words and redirections.
#[derive(Debug, Default)]
struct Simple {
    words: Vec<Word>,
    redirs: Vec<Redir>,
}

/// Reads a command list, `base` the directory relative paths start from
/// (`None`: unknown after a `cd` bsi cannot follow).
fn read_list(
    input: &str,
    base: Option<PathBuf>,
    disk: &dyn Disk,
    depth: usize,
    out: &mut Collected,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let mut base = base;
    let mut stack: Vec<Option<PathBuf>> = Vec::new();
    let mut cur = Simple::default();
    for tok in lex(input) {
        match tok {
            Tok::Word(w) => cur.words.push(w),
            Tok::Redir(r) => cur.redirs.push(r),
            Tok::Op(op) => {
                let done = std::mem::take(&mut cur);
                if !done.words.is_empty() || !done.redirs.is_empty() {
                    command(done, &mut base, disk, depth, out);
                }
                match op {
                    Op::Open => stack.push(base.clone()),
                    Op::Close => {
                        if let Some(b) = stack.pop() {
                            base = b;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    if !cur.words.is_empty() || !cur.redirs.is_empty() {
        command(cur, &mut base, disk, depth, out);
    }
}

const RESERVED: [&str; 17] = [
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "case", "esac", "{",
    "}", "!", "function", "select",
];

fn is_assignment(w: &Word) -> bool {
    let Some((name, _)) = w.text.split_once('=') else {
        return false;
    };
    !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `w` as a path from `base`; `None` when bsi cannot tell which file it is.
fn path_of(w: &Word, base: Option<&Path>) -> Option<PathBuf> {
    if !w.literal || w.text.is_empty() || w.text.contains('\0') {
        return None;
    }
    let p = Path::new(&w.text);
    let full = if p.is_absolute() {
        clean(p)
    } else {
        clean(&base?.join(p))
    };
    // Devices and descriptors (`/dev/null`, `/dev/stderr`, `/proc/self/fd/1`)
    // are no files; `/dev/shm` is a file system like another.
    let dev =
        (full.starts_with("/dev") && !full.starts_with("/dev/shm")) || full.starts_with("/proc");
    (!dev).then_some(full)
}

fn command(
    mut c: Simple,
    base: &mut Option<PathBuf>,
    disk: &dyn Disk,
    depth: usize,
    out: &mut Collected,
) {
    // Commands inside words run first, from the same directory.
    for w in c.words.iter().chain(c.redirs.iter().map(|r| &r.target)) {
        for sub in &w.subs {
            read_list(sub, base.clone(), disk, depth + 1, out);
        }
    }
    // Leading reserved words and assignments.
    let skip = c
        .words
        .iter()
        .take_while(|w| (!w.quoted && RESERVED.contains(&w.text.as_str())) || is_assignment(w))
        .count();
    c.words.drain(..skip);
    let mut words: &[Word] = &c.words;
    let mut here = base.clone();
    // Prefixes that run the rest as the command.
    while let Some(first) = words.first() {
        let name = program(first);
        let rest = &words[1..];
        let after = match name.as_str() {
            "sudo" | "doas" => skip_options(
                rest,
                &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"],
            ),
            "env" => {
                let mut at = 0;
                while let Some(w) = rest.get(at) {
                    if w.text == "-C" || w.text == "--chdir" {
                        here = rest.get(at + 1).and_then(|d| path_of(d, here.as_deref()));
                        at += 2;
                    } else if let Some(d) = w.text.strip_prefix("--chdir=") {
                        let d = Word {
                            text: d.to_string(),
                            ..w.clone()
                        };
                        here = path_of(&d, here.as_deref());
                        at += 1;
                    } else if w.text == "-u" || w.text == "--unset" || w.text == "-S" {
                        at += 2;
                    } else if w.text.starts_with('-') || is_assignment(w) {
                        at += 1;
                    } else {
                        break;
                    }
                }
                at
            }
            "command" => {
                if rest
                    .first()
                    .is_some_and(|w| w.text == "-v" || w.text == "-V")
                {
                    words = &[];
                    break;
                }
                skip_options(rest, &[])
            }
            "nohup" | "builtin" | "exec" => skip_options(rest, &["-a"]),
            // The command it runs gets more words from its input: a move
            // that discards work is judged on the words it is given.
            "xargs" => skip_options(
                rest,
                &["-I", "-n", "-L", "-P", "-d", "-E", "-s", "-a", "-i", "-l"],
            ),
            "time" => skip_options(rest, &["-f", "-o"]),
            "nice" => skip_options(rest, &["-n"]),
            "stdbuf" => skip_options(rest, &["-i", "-o", "-e"]),
            "timeout" => {
                let at = skip_options(rest, &["-s", "-k"]);
                // The duration.
                (at + 1).min(rest.len())
            }
            _ => break,
        };
        words = &rest[after.min(rest.len())..];
        let skip = words.iter().take_while(|w| is_assignment(w)).count();
        words = &words[skip..];
    }
    let name = words.first().map(program).unwrap_or_default();
    let args = words.get(1..).unwrap_or(&[]);
    // Redirections: every file they open for writing.
    let stdout = stdout_text(&name, args, &c);
    for r in &c.redirs {
        let Some(path) = path_of(&r.target, here.as_deref()) else {
            continue;
        };
        let to_stdout = matches!(r.fd, None | Some(1));
        let op = match r.kind {
            RedirKind::Out if to_stdout => match &stdout {
                Some(content) => EditOp::Write {
                    content: content.clone(),
                },
                None => rewrite("a `>` redirection"),
            },
            RedirKind::Append if to_stdout => EditOp::Append {
                content: stdout.clone(),
            },
            RedirKind::Out | RedirKind::OutErr | RedirKind::ReadWrite => {
                rewrite("a `>` redirection")
            }
            RedirKind::Append | RedirKind::AppendErr => EditOp::Append { content: None },
            RedirKind::Dup | RedirKind::In | RedirKind::Heredoc | RedirKind::HereString => {
                continue;
            }
        };
        out.push(r.target.text.clone(), path, op);
    }
    if !words.first().is_some_and(|w| w.literal) {
        return;
    }
    let at = here.as_deref();
    let mut file = |w: &Word, at: Option<&Path>, op: EditOp| {
        if let Some(p) = path_of(w, at) {
            out.push(w.text.clone(), p, op);
        }
    };
    match name.as_str() {
        "cd" | "pushd" => {
            let ops = operands(args, &[], &[]).1;
            let next = match ops.first() {
                Some(d) if d.text != "-" => path_of(d, base.as_deref()),
                _ => None,
            };
            *base = next;
        }
        "popd" => *base = None,
        "rm" | "unlink" => {
            for w in operands(args, &[], &[]).1 {
                file(&w, at, EditOp::Delete);
            }
        }
        "tee" => {
            let (opts, files) = operands(args, &[], &["--output-error"]);
            let append = opts.iter().any(|o| o.0 == "-a" || o.0 == "--append");
            let text = stdin_text(&c);
            for w in files {
                if w.text == "-" {
                    continue;
                }
                let op = match (&text, append) {
                    (_, true) => EditOp::Append {
                        content: text.clone(),
                    },
                    (Some(t), false) => EditOp::Write { content: t.clone() },
                    (None, false) => rewrite("`tee`"),
                };
                file(&w, at, op);
            }
        }
        "truncate" => {
            for w in operands(args, &["-s", "-r"], &["--size", "--reference"]).1 {
                file(&w, at, rewrite("`truncate`"));
            }
        }
        "dd" => {
            for w in args {
                if let Some(t) = w.text.strip_prefix("of=") {
                    let w = Word {
                        text: t.to_string(),
                        ..w.clone()
                    };
                    file(&w, at, rewrite("`dd`"));
                }
            }
        }
        "sed" | "gsed" => {
            for w in sed_files(args) {
                file(&w, at, rewrite("`sed -i`"));
            }
        }
        "perl" => {
            for w in perl_files(args) {
                file(&w, at, rewrite("`perl -i`"));
            }
        }
        "cp" | "install" | "ln" => {
            let (opts, ops) = operands(
                args,
                &["-t", "-S", "-m", "-o", "-g"],
                &[
                    "--target-directory",
                    "--suffix",
                    "--mode",
                    "--owner",
                    "--group",
                ],
            );
            if name == "install" && opts.iter().any(|o| o.0 == "-d" || o.0 == "--directory") {
                return;
            }
            let by = format!("`{name}`");
            for (_, dest) in destinations(&opts, &ops, at, disk, name == "ln") {
                file(&dest, at, rewrite(&by));
            }
        }
        "mv" => {
            let (opts, ops) = operands(args, &["-t", "-S"], &["--target-directory", "--suffix"]);
            for (src, dest) in destinations(&opts, &ops, at, disk, false) {
                move_op(&mut file, &src, &dest, at);
            }
        }
        "git" => {
            if let Some((here, d)) = git(args, at, disk, &mut file) {
                let given = words
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                out.discard(given, here, d);
            }
        }
        "sh" | "bash" | "dash" | "zsh" | "ksh" => {
            if let Some(script) = shell_script(args) {
                read_list(&script.text, here.clone(), disk, depth + 1, out);
            }
        }
        _ => {}
    }
}

fn rewrite(by: &str) -> EditOp {
    EditOp::Rewrite { by: by.to_string() }
}

/// The program a word names: its last path part (`/bin/rm` is `rm`).
fn program(w: &Word) -> String {
    if !w.literal {
        return String::new();
    }
    w.text.rsplit('/').next().unwrap_or("").to_string()
}

/// How many leading words are options (and their arguments, for the
/// options in `with_arg`).
fn skip_options(words: &[Word], with_arg: &[&str]) -> usize {
    let mut at = 0;
    while let Some(w) = words.get(at) {
        if w.text == "--" {
            return at + 1;
        }
        if !w.text.starts_with('-') || w.text == "-" {
            break;
        }
        at += if with_arg.contains(&w.text.as_str()) {
            2
        } else {
            1
        };
    }
    at
}

/// GNU-style arguments: options (with their value, for the short ones in
/// `short_arg` and the long ones in `long_arg`) and operands, `--` ending
/// the options.
fn operands(
    words: &[Word],
    short_arg: &[&str],
    long_arg: &[&str],
) -> (Vec<(String, Option<Word>)>, Vec<Word>) {
    let mut opts = Vec::new();
    let mut ops = Vec::new();
    let mut it = words.iter();
    let mut ended = false;
    while let Some(w) = it.next() {
        let t = w.text.as_str();
        if ended || !t.starts_with('-') || t == "-" {
            ops.push(w.clone());
        } else if t == "--" {
            ended = true;
        } else if let Some(long) = t.strip_prefix("--") {
            match long.split_once('=') {
                Some((k, v)) => opts.push((
                    format!("--{k}"),
                    Some(Word {
                        text: v.to_string(),
                        ..w.clone()
                    }),
                )),
                None if long_arg.contains(&t) => opts.push((t.to_string(), it.next().cloned())),
                None => opts.push((t.to_string(), None)),
            }
        } else {
            // A cluster of short options: `-rf`, `-t DIR`, `-tDIR`.
            let chars: Vec<char> = t.chars().skip(1).collect();
            for (k, c) in chars.iter().enumerate() {
                let o = format!("-{c}");
                if short_arg.contains(&o.as_str()) {
                    let rest: String = chars[k + 1..].iter().collect();
                    let v = if rest.is_empty() {
                        it.next().cloned()
                    } else {
                        Some(Word {
                            text: rest,
                            ..w.clone()
                        })
                    };
                    opts.push((o, v));
                    break;
                }
                opts.push((o, None));
            }
        }
    }
    (opts, ops)
}

/// The (source, destination file) pairs of `cp`, `mv`, `install`, `ln`:
/// into `-t DIR`, into the last operand when it is a directory (or there
/// are several sources, or it ends in `/`), else onto it. `ln` with one
/// operand links into the current directory.
fn destinations(
    opts: &[(String, Option<Word>)],
    ops: &[Word],
    base: Option<&Path>,
    disk: &dyn Disk,
    ln: bool,
) -> Vec<(Word, Word)> {
    let target_dir = opts
        .iter()
        .find(|o| o.0 == "-t" || o.0 == "--target-directory")
        .and_then(|o| o.1.clone());
    let no_dir = opts
        .iter()
        .any(|o| o.0 == "-T" || o.0 == "--no-target-directory");
    let (sources, dest, into) = match target_dir {
        Some(d) => (ops, d, true),
        None => match ops.split_last() {
            Some((d, srcs)) if !srcs.is_empty() => {
                let is_dir = d.text.ends_with('/')
                    || srcs.len() > 1
                    || path_of(d, base).is_some_and(|p| disk.is_dir(&p));
                (srcs, d.clone(), is_dir && !no_dir)
            }
            Some((only, _)) if ln => (
                std::slice::from_ref(only),
                Word {
                    text: ".".into(),
                    literal: true,
                    ..Word::default()
                },
                true,
            ),
            _ => return Vec::new(),
        },
    };
    sources
        .iter()
        .filter_map(|s| {
            if !into {
                return Some((s.clone(), dest.clone()));
            }
            // Into a directory: the source's own name, when it has one.
            if !s.literal || !dest.literal {
                return None;
            }
            let name = Path::new(s.text.trim_end_matches('/')).file_name()?;
            let joined = Path::new(&dest.text).join(name);
            Some((
                s.clone(),
                Word {
                    text: joined.to_string_lossy().into_owned(),
                    literal: true,
                    ..Word::default()
                },
            ))
        })
        .collect()
}

/// A move of `src` onto `dest`: its text lands there.
fn move_op(
    file: &mut dyn FnMut(&Word, Option<&Path>, EditOp),
    src: &Word,
    dest: &Word,
    base: Option<&Path>,
) {
    match path_of(dest, base) {
        Some(to) if path_of(src, base).is_some() => file(
            src,
            base,
            EditOp::Move {
                to,
                to_given: dest.text.clone(),
                hunks: Vec::new(),
            },
        ),
        Some(_) => file(dest, base, rewrite("`mv`")),
        None => file(src, base, EditOp::Delete),
    }
}

/// The files `sed` rewrites: its file operands when `-i` is given.
fn sed_files(args: &[Word]) -> Vec<Word> {
    let mut in_place = false;
    let mut script = false;
    let mut ops = Vec::new();
    let mut it = args.iter();
    let mut ended = false;
    while let Some(w) = it.next() {
        let t = w.text.as_str();
        if ended || !t.starts_with('-') || t == "-" {
            ops.push(w.clone());
            continue;
        }
        if t == "--" {
            ended = true;
        } else if let Some(long) = t.strip_prefix("--") {
            let key = long.split_once('=').map_or(long, |(k, _)| k);
            match key {
                "in-place" => in_place = true,
                "expression" | "file" => {
                    script = true;
                    if !long.contains('=') {
                        it.next();
                    }
                }
                "line-length" if !long.contains('=') => {
                    it.next();
                }
                _ => {}
            }
        } else {
            let chars: Vec<char> = t.chars().skip(1).collect();
            for (k, c) in chars.iter().enumerate() {
                match c {
                    // The rest of the word is the backup suffix.
                    'i' => {
                        in_place = true;
                        break;
                    }
                    'e' | 'f' | 'l' => {
                        if *c != 'l' {
                            script = true;
                        }
                        if k + 1 == chars.len() {
                            it.next();
                        }
                        break;
                    }
                    _ => {}
                }
            }
        }
    }
    if !in_place {
        return Vec::new();
    }
    if !script && !ops.is_empty() {
        ops.remove(0);
    }
    ops
}

/// The files `perl -i` rewrites: the operands after the program.
fn perl_files(args: &[Word]) -> Vec<Word> {
    let mut in_place = false;
    let mut code = false;
    let mut ops = Vec::new();
    let mut it = args.iter();
    while let Some(w) = it.next() {
        let t = w.text.as_str();
        if !ops.is_empty() || !t.starts_with('-') || t == "-" {
            ops.push(w.clone());
            continue;
        }
        if t == "--" {
            ops.extend(it.cloned());
            break;
        }
        let chars: Vec<char> = t.chars().skip(1).collect();
        for (k, c) in chars.iter().enumerate() {
            match c {
                'i' => {
                    in_place = true;
                    break;
                }
                'e' | 'E' => {
                    code = true;
                    if k + 1 == chars.len() {
                        it.next();
                    }
                    break;
                }
                // Options whose value is the rest of the word.
                'M' | 'm' | 'I' | 'F' | '0' | 'l' | 'x' | 'C' | 'd' | 'D' | 'V' => break,
                _ => {}
            }
        }
    }
    if !in_place {
        return Vec::new();
    }
    if !code && !ops.is_empty() {
        ops.remove(0);
    }
    ops
}

/// `git checkout|restore|rm|mv`: the paths they write in the work tree;
/// The pathspecs of a `git restore` or `git checkout -- PATHS`: each file
/// a rewrite of it; the folders (`.` among them) the move `discard` makes
/// of them, judged by what it would take from the uncommitted work there.
fn folders(
    words: &[Word],
    at: Option<&Path>,
    disk: &dyn Disk,
    file: &mut dyn FnMut(&Word, Option<&Path>, EditOp),
    by: &str,
    discard: impl FnOnce(Vec<String>) -> Discard,
) -> Option<Discard> {
    let mut dirs = Vec::new();
    for w in words.iter().filter(|w| !w.text.starts_with(':')) {
        match path_of(w, at) {
            Some(p) if disk.is_dir(&p) => dirs.push(p.to_string_lossy().into_owned()),
            _ => file(w, at, rewrite(by)),
        }
    }
    (!dirs.is_empty()).then(|| discard(dirs))
}

/// `git stash|reset|clean`, a forced `checkout` or `switch`: the move that
/// discards uncommitted work, with the directory it runs in (its paths
/// absolute: the door makes them relative to the work tree).
fn git(
    args: &[Word],
    base: Option<&Path>,
    disk: &dyn Disk,
    file: &mut dyn FnMut(&Word, Option<&Path>, EditOp),
) -> Option<(PathBuf, Discard)> {
    let mut at = 0;
    let mut here: Option<PathBuf> = base.map(Path::to_path_buf);
    while let Some(w) = args.get(at) {
        match w.text.as_str() {
            "-C" => {
                here = args.get(at + 1).and_then(|d| path_of(d, here.as_deref()));
                at += 2;
            }
            "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" => at += 2,
            t if t.starts_with("--git-dir=") || t.starts_with("--work-tree=") => return None,
            t if t.starts_with('-') => at += 1,
            _ => break,
        }
    }
    let sub = args.get(at)?;
    let rest = &args[at + 1..];
    let at = here.as_deref();
    // Pathspec magic (`:(top)`, `:/`) is not read.
    let plain = |w: &&Word| !w.text.starts_with(':');
    let by = format!("`git {}`", sub.text);
    // The absolute paths of pathspecs (`None`: one that cannot be read,
    // which makes the move the whole work tree's).
    let specs = |words: &[Word]| -> Option<Vec<String>> {
        words
            .iter()
            .map(|w| {
                if w.text.starts_with(':') {
                    return None;
                }
                path_of(w, at).map(|p| p.to_string_lossy().into_owned())
            })
            .collect()
    };
    let here = || at.map(Path::to_path_buf);
    match sub.text.as_str() {
        "checkout" => {
            let dashdash = rest.iter().position(|w| w.text == "--");
            let before = &rest[..dashdash.unwrap_or(rest.len())];
            let (opts, words) = operands(before, &["-b", "-B"], &["--orphan", "--conflict"]);
            let has = |names: &[&str]| opts.iter().any(|o| names.contains(&o.0.as_str()));
            let switching = has(&["-b", "-B", "--orphan", "--detach"]);
            if has(&["--pathspec-from-file"]) {
                return None;
            }
            let paths: Vec<Word> = if let Some(d) = dashdash {
                rest[d + 1..].to_vec()
            } else if switching {
                Vec::new()
            } else {
                // Without `--`: the first word is a revision unless it
                // names something on disk.
                let first_is_path = words
                    .first()
                    .and_then(|w| path_of(w, at))
                    .is_some_and(|p| disk.exists(&p));
                if first_is_path {
                    words.clone()
                } else {
                    words.iter().skip(1).cloned().collect()
                }
            };
            if paths.is_empty() {
                // A branch checkout: forced, it throws the work tree's
                // changes away.
                if !has(&["-f", "--force"]) {
                    return None;
                }
                let target = opts
                    .iter()
                    .find(|o| matches!(o.0.as_str(), "-b" | "-B" | "--orphan"))
                    .and_then(|o| o.1.as_ref())
                    .or(words.first())
                    .map(|w| w.text.clone());
                let target = target.filter(|_| !switching);
                return Some((
                    here()?,
                    Discard::Switch {
                        program: "checkout".into(),
                        target,
                    },
                ));
            }
            // The revision the paths come from, when one is named.
            let source = if dashdash.is_some() {
                words.first().map(|w| w.text.clone())
            } else if paths.len() == words.len() {
                None
            } else {
                words.first().map(|w| w.text.clone())
            };
            return folders(&paths, at, disk, file, &by, |paths| Discard::Restore {
                program: "checkout".into(),
                staged: source.is_some(),
                source,
                paths,
            })
            .and_then(|d| Some((here()?, d)));
        }
        "switch" => {
            let (opts, words) = operands(
                rest,
                &["-c", "-C"],
                &["--create", "--force-create", "--orphan", "--conflict"],
            );
            let has = |names: &[&str]| opts.iter().any(|o| names.contains(&o.0.as_str()));
            if !has(&["-f", "--force", "--discard-changes"]) {
                return None;
            }
            let creates = has(&["-c", "-C", "--create", "--force-create", "--orphan"]);
            let target = (!creates)
                .then(|| words.first().map(|w| w.text.clone()))
                .flatten();
            return Some((
                here()?,
                Discard::Switch {
                    program: "switch".into(),
                    target,
                },
            ));
        }
        "stash" => {
            let (verb, rest) = match rest.first().map(|w| w.text.as_str()) {
                None => ("push", rest),
                Some(v) if v.starts_with('-') => ("push", rest),
                Some(v) => (v, &rest[1..]),
            };
            if !matches!(verb, "push" | "save") {
                // list, show, apply, pop, drop, clear, branch, create,
                // store: none takes changes out of the work tree.
                return None;
            }
            let (opts, words) = operands(rest, &["-m"], &["--message", "--pathspec-from-file"]);
            let has = |names: &[&str]| opts.iter().any(|o| names.contains(&o.0.as_str()));
            // `save`'s words are its message; a pathspec file is not read.
            let paths = if verb == "save" || has(&["--pathspec-from-file"]) {
                Vec::new()
            } else {
                specs(&words).unwrap_or_default()
            };
            return Some((
                here()?,
                Discard::Stash {
                    untracked: has(&["-u", "--include-untracked", "-a", "--all"]),
                    keep_index: has(&["-k", "--keep-index"]) && !has(&["--no-keep-index"]),
                    paths,
                },
            ));
        }
        "reset" => {
            let (opts, words) = operands(rest, &[], &["--pathspec-from-file"]);
            let mode = opts
                .iter()
                .map(|o| o.0.as_str())
                .find(|o| matches!(*o, "--hard" | "--merge"))?;
            return Some((
                here()?,
                Discard::Reset {
                    mode: mode.to_string(),
                    rev: words.first().map(|w| w.text.clone()),
                },
            ));
        }
        "clean" => {
            let (opts, words) = operands(rest, &["-e"], &["--exclude"]);
            let has = |names: &[&str]| opts.iter().any(|o| names.contains(&o.0.as_str()));
            if has(&["-n", "--dry-run"]) {
                return None;
            }
            // Without a path, git cleans the directory it runs in.
            let paths = if words.is_empty() {
                vec![here()?.to_string_lossy().into_owned()]
            } else {
                specs(&words).unwrap_or_default()
            };
            return Some((
                here()?,
                Discard::Clean {
                    dirs: has(&["-d"]),
                    paths,
                },
            ));
        }
        "restore" => {
            let (opts, words) = operands(rest, &["-s"], &["--source", "--pathspec-from-file"]);
            let has = |names: &[&str]| opts.iter().any(|o| names.contains(&o.0.as_str()));
            if has(&["-S", "--staged"]) && !has(&["-W", "--worktree"]) {
                return None;
            }
            let source = opts
                .iter()
                .find(|o| matches!(o.0.as_str(), "-s" | "--source"))
                .and_then(|o| o.1.as_ref())
                .map(|w| w.text.clone());
            let staged = has(&["-S", "--staged"]);
            return folders(&words, at, disk, file, &by, |paths| Discard::Restore {
                program: "restore".into(),
                staged,
                source,
                paths,
            })
            .and_then(|d| Some((here()?, d)));
        }
        "merge" | "cherry-pick" | "revert" | "rebase" | "am"
            if rest.iter().any(|w| w.text == "--abort") =>
        {
            return Some((
                here()?,
                Discard::Abort {
                    program: sub.text.clone(),
                },
            ));
        }
        "apply" => {
            let (opts, words) = operands(
                rest,
                &["-p", "-C"],
                &["--exclude", "--include", "--directory", "--whitespace"],
            );
            let has = |names: &[&str]| opts.iter().any(|o| names.contains(&o.0.as_str()));
            // Only the index, or nothing at all, is changed.
            if has(&["--cached", "--check", "--stat", "--numstat", "--summary"])
                && !has(&["--apply"])
            {
                return None;
            }
            let reverse = has(&["-R", "--reverse"]);
            let by = if reverse {
                "`git apply -R`".to_string()
            } else {
                by
            };
            for w in &words {
                let Some(text) = path_of(w, at).and_then(|p| disk.read(&p)) else {
                    // A patch bsi cannot read: every file it might name is
                    // unknown; the work tree's files are judged by git's
                    // own door when committed.
                    continue;
                };
                for (path, op) in crate::agents::patch::unified(&text, reverse) {
                    let named = Word {
                        text: path,
                        literal: true,
                        ..Word::default()
                    };
                    let op = match op {
                        EditOp::Patch(h) if h.is_empty() => rewrite(&by),
                        op => op,
                    };
                    file(&named, at, op);
                }
            }
        }
        "rm" => {
            let (opts, words) = operands(rest, &[], &["--pathspec-from-file"]);
            if opts
                .iter()
                .any(|o| matches!(o.0.as_str(), "--cached" | "-n" | "--dry-run"))
            {
                return None;
            }
            for w in words.iter().filter(plain) {
                file(w, at, EditOp::Delete);
            }
        }
        "mv" => {
            let (opts, words) = operands(rest, &[], &[]);
            if opts
                .iter()
                .any(|o| matches!(o.0.as_str(), "-n" | "--dry-run"))
            {
                return None;
            }
            for (src, dest) in destinations(&[], &words, at, disk, false) {
                move_op(file, &src, &dest, at);
            }
        }
        _ => {}
    }
    None
}

/// The script of `sh -c SCRIPT`.
fn shell_script(args: &[Word]) -> Option<&Word> {
    let mut it = args.iter();
    while let Some(w) = it.next() {
        let t = w.text.as_str();
        if t == "--" || !t.starts_with(['-', '+']) {
            return None;
        }
        if t == "-o" || t == "+o" || t == "-O" || t == "+O" {
            it.next();
            continue;
        }
        if t.starts_with('-') && !t.starts_with("--") && t.contains('c') {
            return it.next().filter(|s| s.literal);
        }
    }
    None
}

/// What a command's standard input holds, when a here-document or
/// here-string of its own gives it and bsi can read it.
fn stdin_text(c: &Simple) -> Option<String> {
    let last = c.redirs.iter().rev().find(|r| {
        matches!(r.fd, None | Some(0))
            && matches!(
                r.kind,
                RedirKind::Heredoc | RedirKind::HereString | RedirKind::In
            )
    })?;
    match last.kind {
        RedirKind::Heredoc => last.body.clone(),
        RedirKind::HereString if last.target.literal => Some(format!("{}\n", last.target.text)),
        _ => None,
    }
}

/// What a command writes on its standard output, when bsi can tell: `cat`
/// of its here-document, `echo` and `printf` of plain words.
fn stdout_text(name: &str, args: &[Word], c: &Simple) -> Option<String> {
    match name {
        "cat" => {
            if args.iter().any(|w| w.text != "-") {
                return None;
            }
            stdin_text(c)
        }
        "echo" => {
            let mut newline = true;
            let mut words = args;
            while let Some(w) = words.first() {
                match w.text.as_str() {
                    "-n" => newline = false,
                    "-E" => {}
                    t if t.starts_with('-')
                        && t.len() > 1
                        && t[1..].chars().all(|c| "neE".contains(c)) =>
                    {
                        if t.contains('e') {
                            return None;
                        }
                        if t.contains('n') {
                            newline = false;
                        }
                    }
                    _ => break,
                }
                words = &words[1..];
            }
            if words.iter().any(|w| !w.literal || w.text.contains('\\')) {
                return None;
            }
            let mut text = words
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            if newline {
                text.push('\n');
            }
            Some(text)
        }
        "printf" => match args {
            [f] if f.literal && !f.text.contains(['%', '\\']) => Some(f.text.clone()),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A disk where `dirs` are directories and `files` exist.
    struct Fake {
        dirs: Vec<&'static str>,
        files: Vec<&'static str>,
    }

    impl Disk for Fake {
        fn is_dir(&self, p: &Path) -> bool {
            self.dirs.iter().any(|d| Path::new(d) == p)
        }
        fn exists(&self, p: &Path) -> bool {
            self.is_dir(p) || self.files.iter().any(|f| Path::new(f) == p)
        }
    }

    fn disk() -> Fake {
        Fake {
            dirs: vec!["/b", "/b/agents", "/b/projets"],
            files: vec!["/b/projets/plan.md", "/b/agents/alice.md"],
        }
    }

    fn run(cmd: &str) -> Vec<(String, EditOp)> {
        edits(cmd, Path::new("/b"), &disk())
            .into_iter()
            .map(|e| (e.path.display().to_string(), e.op))
            .collect()
    }

    fn paths(cmd: &str) -> Vec<String> {
        run(cmd).into_iter().map(|(p, _)| p).collect()
    }

    fn whole(by: &str) -> EditOp {
        rewrite(by)
    }

    fn write(s: &str) -> EditOp {
        EditOp::Write { content: s.into() }
    }

    #[test]
    fn commands_that_write_nothing_are_nothing() {
        for cmd in [
            "ls -la",
            "git status --short",
            "bsi open agents/alice.md",
            "cat projets/plan.md",
            "echo one more",
            "grep -r x . 2>/dev/null",
            "make >&2",
            "cmd 2>&1 | less",
            "sed 's/a/b/' projets/plan.md",
            "perl -pe 's/a/b/' f.md",
            "git checkout -b feature",
            "git restore --staged projets/plan.md",
            "git rm --cached projets/plan.md",
            "echo x > /dev/null",
            "echo x > /dev/stderr 2>/proc/self/fd/2",
            "cat < projets/plan.md",
            "",
            "# rm projets/plan.md",
            "echo 'rm projets/plan.md'",
        ] {
            assert_eq!(run(cmd), vec![], "{cmd}");
        }
    }

    #[test]
    fn a_heredoc_gives_the_text() {
        let text = "# Plan\n\n## Goals\n\nnew\n";
        for cmd in [
            "cat > projets/plan.md <<'EOF'\n# Plan\n\n## Goals\n\nnew\nEOF",
            "cat <<EOF > projets/plan.md\n# Plan\n\n## Goals\n\nnew\nEOF\n",
            "cat >projets/plan.md <<\"EOF\"\n# Plan\n\n## Goals\n\nnew\nEOF\necho done",
            "cat > projets/plan.md <<-EOF\n\t# Plan\n\n\t## Goals\n\n\tnew\n\tEOF",
            "tee projets/plan.md <<'EOF' >/dev/null\n# Plan\n\n## Goals\n\nnew\nEOF",
        ] {
            assert_eq!(
                run(cmd),
                vec![("/b/projets/plan.md".into(), write(text))],
                "{cmd:?}"
            );
        }
        // Expansions in an unquoted here-document: the text is not known.
        assert_eq!(
            run("cat > f.md <<EOF\n$HOME\nEOF"),
            vec![("/b/f.md".into(), whole("a `>` redirection"))]
        );
        // An unterminated here-document runs to the end.
        assert_eq!(
            run("cat > f.md <<'EOF'\nline"),
            vec![("/b/f.md".into(), write("line\n"))]
        );
    }

    #[test]
    fn echo_and_printf_of_plain_words() {
        assert_eq!(
            run("echo hello world > a.md"),
            vec![("/b/a.md".into(), write("hello world\n"))]
        );
        assert_eq!(
            run("echo -n 'x y' > a.md"),
            vec![("/b/a.md".into(), write("x y"))]
        );
        assert_eq!(
            run("printf 'x' > a.md"),
            vec![("/b/a.md".into(), write("x"))]
        );
        for cmd in [
            "echo $X > a.md",
            "echo -e 'a\\n' > a.md",
            "printf '%s\\n' a > a.md",
            "ls > a.md",
        ] {
            assert_eq!(
                run(cmd),
                vec![("/b/a.md".into(), whole("a `>` redirection"))],
                "{cmd}"
            );
        }
    }

    #[test]
    fn appends() {
        assert_eq!(
            run("echo x >> agents/free.md"),
            vec![(
                "/b/agents/free.md".into(),
                EditOp::Append {
                    content: Some("x\n".into())
                }
            )]
        );
        assert_eq!(
            run("date >> log.md"),
            vec![("/b/log.md".into(), EditOp::Append { content: None })]
        );
        assert_eq!(
            run("make 2>> err.md"),
            vec![("/b/err.md".into(), EditOp::Append { content: None })]
        );
        assert_eq!(
            run("echo x | tee -a notes.md"),
            vec![("/b/notes.md".into(), EditOp::Append { content: None })]
        );
        assert_eq!(
            run("cat >> notes.md <<'EOF'\nmore\nEOF"),
            vec![(
                "/b/notes.md".into(),
                EditOp::Append {
                    content: Some("more\n".into())
                }
            )]
        );
    }

    #[test]
    fn rewrites_of_unknown_text() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "sed -i 's/a/b/' projets/plan.md",
                "/b/projets/plan.md",
                "`sed -i`",
            ),
            (
                "sed -i.bak -e 's/a/b/' -e 's/c/d/' a.md",
                "/b/a.md",
                "`sed -i`",
            ),
            ("sed -E --in-place 's/a/b/' a.md", "/b/a.md", "`sed -i`"),
            ("sed -ni 's/a/b/p' a.md", "/b/a.md", "`sed -i`"),
            ("perl -pi -e 's/a/b/' a.md", "/b/a.md", "`perl -i`"),
            ("perl -i.bak -pe 's/a/b/' a.md", "/b/a.md", "`perl -i`"),
            ("echo x | tee a.md", "/b/a.md", "`tee`"),
            ("truncate -s 0 a.md", "/b/a.md", "`truncate`"),
            ("dd if=/dev/zero of=a.md count=1", "/b/a.md", "`dd`"),
            ("cp other.md a.md", "/b/a.md", "`cp`"),
            ("cp -f other.md agents", "/b/agents/other.md", "`cp`"),
            ("cp a.md b.md agents/", "/b/agents/b.md", "`cp`"),
            ("install -m 644 x a.md", "/b/a.md", "`install`"),
            ("ln -sf x a.md", "/b/a.md", "`ln`"),
            (
                "git checkout -- projets/plan.md",
                "/b/projets/plan.md",
                "`git checkout`",
            ),
            ("git checkout HEAD~1 -- a.md", "/b/a.md", "`git checkout`"),
            (
                "git checkout projets/plan.md",
                "/b/projets/plan.md",
                "`git checkout`",
            ),
            (
                "git checkout main projets/plan.md",
                "/b/projets/plan.md",
                "`git checkout`",
            ),
            (
                "git restore projets/plan.md",
                "/b/projets/plan.md",
                "`git restore`",
            ),
            (
                "git restore --source HEAD~2 --staged --worktree a.md",
                "/b/a.md",
                "`git restore`",
            ),
            (
                "git -C projets restore plan.md",
                "/b/projets/plan.md",
                "`git restore`",
            ),
            ("python gen.py > out.md", "/b/out.md", "a `>` redirection"),
            ("make &> build.md", "/b/build.md", "a `>` redirection"),
            ("make >& build.md", "/b/build.md", "a `>` redirection"),
        ];
        for (cmd, path, by) in cases {
            let got = run(cmd);
            assert!(
                got.contains(&((*path).to_string(), whole(by))),
                "{cmd}: {got:?}"
            );
        }
        // `cp a.md b.md agents/`: both land in the folder.
        assert_eq!(
            paths("cp a.md b.md agents/"),
            ["/b/agents/a.md", "/b/agents/b.md"]
        );
        // `git checkout BRANCH` without paths switches branches: not read.
        assert_eq!(run("git checkout main"), vec![]);
    }

    #[test]
    fn deletes_and_moves() {
        assert_eq!(
            run("rm -f projets/plan.md agents/bob.md"),
            vec![
                ("/b/projets/plan.md".into(), EditOp::Delete),
                ("/b/agents/bob.md".into(), EditOp::Delete)
            ]
        );
        assert_eq!(run("rm -rf -- -x"), vec![("/b/-x".into(), EditOp::Delete)]);
        assert_eq!(
            run("git rm -q a.md"),
            vec![("/b/a.md".into(), EditOp::Delete)]
        );
        assert_eq!(run("unlink a.md"), vec![("/b/a.md".into(), EditOp::Delete)]);
        let moved = |to: &str, given: &str| EditOp::Move {
            to: PathBuf::from(to),
            to_given: given.into(),
            hunks: Vec::new(),
        };
        assert_eq!(
            run("mv projets/plan.md projets/old.md"),
            vec![(
                "/b/projets/plan.md".into(),
                moved("/b/projets/old.md", "projets/old.md")
            )]
        );
        assert_eq!(
            run("mv -f projets/plan.md agents"),
            vec![(
                "/b/projets/plan.md".into(),
                moved("/b/agents/plan.md", "agents/plan.md")
            )]
        );
        assert_eq!(
            run("mv -t agents a.md"),
            vec![("/b/a.md".into(), moved("/b/agents/a.md", "agents/a.md"))]
        );
        assert_eq!(
            run("git mv a.md c.md"),
            vec![("/b/a.md".into(), moved("/b/c.md", "c.md"))]
        );
        // The destination unknown: the source is gone all the same.
        assert_eq!(
            run("mv a.md \"$DEST\""),
            vec![("/b/a.md".into(), EditOp::Delete)]
        );
    }

    #[test]
    fn lists_pipes_and_directories() {
        assert_eq!(
            paths("cd projets && sed -i s/a/b/ plan.md; rm ../x.md"),
            ["/b/projets/plan.md", "/b/x.md"]
        );
        // A subshell's `cd` ends with it.
        assert_eq!(
            paths("(cd projets && rm a.md) && rm b.md"),
            ["/b/projets/a.md", "/b/b.md"]
        );
        // A `cd` bsi cannot follow: relative paths are not judged, absolute
        // ones are.
        assert_eq!(paths("cd \"$X\" && rm a.md && rm /b/c.md"), ["/b/c.md"]);
        assert_eq!(paths("cd && rm a.md"), Vec::<String>::new());
        assert_eq!(
            paths("ls | grep x > a.md || echo no >> b.md & rm c.md\nrm d.md"),
            ["/b/a.md", "/b/b.md", "/b/c.md", "/b/d.md"]
        );
        assert_eq!(paths("if true; then rm a.md; fi"), ["/b/a.md"]);
        assert_eq!(paths("for f in x; do rm b.md; done"), ["/b/b.md"]);
        assert_eq!(paths("{ rm a.md; }"), ["/b/a.md"]);
        assert_eq!(paths("rm /b/x/../a.md"), ["/b/a.md"]);
        assert_eq!(paths("rm /dev/shm/b/a.md"), ["/dev/shm/b/a.md"]);
    }

    #[test]
    fn prefixes_and_nested_commands() {
        for cmd in [
            "sudo rm a.md",
            "sudo -u root rm a.md",
            "env LANG=C rm a.md",
            "env -i A=1 B=2 rm a.md",
            "command rm a.md",
            "nohup rm a.md",
            "time rm a.md",
            "nice -n 5 rm a.md",
            "timeout -s KILL 10 rm a.md",
            "LANG=C rm a.md",
            "/bin/rm a.md",
            "exec rm a.md",
            "x=$(rm a.md)",
            "echo `rm a.md`",
            "echo \"$(rm a.md)\"",
            "sh -c 'rm a.md'",
            "bash -lc \"rm a.md\"",
            "diff <(rm a.md) b",
        ] {
            assert_eq!(paths(cmd), ["/b/a.md"], "{cmd}");
        }
        assert_eq!(paths("env -C projets rm plan.md"), ["/b/projets/plan.md"]);
        assert_eq!(paths("command -v rm"), Vec::<String>::new());
    }

    #[test]
    fn words_the_shell_must_expand_are_not_judged() {
        for cmd in [
            "rm *.md",
            "rm $F",
            "rm ~/a.md",
            "rm {a,b}.md",
            "echo x > \"$OUT\"",
            "sed -i s/a/b/ projets/*.md",
            "python -c 'open(\"a.md\",\"w\")'",
            "node -e 'x'",
            "./script.sh",
            "xargs rm < list",
            "find . -name '*.md' -delete",
            "\"$EDITOR\" a.md",
        ] {
            assert_eq!(run(cmd), vec![], "{cmd}");
        }
    }

    #[test]
    fn moves_that_discard_uncommitted_work() {
        let moves = |cmd: &str| -> Vec<(String, Discard)> {
            edits(cmd, Path::new("/b"), &disk())
                .into_iter()
                .filter_map(|e| match e.op {
                    EditOp::Discard(d) => Some((e.path.display().to_string(), d)),
                    _ => None,
                })
                .collect()
        };
        let stash = |untracked, keep_index, paths: &[&str]| Discard::Stash {
            untracked,
            keep_index,
            paths: paths.iter().map(ToString::to_string).collect(),
        };
        for (cmd, want) in [
            ("git stash", stash(false, false, &[])),
            ("git stash -u", stash(true, false, &[])),
            (
                "git stash push -a -k -- notes",
                stash(true, true, &["/b/notes"]),
            ),
            (
                "git stash push -m 'a b' notes x.md",
                stash(false, false, &["/b/notes", "/b/x.md"]),
            ),
            ("git stash save 'my message'", stash(false, false, &[])),
            ("sh -c 'git stash'", stash(false, false, &[])),
            ("ls | xargs -n1 git stash", stash(false, false, &[])),
            ("env -C /b git -C notes stash", stash(false, false, &[])),
            (
                "git reset --hard HEAD~1",
                Discard::Reset {
                    mode: "--hard".into(),
                    rev: Some("HEAD~1".into()),
                },
            ),
            (
                "git clean -fdx",
                Discard::Clean {
                    dirs: true,
                    paths: vec!["/b".into()],
                },
            ),
            (
                "git checkout -f main",
                Discard::Switch {
                    program: "checkout".into(),
                    target: Some("main".into()),
                },
            ),
            (
                "git switch --discard-changes dev",
                Discard::Switch {
                    program: "switch".into(),
                    target: Some("dev".into()),
                },
            ),
        ] {
            let got = moves(cmd);
            assert_eq!(got.len(), 1, "{cmd}: {got:?}");
            assert_eq!(got[0].1, want, "{cmd}");
        }
        // Moves that keep the work tree's changes.
        for cmd in [
            "git stash list",
            "git stash pop",
            "git stash apply stash@{0}",
            "git stash drop",
            "git reset --soft HEAD~1",
            "git reset HEAD a.md",
            "git reset --keep HEAD~1",
            "git clean -n",
            "git checkout main",
            "git switch dev",
        ] {
            assert_eq!(moves(cmd), vec![], "{cmd}");
        }
        // Two moves in one command are two.
        assert_eq!(moves("git stash && git reset --hard").len(), 2);
    }

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(paths("rm 'my file.md'"), ["/b/my file.md"]);
        assert_eq!(paths("rm my\\ file.md"), ["/b/my file.md"]);
        assert_eq!(paths("rm \"a b\".md"), ["/b/a b.md"]);
        assert_eq!(paths("rm 'a;b.md'"), ["/b/a;b.md"]);
        assert_eq!(paths("echo 'a > b.md'"), Vec::<String>::new());
        assert_eq!(paths("rm a.md \\\n b.md"), ["/b/a.md", "/b/b.md"]);
        assert_eq!(paths("echo x>a.md;rm b.md"), ["/b/a.md", "/b/b.md"]);
    }

    #[test]
    fn a_file_written_twice_is_rewritten() {
        assert_eq!(
            run("echo a > f.md && echo b >> f.md"),
            vec![("/b/f.md".into(), whole("two writes in one command"))]
        );
        assert_eq!(
            run("sed -i s/a/b/ f.md && sed -i s/c/d/ f.md"),
            vec![("/b/f.md".into(), whole("`sed -i`"))]
        );
    }

    #[test]
    fn may_write_is_a_superset() {
        for cmd in ["ls", "git status", "echo one more", "bsi status"] {
            assert!(run(cmd).is_empty());
        }
        assert!(!may_write("ls -la"));
        assert!(!may_write("bsi status"));
        for cmd in [
            "echo x > a.md",
            "rm a",
            "sed -i s/a/b/ f",
            "x=$(y)",
            "git checkout -- a",
        ] {
            assert!(may_write(cmd), "{cmd}");
        }
    }

    proptest::proptest! {
        #[test]
        fn no_command_makes_it_panic(s in "\\PC{0,80}") {
            let _ = edits(&s, Path::new("/b"), &disk());
        }

        #[test]
        fn no_shell_like_command_makes_it_panic(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("rm "), proptest::strategy::Just("> "),
                    proptest::strategy::Just(">> "), proptest::strategy::Just("<<"),
                    proptest::strategy::Just("'EOF'"), proptest::strategy::Just("EOF\n"),
                    proptest::strategy::Just("\n"), proptest::strategy::Just("$("),
                    proptest::strategy::Just(")"), proptest::strategy::Just("`"),
                    proptest::strategy::Just("\""), proptest::strategy::Just("'"),
                    proptest::strategy::Just("\\"), proptest::strategy::Just("a.md "),
                    proptest::strategy::Just("cd "), proptest::strategy::Just("sed -i "),
                    proptest::strategy::Just("mv "), proptest::strategy::Just("git checkout "),
                    proptest::strategy::Just("sh -c "), proptest::strategy::Just("&& "),
                    proptest::strategy::Just("| "), proptest::strategy::Just("2>&"),
                    proptest::strategy::Just("("), proptest::strategy::Just("${"),
                    proptest::strategy::Just("<("), proptest::strategy::Just("-- "),
                ],
                0..24,
            )
        ) {
            let cmd: String = parts.concat();
            for e in edits(&cmd, Path::new("/b"), &disk()) {
                let _ = super::super::new_text(&e, Some("# A\n\na\n"));
            }
        }
    }
}
