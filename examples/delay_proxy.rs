//! A TCP proxy that delays every byte by a fixed time in each direction: a
//! slow link on loopback, for the scale benchmark (`bench/scale.sh`), where
//! the kernel has no `netem`.
//!
//! ```text
//! cargo run --release --example delay_proxy -- LISTEN TARGET DELAY_MS
//! cargo run --release --example delay_proxy -- 127.0.0.1:9419 127.0.0.1:9418 30
//! ```
//!
//! Data is delayed, not throttled: each chunk read is written out `DELAY_MS`
//! after it arrived, so a round trip costs twice the delay whatever the
//! volume. It serves connections until it is killed.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [listen, target, delay] = args.as_slice() else {
        eprintln!("usage: delay_proxy LISTEN_ADDR TARGET_ADDR DELAY_MS");
        std::process::exit(2);
    };
    let Ok(delay) = delay.parse::<u64>().map(Duration::from_millis) else {
        eprintln!("delay_proxy: DELAY_MS must be a whole number of milliseconds");
        std::process::exit(2);
    };
    let listener = match TcpListener::bind(listen) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("delay_proxy: cannot listen on {listen}: {e}");
            std::process::exit(1);
        }
    };
    for client in listener.incoming().flatten() {
        let target = target.clone();
        thread::spawn(move || {
            if let Ok(server) = TcpStream::connect(&target) {
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                relay(client, server, delay);
            }
        });
    }
}

/// Pumps both directions until both ends are closed.
fn relay(a: TcpStream, b: TcpStream, delay: Duration) {
    let (Ok(a2), Ok(b2)) = (a.try_clone(), b.try_clone()) else {
        return;
    };
    let up = thread::spawn(move || pump(a, b2, delay));
    pump(b, a2, delay);
    let _ = up.join();
}

/// Copies `from` to `to`, each chunk `delay` after it was read.
fn pump(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
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
