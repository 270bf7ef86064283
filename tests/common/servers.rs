//! Real servers on loopback for the remote-archive tests: Debian's nginx for
//! HTTP range requests (its access log counts requests and bytes) and
//! `s3s-fs` for the S3 API.
//!
//! Pure std + `tempfile`; no tgm dependency, so the CLI tests and the
//! benchmark can include it with
//! `#[path = "../../tests/common/servers.rs"] mod servers;`.
//!
//! Each test binary starts at most one server of each kind, on `127.0.0.1`
//! and a free port, the first time [`http`] or [`s3`] is called. A server
//! runs under a small `sh` watchdog whose standard input is a pipe held by
//! this process; when the test process exits for any reason the pipe closes,
//! the watchdog kills the server and removes its temporary directory. The
//! servers' output goes to files in that directory, never to the test's own
//! stdout/stderr, so an orphan can never hold CI's output open.
//!
//! When a server binary is absent, [`http`] / [`s3`] report it through
//! `skip.rs` (a `SKIPPED:` line, or a panic under `TGM_NO_SKIPS=1`) and
//! return `None`. The tests that need them are `#[ignore = "needs …"]`, run
//! by `.ci/remote.sh` with `--include-ignored`.
//!
//! nginx serves the same files at these locations:
//! - `/NAME`: ordinary static file with range requests and ETags
//!   (`If-Match` honoured).
//! - `/norange/NAME`: ignores `Range` (`max_ranges 0`): always `200` with the
//!   whole body.
//! - `/flaky503/NAME`: the first request for each distinct path answers
//!   `503`; every request for that path in the next 60 seconds is served
//!   normally (a per-URI `limit_req` zone at 1 request/minute whose
//!   *rejections* are routed to the file). After 60 quiet seconds the cycle
//!   starts again, so a test should use a fresh name per scenario.
//! - `/forbidden/NAME`: always `403`.
//! - `/dav/NAME`: WebDAV `PUT` and `DELETE` (`dav_methods`, with
//!   `create_full_put_path`), for the HTTP outputs; `GET` and `HEAD` as at
//!   `/`.
#![allow(dead_code)]

#[path = "skip.rs"]
pub mod skip;

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a server may take to accept its first connection.
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// How many fresh ports to try when a server fails to start.
const START_ATTEMPTS: usize = 5;
/// How long to wait for nginx to write an access-log line.
const LOG_TIMEOUT: Duration = Duration::from_secs(10);

/// nginx serving [`Http::root`] at [`Http::base_url`].
pub struct Http {
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub base_url: String,
    /// The directory served at `/`.
    pub root: PathBuf,
    access_log: PathBuf,
    staging: PathBuf,
    marks: AtomicU64,
    _server: Server,
}

/// One line of nginx's access log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `HEAD`, ...
    pub method: String,
    /// The request path as sent, without the query string.
    pub path: String,
    /// The status nginx answered with.
    pub status: u16,
    /// Bytes of response body sent (nginx's `$body_bytes_sent`).
    pub body_bytes: u64,
    /// The request's `Range` header, if any.
    pub range: Option<String>,
    /// The request's `If-Match` header, if any.
    pub if_match: Option<String>,
}

impl Request {
    /// True when the request addressed `name` at any of the served
    /// locations (`/name`, `/norange/name`, ...).
    pub fn is_for(&self, name: &str) -> bool {
        self.path
            .strip_suffix(name)
            .is_some_and(|prefix| prefix.ends_with('/'))
    }
}

/// `s3s-fs` serving bucket [`S3::bucket`] at [`S3::endpoint`].
pub struct S3 {
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub endpoint: String,
    /// The one bucket that exists.
    pub bucket: String,
    /// The bucket's directory on disk.
    pub bucket_dir: PathBuf,
    /// Access key the server accepts.
    pub access_key: String,
    /// Secret key the server accepts.
    pub secret_key: String,
    staging: PathBuf,
    _server: Server,
}

/// The nginx of this test binary, started on first use; `None` (after a
/// `skipping:` line on standard error) when nginx is not installed.
pub fn http() -> Option<&'static Http> {
    static HTTP: OnceLock<Option<Http>> = OnceLock::new();
    HTTP.get_or_init(start_http).as_ref()
}

