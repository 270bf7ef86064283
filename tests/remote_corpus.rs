//! Files the remote tests read: every pipeline, streaming messages in the
//! middle of a file, masks, damage and torn tails, plus the held-in
//! fuzz regressions in `testdata/regress`. Also included by the other
//! `remote_*` tests; run alone it checks that memory and pread reads of
//! each file agree.
#![allow(dead_code)]

use bytes::Bytes;
use tgm::file::{ByteSource, TgmFile};
use tgm::{
    ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, Limits, ObjectDescriptor,
    PipelineBuilder, Verify,
};

pub fn f32s(n: usize, seed: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|k| ((seed * 7 + k) as f32 * 0.25).to_ne_bytes())
        .collect()
}

pub fn f64s(n: usize, seed: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|k| (((seed + k) as f64 * 0.001).sin() * 100.0 + 280.0).to_ne_bytes())
        .collect()
}

pub fn message(objs: &[(ObjectDescriptor, Vec<u8>)], opts: &EncodeOptions) -> Vec<u8> {
    let refs: Vec<_> = objs.iter().map(|(d, x)| (d, &x[..])).collect();
    tgm::encode(&GlobalMetadata::default(), &refs, opts).unwrap()
}

pub fn desc(dtype: Dtype, n: usize, p: Option<PipelineBuilder>) -> ObjectDescriptor {
    let d = ObjectDescriptor::new(dtype, vec![n as u64]).with_byte_order(ByteOrder::native());
    match p {
        Some(p) => d.with_pipeline(&p),
        None => d,
    }
}

/// One szip-compressed (simple_packing 16 bits) float64 object of `n` values.
pub fn szip_message(n: usize) -> Vec<u8> {
    let p = PipelineBuilder::new().simple_packing(16).szip();
    message(
        &[(desc(Dtype::Float64, n, Some(p)), f64s(n, 1))],
        &EncodeOptions::new(),
    )
}

/// `count` messages of three float32 objects of `elems` values.
pub fn many_messages(count: usize, elems: usize) -> Vec<u8> {
    (0..count)
        .flat_map(|m| {
            let objs: Vec<_> = (0..3)
                .map(|o| (desc(Dtype::Float32, elems, None), f32s(elems, m * 3 + o)))
                .collect();
            message(&objs, &EncodeOptions::new())
        })
        .collect()
}

pub fn streaming(objs: &[(ObjectDescriptor, Vec<u8>)], backfill: bool) -> Vec<u8> {
    let mut s = tgm::StreamingEncoder::new(
        Vec::new(),
        &GlobalMetadata::default(),
        &EncodeOptions::new(),
    )
    .unwrap();
    for (d, x) in objs {
        s.write_object(d, x).unwrap();
    }
    let mut b = s.finish().unwrap().0;
    if !backfill {
        b[16..24].fill(0);
        let n = b.len();
        b[n - 16..n - 8].fill(0);
    }
    b
}

/// Named files covering what a remote reader meets.
pub fn corpus() -> Vec<(String, Vec<u8>)> {
    let n = 20_000;
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    let pipelines: Vec<(&str, Dtype, Option<PipelineBuilder>)> = vec![
        ("none", Dtype::Float32, None),
        (
            "packed",
            Dtype::Float64,
            Some(PipelineBuilder::new().simple_packing(12)),
        ),
        (
            "packed_szip",
            Dtype::Float64,
            Some(PipelineBuilder::new().simple_packing(16).szip()),
        ),
        ("zstd", Dtype::Float32, Some(PipelineBuilder::new().zstd())),
        ("lz4", Dtype::Float32, Some(PipelineBuilder::new().lz4())),
        (
            "shuffle_zstd",
            Dtype::Float32,
            Some(PipelineBuilder::new().shuffle().zstd()),
        ),
    ];
    for (name, dt, p) in pipelines {
        let data = |k: usize, s| match dt {
            Dtype::Float64 => f64s(k, s),
            _ => f32s(k, s),
        };
        let file: Vec<u8> = (0..3)
            .flat_map(|m| {
                let objs = vec![
                    (desc(dt, n, p.clone()), data(n, m)),
                    (desc(dt, n / 2, p.clone()), data(n / 2, m + 10)),
                ];
                message(&objs, &EncodeOptions::new())
            })
            .collect();
        out.push((format!("{name}.tgm"), file));
    }
    // Streaming messages, not back-filled, between buffered ones.
    let objs = vec![
        (desc(Dtype::Float32, 5000, None), f32s(5000, 3)),
        (desc(Dtype::Float32, 7000, None), f32s(7000, 4)),
    ];
    let mut mixed = many_messages(2, 3000);
    mixed.extend(streaming(&objs, false));
    mixed.extend(many_messages(1, 3000));
    mixed.extend(streaming(&objs, true));
    mixed.extend(many_messages(1, 100));
    out.push(("streaming_mixed.tgm".into(), mixed));
    // NaN masks.
    let mut x: Vec<f64> = (0..n).map(|k| k as f64).collect();
    for k in (0..n).step_by(97) {
        x[k] = f64::NAN;
    }
    let xb: Vec<u8> = x.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let mut eo = EncodeOptions::new();
    eo.pipeline.allow_nan = true;
    out.push((
        "nan_masks.tgm".into(),
        message(&[(desc(Dtype::Float64, n, None), xb)], &eo),
    ));
    out.push((
        "nohash.tgm".into(),
        message(
            &[(desc(Dtype::Float32, 1000, None), f32s(1000, 9))],
            &EncodeOptions::new().hashing(false),
        ),
    ));
    // Damage between messages, and a torn tail.
    let mut damaged = many_messages(2, 500);
    damaged.extend_from_slice(&[0x55; 333]);
    damaged.extend(many_messages(2, 500));
    let extra = many_messages(1, 500);
    damaged.extend_from_slice(&extra[..extra.len() / 2]);
    out.push(("damaged_torn.tgm".into(), damaged));
    // A flipped payload byte: hash verification must catch it.
    let mut flipped = many_messages(1, 500);
    let k = flipped.len() / 2;
    flipped[k] ^= 0x10;
    out.push(("flipped.tgm".into(), flipped));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/regress");
    let mut reg: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    reg.sort_by_key(|e| e.file_name());
    for e in reg {
        let name = format!("regress-{}", e.file_name().to_string_lossy());
        out.push((name, std::fs::read(e.path()).unwrap()));
    }
    out
}

