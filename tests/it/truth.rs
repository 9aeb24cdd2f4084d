//! One truth in every layout: what two machines did apart, merged by rows
//! when they meet again, says what really happened — a later fact wins, a
//! claim ends once — and what git says of a remote is read for what it is.

use std::path::Path;
use std::process::Command;

use tempfile::TempDir;

use crate::common::{Brain, Run, clean_env};
use crate::remote::Net;

/// The body rows of the table under `heading` in a registry text.
fn rows(text: &str, heading: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    let mut seen_delim = false;
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            inside = h.trim() == heading;
            seen_delim = false;
            continue;
        }
        if inside && line.starts_with('|') {
            if line.starts_with("|-") {
                seen_delim = true;
            } else if seen_delim {
                out.push(line.to_string());
            }
        }
    }
    out
}

fn active(text: &str) -> Vec<String> {
    rows(text, "Claims actifs")
}

fn stale(text: &str) -> Vec<String> {
    rows(text, "Claims stale — contrôle requis")
}

fn history(text: &str) -> Vec<String> {
    rows(text, "Historique")
}

fn at(m: &Brain, when: &str, args: &[&str]) -> Run {
    m.bsi_env(args, &[("BSI_NOW", when)])
}

#[test]
fn an_offline_watchdog_does_not_undo_a_renewal_published_meanwhile() {
    let n = Net::new();
    // B opens a 2h claim at 09:00 (until 11:00); A reads it.
    at(
        &n.b,
        "2026-03-14T09:00:00Z",
        &["open", "agents/", "--session", "s1", "--ttl", "2h"],
    )
    .ok();
    at(&n.a, "2026-03-14T09:05:00Z", &["status"]).ok();
    // B renews it at 10:50, for 4h (until 14:50), and publishes.
    at(
        &n.b,
        "2026-03-14T10:50:00Z",
        &["renew", "s1", "--ttl", "4h"],
    )
    .ok();
    assert!(n.registry().contains("2026-03-14 14:50 +00:00"));
    // A, offline, runs the watchdog at 11:10: by what it knows, the claim
    // expired at 11:00.
    let away = n.away();
    at(&n.a, "2026-03-14T11:10:00Z", &["watchdog"]).code(4);
    assert_eq!(stale(&n.a.registry()).len(), 1);
    n.back(&away);
    // A syncs at 11:15: the renewal made the stale mark moot.
    at(&n.a, "2026-03-14T11:15:00Z", &["sync"]).ok();
    for (what, text) in [("remote", n.registry()), ("a", n.a.registry())] {
        let act = active(&text);
        assert_eq!(act.len(), 1, "{what}:\n{text}");
        assert!(
            act[0].starts_with("| s1 | agents/ |") && act[0].contains("2026-03-14 14:50 +00:00"),
            "{what}:\n{text}"
        );
        assert!(stale(&text).is_empty(), "{what}:\n{text}");
    }
    // The claim is B's to renew again.
    at(
        &n.b,
        "2026-03-14T11:20:00Z",
        &["renew", "s1", "--ttl", "5h"],
    )
    .ok();
    assert!(n.registry().contains("2026-03-14 16:20 +00:00"));
}

#[test]
fn a_stale_mark_re_judged_on_the_renewed_expiry_stands_when_that_passed_too() {
    let n = Net::new();
    at(
        &n.b,
        "2026-03-14T09:00:00Z",
        &["open", "agents/", "--session", "s1", "--ttl", "2h"],
    )
    .ok();
    at(&n.a, "2026-03-14T09:05:00Z", &["status"]).ok();
    // Renewed until 12:00 only.
    at(
        &n.b,
        "2026-03-14T10:50:00Z",
        &["renew", "s1", "--ttl", "70m"],
    )
    .ok();
    let away = n.away();
    at(&n.a, "2026-03-14T11:10:00Z", &["watchdog"]).code(4);
    n.back(&away);
    // Synced at 12:30: the renewed expiry passed as well. The claim is
    // stale, with the expiry it really had.
    at(&n.a, "2026-03-14T12:30:00Z", &["sync"]).ok();
    let text = n.registry();
    assert!(active(&text).is_empty(), "{text}");
    let st = stale(&text);
    assert_eq!(st.len(), 1, "{text}");
    assert!(
        st[0].starts_with("| s1 | agents/ |")
            && st[0].contains("2026-03-14 12:00 +00:00")
            && st[0].contains("TTL expiré sans fermeture"),
        "{text}"
    );
}

