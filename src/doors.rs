//! What git hands the hooks that keep the doors into a branch besides
//! `git commit`: the updates of a reference transaction, the mark the
//! pre-commit hook leaves for the reference-transaction hook of the same
//! git command (so a commit is judged once), and which operation is under
//! way when an update is refused (so the message names its `--abort`), and
//! the fresh view of the claims a door fetches before it judges.
//! Parsing and wording are pure; the marks and the state are files of the
//! git directory.

use std::path::Path;

use bsi_core::api::git::Oid;

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
/// judges a commit: the git command's process, the HEAD it judged against,
/// its verdict (the exit code) and whether the commit is plain — no merge
/// under way, so its parents are that HEAD (or, amended, the HEAD's own).
/// The reference-transaction hook of that same command takes a passing
/// mark and does not judge that commit again — bsi's script takes a plain
/// one in the shell, without starting bsi (see
/// [`githooks`](crate::githooks)); a pre-commit hook run a second time by
/// that same command (a hook manager that runs bsi's script and its own
/// call of bsi) answers the verdict without saying it again.
pub mod judged {
    use super::*;

    /// The mark's file in the git directory of the work tree.
    pub const FILE: &str = "bsi-judged";

    /// The mark's last word when the commit judged is plain.
    pub const PLAIN: &str = "plain";

    /// The git command that runs the hook, as `PID@START`: the nearest
    /// ancestor named `git` (a hook manager puts its own processes between:
    /// husky's `sh` scripts, the pre-commit framework's Python, while bsi's
    /// own script execs bsi); the parent's pid where the process table
    /// cannot be read. None when the table shows no git above: a hook run
    /// by hand judges every time.
    pub(crate) fn git_process() -> Option<String> {
        let ancestors = bsi_core::api::platform::ancestors(12);
        if !ancestors.is_empty() {
            return nearest_git(&ancestors).map(str::to_string);
        }
        #[cfg(unix)]
        {
            Some(std::os::unix::process::parent_id().to_string())
        }
        #[cfg(not(unix))]
        {
            None
        }
    }

    /// The id of the nearest git process among `ancestors` (nearest
    /// first, each as its id and command name). Pure.
    pub fn nearest_git(ancestors: &[(String, String)]) -> Option<&str> {
        ancestors
            .iter()
            .find(|(_, name)| name == "git" || name.starts_with("git-"))
            .map(|(id, _)| id.as_str())
    }

    /// One mark, read.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Mark {
        /// The git command's process.
        pub git: String,
        /// The HEAD judged against; `None` on an unborn branch.
        pub head: Option<Oid>,
        /// The hook's exit code: 0 when it passed.
        pub code: u8,
        /// No merge was under way: the commit's parents are `head` (or,
        /// amended, `head`'s own), nothing else lands with it.
        pub plain: bool,
    }

    impl Mark {
        /// The mark as written in the file.
        pub fn render(&self) -> String {
            let head = self
                .head
                .map_or_else(|| "none".to_string(), |h| h.to_string());
            let plain = if self.plain {
                format!(" {PLAIN}")
            } else {
                String::new()
            };
            format!("{} {head} {}{plain}\n", self.git, self.code)
        }

        /// A mark read from the file; `None` when it is not one. Pure.
        pub fn parse(text: &str) -> Option<Mark> {
            let mut w = text.split_whitespace();
            let git = w.next()?.to_string();
            let head = w.next()?;
            let code = match w.next() {
                Some(c) => c.parse().ok()?,
                None => 0,
            };
            Some(Mark {
                git,
                head: Oid::from_str(head).ok(),
                code,
                plain: w.next() == Some(PLAIN),
            })
        }
    }

    /// Leaves the mark: this git command judged a commit on `head`, with
    /// the exit code `code`; `plain` when no merge is under way.
    pub fn record(git_dir: &Path, head: Option<Oid>, code: u8, plain: bool) {
        let Some(git) = git_process() else { return };
        let mark = Mark {
            git,
            head,
            code,
            plain,
        };
        let _ = std::fs::write(git_dir.join(FILE), mark.render());
    }

    /// The exit code an earlier pre-commit hook of this same git command
    /// reached on `head`, if one ran: the same index, judged already.
    pub fn earlier(git_dir: &Path, head: Option<Oid>) -> Option<u8> {
        let text = std::fs::read_to_string(git_dir.join(FILE)).ok()?;
        let mark = Mark::parse(&text)?;
        (mark.head == head && mark.git == git_process()?).then_some(mark.code)
    }

    /// Takes the mark if this git command left it passing: the HEAD its
    /// pre-commit judged against (`Some(None)` on an unborn branch). A mark
    /// of another command is stale: it is dropped.
    pub fn take(git_dir: &Path) -> Option<Option<Oid>> {
        let path = git_dir.join(FILE);
        let text = std::fs::read_to_string(&path).ok()?;
        let _ = std::fs::remove_file(&path);
        let mark = Mark::parse(&text)?;
        (mark.code == 0 && mark.git == git_process()?).then_some(mark.head)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_git_command_is_found_above_a_hook_manager() {
            let id = |s: &str| s.to_string();
            // husky: bsi <- sh .husky/pre-commit <- sh stub <- git commit.
            let husky = [
                (id("30@9"), id("sh")),
                (id("20@8"), id("sh")),
                (id("10@7"), id("git")),
                (id("5@1"), id("bash")),
            ];
            assert_eq!(nearest_git(&husky), Some("10@7"));
            // bsi's own script execs bsi: git is the parent.
            assert_eq!(nearest_git(&husky[2..]), Some("10@7"));
            assert_eq!(nearest_git(&[(id("4@1"), id("python3"))]), None);
        }

        #[test]
        fn marks_are_read_back_and_older_ones_pass() {
            let head = Oid::from_str(&"a".repeat(40)).ok();
            let m = Mark {
                git: "10@7".into(),
                head,
                code: 3,
                plain: false,
            };
            assert_eq!(Mark::parse(&m.render()), Some(m));
            let plain = Mark {
                git: "10@7".into(),
                head: None,
                code: 0,
                plain: true,
            };
            assert_eq!(plain.render(), "10@7 none 0 plain\n");
            assert_eq!(Mark::parse(&plain.render()), Some(plain));
            let unborn = Mark::parse("10@7 none\n").expect("older mark");
            assert_eq!((unborn.head, unborn.code, unborn.plain), (None, 0, false));
            assert_eq!(Mark::parse("10@7"), None);
            assert_eq!(Mark::parse("10@7 none x"), None);
        }
    }
}

