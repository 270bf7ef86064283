//! CBOR values, object descriptors and message metadata.

use tgm::cbor::{encode_canonical, parse_one, CborLimits, Value};
use tgm::{GlobalMetadata, Limits, ObjectDescriptor};

use super::common::fuzz_limits;

fn cbor_limits(l: &Limits) -> CborLimits {
    CborLimits {
        max_depth: l.max_cbor_depth,
        max_items: l.max_cbor_items,
    }
}

/// Any CBOR item: canonical re-encoding is a fixpoint and JSON rendering
/// stays proportional to the input.
pub fn cbor(data: &[u8]) {
    let limits = cbor_limits(&fuzz_limits());
    let Ok((v, used)) = parse_one(data, 7, limits) else {
        return;
    };
    assert!(used <= data.len());
    let enc = encode_canonical(&v);
    let (back, n) = parse_one(&enc, 0, limits).expect("canonical output parses");
    assert_eq!(n, enc.len(), "canonical output is one whole item");
    assert_eq!(
        encode_canonical(&back),
        enc,
        "canonical encoding is a fixpoint"
    );
    let json = v.to_json();
    assert!(
        json.len() <= 64 * used + 64,
        "{} bytes of json for {used} bytes of cbor",
        json.len()
    );
    let _ = v.to_json_value();
    through_ciborium(&v, &enc);
}

/// Whatever `ciborium::Value` can hold converts there and back unchanged,
/// and ciborium's writer, given either the converted value or `v` through
/// its `Serialize`, writes bytes tgm's reader takes back to `v`.
fn through_ciborium(v: &Value, canonical: &[u8]) {
    let Ok(c) = ciborium::Value::try_from(v.clone()) else {
        return;
    };
    assert_eq!(
        encode_canonical(&Value::try_from(c.clone()).expect("back from ciborium")),
        canonical,
        "ciborium round trip"
    );
    let limits = CborLimits {
        max_depth: usize::MAX,
        max_items: usize::MAX,
    };
    let mut via_value = Vec::new();
    ciborium::into_writer(&c, &mut via_value).expect("ciborium writes its value");
    let mut via_serde = Vec::new();
    ciborium::into_writer(v, &mut via_serde).expect("ciborium serializes a tgm value");
    for bytes in [via_value, via_serde] {
        let (back, n) = parse_one(&bytes, 0, limits).expect("ciborium output parses");
        assert_eq!(n, bytes.len());
        assert_eq!(
            encode_canonical(&back),
            canonical,
            "ciborium writes the same value"
        );
    }
}

/// Descriptor CBOR: a descriptor that parses re-encodes to bytes that parse
/// back to the same encoding, and its size checks never panic.
pub fn descriptor(data: &[u8]) {
    let limits = fuzz_limits();
    let Ok(d) = ObjectDescriptor::from_cbor(data, 3, &limits) else {
        return;
    };
    assert!(d.shape.len() <= limits.max_ndim);
    assert_eq!(d.shape.len(), d.strides.len());
    d.num_elements()
        .expect("a parsed descriptor has a countable shape");
    let _ = tgm::__fuzz::checked_decoded_len(&d, &limits);
    let _ = d.validate_for_encode();
    let c1 = d.to_cbor();
    let d2 = ObjectDescriptor::from_cbor(&c1, 0, &limits).expect("re-encoded descriptor parses");
    assert_eq!(d2.to_cbor(), c1, "descriptor encoding is a fixpoint");
    let _ = tgm::pipeline::decode(
        &d,
        &data[..data.len().min(64)],
        0,
        &Default::default(),
        &limits,
    );
}

/// Metadata CBOR: parsed metadata re-encodes to a fixpoint, and lookups
/// never panic.
pub fn metadata(data: &[u8]) {
    let limits = fuzz_limits();
    let Ok(m) = GlobalMetadata::from_cbor(data, 5, &limits) else {
        return;
    };
    let _ = m.check_caller_owned(m.base.len());
    for key in ["mars.param", "_reserved_.tensor", "a.b.c", ""] {
        let _ = m.lookup(None, key);
        let _ = m.lookup(Some(0), key);
    }
    let _ = m.get_as::<std::collections::BTreeMap<String, u32>>(Some(0), "mars");
    if let Ok(back) = GlobalMetadata::from_json_value(&m.to_json_value()) {
        assert_eq!(
            back.to_json_value(),
            m.to_json_value(),
            "metadata json is a fixpoint"
        );
    }
    let c1 = m.to_cbor();
    let m1 = GlobalMetadata::from_cbor(&c1, 0, &limits).expect("re-encoded metadata parses");
    // Keys stored once (`spec/format.md` §7.3) come back into every entry.
    assert_eq!(
        m1.to_json_value(),
        m.to_json_value(),
        "metadata survives its layout"
    );
    let c2 = m1.to_cbor();
    let m2 = GlobalMetadata::from_cbor(&c2, 0, &limits).expect("twice re-encoded metadata parses");
    assert_eq!(m2.to_cbor(), c2, "metadata encoding reaches a fixpoint");
}
