//! `tgm index`: one catalogue file for archives tgm did not write or that
//! sit on read-only storage, and for many archives at once, so that they
//! open without a scan (`spec/files.md` §9.5).

use std::path::{Path, PathBuf};
use tgm::file::archive_catalogue::{catalogue_concurrently, location_for, ArchiveCatalogue};

use crate::error::{usage, CliError, CliResult};
use crate::input::Archive;
use crate::output::{check_output, Sink};

/// Arguments of `tgm index`.
#[derive(clap::Args)]
#[command(
    after_help = "A catalogue file lists each archive by location, size, ETag and the \
digests of its first and last bytes, with every message's metadata and every object's \
descriptor. Named as an input (`tgm ls era5.tgmc`, `xr.open_dataset(\"era5.tgmc\", \
engine=\"tgm\")`) it stands for every archive it lists, which open from it with no request \
to them; reads of their objects are pinned to the recorded ETags. With `--catalogue CAT`, \
the archives a command names are checked against CAT first (one that no longer matches is \
ignored, with a note, and scanned).\n\n\
Examples:\n  tgm index era5.tgm -o era5.tgmc\n  tgm index a.tgm b.tgm -o both.tgmc\n  \
tgm index 's3://bucket/era5/*.tgm' -o s3://bucket/era5.tgmc"
)]
pub struct Args {
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
    /// Archives: local files, URLs, or `s3://`/`gs://`/`az://` folders with a
    /// pattern in the last segment (`*.tgm`).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// The catalogue file to write (`.tgmc`; a local path or a URL).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Replace the output if it exists.
    #[arg(short, long)]
    pub force: bool,
}

/// Runs `tgm index`: every archive is opened (from its own catalogue when
/// it has one) before anything is written; one that is not wholly
/// complete messages is refused, naming it.
pub fn run(a: Args) -> CliResult {
    if !crate::catalogue_input::is_catalogue_file(&a.output) {
        return Err(usage(format!(
            "{}: a catalogue file's name ends in .tgmc (readers take it as a catalogue by that)",
            a.output.display()
        )));
    }
    let inputs = expand(&a.inputs)?;
    let refs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    check_output(&a.output, &refs, a.force)?;
    let cats = catalogue_each(&inputs, &a.output)?;
    let mut messages = Vec::with_capacity(cats.len());
    let (mut listed, mut objects) = (0usize, 0usize);
    for (p, cat) in inputs.iter().zip(&cats) {
        let count = |c: &tgm::file::catalogue::CatalogueMessage| c.objects.as_ref().map(Vec::len);
        listed += cat.catalogue.listed().count();
        objects += cat
            .catalogue
            .messages
            .iter()
            .filter_map(count)
            .sum::<usize>();
        messages.push(
            cat.to_message()
                .map_err(|e| CliError::Failed(format!("{}: {e}", p.display())))?,
        );
    }
    let mut sink = Sink::open(&a.output, &refs, a.force)?;
    for m in &messages {
        sink.write_all(m)?;
    }
    sink.finish()?;
    let bytes: usize = messages.iter().map(Vec::len).sum();
    note!(
        "catalogued {} archive(s), {listed} message(s), {objects} object(s) in {} ({bytes} bytes)",
        inputs.len(),
        a.output.display()
    );
    Ok(())
}

/// The catalogue of every archive in `inputs`, in order, named as the
/// catalogue file `out` will name them, opened many at a time
/// ([`catalogue_concurrently`]); the first failure in order is the error.
fn catalogue_each(inputs: &[PathBuf], out: &Path) -> CliResult<Vec<ArchiveCatalogue>> {
    let bar = crate::progress::count_bar(inputs.len() as u64, "cataloguing");
    let out_text = out.to_string_lossy();
    let one = |i: usize| -> CliResult<ArchiveCatalogue> {
        let p = &inputs[i];
        let location = location_for(&p.to_string_lossy(), &out_text)
            .map_err(|e| crate::error::at_path(p, e))?;
        Archive::open(p)?.catalogue_apart(&location)
    };
    let cats = catalogue_concurrently(inputs.len(), one, || bar.inc(1));
    bar.finish_and_clear();
    cats
}

/// The archives named: URLs with a pattern listed (sorted), the rest as
/// given; an empty listing is an error.
fn expand(inputs: &[PathBuf]) -> CliResult<Vec<PathBuf>> {
    if inputs.iter().any(|p| crate::output::is_dash(p)) {
        return Err(usage(
            "a catalogue names its archives: give files or URLs, not stdin",
        ));
    }
    let named: Vec<String> = inputs
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    Ok(listed(named)?.into_iter().map(PathBuf::from).collect())
}

/// `named` with URLs holding a pattern replaced by the objects they name.
#[cfg(feature = "remote")]
fn listed(named: Vec<String>) -> CliResult<Vec<String>> {
    if !named
        .iter()
        .any(|n| tgm::file::is_remote_url(n) && tgm::remote::is_pattern(n))
    {
        return Ok(named);
    }
    let opts = crate::remote_input::remote_options()?;
    tgm::remote::expand_patterns(&named, &opts).map_err(|e| CliError::Failed(e.to_string()))
}

#[cfg(not(feature = "remote"))]
fn listed(named: Vec<String>) -> CliResult<Vec<String>> {
    Ok(named)
}
