//! `tgm set`: change metadata of messages, writing a new file.

use std::path::PathBuf;

use crate::error::{usage, CliResult};
use crate::input::Archive;
use crate::meta_args::{apply, parse_assignment, split_list};
use crate::output::Sink;
use crate::pipeline_args::GlobalArgs;
use crate::rewrite::encode_same;
use crate::where_clause::Where;

/// Arguments of `tgm set`.
#[derive(clap::Args)]
#[command(
    after_help = "Assignments: [N:]KEY=VALUE or [N:]KEY:=TEXT, comma-separated; N: targets \
object N only, extra.KEY the message-level section; VALUE may be JSON ([1,2], {\"a\":1}, \"0001\").\n\n\
Examples:\n  tgm set -s mars.expver=0001,step=12 in.tgm out.tgm\n  tgm set -s 0:mars.param=130 -w mars.class=od in.tgm out.tgm"
)]
pub struct Args {
    /// Assignments, comma-separated.
    #[arg(short = 's', long = "set", value_name = "ASSIGNMENTS", required = true)]
    pub set_values: Vec<String>,
    /// Selects whole messages (as the reference does): those with an object
    /// matching; every object of such a message is changed (see `tgm ls --help`).
    #[arg(short = 'w', long = "where", value_name = "CLAUSE")]
    pub where_clause: Vec<String>,
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
    let filter = Where::parse(&a.where_clause)?;
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
        if !filter.matches_message(&meta, descs.len()) {
            sink.write_all(&f.message_bytes(mi)?)?;
            continue;
        }
        apply(&mut meta, descs.len(), &list)
            .map_err(|e| crate::error::at_path(f.label(), format!("message {mi}: {e}")))?;
        let objects = f.decode_message(mi, g.threads)?;
        let refs: Vec<_> = objects.iter().collect();
        let msg = encode_same(&meta, &refs, g)
            .map_err(|e| crate::error::at_path(f.label(), format!("message {mi}: {e}")))?;
        sink.write_all(&msg)?;
    }
    sink.finish()
}
