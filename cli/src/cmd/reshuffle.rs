//! `tgm reshuffle`: rewrite every message with its index and hashes in the
//! header (streaming messages carry them in the footer). See `spec/format.md` §11.1.

use std::path::PathBuf;

use crate::error::CliResult;
use crate::input::Archive;
use crate::output::Sink;
use crate::pipeline_args::GlobalArgs;
use crate::rewrite::{rewrite, Part};

/// Arguments of `tgm reshuffle`.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  tgm reshuffle -o buffered.tgm streamed.tgm")]
pub struct Args {
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
    /// Input file (`-` for stdin).
    pub input: PathBuf,
    /// Output file (`-` for stdout).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Replace OUTPUT if it exists.
    #[arg(short, long)]
    pub force: bool,
    #[command(flatten)]
    pub encode: crate::pipeline_args::EncodeFlags,
}

/// Runs `tgm reshuffle`.
pub fn run(a: Args, g: &GlobalArgs) -> CliResult {
    let f = Archive::open(&a.input)?;
    let mut sink = Sink::open(&a.output, &[&a.input], a.force)?;
    for mi in 0..f.len() {
        let (meta, descs) = f.header(mi)?;
        rewrite(
            &meta,
            &[Part::all(&f, mi, descs.len())],
            g,
            &mut sink.writer(),
        )?;
    }
    sink.finish()
}
