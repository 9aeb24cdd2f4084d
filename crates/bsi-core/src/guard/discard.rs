//! Moves that take uncommitted work out of the work tree — `git stash`,
//! `git reset --hard`, `git clean -f`, a forced checkout or switch — read
//! as edits: each uncommitted change they would take away is an edit from
//! the file as it is to what the move leaves there, judged like any other
//! edit, so a move that would take another session's uncommitted work in
//! its claims out of the files is refused like an edit of it. Pure: the
//! move, the work tree's changes and the paths of the ones that are the
//! session's own in; what each change becomes, and the narrower form of the
//! move that leaves the others' work alone, out.

use super::Finding;
use super::edit::Target;

/// A move that discards uncommitted work, as its command asked for it.
/// Paths are relative to the work tree root, with `/`; an empty list is
/// the whole work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Discard {
    /// `git stash [push|save]`: tracked changes back to HEAD (the index's
    /// text with `--keep-index`), untracked files too with `-u`/`-a`.
    Stash {
        untracked: bool,
        keep_index: bool,
        paths: Vec<String>,
    },
    /// `git reset --hard|--merge [REV]`: every tracked change back to HEAD
    /// (what moves the branch is the reference-transaction door's to judge).
    Reset { mode: String, rev: Option<String> },
    /// `git clean -f`: untracked files under `paths` (the directory it runs
    /// in when none is given, as git does).
    Clean { dirs: bool, paths: Vec<String> },
    /// `git checkout -f BRANCH`, `git switch --discard-changes BRANCH`:
    /// every tracked change thrown away.
    Switch {
        program: String,
        target: Option<String>,
    },
    /// `git restore [--staged] [--source REV] DIR`, `git checkout [REV] --
    /// DIR`: the tracked changes under folders put back as the index (or
    /// `REV`, or HEAD with `--staged`) has them.
    Restore {
        program: String,
        staged: bool,
        source: Option<String>,
        paths: Vec<String>,
    },
    /// `git merge|cherry-pick|revert|rebase|am --abort`: the operation
    /// undone, what it staged thrown away (`merge`, `cherry-pick`,
    /// `revert`: git's `reset --merge`, which keeps changes not staged) or
    /// every tracked change (`rebase`, `am`: a hard reset).
    Abort { program: String },
}

/// What a change becomes under a move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Becomes {
    /// The file's text at HEAD (nothing, for a file HEAD lacks).
    Head,
    /// The index's text of the file.
    Index,
    /// The file is removed.
    Gone,
}

/// One uncommitted change of the work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uncommitted {
    /// Relative to the work tree root, with `/`.
    pub path: String,
    /// Neither HEAD nor the index has it.
    pub untracked: bool,
    /// The index has it otherwise than HEAD.
    pub staged: bool,
}

impl Discard {
    /// The command as it was read, for the refusal (`git stash -u`).
    pub fn said(&self) -> String {
        match self {
            Discard::Stash { untracked, .. } if *untracked => "`git stash -u`".into(),
            Discard::Stash { .. } => "`git stash`".into(),
            Discard::Reset { mode, .. } => format!("`git reset {mode}`"),
            Discard::Clean { .. } => "`git clean`".into(),
            Discard::Switch { program, .. } => format!("a forced `git {program}`"),
            Discard::Restore { program, .. } => format!("`git {program}` of a folder"),
            Discard::Abort { program } => format!("`git {program} --abort`"),
        }
    }

