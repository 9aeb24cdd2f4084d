//! The one decision on an edit about to be made: let it through, let it
//! through with a warning, refuse it, or claim first. Pure: the edited
//! paths (their links already resolved to the brain files they reach), their
//! text before and after, the registry, the acting session and the rules
//! in; an [`EditDecision`] out.
//!
//! Every door that judges an edit before it happens asks here — the agent
//! tools' edit hooks and MCP's `check` — so they cannot disagree. The rule
//! for the registry's copy, the scopes a claim on the first write takes and
//! its TTL live here once.

use chrono::Duration;

use super::verdict::{self, Judged};
use super::{ClaimIndex, Finding, check_change};
use crate::changes::Kind;
use crate::config::HookMode;
use crate::markdown;
use crate::registry::Registry;
use crate::scope::{Scope, heading_key};

/// One path an edit changes, with its text before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Relative to the brain root, with `/`; any symbolic link in it
    /// resolved. Empty: the work tree itself.
    pub rel: String,
    /// `None`: unknown (the file is judged whole).
    pub old: Option<String>,
    pub new: Option<String>,
    /// A string replacement (a candidate for a section claim).
    pub replace: bool,
    /// How a shell command changes it, when its lines cannot be seen: said
    /// in a refusal (`rewrites it whole (`sed -i`)`).
    pub shell: Option<String>,
    /// It may be a folder that goes or is overwritten (a delete, a move, a
    /// shell rewrite): what is claimed under it is touched too.
    pub deep: bool,
}

impl Target {
    /// A path judged whole: its text before and after is not known.
    pub fn whole(rel: impl Into<String>) -> Target {
        Target {
            rel: rel.into(),
            old: None,
            new: None,
            replace: false,
            shell: None,
            deep: false,
        }
    }
}

/// What the decision is made under, read from the settings by the door.
#[derive(Debug, Clone)]
pub struct Rules {
    /// The clone's hook mode.
    pub mode: HookMode,
    /// `claim_on_write` of `.bsi.toml`: an edit outside the session's
    /// claims that no other session holds is claimed first.
    pub claim_on_write: bool,
    /// The TTL of a claim on the first write ([`crate::settings::Settings::ttl`]).
    pub ttl: Duration,
    /// The registry's copy, relative to the brain root.
    pub copy: String,
    /// The extra markdown extensions of the brain.
    pub markdown: Vec<String>,
}

impl Rules {
    /// The rules a git move that discards uncommitted work
    /// ([`super::discard`]) is judged under: only other sessions' claims
    /// speak against it — a change of one's own, or in no one's claim, may
    /// go, even in strict mode — and nothing is claimed for it.
    pub fn for_discard(mut self) -> Rules {
        self.claim_on_write = false;
        if self.mode == HookMode::Strict {
            self.mode = HookMode::Normal;
        }
        self
    }
}

/// What becomes of an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditDecision<'a> {
    /// Nothing speaks against it.
    Allow,
    /// It goes through, and the agent is told why it should not have
    /// (warn mode: inside other sessions' claims, or the registry's copy).
    Warn {
        /// The registry's copy, when the edit changes it.
        copy: Option<String>,
        /// What lies inside other sessions' claims.
        findings: Vec<Finding<'a>>,
        /// Those findings worded.
        judged: Judged<'a>,
    },
    /// Refused.
    Deny {
        /// The registry's copy, when the edit changes it: refused for that
        /// alone, `findings` empty.
        copy: Option<String>,
        /// What refuses it: other sessions' claims (`claim` empty), or in
        /// strict mode everything, including what lies outside the
        /// session's claims.
        findings: Vec<Finding<'a>>,
        /// Those findings worded.
        judged: Judged<'a>,
        /// Strict mode: the narrowest scopes to claim for what lies outside
        /// the session's claims.
        claim: Vec<Scope>,
    },
    /// Outside the session's claims and free: claim `scopes` for the
    /// session (else `split`, the touched sections apart, when others hold
    /// parts of the file), for `ttl`, then let it through.
    ClaimFirst {
        scopes: Vec<Scope>,
        split: Option<Vec<Scope>>,
        ttl: Duration,
    },
}

