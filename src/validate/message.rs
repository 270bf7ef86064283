//! The checks of one message, level by level (`spec/files.md` §8.1). Each
//! level reports every problem it can see and the next level skips only
//! what the previous one could not read.

use crate::cbor::{parse_one, CborLimits, Value};
use crate::decode::{Message, Object};
use crate::pipeline::codec::registry;
use crate::pipeline::StageKind;
use crate::wire::layout::parse_layout;
use crate::wire::{MAGIC, PREAMBLE_LEN};
use crate::{DecodeOptions, Error, ErrorKind, Limits, Verify};

use super::report::{Issue, IssueCode, Level, MessageReport, Severity};
use super::{canonical, finite, Mode, ValidateOptions};

/// Which checks a [`Mode`] runs.
#[derive(Debug, Clone, Copy)]
struct Plan {
    metadata: bool,
    hashes: bool,
    decode: bool,
    fidelity: bool,
    canonical: bool,
}

impl Plan {
    fn of(mode: Mode, opts: &ValidateOptions) -> Self {
        let (metadata, hashes, decode, fidelity) = match mode {
            Mode::Quick => (false, false, false, false),
            Mode::Checksum => (false, true, false, false),
            Mode::Default => (true, true, true, false),
            Mode::Full => (true, true, true, true),
        };
        Plan {
            metadata: metadata || opts.canonical,
            hashes,
            decode,
            fidelity,
            canonical: opts.canonical,
        }
    }
}

/// Issues of one message, positioned in the source.
struct Findings {
    message_index: usize,
    base: u64,
    issues: Vec<Issue>,
}

impl Findings {
    fn push(
        &mut self,
        (code, level, severity): (IssueCode, Level, Severity),
        object_index: Option<usize>,
        offset: Option<u64>,
        description: String,
    ) {
        self.issues.push(Issue {
            code,
            level,
            severity,
            message_index: self.message_index,
            object_index,
            offset,
            offset_in_message: offset.map(|o| o.saturating_sub(self.base)),
            description,
        });
    }

    /// An error issue from a library error, keeping its object and offset.
    fn error(&mut self, code: IssueCode, level: Level, e: &Error, object: Option<usize>) {
        let object = e.object_index().or(object);
        self.push(
            (code, level, Severity::Error),
            object,
            e.offset(),
            e.detail().to_string(),
        );
    }
}

/// Validates the message `bytes`, message `index` of its source at
/// absolute offset `base`.
pub(crate) fn check(
    bytes: &[u8],
    base: u64,
    index: usize,
    mode: Mode,
    opts: &ValidateOptions,
) -> MessageReport {
    let plan = Plan::of(mode, opts);
    let mut f = Findings {
        message_index: index,
        base,
        issues: Vec::new(),
    };
    let mut object_count = 0;
    let mut hash_verified = false;
    if let Some(m) = structure(bytes, base, opts, &mut f) {
        object_count = m.num_objects();
        let objects = if plan.metadata {
            metadata(&m, plan, &opts.limits, &mut f)
        } else {
            Vec::new()
        };
        if plan.hashes {
            hash_verified = hashes(&m, &mut f);
        }
        if plan.decode {
            let objects = objects.iter().flatten();
            decode(objects, plan.fidelity, opts, &mut f);
        }
    }
    let is_error = |i: &Issue| i.severity == Severity::Error;
    MessageReport {
        offset: base,
        hash_verified: hash_verified && !f.issues.iter().any(is_error),
        object_count,
        issues: f.issues,
    }
}