    /// What `change` becomes under the move; `None`: the move leaves it.
    pub fn takes(&self, change: &Uncommitted) -> Option<Becomes> {
        let under =
            |paths: &[String]| paths.is_empty() || paths.iter().any(|p| within(&change.path, p));
        match self {
            Discard::Stash {
                untracked,
                keep_index,
                paths,
            } => {
                if !under(paths) {
                    None
                } else if change.untracked {
                    untracked.then_some(Becomes::Gone)
                } else if *keep_index {
                    Some(Becomes::Index)
                } else {
                    Some(Becomes::Head)
                }
            }
            Discard::Reset { mode, .. } if mode == "--merge" => {
                (!change.untracked && change.staged).then_some(Becomes::Head)
            }
            Discard::Abort { program } if !matches!(program.as_str(), "rebase" | "am") => {
                (!change.untracked && change.staged).then_some(Becomes::Head)
            }
            Discard::Reset { .. } | Discard::Switch { .. } | Discard::Abort { .. } => {
                (!change.untracked).then_some(Becomes::Head)
            }
            Discard::Restore {
                staged,
                source,
                paths,
                ..
            } => {
                if change.untracked || !under(paths) {
                    None
                } else if *staged || source.is_some() {
                    Some(Becomes::Head)
                } else {
                    Some(Becomes::Index)
                }
            }
            Discard::Clean { paths, .. } => {
                (change.untracked && under(paths)).then_some(Becomes::Gone)
            }
        }
    }

    /// The move with the paths it names made the work tree's by `in_tree`
    /// (`None` for a path outside the work tree, which is not the move's to
    /// take there; `Some("")` for the work tree itself). `None` when it
    /// names paths and none lies in the work tree: it takes nothing there.
    pub fn in_tree(&self, in_tree: impl Fn(&str) -> Option<String>) -> Option<Discard> {
        let kept = |paths: &[String]| -> Option<Vec<String>> {
            let kept: Vec<String> = paths.iter().filter_map(|p| in_tree(p)).collect();
            (paths.is_empty() || !kept.is_empty()).then_some(kept)
        };
        Some(match self.clone() {
            Discard::Stash {
                untracked,
                keep_index,
                paths,
            } => Discard::Stash {
                untracked,
                keep_index,
                paths: kept(&paths)?,
            },
            Discard::Clean { dirs, paths } => Discard::Clean {
                dirs,
                paths: kept(&paths)?,
            },
            Discard::Restore {
                program,
                staged,
                source,
                paths,
            } => Discard::Restore {
                program,
                staged,
                source,
                paths: kept(&paths)?,
            },
            other => other,
        })
    }

    /// The forms of the move that leave every change but `own` in place,
    /// each a command's words, in the order to run them: `own` are paths
    /// as the shell the command is printed for names them. Empty when the
    /// move has no such form (nothing of its own to take).
    pub fn narrower(&self, own: &[String]) -> Vec<Vec<String>> {
        let words = |w: &[&str]| w.iter().map(ToString::to_string).collect::<Vec<String>>();
        let with_paths = |mut w: Vec<String>| {
            w.push("--".into());
            w.extend(own.iter().cloned());
            w
        };
        let restore = || restore_from_head(own.iter().cloned());
        let mut out = Vec::new();
        match self {
            Discard::Stash {
                untracked,
                keep_index,
                ..
            } => {
                if !own.is_empty() {
                    let mut w = words(&["git", "stash", "push"]);
                    if *untracked {
                        w.push("--include-untracked".into());
                    }
                    if *keep_index {
                        w.push("--keep-index".into());
                    }
                    out.push(with_paths(w));
                }
            }
            Discard::Reset { rev, .. } => {
                if !own.is_empty() {
                    out.push(restore());
                }
                // Moving the branch keeps uncommitted changes with `--keep`
                // (git refuses where they would be overwritten).
                if let Some(rev) = rev.as_deref().filter(|r| *r != "HEAD") {
                    out.push(words(&["git", "reset", "--keep", rev]));
                }
            }
            Discard::Clean { dirs, .. } => {
                if !own.is_empty() {
                    let mut w = words(&["git", "clean", "-f"]);
                    if *dirs {
                        w.push("-d".into());
                    }
                    out.push(with_paths(w));
                }
            }
            Discard::Restore {
                program,
                staged,
                source,
                ..
            } => {
                if !own.is_empty() {
                    let mut w = words(&["git", program]);
                    if program == "restore" {
                        if let Some(s) = source {
                            w.extend(["--source".to_string(), s.clone()]);
                        }
                        if *staged {
                            w.push("--staged".into());
                            w.push("--worktree".into());
                        }
                    } else if let Some(s) = source {
                        w.push(s.clone());
                    }
                    out.push(with_paths(w));
                }
            }
            Discard::Abort { program } => {
                // Forgetting the operation keeps the files as they are; the
                // session's own are then put back by hand.
                if !own.is_empty() {
                    out.push(restore());
                }
                out.push(words(&["git", program, "--quit"]));
            }
            Discard::Switch { program, target } => {
                if !own.is_empty() {
                    out.push(restore());
                }
                // Without the force, git carries the other changes along or
                // refuses: it never throws them away.
                if let Some(t) = target {
                    out.push(words(&["git", program, t]));
                }
            }
        }
        out
    }
}

