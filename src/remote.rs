//! The only module that runs the system `git` command: fetching and pushing
//! the registry's branch (so SSH keys, credential helpers and
//! `GIT_SSH_COMMAND` work as they do for git itself), and git's own line
//! merge for the merge driver's fallback. Commands are argument lists, never
//! shell strings.

use std::path::Path;
use std::process::{Command, Stdio};

use git2::Oid;

use crate::error::{Error, Result};
use crate::git::Git;

/// The remote branch where the order of registry changes is decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// The remote's name (`origin`).
    pub name: String,
    /// The branch on that remote (`main`).
    pub branch: String,
}

/// How a push ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Push {
    /// The remote branch now points to the commit.
    Pushed,
    /// Another push landed first (non-fast-forward): fetch and try again.
    Rejected,
    /// The remote could not be reached, or refused for another reason.
    Failed(String),
}

impl Remote {
    /// The remote the brain publishes to: `--remote` / `BSI_REMOTE`, else
    /// the git config `bsi.remote` (this clone), else `remote` in `.bsi.toml`
    /// (the brain's shared setting), else the current branch's upstream;
    /// `None` when there is none, and bsi works locally.
    pub fn configured(
        git: &Git,
        flag: Option<&str>,
        shared: Option<&str>,
    ) -> Result<Option<Remote>> {
        let named = flag
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .or_else(|| git.config_string("bsi.remote"))
            .or_else(|| shared.map(str::to_string));
        let upstream = git.upstream();
        let Some(name) = named else {
            return Ok(upstream.map(|(name, branch)| Remote { name, branch }));
        };
        if !git.has_remote(&name) {
            return Err(Error::Usage(format!(
                "there is no git remote named `{name}` (from --remote, bsi.remote or .bsi.toml)"
            )));
        }
        let branch = match upstream {
            Some((r, b)) if r == name => b,
            _ => git.head_branch().ok_or_else(|| {
                Error::Usage("HEAD is not on a branch: bsi publishes the current branch".into())
            })?,
        };
        Ok(Some(Remote { name, branch }))
    }

    /// The remote-tracking reference `fetch` updates.
    pub fn tracking_ref(&self) -> String {
        format!("refs/remotes/{}/{}", self.name, self.branch)
    }

    /// `remote/branch`, for messages.
    pub fn label(&self) -> String {
        format!("{}/{}", self.name, self.branch)
    }

    /// Fetches the branch into its remote-tracking reference. The error is
    /// what git said.
    pub fn fetch(&self, workdir: &Path) -> Result<(), String> {
        let refspec = format!("+refs/heads/{}:{}", self.branch, self.tracking_ref());
        let out = git(workdir)
            .args(["fetch", "--quiet", "--no-tags", "--", &self.name, &refspec])
            .output()
            .map_err(|e| format!("cannot run git: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(last_line(&out.stderr))
        }
    }

    /// Pushes `commit` (a child of the fetched tip) to the branch. Git
    /// refuses it unless it fast-forwards the branch: that is the
    /// compare-and-swap deciding the order of registry changes.
    pub fn push(&self, workdir: &Path, commit: Oid) -> Push {
        let refspec = format!("{commit}:refs/heads/{}", self.branch);
        let out = match git(workdir)
            .args(["push", "--porcelain", "--quiet", "--", &self.name, &refspec])
            .output()
        {
            Ok(o) => o,
            Err(e) => return Push::Failed(format!("cannot run git: {e}")),
        };
        if out.status.success() {
            return Push::Pushed;
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lost = [
            "non-fast-forward",
            "fetch first",
            "failed to update ref",
            "cannot lock ref",
        ]
        .iter()
        .any(|w| stdout.contains(w) || stderr.contains(w));
        if lost {
            Push::Rejected
        } else {
            Push::Failed(last_line(&out.stderr))
        }
    }
}

/// git's own three-way line merge of three files, written into `ours` with
/// conflict markers where the sides disagree. Returns whether it was clean.
pub fn merge_file(ours: &Path, base: &Path, theirs: &Path) -> Result<bool> {
    let dir =
        std::env::current_dir().map_err(|e| Error::io("cannot read the current directory", e))?;
    let status = git(&dir)
        .args([
            "merge-file",
            "-L",
            "ours",
            "-L",
            "base",
            "-L",
            "theirs",
            "--",
        ])
        .arg(ours)
        .arg(base)
        .arg(theirs)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| Error::io("cannot run `git merge-file`", e))?;
    match status.code() {
        Some(0) => Ok(true),
        Some(n) if n > 0 && n < 128 => Ok(false),
        _ => Err(Error::Usage("`git merge-file` failed".into())),
    }
}

fn git(workdir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(workdir).stdin(Stdio::null());
    cmd
}

fn last_line(stderr: &[u8]) -> String {
    let s = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = s.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let pick = lines
        .iter()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or(lines.last());
    pick.map(|l| l.to_string())
        .unwrap_or_else(|| "git failed without a message".into())
}
