//! Helpers shared by the command-line test suites.
#![allow(dead_code)]

#[path = "../../../tests/common/skip.rs"]
pub mod skip;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use tgm::cbor::Value;
use tgm::npy::{npy_layout, write_npy};
use tgm::{ByteOrder, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

/// A finished run of the binary.
pub struct Run {
    pub ok: bool,
    pub code: i32,
    pub out: String,
    pub err: String,
}

pub fn tgm_in(dir: &Path, args: &[&str]) -> Run {
    finished(
        Command::new(env!("CARGO_BIN_EXE_tgm"))
            .current_dir(dir)
            .args(args)
            .output()
            .unwrap(),
    )
}

pub fn f64_npy(path: &Path, vals: &[f64]) {
    let data: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(
        path,
        write_npy(
            &npy_layout(Dtype::Float64, &[vals.len() as u64], ByteOrder::Little),
            &data,
        ),
    )
    .unwrap();
}

/// A temp dir with a.npy, b.npy (varying float64) and k.npy (constant).
pub fn fixture() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    f64_npy(&d.path().join("a.npy"), &[1.0, 2.5, 3.0, 4.0]);
    f64_npy(&d.path().join("b.npy"), &[280.0, 281.5, 279.25]);
    f64_npy(&d.path().join("k.npy"), &[7.0; 5]);
    d
}

/// An archive of `n` messages with one small object each, named `f<i>`.
pub fn archive(path: &Path, n: usize) {
    let mut out = Vec::new();
    for i in 0..n {
        let d = ObjectDescriptor::new(Dtype::Uint8, vec![4]);
        let mut e = tgm::Map::new();
        e.insert("name".into(), Value::Text(format!("f{i}")));
        e.insert(
            "mars".into(),
            Value::text_map([("param", Value::Text(format!("p{}", i % 3)))]),
        );
        out.extend(
            tgm::encode(
                &GlobalMetadata::with_base(vec![e]),
                &[(&d, &[i as u8; 4][..])],
                &EncodeOptions::new(),
            )
            .unwrap(),
        );
    }
    std::fs::write(path, out).unwrap();
}

pub fn count_messages(path: &Path) -> usize {
    tgm::TgmFile::open(path).unwrap().num_messages()
}

fn finished(o: std::process::Output) -> Run {
    Run {
        ok: o.status.success(),
        code: o.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&o.stdout).into_owned(),
        err: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Runs `tgm ARGS` in `dir` with `input` on stdin; stdout kept as bytes.
pub fn tgm_stdin(dir: &Path, args: &[&str], input: &[u8]) -> (Run, Vec<u8>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        // The command may stop reading early (a usage error).
        let _ = stdin.write_all(&input);
    });
    let o = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    let bytes = o.stdout.clone();
    (finished(o), bytes)
}

/// Colour levels of `tgm plot`'s maps (`spec/plot.md` §5).
pub const LEVELS: usize = 200;

/// A decoded picture: RGBA pixels and its text chunks.
pub struct Png {
    pub width: u32,
    pub rgba: Vec<u8>,
    pub text: Vec<(String, String)>,
}

impl Png {
    pub fn read(path: &Path) -> Png {
        let bytes = std::fs::read(path).unwrap();
        let mut d = png::Decoder::new(std::io::Cursor::new(bytes));
        d.set_transformations(png::Transformations::EXPAND | png::Transformations::ALPHA);
        let mut r = d.read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        let text = r
            .info()
            .uncompressed_latin1_text
            .iter()
            .map(|t| (t.keyword.clone(), t.text.clone()))
            .collect();
        Png {
            width: info.width,
            rgba: buf,
            text,
        }
    }

    pub fn chunk(&self, k: &str) -> &str {
        &self.text.iter().find(|t| t.0 == k).unwrap().1
    }

    pub fn px(&self, x: u32, y: u32) -> [u8; 4] {
        let i = ((y * self.width + x) * 4) as usize;
        self.rgba[i..i + 4].try_into().unwrap()
    }

    pub fn panels(&self) -> Vec<serde_json::Value> {
        serde_json::from_str::<serde_json::Value>(self.chunk("tgm-panels"))
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }

    /// The pixel at the centre of cell (r, c) of a rows × cols panel.
    pub fn cell(&self, panel: usize, rows: u64, cols: u64, r: u64, c: u64) -> [u8; 4] {
        let p = &self.panels()[panel];
        let n = |k: &str| p[k].as_u64().unwrap();
        let x = n("x") + (2 * c + 1) * n("w") / (2 * cols);
        let y = n("y") + (2 * r + 1) * n("h") / (2 * rows);
        self.px(x as u32, y as u32)
    }

    pub fn range(&self) -> (f64, f64) {
        let (a, b) = self.chunk("tgm-range").split_once(':').unwrap();
        (a.parse().unwrap(), b.parse().unwrap())
    }
}

/// The colour the documented rule gives `v` in `range` with `g`.
pub fn expected(g: colorous::Gradient, (lo, hi): (f64, f64), v: f64, reversed: bool) -> [u8; 4] {
    let l = (((v - lo) / (hi - lo)) * LEVELS as f64).floor();
    let l = l.clamp(0.0, (LEVELS - 1) as f64) as usize;
    let l = if reversed { LEVELS - 1 - l } else { l };
    let c = g.eval_rational(l, LEVELS);
    [c.r, c.g, c.b, 255]
}

/// Peak resident size of one `tgm` run (its own `wait4` usage, so other
/// tests' children do not count), with its exit status. A child shares
/// this process's memory until it executes tgm, so a test measuring one
/// holds nothing large before it.
#[cfg(target_os = "linux")]
#[allow(clippy::zombie_processes)] // reaped by wait4 below
pub fn peak_rss(args: &[&str], env: &[(&'static str, String)]) -> (u64, i32) {
    let child = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .args(args)
        .envs(env.iter().cloned())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: wait4 on the child this test started, writing into the
    // zeroed struct it is given; the Child is not waited for again.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    // Linux reports kilobytes.
    (u64::try_from(usage.ru_maxrss).unwrap() * 1024, status)
}
