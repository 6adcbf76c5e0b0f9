//! A forward HTTP proxy on 127.0.0.1 that counts what goes through it (#34): every
//! request (`GET http://any-host/path`) goes to one origin, a [`super::server::Server`],
//! rewritten to `GET /path`, so a source with a made-up host name is reachable only
//! through the proxy. Keep-alive on both sides; plain http only (no CONNECT).

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Proxy {
    pub addr: SocketAddr,
    requests: Arc<AtomicUsize>,
}

impl Proxy {
    /// A proxy that sends every request to `origin`.
    pub fn start(origin: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicUsize::new(0));
        let count = requests.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let count = count.clone();
                std::thread::spawn(move || {
                    let _ = relay(conn, origin, &count);
                });
            }
        });
        Proxy { addr, requests }
    }

    /// `http://127.0.0.1:PORT`, for `--proxy`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests that came through so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// Reads a request or response head: its lines, without the empty one.
fn head(r: &mut impl BufRead) -> std::io::Result<Option<Vec<String>>> {
    let mut lines = Vec::new();
    loop {
        let mut l = String::new();
        if r.read_line(&mut l)? == 0 {
            return Ok(None);
        }
        let l = l.trim_end().to_string();
        if l.is_empty() {
            return Ok(Some(lines));
        }
        lines.push(l);
    }
}

fn relay(client: TcpStream, origin: SocketAddr, count: &AtomicUsize) -> std::io::Result<()> {
    let mut from_client = BufReader::new(client.try_clone()?);
    let mut to_client = client;
    let upstream = TcpStream::connect(origin)?;
    let mut from_origin = BufReader::new(upstream.try_clone()?);
    let mut to_origin = upstream;
    while let Some(req) = head(&mut from_client)? {
        let Some(first) = req.first() else {
            return Ok(());
        };
        let mut parts = first.split_whitespace();
        let (method, target, version) = (
            parts.next().unwrap_or("").to_string(),
            parts.next().unwrap_or("/").to_string(),
            parts.next().unwrap_or("HTTP/1.1").to_string(),
        );
        // Absolute form (`http://host/path`), as clients send to a proxy → origin form.
        let path = target
            .split_once("://")
            .and_then(|(_, rest)| rest.find('/').map(|i| rest[i..].to_string()))
            .unwrap_or(target);
        count.fetch_add(1, Ordering::SeqCst);
        let mut out = format!("{method} {path} {version}\r\n");
        for h in &req[1..] {
            if !h.to_ascii_lowercase().starts_with("proxy-") {
                out.push_str(h);
                out.push_str("\r\n");
            }
        }
        out.push_str("\r\n");
        to_origin.write_all(out.as_bytes())?;
        let Some(resp) = head(&mut from_origin)? else {
            return Ok(());
        };
        let mut back = resp.join("\r\n");
        back.push_str("\r\n\r\n");
        to_client.write_all(back.as_bytes())?;
        let length = resp.iter().find_map(|h| {
            let (k, v) = h.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<u64>().ok())?
        });
        match length {
            _ if method == "HEAD" => {}
            Some(n) => {
                std::io::copy(&mut (&mut from_origin).take(n), &mut to_client)?;
            }
            // The body ends when the origin closes: so does this connection.
            None => {
                std::io::copy(&mut from_origin, &mut to_client)?;
                return Ok(());
            }
        }
        to_client.flush()?;
    }
    Ok(())
}
