//! Compiles the C, C++ and Fortran programs under `tests/c`, `tests/cpp` and
//! `tests/fortran` with the system compilers against the cdylib this package
//! builds, and runs them: the whole API (`api.c`, `api.cpp`), the Fortran
//! module (`fortran/tgm.f90`), the C examples of the README and the book, and files exchanged
//! with the Rust API and with the reference crate (`interop.c`).
//!
//! `TGM_FFI_CHECK=valgrind` runs every program under valgrind (leaks are
//! errors); `TGM_FFI_CHECK=asan` builds them with AddressSanitizer and
//! UndefinedBehaviorSanitizer. Without a compiler (`cc`, `c++`, `gfortran`)
//! its tests skip with a message.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../tests/common/servers.rs"]
mod servers;

#[path = "../../tests/common/metadata_table.rs"]
mod metadata_table;

use tgm::pipeline::PipelineBuilder;
use tgm::{ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

/// Started with the helper's argument, this executable serves as the SZ3
/// helper the programs name in `TGM_SZ3_HELPER` (its `helper()` is for
/// Rust callers).
#[cfg(all(feature = "sz3", target_os = "linux", target_env = "gnu"))]
#[allow(dead_code)]
#[path = "../../tests/common/sz3_self_helper.rs"]
mod sz3_self_helper;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The directory holding `libtgm_ffi.so`: this test's own `deps/`.
/// Building an integration test compiles the package's library with every
/// crate type it declares, the cdylib included, into that directory, with
/// the features and profile of this very test build; so the programs
/// link the library under test and no second build (with other features)
/// overwrites it.
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe.parent().expect("the test's directory").to_path_buf();
    assert!(
        dir.join("libtgm_ffi.so").exists(),
        "{} has no libtgm_ffi.so: the test build did not make the cdylib",
        dir.display()
    );
    dir
}

/// Whether the library under test was built with sz3 (by this package's
/// feature or by another's, unified into the same build).
fn library_holds_sz3() -> bool {
    tgm::doctor::features()
        .iter()
        .any(|(name, backend)| *name == "sz3" && backend.is_some())
}

#[derive(Clone, Copy, PartialEq)]
enum Check {
    Plain,
    Valgrind,
    Asan,
}

fn check_mode() -> Check {
    match std::env::var("TGM_FFI_CHECK").as_deref() {
        Ok("valgrind") => Check::Valgrind,
        Ok("asan") => Check::Asan,
        Ok("") | Err(_) => Check::Plain,
        Ok(other) => panic!("TGM_FFI_CHECK={other:?}: expected valgrind or asan"),
    }
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A compiled test program.
struct Program {
    exe: PathBuf,
    dir: PathBuf,
    mode: Check,
}

/// Compiles `sources` (relative to `tests/`) with `compiler` into `dir`;
/// `None` (after saying why) when the compiler is missing.
fn compile(
    compiler: &str,
    std: &str,
    sources: &[PathBuf],
    name: &str,
    dir: &Path,
) -> Option<Program> {
    if !have(compiler) {
        servers::skip::skip(&format!("{name}: no `{compiler}` on PATH"));
        return None;
    }
    let mode = check_mode();
    if mode == Check::Valgrind && !have("valgrind") {
        panic!("TGM_FFI_CHECK=valgrind but valgrind is not installed");
    }
    let lib = lib_dir();
    // The cdylib's SONAME is its installed name (build.rs), which the
    // programs look for at run time: give them a link by that name.
    let soname = dir.join("libtgm.so.0");
    if !soname.exists() {
        std::os::unix::fs::symlink(lib.join("libtgm_ffi.so"), &soname).unwrap();
    }
    let exe = dir.join(name);
    let mut cmd = Command::new(compiler);
    cmd.arg(format!("-std={std}"))
        .args(["-g", "-Wall", "-Wextra", "-Werror", "-pthread"])
        .arg("-I")
        .arg(manifest_dir().join("include"))
        .arg("-I")
        .arg(manifest_dir().join("tests/c"));
    if compiler == "gfortran" {
        // Module files go with the program, not into the working directory.
        cmd.arg("-J").arg(dir);
    }
    if mode == Check::Asan {
        cmd.args([
            "-fsanitize=address,undefined",
            "-fno-omit-frame-pointer",
            "-fno-sanitize-recover=all",
        ]);
    }
    cmd.args(sources)
        .arg("-L")
        .arg(&lib)
        .arg("-ltgm_ffi")
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .arg("-lm")
        .arg("-o")
        .arg(&exe);
    let out = cmd.output().expect("run the compiler");
    assert!(
        out.status.success(),
        "{compiler} failed on {name}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(Program {
        exe,
        dir: dir.to_path_buf(),
        mode,
    })
}

