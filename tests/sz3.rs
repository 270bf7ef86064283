//! The sz3 codec through its helper process (`spec/pipeline.md` §4.7):
//! each bound mode round-trips, and damaged streams are codec errors, not
//! crashes of the test process.
#![cfg(all(feature = "sz3", target_os = "linux", target_env = "gnu"))]

use tgm::__fuzz::compressors::{sz3_compress, sz3_decompress_into};
use tgm::pipeline_spec::Sz3Bound;

#[path = "common/sz3_self_helper.rs"]
mod sz3_self_helper;

/// Decodes with this executable as the helper.
fn decompress(stream: &[u8], out: &mut [f64]) -> tgm::Result<()> {
    static HELPER: std::sync::Once = std::sync::Once::new();
    HELPER.call_once(|| tgm::sz3_child::set_helper(Some(sz3_self_helper::helper())));
    sz3_decompress_into(stream, out)
}

fn wave(n: usize) -> Vec<f64> {
    (0..n).map(|i| (i as f64 * 0.01).sin() * 100.0).collect()
}

#[test]
fn each_bound_mode_round_trips_within_its_bound() {
    let v = wave(5000);
    for (b, max_err) in [
        (Sz3Bound::Abs(1e-3), 1e-3),
        (Sz3Bound::Rel(1e-4), 1e-4 * 200.0),
        (Sz3Bound::Psnr(80.0), 1.0),
    ] {
        let c = sz3_compress(&v, b).unwrap();
        assert!(c.len() < v.len() * 8, "{b:?}");
        let mut out = vec![0.0; v.len()];
        decompress(&c, &mut out).unwrap();
        let err = v
            .iter()
            .zip(&out)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err <= max_err, "{b:?}: {err}");
    }
}

#[test]
fn a_stream_of_another_length_or_truncated_is_refused() {
    let v = wave(1000);
    let c = sz3_compress(&v, Sz3Bound::Abs(1e-3)).unwrap();
    let mut out = vec![0.0; 999];
    let e = decompress(&c, &mut out).unwrap_err();
    assert!(e.detail().contains("[1000]"), "{e}");
    let mut out = vec![0.0; 1000];
    for cut in [0, 1, 15, 16, 17] {
        assert!(decompress(&c[..cut], &mut out).is_err(), "{cut}");
    }
    // SZ3 itself throws (and the process aborts) on these: the magic
    // number or data version changed.
    for at in [0, 3, 4, 7] {
        let mut bad = c.clone();
        bad[at] ^= 0x20;
        let e = decompress(&bad, &mut out).unwrap_err();
        assert!(e.detail().contains("magic number"), "{at}: {e}");
    }
    assert!(sz3_compress(&[], Sz3Bound::Abs(1.0)).is_err());
    assert!(sz3_compress(&[1.0], Sz3Bound::Abs(1.0)).is_err());
    for n in [0, 1] {
        let e = decompress(&c, &mut vec![0.0; n]).unwrap_err();
        assert!(e.detail().contains("at least 2"), "{e}");
    }
}

/// Values SZ3 cannot predict, so it stores them losslessly (zstd).
fn noise(n: usize) -> Vec<f64> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            f64::from_bits(x >> 2)
        })
        .collect()
}

#[test]
fn a_lossless_stream_claiming_more_bytes_is_an_error_not_a_crash() {
    let v = noise(512);
    let mut c = sz3_compress(&v, Sz3Bound::Abs(1e-300)).unwrap();
    // Lossless mode: the body starts with the byte count of the values.
    let claimed = u64::from_le_bytes(c[16..24].try_into().unwrap());
    assert_eq!(claimed, 512 * 8, "not a lossless-mode stream");
    let mut out = vec![0.0; 512];
    decompress(&c, &mut out).unwrap();
    assert_eq!(out, v);
    // SZ3 itself writes the claimed bytes into the caller's buffer,
    // then throws (testdata/regress/sz3-lossless-size.bin).
    c[16..24].copy_from_slice(&(512u64 * 8 * 64).to_le_bytes());
    let mut out = vec![0.0; 512];
    let e = decompress(&c, &mut out).unwrap_err();
    assert!(e.detail().contains("sz3"), "{e}");
}

#[test]
fn garbage_past_the_header_is_an_error_or_values_never_a_crash() {
    let v = wave(3000);
    let c = sz3_compress(&v, Sz3Bound::Abs(1e-4)).unwrap();
    let mut crashes = 0;
    for at in (16..c.len()).step_by(c.len() / 40 + 1) {
        for fill in [0x00u8, 0xff, 0x5a] {
            let mut bad = c.clone();
            let end = (at + 24).min(bad.len());
            bad[at..end].fill(fill);
            let mut out = vec![0.0; v.len()];
            if let Err(e) = decompress(&bad, &mut out) {
                assert!(e.detail().contains("sz3"), "{e}");
                crashes += usize::from(e.detail().contains("crashed"));
            }
        }
    }
    // SZ3 does crash on some of these: each was contained.
    assert!(crashes > 0, "no edit made SZ3 crash");
}
