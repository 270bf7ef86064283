//! `cbor::Value` beside ciborium and serde, and metadata through serde:
//! conversions are exact where both sides can express a value, typed errors
//! where not, and JSON output agrees with `Value::to_json`.

use serde::{Deserialize, Serialize};
use tgm::cbor::{encode_canonical, parse_one, CborLimits, Value};
use tgm::{DecodeOptions, Dtype, EncodeOptions, ErrorKind, GlobalMetadata, ObjectDescriptor};

fn parse(b: &[u8]) -> Value {
    let (v, n) = parse_one(b, 0, CborLimits::default()).unwrap();
    assert_eq!(n, b.len());
    v
}

/// Values every side can express: all integer extremes, floats of each
/// width, text, bytes, nesting, tags and non-text keys.
fn samples() -> Vec<Value> {
    vec![
        Value::Uint(0),
        Value::Uint(u64::MAX),
        Value::Nint(0),
        Value::Nint(u64::MAX),
        Value::from_i64(i64::MIN),
        Value::Float(1.5),
        Value::Float(0.1),
        Value::Float(100000.0),
        Value::Float(-0.0),
        Value::Float(f64::INFINITY),
        Value::Text("é\"\n".into()),
        Value::Bytes(vec![0, 0xff, 7]),
        Value::Bool(true),
        Value::Null,
        Value::Tag(1, Box::new(Value::Uint(1_700_000_000))),
        Value::Array(vec![Value::Uint(1), Value::Array(vec![])]),
        Value::Map(vec![
            (Value::Text("b".into()), Value::Float(2.5)),
            (Value::Uint(7), Value::Text("seven".into())),
            (
                Value::Text("nested".into()),
                Value::text_map([("x", Value::from_i64(-300))]),
            ),
        ]),
    ]
}

#[test]
fn ciborium_values_convert_exactly_both_ways() {
    for v in samples() {
        let c = ciborium::Value::try_from(v.clone()).unwrap();
        assert_eq!(Value::try_from(c.clone()).unwrap(), v);
        // ciborium's own writer and tgm's reader agree on the value.
        let mut bytes = Vec::new();
        ciborium::into_writer(&c, &mut bytes).unwrap();
        assert_eq!(parse(&bytes), v, "{bytes:02x?}");
    }
}

#[test]
fn undefined_and_simple_values_have_no_ciborium_form() {
    for v in [
        Value::Undefined,
        Value::Simple(5),
        Value::Array(vec![Value::Simple(40)]),
    ] {
        let e = ciborium::Value::try_from(v).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::Cbor);
    }
}

#[test]
fn serde_round_trips_through_ciborium() {
    for v in samples() {
        let mut bytes = Vec::new();
        ciborium::into_writer(&v, &mut bytes).unwrap();
        // Serialize writes the same value (tags included) ...
        assert_eq!(parse(&bytes), v, "{bytes:02x?}");
        // ... canonically when the value's maps are already in order.
        if let Value::Map(_) = v {
        } else {
            assert_eq!(bytes, encode_canonical(&v), "{v:?}");
        }
        // Deserialize reads back what tgm's reader reads.
        let back: Value = ciborium::from_reader(&bytes[..]).unwrap();
        assert_eq!(back, v);
    }
    let mut sink = Vec::new();
    assert!(ciborium::into_writer(&Value::Simple(5), &mut sink).is_err());
}