/// A fresh view at commit time: before a door judges a commit, it fetches
/// the registry branch alone from its remote, within a short bound
/// (`hook_fetch_timeout`), so a claim published elsewhere since the last
/// fetch is seen. When the remote is slow or gone, the commit is judged on
/// the view last fetched, and one line says so. Asked once per git command:
/// a cherry-pick of twenty commits fetches once.
pub mod fresh {
    use std::time::Duration;

    use chrono::{DateTime, FixedOffset};

    use super::*;
    use bsi_core::api::git_cli::{FetchError, Remote};
    use bsi_core::api::store::Brain;

    const FILE: &str = "bsi-fresh";

    /// How the view a door judges on stands against its remote.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Fresh {
        /// Nothing to fetch: no remote, or no remote registry branch this
        /// clone has ever fetched (a local brain, a remote without one).
        NoRemoteBranch,
        /// Asked already by an earlier hook of this same git command.
        AskedAlready,
        /// The remote-tracking copy is what the remote holds now: it was
        /// fetched, or found unchanged.
        Fresh,
        /// The remote could not be fetched within the bound: what git said.
        Older(String),
    }

    /// The one line said when the commit was judged on an older view:
    /// `remote` could not be fetched (`why`), the view is as fetched
    /// `age` ago (unknown when `None`). Pure.
    pub fn older_line(remote: &Remote, why: &str, age: Option<chrono::Duration>) -> String {
        let when = match age {
            Some(a) => format!(
                "as fetched {} ago",
                bsi_core::ttl::format_duration(a.max(chrono::Duration::zero()))
            ),
            None => "as this clone last fetched them".to_string(),
        };
        format!(
            "bsi: warning: {} could not be fetched now ({why}): judged against the claims {when}, so a claim opened elsewhere since then is not seen. Next: `{}` shows the claims once {} answers.",
            remote.label(),
            bsi_core::words::command_line(["bsi", "status"]),
            remote.name
        )
    }

    /// Brings the remote-tracking copy of the registry branch up to what
    /// `remote` holds, within `timeout`, once per git command. A remote on
    /// this machine whose branch is where the copy already points is not
    /// fetched: that is the answer a fetch would give.
    pub fn refresh(
        brain: &Brain,
        remote: Option<&Remote>,
        timeout: Duration,
        now: DateTime<FixedOffset>,
    ) -> Fresh {
        let Some(remote) = remote else {
            return Fresh::NoRemoteBranch;
        };
        let Some(tracking) = brain.git.ref_target(&remote.tracking_ref()) else {
            return Fresh::NoRemoteBranch;
        };
        let git_dir = brain.git.git_dir();
        let command = judged::git_process();
        if let Some(c) = &command {
            let mark = std::fs::read_to_string(git_dir.join(FILE)).unwrap_or_default();
            if mark.trim() == c {
                return Fresh::AskedAlready;
            }
        }
        let fresh = if bsi_core::api::git::local_remote::branch_tip(&brain.git, remote, timeout)
            == Some(tracking)
        {
            Fresh::Fresh
        } else {
            match bsi_core::api::git::local_remote::fetch(&brain.workdir, remote, false, timeout) {
                Ok(_) => Fresh::Fresh,
                // The branch is gone from the remote: the copy is what
                // there was to see.
                Err(FetchError::NoBranch) => Fresh::Fresh,
                Err(FetchError::Unreachable(why) | FetchError::Denied(why)) => Fresh::Older(why),
            }
        };
        if fresh == Fresh::Fresh {
            brain.heard_from_remote(now);
        }
        if let Some(c) = command {
            let _ = std::fs::write(git_dir.join(FILE), format!("{c}\n"));
        }
        fresh
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_older_view_is_said_in_one_line_with_its_age_and_what_to_run() {
            let r = Remote {
                name: "origin".into(),
                branch: "brain-index".into(),
            };
            let line = older_line(&r, "gone", Some(chrono::Duration::minutes(90)));
            assert!(!line.contains('\n'), "{line}");
            assert!(
                line.starts_with(
                    "bsi: warning: origin/brain-index could not be fetched now (gone)"
                ),
                "{line}"
            );
            assert!(line.contains("as fetched 1h30m ago"), "{line}");
            assert!(line.contains("`bsi status`"), "{line}");
            let unknown = older_line(&r, "gone", None);
            assert!(
                unknown.contains("as this clone last fetched them"),
                "{unknown}"
            );
        }
    }
}
