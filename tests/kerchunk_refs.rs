//! Kerchunk references (`spec/kerchunk.md`): chunk references land on the
//! payload bytes, the fixedscaleoffset parameters decode packed payloads by
//! numcodecs' formula to tgm's exact values, objects no chain expresses are
//! listed with the reason, and objects sharing a name stack along MARS keys.
//! Stock zarr reads the output in `.ci/kerchunk.sh`.

use serde_json::Value as Json;
use tgm::cbor::Value;
use tgm::kerchunk::{Refs, RefsBuilder};
use tgm::pipeline::{PipelineOptions, ZstdFrameSize};
use tgm::{DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, Map, Message, ObjectDescriptor};

fn field(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 250.0 + 30.0 * (i as f64 * 0.013).sin() - i as f64 * 1e-3)
        .collect()
}

fn le_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn named(name: &str) -> Map {
    let mut m = Map::new();
    m.insert("name".into(), Value::Text(name.into()));
    m
}

fn pipeline(
    d: ObjectDescriptor,
    enc: &str,
    comp: &str,
    params: &[(&str, i64)],
) -> ObjectDescriptor {
    let p = params
        .iter()
        .map(|(k, v)| (k.to_string(), Value::from_i64(*v)))
        .collect();
    d.with_raw_pipeline(enc, "none", comp, p).unwrap()
}

/// One message of `objs` (metadata entries `base`) and its references.
fn refs_of(
    objs: &[(ObjectDescriptor, Vec<u8>)],
    base: Vec<Map>,
    popts: PipelineOptions,
) -> (Vec<u8>, Refs) {
    let pairs: Vec<_> = objs.iter().map(|(d, b)| (d, &b[..])).collect();
    let opts = EncodeOptions::new().pipeline(popts);
    let msg = tgm::encode(&GlobalMetadata::with_base(base), &pairs, &opts).unwrap();
    let mut b = RefsBuilder::new("/data/x.tgm");
    b.add_message(0, &Message::parse(&msg).unwrap()).unwrap();
    (msg, b.finish())
}

fn entry(refs: &Refs, key: &str) -> Json {
    let v = &refs.document["refs"][key];
    match v {
        Json::String(s) => serde_json::from_str(s).unwrap_or(Json::String(s.clone())),
        other => other.clone(),
    }
}

fn chunk<'a>(msg: &'a [u8], refs: &Refs, key: &str) -> &'a [u8] {
    let r = entry(refs, key);
    assert_eq!(r[0], "/data/x.tgm", "{key}");
    let (off, len) = (
        r[1].as_u64().unwrap() as usize,
        r[2].as_u64().unwrap() as usize,
    );
    &msg[off..off + len]
}

/// The refs of one 20 × 25 object `x` holding `values` in simple_packing
/// at `bits` bits, uncompressed, every object expressed.
fn packed_refs(values: &[f64], bits: i64) -> (Vec<u8>, Refs) {
    let d = pipeline(
        ObjectDescriptor::new(Dtype::Float64, [20, 25]),
        "simple_packing",
        "none",
        &[("sp_bits_per_value", bits)],
    );
    let (msg, refs) = refs_of(
        &[(d, le_bytes(values))],
        vec![named("x")],
        Default::default(),
    );
    assert!(refs.unexpressible.is_empty(), "{:?}", refs.unexpressible);
    (msg, refs)
}

/// The float64 values tgm decodes from the first object of `msg`.
fn decoded_f64s(msg: &[u8]) -> Vec<f64> {
    tgm::decode(msg, &DecodeOptions::default()).unwrap().objects[0]
        .data
        .chunks_exact(8)
        .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
        .collect()
}

#[test]
fn packed_chunks_decode_by_the_numcodecs_formula_to_tgms_values() {
    let values = field(500);
    for bits in [8i64, 16, 32] {
        let (msg, refs) = packed_refs(&values, bits);
        let zarray = entry(&refs, "x/.zarray");
        assert_eq!(zarray["shape"], serde_json::json!([20, 25]));
        assert_eq!(zarray["chunks"], serde_json::json!([20, 25]));
        assert!(zarray["compressor"].is_null());
        let fso = &zarray["filters"][0];
        assert_eq!(fso["id"], "fixedscaleoffset");
        let width = (bits / 8) as usize;
        let want_astype = if bits == 8 {
            "|u1".to_string()
        } else {
            format!(">u{width}")
        };
        assert_eq!(fso["astype"], want_astype.as_str());
        let (scale, offset) = (
            fso["scale"].as_f64().unwrap(),
            fso["offset"].as_f64().unwrap(),
        );
        let packed = chunk(&msg, &refs, "x/0.0");
        assert_eq!(packed.len(), 500 * width);
        let tgm_values = decoded_f64s(&msg);
        for (i, q) in packed.chunks_exact(width).enumerate() {
            let q = q.iter().fold(0u64, |a, &b| a << 8 | u64::from(b)) as f64;
            let numcodecs = q / scale + offset;
            assert_eq!(
                numcodecs.to_bits(),
                tgm_values[i].to_bits(),
                "{bits} bits, element {i}"
            );
        }
    }
}

