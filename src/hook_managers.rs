//! Hook managers and hook paths: where this work tree's git hooks really
//! are, whether each of bsi's hooks is reached there, and how bsi joins
//! husky, lefthook, the pre-commit framework or a tracked hooks folder
//! instead of standing in their place.
//!
//! Four layouts, decided by [`Layout::read`]:
//!
//! - **shared**: `.git/hooks`, or an absolute `core.hooksPath`: one folder
//!   for every work tree; bsi's own script goes there ([`githooks`]),
//!   chaining what was there — unless that is a manager's hook whose
//!   configuration already calls bsi.
//! - **husky** (`core.hooksPath` is `.husky/_`): husky's stubs run the
//!   tracked `.husky/NAME` scripts; bsi adds one line to those, so every
//!   checkout carries it and husky's re-run leaves it alone. A hook husky
//!   has no stub for gets bsi's script in `.husky/_` of every work tree.
//! - **tracked**: a relative `core.hooksPath` whose folder git tracks
//!   (`.githooks`): the same line in the tracked script.
//! - **per work tree**: a relative `core.hooksPath` git does not track:
//!   bsi's script in that folder of every work tree of the clone.
//!
//! Nothing here spawns a process: `bsi status` reads the same state.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use crate::githooks;
use bsi_core::api::git::Git;
use bsi_core::error::{Error, Result};
use bsi_core::words::command_line;

/// The hooks husky 9 writes a stub for in `.husky/_`.
pub const HUSKY_HOOKS: &[&str] = &[
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-rebase",
    "post-rewrite",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-auto-gc",
];

/// The mark ending the line bsi adds to a script it does not own.
pub const LINE_MARK: &str = "# bsi-managed-line";

/// Where lefthook reads its configuration, at the work tree root.
pub const LEFTHOOK_CONFIGS: &[&str] = &[
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yaml",
    ".config/lefthook.yml",
    ".config/lefthook.yaml",
    "lefthook.toml",
    ".lefthook.toml",
    "lefthook.json",
    ".lefthook.json",
    "lefthook-local.yml",
    ".lefthook-local.yml",
];

/// The pre-commit framework's configuration, at the work tree root.
pub const PRE_COMMIT_CONFIG: &str = ".pre-commit-config.yaml";

/// The ids of `.pre-commit-hooks.yaml` for each hook of bsi's.
const PRE_COMMIT_IDS: &[(&str, &str)] = &[
    ("pre-commit", "bsi-claims"),
    ("prepare-commit-msg", "bsi-session-trailer"),
];

/// Hooks git feeds on standard input.
const STDIN_HOOKS: &[&str] = &["reference-transaction", "pre-push", "post-rewrite"];

/// The line bsi adds to a hook script of husky or of a tracked folder.
pub fn line(name: &str) -> String {
    // A clone without bsi on PATH commits as before, told so: the line is
    // committed with the team's script, and not every teammate has bsi.
    // git runs reference-transaction for every reference update, three
    // states each: only a `prepared` one may need judging (the test costs
    // no process), and it stays quiet where pre-commit already warned.
    let call = format!("bsi hook {name} \"$@\" || exit $?");
    let body = if name == githooks::REFERENCE_TRANSACTION {
        format!("[ \"$1\" != prepared ] || ! command -v bsi >/dev/null 2>&1 || {{ {call}; }}")
    } else {
        format!(
            "if command -v bsi >/dev/null 2>&1; then {call}; else echo \"bsi {name} hook: bsi is not on PATH; this commit is not checked (install bsi)\" >&2; fi"
        )
    };
    format!("{body} {LINE_MARK}: `bsi hook uninstall` removes this line")
}

/// Whether `text` holds bsi's line for hook `name`.
pub fn has_line(text: &str, name: &str) -> bool {
    let want = format!("bsi hook {name} ");
    text.lines()
        .any(|l| l.contains(LINE_MARK) && l.contains(&want))
}

/// Whether a line before bsi's ends the script (`exit`, `exec`), so
/// that bsi's line never runs.
fn line_unreachable(text: &str) -> bool {
    for l in text.lines() {
        if l.contains(LINE_MARK) {
            return false;
        }
        let t = l.trim_start();
        if l == t && (t == "exit" || t.starts_with("exit ") || t.starts_with("exec ")) {
            return true;
        }
    }
    false
}

/// `text` with bsi's line for `name` appended; `None` when it is there.
/// An empty script starts with `#!/bin/sh`.
pub fn add_line(text: &str, name: &str) -> Option<String> {
    if has_line(text, name) {
        return None;
    }
    let mut out = if text.trim().is_empty() {
        "#!/bin/sh\n".to_string()
    } else {
        text.to_string()
    };
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&line(name));
    out.push('\n');
    Some(out)
}

/// `text` without bsi's lines; `None` when it has none.
pub fn remove_line(text: &str) -> Option<String> {
    if !text.lines().any(|l| l.contains(LINE_MARK)) {
        return None;
    }
    let mut out = String::new();
    for l in text.split_inclusive('\n') {
        if !l.contains(LINE_MARK) {
            out.push_str(l);
        }
    }
    Some(out)
}

/// Whether a script holds nothing but a `#!` line and blank lines: what is
/// left of a script bsi made once its line is gone.
fn is_empty_script(text: &str) -> bool {
    text.lines()
        .all(|l| l.trim().is_empty() || (l.starts_with("#!") && l.contains("sh")))
}

/// Whether a script runs with `sh` (or bash, dash, zsh): one bsi can add a
/// line of `sh` to. A script without `#!` is run by `sh`.
fn is_sh(text: &str) -> bool {
    match text.lines().next() {
        Some(first) if first.starts_with("#!") => {
            let words: Vec<&str> = first[2..].split_whitespace().collect();
            let prog = match words.as_slice() {
                [env, prog, ..] if env.ends_with("/env") => *prog,
                [prog, ..] => prog.rsplit('/').next().unwrap_or(prog),
                [] => return false,
            };
            matches!(prog, "sh" | "bash" | "dash" | "zsh" | "ksh")
        }
        _ => true,
    }
}

