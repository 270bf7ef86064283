//! `tgm to-netcdf`: a .tgm file written by `convert-netcdf` back to one
//! NetCDF-4 file (see [`tgm_convert::weather::netcdf`] for what is restored).

use std::io::Write;
use std::path::PathBuf;

use tgm::DecodeOptions;

use crate::error::CliResult;
use crate::output::{check_output, is_dash, temp_sibling};
use tgm_convert::weather::netcdf::write_netcdf;

#[derive(clap::Args)]
#[command(after_help = "Example:\n  tgm to-netcdf t2m.tgm -o t2m.nc")]
pub struct Args {
    /// Input .tgm file (produced by convert-netcdf; `-` for stdin).
    pub input: PathBuf,
    /// Output NetCDF-4 file (`-` for stdout).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

pub fn run(a: Args) -> CliResult {
    check_output(&a.output, &[&a.input], a.force)?;
    let file = crate::input::Archive::open_local(&a.input)?;
    let opts = DecodeOptions::default();
    let mut messages = Vec::with_capacity(file.num_messages());
    for m in 0..file.num_messages() {
        let bytes = file.message_bytes(m)?;
        let msg = tgm::Message::parse(&bytes)?.decode(&opts)?;
        messages.push(msg);
    }
    // netCDF-C writes to a path: a temporary sibling renamed into place, or
    // for `-` a private temporary file copied to stdout.
    if is_dash(&a.output) {
        let tmp = tempfile::Builder::new().suffix(".nc").tempfile()?;
        write_netcdf(&messages, tmp.path()).map_err(|e| format!("{}: {e}", a.input.display()))?;
        let mut out = std::io::stdout().lock();
        std::io::copy(&mut std::fs::File::open(tmp.path())?, &mut out)?;
        out.flush()?;
        return Ok(());
    }
    let tmp = temp_sibling(&a.output, ".nc")?.into_temp_path();
    write_netcdf(&messages, &tmp).map_err(|e| format!("{}: {e}", a.input.display()))?;
    tmp.persist(&a.output)
        .map_err(|e| format!("{}: {}", a.output.display(), e.error))?;
    note!("wrote {}", a.output.display());
    Ok(())
}