#[test]
fn unexpressible_objects_are_listed_with_the_reason() {
    let v = le_bytes(&field(64));
    let d = || ObjectDescriptor::new(Dtype::Float64, [64]);
    let mut nan = field(64);
    nan[3] = f64::NAN;
    let objs = [
        (
            pipeline(d(), "simple_packing", "none", &[("sp_bits_per_value", 40)]),
            v.clone(),
        ),
        (
            pipeline(
                d(),
                "simple_packing",
                "none",
                &[("sp_bits_per_value", 16), ("sp_decimal_scale_factor", 1)],
            ),
            v.clone(),
        ),
        (d(), le_bytes(&nan)),
        (
            ObjectDescriptor::new(Dtype::Bitmask, [16]),
            vec![0xb1, 0xf0],
        ),
        (
            ObjectDescriptor::new(Dtype::Bfloat16, [2]),
            vec![0x80, 0x3f, 0, 0x40],
        ),
    ];
    let base: Vec<Map> = (0..objs.len()).map(|i| named(&format!("o{i}"))).collect();
    let mut popts = PipelineOptions::default();
    popts.allow_nan = true;
    let (_, refs) = refs_of(&objs, base, popts);
    let reasons: Vec<(usize, &str)> = refs
        .unexpressible
        .iter()
        .map(|u| (u.object, u.reason.as_str()))
        .collect();
    let expect = [
        "40 bits",
        "decimal scale factor 1",
        "masks",
        "bitmask",
        "bfloat16",
    ];
    assert_eq!(reasons.len(), expect.len(), "{reasons:?}");
    for ((o, r), (i, want)) in reasons.iter().zip(expect.iter().enumerate()) {
        assert_eq!(*o, i);
        assert!(r.contains(want), "object {o}: {r}");
    }
    let listed: Json =
        serde_json::from_str(refs.document["refs"][".zattrs"].as_str().unwrap()).unwrap();
    assert_eq!(listed["tgm_unexpressible"].as_array().unwrap().len(), 5);
    assert_eq!(listed["tgm_unexpressible"][4]["variable"], "o4");
}

#[test]
fn packed_chunks_of_other_widths_are_unpacked_by_packints_first() {
    let values = field(500);
    for bits in [1i64, 5, 12, 24, 31] {
        let (msg, refs) = packed_refs(&values, bits);
        let zarray = entry(&refs, "x/.zarray");
        let filters = zarray["filters"].as_array().unwrap();
        assert_eq!(filters.len(), 2, "{bits} bits");
        let (fso, unpack) = (&filters[0], &filters[1]);
        let items = match bits {
            1..=7 => "|u1",
            9..=15 => "<u2",
            _ => "<u4",
        };
        assert_eq!(fso["id"], "fixedscaleoffset");
        assert_eq!(fso["astype"], items);
        assert_eq!(unpack["id"], "imagecodecs_packints");
        assert_eq!(unpack["dtype"], items);
        assert_eq!(unpack["bitspersample"], bits);
        assert_eq!(unpack["runlen"], 500);
        let (scale, offset) = (
            fso["scale"].as_f64().unwrap(),
            fso["offset"].as_f64().unwrap(),
        );
        let packed = chunk(&msg, &refs, "x/0.0");
        assert_eq!(packed.len(), (500 * bits as usize).div_ceil(8));
        let tgm_values = decoded_f64s(&msg);
        // packints' reading: MSB first, `bits` at a time.
        let bit = |k: usize| u64::from(packed[k / 8] >> (7 - k % 8) & 1);
        for (i, want) in tgm_values.iter().enumerate() {
            let b = bits as usize;
            let q = (i * b..(i + 1) * b).fold(0u64, |a, k| a << 1 | bit(k)) as f64;
            assert_eq!(
                (q / scale + offset).to_bits(),
                want.to_bits(),
                "{bits} bits, element {i}"
            );
        }
    }
}

