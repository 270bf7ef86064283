//! The tgm reader in WebAssembly (wasm-bindgen): messages, objects, element
//! ranges and metadata of a Tensogram archive, from bytes in memory (an
//! `ArrayBuffer`) or by HTTP range requests. The JavaScript wrapper
//! (`wasm/pkg/tgm.js`) does the fetching: an operation on an archive read
//! by ranges either answers or names the byte ranges it needs, which the
//! wrapper fetches and supplies before running it again
//! (`spec/wasm.md`). The reading is the library's sans-I/O reader,
//! [`tgm::file::SteppedFile`].
#![deny(unsafe_code)]

pub mod colour;

use bytes::Bytes;
use tgm::file::{SourceHints, Step, SteppedFile};
use tgm::{DecodeOptions, Limits};
use wasm_bindgen::prelude::*;

/// Decode options of the reader: elements in the host's byte order (little
/// endian in WebAssembly), NaN and infinities restored, digests checked.
fn decode_options() -> DecodeOptions {
    DecodeOptions::default()
}

/// An archive open for reading.
#[wasm_bindgen]
pub struct Archive {
    reader: SteppedFile,
    /// Whether all its bytes were given at once (nothing is supplied).
    in_memory: bool,
    /// Byte ranges the last operation needed, `[start, end, start, end, …]`.
    need: Vec<f64>,
}

/// What a JavaScript caller gets from one operation: the value, or an
/// error; when ranges are needed the error says so and
/// [`Archive::needed`] lists them.
fn answer<T>(a: &mut Archive, step: Step<T>) -> Result<T, JsError> {
    a.need.clear();
    match step {
        Step::Done(r) => r.map_err(|e| JsError::new(&e.to_string())),
        Step::Need(ranges) => {
            for r in &ranges {
                a.need.push(r.start as f64);
                a.need.push(r.end as f64);
            }
            Err(JsError::new(
                "tgm: byte ranges needed; fetch them and retry",
            ))
        }
    }
}

/// A JavaScript number that must be a whole number from 0 to 2^53 − 1
/// (an offset or a length).
fn whole(v: f64, what: &str) -> Result<u64, JsError> {
    const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
    if v.is_finite() && (0.0..=MAX_SAFE).contains(&v) && v.fract() == 0.0 {
        Ok(v as u64)
    } else {
        Err(JsError::new(&format!("{what} {v} is not a whole number")))
    }
}

/// A JavaScript number that must be an index.
fn index(v: f64, what: &str) -> Result<usize, JsError> {
    usize::try_from(whole(v, what)?)
        .map_err(|_| JsError::new(&format!("{what} {v} is too large an index")))
}

#[wasm_bindgen]
impl Archive {
    /// An archive whose bytes are all in `bytes` (copied into WebAssembly
    /// memory once).
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(bytes: &[u8]) -> Archive {
        Archive {
            reader: SteppedFile::in_memory(Bytes::copy_from_slice(bytes), &Limits::default()),
            in_memory: true,
            need: Vec::new(),
        }
    }

    /// An archive of `length` bytes read by ranges, `head_window` bytes at
    /// a time while locating messages.
    #[wasm_bindgen(js_name = byRanges)]
    pub fn by_ranges(length: f64, head_window: f64) -> Result<Archive, JsError> {
        let len = whole(length, "length")?;
        let window = whole(head_window, "head window")?;
        // Frame digests are checked on whole-frame reads, as for any
        // remote source (`spec/remote.md` §5).
        let hints = SourceHints {
            requires_verification: true,
            readahead: window,
            ..SourceHints::default()
        };
        Ok(Archive {
            reader: SteppedFile::new(len, hints, &Limits::default()),
            in_memory: false,
            need: Vec::new(),
        })
    }

    /// Keeps `bytes` fetched from `offset` (archives read by ranges).
    pub fn supply(&mut self, offset: f64, bytes: &[u8]) -> Result<(), JsError> {
        let at = whole(offset, "offset")?;
        if self.in_memory {
            return Err(JsError::new("this archive is in memory; nothing to supply"));
        }
        self.reader
            .supply(at, Bytes::copy_from_slice(bytes))
            .map_err(|e| JsError::new(&e.to_string()))
    }

    /// The byte ranges the last operation needed, as `[start, end, …]`;
    /// empty when it answered.
    pub fn needed(&self) -> Vec<f64> {
        self.need.clone()
    }

    /// Bytes fetched and kept so far (archives read by ranges).
    pub fn held(&self) -> f64 {
        if self.in_memory {
            0.0
        } else {
            self.reader.held() as f64
        }
    }

    /// The number of messages.
    #[wasm_bindgen(js_name = messageCount)]
    pub fn message_count(&mut self) -> Result<usize, JsError> {
        let s = self.reader.run(|f| Ok(f.num_messages()));
        answer(self, s)
    }

