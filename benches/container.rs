//! Container throughput, tgm vs the reference, on a 64 MiB float32 message
//! with the `none` pipeline: encode, full decode, and zero-copy access.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use tgm::{
    ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor, Verify,
};

const N: u64 = 16 << 20;

fn field() -> Vec<u8> {
    (0..N)
        .flat_map(|i| ((i as f32 * 1e-3).sin() * 40.0 + 270.0).to_le_bytes())
        .collect()
}

fn ref_desc() -> tensogram::DataObjectDescriptor {
    tensogram::DataObjectDescriptor {
        obj_type: "ntensor".into(),
        ndim: 1,
        shape: vec![N],
        strides: vec![1],
        dtype: tensogram::Dtype::Float32,
        byte_order: tensogram::ByteOrder::Little,
        encoding: "none".into(),
        filter: "none".into(),
        compression: "none".into(),
        masks: None,
        params: Default::default(),
    }
}

fn bench(c: &mut Criterion) {
    let data = field();
    let desc = ObjectDescriptor::new(Dtype::Float32, vec![N]).with_byte_order(ByteOrder::Little);
    let meta = GlobalMetadata::default();
    let rdesc = ref_desc();
    let msg = tgm::encode(&meta, &[(&desc, &data)], &EncodeOptions::new()).unwrap();

    let mut g = c.benchmark_group("container_64MiB_f32");
    g.sample_size(10);
    g.measurement_time(std::time::Duration::from_secs(3));
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.bench_function("encode/tgm", |b| {
        b.iter(|| tgm::encode(&meta, &[(&desc, black_box(&data))], &EncodeOptions::new()).unwrap())
    });
    g.bench_function("encode/reference", |b| {
        b.iter(|| {
            tensogram::encode(
                &Default::default(),
                &[(&rdesc, black_box(&data[..]))],
                &Default::default(),
            )
            .unwrap()
        })
    });
    g.bench_function("decode_verified/tgm", |b| {
        b.iter(|| tgm::decode(black_box(&msg), &DecodeOptions::default()).unwrap())
    });
    g.bench_function("decode_verified/reference", |b| {
        let o = tensogram::DecodeOptions {
            verify_hash: true,
            ..Default::default()
        };
        b.iter(|| tensogram::decode(black_box(&msg), &o).unwrap())
    });
    g.bench_function("decode_unverified/tgm", |b| {
        let o = DecodeOptions::default().verify(Verify::Off);
        b.iter(|| tgm::decode(black_box(&msg), &o).unwrap())
    });
    g.bench_function("decode_unverified/reference", |b| {
        b.iter(|| tensogram::decode(black_box(&msg), &Default::default()).unwrap())
    });
    g.bench_function("object_view_verified/tgm", |b| {
        b.iter(|| {
            let m = tgm::Message::parse(black_box(&msg)).unwrap();
            let o = m.object(0).unwrap();
            black_box(o.decode(&DecodeOptions::default()).unwrap().len())
        })
    });
    g.bench_function("decode_object_unverified/tgm", |b| {
        let o = DecodeOptions::default().verify(Verify::Off);
        b.iter(|| {
            let obj = tgm::decode::locate_object(black_box(&msg), 0, 0, &o.limits).unwrap();
            black_box(obj.decode(&o).unwrap().len())
        })
    });
    g.bench_function("decode_object_unverified/reference", |b| {
        b.iter(|| tensogram::decode_object(black_box(&msg), 0, &Default::default()).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
