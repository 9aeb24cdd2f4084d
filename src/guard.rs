//! What a change touches, measured against the claims. Pure: claims, paths,
//! changed line ranges and heading outlines in, findings out.
//!
//! Used by the pre-commit hook (is a staged change inside another session's
//! claim? outside the committer's own?) and by `bsi verify` (what did a
//! session change that its claims do not cover?).
//!
//! Claims are indexed once by path, so checking a path costs a few hash
//! lookups (one per directory above it), whatever the number of claims: no
//! step is quadratic in changed files × claims.

use std::collections::HashMap;

use crate::markdown::Outline;
use crate::registry::{Claim, Registry};
use crate::scope::{Scope, heading_key};

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
        let sections = self.sections.get(path).map(Vec::as_slice).unwrap_or(&[]);
        (whole, sections)
    }
}

/// A range of changed lines, 1-based and inclusive, in the new version of a
/// file. A hunk that only removes lines is placed on the line before the
/// removal (`removal` is then true).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRange {
    /// First line.
    pub start: usize,
    /// Last line.
    pub end: usize,
    /// Only lines were removed here.
    pub removal: bool,
}

impl LineRange {
    /// From a hunk header's new side: `+start,count`.
    pub fn from_hunk(new_start: usize, new_lines: usize) -> Self {
        if new_lines == 0 {
            let at = new_start.max(1);
            LineRange {
                start: at,
                end: at,
                removal: true,
            }
        } else {
            LineRange {
                start: new_start.max(1),
                end: new_start.max(1) + new_lines - 1,
                removal: false,
            }
        }
    }
}

/// What a change did to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Touch {
    /// The whole file: added without readable text, deleted, binary, or
    /// its lines are not known.
    Whole,
    /// These lines of the new version.
    Lines(Vec<LineRange>),
}

/// A part of a file a finding is about: lines and the innermost heading
/// above them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// First line (1-based).
    pub start: usize,
    /// Last line.
    pub end: usize,
    /// Only lines were removed at this place.
    pub removal: bool,
    /// The heading whose section holds the lines; `None` before the first
    /// heading.
    pub heading: Option<String>,
    /// The heading itself is gone from the new version: the lines are those
    /// its section spanned before the change.
    pub heading_gone: bool,
}

impl Region {
    /// `lines 3-5 under `Goals``.
    pub fn describe(&self) -> String {
        if self.heading_gone {
            return format!(
                "section `{}` (lines {}-{} before this change) removed or renamed",
                self.heading.as_deref().unwrap_or(""),
                self.start,
                self.end
            );
        }
        let lines = if self.start == self.end {
            format!("line {}", self.start)
        } else {
            format!("lines {}-{}", self.start, self.end)
        };
        let what = if self.removal {
            format!("lines removed after {lines}")
        } else {
            lines
        };
        match &self.heading {
            Some(h) => format!("{what} under `{h}`"),
            None => format!("{what} before the first heading"),
        }
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
}

/// One piece of a changed range that falls in one section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Piece {
    start: usize,
    end: usize,
    removal: bool,
    section: Option<usize>,
}

/// Splits `r` at the headings inside it: each piece lies in one innermost
/// section (or before the first heading).
fn pieces(outline: &Outline, r: LineRange) -> Vec<Piece> {
    let hs = &outline.headings;
    let mut out = Vec::new();
    let mut start = r.start;
    let mut section = outline.section_at(start);
    // Headings strictly after `start` and not after `end` begin new pieces.
    let mut i = hs.partition_point(|h| h.line <= r.start);
    while i < hs.len() && hs[i].line <= r.end {
        out.push(Piece {
            start,
            end: hs[i].line - 1,
            removal: r.removal,
            section,
        });
        start = hs[i].line;
        section = Some(i);
        i += 1;
    }
    out.push(Piece {
        start,
        end: r.end,
        removal: r.removal,
        section,
    });
    out
}

fn region(outline: &Outline, p: &Piece) -> Region {
    Region {
        start: p.start,
        end: p.end,
        removal: p.removal,
        heading: p.section.map(|i| outline.headings[i].text.clone()),
        heading_gone: false,
    }
}

