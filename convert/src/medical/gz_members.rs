//! A gzip file read as the concatenation of all its members (RFC 1952
//! §2.2: bgzip and pigz write several), refusing bytes after the last
//! member that do not start another one (spec/convert.md "NIfTI").

use std::io::{self, BufRead, Read};

use flate2::bufread::GzDecoder;

/// The inflated bytes of every member of a gzip stream, in order. Memory
/// is the decoder's window plus the caller's buffers: nothing is inflated
/// beyond what the caller reads.
pub struct Members<R: BufRead> {
    state: State<R>,
    /// Members started so far.
    count: u64,
}

enum State<R: BufRead> {
    Member(Box<GzDecoder<R>>),
    Done,
}

impl<R: BufRead> Members<R> {
    /// Reads `raw`, which starts with a gzip member.
    pub fn new(raw: R) -> Self {
        Members {
            state: State::Member(Box::new(GzDecoder::new(raw))),
            count: 1,
        }
    }
}

impl<R: BufRead> Read for Members<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let State::Member(dec) = &mut self.state else {
                return Ok(0);
            };
            let n = dec.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // This member ended (its CRC and size were checked): what follows
            // is either nothing, another member, or bytes we refuse.
            let State::Member(dec) = std::mem::replace(&mut self.state, State::Done) else {
                unreachable!("matched above")
            };
            let mut raw = dec.into_inner();
            let next = raw.fill_buf()?;
            if next.is_empty() {
                return Ok(0);
            }
            // A gzip member starts with 0x1f 0x8b; the decoder checks the
            // rest of its header.
            if next[0] != 0x1f {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "trailing bytes after gzip member {} are not another gzip member \
                         (they start with {:02x?})",
                        self.count,
                        &next[..next.len().min(4)]
                    ),
                ));
            }
            self.count += 1;
            self.state = State::Member(Box::new(GzDecoder::new(raw)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn member(bytes: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    }

    fn read_all(raw: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        Members::new(raw).read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn every_member_is_read_in_order() {
        let mut raw = member(b"abc");
        raw.extend(member(b""));
        raw.extend(member(b"defg"));
        assert_eq!(read_all(&raw).unwrap(), b"abcdefg");
        assert_eq!(read_all(&member(b"xyz")).unwrap(), b"xyz");
    }

    #[test]
    fn trailing_bytes_are_refused() {
        for tail in [&[0u8][..], &[0, 0, 0, 0], b"junk"] {
            let mut raw = member(b"abc");
            raw.extend_from_slice(tail);
            let e = read_all(&raw).unwrap_err().to_string();
            assert!(e.contains("after gzip member 1"), "{e}");
        }
        // Not a whole gzip header.
        for tail in [&[0x1f][..], &[0x1f, 0x8c, 8, 0, 0, 0, 0, 0, 0, 0]] {
            let mut raw = member(b"abc");
            raw.extend_from_slice(tail);
            assert!(read_all(&raw).is_err());
        }
        // A second member that is cut short is an error too.
        let mut raw = member(b"abc");
        let second = member(b"defg");
        raw.extend_from_slice(&second[..second.len() - 3]);
        assert!(read_all(&raw).is_err());
    }
}
