//! The DICOM files of an object written as it is decoded (docs/src/
//! performance/memory.md): the decoded pieces, of any size, are gathered
//! into one file's pixels at a time, and each file is built and handed on
//! as soon as its pixels are complete. Memory holds one file's pixels
//! beside what the decode needs, not the decoded object.

use super::dicom_write::{DicomWriter, Emitted};
use super::{MedicalError, MedicalResult};

/// Where each built file goes: `emit(index, bytes)`; an error stops there.
pub type Emit<'a> = &'a mut dyn FnMut(usize, Vec<u8>) -> MedicalResult;

/// An object's files built from its decoded bytes handed on in order.
pub struct DicomStream {
    writer: DicomWriter,
    /// The pixels of the next file received so far (fewer than a file's).
    pending: Vec<u8>,
    /// Files handed on.
    next: usize,
    /// Bytes received.
    received: u64,
}

impl DicomStream {
    /// The files of `writer`'s object, none yet received.
    pub fn new(writer: DicomWriter) -> Self {
        DicomStream {
            writer,
            pending: Vec::new(),
            next: 0,
            received: 0,
        }
    }

    /// Takes the next decoded bytes of the object, handing each file their
    /// completion finishes to `emit`. Bytes beyond the object's are refused.
    pub fn push(&mut self, mut piece: &[u8], emit: Emit<'_>) -> MedicalResult {
        let total = self.writer.object_bytes();
        if self.received + piece.len() as u64 > total {
            return Err(MedicalError::invalid(format!(
                "the decode gave more than the object's {total} bytes (shape and payload disagree)"
            )));
        }
        self.received += piece.len() as u64;
        let size = self.writer.file_bytes();
        while !piece.is_empty() {
            // Whole files straight from the piece; the rest gathered.
            if self.pending.is_empty() && piece.len() >= size {
                let (pixels, rest) = piece.split_at(size);
                self.emit(pixels, emit)?;
                piece = rest;
                continue;
            }
            // Grown by what arrives, never by what the descriptor claims
            // one file holds (an RT Dose file is the whole object): at
            // least doubling, never past the file.
            let take = (size - self.pending.len()).min(piece.len());
            if self.pending.capacity() - self.pending.len() < take {
                let grow = take.max(self.pending.capacity());
                self.pending
                    .reserve_exact(grow.min(size - self.pending.len()));
            }
            self.pending.extend_from_slice(&piece[..take]);
            piece = &piece[take..];
            if self.pending.len() == size {
                let pixels = std::mem::take(&mut self.pending);
                self.emit(&pixels, emit)?;
                self.pending = pixels;
                self.pending.clear();
            }
        }
        Ok(())
    }

    fn emit(&mut self, pixels: &[u8], emit: Emit<'_>) -> MedicalResult {
        let file = self.writer.file(self.next, pixels)?;
        emit(self.next, file)?;
        self.next += 1;
        Ok(())
    }

    /// What was written, once every byte of the object was received.
    pub fn finish(self) -> MedicalResult<Emitted> {
        let total = self.writer.object_bytes();
        if self.received != total {
            return Err(MedicalError::invalid(format!(
                "the decode gave {} of the object's {total} bytes",
                self.received
            )));
        }
        Ok(self.writer.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medical::dicom_conform::Conformance;
    use crate::medical::dicom_write::object_to_dicom;
    use tgm::{Dtype, Map, ObjectDescriptor};

    fn entry(sop_class: &str) -> Map {
        crate::medical::dicom_write::tests::entry(&[
            ("SOPClassUID", sop_class),
            ("SeriesInstanceUID", "1.2.3.4"),
            ("GridFrameOffsetVector", "0\\2\\4\\6\\8"),
            ("DoseUnits", "GY"),
            ("DoseType", "PHYSICAL"),
            ("DoseSummationType", "PLAN"),
            ("DoseGridScaling", "0.001"),
        ])
    }

    /// The files of `data` streamed in pieces of `piece` bytes.
    fn streamed(d: &ObjectDescriptor, e: &Map, data: &[u8], piece: usize) -> Vec<Vec<u8>> {
        let mut s = DicomStream::new(DicomWriter::new(d, e.clone(), Conformance::Strict).unwrap());
        let mut files = Vec::new();
        let mut emit = |i: usize, f: Vec<u8>| -> MedicalResult {
            assert_eq!(i, files.len());
            files.push(f);
            Ok(())
        };
        for p in data.chunks(piece) {
            s.push(p, &mut emit).unwrap();
        }
        let emitted = s.finish().unwrap();
        assert_eq!(emitted.files, files.len());
        files
    }

    #[test]
    fn pieces_of_any_size_give_the_files_of_the_whole_object() {
        // 5 slices of 3 x 7 int16: 42 bytes each.
        let d = ObjectDescriptor::new(Dtype::Int16, vec![5, 3, 7]);
        let data: Vec<u8> = (0..5 * 3 * 7 * 2).map(|i| (i * 37 % 251) as u8).collect();
        for sop_class in ["1.2.840.10008.5.1.4.1.1.2", "1.2.840.10008.5.1.4.1.1.481.2"] {
            let d = match sop_class.ends_with(".481.2") {
                true => ObjectDescriptor::new(Dtype::Uint32, vec![5, 3, 7]),
                false => d.clone(),
            };
            let data = match d.dtype {
                Dtype::Uint32 => [&data[..], &data[..]].concat(),
                _ => data.clone(),
            };
            let e = entry(sop_class);
            let whole = object_to_dicom(&d, &data, &e, Conformance::Strict)
                .unwrap()
                .files;
            let expected = if sop_class.ends_with(".481.2") { 1 } else { 5 };
            assert_eq!(whole.len(), expected);
            for piece in [1, 2, 41, 42, 43, 84, 100, data.len()] {
                assert_eq!(
                    streamed(&d, &e, &data, piece),
                    whole,
                    "{sop_class} pieces of {piece}"
                );
            }
        }
    }

    #[test]
    fn too_many_or_too_few_bytes_are_refused() {
        let d = ObjectDescriptor::new(Dtype::Int16, vec![2, 1, 3]);
        let e = entry("1.2.840.10008.5.1.4.1.1.2");
        let writer = || DicomWriter::new(&d, e.clone(), Conformance::Strict).unwrap();
        let mut none = |_: usize, _: Vec<u8>| -> MedicalResult { Ok(()) };
        let mut s = DicomStream::new(writer());
        s.push(&[0; 10], &mut none).unwrap();
        let err = s.finish().unwrap_err().to_string();
        assert!(err.contains("gave 10 of the object's 12 bytes"), "{err}");
        let mut s = DicomStream::new(writer());
        s.push(&[0; 10], &mut none).unwrap();
        let err = s.push(&[0; 3], &mut none).unwrap_err().to_string();
        assert!(err.contains("more than the object's 12 bytes"), "{err}");
    }

    #[test]
    fn an_error_from_emit_stops_the_stream() {
        let d = ObjectDescriptor::new(Dtype::Int16, vec![3, 1, 2]);
        let e = entry("1.2.840.10008.5.1.4.1.1.2");
        let mut s = DicomStream::new(DicomWriter::new(&d, e, Conformance::Strict).unwrap());
        let mut calls = 0;
        let mut failing = |i: usize, _: Vec<u8>| -> MedicalResult {
            calls += 1;
            match i {
                1 => Err(MedicalError::invalid("disk full")),
                _ => Ok(()),
            }
        };
        let err = s.push(&[0; 12], &mut failing).unwrap_err().to_string();
        assert_eq!(err, "disk full");
        assert_eq!(calls, 2);
    }
}
