//! Places in the queue kept alive on each clone's own reference, not in
//! the registry: `refs/bsi/alive/<clone>` (the clone's id, as for its
//! posts), a commit with no parent whose one file, `alive`, lists the
//! places this clone's waiters keep — one line each, `session`, arrival
//! (`since`, the row's: the record is for that place and no other) and
//! lease, tab-separated, RFC 3339. The clone keeps it locally under that
//! name and pushes it forced to the same name on the remote: nobody else
//! writes it, no claim races it. The records of other clones are fetched
//! with the registry branch into `refs/bsi/alive-seen/<remote>/<clone>`.
//! A reader takes a place's lease as the later of its row's and its
//! record's ([`crate::registry::Waiter::alive`]).

use chrono::{DateTime, FixedOffset};

use super::Brain;
use crate::git_cli::Remote;
use crate::registry::Registry;
use crate::registry::merge::{MergeConflict, Merged, merge3};

pub(crate) use crate::git_cli::ALIVE;

/// The file of a record's commit.
const FILE: &str = "alive";

/// One place a clone keeps alive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The waiting session.
    pub session: String,
    /// The arrival of its place (its rows' `since`).
    pub since: DateTime<FixedOffset>,
    /// Until when its place holds.
    pub lease: DateTime<FixedOffset>,
}

impl Record {
    /// Its line in a record, and the key its lease's first sighting is
    /// recorded under when impossible.
    pub fn line(&self) -> String {
        use chrono::SecondsFormat::Millis;
        format!(
            "{}\t{}\t{}",
            self.session,
            self.since.to_rfc3339_opts(Millis, true),
            self.lease.to_rfc3339_opts(Millis, true)
        )
    }
}

/// The records of a record's text; a line that does not read is skipped.
/// Pure.
pub(crate) fn parse(text: &str) -> Vec<Record> {
    text.lines()
        .filter_map(|l| {
            let mut cells = l.split('\t');
            let session = cells.next()?.trim();
            let since = DateTime::parse_from_rfc3339(cells.next()?.trim()).ok()?;
            let lease = DateTime::parse_from_rfc3339(cells.next()?.trim()).ok()?;
            (!session.is_empty()).then(|| Record {
                session: session.to_string(),
                since,
                lease,
            })
        })
        .collect()
}

/// The text of `records`. Pure.
pub(crate) fn render(records: &[Record]) -> String {
    records.iter().map(|r| r.line() + "\n").collect()
}

/// `records` with `session`'s place renewed to `keep` (its line replaced)
/// and the lines whose lease passed at `now` dropped. Pure.
pub(crate) fn renewed(
    records: Vec<Record>,
    keep: Record,
    now: DateTime<FixedOffset>,
) -> Vec<Record> {
    let mut out: Vec<Record> = records
        .into_iter()
        .filter(|r| r.session != keep.session && r.lease > now)
        .collect();
    out.push(keep);
    out.sort_by(|a, b| a.session.cmp(&b.session));
    out
}

/// Puts on each queue row of `reg` the latest lease a record read gives
/// its place (same session, same arrival to the millisecond), when later
/// than the row's own. Pure.
pub(crate) fn annotate(reg: &mut Registry, records: &[Record]) {
    for w in &mut reg.waiters {
        let best = records
            .iter()
            .filter(|r| {
                r.session == w.session && r.since.timestamp_millis() == w.since.timestamp_millis()
            })
            .map(|r| r.lease)
            .max();
        w.alive = best
            .filter(|l| *l > w.lease)
            .map(|lease| crate::registry::Alive {
                lease,
                seen_ahead: None,
            });
    }
}

impl Brain {
    /// This clone's own record's reference.
    fn own_alive_ref(&self) -> String {
        format!("{ALIVE}{}", self.clone_id())
    }

    /// Every record this clone knows: its own, and those fetched from its
    /// remotes.
    pub fn alive_records(&self) -> Vec<Record> {
        let mut out = Vec::new();
        let own = self.own_alive_ref();
        // This clone's own record is read where it is written first: a
        // copy fetched back from the remote is never newer, and may name
        // a renewal taken back since ([`Brain::forget_alive`]).
        let mine = format!("/{}", self.clone_id());
        let mut refs: Vec<_> = self
            .git
            .refs_under("refs/bsi/alive-seen/")
            .into_iter()
            .filter(|(name, _)| !name.ends_with(&mine))
            .collect();
        if let Some(id) = self.git.ref_target(&own) {
            refs.push((own, id));
        }
        for (_, commit) in refs {
            if let Ok(Some(bytes)) = self.git.file_at(commit, FILE) {
                out.extend(parse(&String::from_utf8_lossy(&bytes)));
            }
        }
        out
    }

    /// Renews `keep` (a place of a waiter of this clone) in this clone's
    /// record, locally and on `remote` (a forced push to this clone's own
    /// reference there, within `timeout`), under a lock of the clone held
    /// for both, so two waiters of the clone never push an older record
    /// over a newer. Whether the record holds it where every reader reads
    /// it: on the remote (or locally, without one).
    pub fn keep_alive(
        &self,
        remote: Option<&Remote>,
        keep: Record,
        timeout: std::time::Duration,
    ) -> bool {
        let now = self.clock();
        self.write_alive(remote, (timeout, Unlanded::Undone), move |records| {
            renewed(records, keep, now)
        })
    }

