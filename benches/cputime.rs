//! Whole-message encode and decode of the 16-million-value float64 field of
//! `benches/pipeline.rs`, tgm against the reference, timed by the calling
//! thread's CPU clock (user + system, page faults included) and reported as
//! the best of `REPS` (default 5) runs. Unlike wall-clock time this hardly
//! changes when other processes compete for the cores, so it compares
//! builds measured on a busy machine. Single thread; prints a Markdown table.
//!
//! `cargo bench --bench cputime [-- FILTER]`; with `--features eccodes-bench`
//! also ecCodes against tgm (FILTER `eccodes` for that table alone).

#![allow(unsafe_code)]
#![cfg_attr(not(target_os = "linux"), allow(dead_code, unused_imports))]

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("the cputime benchmark reads Linux's thread CPU clock");
}

use std::hint::black_box;
use tgm::{
    ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor,
    PipelineBuilder, Verify,
};

const N: usize = 16 << 20;

#[cfg(target_os = "linux")]
fn cpu_ms() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "no thread CPU clock");
    t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
}

#[cfg(not(target_os = "linux"))]
fn cpu_ms() -> f64 {
    0.0
}

fn best<T>(reps: usize, mut f: impl FnMut() -> T) -> f64 {
    (0..reps)
        .map(|_| {
            let a = cpu_ms();
            let r = f();
            let b = cpu_ms();
            drop(black_box(r));
            b - a
        })
        .fold(f64::INFINITY, f64::min)
}

#[path = "common/reference.rs"]
mod reference;
use reference::to_ref;

#[cfg(feature = "eccodes-bench")]
#[path = "common/grib.rs"]
mod grib;

/// ecCodes `grid_simple` / `grid_ccsds` against tgm on the 4096×4096 field,
/// both writing into reused buffers as a service would, and tgm into fresh
/// ones (`--features eccodes-bench`).
#[cfg(feature = "eccodes-bench")]
fn eccodes(reps: usize, data: &[u8]) {
    use grib::{grib_decode, Grib, SIDE};
    let values: Vec<f64> = data
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    let meta = GlobalMetadata::default();
    let topts = EncodeOptions::new();
    let dopts = DecodeOptions::default().verify(Verify::Off);
    println!();
    println!("| packing | encode ecCodes | encode tgm | tgm, reused | ecCodes ÷ tgm reused | decode ecCodes | decode tgm | tgm, reused | ecCodes ÷ tgm reused | bytes ecCodes | bytes tgm |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (name, packing, bits, szip) in [
        ("simple 16", "grid_simple", 16u32, false),
        ("simple 16 + szip/CCSDS", "grid_ccsds", 16, true),
        ("simple 24", "grid_simple", 24, false),
        ("simple 24 + szip/CCSDS", "grid_ccsds", 24, true),
    ] {
        let mut g = Grib::new(packing, bits as std::ffi::c_long);
        let p = PipelineBuilder::new().simple_packing(bits);
        let p = if szip { p.szip() } else { p };
        let d =
            ObjectDescriptor::new(Dtype::Float64, vec![SIDE as u64, SIDE as u64]).with_pipeline(&p);
        let ee = best(reps, || g.encode(&values).len());
        let gmsg = g.encode(&values).to_vec();
        let et = best(reps, || tgm::encode(&meta, &[(&d, data)], &topts).unwrap());
        let mut reused = Vec::new();
        let eti = best(reps, || {
            tgm::encode_into(&meta, &[(&d, data)], &topts, &mut reused).unwrap()
        });
        let msg = tgm::encode(&meta, &[(&d, data)], &topts).unwrap();
        let mut outf = vec![0f64; values.len()];
        let de = best(reps, || grib_decode(&gmsg, &mut outf));
        let dt = best(reps, || tgm::decode(&msg, &dopts).unwrap());
        let mut out = vec![0u8; data.len()];
        let dti = best(reps, || {
            tgm::decode_object_into(&msg, 0, &dopts, &mut out).unwrap()
        });
        println!(
            "| {name} | {ee:.1} | {et:.1} | {eti:.1} | {:.2}× | {de:.1} | {dt:.1} | {dti:.1} | {:.2}× | {} | {} |",
            ee / eti,
            de / dti,
            gmsg.len(),
            msg.len()
        );
    }
}

