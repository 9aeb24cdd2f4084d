//! The claims drawn where they sit in the brain's tree, for `bsi status
//! --tree`: each claim with its folders, and in each folder drawn a count
//! of what else it holds (not every file of the brain), in natural order
//! (`n2` before `n10`). Pure: paths and marks in, text out.

use std::collections::BTreeMap;

use crate::output::{Paint, paint};
use bsi_core::scope::Scope;

/// A claim to draw: where, what to write beside it, and its colour.
#[derive(Debug, Clone)]
pub struct Mark {
    /// The claimed scope.
    pub scope: Scope,
    /// The text after the arrow: `sess-a (claude, 1h12m left)`.
    pub label: String,
    /// Its colour on a terminal.
    pub paint: Option<Paint>,
}

/// The text beside a tree entry, and its colour.
type Label = (String, Option<Paint>);

#[derive(Default)]
struct Node {
    is_dir: bool,
    children: BTreeMap<String, Node>,
    marks: Vec<Label>,
    /// Claimed sections of a file: heading, then marks.
    sections: Vec<(String, Vec<Label>)>,
}

impl Node {
    /// The node at `path` (components separated by `/`), created as needed.
    fn at(&mut self, path: &str, is_dir: bool) -> &mut Node {
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let mut node = self;
        for (i, part) in parts.iter().enumerate() {
            let last = i + 1 == parts.len();
            node = node.children.entry((*part).to_string()).or_default();
            if !last || is_dir {
                node.is_dir = true;
            }
        }
        node
    }
}

/// Draws the claims in the tree, fitted to `width` columns: a line whose
/// claims would make it wider puts them on lines of their own under it,
/// broken at spaces (a session id stays whole).
pub fn render(
    root_name: &str,
    paths: &[(String, bool)],
    marks: &[Mark],
    colour: bool,
    width: usize,
) -> String {
    let mut root = Node {
        is_dir: true,
        ..Node::default()
    };
    for (p, is_dir) in paths {
        root.at(p, *is_dir);
    }
    for m in marks {
        let entry = (m.label.clone(), m.paint);
        match &m.scope {
            Scope::Global => root.marks.push(entry),
            Scope::Dir(d) => root.at(d, true).marks.push(entry),
            Scope::File(f) => root.at(f, false).marks.push(entry),
            Scope::Section { file, heading } => {
                let node = root.at(file, false);
                match node.sections.iter_mut().find(|(h, _)| h == heading) {
                    Some((_, v)) => v.push(entry),
                    None => node.sections.push((heading.clone(), vec![entry])),
                }
            }
        }
    }
    let draw_ = Drawing { colour, width };
    let mut out = String::new();
    let name = format!("{root_name}/");
    let under = if root.children.is_empty() { "" } else { "│ " };
    draw_.entry(&mut out, "", &name, &name, &root.marks, under);
    draw_.children(&root, "", &mut out);
    out
}

/// How a tree is drawn: colours, and the width its lines fit.
struct Drawing {
    colour: bool,
    width: usize,
}

impl Drawing {
    /// One entry's line, `lead` (the branches) then `shown` (its name as
    /// drawn; `plain`, the same without colours) and its claims; the claims
    /// go on lines of their own, after `under`, when the line would not fit.
    fn entry(
        &self,
        out: &mut String,
        lead: &str,
        shown: &str,
        plain: &str,
        marks: &[Label],
        under: &str,
    ) {
        let label = labels(marks, false);
        let len = lead.chars().count() + plain.chars().count() + label.chars().count();
        if marks.is_empty() || len <= self.width {
            out.push_str(&format!("{lead}{shown}{}\n", labels(marks, self.colour)));
            return;
        }
        out.push_str(&format!("{lead}{shown}\n"));
        let at = under.chars().count() + 2;
        for (text, p) in marks {
            for (i, line) in crate::output::wrap_words(text, self.width, at, at)
                .iter()
                .enumerate()
            {
                let arrow = if i == 0 { "← " } else { "  " };
                let line = match p {
                    Some(p) => paint(self.colour, *p, line),
                    None => line.clone(),
                };
                out.push_str(&format!("{under}{arrow}{line}\n"));
            }
        }
    }
}

