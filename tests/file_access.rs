//! File reading (mmap and pread), appending, torn tails and salvage.

use std::borrow::Cow;
use std::path::Path;

use tgm::file::{salvage, AppendOptions, Appender, Backend, TornTailPolicy};
use tgm::{
    ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, Limits, ObjectDescriptor,
    TgmFile,
};

fn obj(i: u32, n: usize) -> (ObjectDescriptor, Vec<u8>) {
    let d =
        ObjectDescriptor::new(Dtype::Float32, vec![n as u64]).with_byte_order(ByteOrder::native());
    let data = (0..n)
        .flat_map(|k| ((i * 1000 + k as u32) as f32).to_ne_bytes())
        .collect();
    (d, data)
}

fn message(i: u32) -> Vec<u8> {
    let (d, x) = obj(i, 16 + i as usize);
    let (d2, x2) = obj(i + 100, 3);
    let mut e = tgm::Map::new();
    e.insert("step".into(), tgm::cbor::Value::Uint(i as u64));
    tgm::encode(
        &GlobalMetadata::with_base(vec![e]),
        &[(&d, &x), (&d2, &x2)],
        &EncodeOptions::new(),
    )
    .unwrap()
}

fn streaming_message(i: u32) -> Vec<u8> {
    let (d, x) = obj(i, 8);
    let mut s = tgm::StreamingEncoder::new(
        Vec::new(),
        &GlobalMetadata::default(),
        &EncodeOptions::new(),
    )
    .unwrap();
    s.write_object(&d, &x).unwrap();
    s.finish().unwrap().0
}

/// A streaming message of one object whose length was never back-filled
/// (as one written to a pipe).
fn unfilled_streaming(d: &ObjectDescriptor, x: &[u8]) -> Vec<u8> {
    let mut s = tgm::StreamingEncoder::new(
        Vec::new(),
        &GlobalMetadata::default(),
        &EncodeOptions::new(),
    )
    .unwrap();
    s.write_object(d, x).unwrap();
    let mut m = s.finish().unwrap().0;
    m[16..24].fill(0);
    m
}

fn sample_file(dir: &Path) -> (std::path::PathBuf, Vec<Vec<u8>>) {
    let msgs = vec![message(0), message(1), streaming_message(2), message(3)];
    let path = dir.join("f.tgm");
    std::fs::write(&path, msgs.concat()).unwrap();
    (path, msgs)
}

#[test]
fn mmap_and_pread_backends_agree_and_mmap_borrows() {
    let dir = tempfile::tempdir().unwrap();
    let (path, msgs) = sample_file(dir.path());
    let a = TgmFile::open_with(&path, Backend::Mmap, &Limits::default()).unwrap();
    let b = TgmFile::open_with(&path, Backend::Pread, &Limits::default()).unwrap();
    assert_eq!(a.num_messages(), msgs.len());
    assert_eq!(a.spans(), b.spans());
    assert!(a.torn_tail().is_none());
    let opts = DecodeOptions::default();
    for (m, bytes) in msgs.iter().enumerate() {
        assert_eq!(a.message_bytes(m).unwrap().as_ref(), &bytes[..]);
        let n = a.with_message(m, |msg| Ok(msg.num_objects())).unwrap();
        for o in 0..n {
            let x = a.object_data(m, o, &opts).unwrap();
            let y = b.object_data(m, o, &opts).unwrap();
            assert_eq!(x, y);
            assert!(
                matches!(x, Cow::Borrowed(_)),
                "mmap read of a raw native object must not copy"
            );
            assert_eq!(
                a.decode_object(m, o, &opts).unwrap(),
                b.decode_object(m, o, &opts).unwrap()
            );
        }
    }
    // Typed zero-copy view (frames are 8-aligned, so f32 payloads are aligned in the mapping).
    let v = a
        .object_slice::<f32>(1, 0, &opts)
        .unwrap()
        .expect("aligned f32 view");
    assert_eq!(v[0], 1000.0);
    assert_eq!(v.len(), 17);
}

