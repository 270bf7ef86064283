//! Whole messages: decoding under every option set, scanning, and
//! independence from how the bytes are fed and where they sit.

use tgm::__fuzz::{scan_backward, scan_with};
use tgm::{ByteOrder, DecodedMessage, Message, Result, Verify};

use super::common::{fuzz_limits, options, u16_at};

/// Equality of decoded messages; metadata may hold NaN, so it is compared
/// by its canonical encoding.
pub fn assert_same(a: &DecodedMessage, b: &DecodedMessage, what: &str) {
    assert_eq!(a.objects.len(), b.objects.len(), "{what}: object count");
    for (x, y) in a.objects.iter().zip(&b.objects) {
        assert_eq!(x.data, y.data, "{what}: object data");
        assert_eq!(x.descriptor.to_cbor(), y.descriptor.to_cbor(), "{what}");
    }
    assert_eq!(
        a.metadata.to_cbor(),
        b.metadata.to_cbor(),
        "{what}: metadata"
    );
}

/// Same outcome, with error offsets of `b` shifted by `shift`.
fn assert_same_outcome(
    a: &Result<DecodedMessage>,
    b: &Result<DecodedMessage>,
    shift: u64,
    what: &str,
) {
    match (a, b) {
        (Ok(a), Ok(b)) => assert_same(a, b, what),
        (Err(a), Err(b)) => {
            assert_eq!(a.kind(), b.kind(), "{what}: {a} vs {b}");
            assert_eq!(
                a.offset().map(|o| o + shift),
                b.offset(),
                "{what}: {a} vs {b}"
            );
            assert_eq!(a.object_index(), b.object_index(), "{what}: {a} vs {b}");
        }
        _ => panic!("{what}: one decodes, the other fails: {a:?} vs {b:?}"),
    }
}

/// Whole-buffer decode with every option set and every entry point.
pub fn decode(data: &[u8]) {
    let Some((&sel, msg)) = data.split_first() else {
        return;
    };
    let opts = options(sel);
    let whole = tgm::decode(msg, &opts);
    let _ = tgm::decode_metadata(msg, &opts);
    let _ = tgm::decode_descriptors(msg, &opts);
    for i in 0..3 {
        let _ = tgm::decode_object(msg, i, &opts);
        let _ = tgm::decode_range(msg, i, &[(0, 1), (1, 3)], &opts);
    }
    validate(msg, &opts.limits);
    if let Ok(m) = Message::parse_with(msg, 0, &opts.limits) {
        let _ = m.verify(opts.verify);
        let _ = m.index();
        let _ = m.hash_table();
        for i in 0..m.num_objects().min(8) {
            if let Ok(o) = m.object(i) {
                let _ = o.decode(&opts);
                let _ = o.masks(&opts.limits);
            }
        }
    }
    // The same bytes at another address and another base offset.
    let shift = 1000;
    let mut moved = vec![0xa5u8; 3];
    moved.extend_from_slice(msg);
    let again = Message::parse_with(&moved[3..], shift, &opts.limits).and_then(|m| m.decode(&opts));
    assert_same_outcome(&whole, &again, shift, "decode at another address and base");
    let Ok(ok) = &whole else { return };
    // Verification adds errors, never changes values.
    if opts.verify != Verify::Off {
        let off = tgm::decode(msg, &opts.clone().verify(Verify::Off))
            .expect("a message that verifies decodes unverified");
        assert_same(ok, &off, "verified vs unverified");
    }
    // Stored and native order differ exactly by a per-element byte swap.
    let flipped = tgm::decode(
        msg,
        &opts.clone().native_byte_order(!opts.native_byte_order),
    )
    .expect("byte order choice cannot make decoding fail");
    for (a, b) in ok.objects.iter().zip(&flipped.objects) {
        let d = &a.descriptor;
        let mut b = b.data.clone();
        if d.byte_order != ByteOrder::native() && d.dtype.swap_unit() > 1 {
            tgm::dtype::swap_in_place(&mut b, d.dtype.swap_unit());
        }
        assert_eq!(a.data, b, "native and stored order disagree");
    }
}

