//! What a change touches, measured against the claims. Pure: claims, paths,
//! changed line ranges and heading outlines in, findings out.
//!
//! Used by the pre-commit hook (is a staged change inside another session's
//! claim? outside the committer's own?) and by `bsi verify` (what did a
//! session change that its claims do not cover?). What a change touches is
//! decided by [`crate::changes::text_change`], for every caller alike.
//!
//! Claims are indexed once by path, so checking a path costs a few hash
//! lookups (one per directory above it), whatever the number of claims: no
//! step is quadratic in changed files × claims.

pub mod discard;
pub mod edit;
pub mod merge;
pub mod own;
pub mod touch;
pub mod verdict;
pub mod ways;

use std::collections::HashMap;

use unicode_normalization::UnicodeNormalization;

use crate::changes::{Kind, Side, TextChange, Touched, text_change};
use crate::markdown::Outline;
use crate::registry::{Claim, Registry};
use crate::scope::{Scope, heading_key, is_markdown};

/// A claim and whether it sits in the stale table.
pub type Held<'a> = (&'a Claim, bool);

/// The claims of a registry, indexed by what they cover.
#[derive(Debug, Default)]
pub struct ClaimIndex<'a> {
    global: Vec<Held<'a>>,
    dirs: HashMap<&'a str, Vec<Held<'a>>>,
    files: HashMap<&'a str, Vec<Held<'a>>>,
    sections: HashMap<&'a str, Vec<Held<'a>>>,
}

impl<'a> ClaimIndex<'a> {
    /// Indexes every active and stale claim of `reg`.
    pub fn new(reg: &'a Registry) -> Self {
        Self::from_claims(reg.all_claims())
    }

    /// Indexes these claims.
    pub fn from_claims(claims: impl IntoIterator<Item = Held<'a>>) -> Self {
        let mut ix = ClaimIndex::default();
        for (c, stale) in claims {
            match &c.scope {
                Scope::Global => ix.global.push((c, stale)),
                Scope::Dir(d) => ix.dirs.entry(d.as_str()).or_default().push((c, stale)),
                Scope::File(f) => ix.files.entry(f.as_str()).or_default().push((c, stale)),
                Scope::Section { file, .. } => ix
                    .sections
                    .entry(file.as_str())
                    .or_default()
                    .push((c, stale)),
            }
        }
        ix
    }

    /// Whether any section claim concerns `path`: only then is its heading
    /// outline needed.
    pub fn has_sections(&self, path: &str) -> bool {
        self.sections.contains_key(path)
    }

    /// The claims covering the whole of `path` (global, a directory above
    /// it, the file itself), and the section claims inside it.
    pub fn for_path(&self, path: &str) -> (Vec<Held<'a>>, &[Held<'a>]) {
        let mut whole: Vec<Held<'a>> = self.global.clone();
        if !self.dirs.is_empty() {
            for (i, _) in path.match_indices('/') {
                if let Some(v) = self.dirs.get(&path[..=i]) {
                    whole.extend(v.iter().copied());
                }
            }
        }
        if let Some(v) = self.files.get(path) {
            whole.extend(v.iter().copied());
        }
        // A file claim on a name above the path: the name became a folder.
        if !self.files.is_empty() {
            for (i, _) in path.match_indices('/') {
                if let Some(v) = self.files.get(&path[..i]) {
                    whole.extend(v.iter().copied());
                }
            }
        }
        // A directory claim on the same name (`newthing/` for a file
        // `newthing`) is the same name.
        if !self.dirs.is_empty()
            && let Some(v) = self.dirs.get(format!("{path}/").as_str())
        {
            whole.extend(v.iter().copied());
        }
        let sections = self.sections.get(path).map_or(&[][..], Vec::as_slice);
        (whole, sections)
    }
}

/// What a change did to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Touch {
    /// The whole file: deleted or added without readable text, binary, not
    /// a markdown file, or its text is not known.
    Whole,
    /// A markdown file whose old and new text are known: what
    /// [`changes::text_change`] says the change touches.
    Text(TextChange),
}

