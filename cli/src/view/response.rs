//! An answer and its writing (RFC 9112 §4, §6): status line, fields,
//! `Content-Length`, `Date`, `Connection`, then the body unless the
//! request was `HEAD`.

use std::fs::File;
use std::io::{self, Read, Write};
use std::time::SystemTime;

/// What follows the head.
#[derive(Debug)]
pub enum Body {
    /// Bytes held in memory.
    Bytes(Vec<u8>),
    /// Bytes built into the executable.
    Static(&'static [u8]),
    /// `len` bytes of an open file from its current position.
    File(File, u64),
}

/// An answer.
#[derive(Debug)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Fields other than `Content-Length`, `Date` and `Connection`.
    pub fields: Vec<(&'static str, String)>,
    /// The body.
    pub body: Body,
}

impl Response {
    /// An answer with a body in memory.
    pub fn bytes(status: u16, content_type: &str, body: Vec<u8>) -> Response {
        Response {
            status,
            fields: vec![("Content-Type", content_type.to_string())],
            body: Body::Bytes(body),
        }
    }

    /// A short text, for errors.
    pub fn text(status: u16, body: &str) -> Response {
        Response::bytes(
            status,
            "text/plain; charset=utf-8",
            body.as_bytes().to_vec(),
        )
    }

    /// Adds a field.
    pub fn with(mut self, name: &'static str, value: impl Into<String>) -> Response {
        self.fields.push((name, value.into()));
        self
    }

    fn len(&self) -> u64 {
        match &self.body {
            Body::Bytes(b) => b.len() as u64,
            Body::Static(b) => b.len() as u64,
            Body::File(_, n) => *n,
        }
    }

    /// Writes the answer; `head_only` for `HEAD`, `keep` whether the
    /// connection stays open.
    pub fn write_to(self, out: &mut impl Write, head_only: bool, keep: bool) -> io::Result<()> {
        let mut head = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        for (k, v) in &self.fields {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str(&format!(
            "Content-Length: {}\r\nDate: {}\r\nConnection: {}\r\n\r\n",
            self.len(),
            httpdate::fmt_http_date(SystemTime::now()),
            if keep { "keep-alive" } else { "close" }
        ));
        out.write_all(head.as_bytes())?;
        if !head_only {
            match self.body {
                Body::Bytes(b) => out.write_all(&b)?,
                Body::Static(b) => out.write_all(b)?,
                Body::File(f, n) => {
                    let sent = io::copy(&mut f.take(n), out)?;
                    if sent != n {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "the file became shorter while it was sent",
                        ));
                    }
                }
            }
        }
        out.flush()
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        206 => "Partial Content",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        412 => "Precondition Failed",
        416 => "Range Not Satisfiable",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}
