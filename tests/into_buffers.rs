//! `encode_into` and `decode_into`: caller-owned buffers give exactly the
//! bytes of `encode` and `decode_object`, reuse their memory, and refuse
//! output buffers of the wrong size (`spec/pipeline.md` §6.3).

use tgm::pipeline::PipelineOptions;
use tgm::{
    decode_object, decode_object_into, encode, encode_into, ByteOrder, DecodeOptions, Dtype,
    EncodeOptions, ErrorKind, GlobalMetadata, ObjectDescriptor, PipelineBuilder, Provenance,
};

fn opts() -> EncodeOptions {
    let mut p = PipelineOptions::default();
    p.allow_nan = true;
    p.allow_inf = true;
    EncodeOptions::new()
        .provenance(Provenance::fixed("2026-01-01T00:00:00Z", "u"))
        .pipeline(p)
}

fn field(n: usize, order: ByteOrder, with_nan: bool) -> Vec<u8> {
    (0..n)
        .flat_map(|i| {
            let v = if with_nan && i % 97 == 5 {
                f64::NAN
            } else {
                280.0 + 15.0 * (i as f64 * 0.013).sin()
            };
            match order {
                ByteOrder::Little => v.to_le_bytes(),
                ByteOrder::Big => v.to_be_bytes(),
            }
        })
        .collect()
}

/// Every pipeline shape: identity, filter only, encoding only, codecs, and
/// combinations; both byte orders.
fn cases() -> Vec<(&'static str, ObjectDescriptor, Vec<u8>)> {
    let n = 5_000usize;
    let mut v = Vec::new();
    for order in [ByteOrder::Little, ByteOrder::Big] {
        let d = || ObjectDescriptor::new(Dtype::Float64, vec![50, 100]).with_byte_order(order);
        let raw = field(n, order, false);
        let nan = field(n, order, true);
        v.push(("none", d(), raw.clone()));
        v.push(("none+nan", d(), nan.clone()));
        v.push((
            "shuffle",
            d().with_pipeline(&PipelineBuilder::new().shuffle()),
            raw.clone(),
        ));
        v.push((
            "zstd+nan",
            d().with_pipeline(&PipelineBuilder::new().zstd()),
            nan.clone(),
        ));
        v.push((
            "lz4",
            d().with_pipeline(&PipelineBuilder::new().lz4()),
            raw.clone(),
        ));
        v.push((
            "sp12",
            d().with_pipeline(&PipelineBuilder::new().simple_packing(12)),
            raw.clone(),
        ));
        v.push((
            "sp16+shuffle+zstd",
            d().with_pipeline(&PipelineBuilder::new().simple_packing(16).shuffle().zstd()),
            raw.clone(),
        ));
        v.push((
            "sp24+szip",
            d().with_pipeline(&PipelineBuilder::new().simple_packing(24).szip()),
            raw.clone(),
        ));
    }
    v
}

#[test]
fn encode_into_gives_the_bytes_of_encode_and_reuses_the_vector() {
    let meta = GlobalMetadata::default();
    let mut out = Vec::new();
    for (name, d, data) in cases() {
        let want = encode(&meta, &[(&d, &data)], &opts()).unwrap();
        encode_into(&meta, &[(&d, &data)], &opts(), &mut out).unwrap();
        assert_eq!(out, want, "{name}");
        let (ptr, cap) = (out.as_ptr(), out.capacity());
        encode_into(&meta, &[(&d, &data)], &opts(), &mut out).unwrap();
        assert_eq!(out, want, "{name}, second time");
        assert_eq!(
            (out.as_ptr(), out.capacity()),
            (ptr, cap),
            "{name}: the second message reuses the first one's memory"
        );
    }
}

#[test]
fn encode_into_leaves_the_vector_empty_on_error() {
    let d = ObjectDescriptor::new(Dtype::Float64, vec![4]);
    let mut out = vec![1u8; 100];
    let err = encode_into(
        &GlobalMetadata::default(),
        &[(&d, &[0u8; 31][..])],
        &EncodeOptions::new(),
        &mut out,
    )
    .unwrap_err();
    assert_eq!(*err.kind(), ErrorKind::InvalidInput);
    assert!(out.is_empty());
}

