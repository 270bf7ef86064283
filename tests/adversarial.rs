//! Hand-built hostile inputs (`spec/threat-model.md`): every length field
//! at 0, 1, max and off by one; index and hash frames that disagree with
//! the frames; overflowing shapes and 2^40-element tensors in tiny
//! messages; CBOR bombs; decompression bombs in every codec. Each must give
//! a typed error with an offset, or (for advisory fields) the original
//! values, and never a panic or an allocation beyond the limits.

use tgm::__fuzz::parse_layout;
use tgm::__fuzz::{data_footer_bytes, header_bytes, write_cbor_frame};
use tgm::cbor::Value;
use tgm::pipeline::{self, PipelineDecodeOptions};
use tgm::wire::FrameType;
use tgm::{
    ByteOrder, DecodeOptions, Dtype, EncodeOptions, ErrorKind, GlobalMetadata, HashPolicy, Limits,
    ObjectDescriptor, Verify,
};

fn meta() -> GlobalMetadata {
    let mut e = tgm::Map::new();
    e.insert("name".into(), Value::from("t2m"));
    GlobalMetadata::with_base(vec![e.clone(), e])
}

/// A buffered message with header and footer hash frames, and a streaming
/// one with footer index, footer metadata and a preceder; two objects each,
/// one compressed.
fn samples() -> Vec<Vec<u8>> {
    let a = ObjectDescriptor::new(Dtype::Uint16, vec![4]).with_byte_order(ByteOrder::Little);
    let b = ObjectDescriptor::new(Dtype::Float64, vec![2, 3])
        .with_byte_order(ByteOrder::Big)
        .with_raw_pipeline("none", "none", "zstd", Default::default())
        .unwrap();
    let av: Vec<u8> = [1u16, 2, 3, 400]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let bv: Vec<u8> = (0..6)
        .flat_map(|i| (i as f64 * 1.5).to_be_bytes())
        .collect();
    let buffered = tgm::encode(
        &meta(),
        &[(&a, &av), (&b, &bv)],
        &EncodeOptions::new().hash_policy(HashPolicy::Both),
    )
    .unwrap();
    let mut s = tgm::StreamingEncoder::new(Vec::new(), &meta(), &EncodeOptions::new()).unwrap();
    let mut p = tgm::Map::new();
    p.insert("note".into(), Value::from("x"));
    s.write_preceder(p).unwrap();
    s.write_object(&a, &av).unwrap();
    s.write_object(&b, &bv).unwrap();
    let streaming = s.finish().unwrap().0;
    vec![buffered, streaming]
}

fn values(msg: &[u8], opts: &DecodeOptions) -> tgm::Result<Vec<Vec<u8>>> {
    tgm::decode(msg, opts).map(|m| m.objects.into_iter().map(|o| o.data).collect())
}

/// Runs every entry point on `bytes`; the whole decode must either fail
/// with an offset or give `want`.
fn check(bytes: &[u8], want: &[Vec<u8>], what: &str) {
    for verify in [Verify::IfPresent, Verify::Off] {
        let opts = DecodeOptions::default().verify(verify);
        match values(bytes, &opts) {
            Ok(v) => assert!(v == want, "{what}: decoded to different values"),
            Err(e) => assert!(e.offset().is_some(), "{what}: error without offset: {e}"),
        }
        let _ = tgm::decode_metadata(bytes, &opts);
        for i in 0..3 {
            if let Ok(o) = tgm::decode_object(bytes, i, &opts) {
                assert!(
                    want.get(i) == Some(&o.data),
                    "{what}: object {i} through the index differs"
                );
            }
            let _ = tgm::decode_range(bytes, i, &[(0, 1)], &opts);
        }
    }
    let _ = tgm::scan(bytes);
}

fn set_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
}

fn get_u64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}

#[test]
fn every_length_field_at_edge_values() {
    let mut tried = 0;
    for msg in samples() {
        let want = values(&msg, &DecodeOptions::default()).unwrap();
        let layout = parse_layout(&msg, 0, &Limits::default()).unwrap();
        let len = msg.len();
        // (position, what) of every length or offset field.
        let mut fields = vec![
            (16usize, "preamble total_length".to_string()),
            (len - 24, "postamble first_footer_offset".into()),
            (len - 16, "postamble total_length".into()),
        ];
        for f in layout.frames() {
            fields.push((
                f.offset() + 8,
                format!("frame {:?} total_length", f.ftype()),
            ));
            if f.ftype() == FrameType::DataObject {
                fields.push((
                    f.offset() + f.bytes().len() - 20,
                    format!("frame at {} cbor_offset", f.offset()),
                ));
            }
        }
        for (at, what) in fields {
            let orig = get_u64(&msg, at);
            for v in [
                0,
                1,
                u64::MAX,
                u64::MAX / 2,
                orig.wrapping_sub(1),
                orig + 1,
                orig + 8,
                orig.wrapping_sub(8),
                len as u64,
                len as u64 + 1,
            ] {
                if v == orig {
                    continue;
                }
                let mut b = msg.clone();
                set_u64(&mut b, at, v);
                check(&b, &want, &format!("{what} = {v}"));
                tried += 1;
            }
        }
    }
    assert!(tried > 150);
}

