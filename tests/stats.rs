//! `tgm::stats` against a float64 reference computed here, element by
//! element, for every dtype (`spec/stats.md`).

use tgm::stats::{stats, Stats, Summary, Value};
use tgm::{ByteOrder, Dtype};

/// Deterministic pseudo-random numbers in [0, 1).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The reference: counts, then min and max, then a two-pass mean and
/// variance summed in sorted order of magnitude.
fn reference(values: &[f64]) -> Summary {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let mut s = Summary {
        count: values.len() as u64,
        nan: values.iter().filter(|v| v.is_nan()).count() as u64,
        pos_inf: values.iter().filter(|&&v| v == f64::INFINITY).count() as u64,
        neg_inf: values.iter().filter(|&&v| v == f64::NEG_INFINITY).count() as u64,
        ..Summary::default()
    };
    if finite.is_empty() {
        return s;
    }
    let sorted_sum = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
        v.iter().sum::<f64>()
    };
    let n = finite.len() as f64;
    let mean = sorted_sum(finite.clone()) / n;
    let var = sorted_sum(finite.iter().map(|x| (x - mean) * (x - mean)).collect()) / n;
    s.min = Some(Value::Float(
        finite.iter().copied().fold(f64::INFINITY, f64::min),
    ));
    s.max = Some(Value::Float(
        finite.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    ));
    s.mean = Some(mean);
    s.std = Some(var.sqrt());
    s
}

fn close(a: Option<f64>, b: Option<f64>, scale: f64, what: &str) {
    match (a, b) {
        (Some(a), Some(b)) => assert!(
            (a - b).abs() <= 1e-12 * scale.max(b.abs()),
            "{what}: {a} vs {b}"
        ),
        (a, b) => assert_eq!(a, b, "{what}"),
    }
}

/// Exact counts and extremes; mean and std to 1e-12 of the data's scale.
fn check(got: &Summary, want: &Summary, scale: f64) {
    assert_eq!(
        (got.count, got.nan, got.pos_inf, got.neg_inf),
        (want.count, want.nan, want.pos_inf, want.neg_inf)
    );
    assert_eq!((got.min, got.max), (want.min, want.max));
    close(got.mean, want.mean, scale, "mean");
    close(got.std, want.std, scale, "std");
}

/// `n` values around 1e6 (a large offset against a small spread, where a
/// one-pass sum of squares loses every digit) with NaN and ±Inf sprinkled.
fn floats(n: usize, seed: u64) -> Vec<f64> {
    let mut r = Lcg(seed);
    (0..n)
        .map(|_| match r.next() {
            u if u < 0.01 => f64::NAN,
            u if u < 0.015 => f64::INFINITY,
            u if u < 0.02 => f64::NEG_INFINITY,
            _ => 1e6 + r.next() - 0.5,
        })
        .collect()
}

fn real(s: Stats) -> Summary {
    match s {
        Stats::Real(s) => s,
        other => panic!("expected real statistics, got {other:?}"),
    }
}

#[test]
fn float64_matches_the_reference_in_both_byte_orders() {
    let v = floats(100_003, 1);
    let want = reference(&v);
    assert!(want.nan > 0 && want.pos_inf > 0 && want.neg_inf > 0);
    for order in [ByteOrder::Little, ByteOrder::Big] {
        let bytes: Vec<u8> = v
            .iter()
            .flat_map(|x| match order {
                ByteOrder::Little => x.to_le_bytes(),
                ByteOrder::Big => x.to_be_bytes(),
            })
            .collect();
        let got = real(stats(Dtype::Float64, order, v.len() as u64, &bytes, 0).unwrap());
        check(&got, &want, 1.0);
        assert!((got.std.unwrap() - 1.0 / 12f64.sqrt()).abs() < 0.01);
    }
}

#[test]
fn narrow_floats_widen_exactly() {
    let mut r = Lcg(2);
    let v: Vec<f64> = (0..5000)
        .map(|i| match i % 97 {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            _ => (r.next() * 2000.0 - 1000.0).round() / 4.0,
        })
        .collect();
    let want = reference(&v);
    let cases: [(Dtype, Vec<u8>); 3] = [
        (
            Dtype::Float16,
            v.iter()
                .flat_map(|&x| half::f16::from_f64(x).to_ne_bytes())
                .collect(),
        ),
        (
            Dtype::Bfloat16,
            // bfloat16 rounds to 8 significant bits: the reference takes its values.
            v.iter()
                .flat_map(|&x| half::bf16::from_f64(x).to_ne_bytes())
                .collect(),
        ),
        (
            Dtype::Float32,
            v.iter().flat_map(|&x| (x as f32).to_ne_bytes()).collect(),
        ),
    ];
    for (dtype, bytes) in cases {
        let widened: Vec<f64> = match dtype {
            Dtype::Bfloat16 => bytes
                .chunks(2)
                .map(|c| half::bf16::from_ne_bytes([c[0], c[1]]).to_f64())
                .collect(),
            _ => v.clone(),
        };
        let want = if dtype == Dtype::Bfloat16 {
            reference(&widened)
        } else {
            want
        };
        let got = real(stats(dtype, ByteOrder::native(), v.len() as u64, &bytes, 0).unwrap());
        check(&got, &want, 250.0);
    }
}