impl Program {
    /// Runs the program with `args`; panics with its output unless it
    /// exits 0 (and, under valgrind, with no memory errors or leaks).
    /// Returns its output.
    fn run(&self, args: &[&str]) -> String {
        let mut cmd = match self.mode {
            Check::Valgrind => {
                let mut c = Command::new("valgrind");
                c.args(["--error-exitcode=1", "--leak-check=full", "-q"])
                    .arg(format!(
                        "--suppressions={}",
                        manifest_dir().join("tests/valgrind.supp").display()
                    ))
                    .arg(&self.exe);
                c
            }
            _ => Command::new(&self.exe),
        };
        // A library built with sz3 decodes it in a helper process, which a
        // C program names in TGM_SZ3_HELPER: this test executable serves
        // as one (sz3_self_helper).
        #[cfg(all(feature = "sz3", target_os = "linux", target_env = "gnu"))]
        cmd.env(tgm::sz3_child::HELPER_ENV, std::env::current_exe().unwrap());
        // A library that holds sz3 only through another package's features
        // (`cargo test --workspace` unifies them) has no helper this test
        // can serve: the programs are told so, and expect sz3's documented
        // refusal rather than values (api.c's doctor check).
        if library_holds_sz3() && !cfg!(feature = "sz3") {
            cmd.env("TGM_TEST_SZ3_WITHOUT_HELPER", "1")
                .env_remove("TGM_SZ3_HELPER");
        }
        cmd.args(args)
            .current_dir(&self.dir)
            .env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
            .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1");
        let out = cmd.output().expect("run the test program");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success(),
            "{} {args:?} failed ({}):\n{text}",
            self.exe.display(),
            out.status
        );
        println!("{text}");
        text
    }
}

fn test_source(rel: &str) -> PathBuf {
    manifest_dir().join("tests").join(rel)
}

#[test]
fn c_program_exercises_the_whole_api() {
    let dir = tempfile::tempdir().unwrap();
    if let Some(p) = compile("cc", "c11", &[test_source("c/api.c")], "api", dir.path()) {
        p.run(&[dir.path().to_str().unwrap()]);
    }
}

