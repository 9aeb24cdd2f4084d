//! What a change to a markdown file touches, from its old and new text.
//! Pure: two texts in, the touched places out.
//!
//! This is the one function that decides which sections a change touches,
//! whoever asks: the pre-commit hook (the index against HEAD), `bsi verify`
//! (a commit against its parent, or the work tree against HEAD) and an edit
//! hook inside an agent's tool (the file before and after the edit).
//!
//! The rule: a change belongs to a section when it falls in that section in
//! the old version **or** in the new one.
//!
//! - A removed line touches the sections that hold it in the old version.
//! - An added line touches the sections that hold it in the new version.
//! - A kept line whose sections differ between the versions (a heading was
//!   inserted, removed or renamed above it) touches the sections it left and
//!   the sections it joined.
//!
//! "The sections that hold a line" are its innermost heading and every
//! heading above it; a line before the first heading belongs to the file
//! alone (its preamble), never to a section.
//!
//! Lines are matched with a shortest edit script (Myers); past
//! [`MAX_EDIT_DISTANCE`] the differing middle of the file counts as removed
//! and added whole, which can only touch more, never less.

use crate::markdown::{Outline, outline};

/// Beyond this many differing lines the diff stops looking for the shortest
/// script and treats the middle of the file as replaced.
pub const MAX_EDIT_DISTANCE: usize = 1000;

/// Which version a touched run of lines is numbered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// The old version (before the change).
    Old,
    /// The new version (after the change).
    New,
}

/// What happened to a run of lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Lines of the old version that are gone.
    Removed,
    /// Lines of the new version that are new.
    Added,
    /// Lines present in both versions whose section changed: on the old side
    /// the sections they left, on the new side those they joined.
    Moved,
}

/// A run of lines a change touches, all held by the same headings of one
/// version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touched {
    /// The version the lines are numbered in.
    pub side: Side,
    /// What happened to them.
    pub kind: Kind,
    /// First line, 1-based.
    pub start: usize,
    /// Last line, inclusive.
    pub end: usize,
    /// The innermost heading holding the lines in that version, as written;
    /// `None` before the first heading (the file's preamble).
    pub heading: Option<String>,
    /// Keys ([`crate::scope::heading_key`]) of the sections touched: the
    /// innermost heading and those above it; for moved lines only those the
    /// lines left (old side) or joined (new side). Empty for the preamble.
    pub keys: Vec<String>,
    /// Keys of every heading holding the lines in that version, innermost
    /// first (the whole chain, also for moved lines).
    pub ancestry: Vec<String>,
}

impl Touched {
    /// True when the lines lie before the first heading of their version.
    pub fn in_preamble(&self) -> bool {
        self.heading.is_none()
    }

    /// The key of the innermost heading holding the lines (the section whose
    /// own lines they are); `None` in the preamble.
    pub fn part(&self) -> Option<String> {
        self.ancestry.first().cloned()
    }
}

/// A change to one markdown file: the touched runs and both heading trees.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextChange {
    /// The runs the change touches, new side first, each side in line order.
    pub touched: Vec<Touched>,
    /// The headings of the old version.
    pub old: Outline,
    /// The headings of the new version.
    pub new: Outline,
}

impl TextChange {
    /// True when some touched run lies in the preamble of either version.
    #[cfg(test)]
    pub(crate) fn touches_preamble(&self) -> bool {
        self.touched.iter().any(Touched::in_preamble)
    }

    /// True when the change touches a section with key `key`.
    #[cfg(test)]
    pub(crate) fn touches_key(&self, key: &str) -> bool {
        self.touched.iter().any(|t| t.keys.iter().any(|k| k == key))
    }

