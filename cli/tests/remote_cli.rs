//! The read commands on `http://` and `s3://` URLs, and the writing
//! commands with an `s3://` output, against real servers on loopback
//! (nginx and s3s-fs, started by `tests/common/servers.rs`): the same
//! output as on the local file, outputs that never replace an object
//! without `--force` nor appear half-written, and clear errors naming the
//! URL. The tests that need a server are ignored by a plain `cargo test`
//! and run by `.ci/remote.sh` with `--include-ignored`.
#![cfg(feature = "remote")]
// `common` and `servers` both carry tests/common/skip.rs, the one skip rule.
#![allow(clippy::duplicate_mod)]

mod common;
#[path = "doc/examples.rs"]
mod doc_examples;
#[path = "../../tests/common/servers.rs"]
mod servers;

#[path = "../../tests/common/fault_proxy.rs"]
mod fault_proxy;

use std::collections::BTreeMap;
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tgm::npy::{npy_layout, write_npy};
use tgm::{ByteOrder, Dtype};

/// Exit status, stdout and stderr of one `tgm` run.
struct Run {
    ok: bool,
    code: Option<i32>,
    out: String,
    err: String,
}

fn tgm_env(args: &[&str], env: &[(&'static str, String)]) -> Run {
    tgm_in(Path::new("."), args, env)
}

/// Runs `tgm args` with working directory `cwd` and extra environment.
fn tgm_in(cwd: &Path, args: &[&str], env: &[(&'static str, String)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tgm"));
    cmd.current_dir(cwd).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    // The tests choose the remote options they rely on.
    for k in [
        "TGM_REMOTE_TIMEOUT",
        "TGM_REMOTE_RETRIES",
        "TGM_REMOTE_COALESCE_GAP",
        "TGM_REMOTE_READAHEAD",
    ] {
        if !env.iter().any(|(e, _)| *e == k) {
            cmd.env_remove(k);
        }
    }
    let out = cmd.output().unwrap();
    Run {
        ok: out.status.success(),
        code: out.status.code(),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn tgm(args: &[&str]) -> Run {
    tgm_env(args, &[])
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn npy(path: &Path, dtype: Dtype, shape: &[u64], data: &[u8]) {
    std::fs::write(
        path,
        write_npy(&npy_layout(dtype, shape, ByteOrder::Little), data),
    )
    .unwrap();
}

fn f64_bytes(values: impl Iterator<Item = f64>) -> Vec<u8> {
    values.flat_map(f64::to_le_bytes).collect()
}

/// A three-message archive with plain, simple_packing+szip and zstd objects
/// and MARS-style metadata, made with `tgm import`; its bytes and a
/// directory that outlives the tests.
fn archive() -> &'static (PathBuf, Vec<u8>) {
    static ARCHIVE: OnceLock<(PathBuf, Vec<u8>)> = OnceLock::new();
    ARCHIVE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        let a = dir.join("a.npy");
        let b = dir.join("b.npy");
        npy(
            &a,
            Dtype::Float64,
            &[50, 40],
            &f64_bytes((0..2000).map(|i| 273.0 + i as f64 * 0.01)),
        );
        npy(
            &b,
            Dtype::Float64,
            &[1000],
            &f64_bytes((0..1000).map(|i| (i % 37) as f64 * 0.5)),
        );
        let x = dir.join("x.tgm");
        for args in [
            vec!["import", s(&a), "-o", s(&x), "--meta", "mars.param=2t"],
            vec![
                "import",
                s(&b),
                "-o",
                s(&x),
                "--append",
                "--encoding",
                "simple_packing",
                "--bits",
                "16",
                "--compression",
                "szip",
                "--meta",
                "mars.param=10u",
                "--meta",
                "step=6",
            ],
            vec![
                "import",
                s(&a),
                "-o",
                s(&x),
                "--append",
                "--compression",
                "zstd",
                "--meta",
                "mars.param=msl",
                "--meta",
                "step=12",
            ],
        ] {
            let r = tgm(&args);
            assert!(r.ok, "{}", r.err);
        }
        let bytes = std::fs::read(&x).unwrap();
        (x, bytes)
    })
}

/// Runs `args` (where `{}` stands for the input) on the local file and on
/// `url`, and checks both succeed with the same stdout once the input's name
/// is replaced.
fn same_as_local(args: &[&str], url: &str, env: &[(&'static str, String)]) -> String {
    let (local, _) = archive();
    let with = |input: &str| -> Vec<String> {
        args.iter()
            .map(|a| a.replace("{}", input))
            .collect::<Vec<_>>()
    };
    let local_args = with(s(local));
    let url_args = with(url);
    let l = tgm(&local_args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(l.ok, "local {args:?}: {}", l.err);
    let r = tgm_env(
        &url_args.iter().map(String::as_str).collect::<Vec<_>>(),
        env,
    );
    assert!(r.ok, "{url} {args:?}: {}", r.err);
    assert_eq!(
        r.out.replace(url, s(local)),
        l.out,
        "{args:?} on {url} differs from the local file"
    );
    r.out
}

const READ_COMMANDS: &[&[&str]] = &[
    &["info", "{}"],
    &["ls", "{}"],
    &["ls", "-j", "{}"],
    &["ls", "-w", "mars.param=10u", "-p", "mars.param,step", "{}"],
    &["dump", "{}"],
    &["dump", "-j", "{}"],
    &["get", "-p", "mars.param", "{}"],
    &["validate", "{}"],
    &["validate", "--full", "{}"],
    &["stats", "{}"],
    &["stats", "-j", "-w", "mars.param=10u", "{}"],
];

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn read_commands_over_http_match_the_local_file() {
    let Some(http) = servers::http() else { return };
    let (_, bytes) = archive();
    let url = http.put("cli/read.tgm", bytes);
    for args in READ_COMMANDS {
        same_as_local(args, &url, &[]);
    }
    let out = same_as_local(&["ls", "{}"], &url, &[]);
    assert_eq!(out.lines().count(), 4, "{out}");
    assert!(
        out.contains(&format!(
            "{url}\t1\t0\tb\t10u\tfloat64\t[1000]\tsimple_packing+szip"
        )),
        "{out}"
    );
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn read_commands_over_s3_match_the_local_file() {
    let Some(s3) = servers::s3() else { return };
    let (_, bytes) = archive();
    let url = s3.put("cli/read.tgm", bytes);
    for args in READ_COMMANDS {
        same_as_local(args, &url, &s3.env());
    }
}

/// Every file below `dir`, by relative path.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

fn export_tree(input: &str, env: &[(&'static str, String)]) -> BTreeMap<PathBuf, Vec<u8>> {
    let out = tempfile::tempdir().unwrap();
    let dest = out.path().join("e");
    let r = tgm_env(&["export", input, "-o", s(&dest)], env);
    assert!(r.ok, "export {input}: {}", r.err);
    tree(&dest)
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn export_and_copy_from_urls_write_the_same_files() {
    let (local, bytes) = archive();
    let expected = export_tree(s(local), &[]);
    assert_eq!(expected.len(), 6, "{:?}", expected.keys());
    let mut urls = Vec::new();
    if let Some(http) = servers::http() {
        urls.push((http.put("cli/export.tgm", bytes), Vec::new()));
    }
    if let Some(s3) = servers::s3() {
        urls.push((s3.put("cli/export.tgm", bytes), s3.env()));
    }
    for (url, env) in &urls {
        assert!(export_tree(url, env) == expected, "export of {url} differs");

        let dir = tempfile::tempdir().unwrap();
        let copied = dir.path().join("c.tgm");
        let r = tgm_env(&["copy", "-w", "mars.param=10u/msl", url, s(&copied)], env);
        assert!(r.ok, "copy {url}: {}", r.err);
        let from_local = dir.path().join("l.tgm");
        let r = tgm(&["copy", "-w", "mars.param=10u/msl", s(local), s(&from_local)]);
        assert!(r.ok, "{}", r.err);
        assert_eq!(
            std::fs::read(&copied).unwrap(),
            std::fs::read(&from_local).unwrap()
        );
        assert_eq!(tgm(&["ls", s(&copied)]).out.lines().count(), 3);

        let split_dir = dir.path().join("split");
        std::fs::create_dir(&split_dir).unwrap();
        let pattern = split_dir.join("o[index].tgm");
        let r = tgm_env(&["split", url, "-o", s(&pattern)], env);
        assert!(r.ok, "split {url}: {}", r.err);
        assert_eq!(tree(&split_dir).len(), 3, "split {url}");

        let merged = dir.path().join("m.tgm");
        let r = tgm_env(&["merge", url, "-o", s(&merged)], env);
        assert!(r.ok, "merge {url}: {}", r.err);
        assert!(tgm(&["ls", s(&merged)]).ok);
    }
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn ls_over_http_reads_headers_not_payloads() {
    let Some(http) = servers::http() else { return };
    let dir = tempfile::tempdir().unwrap();
    // 1 MiB of float64 per message.
    let x = appended_archive(dir.path(), "big", 131_072, 3);
    let bytes = std::fs::read(&x).unwrap();
    let log = ls_requests(http, &["ls", "-j", "{}"], &x, "cli/big.tgm");
    let transferred: u64 = log.iter().map(|r| r.body_bytes).sum();
    assert!(
        transferred < bytes.len() as u64 / 100,
        "ls transferred {transferred} of {} bytes in {} requests: {log:?}",
        bytes.len(),
        log.len()
    );
}

/// Issue 25 item 5: `ls --readahead 0` of an archive of 200 messages
/// built by `import --append` (footer-indexed) reads each message's
/// postamble and footer frames only: after the opening GET, at most 2
/// requests per message, and under 5 % of the file (`spec/remote.md` §3).
/// With the default readahead, the scan from both ends reads these small
/// messages whole, once, in few requests (§3.1).
#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn ls_of_an_appended_archive_reads_footers_in_at_most_two_requests_per_message() {
    let Some(http) = servers::http() else { return };
    let dir = tempfile::tempdir().unwrap();
    const N: usize = 200;
    // 1,300 float64 per message from `s.npy`, as in the README's
    // measurement (the file name is part of each message's metadata).
    let x = appended_archive(dir.path(), "s", 1300, N);
    let bytes = std::fs::read(&x).unwrap();
    let log = ls_requests(http, &["ls", "{}"], &x, "cli/s.tgm");
    let moved: u64 = log.iter().map(|r| r.body_bytes).sum();
    assert!(log.len() <= 20, "{} requests", log.len());
    assert!(moved <= bytes.len() as u64, "{moved} bytes");
    let log = ls_requests(http, &["ls", "{}", "--readahead", "0"], &x, "cli/s.tgm");
    let moved: u64 = log.iter().map(|r| r.body_bytes).sum();
    println!(
        "ls {N} appended messages ({} bytes): {} requests, {moved} bytes ({:.2} %)",
        bytes.len(),
        log.len(),
        moved as f64 * 100.0 / bytes.len() as f64
    );
    // The first GET of the head window, then per message one hop at open
    // and one read of its end.
    assert!(log.len() <= 2 * N + 1, "{} requests", log.len());
    assert!(
        moved * 20 < bytes.len() as u64,
        "ls moved {moved} of {} bytes",
        bytes.len()
    );
}

/// Issue 41: `ls` of a catalogued archive of 10,080 fields (the shape of
/// the ERA5 sample split into one field per message) reads the catalogue
/// from the tail: at most 5 requests and under 2 % of the file, printing
/// what `ls` prints of the same messages without a catalogue, with and
/// without selection on MARS keys (`spec/files.md` §9.3).
#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn ls_of_a_catalogued_archive_reads_its_tail_only() {
    let Some(http) = servers::http() else { return };
    let dir = tempfile::tempdir().unwrap();
    const N: usize = 10_080;
    let plain_path = dir.path().join("plain.tgm");
    let mut plain = Vec::new();
    for m in 0..N {
        let mut mars = tgm::Map::new();
        mars.insert("param".into(), ["2t", "msl", "10u", "10v"][m % 4].into());
        mars.insert("step".into(), tgm::cbor::Value::Uint((m / 4) as u64));
        let mut entry = tgm::Map::new();
        entry.insert("mars".into(), tgm::cbor::Value::text_map(mars));
        let meta = tgm::GlobalMetadata::with_base(vec![entry]);
        let d = tgm::ObjectDescriptor::new(Dtype::Float32, vec![2_000])
            .with_byte_order(ByteOrder::native());
        let x: Vec<u8> = (0..2_000u32)
            .flat_map(|k| ((m as u32 * 3 + k) as f32).to_ne_bytes())
            .collect();
        let opts = tgm::EncodeOptions::new();
        plain.extend(tgm::encode(&meta, &[(&d, &x[..])], &opts).unwrap());
    }
    std::fs::write(&plain_path, &plain).unwrap();
    let cat = dir.path().join("cat.tgm");
    let r = tgm(&["copy", s(&plain_path), s(&cat)]);
    assert!(r.ok, "{}", r.err);
    let bytes = std::fs::read(&cat).unwrap();
    assert!(
        bytes.len() > plain.len(),
        "copy ends the file with a catalogue"
    );
    assert_eq!(&bytes[..plain.len()], &plain[..]);
    // Every request waits 5 ms, as in an object store of the same region.
    let proxy = fault_proxy::FaultProxy::start(&http.base_url);
    proxy.fault(
        "GET",
        "cli/cat.tgm",
        fault_proxy::Fault::Delay(Duration::from_millis(5)),
        usize::MAX,
    );
    for args in [
        &["ls", "{}"][..],
        &["ls", "-p", "mars.param,mars.step", "{}"],
        &["ls", "-w", "mars.param=2t", "{}"],
    ] {
        let url = http.put("cli/cat.tgm", &bytes);
        let slow = url.replace(&http.base_url, &proxy.endpoint);
        let mark = http.log_mark();
        let with =
            |input: &str| -> Vec<String> { args.iter().map(|a| a.replace("{}", input)).collect() };
        let started = Instant::now();
        let remote = tgm(&with(&slow).iter().map(String::as_str).collect::<Vec<_>>());
        let took = started.elapsed();
        let log: Vec<_> = http
            .requests_since(mark)
            .into_iter()
            .filter(|r| r.is_for("cli/cat.tgm"))
            .collect();
        let local = tgm(&with(s(&plain_path))
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>());
        assert!(remote.ok && local.ok, "{}{}", remote.err, local.err);
        assert_eq!(
            remote.out.replace(&slow, s(&plain_path)),
            local.out,
            "{args:?}"
        );
        let moved: u64 = log.iter().map(|r| r.body_bytes).sum();
        println!(
            "{args:?} behind 5 ms a request: {} requests, {moved} of {} bytes ({:.2} %), {:.2} s",
            log.len(),
            bytes.len(),
            moved as f64 * 100.0 / bytes.len() as f64,
            took.as_secs_f64()
        );
        assert!(log.len() <= 5, "{args:?}: {} requests: {log:?}", log.len());
        assert!(
            moved * 50 < bytes.len() as u64,
            "{args:?}: moved {moved} bytes"
        );
    }
}

/// `NAME.tgm` in `dir`: `count` messages of `elems` float64 each, the
/// first by `import`, the others by `import --append` (footer-indexed).
fn appended_archive(dir: &Path, name: &str, elems: usize, count: usize) -> PathBuf {
    let npy_in = dir.join(format!("{name}.npy"));
    npy(
        &npy_in,
        Dtype::Float64,
        &[elems as u64],
        &f64_bytes((0..elems).map(|i| i as f64 * 0.5)),
    );
    let x = dir.join(format!("{name}.tgm"));
    for i in 0..count {
        let mut args = vec!["import", s(&npy_in), "-o", s(&x)];
        if i > 0 {
            args.push("--append");
        }
        let r = tgm(&args);
        assert!(r.ok, "{}", r.err);
    }
    x
}

/// Serves `local` as `name`, runs `args` on it and on its URL, checks
/// they print the same, and returns the requests the URL run sent.
fn ls_requests(
    http: &servers::Http,
    args: &[&str],
    local: &Path,
    name: &str,
) -> Vec<servers::Request> {
    let url = http.put(name, &std::fs::read(local).unwrap());
    let mark = http.log_mark();
    same_as_local_file(args, local, &url);
    http.requests_since(mark)
        .into_iter()
        .filter(|r| r.is_for(name))
        .collect()
}

/// [`same_as_local`] for an arbitrary local file.
fn same_as_local_file(args: &[&str], local: &Path, url: &str) {
    let with =
        |input: &str| -> Vec<String> { args.iter().map(|a| a.replace("{}", input)).collect() };
    let l = with(s(local));
    let u = with(url);
    let l = tgm(&l.iter().map(String::as_str).collect::<Vec<_>>());
    let r = tgm(&u.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(l.ok && r.ok, "{}{}", l.err, r.err);
    assert_eq!(r.out.replace(url, s(local)), l.out);
}

fn failure(args: &[&str], env: &[(&'static str, String)]) -> Run {
    let r = tgm_env(args, env);
    assert!(!r.ok, "{args:?} succeeded: {}", r.out);
    assert!(r.err.starts_with("error:"), "{args:?}: {}", r.err);
    assert!(!r.err.contains("panicked"), "{args:?}: {}", r.err);
    r
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn http_errors_name_the_url_and_the_cause() {
    let Some(http) = servers::http() else { return };
    let (_, bytes) = archive();
    http.put("cli/errors.tgm", bytes);

    let missing = http.url("cli/absent.tgm");
    let r = failure(&["ls", &missing], &[]);
    assert!(r.err.contains(&missing), "{}", r.err);
    assert!(
        r.err.contains("404") || r.err.to_lowercase().contains("not found"),
        "{}",
        r.err
    );

    let forbidden = http.fault_url("forbidden", "cli/errors.tgm");
    let r = failure(&["dump", &forbidden], &[]);
    assert!(r.err.contains(&forbidden), "{}", r.err);
    assert!(
        r.err.contains("403") || r.err.to_lowercase().contains("forbidden"),
        "{}",
        r.err
    );

    let junk = http.put("cli/junk.tgm", b"this is not a tensogram file at all");
    let r = failure(&["ls", &junk], &[]);
    assert!(r.err.contains(&junk), "{}", r.err);
    assert!(r.err.contains("not a Tensogram file"), "{}", r.err);
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn s3_missing_object_names_the_url() {
    let Some(s3) = servers::s3() else { return };
    let missing = s3.url("cli/absent.tgm");
    let r = failure(&["info", &missing], &s3.env());
    assert!(r.err.contains(&missing), "{}", r.err);
    assert!(
        r.err.contains("404") || r.err.to_lowercase().contains("not found"),
        "{}",
        r.err
    );
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn a_5xx_is_retried() {
    let Some(http) = servers::http() else { return };
    let (_, bytes) = archive();
    http.put("cli/flaky-ls.tgm", bytes);
    let url = http.fault_url("flaky503", "cli/flaky-ls.tgm");
    same_as_local(&["ls", "{}"], &url, &[]);
    let r = failure(
        &["ls", &http.fault_url("flaky503", "cli/flaky-noretry.tgm")],
        &[("TGM_REMOTE_RETRIES", "0".to_string())],
    );
    assert!(r.err.contains("503"), "{}", r.err);
}

#[test]
fn a_server_that_never_answers_times_out() {
    // A listener that accepts connections and never replies: only the
    // timeout can end the read.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().take(16) {
            let Ok(mut c) = conn else { break };
            let mut buf = [0u8; 1024];
            let _ = c.set_read_timeout(Some(Duration::from_millis(100)));
            let _ = c.read(&mut buf);
            held.push(c);
        }
    });
    let url = format!("http://127.0.0.1:{port}/silent.tgm");
    let start = Instant::now();
    let r = failure(
        &["ls", &url],
        &[
            ("TGM_REMOTE_TIMEOUT", "1".to_string()),
            ("TGM_REMOTE_RETRIES", "0".to_string()),
        ],
    );
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    assert!(r.err.contains(&url), "{}", r.err);
    assert!(
        r.err.to_lowercase().contains("timed out") || r.err.to_lowercase().contains("timeout"),
        "{}",
        r.err
    );
}

/// The writing commands, `{i}` the input archive, `{o}` the output.
const WRITE_COMMANDS: &[&[&str]] = &[
    &["copy", "{i}", "{o}"],
    &["copy", "-w", "mars.param=10u/msl", "{i}", "{o}"],
    &["merge", "{i}", "-o", "{o}"],
    &["set", "-s", "step=1", "{i}", "{o}"],
    &["reshuffle", "{i}", "-o", "{o}"],
    &["recompress", "{i}", "{o}", "--compression", "lz4"],
    &["import", "{npy}", "-o", "{o}", "--meta", "mars.param=2t"],
];

fn fill(args: &[&str], input: &str, output: &str) -> Vec<String> {
    let (local, _) = archive();
    let npy = local.parent().unwrap().join("a.npy");
    args.iter()
        .map(|a| {
            a.replace("{i}", input)
                .replace("{o}", output)
                .replace("{npy}", s(&npy))
        })
        .collect()
}

fn run_filled(args: &[String], env: &[(&'static str, String)]) -> Run {
    tgm_env(&args.iter().map(String::as_str).collect::<Vec<_>>(), env)
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn writes_to_s3_list_as_the_local_outputs() {
    let Some(s3) = servers::s3() else { return };
    let (local, _) = archive();
    let dir = tempfile::tempdir().unwrap();
    for (n, args) in WRITE_COMMANDS.iter().enumerate() {
        let out = dir.path().join(format!("{n}.tgm"));
        let r = run_filled(&fill(args, s(local), s(&out)), &[]);
        assert!(r.ok, "local {args:?}: {}", r.err);
        let url = s3.url(&format!("cli/write/{n}.tgm"));
        let mut remote = fill(args, s(local), &url);
        remote.push("-j".into());
        let r = run_filled(&remote, &s3.env());
        assert!(r.ok, "{args:?} -> {url}: {}", r.err);
        assert!(
            r.err.contains(&format!("uploaded {url}: ")) && r.err.contains("ETag"),
            "{args:?}: {}",
            r.err
        );
        // `-j`: stdout is the report alone, naming the object as stored.
        let doc: serde_json::Value = serde_json::from_str(r.out.trim())
            .unwrap_or_else(|e| panic!("{args:?}: -j printed {:?}: {e}", r.out));
        let outputs = doc["outputs"].as_array().expect("outputs");
        assert_eq!(outputs.len(), 1, "{args:?}: {doc}");
        assert_eq!(outputs[0]["target"], url.as_str());
        let stored = std::fs::read(s3.bucket_dir.join(format!("cli/write/{n}.tgm"))).unwrap();
        assert_eq!(outputs[0]["bytes"], stored.len() as u64, "{args:?}");
        let etag = outputs[0]["etag"].as_str().expect("an ETag");
        assert!(
            r.err.contains(&format!("ETag {etag}")),
            "{args:?}: {}",
            r.err
        );
        let want = tgm(&["ls", s(&out)]);
        let got = tgm_env(&["ls", &url], &s3.env());
        assert!(got.ok, "ls {url}: {}", got.err);
        assert_eq!(got.out.replace(&url, s(&out)), want.out, "{args:?}");
        let v = tgm_env(&["validate", "--full", &url], &s3.env());
        assert!(v.ok, "validate {url}: {}{}", v.out, v.err);
    }
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn split_and_export_write_many_objects_to_s3() {
    let Some(s3) = servers::s3() else { return };
    let (local, _) = archive();
    let prefix = s3.url("cli/export");
    let r = tgm_env(&["export", s(local), "-o", &prefix], &s3.env());
    assert!(r.ok, "export -> {prefix}: {}", r.err);
    assert!(
        tree(&s3.bucket_dir.join("cli/export")) == export_tree(s(local), &[]),
        "export to {prefix} differs from the local export"
    );
    let pattern = s3.url("cli/split/o[index].tgm");
    let r = tgm_env(&["split", s(local), "-o", &pattern], &s3.env());
    assert!(r.ok, "split -> {pattern}: {}", r.err);
    assert_eq!(tree(&s3.bucket_dir.join("cli/split")).len(), 3);
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn an_existing_object_is_kept_without_force() {
    let Some(s3) = servers::s3() else { return };
    let (local, bytes) = archive();
    let url = s3.put("cli/kept.tgm", b"not replaced");
    for args in WRITE_COMMANDS {
        let r = run_filled(&fill(args, s(local), &url), &s3.env());
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.err);
        assert!(
            r.err
                .contains(&format!("{url}: already exists (use --force")),
            "{args:?}: {}",
            r.err
        );
        assert_eq!(
            std::fs::read(s3.bucket_dir.join("cli/kept.tgm")).unwrap(),
            b"not replaced"
        );
    }
    let r = tgm_env(&["copy", "--force", s(local), &url], &s3.env());
    assert!(r.ok, "{}", r.err);
    assert_eq!(
        &std::fs::read(s3.bucket_dir.join("cli/kept.tgm")).unwrap(),
        bytes
    );
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn an_output_that_is_an_input_is_refused() {
    let Some(s3) = servers::s3() else { return };
    let (_, bytes) = archive();
    let url = s3.put("cli/same.tgm", bytes);
    let shouted = url.replacen("s3://", "S3://", 1);
    for args in [
        vec!["copy", "--force", &url, &url],
        vec!["merge", "--force", &url, "-o", &shouted],
    ] {
        let r = tgm_env(&args, &s3.env());
        assert!(!r.ok, "{args:?}");
        assert!(
            r.err.contains("the output is also an input"),
            "{args:?}: {}",
            r.err
        );
    }
    assert_eq!(
        &std::fs::read(s3.bucket_dir.join("cli/same.tgm")).unwrap(),
        bytes
    );
}

#[test]
fn appending_to_a_url_without_force_is_refused_with_the_reason() {
    let (local, _) = archive();
    let npy = local.parent().unwrap().join("a.npy");
    for url in ["s3://bucket/x.tgm", "http://127.0.0.1:9/dav/x.tgm"] {
        let r = tgm(&["import", s(&npy), "-o", url, "--append"]);
        assert_eq!(r.code, Some(2), "{}", r.err);
        assert!(
            r.err
                .contains(&format!("{url}: object stores cannot append to an object"))
                && r.err.contains("with --force"),
            "{}",
            r.err
        );
    }
    let r = tgm(&["import", s(&npy), "-o", s(local), "--append", "--force"]);
    assert_eq!(r.code, Some(2), "{}", r.err);
    assert!(
        r.err.contains("a local file is appended to in place"),
        "{}",
        r.err
    );
}

/// `--append --force` to an object: a new object holding the old messages,
/// the new one and one catalogue replaces the old whole; `-j` reports its
/// ETag, the one the store gives on a `HEAD`.
#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn appending_to_an_object_under_force_rewrites_it_whole() {
    let Some(s3) = servers::s3() else { return };
    let (local, bytes) = archive();
    let npy = local.parent().unwrap().join("a.npy");
    let url = s3.put("cli/append/a.tgm", bytes);
    let before = tgm_env(&["ls", &url], &s3.env());
    assert!(before.ok, "{}", before.err);
    let r = tgm_env(
        &["import", s(&npy), "-o", &url, "--append", "--force", "-j"],
        &s3.env(),
    );
    assert!(r.ok, "{}", r.err);
    assert!(r.err.contains("an object store cannot append"), "{}", r.err);
    let doc: serde_json::Value = serde_json::from_str(r.out.trim()).unwrap();
    let out = &doc["outputs"][0];
    assert_eq!(out["target"], url.as_str());
    let stored = std::fs::read(s3.bucket_dir.join("cli/append/a.tgm")).unwrap();
    assert_eq!(out["bytes"], stored.len() as u64);
    let etag = out["etag"].as_str().expect("an ETag");
    assert!(!etag.is_empty());
    // The same as appending to a local copy: the old messages, the new one.
    let copy = s3.bucket_dir.parent().unwrap().join("append-local.tgm");
    std::fs::write(&copy, bytes).unwrap();
    let r = tgm(&["import", s(&npy), "-o", s(&copy), "--append"]);
    assert!(r.ok, "{}", r.err);
    let want = tgm(&["ls", s(&copy)]);
    let got = tgm_env(&["ls", &url], &s3.env());
    assert!(got.ok, "{}", got.err);
    assert_eq!(got.out.replace(&url, s(&copy)), want.out);
    assert_eq!(got.out.lines().count(), before.out.lines().count() + 1);
    // The old catalogue is left out and a new one ends the object: it
    // opens from its tail.
    let f = tgm::TgmFile::open(s3.bucket_dir.join("cli/append/a.tgm")).unwrap();
    assert_eq!(f.num_messages(), 4);
    assert!(f.catalogue().is_some());
    // A damaged object is refused and kept.
    let bad = s3.put("cli/append/bad.tgm", &bytes[..bytes.len() - 5]);
    let r = tgm_env(
        &["import", s(&npy), "-o", &bad, "--append", "--force"],
        &s3.env(),
    );
    assert!(!r.ok);
    assert!(r.err.contains("refusing to append"), "{}", r.err);
    assert_eq!(
        std::fs::read(s3.bucket_dir.join("cli/append/bad.tgm")).unwrap(),
        &bytes[..bytes.len() - 5]
    );
    // A missing object is a new archive.
    let new = s3.url("cli/append/new.tgm");
    let r = tgm_env(
        &["import", s(&npy), "-o", &new, "--append", "--force"],
        &s3.env(),
    );
    assert!(r.ok, "{}", r.err);
    let one = s3.bucket_dir.parent().unwrap().join("append-one.tgm");
    assert!(tgm(&["import", s(&npy), "-o", s(&one), "--force"]).ok);
    assert_eq!(
        tgm_env(&["ls", &new], &s3.env()).out.replace(&new, s(&one)),
        tgm(&["ls", s(&one)]).out
    );
}

/// The parts s3s-fs holds for uploads not completed (`.upload_id-*` files
/// beside the buckets).
fn server_parts(s3: &servers::S3) -> Vec<PathBuf> {
    let data = s3.bucket_dir.parent().unwrap();
    let mut out: Vec<PathBuf> = std::fs::read_dir(data)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(".upload_id-"))
        })
        .collect();
    out.sort();
    out
}

/// `big.npy` in `dir`: 96 MiB that do not compress (twelve parts of 8 MiB).
fn big_npy(dir: &Path) -> PathBuf {
    let big = dir.join("big.npy");
    let mut x = 0x9e3779b97f4a7c15u64;
    let data: Vec<u8> = (0..12 << 20)
        .flat_map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()
        })
        .collect();
    npy(&big, Dtype::Uint64, &[(data.len() / 8) as u64], &data);
    big
}

/// `tgm import big -o url`, started and left running once the server
/// holds its multipart upload.
fn upload_under_way(s3: &servers::S3, big: &Path, url: &str) -> std::process::Child {
    let before = server_parts(s3);
    let mut child = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .args(["import", s(big), "-o", url])
        .envs(s3.env())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while server_parts(s3) == before {
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before a part was seen"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no part uploaded"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn killing_an_upload_leaves_no_object() {
    let Some(s3) = servers::s3() else { return };
    let dir = tempfile::tempdir().unwrap();
    let big = big_npy(dir.path());
    let url = s3.url("cli/killed.tgm");
    let mut child = upload_under_way(s3, &big, &url);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!s3.bucket_dir.join("cli/killed.tgm").exists());
    let r = tgm_env(&["info", &url], &s3.env());
    assert!(!r.ok && r.err.contains("not found"), "{}", r.err);
}

/// Issue 42 item 3: Ctrl-C (SIGINT) or SIGTERM in the middle of an upload
/// aborts it: exit status 128 + the signal, a message naming the URL,
/// nothing at the key and no part left on the server.
#[cfg(target_os = "linux")]
#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn a_signal_mid_upload_aborts_it() {
    let Some(s3) = servers::s3() else { return };
    let dir = tempfile::tempdir().unwrap();
    let big = big_npy(dir.path());
    for (sig, name) in [(libc::SIGINT, "int"), (libc::SIGTERM, "term")] {
        let key = format!("cli/signalled-{name}.tgm");
        let url = s3.url(&key);
        let before = server_parts(s3);
        let child = upload_under_way(s3, &big, &url);
        // SAFETY: a signal to the child this test started and still owns.
        assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(128 + sig), "{err}");
        assert!(err.contains(&url) && err.contains("interrupted"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!s3.bucket_dir.join(&key).exists());
        assert_eq!(server_parts(s3), before, "parts left after {name}");
    }
}

/// Ctrl-C while a local output is written (its input read slowly, through
/// a proxy that delays every GET) removes the temporary file.
#[cfg(target_os = "linux")]
#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn a_signal_mid_write_removes_the_local_temporary_file() {
    let Some(s3) = servers::s3() else { return };
    let (_, bytes) = archive();
    let url = s3.put("cli/slow-input.tgm", bytes);
    let proxy = fault_proxy::FaultProxy::start(&s3.endpoint);
    proxy.fault(
        "GET",
        "",
        fault_proxy::Fault::Delay(Duration::from_millis(300)),
        usize::MAX,
    );
    let mut env = s3.env();
    env.retain(|(k, _)| *k != "AWS_ENDPOINT_URL");
    env.push(("AWS_ENDPOINT_URL", proxy.endpoint.clone()));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("copy.tgm");
    let child = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .args(["copy", &url, s(&out)])
        .envs(env)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::fs::read_dir(dir.path()).unwrap().count() == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no temporary file"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    // SAFETY: a signal to the child this test started and still owns.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let done = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// The `tgm` lines of the book's remote and catalogue guides, in order.
fn book_examples() -> Vec<String> {
    let mut lines = doc_examples::tgm_lines(
        include_str!("../../docs/src/guide/remote.md"),
        "# Remote archives: reading one field from S3",
    );
    lines.extend(doc_examples::tgm_lines(
        include_str!("../../docs/src/guide/catalogue.md"),
        "# Catalogues and many archives",
    ));
    lines
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn every_remote_example_in_the_book_runs() {
    let (Some(http), Some(s3)) = (servers::http(), servers::s3()) else {
        return;
    };
    let examples = book_examples();
    assert!(examples.len() >= 6, "found only {examples:?}");
    let (_, bytes) = archive();
    http.put("out.tgm", bytes);
    s3.put("out.tgm", bytes);
    s3.put("era5/2024-01.tgm", bytes);
    let dir = tempfile::tempdir().unwrap();
    for line in &examples {
        let line = line
            .replace("http://127.0.0.1:8080", &http.base_url)
            .replace("s3://bucket/", &format!("s3://{}/", s3.bucket));
        // Single quotes only keep a shell from expanding a pattern.
        let args: Vec<&str> = line
            .split_whitespace()
            .skip(1)
            .map(|a| a.trim_matches('\''))
            .collect();
        let r = tgm_in(dir.path(), &args, &s3.env());
        assert!(r.ok, "{line}: {}", r.err);
    }
}

/// Issue 42 item 1: an `http://` output is sent by `PUT` (nginx's
/// WebDAV), lists as the local file, is kept without `--force`, and a
/// store refusing it is named with the cause.
#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn writes_to_an_http_url_put_the_archive() {
    let Some(http) = servers::http() else { return };
    let (local, bytes) = archive();
    let url = http.dav_url("cli/put/a.tgm");
    let r = tgm(&["copy", s(local), &url]);
    assert!(r.ok, "copy -> {url}: {}", r.err);
    assert!(r.err.contains(&format!("uploaded {url}: ")), "{}", r.err);
    assert_eq!(
        &std::fs::read(http.dav_path("cli/put/a.tgm")).unwrap(),
        bytes
    );
    same_as_local_file(&["ls", "{}"], local, &url);

    let r = failure(&["copy", s(local), &url], &[]);
    assert!(
        r.err
            .contains(&format!("{url}: already exists (use --force")),
        "{}",
        r.err
    );
    let r = tgm(&["copy", "--force", "-w", "mars.param=10u", s(local), &url]);
    assert!(r.ok, "{}", r.err);
    assert_eq!(tgm(&["ls", &url]).out.lines().count(), 2);

    let refused = http.fault_url("forbidden", "cli/put/b.tgm");
    let r = failure(&["copy", s(local), &refused], &[]);
    assert!(r.err.contains(&refused), "{}", r.err);
    assert!(
        r.err.contains("403") || r.err.contains("access refused"),
        "{}",
        r.err
    );
}

/// An `http://` output larger than a part is spooled and sent by one
/// `PUT`: the same bytes as the local output.
#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn a_large_http_output_is_sent_whole() {
    let Some(http) = servers::http() else { return };
    let dir = tempfile::tempdir().unwrap();
    let big = big_npy(dir.path());
    let local = dir.path().join("big.tgm");
    let r = tgm(&["import", s(&big), "-o", s(&local)]);
    assert!(r.ok, "{}", r.err);
    let url = http.dav_url("cli/put/big.tgm");
    let r = tgm(&["import", s(&big), "-o", &url]);
    assert!(r.ok, "import -> {url}: {}", r.err);
    // The same messages at the same places; the listing and a full check
    // agree (a streamed message keeps its declared length 0, so the bytes
    // differ there, and each message's provenance differs, and so the
    // compressed catalogue after them by a few bytes).
    let sent = tgm::TgmFile::open(http.dav_path("cli/put/big.tgm")).unwrap();
    let kept = tgm::TgmFile::open(&local).unwrap();
    assert_eq!(sent.spans(), kept.spans());
    assert!(sent.catalogue().is_some() && kept.catalogue().is_some());
    same_as_local_file(&["ls", "{}"], &local, &url);
    let v = tgm(&["validate", "--full", &url]);
    assert!(v.ok, "{}{}", v.out, v.err);
}

/// Issue 42 item 1: `convert-grib` straight into a bucket lists as the
/// local conversion, and `to-grib` of it into the bucket writes the same
/// GRIB bytes as locally. Two of ecCodes' samples (libeccodes-data) make
/// the input; skips when they are absent.
#[cfg(feature = "grib")]
#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn convert_grib_to_s3_lists_as_the_local_conversion() {
    let Some(s3) = servers::s3() else { return };
    let samples = Path::new("/usr/share/eccodes/samples");
    let parts = ["regular_ll_sfc_grib2.tmpl", "regular_ll_pl_grib2.tmpl"];
    if !parts.iter().all(|p| samples.join(p).exists()) {
        servers::skip::skip(&format!(
            "ecCodes samples not found in {}",
            samples.display()
        ));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let grib = dir.path().join("era5.grib");
    let mut bytes = Vec::new();
    for p in parts {
        bytes.extend(std::fs::read(samples.join(p)).unwrap());
    }
    std::fs::write(&grib, bytes).unwrap();
    let local = dir.path().join("era5.tgm");
    let r = tgm(&["convert-grib", s(&grib), "-o", s(&local)]);
    assert!(r.ok, "{}", r.err);
    let url = s3.url("cli/grib/era5.tgm");
    let r = tgm_env(&["convert-grib", s(&grib), "-o", &url], &s3.env());
    assert!(r.ok, "convert-grib -> {url}: {}", r.err);
    let want = tgm(&["ls", s(&local)]);
    let got = tgm_env(&["ls", &url], &s3.env());
    assert!(got.ok, "{}", got.err);
    assert_eq!(got.out.replace(&url, s(&local)), want.out);
    assert_eq!(want.out.lines().count(), 3, "{}", want.out);

    let back = dir.path().join("back.grib");
    let r = tgm(&["to-grib", s(&local), "-o", s(&back)]);
    assert!(r.ok, "{}", r.err);
    let back_url = s3.url("cli/grib/back.grib");
    let r = tgm_env(&["to-grib", s(&local), "-o", &back_url], &s3.env());
    assert!(r.ok, "to-grib -> {back_url}: {}", r.err);
    assert!(
        std::fs::read(s3.bucket_dir.join("cli/grib/back.grib")).unwrap()
            == std::fs::read(&back).unwrap()
    );
}

/// Issue 42: importing a 512 MiB array into S3 peaks under 256 MiB RSS:
/// the upload holds its parts in flight only, and the array, which the
/// pipeline leaves as it is, is written from its mapping in 8 MiB steps
/// whose pages are released behind them (`spec/pipeline.md` §6.10).
/// Measured 63.7 MiB (568.7 MiB when the object was written whole).
#[cfg(target_os = "linux")]
#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn importing_512_mib_to_s3_peaks_under_256_mib() {
    use std::io::Write;
    let Some(s3) = servers::s3() else { return };
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big512.npy");
    let n: u64 = 64 << 20; // float64: 512 MiB
    let mut f = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
    let header = write_npy(&npy_layout(Dtype::Float64, &[n], ByteOrder::Little), &[]);
    f.write_all(&header).unwrap();
    let mut chunk = Vec::with_capacity(1 << 20);
    for i in 0..n {
        chunk.extend_from_slice(&((i as f64) * 0.25).sin().to_le_bytes());
        if chunk.len() == 1 << 20 {
            f.write_all(&chunk).unwrap();
            chunk.clear();
        }
    }
    f.write_all(&chunk).unwrap();
    f.into_inner().unwrap().sync_all().unwrap();
    let url = s3.url("cli/mem/big512.tgm");
    let (peak, status) = common::peak_rss(&["import", s(&big), "-o", &url], &s3.env());
    assert_eq!(status, 0, "import -> {url} failed");
    let mib = peak as f64 / f64::from(1 << 20);
    println!("import of 512 MiB to {url}: peak RSS {mib:.1} MiB");
    assert!(
        std::fs::metadata(s3.bucket_dir.join("cli/mem/big512.tgm"))
            .unwrap()
            .len()
            > 512 << 20
    );
    assert!(mib < 256.0, "peak RSS {mib:.1} MiB");
}

/// `n` plain messages (as the reference writes them: no catalogue), one
/// float32 object of `elems` values each, with a MARS param and step.
fn plain_fields(n: usize, elems: u32, seed: u32) -> Vec<u8> {
    (0..n)
        .flat_map(|m| {
            let mut mars = tgm::Map::new();
            mars.insert("param".into(), ["2t", "msl"][m % 2].into());
            mars.insert("step".into(), tgm::cbor::Value::Uint(m as u64 / 2));
            let mut entry = tgm::Map::new();
            entry.insert("mars".into(), tgm::cbor::Value::text_map(mars));
            let meta = tgm::GlobalMetadata::with_base(vec![entry]);
            let d = tgm::ObjectDescriptor::new(Dtype::Float32, vec![elems as u64])
                .with_byte_order(ByteOrder::native());
            let x: Vec<u8> = (0..elems)
                .flat_map(|k| ((seed + m as u32 * 3 + k) as f32).to_ne_bytes())
                .collect();
            tgm::encode(&meta, &[(&d, &x[..])], &tgm::EncodeOptions::new()).unwrap()
        })
        .collect()
}

/// Rows of `tgm ls` output without the file column.
fn ls_rows(out: &str) -> Vec<String> {
    out.lines()
        .skip(1)
        .map(|l| l.split_once('\t').unwrap().1.to_string())
        .collect()
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn index_of_an_s3_folder_pattern_catalogues_every_archive() {
    let Some(s3) = servers::s3() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut locals = Vec::new();
    for (i, name) in ["a.tgm", "b.tgm", "c.tgm"].iter().enumerate() {
        let bytes = plain_fields(4 + i, 100, i as u32 * 1000);
        let p = dir.path().join(name);
        std::fs::write(&p, &bytes).unwrap();
        s3.put(&format!("cli/idx/{name}"), &bytes);
        locals.push(p);
    }
    s3.put("cli/idx/notes.txt", b"not an archive");
    s3.put("cli/idx/deeper/d.tgm", &plain_fields(1, 10, 0));
    let pattern = s3.url("cli/idx/*.tgm");
    let cat = s3.url("cli/idx/all.tgmc");
    let r = tgm_env(&["index", &pattern, "-o", &cat], &s3.env());
    assert!(r.ok, "{}", r.err);
    assert!(
        r.err.contains("catalogued 3 archive(s), 15 message(s)"),
        "{}",
        r.err
    );
    let want = tgm(&[
        "ls",
        "-p",
        "mars.param,mars.step",
        s(&locals[0]),
        s(&locals[1]),
        s(&locals[2]),
    ]);
    let got = tgm_env(&["ls", "-p", "mars.param,mars.step", &cat], &s3.env());
    assert!(got.ok, "{}", got.err);
    assert_eq!(ls_rows(&got.out), ls_rows(&want.out));
    assert!(got.out.contains(&s3.url("cli/idx/b.tgm")), "{}", got.out);
    // A pattern nothing matches, and one in a folder segment.
    let r = tgm_env(
        &[
            "index",
            &s3.url("cli/idx/*.grib"),
            "-o",
            &s3.url("cli/idx/none.tgmc"),
        ],
        &s3.env(),
    );
    assert!(!r.ok && r.err.contains("no object matches"), "{}", r.err);
    let r = tgm_env(
        &[
            "index",
            &s3.url("cli/*/a.tgm"),
            "-o",
            &s3.url("cli/idx/none.tgmc"),
        ],
        &s3.env(),
    );
    assert!(!r.ok && r.err.contains("last segment"), "{}", r.err);
}

/// Many archives that tgm did not write, behind 5 ms a request: one
/// catalogue file opens all of them with no request to any archive, and
/// reading an object costs one request to its own archive, pinned to its
/// ETag.
#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn a_catalogue_file_opens_many_remote_archives_without_touching_them() {
    let Some(http) = servers::http() else { return };
    const FILES: usize = 100;
    const MESSAGES: usize = 40;
    let mut urls = Vec::new();
    let mut total = 0usize;
    for f in 0..FILES {
        let bytes = plain_fields(MESSAGES, 256, f as u32 * 100_000);
        total += bytes.len();
        urls.push(http.put(&format!("cli/many/{f:03}.tgm"), &bytes));
    }
    let dir = tempfile::tempdir().unwrap();
    let cat = dir.path().join("many.tgmc");
    let mut args = vec!["index"];
    args.extend(urls.iter().map(String::as_str));
    args.extend(["-o", s(&cat)]);
    let r = tgm(&args);
    assert!(r.ok, "{}", r.err);
    let cat_bytes = std::fs::read(&cat).unwrap();
    let cat_url = http.put("cli/many/all.tgmc", &cat_bytes);
    let proxy = fault_proxy::FaultProxy::start(&http.base_url);
    proxy.fault(
        "GET",
        "cli/many/",
        fault_proxy::Fault::Delay(Duration::from_millis(5)),
        usize::MAX,
    );
    let slow = cat_url.replace(&http.base_url, &proxy.endpoint);
    let mark = http.log_mark();
    let started = Instant::now();
    let r = tgm(&["ls", "-p", "mars.param,mars.step", &slow]);
    let took = started.elapsed();
    assert!(r.ok, "{}", r.err);
    assert_eq!(r.out.lines().count(), 1 + FILES * MESSAGES);
    let log = http.requests_since(mark);
    let is_archive =
        |q: &&servers::Request| q.path.contains("/cli/many/") && q.path.ends_with(".tgm");
    assert!(
        log.iter().any(|q| q.is_for("cli/many/all.tgmc")),
        "the log sees the catalogue"
    );
    let to_archives = log.iter().filter(is_archive).count();
    let to_catalogue: Vec<_> = log
        .iter()
        .filter(|q| q.is_for("cli/many/all.tgmc"))
        .collect();
    println!(
        "ls of {FILES} archives ({total} bytes) from a {}-byte catalogue file behind 5 ms a request: \
         {} request(s) to the catalogue, {to_archives} to the archives, {:.2} s",
        cat_bytes.len(),
        to_catalogue.len(),
        took.as_secs_f64()
    );
    assert_eq!(to_archives, 0, "{log:?}");
    assert!(to_catalogue.len() <= 2, "{to_catalogue:?}");
    // Values: one request to the archive read, and the same as locally.
    let mark = http.log_mark();
    let r = tgm(&["stats", &slow]);
    assert!(r.ok, "{}", r.err);
    let archive_gets = http.requests_since(mark).iter().filter(is_archive).count();
    assert_eq!(archive_gets, FILES * MESSAGES, "one request per object");
    // An archive replaced after cataloguing: listing trusts the recorded
    // ETag (no request), but reading it is refused by the pinned read,
    // naming it, never answered with other bytes.
    http.put("cli/many/007.tgm", &plain_fields(MESSAGES + 1, 256, 7));
    let r = tgm(&["stats", &cat_url]);
    assert!(!r.ok, "{}", r.out);
    assert!(r.err.contains("cli/many/007.tgm"), "{}", r.err);
    // Without the catalogue's ETag trust: `--catalogue` on the archive
    // itself checks it first and scans it.
    let r = tgm(&["--catalogue", s(&cat), "ls", &urls[7]]);
    assert!(r.ok, "{}", r.err);
    assert!(r.err.contains("its catalogue was not used"), "{}", r.err);
    assert_eq!(r.out.lines().count(), 1 + MESSAGES + 1);
}