#[test]
fn decode_into_gives_the_bytes_of_decode_object() {
    let meta = GlobalMetadata::default();
    for (name, d, data) in cases() {
        let msg = encode(&meta, &[(&d, &data)], &opts()).unwrap();
        for native in [true, false] {
            for restore in [true, false] {
                let dopts = DecodeOptions::default()
                    .native_byte_order(native)
                    .restore_non_finite(restore);
                let want = decode_object(&msg, 0, &dopts).unwrap();
                let mut out = vec![0xa5u8; want.data.len()];
                let desc = decode_object_into(&msg, 0, &dopts, &mut out).unwrap();
                assert_eq!(desc, want.descriptor, "{name}");
                assert!(out == want.data, "{name} native {native} restore {restore}");
            }
        }
    }
}

#[test]
fn decode_into_refuses_a_buffer_of_another_size() {
    let (_, d, data) = cases().swap_remove(6);
    let msg = encode(&GlobalMetadata::default(), &[(&d, &data)], &opts()).unwrap();
    for len in [0, data.len() - 1, data.len() + 8] {
        let mut out = vec![0u8; len];
        let err = decode_object_into(&msg, 0, &DecodeOptions::default(), &mut out).unwrap_err();
        assert_eq!(*err.kind(), ErrorKind::InvalidArgument, "len {len}");
        assert!(err.to_string().contains("decodes to 40000"), "{err}");
    }
}

/// simple_packing, the only working stage, writes its payload straight
/// into the message in chunks of 2^18 values, each zeroed and packed while
/// in cache, on one thread or several (`spec/pipeline.md` §6.3): the bytes
/// are the stage's own output at every width, with a short last chunk, and
/// into a vector holding an older, longer message.
#[test]
fn chunked_in_place_payloads_are_the_stage_output() {
    let n = 600_003usize; // two whole chunks and a short one
    let data = field(n, ByteOrder::Little, false);
    let meta = GlobalMetadata::default();
    let mut out = vec![0xa5u8; 10 << 20];
    for bits in [1u32, 7, 12, 16, 24, 31, 33, 52] {
        let d = ObjectDescriptor::new(Dtype::Float64, vec![n as u64])
            .with_byte_order(ByteOrder::Little)
            .with_pipeline(&PipelineBuilder::new().simple_packing(bits));
        let mut staged = d.clone();
        let want = tgm::pipeline::encode(&mut staged, &data, &PipelineOptions::default()).unwrap();
        for threads in [1usize, 2, 3] {
            let mut po = PipelineOptions::default();
            po.threads = threads;
            let o = EncodeOptions::new().pipeline(po);
            encode_into(&meta, &[(&d, &data)], &o, &mut out).unwrap();
            let msg = tgm::Message::parse(&out).unwrap();
            let obj = msg.object(0).unwrap();
            assert!(
                obj.payload_region() == &want.payload[..],
                "{bits} bits, {threads} threads"
            );
            msg.verify(tgm::Verify::Require).unwrap();
        }
    }
}

/// Objects of one message: descriptors and element bytes.
type Objects<'a> = Vec<(&'a ObjectDescriptor, &'a [u8])>;

