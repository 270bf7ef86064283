//! The viewer's listener: a bounded pool of worker threads, each serving
//! one connection at a time under read and write timeouts, and a cap on
//! the connections of one client address; a connection beyond the pool
//! or the cap is answered `503` (`spec/wasm.md` §3).

use std::collections::HashMap;
use std::io::Read;
use std::net::{IpAddr, Shutdown, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::conn;
use super::guard::Guard;
use super::http::Site;
use super::response::Response;
use crate::error::{CliError, CliResult};

/// How long and how many.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Longest wait for a whole request head, and the idle time of a
    /// connection kept open between requests.
    pub read: Duration,
    /// Longest wait for one write to progress (a client that stops
    /// reading loses its connection after this).
    pub write: Duration,
    /// Connections served at once: the worker threads.
    pub workers: usize,
    /// Connections of one client address served at once (below
    /// `workers`, so that one client cannot take every worker).
    pub per_client: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            read: Duration::from_secs(10),
            write: Duration::from_secs(10),
            workers: 32,
            per_client: 16,
        }
    }
}

/// Listens on 127.0.0.1:`port` (0: any free port).
pub fn bind(port: u16) -> CliResult<TcpListener> {
    TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| CliError::Failed(format!("cannot listen on 127.0.0.1:{port}: {e}")))
}

/// Connections being served, in all and by client address.
#[derive(Default)]
struct Counts {
    total: usize,
    by_client: HashMap<IpAddr, usize>,
}

/// A place in the pool; given back when dropped.
struct Ticket {
    counts: Arc<Mutex<Counts>>,
    client: IpAddr,
}

impl Ticket {
    fn take(counts: &Arc<Mutex<Counts>>, client: IpAddr, limits: &Limits) -> Option<Ticket> {
        let mut c = counts.lock().unwrap_or_else(|e| e.into_inner());
        let mine = c.by_client.get(&client).copied().unwrap_or(0);
        if c.total >= limits.workers || mine >= limits.per_client {
            return None;
        }
        c.total += 1;
        c.by_client.insert(client, mine + 1);
        Some(Ticket {
            counts: Arc::clone(counts),
            client,
        })
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        c.total -= 1;
        if let Some(n) = c.by_client.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                c.by_client.remove(&self.client);
            }
        }
    }
}

/// Threads taking jobs from one queue.
fn pool<T: Send + 'static>(
    n: usize,
    capacity: usize,
    work: impl Fn(T) + Send + Sync + 'static,
) -> SyncSender<T> {
    let (tx, rx) = sync_channel::<T>(capacity);
    let rx: Arc<Mutex<Receiver<T>>> = Arc::new(Mutex::new(rx));
    let work = Arc::new(work);
    for _ in 0..n {
        let (rx, work) = (Arc::clone(&rx), Arc::clone(&work));
        std::thread::spawn(move || loop {
            let job = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
            let Ok(job) = job else { return };
            // A panic ends the connection, not the worker.
            let _ = catch_unwind(AssertUnwindSafe(|| work(job)));
        });
    }
    tx
}

/// Answers `503` to a connection the pool has no place for: its request
/// is read first (briefly), so that closing does not reset it.
fn refuse(mut s: TcpStream) {
    let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
    let _ = s.set_write_timeout(Some(Duration::from_secs(1)));
    let _ = s.read(&mut [0; 16 * 1024]);
    let busy = Response::text(503, "the viewer is busy: too many connections; try again")
        .with("Retry-After", "1");
    let _ = busy.write_to(&mut s, false, false);
    let _ = s.shutdown(Shutdown::Write);
}

