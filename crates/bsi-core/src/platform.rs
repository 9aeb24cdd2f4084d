//! What bsi asks of the operating system beyond files: the process table
//! (the processes this one descends from, whether a process that recorded
//! itself is still alive, the processes a child started, whether a file is
//! held open) and the terminal.
//!
//! One API for every system. Linux's table is `/proc`, read here directly:
//! it tells an entry that is missing from one that cannot be read, gives
//! start times in clock ticks, and costs no more than the files a question
//! needs. Elsewhere (macOS, the BSDs, Windows) the table is the `sysinfo`
//! crate's, asked for the processes a question needs only, with `kill(pid,
//! 0)` on Unix to prove a pid unused. What cannot be proven is "unknown",
//! never "dead": bsi then reports a leftover lock instead of removing it.

use std::path::{Path, PathBuf};

/// What this process must do before it ends on an interrupt
/// ([`at_interrupt`]).
type LastWords = Box<dyn FnOnce() + Send>;

static AT_INTERRUPT: std::sync::Mutex<Option<LastWords>> = std::sync::Mutex::new(None);

static HEARING: std::sync::Once = std::sync::Once::new();

/// Until [`clear_at_interrupt`], `last` is run when this process is
/// interrupted (Ctrl-C, SIGTERM, SIGHUP), before it ends with 128 plus the
/// signal's number, as a shell reports a process the signal ended. The
/// signals are heard on a thread of their own from the first call on; a
/// second signal while `last` runs (bounded by its own time) changes
/// nothing. Elsewhere than on Unix, nothing is heard.
pub(crate) fn at_interrupt(last: LastWords) {
    *AT_INTERRUPT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(last);
    #[cfg(unix)]
    HEARING.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        let _ = std::thread::Builder::new()
            .name("bsi-interrupt".into())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    let last = AT_INTERRUPT
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .take();
                    if let Some(last) = last {
                        last();
                    }
                    std::process::exit(128 + signal);
                }
            });
    });
}

/// Nothing is left to do on an interrupt ([`at_interrupt`]).
pub(crate) fn clear_at_interrupt() {
    *AT_INTERRUPT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
}

/// This machine's host name, as a post's lease records its writer's: where
/// a writer can be proven dead by the process table.
pub(crate) fn host() -> String {
    gethostname::gethostname()
        .into_string()
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// What the process table says of one process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seen {
    /// No process table here: nothing can be known.
    NoTable,
    /// Its entry was read: its start time (clock ticks since boot on Linux,
    /// seconds since the epoch elsewhere), which tells a process from a
    /// later one given the same pid.
    Started(String),
    /// No entry for that pid: gone, unless the table hides other users'
    /// processes.
    Missing,
    /// An entry that could not be read (another user's process behind
    /// `hidepid`, a permission, a file that is not what it should be).
    Unreadable,
}

/// One process as the table shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Process {
    /// Its parent's pid, where the table gives one.
    pub parent: Option<u32>,
    /// Its command name (`git`, `sh`, `node`).
    pub name: String,
    /// Its start time, as in [`Seen::Started`].
    pub start: String,
}

/// Whether the process that recorded start time `recorded` and pid is
/// alive, from what the table says of that pid: `Some(false)` is a proof
/// that it is gone, `None` means it cannot be known. `hides_others`: the
/// table hides other users' processes (`hidepid`); `same_user`: the process
/// was this user's (whose entries are never hidden from it). Pure.
pub(crate) fn judge(
    seen: &Seen,
    recorded: &str,
    hides_others: bool,
    same_user: bool,
) -> Option<bool> {
    match seen {
        Seen::NoTable | Seen::Unreadable => None,
        // Another start time: the pid now belongs to a later process.
        Seen::Started(now) => Some(recorded.is_empty() || now == recorded),
        Seen::Missing if hides_others && !same_user => None,
        Seen::Missing => Some(false),
    }
}

