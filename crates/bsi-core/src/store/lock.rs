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
/// Set `BSI_FAULT_POINT` to one of these names; bsi then aborts there. Set
/// to the name followed by `:wait`, bsi waits there, a minute at most, for
/// the test to stop it (Ctrl-C, a kill); followed by `:late=MS`, bsi waits
/// there MS milliseconds and goes on. Every write passes these; a write
/// that lost a race with its request posted for another machine's writer
/// also passes `after-post` ([`POST_FAULT_POINT`]).
pub const FAULT_POINTS: &[&str] = &[
    "after-lock",
    "after-record",
    "after-commit",
    "after-push",
    "after-tracking",
    "after-branch",
];

/// The point a write passes once its request is posted on the remote after
/// a lost race ([`FAULT_POINTS`]).
pub(crate) const POST_FAULT_POINT: &str = "after-post";

/// Aborts the process at `point` when a test asks for it, or waits there.
pub(crate) fn fault(point: &str) {
    let Some(asked) = std::env::var_os("BSI_FAULT_POINT") else {
        return;
    };
    if asked == point {
        std::process::abort();
    }
    let asked = asked.to_str().unwrap_or_default();
    if asked.strip_suffix(":wait") == Some(point) {
        std::thread::sleep(Duration::from_secs(60));
    }
    let late = asked
        .strip_prefix(point)
        .and_then(|rest| rest.strip_prefix(":late="))
        .and_then(|ms| ms.parse().ok());
    if let Some(ms) = late {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

/// The point every read or write of a file where the clones of a machine
/// meet passes (`store::Meeting`): a test waits there (`meeting-io:wait`)
/// to stand for a disk that stopped answering (a mount gone away).
pub(crate) const MEETING_FAULT_POINT: &str = "meeting-io";

/// How long the lease of a posted request runs: `usual`, unless
/// `BSI_POST_LEASE_MS` says otherwise (tests: a lease short enough to see
/// it renewed).
pub(crate) fn post_lease(usual: Duration) -> Duration {
    std::env::var("BSI_POST_LEASE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(usual, Duration::from_millis)
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
    /// How long the disk of a meeting's lock may take to answer.
    bound: Option<Duration>,
}

impl WriterLock {
    /// Takes the lock file at `path` (created when missing), waiting for
    /// another holder at most `at_most` (else the usual wait).
    pub(crate) fn take(path: &Path, at_most: Option<Duration>) -> Result<WriterLock> {
        match Self::take_or_stop(path, at_most, &|| false, None)? {
            Some(lock) => Ok(lock),
            None => Err(Error::Locked {
                what: "the registry",
                path: path.to_path_buf(),
            }),
        }
    }

    /// [`WriterLock::take`], given up (`None`) once `stop` says so while
    /// another holder keeps the lock. With `bound`, the lock is on a disk
    /// where a remote is (the meeting of the clones of this machine):
    /// every open, read and write of it is bounded so ([`on_disk`]).
    pub(crate) fn take_or_stop(
        path: &Path,
        at_most: Option<Duration>,
        stop: &dyn Fn() -> bool,
        bound: Option<Duration>,
    ) -> Result<Option<WriterLock>> {
        let opened = {
            let (p, dir) = (path.to_path_buf(), path.parent().map(Path::to_path_buf));
            on_disk(bound, move || {
                // A meeting's place was made by its first look, and is
                // never made again: a remote moved away is not made anew.
                if let Some(dir) = dir.filter(|_| bound.is_none())
                    && let Err(e) = fs::create_dir_all(&dir)
                {
                    return Ok(Err((format!("cannot create {}", dir.display()), e)));
                }
                let file = match open_own(&p) {
                    Ok(f) => f,
                    Err(e) => {
                        return Ok(Err((
                            format!("cannot open the lock file {}", p.display()),
                            e,
                        )));
                    }
                };
                Ok(match file.try_lock() {
                    Ok(()) => Ok((file, true)),
                    Err(fs::TryLockError::WouldBlock) => Ok((file, false)),
                    Err(fs::TryLockError::Error(e)) => {
                        Err((format!("cannot lock {}", p.display()), e))
                    }
                })
            })
        };
        let (file, locked) = match opened {
            Ok(Ok(opened)) => opened,
            Ok(Err((what, e))) => return Err(Error::io(what, e)),
            Err(e) => {
                return Err(Error::io(
                    format!("cannot open the lock file {}", path.display()),
                    e,
                ));
            }
        };
        if !locked && !wait_for_lock(&file, path, lock_wait(at_most), stop)? {
            return Ok(None);
        }
        fault("after-lock");
        let left = file.try_clone().ok().and_then(|handle| {
            on_disk(bound, move || {
                use std::io::{Read, Seek};
                let mut text = String::new();
                let mut f = &handle;
                f.seek(std::io::SeekFrom::Start(0))?;
                f.take(READ_AT_MOST).read_to_string(&mut text)?;
                Ok(text)
            })
            .ok()
            .filter(|s| !s.trim().is_empty())
        });
        Ok(Some(WriterLock {
            file,
            path: path.to_path_buf(),
            left,
            recorded: false,
            bound,
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
        write_record(&self.file, &self.path, body.as_bytes(), self.bound)?;
        self.recorded = true;
        fault("after-record");
        Ok(())
    }

    /// Forgets a dead writer's record once its leftovers are dealt with.
    pub(crate) fn clear_left(&mut self) {
        let _ = write_record(&self.file, &self.path, b"", self.bound);
        self.left = None;
    }
}

fn write_record(file: &File, path: &Path, body: &[u8], bound: Option<Duration>) -> Result<()> {
    let cannot = |e| Error::io(format!("cannot write {}", path.display()), e);
    let handle = file.try_clone().map_err(cannot)?;
    let body = body.to_vec();
    on_disk(bound, move || {
        use std::io::Seek;
        let mut f = &handle;
        handle.set_len(0)?;
        f.seek(std::io::SeekFrom::Start(0))?;
        f.write_all(&body)
    })
    .map_err(cannot)
}

/// Runs `io`, an open, read or write of a file bsi keeps: at once for a
/// file of the clone, and with `bound` — a file where the clones of this
/// machine meet, on the disk of their remote — on a thread of its own
/// bounded by it, as every read of that disk is
/// ([`crate::git::local_remote::within`]): a disk that hangs (a mount
/// gone away) answers `TimedOut`, and holds no caller.
pub(crate) fn on_disk<T: Send + 'static>(
    bound: Option<Duration>,
    io: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> std::io::Result<T> {
    match bound {
        None => io(),
        Some(b) => crate::git::local_remote::within(b, move || {
            fault(MEETING_FAULT_POINT);
            io()
        })
        .unwrap_or_else(|why| Err(std::io::Error::new(std::io::ErrorKind::TimedOut, why))),
    }
}

/// [`on_disk`] for work that cannot fail: `late` when it did not answer.
pub(crate) fn on_disk_or<T: Send + 'static>(
    bound: Option<Duration>,
    late: T,
    io: impl FnOnce() -> T + Send + 'static,
) -> T {
    on_disk(bound, move || Ok(io())).unwrap_or(late)
}

impl Drop for WriterLock {
    /// The work is done: the record goes, before the OS lock does.
    fn drop(&mut self) {
        if self.recorded {
            let _ = write_record(&self.file, &self.path, b"", self.bound);
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

/// Replaces the file `path` with `body` whole (written aside as a new
/// file `<path>.<pid>.tmp`, then renamed over it, as git writes its
/// references): a reader sees the old file or the new one, never a part,
/// and nothing is written through a link left at either name (a rename
/// replaces the link itself).
pub(crate) fn replace_file(path: &std::path::Path, body: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    // A leftover of a process of this pid before, or anything planted.
    let _ = fs::remove_file(&tmp);
    write_new(&tmp, body)
        .and_then(|()| fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })
}

/// The most bsi reads of a file it keeps (a record, a request and the
/// heading trees it carries): a file planted in its place cannot make it
/// read without end.
const READ_AT_MOST: u64 = 64 << 20;

/// The flags of every open of a file bsi keeps where other processes meet:
/// no link followed, no wait on a FIFO.
pub(crate) fn opening(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
        options.custom_flags(flags.bits().cast_signed());
    }
    options
}

/// Whether `meta` is of a plain file of this user's (with `single`, with no
/// other name: no hard link to a file elsewhere): else what it is.
fn own_file(meta: &fs::Metadata, single: bool) -> std::result::Result<(), &'static str> {
    if !meta.file_type().is_file() {
        return Err("is not a plain file");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if platform::user_id().is_some_and(|me| me != meta.uid()) {
            return Err("belongs to another user");
        }
        if single && meta.nlink() != 1 {
            return Err("has another name (a hard link)");
        }
    }
    #[cfg(not(unix))]
    let _ = single;
    Ok(())
}

fn refused(path: &Path, what: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        format!("{} {what}", path.display()),
    )
}

/// Opens the file `path` to read and write it, made when missing — not
/// through a link (a link there is refused), and only when it is a plain
/// file of this user's with no other name: a lock planted by someone else
/// is never written, nor the file it leads to.
pub(crate) fn open_own(path: &Path) -> std::io::Result<File> {
    let made = {
        let mut o = OpenOptions::new();
        o.read(true).write(true).create_new(true);
        opening(&mut o).open(path)
    };
    let file = match made {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let mut o = OpenOptions::new();
            o.read(true).write(true);
            opening(&mut o)
                .open(path)
                .map_err(|e| link_refused(path, e))?
        }
        Err(e) => return Err(link_refused(path, e)),
    };
    own_file(&file.metadata()?, true).map_err(|what| refused(path, what))?;
    Ok(file)
}

/// An open refused because `path` is a link says so.
fn link_refused(path: &Path, e: std::io::Error) -> std::io::Error {
    let link = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if link {
        refused(path, "is a symbolic link")
    } else {
        e
    }
}

/// Writes `body` as the new file `path`: never over a file there, never
/// through a link.
pub(crate) fn write_new(path: &Path, body: &[u8]) -> std::io::Result<()> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    let mut file = opening(&mut o).open(path)?;
    file.write_all(body)
}

/// Reads the file `path` whole (at most [`READ_AT_MOST`]) when it is a
/// plain file of this user's, not through a link: what another user left
/// there is not read.
pub(crate) fn read_own(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut o = OpenOptions::new();
    o.read(true);
    let file = opening(&mut o).open(path)?;
    own_file(&file.metadata()?, false).map_err(|what| refused(path, what))?;
    let mut text = String::new();
    file.take(READ_AT_MOST).read_to_string(&mut text)?;
    Ok(text)
}

/// Makes, or checks, the directory `dir` where writers of several clones
/// meet: a real directory (no link), this user's, and writable by nobody
/// else (a directory of this user's that others may write is closed to
/// them). `Err` says why it is not safe to meet in.
pub(crate) fn own_dir(dir: &Path) -> std::result::Result<(), Unsafe> {
    let meta = match fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut b = fs::DirBuilder::new();
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o755);
            match b.create(dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(Unsafe::closed(format!(
                        "{} cannot be made ({e})",
                        dir.display()
                    )));
                }
            }
            fs::symlink_metadata(dir)
                .map_err(|e| Unsafe::closed(format!("{} cannot be read ({e})", dir.display())))?
        }
        Err(e) => {
            return Err(Unsafe::closed(format!(
                "{} cannot be read ({e})",
                dir.display()
            )));
        }
    };
    if meta.file_type().is_symlink() {
        return Err(Unsafe::planted(format!(
            "{} is a symbolic link",
            dir.display()
        )));
    }
    if !meta.is_dir() {
        return Err(Unsafe::closed(format!(
            "{} is not a directory",
            dir.display()
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        if let Some(me) = platform::user_id()
            && me != meta.uid()
        {
            return Err(Unsafe::closed(format!(
                "{} belongs to another user (uid {})",
                dir.display(),
                meta.uid()
            )));
        }
        let mode = meta.mode() & 0o7777;
        if mode & 0o022 != 0 {
            fs::set_permissions(dir, fs::Permissions::from_mode(mode & !0o022)).map_err(|e| {
                Unsafe::closed(format!(
                    "{} is writable by other users and cannot be closed to them ({e})",
                    dir.display()
                ))
            })?;
        }
    }
    Ok(())
}

/// Makes, or checks, the meeting place `dir` of the writers of several
/// clones (`<git dir>/bsi/writes/<branch>`): each directory from `bsi`
/// down ([`own_dir`]), then its lock, a plain file of this user's that no
/// link leads to ([`open_own`]). `Err` says why it is not safe to meet in:
/// the clone's writers then meet in the clone alone.
pub(crate) fn meeting_place(dir: &Path) -> std::result::Result<(), Unsafe> {
    let no_parent = || Unsafe::closed(format!("{} has no parent", dir.display()));
    let writes = dir.parent().ok_or_else(no_parent)?;
    let bsi = writes.parent().ok_or_else(no_parent)?;
    for d in [
        bsi.to_path_buf(),
        writes.to_path_buf(),
        dir.to_path_buf(),
        dir.join("requests"),
        dir.join("waiting"),
    ] {
        own_dir(&d)?;
    }
    open_own(&dir.join("lock")).map(drop).map_err(|e| {
        if e.kind() == std::io::ErrorKind::PermissionDenied && e.get_ref().is_some() {
            // Refused by bsi: a link, another user's file, a hard link.
            Unsafe::planted(e.to_string())
        } else {
            Unsafe::closed(format!(
                "{} cannot be opened ({e})",
                dir.join("lock").display()
            ))
        }
    })
}

/// Why a place where the writers of several clones would meet is not
/// safe to meet in ([`meeting_place`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unsafe {
    /// What was found, with its path.
    pub(crate) why: String,
    /// Something is there that bsi did not make (a link, a file that is no
    /// directory, another name for a file): said on every write, where
    /// another user's place or a read-only disk is only `bsi doctor`'s.
    pub(crate) planted: bool,
}

impl Unsafe {
    fn planted(why: String) -> Unsafe {
        Unsafe { why, planted: true }
    }

    fn closed(why: String) -> Unsafe {
        Unsafe {
            why,
            planted: false,
        }
    }
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    #[test]
    fn a_link_or_a_second_name_is_never_opened_as_a_lock() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("target");
        fs::write(&target, "kept\n").expect("target");
        let link = dir.path().join("lock");
        symlink(&target, &link).expect("link");
        let e = open_own(&link).expect_err("a link is refused");
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        // A hard link: another name for a file elsewhere.
        let hard = dir.path().join("hard");
        fs::hard_link(&target, &hard).expect("hard link");
        let e = open_own(&hard).expect_err("a second name is refused");
        assert!(e.to_string().contains("another name"), "{e}");
        assert_eq!(fs::read_to_string(&target).expect("target"), "kept\n");
        // A lock of its own is made, then opened again.
        let own = dir.path().join("own");
        open_own(&own).expect("made");
        open_own(&own).expect("opened again");
        // Nothing is written or read through a link.
        assert!(write_new(&link, b"x").is_err());
        assert!(read_own(&link).is_err());
        assert_eq!(fs::read_to_string(&target).expect("target"), "kept\n");
        // A file replaced whole replaces a link at its name, not its target.
        replace_file(&link, b"new\n").expect("replaced");
        assert!(!fs::symlink_metadata(&link).expect("a file").is_symlink());
        assert_eq!(fs::read_to_string(&target).expect("target"), "kept\n");
    }

    #[test]
    fn a_meeting_place_with_a_link_is_not_used_and_one_open_to_others_is_closed() {
        let root = tempfile::tempdir().expect("tempdir");
        let place = root.path().join("bsi/writes/brain-index");
        meeting_place(&place).expect("made");
        assert!(place.join("lock").is_file());
        assert!(place.join("requests").is_dir() && place.join("waiting").is_dir());
        // Opened to every user: closed again.
        fs::set_permissions(&place, fs::Permissions::from_mode(0o777)).expect("chmod");
        meeting_place(&place).expect("closed, then used");
        let mode = fs::metadata(&place).expect("place").permissions().mode();
        assert_eq!(mode & 0o022, 0, "{mode:o}");
        // A directory of the chain that is a link: not used, said so.
        let elsewhere = root.path().join("elsewhere");
        fs::create_dir(&elsewhere).expect("elsewhere");
        fs::remove_dir_all(place.join("requests")).expect("rm");
        symlink(&elsewhere, place.join("requests")).expect("link");
        let why = meeting_place(&place).expect_err("a link");
        assert!(
            why.planted && why.why.contains("is a symbolic link"),
            "{why:?}"
        );
        // A lock that is a link: not used, its target untouched.
        fs::remove_file(place.join("requests")).expect("rm");
        let target = root.path().join("target");
        fs::write(&target, "kept\n").expect("target");
        fs::remove_file(place.join("lock")).expect("rm");
        symlink(&target, place.join("lock")).expect("link");
        let why = meeting_place(&place).expect_err("a link");
        assert!(why.planted, "{why:?}");
        assert_eq!(fs::read_to_string(&target).expect("target"), "kept\n");
        let e = WriterLock::take(&place.join("lock"), Some(Duration::from_millis(10)))
            .err()
            .expect("never taken through a link");
        assert!(e.to_string().contains("lock"), "{e}");
        assert_eq!(fs::read_to_string(&target).expect("target"), "kept\n");
    }
}
