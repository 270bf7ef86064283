//! `tgm validate`: structure, metadata, hashes and (with `--full`) decoding
//! of every object; exit 0 when every file is valid, 1 otherwise.
//! See `spec/files.md` §2, `spec/format.md` §4.1 (canonical CBOR) and §12.2.

use std::io::Write;
use std::path::PathBuf;

use tgm::cbor::{encode_canonical, parse_one, CborLimits, Value};
use tgm::{DecodeOptions, Message, Verify};

use crate::error::{CliError, CliResult};
use crate::input::Archive;
use crate::output::stdout;

/// Arguments of `tgm validate`.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  tgm validate out.tgm\n  tgm validate --full --canonical --json out.tgm"
)]
pub struct Args {
    /// Files to validate.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Structure only: messages delimit and their frames parse.
    #[arg(long, group = "level")]
    pub quick: bool,
    /// Structure and frame hashes.
    #[arg(long, group = "level")]
    pub checksum: bool,
    /// Everything, including decoding every object.
    #[arg(long, group = "level")]
    pub full: bool,
    /// Also require canonical CBOR key order in metadata and descriptors.
    #[arg(long)]
    pub canonical: bool,
    /// One JSON report on stdout.
    #[arg(long)]
    pub json: bool,
}

/// One problem found.
#[derive(Debug, Clone)]
struct Problem {
    message: Option<usize>,
    object: Option<usize>,
    offset: Option<u64>,
    reason: String,
}

impl Problem {
    fn from_error(e: &tgm::Error, message: usize) -> Self {
        Problem {
            message: e.message_index().or(Some(message)),
            object: e.object_index(),
            offset: e.offset(),
            reason: e.detail().to_string(),
        }
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "message": self.message,
            "object": self.object,
            "offset": self.offset,
            "reason": self.reason,
        })
    }
}

/// Whether every map in `v` has its keys in canonical (bytewise) order.
fn keys_canonical(v: &Value) -> bool {
    match v {
        Value::Map(entries) => {
            let enc: Vec<Vec<u8>> = entries.iter().map(|(k, _)| encode_canonical(k)).collect();
            enc.windows(2).all(|w| w[0] < w[1])
                && entries
                    .iter()
                    .all(|(k, v)| keys_canonical(k) && keys_canonical(v))
        }
        Value::Array(items) => items.iter().all(keys_canonical),
        Value::Tag(_, inner) => keys_canonical(inner),
        _ => true,
    }
}

fn check_cbor(bytes: &[u8], base: u64, what: &str) -> Option<String> {
    match parse_one(bytes, base, CborLimits::default()) {
        Ok((v, _)) if keys_canonical(&v) => None,
        Ok(_) => Some(format!("{what} CBOR map keys are not in canonical order")),
        Err(e) => Some(format!("{what}: {e}")),
    }
}

impl Args {
    fn check_message(&self, m: &Message<'_>, mi: usize, out: &mut Vec<Problem>) {
        let base = m.layout().base;
        let push = |out: &mut Vec<Problem>, e: tgm::Error| out.push(Problem::from_error(&e, mi));
        if !self.quick {
            if let Err(e) = m.verify(Verify::IfPresent) {
                push(out, e);
                return;
            }
        }
        if !self.checksum && !self.quick {
            if let Err(e) = m.metadata() {
                push(out, e);
            }
        }
        let limits = tgm::Limits::default();
        for oi in 0..m.num_objects() {
            let obj = match m.object(oi) {
                Ok(o) => o,
                Err(e) => {
                    push(out, e.in_object(oi));
                    continue;
                }
            };
            if self.canonical {
                if let Ok(parts) = obj.frame().split_data(&limits) {
                    if let Some(r) =
                        check_cbor(parts.descriptor, obj.frame().abs_offset(), "descriptor")
                    {
                        out.push(Problem {
                            message: Some(mi),
                            object: Some(oi),
                            offset: Some(obj.frame().abs_offset()),
                            reason: r,
                        });
                    }
                }
            }
            if self.full {
                let opts = DecodeOptions::default().verify(Verify::Off);
                if let Err(e) = obj.decode(&opts) {
                    push(out, e.in_object(oi));
                }
            }
        }
        if self.canonical {
            if let Some(f) = m.layout().metadata_frame() {
                if let Some(r) = check_cbor(f.cbor(), base + f.offset() as u64, "metadata") {
                    out.push(Problem {
                        message: Some(mi),
                        object: None,
                        offset: Some(f.abs_offset()),
                        reason: r,
                    });
                }
            }
        }
    }
}

/// Runs `tgm validate`.
pub fn run(a: Args) -> CliResult {
    let mut out = stdout();
    let mut reports = Vec::new();
    let mut all_ok = true;
    for path in &a.files {
        let mut problems = Vec::new();
        let mut messages = 0;
        match Archive::open_lenient(path) {
            Err(e) => problems.push(Problem {
                message: None,
                object: None,
                offset: None,
                reason: e.to_string(),
            }),
            Ok(f) => {
                messages = f.len();
                if let Err(e) = f.check_intact() {
                    let off = f.torn_tail().map(|t| t.offset);
                    problems.push(Problem {
                        message: None,
                        object: None,
                        offset: off,
                        reason: e.to_string(),
                    });
                }
                for mi in 0..f.len() {
                    let r = f.with_message(mi, |m| {
                        a.check_message(m, mi, &mut problems);
                        Ok(())
                    });
                    if let Err(e) = r {
                        problems.push(Problem::from_error(&e, mi));
                    }
                }
            }
        }
        all_ok &= problems.is_empty();
        if a.json {
            reports.push(serde_json::json!({
                "file": path.display().to_string(),
                "valid": problems.is_empty(),
                "messages": messages,
                "problems": problems.iter().map(Problem::json).collect::<Vec<_>>(),
            }));
        } else if problems.is_empty() {
            writeln!(out, "{}: OK ({messages} message(s))", path.display())?;
        } else {
            for p in &problems {
                let mut at = String::new();
                if let Some(m) = p.message {
                    at.push_str(&format!(" message {m}"));
                }
                if let Some(o) = p.object {
                    at.push_str(&format!(" object {o}"));
                }
                if let Some(o) = p.offset {
                    at.push_str(&format!(" offset {o}"));
                }
                writeln!(out, "{}:{at}: {}", path.display(), p.reason)?;
            }
        }
    }
    if a.json {
        writeln!(
            out,
            "{}",
            serde_json::json!({ "valid": all_ok, "files": reports })
        )?;
    }
    out.flush()?;
    if all_ok {
        Ok(())
    } else {
        Err(CliError::Reported)
    }
}
