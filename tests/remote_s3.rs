//! Remote reads over the S3 API against `s3s-fs` on loopback
//! (`tests/common/servers.rs`), configured through the standard `AWS_*`
//! environment variables: every corpus file decodes as the local read
//! does, and the request counts are those of HTTP (`spec/remote.md`).
//! Skips with a message when `s3s-fs` is absent.
#![cfg(feature = "remote")]

#[path = "common/servers.rs"]
mod servers;

#[path = "remote_corpus.rs"]
mod corpus;

use std::sync::Once;

use bytes::Bytes;
use corpus::*;
use tgm::file::{FileLayout, TgmFile};
use tgm::remote::{RemoteOptions, RemoteSource};
use tgm::{DecodeOptions, ErrorKind, Limits};

/// The server, with the `AWS_*` variables pointing at it (set once, before
/// any store reads them).
fn s3() -> Option<&'static servers::S3> {
    static ENV: Once = Once::new();
    let s = servers::s3()?;
    ENV.call_once(|| {
        for (k, v) in s.env() {
            std::env::set_var(k, v);
        }
    });
    Some(s)
}

fn open(url: &str) -> TgmFile<RemoteSource> {
    let src = RemoteSource::open(url, &RemoteOptions::default()).unwrap();
    TgmFile::from_source(src, &Limits::default()).unwrap()
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn every_corpus_file_read_over_s3_decodes_as_the_local_read() {
    let Some(s3) = s3() else { return };
    for (name, bytes) in corpus() {
        let url = s3.put(&format!("corpus/{name}"), &bytes);
        assert!(url.starts_with("s3://"), "{url}");
        let local = TgmFile::from_source(Bytes::from(bytes.clone()), &Limits::default()).unwrap();
        assert_eq!(summary(&open(&url)), summary(&local), "{name}");
    }
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn s3_reads_cost_what_http_reads_cost() {
    let Some(s3) = s3() else { return };
    let n = 200;
    let all = many_messages(n, 2048);
    let url = s3.put("counts/many.tgm", &all);
    let f = open(&url);
    let st = f.source().stats();
    // The first GET (length, ETag, first messages), the tail looking for
    // a catalogue and the last message's first 40 bytes (`spec/files.md`
    // §9.3), then the scan from both ends in doubling windows
    // (`spec/remote.md` §3.1), each byte once, as over HTTP.
    assert_eq!((st.requests, st.bytes), (14, all.len() as u64), "{st:?}");
    let got = f.decode_object(150, 2, &DecodeOptions::default()).unwrap();
    assert_eq!(got.data, f32s(2048, 150 * 3 + 2));
    // The index kept by the scan: the data frame.
    assert_eq!(f.source().stats().requests, st.requests + 1);
    let layout = FileLayout::from_cbor(&f.layout().unwrap().to_cbor().unwrap()).unwrap();
    let src = RemoteSource::open(&url, &RemoteOptions::default()).unwrap();
    let w = TgmFile::from_layout(src, &layout, &Limits::default()).unwrap();
    let got = w.decode_object(99, 0, &DecodeOptions::default()).unwrap();
    assert_eq!(got.data, f32s(2048, 99 * 3));
    assert_eq!(
        w.source().stats().requests,
        2,
        "the first GET of open, one GET of the frame"
    );
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn a_missing_key_is_not_found() {
    let Some(s3) = s3() else { return };
    let url = format!("s3://{}/no/such/key.tgm", s3.bucket);
    let e = RemoteSource::open(&url, &RemoteOptions::default()).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::NotFound, "{e}");
    assert!(e.to_string().contains(&url));
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn an_object_replaced_after_open_is_detected() {
    let Some(s3) = s3() else { return };
    let url = s3.put("faults/changing.tgm", &many_messages(3, 1000));
    let f = open(&url);
    s3.put("faults/changing.tgm", &many_messages(3, 1001));
    let e = f
        .decode_object(2, 0, &DecodeOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::ObjectChanged, "{e}");
}
