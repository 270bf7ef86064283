//! Conformance of the container with the reference crate `tensogram` 0.24.0,
//! both directions, over every dtype, byte order and shape class.

mod common;

use common::*;
use std::collections::BTreeMap;
use tgm::cbor::Value;
use tgm::{
    ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, HashPolicy, Message,
    ObjectDescriptor,
};

fn desc(dtype: Dtype, shape: &[u64], order: ByteOrder) -> ObjectDescriptor {
    ObjectDescriptor::new(dtype, shape.to_vec()).with_byte_order(order)
}

fn ref_opts(hashing: bool) -> tensogram::EncodeOptions {
    tensogram::EncodeOptions {
        hashing,
        ..Default::default()
    }
}

fn ref_decode_raw(buf: &[u8]) -> (tensogram::GlobalMetadata, Vec<tensogram::DecodedObject>) {
    let opts = tensogram::DecodeOptions {
        native_byte_order: false,
        ..Default::default()
    };
    tensogram::decode(buf, &opts).expect("reference decodes tgm output")
}

fn sample_meta(n: usize) -> GlobalMetadata {
    let mut base = Vec::new();
    for i in 0..n {
        let mut e = BTreeMap::new();
        e.insert("name".to_string(), Value::Text(format!("field{i}")));
        e.insert(
            "mars".to_string(),
            Value::text_map([
                ("class", Value::from("od")),
                ("step", Value::Uint(12 + i as u64)),
                (
                    "levels",
                    Value::Array(vec![Value::Uint(1000), Value::Uint(850)]),
                ),
                (
                    "nested",
                    Value::text_map([("ratio", Value::Float(0.5)), ("neg", Value::from_i64(-7))]),
                ),
            ]),
        );
        base.push(e);
    }
    let mut m = GlobalMetadata::with_base(base);
    m.extra.insert("source".into(), Value::from("conformance"));
    m
}

/// Strips `_reserved_` (provenance differs by design) for structural comparison.
fn without_reserved(mut m: GlobalMetadata) -> GlobalMetadata {
    m.reserved.clear();
    for e in &mut m.base {
        e.remove("_reserved_");
    }
    m
}

#[test]
fn tgm_writes_what_the_reference_reads_over_the_whole_matrix() {
    for &dtype in &Dtype::ALL {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            for (si, shape) in SHAPES.iter().enumerate() {
                for hashing in [true, false] {
                    let d = desc(dtype, shape, order);
                    let n = d.num_elements().unwrap();
                    let data = sample_bytes(dtype, n, si as u64 + 1);
                    let meta = sample_meta(1);
                    let opts = EncodeOptions::new().hashing(hashing);
                    let msg = tgm::encode(&meta, &[(&d, &data)], &opts).unwrap();
                    let (rmeta, objs) = ref_decode_raw(&msg);
                    assert_eq!(objs.len(), 1);
                    assert_eq!(objs[0].1, data, "{dtype} {order:?} {shape:?}");
                    assert_eq!(objs[0].0.shape, d.shape);
                    assert_eq!(objs[0].0.dtype, to_ref_dtype(dtype));
                    assert_eq!(
                        without_reserved(from_ref_meta(&rmeta)).to_cbor(),
                        meta.to_cbor()
                    );
                    if hashing {
                        let ropts = tensogram::DecodeOptions {
                            verify_hash: true,
                            ..Default::default()
                        };
                        tensogram::decode(&msg, &ropts).expect("reference verifies tgm hashes");
                    }
                }
            }
        }
    }
}