#[cfg(target_os = "linux")]
fn main() {
    let reps: usize = std::env::var("REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let filter = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_default();
    let data: Vec<u8> = (0..N)
        .flat_map(|i| {
            let x = i as f64;
            (250.0 + 30.0 * (x * 1.3e-5).sin() + 5.0 * (x * 7e-4).cos()).to_le_bytes()
        })
        .collect();
    let b = PipelineBuilder::new;
    let cases = [
        ("none", b()),
        ("sp16", b().simple_packing(16)),
        ("sp24", b().simple_packing(24)),
        ("sp12", b().simple_packing(12)),
        ("shuffle", b().shuffle_element_size(8)),
        ("zstd", b().zstd()),
        ("lz4", b().lz4()),
        ("sp16+shuffle+zstd", b().simple_packing(16).shuffle().zstd()),
        ("sp24+lz4", b().simple_packing(24).lz4()),
        ("sp16+szip", b().simple_packing(16).szip()),
        ("sp24+szip", b().simple_packing(24).szip()),
    ];
    let meta = GlobalMetadata::default();
    let topts = EncodeOptions::new();
    let ropts = tensogram::EncodeOptions::default();
    let dopts = DecodeOptions::default().verify(Verify::Off);
    println!("CPU ms, best of {reps}");
    println!();
    println!("| pipeline | encode tgm | encode reference | ratio | decode tgm | decode reference | ratio |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (name, p) in cases {
        if !name.contains(filter.as_str()) {
            continue;
        }
        let d = ObjectDescriptor::new(Dtype::Float64, vec![N as u64])
            .with_byte_order(ByteOrder::Little)
            .with_pipeline(&p);
        let rd = to_ref(&d);
        let et = best(reps, || tgm::encode(&meta, &[(&d, &data)], &topts).unwrap());
        let er = best(reps, || {
            tensogram::encode(&Default::default(), &[(&rd, &data[..])], &ropts).unwrap()
        });
        let msg = tgm::encode(&meta, &[(&d, &data)], &topts).unwrap();
        let dt = best(reps, || tgm::decode(&msg, &dopts).unwrap());
        let dr = best(reps, || {
            tensogram::decode(&msg, &Default::default()).unwrap()
        });
        println!(
            "| {name} | {et:.1} | {er:.1} | {:.2}× | {dt:.1} | {dr:.1} | {:.2}× |",
            er / et,
            dr / dt
        );
    }
    if "copy".contains(filter.as_str()) || filter.is_empty() {
        let fresh = best(reps, || data.to_vec());
        println!();
        println!("| copy of the 128 MiB field into a fresh buffer | {fresh:.1} |");
        println!("|---|---:|");
    }
    if "threads".contains(filter.as_str()) || filter.is_empty() {
        threads(reps, &data);
    }
    #[cfg(feature = "eccodes-bench")]
    if "eccodes".contains(filter.as_str()) || filter.is_empty() {
        eccodes(reps, &data);
    }
}

/// Wall-clock ms, best of `reps`: the thread CPU clock cannot see work
/// handed to other threads.
fn best_wall<T>(reps: usize, mut f: impl FnMut() -> T) -> f64 {
    (0..reps)
        .map(|_| {
            let a = std::time::Instant::now();
            let r = f();
            let t = a.elapsed().as_secs_f64() * 1e3;
            drop(black_box(r));
            t
        })
        .fold(f64::INFINITY, f64::min)
}

/// The splittable pipelines on 1 and 2 threads, wall-clock (FILTER
/// `threads`); only meaningful on an otherwise idle machine.
fn threads(reps: usize, data: &[u8]) {
    let b = PipelineBuilder::new;
    let meta = GlobalMetadata::default();
    println!();
    println!("| pipeline (wall ms) | encode 1 thread | encode 2 threads | speed-up | decode 1 thread | decode 2 threads | speed-up |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (name, p) in [
        ("sp16", b().simple_packing(16)),
        ("sp24", b().simple_packing(24)),
        ("sp16+szip", b().simple_packing(16).szip()),
        ("sp24+szip", b().simple_packing(24).szip()),
    ] {
        let d = ObjectDescriptor::new(Dtype::Float64, vec![N as u64])
            .with_byte_order(ByteOrder::Little)
            .with_pipeline(&p);
        let enc = |t: usize| {
            let mut po = tgm::pipeline::PipelineOptions::default();
            po.threads = t;
            EncodeOptions::new().pipeline(po)
        };
        let (e1, e2) = (enc(1), enc(2));
        let mut out = Vec::new();
        let te1 = best_wall(reps, || {
            tgm::encode_into(&meta, &[(&d, data)], &e1, &mut out).unwrap()
        });
        let te2 = best_wall(reps, || {
            tgm::encode_into(&meta, &[(&d, data)], &e2, &mut out).unwrap()
        });
        let msg = tgm::encode(&meta, &[(&d, data)], &e1).unwrap();
        let mut dec = vec![0u8; data.len()];
        let d1 = DecodeOptions::default().verify(Verify::Off).threads(1);
        let d2 = DecodeOptions::default().verify(Verify::Off).threads(2);
        let td1 = best_wall(reps, || {
            tgm::decode_object_into(&msg, 0, &d1, &mut dec).unwrap()
        });
        let td2 = best_wall(reps, || {
            tgm::decode_object_into(&msg, 0, &d2, &mut dec).unwrap()
        });
        println!(
            "| {name} | {te1:.1} | {te2:.1} | {:.2}× | {td1:.1} | {td2:.1} | {:.2}× |",
            te1 / te2,
            td1 / td2
        );
    }
}
