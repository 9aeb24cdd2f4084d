//! A session's audit: the commits that carry its trailer and the changes
//! of the work tree, checked against its claims; and the one path from a
//! list of changed files to the guard's findings, shared by the pre-commit
//! hook, `bsi verify` and `bsi close`. Reads git and the work tree.

use crate::git::Oid;

use crate::drift;
use crate::error::{Error, Result};
use unicode_normalization::UnicodeNormalization;

use crate::git::{Change, ChangesOf, MergeFile, MergeOf};
use crate::guard::merge::{self, Other};
use crate::guard::{self, ClaimIndex, Finding, Region, Touch};
use crate::markdown;
use crate::registry::{self, Claim, Registry, col};
use crate::resolve;
use crate::scope;
use crate::scope::Scope;
use crate::store::Brain;
use crate::trailer;
use crate::ttl;
use crate::words::command_line;

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
pub fn outline_of(brain: &Brain, file: &str, worktree: bool) -> Option<markdown::Outline> {
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

/// Registry times are to the minute, and the clocks of two machines
/// differ: a commit counts as made while a claim was held within this
/// many seconds of its opening and closing.
pub const LEEWAY_SECS: i64 = 120;

/// A claim in a session's life: held still (`closed` is `None`: its active
/// or stale claims) or held from `opened` until `closed` (its history).
#[derive(Debug, Clone)]
pub struct Held {
    pub claim: Claim,
    pub stale: bool,
    /// When it was closed, seconds since the epoch.
    pub closed: Option<i64>,
}

/// Every claim `session` holds or held: its active and stale claims in
/// `reg`, then the claims its history rows name (the registry's; the
/// archive files hold rows too old to matter to a commit being judged).
pub fn life(brain: &Brain, reg: &Registry, session: &str) -> Result<Vec<Held>> {
    let mut out: Vec<Held> = reg
        .all_claims()
        .filter(|(c, _)| c.session == session)
        .map(|(c, stale)| Held {
            claim: c.clone(),
            stale,
            closed: None,
        })
        .collect();
    for c in history_claims(brain, reg, &[], session)? {
        let closed = c.expires.timestamp();
        out.push(Held {
            claim: c,
            stale: false,
            closed: Some(closed),
        });
    }
    Ok(out)
}

/// The claims of `life` held at `time` (seconds since the epoch): opened
/// by then, and not closed yet (within [`LEEWAY_SECS`]). Pure.
pub fn held_at(life: &[Held], time: i64) -> Vec<(&Claim, bool)> {
    life.iter()
        .filter(|h| h.claim.opened.timestamp() - LEEWAY_SECS <= time)
        .filter(|h| h.closed.is_none_or(|c| time <= c + LEEWAY_SECS))
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
    let missing = missing_claims(brain, current.iter().map(|(c, _)| *c))
        .into_iter()
        .map(|c| c.scope.to_string())
        .collect();
    Ok(Report {
        commits,
        overflow,
        files,
        sections,
        missing,
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

/// The line that reports a claim naming a heading the file does not have:
/// a new section reserved before it is written, or a heading renamed or
/// removed since.
pub fn missing_line(scope: &str, session: &str) -> String {
    let file = scope::split_section(scope).0;
    let now = format!("{}#HEADING", scope::escape_path(&file));
    format!(
        "missing: {scope} names no heading the file has (a new section not written yet, or a heading renamed or removed); once renamed, claim the heading as it is now with `{}`, then drop this claim with `{}`",
        command_line(["bsi", "open", &now, "--session", session]),
        command_line(["bsi", "close", session, "--scope", scope])
    )
}

/// For `status` and `watchdog`: one line per claim of `claims` whose heading
/// the committed file no longer has, each with the command to run.
pub fn missing_lines<'a>(brain: &Brain, claims: impl Iterator<Item = &'a Claim>) -> Vec<String> {
    missing_claims(brain, claims)
        .into_iter()
        .map(|c| missing_line(&c.scope.to_string(), &c.session))
        .collect()
}

/// How many commits of the content branch the drift walk reads at most,
/// however old the oldest claim.
pub const DRIFT_DEPTH: usize = 5000;

/// The drift of `claims` ([`crate::drift`]): the commits of the content
/// branch (HEAD's history, pulled work included) made since the oldest of
/// them was opened that changed a claimed part and are not its holder's.
/// Each commit that could drift a claim is read once, by the guard's one
/// reading of a commit; the history made before the oldest claim is not
/// walked. `now` is this run's time, seconds since the epoch.
pub fn drift(brain: &Brain, claims: &[(&Claim, bool)], now: i64) -> Result<Vec<drift::Drift>> {
    let Some(oldest) = claims.iter().map(|(c, _)| c.opened.timestamp()).min() else {
        return Ok(Vec::new());
    };
    let claims = claim_starts(brain, claims, oldest);
    let index = ClaimIndex::from_claims(claims.iter().map(|&(c, stale, _)| (c, stale)));
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
        if !drift::may_drift(&claims, &commit, now) {
            continue;
        }
        for f in check_commit(brain, &index, None, m.info.id, m.info.merge, &md)? {
            if let Finding::Claimed {
                path,
                claim,
                region,
                ..
            } = f
                && let Some(i) = claims.iter().position(|(c, _, _)| std::ptr::eq(*c, claim))
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
    Ok(drift::drift(&claims, &landed, now))
}

/// How many registry commits are read for when each claim was opened.
const OPEN_DEPTH: usize = 2000;

/// Each claim with the first second a commit counts as made while it was
/// held: the registry records the minute a claim was opened, so a commit
/// made earlier in that minute (the work the claim was opened after)
/// would count too; the registry commit that opened it (`BSI-Action:
/// open`, naming its session, within that minute) says the second. The
/// registry branch and its remote-tracking copy are read back to the
/// oldest claim's minute.
fn claim_starts<'c>(
    brain: &Brain,
    claims: &[(&'c Claim, bool)],
    oldest: i64,
) -> Vec<drift::Since<'c>> {
    let tips = brain.tips(None);
    let mut from: Vec<Oid> = tips.local.into_iter().collect();
    from.extend(tips.tracking);
    let opens: Vec<(i64, Vec<String>)> = brain
        .git
        .messages_since(&from, oldest, OPEN_DEPTH)
        .into_iter()
        // Each write of a commit several writers shared, apart.
        .flat_map(|(_, time, message)| {
            trailer::writes(&message)
                .into_iter()
                .map(move |w| (time, w.trailers))
        })
        .filter_map(|(time, t)| {
            match t.action.as_deref() {
                Some("open") => Some((time, t.sessions)),
                // A close that handed waiters their claims names them after
                // the session it closed.
                Some("close" | "force-close") if t.sessions.len() > 1 => {
                    Some((time, t.sessions[1..].to_vec()))
                }
                _ => None,
            }
        })
        .collect();
    claims
        .iter()
        .map(|&(c, stale)| {
            let minute = c.opened.timestamp();
            let opened = opens
                .iter()
                .filter(|(t, sessions)| {
                    (minute..minute + 60).contains(t) && sessions.contains(&c.session)
                })
                .map(|(t, _)| *t)
                .min();
            (c, stale, opened.map_or(minute, |t| t + 1))
        })
        .collect()
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

/// The line that reports one drift, with what its holder does next.
pub fn drift_line(d: &drift::Drift) -> String {
    let short = d.short();
    format!(
        "drift: {} of {} changed by commit {short} ({}), not by {}: {} in {}; see it with `{}`, then keep it or undo it with `{}`",
        d.claim.scope,
        d.claim.session,
        d.whose(),
        d.claim.session,
        d.what(),
        d.path,
        command_line(["git", "show", short]),
        command_line(["git", "revert", short]),
    )
}

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