    /// Every section key the change touches, sorted, without repeats.
    pub fn keys(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .touched
            .iter()
            .flat_map(|t| t.keys.iter().cloned())
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// What a change from `old` to `new` touches. An added file is a change
/// from `""`, a deleted one a change to `""`.
///
/// This is the function an edit hook calls with the file before and after
/// an edit, and what the pre-commit hook and `bsi verify` call per file.
pub fn text_change(old: &str, new: &str) -> TextChange {
    let old_outline = outline(old);
    let new_outline = outline(new);
    let a = lines(old);
    let b = lines(new);
    let script = diff(&a, &b);
    let old_chain = chains(&old_outline, a.len());
    let new_chain = chains(&new_outline, b.len());

    let mut old_runs = Runs::default();
    let mut new_runs = Runs::default();
    for op in script {
        match op {
            Op::Remove(i) => {
                old_runs.push(i, Kind::Removed, chain_keys(&old_chain[i]), &old_chain[i]);
            }
            Op::Add(j) => new_runs.push(j, Kind::Added, chain_keys(&new_chain[j]), &new_chain[j]),
            Op::Keep(i, j) => {
                let (oc, nc) = (&old_chain[i], &new_chain[j]);
                if same_chain(oc, nc) {
                    continue;
                }
                let ok = chain_keys(oc);
                let nk = chain_keys(nc);
                let left: Vec<String> = ok.iter().filter(|k| !nk.contains(k)).cloned().collect();
                let joined: Vec<String> = nk.iter().filter(|k| !ok.contains(k)).cloned().collect();
                // Leaving or joining the preamble touches the file's preamble.
                if !left.is_empty() || oc.is_none() {
                    old_runs.push(i, Kind::Moved, left, oc);
                }
                if !joined.is_empty() || nc.is_none() {
                    new_runs.push(j, Kind::Moved, joined, nc);
                }
            }
        }
    }
    let mut touched = new_runs.finish(Side::New);
    touched.extend(old_runs.finish(Side::Old));
    TextChange {
        touched,
        old: old_outline,
        new: new_outline,
    }
}

/// The lines a change from `old` to `new` removes and adds, by their text
/// (line ends trimmed), wherever they are: what a change does, apart from
/// where it lands. A rebased copy that applied cleanly removes and adds
/// the lines its original did; a conflict resolved over another's line
/// removes that line too.
pub fn edit_lines(old: &str, new: &str) -> (Vec<String>, Vec<String>) {
    let a = lines(old);
    let b = lines(new);
    let mut removed = Vec::new();
    let mut added = Vec::new();
    let text = |l: &str| l.trim_end_matches(['\n', '\r']).to_string();
    for op in diff(&a, &b) {
        match op {
            Op::Remove(i) => removed.push(text(a[i])),
            Op::Add(j) => added.push(text(b[j])),
            Op::Keep(..) => {}
        }
    }
    (removed, added)
}

/// Whether a change does no more than `originals` did together: each line
/// it removes, one of them removed, and each line it adds, one of them
/// added (by text, in any of them, wherever). Each change is the
/// ([`edit_lines`]) of one file. Pure.
pub fn within_edits(
    change: &(Vec<String>, Vec<String>),
    originals: &[(Vec<String>, Vec<String>)],
) -> bool {
    let removed = change
        .0
        .iter()
        .all(|l| originals.iter().any(|o| o.0.contains(l)));
    let added = change
        .1
        .iter()
        .all(|l| originals.iter().any(|o| o.1.contains(l)));
    removed && added
}

/// The innermost heading index holding each line (0-based lines).
fn chains(o: &Outline, n: usize) -> Vec<Chain> {
    (0..n)
        .map(|i| {
            o.section_at(i + 1).map(|h| ChainOf {
                keys: o.ancestry(h).into_iter().map(str::to_string).collect(),
                text: o.headings[h].text.clone(),
            })
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct ChainOf {
    keys: Vec<String>,
    text: String,
}

type Chain = Option<ChainOf>;

fn chain_keys(c: &Chain) -> Vec<String> {
    c.as_ref().map(|c| c.keys.clone()).unwrap_or_default()
}

/// Two chains are the same when they name the same headings in the same
/// order (by key); the preamble only equals the preamble.
fn same_chain(a: &Chain, b: &Chain) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.keys == b.keys,
        _ => false,
    }
}

/// Collects touched lines of one side into runs of consecutive lines with
/// the same kind, keys and chain.
#[derive(Default)]
struct Runs {
    runs: Vec<(usize, usize, Kind, Vec<String>, Chain)>,
}

impl Runs {
    fn push(&mut self, line: usize, kind: Kind, keys: Vec<String>, chain: &Chain) {
        if let Some(last) = self.runs.last_mut()
            && last.1 + 1 == line
            && last.2 == kind
            && last.3 == keys
            && &last.4 == chain
        {
            last.1 = line;
            return;
        }
        self.runs.push((line, line, kind, keys, chain.clone()));
    }

    fn finish(self, side: Side) -> Vec<Touched> {
        self.runs
            .into_iter()
            .map(|(s, e, kind, keys, chain)| Touched {
                side,
                kind,
                start: s + 1,
                end: e + 1,
                heading: chain.as_ref().map(|c| c.text.clone()),
                ancestry: chain_keys(&chain),
                keys,
            })
            .collect()
    }
}

/// The lines of `text` held directly by the section with key `part` (its
/// innermost heading; `None`: the preamble), in order, with their line ends.
pub fn part_lines<'a>(text: &'a str, part: Option<&str>) -> Vec<&'a str> {
    let all = lines(text);
    let chain = chains(&outline(text), all.len());
    all.into_iter()
        .zip(chain)
        .filter(|(_, c)| c.as_ref().and_then(|c| c.keys.first()).map(String::as_str) == part)
        .map(|(l, _)| l)
        .collect()
}

/// The change from `old` to `new` cut into its hunks (runs of `old`'s
/// lines replaced), each shown on its own: `old` with that hunk alone
/// made. `keep` answers for each, in order; the result is `old` with the
/// hunks it kept made, and nothing else. Hunks never overlap, so any
/// choice of them is a text.
pub fn keep_hunks(old: &str, new: &str, mut keep: impl FnMut(&str) -> bool) -> String {
    let a = lines(old);
    let b = lines(new);
    let all = hunks(&a, &b);
    let alone = |h: &Hunk<'_>| -> String {
        let mut t = String::with_capacity(old.len());
        t.extend(a[..h.start].iter().copied());
        t.extend(h.new.iter().copied());
        t.extend(a[h.end..].iter().copied());
        t
    };
    let mut out = String::with_capacity(old.len());
    let mut at = 0;
    for h in &all {
        if !keep(&alone(h)) {
            continue;
        }
        out.extend(a[at..h.start].iter().copied());
        out.extend(h.new.iter().copied());
        at = h.end;
    }
    out.extend(a[at..].iter().copied());
    out
}