const LEFTHOOK_BEGIN: &str = "# >>> bsi-managed-block";
const LEFTHOOK_END: &str = "# <<< bsi-managed-block";

/// The lefthook commands that run bsi's hook `name`, as a block of YAML.
pub fn lefthook_snippet(name: &str) -> String {
    let args = if name == "pre-commit" { "" } else { " {0}" };
    let stdin = if STDIN_HOOKS.contains(&name) {
        "\n      use_stdin: true"
    } else {
        ""
    };
    format!("{name}:\n  commands:\n    bsi:\n      run: bsi hook {name}{args}{stdin}\n")
}

/// Whether a lefthook configuration calls bsi's hook `name`.
pub fn lefthook_calls(text: &str, name: &str) -> bool {
    let want = format!("bsi hook {name}");
    text.lines().any(|l| {
        let l = l.trim_start();
        !l.starts_with('#')
            && l.find(&want).is_some_and(|i| {
                let rest = &l[i + want.len()..];
                rest.is_empty() || rest.starts_with([' ', '"', '\''])
            })
    })
}

/// `text` (a YAML lefthook configuration) with bsi's command for `name`
/// added, between marker comments: a new top-level key when the file has
/// none for the hook, else an entry of its `commands:` (made when the hook
/// has neither `commands:` nor `jobs:`). `None` when the file's shape is
/// not one of those (the snippet is then for the user to add).
pub fn lefthook_add(text: &str, name: &str) -> Option<String> {
    let key = format!("{name}:");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let begin = format!("{LEFTHOOK_BEGIN}: `bsi hook uninstall` removes these lines\n");
    let Some(at) = lines
        .iter()
        .position(|l| l.trim_end() == key || l.starts_with(&format!("{key} #")))
    else {
        if text.lines().any(|l| l.starts_with(&key)) {
            return None;
        }
        let mut out = text.to_string();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&begin);
        out.push_str(&lefthook_snippet(name));
        out.push_str(LEFTHOOK_END);
        out.push('\n');
        return Some(out);
    };
    // The hook's block: the lines after its key, up to the next top-level line.
    let end = lines[at + 1..]
        .iter()
        .position(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#') && !l.starts_with([' ', '\t'])
        })
        .map_or(lines.len(), |p| at + 1 + p);
    let indent_of = |l: &str| l.len() - l.trim_start().len();
    let children: Vec<usize> = (at + 1..end)
        .filter(|&i| {
            let t = lines[i].trim();
            !t.is_empty() && !t.starts_with('#')
        })
        .collect();
    let step = children.first().map_or(2, |&i| indent_of(lines[i]));
    if step == 0 || lines[at + 1..end].iter().any(|l| l.contains('\t')) {
        return None;
    }
    let pad = |n: usize| " ".repeat(n);
    let run = lefthook_snippet(name)
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("run: ").map(str::to_string))?;
    let stdin = STDIN_HOOKS.contains(&name);
    let entry = |depth: usize| {
        let mut e = format!(
            "{}{begin}{}bsi:\n{}run: {run}\n",
            pad(depth),
            pad(depth),
            pad(depth + step)
        );
        if stdin {
            e.push_str(&format!("{}use_stdin: true\n", pad(depth + step)));
        }
        e.push_str(&format!("{}{LEFTHOOK_END}\n", pad(depth)));
        e
    };
    let mut out: String = lines[..=at].concat();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    let commands = children
        .iter()
        .copied()
        .find(|&i| indent_of(lines[i]) == step && lines[i].trim() == "commands:");
    let jobs = children
        .iter()
        .any(|&i| indent_of(lines[i]) == step && lines[i].trim_start().starts_with("jobs:"));
    match commands {
        Some(c) => {
            let depth = (c + 1..end)
                .find(|&i| !lines[i].trim().is_empty() && !lines[i].trim().starts_with('#'))
                .map_or(step * 2, |i| indent_of(lines[i]));
            if depth <= step {
                return None;
            }
            out.push_str(&lines[at + 1..=c].concat());
            out.push_str(&entry(depth));
            out.push_str(&lines[c + 1..].concat());
        }
        None if jobs
            || lines[at + 1..end]
                .iter()
                .any(|l| l.trim_start().starts_with("commands:")) =>
        {
            return None;
        }
        None => {
            out.push_str(&format!("{}commands:\n", pad(step)));
            out.push_str(&entry(step * 2));
            out.push_str(&lines[at + 1..].concat());
        }
    }
    Some(out)
}

/// `text` without bsi's lefthook blocks; `None` when it has none.
pub fn lefthook_remove(text: &str) -> Option<String> {
    if !text.contains(LEFTHOOK_BEGIN) {
        return None;
    }
    let mut out = String::new();
    let mut inside = false;
    for l in text.split_inclusive('\n') {
        if l.trim_start().starts_with(LEFTHOOK_BEGIN) {
            inside = true;
        } else if inside && l.trim_start().starts_with(LEFTHOOK_END) {
            inside = false;
        } else if !inside {
            out.push_str(l);
        }
    }
    Some(out)
}

/// Whose script a hook file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// bsi's own script.
    Bsi,
    /// husky's stub, which runs `.husky/NAME`.
    Husky,
    /// lefthook's, which runs what its configuration says.
    Lefthook,
    /// The pre-commit framework's, which runs its configuration and
    /// `NAME.legacy` first.
    PreCommit,
    /// Anything else.
    Other,
}

impl Owner {
    /// Whose script `text` is.
    pub fn of(text: &str) -> Owner {
        if githooks::is_ours(text) {
            Owner::Bsi
        } else if text.contains("call_lefthook") || text.contains("lefthook run") {
            Owner::Lefthook
        } else if text.contains("File generated by pre-commit") {
            Owner::PreCommit
        } else if text.contains("$(dirname \"$0\")/h\"") || text.contains("/husky.sh") {
            Owner::Husky
        } else {
            Owner::Other
        }
    }
}

