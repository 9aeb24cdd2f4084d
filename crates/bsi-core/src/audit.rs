//! A session's audit: the commits that carry its trailer and the changes
//! of the work tree, checked against its claims; and the one path from a
//! list of changed files to the guard's findings, shared by the pre-commit
//! hook, `bsi verify` and `bsi close`. Reads git and the work tree.

use crate::git::Oid;

use crate::drift;
use crate::error::{Error, Result};
use unicode_normalization::UnicodeNormalization;

use crate::changes;
use crate::git::{Change, ChangesOf, CommitInfo, MergeFile, MergeOf};
use crate::guard::merge::{self, Other};
use crate::guard::{self, ClaimIndex, Finding, Region, Touch};
use crate::holdings::{Holdings, Version};
use crate::markdown;
use crate::registry::{self, Claim, Registry, col};
use crate::resolve;
use crate::scope;
use crate::scope::Scope;
use crate::store::Brain;
use crate::trailer;
use crate::ttl;
use crate::words::command_line;
use std::collections::HashMap;

/// Checks changed files against `index`. Paths are compared NFC-normalised,
/// as scopes are stored. This is the one path from a list of changes to
/// findings: the pre-commit hook, `verify` and `verify --worktree` all come
/// through here.
pub fn check_changes<'a>(
    brain: &Brain,
    index: &ClaimIndex<'a>,
    session: Option<&str>,
    changes: &[Change],
    md: &[String],
) -> Vec<Finding<'a>> {
    let mut out = Vec::new();
    for ch in changes {
        let Some(path) = brain.brain_path(&ch.path) else {
            continue;
        };
        // Texts are read only where a section claim needs them; without
        // them the change touches the whole file.
        let nfc: String = path.nfc().collect();
        let (old, new) = if index.has_sections(&nfc) && scope::is_markdown(&nfc, md) {
            (brain.git.old_text(ch), brain.git.new_text(ch))
        } else {
            (None, None)
        };
        out.extend(guard::check_change(
            index,
            session,
            path,
            old.as_deref(),
            new.as_deref(),
            md,
        ));
    }
    out
}

/// Checks what a merge changed of its own ([`guard::merge`]) against
/// `index`: the same findings as [`check_changes`] gives for a commit, for
/// the parts of each file the merger changed. A markdown file is judged
/// section by section; any other file (or one whose text cannot be read)
/// as a whole.
pub fn check_merge<'a>(
    brain: &Brain,
    index: &ClaimIndex<'a>,
    session: Option<&str>,
    files: &[MergeFile],
    md: &[String],
) -> Vec<Finding<'a>> {
    let mut out = Vec::new();
    for f in files {
        let Some(path) = brain.brain_path(&f.path) else {
            continue;
        };
        let nfc: String = path.nfc().collect();
        if let Some(touch) = merge_touch(brain, index, f, &nfc, md) {
            out.extend(guard::check_file(index, session, &nfc, &touch));
        }
    }
    out
}

/// What the merger did to one file (`nfc`: its brain path, NFC): `None`
/// when nothing of its own.
fn merge_touch(
    brain: &Brain,
    index: &ClaimIndex<'_>,
    f: &MergeFile,
    nfc: &str,
    md: &[String],
) -> Option<Touch> {
    let others = || {
        f.bases.iter().zip(&f.theirs).map(|(b, t)| Other {
            base: *b,
            theirs: *t,
        })
    };
    if scope::is_markdown(nfc, md) {
        let text = |id: Option<Oid>| brain.git.text_of(id);
        let texts = (|| {
            let ours = text(f.ours)?;
            let result = text(f.result)?;
            let others: Option<Vec<(String, String)>> = others()
                .map(|o| Some((text(o.base)?, text(o.theirs)?)))
                .collect();
            Some((ours, result, others?))
        })();
        if let Some((ours, result, others)) = texts {
            let sides: Vec<Other<&str>> = others
                .iter()
                .map(|(b, t)| Other {
                    base: b.as_str(),
                    theirs: t.as_str(),
                })
                .collect();
            let change = merge::text_change_of_merge(&ours, &sides, &result)?;
            return Some(if index.has_sections(nfc) {
                Touch::Text(change)
            } else {
                Touch::Whole
            });
        }
    }
    let others: Vec<Other<Option<Oid>>> = others().collect();
    merge::changes_file(&f.ours, &others, &f.result).then_some(Touch::Whole)
}