/// The decision on an edit whose claim on the first write was refused
/// (other sessions hold parts of what it would claim): the same edit
/// judged again on the registry the refusal saw, with nothing claimed for
/// it. An edit still outside every claim then reads
/// [`EditDecision::Allow`]: the door lets it through, saying the claim
/// could not be made.
pub fn after_refused_claim<'a>(
    reg: &'a Registry,
    session: &str,
    targets: &[Target],
    rules: &Rules,
) -> EditDecision<'a> {
    let again = Rules {
        claim_on_write: false,
        ..rules.clone()
    };
    decide(reg, Some(session), targets, &again)
}

/// The decision on an edit of `targets` by `session` (`None`: unknown, so
/// every claim is another session's and nothing can be claimed for it).
///
/// In order: hook mode `off` lets everything through; the registry's copy
/// is refused (warned about in `warn` mode: the same rule as the
/// pre-commit hook's); another session's claim refuses under the mode; an
/// edit outside the session's claims is claimed first when
/// `claim_on_write` is on; strict mode refuses what is left outside; warn
/// mode warns of what lies in other sessions' claims.
pub fn decide<'a>(
    reg: &'a Registry,
    session: Option<&str>,
    targets: &[Target],
    rules: &Rules,
) -> EditDecision<'a> {
    if rules.mode == HookMode::Off || targets.is_empty() {
        return EditDecision::Allow;
    }
    let index = ClaimIndex::new(reg);
    let findings = check(&index, session, targets, &rules.markdown);
    let theirs: Vec<Finding<'a>> = findings
        .iter()
        .filter(|f| !matches!(f, Finding::Outside { .. }))
        .cloned()
        .collect();
    let judged = verdict::judge(&theirs, session, rules.mode, "edit");
    if let Some(copy) = targets.iter().find(|t| t.rel == rules.copy) {
        let copy = Some(copy.rel.clone());
        if copy_refused(rules.mode) {
            return EditDecision::Deny {
                copy,
                findings: Vec::new(),
                judged: verdict::judge(&[], session, rules.mode, "edit"),
                claim: Vec::new(),
            };
        }
        return EditDecision::Warn {
            copy,
            findings: theirs,
            judged,
        };
    }
    if findings.is_empty() {
        return EditDecision::Allow;
    }
    if judged.refused {
        return EditDecision::Deny {
            copy: None,
            findings: theirs,
            judged,
            claim: Vec::new(),
        };
    }
    let outside: Vec<&Finding<'a>> = findings
        .iter()
        .filter(|f| matches!(f, Finding::Outside { .. }))
        .collect();
    // What others hold cannot be claimed (warn mode gets here with it).
    let held = theirs.iter().any(|f| matches!(f, Finding::Claimed { .. }));
    if rules.claim_on_write && !outside.is_empty() && !held && session.is_some() {
        let scopes = narrowest(targets, &outside);
        let split = Some(by_section(targets, &outside)).filter(|s| *s != scopes);
        return EditDecision::ClaimFirst {
            scopes,
            split,
            ttl: rules.ttl,
        };
    }
    let all = verdict::judge(&findings, session, rules.mode, "edit");
    if all.refused {
        // Strict: an edit outside the session's scopes is refused.
        let claim = narrowest(targets, &outside);
        return EditDecision::Deny {
            copy: None,
            findings,
            judged: all,
            claim,
        };
    }
    if rules.mode == HookMode::Warn && !theirs.is_empty() {
        return EditDecision::Warn {
            copy: None,
            findings: theirs,
            judged,
        };
    }
    EditDecision::Allow
}

