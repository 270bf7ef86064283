//! Remote reads over HTTP against nginx on loopback (`tests/common/servers.rs`):
//! every corpus file decodes as the local read does, the library's request
//! and byte counts match nginx's access log, and each fault gives a typed
//! error (`spec/remote.md`). Skips with a message when nginx is absent.
#![cfg(feature = "remote")]

#[path = "common/servers.rs"]
mod servers;

#[path = "remote_corpus.rs"]
mod corpus;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use bytes::Bytes;
use corpus::*;
use tgm::file::{FileLayout, TgmFile};
use tgm::remote::{RemoteOptions, RemoteSource};
use tgm::{DecodeOptions, Dtype, EncodeOptions, ErrorKind, Limits, PipelineBuilder};

fn open(url: &str) -> TgmFile<RemoteSource> {
    let src = RemoteSource::open(url, &RemoteOptions::default()).unwrap();
    TgmFile::from_source(src, &Limits::default()).unwrap()
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn every_corpus_file_read_over_http_decodes_as_the_local_read() {
    let Some(http) = servers::http() else { return };
    for (name, bytes) in corpus() {
        let url = http.put(&format!("corpus/{name}"), &bytes);
        let local = TgmFile::from_source(Bytes::from(bytes.clone()), &Limits::default()).unwrap();
        let remote = open(&url);
        assert_eq!(summary(&remote), summary(&local), "{name}");
    }
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn request_counts_match_the_access_log() {
    let Some(http) = servers::http() else { return };
    let n = 1000;
    let all = many_messages(n, 2048);
    let name = "counts/many.tgm";
    let url = http.put(name, &all);
    let mark = http.log_mark();
    let f = open(&url);
    let open_stats = f.source().stats();
    assert_eq!(
        http.logged(mark, name),
        (open_stats.requests, open_stats.bytes)
    );
    // No HEAD: the first GET of the head window gives the length, the
    // ETag and the first messages; then the tail, looking for a catalogue
    // (`spec/files.md` §9.3), and the first 40 bytes of the last message,
    // which starts before the tail; then the scan from both ends
    // (`spec/remote.md` §3.1): messages of 25 KB are small, so windows
    // from 64 KiB doubling to 8 MiB, one at each end per round, read the
    // rest of the file, each byte once.
    assert_eq!(
        (open_stats.requests, open_stats.bytes),
        (18, all.len() as u64),
        "{open_stats:?}"
    );
    assert!((0..n).all(|m| f.is_indexed(m)));
    println!("open {n} messages: {open_stats:?}");

    let mark = http.log_mark();
    let got = f.decode_object(700, 2, &DecodeOptions::default()).unwrap();
    assert_eq!(got.data, f32s(2048, 700 * 3 + 2));
    let s = f.source().stats();
    let (req, bytes) = (s.requests - open_stats.requests, s.bytes - open_stats.bytes);
    assert_eq!(http.logged(mark, name), (req, bytes));
    let span = f.spans()[700];
    let frame = tgm::Message::parse(&all[span.range()])
        .unwrap()
        .layout()
        .objects[2]
        .data
        .total_len() as u64;
    assert_eq!(
        (req, bytes),
        (1, frame),
        "the index is kept: the data frame"
    );
    let before = f.source().stats();
    let meta = f.metadata(400, &DecodeOptions::default()).unwrap();
    assert_eq!(meta.base.len(), 3);
    assert_eq!(f.descriptors(400).unwrap().len(), 3);
    assert_eq!(f.source().stats(), before, "a listing sends no request");
    println!("object 2 of message 700: {req} request, {bytes} bytes");

    // With no readahead, the front alone, exactly what each hop needs.
    let exact = RemoteOptions::default().with_readahead(0);
    let mark = http.log_mark();
    let src = RemoteSource::open(&url, &exact).unwrap();
    let f = TgmFile::from_source(src, &Limits::default()).unwrap();
    let st = f.source().stats();
    assert_eq!(http.logged(mark, name), (st.requests, st.bytes));
    // The first window, the tail, the last message's first 40 bytes, then
    // one GET per hop (the end magic of a message with the next preamble,
    // 32 bytes; the last end magic alone, 8).
    let w = tgm::__fuzz::file::DEFAULT_HEAD_WINDOW;
    let tail = tgm::file::catalogue::TAIL_READ;
    assert_eq!(
        (st.requests, st.bytes),
        (n as u64 + 3, w + tail + 40 + (n as u64 - 1) * 32 + 8),
        "{st:?}"
    );
    assert!(f.is_indexed(0) && !f.is_indexed(700));
    let before = f.source().stats();
    f.decode_object(700, 2, &DecodeOptions::default()).unwrap();
    let s = f.source().stats();
    assert_eq!(
        (s.requests - before.requests, s.bytes - before.bytes),
        (2, w + frame),
        "the message's head window (its index), then the data frame"
    );
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn decode_range_of_szip_fetches_the_covering_rsis_only() {
    let Some(http) = servers::http() else { return };
    let values = 1 << 20;
    let file = szip_message(values);
    let name = "counts/szip.tgm";
    let url = http.put(name, &file);
    let f = open(&url);
    let local = TgmFile::from_source(Bytes::from(file.clone()), &Limits::default()).unwrap();
    let ranges = [(values as u64 / 2, values as u64 / 100)];
    let opts = DecodeOptions::default();
    let before = f.source().stats();
    let mark = http.log_mark();
    let got = f.decode_range(0, 0, &ranges, &opts).unwrap();
    assert_eq!(got, local.decode_range(0, 0, &ranges, &opts).unwrap());
    let s = f.source().stats();
    let (req, bytes) = (s.requests - before.requests, s.bytes - before.bytes);
    assert_eq!(http.logged(mark, name), (req, bytes));
    assert_eq!(req, 2, "the frame's tail, then the covering RSIs");
    assert!(
        bytes * 5 < file.len() as u64,
        "{bytes} of {} bytes",
        file.len()
    );
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn a_shipped_layout_costs_one_get_per_object() {
    let Some(http) = servers::http() else { return };
    let all = many_messages(50, 1000);
    let name = "layout/many.tgm";
    let url = http.put(name, &all);
    let layout = open(&url).layout().unwrap();
    assert!(layout.etag.is_some(), "nginx sends an ETag");
    let shipped = FileLayout::from_json(&layout.to_json().unwrap()).unwrap();
    let src = RemoteSource::open(&url, &RemoteOptions::default()).unwrap();
    let w = TgmFile::from_layout(src, &shipped, &Limits::default()).unwrap();
    let mark = http.log_mark();
    let got = w.decode_object(42, 1, &DecodeOptions::default()).unwrap();
    assert_eq!(got.data, f32s(1000, 42 * 3 + 1));
    assert_eq!(http.logged(mark, name).0, 1);
    assert_eq!(
        w.source().stats().requests,
        2,
        "the first GET of open, one GET of the frame"
    );
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn a_server_ignoring_range_is_refused_without_reading_the_body() {
    let Some(http) = servers::http() else { return };
    let all = many_messages(3, 100_000);
    http.put("faults/norange.tgm", &all);
    let url = http.fault_url("norange", "faults/norange.tgm");
    let src = RemoteSource::open(&url, &RemoteOptions::default()).unwrap();
    let e = tgm::file::ByteSource::read_bytes(&src, 0..100).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::Remote, "{e}");
    assert!(e.to_string().contains(&url), "{e}");
    assert_eq!(src.stats().bytes, 0, "the 200 body is not read");
    // Opening fails with the same error.
    let src = RemoteSource::open(&url, &RemoteOptions::default()).unwrap();
    let e = TgmFile::from_source(src, &Limits::default()).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::Remote, "{e}");
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn a_503_is_retried_with_backoff() {
    let Some(http) = servers::http() else { return };
    let all = many_messages(2, 100);
    let name = format!("faults/flaky-{}.tgm", std::process::id());
    http.put(&name, &all);
    let url = http.fault_url("flaky503", &name);
    let mark = http.log_mark();
    let f = open(&url);
    assert_eq!(f.num_messages(), 2);
    let got = f.decode_object(1, 2, &DecodeOptions::default()).unwrap();
    assert_eq!(got.data, f32s(100, 5));
    let statuses: Vec<u16> = http
        .requests_since(mark)
        .into_iter()
        .filter(|r| r.is_for(&name))
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses.first(), Some(&503), "{statuses:?}");
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn missing_and_forbidden_objects_are_typed_errors_naming_the_url() {
    let Some(http) = servers::http() else { return };
    let url = http.url("faults/does-not-exist.tgm");
    let e = RemoteSource::open(&url, &RemoteOptions::default()).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::NotFound, "{e}");
    assert!(e.to_string().contains(&url));
    http.put("faults/secret.tgm", &many_messages(1, 10));
    let url = http.fault_url("forbidden", "faults/secret.tgm");
    let e = RemoteSource::open(&url, &RemoteOptions::default()).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::Forbidden, "{e}");
    assert!(e.to_string().contains(&url));
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn an_object_changed_after_open_is_detected() {
    let Some(http) = servers::http() else { return };
    let name = "faults/changing.tgm";
    let url = http.put(name, &many_messages(3, 1000));
    let f = open(&url);
    let etag = f.source().as_async().etag().map(str::to_string);
    assert!(etag.is_some());
    // Another length, so nginx's ETag (mtime and size) differs.
    http.put(name, &many_messages(4, 1000));
    let e = f
        .decode_object(2, 0, &DecodeOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::ObjectChanged, "{e}");
    // A layout made before the change is refused at once.
    let mut l = f.layout();
    if let Ok(l) = l.as_mut() {
        let src = RemoteSource::open(&url, &RemoteOptions::default()).unwrap();
        let e = TgmFile::from_layout(src, l, &Limits::default()).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::ObjectChanged, "{e}");
    }
}

/// A one-connection-at-a-time server answering every request with `reply`
/// (after `delay`), for faults nginx cannot produce.
fn fake_server(reply: Vec<u8>, delay: Duration) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let reply = reply.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf);
                std::thread::sleep(delay);
                let _ = s.write_all(&reply);
            });
        }
    });
    format!("http://127.0.0.1:{port}/x.tgm")
}

