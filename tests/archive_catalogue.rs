//! Catalogues kept apart from their archives (`spec/files.md` §9.5): built
//! for files tgm did not write, read back from a catalogue file, taken
//! only while the archive is the one named (length, ETag or digests), and
//! otherwise ignored with the reason, the archive then scanned.

#[path = "remote_corpus.rs"]
mod corpus;

use bytes::Bytes;
use corpus::*;
use tgm::file::archive_catalogue::{is_catalogue_file, ArchiveCatalogue, ArchiveRef};
use tgm::file::{ByteSource, SourceHints, TgmFile};
use tgm::{DecodeOptions, Limits};

fn catalogue_of(bytes: &[u8], location: &str) -> ArchiveCatalogue {
    let f = TgmFile::from_source(Bytes::copy_from_slice(bytes), &Limits::default()).unwrap();
    assert!(f.catalogue().is_none(), "a file tgm did not end with one");
    ArchiveCatalogue::of_file(&f, location, &Limits::default()).unwrap()
}

#[test]
fn a_catalogue_file_round_trips_and_opens_archives_without_scanning() {
    let a = many_messages(300, 64);
    let b = many_messages(5, 1024);
    let mut file = catalogue_of(&a, "a.tgm").to_message().unwrap();
    file.extend(catalogue_of(&b, "https://host/b.tgm").to_message().unwrap());
    assert!(is_catalogue_file(&file, &Limits::default()));
    assert!(!is_catalogue_file(&a, &Limits::default()));
    let cats = ArchiveCatalogue::read_all(&file, &Limits::default()).unwrap();
    assert_eq!(cats.len(), 2);
    assert_eq!(cats[0].archive.location, "a.tgm");
    assert_eq!(cats[1].archive.size, b.len() as u64);
    assert_eq!(
        cats[0].archive.resolve("s3://bkt/dir/all.tgmc"),
        "s3://bkt/dir/a.tgm"
    );
    assert_eq!(cats[0].archive.resolve("/data/all.tgmc"), "/data/a.tgm");
    assert_eq!(
        cats[1].archive.resolve("/data/all.tgmc"),
        "https://host/b.tgm"
    );

    for (bytes, cat) in [(&a, &cats[0]), (&b, &cats[1])] {
        let want = listing(&TgmFile::from_source(bytes.clone(), &Limits::default()).unwrap());
        let src = remote_like(bytes);
        let (f, why) = TgmFile::from_source_catalogued(&src, cat, &Limits::default()).unwrap();
        assert_eq!(why, None);
        // Nothing read but the check: the first window (cached) and the
        // tail; 300 messages would otherwise cost a request each.
        assert!(
            src.inner().inner().calls() <= 2,
            "{}",
            src.inner().inner().calls()
        );
        assert_eq!(listing(&f), want);
        assert_eq!(
            f.metadata(0, &DecodeOptions::default()).unwrap(),
            TgmFile::from_source(bytes.clone(), &Limits::default())
                .unwrap()
                .metadata(0, &DecodeOptions::default())
                .unwrap()
        );
    }
}

#[test]
fn a_stale_catalogue_is_ignored_with_its_reason() {
    let a = many_messages(20, 64);
    let cat = catalogue_of(&a, "a.tgm");
    let check = |bytes: &[u8], what: &str, reason: &str| {
        let scanned = TgmFile::from_source(bytes.to_vec(), &Limits::default()).unwrap();
        let (f, why) =
            TgmFile::from_source_catalogued(bytes.to_vec(), &cat, &Limits::default()).unwrap();
        let why = why.unwrap_or_else(|| panic!("{what}: taken"));
        assert!(why.contains(reason), "{what}: {why}");
        assert_eq!(f.spans(), scanned.spans(), "{what}");
        assert_eq!(f.damage(), scanned.damage(), "{what}");
    };
    // Appended to: another length.
    let mut longer = a.clone();
    longer.extend(many_messages(1, 64));
    check(&longer, "appended", "bytes, the catalogue lists");
    // Cut.
    check(&a[..a.len() - 8], "cut", "bytes, the catalogue lists");
    // Rewritten in place at the same length: a value near the end, then
    // one near the start.
    for (at, what) in [(a.len() - 40, "last"), (40, "first")] {
        let mut b = a.clone();
        b[at] ^= 0xff;
        check(&b, what, &format!("{what} bytes differ"));
    }
}

