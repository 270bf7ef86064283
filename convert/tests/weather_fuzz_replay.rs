//! Replays the weather fuzz corpora (`fuzz/corpus/weather_*`) and
//! regression files (`testdata/regress/weather_*`) through the fuzz target
//! bodies, shared with `fuzz/` by path: the seeds (real GRIB and NetCDF-3
//! files) must pass the checks and the regression files must be refused.

mod common;
#[path = "../../fuzz/src/weather.rs"]
mod weather;

use common::{files, root};

use tgm_convert::weather::{grib_scan, netcdf_classic};

#[test]
fn corpora_and_regressions_replay_cleanly() {
    for name in weather::TARGETS {
        let run = weather::target(name).unwrap();
        let seeds = files(&root().join("fuzz/corpus").join(name), "");
        assert!(!seeds.is_empty(), "fuzz/corpus/{name} has no seeds");
        for (_, b) in &seeds {
            run(b);
        }
        for (_, b) in files(&root().join("testdata/regress"), &format!("{name}-")) {
            run(&b);
        }
    }
}

#[test]
fn seeds_pass_the_checks_and_regressions_are_refused() {
    let corpus = root().join("fuzz/corpus");
    let regress = root().join("testdata/regress");
    for (p, b) in files(&corpus.join("weather_grib_scan"), "") {
        let m = grib_scan::scan(&b).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(!m.is_empty(), "{}", p.display());
    }
    let bad = files(&regress, "weather_grib_scan-");
    assert!(bad.len() >= 4);
    for (p, b) in bad {
        assert!(grib_scan::scan(&b).is_err(), "{}", p.display());
    }
    for (p, b) in files(&corpus.join("weather_netcdf_classic"), "") {
        let e = netcdf_classic::extent(&b, b.len() as u64)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert_eq!(e.end, b.len() as u64, "{}", p.display());
    }
    // A 100-byte streaming header: whatever it declares, no record past
    // the bytes present.
    for (p, b) in files(&regress, "weather_netcdf_classic-") {
        match netcdf_classic::extent(&b, b.len() as u64) {
            Err(_) => {}
            Ok(e) => assert!(
                e.end > b.len() as u64 || e.streaming_records == Some(0),
                "{}: {e:?}",
                p.display()
            ),
        }
    }
}
