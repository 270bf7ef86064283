//! Writing szip objects: messages identical to the reference's in all but
//! the AEC payload, read back by the reference to the same values, and the
//! reference's silently corrupting simple_packing widths refused.
//!
//! The AEC payload itself is libaec's, bit for bit (`szip/tests/libaec_identity.rs`).
//! The reference's pure-Rust coder, the dev-dependency here, breaks some
//! ties between equally long codings differently from libaec (it restarts
//! the split search at every RSI and prefers splitting over an equally long
//! second extension), so its payloads can differ in content while matching
//! in length (`spec/szip.md` §7).

mod common;

use common::*;
use tgm::cbor::Value;
use tgm::{ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

/// Bits per sample the szip coder sees for `desc` (`spec/pipeline.md` §4.4):
/// B after simple_packing, 8 after shuffle, else the element width × 8.
fn coder_bits(desc: &ObjectDescriptor) -> u64 {
    if desc.filter() == "shuffle" {
        8
    } else if desc.encoding() == "simple_packing" {
        desc.pipeline().params()["sp_bits_per_value"]
            .as_u64()
            .unwrap()
    } else {
        desc.dtype.width() as u64 * 8
    }
}

/// Whether the reference's pure-Rust szip coder handles `desc`. At 32 bits
/// per sample its bit writer shifts a 32-bit word by 32 after a write that
/// ends on a byte boundary, and its signed postprocessing overflows i32:
/// overflow panics in debug builds, silently wrong values in release builds
/// (`spec/pipeline.md` §8).
fn reference_handles(desc: &ObjectDescriptor) -> bool {
    coder_bits(desc) < 32
}

/// Encodes with both and returns whether the reference took part. Where the
/// reference handles the object ([`reference_handles`]) and accepts the data,
/// descriptors and payload lengths must match, and the reference must read
/// tgm's message back to exactly the values it reads from its own. Where it
/// does not, tgm must read its own message back to the values of the same
/// object written without szip.
fn check(desc: &ObjectDescriptor, data: &[u8]) -> bool {
    let meta = GlobalMetadata::default();
    if !reference_handles(desc) {
        let plain = edit_raw(desc.clone(), |r| {
            r.compression = "none".into();
            r.params.retain(|k, _| !k.starts_with("szip_"));
        });
        let opts = EncodeOptions::new();
        match (
            tgm::encode(&meta, &[(desc, data)], &opts),
            tgm::encode(&meta, &[(&plain, data)], &opts),
        ) {
            (Ok(ours), Ok(plain)) => {
                let opts = DecodeOptions::default();
                assert_eq!(
                    tgm::decode(&ours, &opts).unwrap().objects[0].data,
                    tgm::decode(&plain, &opts).unwrap().objects[0].data,
                    "{desc:?}"
                );
            }
            // Data refused before szip (not finite in its byte order).
            (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "{desc:?}"),
            (a, b) => panic!("{desc:?}: with szip {:?}, without {:?}", a.err(), b.err()),
        }
        return false;
    }
    let rdesc = to_ref_desc(desc);
    // The reference refuses data that is not finite in the declared byte
    // order (its strict-NaN check).
    let Ok(reference) =
        tensogram::encode(&to_ref_meta(&meta), &[(&rdesc, data)], &Default::default())
    else {
        return false;
    };
    let rmeta = tgm::decode_metadata(&reference, &DecodeOptions::default()).unwrap();
    let opts = EncodeOptions::new().provenance(provenance_of(&rmeta));
    let ours = tgm::encode(&meta, &[(desc, data)], &opts).unwrap();
    if ours != reference {
        let a = tgm::Message::parse(&ours).unwrap();
        let b = tgm::Message::parse(&reference).unwrap();
        let (oa, ob) = (a.object(0).unwrap(), b.object(0).unwrap());
        let (mut offsets_a, mut offsets_b) = (None, None);
        let da = edit_raw(oa.descriptor().clone(), |r| {
            offsets_a = r.params.remove("szip_block_offsets")
        });
        let db = edit_raw(ob.descriptor().clone(), |r| {
            offsets_b = r.params.remove("szip_block_offsets")
        });
        let (offsets_a, offsets_b) = (offsets_a.unwrap(), offsets_b.unwrap());
        assert_eq!(da, db, "descriptor of {desc:?}");
        assert_eq!(
            offsets_a.as_array().unwrap().len(),
            offsets_b.as_array().unwrap().len(),
            "one offset per RSI"
        );
        DIFFERING.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    let mine = tgm::decode(&ours, &DecodeOptions::default()).unwrap();
    let ref_decode = |m: &[u8]| {
        tensogram::decode(m, &tensogram::DecodeOptions::default())
            .map(|(_, o)| o[0].1.clone())
            .unwrap_or_else(|e| panic!("the reference cannot read {desc:?}: {e}"))
    };
    let own = ref_decode(&reference);
    let of_ours = ref_decode(&ours);
    let at = of_ours.iter().zip(&own).position(|(a, b)| a != b);
    assert!(
        of_ours == own,
        "the reference reads tgm's {desc:?} differently from byte {at:?}"
    );
    assert!(
        mine.objects[0].data == own,
        "tgm reads {desc:?} differently"
    );
    true
}

/// Cases whose AEC payload differs from the reference's pure-Rust coder.
static DIFFERING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn packed(n: usize, bits: u64) -> (ObjectDescriptor, Vec<u8>) {
    let data: Vec<u8> = smooth_field(n)
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let d =
        ObjectDescriptor::new(Dtype::Float64, vec![n as u64]).with_byte_order(ByteOrder::Little);
    let d = edit_raw(d, |r| {
        r.encoding = "simple_packing".into();
        r.params
            .insert("sp_bits_per_value".into(), Value::Uint(bits));
    });
    (d, data)
}

#[test]
fn simple_packed_fields_read_back_identically() {
    let mut checked = 0;
    for &n in &[1usize, 100, 5000, 70_001] {
        for bits in [8u64, 16, 24, 32] {
            for (rsi, block, flags) in [
                (128, 16, 8),
                (64, 32, 8),
                (1, 8, 8),
                (4096, 64, 8),
                (32, 16, 0),
                (7, 8, 9),
            ] {
                let (d, data) = packed(n, bits);
                checked += usize::from(check(&with_szip(d, rsi, block, flags), &data));
            }
        }
    }
    // Every case but the 32-bit ones: 4 lengths × 3 widths × 6 layouts.
    assert_eq!(checked, 72, "cases the reference can encode");
}

#[test]
fn grid_721_by_1440_at_16_and_24_bits() {
    let (ny, nx) = (721usize, 1440usize);
    for bits in [16u64, 24] {
        let (mut d, data) = packed(ny * nx, bits);
        d.shape = vec![ny as u64, nx as u64];
        d.strides = vec![nx as u64, 1];
        assert!(check(&with_szip(d, 128, 32, 8), &data));
    }
}

#[test]
fn raw_integers_and_shuffled_floats_read_back_identically() {
    let mut checked = 0;
    for (d, data) in szip_raw_cases(&[
        Dtype::Uint8,
        Dtype::Int8,
        Dtype::Int16,
        Dtype::Uint16,
        Dtype::Int32,
        Dtype::Uint32,
        Dtype::Float32,
    ]) {
        checked += usize::from(check(&d, &data));
    }
    // All but unshuffled 32-bit samples: 4 narrower dtypes × 2 byte orders
    // × 5 layouts, and the shuffled layout (8-bit samples) of the 3 others,
    // less big-endian float32, whose little-endian data holds NaN bit patterns.
    assert_eq!(checked, 45, "cases the reference can encode");
}

#[test]
fn every_coding_option_is_exercised() {
    let data = szip_option_mix();
    // Constant stretches code as zero-block runs; in this build the reference
    // writes a 64-block run at a segment end as an explicit count where
    // libaec (and tgm) write the shorter ROS codeword.
    for flags in [0u64, 1, 8, 9] {
        for (rsi, block) in [(128u64, 16u64), (2, 8), (4096, 64), (3, 32)] {
            let d = ObjectDescriptor::new(Dtype::Uint16, vec![data.len() as u64 / 2])
                .with_byte_order(ByteOrder::Little);
            assert!(check(&with_szip(d, rsi, block, flags), &data));
        }
    }
}

#[test]
fn zero_elements() {
    let d = ObjectDescriptor::new(Dtype::Uint16, vec![0]).with_byte_order(ByteOrder::Little);
    check(&with_szip(d, 128, 16, 8), &[]);
}

#[test]
fn simple_packing_at_other_widths_with_szip_is_refused() {
    for bits in [1u64, 4, 7, 12, 15, 20, 31] {
        let (d, data) = packed(1000, bits);
        let d = with_szip(d, 128, 16, 8);
        let err = tgm::encode(
            &GlobalMetadata::default(),
            &[(&d, &data)],
            &EncodeOptions::new(),
        )
        .unwrap_err();
        assert_eq!(
            *err.kind(),
            tgm::ErrorKind::UnsupportedCodec,
            "{bits}: {err}"
        );
        assert!(err.to_string().contains("misread"), "{err}");
        // The reference accepts it and reads back something else.
        let rdesc = to_ref_desc(&d);
        if let Ok(Ok(msg)) = std::panic::catch_unwind(|| {
            tensogram::encode(
                &Default::default(),
                &[(&rdesc, &data[..])],
                &Default::default(),
            )
        }) {
            let plain = {
                let (p, _) = packed(1000, bits);
                tensogram::encode(
                    &Default::default(),
                    &[(&to_ref_desc(&p), &data[..])],
                    &Default::default(),
                )
                .unwrap()
            };
            let got = std::panic::catch_unwind(|| tensogram::decode(&msg, &Default::default()));
            let want = tensogram::decode(&plain, &Default::default()).unwrap();
            if let Ok(Ok((_, objs))) = got {
                assert_ne!(objs[0].1, want.1[0].1, "{bits} bits unexpectedly survived");
            }
        }
    }
}

#[test]
fn the_exact_libaec_profile_is_what_the_reference_misreads() {
    // A smooth 8-bit packed field: libaec codes some reference blocks with
    // the second extension, which the reference's pure-Rust decoder reads
    // one sample out of step. The default profile never does.
    let (d, data) = packed(5000, 8);
    let d = with_szip(d, 128, 16, 8);
    let mut popts = tgm::pipeline::PipelineOptions::default();
    popts.szip_profile = tgm::szip::SzipProfile::Libaec;
    let exact = tgm::encode(
        &GlobalMetadata::default(),
        &[(&d, &data)],
        &EncodeOptions::new().pipeline(popts),
    )
    .unwrap();
    let default = tgm::encode(
        &GlobalMetadata::default(),
        &[(&d, &data)],
        &EncodeOptions::new(),
    )
    .unwrap();
    assert_ne!(exact, default);
    let ours_exact = tgm::decode(&exact, &DecodeOptions::default()).unwrap();
    let ours_default = tgm::decode(&default, &DecodeOptions::default()).unwrap();
    assert_eq!(ours_exact.objects[0].data, ours_default.objects[0].data);
    let (_, theirs) = tensogram::decode(&default, &Default::default()).unwrap();
    assert_eq!(theirs[0].1, ours_default.objects[0].data);
    if let Ok(Ok((_, misread))) =
        std::panic::catch_unwind(|| tensogram::decode(&exact, &Default::default()))
    {
        assert_ne!(misread[0].1, ours_exact.objects[0].data);
    }
}

#[test]
fn parallel_rsi_decoding_equals_sequential_even_with_lying_offsets() {
    use tgm::szip::{self, flags, SzipParams};
    let p = SzipParams {
        bits_per_sample: 16,
        block_size: 16,
        rsi: 8,
        flags: flags::PREPROCESS | flags::MSB,
    };
    let input: Vec<u8> = (0..100_003u32)
        .flat_map(|i| {
            (((i as f64 * 0.001).sin() * 3000.0 + 30000.0) as u16 ^ (i % 5) as u16).to_be_bytes()
        })
        .collect();
    let (stream, offsets) = szip::encode(&input, &p).unwrap();
    for threads in [2usize, 3, 8] {
        let mut out = vec![0u8; input.len()];
        szip::decode_parallel_into(&stream, &p, &offsets, &mut out, threads).unwrap();
        assert!(out == input, "{threads} threads");
        let mut bad = offsets.clone();
        let mid = bad.len() / 2;
        bad[mid] += 3;
        let mut out = vec![0u8; input.len()];
        szip::decode_parallel_into(&stream, &p, &bad, &mut out, threads).unwrap();
        assert!(
            out == input,
            "lying offsets fall back to sequential decoding"
        );
        let mut out = vec![0u8; input.len()];
        let seq = szip::decode_into(&stream[..stream.len() / 2], &p, &mut out).unwrap_err();
        let par = szip::decode_parallel_into(
            &stream[..stream.len() / 2],
            &p,
            &offsets,
            &mut out,
            threads,
        )
        .unwrap_err();
        assert_eq!(seq.to_string(), par.to_string());
    }
    // Whole messages with a thread budget decode to the same values.
    let (d, data) = packed(200_000, 16);
    let d = with_szip(d, 32, 16, 8);
    let msg = tgm::encode(
        &GlobalMetadata::default(),
        &[(&d, &data)],
        &EncodeOptions::new(),
    )
    .unwrap();
    let one = tgm::decode(&msg, &DecodeOptions::default()).unwrap();
    let two = tgm::decode(&msg, &DecodeOptions::default().threads(2)).unwrap();
    assert!(one.objects[0].data == two.objects[0].data);
}
