//! One connection: request heads read within the read timeout, answers
//! written under the write timeout, kept open between requests as HTTP/1.1
//! says (`spec/wasm.md` §3).

use std::io::Read;
use std::net::TcpStream;
use std::time::Instant;

use super::guard::Guard;
use super::http::{self, Site};
use super::request::{Request, MAX_HEAD};
use super::response::Response;
use super::server::Limits;

/// What reading a request head gave.
enum Head {
    /// The head, without its blank line.
    Complete(Vec<u8>),
    /// Closed, silent past the read timeout, or failed.
    Gone,
    /// Longer than [`MAX_HEAD`].
    TooLarge,
}

/// Serves requests on `s` until it closes, times out or asks to close.
pub fn handle(mut s: TcpStream, site: &Site, guard: &Guard, limits: &Limits) {
    if s.set_write_timeout(Some(limits.write)).is_err() || s.set_nodelay(true).is_err() {
        return;
    }
    let mut buf = Vec::new();
    loop {
        let (resp, head_only, keep) = match read_head(&mut s, &mut buf, limits) {
            Head::Gone => return,
            Head::TooLarge => (Response::text(431, "request head too large"), false, false),
            Head::Complete(h) => match Request::parse(&h) {
                Err(why) => (Response::text(400, why), false, false),
                Ok(rq) if rq.has_body() => (
                    Response::text(400, "the viewer accepts no request body"),
                    false,
                    false,
                ),
                Ok(rq) => (
                    http::answer(site, guard, &rq),
                    rq.method == "HEAD",
                    rq.keep_alive(),
                ),
            },
        };
        if resp.write_to(&mut s, head_only, keep).is_err() || !keep {
            return;
        }
    }
}

/// Reads up to the blank line ending a request head; bytes after it stay
/// in `buf` for the next request.
fn read_head(s: &mut TcpStream, buf: &mut Vec<u8>, limits: &Limits) -> Head {
    let deadline = Instant::now() + limits.read;
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = buf[..i].to_vec();
            buf.drain(..i + 4);
            return Head::Complete(head);
        }
        if buf.len() > MAX_HEAD {
            return Head::TooLarge;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            return Head::Gone;
        }
        match s.read(&mut chunk) {
            Ok(0) => return Head::Gone,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Head::Gone,
        }
    }
}