/// Whether `now` still has every line that `mid` adds to `base` (some at
/// least): the change from `mid` to `now` removes none of them (`now`
/// built on `mid`). False when `mid` adds nothing.
pub fn keeps_added(base: &str, mid: &str, now: &str) -> bool {
    let (a, m, n) = (lines(base), lines(mid), lines(now));
    let added: std::collections::HashSet<usize> = diff(&a, &m)
        .into_iter()
        .filter_map(|op| match op {
            Op::Add(j) => Some(j),
            _ => None,
        })
        .collect();
    !added.is_empty()
        && !diff(&m, &n)
            .into_iter()
            .any(|op| matches!(op, Op::Remove(i) if added.contains(&i)))
}

/// A run of base lines `start..end` replaced by `new`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hunk<'a> {
    start: usize,
    end: usize,
    new: Vec<&'a str>,
}

/// The runs of `a` that `b` replaces, in order.
fn hunks<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Hunk<'a>> {
    let mut out = Vec::new();
    let mut cur: Option<Hunk<'a>> = None;
    let mut at = 0;
    for op in diff(a, b) {
        match op {
            Op::Keep(i, _) => {
                out.extend(cur.take());
                at = i + 1;
            }
            Op::Remove(i) => {
                let h = cur.get_or_insert(Hunk {
                    start: i,
                    end: i,
                    new: Vec::new(),
                });
                h.end = i + 1;
                at = i + 1;
            }
            Op::Add(j) => cur
                .get_or_insert(Hunk {
                    start: at,
                    end: at,
                    new: Vec::new(),
                })
                .new
                .push(b[j]),
        }
    }
    out.extend(cur);
    out
}

/// git's three-way merge of lines: the changes from `base` to `ours` and
/// from `base` to `theirs`, both made; `None` on a conflict — the two
/// change the same or adjacent base lines differently (as git, adjacent
/// changes conflict).
pub fn merge3<'a>(base: &[&'a str], ours: &[&'a str], theirs: &[&'a str]) -> Option<Vec<&'a str>> {
    let (x, y) = (hunks(base, ours), hunks(base, theirs));
    let (mut xi, mut yi) = (0, 0);
    let mut out = Vec::new();
    let mut pos = 0;
    loop {
        let h = match (x.get(xi), y.get(yi)) {
            (None, None) => break,
            (Some(a), Some(b)) if a == b => {
                xi += 1;
                yi += 1;
                a
            }
            (Some(a), Some(b)) if a.start <= b.end && b.start <= a.end => return None,
            (Some(a), Some(b)) if a.start < b.start => {
                xi += 1;
                a
            }
            (Some(a), None) => {
                xi += 1;
                a
            }
            (_, Some(b)) => {
                yi += 1;
                b
            }
        };
        out.extend_from_slice(&base[pos..h.start]);
        out.extend_from_slice(&h.new);
        pos = h.end;
    }
    out.extend_from_slice(&base[pos..]);
    Some(out)
}

