//! The GRIB metadata layout (`spec/convert.md` "GRIB metadata layout")
//! from conversion to write-back through the library: a reduced grid's
//! row lengths stored once, the header the fields of a message share
//! stored once, and every field written back as it came.

use tgm::cbor::Value;

use super::convert::{
    convert_files, encode_message, ConvertOptions, TEMPLATE_KEY, TEMPLATE_PL_KEY,
};
use super::export::message_to_grib;
use super::ffi::Handle;
use super::grib_shared::{SHARED_PREFIX, TEMPLATE_REF_KEY};

/// Smooth values of `n` points around `offset`.
fn field(n: usize, offset: f64) -> Vec<f64> {
    (0..n)
        .map(|i| offset + 10.0 * (i as f64 * 0.1).sin() + (i % 7) as f64 * 0.37)
        .collect()
}

/// One GRIB message per parameter of `params` on ecCodes' `sample`, at
/// `bits` bits per value.
fn messages(sample: &str, params: &[i64], bits: i64) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, p) in params.iter().enumerate() {
        let mut h = Handle::from_sample(sample).unwrap();
        h.set_long("paramId", *p).unwrap();
        h.set_long("bitsPerValue", bits).unwrap();
        let n = h.get_long("numberOfDataPoints").unwrap() as usize;
        h.set_double_array("values", &field(n, 250.0 + k as f64))
            .unwrap();
        out.extend(h.message().unwrap());
    }
    out
}

/// `grib` converted into one message, encoded, decoded and written back.
fn round_trip(grib: &[u8]) -> (tgm::DecodedMessage, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.grib");
    std::fs::write(&path, grib).unwrap();
    let mut msgs = convert_files(&[path], &ConvertOptions::default()).unwrap();
    assert_eq!(msgs.len(), 1);
    let bytes = encode_message(&msgs.pop().unwrap(), &ConvertOptions::default()).unwrap();
    let decoded = tgm::Message::parse(&bytes)
        .unwrap()
        .decode(&tgm::DecodeOptions::default())
        .unwrap();
    let back = message_to_grib(&decoded).unwrap();
    (decoded, back)
}

/// The messages of a GRIB byte string.
fn handles(bytes: &[u8]) -> Vec<Handle> {
    super::grib_scan::scan(bytes)
        .unwrap()
        .iter()
        .map(|m| {
            let at = m.offset as usize;
            Handle::from_message(&bytes[at..at + m.len as usize]).unwrap()
        })
        .collect()
}

/// Asserts that the GRIB2 messages of `a` and `b` have the same sections
/// 1 to 5 and the same values.
fn assert_same(a: &[u8], b: &[u8]) {
    let (a, b) = (handles(a), handles(b));
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        for k in ["md5Section1", "md5Section3", "md5Section4", "md5Section5"] {
            assert_eq!(
                x.get_string(k).unwrap(),
                y.get_string(k).unwrap(),
                "message {i}: {k}"
            );
        }
        let (u, v) = (
            x.get_double_array("values").unwrap(),
            y.get_double_array("values").unwrap(),
        );
        assert!(
            u.iter().zip(&v).all(|(p, q)| p.to_bits() == q.to_bits()),
            "message {i}"
        );
    }
}

fn grib_key<'a>(entry: &'a tgm::Map, key: &str) -> Option<&'a Value> {
    entry["grib"].get(key)
}

