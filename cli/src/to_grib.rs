//! `tgm to-grib`: a .tgm file written by `convert-grib` back to GRIB2.

use std::path::PathBuf;

use tgm::DecodeOptions;

use crate::output::write_file;
use crate::where_clause::{keep_objects, SelectArgs, Selection};
use tgm_convert::util::CliResult;
use tgm_convert::weather::export::{message_to_grib_with, WriteOptions};

#[derive(clap::Args)]
#[command(
    after_help = "Selection: -w picks whole messages (every field of a message with a matching \
field, as the reference does); --objects writes only the matching fields.\n\n\
Examples:\n  tgm to-grib era5.tgm -o era5.grib2\n  \
tgm to-grib era5.tgm --objects mars.param=167 -o t2m.grib2\n  tgm to-grib era5.tgm -o - | grib_ls -"
)]
pub struct Args {
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
    let file = crate::input::Archive::open_local(&a.input)?;
    let opts = DecodeOptions::default().progress(crate::progress::object_hook("decoding"));
    let sel = Selection::parse(&a.select)?;
    let write = WriteOptions {
        packing: a.packing.clone(),
    };
    let mut out = Vec::new();
    let mut written = 0;
    for m in 0..file.num_messages() {
        let bytes = file.message_bytes(m)?;
        let parsed = tgm::Message::parse(&bytes)?;
        let keep = sel.objects(&parsed.metadata()?, parsed.num_objects());
        if keep.is_empty() {
            continue;
        }
        written += keep.len();
        let msg = keep_objects(parsed.decode(&opts)?, &keep);
        out.extend_from_slice(
            &message_to_grib_with(&msg, &write).map_err(|e| format!("message {m}: {e}"))?,
        );
    }
    if written == 0 && !sel.is_empty() {
        return Err(format!("{}: no object matches the selection", a.input.display()).into());
    }
    write_file(&a.output, &[&a.input], &out, a.force)?;
    note!("wrote {} bytes to {}", out.len(), a.output.display());
    Ok(())
}
