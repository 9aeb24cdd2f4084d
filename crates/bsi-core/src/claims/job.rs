//! A write described as data, so another bsi of the same clone can plan it:
//! the writer that holds the writer lock plans every request waiting for
//! it on one tip and publishes them with one push
//! ([`crate::publish::apply_job`]). A job holds what its plan reads besides
//! the registry (the request, its clock and its [`Snapshot`]), so whoever
//! plans it decides what its own writer would. Pure.

use chrono::{DateTime, Duration, FixedOffset};
use serde::{Deserialize, Serialize};

use super::close::{Handoff, VerifyOutcome};
use super::open::{Claiming, Queueing};
use super::{Actor, Plan, Snapshot};
use crate::error::{Error, Result};
use crate::registry::Registry;
use crate::scope::Scope;

/// A write another writer of the clone may plan.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Job {
    /// `bsi open` ([`super::open::plan_queued`]).
    Open {
        /// The session.
        session: String,
        /// The agent name its claims carry.
        agent: String,
        /// The scopes asked for.
        scopes: Vec<Scope>,
        /// Their time to live, in seconds.
        ttl_seconds: i64,
        /// The note.
        note: String,
        /// The request's clock (RFC 3339).
        now: String,
        /// The per-agent limit of active claims.
        max_active_per_agent: Option<usize>,
        /// The session id was drawn for this request.
        new_id: bool,
        /// What the plan reads of the files.
        snapshot: Snapshot,
        /// How the request stands towards the queue.
        queueing: Queue,
    },
    /// `bsi close` ([`super::close::plan`]).
    Close {
        /// The session whose claims close.
        session: String,
        /// Only those on this scope.
        scope: Option<Scope>,
        /// Who acts: its session.
        actor_session: Option<String>,
        /// Who acts: its agent name.
        actor_agent: String,
        /// The agent name was given.
        agent_named: bool,
        /// Claims of another session too.
        force: bool,
        /// What the audit of the session found.
        verified: VerifyOutcome,
        /// The request's clock (RFC 3339).
        now: String,
        /// What the close hands to the queue ([`super::close::handoff`]).
        #[serde(default)]
        handoff: Option<Handoff>,
    },
}

/// [`Queueing`], as data.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Queue {
    /// [`Queueing::Ignore`].
    Ignore,
    /// [`Queueing::Respect`].
    Respect,
    /// [`Queueing::Join`], arrived at (RFC 3339).
    Join(String),
}

impl Queue {
    /// The queueing of a request, as data.
    pub fn of(q: Queueing) -> Queue {
        match q {
            Queueing::Ignore => Queue::Ignore,
            Queueing::Respect => Queue::Respect,
            Queueing::Join { since } => Queue::Join(since.to_rfc3339()),
        }
    }
}

impl Job {
    /// The job of an open request.
    pub fn open(c: &Claiming<'_>, snapshot: &Snapshot, queueing: Queueing) -> Job {
        Job::Open {
            session: c.session.to_string(),
            agent: c.agent.to_string(),
            scopes: c.scopes.to_vec(),
            ttl_seconds: c.ttl.num_seconds(),
            note: c.note.to_string(),
            now: c.now.to_rfc3339(),
            max_active_per_agent: c.max_active_per_agent,
            new_id: c.new_id,
            snapshot: snapshot.clone(),
            queueing: Queue::of(queueing),
        }
    }

    /// The job of a close request.
    pub fn close(
        session: &str,
        scope: Option<&Scope>,
        (actor, force): (&Actor, bool),
        (verified, now): (VerifyOutcome, DateTime<FixedOffset>),
        handoff: Option<&Handoff>,
    ) -> Job {
        Job::Close {
            session: session.to_string(),
            scope: scope.cloned(),
            actor_session: actor.session.clone(),
            actor_agent: actor.agent.clone(),
            agent_named: actor.agent_named,
            force,
            verified,
            now: now.to_rfc3339(),
            handoff: handoff.cloned(),
        }
    }

    /// What a close hands to the queue, for a close that may.
    pub fn handoff(&self) -> Option<&Handoff> {
        match self {
            Job::Close { handoff, .. } => handoff.as_ref(),
            Job::Open { .. } => None,
        }
    }

