//! What an agent's edit touches, as the edit decision ([`super::edit`])
//! judges it: each file the tool's call changes, reduced to where it lies
//! (a brain path, the work tree itself, or outside), what it holds now,
//! what it holds after and how the tool changes it, made into the
//! decision's [`Target`]s; and the work tree each edited file is judged in.
//! Pure: the door reads the files and asks git where their work trees are.

use std::path::{Path, PathBuf};

use super::edit::Target;

/// What a file holds on disk now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Current {
    /// There is no file.
    Missing,
    /// Its text.
    Text(String),
    /// It cannot be read, or is not UTF-8: judged whole.
    Unreadable,
}

impl Current {
    /// What a read of the file (`std::fs::read`) says it holds.
    pub fn of(read: std::io::Result<Vec<u8>>) -> Current {
        match read {
            Ok(bytes) => String::from_utf8(bytes).map_or(Current::Unreadable, Current::Text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Current::Missing,
            Err(_) => Current::Unreadable,
        }
    }

    /// Its text, when it has one.
    pub fn text(&self) -> Option<&str> {
        match self {
            Current::Text(t) => Some(t),
            _ => None,
        }
    }

    /// The old side for the guard: an absent file is empty; `None`, an
    /// unreadable one, is judged whole.
    pub fn old(&self) -> Option<String> {
        match self {
            Current::Missing => Some(String::new()),
            Current::Text(t) => Some(t.clone()),
            Current::Unreadable => None,
        }
    }
}

/// Where an edited path lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A brain file: its path from the brain root, `/` between its parts.
    Brain(String),
    /// The work tree itself (`git checkout .`, `rm -r .`).
    Root,
    /// Outside the brain: not the guard's.
    Outside,
}

/// How a tool's call changes a file: what of its operation the decision
/// needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// Known strings replaced in place: a candidate for a section claim.
    Replace,
    /// Text written whose result is computed (a whole write, a patch, an
    /// insert).
    Change,
    /// Deleted: it may be a folder, and what is claimed under it goes too.
    Delete,
    /// Moved to `to` (`Outside` there: out of the brain), which holds
    /// `to_now` now, changed on the way: the source goes, the destination
    /// gets the text.
    Move {
        /// Where it lands.
        to: Place,
        /// What the destination holds now.
        to_now: Current,
    },
    /// Rewritten by a shell command with text bsi cannot know (`by`:
    /// `` `sed -i` ``): every section of it counts as changed.
    Rewrite {
        /// What rewrites it.
        by: String,
    },
    /// Lines appended at its end.
    Append,
    /// A change the tool tells at file level (a notebook cell).
    WholeFile,
}

impl Shape {
    /// It may be a folder going away or overwritten.
    fn deep(&self) -> bool {
        matches!(
            self,
            Shape::Rewrite { .. } | Shape::Delete | Shape::Move { .. }
        )
    }
}

/// One file a tool's call touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    /// Where it lies.
    pub at: Place,
    /// What it holds now.
    pub now: Current,
    /// What it holds after: `Some(None)` gone, `None` not known (judged
    /// whole). For a move, the text that lands at the destination.
    pub after: Option<Option<String>>,
    /// How the call changes it.
    pub shape: Shape,
}

/// Whether a brain path lies in the git directory: never a brain file.
pub fn in_git_dir(rel: &str) -> bool {
    rel == ".git" || rel.starts_with(".git/")
}

/// The targets of the edit decision for what a call touches: the paths
/// inside the brain with their text before and after (a move's source gone
/// and its destination written; the work tree itself, for a move that
/// takes the whole of it; nothing in the git directory).
pub fn targets(touches: &[Touch]) -> Vec<Target> {
    let mut out = Vec::new();
    for t in touches {
        let rel = match &t.at {
            Place::Brain(rel) => rel.clone(),
            // The work tree itself: every claim in it, found by
            // [`super::edit::under_folders`].
            Place::Root if t.shape.deep() => {
                out.push(Target {
                    deep: true,
                    ..Target::whole("")
                });
                continue;
            }
            Place::Root | Place::Outside => continue,
        };
        if let Shape::Move { to, to_now } = &t.shape {
            // The source is gone; the destination gets the text.
            if !in_git_dir(&rel) {
                out.push(Target {
                    old: t.now.old(),
                    new: Some(String::new()),
                    deep: true,
                    ..Target::whole(rel)
                });
            }
            if let Place::Brain(to_rel) = to
                && !in_git_dir(to_rel)
            {
                let (old, new) = match &t.after {
                    Some(Some(text)) => (to_now.old(), Some(text.clone())),
                    _ => (None, None),
                };
                out.push(Target {
                    old,
                    new,
                    deep: true,
                    ..Target::whole(to_rel.clone())
                });
            }
            continue;
        }
        if in_git_dir(&rel) {
            continue;
        }
        let (old, new) = match &t.after {
            Some(Some(text)) => (t.now.old(), Some(text.clone())),
            Some(None) => (t.now.old(), Some(String::new())),
            None => (None, None),
        };
        let shell = match &t.shape {
            Shape::Rewrite { by } => Some(format!("rewrites {rel} whole ({by})")),
            Shape::Append => Some(format!("appends to the end of {rel}")),
            Shape::WholeFile => Some(format!("names {rel} but not the lines it changes")),
            _ => None,
        };
        out.push(Target {
            old,
            new,
            replace: t.shape == Shape::Replace,
            shell,
            deep: matches!(t.shape, Shape::Rewrite { .. } | Shape::Delete),
            rel,
        });
    }
    out
}

