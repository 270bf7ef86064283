//! szip over simple_packing encodes in one pass, each RSI's codes going
//! straight to the coder (`spec/pipeline.md` §6.6): its payloads and
//! `szip_block_offsets` are those of packing first and coding the packed
//! stream after, at every width szip accepts after packing, for sizes that
//! are and are not whole RSIs, with and without preprocessing, signed
//! coding, 3-byte containers, both coder profiles, one thread and several.
//! The decode, fused the other way (szip's samples go to the unpacking as
//! integers), gives the values of decoding the two stages one after the
//! other.
#![cfg(feature = "szip")]

use tgm::cbor::Value;
use tgm::pipeline::{self, PipelineDecodeOptions, PipelineOptions};
use tgm::pipeline_spec::{SimplePacking, Szip};
use tgm::szip::{flags, SzipParams, SzipProfile};
use tgm::{ByteOrder, Dtype, ErrorKind, Limits, ObjectDescriptor, PipelineBuilder};

/// A smooth field with noise and a constant stretch, so that blocks take
/// every coding option.
fn values(n: usize) -> Vec<f64> {
    let mut s = 0x2545_f491u32 ^ n as u32;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let x = i as f64;
            match (i / 900) % 3 {
                0 => 250.0 + 30.0 * (x * 1.3e-3).sin(),
                1 => 250.0 + (s % 1000) as f64 * 0.05,
                _ => 260.0,
            }
        })
        .collect()
}

fn bytes(v: &[f64], order: ByteOrder) -> Vec<u8> {
    v.iter()
        .flat_map(|x| match order {
            ByteOrder::Big => x.to_be_bytes(),
            ByteOrder::Little => x.to_le_bytes(),
        })
        .collect()
}

fn descriptor(n: usize, order: ByteOrder, p: &PipelineBuilder) -> ObjectDescriptor {
    let mut d = ObjectDescriptor::new(Dtype::Float64, vec![n as u64]).with_pipeline(p);
    d.byte_order = order;
    d
}

fn options(threads: usize, profile: SzipProfile) -> PipelineOptions {
    let mut o = PipelineOptions::default();
    o.threads = threads;
    o.szip_profile = profile;
    o
}

fn block_offsets(d: &ObjectDescriptor) -> Vec<u64> {
    match &d.pipeline().params()["szip_block_offsets"] {
        Value::Array(a) => a.iter().map(|v| v.as_u64().unwrap()).collect(),
        other => panic!("szip_block_offsets is {other:?}"),
    }
}

/// The szip coder's parameters for simple_packing's stream at `bits`.
fn coder_params(bits: u32, sz: &Szip) -> SzipParams {
    let three = if (17..=24).contains(&bits) {
        flags::THREE_BYTE
    } else {
        0
    };
    SzipParams {
        bits_per_sample: bits,
        block_size: sz.block_size,
        rsi: sz.rsi,
        flags: sz.flags | flags::MSB | three,
    }
}

/// Packs with simple_packing alone, then codes the packed stream with the
/// szip coder: the unfused path.
fn unfused(
    data: &[u8],
    n: usize,
    order: ByteOrder,
    sp: SimplePacking,
    sz: &Szip,
    profile: SzipProfile,
) -> (Vec<u8>, Vec<u64>) {
    let mut d = descriptor(n, order, &PipelineBuilder::new().simple_packing_params(sp));
    let packed = pipeline::encode(&mut d, data, &options(1, profile))
        .unwrap()
        .payload;
    let p = coder_params(sp.bits_per_value, sz);
    tgm::szip::encode_with(&packed, &p, profile).unwrap()
}

/// Decodes `payload` with the szip coder into the packed stream, then
/// unpacks that with simple_packing alone: the unfused decode.
fn unfused_decode(
    payload: &[u8],
    n: usize,
    order: ByteOrder,
    sp: SimplePacking,
    sz: &Szip,
) -> Vec<u8> {
    let bits = sp.bits_per_value;
    let p = coder_params(bits, sz);
    let mut packed = vec![0u8; n * p.sample_bytes()];
    tgm::szip::decode_into(payload, &p, &mut packed).unwrap();
    let d = descriptor(n, order, &PipelineBuilder::new().simple_packing_params(sp));
    let opts = PipelineDecodeOptions::default();
    pipeline::decode(&d, &packed, 0, &opts, &Limits::default())
        .unwrap()
        .into_owned()
}

