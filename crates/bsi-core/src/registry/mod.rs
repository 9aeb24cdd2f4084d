//! The registry, `BRAIN-INDEX.md`: its model, how it is read ([`parse`]) and
//! how changed rows are written back ([`render`]). Pure: bytes in, bytes out.
//!
//! The registry is kept as its original text plus the location of every row of
//! its three tables. An edit splices rows in or out; every other byte (titles,
//! prose, unknown columns of untouched rows, blank lines, line endings) is
//! carried over exactly.

pub mod archive;
pub mod merge;
pub mod parse;
pub mod render;

use std::ops::Range;

use chrono::{DateTime, FixedOffset};

use crate::scope::{Level, Scope};

pub use parse::{ParseError, parse, parse_in};

/// Default file name of the registry, at the root of the brain.
pub const REGISTRY_FILE: &str = "BRAIN-INDEX.md";
/// Heading of the active claims table.
pub const H_ACTIVE: &str = "Claims actifs";
/// Heading of the stale claims table.
pub const H_STALE: &str = "Claims stale — contrôle requis";
/// Heading of the history table.
pub const H_HISTORY: &str = "Historique";

/// Heading of the active claims table, in an English registry.
pub const H_ACTIVE_EN: &str = "Active claims";
/// Heading of the stale claims table, in an English registry.
pub const H_STALE_EN: &str = "Stale claims — check required";
/// Heading of the history table, in an English registry.
pub const H_HISTORY_EN: &str = "History";
/// Heading of the queue of `bsi open --wait` (optional: a registry without
/// it has nobody waiting; bsi adds it with the first waiter).
pub const H_QUEUE: &str = "File d'attente";
/// Heading of the queue, in an English registry.
pub const H_QUEUE_EN: &str = "Wait queue";

/// The words of a registry's table headings and stale reasons: the spec's
/// French ones, or English ones chosen at `bsi init` (`registry_language`
/// in `.bsi.toml`). Every command reads both; column names stay the spec's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Language {
    /// `## Claims actifs`, `TTL expiré sans fermeture`.
    #[default]
    French,
    /// `## Active claims`, `TTL expired without closing`.
    English,
}

impl Language {
    /// Reads `french` / `fr` or `english` / `en`, in any case.
    pub fn parse(raw: &str) -> Option<Language> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "french" | "fr" | "français" | "francais" => Some(Language::French),
            "english" | "en" => Some(Language::English),
            _ => None,
        }
    }

    /// The stale reason written by the watchdog, in this language: `max`
    /// when the claim reached the 8-hour ceiling.
    pub fn stale_reason(self, max: bool) -> &'static str {
        match (self, max) {
            (Language::French, false) => crate::ttl::STALE_REASON,
            (Language::French, true) => crate::ttl::STALE_REASON_MAX,
            (Language::English, false) => "TTL expired without closing",
            (Language::English, true) => "TTL expired without closing (8h maximum reached)",
        }
    }
}

/// Column names, as written by bsi and looked up case-insensitively.
pub mod col {
    /// Session id.
    pub const SESSION: &str = "Session";
    /// Scope.
    pub const SCOPE: &str = "Scope";
    /// Level of the scope.
    pub const LEVEL: &str = "Niveau";
    /// Who holds the claim.
    pub const AGENT: &str = "Agent";
    /// Opening time (claims).
    pub const OPENED: &str = "Ouvert le";
    /// Expiry time (claims).
    pub const EXPIRES: &str = "Expire le";
    /// Free text.
    pub const NOTE: &str = "Note";
    /// Why the claim is stale.
    pub const REASON: &str = "Raison probable";
    /// Opening time (history).
    pub const H_OPENED: &str = "Ouvert";
    /// Closing time (history).
    pub const H_CLOSED: &str = "Fermé";
    /// How the claim ended.
    pub const H_STATUS: &str = "Statut";
    /// When a waiter took its place in the queue (queue).
    pub const SINCE: &str = "Depuis";
    /// Until when a waiter's place holds unless renewed (queue).
    pub const LEASE: &str = "Bail";
}

/// Every table, the queue last.
pub const ALL_TABLES: [TableKind; 4] = [
    TableKind::Active,
    TableKind::Stale,
    TableKind::History,
    TableKind::Queue,
];

/// Which of the tables: the three of the spec, and the optional queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableKind {
    /// `## Claims actifs`.
    Active,
    /// `## Claims stale — contrôle requis`.
    Stale,
    /// `## Historique`.
    History,
    /// `## File d'attente`: who waits for what (`bsi open --wait`).
    Queue,
}

