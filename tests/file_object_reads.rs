//! Reading object i of a message costs the same whatever the message's
//! size: each reader keeps a message's index (and `TgmFile` its recent
//! metadata) once read, so later object reads read that object's frame
//! only (`spec/files.md` §7). Also: `TgmFile::refresh` follows appends,
//! and `TgmFile::decode_object_buffer` hands out one owned buffer.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use tgm::__fuzz::file::CountingSource;
use tgm::file::{Backend, FileSource};
use tgm::{
    ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, Limits, ObjectDescriptor,
    TgmFile,
};

fn field(i: usize, order: ByteOrder) -> (ObjectDescriptor, Vec<u8>) {
    let d = ObjectDescriptor::new(Dtype::Float32, vec![64]).with_byte_order(order);
    let data = (0..64)
        .flat_map(|k| {
            let v = (i * 100 + k) as f32;
            match order {
                ByteOrder::Big => v.to_be_bytes(),
                ByteOrder::Little => v.to_le_bytes(),
            }
        })
        .collect();
    (d, data)
}

/// One message of `n` objects, each with a base entry.
fn message(n: usize, order: ByteOrder) -> Vec<u8> {
    let fields: Vec<_> = (0..n).map(|i| field(i, order)).collect();
    let base = (0..n)
        .map(|i| {
            let mut e = tgm::Map::new();
            e.insert("step".into(), tgm::cbor::Value::Uint(i as u64));
            e
        })
        .collect();
    let pairs: Vec<_> = fields.iter().map(|(d, x)| (d, &x[..])).collect();
    tgm::encode(
        &GlobalMetadata::with_base(base),
        &pairs,
        &EncodeOptions::new(),
    )
    .unwrap()
}

fn expect(i: usize) -> Vec<u8> {
    field(i, ByteOrder::native()).1
}

/// Overwrites the first bytes of the file (the first message's preamble).
fn spoil_preamble(path: &Path) {
    let f = OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(b"NOTAMSG!", 0).unwrap();
}

#[test]
fn tgm_file_reads_each_message_index_once() {
    for backend in [Backend::Mmap, Backend::Pread] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("one.tgm");
        std::fs::write(&path, message(40, ByteOrder::native())).unwrap();
        let f = TgmFile::open_with(&path, backend, &Limits::default()).unwrap();
        let opts = DecodeOptions::default();
        assert_eq!(f.object_data(0, 3, &opts).unwrap().as_ref(), &expect(3)[..]);
        // The preamble and index are not read again: spoiling the preamble
        // leaves later object reads of the same handle unaffected.
        spoil_preamble(&path);
        for o in [0, 17, 39] {
            let x = f.decode_object(0, o, &opts).unwrap();
            assert_eq!(x.data, expect(o), "{backend:?} object {o}");
        }
        // A new handle reads the preamble, and finds it spoiled.
        let g = TgmFile::open_with(&path, backend, &Limits::default()).unwrap();
        assert_eq!(g.num_messages(), 0);
    }
}

/// Bytes a `TgmFile` reads for object `o` of the one message of `path`
/// after a first object read located the message's index.
fn bytes_for_object(path: &Path, o: usize) -> (u64, u64) {
    let src = CountingSource::new(FileSource::new(File::open(path).unwrap()));
    let f = TgmFile::from_source(src, &Limits::default()).unwrap();
    let opts = DecodeOptions::default();
    f.decode_object(0, 0, &opts).unwrap();
    f.source().reset();
    let x = f.decode_object(0, o, &opts).unwrap();
    assert_eq!(x.data, expect(o));
    (f.source().calls(), f.source().bytes())
}

#[test]
fn source_file_object_reads_cost_the_same_whatever_the_message_size() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.tgm");
    let large = dir.path().join("large.tgm");
    std::fs::write(&small, message(4, ByteOrder::native())).unwrap();
    std::fs::write(&large, message(2000, ByteOrder::native())).unwrap();
    let (calls_s, bytes_s) = bytes_for_object(&small, 3);
    let (calls_l, bytes_l) = bytes_for_object(&large, 1999);
    assert_eq!((calls_s, calls_l), (1, 1), "one read: the object's frame");
    assert_eq!(bytes_s, bytes_l, "the same frame size whatever the message");
}