/// The `s3s-fs` of this test binary, started on first use; `None` (after a
/// `skipping:` line on standard error) when `s3s-fs` is not installed.
pub fn s3() -> Option<&'static S3> {
    static S3_SERVER: OnceLock<Option<S3>> = OnceLock::new();
    S3_SERVER.get_or_init(start_s3).as_ref()
}

impl Http {
    /// Writes `root/name` atomically (creating parent directories) and
    /// returns its URL.
    pub fn put(&self, name: &str, bytes: &[u8]) -> String {
        write_atomically(&self.staging, &self.root.join(checked_name(name)), bytes);
        self.url(name)
    }

    /// The URL of `name` at the plain location.
    pub fn url(&self, name: &str) -> String {
        format!("{}/{}", self.base_url, checked_name(name))
    }

    /// The URL of `name` under `/dav/`, which takes `PUT` (WebDAV).
    pub fn dav_url(&self, name: &str) -> String {
        format!("{}/dav/{}", self.base_url, checked_name(name))
    }

    /// Where nginx stores what was `PUT` at [`Http::dav_url`]`(name)`.
    pub fn dav_path(&self, name: &str) -> PathBuf {
        self.root.join("dav").join(checked_name(name))
    }

    /// The URL of `name` at a fault location: `"norange"`, `"flaky503"` or
    /// `"forbidden"` (see the module documentation).
    pub fn fault_url(&self, fault: &str, name: &str) -> String {
        assert!(
            matches!(fault, "norange" | "flaky503" | "forbidden"),
            "unknown fault location {fault:?}"
        );
        format!("{}/{fault}/{}", self.base_url, checked_name(name))
    }

    /// The current end of the access log. Every request whose response was
    /// received before this call is before the mark.
    pub fn log_mark(&self) -> usize {
        self.sync_log()
    }

    /// The requests logged after `mark`, in log order. Every request whose
    /// response was received before this call is included. Other tests of
    /// the same binary share the server: filter with [`Request::is_for`].
    pub fn requests_since(&self, mark: usize) -> Vec<Request> {
        let end = self.sync_log();
        let text = fs::read_to_string(&self.access_log).expect("read nginx access log");
        text.lines()
            .take(end)
            .skip(mark)
            .map(|line| parse_log_line(line).unwrap_or_else(|e| panic!("{e}: {line:?}")))
            .filter(|r| !r.path.starts_with("/__mark__/"))
            .collect()
    }

    /// Requests for `name` logged since `mark`, and their body bytes.
    pub fn logged(&self, mark: usize, name: &str) -> (u64, u64) {
        let r: Vec<_> = self
            .requests_since(mark)
            .into_iter()
            .filter(|r| r.is_for(name))
            .collect();
        (r.len() as u64, r.iter().map(|r| r.body_bytes).sum())
    }

