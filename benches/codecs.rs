//! Prints the book's codec tables (docs/src/performance/codecs.md): compression ratio, largest
//! absolute error and encode/decode speed of every codec on a real ERA5
//! field and a real MRI scan, all from one run. Whole messages through
//! `tgm::encode`/`tgm::decode`, one thread, best of 5 (a table generator,
//! not a timed test):
//!
//!   benches/codecs.sh
//!
//! which fetches and decodes the samples (benches/codec_samples.py) into
//! the directory it names in `TGM_CODEC_SAMPLES` (`era5` and `mri`: a
//! `.json` with title and shape, a `.f64` of little-endian float64). A
//! sample absent there is replaced, with a message, by a generated
//! stand-in (an ERA5-like 2 m temperature, an MRI-like T1 head).

use std::path::Path;
use std::time::Instant;

use tgm::cbor::Value;
use tgm::{ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

/// A field's shape and values.
type Field = (Vec<u64>, Vec<f64>);

/// Deterministic noise in [-0.5, 0.5).
fn noise(i: u64) -> f64 {
    let mut x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xd1b5_4a32_d192_ed03;
    x ^= x >> 29;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 32;
    (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5
}

/// 2 m temperature on ERA5's 0.25° grid (721 × 1440, K): a pole-to-equator
/// gradient, planetary waves, fronts and 0.05 K of noise at the archive's
/// precision.
fn era5() -> Field {
    let (ny, nx) = (721usize, 1440usize);
    let mut v = Vec::with_capacity(ny * nx);
    for j in 0..ny {
        let lat = (90.0 - j as f64 * 0.25).to_radians();
        for i in 0..nx {
            let lon = (i as f64 * 0.25).to_radians();
            let t = 250.0
                + 50.0 * lat.cos().powi(2)
                + 8.0 * (3.0 * lon + 2.0 * lat).sin() * lat.cos()
                + 3.0 * (11.0 * lon - 5.0 * lat).cos()
                + 0.8 * (37.0 * lon + 23.0 * lat).sin()
                + 0.1 * noise((j * nx + i) as u64);
            v.push((t * 1e4).round() / 1e4);
        }
    }
    (vec![ny as u64, nx as u64], v)
}

/// A T1-weighted-looking head (128 × 192 × 192 voxels): background, skull,
/// grey and white matter ellipsoids with smooth bias and Rician-like
/// noise, as whole-number intensities (an int16 scan held as float64).
fn mri() -> Field {
    let (nz, ny, nx) = (128usize, 192usize, 192usize);
    let mut v = Vec::with_capacity(nz * ny * nx);
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                let (dz, dy, dx) = (
                    (z as f64 - 64.0) / 58.0,
                    (y as f64 - 96.0) / 84.0,
                    (x as f64 - 96.0) / 72.0,
                );
                let r = (dz * dz + dy * dy + dx * dx).sqrt();
                let tissue = if r > 1.0 {
                    0.0
                } else if r > 0.92 {
                    300.0
                } else if r > 0.55 + 0.05 * (dy * 9.0).sin() * (dx * 7.0).cos() {
                    620.0
                } else {
                    880.0
                };
                let bias = 1.0 + 0.15 * dz + 0.05 * dx;
                let n = noise((z * ny * nx + y * nx + x) as u64) * 40.0;
                v.push((tissue * bias + n).max(0.0).round());
            }
        }
    }
    (vec![nz as u64, ny as u64, nx as u64], v)
}