/// The table of metadata rules (`testdata/metadata_lookup.json`) through
/// the C API: each case is encoded by `tgm_encode` and read back with
/// `tgm_metadata_get` (message scope) and `tgm_metadata_get_at` (object
/// scope) by `c/metadata_table.c`; the third scope has no C getter.
#[test]
fn c_program_runs_the_metadata_table() {
    use metadata_table::Outcome;
    use tgm::metadata::Scope;
    let dir = tempfile::tempdir().unwrap();
    let Some(p) = compile(
        "cc",
        "c11",
        &[test_source("c/metadata_table.c")],
        "metadata_table",
        dir.path(),
    ) else {
        return;
    };
    let mut checked = 0;
    for case in metadata_table::cases() {
        let name = &case.name;
        let n = case.objects.to_string();
        let json = case.c_metadata_json();
        let mut args = vec![n.clone(), json];
        let mut expected = Vec::new();
        if let Outcome::Lookups(lookups) = &case.outcome {
            for l in lookups {
                let scope = match l.scope {
                    Scope::Message => "message".to_string(),
                    Scope::Object(i) => format!("object:{i}"),
                    Scope::ObjectThenExtra(_) => continue,
                };
                args.extend([scope, l.path.clone()]);
                expected.push(l);
            }
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = p.run(&args);
        let lines: Vec<&str> = out.lines().collect();
        match &case.outcome {
            Outcome::Error { kind, mentions } => {
                assert_eq!(kind, "metadata");
                let code = format!("error {} ", tgm_ffi::TgmError::Metadata as i32);
                assert!(
                    lines.len() == 1 && lines[0].starts_with(&code) && lines[0].contains(mentions),
                    "{name}: {out}"
                );
            }
            Outcome::Lookups(_) => {
                assert_eq!(lines.len(), expected.len(), "{name}: {out}");
                for (line, l) in lines.iter().zip(&expected) {
                    let got = (*line != "absent").then(|| {
                        serde_json::from_str::<serde_json::Value>(line)
                            .unwrap_or_else(|e| panic!("{name}: {line}: {e}"))
                    });
                    assert_eq!(got, l.expect, "{name}: {:?} {:?}", l.scope, l.path);
                }
            }
        }
        checked += 1;
    }
    assert!(checked > 0, "the table has cases");
}

#[test]
fn cpp_program_uses_the_c_api() {
    let dir = tempfile::tempdir().unwrap();
    if let Some(p) = compile(
        "c++",
        "c++17",
        &[test_source("cpp/api.cpp")],
        "api_cpp",
        dir.path(),
    ) {
        p.run(&[dir.path().to_str().unwrap()]);
    }
}

#[test]
fn fortran_module_encodes_decodes_and_iterates() {
    let dir = tempfile::tempdir().unwrap();
    let sources = [
        manifest_dir().join("fortran/tgm.f90"),
        test_source("fortran/roundtrip.f90"),
    ];
    if let Some(p) = compile("gfortran", "f2008", &sources, "roundtrip", dir.path()) {
        p.run(&[dir.path().to_str().unwrap()]);
    }
}

/// The first ```lang block after the line `heading` of `doc` (a path
/// from the repository's root).
fn doc_example(doc: &str, heading: &str, lang: &str) -> String {
    let text =
        "\n".to_string() + &std::fs::read_to_string(manifest_dir().join("..").join(doc)).unwrap();
    let section = text
        .split(&format!("\n{heading}\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("{doc} has a {heading:?} line"));
    let fence = format!("```{lang}\n");
    let start = section.find(&fence).expect("the section has the block") + fence.len();
    let len = section[start..].find("```").expect("the block ends");
    section[start..start + len].to_string()
}

#[test]
fn readme_c_example_runs_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("readme.c");
    std::fs::write(&src, doc_example("README.md", "## C", "c")).unwrap();
    if let Some(p) = compile("cc", "c11", &[src], "readme", dir.path()) {
        let out = p.run(&[]);
        assert!(out.contains("4 values, the last 274.00"), "{out}");
    }
}

#[test]
fn book_c_example_runs_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("book.c");
    let example = doc_example("docs/src/guide/c-fortran.md", "# C, C++ and Fortran", "c");
    std::fs::write(&src, example).unwrap();
    if let Some(p) = compile("cc", "c11", &[src], "book", dir.path()) {
        p.run(&[dir.path().join("example.tgm").to_str().unwrap()]);
    }
}

#[test]
fn book_fortran_example_runs_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("example.f90");
    let example = doc_example(
        "docs/src/guide/c-fortran.md",
        "# C, C++ and Fortran",
        "fortran",
    );
    std::fs::write(&src, example).unwrap();
    let sources = [manifest_dir().join("fortran/tgm.f90"), src];
    if let Some(p) = compile("gfortran", "f2008", &sources, "example", dir.path()) {
        p.run(&[]);
        assert!(dir.path().join("example.tgm").exists());
    }
}

// The interchange file described at the top of tests/c/interop.c.

fn grid() -> Vec<f64> {
    (0..12).map(|i| i as f64 / 2.0 - 1.0).collect()
}

fn field() -> Vec<f64> {
    (0..100)
        .map(|i| 270.25 + 10.0 * (i as f64 / 10.0).sin())
        .collect()
}

const U16: [u16; 5] = [1, 2, 300, 4000, 65535];

fn ne_bytes<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    v.iter().flat_map(|x| f(*x)).collect()
}

fn json_meta(v: serde_json::Value) -> GlobalMetadata {
    GlobalMetadata::from_json_value(&v).unwrap()
}

