//! What each operation of a reader costs in requests and bytes, counted at
//! the library level: a `CountingSource` under a `Coalescing` source sees
//! the requests a remote source would send (`spec/remote.md` §2–§4).

#[path = "remote_corpus.rs"]
mod corpus;

use bytes::Bytes;
use corpus::*;
use tgm::file::{Coalescing, CountingSource, FileLayout, SourceFile, DEFAULT_COALESCE_GAP};
use tgm::{DecodeOptions, Dtype, EncodeOptions, ErrorKind, Limits, PipelineBuilder};

type Counted = Coalescing<CountingSource<Bytes>>;

fn counted(bytes: &[u8]) -> Counted {
    Coalescing::new(
        CountingSource::new(Bytes::copy_from_slice(bytes)),
        DEFAULT_COALESCE_GAP,
    )
}

fn calls(s: &Counted) -> (u64, u64) {
    (s.inner().calls(), s.inner().bytes())
}

const RA: u64 = 64 << 10;

#[test]
fn open_costs_one_request_per_message_and_an_object_one_request() {
    let n = 1000;
    let all = many_messages(n, 2048);
    let src = counted(&all);
    let f = SourceFile::open_with_readahead(&src, &Limits::default(), RA).unwrap();
    assert_eq!(f.num_messages(), n);
    let (c, b) = calls(&src);
    // The first window, then one per hop (a window may cover several
    // messages of this size).
    assert!(c <= n as u64 + 1, "{c} requests to open");
    assert!(b <= (n as u64 + 1) * RA, "{b} bytes to open");
    assert!((0..n).all(|m| f.is_indexed(m)));

    src.inner().reset();
    let got = f.decode_object(700, 2, &DecodeOptions::default()).unwrap();
    assert_eq!(got.data, f32s(2048, 700 * 3 + 2));
    let span = f.spans()[700];
    let frame = tgm::Message::parse(&all[span.range()])
        .unwrap()
        .layout()
        .objects[2]
        .data
        .total_len() as u64;
    assert_eq!(calls(&src), (1, frame), "one request: the data frame");
}

#[test]
fn the_first_message_costs_one_read_with_readahead() {
    let all = many_messages(1, 2048);
    let src = counted(&all);
    let f = SourceFile::open_with_readahead(&src, &Limits::default(), RA).unwrap();
    assert!(f.is_indexed(0));
    // Length (HEAD, not counted by the wrapper) + one window covering the
    // whole small message.
    assert_eq!(calls(&src).0, 1);
}

fn range_cost(values: usize, pipeline: Option<PipelineBuilder>, pct: f64) -> (u64, u64, u64) {
    let dt = Dtype::Float64;
    let file = message(
        &[(desc(dt, values, pipeline), f64s(values, 1))],
        &EncodeOptions::new(),
    );
    let frame = tgm::Message::parse(&file).unwrap().layout().objects[0]
        .data
        .total_len() as u64;
    let src = counted(&file);
    let f = SourceFile::open_with_readahead(&src, &Limits::default(), RA).unwrap();
    let local = SourceFile::open(Bytes::from(file.clone()), &Limits::default()).unwrap();
    let count = ((values as f64) * pct) as u64;
    let ranges = [(values as u64 / 2, count)];
    let opts = DecodeOptions::default();
    src.inner().reset();
    let got = f.decode_range(0, 0, &ranges, &opts).unwrap();
    let (c, b) = calls(&src);
    assert_eq!(got, local.decode_range(0, 0, &ranges, &opts).unwrap());
    (c, b, frame)
}

#[test]
fn decode_range_of_szip_reads_only_the_covering_rsis() {
    let (c, b, frame) = range_cost(
        1 << 20,
        Some(PipelineBuilder::new().simple_packing(16).szip()),
        0.01,
    );
    // Header + tail (descriptor), then the RSIs.
    assert!(c <= 3, "{c} requests");
    assert!(b * 5 < frame, "{b} bytes of a {frame}-byte frame");
}

#[test]
#[ignore = "16 Mi values; run by .ci/remote.sh"]
fn decode_range_of_one_percent_of_16_mi_szip_values() {
    let (c, b, frame) = range_cost(
        16 << 20,
        Some(PipelineBuilder::new().simple_packing(16).szip()),
        0.01,
    );
    println!("szip 16 Mi values, 1 %: {c} requests, {b} bytes of a {frame}-byte frame");
    assert!(c <= 3, "{c} requests");
    assert!(b * 40 < frame, "{b} bytes of a {frame}-byte frame");
}

#[test]
fn decode_range_of_none_and_packed_reads_only_the_covering_bytes() {
    let tail = 64 << 10;
    let (c, b, frame) = range_cost(1 << 20, None, 0.01);
    let covering = ((1u64 << 20) / 100) * 8;
    assert!(
        c <= 3 && b <= covering + tail + 64,
        "{c} requests, {b} bytes"
    );
    assert!(b * 20 < frame);
    let (c, b, _) = range_cost(
        1 << 20,
        Some(PipelineBuilder::new().simple_packing(12)),
        0.01,
    );
    let covering = ((1u64 << 20) / 100) * 12 / 8 + 2;
    assert!(
        c <= 3 && b <= covering + tail + 64,
        "{c} requests, {b} bytes"
    );
}