/// Answers connections until the process is stopped.
pub fn serve(listener: TcpListener, site: Site, limits: Limits) {
    let bound = listener
        .local_addr()
        .unwrap_or_else(|_| std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
    let guard = Guard::bound(bound);
    let site = Arc::new(site);
    let lim = limits.clone();
    let workers = pool(
        limits.workers,
        limits.workers,
        move |(s, _ticket): (TcpStream, Ticket)| conn::handle(s, &site, &guard, &lim),
    );
    let refusals = pool(4, 256, refuse);
    let counts = Arc::new(Mutex::new(Counts::default()));
    for s in listener.incoming() {
        let s = match s {
            Ok(s) => s,
            Err(_) => {
                // Out of descriptors, or a connection reset before it
                // was accepted: wait a little rather than spin.
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
        };
        let ticket = s
            .peer_addr()
            .ok()
            .and_then(|a| Ticket::take(&counts, a.ip(), &limits));
        let refused = match ticket {
            Some(t) => workers.try_send((s, t)).err().map(|e| match e {
                std::sync::mpsc::TrySendError::Full((s, _))
                | std::sync::mpsc::TrySendError::Disconnected((s, _)) => s,
            }),
            None => Some(s),
        };
        if let Some(s) = refused {
            // With every refuser busy, accepting waits: new clients wait
            // in the listen queue rather than being dropped.
            let _ = refusals.send(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::archives::Archive;
    use crate::view::assets::Assets;
    use std::io::Write;

    /// Longest wait for anything: a hang becomes a failure.
    const PATIENCE: Duration = Duration::from_secs(20);

    /// A server with short timeouts, two workers, serving one large
    /// (sparse) archive; its port and the folder to keep.
    fn start() -> (u16, tempfile::TempDir) {
        let d = crate::view::assets::fake_root();
        let big = d.path().join("big.tgm");
        let f = std::fs::File::create(&big).unwrap();
        (&f).write_all(b"TENSOGRM").unwrap();
        f.set_len(256 << 20).unwrap();
        let site = Site {
            assets: Assets::find(Some(d.path())).unwrap(),
            archives: vec![Archive::Local {
                name: "big.tgm".into(),
                path: std::fs::canonicalize(&big).unwrap(),
            }],
        };
        let limits = Limits {
            read: Duration::from_secs(1),
            write: Duration::from_secs(2),
            workers: 2,
            per_client: 2,
        };
        let listener = bind(0).unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || serve(listener, site, limits));
        (port, d)
    }

    fn send(port: u16, req: &str) -> TcpStream {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(PATIENCE)).unwrap();
        s.write_all(req.as_bytes()).unwrap();
        s
    }

    fn status(port: u16, path: &str) -> String {
        let req =
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
        let mut out = String::new();
        let _ = send(port, &req).read_to_string(&mut out);
        out.split("\r\n").next().unwrap_or("").to_string()
    }

    #[test]
    fn clients_that_stop_reading_are_refused_beyond_the_pool_then_dropped() {
        let (port, _keep) = start();
        let req = format!("GET /data/0.tgm HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
        let stalled: Vec<_> = (0..2).map(|_| send(port, &req)).collect();
        // Both workers hold a stalled client: the next one is told so,
        // until the write timeout frees them.
        let mut seen = Vec::new();
        let start = std::time::Instant::now();
        loop {
            let s = status(port, "/archives.json");
            if s.ends_with("200 OK") {
                break;
            }
            assert!(s.ends_with("503 Service Unavailable"), "{s}");
            seen.push(s);
            assert!(start.elapsed() < PATIENCE, "never freed");
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(!seen.is_empty(), "the stalled clients held no worker");
        // One freed worker ends the loop; the other stalled client may be
        // inside its write timeout still (on a loaded machine), and reading
        // it now would let its write go on. Past the timeout both are closed.
        std::thread::sleep(Duration::from_secs(3));
        // Their connections were closed: what they can still read ends.
        for mut s in stalled {
            let mut sink = Vec::new();
            s.read_to_end(&mut sink).unwrap();
            assert!(sink.len() < 256 << 20);
        }
    }

    #[test]
    fn a_head_that_never_ends_is_dropped_after_the_read_timeout() {
        let (port, _keep) = start();
        let mut s = send(port, "GET / HTTP/1.1\r\nHost: 127.0.0.1");
        let mut rest = Vec::new();
        s.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
        // And an idle kept-alive connection is closed the same way.
        let req = format!("GET /archives.json HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
        let mut s = send(port, &req);
        let mut all = String::new();
        s.read_to_string(&mut all).unwrap();
        assert!(all.starts_with("HTTP/1.1 200 OK"), "{all}");
        assert!(all.contains("Connection: keep-alive"), "{all}");
    }
}
