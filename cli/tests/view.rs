//! `tgm view`'s server from outside, over raw TCP: clients that never read
//! and many at once, RFC 9110 ranges and `If-Range`, only archives inside
//! the served folder, and the Host/Origin checks (`spec/wasm.md` §3).
//! Waits are bounded by socket timeouts only, to turn a hang into a
//! failure; nothing asserts how fast an answer comes.

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Longest wait for any answer: a hang becomes a failure.
const PATIENCE: Duration = Duration::from_secs(15);

/// A running `tgm view`, stopped when dropped.
struct Viewer {
    child: Child,
    port: u16,
    stderr: PathBuf,
    _keep: tempfile::TempDir,
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The four files `tgm view` needs as its page and reader.
fn fake_assets(root: &Path) {
    for f in [
        "viewer/index.html",
        "viewer/viewer.js",
        "pkg/tgm.js",
        "pkg/tgm_wasm_bg.wasm",
    ] {
        let p = root.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, f).unwrap();
    }
}

impl Viewer {
    /// `tgm view input` with a fake page (`--assets`).
    fn start(input: &Path) -> Viewer {
        Viewer::launch(&[input], true)
    }

    /// `tgm view inputs…`, with a fake page when `fake`, else with the
    /// page built into tgm (`TGM_VIEWER_ASSETS` cleared).
    fn launch(inputs: &[&Path], fake: bool) -> Viewer {
        let keep = tempfile::tempdir().unwrap();
        let stderr = keep.path().join("stderr.txt");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tgm"));
        cmd.arg("view").args(inputs).args(["--port", "0"]);
        cmd.env_remove("TGM_VIEWER_ASSETS");
        if fake {
            fake_assets(keep.path());
            cmd.arg("--assets").arg(keep.path());
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .split("127.0.0.1:")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| {
                let _ = child.kill();
                let err = std::fs::read_to_string(&stderr).unwrap_or_default();
                panic!("no address in {line:?}; stderr: {err}")
            });
        Viewer {
            child,
            port,
            stderr,
            _keep: keep,
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap()
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(PATIENCE)).unwrap();
        s.set_write_timeout(Some(PATIENCE)).unwrap();
        s
    }

    /// `GET path` with `Host` the viewer's own and `headers` added.
    fn get(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        let mut head = format!("GET {path} HTTP/1.1\r\nHost: {}\r\n", self.host());
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        self.raw(&head)
    }

    /// Sends `head` (request line and headers, each ending in CRLF) with
    /// `Connection: close` and reads the whole answer.
    fn raw(&self, head: &str) -> Reply {
        let mut s = self.connect();
        s.write_all(format!("{head}Connection: close\r\n\r\n").as_bytes())
            .unwrap();
        read_reply(&mut s).unwrap_or_else(|e| panic!("no answer to {head:?}: {e}"))
    }
}

/// One answer: status, headers (lower-case names) and body.
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

fn read_reply(s: &mut TcpStream) -> std::io::Result<Reply> {
    let mut all = Vec::new();
    s.read_to_end(&mut all)?;
    let end = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| std::io::Error::other(format!("no head in {} bytes", all.len())))?;
    let head = String::from_utf8_lossy(&all[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line in {head:?}")))?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Ok(Reply {
        status,
        headers,
        body: all[end + 4..].to_vec(),
    })
}

/// A folder with one small archive, `a.tgm`.
fn one_archive() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("a.tgm");
    common::archive(&p, 3);
    (d, p)
}

/// A folder with `a.tgm` (three messages) and `b.tgm` (one).
fn two_archives() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a.tgm"), d.path().join("b.tgm"));
    common::archive(&a, 3);
    common::archive(&b, 1);
    (d, a, b)
}

