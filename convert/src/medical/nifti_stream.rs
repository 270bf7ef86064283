//! A NIfTI file written as its voxels are decoded (docs/src/performance/
//! memory.md): the header, then each decoded piece as it comes, through
//! gzip for a `.nii.gz`, so no copy of the volume is held for the output.

use std::io::Write;

use flate2::Compression;

use super::gz_parallel::ParallelGzip;

/// The gzip level of a `.nii.gz` written by `to-nifti`: 2, zlib-rs's
/// fastest with Huffman codes fitted to the data (its level 1 uses fixed
/// codes, which made a 512 MiB float64 volume 519 MiB where nibabel's
/// level 1 makes 375).
pub const GZIP_LEVEL: u32 = 2;

/// The output of one NIfTI file: plain, or gzip-compressed.
pub enum NiftiStream<W: Write> {
    /// A `.nii`.
    Plain(W),
    /// A `.nii.gz`: one gzip member, deflated on several threads
    /// ([`ParallelGzip`]).
    Gzip(Box<ParallelGzip<W>>),
}

impl<W: Write> NiftiStream<W> {
    /// A stream into `out`, gzip-compressed when `gzip` (the gzip header
    /// is written here).
    pub fn new(out: W, gzip: bool) -> std::io::Result<Self> {
        Ok(match gzip {
            true => NiftiStream::Gzip(Box::new(ParallelGzip::new(
                out,
                Compression::new(GZIP_LEVEL),
            )?)),
            false => NiftiStream::Plain(out),
        })
    }

    /// Writes the next bytes of the file (header, then voxels).
    pub fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            NiftiStream::Plain(w) => w.write_all(bytes),
            NiftiStream::Gzip(g) => g.write_all(bytes),
        }
    }

    /// Ends the file (the gzip trailer) and gives back the output.
    pub fn finish(self) -> std::io::Result<W> {
        match self {
            NiftiStream::Plain(w) => Ok(w),
            NiftiStream::Gzip(g) => g.finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_gzip_stream_inflates_to_what_was_written() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 253) as u8).collect();
        let mut s = NiftiStream::new(Vec::new(), true).unwrap();
        for piece in data.chunks(4096) {
            s.write(piece).unwrap();
        }
        let gz = s.finish().unwrap();
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, data);
        let mut s = NiftiStream::new(Vec::new(), false).unwrap();
        s.write(&data).unwrap();
        assert_eq!(s.finish().unwrap(), data);
    }
}