#[test]
fn small_length_fields_at_edge_values() {
    // The u16 fields: version, message flags, frame type, frame flags.
    for msg in samples() {
        let want = values(&msg, &DecodeOptions::default()).unwrap();
        let layout = parse_layout(&msg, 0, &Limits::default()).unwrap();
        let mut fields = vec![8usize, 10];
        for f in layout.frames() {
            fields.extend([f.offset() + 2, f.offset() + 4, f.offset() + 6]);
        }
        for at in fields {
            for v in [0u16, 1, 2, 4, 9, 10, u16::MAX] {
                let mut b = msg.clone();
                b[at..at + 2].copy_from_slice(&v.to_be_bytes());
                check(&b, &want, &format!("u16 at {at} = {v}"));
            }
        }
    }
}

#[test]
fn frames_swapped_duplicated_or_dropped() {
    for msg in samples() {
        let want = values(&msg, &DecodeOptions::default()).unwrap();
        let layout = parse_layout(&msg, 0, &Limits::default()).unwrap();
        let frames: Vec<(usize, usize)> = layout
            .frames()
            .iter()
            .map(|f| (f.offset(), f.bytes().len().next_multiple_of(8)))
            .collect();
        let body_end = msg.len() - 24;
        let pieces: Vec<&[u8]> = frames
            .iter()
            .map(|&(o, l)| &msg[o..(o + l).min(body_end)])
            .collect();
        let rebuild = |order: &[usize]| {
            let mut b = msg[..24].to_vec();
            for &i in order {
                b.extend_from_slice(pieces[i]);
            }
            let total = b.len() as u64 + 24;
            b.extend_from_slice(&msg[body_end..]);
            set_u64(&mut b, 16, total);
            let n = b.len();
            set_u64(&mut b, n - 16, total);
            b
        };
        let n = pieces.len();
        for i in 0..n {
            for j in i + 1..n {
                let mut order: Vec<usize> = (0..n).collect();
                order.swap(i, j);
                check(
                    &rebuild(&order),
                    &want,
                    &format!("frames {i} and {j} swapped"),
                );
            }
            let mut dup: Vec<usize> = (0..n).collect();
            dup.insert(i, i);
            check(&rebuild(&dup), &want, &format!("frame {i} twice"));
            let drop: Vec<usize> = (0..n).filter(|&k| k != i).collect();
            let b = rebuild(&drop);
            if let Ok(v) = values(&b, &DecodeOptions::default()) {
                // Dropping an aggregate frame may leave a valid message; a
                // dropped data object never goes unnoticed.
                assert!(v == want, "frame {i} dropped changed the values");
            }
        }
    }
}

#[test]
fn index_and_hash_frames_that_disagree_with_the_frames() {
    let a = ObjectDescriptor::new(Dtype::Uint8, vec![5]);
    let b = ObjectDescriptor::new(Dtype::Int32, vec![3]).with_byte_order(ByteOrder::Little);
    let objs: [(&ObjectDescriptor, &[u8]); 3] = [
        (&a, &[1, 2, 3, 4, 5]),
        (&b, &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]),
        (&a, &[9, 9, 9, 9, 9]),
    ];
    for hashing in [false, true] {
        let msg = tgm::encode(
            &meta(),
            &objs,
            &EncodeOptions::new()
                .hashing(hashing)
                .hash_policy(HashPolicy::Both),
        )
        .unwrap();
        let want = values(&msg, &DecodeOptions::default()).unwrap();
        let layout = parse_layout(&msg, 0, &Limits::default()).unwrap();
        for f in layout.frames() {
            let kind = f.ftype();
            if !matches!(
                kind,
                FrameType::HeaderIndex
                    | FrameType::FooterIndex
                    | FrameType::HeaderHash
                    | FrameType::FooterHash
            ) {
                continue;
            }
            // Every byte of the body, changed: the index may then point at
            // the wrong frame and the hash list may disagree with the inline
            // hashes; neither may yield wrong values.
            for at in f.offset() + 16..f.offset() + f.bytes().len() - 12 {
                for x in [0x01u8, 0x80, 0xff] {
                    let mut m = msg.clone();
                    m[at] ^= x;
                    check(&m, &want, &format!("{kind:?} byte {at} ^ {x:#x}"));
                }
            }
        }
    }
}