/// The lines of a text, each with its line end, numbered as
/// [`crate::markdown::outline`] numbers them.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// One step of an edit script, with 0-based line numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Keep(usize, usize),
    Remove(usize),
    Add(usize),
}

/// A shortest edit script from `a` to `b` (Myers), after trimming the common
/// prefix and suffix; past [`MAX_EDIT_DISTANCE`] the middle is replaced whole.
fn diff(a: &[&str], b: &[&str]) -> Vec<Op> {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let mut out: Vec<Op> = (0..pre).map(|i| Op::Keep(i, i)).collect();
    if let Some(ops) = myers(ma, mb) {
        out.extend(ops.into_iter().map(|op| match op {
            Op::Keep(i, j) => Op::Keep(i + pre, j + pre),
            Op::Remove(i) => Op::Remove(i + pre),
            Op::Add(j) => Op::Add(j + pre),
        }));
    } else {
        out.extend((0..ma.len()).map(|i| Op::Remove(i + pre)));
        out.extend((0..mb.len()).map(|j| Op::Add(j + pre)));
    }
    let (ea, eb) = (a.len() - suf, b.len() - suf);
    out.extend((0..suf).map(|k| Op::Keep(ea + k, eb + k)));
    out
}

/// Myers' greedy algorithm with a trace for the way back; `None` when the
/// edit distance exceeds [`MAX_EDIT_DISTANCE`].
fn myers(a: &[&str], b: &[&str]) -> Option<Vec<Op>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    if n == 0 || m == 0 {
        let mut ops: Vec<Op> = (0..a.len()).map(Op::Remove).collect();
        ops.extend((0..b.len()).map(Op::Add));
        return Some(ops);
    }
    let max = (n + m).min(MAX_EDIT_DISTANCE as isize);
    let off = max + 1;
    let mut v = vec![0isize; (2 * max + 3) as usize];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut found = None;
    'outer: for d in 0..=max {
        // Only the diagonals -d..=d matter at step d: keep those.
        trace.push(v[(off - d) as usize..=(off + d) as usize].to_vec());
        let mut k = -d;
        while k <= d {
            let ix = (off + k) as usize;
            let mut x = if k == -d || (k != d && v[ix - 1] < v[ix + 1]) {
                v[ix + 1]
            } else {
                v[ix - 1] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[ix] = x;
            if x >= n && y >= m {
                found = Some(d);
                break 'outer;
            }
            k += 2;
        }
    }
    let dmax = found?;
    // Walk back through the trace.
    let mut ops = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (1..=dmax).rev() {
        let prev = &trace[d as usize];
        // prev holds V before step d, diagonals -d..=d at index k + d.
        let at = |k: isize| prev[(k + d) as usize];
        let k = x - y;
        let prev_k = if k == -d || (k != d && at(k - 1) < at(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = at(prev_k);
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            x -= 1;
            y -= 1;
            ops.push(Op::Keep(x as usize, y as usize));
        }
        if prev_k == k + 1 {
            y -= 1;
            ops.push(Op::Add(y as usize));
        } else {
            x -= 1;
            ops.push(Op::Remove(x as usize));
        }
        x = prev_x;
        y = prev_y;
    }
    while x > 0 && y > 0 {
        x -= 1;
        y -= 1;
        ops.push(Op::Keep(x as usize, y as usize));
    }
    ops.reverse();
    Some(ops)
}

