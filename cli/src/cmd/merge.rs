//! `tgm merge`: every message of every input into one message.

use std::path::PathBuf;

use tgm::metadata::BaseLayout;
use tgm::GlobalMetadata;

use crate::error::{usage, CliError, CliResult};
use crate::input::Archive;
use crate::output::Sink;
use crate::pipeline_args::GlobalArgs;
use crate::rewrite::{rewrite, Part};

/// What to do when two messages' `_extra_` sections disagree on a key.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// The first value wins.
    First,
    /// The last value wins.
    Last,
    /// Conflicts are errors.
    Error,
}

/// Arguments of `tgm merge`.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  tgm merge -o all.tgm a.tgm b.tgm -s error")]
pub struct Args {
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
    /// Input files.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output file (`-` for stdout).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Conflicting message-level (`_extra_`) keys.
    #[arg(short = 's', long, value_enum, default_value_t = Strategy::First)]
    pub strategy: Strategy,
    /// Replace OUTPUT if it exists.
    #[arg(short, long)]
    pub force: bool,
    #[command(flatten)]
    pub encode: crate::pipeline_args::EncodeFlags,
}

/// Runs `tgm merge`: objects keep their order and per-object metadata.
pub fn run(a: Args, g: &GlobalArgs) -> CliResult {
    let inputs: Vec<&std::path::Path> = a.inputs.iter().map(PathBuf::as_path).collect();
    let mut sink = Sink::open(&a.output, &inputs, a.force)?;
    let mut meta = GlobalMetadata::default();
    // Every input stays open, so that objects stored raw are borrowed from
    // their mappings rather than copied.
    let archives = a
        .inputs
        .iter()
        .map(|p| Archive::open(p))
        .collect::<CliResult<Vec<_>>>()?;
    let mut parts = Vec::new();
    for (path, f) in a.inputs.iter().zip(&archives) {
        for mi in 0..f.len() {
            let (m, descs) = f.header(mi)?;
            let mut base = m.base.clone();
            base.resize_with(descs.len(), tgm::Map::new);
            meta.base.extend(base);
            // Keys stored once in any input are stored once in the output.
            if m.layout == BaseLayout::SharedOnce {
                meta.layout = BaseLayout::SharedOnce;
            }
            for (k, v) in m.extra {
                match meta.extra.get(&k) {
                    None => {
                        meta.extra.insert(k, v);
                    }
                    Some(old) if *old == v => {}
                    Some(_) => match a.strategy {
                        Strategy::First => {}
                        Strategy::Last => {
                            meta.extra.insert(k, v);
                        }
                        Strategy::Error => {
                            return Err(CliError::Failed(format!(
                                "{}: message {mi}: _extra_ key {k:?} conflicts with an earlier input (--strategy error)",
                                path.display()
                            )))
                        }
                    },
                }
            }
            parts.push(Part::all(f, mi, descs.len()));
        }
    }
    if meta.base.is_empty() && meta.extra.is_empty() {
        return Err(usage("the inputs hold no message"));
    }
    rewrite(&meta, &parts, g, &mut sink.writer())?;
    sink.finish()
}