    /// Takes `session`'s places out of this clone's record, locally and on
    /// `remote` (as [`Brain::keep_alive`] writes it): a renewal that
    /// answered only after the lease it extended had passed is not kept,
    /// and no record revives the place that lapsed. Whether the remote
    /// holds the record without them.
    pub fn forget_alive(
        &self,
        remote: Option<&Remote>,
        session: &str,
        timeout: std::time::Duration,
    ) -> bool {
        let session = session.to_string();
        self.write_alive(remote, (timeout, Unlanded::Kept), move |records| {
            records
                .into_iter()
                .filter(|r| r.session != session)
                .collect()
        })
    }

    /// This clone's own record, as written locally (what its waiters
    /// renewed last, landed on the remote or not): for `bsi doctor`.
    /// `None` when no waiter of the clone ever wrote one.
    pub fn own_alive_record(&self) -> Option<Vec<Record>> {
        let commit = self.git.ref_target(&self.own_alive_ref())?;
        Some(
            self.git
                .file_at(commit, FILE)
                .ok()
                .flatten()
                .map(|b| parse(&String::from_utf8_lossy(&b)))
                .unwrap_or_default(),
        )
    }

    /// The records as last read from `remote` (every clone's, this one's
    /// included, as the remote holds them): what the readers of that
    /// remote saw, which the merge of an offline registry judges by.
    pub fn published_alive_records(&self, remote: &Remote) -> Vec<Record> {
        let mut out = Vec::new();
        for (_, commit) in self.git.refs_under(&remote.alive_ref("")) {
            if let Ok(Some(bytes)) = self.git.file_at(commit, FILE) {
                out.extend(parse(&String::from_utf8_lossy(&bytes)));
            }
        }
        out
    }

    /// Merges `ours` and `theirs` (both descend from `base`) as every
    /// reader judges them: a place of `theirs`, the side the others
    /// published, lapses by the later of its row's lease and the one the
    /// records give it — those of `remote` as last read from it, or, with
    /// no remote named (git's merge driver), every record this clone
    /// knows.
    pub fn merge_published(
        &self,
        base: Option<&Registry>,
        ours: &Registry,
        mut theirs: Registry,
        remote: Option<&Remote>,
    ) -> Result<Merged, MergeConflict> {
        let records = match remote {
            Some(r) => self.published_alive_records(r),
            None => self.alive_records(),
        };
        annotate(&mut theirs, &records);
        merge3(base, ours, &theirs, self.clock())
    }

    /// Rewrites this clone's record with `change`, locally, then on
    /// `remote` within `timeout`, under the clone's lock of records; what
    /// the local record keeps when the remote did not take it is
    /// `unlanded`'s to say.
    fn write_alive(
        &self,
        remote: Option<&Remote>,
        (timeout, unlanded): (std::time::Duration, Unlanded),
        change: impl FnOnce(Vec<Record>) -> Vec<Record>,
    ) -> bool {
        let Ok(_lock) =
            super::lock::WriterLock::take(&self.bsi_dir().join("alive.lock"), Some(timeout))
        else {
            return false;
        };
        let own = self.own_alive_ref();
        let old = self.git.ref_target(&own);
        let records = old
            .and_then(|c| self.git.file_at(c, FILE).ok().flatten())
            .map(|b| parse(&String::from_utf8_lossy(&b)))
            .unwrap_or_default();
        let text = render(&change(records));
        let Ok(commit) = self.git.commit_alone(
            None,
            &[(FILE, Some(text.as_bytes()))],
            "bsi: places kept alive by this clone's waiters",
        ) else {
            return false;
        };
        if self
            .git
            .move_ref(&own, commit, old, "bsi: a waiter keeps its place")
            .is_err()
        {
            return false;
        }
        let landed = match remote {
            Some(r) => r.push_alive(&self.workdir, commit, &self.clone_id(), timeout),
            None => true,
        };
        if !landed && unlanded == Unlanded::Undone {
            // The others never read it: this clone judges its places as
            // they do, by what its record last landed, not by a renewal
            // that stayed here (its waiter renews in the registry instead).
            let _ = match old {
                Some(old) => {
                    self.git
                        .move_ref(&own, old, Some(commit), "bsi: a renewal not landed")
                }
                None => self.git.delete_ref(&own, commit),
            };
        }
        landed
    }
}

/// What a rewrite of the record that did not reach the remote leaves in the
/// local record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unlanded {
    /// Taken back: a renewal no other reader saw extends nothing.
    Undone,
    /// Kept: a place taken out stays out, whatever the remote holds.
    Kept,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339("2026-03-14T09:30:00.000+00:00").expect("t")
            + chrono::Duration::seconds(s)
    }

    fn rec(session: &str, since: i64, lease: i64) -> Record {
        Record {
            session: session.into(),
            since: t(since),
            lease: t(lease),
        }
    }

    #[test]
    fn a_record_reads_back_and_drops_what_lapsed() {
        let all = vec![rec("a", 0, 40), rec("b", 1, 20)];
        assert_eq!(parse(&render(&all)), all);
        assert_eq!(parse("junk\nx\tnot a time\tno\n"), Vec::<Record>::new());
        let kept = renewed(all, rec("a", 0, 60), t(25));
        assert_eq!(kept, vec![rec("a", 0, 60)]);
    }
}
