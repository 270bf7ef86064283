//! Scanning, indexing and salvage stay linear on crafted input
//! (`spec/threat-model.md` §1): the work a pass does is counted, not timed.

use tgm::__fuzz::Scanner;
use tgm::file::salvage;
use tgm::{Limits, TgmFile};

const SIZE: usize = 4 << 20;

/// A streaming preamble (declared length 0) repeated: every one is a
/// candidate whose end must be searched for.
fn streaming_preambles() -> Vec<u8> {
    let mut pre = b"TENSOGRM".to_vec();
    pre.extend_from_slice(&[0, 3, 0, 1, 0, 0, 0, 0]);
    pre.extend_from_slice(&[0; 8]);
    pre.iter().copied().cycle().take(SIZE).collect()
}

/// 96-byte data frames chained end to end. Inside each: an end magic, then a
/// message preamble declaring `declared(frame start)`, then the header of a
/// 48-byte frame that ends where the outer frame ends, so that the frame
/// walk of every candidate joins the shared chain.
fn shared_chain(end_magic_inside: bool, declared: impl Fn(usize) -> u64) -> Vec<u8> {
    let mut buf = Vec::with_capacity(SIZE + 24);
    while buf.len() + 96 <= SIZE {
        let at = buf.len();
        let mut f = [0u8; 96];
        f[0..2].copy_from_slice(b"FR");
        f[2..4].copy_from_slice(&9u16.to_be_bytes());
        f[4..6].copy_from_slice(&1u16.to_be_bytes());
        f[8..16].copy_from_slice(&96u64.to_be_bytes());
        if end_magic_inside {
            f[16..24].copy_from_slice(b"39277777");
        }
        f[24..32].copy_from_slice(b"TENSOGRM");
        f[32..34].copy_from_slice(&3u16.to_be_bytes());
        f[34..36].copy_from_slice(&0xffffu16.to_be_bytes());
        f[40..48].copy_from_slice(&declared(at + 24).to_be_bytes());
        f[48..50].copy_from_slice(b"FR");
        f[50..52].copy_from_slice(&9u16.to_be_bytes());
        f[52..54].copy_from_slice(&1u16.to_be_bytes());
        f[56..64].copy_from_slice(&48u64.to_be_bytes());
        f[92..96].copy_from_slice(b"ENDF");
        buf.extend_from_slice(&f);
    }
    buf
}

/// One forward pass, as `scan` makes it; returns (messages, work).
fn pass(buf: &[u8]) -> (usize, u64) {
    let limits = Limits::default();
    let mut sc = Scanner::new(buf, &limits);
    let (mut p, mut found) = (0, 0);
    while let Some(q) = sc.next_magic(p) {
        // As the file index does: the interrupted-write test, then delimiting.
        let _ = sc.is_cut_short(q);
        match sc.message_at(q) {
            Some(s) => {
                found += 1;
                p = q + s.len as usize;
            }
            None => p = q + 1,
        }
    }
    (found, sc.work())
}

fn open_and_salvage(buf: &[u8]) -> (TgmFile, tgm::file::SalvageReport) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crafted.tgm");
    std::fs::write(&path, buf).unwrap();
    let f = TgmFile::open(&path).unwrap();
    let rep = salvage(buf, &Limits::default());
    let covered: u64 = rep.messages.iter().map(|m| m.len).sum::<u64>()
        + rep.skipped.iter().map(|s| s.len).sum::<u64>();
    assert_eq!(covered, buf.len() as u64, "salvage must tile the input");
    (f, rep)
}

#[test]
fn repeated_streaming_preambles_are_scanned_in_one_pass() {
    let buf = streaming_preambles();
    let (found, work) = pass(&buf);
    assert_eq!(found, 0);
    assert!(
        work <= 2 * buf.len() as u64,
        "work {work} for {} bytes",
        buf.len()
    );
    let (f, rep) = open_and_salvage(&buf);
    assert_eq!(f.num_messages(), 0);
    assert_eq!(f.torn_tail().unwrap().len, buf.len() as u64);
    assert!(rep.messages.is_empty());
}

#[test]
fn frame_chains_shared_by_many_candidates_are_walked_once() {
    let buf = shared_chain(true, |_| 0);
    let candidates = buf.len() / 96;
    let (found, work) = pass(&buf);
    // Each candidate is delimited by the end magic in the next frame.
    assert_eq!(found, candidates - 1);
    assert!(
        work <= 3 * buf.len() as u64,
        "work {work} for {} bytes",
        buf.len()
    );
    // Without end magics nothing can be delimited; the chain still costs
    // one walk.
    let bare = shared_chain(false, |_| 0);
    let (found, work) = pass(&bare);
    assert_eq!(found, 0);
    assert!(work <= 3 * bare.len() as u64, "work {work}");
    open_and_salvage(&buf);
    open_and_salvage(&bare);
}

#[test]
fn nested_candidates_that_fail_late_exhaust_salvage_budget_not_time() {
    // Every preamble declares a length reaching the postamble at the very
    // end, so every candidate is delimited and walks the whole shared chain
    // before failing (no metadata frame).
    let mut buf = Vec::new();
    let total = {
        let n = shared_chain(false, |_| 0).len();
        n + 24
    };
    buf.extend(shared_chain(false, |start| (total - start) as u64));
    buf.extend_from_slice(&[0; 16]);
    buf.extend_from_slice(b"39277777");
    assert_eq!(buf.len(), total);
    let (found, work) = pass(&buf);
    assert_eq!(found, 1, "the first candidate spans the rest");
    assert!(work <= 2 * buf.len() as u64, "work {work}");
    let (_, rep) = open_and_salvage(&buf);
    assert!(rep.messages.is_empty());
    assert!(rep.budget_exhausted);
    assert!(
        rep.skipped
            .iter()
            .any(|s| s.reason.contains("work budget exhausted")),
        "{:?}",
        rep.skipped
    );
}