    /// What the job's own writer would plan on `reg`: the same plan, on the
    /// same input. The report stays with that writer, which plans again on
    /// the registry this was decided on to read it.
    pub fn plan(&self, reg: &Registry) -> Result<Plan<()>> {
        match self {
            Job::Open {
                session,
                agent,
                scopes,
                ttl_seconds,
                note,
                now,
                max_active_per_agent,
                new_id,
                snapshot,
                queueing,
            } => {
                let queueing = match queueing {
                    Queue::Ignore => Queueing::Ignore,
                    Queue::Respect => Queueing::Respect,
                    Queue::Join(since) => Queueing::Join {
                        since: time(since)?,
                    },
                };
                let c = Claiming {
                    session,
                    agent,
                    scopes,
                    ttl: Duration::seconds(*ttl_seconds),
                    note,
                    now: time(now)?,
                    max_active_per_agent: *max_active_per_agent,
                    new_id: *new_id,
                };
                super::open::plan_queued(reg, &c, snapshot, queueing).map(unit)
            }
            Job::Close {
                session,
                scope,
                actor_session,
                actor_agent,
                agent_named,
                force,
                verified,
                now,
                handoff,
            } => {
                let actor = Actor {
                    session: actor_session.clone(),
                    agent: actor_agent.clone(),
                    agent_named: *agent_named,
                    drawn: false,
                };
                super::close::plan(
                    reg,
                    session,
                    scope.as_ref(),
                    (&actor, *force),
                    (*verified, time(now)?),
                    handoff.as_ref(),
                )
                .map(unit)
            }
        }
    }
}

/// A plan without its report.
fn unit<R>(p: Plan<R>) -> Plan<()> {
    match p {
        Plan::Write { text, message, .. } => Plan::Write {
            text,
            message,
            report: (),
        },
        Plan::Keep(_) => Plan::Keep(()),
    }
}

/// The trailer that names the request a registry commit carries out: a
/// request found in the branch's history was carried out, and is never
/// carried out twice.
pub const REQUEST_TRAILER: &str = crate::trailer::REQUEST;

/// Where the requests a clone posts on the remote are, in the commit that
/// posts them: one file, a JSON object of the jobs by request id (one blob,
/// whatever the number of requests: the remote stores three objects a post).
pub const POSTED_FILE: &str = "requests.json";

/// Where an earlier bsi posted them: one `<id>.json` file per request in
/// this folder, the job as JSON (still read).
pub const REQUEST_DIR: &str = "requests";

/// The file of a post that holds its lease: until when its writer vouches
/// for it, and who that writer is (its host, then the lines that prove a
/// process of that host alive or dead: pid, start time, user). A carrier
/// never carries out a post whose lease lapsed, nor one whose writer, of
/// its own host, is proven dead. A post of an earlier bsi has none: the
/// time its requests were made bounds it.
pub const LEASE_FILE: &str = "lease";

/// The body of [`LEASE_FILE`]: `expires <RFC 3339>`, `host <name>`, then
/// `process` (the writer's pid, start and user lines).
pub fn lease(expires: DateTime<FixedOffset>, host: &str, process: &str) -> String {
    format!(
        "expires {}\nhost {}\n{process}",
        expires.to_rfc3339(),
        host.replace('\n', " ")
    )
}

/// A post's lease, read from its files ([`LEASE_FILE`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// Until when its writer vouches for it.
    pub expires: DateTime<FixedOffset>,
    /// Its writer's host.
    pub host: String,
    /// The whole file: its writer's pid, start and user lines.
    pub record: String,
}

/// The lease of a post, from its files by path: `None` for a post without
/// one (an earlier bsi's). A lease that cannot be read lapsed long ago.
pub fn post_lease(files: &[(String, Vec<u8>)]) -> Option<Lease> {
    let (_, body) = files.iter().find(|(p, _)| p == LEASE_FILE)?;
    let text = String::from_utf8_lossy(body).into_owned();
    let line = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_string()))
    };
    let expires = line("expires ")
        .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
        .unwrap_or(DateTime::<chrono::Utc>::MIN_UTC.fixed_offset());
    Some(Lease {
        expires,
        host: line("host ").unwrap_or_default(),
        record: text,
    })
}

/// The body of [`POSTED_FILE`] for `jobs`.
pub fn posted(jobs: &[(String, Job)]) -> Result<String> {
    let map: std::collections::BTreeMap<&str, &Job> =
        jobs.iter().map(|(id, j)| (id.as_str(), j)).collect();
    as_json(&map)
}