#[test]
fn a_reduced_grids_row_lengths_are_stored_once_and_written_back() {
    let grib = messages("reduced_gg_pl_32_grib2", &[167], 14);
    let (decoded, back) = round_trip(&grib);
    let e = &decoded.metadata.base[0];
    let pl: Vec<u8> = e["geography"]
        .get("pl")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|n| (n.as_u64().unwrap() as u16).to_be_bytes())
        .collect();
    assert_eq!(pl.len(), 128);
    let Some(Value::Bytes(header)) = grib_key(e, TEMPLATE_KEY) else {
        panic!("no header")
    };
    // The header holds no copy of the 64 row lengths, and is shorter than
    // the source's sections 0 to 6 by their 128 octets.
    assert!(!header.windows(pl.len()).any(|w| w == pl.as_slice()));
    let h = Handle::from_message(&grib).unwrap();
    let data = h.get_long("section7Length").unwrap() as usize;
    assert!(
        header.len() + pl.len() <= grib.len() - data + 5,
        "{}",
        header.len()
    );
    let place = grib_key(e, TEMPLATE_PL_KEY).unwrap().as_array().unwrap();
    assert_eq!(place[1].as_u64(), Some(2));
    assert_same(&grib, &back);
}

#[test]
fn fields_differing_in_mars_keys_share_one_header_and_are_written_back() {
    let grib = messages("regular_ll_sfc_grib2", &[167, 168, 165], 16);
    let (decoded, back) = round_trip(&grib);
    let meta = &decoded.metadata;
    let shared: Vec<&String> = meta.extra.keys().collect();
    assert_eq!(shared.len(), 1, "{shared:?}");
    assert!(shared[0].starts_with(SHARED_PREFIX));
    for e in &meta.base {
        assert!(grib_key(e, TEMPLATE_KEY).is_none());
        let digest = grib_key(e, TEMPLATE_REF_KEY).unwrap().as_text().unwrap();
        assert_eq!(format!("{SHARED_PREFIX}{digest}"), *shared[0]);
    }
    assert_same(&grib, &back);
}

/// `decoded` with every entry's header whole in its own `grib.template`,
/// as a converter keeping no shared header and no `template_pl` writes it.
fn whole_headers(decoded: &tgm::DecodedMessage) -> tgm::DecodedMessage {
    let mut old = decoded.clone();
    for e in &mut old.metadata.base {
        let resolved = super::export::with_header(e, &decoded.metadata.extra).unwrap();
        let Some(Value::Bytes(stored)) = grib_key(&resolved, TEMPLATE_KEY).cloned() else {
            panic!("no header")
        };
        let header = match grib_key(&resolved, TEMPLATE_PL_KEY) {
            Some(place) => {
                let place = super::grib_pl::PlPlace::from_value(place).unwrap();
                let pl = super::grib_pl::pl_of(resolved["geography"].get("pl").unwrap()).unwrap();
                super::grib_pl::put_back(&stored, &pl, place).unwrap()
            }
            None => stored,
        };
        let mut grib: Vec<(Value, Value)> = resolved["grib"].as_map().unwrap().to_vec();
        grib.retain(|(k, _)| k.as_text().is_some_and(|k| !k.starts_with("template")));
        grib.push((Value::Text(TEMPLATE_KEY.into()), Value::Bytes(header)));
        drop(resolved);
        e.insert("grib".into(), Value::Map(grib));
    }
    old.metadata.extra.clear();
    old
}

#[test]
fn entries_holding_their_whole_header_are_written_back() {
    for grib in [
        messages("reduced_gg_pl_32_grib2", &[167], 14),
        messages("regular_ll_sfc_grib2", &[167, 168, 165], 16),
    ] {
        let (decoded, _) = round_trip(&grib);
        let old = whole_headers(&decoded);
        for e in &old.metadata.base {
            assert!(grib_key(e, TEMPLATE_PL_KEY).is_none());
            assert!(grib_key(e, TEMPLATE_REF_KEY).is_none());
        }
        assert_same(&grib, &message_to_grib(&old).unwrap());
    }
}

