//! The progress hook (`spec/pipeline.md` §6.7): called per chunk during
//! one large object's encode or decode, with growing counts ending at the
//! object's size, and without changing a byte of the message or a value.

use std::sync::{Arc, Mutex};

use tgm::pipeline::{ProgressHook, Step};
use tgm::{ByteOrder, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor, PipelineBuilder};

/// 64 MiB of float64 that zstd still has to work on.
fn field() -> Vec<u8> {
    (0..(8u64 << 20))
        .flat_map(|i| ((i as f64 * 1e-4).sin() * 40.0 + 273.15).to_le_bytes())
        .collect()
}

/// A hook recording every step.
fn recorder() -> (ProgressHook, Arc<Mutex<Vec<Step>>>) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&calls);
    (
        ProgressHook::new(move |s| seen.lock().unwrap().push(s)),
        calls,
    )
}

/// Checks steps of an object of `total` bytes: `done` and `read` grow,
/// the last reports the whole object, and there are at least `min`.
fn check_steps(calls: &[Step], total: u64, min: usize) {
    assert!(calls.len() >= min, "{} steps: {calls:?}", calls.len());
    assert!(calls.iter().all(|s| s.total == total), "{calls:?}");
    assert!(
        calls
            .windows(2)
            .all(|w| w[0].done < w[1].done && w[0].read <= w[1].read),
        "counts grow: {calls:?}"
    );
    assert_eq!(calls.last().map(|s| s.done), Some(total));
}

fn opts() -> EncodeOptions {
    EncodeOptions::new().provenance(tgm::Provenance::fixed("2024-01-01T00:00:00Z", "u"))
}

/// Encodes `data` through `pipeline` with a recording hook; returns the
/// message, the message without the hook and the calls.
fn encode_recorded(data: &[u8], pipeline: &PipelineBuilder) -> (Vec<u8>, Vec<u8>, Vec<Step>) {
    encode_recorded_as(Dtype::Float64, data, pipeline)
}

/// [`encode_recorded`] of elements of `dtype`.
fn encode_recorded_as(
    dtype: Dtype,
    data: &[u8],
    pipeline: &PipelineBuilder,
) -> (Vec<u8>, Vec<u8>, Vec<Step>) {
    let n = data.len() / dtype.width();
    let d = ObjectDescriptor::new(dtype, vec![n as u64])
        .with_byte_order(ByteOrder::Little)
        .with_pipeline(pipeline);
    let (hook, calls) = recorder();
    let meta = GlobalMetadata::default();
    let with = tgm::encode(&meta, &[(&d, data)], &opts().progress(hook)).unwrap();
    let without = tgm::encode(&meta, &[(&d, data)], &opts()).unwrap();
    let calls = calls.lock().unwrap().clone();
    (with, without, calls)
}

#[test]
fn a_64_mib_zstd_encode_reports_every_chunk_up_to_the_total() {
    let data = field();
    let total = data.len() as u64;
    let (with, without, calls) = encode_recorded(&data, &PipelineBuilder::new().zstd());
    assert_eq!(with, without, "the hook changes no byte");
    // One step per 4 MiB chunk, the input read as it is compressed.
    check_steps(&calls, total, 16);
    assert!(calls[0].done < total / 8, "the first report comes early");
    assert!(calls.iter().all(|s| s.read == s.done), "{calls:?}");
}

#[test]
fn a_packed_then_compressed_encode_reports_scaled_to_the_element_bytes() {
    let data = field();
    let total = data.len() as u64;
    let p = PipelineBuilder::new().simple_packing(16).zstd();
    let (with, without, calls) = encode_recorded(&data, &p);
    assert_eq!(with, without);
    // The packing, first of two working stages, tells what it has read
    // with nothing done yet; then zstd, which sees a quarter of the bytes,
    // reports one step per 4 MiB of packed stream, the input all read.
    let (packing, compressing): (Vec<Step>, Vec<Step>) =
        calls.iter().copied().partition(|s| s.done == 0);
    assert!(
        packing.windows(2).all(|w| w[0].read < w[1].read),
        "{packing:?}"
    );
    assert!(packing.iter().all(|s| s.read <= total), "{packing:?}");
    check_steps(&compressing, total, 4);
    assert!(compressing.iter().all(|s| s.read == total), "{calls:?}");
}

