//! What a merge changes of its own: git's three-way rule, per file and per
//! section. Pure: the versions of a file in the merge base, the first
//! parent ("ours"), each other parent ("theirs") and the result in, what
//! the merger did out.
//!
//! A part of the file (the whole file, or the lines directly under one
//! heading) is the **merger's change** when
//!
//! - the result differs from the first parent there, unless the other
//!   parents brought that exact change: one parent changed the part
//!   relative to the merge base and the result is that parent's version of
//!   it, or the result is what git's three-way merge of the parents that
//!   changed the part gives (both sides' changes of a section on other
//!   lines; an octopus merge, parent after parent — where several parents
//!   changed the part, only that); or
//! - the result equals the first parent there, the first parent did not
//!   change the part, and another parent did: the merge reverts that
//!   parent's work.
//!
//! So a clean merge of others' committed work changes nothing of the
//! merger's, and taking a whole file from a side that did not change a
//! section (`git checkout feat -- plan.md` during a merge) is the merger's
//! change of that section: it reverts the other side's work.

use std::collections::HashSet;

use crate::changes::{TextChange, Touched, merge3, part_lines, text_change};

/// The versions of a file another parent brings: the merge base of that
/// parent and the first parent, and that parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Other<T> {
    /// The file in the merge base.
    pub base: T,
    /// The file in the other parent.
    pub theirs: T,
}

/// Whether the merge changes a file of its own, comparing whole versions
/// (blob ids, or `None` for an absent file): the three-way rule on the
/// whole file. A result that is the first parent's version while another
/// parent changed the file to something else drops that parent's change:
/// the merger's, whether or not the first parent changed it too.
pub fn changes_file<T: PartialEq>(ours: &T, others: &[Other<T>], result: &T) -> bool {
    if result != ours {
        !others
            .iter()
            .any(|o| o.theirs != o.base && &o.theirs == result)
    } else {
        others
            .iter()
            .any(|o| o.theirs != o.base && &o.theirs != ours)
    }
}

/// A section by the key of its innermost heading; `None` is the preamble.
type Part = Option<String>;

/// The parts whose own lines a change touches (each run by the innermost
/// heading holding it).
fn parts(c: &TextChange) -> HashSet<Part> {
    c.touched.iter().map(Touched::part).collect()
}

/// What a merge changes of its own in a markdown file, from the texts of
/// its versions (an absent file is `""`). `None` when the merge changes
/// nothing of its own in the file; otherwise the change from the first
/// parent to the result, keeping only the runs of lines in parts the merger
/// changed, with the runs that show a reverted part (numbered in the result
/// where it has lines of its own there, else in that other parent).
pub fn text_change_of_merge(
    ours: &str,
    others: &[Other<&str>],
    result: &str,
) -> Option<TextChange> {
    let from_ours = text_change(ours, result);
    let changed = parts(&from_ours);
    let sides: Vec<(HashSet<Part>, TextChange)> = others
        .iter()
        .map(|o| {
            let theirs_changed = parts(&text_change(o.base, o.theirs));
            (theirs_changed, text_change(o.theirs, result))
        })
        .collect();
    let mut mergers: HashSet<Part> = HashSet::new();
    for p in &changed {
        // One parent changed the part: the result is its version, or git's
        // merge of it with the first parent's. Several did (an octopus):
        // the result is git's merge of them all — one parent's version
        // alone drops the others' work.
        let changers = sides
            .iter()
            .filter(|(theirs, _)| theirs.contains(p))
            .count();
        let one_side = changers == 1
            && sides
                .iter()
                .any(|(theirs, to_result)| theirs.contains(p) && !parts(to_result).contains(p));
        let brought = one_side || brought_together(ours, others, &sides, p, result);
        if !brought {
            mergers.insert(p.clone());
        }
    }
    // Parts another parent changed whose change the result does not keep:
    // reverted — the result kept as the first parent has them where only
    // that parent changed them, and just as much where both did and the
    // merge took the first parent's side (`git checkout --ours`, `-s
    // ours`, `-X ours`): what a merge takes away is its own change.
    let mut reverted: Vec<(Part, usize)> = Vec::new();
    for (i, (o, (theirs, _))) in others.iter().zip(&sides).enumerate() {
        for p in theirs {
            if !mergers.contains(p) && !keeps(o, p.as_deref(), result) {
                mergers.insert(p.clone());
                reverted.push((p.clone(), i));
            }
        }
    }
    if mergers.is_empty() {
        return None;
    }
    let mut touched: Vec<_> = from_ours
        .touched
        .iter()
        .filter(|t| mergers.contains(&t.part()))
        .cloned()
        .collect();
    for (p, i) in reverted {
        let runs: Vec<_> = sides[i]
            .1
            .touched
            .iter()
            .filter(|t| t.part() == p)
            .collect();
        let new_side: Vec<_> = runs
            .iter()
            .filter(|t| t.side == crate::changes::Side::New)
            .collect();
        if new_side.is_empty() {
            touched.extend(runs.into_iter().cloned());
        } else {
            touched.extend(new_side.into_iter().map(|t| (*t).clone()));
        }
    }
    Some(TextChange {
        touched,
        old: from_ours.old,
        new: from_ours.new,
    })
}

