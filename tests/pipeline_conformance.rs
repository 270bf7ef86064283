//! Every pipeline stage and combination, against tensogram 0.24.0: identical
//! message bytes given the same provenance, identical decoded values both ways.

mod common;

use common::*;
use tgm::cbor::Value;
use tgm::pipeline::{PipelineOptions, ZstdFrameSize};
use tgm::{ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

struct Case {
    desc: ObjectDescriptor,
    data: Vec<u8>,
    allow_nan: bool,
    allow_inf: bool,
}

/// Encodes with both implementations and checks byte identity and decoding.
fn check(case: &Case) {
    let meta = GlobalMetadata::default();
    let ropts = tensogram::EncodeOptions {
        allow_nan: case.allow_nan,
        allow_inf: case.allow_inf,
        ..Default::default()
    };
    let rdesc = to_ref_desc(&case.desc);
    // The default options: zstd frames omit the content size, as the
    // reference's do (`spec/pipeline.md` §4.1).
    let mut popts = PipelineOptions::default();
    popts.allow_nan = case.allow_nan;
    popts.allow_inf = case.allow_inf;
    let mut recorded = popts.clone();
    recorded.zstd_frame_size = ZstdFrameSize::Recorded;
    let reference =
        match tensogram::encode(&to_ref_meta(&meta), &[(&rdesc, &case.data[..])], &ropts) {
            Ok(r) => r,
            Err(_) => {
                // What the reference cannot encode, tgm refuses too.
                let opts = EncodeOptions::new().pipeline(popts);
                assert!(
                    tgm::encode(&meta, &[(&case.desc, &case.data)], &opts).is_err(),
                    "{:?}",
                    case.desc
                );
                return;
            }
        };
    let rmeta = tgm::decode_metadata(&reference, &DecodeOptions::default()).unwrap();
    let opts = EncodeOptions::new()
        .provenance(provenance_of(&rmeta))
        .pipeline(popts);
    let ours = tgm::encode(&meta, &[(&case.desc, &case.data)], &opts).unwrap();
    assert_same_message(&ours, &reference, &case.desc);
    if case.desc.compression() == "zstd" {
        check_recorded_zstd(case, &reference, recorded);
    }
    for order in [true, false] {
        let (_, robjs) = tensogram::decode(
            &reference,
            &tensogram::DecodeOptions {
                native_byte_order: order,
                ..Default::default()
            },
        )
        .unwrap();
        let mine = tgm::decode(
            &reference,
            &DecodeOptions::default().native_byte_order(order),
        )
        .unwrap();
        let (r, m) = (&robjs[0].1, &mine.objects[0].data);
        assert_eq!(r.len(), m.len());
        if case.desc.dtype.is_float() {
            // Compare bit patterns, except that NaN payloads may differ.
            let w = case.desc.dtype.swap_unit();
            for (x, y) in r.chunks_exact(w).zip(m.chunks_exact(w)) {
                assert!(
                    x == y || (is_nan(x, w) && is_nan(y, w)),
                    "decoded values differ: {:?}",
                    case.desc
                );
            }
        } else {
            assert_eq!(r, m, "{:?}", case.desc);
        }
    }
}

/// On request tgm's zstd frames record their content size
/// (`spec/pipeline.md` §4.1); the reference and tgm decode them to what the
/// reference decodes from its own bytes.
fn check_recorded_zstd(case: &Case, reference: &[u8], popts: PipelineOptions) {
    let opts = EncodeOptions::new().pipeline(popts);
    let ours = tgm::encode(
        &GlobalMetadata::default(),
        &[(&case.desc, &case.data)],
        &opts,
    )
    .unwrap();
    let msg = tgm::Message::parse(&ours).unwrap();
    let frame = msg.object(0).unwrap().payload_region();
    // Frame header descriptor: a content-size field unless both the
    // size-flag bits (7-6) and the single-segment bit (5) are clear.
    let fhd = frame[4];
    assert!(
        fhd >> 6 != 0 || fhd & 0x20 != 0,
        "{:?}: no content size",
        case.desc
    );
    let decode = |m: &[u8]| tensogram::decode(m, &Default::default()).unwrap().1;
    let want = decode(reference)[0].1.clone();
    assert_eq!(decode(&ours)[0].1, want, "{:?}", case.desc);
    let mine = tgm::decode(&ours, &DecodeOptions::default()).unwrap();
    assert_eq!(mine.objects[0].data, want, "{:?}", case.desc);
}

fn is_nan(b: &[u8], w: usize) -> bool {
    match w {
        8 => {
            f64::from_ne_bytes(b.try_into().unwrap()).is_nan()
                || f64::from_be_bytes(b.try_into().unwrap()).is_nan()
        }
        4 => {
            f32::from_ne_bytes(b.try_into().unwrap()).is_nan()
                || f32::from_be_bytes(b.try_into().unwrap()).is_nan()
        }
        _ => false,
    }
}

fn sp(bits: u64, decimal: Option<i64>) -> impl Fn(ObjectDescriptor) -> ObjectDescriptor {
    move |d| {
        edit_raw(d, |r| {
            r.encoding = "simple_packing".into();
            r.params
                .insert("sp_bits_per_value".into(), Value::Uint(bits));
            if let Some(dd) = decimal {
                r.params
                    .insert("sp_decimal_scale_factor".into(), Value::from_i64(dd));
            }
        })
    }
}

fn with(d: ObjectDescriptor, filter: &str, compression: &str, element: u64) -> ObjectDescriptor {
    edit_raw(d, |r| {
        r.filter = filter.into();
        r.compression = compression.into();
        if filter == "shuffle" {
            r.params
                .insert("shuffle_element_size".into(), Value::Uint(element));
        }
    })
}

#[test]
fn float64_grids_through_every_combination() {
    for &n in &[1usize, 7919, 13 * 17] {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let data = field(n, order);
            let base = ObjectDescriptor::new(Dtype::Float64, vec![n as u64]).with_byte_order(order);
            let mut descs = Vec::new();
            for filter in ["none", "shuffle"] {
                for comp in ["none", "zstd", "lz4"] {
                    descs.push(with(base.clone(), filter, comp, 8));
                    for bits in [0u64, 1, 7, 12, 16, 24, 32, 64] {
                        for dec in [None, Some(2)] {
                            descs.push(with(
                                sp(bits, dec)(base.clone()),
                                filter,
                                comp,
                                bits.div_ceil(8).max(1),
                            ));
                        }
                    }
                }
            }
            for desc in descs {
                check(&Case {
                    desc,
                    data: data.clone(),
                    allow_nan: false,
                    allow_inf: false,
                });
            }
        }
    }
}

