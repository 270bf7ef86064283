//! The voxel bytes of a NIfTI volume: mapped from an uncompressed `.nii`,
//! or held in memory (inflated from a `.nii.gz`, or byte-swapped), and a
//! progress hook that releases the pages an encode has read for good
//! (`spec/pipeline.md` §6.7), so a volume and its encoding are not both
//! resident whole (docs/src/performance/memory.md). A DICOM series' volume, read into
//! memory, is released by the same hook.

use std::fs::File;
use std::ops::Deref;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tgm::pipeline::{page_out, ProgressHook};

use super::{MedicalError, MedicalErrorKind, MedicalResult};

/// Voxel bytes in stored order, `dim[1]` fastest.
pub enum Voxels {
    /// `len` bytes at `start` of a read-only mapping of the file.
    Mapped {
        /// The whole file.
        map: Arc<memmap2::Mmap>,
        /// Offset of the first voxel (`vox_offset`).
        start: usize,
        /// Bytes of voxel data.
        len: usize,
    },
    /// Bytes in memory.
    Owned(Vec<u8>),
}

impl Voxels {
    /// Maps `len` bytes at `start` of `file`, whose size was checked to be
    /// `start + len` (`nifti_check::check_sizes`).
    pub fn map(file: &File, start: u64, len: u64) -> std::io::Result<Voxels> {
        let too_large = || std::io::Error::other("too large to map");
        let start = usize::try_from(start).map_err(|_| too_large())?;
        let len = usize::try_from(len).map_err(|_| too_large())?;
        // SAFETY: the mapping is read-only and private; a concurrent
        // truncation of the file by another process is outside what the
        // tool defends against, as for any reader of a mapped file.
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(file) }?;
        if start.checked_add(len).is_none_or(|end| end > map.len()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "the file is {} bytes, the voxels end at {}",
                    map.len(),
                    start as u64 + len as u64
                ),
            ));
        }
        Ok(Voxels::Mapped {
            map: Arc::new(map),
            start,
            len,
        })
    }

    /// The bytes in memory: a mapped volume is copied, each piece paged
    /// out once copied, so the file and the copy are not both resident.
    pub fn into_owned(self) -> MedicalResult<Vec<u8>> {
        match self {
            Voxels::Owned(v) => Ok(v),
            Voxels::Mapped { .. } => Ok(tgm::pipeline::copy_paging_out(&self)?),
        }
    }

    /// The bytes, for writing (a mapped volume is copied first).
    pub fn to_mut(&mut self) -> MedicalResult<&mut Vec<u8>> {
        if let Voxels::Mapped { .. } = self {
            let owned = tgm::pipeline::copy_paging_out(self)?;
            *self = Voxels::Owned(owned);
        }
        match self {
            Voxels::Owned(v) => Ok(v),
            Voxels::Mapped { .. } => unreachable!("replaced above"),
        }
    }

    /// What releases the bytes' pages.
    fn release(&self) -> Release {
        match self {
            Voxels::Mapped { map, start, len } => Release::Mapped {
                map: Arc::clone(map),
                start: *start,
                len: *len,
            },
            Voxels::Owned(v) => Release::Owned {
                addr: v.as_ptr() as usize,
                len: v.len(),
            },
        }
    }
}

impl Deref for Voxels {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Voxels::Mapped { map, start, len } => &map[*start..*start + *len],
            Voxels::Owned(v) => v,
        }
    }
}

/// How the pages of one volume's bytes are released.
enum Release {
    /// Paged out of the mapping (the file keeps them), which the hook keeps
    /// alive.
    Mapped {
        map: Arc<memmap2::Mmap>,
        start: usize,
        len: usize,
    },
    /// Given back to the system: the bytes of a vector owned by the
    /// volume, which is dropped after the encode without being read again.
    Owned { addr: usize, len: usize },
}

impl Release {
    /// Releases the whole pages of the first `read` bytes.
    fn upto(&self, read: u64) {
        let read = usize::try_from(read).unwrap_or(usize::MAX);
        match self {
            Release::Mapped { map, start, len } => {
                page_out(&map[*start..*start + read.min(*len)]);
            }
            Release::Owned { addr, len } => discard(*addr, read.min(*len)),
        }
    }
}

