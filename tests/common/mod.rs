//! Conversions between tgm types and the reference crate's types, shared by
//! the conformance tests.
#![allow(dead_code)]

use std::collections::BTreeMap;

use tgm::cbor::Value;
use tgm::{ByteOrder, Dtype, GlobalMetadata, ObjectDescriptor, Provenance};

pub fn to_ref_value(v: &Value) -> ciborium::Value {
    use ciborium::Value as C;
    match v {
        Value::Uint(u) => C::Integer((*u).into()),
        Value::Nint(n) => C::Integer((-1i128 - *n as i128).try_into().unwrap()),
        Value::Bytes(b) => C::Bytes(b.clone()),
        Value::Text(t) => C::Text(t.clone()),
        Value::Array(a) => C::Array(a.iter().map(to_ref_value).collect()),
        Value::Map(m) => C::Map(
            m.iter()
                .map(|(k, v)| (to_ref_value(k), to_ref_value(v)))
                .collect(),
        ),
        Value::Tag(t, v) => C::Tag(*t, Box::new(to_ref_value(v))),
        Value::Bool(b) => C::Bool(*b),
        Value::Null | Value::Undefined => C::Null,
        Value::Float(f) => C::Float(*f),
        Value::Simple(_) => C::Null,
    }
}

pub fn from_ref_value(v: &ciborium::Value) -> Value {
    use ciborium::Value as C;
    match v {
        C::Integer(i) => {
            let i: i128 = (*i).into();
            if i >= 0 {
                Value::Uint(i as u64)
            } else {
                Value::Nint((-1 - i) as u64)
            }
        }
        C::Bytes(b) => Value::Bytes(b.clone()),
        C::Text(t) => Value::Text(t.clone()),
        C::Array(a) => Value::Array(a.iter().map(from_ref_value).collect()),
        C::Map(m) => Value::Map(
            m.iter()
                .map(|(k, v)| (from_ref_value(k), from_ref_value(v)))
                .collect(),
        ),
        C::Tag(t, v) => Value::Tag(*t, Box::new(from_ref_value(v))),
        C::Bool(b) => Value::Bool(*b),
        C::Null => Value::Null,
        C::Float(f) => Value::Float(*f),
        _ => Value::Null,
    }
}

pub fn to_ref_map(m: &tgm::Map) -> BTreeMap<String, ciborium::Value> {
    m.iter()
        .map(|(k, v)| (k.clone(), to_ref_value(v)))
        .collect()
}

pub fn from_ref_map(m: &BTreeMap<String, ciborium::Value>) -> tgm::Map {
    m.iter()
        .map(|(k, v)| (k.clone(), from_ref_value(v)))
        .collect()
}

pub fn to_ref_dtype(d: Dtype) -> tensogram::Dtype {
    use tensogram::Dtype as R;
    match d {
        Dtype::Float16 => R::Float16,
        Dtype::Bfloat16 => R::Bfloat16,
        Dtype::Float32 => R::Float32,
        Dtype::Float64 => R::Float64,
        Dtype::Complex64 => R::Complex64,
        Dtype::Complex128 => R::Complex128,
        Dtype::Int8 => R::Int8,
        Dtype::Int16 => R::Int16,
        Dtype::Int32 => R::Int32,
        Dtype::Int64 => R::Int64,
        Dtype::Uint8 => R::Uint8,
        Dtype::Uint16 => R::Uint16,
        Dtype::Uint32 => R::Uint32,
        Dtype::Uint64 => R::Uint64,
        Dtype::Bitmask => R::Bitmask,
        other => panic!("no reference dtype for {other}"),
    }
}

