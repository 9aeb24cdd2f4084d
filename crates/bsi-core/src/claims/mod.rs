//! The plans of every write: what `open`, `close`, `renew`, `release` and
//! `watchdog` change in the registry. Pure: a registry, a request and a
//! [`Snapshot`] of the file system read before the writer lock in; a
//! [`Plan`](crate::claims::Plan) out. A plan is retried as is when a push
//! loses a race, so it must be cheap and decide the same on the same input.

pub mod close;
pub mod job;
pub mod open;
pub mod queue;
pub mod release;
pub mod renew;
pub mod watchdog;

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::markdown::Outline;
use crate::registry::{Claim, Registry};
use crate::scope::{Scope, Sections};

/// What a command decided, given a registry.
pub enum Plan<R> {
    /// Write this registry text with this commit message.
    Write {
        /// The new registry.
        text: String,
        /// The commit message.
        message: String,
        /// What to tell the user.
        report: R,
    },
    /// Nothing to write (a refusal, or nothing changed).
    Keep(R),
}

/// What a plan may know of the brain's files, read before the lock: the
/// heading trees of the files a request names (in the work tree and in the
/// other versions bsi knows, such as the fetched upstream), and the entries
/// of the directories a refusal proposes alternatives from. A plan asks
/// nothing else of the file system or of git.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Snapshot {
    /// The registry's copy, relative to the brain root: never proposed.
    pub registry_rel: String,
    /// Per file, its heading tree in the work tree (`None`: no such file
    /// there, or not text).
    pub worktree: HashMap<String, Option<Outline>>,
    /// Per file, its heading trees in other versions, with their names
    /// (`origin/main`).
    pub versions: HashMap<String, Vec<(String, Outline)>>,
    /// Entries of directories (`""` is the root; others end with `/`).
    pub listings: HashMap<String, Vec<Scope>>,
}

impl Snapshot {
    /// The work tree's heading tree of `file`, when it was read.
    pub fn outline(&self, file: &str) -> Option<&Outline> {
        self.worktree.get(file).and_then(Option::as_ref)
    }

    /// The entries of `dir`, when they were read.
    pub fn children(&self, dir: &str) -> &[Scope] {
        self.listings.get(dir).map_or(&[], Vec::as_slice)
    }

    fn in_worktree(&self, file: &str, outer: &str, inner: &str) -> bool {
        self.outline(file)
            .is_some_and(|o| o.contains_key(outer, inner))
    }

    fn version_nesting(&self, file: &str, outer: &str, inner: &str) -> Option<&str> {
        self.versions.get(file).and_then(|vs| {
            vs.iter()
                .find(|(_, o)| o.contains_key(outer, inner))
                .map(|(name, _)| name.as_str())
        })
    }
}

impl Sections for Snapshot {
    fn contains(&self, file: &str, outer: &str, inner: &str) -> bool {
        self.in_worktree(file, outer, inner) || self.version_nesting(file, outer, inner).is_some()
    }

    fn elsewhere(&self, file: &str, outer: &str, inner: &str) -> Option<String> {
        if self.in_worktree(file, outer, inner) {
            return None;
        }
        self.version_nesting(file, outer, inner).map(str::to_string)
    }
}

/// The files whose heading trees and the directories whose entries a plan
/// for `scopes` may need: what a [`Snapshot`] is read for.
pub fn wanted(scopes: &[Scope]) -> (Vec<String>, Vec<String>) {
    let mut files: Vec<String> = Vec::new();
    let mut dirs: Vec<String> = Vec::new();
    let add = |v: &mut Vec<String>, s: &str| {
        if !v.iter().any(|x| x == s) {
            v.push(s.to_string());
        }
    };
    for s in scopes {
        match s {
            Scope::Global => add(&mut dirs, ""),
            Scope::Dir(d) => {
                add(&mut dirs, d);
                add(&mut dirs, open::parent_dir(d));
            }
            Scope::File(f) => {
                add(&mut files, f);
                add(&mut dirs, open::parent_dir(f));
            }
            Scope::Section { file, .. } => add(&mut files, file),
        }
    }
    (files, dirs)
}