/// What one commit changed, against `index`: a commit against its first
/// parent, a merge (`merge`) by what it changed of its own. The one reading
/// of a commit for `verify` and the reference-transaction hook.
pub fn check_commit<'a>(
    brain: &Brain,
    index: &ClaimIndex<'a>,
    session: Option<&str>,
    commit: Oid,
    merge: bool,
    md: &[String],
) -> Result<Vec<Finding<'a>>> {
    if merge {
        let files = brain.git.merge_files(MergeOf::Commit(commit))?;
        return Ok(check_merge(brain, index, session, &files, md));
    }
    let changes = read_changes(brain, ChangesOf::Commit(commit))?;
    Ok(check_changes(brain, index, session, &changes, md))
}

/// Whether landing commit `c` is its author's own judged work: the
/// session its trailer names held every part it changes when it was made
/// (the claims of that session's life at the commit's author time, which a
/// rebase, a cherry-pick and `--amend` keep). Such a commit was judged by
/// the session that made it — here, or on the clone it comes from — and is
/// not judged again against the claims of now: a replay (`git pull
/// --rebase`, a squash, a reset back to it) or others' work arriving by
/// `git fetch origin main:main` or `git pull URL main`. A trailer naming a
/// session that did not hold what the commit changes then is no more than
/// any committer's word: false.
pub fn made_by_holder(
    brain: &Brain,
    reg: &Registry,
    c: &crate::git::CommitInfo,
    md: &[String],
) -> Result<bool> {
    let Some(author) = trailer::author_session(&c.message) else {
        return Ok(false);
    };
    let Some(time) = brain.git.author_time(c.id) else {
        return Ok(false);
    };
    let life = life(brain, reg, author)?;
    let held = held_at(&life, time);
    if held.is_empty() {
        return Ok(false);
    }
    let index = ClaimIndex::from_claims(held);
    Ok(check_commit(brain, &index, Some(author), c.id, c.merge, md)?.is_empty())
}

