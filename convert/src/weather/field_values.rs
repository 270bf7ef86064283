//! The values of one field as GRIB write-back reads them: a step of
//! [`STEP`] values at a time for the passes that can (extremes, codes,
//! read-back), whole for the ones that cannot (`spec/convert.md`
//! "GRIB write-back", "Memory").
//!
//! Values already in memory (a slice, perhaps of a mapped archive) are
//! paged out behind each step. An object whose pipeline decodes in pieces
//! (szip-compressed, as `convert-grib` writes by default, or zstd over none
//! or simple_packing, `spec/pipeline.md` §7) is decoded again
//! for each pass, a step at a time into one reused buffer, so that no pass
//! holds its decoded values whole.

use std::borrow::Cow;
use std::cell::RefCell;

use tgm::{DecodeOptions, Object};

use super::GribError;

/// Values read at a time (8 MiB of float64).
#[cfg(not(test))]
pub(super) const STEP: usize = 1 << 20;
/// Values read at a time: in tests, fewer than the smallest sample grid's
/// 496 points, so that every test field takes several steps.
#[cfg(test)]
pub(super) const STEP: usize = 1 << 8;

/// What [`FieldValues::each_step`] runs on each step: its first index and
/// its values.
pub(super) type OnStep<'f> = dyn FnMut(usize, &[f64]) -> Result<(), GribError> + 'f;

/// A field's float64 values, in order.
pub(super) trait FieldValues {
    /// How many values the field has.
    fn len(&self) -> usize;

    /// Runs `f(first, step)` on each step of [`STEP`] values (the last may
    /// be shorter), in order, `first` being the step's first index; stops
    /// at the first error.
    fn each_step(&self, f: &mut OnStep<'_>) -> Result<(), GribError>;

    /// Every value at once.
    fn whole(&self) -> Result<Cow<'_, [f64]>, GribError>;
}

/// Values in memory: each step is paged out once `f` has read it.
impl FieldValues for [f64] {
    fn len(&self) -> usize {
        <[f64]>::len(self)
    }

    fn each_step(&self, f: &mut OnStep<'_>) -> Result<(), GribError> {
        for (n, step) in self.chunks(STEP).enumerate() {
            f(n * STEP, step)?;
            tgm::pipeline::page_out(bytemuck::cast_slice(step));
        }
        Ok(())
    }

    fn whole(&self) -> Result<Cow<'_, [f64]>, GribError> {
        Ok(Cow::Borrowed(self))
    }
}

/// A float64 object decoded a step at a time on each pass
/// ([`Object::decode_pieces`]), into one buffer reused across passes.
pub(super) struct Pieces<'o, 'a> {
    obj: &'o Object<'a>,
    /// The caller's options, the stored payload paged out behind each
    /// pass that reads it in order (a zstd stream).
    opts: DecodeOptions,
    len: usize,
    /// The decoded bytes of one step.
    buf: RefCell<Vec<u8>>,
    /// A step copied to float64 alignment when the bytes lack it.
    aligned: RefCell<Vec<f64>>,
}

impl<'o, 'a> Pieces<'o, 'a> {
    /// `obj`'s values, when it is float64, its pipeline decodes in pieces
    /// ([`Object::decodes_in_pieces`]) and is not the identity; `None`
    /// otherwise (an object stored as is decodes by borrowing its stored
    /// bytes, which the caller pages out behind each step).
    pub(super) fn of(obj: &'o Object<'a>, opts: &'o DecodeOptions) -> Option<Self> {
        let d = obj.descriptor();
        let stored_as_is = [d.encoding(), d.filter(), d.compression()] == ["none"; 3];
        if d.dtype != tgm::Dtype::Float64 || stored_as_is || !obj.decodes_in_pieces() {
            return None;
        }
        let len = usize::try_from(d.num_elements().ok()?).ok()?;
        let paging = tgm::pipeline::ProgressHook::paging_out(obj.payload_region());
        let opts = opts.clone().progress(paging.then(opts.progress.clone()));
        Some(Pieces {
            obj,
            opts,
            len,
            buf: RefCell::default(),
            aligned: RefCell::default(),
        })
    }
}

impl FieldValues for Pieces<'_, '_> {
    fn len(&self) -> usize {
        self.len
    }

    fn each_step(&self, f: &mut OnStep<'_>) -> Result<(), GribError> {
        let (mut buf, mut aligned) = (self.buf.borrow_mut(), self.aligned.borrow_mut());
        // The caller's error, carried out through the library's callback.
        let mut failed = None;
        let run = self
            .obj
            .decode_pieces(&self.opts, STEP * 8, &mut buf, |first, bytes| {
                let step = match bytemuck::try_cast_slice::<u8, f64>(bytes) {
                    Ok(v) => v,
                    Err(_) => {
                        aligned.clear();
                        aligned.extend(
                            bytes
                                .chunks_exact(8)
                                .map(|c| f64::from_ne_bytes(c.try_into().unwrap_or_default())),
                        );
                        &aligned[..]
                    }
                };
                // `first` is below the object's element count, a usize.
                f(first as usize, step).map_err(|e| {
                    failed = Some(e);
                    tgm::Error::invalid_argument("stopped by the GRIB writer")
                })
            });
        match (failed, run) {
            (Some(e), _) => Err(e),
            (None, r) => r.map_err(GribError::from),
        }
    }

    fn whole(&self) -> Result<Cow<'_, [f64]>, GribError> {
        // The payload must be able to supply the object before its buffer
        // is reserved (`spec/pipeline.md` §6.9).
        self.obj.checked_decoded_len(&self.opts)?;
        let mut values = Vec::new();
        values
            .try_reserve_exact(self.len)
            .map_err(|_| GribError::Invalid(format!("cannot allocate {} values", self.len)))?;
        values.resize(self.len, 0.0);
        self.obj
            .decode_into(&self.opts, bytemuck::cast_slice_mut(&mut values))?;
        Ok(Cow::Owned(values))
    }
}
