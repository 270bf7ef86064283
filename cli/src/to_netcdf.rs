//! `tgm to-netcdf`: a .tgm file written by `convert-netcdf` back to one
//! NetCDF-4 file (see [`tgm_convert::weather::netcdf`] for what is restored).

use std::path::PathBuf;

use crate::error::CliResult;
use crate::output::{check_output, is_dash, remote_url, temp_sibling, Sink};
use crate::where_clause::{keep_objects, SelectArgs, Selection};
use tgm_convert::weather::netcdf::write_netcdf;

#[derive(clap::Args)]
#[command(
    after_help = "Selection: -w picks whole messages (every variable of a message with a \
matching object, as the reference does); --objects writes only the matching variables.\n\n\
Examples:\n  tgm to-netcdf t2m.tgm -o t2m.nc\n  tgm to-netcdf era5.tgm --objects name=t2m/lat/lon -o t2m.nc"
)]
pub struct Args {
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
    /// Input .tgm file (produced by convert-netcdf; `-` for stdin).
    pub input: PathBuf,
    #[command(flatten)]
    pub select: SelectArgs,
    /// Output NetCDF-4 file (`-` for stdout).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

pub fn run(a: Args) -> CliResult {
    check_output(&a.output, &[&a.input], a.force)?;
    // netCDF-C writes to a path: for `-` and a URL, a private temporary
    // file then copied to stdout or uploaded (the upload, and whether the
    // object exists, is started before converting).
    let streamed = is_dash(&a.output) || remote_url(&a.output).is_some();
    let sink = match streamed {
        true => Some(Sink::open(&a.output, &[&a.input], a.force)?),
        false => None,
    };
    let file = crate::input::Archive::open_local_archive(&a.input)?;
    let sel = Selection::parse(&a.select)?;
    // Each object is decoded into a buffer of its own (one copy: a mapped
    // payload is paged out as it is copied); netCDF-C then takes it in
    // pieces.
    let mut messages = Vec::with_capacity(file.len());
    for m in 0..file.len() {
        let (metadata, descriptors) = file.header(m)?;
        let keep = sel.objects(&metadata, descriptors.len());
        if keep.is_empty() && !(sel.is_empty() && descriptors.is_empty()) {
            continue;
        }
        let mut objects = Vec::with_capacity(keep.len());
        file.for_each_owned_object(
            m,
            |o| keep.contains(&o),
            |_, o| {
                objects.push(o);
                Ok(())
            },
        )?;
        let mut msg = keep_objects(
            tgm::DecodedMessage {
                metadata,
                objects: Vec::new(),
            },
            &keep,
        );
        msg.objects = objects;
        messages.push(msg);
    }
    if messages.iter().all(|m| m.objects.is_empty()) && !sel.is_empty() {
        return Err(format!("{}: no object matches the selection", a.input.display()).into());
    }
    if let Some(mut sink) = sink {
        let tmp = tempfile::Builder::new().suffix(".nc").tempfile()?;
        write_netcdf(&messages, tmp.path()).map_err(|e| format!("{}: {e}", a.input.display()))?;
        std::io::copy(&mut std::fs::File::open(tmp.path())?, &mut sink.writer())?;
        return sink.finish();
    }
    // A local file: a temporary sibling renamed into place.
    let tmp = temp_sibling(&a.output, ".nc")?.into_temp_path();
    write_netcdf(&messages, &tmp).map_err(|e| format!("{}: {e}", a.input.display()))?;
    tmp.persist(&a.output)
        .map_err(|e| format!("{}: {}", a.output.display(), e.error))?;
    note!("wrote {}", a.output.display());
    Ok(())
}