/// Whether commit `c`, replacing `originals` (the commits of its session
/// that the branch update leaves behind: what a rebase, an amend or a
/// squash copies), changes no more than they did: in each file, every line
/// it removes one of them removed, every line it adds one of them added
/// ([`crate::changes::within_edits`]). A copy a rebase applied cleanly, a
/// squash, a reworded amend are; a conflict resolved over a line another
/// commit wrote since, or an amend that adds a line, are not — they are
/// new changes, judged as any. A file whose text cannot be read is the
/// same only when one of the originals left it so.
pub fn replays_within(brain: &Brain, c: &CommitInfo, originals: &[CommitInfo]) -> Result<bool> {
    type Edits = (Vec<String>, Vec<String>);
    let mut edits: HashMap<String, Vec<Edits>> = HashMap::new();
    let mut left: HashMap<String, Vec<Option<Oid>>> = HashMap::new();
    for o in originals.iter().filter(|o| !o.merge) {
        for ch in read_changes(brain, ChangesOf::Commit(o.id))? {
            let blob = if ch.deleted { None } else { ch.new_blob };
            left.entry(ch.path.clone()).or_default().push(blob);
            if let (Some(old), Some(new)) = (brain.git.old_text(&ch), brain.git.new_text(&ch)) {
                edits
                    .entry(ch.path.clone())
                    .or_default()
                    .push(changes::edit_lines(&old, &new));
            }
        }
    }
    for ch in read_changes(brain, ChangesOf::Commit(c.id))? {
        let same =
            if let (Some(old), Some(new)) = (brain.git.old_text(&ch), brain.git.new_text(&ch)) {
                edits
                    .get(&ch.path)
                    .is_some_and(|o| changes::within_edits(&changes::edit_lines(&old, &new), o))
            } else {
                let blob = if ch.deleted { None } else { ch.new_blob };
                left.get(&ch.path).is_some_and(|b| b.contains(&blob))
            };
        if !same {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Reads the changes of `of`.
pub fn read_changes(brain: &Brain, of: ChangesOf<'_>) -> Result<Vec<Change>> {
    brain.git.changes(of)
}

/// An overflow, with where it was found.
#[derive(Debug, Clone)]
pub struct Overflow {
    /// The commit, or `None` for the work tree.
    pub commit: Option<Oid>,
    pub path: String,
    pub region: Option<Region>,
}

/// What `verify` found.
#[derive(Debug, Clone)]
pub struct Report {
    pub commits: Vec<Oid>,
    pub overflow: Vec<Overflow>,
    pub files: usize,
    pub sections: usize,
    /// Section claims whose heading the file no longer has (as committed,
    /// or in the work tree with `--worktree`): claims that protect nothing.
    pub missing: Vec<String>,
    /// Section claims for a heading not written yet (reserved).
    pub reserved: Vec<String>,
}

/// The section claims whose heading neither the committed file (HEAD) nor
/// the work tree has: a rename or removal that is committed. A heading
/// written but not yet committed, or renamed but not yet committed, is not
/// reported.
fn missing_claims<'a>(brain: &Brain, claims: impl Iterator<Item = &'a Claim>) -> Vec<&'a Claim> {
    let at_head =
        guard::missing_section_claims(claims, &|file: &str| outline_of(brain, file, false));
    guard::missing_section_claims(at_head, &|file: &str| outline_of(brain, file, true))
}

/// The heading tree of `file` (brain-relative) as committed at HEAD, or in
/// the work tree.
pub(crate) fn outline_of(brain: &Brain, file: &str, worktree: bool) -> Option<markdown::Outline> {
    if worktree {
        return resolve::read_outline(&brain.root, file);
    }
    let head = brain.git.head_state(&brain.copy_path).ok()?.commit?;
    let bytes = brain.git.file_at(head, &brain.workdir_path(file)).ok()??;
    Some(markdown::outline(&String::from_utf8(bytes).ok()?))
}

impl Report {
    /// What the report comes to.
    pub fn outcome(&self) -> VerifyOutcome {
        if self.files == 0 && self.sections == 0 {
            VerifyOutcome::Clean
        } else {
            VerifyOutcome::Overflow {
                files: self.files,
                sections: self.sections,
            }
        }
    }
}

pub use crate::claims::close::VerifyOutcome;

/// Verifies `session`, which holds claims in `reg`, over its whole life:
/// each commit against the claims it held when the commit was made (its
/// author time, which a rebase keeps) — the active and stale ones, and
/// those closed since that its history rows name —, the work tree against
/// the claims it holds now.
pub fn verify(brain: &Brain, reg: &Registry, session: &str, worktree: bool) -> Result<Report> {
    let life = life(brain, reg, session)?;
    let now: Vec<(&Claim, bool)> = life
        .iter()
        .filter(|h| h.closed.is_none())
        .map(|h| (&h.claim, h.stale))
        .collect();
    let at = |time: Option<i64>| match time {
        Some(t) => held_at(&life, t),
        None => now.clone(),
    };
    verify_with(brain, &at, &now, session, worktree)
}

/// The claims a closed session held, read back from its history rows.
/// Rows moved to the archive files count too.
pub fn closed_claims(
    brain: &Brain,
    reg: &Registry,
    archives: &[String],
    session: &str,
) -> Result<Vec<Claim>> {
    let mut out: Vec<Claim> = Vec::new();
    for c in history_claims(brain, reg, archives, session)? {
        if !out.iter().any(|o| o.scope == c.scope) {
            out.push(c);
        }
    }
    Ok(out)
}

/// Every claim of `session` its history rows name (and the archive
/// files'), one per row: a scope claimed twice is there twice. `opened`
/// and `expires` are when it was opened and closed.
fn history_claims(
    brain: &Brain,
    reg: &Registry,
    archives: &[String],
    session: &str,
) -> Result<Vec<Claim>> {
    let mut rows = registry::parse::history_rows(reg).map_err(|source| Error::Registry {
        path: brain.registry.clone(),
        source,
    })?;
    for text in archives {
        rows.extend(registry::archive::rows_of(text).unwrap_or_default());
    }
    let cell = |row: &[(String, String)], name: &str| {
        row.iter()
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default()
    };
    let mut out: Vec<Claim> = Vec::new();
    for row in rows {
        if cell(&row, col::SESSION) != session {
            continue;
        }
        let Ok(scope) = Scope::parse_stored(&cell(&row, col::SCOPE)) else {
            continue;
        };
        let opened = ttl::parse_ts_local(&cell(&row, col::H_OPENED))
            .unwrap_or_else(|| chrono::DateTime::UNIX_EPOCH.fixed_offset());
        let closed = ttl::parse_ts_local(&cell(&row, col::H_CLOSED)).unwrap_or(opened);
        out.push(Claim {
            session: session.to_string(),
            scope,
            agent: cell(&row, col::AGENT),
            opened,
            expires: closed,
            note: String::new(),
            reason: None,
            extra: Vec::new(),
        });
    }
    Ok(out)
}

/// Where the record of who held what does not reach a claim (the registry
/// commit that granted or ended it out of the history read), its row's
/// minutes count, within this many seconds: registry rows are to the
/// minute.
pub(crate) const LEEWAY_SECS: i64 = 120;

/// A claim in a session's life, and when it was held: from the second of
/// the registry commit that granted it until the second of the one that
/// ended it (`None`: held still, its active or stale claims).
#[derive(Debug, Clone)]
pub(crate) struct Held {
    pub claim: Claim,
    pub stale: bool,
    /// From when, seconds since the epoch (`i64::MIN`: since before the
    /// registry history read).
    pub from: i64,
    /// Until when, seconds since the epoch; `None`: held still.
    pub closed: Option<i64>,
}

/// Every claim `session` holds or held, each with when, by the record of
/// who held what ([`holdings`]): its active and stale claims in `reg`
/// from the second they were granted, then every claim of it the record
/// saw granted and ended. A history row of the registry the record does
/// not reach (the archive files hold rows too old to matter to a commit
/// being judged) counts from its minutes, within [`LEEWAY_SECS`].
pub(crate) fn life(brain: &Brain, reg: &Registry, session: &str) -> Result<Vec<Held>> {
    let now: Vec<(&Claim, bool)> = reg
        .all_claims()
        .filter(|(c, _)| c.session == session)
        .collect();
    let past = history_claims(brain, reg, &[], session)?;
    let Some(since) = now
        .iter()
        .map(|(c, _)| c.opened.timestamp())
        .chain(past.iter().map(|c| c.opened.timestamp()))
        .min()
    else {
        return Ok(Vec::new());
    };
    let record = holdings(brain, since);
    let mut out: Vec<Held> = now
        .iter()
        .map(|&(c, stale)| Held {
            claim: c.clone(),
            stale,
            from: match record.granted(session, &c.scope) {
                Some(from) => from.unwrap_or(i64::MIN),
                None => c.opened.timestamp() - LEEWAY_SECS,
            },
            closed: None,
        })
        .collect();
    let ended: Vec<&crate::holdings::Hold> = record
        .holds()
        .iter()
        .filter(|h| h.session == session && h.until.is_some())
        .collect();
    for h in &ended {
        let row = past.iter().find(|c| c.scope == h.scope);
        let at = |t: Option<i64>| {
            t.and_then(|t| chrono::DateTime::from_timestamp(t, 0))
                .map(|d| d.fixed_offset())
        };
        let opened = at(h.from).or(row.map(|r| r.opened));
        let Some(opened) = opened else { continue };
        out.push(Held {
            claim: Claim {
                session: session.to_string(),
                scope: h.scope.clone(),
                agent: row.map(|r| r.agent.clone()).unwrap_or_default(),
                opened,
                expires: at(h.until).unwrap_or(opened),
                note: String::new(),
                reason: None,
                extra: Vec::new(),
            },
            stale: false,
            from: h.from.unwrap_or(i64::MIN),
            closed: h.until,
        });
    }
    for c in past {
        let closed = c.expires.timestamp();
        let reached = ended.iter().any(|h| {
            h.scope == c.scope && h.until.is_some_and(|u| (closed..closed + 60).contains(&u))
        });
        if !reached {
            out.push(Held {
                from: c.opened.timestamp() - LEEWAY_SECS,
                closed: Some(closed + LEEWAY_SECS),
                claim: c,
                stale: false,
            });
        }
    }
    Ok(out)
}

/// The claims of `life` held at `time` (seconds since the epoch): granted
/// by then (a commit of the grant's own second counts as made under it),
/// and not ended before. Pure.
pub(crate) fn held_at(life: &[Held], time: i64) -> Vec<(&Claim, bool)> {
    life.iter()
        .filter(|h| h.from <= time && h.closed.is_none_or(|c| time <= c))
        .map(|h| (&h.claim, h.stale))
        .collect()
}

/// Verifies `session`'s commits (and, with `worktree`, the work tree)
/// against the claims it holds or held.
pub fn verify_against(
    brain: &Brain,
    held: Vec<(&Claim, bool)>,
    session: &str,
    worktree: bool,
) -> Result<Report> {
    verify_with(brain, &|_| held.clone(), &held, session, worktree)
}

/// The claims a session held at a commit's author time (`None`: the work
/// tree, now).
type HeldWhen<'f, 'c> = dyn Fn(Option<i64>) -> Vec<(&'c Claim, bool)> + 'f;

/// Verifies `session`'s commits each against what `held_when` says it
/// held when the commit was made, the work tree against `held_when(None)`;
/// `current` are the claims whose headings `missing` checks.
fn verify_with<'c>(
    brain: &Brain,
    held_when: &HeldWhen<'_, 'c>,
    current: &[(&'c Claim, bool)],
    session: &str,
    worktree: bool,
) -> Result<Report> {
    let md = brain.markdown.clone();
    // The session's commits carry its trailer; bsi's own commits live on the
    // registry branch, so HEAD's history is the content alone.
    let base = None;
    let mut commits = Vec::new();
    let mut overflow = Vec::new();
    let mut findings = Vec::new();
    let mut take = |commit: Option<Oid>, found: Vec<Finding<'_>>| {
        for f in found {
            if let Finding::Outside { path, region } = &f {
                overflow.push(Overflow {
                    commit,
                    path: path.clone(),
                    region: region.clone(),
                });
                findings.push(Finding::Outside {
                    path: path.clone(),
                    region: region.clone(),
                });
            }
        }
    };
    for c in brain.git.commits_since(base)? {
        // bsi's own registry commits carry the session too; they are not
        // work. A merge is judged on what it changed of its own.
        if !trailer::has(&c.message, trailer::SESSION, session)
            || !trailer::values(&c.message, trailer::ACTION).is_empty()
        {
            continue;
        }
        let index = ClaimIndex::from_claims(held_when(brain.git.author_time(c.id)));
        take(
            Some(c.id),
            check_commit(brain, &index, Some(session), c.id, c.merge, &md)?,
        );
        commits.push(c.id);
    }
    if worktree {
        let index = ClaimIndex::from_claims(held_when(None));
        let changes = read_changes(brain, ChangesOf::Worktree)?;
        take(
            None,
            check_changes(brain, &index, Some(session), &changes, &md),
        );
    }
    commits.reverse();
    let (files, sections) = guard::overflow_counts(&findings);
    let mut missing = Vec::new();
    let mut reserved = Vec::new();
    for (c, why) in unwritten(brain, current.iter().map(|(c, _)| *c)) {
        match why {
            Unwritten::Gone => missing.push(c.scope.to_string()),
            Unwritten::Reserved => reserved.push(c.scope.to_string()),
        }
    }
    Ok(Report {
        commits,
        overflow,
        files,
        sections,
        missing,
        reserved,
    })
}

pub fn short(id: Oid) -> String {
    id.to_string()[..7].to_string()
}

/// One line describing an overflow.
pub fn describe(o: &Overflow, session: &str) -> String {
    let place = match o.commit {
        Some(c) => format!("commit {}", short(c)),
        None => "work tree".to_string(),
    };
    match &o.region {
        None => format!("{} — outside every scope of {session} ({place})", o.path),
        Some(r) => format!(
            "{} {} — outside the sections {session} holds in this file ({place})",
            o.path,
            r.describe()
        ),
    }
}

/// Why a section claim names a heading its file does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unwritten {
    /// The file did not have it when the claim was opened either: a new
    /// section reserved before it is written, as documented.
    Reserved,
    /// The file had it when the claim was opened: renamed or removed
    /// since, so the claim protects nothing.
    Gone,
}

/// The section claims of `claims` whose heading neither HEAD's file nor
/// the work tree's has, each with why: [`Unwritten::Gone`] when a version
/// of the file committed since the claim was opened (HEAD's first-parent
/// line back to the first commit older than the claim, 200 commits at
/// most) had the heading; else [`Unwritten::Reserved`]. What is said only:
/// no rule reads it.
pub(crate) fn unwritten<'a>(
    brain: &Brain,
    claims: impl Iterator<Item = &'a Claim>,
) -> Vec<(&'a Claim, Unwritten)> {
    let line = match brain.git.head_commit() {
        Ok(Some(h)) => brain.git.first_parent_times(h, 200),
        _ => Vec::new(),
    };
    missing_claims(brain, claims)
        .into_iter()
        .map(|c| {
            let gone = match &c.scope {
                Scope::Section { file, heading } => {
                    had_heading(brain, &line, file, heading, c.opened.timestamp())
                }
                _ => false,
            };
            (
                c,
                if gone {
                    Unwritten::Gone
                } else {
                    Unwritten::Reserved
                },
            )
        })
        .collect()
}

