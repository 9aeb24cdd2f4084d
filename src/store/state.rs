//! What a clone remembers of its remote between runs: when it last heard
//! from it. What is pending is not stored: it is what the local registry
//! branch holds that its remote-tracking copy does not.

use std::fs;
use std::path::{Path, PathBuf};

use chrono::{DateTime, FixedOffset};

use crate::error::{Error, Result};

/// The state directory of a clone (`<common git dir>/bsi`).
pub(crate) struct State {
    dir: PathBuf,
}

impl State {
    pub(crate) fn new(dir: &Path) -> State {
        State {
            dir: dir.to_path_buf(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Records that the remote answered at `now` (a fetch or a push).
    pub(crate) fn heard_from_remote(&self, now: DateTime<FixedOffset>) -> Result<()> {
        fs::create_dir_all(&self.dir)
            .map_err(|e| Error::io(format!("cannot create {}", self.dir.display()), e))?;
        let path = self.path("last-contact");
        let tmp = self.path("last-contact.tmp");
        fs::write(&tmp, format!("{}\n", now.to_rfc3339()))
            .and_then(|()| fs::rename(&tmp, &path))
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
    }

    /// When the remote last answered.
    pub(crate) fn last_contact(&self) -> Option<DateTime<FixedOffset>> {
        let s = fs::read_to_string(self.path("last-contact"))
            .or_else(|_| fs::read_to_string(self.path("last-sync")))
            .ok()?;
        DateTime::parse_from_rfc3339(s.trim()).ok()
    }
}