/// The `./` and `../` modules a script imports (`from "…"`).
fn imports(script: &str) -> Vec<String> {
    script
        .split("from \"")
        .skip(1)
        .filter_map(|r| r.split('"').next())
        .filter(|m| m.starts_with("./") || m.starts_with("../"))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_page_and_reader_built_into_tgm_are_served_without_assets() {
    let (d, _) = one_archive();
    let v = Viewer::launch(&[d.path()], false);
    let page = v.get("/", &[]);
    assert_eq!(page.status, 200, "{page:?}");
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let html = String::from_utf8(page.body).unwrap();
    // Every file the page names, and every module those import, is there.
    let mut wanted: Vec<String> = ["viewer/viewer.css", "viewer/viewer.js"]
        .iter()
        .filter(|f| html.contains(*f))
        .map(|f| format!("/{f}"))
        .collect();
    assert_eq!(wanted.len(), 2, "{html}");
    let mut seen = Vec::new();
    while let Some(path) = wanted.pop() {
        let r = v.get(&path, &[]);
        assert_eq!(r.status, 200, "{path}: {r:?}");
        if path.ends_with(".js") {
            let folder = &path[..path.rfind('/').unwrap()];
            for m in imports(&String::from_utf8(r.body).unwrap()) {
                let resolved = match m.strip_prefix("../") {
                    Some(rest) => format!("/{rest}"),
                    None => format!("{folder}/{}", &m[2..]),
                };
                if !seen.contains(&resolved) {
                    wanted.push(resolved);
                }
            }
        }
        seen.push(path);
    }
    assert!(seen.contains(&"/pkg/tgm_wasm.js".to_string()), "{seen:?}");
    let wasm = v.get("/pkg/tgm_wasm_bg.wasm", &[]);
    assert_eq!(wasm.status, 200, "{wasm:?}");
    assert_eq!(wasm.header("content-type"), Some("application/wasm"));
    assert_eq!(&wasm.body[..4], b"\0asm");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wasm/pkg/tgm_wasm_bg.wasm");
    assert_eq!(wasm.body, std::fs::read(repo).unwrap());
}

#[test]
fn several_archives_are_listed_and_served_in_the_order_named() {
    let (d, a, b) = two_archives();
    std::fs::create_dir(d.path().join("more")).unwrap();
    common::archive(&d.path().join("more/a.tgm"), 2);
    let v = Viewer::launch(&[&b, &a, &d.path().join("more")], true);
    let list: serde_json::Value =
        serde_json::from_slice(&v.get("/archives.json", &[]).body).unwrap();
    let names: Vec<_> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["b.tgm", "a.tgm", "a.tgm (2)"]);
    for (i, p) in [&b, &a, &d.path().join("more/a.tgm")]
        .into_iter()
        .enumerate()
    {
        let r = v.get(&format!("/data/{i}.tgm"), &[]);
        assert_eq!(r.status, 200, "{i}: {r:?}");
        assert_eq!(r.body, std::fs::read(p).unwrap(), "{i}");
    }
    assert_eq!(v.get("/data/3.tgm", &[]).status, 404);
}

#[test]
fn a_static_site_of_several_archives_needs_no_assets() {
    let (d, a, b) = two_archives();
    let site = d.path().join("site");
    let out = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .arg("view")
        .args([&a, &b])
        .arg("--site")
        .arg(&site)
        .env_remove("TGM_VIEWER_ASSETS")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(html.contains("viewer/viewer.js"), "{html}");
    for f in [
        "viewer/viewer.js",
        "viewer/viewer.css",
        "pkg/tgm.js",
        "pkg/tgm_wasm.js",
    ] {
        assert!(site.join(f).is_file(), "{f}");
    }
    let wasm = std::fs::read(site.join("pkg/tgm_wasm_bg.wasm")).unwrap();
    assert_eq!(&wasm[..4], b"\0asm");
    assert_eq!(
        std::fs::read(site.join("data/0.tgm")).unwrap(),
        std::fs::read(&a).unwrap()
    );
    assert_eq!(
        std::fs::read(site.join("data/1.tgm")).unwrap(),
        std::fs::read(&b).unwrap()
    );
    let list = std::fs::read_to_string(site.join("archives.json")).unwrap();
    assert!(list.contains("a.tgm") && list.contains("b.tgm"), "{list}");
}