/// Whether a version of `file` on `line` (commits newest first, with their
/// times) committed since `since`, or the one in place then, had `heading`.
fn had_heading(brain: &Brain, line: &[(Oid, i64)], file: &str, heading: &str, since: i64) -> bool {
    let key = scope::heading_key(heading);
    let path = brain.workdir_path(file);
    let mut read: Vec<Vec<u8>> = Vec::new();
    for &(id, time) in line {
        if let Ok(Some(bytes)) = brain.git.file_at(id, &path)
            && !read.contains(&bytes)
        {
            let has = String::from_utf8(bytes.clone())
                .is_ok_and(|t| markdown::outline(&t).find(&key).next().is_some());
            if has {
                return true;
            }
            read.push(bytes);
        }
        if time < since {
            break;
        }
    }
    false
}

/// The line that says a claim reserves a section not written yet.
pub fn reserved_line(scope: &str, session: &str) -> String {
    format!(
        "reserved: {scope} is held by {session} for a section not written yet; the heading, once written and committed, is the claim's"
    )
}

/// The line that reports a claim naming a heading the file does not have:
/// a new section reserved before it is written, or a heading renamed or
/// removed since.
pub fn missing_line(scope: &str, session: &str) -> String {
    let file = scope::split_section(scope).0;
    let now = format!("{}#HEADING", scope::escape_path(&file));
    format!(
        "missing: {scope} names no heading the file has (renamed or removed since it was claimed); once renamed, claim the heading as it is now with `{}`, then drop this claim with `{}`",
        command_line(["bsi", "open", &now, "--session", session]),
        command_line(["bsi", "close", session, "--scope", scope])
    )
}