/// The table a test shows bsi instead of the system's: `BSI_PROC` names a
/// directory laid out as Linux's `/proc` (a table bsi cannot read, one that
/// hides other users' processes). Read here, not in `Ctx`: a test seam the
/// store's lock repair reaches without a context.
fn test_table() -> Option<PathBuf> {
    std::env::var_os("BSI_PROC").map(PathBuf::from)
}

/// What the process table rooted at `proc` (laid out as Linux's `/proc`)
/// says of `pid`.
pub(crate) fn look(proc: &Path, pid: u32) -> Seen {
    procfs::seen(proc, pid)
}

/// This process's ancestors, nearest first (its parent, the parent's
/// parent…), at most `limit`: each as `PID@START` (its pid and start time,
/// which no later process with the same pid has) and its command name.
/// Empty where the process table cannot be read.
pub fn ancestors(limit: usize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(mut at) = os::entry(std::process::id()) else {
        return out;
    };
    while out.len() < limit {
        let Some(ppid) = at.parent.filter(|&p| p > 1) else {
            break;
        };
        at = match os::entry(ppid) {
            Some(p) => p,
            None => break,
        };
        out.push((format!("{ppid}@{}", at.start), at.name.clone()));
    }
    out
}

/// The user this process runs as, where the system has one.
pub(crate) fn user_id() -> Option<u32> {
    #[cfg(unix)]
    {
        Some(rustix::process::getuid().as_raw())
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The start time of process `pid`, as [`Seen::Started`] gives it. `None`
/// where it cannot be read.
pub(crate) fn start_time(pid: u32) -> Option<String> {
    os::entry(pid).map(|p| p.start)
}

/// Whether the process `pid` that recorded start time `start` (and ran as
/// user `uid`, when the record says) is alive: `Some(false)` is a proof
/// that it is gone, `None` means it cannot be known here.
pub(crate) fn process_alive(pid: u32, start: &str, uid: Option<u32>) -> Option<bool> {
    let same_user = uid.is_some() && uid == user_id();
    if let Some(proc) = test_table() {
        let seen = look(&proc, pid);
        let hides = seen == Seen::Missing && procfs::hides_others(&proc);
        return judge(&seen, start, hides, same_user);
    }
    let seen = os::seen(pid);
    let hides = seen == Seen::Missing && os::hides_others();
    judge(&seen, start, hides, same_user).or_else(|| {
        // A table that hides the pid: the kernel still says whether any
        // process has it.
        (seen == Seen::Missing && pid_unused(pid)).then_some(false)
    })
}

/// Whether no process has pid `pid`, by `kill(pid, 0)`: `ESRCH` is the
/// kernel's word that none does, whoever it belongs to and whatever
/// `/proc` shows. `false` where that is not known.
fn pid_unused(pid: u32) -> bool {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, test_kill_process};
        i32::try_from(pid)
            .ok()
            .and_then(Pid::from_raw)
            .is_some_and(|p| test_kill_process(p) == Err(rustix::io::Errno::SRCH))
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

/// The processes descended from `pid` (its children, theirs, ...); none
/// where the process table cannot be read.
pub(crate) fn descendants(pid: u32) -> Vec<u32> {
    descendants_in(&os::parents(), pid)
}

/// The processes descended from `pid` among `parents` (each process and
/// its parent). Pure.
pub(crate) fn descendants_in(parents: &[(u32, u32)], pid: u32) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for &(p, pp) in parents {
            if pp == parent && p != pid && !out.contains(&p) {
                out.push(p);
                frontier.push(p);
            }
        }
    }
    out
}

/// Whether some process has `path` open: `Some(false)` only when every
/// process's open files could be read and none is `path`; `None` where that
/// cannot be known (a system whose table does not show open files, or
/// another user's process whose files this one may not read).
pub(crate) fn held_open(path: &Path) -> Option<bool> {
    os::held_open(path)
}

/// The process table of a system laid out as Linux's `/proc`, rooted
/// anywhere (the test seam's tables too). Compiled everywhere: it is only
/// files.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
mod procfs {
    use super::{Process, Seen};
    use std::path::Path;

