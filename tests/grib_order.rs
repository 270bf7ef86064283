//! simple_packing in GRIB's evaluation order (`sp_grib_reference_value`,
//! `spec/pipeline.md` §2.5): values `(R + q·2^E)·10^−D` as ecCodes computes
//! them come back bit for bit through every decode path (whole, one pass
//! with szip, ranges, several threads), the codes are the ones ecCodes
//! writes, and the reference crate reads the values to within its own
//! formula's rounding.

mod common;

use common::{assert_bits, f64s};

use tgm::pipeline::PackingParams;
use tgm::{DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor, PipelineBuilder};

/// `10^n` as ecCodes' `codes_power` forms it: tens one at a time.
fn grib_ten(n: i32) -> f64 {
    let step = |p: f64, _| if n > 0 { p * 10.0 } else { p / 10.0 };
    (0..n.unsigned_abs()).fold(1.0, step)
}

/// Codes of a smooth field with noise, below `2^bits`.
fn codes(n: usize, bits: u32) -> Vec<u64> {
    let mut s = 0x9e37_79b9u32;
    let top = (1u64 << bits) - 1;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let x = 0.5 + 0.4 * (i as f64 * 2e-3).sin() + (s % 97) as f64 * 1e-3;
            ((x * top as f64) as u64).min(top)
        })
        .collect()
}

struct Field {
    params: PackingParams,
    values: Vec<f64>,
}

/// A field as ecCodes decodes it: `((q·2^E) + R)·10^−D`.
fn field(n: usize, bits: u32, grib_reference: f64, e: i32, d: i32) -> Field {
    let (two_e, ten) = (2f64.powi(e), grib_ten(-d));
    let values = codes(n, bits)
        .into_iter()
        .map(|q| ((q as f64 * two_e) + grib_reference) * ten)
        .collect();
    Field {
        params: PackingParams {
            reference_value: grib_reference * 10f64.powi(-d),
            binary_scale_factor: e,
            decimal_scale_factor: d,
            bits_per_value: bits,
            grib_reference_value: Some(grib_reference),
        },
        values,
    }
}

fn encode(f: &Field, szip: bool) -> Vec<u8> {
    let mut b = PipelineBuilder::new().simple_packing_params(f.params.into());
    if szip {
        b = b.szip();
    }
    let d = ObjectDescriptor::new(Dtype::Float64, vec![f.values.len() as u64]).with_pipeline(&b);
    let data: Vec<u8> = f.values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    tgm::encode(
        &GlobalMetadata::default(),
        &[(&d, &data)],
        &EncodeOptions::new(),
    )
    .unwrap()
}

#[test]
fn every_decode_path_gives_ecodes_values_bit_for_bit() {
    for (bits, r, e, d) in [
        (16, 2467.0, -2, 1),
        (12, -31.5, 0, 2),
        (24, 1013.0, -10, -1),
        (8, 7.0, 3, 3),
    ] {
        let szips: &[bool] = if bits % 8 == 0 {
            &[false, true]
        } else {
            &[false]
        };
        let f = field(70_000, bits, r, e, d);
        for &szip in szips {
            let what = format!("{bits} bits, R {r}, E {e}, D {d}, szip {szip}");
            let msg = encode(&f, szip);
            let mut opts = DecodeOptions::default();
            let whole = tgm::decode(&msg, &opts).unwrap();
            assert_bits(&f64s(&whole.objects[0].data), &f.values, &what);
            opts.threads = 4;
            let threaded = tgm::decode(&msg, &opts).unwrap();
            assert_bits(&f64s(&threaded.objects[0].data), &f.values, &what);
            let parts = tgm::decode_range(&msg, 0, &[(3, 1000), (66_661, 17)], &opts).unwrap();
            assert_bits(&f64s(&parts[0]), &f.values[3..1003], &what);
            assert_bits(&f64s(&parts[1]), &f.values[66_661..66_678], &what);
        }
    }
}

#[test]
fn the_codes_are_the_ones_ecodes_writes() {
    // Packing the field again gives its codes, so encoding what was decoded
    // gives the same payload.
    let f = field(5000, 16, 2467.0, -2, 1);
    let msg = encode(&f, false);
    let decoded = tgm::decode(&msg, &DecodeOptions::default()).unwrap();
    let again = Field {
        params: f.params,
        values: f64s(&decoded.objects[0].data),
    };
    let b = encode(&again, false);
    let (ma, mb) = (
        tgm::Message::parse(&msg).unwrap(),
        tgm::Message::parse(&b).unwrap(),
    );
    let payload = |m: &tgm::Message<'_>| m.object(0).unwrap().payload_region().to_vec();
    assert_eq!(payload(&ma), payload(&mb));
    let packed = payload(&ma);
    let want: Vec<u8> = codes(5000, 16)
        .iter()
        .flat_map(|&q| (q as u16).to_be_bytes())
        .collect();
    assert_eq!(packed, want);
}

#[test]
fn the_reference_reads_the_values_within_its_formulas_rounding() {
    let f = field(10_000, 16, 2467.0, -2, 1);
    let msg = encode(&f, true);
    let (_, objects) = tensogram::decode(&msg, &Default::default()).unwrap();
    let theirs = f64s(&objects[0].1);
    assert_eq!(theirs.len(), f.values.len());
    let mut differ = 0;
    for (a, b) in theirs.iter().zip(&f.values) {
        assert!((a - b).abs() <= 4.0 * f64::EPSILON * b.abs(), "{a} vs {b}");
        differ += (a != b) as usize;
    }
    // Bit-identical values need GRIB's order: that is why it is stored.
    assert!(
        differ > 0,
        "the reference's formula gave every value exactly"
    );
}

#[test]
fn a_grib_reference_without_the_other_parameters_is_refused() {
    let d = ObjectDescriptor::new(Dtype::Float64, vec![2]).with_raw_pipeline(
        "simple_packing",
        "none",
        "none",
        [
            ("sp_bits_per_value".to_string(), tgm::cbor::Value::Uint(16)),
            (
                "sp_grib_reference_value".to_string(),
                tgm::cbor::Value::Float(1.0),
            ),
        ]
        .into_iter()
        .collect(),
    );
    let d = d.unwrap();
    let e = tgm::encode(
        &GlobalMetadata::default(),
        &[(&d, &[0u8; 16][..])],
        &EncodeOptions::new(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("sp_grib_reference_value"), "{e}");
}