    /// The message's metadata as JSON text.
    #[wasm_bindgen(js_name = metadataJson)]
    pub fn metadata_json(&mut self, message: f64) -> Result<String, JsError> {
        let m = index(message, "message")?;
        let opts = decode_options();
        let s = self
            .reader
            .run(|f| Ok(f.metadata(m, &opts)?.to_json_value().to_string()));
        answer(self, s)
    }

    /// The message's object descriptors as JSON text (an array).
    #[wasm_bindgen(js_name = descriptorsJson)]
    pub fn descriptors_json(&mut self, message: f64) -> Result<String, JsError> {
        let m = index(message, "message")?;
        let s = self.reader.run(|f| {
            let d = f.descriptors(m)?;
            let v: Vec<_> = d.iter().map(|d| d.to_value().to_json_value()).collect();
            Ok(serde_json::Value::Array(v).to_string())
        });
        answer(self, s)
    }

    /// The dataset view of the message's objects as JSON text (an array,
    /// one entry per object: name, dimensions, stacking keys with times
    /// and levels, attributes, voxel geometry), the library's rule
    /// (`tgm::view::message_view_json`, `spec/kerchunk.md` §2.2).
    #[wasm_bindgen(js_name = viewJson)]
    pub fn view_json(&mut self, message: f64) -> Result<String, JsError> {
        let m = index(message, "message")?;
        let opts = decode_options();
        let s = self.reader.run(|f| {
            let meta = f.metadata(m, &opts)?;
            let descs = f.descriptors(m)?;
            Ok(tgm::view::message_view_json(&meta, &descs, m).to_string())
        });
        answer(self, s)
    }

    /// Where the rows and columns of object `object` lie, as JSON text:
    /// `{"latitudes": […], "longitudes": […]}` in stored order when its
    /// metadata has a `geography` map of a regular grid (the library's
    /// rule, `tgm::view::regular_axes`), else `null`.
    #[wasm_bindgen(js_name = gridAxesJson)]
    pub fn grid_axes_json(&mut self, message: f64, object: f64) -> Result<String, JsError> {
        let (m, o) = (index(message, "message")?, index(object, "object")?);
        let opts = decode_options();
        let s = self.reader.run(|f| {
            let meta = f.metadata(m, &opts)?;
            let descs = f.descriptors(m)?;
            let axes = match (
                meta.base.get(o).and_then(|e| e.get("geography")),
                descs.get(o),
            ) {
                (Some(g), Some(d)) => tgm::view::regular_axes(g, &d.shape),
                _ => None,
            };
            Ok(match axes {
                Some(a) => serde_json::json!({
                    "latitudes": a.latitudes,
                    "longitudes": a.longitudes,
                })
                .to_string(),
                None => "null".to_string(),
            })
        });
        answer(self, s)
    }

    /// Object `object` of message `message`, decoded: its elements' bytes
    /// in little-endian order.
    #[wasm_bindgen(js_name = decodeObject)]
    pub fn decode_object(&mut self, message: f64, object: f64) -> Result<Vec<u8>, JsError> {
        let (m, o) = (index(message, "message")?, index(object, "object")?);
        let s = self
            .reader
            .run(|f| Ok(f.decode_object(m, o, &decode_options())?.data));
        answer(self, s)
    }

    /// Element ranges of an object, given as `[first, count, first,
    /// count, …]`: one byte array per range.
    #[wasm_bindgen(js_name = decodeRange)]
    pub fn decode_range(
        &mut self,
        message: f64,
        object: f64,
        ranges: Vec<f64>,
    ) -> Result<Vec<js_sys::Uint8Array>, JsError> {
        let (m, o) = (index(message, "message")?, index(object, "object")?);
        if !ranges.len().is_multiple_of(2) {
            return Err(JsError::new("ranges come in pairs: first, count"));
        }
        let pairs = ranges
            .chunks_exact(2)
            .map(|p| Ok((whole(p[0], "first")?, whole(p[1], "count")?)))
            .collect::<Result<Vec<_>, JsError>>()?;
        let opts = decode_options();
        let s = self.reader.run(|f| f.decode_range(m, o, &pairs, &opts));
        let parts = answer(self, s)?;
        Ok(parts
            .iter()
            .map(|p| js_sys::Uint8Array::from(&p[..]))
            .collect())
    }
}

/// The colour map `name` (viridis, cividis, rdbu): 256 entries of red,
/// green, blue bytes.
#[wasm_bindgen]
pub fn colormap(name: &str) -> Result<Vec<u8>, JsError> {
    colour::table(name).ok_or_else(|| JsError::new(&format!("no colour map {name:?}")))
}