/// Keys of the section claims on `path` whose heading the new version of
/// the file no longer has. Only when some are missing is the old version
/// worth reading (see [`check_file`]).
pub fn missing_headings(index: &ClaimIndex<'_>, path: &str, new: &Outline) -> Vec<String> {
    let (_, sections) = index.for_path(path);
    let mut out: Vec<String> = Vec::new();
    for (c, _) in sections {
        if let Scope::Section { heading, .. } = &c.scope {
            let key = heading_key(heading);
            if new.find(&key).next().is_none() && !out.contains(&key) {
                out.push(key);
            }
        }
    }
    out
}

/// Checks one changed file. `session` is the session making the change
/// (`None`: every claim belongs to someone else, and nothing is "outside").
/// `outline` is the heading tree of the new version, needed only when
/// [`ClaimIndex::has_sections`] says so; without it a section claim counts as
/// touched by any change of its file. `old` is the outline of the previous
/// version, needed only when [`missing_headings`] finds some: a change that
/// removes or renames another session's heading touches that section.
pub fn check_file<'a>(
    index: &ClaimIndex<'a>,
    session: Option<&str>,
    path: &str,
    touch: &Touch,
    outline: Option<&Outline>,
    old: Option<&Outline>,
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
    let own_keys: Vec<String> = sections
        .iter()
        .filter(|(c, _)| mine(c))
        .map(|(c, _)| key_of(c))
        .collect();
    let check_own = session.is_some() && !own_whole;

    match (touch, outline) {
        (Touch::Lines(ranges), Some(outline)) if !foreign.is_empty() || check_own => {
            if let Some(old) = old {
                for ((claim, stale), key) in &foreign {
                    if outline.find(key).next().is_some() {
                        continue;
                    }
                    if let Some((_, h)) = old.find(key).next() {
                        out.push(Finding::Claimed {
                            path: path.to_string(),
                            claim,
                            stale: *stale,
                            region: Some(Region {
                                start: h.line,
                                end: h.end_line,
                                removal: true,
                                heading: Some(h.text.clone()),
                                heading_gone: true,
                            }),
                        });
                    }
                }
            }
            for r in ranges {
                for p in pieces(outline, *r) {
                    let keys = p.section.map(|i| outline.ancestry(i)).unwrap_or_default();
                    for ((claim, stale), key) in &foreign {
                        if keys.contains(&key.as_str()) {
                            out.push(Finding::Claimed {
                                path: path.to_string(),
                                claim,
                                stale: *stale,
                                region: Some(region(outline, &p)),
                            });
                        }
                    }
                    if check_own && !own_keys.iter().any(|k| keys.contains(&k.as_str())) {
                        out.push(Finding::Outside {
                            path: path.to_string(),
                            region: Some(region(outline, &p)),
                        });
                    }
                }
            }
        }
        _ => {
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
    use crate::markdown::outline;
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

    fn lines(a: usize, b: usize) -> Touch {
        Touch::Lines(vec![LineRange {
            start: a,
            end: b,
            removal: false,
        }])
    }

    #[test]
    fn hunk_header_to_range() {
        assert_eq!(
            LineRange::from_hunk(4, 2),
            LineRange {
                start: 4,
                end: 5,
                removal: false
            }
        );
        assert_eq!(
            LineRange::from_hunk(0, 0),
            LineRange {
                start: 1,
                end: 1,
                removal: true
            }
        );
    }

    #[test]
    fn ranges_split_at_headings() {
        let o = outline(PLAN);
        let r = LineRange {
            start: 2,
            end: 6,
            removal: false,
        };
        let p: Vec<_> = pieces(&o, r)
            .iter()
            .map(|p| (p.start, p.end, p.section))
            .collect();
        assert_eq!(p, vec![(2, 2, Some(0)), (3, 4, Some(1)), (5, 6, Some(2))]);
    }

    #[test]
    fn whole_path_claims_are_found_through_directories() {
        let claims = [
            claim("s1", "a/"),
            claim("s2", "a/b/c.md"),
            claim("s3", "x/"),
        ];
        let ix = ClaimIndex::from_claims(claims.iter().map(|c| (c, false)));
        let f = check_file(&ix, Some("s2"), "a/b/c.md", &Touch::Whole, None, None);
        assert_eq!(f.len(), 1);
        assert!(matches!(&f[0], Finding::Claimed { claim, .. } if claim.session == "s1"));
        // Nobody's claim and not the session's: outside.
        let f = check_file(&ix, Some("s2"), "z.md", &Touch::Whole, None, None);
        assert!(matches!(&f[..], [Finding::Outside { region: None, .. }]));
        // Without a session nothing is outside.
        assert!(check_file(&ix, None, "z.md", &Touch::Whole, None, None).is_empty());
        // `ab/` is not under `a/`.
        assert!(check_file(&ix, Some("s3"), "ab/c.md", &Touch::Whole, None, None).len() == 1);
    }

    #[test]
    fn sections_are_checked_per_hunk() {
        let o = outline(PLAN);
        let claims = [claim("s1", "p.md#Goals"), claim("s2", "p.md#Risks")];
        let ix = ClaimIndex::from_claims(claims.iter().map(|c| (c, false)));
        assert!(ix.has_sections("p.md"));
        // s2 edits its own section: nothing to say.
        assert!(check_file(&ix, Some("s2"), "p.md", &lines(8, 8), Some(&o), None).is_empty());
        // s2 edits Q1, a subsection of s1's Goals: claimed, and outside its own.
        let f = check_file(&ix, Some("s2"), "p.md", &lines(6, 6), Some(&o), None);
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
        // A deleted file touches every section.
        let f = check_file(&ix, Some("s2"), "p.md", &Touch::Whole, Some(&o), None);
        assert_eq!(f.len(), 2);
        // The preamble belongs to no section.
        let f = check_file(&ix, Some("s2"), "p.md", &lines(2, 2), Some(&o), None);
        assert!(
            matches!(&f[..], [Finding::Outside { region: Some(r), .. }] if r.heading.as_deref() == Some("Plan"))
        );
    }

    #[test]
    fn a_removed_heading_touches_its_section() {
        let old = outline(PLAN);
        let new = outline("# Plan\nintro\n## Goals\ng\n### Q1\nq\nr\n");
        let claims = [claim("s1", "p.md#Goals"), claim("s2", "p.md#Risks")];
        let ix = ClaimIndex::from_claims(claims.iter().map(|c| (c, false)));
        assert_eq!(missing_headings(&ix, "p.md", &new), vec!["risks"]);
        let t = Touch::Lines(vec![LineRange::from_hunk(6, 0)]);
        let f = check_file(&ix, Some("s1"), "p.md", &t, Some(&new), Some(&old));
        match &f[..] {
            [
                Finding::Claimed {
                    claim,
                    region: Some(r),
                    ..
                },
            ] => {
                assert_eq!(claim.session, "s2");
                assert_eq!(
                    r.describe(),
                    "section `Risks` (lines 7-8 before this change) removed or renamed"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn counts_and_note() {
        let o = outline(PLAN);
        let claims = [claim("s1", "p.md#Risks")];
        let ix = ClaimIndex::from_claims(claims.iter().map(|c| (c, false)));
        let mut f = check_file(&ix, Some("s1"), "p.md", &lines(3, 4), Some(&o), None);
        f.extend(check_file(
            &ix,
            Some("s1"),
            "p.md",
            &lines(4, 4),
            Some(&o),
            None,
        ));
        f.extend(check_file(
            &ix,
            Some("s1"),
            "q.md",
            &Touch::Whole,
            None,
            None,
        ));
        f.extend(check_file(
            &ix,
            Some("s1"),
            "r.md",
            &Touch::Whole,
            None,
            None,
        ));
        assert_eq!(overflow_counts(&f), (2, 1));
        assert_eq!(
            overflow_note(2, 1).as_deref(),
            Some("overflow: 2 files, 1 section")
        );
        assert_eq!(overflow_note(0, 0), None);
        assert_eq!(overflow_note(1, 0).as_deref(), Some("overflow: 1 file"));
    }
}