/// Gives back the whole pages of the `len` bytes at `addr` (Linux
/// `MADV_DONTNEED`; elsewhere nothing).
#[cfg(target_os = "linux")]
fn discard(addr: usize, len: usize) {
    // SAFETY: sysconf has no preconditions.
    #[allow(unsafe_code)]
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let page = page.max(1);
    let start = addr.div_ceil(page) * page;
    let end = addr.saturating_add(len) / page * page;
    if end > start {
        // SAFETY: [start, end) holds whole pages inside a vector owned by a
        // volume being encoded, which the pipeline has read for good and
        // which is dropped after the encode without being read again
        // (`write_nifti_message`); MADV_DONTNEED only makes them read as
        // zeros, and the allocator's bookkeeping lies outside the vector.
        #[allow(unsafe_code)]
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn discard(_: usize, _: usize) {}

/// A hook for an encode of `volumes` in this order, one after another
/// (never on several threads at once), after which they are dropped
/// unread: it releases the leading bytes of each volume the pipeline
/// reports read for good, and moves to the next volume on the step that
/// ends one (`done == total`). Mapped pages come back from the file if
/// read again; the pages of volumes in memory read as zeros.
pub(crate) fn releasing(volumes: &[&Voxels]) -> ProgressHook {
    let releases: Vec<Release> = volumes.iter().map(|v| v.release()).collect();
    let current = AtomicUsize::new(0);
    ProgressHook::new(move |step| {
        let i = current.load(Ordering::Relaxed);
        if let Some(r) = releases.get(i) {
            r.upto(step.read);
        }
        if step.done == step.total {
            current.store(i + 1, Ordering::Relaxed);
        }
    })
}

/// Maps the voxels of the uncompressed image at `path`.
pub fn map_at(path: &Path, file: &File, start: u64, len: u64) -> MedicalResult<Voxels> {
    Voxels::map(file, start, len).map_err(|e| {
        MedicalError::at(MedicalErrorKind::Io, path, format!("cannot map: {e}")).with_source(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn mapped_voxels_are_the_file_bytes_after_the_offset() {
        let mut f = tempfile::tempfile().unwrap();
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i % 253) as u8).collect();
        f.write_all(&bytes).unwrap();
        let v = Voxels::map(&f, 352, 10_000 - 352).unwrap();
        assert_eq!(&v[..], &bytes[352..]);
        assert_eq!(v.into_owned().unwrap(), bytes[352..]);
        let e = Voxels::map(&f, 352, 10_000).err().unwrap();
        assert!(e.to_string().contains("voxels end at 10352"), "{e}");
        let mut v = Voxels::map(&f, 0, 4).unwrap();
        v.to_mut().unwrap()[0] = 99;
        assert_eq!(&v[..], &[99, 1, 2, 3]);
    }

    #[test]
    fn the_hook_follows_volumes_in_order() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![7u8; 1 << 16]).unwrap();
        let a = Voxels::map(&f, 0, 1 << 15).unwrap();
        let b = Voxels::Owned(vec![1; 1 << 20]);
        let c = Voxels::map(&f, 1 << 15, 1 << 15).unwrap();
        let zstd = tgm::PipelineBuilder::new().zstd();
        let d = |n: usize| {
            tgm::ObjectDescriptor::new(tgm::Dtype::Uint8, vec![n as u64]).with_pipeline(&zstd)
        };
        let descs = [d(a.len()), d(b.len()), d(c.len())];
        let objects = [
            (&descs[0], &a[..]),
            (&descs[1], &b[..]),
            (&descs[2], &c[..]),
        ];
        let meta = tgm::GlobalMetadata::default();
        let opts = tgm::EncodeOptions::new()
            .provenance(tgm::Provenance::fixed("2024-01-01T00:00:00Z", "t"));
        let without = tgm::encode(&meta, &objects, &opts).unwrap();
        let hook = releasing(&[&a, &b, &c]);
        let with = tgm::encode(&meta, &objects, &opts.clone().progress(hook)).unwrap();
        // Nothing was released before the pipeline read it.
        assert_eq!(with, without);
        // The mapped volumes' pages come back from the file; the whole
        // pages of the one in memory were given back (they read as zeros).
        assert!(a.iter().chain(c.iter()).all(|&x| x == 7));
        #[cfg(target_os = "linux")]
        {
            let zeros = b.iter().filter(|&&x| x == 0).count();
            assert!(
                zeros >= b.len() - 2 * 4096,
                "{zeros} of {} released",
                b.len()
            );
        }
    }
}
