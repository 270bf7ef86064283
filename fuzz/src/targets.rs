//! The body of every fuzz target. Each takes arbitrary bytes and must never
//! panic, hang, or allocate beyond the limits it passes to tgm.
//! Shared by the fuzz binaries and by `tests/fuzz_replay.rs` (included there by path).

use tgm::cbor::{parse_one, Value};

use tgm::{
    ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, Limits, ObjectDescriptor,
    Verify,
};

/// Limits small enough that no fuzz input can make tgm allocate much.
pub fn fuzz_limits() -> Limits {
    let mut l = Limits::default();
    l.max_object_bytes = 64 << 20;
    l.max_message_bytes = 128 << 20;
    l.max_cbor_items = 1 << 16;
    l
}

fn options(selector: u8) -> DecodeOptions {
    let verify = match selector % 3 {
        0 => Verify::Off,
        1 => Verify::IfPresent,
        _ => Verify::Require,
    };
    DecodeOptions::default()
        .verify(verify)
        .native_byte_order(selector & 4 != 0)
        .restore_non_finite(selector & 8 != 0)
        .threads(if selector & 16 != 0 { 2 } else { 0 })
        .limits(fuzz_limits())
}

/// Whole-buffer decode with every option set, plus the borrowed API, and
/// the same message at a different base offset must fail at a shifted offset.
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
    if let Ok(m) = tgm::Message::parse_with(msg, 1000, &opts.limits) {
        for i in 0..m.num_objects().min(8) {
            if let Ok(o) = m.object(i) {
                let _ = o.decode(&opts);
                let _ = o.masks();
            }
        }
    }
    // Decoding is independent of where the bytes sit and of earlier calls.
    let mut shifted = vec![0xa5u8; 3];
    shifted.extend_from_slice(msg);
    let again = tgm::decode(&shifted[3..], &opts);
    match (&whole, &again) {
        // Metadata may hold NaN, which is unequal to itself: compare encodings.
        (Ok(a), Ok(b)) => {
            assert_eq!(a.objects.len(), b.objects.len());
            for (x, y) in a.objects.iter().zip(&b.objects) {
                assert_eq!(x.data, y.data);
                assert_eq!(x.descriptor.to_cbor(), y.descriptor.to_cbor());
            }
            assert_eq!(a.metadata.to_cbor(), b.metadata.to_cbor());
        }
        (Err(a), Err(b)) => assert_eq!(a.offset(), b.offset(), "{a} vs {b}"),
        _ => panic!("decode depends on buffer placement"),
    }
}

