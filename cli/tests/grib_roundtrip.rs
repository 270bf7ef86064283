//! `tgm convert-grib` and `tgm to-grib` against ecCodes' own tools.
//!
//! Test GRIB files are generated at test time from the samples of Debian's
//! libeccodes-data with `grib_filter`. Without the ecCodes tools or samples
//! every test prints why and returns.
#![cfg(feature = "grib")]

mod common;
#[path = "doc/examples.rs"]
mod doc_examples;

use std::path::{Path, PathBuf};
use std::process::Command;

use tgm::cbor::Value;
use tgm::{DecodeOptions, DecodedMessage, TgmFile};

const SAMPLES: &str = "/usr/share/eccodes/samples";

fn tgm(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Whether the ecCodes tools and samples are installed; prints why not.
fn eccodes_available() -> bool {
    let tools = ["grib_filter", "grib_get_data", "grib_compare", "grib_get"]
        .iter()
        .all(|t| Command::new(t).arg("-V").output().is_ok());
    let samples = Path::new(SAMPLES).join("GRIB2.tmpl").exists();
    if !(tools && samples) {
        common::skip::skip(&format!(
            "ecCodes tools (libeccodes-tools) or samples ({SAMPLES}, \
             libeccodes-data) not found; run .ci/weather.sh"
        ));
    }
    tools && samples
}

/// Deterministic, non-trivial field values (9999 marks missing points).
fn field(n: usize, offset: f64, missing_every: Option<usize>) -> String {
    (0..n)
        .map(|i| match missing_every {
            Some(k) if i % k == 0 => "9999".to_string(),
            _ => format!(
                "{:.6}",
                offset + 10.0 * (i as f64 * 0.1).sin() + (i % 7) as f64 * 0.37
            ),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Runs `grib_filter` with `rules` on `sample`, writing `out`.
fn generate(dir: &Path, name: &str, sample: &str, rules: &str) -> PathBuf {
    let rules_path = dir.join(format!("{name}.rules"));
    std::fs::write(&rules_path, rules).unwrap();
    let out = dir.join(name);
    let st = Command::new("grib_filter")
        .arg("-o")
        .arg(&out)
        .arg(&rules_path)
        .arg(Path::new(SAMPLES).join(format!("{sample}.tmpl")))
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "grib_filter: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    out
}

/// Three fields on a regular lat/lon grid: 12 and 16 bits, and a 10-bit
/// field with a bitmap (every fifth point missing).
fn regular_rules() -> String {
    [
        format!(
            "set paramId=167; set bitsPerValue=12; set values={{{}}}; write;",
            field(496, 273.0, None)
        ),
        format!(
            "set paramId=168; set bitsPerValue=16; set values={{{}}}; write;",
            field(496, 280.0, None)
        ),
        format!(
            "set paramId=165; set bitsPerValue=10; set bitmapPresent=1; \
             set missingValue=9999; set values={{{}}}; write;",
            field(496, 1.0, Some(5))
        ),
    ]
    .join("\n")
}

/// The first of [`sample_set`] converted by `convert-grib` with
/// simple_packing at `bits` and the arguments `extra` into `dir/name`:
/// the sample, the archive and the command's stderr.
fn packed_sample(dir: &Path, name: &str, bits: &str, extra: &[&str]) -> (PathBuf, PathBuf, String) {
    let input = sample_set(dir).swap_remove(0);
    let out = dir.join(name);
    let mut args = vec!["convert-grib", s(&input), "-o", s(&out)];
    args.extend_from_slice(extra);
    args.extend(["--encoding", "simple_packing", "--bits", bits]);
    let (ok, _, err) = tgm(&args);
    assert!(ok, "{err}");
    (input, out, err)
}

/// GRIB2 and GRIB1 regular fields and a GRIB2 reduced Gaussian field.
fn sample_set(dir: &Path) -> Vec<PathBuf> {
    vec![
        generate(dir, "ll2.grib", "regular_ll_sfc_grib2", &regular_rules()),
        generate(dir, "ll1.grib", "regular_ll_sfc_grib1", &regular_rules()),
        generate(
            dir,
            "gg2.grib",
            "reduced_gg_pl_32_grib2",
            &format!(
                "set bitsPerValue=14; set values={{{}}}; write;",
                field(6114, 250.0, None)
            ),
        ),
    ]
}

fn decode_all(path: &Path) -> Vec<DecodedMessage> {
    let f = TgmFile::open(path).unwrap();
    (0..f.num_messages())
        .map(|m| {
            let bytes = f.message_bytes(m).unwrap();
            tgm::Message::parse(&bytes)
                .unwrap()
                .decode(&DecodeOptions::default())
                .unwrap()
        })
        .collect()
}

fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

/// ecCodes' decoded values of every message of `path`, NaN where missing,
/// printed with 17 significant digits (exact for f64).
fn eccodes_values(path: &Path) -> Vec<Vec<f64>> {
    let out = Command::new("grib_get_data")
        .args(["-m", "nan", "-F", "%.17g", "-p", "count"])
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut fields: Vec<Vec<f64>> = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() != 4 || cols[0] == "Latitude" {
            continue;
        }
        let count: usize = cols[3].parse().unwrap();
        if fields.len() < count {
            fields.push(Vec::new());
        }
        fields[count - 1].push(cols[2].parse().unwrap());
    }
    fields
}

fn get<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key)
        .unwrap_or_else(|| panic!("metadata lacks {key:?}: {}", v.to_json()))
}

#[test]
fn simple_packed_fields_decode_bit_identical_to_eccodes() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let inputs = sample_set(dir.path());
    for input in &inputs {
        let out = dir.path().join(format!("{}.tgm", input.display()));
        let (ok, _, err) = tgm(&["convert-grib", s(input), "-o", s(&out), "--split"]);
        assert!(ok, "{err}");
        let expected = eccodes_values(input);
        let messages = decode_all(&out);
        assert_eq!(messages.len(), expected.len(), "{}", input.display());
        for (m, (msg, want)) in messages.iter().zip(&expected).enumerate() {
            let obj = &msg.objects[0];
            let d = &obj.descriptor;
            assert_eq!(d.encoding(), "simple_packing");
            // Small fields go uncompressed when that is smaller
            // (`spec/convert.md` "Stored exactly").
            match d.compression() {
                "szip" => {}
                "none" => assert!(want.len() <= 64 << 10, "{}", input.display()),
                c => panic!("{}: compression {c}", input.display()),
            }
            let got = f64s(&obj.data);
            assert_eq!(got.len(), want.len());
            let mut nan = 0;
            for (i, (g, w)) in got.iter().zip(want).enumerate() {
                if w.is_nan() {
                    assert!(
                        g.is_nan(),
                        "{} #{m} [{i}]: {g} for missing",
                        input.display()
                    );
                    nan += 1;
                } else {
                    assert_eq!(
                        g.to_bits(),
                        w.to_bits(),
                        "{} #{m} [{i}]: {g} != {w}",
                        input.display()
                    );
                }
            }
            let bitmap = m == 2 && !input.ends_with("gg2.grib");
            assert_eq!(
                nan,
                if bitmap { 100 } else { 0 },
                "{} #{m}",
                input.display()
            );
            if bitmap {
                assert!(d.masks.as_ref().is_some_and(|k| k.nan.is_some()));
            }
        }
    }
}

#[test]
fn fewer_bits_than_the_source_are_detected_as_different() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (input, out, _) = packed_sample(dir.path(), "coarse.tgm", "8", &["--split"]);
    let want = &eccodes_values(&input)[0];
    let got = f64s(&decode_all(&out)[0].objects[0].data);
    let differing = got
        .iter()
        .zip(want)
        .filter(|(g, w)| g.to_bits() != w.to_bits())
        .count();
    assert!(
        differing > 100,
        "only {differing} of {} values differ",
        got.len()
    );
}

#[test]
fn decimal_scaled_fields_keep_their_quantum_and_round_trip() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // ecCodes picks D = 1 and the bits that range needs (8 here).
    let input = generate(
        dir.path(),
        "dec.grib",
        "regular_ll_sfc_grib2",
        &format!(
            "set bitsPerValue=12; set values={{{}}}; set changeDecimalPrecision=1; write;",
            field(496, 250.0, None)
        ),
    );
    let t = dir.path().join("dec.tgm");
    let back = dir.path().join("dec.back.grib");
    assert!(tgm(&["convert-grib", s(&input), "-o", s(&t)]).0);
    let msg = &decode_all(&t)[0];
    // (R + q·2^E)·10^-D cannot be evaluated by tgm's simple_packing in
    // ecCodes' order of operations, so the field is stored as exact float64.
    assert_eq!(msg.objects[0].descriptor.encoding(), "none");
    let want = &eccodes_values(&input)[0];
    let got = f64s(&msg.objects[0].data);
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "[{i}]: {g} vs {w}");
    }
    let (ok, _, err) = tgm(&["to-grib", s(&t), "-o", s(&back)]);
    assert!(ok, "{err}");
    let (same, report) = grib_compare(
        &["-c", "data:n", "-c", "decimalScaleFactor,bitsPerValue"],
        &input,
        &back,
    );
    assert!(same, "{report}");
}

#[test]
fn metadata_carries_mars_geography_and_shape() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let inputs = sample_set(dir.path());
    let out = dir.path().join("all.tgm");
    let args: Vec<&str> = ["convert-grib"]
        .into_iter()
        .chain(inputs.iter().map(|p| s(p)))
        .chain(["-o", s(&out), "--all-keys"])
        .collect();
    let (ok, _, err) = tgm(&args);
    assert!(ok, "{err}");
    let messages = decode_all(&out);
    // One message per input file, one object per field.
    assert_eq!(
        messages.iter().map(|m| m.objects.len()).collect::<Vec<_>>(),
        [3, 3, 1]
    );
    let ll2 = Value::from(messages[0].metadata.base[2].clone());
    let mars = get(&ll2, "mars");
    assert_eq!(get(mars, "param").as_i64(), Some(165));
    assert_eq!(get(mars, "levtype").as_text(), Some("sfc"));
    assert_eq!(get(mars, "date").as_i64(), Some(20070323));
    let geo = get(&ll2, "geography");
    assert_eq!(get(geo, "gridType").as_text(), Some("regular_ll"));
    assert_eq!(get(geo, "Ni").as_i64(), Some(16));
    assert_eq!(get(geo, "Nj").as_i64(), Some(31));
    assert_eq!(messages[0].objects[2].descriptor.shape, [31, 16]);
    assert_eq!(get(get(&ll2, "grib"), "bitsPerValue").as_i64(), Some(10));
    assert_eq!(
        get(get(&ll2, "grib_keys"), "shortName").as_text(),
        Some("10u")
    );
    let ll1 = Value::from(messages[1].metadata.base[0].clone());
    assert_eq!(get(get(&ll1, "mars"), "param").as_text(), Some("167.128"));
    assert_eq!(get(get(&ll1, "grib"), "edition").as_i64(), Some(1));
    let gg = Value::from(messages[2].metadata.base[0].clone());
    let geo = get(&gg, "geography");
    assert_eq!(get(geo, "gridType").as_text(), Some("reduced_gg"));
    let pl = get(geo, "pl").as_array().unwrap();
    assert_eq!(pl.len(), 64);
    let total: i64 = pl.iter().map(|v| v.as_i64().unwrap()).sum();
    assert_eq!(total, 6114);
    assert_eq!(messages[2].objects[0].descriptor.shape, [6114]);
}

#[test]
fn ls_selects_converted_fields_by_mars_keys() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let inputs = sample_set(dir.path());
    let out = dir.path().join("split.tgm");
    let args: Vec<&str> = ["convert-grib"]
        .into_iter()
        .chain(inputs.iter().map(|p| s(p)))
        .chain(["-o", s(&out), "--split"])
        .collect();
    assert!(tgm(&args).0);
    let (ok, listing, err) = tgm(&["ls", "--where", "mars.param=165", s(&out)]);
    assert!(ok, "{err}");
    // 165 is 10u, which GRIB2 (message 2) says as 165 and GRIB1
    // (message 5) as 165.128: one parameter, found by either name.
    let rows: Vec<&str> = listing.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{listing}");
    assert!(rows[0].contains("\t2\t0\t"), "{listing}");
    assert!(rows[1].contains("\t5\t0\t"), "{listing}");
    // 2t the same way: 167 in GRIB2 (message 0), 167.128 in GRIB1 (3).
    let (ok, listing, _) = tgm(&["ls", "--where", "mars.param=167.128", s(&out)]);
    assert!(ok);
    let rows: Vec<&str> = listing.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{listing}");
    assert!(rows[0].contains("\t0\t0\t"), "{listing}");
    assert!(rows[1].contains("\t3\t0\t"), "{listing}");
    let (ok, listing, _) = tgm(&["ls", "--where", "mars.levtype=pl", s(&out)]);
    assert!(ok);
    assert_eq!(listing.lines().skip(1).count(), 1, "{listing}");
    let (ok, json, _) = tgm(&[
        "ls",
        "--json",
        "--where",
        "geography.gridType=reduced_gg",
        s(&out),
    ]);
    assert!(ok);
    assert_eq!(json.lines().count(), 1, "{json}");
    assert!(json.contains("6114"), "{json}");
}

/// `grib_compare` of the original and the rewritten file; true when equal.
fn grib_compare(args: &[&str], a: &Path, b: &Path) -> (bool, String) {
    let out = Command::new("grib_compare")
        .args(args)
        .arg(a)
        .arg(b)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn to_grib_round_trips_values_and_mars_keys() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let inputs = sample_set(dir.path());
    for input in &inputs {
        let t = dir.path().join(format!("{}.tgm", input.display()));
        let back = dir.path().join(format!("{}.back.grib", input.display()));
        assert!(tgm(&["convert-grib", s(input), "-o", s(&t)]).0);
        let (ok, _, err) = tgm(&["to-grib", s(&t), "-o", s(&back)]);
        assert!(ok, "{}: {err}", input.display());
        // Values (bitmaps included) and geography, exactly.
        let (same, report) = grib_compare(&["-c", "data:n", "-c", "geography:n"], input, &back);
        assert!(same, "{}: {report}", input.display());
        let (same, report) = grib_compare(&["-c", "mars:n", "-c", "edition"], input, &back);
        assert!(same, "{}: {report}", input.display());
        let (same, report) = grib_compare(&["-c", "paramId,shortName,bitsPerValue"], input, &back);
        assert!(same, "{}: {report}", input.display());
    }
}