/// `encode_to` writes the bytes `encode` returns, through a writer, for
/// every pipeline shape, several objects at once, every hash placement and
/// with hashing off (`spec/format.md` §11.2); `encode_pre_encoded_to` the
/// bytes of `encode_pre_encoded`.
#[test]
fn encode_to_writes_the_bytes_of_encode_on_every_pipeline() {
    use tgm::HashPolicy;
    let meta = GlobalMetadata::default();
    let all = cases();
    let every: Vec<_> = all.iter().map(|(_, d, data)| (d, &data[..])).collect();
    let mut sets: Vec<(String, Objects<'_>)> = all
        .iter()
        .map(|(name, d, data)| (name.to_string(), vec![(d, &data[..])]))
        .collect();
    sets.push(("every case in one message".into(), every));
    sets.push(("no object".into(), Vec::new()));
    let policies = [
        HashPolicy::Auto,
        HashPolicy::None,
        HashPolicy::Header,
        HashPolicy::Footer,
        HashPolicy::Both,
    ];
    for (name, objects) in &sets {
        for (policy, hashing) in policies
            .iter()
            .map(|p| (*p, true))
            .chain([(HashPolicy::Auto, false)])
        {
            let o = opts().hash_policy(policy).hashing(hashing);
            let want = encode(&meta, objects, &o).unwrap();
            let mut got = Vec::new();
            let len = tgm::encode_to(&meta, objects, &o, &mut got).unwrap();
            assert!(got == want, "{name}, {policy:?}, hashing {hashing}");
            assert_eq!(len, want.len() as u64, "{name}");
        }
    }
    // Stored payloads wrapped again, straight to a writer.
    let msg = encode(&meta, &sets[sets.len() - 2].1, &opts()).unwrap();
    let parsed = tgm::Message::parse(&msg).unwrap();
    let stored: Vec<_> = (0..parsed.num_objects())
        .map(|i| parsed.object(i).unwrap())
        .filter(|o| o.descriptor().masks.is_none())
        .collect();
    let pairs: Vec<_> = stored
        .iter()
        .map(|o| (o.descriptor(), o.payload_region()))
        .collect();
    let want = tgm::encode_pre_encoded(&meta, &pairs, &opts()).unwrap();
    let mut got = Vec::new();
    tgm::encode_pre_encoded_to(&meta, &pairs, &opts(), &mut got).unwrap();
    assert!(got == want, "pre-encoded");
}

/// The inspector sees each object's final payload before its frame is
/// written, and its error stops the message there, naming the object.
#[test]
fn encode_to_inspecting_sees_each_payload_and_can_stop() {
    let meta = GlobalMetadata::default();
    let all = cases();
    let objects: Vec<_> = all.iter().map(|(_, d, data)| (d, &data[..])).collect();
    let msg = encode(&meta, &objects, &opts()).unwrap();
    let parsed = tgm::Message::parse(&msg).unwrap();
    let mut seen = 0;
    tgm::encode_to_inspecting(&meta, &objects, &opts(), &mut Vec::new(), &mut |i, d, p| {
        let o = parsed.object(i).unwrap();
        assert_eq!(d, o.descriptor(), "object {i}");
        let p = p.expect("a small payload is held");
        assert!(o.payload_region().starts_with(p), "object {i}");
        seen += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, objects.len());
    let mut out = Vec::new();
    let err = tgm::encode_to_inspecting(&meta, &objects, &opts(), &mut out, &mut |i, _, _| {
        if i == 2 {
            Err(tgm::Error::invalid_argument("too lossy"))
        } else {
            Ok(())
        }
    })
    .unwrap_err();
    assert!(err.to_string().contains("too lossy"), "{err}");
    assert!(err.to_string().contains("object 2"), "{err}");
    let third = parsed.object(2).unwrap().frame().abs_offset() as usize;
    assert_eq!(
        out,
        msg[..third],
        "everything before object 2, nothing after"
    );
}

/// A large object whose only stage is lz4 is coded straight into the
/// message (`spec/pipeline.md` §6.8): the bytes are those of the in-memory
/// encode, the inspector is told no payload is held, and progress covers
/// both passes, `done` and `read` never shrinking, ending at the total.
#[test]
#[cfg(feature = "lz4")]
fn a_large_lz4_payload_is_coded_into_the_message() {
    use std::sync::{Arc, Mutex};
    let n = (16 << 20) / 8 + 12_345;
    let data = field(n, ByteOrder::Little, false);
    let small = field(100, ByteOrder::Little, false);
    let lz4 = |len: usize| {
        ObjectDescriptor::new(Dtype::Float64, vec![len as u64])
            .with_pipeline(&PipelineBuilder::new().lz4())
    };
    let (big_d, small_d) = (lz4(n), lz4(100));
    let objects = [(&small_d, &small[..]), (&big_d, &data[..])];
    let meta = GlobalMetadata::default();
    let msg = encode(&meta, &objects, &opts()).unwrap();
    let steps = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&steps);
    let hook = tgm::pipeline::ProgressHook::new(move |s| seen.lock().unwrap().push(s));
    let mut p = opts().pipeline.clone();
    p.progress = hook;
    let with_hook = opts().pipeline(p);
    let mut held = Vec::new();
    let mut out = Vec::new();
    let len = tgm::encode_to_inspecting(&meta, &objects, &with_hook, &mut out, &mut |i, _, p| {
        held.push((i, p.is_some()));
        Ok(())
    })
    .unwrap();
    assert_eq!(len, out.len() as u64);
    assert!(
        out == msg,
        "streamed message differs from the in-memory one"
    );
    assert_eq!(held, [(0, true), (1, false)]);
    let steps = steps.lock().unwrap();
    let big: Vec<_> = steps
        .iter()
        .filter(|s| s.total == data.len() as u64)
        .collect();
    assert!(big.len() >= 4, "{} steps", big.len());
    assert!(big
        .windows(2)
        .all(|w| w[0].done <= w[1].done && w[0].read <= w[1].read));
    assert!(big.iter().any(|s| s.done == data.len() as u64 / 2));
    assert_eq!(big.last().unwrap().done, data.len() as u64);
    let back = decode_object(&out, 1, &DecodeOptions::default()).unwrap();
    assert!(back.data == data);
}
