//! The viewer's HTTP server on 127.0.0.1 (tiny_http): the page, the
//! reader, `archives.json`, and each local archive answering single
//! `Range` requests with `206` (RFC 9110 §14), an ETag naming its length
//! and modification time, and `If-Match` (`spec/wasm.md` §3).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use tiny_http::{Header, Method, Request, Response, ResponseBox, Server, StatusCode};

use super::archives::{self, Archive};
use super::assets::{content_type, Assets};
use crate::error::{CliError, CliResult};

/// Requests answered at once (a page fetches a few ranges in parallel).
const WORKERS: usize = 4;

/// What the server serves.
#[derive(Debug)]
pub struct Site {
    /// The page and the reader.
    pub assets: Assets,
    /// The archives of `archives.json`.
    pub archives: Vec<Archive>,
}

/// Listens on 127.0.0.1:`port` (0: any free port).
pub fn bind(port: u16) -> CliResult<Server> {
    Server::http(("127.0.0.1", port))
        .map_err(|e| CliError::Failed(format!("cannot listen on 127.0.0.1:{port}: {e}")))
}

/// Answers requests until the process is stopped.
pub fn serve(server: Server, site: Site) {
    let server = Arc::new(server);
    let site = Arc::new(site);
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (server, site) = (Arc::clone(&server), Arc::clone(&site));
            std::thread::spawn(move || {
                while let Ok(rq) = server.recv() {
                    let resp = answer(&site, &rq);
                    // A browser that went away is not the server's problem.
                    let _ = rq.respond(resp);
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("ASCII header")
}

fn text(code: u16, body: &str) -> ResponseBox {
    Response::from_string(body)
        .with_status_code(code)
        .with_header(header("Content-Type", "text/plain; charset=utf-8"))
        .boxed()
}

fn answer(site: &Site, rq: &Request) -> ResponseBox {
    if !matches!(rq.method(), Method::Get | Method::Head) {
        return text(405, "only GET and HEAD");
    }
    let path = rq.url().split(['?', '#']).next().unwrap_or("/");
    if path == "/archives.json" {
        return Response::from_string(archives::listing(&site.archives))
            .with_header(header("Content-Type", "application/json"))
            .with_header(header("Cache-Control", "no-cache"))
            .boxed();
    }
    if let Some(i) = path
        .strip_prefix("/data/")
        .and_then(|n| n.strip_suffix(".tgm"))
        .and_then(|n| n.parse::<usize>().ok())
    {
        return match site.archives.get(i) {
            Some(Archive::Local { path, .. }) => archive(path, rq),
            _ => text(404, "no such archive"),
        };
    }
    match site.assets.file(path) {
        Some(p) => match File::open(&p) {
            Ok(f) => Response::from_file(f)
                .with_header(header("Content-Type", content_type(&p)))
                .with_header(header("Cache-Control", "no-cache"))
                .boxed(),
            Err(e) => text(500, &format!("{}: {e}", p.display())),
        },
        None => text(404, "not found"),
    }
}

/// The version tag of a file: its length and modification time.
fn etag(len: u64, file: &File) -> String {
    let nanos = file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("\"{len:x}-{nanos:x}\"")
}

fn request_header<'a>(rq: &'a Request, name: &'static str) -> Option<&'a str> {
    rq.headers()
        .iter()
        .find(|h| h.field.equiv(name))
        .map(|h| h.value.as_str())
}

/// What a `Range` header asks of an archive of `len` bytes.
#[derive(Debug, PartialEq, Eq)]
enum Wanted {
    /// The whole archive (no header, or several ranges, which a server
    /// may answer whole).
    All,
    /// Bytes `start..=end`.
    Part(u64, u64),
    /// Nothing the archive holds.
    Unsatisfiable,
}

fn wanted(range: Option<&str>, len: u64) -> Wanted {
    let Some(r) = range else {
        return Wanted::All;
    };
    let Ok(parsed) = http_range_header::parse_range_header(r) else {
        return Wanted::Unsatisfiable;
    };
    if len == 0 {
        return Wanted::Unsatisfiable;
    }
    match parsed.validate(len).as_deref() {
        Ok([one]) if one.start() < &len && one.start() <= one.end() => {
            Wanted::Part(*one.start(), *one.end())
        }
        Ok([_, _, ..]) => Wanted::All,
        _ => Wanted::Unsatisfiable,
    }
}

/// The headers of every answer about an archive.
fn archive_headers<R: Read>(r: Response<R>, tag: &str) -> Response<R> {
    r.with_header(header("Accept-Ranges", "bytes"))
        .with_header(header("ETag", tag))
        .with_header(header("Content-Type", "application/octet-stream"))
        .with_header(header("Cache-Control", "no-cache"))
}

fn archive(path: &Path, rq: &Request) -> ResponseBox {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) => return text(404, &format!("{}: {e}", path.display())),
    };
    let len = match file.metadata() {
        Ok(m) => m.len(),
        Err(e) => return text(500, &format!("{}: {e}", path.display())),
    };
    let tag = etag(len, &file);
    if let Some(m) = request_header(rq, "If-Match") {
        if m.trim() != "*" && !m.split(',').any(|t| t.trim() == tag) {
            return text(412, "the archive changed");
        }
    }
    let (code, start, n) = match wanted(request_header(rq, "Range"), len) {
        Wanted::All => (200, 0, len),
        Wanted::Part(a, b) => (206, a, b - a + 1),
        Wanted::Unsatisfiable => {
            return archive_headers(Response::empty(416), &tag)
                .with_header(header("Content-Range", &format!("bytes */{len}")))
                .boxed()
        }
    };
    if let Err(e) = file.seek(SeekFrom::Start(start)) {
        return text(500, &format!("{}: {e}", path.display()));
    }
    let Ok(size) = usize::try_from(n) else {
        return text(500, "range too large for this platform");
    };
    let mut resp = archive_headers(
        Response::new(StatusCode(code), Vec::new(), file.take(n), Some(size), None),
        &tag,
    );
    if code == 206 {
        resp.add_header(header(
            "Content-Range",
            &format!("bytes {start}-{}/{len}", start + n - 1),
        ));
    }
    resp.boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_single_suffix_open_and_refused() {
        assert_eq!(wanted(None, 100), Wanted::All);
        assert_eq!(wanted(Some("bytes=0-9"), 100), Wanted::Part(0, 9));
        assert_eq!(wanted(Some("bytes=90-"), 100), Wanted::Part(90, 99));
        assert_eq!(wanted(Some("bytes=-10"), 100), Wanted::Part(90, 99));
        assert_eq!(wanted(Some("bytes=95-200"), 100), Wanted::Part(95, 99));
        assert_eq!(wanted(Some("bytes=0-1,5-6"), 100), Wanted::All);
        assert_eq!(wanted(Some("bytes=100-"), 100), Wanted::Unsatisfiable);
        assert_eq!(wanted(Some("bytes=5-1"), 100), Wanted::Unsatisfiable);
        assert_eq!(wanted(Some("items=0-1"), 100), Wanted::Unsatisfiable);
        assert_eq!(wanted(Some("bytes=0-0"), 0), Wanted::Unsatisfiable);
    }
}
