//! Three-way merge of two registries that share an ancestor, row by row.
//! Pure: three parsed registries and the clock in, the merged text (or the
//! reason it cannot be merged) out. Used by `bsi merge-driver` and by the
//! publishing commands, which check a request against the union of the
//! local and remote registry.
//!
//! The rules, for each claim (session, scope and opening minute):
//! - a claim changed on one side only takes that change: opened, renewed,
//!   moved to the stale table, removed;
//! - changed on both sides, the later fact wins: of two renewals the later
//!   expiry; of a stale mark and a renewal the mark stood on an expiry the
//!   renewal replaced, so the watchdog's rule is judged again on the
//!   renewed expiry at the time of the merge: still active, or stale with
//!   the expiry it really has;
//! - a claim whose ending one side added to the history is ended in the
//!   result, whatever the other side did to it: a closed claim never comes
//!   back;
//! - a claim ended on both sides ends once: `theirs` (the registry already
//!   published) keeps its ending, and the one `ours` wrote is reported as
//!   superseded, not written;
//! - history rows are otherwise united without duplicates;
//! - two overlapping claims of different sessions are both kept: the caller
//!   reports them as a collision, it never drops one;
//! - every byte outside the three tables' body rows must merge trivially (the
//!   same on both sides, or changed on one side only); otherwise the merge
//!   fails and the caller falls back to git's line merge.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, FixedOffset};

use super::parse::row_cells;
use super::{ALL_TABLES, Claim, Registry, TableKind, Waiter, col};
use crate::ttl;

/// Why two registries cannot be merged by rows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MergeConflict(pub String);

/// The merged registry, and what of `ours` it does not keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The merged text.
    pub text: String,
    /// Endings `ours` wrote for claims `theirs` had already ended.
    pub superseded: Vec<Superseded>,
}

/// A claim ended on both sides: the ending of `ours` that gave way to the
/// one of `theirs`, the registry already published.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Superseded {
    /// The session that held the claim.
    pub session: String,
    /// Its scope, as stored.
    pub scope: String,
    /// The status `ours` wrote (`completed`, `released`, ...), not kept.
    pub dropped: String,
    /// When `ours` ended it, as written.
    pub dropped_at: String,
    /// The status kept.
    pub kept: String,
    /// When `theirs` ended it, as written.
    pub kept_at: String,
}

impl std::fmt::Display for Superseded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} was ended here as `{}` ({}) after it had ended elsewhere as `{}` ({}): the history keeps `{}`",
            self.session,
            self.scope,
            self.dropped,
            self.dropped_at,
            self.kept,
            self.kept_at,
            self.kept
        )
    }
}

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

/// A claim row, with the table it is in and the claim it reads as.
#[derive(Debug, Clone)]
struct ClaimRow {
    row: Row,
    stale: bool,
    claim: Claim,
}

/// A history row, with the claim it ends and what it says of it.
#[derive(Debug, Clone)]
struct HistRow {
    row: Row,
    /// The identity of the claim it ends (session, scope, opening).
    closes: String,
    session: String,
    scope: String,
    status: String,
    closed: String,
}

fn key_of(parts: &[&str]) -> String {
    parts.join("\u{1f}")
}

/// The identity of a claim: session, scope and opening minute. A renewal
/// changes its row but not its identity.
fn claim_key(c: &Claim) -> String {
    key_of(&[&c.session, &c.scope.to_string(), &ttl::format_ts(c.opened)])
}

fn claim_rows(reg: &Registry, kind: TableKind) -> Vec<ClaimRow> {
    let t = reg.table(kind);
    let claims = match kind {
        TableKind::Active => &reg.active_claims,
        _ => &reg.stale_claims,
    };
    t.rows
        .iter()
        .zip(claims)
        .map(|(r, c)| ClaimRow {
            row: Row {
                key: claim_key(c),
                line: line_at(reg, r),
                rank: c.expires.timestamp(),
                holder: key_of(&[&c.session, &c.scope.to_string()]),
            },
            stale: kind == TableKind::Stale,
            claim: c.clone(),
        })
        .collect()
}

/// Every claim row, active then stale.
fn all_claim_rows(reg: &Registry) -> Vec<ClaimRow> {
    let mut rows = claim_rows(reg, TableKind::Active);
    rows.extend(claim_rows(reg, TableKind::Stale));
    rows
}

fn line_at(reg: &Registry, r: &std::ops::Range<usize>) -> String {
    reg.text()[r.clone()]
        .trim_end_matches(['\n', '\r'])
        .to_string()
}