/// Writes the interchange file with the tgm Rust API.
fn write_with_tgm(path: &Path) {
    let g = ObjectDescriptor::new(Dtype::Float64, vec![3, 4]).with_byte_order(ByteOrder::Little);
    let u =
        ObjectDescriptor::new(Dtype::Uint16, vec![5]).with_pipeline(&PipelineBuilder::new().lz4());
    let meta0 = json_meta(serde_json::json!({
        "base": [{"mars": {"param": "2t", "step": 12}}, {"mars": {"param": "lsm"}}],
        "_extra_": {"origin": "tgm"},
    }));
    let opts = EncodeOptions::default();
    let gb = ne_bytes(&grid(), f64::to_le_bytes);
    let ub = ne_bytes(&U16, u16::to_ne_bytes);
    let mut file = tgm::encode(&meta0, &[(&g, &gb), (&u, &ub)], &opts).unwrap();
    let p = ObjectDescriptor::new(Dtype::Float64, vec![100])
        .with_pipeline(&PipelineBuilder::new().simple_packing(16));
    let meta1 = json_meta(serde_json::json!({"base": [{"name": "packed"}]}));
    let pb = ne_bytes(&field(), f64::to_ne_bytes);
    file.extend(tgm::encode(&meta1, &[(&p, &pb)], &opts).unwrap());
    std::fs::write(path, file).unwrap();
}

