//! `tgm convert-netcdf`: NetCDF-3 and NetCDF-4 files (through netCDF-C)
//! into Tensogram messages. The metadata layout is described in
//! [`tgm_convert::weather::netcdf`]; the pipeline flags are those of `import`.

use std::path::{Path, PathBuf};

use crate::error::{is_write_error, CliError, CliResult};
use crate::output::Sink;
use crate::pipeline_args::{stage_usage, GlobalArgs, PipelineArgs};
use crate::progress::bytes_bar;
use crate::spool::{no_suffix, Inputs};
use tgm_convert::weather::netcdf::{
    convert_file_each, ConvertOptions, NcMessage, NetcdfEncoder, NetcdfError,
};

#[derive(clap::Args)]
#[command(after_help = "Examples:\n  tgm convert-netcdf t2m.nc -o t2m.tgm\n  \
tgm convert-netcdf a.nc -o a.tgm --split-by variable --cf --compression zstd --level 5")]
pub struct Args {
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
    /// Input NetCDF files (NetCDF-3 classic/64-bit, or NetCDF-4; `-` for stdin).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output .tgm file (`-` for stdout).
    #[arg(short, long)]
    pub output: PathBuf,
    /// One message per input file, per variable, or per index of the
    /// unlimited dimension.
    #[arg(long, value_enum, default_value = "file")]
    pub split_by: SplitBy,
    /// Apply scale_factor/add_offset: packed variables become float64 with
    /// NaN where missing (the packing attributes stay recorded).
    #[arg(long)]
    pub cf: bool,
    /// Most bytes decoded per input file (default: 64 × its size + 256 MiB),
    /// so that a small file announcing huge variables is refused.
    #[arg(long)]
    pub max_decoded_bytes: Option<u64>,
    /// Leave out variables of types tgm cannot keep (vlens of anything
    /// but numbers, compounds holding strings or vlens), listing them,
    /// instead of refusing the file.
    #[arg(long)]
    pub skip_unsupported: bool,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub encode: crate::pipeline_args::EncodeFlags,
}

/// How variables are grouped into messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SplitBy {
    /// One message per input file.
    #[default]
    File,
    /// One message per variable.
    Variable,
    /// One message per index of the unlimited dimension.
    Record,
}

impl From<SplitBy> for tgm_convert::weather::netcdf::SplitBy {
    fn from(s: SplitBy) -> Self {
        use tgm_convert::weather::netcdf::SplitBy as To;
        match s {
            SplitBy::File => To::File,
            SplitBy::Variable => To::Variable,
            SplitBy::Record => To::Record,
        }
    }
}

pub fn run(a: Args, g: &GlobalArgs) -> CliResult {
    let encoder = NetcdfEncoder::new(a.pipeline.stages()?, a.pipeline.encode_options(g)?);
    let convert = ConvertOptions {
        split_by: a.split_by.into(),
        cf: a.cf,
        max_decoded_bytes: a.max_decoded_bytes,
        skip_unsupported: a.skip_unsupported,
    };

    let spooled = Inputs::new(&a.inputs, no_suffix)?;
    let total: u64 = spooled
        .paths()
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let bar = bytes_bar(total, "convert-netcdf");
    let inputs: Vec<&Path> = a.inputs.iter().map(PathBuf::as_path).collect();
    // Each message is encoded and written as soon as it is converted, so
    // that one message (one record with --split-by record) is held at a
    // time; the output file appears only when all are written.
    let mut sink = Sink::open(&a.output, &inputs, a.force)?;
    let (mut messages, mut objects, mut bytes) = (0usize, 0usize, 0u64);
    for path in spooled.paths() {
        let mut failed = None;
        let mut write = |msg: NcMessage| {
            objects += msg.objects.len();
            match encoder.encode_to(msg, &mut sink.writer()) {
                Ok(b) => bytes += b,
                Err(e) => {
                    failed = Some(spooled.relabel_err(encode_error(e, path)));
                    return Err(NetcdfError::Invalid(String::new()));
                }
            }
            messages += 1;
            Ok(())
        };
        let skipped = match convert_file_each(path, &convert, &mut write) {
            Ok(s) => s,
            Err(e) => return Err(failed.unwrap_or_else(|| spooled.relabel(e.to_string()).into())),
        };
        for (name, why) in &skipped {
            note!(
                "{}",
                spooled.relabel(format!(
                    "{}: skipping variable {name}: {why}",
                    path.display()
                ))
            );
        }
        bar.inc(std::fs::metadata(path).map(|m| m.len()).unwrap_or(0));
    }
    bar.finish_and_clear();
    let bytes = sink.finish_sized()?.unwrap_or(bytes);
    note!(
        "wrote {messages} message(s), {objects} object(s), {bytes} bytes, to {}",
        a.output.display()
    );
    Ok(())
}

/// An encoding failure as the command reports it: stages refused as a
/// usage error naming the flags, a write error as itself, anything else
/// naming the input.
fn encode_error(e: NetcdfError, path: &Path) -> CliError {
    match e {
        NetcdfError::Stages(e) => stage_usage(e),
        NetcdfError::Tgm(e) if is_write_error(&e) => e.into(),
        e => format!("{}: {e}", path.display()).into(),
    }
}