#[test]
fn a_short_body_and_a_silent_server_are_errors() {
    // HEAD and GET alike get a 206 promising 100 bytes and sending 10.
    let short = b"HTTP/1.1 206 Partial Content\r\nContent-Length: 100\r\nContent-Range: bytes 0-99/1000\r\nConnection: close\r\n\r\n0123456789".to_vec();
    let url = fake_server(short, Duration::ZERO);
    let o = RemoteOptions::default()
        .with_retries(1)
        .with_backoff(Duration::from_millis(10), Duration::from_millis(20))
        .with_timeout(Duration::from_secs(5));
    if let Ok(src) = RemoteSource::open(&url, &o) {
        let e = tgm::file::ByteSource::read_bytes(&src, 0..100).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::Remote | ErrorKind::Truncated),
            "{e}"
        );
    }
    let url = fake_server(Vec::new(), Duration::from_secs(30));
    let o = o.with_timeout(Duration::from_millis(300));
    let t = Instant::now();
    let e = RemoteSource::open(&url, &o).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::Remote, "{e}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn reads_work_from_inside_another_runtime() {
    let Some(http) = servers::http() else { return };
    let url = http.put("rt/inside.tgm", &many_messages(2, 100));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let n = rt.block_on(async move {
        let f = open(&url);
        f.num_messages()
    });
    assert_eq!(n, 2);
}