/// ecCodes' own samples hold constant fields (`bitsPerValue` 0) on every
/// kind of grid; each comes back from `to-grib` as the sample's bytes. A
/// GRIB1 one keeps the sample's count of unused bits (0, where ecCodes
/// repacking writes 8), and the N1024 one is read back whole (ecCodes reads
/// a constant GRIB1 field's elements a pass over `pl` each).
#[test]
fn constant_sample_fields_come_back_byte_for_byte() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for sample in [
        "GRIB1",
        "GRIB2",
        "reduced_gg_pl_1024_grib1",
        "reduced_ll_sfc_grib1",
        "polar_stereographic_sfc_grib1",
        "rotated_ll_pl_grib1",
        "regular_gg_ml_grib2",
        "clusters_grib1",
    ] {
        let input = Path::new(SAMPLES).join(format!("{sample}.tmpl"));
        assert_eq!(grib_get("bitsPerValue", &input).trim(), "0", "{sample}");
        let t = dir.path().join(format!("{sample}.tgm"));
        let back = dir.path().join(format!("{sample}.grib"));
        let (ok, _, err) = tgm(&["convert-grib", s(&input), "-o", s(&t)]);
        assert!(ok, "{sample}: {err}");
        let (ok, _, err) = tgm(&["to-grib", s(&t), "-o", s(&back)]);
        assert!(ok, "{sample}: {err}");
        let (same, report) = grib_compare(&[], &input, &back);
        assert!(same, "{sample}: {report}");
        assert!(
            std::fs::read(&input).unwrap() == std::fs::read(&back).unwrap(),
            "{sample}: the written message is not the sample's bytes"
        );
    }
}

/// Converts `input`, writes it back with `to-grib`, and checks that
/// `grib_compare` finds no difference and that the messages are the
/// source's bytes; returns the archive.
fn round_trips_to_its_bytes(dir: &Path, name: &str, input: &Path) -> PathBuf {
    let t = dir.join(format!("{name}.tgm"));
    let back = dir.join(format!("{name}.back.grib"));
    let (ok, _, err) = tgm(&["convert-grib", s(input), "-o", s(&t)]);
    assert!(ok, "{name}: {err}");
    let (ok, _, err) = tgm(&["to-grib", s(&t), "-o", s(&back)]);
    assert!(ok, "{name}: {err}");
    let (same, report) = grib_compare(&[], input, &back);
    assert!(same, "{name}: {report}");
    assert!(
        std::fs::read(input).unwrap() == std::fs::read(&back).unwrap(),
        "{name}: the written messages are not the source's bytes"
    );
    t
}

/// Seasonal means (ECMWF local definition 16, as in cfgrib's
/// `single_gridpoint.grib`) whose forecast month disagrees with their
/// dates: ecCodes fails an assertion reading `marsForecastMonth`, which
/// aborted the process; the fields convert and come back as they were.
#[test]
fn fields_on_which_eccodes_fails_an_assertion_convert_and_come_back() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let month = |date: u32, verifying: u32| {
        format!(
            "set localDefinitionNumber=16; set stream=\"msmm\"; set type=\"fcmean\"; \
             set dataDate={date}; set verifyingMonth={verifying}; set forecastMonth=1; \
             set bitsPerValue=12; set values={{{}}}; write;",
            field(65160, 270.0, None)
        )
    };
    let rules = [month(20180101, 201801), month(20180201, 201802)].join("\n");
    let input = generate(dir.path(), "seasonal.grib", "GRIB1", &rules);
    round_trips_to_its_bytes(dir.path(), "seasonal", &input);
}

/// Constant fields packed with data bits (ecCodes'
/// `produceLargeConstantFields`, and a field of a single point, as in
/// cfgrib's `single_gridpoint.grib`) come back at their width, not as
/// ecCodes packs a constant field (no data bits).
#[test]
fn constant_fields_with_data_bits_come_back_at_their_width() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let constant = format!(
        "set produceLargeConstantFields=1; set bitsPerValue=24; set values={{{}}}; write;",
        vec!["274.627197265625"; 65160].join(",")
    );
    let one_point = "set produceLargeConstantFields=1; set Ni=1; set Nj=1; \
        set latitudeOfLastGridPointInDegrees=90; set longitudeOfLastGridPointInDegrees=0; \
        set bitsPerValue=24; set values={274.627197265625}; write;";
    for (sample, rules) in [
        ("GRIB1", constant.as_str()),
        ("GRIB2", constant.as_str()),
        ("GRIB1", one_point),
        ("GRIB2", one_point),
    ] {
        let name = format!("{sample}-{}", rules.len());
        let input = generate(dir.path(), &name, sample, rules);
        assert_eq!(grib_get("bitsPerValue", &input).trim(), "24", "{name}");
        round_trips_to_its_bytes(dir.path(), &name, &input);
    }
    // JPEG 2000 codes of zeros at 14 bits under a decimal scale (ecCodes'
    // own sample), which ecCodes packs again only at no bits or with
    // D = 0: the source's message is kept whole (`spec/convert.md`).
    let jpeg = Path::new(SAMPLES).join("reduced_gg_sfc_jpeg_grib2.tmpl");
    assert_eq!(grib_get("decimalScaleFactor", &jpeg).trim(), "2");
    assert_eq!(grib_get("bitsPerValue", &jpeg).trim(), "14");
    round_trips_to_its_bytes(dir.path(), "jpeg", &jpeg);
}

/// A decimal-scaled complex field with missing values coded in its data
/// and reference value 0 (as cfgrib's `ds.waveh.5.grib`, a wave model's
/// output) is stored in its own codes, at its own binary scale factor:
/// ecCodes' values exactly, and the codes compress as the source's do (a
/// finer quantum leaves low bits that are always zero, which szip codes
/// at full cost).
#[test]
fn decimal_scaled_fields_keep_their_own_codes_when_those_are_exact() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Wave heights to 0.1 m on land and sea: 0 m to 29.7 m, land missing.
    let values: Vec<String> = (0..65160)
        .map(|i| match i % 7 {
            0..=2 => "9999".to_string(),
            k => format!(
                "{:.1}",
                (((i / 7) % 298) as f64 + k as f64 - 3.0).max(0.0) / 10.0
            ),
        })
        .collect();
    let rules = format!(
        "set bitmapPresent=1; set missingValue=9999; set values={{{}}}; \
         set changeDecimalPrecision=1; write;",
        values.join(",")
    );
    let simple = generate(dir.path(), "waves.grib2", "GRIB2", &rules);
    let input = repack(dir.path(), &simple, "grid_complex");
    assert_eq!(
        grib_get("packingType,bitsPerValue", &input).trim(),
        "grid_complex 9"
    );
    assert_eq!(
        grib_get(
            "referenceValue,binaryScaleFactor,decimalScaleFactor",
            &input
        )
        .trim(),
        "0 0 1"
    );
    let t = dir.path().join("waves.tgm");
    let (ok, _, err) = tgm(&["convert-grib", s(&input), "-o", s(&t)]);
    assert!(ok, "{err}");
    let msg = &decode_all(&t)[0];
    let p = msg.objects[0].descriptor.pipeline().params();
    assert_eq!(
        p.get("sp_binary_scale_factor").and_then(Value::as_i64),
        Some(0)
    );
    assert_eq!(
        p.get("sp_decimal_scale_factor").and_then(Value::as_i64),
        Some(1)
    );
    assert_eq!(p.get("sp_reference_value"), Some(&Value::Float(0.0)));
    let want = eccodes_values(&input).swap_remove(0);
    let got = f64s(&msg.objects[0].data);
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
            "[{i}]: {g} != {w}"
        );
    }
}

/// The keys of a complex-packed message that record how its values were
/// split into groups (with the lengths that follow from it): an encoder's
/// choice, not the field's.
const GROUP_SPLITTING: &str = "totalLength,section7Length,numberOfGroupsOfDataValues,\
referenceForGroupWidths,numberOfBitsUsedForTheGroupWidths,referenceForGroupLengths,\
trueLengthOfLastGroup,numberOfBitsForScaledGroupLengths";

/// Every GRIB file of cfgrib's test data (real files from ECMWF, DWD, NCEP
/// and the UK Met Office; `.ci/cfgrib-samples.sh` fetches them into
/// `TGM_CFGRIB_SAMPLES`) converts, and `to-grib` writes it back as
/// `grib_compare` finds equal to the source, every key and value. Two files
/// differ by design: a wave field complex-packed by NCEP, its missing
/// values coded in its data, comes back with those coded so too, no
/// larger, but in groups of tgm's splitting (`spec/convert.md` "GRIB
/// write-back"), every other key and every value equal; a truncated file is
/// refused, naming the message and the byte, before any output exists.
#[test]
fn cfgribs_sample_files_come_back_as_grib_compare_finds_equal() {
    if !eccodes_available() {
        return;
    }
    let samples = std::env::var_os("TGM_CFGRIB_SAMPLES").map(PathBuf::from);
    let Some(samples) = samples.filter(|d| d.join("ds.waveh.5.grib").is_file()) else {
        eprintln!(
            "skipped: cfgrib's samples are not in TGM_CFGRIB_SAMPLES \
             (.ci/cfgrib-samples.sh fetches them from PyPI)"
        );
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&samples)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "grib"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 30,
        "{} holds {} GRIB files",
        samples.display(),
        files.len()
    );
    let dir = tempfile::tempdir().unwrap();
    for input in &files {
        let name = input.file_stem().unwrap().to_string_lossy().into_owned();
        let t = dir.path().join(format!("{name}.tgm"));
        let back = dir.path().join(format!("{name}.back.grib"));
        let (ok, _, err) = tgm(&["convert-grib", s(input), "-o", s(&t)]);
        if name == "era5-levels-corrupted" {
            assert!(
                !ok && err.contains("no 7777 end marker at byte 1584"),
                "{err}"
            );
            assert!(!t.exists(), "{name}: an output exists");
            continue;
        }
        assert!(ok, "{name}: {err}");
        let (ok, _, err) = tgm(&["to-grib", s(&t), "-o", s(&back)]);
        assert!(ok, "{name}: {err}");
        let keys: &[&str] = if name == "ds.waveh.5" {
            let size = |p: &Path| std::fs::metadata(p).unwrap().len();
            assert!(size(&back) <= size(input), "{name}: {} B", size(&back));
            &["-b", GROUP_SPLITTING]
        } else {
            &[]
        };
        let (same, report) = grib_compare(keys, input, &back);
        assert!(same, "{name}: {report}");
    }
}

#[test]
fn outputs_are_replaced_only_with_force() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let inputs = sample_set(dir.path());
    let out = dir.path().join("o.tgm");
    std::fs::write(&out, b"keep").unwrap();
    let (ok, _, err) = tgm(&["convert-grib", s(&inputs[0]), "-o", s(&out)]);
    assert!(!ok && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), b"keep");
    let (ok, _, err) = tgm(&["convert-grib", s(&inputs[0]), "-o", s(&out), "--force"]);
    assert!(ok, "{err}");
    assert_eq!(decode_all(&out).len(), 1);
    // The closing note counts the file's bytes, its catalogue included.
    let size = std::fs::metadata(&out).unwrap().len();
    assert!(
        err.contains(&format!(" {size} bytes, to {}", out.display())),
        "{size}: {err}"
    );
    let back = dir.path().join("b.grib");
    std::fs::write(&back, b"keep").unwrap();
    let (ok, _, err) = tgm(&["to-grib", s(&out), "-o", s(&back)]);
    assert!(!ok && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(&back).unwrap(), b"keep");
    assert!(tgm(&["to-grib", s(&out), "-o", s(&back), "--force"]).0);
    assert!(std::fs::read(&back).unwrap().starts_with(b"GRIB"));
    // No temporary files left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[test]
fn non_grib_input_is_an_error_not_a_panic() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.grib");
    std::fs::write(&junk, b"GRIB\x00\x00\x10not really a grib message at all").unwrap();
    let out = dir.path().join("o.tgm");
    let (ok, _, err) = tgm(&["convert-grib", s(&junk), "-o", s(&out)]);
    assert!(!ok);
    assert!(err.starts_with("error:"), "{err}");
    assert!(!out.exists());
}

/// Prints the size table of the book's weather performance page (block
/// `grib-test-set`, regenerated by `python3 docs/generated.py
/// docs/src/performance/weather.md grib-test-set`): each generated GRIB
/// file against its default conversion.
#[test]
#[ignore = "prints the book's GRIB test set size table"]
fn size_table() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    println!("| file | fields | GRIB bytes | .tgm bytes | .tgm --split bytes |");
    println!("|---|---|---|---|---|");
    for input in sample_set(dir.path()) {
        let one = dir.path().join("one.tgm");
        let split = dir.path().join("split.tgm");
        assert!(tgm(&["convert-grib", s(&input), "-o", s(&one), "--force"]).0);
        assert!(
            tgm(&[
                "convert-grib",
                s(&input),
                "-o",
                s(&split),
                "--split",
                "--force"
            ])
            .0
        );
        let size = |p: &Path| std::fs::metadata(p).unwrap().len();
        println!(
            "| {} | {} | {} | {} | {} |",
            input.file_name().unwrap().to_string_lossy(),
            decode_all(&split).len(),
            size(&input),
            size(&one),
            size(&split)
        );
    }
}

