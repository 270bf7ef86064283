//! The command-line flags of the medical converters (`convert-nifti`,
//! `to-nifti`, `convert-dicom`, `to-dicom`), converted into the option
//! types of `tgm_convert::medical`, which know nothing of clap.

use std::path::PathBuf;

use tgm_convert::medical::pipeline;

use crate::error::CliResult;
use crate::pipeline_args::stage_usage;

/// Pipeline flags shared by the medical converters.
#[derive(Clone, Debug, clap::Args)]
pub struct PipelineArgs {
    /// Compression: none, zstd (after byte shuffle) or szip (integers only).
    #[arg(long, default_value = "zstd", value_parser = compressions())]
    pub compression: String,
    /// zstd level, -131072 to 22 (requires --compression zstd).
    #[arg(long, allow_negative_numbers = true)]
    pub level: Option<i64>,
}

/// The names `--compression` takes, each with its help.
fn compressions() -> clap::builder::PossibleValuesParser {
    use clap::builder::PossibleValue;
    clap::builder::PossibleValuesParser::new([
        PossibleValue::new("none").help("Raw payloads"),
        PossibleValue::new("zstd").help("Byte shuffle (element width) followed by zstd"),
        PossibleValue::new("szip").help("CCSDS 121.0 szip with preprocessing, integers only"),
    ])
}

impl PipelineArgs {
    /// The converters' choice, checked by their rules
    /// ([`pipeline::PipelineArgs::from_names`]).
    pub fn choice(&self) -> CliResult<pipeline::PipelineArgs> {
        pipeline::PipelineArgs::from_names(Some(&self.compression), self.level).map_err(stage_usage)
    }
}

/// Which object of which .tgm file `to-nifti`/`to-dicom` write out.
#[derive(clap::Args)]
pub struct ObjectPick {
    /// Input .tgm file.
    pub input: PathBuf,
    /// Message index in the file.
    #[arg(long, default_value_t = 0)]
    pub message: usize,
    /// Object index in the message.
    #[arg(long, default_value_t = 0)]
    pub object: usize,
}

impl From<ObjectPick> for tgm_convert::medical::ObjectPick {
    fn from(p: ObjectPick) -> Self {
        tgm_convert::medical::ObjectPick {
            input: p.input,
            message: p.message,
            object: p.object,
        }
    }
}

/// Which byte order converted volumes are stored in.
#[cfg(feature = "nifti")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ByteOrderChoice {
    /// The input file's byte order.
    #[default]
    Keep,
    /// Little-endian.
    Little,
    /// Big-endian.
    Big,
}

#[cfg(feature = "nifti")]
impl From<ByteOrderChoice> for tgm_convert::medical::nifti::ByteOrderChoice {
    fn from(b: ByteOrderChoice) -> Self {
        use tgm_convert::medical::nifti::ByteOrderChoice as To;
        match b {
            ByteOrderChoice::Keep => To::Keep,
            ByteOrderChoice::Little => To::Little,
            ByteOrderChoice::Big => To::Big,
        }
    }
}

/// The retain options of PS3.15 E.3 that `convert-dicom` offers.
#[cfg(feature = "dicom")]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, clap::Args)]
pub struct RetainOptions {
    /// Retain Patient Characteristics Option (E.3.5): keep sex, age,
    /// size, weight and the like.
    #[arg(long, requires = "deidentify")]
    pub retain_patient_characteristics: bool,
    /// Retain Longitudinal Temporal Information Full Dates Option (E.3.6):
    /// keep dates and times unchanged.
    #[arg(long, requires = "deidentify")]
    pub retain_full_dates: bool,
    /// Retain Device Identity Option (E.3.3): keep station name, device
    /// serial number and the like.
    #[arg(long, requires = "deidentify")]
    pub retain_device_identity: bool,
    /// Retain Institution Identity Option (E.3.4): keep institution name,
    /// address and department.
    #[arg(long, requires = "deidentify")]
    pub retain_institution_identity: bool,
}

#[cfg(feature = "dicom")]
impl From<RetainOptions> for tgm_convert::medical::deid_profile::RetainOptions {
    fn from(r: RetainOptions) -> Self {
        tgm_convert::medical::deid_profile::RetainOptions {
            retain_patient_characteristics: r.retain_patient_characteristics,
            retain_full_dates: r.retain_full_dates,
            retain_device_identity: r.retain_device_identity,
            retain_institution_identity: r.retain_institution_identity,
        }
    }
}
