//! What bsi asks of the operating system beyond files: whether a process
//! that recorded itself is still alive. Only Linux can prove a process dead
//! (through `/proc`); elsewhere the answer is "unknown", and bsi then
//! reports a leftover lock instead of removing it.

use std::path::Path;

/// What `/proc` says of one process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// No process table here (not Linux): nothing can be known.
    NoTable,
    /// Its `stat` was read: its start time (clock ticks since boot), which
    /// tells a process from a later one given the same pid.
    Started(String),
    /// No entry for that pid: gone, unless the table hides other users'
    /// processes.
    Missing,
    /// An entry that could not be read (another user's process behind
    /// `hidepid`, a permission, a file that is not what it should be).
    Unreadable,
}

/// Whether the process that recorded start time `recorded` and pid is
/// alive, from what `/proc` says of that pid: `Some(false)` is a proof that
/// it is gone, `None` means it cannot be known. `hides_others`: the table
/// hides other users' processes (`hidepid`); `same_user`: the process was
/// this user's (whose entries are never hidden from it). Pure.
pub fn judge(seen: &Seen, recorded: &str, hides_others: bool, same_user: bool) -> Option<bool> {
    match seen {
        Seen::NoTable | Seen::Unreadable => None,
        // Another start time: the pid now belongs to a later process.
        Seen::Started(now) => Some(recorded.is_empty() || now == recorded),
        Seen::Missing if hides_others && !same_user => None,
        Seen::Missing => Some(false),
    }
}

/// What the process table rooted at `proc` says of `pid`.
pub fn look(proc: &Path, pid: u32) -> Seen {
    if !proc.join("self").exists() {
        return Seen::NoTable;
    }
    match std::fs::read_to_string(proc.join(pid.to_string()).join("stat")) {
        Ok(stat) => start_of(&stat).map_or(Seen::Unreadable, Seen::Started),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Seen::Missing,
        Err(_) => Seen::Unreadable,
    }
}

/// This process's ancestors, nearest first (its parent, the parent's
/// parent…), at most `limit`: each as `PID@START` (its pid and start time,
/// which no later process with the same pid has) and its command name.
/// Empty where the process table cannot be read.
pub fn ancestors(limit: usize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    while out.len() < limit {
        let Some(ppid) = parent_of(&stat) else {
            break;
        };
        if ppid <= 1 {
            break;
        }
        stat = match std::fs::read_to_string(format!("/proc/{ppid}/stat")) {
            Ok(s) => s,
            Err(_) => break,
        };
        let (Some(start), Some(name)) = (start_of(&stat), name_of(&stat)) else {
            break;
        };
        out.push((format!("{ppid}@{start}"), name));
    }
    out
}

/// Field 4 of a `stat` line: the parent's pid.
fn parent_of(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Field 2 of a `stat` line: the command name, without its parentheses.
fn name_of(stat: &str) -> Option<String> {
    Some(stat[stat.find('(')? + 1..stat.rfind(')')?].to_string())
}

/// Field 22 of a `stat` line: the start time. The command name (field 2)
/// is in parentheses and may hold spaces: fields are counted after its
/// closing parenthesis.
fn start_of(stat: &str) -> Option<String> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19).map(str::to_string)
}