/// Multi-message scanning and salvage.
pub fn scan(data: &[u8]) {
    let limits = fuzz_limits();
    let spans = tgm::wire::scan::scan_with(data, &limits);
    for s in &spans {
        assert!(s.offset + s.len <= data.len() as u64);
    }
    for s in tgm::wire::scan::scan_backward(data, &limits) {
        assert!(
            spans.contains(&s),
            "backward scan found a message the forward scan missed"
        );
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
}

/// CBOR, descriptors and metadata.
pub fn cbor(data: &[u8]) {
    let limits = fuzz_limits();
    if let Ok((v, used)) = parse_one(data, 0, limits_cbor(&limits)) {
        assert!(used <= data.len());
        // Canonical encoding is a fixpoint: it parses back and re-encodes identically.
        let enc = tgm::cbor::encode_canonical(&v);
        let (back, _) = parse_one(&enc, 0, limits_cbor(&limits)).expect("canonical output parses");
        assert_eq!(tgm::cbor::encode_canonical(&back), enc);
        let _ = v.to_json();
    }
    let _ = ObjectDescriptor::from_cbor(data, 0, &limits).map(|d| d.to_cbor());
    let _ = GlobalMetadata::from_cbor(data, 0, &limits).map(|m| m.to_cbor());
}

fn limits_cbor(l: &Limits) -> tgm::cbor::CborLimits {
    tgm::cbor::CborLimits {
        max_depth: l.max_cbor_depth,
        max_items: l.max_cbor_items,
    }
}

/// Each codec's decoder given hostile payloads and sizes, through a crafted descriptor.
pub fn codecs(data: &[u8]) {
    if data.len() < 6 {
        return;
    }
    let (head, payload) = data.split_at(6);
    let dtype = Dtype::ALL[head[0] as usize % Dtype::ALL.len()];
    let n = u16::from_le_bytes([head[1], head[2]]) as u64 % 5000;
    let mut d = ObjectDescriptor::new(dtype, vec![n]).with_byte_order(if head[3] & 1 == 0 {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    });
    d.compression =
        ["none", "zstd", "lz4", "rle", "roaring", "szip"][head[3] as usize / 2 % 6].into();
    if head[4] & 1 == 1 {
        d.filter = "shuffle".into();
        d.params.insert(
            "shuffle_element_size".into(),
            Value::Uint(head[4] as u64 >> 1),
        );
    }
    if head[5] < 64 && dtype == Dtype::Float64 {
        d.encoding = "simple_packing".into();
        d.params.insert(
            "sp_bits_per_value".into(),
            Value::Uint(head[5] as u64 + (head[4] as u64 & 1)),
        );
        d.params.insert(
            "sp_reference_value".into(),
            Value::Float(head[2] as f64 - 100.0),
        );
        d.params.insert(
            "sp_binary_scale_factor".into(),
            Value::from_i64(head[1] as i64 - 128),
        );
        d.params.insert(
            "sp_decimal_scale_factor".into(),
            Value::from_i64(head[0] as i64 % 5 - 2),
        );
    }
    if head[5] >= 250 {
        d.params
            .insert("szip_rsi".into(), Value::Uint(head[1] as u64 * 16 + 1));
        d.params
            .insert("szip_block_size".into(), Value::Uint(8 << (head[2] % 4)));
        d.params
            .insert("szip_flags".into(), Value::Uint(head[0] as u64));
    }
    let limits = fuzz_limits();
    for native in [true, false] {
        let opts = DecodeOptions::default()
            .native_byte_order(native)
            .limits(limits.clone());
        if let Ok(out) = tgm::pipeline::decode(&d, payload, 0, &opts_pipeline(&opts), &limits) {
            assert_eq!(
                out.len() as u64,
                d.decoded_len().unwrap(),
                "decoders produce exactly the descriptor's size"
            );
        }
        let _ = tgm::pipeline::decode_range(
            &d,
            payload,
            0,
            &[(0, n / 2), (n / 2, n - n / 2)],
            &opts_pipeline(&opts),
            &limits,
        );
    }
    // Bit-set codecs directly.
    let nbits = n as usize;
    let mut out = vec![0u8; nbits.div_ceil(8)];
    let _ = tgm::pipeline::bitcodec::rle_decode_into(payload, nbits, &mut out);
    let mut out = vec![0u8; nbits.div_ceil(8)];
    let _ = tgm::pipeline::bitcodec::roaring_decode_into(payload, nbits, &mut out);
}

fn opts_pipeline(o: &DecodeOptions) -> tgm::pipeline::PipelineDecodeOptions {
    let mut p = tgm::pipeline::PipelineDecodeOptions::default();
    p.native_byte_order = o.native_byte_order;
    p
}

/// Arbitrary tensors survive encode → decode for every lossless pipeline.
pub fn roundtrip(data: &[u8]) {
    if data.len() < 4 {
        return;
    }
    let dtype = Dtype::ALL[data[0] as usize % Dtype::ALL.len()];
    if dtype == Dtype::Bitmask {
        return;
    }
    let w = dtype.width();
    let body = &data[4..];
    let n = body.len() / w;
    let bytes = &body[..n * w];
    let mut d = ObjectDescriptor::new(dtype, vec![n as u64]).with_byte_order(if data[1] & 1 == 0 {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    });
    d.compression = ["none", "zstd", "lz4"][data[2] as usize % 3].into();
    if data[3] & 1 == 1 {
        d.filter = "shuffle".into();
        d.params
            .insert("shuffle_element_size".into(), Value::Uint(w as u64));
    }
    let mut popts = tgm::pipeline::PipelineOptions::default();
    popts.allow_nan = true;
    popts.allow_inf = true;
    let opts = EncodeOptions::new().pipeline(popts);
    let msg = tgm::encode(&GlobalMetadata::default(), &[(&d, bytes)], &opts)
        .expect("valid tensors encode");
    let back = tgm::decode(
        &msg,
        &DecodeOptions::default()
            .native_byte_order(false)
            .restore_non_finite(false),
    )
    .expect("own output decodes");
    let obj = &back.objects[0];
    // Non-finite elements come back zeroed (restoration off); the rest exactly.
    let masks = tgm::Message::parse(&msg)
        .unwrap()
        .object(0)
        .unwrap()
        .masks()
        .unwrap();
    for (i, (a, b)) in bytes
        .chunks_exact(w)
        .zip(obj.data.chunks_exact(w))
        .enumerate()
    {
        let flagged = masks
            .iter()
            .any(|(_, bits)| bits[i / 8] & (0x80 >> (i % 8)) != 0);
        if flagged {
            assert!(b.iter().all(|&x| x == 0));
        } else {
            assert_eq!(a, b);
        }
    }
}

/// The .npy reader.
pub fn npy(data: &[u8]) {
    if let Ok(a) = tgm::npy::read_npy(data) {
        assert_eq!(a.data.len() as u64, a.descriptor().decoded_len().unwrap());
    }
}
