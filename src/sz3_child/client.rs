//! The parent's side: starting helper children, keeping idle ones for
//! the next decode, and one decode under a time budget, the values read
//! straight into the caller's buffer (`spec/pipeline.md` §4.7). Sending
//! without SIGPIPE and reaping need `unsafe` system calls.
#![allow(unsafe_code)]

use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::budget::{self, Budget};
use super::helper::{self, Helper};
use super::protocol::{Request, Response, HELLO};
use crate::dtype::ByteOrder;
use crate::error::{Error, Result};

/// How long a new child may take to greet (a Python interpreter starting
/// on a loaded machine).
const START_TIME: Duration = Duration::from_secs(30);

/// One running child and the socket to it.
struct Child {
    process: std::process::Child,
    sock: UnixStream,
    helper: String,
}

/// Children waiting for a request, owned by the process that started them
/// (a forked copy of the host must not use its parent's).
struct Idle {
    owner: u32,
    children: Vec<Child>,
}

static IDLE: Mutex<Idle> = Mutex::new(Idle {
    owner: 0,
    children: Vec::new(),
});

/// At the host's exit idle children are stopped and reaped, rather than
/// left to exit on their own and be adopted by an init that may never reap
/// them. Registered with the first child.
extern "C" fn stop_idle_at_exit() {
    if let Ok(mut idle) = IDLE.try_lock() {
        if idle.owner == std::process::id() {
            for c in std::mem::take(&mut idle.children) {
                c.stop();
            }
        }
    }
}

static AT_EXIT: std::sync::Once = std::sync::Once::new();

/// Most idle children kept.
fn idle_max() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(16))
}

/// Why a decode failed, before the child's exit status is known.
enum Failure {
    /// The child refused the stream with this message.
    Refused(String),
    /// The time budget ran out.
    Late(Duration),
    /// The socket failed, closed early or carried something else.
    Broken(String),
}

/// Decodes `stream` into `out` (whole float64 values in `order`) in a
/// helper child.
pub(crate) fn decode(stream: &[u8], order: ByteOrder, out: &mut [u8]) -> Result<()> {
    let budget = Budget::new(out.len() as u64, stream.len() as u64, budget::ceiling());
    let mut child = take()?;
    let req = Request {
        order,
        values: (out.len() / 8) as u64,
        memory: budget.memory,
        stream_len: stream.len() as u64,
    };
    match child.request(req, stream, out, budget.time) {
        Ok(retire) => {
            if retire {
                child.stop();
            } else {
                give_back(child);
            }
            Ok(())
        }
        Err(f) => {
            let helper = std::mem::take(&mut child.helper);
            let status = child.stop();
            Err(explain(f, status, &helper, budget))
        }
    }
}

/// The error for a failed decode.
fn explain(
    f: Failure,
    status: Option<std::process::ExitStatus>,
    helper: &str,
    budget: Budget,
) -> Error {
    let mib = budget.memory >> 20;
    Error::codec(match (f, status.and_then(|s| s.signal())) {
        (Failure::Refused(msg), _) => msg,
        (Failure::Late(t), _) => format!(
            "sz3 decoder did not finish within {:.0} s; its child process was stopped",
            t.as_secs_f64()
        ),
        (Failure::Broken(_), Some(sig)) => format!(
            "sz3 decoder crashed on this stream (signal {sig}, address-space budget {mib} MiB); it ran in a child process, so nothing else was affected"
        ),
        (Failure::Broken(why), None) => format!(
            "sz3 decoder's child process ({helper}) failed: {why}{}",
            status
                .and_then(|s| s.code())
                .map(|c| format!(", exit status {c}"))
                .unwrap_or_default()
        ),
    })
}

/// Stops every idle child (the helper changed).
pub(crate) fn forget_idle() {
    let children = match IDLE.lock() {
        Ok(mut idle) => std::mem::take(&mut idle.children),
        Err(_) => return,
    };
    for c in children {
        c.stop();
    }
}

/// An idle child of this process, or a new one.
fn take() -> Result<Child> {
    if let Ok(mut idle) = IDLE.lock() {
        let me = std::process::id();
        if idle.owner != me {
            // Inherited through a fork: the children are the parent's.
            for c in std::mem::take(&mut idle.children) {
                std::mem::forget(c.process);
            }
            idle.owner = me;
        }
        if let Some(c) = idle.children.pop() {
            return Ok(c);
        }
    }
    Child::start(&helper::locate()?)
}

fn give_back(child: Child) {
    AT_EXIT.call_once(|| {
        // SAFETY: registers a plain function; it only takes a lock without
        // waiting and stops children.
        unsafe {
            libc::atexit(stop_idle_at_exit);
        }
    });
    if let Ok(mut idle) = IDLE.lock() {
        if idle.owner == std::process::id() && idle.children.len() < idle_max() {
            idle.children.push(child);
            return;
        }
    }
    child.stop();
}

