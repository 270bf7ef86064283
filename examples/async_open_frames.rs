//! Wall time of `AsyncTgmFile::open` over one streaming message (declared
//! length 0) of N one-byte objects, against the blocking reader's open of
//! the same bytes (`spec/files.md` §7.1):
//!
//! ```text
//! cargo run --release --example async_open_frames -- 1000 4000 16000
//! ```

use std::time::Instant;

use bytes::Bytes;
use tgm::file::{AsyncTgmFile, TgmFile};
use tgm::{Dtype, EncodeOptions, GlobalMetadata, Limits, ObjectDescriptor, StreamingEncoder};

/// One streaming message of `frames` data frames, its declared length
/// zeroed as a writer that cannot seek leaves it.
fn streaming_message(frames: usize) -> tgm::Result<Vec<u8>> {
    let mut s = StreamingEncoder::new(
        Vec::new(),
        &GlobalMetadata::default(),
        &EncodeOptions::new(),
    )?;
    let d = ObjectDescriptor::new(Dtype::Uint8, vec![1]);
    for i in 0..frames {
        s.write_object(&d, &[i as u8])?;
    }
    let mut b = s.finish()?.0;
    b[16..24].fill(0);
    let n = b.len();
    b[n - 16..n - 8].fill(0);
    Ok(b)
}

fn main() -> tgm::Result<()> {
    let counts: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a frame count"))
        .collect();
    let counts = if counts.is_empty() {
        vec![1000, 4000, 16000]
    } else {
        counts
    };
    let rt = tokio::runtime::Builder::new_current_thread().build()?;
    let lim = Limits::default();
    for n in counts {
        let bytes = Bytes::from(streaming_message(n)?);
        let t = Instant::now();
        let sync = TgmFile::from_source(bytes.clone(), &lim)?;
        let blocking = t.elapsed();
        let t = Instant::now();
        let asy = rt.block_on(AsyncTgmFile::open(bytes.clone(), &lim))?;
        let async_open = t.elapsed();
        assert_eq!(asy.spans(), sync.spans());
        println!(
            "{n} frames ({} bytes): blocking open {:.3} ms, async open {:.3} ms",
            bytes.len(),
            blocking.as_secs_f64() * 1e3,
            async_open.as_secs_f64() * 1e3
        );
    }
    Ok(())
}