/// Whether an edit of the registry's copy is refused under `mode` (warn
/// mode only warns): the one rule for every door, the pre-commit hook's
/// staged copy included.
pub fn copy_refused(mode: HookMode) -> bool {
    verdict::refuses_claimed(mode)
}

/// The guard's findings on every target.
pub fn check<'a>(
    index: &ClaimIndex<'a>,
    session: Option<&str>,
    targets: &[Target],
    md: &[String],
) -> Vec<Finding<'a>> {
    targets
        .iter()
        .flat_map(|t| {
            check_change(
                index,
                session,
                &t.rel,
                t.old.as_deref(),
                t.new.as_deref(),
                md,
            )
        })
        .collect()
}

/// What is claimed under a target that may be a folder going away or
/// overwritten (`rm -r projets`, `mv projets old`, `git checkout .`): each
/// claimed path below it becomes a target of its own, judged whole. The
/// work tree itself (an empty `rel`) holds every claim.
pub fn under_folders(targets: &mut Vec<Target>, reg: &Registry) {
    let mut more: Vec<Target> = Vec::new();
    for t in targets.iter().filter(|t| t.deep) {
        let prefix = if t.rel.is_empty() {
            String::new()
        } else {
            format!("{}/", t.rel)
        };
        for (c, _) in reg.all_claims() {
            let path = match &c.scope {
                Scope::File(f) | Scope::Section { file: f, .. } => f.as_str(),
                Scope::Dir(d) => d.trim_end_matches('/'),
                Scope::Global => continue,
            };
            if path.starts_with(&prefix)
                && path.len() > prefix.len()
                && !targets.iter().chain(more.iter()).any(|o| o.rel == path)
            {
                more.push(Target {
                    shell: t.shell.clone(),
                    ..Target::whole(path)
                });
            }
        }
    }
    // The work tree itself: under a claim of the whole brain too.
    let root = targets.iter().any(|t| t.rel.is_empty());
    targets.retain(|t| !t.rel.is_empty());
    if root && more.is_empty() && reg.all_claims().any(|(c, _)| c.scope == Scope::Global) {
        more.push(Target::whole("."));
    }
    targets.extend(more);
}

