//! `tgm to-netcdf`: a .tgm file written by `convert-netcdf` back to one
//! NetCDF-4 file (see [`tgm_convert::weather::netcdf`] for what is restored).

use std::path::{Path, PathBuf};

use tgm::DecodeOptions;

use crate::error::CliResult;
use crate::output::check_output;
use tgm_convert::util::open_file;
use tgm_convert::weather::netcdf::write_netcdf;

#[derive(clap::Args)]
pub struct Args {
    /// Input .tgm file (produced by convert-netcdf).
    pub input: PathBuf,
    /// Output NetCDF-4 file.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

pub fn run(a: Args) -> CliResult {
    check_output(&a.output, &[&a.input], a.force)?;
    let file = open_file(&a.input)?;
    let opts = DecodeOptions::default();
    let mut messages = Vec::with_capacity(file.num_messages());
    for m in 0..file.num_messages() {
        let bytes = file.message_bytes(m)?;
        let msg = tgm::Message::parse(&bytes)?.decode(&opts)?;
        messages.push(msg);
    }
    // netCDF-C writes to a path: a temporary sibling renamed into place.
    let dir = match a.output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".tgm-partial-")
        .suffix(".nc")
        .tempfile_in(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .into_temp_path();
    write_netcdf(&messages, &tmp).map_err(|e| format!("{}: {e}", a.input.display()))?;
    tmp.persist(&a.output)
        .map_err(|e| format!("{}: {}", a.output.display(), e.error))?;
    eprintln!("wrote {}", a.output.display());
    Ok(())
}