#[cfg(test)]
mod tests {
    #[test]
    fn hunks_are_kept_alone() {
        let old = "a\nb\nc\nd\n";
        let new = "A\nb\nc\nD\nE\n";
        assert_eq!(super::keep_hunks(old, new, |_| true), new);
        assert_eq!(super::keep_hunks(old, new, |_| false), old);
        let mut n = 0;
        let first = super::keep_hunks(old, new, |alone| {
            n += 1;
            alone.starts_with('A')
        });
        assert_eq!((first.as_str(), n), ("A\nb\nc\nd\n", 2));
        let last = super::keep_hunks(old, new, |alone| alone.ends_with("E\n"));
        assert_eq!(last, "a\nb\nc\nD\nE\n");
    }

    use super::*;

    #[test]
    fn a_clean_copy_and_a_squash_change_no_more_than_their_originals() {
        let base = "# P\n\n## Goals\n\ngoal text\n\n## Risks\n\nrisk text\n";
        let s1 = base.replace("goal text", "goal text by s1");
        let original = edit_lines(base, &s1);
        assert_eq!(
            original,
            (
                vec!["goal text".to_string()],
                vec!["goal text by s1".to_string()]
            )
        );
        // Rebased onto another's change elsewhere in the file: the same.
        let theirs = base.replace("risk text", "risk text by s3");
        let copy = edit_lines(&theirs, &theirs.replace("goal text", "goal text by s1"));
        assert!(within_edits(&copy, std::slice::from_ref(&original)));
        // Two commits squashed into one.
        let two = s1.replace("goal text by s1", "goal text two");
        let originals = [original.clone(), edit_lines(&s1, &two)];
        assert!(within_edits(&edit_lines(base, &two), &originals));
    }

    #[test]
    fn a_conflict_resolved_over_anothers_line_or_an_added_line_is_a_new_change() {
        let base = "# P\n\n## Goals\n\ngoal text\n";
        let original = edit_lines(base, &base.replace("goal text", "goal text by s1"));
        let theirs = base.replace("goal text", "goal text by s3");
        let resolved = edit_lines(
            &theirs,
            &theirs.replace("goal text by s3", "goal text by s1"),
        );
        assert!(!within_edits(&resolved, std::slice::from_ref(&original)));
        let amended = edit_lines(
            base,
            &base.replace("goal text", "goal text by s1\n\nnew goal"),
        );
        assert!(!within_edits(&amended, std::slice::from_ref(&original)));
        // No original at all: nothing is within.
        assert!(!within_edits(&original, &[]));
    }

    #[test]
    fn a_three_way_merge_keeps_both_sides_or_says_conflict() {
        let base = ["a\n", "b\n", "c\n", "d\n", "e\n"];
        let ours = ["a, o\n", "b\n", "c\n", "d\n", "e\n"];
        let theirs = ["a\n", "b\n", "c\n", "d, t\n", "e\n", "f\n"];
        assert_eq!(
            merge3(&base, &ours, &theirs),
            Some(vec!["a, o\n", "b\n", "c\n", "d, t\n", "e\n", "f\n"])
        );
        // The same line changed two ways, or adjacent lines: a conflict.
        let other = ["a, x\n", "b\n", "c\n", "d\n", "e\n"];
        assert_eq!(merge3(&base, &ours, &other), None);
        let next = ["a\n", "b, x\n", "c\n", "d\n", "e\n"];
        assert_eq!(merge3(&base, &ours, &next), None);
        // The same change on both sides is made once.
        assert_eq!(merge3(&base, &ours, &ours), Some(ours.to_vec()));
        let text = "# T\n\nintro\n\n## A\n\na\n\n### B\n\nb\n\n## C\n\nc\n";
        assert_eq!(part_lines(text, Some("a")), ["## A\n", "\n", "a\n", "\n"]);
        assert!(part_lines(text, None).is_empty());
        assert_eq!(
            part_lines(text, Some("t")),
            ["# T\n", "\n", "intro\n", "\n"]
        );
    }

    proptest::proptest! {
        #[test]
        fn a_three_way_merge_agrees_with_each_side(
            base in proptest::collection::vec("[abc]\n", 0..8),
            x in proptest::collection::vec("[abcd]\n", 0..8),
            y in proptest::collection::vec("[abce]\n", 0..8),
        ) {
            let (b, x, y): (Vec<&str>, Vec<&str>, Vec<&str>) = (
                base.iter().map(String::as_str).collect(),
                x.iter().map(String::as_str).collect(),
                y.iter().map(String::as_str).collect(),
            );
            // One side unchanged: the other side whole.
            proptest::prop_assert_eq!(merge3(&b, &x, &b), Some(x.clone()));
            proptest::prop_assert_eq!(merge3(&b, &b, &y), Some(y.clone()));
            proptest::prop_assert_eq!(merge3(&b, &x, &x), Some(x.clone()));
            // Whichever side comes first, the same merge.
            proptest::prop_assert_eq!(merge3(&b, &x, &y), merge3(&b, &y, &x));
        }
    }