/// A part of a file a finding is about: a run of lines of one version and
/// the innermost heading holding them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// The version the lines are numbered in.
    pub side: Side,
    /// Removed, added, or kept lines whose section changed.
    pub kind: Kind,
    /// First line (1-based).
    pub start: usize,
    /// Last line.
    pub end: usize,
    /// The innermost heading holding the lines in that version; `None`
    /// before the first heading.
    pub heading: Option<String>,
}

impl Region {
    fn of(t: &Touched) -> Region {
        Region {
            side: t.side,
            kind: t.kind,
            start: t.start,
            end: t.end,
            heading: t.heading.clone(),
        }
    }

    /// True for lines that were removed.
    pub fn removal(&self) -> bool {
        self.kind == Kind::Removed
    }

    /// `lines 3-5 under `Goals``, `line 4 (removed) under `Goals``, …
    pub fn describe(&self) -> String {
        let lines = if self.start == self.end {
            format!("line {}", self.start)
        } else {
            format!("lines {}-{}", self.start, self.end)
        };
        let under = match &self.heading {
            Some(h) => format!("under `{h}`"),
            None => "before the first heading".to_string(),
        };
        match (self.kind, self.side) {
            (Kind::Added, _) => format!("{lines} {under}"),
            (Kind::Removed, _) => format!("{lines} {under} in the previous version (removed)"),
            (Kind::Moved, Side::Old) => format!(
                "{lines} {under} in the previous version (no longer in that section: a heading above changed)"
            ),
            (Kind::Moved, Side::New) => {
                format!("{lines} {under} (now in that section: a heading above changed)")
            }
        }
    }

    /// `is` for one line, `are` for several: the verb after [`Region::describe`].
    pub fn verb(&self) -> &'static str {
        if self.start == self.end { "is" } else { "are" }
    }
}

/// Something a change did that the claims speak against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding<'a> {
    /// The change lies inside another session's claim.
    Claimed {
        /// The path, relative to the brain root.
        path: String,
        /// The claim in the way.
        claim: &'a Claim,
        /// Whether it is stale.
        stale: bool,
        /// The lines concerned, for a section claim.
        region: Option<Region>,
    },
    /// The change lies outside every scope the session holds.
    Outside {
        /// The path, relative to the brain root.
        path: String,
        /// `None`: the whole file is outside; otherwise these lines are
        /// outside the sections the session holds in it.
        region: Option<Region>,
    },
    /// The change removes or renames the heading of one of the session's own
    /// section claims: afterwards the claim names no heading of the file.
    HeadingGone {
        /// The path, relative to the brain root.
        path: String,
        /// The session's claim.
        claim: &'a Claim,
        /// Headings of the new version that took the section's lines and
        /// that the session does not hold (what to claim instead); empty
        /// when the session holds them or the section is simply gone.
        renamed_to: Vec<String>,
    },
}

