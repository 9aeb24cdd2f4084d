//! A session's uncommitted work, kept where no hook is needed to save it:
//! a copy of each file it changed inside its claims, in git objects under
//! `refs/bsi/keep/<session>` (never pushed), with the text HEAD had for
//! the file when the copy was taken. A person's `git stash`, a hand `git
//! reset --hard`, a crash or a bad revert take the work out of the files;
//! the copy brings the session's own lines back — hunk by hunk, only where
//! the file has not changed since, never over newer lines.
//!
//! Pure: which copy to keep of a file, and what putting a copy back makes
//! of the file as it is now. The reading and writing of the copies is
//! [`crate::api::keep`]'s.

use crate::changes::{keep_hunks, keeps_added, merge3, text_change};
use crate::guard::ClaimIndex;
use crate::guard::own::{Taken, take};

/// Where a session's copy lives: a reference of this clone, never pushed.
pub fn refname(session: &str) -> String {
    format!("refs/bsi/keep/{session}")
}

/// One file of a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// From the brain root, with `/`.
    pub rel: String,
    /// What HEAD had of the file when the copy was taken (`None`: HEAD
    /// had no such file).
    pub base: Option<String>,
    /// The file as the session left it.
    pub text: String,
}

/// What a refresh does with the copy of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refresh {
    /// The file as it is now becomes the copy.
    Take,
    /// The copy stays as it is: the file lacks lines of the session's that
    /// the copy has, and HEAD lacks them too — something took them.
    Keep,
    /// No copy of the file is needed: nothing of the session's is
    /// uncommitted in it.
    Drop,
}

/// The session's own part of a change from `base` to `text`: `base` with
/// the session's hunks made; `None` when it has none.
fn own(
    index: &ClaimIndex<'_>,
    session: &str,
    rel: &str,
    base: Option<&str>,
    text: &str,
    markdown: &[String],
) -> Option<String> {
    if base == Some(text) {
        return None;
    }
    match take(index, session, rel, base, Some(text), markdown) {
        Taken::Whole(Some(t)) => Some(t),
        Taken::Part { text, .. } => Some(text),
        Taken::Whole(None) | Taken::Nothing(_) => None,
    }
}

fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// `theirs` (a change from `base`) made on `ours` as well, git's way;
/// `None` on a conflict.
fn merged(base: &str, ours: &str, theirs: &str) -> Option<String> {
    merge3(&lines(base), &lines(ours), &lines(theirs)).map(|l| l.concat())
}

/// Which copy of `rel` to keep, its file being `now` in the work tree
/// (`None`: gone) and `head` at HEAD, the copy kept so far `kept`;
/// `index` holds the session's claims.
pub fn refresh(
    index: &ClaimIndex<'_>,
    (session, rel): (&str, &str),
    kept: Option<&Kept>,
    (head, now): (Option<&str>, Option<&str>),
    markdown: &[String],
) -> Refresh {
    let mine_now = now.is_some_and(|n| own(index, session, rel, head, n, markdown).is_some());
    let Some(k) = kept else {
        return if mine_now {
            Refresh::Take
        } else {
            Refresh::Drop
        };
    };
    let base = k.base.as_deref().unwrap_or("");
    let Some(part) = own(index, session, rel, k.base.as_deref(), &k.text, markdown) else {
        return if mine_now {
            Refresh::Take
        } else {
            Refresh::Drop
        };
    };
    // The copy's lines of the session, still in the file or in HEAD?
    let holds = |t: Option<&str>| {
        t.is_some_and(|t| {
            merged(base, t, &part).as_deref() == Some(t) || keeps_added(base, &part, t)
        })
    };
    if holds(now) || holds(head) {
        if mine_now {
            Refresh::Take
        } else {
            Refresh::Drop
        }
    } else {
        Refresh::Keep
    }
}

/// What putting back the copy `kept` makes of its file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restore {
    /// The file's new text; `None`: it stays as it is.
    pub text: Option<String>,
    /// The parts put back: each the heading of the section whose lines
    /// they are (`None`: lines before the first heading, or a file without
    /// headings).
    pub restored: Vec<Option<String>>,
    /// The parts left, the file having other lines there now.
    pub left: Vec<Option<String>>,
    /// Left whole: the file was deleted since the copy (it was tracked).
    pub deleted: bool,
}

/// What putting back the session's lines of `kept` makes of its file,
/// `now` in the work tree (`None`: gone). Only the session's own hunks of
/// the copy (those `index`, its claims, makes its own) come back, each
/// only where the file still has the lines HEAD had when the copy was
/// taken: a part changed since is left as it is.
pub fn restore(
    index: &ClaimIndex<'_>,
    session: &str,
    kept: &Kept,
    now: Option<&str>,
    markdown: &[String],
) -> Restore {
    let Some(part) = own(
        index,
        session,
        &kept.rel,
        kept.base.as_deref(),
        &kept.text,
        markdown,
    ) else {
        return Restore::default();
    };
    let base = kept.base.as_deref().unwrap_or("");
    let Some(now) = now else {
        if kept.base.is_some() {
            return Restore {
                deleted: true,
                ..Restore::default()
            };
        }
        return Restore {
            restored: parts("", &part),
            text: Some(part),
            ..Restore::default()
        };
    };
    let (text, left) = if let Some(t) = merged(base, now, &part) {
        (t, Vec::new())
    } else {
        // Hunk by hunk: those that meet no newer lines.
        let fits = keep_hunks(base, &part, |alone| merged(base, now, alone).is_some());
        let text = merged(base, now, &fits).unwrap_or_else(|| now.to_string());
        (text, parts(&fits, &part))
    };
    Restore {
        restored: parts(now, &text),
        text: (text != now).then_some(text),
        left,
        deleted: false,
    }
}