fn cbor_map(entries: Vec<(&str, ciborium::Value)>) -> ciborium::Value {
    ciborium::Value::Map(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
}

fn ref_desc(
    dtype: tensogram::Dtype,
    shape: &[u64],
    compression: &str,
    encoding: &str,
) -> tensogram::DataObjectDescriptor {
    let mut strides = vec![1u64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    tensogram::DataObjectDescriptor {
        obj_type: "ntensor".into(),
        ndim: shape.len() as u64,
        shape: shape.to_vec(),
        strides,
        dtype,
        byte_order: tensogram::ByteOrder::Little,
        encoding: encoding.into(),
        filter: "none".into(),
        compression: compression.into(),
        masks: None,
        params: Default::default(),
    }
}

/// Writes the interchange file with the reference crate `tensogram` 0.24.0.
fn write_with_reference(path: &Path) {
    let mars = |param: &str, step: Option<u64>| {
        let mut m = vec![("param", ciborium::Value::Text(param.into()))];
        if let Some(s) = step {
            m.push(("step", ciborium::Value::Integer(s.into())));
        }
        [("mars".to_string(), cbor_map(m))].into_iter().collect()
    };
    let meta0 = tensogram::GlobalMetadata {
        base: vec![mars("2t", Some(12)), mars("lsm", None)],
        extra: [(
            "origin".to_string(),
            ciborium::Value::Text("tensogram".into()),
        )]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    let g = ref_desc(tensogram::Dtype::Float64, &[3, 4], "none", "none");
    let u = ref_desc(tensogram::Dtype::Uint16, &[5], "lz4", "none");
    let gb = ne_bytes(&grid(), f64::to_le_bytes);
    let ub = ne_bytes(&U16, u16::to_le_bytes);
    let opts = tensogram::EncodeOptions::default();
    let mut file = tensogram::encode(&meta0, &[(&g, &gb[..]), (&u, &ub[..])], &opts).unwrap();

    let values = field();
    let pb = ne_bytes(&values, f64::to_le_bytes);
    let params = tgm::pipeline::compute_packing_params(&pb, ByteOrder::Little, 16, 0).unwrap();
    let mut p = ref_desc(tensogram::Dtype::Float64, &[100], "none", "simple_packing");
    p.params = [
        ("sp_bits_per_value", ciborium::Value::Integer(16.into())),
        (
            "sp_reference_value",
            ciborium::Value::Float(params.reference_value),
        ),
        (
            "sp_binary_scale_factor",
            ciborium::Value::Integer(params.binary_scale_factor.into()),
        ),
        (
            "sp_decimal_scale_factor",
            ciborium::Value::Integer(0.into()),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let meta1 = tensogram::GlobalMetadata {
        base: vec![
            [("name".to_string(), ciborium::Value::Text("packed".into()))]
                .into_iter()
                .collect(),
        ],
        ..Default::default()
    };
    file.extend(tensogram::encode(&meta1, &[(&p, &pb[..])], &opts).unwrap());
    std::fs::write(path, file).unwrap();
}

/// `tgm_writer_t` to an S3 bucket (s3s-fs on loopback; skipped, saying
/// so, without it): the object written reads back, an existing one is
/// kept, and a writer freed unfinished leaves nothing.
#[test]
#[ignore = "needs s3s-fs on loopback: bash .ci/remote.sh"]
fn c_writes_an_archive_to_s3() {
    let Some(s3) = servers::s3() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(p) = compile(
        "cc",
        "c11",
        &[test_source("c/remote_write.c")],
        "remote_write",
        dir.path(),
    ) else {
        return;
    };
    let existing = s3.put("ffi/existing.tgm", b"kept");
    let (new, dropped) = (s3.url("ffi/new.tgm"), s3.url("ffi/dropped.tgm"));
    let out = p.run(&[
        &s3.endpoint,
        &s3.access_key,
        &s3.secret_key,
        &new,
        &existing,
        &dropped,
    ]);
    assert!(out.contains("etag "), "{out}");
    let f = tgm::TgmFile::open(s3.bucket_dir.join("ffi/new.tgm")).unwrap();
    assert_eq!(f.num_messages(), 3);
    assert!(f.catalogue().is_some());
    let size = std::fs::metadata(s3.bucket_dir.join("ffi/new.tgm"))
        .unwrap()
        .len();
    assert!(out.contains(&format!("bytes {size}")), "{out}");
    assert_eq!(
        std::fs::read(s3.bucket_dir.join("ffi/existing.tgm")).unwrap(),
        b"kept"
    );
    assert!(!s3.bucket_dir.join("ffi/dropped.tgm").exists());
}

fn interop(dir: &Path) -> Option<Program> {
    compile("cc", "c11", &[test_source("c/interop.c")], "interop", dir)
}

#[test]
fn c_reads_what_the_rust_api_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rust.tgm");
    write_with_tgm(&path);
    if let Some(p) = interop(dir.path()) {
        p.run(&["check", path.to_str().unwrap(), "tgm"]);
    }
}

#[test]
fn c_reads_what_the_reference_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reference.tgm");
    write_with_reference(&path);
    if let Some(p) = interop(dir.path()) {
        p.run(&["check", path.to_str().unwrap(), "tensogram"]);
    }
}

#[test]
fn rust_and_the_reference_read_what_c_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.tgm");
    let Some(p) = interop(dir.path()) else {
        return;
    };
    p.run(&["write", path.to_str().unwrap()]);
    let f = tgm::TgmFile::open(&path).unwrap();
    assert_eq!(f.num_messages(), 2);
    assert!(
        f.catalogue().is_some(),
        "closing the handle ended the file with its catalogue"
    );
    let opts = DecodeOptions::default();
    let m0 = tgm::decode(&f.message_bytes(0).unwrap(), &opts).unwrap();
    assert_eq!(m0.objects[0].data, ne_bytes(&grid(), f64::to_ne_bytes));
    assert_eq!(m0.objects[1].data, ne_bytes(&U16, u16::to_ne_bytes));
    assert_eq!(m0.objects[1].descriptor.compression(), "lz4");
    assert_eq!(
        m0.metadata.get_as::<String>(Some(0), "mars.param").unwrap(),
        "2t"
    );
    assert_eq!(m0.metadata.get_as::<u64>(Some(0), "mars.step").unwrap(), 12);
    assert_eq!(
        m0.metadata.get_as::<String>(Some(1), "mars.param").unwrap(),
        "lsm"
    );
    assert_eq!(m0.metadata.get_as::<String>(None, "origin").unwrap(), "c");
    let m1 = tgm::decode(&f.message_bytes(1).unwrap(), &opts).unwrap();
    assert_eq!(m1.objects[0].descriptor.encoding(), "simple_packing");
    let packed: Vec<f64> = m1.objects[0]
        .data
        .chunks_exact(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    for (got, want) in packed.iter().zip(field()) {
        assert!((got - want).abs() < 1e-3, "{got} vs {want}");
    }
    // The reference reads the same bytes to the same values.
    let bytes = std::fs::read(&path).unwrap();
    let spans = tensogram::scan(&bytes);
    // The two messages, then the catalogue: a message of no objects.
    assert_eq!(spans.len(), 3);
    let (start, len) = spans[0];
    let ropts = tensogram::DecodeOptions {
        verify_hash: true,
        ..Default::default()
    };
    let (c, clen) = spans[2];
    let (_, none) = tensogram::decode(&bytes[c..c + clen], &ropts).unwrap();
    assert!(none.is_empty());
    let (_, robjs) = tensogram::decode(&bytes[start..start + len], &ropts).unwrap();
    assert_eq!(robjs[0].1, ne_bytes(&grid(), f64::to_ne_bytes));
    assert_eq!(robjs[1].1, ne_bytes(&U16, u16::to_ne_bytes));
}