/// The README's weather commands, as written, on a GRIB1 file of
/// temperature (130.128) and 2 m temperature fields: every command
/// succeeds and `--where mars.param=130` finds the temperature field.
#[test]
fn the_readme_weather_example_runs() {
    if !eccodes_available() {
        return;
    }
    let ex = doc_examples::tgm_lines(include_str!("../../README.md"), "## A weather archive");
    assert!(ex.len() >= 4, "found only {ex:?}");
    let dir = tempfile::tempdir().unwrap();
    let rules = [130, 167]
        .map(|p| {
            format!(
                "set paramId={p}; set bitsPerValue=16; set values={{{}}}; write;",
                field(496, 273.0, None)
            )
        })
        .join("\n");
    let grib = generate(dir.path(), "an.grib", "regular_ll_sfc_grib1", &rules);
    assert_eq!(grib, dir.path().join("an.grib"));
    for line in &ex {
        let o = doc_examples::sh(line, dir.path(), Path::new(env!("CARGO_BIN_EXE_tgm")));
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert!(o.status.success(), "{line}\n{err}");
        if line.contains("mars.param=130") {
            let rows: Vec<&str> = out.lines().skip(1).collect();
            assert_eq!(rows.len(), 1, "{line}\n{out}{err}");
            assert!(rows[0].contains("130.128"), "{line}\n{out}");
        }
    }
    assert!(dir.path().join("back.grib").exists());
}

#[test]
fn gaussian_grids_and_ensemble_members_round_trip() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("rgg1.grib", "regular_gg_sfc_grib1", 8192, ""),
        ("rgg2.grib", "regular_gg_sfc_grib2", 8192, ""),
        ("red1.grib", "reduced_gg_pl_32_grib1", 6114, ""),
        (
            "ens2.grib",
            "reduced_gg_pl_32_grib2",
            6114,
            "set productDefinitionTemplateNumber=1; set type=\"pf\"; set stream=\"enfo\"; set number=7;",
        ),
    ];
    for (name, sample, n, extra) in cases {
        let input = generate(
            dir.path(),
            name,
            sample,
            &format!(
                "{extra} set bitsPerValue=11; set values={{{}}}; write;",
                field(n, 280.0, None)
            ),
        );
        let t = dir.path().join(format!("{name}.tgm"));
        let back = dir.path().join(format!("{name}.back.grib"));
        assert!(tgm(&["convert-grib", s(&input), "-o", s(&t)]).0);
        let (ok, _, err) = tgm(&["to-grib", s(&t), "-o", s(&back)]);
        assert!(ok, "{name}: {err}");
        let (same, report) = grib_compare(&["-c", "data:n", "-c", "geography:n"], &input, &back);
        assert!(same, "{name}: {report}");
        let (same, report) = grib_compare(&["-c", "mars:n", "-b", "param"], &input, &back);
        assert!(same, "{name}: {report}");
    }
    let ens = decode_all(&dir.path().join("ens2.grib.tgm"));
    let base = Value::from(ens[0].metadata.base[0].clone());
    assert_eq!(get(get(&base, "mars"), "number").as_i64(), Some(7));
}

/// `input` repacked by ecCodes with `packingType`.
fn repack(dir: &Path, input: &Path, packing: &str) -> PathBuf {
    let keys = format!("packingType={packing}");
    grib_set(dir, &format!("{packing}.grib"), &["-r", "-s", &keys], input)
}

#[test]
fn ccsds_and_complex_fields_are_stored_bit_identical() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ll2 = &sample_set(dir.path())[0];
    for packing in [
        "grid_ccsds",
        "grid_complex",
        "grid_second_order",
        "grid_jpeg",
    ] {
        if !eccodes_writes(dir.path(), ll2, packing) {
            continue;
        }
        let input = repack(dir.path(), ll2, packing);
        let packed = grib_get("packingType", &input);
        assert!(packed.lines().all(|l| l.trim() == packing), "{packed}");
        let t = dir.path().join(format!("{packing}.tgm"));
        let (ok, _, err) = tgm(&["convert-grib", s(&input), "-o", s(&t), "--split"]);
        assert!(ok, "{packing}: {err}");
        let want = eccodes_values(&input);
        for (m, msg) in decode_all(&t).iter().enumerate() {
            // In the source's integer codes, not as float64.
            if packing != "grid_jpeg" {
                let d = &msg.objects[0].descriptor;
                assert_eq!(d.encoding(), "simple_packing", "{packing} #{m}");
            }
            let got = f64s(&msg.objects[0].data);
            // Stored bit-identical whatever the packing.
            assert_eq!(got.len(), want[m].len(), "{packing} #{m}");
            for (i, (g, w)) in got.iter().zip(&want[m]).enumerate() {
                if w.is_nan() {
                    assert!(g.is_nan(), "{packing} #{m} [{i}]");
                } else {
                    assert_eq!(g.to_bits(), w.to_bits(), "{packing} #{m} [{i}]: {g} != {w}");
                }
            }
        }
        let back = dir.path().join(format!("{packing}.back.grib"));
        let (ok, _, err) = tgm(&["to-grib", s(&t), "-o", s(&back)]);
        assert!(ok, "{packing}: {err}");
        let (same, report) = grib_compare(&["-c", "data:n"], &input, &back);
        assert!(same, "{packing}: {report}");
        // Written back in the same packing, within its packing error.
        assert_eq!(grib_get("packingType", &back), packed, "{packing}");
        let (same, report) = grib_compare(&["-P", "-c", "values"], &input, &back);
        assert!(same, "{packing}: {report}");
        // Another packing only when asked for.
        let simple = dir.path().join(format!("{packing}.simple.grib"));
        let (ok, _, err) = tgm(&[
            "to-grib",
            s(&t),
            "-o",
            s(&simple),
            "--packing",
            "grid_simple",
        ]);
        assert!(ok, "{packing}: {err}");
        let simple_packed = grib_get("packingType", &simple);
        assert!(
            simple_packed.lines().all(|l| l.trim() == "grid_simple"),
            "{packing}: {simple_packed}"
        );
    }
}

