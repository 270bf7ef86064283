//! Appending messages to a file so that a crash loses at most the message
//! being written. See `spec/files.md` §5.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::catalogue::Catalogue;
use super::local::Backend;
use super::reader::TgmFile;
use super::TornTail;
use crate::encode::{encode, EncodeOptions};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::metadata::GlobalMetadata;
use crate::stream::StreamingEncoder;
use crate::ObjectDescriptor;

/// What to do with an incomplete message left at the end by an interrupted append.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TornTailPolicy {
    /// Cut the file back to the end of the last complete message (default).
    /// Nothing complete is lost: a tail in which any message can be
    /// delimited is refused instead of cut.
    #[default]
    Truncate,
    /// Refuse to append; the caller decides (e.g. runs `tgm salvage`).
    Refuse,
}

/// Options of [`Appender::open`].
#[non_exhaustive]
#[derive(Debug, Clone)]
pub struct AppendOptions {
    /// Torn-tail handling.
    pub torn_tail: TornTailPolicy,
    /// Limits used when indexing the existing file.
    pub limits: Limits,
    /// Whether [`Appender::finish`] ends the file with a catalogue
    /// (`spec/files.md` §9.4); default true.
    pub catalogue: bool,
}

impl Default for AppendOptions {
    fn default() -> Self {
        AppendOptions {
            torn_tail: TornTailPolicy::default(),
            limits: Limits::default(),
            catalogue: true,
        }
    }
}

impl AppendOptions {
    /// Sets whether [`Appender::finish`] writes a catalogue.
    pub fn catalogue(mut self, on: bool) -> Self {
        self.catalogue = on;
        self
    }

    /// Sets the torn-tail policy.
    pub fn torn_tail(mut self, p: TornTailPolicy) -> Self {
        self.torn_tail = p;
        self
    }
}

/// An exclusive appender to a `.tgm` file.
///
/// Each buffered message is written with one `write_all` at the end of the
/// file and synced before `append_*` returns; a streaming message is written
/// object by object and its length back-filled at the end.
#[derive(Debug)]
pub struct Appender {
    path: PathBuf,
    file: File,
    end: u64,
    repaired: Option<TornTail>,
    /// Catalogue messages lie from `end` to the end of the file; they are
    /// cut before the first message is written (`spec/files.md` §9.4).
    catalogue_after: bool,
    /// The catalogue the file was opened with, reused by [`Self::finish`].
    prior: Option<Catalogue>,
    catalogue: bool,
    limits: Limits,
}

/// Cutting a torn tail must never destroy a message, nor change how the
/// rest of the file reads. A tail that is one interrupted message can still
/// contain a delimitable message: one carried in its payload, or a real one
/// after a frame whose length was damaged. Which it is cannot be told, so
/// such a tail is left for the caller. And a damaged region before the
/// tail may read differently once the bytes after it are gone (a chain of
/// frames that broke inside the tail would then run to the end), so the
/// file as it would be after the cut is indexed first and must show the
/// same messages and no torn tail.
fn refuse_unsafe_cut(
    file: &File,
    path: &Path,
    spans: &[crate::wire::scan::MessageSpan],
    t: &TornTail,
    limits: &Limits,
) -> Result<()> {
    let map = super::pod::map_file(file)?;
    let Some(cut) = usize::try_from(t.offset).ok().filter(|&c| c <= map.len()) else {
        return Ok(());
    };
    let (tail, kept) = (&map[cut..], &map[..cut]);
    // Every position that starts a message, except an interrupted one
    // (it runs to the end, so nothing it appears to delimit is real).
    let mut sc = crate::wire::scan::Scanner::new(tail, limits);
    let mut q = 0;
    let mut found = None;
    while let Some(m) = sc.next_magic(q) {
        if !sc.is_cut_short(m) {
            if let Some(s) = sc.message_at(m) {
                found = Some(s);
                break;
            }
        }
        q = m + 1;
    }
    if let Some(inner) = found {
        return Err(Error::framing(format!(
            "{} ends with {} bytes that form no complete message ({}), but a message can be \
             delimited inside them at offset {}: it may be carried in the interrupted message's \
             payload or be intact data after damage, so the tail is not cut; run `tgm salvage`, \
             or truncate the file to {} bytes if the tail is an interrupted append",
            path.display(),
            t.len,
            t.reason,
            t.offset + inner.offset,
            t.offset
        ))
        .at(t.offset));
    }
    let (after, torn_after) = super::index::index_bytes(kept, limits);
    if after != spans || torn_after.is_some() {
        return Err(Error::framing(format!(
            "{}: cutting the {} bytes from offset {} ({}) would change how the damaged bytes \
             before them read ({} messages instead of {}), so the tail is not cut; run `tgm salvage`",
            path.display(),
            t.len,
            t.offset,
            t.reason,
            after.len(),
            spans.len()
        ))
        .at(t.offset));
    }
    Ok(())
}

