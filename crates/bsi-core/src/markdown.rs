//! The one place that builds a pulldown-cmark parser: the heading tree of a
//! brain file, so section claims can be checked for nesting and changed lines
//! can be mapped to the section that holds them.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::scope::{Sections, heading_key};

/// One heading of a markdown file and the lines its section spans.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Heading {
    /// 1 for `#`, 2 for `##`, …
    pub level: u8,
    /// The heading's text, as written (inline markup reduced to its text).
    pub text: String,
    /// The comparison key of the text ([`heading_key`]).
    pub key: String,
    /// 1-based line of the heading itself.
    pub line: usize,
    /// 1-based last line of its section: up to the next heading of the same
    /// or a higher level, or the end of the file.
    pub end_line: usize,
    /// Index of the enclosing heading in the list, if any.
    pub parent: Option<usize>,
}

/// The headings of a markdown document, in order, with their section ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Outline {
    /// Headings in document order.
    pub headings: Vec<Heading>,
}

fn level_num(l: HeadingLevel) -> u8 {
    match l {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// The parser options bsi uses everywhere: GFM tables, strikethrough and
/// task lists on; heading attributes off, so `{#id}` stays part of a
/// heading's text.
pub fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// Reads the heading tree of `text`.
pub fn outline(text: &str) -> Outline {
    // Line starts, to turn byte offsets into line numbers.
    let mut starts = vec![0usize];
    starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    let line_of = |off: usize| match starts.binary_search(&off) {
        Ok(i) => i + 1,
        Err(i) => i,
    };
    let total_lines = if text.ends_with('\n') {
        starts.len() - 1
    } else {
        starts.len()
    }
    .max(1);

    let mut headings: Vec<Heading> = Vec::new();
    let mut current: Option<(u8, usize, String)> = None;
    for (ev, range) in Parser::new_ext(text, options()).into_offset_iter() {
        match ev {
            Event::Start(Tag::Heading { level, .. }) => {
                current = Some((level_num(level), line_of(range.start), String::new()));
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, _, s)) = current.as_mut() {
                    s.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some((_, _, s)) = current.as_mut() {
                    s.push(' ');
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, line, text)) = current.take() {
                    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
                    headings.push(Heading {
                        level,
                        key: heading_key(&text),
                        text,
                        line,
                        end_line: total_lines,
                        parent: None,
                    });
                }
            }
            _ => {}
        }
    }
    // Section ends and parents, with a stack of open sections.
    let mut stack: Vec<usize> = Vec::new();
    for i in 0..headings.len() {
        while let Some(&top) = stack.last() {
            if headings[top].level >= headings[i].level {
                headings[top].end_line = headings[i].line.saturating_sub(1).max(headings[top].line);
                stack.pop();
            } else {
                break;
            }
        }
        headings[i].parent = stack.last().copied();
        stack.push(i);
    }
    Outline { headings }
}

impl Outline {
    /// Headings whose text matches `key`.
    pub fn find<'a>(&'a self, key: &'a str) -> impl Iterator<Item = (usize, &'a Heading)> + 'a {
        self.headings
            .iter()
            .enumerate()
            .filter(move |(_, h)| h.key == key)
    }

    /// True when heading `outer` is an ancestor of heading `inner`.
    pub fn is_ancestor(&self, outer: usize, inner: usize) -> bool {
        let mut p = self.headings.get(inner).and_then(|h| h.parent);
        while let Some(i) = p {
            if i == outer {
                return true;
            }
            p = self.headings[i].parent;
        }
        false
    }

    /// True when a heading matching `outer` contains one matching `inner`.
    pub fn contains_key(&self, outer: &str, inner: &str) -> bool {
        self.find(outer)
            .any(|(o, _)| self.find(inner).any(|(i, _)| self.is_ancestor(o, i)))
    }

    /// The innermost heading whose section holds `line`, if any.
    ///
    /// That is the last heading at or before `line`: a section runs to the
    /// next heading, so no deeper one can hold the line. A binary search.
    pub fn section_at(&self, line: usize) -> Option<usize> {
        let i = self.headings.partition_point(|h| h.line <= line);
        let i = i.checked_sub(1)?;
        (line <= self.headings[i].end_line).then_some(i)
    }

    /// The keys of the heading at `index` and of all its ancestors.
    pub fn ancestry(&self, index: usize) -> Vec<&str> {
        let mut out = Vec::new();
        let mut p = Some(index);
        while let Some(i) = p {
            out.push(self.headings[i].key.as_str());
            p = self.headings[i].parent;
        }
        out
    }
}

