//! Property tests: every lossless pipeline returns the input exactly, and
//! simple_packing stays within half a quantum, on random data and shapes.

use proptest::prelude::*;
use tgm::cbor::Value;
use tgm::pipeline::PipelineOptions;
use tgm::{ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

fn lossless_dtype() -> impl Strategy<Value = Dtype> {
    prop::sample::select(vec![
        Dtype::Int8,
        Dtype::Uint16,
        Dtype::Int32,
        Dtype::Uint64,
        Dtype::Float32,
        Dtype::Float64,
        Dtype::Complex64,
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn lossless_pipelines_round_trip(
        dtype in lossless_dtype(),
        n in 0usize..3000,
        seed in any::<u64>(),
        big in any::<bool>(),
        shuffle in any::<bool>(),
        compression in prop::sample::select(vec!["none", "zstd", "lz4"]),
    ) {
        let w = dtype.width();
        let mut s = seed | 1;
        let mut data: Vec<u8> = (0..n * w).map(|_| { s ^= s << 13; s ^= s >> 7; s ^= s << 17; (s >> 32) as u8 }).collect();
        // Keep floats finite: clear the top exponent bit of every component.
        let unit = dtype.swap_unit();
        if dtype.is_float() {
            for c in data.chunks_exact_mut(unit) {
                let top = if big { 0 } else { unit - 1 };
                c[top] &= 0xbf;
            }
        }
        let mut params = tgm::Map::new();
        if shuffle {
            params.insert("shuffle_element_size".into(), Value::Uint(w as u64));
        }
        let filter = if shuffle { "shuffle" } else { "none" };
        let d = ObjectDescriptor::new(dtype, vec![n as u64])
            .with_byte_order(if big { ByteOrder::Big } else { ByteOrder::Little })
            .with_raw_pipeline("none", filter, compression, params)
            .unwrap();
        let msg = tgm::encode(&GlobalMetadata::default(), &[(&d, &data)], &EncodeOptions::new()).unwrap();
        let back = tgm::decode(&msg, &DecodeOptions::default().native_byte_order(false)).unwrap();
        prop_assert_eq!(&back.objects[0].data, &data);
    }

    #[test]
    fn simple_packing_within_half_quantum(
        values in prop::collection::vec(-1e6f64..1e6, 1..2000),
        bits in 1u64..=32,
        threads in prop::sample::select(vec![0usize, 2]),
    ) {
        let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut params = tgm::Map::new();
        params.insert("sp_bits_per_value".into(), Value::Uint(bits));
        let d = ObjectDescriptor::new(Dtype::Float64, vec![values.len() as u64])
            .with_byte_order(ByteOrder::Little)
            .with_raw_pipeline("simple_packing", "none", "none", params)
            .unwrap();
        let mut p = PipelineOptions::default();
        p.threads = threads;
        let msg = tgm::encode(&GlobalMetadata::default(), &[(&d, &data)], &EncodeOptions::new().pipeline(p)).unwrap();
        let back = tgm::decode(&msg, &DecodeOptions::default().native_byte_order(false)).unwrap();
        let e = back.objects[0].descriptor.pipeline().params()["sp_binary_scale_factor"].as_i64().unwrap();
        let half = 2f64.powi(e as i32) / 2.0;
        for (a, b) in values.iter().zip(back.objects[0].data.chunks_exact(8)) {
            let b = f64::from_le_bytes(b.try_into().unwrap());
            prop_assert!((a - b).abs() <= half * (1.0 + 1e-9) + 1e-9 * a.abs(), "{} vs {} (half quantum {})", a, b, half);
        }
    }
}