/// The claims beside an entry: `  ← s1 (claude, 1h left); s2 (…)`.
fn labels(marks: &[Label], colour: bool) -> String {
    if marks.is_empty() {
        return String::new();
    }
    let text = marks
        .iter()
        .map(|(l, p)| match p {
            Some(p) => paint(colour, *p, l),
            None => l.clone(),
        })
        .collect::<Vec<_>>()
        .join("; ");
    format!("  ← {text}")
}

impl Node {
    /// Whether the node is drawn: it holds a claim, or something below it
    /// does.
    fn drawn(&self) -> bool {
        !self.marks.is_empty()
            || !self.sections.is_empty()
            || self.children.values().any(Node::drawn)
    }
}

/// A name's key in natural order: runs of digits compare as numbers
/// (`n2` before `n10`), the rest without case.
fn natural_key(name: &str) -> Vec<(u8, String, u128)> {
    let mut key = Vec::new();
    let mut chars = name.chars().peekable();
    while let Some(&c) = chars.peek() {
        let digits = c.is_ascii_digit();
        let mut run = String::new();
        while let Some(&d) = chars.peek() {
            if d.is_ascii_digit() != digits {
                break;
            }
            run.push(d);
            chars.next();
        }
        key.push(if digits {
            let n = run.parse::<u128>().unwrap_or(u128::MAX);
            (0, String::new(), n)
        } else {
            (1, run.to_lowercase(), 0)
        });
    }
    key
}

/// What else a folder holds, beside what is drawn: `… 2 other folders, 9
/// other files`.
fn others(folders: usize, files: usize) -> Option<String> {
    let plural = |n: usize, one: &str| {
        if n == 1 {
            format!("1 other {one}")
        } else {
            format!("{n} other {one}s")
        }
    };
    match (folders, files) {
        (0, 0) => None,
        (d, 0) => Some(format!("… {}", plural(d, "folder"))),
        (0, f) => Some(format!("… {}", plural(f, "file"))),
        (d, f) => Some(format!("… {}, {}", plural(d, "folder"), plural(f, "file"))),
    }
}

