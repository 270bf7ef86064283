//! A fault-injecting HTTP proxy on loopback for the remote-write tests:
//! it forwards every request to a real server (s3s-fs, nginx) unchanged,
//! except those matching a rule, which it answers with a status of its
//! own, drops mid-body, or delays. One request per connection (each
//! answer says `Connection: close`), so a rule sees every request.
//!
//! Pure std, like `servers.rs`; included with
//! `#[path = "../../tests/common/fault_proxy.rs"] mod fault_proxy;`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a rule does to a matching request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Reads half the body, then closes the connection without an answer.
    DropMidBody,
    /// Reads the whole request and answers this status (an S3 error body).
    Status(u16),
    /// Waits this long, then forwards the request.
    Delay(Duration),
}

/// One request the proxy saw: method, target (path and query) and the
/// status answered (0 when the connection was dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub method: String,
    pub target: String,
    pub status: u16,
}

struct Rule {
    method: String,
    contains: String,
    fault: Fault,
    left: usize,
}

#[derive(Default)]
struct State {
    rules: Vec<Rule>,
    seen: Vec<Seen>,
}

/// The proxy: listening on `endpoint`, forwarding to its upstream.
pub struct FaultProxy {
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub endpoint: String,
    state: Arc<Mutex<State>>,
}

impl FaultProxy {
    /// Starts a proxy forwarding to `upstream` (`http://IP:PORT`).
    pub fn start(upstream: &str) -> FaultProxy {
        let upstream: SocketAddr = upstream
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .parse()
            .expect("upstream is http://IP:PORT");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State::default()));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let state = Arc::clone(&shared);
                std::thread::spawn(move || {
                    let _ = serve(conn, upstream, &state);
                });
            }
        });
        FaultProxy { endpoint, state }
    }

    /// Applies `fault` to the next `times` requests whose method is
    /// `method` and whose target contains `contains` (`usize::MAX`: every
    /// one).
    pub fn fault(&self, method: &str, contains: &str, fault: Fault, times: usize) {
        self.state.lock().unwrap().rules.push(Rule {
            method: method.to_string(),
            contains: contains.to_string(),
            fault,
            left: times,
        });
    }

    /// Every request seen so far, in the order their answers were decided
    /// (each recorded before its answer is passed on to the client).
    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }
}

/// The request's head lines (request line first), its Content-Length and
/// whether its body is chunked.
fn read_request(r: &mut BufReader<TcpStream>) -> std::io::Result<(Vec<String>, usize, bool)> {
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let line = line.trim_end_matches(['\r', '\n']).to_string();
        if line.is_empty() {
            break;
        }
        head.push(line);
    }
    let header = |name: &str| {
        head.iter().skip(1).find_map(|h| {
            let (k, v) = h.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    let chunked = header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    let len: usize = header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    Ok((head, len, chunked))
}

/// Reads a body of `len` bytes, or a chunked one.
fn read_body(
    r: &mut BufReader<TcpStream>,
    body: &mut Vec<u8>,
    len: usize,
    chunked: bool,
) -> std::io::Result<()> {
    if !chunked {
        body.resize(len, 0);
        return r.read_exact(body);
    }
    loop {
        let mut line = String::new();
        r.read_line(&mut line)?;
        let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or("0"), 16)
            .map_err(std::io::Error::other)?;
        if size == 0 {
            // Trailers, then the blank line.
            loop {
                let mut t = String::new();
                if r.read_line(&mut t)? == 0 || t.trim().is_empty() {
                    return Ok(());
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        r.read_exact(&mut body[start..])?;
        let mut crlf = [0u8; 2];
        r.read_exact(&mut crlf)?;
    }
}

fn serve(client: TcpStream, upstream: SocketAddr, state: &Mutex<State>) -> std::io::Result<()> {
    let mut r = BufReader::new(client.try_clone()?);
    let mut client = client;
    let (head, len, chunked) = read_request(&mut r)?;
    let mut body = Vec::new();
    let mut words = head[0].split_whitespace();
    let method = words.next().unwrap_or_default().to_string();
    let target = words.next().unwrap_or_default().to_string();
    let fault = {
        let mut s = state.lock().unwrap();
        s.rules
            .iter_mut()
            .find(|f| f.left > 0 && f.method == method && target.contains(&f.contains))
            .map(|f| {
                f.left = f.left.saturating_sub(1);
                f.fault
            })
    };
    let record = |status: u16| {
        state.lock().unwrap().seen.push(Seen {
            method: method.clone(),
            target: target.clone(),
            status,
        })
    };
    match fault {
        Some(Fault::DropMidBody) => {
            let mut half = vec![0u8; len / 2];
            let _ = r.read_exact(&mut half);
            record(0);
            let _ = client.shutdown(Shutdown::Both);
            return Ok(());
        }
        Some(Fault::Status(code)) => {
            read_body(&mut r, &mut body, len, chunked)?;
            let what = if code == 403 {
                "AccessDenied"
            } else {
                "InternalError"
            };
            let xml = format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{what}</Code>\
                 <Message>injected by the test proxy</Message></Error>"
            );
            record(code);
            write!(
                client,
                "HTTP/1.1 {code} Injected\r\nContent-Type: application/xml\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{xml}",
                xml.len()
            )?;
            return client.flush();
        }
        Some(Fault::Delay(d)) => std::thread::sleep(d),
        None => {}
    }
    read_body(&mut r, &mut body, len, chunked)?;
    let mut up = TcpStream::connect(upstream)?;
    let mut out = Vec::with_capacity(body.len() + 1024);
    out.extend_from_slice(head[0].as_bytes());
    out.extend_from_slice(b"\r\n");
    for h in &head[1..] {
        let name = h.split(':').next().unwrap_or_default().trim();
        if ["connection", "transfer-encoding", "content-length"]
            .iter()
            .any(|n| name.eq_ignore_ascii_case(n))
        {
            continue;
        }
        out.extend_from_slice(h.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !body.is_empty() || chunked || len > 0 || method == "PUT" || method == "POST" {
        out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out.extend_from_slice(&body);
    up.write_all(&out)?;
    let mut reply = Vec::new();
    up.read_to_end(&mut reply)?;
    let split = reply
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(reply.len(), |i| i + 4);
    let head_text = String::from_utf8_lossy(&reply[..split]).into_owned();
    let status = head_text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut answer = Vec::with_capacity(reply.len() + 32);
    for line in head_text.split("\r\n").filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or_default().trim();
        if name.eq_ignore_ascii_case("connection") || name.eq_ignore_ascii_case("keep-alive") {
            continue;
        }
        answer.extend_from_slice(line.as_bytes());
        answer.extend_from_slice(b"\r\n");
    }
    answer.extend_from_slice(b"Connection: close\r\n\r\n");
    answer.extend_from_slice(&reply[split..]);
    // Recorded before the client can see the answer, so that a request
    // the client has had its answer to is always in `seen`.
    record(status);
    client.write_all(&answer)?;
    client.flush()
}
