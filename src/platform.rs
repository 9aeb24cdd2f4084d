//! What bsi asks of the operating system beyond files: whether a process
//! that recorded itself is still alive. Only Linux can prove a process dead
//! (through `/proc`); elsewhere the answer is "unknown", and bsi then
//! reports a leftover lock instead of removing it.

/// The start time of process `pid` (clock ticks since boot, from
/// `/proc/<pid>/stat`), which tells a process from a later one that was
/// given the same pid. `None` where it cannot be read.
pub fn start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces:
    // fields are counted after its closing parenthesis.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19).map(str::to_string)
}

/// Whether the process `pid` that recorded start time `start` is alive:
/// `Some(false)` is a proof that it is gone, `None` means it cannot be
/// known here.
pub fn process_alive(pid: u32, start: &str) -> Option<bool> {
    if !std::path::Path::new("/proc/self/stat").exists() {
        return None;
    }
    match start_time(pid) {
        None => Some(false),
        Some(now) => Some(start.is_empty() || now == start),
    }
}

/// Whether some process has `path` open, from `/proc/*/fd`: `Some(false)`
/// only when every process's open files could be read and none is `path`;
/// `None` where that cannot be known (no `/proc`, or another user's
/// process whose files this one may not read).
pub fn held_open(path: &std::path::Path) -> Option<bool> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_recycled_pid_is_not() {
        if start_time(std::process::id()).is_none() {
            return; // no /proc here: nothing can be proven
        }
        let me = start_time(std::process::id()).expect("start time");
        assert_eq!(process_alive(std::process::id(), &me), Some(true));
        assert_eq!(process_alive(std::process::id(), "1"), Some(false));
        assert_eq!(process_alive(u32::MAX - 1, &me), Some(false));
    }
}
