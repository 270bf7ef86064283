//! `tgm split`: every object into its own single-object message and file.

use std::io::Write;
use std::path::{Path, PathBuf};

use tgm::GlobalMetadata;

use crate::error::{usage, CliResult};
use crate::input::Archive;
use crate::output::{FileSet, Named};
use crate::pipeline_args::GlobalArgs;
use crate::rewrite::{encode_same, encode_stored, has_masks};

/// Arguments of `tgm split`.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  tgm split -o 'part_[index].tgm' in.tgm")]
pub struct Args {
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
    /// Input file (`-` for stdin).
    pub input: PathBuf,
    /// Output template; `[index]` is replaced by 0, 1, ... (required with more than one object).
    #[arg(short, long)]
    pub output: String,
    /// Replace outputs that exist.
    #[arg(short, long)]
    pub force: bool,
    #[command(flatten)]
    pub encode: crate::pipeline_args::EncodeFlags,
}

/// Runs `tgm split`. All outputs appear together when every one is written.
pub fn run(a: Args, g: &GlobalArgs) -> CliResult {
    let f = Archive::open(&a.input)?;
    let mut set = FileSet::default();
    let mut index = 0usize;
    for mi in 0..f.len() {
        let (meta, _) = f.header(mi)?;
        // Stored payloads are wrapped again; with masks, objects are decoded once.
        let stored = f.stored_objects(mi)?;
        let decoded = match stored.iter().any(has_masks) {
            true => Some(f.decode_message(mi, g.threads)?),
            false => None,
        };
        for (oi, obj) in stored.iter().enumerate() {
            if index > 0 && !a.output.contains("[index]") {
                return Err(usage(
                    "the input has more than one object: put [index] in the output name",
                ));
            }
            let mut one =
                GlobalMetadata::with_base(meta.base.get(oi).cloned().into_iter().collect());
            one.extra = meta.extra.clone();
            let name = PathBuf::from(a.output.replace("[index]", &index.to_string()));
            let file = set.create(&name, &[Path::new(&a.input)], a.force)?;
            let mut out = Named::new(file, &name);
            match &decoded {
                Some(d) => out.write_all(&encode_same(&one, &[&d[oi]], g)?)?,
                None => encode_stored(&one, &[obj], g, &mut out)?,
            };
            index += 1;
        }
    }
    let n = set.commit()?;
    note!("wrote {n} file(s)");
    Ok(())
}