#[test]
fn tgm_reads_what_the_reference_writes_over_the_whole_matrix() {
    for &dtype in &Dtype::ALL {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            for (si, shape) in SHAPES.iter().enumerate() {
                for hashing in [true, false] {
                    let d = desc(dtype, shape, order);
                    let n = d.num_elements().unwrap();
                    let data = sample_bytes(dtype, n, si as u64 + 11);
                    let meta = sample_meta(1);
                    let msg = tensogram::encode(
                        &to_ref_meta(&meta),
                        &[(&to_ref_desc(&d), &data[..])],
                        &ref_opts(hashing),
                    )
                    .unwrap();
                    let stored =
                        tgm::decode(&msg, &DecodeOptions::default().native_byte_order(false))
                            .unwrap();
                    assert_eq!(stored.objects[0].data, data, "{dtype} {order:?} {shape:?}");
                    assert_eq!(stored.objects[0].descriptor, d);
                    assert_eq!(
                        without_reserved(stored.metadata.clone()).to_cbor(),
                        meta.to_cbor()
                    );
                    // Native order equals the reference's native decode.
                    let native = tgm::decode(&msg, &DecodeOptions::default()).unwrap();
                    let (_, robjs) = tensogram::decode(&msg, &Default::default()).unwrap();
                    assert_eq!(native.objects[0].data, robjs[0].1);
                }
            }
        }
    }
}

/// With the reference's provenance injected, tgm reproduces the reference's
/// message byte for byte: metadata, index fixpoint, hash frames, padding.
#[test]
fn whole_messages_are_byte_identical_given_the_same_provenance() {
    let policies = [
        (tensogram::AggregateHashPolicy::Auto, HashPolicy::Auto),
        (tensogram::AggregateHashPolicy::None, HashPolicy::None),
        (tensogram::AggregateHashPolicy::Header, HashPolicy::Header),
        (tensogram::AggregateHashPolicy::Footer, HashPolicy::Footer),
        (tensogram::AggregateHashPolicy::Both, HashPolicy::Both),
    ];
    for count in [0usize, 1, 3, 30] {
        for (rp, tp) in policies {
            for hashing in [true, false] {
                let descs: Vec<ObjectDescriptor> = (0..count)
                    .map(|i| {
                        let dtype = Dtype::ALL[i % Dtype::ALL.len()];
                        let order = if i % 2 == 0 {
                            ByteOrder::Big
                        } else {
                            ByteOrder::Little
                        };
                        desc(dtype, SHAPES[i % SHAPES.len()], order)
                    })
                    .collect();
                let datas: Vec<Vec<u8>> = descs
                    .iter()
                    .enumerate()
                    .map(|(i, d)| sample_bytes(d.dtype, d.num_elements().unwrap(), i as u64 + 3))
                    .collect();
                let meta = sample_meta(count.min(2));
                let ropts = tensogram::EncodeOptions {
                    hashing,
                    aggregate_hash: rp,
                    ..Default::default()
                };
                let rdescs: Vec<_> = descs.iter().map(to_ref_desc).collect();
                let robjs: Vec<_> = rdescs
                    .iter()
                    .zip(&datas)
                    .map(|(d, x)| (d, &x[..]))
                    .collect();
                let reference = tensogram::encode(&to_ref_meta(&meta), &robjs, &ropts).unwrap();
                let rmeta = tgm::decode_metadata(&reference, &DecodeOptions::default()).unwrap();
                let opts = EncodeOptions::new()
                    .hashing(hashing)
                    .hash_policy(tp)
                    .provenance(provenance_of(&rmeta));
                let objs: Vec<_> = descs.iter().zip(&datas).map(|(d, x)| (d, &x[..])).collect();
                let ours = tgm::encode(&meta, &objs, &opts).unwrap();
                assert_eq!(
                    ours, reference,
                    "count {count} policy {tp:?} hashing {hashing}"
                );
            }
        }
    }
}

