//! `tgm info`: file-level summary. See `spec/files.md` §2.

use std::io::Write;
use std::path::PathBuf;

use crate::error::CliResult;
use crate::input::{finish_read, open_all_readable, Archive};
use crate::output::stdout;

/// Arguments of `tgm info`.
#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 1 when a file is damaged or truncated (its intact \
messages are still counted).\n\nExamples:\n  tgm info out.tgm\n  tgm info -j out.tgm"
)]
pub struct Args {
    /// Files to summarise (`-` for stdin).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// One JSON object per file per line (NDJSON).
    #[arg(short, long)]
    pub json: bool,
}

/// Runs `tgm info`: prints a summary per file; damage (bytes outside
/// complete messages) is listed with its offset and makes the exit status 1.
pub fn run(a: Args) -> CliResult {
    let archives = open_all_readable(&a.files)?;
    let mut out = stdout();
    for f in &archives {
        let objects = count_objects(f)?;
        let damage = f.damage();
        if a.json {
            let damage: Vec<_> = damage
                .iter()
                .map(|d| {
                    serde_json::json!({
                        "offset": d.offset,
                        "length": d.len,
                        "truncated": d.truncated,
                        "reason": d.reason,
                    })
                })
                .collect();
            let row = serde_json::json!({
                "file": f.label().display().to_string(),
                "size": f.size(),
                "messages": f.len(),
                "objects": objects,
                "version": 3,
                "damage": damage,
            });
            writeln!(out, "{row}")?;
            continue;
        }
        writeln!(out, "File: {}", f.label().display())?;
        writeln!(out, "Size: {} bytes", f.size())?;
        writeln!(out, "Messages: {}", f.len())?;
        writeln!(out, "Objects: {objects}")?;
        writeln!(out, "Version: 3")?;
        for d in &damage {
            let kind = if d.truncated { "Truncated" } else { "Damaged" };
            writeln!(
                out,
                "{kind}: {} bytes at offset {} ({})",
                d.len, d.offset, d.reason
            )?;
        }
    }
    finish_read(&mut out, &archives)
}

fn count_objects(f: &Archive) -> CliResult<usize> {
    let mut n = 0;
    for mi in 0..f.len() {
        n += f.header(mi)?.1.len();
    }
    Ok(n)
}
