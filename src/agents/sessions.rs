//! The session map: which bsi session an agent tool's session is. One JSON
//! file in a directory the caller names (the repository's common git
//! directory, so every worktree of the clone sees the same map), written
//! whole to a temporary file and renamed over the old one, under an OS file
//! lock so concurrent hooks never lose each other's entries. Readers take no
//! lock: a rename is atomic.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Tool;
use bsi_core::error::{Error, Result};

/// The map's directory under a repository's common git directory.
pub fn dir_in(common_git_dir: &Path) -> PathBuf {
    common_git_dir.join("bsi-agents")
}

/// The session map of the repository `dir` is in, whichever of its
/// worktrees that is.
pub fn in_repo(dir: &Path) -> Result<SessionMap> {
    let git = bsi_core::api::git::Git::discover(dir)?;
    Ok(SessionMap::new(&dir_in(&git.common_dir())))
}

/// The entry of the agent tool process the calling process descends from,
/// as the tool's session-start hook recorded it ([`SessionMap::set_process`])
/// in the session map of the repository `dir` is in: the nearest recorded
/// ancestor. Cheap: the process table's entries of this process's ancestors
/// ([`bsi_core::api::platform::ancestors`]) and one read of the map, no process
/// started. None where there is no process table, no repository, or no
/// recorded ancestor.
pub fn of_ancestors(dir: &Path) -> Option<Entry> {
    let processes: Vec<String> = bsi_core::api::platform::ancestors(16)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    if processes.is_empty() {
        return None;
    }
    in_repo(dir).ok()?.by_process(&processes).ok()?
}

/// The entry of the agent tool session the calling process acts for: the
/// tool session named by the tool's own variable in this process's
/// environment (`tool_sessions`: [`AgentTool::shell_session_var`](super::AgentTool::shell_session_var) and its
/// value; exact, and the only way where the tool's process is hidden, as in
/// Codex's sandbox), else the nearest recorded ancestor ([`of_ancestors`]).
/// None when neither names a recorded session.
pub fn of_caller(dir: &Path, tool_sessions: &[(Tool, String)]) -> Option<Entry> {
    if !tool_sessions.is_empty() {
        let named = in_repo(dir).ok().and_then(|map| {
            tool_sessions
                .iter()
                .find_map(|(tool, id)| map.entry(*tool, id).ok().flatten())
        });
        if named.is_some() {
            return named;
        }
    }
    of_ancestors(dir)
}

/// The session map in one directory.
#[derive(Debug, Clone)]
pub struct SessionMap {
    dir: PathBuf,
}

/// One entry of the map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The tool ([`AgentTool::name`](super::AgentTool::name)).
    pub tool: String,
    /// The tool's session id.
    pub tool_session: String,
    /// The bsi session.
    pub session: String,
    /// What the stop hook last sent the agent back for (the claims it
    /// held), so it sends it back once for them, whatever the tool says
    /// about its own loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_back: Option<String>,
    /// The tool's process (`PID@START`), recorded at session start: a bsi
    /// run from the agent's shell, a descendant of it, is this session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<String>,
    /// A message for the agent the tool could not take before the edit
    /// (Gemini CLI: a claim on write), given after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File1 {
    version: u32,
    sessions: Vec<Entry>,
}

const FILE: &str = "sessions.json";
const LOCK: &str = "sessions.lock";

impl SessionMap {
    /// The map kept in `dir` (created when first written).
    pub fn new(dir: &Path) -> SessionMap {
        SessionMap {
            dir: dir.to_path_buf(),
        }
    }

    /// The map's file.
    pub fn path(&self) -> PathBuf {
        self.dir.join(FILE)
    }

    /// The bsi session of a tool's session, if it has one.
    pub fn get(&self, tool: Tool, tool_session: &str) -> Result<Option<String>> {
        Ok(self.entry(tool, tool_session)?.map(|e| e.session))
    }