/// Everything a reader can be asked about a file, as text: spans, torn
/// tail, and per message its metadata and per object its descriptor, data
/// and a few element ranges (or the kind of error). Two sources hold the
/// same file exactly when their summaries are equal.
pub fn summary<S: ByteSource>(f: &TgmFile<S>) -> Vec<String> {
    let opts = DecodeOptions::default();
    let mut out = vec![format!("spans {:?}", f.spans())];
    out.push(format!(
        "torn {:?}",
        f.torn_tail().map(|t| (t.offset, t.len, t.reason.clone()))
    ));
    for m in 0..f.num_messages() {
        out.push(format!(
            "meta {m} {:?}",
            f.metadata(m, &opts)
                .map(|g| format!("{g:?}"))
                .map_err(|e| e.kind().clone())
        ));
        let descs = f.descriptors(m);
        let Ok(descs) = descs else {
            out.push(format!(
                "descs {m} {:?}",
                descs.map_err(|e| e.kind().clone())
            ));
            continue;
        };
        for (o, d) in descs.iter().enumerate() {
            let got = f.decode_object(m, o, &opts);
            out.push(format!(
                "object {m} {o} {:?}",
                got.as_ref()
                    .map(|g| (g.descriptor == *d, tgm::hash::xxh3(&g.data)))
                    .map_err(|e| e.kind().clone())
            ));
            let n = d.num_elements().unwrap_or(0);
            if got.is_ok() && n > 0 {
                let ranges = [
                    (0, 1.min(n)),
                    (n / 3, (n / 10).max(1).min(n - n / 3)),
                    (n - 1, 1),
                ];
                let mut o2 = opts.clone();
                o2.verify = Verify::Off;
                let r = f.decode_range(m, o, &ranges, &o2);
                out.push(format!(
                    "range {m} {o} {:?}",
                    r.map(|v| v.iter().map(|x| tgm::hash::xxh3(x)).collect::<Vec<_>>())
                        .map_err(|e| e.kind().clone())
                ));
            }
        }
    }
    out
}

#[test]
fn memory_and_pread_reads_of_the_corpus_agree() {
    let lim = Limits::default();
    for (name, bytes) in corpus() {
        let mem = TgmFile::from_source(Bytes::from(bytes.clone()), &lim).unwrap();
        let counted = tgm::__fuzz::file::CountingSource::new(Bytes::from(bytes.clone()));
        let pread = TgmFile::from_source_with_readahead(&counted, &lim, 4096).unwrap();
        let (a, b) = (summary(&mem), summary(&pread));
        assert_eq!(a, b, "{name}");
        let has = |p: &str| a.iter().any(|l| l.contains(p));
        if !name.starts_with("regress") {
            assert!(has("object 0 0 Ok"), "{name}: {a:?}");
        }
        if ["none", "packed", "packed_szip", "nan_masks"]
            .iter()
            .any(|p| name == format!("{p}.tgm"))
        {
            assert!(has("range 0 0 Ok"), "{name}: {a:?}");
        }
        if name == "flipped.tgm" {
            assert!(has("HashMismatch"), "{a:?}");
        }
        if name == "streaming_mixed.tgm" {
            assert!(has("object 5 1 Ok"), "{a:?}");
        }
    }
}

/// Spans, objects and values of every message, as listed.
pub fn listing<S: ByteSource>(f: &TgmFile<S>) -> Vec<(u64, u64, Vec<Vec<u8>>)> {
    (0..f.num_messages())
        .map(|m| {
            let s = f.spans()[m];
            let objs = (0..f.num_objects(m).unwrap())
                .map(|o| {
                    f.decode_object(m, o, &DecodeOptions::default())
                        .unwrap()
                        .data
                })
                .collect();
            (s.offset, s.len, objs)
        })
        .collect()
}

/// Memory read as a remote source is: requests counted, nearby ranges
/// coalesced.
pub type Counted = tgm::__fuzz::file::Coalescing<tgm::__fuzz::file::CountingSource<Bytes>>;

/// `bytes` behind [`Counted`].
pub fn counted(bytes: &[u8]) -> Counted {
    tgm::__fuzz::file::Coalescing::new(
        tgm::__fuzz::file::CountingSource::new(Bytes::copy_from_slice(bytes)),
        tgm::__fuzz::file::DEFAULT_COALESCE_GAP,
    )
}

/// `bytes` as a remote source with default options sees them: the first
/// window read by open, then counted, coalesced reads.
pub fn remote_like(bytes: &[u8]) -> tgm::__fuzz::file::HeadCached<Counted> {
    tgm::__fuzz::file::HeadCached::new(counted(bytes), tgm::__fuzz::file::DEFAULT_HEAD_WINDOW)
        .unwrap()
}
