//! Pipeline stages on a 16-million-value float64 field, tgm vs the reference,
//! whole messages through each library's public encode/decode.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use tgm::cbor::Value;
use tgm::{
    ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor, Verify,
};

const N: usize = 16 << 20;

fn field() -> Vec<u8> {
    (0..N)
        .flat_map(|i| {
            let x = i as f64;
            (250.0 + 30.0 * (x * 1.3e-5).sin() + 5.0 * (x * 7e-4).cos()).to_le_bytes()
        })
        .collect()
}

fn desc(encoding: &str, bits: u64, filter: &str, compression: &str) -> ObjectDescriptor {
    let mut params = tgm::Map::new();
    if encoding == "simple_packing" {
        params.insert("sp_bits_per_value".into(), Value::Uint(bits));
    }
    if filter == "shuffle" {
        let size = if encoding == "simple_packing" {
            bits.div_ceil(8)
        } else {
            8
        };
        params.insert("shuffle_element_size".into(), Value::Uint(size));
    }
    ObjectDescriptor::new(Dtype::Float64, vec![N as u64])
        .with_byte_order(ByteOrder::Little)
        .with_raw_pipeline(encoding, filter, compression, params)
        .expect("valid stage keys")
}

#[path = "common/reference.rs"]
mod reference;
use reference::to_ref;

fn bench(c: &mut Criterion) {
    let data = field();
    let cases = [
        ("sp16", desc("simple_packing", 16, "none", "none")),
        ("sp24", desc("simple_packing", 24, "none", "none")),
        ("sp12", desc("simple_packing", 12, "none", "none")),
        ("shuffle", desc("none", 0, "shuffle", "none")),
        ("zstd", desc("none", 0, "none", "zstd")),
        ("lz4", desc("none", 0, "none", "lz4")),
        (
            "sp16+shuffle+zstd",
            desc("simple_packing", 16, "shuffle", "zstd"),
        ),
        ("sp24+lz4", desc("simple_packing", 24, "none", "lz4")),
    ];
    let meta = GlobalMetadata::default();
    let mut g = c.benchmark_group("pipeline_16M_f64");
    g.sample_size(10);
    g.warm_up_time(std::time::Duration::from_millis(500));
    g.measurement_time(std::time::Duration::from_secs(3));
    g.throughput(Throughput::Bytes(data.len() as u64));
    let topts = EncodeOptions::new();
    let ropts = tensogram::EncodeOptions::default();
    let dopts = DecodeOptions::default().verify(Verify::Off);
    for (name, d) in &cases {
        let rd = to_ref(d);
        g.bench_with_input(BenchmarkId::new("encode/tgm", name), d, |b, d| {
            b.iter(|| tgm::encode(&meta, &[(d, black_box(&data))], &topts).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("encode/reference", name), &rd, |b, rd| {
            b.iter(|| {
                tensogram::encode(&Default::default(), &[(rd, black_box(&data[..]))], &ropts)
                    .unwrap()
            })
        });
        let msg = tgm::encode(&meta, &[(d, &data)], &topts).unwrap();
        g.bench_with_input(BenchmarkId::new("decode/tgm", name), &msg, |b, m| {
            b.iter(|| tgm::decode(black_box(m), &dopts).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("decode/reference", name), &msg, |b, m| {
            b.iter(|| tensogram::decode(black_box(m), &Default::default()).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