/// `value` as JSON, for a request filed or posted.
fn as_json(value: &impl Serialize) -> Result<String> {
    serde_json::to_string(value).map_err(|e| {
        Error::io(
            "cannot write a write request",
            std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        )
    })
}

/// The jobs a post holds, by request id, from [`POSTED_FILE`]'s body
/// (`None` when it cannot be read).
fn read_posted(body: &[u8]) -> Option<Vec<(String, Job)>> {
    serde_json::from_slice::<std::collections::BTreeMap<String, Job>>(body)
        .ok()
        .map(|m| m.into_iter().collect())
}

/// The jobs of a post, by request id, from its files by path: the body of
/// [`POSTED_FILE`], and the `<id>.json` files under [`REQUEST_DIR`] that an
/// earlier bsi posted. A file that cannot be read holds none.
pub fn posted_jobs(files: &[(String, Vec<u8>)]) -> Vec<(String, Job)> {
    let mut jobs = Vec::new();
    for (path, body) in files {
        if path == POSTED_FILE {
            jobs.extend(read_posted(body).unwrap_or_default());
        } else if let Some(id) = path
            .strip_prefix(REQUEST_DIR)
            .and_then(|p| p.strip_prefix('/'))
            .and_then(|f| f.strip_suffix(".json"))
            .filter(|id| !id.contains('/'))
            && let Ok(j) = serde_json::from_slice::<Job>(body)
        {
            jobs.push((id.to_string(), j));
        }
    }
    jobs
}

/// `message` with the trailer naming request `id` last.
pub fn tagged(message: &str, id: &str) -> String {
    let mut out = message.trim_end_matches('\n').to_string();
    out.push_str(&format!("\n{REQUEST_TRAILER}: {id}\n"));
    out
}

/// The message of one commit carrying out several writes: a summary line
/// counting them, each write's own summary line, and every write's
/// trailers in order (so `git log --grep` finds each session and request
/// as it finds a commit of its own). One write keeps its message.
pub fn joined(messages: &[&str]) -> String {
    if let [one] = messages {
        return (*one).to_string();
    }
    let split = |m: &str| -> (String, String) {
        let m = m.trim_end_matches('\n');
        match m.split_once("\n\n") {
            Some((summary, rest)) => (
                summary.to_string(),
                format!("{}\n", rest.trim_matches('\n')),
            ),
            None => (m.to_string(), String::new()),
        }
    };
    let parts: Vec<(String, String)> = messages.iter().map(|m| split(m)).collect();
    let what: Vec<&str> = parts
        .iter()
        .map(|(s, _)| s.strip_prefix("bsi: ").unwrap_or(s))
        .collect();
    let mut summary = format!("bsi: {} writes: {}", messages.len(), what.join("; "));
    if summary.chars().count() > 100 {
        summary = summary.chars().take(99).collect::<String>() + "…";
    }
    let lines: Vec<&str> = parts.iter().map(|(s, _)| s.as_str()).collect();
    let trailers: String = parts.iter().map(|(_, t)| t.as_str()).collect();
    format!("{summary}\n\n{}\n\n{trailers}", lines.join("\n"))
}

/// Whether `message` carries out request `id`.
pub fn carries(message: &str, id: &str) -> bool {
    carried(message).any(|v| v == id)
}

/// The requests `message` carries out.
pub fn carried(message: &str) -> impl Iterator<Item = &str> {
    message
        .lines()
        .filter_map(|l| l.strip_prefix(REQUEST_TRAILER))
        .filter_map(|l| l.strip_prefix(':'))
        .map(str::trim)
}

impl Job {
    /// The session the job writes for.
    pub fn session(&self) -> &str {
        match self {
            Job::Open { session, .. } | Job::Close { session, .. } => session,
        }
    }

    /// The job as JSON, as a request is filed or posted.
    pub fn json(&self) -> Result<String> {
        as_json(self)
    }

    /// The request's clock.
    pub fn time(&self) -> Result<DateTime<FixedOffset>> {
        match self {
            Job::Open { now, .. } | Job::Close { now, .. } => time(now),
        }
    }
}

