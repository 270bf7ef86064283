//! What a stored payload can decode to, checked before any output buffer is
//! reserved (`spec/pipeline.md` §6.9): a descriptor that claims more bytes
//! than its payload can supply is refused while the claim is still only a
//! number, so a small hostile file never makes a reader reserve or touch
//! the memory its descriptor asks for.

use super::codec::stage::StageContext;
use super::plan::Stages;
use crate::error::{Error, Result};

/// Checks that `payload` can supply what the descriptor implies, stage by
/// stage from the stored bytes down (`cx` as [`super::plan::contexts`]
/// gives them): an identity stage passes its input on unchanged, so it must
/// hold exactly the length below it; the first working stage must be able
/// to decode what the descriptor claims from the bytes it is given (an
/// encoding or filter reads at least the length its context gives, a
/// compression decodes to at most [`super::codec::stage::Stage::max_decoded_len`]). The stages under the first
/// working one see lengths the descriptor fixes, checked as they run.
pub(crate) fn check(stages: Stages<'_>, cx: &[StageContext; 3], payload: &[u8]) -> Result<()> {
    let have = payload.len() as u64;
    // From the stored bytes down: compression, filter, encoding.
    let from_payload = stages.all().into_iter().zip(cx).rev();
    for (depth, (stage, cx)) in from_payload.enumerate() {
        if stage.is_identity() {
            if have != cx.decoded_len {
                return Err(Error::framing(format!(
                    "descriptor claims {} encoded bytes but the frame payload is {have} bytes",
                    cx.decoded_len
                )));
            }
            continue;
        }
        if depth > 0 {
            // An encoding or filter reads exactly the length its context
            // gives; fewer bytes never decode to the object.
            if have < cx.input_len {
                return Err(Error::framing(format!(
                    "descriptor implies {} bytes of {} stream but the frame payload is {have} bytes",
                    cx.input_len,
                    stage.name()
                )));
            }
            return Ok(());
        }
        // A compression with no known bound decodes what it decodes.
        let Some(most) = stage.max_decoded_len(payload, cx) else {
            return Ok(());
        };
        if cx.decoded_len > most {
            return Err(Error::framing(format!(
                "descriptor claims {} decoded bytes but its {} stream of {have} bytes \
                 decodes to at most {most}",
                cx.decoded_len,
                stage.name()
            )));
        }
        return Ok(());
    }
    Ok(())
}
