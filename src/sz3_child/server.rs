//! The child's side: a freshly executed process that answers decode
//! requests on its standard input until the parent closes it
//! (`spec/pipeline.md` §4.7). Setting limits and signal dispositions and
//! viewing the values as bytes need `unsafe`.
#![allow(unsafe_code)]

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsFd;

use super::protocol::{Request, Response, HELLO, MESSAGE_MAX};
use crate::dtype::ByteOrder;
use crate::pipeline::codec::compression::sz3;

/// Address space a child may keep after answering (allocator caches)
/// before it retires rather than carry it into the next decode's budget.
const RETIRE_GROWTH: u64 = 16 << 20;

/// Runs the child loop on standard input and ends the process: 0 when the
/// parent closed the socket, 2 on anything that is not this protocol.
pub fn serve() -> ! {
    confine();
    let code = match std::io::stdin().as_fd().try_clone_to_owned() {
        Ok(fd) => answer_all(File::from(fd)),
        Err(_) => 2,
    };
    std::process::exit(code)
}

/// Crashes end the child with the default action (not a host's handler,
/// such as Python's or a fuzzer's), no core file is written, and no
/// descriptor of the parent but the socket stays open (an idle child must
/// not hold a pipe of the parent's open).
fn confine() {
    for sig in [
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGILL,
        libc::SIGFPE,
        libc::SIGABRT,
        libc::SIGTRAP,
        libc::SIGSYS,
        libc::SIGINT,
        libc::SIGTERM,
    ] {
        // SAFETY: restoring a default disposition.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
    let no_core = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain system calls on valid arguments; descriptors 0-2 stay.
    unsafe {
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
    }
}

/// This process's address-space size, from `/proc/self/statm`.
fn address_space() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().next()?.parse().ok()?;
    Some(pages.saturating_mul(crate::buffer::page_size() as u64))
}

/// Sets the soft address-space limit, below the hard one.
fn limit_address_space(bytes: u64) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain system calls on a valid struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_AS, &mut lim) == 0 {
            lim.rlim_cur = bytes.min(lim.rlim_max);
            libc::setrlimit(libc::RLIMIT_AS, &lim);
        }
    }
}

/// Answers requests until end of input; the exit code.
fn answer_all(mut sock: File) -> i32 {
    if sock.write_all(&HELLO).is_err() {
        return 2;
    }
    let Some(baseline) = address_space() else {
        return 2;
    };
    loop {
        let mut head = [0u8; Request::LEN];
        match sock.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return 0,
            Err(_) => return 2,
        }
        let Some(req) = Request::from_bytes(&head) else {
            return 2;
        };
        limit_address_space(baseline.saturating_add(req.memory));
        let outcome = decode(&mut sock, req);
        let retire = outcome.is_err()
            || address_space().is_none_or(|a| a > baseline.saturating_add(RETIRE_GROWTH));
        let sent = match outcome {
            Ok(values) => send_values(&mut sock, &values, retire),
            Err(msg) => send_refusal(&mut sock, &msg),
        };
        if sent.is_err() {
            return 2;
        }
        if retire {
            return 0;
        }
    }
}

/// Reads the stream and decodes it; the values in the requested order,
/// or why not. A refusal leaves the stream partly read, so the child
/// retires after it.
fn decode(sock: &mut File, req: Request) -> Result<Vec<f64>, String> {
    let stream_len = usize::try_from(req.stream_len).map_err(|_| "stream too long".to_string())?;
    let n = usize::try_from(req.values)
        .ok()
        .filter(|n| n.checked_mul(8).is_some())
        .ok_or_else(|| format!("sz3 cannot decode {} values here", req.values))?;
    let mut stream = Vec::new();
    stream
        .try_reserve_exact(stream_len)
        .map_err(|_| format!("sz3 child cannot allocate {stream_len} bytes for the stream"))?;
    sock.take(req.stream_len)
        .read_to_end(&mut stream)
        .map_err(|e| format!("sz3 child cannot read the stream: {e}"))?;
    if stream.len() != stream_len {
        return Err("sz3 child: the stream ended early".into());
    }
    let mut values = Vec::new();
    values.try_reserve_exact(n).map_err(|_| {
        format!("sz3 child cannot allocate {n} float64 values within its memory budget")
    })?;
    values.resize(n, 0.0f64);
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        sz3::decode_in_process(&stream, &mut values)
    }))
    .map_err(|_| "sz3 decoder panicked".to_string())?
    .map_err(|e| e.detail().to_string())?;
    if req.order != ByteOrder::native() {
        for v in &mut values {
            *v = f64::from_bits(v.to_bits().swap_bytes());
        }
    }
    Ok(values)
}

fn send_values(sock: &mut File, values: &[f64], retire: bool) -> std::io::Result<()> {
    let head = Response {
        ok: true,
        retire,
        message_len: 0,
    };
    sock.write_all(&head.to_bytes())?;
    // SAFETY: f64 has no padding and u8 no alignment; the byte view covers
    // exactly the values' memory and lives no longer than the borrow.
    let bytes = unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    };
    sock.write_all(bytes)
}

fn send_refusal(sock: &mut File, msg: &str) -> std::io::Result<()> {
    let mut end = msg.len().min(MESSAGE_MAX);
    while !msg.is_char_boundary(end) {
        end -= 1;
    }
    let head = Response {
        ok: false,
        retire: true,
        message_len: end as u32,
    };
    sock.write_all(&head.to_bytes())?;
    sock.write_all(&msg.as_bytes()[..end])
}
