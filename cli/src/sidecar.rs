//! The JSON sidecar `export` writes beside a message's arrays and `import`
//! reads back, so that export → import keeps every metadata key.
//!
//! ```json
//! {"format": "tgm-export/1", "message": 0,
//!  "extra": {...},
//!  "objects": [{"file": "m0_2t.npy", "metadata": {...}, "descriptor": {...}}]}
//! ```
//! `descriptor` is informative; `file` is relative to the sidecar.

use std::path::{Path, PathBuf};

use tgm::{GlobalMetadata, Map};

use crate::error::{CliError, CliResult, WithPath};
use crate::meta_args::{map_from_json, map_to_json};

/// Format tag of the sidecar.
pub const FORMAT: &str = "tgm-export/1";

/// One object entry.
pub struct SidecarObject {
    /// Array file, relative to the sidecar.
    pub file: String,
    /// The object's base entry (no `_reserved_`).
    pub metadata: Map,
    /// The stored descriptor, as JSON (informative).
    pub descriptor: serde_json::Value,
}

/// One message.
pub struct Sidecar {
    /// Message index in the exported file.
    pub message: usize,
    /// `_extra_` section.
    pub extra: Map,
    /// Objects in order.
    pub objects: Vec<SidecarObject>,
}

impl Sidecar {
    /// JSON text.
    pub fn to_json(&self) -> String {
        let objects: Vec<serde_json::Value> = self
            .objects
            .iter()
            .map(|o| {
                serde_json::json!({
                    "file": o.file,
                    "metadata": map_to_json(&o.metadata),
                    "descriptor": o.descriptor,
                })
            })
            .collect();
        let v = serde_json::json!({
            "format": FORMAT,
            "message": self.message,
            "extra": map_to_json(&self.extra),
            "objects": objects,
        });
        let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Reads a sidecar file.
    pub fn read(path: &Path) -> CliResult<Self> {
        let text = std::fs::read_to_string(path).at(path)?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| CliError::Failed(format!("{}: not JSON: {e}", path.display())))?;
        let bad = |why: &str| {
            CliError::Failed(format!(
                "{}: not a tgm export sidecar: {why}",
                path.display()
            ))
        };
        if v.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            return Err(bad("format is not tgm-export/1"));
        }
        let extra = match v.get("extra") {
            Some(e) => map_from_json(e).at(path)?,
            None => Map::new(),
        };
        let objects = v
            .get("objects")
            .and_then(|o| o.as_array())
            .ok_or_else(|| bad("no objects array"))?
            .iter()
            .map(|o| {
                let file = o
                    .get("file")
                    .and_then(|f| f.as_str())
                    .filter(|f| !f.is_empty() && !f.contains('/') && *f != "..")
                    .ok_or_else(|| bad("an object has no plain file name"))?
                    .to_string();
                let metadata = match o.get("metadata") {
                    Some(m) => map_from_json(m).at(path)?,
                    None => Map::new(),
                };
                Ok(SidecarObject {
                    file,
                    metadata,
                    descriptor: o.get("descriptor").cloned().unwrap_or_default(),
                })
            })
            .collect::<CliResult<Vec<_>>>()?;
        Ok(Sidecar {
            message: v.get("message").and_then(|m| m.as_u64()).unwrap_or(0) as usize,
            extra,
            objects,
        })
    }

    /// The array files, resolved against the sidecar's directory.
    pub fn files(&self, sidecar: &Path) -> Vec<PathBuf> {
        let dir = sidecar.parent().unwrap_or(Path::new("."));
        self.objects.iter().map(|o| dir.join(&o.file)).collect()
    }

    /// Message metadata holding the objects' entries and `_extra_`.
    pub fn metadata(&self) -> GlobalMetadata {
        let mut m =
            GlobalMetadata::with_base(self.objects.iter().map(|o| o.metadata.clone()).collect());
        m.extra = self.extra.clone();
        m
    }
}

/// The sidecars of an export directory, in message order.
pub fn in_dir(dir: &Path) -> CliResult<Vec<PathBuf>> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).at(dir)? {
        let p = e.at(dir)?.path();
        let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some(num) = n.strip_prefix('m').and_then(|r| r.strip_suffix(".json")) {
            if let Ok(i) = num.parse::<usize>() {
                found.push((i, p));
            }
        }
    }
    if found.is_empty() {
        return Err(CliError::Failed(format!(
            "{}: no export sidecar (m<N>.json) found",
            dir.display()
        )));
    }
    found.sort();
    Ok(found.into_iter().map(|(_, p)| p).collect())
}
