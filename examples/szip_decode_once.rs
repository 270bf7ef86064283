//! One whole-field decode of the cputime benchmark's 4096×4096 field,
//! simple_packing + szip, by tgm or by ecCodes, for instruction counts:
//! `valgrind --tool=callgrind --toggle-collect=<decode function>` on
//! `szip_decode_once tgm|eccodes BITS` (`--features eccodes-bench`).

#[path = "../benches/common/grib.rs"]
mod grib;

use tgm::{
    DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor, PipelineBuilder, Verify,
};

fn main() {
    let mut args = std::env::args().skip(1);
    let who = args.next().unwrap_or_else(|| "tgm".into());
    let bits: u32 = args.next().and_then(|b| b.parse().ok()).unwrap_or(16);
    let n = grib::SIDE * grib::SIDE;
    let values: Vec<f64> = (0..n)
        .map(|i| {
            let x = i as f64;
            250.0 + 30.0 * (x * 1.3e-5).sin() + 5.0 * (x * 7e-4).cos()
        })
        .collect();
    if who == "eccodes" {
        let mut g = grib::Grib::new("grid_ccsds", bits as std::ffi::c_long);
        let msg = g.encode(&values).to_vec();
        let mut out = vec![0f64; n];
        grib::grib_decode(&msg, &mut out);
        println!("{}", out[12345]);
        return;
    }
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let p = PipelineBuilder::new().simple_packing(bits).szip();
    let d = ObjectDescriptor::new(Dtype::Float64, vec![grib::SIDE as u64, grib::SIDE as u64])
        .with_pipeline(&p);
    let msg = tgm::encode(
        &GlobalMetadata::default(),
        &[(&d, &data)],
        &EncodeOptions::new(),
    )
    .unwrap();
    let mut out = vec![0u8; data.len()];
    let dopts = DecodeOptions::default().verify(Verify::Off);
    tgm::decode_object_into(&msg, 0, &dopts, &mut out).unwrap();
    let got: Vec<f64> = out
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let worst = got
        .iter()
        .zip(&values)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    println!("{} max error {worst:e}", got[12345]);
}
