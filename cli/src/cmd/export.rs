//! `tgm export`: every object as a `.npy` file, plus a JSON sidecar per
//! message (`m<N>.json`) holding its metadata, so `tgm import DIR` restores
//! it. All files appear together when every one is complete.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use tgm::npy::{npy_layout, write_npy};

use crate::error::{CliError, CliResult, WithPath};
use crate::fmt::descriptor_json;
use crate::input::{finish_read, Archive};
use crate::output::FileSet;
use crate::progress::bytes_bar;
use crate::sidecar::{Sidecar, SidecarObject};
use crate::where_clause::{SelectArgs, Selection};

/// Arguments of `tgm export`.
#[derive(clap::Args)]
#[command(
    after_help = "Files: m<N>_<name>.npy when the object has a `name` key, else \
m<N>_o<I>.npy, in the stored byte order; m<N>.json per message.\n\n\
Selection: -w picks whole messages (as the reference does); --objects exports only the \
matching objects.\n\nExamples:\n  tgm export out.tgm -o dir/\n  tgm export --objects mars.param=130 out.tgm -o t/"
)]
pub struct Args {
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
    /// Input .tgm file (`-` for stdin).
    pub input: PathBuf,
    /// Output directory (created if missing; not `-`).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Replace files that exist in the output directory.
    #[arg(short, long)]
    pub force: bool,
    /// Skip frame-hash verification (for salvage work).
    #[arg(long)]
    pub no_verify: bool,
    /// Export PALETTE COLOR images (from DICOM) as RGB through their lookup
    /// tables: a trailing axis of 3 samples, uint8 or uint16.
    #[arg(long)]
    pub apply_lut: bool,
    #[command(flatten)]
    pub select: SelectArgs,
}

/// The object as RGB through its palette when `--apply-lut` asks and its
/// metadata holds one (`base[i].dicom.palette`).
#[cfg(feature = "dicom")]
fn through_lut(
    a: &Args,
    entry: &tgm::Map,
    d: &tgm::ObjectDescriptor,
    data: &[u8],
) -> CliResult<Option<(tgm::ObjectDescriptor, Vec<u8>)>> {
    let Some(palette) = entry.get("dicom").and_then(|m| m.get("palette")) else {
        return Ok(None);
    };
    if !a.apply_lut {
        return Ok(None);
    }
    let (dtype, rgb) = tgm_convert::medical::dicom_palette::apply(palette, d.dtype, data)
        .map_err(|e| CliError::Failed(format!("{}: {e}", a.input.display())))?;
    let mut shape = d.shape.clone();
    shape.push(3);
    Ok(Some((tgm::ObjectDescriptor::new(dtype, shape), rgb)))
}

#[cfg(not(feature = "dicom"))]
fn through_lut(
    a: &Args,
    _: &tgm::Map,
    _: &tgm::ObjectDescriptor,
    _: &[u8],
) -> CliResult<Option<(tgm::ObjectDescriptor, Vec<u8>)>> {
    if a.apply_lut {
        return Err(CliError::Failed(
            "--apply-lut needs tgm built with the dicom feature".into(),
        ));
    }
    Ok(None)
}

/// A file-name-safe object name.
fn safe_name(meta: &tgm::Map) -> Option<String> {
    let n = meta.get("name")?.as_text()?;
    let ok = !n.is_empty()
        && n.len() <= 200
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+'))
        && !n.starts_with('.');
    ok.then(|| n.to_string())
}

/// Runs `tgm export`.
pub fn run(a: Args) -> CliResult {
    crate::output::refuse_dash_dir(&a.output)?;
    let sel = Selection::parse(&a.select)?;
    let f = Archive::open_readable(&a.input)?;
    if f.len() == 0 {
        if f.report_damage() {
            return Err(CliError::Reported);
        }
        return Err(CliError::Failed(format!(
            "{}: no Tensogram message found",
            f.label().display()
        )));
    }
    // A URL is a prefix: its objects are `URL/name`, uploaded together.
    let local = crate::output::remote_url(&a.output).is_none();
    if local && a.output.exists() && !a.output.is_dir() {
        return Err(CliError::Failed(format!(
            "{}: not a directory",
            a.output.display()
        )));
    }
    let created = local && !a.output.exists();
    if local {
        std::fs::create_dir_all(&a.output).at(&a.output)?;
    }
    let result = export_all(&a, &f, &sel);
    if result.is_err() && created {
        let _ = std::fs::remove_dir(&a.output);
    }
    let (objects, messages) = result?;
    sel.report("export");
    note!(
        "exported {objects} object(s) from {messages} message(s) to {}",
        a.output.display()
    );
    finish_read(&mut std::io::sink(), std::slice::from_ref(&f))
}

fn export_all(a: &Args, f: &Archive, sel: &Selection) -> CliResult<(usize, usize)> {
    let inputs = [a.input.as_path()];
    let mut set = FileSet::default();
    let total = f.size();
    let bar = bytes_bar(total, "exporting");
    let (mut objects, mut messages) = (0, 0);
    for mi in 0..f.len() {
        let (meta, descs) = f.header(mi)?;
        let keep = sel.objects(&meta, descs.len());
        if keep.is_empty() {
            continue;
        }
        messages += 1;
        let mut side = Sidecar {
            message: mi,
            extra: meta.extra.clone(),
            objects: Vec::new(),
        };
        f.for_each_object(
            mi,
            !a.no_verify,
            |o| keep.contains(&o),
            |oi, d, data| {
                let entry = meta.caller_entry(oi);
                let name = match safe_name(&entry) {
                    Some(n) => format!("m{mi}_{n}.npy"),
                    None => format!("m{mi}_o{oi}.npy"),
                };
                let name = if side.objects.iter().any(|o| o.file == name) {
                    format!("m{mi}_o{oi}.npy")
                } else {
                    name
                };
                let path = a.output.join(&name);
                let rgb = through_lut(a, &entry, d, data)?;
                let (d, data) = match &rgb {
                    Some((rd, rb)) => (rd, &rb[..]),
                    None => (d, data),
                };
                let layout = npy_layout(d.dtype, &d.shape, tgm::ByteOrder::native());
                let file = set.create(&path, &inputs, a.force)?;
                let mut w = BufWriter::with_capacity(1 << 20, file);
                w.write_all(&write_npy(&layout, &[])).at(&path)?;
                for chunk in data.chunks(8 << 20) {
                    w.write_all(chunk).at(&path)?;
                    bar.inc(chunk.len() as u64);
                }
                w.flush().at(&path)?;
                if let Some(note) = layout.note {
                    bar.suspend(|| note!("note: {}: {note}", path.display()));
                }
                side.objects.push(SidecarObject {
                    file: name,
                    metadata: entry,
                    descriptor: descriptor_json(d),
                });
                objects += 1;
                Ok(())
            },
        )?;
        let path = a.output.join(format!("m{mi}.json"));
        set.create(&path, &inputs, a.force)?
            .write_all(side.to_json().as_bytes())
            .at(&path)?;
    }
    bar.finish_and_clear();
    set.commit()?;
    if objects == 0 {
        return Err(CliError::Failed(format!(
            "{}: no object is selected; nothing written",
            f.label().display()
        )));
    }
    Ok((objects, messages))
}
