//! The two remote readers behind one interface: tgm's
//! `TgmFile<RemoteSource>` and the reference's `TensogramFile` opened on
//! a URL. Every value comes back as native-order element bytes.

use std::collections::BTreeMap;

/// A remote file opened by one reader.
pub trait Opened {
    /// Number of messages (the reader locates all of them).
    fn messages(&self) -> Result<usize, String>;
    /// Object `o` of message `m`, decoded.
    fn object(&self, m: usize, o: usize) -> Result<Vec<u8>, String>;
    /// Element ranges `(first, count)` of object `o` of message `m`,
    /// concatenated.
    fn ranges(&self, m: usize, o: usize, ranges: &[(u64, u64)]) -> Result<Vec<u8>, String>;
    /// Metadata and descriptors of every message, as a listing reads them:
    /// the number of objects listed.
    fn list(&self) -> Result<usize, String>;
}

/// Which reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// tgm with its default options (the scan from both ends in windows
    /// from 64 KiB).
    Tgm,
    /// tgm with no readahead: from the front only, exactly the bytes each
    /// hop needs, one request per message.
    TgmExact,
    Reference,
}

impl Reader {
    pub fn name(self) -> &'static str {
        match self {
            Reader::Tgm => "tgm",
            Reader::TgmExact => "tgm --readahead 0",
            Reader::Reference => "reference 0.24.0",
        }
    }

    /// Opens `url` the way a user of the reader would, with its defaults
    /// (and for [`Reader::TgmExact`], no readahead).
    pub fn open(self, url: &str) -> Result<Box<dyn Opened>, String> {
        match self {
            Reader::Tgm | Reader::TgmExact => {
                let mut opts = tgm::remote::RemoteOptions::default();
                if self == Reader::TgmExact {
                    opts = opts.with_readahead(0);
                }
                let src = tgm::remote::RemoteSource::open(url, &opts).map_err(|e| e.to_string())?;
                let f = tgm::file::TgmFile::from_source(src, &tgm::Limits::default())
                    .map_err(|e| e.to_string())?;
                Ok(Box::new(TgmOpened(f)))
            }
            Reader::Reference => {
                let f = tensogram::TensogramFile::open_remote(url, &BTreeMap::new(), None)
                    .map_err(|e| e.to_string())?;
                Ok(Box::new(RefOpened(f)))
            }
        }
    }
}

struct TgmOpened(tgm::file::TgmFile<tgm::remote::RemoteSource>);

impl Opened for TgmOpened {
    fn messages(&self) -> Result<usize, String> {
        Ok(self.0.num_messages())
    }

    fn object(&self, m: usize, o: usize) -> Result<Vec<u8>, String> {
        self.0
            .decode_object(m, o, &tgm::DecodeOptions::default())
            .map(|d| d.data)
            .map_err(|e| e.to_string())
    }

    /// Without hash verification, as the reference's range reads: a digest
    /// covers the whole payload, which a range read does not fetch.
    fn ranges(&self, m: usize, o: usize, ranges: &[(u64, u64)]) -> Result<Vec<u8>, String> {
        let opts = tgm::DecodeOptions::default().verify(tgm::Verify::Off);
        self.0
            .decode_range(m, o, ranges, &opts)
            .map(|parts| parts.concat())
            .map_err(|e| e.to_string())
    }

    fn list(&self) -> Result<usize, String> {
        let opts = tgm::DecodeOptions::default();
        let mut objects = 0;
        for m in 0..self.0.num_messages() {
            let meta = self.0.metadata(m, &opts).map_err(|e| e.to_string())?;
            let descs = self.0.descriptors(m).map_err(|e| e.to_string())?;
            if meta.base.len() != descs.len() {
                return Err(format!("message {m}: base entries and objects differ"));
            }
            objects += descs.len();
        }
        Ok(objects)
    }
}

struct RefOpened(tensogram::TensogramFile);

impl Opened for RefOpened {
    fn messages(&self) -> Result<usize, String> {
        self.0.message_count().map_err(|e| e.to_string())
    }

    fn object(&self, m: usize, o: usize) -> Result<Vec<u8>, String> {
        self.0
            .decode_object(m, o, &tensogram::DecodeOptions::default())
            .map(|(_, _, data)| data)
            .map_err(|e| e.to_string())
    }

    fn ranges(&self, m: usize, o: usize, ranges: &[(u64, u64)]) -> Result<Vec<u8>, String> {
        self.0
            .decode_range(m, o, ranges, &tensogram::DecodeOptions::default())
            .map(|(_, parts)| parts.concat())
            .map_err(|e| e.to_string())
    }

    fn list(&self) -> Result<usize, String> {
        let mut objects = 0;
        for m in 0..self.messages()? {
            let (_, descs) = self
                .0
                .decode_metadata(m)
                .and_then(|_| self.0.decode_descriptors(m))
                .map_err(|e| e.to_string())?;
            objects += descs.len();
        }
        Ok(objects)
    }
}