/// The validator in every mode, over `data` as one message and as a file:
/// it never panics, a message it passes in default mode decodes, and the
/// bytes it reports outside messages are in order and disjoint, none
/// starting where a message it reports starts.
fn validate(data: &[u8], limits: &tgm::Limits) {
    use tgm::validate::{validate_message, Mode, ValidateOptions};
    let opts = ValidateOptions::default()
        .canonical(true)
        .limits(limits.clone());
    for mode in [Mode::Quick, Mode::Checksum, Mode::Default, Mode::Full] {
        let one = validate_message(data, mode, &opts);
        if mode == Mode::Default && one.is_ok() {
            let d = tgm::DecodeOptions::default()
                .limits(limits.clone())
                .restore_non_finite(false);
            if let Err(e) = tgm::decode(data, &d) {
                panic!("validated in default mode but does not decode: {e}");
            }
        }
        let rep = tgm::validate(data, mode, &opts).expect("bytes in memory are readable");
        let mut at = 0u64;
        let mut marks: Vec<(u64, bool)> = rep
            .file_issues
            .iter()
            .map(|f| (f.byte_offset, true))
            .collect();
        marks.extend(rep.messages.iter().map(|m| (m.offset, false)));
        marks.sort();
        for f in &rep.file_issues {
            assert!(
                f.byte_offset >= at && f.length > 0,
                "file issues out of order"
            );
            at = f.byte_offset + f.length;
        }
        assert!(at <= data.len() as u64);
        for w in marks.windows(2) {
            assert!(w[0].0 < w[1].0, "a message and a file issue start together");
        }
    }
}

/// Multi-message scanning and salvage.
pub fn scan(data: &[u8]) {
    let limits = fuzz_limits();
    validate(data, &limits);
    let spans = scan_with(data, &limits);
    let mut end = 0u64;
    for s in &spans {
        assert!(s.offset >= end, "spans overlap or go backwards");
        end = s.offset + s.len;
        assert!(end <= data.len() as u64);
    }
    // Salvage accounts for every byte exactly once, in order.
    let rep = tgm::file::salvage(data, &limits);
    let mut ranges: Vec<(u64, u64)> = rep.messages.iter().map(|m| (m.offset, m.len)).collect();
    ranges.extend(rep.skipped.iter().map(|s| (s.offset, s.len)));
    ranges.sort();
    let mut at = 0u64;
    for (o, l) in ranges {
        assert_eq!(o, at, "salvage ranges must tile the input");
        at = o + l;
    }
    assert_eq!(at, data.len() as u64);
    // Every intact message the backward scan sees is salvaged (the forward
    // scan, like the reference's, may be misled by a damaged message),
    // unless crafted nesting exhausted salvage's work budget.
    for s in scan_backward(data, &limits)
        .into_iter()
        .filter(|_| !rep.budget_exhausted)
    {
        let intact = Message::parse_with(&data[s.range()], s.offset, &limits).is_ok_and(|p| {
            p.verify(tgm::Verify::IfPresent).is_ok()
                && p.metadata().is_ok()
                && (0..p.num_objects()).all(|i| p.object(i).is_ok())
        });
        if intact {
            assert!(
                rep.messages
                    .iter()
                    .any(|m| m.offset == s.offset && m.len == s.len),
                "salvage lost the intact message at {}",
                s.offset
            );
        }
    }
    for m in &rep.messages {
        let bytes = &data[m.offset as usize..(m.offset + m.len) as usize];
        let opts = tgm::DecodeOptions::default().limits(limits.clone());
        assert!(
            Message::parse_with(bytes, m.offset, &limits)
                .and_then(|p| p.verify(opts.verify))
                .is_ok(),
            "salvage kept a message that does not parse and verify"
        );
    }
}

/// Chunked feeding equals whole-buffer parsing: every message the whole
/// scan finds inside a prefix is found by scanning that prefix alone, and
/// each message parses identically from a copy at another alignment and
/// base offset, errors shifted by the base.
pub fn chunked(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let (head, buf) = data.split_at(2);
    let split = u16_at(head, 0) as usize % (buf.len() + 1);
    let limits = fuzz_limits();
    let whole = scan_with(buf, &limits);
    let prefix = scan_with(&buf[..split], &limits);
    for s in whole.iter().filter(|s| s.offset + s.len <= split as u64) {
        assert!(
            prefix.contains(s),
            "message {s:?} found in the whole buffer but not in its {split}-byte prefix"
        );
    }
    let opts = options(head[1]);
    for (k, s) in whole.iter().take(4).enumerate() {
        let m = &buf[s.range()];
        let a = Message::parse_with(m, s.offset, &limits).and_then(|p| p.decode(&opts));
        let pad = 1 + k;
        let mut copy = vec![0x5au8; pad];
        copy.extend_from_slice(m);
        let shift = 4096 * (k as u64 + 1);
        let b = Message::parse_with(&copy[pad..], s.offset + shift, &limits)
            .and_then(|p| p.decode(&opts));
        assert_same_outcome(&a, &b, shift, "message copied to another alignment");
    }
}
