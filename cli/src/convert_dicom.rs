//! `tgm convert-dicom`: DICOM series into one Tensogram message
//! (README "Medical imaging").

use std::path::PathBuf;

use tgm::EncodeOptions;

use crate::medical::dicom::dicom_to_objects;
use crate::medical::output::write_new_file;
use crate::medical::pipeline::PipelineArgs;
use crate::util::CliResult;

#[derive(clap::Args)]
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
    let ((objects, meta), report) = dicom_to_objects(&a.inputs, &a.pipeline, a.deidentify)?;
    let refs: Vec<_> = objects.iter().map(|(d, b)| (d, &b[..])).collect();
    let msg = tgm::encode(&meta, &refs, &EncodeOptions::new())?;
    write_new_file(&a.output, &msg, a.force)?;
    if a.deidentify {
        eprintln!(
            "de-identified: removed [{}], replaced [{}]",
            report.removed.join(", "),
            report.replaced.join(", ")
        );
    }
    eprintln!(
        "wrote {} series, {} bytes, to {}",
        objects.len(),
        msg.len(),
        a.output.display()
    );
    Ok(())
}
