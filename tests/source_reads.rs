//! Reading through a byte source touches only what is needed: counted with
//! a wrapper source over files of 1,000 messages (`spec/files.md` §7).

use bytes::Bytes;
use tgm::__fuzz::file::{Coalescing, CountingSource, HeadCached};
use tgm::file::catalogue::TAIL_READ;
use tgm::file::{ByteSource, FileSource, MmapSource, SourceHints, TgmFile};
use tgm::{
    ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, Limits, ObjectDescriptor,
};

const MESSAGES: usize = 1000;
/// Elements of each of the three objects of a message.
const ELEMS: usize = 2048;

fn object(m: usize, o: usize) -> (ObjectDescriptor, Vec<u8>) {
    let d = ObjectDescriptor::new(Dtype::Float32, vec![ELEMS as u64])
        .with_byte_order(ByteOrder::native());
    let x = (0..ELEMS)
        .flat_map(|k| ((m * 10 + o) as f32 + k as f32).to_ne_bytes())
        .collect();
    (d, x)
}

fn buffered(m: usize) -> Vec<u8> {
    let objs: Vec<_> = (0..3).map(|o| object(m, o)).collect();
    let refs: Vec<_> = objs.iter().map(|(d, x)| (d, &x[..])).collect();
    tgm::encode(&GlobalMetadata::default(), &refs, &EncodeOptions::new()).unwrap()
}

/// A streaming message whose length was never back-filled.
fn unfilled(m: usize) -> Vec<u8> {
    let mut s = tgm::StreamingEncoder::new(
        Vec::new(),
        &GlobalMetadata::default(),
        &EncodeOptions::new(),
    )
    .unwrap();
    for o in 0..3 {
        let (d, x) = object(m, o);
        s.write_object(&d, &x).unwrap();
    }
    let mut b = s.finish().unwrap().0;
    b[16..24].fill(0);
    b
}

fn file_of(messages: impl Fn(usize) -> Vec<u8>) -> Vec<u8> {
    (0..MESSAGES).flat_map(messages).collect()
}

#[test]
fn opening_reads_a_few_bytes_per_message_and_one_object_reads_one_frame() {
    let all = file_of(buffered);
    let src = CountingSource::new(Bytes::from(all.clone()));
    let f = TgmFile::from_source(&src, &Limits::default()).unwrap();
    assert_eq!(f.num_messages(), MESSAGES);
    assert!(f.torn_tail().is_none());
    // The tail, looking for a catalogue (`spec/files.md` §9.3), and the
    // last message's first 40 bytes, then one read per message: its end
    // magic with the next preamble.
    let (calls, bytes) = (src.calls(), src.bytes());
    assert!(calls <= MESSAGES as u64 + 3, "{calls} calls to open");
    assert!(
        bytes <= 32 * MESSAGES as u64 + TAIL_READ + 40,
        "{bytes} bytes to open"
    );
    assert!(bytes * 100 < all.len() as u64);

    src.reset();
    let got = f.decode_object(700, 2, &DecodeOptions::default()).unwrap();
    assert_eq!(got.data, object(700, 2).1);
    let span = f.spans()[700];
    let frame = tgm::Message::parse(&all[span.range()])
        .unwrap()
        .layout()
        .objects[2]
        .data
        .total_len() as u64;
    let (calls, bytes) = (src.calls(), src.bytes());
    // The message head (preamble, header frames, index) and the frame.
    assert!(calls <= 2, "{calls} calls for one object");
    assert!(
        bytes >= frame && bytes <= frame + 4096,
        "{bytes} bytes for a {frame}-byte frame"
    );
    assert!(
        bytes < span.len / 2,
        "{bytes} of a {}-byte message",
        span.len
    );
}

#[test]
fn streaming_messages_are_indexed_by_their_frame_headers() {
    let all = file_of(unfilled);
    let src = CountingSource::new(Bytes::from(all.clone()));
    let f = TgmFile::from_source(&src, &Limits::default()).unwrap();
    assert_eq!(f.spans(), tgm::scan(&all));
    assert_eq!(f.num_messages(), MESSAGES);
    assert!(f.torn_tail().is_none());
    let bytes = src.bytes();
    assert!(
        bytes * 20 < all.len() as u64,
        "{bytes} of {} bytes read to open",
        all.len()
    );
    src.reset();
    let got = f.decode_object(700, 1, &DecodeOptions::default()).unwrap();
    assert_eq!(got.data, object(700, 1).1);
}

#[test]
fn a_torn_tail_is_read_but_nothing_before_it_is() {
    let mut all = file_of(buffered);
    let whole = all.len() as u64;
    let next = buffered(MESSAGES);
    all.extend_from_slice(&next[..next.len() / 2]);
    let src = CountingSource::new(Bytes::from(all.clone()));
    let f = TgmFile::from_source(&src, &Limits::default()).unwrap();
    assert_eq!(f.num_messages(), MESSAGES);
    let t = f.torn_tail().unwrap();
    assert_eq!((t.offset, t.len), (whole, all.len() as u64 - whole));
    let bytes = src.bytes();
    assert!(
        bytes <= 32 * MESSAGES as u64 + t.len + 64 + TAIL_READ,
        "{bytes} bytes"
    );
}