/// Checks one changed file. `session` is the session making the change
/// (`None`: every claim belongs to someone else, and nothing is "outside").
/// With [`Touch::Whole`] a section claim counts as touched by any change of
/// its file.
pub fn check_file<'a>(
    index: &ClaimIndex<'a>,
    session: Option<&str>,
    path: &str,
    touch: &Touch,
) -> Vec<Finding<'a>> {
    let mut out = Vec::new();
    let (whole, sections) = index.for_path(path);
    let mine = |c: &Claim| session == Some(c.session.as_str());
    for &(claim, stale) in whole.iter().filter(|(c, _)| !mine(c)) {
        out.push(Finding::Claimed {
            path: path.to_string(),
            claim,
            stale,
            region: None,
        });
    }
    let own_whole = whole.iter().any(|(c, _)| mine(c));
    let key_of = |c: &Claim| match &c.scope {
        Scope::Section { heading, .. } => heading_key(heading),
        _ => String::new(),
    };
    let foreign: Vec<(Held<'a>, String)> = sections
        .iter()
        .filter(|(c, _)| !mine(c))
        .map(|&h| (h, key_of(h.0)))
        .collect();
    let own: Vec<(&'a Claim, String)> = sections
        .iter()
        .filter(|(c, _)| mine(c))
        .map(|(c, _)| (*c, key_of(c)))
        .collect();
    let check_own = session.is_some() && !own_whole;

    match touch {
        Touch::Text(change) => {
            foreign_sections_touched(&mut out, path, change, &foreign);
            let outside_new = if check_own {
                outside_own_sections(&mut out, path, change, &own)
            } else {
                Vec::new()
            };
            if !own_whole {
                own_headings_gone(&mut out, path, change, &own, &outside_new);
            }
        }
        Touch::Whole => {
            for &((claim, stale), _) in &foreign {
                out.push(Finding::Claimed {
                    path: path.to_string(),
                    claim,
                    stale,
                    region: None,
                });
            }
            if check_own {
                out.push(Finding::Outside {
                    path: path.to_string(),
                    region: None,
                });
            }
        }
    }
    out
}

/// Other sessions' section claims the change touches: the first run that
/// touches each names the place.
fn foreign_sections_touched<'a>(
    out: &mut Vec<Finding<'a>>,
    path: &str,
    change: &TextChange,
    foreign: &[(Held<'a>, String)],
) {
    for ((claim, stale), key) in foreign {
        if let Some(t) = change.touched.iter().find(|t| t.keys.contains(key)) {
            out.push(Finding::Claimed {
                path: path.to_string(),
                claim,
                stale: *stale,
                region: Some(Region::of(t)),
            });
        }
    }
}

/// The runs outside every section the session holds. Returns the headings
/// the old version did not have that took such lines (what to claim
/// instead of a renamed heading).
fn outside_own_sections(
    out: &mut Vec<Finding<'_>>,
    path: &str,
    change: &TextChange,
    own: &[(&Claim, String)],
) -> Vec<String> {
    let mut outside_new: Vec<String> = Vec::new();
    for t in &change.touched {
        let held = own.iter().any(|(_, k)| t.ancestry.contains(k));
        // Lines replaced in place (removed and added at the same place
        // under the same heading) are one change: said once, on the new side.
        let replaced = t.side == Side::Old
            && t.kind == Kind::Removed
            && change.touched.iter().any(|u| {
                u.side == Side::New
                    && u.kind == Kind::Added
                    && (u.start, u.end) == (t.start, t.end)
                    && u.heading == t.heading
                    && u.ancestry == t.ancestry
            });
        if !held && !replaced {
            // A heading the old version did not have took lines.
            if t.side == Side::New
                && let Some(h) = &t.heading
                && change.old.find(&heading_key(h)).next().is_none()
                && !outside_new.contains(h)
            {
                outside_new.push(h.clone());
            }
            out.push(Finding::Outside {
                path: path.to_string(),
                region: Some(Region::of(t)),
            });
        }
    }
    outside_new
}

/// The session's own section claims whose heading the change removes.
fn own_headings_gone<'a>(
    out: &mut Vec<Finding<'a>>,
    path: &str,
    change: &TextChange,
    own: &[(&'a Claim, String)],
    outside_new: &[String],
) {
    let mut seen: Vec<&str> = Vec::new();
    for (claim, key) in own {
        if seen.contains(&key.as_str()) {
            continue;
        }
        seen.push(key);
        let was = change.old.find(key).next().is_some();
        let is = change.new.find(key).next().is_some();
        if was && !is {
            out.push(Finding::HeadingGone {
                path: path.to_string(),
                claim,
                renamed_to: outside_new.to_vec(),
            });
        }
    }
}

/// What a change of `path` from `old` to `new` touches. `None` on a side
/// means its text cannot be read (binary, not UTF-8); an added file is a
/// change from `Some("")`, a deleted one to `Some("")`. Sections exist only
/// in markdown files ([`is_markdown`], with the `markdown_extensions` of
/// `.bsi.toml` in `markdown_extra`); any other change touches the whole file.
pub fn touch(path: &str, old: Option<&str>, new: Option<&str>, markdown_extra: &[String]) -> Touch {
    if !is_markdown(path, markdown_extra) {
        return Touch::Whole;
    }
    match (old, new) {
        (Some(old), Some(new)) => Touch::Text(text_change(old, new)),
        _ => Touch::Whole,
    }
}

/// The verdict on one file's change, from its path and its text before and
/// after: the entry point for an edit hook inside an agent's tool, and what
/// the pre-commit hook and `bsi verify` compute per changed file. `path` is
/// relative to the brain root, with `/`; it is NFC-normalised here, as
/// scopes are.
pub fn check_change<'a>(
    index: &ClaimIndex<'a>,
    session: Option<&str>,
    path: &str,
    old: Option<&str>,
    new: Option<&str>,
    markdown_extra: &[String],
) -> Vec<Finding<'a>> {
    let path: String = path.nfc().collect();
    let touch = touch(&path, old, new, markdown_extra);
    check_file(index, session, &path, &touch)
}

/// The section claims of `claims` whose heading the file no longer has:
/// claims that protect nothing. `outline_of` gives a file's heading tree
/// (`None`: the file is gone or unreadable, so no heading of it exists).
/// For `status`, `watchdog` and `verify`.
pub fn missing_section_claims<'a>(
    claims: impl IntoIterator<Item = &'a Claim>,
    outline_of: &dyn Fn(&str) -> Option<Outline>,
) -> Vec<&'a Claim> {
    let mut outlines: HashMap<String, Option<Outline>> = HashMap::new();
    let mut out = Vec::new();
    for c in claims {
        if let Scope::Section { file, heading } = &c.scope {
            let o = outlines
                .entry(file.clone())
                .or_insert_with(|| outline_of(file));
            let key = heading_key(heading);
            if o.as_ref().is_none_or(|o| o.find(&key).next().is_none()) {
                out.push(c);
            }
        }
    }
    out
}

