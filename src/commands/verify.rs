//! `bsi verify`: what a session changed that its claims do not cover. Also
//! run by `bsi close`, and the shared step of the pre-commit hook: checking a
//! list of changed files against a claim index.

use std::io::Write;

use git2::Oid;
use serde::Serialize;

use super::Ctx;
use crate::error::{Error, Result, exit};
use crate::git::{Change, ChangesOf};
use crate::guard::{self, ClaimIndex, Finding, LineRange, Region, Touch};
use crate::markdown;
use crate::output;
use crate::registry::{self, Claim, Registry, col};
use crate::scope::Scope;
use crate::store::Brain;
use crate::trailer;
use crate::ttl;

/// The brain-relative path of a work-tree path, `None` when outside the
/// brain (its registry lives in a subdirectory of the work tree).
pub(crate) fn brain_path<'p>(brain: &Brain, path: &'p str) -> Option<&'p str> {
    match brain.rel.rsplit_once('/') {
        Some((dir, _)) => path.strip_prefix(dir)?.strip_prefix('/'),
        None => Some(path),
    }
}

/// Checks changed files against `index`. Hunks and outlines are read only
/// for files a section claim concerns (the caller asked git for hunks of
/// those alone).
pub(crate) fn check_changes<'a>(
    brain: &Brain,
    index: &ClaimIndex<'a>,
    session: Option<&str>,
    changes: &[Change],
) -> Vec<Finding<'a>> {
    let mut out = Vec::new();
    for ch in changes {
        let Some(path) = brain_path(brain, &ch.path) else {
            continue;
        };
        let touch = match &ch.hunks {
            Some(h) => Touch::Lines(h.iter().map(|&(s, n)| LineRange::from_hunk(s, n)).collect()),
            None => Touch::Whole,
        };
        let outline = if index.has_sections(path) && matches!(touch, Touch::Lines(_)) {
            brain.git.new_text(ch).map(|t| markdown::outline(&t))
        } else {
            None
        };
        // A claimed heading gone from the new version: read the old one to
        // see whether this change removed it.
        let old = match &outline {
            Some(o) if !guard::missing_headings(index, path, o).is_empty() => {
                brain.git.old_text(ch).map(|t| markdown::outline(&t))
            }
            _ => None,
        };
        out.extend(guard::check_file(
            index,
            session,
            path,
            &touch,
            outline.as_ref(),
            old.as_ref(),
        ));
    }
    out
}

/// Reads the changes of `of`, with hunks for the files `index` has section
/// claims on.
pub(crate) fn read_changes(
    brain: &Brain,
    index: &ClaimIndex<'_>,
    of: ChangesOf,
) -> Result<Vec<Change>> {
    brain.git.changes(of, &|p: &str| {
        brain_path(brain, p).is_some_and(|p| index.has_sections(p))
    })
}

/// An overflow, with where it was found.
#[derive(Debug, Clone)]
pub(crate) struct Overflow {
    /// The commit, or `None` for the work tree.
    pub(crate) commit: Option<Oid>,
    pub(crate) path: String,
    pub(crate) region: Option<Region>,
}

/// What `verify` found.
#[derive(Debug, Clone)]
pub(crate) struct Report {
    pub(crate) commits: Vec<Oid>,
    pub(crate) overflow: Vec<Overflow>,
    pub(crate) files: usize,
    pub(crate) sections: usize,
}

impl Report {
    /// `overflow: 2 files, 1 section`, or `None` when clean.
    pub(crate) fn note(&self) -> Option<String> {
        guard::overflow_note(self.files, self.sections)
    }
}

/// The commit that opened `session`'s claims: the newest `open` commit of
/// the session on HEAD's first-parent chain whose parent's registry holds no
/// claim of it. `None` when not found (all of history is read then).
fn opening_commit(brain: &Brain, session: &str) -> Result<Option<Oid>> {
    let mut found = None;
    brain.git.walk_first_parents(&mut |c| {
        if !(trailer::has(&c.message, trailer::SESSION, session)
            && trailer::has(&c.message, trailer::ACTION, "open"))
        {
            return Ok(true);
        }
        let held_before = match c.parent {
            None => false,
            Some(p) => match brain.git.file_at(p, &brain.rel)? {
                None => false,
                Some(bytes) => {
                    match registry::parse(String::from_utf8_lossy(&bytes).into_owned()) {
                        Ok(reg) => reg.all_claims().any(|(cl, _)| cl.session == session),
                        // An unreadable registry back then: keep walking.
                        Err(_) => true,
                    }
                }
            },
        };
        if held_before {
            Ok(true)
        } else {
            found = Some(c.id);
            Ok(false)
        }
    })?;
    Ok(found)
}

/// Verifies `session` against its active and stale claims in `reg`.
pub(crate) fn verify(
    brain: &Brain,
    reg: &Registry,
    session: &str,
    worktree: bool,
) -> Result<Report> {
    let held: Vec<(&Claim, bool)> = reg
        .all_claims()
        .filter(|(c, _)| c.session == session)
        .collect();
    verify_against(brain, held, session, worktree)
}

