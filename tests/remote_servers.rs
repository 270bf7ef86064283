//! Self-tests of the loopback server harness (`tests/common/servers.rs`):
//! the behaviours the remote-archive tests rely on, checked against the real
//! servers with a minimal HTTP client. Each test skips with a printed
//! message when its server is not installed.

#[path = "common/servers.rs"]
mod servers;

use servers::raw_get;

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn payload(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn nginx_serves_ranges_and_logs_them() {
    let Some(http) = servers::http() else { return };
    let body = payload(10_000, 1);
    let url = http.put("selftest/ranges.bin", &body);
    assert_eq!(url, format!("{}/selftest/ranges.bin", http.base_url));

    let mark = http.log_mark();
    let (status, headers, got) = raw_get(&url, &[("Range", "bytes=100-199")]);
    assert_eq!(status, 206);
    assert_eq!(got, &body[100..200]);
    assert_eq!(
        header(&headers, "content-range"),
        Some("bytes 100-199/10000")
    );
    let (status, _, got) = raw_get(&url, &[]);
    assert_eq!(status, 200);
    assert_eq!(got, body);

    let log: Vec<_> = http
        .requests_since(mark)
        .into_iter()
        .filter(|r| r.is_for("selftest/ranges.bin"))
        .collect();
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[0].method, "GET");
    assert_eq!(log[0].path, "/selftest/ranges.bin");
    assert_eq!(log[0].status, 206);
    assert_eq!(log[0].body_bytes, 100);
    assert_eq!(log[0].range.as_deref(), Some("bytes=100-199"));
    assert_eq!(log[1].status, 200);
    assert_eq!(log[1].body_bytes, 10_000);
    assert_eq!(log[1].range, None);
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn nginx_if_match_rejects_a_changed_file() {
    let Some(http) = servers::http() else { return };
    let url = http.put("selftest/changing.bin", &payload(4096, 2));
    let (_, headers, _) = raw_get(&url, &[("Range", "bytes=0-15")]);
    let etag = header(&headers, "etag")
        .expect("nginx sends an ETag")
        .to_string();
    let (status, _, _) = raw_get(&url, &[("Range", "bytes=0-15"), ("If-Match", &etag)]);
    assert_eq!(status, 206);

    // A different length guarantees a different ETag even within one second.
    http.put("selftest/changing.bin", &payload(4097, 3));
    let mark = http.log_mark();
    let (status, _, _) = raw_get(&url, &[("Range", "bytes=0-15"), ("If-Match", &etag)]);
    assert_eq!(status, 412);
    let log = http.requests_since(mark);
    let r = log
        .iter()
        .find(|r| r.is_for("selftest/changing.bin"))
        .expect("logged");
    assert_eq!(r.if_match.as_deref(), Some(etag.as_str()));
    assert_eq!(r.status, 412);
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn nginx_fault_locations() {
    let Some(http) = servers::http() else { return };
    let body = payload(5000, 4);
    http.put("selftest/fault.bin", &body);

    let (status, _, got) = raw_get(
        &http.fault_url("norange", "selftest/fault.bin"),
        &[("Range", "bytes=10-19")],
    );
    assert_eq!(status, 200, "norange ignores Range");
    assert_eq!(got, body);

    let (status, _, _) = raw_get(&http.fault_url("forbidden", "selftest/fault.bin"), &[]);
    assert_eq!(status, 403);

    let flaky = http.fault_url("flaky503", "selftest/fault.bin");
    let (status, _, _) = raw_get(&flaky, &[("Range", "bytes=0-9")]);
    assert_eq!(status, 503, "first request of a path fails");
    let (status, _, got) = raw_get(&flaky, &[("Range", "bytes=0-9")]);
    assert_eq!(status, 206, "the retry is served");
    assert_eq!(got, &body[..10]);
    let (status, _, got) = raw_get(&flaky, &[]);
    assert_eq!(status, 200);
    assert_eq!(got, body);
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn nginx_missing_file_is_404() {
    let Some(http) = servers::http() else { return };
    let (status, _, _) = raw_get(&http.url("selftest/absent.bin"), &[]);
    assert_eq!(status, 404);
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn s3s_fs_serves_put_objects() {
    let Some(s3) = servers::s3() else { return };
    let body = payload(3000, 5);
    let url = s3.put("selftest/object.bin", &body);
    assert_eq!(url, format!("s3://{}/selftest/object.bin", s3.bucket));
    let env = s3.env();
    for key in [
        "AWS_ENDPOINT_URL",
        "AWS_ALLOW_HTTP",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_REGION",
    ] {
        assert!(env.iter().any(|(k, _)| *k == key), "env lacks {key}");
    }
    // Without a signature the server must refuse: proves authentication is
    // on and that the object's path is routed to the S3 API.
    let (status, _, _) = raw_get(
        &format!("{}/{}/selftest/object.bin", s3.endpoint, s3.bucket),
        &[],
    );
    assert_eq!(status, 403);
    assert_eq!(
        std::fs::read(s3.bucket_dir.join("selftest/object.bin")).unwrap(),
        body
    );
}
