//! One validator for every door (`spec/files.md` §8): the CLI's
//! `validate`, Python's `validate`/`validate_file` and library users all
//! call [`validate`] and only display its [`Report`].
//!
//! ```
//! # fn main() -> tgm::Result<()> {
//! use tgm::validate::{validate, Mode, ValidateOptions};
//! let desc = tgm::ObjectDescriptor::new(tgm::Dtype::Float32, vec![2]);
//! let meta = tgm::GlobalMetadata::default();
//! let msg = tgm::encode(&meta, &[(&desc, &[0u8; 8][..])], &tgm::EncodeOptions::new())?;
//! let report = validate(&msg[..], Mode::Full, &ValidateOptions::default())?;
//! assert!(report.is_ok() && report.hash_verified());
//! # Ok(())
//! # }
//! ```

mod canonical;
mod finite;
mod message;
mod report;

use std::borrow::Cow;
use std::path::Path;
use std::str::FromStr;

pub use report::{FileIssue, Issue, IssueCode, Level, MessageReport, Report, Severity};

use crate::file::{ByteSource, TgmFile, TornTail};
use crate::{Error, Limits, MessageSpan, Result};

/// How deep to validate: the reference tool's `--quick`, default,
/// `--checksum` and `--full` (`spec/files.md` §8.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// Level 1: structure only.
    Quick,
    /// Levels 1–3: structure, metadata, digests and payload decoding.
    #[default]
    Default,
    /// Structure and digests only: no metadata parsing, no decoding.
    Checksum,
    /// Levels 1–4: also NaN and infinities not declared by a mask.
    Full,
}

impl FromStr for Mode {
    type Err = Error;

    /// `quick`, `default`, `checksum` or `full`, as Python's `level=`.
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "quick" => Ok(Mode::Quick),
            "default" => Ok(Mode::Default),
            "checksum" => Ok(Mode::Checksum),
            "full" => Ok(Mode::Full),
            other => Err(Error::invalid_argument(format!(
                "unknown validation level {other:?} (quick, default, checksum or full)"
            ))),
        }
    }
}

/// Settings of [`validate`] besides the [`Mode`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ValidateOptions {
    /// Also warn about CBOR whose map keys are not in canonical order
    /// (`--canonical`); combines with any mode.
    pub canonical: bool,
    /// Resource limits for parsing and decoding.
    pub limits: Limits,
}

impl ValidateOptions {
    /// Sets [`ValidateOptions::canonical`].
    pub fn canonical(mut self, on: bool) -> Self {
        self.canonical = on;
        self
    }

    /// Sets [`ValidateOptions::limits`].
    pub fn limits(mut self, l: Limits) -> Self {
        self.limits = l;
        self
    }
}

/// Where the messages to validate come from: bytes in memory or a
/// file reader. Implemented by `[u8]` and [`TgmFile`] over any source.
pub trait ValidateSource {
    /// Size in bytes, the complete messages, and the bytes after the last
    /// one that form no message.
    fn messages(&self, limits: &Limits) -> (u64, Cow<'_, [MessageSpan]>, Option<TornTail>);

    /// The bytes of message `i`, whose span is `span`.
    fn message_bytes(&self, i: usize, span: MessageSpan) -> Result<Cow<'_, [u8]>>;
}

impl ValidateSource for [u8] {
    fn messages(&self, limits: &Limits) -> (u64, Cow<'_, [MessageSpan]>, Option<TornTail>) {
        let (spans, torn) = crate::file::index::index_bytes(self, limits);
        (self.len() as u64, Cow::Owned(spans), torn)
    }

    fn message_bytes(&self, _: usize, span: MessageSpan) -> Result<Cow<'_, [u8]>> {
        Ok(Cow::Borrowed(&self[span.range()]))
    }
}

/// Every complete message is validated, catalogue messages
/// (`spec/files.md` §9.1) included: they are messages, only not listed.
impl<S: ByteSource> ValidateSource for TgmFile<S> {
    fn messages(&self, _: &Limits) -> (u64, Cow<'_, [MessageSpan]>, Option<TornTail>) {
        let torn = self.torn_tail().cloned();
        if self.catalogue_spans().is_empty() {
            return (self.size(), Cow::Borrowed(self.spans()), torn);
        }
        let mut all = [self.spans(), self.catalogue_spans()].concat();
        all.sort_by_key(|s| s.offset);
        (self.size(), Cow::Owned(all), torn)
    }

    fn message_bytes(&self, _: usize, span: MessageSpan) -> Result<Cow<'_, [u8]>> {
        let r = span.offset..span.offset + span.len;
        if let Some(all) = self.source().as_slice() {
            if let Some(b) = all.get(span.range()) {
                return Ok(Cow::Borrowed(b));
            }
        }
        let b = self.source().read_bytes(r)?;
        if b.len() as u64 != span.len {
            return Err(
                crate::Error::truncated("the source is shorter than located").at(span.offset),
            );
        }
        Ok(Cow::Owned(b.to_vec()))
    }
}

/// Validates every complete message of `source` and reports the bytes
/// between and after them that form no message (garbage, a truncated
/// message). Damage never stops the walk: every intact message is
/// reported. Errors only when `source` cannot be read.
///
/// ```
/// use tgm::validate::{Mode, ValidateOptions};
///
/// let junk = [0u8; 40];
/// let report = tgm::validate(&junk[..], Mode::Quick, &ValidateOptions::default())?;
/// assert!(!report.is_ok()); // 40 bytes that form no message
/// # Ok::<(), tgm::Error>(())
/// ```
pub fn validate<S: ValidateSource + ?Sized>(
    source: &S,
    mode: Mode,
    opts: &ValidateOptions,
) -> Result<Report> {
    let (size, spans, torn) = source.messages(&opts.limits);
    let mut file_issues = Vec::new();
    let mut messages = Vec::with_capacity(spans.len());
    let mut pos = 0u64;
    for (i, &span) in spans.iter().enumerate() {
        if span.offset > pos {
            let n = span.offset - pos;
            file_issues.push(FileIssue {
                byte_offset: pos,
                length: n,
                description: format!("{n} unrecognized bytes at offset {pos}"),
            });
        }
        let bytes = source.message_bytes(i, span)?;
        messages.push(message::check(&bytes, span.offset, i, mode, opts));
        pos = span.offset + span.len;
    }
    if pos < size {
        let n = size - pos;
        let why = torn.map_or(String::new(), |t| format!(": {}", t.reason));
        let description = if messages.is_empty() {
            format!("{n} bytes with no valid messages{why}")
        } else {
            format!("{n} trailing bytes after last message at offset {pos}{why}")
        };
        file_issues.push(FileIssue {
            byte_offset: pos,
            length: n,
            description,
        });
    }
    Ok(Report {
        file_issues,
        messages,
    })
}

/// Validates `bytes` as one message, as the reference's
/// `validate_message`: no scan for message boundaries, so a damaged
/// preamble is reported (`invalid_magic`, `buffer_too_short`) rather than
/// skipped as garbage.
pub fn validate_message(bytes: &[u8], mode: Mode, opts: &ValidateOptions) -> MessageReport {
    message::check(bytes, 0, 0, mode, opts)
}

/// Opens the file at `path` (memory-mapped) and [`validate`]s it; errors
/// name the path when it cannot be opened or read.
pub fn validate_file(path: impl AsRef<Path>, mode: Mode, opts: &ValidateOptions) -> Result<Report> {
    let path = path.as_ref();
    let f = TgmFile::open_with(path, crate::file::Backend::Mmap, &opts.limits)?;
    validate(&f, mode, opts).map_err(|e| e.with_path(path))
}
