//! `tgm recompress`: rewrite every object with a new pipeline, reporting
//! sizes before and after and the largest error the new pipeline introduced.

use std::io::Write;
use std::path::PathBuf;

use crate::error::CliResult;
use crate::input::{Archive, DecodedObject};
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
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
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
/// `order` (NaN pairs skipped, and with `masked` every pair whose `a` is
/// not finite), converted a bounded chunk at a time; `None` when the
/// lengths differ or the type has no numeric value.
fn max_abs_error(
    dtype: tgm::Dtype,
    order: tgm::ByteOrder,
    a: &[u8],
    b: &[u8],
    masked: bool,
) -> Option<f64> {
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
            .filter(|(p, q)| !(p.is_nan() && q.is_nan()) && (!masked || p.is_finite()))
            .map(|(p, q)| (p - q).abs())
            .fold(max, f64::max);
    }
    Some(max)
}

/// Elements decoded at a time when measuring the error of a new encoding.
const STEP: u64 = 1 << 20;

/// The largest `|old - new|` between the decoded object `old` and its new
/// encoding `payload` under `d` (mask blobs aside), decoding the payload
/// [`STEP`] elements at a time where its pipeline decodes ranges, so no
/// second whole copy of the object is held; other pipelines are decoded
/// whole. Elements recorded in NaN/Inf masks come back exactly and are
/// skipped. A type without numeric values must come back byte for byte.
fn largest_error(
    old: &DecodedObject<'_>,
    d: &tgm::ObjectDescriptor,
    payload: &[u8],
    threads: usize,
) -> tgm::Result<f64> {
    let masked = d.masks.as_ref().is_some_and(|m| !m.is_empty());
    let mut d = d.clone();
    d.masks = None;
    let mut popts = tgm::pipeline::PipelineDecodeOptions::default();
    popts.native_byte_order = false;
    popts.restore_non_finite = false;
    popts.threads = threads;
    let limits = tgm::Limits::default();
    let compare = |first: u64, new: &[u8]| {
        let w = old.descriptor.dtype.width() as u64;
        let at = usize::try_from(first * w).unwrap_or(usize::MAX);
        let was = old
            .data
            .get(at..at.saturating_add(new.len()))
            .unwrap_or(&[]);
        let (dtype, order) = (old.descriptor.dtype, old.descriptor.byte_order);
        match max_abs_error(dtype, order, was, new, masked) {
            Some(e) => Ok(e),
            None if was == new => Ok(0.0),
            None => Err(tgm::Error::invalid_argument(
                "values changed; refusing to write them",
            )),
        }
    };
    let n = d.num_elements()?;
    let mut max = 0f64;
    let mut first = 0;
    while first < n {
        let count = STEP.min(n - first);
        let new =
            match tgm::pipeline::decode_range(&d, payload, 0, &[(first, count)], &popts, &limits) {
                Ok(mut v) => v.pop().unwrap_or_default(),
                Err(e) if *e.kind() == tgm::ErrorKind::RangeNotSupported => {
                    let whole = tgm::pipeline::decode(&d, payload, 0, &popts, &limits)?;
                    return compare(0, &whole);
                }
                Err(e) => return Err(e),
            };
        max = max.max(compare(first, &new)?);
        first += count;
    }
    Ok(max)
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
        let m = meta.caller_owned();
        let pairs: Vec<_> = descs
            .iter()
            .zip(&objects)
            .map(|(d, o)| (d, &o.data[..]))
            .collect();
        // Each object's error is measured from its new payload before its
        // frame is written; the message goes straight to the output.
        let mut errors = Vec::with_capacity(objects.len());
        // A lossless pipeline gives the values back exactly: its error is
        // 0 without decoding, and a payload coded straight into the output
        // (never held) is only ever lossless.
        let mut measure = |oi: usize, d: &tgm::ObjectDescriptor, payload: Option<&[u8]>| {
            errors.push(match payload {
                Some(p) if !d.pipeline().is_lossless() => {
                    largest_error(&objects[oi], d, p, g.threads)?
                }
                _ => 0.0,
            });
            Ok(())
        };
        let len = tgm::encode_to_inspecting(&m, &pairs, &opts, &mut sink.writer(), &mut measure)
            .map_err(|e| crate::error::at_message(f.label(), mi, e.into()))?;
        for (oi, err) in errors.into_iter().enumerate() {
            max_err = max_err.max(err);
            report.push(format!("message {mi}\tobject {oi}\tmax_abs_error {err}"));
        }
        after += len;
    }
    sel.report("recompress");
    sink.finish()?;
    // The table goes where the data and the `-j` report do not.
    let mut out: Box<dyn Write> = if crate::output::is_dash(&a.output) || crate::output::reporting()
    {
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
        let got = max_abs_error(tgm::Dtype::Float64, le, &bytes(&a2), &bytes(&b), false);
        assert_eq!(got, Some(0.5));
        assert_eq!(
            max_abs_error(tgm::Dtype::Float64, le, &bytes(&a), &bytes(&a[1..]), false),
            None
        );
        // A masked infinity comes back from its mask, not from the payload.
        let mut inf = a.clone();
        inf[7] = f64::INFINITY;
        let f = tgm::Dtype::Float64;
        assert_eq!(
            max_abs_error(f, le, &bytes(&inf), &bytes(&b), false),
            Some(f64::INFINITY)
        );
        assert_eq!(
            max_abs_error(f, le, &bytes(&inf), &bytes(&b), true),
            Some(0.5)
        );
    }
}
