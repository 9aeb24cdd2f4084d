//! The write requests of a clone's writers, in its common git directory
//! (`bsi/requests/`), so the writer holding the writer lock can carry out
//! those waiting for it with its own write, in one push.
//!
//! A request is a file per waiting writer, named by its arrival (the time,
//! then the process): `<id>.req` while it waits, written whole before its
//! writer waits for the lock (a temporary file renamed); `<id>.taken` once
//! a holder took it (a rename: exactly one holder takes it, and a writer
//! that gives up before can still withdraw it); `<id>.done`, the outcome
//! the holder recorded, read by the request's own writer once it holds the
//! lock in turn. A request whose writer is proven dead is dropped unread;
//! a taken one without an outcome was taken by a holder that died, and its
//! own writer carries it out (the registry commits name the request they
//! carry out, so it is never carried out twice). Before it files, a writer
//! marks itself arriving (`<pid>.arriving`, its pid and start time), so a
//! holder gathering a burst waits for its request; a mark whose writer was
//! killed counts for nothing and goes once old.
//!
//! Each of these moves is the write machine's ([`crate::writes`]): a
//! request is filed (`Planned` or, for a waiter planning again, `Refused`,
//! to `Filed`), gathered by a holder (`Filed` to `Gathered`: `.req` renamed
//! `.taken`), or withdrawn (`Filed` to `Withdrawn`: `.req` removed) by its
//! writer, or by a holder that finds its writer dead. The file a request
//! is kept in is the one of the state the machine moves it to.
//!
//! Where the clones of a machine meet, on the disk of their remote, every
//! open, read and write of these files runs bounded by the connection
//! timeout ([`super::lock::on_disk`]): a disk that stops answering holds
//! no writer, and a late step counts as failed.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::claims::job::Job;
use crate::error::{Error, Result};
use crate::writes::{self, Event, State};

use super::lock::{fault, on_disk, on_disk_or, read_own, replace_file, write_new, writer_is_dead};

/// How long an outcome nobody read is kept (its writer died meanwhile), and
/// an arriving mark its writer left when it was killed.
const UNREAD: Duration = Duration::from_secs(600);

/// The point a request's filing passes where the clones of a machine meet:
/// a test makes it late (`meeting-file:late=MS`), as a write that a disk
/// gone slow carries out after its writer stopped waiting for it.
pub(crate) const FILE_FAULT_POINT: &str = "meeting-file";

/// A new request's id: its arrival (nanoseconds since the epoch, so ids
/// sort by arrival and say when their request was filed), its process and
/// a random part.
pub(crate) fn new_id() -> String {
    let arrival = since_epoch().as_nanos();
    let pid = std::process::id();
    format!("{arrival:020}-{pid}-{:08x}", rand::random::<u32>())
}

/// The system's clock, which ids are stamped with.
fn since_epoch() -> Duration {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
}

/// The system's clock in seconds since the epoch, as [`filed_at`] reads
/// an id.
pub(crate) fn seconds_now() -> i64 {
    i64::try_from(since_epoch().as_secs()).unwrap_or(i64::MAX)
}

/// When request `id` was filed, in seconds since the epoch ([`new_id`]).
pub(crate) fn filed_at(id: &str) -> Option<i64> {
    let nanos: u128 = id.split('-').next()?.parse().ok()?;
    i64::try_from(nanos / 1_000_000_000).ok()
}

/// The file a request in `state` is kept in where its writers meet:
/// filed (`.req`), or gathered by a holder (`.taken`); a request in any
/// other state has none here (its outcome, once recorded, is `.done`).
fn kept_in(state: State) -> Option<&'static str> {
    match state {
        State::Filed => Some("req"),
        State::Gathered => Some("taken"),
        _ => None,
    }
}

/// The requests directory of a clone.
pub struct Requests {
    dir: PathBuf,
    /// How long a file of a meeting on the disk of a remote may take to
    /// answer (`None`: the clone's own, read at once).
    bound: Option<Duration>,
    /// On the disk of a remote: its directory was made by the first look
    /// at the place, and is never made again (a remote moved away must not
    /// be made again at its path).
    shared: bool,
}

/// A writer's mark as arriving ([`Requests::arrive`]), removed when dropped.
pub struct Arrival(Option<PathBuf>, Option<Duration>);

impl Drop for Arrival {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = on_disk(self.1, move || fs::remove_file(p));
        }
    }
}

/// Where one's own request stands, once the writer lock is held.
pub enum Standing {
    /// Still waiting: nobody took it.
    Waiting,
    /// Taken by a holder that recorded no outcome: it died at work.
    Taken,
    /// Carried out: the outcome recorded.
    Done(String),
    /// No trace of it.
    Gone,
}

impl Requests {
    pub(crate) fn new(dir: &Path, bound: Option<Duration>) -> Requests {
        Requests {
            dir: dir.to_path_buf(),
            bound,
            shared: bound.is_some(),
        }
    }

