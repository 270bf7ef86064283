//! The compression and the encoding decoded as one pass, the stream between
//! them never whole (`spec/pipeline.md` §6.6), its runs on the thread
//! budget (§6.4).

use crate::error::Result;
use crate::pipeline::codec::stage::{PieceRun, StageContext};
use crate::pipeline::plan::Stages;
use crate::pipeline::progress::{ProgressHook, Ticks, REPORT_BYTES};

/// True when the pipeline decodes as one pass: the filter is the identity,
/// the compression decodes into integer codes piece by piece and the
/// encoding decodes from them (`spec/pipeline.md` §6.6).
pub(super) fn applies(
    stages: Stages<'_>,
    cx: &[StageContext; 3],
    payload_len: usize,
    out_len: usize,
) -> bool {
    let (encoding, compression) = (stages.encoding, stages.compression);
    let working = !encoding.is_identity() && !compression.is_identity();
    // The identity filter between them sees unchanged lengths.
    let lengths_agree = cx[2].input_len == payload_len as u64
        && cx[2].decoded_len == cx[0].input_len
        && cx[0].decoded_len == out_len as u64;
    working
        && stages.filter.is_identity()
        && lengths_agree
        && compression.decodes_codes(&cx[2])
        && encoding.accepts_codes(&cx[0])
}

/// Runs the compression and the encoding [`applies`] found as one pass:
/// the intermediate stream never exists whole. `progress` is told the
/// object's bytes written every 4 MiB of them, nothing read until the end
/// (`spec/pipeline.md` §6.7).
pub(super) fn decode(
    stages: Stages<'_>,
    cx: &[StageContext; 3],
    payload: &[u8],
    out: &mut [u8],
    progress: &ProgressHook,
) -> Result<()> {
    let (lower, lower_cx) = (stages.encoding, &cx[0]);
    let (upper, upper_cx) = (stages.compression, &cx[2]);
    let of = upper_cx.decoded_len;
    let report = progress.scaled(out.len() as u64, of, true, payload.len() as u64);
    // Every 4 MiB of the object, counted in bytes of the stream between.
    let every = u128::from(REPORT_BYTES) * u128::from(of) / (out.len() as u128).max(1);
    let every = u64::try_from(every).unwrap_or(u64::MAX);
    let ticks = progress
        .is_set()
        .then(|| Ticks::new(&report, 1, of, false).every(every));
    // Codes are whole bytes of the stream between (`decodes_codes`).
    let code_bytes = u64::from(upper_cx.sample_bits.div_ceil(8));
    let tick = |codes: &[u32]| {
        if let Some(t) = &ticks {
            t.add(codes.len() as u64 * code_bytes);
        }
    };
    if let Some(runs) = upper.piece_runs(payload, upper_cx) {
        if decode_runs_in_parallel(stages, cx, &runs, payload, out, &tick)? {
            return Ok(());
        }
    }
    upper.decode_codes(payload, upper_cx, &mut |first, codes| {
        lower.decode_codes_into(codes, first, lower_cx, out)?;
        tick(codes);
        Ok(())
    })
}

/// [`decode`] with each of `runs` decoded in pieces on its own
/// worker into its part of `out`. False when the runs do not chain (one
/// fails, or ends where the next does not start): the caller then decodes
/// sequentially, which overwrites all of `out` and gives the sequential
/// result or error (`spec/pipeline.md` §6.4).
fn decode_runs_in_parallel(
    stages: Stages<'_>,
    cx: &[StageContext; 3],
    runs: &[PieceRun],
    payload: &[u8],
    out: &mut [u8],
    tick: &(dyn Fn(&[u32]) + Sync),
) -> Result<bool> {
    use rayon::prelude::*;
    let (upper, lower) = (stages.compression, stages.encoding);
    let (upper_cx, lower_cx) = (&cx[2], &cx[0]);
    let total = upper_cx.decoded_len as u128;
    let out_len = out.len();
    // Where decoded byte `a` of the upper stream lands in `out`, when that
    // is a whole byte.
    let to_out = |a: usize| {
        let v = a as u128 * out_len as u128;
        (total > 0 && v.is_multiple_of(total)).then(|| (v / total) as usize)
    };
    let mut parts = Vec::with_capacity(runs.len());
    let mut rest = out;
    let mut next = 0;
    for run in runs {
        let (Some(a), Some(b)) = (to_out(run.from), to_out(run.to)) else {
            return Ok(false);
        };
        if a != next || b < a || b - a > rest.len() {
            return Ok(false);
        }
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(b - a);
        parts.push(part);
        rest = tail;
        next = b;
    }
    if !rest.is_empty() {
        return Ok(false);
    }
    let ends: Vec<Result<u64>> = crate::exec::install(upper_cx.threads, || {
        runs.par_iter()
            .zip(parts.into_par_iter())
            .map(|(run, part)| {
                upper.decode_run_codes(payload, upper_cx, run, &mut |first, codes| {
                    lower.decode_codes_into(codes, first, lower_cx, part)?;
                    tick(codes);
                    Ok(())
                })
            })
            .collect()
    })?;
    let chained = ends
        .iter()
        .enumerate()
        .all(|(i, end)| match (end, runs.get(i + 1)) {
            (Ok(end), Some(next)) => *end == next.start,
            (Ok(_), None) => true,
            (Err(_), _) => false,
        });
    Ok(chained)
}