#[test]
fn truncation_at_every_byte_keeps_every_complete_message() {
    let dir = tempfile::tempdir().unwrap();
    let msgs = [message(0), message(1), message(2)];
    let all = msgs.concat();
    let ends: Vec<usize> = msgs
        .iter()
        .scan(0, |acc, m| {
            *acc += m.len();
            Some(*acc)
        })
        .collect();
    let path = dir.path().join("t.tgm");
    for cut in 0..=all.len() {
        std::fs::write(&path, &all[..cut]).unwrap();
        let complete = ends.iter().filter(|&&e| e <= cut).count();
        for backend in [Backend::Mmap, Backend::Pread] {
            let f = TgmFile::open_with(&path, backend, &Limits::default()).unwrap();
            assert_eq!(f.num_messages(), complete, "cut {cut} {backend:?}");
            let on_boundary = cut == 0 || ends.contains(&cut);
            assert_eq!(f.torn_tail().is_some(), !on_boundary, "cut {cut}");
            for m in 0..complete {
                f.decode_object(m, 0, &DecodeOptions::default()).unwrap();
            }
        }
    }
}

#[test]
fn concurrent_readers_decode_different_objects() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = sample_file(dir.path());
    let f = TgmFile::open(&path).unwrap();
    let expected: Vec<Vec<u8>> = (0..4)
        .map(|m| {
            f.decode_object(m, 0, &DecodeOptions::default())
                .unwrap()
                .data
        })
        .collect();
    std::thread::scope(|s| {
        for t in 0..4 {
            let f = &f;
            let expected = &expected;
            s.spawn(move || {
                for k in 0..200 {
                    let m = (t + k) % 4;
                    assert_eq!(
                        f.object_data(m, 0, &DecodeOptions::default())
                            .unwrap()
                            .as_ref(),
                        &expected[m][..]
                    );
                }
            });
        }
    });
}

#[test]
fn salvage_reports_damage_and_keeps_the_rest() {
    let msgs = [message(0), message(1), message(2), message(3)];
    let mut buf = Vec::new();
    buf.extend_from_slice(&msgs[0]);
    buf.extend_from_slice(b"garbage between messages");
    let m1_at = buf.len();
    buf.extend_from_slice(&msgs[1]);
    buf.extend_from_slice(&msgs[2]);
    buf.extend_from_slice(&msgs[3][..msgs[3].len() - 10]);
    // Flip one payload byte of message 1.
    let payload = tgm::Message::parse(&msgs[1])
        .unwrap()
        .object(0)
        .unwrap()
        .payload_offset() as usize;
    buf[m1_at + payload] ^= 0x40;
    let rep = salvage(&buf, &Limits::default());
    assert_eq!(rep.messages.len(), 2);
    assert_eq!(&buf[rep.messages[0].range()], &msgs[0][..]);
    assert_eq!(&buf[rep.messages[1].range()], &msgs[2][..]);
    assert_eq!(rep.skipped.len(), 3, "{:#?}", rep.skipped);
    assert_eq!(rep.skipped[0].len, 24);
    assert!(
        rep.skipped[1].reason.contains("hash mismatch"),
        "{}",
        rep.skipped[1].reason
    );
    assert_eq!(rep.skipped[1].offset, m1_at as u64);
    let total: u64 = rep.messages.iter().map(|m| m.len).sum::<u64>()
        + rep.skipped.iter().map(|s| s.len).sum::<u64>();
    assert_eq!(total, buf.len() as u64, "every byte is accounted for");
}

#[test]
fn append_repairs_a_torn_tail_or_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.tgm");
    let mut bytes = [message(0), message(1)].concat();
    let m2 = message(2);
    bytes.extend_from_slice(&m2[..m2.len() / 2]);
    std::fs::write(&path, &bytes).unwrap();
    let refuse = AppendOptions::default().torn_tail(TornTailPolicy::Refuse);
    assert!(Appender::open(&path, &refuse).is_err());
    let mut app = Appender::open(&path, &AppendOptions::default()).unwrap();
    assert_eq!(app.repaired_tail().unwrap().len as usize, m2.len() / 2);
    app.append_bytes(&message(7)).unwrap();
    let (d, x) = obj(9, 5);
    let mut s = app
        .stream(&GlobalMetadata::default(), &EncodeOptions::new())
        .unwrap();
    s.write_object(&d, &x).unwrap();
    s.write_object(&d, &x).unwrap();
    s.finish().unwrap();
    drop(app);
    let f = TgmFile::open(&path).unwrap();
    assert!(f.torn_tail().is_none());
    assert_eq!(f.num_messages(), 4);
    assert_eq!(
        f.decode_object(3, 1, &DecodeOptions::default())
            .unwrap()
            .data,
        x
    );
    // A back-filled streaming message is reachable by hopping.
    assert!(f.spans()[3].len > 0);
}

