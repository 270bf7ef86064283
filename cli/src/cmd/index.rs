//! `tgm index`: one catalogue file for archives tgm did not write or that
//! sit on read-only storage, and for many archives at once, so that they
//! open without a scan (`spec/files.md` §9.5).

use std::path::{Path, PathBuf};

use crate::error::{usage, CliError, CliResult};
use crate::input::Archive;
use crate::output::{check_output, Sink};
use crate::remote_input::is_remote_url;

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
    let mut messages = Vec::with_capacity(inputs.len());
    let (mut listed, mut objects) = (0usize, 0usize);
    for p in &inputs {
        let archive = Archive::open(p)?;
        let cat = archive.catalogue_apart(&location(p, &a.output)?)?;
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

/// The archives named: URLs with a pattern listed (sorted), the rest as
/// given; an empty listing is an error.
fn expand(inputs: &[PathBuf]) -> CliResult<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in inputs {
        let text = p.to_string_lossy();
        if crate::output::is_dash(p) {
            return Err(usage(
                "a catalogue names its archives: give files or URLs, not stdin",
            ));
        }
        match listed(&text)? {
            Some(found) if found.is_empty() => {
                return Err(CliError::Failed(format!("{text}: no object matches")));
            }
            Some(found) => out.extend(found.into_iter().map(PathBuf::from)),
            None => out.push(p.clone()),
        }
    }
    Ok(out)
}

/// The objects a URL with a pattern in its last segment names; `None`
/// for anything else.
#[cfg(feature = "remote")]
fn listed(text: &str) -> CliResult<Option<Vec<String>>> {
    if !(is_remote_url(text) && tgm::remote::is_pattern(text)) {
        return Ok(None);
    }
    let opts = crate::remote_input::remote_options()?;
    let found =
        tgm::remote::list_matching(text, &opts).map_err(|e| CliError::Failed(e.to_string()))?;
    Ok(Some(found))
}

#[cfg(not(feature = "remote"))]
fn listed(_: &str) -> CliResult<Option<Vec<String>>> {
    Ok(None)
}

/// How the catalogue at `out` names the archive `p`: a URL as given; a
/// local path relative to the catalogue's folder when it lies inside it
/// (so the two can move together), else absolute.
fn location(p: &Path, out: &Path) -> CliResult<String> {
    let text = p.to_string_lossy();
    if is_remote_url(&text) {
        return Ok(text.into_owned());
    }
    let abs = p
        .canonicalize()
        .map_err(|e| CliError::Failed(format!("{}: {e}", p.display())))?;
    if !is_remote_url(&out.to_string_lossy()) {
        let folder = out
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if let Ok(dir) = folder.canonicalize() {
            if let Ok(rel) = abs.strip_prefix(&dir) {
                return Ok(rel.to_string_lossy().into_owned());
            }
        }
    }
    Ok(abs.to_string_lossy().into_owned())
}