/// Whether the result keeps what the other parent `o` changed of the part
/// `p`: that parent's version of it, or a version git's three-way merge
/// of the result with that parent leaves as it is (every line the parent
/// added or removed there, added or removed in the result too).
fn keeps(o: &Other<&str>, p: Option<&str>, result: &str) -> bool {
    let (base, theirs, now) = (
        part_lines(o.base, p),
        part_lines(o.theirs, p),
        part_lines(result, p),
    );
    theirs == now || merge3(&base, &now, &theirs).is_some_and(|m| m == now)
}

/// Whether the part `p` of the result is what git's merge gives when the
/// parents that changed it are merged into the first parent one after the
/// other (as an octopus merge does; for one such parent, the three-way
/// merge of the two sides' changes): those parents brought it together,
/// the merger changed nothing of it.
fn brought_together(
    ours: &str,
    others: &[Other<&str>],
    sides: &[(HashSet<Part>, TextChange)],
    p: &Part,
    result: &str,
) -> bool {
    let p = p.as_deref();
    let mut merged = part_lines(ours, p);
    let mut any = false;
    for (o, (theirs_changed, _)) in others.iter().zip(sides) {
        if !theirs_changed.contains(&p.map(str::to_string)) {
            continue;
        }
        any = true;
        match merge3(&part_lines(o.base, p), &merged, &part_lines(o.theirs, p)) {
            Some(m) => merged = m,
            None => return false,
        }
    }
    any && merged == part_lines(result, p)
}