/// For `status` and `watchdog`: one line per claim of `claims` whose heading
/// the committed file does not have: a reserved section said as such, a
/// heading gone with the command to run.
pub fn missing_lines<'a>(brain: &Brain, claims: impl Iterator<Item = &'a Claim>) -> Vec<String> {
    unwritten(brain, claims)
        .into_iter()
        .map(|(c, why)| match why {
            Unwritten::Reserved => reserved_line(&c.scope.to_string(), &c.session),
            Unwritten::Gone => missing_line(&c.scope.to_string(), &c.session),
        })
        .collect()
}

/// How many commits of the content branch the drift walk reads at most,
/// however old the oldest claim.
pub(crate) const DRIFT_DEPTH: usize = 5000;

/// The drift of `claims` ([`crate::drift`]): the commits of the content
/// branch (HEAD's history, pulled work included) made since the oldest of
/// them was opened that changed a claimed part while its holder held it,
/// and whose session did not hold that part then — by the record of who
/// held what ([`holdings`]), to the second. Each commit that could drift a
/// claim is read once, by the guard's one reading of a commit; the history
/// made before the oldest claim is not walked. `now` is this run's time,
/// seconds since the epoch.
pub(crate) fn drift(
    brain: &Brain,
    claims: &[(&Claim, bool)],
    now: i64,
) -> Result<Vec<drift::Drift>> {
    let Some(oldest) = claims.iter().map(|(c, _)| c.opened.timestamp()).min() else {
        return Ok(Vec::new());
    };
    let record = holdings(brain, oldest).with_unread(
        claims
            .iter()
            .map(|(c, _)| (c.session.as_str(), &c.scope, c.opened.timestamp())),
    );
    let index = ClaimIndex::from_claims(claims.iter().copied());
    let md = brain.markdown.clone();
    let mut landed = Vec::new();
    for m in brain.git.commits_made_since(oldest, DRIFT_DEPTH)? {
        // bsi's own registry commits are not work.
        if !trailer::values(&m.info.message, trailer::ACTION).is_empty() {
            continue;
        }
        let mut commit = drift::Landed {
            id: m.info.id.to_string(),
            author: m.author,
            session: trailer::author_session(&m.info.message).map(String::from),
            time: m.time,
            touched: Vec::new(),
        };
        if !drift::may_drift(&record, claims, &commit, now) {
            continue;
        }
        for f in check_commit(brain, &index, None, m.info.id, m.info.merge, &md)? {
            if let Finding::Claimed {
                path,
                claim,
                region,
                ..
            } = f
                && let Some(i) = claims.iter().position(|(c, _)| std::ptr::eq(*c, claim))
            {
                commit.touched.push(drift::Touch {
                    claim: i,
                    path,
                    region,
                });
            }
        }
        landed.push(commit);
    }
    Ok(drift::drift(&record, claims, &landed, now))
}