    fn apply(a: &[&str], b: &[&str], ops: &[Op]) -> bool {
        let mut ai = 0;
        let mut bj = 0;
        for op in ops {
            match *op {
                Op::Keep(i, j) => {
                    if i != ai || j != bj || a[i] != b[j] {
                        return false;
                    }
                    ai += 1;
                    bj += 1;
                }
                Op::Remove(i) => {
                    if i != ai {
                        return false;
                    }
                    ai += 1;
                }
                Op::Add(j) => {
                    if j != bj {
                        return false;
                    }
                    bj += 1;
                }
            }
        }
        ai == a.len() && bj == b.len()
    }

    #[test]
    fn the_script_is_valid_and_short() {
        let a = ["a\n", "b\n", "c\n", "a\n", "b\n", "b\n", "a\n"];
        let b = ["c\n", "b\n", "a\n", "b\n", "a\n", "c\n"];
        let ops = diff(&a, &b);
        assert!(apply(&a, &b, &ops), "{ops:?}");
        let edits = ops.iter().filter(|o| !matches!(o, Op::Keep(..))).count();
        assert_eq!(edits, 5);
        assert!(apply(&[], &b, &diff(&[], &b)));
        assert!(apply(&a, &[], &diff(&a, &[])));
    }

    const PLAN: &str = "intro\n# Plan\n## Goals\ng1\ng2\n## Risks\nr\n";

    fn keys(old: &str, new: &str) -> Vec<String> {
        text_change(old, new).keys()
    }

    #[test]
    fn removed_and_added_lines_touch_their_sections() {
        assert_eq!(
            keys(
                PLAN,
                "intro\n# Plan\n## Goals\ng1 changed\ng2\n## Risks\nr\n"
            ),
            vec!["goals", "plan"]
        );
        // The preamble belongs to the file, not to the first section.
        let c = text_change(PLAN, "# Plan\n## Goals\ng1\ng2\n## Risks\nr\n");
        assert!(c.keys().is_empty(), "{c:?}");
        assert!(c.touches_preamble());
    }

    #[test]
    fn a_heading_inserted_inside_a_section_touches_it() {
        // `## Risks2` written under `## Goals`: g2 leaves Goals.
        let c = text_change(
            PLAN,
            "intro\n# Plan\n## Goals\ng1\n## Mine\ng2\n## Risks\nr\n",
        );
        assert_eq!(c.keys(), vec!["goals", "mine", "plan"]);
        // A setext underline makes g1 a heading.
        let c = text_change(PLAN, "intro\n# Plan\n## Goals\ng1\n---\ng2\n## Risks\nr\n");
        assert!(c.touches_key("goals"));
        assert!(c.touches_key("g1"));
        // A new section between two others touches only its parent.
        let c = text_change(
            PLAN,
            "intro\n# Plan\n## Goals\ng1\ng2\n## New\nn\n## Risks\nr\n",
        );
        assert_eq!(c.keys(), vec!["new", "plan"]);
    }

    #[test]
    fn a_renamed_heading_touches_both_names() {
        let c = text_change(PLAN, "intro\n# Plan\n## Objectives\ng1\ng2\n## Risks\nr\n");
        assert_eq!(c.keys(), vec!["goals", "objectives", "plan"]);
        let moved: Vec<_> = c.touched.iter().filter(|t| t.kind == Kind::Moved).collect();
        assert_eq!(moved.len(), 2, "{moved:#?}");
        assert_eq!(
            (moved[1].side, moved[1].start, moved[1].end),
            (Side::Old, 4, 5)
        );
        assert_eq!(moved[0].heading.as_deref(), Some("Objectives"));
    }

    #[test]
    fn added_and_deleted_files() {
        assert_eq!(keys("", "# A\nx\n"), vec!["a"]);
        assert_eq!(keys("# A\nx\n", ""), vec!["a"]);
        assert!(keys("same\n", "same\n").is_empty());
    }
}
