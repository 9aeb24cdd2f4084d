//! A TCP proxy that delays every byte by a fixed time in each direction: a
//! slow link on loopback, for the scale benchmark (`bench/scale.sh`), where
//! the kernel has no `netem`.
//!
//! ```text
//! cargo run --release --example delay_proxy -- LISTEN TARGET DELAY_MS [COUNTS]
//! cargo run --release --example delay_proxy -- 127.0.0.1:9419 127.0.0.1:9418 30
//! cargo run --release --example delay_proxy -- 127.0.0.1:9420-9439 127.0.0.1:9418 30 counts.log
//! ```
//!
//! Data is delayed, not throttled: each chunk read is written out `DELAY_MS`
//! after it arrived, so a round trip costs twice the delay whatever the
//! volume. It serves connections until it is killed.
//!
//! `LISTEN` may be a range of ports (`HOST:FIRST-LAST`), one listener each,
//! so that each client of a benchmark has a port of its own. With `COUNTS`,
//! each connection, when it ends, appends a line `PORT REQUESTS` to that
//! file: the port it came in on and its requests — the runs of bytes the
//! client sent with no answer in between, each one round trip over the
//! link (the first included; the connection's own handshake is not
//! counted).

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

/// A connection's requests, counted as its client sends after an answer.
struct Turns {
    /// The last bytes went from the server to the client (or nothing yet).
    answered: AtomicBool,
    requests: AtomicU64,
}

impl Turns {
    fn new() -> Turns {
        Turns {
            answered: AtomicBool::new(true),
            requests: AtomicU64::new(0),
        }
    }

    /// Bytes went one way: from the client (`up`) or to it.
    fn saw(&self, up: bool) {
        if up {
            if self.answered.swap(false, Ordering::SeqCst) {
                self.requests.fetch_add(1, Ordering::SeqCst);
            }
        } else {
            self.answered.store(true, Ordering::SeqCst);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (listen, target, delay, counts) = match args.as_slice() {
        [l, t, d] => (l, t, d, None),
        [l, t, d, c] => (l, t, d, Some(c)),
        _ => {
            eprintln!(
                "usage: delay_proxy LISTEN_ADDR[-LAST_PORT] TARGET_ADDR DELAY_MS [COUNTS_FILE]"
            );
            std::process::exit(2);
        }
    };
    let Ok(delay) = delay.parse::<u64>().map(Duration::from_millis) else {
        eprintln!("delay_proxy: DELAY_MS must be a whole number of milliseconds");
        std::process::exit(2);
    };
    let counts: Option<Arc<Mutex<File>>> =
        counts.map(
            |path| match OpenOptions::new().create(true).append(true).open(path) {
                Ok(f) => Arc::new(Mutex::new(f)),
                Err(e) => {
                    eprintln!("delay_proxy: cannot open {path}: {e}");
                    std::process::exit(1);
                }
            },
        );
    let Some(ports) = ports(listen) else {
        eprintln!("delay_proxy: LISTEN_ADDR is HOST:PORT or HOST:FIRST-LAST, not {listen}");
        std::process::exit(2);
    };
    let mut listeners = Vec::new();
    for (host, port) in ports {
        match TcpListener::bind((host.as_str(), port)) {
            Ok(l) => listeners.push((port, l)),
            Err(e) => {
                eprintln!("delay_proxy: cannot listen on {host}:{port}: {e}");
                std::process::exit(1);
            }
        }
    }
    let serving: Vec<_> = listeners
        .into_iter()
        .map(|(port, listener)| {
            let (target, counts) = (target.clone(), counts.clone());
            thread::spawn(move || serve(port, &listener, &target, delay, counts.as_ref()))
        })
        .collect();
    for s in serving {
        let _ = s.join();
    }
}

/// `HOST:PORT` or `HOST:FIRST-LAST`, as (host, port) pairs.
fn ports(listen: &str) -> Option<Vec<(String, u16)>> {
    let (host, ports) = listen.rsplit_once(':')?;
    let (first, last) = ports.split_once('-').unwrap_or((ports, ports));
    let (first, last) = (first.parse::<u16>().ok()?, last.parse::<u16>().ok()?);
    (first <= last).then(|| (first..=last).map(|p| (host.to_string(), p)).collect())
}

fn serve(
    port: u16,
    listener: &TcpListener,
    target: &str,
    delay: Duration,
    counts: Option<&Arc<Mutex<File>>>,
) {
    for client in listener.incoming().flatten() {
        let target = target.to_string();
        let counts = counts.cloned();
        thread::spawn(move || {
            if let Some(server) = connect(&target) {
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let turns = Arc::new(Turns::new());
                relay(client, server, delay, &turns);
                if let Some(counts) = counts
                    && let Ok(mut f) = counts.lock()
                {
                    let _ = writeln!(f, "{port} {}", turns.requests.load(Ordering::SeqCst));
                }
            }
        });
    }
}

/// A connection to `target`, tried again every few milliseconds while the
/// server does not answer, for up to ten seconds. `git daemon` listens with
/// a backlog of 5: when twenty clients connect at once, the kernel drops
/// the connections its queue cannot hold, and a plain connect waits for
/// TCP's first retry, one second later. That second is the server's queue,
/// not the link or the protocol; a server of many machines listens with a
/// longer one.
fn connect(target: &str) -> Option<TcpStream> {
    use std::net::ToSocketAddrs;
    let addr = target.to_socket_addrs().ok()?.next()?;
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(20)) {
            Ok(s) => return Some(s),
            Err(_) if Instant::now() < until => {}
            Err(_) => return None,
        }
    }
}

/// Pumps both directions until both ends are closed.
fn relay(a: TcpStream, b: TcpStream, delay: Duration, turns: &Arc<Turns>) {
    let (Ok(a2), Ok(b2)) = (a.try_clone(), b.try_clone()) else {
        return;
    };
    let up_turns = Arc::clone(turns);
    let up = thread::spawn(move || pump(a, b2, delay, &up_turns, true));
    pump(b, a2, delay, turns, false);
    let _ = up.join();
}

/// Copies `from` to `to`, each chunk `delay` after it was read; `up`: from
/// the client to the server.
fn pump(mut from: TcpStream, mut to: TcpStream, delay: Duration, turns: &Turns, up: bool) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let writer = thread::spawn(move || {
        for (due, chunk) in rx {
            let now = Instant::now();
            if due > now {
                thread::sleep(due - now);
            }
            if chunk.is_empty() || to.write_all(&chunk).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => {
                let _ = tx.send((Instant::now() + delay, Vec::new()));
                break;
            }
            Ok(n) => {
                turns.saw(up);
                if tx
                    .send((Instant::now() + delay, buf[..n].to_vec()))
                    .is_err()
                {
                    break;
                }
            }
        }
    }
    drop(tx);
    let _ = writer.join();
}