#[test]
fn a_missing_shared_header_or_a_row_list_of_another_length_is_refused_by_name() {
    let (decoded, _) = round_trip(&messages("regular_ll_sfc_grib2", &[167, 168], 16));
    let mut lacking = decoded.clone();
    lacking.metadata.extra.clear();
    let e = message_to_grib(&lacking).unwrap_err().to_string();
    assert!(e.contains("_extra_.grib_template_"), "{e}");

    let (decoded, _) = round_trip(&messages("reduced_gg_pl_32_grib2", &[167], 14));
    let mut short = decoded.clone();
    let geo = short.metadata.base[0].get_mut("geography").unwrap();
    let Value::Map(geo) = geo else {
        panic!("no geography")
    };
    for (k, v) in geo.iter_mut() {
        if k.as_text() == Some("pl") {
            let Value::Array(pl) = v else { panic!("pl") };
            pl.pop();
        }
    }
    let e = message_to_grib(&short).unwrap_err().to_string();
    assert!(e.contains("geography.pl"), "{e}");
}

#[test]
fn an_entry_naming_a_shared_header_is_never_written_from_a_sample() {
    let (decoded, _) = round_trip(&messages("regular_ll_sfc_grib2", &[167, 168], 16));
    let o = &decoded.objects[0];
    let mut out = Vec::new();
    let e = super::export::object_to_grib(
        &decoded.metadata.base[0],
        &o.descriptor,
        &o.data,
        &Default::default(),
        &mut out,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("grib.template_ref"), "{e}");
    assert!(out.is_empty());
}

/// `decoded`'s first entry with `grib.template` replaced by `header` and
/// `grib.template_pl` dropped.
fn with_whole_header(decoded: &tgm::DecodedMessage, header: Vec<u8>) -> tgm::DecodedMessage {
    let mut m = decoded.clone();
    let Some(Value::Map(grib)) = m.metadata.base[0].get_mut("grib") else {
        panic!("no grib map")
    };
    grib.retain(|(k, _)| k.as_text() != Some(TEMPLATE_PL_KEY));
    for (k, v) in grib.iter_mut() {
        if k.as_text() == Some(TEMPLATE_KEY) {
            *v = Value::Bytes(header.clone());
        }
    }
    m
}

#[test]
fn a_whole_header_is_checked_as_a_file_is_before_ecodes_reads_it() {
    let grib = messages("reduced_gg_pl_32_grib2", &[167], 14);
    let (decoded, back) = round_trip(&grib);
    assert_same(&grib, &back);
    let h = Handle::from_message(&grib).unwrap();
    let pl = h.get_long_array("pl").unwrap();
    let octets = 2;
    let coded: Vec<u8> = pl.iter().flat_map(|&n| (n as u16).to_be_bytes()).collect();
    let at = grib
        .windows(coded.len())
        .position(|w| w == coded.as_slice())
        .unwrap();
    // The source whole, as another writer may store it, comes back.
    let whole = with_whole_header(&decoded, grib.clone());
    assert_same(&grib, &message_to_grib(&whole).unwrap());
    // A row of no points, on which ecCodes may abort.
    let mut zero_row = grib.clone();
    zero_row[at..at + octets].fill(0);
    let e = message_to_grib(&with_whole_header(&decoded, zero_row))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("grib.template: ") && e.contains("0 points"),
        "{e}"
    );
    // Two messages, or bytes after the one, are not one header.
    let mut two = grib.clone();
    two.extend_from_slice(&grib);
    let e = message_to_grib(&with_whole_header(&decoded, two))
        .unwrap_err()
        .to_string();
    assert!(e.contains("2 GRIB messages, not one"), "{e}");
    let mut trailing = grib.clone();
    trailing.extend_from_slice(b"tail");
    let e = message_to_grib(&with_whole_header(&decoded, trailing))
        .unwrap_err()
        .to_string();
    assert!(e.contains("bytes outside its one GRIB message"), "{e}");
    // A cut header.
    let e = message_to_grib(&with_whole_header(
        &decoded,
        grib[..grib.len() - 9].to_vec(),
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("grib.template: "), "{e}");
}

