//! `StreamingEncoder::write_object_streaming` (`spec/pipeline.md` §6.10):
//! an object whose pipeline does nothing is written in steps, each
//! reported as read, into the same bytes `write_object` writes; a
//! non-finite value is refused naming its index in the array.

use std::sync::{Arc, Mutex};

use tgm::pipeline::{PipelineOptions, ProgressHook, Step};
use tgm::{
    DecodeOptions, Dtype, EncodeOptions, ErrorKind, GlobalMetadata, ObjectDescriptor,
    PipelineBuilder, Provenance, StreamingEncoder, Verify,
};

fn opts() -> EncodeOptions {
    EncodeOptions::new().provenance(Provenance::fixed(
        "2026-01-01T00:00:00Z",
        "00000000-0000-0000-0000-000000000000",
    ))
}

fn values(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| (i as f64 * 0.5).to_le_bytes())
        .collect()
}

fn message(
    streaming: bool,
    d: &ObjectDescriptor,
    data: &[u8],
    opts: &EncodeOptions,
) -> tgm::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut enc = StreamingEncoder::new(&mut out, &GlobalMetadata::default(), opts)?;
    if streaming {
        enc.write_object_streaming(d, data)?;
    } else {
        enc.write_object(d, data)?;
    }
    enc.finish()?;
    Ok(out)
}

#[test]
fn a_verbatim_object_is_written_in_steps_as_write_object_writes_it() {
    let n = 3 << 20; // 24 MiB of float64: three 8 MiB steps
    let data = values(n);
    let d = ObjectDescriptor::new(Dtype::Float64, vec![n as u64]);
    let steps: Arc<Mutex<Vec<Step>>> = Arc::default();
    let seen = Arc::clone(&steps);
    let hooked = opts().progress(ProgressHook::new(move |s| seen.lock().unwrap().push(s)));
    let streamed = message(true, &d, &data, &hooked).unwrap();
    assert_eq!(streamed, message(false, &d, &data, &opts()).unwrap());
    let steps = steps.lock().unwrap();
    let reads: Vec<u64> = steps.iter().map(|s| s.read).collect();
    assert_eq!(reads, vec![8 << 20, 16 << 20, 24 << 20]);
    assert!(steps
        .iter()
        .all(|s| s.total == 24 << 20 && s.done == s.read));
    let back = tgm::decode(&streamed, &DecodeOptions::default().verify(Verify::Require)).unwrap();
    assert_eq!(&back.objects[0].data[..], &data[..]);
}

#[test]
fn a_non_finite_value_is_refused_naming_its_index() {
    let n = 2 << 20;
    let mut data = values(n);
    let at = (1 << 20) + 3; // in the second step
    data[at * 8..at * 8 + 8].copy_from_slice(&f64::NAN.to_le_bytes());
    let d = ObjectDescriptor::new(Dtype::Float64, vec![n as u64]);
    let e = message(true, &d, &data, &opts()).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::NonFinite);
    assert!(
        e.to_string().contains(&format!("NaN at element {at} ")),
        "{e}"
    );
    let plain = message(false, &d, &data, &opts()).unwrap_err();
    assert_eq!(plain.kind(), &ErrorKind::NonFinite);
    assert!(
        plain.to_string().contains(&format!("NaN at element {at} ")),
        "{plain}"
    );
}

#[test]
fn other_objects_are_written_as_write_object_writes_them() {
    let data = values(1000);
    let zstd = ObjectDescriptor::new(Dtype::Float64, vec![1000])
        .with_pipeline(&PipelineBuilder::new().zstd());
    let mut popts = PipelineOptions::default();
    popts.allow_nan = true;
    let with_nan = opts().pipeline(popts);
    for (d, o) in [
        (&zstd, opts()),
        (&ObjectDescriptor::new(Dtype::Float64, vec![1000]), with_nan),
    ] {
        assert_eq!(
            message(true, d, &data, &o).unwrap(),
            message(false, d, &data, &o).unwrap()
        );
    }
}
