//! `tgm refs`: kerchunk (fsspec reference) JSON for a local or remote
//! archive, so that zarr and xarray read its objects in place without tgm.
//! See `spec/kerchunk.md`.

use std::path::{Path, PathBuf};

use tgm::kerchunk::RefsBuilder;

use crate::error::{usage, CliError, CliResult};
use crate::input::Archive;
use crate::output::{is_dash, Sink};
use crate::remote_input::is_remote_url;

/// Arguments of `tgm refs`.
#[derive(clap::Args)]
#[command(
    after_help = "Objects no zarr v2 codec chain can decode to tgm's values (NaN/Inf \
masks, bitmask, bfloat16, simple_packing other than 8/16/32 bits or with a decimal scale \
factor, rle/roaring, a zstd payload that is not one frame, szip streams imagecodecs cannot \
decode to the object's size) are left out, listed on stderr and under `tgm_unexpressible` in \
the group's .zattrs.\n\n\
Reading the references (numcodecs >= 0.16.2; imagecodecs for szip objects):\n  \
xr.open_dataset(\"reference://\", engine=\"zarr\", backend_kwargs={\"consolidated\": False,\n    \
\"storage_options\": {\"fo\": \"refs.json\", \"remote_protocol\": \"file\"}})\n  \
(over HTTP: \"remote_protocol\": \"http\", \"remote_options\": {\"asynchronous\": True})\n\n\
Examples:\n  tgm refs data.tgm -o refs.json\n  tgm refs https://host/data.tgm -o refs.json\n  \
tgm refs data.tgm --target https://host/data.tgm -o refs.json"
)]
pub struct Args {
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
    /// Input .tgm file or http(s)://, s3://, gs://, az:// URL.
    pub input: PathBuf,
    /// Output JSON file (`-` for stdout).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Replace the output if it exists.
    #[arg(short, long)]
    pub force: bool,
    /// Where the chunk references point (default: the URL given, or the
    /// input's absolute path).
    #[arg(long)]
    pub target: Option<String>,
}

/// Runs `tgm refs`.
pub fn run(a: Args) -> CliResult {
    if is_dash(&a.input) {
        return Err(usage(
            "refs point at the input's bytes in place: give a file or URL, not stdin",
        ));
    }
    let target = match &a.target {
        Some(t) => t.clone(),
        None => default_target(&a.input)?,
    };
    let archive = Archive::open(&a.input)?;
    let mut builder = RefsBuilder::new(target);
    for m in 0..archive.len() {
        archive.with_message(m, |msg| builder.add_message(m, msg))?;
    }
    let refs = builder.finish();
    for u in &refs.unexpressible {
        eprintln!(
            "{}: message {} object {} ({}) left out: {}",
            a.input.display(),
            u.message,
            u.object,
            u.variable,
            u.reason
        );
    }
    let mut sink = Sink::open(&a.output, &[&a.input], a.force)?;
    sink.write_all(refs.to_json().as_bytes())?;
    sink.write_all(b"\n")?;
    sink.finish()
}

/// The URL as given, or the local file's absolute path.
fn default_target(input: &Path) -> CliResult<String> {
    if let Some(url) = input.to_str().filter(|s| is_remote_url(s)) {
        return Ok(url.to_owned());
    }
    let abs = std::fs::canonicalize(input)
        .map_err(|e| CliError::Failed(format!("{}: {e}", input.display())))?;
    abs.to_str().map(str::to_owned).ok_or_else(|| {
        CliError::Failed(format!(
            "{}: the path is not UTF-8, which JSON references cannot hold; give --target",
            input.display()
        ))
    })
}