#[test]
fn source_file_keeps_recent_metadata_parsed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.tgm");
    std::fs::write(
        &path,
        [
            message(30, ByteOrder::native()),
            message(2, ByteOrder::native()),
        ]
        .concat(),
    )
    .unwrap();
    let src = CountingSource::new(FileSource::new(File::open(&path).unwrap()));
    let f = TgmFile::from_source(src, &Limits::default()).unwrap();
    let opts = DecodeOptions::default();
    let a = f.shared_metadata(0, &opts).unwrap();
    f.source().reset();
    let b = f.shared_metadata(0, &opts).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(f.source().calls(), 0, "served without reading");
    assert_eq!(a.base.len(), 30);
    assert_eq!(f.metadata(0, &opts).unwrap(), *a);
    // A digest-requiring read is not served by a lenient one.
    let c = f
        .shared_metadata(0, &opts.clone().verify(tgm::Verify::Require))
        .unwrap();
    assert!(!Arc::ptr_eq(&a, &c));
    assert_eq!(*a, *c);
    // Other messages evict the oldest entries beyond the bound.
    for _ in 0..20 {
        f.shared_metadata(1, &opts.clone().verify(tgm::Verify::Off))
            .unwrap();
        f.shared_metadata(1, &opts).unwrap();
    }
    assert!(Arc::ptr_eq(&a, &f.shared_metadata(0, &opts).unwrap()));
}

#[test]
fn refresh_follows_appends_and_shrinking() {
    for backend in [Backend::Mmap, Backend::Pread] {
        refresh_follows(backend);
    }
}

fn refresh_follows(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.tgm");
    let m = message(2, ByteOrder::native());
    std::fs::write(&path, &m).unwrap();
    let mut f = TgmFile::open_with(&path, backend, &Limits::default()).unwrap();
    let opts = DecodeOptions::default();
    assert_eq!(f.num_messages(), 1);
    f.decode_object(0, 1, &opts).unwrap();
    let mut w = OpenOptions::new().append(true).open(&path).unwrap();
    std::io::Write::write_all(&mut w, &[m.clone(), m.clone()].concat()).unwrap();
    assert!(f.decode_object(2, 0, &opts).is_err(), "not located yet");
    f.refresh().unwrap();
    assert_eq!(f.num_messages(), 3, "{backend:?}");
    assert_eq!(f.spans()[2].offset, 2 * m.len() as u64);
    assert_eq!(f.decode_object(2, 1, &opts).unwrap().data, expect(1));
    // Half a message appended: a torn tail, then completed.
    std::io::Write::write_all(&mut w, &m[..m.len() / 2]).unwrap();
    f.refresh().unwrap();
    assert_eq!(f.num_messages(), 3);
    assert!(f.torn_tail().is_some_and(|t| t.is_truncation()));
    std::io::Write::write_all(&mut w, &m[m.len() / 2..]).unwrap();
    f.refresh().unwrap();
    assert_eq!(f.num_messages(), 4);
    assert!(f.torn_tail().is_none());
    assert_eq!(f.decode_object(3, 0, &opts).unwrap().data, expect(0));
    // Shrunk: located again from the start.
    w.set_len(m.len() as u64).unwrap();
    f.refresh().unwrap();
    assert_eq!(f.num_messages(), 1);
    assert_eq!(f.size(), m.len() as u64);
}

#[test]
fn decode_object_buffer_reads_stored_objects_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.tgm");
    let other = match ByteOrder::native() {
        ByteOrder::Little => ByteOrder::Big,
        ByteOrder::Big => ByteOrder::Little,
    };
    std::fs::write(
        &path,
        [message(3, ByteOrder::native()), message(3, other)].concat(),
    )
    .unwrap();
    let src = FileSource::new(File::open(&path).unwrap());
    let f = TgmFile::from_source(src, &Limits::default()).unwrap();
    let opts = DecodeOptions::default().native_byte_order(true);
    // Stored as is: the buffer is the frame, the elements a range of it.
    let b = f.decode_object_buffer(0, 2, &opts).unwrap();
    assert_eq!(&b.data[b.range.clone()], &expect(2)[..]);
    assert!(b.range.start > 0 && b.range.end < b.data.len());
    // Swapped on decode: the buffer holds exactly the elements.
    let s = f.decode_object_buffer(1, 2, &opts).unwrap();
    assert_eq!(s.range, 0..s.data.len());
    assert_eq!(s.data, expect(2));
    assert_eq!(s.descriptor.byte_order, other);
    let e = f.decode_object_buffer(0, 3, &opts).unwrap_err();
    assert_eq!(e.message_index(), Some(0));
}

