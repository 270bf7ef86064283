//! `tgm info`: file-level summary. See `spec/files.md` §2.

use std::io::Write;
use std::path::PathBuf;

use crate::error::{CliError, CliResult};
use crate::input::Archive;
use crate::output::stdout;

/// Arguments of `tgm info`.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  tgm info out.tgm")]
pub struct Args {
    /// Files to summarise (`-` for stdin).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Runs `tgm info`: prints a summary per file; a file with bytes outside
/// complete messages is reported and makes the exit status 1.
pub fn run(a: Args) -> CliResult {
    let mut out = stdout();
    let mut damaged = false;
    for path in &a.files {
        let f = Archive::open_lenient(path)?;
        let mut objects = 0usize;
        for mi in 0..f.len() {
            objects += f.header(mi)?.1.len();
        }
        let covered: u64 = f.spans().iter().map(|s| s.len).sum();
        writeln!(out, "File: {}", f.label().display())?;
        writeln!(out, "Size: {} bytes", f.size())?;
        writeln!(out, "Messages: {}", f.len())?;
        writeln!(out, "Objects: {objects}")?;
        writeln!(out, "Version: 3")?;
        if covered != f.size() {
            writeln!(out, "Unaccounted bytes: {}", f.size() - covered)?;
        }
        if let Some(t) = f.torn_tail() {
            writeln!(
                out,
                "Torn tail: {} bytes at offset {} ({})",
                t.len, t.offset, t.reason
            )?;
        }
        if let Err(e) = f.check_intact() {
            out.flush()?;
            eprintln!("error: {e}");
            damaged = true;
        }
    }
    out.flush()?;
    if damaged {
        return Err(CliError::Reported);
    }
    Ok(())
}
