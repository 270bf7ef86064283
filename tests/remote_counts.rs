//! What each operation of a reader costs in requests and bytes, counted at
//! the library level: a `CountingSource` under a `Coalescing` source sees
//! the requests a remote source would send, and a `HeadCached` source over
//! it holds the first window as a remote source's first GET does
//! (`spec/remote.md` §2–§4).

#[path = "remote_corpus.rs"]
mod corpus;

use bytes::Bytes;
use corpus::*;
use tgm::__fuzz::file::DEFAULT_HEAD_WINDOW;
use tgm::file::catalogue::TAIL_READ;
use tgm::file::{FileLayout, TgmFile};
use tgm::{DecodeOptions, Dtype, EncodeOptions, ErrorKind, Limits, PipelineBuilder};

fn calls(s: &Counted) -> (u64, u64) {
    (s.inner().calls(), s.inner().bytes())
}

const RA: u64 = 64 << 10;

fn frame_len(file: &[u8], span: tgm::MessageSpan, o: usize) -> u64 {
    tgm::Message::parse(&file[span.range()])
        .unwrap()
        .layout()
        .objects[o]
        .data
        .total_len() as u64
}

#[test]
fn default_open_costs_the_first_window_and_one_request_per_message() {
    let n = 1000;
    let all = many_messages(n, 2048);
    let src = remote_like(&all);
    let f = TgmFile::from_source(&src, &Limits::default()).unwrap();
    assert_eq!(f.num_messages(), n);
    let w = DEFAULT_HEAD_WINDOW;
    // The first window, the tail (looking for a catalogue, `spec/files.md`
    // §9.3) and the first 40 bytes of the last message, which starts
    // before the tail (a catalogue's preamble and frame header are checked
    // before it is read whole), then per hop a message's end magic with
    // the next preamble (32 bytes; the last end magic alone, 8).
    assert_eq!(
        calls(src.inner()),
        (3 + n as u64, w + TAIL_READ + 40 + (n as u64 - 1) * 32 + 8)
    );
    assert!(
        f.is_indexed(0),
        "the first index came with the first window"
    );
    assert!(!f.is_indexed(700));

    src.inner().inner().reset();
    let got = f.decode_object(700, 2, &DecodeOptions::default()).unwrap();
    assert_eq!(got.data, f32s(2048, 700 * 3 + 2));
    let frame = frame_len(&all, f.spans()[700], 2);
    assert_eq!(
        calls(src.inner()),
        (2, w + frame),
        "the head window of the message (its index), then the data frame"
    );
    src.inner().inner().reset();
    f.decode_object(700, 0, &DecodeOptions::default()).unwrap();
    assert_eq!(calls(src.inner()), (1, frame_len(&all, f.spans()[700], 0)));
    src.inner().inner().reset();
    f.decode_object(0, 1, &DecodeOptions::default()).unwrap();
    assert_eq!(calls(src.inner()).0, 1, "the first index is kept from open");

    src.inner().inner().reset();
    assert_eq!(f.descriptors(700).unwrap().len(), 3);
    assert_eq!(
        calls(src.inner()).0,
        1,
        "the envelopes of the three frames: one coalesced read"
    );
    src.inner().inner().reset();
    f.descriptors(700).unwrap();
    assert_eq!(calls(src.inner()).0, 0, "kept");

    // Stored sizes come from the same envelopes: no request, and the
    // sizes a whole-message parse gives.
    let whole = tgm::Message::parse(&all[f.spans()[700].range()]).unwrap();
    let want: Vec<u64> = (0..whole.num_objects())
        .map(|o| whole.object(o).unwrap().payload_region().len() as u64)
        .collect();
    src.inner().inner().reset();
    assert_eq!(f.stored_sizes(700).unwrap(), want);
    assert_eq!(
        calls(src.inner()).0,
        0,
        "stored sizes from the kept envelopes"
    );

    // Metadata: the header metadata frame, from the head window.
    let local = TgmFile::from_source(Bytes::from(all.clone()), &Limits::default()).unwrap();
    // The first message's head came with open; another's is one request.
    for (m, cost) in [(0, (0, 0)), (400, (1, w))] {
        src.inner().inner().reset();
        let meta = f.metadata(m, &DecodeOptions::default()).unwrap();
        assert_eq!(meta, local.metadata(m, &DecodeOptions::default()).unwrap());
        assert_eq!(
            calls(src.inner()),
            cost,
            "message {m}: its head window (index and metadata frame)"
        );
    }
    assert!(f.is_indexed(400), "the index read on the way is kept");
}

