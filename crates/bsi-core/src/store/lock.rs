//! The writer lock that serialises every bsi writing a clone's registry
//! branch — from any of its work trees — and the record a writer keeps in
//! it while it works, so the next writer can tell a dead writer's leftover
//! lock files from a live one's.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::platform;

/// Points where a test can make bsi die, to prove a write can be repaired.
/// Set `BSI_FAULT_POINT` to one of these names; bsi then aborts there.
pub const FAULT_POINTS: &[&str] = &[
    "after-lock",
    "after-record",
    "after-commit",
    "after-push",
    "after-tracking",
    "after-branch",
];

/// Aborts the process at `point` when a test asks for it.
pub(crate) fn fault(point: &str) {
    if std::env::var_os("BSI_FAULT_POINT").is_some_and(|v| v == point) {
        std::process::abort();
    }
}

/// How long to wait for another bsi to let go of the writer lock, unless
/// `BSI_LOCK_WAIT_MS` says otherwise (tests); never longer than `at_most`
/// (an agent tool's hook waits a short while only).
fn lock_wait(at_most: Option<Duration>) -> Duration {
    let wait = std::env::var("BSI_LOCK_WAIT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(Duration::from_secs(30), Duration::from_millis);
    at_most.map_or(wait, |m| wait.min(m))
}

/// Held while a bsi process reads, plans, commits and publishes. An OS file
/// lock, so it dies with its process.
pub struct WriterLock {
    file: File,
    path: PathBuf,
    /// What the last holder left in the record, read when the lock was
    /// taken: `Some` when a writer died while at work.
    left: Option<String>,
    /// This holder wrote a record, cleared when the lock is let go.
    recorded: bool,
}

impl WriterLock {
    /// Takes the lock file at `path` (created when missing), waiting for
    /// another holder at most `at_most` (else the usual wait).
    pub(crate) fn take(path: &Path, at_most: Option<Duration>) -> Result<WriterLock> {
        match Self::take_or_stop(path, at_most, &|| false)? {
            Some(lock) => Ok(lock),
            None => Err(Error::Locked {
                what: "the registry",
                path: path.to_path_buf(),
            }),
        }
    }

    /// [`WriterLock::take`], given up (`None`) once `stop` says so while
    /// another holder keeps the lock.
    pub(crate) fn take_or_stop(
        path: &Path,
        at_most: Option<Duration>,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<WriterLock>> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| Error::io(format!("cannot open the lock file {}", path.display()), e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                if !wait_for_lock(&file, path, lock_wait(at_most), stop)? {
                    return Ok(None);
                }
            }
            Err(fs::TryLockError::Error(e)) => {
                return Err(Error::io(format!("cannot lock {}", path.display()), e));
            }
        }
        fault("after-lock");
        let left = fs::read_to_string(path)
            .ok()
            .filter(|s| !s.trim().is_empty());
        Ok(Some(WriterLock {
            file,
            path: path.to_path_buf(),
            left,
            recorded: false,
        }))
    }

    /// The record a writer that died left, if one did.
    pub fn left_by_dead_writer(&self) -> Option<&str> {
        self.left.as_deref()
    }

    /// Records, until the lock is let go, that this process is at work on
    /// the registry references (committing, fetching, pushing): its pid and
    /// start time, the proof the next writer needs.
    pub fn record(&mut self, what: &str) -> Result<()> {
        let body = format!("busy {what}\n{}", this_process());
        write_record(&self.file, &self.path, body.as_bytes())?;
        self.recorded = true;
        fault("after-record");
        Ok(())
    }

    /// Forgets a dead writer's record once its leftovers are dealt with.
    pub(crate) fn clear_left(&mut self) {
        let _ = write_record(&self.file, &self.path, b"");
        self.left = None;
    }
}

fn write_record(file: &File, path: &Path, body: &[u8]) -> Result<()> {
    let mut f = file;
    file.set_len(0)
        .and_then(|()| {
            use std::io::Seek;
            f.seek(std::io::SeekFrom::Start(0))?;
            f.write_all(body)
        })
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
}

impl Drop for WriterLock {
    /// The work is done: the record goes, before the OS lock does.
    fn drop(&mut self) {
        if self.recorded {
            let _ = write_record(&self.file, &self.path, b"");
        }
    }
}

/// Whether the writer that left `record` is proven dead: its pid is gone,
/// or now belongs to a process started at another time. `false` where that
/// cannot be proven (no process table to read, an entry that cannot be
/// read, a table that hides other users' processes).
pub(crate) fn writer_is_dead(record: &str) -> bool {
    // A record without a pid was left by an older bsi: it held the writer
    // lock we now hold, so it is gone.
    match recorded_alive(record) {
        None => true,
        Some(alive) => alive == Some(false),
    }
}

/// The lines that let another process prove this one alive or dead (its
/// pid, start time and user), read back by [`recorded_alive`]: the writer
/// lock's record, a write request's, a waiter's mark.
pub(crate) fn this_process() -> String {
    let pid = std::process::id();
    let mut lines = format!(
        "pid {pid}\nstart {}\n",
        platform::start_time(pid).unwrap_or_default()
    );
    if let Some(uid) = platform::user_id() {
        lines.push_str(&format!("uid {uid}\n"));
    }
    lines
}

/// Replaces the file `path` with `body` whole (written aside as
/// `<path>.<pid>.tmp`, then renamed over it): a reader sees the old file or
/// the new one, never a part.
pub(crate) fn replace_file(path: &std::path::Path, body: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, body)
        .and_then(|()| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}

/// The value of the line `key…` of a process record.
pub(crate) fn field(record: &str, key: &str) -> Option<String> {
    record
        .lines()
        .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_string()))
}

/// Whether the process a record names (`pid`, `start`, `uid` lines) is
/// alive, as [`platform::process_alive`] proves it: `None` for a record
/// with no pid.
pub(crate) fn recorded_alive(record: &str) -> Option<Option<bool>> {
    let pid = field(record, "pid ").and_then(|p| p.parse::<u32>().ok())?;
    let start = field(record, "start ").unwrap_or_default();
    let uid = field(record, "uid ").and_then(|u| u.parse::<u32>().ok());
    Some(platform::process_alive(pid, &start, uid))
}

/// Waits up to `wait` for the writer lock held by another process:
/// `false` when `stop` said to give up first. The wait is in the kernel,
/// on a second handle of the same open file (so the lock it takes is
/// `file`'s): the lock passes to a waiter the moment its holder lets go.
fn wait_for_lock(
    file: &File,
    path: &Path,
    wait: Duration,
    stop: &dyn Fn() -> bool,
) -> Result<bool> {
    let cannot = |e| Error::io(format!("cannot lock {}", path.display()), e);
    let handle = file.try_clone().map_err(cannot)?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // Past the deadline nobody listens; the lock, if it comes, goes
        // with the last handle of the file.
        let _ = tx.send(handle.lock());
    });
    let deadline = std::time::Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left.min(Duration::from_millis(10))) {
            Ok(Ok(())) => return Ok(true),
            Ok(Err(e)) => return Err(cannot(e)),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if !left.is_zero() => {
                if stop() {
                    return Ok(false);
                }
            }
            Err(_) => {
                return Err(Error::Locked {
                    what: "the registry",
                    path: path.to_path_buf(),
                });
            }
        }
    }
}
