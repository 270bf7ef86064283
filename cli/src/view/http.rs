//! The viewer's routes (`spec/wasm.md` §3): the page, the reader,
//! `archives.json`, and each local archive answering `Range` requests as
//! RFC 9110 §14 says, with an `ETag` and `Last-Modified`, `If-Match` and
//! `If-Range`; every request first passes the Host/Origin guard, then its
//! path is normalised or refused.

use std::io::{Seek, SeekFrom};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use super::archives::{self, Archive};
use super::assets::Assets;
use super::guard::{Guard, Refusal};
use super::ranges::{self, Validators, Wanted};
use super::request::Request;
use super::response::{Body, Response};
use super::target::Target;

/// What the server serves.
#[derive(Debug)]
pub struct Site {
    /// The page and the reader.
    pub assets: Assets,
    /// The archives of `archives.json`.
    pub archives: Vec<Archive>,
}

/// The answer to `rq`.
pub fn answer(site: &Site, guard: &Guard, rq: &Request) -> Response {
    route(site, guard, rq).with("X-Content-Type-Options", "nosniff")
}

fn route(site: &Site, guard: &Guard, rq: &Request) -> Response {
    let target = Target::parse(&rq.target);
    let path = target.as_ref().map_or(rq.path(), Target::as_str);
    let data = path == "/archives.json" || path.starts_with("/data/");
    match guard.check(rq.all("Host"), rq.header("Origin"), data) {
        Ok(()) => {}
        Err(Refusal::BadHost) => return Response::text(400, "a request names exactly one Host"),
        Err(Refusal::ForeignHost) => {
            let names = guard.names();
            return Response::text(403, &format!("this viewer answers only to Host {names}"));
        }
        Err(Refusal::ForeignOrigin) => {
            return Response::text(403, "the archives are not shared with other origins")
        }
    }
    if let Err(why) = target {
        return Response::text(400, why);
    }
    if !matches!(rq.method.as_str(), "GET" | "HEAD") {
        return Response::text(405, "only GET and HEAD").with("Allow", "GET, HEAD");
    }
    if path == "/archives.json" {
        let list = archives::listing(&site.archives).into_bytes();
        return Response::bytes(200, "application/json", list).with("Cache-Control", "no-cache");
    }
    if data {
        let i = path
            .strip_prefix("/data/")
            .and_then(|n| n.strip_suffix(".tgm"))
            .and_then(|n| n.parse::<usize>().ok());
        return match i.and_then(|i| site.archives.get(i)) {
            Some(Archive::Local { path, .. }) => archive(path, rq),
            _ => Response::text(404, "no such archive"),
        };
    }
    match site.assets.file(path) {
        Some(a) => match a.body() {
            Ok(body) => Response {
                status: 200,
                fields: vec![("Content-Type", a.content_type().to_string())],
                body,
            }
            .with("Cache-Control", "no-cache"),
            Err(e) => Response::text(500, &format!("cannot read the page's file {path}: {e}")),
        },
        None => Response::text(404, "not found"),
    }
}

/// The version tag of a file: its length and modification time.
fn etag(len: u64, modified: SystemTime) -> String {
    let nanos = modified
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("\"{len:x}-{nanos:x}\"")
}

fn archive(path: &Path, rq: &Request) -> Response {
    let mut file = match archives::open(path) {
        Ok(f) => f,
        Err(why) => return Response::text(404, &format!("this archive is not served: {why}")),
    };
    let Ok(meta) = file.metadata() else {
        return Response::text(500, "cannot read the archive's length");
    };
    let len = meta.len();
    let modified = meta.modified().unwrap_or(UNIX_EPOCH);
    let tag = etag(len, modified);
    let head = |status, body| {
        Response {
            status,
            fields: vec![("Content-Type", "application/octet-stream".into())],
            body,
        }
        .with("Accept-Ranges", "bytes")
        .with("ETag", tag.clone())
        .with("Last-Modified", httpdate::fmt_http_date(modified))
        .with("Cache-Control", "no-cache")
    };
    if let Some(m) = rq.header("If-Match") {
        if m != "*" && !m.split(',').any(|t| t.trim() == tag) {
            return Response::text(412, "the archive changed");
        }
    }
    let now = SystemTime::now();
    let v = Validators {
        etag: &tag,
        modified,
        now,
    };
    let (start, n) = match ranges::wanted(rq.header("Range"), rq.header("If-Range"), &v, len) {
        Wanted::All => (None, len),
        Wanted::Part(a, b) => (Some(a), b - a + 1),
        Wanted::Unsatisfiable => {
            return head(416, Body::Bytes(Vec::new()))
                .with("Content-Range", format!("bytes */{len}"))
        }
    };
    if let Err(e) = file.seek(SeekFrom::Start(start.unwrap_or(0))) {
        return Response::text(500, &format!("cannot read the archive: {e}"));
    }
    match start {
        None => head(200, Body::File(file, n)),
        Some(a) => head(206, Body::File(file, n))
            .with("Content-Range", format!("bytes {a}-{}/{len}", a + n - 1)),
    }
}