    fn path(&self, id: &str, state: &str) -> PathBuf {
        self.dir.join(format!("{id}.{state}"))
    }

    /// Moves request `id`, filed here, by `event` (a holder gathers it, its
    /// writer withdraws it or is found stopped), as the machine says: its
    /// `.req` renamed to the file of the state it moves to, or removed when
    /// that state keeps none. That state, when this writer made the move;
    /// `None` when the request was no longer filed (another writer moved it
    /// first: of two, exactly one does).
    fn move_filed_here(&self, id: &str, event: Event) -> Option<State> {
        let to = writes::step(State::Filed, event);
        let filed = self.path(id, kept_in(State::Filed)?);
        let moved = match kept_in(to) {
            Some(kept) => fs::rename(&filed, self.path(id, kept)),
            None => fs::remove_file(&filed),
        };
        moved.is_ok().then_some(to)
    }

    /// [`Requests::file`], its files read and written at once.
    fn file_here(&self, id: &str, job: &Job, from: State) -> Result<State> {
        let to = writes::step(from, Event::File);
        if !self.shared {
            fs::create_dir_all(&self.dir)
                .map_err(|e| Error::io(format!("cannot create {}", self.dir.display()), e))?;
        } else {
            fault(FILE_FAULT_POINT);
        }
        let pid = std::process::id();
        let json = job.json()?;
        let body = format!("{}\n{json}\n", super::lock::this_process());
        let tmp = self.path(id, "tmp");
        let path = self.path(id, kept_in(to).unwrap_or("req"));
        write_new(&tmp, body.as_bytes())
            .and_then(|()| fs::rename(&tmp, &path))
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
        // Filed: no longer arriving.
        let _ = fs::remove_file(self.path(&pid.to_string(), "arriving"));
        Ok(to)
    }

    /// [`Requests::arrive`], its files read and written at once.
    fn arrive_here(&self) -> Arrival {
        let path = self.path(&std::process::id().to_string(), "arriving");
        let made = (self.shared || fs::create_dir_all(&self.dir).is_ok())
            && replace_file(&path, super::lock::this_process().as_bytes()).is_ok();
        Arrival(made.then_some(path), None)
    }