/// Whether `claim` may be acted on by `agent` as its own: a claim with no
/// agent is anybody's; names compare without case. The one ownership rule
/// of `open` (a session is one agent's), `close` and `renew`.
pub fn owned_by(claim: &Claim, agent: &str) -> bool {
    claim.agent.is_empty() || claim.agent.eq_ignore_ascii_case(agent)
}

/// Indexes of a session's claims, in the active and the stale table,
/// optionally only those with `scope`.
pub fn session_claims(
    reg: &Registry,
    session: &str,
    scope: Option<&Scope>,
) -> (Vec<usize>, Vec<usize>) {
    let pick = |claims: &[Claim]| {
        claims
            .iter()
            .enumerate()
            .filter(|(_, c)| c.session == session && scope.is_none_or(|s| &c.scope == s))
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
    };
    (pick(&reg.active_claims), pick(&reg.stale_claims))
}

/// The commit message of a registry change: a summary line and trailers.
pub fn commit_message(action: &str, sessions: &[&str], what: &str) -> String {
    commit_message_by(action, sessions, what, None)
}

/// [`commit_message`], with a [`crate::trailer::AGENT`] trailer naming who acted, so the
/// journal shows the agent rather than a shared git identity.
pub fn commit_message_by(
    action: &str,
    sessions: &[&str],
    what: &str,
    agent: Option<&str>,
) -> String {
    commit_message_about(action, sessions, (what, &[]), agent)
}

/// [`commit_message_by`] for a write about `scopes`: each in a
/// [`crate::trailer::SCOPE`] trailer, whole, for the journal to show every
/// one (the summary line is cut at 100 characters).
pub fn commit_message_about(
    action: &str,
    sessions: &[&str],
    (what, scopes): (&str, &[&Scope]),
    agent: Option<&str>,
) -> String {
    let mut uniq: Vec<&str> = Vec::new();
    for s in sessions {
        if !uniq.contains(s) {
            uniq.push(s);
        }
    }
    let mut summary = format!("bsi: {action}");
    if uniq.len() == 1 {
        summary.push(' ');
        summary.push_str(uniq[0]);
    }
    if !what.is_empty() {
        summary.push(' ');
        summary.push_str(what);
    }
    if summary.chars().count() > 100 {
        summary = summary.chars().take(99).collect::<String>() + "…";
    }
    let trailers = crate::trailer::Registry {
        sessions: uniq.iter().map(|s| (*s).to_string()).collect(),
        action: Some(action.to_string()),
        agent: agent.map(String::from),
        scopes: scopes.iter().map(ToString::to_string).collect(),
    };
    format!("{summary}\n\n{}", trailers.render())
}

/// Scopes joined for a summary line.
pub fn scopes_summary<'a>(scopes: impl IntoIterator<Item = &'a Scope>) -> String {
    scopes
        .into_iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Who acts, resolved once by the door: the session this run acts for,
/// when it has one (`--session`, `BSI_SESSION`, the agent tool's session,
/// or an id drawn for this request), and the agent name people read. A
/// request names the session it acts on apart from it where that may be
/// another's (`bsi close OTHER --force`). The one ownership rule is asked
/// of it ([`Actor::owns`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// The acting session; `None` for a person in a shell that has no
    /// session of its own.
    pub session: Option<String>,
    /// The agent name of the run.
    pub agent: String,
    /// Whether that name was given (`--agent`, `BSI_AGENT`, `default_agent`)
    /// rather than the default (`user@host`, or the agent tool's name).
    pub agent_named: bool,
    /// The session id was drawn for this request: one the registry already
    /// knows is drawn again.
    pub drawn: bool,
}

impl Actor {
    /// Whether `claim` is this actor's own: its session's. With no session
    /// of its own, naming a session is acting as it, unless the name given
    /// says the actor is another agent than the one holding it.
    pub fn owns(&self, claim: &Claim) -> bool {
        match &self.session {
            Some(s) => *s == claim.session,
            None => !self.agent_named || owned_by(claim, &self.agent),
        }
    }

    /// The session it acts for, for a request that acts on its own
    /// (`open`, a door that acts for one session); [`Error::NoSession`]
    /// when it has none.
    pub fn own_session(&self) -> Result<&str> {
        self.session.as_deref().ok_or(Error::NoSession)
    }

