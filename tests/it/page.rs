//! The live page (`bsi serve`) in a real browser: headless Chromium,
//! driven over its DevTools protocol on 127.0.0.1. The page shows a claim
//! another clone opened after it loaded, a note holding `<script>` stays
//! text, and the keyboard walks the tree in order. `bsi status --html`
//! writes the same page, static.
//!
//! Without Chromium the browser test says so and passes, unless
//! `BSI_REQUIRE_BROWSER` is set (`.ci/run` installs Debian's `chromium`
//! and sets it).
//!
//! The protocol's WebSocket is spoken here in a few lines (text frames,
//! one request at a time): enough for a test, no client crate for it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Brain, scratch};

const NOTE: &str = "<script>alert(1)</script> & more";

/// The browser to drive, or `None` (the test is skipped) when there is
/// none and none is required.
fn chromium() -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser"] {
        if Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return Some(PathBuf::from(name));
        }
    }
    if std::env::var_os("BSI_REQUIRE_BROWSER").is_some() {
        panic!("chromium is not installed: `.ci/run` installs Debian's chromium");
    }
    println!("skipped: chromium is not installed (`.ci/run` installs it)");
    None
}

/// A process killed when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `bsi serve` in `b`, and the address it printed.
fn serve(b: &Brain) -> (Killed, String) {
    let mut child = b
        .command(&["serve"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run bsi serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read the address");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    (Killed(child), url)
}

/// A GET on 127.0.0.1, its status line and body.
fn get(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").expect("an http address");
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut s = TcpStream::connect(host).expect("connect");
    write!(
        s,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    // The head, then as many bytes as it says (a server may keep the
    // connection open).
    let mut r = BufReader::new(s);
    let mut head = Vec::new();
    let mut line = String::new();
    while r.read_line(&mut line).expect("read") > 2 {
        head.push(std::mem::take(&mut line));
    }
    let length = head
        .iter()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    r.read_exact(&mut body).expect("the body");
    (
        head.first().map_or("", |l| l.trim_end()).to_string(),
        String::from_utf8_lossy(&body).into_owned(),
    )
}

/// One DevTools session over a WebSocket.
struct Devtools {
    stream: TcpStream,
    next: u64,
}

impl Devtools {
    fn connect(ws: &str) -> Devtools {
        let rest = ws.strip_prefix("ws://").expect("a ws address");
        let (host, path) = rest.split_once('/').expect("a path");
        let mut stream = TcpStream::connect(host).expect("connect to the browser");
        write!(
            stream,
            "GET /{path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .expect("handshake");
        // The answer's head, byte by byte: the frames follow it.
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            stream
                .read_exact(&mut byte)
                .expect("the handshake's answer");
            head.push(byte[0]);
        }
        assert!(
            head.starts_with(b"HTTP/1.1 101"),
            "{}",
            String::from_utf8_lossy(&head)
        );
        Devtools { stream, next: 0 }
    }

    fn send(&mut self, text: &str) {
        let data = text.as_bytes();
        let mut frame = vec![0x81u8];
        // A client masks its frames; a mask of zeros leaves them as they are.
        match data.len() {
            n if n < 126 => frame.push(0x80 | u8::try_from(n).expect("small")),
            n if n <= usize::from(u16::MAX) => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&u16::try_from(n).expect("u16").to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        frame.extend_from_slice(&[0, 0, 0, 0]);
        frame.extend_from_slice(data);
        self.stream.write_all(&frame).expect("send a frame");
    }

    /// The next text message (its fragments joined; pings skipped).
    fn receive(&mut self) -> String {
        let mut message = Vec::new();
        loop {
            let mut h = [0u8; 2];
            self.stream.read_exact(&mut h).expect("a frame");
            let len = match h[1] & 0x7f {
                126 => {
                    let mut b = [0u8; 2];
                    self.stream.read_exact(&mut b).expect("length");
                    u64::from(u16::from_be_bytes(b))
                }
                127 => {
                    let mut b = [0u8; 8];
                    self.stream.read_exact(&mut b).expect("length");
                    u64::from_be_bytes(b)
                }
                n => u64::from(n),
            };
            let mut data = vec![0u8; usize::try_from(len).expect("a frame that fits")];
            self.stream.read_exact(&mut data).expect("payload");
            let opcode = h[0] & 0x0f;
            if opcode == 0x9 || opcode == 0xa {
                continue;
            }
            message.extend_from_slice(&data);
            if h[0] & 0x80 != 0 {
                return String::from_utf8_lossy(&message).into_owned();
            }
        }
    }

    /// Calls `method` and returns its result.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"id": id, "method": method, "params": params}).to_string());
        loop {
            let m: Value = serde_json::from_str(&self.receive()).expect("a JSON message");
            if m["id"] == id {
                assert!(m.get("error").is_none(), "{method}: {m}");
                return m["result"].clone();
            }
        }
    }

    /// The value of a JavaScript expression in the page.
    fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        r["result"]["value"].clone()
    }

    /// Waits until `expression` is true in the page.
    fn until(&mut self, expression: &str, what: &str) {
        let start = Instant::now();
        while self.eval(expression) != json!(true) {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{what}: never; the page says {}",
                self.eval("document.body ? document.body.innerText : ''")
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// Headless Chromium with its DevTools on 127.0.0.1, and its page's session.
fn browser(exe: &PathBuf) -> (Killed, Devtools, tempfile::TempDir) {
    let profile = scratch("bsi-chromium");
    let mut child = Command::new(exe)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            // No network but 127.0.0.1: none of the browser's own calls.
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            "--window-size=1200,800",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run chromium");
    let stderr = child.stderr.take().expect("stderr");
    let killed = Killed(child);
    let mut port = None;
    let mut lines = BufReader::new(stderr).lines();
    for line in lines.by_ref() {
        let line = line.expect("chromium's stderr");
        if let Some(ws) = line.strip_prefix("DevTools listening on ws://") {
            port = ws.split('/').next().map(String::from);
            break;
        }
    }
    // The rest of what it says, read so it never waits on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    let host = port.expect("chromium said where its DevTools listen");
    let (_, list) = get(&format!("http://{host}/json/list"));
    let targets: Value = serde_json::from_str(&list).expect("the targets, as JSON");
    let ws = targets
        .as_array()
        .and_then(|t| t.iter().find(|t| t["type"] == "page"))
        .and_then(|t| t["webSocketDebuggerUrl"].as_str())
        .unwrap_or_else(|| panic!("no page in {targets}"))
        .to_string();
    (killed, Devtools::connect(&ws), profile)
}

#[test]
fn the_live_page_shows_a_claim_opened_after_it_loaded_keeps_notes_as_text_and_walks_by_keyboard() {
    let Some(exe) = chromium() else {
        return;
    };
    let origin = Brain::new();
    let bare = origin.publish_to_bare();
    let alice = Brain::clone_of(bare.path(), "alice");
    let bob = Brain::clone_of(bare.path(), "bob");
    alice
        .bsi(&[
            "open",
            "agents/",
            "--session",
            "sess-early",
            "--agent",
            "<b>ana</b>",
            "--note",
            NOTE,
        ])
        .ok();
    let (_server, url) = serve(&alice);
    // The server: the page, its script, its state; nothing else, and no
    // write of any kind.
    let (status, html) = get(&url);
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(html.contains("sess-early"), "{html}");
    assert!(!html.contains("<script>alert"), "{html}");
    assert_eq!(get(&format!("{url}nothing")).0, "HTTP/1.1 404 Not Found");
    // What the page polls: the body only for a page that has another
    // version of it.
    let state: Value = serde_json::from_str(&get(&format!("{url}state?v=none")).1).expect("JSON");
    assert!(
        state["body"]
            .as_str()
            .is_some_and(|b| b.contains("sess-early")),
        "{state}"
    );
    let version = state["version"].as_str().expect("a version");
    let same: Value =
        serde_json::from_str(&get(&format!("{url}state?v={version}")).1).expect("JSON");
    assert!(
        same.get("body").is_none() && same["read"].is_string(),
        "{same}"
    );

    let (_chromium, mut page, _profile) = browser(&exe);
    page.call("Page.navigate", json!({"url": url}));
    page.until(
        "document.readyState === 'complete' && !!document.getElementById('page') && document.getElementById('page').textContent.includes('sess-early')",
        "the page loads with the claim made before",
    );
    // The note and the agent name stay text: no element came of them.
    assert_eq!(
        page.eval("document.querySelectorAll('script').length"),
        json!(1)
    );
    assert_eq!(
        page.eval("document.querySelectorAll('main b').length"),
        json!(0)
    );
    assert_eq!(
        page.eval("document.querySelector('.hold .note').textContent"),
        json!(NOTE)
    );
    assert_eq!(
        page.eval("document.querySelector('.hold .agent').textContent"),
        json!("<b>ana</b>")
    );

    // Another clone opens a claim after the page loaded: the page shows it
    // by itself.
    bob.bsi(&[
        "open",
        "projets/",
        "--session",
        "sess-late",
        "--agent",
        "bob",
    ])
    .ok();
    page.until(
        "document.getElementById('page').textContent.includes('sess-late')",
        "the page shows the claim opened after it loaded",
    );
    assert_eq!(
        page.eval("document.querySelector('.hold .note').textContent"),
        json!(NOTE)
    );
    assert!(
        page.eval("document.getElementById('read').textContent")
            .as_str()
            .is_some_and(|t| t.contains("the remote origin last read at")),
        "{}",
        page.eval("document.getElementById('read').textContent")
    );

    // The keyboard: Tab walks the tree's entries in the order they are
    // drawn, each one focusable.
    // (What a closed folder holds is not shown, nor walked.)
    let order = page.eval(
        "(() => { const shown = e => { for (let d = e.parentElement.closest('details'); d; d = d.parentElement.closest('details')) { if (!d.open && !d.firstElementChild.contains(e)) return false; } return true; }; \
         return Array.from(document.querySelectorAll('main summary, main [tabindex=\"0\"]')).filter(shown).map(e => e.textContent.trim().slice(0, 40)); })()",
    );
    let order = order.as_array().expect("the focusable entries").clone();
    assert!(order.len() >= 4, "{order:?}");
    let mut walked = Vec::new();
    for _ in 0..order.len() {
        for kind in ["keyDown", "keyUp"] {
            page.call(
                "Input.dispatchKeyEvent",
                json!({"type": kind, "key": "Tab", "code": "Tab", "windowsVirtualKeyCode": 9}),
            );
        }
        walked.push(page.eval("document.activeElement.textContent.trim().slice(0, 40)"));
    }
    assert_eq!(walked, order);
    // Enter on a folder's summary folds it.
    page.eval("document.querySelector('main summary').focus()");
    let open = "document.querySelector('main details').open";
    assert_eq!(page.eval(open), json!(true));
    for kind in ["keyDown", "keyUp"] {
        page.call(
            "Input.dispatchKeyEvent",
            json!({"type": kind, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": if kind == "keyDown" { "\r" } else { "" }}),
        );
    }
    page.until(&format!("{open} === false"), "Enter folds the folder");
}

/// `bsi status --html`: the same page, static (no script), the note text.
#[test]
fn status_html_writes_the_page_once_with_everything_from_people_escaped() {
    let b = Brain::new();
    b.write("plan.md", "# Plan\n## Goals\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-qm", "plan"]);
    b.bsi(&[
        "open",
        "plan.md#Goals",
        "--session",
        "sess-a",
        "--agent",
        "ana",
        "--note",
        NOTE,
    ])
    .ok();
    b.bsi(&[
        "open",
        "plan.md#Later",
        "--session",
        "sess-b",
        "--agent",
        "bo",
    ])
    .ok();
    let r = b.bsi(&["status", "--html"]);
    let html = &r.ok().stdout;
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(!html.contains("<script"), "{html}");
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; more"),
        "{html}"
    );
    // The tree: the file, its sections, the one held and the reserved one.
    for part in [
        "plan.md",
        ">Goals<",
        ">Later<",
        "reserved, not written yet",
        "sess-a",
        "sess-b",
    ] {
        assert!(html.contains(part), "{part} missing: {html}");
    }
    // The latest writes, a row each.
    assert_eq!(html.matches("<td>open</td>").count(), 2, "{html}");
}