#[test]
fn multi_message_buffers_scan_and_decode_in_both_directions() {
    let mut file = Vec::new();
    let mut expected = Vec::new();
    for i in 0..5u64 {
        let d = desc(Dtype::Float32, &[i + 1], ByteOrder::Little);
        let data = sample_bytes(Dtype::Float32, i + 1, i);
        let msg = if i % 2 == 0 {
            tgm::encode(
                &GlobalMetadata::default(),
                &[(&d, &data)],
                &EncodeOptions::new(),
            )
            .unwrap()
        } else {
            tensogram::encode(
                &Default::default(),
                &[(&to_ref_desc(&d), &data[..])],
                &ref_opts(true),
            )
            .unwrap()
        };
        file.extend_from_slice(&msg);
        expected.push(data);
    }
    let ours = tgm::scan(&file);
    let theirs = tensogram::scan(&file);
    assert_eq!(ours.len(), 5);
    assert_eq!(
        ours.iter()
            .map(|s| (s.offset as usize, s.len as usize))
            .collect::<Vec<_>>(),
        theirs
    );
    let back = tgm::__fuzz::scan_backward(&file, &tgm::Limits::default());
    assert_eq!(back, ours);
    for (span, data) in ours.iter().zip(&expected) {
        let m = tgm::decode(
            &file[span.range()],
            &DecodeOptions::default().native_byte_order(false),
        )
        .unwrap();
        assert_eq!(&m.objects[0].data, data);
    }
}

fn stream_objects() -> (Vec<ObjectDescriptor>, Vec<Vec<u8>>) {
    let descs = vec![
        desc(Dtype::Float64, &[2, 3], ByteOrder::Big),
        desc(Dtype::Int16, &[5], ByteOrder::Little),
        desc(Dtype::Bitmask, &[13], ByteOrder::Big),
    ];
    let datas = descs
        .iter()
        .enumerate()
        .map(|(i, d)| sample_bytes(d.dtype, d.num_elements().unwrap(), 40 + i as u64))
        .collect();
    (descs, datas)
}

#[test]
fn streaming_messages_are_byte_identical_and_cross_decode() {
    let (descs, datas) = stream_objects();
    for hashing in [true, false] {
        for backfill in [false, true] {
            let meta = sample_meta(1);
            let mut pre = BTreeMap::new();
            pre.insert("step".to_string(), Value::Uint(6));
            // Reference stream.
            let ropts = ref_opts(hashing);
            let mut r = tensogram::StreamingEncoder::new(
                std::io::Cursor::new(Vec::new()),
                &to_ref_meta(&meta),
                &ropts,
            )
            .unwrap();
            for (i, (d, x)) in descs.iter().zip(&datas).enumerate() {
                if i == 1 {
                    r.write_preceder(to_ref_map(&pre)).unwrap();
                }
                r.write_object(&to_ref_desc(d), x).unwrap();
            }
            let reference = if backfill {
                r.finish_with_backfill().unwrap()
            } else {
                r.finish().unwrap()
            }
            .into_inner();
            let rmeta = tgm::decode_metadata(&reference, &DecodeOptions::default()).unwrap();
            // tgm stream with the same provenance.
            let opts = EncodeOptions::new()
                .hashing(hashing)
                .provenance(provenance_of(&rmeta));
            let mut s =
                tgm::StreamingEncoder::new(std::io::Cursor::new(Vec::new()), &meta, &opts).unwrap();
            for (i, (d, x)) in descs.iter().zip(&datas).enumerate() {
                if i == 1 {
                    s.write_preceder(pre.clone()).unwrap();
                }
                s.write_object(d, x).unwrap();
            }
            let (cursor, len) = if backfill {
                s.finish_with_backfill().unwrap()
            } else {
                s.finish().unwrap()
            };
            let ours = cursor.into_inner();
            assert_eq!(len as usize, ours.len());
            assert_eq!(ours, reference, "hashing {hashing} backfill {backfill}");
            // And tgm decodes it, preceder merged.
            let m = tgm::decode(&ours, &DecodeOptions::default().native_byte_order(false)).unwrap();
            assert_eq!(m.metadata.base[1].get("step"), Some(&Value::Uint(6)));
            for (o, x) in m.objects.iter().zip(&datas) {
                assert_eq!(&o.data, x);
            }
            let (_, robjs) = ref_decode_raw(&ours);
            assert_eq!(robjs.len(), 3);
        }
    }
}