#[test]
fn zstd_frames_with_and_without_their_content_size_are_expressed() {
    let z = (
        pipeline(
            ObjectDescriptor::new(Dtype::Float64, [64]),
            "none",
            "zstd",
            &[],
        ),
        le_bytes(&field(64)),
    );
    // The default frame omits the size (the reference's bytes); numcodecs
    // 0.16.2 and later decode it (`spec/kerchunk.md` §3).
    for (size, has_field) in [
        (ZstdFrameSize::Omitted, false),
        (ZstdFrameSize::Recorded, true),
    ] {
        let mut popts = PipelineOptions::default();
        popts.zstd_frame_size = size;
        let (msg, refs) = refs_of(std::slice::from_ref(&z), vec![named("z")], popts);
        assert!(
            refs.unexpressible.is_empty(),
            "{size:?}: {:?}",
            refs.unexpressible
        );
        assert_eq!(entry(&refs, "z/.zarray")["compressor"]["id"], "zstd");
        let frame = chunk(&msg, &refs, "z/0");
        assert_eq!(frame[..4], [0x28, 0xb5, 0x2f, 0xfd]);
        assert_eq!(frame[4] & 0xe0 != 0, has_field, "{size:?}");
    }
}

#[test]
fn objects_sharing_a_param_stack_along_the_varying_mars_key() {
    let mars = |step: i64| {
        let mut m = Map::new();
        m.insert(
            "mars".into(),
            Value::text_map([
                ("param", Value::Text("130".into())),
                ("step", Value::from_i64(step)),
                ("class", Value::Text("od".into())),
            ]),
        );
        m.insert(
            "grib".into(),
            Value::text_map([
                ("shortName", Value::Text("t".into())),
                ("units", Value::Text("K".into())),
                ("referenceValue", Value::Float(200.0 + step as f64)),
            ]),
        );
        m
    };
    let d = ObjectDescriptor::new(Dtype::Float64, [3, 4]);
    let a = le_bytes(&field(12));
    let b = le_bytes(&field(12).iter().map(|x| x + 1.0).collect::<Vec<_>>());
    let (msg, refs) = refs_of(
        &[(d.clone(), b.clone()), (d, a.clone())],
        vec![mars(6), mars(0)],
        Default::default(),
    );
    let zarray = entry(&refs, "t/.zarray");
    assert_eq!(zarray["shape"], serde_json::json!([2, 3, 4]));
    assert_eq!(zarray["chunks"], serde_json::json!([1, 3, 4]));
    assert_eq!(zarray["dtype"], "<f8");
    let zattrs = entry(&refs, "t/.zattrs");
    assert_eq!(
        zattrs["_ARRAY_DIMENSIONS"],
        serde_json::json!(["step", "t_dim_0", "t_dim_1"])
    );
    assert_eq!(zattrs["MARS_class"], "od");
    assert_eq!(zattrs["units"], "K");
    assert_eq!(zattrs["GRIB_shortName"], "t");
    assert!(zattrs.get("GRIB_referenceValue").is_none() && zattrs.get("referenceValue").is_none());
    assert_eq!(chunk(&msg, &refs, "t/0.0.0"), &a[..]);
    assert_eq!(chunk(&msg, &refs, "t/1.0.0"), &b[..]);
    assert_eq!(entry(&refs, "step/.zarray")["dtype"], "<i8");
    let steps: Vec<u8> = [0i64, 6].iter().flat_map(|s| s.to_le_bytes()).collect();
    assert_eq!(
        refs.document["refs"]["step/0"],
        format!("base64:{}", tgm::kerchunk::base64(&steps))
    );
    // MARS step in hours, a duration to CF readers (spec/kerchunk.md §2).
    let step_attrs = entry(&refs, "step/.zattrs");
    assert_eq!(step_attrs["units"], "hours");
    assert_eq!(step_attrs["standard_name"], "forecast_period");
}

/// szip's defaults as `tgm import` writes them: 128-block RSIs, 16-sample
/// blocks, preprocessing.
const SZIP_RSI: (&str, i64) = ("szip_rsi", 128);
const SZIP_BLOCK: (&str, i64) = ("szip_block_size", 16);
const SZIP_FLAGS: (&str, i64) = ("szip_flags", 8);

