//! Codex's `apply_patch` text: read it into files and hunks, and apply hunks
//! to a file's text. Pure.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: notes/new.md
//! +line
//! *** Update File: notes/a.md
//! *** Move to: notes/b.md
//! @@ ## Heading
//!  context
//! -removed
//! +added
//! *** End of File
//! *** Delete File: notes/old.md
//! *** End Patch
//! ```

use super::{EventError, FileLevel};

/// One file of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchFile {
    /// The path as written in the patch.
    pub path: String,
    /// What the patch does to it.
    pub op: PatchOp,
}

/// What a patch does to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchOp {
    /// `*** Add File`: the file with this content.
    Add(String),
    /// `*** Delete File`.
    Delete,
    /// `*** Update File`, optionally `*** Move to`.
    Update {
        /// `*** Move to`, as written.
        move_to: Option<String>,
        /// The hunks, in order.
        hunks: Vec<Hunk>,
    },
}

/// One `@@` hunk.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hunk {
    /// The text after `@@`, a line to find first (often a heading or a
    /// function), if any.
    pub header: Option<String>,
    /// The lines: context, removed, added.
    pub lines: Vec<HunkLine>,
    /// `*** End of File`: the hunk ends at the end of the file.
    pub end_of_file: bool,
}

/// A line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine {
    /// ` line`: kept.
    Context(String),
    /// `-line`: removed.
    Remove(String),
    /// `+line`: added.
    Add(String),
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const EOF: &str = "*** End of File";

/// Reads the patch in `text` (which may carry a shell heredoc around it).
pub fn parse(text: &str) -> Result<Vec<PatchFile>, EventError> {
    let err = |m: String| EventError::Patch(m);
    let mut lines = text.lines().skip_while(|l| l.trim() != BEGIN);
    if lines.next().is_none() {
        return Err(err(format!("no `{BEGIN}` line")));
    }
    let mut files: Vec<PatchFile> = Vec::new();
    let mut ended = false;
    for (n, raw) in lines.enumerate() {
        let line_no = n + 2;
        let marker = raw.trim();
        if marker == END {
            ended = true;
            break;
        }
        if let Some(file) = file_header(marker, line_no)? {
            files.push(file);
            continue;
        }
        let Some(file) = files.last_mut() else {
            return Err(err(format!("line {line_no}: text before the first file")));
        };
        file_line(&mut file.op, raw, line_no)?;
    }
    if !ended {
        return Err(err(format!("no `{END}` line")));
    }
    if files.is_empty() {
        return Err(err("the patch names no file".into()));
    }
    for f in &files {
        if let PatchOp::Update {
            move_to: None,
            hunks,
        } = &f.op
            && hunks.iter().all(|h| h.lines.is_empty())
        {
            return Err(err(format!("`{}` is updated with no hunk", f.path)));
        }
    }
    Ok(files)
}

/// A line that starts a file: `*** Add File:`, `*** Delete File:` or
/// `*** Update File:`.
fn file_header(marker: &str, line_no: usize) -> Result<Option<PatchFile>, EventError> {
    let file = |p: &str, op: PatchOp| -> Result<Option<PatchFile>, EventError> {
        Ok(Some(PatchFile {
            path: path(p, line_no)?,
            op,
        }))
    };
    if let Some(p) = marker.strip_prefix(ADD) {
        return file(p, PatchOp::Add(String::new()));
    }
    if let Some(p) = marker.strip_prefix(DELETE) {
        return file(p, PatchOp::Delete);
    }
    if let Some(p) = marker.strip_prefix(UPDATE) {
        return file(
            p,
            PatchOp::Update {
                move_to: None,
                hunks: Vec::new(),
            },
        );
    }
    Ok(None)
}

/// A line of the current file: its content when added, nothing when
/// deleted, a move or a hunk when updated.
fn file_line(op: &mut PatchOp, raw: &str, line_no: usize) -> Result<(), EventError> {
    let err = |m: String| EventError::Patch(m);
    let marker = raw.trim();
    match op {
        PatchOp::Add(content) => match raw.strip_prefix('+') {
            Some(l) => {
                content.push_str(l);
                content.push('\n');
            }
            None => {
                return Err(err(format!(
                    "line {line_no}: a line of an added file must start with `+`"
                )));
            }
        },
        PatchOp::Delete => {
            if !marker.is_empty() {
                return Err(err(format!("line {line_no}: text after `{DELETE}`")));
            }
        }
        PatchOp::Update { move_to, hunks } => {
            if let Some(p) = marker.strip_prefix(MOVE) {
                if move_to.is_some() || !hunks.is_empty() {
                    return Err(err(format!("line {line_no}: `{MOVE}` out of place")));
                }
                *move_to = Some(path(p, line_no)?);
            } else if marker == EOF {
                match hunks.last_mut() {
                    Some(h) => h.end_of_file = true,
                    None => return Err(err(format!("line {line_no}: `{EOF}` before a hunk"))),
                }
            } else if let Some(h) = raw.strip_prefix("@@") {
                let h = h.trim();
                hunks.push(Hunk {
                    header: (!h.is_empty()).then(|| h.to_string()),
                    ..Hunk::default()
                });
            } else {
                let hl = hunk_line(raw, line_no)?;
                // The first hunk may come without its `@@` line.
                if hunks.is_empty() || hunks.last().is_some_and(|h| h.end_of_file) {
                    hunks.push(Hunk::default());
                }
                if let Some(h) = hunks.last_mut() {
                    h.lines.push(hl);
                }
            }
        }
    }
    Ok(())
}

