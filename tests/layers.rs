//! Import directions between layers: the data model (descriptor, pipeline
//! specification, metadata, dtype, CBOR) names nothing of the codec
//! runtime in `src/pipeline/` (`spec/pipeline.md` §1), the file layer
//! nothing of the tensor layer, and decoding and the wire layer nothing of
//! the file layer (`spec/files.md` §7), so no pair forms an import cycle.

use std::path::{Path, PathBuf};

/// The source files `parts` name under `src/`: a file, or every file of a
/// directory.
fn files(parts: &[&str]) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for part in parts {
        let p = root.join(part);
        if p.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                files.push(e.unwrap().path());
            }
        } else {
            files.push(p);
        }
    }
    files
}

/// Lines of `text` before its test module that name the module `path`
/// (`crate::pipeline`, but not `crate::pipeline_spec`).
fn mentions(text: &str, path: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    code.lines()
        .filter(|l| {
            l.match_indices(path)
                .any(|(i, m)| !l[i + m.len()..].starts_with('_'))
        })
        .map(str::to_string)
        .collect()
}

/// Fails naming every line of the files of `layer` that names `path`.
fn check(layer: &[&str], min_files: usize, path: &str) {
    let files = files(layer);
    assert!(files.len() >= min_files, "{files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let found = mentions(&text, path);
        assert!(found.is_empty(), "{} names {path}: {found:?}", f.display());
    }
}

#[test]
fn the_model_does_not_import_the_codec_runtime() {
    let model = [
        "descriptor.rs",
        "pipeline_spec.rs",
        "metadata.rs",
        "dtype.rs",
        "cbor",
    ];
    check(&model, 9, "crate::pipeline");
}

#[test]
fn the_file_layer_does_not_import_tensors() {
    check(&["file"], 10, "crate::tensor");
}

/// Decoding reads messages through the wire layer, which names neither
/// decode nor files, so decode → file → decode is no cycle: the file
/// layer sits above both (`spec/files.md` §7).
#[test]
fn decoding_and_the_wire_layer_do_not_import_files() {
    check(&["decode.rs", "wire"], 8, "crate::file");
    check(&["wire"], 7, "crate::decode");
}

#[test]
fn the_check_sees_an_import() {
    let text = "use crate::pipeline::Codec;\nuse crate::pipeline_spec::Szip;\n";
    assert_eq!(
        mentions(text, "crate::pipeline"),
        ["use crate::pipeline::Codec;"]
    );
    let wire = "use crate::file::locate::MessageAt;\n";
    assert_eq!(mentions(wire, "crate::file").len(), 1);
    let in_tests = "#[cfg(test)]\nuse crate::pipeline::Codec;\n";
    assert!(mentions(in_tests, "crate::pipeline").is_empty());
}