#[test]
fn open_with_readahead_costs_one_request_per_window_and_an_object_one_request() {
    let n = 1000;
    let all = many_messages(n, 2048);
    let src = counted(&all);
    let f = TgmFile::from_source_with_readahead(&src, &Limits::default(), RA).unwrap();
    assert_eq!(f.num_messages(), n);
    let (c, b) = calls(&src);
    // The first window, then one per hop (a window may cover several
    // messages of this size).
    assert!(c <= n as u64 + 1, "{c} requests to open");
    assert!(b <= (n as u64 + 1) * RA, "{b} bytes to open");
    let missing: Vec<usize> = (0..n).filter(|&m| !f.is_indexed(m)).collect();
    assert!(missing.is_empty(), "{missing:?} {:?}", &f.spans()[..3]);

    src.inner().reset();
    let got = f.decode_object(700, 2, &DecodeOptions::default()).unwrap();
    assert_eq!(got.data, f32s(2048, 700 * 3 + 2));
    let frame = frame_len(&all, f.spans()[700], 2);
    assert_eq!(calls(&src), (1, frame), "one request: the data frame");
}

#[test]
fn a_small_message_is_located_from_the_first_window_and_its_end_magic() {
    let all = many_messages(1, 1024);
    assert!(all.len() as u64 > DEFAULT_HEAD_WINDOW);
    let src = remote_like(&all);
    let f = TgmFile::from_source(&src, &Limits::default()).unwrap();
    assert!(f.is_indexed(0));
    // The first window, the tail looking for a catalogue (the message's
    // first bytes, which the check of a catalogue's head needs, are in the
    // first window), the end magic.
    assert!(all.len() as u64 > TAIL_READ);
    assert_eq!(calls(src.inner()), (3, DEFAULT_HEAD_WINDOW + TAIL_READ + 8));
    // A message inside the window costs nothing more.
    let tiny = message(
        &[(desc(Dtype::Float32, 4, None), f32s(4, 0))],
        &EncodeOptions::new(),
    );
    assert!((tiny.len() as u64) < DEFAULT_HEAD_WINDOW, "{}", tiny.len());
    let src = remote_like(&tiny);
    let f = TgmFile::from_source(&src, &Limits::default()).unwrap();
    assert!(f.is_indexed(0));
    assert_eq!(calls(src.inner()), (1, tiny.len() as u64));
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
    let src = remote_like(&file);
    let f = TgmFile::from_source(&src, &Limits::default()).unwrap();
    assert!(f.is_indexed(0), "the index came with the first window");
    let local = TgmFile::from_source(Bytes::from(file.clone()), &Limits::default()).unwrap();
    let count = ((values as f64) * pct) as u64;
    let ranges = [(values as u64 / 2, count)];
    let opts = DecodeOptions::default();
    src.inner().inner().reset();
    let got = f.decode_range(0, 0, &ranges, &opts).unwrap();
    let (c, b) = calls(src.inner());
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
    // The frame's tail (descriptor, footer), then the RSIs.
    assert_eq!(c, 2, "{c} requests");
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
    assert_eq!(c, 2, "{c} requests");
    assert!(b * 40 < frame, "{b} bytes of a {frame}-byte frame");
}