/// How many registry commits the record of who held what reads at most.
const RECORD_DEPTH: usize = 2000;

/// The record of who held what, when ([`crate::holdings`]): the registry
/// commits made since `since` (seconds since the epoch) on the local
/// registry branch and on every remote-tracking copy of it — what the
/// remote published counts as much as what this clone wrote —, each
/// commit once whichever ref reaches it, with the claims each holds; and
/// the parents they were made on, for what was held before them. A commit
/// whose registry cannot be read is left out.
pub(crate) fn holdings(brain: &Brain, since: i64) -> Holdings {
    let mut tips: Vec<Oid> = brain.tips(None).local.into_iter().collect();
    tips.extend(
        brain
            .git
            .refs_glob(&format!("refs/remotes/*/{}", brain.branch)),
    );
    // Read once a command: a record read from further back, of the same
    // registry tips and repository, answers for any later second too.
    let key = (brain.git.git_dir(), tips.clone());
    let cached = RECORD.with(|r| {
        r.borrow()
            .as_ref()
            .filter(|(k, from, _)| *k == key && *from <= since)
            .map(|(_, _, h)| h.clone())
    });
    if let Some(h) = cached {
        return h;
    }
    let record = read_holdings(brain, &tips, since);
    RECORD.with(|r| *r.borrow_mut() = Some((key, since, record.clone())));
    record
}

