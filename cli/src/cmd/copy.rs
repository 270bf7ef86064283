//! `tgm copy`: copy (a selection of) messages verbatim, optionally split
//! into files named by metadata values.

use std::io::Write;
use std::path::{Path, PathBuf};

use tgm::GlobalMetadata;

use crate::error::{CliError, CliResult, WithPath};
use crate::fmt::cell;
use crate::input::Archive;
use crate::output::{is_dash, FileSet, Sink};
use crate::where_clause::Where;

/// Arguments of `tgm copy`.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  tgm copy -w mars.param=2t in.tgm t2m.tgm\n  tgm copy in.tgm 'by_param_[mars.param].tgm'"
)]
pub struct Args {
    /// Selects whole messages (as the reference does): those with an object
    /// matching; all their objects are copied (see `tgm ls --help`).
    #[arg(short = 'w', long = "where", value_name = "CLAUSE")]
    pub where_clause: Vec<String>,
    /// Input file (`-` for stdin).
    pub input: PathBuf,
    /// Output path; `[KEY]` is replaced by each message's value of KEY
    /// (from its first object), splitting the output by value.
    pub output: String,
    /// Replace outputs that exist.
    #[arg(short, long)]
    pub force: bool,
}

/// Replaces every `[KEY]` in `template` with the message's value of KEY.
pub fn expand(template: &str, meta: &GlobalMetadata, num_objects: usize) -> CliResult<String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('[') {
        let close = rest[open..]
            .find(']')
            .map(|c| open + c)
            .ok_or_else(|| crate::error::usage(format!("unclosed [ in {template:?}")))?;
        out.push_str(&rest[..open]);
        let key = &rest[open + 1..close];
        crate::meta_args::key_path(key)?;
        let obj = (num_objects > 0).then_some(0);
        let v = meta.lookup(obj, key).ok_or_else(|| {
            CliError::Failed(format!("key {key:?} (in the output name) not found"))
        })?;
        let text = cell(v);
        if text.contains(['/', '\0']) || text == ".." || text.is_empty() {
            return Err(CliError::Failed(format!(
                "value {text:?} of {key:?} cannot be part of a file name"
            )));
        }
        out.push_str(&text);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Runs `tgm copy`. All outputs appear together when every message is written.
pub fn run(a: Args) -> CliResult {
    let filter = Where::parse(&a.where_clause)?;
    let f = Archive::open(&a.input)?;
    let inputs = [a.input.as_path()];
    if !a.output.contains('[') {
        let mut sink = Sink::open(Path::new(&a.output), &inputs, a.force)?;
        for mi in 0..f.len() {
            let (meta, descs) = f.header(mi)?;
            if filter.matches_message(&meta, descs.len()) {
                sink.write_all(&f.message_bytes(mi)?)?;
            }
        }
        return sink.finish();
    }
    let mut set = FileSet::default();
    for mi in 0..f.len() {
        let (meta, descs) = f.header(mi)?;
        if !filter.matches_message(&meta, descs.len()) {
            continue;
        }
        let name = PathBuf::from(
            expand(&a.output, &meta, descs.len())
                .map_err(|e| crate::error::at_path(f.label(), format!("message {mi}: {e}")))?,
        );
        if is_dash(&name) {
            return Err(crate::error::usage("a split output cannot be stdout"));
        }
        let bytes = f.message_bytes(mi)?;
        let file = match set.get(&name) {
            Some(file) => file,
            None => set.create(&name, &inputs, a.force)?,
        };
        file.write_all(&bytes).at(&name)?;
    }
    let n = set.commit()?;
    note!("wrote {n} file(s)");
    Ok(())
}