#[test]
fn a_claim_closed_on_one_machine_and_force_released_on_another_ends_once() {
    let n = Net::new();
    at(
        &n.b,
        "2026-03-14T09:30:00Z",
        &["open", "agents/", "--session", "s1"],
    )
    .ok();
    at(&n.a, "2026-03-14T09:35:00Z", &["status"]).ok();
    // A closes the claim offline; B's person force-releases it, published.
    let away = n.away();
    at(&n.a, "2026-03-14T10:00:00Z", &["close", "s1"]).code(7);
    n.back(&away);
    at(
        &n.b,
        "2026-03-14T10:05:00Z",
        &["release", "s1", "--confirm", "--force"],
    )
    .ok();
    // A syncs: the ending published first stands, and A is told its own
    // was not kept.
    let s = at(&n.a, "2026-03-14T10:10:00Z", &["sync", "--json"]);
    s.ok();
    let j = s.json();
    assert_eq!(j["superseded"][0]["session"], "s1", "{j}");
    assert_eq!(j["superseded"][0]["dropped"], "completed", "{j}");
    assert_eq!(j["superseded"][0]["kept"], "force-released", "{j}");
    assert!(
        s.stderr.contains("s1 agents/")
            && s.stderr.contains("completed")
            && s.stderr.contains("force-released"),
        "{}",
        s.stderr
    );
    for (what, text) in [("remote", n.registry()), ("a", n.a.registry())] {
        let ends: Vec<String> = history(&text)
            .into_iter()
            .filter(|r| r.starts_with("| s1 | agents/ |"))
            .collect();
        assert_eq!(ends.len(), 1, "{what}:\n{text}");
        assert!(ends[0].contains("| force-released |"), "{what}: {ends:?}");
        assert!(active(&text).is_empty() && stale(&text).is_empty());
    }
    // The journal and the history tell the same story.
    let log = at(&n.a, "2026-03-14T10:11:00Z", &["log", "--json"]);
    log.ok();
    let actions: Vec<String> = log
        .json()
        .as_array()
        .expect("entries")
        .iter()
        .filter_map(|e| e["action"].as_str().map(str::to_string))
        .collect();
    assert!(
        actions.contains(&"force-release".to_string()),
        "{actions:?}"
    );
    assert!(!actions.contains(&"close".to_string()), "{actions:?}");
}

/// A process table for `BSI_PROC`: `self`, the `mounts` line of `/proc`
/// with `options`, and for `pid` an entry whose `stat` is unreadable when
/// `unreadable`, none otherwise.
fn fake_proc(options: &str, pid: &str, unreadable: bool) -> TempDir {
    let dir = crate::common::scratch("bsi-proc");
    let p = dir.path();
    std::fs::create_dir_all(p.join("self")).expect("mkdir");
    std::fs::write(p.join("mounts"), format!("proc /proc proc {options} 0 0\n")).expect("mounts");
    if unreadable {
        // A `stat` that cannot be read as a file.
        std::fs::create_dir_all(p.join(pid).join("stat")).expect("mkdir");
    }
    dir
}