/// The repository and registry tips, the second from which, and the
/// record last read by [`holdings`] in this thread.
type RecordCache = Option<((std::path::PathBuf, Vec<Oid>), i64, Holdings)>;

thread_local! {
    static RECORD: std::cell::RefCell<RecordCache> = const { std::cell::RefCell::new(None) };
}

/// [`holdings`], read.
fn read_holdings(brain: &Brain, tips: &[Oid], since: i64) -> Holdings {
    type Claims = Vec<(String, Scope)>;
    let graph = brain.git.graph_since(tips, since, RECORD_DEPTH);
    let parents_of: HashMap<Oid, &Vec<Oid>> = graph.iter().map(|(id, _, p)| (*id, p)).collect();
    let read = |id: Oid| -> Option<Claims> {
        let reg = brain.parse(brain.text_at(id).ok()?).ok()?;
        Some(
            reg.all_claims()
                .map(|(c, _)| (c.session.clone(), c.scope.clone()))
                .collect(),
        )
    };
    let mut held: HashMap<Oid, Option<Claims>> = HashMap::new();
    for (id, _, parents) in &graph {
        held.insert(*id, read(*id));
        for p in parents {
            if !parents_of.contains_key(p) && !held.contains_key(p) {
                held.insert(*p, read(*p));
            }
        }
    }
    // A commit whose registry cannot be read changed nothing: it holds
    // what its first parent read holds, so no claim is taken for held
    // since before the record.
    let claims_of = |id: Oid| -> Option<&Claims> {
        let mut at = id;
        loop {
            match held.get(&at)? {
                Some(claims) => return Some(claims),
                None => at = *parents_of.get(&at)?.first()?,
            }
        }
    };
    let mut versions = Vec::new();
    for (id, time, parents) in &graph {
        for p in parents.iter().filter(|p| !parents_of.contains_key(p)) {
            if let Some(Some(claims)) = held.get(p) {
                versions.push(Version {
                    id: p.to_string(),
                    time: since - 1,
                    parents: Vec::new(),
                    held: claims.clone(),
                });
            }
        }
        if let Some(claims) = claims_of(*id) {
            versions.push(Version {
                id: id.to_string(),
                time: *time,
                parents: parents.iter().map(ToString::to_string).collect(),
                held: claims.clone(),
            });
        }
    }
    Holdings::of(&versions)
}