/// History rows, identified by their cells.
fn history_rows(reg: &Registry) -> Result<Vec<HistRow>, MergeConflict> {
    let t = reg.table(TableKind::History);
    let pick = |cells: &[String], name: &str| {
        t.column(name)
            .and_then(|i| cells.get(i))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let mut rows = Vec::with_capacity(t.rows.len());
    for (n, r) in t.rows.iter().enumerate() {
        let cells = row_cells(reg.text(), t, r, t.first_row_line + n, TableKind::History)
            .map_err(|e| MergeConflict(e.to_string()))?;
        let trimmed: Vec<&str> = cells.iter().map(|c| c.trim()).collect();
        let (session, scope) = (pick(&cells, col::SESSION), pick(&cells, col::SCOPE));
        rows.push(HistRow {
            row: Row {
                key: key_of(&trimmed),
                line: line_at(reg, r),
                rank: 0,
                holder: String::new(),
            },
            closes: key_of(&[&session, &scope, &pick(&cells, col::H_OPENED)]),
            session,
            scope,
            status: pick(&cells, col::H_STATUS),
            closed: pick(&cells, col::H_CLOSED),
        });
    }
    Ok(rows)
}

/// A row of the queue, with the place it reads as.
#[derive(Debug, Clone)]
struct QueueRow {
    row: Row,
    waiter: Waiter,
}

/// The queue's rows: a place is its session, scope and time of arrival;
/// of two versions of one place, the later lease is the newer fact.
fn queue_rows(reg: &Registry) -> Vec<QueueRow> {
    let t = reg.table(TableKind::Queue);
    t.rows
        .iter()
        .zip(&reg.waiters)
        .map(|(r, w)| QueueRow {
            row: Row {
                key: key_of(&[
                    &w.session,
                    &w.scope.to_string(),
                    &super::render::format_queue_ts(w.since),
                ]),
                line: line_at(reg, r),
                rank: w.lease.timestamp_millis(),
                holder: String::new(),
            },
            waiter: w.clone(),
        })
        .collect()
}

/// Whether `reg` holds a claim of `w`'s session on `w`'s scope: the
/// place was granted there.
fn granted(reg: &Registry, w: &Waiter) -> bool {
    reg.all_claims()
        .any(|(c, _)| c.session == w.session && c.scope == w.scope)
}

/// The lease the others saw of place `w` of the published side: its
/// row's, or the later one its waiter's clone published on its record
/// ([`Waiter::alive`], filled by the caller from the records it read with
/// the published side).
fn published(w: &Waiter) -> DateTime<FixedOffset> {
    w.alive.map_or(w.lease, |a| a.lease.max(w.lease))
}

/// The three-way merge of the queue. Row by row as the other tables (a
/// place removed on one side stays removed, of two renewals the later
/// lease), with what the published side (`theirs`) knows of a place
/// deciding whether it lapsed:
/// - a place `ours` renewed after the published lease had passed (that
///   lease is before the merge's `now` or before the renewal), or that
///   `theirs` removed while `ours` renewed it (a queue write removes the
///   places that lapsed), or that `ours` alone holds and renewed past its
///   first lease, lapsed before anyone else could see the renewal: the
///   session takes its place again at the end, arrived at its latest
///   renewal and after every arrival `theirs` holds;
/// - a place `theirs` renewed and `ours` removed (an offline writer that
///   judged it lapsed on what it had last fetched) stays, unless `ours`
///   granted it.
fn merge_queue(
    base: Option<&Registry>,
    ours: &Registry,
    theirs: &Registry,
    now: DateTime<FixedOffset>,
) -> Vec<Row> {
    let qb = base.map(queue_rows).unwrap_or_default();
    let (qo, qt) = (queue_rows(ours), queue_rows(theirs));
    let rows = |v: &[QueueRow]| -> Vec<Row> { v.iter().map(|q| q.row.clone()).collect() };
    let mut merged = merge_rows(&rows(&qb), &rows(&qo), &rows(&qt));
    let find =
        |v: &'_ [QueueRow], key: &str| -> Option<usize> { v.iter().position(|q| q.row.key == key) };
    // Renewed there, removed here: kept.
    for t in &qt {
        let (Some(b), None) = (find(&qb, &t.row.key), find(&qo, &t.row.key)) else {
            continue;
        };
        let w = &t.waiter;
        let elsewhere = qo
            .iter()
            .any(|o| o.waiter.session == w.session && o.waiter.scope == w.scope);
        if qb[b].row.line != t.row.line && !granted(ours, w) && !elsewhere {
            merged.push(t.row.clone());
        }
    }
    // Lapsed on the published side, renewed here: at the end.
    let mut again: Vec<(String, DateTime<FixedOffset>)> = Vec::new();
    for o in &qo {
        let w = &o.waiter;
        let renewed_at = w.lease - super::lease();
        let base_row = find(&qb, &o.row.key).map(|i| &qb[i]);
        let changed = base_row.is_none_or(|b| b.row.line != o.row.line);
        let lapsed = match (find(&qt, &o.row.key).map(|i| &qt[i]), base_row) {
            (Some(t), _) => {
                changed && t.row.line != o.row.line && published(&t.waiter) <= now.max(renewed_at)
            }
            (None, Some(_)) => changed && !granted(theirs, w),
            // Added here alone: unseen by the others for longer than its
            // first lease (with no common ancestor, nothing is known).
            (None, None) => base.is_some() && w.since + super::lease() < renewed_at,
        };
        if !lapsed {
            continue;
        }
        match again.iter_mut().find(|(s, _)| s == &w.session) {
            Some((_, at)) => *at = (*at).max(renewed_at),
            None => again.push((w.session.clone(), renewed_at)),
        }
    }
    for (session, renewed_at) in again {
        // After every arrival the published side holds, from a clock
        // that is not ahead of this one.
        let last = qt
            .iter()
            .map(|t| &t.waiter)
            .filter(|w| w.session != session && w.since <= now.max(renewed_at))
            .map(|w| w.since + chrono::Duration::milliseconds(1))
            .max();
        let since = last.map_or(renewed_at, |l| l.max(renewed_at));
        let of_session = format!("{session}\u{1f}");
        merged.retain(|r| !r.key.starts_with(&of_session));
        for o in qo.iter().filter(|o| o.waiter.session == session) {
            let w = Waiter {
                since,
                ..o.waiter.clone()
            };
            merged.push(Row {
                key: key_of(&[
                    &w.session,
                    &w.scope.to_string(),
                    &super::render::format_queue_ts(w.since),
                ]),
                line: ours.waiter_line(&w),
                rank: w.lease.timestamp_millis(),
                holder: String::new(),
            });
        }
    }
    merged
}

/// The text without the body rows of the tables.
fn skeleton(reg: &Registry) -> String {
    let mut cut: Vec<std::ops::Range<usize>> = ALL_TABLES
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

/// Claims one side ended since the ancestor: its new history rows, except
/// those whose claim that side still holds (closed, then opened again).
fn closed_by(base: &HashSet<String>, side: &Registry) -> Result<HashSet<String>, MergeConflict> {
    let held: HashSet<String> = all_claim_rows(side)
        .into_iter()
        .map(|r| r.row.key)
        .collect();
    Ok(history_rows(side)?
        .into_iter()
        .filter(|h| !base.contains(&h.row.key) && !held.contains(&h.closes))
        .map(|h| h.closes)
        .collect())
}

/// Where a claim stands after the merge: its table and its row.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Placed {
    stale: bool,
    line: String,
}

impl From<&ClaimRow> for Placed {
    fn from(r: &ClaimRow) -> Placed {
        Placed {
            stale: r.stale,
            line: r.row.line.clone(),
        }
    }
}

/// The same row in the same table.
fn same(a: Option<&ClaimRow>, b: Option<&ClaimRow>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.stale == b.stale && a.row.line == b.row.line,
        _ => false,
    }
}