/// A temperature-like field of `n` points (a large-scale wave, a short
/// one and a 0.01 K ripple), as a `grib_filter` list.
fn real_looking(n: usize) -> String {
    (0..n)
        .map(|i| {
            let x = i as f64;
            let v =
                280.0 + 15.0 * (x * 0.021).sin() + 4.0 * (x * 0.37).cos() + (i % 13) as f64 * 0.01;
            format!("{v:.4}")
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn complex_and_second_order_fields_are_written_back_at_their_source_scales() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Binary scaling at 10, 12 and 16 bits; decimal scaling (D = 2).
    let sources = [
        ("ll10", "regular_ll_sfc_grib2", 496, "set bitsPerValue=10;"),
        ("ll16", "regular_ll_sfc_grib2", 496, "set bitsPerValue=16;"),
        (
            "gg12",
            "reduced_gg_pl_32_grib2",
            6114,
            "set bitsPerValue=12;",
        ),
        (
            "ggd2",
            "reduced_gg_pl_32_grib2",
            6114,
            "set bitsPerValue=24;",
        ),
    ];
    for (name, sample, n, keys) in sources {
        let rules = format!("{keys} set values={{{}}}; write;", real_looking(n));
        let mut simple = generate(dir.path(), &format!("{name}.grib"), sample, &rules);
        if name == "ggd2" {
            let args = ["-s", "changeDecimalPrecision=2"];
            simple = grib_set(dir.path(), "ggd2.d.grib", &args, &simple);
        }
        for packing in [
            "grid_complex",
            "grid_complex_spatial_differencing",
            "grid_second_order",
        ] {
            let keys = format!("packingType={packing}");
            let input = grib_set(
                dir.path(),
                &format!("{name}.{packing}.grib"),
                &["-r", "-s", &keys],
                &simple,
            );
            let t = dir.path().join(format!("{name}.{packing}.tgm"));
            let back = dir.path().join(format!("{name}.{packing}.back.grib"));
            assert!(tgm(&["convert-grib", s(&input), "-o", s(&t)]).0);
            let (ok, _, err) = tgm(&["to-grib", s(&t), "-o", s(&back)]);
            assert!(ok, "{name} {packing}: {err}");
            // The source's scales and packing, and its values exactly.
            let scales = "packingType,binaryScaleFactor,decimalScaleFactor,referenceValue";
            assert_eq!(
                grib_get(scales, &back),
                grib_get(scales, &input),
                "{name} {packing}"
            );
            let (same, report) = grib_compare(&["-c", "values"], &input, &back);
            assert!(same, "{name} {packing}: {report}");
        }
    }
}

#[test]
fn simple_and_ccsds_fields_with_both_scales_are_written_back_at_their_source_precision() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (edition, sample) in [(2, "regular_ll_sfc_grib2"), (1, "regular_ll_sfc_grib1")] {
        let rules = format!(
            "set bitsPerValue=16; set values={{{}}}; write;",
            real_looking(496)
        );
        let plain = generate(dir.path(), &format!("both{edition}.grib"), sample, &rules);
        // D set over the header without repacking: the field is coded with
        // D = 1 and the binary scale ecCodes picked at 16 bits.
        let d = ["-s", "decimalScaleFactor=1"];
        let simple = grib_set(dir.path(), &format!("both{edition}.d.grib"), &d, &plain);
        let mut inputs = vec![("grid_simple", simple)];
        if edition == 2 {
            let ccsds = repack(dir.path(), &plain, "grid_ccsds");
            let name = "both2.ccsds.d.grib";
            inputs.push(("grid_ccsds", grib_set(dir.path(), name, &d, &ccsds)));
        }
        for (packing, input) in inputs {
            let scales = "binaryScaleFactor,decimalScaleFactor";
            let (e, dd) = {
                let got = grib_get(scales, &input);
                let mut it = got.split_whitespace().map(|v| v.parse::<i32>().unwrap());
                (it.next().unwrap(), it.next().unwrap())
            };
            assert!(e != 0 && dd == 1, "{packing} GRIB{edition}: E {e}, D {dd}");
            let t = dir.path().join(format!("{packing}{edition}.tgm"));
            let back = dir.path().join(format!("{packing}{edition}.back.grib"));
            assert!(tgm(&["convert-grib", s(&input), "-o", s(&t)]).0);
            let (ok, _, err) = tgm(&["to-grib", s(&t), "-o", s(&back)]);
            assert!(ok, "{packing} GRIB{edition}: {err}");
            let (want, got) = (&eccodes_values(&input)[0], &eccodes_values(&back)[0]);
            let half_quantum = 2f64.powi(e) * 10f64.powi(-dd) / 2.0;
            let worst = want
                .iter()
                .zip(got)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(
                worst <= half_quantum,
                "{packing} GRIB{edition}: {worst} > {half_quantum}"
            );
            if packing == "grid_simple" {
                // The source's header keys (R to 17 digits) and its values,
                // exactly.
                let keys = "bitsPerValue,binaryScaleFactor,decimalScaleFactor,referenceValue";
                let exact = |p: &Path| grib_get_formatted(keys, "%.17g", p);
                assert_eq!(exact(&back), exact(&input), "GRIB{edition}");
                let differ = want
                    .iter()
                    .zip(got)
                    .filter(|(a, b)| a.to_bits() != b.to_bits());
                assert_eq!(differ.count(), 0, "GRIB{edition}: values differ");
                assert_eq!(want.len(), got.len(), "GRIB{edition}");
                let (same, report) = grib_compare(&["-c", "values"], &input, &back);
                assert!(same, "GRIB{edition}: {report}");
            }
        }
    }
}

/// A real-looking field on ecCodes' sample `sample` at `bits` bits
/// (`NAME.grib`), and the same repacked as `packing` by `grib_set -r`
/// (`NAME.PACKING.grib`).
fn repacked(dir: &Path, name: &str, sample: &str, bits: u32, packing: &str) -> (PathBuf, PathBuf) {
    let rules = format!(
        "set bitsPerValue={bits}; set values={{{}}}; write;",
        real_looking(6114)
    );
    let simple = generate(dir, &format!("{name}.grib"), sample, &rules);
    let keys = [
        "-r".to_string(),
        "-s".to_string(),
        format!("packingType={packing}"),
    ];
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let again = grib_set(dir, &format!("{name}.{packing}.grib"), &keys, &simple);
    (simple, again)
}

#[test]
fn a_complex_field_eccodes_cannot_pack_is_coded_by_tgm() {
    if !eccodes_available() {
        return;
    }
    // ecCodes 2.28's complex packer loses 24-bit codes (group widths above
    // its 4-bit width field): the message it writes reads back other values,
    // so tgm codes the groups itself.
    let dir = tempfile::tempdir().unwrap();
    let (simple, input) = repacked(
        dir.path(),
        "gg24",
        "reduced_gg_pl_32_grib2",
        24,
        "grid_complex",
    );
    let (exact, _) = grib_compare(&["-c", "values"], &simple, &input);
    if exact {
        eprintln!("SKIPPED: this ecCodes packs 24-bit complex fields exactly");
        return;
    }
    let t = dir.path().join("gg24.tgm");
    let back = dir.path().join("gg24.back.grib");
    assert!(tgm(&["convert-grib", s(&input), "-o", s(&t)]).0);
    let (ok, _, err) = tgm(&["to-grib", s(&t), "-o", s(&back)]);
    assert!(ok, "{err}");
    let keys = "packingType,bitsPerValue,binaryScaleFactor,decimalScaleFactor,referenceValue";
    assert_eq!(grib_get(keys, &back), grib_get(keys, &input));
    let (same, report) = grib_compare(&["-c", "values"], &input, &back);
    assert!(same, "{report}");
    let simple_back = dir.path().join("gg24.simple.grib");
    let args = [
        "to-grib",
        s(&t),
        "-o",
        s(&simple_back),
        "--packing",
        "grid_simple",
    ];
    let (ok, _, err) = tgm(&args);
    assert!(ok, "{err}");
    let (same, report) = grib_compare(&["-c", "values"], &input, &simple_back);
    assert!(same, "{report}");
}

/// Whether this ecCodes writes `packing` (JPEG needs OpenJPEG or JasPer
/// built in); prints why a case is skipped.
fn eccodes_writes(dir: &Path, input: &Path, packing: &str) -> bool {
    let out = Command::new("grib_set")
        .args(["-r", "-s", &format!("packingType={packing}")])
        .arg(input)
        .arg(dir.join("probe.grib"))
        .output()
        .unwrap();
    if !out.status.success() {
        common::skip::skip(&format!(
            "{packing}: this ecCodes cannot write it: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    out.status.success()
}

/// The szip parameters and payload size of the first object of `path`.
fn szip_params_and_payload(path: &Path) -> (Value, usize) {
    let f = TgmFile::open(path).unwrap();
    let bytes = f.message_bytes(0).unwrap();
    let m = tgm::Message::parse(&bytes).unwrap();
    let o = m.object(0).unwrap();
    let d = Value::from(o.descriptor().pipeline().params().clone());
    (d, o.payload_region().len())
}

#[test]
fn ccsds_sources_keep_their_block_size_rsi_and_flags() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let gg2 = &sample_set(dir.path())[2];
    for (block, rsi) in [(16u64, 64u64), (32, 128), (64, 32)] {
        let keys = format!("packingType=grid_ccsds,ccsdsBlockSize={block},ccsdsRsi={rsi}");
        let name = format!("ccsds-{block}-{rsi}.grib");
        let input = grib_set(dir.path(), &name, &["-r", "-s", &keys], gg2);
        let t = dir.path().join(format!("{name}.tgm"));
        let (ok, _, err) = tgm(&["convert-grib", s(&input), "-o", s(&t)]);
        assert!(ok, "{name}: {err}");
        let (p, payload) = szip_params_and_payload(&t);
        assert_eq!(get(&p, "szip_block_size").as_u64(), Some(block), "{name}");
        assert_eq!(get(&p, "szip_rsi").as_u64(), Some(rsi), "{name}");
        // ecCodes' ccsdsFlags 14 (preprocess, MSB, 3-byte): the container
        // flags are the stage's own, so preprocessing is what is stored.
        let flags = grib_get("ccsdsFlags", &input);
        assert_eq!(flags.trim(), "14", "{name}");
        assert_eq!(
            get(&p, "szip_flags").as_u64(),
            Some(u64::from(tgm::szip::flags::PREPROCESS)),
            "{name}"
        );
        // The coded field is as large as the GRIB's data section but for
        // the wider reference sample starting each RSI: 16-bit containers
        // for 14-bit codes, 2 bits more per RSI (spec/convert.md).
        let section7: u64 = grib_get("section7Length", &input).trim().parse().unwrap();
        let rsis = 6114u64.div_ceil(block * rsi);
        let allowed_bits = (section7 - 5) * 8 + rsis * (16 - 14);
        assert!(
            payload as u64 <= allowed_bits.div_ceil(8),
            "{name}: {payload} payload bytes against {} in section 7",
            section7 - 5
        );
    }
}

/// The MARS keys `to-grib` writes (README "Weather data"), each checked
/// with `grib_get` on the original and the rewritten field.
const MARS_KEY_LIST: &[&str] = &[
    "class", "type", "stream", "expver", "param", "levtype", "levelist", "date", "time", "step",
    "number", "domain",
];

#[test]
fn mars_keys_round_trip_for_forecasts_levels_and_grib1_ensembles() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let local = "set setLocalDefinition=1; set localDefinitionNumber=1;";
    let cases = [
        (
            "fc500.grib",
            "regular_ll_pl_grib2",
            format!(
                "{local} set class=\"od\"; set type=\"fc\"; set stream=\"oper\"; set expver=\"0001\"; \
                 set typeOfLevel=\"isobaricInhPa\"; set level=500; set paramId=130; \
                 set dataDate=20240101; set dataTime=1200; set step=24; write;"
            ),
        ),
        (
            "tp.grib",
            "regular_ll_sfc_grib2",
            format!(
                "{local} set class=\"od\"; set type=\"fc\"; set stream=\"oper\"; \
                 set productDefinitionTemplateNumber=8; set paramId=228; \
                 set stepType=\"accum\"; set startStep=0; set endStep=6; write;"
            ),
        ),
        (
            "ens1.grib",
            "GRIB1",
            "set stream=\"enfo\"; set type=\"pf\"; set number=3; set step=12; set level=850; \
             set paramId=130; write;"
                .to_string(),
        ),
    ];
    for (name, sample, rules) in cases {
        let input = generate(dir.path(), name, sample, &rules);
        let t = dir.path().join(format!("{name}.tgm"));
        let back = dir.path().join(format!("{name}.back.grib"));
        let (ok, _, err) = tgm(&["convert-grib", s(&input), "-o", s(&t)]);
        assert!(ok, "{name}: {err}");
        let (ok, _, err) = tgm(&["to-grib", s(&t), "-o", s(&back)]);
        assert!(ok, "{name}: {err}");
        // GRIB1 stays GRIB1: param keeps its table (130.128).
        let (same, report) = grib_compare(&["-c", "mars:n"], &input, &back);
        assert!(same, "{name}: {report}");
        let (same, report) = grib_compare(&["-c", "data:n", "-c", "geography:n"], &input, &back);
        assert!(same, "{name}: {report}");
        for key in MARS_KEY_LIST {
            let get = |p: &Path| {
                let o = Command::new("grib_get")
                    .args(["-f", "-p", key])
                    .arg(p)
                    .output()
                    .unwrap();
                String::from_utf8_lossy(&o.stdout).trim().to_string()
            };
            assert_eq!(get(&input), get(&back), "{name}: MARS key {key}");
        }
    }
}

/// Runs `tgm ARGS` with `input` on stdin: (exit code, stdout, stderr).
fn tgm_stdin(dir: &Path, args: &[&str], input: &[u8]) -> (i32, Vec<u8>, String) {
    let (r, out) = common::tgm_stdin(dir, args, input);
    (r.code, out, r.err)
}

#[test]
fn dash_level_and_refused_inputs() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let inputs = sample_set(dir.path());
    let via_file = dir.path().join("f.tgm");
    assert!(tgm(&["convert-grib", s(&inputs[0]), "-o", s(&via_file)]).0);
    // GRIB on stdin to .tgm on stdout: the same message as through files.
    let grib = std::fs::read(&inputs[0]).unwrap();
    let (code, tgm_bytes, err) = tgm_stdin(dir.path(), &["convert-grib", "-", "-o", "-"], &grib);
    assert_eq!(code, 0, "{err}");
    let piped = tgm::decode(&tgm_bytes, &DecodeOptions::default()).unwrap();
    let filed = &decode_all(&via_file)[0];
    assert_eq!(piped.metadata.base, filed.metadata.base);
    assert_eq!(piped.objects.len(), filed.objects.len());
    for (p, f) in piped.objects.iter().zip(&filed.objects) {
        assert_eq!(p.data, f.data);
    }
    let (code, back, err) = tgm_stdin(dir.path(), &["to-grib", "-", "-o", "-"], &tgm_bytes);
    assert_eq!(code, 0, "{err}");
    assert!(back.starts_with(b"GRIB"), "{err}");
    let (code, _, err) = tgm_stdin(
        dir.path(),
        &["convert-grib", "-", "-o", "x.tgm"],
        b"GRIB junk",
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("<stdin>") && !err.contains("tgm-stdin"),
        "{err}"
    );
    // One level flag, checked against the codec.
    let out = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let level = |extra: &[&str], o: &str| {
        let mut args = vec!["convert-grib", s(&inputs[0]), "-o"];
        let o = out(o);
        args.push(&o);
        args.extend_from_slice(extra);
        let r = Command::new(env!("CARGO_BIN_EXE_tgm"))
            .args(&args)
            .output()
            .unwrap();
        r.status.code().unwrap_or(-1)
    };
    assert_eq!(
        level(&["--compression", "zstd", "--level", "9"], "l9.tgm"),
        0
    );
    assert_eq!(
        level(
            &["--compression", "zstd", "--compression-level", "9"],
            "c9.tgm"
        ),
        0
    );
    assert_eq!(
        level(
            &["--compression", "zstd", "--compression-level", "30"],
            "c30.tgm"
        ),
        2
    );
    assert_eq!(
        level(&["--compression", "lz4", "--level", "3"], "lz.tgm"),
        2
    );
    // --bits belongs to simple_packing, as in import (spec/pipeline.md §10).
    assert_eq!(level(&["--bits", "12"], "b12.tgm"), 2);
    assert_eq!(
        level(&["--encoding", "simple_packing", "--bits", "65"], "b65.tgm"),
        2
    );
    assert!(!dir.path().join("c30.tgm").exists());
    // Nothing to convert: an error, and no output at all.
    let junk = dir.path().join("notatgm.txt");
    std::fs::write(&junk, b"plain text, not an archive").unwrap();
    let back = dir.path().join("n.grib");
    let (ok, _, err) = tgm(&["to-grib", s(&junk), "-o", s(&back)]);
    assert!(!ok && err.contains("notatgm.txt"), "{err}");
    assert!(!back.exists());
    let (ok, _, err) = tgm(&["convert-grib", s(dir.path()), "-o", s(&back)]);
    assert!(!ok && err.contains("is a directory"), "{err}");
}

/// ecCodes' values of the first message of `path` (no bitmap), printed by
/// `grib_filter` with 17 significant digits: works for every grid,
/// spectral ones included.
fn eccodes_coded_values(dir: &Path, path: &Path) -> Vec<f64> {
    eccodes_array(dir, path, "values")
}

/// One header-fidelity case: an ecCodes sample, the grid keys set on it
/// (empty to keep the sample's grid), the other keys set, the number of
/// values written (0 keeps the sample's), and whether its packing is
/// rewritten bit-identically (simple, CCSDS) or within the packing error.
struct Case {
    sample: &'static str,
    grid: &'static str,
    keys: &'static str,
    points: usize,
    exact: bool,
}

const N80: &str = "set N=80; set Ni=320; set Nj=160; \
    set latitudeOfFirstGridPointInDegrees=89.142; set latitudeOfLastGridPointInDegrees=-89.142; \
    set iDirectionIncrementInDegrees=1.125; set longitudeOfLastGridPointInDegrees=358.875;";
const PRODUCT: &str = "set generatingProcessIdentifier=153; set subCentre=98;";

fn fidelity_cases() -> Vec<Case> {
    let c = |sample, keys, points, exact| Case {
        sample,
        grid: "",
        keys,
        points,
        exact,
    };
    // Grids ecCodes' samples do not hold, made by changing the grid
    // template of a regular sample; simple packing.
    let g = |sample, grid, points| Case {
        sample,
        grid,
        keys: PRODUCT,
        points,
        exact: true,
    };
    vec![
        c("regular_gg_sfc_grib2", N80, 51200, true),
        c("regular_gg_ml_grib1", PRODUCT, 8192, true),
        c("reduced_gg_ml_grib2", PRODUCT, 6114, true),
        c("reduced_gg_ml_grib1", PRODUCT, 6114, true),
        c("reduced_rotated_gg_ml_grib2", PRODUCT, 0, true),
        c("regular_ll_sfc_grib1", PRODUCT, 496, true),
        c("rotated_ll_sfc_grib2", PRODUCT, 496, true),
        c("rotated_ll_pl_grib1", PRODUCT, 496, true),
        c("polar_stereographic_pl_grib2", PRODUCT, 0, true),
        c("polar_stereographic_sfc_grib1", PRODUCT, 0, true),
        c("ccsds_grib2", PRODUCT, 496, true),
        c("reduced_gg_sfc_jpeg_grib2", PRODUCT, 6114, false),
        c("lambert_bf_grib2", PRODUCT, 0, false),
        c("sh_ml_grib2", PRODUCT, 0, true),
        c("sh_ml_grib1", PRODUCT, 0, true),
        g(
            "regular_ll_sfc_grib2",
            "set gridDefinitionTemplateNumber=10; set LaDInDegrees=20;",
            496,
        ),
        g("regular_ll_sfc_grib1", "set dataRepresentationType=1;", 496),
        g(
            "regular_ll_sfc_grib2",
            "set gridDefinitionTemplateNumber=30; set Latin1InDegrees=30; \
             set Latin2InDegrees=60; set LaDInDegrees=45;",
            496,
        ),
        g(
            "regular_ll_sfc_grib2",
            "set gridDefinitionTemplateNumber=2; set stretchingFactor=2;",
            496,
        ),
        g(
            "regular_ll_sfc_grib2",
            "set gridDefinitionTemplateNumber=3;",
            496,
        ),
        g(
            "regular_ll_sfc_grib1",
            "set dataRepresentationType=20;",
            496,
        ),
        g(
            "regular_ll_sfc_grib1",
            "set dataRepresentationType=30;",
            496,
        ),
        g(
            "regular_gg_sfc_grib2",
            "set gridDefinitionTemplateNumber=42;",
            8192,
        ),
        g(
            "regular_gg_sfc_grib2",
            "set gridDefinitionTemplateNumber=43;",
            8192,
        ),
        g(
            "regular_gg_sfc_grib1",
            "set dataRepresentationType=24;",
            8192,
        ),
        g(
            "regular_gg_sfc_grib1",
            "set dataRepresentationType=34;",
            8192,
        ),
    ]
}

/// A file-name tag telling apart cases on the same sample: the grid
/// template `grid` sets, if any.
fn fidelity_tag(grid: &str) -> String {
    grid.split(';')
        .find_map(|k| {
            let k = k.trim();
            k.strip_prefix("set gridDefinitionTemplateNumber=")
                .or_else(|| k.strip_prefix("set dataRepresentationType="))
        })
        .map_or_else(|| "sample".into(), |t| format!("grid{t}"))
}

/// The keys that identify a product, compared on top of the namespaces.
fn product_keys(grib1: bool) -> &'static str {
    if grib1 {
        "edition,centre,subCentre,generatingProcessIdentifier,table2Version,NV,packingType"
    } else {
        "edition,centre,subCentre,generatingProcessIdentifier,tablesVersion,\
         localTablesVersion,NV,packingType,productDefinitionTemplateNumber"
    }
}

