//! `tgm set`: change metadata of messages, writing a new file.

use std::path::PathBuf;

use crate::error::{usage, CliResult};
use crate::input::Archive;
use crate::meta_args::{apply, parse_assignment, split_list};
use crate::output::Sink;
use crate::pipeline_args::GlobalArgs;
use crate::rewrite::{rewrite, Part};
use crate::where_clause::{SelectArgs, Selection};

/// Arguments of `tgm set`.
#[derive(clap::Args)]
#[command(
    after_help = "Assignments: [N:]KEY=VALUE or [N:]KEY:=TEXT, comma-separated; N: targets \
object N only, extra.KEY the message-level section; VALUE may be JSON ([1,2], {\"a\":1}, \"0001\").\n\n\
Selection: -w picks whole messages (every object of a message with a matching object is \
changed, as the reference does); --objects changes only the matching objects.\n\n\
Examples:\n  tgm set -s mars.expver=0001,step=12 in.tgm out.tgm\n  tgm set -s 0:mars.param=130 -w mars.class=od in.tgm out.tgm\n  \
tgm set -s mars.levelist=700 --objects mars.levelist=850 in.tgm out.tgm"
)]
pub struct Args {
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
    /// Assignments, comma-separated.
    #[arg(short = 's', long = "set", value_name = "ASSIGNMENTS", required = true)]
    pub set_values: Vec<String>,
    #[command(flatten)]
    pub select: SelectArgs,
    /// Input file (`-` for stdin).
    pub input: PathBuf,
    /// Output file (`-` for stdout).
    pub output: PathBuf,
    /// Replace OUTPUT if it exists.
    #[arg(short, long)]
    pub force: bool,
    #[command(flatten)]
    pub encode: crate::pipeline_args::EncodeFlags,
}

/// Runs `tgm set`: matching messages are re-encoded with the same
/// pipelines (their values checked unchanged); others are copied verbatim.
pub fn run(a: Args, g: &GlobalArgs) -> CliResult {
    let sel = Selection::parse(&a.select)?;
    let mut list = Vec::new();
    for s in &a.set_values {
        for part in split_list(s) {
            list.push(parse_assignment(part.trim())?);
        }
    }
    if list.is_empty() {
        return Err(usage("no assignment given"));
    }
    let f = Archive::open(&a.input)?;
    let mut sink = Sink::open(&a.output, &[&a.input], a.force)?;
    for mi in 0..f.len() {
        let (mut meta, descs) = f.header(mi)?;
        let n = descs.len();
        let (whole, keep) = (sel.whole(&meta, n), sel.objects(&meta, n));
        if !whole && keep.is_empty() {
            sink.write_all(&f.message_bytes(mi)?)?;
            continue;
        }
        let before = meta.base.clone();
        apply(&mut meta, n, &list)
            .map_err(|e| crate::error::at_path(f.label(), format!("message {mi}: {e}")))?;
        // Objects outside --objects keep their metadata.
        for o in (0..n).filter(|o| !whole && !keep.contains(o)) {
            if let (Some(b), Some(slot)) = (before.get(o), meta.base.get_mut(o)) {
                *slot = b.clone();
            }
        }
        rewrite(&meta, &[Part::all(&f, mi, n)], g, &mut sink.writer())
            .map_err(|e| crate::error::at_message(f.label(), mi, e))?;
    }
    sel.report("set");
    sink.finish()
}
