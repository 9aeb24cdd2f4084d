//! The live page of the brain (`bsi serve`, `bsi status --html`) as data:
//! the brain as a tree of folders, files and sections, each held part with
//! the claims on it, the sections reserved before they are written, the
//! queue in order, the drift and the latest writes. Pure: what was read in,
//! a view out; the doors render it.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset};

use crate::drift::Drift;
use crate::markdown::Outline;
use crate::registry::{Claim, Registry, Request};
use crate::scope::{Scope, heading_key};
use crate::trailer;
use crate::ttl;

/// What a part of the brain is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A folder (the brain's root too).
    Dir,
    /// A file.
    File,
    /// A section of a file, under its heading.
    Section,
}

/// A claim on a part, as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    /// The claim.
    pub claim: Claim,
    /// In the stale table.
    pub stale: bool,
    /// Past its expiry, waiting for the watchdog.
    pub overdue: bool,
    /// Its time, for people: `1h12m left`, `overdue 5m`, `STALE …`.
    pub time: String,
}

/// A part of the brain: a folder, a file or a section, and what is in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Its name: a folder's or file's, a section's heading.
    pub name: String,
    /// The scope that claims it.
    pub scope: Scope,
    /// Folder, file or section.
    pub kind: Kind,
    /// The claims on it.
    pub holds: Vec<Hold>,
    /// A section claimed before its heading is written.
    pub reserved: bool,
    /// What it holds: folders first, then files, in natural order (`n2`
    /// before `n10`); a file's sections in the file's order.
    pub children: Vec<Node>,
}

impl Node {
    /// The claims on it and on everything in it.
    pub fn held_within(&self) -> usize {
        self.holds.len() + self.children.iter().map(Node::held_within).sum::<usize>()
    }
}

/// One write of the journal: the commit that carried it and the write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The commit, in full.
    pub commit: String,
    /// When it was made.
    pub time: DateTime<FixedOffset>,
    /// Its git author.
    pub author: String,
    /// The write.
    pub write: trailer::Write,
}

/// The page.
#[derive(Debug, Clone)]
pub struct Page {
    /// When it was read.
    pub now: DateTime<FixedOffset>,
    /// The brain, from its root.
    pub tree: Node,
    /// Active and stale claims.
    pub counts: (usize, usize),
    /// The live places in the queue, in order.
    pub queue: Vec<Request>,
    /// Claimed parts changed by commits that are not their holders'.
    pub drift: Vec<Drift>,
    /// The latest writes, newest first, one each.
    pub writes: Vec<Written>,
}

/// What the page is built from, read by the door.
pub struct Read<'a> {
    /// The registry.
    pub registry: &'a Registry,
    /// The brain's paths from its root, `/`-separated, and whether each is
    /// a folder ([`crate::resolve::walk`]).
    pub paths: &'a [(String, bool)],
    /// The headings of the brain's markdown files, by path.
    pub outlines: &'a BTreeMap<String, Outline>,
    /// The live places in the queue, in order.
    pub queue: Vec<Request>,
    /// The drift.
    pub drift: Vec<Drift>,
    /// The latest writes.
    pub writes: Vec<Written>,
}

/// Builds the page from what was read, at `now`.
pub fn build(read: Read<'_>, now: DateTime<FixedOffset>) -> Page {
    let reg = read.registry;
    let mut root = Node {
        name: String::new(),
        scope: Scope::Global,
        kind: Kind::Dir,
        holds: Vec::new(),
        reserved: false,
        children: Vec::new(),
    };
    for (path, is_dir) in read.paths {
        let node = at(&mut root, path, *is_dir);
        if !*is_dir && let Some(outline) = read.outlines.get(path) {
            node.children = sections(path, outline);
        }
    }
    for (claim, stale) in reg.all_claims() {
        let overdue = !stale && ttl::stale_reason(claim.opened, claim.expires, now).is_some();
        let time = if stale {
            format!(
                "STALE {}",
                ttl::claim_time(claim.opened, claim.expires, now)
            )
        } else if overdue {
            ttl::claim_time(claim.opened, claim.expires, now)
        } else {
            ttl::time_left(claim.expires, now)
        };
        let hold = Hold {
            claim: claim.clone(),
            stale,
            overdue,
            time,
        };
        let node = match &claim.scope {
            Scope::Global => &mut root,
            Scope::Dir(d) => at(&mut root, d, true),
            Scope::File(f) => at(&mut root, f, false),
            Scope::Section { file, heading } => section(at(&mut root, file, false), file, heading),
        };
        node.holds.push(hold);
    }
    sort(&mut root);
    Page {
        now,
        tree: root,
        counts: (reg.active_claims.len(), reg.stale_claims.len()),
        queue: read.queue,
        drift: read.drift,
        writes: read.writes,
    }
}

/// The node at `path`, made with its folders as needed.
fn at<'n>(root: &'n mut Node, path: &str, is_dir: bool) -> &'n mut Node {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let mut node = root;
    let mut so_far = String::new();
    for (i, part) in parts.iter().enumerate() {
        let dir = i + 1 < parts.len() || is_dir;
        so_far.push_str(part);
        if dir {
            so_far.push('/');
        }
        let pos = node.children.iter().position(|c| c.name == *part);
        let pos = pos.unwrap_or_else(|| {
            node.children.push(Node {
                name: (*part).to_string(),
                scope: if dir {
                    Scope::Dir(so_far.clone())
                } else {
                    Scope::File(so_far.clone())
                },
                kind: if dir { Kind::Dir } else { Kind::File },
                holds: Vec::new(),
                reserved: false,
                children: Vec::new(),
            });
            node.children.len() - 1
        });
        node = &mut node.children[pos];
    }
    node
}

