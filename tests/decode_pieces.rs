//! `Object::decode_pieces`: an object decoded in order a piece at a time
//! into one reused buffer gives the bytes of decoding it whole
//! (`spec/pipeline.md` §7).

use tgm::{
    ByteOrder, DecodeOptions, Dtype, EncodeOptions, ErrorKind, GlobalMetadata, Message,
    ObjectDescriptor, PipelineBuilder,
};

/// A smooth float64 field with small wiggles.
fn field(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 273.15 + (i as f64 * 0.013).sin() * 40.0 + (i % 11) as f64 * 1e-3)
        .collect()
}

/// One message holding `values` as float64 in `order` through `pipeline`.
fn message(values: &[f64], order: ByteOrder, pipeline: PipelineBuilder) -> Vec<u8> {
    let data: Vec<u8> = values
        .iter()
        .flat_map(|v| match order {
            ByteOrder::Little => v.to_le_bytes(),
            ByteOrder::Big => v.to_be_bytes(),
        })
        .collect();
    let desc = ObjectDescriptor::new(Dtype::Float64, vec![values.len() as u64])
        .with_byte_order(order)
        .with_pipeline(&pipeline);
    let mut popts = tgm::pipeline::PipelineOptions::default();
    popts.allow_nan = true;
    let opts = EncodeOptions::new().pipeline(popts);
    tgm::encode(&GlobalMetadata::default(), &[(&desc, &data[..])], &opts).unwrap()
}

/// The pieces of object 0 of `msg`, concatenated, with each piece's first
/// element and length, and the buffer's capacity afterwards.
fn pieces(msg: &[u8], piece_bytes: usize) -> (Vec<u8>, Vec<(u64, usize)>, usize) {
    let m = Message::parse(msg).unwrap();
    let obj = m.object(0).unwrap();
    assert!(obj.decodes_in_pieces());
    let (mut all, mut seen) = (Vec::new(), Vec::new());
    let mut buf = vec![0u8; 3];
    obj.decode_pieces(
        &DecodeOptions::default(),
        piece_bytes,
        &mut buf,
        |first, p| {
            seen.push((first, p.len()));
            all.extend_from_slice(p);
            Ok(())
        },
    )
    .unwrap();
    (all, seen, buf.capacity())
}

#[test]
fn szip_pieces_are_the_whole_decode() {
    let n = 300_001;
    let values = field(n);
    for bits in [16, 24] {
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let pipeline = PipelineBuilder::new().simple_packing(bits).szip();
            let msg = message(&values, order, pipeline);
            let whole = tgm::decode(&msg, &DecodeOptions::default())
                .unwrap()
                .objects[0]
                .data
                .clone();
            // 64 KiB: 8192 elements a piece; 100 000 bytes: 8192 too;
            // 10 000 bytes: 1024, a quarter of an RSI; more than the object.
            for (piece_bytes, per) in [
                (1 << 16, 8192),
                (100_000, 8192),
                (10_000, 1024),
                (1 << 30, n),
            ] {
                let (all, seen, cap) = pieces(&msg, piece_bytes);
                assert_eq!(all.len(), whole.len());
                assert!(
                    all == whole,
                    "{bits} bits, {order:?}, pieces of {piece_bytes}"
                );
                assert_eq!(seen.len(), n.div_ceil(per), "{piece_bytes}");
                assert!(seen.iter().all(|&(_, len)| len <= per * 8));
                let firsts: Vec<u64> = (0..n.div_ceil(per)).map(|k| (k * per) as u64).collect();
                assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), firsts);
                assert!(
                    cap < per * 8 + 64,
                    "buffer of {cap} bytes for pieces of {per}"
                );
            }
        }
    }
}