impl TableKind {
    /// The heading text of this table, as the spec writes it (French).
    pub fn heading(self) -> &'static str {
        self.heading_in(Language::French)
    }

    /// The heading text of this table in `lang`.
    pub fn heading_in(self, lang: Language) -> &'static str {
        match (self, lang) {
            (TableKind::Active, Language::French) => H_ACTIVE,
            (TableKind::Stale, Language::French) => H_STALE,
            (TableKind::History, Language::French) => H_HISTORY,
            (TableKind::Active, Language::English) => H_ACTIVE_EN,
            (TableKind::Stale, Language::English) => H_STALE_EN,
            (TableKind::History, Language::English) => H_HISTORY_EN,
            (TableKind::Queue, Language::French) => H_QUEUE,
            (TableKind::Queue, Language::English) => H_QUEUE_EN,
        }
    }

    /// Columns that must be present for bsi to understand the table.
    pub fn required(self) -> &'static [&'static str] {
        match self {
            TableKind::Active => &[
                col::SESSION,
                col::SCOPE,
                col::LEVEL,
                col::OPENED,
                col::EXPIRES,
            ],
            TableKind::Stale => &[
                col::SESSION,
                col::SCOPE,
                col::LEVEL,
                col::OPENED,
                col::EXPIRES,
                col::REASON,
            ],
            TableKind::History => &[
                col::SESSION,
                col::SCOPE,
                col::H_OPENED,
                col::H_CLOSED,
                col::H_STATUS,
            ],
            TableKind::Queue => &[col::SESSION, col::SCOPE, col::SINCE, col::LEASE],
        }
    }

    /// The columns bsi writes in a new registry.
    pub fn default_columns(self) -> &'static [&'static str] {
        match self {
            TableKind::Active => &[
                col::SESSION,
                col::SCOPE,
                col::LEVEL,
                col::AGENT,
                col::OPENED,
                col::EXPIRES,
                col::NOTE,
            ],
            TableKind::Stale => &[
                col::SESSION,
                col::SCOPE,
                col::LEVEL,
                col::AGENT,
                col::OPENED,
                col::EXPIRES,
                col::REASON,
                col::NOTE,
            ],
            TableKind::History => &[
                col::SESSION,
                col::SCOPE,
                col::LEVEL,
                col::AGENT,
                col::H_OPENED,
                col::H_CLOSED,
                col::H_STATUS,
                col::NOTE,
            ],
            TableKind::Queue => &[col::SESSION, col::SCOPE, col::AGENT, col::SINCE, col::LEASE],
        }
    }
}

/// How a claim left the claim tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Closed by its session.
    Completed,
    /// A stale claim released by a person.
    Released,
    /// An active claim released by a person with `--force`.
    ForceReleased,
}

impl Status {
    /// The word in the `Statut` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Completed => "completed",
            Status::Released => "released",
            Status::ForceReleased => "force-released",
        }
    }
}

/// One claim: a row of the active or the stale table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The session holding it.
    pub session: String,
    /// What it covers.
    pub scope: Scope,
    /// Who opened it (`user@host` or an agent name). May be empty.
    pub agent: String,
    /// When it was opened.
    pub opened: DateTime<FixedOffset>,
    /// When it expires.
    pub expires: DateTime<FixedOffset>,
    /// Free text. May be empty.
    pub note: String,
    /// Why it is stale (stale table only).
    pub reason: Option<String>,
    /// Cells of columns bsi does not know, by header name, kept when the row
    /// moves from one table to another.
    pub extra: Vec<(String, String)>,
}

impl Claim {
    /// The level of its scope.
    pub fn level(&self) -> Level {
        self.scope.level()
    }
}

/// A row of the history table, as bsi writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryEntry {
    /// The session that held the claim.
    pub session: String,
    /// The scope, as stored.
    pub scope: String,
    /// Its level, when known.
    pub level: String,
    /// Who held it.
    pub agent: String,
    /// Opening time, as written.
    pub opened: String,
    /// Closing time, as written.
    pub closed: String,
    /// `completed`, `released`, `force-released`.
    pub status: String,
    /// Free text.
    pub note: String,
    /// Unknown columns carried over.
    pub extra: Vec<(String, String)>,
}

/// One place in the queue of `bsi open --wait`: a row of `## File
/// d'attente`. A request of several scopes has one row per scope, with the
/// same session and time of arrival.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiter {
    /// The session waiting.
    pub session: String,
    /// One scope of its request.
    pub scope: Scope,
    /// Who waits. May be empty.
    pub agent: String,
    /// When it took its place: the queue's order.
    pub since: DateTime<FixedOffset>,
    /// Until when its place holds: the waiter renews it while it waits, and
    /// a place whose lease has passed is no one's.
    pub lease: DateTime<FixedOffset>,
    /// Cells of columns bsi does not know, by header name.
    pub extra: Vec<(String, String)>,
    /// When this clone first read this very row while its lease was further
    /// ahead of the clock than a lease is long (the writer's clock is
    /// ahead): the place then lapses a lease length after that, see
    /// [`Waiter::lapses`]. Filled by the store from what the
    /// clone recorded; never written in the registry.
    pub seen_ahead: Option<DateTime<FixedOffset>>,
    /// The lease its waiter last published for this very place (same
    /// session and arrival) on its clone's own reference, when later than
    /// the row's: a waiter keeps its place alive there, not in the
    /// registry. Filled by the store from the records it read; never
    /// written in the registry.
    pub alive: Option<Alive>,
}