#[test]
fn a_lock_whose_writer_cannot_be_proven_gone_is_reported_never_removed() {
    let b = Brain::new();
    let lock = b.path().join(".git/refs/heads/brain-index.lock");
    let record = "busy write\npid 4000000000\nstart 1\nuid 4000000001\n";
    let cases = [
        // Its /proc entry cannot be read (another user's, hidepid=1, ...).
        ("unreadable", fake_proc("rw,relatime", "4000000000", true)),
        // hidepid=2 hides another user's live process: missing is no proof.
        (
            "hidden",
            fake_proc("rw,relatime,hidepid=2", "4000000000", false),
        ),
        (
            "invisible",
            fake_proc("rw,hidepid=invisible", "4000000000", false),
        ),
    ];
    for (what, proc) in &cases {
        std::fs::write(b.path().join(".git/bsi/lock"), record).expect("record");
        std::fs::write(&lock, "").expect("lock");
        let proc = proc.path().to_str().expect("utf-8");
        let r = b.bsi_env(
            &["open", "projets/", "--session", "s2"],
            &[("BSI_PROC", proc)],
        );
        assert!(
            lock.exists(),
            "{what}: a lock was removed without proof\n{}",
            r.stderr
        );
        r.code(1).stderr_has(
            "note: left 1 lock file(s) on the registry branch in place: the bsi that was writing (pid 4000000000)",
        );
        r.stderr_has(&format!("`rm {}`", lock.display()));
        assert!(b.active().is_empty(), "{what}");
    }
    // The same table, and the writer is proven gone: its entry is missing
    // and the table hides nothing, or it was this user's.
    let uid = std::fs::metadata("/proc/self").map(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid()
    });
    for (what, proc, record) in [
        (
            "missing",
            fake_proc("rw", "4000000000", false),
            record.to_string(),
        ),
        (
            "own, hidden",
            fake_proc("rw,hidepid=2", "4000000000", false),
            format!(
                "busy write\npid 4000000000\nstart 1\nuid {}\n",
                uid.expect("uid")
            ),
        ),
    ] {
        std::fs::write(b.path().join(".git/bsi/lock"), record).expect("record");
        std::fs::write(&lock, "").expect("lock");
        let proc = proc.path().to_str().expect("utf-8");
        b.bsi_env(
            &["open", "projets/", "--session", "s2"],
            &[("BSI_PROC", proc)],
        )
        .ok()
        .stderr_has("note: removed 1 lock file(s) a killed bsi left on the registry branch");
        assert!(!lock.exists(), "{what}");
        b.bsi(&["close", "s2"]).ok();
    }
}

/// The registry of `text` with `row` added to its active table.
fn with_active_row(text: &str, row: &str) -> String {
    let head = "|---------|-------|--------|-------|-----------|-----------|------|\n";
    text.replacen(head, &format!("{head}{row}\n"), 1)
}

#[test]
fn a_broken_row_on_the_remote_is_named_where_it_is() {
    let n = Net::new();
    // Machine a has its own intact local branch.
    at(
        &n.a,
        "2026-03-14T09:30:00Z",
        &["open", "notes/", "--session", "sa"],
    )
    .ok();
    // Someone pushes a registry with a broken row (a file scope said to be
    // a directory) to the remote's registry branch.
    let o = &n._origin;
    o.git(&["fetch", "-q", "origin"]);
    o.git(&[
        "update-ref",
        "refs/heads/brain-index",
        "refs/remotes/origin/brain-index",
    ]);
    let broken = with_active_row(
        &o.registry(),
        "| s9 | agents/alice.md | dir | x | 2026-03-14 09:00 +00:00 | 2026-03-14 11:00 +00:00 |  |",
    );
    let line = broken
        .lines()
        .position(|l| l.starts_with("| s9 |"))
        .expect("the row")
        + 1;
    o.commit_registry(&broken, "by hand");
    o.git(&["push", "-q", "origin", "brain-index"]);
    // Machine a fetches it.
    let r = n.a.bsi(&["status"]);
    r.code(5)
        .stderr_has(&format!(
            "error: origin/brain-index:BRAIN-INDEX.md: line {line}:"
        ))
        .stderr_has("the broken copy is origin's (origin/brain-index), not this clone's branch")
        .stderr_has("(the fix is published only if nobody wrote meanwhile): `bsi repair`");
    assert!(!r.stderr.contains("error: brain-index:"), "{}", r.stderr);
    // The mend the hint gives works: the remote's copy is repaired.
    let fixed = crate::common::scratch("bsi-fix");
    let file = fixed.path().join("fixed.md");
    std::fs::write(
        &file,
        broken.replace("| agents/alice.md | dir |", "| agents/alice.md | file |"),
    )
    .expect("write");
    n.a.bsi(&["repair", "--from", file.to_str().expect("utf-8")])
        .ok();
    assert!(n.registry().contains("| s9 | agents/alice.md | file |"));
    n.a.bsi(&["status"]).ok().stdout_has("s9");
    // A broken row on the local branch is named there.
    let local = with_active_row(
        &n.a.registry(),
        "| s8 | agents/bob.md | dir | x | 2026-03-14 09:00 +00:00 | 2026-03-14 11:00 +00:00 |  |",
    );
    n.a.commit_registry(&local, "by hand, locally");
    let r = n.a.bsi(&["status", "--offline"]);
    r.code(5)
        .stderr_has("error: brain-index:BRAIN-INDEX.md: line ")
        .stderr_has("open it in your editor and fix that line (the fix is published only if nobody wrote meanwhile): `bsi repair`");
    assert!(!r.stderr.contains("origin"), "{}", r.stderr);
}