/// The headings of the sections a change from `old` to `new` touches,
/// each once, in order (`None`: the lines before the first heading).
fn parts(old: &str, new: &str) -> Vec<Option<String>> {
    let mut out: Vec<Option<String>> = Vec::new();
    for t in text_change(old, new).touched {
        if !out.contains(&t.heading) {
            out.push(t.heading);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::tests::claim;
    use crate::registry::Claim;
    use crate::scope::Scope;

    const PLAN: &str = "# Plan\n\n## Risks\n\nrisk\n\n## Budget\n\nbudget\n";

    fn section(session: &str, heading: &str) -> Claim {
        claim(
            session,
            "agent",
            Scope::Section {
                file: "plan.md".into(),
                heading: heading.into(),
            },
        )
    }

    fn kept(text: &str) -> Kept {
        Kept {
            rel: "plan.md".into(),
            base: Some(PLAN.into()),
            text: text.into(),
        }
    }

    #[test]
    fn a_stashed_section_comes_back_and_the_others_lines_stay_out() {
        let ada = section("ada", "Risks");
        let index = ClaimIndex::from_claims([(&ada, false)]);
        // The copy has ada's line and bo's; the file is back at HEAD.
        let copy = PLAN
            .replace("risk\n", "risk\nada's line\n")
            .replace("budget\n", "budget\nbo's line\n");
        let r = restore(&index, "ada", &kept(&copy), Some(PLAN), &[]);
        assert_eq!(
            r.text.as_deref(),
            Some(PLAN.replace("risk\n", "risk\nada's line\n").as_str())
        );
        assert_eq!(r.restored, vec![Some("Risks".to_string())]);
        assert!(r.left.is_empty());
    }

    #[test]
    fn newer_lines_are_never_written_over() {
        let ada = section("ada", "Risks");
        let index = ClaimIndex::from_claims([(&ada, false)]);
        let copy = PLAN.replace("risk\n", "risk\nada's line\n");
        // Someone wrote in the same place since: left, said.
        let now = PLAN.replace("risk\n", "risk\nnewer line\n");
        let r = restore(&index, "ada", &kept(&copy), Some(&now), &[]);
        assert_eq!(r.text, None);
        assert_eq!(r.left, vec![Some("Risks".to_string())]);
        // Lines elsewhere do not stand in the way.
        let now = PLAN.replace("budget\n", "budget\nbo's line\n");
        let r = restore(&index, "ada", &kept(&copy), Some(&now), &[]);
        assert_eq!(
            r.text.as_deref(),
            Some(now.replace("risk\n", "risk\nada's line\n").as_str())
        );
        // Already there: nothing to do.
        let r = restore(&index, "ada", &kept(&copy), Some(&copy), &[]);
        assert_eq!(r, Restore::default());
    }

    #[test]
    fn a_new_file_gone_comes_back_whole_a_deleted_tracked_one_is_left() {
        let notes = claim("ada", "agent", Scope::Dir("notes/".into()));
        let index = ClaimIndex::from_claims([(&notes, false)]);
        let new = Kept {
            rel: "notes/idea.md".into(),
            base: None,
            text: "# Idea\n\ntext\n".into(),
        };
        let r = restore(&index, "ada", &new, None, &[]);
        assert_eq!(r.text.as_deref(), Some("# Idea\n\ntext\n"));
        let tracked = Kept {
            base: Some("# Idea\n".into()),
            ..new
        };
        let r = restore(&index, "ada", &tracked, None, &[]);
        assert!(r.deleted && r.text.is_none());
    }

    #[test]
    fn a_refresh_never_trades_kept_lines_for_a_file_that_lost_them() {
        let ada = section("ada", "Risks");
        let index = ClaimIndex::from_claims([(&ada, false)]);
        let copy = kept(&PLAN.replace("risk\n", "risk\nada's line\n"));
        // Stashed: the file and HEAD lack the line.
        assert_eq!(
            refresh(
                &index,
                ("ada", "plan.md"),
                Some(&copy),
                (Some(PLAN), Some(PLAN)),
                &[]
            ),
            Refresh::Keep
        );
        // Committed: HEAD has it.
        let head = copy.text.clone();
        assert_eq!(
            refresh(
                &index,
                ("ada", "plan.md"),
                Some(&copy),
                (Some(&head), Some(&head)),
                &[]
            ),
            Refresh::Drop
        );
        // More work since: the file is the copy now.
        let more = copy.text.replace("ada's line\n", "ada's line\nand more\n");
        assert_eq!(
            refresh(
                &index,
                ("ada", "plan.md"),
                Some(&copy),
                (Some(PLAN), Some(&more)),
                &[]
            ),
            Refresh::Take
        );
        assert_eq!(
            refresh(
                &index,
                ("ada", "plan.md"),
                None,
                (Some(PLAN), Some(&more)),
                &[]
            ),
            Refresh::Take
        );
        assert_eq!(
            refresh(
                &index,
                ("ada", "plan.md"),
                None,
                (Some(PLAN), Some(PLAN)),
                &[]
            ),
            Refresh::Drop
        );
    }
}
