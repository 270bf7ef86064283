//! Byte shuffle: byte k of every element, for k = 0..size. See `spec/pipeline.md` §3.

pub(crate) mod unshuffle_pieces;

use std::borrow::Cow;

use crate::dtype::Dtype;
use crate::error::{Error, Result};
use crate::pipeline::codec::entry::{Builder, CodecEntry, Sample};
use crate::pipeline::codec::stage::{FilterStage, Params, Stage, StageContext, StageKind};
use crate::pipeline::progress::{Report, Ticks};

/// Registry entry.
pub(crate) const ENTRY: CodecEntry = CodecEntry {
    name: "shuffle",
    kind: StageKind::Filter,
    keys: &["shuffle_element_size"],
    feature: None,
    build: Some(Builder::Filter(build)),
    sample: Some(Sample {
        label: "pipeline       shuffle+zstd",
        pipeline: || crate::pipeline::PipelineBuilder::new().shuffle().zstd(),
        dtype: Dtype::Float64,
        tolerance: 0.0,
    }),
};

fn build(p: &Params<'_>) -> Result<Box<dyn FilterStage>> {
    Ok(Box::new(Shuffle::from_params(p)?))
}

pub use crate::pipeline_spec::Shuffle;

impl FilterStage for Shuffle {
    fn encoded_len(&self, input_len: u64, _: &StageContext) -> Result<u64> {
        Ok(input_len)
    }

    /// Bytes after a shuffle are single-byte samples, unless they are
    /// packed integers, whose width the coder keeps (`spec/pipeline.md` §4.4).
    fn output_form(&self, cx: &StageContext) -> (u32, bool) {
        if cx.packed {
            (cx.sample_bits, true)
        } else {
            (8, false)
        }
    }
}

impl Stage for Shuffle {
    fn name(&self) -> &str {
        "shuffle"
    }

    fn encode<'a>(&mut self, input: Cow<'a, [u8]>, _: &StageContext) -> Result<Cow<'a, [u8]>> {
        Ok(Cow::Owned(shuffle(&input, self.element_size)?))
    }

    /// Reports every 4 MiB of elements shuffled (`spec/pipeline.md` §6.7).
    fn encode_reporting<'a>(
        &mut self,
        input: Cow<'a, [u8]>,
        _: &StageContext,
        report: &Report<'_>,
    ) -> Result<Cow<'a, [u8]>> {
        let len = input.len() as u64;
        let ticks = Ticks::new(report, 1, len, true);
        let out = shuffle_ticking(&input, self.element_size, |b| ticks.add(b))?;
        report(len, len);
        Ok(Cow::Owned(out))
    }

    fn decode_into(&self, input: &[u8], _: &StageContext, out: &mut [u8]) -> Result<()> {
        unshuffle_into(input, self.element_size, out)
    }

    /// Reports every 4 MiB of elements put back (`spec/pipeline.md` §6.7).
    fn decode_into_reporting(
        &self,
        input: &[u8],
        _: &StageContext,
        out: &mut [u8],
        report: &Report<'_>,
    ) -> Result<()> {
        let ticks = Ticks::new(report, 1, out.len() as u64, false);
        unshuffle_ticking(input, self.element_size, out, |b| ticks.add(b))
    }
}

fn check(len: usize, size: usize) -> Result<usize> {
    if size == 0 {
        return Err(Error::metadata("shuffle_element_size must be positive"));
    }
    if !len.is_multiple_of(size) {
        return Err(Error::codec(format!(
            "{len} bytes are not a whole number of {size}-byte elements"
        )));
    }
    Ok(len / size)
}

/// `out[b * n + e] = data[e * size + b]`.
pub fn shuffle(data: &[u8], size: usize) -> Result<Vec<u8>> {
    shuffle_ticking(data, size, |_| {})
}

/// [`shuffle`], telling `tick` the bytes of each block of elements done.
fn shuffle_ticking(data: &[u8], size: usize, tick: impl Fn(u64)) -> Result<Vec<u8>> {
    let n = check(data.len(), size)?;
    let mut out = crate::buffer::zeroed(data.len())?;
    if size == 1 {
        out.copy_from_slice(data);
        return Ok(out);
    }
    // Blocks of elements keep the source reads cache-resident.
    const BLOCK: usize = 1024;
    for start in (0..n).step_by(BLOCK) {
        let end = (start + BLOCK).min(n);
        let src = &data[start * size..end * size];
        for b in 0..size {
            let dst = &mut out[b * n + start..b * n + end];
            for (d, e) in dst.iter_mut().zip(src.chunks_exact(size)) {
                *d = e[b];
            }
        }
        tick(src.len() as u64);
    }
    Ok(out)
}

/// Inverse of [`shuffle`], writing into `out` (same length as `data`).
pub fn unshuffle_into(data: &[u8], size: usize, out: &mut [u8]) -> Result<()> {
    unshuffle_ticking(data, size, out, |_| {})
}

/// [`unshuffle_into`], telling `tick` the bytes of each block of elements
/// done.
fn unshuffle_ticking(data: &[u8], size: usize, out: &mut [u8], tick: impl Fn(u64)) -> Result<()> {
    let n = check(data.len(), size)?;
    if out.len() != data.len() {
        return Err(Error::codec("unshuffle output size differs from input"));
    }
    if size == 1 {
        out.copy_from_slice(data);
        return Ok(());
    }
    const BLOCK: usize = 1024;
    for start in (0..n).step_by(BLOCK) {
        let end = (start + BLOCK).min(n);
        let dst = &mut out[start * size..end * size];
        for b in 0..size {
            let src = &data[b * n + start..b * n + end];
            for (e, &s) in dst.chunks_exact_mut(size).zip(src) {
                e[b] = s;
            }
        }
        tick(dst.len() as u64);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_and_roundtrip() {
        let d = [1u8, 2, 3, 4, 5, 6];
        assert_eq!(shuffle(&d, 2).unwrap(), vec![1, 3, 5, 2, 4, 6]);
        for size in [1usize, 2, 3, 4, 8, 16] {
            let data: Vec<u8> = (0..size * 3001).map(|i| (i * 7) as u8).collect();
            let s = shuffle(&data, size).unwrap();
            let mut back = vec![0u8; data.len()];
            unshuffle_into(&s, size, &mut back).unwrap();
            assert_eq!(back, data);
        }
        assert!(shuffle(&d, 4).is_err());
        assert!(shuffle(&d, 0).is_err());
    }

    #[test]
    fn reports_follow_the_input_read_in_order() {
        let data: Vec<u8> = (0..(3 << 22) + 100).map(|i| (i * 31) as u8).collect();
        let seen = std::sync::Mutex::new(Vec::new());
        let report = |d, r| seen.lock().unwrap().push((d, r));
        let ticks = Ticks::new(&report, 1, data.len() as u64, true);
        let out = shuffle_ticking(&data, 4, |b| ticks.add(b)).unwrap();
        assert_eq!(out, shuffle(&data, 4).unwrap());
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert!(seen
            .iter()
            .all(|&(d, r)| d == r && d < data.len() as u64 && d % 4 == 0));
        assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "{seen:?}");
    }
}