#[test]
fn missing_values_come_back_in_their_pieces() {
    let mut values: Vec<f32> = field(50_000).iter().map(|&v| v as f32).collect();
    for i in [0, 8191, 8192, 20_000, 49_999] {
        values[i] = f32::NAN;
    }
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let desc = ObjectDescriptor::new(Dtype::Float32, vec![values.len() as u64])
        .with_byte_order(ByteOrder::Little)
        .with_pipeline(&PipelineBuilder::new().szip());
    let mut popts = tgm::pipeline::PipelineOptions::default();
    popts.allow_nan = true;
    let opts = EncodeOptions::new().pipeline(popts);
    let msg = tgm::encode(&GlobalMetadata::default(), &[(&desc, &data[..])], &opts).unwrap();
    let whole = tgm::decode(&msg, &DecodeOptions::default())
        .unwrap()
        .objects[0]
        .data
        .clone();
    let (all, seen, _) = pieces(&msg, 1 << 15);
    assert_eq!(seen.len(), 7);
    assert!(all == whole);
    let at = |i: usize| f32::from_le_bytes(all[i * 4..i * 4 + 4].try_into().unwrap());
    assert!(at(8192).is_nan() && at(49_999).is_nan() && !at(1).is_nan());
}

#[test]
fn pipelines_without_pieces_are_refused_before_any_piece() {
    for (pipeline, name) in [
        (PipelineBuilder::new().lz4(), "lz4"),
        (PipelineBuilder::new().shuffle().zstd(), "shuffle"),
        (PipelineBuilder::new().simple_packing(16).lz4(), "lz4"),
    ] {
        let msg = message(&field(1000), ByteOrder::Little, pipeline);
        let m = Message::parse(&msg).unwrap();
        let obj = m.object(0).unwrap();
        assert!(!obj.decodes_by_range() && !obj.decodes_in_pieces());
        let mut called = false;
        let e = obj
            .decode_pieces(&DecodeOptions::default(), 4096, &mut Vec::new(), |_, _| {
                called = true;
                Ok(())
            })
            .unwrap_err();
        assert_eq!(*e.kind(), ErrorKind::RangeNotSupported);
        assert!(e.to_string().contains(name), "{e}");
        assert!(!called);
    }
}

#[test]
fn zstd_pieces_are_the_whole_decode() {
    let n = 100_003;
    let values = field(n);
    let pipelines = [
        PipelineBuilder::new().zstd(),
        PipelineBuilder::new().simple_packing(16).zstd(),
        PipelineBuilder::new().simple_packing(24).zstd(),
        PipelineBuilder::new().simple_packing(13).zstd(),
    ];
    for pipeline in pipelines {
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let msg = message(&values, order, pipeline.clone());
            let m = Message::parse(&msg).unwrap();
            assert!(!m.object(0).unwrap().decodes_by_range());
            let whole = tgm::decode(&msg, &DecodeOptions::default())
                .unwrap()
                .objects[0]
                .data
                .clone();
            // 8192 elements a piece, 1024, the floor of 8, and the object.
            for (piece_bytes, per) in [(1 << 16, 8192), (10_000, 1024), (1, 8), (1 << 30, n)] {
                let (all, seen, cap) = pieces(&msg, piece_bytes);
                assert!(
                    all == whole,
                    "{pipeline:?}, {order:?}, pieces of {piece_bytes}"
                );
                assert_eq!(seen.len(), n.div_ceil(per), "{piece_bytes}");
                assert!(seen.iter().all(|&(_, len)| len <= per * 8));
                assert!(cap < per * 8 + 64, "buffer of {cap} bytes");
            }
        }
    }
}

#[cfg(feature = "zstd")]
/// Object 0 of `msg` with its zstd payload replaced by `payload`: the
/// descriptor still implies the original length.
fn with_payload(msg: &[u8], payload: &[u8]) -> Vec<u8> {
    let d = tgm::decode(msg, &DecodeOptions::default()).unwrap();
    let obj = &d.objects[0];
    let desc = obj.descriptor.clone();
    let opts = EncodeOptions::new();
    tgm::encode_pre_encoded(&GlobalMetadata::default(), &[(&desc, payload)], &opts).unwrap()
}

