//! A real HTTP/1.1 server on 127.0.0.1 for tests and benchmarks, serving bytes with
//! faults on demand: dropped connections, wrong bytes, error statuses, stalls, ignored
//! Range headers, redirects, per-connection throttling, silence mid-headers, a trickle,
//! bodies longer than announced or endless. Threads and std only.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a path serves.
#[derive(Clone)]
pub enum Body {
    Bytes(Arc<Vec<u8>>),
    /// A file on disk (for multi-GB benchmarks).
    File(PathBuf, u64),
    /// This many zero bytes, never held in memory (a file too big for the disk).
    Zeros(u64),
    /// Zeros without end (serve it with `no_length`).
    Endless,
}

impl Body {
    fn len(&self) -> u64 {
        match self {
            Body::Bytes(b) => b.len() as u64,
            Body::File(_, n) | Body::Zeros(n) => *n,
            Body::Endless => u64::MAX,
        }
    }
}

/// Faults, per path. Counters count down: `status_times: 2` fails twice, then serves.
#[derive(Clone, Default)]
pub struct Fault {
    /// Close the connection after sending this many body bytes, this many times.
    pub drop_after: Option<(u64, usize)>,
    /// Answer with this status this many times.
    pub status: Option<(u16, usize)>,
    /// Flip the byte at this offset (every time).
    pub corrupt_at: Option<u64>,
    /// Stop sending after this many body bytes and hang, this many times.
    pub stall_after: Option<(u64, usize)>,
    /// Answer 200 with the whole body even when a Range is asked for.
    pub ignore_range: bool,
    /// Answer 302 to this location.
    pub redirect_to: Option<String>,
    /// Bytes per second per connection.
    pub throttle: Option<u64>,
    /// Send the status line, then nothing more (the headers never end).
    pub mute_after_status: bool,
    /// One body byte per this interval: never silent long enough to stall.
    pub trickle: Option<Duration>,
    /// Answer 200 with no Content-Length (the body ends when the connection closes),
    /// whatever the Range.
    pub no_length: bool,
    /// Send this many bytes more than the body (a 206 or a 200 with a length announces
    /// them too).
    pub extra: u64,
}

/// An address that accepts TCP connections (the kernel completes them) and never answers
/// a byte: keep the listener alive as long as the address is used.
pub fn mute_listener() -> (TcpListener, String) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    (l, url)
}

struct Route {
    body: Body,
    fault: Mutex<Fault>,
    content_type: Option<String>,
}

pub struct Server {
    pub addr: SocketAddr,
    routes: Arc<Mutex<HashMap<String, Arc<Route>>>>,
    requests: Arc<AtomicUsize>,
    range_requests: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Server {
    pub fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = Server {
            addr,
            routes: Arc::default(),
            requests: Arc::default(),
            range_requests: Arc::default(),
            stop: Arc::default(),
        };
        let (routes, requests, ranges, stop) = (
            server.routes.clone(),
            server.requests.clone(),
            server.range_requests.clone(),
            server.stop.clone(),
        );
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (routes, requests, ranges, stop) = (
                    routes.clone(),
                    requests.clone(),
                    ranges.clone(),
                    stop.clone(),
                );
                std::thread::spawn(move || {
                    let _ = serve(conn, &routes, &requests, &ranges, &stop);
                });
            }
        });
        server
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn add(&self, path: &str, body: Body) {
        self.add_with(path, body, Fault::default());
    }

    pub fn add_with(&self, path: &str, body: Body, fault: Fault) {
        self.routes.lock().unwrap().insert(
            path.to_string(),
            Arc::new(Route {
                body,
                fault: Mutex::new(fault),
                content_type: None,
            }),
        );
    }

    /// A page with a `Content-Type` (a package index answers JSON or HTML).
    pub fn add_typed(&self, path: &str, body: Body, content_type: &str) {
        self.routes.lock().unwrap().insert(
            path.to_string(),
            Arc::new(Route {
                body,
                fault: Mutex::new(Fault::default()),
                content_type: Some(content_type.to_string()),
            }),
        );
    }

    pub fn set_fault(&self, path: &str, fault: Fault) {
        let routes = self.routes.lock().unwrap();
        *routes[path].fault.lock().unwrap() = fault;
    }

    /// Requests served so far (all paths).
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    pub fn range_requests(&self) -> usize {
        self.range_requests.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(self.addr); // wake the accept loop
    }
}

fn take(counter: &mut Option<(u64, usize)>) -> Option<u64> {
    match counter {
        Some((n, times)) if *times > 0 => {
            *times -= 1;
            Some(*n)
        }
        _ => None,
    }
}