/// Counts of what lies outside a session's claims: distinct files wholly
/// outside, and distinct (file, heading) places outside the held sections.
pub fn overflow_counts(findings: &[Finding<'_>]) -> (usize, usize) {
    let mut files: Vec<&str> = Vec::new();
    let mut sections: Vec<(&str, Option<&str>)> = Vec::new();
    for f in findings {
        if let Finding::Outside { path, region } = f {
            match region {
                None if !files.contains(&path.as_str()) => files.push(path),
                Some(r) => {
                    let k = (path.as_str(), r.heading.as_deref());
                    if !sections.contains(&k) {
                        sections.push(k);
                    }
                }
                None => {}
            }
        }
    }
    (files.len(), sections.len())
}

/// `overflow: 2 files, 1 section`, or `None` when nothing overflows.
pub fn overflow_note(files: usize, sections: usize) -> Option<String> {
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    match (files, sections) {
        (0, 0) => None,
        (f, 0) => Some(format!("overflow: {}", plural(f, "file"))),
        (0, s) => Some(format!("overflow: {}", plural(s, "section"))),
        (f, s) => Some(format!(
            "overflow: {}, {}",
            plural(f, "file"),
            plural(s, "section")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn claim(session: &str, scope: &str) -> Claim {
        let t = DateTime::parse_from_rfc3339("2026-03-14T09:30:00Z").expect("time");
        Claim {
            session: session.into(),
            scope: Scope::parse_stored(scope).expect("scope"),
            agent: "a".into(),
            opened: t,
            expires: t,
            note: String::new(),
            reason: None,
            extra: Vec::new(),
        }
    }

    const PLAN: &str = "# Plan\nintro\n## Goals\ng\n### Q1\nq\n## Risks\nr\n";

    fn edit(new: &str) -> Touch {
        Touch::Text(text_change(PLAN, new))
    }

    #[test]
    fn whole_path_claims_are_found_through_directories() {
        let claims = [
            claim("s1", "a/"),
            claim("s2", "a/b/c.md"),
            claim("s3", "x/"),
        ];
        let ix = ClaimIndex::from_claims(claims.iter().map(|c| (c, false)));
        let f = check_file(&ix, Some("s2"), "a/b/c.md", &Touch::Whole);
        assert_eq!(f.len(), 1);
        assert!(matches!(&f[0], Finding::Claimed { claim, .. } if claim.session == "s1"));
        // Nobody's claim and not the session's: outside.
        let f = check_file(&ix, Some("s2"), "z.md", &Touch::Whole);
        assert!(matches!(&f[..], [Finding::Outside { region: None, .. }]));
        // Without a session nothing is outside.
        assert!(check_file(&ix, None, "z.md", &Touch::Whole).is_empty());
        // `ab/` is not under `a/`.
        assert!(check_file(&ix, Some("s3"), "ab/c.md", &Touch::Whole).len() == 1);
    }

    #[test]
    fn sections_are_checked_in_both_versions() {
        let claims = [claim("s1", "p.md#Goals"), claim("s2", "p.md#Risks")];
        let ix = ClaimIndex::from_claims(claims.iter().map(|c| (c, false)));
        assert!(ix.has_sections("p.md"));
        // s2 edits its own section: nothing to say.
        let own = edit("# Plan\nintro\n## Goals\ng\n### Q1\nq\n## Risks\nr2\n");
        assert!(check_file(&ix, Some("s2"), "p.md", &own).is_empty());
        // s2 edits Q1, a subsection of s1's Goals: claimed, and outside its
        // own (the line replaced in place is said once).
        let q1 = edit("# Plan\nintro\n## Goals\ng\n### Q1\nq2\n## Risks\nr\n");
        let f = check_file(&ix, Some("s2"), "p.md", &q1);
        assert_eq!(f.len(), 2, "{f:?}");
        match &f[0] {
            Finding::Claimed {
                claim,
                region: Some(r),
                ..
            } => {
                assert_eq!(claim.session, "s1");
                assert_eq!(r.heading.as_deref(), Some("Q1"));
                assert_eq!(r.describe(), "line 6 under `Q1`");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            &f[1],
            Finding::Outside {
                region: Some(_),
                ..
            }
        ));
        // s2 writes its own `## Risks` heading inside Goals and edits below
        // it: the lines were Goals' in the old version.
        let taken = edit("# Plan\nintro\n## Goals\n## Risks\ng\n### Q1\nq\nr\n");
        let f = check_file(&ix, Some("s2"), "p.md", &taken);
        assert!(
            f.iter()
                .any(|f| matches!(f, Finding::Claimed { claim, .. } if claim.session == "s1")),
            "{f:?}"
        );
        // A deleted file touches every section.
        let f = check_file(&ix, Some("s2"), "p.md", &Touch::Whole);
        assert_eq!(f.len(), 2);
        // The preamble belongs to no section: no claim is in the way.
        let pre = Touch::Text(text_change(
            "top\n# Plan\n## Goals\ng\n",
            "# Plan\n## Goals\ng\n",
        ));
        let f = check_file(&ix, None, "p.md", &pre);
        assert!(f.is_empty(), "{f:?}");
        let f = check_file(&ix, Some("s2"), "p.md", &pre);
        assert!(
            matches!(&f[..], [Finding::Outside { region: Some(r), .. }] if r.heading.is_none()),
            "{f:?}"
        );
    }

    #[test]
    fn a_removed_heading_touches_its_section() {
        let claims = [claim("s1", "p.md#Goals"), claim("s2", "p.md#Risks")];
        let ix = ClaimIndex::from_claims(claims.iter().map(|c| (c, false)));
        let t = edit("# Plan\nintro\n## Goals\ng\n### Q1\nq\nr\n");
        let f = check_file(&ix, Some("s1"), "p.md", &t);
        assert!(
            matches!(&f[0], Finding::Claimed { claim, region: Some(r), .. }
                if claim.session == "s2" && r.heading.as_deref() == Some("Risks")),
            "{f:?}"
        );
    }

    #[test]
    fn renaming_a_held_heading_names_the_new_one() {
        let claims = [claim("s1", "p.md#Goals")];
        let ix = ClaimIndex::from_claims(claims.iter().map(|c| (c, false)));
        let t = edit("# Plan\nintro\n## Objectives\ng\n### Q1\nq\n## Risks\nr\n");
        let f = check_file(&ix, Some("s1"), "p.md", &t);
        assert!(
            f.iter()
                .any(|f| matches!(f, Finding::HeadingGone { renamed_to, .. }
                if renamed_to == &vec!["Objectives".to_string()])),
            "{f:?}"
        );
        // Holding the new name too, the rename is the session's own.
        let claims = [claim("s1", "p.md#Goals"), claim("s1", "p.md#Objectives")];
        let ix = ClaimIndex::from_claims(claims.iter().map(|c| (c, false)));
        let f = check_file(&ix, Some("s1"), "p.md", &t);
        assert!(
            matches!(&f[..], [Finding::HeadingGone { renamed_to, .. }] if renamed_to.is_empty()),
            "{f:?}"
        );
    }

    #[test]
    fn an_edit_is_judged_from_its_path_and_texts() {
        let claims = [claim("s1", "caf\u{e9}.md#Goals"), claim("s1", "run.sh")];
        let ix = ClaimIndex::from_claims(claims.iter().map(|c| (c, false)));
        let new = PLAN.replace("\ng\n", "\ng2\n");
        // A decomposed name is the claimed one.
        let f = check_change(
            &ix,
            Some("s2"),
            "cafe\u{301}.md",
            Some(PLAN),
            Some(&new),
            &[],
        );
        assert!(
            matches!(&f[0], Finding::Claimed { region: Some(r), .. } if r.heading.as_deref() == Some("Goals")),
            "{f:?}"
        );
        // Elsewhere in the file: free.
        let other = PLAN.replace("\nr\n", "\nr2\n");
        let f = check_change(&ix, None, "caf\u{e9}.md", Some(PLAN), Some(&other), &[]);
        assert!(f.is_empty(), "{f:?}");
        // Not markdown: the whole file, whatever its `#` lines.
        assert_eq!(
            touch("run.sh", Some("# a\n"), Some("# b\n"), &[]),
            Touch::Whole
        );
        assert!(matches!(
            touch("x.mdx", Some(""), Some("# b\n"), &["mdx".into()]),
            Touch::Text(_)
        ));
        assert_eq!(touch("a.md", None, Some("x"), &[]), Touch::Whole);
    }

    #[test]
    fn claims_naming_no_heading_are_found() {
        let claims = [
            claim("s1", "p.md#Goals"),
            claim("s2", "p.md#Gone"),
            claim("s3", "q.md#X"),
            claim("s4", "p.md"),
        ];
        let load = |f: &str| (f == "p.md").then(|| crate::markdown::outline(PLAN));
        let m = missing_section_claims(claims.iter(), &load);
        let names: Vec<&str> = m.iter().map(|c| c.session.as_str()).collect();
        assert_eq!(names, vec!["s2", "s3"]);
    }

    #[test]
    fn counts_and_note() {
        let claims = [claim("s1", "p.md#Risks")];
        let ix = ClaimIndex::from_claims(claims.iter().map(|c| (c, false)));
        let t = edit("# Plan\nintro\n## Goals\ng2\n### Q1\nq\n## Risks\nr\n");
        let mut f = check_file(&ix, Some("s1"), "p.md", &t);
        f.extend(check_file(&ix, Some("s1"), "q.md", &Touch::Whole));
        f.extend(check_file(&ix, Some("s1"), "r.md", &Touch::Whole));
        assert_eq!(overflow_counts(&f), (2, 1));
        assert_eq!(
            overflow_note(2, 1).as_deref(),
            Some("overflow: 2 files, 1 section")
        );
        assert_eq!(overflow_note(0, 0), None);
        assert_eq!(overflow_note(1, 0).as_deref(), Some("overflow: 1 file"));
    }
}