/// How this work tree's hooks are laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// One folder for every work tree.
    Shared,
    /// husky: stubs in `.husky/_`, the scripts they run in `.husky`.
    Husky {
        /// The folder of the scripts (`.husky`).
        scripts: PathBuf,
    },
    /// A relative folder git tracks: its scripts come with every checkout.
    Tracked,
    /// A relative folder git does not track: one per work tree.
    PerWorkTree,
}

/// Where this work tree's hooks are, and how they are laid out.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The folder git runs this work tree's hooks from.
    pub dir: PathBuf,
    /// The setting it comes from (`core.hooksPath`), when set.
    pub setting: Option<PathBuf>,
    /// `.git/hooks` of the clone: where hooks are when the setting is not.
    pub default_dir: PathBuf,
    /// This work tree's root.
    pub root: PathBuf,
    /// The layout.
    pub kind: Kind,
    /// The hooks folder of each work tree of the clone (this one first),
    /// for a per-work-tree layout and husky's stubs.
    pub every_dir: Vec<PathBuf>,
}

fn read(path: &Path) -> Option<String> {
    fs::read(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

impl Layout {
    /// The layout of the work tree `git` was opened in.
    pub fn read(git: &Git) -> Result<Layout> {
        let root = git.workdir()?;
        let default_dir = git.common_dir().join("hooks");
        let setting = git.hooks_path_setting()?;
        let (dir, kind, every_dir) = match &setting {
            None => (default_dir.clone(), Kind::Shared, vec![default_dir.clone()]),
            Some(p) if p.is_absolute() => (p.clone(), Kind::Shared, vec![p.clone()]),
            Some(p) => {
                let dir = root.join(p);
                let mut every = vec![dir.clone()];
                for other in git.worktree_roots() {
                    let d = other.join(p);
                    if !every.iter().any(|e| same_dir(e, &d)) {
                        every.push(d);
                    }
                }
                // husky 9 sets `DIR/_`, by that name; in a work tree where
                // husky has not run yet the folder is missing or holds only
                // bsi's scripts, and the layout is husky's all the same.
                let husky = p.file_name().is_some_and(|n| n == "_");
                let kind = if husky {
                    Kind::Husky {
                        scripts: dir.parent().map(Path::to_path_buf).unwrap_or_default(),
                    }
                } else if git.tracks_under(p) {
                    Kind::Tracked
                } else {
                    Kind::PerWorkTree
                };
                (dir, kind, every)
            }
        };
        Ok(Layout {
            dir,
            setting,
            default_dir,
            root,
            kind,
            every_dir,
        })
    }

    /// The lefthook configuration files of this work tree.
    fn lefthook_configs(&self) -> Vec<PathBuf> {
        LEFTHOOK_CONFIGS
            .iter()
            .map(|c| self.root.join(c))
            .filter(|p| p.is_file())
            .collect()
    }

    /// Whether lefthook's configuration calls bsi's hook `name`.
    fn lefthook_calls(&self, name: &str) -> bool {
        self.lefthook_configs()
            .iter()
            .any(|p| read(p).is_some_and(|t| lefthook_calls(&t, name)))
    }

    /// Whether the pre-commit framework's configuration calls bsi's hook
    /// `name` (by the id of `.pre-commit-hooks.yaml` or by its command).
    fn pre_commit_calls(&self, name: &str) -> bool {
        let Some(text) = read(&self.root.join(PRE_COMMIT_CONFIG)) else {
            return false;
        };
        let by_id = PRE_COMMIT_IDS
            .iter()
            .any(|(n, id)| *n == name && text.contains(&format!("id: {id}")));
        by_id || lefthook_calls(&text, name)
    }

    /// Where the script husky's stub for `name` runs, for a hook husky
    /// has a stub for.
    fn husky_script(&self, name: &str) -> Option<PathBuf> {
        match &self.kind {
            Kind::Husky { scripts } if HUSKY_HOOKS.contains(&name) => Some(scripts.join(name)),
            _ => None,
        }
    }

    fn rel<'a>(&self, p: &'a Path) -> std::borrow::Cow<'a, str> {
        match p.strip_prefix(&self.root) {
            Ok(r) => r.to_string_lossy(),
            Err(_) => p.to_string_lossy(),
        }
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b || matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

/// Whether one of bsi's hooks is reached in this work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// bsi runs, and how.
    Reached(String),
    /// bsi does not run: why, and the command that mends it.
    Off {
        /// What is wrong.
        what: String,
        /// What to run.
        fix: String,
    },
}

fn off(what: String, fix: &str) -> Health {
    Health::Off {
        what,
        fix: fix.to_string(),
    }
}

const INSTALL: &str = "run `bsi hook install`";

/// Whether bsi's hook `name` is reached in this work tree: read from the
/// files only.
pub fn health(l: &Layout, name: &str, path_var: Option<&OsStr>) -> Health {
    if let Some(script) = l.husky_script(name) {
        return husky_health(l, name, &script);
    }
    let path = l.dir.join(name);
    let shown = l.rel(&path).into_owned();
    let Some(text) = read(&path) else {
        let aside = [".old", githooks::CHAINED_SUFFIX, ".legacy"]
            .iter()
            .map(|s| l.dir.join(format!("{name}{s}")))
            .find(|p| read(p).is_some_and(|t| githooks::is_ours(&t)));
        if let Some(p) = aside {
            return off(
                format!(
                    "no hook at {shown}; bsi's was moved aside to {}, which nothing runs",
                    l.rel(&p)
                ),
                INSTALL,
            );
        }
        if l.setting.is_some()
            && read(&l.default_dir.join(name)).is_some_and(|t| githooks::is_ours(&t))
        {
            return off(
                format!(
                    "no hook at {shown}: git runs hooks from core.hooksPath, and bsi's is in {}, which git no longer reads",
                    l.default_dir.display()
                ),
                INSTALL,
            );
        }
        return off(format!("not installed (no hook at {shown})"), INSTALL);
    };
    if !is_executable(&path) {
        return off(
            format!("{shown} is not executable: git skips it"),
            &format!(
                "run `{}`",
                command_line(["chmod", "+x", &path.to_string_lossy()])
            ),
        );
    }
    match Owner::of(&text) {
        Owner::Bsi => match script_program(&text) {
            Some(program) if !Path::new(&program).exists() && !on_path("bsi", path_var) => off(
                format!(
                    "{shown} calls bsi at {program}, which is gone, and no bsi is on PATH: every commit fails"
                ),
                "run `bsi hook install` with the bsi you use now",
            ),
            _ => Health::Reached(format!("bsi's hook ({shown})")),
        },
        Owner::Lefthook => {
            if l.lefthook_calls(name) {
                Health::Reached(format!("lefthook runs `bsi hook {name}` ({shown})"))
            } else {
                let old = l.dir.join(format!("{name}.old"));
                let aside = if read(&old).is_some_and(|t| githooks::is_ours(&t)) {
                    format!(
                        " and put bsi's aside as {}, which lefthook does not run",
                        l.rel(&old)
                    )
                } else {
                    String::new()
                };
                off(
                    format!(
                        "lefthook's hook is at {shown}{aside}; lefthook's configuration does not call bsi"
                    ),
                    &format!(
                        "{INSTALL} (it adds bsi to lefthook's configuration), then `lefthook install`"
                    ),
                )
            }
        }
        Owner::PreCommit => {
            let legacy = l.dir.join(format!("{name}.legacy"));
            if l.pre_commit_calls(name) {
                Health::Reached(format!(
                    "the pre-commit framework runs bsi ({PRE_COMMIT_CONFIG})"
                ))
            } else if read(&legacy).is_some_and(|t| githooks::is_ours(&t)) && is_executable(&legacy)
            {
                Health::Reached(format!(
                    "bsi's hook, which the pre-commit framework runs first ({})",
                    l.rel(&legacy)
                ))
            } else {
                off(
                    format!(
                        "the pre-commit framework's hook is at {shown}; {PRE_COMMIT_CONFIG} does not call bsi"
                    ),
                    INSTALL,
                )
            }
        }
        Owner::Husky => off(
            format!("husky's hook is at {shown}, but core.hooksPath is not husky's folder"),
            "run `npx husky`, then `bsi hook install`",
        ),
        Owner::Other => {
            if has_line(&text, name) && !line_unreachable(&text) {
                Health::Reached(format!("a line in {shown}"))
            } else if has_line(&text, name) {
                off(
                    format!("bsi's line in {shown} comes after an `exit` or `exec`: it never runs"),
                    &format!("move the line `bsi hook {name} ...` up in {shown}"),
                )
            } else if text.contains(&format!("bsi hook {name}")) {
                Health::Reached(format!("{shown} calls `bsi hook {name}`"))
            } else {
                let fix = if l.kind == Kind::Tracked {
                    format!(
                        "{INSTALL} (it adds a line calling bsi to a sh script; to another, add a call to `bsi hook {name}` yourself)"
                    )
                } else {
                    format!("{INSTALL} (it keeps that hook and runs it first)")
                };
                off(format!("{shown} is not bsi's and does not call bsi"), &fix)
            }
        }
    }
}

/// The program bsi's script calls (its `bsi=` line), when it names a path.
fn script_program(text: &str) -> Option<String> {
    let word = text.lines().find_map(|l| l.strip_prefix("bsi="))?;
    let program = bsi_core::words::read_shell_word(word)?;
    program.contains('/').then_some(program)
}

fn husky_health(l: &Layout, name: &str, script: &Path) -> Health {
    let stub = l.dir.join(name);
    let shown_stub = l.rel(&stub).into_owned();
    let shown = l.rel(script).into_owned();
    match read(&stub) {
        None => {
            return off(
                format!("husky is not set up in this work tree (no {shown_stub})"),
                "run `npx husky` (what `npm install` runs), then `bsi hook install`",
            );
        }
        Some(t) if Owner::of(&t) == Owner::Bsi => {
            return off(
                format!(
                    "bsi's hook stands in husky's place at {shown_stub}: husky's own {shown} no longer runs"
                ),
                INSTALL,
            );
        }
        Some(_) if !is_executable(&stub) => {
            return off(
                format!("{shown_stub} is not executable: git skips it"),
                &format!(
                    "run `{}`",
                    command_line(["chmod", "+x", &stub.to_string_lossy()])
                ),
            );
        }
        Some(_) => {}
    }
    match read(script) {
        Some(t) if has_line(&t, name) && !line_unreachable(&t) => {
            Health::Reached(format!("a line in {shown}, which husky runs"))
        }
        Some(t) if has_line(&t, name) => off(
            format!("bsi's line in {shown} comes after an `exit` or `exec`: it never runs"),
            &format!("move the line `bsi hook {name} ...` up in {shown}"),
        ),
        Some(t) if t.contains(&format!("bsi hook {name}")) => {
            Health::Reached(format!("{shown} calls `bsi hook {name}`"))
        }
        Some(_) => off(
            format!("husky runs {shown}, which does not call bsi"),
            INSTALL,
        ),
        None => off(format!("husky runs {shown}, which does not exist"), INSTALL),
    }
}

/// Whether a program `name` is in a folder of `path_var` (the `PATH` the
/// hooks run with; read, not run).
pub fn on_path(name: &str, path_var: Option<&OsStr>) -> bool {
    path_var.is_some_and(|paths| {
        std::env::split_paths(paths).any(|d| {
            let p = d.join(name);
            p.is_file() && is_executable(&p)
        })
    })
}

/// Whether bsi is reached through a call of `bsi` on PATH (a line, a
/// manager's configuration) rather than bsi's own script.
pub fn calls_bsi_on_path(h: &Health) -> bool {
    matches!(h, Health::Reached(how) if !how.starts_with("bsi's hook"))
}

/// The clone's git config key `bsi hook install` sets and `bsi hook
/// uninstall` removes.
pub const INSTALLED_KEY: &str = "bsi.hooksInstalled";

/// Whether this clone's guard was installed and not uninstalled since:
/// [`INSTALLED_KEY`], or a script of bsi's that git does not run here
/// (moved aside by a manager, or in `.git/hooks` while `core.hooksPath`
/// points elsewhere).
pub fn installed_in_clone(git: &Git, l: &Layout, names: &[&str]) -> bool {
    if git.config_string(INSTALLED_KEY).is_some() {
        return true;
    }
    let ours = |p: PathBuf| read(&p).is_some_and(|t| githooks::is_ours(&t));
    names.iter().any(|n| {
        ours(l.dir.join(format!("{n}.old")))
            || (!same_dir(&l.default_dir, &l.dir) && ours(l.default_dir.join(n)))
    })
}

/// The hooks bsi keeps in this layout: `names`, and in a layout where each
/// work tree has its own folder, [`githooks::POST_CHECKOUT`] too, which
/// guards a work tree added later.
pub fn hooks_of<'a>(l: &Layout, names: &[&'a str]) -> Vec<&'a str> {
    let mut out = names.to_vec();
    if l.kind == Kind::PerWorkTree && !out.contains(&githooks::POST_CHECKOUT) {
        out.push(githooks::POST_CHECKOUT);
    }
    out
}

