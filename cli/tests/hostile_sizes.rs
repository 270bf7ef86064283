//! Descriptors that claim far more than their payloads hold: every
//! decoding command refuses them with a clean error while the claim is still
//! a number, and no run's resident memory grows past 64 MiB
//! (`spec/pipeline.md` §6.9). The files are valid Tensogram (frames and
//! lengths consistent, no hashes): only the shape lies.
//!
//! These tests are alone in this binary so that the peak resident size of
//! the children it waits for, which the kernel reports as one maximum, is
//! theirs alone.

#![cfg(target_os = "linux")]

mod common;

use std::path::Path;

use common::tgm_in;
use tgm::pipeline::{PipelineOptions, ZstdFrameSize};
use tgm::{Dtype, EncodeOptions, GlobalMetadata, Message, ObjectDescriptor, PipelineBuilder};

/// Elements of the honest object: its CBOR shape entry is `1a 00 01 11 71`,
/// four bytes wide like every claim below, so patching keeps every length.
const HONEST: u32 = 70_001;

/// Peak resident size allowed for any one run.
const MAX_RSS_BYTES: u64 = 64 << 20;

/// One pipeline, its element type, and its options.
struct Case {
    name: &'static str,
    dtype: Dtype,
    pipeline: PipelineBuilder,
    zstd_frame_size: ZstdFrameSize,
}

fn cases() -> Vec<Case> {
    let case = |name, dtype, pipeline| Case {
        name,
        dtype,
        pipeline,
        zstd_frame_size: ZstdFrameSize::Recorded,
    };
    vec![
        case("plain", Dtype::Float32, PipelineBuilder::new()),
        case("zstd", Dtype::Float32, PipelineBuilder::new().zstd()),
        Case {
            zstd_frame_size: ZstdFrameSize::Omitted,
            ..case(
                "zstd-unsized",
                Dtype::Float32,
                PipelineBuilder::new().zstd(),
            )
        },
        case("lz4", Dtype::Float32, PipelineBuilder::new().lz4()),
        case(
            "simple_packing",
            Dtype::Float64,
            PipelineBuilder::new().simple_packing(16),
        ),
        case(
            "simple_packing+szip",
            Dtype::Float64,
            PipelineBuilder::new().simple_packing(16).szip(),
        ),
    ]
}

/// Element counts claiming about 1, 4 and 16 GiB of `dtype` (the largest
/// within the default 16 GiB object limit and a four-byte CBOR integer).
fn claims(dtype: Dtype) -> [u32; 3] {
    match dtype.width() {
        4 => [1 << 28, 1 << 30, u32::MAX],
        _ => [1 << 27, 1 << 29, i32::MAX as u32],
    }
}

/// The honest message of `case`: a smooth field of [`HONEST`] elements.
fn honest(case: &Case) -> Vec<u8> {
    let values = (0..HONEST).map(|i| 270.0 + (f64::from(i) * 0.01).sin() * 30.0);
    let data: Vec<u8> = match case.dtype {
        Dtype::Float32 => values.flat_map(|v| (v as f32).to_ne_bytes()).collect(),
        _ => values.flat_map(f64::to_ne_bytes).collect(),
    };
    let desc = ObjectDescriptor::new(case.dtype, vec![u64::from(HONEST)])
        .with_byte_order(tgm::ByteOrder::native())
        .with_pipeline(&case.pipeline);
    let mut popts = PipelineOptions::default();
    popts.zstd_frame_size = case.zstd_frame_size;
    let opts = EncodeOptions::new().hashing(false).pipeline(popts);
    tgm::encode(&GlobalMetadata::default(), &[(&desc, &data[..])], &opts).unwrap()
}

/// `msg` with every shape entry of [`HONEST`] replaced by `claim`; the
/// parsed descriptor must then say `claim`.
fn forged(msg: &[u8], claim: u32) -> Vec<u8> {
    let mut honest = vec![0x1a];
    honest.extend(HONEST.to_be_bytes());
    let mut lie = vec![0x1a];
    lie.extend(claim.to_be_bytes());
    let mut out = msg.to_vec();
    let mut patched = 0;
    for at in 0..out.len() - honest.len() {
        if out[at..at + honest.len()] == honest[..] {
            out[at..at + honest.len()].copy_from_slice(&lie);
            patched += 1;
        }
    }
    assert!(patched >= 1, "no shape entry to patch");
    let m = Message::parse(&out).unwrap();
    let shape = m.object(0).unwrap().descriptor().shape.clone();
    assert_eq!(shape, vec![u64::from(claim)]);
    out
}

/// The peak resident size of every child this process has waited for.
fn children_peak_rss() -> u64 {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    assert_eq!(rc, 0);
    // Linux reports kilobytes.
    u64::try_from(usage.ru_maxrss).unwrap() * 1024
}

/// Every decoding command on `file`, each with its own output path.
fn decoding_commands(file: &str, out: &Path) -> Vec<Vec<String>> {
    let o = |name: &str| out.join(name).display().to_string();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        s(&["stats", file]),
        s(&["plot", file, "-o", &o("p.png")]),
        s(&["export", file, "-o", &o("export")]),
        s(&["recompress", file, &o("r.tgm"), "--compression", "zstd"]),
        s(&["validate", "--full", file]),
        s(&["to-nifti", file, "-o", &o("n.nii")]),
    ]
}

#[test]
fn claims_beyond_the_payload_are_refused_in_every_decoding_command() {
    let dir = tempfile::tempdir().unwrap();
    for case in cases() {
        let msg = honest(&case);
        for claim in claims(case.dtype) {
            let name = format!("{}-{claim}.tgm", case.name.replace('+', "-"));
            std::fs::write(dir.path().join(&name), forged(&msg, claim)).unwrap();
            let out = tempfile::tempdir_in(dir.path()).unwrap();
            for args in decoding_commands(&name, out.path()) {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let r = tgm_in(dir.path(), &args);
                let what = format!("{} {args:?}", case.name);
                assert!(!r.ok, "{what}: succeeded on a forged shape\n{}", r.out);
                assert!(
                    !r.err.contains("panicked") && r.code != 101,
                    "{what}: panicked\n{}",
                    r.err
                );
                assert!(
                    r.err.contains("error"),
                    "{what}: no error message\n{}",
                    r.err
                );
                let peak = children_peak_rss();
                assert!(
                    peak < MAX_RSS_BYTES,
                    "{what}: peak resident size {peak} bytes\n{}",
                    r.err
                );
            }
        }
    }
}

#[test]
fn stats_names_what_the_payload_can_supply() {
    let dir = tempfile::tempdir().unwrap();
    let plain = cases().into_iter().next().unwrap();
    let file = dir.path().join("plain.tgm");
    std::fs::write(&file, forged(&honest(&plain), u32::MAX)).unwrap();
    let r = tgm_in(dir.path(), &["stats", "plain.tgm"]);
    assert!(!r.ok);
    assert!(
        r.err.contains("17179869180") && r.err.contains("280004"),
        "the error names the claim and the payload: {}",
        r.err
    );
}
