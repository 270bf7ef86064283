//! `tgm to-grib`: a .tgm file written by `convert-grib` back to GRIB2.

use std::path::PathBuf;

use tgm::DecodeOptions;

use crate::output::write_file;
use tgm_convert::util::CliResult;
use tgm_convert::weather::export::message_to_grib;

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  tgm to-grib era5.tgm -o era5.grib2\n  tgm to-grib era5.tgm -o - | grib_ls -"
)]
pub struct Args {
    /// Input .tgm file (produced by convert-grib; `-` for stdin).
    pub input: PathBuf,
    /// Output GRIB file (`-` for stdout).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

pub fn run(a: Args) -> CliResult {
    let file = crate::input::Archive::open_local(&a.input)?;
    let opts = DecodeOptions::default();
    let mut out = Vec::new();
    for m in 0..file.num_messages() {
        let bytes = file.message_bytes(m)?;
        let msg = tgm::Message::parse(&bytes)?.decode(&opts)?;
        out.extend_from_slice(&message_to_grib(&msg).map_err(|e| format!("message {m}: {e}"))?);
    }
    write_file(&a.output, &[&a.input], &out, a.force)?;
    note!("wrote {} bytes to {}", out.len(), a.output.display());
    Ok(())
}