#[test]
fn files_maps_and_memory_agree() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.tgm");
    let all = file_of(buffered);
    std::fs::write(&p, &all).unwrap();
    let opts = DecodeOptions::default();
    let file = TgmFile::from_source(
        FileSource::new(std::fs::File::open(&p).unwrap()),
        &Limits::default(),
    )
    .unwrap();
    let map = TgmFile::from_source(
        MmapSource::map(&std::fs::File::open(&p).unwrap()).unwrap(),
        &Limits::default(),
    )
    .unwrap();
    let mem = TgmFile::from_source(all.clone(), &Limits::default()).unwrap();
    assert_eq!(file.spans(), map.spans());
    assert_eq!(file.spans(), mem.spans());
    for (m, o) in [(0, 0), (999, 2), (500, 1)] {
        let want = object(m, o).1;
        assert_eq!(file.decode_object(m, o, &opts).unwrap().data, want);
        assert_eq!(map.decode_object(m, o, &opts).unwrap().data, want);
        assert_eq!(mem.decode_object(m, o, &opts).unwrap().data, want);
    }
    // Message bytes are borrowed from a source in memory, read otherwise.
    let span = file.spans()[3];
    let borrowed = map.message_bytes(3).unwrap().into_cow();
    assert!(matches!(borrowed, std::borrow::Cow::Borrowed(_)));
    assert_eq!(&*borrowed, &*file.message_bytes(3).unwrap());
    assert!(matches!(
        file.message_bytes(3).unwrap().into_cow(),
        std::borrow::Cow::Owned(_)
    ));
    // A mapping's views outlive the reader.
    let b = map
        .source()
        .read_bytes(span.offset..span.offset + span.len)
        .unwrap();
    drop(map);
    assert_eq!(&b[..], &all[file.spans()[3].range()]);
    assert!(file.decode_object(1000, 0, &opts).is_err());
    assert!(file.decode_object(0, 3, &opts).is_err());
    assert_eq!(file.source().len().unwrap(), all.len() as u64);
}

/// Bytes in memory that say what a remote source says: check digests.
struct MustVerify(Bytes);

impl ByteSource for MustVerify {
    fn len(&self) -> tgm::Result<u64> {
        ByteSource::len(&self.0)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> tgm::Result<()> {
        self.0.read_at(offset, buf)
    }
    fn hints(&self) -> SourceHints {
        SourceHints {
            requires_verification: true,
            etag: Some("\"v1\"".into()),
            ..SourceHints::default()
        }
    }
}

#[test]
fn digests_are_checked_through_every_wrapper_of_a_source_that_requires_it() {
    let mut msg = buffered(0);
    let payload = object(0, 1).1;
    let at = msg
        .windows(payload.len())
        .position(|w| w == &payload[..])
        .expect("object 1 is stored as is");
    msg[at + 100] ^= 0x40;
    let off = DecodeOptions::default().verify(tgm::Verify::Off);
    let plain = TgmFile::from_source(Bytes::from(msg.clone()), &Limits::default()).unwrap();
    assert!(
        plain.decode_object(0, 1, &off).is_ok(),
        "a local source decodes the damaged object unchecked when asked"
    );
    let sources: Vec<(&str, Box<dyn ByteSource>)> = vec![
        ("bare", Box::new(MustVerify(Bytes::from(msg.clone())))),
        (
            "counted, coalesced, head-cached",
            Box::new(Coalescing::new(
                HeadCached::new(
                    CountingSource::new(std::sync::Arc::new(MustVerify(Bytes::from(msg.clone())))),
                    64,
                )
                .unwrap(),
                1024,
            )),
        ),
    ];
    for (name, src) in sources {
        let f = TgmFile::from_source(src, &Limits::default()).unwrap();
        assert_eq!(f.source().hints().etag.as_deref(), Some("\"v1\""), "{name}");
        let e = f.decode_object(0, 1, &off).unwrap_err();
        assert!(
            matches!(e.kind(), tgm::ErrorKind::HashMismatch { .. }),
            "{name}: {e}"
        );
        assert!(f.decode_object(0, 0, &off).is_ok(), "{name}");
    }
}

#[test]
fn a_cut_last_message_is_the_same_damage_through_any_source() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cut.tgm");
    let mut all: Vec<u8> = (0..5).flat_map(buffered).collect();
    let whole = all.len() as u64;
    let next = buffered(5);
    all.extend_from_slice(&next[..next.len() - 10]);
    std::fs::write(&p, &all).unwrap();
    let local = tgm::TgmFile::open(&p).unwrap();
    let want = local.damage();
    assert_eq!(want.len(), 1);
    assert_eq!((want[0].offset, want[0].message), (whole, 5));
    assert!(want[0].truncated);
    let e = local.check_intact().unwrap_err();
    assert_eq!(e.kind(), &tgm::ErrorKind::Truncated);
    assert_eq!((e.offset(), e.message_index()), (Some(whole), Some(5)));

    let remote_like = || MustVerify(Bytes::from(all.clone()));
    let sources: Vec<(&str, Box<dyn ByteSource>)> = vec![
        ("memory", Box::new(Bytes::from(all.clone()))),
        ("remote-like", Box::new(remote_like())),
        (
            "remote-like, head-cached",
            Box::new(HeadCached::new(remote_like(), 4096).unwrap()),
        ),
    ];
    for (name, src) in sources {
        for readahead in [0, 1 << 16] {
            let f =
                TgmFile::from_source_with_readahead(&src, &Limits::default(), readahead).unwrap();
            assert_eq!(f.num_messages(), 5, "{name}");
            assert_eq!(f.damage(), want, "{name}, readahead {readahead}");
            let got = f.check_intact().unwrap_err();
            assert_eq!(got.to_string(), e.to_string(), "{name}");
        }
    }
    let intact = TgmFile::from_source(
        Bytes::from(all[..whole as usize].to_vec()),
        &Limits::default(),
    )
    .unwrap();
    assert!(intact.damage().is_empty() && intact.check_intact().is_ok());
}