#[test]
fn fused_encode_and_decode_give_the_unfused_bytes_offsets_and_values() {
    let mut checked = 0;
    for bits in [8u32, 16, 24, 32] {
        for (rsi, block, szip_flags) in [
            (128u32, 16u32, flags::PREPROCESS),
            (4, 8, flags::PREPROCESS),
            (3, 32, 0),
            (2, 16, flags::PREPROCESS | flags::SIGNED),
            (5, 10, flags::PREPROCESS | flags::NOT_ENFORCE),
        ] {
            let rsi_samples = (rsi * block) as usize;
            for n in [1, 7, rsi_samples - 1, rsi_samples + 1, 40 * rsi_samples + 3] {
                let v = values(n);
                for order in [ByteOrder::Little, ByteOrder::Big] {
                    let data = bytes(&v, order);
                    let pp = pipeline::compute_packing_params(&data, order, bits, 1).unwrap();
                    let sp = SimplePacking::from(pp);
                    let sz = Szip {
                        rsi,
                        block_size: block,
                        flags: szip_flags,
                        offsets: None,
                    };
                    let p = PipelineBuilder::new()
                        .simple_packing_params(sp)
                        .szip_params(sz.clone());
                    for profile in [SzipProfile::Interoperable, SzipProfile::Libaec] {
                        let (want, want_offsets) = unfused(&data, n, order, sp, &sz, profile);
                        let values = unfused_decode(&want, n, order, sp, &sz);
                        for threads in [1, 3] {
                            let mut d = descriptor(n, order, &p);
                            let got = pipeline::encode(&mut d, &data, &options(threads, profile))
                                .unwrap();
                            let case = format!(
                                "bits {bits} rsi {rsi} block {block} flags {szip_flags} n {n} \
                                 {order:?} {profile:?} threads {threads}"
                            );
                            assert!(got.payload[..] == want[..], "{case}");
                            assert_eq!(block_offsets(&d), want_offsets, "{case}");
                            let mut opts = PipelineDecodeOptions::default();
                            opts.threads = threads;
                            let back =
                                pipeline::decode(&d, &got.payload, 0, &opts, &Limits::default())
                                    .unwrap();
                            assert!(back[..] == values[..], "decode, {case}");
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(checked, 4 * 5 * 5 * 2 * 2 * 2);
}

/// Derived packing parameters come out as when given, with the same bytes.
#[test]
fn fused_encode_with_derived_parameters() {
    let n = 100_003;
    let data = bytes(&values(n), ByteOrder::Little);
    for bits in [16u32, 24] {
        let pp = pipeline::compute_packing_params(&data, ByteOrder::Little, bits, 0).unwrap();
        let (want, _) = unfused(
            &data,
            n,
            ByteOrder::Little,
            SimplePacking::from(pp),
            &Szip::default(),
            SzipProfile::Interoperable,
        );
        let p = PipelineBuilder::new().simple_packing(bits).szip();
        for threads in [1, 2] {
            let mut d = descriptor(n, ByteOrder::Little, &p);
            let opts = options(threads, SzipProfile::Interoperable);
            let got = pipeline::encode(&mut d, &data, &opts).unwrap();
            assert!(got.payload[..] == want[..], "bits {bits} threads {threads}");
        }
    }
}

/// A NaN is refused naming its element, as without fusion; allowed, it is
/// masked and the rest coded as the unfused path codes it.
#[test]
fn fused_encode_and_non_finite_values() {
    let n = 5000;
    let mut v = values(n);
    v[4321] = f64::NAN;
    let data = bytes(&v, ByteOrder::Little);
    let pp = pipeline::compute_packing_params(
        &bytes(&values(n), ByteOrder::Little),
        ByteOrder::Little,
        16,
        0,
    )
    .unwrap();
    let p = PipelineBuilder::new()
        .simple_packing_params(SimplePacking::from(pp))
        .szip();
    for threads in [1, 3] {
        let mut d = descriptor(n, ByteOrder::Little, &p);
        let e =
            pipeline::encode(&mut d, &data, &options(threads, SzipProfile::default())).unwrap_err();
        assert_eq!(*e.kind(), ErrorKind::NonFinite, "{e}");
        assert!(e.to_string().contains("4321"), "{e}");
    }
    let mut o = options(1, SzipProfile::default());
    o.allow_nan = true;
    let mut d = descriptor(n, ByteOrder::Little, &p);
    let got = pipeline::encode(&mut d, &data, &o).unwrap();
    let mut zeroed = v.clone();
    zeroed[4321] = 0.0;
    let (want, _) = unfused(
        &bytes(&zeroed, ByteOrder::Little),
        n,
        ByteOrder::Little,
        SimplePacking::from(pp),
        &Szip::default(),
        SzipProfile::default(),
    );
    assert!(got.payload[..] == want[..]);
    assert!(d.masks.is_some());
}
