//! Archives at scale (issue 41): files of many ~11 KB messages, one field
//! each, served by nginx behind a loopback proxy that holds every request
//! a few milliseconds (an object store in the same region), opened and
//! listed by tgm and by the reference in the same run: requests, bytes
//! and wall time of each.

use std::time::{Duration, Instant};

use crate::fault_proxy::{Fault, FaultProxy};
use crate::readers::Reader;
use crate::servers::Http;
use crate::{measure, Cost};

/// float32 values of each message's one object: about 11 KB a message.
const VALUES: usize = 2_700;

/// One field per message, distinct values per message (the `first`
/// message's values are those of message `first` of a longer run).
pub fn fields(messages: usize, first: usize) -> Vec<u8> {
    let d = tgm::ObjectDescriptor::new(tgm::Dtype::Float32, vec![VALUES as u64])
        .with_byte_order(tgm::ByteOrder::Little);
    let mut out = Vec::new();
    for m in first..first + messages {
        let v: Vec<u8> = (0..VALUES)
            .map(|k| (m * 7 + k) as f32 * 0.5)
            .flat_map(f32::to_le_bytes)
            .collect();
        let bytes = tgm::encode(
            &tgm::GlobalMetadata::default(),
            &[(&d, &v)],
            &tgm::EncodeOptions::new(),
        )
        .expect("encode a field");
        out.extend_from_slice(&bytes);
    }
    out
}

/// One measured operation: its cost and wall time.
pub struct Timed {
    pub operation: String,
    pub reader: &'static str,
    pub cost: Cost,
    pub time: Duration,
}

/// What to run on one file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    /// Locate every message.
    Open,
    /// Open, then metadata and descriptors of every message.
    List,
}

fn run_op(r: Reader, url: &str, op: Op, messages: usize) -> Result<(), String> {
    let f = r.open(url)?;
    let n = f.messages()?;
    if n != messages {
        return Err(format!("{}: {n} messages, expected {messages}", r.name()));
    }
    if op == Op::List {
        let objects = f.list()?;
        if objects != messages {
            return Err(format!("{}: listed {objects} objects", r.name()));
        }
    }
    Ok(())
}

/// The sizes of the run: the 1,600 and 10,080 messages, or a
/// tenth of them.
pub fn run(http: &Http, quick: bool, delay_ms: u64) -> Result<Vec<Timed>, String> {
    let proxy = FaultProxy::start(&http.base_url);
    let delay = Fault::Delay(Duration::from_millis(delay_ms));
    proxy.fault("GET", "", delay, usize::MAX);
    proxy.fault("HEAD", "", delay, usize::MAX);
    let (small, large) = if quick { (160, 1_008) } else { (1_600, 10_080) };
    let mut out = Vec::new();
    let mut one = |name: &str, url: &str, what: String, r: Reader, op: Op, n: usize| {
        let t0 = Instant::now();
        let ((), cost) = measure(http, name, || run_op(r, url, op, n))?;
        out.push(Timed {
            operation: what,
            reader: r.name(),
            cost,
            time: t0.elapsed(),
        });
        Ok::<(), String>(())
    };
    for n in [small, large] {
        let name = format!("scale/fields-{n}.tgm");
        let bytes = fields(n, 0);
        let plain = http.put(&name, &bytes);
        let url = plain.replace(&http.base_url, &proxy.endpoint);
        let size = bytes.len();
        let open = format!("open {n} fields of {size} bytes, no catalogue");
        let list = format!("list {n} fields, no catalogue (open + metadata and descriptors)");
        one(&name, &url, open.clone(), Reader::Tgm, Op::Open, n)?;
        one(&name, &url, list.clone(), Reader::Tgm, Op::List, n)?;
        if n == small {
            one(&name, &url, open.clone(), Reader::TgmExact, Op::Open, n)?;
            one(&name, &url, list.clone(), Reader::TgmExact, Op::List, n)?;
        }
        one(&name, &url, open, Reader::Reference, Op::Open, n)?;
        if n == small {
            one(&name, &url, list, Reader::Reference, Op::List, n)?;
        }
        if n == large {
            let cname = format!("scale/fields-{n}-catalogued.tgm");
            let curl = http
                .put(&cname, &crate::files::with_catalogue(&bytes))
                .replace(&http.base_url, &proxy.endpoint);
            let what = format!("list {n} fields ended with a tgm catalogue");
            one(&cname, &curl, what, Reader::Tgm, Op::List, n)?;
        }
    }
    let archives = if quick { 100 } else { 1_000 };
    out.extend(crate::many::run(http, &proxy.endpoint, archives)?);
    Ok(out)
}

/// Prints the table of `rows`; true when, on every file, tgm's listing
/// took no longer than the reference's open.
pub fn print(rows: &[Timed], delay_ms: u64) -> bool {
    println!("| operation ({delay_ms} ms per request) | reader | requests | bytes | wall time |");
    println!("|---|---|---:|---:|---:|");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {:.2} s |",
            r.operation,
            r.reader,
            r.cost.requests,
            r.cost.bytes,
            r.time.as_secs_f64()
        );
    }
    let mut ok = true;
    for list in rows
        .iter()
        .filter(|r| r.reader == Reader::Tgm.name() && r.operation.contains("no catalogue"))
        .filter(|r| r.operation.starts_with("list"))
    {
        let n = list.operation.split_whitespace().nth(1).unwrap_or_default();
        let reference = rows.iter().find(|r| {
            r.reader == Reader::Reference.name() && r.operation.starts_with(&format!("open {n} "))
        });
        if let Some(open) = reference {
            let wins = list.time <= open.time;
            ok &= wins;
            eprintln!(
                "{n} fields: tgm lists in {:.2} s, the reference opens in {:.2} s{}",
                list.time.as_secs_f64(),
                open.time.as_secs_f64(),
                if wins { "" } else { " ⚠" }
            );
        }
    }
    ok
}
