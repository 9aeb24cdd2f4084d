//! `bsi serve`: the live page of the brain on 127.0.0.1. Read only: a
//! small HTTP/1.1 responder on the standard library's `TcpListener`
//! answers `GET /` (the page), `GET /page.js` (its script) and `GET
//! /state?v=VERSION` (what the script polls: the read line, the body's
//! version, and the body when the page has another version); this
//! thread reads the registry again every second and the remote every 3s,
//! as `status --watch` does, and keeps what it answers current.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::Ctx;
use crate::cli::ServeArgs;
use crate::page::{self, Reading};
use bsi_core::api;
use bsi_core::api::publish::{self, Freshness};
use bsi_core::error::{Error, Result};

/// How often the remote is asked.
const FETCH_EVERY: Duration = Duration::from_secs(3);

/// How often the clone's registry and work tree are read again.
const TICK: Duration = Duration::from_secs(1);

/// What the server answers, kept current by the reading thread.
#[derive(Default)]
struct Served {
    document: String,
    /// `/state` for a page that has the current version: no body.
    same: String,
    /// `/state` for any other: with the body.
    changed: String,
    version: String,
}

pub(crate) fn run(ctx: &Ctx, args: &ServeArgs) -> Result<u8> {
    let (brain, settings) = ctx.open()?;
    let remote = settings.remote()?;
    let listener = TcpListener::bind(("127.0.0.1", args.port))
        .map_err(|e| Error::io(format!("could not listen on 127.0.0.1:{}", args.port), e))?;
    let port = listener
        .local_addr()
        .map_err(|e| Error::io("could not read the address listened on", e))?
        .port();
    let served = Arc::new(Mutex::new(Served::default()));
    let start = Instant::now();
    let now = || {
        ctx.now
            + chrono::Duration::from_std(start.elapsed())
                .unwrap_or_else(|_| chrono::Duration::zero())
    };
    let mut reading = Reading {
        brain: brain
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        remote: remote.as_ref().map(|r| r.name.clone()),
        offline: args.offline,
        ..Reading::default()
    };
    let mut fetched: Option<Instant> = None;
    let mut refresh = |reading: &mut Reading| -> Result<()> {
        let at = now();
        let due =
            remote.is_some() && !args.offline && fetched.is_none_or(|t| t.elapsed() >= FETCH_EVERY);
        let view = if due {
            let (view, fresh) = publish::read(&brain, &settings, at, false)?;
            fetched = Some(Instant::now());
            if let Freshness::Unreachable(why) = fresh {
                reading.unreachable = Some(why);
            } else {
                reading.unreachable = None;
                reading.remote_read = Some(at);
            }
            view
        } else {
            brain.view(remote.as_ref())?
        };
        let p = api::views::page(&brain, &view, at);
        let body = page::body(&p);
        let version = page::version(&body);
        let read = page::read_line(&p, reading);
        let next = Served {
            document: page::document(&p, reading, true),
            same: page::state_json(&read, &version, None),
            changed: page::state_json(&read, &version, Some(&body)),
            version,
        };
        *served.lock().unwrap_or_else(PoisonError::into_inner) = next;
        Ok(())
    };
    refresh(&mut reading)?;
    let url = format!("http://127.0.0.1:{port}/");
    ctx.out().raw(
        format!("Serving the live page of the brain at {url} (read only; Ctrl-C ends it).\n")
            .as_bytes(),
    )?;
    let shared = Arc::clone(&served);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || answer(stream, &shared, port));
        }
    });
    loop {
        std::thread::sleep(TICK);
        // A read that failed (a remote gone mid-fetch, a registry being
        // written) leaves the last page up; the next tick reads again.
        if let Err(e) = refresh(&mut reading) {
            reading.unreachable = Some(e.to_string());
        }
    }
}

/// The headers every answer carries: nothing cached, nothing sniffed, no
/// framing, and only this page's own script and requests.
const HEADERS: &str = "Cache-Control: no-store\r\n\
    X-Content-Type-Options: nosniff\r\n\
    Referrer-Policy: no-referrer\r\n\
    Content-Security-Policy: default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'\r\n\
    Connection: close\r\n";

/// Answers one request on `stream`.
fn answer(mut stream: TcpStream, served: &Mutex<Served>, port: u16) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = Vec::with_capacity(2048);
    let mut chunk = [0u8; 2048];
    // The request line and headers; a body, if any, is not read.
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let text = String::from_utf8_lossy(&buf);
    let (status, kind, body) = respond(&text, served, port);
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n{HEADERS}\r\n",
        body.len()
    );
    let is_head = text.starts_with("HEAD ");
    let _ = stream.write_all(head.as_bytes());
    if !is_head {
        let _ = stream.write_all(body.as_bytes());
    }
    let _ = stream.flush();
}

/// The status, content type and body for the request `text`.
fn respond(text: &str, served: &Mutex<Served>, port: u16) -> (&'static str, &'static str, String) {
    const PLAIN: &str = "text/plain; charset=utf-8";
    let mut words = text.lines().next().unwrap_or("").split(' ');
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    // Only this machine's names for it: a page of another site that
    // resolves its own name to 127.0.0.1 gets nothing.
    let host = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("host"))
        .map(|(_, v)| v.trim().to_ascii_lowercase());
    let ours = [format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    if !host.is_some_and(|h| ours.contains(&h)) {
        return (
            "421 Misdirected Request",
            PLAIN,
            "Not this server's name.\n".into(),
        );
    }
    if method != "GET" && method != "HEAD" {
        return ("405 Method Not Allowed", PLAIN, "Read only.\n".into());
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let have = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("v="))
        .unwrap_or("");
    let served = served.lock().unwrap_or_else(PoisonError::into_inner);
    match path {
        "/" => (
            "200 OK",
            "text/html; charset=utf-8",
            served.document.clone(),
        ),
        "/state" => (
            "200 OK",
            "application/json; charset=utf-8",
            if have == served.version {
                served.same.clone()
            } else {
                served.changed.clone()
            },
        ),
        "/page.js" => (
            "200 OK",
            "text/javascript; charset=utf-8",
            page::SCRIPT.to_string(),
        ),
        _ => ("404 Not Found", PLAIN, "Not found.\n".into()),
    }
}
