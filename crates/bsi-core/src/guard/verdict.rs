//! The verdict on a change: the guard's findings worded for the person or
//! agent who made it, and what they add up to under the hook mode. One
//! wording for every door — the pre-commit hook, the agent tools' edit
//! hook — and the one place that decides which findings a mode refuses.

use crate::changes::Kind;
use crate::config::HookMode;

use crate::registry::Claim;
use crate::scope::Scope;
use crate::words::{command_line, open_command};

use super::ways::{self, Holder, Standing};
use super::{Finding, Region};

/// Whether `mode` refuses a change inside another session's claim (or one
/// that renames a held heading to one the session does not hold).
pub fn refuses_claimed(mode: HookMode) -> bool {
    !matches!(mode, HookMode::Warn | HookMode::Off)
}

/// Whether `mode` refuses a change outside every scope of the session.
pub fn refuses_outside(mode: HookMode) -> bool {
    mode == HookMode::Strict
}

/// The lines that say the registry's copy is staged (`rel`), and how to
/// take it out of the commit.
pub fn registry_staged(rel: &str, branch: &str, refused: bool) -> [String; 2] {
    [
        format!(
            "bsi: {}: {rel} is staged — it is the copy of the registry, which lives on the branch {branch}; only bsi writes it there",
            label(refused),
        ),
        format!(
            "  take it out of the commit with `{}`, then commit again",
            command_line(["git", "rm", "--cached", rel])
        ),
    ]
}

/// The line that says an edit changes the registry's copy (`rel`), which
/// only bsi writes: refused, or a warning in warn mode.
pub fn copy_edited(rel: &str, branch: &str, refused: bool) -> String {
    format!(
        "bsi: {}: {rel} is the copy of the registry, rewritten by bsi; editing it changes nothing (the live registry is on the branch {branch})",
        label(refused),
    )
}

/// The findings of a change as lines for the person or agent who made it,
/// and what they add up to under `mode`: one wording for the pre-commit
/// hook and the agent tools' edit hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged<'a> {
    /// One line per finding (and the command that settles a rename).
    pub lines: Vec<String>,
    /// Whether `mode` refuses the change.
    pub refused: bool,
    /// The sessions whose claims the change is inside (one per session
    /// and table).
    pub holders: Vec<Holder<'a>>,
    /// What the session can claim for the changes outside its claims that
    /// no other session's claim is in the way of.
    pub outside: Vec<Scope>,
}

/// What the commit guard says of a change a git door judges (a commit, a
/// merge, a branch update): its lines for the committer, in order, and
/// whether `mode` refuses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    /// The registry's copy staged (when it is), the findings, the ways out.
    pub lines: Vec<String>,
    /// Whether the change is refused.
    pub refused: bool,
}

/// Where the change a git door judges comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The index of a work tree (a commit, a merge being committed): the
    /// session may commit its own lines alone.
    Index,
    /// Commits already made, landing on or leaving a branch (a
    /// cherry-pick, a rebase, a reset): there are no lines to pick.
    Commits,
}

/// The commit guard's verdict on a change: `findings` of `change`
/// ("commit", "merge", …) from `source` by `session` under `mode`, and
/// `staged_copy` (the registry's copy, `rel`, and the registry branch)
/// when the change stages it. Nothing said and nothing refused when there
/// is nothing.
pub fn of_change(
    findings: &[Finding<'_>],
    staged_copy: Option<(&str, &str)>,
    (session, source): (Option<&str>, Source),
    (mode, change): (HookMode, &str),
    now: chrono::DateTime<chrono::FixedOffset>,
) -> Said {
    let mut said = Said {
        lines: Vec::new(),
        refused: false,
    };
    if findings.is_empty() && staged_copy.is_none() {
        return said;
    }
    if let Some((rel, branch)) = staged_copy {
        let refuse_copy = refuses_claimed(mode);
        said.refused |= refuse_copy;
        said.lines.extend(registry_staged(rel, branch, refuse_copy));
    }
    let judged = judge(findings, session, mode, change);
    said.refused |= judged.refused;
    said.lines.extend(judged.lines.iter().cloned());
    said.lines
        .extend(ways_out(&judged, session, source == Source::Index, now));
    said
}

/// Words the findings of a change (`change`: "commit", "edit"): [`Judged`].
pub fn judge<'a>(
    findings: &[Finding<'a>],
    session: Option<&str>,
    mode: HookMode,
    change: &str,
) -> Judged<'a> {
    let refuse_claimed = refuses_claimed(mode);
    let refuse_outside = refuses_outside(mode);
    let mut lines: Vec<String> = Vec::new();
    let mut refused = false;
    let mut claimed: Vec<(&'a Claim, bool)> = Vec::new();
    for f in findings {
        match f {
            Finding::Claimed {
                path,
                claim,
                stale,
                region,
            } => {
                refused |= refuse_claimed;
                lines.push(claimed_line(
                    path,
                    claim,
                    *stale,
                    region.as_ref(),
                    refuse_claimed,
                ));
                claimed.push((claim, *stale));
            }
            Finding::Outside { path, region } => {
                refused |= refuse_outside;
                // Lines inside another session's claim are said as such:
                // not again as outside the session's own, which read as if
                // the session had written another's lines.
                let said = findings.iter().any(|g| {
                    matches!(g, Finding::Claimed { path: p, region: r, .. } if p == path && r == region)
                });
                if !said {
                    lines.push(outside_line(path, region.as_ref(), session, refuse_outside));
                }
            }
            Finding::HeadingGone {
                path,
                claim,
                renamed_to,
            } => {
                if !renamed_to.is_empty() {
                    refused |= refuse_claimed;
                }
                heading_gone_lines(&mut lines, path, claim, renamed_to, change, refuse_claimed);
            }
        }
    }
    Judged {
        lines,
        refused,
        holders: ways::holders(claimed),
        outside: outside_to_claim(findings),
    }
}

fn label(refused: bool) -> &'static str {
    if refused { "refused" } else { "warning" }
}

