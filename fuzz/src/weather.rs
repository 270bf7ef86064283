//! Fuzz target bodies for the pure-Rust structure checks of the weather
//! converters of `tgm-convert`, run before ecCodes or netCDF-C read a
//! file: the GRIB message and section scanner and the NetCDF classic
//! (CDF-1/2/5) header reader. Kept outside `lib.rs` like `medical.rs`;
//! `convert/tests/weather_fuzz_replay.rs` replays these corpora.

use tgm_convert::weather::grib_complex_extent::{self, ComplexLayout};
use tgm_convert::weather::grib_second_order_extent::{self, SecondOrderLayout};
use tgm_convert::weather::grib_spectral_extent::{self, SpectralLayout};
use tgm_convert::weather::{grib_scan, netcdf_classic};

/// The weather targets by name, as their binaries and corpora name them.
pub fn target(name: &str) -> Option<fn(&[u8])> {
    Some(match name {
        "weather_grib_scan" => grib,
        "weather_netcdf_classic" => netcdf,
        _ => return None,
    })
}

/// The names accepted by [`target`].
pub const TARGETS: [&str; 2] = ["weather_grib_scan", "weather_netcdf_classic"];

/// Scans `data` as a GRIB file: every message and section it accepts lies
/// inside the input, in order, and sections fill their message. The same
/// bytes also go through the complex-, second-order- and spectral-packing
/// extent checks, their layouts taken from the first 16 bytes and the
/// rest as the data section.
pub fn grib(data: &[u8]) {
    if let Some((head, rest)) = data.split_first_chunk::<16>() {
        let word = |i: usize| u64::from(u16::from_be_bytes([head[i], head[i + 1]]));
        let layout = ComplexLayout {
            values: word(0),
            groups: word(2),
            reference_bits: u64::from(head[4] % 70),
            width_reference: u64::from(head[5]),
            width_bits: u64::from(head[6] % 70),
            length_reference: u64::from(head[7]),
            length_increment: u64::from(head[8]),
            last_length: word(9),
            length_bits: u64::from(head[11] % 70),
            order: u64::from(head[12] % 4),
            extra_octets: u64::from(head[13]),
        };
        let _ = grib_complex_extent::check(rest, &layout);
        // The same head as a second-order layout: a section it accepts
        // holds its three descriptor arrays, each of whole bytes, and at
        // least one value a group beyond the differencing's first values.
        let second = SecondOrderLayout {
            groups: u64::from(u32::from_be_bytes([head[0], head[1], head[2], head[3]])),
            first_order_bits: u64::from(head[4] % 40),
            width_bits: u64::from(head[6] % 40),
            length_bits: u64::from(head[11] % 40),
            order: u64::from(head[12] % 5),
            spd_bits: u64::from(head[13] % 40),
        };
        if let Ok(extent) = grib_second_order_extent::check(rest, &second) {
            let array = |bits: u64| (second.groups * bits).div_ceil(8);
            let arrays = array(second.width_bits)
                + array(second.length_bits)
                + array(second.first_order_bits);
            assert_eq!(extent.descriptors, arrays, "descriptors mislaid");
            assert!(arrays <= rest.len() as u64, "descriptors past the end");
            assert!(second.groups <= extent.values, "more groups than values");
        }
        // The same head as a spectral layout, signed: its check must not
        // overflow whatever the truncations, and a section it accepts
        // holds what it says ecCodes reads.
        let signed = |i: usize| i64::from(i16::from_be_bytes([head[i], head[i + 1]]));
        let spectral = SpectralLayout {
            truncation: [signed(0), signed(0), signed(2) % 2 + signed(0)],
            subset: [signed(4), signed(4), signed(4)],
            bits: signed(6),
            float_bytes: if head[8] % 2 == 0 { 4 } else { 8 },
            held: rest.len() as u64,
        };
        if let Ok(need) = grib_spectral_extent::check(&spectral) {
            assert!(
                need <= rest.len() as u64,
                "a short spectral section accepted"
            );
        }
    }
    grib_scan_only(data);
}

/// [`grib`]'s scan of the file structure.
fn grib_scan_only(data: &[u8]) {
    let Ok(messages) = grib_scan::scan(data) else {
        return;
    };
    let mut end = 0u64;
    for m in messages {
        assert!(m.offset >= end, "messages overlap");
        end = m.offset + m.len;
        assert!(end <= data.len() as u64, "a message passes the end");
        assert_eq!(&data[end as usize - 4..end as usize], b"7777");
        for s in &m.sections {
            assert!(
                s.offset + s.len <= m.len - 4,
                "a section passes its message"
            );
        }
    }
}

/// Reads `data` as a NetCDF classic header; a streaming record count is
/// bounded by the bytes present.
pub fn netcdf(data: &[u8]) {
    let len = data.len() as u64;
    if let Ok(e) = netcdf_classic::extent(data, len) {
        if let Some(r) = e.streaming_records {
            assert!(r <= len, "more records than bytes");
        }
    }
}
