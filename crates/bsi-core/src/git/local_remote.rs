//! A remote on this machine's disk (a path, or a `file://` URL), read in
//! process. Clones of one machine that share a bare repository are the
//! commonest multi-clone brain; for them a `git fetch` of the registry
//! branch starts six processes (`git fetch`, its shell, `upload-pack`,
//! `pack-objects`, `unpack-objects`, the connectivity check) to move a few
//! hundred bytes, and twenty writers that lost one race start them all at
//! once. Here the registry branch is read from the remote's own repository
//! with libgit2 and the objects the clone lacks are copied into it, each
//! written only after every object it names; the posted write requests are
//! read there as data.
//!
//! Reading is all this module does: pushes still go through `git push`, so
//! the remote's hooks and receive policy judge every write as they judge
//! any push. A fetch git itself would do differently is left to git: a remote named by a URL, one with its own
//! `uploadpack` or `vcs`, objects checked on fetch (`fetch.fsckObjects`,
//! `transfer.fsckObjects`), a shallow or partial clone, a remote that
//! libgit2 will not open (another owner's, say) or that is not a
//! repository (a bundle).
//!
//! A disk can hang as a network does (a remote on a mount that went away):
//! the reading runs on a thread of its own, and a fetch that has not ended
//! within its time is reported as an unreachable remote, as a `git fetch`
//! killed at its time is. A late thread can move no reference: each moves
//! only from the value it read.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::Duration;

use git2::{ObjectType, Oid, Repository, RepositoryOpenFlags};

use crate::git_cli::{ALIVE, FetchError, REQUESTS, Remote};

/// What the reflogs of the references a fetch moves say.
const REFLOG: &str = "bsi: fetch from the remote's repository on this disk";

/// A post of write requests, read on the remote (see
/// [`crate::git_cli::REQUESTS`]): the clone that posted it, its commit, the
/// registry it was planned on (the commit's parent) and its files by path
/// (`requests.json`, or the `requests/<id>.json` of an earlier bsi).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Post {
    /// The clone's name there.
    pub clone: String,
    /// The post's commit.
    pub commit: Oid,
    /// Its parent.
    pub base: Option<Oid>,
    /// Its files, by path.
    pub files: Vec<(String, Vec<u8>)>,
}

/// How a fetch that succeeded read the remote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// In process, from the remote's repository on this disk: the posts of
    /// write requests there, when they were asked for, read as data and not
    /// copied.
    Disk(Vec<Post>),
    /// With `git fetch`: the posts, when they were asked for, are in their
    /// local copies ([`Remote::requests_ref`]).
    Git,
}

/// Fetches the registry branch of `remote` into its remote-tracking
/// reference for the clone whose work tree is `repo`, within `timeout`;
/// with `requests`, the posts of write requests too. A remote that is a
/// repository on this disk is read in process: the posts as data, read
/// where they are, with no object of theirs copied (the writer that carries
/// them out needs their content and the commit each is at, for its lease,
/// nothing more). Anything else, or a remote that git must fetch itself
/// (see the module's documentation), or a reading that went wrong along the
/// way (what was done is what a fetch does), goes to `git fetch`
/// ([`Remote::fetch`], [`Remote::fetch_with_requests`]).
pub fn fetch(
    repo: &Path,
    remote: &Remote,
    requests: bool,
    timeout: Duration,
) -> Result<Fetched, FetchError> {
    if let Some(done) = on_disk(repo, remote, requests, timeout) {
        return done.map(Fetched::Disk);
    }
    if requests {
        remote.fetch_with_requests(repo, timeout)
    } else {
        remote.fetch(repo, timeout)
    }
    .map(|()| Fetched::Git)
}

