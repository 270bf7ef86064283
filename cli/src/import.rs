//! `tgm import`: .npy files into one message.

use std::io::Write;
use std::path::PathBuf;

use tgm::npy::read_npy;
use tgm::pipeline::PipelineOptions;
use tgm::{EncodeOptions, GlobalMetadata, ObjectDescriptor};

use crate::util::{insert_dotted, parse_meta_value, progress, read_file, CliResult};

#[derive(clap::Args)]
pub struct Args {
    /// Input .npy files; each becomes one object, in order.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output .tgm file.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Metadata for every object's base entry: key=value (dotted keys nest).
    #[arg(short, long = "meta", value_name = "KEY=VALUE")]
    pub meta: Vec<String>,
    /// Append the message to OUTPUT instead of replacing it.
    #[arg(long)]
    pub append: bool,
    /// Encoding: none or simple_packing.
    #[arg(long, default_value = "none")]
    pub encoding: String,
    /// Bits per value for simple_packing.
    #[arg(long, default_value_t = 16)]
    pub bits: u64,
    /// Filter: none or shuffle.
    #[arg(long, default_value = "none")]
    pub filter: String,
    /// Compression: none, zstd, lz4 or szip.
    #[arg(long, default_value = "none")]
    pub compression: String,
    /// Compression level (zstd).
    #[arg(long)]
    pub level: Option<i64>,
    /// szip: blocks per reference sample interval (1..=4096).
    #[arg(long, default_value_t = 128)]
    pub szip_rsi: u64,
    /// szip: samples per block (8, 16, 32 or 64).
    #[arg(long, default_value_t = 16)]
    pub szip_block_size: u64,
    /// szip: make exactly libaec's coding choices, including second-extension
    /// reference blocks that the reference's pure-Rust decoder misreads.
    #[arg(long)]
    pub szip_libaec_exact: bool,
    /// Store NaN as a mask instead of failing.
    #[arg(long)]
    pub allow_nan: bool,
    /// Store ±Inf as masks instead of failing.
    #[arg(long)]
    pub allow_inf: bool,
    /// Write no frame hashes.
    #[arg(long)]
    pub no_hash: bool,
    /// Worker threads for the pipeline (0 = sequential).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

/// Applies the pipeline flags to a plain descriptor.
fn apply_pipeline(d: &mut ObjectDescriptor, a: &Args) -> CliResult {
    d.encoding = a.encoding.clone();
    d.filter = a.filter.clone();
    d.compression = a.compression.clone();
    let element_bytes = match a.encoding.as_str() {
        "none" => d.dtype.width() as u64,
        "simple_packing" => {
            d.params.insert("sp_bits_per_value".into(), a.bits.into());
            a.bits.div_ceil(8)
        }
        other => return Err(format!("unknown encoding {other:?} (none, simple_packing)").into()),
    };
    match a.filter.as_str() {
        "none" => {}
        "shuffle" => {
            d.params
                .insert("shuffle_element_size".into(), element_bytes.max(1).into());
        }
        other => return Err(format!("unknown filter {other:?} (none, shuffle)").into()),
    }
    match a.compression.as_str() {
        "none" | "lz4" => {}
        "zstd" => {
            if let Some(l) = a.level {
                d.params.insert("zstd_level".into(), l.into());
            }
        }
        "szip" => {
            // Preprocessing always; signed samples when raw signed integers
            // reach the coder unchanged.
            let signed = a.encoding == "none" && a.filter == "none" && d.dtype.is_signed_int();
            let flags =
                tgm::szip::flags::PREPROCESS | if signed { tgm::szip::flags::SIGNED } else { 0 };
            d.params.insert("szip_rsi".into(), a.szip_rsi.into());
            d.params
                .insert("szip_block_size".into(), a.szip_block_size.into());
            d.params.insert("szip_flags".into(), (flags as u64).into());
        }
        other => {
            return Err(format!("unknown compression {other:?} (none, zstd, lz4, szip)").into())
        }
    }
    Ok(())
}

pub fn run(a: Args) -> CliResult {
    let mut entry = tgm::Map::new();
    for kv in &a.meta {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--meta {kv:?} is not key=value"))?;
        insert_dotted(&mut entry, k, parse_meta_value(v))?;
    }
    let pb = progress(a.inputs.len() as u64, "reading");
    let mut arrays = Vec::with_capacity(a.inputs.len());
    for path in &a.inputs {
        let arr = read_npy(&read_file(path)?).map_err(|e| format!("{}: {e}", path.display()))?;
        arrays.push(arr);
        pb.inc(1);
    }
    pb.finish_and_clear();
    let mut descs = Vec::with_capacity(arrays.len());
    let mut base = Vec::with_capacity(arrays.len());
    for (arr, path) in arrays.iter().zip(&a.inputs) {
        let mut d = arr.descriptor();
        apply_pipeline(&mut d, &a)?;
        descs.push(d);
        let mut e = entry.clone();
        if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
            e.entry("name".to_string()).or_insert_with(|| stem.into());
        }
        if arr.was_bool {
            e.insert("numpy_dtype".into(), "bool".into());
        }
        base.push(e);
    }
    let mut popts = PipelineOptions::default();
    popts.allow_nan = a.allow_nan;
    popts.allow_inf = a.allow_inf;
    popts.threads = a.threads;
    if a.szip_libaec_exact {
        popts.szip_profile = tgm::szip::SzipProfile::Libaec;
    }
    let opts = EncodeOptions::new().hashing(!a.no_hash).pipeline(popts);
    let objs: Vec<_> = descs
        .iter()
        .zip(&arrays)
        .map(|(d, arr)| (d, &arr.data[..]))
        .collect();
    let msg = tgm::encode(&GlobalMetadata::with_base(base), &objs, &opts)?;
    write_message(&a.output, &msg, a.append)?;
    eprintln!(
        "{} {} object(s), {} bytes, to {}",
        if a.append { "appended" } else { "wrote" },
        descs.len(),
        msg.len(),
        a.output.display()
    );
    Ok(())
}

/// Writes one whole message: appended with a single write and synced, or
/// into a temporary file renamed over the target.
fn write_message(path: &std::path::Path, msg: &[u8], append: bool) -> CliResult {
    if append {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        f.write_all(msg)?;
        f.sync_data()?;
        return Ok(());
    }
    let tmp = path.with_extension("tgm.tmp");
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(msg)?;
        f.sync_data()?;
    }
    std::fs::rename(&tmp, path)?;
    Ok(())
}