/// Where one claim stands, from its rows in the ancestor and on each side
/// (`None`: not in the claim tables there). `frame` renders a row the
/// merge has to write anew (a stale mark judged again on a renewed expiry).
fn place(
    base: Option<&ClaimRow>,
    ours: Option<&ClaimRow>,
    theirs: Option<&ClaimRow>,
    now: DateTime<FixedOffset>,
    frame: &Registry,
) -> Option<Placed> {
    if same(ours, base) {
        return theirs.map(Placed::from);
    }
    if same(theirs, base) {
        return ours.map(Placed::from);
    }
    // Changed on both sides (or added on both).
    let (o, t) = match (ours, theirs) {
        (None, None) => return None,
        // Removed on one side, changed on the other: the change is a fact
        // newer than the ancestor, and nothing ended the claim.
        (Some(x), None) | (None, Some(x)) => return Some(x.into()),
        (Some(o), Some(t)) => (o, t),
    };
    if o.stale == t.stale {
        // Two renewals, or two stale marks: the later expiry.
        return Some(if t.row.rank > o.row.rank { t } else { o }.into());
    }
    let (marked, renewed) = if o.stale { (o, t) } else { (t, o) };
    if renewed.row.rank <= marked.row.rank {
        // The mark was made on the latest expiry: it stands.
        return Some(marked.into());
    }
    // The mark stood on an expiry the renewal replaced: the watchdog's rule,
    // judged again on the renewed expiry.
    let c = &renewed.claim;
    match ttl::stale_reason(c.opened, c.expires, now) {
        None => Some(renewed.into()),
        Some(reason) => {
            let mut s = c.clone();
            let max = reason == ttl::STALE_REASON_MAX;
            s.reason = Some(frame.language().stale_reason(max).to_string());
            Some(Placed {
                stale: true,
                line: frame.claim_line(TableKind::Stale, &s),
            })
        }
    }
}

