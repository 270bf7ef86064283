//! The table of metadata rules, `testdata/metadata_lookup.json`
//! (`spec/format.md` §7.1, §7.2), read for the Rust, C and CLI runners,
//! and the message each case encodes.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use tgm::metadata::Scope;
use tgm::{Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor, Result};

/// One case: a caller's map and what follows from it.
pub struct Case {
    pub name: String,
    /// The number of objects the message holds.
    pub objects: usize,
    /// The caller's map, as JSON.
    pub metadata: Json,
    pub outcome: Outcome,
}

pub enum Outcome {
    /// `from_caller` fails with this kind, its message holding `mentions`.
    Error { kind: String, mentions: String },
    /// The message is written and these lookups read it back.
    Lookups(Vec<Lookup>),
}

pub struct Lookup {
    pub scope: Scope,
    pub path: String,
    /// The JSON expected, `None` when nothing is found.
    pub expect: Option<Json>,
}

/// Where the table is.
pub fn table_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|d| d.join("testdata/metadata_lookup.json"))
        .find(|p| p.exists())
        .expect("testdata/metadata_lookup.json above the package")
}

/// Every case of the table; panics naming what is malformed.
pub fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(table_path()).unwrap();
    let doc: Json = serde_json::from_str(&text).unwrap();
    doc["cases"]
        .as_array()
        .expect("cases is a list")
        .iter()
        .map(case)
        .collect()
}

fn case(c: &Json) -> Case {
    let name = c["name"].as_str().expect("case name").to_string();
    let metadata = c["metadata"].clone();
    let base_len = metadata
        .get("base")
        .and_then(Json::as_array)
        .map_or(0, Vec::len);
    let objects = c
        .get("objects")
        .and_then(Json::as_u64)
        .map_or(base_len.max(1), |n| n as usize);
    let outcome = match c.get("error") {
        Some(e) => Outcome::Error {
            kind: e["kind"].as_str().expect("error kind").to_string(),
            mentions: e["mentions"].as_str().expect("error mentions").to_string(),
        },
        None => Outcome::Lookups(
            c["lookups"]
                .as_array()
                .unwrap_or_else(|| panic!("{name}: neither error nor lookups"))
                .iter()
                .map(|l| lookup(&name, l))
                .collect(),
        ),
    };
    Case {
        name,
        objects,
        metadata,
        outcome,
    }
}

fn lookup(name: &str, l: &Json) -> Lookup {
    let index = |k: &str| l["scope"][k].as_u64().map(|i| i as usize);
    let scope = match &l["scope"] {
        Json::String(s) if s == "message" => Scope::Message,
        _ => match (index("object"), index("object_then_extra")) {
            (Some(i), None) => Scope::Object(i),
            (None, Some(i)) => Scope::ObjectThenExtra(i),
            _ => panic!("{name}: unknown scope {}", l["scope"]),
        },
    };
    let expect = match (l.get("value"), l.get("absent")) {
        (Some(v), None) => Some(v.clone()),
        (None, Some(Json::Bool(true))) => None,
        _ => panic!("{name}: a lookup needs value or absent: true"),
    };
    Lookup {
        scope,
        path: l["path"].as_str().expect("path").to_string(),
        expect,
    }
}

impl Case {
    /// The caller's map read by the library's caller rule.
    pub fn read_by_caller_rule(&self) -> Result<GlobalMetadata> {
        let max = tgm::Limits::default().max_cbor_depth;
        GlobalMetadata::from_caller(&tgm::cbor::Value::from_json_value(&self.metadata, max)?)
    }

    /// The message the case describes: its objects are one byte each.
    pub fn encode(&self) -> Vec<u8> {
        let meta = self.read_by_caller_rule().unwrap();
        let d = ObjectDescriptor::new(Dtype::Uint8, vec![1]);
        let objects: Vec<_> = (0..self.objects).map(|_| (&d, &[7u8][..])).collect();
        tgm::encode(&meta, &objects, &EncodeOptions::default()).unwrap()
    }

    /// The caller's map with one descriptor per object, as the C API's
    /// `metadata_json` takes it.
    pub fn c_metadata_json(&self) -> String {
        let mut m = self.metadata.clone();
        let d = serde_json::json!({
            "type": "ntensor", "ndim": 1, "shape": [1], "strides": [1],
            "dtype": "uint8", "encoding": "none", "filter": "none", "compression": "none",
        });
        m.as_object_mut()
            .expect("metadata is an object")
            .insert("descriptors".into(), Json::Array(vec![d; self.objects]));
        m.to_string()
    }
}