#[test]
fn large_grid_16_bit_shuffle_zstd() {
    let (ny, nx) = (721u64, 1440u64);
    let data = field((ny * nx) as usize, ByteOrder::Little);
    let d = ObjectDescriptor::new(Dtype::Float64, vec![ny, nx]).with_byte_order(ByteOrder::Little);
    check(&Case {
        desc: with(sp(16, None)(d.clone()), "shuffle", "zstd", 2),
        data: data.clone(),
        allow_nan: false,
        allow_inf: false,
    });
    check(&Case {
        desc: with(sp(24, None)(d), "none", "lz4", 3),
        data,
        allow_nan: false,
        allow_inf: false,
    });
}

#[test]
fn explicit_parameters_and_levels() {
    let data = field(500, ByteOrder::Little);
    let mut d = sp(16, Some(1))(
        ObjectDescriptor::new(Dtype::Float64, vec![500]).with_byte_order(ByteOrder::Little),
    );
    d = d
        .with_param("sp_reference_value", Value::Float(200.0))
        .unwrap();
    d = d
        .with_param("sp_binary_scale_factor", Value::from_i64(-6))
        .unwrap();
    check(&Case {
        desc: d,
        data: data.clone(),
        allow_nan: false,
        allow_inf: false,
    });
    for level in [1i64, 9, 19] {
        let mut d = with(
            ObjectDescriptor::new(Dtype::Float64, vec![500]).with_byte_order(ByteOrder::Little),
            "none",
            "zstd",
            0,
        );
        d = d.with_param("zstd_level", Value::from_i64(level)).unwrap();
        check(&Case {
            desc: d,
            data: data.clone(),
            allow_nan: false,
            allow_inf: false,
        });
    }
}