#[test]
fn decode_range_of_none_and_packed_reads_only_the_covering_bytes() {
    let tail = 64 << 10;
    let (c, b, frame) = range_cost(1 << 20, None, 0.01);
    let covering = ((1u64 << 20) / 100) * 8;
    assert!(c == 2 && b <= covering + tail, "{c} requests, {b} bytes");
    assert!(b * 20 < frame);
    let (c, b, _) = range_cost(
        1 << 20,
        Some(PipelineBuilder::new().simple_packing(12)),
        0.01,
    );
    let covering = ((1u64 << 20) / 100) * 12 / 8 + 2;
    assert!(c == 2 && b <= covering + tail, "{c} requests, {b} bytes");
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
    let src = remote_like(&file);
    let f = TgmFile::from_source(&src, &Limits::default()).unwrap();
    src.inner().inner().reset();
    let e = f
        .decode_range(0, 0, &[(10, 10)], &DecodeOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::RangeNotSupported);
    let (c, b) = calls(src.inner());
    assert_eq!((c, b), (1, 64 << 10), "the frame's tail only");
    // Whole objects of such pipelines are one request of the whole frame.
    src.inner().inner().reset();
    let got = f.decode_object(0, 0, &DecodeOptions::default()).unwrap();
    assert_eq!(got.data, f32s(n, 1));
    assert_eq!(calls(src.inner()).0, 1);
}

#[test]
fn a_shipped_layout_reads_an_object_with_one_request_and_no_rescan() {
    let all = many_messages(1000, 512);
    let f = TgmFile::from_source_with_readahead(counted(&all), &Limits::default(), RA).unwrap();
    let layout = f.layout().unwrap();
    let json = layout.to_json().unwrap();
    let cbor = layout.to_cbor().unwrap();
    for l in [
        FileLayout::from_json(&json).unwrap(),
        FileLayout::from_cbor(&cbor).unwrap(),
    ] {
        assert_eq!(l, layout);
        let src = counted(&all);
        let w = TgmFile::from_layout(&src, &l, &Limits::default()).unwrap();
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
    let f = TgmFile::from_source(Bytes::from(all.clone()), &Limits::default()).unwrap();
    let good = f.layout().unwrap();
    let lim = Limits::default();
    let opts = DecodeOptions::default();
    // Object 1 of message 7 pointed at object 1 of message 6: same length,
    // same descriptor, another frame.
    let mut l = good.clone();
    let shift = l.messages[7].offset - l.messages[6].offset;
    let o = &mut l.messages[7].objects.as_mut().unwrap()[1];
    o.offset -= shift.min(o.offset);
    let w = TgmFile::from_layout(Bytes::from(all.clone()), &l, &lim);
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
    let w = TgmFile::from_layout(Bytes::from(all.clone()), &l, &lim).unwrap();
    assert!(w.decode_object(3, 0, &opts).is_err());
    // The same through a partial read (the frame's tail, then the range).
    let w = TgmFile::from_layout(counted(&all), &l, &lim).unwrap();
    let e = w.decode_range(3, 0, &[(0, 10)], &opts).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Framing | ErrorKind::BadMagic),
        "{e}"
    );
    // A wrong descriptor.
    let mut l = good.clone();
    let other = l.messages[0].objects.as_ref().unwrap()[0]
        .descriptor
        .clone();
    let mut d = other.unwrap();
    d.replace_range(d.len() - 2.., "00");
    l.messages[0].objects.as_mut().unwrap()[0].descriptor = Some(d);
    let w = TgmFile::from_layout(Bytes::from(all.clone()), &l, &lim).unwrap();
    assert!(w.decode_object(0, 0, &opts).is_err());
    let w = TgmFile::from_layout(counted(&all), &l, &lim).unwrap();
    let e = w.decode_range(0, 0, &[(0, 10)], &opts).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::Framing, "{e}");
    assert!(e.to_string().contains("descriptor"), "{e}");
    // A wrong digest, read partially.
    let mut l = good.clone();
    let h = &mut l.messages[5].objects.as_mut().unwrap()[2].hash;
    *h = Some(h.unwrap() ^ 1);
    let w = TgmFile::from_layout(counted(&all), &l, &lim).unwrap();
    let e = w.decode_range(5, 2, &[(0, 10)], &opts).unwrap_err();
    assert!(e.to_string().contains("digest"), "{e}");
    let ok = TgmFile::from_layout(counted(&all), &good, &lim).unwrap();
    assert_eq!(
        ok.decode_range(5, 2, &[(0, 10)], &opts).unwrap(),
        f.decode_range(5, 2, &[(0, 10)], &opts).unwrap()
    );
    // Another source length.
    let short = Bytes::copy_from_slice(&all[..all.len() - 1]);
    let e = TgmFile::from_layout(short, &good, &lim).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::ObjectChanged);
}