/// A server on 127.0.0.1 that accepts connections and never answers. It
/// stops when dropped, or by itself after two minutes.
pub(crate) struct Silent {
    pub(crate) port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Silent {
    pub(crate) fn start() -> Silent {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let until = std::time::Instant::now() + std::time::Duration::from_secs(120);
            let mut held = Vec::new();
            while !flag.load(Ordering::Relaxed) && std::time::Instant::now() < until {
                match listener.accept() {
                    Ok((conn, _)) => held.push(conn),
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
                }
            }
        });
        Silent {
            port,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn a_remote_that_never_answers_is_given_up_after_the_connection_timeout() {
    let server = Silent::start();
    for url in [
        format!("git://127.0.0.1:{}/brain.git", server.port),
        format!("http://127.0.0.1:{}/brain.git", server.port),
    ] {
        let b = Brain::new();
        b.git(&["remote", "add", "origin", &url]);
        // A race budget longer than the connection's: the connection gives up first.
        b.write(".bsi.toml", "connection_timeout = \"1s\"\n");
        let r = b.bsi_env(
            &["open", "agents/", "--session", "s1"],
            &[("BSI_PUBLISH_TIMEOUT", "20s")],
        );
        r.code(7)
            .stderr_has("origin/brain-index could not be reached (git gave no answer within 1 s)");
        assert_eq!(active(&b.registry()).len(), 1, "{url}: kept locally");
    }
}

/// Whether process `pid` is gone (or a zombie nobody has reaped yet).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_git_killed_for_time_takes_its_ssh_with_it() {
    let b = Brain::new();
    let dir = crate::common::scratch("bsi-ssh");
    let pids = dir.path().join("pids");
    let script = dir.path().join("ssh");
    // An ssh that records its pid and then hangs, as over a dead link (it
    // ends by itself after a minute).
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho $$ >> '{}'\nexec sleep 60\n",
            pids.display()
        ),
    )
    .expect("script");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    b.git(&["remote", "add", "origin", "ssh://brain.invalid/brain.git"]);
    // On a loaded machine git may not reach its ssh within a second: the
    // time is given again, longer, until the ssh has run.
    let mut text = String::new();
    for limit in ["1s", "4s", "15s"] {
        let r = b.bsi_env(
            &["open", "agents/", "--session", "s1"],
            &[
                ("GIT_SSH_COMMAND", script.to_str().expect("utf-8")),
                ("BSI_CONNECTION_TIMEOUT", limit),
                ("BSI_PUBLISH_TIMEOUT", "30s"),
            ],
        );
        r.code(7).stderr_has("git gave no answer within ");
        text = std::fs::read_to_string(&pids).unwrap_or_default();
        if !text.trim().is_empty() {
            break;
        }
    }
    let started: Vec<u32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    assert!(!started.is_empty());
    // A killed process may take a moment to be reaped.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !started.iter().all(|&p| gone(p)) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let orphans: Vec<u32> = started.into_iter().filter(|&p| !gone(p)).collect();
    assert!(orphans.is_empty(), "ssh left running: {orphans:?}");
}

/// What the test HTTP server answers to pushes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Gate {
    /// 403 Forbidden to anything of receive-pack.
    Forbidden,
    /// 401 with a Basic challenge to everything: credentials wanted.
    Unauthorized,
}