    /// Sends a marker request and waits until nginx has logged it. nginx
    /// handles requests in one event loop and logs each one when it is
    /// finalised, so every request answered before the marker is logged
    /// before it. Returns the number of lines up to and including the
    /// marker.
    fn sync_log(&self) -> usize {
        let n = self.marks.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let marker = format!("/__mark__/{pid}-{n}");
        let addr: SocketAddr = self
            .base_url
            .trim_start_matches("http://")
            .parse()
            .expect("base_url is http://IP:PORT");
        let mut stream = TcpStream::connect_timeout(&addr, LOG_TIMEOUT).expect("connect to nginx");
        stream.set_read_timeout(Some(LOG_TIMEOUT)).unwrap();
        write!(
            stream,
            "GET {marker} HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        .expect("send marker request");
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply).expect("read marker reply");
        assert!(
            reply.starts_with(b"HTTP/1.1 204"),
            "marker request answered {:?}",
            String::from_utf8_lossy(&reply)
        );
        let deadline = Instant::now() + LOG_TIMEOUT;
        loop {
            let text = fs::read_to_string(&self.access_log).expect("read nginx access log");
            let needle = format!("\t{marker}\t");
            if let Some(i) = text.lines().position(|l| l.contains(&needle)) {
                return i + 1;
            }
            assert!(
                Instant::now() < deadline,
                "nginx did not log {marker} within {LOG_TIMEOUT:?}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl S3 {
    /// Makes object `key` exist with `bytes` (written into the bucket's
    /// directory atomically) and returns `s3://bucket/key`.
    pub fn put(&self, key: &str, bytes: &[u8]) -> String {
        write_atomically(
            &self.staging,
            &self.bucket_dir.join(checked_name(key)),
            bytes,
        );
        self.url(key)
    }

    /// `s3://bucket/key`.
    pub fn url(&self, key: &str) -> String {
        format!("s3://{}/{}", self.bucket, checked_name(key))
    }

    /// The environment a client needs to reach this server: endpoint, plain
    /// HTTP allowed, credentials and region.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_ALLOW_HTTP", "true".to_string()),
            ("AWS_ACCESS_KEY_ID", self.access_key.clone()),
            ("AWS_SECRET_ACCESS_KEY", self.secret_key.clone()),
            ("AWS_REGION", "us-east-1".to_string()),
        ]
    }
}

/// A server process under its watchdog. Dropping it (which statics never
/// do) or exiting the test process stops the server.
struct Server {
    watchdog: Mutex<Child>,
    lifeline: Mutex<Option<ChildStdin>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        // Closing the lifeline makes the watchdog kill the server.
        if let Ok(mut l) = self.lifeline.lock() {
            l.take();
        }
        if let Ok(mut w) = self.watchdog.lock() {
            let _ = w.wait();
        }
    }
}

/// Watchdog script: `$1` is the directory to remove afterwards, the rest is
/// the server's command line. fd 3 keeps the lifeline pipe (a background
/// list's stdin is /dev/null in a non-interactive shell); when `read` sees
/// EOF the test process has gone, so the server is killed. The script itself
/// exits when the server does, which tells the harness a start failed.
const WATCHDOG: &str = r#"
dir=$1; shift
exec 3<&0
"$@" </dev/null 3<&- &
server=$!
( read -r _ <&3; kill "$server" 2>/dev/null; sleep 1; kill -9 "$server" 2>/dev/null; rm -rf "$dir" ) &
wait "$server"
"#;