fn one_object_message(desc_cbor: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut frame = Vec::new();
    let total = 16 + payload.len() + desc_cbor.len() + 20;
    frame.extend_from_slice(&header_bytes(FrameType::DataObject, 1, total as u64));
    frame.extend_from_slice(payload);
    frame.extend_from_slice(desc_cbor);
    frame.extend_from_slice(&data_footer_bytes((16 + payload.len()) as u64, 0));
    let mut msg = Vec::new();
    msg.extend_from_slice(b"TENSOGRM");
    msg.extend_from_slice(&3u16.to_be_bytes());
    msg.extend_from_slice(&1u16.to_be_bytes());
    msg.extend_from_slice(&[0; 12]);
    write_cbor_frame(&mut msg, FrameType::HeaderMetadata, &[0xa0], false);
    msg.resize(msg.len().next_multiple_of(8), 0);
    msg.extend_from_slice(&frame);
    msg.resize(msg.len().next_multiple_of(8), 0);
    let total = msg.len() as u64 + 24;
    msg.extend_from_slice(&(msg.len() as u64).to_be_bytes());
    msg.extend_from_slice(&total.to_be_bytes());
    msg.extend_from_slice(b"39277777");
    set_u64(&mut msg, 16, total);
    msg
}

#[test]
fn shapes_that_overflow_or_claim_2_to_the_40_elements() {
    let ok = ObjectDescriptor::new(Dtype::Uint8, vec![3]);
    let msg = one_object_message(&ok.to_cbor(), &[1, 2, 3]);
    assert_eq!(
        values(&msg, &DecodeOptions::default()).unwrap(),
        vec![vec![1, 2, 3]]
    );
    // A zero extent first makes the product 0 however large the rest: an
    // honest empty tensor, whose payload must then be empty.
    let mut zero = ObjectDescriptor::new(Dtype::Uint8, vec![0, u64::MAX, u64::MAX]);
    zero.strides = vec![1, 1, 1];
    let msg = one_object_message(&zero.to_cbor(), &[]);
    assert_eq!(
        values(&msg, &DecodeOptions::default()).unwrap(),
        vec![Vec::<u8>::new()]
    );
    assert!(values(
        &one_object_message(&zero.to_cbor(), &[0; 8]),
        &DecodeOptions::default()
    )
    .is_err());
    for (shape, dtype) in [
        (vec![1u64 << 40], Dtype::Uint8),
        (vec![1 << 20, 1 << 20], Dtype::Float64),
        (vec![u64::MAX], Dtype::Uint8),
        (vec![u64::MAX / 2 + 1], Dtype::Uint16),
        (vec![1 << 32, 1 << 32], Dtype::Uint8),
        (vec![3, 1 << 62, 4], Dtype::Int32),
        (vec![u64::MAX, u64::MAX, 0], Dtype::Uint8),
    ] {
        let mut d = ObjectDescriptor::new(dtype, vec![1]);
        d.strides = vec![1; shape.len()];
        d.shape = shape.clone();
        for payload in [&[][..], &[0u8; 8][..]] {
            let msg = one_object_message(&d.to_cbor(), payload);
            for opts in [
                DecodeOptions::default(),
                DecodeOptions::default().verify(Verify::Off),
            ] {
                let e = tgm::decode(&msg, &opts).unwrap_err();
                assert!(e.offset().is_some(), "{shape:?}: {e}");
                assert!(tgm::decode_object(&msg, 0, &opts).is_err(), "{shape:?}");
                assert!(
                    tgm::decode_range(&msg, 0, &[(0, 1)], &opts).is_err(),
                    "{shape:?}"
                );
            }
        }
    }
}

