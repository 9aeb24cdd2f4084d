//! What git hands the hooks that keep the doors into a branch besides
//! `git commit`: the updates of a reference transaction, the mark the
//! pre-commit hook leaves for the reference-transaction hook of the same
//! git command (so a commit is judged once), and which operation is under
//! way when an update is refused (so the message names its `--abort`).
//! Parsing is pure; the mark and the state are files of the git directory.

use std::path::Path;

use crate::git::Oid;

/// The updates of a reference transaction, as git writes them on the
/// hook's stdin.
pub mod transaction {
    use super::*;

    /// One `OLD NEW REFNAME` line; a zero id is `None` (created, deleted).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Update {
        pub old: Option<Oid>,
        pub new: Option<Oid>,
        pub name: String,
    }

    impl Update {
        /// Whether the update moves or creates a branch (`refs/heads/*`):
        /// the only updates that can land commits on one.
        pub fn lands_on_branch(&self) -> bool {
            self.new.is_some() && self.name.starts_with("refs/heads/")
        }
    }

    /// The updates of `input`; lines that are not updates are skipped.
    pub fn parse(input: &str) -> Vec<Update> {
        let id = |w: &str| Oid::from_str(w).ok().filter(|o| !o.is_zero());
        input
            .lines()
            .filter_map(|l| {
                let mut w = l.split(' ');
                let (old, new, name) = (w.next()?, w.next()?, w.next()?);
                if old.len() < 40 || new.len() < 40 || name.is_empty() {
                    return None;
                }
                Some(Update {
                    old: id(old),
                    new: id(new),
                    name: name.to_string(),
                })
            })
            .collect()
    }

    /// The operation under way in a git directory, as its state files say.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum UnderWay {
        CherryPick,
        Revert,
        Rebase,
        Am,
        Merge,
        /// None known: a single revert, `git update-ref`, `git reset`…
        Other,
    }

    impl UnderWay {
        /// The command that puts the index and work tree back as the branch
        /// has them; `None` when nothing is under way (a commit made with
        /// `--no-verify`, a single revert, `git update-ref`): the index
        /// holds the user's work, which only they may drop.
        pub fn abort(self) -> Option<&'static str> {
            match self {
                UnderWay::CherryPick => Some("git cherry-pick --abort"),
                UnderWay::Revert => Some("git revert --abort"),
                UnderWay::Rebase => Some("git rebase --abort"),
                UnderWay::Am => Some("git am --abort"),
                UnderWay::Merge => Some("git merge --abort"),
                UnderWay::Other => None,
            }
        }

        /// The git command to name for running it again.
        pub fn command(self) -> &'static str {
            match self {
                UnderWay::CherryPick => "cherry-pick",
                UnderWay::Revert => "revert",
                UnderWay::Rebase => "rebase",
                UnderWay::Am => "am",
                UnderWay::Merge => "merge",
                UnderWay::Other => "<command>",
            }
        }
    }

    /// What is under way in `git_dir`.
    pub fn under_way(git_dir: &Path) -> UnderWay {
        let has = |f: &str| git_dir.join(f).exists();
        if has("rebase-apply/applying") {
            UnderWay::Am
        } else if has("rebase-merge") || has("rebase-apply") {
            UnderWay::Rebase
        } else if has("CHERRY_PICK_HEAD") {
            UnderWay::CherryPick
        } else if has("REVERT_HEAD") {
            UnderWay::Revert
        } else if has("MERGE_HEAD") {
            UnderWay::Merge
        } else {
            UnderWay::Other
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn updates_are_read_and_branches_told_apart() {
            let z = "0".repeat(40);
            let a = "1".repeat(40);
            let input = format!(
                "{z} {a} HEAD\n{a} {a} refs/heads/main\n{a} {z} refs/heads/gone\n{z} {a} refs/remotes/o/x\nbroken\n"
            );
            let u = parse(&input);
            assert_eq!(u.len(), 4);
            assert_eq!(u[0].old, None);
            assert!(!u[0].lands_on_branch());
            assert!(u[1].lands_on_branch());
            assert!(!u[2].lands_on_branch(), "a deletion lands nothing");
            assert!(!u[3].lands_on_branch());
        }
    }
}

/// The mark the pre-commit (or pre-merge-commit) hook leaves when it
/// passes a commit: the git command's process and the HEAD it judged
/// against. The reference-transaction hook of that same command takes it
/// and does not judge that commit again.
pub mod judged {
    use super::*;

    const FILE: &str = "bsi-judged";

    /// The process that runs the hook: git, which execs bsi's script.
    fn git_pid() -> Option<u32> {
        #[cfg(unix)]
        {
            Some(std::os::unix::process::parent_id())
        }
        #[cfg(not(unix))]
        {
            None
        }
    }

    /// Leaves the mark: this git command judged a commit on `head`.
    pub fn record(git_dir: &Path, head: Option<Oid>) {
        let Some(pid) = git_pid() else { return };
        let head = head.map_or_else(|| "none".to_string(), |h| h.to_string());
        let _ = std::fs::write(git_dir.join(FILE), format!("{pid} {head}\n"));
    }

    /// Takes the mark if this git command left it: the HEAD its pre-commit
    /// judged against (`Some(None)` on an unborn branch). A mark of another
    /// command is stale: it is dropped.
    pub fn take(git_dir: &Path) -> Option<Option<Oid>> {
        let pid = git_pid()?;
        let path = git_dir.join(FILE);
        let text = std::fs::read_to_string(&path).ok()?;
        let _ = std::fs::remove_file(&path);
        let (p, head) = text.trim().split_once(' ')?;
        if p.parse::<u32>().ok()? != pid {
            return None;
        }
        Some(Oid::from_str(head).ok())
    }
}
