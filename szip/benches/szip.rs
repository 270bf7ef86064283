//! szip (AEC) on its own: this crate's coder against the reference's pure-Rust
//! coder and, with `--features libaec-conformance`, libaec itself, on a
//! 16-bit and a 24-bit quantised weather field and a raw uint16 image.
//! Compressed sizes are printed once per data set.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use tgm_szip::{self as szip, flags, SzipParams};

const N: usize = 4 << 20;

fn weather(bits: u32) -> Vec<u32> {
    let max = ((1u64 << bits) - 1) as f64;
    (0..N)
        .map(|i| {
            let (y, x) = ((i / 1440) as f64, (i % 1440) as f64);
            let v = 0.5
                + 0.3 * (y * 0.013).sin() * (x * 0.004).cos()
                + 0.1 * (x * 0.05 + y * 0.02).sin();
            (v.clamp(0.0, 1.0) * max) as u32
        })
        .collect()
}

fn image() -> Vec<u32> {
    let mut s = 0x1234_5678u32;
    (0..N)
        .map(|i| {
            let (y, x) = ((i / 2048) as i64 - 1024, (i % 2048) as i64 - 1024);
            let body = if x * x + y * y < 800 * 800 { 1200 } else { 0 };
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (body + (s % 24) as i64) as u32
        })
        .collect()
}

fn containers(v: &[u32], p: &SzipParams) -> Vec<u8> {
    let sb = p.sample_bytes();
    let msb = p.flags & flags::MSB != 0;
    v.iter()
        .flat_map(|&x| {
            let b = x.to_be_bytes();
            let mut c = b[4 - sb..].to_vec();
            if !msb {
                c.reverse();
            }
            c
        })
        .collect()
}

#[cfg(feature = "libaec-conformance")]
#[path = "../tests/libaec/mod.rs"]
mod libaec;

fn bench(c: &mut Criterion) {
    // The parallel coders run on the current rayon pool: two workers here.
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let sets = [
        (
            "weather16",
            weather(16),
            SzipParams {
                bits_per_sample: 16,
                block_size: 32,
                rsi: 128,
                flags: flags::PREPROCESS | flags::MSB,
            },
        ),
        (
            "weather24",
            weather(24),
            SzipParams {
                bits_per_sample: 24,
                block_size: 32,
                rsi: 128,
                flags: flags::PREPROCESS | flags::MSB | flags::THREE_BYTE,
            },
        ),
        (
            "image_u16",
            image(),
            SzipParams {
                bits_per_sample: 16,
                block_size: 16,
                rsi: 128,
                flags: flags::PREPROCESS,
            },
        ),
    ];
    for (name, samples, p) in sets {
        let input = containers(&samples, &p);
        let rp = tensogram_szip::AecParams {
            bits_per_sample: p.bits_per_sample,
            block_size: p.block_size,
            rsi: p.rsi,
            flags: p.flags,
        };
        let (ours, offsets) = szip::encode(&input, &p).unwrap();
        let (theirs, _) = tensogram_szip::aec_compress(&input, &rp).unwrap();
        eprintln!(
            "{name}: {} bytes in; tgm {} bytes ({:.3}), reference {} bytes ({:.3})",
            input.len(),
            ours.len(),
            ours.len() as f64 / input.len() as f64,
            theirs.len(),
            theirs.len() as f64 / input.len() as f64
        );
        #[cfg(feature = "libaec-conformance")]
        {
            let l = libaec::encode(&p, &input);
            assert!(l == ours, "libaec and tgm differ");
            eprintln!("{name}: libaec {} bytes (identical to tgm)", l.len());
        }
        let mut g = c.benchmark_group(format!("szip/{name}"));
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.sample_size(10);
        g.bench_function(BenchmarkId::new("encode", "tgm"), |b| {
            b.iter(|| szip::encode(black_box(&input), &p).unwrap())
        });
        let (par, _) = two
            .install(|| szip::encode_parallel(&input, &p, szip::SzipProfile::Libaec, 2))
            .unwrap();
        assert!(par == ours, "the 2-thread encoder's bytes differ");
        g.bench_function(BenchmarkId::new("encode", "tgm-2-threads"), |b| {
            b.iter(|| {
                two.install(|| {
                    szip::encode_parallel(black_box(&input), &p, szip::SzipProfile::Libaec, 2)
                })
                .unwrap()
            })
        });
        g.bench_function(BenchmarkId::new("encode", "reference"), |b| {
            b.iter(|| tensogram_szip::aec_compress(black_box(&input), &rp).unwrap())
        });
        #[cfg(feature = "libaec-conformance")]
        g.bench_function(BenchmarkId::new("encode", "libaec"), |b| {
            b.iter(|| libaec::encode(&p, black_box(&input)))
        });
        let mut out = vec![0u8; input.len()];
        g.bench_function(BenchmarkId::new("decode", "tgm"), |b| {
            b.iter(|| szip::decode_into(black_box(&ours), &p, &mut out).unwrap())
        });
        g.bench_function(BenchmarkId::new("decode", "tgm-2-threads"), |b| {
            b.iter(|| {
                two.install(|| {
                    szip::decode_parallel_into(black_box(&ours), &p, &offsets, &mut out, 2)
                })
                .unwrap()
            })
        });
        g.bench_function(BenchmarkId::new("decode", "reference"), |b| {
            b.iter(|| tensogram_szip::aec_decompress(black_box(&theirs), input.len(), &rp).unwrap())
        });
        #[cfg(feature = "libaec-conformance")]
        g.bench_function(BenchmarkId::new("decode", "libaec"), |b| {
            b.iter(|| libaec::decode(&p, black_box(&ours), input.len()))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