impl Child {
    /// Starts `helper` on one end of a socket and waits for its greeting.
    fn start(helper: &Helper) -> Result<Child> {
        let describe = helper.describe();
        let (sock, theirs) = UnixStream::pair()
            .map_err(|e| Error::codec(format!("cannot make a socket for the sz3 child: {e}")))?;
        let process = Command::new(helper.program())
            .args(helper.args())
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Out of the terminal's process group: Ctrl-C reaches the
            // parent, which then closes the socket.
            .process_group(0)
            .spawn()
            .map_err(|e| {
                Error::codec(format!(
                    "cannot start the sz3 helper `{describe}`: {e} (set {} to the {} executable)",
                    helper::HELPER_ENV,
                    helper::HELPER_NAME
                ))
            })?;
        let child = Child {
            process,
            sock,
            helper: describe.clone(),
        };
        let mut hello = [0u8; HELLO.len()];
        let start = Instant::now();
        match read_all(&child.sock, &mut hello, start, START_TIME) {
            Ok(()) if hello == HELLO => Ok(child),
            outcome => {
                let status = child.stop();
                let why = match outcome {
                    Ok(()) => "it answered something else".to_string(),
                    Err(Failure::Late(_)) => {
                        format!("it did not answer within {} s", START_TIME.as_secs())
                    }
                    Err(Failure::Broken(w) | Failure::Refused(w)) => w,
                };
                Err(Error::codec(format!(
                    "the sz3 helper `{describe}` did not start as one: {why}{} (set {} to the {} executable)",
                    status
                        .map(|s| format!(", {s}"))
                        .unwrap_or_default(),
                    helper::HELPER_ENV,
                    helper::HELPER_NAME
                )))
            }
        }
    }

    /// Sends one request and reads its answer into `out`; whether the
    /// child retires.
    fn request(
        &mut self,
        req: Request,
        stream: &[u8],
        out: &mut [u8],
        time: Duration,
    ) -> std::result::Result<bool, Failure> {
        let start = Instant::now();
        send_all(&self.sock, &req.to_bytes(), start, time)?;
        send_all(&self.sock, stream, start, time)?;
        let mut head = [0u8; Response::LEN];
        read_all(&self.sock, &mut head, start, time)?;
        let resp = Response::from_bytes(&head)
            .ok_or_else(|| Failure::Broken("it answered something else".into()))?;
        if !resp.ok {
            let mut msg = vec![0u8; resp.message_len as usize];
            read_all(&self.sock, &mut msg, start, time)?;
            return Err(Failure::Refused(String::from_utf8_lossy(&msg).into_owned()));
        }
        read_all(&self.sock, out, start, time)?;
        Ok(resp.retire)
    }

    /// Kills and reaps the child; its exit status when it could be reaped
    /// (a host that reaps children itself leaves none).
    fn stop(mut self) -> Option<std::process::ExitStatus> {
        let _ = self.process.kill();
        self.process.wait().ok()
    }
}

/// Time left of `time` since `start`, or the failure when none is.
fn left(start: Instant, time: Duration) -> std::result::Result<Duration, Failure> {
    time.checked_sub(start.elapsed())
        .filter(|d| !d.is_zero())
        .ok_or(Failure::Late(time))
}

fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// Fills `buf` from `sock` before `time` has passed since `start`.
fn read_all(
    mut sock: &UnixStream,
    buf: &mut [u8],
    start: Instant,
    time: Duration,
) -> std::result::Result<(), Failure> {
    let mut at = 0;
    while at < buf.len() {
        let _ = sock.set_read_timeout(Some(left(start, time)?));
        match sock.read(&mut buf[at..]) {
            Ok(0) => return Err(Failure::Broken("it closed its end early".into())),
            Ok(k) => at += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if timed_out(&e) => {}
            Err(e) => return Err(Failure::Broken(e.to_string())),
        }
    }
    Ok(())
}

/// Sends all of `buf` before `time` has passed since `start`, without
/// SIGPIPE when the child is gone.
fn send_all(
    sock: &UnixStream,
    buf: &[u8],
    start: Instant,
    time: Duration,
) -> std::result::Result<(), Failure> {
    let mut at = 0;
    while at < buf.len() {
        let _ = sock.set_write_timeout(Some(left(start, time)?));
        let rest = &buf[at..];
        // SAFETY: sending from a live slice on an open socket.
        let r = unsafe {
            libc::send(
                sock.as_raw_fd(),
                rest.as_ptr().cast(),
                rest.len(),
                libc::MSG_NOSIGNAL,
            )
        };
        if r >= 0 {
            at += r as usize;
            continue;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted && !timed_out(&e) {
            return Err(Failure::Broken(e.to_string()));
        }
    }
    Ok(())
}

/// The bytes of `values`, for reading them straight from the socket.
pub(crate) fn as_bytes_mut(values: &mut [f64]) -> &mut [u8] {
    // SAFETY: every byte pattern is a valid f64, f64 has no padding and u8
    // no alignment; the view covers exactly the values and borrows them.
    unsafe {
        std::slice::from_raw_parts_mut(
            values.as_mut_ptr().cast::<u8>(),
            std::mem::size_of_val(values),
        )
    }
}
