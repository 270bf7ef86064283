//! `tgm salvage`: report and recover the intact messages of a damaged file;
//! exits 1 when anything had to be skipped. See `spec/files.md` §6.

use std::io::Write;
use std::path::PathBuf;

use crate::error::{CliError, CliResult, WithPath};
use crate::output::{stdout, Sink};

/// Arguments of `tgm salvage`.
#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 when the file is intact, 1 when byte ranges were skipped \
(the intact messages are still written to OUTPUT).\n\nExample:\n  tgm salvage damaged.tgm -o good.tgm"
)]
pub struct Args {
    /// The damaged file.
    pub input: PathBuf,
    /// Write the intact messages to this new file (`-` for stdout).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Replace OUTPUT if it exists.
    #[arg(short, long)]
    pub force: bool,
}

/// Runs `tgm salvage`.
pub fn run(a: Args) -> CliResult {
    if a.input.is_dir() {
        return Err(CliError::Failed(format!(
            "{}: is a directory",
            a.input.display()
        )));
    }
    let mut sink = match &a.output {
        Some(o) => Some(Sink::open(o, &[&a.input], a.force)?),
        None => None,
    };
    let file = std::fs::File::open(&a.input).at(&a.input)?;
    let len = file.metadata().at(&a.input)?.len();
    // SAFETY: read-only mapping of a file the tool does not modify.
    #[allow(unsafe_code)]
    let map = if len == 0 {
        None
    } else {
        Some(unsafe { memmap2::Mmap::map(&file) }.at(&a.input)?)
    };
    let buf: &[u8] = map.as_deref().unwrap_or(&[]);
    let rep = tgm::file::salvage(buf, &tgm::Limits::default());
    let to_stdout = a.output.as_deref().is_some_and(crate::output::is_dash);
    let mut report: Box<dyn Write> = if to_stdout {
        Box::new(std::io::stderr())
    } else {
        Box::new(stdout())
    };
    for s in &rep.skipped {
        writeln!(report, "skipped\t{}\t{}\t{}", s.offset, s.len, s.reason)?;
    }
    let kept: u64 = rep.messages.iter().map(|m| m.len).sum();
    writeln!(
        report,
        "intact\t{} message(s), {kept} of {} bytes; {} range(s) skipped",
        rep.messages.len(),
        buf.len(),
        rep.skipped.len()
    )?;
    report.flush()?;
    if let Some(mut sink) = sink.take() {
        for m in &rep.messages {
            sink.write_all(&buf[m.range()])?;
        }
        sink.finish()?;
    }
    if rep.skipped.is_empty() && (buf.is_empty() || !rep.messages.is_empty()) {
        Ok(())
    } else {
        Err(CliError::Reported)
    }
}
