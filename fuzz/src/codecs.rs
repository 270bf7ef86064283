//! Codec decoders given hostile payloads and sizes, and independence of
//! every decode-into API from what the output buffer held before.

use tgm::__fuzz::{bitcodec, lz4_codec, shuffle, simple_packing, zstd_codec};
use tgm::cbor::Value;
use tgm::pipeline::PackingParams;
use tgm::pipeline::PipelineDecodeOptions;
use tgm::szip::SzipParams;
use tgm::{ByteOrder, Dtype, ObjectDescriptor};

use super::common::{fuzz_limits, u16_at};

fn pipeline_options(native: bool) -> PipelineDecodeOptions {
    let mut p = PipelineDecodeOptions::default();
    p.native_byte_order = native;
    p
}

/// A descriptor built from six header bytes: dtype, element count, byte
/// order, compression, shuffle and simple_packing/szip parameters; `None`
/// when the descriptor's own checks refuse the parameters.
fn crafted_descriptor(head: &[u8; 6]) -> Option<(ObjectDescriptor, u64)> {
    let dtype = Dtype::ALL[head[0] as usize % Dtype::ALL.len()];
    let n = u16::from_le_bytes([head[1], head[2]]) as u64 % 5000;
    let order = if head[3] & 1 == 0 {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    };
    let d = ObjectDescriptor::new(dtype, vec![n]).with_byte_order(order);
    let compression = ["none", "zstd", "lz4", "rle", "roaring", "szip"][head[3] as usize / 2 % 6];
    let (mut encoding, mut filter) = ("none", "none");
    let mut params = tgm::Map::new();
    if head[4] & 1 == 1 {
        filter = "shuffle";
        params.insert(
            "shuffle_element_size".into(),
            Value::Uint(head[4] as u64 >> 1),
        );
    }
    if head[5] < 64 && dtype == Dtype::Float64 {
        encoding = "simple_packing";
        let sp = [
            (
                "sp_bits_per_value",
                Value::Uint(head[5] as u64 + (head[4] as u64 & 1)),
            ),
            ("sp_reference_value", Value::Float(head[2] as f64 - 100.0)),
            (
                "sp_binary_scale_factor",
                Value::from_i64(head[1] as i64 - 128),
            ),
            (
                "sp_decimal_scale_factor",
                Value::from_i64(head[0] as i64 % 5 - 2),
            ),
        ];
        for (k, v) in sp {
            params.insert(k.into(), v);
        }
    }
    if head[5] >= 250 {
        let szip = [
            ("szip_rsi", Value::Uint(head[1] as u64 * 16 + 1)),
            ("szip_block_size", Value::Uint(8 << (head[2] % 4))),
            ("szip_flags", Value::Uint(head[0] as u64)),
            ("szip_block_offsets", Value::Array(vec![Value::Uint(0)])),
        ];
        for (k, v) in szip {
            params.insert(k.into(), v);
        }
    }
    let d = d
        .with_raw_pipeline(encoding, filter, compression, params)
        .ok()?;
    Some((d, n))
}

/// Each codec's decoder through the pipeline, behind a crafted descriptor.
pub fn codecs(data: &[u8]) {
    let Some((head, payload)) = data.split_first_chunk::<6>() else {
        return;
    };
    let Some((d, n)) = crafted_descriptor(head) else {
        return;
    };
    let limits = fuzz_limits();
    let mut first = None;
    for native in [true, false] {
        let opts = pipeline_options(native);
        let out = tgm::pipeline::decode(&d, payload, 0, &opts, &limits);
        if let Ok(out) = &out {
            assert_eq!(
                out.len() as u64,
                d.decoded_len().unwrap(),
                "decoders produce exactly the descriptor's size"
            );
        }
        let ok = out.is_ok();
        assert_eq!(*first.get_or_insert(ok), ok, "byte order changed success");
        let _ = tgm::pipeline::decode_range(
            &d,
            payload,
            0,
            &[(0, n / 2), (n / 2, n - n / 2)],
            &opts,
            &limits,
        );
    }
    let _ = tgm::__fuzz::decoded_masks(&d, payload);
    let nbits = n as usize;
    let mut out = vec![0u8; nbits.div_ceil(8)];
    let _ = bitcodec::rle_decode_into(payload, nbits, &mut out);
    let mut out = vec![0u8; nbits.div_ceil(8)];
    let _ = bitcodec::roaring_decode_into(payload, nbits, &mut out);
}

/// szip parameters from five bytes (bits, block, rsi as u16, flags), valid or not.
fn szip_params(h: &[u8]) -> SzipParams {
    let flags = h[4] as u32;
    SzipParams {
        bits_per_sample: h[0] as u32 % 34,
        block_size: if flags & tgm::szip::flags::NOT_ENFORCE != 0 {
            h[1] as u32
        } else {
            8 << (h[1] % 4)
        },
        rsi: u16_at(h, 2) as u32 % 4100,
        flags,
    }
}

