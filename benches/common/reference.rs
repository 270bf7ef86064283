//! The reference crate's descriptor for a tgm descriptor, so that a
//! benchmark runs both implementations on the same object.

use tgm::ObjectDescriptor;

/// `d` as `tensogram::DataObjectDescriptor`: shape, strides and pipeline
/// from `d` (its stage parameters through their canonical CBOR), float64
/// little-endian (every benchmark's dtype).
pub fn to_ref(d: &ObjectDescriptor) -> tensogram::DataObjectDescriptor {
    let cbor = tgm::cbor::encode_canonical(&d.to_value());
    let c: ciborium::Value = ciborium::from_reader(&cbor[..]).expect("descriptor CBOR");
    let mut params = std::collections::BTreeMap::new();
    let (mut encoding, mut filter, mut compression) = (String::new(), String::new(), String::new());
    for (k, v) in c.into_map().expect("a map") {
        let k = k.into_text().expect("text key");
        match k.as_str() {
            "encoding" => encoding = v.into_text().expect("text"),
            "filter" => filter = v.into_text().expect("text"),
            "compression" => compression = v.into_text().expect("text"),
            "type" | "ndim" | "shape" | "strides" | "dtype" | "byte_order" => {}
            _ => {
                params.insert(k, v);
            }
        }
    }
    tensogram::DataObjectDescriptor {
        obj_type: d.obj_type.clone(),
        ndim: d.shape.len() as u64,
        shape: d.shape.clone(),
        strides: d.strides.clone(),
        dtype: tensogram::Dtype::Float64,
        byte_order: tensogram::ByteOrder::Little,
        encoding,
        filter,
        compression,
        masks: None,
        params,
    }
}
