//! `tgm to-grib`: a .tgm file written by `convert-grib` back to GRIB2.

use std::path::PathBuf;

use crate::error::{CliError, CliResult};
use crate::input::Archive;
use crate::output::Sink;
use crate::where_clause::{SelectArgs, Selection};
use tgm_convert::weather::export::{
    in_object, object_pieces_to_grib, object_to_grib, with_header, WriteOptions,
};
use tgm_convert::weather::GribError;

#[derive(clap::Args)]
#[command(
    after_help = "Selection: -w picks whole messages (every field of a message with a matching \
field, as the reference does); --objects writes only the matching fields.\n\n\
Examples:\n  tgm to-grib era5.tgm -o era5.grib2\n  \
tgm to-grib era5.tgm --objects mars.param=167 -o t2m.grib2\n  tgm to-grib era5.tgm -o - | grib_ls -"
)]
pub struct Args {
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
    /// Input .tgm file (produced by convert-grib; `-` for stdin).
    pub input: PathBuf,
    #[command(flatten)]
    pub select: SelectArgs,
    /// Output GRIB file (`-` for stdout).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
    /// ecCodes packingType to write every field with (e.g. grid_simple),
    /// in place of its source's; a field ecCodes cannot pack so is refused.
    #[arg(long, value_name = "TYPE")]
    pub packing: Option<String>,
}

pub fn run(a: Args) -> CliResult {
    let file = crate::input::Archive::open_local_archive(&a.input)?;
    let sel = Selection::parse(&a.select)?;
    let write = WriteOptions {
        packing: a.packing.clone(),
    };
    // Each selected object is decoded, written as one GRIB message straight
    // to the output, and dropped before the next; the output file appears
    // only when all are written.
    let mut sink = Sink::open(&a.output, &[&a.input], a.force)?;
    let (mut written, mut bytes) = (0usize, 0u64);
    for m in 0..file.len() {
        let (meta, descriptors) = file.header(m)?;
        let keep = sel.objects(&meta, descriptors.len());
        let mut out = sink.writer();
        file.for_each_undecoded(
            m,
            |o| keep.contains(&o),
            |obj, decode| {
                let o = obj.index();
                let entry = meta
                    .base
                    .get(o)
                    .ok_or_else(|| GribError::Invalid(format!("object {o} has no base entry")))
                    .and_then(|e| with_header(e, &meta.extra));
                // A compressed object decoding in pieces is read a step at a
                // time on each pass; any other is decoded whole.
                let done = entry.and_then(|e| {
                    match object_pieces_to_grib(&e, obj, decode, &write, &mut out) {
                        Some(done) => done,
                        None => {
                            let data = Archive::decode_paging_out(obj, decode)?;
                            object_to_grib(&e, obj.descriptor(), &data, &write, &mut out)
                        }
                    }
                });
                bytes += done.map_err(|e| match in_object(o, e) {
                    GribError::Write(e) => CliError::from(e),
                    e => CliError::Failed(format!("message {m}: {e}")),
                })?;
                written += 1;
                Ok(())
            },
        )?;
    }
    if written == 0 && !sel.is_empty() {
        return Err(format!("{}: no object matches the selection", a.input.display()).into());
    }
    sink.finish()?;
    note!("wrote {bytes} bytes to {}", a.output.display());
    Ok(())
}