#[test]
fn integers_keep_exact_extremes() {
    macro_rules! case {
        ($t:ty, $dtype:expr) => {{
            let mut r = Lcg(3);
            let mut v: Vec<$t> = (0..3001).map(|_| (r.next() * 255.0) as u8 as $t).collect();
            v[7] = <$t>::MIN;
            v[1500] = <$t>::MAX;
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_be_bytes()).collect();
            let got = real(stats($dtype, ByteOrder::Big, v.len() as u64, &bytes, 0).unwrap());
            let wide: Vec<f64> = v.iter().map(|&x| x as f64).collect();
            let mut want = reference(&wide);
            want.min = Some(Value::Int(<$t>::MIN as i128));
            want.max = Some(Value::Int(<$t>::MAX as i128));
            check(&got, &want, <$t>::MAX as f64);
        }};
    }
    case!(i8, Dtype::Int8);
    case!(i16, Dtype::Int16);
    case!(i32, Dtype::Int32);
    case!(i64, Dtype::Int64);
    case!(u8, Dtype::Uint8);
    case!(u16, Dtype::Uint16);
    case!(u32, Dtype::Uint32);
    case!(u64, Dtype::Uint64);
}

#[test]
fn complex_parts_are_summarised_apart() {
    let re = floats(2048, 4);
    let im: Vec<f64> = floats(2048, 5).iter().map(|x| -x).collect();
    let c128: Vec<u8> = re
        .iter()
        .zip(&im)
        .flat_map(|(a, b)| [a.to_ne_bytes(), b.to_ne_bytes()].concat())
        .collect();
    let c64: Vec<u8> = re
        .iter()
        .zip(&im)
        .flat_map(|(&a, &b)| [(a as f32).to_ne_bytes(), (b as f32).to_ne_bytes()].concat())
        .collect();
    let narrow = |v: &[f64]| v.iter().map(|&x| x as f32 as f64).collect::<Vec<_>>();
    let cases = [
        (Dtype::Complex128, c128, reference(&re), reference(&im)),
        (
            Dtype::Complex64,
            c64,
            reference(&narrow(&re)),
            reference(&narrow(&im)),
        ),
    ];
    for (dtype, bytes, want_re, want_im) in cases {
        match stats(dtype, ByteOrder::native(), 2048, &bytes, 0).unwrap() {
            Stats::Complex { real, imag } => {
                check(&real, &want_re, 1e6);
                check(&imag, &want_im, 1e6);
            }
            other => panic!("{dtype}: {other:?}"),
        }
    }
}

#[test]
fn bitmask_counts_set_bits_without_the_padding() {
    // 13 bits: 1011 0000 1111 1 then padding bits that are set.
    let data = [0b1011_0000, 0b1111_1111];
    match stats(Dtype::Bitmask, ByteOrder::Big, 13, &data, 0).unwrap() {
        Stats::Bits { summary, ones } => {
            assert_eq!(ones, 8);
            let bits: Vec<f64> = [1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1]
                .iter()
                .map(|&b| b as f64)
                .collect();
            let mut want = reference(&bits);
            want.min = Some(Value::Int(0));
            want.max = Some(Value::Int(1));
            check(&summary, &want, 1.0);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn empty_and_all_nan_objects_have_no_extremes() {
    for dtype in Dtype::ALL {
        let got = stats(dtype, ByteOrder::Little, 0, &[], 0).unwrap();
        let s = match got {
            Stats::Real(s) | Stats::Bits { summary: s, .. } => s,
            Stats::Complex { real, imag } => {
                assert_eq!(real, imag);
                real
            }
        };
        assert_eq!(s, Summary::default(), "{dtype}");
    }
    let nan = [f64::NAN; 3].map(f64::to_le_bytes).concat();
    let s = real(stats(Dtype::Float64, ByteOrder::Little, 3, &nan, 0).unwrap());
    assert_eq!(
        (s.count, s.nan, s.min, s.mean, s.std),
        (3, 3, None, None, None)
    );
}

#[test]
fn a_buffer_of_the_wrong_length_is_refused() {
    let e = stats(Dtype::Float32, ByteOrder::Little, 3, &[0; 11], 0).unwrap_err();
    assert!(e.to_string().contains("11 bytes"), "{e}");
    assert!(stats(Dtype::Float64, ByteOrder::Little, u64::MAX, &[], 0).is_err());
}

#[test]
fn every_thread_budget_gives_the_same_bits() {
    // Several runs of 1 MiB, the last one partial.
    let v = floats(3 * tgm::__fuzz::STATS_RUN / 8 + 12_345, 6);
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
    let n = v.len() as u64;
    let one = stats(Dtype::Float64, ByteOrder::native(), n, &bytes, 1).unwrap();
    for threads in [2, 3, 8] {
        let many = stats(Dtype::Float64, ByteOrder::native(), n, &bytes, threads).unwrap();
        assert_eq!(many, one, "{threads} threads");
    }
    check(&real(one), &reference(&v), 1.0);
}
