//! Replays every fuzz corpus and regression file through the fuzz target
//! bodies (shared with `fuzz/` by path), and runs each body on mutations of
//! generated seeds so the targets are exercised by plain `cargo test`.

#[path = "../fuzz/src/lib.rs"]
mod tgm_fuzz;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tgm::cbor::Value;
use tgm::{ByteOrder, Dtype, EncodeOptions, GlobalMetadata, HashPolicy, ObjectDescriptor};

/// Targets of the converters (`fuzz/src/medical.rs`, `fuzz/src/weather.rs`),
/// which need `tgm-convert`: replayed by `convert/tests/` instead.
const CONVERTERS: [&str; 2] = ["medical_", "weather_"];

/// Targets of the optional compressors (`fuzz/src/compressors.rs`), which
/// need tgm features the default test build lacks; they carry no corpus.
const FEATURE_TARGETS: [&str; 3] = ["blosc2", "zfp", "sz3"];

fn is_converter(name: &str) -> bool {
    CONVERTERS.iter().any(|p| name.starts_with(p)) || FEATURE_TARGETS.contains(&name)
}

/// No committed input may take longer than this (the CI fuzzer's timeout is 10 s).
const SLOW: Duration = Duration::from_secs(5);

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn replay(name: &str, path: &Path) {
    let run =
        tgm_fuzz::target(name).unwrap_or_else(|| panic!("{} names no fuzz target", path.display()));
    let data = std::fs::read(path).unwrap();
    let t = Instant::now();
    run(&data);
    assert!(
        t.elapsed() < SLOW,
        "{} took {:?}",
        path.display(),
        t.elapsed()
    );
}

#[test]
fn corpora_and_regressions_replay_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in tgm_fuzz::TARGETS {
        let seeds = files(&root.join("fuzz/corpus").join(name));
        assert!(!seeds.is_empty(), "fuzz/corpus/{name} has no seeds");
        for f in seeds {
            replay(name, &f);
        }
    }
    for f in files(&root.join("testdata/regress")) {
        let file = f.file_name().unwrap().to_str().unwrap().to_string();
        let name = file.split('-').next().unwrap();
        if is_converter(name) {
            continue;
        }
        replay(name, &f);
    }
}

#[test]
fn every_corpus_directory_is_a_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    for dir in std::fs::read_dir(root).unwrap() {
        let name = dir.unwrap().file_name().into_string().unwrap();
        if is_converter(&name) {
            continue;
        }
        assert!(
            tgm_fuzz::target(&name).is_some(),
            "corpus {name} has no target"
        );
    }
}

/// Every target body on many small variations of its seeds.
#[test]
fn target_bodies_survive_mutations() {
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for (name, seed) in seed_inputs() {
        let run = tgm_fuzz::target(name).unwrap();
        run(&seed);
        for _ in 0..150 {
            let mut m = seed.clone();
            for _ in 0..1 + next() % 4 {
                if m.is_empty() {
                    break;
                }
                let i = (next() % m.len() as u64) as usize;
                match next() % 4 {
                    0 => m[i] ^= 1 << (next() % 8),
                    1 => m[i] = next() as u8,
                    2 => m.truncate(i),
                    _ => m.insert(i, next() as u8),
                }
            }
            run(&m);
        }
    }
}

/// Writes the seed corpora under fuzz/corpus/ (run on demand:
/// `cargo test --test fuzz_replay -- --ignored write_seed_corpora`).
#[test]
#[ignore = "regenerates committed files"]
fn write_seed_corpora() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let seeds = seed_inputs();
    for name in tgm_fuzz::TARGETS {
        let dir = root.join(name);
        if dir.exists() {
            for f in files(&dir) {
                if f.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("seed-")
                {
                    std::fs::remove_file(f).unwrap();
                }
            }
        }
    }
    for (i, (name, bytes)) in seeds.into_iter().enumerate() {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("seed-{i:03}")), bytes).unwrap();
    }
}