    pub(super) fn seen(proc: &Path, pid: u32) -> Seen {
        if !proc.join("self").exists() {
            return Seen::NoTable;
        }
        match std::fs::read_to_string(proc.join(pid.to_string()).join("stat")) {
            Ok(stat) => start_of(&stat).map_or(Seen::Unreadable, Seen::Started),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Seen::Missing,
            Err(_) => Seen::Unreadable,
        }
    }

    pub(super) fn entry(proc: &Path, pid: u32) -> Option<Process> {
        let stat = std::fs::read_to_string(proc.join(pid.to_string()).join("stat")).ok()?;
        Some(Process {
            parent: parent_of(&stat),
            name: name_of(&stat)?,
            start: start_of(&stat)?,
        })
    }

    /// Every process and its parent.
    pub(super) fn parents(proc: &Path) -> Vec<(u32, u32)> {
        let Ok(procs) = std::fs::read_dir(proc) else {
            return Vec::new();
        };
        procs
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter_map(|p| {
                let stat = std::fs::read_to_string(proc.join(p.to_string()).join("stat")).ok()?;
                Some((p, parent_of(&stat)?))
            })
            .collect()
    }

    /// Field 4 of a `stat` line: the parent's pid.
    pub(super) fn parent_of(stat: &str) -> Option<u32> {
        let rest = &stat[stat.rfind(')')? + 1..];
        rest.split_whitespace().nth(1)?.parse().ok()
    }

    /// Field 2 of a `stat` line: the command name, without its parentheses.
    pub(super) fn name_of(stat: &str) -> Option<String> {
        Some(stat[stat.find('(')? + 1..stat.rfind(')')?].to_string())
    }

    /// Field 22 of a `stat` line: the start time. The command name (field
    /// 2) is in parentheses and may hold spaces: fields are counted after
    /// its closing parenthesis.
    pub(super) fn start_of(stat: &str) -> Option<String> {
        let rest = &stat[stat.rfind(')')? + 1..];
        rest.split_whitespace().nth(19).map(str::to_string)
    }

    /// Whether the table rooted at `proc` hides other users' processes
    /// (`hidepid=` other than 0 for `/proc` in its `mounts`); when that
    /// cannot be read, it is taken to.
    pub(super) fn hides_others(proc: &Path) -> bool {
        let Ok(mounts) = std::fs::read_to_string(proc.join("mounts")) else {
            return true;
        };
        mounts
            .lines()
            .filter(|l| l.split_whitespace().nth(1) == Some("/proc"))
            .any(|l| {
                l.split_whitespace()
                    .nth(3)
                    .unwrap_or("")
                    .split(',')
                    .filter_map(|o| o.strip_prefix("hidepid="))
                    .any(|v| v != "0" && v != "off")
            })
    }

    /// Whether some process has `path` open, from `<proc>/*/fd`.
    pub(super) fn held_open(proc: &Path, path: &Path) -> Option<bool> {
        let procs = std::fs::read_dir(proc).ok()?;
        let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let mut unknown = false;
        for p in procs.flatten() {
            let name = p.file_name();
            if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let fds = match std::fs::read_dir(p.path().join("fd")) {
                Ok(fds) => fds,
                // Gone since the listing: it holds nothing.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => {
                    unknown = true;
                    continue;
                }
            };
            if fds
                .flatten()
                .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t == target))
            {
                return Some(true);
            }
        }
        if unknown { None } else { Some(false) }
    }
}

/// Linux: `/proc`.
#[cfg(target_os = "linux")]
mod os {
    use super::{Process, Seen, procfs};
    use std::path::Path;

    const PROC: &str = "/proc";

    pub(super) fn seen(pid: u32) -> Seen {
        procfs::seen(Path::new(PROC), pid)
    }

    pub(super) fn entry(pid: u32) -> Option<Process> {
        procfs::entry(Path::new(PROC), pid)
    }

    pub(super) fn parents() -> Vec<(u32, u32)> {
        procfs::parents(Path::new(PROC))
    }