/// A place's lease as its waiter's clone last published it
/// ([`Waiter::alive`]), judged as a row's lease is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alive {
    /// The lease.
    pub lease: DateTime<FixedOffset>,
    /// When this clone first read this very lease while it was further
    /// ahead of the clock than a lease is long (see
    /// [`Waiter::seen_ahead`]).
    pub seen_ahead: Option<DateTime<FixedOffset>>,
}

/// When a lease `lease`, first read while impossible at `seen_ahead`,
/// lapses as judged at `now`: the lease; but an impossible one (further
/// ahead of `now` than a lease is long: its writer's clock is ahead)
/// lapses a lease length after its first sighting, if not earlier.
fn lapse_of(
    lease_at: DateTime<FixedOffset>,
    seen_ahead: Option<DateTime<FixedOffset>>,
    now: DateTime<FixedOffset>,
) -> DateTime<FixedOffset> {
    match seen_ahead {
        Some(seen) => lease_at.min(seen + lease()),
        None if lease_at - now > lease() => now + lease(),
        None => lease_at,
    }
}

/// How long a place in the queue holds without renewal.
pub fn lease() -> chrono::Duration {
    chrono::Duration::seconds(30)
}

impl Waiter {
    /// Whether its place still holds at `now` ([`Waiter::lapses`]).
    pub fn live(&self, now: DateTime<FixedOffset>) -> bool {
        self.lapses(now) > now
    }

    /// Whether its lease (the row's, or the later one its clone
    /// published) is further ahead of `now` than a lease is long: no right
    /// clock writes it, so the writer's clock is ahead.
    pub fn impossible(&self, now: DateTime<FixedOffset>) -> bool {
        self.lease - now > lease() || self.alive.is_some_and(|a| a.lease - now > lease())
    }

    /// Whether its place lapses by its record's lease, later than its
    /// row's ([`Waiter::lapses`]).
    pub fn kept_by_record(&self, now: DateTime<FixedOffset>) -> bool {
        self.alive.is_some_and(|a| {
            lapse_of(a.lease, a.seen_ahead, now) > lapse_of(self.lease, self.seen_ahead, now)
        })
    }

    /// When its place lapses, as judged at `now`: the later of the row's
    /// lease and the one its clone published ([`Waiter::alive`]), each
    /// judged alone: a lease that was impossible when this clone first
    /// read it (its `seen_ahead`, or `now` when not recorded yet) lapses a
    /// lease length after that first sighting, if it is not earlier.
    pub fn lapses(&self, now: DateTime<FixedOffset>) -> DateTime<FixedOffset> {
        let row = lapse_of(self.lease, self.seen_ahead, now);
        match self.alive {
            Some(a) => row.max(lapse_of(a.lease, a.seen_ahead, now)),
            None => row,
        }
    }
}

/// One session's place in the queue: its rows gathered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The session waiting.
    pub session: String,
    /// Who waits.
    pub agent: String,
    /// When it arrived (the earliest of its rows).
    pub since: DateTime<FixedOffset>,
    /// Until when its place holds (the earliest lapse of its rows, as
    /// judged by [`Waiter::lapses`]).
    pub lease: DateTime<FixedOffset>,
    /// What it waits for, all or none.
    pub scopes: Vec<Scope>,
    /// How far ahead of this clock the waiter's machine's clock is, at
    /// least, when one of its leases was further ahead than a lease is
    /// long: its place is then counted as lapsing at `lease`.
    pub clock_ahead: Option<chrono::Duration>,
    /// Whether `lease` is the one its waiter's clone published on its
    /// record ([`Waiter::alive`]) rather than its row's.
    pub lease_from_record: bool,
}

/// One table of the registry as found in the text.
#[derive(Debug, Clone)]
pub struct Table {
    /// 1-based line of its heading.
    pub heading_line: usize,
    /// Header names, trimmed, in order.
    pub columns: Vec<String>,
    /// Byte range of each body row, including its line ending.
    pub rows: Vec<Range<usize>>,
    /// 1-based line of the first body row (rows are consecutive lines).
    pub first_row_line: usize,
    /// Byte offset where a new row goes: after the last row.
    pub end: usize,
}