fn serve(
    conn: TcpStream,
    routes: &Mutex<HashMap<String, Arc<Route>>>,
    requests: &AtomicUsize,
    ranges: &AtomicUsize,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    conn.set_nodelay(true)?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut out = conn;
    loop {
        // Request line and headers.
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let path = parts.next().unwrap_or("/").to_string();
        let mut range: Option<(u64, Option<u64>)> = None;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h)? == 0 {
                return Ok(());
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':')
                && k.eq_ignore_ascii_case("range")
                && let Some(spec) = v.trim().strip_prefix("bytes=")
                && let Some((a, b)) = spec.split_once('-')
            {
                range = a.parse().ok().map(|a| (a, b.parse().ok()));
            }
        }
        requests.fetch_add(1, Ordering::SeqCst);
        let route = routes.lock().unwrap().get(&path).cloned();
        let Some(route) = route else {
            write!(out, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")?;
            continue;
        };
        let mut fault = route.fault.lock().unwrap().clone();
        // Decrement the status counter in the shared copy (body faults: below, once the
        // response is long enough to trigger them).
        let status = {
            let mut f = route.fault.lock().unwrap();
            match &mut f.status {
                Some((code, times)) if *times > 0 => {
                    *times -= 1;
                    Some(*code)
                }
                _ => None,
            }
        };
        if let Some(to) = fault.redirect_to.take() {
            write!(
                out,
                "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\n\r\n"
            )?;
            continue;
        }
        if let Some(code) = status {
            write!(out, "HTTP/1.1 {code} Fault\r\nContent-Length: 0\r\n\r\n")?;
            continue;
        }
        if fault.mute_after_status {
            write!(out, "HTTP/1.1 200 OK\r\n")?;
            out.flush()?;
            std::thread::sleep(Duration::from_secs(30));
            return Ok(());
        }
        if fault.no_length {
            write!(out, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")?;
            let len = route.body.len().saturating_add(fault.extra);
            let _ = send_body(&mut out, &route.body, 0, len, &fault, None, None);
            return Ok(());
        }
        let total = route.body.len();
        let (start, end, partial) = match range {
            Some((a, b)) if !fault.ignore_range && a < total => {
                ranges.fetch_add(1, Ordering::SeqCst);
                (a, b.map_or(total - 1, |b| b.min(total - 1)), true)
            }
            Some((a, _)) if !fault.ignore_range => {
                write!(
                    out,
                    "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{total}\r\nContent-Length: 0\r\n\r\n"
                )?;
                let _ = a;
                continue;
            }
            _ => (0, total.saturating_sub(1), false),
        };
        let len = if total == 0 { 0 } else { end - start + 1 } + fault.extra;
        if partial {
            write!(
                out,
                "HTTP/1.1 206 Partial Content\r\nContent-Length: {len}\r\nContent-Range: bytes {start}-{end}/{total}\r\nAccept-Ranges: bytes\r\n\r\n"
            )?;
        } else {
            let ranges_header = if fault.ignore_range {
                ""
            } else {
                "Accept-Ranges: bytes\r\n"
            };
            let type_header = route
                .content_type
                .as_ref()
                .map(|t| format!("Content-Type: {t}\r\n"))
                .unwrap_or_default();
            write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n{ranges_header}{type_header}\r\n"
            )?;
        }
        if method == "HEAD" {
            continue;
        }
        let (drop_after, stall_after) = {
            let mut f = route.fault.lock().unwrap();
            let long = |c: &Option<(u64, usize)>| c.is_some_and(|(n, _)| len > n);
            let d = if long(&f.drop_after) {
                take(&mut f.drop_after)
            } else {
                None
            };
            let s = if long(&f.stall_after) {
                take(&mut f.stall_after)
            } else {
                None
            };
            (d, s)
        };
        send_body(
            &mut out,
            &route.body,
            start,
            len,
            &fault,
            drop_after,
            stall_after,
        )?;
    }
}

fn send_body(
    out: &mut TcpStream,
    body: &Body,
    start: u64,
    len: u64,
    fault: &Fault,
    drop_after: Option<u64>,
    stall_after: Option<u64>,
) -> std::io::Result<()> {
    let mut file = match body {
        Body::File(p, _) => {
            let mut f = std::fs::File::open(p)?;
            std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(start))?;
            Some(f)
        }
        Body::Bytes(_) | Body::Zeros(_) | Body::Endless => None,
    };
    let mut buf = vec![0u8; 256 * 1024];
    let mut sent = 0u64;
    let t0 = Instant::now();
    while sent < len {
        let want = (len - sent).min(buf.len() as u64) as usize;
        let want = if let Some(every) = fault.trickle {
            std::thread::sleep(every);
            1
        } else if let Some(rate) = fault.throttle {
            // A twentieth of a second's worth at a time: a body shorter than the buffer
            // is still sent at the rate, not in one write followed by a sleep.
            want.min((rate / 20).max(1) as usize)
        } else {
            want
        };
        let chunk = &mut buf[..want];
        match (&mut file, body) {
            (Some(f), _) => f.read_exact(chunk)?,
            (None, Body::Bytes(b)) => {
                // Past the end (`extra`): filler.
                let s = ((start + sent) as usize).min(b.len());
                let k = want.min(b.len() - s);
                chunk[..k].copy_from_slice(&b[s..s + k]);
                chunk[k..].fill(0xaa);
            }
            (None, Body::Zeros(_) | Body::Endless) => chunk.fill(0),
            _ => unreachable!(),
        }
        if let Some(at) = fault.corrupt_at {
            let pos = start + sent;
            if at >= pos && at < pos + want as u64 {
                chunk[(at - pos) as usize] ^= 0xff;
            }
        }
        let mut n = want as u64;
        for limit in [drop_after, stall_after].into_iter().flatten() {
            if sent + n > limit {
                n = limit.saturating_sub(sent);
            }
        }
        out.write_all(&chunk[..n as usize])?;
        sent += n;
        if drop_after.is_some_and(|l| sent >= l) {
            return Err(std::io::Error::other("fault: drop"));
        }
        if stall_after.is_some_and(|l| sent >= l) {
            std::thread::sleep(Duration::from_secs(30));
            return Err(std::io::Error::other("fault: stall"));
        }
        if let Some(rate) = fault.throttle {
            let due = Duration::from_secs_f64(sent as f64 / rate as f64);
            if let Some(wait) = due.checked_sub(t0.elapsed()) {
                std::thread::sleep(wait);
            }
        }
    }
    Ok(())
}

/// Deterministic, incompressible test bytes.
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// A loopback address nothing listens on: port 1 (tcpmux) is privileged and never handed
/// out as an ephemeral port, so unlike "a port that was just free", no other test's server
/// can take it while this test runs; a connection is refused at once.
pub fn dead_base() -> String {
    "http://127.0.0.1:1".to_string()
}
