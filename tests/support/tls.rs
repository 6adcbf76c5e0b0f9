//! A real https server on 127.0.0.1 (rustls, threads and std only) that answers every
//! request with a redirect: a source given as https that sends us elsewhere. Its
//! certificate is for 127.0.0.1, issued by a test CA (`tls/ca.pem`, made once with
//! openssl, valid to 2126) that debug builds of cuda-setup trust when
//! `CUDA_SETUP_TEST_ROOT_CA` names it.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

pub const CA_PEM: &str = include_str!("tls/ca.pem");
const LEAF_PEM: &str = include_str!("tls/leaf.pem");
const LEAF_KEY: &str = include_str!("tls/leaf.key");

/// Writes the test CA into `dir`, for `CUDA_SETUP_TEST_ROOT_CA`.
pub fn ca_file(dir: &Path) -> PathBuf {
    let p = dir.join("test-ca.pem");
    std::fs::write(&p, CA_PEM).unwrap();
    p
}

pub struct Redirector {
    pub addr: SocketAddr,
}

impl Redirector {
    /// `https://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("https://{}", self.addr)
    }
}

/// Serves https; every request is answered `302` to `to` + the path asked for.
pub fn redirector(to: &str) -> Redirector {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let certs = vec![CertificateDer::from_pem_slice(LEAF_PEM.as_bytes()).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(LEAF_KEY.as_bytes()).unwrap();
    let config = Arc::new(
        rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let to = to.trim_end_matches('/').to_string();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let (config, to) = (config.clone(), to.clone());
            std::thread::spawn(move || {
                let _ = serve(conn, config, &to);
            });
        }
    });
    Redirector { addr }
}

fn serve(conn: TcpStream, config: Arc<rustls::ServerConfig>, to: &str) -> std::io::Result<()> {
    let tls = rustls::ServerConnection::new(config).map_err(std::io::Error::other)?;
    let mut stream = rustls::StreamOwned::new(tls, conn);
    loop {
        let mut reader = BufReader::new(&mut stream);
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h)? == 0 || h.trim_end().is_empty() {
                break;
            }
        }
        drop(reader);
        write!(
            stream,
            "HTTP/1.1 302 Found\r\nLocation: {to}{path}\r\nContent-Length: 0\r\n\r\n"
        )?;
        stream.flush()?;
    }
}

/// Serves https in front of a plain http server at `to` (#34: a mirror of PyTorch's
/// index must be https): each connection takes one request, passed on with
/// `Connection: close`, and streams the answer back (throttling and ranges are the
/// server's), then closes.
pub fn front(to: SocketAddr) -> Redirector {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let certs = vec![CertificateDer::from_pem_slice(LEAF_PEM.as_bytes()).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(LEAF_KEY.as_bytes()).unwrap();
    let config = Arc::new(
        rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let config = config.clone();
            std::thread::spawn(move || {
                let _ = pass_on(conn, config, to);
            });
        }
    });
    Redirector { addr }
}

fn pass_on(
    conn: TcpStream,
    config: Arc<rustls::ServerConfig>,
    to: SocketAddr,
) -> std::io::Result<()> {
    let tls = rustls::ServerConnection::new(config).map_err(std::io::Error::other)?;
    let mut stream = rustls::StreamOwned::new(tls, conn);
    let mut head = String::new();
    {
        let mut reader = BufReader::new(&mut stream);
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h)? == 0 {
                return Ok(());
            }
            if h.trim_end().is_empty() {
                break;
            }
            if !h.to_ascii_lowercase().starts_with("connection:") {
                head.push_str(&h);
            }
        }
    }
    let mut backend = TcpStream::connect(to)?;
    write!(backend, "{head}Connection: close\r\n\r\n")?;
    let mut answer = BufReader::new(backend);
    // The server keeps its connection open: the body is as long as it says.
    let mut length = u64::MAX;
    loop {
        let mut h = String::new();
        if answer.read_line(&mut h)? == 0 {
            return Ok(());
        }
        if h.trim_end().is_empty() {
            break;
        }
        let lower = h.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(u64::MAX);
        }
        if !lower.starts_with("connection:") {
            stream.write_all(h.as_bytes())?;
        }
    }
    stream.write_all(b"Connection: close\r\n\r\n")?;
    let mut body = std::io::Read::take(answer, length);
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = std::io::Read::read(&mut body, &mut buf)?;
        if n == 0 {
            break;
        }
        stream.write_all(&buf[..n])?;
        stream.flush()?;
    }
    stream.conn.send_close_notify();
    stream.flush()
}