/// Which of bsi's hooks to install in a work tree that has no file at
/// their place (`missing`): none unless this clone installed the guard
/// (`installed`) and each work tree has its own folder; under husky, only
/// the hooks husky has no stub for (its stubs are husky's to write). A file
/// that is there, bsi's or not, is never among `missing`. Pure.
pub fn to_mend<'a>(kind: &Kind, installed: bool, missing: &[&'a str]) -> Vec<&'a str> {
    if !installed {
        return Vec::new();
    }
    match kind {
        Kind::PerWorkTree => missing.to_vec(),
        Kind::Husky { .. } => missing
            .iter()
            .filter(|n| !HUSKY_HOOKS.contains(n))
            .copied()
            .collect(),
        Kind::Shared | Kind::Tracked => Vec::new(),
    }
}

/// What [`guard_later_work_tree`] installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mended {
    /// The work tree's hooks folder.
    pub dir: PathBuf,
    /// The hooks installed there.
    pub hooks: Vec<String>,
}

impl std::fmt::Display for Mended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "bsi: this work tree had no guard: bsi's {} installed in {} (core.hooksPath gives each work tree its own); `bsi doctor` checks them",
            self.hooks.join(", "),
            self.dir.display()
        )
    }
}

/// Guards the work tree `git` was opened in when it was added after this
/// clone's guard was installed, in a layout where each work tree has its
/// own hooks folder: installs there those of bsi's hooks `names` (and
/// post-checkout) that have no file at their place. `None` when there was
/// nothing to do. What it costs when nothing is to do: the clone's
/// configuration, read once, and a stat per hook; the layout (the index)
/// is read only when a hook is missing.
pub fn guard_later_work_tree(
    git: &Git,
    names: &[&str],
    program: Option<&str>,
) -> Result<Option<Mended>> {
    let Some(setting) = git.hooks_path_setting()? else {
        return Ok(None);
    };
    if setting.is_absolute() || git.config_string(INSTALLED_KEY).is_none() {
        return Ok(None);
    }
    let dir = git.workdir()?.join(&setting);
    let husky = setting.file_name().is_some_and(|n| n == "_");
    let mut wanted: Vec<&str> = names.to_vec();
    wanted.push(githooks::POST_CHECKOUT);
    let missing: Vec<&str> = wanted
        .into_iter()
        .filter(|n| !(husky && HUSKY_HOOKS.contains(n)))
        .filter(|n| fs::symlink_metadata(dir.join(n)).is_err())
        .collect();
    if missing.is_empty() {
        return Ok(None);
    }
    let l = Layout::read(git)?;
    let todo = to_mend(&l.kind, true, &missing);
    if todo.is_empty() {
        return Ok(None);
    }
    for name in &todo {
        githooks::install(&l.dir, name, program)?;
    }
    Ok(Some(Mended {
        dir: l.dir.clone(),
        hooks: todo.iter().map(|n| (*n).to_string()).collect(),
    }))
}

