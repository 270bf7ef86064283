//! `.npy` input without copying the array: the file is memory-mapped and
//! the element bytes are borrowed from the mapping. See `spec/format.md` §13.

use std::borrow::Cow;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use tgm::{ByteOrder, Dtype, ObjectDescriptor};

use crate::error::{CliError, CliResult, WithPath};

/// A `.npy` file opened for import.
pub struct NpyInput {
    map: Option<Arc<memmap2::Mmap>>,
    owned: Option<Vec<u8>>,
    data_start: usize,
    /// Element type.
    pub dtype: Dtype,
    /// Byte order of the elements.
    pub order: ByteOrder,
    /// Shape (row-major).
    pub shape: Vec<u64>,
    /// The file held NumPy booleans.
    pub was_bool: bool,
}

fn bad(path: &Path, why: impl std::fmt::Display) -> CliError {
    CliError::Failed(format!("{}: {why}", path.display()))
}

impl NpyInput {
    /// Opens and checks `path`; the data is not read.
    pub fn open(path: &Path) -> CliResult<Self> {
        if path.is_dir() {
            return Err(bad(path, "is a directory"));
        }
        let file = File::open(path).at(path)?;
        let len = file.metadata().at(path)?.len();
        if len < 10 {
            return Err(bad(path, "not a .npy file (too short)"));
        }
        // SAFETY: the mapping is read-only; a concurrent truncation by another
        // process is outside what the tool defends against (as for any mmap reader).
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(&file) }.at(path)?;
        let h = tgm::npy::read_npy_header(&map).at(path)?;
        if h.fortran_order && h.shape.len() > 1 {
            // Column-major input is reordered in memory by the library reader.
            let arr = tgm::npy::read_npy(&map).at(path)?;
            return Ok(NpyInput {
                map: None,
                owned: Some(arr.data),
                data_start: 0,
                dtype: h.dtype,
                order: h.byte_order,
                shape: h.shape,
                was_bool: h.was_bool,
            });
        }
        Ok(NpyInput {
            map: Some(Arc::new(map)),
            owned: None,
            data_start: h.data_offset,
            dtype: h.dtype,
            order: h.byte_order,
            shape: h.shape,
            was_bool: h.was_bool,
        })
    }

    /// The element bytes, in C order.
    pub fn data(&self) -> Cow<'_, [u8]> {
        match (&self.map, &self.owned) {
            (Some(m), _) => Cow::Borrowed(&m[self.data_start..]),
            (None, Some(v)) => Cow::Borrowed(v),
            (None, None) => Cow::Borrowed(&[]),
        }
    }

    /// What lets an encode give back the mapped pages it has read, when
    /// the array is mapped.
    pub fn releaser(&self) -> Option<Consumed> {
        self.map.as_ref().map(|m| Consumed {
            map: Arc::clone(m),
            start: self.data_start,
        })
    }

    /// A plain descriptor for the array.
    pub fn descriptor(&self) -> ObjectDescriptor {
        ObjectDescriptor::new(self.dtype, self.shape.clone()).with_byte_order(self.order)
    }
}

/// The mapped element bytes of an array being encoded, whose pages the
/// encoder has finished reading can be dropped from the process's memory
/// (`spec/pipeline.md` §6.7): the page cache keeps them, and a later read
/// maps them in again, so only resident memory changes.
#[derive(Clone)]
pub struct Consumed {
    map: Arc<memmap2::Mmap>,
    start: usize,
}

impl Consumed {
    /// Drops the pages of the first `read` element bytes from resident
    /// memory. Best effort: a refusal by the kernel changes nothing else.
    pub fn release(&self, read: u64) {
        if read == 0 {
            return;
        }
        let end = self
            .start
            .saturating_add(usize::try_from(read).unwrap_or(usize::MAX))
            .min(self.map.len());
        // SAFETY: the mapping is private, read-only and never written, so
        // dropping its pages loses nothing: the next access reads the file
        // again (madvise(2), MADV_DONTNEED on a file mapping).
        #[allow(unsafe_code)]
        let _ = unsafe {
            self.map
                .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, end)
        };
    }
}
