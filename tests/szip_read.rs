//! Reading szip objects written by the reference: every value identical to
//! the reference's own decode, whole and by range.

mod common;

use common::*;
use tgm::cbor::Value;
use tgm::{ByteOrder, DecodeOptions, Dtype, ObjectDescriptor};

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

/// Whether the reference's pure-Rust szip coder writes `desc` correctly.
/// At 32 bits per sample its bit writer shifts a 32-bit word by 32 after a
/// write that ends on a byte boundary: an overflow panic in debug builds,
/// silently corrupt output in release builds (`spec/pipeline.md` §8).
fn reference_can_encode(desc: &ObjectDescriptor) -> bool {
    coder_bits(desc) < 32
}

/// The reference encodes `desc` (with szip); tgm must decode exactly what the
/// same pipeline without szip decodes to. Returns whether the case could be
/// checked: the reference must be able to encode it
/// ([`reference_can_encode`]) and accept the data. The reference's own szip decoder is not used
/// as the yardstick: its range decoder fails on ranges spanning RSIs.
fn check(desc: &ObjectDescriptor, data: &[u8]) -> bool {
    if !reference_can_encode(desc) {
        return false;
    }
    let rdesc = to_ref_desc(desc);
    // The reference refuses data that is not finite in the declared byte
    // order (its strict-NaN check).
    let Ok(msg) = tensogram::encode(&Default::default(), &[(&rdesc, data)], &Default::default())
    else {
        return false;
    };
    let plain = edit_raw(desc.clone(), |r| {
        r.compression = "none".into();
        r.params.retain(|k, _| !k.starts_with("szip_"));
    });
    let plain_msg = tensogram::encode(
        &Default::default(),
        &[(&to_ref_desc(&plain), data)],
        &Default::default(),
    )
    .unwrap();
    for native in [true, false] {
        let opts = DecodeOptions::default().native_byte_order(native);
        let want = tgm::decode(&plain_msg, &opts).unwrap();
        let ours = tgm::decode(&msg, &opts).unwrap();
        assert_eq!(ours.objects[0].data, want.objects[0].data, "{desc:?}");
    }
    let n = desc.num_elements().unwrap();
    if n > 10 && desc.filter() == "none" {
        let want = tgm::decode(&plain_msg, &DecodeOptions::default()).unwrap();
        let w = if desc.encoding() == "simple_packing" {
            8
        } else {
            desc.dtype.width() as u64
        };
        let ranges = [(0u64, 1u64), (n / 3, n / 4), (n - 5, 5), (1, n - 2)];
        let ours = tgm::decode_range(&msg, 0, &ranges, &DecodeOptions::default()).unwrap();
        for (&(o, c), got) in ranges.iter().zip(&ours) {
            assert_eq!(
                &want.objects[0].data[(o * w) as usize..((o + c) * w) as usize],
                &got[..],
                "range ({o}, {c}) of {desc:?}"
            );
        }
    }
    true
}

#[test]
fn simple_packed_fields_at_container_widths() {
    let mut checked = 0;
    for &n in &[1usize, 100, 5000, 70_001] {
        let data: Vec<u8> = smooth_field(n)
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        for bits in [8u64, 16, 24, 32] {
            for (rsi, block, flags) in [
                (128, 16, 8),
                (64, 32, 8),
                (1, 8, 8),
                (4096, 64, 8),
                (32, 16, 0),
            ] {
                let d = ObjectDescriptor::new(Dtype::Float64, vec![n as u64])
                    .with_byte_order(ByteOrder::Little);
                let d = edit_raw(d, |r| {
                    r.encoding = "simple_packing".into();
                    r.params
                        .insert("sp_bits_per_value".into(), Value::Uint(bits));
                });
                checked += usize::from(check(&with_szip(d, rsi, block, flags), &data));
            }
        }
    }
    // Every case but the 32-bit ones: 4 lengths × 3 widths × 5 layouts.
    assert_eq!(checked, 60, "cases the reference can encode");
}

#[test]
fn raw_integers_and_shuffled_floats() {
    let mut checked = 0;
    for (d, data) in szip_raw_cases(&[
        Dtype::Uint8,
        Dtype::Int16,
        Dtype::Uint16,
        Dtype::Int32,
        Dtype::Uint32,
        Dtype::Float32,
    ]) {
        checked += usize::from(check(&d, &data));
    }
    // All but unshuffled 32-bit samples: 3 narrower dtypes × 2 byte orders
    // × 5 layouts, and the shuffled layout (8-bit samples) of the 3 others,
    // less big-endian float32, whose little-endian data holds NaN bit patterns.
    assert_eq!(checked, 35, "cases the reference can encode");
}