/// Words for the layout, for `bsi doctor`.
pub fn describe(l: &Layout) -> String {
    let setting = l
        .setting
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    match &l.kind {
        Kind::Shared if l.setting.is_none() => format!(
            "git runs this clone's hooks from {} (one folder for every work tree)",
            l.dir.display()
        ),
        Kind::Shared => format!(
            "git runs this clone's hooks from core.hooksPath {} (one folder for every work tree)",
            l.dir.display()
        ),
        Kind::Husky { scripts } => format!(
            "husky: git runs the stubs in {} (core.hooksPath {setting}), which run the scripts of {}",
            l.dir.display(),
            scripts.display()
        ),
        Kind::Tracked => format!(
            "core.hooksPath {setting} is a folder git tracks: each checkout carries its scripts ({})",
            l.dir.display()
        ),
        Kind::PerWorkTree => format!(
            "core.hooksPath {setting} is relative and untracked: each work tree has its own ({})",
            l.dir.display()
        ),
    }
}

/// One of bsi's hooks that git does not reach in this work tree.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// The hook.
    pub hook: String,
    /// What is wrong.
    pub what: String,
    /// What to run.
    pub fix: String,
}

/// The guard in this work tree, for `bsi status --json`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GuardState {
    /// Whether this clone's guard was installed (`bsi hook install`).
    pub installed: bool,
    /// Whether every hook of bsi's is reached in this work tree.
    pub on: bool,
    /// The hooks not reached, with what mends each; empty when on.
    pub problems: Vec<Problem>,
}