    /// [`Requests::arriving`], its files read and written at once.
    fn arriving_here(&self) -> bool {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return false;
        };
        let own = format!("{}.arriving", std::process::id());
        entries.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".arriving")
                && name != own
                && read_own(&e.path()).is_ok_and(|r| !writer_is_dead(&r))
        })
    }

    /// [`Requests::withdraw`], its files read and written at once.
    fn withdraw_here(&self, id: &str, event: Event) -> Option<State> {
        self.move_filed_here(id, event)
    }

    /// [`Requests::standing`], its files read and written at once.
    fn standing_here(&self, id: &str) -> Standing {
        if let Ok(done) = read_own(&self.path(id, "done")) {
            return Standing::Done(done);
        }
        if self.path(id, "taken").exists() {
            return Standing::Taken;
        }
        if self.path(id, "req").exists() {
            return Standing::Waiting;
        }
        Standing::Gone
    }

    /// [`Requests::take_own`], its files read and written at once.
    fn take_own_here(&self, id: &str) {
        let _ = self.move_filed_here(id, Event::Gather);
    }

    /// [`Requests::take_waiting`], its files read and written at once.
    fn take_waiting_here(&self) -> Vec<(String, Job)> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut ids: Vec<String> = Vec::new();
        let mut old: Vec<PathBuf> = Vec::new();
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(id) = name.strip_suffix(".req") {
                ids.push(id.to_string());
            } else if [".done", ".tmp", ".arriving", ".probe"]
                .iter()
                .any(|s| name.ends_with(s))
            {
                let unread = e
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > UNREAD);
                if unread {
                    old.push(e.path());
                }
            }
        }
        for p in old {
            let _ = fs::remove_file(p);
        }
        ids.sort();
        let mut out = Vec::new();
        for id in ids {
            let req = self.path(&id, "req");
            let Ok(body) = read_own(&req) else {
                continue;
            };
            let (record, json) = body.split_once("\n\n").unwrap_or(("", ""));
            let job = serde_json::from_str::<Job>(json.trim()).ok();
            match job {
                Some(job) if !writer_is_dead(record) => {
                    if self.move_filed_here(&id, Event::Gather).is_some() {
                        out.push((id, job));
                    }
                }
                // Its writer is gone (nobody would read the outcome), or
                // it cannot be read: dropped, as the request of a writer
                // that stopped.
                _ => {
                    let _ = self.move_filed_here(&id, Event::Stop);
                }
            }
        }
        out
    }

    /// [`Requests::finish`], its files read and written at once.
    fn finish_here(&self, id: &str, outcome: &str) {
        let tmp = self.path(id, "tmp");
        let _ = fs::remove_file(&tmp);
        if write_new(&tmp, outcome.as_bytes())
            .and_then(|()| fs::rename(&tmp, self.path(id, "done")))
            .is_ok()
        {
            let _ = fs::remove_file(self.path(id, "taken"));
        }
    }

    /// [`Requests::forget`], its files read and written at once.
    fn forget_here(&self, id: &str) {
        for state in ["req", "taken", "done", "tmp"] {
            let _ = fs::remove_file(self.path(id, state));
        }
    }

    /// This requests directory, its files read and written at once: what
    /// runs on the thread that bounds them ([`on_disk`]).
    pub(super) fn here(&self) -> Requests {
        Requests {
            dir: self.dir.clone(),
            bound: None,
            shared: self.shared,
        }
    }

    /// Files `job` as waiting, as request `id` ([`new_id`]), from `from`,
    /// where its writer knows it stands (`Planned`, or `Refused` for a
    /// waiter planning again): the state the machine moves it to
    /// (`Filed`). `TimedOut`
    /// when the disk of a meeting of several clones did not answer in
    /// time: the request may still land there later, under the same id,
    /// which the commit that carries it out names, so it is never carried
    /// out twice.
    pub fn file(&self, id: &str, job: &Job, from: State) -> Result<State> {
        if self.bound.is_none() {
            return self.file_here(id, job, from);
        }
        let (here, id, job) = (self.here(), id.to_string(), job.clone());
        on_disk(self.bound, move || Ok(here.file_here(&id, &job, from))).unwrap_or_else(|e| {
            Err(Error::io(
                format!("{} did not answer", self.dir.display()),
                e,
            ))
        })
    }

    /// Marks this process as a writer of the clone at work on a request it
    /// has not filed yet, until it files one ([`Requests::file`]) or the
    /// mark is dropped: a holder gathering a burst waits for it
    /// ([`Requests::arriving`]).
    pub fn arrive(&self) -> Arrival {
        let here = self.here();
        let mut mark = on_disk_or(self.bound, Arrival(None, None), move || here.arrive_here());
        mark.1 = self.bound;
        mark
    }

    /// Whether another live writer of the clone marked itself arriving.
    pub fn arriving(&self) -> bool {
        let here = self.here();
        on_disk_or(self.bound, false, move || here.arriving_here())
    }

    /// Withdraws a filed request nobody took, its writer taking it back
    /// (`event`: [`Event::Withdraw`]) or stopped ([`Event::Stop`]): where it
    /// stands after. `Withdrawn` when it was still waiting (it will not be
    /// carried out); else `Gathered`, as a holder that took it moved it (or
    /// the disk did not answer: its outcome is looked for as if taken).
    pub fn withdraw(&self, id: &str, event: Event) -> State {
        let (here, id) = (self.here(), id.to_string());
        on_disk_or(self.bound, None, move || here.withdraw_here(&id, event))
            .unwrap_or_else(|| writes::step(State::Filed, Event::Gather))
    }

    /// Where request `id` stands (read under the writer lock); `Gone`
    /// when the disk did not answer.
    pub fn standing(&self, id: &str) -> Standing {
        let (here, id) = (self.here(), id.to_string());
        on_disk_or(self.bound, Standing::Gone, move || here.standing_here(&id))
    }

    /// Takes one's own filed request (under the writer lock): gathered by
    /// its own writer, who carries it out whether or not its file answered.
    pub fn take_own(&self, id: &str) -> State {
        let (here, id) = (self.here(), id.to_string());
        on_disk_or(self.bound, (), move || here.take_own_here(&id));
        writes::step(State::Filed, Event::Gather)
    }

    /// Takes every other waiting request, in arrival order (under the
    /// writer lock), each now `Gathered`: those of writers proven dead,
    /// and unreadable ones, are dropped (`Withdrawn`, as if their writer
    /// stopped); none when the disk did not answer.
    pub fn take_waiting(&self) -> Vec<(String, Job)> {
        let here = self.here();
        on_disk_or(self.bound, Vec::new(), move || here.take_waiting_here())
    }

    /// Records the outcome of request `id` for its writer.
    pub fn finish(&self, id: &str, outcome: &str) {
        let (here, id, outcome) = (self.here(), id.to_string(), outcome.to_string());
        on_disk_or(self.bound, (), move || here.finish_here(&id, &outcome));
    }

    /// Forgets request `id`, whatever its state: its writer is done with it.
    pub fn forget(&self, id: &str) {
        let (here, id) = (self.here(), id.to_string());
        on_disk_or(self.bound, (), move || here.forget_here(&id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close_job() -> Job {
        serde_json::from_str(
            r#"{"Close":{"session":"s","scope":null,"actor_session":null,"actor_agent":"a","agent_named":false,"force":false,"verified":"Clean","now":"2026-03-14T09:30:00+00:00"}}"#,
        )
        .expect("job")
    }

    /// A meeting place of its own with one request its writer filed: the
    /// place (kept while the test runs), its requests and the request's id.
    fn one_filed() -> (tempfile::TempDir, Requests, String) {
        let dir = tempfile::tempdir().expect("tempdir");
        let requests = Requests::new(&dir.path().join("requests"), None);
        let id = new_id();
        let filed = requests.file(&id, &close_job(), State::Planned);
        assert_eq!(filed.ok(), Some(State::Filed));
        (dir, requests, id)
    }

    #[test]
    fn a_filed_request_withdrawn_is_never_gathered() {
        let (_dir, requests, id) = one_filed();
        assert!(matches!(requests.standing(&id), Standing::Waiting));
        assert_eq!(requests.withdraw(&id, Event::Stop), State::Withdrawn);
        assert!(matches!(requests.standing(&id), Standing::Gone));
        // No holder finds it, nor does a second withdrawal.
        assert!(requests.take_waiting().is_empty());
        assert_eq!(requests.withdraw(&id, Event::Withdraw), State::Gathered);
    }

    #[test]
    fn a_gathered_request_is_never_withdrawn() {
        let dir = tempfile::tempdir().expect("tempdir");
        let requests = Requests::new(&dir.path().join("requests"), None);
        // A waiter planning again files from where it waits.
        let (first, again) = (new_id(), new_id());
        let job = close_job();
        assert_eq!(
            requests.file(&first, &job, State::Planned).ok(),
            Some(State::Filed)
        );
        assert_eq!(
            requests.file(&again, &job, State::Refused).ok(),
            Some(State::Filed)
        );
        // A holder takes both, in arrival order, once.
        let taken: Vec<String> = requests
            .take_waiting()
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(taken, vec![first.clone(), again.clone()]);
        assert!(requests.take_waiting().is_empty());
        assert!(matches!(requests.standing(&first), Standing::Taken));
        // Its writer can no longer take it back: it hears its outcome.
        assert_eq!(requests.withdraw(&first, Event::Stop), State::Gathered);
        assert!(matches!(requests.standing(&first), Standing::Taken));
    }

    #[test]
    fn a_writer_holding_the_lock_gathers_its_own_request() {
        let (_dir, requests, id) = one_filed();
        assert_eq!(requests.take_own(&id), State::Gathered);
        assert!(matches!(requests.standing(&id), Standing::Taken));
        // No other holder takes it, and it cannot be withdrawn.
        assert!(requests.take_waiting().is_empty());
        assert_eq!(requests.withdraw(&id, Event::Withdraw), State::Gathered);
    }

    #[test]
    fn a_request_whose_writer_is_dead_is_dropped_unread() {
        let (_dir, requests, id) = one_filed();
        // Its writer's record says a process that is not there.
        let path = requests.path(&id, "req");
        let body = fs::read_to_string(&path).expect("read");
        let (_, json) = body.split_once("\n\n").expect("record, then job");
        fs::write(&path, format!("pid 999999999\nstart 1\n\n{json}")).expect("write");
        assert!(requests.take_waiting().is_empty());
        assert!(matches!(requests.standing(&id), Standing::Gone));
    }

    #[cfg(unix)]
    #[test]
    fn a_writer_arriving_is_seen_by_another_until_it_files_or_goes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let requests = Requests::new(&dir.path().join("requests"), None);
        // Its own mark is not another writer arriving.
        let own = requests.arrive();
        assert!(!requests.arriving());
        drop(own);
        // A live writer of the clone (this test's parent process stands in
        // for it) is arriving until its mark goes; a dead one never is.
        let parent = std::os::unix::process::parent_id();
        let live = requests.dir.join(format!("{parent}.arriving"));
        let record = super::super::lock::this_process().replace(
            &format!("pid {}\n", std::process::id()),
            &format!("pid {parent}\n"),
        );
        let start = crate::platform::start_time(parent).unwrap_or_default();
        let record = record
            .lines()
            .map(|l| {
                if l.starts_with("start ") {
                    format!("start {start}")
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        fs::write(&live, format!("{record}\n")).expect("mark");
        assert!(requests.arriving());
        fs::remove_file(&live).expect("unmark");
        fs::write(
            requests.dir.join("999999999.arriving"),
            "pid 999999999\nstart 1\n",
        )
        .expect("mark");
        assert!(!requests.arriving());
        // Filing a request ends one's own mark.
        let _own = requests.arrive();
        let mark = requests
            .dir
            .join(format!("{}.arriving", std::process::id()));
        assert!(mark.exists());
        requests
            .file(&new_id(), &close_job(), State::Planned)
            .expect("file");
        assert!(!mark.exists());
    }
}
