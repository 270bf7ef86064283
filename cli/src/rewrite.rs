//! Re-encoding stored objects into new messages (set, merge, split,
//! reshuffle) with a check that every object decodes exactly as before.

use tgm::{DecodeOptions, GlobalMetadata};

use crate::error::{CliError, CliResult};
use crate::input::DecodedObject;
use crate::pipeline_args::{rewrite_descriptor, rewrite_options, GlobalArgs};

/// Encodes `objects` (decoded in stored byte order) with `meta` as one
/// buffered message, keeping each object's pipeline and parameters, and
/// checks that the result decodes to the same bytes.
pub fn encode_same(
    meta: &GlobalMetadata,
    objects: &[&DecodedObject],
    g: &GlobalArgs,
) -> CliResult<Vec<u8>> {
    let mut meta = meta.clone();
    meta.reserved.clear();
    for e in &mut meta.base {
        e.remove(tgm::metadata::RESERVED_KEY);
    }
    let descs: Vec<_> = objects
        .iter()
        .map(|o| rewrite_descriptor(&o.descriptor))
        .collect();
    let pairs: Vec<_> = descs
        .iter()
        .zip(objects)
        .map(|(d, o)| (d, &o.data[..]))
        .collect();
    let msg = tgm::encode(&meta, &pairs, &rewrite_options(g)?)?;
    let back = tgm::decode(&msg, &DecodeOptions::default().native_byte_order(false))?;
    for (i, (new, old)) in back.objects.iter().zip(objects).enumerate() {
        if new.data != old.data {
            return Err(CliError::Failed(format!(
                "object {i}: re-encoding with its stored pipeline would change its values; refusing"
            )));
        }
    }
    Ok(msg)
}