/// Whether this work tree's guard is on, and what is wrong if not.
pub fn guard_state(git: &Git, names: &[&str], path_var: Option<&OsStr>) -> GuardState {
    let Ok(l) = Layout::read(git) else {
        return GuardState {
            installed: false,
            on: false,
            problems: vec![Problem {
                hook: String::new(),
                what: "bsi cannot read where git runs this work tree's hooks".into(),
                fix: "run `bsi doctor`".into(),
            }],
        };
    };
    let installed = installed_in_clone(git, &l, names);
    let problems: Vec<Problem> = hooks_of(&l, names)
        .iter()
        .filter_map(|n| match health(&l, n, path_var) {
            Health::Off { what, fix } => Some(Problem {
                hook: (*n).to_string(),
                what,
                fix,
            }),
            Health::Reached(_) => None,
        })
        .collect();
    GuardState {
        installed,
        on: problems.is_empty(),
        problems,
    }
}

/// The line `bsi status` shows when this clone installed the guard and a
/// hook of it is not reached in this work tree; `None` when all are (or
/// the guard was never installed here: `bsi doctor` says so).
pub fn status_line(git: &Git, names: &[&str], path_var: Option<&OsStr>) -> Option<String> {
    let l = Layout::read(git).ok()?;
    if !installed_in_clone(git, &l, names) {
        return None;
    }
    let off: Vec<String> = hooks_of(&l, names)
        .iter()
        .filter_map(|n| match health(&l, n, path_var) {
            Health::Off { what, .. } => Some(format!("{n}: {what}")),
            Health::Reached(_) => None,
        })
        .collect();
    let first = off.first()?;
    let more = match off.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    Some(format!(
        "GUARD OFF in this work tree: {first}{more}. Run `bsi doctor` for what to do."
    ))
}

/// What install or uninstall did to one hook, for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    /// The hook.
    pub name: String,
    /// What was done.
    pub what: String,
    /// The file it was done to.
    pub path: PathBuf,
}

/// What install or uninstall did, and what is left for the user to do.
#[derive(Debug, Default)]
pub struct Report {
    /// One entry per hook and file.
    pub done: Vec<Done>,
    /// Lines for the user after them.
    pub notes: Vec<String>,
}

impl Report {
    fn add(&mut self, name: &str, what: impl Into<String>, path: PathBuf) {
        self.done.push(Done {
            name: name.to_string(),
            what: what.into(),
            path,
        });
    }
}

fn write_text(path: &Path, text: &str, executable: bool) -> Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)
            .map_err(|e| Error::io(format!("cannot create {}", parent.display()), e))?;
    }
    let tmp = path.with_extension("bsi-tmp");
    let ctx = |what: &str| format!("cannot {what} {}", path.display());
    fs::write(&tmp, text).map_err(|e| Error::io(ctx("write"), e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = match fs::metadata(path) {
            Ok(m) => m.permissions().mode() | if executable { 0o111 } else { 0 },
            Err(_) => 0o755,
        };
        fs::set_permissions(&tmp, fs::Permissions::from_mode(mode))
            .map_err(|e| Error::io(ctx("set the mode of"), e))?;
    }
    #[cfg(not(unix))]
    let _ = executable;
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        Error::io(ctx("write"), e)
    })
}

fn remove_if_ours(path: &Path) -> Result<bool> {
    if read(path).is_some_and(|t| githooks::is_ours(&t)) {
        fs::remove_file(path)
            .map_err(|e| Error::io(format!("cannot remove {}", path.display()), e))?;
        return Ok(true);
    }
    Ok(false)
}

/// Adds bsi's line to the script at `path` (made when absent).
fn install_line(l: &Layout, name: &str, path: &Path, r: &mut Report) -> Result<()> {
    let text = read(path).unwrap_or_default();
    if !is_sh(&text) {
        return Err(Error::HookNotShell {
            hook: path.to_path_buf(),
            name: name.to_string(),
        });
    }
    match add_line(&text, name) {
        None => r.add(
            name,
            "already installed (a line calls bsi)",
            path.to_path_buf(),
        ),
        Some(new) => {
            write_text(path, &new, matches!(l.kind, Kind::Tracked))?;
            r.add(name, "a line calling bsi added", path.to_path_buf());
        }
    }
    Ok(())
}