/// `git restore --source HEAD --staged --worktree -- PATHS`: these files
/// put back as HEAD has them, in the index and the work tree, and nothing
/// else touched.
pub fn restore_from_head(paths: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut words: Vec<String> = [
        "git",
        "restore",
        "--source",
        "HEAD",
        "--staged",
        "--worktree",
        "--",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    words.extend(paths);
    words
}

/// `path` is `spec` or lies under it (a pathspec naming a folder or a
/// file; `.`/`""` the whole work tree).
pub fn within(path: &str, spec: &str) -> bool {
    let spec = spec.trim_end_matches('/');
    spec.is_empty()
        || spec == "."
        || path == spec
        || path
            .strip_prefix(spec)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The changes a refused move would take that lie in no other session's
/// claim (`findings`: what refused it): the session's own to take, by
/// their paths from the work tree root (`taken`: each change as the edit
/// decision judged it, with that path).
pub fn own_taken<'t>(taken: &'t [(Target, String)], findings: &[Finding<'_>]) -> Vec<&'t str> {
    let theirs: Vec<&str> = findings
        .iter()
        .filter_map(|f| match f {
            Finding::Claimed { path, .. } => Some(path.as_str()),
            _ => None,
        })
        .collect();
    taken
        .iter()
        .filter(|(t, _)| !theirs.contains(&t.rel.as_str()))
        .map(|(_, p)| p.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, untracked: bool) -> Uncommitted {
        Uncommitted {
            path: path.into(),
            untracked,
            staged: false,
        }
    }

    #[test]
    fn an_abort_takes_what_git_takes() {
        let unstaged = change("notes/a.md", false);
        let staged = Uncommitted {
            staged: true,
            ..unstaged.clone()
        };
        let merge = Discard::Abort {
            program: "merge".into(),
        };
        assert_eq!(merge.takes(&unstaged), None);
        assert_eq!(merge.takes(&staged), Some(Becomes::Head));
        let rebase = Discard::Abort {
            program: "rebase".into(),
        };
        assert_eq!(rebase.takes(&unstaged), Some(Becomes::Head));
        let restore = Discard::Restore {
            program: "restore".into(),
            staged: false,
            source: None,
            paths: vec!["notes".into()],
        };
        assert_eq!(restore.takes(&unstaged), Some(Becomes::Index));
        assert_eq!(restore.takes(&change("other/a.md", false)), None);
        assert_eq!(
            restore.narrower(&["notes/mine.md".into()]),
            vec![vec!["git", "restore", "--", "notes/mine.md"]]
        );
    }

    #[test]
    fn each_move_takes_what_git_takes() {
        let tracked = change("notes/a.md", false);
        let new = change("notes/new.md", true);
        let stash = Discard::Stash {
            untracked: false,
            keep_index: false,
            paths: vec![],
        };
        assert_eq!(stash.takes(&tracked), Some(Becomes::Head));
        assert_eq!(stash.takes(&new), None);
        let stash_u = Discard::Stash {
            untracked: true,
            keep_index: true,
            paths: vec!["notes".into()],
        };
        assert_eq!(stash_u.takes(&tracked), Some(Becomes::Index));
        assert_eq!(stash_u.takes(&new), Some(Becomes::Gone));
        assert_eq!(stash_u.takes(&change("notesx/a.md", false)), None);
        let clean = Discard::Clean {
            dirs: true,
            paths: vec!["notes/".into()],
        };
        assert_eq!(clean.takes(&tracked), None);
        assert_eq!(clean.takes(&new), Some(Becomes::Gone));
        let reset = Discard::Reset {
            mode: "--hard".into(),
            rev: None,
        };
        assert_eq!(reset.takes(&tracked), Some(Becomes::Head));
        assert_eq!(reset.takes(&new), None);
    }

    #[test]
    fn the_narrower_form_names_only_the_own_paths() {
        let own = vec!["notes/mine.md".to_string()];
        let stash = Discard::Stash {
            untracked: true,
            keep_index: false,
            paths: vec![],
        };
        assert_eq!(
            stash.narrower(&own),
            vec![vec![
                "git",
                "stash",
                "push",
                "--include-untracked",
                "--",
                "notes/mine.md"
            ]]
        );
        assert!(stash.narrower(&[]).is_empty());
        let reset = Discard::Reset {
            mode: "--hard".into(),
            rev: Some("HEAD~1".into()),
        };
        assert_eq!(
            reset.narrower(&own),
            vec![
                vec![
                    "git",
                    "restore",
                    "--source",
                    "HEAD",
                    "--staged",
                    "--worktree",
                    "--",
                    "notes/mine.md"
                ],
                vec!["git", "reset", "--keep", "HEAD~1"]
            ]
        );
        let switch = Discard::Switch {
            program: "checkout".into(),
            target: Some("main".into()),
        };
        assert_eq!(switch.narrower(&[]), vec![vec!["git", "checkout", "main"]]);
    }

    #[test]
    fn a_pathspec_covers_its_folder_only() {
        assert!(within("notes/a.md", "notes"));
        assert!(within("notes/a.md", "notes/"));
        assert!(within("notes/a.md", "notes/a.md"));
        assert!(within("notes/a.md", "."));
        assert!(!within("notes2/a.md", "notes"));
    }

    #[test]
    fn a_move_takes_only_the_paths_of_its_work_tree() {
        let stash = Discard::Stash {
            untracked: false,
            keep_index: false,
            paths: vec!["/w/a".into(), "/x/b".into()],
        };
        let in_w = |p: &str| p.strip_prefix("/w/").map(String::from);
        assert_eq!(
            stash.in_tree(in_w),
            Some(Discard::Stash {
                untracked: false,
                keep_index: false,
                paths: vec!["a".into()],
            })
        );
        // Paths named, none here: nothing taken here.
        let clean = Discard::Clean {
            dirs: true,
            paths: vec!["/x/b".into()],
        };
        assert_eq!(clean.in_tree(in_w), None);
        // No path: the whole work tree, as it was.
        let all = Discard::Clean {
            dirs: true,
            paths: Vec::new(),
        };
        assert_eq!(all.in_tree(in_w), Some(all.clone()));
        let reset = Discard::Reset {
            mode: "--hard".into(),
            rev: None,
        };
        assert_eq!(reset.in_tree(|_| None), Some(reset.clone()));
    }

    #[test]
    fn the_own_changes_are_those_in_no_other_sessions_claim() {
        use crate::claims::tests::claim;
        use crate::scope::Scope;
        let c = claim("s2", "agent", Scope::File("b.md".into()));
        let taken = vec![
            (Target::whole("a.md"), "brain/a.md".to_string()),
            (Target::whole("b.md"), "brain/b.md".to_string()),
        ];
        let findings = [Finding::Claimed {
            path: "b.md".into(),
            claim: &c,
            stale: false,
            region: None,
        }];
        assert_eq!(own_taken(&taken, &findings), ["brain/a.md"]);
        assert_eq!(own_taken(&taken, &[]), ["brain/a.md", "brain/b.md"]);
    }
}
