//! The brain's directory tree with each claim drawn where it sits, for
//! `bsi status --tree`. Pure: paths and marks in, text out.

use std::collections::BTreeMap;

use crate::output::{Paint, paint};
use crate::scope::Scope;

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

/// Draws the tree. `paths` are the brain's entries relative to its root,
/// with `/`, and whether each is a directory; claimed paths missing from
/// disk are drawn too.
pub fn render(root_name: &str, paths: &[(String, bool)], marks: &[Mark], colour: bool) -> String {
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
    let mut out = format!("{root_name}/{}\n", labels(&root.marks, colour));
    draw(&root, "", colour, &mut out);
    out
}

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

fn draw(node: &Node, prefix: &str, colour: bool, out: &mut String) {
    // Sections first (they belong to a file, which has no children), then
    // directories, then files, each in name order.
    let mut items: Vec<(String, String)> = node
        .sections
        .iter()
        .map(|(h, m)| (format!("#{h}"), labels(m, colour)))
        .collect();
    let mut entries: Vec<(&String, &Node)> = node.children.iter().collect();
    entries.sort_by_key(|(name, n)| (!n.is_dir, name.to_lowercase()));
    let first_entry = items.len();
    for (name, n) in &entries {
        let shown = if n.is_dir {
            paint(colour, Paint::Bold, &format!("{name}/"))
        } else {
            (*name).clone()
        };
        items.push((shown, labels(&n.marks, colour)));
    }
    let count = items.len();
    for (i, (shown, label)) in items.into_iter().enumerate() {
        let last = i + 1 == count;
        let (branch, more) = if last {
            ("└── ", "    ")
        } else {
            ("├── ", "│   ")
        };
        out.push_str(&format!("{prefix}{branch}{shown}{label}\n"));
        if i >= first_entry {
            let (_, child) = entries[i - first_entry];
            draw(child, &format!("{prefix}{more}"), colour, out);
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
            ("projets/plan.md".into(), false),
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
        );
        assert_eq!(
            got,
            "brain/
├── agents/  ← s1 (claude, 1h left)
│   └── alice.md
├── notes/
│   └── new.md  ← s3 (me, 2h left)
├── projets/
│   └── plan.md
│       └── #Risks  ← s2 (codex, 2h left)
└── README.md
"
        );
        let global = render("b", &[], &[mark("global", "s9 (x, 1h left)")], false);
        assert_eq!(global, "b/  ← s9 (x, 1h left)\n");
    }
}