#[test]
fn every_grid_keeps_its_header_values_and_edition_through_to_grib() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for case in fidelity_cases() {
        let name = format!("{}-{}.grib", case.sample, fidelity_tag(case.grid));
        let values = if case.points > 0 {
            format!(
                "set bitsPerValue=14; set values={{{}}};",
                field(case.points, 250.0, None)
            )
        } else {
            String::new()
        };
        let input = generate(
            dir.path(),
            &name,
            case.sample,
            &format!("{} {} {values} write;", case.grid, case.keys),
        );
        let t = dir.path().join(format!("{name}.tgm"));
        let back = dir.path().join(format!("{name}.back.grib"));
        let (ok, _, err) = tgm(&["convert-grib", s(&input), "-o", s(&t)]);
        assert!(ok, "{name}: {err}");
        // Stored bit-identical to ecCodes' values, whatever the packing.
        let want = eccodes_coded_values(dir.path(), &input);
        let got = f64s(&decode_all(&t)[0].objects[0].data);
        assert_eq!(got.len(), want.len(), "{name}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.to_bits(), w.to_bits(), "{name} [{i}]: {g} != {w}");
        }
        let (ok, _, err) = tgm(&["to-grib", s(&t), "-o", s(&back)]);
        assert!(ok, "{name}: {err}");
        let namespaces = [
            "-c",
            "geography:n",
            "-c",
            "vertical:n",
            "-c",
            "mars:n",
            "-c",
            "parameter:n",
            "-c",
            "time:n",
        ];
        let (same, report) = grib_compare(&namespaces, &input, &back);
        assert!(same, "{name}: {report}");
        let grib1 = case.sample.ends_with("grib1");
        let (same, report) = grib_compare(&["-c", product_keys(grib1)], &input, &back);
        assert!(same, "{name}: {report}");
        // Simple and CCSDS packings come back bit-identical, the others
        // within their packing error.
        let data: &[&str] = if case.exact {
            &["-c", "values"]
        } else {
            &["-P", "-c", "values"]
        };
        let (same, report) = grib_compare(data, &input, &back);
        assert!(same, "{name}: {report}");
        // ecCodes reads every value of the written file.
        assert_eq!(
            eccodes_coded_values(dir.path(), &back).len(),
            want.len(),
            "{name}"
        );
        if !case.sample.starts_with("sh") && !case.sample.starts_with("lambert_bf") {
            let out = Command::new("grib_get_data").arg(&back).output().unwrap();
            assert!(out.status.success(), "grib_get_data {name}");
        }
    }
}

/// `grib_get -p keys` of every message of `path`, one line per message.
fn grib_get(keys: &str, path: &Path) -> String {
    grib_get_args(&["-p", keys], path)
}

/// `grib_get -p keys -F format path`: floating-point keys in `format`.
fn grib_get_formatted(keys: &str, format: &str, path: &Path) -> String {
    grib_get_args(&["-p", keys, "-F", format], path)
}

/// `grib_get args path`'s output, trimmed; it must succeed.
fn grib_get_args(args: &[&str], path: &Path) -> String {
    let out = Command::new("grib_get")
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn edited_mars_keys_win_over_the_stored_header() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (sample, param) in [
        ("regular_ll_pl_grib2", "131"),
        ("regular_ll_pl_grib1", "131.128"),
    ] {
        let input = generate(
            dir.path(),
            &format!("{sample}.grib"),
            sample,
            &format!("set values={{{}}}; write;", field(496, 280.0, None)),
        );
        let t = dir.path().join(format!("{sample}.tgm"));
        let edited = dir.path().join(format!("{sample}.edited.tgm"));
        let back = dir.path().join(format!("{sample}.back.grib"));
        assert!(tgm(&["convert-grib", s(&input), "-o", s(&t)]).0);
        let edits = "mars.levelist=850,mars.param=131,mars.date=20200102,mars.time=600,mars.step=6";
        let (ok, _, err) = tgm(&["set", "-s", edits, s(&t), s(&edited)]);
        assert!(ok, "{err}");
        let (ok, _, err) = tgm(&["to-grib", s(&edited), "-o", s(&back)]);
        assert!(ok, "{sample}: {err}");
        assert_eq!(
            grib_get(
                "mars.levtype,mars.levelist,mars.param,mars.date,mars.time,mars.step",
                &back
            ),
            format!("pl 850 {param} 20200102 600 6"),
            "{sample}"
        );
        // A value ecCodes cannot write is refused by name, before any output.
        let bad = dir.path().join(format!("{sample}.bad.tgm"));
        let none = dir.path().join(format!("{sample}.bad.grib"));
        assert!(tgm(&["set", "-s", "mars.levtype=bogus", s(&t), s(&bad)]).0);
        let (ok, _, err) = tgm(&["to-grib", s(&bad), "-o", s(&none)]);
        assert!(!ok && err.contains("mars.levtype"), "{sample}: {err}");
        assert!(!none.exists(), "{sample}: output written");
    }
}

/// `grib_set ARGS` of `input` into `dir/name`.
fn grib_set(dir: &Path, name: &str, args: &[&str], input: &Path) -> PathBuf {
    let out = dir.join(name);
    let st = Command::new("grib_set")
        .args(args)
        .arg(input)
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    out
}

/// `input` with its GRIB1 section 4 length (3 bytes at `offsetSection4`)
/// set to zero.
fn zero_grib1_section4(dir: &Path, input: &Path) -> PathBuf {
    let offset: usize = grib_get("offsetSection4", input).parse().unwrap();
    let mut bytes = std::fs::read(input).unwrap();
    bytes[offset..offset + 3].fill(0);
    let out = dir.join("zero_section4.grib");
    std::fs::write(&out, bytes).unwrap();
    out
}

#[test]
fn hostile_headers_are_refused_before_decoding() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sfc2 = Path::new(SAMPLES).join("regular_ll_sfc_grib2.tmpl");
    // A constant field announcing 65000² points in 179 bytes.
    let wide = grib_set(d, "wide.grib", &["-s", "Ni=65000,Nj=65000"], &sfc2);
    let huge = grib_set(
        d,
        "huge.grib",
        &[
            "-s",
            "numberOfDataPoints=4225000000,numberOfValues=4225000000",
        ],
        &wide,
    );
    assert!(std::fs::metadata(&huge).unwrap().len() < 200);
    let ll2 = generate(
        d,
        "ll2.grib",
        "regular_ll_sfc_grib2",
        &format!(
            "set bitsPerValue=16; set values={{{}}}; write;",
            field(496, 280.0, None)
        ),
    );
    let ll1 = generate(
        d,
        "ll1.grib",
        "regular_ll_sfc_grib1",
        &format!(
            "set bitsPerValue=16; set values={{{}}}; write;",
            field(496, 280.0, None)
        ),
    );
    let cases = [
        (huge, "decoded-bytes budget"),
        (
            grib_set(d, "nv0.grib", &["-s", "numberOfValues=0"], &ll2),
            "496",
        ),
        (
            grib_set(d, "nv1.grib", &["-s", "numberOfValues=1"], &ll2),
            "496",
        ),
        (zero_grib1_section4(d, &ll1), "section 4 is 0 bytes"),
    ];
    for (input, why) in cases {
        let out = d.join("out.tgm");
        let (ok, _, err) = tgm(&["convert-grib", s(&input), "-o", s(&out)]);
        assert!(!ok, "{}: converted", input.display());
        assert!(
            err.contains(s(&input)) && err.contains(why),
            "{}: {err}",
            input.display()
        );
        assert!(!out.exists(), "{}: output written", input.display());
    }
    // Within an explicit budget the same honest field converts.
    let out = d.join("ok.tgm");
    let (ok, _, err) = tgm(&[
        "convert-grib",
        s(&ll2),
        "-o",
        s(&out),
        "--max-decoded-bytes",
        "3968",
    ]);
    assert!(ok, "{err}");
    let (ok, _, err) = tgm(&[
        "convert-grib",
        s(&ll2),
        "-o",
        s(&d.join("no.tgm")),
        "--max-decoded-bytes",
        "3967",
    ]);
    assert!(!ok && err.contains("budget of 3967 bytes"), "{err}");
}

#[test]
fn lossy_encoding_reports_its_largest_error() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (input, t, err) = packed_sample(dir.path(), "lossy.tgm", "6", &[]);
    let reported: f64 = err
        .split("largest absolute error ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no error reported: {err}"));
    let want = eccodes_values(&input);
    let worst = decode_all(&t)[0]
        .objects
        .iter()
        .zip(&want)
        .flat_map(|(o, w)| {
            f64s(&o.data)
                .into_iter()
                .zip(w.clone())
                .filter(|(_, w)| !w.is_nan())
                .map(|(g, w)| (g - w).abs())
        })
        .fold(0.0f64, f64::max);
    assert!(worst > 0.0);
    assert_eq!(reported, worst);
}

/// ecCodes' (latitude, longitude, value) of every point of `path`'s first
/// message.
fn eccodes_points(path: &Path) -> Vec<(f64, f64, f64)> {
    let out = Command::new("grib_get_data")
        .args(["-w", "count=1", "-F", "%.17g"])
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let c: Vec<f64> = l
                .split_whitespace()
                .map(|x| x.parse().ok())
                .collect::<Option<_>>()?;
            (c.len() == 3).then(|| (c[0], c[1], c[2]))
        })
        .collect()
}

#[test]
fn plots_are_north_up_whatever_the_scanning_and_gaussian_rows_on_their_latitudes() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Value = stored point number, so every row differs.
    let count = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let north = generate(
        dir.path(),
        "north.grib",
        "regular_ll_sfc_grib2",
        &format!("set values={{{}}}; write;", count(496)),
    );
    let south = generate(
        dir.path(),
        "south.grib",
        "regular_ll_sfc_grib2",
        &format!(
            "set jScansPositively=1; set latitudeOfFirstGridPointInDegrees=0; \
             set latitudeOfLastGridPointInDegrees=60; set values={{{}}}; write;",
            count(496)
        ),
    );
    let gg = generate(
        dir.path(),
        "gg.grib",
        "reduced_gg_pl_32_grib2",
        &format!("set values={{{}}}; write;", count(6114)),
    );
    for (grib, n) in [(&north, 496.0), (&south, 496.0), (&gg, 6114.0)] {
        let t = grib.with_extension("tgm");
        let png = grib.with_extension("png");
        let (ok, _, err) = tgm(&["convert-grib", s(grib), "-o", s(&t)]);
        assert!(ok, "{err}");
        let range = format!("0:{n}");
        let (ok, _, err) = tgm(&["plot", s(&t), "--range", &range, "-o", s(&png)]);
        assert!(ok, "{err}");
        let p = common::Png::read(&png);
        let panel = &p.panels()[0];
        let k = |k: &str| panel[k].as_u64().unwrap() as u32;
        let (x, y, h) = (k("x"), k("y"), k("h"));
        // ecCodes' values at the north-west and south-west corners.
        let pts = eccodes_points(grib);
        let corner = |north: bool| {
            let lat =
                pts.iter()
                    .map(|p| p.0)
                    .fold(if north { f64::MIN } else { f64::MAX }, |a, b| {
                        if north {
                            a.max(b)
                        } else {
                            a.min(b)
                        }
                    });
            let west = pts
                .iter()
                .filter(|p| p.0 == lat)
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap();
            common::expected(colorous::VIRIDIS, (0.0, n), west.2, false)
        };
        let name = s(grib);
        assert_eq!(p.px(x + 1, y + 1), corner(true), "{name}: north-west");
        assert_eq!(p.px(x + 1, y + h - 2), corner(false), "{name}: south-west");
    }
}

/// The three regular fields of [`regular_rules`] as GRIB2 and converted.
fn converted_regular(dir: &Path) -> (PathBuf, PathBuf) {
    let src = generate(dir, "ll.grib", "regular_ll_sfc_grib2", &regular_rules());
    let t = dir.join("ll.tgm");
    let (ok, _, err) = tgm(&["convert-grib", s(&src), "-o", s(&t)]);
    assert!(ok, "{err}");
    (src, t)
}

#[test]
fn to_grib_writes_only_the_fields_objects_selects() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (src, t) = converted_regular(dir.path());
    let one = dir.path().join("one.grib");
    let (ok, _, err) = tgm(&[
        "to-grib",
        s(&t),
        "--objects",
        "mars.param=168",
        "-o",
        s(&one),
    ]);
    assert!(ok, "{err}");
    let params = Command::new("grib_get")
        .args(["-p", "paramId"])
        .arg(&one)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&params.stdout).trim(), "168");
    assert_eq!(eccodes_values(&one)[0], eccodes_values(&src)[1]);
    let none = dir.path().join("none.grib");
    let (ok, _, err) = tgm(&["to-grib", s(&t), "-w", "mars.param=999", "-o", s(&none)]);
    assert!(!ok && err.contains("no object matches"), "{err}");
    assert!(!none.exists());
}

#[test]
fn plot_shows_bitmap_missing_points_as_transparent() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (src, t) = converted_regular(dir.path());
    let png = dir.path().join("u.png");
    let (ok, _, err) = tgm(&["plot", s(&t), "--objects", "mars.param=165", "-o", s(&png)]);
    assert!(ok, "{err}");
    let p = common::Png::read(&png);
    // 31 rows of 16 points, north first; every fifth point is missing.
    let values = &eccodes_values(&src)[2];
    for (r, c) in [(0u64, 0u64), (0, 1), (0, 5), (1, 4), (30, 15)] {
        let missing = values[(r * 16 + c) as usize].is_nan();
        assert_eq!(missing, (r * 16 + c) % 5 == 0);
        let alpha = p.cell(0, 31, 16, r, c)[3];
        assert_eq!(alpha, if missing { 0 } else { 255 }, "point ({r}, {c})");
    }
}

/// `input` converted with `--encoding codes` to `codes` and by default to
/// `default`.
fn convert_as_codes_and_by_default(input: &Path, codes: &Path, default: &Path) {
    let (ok, _, err) = tgm(&[
        "convert-grib",
        s(input),
        "-o",
        s(codes),
        "--encoding",
        "codes",
    ]);
    assert!(ok, "{}: {err}", input.display());
    let (ok, _, err) = tgm(&["convert-grib", s(input), "-o", s(default)]);
    assert!(ok, "{}: {err}", input.display());
}

/// `got` and `want` hold the same float64 bits, element by element.
fn assert_bits(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "{what} [{i}]: {g} vs {w}");
    }
}