/// Whether the process table rooted at `proc` hides other users'
/// processes (`hidepid=` other than 0 for `/proc` in its `mounts`); when
/// that cannot be read, it is taken to.
fn hides_others(proc: &Path) -> bool {
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

/// The user this process runs as (the owner of its `/proc/self`), where
/// that can be read.
pub fn user_id() -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").ok().map(|m| m.uid())
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The start time of process `pid`, from `/proc/<pid>/stat`. `None` where it
/// cannot be read.
pub fn start_time(pid: u32) -> Option<String> {
    match look(Path::new("/proc"), pid) {
        Seen::Started(s) => Some(s),
        _ => None,
    }
}

/// Whether the process `pid` that recorded start time `start` (and ran as
/// user `uid`, when the record says) is alive: `Some(false)` is a proof
/// that it is gone, `None` means it cannot be known here.
pub fn process_alive(pid: u32, start: &str, uid: Option<u32>) -> Option<bool> {
    // `BSI_PROC` stands for `/proc` in tests, which show bsi a table it
    // cannot read or one that hides other users' processes.
    let proc =
        std::env::var_os("BSI_PROC").map_or_else(|| "/proc".into(), std::path::PathBuf::from);
    let seen = look(&proc, pid);
    let same_user = uid.is_some() && uid == user_id();
    judge(
        &seen,
        start,
        seen == Seen::Missing && hides_others(&proc),
        same_user,
    )
}

/// The processes descended from `pid` (its children, theirs, ...), from
/// the parent pid in each `/proc/<pid>/stat`; none where there is no such
/// table.
pub fn descendants(pid: u32) -> Vec<u32> {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(u32, u32)> = procs
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
            Some((p, parent_of(&stat)?))
        })
        .collect();
    let mut out: Vec<u32> = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for &(p, pp) in &parents {
            if pp == parent && p != pid && !out.contains(&p) {
                out.push(p);
                frontier.push(p);
            }
        }
    }
    out
}

/// Whether some process has `path` open, from `/proc/*/fd`: `Some(false)`
/// only when every process's open files could be read and none is `path`;
/// `None` where that cannot be known (no `/proc`, or another user's
/// process whose files this one may not read).
pub fn held_open(path: &Path) -> Option<bool> {
    let procs = std::fs::read_dir("/proc").ok()?;
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

/// The width of the terminal stdout writes to, in columns: `None` when
/// stdout is not a terminal (a pipe, a file) or the system does not say.
pub fn terminal_width() -> Option<usize> {
    use std::io::IsTerminal;
    let out = std::io::stdout();
    if !out.is_terminal() {
        return None;
    }
    #[cfg(unix)]
    {
        rustix::termios::tcgetwinsize(&out)
            .ok()
            .map(|w| usize::from(w.ws_col))
            .filter(|&w| w > 0)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The width text for people fits: `COLUMNS` when it is set to a usable
/// width (`columns`, already read), else the terminal's, else 80.
pub fn screen_width(columns: Option<usize>) -> usize {
    columns.or_else(terminal_width).unwrap_or(80)
}

/// The terminal of stdin set to hand bsi each key as it is pressed (no
/// line editing, no echo, Ctrl-C as a key): for `bsi status --watch`. Put
/// back as it was when dropped.
pub struct KeysMode {
    #[cfg(unix)]
    saved: rustix::termios::Termios,
}

impl KeysMode {
    /// Sets stdin's terminal to hand over keys; `None` when stdin is not a
    /// terminal (or the system does not allow it): keys are then read a
    /// line at a time, and Ctrl-C ends bsi as usual.
    pub fn enter() -> Option<KeysMode> {
        #[cfg(unix)]
        {
            use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
            let stdin = std::io::stdin();
            let saved = tcgetattr(&stdin).ok()?;
            let mut keys = saved.clone();
            keys.local_modes
                .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG);
            tcsetattr(&stdin, OptionalActions::Now, &keys).ok()?;
            Some(KeysMode { saved })
        }
        #[cfg(not(unix))]
        {
            None
        }
    }
}

impl Drop for KeysMode {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            use rustix::termios::{OptionalActions, tcsetattr};
            let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &self.saved);
        }
    }
}

/// The keys typed on stdin, one byte each, read by a thread of their own
/// (a blocked read never holds up a redraw). The channel closes at the end
/// of stdin.
pub fn keys() -> std::sync::mpsc::Receiver<u8> {
    use std::io::Read;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin();
        let mut byte = [0u8; 1];
        while let Ok(1) = stdin.read(&mut byte) {
            if tx.send(byte[0]).is_err() {
                break;
            }
        }
    });
    rx
}

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