/// [`fetch`] on this disk, on a thread of its own; `None` when git must do it.
fn on_disk(
    repo: &Path,
    remote: &Remote,
    requests: bool,
    timeout: Duration,
) -> Option<Result<Vec<Post>, FetchError>> {
    let (repo, r) = (repo.to_path_buf(), remote.clone());
    match bounded(timeout, move || fetch_here(&repo, &r, requests)) {
        Read::Done(done) => done,
        Read::Late(why) => Some(Err(FetchError::Unreachable(why))),
        Read::NoThread => None,
    }
}

/// How many reads of a disk this process started are still running past
/// their time: a disk that hangs (a mount gone away) keeps them, each on a
/// thread blocked in the kernel.
static LATE: AtomicUsize = AtomicUsize::new(0);

/// What a read bounded by [`bounded`] gave.
enum Read<T> {
    /// It ended in time.
    Done(T),
    /// It did not end within its time, or a read before it is still
    /// running past its own: why, as an unreachable remote says it.
    Late(String),
    /// No thread could be started for it.
    NoThread,
}

/// Runs `read`, which reads a disk, on a thread of its own, waiting for it
/// at most `timeout`: a read that has not ended by then is given up (it
/// goes on, and can change nothing a later one reads: every reference
/// moves only from the value it read). Once one read is late, the disk is
/// taken as hung, and no other is started until that one ends: a process
/// never piles up threads blocked on a dead disk.
fn bounded<T: Send + 'static>(
    timeout: Duration,
    read: impl FnOnce() -> T + Send + 'static,
) -> Read<T> {
    if LATE.load(Ordering::SeqCst) > 0 {
        return Read::Late(
            "the remote's repository on this disk did not answer a read before this one".into(),
        );
    }
    // 0 while it reads, 1 once given up, 2 once it ended.
    const READING: u8 = 0;
    const GIVEN_UP: u8 = 1;
    const ENDED: u8 = 2;
    let (tx, rx) = std::sync::mpsc::channel();
    let state = std::sync::Arc::new(AtomicU8::new(READING));
    let mine = state.clone();
    let started = std::thread::Builder::new()
        .name("bsi-disk-read".into())
        .spawn(move || {
            let done = read();
            // A read given up ends at last: the disk answers again.
            if mine.swap(ENDED, Ordering::SeqCst) == GIVEN_UP {
                LATE.fetch_sub(1, Ordering::SeqCst);
            }
            let _ = tx.send(done);
        });
    if started.is_err() {
        return Read::NoThread;
    }
    let late = |timeout: Duration| {
        Read::Late(format!(
            "the remote's repository on this disk gave no answer within {} s",
            timeout.as_secs_f32()
        ))
    };
    match rx.recv_timeout(timeout) {
        Ok(done) => Read::Done(done),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            // Counted late before the thread can see it was given up.
            LATE.fetch_add(1, Ordering::SeqCst);
            if state
                .compare_exchange(READING, GIVEN_UP, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                return late(timeout);
            }
            // It ended in between: not late, its answer on its way.
            LATE.fetch_sub(1, Ordering::SeqCst);
            rx.recv().map_or(Read::NoThread, Read::Done)
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Read::NoThread,
    }
}

fn fetch_here(
    repo: &Path,
    remote: &Remote,
    requests: bool,
) -> Option<Result<Vec<Post>, FetchError>> {
    let flags = RepositoryOpenFlags::NO_SEARCH | RepositoryOpenFlags::CROSS_FS;
    let local = Repository::open_ext(repo, flags, std::iter::empty::<&std::ffi::OsStr>()).ok()?;
    let from = remote_repository(&local, repo, &remote.name)?;
    let branch = match from.refname_to_id(&format!("refs/heads/{}", remote.branch)) {
        Ok(id) => id,
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Some(Err(FetchError::NoBranch)),
        Err(_) => return None,
    };
    let mut posts = Vec::new();
    if requests {
        for r in from.references_glob(&format!("{REQUESTS}*")).ok()? {
            let r = r.ok()?;
            let (Ok(name), Some(id)) = (r.name(), r.target()) else {
                continue;
            };
            if let Some(clone) = name.strip_prefix(REQUESTS) {
                posts.push(read_post(&from, clone, id).ok()?);
            }
        }
    }
    copy_objects(&from, &local, &[branch]).ok()?;
    set_ref(&local, &remote.tracking_ref(), branch).ok()?;
    // The places other clones keep alive (a small commit each), as the
    // refspec of `git fetch` copies them.
    for r in from.references_glob(&format!("{ALIVE}*")).ok()? {
        let r = r.ok()?;
        let (Ok(name), Some(id)) = (r.name(), r.target()) else {
            continue;
        };
        if let Some(clone) = name.strip_prefix(ALIVE) {
            copy_objects(&from, &local, &[id]).ok()?;
            set_ref(&local, &remote.alive_ref(clone), id).ok()?;
        }
    }
    Some(Ok(posts))
}

