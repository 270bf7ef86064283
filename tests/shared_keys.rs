//! Keys every object of a message shares, written once in
//! `_extra_._shared_` (`spec/format.md` §7.3): what a reader gets back,
//! what the message holds, and what it refuses.

mod common;

use tgm::cbor::Value;
use tgm::metadata::BaseLayout;
use tgm::{
    DecodeOptions, Dtype, EncodeOptions, ErrorKind, GlobalMetadata, Limits, ObjectDescriptor,
};

fn fields(n: usize) -> GlobalMetadata {
    let base = (0..n)
        .map(|i| {
            serde_json::json!({
                "geography": {"gridType": "regular_ll", "Ni": 120, "Nj": 61,
                              "latitudeOfFirstGridPointInDegrees": 90.0},
                "mars": {"class": "ea", "stream": "enda", "param": 129 + i, "step": 6 * i},
                "name": "temperature",
            })
        })
        .collect::<Vec<_>>();
    GlobalMetadata::from_json_value(
        &serde_json::json!({"base": base, "_extra_": {"source": "era5"}}),
    )
    .unwrap()
}

fn encode(meta: &GlobalMetadata) -> Vec<u8> {
    let d = ObjectDescriptor::new(Dtype::Float32, vec![4]);
    let data = [0u8; 16];
    let pairs: Vec<_> = (0..meta.base.len()).map(|_| (&d, &data[..])).collect();
    tgm::encode(meta, &pairs, &EncodeOptions::new()).unwrap()
}

/// Every entry without `_reserved_`, as JSON.
fn entries(meta: &GlobalMetadata) -> Vec<serde_json::Value> {
    (0..meta.base.len())
        .map(|i| Value::text_map(meta.caller_entry(i)).to_json_value())
        .collect()
}

#[test]
fn shared_keys_are_written_once_and_every_entry_is_read_back_whole() {
    let per_object = fields(5);
    let mut shared = per_object.clone();
    shared.layout = BaseLayout::SharedOnce;
    let (long, short) = (encode(&per_object), encode(&shared));
    assert!(
        short.len() + 4 * 60 < long.len(),
        "{} bytes shared against {} per object",
        short.len(),
        long.len()
    );
    let back = tgm::decode_metadata(&short, &DecodeOptions::default()).unwrap();
    assert_eq!(back.layout, BaseLayout::SharedOnce);
    assert_eq!(entries(&back), entries(&per_object));
    assert_eq!(
        back.extra, per_object.extra,
        "_shared_ is not left in _extra_"
    );
    let plain = tgm::decode_metadata(&long, &DecodeOptions::default()).unwrap();
    assert_eq!(plain.layout, BaseLayout::PerObject);
    assert_eq!(entries(&plain), entries(&per_object));
}

#[test]
fn the_message_holds_the_shared_keys_in_extra_and_the_rest_per_object() {
    let mut meta = fields(3);
    meta.layout = BaseLayout::SharedOnce;
    let written = meta.to_value().to_json_value();
    assert_eq!(
        written["_extra_"]["_shared_"],
        serde_json::json!({
            "geography": {"gridType": "regular_ll", "Ni": 120, "Nj": 61,
                          "latitudeOfFirstGridPointInDegrees": 90.0},
            "mars": {"class": "ea", "stream": "enda"},
            "name": "temperature",
        })
    );
    assert_eq!(
        written["base"][2],
        serde_json::json!({"mars": {"param": 131, "step": 12}})
    );
    // What a reader shows is always every entry whole.
    assert_eq!(meta.to_json_value()["base"][2]["geography"]["Ni"], 120);
}

#[test]
fn a_rewrite_keeps_the_layout_and_a_single_object_shares_nothing() {
    let mut meta = fields(2);
    meta.layout = BaseLayout::SharedOnce;
    assert_eq!(meta.caller_owned().layout, BaseLayout::SharedOnce);
    let mut one = fields(1);
    one.layout = BaseLayout::SharedOnce;
    let written = one.to_value().to_json_value();
    assert!(written["_extra_"].get("_shared_").is_none(), "{written}");
    assert_eq!(written["base"][0]["mars"]["class"], "ea");
}

#[test]
fn shared_keys_that_are_not_a_map_are_refused() {
    let v = Value::from_json_value(
        &serde_json::json!({"base": [{}, {}], "_extra_": {"_shared_": [1, 2]}}),
        16,
    )
    .unwrap();
    let e = GlobalMetadata::from_value(&v).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::Metadata, "{e}");
    assert!(e.to_string().contains("_extra_._shared_"), "{e}");
}

#[test]
fn shared_keys_copied_into_more_bytes_than_the_limit_allows_are_refused() {
    let big = "x".repeat(1000);
    let v = Value::from_json_value(
        &serde_json::json!({"base": vec![serde_json::json!({}); 100],
                            "_extra_": {"_shared_": {"k": big}}}),
        16,
    )
    .unwrap();
    let mut limits = Limits::default();
    limits.max_cbor_len = 50_000;
    let e = GlobalMetadata::from_value_within(&v, &limits).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::LimitExceeded { .. }), "{e}");
    let mut ok = Limits::default();
    ok.max_cbor_len = 200_000;
    let meta = GlobalMetadata::from_value_within(&v, &ok).unwrap();
    assert_eq!(meta.base[99]["k"], Value::Text(big));
}

#[test]
fn a_caller_may_not_write_the_shared_keys_itself() {
    let mut meta = fields(2);
    meta.extra
        .insert("_shared_".into(), Value::text_map([("a", Value::Uint(1))]));
    let d = ObjectDescriptor::new(Dtype::Uint8, vec![1]);
    let e = tgm::encode(
        &meta,
        &[(&d, &[0u8][..]), (&d, &[0u8][..])],
        &EncodeOptions::new(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("_extra_._shared_"), "{e}");
}

#[test]
fn the_reference_reads_the_values_and_shows_the_shared_keys_under_extra() {
    let mut meta = fields(3);
    meta.layout = BaseLayout::SharedOnce;
    let d = ObjectDescriptor::new(Dtype::Float32, vec![2]);
    let data: Vec<[u8; 8]> = (0..3u8).map(|i| [i; 8]).collect();
    let pairs: Vec<_> = data.iter().map(|b| (&d, &b[..])).collect();
    let msg = tgm::encode(&meta, &pairs, &EncodeOptions::new()).unwrap();
    let (ref_meta, objects) = tensogram::decode(&msg, &Default::default()).unwrap();
    for (o, want) in objects.iter().zip(&data) {
        assert_eq!(&o.1[..], &want[..]);
    }
    let ours = common::from_ref_meta(&ref_meta);
    let shared = Value::text_map(ours.extra).to_json_value();
    assert_eq!(shared["_shared_"]["mars"]["class"], "ea");
    assert_eq!(
        Value::text_map(ours.base[1].clone()).to_json_value()["mars"],
        serde_json::json!({"param": 130, "step": 6})
    );
}
