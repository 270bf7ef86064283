//! What the parent and the SZ3 child say to each other over the child's
//! standard input, a Unix socket (`spec/pipeline.md` §4.7): the child's
//! greeting, then any number of request/response pairs. Integers are
//! little-endian.

use crate::dtype::ByteOrder;

/// The child's first words, so that a program that is not a helper is
/// recognised before any request is sent.
pub(crate) const HELLO: [u8; 16] = *b"tgm-sz3-child/1\n";

/// Longest refusal message a child sends.
pub(crate) const MESSAGE_MAX: usize = 4096;

/// One decode: the values wanted, their byte order, the address space the
/// child may use, and the stream's length (the stream follows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Request {
    pub order: ByteOrder,
    pub values: u64,
    pub memory: u64,
    pub stream_len: u64,
}

impl Request {
    pub const LEN: usize = 32;
    const MAGIC: [u8; 4] = *b"SZ3Q";

    pub fn to_bytes(self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[..4].copy_from_slice(&Self::MAGIC);
        b[4] = u8::from(self.order == ByteOrder::Big);
        b[8..16].copy_from_slice(&self.values.to_le_bytes());
        b[16..24].copy_from_slice(&self.memory.to_le_bytes());
        b[24..32].copy_from_slice(&self.stream_len.to_le_bytes());
        b
    }

    /// `None` for anything but a request of this protocol.
    pub fn from_bytes(b: &[u8; Self::LEN]) -> Option<Self> {
        if b[..4] != Self::MAGIC || b[4] > 1 || b[5..8] != [0; 3] {
            return None;
        }
        let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default());
        Some(Request {
            order: if b[4] == 1 {
                ByteOrder::Big
            } else {
                ByteOrder::Little
            },
            values: word(8),
            memory: word(16),
            stream_len: word(24),
        })
    }
}

/// The answer's head: whether the values follow (8 bytes each, in the
/// requested order) or a refusal message of `message_len` bytes, and
/// whether the child will serve no further request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Response {
    pub ok: bool,
    pub retire: bool,
    pub message_len: u32,
}

impl Response {
    pub const LEN: usize = 12;
    const MAGIC: [u8; 4] = *b"SZ3A";

    pub fn to_bytes(self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[..4].copy_from_slice(&Self::MAGIC);
        b[4] = u8::from(self.ok);
        b[5] = u8::from(self.retire);
        b[8..12].copy_from_slice(&self.message_len.to_le_bytes());
        b
    }

    /// `None` for anything but a response of this protocol.
    pub fn from_bytes(b: &[u8; Self::LEN]) -> Option<Self> {
        let len = u32::from_le_bytes(b[8..12].try_into().unwrap_or_default());
        if b[..4] != Self::MAGIC || b[4] > 1 || b[5] > 1 || b[6..8] != [0; 2] {
            return None;
        }
        if len as usize > MESSAGE_MAX || (b[4] == 1 && len != 0) {
            return None;
        }
        Some(Response {
            ok: b[4] == 1,
            retire: b[5] == 1,
            message_len: len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_anything_else_is_refused() {
        let q = Request {
            order: ByteOrder::Big,
            values: 1_000_000,
            memory: 1 << 30,
            stream_len: 12345,
        };
        let b = q.to_bytes();
        assert_eq!(Request::from_bytes(&b), Some(q));
        for at in [0, 4, 5] {
            let mut bad = b;
            bad[at] ^= 0x02;
            assert_eq!(Request::from_bytes(&bad), None, "{at}");
        }
        let r = Response {
            ok: false,
            retire: true,
            message_len: 17,
        };
        let b = r.to_bytes();
        assert_eq!(Response::from_bytes(&b), Some(r));
        let mut ok_with_message = b;
        ok_with_message[4] = 1;
        assert_eq!(Response::from_bytes(&ok_with_message), None);
        let mut long = b;
        long[8..12].copy_from_slice(&(MESSAGE_MAX as u32 + 1).to_le_bytes());
        assert_eq!(Response::from_bytes(&long), None);
        let mut magic = b;
        magic[0] = b'X';
        assert_eq!(Response::from_bytes(&magic), None);
    }
}
