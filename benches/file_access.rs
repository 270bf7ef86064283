//! Open + locate + read one object from a file of 1,000 messages: a 10 MiB
//! file and a 1 GiB file, tgm (mmap) vs the reference's file API. tgm's time
//! must not grow with the file's byte size.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use std::io::Write;
use tgm::{
    ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor, TgmFile,
};

fn make_file(dir: &std::path::Path, name: &str, values_per_message: u64) -> std::path::PathBuf {
    let path = dir.join(name);
    let d = ObjectDescriptor::new(Dtype::Float32, vec![values_per_message])
        .with_byte_order(ByteOrder::native());
    let data: Vec<u8> = (0..values_per_message)
        .flat_map(|i| (i as f32).to_ne_bytes())
        .collect();
    let msg = tgm::encode(
        &GlobalMetadata::default(),
        &[(&d, &data)],
        &EncodeOptions::new().hashing(false),
    )
    .unwrap();
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for _ in 0..1000 {
        f.write_all(&msg).unwrap();
    }
    f.flush().unwrap();
    path
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let small = make_file(dir.path(), "10MiB.tgm", 2_560); // ~10 KiB per message
    let large = make_file(dir.path(), "1GiB.tgm", 262_144); // 1 MiB per message
    let mut g = c.benchmark_group("open_locate_read_message_700");
    g.sample_size(10);
    g.measurement_time(std::time::Duration::from_secs(3));
    let opts = DecodeOptions::default();
    for (label, path) in [("10MiB", &small), ("1GiB", &large)] {
        g.bench_with_input(BenchmarkId::new("tgm", label), path, |b, p| {
            b.iter(|| {
                let f = TgmFile::open(p).unwrap();
                black_box(f.object_data(700, 0, &opts).unwrap().len())
            })
        });
        g.bench_with_input(BenchmarkId::new("reference", label), path, |b, p| {
            b.iter(|| {
                let f = tensogram::TensogramFile::open(p).unwrap();
                let m = f.read_message(700).unwrap();
                black_box(
                    tensogram::decode_object(&m, 0, &Default::default())
                        .unwrap()
                        .2
                        .len(),
                )
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