/// Merges `ours` and `theirs`, which both descend from `base` (`None` when
/// they have no common ancestor), at `now` (the clock a stale mark is
/// judged again by). A place of `theirs` (the published side) lapsed by
/// the later of its row's lease and its record's ([`Waiter::alive`]: the
/// caller passes the records it read with `theirs` in that way).
pub fn merge3(
    base: Option<&Registry>,
    ours: &Registry,
    theirs: &Registry,
    now: DateTime<FixedOffset>,
) -> Result<Merged, MergeConflict> {
    for k in ALL_TABLES {
        let absent = k == TableKind::Queue && !(ours.has_queue() && theirs.has_queue());
        if !absent && ours.table(k).columns != theirs.table(k).columns {
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

    // The history: united, and one ending per claim.
    let hb = match base {
        Some(b) => history_rows(b)?,
        None => Vec::new(),
    };
    let (ho, ht) = (history_rows(ours)?, history_rows(theirs)?);
    let base_hist: HashSet<String> = hb.iter().map(|h| h.row.key.clone()).collect();
    let mut closed = closed_by(&base_hist, ours)?;
    closed.extend(closed_by(&base_hist, theirs)?);
    let mut ended_by_theirs: HashMap<&str, &HistRow> = HashMap::new();
    for h in &ht {
        if !base_hist.contains(&h.row.key) {
            ended_by_theirs.entry(h.closes.as_str()).or_insert(h);
        }
    }
    let their_rows: HashSet<&str> = ht.iter().map(|h| h.row.key.as_str()).collect();
    let mut superseded = Vec::new();
    let mut dropped: HashSet<String> = HashSet::new();
    for h in &ho {
        if base_hist.contains(&h.row.key) || their_rows.contains(h.row.key.as_str()) {
            continue;
        }
        if let Some(kept) = ended_by_theirs.get(h.closes.as_str()) {
            dropped.insert(h.row.key.clone());
            superseded.push(Superseded {
                session: h.session.clone(),
                scope: h.scope.clone(),
                dropped: h.status.clone(),
                dropped_at: h.closed.clone(),
                kept: kept.status.clone(),
                kept_at: kept.closed.clone(),
            });
        }
    }
    let rows = |v: &[HistRow]| -> Vec<Row> { v.iter().map(|h| h.row.clone()).collect() };
    let mut history = merge_rows(&rows(&hb), &rows(&ho), &rows(&ht));
    history.retain(|r| !dropped.contains(&r.key));

    // The claims, each placed once from its three versions.
    let cb = base.map(all_claim_rows).unwrap_or_default();
    let (co, ct) = (all_claim_rows(ours), all_claim_rows(theirs));
    let index = |rows: &[ClaimRow]| -> HashMap<String, usize> {
        let mut m = HashMap::new();
        for (i, r) in rows.iter().enumerate() {
            m.entry(r.row.key.clone()).or_insert(i);
        }
        m
    };
    let (ib, io, it) = (index(&cb), index(&co), index(&ct));
    let mut placed: HashMap<&str, Option<Placed>> = HashMap::new();
    for r in co.iter().chain(&ct).chain(&cb) {
        let key = r.row.key.as_str();
        if placed.contains_key(key) {
            continue;
        }
        let p = if closed.contains(key) {
            None
        } else {
            place(
                ib.get(key).map(|&i| &cb[i]),
                io.get(key).map(|&i| &co[i]),
                it.get(key).map(|&i| &ct[i]),
                now,
                frame,
            )
        };
        placed.insert(key, p);
    }
    // Rows in `ours` order, then what only `theirs` holds; one row per
    // session and scope (one session opening the same scope on both sides,
    // at different times: the first one kept stays).
    let mut holders: HashSet<String> = HashSet::new();
    let mut emitted: HashSet<&str> = HashSet::new();
    let mut tables: [Vec<Row>; 2] = [Vec::new(), Vec::new()];
    for stale in [false, true] {
        let order = co
            .iter()
            .chain(&ct)
            .filter(|r| r.stale == stale)
            .chain(co.iter().chain(&ct).filter(|r| r.stale != stale));
        for r in order {
            let key = r.row.key.as_str();
            let Some(Some(p)) = placed.get(key) else {
                continue;
            };
            if p.stale != stale || emitted.contains(key) {
                continue;
            }
            emitted.insert(key);
            if holders.insert(r.row.holder.clone()) {
                tables[usize::from(stale)].push(Row {
                    key: key.to_string(),
                    line: p.line.clone(),
                    rank: 0,
                    holder: r.row.holder.clone(),
                });
            }
        }
    }
    let [active, stale] = tables;
    // The queue: a place removed on one side (granted, given up, lapsed)
    // stays removed; renewed on both, the later lease; a place that lapsed
    // on the published side is taken again at the end.
    let queue = merge_queue(base, ours, theirs, now);
    Ok(Merged {
        text: splice_rows(frame, &[active, stale, history, queue]),
        superseded,
    })
}

/// `frame`'s text with the body rows of each table replaced by `rows`.
fn splice_rows(frame: &Registry, rows: &[Vec<Row>]) -> String {
    let text = frame.text();
    let eol = frame.eol;
    let mut regions: Vec<(usize, usize, &Vec<Row>)> = ALL_TABLES
        .iter()
        .zip(rows)
        // A frame without a queue table has no place to put one: every
        // side that had one is the frame (its text around the tables
        // changed), so nobody waits in the others.
        .filter(|(k, _)| **k != TableKind::Queue || frame.has_queue())
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
        merge3(Some(&reg(b)), &reg(o), &reg(t), t0()).map(|m| m.text)
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
        let c3 = claim("s3", "c.md", 0);
        let t = with(&base, |r| {
            r.add_history(&HistoryEntry::closing(&c3, t0(), Status::Released, ""));
        });
        assert_eq!(reg(&merge(&base, &o, &t).expect("merge")).history_len(), 3);
    }

    #[test]
    fn a_claim_ended_on_both_sides_ends_once_as_theirs_ended_it() {
        let c = claim("s1", "a.md", 0);
        let base = with(&empty_registry(), |r| r.add_claim(TableKind::Active, &c));
        let end = |status, minutes| {
            with(&base, |r| {
                r.remove_claim(TableKind::Active, 0);
                let at = t0() + Duration::minutes(minutes);
                r.add_history(&HistoryEntry::closing(&c, at, status, ""));
            })
        };
        let (o, t) = (end(Status::Completed, 30), end(Status::ForceReleased, 35));
        let m = merge3(Some(&reg(&base)), &reg(&o), &reg(&t), t0()).expect("merge");
        let r = reg(&m.text);
        assert_eq!(r.history_len(), 1);
        assert!(m.text.contains("| force-released |"), "{}", m.text);
        assert!(r.active_claims.is_empty() && r.stale_claims.is_empty());
        assert_eq!(
            m.superseded,
            vec![Superseded {
                session: "s1".into(),
                scope: "a.md".into(),
                dropped: "completed".into(),
                dropped_at: "2026-03-14 10:00 +00:00".into(),
                kept: "force-released".into(),
                kept_at: "2026-03-14 10:05 +00:00".into(),
            }]
        );
        // The same ending on both sides is one row, and nothing to report.
        let m = merge3(Some(&reg(&base)), &reg(&o), &reg(&o), t0()).expect("merge");
        assert_eq!((reg(&m.text).history_len(), m.superseded.len()), (1, 0));
    }

    #[test]
    fn a_stale_mark_made_on_an_expiry_a_renewal_replaced_is_judged_again() {
        // Opened 09:30 until 11:30.
        let c = claim("s1", "a.md", 0);
        let base = with(&empty_registry(), |r| r.add_claim(TableKind::Active, &c));
        let marked = with(&base, |r| {
            let mut s = c.clone();
            s.reason = Some(ttl::STALE_REASON.into());
            r.remove_claim(TableKind::Active, 0);
            r.add_claim(TableKind::Stale, &s);
        });
        let renew = |hours| {
            with(&base, |r| {
                let mut n = c.clone();
                n.expires = c.opened + Duration::hours(hours);
                r.replace_claim(TableKind::Active, 0, &n);
            })
        };
        let at = |h: i64| t0() + Duration::minutes(h * 60 + 5);
        for (o, t) in [(&marked, &renew(5)), (&renew(5), &marked)] {
            // At 11:35 the renewed claim runs until 14:30: active.
            let m = merge3(Some(&reg(&base)), &reg(o), &reg(t), at(2)).expect("merge");
            let r = reg(&m.text);
            assert!(r.stale_claims.is_empty(), "{}", m.text);
            assert_eq!(r.active_claims[0].expires, c.opened + Duration::hours(5));
            // At 14:35 it expired too: stale, with the expiry it had.
            let m = merge3(Some(&reg(&base)), &reg(o), &reg(t), at(5)).expect("merge");
            let r = reg(&m.text);
            assert!(r.active_claims.is_empty(), "{}", m.text);
            assert_eq!(r.stale_claims[0].expires, c.opened + Duration::hours(5));
            assert_eq!(r.stale_claims[0].reason.as_deref(), Some(ttl::STALE_REASON));
        }
        // Renewed to the 8h ceiling, and judged past it: its reason says so.
        let m = merge3(Some(&reg(&base)), &reg(&marked), &reg(&renew(8)), at(9)).expect("merge");
        assert_eq!(
            reg(&m.text).stale_claims[0].reason.as_deref(),
            Some(ttl::STALE_REASON_MAX)
        );
        // A mark on the latest expiry stands, whatever the clock says.
        let m = merge3(Some(&reg(&base)), &reg(&marked), &reg(&base), t0()).expect("merge");
        assert_eq!(reg(&m.text).stale_claims.len(), 1);
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
                all_claim_rows(r).into_iter().map(|c| c.row).collect()
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
                history_rows(r).expect("rows").into_iter().map(|h| h.row.key).collect()
            };
            let hm = hist(&m);
            prop_assert_eq!(hm.len(), m.history_len());
            prop_assert!(hist(&reg(&o)).is_subset(&hm));
            prop_assert!(hist(&reg(&t)).is_subset(&hm));
        }
    }

    fn place(session: &str, file: &str, since_s: i64, lease_s: i64) -> crate::registry::Waiter {
        crate::registry::Waiter {
            session: session.into(),
            scope: Scope::File(file.into()),
            agent: "a".into(),
            since: t0() + Duration::seconds(since_s),
            lease: t0() + Duration::seconds(lease_s),
            extra: Vec::new(),
            seen_ahead: None,
            alive: None,
        }
    }

    fn queue_of(text: &str) -> Vec<(String, i64)> {
        reg(text)
            .waiters
            .iter()
            .map(|w| (w.session.clone(), (w.lease - t0()).num_seconds()))
            .collect()
    }

    #[test]
    fn places_in_the_queue_merge_by_rows_and_a_removal_wins() {
        let base = with(&empty_registry(), |r| {
            r.add_waiter(&place("w1", "a.md", 0, 30));
        });
        // Ours renews w1 and adds w2; theirs grants w1 (its place goes)
        // and adds w3.
        let ours = with(&base, |r| {
            r.replace_waiter(0, &place("w1", "a.md", 0, 60));
            r.add_waiter(&place("w2", "a.md", 5, 35));
        });
        let theirs = with(&base, |r| {
            r.remove_waiter(0);
            r.add_claim(TableKind::Active, &claim("w1", "a.md", 0));
            r.add_waiter(&place("w3", "b.md", 6, 36));
        });
        let m = merge(&base, &ours, &theirs).expect("merges");
        assert_eq!(
            queue_of(&m),
            [("w2".to_string(), 35), ("w3".to_string(), 36)]
        );
        assert_eq!(sessions(&m, TableKind::Active), ["w1"]);
        // Renewed on both sides: the later lease.
        let a = with(&base, |r| r.replace_waiter(0, &place("w1", "a.md", 0, 50)));
        let b = with(&base, |r| r.replace_waiter(0, &place("w1", "a.md", 0, 40)));
        assert_eq!(
            queue_of(&merge(&base, &a, &b).expect("merges")),
            [("w1".to_string(), 50)]
        );
        assert_eq!(
            queue_of(&merge(&base, &b, &a).expect("merges")),
            [("w1".to_string(), 50)]
        );
    }

    #[test]
    fn a_queue_table_added_on_one_side_merges_with_claims_of_the_other() {
        let base = empty_registry();
        let ours = with(&base, |r| r.add_waiter(&place("w1", "a.md", 0, 30)));
        let theirs = with(&base, |r| {
            r.add_claim(TableKind::Active, &claim("s1", "a.md", 0));
        });
        for m in [
            merge(&base, &ours, &theirs).expect("merges"),
            merge(&base, &theirs, &ours).expect("merges"),
        ] {
            assert_eq!(queue_of(&m), [("w1".to_string(), 30)]);
            assert_eq!(sessions(&m, TableKind::Active), ["s1"]);
        }
        // Both sides add their first waiter: one table, both places.
        let theirs = with(&base, |r| r.add_waiter(&place("w2", "b.md", 1, 31)));
        let m = merge(&base, &ours, &theirs).expect("merges");
        assert_eq!(queue_of(&m).len(), 2, "{m}");
        assert_eq!(m.matches("## File d'attente").count(), 1);
    }

    /// The queue of a merged text: (session, since, lease) in seconds
    /// after `t0`, to the millisecond.
    fn places(text: &str) -> Vec<(String, f64, i64)> {
        reg(text)
            .waiters
            .iter()
            .map(|w| {
                (
                    w.session.clone(),
                    (w.since - t0()).num_milliseconds() as f64 / 1000.0,
                    (w.lease - t0()).num_seconds(),
                )
            })
            .collect()
    }

    #[test]
    fn a_place_renewed_only_here_after_it_lapsed_there_is_taken_again_at_the_end() {
        // w1 arrived at 0 (lease 30) and went offline; w2 arrived at 20.
        let base = with(&empty_registry(), |r| {
            r.add_waiter(&place("w1", "a.md", 0, 30));
        });
        let theirs = with(&base, |r| r.add_waiter(&place("w2", "a.md", 20, 50)));
        // Offline, w1 renewed at 22 (lease 52): the published lease passed
        // at 30; at 36 it is back.
        let ours = with(&base, |r| r.replace_waiter(0, &place("w1", "a.md", 0, 52)));
        let at = |s: i64| t0() + Duration::seconds(s);
        let m = merge3(Some(&reg(&base)), &reg(&ours), &reg(&theirs), at(36)).expect("merges");
        assert_eq!(
            places(&m.text),
            [("w2".to_string(), 20.0, 50), ("w1".to_string(), 22.0, 52)]
        );
        // Merged before the published lease passed: its place holds.
        let m = merge3(Some(&reg(&base)), &reg(&ours), &reg(&theirs), at(25)).expect("merges");
        assert_eq!(
            places(&m.text),
            [("w1".to_string(), 0.0, 52), ("w2".to_string(), 20.0, 50)]
        );
        // w2 arrived at 35, after the lapse, and removed w1's place: w1
        // comes back after w2, though its last renewal (at 33) came first.
        let theirs = with(&base, |r| {
            r.remove_waiter(0);
            r.add_waiter(&place("w2", "a.md", 35, 65));
        });
        let ours = with(&base, |r| r.replace_waiter(0, &place("w1", "a.md", 0, 63)));
        let m = merge3(Some(&reg(&base)), &reg(&ours), &reg(&theirs), at(40)).expect("merges");
        assert_eq!(
            places(&m.text),
            [("w2".to_string(), 35.0, 65), ("w1".to_string(), 35.001, 63)]
        );
        // The same, the other way round: the published side renewed w1
        // and an offline writer removed it as lapsed: it stays.
        let renewed = with(&base, |r| r.replace_waiter(0, &place("w1", "a.md", 0, 63)));
        let removed = with(&base, |r| r.remove_waiter(0));
        let m = merge3(Some(&reg(&base)), &reg(&removed), &reg(&renewed), at(40)).expect("merges");
        assert_eq!(places(&m.text), [("w1".to_string(), 0.0, 63)]);
        // A place added offline and renewed past its first lease comes
        // back at the end too; one merged within its first lease keeps
        // its arrival.
        let empty = empty_registry();
        let theirs = with(&empty, |r| r.add_waiter(&place("w2", "a.md", 10, 40)));
        let ours = with(&empty, |r| r.add_waiter(&place("w1", "a.md", 0, 65)));
        let m = merge3(Some(&reg(&empty)), &reg(&ours), &reg(&theirs), at(40)).expect("merges");
        assert_eq!(
            places(&m.text),
            [("w2".to_string(), 10.0, 40), ("w1".to_string(), 35.0, 65)]
        );
        let ours = with(&empty, |r| r.add_waiter(&place("w1", "a.md", 0, 30)));
        let m = merge3(Some(&reg(&empty)), &reg(&ours), &reg(&theirs), at(5)).expect("merges");
        assert_eq!(
            places(&m.text),
            [("w1".to_string(), 0.0, 30), ("w2".to_string(), 10.0, 40)]
        );
    }

    #[test]
    fn a_request_of_several_scopes_comes_back_whole_with_one_arrival() {
        let base = with(&empty_registry(), |r| {
            r.add_waiter(&place("w1", "a.md", 0, 30));
            r.add_waiter(&place("w1", "b.md", 0, 30));
        });
        let theirs = with(&base, |r| {
            r.remove_waiter(1);
            r.remove_waiter(0);
            r.add_waiter(&place("w2", "b.md", 31, 61));
        });
        let ours = with(&base, |r| {
            r.replace_waiter(0, &place("w1", "a.md", 0, 62));
            r.replace_waiter(1, &place("w1", "b.md", 0, 62));
        });
        let m = merge3(
            Some(&reg(&base)),
            &reg(&ours),
            &reg(&theirs),
            t0() + Duration::seconds(33),
        )
        .expect("merges");
        assert_eq!(
            places(&m.text),
            [
                ("w2".to_string(), 31.0, 61),
                ("w1".to_string(), 32.0, 62),
                ("w1".to_string(), 32.0, 62)
            ]
        );
    }

    proptest! {
        /// Places added, renewed and removed on two sides from one
        /// ancestor, merged at any time: the merge parses, holds each
        /// session's place once with one arrival, keeps every place added
        /// on a side, none that a side removed and the other left as it
        /// was, and every place renewed on one side and removed on the
        /// other; a place of `ours` that lapsed on the published side
        /// comes after every arrival `theirs` holds.
        #[test]
        fn queue_merges_keep_every_place_once(
            start in prop::collection::vec(0u8..6, 0..4),
            ops in prop::collection::vec((any::<bool>(), 0u8..3, 0u8..8), 0..10),
            at in 0i64..200,
        ) {
            let mut base_r = reg(&empty_registry());
            let mut seen = std::collections::HashSet::new();
            for s in &start {
                if seen.insert(*s) {
                    base_r.add_waiter(&place(&format!("b{s}"), "a.md", i64::from(*s), 30));
                }
            }
            let base = base_r.render();
            let mut sides = [reg(&base), reg(&base)];
            // What each side last did to each session: 'a'dded, 'r'enewed, 'x' removed.
            let mut did: [std::collections::HashMap<String, char>; 2] = Default::default();
            let mut seen_names = std::collections::HashSet::new();
            for (side, op, n) in &ops {
                let i = usize::from(*side);
                let r = &mut sides[i];
                let name = format!("{}{n}", if *side { "t" } else { "o" });
                let fresh = reg(&r.render());
                match op {
                    0 if seen_names.insert(name.clone()) => {
                        did[i].insert(name.clone(), 'a');
                        let mut e = fresh;
                        e.add_waiter(&place(&name, "a.md", 100 + i64::from(*n), 130));
                        *r = reg(&e.render());
                    }
                    1 if !fresh.waiters.is_empty() => {
                        let k = usize::from(*n) % fresh.waiters.len();
                        let mut e = fresh.clone();
                        let mut w = fresh.waiters[k].clone();
                        w.lease += Duration::seconds(10);
                        e.replace_waiter(k, &w);
                        did[i].entry(w.session.clone()).and_modify(|d| if *d != 'a' { *d = 'r' }).or_insert('r');
                        *r = reg(&e.render());
                    }
                    2 if !fresh.waiters.is_empty() => {
                        let k = usize::from(*n) % fresh.waiters.len();
                        did[i].insert(fresh.waiters[k].session.clone(), 'x');
                        let mut e = fresh.clone();
                        e.remove_waiter(k);
                        *r = reg(&e.render());
                    }
                    _ => {}
                }
            }
            let [o, t] = sides;
            let now = t0() + Duration::seconds(at);
            let m = merge3(Some(&reg(&base)), &o, &t, now).expect("merges");
            let merged = reg(&m.text);
            let names: Vec<String> = merged.waiters.iter().map(|w| w.session.clone()).collect();
            let uniq: std::collections::HashSet<&String> = names.iter().collect();
            prop_assert_eq!(uniq.len(), names.len());
            let all: std::collections::HashSet<&String> = did[0].keys().chain(did[1].keys()).collect();
            for s in all {
                let (a, b) = (did[0].get(s), did[1].get(s));
                let kept = names.contains(s);
                match (a, b) {
                    (Some('a'), _) | (_, Some('a')) => prop_assert!(kept, "{} lost: {:?}", s, names),
                    (Some('x'), Some('r')) | (Some('r'), Some('x')) => prop_assert!(kept, "{} lost: {:?}", s, names),
                    (Some('x'), _) | (_, Some('x')) => prop_assert!(!kept, "{} came back: {:?}", s, names),
                    _ => prop_assert!(kept, "{} lost: {:?}", s, names),
                }
            }
            // A place of ours that came back with another arrival is after
            // every arrival theirs holds (not from the future).
            for w in &merged.waiters {
                let was = o.waiters.iter().find(|x| x.session == w.session);
                if was.is_some_and(|x| x.since != w.since) {
                    for x in t.waiters.iter().filter(|x| x.session != w.session && x.since <= now.max(w.lease - Duration::seconds(30))) {
                        prop_assert!(x.since < w.since, "{} not after {}", w.session, x.session);
                    }
                }
            }
        }
    }
}