/// Level 1: the preamble, the frames and the postamble delimit; then the
/// index frames agree with the data frames (reported at level 2).
fn structure<'a>(
    bytes: &'a [u8],
    base: u64,
    opts: &ValidateOptions,
    f: &mut Findings,
) -> Option<Message<'a>> {
    let err = (IssueCode::BufferTooShort, Level::Structure, Severity::Error);
    if bytes.len() < PREAMBLE_LEN {
        let d = format!(
            "{} bytes cannot hold a preamble ({PREAMBLE_LEN} bytes)",
            bytes.len()
        );
        f.push(err, None, Some(base), d);
        return None;
    }
    if !bytes.starts_with(MAGIC) {
        let d = "the message does not start with the magic TENSOGRM".to_string();
        f.push((IssueCode::InvalidMagic, err.1, err.2), None, Some(base), d);
        return None;
    }
    if let Err(e) = parse_layout(bytes, base, &opts.limits) {
        let end = base + bytes.len() as u64;
        let code = match e.kind() {
            ErrorKind::UnsupportedVersion(_) => IssueCode::PreambleParseFailed,
            ErrorKind::Truncated => IssueCode::TotalLengthExceedsBuffer,
            ErrorKind::BadMagic if e.offset().is_some_and(|o| o + 8 >= end) => {
                IssueCode::PostambleInvalid
            }
            _ => IssueCode::InvalidFrameHeader,
        };
        f.error(code, Level::Structure, &e, None);
        return None;
    }
    match Message::parse_with(bytes, base, &opts.limits) {
        Ok(m) => {
            if m.layout().metadata_frame().is_none() {
                let d = "the message has no metadata frame".to_string();
                let code = (IssueCode::NoMetadataFrame, err.1, err.2);
                f.push(code, None, Some(base), d);
            }
            Some(m)
        }
        Err(e) => {
            let code = match e.kind() {
                ErrorKind::Cbor | ErrorKind::LimitExceeded { .. } => {
                    IssueCode::IndexCborParseFailed
                }
                _ => IssueCode::IndexOffsetMismatch,
            };
            f.error(code, Level::Metadata, &e, None);
            None
        }
    }
}

/// Level 2: metadata (with preceders merged) and every descriptor parse;
/// with `--canonical`, their CBOR is in canonical key order. Returns the
/// objects whose descriptor parsed.
fn metadata<'a>(
    m: &Message<'a>,
    plan: Plan,
    limits: &Limits,
    f: &mut Findings,
) -> Vec<Option<Object<'a>>> {
    let layout = m.layout();
    if layout.metadata_frame().is_some() {
        if let Err(e) = m.metadata() {
            let code = match (e.kind(), e.object_index().is_some()) {
                (ErrorKind::Metadata, true) => IssueCode::PrecederBaseCountWrong,
                (ErrorKind::Metadata, false) => IssueCode::BaseCountExceedsObjects,
                (_, true) => IssueCode::PrecederCborParseFailed,
                (_, false) => IssueCode::MetadataCborParseFailed,
            };
            f.error(code, Level::Metadata, &e, None);
        }
    }
    if plan.canonical {
        let warn = |code| (code, Level::Metadata, Severity::Warning);
        if let Some(fr) = layout.metadata_frame() {
            if let Some(d) = canonical::non_canonical(fr.cbor(), fr.body_abs_offset()) {
                let code = warn(IssueCode::MetadataCborNonCanonical);
                f.push(code, None, Some(fr.abs_offset()), format!("metadata: {d}"));
            }
        }
        for (i, o) in layout.objects.iter().enumerate() {
            let Some(p) = o.preceder else { continue };
            if let Some(d) = canonical::non_canonical(p.cbor(), p.body_abs_offset()) {
                let code = warn(IssueCode::PrecederCborNonCanonical);
                f.push(
                    code,
                    Some(i),
                    Some(p.abs_offset()),
                    format!("preceder: {d}"),
                );
            }
        }
    }
    (0..m.num_objects())
        .map(|i| {
            let frame = layout.objects[i].data;
            let parts = frame.split_data(limits).ok();
            if plan.canonical {
                let d = parts
                    .as_ref()
                    .and_then(|p| canonical::non_canonical(p.descriptor, frame.abs_offset()));
                if let Some(d) = d {
                    let code = (
                        IssueCode::DescriptorCborNonCanonical,
                        Level::Metadata,
                        Severity::Warning,
                    );
                    f.push(
                        code,
                        Some(i),
                        Some(frame.abs_offset()),
                        format!("descriptor: {d}"),
                    );
                }
            }
            match m.object(i) {
                Ok(o) => Some(o),
                Err(e) => {
                    let code = match e.kind() {
                        ErrorKind::UnsupportedCodec => parts
                            .and_then(|p| unknown_stage(p.descriptor))
                            .unwrap_or(IssueCode::UnknownCompression),
                        _ => IssueCode::DescriptorCborParseFailed,
                    };
                    let e = if e.offset().is_none() {
                        e.at(frame.abs_offset())
                    } else {
                        e
                    };
                    f.error(code, Level::Metadata, &e, Some(i));
                    None
                }
            }
        })
        .collect()
}

