//! `tgm convert-dicom`: DICOM series into one Tensogram message
//! (README "Medical imaging").

use std::path::PathBuf;

use crate::output::write_file;
use tgm_convert::medical::dicom::dicom_to_objects;
use tgm_convert::medical::dicom_write::object_to_dicom;
use tgm_convert::medical::pipeline::PipelineArgs;
use tgm_convert::util::CliResult;

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  tgm convert-dicom series/ -o ct.tgm\n  tgm convert-dicom series/ -o ct.tgm --deidentify --level 9"
)]
pub struct Args {
    /// DICOM files, or directories whose files are all DICOM images.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output .tgm file.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Drop patient-identifying attributes and replace UIDs
    /// (subset of the DICOM basic de-identification profile).
    #[arg(long)]
    pub deidentify: bool,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

pub fn run(a: Args) -> CliResult {
    crate::pipeline_args::check_medical_level(&a.pipeline)?;
    let ((objects, meta), report) = dicom_to_objects(&a.inputs, &a.pipeline, a.deidentify)?;
    let refs: Vec<_> = objects.iter().map(|(d, b)| (d, &b[..])).collect();
    let msg = tgm::encode(
        &meta,
        &refs,
        &tgm_convert::medical::pipeline::encode_options(),
    )?;
    let inputs: Vec<&std::path::Path> = a.inputs.iter().map(|p| p.as_path()).collect();
    write_file(&a.output, &inputs, &msg, a.force)?;
    if a.deidentify {
        note!(
            "de-identified: removed [{}], replaced [{}]",
            report.removed.join(", "),
            report.replaced.join(", ")
        );
    }
    note!(
        "wrote {} series, {} bytes, to {}",
        objects.len(),
        msg.len(),
        a.output.display()
    );
    Ok(())
}

#[derive(clap::Args)]
#[command(after_help = "Example:\n  tgm to-dicom ct.tgm -o slices/")]
pub struct ToArgs {
    #[command(flatten)]
    pub pick: tgm_convert::medical::ObjectPick,
    /// Output directory (not `-`); slice files are named slice_NNNNN.dcm
    /// (an RT Dose grid is one multi-frame file, slice_00000.dcm).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Replace slice files that exist.
    #[arg(long)]
    pub force: bool,
}

pub fn to_dicom(a: ToArgs) -> CliResult {
    crate::output::refuse_dash_dir(&a.output)?;
    let file = crate::input::Archive::open_local(&a.pick.input)?;
    let (d, data, entry) = a.pick.decode_from(&file)?;
    let files =
        object_to_dicom(&d, &data, &entry).map_err(|e| format!("{}: {e}", a.pick.describe()))?;
    std::fs::create_dir_all(&a.output)
        .map_err(|e| format!("cannot create {}: {e}", a.output.display()))?;
    // Every slice is written before any is renamed into place.
    let mut set = crate::output::FileSet::default();
    for (i, bytes) in files.iter().enumerate() {
        let target = a.output.join(format!("slice_{i:05}.dcm"));
        std::io::Write::write_all(set.create(&target, &[&a.pick.input], a.force)?, bytes)
            .map_err(|e| format!("{}: {e}", target.display()))?;
    }
    set.commit()?;
    note!("wrote {} slice(s) to {}", files.len(), a.output.display());
    Ok(())
}