    /// Who acted, for a history note: `claude (session sess-…)`.
    pub fn describe(&self) -> String {
        match &self.session {
            Some(s) => format!("{} (session {s})", self.agent),
            None => self.agent.clone(),
        }
    }
}

/// Refuses to act on another session's claim unless forced: `Ok(true)` when
/// `--force` was needed (the act is then recorded as forced), `Ok(false)`
/// when every claim is the actor's own.
pub fn check_owner(
    claims: &[&Claim],
    actor: &Actor,
    force: bool,
    verb: &'static str,
) -> Result<bool> {
    let Some(c) = claims.iter().find(|c| !actor.owns(c)) else {
        return Ok(false);
    };
    if force {
        return Ok(true);
    }
    Err(match &actor.session {
        Some(s) => Error::NotYourSession {
            claim: Box::new((*c).clone()),
            acting: s.clone(),
            verb,
        },
        None => Error::NotTheHolder {
            claim: Box::new((*c).clone()),
            caller: actor.agent.clone(),
            verb,
        },
    })
}

#[cfg(test)]
pub(crate) mod tests {
    //! The plans, each on a registry built in memory and a snapshot made by
    //! hand: no repository, no file system.

    use chrono::{DateTime, Duration, FixedOffset};

    use super::*;

    use crate::registry::render::empty_registry;
    use crate::registry::{TableKind, parse};

