//! Three-way merge of two registries that share an ancestor, row by row.
//! Pure: three parsed registries in, the merged text (or the reason it cannot
//! be merged) out. Used by `bsi merge-driver` and by the publishing commands,
//! which check a request against the union of the local and remote registry.
//!
//! The rules:
//! - a row present in the ancestor and missing on one side was removed there
//!   (closed, released, moved to the stale table): it is removed;
//! - a row added on either side is kept; added on both, it appears once;
//! - a row changed on one side takes that change; changed on both sides (two
//!   renewals), the later expiry wins;
//! - a claim whose closing row was added to the history on one side is
//!   closed in the result, even if the other side still has it;
//! - two overlapping claims of different sessions are both kept: the caller
//!   reports them as a collision, it never drops one;
//! - every byte outside the three tables' body rows must merge trivially (the
//!   same on both sides, or changed on one side only); otherwise the merge
//!   fails and the caller falls back to git's line merge.

use std::collections::{HashMap, HashSet};

use super::parse::row_cells;
use super::{Registry, TableKind, col};
use crate::ttl;

/// Why two registries cannot be merged by rows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MergeConflict(pub String);

/// One body row: its identity, its bytes (without line ending), and for
/// claims the expiry that settles a change made on both sides.
#[derive(Debug, Clone)]
struct Row {
    key: String,
    line: String,
    rank: i64,
    /// Session and scope of a claim: the parser allows one row per pair.
    holder: String,
}

const KINDS: [TableKind; 3] = [TableKind::Active, TableKind::Stale, TableKind::History];

fn key_of(parts: &[&str]) -> String {
    parts.join("\u{1f}")
}

/// The identity of a claim: session, scope and opening minute. A renewal
/// changes its row but not its identity.
fn claim_rows(reg: &Registry, kind: TableKind) -> Vec<Row> {
    let t = reg.table(kind);
    let claims = match kind {
        TableKind::Active => &reg.active_claims,
        _ => &reg.stale_claims,
    };
    t.rows
        .iter()
        .zip(claims)
        .map(|(r, c)| Row {
            key: key_of(&[&c.session, &c.scope.to_string(), &ttl::format_ts(c.opened)]),
            line: line_at(reg, r),
            rank: c.expires.timestamp(),
            holder: key_of(&[&c.session, &c.scope.to_string()]),
        })
        .collect()
}

fn line_at(reg: &Registry, r: &std::ops::Range<usize>) -> String {
    reg.text()[r.clone()]
        .trim_end_matches(['\n', '\r'])
        .to_string()
}

