//! `tgm convert-grib`: GRIB files (through ecCodes) into Tensogram messages.

use std::path::PathBuf;

use crate::error::{is_write_error, CliError, CliResult};
use crate::output::Sink;
use crate::pipeline_args::stage_usage;
use crate::spool::{no_suffix, Inputs};
use tgm::metadata::BaseLayout;
use tgm_convert::weather::convert::{
    convert_files_to, ConvertOptions, EncodingChoice, PipelineChoice,
};
use tgm_convert::weather::GribError;

#[derive(clap::Args)]
#[command(
    after_help = "Every field of an input file goes into one message, as in the \
reference; --split makes one message per field, so that the message-level -w of set and copy \
picks single fields.\n\n\
Examples:\n  tgm convert-grib era5.grib -o era5.tgm\n  \
tgm convert-grib a.grib b.grib -o ab.tgm --split --compression zstd --level 9\n  \
cat era5.grib | tgm convert-grib - -o -"
)]
pub struct Args {
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
    /// Input GRIB files (GRIB1 or GRIB2; `-` for stdin).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output .tgm file (`-` for stdout).
    #[arg(short, long)]
    pub output: PathBuf,
    /// One message per GRIB message (default: one message per input file).
    #[arg(long)]
    pub split: bool,
    /// Also keep every GRIB key under base[i].grib_keys.
    #[arg(long)]
    pub all_keys: bool,
    /// Encoding: source (bit-identical to ecCodes' values: the field's own
    /// simple-packing codes where exact, else lossless float64), codes (as
    /// source, and decimal-scaled fields as their own codes too, in GRIB's
    /// evaluation order: a tgm extension, bit-identical when tgm reads it,
    /// last-bit differences in the reference; GRIB1 and GRIB2 spectral_complex fields
    /// as their codes and unpacked subset, about a third of float64: a tgm
    /// extension, bit-identical when tgm reads it, the codes without the
    /// Laplacian scaling in the reference), none, or simple_packing
    /// (lossy, at --bits; the largest error is reported).
    #[arg(long, default_value = "source",
          value_parser = clap::builder::PossibleValuesParser::new(["source", "codes", "none", "simple_packing"]))]
    pub encoding: String,
    /// Bits per value for --encoding simple_packing (default 16).
    #[arg(long)]
    pub bits: Option<u64>,
    /// Filter: none or shuffle.
    #[arg(long, default_value = "none",
          value_parser = clap::builder::PossibleValuesParser::new(["none", "shuffle"]))]
    pub filter: String,
    /// Compression: auto (szip after whole-byte packing, zstd for spectral
    /// codes and everything else), none,
    /// szip, zstd or lz4.
    #[arg(long, default_value = "auto",
          value_parser = clap::builder::PossibleValuesParser::new(["auto", "none", "szip", "zstd", "lz4"]))]
    pub compression: String,
    /// zstd level, -131072 to 22 (requires --compression zstd).
    #[arg(long, alias = "compression-level", allow_negative_numbers = true)]
    pub level: Option<i64>,
    /// Write no frame hashes.
    #[arg(long)]
    pub no_hash: bool,
    /// Write every field's metadata whole, as the reference does (default:
    /// the keys all fields of a message share, such as the grid, once;
    /// tgm readers give every field its keys either way).
    #[arg(long)]
    pub per_object_metadata: bool,
    /// Most bytes the conversion may decode (default: 64 × the inputs' size
    /// + 256 MiB), so that a small file announcing a huge field is refused.
    #[arg(long)]
    pub max_decoded_bytes: Option<u64>,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

pub fn run(a: Args) -> CliResult {
    let pipeline = PipelineChoice::from_names(
        Some(&a.encoding),
        a.bits,
        Some(&a.filter),
        Some(&a.compression),
        a.level,
    )
    .map_err(stage_usage)?;
    let opts = ConvertOptions {
        split: a.split,
        all_keys: a.all_keys,
        pipeline,
        no_hash: a.no_hash,
        max_decoded_bytes: a.max_decoded_bytes,
        layout: if a.per_object_metadata {
            BaseLayout::PerObject
        } else {
            BaseLayout::SharedOnce
        },
    };
    if let Some(dir) = a.inputs.iter().find(|p| p.is_dir()) {
        return Err(format!("{}: is a directory (give GRIB files)", dir.display()).into());
    }
    let spooled = Inputs::new(&a.inputs, no_suffix)?;
    let inputs: Vec<&std::path::Path> = a.inputs.iter().map(|p| p.as_path()).collect();
    // Each message goes to the output as soon as its fields are read; the
    // output file appears only when all are written.
    let mut sink = Sink::open(&a.output, &inputs, a.force)?;
    let written = convert_files_to(spooled.paths(), &opts, &mut sink.writer()).map_err(|e| {
        match e {
            // A write to the output: its error names the output.
            GribError::Tgm(t) if is_write_error(&t) => CliError::from(t),
            e => CliError::Failed(spooled.describe_error(&a.inputs, e.to_string())),
        }
    })?;
    let bytes = sink.finish_sized()?.unwrap_or(written.bytes);
    if !matches!(
        opts.pipeline.encoding,
        EncodingChoice::Source | EncodingChoice::Codes | EncodingChoice::None
    ) {
        note!(
            "lossy encoding: largest absolute error {:e}",
            written.max_abs_error
        );
    }
    note!(
        "wrote {} message(s), {} object(s), {} bytes, to {}",
        written.messages,
        written.objects,
        bytes,
        a.output.display()
    );
    Ok(())
}
