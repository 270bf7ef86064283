//! Re-encoding stored objects into new messages (set, copy --objects,
//! merge, split, reshuffle), each object keeping its pipeline and values.
//! Stored payloads are wrapped again without decoding when they carry no
//! NaN/Inf masks (`spec/format.md` §11.5), so memory stays near the stored
//! objects; otherwise objects are decoded, re-encoded and checked unchanged.

use std::io::Write;

use tgm::{DecodeOptions, GlobalMetadata};

use crate::error::{CliError, CliResult};
use crate::input::{Archive, DecodedObject, ObjectBytes};
use crate::pipeline_args::{rewrite_descriptor, rewrite_options, GlobalArgs};

/// Some objects (by index, ascending) of message `message` of `archive`.
pub struct Part<'a> {
    /// The archive.
    pub archive: &'a Archive,
    /// The message.
    pub message: usize,
    /// The objects taken from it.
    pub objects: Vec<usize>,
}

impl<'a> Part<'a> {
    /// Every one of the `n` objects of message `message`.
    pub fn all(archive: &'a Archive, message: usize, n: usize) -> Self {
        Part {
            archive,
            message,
            objects: (0..n).collect(),
        }
    }
}

/// Whether a stored object carries NaN/Inf masks, which a pre-encoded
/// payload cannot keep: such objects go through decode and re-encode.
pub fn has_masks(o: &ObjectBytes<'_>) -> bool {
    o.descriptor.masks.as_ref().is_some_and(|m| !m.is_empty())
}

/// Writes the picked objects of `parts` with `meta` as one message to
/// `out`, every object keeping its pipeline, parameters and values; stored
/// payloads go straight from the input to `out`, so the new message is
/// never held whole.
pub fn rewrite(
    meta: &GlobalMetadata,
    parts: &[Part<'_>],
    g: &GlobalArgs,
    out: &mut dyn Write,
) -> CliResult {
    let mut stored = Vec::new();
    for p in parts {
        let objects = p.archive.stored_objects(p.message)?;
        let picked = objects.into_iter().enumerate();
        stored.extend(
            picked
                .filter(|(o, _)| p.objects.contains(o))
                .map(|(_, x)| x),
        );
    }
    if !stored.iter().any(has_masks) {
        return encode_stored(meta, &stored.iter().collect::<Vec<_>>(), g, out);
    }
    drop(stored);
    let mut decoded = Vec::new();
    for p in parts {
        let objects = p.archive.decode_message(p.message, g.threads)?;
        let picked = objects.into_iter().enumerate();
        decoded.extend(
            picked
                .filter(|(o, _)| p.objects.contains(o))
                .map(|(_, x)| x),
        );
    }
    let msg = encode_same(meta, &decoded.iter().collect::<Vec<_>>(), g)?;
    Ok(out.write_all(&msg)?)
}

/// Wraps stored payloads (none with masks, see [`has_masks`]) with `meta`
/// as one message written to `out`, without running any pipeline.
pub fn encode_stored(
    meta: &GlobalMetadata,
    stored: &[&ObjectBytes<'_>],
    g: &GlobalArgs,
    out: &mut dyn Write,
) -> CliResult {
    let pairs: Vec<_> = stored
        .iter()
        .map(|o| (&o.descriptor, &o.data[..]))
        .collect();
    tgm::encode_pre_encoded_to(&meta.caller_owned(), &pairs, &rewrite_options(g)?, out)?;
    Ok(())
}

/// Encodes `objects` (decoded in stored byte order) with `meta` as one
/// buffered message, keeping each object's pipeline and parameters, and
/// checks that the result decodes to the same bytes.
pub fn encode_same(
    meta: &GlobalMetadata,
    objects: &[&DecodedObject<'_>],
    g: &GlobalArgs,
) -> CliResult<Vec<u8>> {
    let descs: Vec<_> = objects
        .iter()
        .map(|o| rewrite_descriptor(&o.descriptor))
        .collect();
    let pairs: Vec<_> = descs
        .iter()
        .zip(objects)
        .map(|(d, o)| (d, &o.data[..]))
        .collect();
    let msg = tgm::encode(&meta.caller_owned(), &pairs, &rewrite_options(g)?)?;
    drop(pairs);
    // Object by object, borrowing from `msg` where the pipeline allows, so
    // that at most one decoded copy is alive besides the originals.
    let written = tgm::Message::parse(&msg)?;
    let stored_order = DecodeOptions::default().native_byte_order(false);
    for (i, old) in objects.iter().enumerate() {
        if written.object(i)?.decode(&stored_order)?[..] != old.data[..] {
            return Err(CliError::Failed(format!(
                "object {i}: re-encoding with its stored pipeline would change its values; refusing"
            )));
        }
    }
    Ok(msg)
}
