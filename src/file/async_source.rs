//! Asynchronous byte sources: what [`super::AsyncTgmFile`] reads through
//! (`spec/files.md` §7.1). Not tied to a runtime or to HTTP: a remote
//! object ([`crate::remote::AsyncRemoteSource`], feature `remote`)
//! implements it, and so does [`Bytes`], for tests and for bytes already
//! in memory.

use std::future::Future;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use super::source::{ByteSource, SourceHints};
use crate::error::Result;

/// Random access to an immutable run of bytes, answered asynchronously:
/// the asynchronous twin of [`ByteSource`], with the same settings
/// ([`SourceHints`]).
pub trait AsyncByteSource: Send + Sync {
    /// The number of bytes the source holds.
    fn len(&self) -> impl Future<Output = Result<u64>> + Send;

    /// Whether the source holds no bytes.
    fn is_empty(&self) -> impl Future<Output = Result<bool>> + Send {
        async { Ok(self.len().await? == 0) }
    }

    /// The bytes of `range`; an error when it is not wholly available.
    fn read_range(&self, range: Range<u64>) -> impl Future<Output = Result<Bytes>> + Send;

    /// Several ranges at once, in the order asked (a remote source
    /// coalesces nearby ranges into fewer requests).
    fn read_ranges(&self, ranges: &[Range<u64>])
        -> impl Future<Output = Result<Vec<Bytes>>> + Send;

    /// The source's settings for readers (`spec/files.md` §7).
    fn hints(&self) -> SourceHints {
        SourceHints::default()
    }
}

/// Bytes in memory, answered at once.
impl AsyncByteSource for Bytes {
    fn len(&self) -> impl Future<Output = Result<u64>> + Send {
        std::future::ready(ByteSource::len(self))
    }
    fn read_range(&self, range: Range<u64>) -> impl Future<Output = Result<Bytes>> + Send {
        std::future::ready(ByteSource::read_bytes(self, range))
    }
    fn read_ranges(
        &self,
        ranges: &[Range<u64>],
    ) -> impl Future<Output = Result<Vec<Bytes>>> + Send {
        std::future::ready(ByteSource::read_ranges(self, ranges))
    }
}

/// A shared source reads as the source.
impl<S: AsyncByteSource + ?Sized> AsyncByteSource for Arc<S> {
    fn len(&self) -> impl Future<Output = Result<u64>> + Send {
        S::len(self)
    }
    fn read_range(&self, range: Range<u64>) -> impl Future<Output = Result<Bytes>> + Send {
        S::read_range(self, range)
    }
    fn read_ranges(
        &self,
        ranges: &[Range<u64>],
    ) -> impl Future<Output = Result<Vec<Bytes>>> + Send {
        S::read_ranges(self, ranges)
    }
    fn hints(&self) -> SourceHints {
        S::hints(self)
    }
}
