//! The path a request asks for, normalised before it is routed: only the
//! origin form (`/…`, RFC 9112 §3.2.1), percent-escapes decoded once, and
//! no segment that is empty, `.` or `..` (escaped or not), no backslash
//! and no control character; anything else is refused rather than
//! rewritten (`spec/wasm.md` §3).

/// A decoded request path, safe to route.
#[derive(Debug, PartialEq, Eq)]
pub struct Target(String);

impl Target {
    /// The path of request target `raw` (query and fragment dropped);
    /// the error is the reason for a `400`.
    pub fn parse(raw: &str) -> Result<Target, &'static str> {
        let path = raw.split(['?', '#']).next().unwrap_or("");
        if !path.starts_with('/') {
            return Err("the request target must be a path starting with /");
        }
        let decoded = decode(path)?;
        if decoded.chars().any(|c| c == '\\' || c.is_control()) {
            return Err("the request path holds a backslash or a control character");
        }
        let segments: Vec<&str> = decoded[1..].split('/').collect();
        for (i, s) in segments.iter().enumerate() {
            // A trailing slash (an empty last segment) names a folder,
            // which is simply not found; inside the path it is refused.
            let empty = s.is_empty() && i + 1 != segments.len();
            if empty || *s == "." || *s == ".." {
                return Err("the request path holds an empty, . or .. segment");
            }
        }
        Ok(Target(decoded))
    }

    /// The decoded path.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Decodes `%XX` escapes; a malformed escape, or bytes that are not
/// UTF-8 once decoded, is an error.
fn decode(path: &str) -> Result<String, &'static str> {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .ok_or("a malformed percent-escape")?;
            let hex = std::str::from_utf8(hex).map_err(|_| "a malformed percent-escape")?;
            let b = u8::from_str_radix(hex, 16).map_err(|_| "a malformed percent-escape")?;
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the request path is not UTF-8 once decoded")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_paths_pass_decoded_and_traversals_are_refused() {
        for (raw, path) in [
            ("/", "/"),
            ("/archives.json?x=1", "/archives.json"),
            ("/pkg/tgm%2Ejs", "/pkg/tgm.js"),
            ("/pkg/", "/pkg/"),
            ("/data/0.tgm#frag", "/data/0.tgm"),
        ] {
            assert_eq!(Target::parse(raw).map(|t| t.0), Ok(path.into()), "{raw}");
        }
        for bad in [
            "/pkg/../viewer/index.html",
            "/pkg/%2e%2e/viewer/index.html",
            "/pkg/%2E%2E%2Fviewer%2Findex.html",
            "/pkg/..%2f..%2fetc%2fpasswd",
            "/pkg/..%5c..%5cetc",
            "/pkg/..\\etc",
            "/./pkg/tgm.js",
            "//etc/passwd",
            "/pkg//etc/passwd",
            "/%2fetc/passwd",
            "/data/0.tgm/..",
            "/pkg/%00",
            "/pkg/%zz",
            "/pkg/%2",
            "/pkg/%ff",
            "http://evil.example/archives.json",
            "*",
            "",
            "etc/passwd",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
    }
}
