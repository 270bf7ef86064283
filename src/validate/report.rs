//! What [`super::validate`] finds: issues with a stable code, grouped per
//! message, plus the damage between messages (`spec/files.md` §8).

use serde::Serialize;

/// The four validation levels, lightest first (`spec/files.md` §8.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Level 1: magic bytes, lengths, frame headers and order.
    Structure = 1,
    /// Level 2: metadata, index, hash table and descriptors parse and agree.
    Metadata = 2,
    /// Level 3: frame digests match and payloads decode.
    Integrity = 3,
    /// Level 4: decoded values hold no unexpected NaN or infinity.
    Fidelity = 4,
}

/// How bad an issue is: any error makes the report fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The message is damaged or cannot be trusted.
    Error,
    /// Worth knowing, not a failure (a frame without a digest).
    Warning,
}

/// Stable machine-readable issue codes; each serialises to the reference
/// tool's snake_case string (`spec/files.md` §8.2 lists which level
/// reports which).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum IssueCode {
    /// Fewer bytes than a preamble and a postamble.
    BufferTooShort,
    /// The message does not start with `TENSOGRM`.
    InvalidMagic,
    /// The preamble names an unsupported version or is otherwise unreadable.
    PreambleParseFailed,
    /// The message's total length runs past the bytes given.
    TotalLengthExceedsBuffer,
    /// The postamble's end magic or footer offset is wrong.
    PostambleInvalid,
    /// A frame header, length or position is inconsistent.
    InvalidFrameHeader,
    /// The message has no metadata frame.
    NoMetadataFrame,
    /// The metadata frame's CBOR does not parse.
    MetadataCborParseFailed,
    /// The metadata frame's CBOR map keys are not in canonical order.
    MetadataCborNonCanonical,
    /// An index frame's CBOR does not parse.
    IndexCborParseFailed,
    /// An index frame disagrees with the data frames present.
    IndexOffsetMismatch,
    /// The hash frame's CBOR does not parse.
    HashFrameCborParseFailed,
    /// The hash frame lists another number of digests than objects.
    HashFrameCountMismatch,
    /// A preceder frame's CBOR does not parse.
    PrecederCborParseFailed,
    /// A preceder frame's CBOR map keys are not in canonical order.
    PrecederCborNonCanonical,
    /// A preceder's `base` does not hold exactly one entry.
    PrecederBaseCountWrong,
    /// The metadata's `base` lists more entries than the message has objects.
    BaseCountExceedsObjects,
    /// A descriptor's CBOR does not parse into a valid descriptor.
    DescriptorCborParseFailed,
    /// A descriptor's CBOR map keys are not in canonical order.
    DescriptorCborNonCanonical,
    /// A descriptor names an encoding tgm does not know.
    UnknownEncoding,
    /// A descriptor names a filter tgm does not know.
    UnknownFilter,
    /// A descriptor names a compression tgm does not know or was built without.
    UnknownCompression,
    /// A frame's stored digest differs from the recomputed one.
    HashMismatch,
    /// The hash frame names an algorithm other than xxh3.
    UnknownHashAlgorithm,
    /// An object carries no digest, so its bytes cannot be checked.
    NoHashAvailable,
    /// An object's payload does not decode.
    DecodePipelineFailed,
    /// A float object holds a NaN where no mask declares one.
    NanDetected,
    /// A float object holds an infinity where no mask declares one.
    InfDetected,
}

/// One finding in one message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Issue {
    /// What was found.
    pub code: IssueCode,
    /// The level whose check found it.
    pub level: Level,
    /// Error or warning.
    pub severity: Severity,
    /// Index of the message in the source.
    #[serde(skip)]
    pub message_index: usize,
    /// Index of the object in the message, when the issue concerns one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_index: Option<usize>,
    /// Absolute byte offset in the source, when known. Serialised as
    /// `byte_offset`, relative to the message start (the reference's JSON).
    #[serde(skip)]
    pub offset: Option<u64>,
    /// Offset from the message start (`offset` minus the message's offset).
    #[serde(rename = "byte_offset", skip_serializing_if = "Option::is_none")]
    pub offset_in_message: Option<u64>,
    /// What is wrong, for a person.
    pub description: String,
}

/// Bytes of the source that belong to no complete message: garbage
/// between messages, a truncated message, or trailing bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileIssue {
    /// Absolute offset of the first such byte.
    pub byte_offset: u64,
    /// Number of such bytes.
    pub length: u64,
    /// What the bytes are, for a person.
    pub description: String,
}

/// The findings for one message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageReport {
    /// Absolute offset of the message in the source.
    #[serde(rename = "byte_offset")]
    pub offset: u64,
    /// Everything found, in the order the levels ran.
    pub issues: Vec<Issue>,
    /// Number of data objects the message's structure holds.
    pub object_count: usize,
    /// Every object's digest was present and matched, and no error was found.
    pub hash_verified: bool,
}

impl MessageReport {
    /// No issue of severity error.
    pub fn is_ok(&self) -> bool {
        !self.issues.iter().any(|i| i.severity == Severity::Error)
    }
}

/// The findings for a whole source: every complete message and the damage
/// between them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Bytes outside complete messages, in source order.
    pub file_issues: Vec<FileIssue>,
    /// One report per complete message, in source order.
    pub messages: Vec<MessageReport>,
}

impl Report {
    /// No damage between messages and no message with an error.
    pub fn is_ok(&self) -> bool {
        self.file_issues.is_empty() && self.messages.iter().all(MessageReport::is_ok)
    }

    /// Objects over all messages.
    pub fn total_objects(&self) -> usize {
        self.messages.iter().map(|m| m.object_count).sum()
    }

    /// At least one message, and every message's digests verified.
    pub fn hash_verified(&self) -> bool {
        !self.messages.is_empty() && self.messages.iter().all(|m| m.hash_verified)
    }

    /// Every issue of every message, in order.
    pub fn issues(&self) -> impl Iterator<Item = &Issue> {
        self.messages.iter().flat_map(|m| &m.issues)
    }

    /// The report as the reference tool's `validate --json` entry for one
    /// file: `{file, status, messages, objects, hash_verified, file_issues,
    /// message_reports}`.
    pub fn to_json(&self, file: &str) -> serde_json::Value {
        serde_json::json!({
            "file": file,
            "status": if self.is_ok() { "ok" } else { "failed" },
            "messages": self.messages.len(),
            "objects": self.total_objects(),
            "hash_verified": self.hash_verified(),
            "file_issues": self.file_issues,
            "message_reports": self.messages,
        })
    }
}