/// Starts `program args` under the watchdog, with output to `log`, and
/// waits until `port` accepts connections. `Err` carries why it did not come
/// up.
fn spawn_server(
    dir: &Path,
    program: &Path,
    args: &[String],
    port: u16,
    log: &Path,
) -> Result<Server, String> {
    let out = fs::File::create(log).map_err(|e| format!("create {}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let mut watchdog = Command::new("sh")
        .arg("-c")
        .arg(WATCHDOG)
        .arg("sh")
        .arg(dir)
        .arg(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("spawn sh: {e}"))?;
    let lifeline = watchdog.stdin.take();
    let server = Server {
        watchdog: Mutex::new(watchdog),
        lifeline: Mutex::new(lifeline),
    };
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Some(status) = server
            .watchdog
            .lock()
            .unwrap()
            .try_wait()
            .map_err(|e| e.to_string())?
        {
            let log_text = fs::read_to_string(log).unwrap_or_default();
            return Err(format!(
                "{} exited with {status}: {log_text}",
                program.display()
            ));
        }
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(server);
        }
        if Instant::now() >= deadline {
            let log_text = fs::read_to_string(log).unwrap_or_default();
            return Err(format!(
                "{} did not listen on {addr} within {START_TIMEOUT:?}: {log_text}",
                program.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A port that was free a moment ago (bound with port 0, then released).
/// The caller retries on a clash.
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

/// A temporary directory that outlives this function; the watchdog removes
/// it when the server stops.
fn server_dir(prefix: &str) -> PathBuf {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .expect("create server directory")
        .keep()
}

/// Reports an absent server (`skip.rs`).
fn skip(what: &str, hint: &str) {
    skip::skip(&format!("{what} not found ({hint})"));
}

/// `program` on `PATH`, or the first of `extra` that exists.
fn find_program(program: &str, extra: &[PathBuf]) -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(program));
    on_path.chain(extra.iter().cloned()).find(|p| p.is_file())
}

fn start_http() -> Option<Http> {
    let Some(nginx) = find_program("nginx", &[PathBuf::from("/usr/sbin/nginx")]) else {
        skip("nginx", "install Debian's nginx, or run bash .ci/remote.sh");
        return None;
    };
    let mut last_error = String::new();
    for _ in 0..START_ATTEMPTS {
        let dir = server_dir("tgm-nginx-");
        let root = dir.join("www");
        let staging = dir.join("staging");
        for d in [&root, &staging, &dir.join("tmp")] {
            fs::create_dir_all(d).expect("create nginx directories");
        }
        let port = free_port();
        let conf = dir.join("nginx.conf");
        fs::write(&conf, nginx_conf(&dir, &root, port)).expect("write nginx.conf");
        let args = vec![
            "-p".to_string(),
            path_str(&dir),
            "-c".to_string(),
            path_str(&conf),
            "-e".to_string(),
            path_str(&dir.join("error.log")),
        ];
        match spawn_server(&dir, &nginx, &args, port, &dir.join("server.log")) {
            Ok(server) => {
                return Some(Http {
                    base_url: format!("http://127.0.0.1:{port}"),
                    root,
                    access_log: dir.join("access.log"),
                    staging,
                    marks: AtomicU64::new(0),
                    _server: server,
                });
            }
            Err(e) => {
                let error_log = fs::read_to_string(dir.join("error.log")).unwrap_or_default();
                last_error = format!("{e}\n{error_log}");
                let _ = fs::remove_dir_all(&dir);
            }
        }
    }
    panic!("nginx did not start after {START_ATTEMPTS} attempts: {last_error}");
}

fn nginx_conf(dir: &Path, root: &Path, port: u16) -> String {
    let dir = path_str(dir);
    let root = path_str(root);
    format!(
        r#"daemon off;
master_process off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 512; }}
http {{
    log_format tgm "$request_method\t$request_uri\t$status\t$body_bytes_sent\t$http_range\t$http_if_match";
    access_log {dir}/access.log tgm;
    client_body_temp_path {dir}/tmp/body;
    proxy_temp_path {dir}/tmp/proxy;
    fastcgi_temp_path {dir}/tmp/fastcgi;
    uwsgi_temp_path {dir}/tmp/uwsgi;
    scgi_temp_path {dir}/tmp/scgi;
    default_type application/octet-stream;
    sendfile on;
    keepalive_requests 100000;
    keepalive_timeout 60s;
    limit_req_zone $uri zone=flaky:1m rate=1r/m;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        location / {{ }}
        location /__mark__/ {{ return 204; }}
        location /norange/ {{ alias {root}/; max_ranges 0; }}
        location /forbidden/ {{ return 403; }}
        location /dav/ {{
            dav_methods PUT DELETE;
            create_full_put_path on;
            dav_access user:rw group:r all:r;
            client_max_body_size 0;
        }}
        location /flaky503/ {{
            limit_req zone=flaky;
            limit_req_status 429;
            error_page 429 = @flaky_served;
            try_files /__never_a_file__ =503;
        }}
        location @flaky_served {{ rewrite ^/flaky503/(.*)$ /$1 break; }}
    }}
}}
"#
    )
}

fn start_s3() -> Option<S3> {
    let extra: Vec<PathBuf> = std::env::var_os("TGM_S3S_FS")
        .map(PathBuf::from)
        .into_iter()
        .chain(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .ancestors()
                .map(|a| a.join("target/tools/bin/s3s-fs")),
        )
        .collect();
    let Some(s3s_fs) = find_program("s3s-fs", &extra) else {
        skip(
            "s3s-fs",
            "cargo install --locked --root target/tools s3s-fs@0.14.1 --features binary, or run bash .ci/remote.sh",
        );
        return None;
    };
    let bucket = "tgm-test".to_string();
    let access_key = "tgm-test-access".to_string();
    let secret_key = "tgm-test-secret".to_string();
    let mut last_error = String::new();
    for _ in 0..START_ATTEMPTS {
        let dir = server_dir("tgm-s3s-");
        let data = dir.join("data");
        let bucket_dir = data.join(&bucket);
        let staging = dir.join("staging");
        for d in [&bucket_dir, &staging] {
            fs::create_dir_all(d).expect("create s3s-fs directories");
        }
        let port = free_port();
        let args = vec![
            "--host".to_string(),
            "127.0.0.1".to_string(),
            "--port".to_string(),
            port.to_string(),
            "--access-key".to_string(),
            access_key.clone(),
            "--secret-key".to_string(),
            secret_key.clone(),
            path_str(&data),
        ];
        match spawn_server(&dir, &s3s_fs, &args, port, &dir.join("server.log")) {
            Ok(server) => {
                return Some(S3 {
                    endpoint: format!("http://127.0.0.1:{port}"),
                    bucket,
                    bucket_dir,
                    access_key,
                    secret_key,
                    staging,
                    _server: server,
                });
            }
            Err(e) => {
                last_error = e;
                let _ = fs::remove_dir_all(&dir);
            }
        }
    }
    panic!("s3s-fs did not start after {START_ATTEMPTS} attempts: {last_error}");
}

