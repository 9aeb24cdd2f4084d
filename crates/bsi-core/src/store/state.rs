//! What a clone remembers of its remote between runs: when it last heard
//! from it, and when it first read each queue row whose lease was further
//! ahead of its clock than a lease is long. What is pending is not stored: it is what the local registry
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
        super::lock::replace_file(&path, format!("{}\n", now.to_rfc3339()).as_bytes())
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
    }

    /// When the remote last answered.
    pub(crate) fn last_contact(&self) -> Option<DateTime<FixedOffset>> {
        let s = fs::read_to_string(self.path("last-contact"))
            .or_else(|_| fs::read_to_string(self.path("last-sync")))
            .ok()?;
        DateTime::parse_from_rfc3339(s.trim()).ok()
    }

    /// The queue rows this clone read with a lease too far ahead of its
    /// clock, each with when it first read it: `(first read, row)`, one per
    /// line of `queue-ahead` as `<RFC 3339>\t<row>`. Empty when none.
    pub(crate) fn sightings(&self) -> Vec<(DateTime<FixedOffset>, String)> {
        let Ok(text) = fs::read_to_string(self.path("queue-ahead")) else {
            return Vec::new();
        };
        text.lines()
            .filter_map(|l| {
                let (at, row) = l.split_once('\t')?;
                Some((DateTime::parse_from_rfc3339(at).ok()?, row.to_string()))
            })
            .collect()
    }

    /// Writes the list [`State::sightings`] reads (removed when empty).
    pub(crate) fn record_sightings(&self, list: &[(DateTime<FixedOffset>, String)]) -> Result<()> {
        let path = self.path("queue-ahead");
        if list.is_empty() {
            return match fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(Error::io(format!("cannot remove {}", path.display()), e))
                }
                _ => Ok(()),
            };
        }
        fs::create_dir_all(&self.dir)
            .map_err(|e| Error::io(format!("cannot create {}", self.dir.display()), e))?;
        let text: String = list
            .iter()
            .map(|(at, row)| format!("{}\t{row}\n", at.to_rfc3339()))
            .collect();
        super::lock::replace_file(&path, text.as_bytes())
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
    }
}
