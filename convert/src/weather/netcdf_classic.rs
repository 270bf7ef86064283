//! The extent of a NetCDF-3 file's data, from its header (the classic
//! format: CDF-1, CDF-2 and CDF-5). netCDF-C reads past the end of a
//! truncated NetCDF-3 file as zeros, so a truncated file is recognised here
//! before any variable is read: the header's variable offsets and sizes
//! must fit inside the file.

/// Header fields read so far.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
    /// CDF-5: 64-bit counts and sizes.
    wide: bool,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| format!("header ends early at byte {}", self.at))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u64, String> {
        let s = self.take(4)?;
        Ok(u64::from(u32::from_be_bytes([s[0], s[1], s[2], s[3]])))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let s = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(u64::from_be_bytes(a))
    }

    /// A count or size: 32 bits, or 64 in CDF-5.
    fn count(&mut self) -> Result<u64, String> {
        if self.wide {
            self.u64()
        } else {
            self.u32()
        }
    }

    fn skip_padded(&mut self, n: u64) -> Result<(), String> {
        let n = usize::try_from(n.div_ceil(4).saturating_mul(4))
            .map_err(|_| "header field too large".to_string())?;
        self.take(n).map(|_| ())
    }

    fn name(&mut self) -> Result<(), String> {
        let n = self.count()?;
        self.skip_padded(n)
    }

    /// A list header: (tag, number of elements); ABSENT is (0, 0).
    fn list(&mut self, tag: u64) -> Result<u64, String> {
        let t = self.u32()?;
        let n = self.count()?;
        match t {
            0 if n == 0 => Ok(0),
            t if t == tag => Ok(n),
            t => Err(format!("unexpected list tag {t} at byte {}", self.at)),
        }
    }

    fn attributes(&mut self) -> Result<(), String> {
        for _ in 0..self.list(12)? {
            self.name()?;
            let ty = self.u32()?;
            let n = self.count()?;
            let width = type_width(ty)?;
            self.skip_padded(n.checked_mul(width).ok_or("attribute size overflows")?)?;
        }
        Ok(())
    }
}

fn type_width(t: u64) -> Result<u64, String> {
    Ok(match t {
        1 | 2 | 7 => 1,
        3 | 8 => 2,
        4 | 5 | 9 => 4,
        6 | 10 | 11 => 8,
        other => return Err(format!("unknown type code {other}")),
    })
}

/// What a NetCDF-3 header says about where its data lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// The byte offset one past the last data byte the header describes
    /// (for a streaming file, the fixed variables and the first record
    /// offset only).
    pub end: u64,
    /// For a streaming file (record count `0xFFFFFFFF`, unknown): how many
    /// whole records the `file_len` bytes hold; `None` otherwise.
    pub streaming_records: Option<u64>,
}

/// The extent of a NetCDF-3 file of `file_len` bytes whose start is `b`.
pub fn extent(b: &[u8], file_len: u64) -> Result<Extent, String> {
    let version = match b.get(..4) {
        Some([b'C', b'D', b'F', v @ (1 | 2 | 5)]) => *v,
        _ => return Err("not a NetCDF-3 file".into()),
    };
    let mut r = Reader {
        b,
        at: 4,
        wide: version == 5,
    };
    let numrecs = r.count()?;
    // Streaming (numrecs unknown) files: the fixed part is checked, and the
    // record count is what the bytes present hold.
    let streaming = numrecs == u64::from(u32::MAX) || numrecs == u64::MAX;
    let numrecs = if streaming { 0 } else { numrecs };
    let mut dims = Vec::new();
    for _ in 0..r.list(10)? {
        r.name()?;
        dims.push(r.count()?);
    }
    r.attributes()?;
    let overflow = || "variable size overflows".to_string();
    // (begin, bytes per record or whole, is a record variable)
    let mut vars = Vec::new();
    for _ in 0..r.list(11)? {
        r.name()?;
        let ndims = r.count()?;
        let mut elems: u64 = 1;
        let mut record = false;
        for k in 0..ndims {
            let id = usize::try_from(r.count()?).map_err(|_| overflow())?;
            let len = *dims.get(id).ok_or("dimension id out of range")?;
            if k == 0 && len == 0 {
                record = true;
            } else {
                elems = elems.checked_mul(len).ok_or_else(overflow)?;
            }
        }
        r.attributes()?;
        let width = type_width(r.u32()?)?;
        let _vsize = r.count()?;
        let begin = if version == 1 { r.u32()? } else { r.u64()? };
        let bytes = elems.checked_mul(width).ok_or_else(overflow)?;
        vars.push((begin, bytes, record));
    }
    let records: Vec<u64> = vars.iter().filter(|v| v.2).map(|v| v.1).collect();
    // One record variable is stored unpadded; several are padded to 4 bytes.
    let recsize = if records.len() == 1 {
        records[0]
    } else {
        records
            .iter()
            .try_fold(0u64, |acc, &n| {
                acc.checked_add(n.div_ceil(4).checked_mul(4)?)
            })
            .ok_or_else(overflow)?
    };
    let mut end = r.at as u64;
    let first_record = vars.iter().filter(|v| v.2).map(|v| v.0).min();
    let streaming_records = streaming.then(|| match first_record {
        Some(begin) if recsize > 0 => file_len.saturating_sub(begin) / recsize,
        _ => 0,
    });
    for (begin, bytes, record) in vars {
        let last = if !record {
            begin.checked_add(bytes)
        } else if numrecs == 0 {
            Some(begin)
        } else {
            (numrecs - 1)
                .checked_mul(recsize)
                .and_then(|o| o.checked_add(begin))
                .and_then(|o| o.checked_add(bytes))
        };
        end = end.max(last.ok_or_else(overflow)?);
    }
    Ok(Extent {
        end,
        streaming_records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_foreign_headers_are_refused() {
        assert!(extent(b"CDF", 3).is_err());
        assert!(extent(b"HDF5....", 8).is_err());
        assert!(extent(b"CDF\x01\0\0\0\0\0\0\0\x0a\0\0\0\x05", 16).is_err());
    }

    #[test]
    fn empty_file_ends_after_its_header() {
        let mut b = b"CDF\x01".to_vec();
        b.extend_from_slice(&[0; 4 + 8 + 8 + 8]);
        let e = extent(&b, 32).unwrap();
        assert_eq!(e.end, 32);
        assert_eq!(e.streaming_records, None);
        // The streaming record count of a file without record variables
        // holds no record, whatever the header says.
        b[4..8].fill(0xff);
        assert_eq!(extent(&b, 32).unwrap().streaming_records, Some(0));
    }
}
