//! The property of the record of who held what, across two clones: in
//! generated histories of grants, handoffs and closes (the registry, read
//! from two references that each know part of it) and of commits that two
//! clones bring together — a rebase applied cleanly or with a conflict
//! resolved either way, an amend, a merge clean or keeping either side —
//! no change made under its author's own claim is ever refused or told as
//! drift, and every change to a part another session holds is.
//!
//! Pure: the judging rules the audit composes with git's reads — the
//! record ([`Holdings`]), drift ([`drift::drifts`]), a replay judged by
//! what it changes ([`changes::within_edits`]), a merge by what it changes
//! and takes away ([`merge::text_change_of_merge`]) — on texts built here.

use std::collections::BTreeSet;

use proptest::prelude::*;

use crate::changes::{self, Touched};
use crate::drift::{self, Landed};
use crate::guard::merge::{self, Other};
use crate::holdings::sim::{Made, PARTS, SESSIONS, s, simulate, step};
use crate::holdings::{Holdings, Version};
use crate::registry::Claim;
use crate::scope::FlatSections;

/// How the first clone brings its commit and the second's together.
#[derive(Debug, Clone, Copy)]
enum Way {
    /// `git pull --rebase`; on a conflict, its own line kept.
    RebaseKeepMine,
    /// `git pull --rebase`; on a conflict, the other's line kept (the copy
    /// changes nothing).
    RebaseKeepTheirs,
    /// `git commit --amend` of its commit, adding a line, at the end.
    Amend,
    /// `git pull --no-rebase`, git's own merge where the two changed other
    /// sections; on a conflict, its own side kept.
    Merge,
    /// `git merge -s ours`: the result is its own side.
    MergeOurs,
    /// The result is the other side, whole.
    MergeTheirs,
}

fn way() -> impl Strategy<Value = Way> {
    prop_oneof![
        Just(Way::RebaseKeepMine),
        Just(Way::RebaseKeepTheirs),
        Just(Way::Amend),
        Just(Way::Merge),
        Just(Way::MergeOurs),
        Just(Way::MergeTheirs),
    ]
}

/// The file: one section per part, each one line.
fn file(bodies: &[String; 3]) -> String {
    format!(
        "# P\n\n## A\n\n{}\n\n## B\n\n{}\n\n## C\n\n{}\n",
        bodies[0], bodies[1], bodies[2]
    )
}

/// The part a section key names.
fn part_of(key: &Option<String>) -> Option<usize> {
    match key.as_deref() {
        Some("a") => Some(0),
        Some("b") => Some(1),
        Some("c") => Some(2),
        _ => None,
    }
}

/// The parts whose lines a change touches.
fn touched(c: &changes::TextChange) -> BTreeSet<usize> {
    c.touched
        .iter()
        .map(Touched::part)
        .filter_map(|k| part_of(&k))
        .collect()
}

/// The commit guard's rule on a new change by `session` at second `t`:
/// refused when a part it touches is held then by another session.
fn refused_new(h: &Holdings, session: &str, parts: &BTreeSet<usize>, t: i64) -> bool {
    parts.iter().any(|p| {
        h.holder_at(&s(PARTS[*p]), t, &FlatSections)
            .is_some_and(|x| x != session)
    })
}

/// The line a commit of the simulation writes.
fn line(m: &Made) -> String {
    format!("{} wrote at {}", SESSIONS[m.session.unwrap_or(0)], m.time)
}

/// Whether the commit landed where the hooks are: made under its author's
/// own claim, or on a part nobody held.
fn landed(m: &Made) -> bool {
    m.session.is_some() && (m.holder.is_none() || m.holder == m.session)
}

/// The registry's versions as two clones read them: the local branch of
/// one knows a prefix, the remote-tracking copy all, both read, in reverse.
fn two_refs(versions: &[Version], cut: usize) -> Vec<Version> {
    let mut both: Vec<Version> = versions[..cut.min(versions.len())].to_vec();
    both.extend(versions.iter().rev().cloned());
    both
}

/// What the rules decide of bringing `m1` (the first clone's commit, not
/// pushed) and `m2` (the second's, pushed) together in the first clone
/// at second `t`, by `m1`'s session: refused or not.
fn judged(h: &Holdings, m1: &Made, m2: &Made, way: Way, t: i64) -> bool {
    let me = SESSIONS[m1.session.unwrap_or(0)];
    let base: [String; 3] = ["a0".into(), "b0".into(), "c0".into()];
    let mut ours = base.clone();
    ours[m1.part] = line(m1);
    let mut theirs = base.clone();
    theirs[m2.part] = line(m2);
    let conflict = m1.part == m2.part;
    let (b, o, th) = (file(&base), file(&ours), file(&theirs));
    // A copy of m1 on `parent` whose result is `result`: a replay when it
    // changes no more than m1 did, and m1's session held what m1 changed
    // when it was made; else a new change, judged now.
    let copy = |parent: &str, result: &str, when: i64| {
        let edits = changes::edit_lines(parent, result);
        if edits.0.is_empty() && edits.1.is_empty() {
            return false;
        }
        let parts = touched(&changes::text_change(parent, result));
        let replay = changes::within_edits(&edits, &[changes::edit_lines(&b, &o)])
            && h.held_by(me, &s(PARTS[m1.part]), m1.time, &FlatSections);
        !replay && refused_new(h, me, &parts, when)
    };
    match way {
        Way::RebaseKeepMine => {
            let mut mine = theirs.clone();
            mine[m1.part] = line(m1);
            copy(&th, &file(&mine), t)
        }
        Way::RebaseKeepTheirs => {
            let mut result = theirs.clone();
            if !conflict {
                result[m1.part] = line(m1);
            }
            copy(&th, &file(&result), t)
        }
        Way::Amend => {
            let mut more = ours.clone();
            more[m1.part] = format!("{}\n\nand more at {t}", line(m1));
            copy(&b, &file(&more), t)
        }
        Way::Merge | Way::MergeOurs | Way::MergeTheirs => {
            let result = match way {
                Way::MergeOurs => o.clone(),
                Way::MergeTheirs => th.clone(),
                _ if conflict => o.clone(),
                _ => {
                    let mut both = ours.clone();
                    both[m2.part] = line(m2);
                    file(&both)
                }
            };
            let other = [Other {
                base: b.as_str(),
                theirs: th.as_str(),
            }];
            merge::text_change_of_merge(&o, &other, &result)
                .is_some_and(|c| refused_new(h, me, &touched(&c), t))
        }
    }
}