#[test]
fn clients_that_never_read_leave_the_listing_answered() {
    // A large archive (sparse: the magic, then zeros; only the first bytes
    // are checked) that fills every socket buffer of a client not reading.
    let d = tempfile::tempdir().unwrap();
    let big = d.path().join("big.tgm");
    let f = std::fs::File::create(&big).unwrap();
    (&f).write_all(b"TENSOGRM").unwrap();
    f.set_len(256 << 20).unwrap();
    let v = Viewer::start(d.path());
    let stalled: Vec<TcpStream> = (0..8)
        .map(|_| {
            let mut s = v.connect();
            let req = format!("GET /data/0.tgm HTTP/1.1\r\nHost: {}\r\n\r\n", v.host());
            s.write_all(req.as_bytes()).unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let r = v.get("/archives.json", &[]);
    assert_eq!(r.status, 200, "{r:?}");
    assert!(String::from_utf8_lossy(&r.body).contains("big.tgm"));
    drop(stalled);
}

#[test]
fn five_hundred_concurrent_requests_are_answered_or_refused() {
    let (d, _) = one_archive();
    let v = Viewer::start(d.path());
    let listing = v.get("/archives.json", &[]).body;
    let req = format!(
        "GET /archives.json HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        v.host()
    );
    let clients: Vec<_> = (0..500)
        .map(|_| {
            let mut s = v.connect();
            let req = req.clone();
            std::thread::spawn(move || {
                s.write_all(req.as_bytes())?;
                read_reply(&mut s)
            })
        })
        .collect();
    let (mut ok, mut refused) = (0, 0);
    for c in clients {
        match c.join().unwrap() {
            Ok(r) if r.status == 200 => {
                assert_eq!(r.body, listing);
                ok += 1;
            }
            Ok(r) if r.status == 503 => refused += 1,
            other => panic!("neither answered nor refused: {other:?}"),
        }
    }
    assert!(ok > 0, "{ok} answered, {refused} refused");
    // The server is still there for the next client.
    assert_eq!(v.get("/archives.json", &[]).status, 200);
}

#[test]
fn a_suffix_range_longer_than_the_archive_is_the_whole_archive() {
    let (d, p) = one_archive();
    let bytes = std::fs::read(&p).unwrap();
    let len = bytes.len();
    let v = Viewer::start(d.path());
    let n = format!("bytes=-{}", len * 10);
    let r = v.get("/data/0.tgm", &[("Range", &n)]);
    assert_eq!(r.status, 206, "{r:?}");
    assert_eq!(
        r.header("content-range"),
        Some(format!("bytes 0-{}/{len}", len - 1).as_str())
    );
    assert_eq!(r.body, bytes);
    let r = v.get("/data/0.tgm", &[("Range", "bytes=-0")]);
    assert_eq!(r.status, 416, "{r:?}");
}

#[test]
fn several_ranges_are_answered_whole() {
    let (d, p) = one_archive();
    let bytes = std::fs::read(&p).unwrap();
    let v = Viewer::start(d.path());
    let past = format!("bytes=0-9,{}-", bytes.len() + 100);
    for spec in ["bytes=0-9,20-29", "bytes=0-9,5-15", "bytes=-5,0-0", &past] {
        let r = v.get("/data/0.tgm", &[("Range", spec)]);
        assert_eq!(r.status, 200, "{spec}: {r:?}");
        assert_eq!(r.header("content-range"), None, "{spec}");
        assert_eq!(r.body, bytes, "{spec}");
    }
    // A unit other than bytes is ignored (RFC 9110 §14.2).
    let r = v.get("/data/0.tgm", &[("Range", "items=0-1")]);
    assert_eq!(r.status, 200, "{r:?}");
}

#[test]
fn if_range_honours_the_range_only_for_the_current_validator() {
    let (d, p) = one_archive();
    let bytes = std::fs::read(&p).unwrap();
    // Modified an hour ago: its date is a strong validator (RFC 9110 §8.8.2.2).
    let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    let v = Viewer::start(d.path());
    let whole = v.get("/data/0.tgm", &[]);
    let tag = whole.header("etag").expect("an ETag").to_string();
    let date = whole
        .header("last-modified")
        .expect("a Last-Modified")
        .to_string();
    let range = ("Range", "bytes=0-9");
    for current in [tag.as_str(), date.as_str()] {
        let r = v.get("/data/0.tgm", &[range, ("If-Range", current)]);
        assert_eq!(r.status, 206, "{current}: {r:?}");
        assert_eq!(r.body, bytes[..10], "{current}");
    }
    let weak = format!("W/{tag}");
    for stale in [
        "\"0-0\"",
        weak.as_str(),
        "Thu, 01 Jan 1970 00:00:00 GMT",
        "not a validator",
    ] {
        let r = v.get("/data/0.tgm", &[range, ("If-Range", stale)]);
        assert_eq!(r.status, 200, "{stale}: {r:?}");
        assert_eq!(r.body, bytes, "{stale}");
    }
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_folder_is_neither_listed_nor_served() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("passwd");
    std::fs::write(&secret, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    let foreign = outside.path().join("foreign.tgm");
    common::archive(&foreign, 1);
    let (d, _) = one_archive();
    std::os::unix::fs::symlink(&secret, d.path().join("b.tgm")).unwrap();
    std::os::unix::fs::symlink(&foreign, d.path().join("c.tgm")).unwrap();
    // A link that stays inside the folder is an archive like any other.
    std::os::unix::fs::symlink("a.tgm", d.path().join("d.tgm")).unwrap();
    let v = Viewer::start(d.path());
    let listing = String::from_utf8(v.get("/archives.json", &[]).body).unwrap();
    let json: serde_json::Value = serde_json::from_str(&listing).unwrap();
    let names: Vec<_> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["a.tgm", "d.tgm"], "{listing}");
    assert!(!listing.contains(&outside.path().display().to_string()));
    for i in 0..4 {
        let r = v.get(&format!("/data/{i}.tgm"), &[]);
        let body = String::from_utf8_lossy(&r.body);
        assert!(!body.contains("root:x"), "{i}: {r:?}");
        assert!(
            r.status == 404 || body.starts_with("TENSOGRM"),
            "{i}: {r:?}"
        );
    }
    let err = v.stderr();
    for (link, cause) in [("b.tgm", "outside"), ("c.tgm", "outside")] {
        let line = err.lines().find(|l| l.contains(link)).unwrap_or("");
        assert!(line.contains(cause), "{link}: {err}");
    }
}

#[test]
fn only_files_that_start_as_tensogram_are_served() {
    let (d, _) = one_archive();
    let notes = d.path().join("notes.tgm");
    std::fs::write(&notes, "not an archive").unwrap();
    let v = Viewer::start(d.path());
    let listing = String::from_utf8(v.get("/archives.json", &[]).body).unwrap();
    assert!(!listing.contains("notes.tgm"), "{listing}");
    assert_eq!(v.get("/data/1.tgm", &[]).status, 404);
    let err = v.stderr();
    assert!(
        err.contains(&notes.display().to_string()) && err.contains("TENSOGRM"),
        "{err}"
    );
    // Named alone, it is refused at start, naming the file and the cause.
    let run = common::tgm_in(d.path(), &["view", notes.to_str().unwrap(), "--port", "0"]);
    assert!(!run.ok, "{}", run.out);
    assert!(
        run.err.contains("notes.tgm") && run.err.contains("TENSOGRM"),
        "{}",
        run.err
    );
}

#[test]
fn a_foreign_host_is_refused_everywhere() {
    let (d, _) = one_archive();
    let v = Viewer::start(d.path());
    let port = v.port;
    for path in ["/", "/archives.json", "/data/0.tgm"] {
        for host in [
            "evil.example".to_string(),
            format!("evil.example:{port}"),
            format!("127.0.0.1:{}", port.wrapping_add(1)),
            format!("127.0.0.1.evil.example:{port}"),
            format!("localhost.:{port}"),
            // The viewer bound 127.0.0.1, not ::1.
            format!("[::1]:{port}"),
        ] {
            let r = v.raw(&format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n"));
            assert_eq!(r.status, 403, "{path} Host {host}: {r:?}");
        }
        for host in [
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("LocalHost:{port}"),
        ] {
            let r = v.raw(&format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n"));
            assert_eq!(r.status, 200, "{path} Host {host}: {r:?}");
        }
        let r = v.raw(&format!("GET {path} HTTP/1.1\r\n"));
        assert_eq!(r.status, 400, "{path} without Host: {r:?}");
    }
}

#[test]
fn a_foreign_origin_is_refused_on_the_data() {
    let (d, _) = one_archive();
    let v = Viewer::start(d.path());
    let own = format!("http://{}", v.host());
    let local = format!("localhost:{}", v.port);
    let other_name = format!("http://{local}");
    for path in ["/archives.json", "/data/0.tgm"] {
        for origin in [
            "http://evil.example",
            "null",
            "https://127.0.0.1",
            other_name.as_str(),
        ] {
            let r = v.get(path, &[("Origin", origin)]);
            assert_eq!(r.status, 403, "{path} Origin {origin}: {r:?}");
        }
        let r = v.get(path, &[("Origin", own.as_str())]);
        assert_eq!(r.status, 200, "{path} Origin {own}: {r:?}");
        // The same origin under the other name.
        let head = format!("GET {path} HTTP/1.1\r\nHost: {local}\r\nOrigin: {other_name}\r\n");
        let r = v.raw(&head);
        assert_eq!(r.status, 200, "{path} Origin {other_name}: {r:?}");
        // Without Origin (a same-origin GET from the page) the data is served.
        assert_eq!(v.get(path, &[]).status, 200, "{path}");
    }
    // The page itself may be linked from anywhere.
    assert_eq!(v.get("/", &[("Origin", "http://evil.example")]).status, 200);
}

#[test]
fn a_dns_rebinding_request_reads_nothing() {
    // A page at http://evil.example:PORT whose name was rebound to
    // 127.0.0.1: the browser connects to the viewer but names its own host.
    let (d, p) = one_archive();
    let v = Viewer::start(d.path());
    let evil = format!("evil.example:{}", v.port);
    let magic = &std::fs::read(&p).unwrap()[..8];
    for path in ["/archives.json", "/data/0.tgm", "/"] {
        for origin in ["", "Origin: http://evil.example\r\n"] {
            let r = v.raw(&format!("GET {path} HTTP/1.1\r\nHost: {evil}\r\n{origin}"));
            assert_eq!(r.status, 403, "{path} {origin}: {r:?}");
            let body = String::from_utf8_lossy(&r.body);
            assert!(!body.contains("a.tgm"), "{path}: {body}");
            assert!(!r.body.windows(8).any(|w| w == magic), "{path}: {body}");
        }
    }
}

#[test]
fn no_folder_is_listed() {
    let (d, _) = one_archive();
    let v = Viewer::start(d.path());
    for path in ["/viewer/", "/pkg/", "/data/", "/viewer", "/pkg", "/data"] {
        let r = v.get(path, &[]);
        assert_eq!(r.status, 404, "{path}: {r:?}");
        let body = String::from_utf8_lossy(&r.body);
        for name in ["index.html", "viewer.js", "tgm.js", "a.tgm"] {
            assert!(!body.contains(name), "{path} lists {name}: {body}");
        }
    }
}

#[test]
fn traversals_and_absolute_targets_are_refused() {
    let (d, _) = one_archive();
    let v = Viewer::start(d.path());
    // The page's files are reachable by their plain (or escaped) names.
    assert_eq!(v.get("/viewer/viewer.js", &[]).body, b"viewer/viewer.js");
    assert_eq!(v.get("/pkg/tgm%2Ejs", &[]).body, b"pkg/tgm.js");
    assert_eq!(v.get("/%61rchives.json", &[]).status, 200);
    for path in [
        "/pkg/../viewer/viewer.js",
        "/viewer/%2e%2e/pkg/tgm.js",
        "/viewer/..%2Fpkg%2Ftgm.js",
        "/pkg/..%5c..%5cetc%5cpasswd",
        "/./pkg/tgm.js",
        "//etc/passwd",
        "/%2Fetc%2Fpasswd",
        "/data/../data/0.tgm",
        "/data/0.tgm%00",
        "/pkg/%zz",
        "http://127.0.0.1/pkg/tgm.js",
        "/etc/passwd",
    ] {
        let r = v.get(path, &[]);
        let want = if path == "/etc/passwd" { 404 } else { 400 };
        assert_eq!(r.status, want, "{path}: {r:?}");
        let body = String::from_utf8_lossy(&r.body);
        assert!(
            !body.contains("root:") && !body.contains("TENSOGRM"),
            "{path}: {body}"
        );
        assert!(
            !body.starts_with("pkg/") && !body.starts_with("viewer/"),
            "{path}: {body}"
        );
    }
}