fn time(s: &str) -> Result<DateTime<FixedOffset>> {
    DateTime::parse_from_rfc3339(s).map_err(|e| {
        Error::io(
            format!("a write request's time `{s}` is not an RFC 3339 time"),
            std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_post_s_lease_reads_back_and_an_unreadable_one_has_lapsed() {
        let expires = DateTime::parse_from_rfc3339("2026-03-14T09:30:30+00:00").expect("time");
        let body = lease(expires, "box\nevil", "pid 42\nstart 7\nuid 1000\n");
        let files = vec![
            (POSTED_FILE.to_string(), b"{}".to_vec()),
            (LEASE_FILE.to_string(), body.into_bytes()),
        ];
        let read = post_lease(&files).expect("a lease");
        assert_eq!(read.expires, expires);
        assert_eq!(read.host, "box evil");
        assert!(read.record.contains("pid 42\n"));
        // An earlier bsi's post has none; a lease that cannot be read ran
        // out long ago.
        assert_eq!(post_lease(&files[..1]), None);
        let bad = vec![(LEASE_FILE.to_string(), b"expires soon\n".to_vec())];
        assert!(post_lease(&bad).expect("a lease").expires < expires);
    }

    #[test]
    fn a_job_reads_back_as_it_was_written() {
        let now = DateTime::parse_from_rfc3339("2026-03-14T09:30:00+00:00").expect("time");
        let scopes = [Scope::Dir("a/".into()), Scope::File("b.md".into())];
        let c = Claiming {
            session: "sess-1",
            agent: "x",
            scopes: &scopes,
            ttl: Duration::minutes(90),
            note: "n",
            now,
            max_active_per_agent: Some(3),
            new_id: false,
        };
        let job = Job::open(&c, &Snapshot::default(), Queueing::Join { since: now });
        let text = serde_json::to_string(&job).expect("json");
        let back: Job = serde_json::from_str(&text).expect("parse");
        assert_eq!(serde_json::to_string(&back).expect("json"), text);
        let Job::Open {
            scopes: s,
            ttl_seconds,
            queueing: Queue::Join(since),
            ..
        } = back
        else {
            panic!("{text}")
        };
        assert_eq!((s.as_slice(), ttl_seconds), (&scopes[..], 5400));
        assert_eq!(time(&since).expect("since"), now);
    }

    #[test]
    fn a_tagged_message_carries_its_request_and_no_other() {
        let m = tagged(
            "bsi: open a/\n\nBSI-Session: s\nBSI-Action: open\n",
            "1-2-3",
        );
        assert!(m.ends_with("BSI-Action: open\nBSI-Request: 1-2-3\n"), "{m}");
        assert!(carries(&m, "1-2-3"));
        assert!(!carries(&m, "1-2"));
        assert_eq!(carried(&m).collect::<Vec<_>>(), ["1-2-3"]);
    }

    #[test]
    fn one_commit_of_several_writes_names_each_write_and_request() {
        let one = "bsi: open sess-a a/\n\nBSI-Session: sess-a\nBSI-Action: open\n";
        assert_eq!(joined(&[one]), one);
        let two = tagged(
            "bsi: close sess-b b.md\n\nBSI-Session: sess-b\nBSI-Action: close\n",
            "1-2-3",
        );
        let m = joined(&[one, &two]);
        assert_eq!(
            m,
            "bsi: 2 writes: open sess-a a/; close sess-b b.md\n\n\
             bsi: open sess-a a/\nbsi: close sess-b b.md\n\n\
             BSI-Session: sess-a\nBSI-Action: open\n\
             BSI-Session: sess-b\nBSI-Action: close\nBSI-Request: 1-2-3\n"
        );
        assert_eq!(carried(&m).collect::<Vec<_>>(), ["1-2-3"]);
        let many: Vec<String> = (0..20)
            .map(|i| format!("bsi: open sess-{i:02} d{i:02}/\n\nBSI-Session: sess-{i:02}\n"))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let summary = joined(&many).lines().next().unwrap_or_default().to_string();
        assert!(
            summary.starts_with("bsi: 20 writes: open sess-00 d00/; "),
            "{summary}"
        );
        assert_eq!(summary.chars().count(), 100, "{summary}");
    }

    #[test]
    fn a_job_says_its_clock() {
        let now = DateTime::parse_from_rfc3339("2026-03-14T09:30:00+01:00").expect("time");
        let scopes = [Scope::File("b.md".into())];
        let c = Claiming {
            session: "sess-1",
            agent: "x",
            scopes: &scopes,
            ttl: Duration::minutes(90),
            note: "",
            now,
            max_active_per_agent: None,
            new_id: false,
        };
        let job = Job::open(&c, &Snapshot::default(), Queueing::Ignore);
        assert_eq!(job.time().expect("time"), now);
    }
}
