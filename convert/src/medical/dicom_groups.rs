//! Where an enhanced multi-frame image keeps one frame attribute
//! (PS3.3 C.7.6.16): in the data set itself, in the shared functional
//! group's macro sequence, or in each frame's per-frame group. One object
//! keeps one orientation, pixel spacing and rescale, so per-frame values
//! are taken only when every frame carries the same one; frames that
//! differ are refused, naming the attribute, rather than kept for the
//! first frame only.

use dicom_core::Tag;
use dicom_dictionary_std::tags;
use dicom_object::InMemDicomObject;

type Item = InMemDicomObject;

/// The first item of each sequence along `path`.
pub fn nested<'a>(obj: &'a Item, path: &[Tag]) -> Option<&'a Item> {
    let mut cur = obj;
    for &t in path {
        cur = cur.get(t)?.items()?.first()?;
    }
    Some(cur)
}

/// The value of `tag` as text, for comparing frames.
fn raw(item: &Item, tag: Tag) -> Option<String> {
    item.get(tag)
        .and_then(|e| e.to_str().ok())
        .map(|s| s.trim_end_matches(['\0', ' ']).to_string())
}

/// The item holding `tag` (keyword `name`), found in this order: `obj`
/// itself, the shared functional group's `macro_seq`, the per-frame
/// groups' `macro_seq` when every frame holds the same value. `Ok(None)`
/// when no item holds it; an error when frames hold different values or
/// only some frames hold it.
pub fn frame_attribute<'a>(
    obj: &'a Item,
    macro_seq: Tag,
    tag: Tag,
    name: &str,
) -> Result<Option<&'a Item>, String> {
    if obj.get(tag).is_some() {
        return Ok(Some(obj));
    }
    let shared = nested(obj, &[tags::SHARED_FUNCTIONAL_GROUPS_SEQUENCE, macro_seq]);
    if let Some(item) = shared.filter(|i| i.get(tag).is_some()) {
        return Ok(Some(item));
    }
    let Some(frames) = obj
        .get(tags::PER_FRAME_FUNCTIONAL_GROUPS_SEQUENCE)
        .and_then(|e| e.items())
    else {
        return Ok(None);
    };
    let holding: Vec<&Item> = frames
        .iter()
        .filter_map(|f| nested(f, &[macro_seq]))
        .filter(|i| i.get(tag).is_some())
        .collect();
    let Some(first) = holding.first() else {
        return Ok(None);
    };
    if holding.len() != frames.len() {
        return Err(format!(
            "{name} is in the per-frame functional groups of {} of {} frames",
            holding.len(),
            frames.len()
        ));
    }
    let value = raw(first, tag);
    if let Some(n) = holding.iter().position(|i| raw(i, tag) != value) {
        return Err(format!(
            "{name} differs between frames ({:?} in frame 1, {:?} in frame {}); one object \
             keeps one {name}",
            value.unwrap_or_default(),
            raw(holding[n], tag).unwrap_or_default(),
            n + 1
        ));
    }
    Ok(Some(first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dicom_core::value::DataSetSequence;
    use dicom_core::{DataElement, VR};

    fn seq(tag: Tag, items: Vec<Item>) -> DataElement<Item> {
        DataElement::new(tag, VR::SQ, DataSetSequence::from(items))
    }

    fn frame(slope: &str) -> Item {
        let t = Item::from_element_iter([DataElement::new(tags::RESCALE_SLOPE, VR::DS, slope)]);
        Item::from_element_iter([seq(tags::PIXEL_VALUE_TRANSFORMATION_SEQUENCE, vec![t])])
    }

    fn image(slopes: &[&str]) -> Item {
        Item::from_element_iter([seq(
            tags::PER_FRAME_FUNCTIONAL_GROUPS_SEQUENCE,
            slopes.iter().map(|s| frame(s)).collect(),
        )])
    }

    fn slope(obj: &Item) -> Result<Option<String>, String> {
        let at = frame_attribute(
            obj,
            tags::PIXEL_VALUE_TRANSFORMATION_SEQUENCE,
            tags::RESCALE_SLOPE,
            "RescaleSlope",
        )?;
        Ok(at.and_then(|i| raw(i, tags::RESCALE_SLOPE)))
    }

    #[test]
    fn per_frame_values_are_taken_when_every_frame_agrees() {
        assert_eq!(slope(&image(&["2", "2"])).unwrap().as_deref(), Some("2"));
        let err = slope(&image(&["2", "2.5"])).unwrap_err();
        assert!(
            err.contains("frame 2") && err.contains("RescaleSlope"),
            "{err}"
        );
        assert_eq!(slope(&Item::new_empty()).unwrap(), None);
        let mut top = image(&["2"]);
        top.put(DataElement::new(tags::RESCALE_SLOPE, VR::DS, "3"));
        assert_eq!(slope(&top).unwrap().as_deref(), Some("3"));
    }

    #[test]
    fn a_value_in_some_frames_only_is_refused() {
        let mut obj = image(&["2"]);
        let frames = vec![frame("2"), Item::new_empty()];
        obj.put(seq(tags::PER_FRAME_FUNCTIONAL_GROUPS_SEQUENCE, frames));
        let err = slope(&obj).unwrap_err();
        assert!(err.contains("1 of 2 frames"), "{err}");
    }
}
