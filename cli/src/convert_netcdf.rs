//! `tgm convert-netcdf`: NetCDF-3 and NetCDF-4 files (through netCDF-C)
//! into Tensogram messages. The metadata layout is described in
//! [`tgm_convert::weather::netcdf`]; the pipeline flags are those of `import`.

use std::path::{Path, PathBuf};

use tgm::cbor::Value;
use tgm::{ByteOrder, Dtype, GlobalMetadata, ObjectDescriptor};

use crate::error::{is_write_error, CliResult};
use crate::output::Sink;
use crate::pipeline_args::{GlobalArgs, PipelineArgs};
use crate::progress::bytes_bar;
use crate::spool::{no_suffix, Inputs};
use tgm_convert::weather::netcdf::{convert_file_each, ConvertOptions, NcMessage, NetcdfError};

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
    let stages = a.pipeline.stages()?;
    // simple_packing quantises float64 only: other variables get the same
    // filter and compression without it.
    let plain_args = PipelineArgs {
        encoding: None,
        bits: None,
        ..a.pipeline.clone()
    };
    let plain = plain_args.stages()?;
    let mut opts = a.pipeline.encode_options(g)?;
    opts.pipeline.allow_nan = true;
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
            let done = encode(
                msg,
                &a.pipeline,
                (&stages, &plain_args, &plain),
                &opts,
                path,
                &mut sink.writer(),
            )
            .map(|b| bytes += b);
            done.map_err(|e| {
                failed = Some(spooled.relabel_err(e));
                NetcdfError::Invalid(String::new())
            })?;
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
    sink.finish()?;
    note!(
        "wrote {messages} message(s), {objects} object(s), {bytes} bytes, to {}",
        a.output.display()
    );
    Ok(())
}

/// Encodes one message, each object with the chosen stages (`stages`,
/// and `plain` for variables other than float64), straight into `out`
/// (the payloads are borrowed, never gathered into a message buffer);
/// returns the message length.
fn encode(
    mut msg: NcMessage,
    args: &PipelineArgs,
    (stages, plain_args, plain): (
        &crate::pipeline_args::Stages,
        &PipelineArgs,
        &crate::pipeline_args::Stages,
    ),
    opts: &tgm::EncodeOptions,
    path: &Path,
    out: &mut dyn std::io::Write,
) -> CliResult<u64> {
    for o in &mut msg.objects {
        if o.descriptor.dtype == Dtype::Float64 {
            args.apply(stages, &mut o.descriptor, &o.data)?;
            packing_params_without_nan(&mut o.descriptor, &o.data)?;
        } else {
            plain_args.apply(plain, &mut o.descriptor, &o.data)?;
        }
    }
    let mut meta =
        GlobalMetadata::with_base(msg.objects.iter().map(|o| o.metadata.clone()).collect());
    meta.extra = msg.extra;
    let pairs: Vec<_> = msg
        .objects
        .iter()
        .map(|o| (&o.descriptor, &o.data[..]))
        .collect();
    tgm::encode_to(&meta, &pairs, opts, out).map_err(|e| match is_write_error(&e) {
        true => e.into(),
        false => format!("{}: {e}", path.display()).into(),
    })
}

/// simple_packing of float64 data holding NaN (missing values): the
/// encoder needs explicit parameters, computed here from the present values
/// (`spec/pipeline.md` §2, §3).
fn packing_params_without_nan(d: &mut ObjectDescriptor, data: &[u8]) -> CliResult {
    if d.encoding() != "simple_packing" {
        return Ok(());
    }
    let is_nan = |c: &[u8]| c.try_into().is_ok_and(|b| f64::from_ne_bytes(b).is_nan());
    if !data.chunks_exact(8).any(is_nan) {
        return Ok(());
    }
    let present: Vec<u8> = data
        .chunks_exact(8)
        .filter(|c| !is_nan(c))
        .flatten()
        .copied()
        .collect();
    let bits = d
        .pipeline()
        .param("sp_bits_per_value")
        .and_then(Value::as_u64)
        .unwrap_or(16) as u32;
    let (reference, binary) = if present.is_empty() {
        (0.0, 0)
    } else {
        let p = tgm::pipeline::compute_packing_params(&present, ByteOrder::native(), bits, 0)?;
        (p.reference_value, p.binary_scale_factor)
    };
    let mut params = d.pipeline().params().clone();
    params.insert("sp_reference_value".into(), Value::Float(reference));
    params.insert(
        "sp_binary_scale_factor".into(),
        Value::from_i64(i64::from(binary)),
    );
    params.insert("sp_decimal_scale_factor".into(), Value::from_i64(0));
    let [encoding, filter, compression] = d.pipeline().names();
    let (encoding, filter, compression) = (
        encoding.to_owned(),
        filter.to_owned(),
        compression.to_owned(),
    );
    *d = d
        .clone()
        .with_raw_pipeline(&encoding, &filter, &compression, params)?;
    Ok(())
}