#[test]
fn cbor_bombs_in_metadata_and_descriptor() {
    // Nesting far beyond the depth limit, and a header claiming 2^63 items.
    let deep: Vec<u8> = std::iter::repeat_n(0x81u8, 100_000).chain([0x00]).collect();
    let huge_array = [0x9bu8, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
    let huge_map = [0xbbu8, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
    let huge_text = [0x7bu8, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
    let indefinite: Vec<u8> = std::iter::repeat_n(0x9fu8, 50_000).collect();
    // A map with 2^20 + 1 tiny entries (over the item limit).
    let mut wide = vec![0xbau8];
    let n = (1u32 << 20) + 1;
    wide.extend_from_slice(&n.to_be_bytes());
    for i in 0..n {
        wide.push(0x1a);
        wide.extend_from_slice(&i.to_be_bytes());
        wide.push(0xf6);
    }
    let bad_utf8 = [0xa1u8, 0x62, 0xff, 0xfe, 0x01];
    let dup_keys = [0xa2u8, 0x61, b'k', 0x01, 0x61, b'k', 0x02];
    for bomb in [
        &deep[..],
        &huge_array,
        &huge_map,
        &huge_text,
        &indefinite,
        &wide,
        &bad_utf8,
        &dup_keys,
    ] {
        let msg = one_object_message(bomb, &[1, 2, 3]);
        let e = tgm::decode(&msg, &DecodeOptions::default()).unwrap_err();
        assert!(e.offset().is_some(), "{e}");
    }
}

#[test]
fn decompression_bombs_in_every_codec() {
    let opts = PipelineDecodeOptions::default();
    let limits = Limits::default();
    // A descriptor for 8 bytes whose payload expands far beyond them.
    let small_with = |compression: &str, dtype: Dtype, params: tgm::Map| {
        ObjectDescriptor::new(dtype, vec![8])
            .with_byte_order(ByteOrder::Little)
            .with_raw_pipeline("none", "none", compression, params)
            .unwrap()
    };
    let small = |compression: &str, dtype: Dtype| small_with(compression, dtype, tgm::Map::new());
    let zeros = vec![0u8; 64 << 20];
    let zbomb = tgm::__fuzz::zstd_codec::zstd_compress(&zeros, 19).unwrap();
    let lbomb = tgm::__fuzz::lz4_codec::lz4_compress(&zeros);
    for (d, payload) in [
        (small("zstd", Dtype::Uint8), zbomb.clone()),
        (small("lz4", Dtype::Uint8), lbomb.clone()),
        // lz4 size prefix claiming 4 GiB.
        (
            small("lz4", Dtype::Uint8),
            [&[0xff, 0xff, 0xff, 0xff][..], &lbomb[4..]].concat(),
        ),
    ] {
        let e = pipeline::decode(&d, &payload, 0, &opts, &limits).unwrap_err();
        assert_eq!(*e.kind(), ErrorKind::Codec, "{}: {e}", d.compression());
    }
    // rle and roaring bitmask payloads whose bit count or runs exceed the
    // descriptor's 8 bits.
    for (codec, payload) in [
        ("rle", vec![0, 0, 0, 8, 0, 0xff, 0xff, 0xff, 0xff, 0x0f]),
        ("rle", vec![0xff, 0xff, 0xff, 0xff, 0, 1]),
        ("roaring", vec![0xff, 0xff, 0xff, 0xff, 0x3a, 0x30, 0, 0]),
        ("roaring", vec![0, 0, 0, 8, 0x3b, 0x30, 0xff, 0xff]),
    ] {
        let d = small(codec, Dtype::Bitmask);
        assert!(
            pipeline::decode(&d, &payload, 0, &opts, &limits).is_err(),
            "{codec}"
        );
    }
    // szip: a stream of zero-block runs that would go on for ever, for an
    // object of 8 uint16 samples; output stops at the descriptor's size.
    let mut params = tgm::Map::new();
    for (k, v) in [
        ("szip_rsi", 4096u64),
        ("szip_block_size", 8),
        ("szip_flags", 0),
    ] {
        params.insert(k.into(), Value::Uint(v));
    }
    let d = small_with("szip", Dtype::Uint16, params);
    let runs = vec![0x00u8; 1 << 16];
    if let Ok(out) = pipeline::decode(&d, &runs, 0, &opts, &limits) {
        assert_eq!(out.len(), 16);
    }
    // And the per-object limit bounds what any descriptor may ask for.
    let mut tight = Limits::default();
    tight.max_object_bytes = 1 << 20;
    let big = ObjectDescriptor::new(Dtype::Uint8, vec![2 << 20]);
    let big_z = big
        .clone()
        .with_raw_pipeline("none", "none", "zstd", Default::default())
        .unwrap();
    let e = pipeline::decode(&big_z, &zbomb, 0, &opts, &tight).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::LimitExceeded { .. }), "{e}");
}

/// A mask blob of one byte whose object claims 2^40 elements: its bits
/// (128 GiB) are not allocated; the object's size is refused by the
/// limits first.
#[test]
fn a_mask_of_a_claimed_shape_is_refused_before_its_bits_exist() {
    let mut d = ObjectDescriptor::new(Dtype::Float32, vec![1 << 40]);
    d.masks = Some(tgm::descriptor::Masks {
        nan: Some(tgm::descriptor::MaskInfo {
            method: "rle".into(),
            offset: 0,
            length: 1,
            params: Default::default(),
        }),
        pos_inf: None,
        neg_inf: None,
    });
    let msg = one_object_message(&d.to_cbor(), &[0]);
    let m = tgm::decode::Message::parse(&msg).expect("the message parses");
    let o = m.object(0).expect("its descriptor parses");
    let e = o.masks(&Limits::default()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::LimitExceeded { .. }), "{e}");
    assert_eq!(e.object_index(), Some(0));
}