    pub(super) fn hides_others() -> bool {
        procfs::hides_others(Path::new(PROC))
    }

    pub(super) fn held_open(path: &Path) -> Option<bool> {
        procfs::held_open(Path::new(PROC), path)
    }
}

/// Elsewhere: the `sysinfo` crate's table, refreshed for the pids a
/// question needs only (all of them for [`parents`]). Compiled for the
/// unit tests on Linux too, where they hold it to `/proc`'s answers.
#[cfg(any(not(target_os = "linux"), test))]
mod sys {
    use super::{Process, Seen};
    use std::path::Path;
    use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};

    fn table(pids: ProcessesToUpdate<'_>) -> System {
        let mut sys = System::new();
        sys.refresh_processes_specifics(pids, false, ProcessRefreshKind::nothing());
        sys
    }

    pub(super) fn entry(pid: u32) -> Option<Process> {
        let at = Pid::from_u32(pid);
        let sys = table(ProcessesToUpdate::Some(&[at]));
        let p = sys.process(at)?;
        Some(Process {
            parent: p.parent().map(Pid::as_u32),
            name: p.name().to_string_lossy().into_owned(),
            start: p.start_time().to_string(),
        })
    }

    /// No entry is no proof here (the crate does not tell a missing entry
    /// from one it could not read): the kernel's `kill(pid, 0)` decides.
    pub(super) fn seen(pid: u32) -> Seen {
        match entry(pid) {
            Some(p) => Seen::Started(p.start),
            None if super::pid_unused(pid) => Seen::Missing,
            None => Seen::Unreadable,
        }
    }

    pub(super) fn parents() -> Vec<(u32, u32)> {
        let sys = table(ProcessesToUpdate::All);
        sys.processes()
            .iter()
            .filter_map(|(pid, p)| Some((pid.as_u32(), p.parent()?.as_u32())))
            .collect()
    }

    /// A missing entry here was proven missing by the kernel.
    pub(super) fn hides_others() -> bool {
        false
    }

    /// The crate does not list open files: unknown.
    pub(super) fn held_open(_path: &Path) -> Option<bool> {
        None
    }
}