/// A file's sections, nested as its headings are.
fn sections(file: &str, outline: &Outline) -> Vec<Node> {
    fn under(file: &str, outline: &Outline, parent: Option<usize>) -> Vec<Node> {
        outline
            .headings
            .iter()
            .enumerate()
            .filter(|(_, h)| h.parent == parent)
            .map(|(i, h)| Node {
                name: h.text.clone(),
                scope: Scope::Section {
                    file: file.to_string(),
                    heading: h.text.clone(),
                },
                kind: Kind::Section,
                holds: Vec::new(),
                reserved: false,
                children: under(file, outline, Some(i)),
            })
            .collect()
    }
    under(file, outline, None)
}

/// The section of `node` (a file) under `heading`, found at any depth;
/// a reserved one (its heading not written yet) added last.
fn section<'n>(node: &'n mut Node, file: &str, heading: &str) -> &'n mut Node {
    fn find(nodes: &[Node], key: &str) -> Option<Vec<usize>> {
        for (i, n) in nodes.iter().enumerate() {
            if heading_key(&n.name) == key {
                return Some(vec![i]);
            }
            if let Some(mut path) = find(&n.children, key) {
                path.insert(0, i);
                return Some(path);
            }
        }
        None
    }
    let key = heading_key(heading);
    let path = find(&node.children, &key).unwrap_or_else(|| {
        node.children.push(Node {
            name: heading.to_string(),
            scope: Scope::Section {
                file: file.to_string(),
                heading: heading.to_string(),
            },
            kind: Kind::Section,
            holds: Vec::new(),
            reserved: true,
            children: Vec::new(),
        });
        vec![node.children.len() - 1]
    });
    let mut n = node;
    for i in path {
        n = &mut n.children[i];
    }
    n
}

/// Folders first, then files, in natural order; sections stay in the
/// file's order.
fn sort(node: &mut Node) {
    if node.kind == Kind::Dir {
        node.children.sort_by(|a, b| {
            let rank = |n: &Node| u8::from(n.kind != Kind::Dir);
            rank(a)
                .cmp(&rank(b))
                .then_with(|| natural(&a.name, &b.name))
        });
    }
    for c in &mut node.children {
        sort(c);
    }
}

/// `n2` before `n10`: runs of digits compared as numbers.
pub fn natural(a: &str, b: &str) -> Ordering {
    fn parts(s: &str) -> Vec<(bool, String)> {
        let mut out: Vec<(bool, String)> = Vec::new();
        for c in s.chars() {
            let digit = c.is_ascii_digit();
            match out.last_mut() {
                Some((d, run)) if *d == digit => run.push(c),
                _ => out.push((digit, c.to_string())),
            }
        }
        out
    }
    let (pa, pb) = (parts(a), parts(b));
    for ((da, ra), (db, rb)) in pa.iter().zip(&pb) {
        let o = if *da && *db {
            let (ta, tb) = (ra.trim_start_matches('0'), rb.trim_start_matches('0'));
            ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb))
        } else {
            ra.to_lowercase().cmp(&rb.to_lowercase())
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    pa.len().cmp(&pb.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::outline;

    fn claim(session: &str, scope: Scope, note: &str) -> Claim {
        let t = |s: &str| DateTime::parse_from_rfc3339(s).expect("time");
        Claim {
            session: session.into(),
            scope,
            agent: "ana".into(),
            opened: t("2026-03-14T09:00:00Z"),
            expires: t("2026-03-14T11:00:00Z"),
            note: note.into(),
            reason: None,
            extra: Vec::new(),
        }
    }

    #[test]
    fn the_tree_marks_each_held_part_and_a_reserved_section() {
        let mut reg =
            crate::registry::parse(crate::registry::render::empty_registry()).expect("parse");
        for c in [
            claim("s1", Scope::Dir("agents/".into()), ""),
            claim(
                "s2",
                Scope::Section {
                    file: "plan.md".into(),
                    heading: "Goals".into(),
                },
                "<b>",
            ),
            claim(
                "s3",
                Scope::Section {
                    file: "plan.md".into(),
                    heading: "Later".into(),
                },
                "",
            ),
        ] {
            reg.add_claim(crate::registry::TableKind::Active, &c);
        }
        let reg = crate::registry::parse(reg.render()).expect("parse");
        let paths = vec![
            ("agents".to_string(), true),
            ("agents/n10.md".to_string(), false),
            ("agents/n2.md".to_string(), false),
            ("plan.md".to_string(), false),
        ];
        let mut outlines = BTreeMap::new();
        outlines.insert(
            "plan.md".to_string(),
            outline("# Plan\n## Goals\n## Risks\n"),
        );
        let now = DateTime::parse_from_rfc3339("2026-03-14T10:00:00Z").expect("now");
        let page = build(
            Read {
                registry: &reg,
                paths: &paths,
                outlines: &outlines,
                queue: Vec::new(),
                drift: Vec::new(),
                writes: Vec::new(),
            },
            now,
        );
        let root = &page.tree;
        assert_eq!(root.held_within(), 3);
        let agents = &root.children[0];
        assert_eq!((agents.name.as_str(), agents.kind), ("agents", Kind::Dir));
        assert_eq!(agents.holds[0].claim.session, "s1");
        assert_eq!(agents.holds[0].time, "1h left");
        let names: Vec<&str> = agents.children.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["n2.md", "n10.md"]);
        let plan = &root.children[1];
        let goals = &plan.children[0].children[0];
        assert_eq!((goals.name.as_str(), goals.holds.len()), ("Goals", 1));
        assert_eq!(goals.holds[0].claim.note, "<b>");
        let later = plan.children.last().expect("reserved");
        assert!(later.reserved && later.holds[0].claim.session == "s3");
    }
}
