//! The table of built-in stages: one line per codec, each the entry its
//! folder defines (`super::entry`). The registry imports the codecs; no
//! codec imports the registry. See `spec/pipeline.md` §9.

use super::compression::{bitmask, blosc2, lz4, sz3, szip, zfp, zstd};
use super::encoding::simple_packing;
use super::entry::CodecEntry;
use super::filter::shuffle;
use super::none;
use super::stage::StageKind;
use crate::error::Result;

/// Every built-in stage. Adding a codec adds one line here.
pub(crate) static REGISTRY: &[CodecEntry] = &[
    none::ENCODING,
    simple_packing::ENTRY,
    none::FILTER,
    shuffle::ENTRY,
    none::COMPRESSION,
    zstd::ENTRY,
    lz4::ENTRY,
    szip::ENTRY,
    blosc2::ENTRY,
    zfp::ENTRY,
    sz3::ENTRY,
    bitmask::RLE,
    bitmask::ROARING,
];

pub(crate) use crate::pipeline_spec::codec_of_key;

/// The registered stage of `kind` called `name`.
pub(crate) fn lookup(kind: StageKind, name: &str) -> Result<&'static CodecEntry> {
    if let Some(e) = REGISTRY.iter().find(|e| e.kind == kind && e.name == name) {
        return Ok(e);
    }
    Err(crate::pipeline_spec::unknown_stage_error(kind, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::Map;
    use crate::error::ErrorKind;
    use crate::pipeline::codec::stage::Params;

    #[test]
    fn names_are_unique_per_kind_and_keys_carry_the_codec_prefix() {
        for (i, a) in REGISTRY.iter().enumerate() {
            for b in &REGISTRY[i + 1..] {
                assert!(a.kind != b.kind || a.name != b.name, "{}", a.name);
            }
            for k in a.keys {
                assert_eq!(codec_of_key(k), Some(a.name), "{k}");
            }
            if let Some(b) = a.build {
                assert_eq!(b.kind(), a.kind, "{}", a.name);
            }
        }
    }

    #[test]
    fn a_disabled_codec_names_its_feature() {
        let entry = CodecEntry {
            build: None,
            ..*lookup(StageKind::Compression, "zstd").unwrap()
        };
        let e = entry
            .compression(&Params::new(&Map::new(), "zstd"))
            .unwrap_err();
        assert_eq!(*e.kind(), ErrorKind::UnsupportedCodec);
        assert!(e.detail().contains("cargo feature \"zstd\""), "{e}");
    }

    #[test]
    fn a_stage_is_built_only_as_its_own_kind() {
        let entry = lookup(StageKind::Filter, "shuffle").unwrap();
        let mut p = Map::new();
        p.insert(
            "shuffle_element_size".into(),
            crate::cbor::Value::from(4u64),
        );
        assert_eq!(
            entry.filter(&Params::new(&p, "shuffle")).unwrap().name(),
            "shuffle"
        );
        let e = entry.compression(&Params::new(&p, "shuffle")).unwrap_err();
        assert!(e.detail().contains("shuffle is a filter stage"), "{e}");
    }

    #[test]
    fn unknown_names() {
        let e = lookup(StageKind::Filter, "bitshuffle").unwrap_err();
        assert!(e.detail().contains("unknown filter"), "{e}");
        let e = lookup(StageKind::Compression, "sz4").unwrap_err();
        assert!(e.detail().contains("unknown compression"), "{e}");
    }

    /// The stages `spec/pipeline.md` gives a section of their own:
    /// `## §2 simple_packing (encoding)`, `## §3 shuffle (filter)` and,
    /// under `## §4 Compression`, `### §4.n <name>[ and <name>][ as …]`.
    fn specified_stages() -> Vec<(StageKind, String)> {
        let spec = include_str!("../../../spec/pipeline.md");
        let mut found = Vec::new();
        for line in spec.lines() {
            if let Some(rest) = line.strip_prefix("## §") {
                let title = rest.split_once(' ').map_or("", |t| t.1);
                for (suffix, kind) in [
                    (" (encoding)", StageKind::Encoding),
                    (" (filter)", StageKind::Filter),
                ] {
                    if let Some(name) = title.strip_suffix(suffix) {
                        found.push((kind, name.to_string()));
                    }
                }
            } else if let Some(rest) = line.strip_prefix("### §4.") {
                let title = rest.split_once(' ').map_or("", |t| t.1);
                let names = title.split(" as ").next().unwrap_or("");
                for name in names.split(" and ") {
                    found.push((StageKind::Compression, name.trim().to_string()));
                }
            }
        }
        found
    }

    #[test]
    fn every_registered_codec_has_its_section_in_the_spec_and_back() {
        let specified = specified_stages();
        assert!(specified.len() >= 10, "{specified:?}");
        for e in REGISTRY.iter().filter(|e| e.name != "none") {
            assert!(
                specified.iter().any(|(k, n)| *k == e.kind && n == e.name),
                "{} {} has no section in spec/pipeline.md",
                e.kind.key(),
                e.name
            );
        }
        for (kind, name) in &specified {
            assert!(
                lookup(*kind, name).is_ok(),
                "spec/pipeline.md specifies {} {name}, which is not registered",
                kind.key()
            );
        }
    }

    #[test]
    fn the_spec_reader_finds_stages_of_every_kind() {
        let specified = specified_stages();
        for (kind, name) in [
            (StageKind::Encoding, "simple_packing"),
            (StageKind::Filter, "shuffle"),
            (StageKind::Compression, "rle"),
            (StageKind::Compression, "roaring"),
            (StageKind::Compression, "sz3"),
        ] {
            assert!(specified.contains(&(kind, name.to_string())), "{name}");
        }
        assert!(
            !specified.iter().any(|(_, n)| n.contains(' ')),
            "{specified:?}"
        );
    }
}