/// A [`Sections`] answered from outlines of files, read on demand by a loader.
pub struct OutlineSections<F: Fn(&str) -> Option<Outline>> {
    load: F,
    cache: std::cell::RefCell<std::collections::HashMap<String, Option<Outline>>>,
}

impl<F: Fn(&str) -> Option<Outline>> OutlineSections<F> {
    /// Sections of files loaded by `load` (a path relative to the brain root).
    pub fn new(load: F) -> Self {
        OutlineSections {
            load,
            cache: std::cell::RefCell::default(),
        }
    }

    /// The outline of `file`, if it could be read.
    pub fn outline(&self, file: &str) -> Option<Outline> {
        let mut cache = self.cache.borrow_mut();
        cache
            .entry(file.to_string())
            .or_insert_with(|| (self.load)(file))
            .clone()
    }
}

impl<F: Fn(&str) -> Option<Outline>> Sections for OutlineSections<F> {
    fn contains(&self, file: &str, outer: &str, inner: &str) -> bool {
        let mut cache = self.cache.borrow_mut();
        cache
            .entry(file.to_string())
            .or_insert_with(|| (self.load)(file))
            .as_ref()
            .is_some_and(|o| o.contains_key(outer, inner))
    }
}

/// Outlines of files, each read once per run on first use.
#[derive(Default)]
pub struct OutlineCache {
    cache: std::cell::RefCell<std::collections::HashMap<String, Option<std::rc::Rc<Outline>>>>,
}

impl OutlineCache {
    /// The outline of `file`, loaded by `load` the first time.
    pub fn get(
        &self,
        file: &str,
        load: impl FnOnce() -> Option<Outline>,
    ) -> Option<std::rc::Rc<Outline>> {
        self.cache
            .borrow_mut()
            .entry(file.to_string())
            .or_insert_with(|| load().map(std::rc::Rc::new))
            .clone()
    }
}

/// Tables as pulldown-cmark sees them: for each level-2 heading followed by a
/// table, the heading's text and the number of body rows. The registry's own
/// fast scanner is checked against this in the test suite.
pub fn tables_by_heading(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut heading: Option<String> = None;
    let mut in_h2: Option<String> = None;
    let mut rows: Option<usize> = None;
    let mut in_head = false;
    for ev in Parser::new_ext(text, options()) {
        match ev {
            Event::Start(Tag::Heading {
                level: HeadingLevel::H2,
                ..
            }) => in_h2 = Some(String::new()),
            Event::Start(Tag::Heading { .. }) => heading = None,
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = in_h2.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(HeadingLevel::H2)) => {
                heading = in_h2.take().map(|h| h.trim().to_string());
            }
            Event::Start(Tag::Table(_)) => rows = Some(0),
            Event::Start(Tag::TableHead) => in_head = true,
            Event::End(TagEnd::TableHead) => in_head = false,
            Event::End(TagEnd::TableRow) if !in_head => {
                if let Some(r) = rows.as_mut() {
                    *r += 1;
                }
            }
            Event::End(TagEnd::Table) => {
                if let (Some(h), Some(r)) = (heading.take(), rows.take()) {
                    out.push((h, r));
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str =
        "# Top\nintro\n## A\ntext\n### B\nb text\n## C\nc\n```\n# not a heading\n```\n";

    #[test]
    fn tree_and_ranges() {
        let o = outline(DOC);
        let names: Vec<_> = o
            .headings
            .iter()
            .map(|h| (h.level, h.text.as_str(), h.line, h.end_line))
            .collect();
        assert_eq!(
            names,
            vec![
                (1, "Top", 1, 11),
                (2, "A", 3, 6),
                (3, "B", 5, 6),
                (2, "C", 7, 11)
            ]
        );
        assert!(o.contains_key("a", "b"));
        assert!(o.contains_key("top", "b"));
        assert!(!o.contains_key("b", "a"));
        assert!(!o.contains_key("a", "c"));
        assert_eq!(o.section_at(4), Some(1));
        assert_eq!(o.section_at(6), Some(2));
        assert_eq!(o.section_at(10), Some(3));
        assert_eq!(o.ancestry(2), vec!["b", "a", "top"]);
    }

    #[test]
    fn setext_and_inline_markup() {
        let o = outline("Title *here*\n===\n\n## `code` part\n");
        assert_eq!(o.headings[0].text, "Title here");
        assert_eq!(o.headings[1].key, "code part");
    }
}