/// Parses one line of the `tgm` log format: method, request URI, status,
/// body bytes, Range, If-Match, tab-separated, `-` for an absent header.
fn parse_log_line(line: &str) -> Result<Request, String> {
    let f: Vec<&str> = line.split('\t').collect();
    let [method, uri, status, bytes, range, if_match] = f[..] else {
        return Err(format!(
            "expected 6 tab-separated fields, found {}",
            f.len()
        ));
    };
    let header = |v: &str| (v != "-").then(|| unescape(v));
    let uri = unescape(uri);
    Ok(Request {
        method: method.to_string(),
        path: uri.split('?').next().unwrap_or(&uri).to_string(),
        status: status.parse().map_err(|e| format!("status: {e}"))?,
        body_bytes: bytes.parse().map_err(|e| format!("body bytes: {e}"))?,
        range: header(range),
        if_match: header(if_match),
    })
}

/// Undoes nginx's default log escaping: `"`, `\\` and bytes outside
/// printable ASCII are written as `\xHH`.
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 2..i + 4)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (
            b[i],
            b.get(i + 1),
            hex.and_then(|h| u8::from_str_radix(h, 16).ok()),
        ) {
            (b'\\', Some(b'x'), Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Rejects names that would escape the served directory.
fn checked_name(name: &str) -> &str {
    assert!(
        !name.is_empty()
            && !name.starts_with('/')
            && name
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != ".."),
        "object name {name:?} must be a relative path without . or .. components"
    );
    name
}

/// Writes `bytes` to a staging file and renames it over `dest`, so a server
/// never serves a half-written file.
fn write_atomically(staging: &Path, dest: &Path, bytes: &[u8]) {
    if let Some(parent) = dest.parent() {
        fs::create_dir_all(parent).expect("create object directory");
    }
    let mut tmp = tempfile::NamedTempFile::new_in(staging).expect("create staging file");
    tmp.write_all(bytes).expect("write staging file");
    tmp.persist(dest)
        .unwrap_or_else(|e| panic!("rename into {}: {e}", dest.display()));
}

fn path_str(p: &Path) -> String {
    p.to_str()
        .unwrap_or_else(|| panic!("non-UTF-8 path {}", p.display()))
        .to_string()
}

/// Reads a whole response with a minimal HTTP/1.0 client (status line,
/// headers, body), for tests that need to see exactly what a server sends.
pub fn raw_get(url: &str, headers: &[(&str, &str)]) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let rest = url
        .strip_prefix("http://")
        .unwrap_or_else(|| panic!("raw_get needs an http:// URL, got {url}"));
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let addr: SocketAddr = authority.parse().expect("http://IP:PORT/...");
    let mut stream = TcpStream::connect_timeout(&addr, LOG_TIMEOUT).expect("connect");
    stream.set_read_timeout(Some(LOG_TIMEOUT)).unwrap();
    let mut req = format!("GET {path} HTTP/1.0\r\nHost: {authority}\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    stream.write_all(req.as_bytes()).expect("send request");
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).expect("status line");
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let mut response_headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header line");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            response_headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let mut body = Vec::new();
    reader.read_to_end(&mut body).expect("body");
    (status, response_headers, body)
}
