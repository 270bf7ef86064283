//! `tgm convert-nifti` and `tgm to-nifti`: NIfTI-1 and NIfTI-2 volumes to and from
//! Tensogram messages (docs/src/guide/medical.md).

use std::path::PathBuf;

use crate::error::{CliError, CliResult};
use crate::medical_args::{ByteOrderChoice, ObjectPick, PipelineArgs};
use crate::output::Sink;
use crate::spool::{nifti_suffix, Inputs};
use tgm_convert::medical::nifti::{nifti_header_for, write_nifti_message, Version};
use tgm_convert::medical::nifti_stream::NiftiStream;
use tgm_convert::medical::MedicalError;

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  tgm convert-nifti brain.nii.gz --mask seg.nii.gz -o brain.tgm\n  \
tgm convert-nifti - -o brain.tgm --compression szip < brain.nii"
)]
pub struct ConvertArgs {
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
    /// Input NIfTI-1 or NIfTI-2 files (.nii or .nii.gz; `-` for stdin); each becomes one object, in order.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Segmentation mask on the first input's grid, stored as a further object.
    #[arg(long)]
    pub mask: Option<PathBuf>,
    /// Output .tgm file (`-` for stdout).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Byte order of the stored voxels (default: as in the input).
    #[arg(long, value_enum, default_value = "keep")]
    pub byte_order: ByteOrderChoice,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
    /// Most bytes a .nii.gz may inflate to (default: 64 × its size + 256 MiB),
    /// so that a small file announcing a huge volume is refused before inflating.
    #[arg(long)]
    pub max_decoded_bytes: Option<u64>,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

pub fn convert(a: ConvertArgs) -> CliResult {
    let pipeline = a.pipeline.choice()?;
    let spooled = Inputs::new(&a.inputs, nifti_suffix)?;
    let mut inputs: Vec<&std::path::Path> = a.inputs.iter().map(|p| p.as_path()).collect();
    inputs.extend(a.mask.as_deref());
    // The message is encoded straight into the output (docs/src/performance/memory.md);
    // a file appears only once it is whole.
    let mut sink = Sink::open(&a.output, &inputs, a.force)?;
    let (len, objects) = write_nifti_message(
        spooled.paths(),
        a.mask.as_deref(),
        &pipeline,
        a.byte_order.into(),
        a.max_decoded_bytes,
        &tgm_convert::medical::pipeline::encode_options()
            .progress(crate::progress::object_hook("encoding")),
        &mut sink.writer(),
    )
    // A write into a closed pipe stays one.
    .map_err(|e| spooled.relabel_err(CliError::from(e)))?;
    let len = sink.finish_sized()?.unwrap_or(len);
    note!(
        "wrote {objects} object(s), {len} bytes, to {}",
        a.output.display()
    );
    Ok(())
}

#[derive(clap::Args)]
#[command(
    after_help = "Picks one object: --message/--object, or -w/--objects clauses that must \
match exactly one object of the file.\n\n\
Examples:\n  tgm to-nifti brain.tgm -o brain.nii.gz\n  tgm to-nifti brain.tgm --object 1 -o seg.nii\n  \
tgm to-nifti brain.tgm --objects role=mask -o seg.nii"
)]
pub struct ToArgs {
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
    #[command(flatten)]
    pub pick: ObjectPick,
    #[command(flatten)]
    pub select: crate::where_clause::SelectArgs,
    /// Output .nii, or .nii.gz for a gzip-compressed image (`-` for stdout, uncompressed).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Write NIfTI-2 (540-byte header). Without it, NIfTI-2 is written only
    /// when the object came from NIfTI-2 or a dimension exceeds 32767.
    #[arg(long)]
    pub nifti2: bool,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

pub fn to_nifti(a: ToArgs) -> CliResult {
    let mut pick = tgm_convert::medical::ObjectPick::from(a.pick);
    let file = crate::input::Archive::open_local(&pick.input)?;
    crate::where_clause::pick_selected(&a.select, &mut pick, &file)?;
    let version = if a.nifti2 {
        Version::Nifti2
    } else {
        Version::Auto
    };
    let gz = a
        .output
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".gz"));
    // The header, then the voxels as they are decoded, through gzip for
    // a .nii.gz: no copy of the volume is made for the output (docs/src/
    // performance/memory.md). The output appears only once it is whole.
    let mut sink = Sink::open(&a.output, &[&pick.input], a.force)?;
    let describe = pick.describe();
    let mut plain_len = 0;
    let writer = sink.writer();
    let stream = pick.stream_reporting(
        &file,
        crate::progress::object_hook("decoding"),
        |d, entry| {
            let len = usize::try_from(d.decoded_len()?)
                .map_err(|_| MedicalError::invalid("object too large"))?;
            let header =
                nifti_header_for(d, len, entry, version).map_err(|e| e.context(&describe))?;
            plain_len = header.len() + len;
            let mut out = NiftiStream::new(writer, gz)?;
            out.write(&header)?;
            Ok(out)
        },
        |out, piece| Ok(out.write(piece)?),
    )?;
    stream.finish()?;
    // A file's size is known, local or remote; stdout's is counted only
    // uncompressed.
    match (sink.finish_sized()?, gz) {
        (Some(len), _) => note!("wrote {} ({len} bytes)", a.output.display()),
        (None, false) => note!("wrote {} ({plain_len} bytes)", a.output.display()),
        (None, true) => note!("wrote {} (gzip)", a.output.display()),
    }
    Ok(())
}
