//! GRIB-style packing against ecCodes (Debian `libeccodes-dev`), with the
//! reference in the same run: one 4096×4096 float64 smooth field, encoded
//! and decoded as GRIB2 `grid_simple` and `grid_ccsds` at 16 and 24 bits
//! (from ecCodes' `regular_ll_sfc_grib2` sample) and as Tensogram
//! simple_packing and simple_packing + szip by tgm and by the reference.
//! Needs `--features eccodes-bench`; encoded sizes are printed and written to
//! `target/criterion/eccodes_sizes.json` for `benches/table.py`.
//!
//! Everything runs on one thread. ecCodes encodes into its handle's buffer
//! and decodes into a caller array, both reused between iterations; the
//! `tgm_into` rows do the same through `encode_into` and
//! `decode_object_into`, the `tgm` rows allocate fresh output every time.

use std::ffi::c_long;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tgm::{
    DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor, PipelineBuilder, Verify,
};

const N: usize = SIDE * SIDE;

#[path = "common/grib.rs"]
mod grib;
use grib::{grib_decode, Grib, SIDE};

/// The same smooth field as `benches/pipeline.rs`, laid out 4096×4096.
fn field() -> Vec<f64> {
    (0..N)
        .map(|i| {
            let x = i as f64;
            250.0 + 30.0 * (x * 1.3e-5).sin() + 5.0 * (x * 7e-4).cos()
        })
        .collect()
}

fn tgm_desc(bits: u32, szip: bool) -> ObjectDescriptor {
    let p = PipelineBuilder::new().simple_packing(bits);
    let p = if szip { p.szip() } else { p };
    ObjectDescriptor::new(Dtype::Float64, vec![SIDE as u64, SIDE as u64]).with_pipeline(&p)
}

#[path = "common/reference.rs"]
mod reference;
use reference::to_ref;

fn bench(c: &mut Criterion) {
    let values = field();
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let cases = [
        ("simple16", "grid_simple", 16u32, false),
        ("simple16+szip", "grid_ccsds", 16, true),
        ("simple24", "grid_simple", 24, false),
        ("simple24+szip", "grid_ccsds", 24, true),
    ];
    let meta = GlobalMetadata::default();
    let topts = EncodeOptions::new();
    let dopts = DecodeOptions::default().verify(Verify::Off);
    let ropts = tensogram::EncodeOptions::default();
    let mut sizes = Vec::new();
    let mut g = c.benchmark_group("eccodes_4096x4096");
    g.sample_size(10);
    g.warm_up_time(std::time::Duration::from_millis(500));
    g.measurement_time(std::time::Duration::from_secs(3));
    g.throughput(Throughput::Bytes(raw.len() as u64));
    for (name, packing, bits, szip) in cases {
        let mut grib = Grib::new(packing, bits as c_long);
        let grib_msg = grib.encode(&values).to_vec();
        let d = tgm_desc(bits, szip);
        let tgm_msg = tgm::encode(&meta, &[(&d, &raw)], &topts).expect("tgm encode");
        let rd = to_ref(&d);
        let ref_msg = tensogram::encode(&Default::default(), &[(&rd, &raw[..])], &ropts)
            .expect("reference encode");
        println!(
            "sizes {name}: ecCodes {} tgm {} reference {}",
            grib_msg.len(),
            tgm_msg.len(),
            ref_msg.len()
        );
        sizes.push(format!(
            "\"{name}\": {{\"eccodes\": {}, \"tgm\": {}, \"reference\": {}}}",
            grib_msg.len(),
            tgm_msg.len(),
            ref_msg.len()
        ));
        g.bench_function(BenchmarkId::new("encode/eccodes", name), |b| {
            b.iter(|| black_box(grib.encode(black_box(&values)).len()))
        });
        g.bench_function(BenchmarkId::new("encode/tgm", name), |b| {
            b.iter(|| tgm::encode(&meta, &[(&d, black_box(&raw))], &topts).expect("encode"))
        });
        let mut reused = Vec::new();
        g.bench_function(BenchmarkId::new("encode/tgm_into", name), |b| {
            b.iter(|| {
                tgm::encode_into(&meta, &[(&d, black_box(&raw))], &topts, &mut reused)
                    .expect("encode")
            })
        });
        g.bench_function(BenchmarkId::new("encode/reference", name), |b| {
            b.iter(|| {
                tensogram::encode(&Default::default(), &[(&rd, black_box(&raw[..]))], &ropts)
                    .expect("encode")
            })
        });
        let mut out = vec![0f64; N];
        g.bench_function(BenchmarkId::new("decode/eccodes", name), |b| {
            b.iter(|| grib_decode(black_box(&grib_msg), &mut out))
        });
        g.bench_function(BenchmarkId::new("decode/tgm", name), |b| {
            b.iter(|| tgm::decode(black_box(&tgm_msg), &dopts).expect("decode"))
        });
        let mut into = vec![0u8; raw.len()];
        g.bench_function(BenchmarkId::new("decode/tgm_into", name), |b| {
            b.iter(|| {
                tgm::decode_object_into(black_box(&tgm_msg), 0, &dopts, &mut into).expect("decode")
            })
        });
        g.bench_function(BenchmarkId::new("decode/reference", name), |b| {
            b.iter(|| tensogram::decode(black_box(&ref_msg), &Default::default()).expect("decode"))
        });
    }
    g.finish();
    let dir = std::path::Path::new(
        &std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into()),
    )
    .join("criterion");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(
        dir.join("eccodes_sizes.json"),
        format!("{{{}}}\n", sizes.join(", ")),
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