/// The pure-Rust szip decoder on hostile streams, parameters and sizes,
/// whole and by range with hostile RSI offsets. Header: parameters (5),
/// output length (2), range start (2), offset stride (1).
pub fn szip(data: &[u8]) {
    let Some((h, stream)) = data.split_first_chunk::<10>() else {
        return;
    };
    let p = szip_params(&h[..5]);
    let out_len = u16_at(h, 5) as usize % 16384;
    let mut out = vec![0u8; out_len];
    let whole = tgm::szip::decode_into(stream, &p, &mut out);
    let stride = h[9] as u64;
    let offsets: Vec<u64> = (0..(stride % 8)).map(|i| i * (stride + 1) * 8).collect();
    let from = (u16_at(h, 7) as usize % (out_len + 1)) as u64;
    let len = (out_len as u64 - from) / 2;
    let mut part = vec![0u8; len as usize];
    let _ = tgm::szip::decode_range_into(stream, &p, &offsets, out_len as u64, from, &mut part);
    // Decoding everything by range from RSI 0 equals decoding whole.
    if whole.is_ok() {
        let mut again = vec![0u8; out_len];
        let r = tgm::szip::decode_range_into(stream, &p, &[0], out_len as u64, 0, &mut again);
        if r.is_ok() {
            assert_eq!(again, out, "range decode from 0 differs from whole decode");
        }
    }
    // Parallel decoding with arbitrary offsets has exactly the sequential outcome.
    let mut par = vec![0u8; out_len];
    let r = tgm::szip::decode_parallel_into(stream, &p, &offsets, &mut par, 2);
    match (&whole, &r) {
        (Ok(()), Ok(())) => assert_eq!(par, out, "parallel decode differs"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        _ => panic!("parallel and sequential szip decoding disagree: {whole:?} vs {r:?}"),
    }
}

/// Decoding into buffers that held other data, or into reused vectors,
/// gives exactly what decoding into fresh buffers gives.
pub fn prefilled(data: &[u8]) {
    let Some((h, src)) = data.split_first_chunk::<10>() else {
        return;
    };
    let len = u16_at(h, 1) as usize % 4096;
    let garbage = [0x00u8, 0xff, h[3]];
    let run = |f: &dyn Fn(&mut Vec<u8>) -> tgm::Result<()>| {
        let mut outcomes = Vec::new();
        for g in garbage {
            let mut buf = vec![g; len];
            let r = f(&mut buf)
                .map(|()| buf)
                .map_err(|e| (e.kind().clone(), e.offset()));
            outcomes.push(r);
        }
        for o in &outcomes[1..] {
            assert_eq!(
                o, &outcomes[0],
                "output depends on the buffer's prior contents"
            );
        }
    };
    match h[0] % 6 {
        0 => {
            let p = szip_params(&h[4..9]);
            run(&|b| Ok(tgm::szip::decode_into(src, &p, b)?));
        }
        1 => {
            let p = PackingParams {
                reference_value: h[4] as f64 - 7.5,
                binary_scale_factor: h[5] as i32 - 128,
                decimal_scale_factor: h[6] as i32 % 7 - 3,
                bits_per_value: h[7] as u32 % 66,
                // GRIB's evaluation order for odd h[8] (`spec/pipeline.md` §2.5).
                grib_reference_value: (h[8] & 1 == 1).then_some(h[4] as f64 * 3.0),
            };
            let first = h[8] as usize % 17;
            let n = len / 8;
            let order = if h[5] & 1 == 0 {
                ByteOrder::Big
            } else {
                ByteOrder::Little
            };
            run(&|b| {
                b.truncate(n * 8);
                simple_packing::decode_into(src, first, n, &p, order, b)
            });
        }
        2 => {
            let size = h[4] as usize % 20;
            run(&|b| {
                b.resize(src.len(), 0x33);
                shuffle::unshuffle_into(src, size, b)
            });
        }
        3 => run(&|b| zstd_codec::zstd_decompress(src, len, b)),
        4 => run(&|b| lz4_codec::lz4_decompress(src, len, b)),
        _ => {
            // Documented contract: ceil(n/8) zeroed bytes; reuse must not leak.
            let n = len;
            let roaring = h[4] & 1 == 1;
            run(&|b| {
                b.clear();
                b.resize(n.div_ceil(8), 0);
                if roaring {
                    bitcodec::roaring_decode_into(src, n, b)
                } else {
                    bitcodec::rle_decode_into(src, n, b)
                }
            });
        }
    }
}