#[test]
#[ignore = "16 Mi values; run by .ci/remote.sh"]
fn full_size_costs_against_the_access_log() {
    let Some(http) = servers::http() else { return };
    let values = 16 << 20;
    let file = message(
        &[(
            desc(
                Dtype::Float64,
                values,
                Some(PipelineBuilder::new().simple_packing(16).szip()),
            ),
            f64s(values, 1),
        )],
        &EncodeOptions::new(),
    );
    let name = "full/szip16mi.tgm";
    let url = http.put(name, &file);
    let f = open(&url);
    let ranges = [(values as u64 / 2, values as u64 / 100)];
    let before = f.source().stats();
    let mark = http.log_mark();
    f.decode_range(0, 0, &ranges, &DecodeOptions::default())
        .unwrap();
    let s = f.source().stats();
    let (req, bytes) = (s.requests - before.requests, s.bytes - before.bytes);
    assert_eq!(http.logged(mark, name), (req, bytes));
    println!(
        "decode_range 1 % of 16 Mi szip values: {req} requests, {bytes} bytes of {}",
        file.len()
    );
    assert!(req == 2 && bytes * 40 < file.len() as u64);
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn a_small_file_costs_one_get_to_open_and_close_ranges_one_get() {
    let Some(http) = servers::http() else { return };
    let name = "counts/one.tgm";
    let url = http.put(name, &many_messages(1, 2048));
    let mark = http.log_mark();
    let f = open(&url);
    assert_eq!(f.num_messages(), 1);
    assert!(f.is_indexed(0));
    // The first GET holds the preamble and the index; the tail is read
    // looking for a catalogue (`spec/files.md` §9.3); the hop reads the
    // end magic.
    assert_eq!(f.source().stats().requests, 3);
    assert_eq!(http.logged(mark, name).0, 3);
    let src = f.source();
    let before = src.stats().requests;
    let got = tgm::file::ByteSource::read_ranges(src, &[100..200, 0..10, 5000..5010]).unwrap();
    assert_eq!(
        got.iter().map(|b| b.len()).collect::<Vec<_>>(),
        vec![100, 10, 10]
    );
    assert_eq!(
        src.stats().requests - before,
        1,
        "under the 64 KiB gap: one GET"
    );
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn local_and_remote_files_behind_one_type() {
    let Some(http) = servers::http() else { return };
    let bytes = many_messages(3, 100);
    let url = http.put("boxed/x.tgm", &bytes);
    let sources: Vec<Box<dyn tgm::file::ByteSource>> = vec![
        Box::new(Bytes::from(bytes.clone())),
        Box::new(RemoteSource::open(&url, &RemoteOptions::default()).unwrap()),
    ];
    let files: Vec<TgmFile<Box<dyn tgm::file::ByteSource>>> = sources
        .into_iter()
        .map(|s| TgmFile::from_source(s, &Limits::default()).unwrap())
        .collect();
    assert_eq!(summary(&files[0]), summary(&files[1]));
}

/// A server of `file` answering ranged GETs with 206 and HEADs with 200,
/// without an ETag; counts the HEADs and GETs it answers.
fn etagless_server(file: Vec<u8>) -> (String, std::sync::Arc<[std::sync::atomic::AtomicU64; 2]>) {
    use std::sync::atomic::{AtomicU64, Ordering};
    let counts = std::sync::Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let c = counts.clone();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap_or(0);
            let req = String::from_utf8_lossy(&buf[..n]).to_lowercase();
            let len = file.len();
            let reply = if req.starts_with("head ") {
                c[0].fetch_add(1, Ordering::Relaxed);
                format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n")
                    .into_bytes()
            } else {
                c[1].fetch_add(1, Ordering::Relaxed);
                let range = req
                    .lines()
                    .find_map(|l| l.strip_prefix("range: bytes="))
                    .and_then(|r| r.trim().split_once('-'))
                    .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)));
                let Some((a, b)) = range else { continue };
                let b = b.min(len - 1);
                let mut r = format!(
                    "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {a}-{b}/{len}\r\nConnection: close\r\n\r\n",
                    b + 1 - a
                )
                .into_bytes();
                r.extend_from_slice(&file[a..=b]);
                r
            };
            let _ = s.write_all(&reply);
        }
    });
    (format!("http://127.0.0.1:{port}/x.tgm"), counts)
}

