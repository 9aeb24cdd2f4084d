//! Installing and removing bsi's git hooks.
//!
//! A hook bsi installs is a small `sh` script that runs the hook that was
//! there before (kept beside it as `NAME.bsi-chained`), stops when that one
//! fails, then runs `bsi hook NAME`. Installing again changes nothing;
//! uninstalling removes bsi's script and puts the previous hook back.

use std::fs;
use std::path::{Path, PathBuf};

use crate::doors::judged;
use bsi_core::error::{Error, Result};
use bsi_core::trailer;
use bsi_core::words::shell_word;

/// The hooks bsi installs.
pub const HOOKS: &[&str] = &[
    "pre-commit",
    "prepare-commit-msg",
    "pre-merge-commit",
    "reference-transaction",
];

/// The hook that guards a work tree added later (`git worktree add`) where
/// each work tree has its own hooks folder (a relative `core.hooksPath` git
/// does not track): installed there only, beside [`HOOKS`].
pub const POST_CHECKOUT: &str = "post-checkout";

/// The line that marks a hook script as bsi's.
pub const MARKER: &str = "# bsi-managed-hook";

/// Suffix of the hook that was in place before bsi's.
pub const CHAINED_SUFFIX: &str = ".bsi-chained";

/// The lines every script of bsi's begins with: the marker, what it is,
/// and where the hook that was there before is kept (`$chained`).
fn script_head(name: &str) -> String {
    format!(
        r#"#!/bin/sh
{MARKER}: {name}
# Installed by `bsi hook install`; `bsi hook uninstall` removes it and puts
# back the hook that was here before ({name}{CHAINED_SUFFIX}), which runs first.
case $0 in */*) here=${{0%/*}} ;; *) here=. ;; esac
chained="$here/{name}{CHAINED_SUFFIX}"
"#
    )
}

/// The lines that set `$bsi`: bsi at `program` (an absolute path) when it
/// is there, else `bsi` on PATH.
fn find_bsi(program: Option<&str>) -> String {
    let program = shell_word(program.unwrap_or("bsi"));
    format!("bsi={program}\n[ -x \"$bsi\" ] || bsi=bsi\n")
}

/// The script of hook `name`, calling bsi at `program` (an absolute path,
/// or `None` to find `bsi` on PATH).
pub fn script(name: &str, program: Option<&str>) -> String {
    if name == REFERENCE_TRANSACTION {
        return reference_transaction_script(program);
    }
    if name == POST_CHECKOUT {
        return post_checkout_script(program);
    }
    let (head, find_bsi) = (script_head(name), find_bsi(program));
    let skip = if name == PREPARE_COMMIT_MSG {
        nothing_to_add()
    } else {
        String::new()
    };
    format!(
        r#"{head}if [ -x "$chained" ]; then
    "$chained" "$@" || exit $?
fi
{find_bsi}if ! command -v "$bsi" >/dev/null 2>&1; then
    echo "bsi {name} hook: the bsi program is not installed or not on PATH." >&2
    echo "hint: install it (cargo install), run \`bsi hook uninstall\`, or commit with --no-verify" >&2
    exit 1
fi
{skip}exec "$bsi" hook {name} "$@"
"#
    )
}

/// The hook that adds the session's trailer to a commit message.
pub const PREPARE_COMMIT_MSG: &str = "prepare-commit-msg";

/// The lines of the prepare-commit-msg script that start nothing when bsi
/// would add nothing, decided with the shell's builtins alone: the message
/// (`$1`) carries `BSI-Session: $BSI_SESSION` already (an amend, a rebase
/// or a cherry-pick of the session's own commit: git keeps the message),
/// or no session is named here — `BSI_SESSION` is empty and the clone has
/// no session map, which alone can name the session of an agent tool's
/// process or of its variable. Anything else starts bsi, which decides
/// (a `BSI_SESSION` that is no session id is bsi's to refuse).
fn nothing_to_add() -> String {
    let trailer = trailer::SESSION;
    format!(
        r#"# Nothing to add starts nothing: the message carries the session's trailer
# already, or no session is named (no BSI_SESSION, no session map).
case $BSI_SESSION in
'')
    common=${{GIT_DIR:-.git}}
    case $1 in "$common"/*) ;; *) common= ;; esac
    if [ -n "$common" ] && [ -f "$common/commondir" ]; then
        dir=
        read -r dir <"$common/commondir" || [ -n "$dir" ] || common=
        case $dir in /*) common=$dir ;; ?*) common=$common/$dir ;; esac
    fi
    if [ -n "$common" ] && [ -d "$common" ] && [ ! -e "$common/bsi-agents/sessions.json" ]; then
        exit 0
    fi
    ;;
*[!A-Za-z0-9._:@+-]*) ;;
*)
    if [ ${{#BSI_SESSION}} -le 100 ] && [ -f "$1" ] && [ -r "$1" ]; then
        while IFS= read -r line || [ -n "$line" ]; do
            [ "$line" = "{trailer}: $BSI_SESSION" ] && exit 0
        done <"$1"
    fi
    ;;
esac
"#
    )
}

/// The hook git runs for every reference update.
pub const REFERENCE_TRANSACTION: &str = "reference-transaction";

/// The reference-transaction script. git runs it for every transaction
/// (`git fetch` of git 2.47 makes one per reference it updates, a rebase
/// one per pseudo-ref it writes) and writes the updates on stdin: they are
/// read once, with the shell's own `read` (no other process), and handed
/// to the chained hook and to bsi (past eight lines, the rest by one
/// `cat`: a batched transaction of a thousand updates read byte by byte
/// costs 50 ms of CPU); with no chained hook, a state other than
/// `prepared` reads nothing. Only a `prepared` transaction that moves
/// a branch starts bsi: a fetch of remote-tracking branches, a tag, the
/// `committed` and `aborted` states cost one `sh`. And not the commit the
/// pre-commit hook of this same git command passed: its mark
/// ([`judged`]) names the git process (`PID@START`, the start time read
/// from `/proc`), the HEAD it judged and whether the commit is plain; when
/// every branch update of the transaction starts from that HEAD, bsi would
/// find nothing to judge, and the script takes the mark as bsi would. bsi
/// is exec'd, so its parent is the git command (which tells it whether
/// that command's pre-commit hook judged the commit).
fn reference_transaction_script(program: Option<&str>) -> String {
    let name = REFERENCE_TRANSACTION;
    let (head, find_bsi) = (script_head(name), find_bsi(program));
    let (file, plain) = (judged::FILE, judged::PLAIN);
    format!(
        r#"{head}[ "$1" = prepared ] || [ -x "$chained" ] || exit 0
updates=
n=0
while [ $n -lt 8 ] && IFS= read -r line; do
    updates="$updates$line
"
    n=$((n + 1))
done
# A batched transaction (`git fetch --atomic`; every fetch from git 2.51):
# the rest at once, not byte by byte.
if [ $n -ge 8 ]; then
    if rest=$(cat); then
        [ -z "$rest" ] || updates="$updates$rest
"
    else
        while IFS= read -r line; do
            updates="$updates$line
"
        done
    fi
fi
if [ -x "$chained" ]; then
    printf '%s' "$updates" | "$chained" "$@" || exit $?
fi
[ "$1" = prepared ] || exit 0
case $updates in *" refs/heads/"*) ;; *) exit 0 ;; esac
{find_bsi}if ! command -v "$bsi" >/dev/null 2>&1; then
    echo "bsi {name} hook: the bsi program is not installed or not on PATH; this branch update is not checked." >&2
    echo "hint: install it (cargo install), or run \`bsi hook uninstall\`" >&2
    exit 0
fi
# The commit this git command's pre-commit hook passed: judged already.
judged() {{
    mark=${{GIT_DIR:-.git}}/{file}
    [ -f "$mark" ] && [ -r "$mark" ] && [ -r "/proc/$PPID/stat" ] || return 1
    words=
    read -r words <"$mark" || [ -n "$words" ] || return 1
    read -r stat <"/proc/$PPID/stat" || return 1
    case $stat in "$PPID (git) "* | "$PPID (git-"*) ;; *) return 1 ;; esac
    set -- ${{stat##*) }}
    [ $# -ge 20 ] || return 1
    shift 19
    git="$PPID@$1"
    set -- $words
    [ $# -eq 4 ] && [ "$1" = "$git" ] && [ "$3" = 0 ] && [ "$4" = {plain} ] || return 1
    while read -r old new ref; do
        case $ref in refs/heads/*) ;; *) continue ;; esac
        case $old in *[!0]*) ;; *) old=none ;; esac
        [ "$old" = "$2" ] || return 1
    done <<BSI_UPDATES
$updates
BSI_UPDATES
    {{ printf '' >"$mark"; }} 2>/dev/null
}}
judged && exit 0
exec "$bsi" hook {name} "$@" <<BSI_UPDATES
$updates
BSI_UPDATES
"#
    )
}

/// The post-checkout script. git runs it after every checkout; only the
/// first checkout of a new work tree (or clone) — the previous HEAD all
/// zeros — starts bsi, which installs its hooks in that work tree's folder
/// (`git worktree add` runs the hook of the work tree it was typed in, in
/// the new work tree). It never fails the checkout for bsi's sake: the
/// chained hook's status is the script's.
fn post_checkout_script(program: Option<&str>) -> String {
    let name = POST_CHECKOUT;
    let (head, find_bsi) = (script_head(name), find_bsi(program));
    format!(
        r#"{head}status=0
if [ -x "$chained" ]; then
    "$chained" "$@" || status=$?
fi
# A new work tree: the previous HEAD is all zeros.
case $1 in ''|*[!0]*) exit $status ;; esac
{find_bsi}if command -v "$bsi" >/dev/null 2>&1; then
    "$bsi" hook {name} "$@" </dev/null || :
fi
exit $status
"#
    )
}

/// Whether `text` is a hook script written by bsi.
pub fn is_ours(text: &str) -> bool {
    text.lines().take(3).any(|l| l.starts_with(MARKER))
}

/// What install or uninstall did to one hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Written where there was none.
    Installed,
    /// Written, with the previous hook kept and chained.
    Chained,
    /// bsi's hook was there already, as it would write it.
    Unchanged,
    /// bsi's hook was there, calling bsi at another path: rewritten.
    Updated,
    /// bsi's hook removed.
    Removed,
    /// bsi's hook removed and the previous hook put back.
    Restored,
    /// There is a hook, but not bsi's: left alone.
    NotOurs,
    /// No hook of bsi's there.
    Absent,
}

impl Outcome {
    /// Words for the user.
    pub fn describe(self) -> &'static str {
        match self {
            Outcome::Installed => "installed",
            Outcome::Chained => "installed; the existing hook is kept and runs first",
            Outcome::Unchanged => "already installed",
            Outcome::Updated => "updated",
            Outcome::Removed => "removed",
            Outcome::Restored => "removed; the previous hook is back",
            Outcome::NotOurs => "not bsi's hook: left alone",
            Outcome::Absent => "not installed",
        }
    }
}

fn read(path: &Path) -> Result<Option<String>> {
    match fs::read(path) {
        Ok(b) => Ok(Some(String::from_utf8_lossy(&b).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("cannot read {}", path.display()), e)),
    }
}

/// Whether something (a file or a dangling symlink) is at `path`.
fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

fn chained_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}{CHAINED_SUFFIX}"))
}

fn write_executable(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("bsi-tmp");
    let ctx = |what: &str| format!("cannot {what} {}", path.display());
    fs::write(&tmp, text).map_err(|e| Error::io(ctx("write"), e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&tmp, fs::Permissions::from_mode(0o755))
            .map_err(|e| Error::io(ctx("make executable"), e))?;
    }
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        Error::io(ctx("write"), e)
    })
}

/// Installs hook `name` in `dir`, calling bsi at `program`.
pub fn install(dir: &Path, name: &str, program: Option<&str>) -> Result<Outcome> {
    fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    let path = dir.join(name);
    let want = script(name, program);
    let existing = if exists(&path) { read(&path)? } else { None };
    match existing {
        Some(text) if is_ours(&text) => {
            if text == want {
                return Ok(Outcome::Unchanged);
            }
            write_executable(&path, &want)?;
            Ok(Outcome::Updated)
        }
        _ if exists(&path) => {
            let chained = chained_path(dir, name);
            if exists(&chained) {
                return Err(Error::HookSlotsTaken {
                    hook: path,
                    chained,
                });
            }
            fs::rename(&path, &chained)
                .map_err(|e| Error::io(format!("cannot move {} aside", path.display()), e))?;
            if let Err(e) = write_executable(&path, &want) {
                let _ = fs::rename(&chained, &path);
                return Err(e);
            }
            Ok(Outcome::Chained)
        }
        _ => {
            write_executable(&path, &want)?;
            Ok(Outcome::Installed)
        }
    }
}

/// Removes bsi's hook `name` from `dir` and puts back the one it chained.
pub fn uninstall(dir: &Path, name: &str) -> Result<Outcome> {
    let path = dir.join(name);
    let chained = chained_path(dir, name);
    if exists(&path) {
        match read(&path)? {
            Some(text) if is_ours(&text) => {}
            _ => return Ok(Outcome::NotOurs),
        }
        fs::remove_file(&path)
            .map_err(|e| Error::io(format!("cannot remove {}", path.display()), e))?;
    } else if !exists(&chained) {
        return Ok(Outcome::Absent);
    }
    if exists(&chained) {
        fs::rename(&chained, &path)
            .map_err(|e| Error::io(format!("cannot put back {}", chained.display()), e))?;
        return Ok(Outcome::Restored);
    }
    Ok(Outcome::Removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        let s = script("pre-commit", Some("/x/$(rm)/bsi"));
        assert!(s.contains("bsi='/x/$(rm)/bsi'\n"), "{s}");
        let s = script("pre-commit", Some("/it's/bsi"));
        assert!(s.contains("bsi='/it'\\''s/bsi'\n"), "{s}");
        assert!(script("pre-commit", None).contains("bsi=bsi\n"));
        assert!(is_ours(&s));
        assert!(!is_ours("#!/bin/sh\necho hi\n"));
    }
}
