//! Kerchunk (fsspec reference) JSON for a tgm file: a zarr v2 group whose
//! chunks are the objects' payload bytes in place, with the numcodecs codec
//! chain that decodes each to tgm's values, so that stock zarr, xarray and
//! fsspec read the file without tgm. Objects no such chain expresses are
//! listed with the reason. See `spec/kerchunk.md`.

mod codecs;
mod inline;
mod variables;

use serde_json::{json, Map as JsonMap, Value as Json};

use crate::decode::Message;
use crate::error::Result;
use crate::file::{ByteSource, TgmFile};
use crate::view;

use codecs::chain_of;
pub use inline::base64;

/// An object left out of the references, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unexpressible {
    /// Message index.
    pub message: usize,
    /// Object index in its message.
    pub object: usize,
    /// The variable name it would have had.
    pub variable: String,
    /// Why no zarr v2 codec chain decodes it to tgm's values.
    pub reason: String,
}

/// References built for one file.
#[derive(Debug, Clone)]
pub struct Refs {
    /// The fsspec reference document: `{"version": 1, "refs": {…}}`.
    pub document: Json,
    /// Objects not in it.
    pub unexpressible: Vec<Unexpressible>,
}

impl Refs {
    /// The reference document as JSON text.
    pub fn to_json(&self) -> String {
        self.document.to_string()
    }
}

/// Collects the objects of a file's messages, then writes the references.
pub struct RefsBuilder {
    target: String,
    entries: Vec<variables::Entry>,
    unexpressible: Vec<Unexpressible>,
    grids: view::TakenGrids,
}

impl RefsBuilder {
    /// A builder whose chunk references point at `target` (a path or URL
    /// fsspec opens with the reader's `remote_protocol`).
    pub fn new(target: impl Into<String>) -> Self {
        RefsBuilder {
            target: target.into(),
            entries: Vec::new(),
            unexpressible: Vec::new(),
            grids: view::TakenGrids::new(),
        }
    }

    /// Adds the objects of message `m`, parsed from the source at its
    /// absolute offset (so payload offsets are absolute).
    pub fn add_message(&mut self, m: usize, msg: &Message<'_>) -> Result<()> {
        let meta = msg.metadata()?;
        for o in 0..msg.num_objects() {
            let obj = msg.object(o)?;
            let d = obj.descriptor();
            let entry = meta.base.get(o);
            let payload = payload_of(&obj);
            let chain = chain_of(d, payload);
            // Only an object that is referenced takes its grid's names (§2.1).
            let referenced = chain.is_ok();
            let view = view::object_summary_with_grid(&meta, d, m, o, |geo, shape| {
                referenced.then(|| self.grids.dims(geo, shape)).flatten()
            });
            match chain {
                Ok(chain) => self.entries.push(variables::Entry {
                    view,
                    dataset_attrs: view::dataset_attributes(entry),
                    chain,
                    range: (obj.payload_offset(), payload.len() as u64),
                }),
                Err(reason) => self.unexpressible.push(Unexpressible {
                    message: m,
                    object: o,
                    variable: view.name,
                    reason,
                }),
            }
        }
        Ok(())
    }

    /// The reference document: `.zgroup`, the group's `.zattrs` (listing
    /// the unexpressible objects under `tgm_unexpressible`), and per
    /// variable `.zarray`, `.zattrs` and chunk references.
    pub fn finish(self) -> Refs {
        let mut store = variables::Store::new(&self.target);
        let dataset_attrs = store.add_all(self.entries, self.grids);
        let skipped: Vec<Json> = self
            .unexpressible
            .iter()
            .map(|u| {
                json!({
                    "message": u.message,
                    "object": u.object,
                    "variable": u.variable,
                    "reason": u.reason,
                })
            })
            .collect();
        let mut refs = JsonMap::new();
        refs.insert(".zgroup".into(), json!(r#"{"zarr_format":2}"#));
        let mut group_attrs = dataset_attrs;
        group_attrs.insert("tgm_unexpressible".into(), Json::Array(skipped));
        refs.insert(
            ".zattrs".into(),
            Json::String(Json::Object(group_attrs).to_string()),
        );
        refs.extend(store.refs);
        Refs {
            document: json!({"version": 1, "refs": refs}),
            unexpressible: self.unexpressible,
        }
    }
}

/// The encoded payload of an object: its payload region without any mask
/// blobs (which make it unexpressible anyway).
fn payload_of<'a>(obj: &crate::decode::Object<'a>) -> &'a [u8] {
    let region = obj.payload_region();
    let end = obj
        .descriptor()
        .masks
        .as_ref()
        .and_then(|m| m.iter().map(|(_, i)| i.offset).min())
        .and_then(|o| usize::try_from(o).ok())
        .unwrap_or(region.len())
        .min(region.len());
    &region[..end]
}

/// References for every complete message of a file or other byte
/// source (a remote object, for one); each message is read whole once.
pub fn refs_of_file<S: ByteSource>(file: &TgmFile<S>, target: &str) -> Result<Refs> {
    let mut b = RefsBuilder::new(target);
    for m in 0..file.num_messages() {
        file.with_message(m, |msg| b.add_message(m, msg))?;
    }
    Ok(b.finish())
}
