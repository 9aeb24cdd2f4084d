//! A session's own lines of a changed file, for `bsi commit`: in a work
//! tree shared by several sessions, the hunks of a file's uncommitted
//! change that lie inside the committing session's claims are its own;
//! the others — inside another session's claim, or in no one's — stay in
//! the work tree. Each hunk is judged on its own by the rule the commit
//! guard judges a change by ([`super::check_change`]), so what `bsi
//! commit` takes, the pre-commit hook lets through. Pure.

use super::{ClaimIndex, Finding, check_change};
use crate::changes::keep_hunks;
use crate::scope::is_markdown;

/// What of one file's change is the session's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taken<'a> {
    /// All of it: the file as the work tree has it (`None`: deleted).
    Whole(Option<String>),
    /// Some hunks: the file as committed with these alone made; the rest
    /// is left, for the reasons in `left`.
    Part {
        text: String,
        left: Vec<Finding<'a>>,
    },
    /// None of it, for these reasons.
    Nothing(Vec<Finding<'a>>),
}

/// What of the change of `path` from `old` (`None`: the file is new) to
/// `new` (`None`: deleted) is `session`'s own.
pub fn take<'a>(
    index: &ClaimIndex<'a>,
    session: &str,
    path: &str,
    old: Option<&str>,
    new: Option<&str>,
    markdown: &[String],
) -> Taken<'a> {
    let against = |old: Option<&str>, new: Option<&str>| -> Vec<Finding<'a>> {
        check_change(index, Some(session), path, old, new, markdown)
            .into_iter()
            // Renaming a heading of one's own section is one's own change.
            .filter(|f| !matches!(f, Finding::HeadingGone { .. }))
            .collect()
    };
    let whole = against(Some(old.unwrap_or("")), new);
    if whole.is_empty() {
        return Taken::Whole(new.map(str::to_string));
    }
    // Hunk by hunk, where a file has sections and both sides are text.
    let (Some(new), true) = (new, is_markdown(path, markdown)) else {
        return Taken::Nothing(whole);
    };
    let base = old.unwrap_or("");
    let mut left = Vec::new();
    let text = keep_hunks(base, new, |alone| {
        let found = against(Some(base), Some(alone));
        let mine = found.is_empty();
        // Another session's hunk is said as theirs, not as also outside
        // one's own claims.
        let theirs = found.iter().any(|f| matches!(f, Finding::Claimed { .. }));
        left.extend(
            found
                .into_iter()
                .filter(|f| !theirs || matches!(f, Finding::Claimed { .. })),
        );
        mine
    });
    if text == base {
        Taken::Nothing(left)
    } else {
        Taken::Part { text, left }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::tests::claim;
    use crate::scope::Scope;

    const PLAN: &str = "# Plan\n\n## Risks\n\nrisk\n\n## Budget\n\nbudget\n";

    fn section(session: &str, heading: &str) -> crate::registry::Claim {
        claim(
            session,
            "agent",
            Scope::Section {
                file: "plan.md".into(),
                heading: heading.into(),
            },
        )
    }

    #[test]
    fn each_session_takes_its_own_hunks_only() {
        let (ada, bo) = (section("ada", "Risks"), section("bo", "Budget"));
        let index = ClaimIndex::from_claims([(&ada, false), (&bo, false)]);
        let both = PLAN
            .replace("risk\n", "risk\nada's line\n")
            .replace("budget\n", "budget\nbo's line\n");
        let ada_takes = take(&index, "ada", "plan.md", Some(PLAN), Some(&both), &[]);
        let Taken::Part { text, left } = ada_takes else {
            panic!("{ada_takes:?}")
        };
        assert_eq!(text, PLAN.replace("risk\n", "risk\nada's line\n"));
        assert!(
            matches!(&left[..], [Finding::Claimed { claim, .. }] if claim.session == "bo"),
            "{left:?}"
        );
        let Taken::Part { text, .. } = take(&index, "bo", "plan.md", Some(PLAN), Some(&both), &[])
        else {
            panic!()
        };
        assert_eq!(text, PLAN.replace("budget\n", "budget\nbo's line\n"));
        // Only one's own change: all of it.
        let mine = PLAN.replace("risk\n", "risk\nmore\n");
        assert_eq!(
            take(&index, "ada", "plan.md", Some(PLAN), Some(&mine), &[]),
            Taken::Whole(Some(mine.clone()))
        );
        // Only the other's: nothing.
        assert!(matches!(
            take(&index, "bo", "plan.md", Some(PLAN), Some(&mine), &[]),
            Taken::Nothing(_)
        ));
    }

    #[test]
    fn a_hunk_in_no_ones_claim_is_left() {
        let ada = section("ada", "Risks");
        let index = ClaimIndex::from_claims([(&ada, false)]);
        let both = PLAN
            .replace("risk\n", "risk\nada's line\n")
            .replace("# Plan\n", "# Plan\nintro\n");
        let Taken::Part { text, left } =
            take(&index, "ada", "plan.md", Some(PLAN), Some(&both), &[])
        else {
            panic!()
        };
        assert_eq!(text, PLAN.replace("risk\n", "risk\nada's line\n"));
        assert!(matches!(&left[..], [Finding::Outside { .. }]), "{left:?}");
    }
}