/// One GRIB message on ecCodes' `sample` holding `values` at `bits` bits.
fn message_of(sample: &str, values: impl Fn(usize) -> f64, bits: i64) -> Vec<u8> {
    let mut h = Handle::from_sample(sample).unwrap();
    h.set_long("bitsPerValue", bits).unwrap();
    let n = h.get_long("numberOfDataPoints").unwrap() as usize;
    h.set_double_array("values", &(0..n).map(values).collect::<Vec<_>>())
        .unwrap();
    h.message().unwrap()
}

/// The compression and `sp_bits_per_value` of the first object of `m`.
fn layout(m: &tgm::DecodedMessage) -> (String, u64) {
    let d = &m.objects[0].descriptor;
    let bits = d.pipeline().params()["sp_bits_per_value"].as_u64().unwrap();
    (d.compression().to_string(), bits)
}

#[test]
fn small_fields_are_stored_uncompressed_at_their_width_when_that_is_smaller() {
    // 496 codes of 3 bits that szip cannot predict: 186 bytes as they are.
    let noise = message_of("regular_ll_sfc_grib2", |i| ((i * 7919) % 8) as f64, 3);
    let (decoded, back) = round_trip(&noise);
    assert_eq!(layout(&decoded), ("none".to_string(), 3));
    assert_eq!(decoded.objects[0].data.len(), 496 * 8);
    assert_same(&noise, &back);
    // The same codes in szip's whole-byte containers take more.
    let d = &decoded.objects[0].descriptor;
    let encoded = tgm::encode(
        &tgm::GlobalMetadata::with_base(vec![Default::default()]),
        &[(d, decoded.objects[0].data.as_slice())],
        &Default::default(),
    )
    .unwrap();
    let mut params = d.pipeline().params().clone();
    params.insert("sp_bits_per_value".into(), Value::Uint(8));
    for (k, v) in [
        ("szip_rsi", 128u64),
        ("szip_block_size", 32),
        ("szip_flags", 8),
    ] {
        params.insert(k.into(), Value::Uint(v));
    }
    let szip = d
        .clone()
        .with_raw_pipeline("simple_packing", "none", "szip", params)
        .unwrap();
    let szipped = tgm::encode(
        &tgm::GlobalMetadata::with_base(vec![Default::default()]),
        &[(&szip, decoded.objects[0].data.as_slice())],
        &Default::default(),
    )
    .unwrap();
    assert!(
        encoded.len() < szipped.len(),
        "{} {}",
        encoded.len(),
        szipped.len()
    );
    // A smooth field's codes stay with szip in their containers.
    let smooth = message_of(
        "regular_ll_sfc_grib2",
        |i| 250.0 + (i as f64 * 0.01).sin(),
        12,
    );
    let (decoded, back) = round_trip(&smooth);
    assert_eq!(layout(&decoded), ("szip".to_string(), 16));
    assert_same(&smooth, &back);
}

#[test]
fn a_constant_field_kept_whole_is_packed_again_once_its_values_change() {
    // ecCodes' sample: JPEG 2000 codes of zeros at 14 bits, D = 2.
    let jpeg = Handle::from_sample("reduced_gg_sfc_jpeg_grib2")
        .unwrap()
        .message()
        .unwrap();
    let (decoded, back) = round_trip(&jpeg);
    assert_eq!(back, jpeg, "kept whole, written as it stands");
    let n = decoded.objects[0].data.len() / 8;
    for (what, values) in [
        ("another constant", vec![2.5; n]),
        (
            "varying",
            (0..n).map(|i| (i % 5) as f64).collect::<Vec<f64>>(),
        ),
    ] {
        let mut m = decoded.clone();
        m.objects[0].data = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let out = message_to_grib(&m).unwrap();
        assert_ne!(out, jpeg, "{what}");
        let h = Handle::from_message(&out).unwrap();
        assert_eq!(h.get_double_array("values").unwrap(), values, "{what}");
    }
}
