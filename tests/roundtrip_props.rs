//! Property tests: random tensors and metadata survive tgm → tgm and
//! tgm → reference, for any dtype, byte order and shape.

mod common;

use common::*;
use proptest::prelude::*;
use tgm::cbor::Value;
use tgm::{ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

fn dtype() -> impl Strategy<Value = Dtype> {
    (0..Dtype::ALL.len()).prop_map(|i| Dtype::ALL[i])
}

fn shape() -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(0u64..6, 0..4)
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<u64>().prop_map(Value::Uint),
        any::<i64>().prop_map(Value::from_i64),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::Float),
        "[a-z0-9 _.-]{0,12}".prop_map(Value::Text),
        any::<bool>().prop_map(Value::Bool),
        prop::collection::vec(any::<u8>(), 0..8).prop_map(Value::Bytes),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..4).prop_map(Value::text_map),
        ]
    })
}

fn entry() -> impl Strategy<Value = tgm::Map> {
    prop::collection::btree_map("[a-z][a-z0-9]{0,7}", value(), 0..4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn encode_decode_roundtrip(
        objs in prop::collection::vec((dtype(), shape(), any::<bool>(), any::<u64>()), 0..4),
        entries in prop::collection::vec(entry(), 0..4),
        hashing in any::<bool>(),
    ) {
        let descs: Vec<ObjectDescriptor> = objs
            .iter()
            .map(|(d, s, big, _)| {
                ObjectDescriptor::new(*d, s.clone())
                    .with_byte_order(if *big { ByteOrder::Big } else { ByteOrder::Little })
            })
            .collect();
        let datas: Vec<Vec<u8>> = descs
            .iter()
            .zip(&objs)
            .map(|(d, o)| sample_bytes(d.dtype, d.num_elements().unwrap(), o.3))
            .collect();
        let mut base = entries;
        base.truncate(descs.len());
        let meta = GlobalMetadata::with_base(base);
        let pairs: Vec<_> = descs.iter().zip(&datas).map(|(d, x)| (d, &x[..])).collect();
        let msg = tgm::encode(&meta, &pairs, &EncodeOptions::new().hashing(hashing)).unwrap();

        let back = tgm::decode(&msg, &DecodeOptions::default().native_byte_order(false)).unwrap();
        prop_assert_eq!(back.objects.len(), descs.len());
        for ((o, d), x) in back.objects.iter().zip(&descs).zip(&datas) {
            prop_assert_eq!(&o.descriptor, d);
            prop_assert_eq!(&o.data, x);
        }
        let mut got = back.metadata.clone();
        got.reserved.clear();
        for e in &mut got.base {
            e.remove("_reserved_");
        }
        let mut want = meta.clone();
        want.base.resize_with(descs.len(), Default::default);
        prop_assert_eq!(got.to_cbor(), want.to_cbor());

        let (rmeta, robjs) = tensogram::decode(&msg, &tensogram::DecodeOptions { native_byte_order: false, ..Default::default() }).unwrap();
        prop_assert_eq!(robjs.len(), descs.len());
        for (r, x) in robjs.iter().zip(&datas) {
            prop_assert_eq!(&r.1, x);
        }
        prop_assert_eq!(from_ref_meta(&rmeta).to_cbor(), back.metadata.to_cbor());
    }
}