    pub(crate) fn t0() -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339("2026-03-14T09:30:00Z").expect("time")
    }

    pub(crate) fn claim(session: &str, agent: &str, scope: Scope) -> Claim {
        Claim {
            session: session.into(),
            scope,
            agent: agent.into(),
            opened: t0(),
            expires: t0() + Duration::hours(2),
            note: String::new(),
            reason: None,
            extra: Vec::new(),
        }
    }

    /// A registry holding these active and stale claims.
    pub(crate) fn registry(active: &[Claim], stale: &[Claim]) -> Registry {
        let mut reg = parse(empty_registry()).expect("the empty registry parses");
        for c in active {
            reg.add_claim(TableKind::Active, c);
        }
        for c in stale {
            reg.add_claim(TableKind::Stale, c);
        }
        parse(reg.render()).expect("a rendered registry parses")
    }

    /// The written registry of a plan, parsed back.
    pub(crate) fn written<R>(plan: &Plan<R>) -> Option<Registry> {
        match plan {
            Plan::Write { text, .. } => Some(parse(text.clone()).expect("the plan's text parses")),
            Plan::Keep(_) => None,
        }
    }

    pub(crate) fn section(file: &str, heading: &str) -> Scope {
        Scope::Section {
            file: file.into(),
            heading: heading.into(),
        }
    }

    #[test]
    fn ownership_ignores_case_and_an_empty_agent() {
        let c = claim("s1", "Claude", Scope::File("a.md".into()));
        assert!(owned_by(&c, "claude"));
        assert!(!owned_by(&c, "codex"));
        assert!(owned_by(&claim("s1", "", Scope::Global), "anyone"));
    }

    /// Who acts: `session` (none: a shell of no session), as `agent`,
    /// that name given or not.
    pub(crate) fn by(session: Option<&str>, agent: &str, named: bool) -> Actor {
        Actor {
            session: session.map(String::from),
            agent: agent.into(),
            agent_named: named,
            drawn: false,
        }
    }

    #[test]
    fn check_owner_refuses_another_agents_claim_unless_forced() {
        let c = claim("s1", "claude", Scope::File("a.md".into()));
        let codex = by(None, "codex", true);
        let e = check_owner(&[&c], &codex, false, "close").expect_err("refused");
        assert!(
            e.to_string().contains("opened by claude, not by codex"),
            "{e}"
        );
        assert!(
            matches!(&e, Error::NotTheHolder { claim, verb: "close", .. } if claim.agent == "claude")
        );
        assert!(check_owner(&[&c], &codex, true, "close").expect("forced"));
        assert!(!check_owner(&[&c], &by(None, "CLAUDE", true), false, "close").expect("own"));
        // A shell with no session and no name given acts as the session it names.
        assert!(!check_owner(&[&c], &by(None, "me@box", false), false, "close").expect("own"));
    }

    #[test]
    fn a_session_owns_its_claims_and_not_another_sessions_of_the_same_agent() {
        let b = claim("sess-b", "claude", Scope::File("a.md".into()));
        let a = by(Some("sess-a"), "claude", false);
        let e = check_owner(&[&b], &a, false, "close").expect_err("another session's");
        assert!(
            matches!(&e, Error::NotYourSession { acting, verb: "close", .. } if acting == "sess-a"),
            "{e}"
        );
        assert!(e.to_string().contains("sess-b"), "{e}");
        assert!(check_owner(&[&b], &a, true, "close").expect("forced"));
        // Its own session, whatever agent name the run gives.
        let own = by(Some("sess-b"), "codex", true);
        assert!(!check_owner(&[&b], &own, false, "renew").expect("own"));
    }

    #[test]
    fn an_actor_of_no_session_has_none_of_its_own_and_is_said_by_its_name() {
        let shell = by(None, "me@box", false);
        assert!(matches!(shell.own_session(), Err(Error::NoSession)));
        assert_eq!(shell.describe(), "me@box");
        let agent = by(Some("sess-a"), "claude", true);
        assert_eq!(agent.own_session().expect("its own"), "sess-a");
        assert_eq!(agent.describe(), "claude (session sess-a)");
    }

    #[test]
    fn session_claims_finds_active_and_stale_rows_of_one_scope() {
        let a = claim("s1", "x", Scope::File("a.md".into()));
        let b = claim("s1", "x", Scope::File("b.md".into()));
        let other = claim("s2", "x", Scope::File("c.md".into()));
        let reg = registry(&[a, other], &[b]);
        assert_eq!(session_claims(&reg, "s1", None), (vec![0], vec![0]));
        let only_b = Scope::File("b.md".into());
        assert_eq!(session_claims(&reg, "s1", Some(&only_b)), (vec![], vec![0]));
        assert_eq!(session_claims(&reg, "s3", None), (vec![], vec![]));
    }

    #[test]
    fn commit_messages_name_one_session_and_carry_trailers() {
        let m = commit_message_by("open", &["s1", "s1"], "a.md", Some("claude"));
        let (summary, trailers) = m.split_once("\n\n").expect("a body");
        assert_eq!(summary, "bsi: open s1 a.md");
        assert!(
            trailers.contains("s1") && trailers.contains("claude"),
            "{trailers}"
        );
        let two = commit_message("sync", &["s1", "s2"], "with origin");
        assert!(two.starts_with("bsi: sync with origin\n"), "{two}");
        let long = commit_message("open", &["s1"], &"x".repeat(300));
        assert_eq!(long.lines().next().expect("a line").chars().count(), 100);
    }

    #[test]
    fn a_snapshot_nests_sections_in_any_version_and_names_the_other_one() {
        let flat = crate::markdown::outline("# Plan\n## Goals\n## Q1\n");
        let nested = crate::markdown::outline("# Plan\n## Goals\n### Q1\n");
        let mut snap = Snapshot::default();
        snap.worktree.insert("p.md".into(), Some(flat));
        snap.versions
            .insert("p.md".into(), vec![("origin/main".into(), nested)]);
        let (goals, q1) = (
            crate::scope::heading_key("Goals"),
            crate::scope::heading_key("Q1"),
        );
        assert!(snap.contains("p.md", &goals, &q1));
        assert_eq!(
            snap.elsewhere("p.md", &goals, &q1).as_deref(),
            Some("origin/main")
        );
        assert!(!snap.contains("p.md", &q1, &goals));
        assert!(!snap.contains("other.md", &goals, &q1));
    }

    #[test]
    fn wanted_reads_the_files_and_the_directories_around_a_request() {
        let (files, dirs) = wanted(&[
            Scope::Dir("notes/ideas/".into()),
            Scope::File("projets/plan.md".into()),
            section("projets/plan.md", "Risks"),
        ]);
        assert_eq!(files, vec!["projets/plan.md".to_string()]);
        assert_eq!(
            dirs,
            vec![
                "notes/ideas/".to_string(),
                "notes/".to_string(),
                "projets/".to_string()
            ]
        );
    }
}
