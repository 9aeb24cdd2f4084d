//! Which bsi session a process started by an agent tool belongs to, for
//! what the tool starts without telling it its session (an MCP server).
//!
//! The session-start hook records the tool's processes — the hook's
//! nearest ancestors, the tool itself among them — beside the session map,
//! with the bsi session it named. A process the tool starts later (`bsi
//! mcp`) finds its parent among them: the same tool process, so the same
//! agent session. Linux only (through `/proc`); elsewhere nothing is
//! recorded and nothing is found.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Tool;
use crate::platform;

/// How many of the hook's ancestors are recorded: the shell the tool runs
/// the hook through, the tool, and what started the tool.
const DEPTH: usize = 3;

/// Records kept at most (the oldest go first).
const KEEP: usize = 64;

const FILE: &str = "processes.json";
const LOCK: &str = "processes.lock";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    tool: String,
    /// The tool's own session id.
    tool_session: String,
    /// The bsi session.
    session: String,
    /// The hook's ancestors, nearest first: pid and start time.
    ancestors: Vec<(u32, String)>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Records {
    version: u32,
    records: Vec<Record>,
}

/// Records that the calling hook's tool process runs `session` (the tool's
/// session `tool_session`), in `dir` (the session map's directory).
/// Best effort: a failure leaves a started server to its other sources.
pub fn record(dir: &Path, tool: Tool, tool_session: &str, session: &str) {
    let ancestors = platform::ancestor_pids(DEPTH);
    if ancestors.is_empty() {
        return;
    }
    let _ = update(dir, |all| {
        all.records
            .retain(|r| !(r.tool == tool.name() && r.tool_session == tool_session));
        all.records.push(Record {
            tool: tool.name().into(),
            tool_session: tool_session.into(),
            session: session.into(),
            ancestors,
        });
        let over = all.records.len().saturating_sub(KEEP);
        all.records.drain(..over);
    });
}

/// The bsi session of the tool process that started this one (its parent),
/// as the tool's session-start hook recorded it in `dir`: the latest
/// record that names that process.
pub fn session_of_parent(dir: &Path, tool: Tool) -> Option<String> {
    let parent = platform::ancestor_pids(1).into_iter().next()?;
    read(&dir.join(FILE))
        .records
        .into_iter()
        .rev()
        .find(|r| r.tool == tool.name() && r.ancestors.contains(&parent))
        .map(|r| r.session)
}

fn read(path: &Path) -> Records {
    fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Records {
            version: 1,
            records: Vec::new(),
        })
}

/// Changes the records under an OS file lock, written whole and renamed.
fn update(dir: &Path, change: impl FnOnce(&mut Records)) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(LOCK))?;
    lock.lock()?;
    let path: PathBuf = dir.join(FILE);
    let mut all = read(&path);
    change(&mut all);
    let tmp = dir.join(format!("{FILE}.{}.tmp", std::process::id()));
    let mut text = serde_json::to_string_pretty(&all).map_err(std::io::Error::other)?;
    text.push('\n');
    let mut f = File::create(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    drop(f);
    fs::rename(&tmp, &path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_of_the_recorded_process_finds_its_session() {
        let dir = tempfile::tempdir().expect("tempdir");
        record(dir.path(), Tool::Claude, "abc", "sess-1");
        if platform::ancestor_pids(1).is_empty() {
            // No process table here: nothing is recorded.
            assert_eq!(session_of_parent(dir.path(), Tool::Claude), None);
            return;
        }
        // This test's process stands for the server: its parent is the
        // hook's parent too.
        assert_eq!(
            session_of_parent(dir.path(), Tool::Claude).as_deref(),
            Some("sess-1")
        );
        assert_eq!(session_of_parent(dir.path(), Tool::Codex), None);
        // A later session of the same tool process wins.
        record(dir.path(), Tool::Claude, "def", "sess-2");
        assert_eq!(
            session_of_parent(dir.path(), Tool::Claude).as_deref(),
            Some("sess-2")
        );
    }
}