    /// The entry of a tool's session, if it has one.
    pub fn entry(&self, tool: Tool, tool_session: &str) -> Result<Option<Entry>> {
        Ok(self
            .read()?
            .sessions
            .into_iter()
            .find(|e| e.tool == tool.name() && e.tool_session == tool_session))
    }

    /// Every entry, in the order they were added.
    pub fn entries(&self) -> Result<Vec<Entry>> {
        Ok(self.read()?.sessions)
    }

    /// The bsi session of a tool's session; when it has none, `make` names
    /// one and it is recorded. Returns the session and whether it is new.
    pub fn get_or_insert_with(
        &self,
        tool: Tool,
        tool_session: &str,
        make: impl FnOnce() -> String,
    ) -> Result<(String, bool)> {
        let _lock = self.lock()?;
        let mut map = self.read()?;
        if let Some(e) = map
            .sessions
            .iter()
            .find(|e| e.tool == tool.name() && e.tool_session == tool_session)
        {
            return Ok((e.session.clone(), false));
        }
        let session = make();
        map.sessions.push(Entry {
            tool: tool.name().into(),
            tool_session: tool_session.into(),
            session: session.clone(),
            sent_back: None,
            process: None,
            pending: None,
        });
        self.write(&map)?;
        Ok((session, true))
    }

    /// Binds a tool's session to `session`, replacing what it had. Returns
    /// the session it had.
    pub fn set(&self, tool: Tool, tool_session: &str, session: &str) -> Result<Option<String>> {
        let _lock = self.lock()?;
        let mut map = self.read()?;
        let old = if let Some(e) = map
            .sessions
            .iter_mut()
            .find(|e| e.tool == tool.name() && e.tool_session == tool_session)
        {
            Some(std::mem::replace(&mut e.session, session.into()))
        } else {
            map.sessions.push(Entry {
                tool: tool.name().into(),
                tool_session: tool_session.into(),
                session: session.into(),
                sent_back: None,
                process: None,
                pending: None,
            });
            None
        };
        if old.as_deref() != Some(session) {
            self.write(&map)?;
        }
        Ok(old)
    }

    /// Records that the stop hook sends a tool's session back for `what`
    /// (the claims it holds). Returns `false` when it already did for the
    /// same `what`: the agent went back once, and may stop now. A tool
    /// session the map does not know is sent back (and nothing recorded).
    pub fn send_back_once(&self, tool: Tool, tool_session: &str, what: &str) -> Result<bool> {
        let _lock = self.lock()?;
        let mut map = self.read()?;
        let Some(e) = map
            .sessions
            .iter_mut()
            .find(|e| e.tool == tool.name() && e.tool_session == tool_session)
        else {
            return Ok(true);
        };
        if e.sent_back.as_deref() == Some(what) {
            return Ok(false);
        }
        e.sent_back = Some(what.to_string());
        self.write(&map)?;
        Ok(true)
    }

    /// Records the tool's process of a tool session (see [`Entry::process`]).
    pub fn set_process(&self, tool: Tool, tool_session: &str, process: &str) -> Result<()> {
        let _lock = self.lock()?;
        let mut map = self.read()?;
        let mut changed = false;
        for e in &mut map.sessions {
            let this = e.tool == tool.name() && e.tool_session == tool_session;
            if this && e.process.as_deref() != Some(process) {
                e.process = Some(process.to_string());
                changed = true;
            } else if !this && e.process.as_deref() == Some(process) {
                // A new session of the same process (`/clear`): the old one
                // no longer runs there.
                e.process = None;
                changed = true;
            }
        }
        if changed {
            self.write(&map)?;
        }
        Ok(())
    }

    /// The entry whose tool process is the nearest of `processes`
    /// (`PID@START`, nearest first).
    pub fn by_process(&self, processes: &[String]) -> Result<Option<Entry>> {
        let map = self.read()?;
        Ok(processes.iter().find_map(|p| {
            map.sessions
                .iter()
                .find(|e| e.process.as_deref() == Some(p.as_str()))
                .cloned()
        }))
    }