/// A path (mapped or read) and the same bytes in memory answer every
/// reading method alike: one file type, one implementation of each.
#[test]
fn every_reading_method_works_on_a_path_and_on_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("all.tgm");
    let all = [
        message(3, ByteOrder::native()),
        message(5, ByteOrder::native()),
    ]
    .concat();
    std::fs::write(&path, &all).unwrap();
    let opts = DecodeOptions::default();
    let mem = TgmFile::from_source(bytes::Bytes::from(all.clone()), &Limits::default()).unwrap();
    for backend in [Backend::Mmap, Backend::Pread] {
        let f = TgmFile::open_with(&path, backend, &Limits::default()).unwrap();
        assert_eq!(f.path(), path);
        assert_eq!(f.spans(), mem.spans());
        assert_eq!(
            f.metadata(1, &opts).unwrap(),
            mem.metadata(1, &opts).unwrap()
        );
        assert_eq!(f.num_objects(1).unwrap(), 5);
        assert_eq!(f.descriptors(1).unwrap(), mem.descriptors(1).unwrap());
        assert_eq!(f.descriptor(1, 4).unwrap(), mem.descriptor(1, 4).unwrap());
        assert_eq!(f.stored_sizes(1).unwrap(), mem.stored_sizes(1).unwrap());
        let r = f.decode_range(1, 2, &[(3, 2)], &opts).unwrap();
        assert_eq!(r, vec![expect(2)[12..20].to_vec()], "{backend:?}");
        let b = f.decode_object_buffer(1, 2, &opts).unwrap();
        assert_eq!(&b.data[b.range.clone()], &expect(2)[..]);
        assert!(f.is_indexed(1));
        assert_eq!(f.layout().unwrap(), mem.layout().unwrap());
        assert_eq!(f.select("step", "4").unwrap(), vec![(1, 4)]);
        assert_eq!(f.object_data(0, 1, &opts).unwrap().as_ref(), &expect(1)[..]);
        assert_eq!(&*f.message_bytes(1).unwrap(), &all[f.spans()[1].range()]);
        assert!(f.damage().is_empty() && f.check_intact().is_ok());
        // A view of the mapping where the source is in memory, else none.
        let view = f.object_slice::<f32>(0, 2, &opts).unwrap();
        assert_eq!(view.is_some(), backend == Backend::Mmap, "{backend:?}");
        assert!(mem.object_slice::<f32>(0, 2, &opts).unwrap().is_some());
    }
}

/// A source that is not in memory: every read is a slice of one shared
/// buffer, so a copy shows as a different address.
struct SharedReads(bytes::Bytes);

impl tgm::file::ByteSource for SharedReads {
    fn len(&self) -> tgm::Result<u64> {
        Ok(self.0.len() as u64)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> tgm::Result<()> {
        let s = offset as usize;
        buf.copy_from_slice(&self.0[s..s + buf.len()]);
        Ok(())
    }
    fn read_bytes(&self, range: std::ops::Range<u64>) -> tgm::Result<bytes::Bytes> {
        Ok(self.0.slice(range.start as usize..range.end as usize))
    }
}

/// `message_bytes` hands a read source's buffer over as is: the bytes
/// come back at the address the source returned, not copied.
#[test]
fn message_bytes_of_a_read_source_are_shared_not_copied() {
    let all = bytes::Bytes::from(
        [
            message(3, ByteOrder::native()),
            message(5, ByteOrder::native()),
        ]
        .concat(),
    );
    let f = TgmFile::from_source(SharedReads(all.clone()), &Limits::default()).unwrap();
    let span = f.spans()[1].range();
    let shared = f.message_bytes(1).unwrap().into_bytes();
    assert_eq!(&shared[..], &all[span.clone()]);
    assert_eq!(shared.as_ptr(), all[span.clone()].as_ptr());
    // Borrowed from a source in memory, copied only when asked for owned bytes.
    let mem = TgmFile::from_source(all.clone(), &Limits::default()).unwrap();
    let cow = mem.message_bytes(1).unwrap().into_cow();
    assert!(matches!(cow, std::borrow::Cow::Borrowed(b) if b.as_ptr() == all[span].as_ptr()));
}