/// A change inside another session's claim.
fn claimed_line(
    path: &str,
    claim: &Claim,
    stale: bool,
    region: Option<&Region>,
    refused: bool,
) -> String {
    let (place, verb) = match region {
        Some(r) => (format!("{path} {}", r.describe()), r.verb()),
        None => (path.to_string(), "is"),
    };
    let agent = if claim.agent.is_empty() {
        "unknown agent".to_string()
    } else {
        format!("agent {}", claim.agent)
    };
    format!(
        "bsi: {}: {place} {verb} inside a{} claim of session {} ({agent}, scope {}, {} {})",
        label(refused),
        if stale { " stale" } else { "n active" },
        claim.session,
        claim.scope,
        if stale { "expired" } else { "expires" },
        crate::ttl::local_zone_ts(claim.expires),
    )
}

/// A change outside every scope the session holds.
fn outside_line(
    path: &str,
    region: Option<&Region>,
    session: Option<&str>,
    refused: bool,
) -> String {
    let who = session.unwrap_or("the session");
    let what = match region {
        Some(r) => format!(
            "{path} {} {} outside the sections {who} holds in this file",
            r.describe(),
            r.verb()
        ),
        None => format!("{path} is outside every scope {who} holds"),
    };
    format!("bsi: {}: {what}", label(refused))
}