#[test]
fn deserializes_from_json() {
    let v: Value = serde_json::from_str(r#"{"a":[1,-2,2.5,"t",null,true]}"#).unwrap();
    assert_eq!(
        v,
        Value::text_map([(
            "a",
            Value::Array(vec![
                Value::Uint(1),
                Value::from_i64(-2),
                Value::Float(2.5),
                Value::Text("t".into()),
                Value::Null,
                Value::Bool(true),
            ])
        )])
    );
}

#[test]
fn json_value_is_what_to_json_renders() {
    let mut all = samples();
    all.extend([
        Value::Float(f64::NAN),
        Value::Float(f64::NEG_INFINITY),
        Value::Float(1e300),
        Value::Float(5e-324),
        Value::Undefined,
        Value::Simple(3),
        Value::Map(vec![(Value::Bytes(vec![1]), Value::Null)]),
    ]);
    all.push(Value::Array(all.clone()));
    for v in all {
        let parsed: serde_json::Value = serde_json::from_str(&v.to_json()).unwrap();
        assert_eq!(v.to_json_value(), parsed, "{}", v.to_json());
    }
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Mars {
    class: String,
    param: String,
    step: u32,
    levels: Vec<f64>,
    expver: Option<String>,
}

fn mars() -> Mars {
    Mars {
        class: "od".into(),
        param: "2t".into(),
        step: 6,
        levels: vec![1000.0, 850.5],
        expver: None,
    }
}

#[test]
fn typed_entries_survive_a_message() {
    let mut meta = GlobalMetadata::default();
    meta.set_as(Some(0), "mars", &mars()).unwrap();
    meta.set_as(None, "source.model", "ifs").unwrap();
    meta.set_as(Some(0), "_extra_.run", &42u8).unwrap();
    let d = ObjectDescriptor::new(Dtype::Uint8, vec![2]);
    let bytes = tgm::encode(&meta, &[(&d, &[1, 2])], &EncodeOptions::new()).unwrap();
    let back = tgm::decode_metadata(&bytes, &DecodeOptions::default()).unwrap();
    assert_eq!(back.get_as::<Mars>(Some(0), "mars").unwrap(), mars());
    assert_eq!(back.get_as::<String>(None, "source.model").unwrap(), "ifs");
    assert_eq!(back.get_as::<u64>(Some(0), "run").unwrap(), 42);
    // Provenance is not found by path (`spec/format.md` §7.1); it is read
    // from the entry.
    assert!(back
        .get_as::<Vec<u64>>(Some(0), "_reserved_.tensor.shape")
        .is_err());
    let tensor = back.base[0]["_reserved_"].get("tensor").unwrap();
    assert_eq!(
        tensor.get("shape"),
        Some(&Value::Array(vec![Value::Uint(2)]))
    );
}

#[test]
fn mismatches_are_metadata_errors() {
    let mut meta = GlobalMetadata::default();
    meta.set_as(Some(1), "mars", &mars()).unwrap();
    assert_eq!(meta.base.len(), 2, "base padded up to the object");
    for e in [
        meta.get_as::<Mars>(Some(1), "absent").unwrap_err(),
        meta.get_as::<u8>(Some(1), "mars.param").unwrap_err(),
        meta.get_as::<Vec<u8>>(Some(1), "mars").unwrap_err(),
        meta.set_as(Some(1), "mars.step.deeper", &1).unwrap_err(),
        meta.set_as(Some(0), "_reserved_", &1).unwrap_err(),
        meta.set_as(None, "_extra_._reserved_.x", &1).unwrap_err(),
    ] {
        assert_eq!(e.kind(), &ErrorKind::Metadata, "{e}");
    }
    meta.base[1].insert("odd".into(), Value::Simple(4));
    let e = meta.get_as::<u8>(Some(1), "odd").unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::Metadata, "{e}");
}

#[test]
fn metadata_json_round_trip() {
    let json = serde_json::json!({
        "base": [{"mars": {"param": "2t", "levels": [1, -2, 2.5]}}, {}],
        "_extra_": {"a": {"b": null}},
        "loose": true,
    });
    let meta = GlobalMetadata::from_json_value(&json).unwrap();
    assert_eq!(meta.base.len(), 2);
    assert_eq!(meta.extra.get("loose"), Some(&Value::Bool(true)));
    let out = serde_json::Value::from(&meta);
    assert_eq!(out["_extra_"]["loose"], true);
    assert_eq!(
        out["base"][0]["mars"]["levels"],
        serde_json::json!([1, -2, 2.5])
    );
    assert_eq!(GlobalMetadata::try_from(&out).unwrap(), meta);
    let parsed: serde_json::Value = serde_json::from_str(&meta.to_value().to_json()).unwrap();
    assert_eq!(out, parsed);
}

#[test]
fn metadata_json_is_checked_like_cbor() {
    for bad in [
        serde_json::json!([1]),
        serde_json::json!({"base": 3}),
        serde_json::json!({"x": 1, "_extra_": {"x": 2}}),
    ] {
        let e = GlobalMetadata::from_json_value(&bad).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::Metadata, "{bad}");
    }
    let deep = (0..300).fold(serde_json::json!(0), |v, _| serde_json::json!([v]));
    let e = GlobalMetadata::from_json_value(&serde_json::json!({ "x": deep })).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::Metadata);
    let ok = (0..250).fold(serde_json::json!(0), |v, _| serde_json::json!([v]));
    assert!(
        GlobalMetadata::from_json_value(&serde_json::json!({ "_extra_": { "x": ok } })).is_ok()
    );
}
