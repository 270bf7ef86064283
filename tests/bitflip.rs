//! Integrity by default: every single-bit flip of a hashed message is either
//! reported by `tgm::decode` with default options or provably harmless
//! (the decoded metadata and objects are exactly the original ones).

use tgm::cbor::Value;
use tgm::{
    ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, HashPolicy, ObjectDescriptor,
};

fn message() -> Vec<u8> {
    let mut e = tgm::Map::new();
    e.insert("param".into(), Value::from("2t"));
    e.insert(
        "levels".into(),
        Value::Array(vec![Value::Uint(850), Value::Uint(500)]),
    );
    let meta = GlobalMetadata::with_base(vec![e]);
    let f32s: Vec<u8> = (0..6)
        .flat_map(|i| (i as f32 * 1.5).to_be_bytes())
        .collect();
    let i16s: Vec<u8> = (0..4i16).flat_map(|v| (v - 2).to_le_bytes()).collect();
    let mut params = tgm::Map::new();
    params.insert("sp_bits_per_value".into(), Value::Uint(12));
    let sp = ObjectDescriptor::new(Dtype::Float64, vec![5])
        .with_byte_order(ByteOrder::Little)
        .with_raw_pipeline("simple_packing", "none", "zstd", params)
        .unwrap();
    let f64s: Vec<u8> = (0..5)
        .flat_map(|i| (i as f64 * 0.25).to_le_bytes())
        .collect();
    tgm::encode(
        &meta,
        &[
            (
                &ObjectDescriptor::new(Dtype::Float32, vec![2, 3]).with_byte_order(ByteOrder::Big),
                &f32s,
            ),
            (
                &ObjectDescriptor::new(Dtype::Int16, vec![4]).with_byte_order(ByteOrder::Little),
                &i16s,
            ),
            (&sp, &f64s),
        ],
        &EncodeOptions::new().hash_policy(HashPolicy::Both),
    )
    .unwrap()
}

#[test]
fn every_bit_flip_is_reported_or_harmless() {
    let msg = message();
    let opts = DecodeOptions::default();
    let original = tgm::decode(&msg, &opts).unwrap();
    let (mut reported, mut harmless, mut silent) = (0, 0, Vec::new());
    let mut ref_silently_wrong = 0;
    let ref_original = tensogram::decode(&msg, &Default::default()).unwrap();
    for byte in 0..msg.len() {
        for bit in 0..8 {
            let mut m = msg.clone();
            m[byte] ^= 1 << bit;
            match tgm::decode(&m, &opts) {
                Err(_) => reported += 1,
                Ok(d) if d == original => harmless += 1,
                Ok(_) => silent.push((byte, bit)),
            }
            if let Ok((meta, objs)) = tensogram::decode(&m, &Default::default()) {
                let same = objs.len() == ref_original.1.len()
                    && objs.iter().zip(&ref_original.1).all(|(a, b)| a.1 == b.1)
                    && format!("{:?}", meta.base) == format!("{:?}", ref_original.0.base);
                if !same {
                    ref_silently_wrong += 1;
                }
            }
        }
    }
    let total = msg.len() * 8;
    println!(
        "{total} flips: tgm reported {reported}, harmless {harmless}, silently wrong {}; the reference decoded {ref_silently_wrong} to wrong values without an error",
        silent.len()
    );
    assert!(
        silent.is_empty(),
        "flips decoded silently wrong: {silent:?}"
    );
    assert_eq!(reported + harmless, total);
    assert!(reported > total * 9 / 10);
}