#[test]
fn decimal_scaled_fields_as_codes_are_exact_with_payloads_no_larger_than_their_grib() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rules = format!(
        "set bitsPerValue=16; set values={{{}}}; write;",
        real_looking(6114)
    );
    let plain = generate(dir.path(), "gg.grib", "reduced_gg_pl_32_grib2", &rules);
    let simple = grib_set(
        dir.path(),
        "gg.d.grib",
        &["-s", "decimalScaleFactor=1"],
        &plain,
    );
    let complex = grib_set(
        dir.path(),
        "gg.c.grib",
        &[
            "-r",
            "-s",
            "packingType=grid_complex_spatial_differencing,decimalScaleFactor=1",
        ],
        &plain,
    );
    for (packing, input) in [("grid_simple", simple), ("grid_complex", complex)] {
        assert_eq!(
            grib_get("decimalScaleFactor", &input).trim(),
            "1",
            "{packing}"
        );
        let codes = dir.path().join(format!("{packing}.codes.tgm"));
        let source = dir.path().join(format!("{packing}.source.tgm"));
        convert_as_codes_and_by_default(&input, &codes, &source);
        // The payload is at most the GRIB's data section, and the file at
        // most the default conversion's (float64 when its order is not
        // exact) and the extension's key.
        let size = |p: &Path| std::fs::metadata(p).unwrap().len();
        let f = TgmFile::open(&codes).unwrap();
        let bytes = f.message_bytes(0).unwrap();
        let payload = tgm::Message::parse(&bytes)
            .unwrap()
            .object(0)
            .unwrap()
            .payload_region()
            .len();
        let data_section = grib_get("section7Length", &input)
            .trim()
            .parse::<usize>()
            .unwrap()
            - 5;
        assert!(
            payload <= data_section && size(&codes) <= size(&source) + 64,
            "{packing}: payload {payload} B, GRIB data section {data_section} B; \
             file {} B, by default {} B",
            size(&codes),
            size(&source)
        );
        let msg = &decode_all(&codes)[0];
        let d = &msg.objects[0].descriptor;
        assert_eq!(d.encoding(), "simple_packing", "{packing}");
        // GRIB's order exactly when the default keeps float64.
        let grib_order = d
            .pipeline()
            .params()
            .contains_key("sp_grib_reference_value");
        let default = decode_all(&source)[0].objects[0]
            .descriptor
            .encoding()
            .to_string();
        assert_eq!(
            grib_order,
            default == "none",
            "{packing}: default {default}"
        );
        // tgm reads ecCodes' values bit for bit.
        let want = &eccodes_values(&input)[0];
        assert_bits(&f64s(&msg.objects[0].data), want, packing);
        // And writes the field back as the source had it.
        let back = dir.path().join(format!("{packing}.back.grib"));
        let (ok, _, err) = tgm(&["to-grib", s(&codes), "-o", s(&back)]);
        assert!(ok, "{packing}: {err}");
        let (same, report) = grib_compare(&[], &input, &back);
        assert!(same, "{packing}: {report}");
    }
}

/// Spherical-harmonic coefficients of a T`j` field whose amplitude decays
/// with the total wavenumber n as atmospheric spectra do (about n^−1.6),
/// as `grib_filter` values: near-normal pseudo-random coefficients (a sum
/// of four uniform draws), the m = 0 imaginary parts zero.
fn spectral_rules(j: usize) -> String {
    let mut s = 0x2545_f491u32;
    let mut uniform = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s as f64 / u32::MAX as f64 - 0.5
    };
    let mut next = || (0..4).map(|_| uniform()).sum::<f64>();
    let mut values = Vec::new();
    for m in 0..=j {
        for n in m..=j {
            let a = if n == 0 {
                300.0
            } else {
                40.0 / ((n + 1) as f64).powf(1.6)
            };
            values.push(format!("{:.9}", a * next()));
            let im = if m == 0 { 0.0 } else { a * next() };
            values.push(format!("{im:.9}"));
        }
    }
    format!(
        "set J={j}; set K={j}; set M={j}; set values={{{}}}; write;",
        values.join(",")
    )
}

#[test]
fn spectral_fields_as_codes_are_exact_and_a_third_of_float64() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sample = generate(dir.path(), "sh_ml.grib2", "sh_ml_grib2", "write;");
    let t255 = generate(
        dir.path(),
        "t255.grib2",
        "sh_ml_grib2",
        &spectral_rules(255),
    );
    let grib1 = generate(dir.path(), "sh_ml.grib1", "sh_ml_grib1", "write;");
    for (input, j, near_grib) in [(sample, 63, false), (t255, 255, true), (grib1, 63, false)] {
        let name = input.file_name().unwrap().to_str().unwrap().to_string();
        let codes = dir.path().join(format!("{name}.codes.tgm"));
        let float = dir.path().join(format!("{name}.tgm"));
        convert_as_codes_and_by_default(&input, &codes, &float);
        let msg = &decode_all(&codes)[0];
        let d = &msg.objects[0].descriptor;
        let p = d.pipeline().params();
        assert_eq!(
            p.get("sp_spectral_truncation").and_then(Value::as_u64),
            Some(j),
            "{name}: {}",
            d.encoding()
        );
        assert_eq!(d.compression(), "zstd", "{name}");
        // GRIB1's GRIBEX scaling of the subset's last row.
        assert_eq!(
            p.get("sp_spectral_subset_last_scaled"),
            name.ends_with("grib1").then_some(&Value::Bool(true)),
            "{name}"
        );
        // tgm reads ecCodes' values bit for bit.
        let want = eccodes_coded_values(dir.path(), &input);
        assert_bits(&f64s(&msg.objects[0].data), &want, &name);
        // Under half the float64 layout; within 5% of the GRIB once the
        // field outweighs the format's fixed costs (the catalogue, the
        // header template, the subset's placeholder codes:
        // docs/src/performance/weather.md).
        let size = |p: &Path| std::fs::metadata(p).unwrap().len();
        assert!(
            size(&codes) * 2 < size(&float),
            "{name}: {} B as codes, {} B as float64",
            size(&codes),
            size(&float)
        );
        if near_grib {
            assert!(
                size(&codes) * 100 <= size(&input) * 105,
                "{name}: {} B as codes, GRIB {} B",
                size(&codes),
                size(&input)
            );
        }
        // Written back as the source was, at its Laplacian operator, from
        // either layout.
        for stored in [&codes, &float] {
            let back = dir.path().join(format!("{name}.back.grib2"));
            let (ok, _, err) = tgm(&["to-grib", s(stored), "-o", s(&back), "--force"]);
            assert!(ok, "{name}: {err}");
            let (same, report) = grib_compare(&[], &input, &back);
            assert!(same, "{name} from {}: {report}", stored.display());
        }
    }
}

/// The array `key` of the first message of `path` (`values`, `latitudes`,
/// `longitudes`) as ecCodes gives it, printed by `grib_filter` with 17
/// significant digits.
fn eccodes_array(dir: &Path, path: &Path, key: &str) -> Vec<f64> {
    let rules = dir.join(format!("{key}.rules"));
    std::fs::write(&rules, format!("print \"[{key}%.17g!1]\";")).unwrap();
    let out = Command::new("grib_filter")
        .arg(&rules)
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "grib_filter {key} of {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect()
}

#[test]
fn projected_grids_get_ecodes_points_as_coordinates() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Scanned +i +j, where ecCodes' points follow the message's order.
    let north = "set jScansPositively=1; set latitudeOfFirstGridPointInDegrees=55; \
                 set longitudeOfFirstGridPointInDegrees=350; set orientationOfTheGridInDegrees=10; \
                 set LaDInDegrees=60; write;";
    let north1 = "set jScansPositively=1; set latitudeOfFirstGridPointInDegrees=55; \
                  set longitudeOfFirstGridPointInDegrees=350; set orientationOfTheGridInDegrees=10; \
                  write;";
    let south = "set jScansPositively=1; set projectionCentreFlag=128; \
                 set latitudeOfFirstGridPointInDegrees=-55; set LaDInDegrees=-60; write;";
    let lambert = "set gridDefinitionTemplateNumber=30; set jScansPositively=1; \
                   set Latin1InDegrees=33; set Latin2InDegrees=45; set LaDInDegrees=40; \
                   set LoVInDegrees=262; set latitudeOfFirstGridPointInDegrees=25; \
                   set longitudeOfFirstGridPointInDegrees=250; set DxInMetres=30000; \
                   set DyInMetres=30000; write;";
    let tangent = "set gridDefinitionTemplateNumber=30; set jScansPositively=1; \
                   set Latin1InDegrees=-50; set Latin2InDegrees=-50; set LaDInDegrees=-50; \
                   set LoVInDegrees=140; set latitudeOfFirstGridPointInDegrees=-40; \
                   set longitudeOfFirstGridPointInDegrees=120; set DxInMetres=20000; \
                   set DyInMetres=25000; write;";
    let laea = |scan: &str| {
        format!(
            "set gridDefinitionTemplateNumber=140; set Nx=16; set Ny=31; \
             set latitudeOfFirstGridPoint=40000000; set longitudeOfFirstGridPoint=350000000; \
             set standardParallelInMicrodegrees=52000000; \
             set centralLongitudeInMicrodegrees=10000000; \
             set xDirectionGridLengthInMillimetres=50000000; \
             set yDirectionGridLengthInMillimetres=45000000; {scan} write;"
        )
    };
    let mercator = |dj: u32| {
        format!(
            "set gridDefinitionTemplateNumber=10; set jScansPositively=1; \
             set latitudeOfFirstGridPointInDegrees=10; set longitudeOfFirstGridPointInDegrees=100; \
             set LaDInDegrees=20; set orientationOfTheGridInDegrees=0; set DiInMetres=100000; \
             set DjInMetres={dj}; set latitudeOfLastGridPointInDegrees=30; \
             set longitudeOfLastGridPointInDegrees=115; write;"
        )
    };
    let mercator_square = mercator(100_000);
    let mercator_oblate = format!("set shapeOfTheEarth=4; {mercator_square}");
    let mercator_tall = mercator(60_000);
    let oblate = format!("set shapeOfTheEarth=4; {lambert}");
    let laea_plus = laea("set jScansPositively=1;");
    let laea_minus = laea("set jScansPositively=0; set iScansNegatively=1;");
    let cases = [
        ("ps2.grib2", "polar_stereographic_pl_grib2", north, true),
        ("ps1.grib1", "polar_stereographic_sfc_grib1", north1, true),
        (
            "ps_south.grib2",
            "polar_stereographic_pl_grib2",
            south,
            true,
        ),
        ("lc.grib2", "regular_ll_sfc_grib2", lambert, false),
        // Releases before 2.35 put this grid's points elsewhere (the first
        // not at the first grid point); the Python suite checks it against
        // cfgrib's ecCodes.
        ("lc_south.grib2", "regular_ll_sfc_grib2", tangent, false),
        // ecCodes' own scanning (-j): dimensions, no coordinates.
        (
            "ps_minus_j.grib2",
            "polar_stereographic_pl_grib2",
            "write;",
            true,
        ),
        // On GRS80: the ellipsoid's arithmetic, unchanged across releases.
        ("lc_oblate.grib2", "regular_ll_sfc_grib2", &oblate, true),
        // Lambert azimuthal equal-area points follow the scanning.
        ("laea.grib2", "regular_ll_sfc_grib2", &laea_plus, true),
        (
            "laea_minus.grib2",
            "regular_ll_sfc_grib2",
            &laea_minus,
            true,
        ),
        // Mercator on a sphere and on GRS80; rows Dj apart, which releases
        // before 2.33 take as Di (so compared only where Di = Dj).
        ("mc.grib2", "regular_ll_sfc_grib2", &mercator_square, true),
        (
            "mc_oblate.grib2",
            "regular_ll_sfc_grib2",
            &mercator_oblate,
            true,
        ),
        (
            "mc_tall.grib2",
            "regular_ll_sfc_grib2",
            &mercator_tall,
            true,
        ),
    ];
    for (name, sample, rules, exact) in cases {
        let (input, geo, shape) = converted_geography(dir.path(), name, sample, rules);
        let (geo, shape) = (&geo, &shape);
        let grid = tgm::view::grid_coordinates(geo, shape).expect("a projected grid");
        assert_eq!(grid.dims, ["y", "x"], "{name}");
        let (first_lat, first_lon) = (
            get(geo, "latitudeOfFirstGridPointInDegrees")
                .as_f64()
                .unwrap(),
            get(geo, "longitudeOfFirstGridPointInDegrees")
                .as_f64()
                .unwrap(),
        );
        if let [lat, lon] = &grid.coords[..] {
            assert!(
                (lat.values[0] - first_lat).abs() < 1e-9,
                "{name}: {}",
                lat.values[0]
            );
            assert!(
                (lon.values[0] - first_lon).abs() < 1e-9,
                "{name}: {}",
                lon.values[0]
            );
        }
        let newer = match name {
            "lc_south.grib2" => Some((2, 35)),
            "mc_tall.grib2" => Some((2, 33)),
            _ => None,
        };
        if newer.is_some_and(|(major, minor)| !eccodes_at_least(major, minor)) {
            continue;
        }
        if name.contains("minus_j") {
            assert!(grid.coords.is_empty(), "{name}");
            continue;
        }
        assert_eq!(grid.coords.len(), 2, "{name}");
        for (c, key) in grid.coords.iter().zip(["latitudes", "longitudes"]) {
            let want = eccodes_array(dir.path(), &input, key);
            assert_eq!(c.shape, *shape, "{name}");
            assert_eq!(c.values.len(), want.len(), "{name} {key}");
            // Polar stereographic, Lambert azimuthal equal-area and
            // Lambert conformal on an ellipsoid are ecCodes' arithmetic in
            // every release; its spherical Lambert conformal projection
            // was rewritten (2.35), so releases differ in the last bits.
            for (i, (a, w)) in c.values.iter().zip(&want).enumerate() {
                if exact {
                    assert_eq!(a.to_bits(), w.to_bits(), "{name} {key}[{i}]: {a} vs {w}");
                } else {
                    assert!((a - w).abs() <= 1e-9, "{name} {key}[{i}]: {a} vs {w}");
                }
            }
        }
    }
}

