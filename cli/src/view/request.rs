//! The head of an HTTP/1.1 request (RFC 9112 §2–§5): request line and
//! header fields, read up to a size limit before anything is answered.

/// The longest request head accepted (request line and fields).
pub const MAX_HEAD: usize = 16 * 1024;

/// A parsed request head.
#[derive(Debug)]
pub struct Request {
    /// `GET`, `HEAD`, …
    pub method: String,
    /// The request target as sent (`/data/0.tgm?x`).
    pub target: String,
    /// The minor version of `HTTP/1.x`.
    pub minor: u8,
    /// Field names and values, in order, values trimmed.
    pub fields: Vec<(String, String)>,
}

impl Request {
    /// Parses `head` (without the blank line ending it); the error is the
    /// reason for a `400`.
    pub fn parse(head: &[u8]) -> Result<Request, &'static str> {
        let text = std::str::from_utf8(head).map_err(|_| "the request head is not text")?;
        let mut lines = text.split("\r\n");
        let line = lines.next().unwrap_or("");
        let mut parts = line.split(' ');
        let (Some(method), Some(target), Some(version), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err("malformed request line");
        };
        let minor = match version {
            "HTTP/1.1" => 1,
            "HTTP/1.0" => 0,
            _ => return Err("only HTTP/1.0 and HTTP/1.1"),
        };
        if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err("malformed method");
        }
        let mut fields = Vec::new();
        for l in lines {
            let Some((name, value)) = l.split_once(':') else {
                return Err("malformed header field");
            };
            let token = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
            if !token {
                return Err("malformed header field name");
            }
            fields.push((
                name.to_string(),
                value.trim_matches([' ', '\t']).to_string(),
            ));
        }
        Ok(Request {
            method: method.to_string(),
            target: target.to_string(),
            minor,
            fields,
        })
    }

    /// Every value of field `name` (case-insensitive), in order.
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.fields
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The first value of field `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The target's path, without query or fragment.
    pub fn path(&self) -> &str {
        self.target.split(['?', '#']).next().unwrap_or("")
    }

    /// Whether the client will send a body this server does not read.
    pub fn has_body(&self) -> bool {
        self.header("Transfer-Encoding").is_some() || self.all("Content-Length").any(|v| v != "0")
    }

    /// Whether the connection stays open after the answer (RFC 9112 §9.3).
    pub fn keep_alive(&self) -> bool {
        let close = self
            .all("Connection")
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case("close"));
        self.minor == 1 && !close
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_parse_and_malformed_ones_are_refused() {
        let r = Request::parse(
            b"GET /data/0.tgm?x HTTP/1.1\r\nHost: 127.0.0.1:1\r\nRANGE:  bytes=0-1 ",
        )
        .unwrap();
        assert_eq!(r.path(), "/data/0.tgm");
        assert_eq!(r.header("range"), Some("bytes=0-1"));
        assert!(r.keep_alive() && !r.has_body());
        for bad in [
            &b"GET / HTTP/2\r\nHost: a"[..],
            b"GET /  HTTP/1.1",
            b"get / HTTP/1.1",
            b"GET / HTTP/1.1\r\nNo colon",
            b"GET / HTTP/1.1\r\n folded: x",
            b"GET / HTTP/1.1\r\nBad Name: x",
        ] {
            assert!(
                Request::parse(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let r = Request::parse(b"GET / HTTP/1.1\r\nConnection: keep-alive, Close").unwrap();
        assert!(!r.keep_alive());
        let r = Request::parse(b"GET / HTTP/1.0").unwrap();
        assert!(!r.keep_alive());
        let r = Request::parse(b"GET / HTTP/1.1\r\nContent-Length: 5").unwrap();
        assert!(r.has_body());
    }
}
