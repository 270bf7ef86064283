//! Replays the medical fuzz corpora (`fuzz/corpus/medical_*`) and
//! regression files (`testdata/regress/medical_*`) through the fuzz target
//! bodies, shared with `fuzz/` by path; the seeds must pass the checks (so
//! the fuzzer starts past them) and the regression files must be refused.
#![cfg(all(feature = "nifti", feature = "dicom"))]

mod common;
#[path = "../../fuzz/src/medical.rs"]
mod medical;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{files, root};

use tgm_convert::medical::dicom_predecode::check_fragments;
use tgm_convert::medical::{dicom_scan, nifti};

fn replay(name: &str, path: &Path, data: &[u8]) {
    let run = medical::target(name).unwrap_or_else(|| panic!("{}: no target", path.display()));
    let t = Instant::now();
    run(data);
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "{} took {:?}",
        path.display(),
        t.elapsed()
    );
}

#[test]
fn corpora_and_regressions_replay_cleanly() {
    for name in medical::TARGETS {
        let seeds = files(&root().join("fuzz/corpus").join(name), "");
        assert!(!seeds.is_empty(), "fuzz/corpus/{name} has no seeds");
        for (p, b) in seeds {
            replay(name, &p, &b);
        }
    }
    let regress = files(&root().join("testdata/regress"), "medical_");
    assert!(regress.len() >= 4);
    for (p, b) in regress {
        let file = p.file_name().unwrap().to_str().unwrap().to_string();
        replay(file.split('-').next().unwrap(), &p, &b);
    }
}

#[test]
fn seeds_pass_the_checks_and_regressions_are_refused() {
    let corpus = root().join("fuzz/corpus");
    let regress = root().join("testdata/regress");
    let scan = |b: &[u8]| dicom_scan::check_reader(b, b.len() as u64);
    for (p, b) in files(&corpus.join("medical_dicom_scan"), "") {
        scan(&b).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    }
    for (p, b) in files(&regress, "medical_dicom_scan-") {
        assert!(scan(&b).is_err(), "{}", p.display());
    }
    for (p, b) in files(&corpus.join("medical_nifti"), "") {
        nifti::read_nifti_from(&p, &b[..], b.len() as u64, None)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    }
    for (p, b) in files(&regress, "medical_nifti-") {
        assert!(
            nifti::read_nifti_from(&p, &b[..], b.len() as u64, None).is_err(),
            "{}",
            p.display()
        );
    }
    let predecode = |b: &[u8]| {
        let (codec, declared, fragments) = medical::predecode_input(b).expect("10 bytes");
        check_fragments(codec, &declared, &fragments)
    };
    for (p, b) in files(&corpus.join("medical_predecode"), "") {
        predecode(&b).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    }
    for (p, b) in files(&regress, "medical_predecode-") {
        assert!(predecode(&b).is_err(), "{}", p.display());
    }
}
