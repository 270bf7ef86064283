//! `tgm validate`: parses the flags, runs the library validator
//! ([`tgm::validate()`], `spec/files.md` §8) on each file and displays its
//! report; exit 0 when every file is valid, 1 otherwise.

use std::io::Write;
use std::path::{Path, PathBuf};

use tgm::validate::{validate, Mode, Report, Severity, ValidateOptions};

use crate::error::{CliError, CliResult, WithPath};
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
    /// Structure only (level 1).
    #[arg(long, group = "level")]
    pub quick: bool,
    /// Structure and frame digests only: no metadata, no decoding.
    #[arg(long, group = "level")]
    pub checksum: bool,
    /// All four levels: also NaN/Inf not declared by a mask.
    #[arg(long, group = "level")]
    pub full: bool,
    /// Also warn about CBOR map keys not in canonical order.
    #[arg(long)]
    pub canonical: bool,
    /// A JSON array on stdout, one entry per file (the reference's shape).
    #[arg(short = 'j', long)]
    pub json: bool,
}

impl Args {
    fn mode(&self) -> Mode {
        match (self.quick, self.checksum, self.full) {
            (true, _, _) => Mode::Quick,
            (_, true, _) => Mode::Checksum,
            (_, _, true) => Mode::Full,
            _ => Mode::Default,
        }
    }
}

/// Runs `tgm validate`.
pub fn run(a: Args) -> CliResult {
    let opts = ValidateOptions::default().canonical(a.canonical);
    let mut out = stdout();
    let mut entries = Vec::new();
    let mut all_ok = true;
    for path in &a.files {
        let archive = Archive::open_lenient(path)?;
        let report = validate(&archive, a.mode(), &opts).at(path)?;
        all_ok &= report.is_ok();
        if a.json {
            entries.push(report.to_json(&path.display().to_string()));
        } else {
            display(&mut out, path, &report)?;
        }
    }
    if a.json {
        writeln!(out, "{:#}", serde_json::Value::Array(entries))?;
    }
    out.flush()?;
    if all_ok {
        Ok(())
    } else {
        Err(CliError::Reported)
    }
}

/// The reference's text report: damage and issues on stderr (messages and
/// objects numbered from 1), then `OK (…)` on stdout or a `FAILED (…)`
/// summary on stderr. A passing file shows its warnings only.
fn display(out: &mut impl Write, path: &Path, r: &Report) -> CliResult {
    let p = path.display();
    for i in &r.file_issues {
        note!(
            "{p}: WARNING — {} (at byte offset {}, {} bytes)",
            i.description,
            i.byte_offset,
            i.length
        );
    }
    let ok = r.is_ok();
    for (mi, m) in r.messages.iter().enumerate() {
        for i in &m.issues {
            let label = match i.severity {
                Severity::Error if ok => continue,
                Severity::Error => "FAILED",
                Severity::Warning => "WARNING",
            };
            let obj = i
                .object_index
                .map_or(String::new(), |o| format!(", object {}", o + 1));
            let at = i
                .offset
                .map_or(String::new(), |o| format!(" (at byte {o})"));
            note!(
                "{p}: {label} — message {}{obj}: {}{at}",
                mi + 1,
                i.description
            );
        }
    }
    let (n, objects) = (r.messages.len(), r.total_objects());
    if ok {
        let hashed = if r.hash_verified() {
            ", hash verified"
        } else {
            ""
        };
        writeln!(out, "{p}: OK ({n} messages, {objects} objects{hashed})")?;
    } else {
        let errors =
            r.issues().filter(|i| i.severity == Severity::Error).count() + r.file_issues.len();
        let label = if errors == 1 { "error" } else { "errors" };
        note!("{p}: FAILED ({errors} {label}, {n} messages, {objects} objects)");
    }
    Ok(())
}
