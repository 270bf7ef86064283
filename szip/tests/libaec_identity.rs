//! Bit identity of tgm's szip coder with libaec itself (Debian's libaec-dev),
//! over every bit width, block size, several RSIs, flags and data shapes.
//! Run with `cargo test -p tgm-szip --features libaec-conformance --test libaec_identity`.
#![cfg(feature = "libaec-conformance")]

#[path = "libaec/mod.rs"]
mod libaec;

use tgm_szip::{self as szip, flags, SzipParams};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Samples in 0..2^bits of several characters: noise, a smooth walk, long
/// zero and constant stretches, extremes.
fn samples(kind: u32, bits: u32, n: usize, rng: &mut Rng) -> Vec<u32> {
    let max = if bits == 32 {
        u32::MAX as u64
    } else {
        (1u64 << bits) - 1
    };
    let mut v = Vec::with_capacity(n);
    let mut walk = max / 2;
    for i in 0..n {
        let x = match kind {
            0 => rng.next() & max,
            1 => {
                let step = (rng.next() % 7) as i64 - 3;
                walk = (walk as i64 + step).clamp(0, max as i64) as u64;
                walk
            }
            2 => {
                if (i / 300) % 2 == 0 {
                    0
                } else {
                    (rng.next() % 4) & max
                }
            }
            3 => {
                if (i / 700) % 3 == 0 {
                    max
                } else {
                    (i as u64 / 40) & max
                }
            }
            _ => {
                if rng.next().is_multiple_of(10) {
                    [0, max, max / 2][(rng.next() % 3) as usize]
                } else {
                    walk
                }
            }
        };
        v.push(x as u32);
    }
    v
}

fn containers(v: &[u32], p: &SzipParams) -> Vec<u8> {
    let sb = p.sample_bytes();
    let msb = p.flags & flags::MSB != 0;
    let mut out = Vec::with_capacity(v.len() * sb);
    for &x in v {
        let b = x.to_be_bytes();
        if msb {
            out.extend_from_slice(&b[4 - sb..]);
        } else {
            out.extend(b[4 - sb..].iter().rev());
        }
    }
    out
}

fn check(p: &SzipParams, input: &[u8]) {
    let ours = szip::encode(input, p)
        .unwrap_or_else(|e| panic!("{p:?}: {e}"))
        .0;
    let theirs = libaec::encode(p, input);
    if ours != theirs {
        let at = ours.iter().zip(&theirs).position(|(a, b)| a != b);
        panic!(
            "{p:?} n={} differs at byte {at:?}: ours {} bytes, libaec {}",
            input.len(),
            ours.len(),
            theirs.len()
        );
    }
    let mut back = vec![0u8; input.len()];
    szip::decode_into(&theirs, p, &mut back).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    let expect = libaec::decode(p, &theirs, input.len());
    assert_eq!(back, expect, "{p:?}: decoders disagree");
}

fn flag_sets(bits: u32) -> Vec<u32> {
    let mut v = vec![
        0,
        flags::PREPROCESS,
        flags::PREPROCESS | flags::SIGNED,
        flags::PREPROCESS | flags::MSB,
        flags::MSB | flags::SIGNED,
    ];
    if (17..=24).contains(&bits) {
        v.push(flags::PREPROCESS | flags::THREE_BYTE | flags::MSB);
        v.push(flags::THREE_BYTE | flags::SIGNED | flags::PREPROCESS);
    }
    if bits <= 4 {
        v.push(flags::PREPROCESS | flags::RESTRICTED);
        v.push(flags::RESTRICTED | flags::SIGNED | flags::PREPROCESS);
    }
    v
}

#[test]
fn encoder_matches_libaec_bit_for_bit() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut cases = 0;
    for bits in 1..=32u32 {
        for block_size in [8u32, 16, 32, 64] {
            for rsi in [1u32, 3, 64, 100] {
                for f in flag_sets(bits) {
                    let p = SzipParams {
                        bits_per_sample: bits,
                        block_size,
                        rsi,
                        flags: f,
                    };
                    let kind = (rng.next() % 5) as u32;
                    let n = [block_size as usize * rsi as usize * 2, 1000, 4099, 37][cases % 4];
                    let v = samples(kind, bits, n, &mut rng);
                    check(&p, &containers(&v, &p));
                    cases += 1;
                }
            }
        }
    }
    assert!(cases > 2000);
}