fn meta() -> GlobalMetadata {
    let mut e = tgm::Map::new();
    e.insert(
        "mars".into(),
        Value::text_map([("param", Value::from("2t")), ("step", Value::Uint(6))]),
    );
    GlobalMetadata::with_base(vec![e])
}

fn f64_bytes(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| (i as f64 * 0.5 - 3.0).to_le_bytes())
        .collect()
}

/// Messages covering every pipeline stage, masks, hashing modes and streaming.
fn messages() -> Vec<Vec<u8>> {
    let meta = meta();
    let f64s = f64_bytes(64);
    let mut msgs = Vec::new();
    for (k, (enc, filt, comp)) in [
        ("none", "none", "none"),
        ("simple_packing", "none", "none"),
        ("simple_packing", "shuffle", "zstd"),
        ("none", "none", "lz4"),
        ("simple_packing", "none", "szip"),
    ]
    .into_iter()
    .enumerate()
    {
        let mut params = tgm::Map::new();
        if enc == "simple_packing" {
            let bits = if comp == "szip" { 16 } else { 12 };
            params.insert("sp_bits_per_value".into(), Value::Uint(bits));
        }
        if filt == "shuffle" {
            params.insert("shuffle_element_size".into(), Value::Uint(2));
        }
        if comp == "szip" {
            for (key, v) in [("szip_rsi", 4), ("szip_block_size", 8), ("szip_flags", 8)] {
                params.insert(key.into(), Value::Uint(v));
            }
        }
        let d = ObjectDescriptor::new(Dtype::Float64, vec![8, 8])
            .with_byte_order(ByteOrder::Little)
            .with_raw_pipeline(enc, filt, comp, params)
            .unwrap();
        let i16s: Vec<u8> = (0..6i16).flat_map(|v| v.to_be_bytes()).collect();
        let d2 = ObjectDescriptor::new(Dtype::Int16, vec![2, 3]).with_byte_order(ByteOrder::Big);
        let policy = [HashPolicy::Auto, HashPolicy::Both, HashPolicy::None][k % 3];
        let opts = EncodeOptions::new().hashing(k != 3).hash_policy(policy);
        msgs.push(tgm::encode(&meta, &[(&d, &f64s), (&d2, &i16s)], &opts).unwrap());
    }
    // NaN and infinities recorded in masks.
    let vals: Vec<u8> = [
        1.0f32,
        f32::NAN,
        f32::INFINITY,
        -2.0,
        f32::NEG_INFINITY,
        0.5,
    ]
    .iter()
    .flat_map(|v| v.to_be_bytes())
    .collect();
    let mut popts = tgm::pipeline::PipelineOptions::default();
    popts.allow_nan = true;
    popts.allow_inf = true;
    let d = ObjectDescriptor::new(Dtype::Float32, vec![6]).with_byte_order(ByteOrder::Big);
    msgs.push(tgm::encode(&meta, &[(&d, &vals)], &EncodeOptions::new().pipeline(popts)).unwrap());
    // Streaming, with a preceder.
    let mut s = tgm::StreamingEncoder::new(Vec::new(), &meta, &EncodeOptions::new()).unwrap();
    let mut entry = tgm::Map::new();
    entry.insert("note".into(), Value::from("first"));
    s.write_preceder(entry).unwrap();
    s.write_object(
        &ObjectDescriptor::new(Dtype::Uint8, vec![5]),
        &[1, 2, 3, 4, 5],
    )
    .unwrap();
    msgs.push(s.finish().unwrap().0);
    // A bitmask payload with rle compression.
    let d = ObjectDescriptor::new(Dtype::Bitmask, vec![20])
        .with_pipeline(&tgm::PipelineBuilder::new().rle());
    msgs.push(tgm::encode(&meta, &[(&d, &[0xf0, 0x0f, 0xa0])], &EncodeOptions::new()).unwrap());
    msgs
}