#[cfg(feature = "zstd")]
#[test]
fn a_zstd_stream_of_another_length_is_an_error() {
    let values = field(20_000);
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let msg = message(&values, ByteOrder::Little, PipelineBuilder::new().zstd());
    let frame = |bytes: &[u8], recorded: bool| {
        let mut e = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
        if recorded {
            e.set_pledged_src_size(Some(bytes.len() as u64)).unwrap();
        }
        std::io::Write::write_all(&mut e, bytes).unwrap();
        e.finish().unwrap()
    };
    let whole = frame(&data, false);
    let longer = [data.clone(), vec![7u8; 800]].concat();
    let cases = [
        (whole[..whole.len() / 2].to_vec(), "decoded to"),
        (whole[..whole.len() - 3].to_vec(), ""),
        (frame(&data[..data.len() - 8], false), "decoded to"),
        (frame(&longer, false), "more than"),
        (frame(&longer, true), "records"),
        ([whole.clone(), frame(b"x", false)].concat(), "more than"),
    ];
    for (k, (payload, says)) in cases.into_iter().enumerate() {
        let bad = with_payload(&msg, &payload);
        let m = Message::parse(&bad).unwrap();
        let obj = m.object(0).unwrap();
        assert!(obj.decode(&DecodeOptions::default()).is_err(), "case {k}");
        let mut got = 0usize;
        let e = obj
            .decode_pieces(&DecodeOptions::default(), 4096, &mut Vec::new(), |_, p| {
                got += p.len();
                Ok(())
            })
            .unwrap_err();
        assert_eq!(*e.kind(), ErrorKind::Codec, "case {k}: {e}");
        assert!(e.to_string().contains(says), "case {k}: {e}");
        assert!(got <= data.len(), "case {k}");
    }
    // The same stream with a trailing empty frame is the whole decode.
    let fine = with_payload(&msg, &[whole, frame(b"", false)].concat());
    let (all, _, _) = pieces(&fine, 4096);
    assert!(all == data);
}

#[test]
fn an_error_from_the_caller_stops_the_pieces() {
    let msg = message(
        &field(40_000),
        ByteOrder::Little,
        PipelineBuilder::new().simple_packing(16).szip(),
    );
    let m = Message::parse(&msg).unwrap();
    let obj = m.object(0).unwrap();
    let mut calls = 0;
    let e = obj
        .decode_pieces(
            &DecodeOptions::default(),
            1 << 16,
            &mut Vec::new(),
            |_, _| {
                calls += 1;
                Err(tgm::Error::invalid_argument("stop here"))
            },
        )
        .unwrap_err();
    assert!(e.to_string().contains("stop here"), "{e}");
    assert_eq!(calls, 1);
}

#[test]
fn a_zstd_stream_reports_what_it_has_read_for_good() {
    let values = field(50_000);
    let msg = message(
        &values,
        ByteOrder::Little,
        PipelineBuilder::new().simple_packing(16).zstd(),
    );
    let m = Message::parse(&msg).unwrap();
    let obj = m.object(0).unwrap();
    let steps = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = steps.clone();
    let hook = tgm::pipeline::ProgressHook::new(move |s| seen.lock().unwrap().push(s));
    let opts = DecodeOptions::default().progress(hook);
    let mut pieces = 0;
    obj.decode_pieces(&opts, 1 << 15, &mut Vec::new(), |_, _| {
        pieces += 1;
        Ok(())
    })
    .unwrap();
    let steps = steps.lock().unwrap();
    assert_eq!(steps.len(), pieces);
    assert!(steps
        .windows(2)
        .all(|p| p[0].read <= p[1].read && p[0].done < p[1].done));
    let last = steps.last().unwrap();
    assert_eq!((last.done, last.total), (50_000 * 8, 50_000 * 8));
    assert!(last.read > 0 && last.read <= obj.payload_region().len() as u64);
    assert!(steps[0].read < last.read);
}