/// A field made by `grib_filter` with `rules` on `sample`, converted: the
/// GRIB file, its object's geography and shape.
fn converted_geography(
    dir: &Path,
    name: &str,
    sample: &str,
    rules: &str,
) -> (PathBuf, Value, Vec<u64>) {
    let input = generate(dir, name, sample, rules);
    let t = dir.join(format!("{name}.tgm"));
    let (ok, _, err) = tgm(&["convert-grib", s(&input), "-o", s(&t)]);
    assert!(ok, "{name}: {err}");
    let msg = &decode_all(&t)[0];
    let base = Value::from(msg.metadata.base[0].clone());
    let geo = get(&base, "geography").clone();
    (input, geo, msg.objects[0].descriptor.shape.clone())
}

/// Whether the ecCodes tools are release `major.minor` or later.
fn eccodes_at_least(major: u32, minor: u32) -> bool {
    let out = Command::new("codes_info").arg("-v").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text
        .trim()
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}

#[test]
fn space_view_grids_get_eccodes_points_off_the_disc_nan() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A 16 × 31 sector (the sample's count of points) of a satellite over
    // 10°E whose earth disc is 14 by 28 grid lengths, so that the corners
    // lie off the disc.
    let view = |more: &str| {
        format!(
            "set gridDefinitionTemplateNumber=90; set Nx=16; set Ny=31; \
             set latitudeOfSubSatellitePoint=0; set longitudeOfSubSatellitePoint=10000000; \
             set dx=14; set dy=28; set Xp=8500; set Yp=15000; set Nr=6610700; \
             set Xo=1; set Yo=0; {more} write;"
        )
    };
    // The same sector in GRIB1, whose sub-satellite point is whole grid
    // lengths.
    let grib1 = "set dataRepresentationType=90; set Nx=16; set Ny=31; \
                 set latitudeOfSubSatellitePoint=0; set longitudeOfSubSatellitePoint=10000; \
                 set dx=14; set dy=28; set XpInGridLengths=8; set YpInGridLengths=15; \
                 set Nr=6610700; set Xo=1; set Yo=0; write;";
    let grib2 = "regular_ll_sfc_grib2";
    let cases = [
        ("sv.grib2", grib2, view(""), true),
        (
            "sv_plus_j.grib2",
            grib2,
            view("set jScansPositively=1;"),
            true,
        ),
        (
            "sv_minus_i.grib2",
            grib2,
            view("set iScansNegatively=1;"),
            true,
        ),
        (
            "sv_grs80.grib2",
            grib2,
            view("set shapeOfTheEarth=4;"),
            true,
        ),
        ("sv.grib1", "GRIB1", grib1.to_string(), true),
        // A missing camera altitude (an orthographic view, which ecCodes
        // refuses from 2.32 on and earlier releases give as all 0°, 0°):
        // dimensions without coordinates.
        (
            "sv_orthographic.grib2",
            grib2,
            view("set Nr=missing();"),
            false,
        ),
    ];
    for (name, sample, rules, points) in &cases {
        let (input, geo, shape) = converted_geography(dir.path(), name, sample, rules);
        assert_eq!(shape, [31, 16], "{name}");
        let grid = tgm::view::grid_coordinates(&geo, &shape).expect("a space view");
        assert_eq!(grid.dims, ["y", "x"], "{name}");
        if !points {
            assert!(grid.coords.is_empty(), "{name}");
            continue;
        }
        assert_eq!(grid.coords.len(), 2, "{name}");
        let (lat, lon) = (&grid.coords[0].values, &grid.coords[1].values);
        let (want_lat, want_lon) = (
            eccodes_array(dir.path(), &input, "latitudes"),
            eccodes_array(dir.path(), &input, "longitudes"),
        );
        assert_eq!(
            (lat.len(), lon.len()),
            (want_lat.len(), want_lon.len()),
            "{name}"
        );
        // ecCodes gives a point off the disc 0°, 0°; tgm NaN for both.
        let off: Vec<bool> = lat.iter().map(|v| v.is_nan()).collect();
        let eccodes_off = want_lat
            .iter()
            .zip(&want_lon)
            .filter(|(a, o)| **a == 0.0 && **o == 0.0);
        assert_eq!(
            off.iter().filter(|o| **o).count(),
            eccodes_off.count(),
            "{name}"
        );
        assert!(off.contains(&true) && off.contains(&false), "{name}");
        for (i, off) in off.iter().enumerate() {
            if *off {
                assert!(lon[i].is_nan(), "{name}[{i}]");
                assert_eq!((want_lat[i], want_lon[i]), (0.0, 0.0), "{name}[{i}]");
            } else {
                assert_eq!(
                    lat[i].to_bits(),
                    want_lat[i].to_bits(),
                    "{name} latitude[{i}]"
                );
                assert_eq!(
                    lon[i].to_bits(),
                    want_lon[i].to_bits(),
                    "{name} longitude[{i}]"
                );
            }
        }
    }
}

/// `msg` (one GRIB2 message) with its section 7 cut to `keep` bytes of
/// data, its lengths mended.
fn with_data_cut(msg: &[u8], keep: usize) -> Vec<u8> {
    let mut at = 16;
    while msg[at + 4] != 7 {
        at += u32::from_be_bytes(msg[at..at + 4].try_into().unwrap()) as usize;
    }
    let mut cut = msg[..at].to_vec();
    cut.extend_from_slice(&((5 + keep) as u32).to_be_bytes());
    cut.push(7);
    cut.extend_from_slice(&msg[at + 5..at + 5 + keep]);
    cut.extend_from_slice(b"7777");
    let total = cut.len() as u64;
    cut[8..16].copy_from_slice(&total.to_be_bytes());
    cut
}

/// A spherical-harmonics field (`spectral_complex`) is checked against its
/// truncations before ecCodes decodes it: ecCodes 2.28 reads its unpacked
/// subset and packed coefficients from past the end of a short section,
/// and writes past its own array when the subset truncation JS is above
/// the field's J.
#[test]
fn a_spectral_field_with_a_short_section_or_a_wider_subset_is_refused() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sample = |edition: u8| Path::new(SAMPLES).join(format!("sh_ml_grib{edition}.tmpl"));
    let whole = std::fs::read(sample(2)).unwrap();
    let data = grib_get("section7Length", &sample(2))
        .parse::<usize>()
        .unwrap()
        - 5;
    let mut inputs = Vec::new();
    for (what, keep) in [
        ("empty", 0usize),
        ("short", data / 2),
        ("one byte short", data - 1),
    ] {
        let input = dir.path().join(format!("sh-{}.grib", inputs.len()));
        std::fs::write(&input, with_data_cut(&whole, keep)).unwrap();
        inputs.push((what, input, "data section holds"));
    }
    for edition in [1, 2] {
        let name = format!("sh-js64-{edition}.grib");
        let wider = grib_set(
            dir.path(),
            &name,
            &["-s", "JS=64,KS=64,MS=64"],
            &sample(edition),
        );
        inputs.push((
            "a T64 subset of T63",
            wider,
            "JS = 64 is outside the truncation J = 63",
        ));
    }
    for (what, input, reason) in &inputs {
        let out = dir.path().join("out.tgm");
        let (ok, _, err) = tgm(&["convert-grib", s(input), "-o", s(&out)]);
        assert!(!ok, "{what}: converted");
        assert!(
            err.contains("spectral packing") && err.contains(reason),
            "{what}: {err}"
        );
        assert!(!out.exists(), "{what}: an output exists");
    }
    // The samples as they are convert.
    for edition in [1, 2] {
        let out = dir.path().join(format!("sh{edition}.tgm"));
        let (ok, _, err) = tgm(&["convert-grib", s(&sample(edition)), "-o", s(&out)]);
        assert!(ok, "GRIB{edition}: {err}");
    }
}

/// `grib_filter` rules writing one field of `n` real-looking values at
/// `bits`, every fifth point missing when `bitmap`.
fn second_order_source_rules(n: usize, bits: u32, bitmap: bool) -> String {
    let values = real_looking(n);
    let values = match bitmap {
        false => values,
        true => values
            .split(',')
            .enumerate()
            .map(|(i, v)| if i % 5 == 0 { "9999" } else { v })
            .collect::<Vec<_>>()
            .join(","),
    };
    let missing = match bitmap {
        true => "set bitmapPresent=1; set missingValue=9999;",
        false => "",
    };
    format!("set bitsPerValue={bits}; {missing} set values={{{values}}}; write;")
}

/// ECMWF's general extended second-order fields, GRIB1 and GRIB2, with and
/// without a bitmap, at every order of spatial differencing and ordered
/// boustrophedonically, as ecCodes writes them: stored bit-identical to
/// ecCodes' values in their own codes, and written back as `grib_compare`
/// finds equal, every key and value.
#[test]
fn second_order_fields_of_every_general_extended_form_come_back_equal() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sources = [
        ("gg1", "reduced_gg_pl_32_grib1", 6114, 16, false),
        ("ll1", "regular_ll_sfc_grib1", 496, 12, false),
        ("ll1b", "regular_ll_sfc_grib1", 496, 12, true),
        ("ll2", "regular_ll_sfc_grib2", 496, 12, false),
        ("ll2b", "regular_ll_sfc_grib2", 496, 12, true),
    ];
    let forms: [(&str, &[&str]); 5] = [
        ("so", &["-s", "packingType=grid_second_order"]),
        ("no_spd", &["-s", "packingType=grid_second_order_no_SPD"]),
        ("spd1", &["-s", "packingType=grid_second_order_SPD1"]),
        ("spd3", &["-s", "packingType=grid_second_order_SPD3"]),
        (
            "bous",
            &[
                "-s",
                "packingType=grid_second_order,boustrophedonicOrdering=1",
            ],
        ),
    ];
    let mut checked = 0;
    for (name, sample, n, bits, bitmap) in sources {
        let rules = second_order_source_rules(n, bits, bitmap);
        let simple = generate(dir.path(), &format!("{name}.grib"), sample, &rules);
        for (form, keys) in forms {
            // ecCodes writes boustrophedonic GRIB1 fields on regular grids
            // only, and with a bitmap decodes them wrong (refused below).
            if form == "bous" && (bitmap || name == "gg1") {
                continue;
            }
            let tag = format!("{name}.{form}");
            let mut args = vec!["-r"];
            args.extend_from_slice(keys);
            let input = grib_set(dir.path(), &format!("{tag}.grib"), &args, &simple);
            assert!(
                grib_get("packingType", &input).starts_with("grid_second_order"),
                "{tag}"
            );
            if form == "bous" && name == "ll1" {
                assert_eq!(grib_get("boustrophedonicOrdering", &input), "1", "{tag}");
            }
            let t = dir.path().join(format!("{tag}.tgm"));
            let (ok, _, err) = tgm(&["convert-grib", s(&input), "-o", s(&t)]);
            assert!(ok, "{tag}: {err}");
            let want = eccodes_values(&input);
            let msg = &decode_all(&t)[0];
            assert_eq!(
                msg.objects[0].descriptor.encoding(),
                "simple_packing",
                "{tag}"
            );
            let got = f64s(&msg.objects[0].data);
            assert_eq!(got.len(), want[0].len(), "{tag}");
            for (i, (g, w)) in got.iter().zip(&want[0]).enumerate() {
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "{tag} [{i}]: {g} != {w}"
                );
            }
            let back = dir.path().join(format!("{tag}.back.grib"));
            let (ok, _, err) = tgm(&["to-grib", s(&t), "-o", s(&back)]);
            assert!(ok, "{tag}: {err}");
            let (same, report) = grib_compare(&[], &input, &back);
            assert!(same, "{tag}: {report}");
            checked += 1;
        }
    }
    assert_eq!(checked, 22);
}

/// A GRIB file's `offsetSection4`.
fn s4_of(path: &Path) -> usize {
    grib_get("offsetSection4", path).parse().unwrap()
}

