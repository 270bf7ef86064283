//! simple_packing over spherical harmonics (`sp_spectral_*`,
//! `spec/pipeline.md` §2.6): coefficients built by ecCodes' own formula
//! from codes and an unpacked subset come back bit for bit through every
//! decode path (whole, threads, ranges, after szip or zstd), GRIB1's
//! GRIBEX scaling of the subset's last row included, encoding them gives
//! the codes again, the reference crate decodes the codes by §2.2,
//! and malformed parameters are refused, naming the key.

mod common;

use common::{assert_bits, f64s};
use tgm::cbor::Value;
use tgm::{DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

/// A field written independently of tgm's code, as ecCodes' complex
/// spectral unpacking computes it.
struct Field {
    j: usize,
    js: usize,
    laplacian: f64,
    reference: f64,
    e: i32,
    d: i32,
    bits: u32,
    /// GRIB1's GRIBEX scaling: the subset's row n = JS scaled as the
    /// packed coefficients are.
    last_scaled: bool,
    /// One code per element (0 where the subset or a zero part stands).
    codes: Vec<u64>,
    subset: Vec<f32>,
    values: Vec<f64>,
}

fn xorshift(s: &mut u32) -> u32 {
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    *s
}

/// `10^n` as ecCodes' `codes_power` forms it.
fn grib_ten(n: i32) -> f64 {
    let step = |p: f64, _| if n > 0 { p * 10.0 } else { p / 10.0 };
    (0..n.unsigned_abs()).fold(1.0, step)
}

fn field(j: usize, js: usize, laplacian: f64, reference: f64, e: i32, d: i32, bits: u32) -> Field {
    field_with(j, js, laplacian, reference, e, d, bits, false)
}

/// [`field`] with GRIB1's GRIBEX scaling of the subset's last row when
/// `last_scaled`: `val *= scals[JS]` after the subset value is read.
#[allow(clippy::too_many_arguments)]
fn field_with(
    j: usize,
    js: usize,
    laplacian: f64,
    reference: f64,
    e: i32,
    d: i32,
    bits: u32,
    last_scaled: bool,
) -> Field {
    let mut s = 0x2545_f491u32;
    let s_e = 2f64.powi(e);
    let ten = grib_ten(-d);
    let scal: Vec<f64> = (0..=j)
        .map(|n| {
            if n == 0 {
                0.0
            } else {
                1.0 / ((n * (n + 1)) as f64).powf(laplacian)
            }
        })
        .collect();
    let (mut codes, mut subset, mut values) = (Vec::new(), Vec::new(), Vec::new());
    for m in 0..=j {
        for (n, &scal_n) in scal.iter().enumerate().skip(m) {
            for part in 0..2 {
                if n <= js {
                    let f = (xorshift(&mut s) % 20_000) as f32 / 7.0 - 1000.0;
                    subset.push(f);
                    let mut v = f64::from(f);
                    if last_scaled && n == js {
                        v *= scal_n;
                    }
                    values.push(v);
                    codes.push(0);
                } else if m == 0 && part == 1 {
                    values.push(0.0);
                    codes.push(0);
                } else {
                    let q = u64::from(xorshift(&mut s)) % (1u64 << bits);
                    values.push(ten * ((q as f64 * s_e) + reference) * scal_n);
                    codes.push(q);
                }
            }
        }
    }
    Field {
        j,
        js,
        laplacian,
        reference,
        e,
        d,
        bits,
        last_scaled,
        codes,
        subset,
        values,
    }
}

fn params(f: &Field, compression: &str) -> Vec<(String, Value)> {
    let mut p = vec![
        ("sp_bits_per_value", Value::Uint(f.bits.into())),
        (
            "sp_reference_value",
            Value::Float(f.reference * 10f64.powi(-f.d)),
        ),
        ("sp_grib_reference_value", Value::Float(f.reference)),
        ("sp_binary_scale_factor", Value::from_i64(f.e.into())),
        ("sp_decimal_scale_factor", Value::from_i64(f.d.into())),
        ("sp_spectral_truncation", Value::Uint(f.j as u64)),
        ("sp_spectral_subset_truncation", Value::Uint(f.js as u64)),
        ("sp_spectral_laplacian", Value::Float(f.laplacian)),
    ];
    if f.last_scaled {
        p.push(("sp_spectral_subset_last_scaled", Value::Bool(true)));
    }
    if compression == "szip" {
        p.push(("szip_rsi", Value::Uint(128)));
        p.push(("szip_block_size", Value::Uint(32)));
        p.push(("szip_flags", Value::Uint(8)));
    }
    p.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

fn descriptor(
    f: &Field,
    compression: &str,
    extra: Vec<(String, Value)>,
) -> tgm::Result<ObjectDescriptor> {
    let mut p = params(f, compression);
    p.extend(extra);
    ObjectDescriptor::new(Dtype::Float64, vec![f.values.len() as u64]).with_raw_pipeline(
        "simple_packing",
        "none",
        compression,
        p.into_iter().collect(),
    )
}

fn data(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

fn encode(f: &Field, compression: &str) -> Vec<u8> {
    let d = descriptor(f, compression, Vec::new()).unwrap();
    tgm::encode(
        &GlobalMetadata::default(),
        &[(&d, &data(&f.values))],
        &EncodeOptions::new(),
    )
    .unwrap()
}

fn cases() -> Vec<Field> {
    vec![
        field(63, 20, 1.29, -293.833740234375, -6, 0, 16),
        field(40, 0, 0.717074, -5.25, -12, 0, 12),
        field(30, 29, 2.0, 1013.0, -3, 2, 24),
        field(1, 0, 1.0, 0.5, 0, -1, 8),
        field_with(63, 20, 1.29, -293.833740234375, -6, 0, 16, true),
        field_with(21, 0, 0.5, 12.0, -4, 1, 16, true),
    ]
}

#[test]
fn every_decode_path_gives_the_ecodes_formula_bit_for_bit() {
    for f in cases() {
        for compression in ["none", "szip", "zstd"] {
            if compression == "szip" && f.bits % 8 != 0 {
                continue;
            }
            let what = format!("J {} JS {} {} bits, {compression}", f.j, f.js, f.bits);
            let msg = encode(&f, compression);
            let mut opts = DecodeOptions::default();
            let whole = tgm::decode(&msg, &opts).unwrap();
            assert_bits(&f64s(&whole.objects[0].data), &f.values, &what);
            opts.threads = 3;
            let threaded = tgm::decode(&msg, &opts).unwrap();
            assert_bits(&f64s(&threaded.objects[0].data), &f.values, &what);
            if compression == "zstd" {
                continue;
            }
            let n = f.values.len() as u64;
            let ranges = [(0, 1), (1, n - 2), (n / 3, 3), (n - 1, 1)];
            let parts = tgm::decode_range(&msg, 0, &ranges, &opts).unwrap();
            for ((first, count), part) in ranges.iter().zip(&parts) {
                let want = &f.values[*first as usize..(*first + *count) as usize];
                assert_bits(&f64s(part), want, &format!("{what}, range {first}+{count}"));
            }
        }
    }
}

#[test]
fn encoding_gives_the_codes_and_the_subset() {
    let f = &cases()[0];
    let msg = encode(f, "none");
    let m = tgm::Message::parse(&msg).unwrap();
    let o = m.object(0).unwrap();
    let want: Vec<u8> = f
        .codes
        .iter()
        .flat_map(|&q| (q as u16).to_be_bytes())
        .collect();
    assert_eq!(o.payload_region(), &want[..]);
    let decoded = tgm::decode(&msg, &DecodeOptions::default()).unwrap();
    let Some(Value::Bytes(subset)) = decoded.objects[0]
        .descriptor
        .pipeline()
        .params()
        .get("sp_spectral_subset")
    else {
        panic!("no sp_spectral_subset");
    };
    let want: Vec<u8> = f.subset.iter().flat_map(|v| v.to_be_bytes()).collect();
    assert_eq!(subset, &want);
}

#[test]
fn a_scaled_last_row_is_stored_unscaled() {
    let f = &cases()[4];
    assert!(f.last_scaled);
    let decoded = tgm::decode(&encode(f, "none"), &DecodeOptions::default()).unwrap();
    let p = decoded.objects[0].descriptor.pipeline().params();
    assert_eq!(
        p.get("sp_spectral_subset_last_scaled"),
        Some(&Value::Bool(true))
    );
    let Some(Value::Bytes(subset)) = p.get("sp_spectral_subset") else {
        panic!("no sp_spectral_subset");
    };
    // The subset's own values (as GRIB1 stores them), not the products.
    let want: Vec<u8> = f.subset.iter().flat_map(|v| v.to_be_bytes()).collect();
    assert_eq!(subset, &want);
    // A value of the scaled row (element 40: m = 0, n = JS = 20, real)
    // that no binary32 value scales to.
    let mut g = cases().remove(4);
    g.values[40] = f64::from_bits(g.values[40].to_bits() ^ 1);
    let e = encode_error(&g);
    assert!(
        e.contains("binary32") && e.contains("coefficient 40"),
        "{e}"
    );
}

/// The error encoding `f`'s values with its own parameters gives.
fn encode_error(f: &Field) -> String {
    let d = descriptor(f, "none", Vec::new()).unwrap();
    tgm::encode(
        &GlobalMetadata::default(),
        &[(&d, &data(&f.values))],
        &EncodeOptions::new(),
    )
    .unwrap_err()
    .to_string()
}

#[test]
fn the_reference_decodes_the_codes_without_the_scaling() {
    let f = &cases()[0];
    let msg = encode(f, "szip");
    let (_, objects) = tensogram::decode(&msg, &Default::default()).unwrap();
    let theirs = f64s(&objects[0].1);
    assert_eq!(theirs.len(), f.values.len());
    let r = f.reference * 10f64.powi(-f.d);
    let scale = 2f64.powi(f.e) * 10f64.powi(-f.d);
    for (i, (&got, &q)) in theirs.iter().zip(&f.codes).enumerate() {
        let want = r + scale * q as f64;
        assert!(
            (got - want).abs() <= 1e-9 * want.abs().max(1.0),
            "[{i}] {got} vs {want}"
        );
    }
}

#[test]
fn malformed_parameters_are_refused_naming_the_key() {
    let f = &cases()[1];
    let msg = encode(f, "none");
    let enc = |d: tgm::Result<ObjectDescriptor>| -> String {
        match d {
            Err(e) => e.to_string(),
            Ok(d) => tgm::encode(
                &GlobalMetadata::default(),
                &[(&d, &data(&f.values))],
                &EncodeOptions::new(),
            )
            .unwrap_err()
            .to_string(),
        }
    };
    let key = |k: &str, v: Value| vec![(k.to_string(), v)];
    // A subset at or above the truncation.
    let e = enc(descriptor(
        f,
        "none",
        key("sp_spectral_subset_truncation", Value::Uint(40)),
    ));
    assert!(e.contains("sp_spectral_subset_truncation"), "{e}");
    // A truncation beyond GRIB's.
    let e = enc(descriptor(
        f,
        "none",
        key("sp_spectral_truncation", Value::Uint(1 << 20)),
    ));
    assert!(e.contains("sp_spectral_truncation"), "{e}");
    // A subset of the wrong length.
    let e = enc(descriptor(
        f,
        "none",
        key("sp_spectral_subset", Value::Bytes(vec![0; 3])),
    ));
    assert!(e.contains("sp_spectral_subset"), "{e}");
    // A Laplacian that is not finite.
    let e = enc(descriptor(
        f,
        "none",
        key("sp_spectral_laplacian", Value::Float(f64::NAN)),
    ));
    assert!(e.contains("sp_spectral_laplacian"), "{e}");
    // A scaling flag that is not a boolean.
    let e = enc(descriptor(
        f,
        "none",
        key("sp_spectral_subset_last_scaled", Value::Uint(1)),
    ));
    assert!(e.contains("sp_spectral_subset_last_scaled"), "{e}");
    // A subset value that is not binary32.
    let mut g = cases().remove(1);
    g.values[0] = 0.1;
    let e = encode_error(&g);
    assert!(e.contains("binary32"), "{e}");
    // An object of another size.
    let d = ObjectDescriptor::new(Dtype::Float64, vec![10])
        .with_raw_pipeline(
            "simple_packing",
            "none",
            "none",
            params(f, "none").into_iter().collect(),
        )
        .unwrap();
    let e = tgm::encode(
        &GlobalMetadata::default(),
        &[(&d, &[0u8; 80][..])],
        &EncodeOptions::new(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("sp_spectral_truncation"), "{e}");
    // Without GRIB's order.
    let mut p = params(f, "none");
    p.retain(|(k, _)| k != "sp_grib_reference_value");
    let e = ObjectDescriptor::new(Dtype::Float64, vec![f.values.len() as u64])
        .with_raw_pipeline("simple_packing", "none", "none", p.into_iter().collect())
        .and_then(|d| {
            tgm::encode(
                &GlobalMetadata::default(),
                &[(&d, &data(&f.values))],
                &EncodeOptions::new(),
            )
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("sp_grib_reference_value"), "{e}");
    // A payload decoded without the subset it needs.
    let d = descriptor(f, "none", Vec::new()).unwrap();
    let payload = tgm::Message::parse(&msg)
        .unwrap()
        .object(0)
        .unwrap()
        .payload_region()
        .to_vec();
    let e = tgm::pipeline::decode(
        &d,
        &payload,
        0,
        &Default::default(),
        &tgm::Limits::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("sp_spectral_subset"), "{e}");
}