#[test]
fn refresh_follows_a_growing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.tgm");
    std::fs::write(&path, message(0)).unwrap();
    let mut f = TgmFile::open(&path).unwrap();
    assert_eq!(f.num_messages(), 1);
    let mut app = Appender::open(&path, &AppendOptions::default()).unwrap();
    app.append_bytes(&message(1)).unwrap();
    f.refresh().unwrap();
    assert_eq!(f.num_messages(), 2);
    assert_eq!(
        f.decode_object(1, 1, &DecodeOptions::default())
            .unwrap()
            .data,
        obj(101, 3).1
    );
}

/// A child process appends messages until killed; every message it
/// completed must survive, and appending afterwards must work.
#[test]
fn killed_appender_loses_at_most_the_message_in_flight() {
    if let Ok(path) = std::env::var("TGM_APPEND_CHILD") {
        let mut app = Appender::open(&path, &AppendOptions::default()).unwrap();
        let (d, x) = obj(1, 200_000);
        for i in 0.. {
            let mut e = tgm::Map::new();
            e.insert("i".into(), tgm::cbor::Value::Uint(i));
            app.append(
                &GlobalMetadata::with_base(vec![e]),
                &[(&d, &x)],
                &EncodeOptions::new(),
            )
            .unwrap();
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.tgm");
    let exe = std::env::current_exe().unwrap();
    for (round, delay_ms) in [37u64, 111, 230].into_iter().enumerate() {
        let mut child = std::process::Command::new(&exe)
            .args([
                "--exact",
                "killed_appender_loses_at_most_the_message_in_flight",
                "--nocapture",
            ])
            .env("TGM_APPEND_CHILD", &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        child.kill().unwrap();
        child.wait().unwrap();
        let f = TgmFile::open(&path).unwrap();
        for m in 0..f.num_messages() {
            f.with_message(m, |msg| msg.verify(tgm::Verify::Require))
                .unwrap();
        }
        assert!(f.num_messages() > 0 || round == 0 || f.size() == 0);
        // Appending again repairs any torn tail and leaves a clean file.
        let mut app = Appender::open(&path, &AppendOptions::default()).unwrap();
        app.append_bytes(&message(round as u32)).unwrap();
        drop(app);
        let g = TgmFile::open(&path).unwrap();
        assert!(g.torn_tail().is_none());
        assert_eq!(g.num_messages(), f.num_messages() + 1);
    }
}

/// Messages far apart (hops longer than the mapped reader's pread
/// threshold): both backends locate the same messages, whole, truncated, or
/// with a damaged end magic in the middle.
#[test]
fn large_messages_are_indexed_alike_by_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let msgs: Vec<Vec<u8>> = (0..5)
        .map(|i| {
            let (d, data) = obj(i, 100_000);
            tgm::encode(
                &GlobalMetadata::default(),
                &[(&d, &data)],
                &EncodeOptions::new(),
            )
            .unwrap()
        })
        .collect();
    assert!(msgs[0].len() > 300 << 10);
    let whole: Vec<u8> = msgs.concat();
    let at: Vec<usize> = msgs
        .iter()
        .scan(0, |s, m| {
            *s += m.len();
            Some(*s)
        })
        .collect();
    let mut damaged = whole.clone();
    damaged[at[1] - 3] ^= 0xff; // end magic of message 1
    for (name, bytes, want) in [
        ("whole", whole.clone(), 5usize),
        ("truncated", whole[..at[3] + 1000].to_vec(), 4),
        ("damaged", damaged, 4),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let a = TgmFile::open_with(&path, Backend::Mmap, &Limits::default()).unwrap();
        let b = TgmFile::open_with(&path, Backend::Pread, &Limits::default()).unwrap();
        assert_eq!(a.spans(), b.spans(), "{name}");
        assert_eq!(a.torn_tail(), b.torn_tail(), "{name}");
        assert_eq!(a.num_messages(), want, "{name}");
        for i in 0..a.num_messages() {
            assert_eq!(a.message_bytes(i).unwrap(), b.message_bytes(i).unwrap());
        }
    }
}

/// A message whose payload is itself a whole message (a `.tgm` file
/// archived as a uint8 object).
fn nesting_message(inner: &[u8]) -> Vec<u8> {
    let d = ObjectDescriptor::new(Dtype::Uint8, vec![inner.len() as u64]);
    tgm::encode(
        &GlobalMetadata::default(),
        &[(&d, inner)],
        &EncodeOptions::new(),
    )
    .unwrap()
}

#[test]
fn interrupted_append_of_a_nesting_message_is_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.tgm");
    let first = message(0);
    let inner = message(7);
    let outer = nesting_message(&inner);
    let at = outer
        .windows(inner.len())
        .position(|w| w == &inner[..])
        .unwrap();
    // Interrupted inside the data frame, before and after the embedded
    // message's bytes, and exactly at their end.
    for cut in [
        at + 3,
        at + inner.len(),
        at + inner.len() + 5,
        outer.len() - 1,
    ] {
        let bytes = [first.clone(), outer[..cut].to_vec()].concat();
        std::fs::write(&path, &bytes).unwrap();
        for backend in [Backend::Mmap, Backend::Pread] {
            let f = TgmFile::open_with(&path, backend, &Limits::default()).unwrap();
            assert_eq!(
                f.spans().len(),
                1,
                "cut {cut}, {backend:?}: {:?}",
                f.spans()
            );
            let torn = f.torn_tail().expect("torn tail");
            assert_eq!((torn.offset, torn.len), (first.len() as u64, cut as u64));
            assert!(torn.reason.contains("incomplete"), "{}", torn.reason);
        }
        let holds_inner = cut >= at + inner.len();
        let app = Appender::open(&path, &AppendOptions::default());
        if holds_inner {
            // The embedded message can be delimited in the tail, so the
            // appender will not cut it: the file is left as it was.
            let e = app.unwrap_err();
            assert!(e.detail().contains("tgm salvage"), "{e}");
            assert_eq!(e.offset(), Some(first.len() as u64));
            assert_eq!(std::fs::read(&path).unwrap(), bytes);
        } else {
            let mut app = app.unwrap();
            let second = message(1);
            app.append_bytes(&second).unwrap();
            drop(app);
            assert_eq!(
                std::fs::read(&path).unwrap(),
                [first.clone(), second].concat()
            );
        }
    }
    // A follower that looked while the write was under way picks the
    // message up whole once it is complete.
    std::fs::write(
        &path,
        [first.clone(), outer[..at + inner.len() + 5].to_vec()].concat(),
    )
    .unwrap();
    let mut f = TgmFile::open(&path).unwrap();
    assert_eq!(f.num_messages(), 1);
    std::fs::write(&path, [first.clone(), outer.clone()].concat()).unwrap();
    f.refresh().unwrap();
    assert_eq!(
        f.spans(),
        &[
            tgm::MessageSpan {
                offset: 0,
                len: first.len() as u64
            },
            tgm::MessageSpan {
                offset: first.len() as u64,
                len: outer.len() as u64
            },
        ]
    );
    assert!(f.torn_tail().is_none());
}

#[test]
fn interrupted_write_after_a_streaming_message_is_a_torn_tail() {
    // The hop stops at the streaming message and the rest is scanned: the
    // scan must see the interrupted message, not the one in its payload,
    // whether that message is buffered or streaming itself.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.tgm");
    let head = [message(0), streaming_message(1)].concat();
    let inner = message(7);
    let buffered = nesting_message(&inner);
    let streaming = unfilled_streaming(
        &ObjectDescriptor::new(Dtype::Uint8, vec![inner.len() as u64]),
        &inner,
    );
    for outer in [buffered, streaming] {
        let at = outer
            .windows(inner.len())
            .position(|w| w == &inner[..])
            .unwrap();
        for cut in [at + inner.len(), at + inner.len() + 7] {
            let partial = outer[..cut].to_vec();
            std::fs::write(&path, [&head[..], &partial].concat()).unwrap();
            for backend in [Backend::Mmap, Backend::Pread] {
                let f = TgmFile::open_with(&path, backend, &Limits::default()).unwrap();
                assert_eq!(
                    f.num_messages(),
                    2,
                    "cut {cut} {backend:?}: {:?}",
                    f.spans()
                );
                let torn = f.torn_tail().expect("torn tail");
                assert_eq!(torn.offset, head.len() as u64);
                assert!(torn.reason.contains("incomplete"), "{}", torn.reason);
            }
        }
    }
}

#[test]
fn appender_cuts_an_interrupted_streaming_message_whose_payload_holds_the_end_magic() {
    // The end magic's bytes inside the payload let the scan's fallback
    // delimit the interrupted message itself; that is no message to keep.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.tgm");
    let first = message(0);
    let payload = b"....39277777....".repeat(4);
    let streaming = unfilled_streaming(
        &ObjectDescriptor::new(Dtype::Uint8, vec![payload.len() as u64]),
        &payload,
    );
    let at = streaming
        .windows(payload.len())
        .position(|w| w == &payload[..])
        .unwrap();
    let partial = &streaming[..at + payload.len()];
    std::fs::write(&path, [&first[..], partial].concat()).unwrap();
    let app = Appender::open(&path, &AppendOptions::default()).unwrap();
    assert_eq!(app.repaired_tail().unwrap().offset, first.len() as u64);
    drop(app);
    assert_eq!(std::fs::read(&path).unwrap(), first);
}

#[test]
fn appender_refuses_a_cut_that_would_change_how_the_file_reads() {
    // After message A: a preamble declaring more than the file holds and a
    // frame that spans message B and ends inside the torn tail. As the file
    // is, that chain breaks in the tail, so the preamble is damage and B is
    // indexed; with the tail cut, the chain would run to the end and the
    // preamble would read as an interrupted write that swallows B.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.tgm");
    let (a, b) = (message(0), message(1));
    let mut x = b"TENSOGRM".to_vec();
    x.extend_from_slice(&[0, 3, 0, 0, 0, 0, 0, 0]);
    x.extend_from_slice(&(1u64 << 20).to_be_bytes());
    x.extend_from_slice(b"FR");
    x.extend_from_slice(&[0, 9, 0, 1, 0, 0]);
    x.extend_from_slice(&(16 + b.len() as u64 + 8).to_be_bytes());
    let tail = [&[0u8, 0, 0, 0][..], b"ENDF", &[0xaa; 100]].concat();
    let bytes = [&a[..], &x, &b, &tail].concat();
    std::fs::write(&path, &bytes).unwrap();
    let f = TgmFile::open(&path).unwrap();
    let b_at = (a.len() + x.len()) as u64;
    assert_eq!(
        f.spans(),
        &[
            tgm::MessageSpan {
                offset: 0,
                len: a.len() as u64
            },
            tgm::MessageSpan {
                offset: b_at,
                len: b.len() as u64
            },
        ]
    );
    assert_eq!(f.torn_tail().unwrap().offset, b_at + b.len() as u64);
    let e = Appender::open(&path, &AppendOptions::default()).unwrap_err();
    assert!(e.detail().contains("would change"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn appender_never_cuts_a_message_after_a_damaged_frame() {
    // A streaming message (no declared length) whose last frame's length was
    // damaged to run past the end looks like an interrupted write, but a
    // real message follows it: the reader reports a torn tail, and the
    // appender refuses to cut it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.tgm");
    let first = message(0);
    let (d, x) = obj(5, 8);
    let mut streaming = unfilled_streaming(&d, &x);
    let last = tgm::Message::parse(&streaming)
        .unwrap()
        .layout()
        .frames()
        .last()
        .unwrap()
        .offset();
    streaming[last + 8..last + 16].copy_from_slice(&(1u64 << 20).to_be_bytes());
    let after = message(2);
    let bytes = [first.clone(), streaming, after].concat();
    std::fs::write(&path, &bytes).unwrap();
    let f = TgmFile::open(&path).unwrap();
    assert_eq!(f.num_messages(), 1);
    assert_eq!(f.torn_tail().unwrap().offset, first.len() as u64);
    assert!(Appender::open(&path, &AppendOptions::default()).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    // Salvage still finds the message after the damage.
    assert_eq!(salvage(&bytes, &Limits::default()).messages.len(), 2);
}
