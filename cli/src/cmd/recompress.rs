//! `tgm recompress`: rewrite every object with a new pipeline, reporting
//! sizes before and after and the largest error the new pipeline introduced.

use std::io::Write;
use std::path::PathBuf;

use tgm::{DecodeOptions, GlobalMetadata};

use crate::error::{usage, CliResult, WithPath};
use crate::input::Archive;
use crate::output::{stdout, Sink};
use crate::pipeline_args::{
    plain_descriptor, rewrite_descriptor, values_f64, GlobalArgs, PipelineArgs,
};
use crate::where_clause::{SelectArgs, Selection};

/// Arguments of `tgm recompress`.
#[derive(clap::Args)]
#[command(
    after_help = "Selection: -w picks whole messages (as the reference does); --objects \
recompresses only the matching objects; the others keep their stored pipelines.\n\n\
Examples:\n  tgm recompress in.tgm small.tgm --encoding simple_packing --bits 12 --compression zstd\n  \
tgm recompress --objects mars.param=130 in.tgm out.tgm --compression lz4"
)]
pub struct Args {
    /// Input file (`-` for stdin).
    pub input: PathBuf,
    /// Output file (`-` for stdout).
    pub output: PathBuf,
    /// Replace OUTPUT if it exists.
    #[arg(short, long)]
    pub force: bool,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub encode: crate::pipeline_args::EncodeFlags,
}

/// The largest `|a - b|` over the values of two buffers of `dtype` in
/// `order` (NaN pairs skipped), converted a bounded chunk at a time; `None`
/// when the lengths differ or the type has no numeric value.
fn max_abs_error(dtype: tgm::Dtype, order: tgm::ByteOrder, a: &[u8], b: &[u8]) -> Option<f64> {
    if a.len() != b.len() {
        return None;
    }
    let step = dtype.width().max(1) << 16;
    let mut max = 0f64;
    for (x, y) in a.chunks(step).zip(b.chunks(step)) {
        let (x, y) = (values_f64(dtype, order, x)?, values_f64(dtype, order, y)?);
        max = x
            .iter()
            .zip(&y)
            .filter(|(p, q)| !(p.is_nan() && q.is_nan()))
            .map(|(p, q)| (p - q).abs())
            .fold(max, f64::max);
    }
    Some(max)
}

/// Runs `tgm recompress`.
pub fn run(a: Args, g: &GlobalArgs) -> CliResult {
    let stages = a.pipeline.stages()?;
    let sel = Selection::parse(&a.select)?;
    if !a.pipeline.any_stage() {
        note!("note: no stage flag given: objects are rewritten uncompressed");
    }
    let opts = a.pipeline.encode_options(g)?;
    let f = Archive::open(&a.input)?;
    let mut sink = Sink::open(&a.output, &[&a.input], a.force)?;
    let (mut before, mut after, mut max_err) = (0u64, 0u64, 0f64);
    let mut report = Vec::new();
    for mi in 0..f.len() {
        let (meta, stored) = f.header(mi)?;
        let keep = sel.objects(&meta, stored.len());
        let bytes = f.message_bytes(mi)?;
        before += bytes.len() as u64;
        if keep.is_empty() {
            after += bytes.len() as u64;
            sink.write_all(&bytes)?;
            continue;
        }
        drop(bytes);
        let objects = f.decode_message(mi, g.threads)?;
        let mut descs = Vec::with_capacity(objects.len());
        for (oi, o) in objects.iter().enumerate() {
            if !keep.contains(&oi) {
                // Outside --objects: the stored pipeline, values unchanged.
                descs.push(rewrite_descriptor(&o.descriptor));
                continue;
            }
            let mut d = plain_descriptor(&o.descriptor, o.descriptor.byte_order);
            a.pipeline
                .apply(&stages, &mut d, &o.data)
                .map_err(|e| crate::error::at_path(f.label(), format!("message {mi}: {e}")))?;
            descs.push(d);
        }
        let mut m = GlobalMetadata::with_base(meta.base.clone());
        m.extra = meta.extra.clone();
        for e in &mut m.base {
            e.remove(tgm::metadata::RESERVED_KEY);
        }
        let pairs: Vec<_> = descs
            .iter()
            .zip(&objects)
            .map(|(d, o)| (d, &o.data[..]))
            .collect();
        let msg = tgm::encode(&m, &pairs, &opts).at(f.label())?;
        drop(pairs);
        // Object by object, so that one decoded copy is alive at a time.
        let written = tgm::Message::parse(&msg).at(f.label())?;
        let stored_order = DecodeOptions::default().native_byte_order(false);
        for (oi, old) in objects.iter().enumerate() {
            let new = written.object(oi)?.decode(&stored_order)?;
            let d = &old.descriptor;
            let err = match max_abs_error(d.dtype, d.byte_order, &old.data, &new) {
                Some(e) => e,
                None if old.data[..] == new[..] => 0.0,
                None => return Err(usage(format!("message {mi} object {oi}: values changed"))),
            };
            max_err = max_err.max(err);
            report.push(format!("message {mi}\tobject {oi}\tmax_abs_error {err}"));
        }
        after += msg.len() as u64;
        sink.write_all(&msg)?;
    }
    sink.finish()?;
    let mut out: Box<dyn Write> = if crate::output::is_dash(&a.output) {
        Box::new(std::io::stderr())
    } else {
        Box::new(stdout())
    };
    for r in report {
        writeln!(out, "{r}")?;
    }
    writeln!(
        out,
        "bytes_before\t{before}\nbytes_after\t{after}\nmax_abs_error\t{max_err}"
    )?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_abs_error_sees_every_chunk_and_skips_nan_pairs() {
        let n = 200_000;
        let a: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let mut b = a.clone();
        b[n - 1] += 0.5;
        b[3] = f64::NAN;
        let mut a2 = a.clone();
        a2[3] = f64::NAN;
        let bytes = |v: &[f64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
        let le = tgm::ByteOrder::Little;
        let got = max_abs_error(tgm::Dtype::Float64, le, &bytes(&a2), &bytes(&b));
        assert_eq!(got, Some(0.5));
        assert_eq!(
            max_abs_error(tgm::Dtype::Float64, le, &bytes(&a), &bytes(&a[1..])),
            None
        );
    }
}