/// A source reporting an ETag, over memory.
struct Tagged(Bytes, &'static str);

impl ByteSource for Tagged {
    fn len(&self) -> tgm::Result<u64> {
        Ok(self.0.len() as u64)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> tgm::Result<()> {
        let at = offset as usize;
        buf.copy_from_slice(&self.0[at..at + buf.len()]);
        Ok(())
    }
    fn hints(&self) -> SourceHints {
        SourceHints {
            etag: Some(self.1.into()),
            ..SourceHints::default()
        }
    }
}

#[test]
fn an_equal_etag_is_trusted_and_another_etag_checks_the_digests() {
    let a = Bytes::from(many_messages(10, 64));
    let r = ArchiveRef::of_source(&Tagged(a.clone(), "\"v1\""), "a.tgm").unwrap();
    assert_eq!(r.etag.as_deref(), Some("\"v1\""));
    assert_eq!(r.check(&Tagged(a.clone(), "\"v1\"")), Ok(()));
    // Another ETag over the same bytes (a copy to another bucket): the
    // digests decide.
    assert_eq!(r.check(&Tagged(a.clone(), "\"v2\"")), Ok(()));
    let mut b = a.to_vec();
    let n = b.len();
    b[n - 30] ^= 1;
    assert!(r.check(&Tagged(b.into(), "\"v2\"")).is_err());
}

#[test]
fn an_archive_with_its_own_catalogue_is_listed_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("own.tgm");
    std::fs::write(&p, many_messages(8, 64)).unwrap();
    tgm::file::catalogue::end_with_catalogue(&p, &Limits::default())
        .unwrap()
        .unwrap();
    let f = TgmFile::open(&p).unwrap();
    let cat = ArchiveCatalogue::of_file(&f, "own.tgm", &Limits::default()).unwrap();
    assert_eq!(cat.catalogue.covered, f.size());
    let (g, why) = TgmFile::from_source_catalogued(
        Bytes::from(std::fs::read(&p).unwrap()),
        &cat,
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(why, None);
    assert_eq!(g.num_messages(), 8);
    assert_eq!(g.catalogue_spans(), f.catalogue_spans());
    assert_eq!(listing(&g), listing(&f));
}

#[test]
fn what_is_not_a_catalogue_file_is_refused() {
    let a = many_messages(3, 16);
    let e = ArchiveCatalogue::read_all(&a, &Limits::default()).unwrap_err();
    assert!(e.to_string().contains("not a catalogue message"), "{e}");
    let mut cut = catalogue_of(&a, "a.tgm").to_message().unwrap();
    cut.pop();
    let e = ArchiveCatalogue::read_all(&cut, &Limits::default()).unwrap_err();
    assert!(e.to_string().contains("not a catalogue file"), "{e}");
    // A plain catalogue (one naming no archive) is not an archive's.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.tgm");
    std::fs::write(&p, &a).unwrap();
    tgm::file::catalogue::end_with_catalogue(&p, &Limits::default())
        .unwrap()
        .unwrap();
    let all = std::fs::read(&p).unwrap();
    let own = &all[a.len()..];
    let e = ArchiveCatalogue::read_all(own, &Limits::default()).unwrap_err();
    assert!(e.to_string().contains("names no archive"), "{e}");
    // A torn archive is refused when indexing.
    let torn = &a[..a.len() - 5];
    let f = TgmFile::from_source(torn.to_vec(), &Limits::default()).unwrap();
    assert!(ArchiveCatalogue::of_file(&f, "t.tgm", &Limits::default()).is_err());
}

#[test]
fn catalogue_files_are_named_tgmc_in_any_case() {
    use tgm::file::archive_catalogue::has_catalogue_file_name as named;
    for yes in [
        "era5.tgmc",
        "dir/a.TGMC",
        "s3://b/x/all.Tgmc",
        "/abs/p.tgmc",
    ] {
        assert!(named(yes), "{yes}");
    }
    for no in [
        ".tgmc",
        "dir/.tgmc",
        "a.tgm",
        "a.tgmc.json",
        "a.tgmc/",
        "tgmc",
        "",
    ] {
        assert!(!named(no), "{no}");
    }
}
