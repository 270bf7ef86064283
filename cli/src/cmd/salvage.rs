//! `tgm salvage`: report and recover the intact messages of a damaged file;
//! exits 1 when anything had to be skipped. See `spec/files.md` §6.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{CliError, CliResult, WithPath};
use crate::output::{check_output, is_dash, stdout, Sink};

/// Arguments of `tgm salvage`.
#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 when the file is intact, 1 when byte ranges were skipped \
(the intact messages are still written to OUTPUT) or when nothing is intact (then no OUTPUT \
is written).\n\nExamples:\n  tgm salvage damaged.tgm -o good.tgm\n  tgm salvage -j damaged.tgm"
)]
pub struct Args {
    /// The damaged file (`-` for stdin).
    pub input: PathBuf,
    /// Write the intact messages to this new file (`-` for stdout).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Replace OUTPUT if it exists.
    #[arg(short, long)]
    pub force: bool,
    /// The report as one JSON object.
    #[arg(short, long)]
    pub json: bool,
}

/// Runs `tgm salvage`.
pub fn run(a: Args) -> CliResult {
    let spool = match is_dash(&a.input) {
        true => Some(crate::spool::stdin_to_file(crate::spool::no_suffix)?),
        false => None,
    };
    let (path, label) = match &spool {
        Some(s) => (s.path(), Path::new(crate::spool::STDIN)),
        None => (a.input.as_path(), a.input.as_path()),
    };
    if path.is_dir() {
        return Err(CliError::Failed(format!(
            "{}: is a directory",
            label.display()
        )));
    }
    if let Some(o) = &a.output {
        check_output(o, &[&a.input], a.force)?;
    }
    let file = std::fs::File::open(path).at(label)?;
    let len = file.metadata().at(label)?.len();
    // SAFETY: read-only mapping of a file the tool does not modify.
    #[allow(unsafe_code)]
    let map = if len == 0 {
        None
    } else {
        Some(unsafe { memmap2::Mmap::map(&file) }.at(label)?)
    };
    let buf: &[u8] = map.as_deref().unwrap_or(&[]);
    let rep = tgm::file::salvage(buf, &tgm::Limits::default());
    let kept: u64 = rep.messages.iter().map(|m| m.len).sum();
    let nothing = rep.messages.is_empty() && !buf.is_empty();
    if let (Some(o), false) = (&a.output, nothing) {
        let mut sink = Sink::open(o, &[&a.input], a.force)?;
        for m in &rep.messages {
            sink.write_all(&buf[m.range()])?;
        }
        sink.finish()?;
    }
    let to_stdout = a.output.as_deref().is_some_and(is_dash);
    let mut report: Box<dyn Write> = if to_stdout {
        Box::new(std::io::stderr())
    } else {
        Box::new(stdout())
    };
    if a.json {
        let skipped: Vec<_> = rep
            .skipped
            .iter()
            .map(|s| serde_json::json!({"offset": s.offset, "length": s.len, "reason": s.reason}))
            .collect();
        let doc = serde_json::json!({
            "file": label.display().to_string(),
            "size": buf.len(),
            "intact_messages": rep.messages.len(),
            "intact_bytes": kept,
            "skipped": skipped,
            "outputs": crate::output::committed_json(),
        });
        writeln!(report, "{doc}")?;
    } else {
        for s in &rep.skipped {
            writeln!(report, "skipped\t{}\t{}\t{}", s.offset, s.len, s.reason)?;
        }
        writeln!(
            report,
            "intact\t{} message(s), {kept} of {} bytes; {} range(s) skipped",
            rep.messages.len(),
            buf.len(),
            rep.skipped.len()
        )?;
    }
    report.flush()?;
    if let (Some(o), true) = (&a.output, nothing) {
        note!(
            "error: {}: no intact message; {} not written",
            label.display(),
            o.display()
        );
    }
    if rep.skipped.is_empty() && !nothing {
        Ok(())
    } else {
        Err(CliError::Reported)
    }
}