/// A work tree: its root and its clone's common git directory, links
/// resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    /// The root of the work tree.
    pub top: PathBuf,
    /// The clone's common git directory.
    pub common: PathBuf,
}

/// Where an edited file lies, as the door found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The file's path, links resolved.
    pub real: PathBuf,
    /// The directory its brain is found from: the file's own (or the path
    /// itself, for a folder).
    pub dir: PathBuf,
    /// The work tree that directory is in.
    pub tree: Tree,
}

/// The edits grouped by the work tree their file is in, each group with
/// the directory its brain is found from, in the order first met: the
/// file's own directory (a work tree of the clone nested in another is its
/// own), except for a file of another repository nested in the event's
/// work tree `here` (a submodule), which stays the event's (`cwd`); edits
/// of files in no work tree (`None`) go with `cwd`.
pub fn by_work_tree<T>(
    cwd: &Path,
    here: Option<&Tree>,
    edits: Vec<(Option<Located>, T)>,
) -> Vec<(PathBuf, Vec<T>)> {
    let mut groups: Vec<(Option<PathBuf>, PathBuf, Vec<T>)> = Vec::new();
    for (at, e) in edits {
        let (key, dir) = match (at, here) {
            (Some(at), Some(here))
                if at.tree.common != here.common && at.real.starts_with(&here.top) =>
            {
                (Some(here.top.clone()), cwd.to_path_buf())
            }
            (Some(at), _) => (Some(at.tree.top), at.dir),
            (None, _) => (None, cwd.to_path_buf()),
        };
        match groups.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, _, group)) => group.push(e),
            None => groups.push((key, dir, vec![e])),
        }
    }
    groups.into_iter().map(|(_, dir, g)| (dir, g)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn touch(at: Place, now: Current, after: Option<Option<&str>>, shape: Shape) -> Touch {
        Touch {
            at,
            now,
            after: after.map(|a| a.map(String::from)),
            shape,
        }
    }

    fn brain(rel: &str) -> Place {
        Place::Brain(rel.into())
    }

    #[test]
    fn a_read_tells_missing_text_and_unreadable_apart() {
        use std::io::{Error, ErrorKind};
        assert_eq!(Current::of(Ok(b"a".to_vec())), Current::Text("a".into()));
        assert_eq!(Current::of(Ok(vec![0xff])), Current::Unreadable);
        assert_eq!(
            Current::of(Err(Error::from(ErrorKind::NotFound))),
            Current::Missing
        );
        assert_eq!(
            Current::of(Err(Error::from(ErrorKind::PermissionDenied))),
            Current::Unreadable
        );
        assert_eq!(Current::Missing.old(), Some(String::new()));
        assert_eq!(Current::Unreadable.old(), None);
    }

    #[test]
    fn a_replacement_is_judged_on_its_text_before_and_after() {
        let t = targets(&[touch(
            brain("plan.md"),
            Current::Text("a\n".into()),
            Some(Some("b\n")),
            Shape::Replace,
        )]);
        assert_eq!(
            t,
            [Target {
                old: Some("a\n".into()),
                new: Some("b\n".into()),
                replace: true,
                ..Target::whole("plan.md")
            }]
        );
    }

    #[test]
    fn a_delete_empties_the_file_and_may_be_a_folder() {
        let t = targets(&[touch(
            brain("notes"),
            Current::Unreadable,
            Some(None),
            Shape::Delete,
        )]);
        assert_eq!(
            t,
            [Target {
                new: Some(String::new()),
                deep: true,
                ..Target::whole("notes")
            }]
        );
    }

    #[test]
    fn a_shell_rewrite_is_judged_whole_and_says_how_it_was_read() {
        let t = targets(&[touch(
            brain("plan.md"),
            Current::Text("a".into()),
            None,
            Shape::Rewrite {
                by: "`sed -i`".into(),
            },
        )]);
        assert_eq!(t.len(), 1);
        assert_eq!((t[0].old.as_ref(), t[0].new.as_ref()), (None, None));
        assert_eq!(
            t[0].shell.as_deref(),
            Some("rewrites plan.md whole (`sed -i`)")
        );
        assert!(t[0].deep);
    }

    #[test]
    fn a_move_takes_the_source_away_and_writes_the_destination() {
        let t = targets(&[touch(
            brain("a.md"),
            Current::Text("x".into()),
            Some(Some("y")),
            Shape::Move {
                to: brain("b.md"),
                to_now: Current::Missing,
            },
        )]);
        assert_eq!(
            t,
            [
                Target {
                    old: Some("x".into()),
                    new: Some(String::new()),
                    deep: true,
                    ..Target::whole("a.md")
                },
                Target {
                    old: Some(String::new()),
                    new: Some("y".into()),
                    deep: true,
                    ..Target::whole("b.md")
                }
            ]
        );
        // Out of the brain, or into the git directory: only the source.
        for to in [Place::Outside, brain(".git/x")] {
            let t = targets(&[touch(
                brain("a.md"),
                Current::Missing,
                None,
                Shape::Move {
                    to,
                    to_now: Current::Missing,
                },
            )]);
            assert_eq!(t.len(), 1, "{t:?}");
        }
    }

    #[test]
    fn the_work_tree_itself_counts_only_for_what_may_take_a_folder() {
        let root = |shape| targets(&[touch(Place::Root, Current::Unreadable, None, shape)]);
        assert_eq!(
            root(Shape::Delete),
            [Target {
                deep: true,
                ..Target::whole("")
            }]
        );
        assert!(root(Shape::Replace).is_empty());
        assert!(root(Shape::Append).is_empty());
    }

    fn tree(top: &str) -> Tree {
        Tree {
            top: top.into(),
            common: format!("{top}/.git").into(),
        }
    }

    fn at(file: &str, tree: Tree) -> Option<Located> {
        let real = PathBuf::from(file);
        Some(Located {
            dir: real.parent().expect("a parent").to_path_buf(),
            real,
            tree,
        })
    }

    #[test]
    fn edits_go_to_the_work_tree_of_their_file_but_a_submodule_stays_the_events() {
        let cwd = Path::new("/b");
        let here = tree("/b");
        let groups = by_work_tree(
            cwd,
            Some(&here),
            vec![
                (at("/b/x.md", tree("/b")), 1),
                (at("/w/y.md", tree("/w")), 2),
                (at("/b/sub/z.md", tree("/b/sub")), 3),
                (None, 4),
                (at("/b/n/q.md", tree("/b")), 5),
            ],
        );
        assert_eq!(
            groups,
            [
                (PathBuf::from("/b"), vec![1, 3, 5]),
                (PathBuf::from("/w"), vec![2]),
                (PathBuf::from("/b"), vec![4]),
            ]
        );
    }

    fn any_place() -> impl Strategy<Value = Place> {
        prop_oneof![
            "(\\.git/)?[a-c]{1,2}(/[a-c]{1,2})?".prop_map(Place::Brain),
            Just(Place::Brain(".git".into())),
            Just(Place::Root),
            Just(Place::Outside),
        ]
    }

    fn any_shape() -> impl Strategy<Value = Shape> {
        prop_oneof![
            Just(Shape::Replace),
            Just(Shape::Change),
            Just(Shape::Delete),
            Just(Shape::Append),
            Just(Shape::WholeFile),
            Just(Shape::Rewrite { by: "`cp`".into() }),
            any_place().prop_map(|to| Shape::Move {
                to,
                to_now: Current::Missing
            }),
        ]
    }

    fn any_touch() -> impl Strategy<Value = Touch> {
        (
            any_place(),
            any_shape(),
            proptest::option::of(proptest::option::of("[ab\n]{0,4}")),
        )
            .prop_map(|(at, shape, after)| Touch {
                at,
                now: Current::Text("a\n".into()),
                after,
                shape,
            })
    }

    proptest! {
        /// Nothing in the git directory is a target, and every target is a
        /// brain path the call names (or the work tree itself, for what may
        /// take a folder).
        #[test]
        fn targets_are_the_brain_paths_the_call_names(touches in proptest::collection::vec(any_touch(), 0..6)) {
            let named: Vec<String> = touches
                .iter()
                .flat_map(|t| {
                    let to = match &t.shape {
                        Shape::Move { to: Place::Brain(r), .. } => Some(r.clone()),
                        _ => None,
                    };
                    let at = match &t.at {
                        Place::Brain(r) => Some(r.clone()),
                        _ => None,
                    };
                    at.into_iter().chain(to)
                })
                .collect();
            let out = targets(&touches);
            prop_assert!(out.len() <= 2 * touches.len());
            for t in &out {
                prop_assert!(!in_git_dir(&t.rel), "{:?}", t);
                prop_assert!(named.contains(&t.rel) || (t.rel.is_empty() && t.deep), "{:?}", t);
                // Of readable files, a text after comes with the text
                // before: a change is never judged on one side alone.
                prop_assert!(t.new.is_none() || t.old.is_some(), "{:?}", t);
            }
        }
    }
}