#[test]
fn streaming_message_followed_by_buffered_ones_scans_like_the_reference() {
    let (descs, datas) = stream_objects();
    let mut file = Vec::new();
    for _ in 0..2 {
        let objs: Vec<_> = descs.iter().zip(&datas).map(|(d, x)| (d, &x[..])).collect();
        file.extend(tgm::encode(&GlobalMetadata::default(), &objs, &EncodeOptions::new()).unwrap());
    }
    let mut s = tgm::StreamingEncoder::new(
        Vec::new(),
        &GlobalMetadata::default(),
        &EncodeOptions::new(),
    )
    .unwrap();
    s.write_object(&descs[0], &datas[0]).unwrap();
    file.extend(s.finish().unwrap().0);
    let ours: Vec<_> = tgm::scan(&file)
        .iter()
        .map(|s| (s.offset as usize, s.len as usize))
        .collect();
    assert_eq!(ours, tensogram::scan(&file));
    assert_eq!(ours.len(), 3);
    let last = &file[ours[2].0..];
    let m = Message::parse(last).unwrap();
    assert_eq!(m.num_objects(), 1);
}

#[test]
fn decode_object_by_index_matches_full_decode() {
    let (descs, datas) = stream_objects();
    let objs: Vec<_> = descs.iter().zip(&datas).map(|(d, x)| (d, &x[..])).collect();
    let msg = tgm::encode(&GlobalMetadata::default(), &objs, &EncodeOptions::new()).unwrap();
    let opts = DecodeOptions::default().native_byte_order(false);
    for (i, x) in datas.iter().enumerate() {
        let o = tgm::decode_object(&msg, i, &opts).unwrap();
        assert_eq!(&o.data, x);
        let (_, _, r) = tensogram::decode_object(
            &msg,
            i,
            &tensogram::DecodeOptions {
                native_byte_order: false,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(r, *x);
    }
    let e = tgm::decode_object(&msg, 3, &opts).unwrap_err();
    assert_eq!(e.kind(), &tgm::ErrorKind::InvalidArgument);
}

/// Rebuilds every data frame of a message in the CBOR-before layout (which
/// no writer emits but readers must accept) and re-assembles the message.
fn to_cbor_before(msg: &[u8]) -> Vec<u8> {
    use tgm::__fuzz::{data_footer_bytes, header_bytes};
    use tgm::wire::FrameType;
    let l = tgm::__fuzz::parse_layout(msg, 0, &tgm::Limits::default()).unwrap();
    let mut out = msg[..24].to_vec();
    for f in l.frames() {
        if f.ftype() == FrameType::DataObject {
            let parts = f.split_data(&tgm::Limits::default()).unwrap();
            let body: Vec<u8> = [parts.descriptor, parts.region].concat();
            let hash = tgm::hash::xxh3(&body);
            out.extend_from_slice(&header_bytes(
                FrameType::DataObject,
                0x0002,
                f.total_len() as u64,
            ));
            out.extend_from_slice(&body);
            out.extend_from_slice(&data_footer_bytes(16, hash));
        } else {
            out.extend_from_slice(f.bytes());
        }
        out.resize(out.len().div_ceil(8) * 8, 0);
    }
    out.extend_from_slice(&msg[msg.len() - 24..]);
    assert_eq!(out.len(), msg.len());
    out
}

#[test]
fn cbor_before_layout_reads_like_the_reference() {
    let (descs, datas) = stream_objects();
    let objs: Vec<_> = descs.iter().zip(&datas).map(|(d, x)| (d, &x[..])).collect();
    let msg = tgm::encode(
        &sample_meta(3),
        &objs,
        &EncodeOptions::new().hash_policy(HashPolicy::None),
    )
    .unwrap();
    let before = to_cbor_before(&msg);
    assert_ne!(before, msg);
    let ours = tgm::decode(&before, &DecodeOptions::default().native_byte_order(false)).unwrap();
    let (_, theirs) = ref_decode_raw(&before);
    for ((o, r), x) in ours.objects.iter().zip(&theirs).zip(&datas) {
        assert_eq!(&o.data, x);
        assert_eq!(&r.1, x);
    }
}