/// The post of clone `clone` at `commit` of `repo`.
fn read_post(repo: &Repository, clone: &str, commit: Oid) -> Result<Post, git2::Error> {
    let c = repo.find_commit(commit)?;
    let mut files = Vec::new();
    let mut trees = vec![(String::new(), c.tree()?)];
    while let Some((dir, tree)) = trees.pop() {
        for e in &tree {
            let path = format!("{dir}{}", String::from_utf8_lossy(e.name_bytes()));
            match e.kind() {
                Some(ObjectType::Blob) => {
                    files.push((path, repo.find_blob(e.id())?.content().to_vec()));
                }
                Some(ObjectType::Tree) => {
                    trees.push((format!("{path}/"), repo.find_tree(e.id())?));
                }
                _ => {}
            }
        }
    }
    Ok(Post {
        clone: clone.to_string(),
        commit,
        base: c.parent_ids().next(),
        files,
    })
}

/// The repository of remote `name` of `local` (whose work tree is `workdir`),
/// when git would fetch from it as from a repository on this disk and
/// nothing in either calls for git's own fetch.
fn remote_repository(local: &Repository, workdir: &Path, name: &str) -> Option<Repository> {
    let path = remote_path(local, workdir, name)?;
    let flags = RepositoryOpenFlags::NO_SEARCH;
    let repo = Repository::open_ext(&path, flags, std::iter::empty::<&std::ffi::OsStr>()).ok()?;
    (!repo.is_shallow()).then_some(repo)
}

/// Where remote `name` of `local` is on this disk, when git would fetch
/// from it as from a repository there and nothing in `local` calls for
/// git's own fetch.
fn remote_path(local: &Repository, workdir: &Path, name: &str) -> Option<PathBuf> {
    let path = read_here(local, workdir, name)?;
    path.is_dir().then_some(path)
}

/// [`remote_path`] from the clone's configuration alone: nothing of the
/// remote's disk is read.
fn read_here(local: &Repository, workdir: &Path, name: &str) -> Option<PathBuf> {
    if local.is_shallow() {
        return None;
    }
    let config = local.config().ok()?.snapshot().ok()?;
    let set = |key: &str| config.get_entry(key).is_ok();
    let on = |key: &str| config.get_bool(key).unwrap_or(false);
    if set(&format!("remote.{name}.uploadpack"))
        || set(&format!("remote.{name}.vcs"))
        || set(&format!("remote.{name}.promisor"))
        || set("extensions.partialclone")
        || on("fetch.fsckobjects")
        || on("transfer.fsckobjects")
    {
        return None;
    }
    // libgit2 applies `url.<base>.insteadOf` as git does.
    let found = local.find_remote(name).ok()?;
    disk_path(found.url().ok()?, workdir)
}