/// History rows are identified by their cells; `closes` holds the claim
/// identity each one closes.
fn history_rows(reg: &Registry) -> Result<(Vec<Row>, Vec<String>), MergeConflict> {
    let t = reg.table(TableKind::History);
    let pick = |cells: &[String], name: &str| {
        t.column(name)
            .and_then(|i| cells.get(i))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let mut rows = Vec::with_capacity(t.rows.len());
    let mut closes = Vec::with_capacity(t.rows.len());
    for (n, r) in t.rows.iter().enumerate() {
        let cells = row_cells(reg.text(), t, r, t.first_row_line + n, TableKind::History)
            .map_err(|e| MergeConflict(e.to_string()))?;
        let trimmed: Vec<&str> = cells.iter().map(|c| c.trim()).collect();
        rows.push(Row {
            key: key_of(&trimmed),
            line: line_at(reg, r),
            rank: 0,
            holder: String::new(),
        });
        closes.push(key_of(&[
            &pick(&cells, col::SESSION),
            &pick(&cells, col::SCOPE),
            &pick(&cells, col::H_OPENED),
        ]));
    }
    Ok((rows, closes))
}

fn rows_of(reg: &Registry, kind: TableKind) -> Result<Vec<Row>, MergeConflict> {
    match kind {
        TableKind::History => Ok(history_rows(reg)?.0),
        _ => Ok(claim_rows(reg, kind)),
    }
}

/// The text without the body rows of the three tables.
fn skeleton(reg: &Registry) -> String {
    let mut cut: Vec<std::ops::Range<usize>> = KINDS
        .iter()
        .flat_map(|k| reg.table(*k).rows.iter().cloned())
        .collect();
    cut.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(reg.text().len());
    let mut pos = 0;
    for r in cut {
        out.push_str(&reg.text()[pos..r.start]);
        pos = r.end;
    }
    out.push_str(&reg.text()[pos..]);
    out
}

/// The three-way merge of one table's rows: `ours` order first, then what
/// only `theirs` added.
fn merge_rows(base: &[Row], ours: &[Row], theirs: &[Row]) -> Vec<Row> {
    let index = |rows: &[Row]| -> HashMap<String, usize> {
        rows.iter()
            .enumerate()
            .map(|(i, r)| (r.key.clone(), i))
            .collect()
    };
    let (b, o, t) = (index(base), index(ours), index(theirs));
    let mut out = Vec::with_capacity(ours.len().max(theirs.len()));
    let mut seen: HashSet<&str> = HashSet::new();
    for r in ours {
        if !seen.insert(&r.key) {
            continue;
        }
        let in_base = b.get(&r.key).map(|&i| &base[i]);
        match (in_base, t.get(&r.key).map(|&i| &theirs[i])) {
            (Some(_), None) => {} // removed by theirs
            (None, None) => out.push(r.clone()),
            (base_row, Some(th)) => {
                let ours_changed = base_row.is_none_or(|br| br.line != r.line);
                let theirs_changed = base_row.is_none_or(|br| br.line != th.line);
                let pick = match (ours_changed, theirs_changed) {
                    (false, true) => th,
                    (true, true) if th.rank > r.rank => th,
                    _ => r,
                };
                out.push(pick.clone());
            }
        }
    }
    for r in theirs {
        if o.contains_key(&r.key) || b.contains_key(&r.key) || !seen.insert(&r.key) {
            continue;
        }
        out.push(r.clone());
    }
    out
}

/// Claims one side closed since the ancestor: its new history rows, except
/// those whose claim that side still holds (closed, then opened again).
fn closed_by(base: Option<&Registry>, side: &Registry) -> Result<HashSet<String>, MergeConflict> {
    let base_rows: HashSet<String> = match base {
        Some(b) => history_rows(b)?.0.into_iter().map(|r| r.key).collect(),
        None => HashSet::new(),
    };
    let held: HashSet<String> = claim_rows(side, TableKind::Active)
        .into_iter()
        .chain(claim_rows(side, TableKind::Stale))
        .map(|r| r.key)
        .collect();
    let (rows, closes) = history_rows(side)?;
    Ok(rows
        .into_iter()
        .zip(closes)
        .filter(|(r, c)| !base_rows.contains(&r.key) && !held.contains(c))
        .map(|(_, c)| c)
        .collect())
}

/// Merges `ours` and `theirs`, which both descend from `base` (`None` when
/// they have no common ancestor). Returns the merged text.
pub fn merge3(
    base: Option<&Registry>,
    ours: &Registry,
    theirs: &Registry,
) -> Result<String, MergeConflict> {
    for k in KINDS {
        if ours.table(k).columns != theirs.table(k).columns {
            return Err(MergeConflict(format!(
                "the columns of `## {}` differ on the two sides",
                k.heading()
            )));
        }
    }
    let (so, st) = (skeleton(ours), skeleton(theirs));
    let sb = base.map(skeleton);
    let frame = if so == st || sb.as_ref() == Some(&st) {
        ours
    } else if sb.as_ref() == Some(&so) {
        theirs
    } else {
        return Err(MergeConflict(
            "both sides changed the text around the tables".into(),
        ));
    };

    let mut closed = closed_by(base, ours)?;
    closed.extend(closed_by(base, theirs)?);

    let mut merged: Vec<Vec<Row>> = Vec::with_capacity(3);
    // One session opening the same scope on both sides (at different times)
    // would give two rows for one pair: the first one kept stays.
    let mut holders: HashSet<String> = HashSet::new();
    for k in KINDS {
        let b = match base {
            Some(b) => rows_of(b, k)?,
            None => Vec::new(),
        };
        let mut rows = merge_rows(&b, &rows_of(ours, k)?, &rows_of(theirs, k)?);
        if k != TableKind::History {
            rows.retain(|r| !closed.contains(&r.key) && holders.insert(r.holder.clone()));
        }
        merged.push(rows);
    }
    Ok(splice_rows(frame, &merged))
}

/// `frame`'s text with the body rows of each table replaced by `rows`.
fn splice_rows(frame: &Registry, rows: &[Vec<Row>]) -> String {
    let text = frame.text();
    let eol = frame.eol;
    let mut regions: Vec<(usize, usize, &Vec<Row>)> = KINDS
        .iter()
        .zip(rows)
        .map(|(k, rs)| {
            let t = frame.table(*k);
            match (t.rows.first(), t.rows.last()) {
                (Some(a), Some(z)) => (a.start, z.end, rs),
                _ => (t.end, t.end, rs),
            }
        })
        .collect();
    regions.sort_by_key(|r| r.0);
    let mut out = String::with_capacity(text.len() + 256);
    let mut pos = 0;
    for (start, end, rs) in regions {
        out.push_str(&text[pos..start]);
        let at_eof = end == text.len() && !text.ends_with('\n');
        let mut block = String::new();
        for r in rs {
            block.push_str(&r.line);
            block.push_str(eol);
        }
        if at_eof && !block.is_empty() {
            block.truncate(block.len() - eol.len());
            if start == end {
                block.insert_str(0, eol);
            }
        }
        out.push_str(&block);
        pos = end;
    }
    out.push_str(&text[pos..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::render::empty_registry;
    use crate::registry::{Claim, HistoryEntry, Status, parse};
    use crate::scope::Scope;
    use chrono::{DateTime, Duration, FixedOffset};
    use proptest::prelude::*;

    fn t0() -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339("2026-03-14T09:30:00Z").expect("time")
    }

    fn claim(session: &str, file: &str, minutes: i64) -> Claim {
        let opened = t0() + Duration::minutes(minutes);
        Claim {
            session: session.into(),
            scope: Scope::File(file.into()),
            agent: "a".into(),
            opened,
            expires: opened + Duration::hours(2),
            note: String::new(),
            reason: None,
            extra: Vec::new(),
        }
    }

    fn reg(text: &str) -> Registry {
        parse(text.to_string()).expect("parse")
    }

    fn with(base: &str, f: impl FnOnce(&mut Registry)) -> String {
        let mut r = reg(base);
        f(&mut r);
        r.render()
    }

    fn merge(b: &str, o: &str, t: &str) -> Result<String, MergeConflict> {
        merge3(Some(&reg(b)), &reg(o), &reg(t))
    }

    fn sessions(text: &str, kind: TableKind) -> Vec<String> {
        let r = reg(text);
        let claims = match kind {
            TableKind::Active => r.active_claims,
            _ => r.stale_claims,
        };
        claims.into_iter().map(|c| c.session).collect()
    }

    #[test]
    fn claims_added_on_both_sides_are_united() {
        let base = empty_registry();
        let o = with(&base, |r| {
            r.add_claim(TableKind::Active, &claim("s1", "a.md", 0));
        });
        let t = with(&base, |r| {
            r.add_claim(TableKind::Active, &claim("s2", "b.md", 0));
        });
        let m = merge(&base, &o, &t).expect("merge");
        assert_eq!(sessions(&m, TableKind::Active), vec!["s1", "s2"]);
        // The same claim added on both sides appears once.
        let m = merge(&base, &o, &o).expect("merge");
        assert_eq!(m, o);
    }

    #[test]
    fn a_claim_closed_on_one_side_is_closed() {
        let c = claim("s1", "a.md", 0);
        let base = with(&empty_registry(), |r| r.add_claim(TableKind::Active, &c));
        let o = with(&base, |r| {
            r.remove_claim(TableKind::Active, 0);
            r.add_history(&HistoryEntry::closing(&c, t0(), Status::Completed, ""));
        });
        let t = with(&base, |r| {
            r.add_claim(TableKind::Active, &claim("s2", "b.md", 1));
        });
        let m = merge(&base, &o, &t).expect("merge");
        assert_eq!(sessions(&m, TableKind::Active), vec!["s2"]);
        assert_eq!(reg(&m).history_len(), 1);
        let m2 = merge(&base, &t, &o).expect("merge");
        assert_eq!(sessions(&m2, TableKind::Active), vec!["s2"]);
        // Closed on one side while the other moved it to the stale table:
        // the history row wins.
        let t = with(&base, |r| {
            let mut s = c.clone();
            s.reason = Some("expired".into());
            r.remove_claim(TableKind::Active, 0);
            r.add_claim(TableKind::Stale, &s);
        });
        let m = merge(&base, &o, &t).expect("merge");
        assert!(sessions(&m, TableKind::Active).is_empty());
        assert!(sessions(&m, TableKind::Stale).is_empty());
        assert_eq!(reg(&m).history_len(), 1);
    }

    #[test]
    fn history_rows_are_united_without_duplicates() {
        let c1 = claim("s1", "a.md", 0);
        let c2 = claim("s2", "b.md", 0);
        let base = with(&empty_registry(), |r| {
            r.add_history(&HistoryEntry::closing(&c1, t0(), Status::Completed, ""));
        });
        let o = with(&base, |r| {
            r.add_history(&HistoryEntry::closing(&c2, t0(), Status::Completed, ""));
        });
        let t = o.clone();
        let m = merge(&base, &o, &t).expect("merge");
        assert_eq!(reg(&m).history_len(), 2);
        let t = with(&base, |r| {
            r.add_history(&HistoryEntry::closing(&c2, t0(), Status::Released, ""));
        });
        assert_eq!(reg(&merge(&base, &o, &t).expect("merge")).history_len(), 3);
    }

    #[test]
    fn overlapping_claims_from_both_sides_are_both_kept() {
        let base = empty_registry();
        let o = with(&base, |r| {
            r.add_claim(TableKind::Active, &claim("s1", "a.md", 0));
        });
        let t = with(&base, |r| {
            r.add_claim(TableKind::Active, &claim("s2", "a.md", 0));
        });
        let m = merge(&base, &o, &t).expect("merge");
        assert_eq!(sessions(&m, TableKind::Active), vec!["s1", "s2"]);
    }

    #[test]
    fn two_renewals_keep_the_later_expiry() {
        let c = claim("s1", "a.md", 0);
        let base = with(&empty_registry(), |r| r.add_claim(TableKind::Active, &c));
        let renew = |h: i64| {
            with(&base, |r| {
                let mut n = c.clone();
                n.expires = c.opened + Duration::hours(h);
                r.replace_claim(TableKind::Active, 0, &n);
            })
        };
        let (o, t) = (renew(3), renew(4));
        for m in [merge(&base, &o, &t), merge(&base, &t, &o)] {
            let r = reg(&m.expect("merge"));
            assert_eq!(r.active_claims[0].expires, c.opened + Duration::hours(4));
        }
    }

    #[test]
    fn text_around_the_tables_follows_the_side_that_changed_it() {
        let base = empty_registry();
        let o = with(&base, |r| {
            r.add_claim(TableKind::Active, &claim("s1", "a.md", 0));
        });
        let t = base.replace("Registry of the sessions", "Registry of all sessions");
        let m = merge(&base, &o, &t).expect("merge");
        assert!(m.contains("Registry of all sessions"));
        assert_eq!(sessions(&m, TableKind::Active), vec!["s1"]);
        let o2 = o.replace("Registry of the sessions", "The registry of sessions");
        let e = merge(&base, &o2, &t).expect_err("conflict");
        assert!(e.0.contains("around the tables"), "{e}");
    }

    #[test]
    fn crlf_and_no_final_newline_are_kept() {
        let base = empty_registry().replace('\n', "\r\n");
        let base = base.trim_end_matches(['\r', '\n']).to_string();
        let o = with(&base, |r| {
            r.add_claim(TableKind::Active, &claim("s1", "a.md", 0));
        });
        let t = with(&base, |r| {
            r.add_history(&HistoryEntry::closing(
                &claim("s9", "z.md", 0),
                t0(),
                Status::Completed,
                "",
            ));
        });
        let m = merge(&base, &o, &t).expect("merge");
        assert!(!m.ends_with('\n'));
        assert!(!m.replace("\r\n", "").contains('\n'), "{m:?}");
        assert_eq!(reg(&m).history_len(), 1);
        assert_eq!(sessions(&m, TableKind::Active), vec!["s1"]);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Add(u8, u8),
        Close(usize),
        Stale(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..6, 0u8..6).prop_map(|(s, f)| Op::Add(s, f)),
            (0usize..8).prop_map(Op::Close),
            (0usize..8).prop_map(Op::Stale),
        ]
    }

    /// Applies bsi-like edits, one commit at a time.
    fn apply(text: &str, ops: &[Op], minute: i64) -> String {
        let mut text = text.to_string();
        for (n, op) in ops.iter().enumerate() {
            let r = reg(&text);
            let mut e = r.clone();
            match op {
                Op::Add(s, f) => {
                    let c = claim(&format!("s{s}"), &format!("f{f}.md"), minute + n as i64);
                    if r.all_claims()
                        .any(|(h, _)| h.session == c.session && h.scope == c.scope)
                    {
                        continue;
                    }
                    e.add_claim(TableKind::Active, &c);
                }
                Op::Close(i) if !r.active_claims.is_empty() => {
                    let i = i % r.active_claims.len();
                    e.remove_claim(TableKind::Active, i);
                    let c = &r.active_claims[i];
                    e.add_history(&HistoryEntry::closing(c, t0(), Status::Completed, ""));
                }
                Op::Stale(i) if !r.active_claims.is_empty() => {
                    let i = i % r.active_claims.len();
                    let mut c = r.active_claims[i].clone();
                    c.reason = Some("expired".into());
                    e.remove_claim(TableKind::Active, i);
                    e.add_claim(TableKind::Stale, &c);
                }
                _ => {}
            }
            text = e.render();
        }
        text
    }

    proptest! {
        #[test]
        fn one_side_unchanged_gives_the_other(
            pre in prop::collection::vec(op(), 0..6),
            post in prop::collection::vec(op(), 0..6),
        ) {
            let base = apply(&empty_registry(), &pre, 0);
            let side = apply(&base, &post, 100);
            prop_assert_eq!(merge(&base, &base, &side).expect("merge"), side.clone());
            prop_assert_eq!(merge(&base, &side, &base).expect("merge"), side.clone());
            prop_assert_eq!(merge(&base, &side, &side).expect("merge"), side);
        }

        #[test]
        fn additions_of_both_sides_survive_and_nothing_is_invented(
            pre in prop::collection::vec(op(), 0..6),
            a in prop::collection::vec(op(), 0..6),
            b in prop::collection::vec(op(), 0..6),
        ) {
            let base = apply(&empty_registry(), &pre, 0);
            let o = apply(&base, &a, 100);
            let t = apply(&base, &b, 200);
            let m = reg(&merge(&base, &o, &t).expect("merge"));
            let rows = |r: &Registry| -> Vec<Row> {
                claim_rows(r, TableKind::Active).into_iter()
                    .chain(claim_rows(r, TableKind::Stale)).collect()
            };
            let keys = |r: &Registry| -> HashSet<String> {
                rows(r).into_iter().map(|r| r.key).collect()
            };
            let (kb, ko, kt, km) = (keys(&reg(&base)), keys(&reg(&o)), keys(&reg(&t)), keys(&m));
            let held: HashSet<String> = rows(&m).into_iter().map(|r| r.holder).collect();
            // Claims opened on one side are kept (once per session and scope).
            for r in rows(&reg(&o)).into_iter().chain(rows(&reg(&t))) {
                if !kb.contains(&r.key) {
                    prop_assert!(held.contains(&r.holder), "lost {}", r.key);
                }
            }
            // Every merged claim comes from one of the sides.
            for k in &km {
                prop_assert!(ko.contains(k) || kt.contains(k));
            }
            // History rows are the union of both sides.
            let hist = |r: &Registry| -> HashSet<String> {
                history_rows(r).expect("rows").0.into_iter().map(|r| r.key).collect()
            };
            let hm = hist(&m);
            prop_assert_eq!(hm.len(), m.history_len());
            prop_assert!(hist(&reg(&o)).is_subset(&hm));
            prop_assert!(hist(&reg(&t)).is_subset(&hm));
        }
    }
}