/// A line of a hunk: context, removed or added.
fn hunk_line(raw: &str, line_no: usize) -> Result<HunkLine, EventError> {
    Ok(match raw.chars().next() {
        Some(' ') => HunkLine::Context(raw[1..].to_string()),
        Some('-') => HunkLine::Remove(raw[1..].to_string()),
        Some('+') => HunkLine::Add(raw[1..].to_string()),
        // An empty line inside a hunk is an empty context line.
        None => HunkLine::Context(String::new()),
        Some(_) => {
            return Err(EventError::Patch(format!(
                "line {line_no}: a hunk line must start with ` `, `-` or `+`"
            )));
        }
    })
}

fn path(p: &str, line_no: usize) -> Result<String, EventError> {
    let p = p.trim();
    if p.is_empty() {
        Err(EventError::Patch(format!("line {line_no}: no path")))
    } else {
        Ok(p.to_string())
    }
}

/// `text` with `hunks` applied, the way `apply_patch` finds them: each hunk
/// after the one before, its `@@` line first, lines compared exactly, then
/// without trailing blanks, then trimmed. The result ends with a newline.
pub fn apply_hunks(text: &str, hunks: &[Hunk]) -> Result<String, FileLevel> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    let mut cursor = 0;
    let mut changes: Vec<(usize, usize, Vec<&str>)> = Vec::new();
    for h in hunks {
        if let Some(header) = &h.header {
            match seek(
                &lines,
                std::slice::from_ref(&header.as_str()),
                cursor,
                false,
            ) {
                Some(i) => cursor = i + 1,
                None => return Err(FileLevel::HunkNotFound(header.clone())),
            }
        }
        let mut old: Vec<&str> = Vec::new();
        let mut new: Vec<&str> = Vec::new();
        for l in &h.lines {
            match l {
                HunkLine::Context(s) => {
                    old.push(s);
                    new.push(s);
                }
                HunkLine::Remove(s) => old.push(s),
                HunkLine::Add(s) => new.push(s),
            }
        }
        if old.is_empty() {
            // Only added lines: they go at the end of the file.
            changes.push((lines.len(), 0, new));
            continue;
        }
        let mut found = seek(&lines, &old, cursor, h.end_of_file);
        if found.is_none() && old.last() == Some(&"") {
            // A trailing empty context line stands for the file's last newline.
            old.pop();
            if new.last() == Some(&"") {
                new.pop();
            }
            found = seek(&lines, &old, cursor, h.end_of_file);
        }
        let Some(at) = found else {
            return Err(FileLevel::HunkNotFound(old.join("\n")));
        };
        cursor = at + old.len();
        changes.push((at, old.len(), new));
    }
    changes.sort_by_key(|c| c.0);
    for w in changes.windows(2) {
        if w[0].0 + w[0].1 > w[1].0 {
            return Err(FileLevel::HunkNotFound("two hunks overlap".into()));
        }
    }
    for (at, len, new) in changes.into_iter().rev() {
        lines.splice(at..at + len, new);
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

/// Where `pattern` starts in `lines` at or after `from`: exact match first,
/// then ignoring trailing blanks, then ignoring blanks at both ends. With
/// `eof`, a match at the very end is tried first.
fn seek(lines: &[&str], pattern: &[&str], from: usize, eof: bool) -> Option<usize> {
    if pattern.len() > lines.len() {
        return None;
    }
    let last = lines.len() - pattern.len();
    let same = |at: usize, f: &dyn Fn(&str) -> String| {
        pattern
            .iter()
            .zip(&lines[at..at + pattern.len()])
            .all(|(p, l)| f(p) == f(l))
    };
    let tests: [&dyn Fn(&str) -> String; 3] =
        [&|s| s.to_string(), &|s| s.trim_end().to_string(), &|s| {
            s.trim().to_string()
        }];
    for f in tests {
        if eof && last >= from && same(last, f) {
            return Some(last);
        }
        if let Some(at) = (from..=last).find(|&at| same(at, f)) {
            return Some(at);
        }
    }
    None
}

/// A unified diff (`git diff`'s, what `git apply` reads), as what it does
/// to each file: `(path, op)`, paths as the diff names them (`a/`, `b/`
/// taken off); `reverse` reads it as `git apply -R` does. Hunks carry
/// their lines, not their numbers, so they apply as the patches of Codex
/// do ([`apply_hunks`]). A diff bsi cannot read (a binary patch, a
/// rename) is left out: empty.
pub fn unified(text: &str, reverse: bool) -> Vec<(String, crate::agents::EditOp)> {
    use crate::agents::EditOp;
    let strip = |p: &str| -> Option<String> {
        let p = p.split('\t').next().unwrap_or(p).trim_end();
        if p == "/dev/null" {
            return None;
        }
        Some(
            p.strip_prefix("a/")
                .or_else(|| p.strip_prefix("b/"))
                .unwrap_or(p)
                .to_string(),
        )
    };
    struct File {
        old: Option<String>,
        new: Option<String>,
        hunks: Vec<Hunk>,
    }
    let mut files: Vec<File> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(old) = line.strip_prefix("--- ") {
            let Some(new) = lines.peek().and_then(|l| l.strip_prefix("+++ ")) else {
                continue;
            };
            files.push(File {
                old: strip(old),
                new: strip(new),
                hunks: Vec::new(),
            });
            lines.next();
        } else if line.starts_with("@@") {
            let Some(f) = files.last_mut() else { continue };
            f.hunks.push(Hunk::default());
        } else if let Some(h) = files.last_mut().and_then(|f| f.hunks.last_mut()) {
            let (kind, rest) = line.split_at(line.len().min(1));
            let rest = rest.to_string();
            h.lines.push(match (kind, reverse) {
                (" ", _) | ("", _) => HunkLine::Context(rest),
                ("-", false) | ("+", true) => HunkLine::Remove(rest),
                ("+", false) | ("-", true) => HunkLine::Add(rest),
                // `\ No newline at end of file`, `diff --git`, an index line.
                _ => continue,
            });
        }
    }
    files
        .into_iter()
        .filter_map(|f| {
            let (from, to) = if reverse {
                (f.new, f.old)
            } else {
                (f.old, f.new)
            };
            match (from, to) {
                // A new file: its added lines.
                (None, Some(to)) => {
                    let content: String = f
                        .hunks
                        .iter()
                        .flat_map(|h| &h.lines)
                        .filter_map(|l| match l {
                            HunkLine::Add(t) => Some(format!("{t}\n")),
                            _ => None,
                        })
                        .collect();
                    Some((to, EditOp::Write { content }))
                }
                (Some(from), None) => Some((from, EditOp::Delete)),
                (Some(from), Some(to)) if from == to => Some((from, EditOp::Patch(f.hunks))),
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "*** Begin Patch
*** Add File: notes/new.md
+# New
+
+text
*** Update File: notes/a.md
@@ ## Two
 two text
-old line
+new line
*** Delete File: notes/gone.md
*** Update File: notes/from.md
*** Move to: notes/to.md
@@
-x
+y
*** End Patch
";

    #[test]
    fn every_file_of_a_patch_is_read() {
        let files = parse(PATCH).expect("parses");
        assert_eq!(files.len(), 4);
        assert_eq!(files[0].path, "notes/new.md");
        assert_eq!(files[0].op, PatchOp::Add("# New\n\ntext\n".into()));
        assert_eq!(files[2].op, PatchOp::Delete);
        let PatchOp::Update { move_to, hunks } = &files[1].op else {
            panic!("update expected");
        };
        assert_eq!(move_to, &None);
        assert_eq!(hunks[0].header.as_deref(), Some("## Two"));
        assert_eq!(
            hunks[0].lines,
            vec![
                HunkLine::Context("two text".into()),
                HunkLine::Remove("old line".into()),
                HunkLine::Add("new line".into()),
            ]
        );
        let PatchOp::Update { move_to, .. } = &files[3].op else {
            panic!("move expected");
        };
        assert_eq!(move_to.as_deref(), Some("notes/to.md"));
    }

    #[test]
    fn a_heredoc_around_the_patch_is_ignored() {
        let cmd = format!("apply_patch <<'EOF'\n{PATCH}EOF\n");
        assert_eq!(parse(&cmd).expect("parses").len(), 4);
    }

    #[test]
    fn malformed_patches_are_errors() {
        for bad in [
            "",
            "no patch here",
            "*** Begin Patch\n*** Add File: a.md\n+x\n",
            "*** Begin Patch\n*** End Patch\n",
            "*** Begin Patch\nstray\n*** End Patch\n",
            "*** Begin Patch\n*** Add File: a.md\nx\n*** End Patch\n",
            "*** Begin Patch\n*** Update File: a.md\n*** End Patch\n",
            "*** Begin Patch\n*** Update File: a.md\n@@\n?x\n*** End Patch\n",
            "*** Begin Patch\n*** Add File: \n+x\n*** End Patch\n",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    fn hunks(patch: &str) -> Vec<Hunk> {
        match parse(patch).expect("parses").remove(0).op {
            PatchOp::Update { hunks, .. } => hunks,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn hunks_apply_after_their_header() {
        let text = "# A\n\nsame\n\n## Two\n\nsame\n";
        let h = hunks(
            "*** Begin Patch\n*** Update File: a.md\n@@ ## Two\n \n-same\n+changed\n*** End Patch\n",
        );
        assert_eq!(
            apply_hunks(text, &h),
            Ok("# A\n\nsame\n\n## Two\n\nchanged\n".into())
        );
    }

    #[test]
    fn a_hunk_without_header_and_fuzzy_whitespace() {
        let h = hunks("*** Begin Patch\n*** Update File: a.md\n-b  \n+B\n*** End Patch\n");
        assert_eq!(apply_hunks("a\nb\nc", &h), Ok("a\nB\nc\n".into()));
    }

    #[test]
    fn end_of_file_hunks_match_at_the_end() {
        let h = hunks(
            "*** Begin Patch\n*** Update File: a.md\n@@\n-x\n+y\n*** End of File\n*** End Patch\n",
        );
        assert_eq!(apply_hunks("x\nm\nx\n", &h), Ok("x\nm\ny\n".into()));
    }

    #[test]
    fn pure_additions_go_at_the_end() {
        let h = hunks("*** Begin Patch\n*** Update File: a.md\n@@\n+tail\n*** End Patch\n");
        assert_eq!(apply_hunks("a\n", &h), Ok("a\ntail\n".into()));
    }

    #[test]
    fn a_hunk_that_does_not_match_is_file_level() {
        let h = hunks("*** Begin Patch\n*** Update File: a.md\n@@\n-nowhere\n+y\n*** End Patch\n");
        assert!(matches!(
            apply_hunks("a\n", &h),
            Err(FileLevel::HunkNotFound(_))
        ));
        let h = hunks("*** Begin Patch\n*** Update File: a.md\n@@ ## Missing\n-a\n*** End Patch\n");
        assert_eq!(
            apply_hunks("a\n", &h),
            Err(FileLevel::HunkNotFound("## Missing".into()))
        );
    }

    #[test]
    fn several_hunks_apply_in_order() {
        let h = hunks(
            "*** Begin Patch\n*** Update File: a.md\n@@\n-a\n+A\n@@\n-a\n+AA\n*** End Patch\n",
        );
        assert_eq!(apply_hunks("a\nb\na\n", &h), Ok("A\nb\nAA\n".into()));
    }

    #[test]
    fn a_unified_diff_reads_forward_and_reversed() {
        use crate::agents::EditOp;
        let diff = "diff --git a/notes/a.md b/notes/a.md\nindex 1..2 100644\n--- a/notes/a.md\n+++ b/notes/a.md\n@@ -1,3 +1,3 @@\n # A\n-old\n+new\n keep\ndiff --git a/n.md b/n.md\nnew file mode 100644\n--- /dev/null\n+++ b/n.md\n@@ -0,0 +1 @@\n+born\n";
        let fwd = unified(diff, false);
        assert_eq!(fwd.len(), 2);
        let EditOp::Patch(h) = &fwd[0].1 else {
            panic!("{fwd:?}")
        };
        assert_eq!(fwd[0].0, "notes/a.md");
        assert_eq!(
            apply_hunks("# A\nold\nkeep\n", h).expect("applies"),
            "# A\nnew\nkeep\n"
        );
        assert_eq!(
            fwd[1],
            (
                "n.md".to_string(),
                EditOp::Write {
                    content: "born\n".into()
                }
            )
        );
        let back = unified(diff, true);
        let EditOp::Patch(h) = &back[0].1 else {
            panic!("{back:?}")
        };
        assert_eq!(
            apply_hunks("# A\nnew\nkeep\n", h).expect("applies"),
            "# A\nold\nkeep\n"
        );
        assert_eq!(back[1], ("n.md".to_string(), EditOp::Delete));
    }
}