/// Which stage key of a descriptor names a codec tgm does not have.
fn unknown_stage(descriptor: &[u8]) -> Option<IssueCode> {
    let (v, _) = parse_one(descriptor, 0, CborLimits::default()).ok()?;
    let named = |kind: StageKind| {
        let name = v.get(kind.key()).and_then(Value::as_text).unwrap_or("none");
        registry::lookup(kind, name).is_err()
    };
    [
        (StageKind::Encoding, IssueCode::UnknownEncoding),
        (StageKind::Filter, IssueCode::UnknownFilter),
        (StageKind::Compression, IssueCode::UnknownCompression),
    ]
    .into_iter()
    .find(|&(kind, _)| named(kind))
    .map(|(_, code)| code)
}

/// Level 3, digests: every frame that carries one, and each object against
/// the hash frame. True when every object's digest was present and matched.
fn hashes(m: &Message<'_>, f: &mut Findings) -> bool {
    let lvl = Level::Integrity;
    let table = match m.verify_head(Verify::IfPresent) {
        Ok(t) => t,
        Err(e) => {
            let code = match e.kind() {
                ErrorKind::HashMismatch { .. } => IssueCode::HashMismatch,
                ErrorKind::Framing => IssueCode::HashFrameCountMismatch,
                _ => IssueCode::HashFrameCborParseFailed,
            };
            f.error(code, lvl, &e, None);
            None
        }
    };
    if let Ok(Some(t)) = m.hash_table() {
        if t.algorithm != crate::hash::ALGORITHM {
            let fr = m.layout().hash_frame();
            let d = format!("hash algorithm {:?} is not xxh3", t.algorithm);
            let code = (IssueCode::UnknownHashAlgorithm, lvl, Severity::Warning);
            f.push(code, None, fr.map(|fr| fr.abs_offset()), d);
        }
    }
    let mut all = true;
    for i in 0..m.num_objects() {
        match m.verify_object(i, Verify::Require, table.as_ref()) {
            Ok(()) => {}
            Err(e) if *e.kind() == ErrorKind::MissingHash => {
                all = false;
                let code = (IssueCode::NoHashAvailable, lvl, Severity::Warning);
                f.push(code, Some(i), e.offset(), e.detail().to_string());
            }
            Err(e) => {
                all = false;
                f.error(IssueCode::HashMismatch, lvl, &e, Some(i));
            }
        }
    }
    all
}

/// Level 3, payloads: every object whose descriptor parsed decodes; level
/// 4 (`fidelity`): its float elements hold no NaN or infinity that no mask
/// declares. Objects are decoded one at a time.
fn decode<'a>(
    objects: impl Iterator<Item = &'a Object<'a>>,
    fidelity: bool,
    opts: &ValidateOptions,
    f: &mut Findings,
) {
    let dopts = DecodeOptions::default()
        .verify(Verify::Off)
        .restore_non_finite(false)
        .limits(opts.limits.clone());
    let mut late = Vec::new();
    for o in objects {
        let i = o.index();
        let at = Some(o.frame().abs_offset());
        let data = match o.decode(&dopts) {
            Ok(d) => d,
            Err(e) => {
                f.error(
                    IssueCode::DecodePipelineFailed,
                    Level::Integrity,
                    &e,
                    Some(i),
                );
                continue;
            }
        };
        if !fidelity {
            continue;
        }
        let found = finite::scan(o.descriptor().dtype, &data);
        for (what, code, hit) in [
            ("NaN", IssueCode::NanDetected, found.nan),
            ("infinite", IssueCode::InfDetected, found.inf),
        ] {
            if let Some((first, n)) = hit {
                let d = format!(
                    "{n} {what} element(s) not declared by a mask, first at element {first}"
                );
                late.push(((code, Level::Fidelity, Severity::Error), Some(i), at, d));
            }
        }
    }
    for (code, i, at, d) in late {
        f.push(code, i, at, d);
    }
}