#[test]
fn a_shuffle_reports_its_input_read_before_zstd_reports_progress() {
    let data = field();
    let total = data.len() as u64;
    let p = PipelineBuilder::new().shuffle().zstd();
    let (with, without, calls) = encode_recorded(&data, &p);
    assert_eq!(with, without, "the hook changes no byte");
    // The shuffle reads the input once, in order: the input is read for
    // good 4 MiB at a time while nothing is done yet; then zstd reports
    // its progress over the shuffled copy, the input all read.
    let (shuffling, compressing): (Vec<Step>, Vec<Step>) =
        calls.iter().copied().partition(|s| s.done == 0);
    assert!(shuffling.len() >= 15, "{calls:?}");
    assert!(
        shuffling.windows(2).all(|w| w[0].read < w[1].read),
        "{shuffling:?}"
    );
    assert_eq!(shuffling.last().map(|s| s.read), Some(total));
    check_steps(&compressing, total, 16);
    assert!(compressing.iter().all(|s| s.read == total), "{calls:?}");
}

#[test]
fn a_pipeline_with_no_working_stage_reports_once() {
    let data = field()[..1 << 20].to_vec();
    let (with, without, calls) = encode_recorded(&data, &PipelineBuilder::new());
    assert_eq!(with, without);
    // The payload is the input itself: reported done, nothing read for good.
    let whole = Step {
        done: 1 << 20,
        total: 1 << 20,
        read: 0,
    };
    assert_eq!(calls, vec![whole]);
}

/// Decodes `obj` with a recording hook, into a caller's buffer or not;
/// returns the values and the calls.
fn decode_recorded(obj: &tgm::decode::Object<'_>, into: bool) -> (Vec<u8>, Vec<Step>) {
    let (hook, calls) = recorder();
    let opts = tgm::DecodeOptions::default().progress(hook);
    let values = if into {
        let len = obj.descriptor().decoded_len().unwrap() as usize;
        let mut out = vec![0u8; len];
        obj.decode_into(&opts, &mut out).unwrap();
        out
    } else {
        obj.decode(&opts).unwrap().into_owned()
    };
    let calls = calls.lock().unwrap().clone();
    (values, calls)
}

#[test]
fn a_64_mib_zstd_decode_reports_every_chunk_of_the_payload_read() {
    let data = field();
    let total = data.len() as u64;
    let (msg, _, _) = encode_recorded(&data, &PipelineBuilder::new().zstd());
    let m = tgm::decode::Message::parse(&msg).unwrap();
    let obj = m.object(0).unwrap();
    let stored = obj.payload_region().len() as u64;
    for into in [false, true] {
        let (values, calls) = decode_recorded(&obj, into);
        assert!(values == data, "the values are those of a plain decode");
        let chunks = stored.div_ceil(4 << 20) as usize;
        check_steps(&calls, total, chunks);
        assert_eq!(calls.last().map(|s| s.read), Some(stored));
        assert!(calls[0].read <= 4 << 20, "{calls:?}");
    }
}

#[test]
fn a_damaged_zstd_payload_fails_as_without_the_hook() {
    let data = field()[..4 << 20].to_vec();
    fails_alike_when_cut(
        "zstd",
        Dtype::Float64,
        &data,
        &PipelineBuilder::new().zstd(),
    );
}

/// Decodes the first half of the payload `pipeline` gives `data`, with and
/// without a hook: the same error, and no step saying the object is done.
fn fails_alike_when_cut(name: &str, dtype: Dtype, data: &[u8], pipeline: &PipelineBuilder) {
    let (msg, _, _) = encode_recorded_as(dtype, data, pipeline);
    let m = tgm::decode::Message::parse(&msg).unwrap();
    let obj = m.object(0).unwrap();
    let mut cut = obj.payload_region().to_vec();
    cut.truncate(cut.len() / 2);
    let d = obj.descriptor();
    let limits = tgm::Limits::default();
    let plain = tgm::pipeline::decode(d, &cut, 0, &Default::default(), &limits).unwrap_err();
    let (hook, calls) = recorder();
    let mut popts = tgm::pipeline::PipelineDecodeOptions::default();
    popts.progress = hook;
    let hooked = tgm::pipeline::decode(d, &cut, 0, &popts, &limits).unwrap_err();
    assert_eq!(hooked.to_string(), plain.to_string(), "{name}");
    let calls = calls.lock().unwrap().clone();
    assert!(
        calls.iter().all(|s| s.done < s.total),
        "{name}: no end: {calls:?}"
    );
}

/// 64 MiB of 32-bit samples an szip coder has to work on.
fn samples() -> Vec<u8> {
    (0..(16u32 << 20))
        .flat_map(|i| (((i as f64 * 1e-4).sin() * 3e4) as i32 as u32 & 0xffff).to_le_bytes())
        .collect()
}

