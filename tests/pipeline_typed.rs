//! The typed pipeline: the builder writes what the reference's pipeline
//! helper writes, codec keys are checked by name, and range decoding of szip
//! survives wrong stored block offsets.

use std::collections::BTreeMap;

use tgm::cbor::Value;
use tgm::pipeline::{PipelineDecodeOptions, PipelineOptions};
use tgm::{
    ByteOrder, Dtype, EncodeOptions, ErrorKind, GlobalMetadata, Limits, ObjectDescriptor,
    PipelineBuilder,
};

fn field(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let x = i as f64;
            250.0 + 30.0 * (x * 0.013).sin() + 5.0 * (x * 0.17).cos()
        })
        .collect()
}

fn le(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn ref_request(
    encoding: &str,
    filter: &str,
    compression: &str,
    level: Option<i32>,
) -> tensogram::pipeline::DataPipeline {
    tensogram::pipeline::DataPipeline {
        encoding: encoding.into(),
        bits: None,
        filter: filter.into(),
        compression: compression.into(),
        compression_level: level,
    }
}

/// The descriptor of the first object of a message, as tgm reads it.
fn stored_descriptor(msg: &[u8]) -> ObjectDescriptor {
    tgm::Message::parse(msg)
        .unwrap()
        .object(0)
        .unwrap()
        .descriptor()
        .clone()
}

/// Every key of the first object's descriptor, as written.
fn stored_keys(msg: &[u8]) -> BTreeMap<String, Value> {
    let Value::Map(m) = stored_descriptor(msg).to_value() else {
        unreachable!()
    };
    m.into_iter()
        .map(|(k, v)| (k.as_text().unwrap().to_string(), v))
        .collect()
}

#[test]
fn builder_writes_what_the_reference_helper_writes() {
    let n = 5000;
    let values = field(n);
    let data = le(&values);
    let sp = PipelineBuilder::new().simple_packing(16);
    let cases: Vec<(PipelineBuilder, tensogram::pipeline::DataPipeline)> = vec![
        (
            PipelineBuilder::new().zstd(),
            ref_request("none", "none", "zstd", None),
        ),
        (
            PipelineBuilder::new().zstd_level(9),
            ref_request("none", "none", "zstd", Some(9)),
        ),
        (
            PipelineBuilder::new().lz4(),
            ref_request("none", "none", "lz4", None),
        ),
        (
            PipelineBuilder::new().shuffle().zstd(),
            ref_request("none", "shuffle", "zstd", None),
        ),
        (
            sp.clone(),
            ref_request("simple_packing", "none", "none", None),
        ),
        (
            sp.clone().shuffle().zstd(),
            ref_request("simple_packing", "shuffle", "zstd", None),
        ),
        (
            sp.clone().szip(),
            ref_request("simple_packing", "none", "szip", None),
        ),
    ];
    for (ours, theirs) in cases {
        let d = ObjectDescriptor::new(Dtype::Float64, vec![n as u64])
            .with_byte_order(ByteOrder::Little)
            .with_pipeline(&ours);
        let msg = tgm::encode(
            &GlobalMetadata::default(),
            &[(&d, &data)],
            &EncodeOptions::new(),
        )
        .unwrap();
        let mut rd = tensogram::DataObjectDescriptor {
            obj_type: "ntensor".into(),
            ndim: 1,
            shape: vec![n as u64],
            strides: vec![1],
            dtype: tensogram::Dtype::Float64,
            byte_order: tensogram::ByteOrder::Little,
            encoding: "none".into(),
            filter: "none".into(),
            compression: "none".into(),
            masks: None,
            params: BTreeMap::new(),
        };
        tensogram::pipeline::apply_pipeline(&mut rd, Some(&values), &theirs, "t").unwrap();
        let rmsg = tensogram::encode(
            &Default::default(),
            &[(&rd, &data[..])],
            &Default::default(),
        )
        .unwrap();
        let (mut a, mut b) = (stored_keys(&msg), stored_keys(&rmsg));
        // The two szip encoders may place RSIs differently (spec/szip.md §7).
        let oa = a.remove("szip_block_offsets");
        let ob = b.remove("szip_block_offsets");
        assert_eq!(oa.is_some(), ob.is_some(), "{ours:?}");
        assert_eq!(a, b, "{ours:?}");
        if theirs.compression == "zstd" {
            assert!(a.contains_key("zstd_level"));
        }
    }
}

fn encode_err(d: &ObjectDescriptor) -> tgm::Error {
    let data = le(&field(d.num_elements().unwrap() as usize));
    tgm::encode(
        &GlobalMetadata::default(),
        &[(d, &data)],
        &EncodeOptions::new(),
    )
    .unwrap_err()
}

#[test]
fn misspelt_and_foreign_codec_keys_are_refused_on_encode() {
    let base = ObjectDescriptor::new(Dtype::Float64, vec![64]).with_byte_order(ByteOrder::Little);
    let z = base
        .clone()
        .with_pipeline(&PipelineBuilder::new().zstd())
        .with_param("zstd_levle", 5u64)
        .unwrap();
    let e = encode_err(&z);
    assert_eq!(*e.kind(), ErrorKind::Metadata);
    assert!(e.detail().contains("\"zstd_levle\""), "{e}");
    assert!(e.detail().contains("valid keys: zstd_level"), "{e}");

    let s = base
        .clone()
        .with_pipeline(&PipelineBuilder::new().simple_packing(8).szip())
        .with_param("szip_bloc_size", 8u64)
        .unwrap();
    let e = encode_err(&s);
    assert!(e.detail().contains("szip_rsi, szip_block_size"), "{e}");

    let foreign = base
        .clone()
        .with_pipeline(&PipelineBuilder::new().lz4())
        .with_param("zstd_level", 5u64)
        .unwrap();
    let e = encode_err(&foreign);
    assert!(e.detail().contains("belongs to zstd"), "{e}");

    // Annotations (keys without a codec prefix) pass and are kept.
    let ok = base
        .with_pipeline(&PipelineBuilder::new().zstd())
        .with_param("units", "K")
        .unwrap();
    let data = le(&field(64));
    let msg = tgm::encode(
        &GlobalMetadata::default(),
        &[(&ok, &data)],
        &EncodeOptions::new(),
    )
    .unwrap();
    let back = stored_descriptor(&msg);
    assert_eq!(back.annotations()["units"], Value::from("K"));
    let notes: Vec<_> = back.annotations().keys().map(String::as_str).collect();
    assert_eq!(notes, ["units"]);
}

#[test]
fn stage_parameters_are_typed_once_and_errors_name_the_key() {
    let e = ObjectDescriptor::new(Dtype::Float32, vec![64])
        .with_pipeline(&PipelineBuilder::new().szip())
        .with_param("szip_rsi", "many")
        .unwrap_err();
    assert_eq!(*e.kind(), ErrorKind::Metadata);
    assert!(e.detail().contains("szip_rsi"), "{e}");
    assert!(ObjectDescriptor::new(Dtype::Float64, vec![4])
        .with_pipeline(&PipelineBuilder::new().shuffle())
        .with_param("shuffle_element_size", 0u64)
        .unwrap_err()
        .detail()
        .contains("shuffle_element_size"));
    let d = ObjectDescriptor::new(Dtype::Float64, vec![4])
        .with_pipeline(&PipelineBuilder::new().simple_packing(12).shuffle().lz4());
    assert_eq!(d.pipeline().names(), ["simple_packing", "shuffle", "lz4"]);
    assert_eq!(
        [d.encoding(), d.filter(), d.compression()],
        ["simple_packing", "shuffle", "lz4"]
    );
    // The same key read from CBOR fails the same way, naming the key.
    let Value::Map(mut m) = ObjectDescriptor::new(Dtype::Float32, vec![64])
        .with_pipeline(&PipelineBuilder::new().szip())
        .to_value()
    else {
        unreachable!()
    };
    for (k, v) in &mut m {
        if k.as_text() == Some("szip_rsi") {
            *v = Value::from("many");
        }
    }
    let e = ObjectDescriptor::from_value(&Value::Map(m), &Limits::default()).unwrap_err();
    assert_eq!(*e.kind(), ErrorKind::Metadata);
    assert!(e.detail().contains("szip_rsi"), "{e}");
    // A stage name this build cannot run is kept and fails when run (a
    // build with every optional codec has no such name).
    let optional = [
        ("blosc2", cfg!(feature = "blosc2")),
        ("zfp", cfg!(feature = "zfp")),
        ("sz3", cfg!(feature = "sz3")),
    ];
    if let Some((unbuilt, _)) = optional.iter().find(|(_, built)| !built) {
        let u = ObjectDescriptor::new(Dtype::Float64, vec![4])
            .with_raw_pipeline("none", "none", unbuilt, Default::default())
            .unwrap();
        assert_eq!(u.compression(), *unbuilt);
        let e = tgm::pipeline::decode(
            &u,
            &[0; 32],
            0,
            &PipelineDecodeOptions::default(),
            &Limits::default(),
        )
        .unwrap_err();
        assert_eq!(*e.kind(), ErrorKind::UnsupportedCodec, "{unbuilt}: {e}");
    }
}

/// A 181×360 float64 field through simple_packing 8 + szip with a zero
/// stretch ending one block before an RSI boundary, the shape that makes
/// libaec 1.1.4 store a wrong offset for the next RSI (`spec/szip.md` §7).
fn szip_object() -> (ObjectDescriptor, Vec<u8>, Vec<u64>) {
    let n = 181 * 360;
    let rsi_samples = 128 * 16;
    let mut v = field(n);
    for (r, chunk) in v.chunks_mut(rsi_samples).enumerate() {
        if r % 3 == 1 && chunk.len() == rsi_samples {
            let c = chunk[0];
            chunk[64..rsi_samples - 16].fill(c);
        }
    }
    let mut d = ObjectDescriptor::new(Dtype::Float64, vec![181, 360])
        .with_byte_order(ByteOrder::Little)
        .with_pipeline(&PipelineBuilder::new().simple_packing(8).szip());
    let data = le(&v);
    let enc = tgm::pipeline::encode(&mut d, &data, &PipelineOptions::default()).unwrap();
    let payload = enc.payload.into_owned();
    let offsets = match &d.pipeline().params()["szip_block_offsets"] {
        Value::Array(a) => a.iter().map(|x| x.as_u64().unwrap()).collect(),
        other => panic!("{other:?}"),
    };
    (d, payload, offsets)
}

fn with_offsets(d: &ObjectDescriptor, offsets: &[u64]) -> ObjectDescriptor {
    d.clone()
        .with_param(
            "szip_block_offsets",
            Value::Array(offsets.iter().map(|&o| Value::Uint(o)).collect()),
        )
        .unwrap()
}

fn check_ranges(d: &ObjectDescriptor, payload: &[u8], whole: &[u8]) {
    let opts = PipelineDecodeOptions::default();
    let n = d.num_elements().unwrap();
    let rsi = 128 * 16u64;
    let mut ranges = vec![(0, n), (n - 1, 1)];
    for r in 0..n.div_ceil(rsi) {
        let s = r * rsi;
        ranges.push((s, (n - s).min(rsi)));
        ranges.push((s.saturating_sub(3), (n - s.saturating_sub(3)).min(7)));
    }
    let got =
        tgm::pipeline::decode_range(d, payload, 0, &ranges, &opts, &Limits::default()).unwrap();
    for (&(first, count), g) in ranges.iter().zip(&got) {
        let want = &whole[first as usize * 8..(first + count) as usize * 8];
        assert!(g == want, "range ({first}, {count}) differs");
    }
}

#[test]
fn szip_range_decoding_survives_wrong_block_offsets() {
    let (d, payload, offsets) = szip_object();
    assert!(offsets.len() > 10);
    let opts = PipelineDecodeOptions::default();
    let whole = tgm::pipeline::decode(&d, &payload, 0, &opts, &Limits::default())
        .unwrap()
        .into_owned();
    check_ranges(&d, &payload, &whole);
    // The offset of an RSI that follows a zero run, moved back into the
    // RSI before it by every amount up to the length of a coded block, and
    // the same for the second and for the last RSI.
    let last = offsets.len() - 1;
    for k in [1usize, 2, 5, last] {
        let gap = offsets[k] - offsets[k - 1];
        for shift in (1..gap.min(160)).step_by(3) {
            let mut bad = offsets.clone();
            bad[k] -= shift;
            let bd = with_offsets(&d, &bad);
            check_ranges(&bd, &payload, &whole);
            for threads in [0usize, 2, 3] {
                let mut opts = PipelineDecodeOptions::default();
                opts.threads = threads;
                let full =
                    tgm::pipeline::decode(&bd, &payload, 0, &opts, &Limits::default()).unwrap();
                assert!(full[..] == whole[..], "{threads} threads");
            }
        }
    }
    // Every stored offset but the first wrong: ranges decode from the start.
    let bad: Vec<u64> = offsets
        .iter()
        .enumerate()
        .map(|(i, &o)| if i == 0 { o } else { o - 1 })
        .collect();
    check_ranges(&with_offsets(&d, &bad), &payload, &whole);
}

/// With a thread budget, simple_packing + szip decodes runs of RSIs in
/// parallel, each in pieces straight into its part of the output
/// (`spec/pipeline.md` §6.4, §6.6): the values, and the error for a cut
/// stream, are the sequential ones.
#[test]
fn parallel_piecewise_szip_decode_matches_sequential() {
    let (d, payload, offsets) = szip_object();
    assert!(offsets.len() > 20, "enough RSIs for several runs");
    let limits = Limits::default();
    let seq = PipelineDecodeOptions::default();
    let whole = tgm::pipeline::decode(&d, &payload, 0, &seq, &limits)
        .unwrap()
        .into_owned();
    let cut = &payload[..payload.len() * 2 / 3];
    let seq_err = tgm::pipeline::decode(&d, cut, 0, &seq, &limits).unwrap_err();
    for threads in [2usize, 3, 8] {
        let mut opts = PipelineDecodeOptions::default();
        opts.threads = threads;
        let mut into = vec![0u8; whole.len()];
        tgm::__fuzz::decode_into(&d, &payload, 0, &opts, &limits, &mut into).unwrap();
        assert!(into == whole, "decode_into, {threads} threads");
        let fresh = tgm::pipeline::decode(&d, &payload, 0, &opts, &limits).unwrap();
        assert!(fresh[..] == whole[..], "decode, {threads} threads");
        let err = tgm::pipeline::decode(&d, cut, 0, &opts, &limits).unwrap_err();
        assert_eq!(err.to_string(), seq_err.to_string(), "{threads} threads");
        // Offsets out of chain, then also past the stream: still the same
        // values.
        let mut bad = offsets.clone();
        let mid = bad.len() / 2;
        bad[mid] += 5;
        let lying = bad.clone();
        let last = bad.len() - 1;
        bad[last] = payload.len() as u64 * 8 + 100;
        for (what, bad) in [("lying offsets", lying), ("offset past the stream", bad)] {
            let mut into = vec![0u8; whole.len()];
            let bd = with_offsets(&d, &bad);
            tgm::__fuzz::decode_into(&bd, &payload, 0, &opts, &limits, &mut into).unwrap();
            assert!(into == whole, "{what}, {threads} threads");
        }
    }
}

#[test]
fn decoding_ignores_codec_keys_no_stage_owns() {
    // Another writer's lz4 object that also carries zstd and szip keys.
    let n = 300u64;
    let data = le(&field(n as usize));
    let mut params = BTreeMap::new();
    params.insert("zstd_level".to_string(), ciborium::Value::Integer(7.into()));
    params.insert("szip_rsi".to_string(), ciborium::Value::Integer(32.into()));
    let rd = tensogram::DataObjectDescriptor {
        obj_type: "ntensor".into(),
        ndim: 1,
        shape: vec![n],
        strides: vec![1],
        dtype: tensogram::Dtype::Float64,
        byte_order: tensogram::ByteOrder::Little,
        encoding: "none".into(),
        filter: "none".into(),
        compression: "lz4".into(),
        masks: None,
        params,
    };
    let msg = tensogram::encode(
        &Default::default(),
        &[(&rd, &data[..])],
        &Default::default(),
    )
    .unwrap();
    let back = tgm::decode(
        &msg,
        &tgm::DecodeOptions::default().native_byte_order(false),
    )
    .unwrap();
    assert_eq!(back.objects[0].data, data);
    let d = &back.objects[0].descriptor;
    assert_eq!(d.pipeline().param("zstd_level"), Some(&Value::Uint(7)));
    // Kept verbatim: the descriptor re-encodes to the bytes it was read from.
    let stored = tgm::Message::parse(&msg).unwrap();
    let obj = stored.object(0).unwrap();
    let raw = obj
        .frame()
        .split_data(&Limits::default())
        .unwrap()
        .descriptor;
    assert_eq!(d.to_cbor(), raw);
    // The strict encoder refuses to write it again as it is.
    let e = tgm::encode(
        &GlobalMetadata::default(),
        &[(d, &data)],
        &EncodeOptions::new(),
    )
    .unwrap_err();
    assert!(e.detail().contains("belongs to"), "{e}");
}