#[test]
fn streaming_messages_in_the_middle_are_read_through_their_footer_index() {
    let (_, file) = corpus()
        .into_iter()
        .find(|(n, _)| n == "streaming_mixed.tgm")
        .unwrap();
    let src = counted(&file);
    let f = TgmFile::from_source_with_readahead(&src, &Limits::default(), RA).unwrap();
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

/// Bytes from the descriptor of message `span`'s last data frame to the
/// message end: its descriptor, data-frame footer, footer frames and
/// postamble (`spec/remote.md` §3, footer-indexed messages).
fn end_envelope(file: &[u8], span: tgm::MessageSpan) -> u64 {
    let msg = tgm::Message::parse(&file[span.range()]).unwrap();
    let data = msg.layout().objects.last().unwrap().data;
    let desc = data
        .split_data(&Limits::default())
        .unwrap()
        .descriptor
        .len() as u64;
    let desc_at = data.abs_offset() + data.total_len() as u64 - 20 - desc;
    span.len - desc_at
}

#[test]
fn listing_footer_indexed_messages_reads_their_ends_only() {
    let (n, elems) = (200, 1300);
    let file: Vec<u8> = (0..n)
        .flat_map(|i| streaming(&[(desc(Dtype::Float64, elems, None), f64s(elems, i))], true))
        .collect();
    let src = remote_like(&file);
    let f = TgmFile::from_source(&src, &Limits::default()).unwrap();
    let local = TgmFile::from_source(Bytes::from(file.clone()), &Limits::default()).unwrap();
    assert_eq!(f.num_messages(), n);
    let opened = calls(src.inner()).1;
    let opts = DecodeOptions::default();
    let mut listed = 0;
    for m in 0..n {
        src.inner().inner().reset();
        let meta = f.metadata(m, &opts).unwrap();
        let descs = f.descriptors(m).unwrap();
        let sizes = f.stored_sizes(m).unwrap();
        let (c, b) = calls(src.inner());
        listed += b;
        assert_eq!(meta, local.metadata(m, &opts).unwrap(), "message {m}");
        assert_eq!(descs, local.descriptors(m).unwrap(), "message {m}");
        assert_eq!(sizes, local.stored_sizes(m).unwrap(), "message {m}");
        let want = end_envelope(&file, f.spans()[m]);
        if m == 0 {
            // Its last 512 bytes hold its end envelope.
            assert!(want <= 512, "{want}");
            assert_eq!((c, b), (1, 512), "message 0");
        } else {
            // Messages alike: the previous one's end told how much to read.
            assert_eq!((c, b), (1, want), "message {m}");
        }
    }
    // Opening and listing: no payload byte, so well under a tenth of the
    // file for these 11 KB messages (their ends are 6 % of them).
    let total = opened + listed;
    assert!(
        total * 10 < file.len() as u64,
        "{total} bytes of {} to list",
        file.len()
    );
    // Objects are then read through the kept index: one request each.
    src.inner().inner().reset();
    let got = f.decode_object(7, 0, &opts).unwrap();
    assert_eq!(got.data, f64s(elems, 7));
    assert_eq!(calls(src.inner()).0, 1);
}