#[test]
fn integers_through_lossless_stages() {
    for &dtype in &[
        Dtype::Int8,
        Dtype::Uint16,
        Dtype::Int32,
        Dtype::Uint64,
        Dtype::Float32,
        Dtype::Complex64,
        Dtype::Float16,
    ] {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let n = 3001u64;
            let data = sample_bytes(dtype, n, 5);
            let base = ObjectDescriptor::new(dtype, vec![n]).with_byte_order(order);
            for (f, c) in [
                ("none", "zstd"),
                ("none", "lz4"),
                ("shuffle", "none"),
                ("shuffle", "zstd"),
                ("shuffle", "lz4"),
            ] {
                let desc = with(base.clone(), f, c, dtype.width() as u64);
                check(&Case {
                    desc,
                    data: data.clone(),
                    allow_nan: false,
                    allow_inf: false,
                });
            }
        }
    }
}

#[test]
fn bitmask_rle_and_roaring_payloads() {
    for n in [10u64, 100, 5000, 70_000] {
        let mut bits = vec![0u8; n.div_ceil(8) as usize];
        for i in 0..n as usize {
            if (i / 37) % 3 == 0 || i % 11 == 0 {
                bits[i / 8] |= 0x80 >> (i % 8);
            }
        }
        if n % 8 != 0 {
            let last = bits.len() - 1;
            bits[last] &= 0xffu8 << (8 - n % 8);
        }
        for c in ["rle", "roaring"] {
            let desc = with(ObjectDescriptor::new(Dtype::Bitmask, vec![n]), "none", c, 0);
            check(&Case {
                desc,
                data: bits.clone(),
                allow_nan: false,
                allow_inf: false,
            });
        }
    }
}

#[test]
fn nan_and_inf_masks_match_the_reference() {
    for &n in &[10usize, 1000, 20_000] {
        for dtype in [Dtype::Float64, Dtype::Float32] {
            let mut vals: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
            for (i, v) in vals.iter_mut().enumerate() {
                if i % 97 == 2 {
                    *v = f64::NAN;
                } else if i % 89 == 5 {
                    *v = f64::INFINITY;
                } else if i % 83 == 7 {
                    *v = f64::NEG_INFINITY;
                }
            }
            let data: Vec<u8> = if dtype == Dtype::Float64 {
                vals.iter().flat_map(|v| v.to_le_bytes()).collect()
            } else {
                vals.iter()
                    .flat_map(|v| (*v as f32).to_le_bytes())
                    .collect()
            };
            let base =
                ObjectDescriptor::new(dtype, vec![n as u64]).with_byte_order(ByteOrder::Little);
            for (f, c) in [("none", "none"), ("shuffle", "zstd"), ("none", "lz4")] {
                let desc = with(base.clone(), f, c, dtype.width() as u64);
                check(&Case {
                    desc,
                    data: data.clone(),
                    allow_nan: true,
                    allow_inf: true,
                });
            }
            if dtype == Dtype::Float64 {
                let mut d = sp(16, None)(base.clone());
                d = d
                    .with_param("sp_reference_value", Value::Float(-1.0))
                    .unwrap();
                d = d
                    .with_param("sp_binary_scale_factor", Value::from_i64(-14))
                    .unwrap();
                check(&Case {
                    desc: d,
                    data: data.clone(),
                    allow_nan: true,
                    allow_inf: true,
                });
            }
        }
    }
}

#[test]
fn nan_without_permission_is_refused_naming_the_element() {
    let data: Vec<u8> = [1.0f64, 2.0, f64::NAN]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let d = ObjectDescriptor::new(Dtype::Float64, vec![3]).with_byte_order(ByteOrder::Little);
    let e = tgm::encode(
        &GlobalMetadata::default(),
        &[(&d, &data)],
        &EncodeOptions::new(),
    )
    .unwrap_err();
    assert_eq!(e.kind(), &tgm::ErrorKind::NonFinite);
    assert!(e.detail().contains("element 2"), "{e}");
}