#[test]
fn noisy_and_constant_data_exercise_every_option() {
    // Constant runs (zero blocks), small residuals (second extension),
    // noise (uncompressed), ramps (splits).
    let data = szip_option_mix();
    for flags in [0u64, 1, 8, 9] {
        for (rsi, block) in [(128u64, 16u64), (2, 8), (4096, 64), (3, 32)] {
            assert!(check(
                &with_szip(
                    ObjectDescriptor::new(Dtype::Uint16, vec![data.len() as u64 / 2])
                        .with_byte_order(ByteOrder::Little),
                    rsi,
                    block,
                    flags,
                ),
                &data,
            ));
        }
    }
}

#[test]
fn corrupted_streams_fail_cleanly() {
    let data: Vec<u8> = (0..4000u32)
        .flat_map(|i| ((i * 13) as u16).to_le_bytes())
        .collect();
    let d = with_szip(
        ObjectDescriptor::new(Dtype::Uint16, vec![4000]).with_byte_order(ByteOrder::Little),
        128,
        16,
        8,
    );
    let msg = tensogram::encode(
        &Default::default(),
        &[(&to_ref_desc(&d), &data[..])],
        &Default::default(),
    )
    .unwrap();
    let m = tgm::Message::parse(&msg).unwrap();
    let o = m.object(0).unwrap();
    let region = o.payload_region().to_vec();
    let desc = o.descriptor().clone();
    let opts = tgm::pipeline::PipelineDecodeOptions::default();
    for cut in [0usize, 1, region.len() / 2, region.len() - 1] {
        assert!(
            tgm::pipeline::decode(&desc, &region[..cut], 0, &opts, &Default::default()).is_err(),
            "cut {cut}"
        );
    }
    for i in (0..region.len()).step_by(7) {
        let mut r = region.clone();
        r[i] ^= 0xa5;
        // Either an error or some output of exactly the right size; never a panic.
        if let Ok(out) = tgm::pipeline::decode(&desc, &r, 0, &opts, &Default::default()) {
            assert_eq!(out.len(), data.len());
        }
    }
}

/// Ranges asked for in one call, unsorted, overlapping, repeated, empty and
/// several to an RSI (decoded together, `spec/pipeline.md` §7), give what
/// each range gives alone and what the whole decode holds there, through
/// simple_packing and without an encoding; a range past the end fails the
/// call.
#[test]
fn ranges_in_one_call_give_each_range_alone() {
    use tgm::{EncodeOptions, GlobalMetadata, PipelineBuilder};
    let n = 20_000u64;
    let values: Vec<u8> = smooth_field(n as usize)
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let ints: Vec<u8> = (0..n as u32)
        .flat_map(|i| (i / 7 + (i % 13) * 40).to_le_bytes())
        .collect();
    let cases = [
        (
            Dtype::Float64,
            PipelineBuilder::new().simple_packing(16),
            &values,
        ),
        (
            Dtype::Float64,
            PipelineBuilder::new().simple_packing(24),
            &values,
        ),
        (Dtype::Uint32, PipelineBuilder::new(), &ints),
    ];
    for (dtype, pipeline, data) in cases {
        let desc = ObjectDescriptor::new(dtype, vec![n])
            .with_byte_order(ByteOrder::Little)
            .with_pipeline(&pipeline.szip());
        let desc = with_szip(desc, 4, 16, 8);
        let msg = tgm::encode(
            &GlobalMetadata::default(),
            &[(&desc, data)],
            &EncodeOptions::new(),
        )
        .unwrap();
        let opts = DecodeOptions::default();
        let whole = tgm::decode(&msg, &opts).unwrap().objects[0].data.clone();
        let w = dtype.width() as u64;
        let ranges = [
            (900, 10),
            (5, 3),
            (10, 40),
            (5, 3),
            (64, 0),
            (70, 1),
            (130, 200),
            (19_990, 10),
            (n / 2, n / 3),
            (0, n),
        ];
        let got = tgm::decode_range(&msg, 0, &ranges, &opts).unwrap();
        for (&(first, count), got) in ranges.iter().zip(&got) {
            let alone = tgm::decode_range(&msg, 0, &[(first, count)], &opts).unwrap();
            assert_eq!(got, &alone[0], "({first}, {count}) of {desc:?}");
            let (a, b) = ((first * w) as usize, ((first + count) * w) as usize);
            assert_eq!(&got[..], &whole[a..b], "({first}, {count}) of {desc:?}");
        }
        let bad = tgm::decode_range(&msg, 0, &[(5, 3), (n - 1, 2)], &opts).unwrap_err();
        assert!(bad.to_string().contains("exceeds"), "{bad}");
    }
}