/// The claims a closed session held, read back from its history rows.
fn closed_claims(brain: &Brain, reg: &Registry, session: &str) -> Result<Vec<Claim>> {
    let rows = registry::parse::history_rows(reg).map_err(|source| Error::Registry {
        path: brain.registry.clone(),
        source,
    })?;
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
        if out.iter().any(|c| c.scope == scope) {
            continue;
        }
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

/// Verifies `session`'s commits (and, with `worktree`, the work tree)
/// against the claims it holds or held.
fn verify_against(
    brain: &Brain,
    held: Vec<(&Claim, bool)>,
    session: &str,
    worktree: bool,
) -> Result<Report> {
    let index = ClaimIndex::from_claims(held);
    let base = opening_commit(brain, session)?;
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
        // work. A merge brings others' work: its own changes were checked
        // when they were committed.
        if c.merge
            || !trailer::has(&c.message, trailer::SESSION, session)
            || !trailer::values(&c.message, trailer::ACTION).is_empty()
        {
            continue;
        }
        let changes = read_changes(brain, &index, ChangesOf::Commit(c.id))?;
        take(
            Some(c.id),
            check_changes(brain, &index, Some(session), &changes),
        );
        commits.push(c.id);
    }
    if worktree {
        let changes = read_changes(brain, &index, ChangesOf::Worktree)?;
        take(None, check_changes(brain, &index, Some(session), &changes));
    }
    commits.reverse();
    let (files, sections) = guard::overflow_counts(&findings);
    Ok(Report {
        commits,
        overflow,
        files,
        sections,
    })
}

#[derive(Serialize)]
struct OverflowJson {
    commit: Option<String>,
    path: String,
    kind: &'static str,
    start: Option<usize>,
    end: Option<usize>,
    removal: bool,
    heading: Option<String>,
}

#[derive(Serialize)]
struct VerifyJson {
    session: String,
    /// The session has closed: checked against the scopes of its history rows.
    closed: bool,
    commits: Vec<String>,
    worktree: bool,
    clean: bool,
    files: usize,
    sections: usize,
    overflow: Vec<OverflowJson>,
}

fn short(id: Oid) -> String {
    id.to_string()[..7].to_string()
}

/// One line describing an overflow.
pub(crate) fn describe(o: &Overflow, session: &str) -> String {
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

pub(crate) fn run(ctx: &Ctx, session: Option<&str>, worktree: bool, json: bool) -> Result<u8> {
    let (brain, settings) = ctx.open()?;
    let session = ctx.session(session)?;
    let remote = settings.remote(&brain.git)?;
    let reg = brain.view(remote.as_ref())?.registry;
    // A closed session is verified against the scopes its history rows name.
    let holds = reg.all_claims().any(|(c, _)| c.session == session);
    let closed = if holds {
        Vec::new()
    } else {
        closed_claims(&brain, &reg, &session)?
    };
    if !holds && closed.is_empty() {
        return Err(Error::NotFound(format!(
            "session {session} holds no claim and has none in the history to verify against"
        )));
    }
    let report = if holds {
        verify(&brain, &reg, &session, worktree)?
    } else {
        verify_against(
            &brain,
            closed.iter().map(|c| (c, false)).collect(),
            &session,
            worktree,
        )?
    };
    let clean = report.overflow.is_empty();
    if json {
        output::print_json(&VerifyJson {
            session: session.clone(),
            closed: !holds,
            commits: report.commits.iter().map(Oid::to_string).collect(),
            worktree,
            clean,
            files: report.files,
            sections: report.sections,
            overflow: report
                .overflow
                .iter()
                .map(|o| OverflowJson {
                    commit: o.commit.map(|c| c.to_string()),
                    path: o.path.clone(),
                    kind: if o.region.is_some() {
                        "section"
                    } else {
                        "file"
                    },
                    start: o.region.as_ref().map(|r| r.start),
                    end: o.region.as_ref().map(|r| r.end),
                    removal: o.region.as_ref().is_some_and(|r| r.removal),
                    heading: o.region.as_ref().and_then(|r| r.heading.clone()),
                })
                .collect(),
        });
    } else {
        let mut out = std::io::stdout().lock();
        let n = report.commits.len();
        let _ = writeln!(
            out,
            "Verified {session}: {n} commit{}{}{}",
            if n == 1 { "" } else { "s" },
            if worktree { " and the work tree" } else { "" },
            if closed.is_empty() {
                ""
            } else {
                " (closed: against the scopes its history rows name)"
            }
        );
        for o in &report.overflow {
            let _ = writeln!(out, "overflow: {}", describe(o, &session));
        }
        match report.note() {
            Some(note) => {
                let _ = writeln!(out, "{note}");
            }
            None => {
                let _ = writeln!(out, "clean: nothing outside the claims of {session}");
            }
        }
    }
    Ok(if clean { exit::OK } else { exit::OVERFLOW })
}