/// The drift of every claim of `reg` (active and stale), or of `session`'s
/// alone.
pub fn drift_of(
    brain: &Brain,
    reg: &Registry,
    session: Option<&str>,
    now: i64,
) -> Result<Vec<drift::Drift>> {
    let claims: Vec<(&Claim, bool)> = reg
        .all_claims()
        .filter(|(c, _)| session.is_none_or(|s| c.session == s))
        .collect();
    drift(brain, &claims, now)
}

/// The line that closes a session's drift: how many commits of others
/// changed its claims.
pub fn drift_summary(drift: &[drift::Drift], session: &str) -> String {
    let mut commits: Vec<&str> = drift.iter().map(|d| d.commit.as_str()).collect();
    commits.sort_unstable();
    commits.dedup();
    let n = commits.len();
    format!(
        "drift: {n} commit{} not of {session} changed its claims since they were opened",
        if n == 1 { "" } else { "s" }
    )
}

/// The line that reports one drift, with what its holder does next: see
/// it, then keep it or undo it — never the whole commit, which may carry
/// its author's own work elsewhere. Where the holder holds the whole file,
/// the undo is that commit's change of that file alone; in a section, the
/// lines are the holder's to put back by hand.
pub fn drift_line(d: &drift::Drift) -> String {
    let short = d.short();
    let show = command_line(["git", "show", short, "--", &d.path]);
    let undo = match d.region {
        None => format!(
            "undo that change of the file alone with `{show} | {}`",
            command_line(["git", "apply", "-R"])
        ),
        Some(_) => {
            "put those lines back as you had them by hand (only those: the commit may change more)"
                .to_string()
        }
    };
    format!(
        "drift: {} of {} changed by commit {short} ({}), not by {}: {} in {}; see it with `{show}`, then keep it or {undo}",
        d.claim.scope,
        d.claim.session,
        d.whose(),
        d.claim.session,
        d.what(),
        d.path,
    )
}

#[cfg(test)]
mod two_clones;

#[cfg(test)]
mod tests {
    use super::VerifyOutcome;

    #[test]
    fn an_outcome_reads_as_close_records_it() {
        assert_eq!(VerifyOutcome::Clean.to_string(), "clean");
        assert_eq!(VerifyOutcome::Clean.history_note(), "");
        let o = VerifyOutcome::Overflow {
            files: 2,
            sections: 1,
        };
        assert_eq!(o.to_string(), "overflow: 2 files, 1 section");
        assert_eq!(o.history_note(), "overflow: 2 files, 1 section");
        assert_eq!(VerifyOutcome::NotVerified.history_note(), "not verified");
    }
}