/// A change that removes or renames the heading of one of the session's
/// own section claims; a rename to headings it does not hold is refused
/// (`refused`) with the claims to open first.
fn heading_gone_lines(
    lines: &mut Vec<String>,
    path: &str,
    claim: &Claim,
    renamed_to: &[String],
    change: &str,
    refused: bool,
) {
    let heading = match &claim.scope {
        Scope::Section { heading, .. } => heading.as_str(),
        _ => "",
    };
    let who = &claim.session;
    if renamed_to.is_empty() {
        lines.push(format!(
            "bsi: warning: this {change} removes or renames heading `{heading}` of {path}, so the claim {} of {who} names no heading any more; close it with `{}` when done",
            claim.scope,
            command_line(["bsi", "close", who, "--scope", &claim.scope.to_string()])
        ));
        return;
    }
    lines.push(format!(
        "bsi: {}: this {change} renames heading `{heading}` of {path}, which {who} holds, to what {who} does not hold ({}); the claim would then protect nothing",
        label(refused),
        renamed_to
            .iter()
            .map(|h| format!("`{h}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    for h in renamed_to {
        let scope = Scope::Section {
            file: path.to_string(),
            heading: h.clone(),
        };
        lines.push(format!(
            "  claim the new name first: `{}`, then {change} again",
            open_command([&scope], &["--session", who])
        ));
    }
}

/// The paths changed outside the session's claims that no other session's
/// claim is in the way of: what `bsi open` can claim for it. A path with
/// lines in another's claim is left to the ways out of its holder.
/// Lines of one section become that section; anything else the file.
pub fn outside_to_claim(findings: &[Finding<'_>]) -> Vec<Scope> {
    let mut out: Vec<Scope> = Vec::new();
    for f in findings {
        if let Finding::Outside { path, region } = f {
            // Another's claim in the way, or a rename whose own hint names
            // the heading to claim.
            let held = findings.iter().any(|g| match g {
                Finding::Claimed { path: p, .. } => p == path,
                Finding::HeadingGone {
                    path: p,
                    renamed_to,
                    ..
                } => p == path && !renamed_to.is_empty(),
                Finding::Outside { .. } => false,
            });
            let scope = match region.as_ref().filter(|r| r.kind != Kind::Moved) {
                Some(Region {
                    heading: Some(h), ..
                }) => Scope::Section {
                    file: path.clone(),
                    heading: h.clone(),
                },
                _ => Scope::File(path.clone()),
            };
            if !held && !out.contains(&scope) {
                out.push(scope);
            }
        }
    }
    // A whole file already listed covers its sections.
    let whole: Vec<Scope> = out
        .iter()
        .filter(|s| matches!(s, Scope::File(_)))
        .cloned()
        .collect();
    out.retain(|s| match s {
        Scope::Section { file, .. } => !whole.contains(&Scope::File(file.clone())),
        _ => true,
    });
    out
}

/// What the committer can do at `now`: per holder of a claim in the way
/// (as it stands: [`ways`]), and for changes outside the session's claims.
/// With holders at work and the session known, the first way is to commit
/// only the session's own lines (`bsi commit`, which runs the same from any
/// directory of the work tree): in a work tree several sessions share, the
/// lines in the way are often another session's work not yet committed.
/// Freeing a holder at work is never offered.
pub fn ways_out(
    judged: &Judged<'_>,
    session: Option<&str>,
    own_lines: bool,
    now: chrono::DateTime<chrono::FixedOffset>,
) -> Vec<String> {
    let mut lines = Vec::new();
    if !judged.holders.is_empty() && session.is_none() {
        lines.push(
            "  BSI_SESSION is not set, so every claim counts as another session's".to_string(),
        );
    }
    let at_work = judged
        .holders
        .iter()
        .any(|h| h.standing(now) == Standing::Active);
    let commit_own = own_lines && at_work && session.is_some();
    if let (Some(me), true) = (session, commit_own) {
        let words = ["bsi", "commit", "--session", me];
        lines.push(format!(
            "  ways out: commit only your own lines, the other sessions' staying in the work tree as they are: `{}`",
            command_line(words)
        ));
    }
    for h in &judged.holders {
        let s = h.session;
        if session.is_none() {
            // Maybe the committer's own session: never propose that it
            // releases its own claim.
            lines.push(format!(
                "  if {s} is your own session: `export {}`, then run the same git command again",
                crate::words::assignment("BSI_SESSION", s)
            ));
        }
        let whose = if session.is_none() {
            "if it is another's: "
        } else {
            "ways out: "
        };
        lines.push(match h.standing(now) {
            Standing::Active if session.is_none() => {
                format!("  {whose}wait for {s} to close its claim or ask its holder")
            }
            Standing::Active if commit_own => {
                format!("  or wait for {s} to close its claim, or ask its holder")
            }
            Standing::Active => {
                format!("  ways out: wait for {s} to close its claim, or ask its holder")
            }
            Standing::Overdue => format!("  {whose}{}", ways::overdue(s)),
            Standing::Stale => format!("  {whose}{}", ways::stale(s)),
        });
    }
    if !judged.outside.is_empty() {
        let (more, who) = match session {
            Some(s) => (vec!["--session", s], ""),
            None => (Vec::new(), " (as the session that commits)"),
        };
        lines.push(format!(
            "  claim what you change first: `{}`{who}",
            open_command(&judged.outside, &more)
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::tests::claim;

    fn findings(held: &Claim) -> Vec<Finding<'_>> {
        vec![
            Finding::Claimed {
                path: "a.md".into(),
                claim: held,
                stale: false,
                region: None,
            },
            Finding::Outside {
                path: "b.md".into(),
                region: None,
            },
        ]
    }

    #[test]
    fn each_mode_refuses_what_it_promises() {
        assert!(refuses_claimed(HookMode::Normal) && refuses_claimed(HookMode::Strict));
        assert!(!refuses_claimed(HookMode::Warn) && !refuses_claimed(HookMode::Off));
        assert!(refuses_outside(HookMode::Strict));
        assert!(!refuses_outside(HookMode::Normal) && !refuses_outside(HookMode::Warn));
    }

    #[test]
    fn a_change_inside_another_claim_is_refused_and_its_holder_named() {
        let held = claim("s2", "codex", Scope::File("a.md".into()));
        let f = findings(&held);
        let j = judge(&f, Some("s1"), HookMode::Normal, "commit");
        assert!(j.refused);
        let holders: Vec<(&str, bool)> = j.holders.iter().map(|h| (h.session, h.stale)).collect();
        assert_eq!(holders, vec![("s2", false)]);
        assert!(
            j.lines[0].starts_with(
                "bsi: refused: a.md is inside an active claim of session s2 (agent codex"
            ),
            "{}",
            j.lines[0]
        );
        assert!(
            j.lines[1].starts_with("bsi: warning: b.md is outside every scope s1 holds"),
            "{}",
            j.lines[1]
        );
        // What the session can claim: the free path, not the held one.
        assert_eq!(j.outside, vec![Scope::File("b.md".into())]);
        let ways = ways_out(&j, Some("s1"), true, held.opened);
        assert!(
            ways.iter()
                .any(|l| l.contains("wait for s2 to close its claim")),
            "{ways:?}"
        );
        assert!(
            ways.iter()
                .any(|l| l.contains("`bsi open b.md --session s1`")),
            "{ways:?}"
        );
        // One's own lines first; the holder at work is never freed.
        assert!(ways[0].contains("`bsi commit --session s1`"), "{ways:?}");
        assert!(!ways.iter().any(|l| l.contains("release")), "{ways:?}");
    }

    #[test]
    fn warn_mode_refuses_nothing_and_strict_refuses_what_is_outside() {
        let held = claim("s2", "codex", Scope::File("a.md".into()));
        let f = findings(&held);
        let warn = judge(&f, Some("s1"), HookMode::Warn, "commit");
        assert!(!warn.refused);
        assert!(
            warn.lines.iter().all(|l| l.starts_with("bsi: warning:")),
            "{:?}",
            warn.lines
        );
        let outside_only = &f[1..];
        assert!(!judge(outside_only, Some("s1"), HookMode::Normal, "commit").refused);
        let strict = judge(outside_only, Some("s1"), HookMode::Strict, "commit");
        assert!(strict.refused);
        assert!(
            strict.lines[0].starts_with("bsi: refused: b.md is outside"),
            "{:?}",
            strict.lines
        );
    }

    #[test]
    fn without_a_session_every_claim_is_anothers_and_the_hint_says_so() {
        let held = claim("s2", "codex", Scope::File("a.md".into()));
        let f = findings(&held);
        let j = judge(&f, None, HookMode::Normal, "commit");
        let ways = ways_out(&j, None, true, held.opened);
        assert!(ways[0].contains("BSI_SESSION is not set"), "{ways:?}");
        // The holder may be the committer's own session: no release of it.
        assert!(ways[1].contains("`export BSI_SESSION=s2`"), "{ways:?}");
        assert!(!ways.iter().any(|l| l.contains("release")), "{ways:?}");
        assert!(
            ways.iter()
                .any(|l| l.contains("(as the session that commits)")),
            "{ways:?}"
        );
    }

    #[test]
    fn a_stale_holder_is_freed_only_by_a_person() {
        let held = claim("s2", "codex", Scope::File("a.md".into()));
        let f = vec![Finding::Claimed {
            path: "a.md".into(),
            claim: &held,
            stale: true,
            region: None,
        }];
        let j = judge(&f, Some("s1"), HookMode::Normal, "edit");
        assert!(j.refused);
        assert!(
            j.lines[0].contains("inside a stale claim"),
            "{}",
            j.lines[0]
        );
        let ways = ways_out(&j, Some("s1"), true, held.opened);
        assert!(
            ways[0].contains("the claim of s2 is stale")
                && ways[0].contains("`bsi release s2 --confirm`"),
            "{ways:?}"
        );
    }

    #[test]
    fn an_overdue_holder_is_not_waited_for() {
        let held = claim("s2", "codex", Scope::File("a.md".into()));
        let f = findings(&held);
        let j = judge(&f, Some("s1"), HookMode::Normal, "commit");
        let ways = ways_out(&j, Some("s1"), true, held.expires);
        assert!(ways[0].contains("the claim of s2 is overdue"), "{ways:?}");
        assert!(ways[0].contains("`bsi watchdog`"), "{ways:?}");
        assert!(!ways[0].contains("wait for"), "{ways:?}");
    }

    #[test]
    fn a_renamed_held_heading_is_refused_with_the_claim_to_open_first() {
        let own = claim(
            "s1",
            "a",
            Scope::Section {
                file: "p.md".into(),
                heading: "Goals".into(),
            },
        );
        let f = vec![Finding::HeadingGone {
            path: "p.md".into(),
            claim: &own,
            renamed_to: vec!["Aims".into()],
        }];
        let j = judge(&f, Some("s1"), HookMode::Normal, "commit");
        assert!(j.refused);
        assert!(
            j.lines
                .iter()
                .any(|l| l.contains("claim the new name first")),
            "{:?}",
            j.lines
        );
        let gone = vec![Finding::HeadingGone {
            path: "p.md".into(),
            claim: &own,
            renamed_to: Vec::new(),
        }];
        let removed = judge(&gone, Some("s1"), HookMode::Normal, "commit");
        assert!(!removed.refused, "a removed heading is said, not refused");
    }
}