/// The pipelines whose stages report per chunk (`spec/pipeline.md` §6.7),
/// with the data they code: each a 64 MiB object.
fn chunked_cases() -> Vec<(&'static str, Dtype, Vec<u8>, PipelineBuilder)> {
    let (f, s) = (field(), samples());
    vec![
        (
            "simple_packing",
            Dtype::Float64,
            f.clone(),
            PipelineBuilder::new().simple_packing(16),
        ),
        (
            "simple_packing+szip",
            Dtype::Float64,
            f.clone(),
            PipelineBuilder::new().simple_packing(16).szip(),
        ),
        ("szip", Dtype::Uint32, s, PipelineBuilder::new().szip()),
        (
            "shuffle",
            Dtype::Float64,
            f,
            PipelineBuilder::new().shuffle(),
        ),
    ]
}

#[test]
fn every_chunked_stage_reports_every_4_mib_of_a_64_mib_encode() {
    for (name, dtype, data, pipeline) in chunked_cases() {
        let total = data.len() as u64;
        let (with, without, calls) = encode_recorded_as(dtype, &data, &pipeline);
        assert!(with == without, "{name}: the hook changes no byte");
        // 16 chunks of 4 MiB of elements.
        check_steps(&calls, total, 16);
        assert!(calls[0].done <= 4 << 20, "{name}: {calls:?}");
        assert!(
            calls.iter().all(|s| s.read <= s.done),
            "{name}: nothing is read for good before it is coded: {calls:?}"
        );
        assert_eq!(calls.last().map(|s| s.read), Some(total), "{name}");
    }
}

#[test]
fn every_chunked_stage_reports_every_4_mib_of_a_64_mib_decode() {
    for (name, dtype, data, pipeline) in chunked_cases() {
        let total = data.len() as u64;
        let (msg, _, _) = encode_recorded_as(dtype, &data, &pipeline);
        let m = tgm::decode::Message::parse(&msg).unwrap();
        let obj = m.object(0).unwrap();
        let plain = obj
            .decode(&tgm::DecodeOptions::default())
            .unwrap()
            .into_owned();
        for into in [false, true] {
            let (values, calls) = decode_recorded(&obj, into);
            assert!(
                values == plain,
                "{name}: the values are those of a plain decode"
            );
            check_steps(&calls, total, 16);
            assert!(calls[0].done <= 4 << 20, "{name} into={into}: {calls:?}");
        }
    }
}

#[test]
fn a_cut_chunked_payload_fails_as_without_the_hook() {
    for (name, dtype, data, pipeline) in chunked_cases() {
        fails_alike_when_cut(name, dtype, &data[..8 << 20], &pipeline);
    }
}

#[test]
fn a_nan_in_a_packed_encode_fails_as_without_the_hook() {
    let mut data = field()[..8 << 20].to_vec();
    data[(6 << 20)..(6 << 20) + 8].copy_from_slice(&f64::NAN.to_le_bytes());
    for pipeline in [
        PipelineBuilder::new().simple_packing(16),
        PipelineBuilder::new().simple_packing(16).szip(),
    ] {
        let d = ObjectDescriptor::new(Dtype::Float64, vec![1 << 20])
            .with_byte_order(ByteOrder::Little)
            .with_pipeline(&pipeline);
        let meta = GlobalMetadata::default();
        let plain = tgm::encode(&meta, &[(&d, &data)], &opts()).unwrap_err();
        let (hook, _) = recorder();
        let hooked = tgm::encode(&meta, &[(&d, &data)], &opts().progress(hook)).unwrap_err();
        assert_eq!(hooked.to_string(), plain.to_string());
    }
}

#[test]
fn workers_report_in_order_and_change_no_byte() {
    let data = field();
    let total = data.len() as u64;
    let d = ObjectDescriptor::new(Dtype::Float64, vec![(data.len() / 8) as u64])
        .with_byte_order(ByteOrder::Little)
        .with_pipeline(&PipelineBuilder::new().simple_packing(16).szip());
    let mut p = tgm::pipeline::PipelineOptions::default();
    p.threads = 4;
    let four = opts().pipeline(p);
    let meta = GlobalMetadata::default();
    let (hook, calls) = recorder();
    let with = tgm::encode(&meta, &[(&d, &data)], &four.clone().progress(hook)).unwrap();
    let without = tgm::encode(&meta, &[(&d, &data)], &four).unwrap();
    assert!(with == without, "the hook changes no byte");
    // Workers crossing a 4 MiB mark at once may fold two steps into one.
    check_steps(&calls.lock().unwrap(), total, 8);
    // The fused decode on four workers, in pieces.
    let m = tgm::decode::Message::parse(&with).unwrap();
    let obj = m.object(0).unwrap();
    let plain = obj.decode(&tgm::DecodeOptions::default()).unwrap();
    let (hook, calls) = recorder();
    let opts = tgm::DecodeOptions::default().threads(4).progress(hook);
    assert!(obj.decode(&opts).unwrap() == plain);
    check_steps(&calls.lock().unwrap(), total, 8);
}