    /// Keeps `message` for the tool sessions of `tool` bound to `session`.
    pub fn set_pending(&self, tool: Tool, session: &str, message: &str) -> Result<()> {
        let _lock = self.lock()?;
        let mut map = self.read()?;
        let mut changed = false;
        for e in &mut map.sessions {
            if e.tool == tool.name() && e.session == session {
                e.pending = Some(message.to_string());
                changed = true;
            }
        }
        if changed {
            self.write(&map)?;
        }
        Ok(())
    }

    /// Takes the message kept for a tool session, if any.
    pub fn take_pending(&self, tool: Tool, tool_session: &str) -> Result<Option<String>> {
        // Most edits have none: read without the lock first.
        let has = self.read()?.sessions.iter().any(|e| {
            e.tool == tool.name() && e.tool_session == tool_session && e.pending.is_some()
        });
        if !has {
            return Ok(None);
        }
        let _lock = self.lock()?;
        let mut map = self.read()?;
        let taken = map
            .sessions
            .iter_mut()
            .find(|e| e.tool == tool.name() && e.tool_session == tool_session)
            .and_then(|e| e.pending.take());
        if taken.is_some() {
            self.write(&map)?;
        }
        Ok(taken)
    }

    /// Records that a session of `tool` reached bsi's hooks at `when`.
    pub fn mark_reached(&self, tool: Tool, when: &str) -> Result<()> {
        let path = self.dir.join(format!("reached-{}", tool.name()));
        fs::create_dir_all(&self.dir)
            .and_then(|()| fs::write(&path, format!("{when}\n")))
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
    }

    /// When a session of `tool` last reached bsi's hooks, if ever.
    pub fn reached(&self, tool: Tool) -> Option<String> {
        let text = fs::read_to_string(self.dir.join(format!("reached-{}", tool.name()))).ok()?;
        Some(text.trim().to_string()).filter(|t| !t.is_empty())
    }

    /// Forgets a tool's session. Returns the bsi session it had.
    pub fn remove(&self, tool: Tool, tool_session: &str) -> Result<Option<String>> {
        let _lock = self.lock()?;
        let mut map = self.read()?;
        let Some(i) = map
            .sessions
            .iter()
            .position(|e| e.tool == tool.name() && e.tool_session == tool_session)
        else {
            return Ok(None);
        };
        let e = map.sessions.remove(i);
        self.write(&map)?;
        Ok(Some(e.session))
    }

    fn read(&self) -> Result<File1> {
        let path = self.path();
        match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Error::io(
                    format!("cannot read the session map {}", path.display()),
                    std::io::Error::new(std::io::ErrorKind::InvalidData, e),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(File1 {
                version: 1,
                sessions: Vec::new(),
            }),
            Err(e) => Err(Error::io(
                format!("cannot read the session map {}", path.display()),
                e,
            )),
        }
    }