/// Seeds for every target: real messages, their parts, and codec streams.
fn seed_inputs() -> Vec<(&'static str, Vec<u8>)> {
    let msgs = messages();
    let mut out = Vec::new();
    for (k, m) in msgs.iter().enumerate() {
        out.push(("decode", [&[(k * 5) as u8][..], m].concat()));
    }
    out.push(("scan", msgs.concat()));
    let files = msgs.concat();
    let cat = tgm::file::catalogue::Catalogue::build_for(&files, &tgm::Limits::default())
        .unwrap()
        .unwrap();
    out.push(("catalogue", [&[0u8][..], &cat.to_body()].concat()));
    let catalogued = [&[1u8][..], &files, &cat.to_message().unwrap()].concat();
    out.push(("catalogue", catalogued.clone()));
    out.push(("catalogue", catalogued[..catalogued.len() - 9].to_vec()));
    let archive = tgm::TgmFile::from_source(files.clone(), &tgm::Limits::default()).unwrap();
    let apart = tgm::file::archive_catalogue::ArchiveCatalogue::of_file(
        &archive,
        "a.tgm",
        &tgm::Limits::default(),
    )
    .unwrap()
    .to_message()
    .unwrap();
    let len = (apart.len() as u16).to_le_bytes();
    out.push(("archive_catalogue", [&len[..], &apart, &files].concat()));
    let cut = &files[..files.len() - 20];
    out.push(("archive_catalogue", [&len[..], &apart, cut].concat()));
    out.push(("catalogue_recorder", [&[0u8, 0][..], &files].concat()));
    out.push(("catalogue_recorder", [&[7u8, 0][..], &files].concat()));
    out.push((
        "catalogue_recorder",
        [&[0u8, 1][..], &files, &cat.to_message().unwrap()].concat(),
    ));
    out.push((
        "scan",
        [&msgs[0][..], b"junk", &msgs[6], &msgs[1][..40]].concat(),
    ));
    let all = msgs.concat();
    out.push((
        "chunked",
        [&(msgs[0].len() as u16 + 3).to_le_bytes()[..], &all].concat(),
    ));
    out.push(("chunked", [&[40u8, 1][..], &msgs[6], &msgs[2]].concat()));
    let mut sz_region = Vec::new();
    let mut sz_params = None;
    for m in &msgs {
        let p = tgm::Message::parse(m).unwrap();
        out.push(("metadata", p.metadata().unwrap().to_cbor()));
        for i in 0..p.num_objects() {
            let o = p.object(i).unwrap();
            out.push(("descriptor", o.descriptor().to_cbor()));
            let d = o.descriptor();
            if d.compression() == "szip" && sz_params.is_none() {
                sz_params = Some(tgm::__fuzz::coder_params_of(d).unwrap());
                sz_region = o.payload_region().to_vec();
            }
            let region = o.payload_region();
            if d.encoding() == "simple_packing" && d.compression() == "none" {
                out.push(("codecs", [&[3u8, 64, 0, 1, 0, 12][..], region].concat()));
            }
        }
    }
    out.push(("cbor", meta().to_cbor()));
    out.push((
        "cbor",
        vec![0x9f, 0xa1, 0x61, b'k', 0x80, 0xf9, 0x7e, 0x00, 0xff],
    ));
    let p = sz_params.expect("an szip seed message");
    let mut szh = vec![p.bits_per_sample as u8, 0];
    szh.extend_from_slice(&(p.rsi as u16).to_le_bytes());
    szh.push(p.flags as u8);
    szh.extend_from_slice(&(64u16 * 2).to_le_bytes());
    szh.extend_from_slice(&[16, 0, 3]);
    out.push(("szip", [&szh[..], &sz_region].concat()));
    let mut pre = vec![0u8, 128, 0, 0x77];
    pre.extend_from_slice(&szh[..5]);
    pre.push(0);
    out.push(("prefilled", [&pre[..], &sz_region].concat()));
    out.push((
        "codecs",
        [
            &[10u8, 50, 0, 3, 0, 200][..],
            &tgm::__fuzz::zstd_codec::zstd_compress(&[7u8; 100], 3).unwrap()[..],
        ]
        .concat(),
    ));
    out.push((
        "codecs",
        [&[14u8, 16, 0, 6, 0, 200][..], &[0, 0, 0, 16, 1, 3, 13][..]].concat(),
    ));
    let zs = tgm::__fuzz::zstd_codec::zstd_compress(&[9u8; 300], 3).unwrap();
    out.push((
        "prefilled",
        [&[3u8, 44, 1, 0x5a, 0, 0, 0, 0, 0, 0][..], &zs].concat(),
    ));
    let lz = tgm::__fuzz::lz4_codec::lz4_compress(&[1u8; 200]);
    out.push((
        "prefilled",
        [&[4u8, 200, 0, 0x5a, 0, 0, 0, 0, 0, 0][..], &lz].concat(),
    ));
    out.push((
        "prefilled",
        [&[1u8, 64, 0, 0x5a, 9, 120, 2, 12, 0, 0][..], &[0xab; 24]].concat(),
    ));
    out.push((
        "prefilled",
        [&[2u8, 0, 0, 0x5a, 4, 0, 0, 0, 0, 0][..], &[7; 32]].concat(),
    ));
    out.push((
        "prefilled",
        [&[5u8, 16, 0, 0x5a, 0, 0, 0, 0, 0, 0][..], &[1, 3, 5, 8][..]].concat(),
    ));
    out.push((
        "roundtrip",
        [&[3u8, 1, 1, 1, 2][..], &f64_bytes(12)].concat(),
    ));
    out.push((
        "roundtrip",
        [
            &[2u8, 0, 2, 0x13, 1][..],
            &[0x7f, 0xc0, 0, 0, 0x3f, 0x80, 0, 0][..],
        ]
        .concat(),
    ));
    // Files: every message kind back to back; one cut inside a message
    // that carries another in its payload.
    out.push(("file", [&[0u8, 0x00, 0x80][..], &msgs.concat()].concat()));
    let nested = {
        let inner = &msgs[0];
        let d = ObjectDescriptor::new(Dtype::Uint8, vec![inner.len() as u64]);
        tgm::encode(&meta(), &[(&d, &inner[..])], &EncodeOptions::new()).unwrap()
    };
    out.push((
        "file",
        [
            &[5u8, 0xff, 0xe0][..],
            &msgs[1],
            &nested[..nested.len() - 9],
        ]
        .concat(),
    ));
    out.push((
        "file",
        [&[2u8, 0x40, 0x00][..], &msgs[6], &msgs[2]].concat(),
    ));
    // Tensors: ROS messages (int16 3x4 transposed; float32 broadcast row;
    // bool with lanes), and decoded messages of every kind.
    let transposed = [
        &[4u8][..],
        &[0, 16, 1, 0, 2],
        &4i16.to_le_bytes(),
        &3i16.to_le_bytes(),
        &1i16.to_le_bytes(),
        &4i16.to_le_bytes(),
        &0u16.to_le_bytes(),
        &(0..12i16).flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
    ]
    .concat();
    out.push(("tensor", transposed));
    let broadcast = [
        &[4u8][..],
        &[2, 32, 1, 0, 2],
        &5i16.to_le_bytes(),
        &3i16.to_le_bytes(),
        &0i16.to_le_bytes(),
        &1i16.to_le_bytes(),
        &0u16.to_le_bytes(),
        &[0u8; 12],
    ]
    .concat();
    out.push(("tensor", broadcast));
    out.push((
        "tensor",
        [
            &[0u8][..],
            &[6, 8, 4, 0, 1],
            &3i16.to_le_bytes(),
            &[0, 0],
            &[1; 12],
        ]
        .concat(),
    ));
    for (k, m) in msgs.iter().enumerate() {
        out.push(("tensor", [&[(2 * k + 1) as u8][..], m].concat()));
    }
    let npy = tgm::npy::write_npy(
        &tgm::npy::npy_layout(Dtype::Int16, &[2, 3], ByteOrder::Big),
        &[0; 12],
    );
    out.push(("npy", npy));
    out
}