/// Installs bsi's hooks `names` in this work tree's layout, calling bsi at
/// `program` from the scripts bsi owns (the lines it adds to shared
/// scripts call `bsi` on PATH: they are committed).
pub fn install(
    l: &Layout,
    names: &[&str],
    program: Option<&str>,
    path_var: Option<&OsStr>,
) -> Result<Report> {
    let mut r = Report::default();
    let mut lines_added: Vec<String> = Vec::new();
    for name in names {
        if let Some(script) = l.husky_script(name) {
            // An older install stood in husky's stub's place: put it back.
            let stub = l.dir.join(name);
            if read(&stub).is_some_and(|t| githooks::is_ours(&t)) {
                githooks::uninstall(&l.dir, name)?;
            }
            // husky rewrote its stub over that older install: the stub it
            // had chained is left over, and nothing runs it.
            let chained = l.dir.join(format!("{name}{}", githooks::CHAINED_SUFFIX));
            if read(&chained).is_some_and(|t| Owner::of(&t) == Owner::Husky) {
                fs::remove_file(&chained)
                    .map_err(|e| Error::io(format!("cannot remove {}", chained.display()), e))?;
            }
            let before = r.done.len();
            install_line(l, name, &script, &mut r)?;
            if r.done[before..].iter().any(|d| d.what.contains("added")) {
                lines_added.push(l.rel(&script).into_owned());
            }
            continue;
        }
        match l.kind {
            Kind::Tracked => {
                let path = l.dir.join(name);
                // An older install stood in the tracked script's place.
                if read(&path).is_some_and(|t| githooks::is_ours(&t)) {
                    githooks::uninstall(&l.dir, name)?;
                }
                let before = r.done.len();
                install_line(l, name, &path, &mut r)?;
                if r.done[before..].iter().any(|d| d.what.contains("added")) {
                    lines_added.push(l.rel(&path).into_owned());
                }
                continue;
            }
            Kind::PerWorkTree | Kind::Husky { .. } => {
                for dir in &l.every_dir {
                    let o = githooks::install(dir, name, program)?;
                    r.add(name, o.describe(), dir.join(name));
                }
                continue;
            }
            Kind::Shared => {}
        }
        let path = l.dir.join(name);
        let owner = read(&path).map(|t| Owner::of(&t));
        // reference-transaction runs on every reference update (a fetch
        // makes one per reference): bsi's own script leaves at once where
        // it has nothing to judge, lefthook would start for each. lefthook
        // gets it only when it already owns that hook.
        let lefthook = owner == Some(Owner::Lefthook)
            || (owner.is_none()
                && *name != githooks::REFERENCE_TRANSACTION
                && !l.lefthook_configs().is_empty());
        if lefthook {
            if l.lefthook_calls(name) {
                r.add(
                    name,
                    "run by lefthook (its configuration calls bsi)",
                    path.clone(),
                );
                if owner.is_none() {
                    r.notes.push(format!(
                        "lefthook has not installed its {name} hook yet: run `lefthook install`"
                    ));
                }
            } else {
                let yml = l.lefthook_configs().into_iter().find(|p| {
                    p.extension().is_some_and(|e| e == "yml" || e == "yaml")
                        && !p.to_string_lossy().contains("lefthook-local")
                });
                let added = match yml
                    .as_ref()
                    .and_then(|p| Some((p, lefthook_add(&read(p)?, name)?)))
                {
                    Some((p, new)) => {
                        write_text(p, &new, false)?;
                        r.add(name, "bsi added to lefthook's configuration", p.clone());
                        r.notes.push(if owner == Some(Owner::Lefthook) {
                            format!(
                                "lefthook runs bsi's {name} from {} from the next commit on",
                                l.rel(p)
                            )
                        } else {
                            format!(
                                "lefthook runs bsi's {name} from {} once it installs its hook: run `lefthook install`",
                                l.rel(p)
                            )
                        });
                        true
                    }
                    None => false,
                };
                if !added {
                    r.notes.push(format!(
                        "lefthook: add these lines to its configuration so lefthook runs bsi's {name}, then run `lefthook install`:\n{}",
                        lefthook_snippet(name)
                            .lines()
                            .map(|s| format!("  {s}"))
                            .collect::<Vec<_>>()
                            .join("\n")
                    ));
                }
                if owner == Some(Owner::Lefthook) {
                    if !added {
                        // Until then, bsi's script chains lefthook's.
                        let o = githooks::install(&l.dir, name, program)?;
                        r.add(name, o.describe(), path.clone());
                    }
                } else {
                    let o = githooks::install(&l.dir, name, program)?;
                    r.add(name, o.describe(), path.clone());
                }
            }
            // bsi's hook that lefthook put aside runs no more.
            remove_if_ours(&l.dir.join(format!("{name}.old")))?;
            continue;
        }
        if owner == Some(Owner::PreCommit) && l.pre_commit_calls(name) {
            r.add(
                name,
                format!("run by the pre-commit framework ({PRE_COMMIT_CONFIG} calls bsi)"),
                path,
            );
            continue;
        }
        if owner == Some(Owner::PreCommit) {
            r.notes.push(format!(
                "The pre-commit framework runs {name} here and {PRE_COMMIT_CONFIG} does not call bsi: bsi's hook runs it first. To run bsi from the framework instead, add bsi's hooks to {PRE_COMMIT_CONFIG} (docs/hooks-and-verify.md, \"With the pre-commit framework\")"
            ));
        }
        let o = githooks::install(&l.dir, name, program)?;
        r.add(name, o.describe(), path);
    }
    let by_path = !lines_added.is_empty()
        || r.done
            .iter()
            .any(|d| d.what.contains("lefthook's configuration"));
    if by_path && !on_path("bsi", path_var) {
        r.notes.push(
            "bsi is not on PATH here: the lines added call `bsi`; put the folder of the bsi program on PATH (`cargo install` puts it in ~/.cargo/bin)".to_string(),
        );
    }
    if !lines_added.is_empty() {
        let mut args = vec!["git", "add", "--"];
        args.extend(lines_added.iter().map(String::as_str));
        r.notes.push(format!(
            "Commit {} so that every work tree and clone carries the guard: `{}`, then `git commit`",
            lines_added.join(", "),
            command_line(args)
        ));
    }
    Ok(r)
}