/// Where the writers of the clones of this machine that share `remote`,
/// a repository on this disk read in process, would meet to write its
/// registry branch: a directory of that repository's own git directory
/// (`bsi/writes/<branch>`, the branch's name with every byte but a letter,
/// digit, `-`, `_` or `.` written as `%XX`). `None` when the remote is not
/// one this module reads, or its disk gives no answer within `timeout`.
/// Nothing is made or opened there: whether it is safe to meet in is the
/// store's to judge (`store::Meeting`).
pub fn meeting_dir(git: &super::Git, remote: &Remote, timeout: Duration) -> Option<PathBuf> {
    let workdir = git.repo.workdir()?;
    let path = read_here(&git.repo, workdir, &remote.name)?;
    let branch: String = remote
        .branch
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    let git_dir = match within(timeout, move || git_dir_at(&path)) {
        Ok(dir) => dir?,
        Err(_) => return None,
    };
    Some(git_dir.join("bsi").join("writes").join(branch))
}

/// Runs `read`, which reads or writes a disk where a remote is, bounded as
/// a fetch is: its answer, or why there was none within `timeout` (a disk
/// that hangs holds no caller; see [`bounded`]).
pub fn within<T: Send + 'static>(
    timeout: Duration,
    read: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    match bounded(timeout, read) {
        Read::Done(done) => Ok(done),
        Read::Late(why) => Err(why),
        Read::NoThread => Err("no thread could be started to read the disk".into()),
    }
}

/// Where `remote`'s registry branch is, read from its repository's files
/// when that repository is on this disk: the loose reference, else
/// `packed-refs` (git's own order), with no repository opened and no
/// process started. `None` when the remote is elsewhere, cannot be read so
/// simply (a URL rewritten by `url.<base>.insteadOf`, a `.git` file, a
/// reftable store, a symbolic reference), has no such branch, or gives no
/// answer within `timeout` (the files are read on a thread of their own, as
/// a fetch is: a disk that hangs holds no caller).
pub fn branch_tip(git: &super::Git, remote: &Remote, timeout: Duration) -> Option<Oid> {
    let url = git.config_string(&format!("remote.{}.url", remote.name))?;
    if git.config_has(r"^url\..*\.insteadof$") {
        return None;
    }
    let path = disk_path(&url, git.repo.workdir()?)?;
    let name = format!("refs/heads/{}", remote.branch);
    match bounded(timeout, move || tip_in(&path, &name)) {
        Read::Done(tip) => tip,
        Read::Late(_) | Read::NoThread => None,
    }
}

/// [`branch_tip`]'s reading of the files of the repository at `path`.
fn tip_in(path: &Path, name: &str) -> Option<Oid> {
    let git_dir = git_dir_at(path)?;
    if git_dir.join("reftable").exists() {
        return None;
    }
    match std::fs::read_to_string(git_dir.join(name)) {
        Ok(text) => Oid::from_str(text.trim()).ok(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let packed = std::fs::read_to_string(git_dir.join("packed-refs")).ok()?;
            packed_target(&packed, name)
        }
        Err(_) => None,
    }
}

/// The git directory of the repository at `path` on this disk: `path`
/// itself (a bare repository) or its `.git` directory.
fn git_dir_at(path: &Path) -> Option<PathBuf> {
    [path.to_path_buf(), path.join(".git")]
        .into_iter()
        .find(|d| d.join("HEAD").is_file() && d.join("objects").is_dir())
}

/// The commit `name` points to in the text of a `packed-refs` file. Pure.
pub(crate) fn packed_target(packed: &str, name: &str) -> Option<Oid> {
    packed.lines().find_map(|l| {
        let (id, refname) = l.split_once(' ')?;
        (refname == name).then(|| Oid::from_str(id).ok()).flatten()
    })
}

/// Where a remote's URL is on this disk, as git reads it: a `file://` URL
/// (with no host, and nothing percent-encoded), or a path — any URL with
/// no `://` whose first colon, if any, comes after a slash (`host:path`
/// is SSH) — relative to the work tree. `None` for anything else. Pure.
pub(crate) fn disk_path(url: &str, workdir: &Path) -> Option<PathBuf> {
    if let Some(rest) = url.strip_prefix("file://") {
        return (rest.starts_with('/') && !rest.contains('%')).then(|| PathBuf::from(rest));
    }
    if url.is_empty() || url.contains("://") {
        return None;
    }
    match (url.find(':'), url.find('/')) {
        (Some(colon), Some(slash)) if slash < colon => {}
        (Some(_), _) => return None,
        (None, _) => {}
    }
    let path = Path::new(url);
    Some(if path.is_absolute() {
        path.to_path_buf()
    } else {
        workdir.join(path)
    })
}