#[test]
fn zstd_ranges_are_refused_after_reading_the_frame_envelope_only() {
    let n = 100_000;
    let file = message(
        &[(
            desc(Dtype::Float32, n, Some(PipelineBuilder::new().zstd())),
            f32s(n, 1),
        )],
        &EncodeOptions::new(),
    );
    let src = counted(&file);
    let f = SourceFile::open_with_readahead(&src, &Limits::default(), RA).unwrap();
    src.inner().reset();
    let e = f
        .decode_range(0, 0, &[(10, 10)], &DecodeOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::RangeNotSupported);
    let (c, b) = calls(&src);
    assert!(c <= 2 && b <= (64 << 10) + 16, "{c} requests, {b} bytes");
    // Whole objects of such pipelines are one request of the whole frame.
    src.inner().reset();
    let got = f.decode_object(0, 0, &DecodeOptions::default()).unwrap();
    assert_eq!(got.data, f32s(n, 1));
    assert_eq!(calls(&src).0, 1);
}

#[test]
fn a_shipped_layout_reads_an_object_with_one_request_and_no_rescan() {
    let all = many_messages(1000, 512);
    let f = SourceFile::open_with_readahead(counted(&all), &Limits::default(), RA).unwrap();
    let layout = f.layout().unwrap();
    let json = layout.to_json().unwrap();
    let cbor = layout.to_cbor().unwrap();
    for l in [
        FileLayout::from_json(&json).unwrap(),
        FileLayout::from_cbor(&cbor).unwrap(),
    ] {
        assert_eq!(l, layout);
        let src = counted(&all);
        let w = SourceFile::from_layout(&src, &l, &Limits::default()).unwrap();
        assert_eq!(calls(&src), (0, 0), "no rescan");
        let got = w.decode_object(700, 1, &DecodeOptions::default()).unwrap();
        assert_eq!(got.data, f32s(512, 700 * 3 + 1));
        assert_eq!(calls(&src).0, 1);
        assert_eq!(w.descriptors(700).unwrap().len(), 3);
        assert_eq!(calls(&src).0, 1, "descriptors come from the layout");
    }
}

#[test]
fn a_layout_that_lies_gives_an_error_never_other_values() {
    let all = many_messages(20, 512);
    let f = SourceFile::open(Bytes::from(all.clone()), &Limits::default()).unwrap();
    let good = f.layout().unwrap();
    let lim = Limits::default();
    let opts = DecodeOptions::default();
    // Object 1 of message 7 pointed at object 1 of message 6: same length,
    // same descriptor, another frame.
    let mut l = good.clone();
    let shift = l.messages[7].offset - l.messages[6].offset;
    let o = &mut l.messages[7].objects.as_mut().unwrap()[1];
    o.offset -= shift.min(o.offset);
    let w = SourceFile::from_layout(Bytes::from(all.clone()), &l, &lim);
    if let Ok(w) = w {
        let e = w.decode_object(7, 1, &opts).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::Framing | ErrorKind::BadMagic),
            "{e}"
        );
    }
    // A frame offset into the middle of a frame.
    let mut l = good.clone();
    l.messages[3].objects.as_mut().unwrap()[0].offset += 8;
    let w = SourceFile::from_layout(Bytes::from(all.clone()), &l, &lim).unwrap();
    assert!(w.decode_object(3, 0, &opts).is_err());
    // A wrong descriptor.
    let mut l = good.clone();
    let other = l.messages[0].objects.as_ref().unwrap()[0]
        .descriptor
        .clone();
    let mut d = other.unwrap();
    d.replace_range(d.len() - 2.., "00");
    l.messages[0].objects.as_mut().unwrap()[0].descriptor = Some(d);
    let w = SourceFile::from_layout(Bytes::from(all.clone()), &l, &lim).unwrap();
    assert!(w.decode_object(0, 0, &opts).is_err());
    // Another source length.
    let short = Bytes::copy_from_slice(&all[..all.len() - 1]);
    let e = SourceFile::from_layout(short, &good, &lim).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::ObjectChanged);
}

#[test]
fn streaming_messages_in_the_middle_are_read_through_their_footer_index() {
    let (_, file) = corpus()
        .into_iter()
        .find(|(n, _)| n == "streaming_mixed.tgm")
        .unwrap();
    let src = counted(&file);
    let f = SourceFile::open_with_readahead(&src, &Limits::default(), RA).unwrap();
    assert_eq!(f.spans(), tgm::scan(&file));
    let m = 2; // the first streaming message, not back-filled
    src.inner().reset();
    let a = f.decode_object(m, 1, &DecodeOptions::default()).unwrap();
    assert_eq!(a.data, f32s(7000, 4));
    assert!(f.is_indexed(m));
    let (c, b) = calls(&src);
    let span = f.spans()[m];
    assert!(
        b < span.len,
        "{c} requests, {b} bytes of a {}-byte message",
        span.len
    );
    src.inner().reset();
    let a = f.decode_object(m, 0, &DecodeOptions::default()).unwrap();
    assert_eq!(a.data, f32s(5000, 3));
    assert_eq!(calls(&src).0, 1, "index kept: one request");
}