impl Drawing {
    /// The entries under `node`, each line after `prefix`.
    fn children(&self, node: &Node, prefix: &str, out: &mut String) {
        // Sections first (they belong to a file, which has no children),
        // then the folders and files that hold a claim or lead to one,
        // folders first, in natural order; then a count of the rest.
        let mut items: Vec<(String, String, &[Label], Option<&Node>)> = node
            .sections
            .iter()
            .map(|(h, m)| {
                let name = format!("#{h}");
                (name.clone(), name, m.as_slice(), None)
            })
            .collect();
        let mut entries: Vec<(&String, &Node)> =
            node.children.iter().filter(|(_, n)| n.drawn()).collect();
        entries.sort_by_cached_key(|(name, n)| (!n.is_dir, natural_key(name), (*name).clone()));
        for (name, n) in entries {
            let (shown, plain) = if n.is_dir {
                let plain = format!("{name}/");
                (paint(self.colour, Paint::Bold, &plain), plain)
            } else {
                ((*name).clone(), (*name).clone())
            };
            items.push((shown, plain, n.marks.as_slice(), Some(n)));
        }
        let hidden = node.children.values().filter(|n| !n.drawn());
        let (folders, files) = hidden.fold(
            (0, 0),
            |(d, f), n| {
                if n.is_dir { (d + 1, f) } else { (d, f + 1) }
            },
        );
        let rest = others(folders, files);
        let count = items.len() + usize::from(rest.is_some());
        for (i, (shown, plain, marks, child)) in items.into_iter().enumerate() {
            let last = i + 1 == count;
            let (branch, more) = if last {
                ("└── ", "    ")
            } else {
                ("├── ", "│   ")
            };
            let below = format!("{prefix}{more}");
            // The claims' own lines sit where the entry's children hang.
            let has_children =
                child.is_some_and(|c| !c.sections.is_empty() || !c.children.is_empty());
            let under = if has_children {
                format!("{below}│ ")
            } else {
                format!("{below}  ")
            };
            self.entry(
                out,
                &format!("{prefix}{branch}"),
                &shown,
                &plain,
                marks,
                &under,
            );
            if let Some(child) = child {
                self.children(child, &below, out);
            }
        }
        if let Some(rest) = rest {
            out.push_str(&format!(
                "{prefix}└── {}\n",
                paint(self.colour, Paint::Dim, &rest)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(scope: &str, label: &str) -> Mark {
        Mark {
            scope: Scope::parse_stored(scope).expect("scope"),
            label: label.into(),
            paint: None,
        }
    }

    #[test]
    fn draws_claims_where_they_sit() {
        let paths = vec![
            ("agents".to_string(), true),
            ("agents/alice.md".into(), false),
            ("projets".into(), true),
            ("projets/plan.md".into(), false),
            ("projets/old.md".into(), false),
            ("archive".into(), true),
            ("archive/2025.md".into(), false),
            ("README.md".into(), false),
        ];
        let got = render(
            "brain",
            &paths,
            &[
                mark("agents/", "s1 (claude, 1h left)"),
                mark("projets/plan.md#Risks", "s2 (codex, 2h left)"),
                mark("notes/new.md", "s3 (me, 2h left)"),
            ],
            false,
            80,
        );
        assert_eq!(
            got,
            "brain/
├── agents/  ← s1 (claude, 1h left)
│   └── … 1 other file
├── notes/
│   └── new.md  ← s3 (me, 2h left)
├── projets/
│   ├── plan.md
│   │   └── #Risks  ← s2 (codex, 2h left)
│   └── … 1 other file
└── … 1 other folder, 1 other file
"
        );
        let global = render("b", &[], &[mark("global", "s9 (x, 1h left)")], false, 80);
        assert_eq!(global, "b/  ← s9 (x, 1h left)\n");
    }

    #[test]
    fn claims_too_wide_for_their_line_go_under_it() {
        let paths = vec![
            ("agents".to_string(), true),
            ("agents/alice.md".into(), false),
            ("README.md".into(), false),
        ];
        let label = "sess-20260314-0930-ag01 (claude-the-long-agent, 1h59m left)";
        let marks = [
            mark("agents/", label),
            mark("README.md", "s2 (bob, 1h left)"),
        ];
        let got = render(".", &paths, &marks, false, 40);
        assert_eq!(
            got,
            "./
├── agents/
│   │ ← sess-20260314-0930-ag01
│   │   (claude-the-long-agent, 1h59m
│   │   left)
│   └── … 1 other file
└── README.md  ← s2 (bob, 1h left)
"
        );
        for l in got.lines() {
            assert!(l.chars().count() <= 40, "{l}");
        }
        // Wide enough: one line, as before.
        let wide = render(".", &paths, &marks, false, usize::MAX);
        assert!(
            wide.contains(&format!("├── agents/  ← {label}\n")),
            "{wide}"
        );
    }

    #[test]
    fn names_in_natural_order() {
        let paths: Vec<(String, bool)> = ["n10.md", "n2.md", "n1.md", "N3.md", "n100.md"]
            .iter()
            .map(|p| ((*p).to_string(), false))
            .collect();
        let marks: Vec<Mark> = paths.iter().map(|(p, _)| mark(p, "s")).collect();
        let got = render(".", &paths, &marks, false, 80);
        let names: Vec<&str> = got
            .lines()
            .skip(1)
            .map(|l| l.trim_start_matches(['├', '└', '─', ' ']))
            .map(|l| l.split_whitespace().next().unwrap_or(""))
            .collect();
        assert_eq!(names, ["n1.md", "n2.md", "N3.md", "n10.md", "n100.md"]);
    }
}