/// The narrowest scopes that hold what lies outside the session's claims:
/// per file, the section for a replacement inside one section, else the
/// file.
pub fn narrowest(targets: &[Target], outside: &[&Finding<'_>]) -> Vec<Scope> {
    scopes_for(targets, outside, false)
}

/// Like [`narrowest`], but each touched section apart where the headings
/// are known: for a file whose other sections are held by others.
fn by_section(targets: &[Target], outside: &[&Finding<'_>]) -> Vec<Scope> {
    scopes_for(targets, outside, true)
}

fn scopes_for(targets: &[Target], outside: &[&Finding<'_>], split: bool) -> Vec<Scope> {
    let mut out: Vec<Scope> = Vec::new();
    let mut files: Vec<&str> = Vec::new();
    for f in outside {
        if let Finding::Outside { path, .. } = f
            && !files.contains(&path.as_str())
        {
            files.push(path);
        }
    }
    for file in files {
        let target = targets.iter().find(|t| t.rel == file);
        let old = target.and_then(|t| t.old.as_deref()).map(markdown::outline);
        let mut headings: Vec<&str> = Vec::new();
        let mut whole = false;
        let regions = outside.iter().filter_map(|f| match f {
            Finding::Outside { path, region } if path == file => Some(region.as_ref()),
            _ => None,
        });
        for region in regions {
            // A section apart: a change in place under a heading the file
            // had before the edit; anything else takes the whole file.
            let heading = region
                .filter(|r| r.kind != Kind::Moved)
                .and_then(|r| r.heading.as_deref())
                .filter(|h| {
                    old.as_ref()
                        .is_some_and(|o| o.find(&heading_key(h)).next().is_some())
                });
            match heading {
                Some(h) if !headings.contains(&h) => headings.push(h),
                Some(_) => {}
                None => whole = true,
            }
        }
        let replace = target.is_some_and(|t| t.replace);
        let one_replace = headings.len() == 1 && replace;
        let sections = !whole && !headings.is_empty() && (one_replace || split);
        if sections {
            out.extend(headings.into_iter().map(|h| Scope::Section {
                file: file.to_string(),
                heading: h.to_string(),
            }));
        } else {
            out.push(Scope::File(file.to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changes::Side;
    use crate::claims::tests::{claim, registry};
    use crate::guard::Region;

    fn reg(claims: &[(&str, &str)]) -> Registry {
        let active: Vec<_> = claims
            .iter()
            .map(|(session, scope)| {
                claim(session, "agent", Scope::parse_stored(scope).expect("scope"))
            })
            .collect();
        registry(&active, &[])
    }

    fn rules(mode: HookMode, claim_on_write: bool) -> Rules {
        Rules {
            mode,
            claim_on_write,
            ttl: Duration::hours(3),
            copy: "BRAIN-INDEX.md".into(),
            markdown: Vec::new(),
        }
    }

    fn edit(rel: &str, old: &str, new: &str) -> Target {
        Target {
            old: Some(old.into()),
            new: Some(new.into()),
            replace: true,
            ..Target::whole(rel)
        }
    }

    const PLAN: &str = "# Plan\n## Goals\ng\n## Risks\nr\n";

    #[test]
    fn another_sessions_claim_refuses_but_in_warn_mode_warns() {
        let r = reg(&[("s2", "plan.md")]);
        let t = [Target::whole("plan.md")];
        for mode in [HookMode::Normal, HookMode::Strict] {
            let d = decide(&r, Some("s1"), &t, &rules(mode, true));
            assert!(
                matches!(&d, EditDecision::Deny { copy: None, findings, claim, .. }
                    if findings.len() == 1 && claim.is_empty()),
                "{mode:?}: {d:?}"
            );
        }
        let d = decide(&r, Some("s1"), &t, &rules(HookMode::Warn, true));
        assert!(
            matches!(&d, EditDecision::Warn { copy: None, findings, .. } if findings.len() == 1),
            "{d:?}"
        );
        assert_eq!(
            decide(&r, Some("s1"), &t, &rules(HookMode::Off, true)),
            EditDecision::Allow
        );
    }

    #[test]
    fn the_registry_copy_is_refused_except_in_warn_mode() {
        let r = reg(&[]);
        let t = [Target::whole("BRAIN-INDEX.md")];
        for mode in [HookMode::Normal, HookMode::Strict] {
            let d = decide(&r, Some("s1"), &t, &rules(mode, true));
            assert!(
                matches!(&d, EditDecision::Deny { copy: Some(c), .. } if c == "BRAIN-INDEX.md"),
                "{mode:?}: {d:?}"
            );
        }
        let d = decide(&r, Some("s1"), &t, &rules(HookMode::Warn, true));
        assert!(
            matches!(&d, EditDecision::Warn { copy: Some(c), .. } if c == "BRAIN-INDEX.md"),
            "{d:?}"
        );
        assert!(!copy_refused(HookMode::Warn) && copy_refused(HookMode::Normal));
    }

    #[test]
    fn a_free_edit_outside_the_session_is_claimed_first_with_the_settings_ttl() {
        let r = reg(&[("s2", "plan.md#Risks")]);
        let t = [edit("plan.md", PLAN, &PLAN.replace("\ng\n", "\ngoals\n"))];
        let d = decide(&r, Some("s1"), &t, &rules(HookMode::Normal, true));
        assert_eq!(
            d,
            EditDecision::ClaimFirst {
                scopes: vec![Scope::Section {
                    file: "plan.md".into(),
                    heading: "Goals".into()
                }],
                split: None,
                ttl: Duration::hours(3),
            }
        );
        // No session: nothing can be claimed for it.
        assert_eq!(
            decide(&r, None, &t, &rules(HookMode::Normal, true)),
            EditDecision::Allow
        );
    }

    #[test]
    fn strict_mode_refuses_an_edit_outside_the_session_and_names_what_to_claim() {
        let r = reg(&[("s1", "other.md")]);
        let t = [Target::whole("plan.md")];
        let d = decide(&r, Some("s1"), &t, &rules(HookMode::Strict, false));
        assert!(
            matches!(&d, EditDecision::Deny { claim, .. }
                if *claim == vec![Scope::File("plan.md".into())]),
            "{d:?}"
        );
        assert_eq!(
            decide(&r, Some("s1"), &t, &rules(HookMode::Normal, false)),
            EditDecision::Allow
        );
    }

    #[test]
    fn a_folder_going_away_takes_the_claims_under_it() {
        let r = reg(&[("s2", "projets/plan.md#Goals"), ("s2", "notes/")]);
        let mut t = vec![Target {
            deep: true,
            ..Target::whole("projets")
        }];
        under_folders(&mut t, &r);
        assert!(t.iter().any(|t| t.rel == "projets/plan.md"), "{t:?}");
        let d = decide(&r, Some("s1"), &t, &rules(HookMode::Normal, false));
        assert!(matches!(d, EditDecision::Deny { .. }), "{d:?}");
    }

    fn outside(path: &str, heading: Option<&str>, kind: Kind) -> Finding<'static> {
        Finding::Outside {
            path: path.into(),
            region: Some(Region {
                side: Side::New,
                kind,
                start: 1,
                end: 1,
                heading: heading.map(String::from),
            }),
        }
    }

    fn target(rel: &str, replace: bool) -> Target {
        Target {
            rel: rel.into(),
            old: Some("# A\n\na\n\n## B\n\nb\n".into()),
            new: None,
            replace,
            shell: None,
            deep: false,
        }
    }

    fn section(h: &str) -> Scope {
        Scope::Section {
            file: "f.md".into(),
            heading: h.into(),
        }
    }

    #[test]
    fn the_narrowest_claim_is_the_section_of_a_replacement_inside_it() {
        let one = [outside("f.md", Some("B"), Kind::Added)];
        let refs: Vec<&Finding<'_>> = one.iter().collect();
        assert_eq!(narrowest(&[target("f.md", true)], &refs), [section("B")]);
        // A whole-file write, or a heading the file does not have yet: the file.
        assert_eq!(
            narrowest(&[target("f.md", false)], &refs),
            [Scope::File("f.md".into())]
        );
        let new = [outside("f.md", Some("C"), Kind::Added)];
        let refs: Vec<&Finding<'_>> = new.iter().collect();
        assert_eq!(
            narrowest(&[target("f.md", true)], &refs),
            [Scope::File("f.md".into())]
        );
        // Two sections: the file, or each section apart.
        let two = [
            outside("f.md", Some("A"), Kind::Added),
            outside("f.md", Some("B"), Kind::Removed),
        ];
        let refs: Vec<&Finding<'_>> = two.iter().collect();
        assert_eq!(
            narrowest(&[target("f.md", true)], &refs),
            [Scope::File("f.md".into())]
        );
        assert_eq!(
            by_section(&[target("f.md", true)], &refs),
            [section("A"), section("B")]
        );
        // Lines moved by a heading change, or a whole-file finding: the file.
        let moved = [outside("f.md", Some("B"), Kind::Moved)];
        let refs: Vec<&Finding<'_>> = moved.iter().collect();
        assert_eq!(
            by_section(&[target("f.md", true)], &refs),
            [Scope::File("f.md".into())]
        );
        let whole = [Finding::Outside {
            path: "f.md".into(),
            region: None,
        }];
        let refs: Vec<&Finding<'_>> = whole.iter().collect();
        assert_eq!(
            narrowest(&[target("f.md", true)], &refs),
            [Scope::File("f.md".into())]
        );
    }
}