#[test]
fn range_decode_matches_the_reference() {
    let n = 10_000usize;
    let data = field(n, ByteOrder::Big);
    let base =
        ObjectDescriptor::new(Dtype::Float64, vec![n as u64]).with_byte_order(ByteOrder::Big);
    let ranges = [(0u64, 1u64), (17, 100), (9_990, 10), (5_000, 0)];
    for desc in [
        base.clone(),
        sp(12, None)(base.clone()),
        sp(24, Some(1))(base.clone()),
        sp(0, None)(base.clone()),
    ] {
        let rdesc = to_ref_desc(&desc);
        let msg = tensogram::encode(
            &Default::default(),
            &[(&rdesc, &data[..])],
            &Default::default(),
        )
        .unwrap();
        for native in [true, false] {
            let ro = tensogram::DecodeOptions {
                native_byte_order: native,
                ..Default::default()
            };
            let theirs = tensogram::decode_range(&msg, 0, &ranges, &ro).unwrap();
            let ours = tgm::decode_range(
                &msg,
                0,
                &ranges,
                &DecodeOptions::default().native_byte_order(native),
            )
            .unwrap();
            assert_eq!(ours, theirs.1, "{:?}", desc.encoding());
            let full =
                tgm::decode(&msg, &DecodeOptions::default().native_byte_order(native)).unwrap();
            for (&(o, c), got) in ranges.iter().zip(&ours) {
                assert_eq!(
                    &full.objects[0].data[o as usize * 8..(o + c) as usize * 8],
                    &got[..]
                );
            }
        }
    }
    let shuffled = with(base.clone(), "shuffle", "none", 8);
    let msg = tgm::encode(
        &GlobalMetadata::default(),
        &[(&shuffled, &data)],
        &EncodeOptions::new(),
    )
    .unwrap();
    let e = tgm::decode_range(&msg, 0, &ranges, &DecodeOptions::default()).unwrap_err();
    assert_eq!(e.kind(), &tgm::ErrorKind::RangeNotSupported);
    let msg = tgm::encode(
        &GlobalMetadata::default(),
        &[(&base, &data)],
        &EncodeOptions::new(),
    )
    .unwrap();
    let e = tgm::decode_range(&msg, 0, &[(9_999, 2)], &DecodeOptions::default()).unwrap_err();
    assert_eq!(e.kind(), &tgm::ErrorKind::InvalidArgument);
}

#[test]
fn a_range_of_a_pipeline_without_ranges_is_refused_before_its_output_is_allocated() {
    // 8 TiB claimed, 4 TiB asked: refused by name, not an allocation failure.
    let desc = with(
        ObjectDescriptor::new(Dtype::Float64, vec![1 << 40]),
        "none",
        "zstd",
        8,
    );
    let e = tgm::pipeline::decode_range(
        &desc,
        &[0u8; 16],
        0,
        &[(0, 1 << 39)],
        &tgm::pipeline::PipelineDecodeOptions::default(),
        &tgm::Limits::unlimited(),
    )
    .unwrap_err();
    assert_eq!(e.kind(), &tgm::ErrorKind::RangeNotSupported, "{e}");
}

/// The payload of one object encoded with default options, and the
/// reference's payload of the same object.
fn zstd_payloads(desc: &ObjectDescriptor, data: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let meta = GlobalMetadata::default();
    let reference = tensogram::encode(
        &to_ref_meta(&meta),
        &[(&to_ref_desc(desc), data)],
        &Default::default(),
    )
    .unwrap();
    let ours = tgm::encode(&meta, &[(desc, data)], &EncodeOptions::new()).unwrap();
    let payload = |m: &[u8]| {
        tgm::Message::parse(m)
            .unwrap()
            .object(0)
            .unwrap()
            .payload_region()
            .to_vec()
    };
    (payload(&ours), payload(&reference))
}

#[test]
fn default_zstd_payloads_are_the_references_bytes() {
    let dtypes = [
        Dtype::Float64,
        Dtype::Float32,
        Dtype::Int16,
        Dtype::Uint8,
        Dtype::Uint64,
    ];
    for dtype in dtypes {
        let n = 3000u64;
        let data: Vec<u8> = (0..n * dtype.width() as u64)
            .map(|i| ((i * 37) % 251 + (i / 97) % 7) as u8)
            .collect();
        for (filter, level) in [("none", 1i64), ("none", 3), ("shuffle", 9), ("none", 19)] {
            let mut d = with(
                ObjectDescriptor::new(dtype, vec![n]),
                filter,
                "zstd",
                dtype.width() as u64,
            );
            d = d.with_param("zstd_level", Value::from_i64(level)).unwrap();
            let (ours, reference) = zstd_payloads(&d, &data);
            assert_eq!(ours[..4], [0x28, 0xb5, 0x2f, 0xfd], "{dtype:?} {level}");
            // No content-size field: size flag (bits 7-6) and single
            // segment (bit 5) clear.
            assert_eq!(ours[4] & 0xe0, 0, "{dtype:?} level {level}");
            assert_eq!(ours, reference, "{dtype:?} {filter} level {level}");
        }
    }
}