/// A smart-HTTP git server on 127.0.0.1: `git http-backend` behind a
/// minimal HTTP/1.1 loop, one request per connection, with `gate` in
/// front. It stops when dropped, or by itself after two minutes.
struct HttpRemote {
    url: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl HttpRemote {
    fn serve(root: &Path, gate: Gate) -> HttpRemote {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let root = root.to_path_buf();
        let thread = std::thread::spawn(move || {
            let until = std::time::Instant::now() + std::time::Duration::from_secs(120);
            while !flag.load(Ordering::Relaxed) && std::time::Instant::now() < until {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let _ = answer(conn, &root, gate);
                    }
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
                }
            }
        });
        HttpRemote {
            url: format!("http://127.0.0.1:{port}/brain.git"),
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for HttpRemote {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Answers one HTTP request on `conn`.
fn answer(mut conn: std::net::TcpStream, root: &Path, gate: Gate) -> std::io::Result<()> {
    use std::io::{BufRead, BufReader, Read, Write};
    conn.set_nonblocking(false)?;
    conn.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (method, target) = (
        parts.next().unwrap_or("").to_string(),
        parts.next().unwrap_or("").to_string(),
    );
    let mut headers: Vec<(String, String)> = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let header = |k: &str| headers.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let mut body = Vec::new();
    if let Some(n) = header("content-length").and_then(|n| n.parse::<usize>().ok()) {
        body.resize(n, 0);
        reader.read_exact(&mut body)?;
    } else if header("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    }
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let refused = match gate {
        Gate::Forbidden if target.contains("git-receive-pack") => Some(
            "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 31\r\nConnection: close\r\n\r\npushes to this remote are off\r\n",
        ),
        Gate::Unauthorized => Some(
            "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"brain\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        ),
        Gate::Forbidden => None,
    };
    if let Some(r) = refused {
        return conn.write_all(r.as_bytes());
    }
    let mut cmd = Command::new("git");
    clean_env(&mut cmd, root);
    cmd.arg("http-backend")
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", &method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("CONTENT_TYPE", header("content-type").unwrap_or_default())
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    if let Some(enc) = header("content-encoding") {
        cmd.env("HTTP_CONTENT_ENCODING", enc);
    }
    if let Some(p) = header("git-protocol") {
        cmd.env("GIT_PROTOCOL", p);
    }
    let mut child = cmd.spawn()?;
    let mut stdin = child.stdin.take().expect("stdin");
    let feed = std::thread::spawn(move || stdin.write_all(&body));
    let out = child.wait_with_output()?;
    let _ = feed.join();
    // The CGI's headers, then its body.
    let split = out
        .stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| {
            out.stdout
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|i| (i, 2))
        });
    let (head, rest) = match split {
        Some((i, n)) => (
            String::from_utf8_lossy(&out.stdout[..i]).into_owned(),
            &out.stdout[i + n..],
        ),
        None => (String::new(), &out.stdout[..]),
    };
    let mut status = "200 OK".to_string();
    let mut response = String::new();
    for h in head.lines() {
        match h.split_once(':') {
            Some((k, v)) if k.eq_ignore_ascii_case("status") => status = v.trim().to_string(),
            Some(_) => {
                response.push_str(h.trim_end());
                response.push_str("\r\n");
            }
            None => {}
        }
    }
    conn.write_all(
        format!(
            "HTTP/1.1 {status}\r\n{response}Content-Length: {}\r\nConnection: close\r\n\r\n",
            rest.len()
        )
        .as_bytes(),
    )?;
    conn.write_all(rest)
}

#[test]
fn a_push_refused_or_asking_for_credentials_is_said_as_such() {
    for gate in [Gate::Forbidden, Gate::Unauthorized] {
        let n = Net::new();
        // The bare remote served over smart HTTP, at /brain.git.
        let served = crate::common::scratch("bsi-http");
        std::fs::rename(n.bare.path(), served.path().join("brain.git")).expect("move");
        let server = HttpRemote::serve(served.path(), gate);
        n.a.git(&["remote", "set-url", "origin", &server.url]);
        if gate == Gate::Forbidden {
            // Reading works: the remote only refuses pushes.
            n.a.bsi(&["status"]).ok();
        }
        let branch = |m: &Brain| {
            m.git_run(&["rev-parse", "-q", "--verify", "refs/heads/brain-index"])
                .stdout
        };
        let before = (n.a.registry(), branch(&n.a));
        let r = n.a.bsi(&["open", "agents/", "--session", "sa"]);
        let said = match gate {
            // The remote's words, then git's.
            Gate::Forbidden => "pushes to this remote are off / fatal: unable to access",
            Gate::Unauthorized => "could not read Username",
        };
        r.code(1)
            .stderr_has("error: origin/brain-index refused bsi's git")
            .stderr_has(said)
            .stderr_has("hint: ");
        assert!(!r.stderr.contains("could not be reached"), "{}", r.stderr);
        assert!(!r.stderr.contains("NOT PUBLISHED"), "{}", r.stderr);
        // Nothing left pending that could never publish.
        assert_eq!((n.a.registry(), branch(&n.a)), before);
        let st = n.a.bsi(&["status", "--offline"]);
        assert!(!st.stdout.contains("NOT PUBLISHED"), "{}", st.stdout);
        drop(server);
    }
}

/// Runs git in the bare repository `bare`.
fn git_bare(bare: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new("git");
    clean_env(&mut cmd, bare);
    let r = Run::from_output(
        cmd.arg("--git-dir")
            .arg(bare)
            .args(args)
            .output()
            .expect("git"),
    );
    r.ok();
    r.stdout
}

#[test]
fn a_registry_moved_back_on_the_remote_frees_no_claim_and_sync_puts_it_back() {
    let m = crate::common::Machines::new();
    m.b.bsi(&["hook", "install"]).ok();
    let bare = m.bare.path();
    let before = git_bare(bare, &["rev-parse", "refs/heads/brain-index"]);
    let before = before.trim();
    // s1 claims Goals from a; b reads it.
    m.a.bsi(&["open", "projets/plan.md#Goals", "--session", "s1"])
        .ok();
    m.b.git(&["fetch", "-q", "origin"]);
    m.b.bsi(&["status"]).ok().stdout_has("s1");
    // The remote's registry is put back to before the claim (a forced push
    // from an old clone, a restored backup); b's next fetch takes it.
    git_bare(bare, &["update-ref", "refs/heads/brain-index", before]);
    m.b.git(&["fetch", "-q", "origin"]);
    assert_eq!(
        m.b.git(&["rev-parse", "refs/remotes/origin/brain-index"])
            .trim(),
        before
    );
    let warned = "origin/brain-index moved back";
    // A commit inside Goals is refused, with the warning.
    let plan = m.b.read("projets/plan.md");
    m.b.write(
        "projets/plan.md",
        &plan.replacen("goal text", "goal text by b", 1),
    );
    m.b.git(&["add", "projets/plan.md"]);
    let head = m.b.git(&["rev-parse", "HEAD"]);
    let r = m.b.git_run(&["commit", "-q", "-m", "goals"]);
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has("inside an active claim of session s1")
        .stderr_has(warned);
    assert_eq!(m.b.git(&["rev-parse", "HEAD"]), head);
    m.b.git(&["reset", "-q", "--hard"]);
    // status keeps the claim and says why.
    let r = m.b.bsi(&["status"]);
    r.ok()
        .stdout_has("projets/plan.md#Goals")
        .stderr_has(warned);
    assert!(!r.stdout.contains("whole brain is free"), "{}", r.stdout);
    // open does not grant the section to another.
    let r =
        m.b.bsi(&["open", "projets/plan.md#Goals", "--session", "s2"]);
    assert_ne!(r.code, 0, "{r:?}");
    r.stderr_has(warned);
    // The warning names the step; run as printed, it publishes the claim
    // again.
    let step = r
        .stderr
        .lines()
        .find(|l| l.contains(warned))
        .and_then(|l| l.split('`').nth(1))
        .expect("a step")
        .to_string();
    assert_eq!(step, "bsi sync");
    m.b.bsi(&["sync"]).ok();
    let text = git_bare(bare, &["show", "refs/heads/brain-index:BRAIN-INDEX.md"]);
    assert!(
        text.contains("projets/plan.md#Goals") && text.contains("s1"),
        "{text}"
    );
    // Once the remote has it again, nothing more is said, here or on a.
    let r = m.b.bsi(&["status"]);
    assert!(!r.stderr.contains(warned), "{}", r.stderr);
    m.a.git(&["fetch", "-q", "origin"]);
    let r = m.a.bsi(&["status"]);
    r.ok().stdout_has("s1");
    assert!(!r.stderr.contains(warned), "{}", r.stderr);
}