/// One codec compared: label, encoding, compression and keys.
type Case = (
    String,
    &'static str,
    &'static str,
    Vec<(&'static str, Value)>,
);

/// The codecs compared.
fn codecs(lossy_abs: f64) -> Vec<Case> {
    let t = |s: &str| Value::Text(s.into());
    vec![
        ("none".into(), "none", "none", vec![]),
        (
            "zstd 3".into(),
            "none",
            "zstd",
            vec![("zstd_level", Value::Uint(3))],
        ),
        ("lz4".into(), "none", "lz4", vec![]),
        (
            "blosc2 lz4 5".into(),
            "none",
            "blosc2",
            vec![
                ("blosc2_codec", t("lz4")),
                ("blosc2_clevel", Value::Uint(5)),
            ],
        ),
        (
            "blosc2 zstd 5".into(),
            "none",
            "blosc2",
            vec![
                ("blosc2_codec", t("zstd")),
                ("blosc2_clevel", Value::Uint(5)),
            ],
        ),
        (
            "simple_packing 16 + szip".into(),
            "simple_packing",
            "szip",
            vec![
                ("sp_bits_per_value", Value::Uint(16)),
                ("szip_rsi", Value::Uint(128)),
                ("szip_block_size", Value::Uint(16)),
                ("szip_flags", Value::Uint(8)),
            ],
        ),
        (
            "zfp fixed_rate 16".into(),
            "none",
            "zfp",
            vec![
                ("zfp_mode", t("fixed_rate")),
                ("zfp_rate", Value::Float(16.0)),
            ],
        ),
        (
            format!("zfp fixed_accuracy {lossy_abs}"),
            "none",
            "zfp",
            vec![
                ("zfp_mode", t("fixed_accuracy")),
                ("zfp_tolerance", Value::Float(lossy_abs)),
            ],
        ),
        (
            format!("sz3 abs {lossy_abs}"),
            "none",
            "sz3",
            vec![
                ("sz3_error_bound_mode", t("abs")),
                ("sz3_error_bound", Value::Float(lossy_abs)),
            ],
        ),
        (
            "sz3 rel 1e-4".into(),
            "none",
            "sz3",
            vec![
                ("sz3_error_bound_mode", t("rel")),
                ("sz3_error_bound", Value::Float(1e-4)),
            ],
        ),
    ]
}

/// Best wall time of 5 runs of `f`, in seconds.
fn best<T>(mut f: impl FnMut() -> T) -> (f64, T) {
    let mut out = None;
    let mut t = f64::INFINITY;
    for _ in 0..5 {
        let a = Instant::now();
        let r = f();
        t = t.min(a.elapsed().as_secs_f64());
        out = Some(r);
    }
    (t, out.expect("ran"))
}

fn table(name: &str, shape: Vec<u64>, values: &[f64], lossy_abs: f64) {
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mb = raw.len() as f64 / 1e6;
    println!("\n{name}: {:?} float64, {:.1} MB\n", shape, mb);
    println!("| codec | ratio | max abs error | encode MB/s | decode MB/s |");
    println!("|---|---:|---:|---:|---:|");
    for (label, encoding, compression, keys) in codecs(lossy_abs) {
        let params: tgm::Map = keys.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let d = ObjectDescriptor::new(Dtype::Float64, shape.clone())
            .with_byte_order(ByteOrder::Little)
            .with_raw_pipeline(encoding, "none", compression, params)
            .expect("valid keys");
        let meta = GlobalMetadata::default();
        let (te, msg) =
            best(|| tgm::encode(&meta, &[(&d, &raw)], &EncodeOptions::new()).expect("encodes"));
        let (td, out) = best(|| tgm::decode(&msg, &DecodeOptions::default()).expect("decodes"));
        let back = &out.objects[0].data;
        let err = back
            .chunks_exact(8)
            .zip(values)
            .map(|(b, v)| (f64::from_le_bytes(b.try_into().expect("8 bytes")) - v).abs())
            .fold(0.0, f64::max);
        println!(
            "| {label} | {:.2} | {:.2e} | {:.0} | {:.0} |",
            raw.len() as f64 / msg.len() as f64,
            err,
            mb / te,
            mb / td
        );
    }
}

/// A decoded sample: title, shape and values.
type Sample = (String, Vec<u64>, Vec<f64>);

/// `dir/name.json` (title, shape) and `dir/name.f64` (values), checked
/// against each other.
fn load(dir: &Path, name: &str) -> Result<Sample, String> {
    let meta_path = dir.join(format!("{name}.json"));
    let data_path = dir.join(format!("{name}.f64"));
    let text =
        std::fs::read_to_string(&meta_path).map_err(|e| format!("{}: {e}", meta_path.display()))?;
    let meta: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", meta_path.display()))?;
    let title = meta["title"].as_str().unwrap_or(name).to_string();
    let shape: Vec<u64> = meta["shape"]
        .as_array()
        .and_then(|a| a.iter().map(|d| d.as_u64()).collect())
        .ok_or_else(|| format!("{}: no shape of whole numbers", meta_path.display()))?;
    let bytes = std::fs::read(&data_path).map_err(|e| format!("{}: {e}", data_path.display()))?;
    let count = shape
        .iter()
        .try_fold(8u64, |n, &d| n.checked_mul(d))
        .filter(|&n| n == bytes.len() as u64);
    if count.is_none() {
        return Err(format!(
            "{}: {} bytes, not 8 x the shape {shape:?} of {}",
            data_path.display(),
            bytes.len(),
            meta_path.display()
        ));
    }
    let values = bytes
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect();
    Ok((title, shape, values))
}

/// The sample `name` from `TGM_CODEC_SAMPLES`, or the generated stand-in.
fn sample(name: &str, stand_in: &str, generate: fn() -> Field) -> Sample {
    let why = match std::env::var_os("TGM_CODEC_SAMPLES") {
        Some(dir) => match load(Path::new(&dir), name) {
            Ok(s) => return s,
            Err(e) => e,
        },
        None => "TGM_CODEC_SAMPLES is not set (benches/codecs.sh sets it)".into(),
    };
    println!("\nno real {name} sample ({why}): using the generated {stand_in}");
    let (shape, values) = generate();
    (stand_in.to_string(), shape, values)
}

fn main() {
    // sz3 decodes run in a child: this benchmark again (spec/pipeline.md §4.7).
    tgm::sz3_child::run_child_if_requested();
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let (title, shape, v) = sample("era5", "ERA5-like 2 m temperature", era5);
    table(&title, shape, &v, 1e-2);
    let (title, shape, v) = sample("mri", "MRI-like T1 volume", mri);
    table(&title, shape, &v, 0.5);
}