/// Removes bsi's hooks `names` from this work tree's layout: its scripts,
/// its lines, its lefthook blocks, and its scripts a manager put aside.
pub fn uninstall(l: &Layout, names: &[&str]) -> Result<Report> {
    let mut r = Report::default();
    for name in names {
        if let Some(script) = l.husky_script(name) {
            remove_line_from(name, &script, &mut r)?;
            if read(&l.dir.join(name)).is_some_and(|t| githooks::is_ours(&t)) {
                let o = githooks::uninstall(&l.dir, name)?;
                r.add(name, o.describe(), l.dir.join(name));
            }
        } else if l.kind == Kind::Tracked {
            remove_line_from(name, &l.dir.join(name), &mut r)?;
        } else if matches!(l.kind, Kind::PerWorkTree | Kind::Husky { .. }) {
            for dir in &l.every_dir {
                let o = githooks::uninstall(dir, name)?;
                r.add(name, o.describe(), dir.join(name));
            }
        } else {
            let o = githooks::uninstall(&l.dir, name)?;
            r.add(name, o.describe(), l.dir.join(name));
        }
        for p in l.lefthook_configs() {
            if let Some(new) = read(&p).and_then(|t| lefthook_remove(&t)) {
                write_text(&p, &new, false)?;
                r.add(name, "bsi removed from lefthook's configuration", p);
            }
        }
        for suffix in [".old", ".legacy"] {
            let p = l.dir.join(format!("{name}{suffix}"));
            if remove_if_ours(&p)? {
                r.add(name, "removed (bsi's hook a manager had put aside)", p);
            }
        }
        // bsi's hook left in .git/hooks since core.hooksPath was set.
        if l.setting.is_some() && !same_dir(&l.default_dir, &l.dir) {
            let p = l.default_dir.join(name);
            if read(&p).is_some_and(|t| githooks::is_ours(&t)) {
                let o = githooks::uninstall(&l.default_dir, name)?;
                r.add(name, o.describe(), p);
            }
        }
    }
    Ok(r)
}

fn remove_line_from(name: &str, path: &Path, r: &mut Report) -> Result<()> {
    match read(path).and_then(|t| remove_line(&t)) {
        Some(new) if is_empty_script(&new) => {
            fs::remove_file(path)
                .map_err(|e| Error::io(format!("cannot remove {}", path.display()), e))?;
            r.add(
                name,
                "removed (it held only bsi's line)",
                path.to_path_buf(),
            );
        }
        Some(new) => {
            write_text(path, &new, false)?;
            r.add(name, "bsi's line removed", path.to_path_buf());
        }
        None => r.add(name, "not installed", path.to_path_buf()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_added_once_and_removed() {
        let s = add_line("npm test\n", "pre-commit").expect("added");
        assert!(
            s.starts_with(
                "npm test\nif command -v bsi >/dev/null 2>&1; then bsi hook pre-commit \"$@\" || exit $?; else"
            ),
            "{s}"
        );
        assert!(has_line(&s, "pre-commit"));
        assert!(!has_line(&s, "prepare-commit-msg"));
        assert_eq!(add_line(&s, "pre-commit"), None);
        assert_eq!(remove_line(&s).as_deref(), Some("npm test\n"));
        let made = add_line("", "prepare-commit-msg").expect("added");
        assert!(made.starts_with("#!/bin/sh\n"), "{made}");
        assert!(is_empty_script(&remove_line(&made).expect("removed")));
        assert!(line_unreachable(&format!(
            "exit 0\n{}\n",
            line("pre-commit")
        )));
        assert!(!line_unreachable(&format!(
            "if x; then\n  exit 1\nfi\n{}\n",
            line("pre-commit")
        )));
    }

    #[test]
    fn lefthook_blocks_go_only_where_yaml_allows() {
        let base = "pre-commit:\n  commands:\n    lint:\n      run: ./lint\n";
        let s = lefthook_add(base, "pre-commit").expect("added");
        assert!(
            s.starts_with("pre-commit:\n  commands:\n    # >>> bsi"),
            "{s}"
        );
        assert!(
            s.contains("\n    bsi:\n      run: bsi hook pre-commit\n    # <<< bsi"),
            "{s}"
        );
        assert!(s.ends_with("    lint:\n      run: ./lint\n"), "{s}");
        assert_eq!(lefthook_remove(&s).as_deref(), Some(base));
        let bare = "pre-commit:\n  parallel: true\nother: 1\n";
        let s = lefthook_add(bare, "pre-commit").expect("added");
        assert!(
            s.contains("  parallel: true\n  commands:\n    # >>>")
                || s.contains("pre-commit:\n  commands:\n    # >>>"),
            "{s}"
        );
        assert!(s.ends_with("other: 1\n"), "{s}");
        assert_eq!(
            lefthook_add("pre-commit:\n  jobs:\n    - run: x\n", "pre-commit"),
            None
        );
        let s = lefthook_add(base, "prepare-commit-msg").expect("added");
        assert!(s.contains("run: bsi hook prepare-commit-msg {0}\n"), "{s}");
        assert!(lefthook_calls(&s, "prepare-commit-msg"));
        assert!(!lefthook_calls(&s, "pre-commit"));
        assert_eq!(lefthook_remove(&s).as_deref(), Some(base));
        assert!(lefthook_calls(
            "x:\n  run: bsi hook pre-commit\n",
            "pre-commit"
        ));
        assert!(!lefthook_calls(
            "# run: bsi hook pre-commit\n",
            "pre-commit"
        ));
    }

    #[test]
    fn a_later_work_tree_gets_only_what_its_layout_needs() {
        let all = ["pre-commit", "reference-transaction", "post-checkout"];
        assert_eq!(to_mend(&Kind::PerWorkTree, true, &all), all);
        assert!(to_mend(&Kind::PerWorkTree, false, &all).is_empty());
        let husky = Kind::Husky {
            scripts: PathBuf::from(".husky"),
        };
        assert_eq!(to_mend(&husky, true, &all), ["reference-transaction"]);
        assert!(to_mend(&Kind::Shared, true, &all).is_empty());
        assert!(to_mend(&Kind::Tracked, true, &all).is_empty());
    }

    #[test]
    fn owners_and_shells() {
        assert_eq!(
            Owner::of("#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\""),
            Owner::Husky
        );
        assert_eq!(
            Owner::of("call_lefthook run \"pre-commit\" \"$@\""),
            Owner::Lefthook
        );
        assert_eq!(
            Owner::of("# File generated by pre-commit: https://pre-commit.com"),
            Owner::PreCommit
        );
        assert_eq!(Owner::of(&githooks::script("pre-commit", None)), Owner::Bsi);
        assert!(is_sh("#!/usr/bin/env bash\n"));
        assert!(is_sh("npm test\n"));
        assert!(!is_sh("#!/usr/bin/env python3\n"));
    }
}