/// What a merge git concludes by itself merges, from the words of git's
/// `GIT_REFLOG_ACTION` (`merge [OPTIONS] NAME...`, as typed, unquoted):
/// the names after the options, or `None` for anything but a merge (`pull`
/// merges `FETCH_HEAD`). The words of a message given with `-m` may come
/// out as names; a name that is no commit is dropped by the caller.
pub fn merged_names(reflog_action: &str) -> Option<Vec<String>> {
    let mut words = reflog_action.split_whitespace();
    if words.next()? != "merge" {
        return None;
    }
    const TAKES_NEXT: &[&str] = &[
        "--into-name",
        "--message",
        "--file",
        "--strategy",
        "--strategy-option",
        "--cleanup",
    ];
    let mut out = Vec::new();
    let mut skip = false;
    let mut options = true;
    for w in words {
        if skip {
            skip = false;
        } else if options && w == "--" {
            options = false;
        } else if options && w.starts_with("--") {
            skip = TAKES_NEXT.contains(&w);
        } else if options && w.starts_with('-') && w.len() > 1 {
            // A cluster (`-qm`): the first of m, F, s, X takes the rest of
            // the word, or the next word when it ends the cluster.
            if let Some(i) = w.find(['m', 'F', 's', 'X']) {
                skip = i == w.len() - 1;
            }
        } else {
            out.push(w.to_string());
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_a_merge_was_given() {
        let n = |a: &str| merged_names(a);
        assert_eq!(n("merge feat"), Some(vec!["feat".into()]));
        assert_eq!(
            n("merge -q --no-edit -m msg -s ort -Xours a b"),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(n("merge -qm msg -- c"), Some(vec!["c".into()]));
        assert_eq!(
            n("merge --strategy ort --into-name x d"),
            Some(vec!["d".into()])
        );
        assert_eq!(n("pull origin main"), None);
        assert_eq!(n(""), None);
    }

    const BASE: &str = "# Plan\n## Goals\ng\n## Risks\nr\n";

    fn keys(c: &Option<TextChange>) -> Vec<String> {
        c.as_ref().map(TextChange::keys).unwrap_or_default()
    }

    #[test]
    fn a_clean_merge_of_others_work_is_nobodys_change() {
        let ours = BASE.replace("\nr\n", "\nr, ours\n");
        let theirs = BASE.replace("\ng\n", "\ng, theirs\n");
        let result = ours.replace("\ng\n", "\ng, theirs\n");
        let o = [Other {
            base: BASE,
            theirs: theirs.as_str(),
        }];
        assert_eq!(text_change_of_merge(&ours, &o, &result), None);
        // Whole files: the result is the other side's version.
        assert!(!changes_file(&1, &[Other { base: 1, theirs: 2 }], &2));
        assert!(!changes_file(&1, &[Other { base: 0, theirs: 0 }], &1));
    }

    #[test]
    fn an_octopus_of_others_work_is_nobodys_change() {
        let base = "# Plan\n## Goals\ng1\n\ng2\n## Risks\nr\n";
        let b1 = base.replace("g1\n", "g1, b1\n");
        let b2 = base.replace("g2\n", "g2, b2\n");
        let b3 = base.replace("\nr\n", "\nr, b3\n");
        let all = b1.replace("g2\n", "g2, b2\n").replace("\nr\n", "\nr, b3\n");
        let o: Vec<Other<&str>> = [&b1, &b2, &b3]
            .iter()
            .map(|t| Other {
                base,
                theirs: t.as_str(),
            })
            .collect();
        // Two branches changed Goals, on other lines: git's merge of both.
        assert_eq!(text_change_of_merge(base, &o, &all), None);
        // A line of the merger's own in Goals besides: Goals is its change.
        let own = all.replace("g1, b1\n", "g1, b1, mine\n");
        assert_eq!(
            keys(&text_change_of_merge(base, &o, &own)),
            ["goals", "plan"]
        );
        // Only b1's Goals kept: b2's work reverted, Goals is the merger's.
        let dropped = b1.replace("\nr\n", "\nr, b3\n");
        assert_eq!(
            keys(&text_change_of_merge(base, &o, &dropped)),
            ["goals", "plan"]
        );
        // Everything dropped (`-s ours`): Goals and Risks reverted.
        assert_eq!(
            keys(&text_change_of_merge(base, &o, base)),
            ["goals", "plan", "risks"]
        );
        // Two parents, both sides changing Goals on other lines: the same.
        let ours = base.replace("g2\n", "g2, ours\n");
        let result = b1.replace("g2\n", "g2, ours\n");
        let one = [Other {
            base,
            theirs: b1.as_str(),
        }];
        assert_eq!(text_change_of_merge(&ours, &one, &result), None);
    }

    #[test]
    fn taking_the_other_side_whole_reverts_ours() {
        // Ours changed Goals; theirs changed Risks; the result is theirs.
        let ours = BASE.replace("\ng\n", "\ng, s1\n");
        let theirs = BASE.replace("\nr\n", "\nr, s2\n");
        let o = [Other {
            base: BASE,
            theirs: theirs.as_str(),
        }];
        let c = text_change_of_merge(&ours, &o, &theirs);
        assert_eq!(keys(&c), vec!["goals", "plan"]);
        // Whole files: theirs did change the file, so by blobs alone it is
        // brought; sections tell the difference.
        assert!(!changes_file(&1, &[Other { base: 0, theirs: 2 }], &2));
    }

    #[test]
    fn keeping_ours_where_only_theirs_changed_reverts_theirs() {
        let theirs = BASE.replace("\ng\n", "\ng, s1\n");
        let o = [Other {
            base: BASE,
            theirs: theirs.as_str(),
        }];
        let c = text_change_of_merge(BASE, &o, BASE);
        assert_eq!(keys(&c), vec!["goals", "plan"]);
        assert!(changes_file(&0, &[Other { base: 0, theirs: 2 }], &0));
    }

    #[test]
    fn keeping_ours_where_both_changed_drops_theirs_and_is_the_mergers() {
        let ours = BASE.replace("\ng\n", "\ng, s1\n");
        let theirs = BASE.replace("\ng\n", "\ng, s3\n");
        let o = [Other {
            base: BASE,
            theirs: theirs.as_str(),
        }];
        // `git checkout --ours`, `-s ours`, `-X ours` on a conflict.
        let c = text_change_of_merge(&ours, &o, &ours);
        assert_eq!(keys(&c), vec!["goals", "plan"]);
        assert!(changes_file(&1, &[Other { base: 0, theirs: 2 }], &1));
        // Both sides made the same change: nothing of theirs is dropped.
        let same = [Other {
            base: BASE,
            theirs: ours.as_str(),
        }];
        assert_eq!(text_change_of_merge(&ours, &same, &ours), None);
        assert!(!changes_file(&1, &[Other { base: 0, theirs: 1 }], &1));
        // Theirs changed another line of Goals, ours kept whole (`-s
        // ours`): dropped; git's merge of both: brought.
        let base = "# Plan\n## Goals\ng1\n\ng2\n## Risks\nr\n";
        let ours = base.replace("g1\n", "g1, s1\n");
        let theirs = base.replace("g2\n", "g2, s3\n");
        let both = ours.replace("g2\n", "g2, s3\n");
        let o = [Other {
            base,
            theirs: theirs.as_str(),
        }];
        assert_eq!(
            keys(&text_change_of_merge(&ours, &o, &ours)),
            ["goals", "plan"]
        );
        assert_eq!(text_change_of_merge(&ours, &o, &both), None);
        // Ours kept where theirs changed nothing: nobody's change.
        let risks = base.replace("\nr\n", "\nr, s3\n");
        let o = [Other {
            base,
            theirs: risks.as_str(),
        }];
        let merged = ours.replace("\nr\n", "\nr, s3\n");
        assert_eq!(text_change_of_merge(&ours, &o, &merged), None);
    }

    #[test]
    fn a_resolution_of_its_own_is_the_mergers() {
        let ours = BASE.replace("\ng\n", "\ng, ours\n");
        let theirs = BASE.replace("\ng\n", "\ng, theirs\n");
        let result = BASE.replace("\ng\n", "\ng, both\n");
        let o = [Other {
            base: BASE,
            theirs: theirs.as_str(),
        }];
        assert_eq!(
            keys(&text_change_of_merge(&ours, &o, &result)),
            vec!["goals", "plan"]
        );
        // Taking theirs where both changed: git's rule, brought by theirs.
        assert_eq!(text_change_of_merge(&ours, &o, &theirs), None);
        assert!(changes_file(&1, &[Other { base: 0, theirs: 2 }], &3));
    }
}