#[test]
fn every_data_kind_at_common_widths() {
    let mut rng = Rng(42);
    for bits in [8u32, 12, 16, 24, 32] {
        for kind in 0..5 {
            for n in [1usize, 2, 7, 8, 9, 63, 64, 65, 1023, 30_000] {
                for f in [flags::PREPROCESS, flags::PREPROCESS | flags::MSB, 0] {
                    let p = SzipParams {
                        bits_per_sample: bits,
                        block_size: 32,
                        rsi: 128,
                        flags: f | if bits == 24 { flags::THREE_BYTE } else { 0 },
                    };
                    let v = samples(kind, bits, n, &mut rng);
                    check(&p, &containers(&v, &p));
                }
            }
        }
    }
}

#[test]
fn zero_runs_across_segments_and_short_rsis() {
    // Long zero stretches ending at every position relative to 64-block
    // segments and RSI ends, including in a short final RSI.
    for rsi in [1u32, 5, 63, 64, 65, 100, 130] {
        for zeros in [1usize, 4, 5, 6, 63, 64, 65, 200] {
            for tail in [0usize, 1, 17, 1000] {
                let p = SzipParams {
                    bits_per_sample: 16,
                    block_size: 8,
                    rsi,
                    flags: flags::PREPROCESS,
                };
                let mut v = vec![5u32; 8 * 3];
                v.extend(std::iter::repeat_n(5u32, zeros * 8));
                v.extend((0..tail as u32).map(|i| i * 37 % 1000));
                check(&p, &containers(&v, &p));
                let p = SzipParams { flags: 0, ..p };
                let mut v = vec![0u32; zeros * 8 + 3];
                v.extend((0..tail as u32).map(|i| i % 3));
                check(&p, &containers(&v, &p));
            }
        }
    }
}

#[test]
fn empty_input() {
    let p = SzipParams {
        bits_per_sample: 16,
        block_size: 16,
        rsi: 64,
        flags: flags::PREPROCESS,
    };
    let ours = szip::encode(&[], &p).unwrap().0;
    let theirs = libaec::encode(&p, &[]);
    assert_eq!(ours, theirs);
}

#[test]
fn random_parameter_sweep() {
    let mut rng = Rng(0x5eed);
    for _ in 0..400 {
        let bits = 1 + (rng.next() % 32) as u32;
        let sets = flag_sets(bits);
        let p = SzipParams {
            bits_per_sample: bits,
            block_size: [8u32, 16, 32, 64][(rng.next() % 4) as usize],
            rsi: 1 + (rng.next() % 4096) as u32,
            flags: sets[(rng.next() % sets.len() as u64) as usize],
        };
        let n = (rng.next() % 20_000) as usize;
        let kind = (rng.next() % 5) as u32;
        let v = samples(kind, bits, n, &mut rng);
        check(&p, &containers(&v, &p));
    }
}

#[test]
fn the_interoperable_profile_is_valid_for_libaec() {
    let mut rng = Rng(7);
    let mut differed = 0;
    for bits in [8u32, 16, 24, 32] {
        for kind in 0..5 {
            let p = SzipParams {
                bits_per_sample: bits,
                block_size: 16,
                rsi: 32,
                flags: flags::PREPROCESS
                    | flags::MSB
                    | if bits == 24 { flags::THREE_BYTE } else { 0 },
            };
            let v = samples(kind, bits, 20_000, &mut rng);
            let input = containers(&v, &p);
            let (ours, _) =
                szip::encode_with(&input, &p, szip::SzipProfile::Interoperable).unwrap();
            assert_eq!(libaec::decode(&p, &ours, input.len()), input, "{p:?}");
            differed += usize::from(ours != libaec::encode(&p, &input));
        }
    }
    // Smooth data is where libaec picks the second extension for reference blocks.
    assert!(differed > 0);
}