pub fn to_ref_desc(d: &ObjectDescriptor) -> tensogram::DataObjectDescriptor {
    tensogram::DataObjectDescriptor {
        obj_type: d.obj_type.clone(),
        ndim: d.shape.len() as u64,
        shape: d.shape.clone(),
        strides: d.strides.clone(),
        dtype: to_ref_dtype(d.dtype),
        byte_order: match d.byte_order {
            ByteOrder::Big => tensogram::ByteOrder::Big,
            ByteOrder::Little => tensogram::ByteOrder::Little,
        },
        encoding: d.encoding().to_string(),
        filter: d.filter().to_string(),
        compression: d.compression().to_string(),
        masks: None,
        params: to_ref_map(
            &d.pipeline()
                .params()
                .iter()
                .chain(d.annotations())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
    }
}

pub fn to_ref_meta(m: &GlobalMetadata) -> tensogram::GlobalMetadata {
    tensogram::GlobalMetadata {
        base: m.base.iter().map(to_ref_map).collect(),
        reserved: to_ref_map(&m.reserved),
        extra: to_ref_map(&m.extra),
    }
}

pub fn from_ref_meta(m: &tensogram::GlobalMetadata) -> GlobalMetadata {
    GlobalMetadata {
        base: m.base.iter().map(from_ref_map).collect(),
        reserved: from_ref_map(&m.reserved),
        extra: from_ref_map(&m.extra),
        layout: Default::default(),
    }
}

/// The provenance the reference wrote, so tgm can reproduce its bytes exactly.
pub fn provenance_of(meta: &GlobalMetadata) -> Provenance {
    let r = &meta.reserved;
    let text = |v: Option<&Value>| v.and_then(Value::as_text).map(str::to_string);
    let enc = r.get("encoder").expect("reference wrote no encoder");
    Provenance {
        time: text(r.get("time")),
        uuid: text(r.get("uuid")),
        encoder_name: text(enc.get("name")).unwrap(),
        encoder_version: text(enc.get("version")).unwrap(),
    }
}

/// Deterministic pseudo-random bytes (xorshift), valid for every dtype:
/// float patterns are made finite by clearing exponent-all-ones cases.
pub fn sample_bytes(dtype: Dtype, n: u64, seed: u64) -> Vec<u8> {
    let len = dtype.payload_len(n).unwrap() as usize;
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out: Vec<u8> = (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect();
    // Clear the top exponent bit of every float component so no NaN/Inf appears
    // (both byte orders: clear the second-highest bit of the first and last byte).
    let unit = match dtype {
        Dtype::Float16 | Dtype::Bfloat16 => 2,
        Dtype::Float32 | Dtype::Complex64 => 4,
        Dtype::Float64 | Dtype::Complex128 => 8,
        _ => 0,
    };
    if unit > 0 {
        for c in out.chunks_exact_mut(unit) {
            c[0] &= 0xbf;
            c[unit - 1] &= 0xbf;
        }
    }
    if dtype == Dtype::Bitmask && !n.is_multiple_of(8) {
        if let Some(last) = out.last_mut() {
            *last &= 0xffu8 << (8 - n % 8);
        }
    }
    out
}

pub const SHAPES: &[&[u64]] = &[
    &[],
    &[0],
    &[1],
    &[7],
    &[3, 5],
    &[2, 0, 3],
    &[2, 3, 4],
    &[1, 1, 1, 9],
];

/// `d` with the szip compression stage and its parameters.
pub fn with_szip(d: ObjectDescriptor, rsi: u64, block: u64, flags: u64) -> ObjectDescriptor {
    edit_raw(d, |r| {
        r.compression = "szip".into();
        r.params.insert("szip_rsi".into(), Value::Uint(rsi));
        r.params
            .insert("szip_block_size".into(), Value::Uint(block));
        r.params.insert("szip_flags".into(), Value::Uint(flags));
    })
}

/// A descriptor's stage names and codec keys, as raw text and values.
pub struct RawPipeline {
    pub encoding: String,
    pub filter: String,
    pub compression: String,
    pub params: tgm::Map,
}

/// `d` with its stage names and codec keys edited by `f` as raw values,
/// the way another writer might set them (the reference takes any).
pub fn edit_raw(d: ObjectDescriptor, f: impl FnOnce(&mut RawPipeline)) -> ObjectDescriptor {
    let mut r = RawPipeline {
        encoding: d.encoding().to_string(),
        filter: d.filter().to_string(),
        compression: d.compression().to_string(),
        params: d.pipeline().params().clone(),
    };
    f(&mut r);
    d.with_raw_pipeline(&r.encoding, &r.filter, &r.compression, r.params)
        .expect("valid stage keys")
}

/// Checks two one-object messages are byte-identical, saying first
/// whether the descriptors or the payload lengths differ.
pub fn assert_same_message(ours: &[u8], reference: &[u8], what: &dyn std::fmt::Debug) {
    if ours == reference {
        return;
    }
    let a = tgm::Message::parse(ours).unwrap();
    let b = tgm::Message::parse(reference).unwrap();
    let (da, db) = (a.object(0).unwrap(), b.object(0).unwrap());
    assert_eq!(da.descriptor(), db.descriptor(), "descriptor differs");
    assert_eq!(
        da.payload_region().len(),
        db.payload_region().len(),
        "payload length differs for {what:?}"
    );
    panic!("payload bytes differ for {what:?}");
}

/// `n` float64 values of a smooth temperature-like field in `order`.
pub fn field(n: usize, order: ByteOrder) -> Vec<u8> {
    (0..n)
        .flat_map(|i| {
            let x = i as f64;
            let v = 250.0 + 30.0 * (x * 0.013).sin() + 5.0 * (x * 0.17).cos() - (x * 1e-3);
            match order {
                ByteOrder::Big => v.to_be_bytes(),
                ByteOrder::Little => v.to_le_bytes(),
            }
        })
        .collect()
}

/// A smooth temperature-like field with a little structured noise.
pub fn smooth_field(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 280.0 + 20.0 * (i as f64 * 0.01).sin() + ((i * 7919) % 13) as f64 * 0.01)
        .collect()
}

/// szip objects over raw integers (with and without SIGNED and
/// preprocessing) and shuffled float32, in both byte orders.
pub fn szip_raw_cases(dtypes: &[Dtype]) -> Vec<(ObjectDescriptor, Vec<u8>)> {
    let mut cases = Vec::new();
    for &dtype in dtypes {
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let n = 9_999u64;
            let data: Vec<u8> = match dtype {
                Dtype::Float32 => smooth_field(n as usize)
                    .iter()
                    .flat_map(|v| (*v as f32).to_le_bytes())
                    .collect(),
                _ => (0..n * dtype.width() as u64)
                    .map(|i| ((i / 3) % 251) as u8 ^ ((i % 7) as u8))
                    .collect(),
            };
            let plain = ObjectDescriptor::new(dtype, vec![n]).with_byte_order(order);
            for flags in [0u64, 1, 8, 9] {
                cases.push((with_szip(plain.clone(), 128, 16, flags), data.clone()));
            }
            let d = edit_raw(with_szip(plain, 64, 32, 8), |r| {
                r.filter = "shuffle".into();
                r.params.insert(
                    "shuffle_element_size".into(),
                    Value::Uint(dtype.width() as u64),
                );
            });
            cases.push((d, data));
        }
    }
    cases
}

/// Constant runs (zero blocks), small residuals (second extension), noise
/// (uncompressed) and ramps (splits), as uint16.
pub fn szip_option_mix() -> Vec<u8> {
    let mut v: Vec<u16> = Vec::new();
    v.extend(std::iter::repeat_n(1000u16, 3000));
    v.extend((0..3000).map(|i| 1000 + (i % 3) as u16));
    let mut s = 12345u32;
    v.extend((0..3000).map(|_| {
        s = s.wrapping_mul(1_103_515_245).wrapping_add(12345);
        (s >> 16) as u16
    }));
    v.extend((0..3000).map(|i| (i * 37 % 65536) as u16));
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Native-endian float64 bytes as values.
pub fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

/// `got` and `want` hold the same float64 bits, element by element.
pub fn assert_bits(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "{what} [{i}]: {g} vs {w}");
    }
}