impl Table {
    /// Index of a column by name, case-insensitively.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.trim().eq_ignore_ascii_case(name))
    }
}

/// A parsed registry, and the edits made to it since.
#[derive(Debug, Clone)]
pub struct Registry {
    /// Shared between a registry and the edited copies made from it: a
    /// plan clones the registry, never its (possibly 10 MB) text.
    pub(crate) text: std::sync::Arc<String>,
    pub(crate) eol: &'static str,
    pub(crate) active: Table,
    pub(crate) stale: Table,
    pub(crate) history: Table,
    /// The queue; when the registry has none yet, an empty table whose
    /// rows would go at the end of the text ([`Registry::has_queue`]).
    pub(crate) queue: Table,
    /// Whether the text holds a `## File d'attente` table.
    pub(crate) queue_present: bool,
    /// Places in the queue, in row order (lapsed ones too).
    pub waiters: Vec<Waiter>,
    /// Claims of the active table, in row order.
    pub active_claims: Vec<Claim>,
    /// Claims of the stale table, in row order.
    pub stale_claims: Vec<Claim>,
    pub(crate) splices: Vec<render::Splice>,
    /// The words of its headings (those of its active table).
    pub(crate) language: Language,
}

impl Registry {
    /// The words of its headings, for the stale reasons written into it.
    pub fn language(&self) -> Language {
        self.language
    }

    /// The original text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The table of that kind.
    pub fn table(&self, kind: TableKind) -> &Table {
        match kind {
            TableKind::Active => &self.active,
            TableKind::Stale => &self.stale,
            TableKind::History => &self.history,
            TableKind::Queue => &self.queue,
        }
    }

    /// Whether the text holds a queue table (bsi adds one with the first
    /// waiter).
    pub fn has_queue(&self) -> bool {
        self.queue_present
    }

    /// Whether `session` names a claim here, active, stale or in the
    /// history: an id already given out.
    pub fn knows_session(&self, session: &str) -> bool {
        if self.all_claims().any(|(c, _)| c.session == session) {
            return true;
        }
        // The history: a row whose session cell is that id. A history the
        // parser cannot read counts as knowing it (draw another id).
        parse::history_rows(self).map_or(true, |rows| {
            rows.iter().any(|row| {
                row.iter().any(|(k, v)| {
                    k.trim().eq_ignore_ascii_case(col::SESSION) && v.trim() == session
                })
            })
        })
    }

    /// Number of history rows.
    pub fn history_len(&self) -> usize {
        self.history.rows.len()
    }

    /// Whether `other` holds the same rows in each table, in any order, and
    /// the same text around them: the same registry for every command.
    pub fn same_rows(&self, other: &Registry) -> bool {
        fn rows(r: &Registry, kind: TableKind) -> Vec<&str> {
            let mut v: Vec<&str> = r
                .table(kind)
                .rows
                .iter()
                .map(|range| r.text[range.clone()].trim_end_matches(['\r', '\n']))
                .collect();
            v.sort_unstable();
            v
        }
        let frame = |r: &Registry| {
            let mut cut: Vec<Range<usize>> = ALL_TABLES
                .iter()
                .flat_map(|k| r.table(*k).rows.iter().cloned())
                .collect();
            cut.sort_by_key(|c| c.start);
            let mut out = String::new();
            let mut at = 0;
            for c in cut {
                out.push_str(&r.text[at..c.start]);
                at = c.end;
            }
            out.push_str(&r.text[at..]);
            out
        };
        ALL_TABLES.iter().all(|k| rows(self, *k) == rows(other, *k)) && frame(self) == frame(other)
    }

    /// Every claim, active then stale, with a flag saying which.
    pub fn all_claims(&self) -> impl Iterator<Item = (&Claim, bool)> {
        self.active_claims
            .iter()
            .map(|c| (c, false))
            .chain(self.stale_claims.iter().map(|c| (c, true)))
    }
}

impl HistoryEntry {
    /// The history row of `claim`, closed at `closed` with `status`.
    pub fn closing(
        claim: &Claim,
        closed: DateTime<FixedOffset>,
        status: Status,
        note: &str,
    ) -> Self {
        let note = match (claim.note.is_empty(), note.is_empty()) {
            (_, true) => claim.note.clone(),
            (true, false) => note.to_string(),
            (false, false) => format!("{}; {note}", claim.note),
        };
        HistoryEntry {
            session: claim.session.clone(),
            scope: claim.scope.to_string(),
            level: claim.level().as_str().to_string(),
            agent: claim.agent.clone(),
            opened: crate::ttl::format_ts(claim.opened),
            closed: crate::ttl::format_ts(closed),
            status: status.as_str().to_string(),
            note,
            extra: claim.extra.clone(),
        }
    }
}
