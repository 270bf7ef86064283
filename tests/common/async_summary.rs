//! Everything the asynchronous reader answers, as text in the form of
//! `remote_corpus.rs`'s `summary` (which the blocking reader's answers
//! take), plus the methods that summary leaves out, for both readers.
#![allow(dead_code)]

use tgm::file::{AsyncByteSource, AsyncTgmFile, ByteSource, TgmFile};
use tgm::{DecodeOptions, Verify};

/// `corpus::summary` of an [`AsyncTgmFile`]: the same lines, from the
/// same calls, awaited.
pub async fn async_summary<S: AsyncByteSource + 'static>(f: &AsyncTgmFile<S>) -> Vec<String> {
    let opts = DecodeOptions::default();
    let mut out = vec![format!("spans {:?}", f.spans())];
    out.push(format!(
        "torn {:?}",
        f.torn_tail().map(|t| (t.offset, t.len, t.reason.clone()))
    ));
    for m in 0..f.num_messages() {
        out.push(format!(
            "meta {m} {:?}",
            f.metadata(m, &opts)
                .await
                .map(|g| format!("{g:?}"))
                .map_err(|e| e.kind().clone())
        ));
        let descs = f.descriptors(m).await;
        let Ok(descs) = descs else {
            out.push(format!(
                "descs {m} {:?}",
                descs.map_err(|e| e.kind().clone())
            ));
            continue;
        };
        for (o, d) in descs.iter().enumerate() {
            let got = f.decode_object(m, o, &opts).await;
            out.push(format!(
                "object {m} {o} {:?}",
                got.as_ref()
                    .map(|g| (g.descriptor == *d, tgm::hash::xxh3(&g.data)))
                    .map_err(|e| e.kind().clone())
            ));
            let n = d.num_elements().unwrap_or(0);
            if got.is_ok() && n > 0 {
                let ranges = [
                    (0, 1.min(n)),
                    (n / 3, (n / 10).max(1).min(n - n / 3)),
                    (n - 1, 1),
                ];
                let mut o2 = opts.clone();
                o2.verify = Verify::Off;
                let r = f.decode_range(m, o, &ranges, &o2).await;
                out.push(format!(
                    "range {m} {o} {:?}",
                    r.map(|v| v.iter().map(|x| tgm::hash::xxh3(x)).collect::<Vec<_>>())
                        .map_err(|e| e.kind().clone())
                ));
            }
        }
    }
    out
}

/// The answers `corpus::summary` leaves out, as text: damage, the
/// intact check, each message's object count, bytes and each descriptor
/// asked for alone (one past the last included), with full error text.
pub fn sync_extras<S: ByteSource>(f: &TgmFile<S>) -> Vec<String> {
    let mut out = vec![
        format!("damage {:?}", f.damage()),
        format!("intact {:?}", f.check_intact().map_err(|e| e.to_string())),
        format!("count {}", f.num_messages()),
    ];
    for m in 0..=f.num_messages() {
        let n = f.num_objects(m).map_err(|e| e.to_string());
        out.push(format!("objects {m} {n:?}"));
        let b = f.message_bytes(m).map(|b| tgm::hash::xxh3(&b));
        out.push(format!("bytes {m} {:?}", b.map_err(|e| e.to_string())));
        for o in 0..=n.unwrap_or(0) {
            let d = f.descriptor(m, o).map_err(|e| e.to_string());
            out.push(format!("descriptor {m} {o} {d:?}"));
        }
    }
    out
}

/// [`sync_extras`] of an [`AsyncTgmFile`].
pub async fn async_extras<S: AsyncByteSource + 'static>(f: &AsyncTgmFile<S>) -> Vec<String> {
    let mut out = vec![
        format!("damage {:?}", f.damage()),
        format!("intact {:?}", f.check_intact().map_err(|e| e.to_string())),
        format!("count {}", f.num_messages()),
    ];
    for m in 0..=f.num_messages() {
        let n = f.num_objects(m).await.map_err(|e| e.to_string());
        out.push(format!("objects {m} {n:?}"));
        let b = f.message_bytes(m).await.map(|b| tgm::hash::xxh3(&b));
        out.push(format!("bytes {m} {:?}", b.map_err(|e| e.to_string())));
        for o in 0..=n.clone().unwrap_or(0) {
            let d = f.descriptor(m, o).await.map_err(|e| e.to_string());
            out.push(format!("descriptor {m} {o} {d:?}"));
        }
    }
    out
}

/// Runs `fut` to completion on a current-thread runtime.
pub fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(fut)
}
