//! `tgm copy`: copy (a selection of) messages verbatim, optionally split
//! into files named by metadata values; with `--objects`, messages keep
//! only the selected objects (re-encoded with their stored pipelines).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use tgm::GlobalMetadata;

use crate::error::{CliError, CliResult, WithPath};
use crate::fmt::cell;
use crate::input::Archive;
use crate::output::{is_dash, FileSet, Sink};
use crate::pipeline_args::GlobalArgs;
use crate::rewrite::{rewrite, Part};
use crate::where_clause::{SelectArgs, Selection};

/// Arguments of `tgm copy`.
#[derive(clap::Args)]
#[command(
    after_help = "Selection: -w picks whole messages (every object of a message with a matching \
object is copied, as the reference does); --objects keeps only the matching objects.\n\n\
Examples:\n  tgm copy -w mars.param=2t in.tgm t2m.tgm\n  tgm copy --objects mars.param=130 in.tgm t.tgm\n  \
tgm copy in.tgm 'by_param_[mars.param].tgm'"
)]
pub struct Args {
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
    #[command(flatten)]
    pub select: SelectArgs,
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

/// A selected message: its metadata, object count and bytes.
type Selected<'f> = (GlobalMetadata, usize, Cow<'f, [u8]>);

/// Message `mi` as selected (its metadata, object count and bytes):
/// verbatim (borrowed from the archive's mapping) when whole, its selected objects re-encoded when only some
/// are, `None` when none.
fn selected_message<'f>(
    f: &'f Archive,
    mi: usize,
    sel: &Selection,
    g: &GlobalArgs,
) -> CliResult<Option<Selected<'f>>> {
    let (meta, descs) = f.header(mi)?;
    let keep = sel.objects(&meta, descs.len());
    if sel.whole(&meta, descs.len()) {
        return Ok(Some((meta, descs.len(), f.message_bytes(mi)?)));
    }
    if keep.is_empty() {
        return Ok(None);
    }
    let mut sub = GlobalMetadata::with_base(keep.iter().map(|&o| meta.base[o].clone()).collect());
    sub.extra = meta.extra.clone();
    sub.layout = meta.layout;
    let n = keep.len();
    let part = Part {
        archive: f,
        message: mi,
        objects: keep,
    };
    let mut msg = Vec::new();
    rewrite(&sub, &[part], g, &mut msg)
        .map_err(|e| crate::error::at_path(f.label(), format!("message {mi}: {e}")))?;
    Ok(Some((sub, n, Cow::Owned(msg))))
}

/// Runs `tgm copy`. All outputs appear together when every message is written.
pub fn run(a: Args, g: &GlobalArgs) -> CliResult {
    let sel = Selection::parse(&a.select)?;
    let f = Archive::open(&a.input)?;
    let inputs = [a.input.as_path()];
    if !a.output.contains('[') {
        let mut sink = Sink::open(Path::new(&a.output), &inputs, a.force)?;
        for mi in 0..f.len() {
            if let Some((_, _, bytes)) = selected_message(&f, mi, &sel, g)? {
                sink.write_all(&bytes)?;
            }
        }
        sel.report("copy");
        return sink.finish();
    }
    let mut set = FileSet::default();
    for mi in 0..f.len() {
        let Some((meta, n, bytes)) = selected_message(&f, mi, &sel, g)? else {
            continue;
        };
        let name = PathBuf::from(
            expand(&a.output, &meta, n)
                .map_err(|e| crate::error::at_path(f.label(), format!("message {mi}: {e}")))?,
        );
        if is_dash(&name) {
            return Err(crate::error::usage("a split output cannot be stdout"));
        }
        let file = match set.get(&name) {
            Some(file) => file,
            None => set.create(&name, &inputs, a.force)?,
        };
        file.write_all(&bytes).at(&name)?;
    }
    sel.report("copy");
    let n = set.commit()?;
    note!("wrote {n} file(s)");
    Ok(())
}