#[test]
fn a_server_without_etags_is_read_after_one_head() {
    use std::sync::atomic::Ordering;
    let all = many_messages(3, 300);
    let (url, counts) = etagless_server(all.clone());
    let src = RemoteSource::open(&url, &RemoteOptions::default()).unwrap();
    assert_eq!(src.as_async().etag(), None);
    assert_eq!(src.as_async().len(), all.len() as u64);
    let heads_gets = || {
        (
            counts[0].load(Ordering::Relaxed),
            counts[1].load(Ordering::Relaxed),
        )
    };
    assert_eq!(heads_gets(), (1, 1), "the first GET had no ETag: one HEAD");
    let f = TgmFile::from_source(src, &Limits::default()).unwrap();
    let local = TgmFile::from_source(Bytes::from(all), &Limits::default()).unwrap();
    assert_eq!(summary(&f), summary(&local));
    assert_eq!(heads_gets().0, 1, "never another HEAD");
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn an_empty_object_opens_through_a_head() {
    let Some(http) = servers::http() else { return };
    let name = "faults/empty.tgm";
    let url = http.put(name, &[]);
    let mark = http.log_mark();
    let src = RemoteSource::open(&url, &RemoteOptions::default()).unwrap();
    assert_eq!(src.as_async().len(), 0);
    let methods: Vec<String> = http
        .requests_since(mark)
        .into_iter()
        .filter(|r| r.is_for(name))
        .map(|r| format!("{} {}", r.method, r.status))
        .collect();
    // No byte range of an empty object exists: nginx answers the ranged
    // GET with a 200 (other servers with a 416), and the HEAD decides.
    assert_eq!(methods.len(), 2, "{methods:?}");
    assert!(
        methods[0].starts_with("GET ") && methods[0] != "GET 206",
        "{methods:?}"
    );
    assert_eq!(methods[1], "HEAD 200");
    let f = TgmFile::from_source(src, &Limits::default()).unwrap();
    assert_eq!(f.num_messages(), 0);
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn a_cut_last_message_over_http_is_the_damage_a_local_file_reports() {
    let Some(http) = servers::http() else { return };
    let mut bytes = many_messages(20, 512);
    let whole = bytes.len();
    let last = many_messages(1, 4096);
    bytes.extend_from_slice(&last[..last.len() / 2]);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cut.tgm");
    std::fs::write(&p, &bytes).unwrap();
    let local = tgm::TgmFile::open(&p).unwrap();
    let want = local.check_intact().unwrap_err();
    assert_eq!(want.kind(), &ErrorKind::Truncated);
    assert_eq!(want.offset(), Some(whole as u64));

    let url = http.put("damage/cut.tgm", &bytes);
    for readahead in [0, 1 << 16] {
        let opts = RemoteOptions::default().with_readahead(readahead);
        let src = RemoteSource::open(&url, &opts).unwrap();
        let f = TgmFile::from_source(src, &Limits::default()).unwrap();
        assert_eq!(f.num_messages(), 20);
        assert_eq!(f.damage(), local.damage(), "readahead {readahead}");
        let got = f.check_intact().unwrap_err();
        assert_eq!(got.to_string(), want.to_string(), "readahead {readahead}");
        let obj = f.decode_object(19, 2, &DecodeOptions::default()).unwrap();
        assert_eq!(
            obj.data,
            local
                .decode_object(19, 2, &DecodeOptions::default())
                .unwrap()
                .data
        );
    }
}

/// The reference 0.24.0's remote reader takes a catalogued file whole over
/// HTTP: it counts the catalogue as one more message, reads its metadata
/// and (no) descriptors through its footer index, and decodes every data
/// object as tgm does (`spec/files.md` §9.1).
#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn the_reference_reads_every_message_of_a_catalogued_file_over_http() {
    let Some(http) = servers::http() else { return };
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("catalogued.tgm");
    std::fs::write(&p, many_messages(12, 256)).unwrap();
    tgm::file::catalogue::end_with_catalogue(&p, &Limits::default())
        .unwrap()
        .expect("complete messages get a catalogue");
    let url = http.put("catalogued/reference.tgm", &std::fs::read(&p).unwrap());
    let ours = open(&url);
    assert!(
        ours.catalogue().is_some(),
        "tgm opens it from its catalogue"
    );
    let theirs = tensogram::TensogramFile::open_remote(&url, &Default::default(), None).unwrap();
    let n = theirs.message_count().unwrap();
    assert_eq!(
        n,
        ours.num_messages() + 1,
        "the catalogue is one more message"
    );
    for m in 0..n {
        let meta = theirs.decode_metadata(m).unwrap();
        let (_, descs) = theirs.decode_descriptors(m).unwrap();
        if m == n - 1 {
            assert!(descs.is_empty() && meta.base.is_empty(), "the catalogue");
            assert!(meta.extra.contains_key("_tgm_catalogue_"));
            continue;
        }
        assert_eq!(
            descs.len(),
            ours.descriptors(m).unwrap().len(),
            "message {m}"
        );
        for (o, _) in descs.iter().enumerate() {
            let (_, _, data) = theirs.decode_object(m, o, &Default::default()).unwrap();
            let want = ours.decode_object(m, o, &DecodeOptions::default()).unwrap();
            assert_eq!(data, want.data, "message {m} object {o}");
        }
    }
}