    fn write(&self, map: &File1) -> Result<()> {
        let path = self.path();
        let tmp = self.dir.join(format!("{FILE}.{}.tmp", std::process::id()));
        let ctx = |what: &str| format!("cannot {what} the session map {}", path.display());
        let mut text = serde_json::to_string_pretty(map)
            .map_err(|e| Error::io(ctx("write"), std::io::Error::other(e)))?;
        text.push('\n');
        let mut f = File::create(&tmp).map_err(|e| Error::io(ctx("write"), e))?;
        f.write_all(text.as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(|e| Error::io(ctx("write"), e))?;
        drop(f);
        fs::rename(&tmp, &path).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            Error::io(ctx("replace"), e)
        })
    }

    /// The writers' lock: an OS file lock, released when its process ends.
    fn lock(&self) -> Result<File> {
        fs::create_dir_all(&self.dir)
            .map_err(|e| Error::io(format!("cannot create {}", self.dir.display()), e))?;
        let path = self.dir.join(LOCK);
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
        f.lock()
            .map_err(|e| Error::io(format!("cannot lock {}", path.display()), e))?;
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_session_gets_one_bsi_session() {
        let dir = tempfile::tempdir().expect("tempdir");
        let map = SessionMap::new(&dir.path().join("bsi-agents"));
        assert_eq!(map.get(Tool::CLAUDE, "abc").expect("get"), None);
        let (s, new) = map
            .get_or_insert_with(Tool::CLAUDE, "abc", || "sess-1".into())
            .expect("insert");
        assert_eq!((s.as_str(), new), ("sess-1", true));
        let (s, new) = map
            .get_or_insert_with(Tool::CLAUDE, "abc", || "sess-2".into())
            .expect("again");
        assert_eq!((s.as_str(), new), ("sess-1", false));
        // The same id from another tool is another session.
        assert_eq!(map.get(Tool::CODEX, "abc").expect("get"), None);
        assert_eq!(
            map.set(Tool::CLAUDE, "abc", "sess-3").expect("set"),
            Some("sess-1".into())
        );
        assert_eq!(
            map.get(Tool::CLAUDE, "abc").expect("get"),
            Some("sess-3".into())
        );
        assert_eq!(
            map.remove(Tool::CLAUDE, "abc").expect("rm"),
            Some("sess-3".into())
        );
        assert_eq!(map.entries().expect("entries"), vec![]);
    }

    #[test]
    fn a_tool_process_names_its_latest_session() {
        let dir = tempfile::tempdir().expect("tempdir");
        let map = SessionMap::new(dir.path());
        for (id, s) in [("g1", "sess-1"), ("g2", "sess-2")] {
            map.get_or_insert_with(Tool::GEMINI, id, || s.into())
                .expect("insert");
        }
        map.set_process(Tool::GEMINI, "g1", "42@100").expect("set");
        let found = |p: &[&str]| {
            let p: Vec<String> = p.iter().map(ToString::to_string).collect();
            map.by_process(&p).expect("read").map(|e| e.session)
        };
        assert_eq!(found(&["7@1", "42@100"]), Some("sess-1".into()));
        assert_eq!(found(&["42@101"]), None, "another process with that pid");
        // The same process starts a new session: that one is its now.
        map.set_process(Tool::GEMINI, "g2", "42@100").expect("set");
        assert_eq!(found(&["42@100"]), Some("sess-2".into()));
    }

    #[test]
    fn a_stop_sends_back_once_for_the_same_claims() {
        let dir = tempfile::tempdir().expect("tempdir");
        let map = SessionMap::new(dir.path());
        map.get_or_insert_with(Tool::GEMINI, "g", || "sess-1".into())
            .expect("insert");
        assert!(map.send_back_once(Tool::GEMINI, "g", "a.md").expect("1"));
        assert!(!map.send_back_once(Tool::GEMINI, "g", "a.md").expect("2"));
        // New claims since: sent back again, once.
        assert!(
            map.send_back_once(Tool::GEMINI, "g", "a.md, b.md")
                .expect("3")
        );
        assert!(
            !map.send_back_once(Tool::GEMINI, "g", "a.md, b.md")
                .expect("4")
        );
        assert_eq!(
            map.get(Tool::GEMINI, "g").expect("get"),
            Some("sess-1".into())
        );
    }

    #[test]
    fn concurrent_writers_lose_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path().to_path_buf();
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let d = d.clone();
                std::thread::spawn(move || {
                    let map = SessionMap::new(&d);
                    for j in 0..5 {
                        map.get_or_insert_with(Tool::CURSOR, &format!("c{i}-{j}"), || {
                            format!("sess-{i}-{j}")
                        })
                        .expect("insert");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        assert_eq!(SessionMap::new(&d).entries().expect("entries").len(), 40);
    }

    #[test]
    fn a_corrupt_map_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(FILE), "{not json").expect("write");
        assert!(SessionMap::new(dir.path()).get(Tool::CLAUDE, "x").is_err());
    }
}