/// What is true of the same: the parts whose lines the result changes
/// beyond what the two commits, as they landed, bring — each a change
/// the merger or rebaser makes now, refused when another holds it now —,
/// and the replayed commit's own part, refused when it was not made under
/// its author's claim and another holds it now.
fn truth(end: &[Option<usize>; 3], m1: &Made, m2: &Made, way: Way) -> bool {
    let me = m1.session;
    let other_holds = |p: usize| end[p].is_some_and(|x| Some(x) != me);
    let own = m1.holder.is_some() && m1.holder == me;
    let conflict = m1.part == m2.part;
    match way {
        // Its line over the other's: a new change of that part.
        Way::RebaseKeepMine if conflict => other_holds(m1.part),
        // Its own commit copied as it was.
        Way::RebaseKeepMine => !own && other_holds(m1.part),
        Way::RebaseKeepTheirs if conflict => false,
        Way::RebaseKeepTheirs => !own && other_holds(m1.part),
        // A line added now.
        Way::Amend => other_holds(m1.part),
        // Git's merge brings both; its own side on a conflict takes the
        // other's line away.
        Way::Merge => conflict && other_holds(m2.part),
        // The other's line taken away.
        Way::MergeOurs => other_holds(m2.part),
        // Its own line, taken away where the other's does not replace it.
        Way::MergeTheirs => !conflict && other_holds(m1.part),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn no_change_under_ones_own_claim_is_judged_and_every_change_to_anothers_part_is(
        steps in proptest::collection::vec((step(), 1..90i64), 0..40),
        pick in (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
        way in way(),
        cut in 0usize..40,
    ) {
        let (versions, made, end, since) = simulate(&steps);
        let h = Holdings::of(&two_refs(&versions, cut));
        let Some(last) = versions.iter().map(|v| v.time).max() else {
            return Ok(());
        };
        let t = made.last().map_or(last, |m| m.time.max(last)) + 1;
        // Every landed commit, judged where it was made, and as drift.
        let claims: Vec<Claim> = end
            .iter()
            .enumerate()
            .filter_map(|(p, a)| a.map(|a| claim(SESSIONS[a], PARTS[p])))
            .collect();
        for m in &made {
            let me = m.session.map(|a| SESSIONS[a]);
            let at_commit = match me {
                Some(me) => refused_new(&h, me, &BTreeSet::from([m.part]), m.time),
                None => h.holder_at(&s(PARTS[m.part]), m.time, &FlatSections).is_some(),
            };
            prop_assert_eq!(
                at_commit,
                m.holder.is_some() && m.holder != m.session,
                "{:?}", m.time
            );
            let commit = Landed {
                id: format!("{:040x}", m.time),
                author: "a <a@b>".into(),
                session: me.map(String::from),
                time: m.time,
                touched: Vec::new(),
            };
            for c in claims.iter().filter(|c| c.scope == s(PARTS[m.part])) {
                let told = drift::drifts(&h, c, &commit, t);
                let own = m.session.is_some() && m.session == m.holder;
                let holder_still = m.holder.is_some_and(|a| {
                    SESSIONS[a] == c.session && since[m.part] < m.time
                });
                prop_assert_eq!(told, holder_still && !own);
            }
        }
        // Two landed commits of two clones, brought together.
        let landed: Vec<&Made> = made.iter().filter(|m| landed(m)).collect();
        if landed.len() < 2 {
            return Ok(());
        }
        let (i, j) = (pick.0.index(landed.len()), pick.1.index(landed.len()));
        let (m1, m2) = (landed[i.min(j)], landed[i.max(j)]);
        if std::ptr::eq(m1, m2) {
            return Ok(());
        }
        prop_assert_eq!(
            judged(&h, m1, m2, way, t),
            truth(&end, m1, m2, way),
            "{:?} m1 {} {} {:?} m2 {} {} {:?} end {:?}",
            way, m1.part, m1.time, m1.session, m2.part, m2.time, m2.session, end
        );
    }
}

fn claim(session: &str, scope: &str) -> Claim {
    let t0 = chrono::DateTime::from_timestamp(0, 0)
        .expect("epoch")
        .fixed_offset();
    Claim {
        session: session.into(),
        scope: s(scope),
        agent: String::new(),
        opened: t0,
        expires: t0,
        note: String::new(),
        reason: None,
        extra: Vec::new(),
    }
}