#[cfg(not(target_os = "linux"))]
use sys as os;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_recycled_pid_is_not() {
        if start_time(std::process::id()).is_none() {
            return; // no /proc here: nothing can be proven
        }
        let me = start_time(std::process::id()).expect("start time");
        let uid = user_id();
        assert_eq!(process_alive(std::process::id(), &me, uid), Some(true));
        assert_eq!(process_alive(std::process::id(), "1", uid), Some(false));
        assert_eq!(process_alive(u32::MAX - 1, &me, uid), Some(false));
    }

    #[test]
    fn only_a_missing_entry_or_another_start_proves_a_process_gone() {
        let started = |s: &str| Seen::Started(s.into());
        // (what /proc says, recorded start, hides others, same user) -> verdict
        let cases = [
            (started("42"), "42", false, false, Some(true)),
            (started("42"), "", false, false, Some(true)),
            (started("43"), "42", false, false, Some(false)),
            (started("43"), "42", true, false, Some(false)),
            (Seen::Missing, "42", false, false, Some(false)),
            (Seen::Missing, "42", true, true, Some(false)),
            // hidepid: another user's live process looks missing.
            (Seen::Missing, "42", true, false, None),
            // Unreadable is unknown, never a proof.
            (Seen::Unreadable, "42", false, false, None),
            (Seen::Unreadable, "42", false, true, None),
            (Seen::Unreadable, "", true, true, None),
            (Seen::NoTable, "42", false, true, None),
        ];
        for (seen, recorded, hides, same, verdict) in cases {
            assert_eq!(
                judge(&seen, recorded, hides, same),
                verdict,
                "{seen:?} {recorded:?} hides={hides} same_user={same}"
            );
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_processes_a_process_started_are_its_descendants() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30 & wait"])
            .spawn()
            .expect("sh");
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut found = descendants(child.id());
        while found.len() < 2 && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(10));
            found = descendants(child.id());
        }
        for p in &found {
            let _ = std::process::Command::new("kill")
                .arg(p.to_string())
                .status();
        }
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(!found.contains(&child.id()));
        assert!(descendants(u32::MAX - 1).is_empty());
    }

    #[test]
    fn a_stat_line_gives_parent_name_and_start_whatever_the_name_holds() {
        let stat = "7 (a (b) c) S 1 7 7 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 98765 1 1";
        assert_eq!(procfs::parent_of(stat), Some(1));
        assert_eq!(procfs::name_of(stat).as_deref(), Some("a (b) c"));
        assert_eq!(procfs::start_of(stat).as_deref(), Some("98765"));
        for broken in ["", "7 (git", "7 git) S", "7 (git) S x"] {
            assert_eq!(procfs::start_of(broken), None, "{broken:?}");
        }
        assert_eq!(procfs::parent_of("7 (git) S x"), None);
    }

    #[test]
    fn descendants_are_found_through_every_generation_once() {
        // (process, parent)
        let table = [(2, 1), (3, 2), (4, 3), (5, 2), (6, 9), (2, 4)];
        let mut found = descendants_in(&table, 2);
        found.sort_unstable();
        assert_eq!(found, [3, 4, 5]);
        assert!(descendants_in(&table, 7).is_empty());
    }

    #[test]
    fn a_pid_no_process_can_have_is_unused_and_this_one_is_used() {
        assert!(!pid_unused(std::process::id()));
        // Above any system's pid_max.
        #[cfg(unix)]
        assert!(pid_unused(i32::MAX.unsigned_abs() - 1));
        // Beyond what a pid can be: nothing is proven.
        assert!(!pid_unused(u32::MAX));
    }

    /// The other systems' table (the `sysinfo` crate) answers as `/proc`
    /// does for the same processes, start times aside (seconds there).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_other_systems_table_agrees_with_proc() {
        let me = std::process::id();
        let by_proc = procfs::entry(Path::new("/proc"), me).expect("/proc entry");
        let by_sys = sys::entry(me).expect("sysinfo entry");
        assert_eq!(by_sys.parent, by_proc.parent);
        assert_eq!(by_sys.name, by_proc.name);
        assert!(
            by_sys.start.parse::<u64>().is_ok_and(|s| s > 0),
            "{by_sys:?}"
        );
        assert!(matches!(sys::seen(me), Seen::Started(_)));
        assert_eq!(sys::seen(i32::MAX.unsigned_abs() - 1), Seen::Missing);
        assert!(!sys::hides_others());
        assert_eq!(sys::held_open(Path::new("/")), None);
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        let parents = sys::parents();
        let _ = child.kill();
        let _ = child.wait();
        assert!(parents.contains(&(child.id(), me)), "{parents:?}");
    }

    #[test]
    fn what_a_process_table_says_is_read_from_its_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let proc = dir.path();
        // No `self`: not a process table.
        assert_eq!(look(proc, 7), Seen::NoTable);
        std::fs::create_dir_all(proc.join("self")).expect("mkdir");
        assert_eq!(look(proc, 7), Seen::Missing);
        std::fs::create_dir_all(proc.join("7")).expect("mkdir");
        let stat = "7 (a (b) c) S 1 7 7 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 98765 1 1";
        std::fs::write(proc.join("7/stat"), stat).expect("write");
        assert_eq!(look(proc, 7), Seen::Started("98765".into()));
        std::fs::write(proc.join("7/stat"), "garbage").expect("write");
        assert_eq!(look(proc, 7), Seen::Unreadable);
        // An entry whose stat cannot be read (a directory here; a
        // permission or hidepid elsewhere) is unknown, not gone.
        std::fs::remove_file(proc.join("7/stat")).expect("rm");
        std::fs::create_dir(proc.join("7/stat")).expect("mkdir");
        assert_eq!(look(proc, 7), Seen::Unreadable);
        assert_eq!(judge(&look(proc, 7), "98765", false, true), None);
    }
}