/// Copies into `to` every object reachable from `tips` that it lacks, each
/// after the objects it names: an object `to` has is taken to come with
/// all it names, as git takes a commit it has.
fn copy_objects(from: &Repository, to: &Repository, tips: &[Oid]) -> Result<(), git2::Error> {
    let (src, dst) = (from.odb()?, to.odb()?);
    let mut seen = HashSet::new();
    // (object, whether what it names is on the stack above it already)
    let mut stack: Vec<(Oid, bool)> = tips.iter().map(|t| (*t, false)).collect();
    while let Some((id, named)) = stack.pop() {
        if named {
            let object = src.read(id)?;
            dst.write(object.kind(), object.data())?;
            continue;
        }
        if !seen.insert(id) || dst.exists(id) {
            continue;
        }
        stack.push((id, true));
        let object = from.find_object(id, None)?;
        match object.kind() {
            Some(ObjectType::Commit) => {
                let c = object.peel_to_commit()?;
                stack.push((c.tree_id(), false));
                stack.extend(c.parent_ids().map(|p| (p, false)));
            }
            Some(ObjectType::Tree) => {
                let t = object.peel_to_tree()?;
                // A submodule's commit is not in this repository.
                stack.extend(
                    t.iter()
                        .filter(|e| e.kind() != Some(ObjectType::Commit))
                        .map(|e| (e.id(), false)),
                );
            }
            Some(ObjectType::Tag) => {
                if let Some(tag) = object.as_tag() {
                    stack.push((tag.target_id(), false));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Moves reference `name` of `repo` to `to`, from the value it has now: a
/// reference moved by someone else meanwhile fails it.
fn set_ref(repo: &Repository, name: &str, to: Oid) -> Result<(), git2::Error> {
    match repo.refname_to_id(name) {
        Ok(now) if now == to => Ok(()),
        Ok(now) => repo
            .reference_matching(name, to, true, now, REFLOG)
            .map(drop),
        Err(_) => repo.reference(name, to, false, REFLOG).map(drop),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_reference_is_found_by_its_whole_name() {
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        let packed = format!(
            "# pack-refs with: peeled fully-peeled sorted\n{a} refs/heads/brain-index-old\n{b} refs/heads/brain-index\n^{a}\n"
        );
        assert_eq!(
            packed_target(&packed, "refs/heads/brain-index"),
            Oid::from_str(&b).ok()
        );
        assert_eq!(packed_target(&packed, "refs/heads/other"), None);
    }

    #[test]
    fn the_urls_git_reads_as_a_path_on_this_disk() {
        let wd = Path::new("/w/brain");
        let p = |u: &str| disk_path(u, wd);
        assert_eq!(p("/srv/brain.git"), Some(PathBuf::from("/srv/brain.git")));
        assert_eq!(
            p("file:///srv/brain.git"),
            Some(PathBuf::from("/srv/brain.git"))
        );
        assert_eq!(
            p("../brain.git"),
            Some(PathBuf::from("/w/brain/../brain.git"))
        );
        assert_eq!(p("./a:b"), Some(PathBuf::from("/w/brain/./a:b")));
        for remote in [
            "git@host:brain.git",
            "host:srv/brain.git",
            "ssh://host/srv/brain.git",
            "https://host/brain.git",
            "git://127.0.0.1:9418/brain.git",
            "file://host/srv/brain.git",
            "file:///srv/my%20brain.git",
            "",
        ] {
            assert_eq!(p(remote), None, "{remote}");
        }
    }
}
