//! The SZ3 helper process (`spec/pipeline.md` §4.7): a missing or wrong
//! helper, a child that never answers, one that crashes, one over its
//! memory ceiling, decodes from several threads, and a decode while
//! another thread holds the standard error lock. The helper and the
//! ceiling are settings of the whole process, so the tests take turns.
#![cfg(all(feature = "sz3", target_os = "linux", target_env = "gnu"))]

use std::sync::{mpsc, Mutex, MutexGuard};

use tgm::__fuzz::compressors::{sz3_compress, sz3_decompress_into};
use tgm::pipeline_spec::Sz3Bound;
use tgm::sz3_child::{set_helper, set_memory_ceiling, Helper};

#[path = "common/sz3_self_helper.rs"]
mod sz3_self_helper;

static TURN: Mutex<()> = Mutex::new(());

/// This test's turn, with this executable as the helper and no ceiling.
fn turn() -> MutexGuard<'static, ()> {
    let guard = TURN.lock().unwrap_or_else(|e| e.into_inner());
    set_helper(Some(sz3_self_helper::helper()));
    set_memory_ceiling(None);
    guard
}

fn wave(n: usize) -> Vec<f64> {
    (0..n).map(|i| (i as f64 * 0.001).sin() * 50.0).collect()
}

/// Decodes `n` values of a wave and checks them against the bound.
fn decodes(n: usize) -> tgm::Result<()> {
    let v = wave(n);
    let c = sz3_compress(&v, Sz3Bound::Abs(1e-3)).unwrap();
    let mut out = vec![0.0; n];
    sz3_decompress_into(&c, &mut out)?;
    let err = v
        .iter()
        .zip(&out)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(err <= 1e-3, "{err}");
    Ok(())
}

/// This process's children, with their state letter and command name.
fn children() -> Vec<(char, String)> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let comm = stat[stat.find('(').unwrap_or(0) + 1..close].to_string();
        let rest: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        if rest.get(1) == Some(&me.as_str()) {
            found.push((rest[0].chars().next().unwrap_or('?'), comm));
        }
    }
    found
}

fn assert_no_zombie() {
    let kids = children();
    assert!(
        kids.iter().all(|(s, _)| *s != 'Z'),
        "zombie children: {kids:?}"
    );
}

#[test]
fn a_missing_or_wrong_helper_is_an_error_saying_how_to_provide_one() {
    let _t = turn();
    set_helper(Some(Helper::executable("/nonexistent/tgm-sz3-helper")));
    let e = decodes(1000).unwrap_err();
    assert!(e.detail().contains("cannot start the sz3 helper"), "{e}");
    assert!(e.detail().contains("TGM_SZ3_HELPER"), "{e}");
    set_helper(Some(Helper::new("/bin/true")));
    let e = decodes(1000).unwrap_err();
    assert!(e.detail().contains("did not start as one"), "{e}");
    assert_no_zombie();
}

#[test]
fn a_child_that_never_answers_is_stopped_at_its_time_and_reaped() {
    let _t = turn();
    set_helper(Some(
        Helper::new("/bin/sh")
            .arg("-c")
            .arg("printf 'tgm-sz3-child/1\\n' >&0; exec sleep 3600"),
    ));
    let e = decodes(1000).unwrap_err();
    assert!(e.detail().contains("sz3 decoder did not finish"), "{e}");
    let kids = children();
    assert!(kids.iter().all(|(_, c)| c != "sleep"), "{kids:?}");
    assert_no_zombie();
}

#[test]
fn a_crash_ends_only_the_child_and_the_next_decode_starts_another() {
    let _t = turn();
    let v = wave(3000);
    let c = sz3_compress(&v, Sz3Bound::Abs(1e-4)).unwrap();
    let mut crashes = 0;
    for at in (16..c.len()).step_by(c.len() / 40 + 1) {
        let mut bad = c.clone();
        let end = (at + 24).min(bad.len());
        bad[at..end].fill(0xff);
        let mut out = vec![0.0; v.len()];
        if let Err(e) = sz3_decompress_into(&bad, &mut out) {
            assert!(e.detail().contains("sz3"), "{e}");
            crashes += usize::from(e.detail().contains("crashed"));
        }
        assert_no_zombie();
        decodes(3000).unwrap();
    }
    assert!(crashes > 0, "no edit made SZ3 crash");
}

#[test]
fn a_decode_over_the_memory_ceiling_is_refused_and_the_next_one_runs() {
    let _t = turn();
    // 10⁶ values: 8 MB of output, more than the ceiling allows.
    set_memory_ceiling(Some(4 << 20));
    let e = decodes(1_000_000).unwrap_err();
    assert!(e.detail().contains("sz3"), "{e}");
    assert!(
        e.detail().contains("memory budget") || e.detail().contains("budget 4 MiB"),
        "{e}"
    );
    assert_no_zombie();
    set_memory_ceiling(None);
    decodes(1_000_000).unwrap();
}

#[test]
fn decodes_from_several_threads_each_get_their_values() {
    let _t = turn();
    std::thread::scope(|s| {
        let runs: Vec<_> = (0..4)
            .map(|i| s.spawn(move || decodes(1000 + 500 * i)))
            .collect();
        for r in runs {
            r.join().unwrap().unwrap();
        }
    });
    assert_no_zombie();
}

#[test]
fn a_decode_succeeds_while_another_thread_holds_the_stderr_lock() {
    let _t = turn();
    // A fresh child, started while the lock is held.
    set_helper(Some(sz3_self_helper::helper()));
    let (locked, wait_locked) = mpsc::channel();
    let (release, wait_release) = mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let guard = std::io::stderr().lock();
        locked.send(()).unwrap();
        wait_release.recv().unwrap();
        drop(guard);
    });
    wait_locked.recv().unwrap();
    let outcome = std::thread::spawn(|| decodes(10_000)).join().unwrap();
    release.send(()).unwrap();
    holder.join().unwrap();
    outcome.unwrap();
}