/// Runs `convert-grib input -o out` and returns its stderr once it has
/// failed, panicking if it succeeds, writes `out`, or runs past a deadline
/// far beyond a refusal's milliseconds (ecCodes' unbounded decoders never
/// return on some hostile sections).
fn refused_in_time(input: &Path, out: &Path, what: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .args(["convert-grib", s(input), "-o", s(out)])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("{what}: convert-grib did not finish");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    assert!(!output.status.success(), "{what}: converted");
    assert!(!out.exists(), "{what}: an output exists");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A second-order field whose descriptors announce more than its section
/// holds, no groups, more groups than its descriptors fit, groups of no
/// width decoding to more values than the budget, or (GRIB2) another
/// count of values than section 5 announces is refused, naming the cause,
/// before ecCodes decodes it: ecCodes 2.28 reads such a section past the
/// message, sizes arrays by the announced groups and values, and writes
/// into an empty array when there are no groups. The GRIB1 forms ecCodes cannot pack again are refused by name
/// (a `general_grib1` secondary bitmap of zeros makes it loop forever),
/// and so is a boustrophedonic field with a bitmap, which it decodes
/// wrong.
#[test]
fn hostile_second_order_sections_are_refused_before_decoding() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rules = second_order_source_rules(6114, 16, false);
    let out = dir.path().join("out.tgm");
    for (edition, sample) in [(1, "reduced_gg_pl_32_grib1"), (2, "reduced_gg_pl_32_grib2")] {
        let simple = generate(dir.path(), &format!("e{edition}.grib"), sample, &rules);
        let args = ["-r", "-s", "packingType=grid_second_order"];
        let valid = grib_set(dir.path(), &format!("e{edition}.so.grib"), &args, &simple);
        let bytes = std::fs::read(&valid).unwrap();
        // Where the group widths start, and where the group count lies.
        let (widths_at, groups_at, groups_len) = match edition {
            1 => {
                let s4: usize = grib_get("offsetSection4", &valid).parse().unwrap();
                let spd: usize = grib_get("widthOfSPD", &valid).parse().unwrap();
                (s4 + 26 + (3 * spd).div_ceil(8), s4 + 16, 2)
            }
            _ => {
                let s5: usize = grib_get("offsetSection5", &valid).parse().unwrap();
                let s7: usize = grib_get("offsetSection7", &valid).parse().unwrap();
                (s7 + 5, s5 + 21, 4)
            }
        };
        assert_eq!(grib_get("orderOfSPD", &valid), "2", "e{edition}");
        let groups = |n: u32| {
            let mut b = bytes.clone();
            let be = n.to_be_bytes();
            b[groups_at..groups_at + groups_len].copy_from_slice(&be[4 - groups_len..]);
            b
        };
        let mut wide = bytes.clone();
        wide[widths_at..widths_at + 100].fill(0xff);
        // Two groups of no width and 2^30 values each: no data bits, and
        // 2^31 values ecCodes would allocate (a GRIB1 Gaussian grid's
        // point count decodes them).
        let mut empty = groups(2);
        let (widths_width, first_width) = match edition {
            1 => (s4_of(&valid) + 21, s4_of(&valid) + 10),
            _ => (groups_at + 8, groups_at - 1),
        };
        empty[widths_width] = 0;
        empty[widths_width + 1] = 32;
        empty[first_width] = 0;
        for g in 0..2 {
            let at = widths_at + 4 * g;
            empty[at..at + 4].copy_from_slice(&(1u32 << 30).to_be_bytes());
        }
        let mut cases = vec![
            ("widths", wide, "groups' values take"),
            ("no groups", groups(0), "no groups"),
            ("groups", groups(65_535), "65535 group descriptors take"),
            ("empty groups", empty, "budget"),
        ];
        if edition == 2 {
            let s5: usize = grib_get("offsetSection5", &valid).parse().unwrap();
            let mut more = bytes.clone();
            more[s5 + 5..s5 + 9].copy_from_slice(&6115u32.to_be_bytes());
            cases.push(("values", more, "the values announced number 6115"));
        }
        for (what, hostile, cause) in cases {
            let what = format!("GRIB{edition} {what}");
            let path = dir.path().join("hostile.grib");
            std::fs::write(&path, &hostile).unwrap();
            let err = refused_in_time(&path, &out, &what);
            if cause != "budget" {
                assert!(err.contains("second-order packing: "), "{what}: {err}");
            }
            assert!(err.contains(cause), "{what}: {err}");
        }
    }
    // The GRIB1 general_grib1 form (extended flags 48): 10 groups of width
    // 8 and a secondary bitmap of zeros, on which ecCodes loops forever.
    let simple = generate(dir.path(), "g1.grib", "reduced_gg_pl_32_grib1", &rules);
    let args = ["-r", "-s", "packingType=grid_second_order"];
    let second = grib_set(dir.path(), "g1.so.grib", &args, &simple);
    let s4: usize = grib_get("offsetSection4", &second).parse().unwrap();
    let mut hostile = std::fs::read(&second).unwrap();
    let octet = |k: usize| s4 + k - 1;
    hostile[octet(14)] = 48;
    hostile[octet(17)..octet(19)].copy_from_slice(&10u16.to_be_bytes());
    hostile[octet(22)..octet(32)].fill(8);
    hostile[octet(32)..octet(41)].fill(0);
    let hostile_path = dir.path().join("g1.hostile.grib");
    std::fs::write(&hostile_path, &hostile).unwrap();
    let kind = grib_get("packingType", &hostile_path);
    assert_eq!(kind, "grid_second_order_general_grib1");
    let err = refused_in_time(&hostile_path, &out, &kind);
    assert!(
        err.contains(&format!("packingType {kind} is not converted")),
        "{err}"
    );
    // Boustrophedonic on a reduced grid (extended flags' bit 2 set on the
    // valid reduced Gaussian field), on which ecCodes writes past its
    // array (and recurses without end to count the grid's points).
    let mut reduced = std::fs::read(&second).unwrap();
    reduced[octet(14)] |= 0x04;
    let reduced_path = dir.path().join("g1.bous.grib");
    std::fs::write(&reduced_path, &reduced).unwrap();
    assert_eq!(grib_get("boustrophedonicOrdering", &reduced_path), "1");
    let err = refused_in_time(&reduced_path, &out, "boustrophedonic reduced grid");
    assert!(
        err.contains("boustrophedonic ordering: on a reduced grid"),
        "{err}"
    );
    // On a regular Gaussian grid (a regular lat/lon field's data
    // representation type, section 2 octet 6, made 4): ecCodes counts its
    // points by a decoding that asks for the count again, without end.
    let rules_ll = second_order_source_rules(496, 12, false);
    let ll = generate(dir.path(), "r1.grib", "regular_ll_sfc_grib1", &rules_ll);
    let args = [
        "-r",
        "-s",
        "packingType=grid_second_order,boustrophedonicOrdering=1",
    ];
    let ll_bous = grib_set(dir.path(), "r1.bous.grib", &args, &ll);
    let s2: usize = grib_get("offsetSection2", &ll_bous).parse().unwrap();
    let mut gaussian = std::fs::read(&ll_bous).unwrap();
    gaussian[s2 + 5] = 4;
    let gaussian_path = dir.path().join("r1.gaussian.grib");
    std::fs::write(&gaussian_path, &gaussian).unwrap();
    assert_eq!(grib_get("gridType", &gaussian_path), "regular_gg");
    let err = refused_in_time(&gaussian_path, &out, "boustrophedonic Gaussian grid");
    assert!(
        err.contains("boustrophedonic ordering: on a GRIB1 Gaussian grid"),
        "{err}"
    );
    // A GRIB2 field of template 5.50002 with `bitsPerValue` 0, whose
    // groups ecCodes still decodes, is checked as any other: group widths
    // past its section are refused.
    let simple2 = generate(dir.path(), "g2.grib", "reduced_gg_pl_32_grib2", &rules);
    let keys = ["-r", "-s", "packingType=grid_second_order"];
    let second2 = grib_set(dir.path(), "g2.so.grib", &keys, &simple2);
    let s5: usize = grib_get("offsetSection5", &second2).parse().unwrap();
    let s7: usize = grib_get("offsetSection7", &second2).parse().unwrap();
    let mut zero_bits = std::fs::read(&second2).unwrap();
    zero_bits[s5 + 19] = 0;
    zero_bits[s7 + 5..s7 + 105].fill(0xff);
    let zero_bits_path = dir.path().join("g2.zero_bits.grib");
    std::fs::write(&zero_bits_path, &zero_bits).unwrap();
    assert_eq!(grib_get("bitsPerValue", &zero_bits_path), "0");
    let err = refused_in_time(&zero_bits_path, &out, "GRIB2 bitsPerValue 0");
    assert!(err.contains("groups' values take"), "{err}");
    // Boustrophedonic with a bitmap.
    let rules = second_order_source_rules(496, 12, true);
    let simple = generate(dir.path(), "b1.grib", "regular_ll_sfc_grib1", &rules);
    let args = ["-r", "-s", "packingType=grid_second_order_boustrophedonic"];
    let bous = grib_set(dir.path(), "b1.bous.grib", &args, &simple);
    let err = refused_in_time(&bous, &out, "boustrophedonic with a bitmap");
    assert!(
        err.contains("boustrophedonic ordering: with a bitmap"),
        "{err}"
    );
}

/// A bitmap that marks more points present than the data section codes
/// values is refused before ecCodes decodes the field: ecCodes 2.28's
/// `data_apply_bitmap` reads one value past the decoded ones first.
#[test]
fn a_bitmap_marking_more_points_than_coded_values_is_refused_before_decoding() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rules = second_order_source_rules(496, 12, true);
    let out = dir.path().join("out.tgm");
    for (edition, sample, section) in [
        (1, "regular_ll_sfc_grib1", "offsetSection3"),
        (2, "regular_ll_sfc_grib2", "offsetSection6"),
    ] {
        let input = generate(dir.path(), &format!("b{edition}.grib"), sample, &rules);
        assert!(
            tgm(&["convert-grib", s(&input), "-o", s(&out)]).0,
            "GRIB{edition}"
        );
        std::fs::remove_file(&out).unwrap();
        // The first point is missing; its bit is the first of octet 7.
        let at: usize = grib_get(section, &input).parse().unwrap();
        let mut bytes = std::fs::read(&input).unwrap();
        assert_eq!(bytes[at + 6] & 0x80, 0, "GRIB{edition}");
        bytes[at + 6] |= 0x80;
        let hostile = dir.path().join(format!("b{edition}.hostile.grib"));
        std::fs::write(&hostile, &bytes).unwrap();
        let err = refused_in_time(&hostile, &out, &format!("GRIB{edition}"));
        assert!(
            err.contains("the bitmap marks 397 points present but the data section codes 396"),
            "GRIB{edition}: {err}"
        );
    }
}

/// A simple- or complex-packed field whose data section is empty, or
/// shorter than the codes its header announces, is refused before ecCodes
/// decodes it: ecCodes 2.28 checks a simple-packed section's length only
/// when it holds something, and a complex-packed one's never, and would
/// read the codes from past the end of the message.
#[test]
fn a_data_section_shorter_than_its_codes_is_refused_before_decoding() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<String> = (0..496).map(|i| format!("{}", 250 + i % 97)).collect();
    for packing in [
        "grid_simple",
        "grid_complex",
        "grid_complex_spatial_differencing",
    ] {
        let rules = format!(
            "set bitsPerValue=16; set values={{{}}}; set packingType=\"{packing}\"; write;",
            values.join(",")
        );
        let name = format!("{packing}.grib");
        let whole = std::fs::read(generate(dir.path(), &name, "GRIB2", &rules)).unwrap();
        let data = grib_get("section7Length", &dir.path().join(&name))
            .trim()
            .parse::<usize>()
            .unwrap()
            - 5;
        let whole_out = dir.path().join(format!("{packing}.tgm"));
        let (ok, _, err) = tgm(&[
            "convert-grib",
            s(&dir.path().join(&name)),
            "-o",
            s(&whole_out),
        ]);
        assert!(ok, "{packing}: {err}");
        for (what, keep) in [("empty", 0usize), ("short", data / 2)] {
            let input = dir.path().join(format!("{packing}-{what}.grib"));
            std::fs::write(&input, with_data_cut(&whole, keep)).unwrap();
            let out = dir.path().join(format!("{packing}-{what}.tgm"));
            let (ok, _, err) = tgm(&["convert-grib", s(&input), "-o", s(&out)]);
            assert!(!ok, "{packing} {what}: converted");
            assert!(
                err.contains("message 0") && err.contains("data section holds"),
                "{packing} {what}: {err}"
            );
            assert!(!out.exists(), "{packing} {what}: an output exists");
        }
    }
}

/// Complex packing is coded by tgm where ecCodes 2.28's encoder writes a
/// group's width modulo 16 (a field whose codes jump by 2^15 or more) and
/// where it drops spatial differencing (it writes order 0): `to-grib`
/// gives the values back exactly, at the order asked for, and a message
/// tgm wrote comes back as its bytes.
#[test]
fn complex_packing_keeps_wide_groups_and_its_order_of_spatial_differencing() {
    if !eccodes_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let saw: Vec<String> = (0..8192)
        .map(|i| format!("{}", 250.0 + (i % 97) as f64 * 0.5))
        .collect();
    let rules = format!(
        "set bitsPerValue=16; set values={{{}}}; write;",
        saw.join(",")
    );
    let simple = generate(dir.path(), "saw.grib", "regular_gg_sfc_grib2", &rules);
    let t = dir.path().join("saw.tgm");
    assert!(tgm(&["convert-grib", s(&simple), "-o", s(&t)]).0);
    for (packing, order) in [
        ("grid_complex", None),
        ("grid_complex_spatial_differencing", Some("2")),
    ] {
        let back = dir.path().join(format!("{packing}.grib"));
        let (ok, _, err) = tgm(&["to-grib", s(&t), "-o", s(&back), "--packing", packing]);
        assert!(ok, "{packing}: {err}");
        assert_eq!(
            grib_get("packingType,binaryScaleFactor", &back),
            format!("{packing} -10")
        );
        let (same, report) = grib_compare(&["-c", "values"], &simple, &back);
        assert!(same, "{packing}: {report}");
        if let Some(order) = order {
            assert_eq!(grib_get("orderOfSpatialDifferencing", &back), order);
        }
        // Converted and written back, tgm's message is its bytes again.
        let again_t = dir.path().join(format!("{packing}.tgm"));
        let again = dir.path().join(format!("{packing}.again.grib"));
        assert!(tgm(&["convert-grib", s(&back), "-o", s(&again_t)]).0);
        let (ok, _, err) = tgm(&["to-grib", s(&again_t), "-o", s(&again)]);
        assert!(ok, "{packing}: {err}");
        assert_eq!(
            std::fs::read(&again).unwrap(),
            std::fs::read(&back).unwrap(),
            "{packing}"
        );
    }
    // Codes of 40 bits are too wide for the extra descriptors of spatial
    // differencing: the field is written undifferenced, exactly.
    let wide: Vec<String> = (0..8192)
        .map(|i| format!("{}", 250.0 + ((i * 7919) % 4093) as f64 / 97.0))
        .collect();
    let rules = format!(
        "set bitsPerValue=40; set values={{{}}}; write;",
        wide.join(",")
    );
    let simple = generate(dir.path(), "wide.grib", "regular_gg_sfc_grib2", &rules);
    let t = dir.path().join("wide.tgm");
    let back = dir.path().join("wide.back.grib");
    assert!(tgm(&["convert-grib", s(&simple), "-o", s(&t)]).0);
    let packing = "grid_complex_spatial_differencing";
    let (ok, _, err) = tgm(&["to-grib", s(&t), "-o", s(&back), "--packing", packing]);
    assert!(ok, "{err}");
    let keys = "packingType,orderOfSpatialDifferencing,bitsPerValue";
    assert_eq!(grib_get(keys, &back), format!("{packing} 0 40"));
    let (same, report) = grib_compare(&["-c", "values"], &simple, &back);
    assert!(same, "{report}");
}
