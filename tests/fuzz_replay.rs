//! Replays every fuzz corpus and regression file through the fuzz target
//! bodies (shared with `fuzz/` by path), and runs each body on generated
//! inputs so the targets are exercised by plain `cargo test`.

#[path = "../fuzz/src/targets.rs"]
mod targets;

use std::path::Path;

fn target(name: &str) -> Option<fn(&[u8])> {
    Some(match name {
        "decode" => targets::decode,
        "scan" => targets::scan,
        "cbor" => targets::cbor,
        "codecs" => targets::codecs,
        "roundtrip" => targets::roundtrip,
        "npy" => targets::npy,
        _ => return None,
    })
}

fn files(dir: &Path) -> Vec<std::path::PathBuf> {
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

#[test]
fn corpora_and_regressions_replay_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut replayed = 0;
    let mut dirs: Vec<_> = std::fs::read_dir(root.join("fuzz/corpus"))
        .expect("fuzz/corpus exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(run) = target(name) else { continue };
        for f in files(&dir) {
            run(&std::fs::read(&f).unwrap());
            replayed += 1;
        }
    }
    for f in files(&root.join("testdata/regress")) {
        let name = f.file_name().unwrap().to_str().unwrap();
        let t = name.split('-').next().unwrap();
        let run = target(t).unwrap_or_else(|| panic!("regression file {name} names no target"));
        run(&std::fs::read(&f).unwrap());
        replayed += 1;
    }
    assert!(
        replayed >= 6,
        "expected committed seeds for every target, replayed {replayed}"
    );
}

/// Mutated seeds: every target body on many small variations of real messages.
#[test]
fn target_bodies_survive_mutations() {
    let seeds = seed_inputs();
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for (name, seed) in &seeds {
        let run = target(name).unwrap();
        run(seed);
        for _ in 0..300 {
            let mut m = seed.clone();
            for _ in 0..1 + next() % 4 {
                if m.is_empty() {
                    break;
                }
                let i = (next() % m.len() as u64) as usize;
                match next() % 3 {
                    0 => m[i] ^= 1 << (next() % 8),
                    1 => m[i] = next() as u8,
                    _ => m.truncate(i),
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
    for (i, (name, bytes)) in seed_inputs().into_iter().enumerate() {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("seed-{i:03}")), bytes).unwrap();
    }
}

fn seed_inputs() -> Vec<(&'static str, Vec<u8>)> {
    use tgm::cbor::Value;
    use tgm::{ByteOrder, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};
    let mut out = Vec::new();
    let mut e = tgm::Map::new();
    e.insert(
        "mars".into(),
        Value::text_map([("param", Value::from("2t")), ("step", Value::Uint(6))]),
    );
    let meta = GlobalMetadata::with_base(vec![e]);
    let f64s: Vec<u8> = (0..64)
        .flat_map(|i| (i as f64 * 0.5 - 3.0).to_le_bytes())
        .collect();
    let mut msgs = Vec::new();
    for (enc, filt, comp) in [
        ("none", "none", "none"),
        ("simple_packing", "none", "none"),
        ("simple_packing", "shuffle", "zstd"),
        ("none", "none", "lz4"),
    ] {
        let mut d =
            ObjectDescriptor::new(Dtype::Float64, vec![8, 8]).with_byte_order(ByteOrder::Little);
        d.encoding = enc.into();
        d.filter = filt.into();
        d.compression = comp.into();
        if enc == "simple_packing" {
            d.params.insert("sp_bits_per_value".into(), Value::Uint(12));
        }
        if filt == "shuffle" {
            d.params
                .insert("shuffle_element_size".into(), Value::Uint(2));
        }
        let i16s: Vec<u8> = (0..6i16).flat_map(|v| v.to_be_bytes()).collect();
        let d2 = ObjectDescriptor::new(Dtype::Int16, vec![2, 3]).with_byte_order(ByteOrder::Big);
        msgs.push(tgm::encode(&meta, &[(&d, &f64s), (&d2, &i16s)], &EncodeOptions::new()).unwrap());
    }
    let mut s = tgm::StreamingEncoder::new(Vec::new(), &meta, &EncodeOptions::new()).unwrap();
    let d = ObjectDescriptor::new(Dtype::Uint8, vec![5]);
    s.write_object(&d, &[1, 2, 3, 4, 5]).unwrap();
    msgs.push(s.finish().unwrap().0);
    for (k, m) in msgs.iter().enumerate() {
        let mut sel = vec![k as u8 * 5];
        sel.extend_from_slice(m);
        out.push(("decode", sel));
    }
    out.push(("scan", msgs.concat()));
    out.push((
        "scan",
        [&msgs[0][..], b"junk", &msgs[4][..], &msgs[1][..40]].concat(),
    ));
    out.push(("cbor", meta.to_cbor()));
    out.push((
        "cbor",
        ObjectDescriptor::new(Dtype::Float32, vec![4]).to_cbor(),
    ));
    let packed = {
        let vals: Vec<u8> = (0..100).flat_map(|i| (i as f64).to_le_bytes()).collect();
        let p =
            tgm::pipeline::simple_packing::compute_params(&vals, ByteOrder::Little, 12, 0).unwrap();
        tgm::pipeline::simple_packing::encode(&vals, ByteOrder::Little, &p).unwrap()
    };
    out.push((
        "codecs",
        [&[3u8, 100, 0, 1, 0, 11][..], &packed[..]].concat(),
    ));
    out.push((
        "codecs",
        [
            &[10u8, 50, 0, 3, 0, 200][..],
            &tgm::pipeline::compress::zstd_compress(&[7u8; 100], 3).unwrap()[..],
        ]
        .concat(),
    ));
    out.push((
        "codecs",
        [&[14u8, 16, 0, 6, 0, 200][..], &[0, 0, 0, 16, 1, 3, 13][..]].concat(),
    ));
    out.push(("roundtrip", [&[3u8, 1, 1, 1][..], &f64s[..]].concat()));
    out.push((
        "roundtrip",
        [
            &[2u8, 0, 2, 0][..],
            &[0x7f, 0xc0, 0, 0, 0x3f, 0x80, 0, 0][..],
        ]
        .concat(),
    ));
    let npy = tgm::npy::write_npy(
        &tgm::npy::npy_layout(Dtype::Int16, &[2, 3], ByteOrder::Big),
        &[0; 12],
    );
    out.push(("npy", npy));
    out
}