impl Appender {
    /// Opens (creating if needed) and locks `path` for appending.
    pub fn open(path: impl AsRef<Path>, opts: &AppendOptions) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::from(e).with_path(&path))?;
        file.lock().map_err(|e| Error::from(e).with_path(&path))?;
        let existing = TgmFile::open_with(&path, Backend::Pread, &opts.limits)?;
        let end = existing.spans().last().map_or(0, |s| s.offset + s.len);
        let mut repaired = None;
        if let Some(t) = existing.torn_tail() {
            match opts.torn_tail {
                TornTailPolicy::Refuse => {
                    return Err(Error::framing(format!(
                        "{} ends with {} bytes that form no complete message ({}); run `tgm salvage` or append with truncation",
                        path.display(),
                        t.len,
                        t.reason
                    ))
                    .at(t.offset))
                }
                TornTailPolicy::Truncate => {
                    refuse_unsafe_cut(&file, &path, existing.spans(), t, &opts.limits)?;
                    file.set_len(t.offset)?;
                    file.sync_all()?;
                    repaired = Some(t.clone());
                }
            }
        }
        // Catalogue messages after the last listed message: the next
        // message takes their place.
        let cats = existing.catalogue_spans();
        let catalogue_after = repaired.is_none()
            && existing.torn_tail().is_none()
            && cats
                .last()
                .is_some_and(|c| c.offset + c.len == existing.size())
            && cats
                .iter()
                .filter(|c| c.offset >= end)
                .try_fold(end, |at, c| (c.offset == at).then_some(at + c.len))
                == Some(existing.size());
        let end = if catalogue_after {
            end
        } else {
            repaired
                .as_ref()
                .map_or(end.max(existing.size()), |t| t.offset)
        };
        Ok(Appender {
            path,
            file,
            end,
            repaired,
            catalogue_after,
            prior: existing.catalogue().cloned(),
            catalogue: opts.catalogue,
            limits: opts.limits.clone(),
        })
    }

    /// Cuts the catalogue messages after the last message, once, before
    /// anything is written in their place.
    fn cut_catalogue(&mut self) -> Result<()> {
        if self.catalogue_after {
            self.file.set_len(self.end)?;
            self.file.sync_data()?;
            self.catalogue_after = false;
        }
        Ok(())
    }

    /// Reuses `prior`'s entries for the messages it lists at the same
    /// place when [`Self::finish`] writes the catalogue, when the file was
    /// not opened with one: a writer that kept the catalogue a file was
    /// opened with across appends made without it (`spec/files.md` §9.4)
    /// reads only the new messages.
    pub fn reusing(mut self, prior: Option<Catalogue>) -> Self {
        if self.prior.is_none() {
            self.prior = prior;
        }
        self
    }

    /// Ends the file with a catalogue of every message in it (unless the
    /// options turned catalogues off) and syncs it; returns the
    /// catalogue's length, `None` when none was written (turned off, or
    /// the file is not wholly complete messages). A file appended to and
    /// never finished has no catalogue and is read by scanning
    /// (`spec/files.md` §9.4).
    pub fn finish(mut self) -> Result<Option<u64>> {
        if !self.catalogue {
            return Ok(None);
        }
        self.cut_catalogue()?;
        super::catalogue::end_with_catalogue_in(
            &self.file,
            &self.path,
            self.prior.as_ref(),
            &self.limits,
        )
    }

    /// The torn tail that was cut off when the file was opened, if any.
    pub fn repaired_tail(&self) -> Option<&TornTail> {
        self.repaired.as_ref()
    }

    /// The path being appended to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends an already encoded message and syncs it to disk.
    pub fn append_bytes(&mut self, message: &[u8]) -> Result<()> {
        self.cut_catalogue()?;
        self.file.seek(SeekFrom::Start(self.end))?;
        self.file.write_all(message)?;
        self.file.sync_data()?;
        self.end += message.len() as u64;
        Ok(())
    }

    /// Encodes and appends one buffered message.
    pub fn append(
        &mut self,
        metadata: &GlobalMetadata,
        objects: &[(&ObjectDescriptor, &[u8])],
        opts: &EncodeOptions,
    ) -> Result<()> {
        let msg = encode(metadata, objects, opts)?;
        self.append_bytes(&msg)
    }

    /// Starts a streaming message at the end of the file; memory stays
    /// bounded by one object. Finish it with [`StreamingAppend::finish`].
    pub fn stream(
        &mut self,
        metadata: &GlobalMetadata,
        opts: &EncodeOptions,
    ) -> Result<StreamingAppend<'_>> {
        self.cut_catalogue()?;
        self.file.seek(SeekFrom::Start(self.end))?;
        let enc = StreamingEncoder::new(&mut self.file, metadata, opts)?;
        Ok(StreamingAppend {
            enc: Some(enc),
            end: &mut self.end,
        })
    }
}

/// A streaming message being appended.
pub struct StreamingAppend<'a> {
    enc: Option<StreamingEncoder<&'a mut File>>,
    end: &'a mut u64,
}

impl<'a> StreamingAppend<'a> {
    /// Writes per-object metadata for the next object.
    pub fn write_preceder(&mut self, entry: crate::Map) -> Result<()> {
        self.encoder()?.write_preceder(entry)
    }

    /// Writes one object.
    pub fn write_object(&mut self, d: &ObjectDescriptor, data: &[u8]) -> Result<()> {
        self.encoder()?.write_object(d, data)
    }

    fn encoder(&mut self) -> Result<&mut StreamingEncoder<&'a mut File>> {
        self.enc
            .as_mut()
            .ok_or_else(|| Error::invalid_argument("streaming append already finished"))
    }

    /// Writes the footer, back-fills the length and syncs.
    pub fn finish(mut self) -> Result<u64> {
        let enc = self
            .enc
            .take()
            .ok_or_else(|| Error::invalid_argument("streaming append already finished"))?;
        let (file, len) = enc.finish_with_backfill()?;
        file.sync_data()?;
        *self.end += len;
        Ok(len)
    }
}