#[test]
fn szip_objects_past_whole_blocks_end_in_a_packints_cut() {
    let grid = |n: usize| -> Vec<f64> { (0..n).map(|i| 250.0 + (i as f64 * 0.05).sin()).collect() };
    let sp_szip = |shape: &[u64]| {
        pipeline(
            ObjectDescriptor::new(Dtype::Float64, shape.to_vec()),
            "simple_packing",
            "szip",
            &[("sp_bits_per_value", 16), SZIP_RSI, SZIP_BLOCK, SZIP_FLAGS],
        )
    };
    // 61 × 53 values are not whole 16-sample blocks; 64 × 50 are.
    let objs = [
        (sp_szip(&[61, 53]), le_bytes(&grid(61 * 53))),
        (sp_szip(&[64, 50]), le_bytes(&grid(64 * 50))),
    ];
    let (msg, refs) = refs_of(
        &objs,
        vec![named("part"), named("whole")],
        PipelineOptions::default(),
    );
    assert!(refs.unexpressible.is_empty(), "{:?}", refs.unexpressible);
    let part = entry(&refs, "part/.zarray");
    assert_eq!(part["compressor"]["id"], "imagecodecs_aec");
    let cut = part["filters"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(cut["id"], "imagecodecs_packints");
    assert_eq!(cut["dtype"], "|u1");
    assert_eq!(cut["bitspersample"], 8);
    assert_eq!(cut["runlen"], 61 * 53 * 2);
    // What imagecodecs' decoder writes: whole blocks, below twice the
    // object, so the cut keeps exactly one run, the object.
    let p = tgm::szip::SzipParams {
        bits_per_sample: 16,
        block_size: part["compressor"]["blocksize"].as_u64().unwrap() as u32,
        rsi: part["compressor"]["rsi"].as_u64().unwrap() as u32,
        flags: part["compressor"]["flags"].as_u64().unwrap() as u32,
    };
    let stream = chunk(&msg, &refs, "part/0.0");
    let extent = tgm::szip::decoded_extent(stream, &p, 61 * 53).unwrap();
    assert_eq!(extent, (61 * 53usize).div_ceil(16) * 16);
    let whole = entry(&refs, "whole/.zarray");
    assert!(whole["filters"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["id"] != "imagecodecs_packints"));
    // A constant field decodes to more than 8 bytes per payload byte, more
    // than imagecodecs' decoder makes room for without an output size.
    let flat = (
        pipeline(
            ObjectDescriptor::new(Dtype::Uint16, [5000]),
            "none",
            "szip",
            &[SZIP_RSI, SZIP_BLOCK, SZIP_FLAGS],
        ),
        vec![7u8; 10_000],
    );
    let (_, refs) = refs_of(&[flat], vec![named("flat")], PipelineOptions::default());
    assert_eq!(refs.unexpressible.len(), 1);
    assert!(
        refs.unexpressible[0].reason.contains("8 per payload byte"),
        "{}",
        refs.unexpressible[0].reason
    );
}

#[test]
fn reduced_gaussian_fields_carry_latitude_and_longitude_over_their_points() {
    let geography = |pl: &[i64]| {
        let mut m = named("msl");
        m.insert(
            "geography".into(),
            Value::text_map([
                ("gridType", Value::Text("reduced_gg".into())),
                ("N", Value::from_i64(2)),
                (
                    "pl",
                    Value::Array(pl.iter().map(|&p| Value::from_i64(p)).collect()),
                ),
                ("latitudeOfFirstGridPointInDegrees", Value::Float(59.444408)),
                ("latitudeOfLastGridPointInDegrees", Value::Float(-59.444408)),
                ("longitudeOfFirstGridPointInDegrees", Value::from_i64(0)),
            ]),
        );
        m
    };
    let d = ObjectDescriptor::new(Dtype::Float64, [12]);
    let (_, refs) = refs_of(
        &[(d, le_bytes(&field(12)))],
        vec![geography(&[2, 4, 4, 2])],
        Default::default(),
    );
    let msl = entry(&refs, "msl/.zattrs");
    assert_eq!(msl["_ARRAY_DIMENSIONS"], serde_json::json!(["values"]));
    assert_eq!(msl["coordinates"], "latitude longitude");
    let lats = tgm::geography::gaussian_latitudes(2).unwrap();
    let want_lat: Vec<f64> = [2, 4, 4, 2]
        .iter()
        .zip(&lats)
        .flat_map(|(&p, &l)| std::iter::repeat_n(l, p))
        .collect();
    let want_lon = [
        0.0, 180.0, 0.0, 90.0, 180.0, 270.0, 0.0, 90.0, 180.0, 270.0, 0.0, 180.0,
    ];
    for (name, want) in [("latitude", &want_lat[..]), ("longitude", &want_lon[..])] {
        let zarray = entry(&refs, &format!("{name}/.zarray"));
        assert_eq!(zarray["shape"], serde_json::json!([12]), "{name}");
        assert_eq!(zarray["dtype"], "<f8", "{name}");
        let zattrs = entry(&refs, &format!("{name}/.zattrs"));
        assert_eq!(zattrs["_ARRAY_DIMENSIONS"], serde_json::json!(["values"]));
        assert_eq!(
            refs.document["refs"][format!("{name}/0")],
            format!("base64:{}", tgm::kerchunk::base64(&le_bytes(want))),
            "{name}"
        );
    }
    // Row lengths that do not give the object's points: the values
    // dimension without coordinates.
    let d = ObjectDescriptor::new(Dtype::Float64, [12]);
    let (_, refs) = refs_of(
        &[(d, le_bytes(&field(12)))],
        vec![geography(&[2, 4, 4, 3])],
        Default::default(),
    );
    let msl = entry(&refs, "msl/.zattrs");
    assert_eq!(msl["_ARRAY_DIMENSIONS"], serde_json::json!(["values"]));
    assert!(msl.get("coordinates").is_none());
    assert!(refs.document["refs"].get("latitude/.zarray").is_none());
}
