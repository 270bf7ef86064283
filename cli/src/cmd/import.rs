//! `tgm import`: `.npy` files (or an export's sidecars) into messages.
//! Arrays are memory-mapped and written object by object (streaming
//! messages with back-filled lengths, `spec/format.md` §11.4), so memory stays
//! near one array.

use std::io::Write;
use std::path::{Path, PathBuf};

use tgm::file::{AppendOptions, Appender};
use tgm::{GlobalMetadata, ObjectDescriptor, StreamingEncoder};

use crate::error::{usage, CliError, CliResult, WithPath};
use crate::input::Archive;
use crate::meta_args::{apply, parse_assignment};
use crate::npy_input::NpyInput;
use crate::output::{check_output, is_dash, remote_url, AtomicFile};
use crate::pipeline_args::{GlobalArgs, PipelineArgs};
use crate::progress::{bytes_bar, EncodeProgress};
use crate::sidecar::{self, Sidecar};
use crate::spool::{no_suffix, Inputs};

/// Arguments of `tgm import`.
#[derive(clap::Args)]
#[command(
    after_help = "Inputs are .npy files (one message, one object each), or an export's \
sidecars (dir/m0.json) or export directory (one message per sidecar, metadata restored).\n\n\
Examples:\n  tgm import a.npy b.npy -o out.tgm --meta mars.class=od --meta 1:mars.param=130\n  \
tgm import c.npy -o out.tgm --append\n  tgm import t.npy -o p.tgm --encoding simple_packing --bits 16 --compression zstd --level 5\n  \
tgm import exported/ -o back.tgm"
)]
pub struct Args {
    /// Input .npy files, sidecars (.json) or one export directory.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output .tgm file (`-` for stdout).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Metadata: [N:]KEY=VALUE or [N:]KEY:=TEXT (see `tgm set --help`).
    #[arg(short, long = "meta", value_name = "ASSIGNMENT")]
    pub meta: Vec<String>,
    /// Append to OUTPUT (an existing .tgm archive) through the crash-safe
    /// appender. A remote OUTPUT needs --force as well: the object is
    /// rewritten whole (its messages, the new ones, the catalogue).
    #[arg(short, long)]
    pub append: bool,
    /// Replace OUTPUT if it exists (with --append: allow rewriting a
    /// remote archive).
    #[arg(short, long)]
    pub force: bool,
    /// Report what was written as one JSON object on stdout (each output's
    /// size and, for an object, its ETag).
    #[arg(short, long)]
    pub json: bool,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
    #[command(flatten)]
    pub encode: crate::pipeline_args::EncodeFlags,
}

/// One message to write: its metadata and array files.
struct Plan {
    meta: GlobalMetadata,
    files: Vec<PathBuf>,
}

/// The messages to write: `given` are the paths as typed, `paths` the same
/// with `-` replaced by spooled stdin (which gets no `name` key).
fn plans(given: &[PathBuf], paths: &[PathBuf]) -> CliResult<Vec<Plan>> {
    let inputs = paths;
    let is_json = |p: &PathBuf| p.extension().is_some_and(|e| e == "json");
    if inputs.len() == 1 && inputs[0].is_dir() {
        return sidecar::in_dir(&inputs[0])?
            .iter()
            .map(|s| from_sidecar(s))
            .collect();
    }
    if inputs.iter().all(is_json) {
        return inputs.iter().map(|s| from_sidecar(s)).collect();
    }
    if let Some(p) = inputs.iter().find(|p| is_json(p) || p.is_dir()) {
        return Err(usage(format!(
            "{}: sidecars and directories cannot be mixed with .npy inputs",
            p.display()
        )));
    }
    let base = given
        .iter()
        .map(|p| {
            let mut e = tgm::Map::new();
            if let Some(stem) = p
                .file_stem()
                .and_then(|s| s.to_str())
                .filter(|_| !is_dash(p))
            {
                e.insert("name".into(), stem.into());
            }
            e
        })
        .collect();
    Ok(vec![Plan {
        meta: GlobalMetadata::with_base(base),
        files: inputs.to_vec(),
    }])
}

fn from_sidecar(path: &Path) -> CliResult<Plan> {
    let s = Sidecar::read(path)?;
    Ok(Plan {
        meta: s.metadata(),
        files: s.files(path),
    })
}

/// Where messages go.
enum Target {
    New(AtomicFile),
    Append(Appender),
    Stdout,
}

/// Runs `tgm import`; `-` among the inputs is a `.npy` on stdin.
pub fn run(a: Args, g: &GlobalArgs) -> CliResult {
    let inputs = Inputs::new(&a.inputs, no_suffix)?;
    import(&a, g, &inputs).map_err(|e| inputs.relabel_err(e))
}

fn import(a: &Args, g: &GlobalArgs, inputs: &Inputs) -> CliResult {
    let stages = a.pipeline.stages()?;
    let assignments = a
        .meta
        .iter()
        .map(|m| parse_assignment(m))
        .collect::<CliResult<Vec<_>>>()?;
    let plans = plans(&a.inputs, inputs.paths())?;
    let mut all_inputs: Vec<&Path> = a.inputs.iter().map(PathBuf::as_path).collect();
    all_inputs.extend(
        plans
            .iter()
            .flat_map(|p| p.files.iter().map(PathBuf::as_path)),
    );
    let opts = a.pipeline.encode_options(g)?;

    let remote_append = a.append && remote_url(&a.output).is_some();
    let mut target = if remote_append {
        if !a.force {
            return Err(usage(format!(
                "{}: object stores cannot append to an object; with --force, tgm writes a \
                 new object (the old one's messages, then the new ones, then the catalogue) \
                 that replaces it only when complete",
                a.output.display()
            )));
        }
        Target::New(crate::remote_append::append_by_rewrite(
            &a.output,
            &all_inputs,
        )?)
    } else if a.append {
        if is_dash(&a.output) {
            return Err(usage("--append needs a file, not stdout"));
        }
        if a.force {
            return Err(usage(
                "--append with --force rewrites a remote archive; a local file is appended to \
                 in place (drop --force)",
            ));
        }
        check_output(&a.output, &all_inputs, true)?;
        if a.output.exists() {
            let existing = Archive::open_lenient(&a.output)?;
            if existing.size() > 0 && existing.len() == 0 {
                return Err(CliError::Failed(format!(
                    "{}: not a Tensogram file; refusing to append to it",
                    a.output.display()
                )));
            }
        }
        let app = Appender::open(&a.output, &AppendOptions::default()).at(&a.output)?;
        if let Some(t) = app.repaired_tail() {
            note!(
                "note: {}: cut {} bytes of an interrupted write at offset {}",
                a.output.display(),
                t.len,
                t.offset
            );
        }
        Target::Append(app)
    } else if is_dash(&a.output) {
        if a.json {
            return Err(usage(
                "-j writes its report on stdout; name an output file, not `-`",
            ));
        }
        Target::Stdout
    } else {
        check_output(&a.output, &all_inputs, a.force)?;
        Target::New(AtomicFile::create(&a.output, a.force)?)
    };

    let mut objects = 0usize;
    for plan in &plans {
        let arrays = plan
            .files
            .iter()
            .map(|p| NpyInput::open(p))
            .collect::<CliResult<Vec<_>>>()?;
        let mut meta = plan.meta.clone();
        meta.base.resize_with(arrays.len(), tgm::Map::new);
        for (e, arr) in meta.base.iter_mut().zip(&arrays) {
            if arr.was_bool {
                e.insert("numpy_dtype".into(), "bool".into());
            }
        }
        apply(&mut meta, arrays.len(), &assignments)?;
        let mut descs: Vec<ObjectDescriptor> = Vec::with_capacity(arrays.len());
        for (arr, path) in arrays.iter().zip(&plan.files) {
            let mut d = arr.descriptor();
            a.pipeline.apply(&stages, &mut d, &arr.data()).at(path)?;
            descs.push(d);
        }
        let total: u64 = arrays.iter().map(|x| x.data().len() as u64).sum();
        let bar = bytes_bar(total, "reading");
        if !bar.is_hidden() {
            // On a terminal, page the arrays in first so a single large
            // array shows progress while its bytes come off the disk.
            for arr in &arrays {
                for chunk in arr.data().chunks(8 << 20) {
                    std::hint::black_box(chunk.iter().step_by(4096).fold(0u8, |a, &b| a ^ b));
                    bar.inc(chunk.len() as u64);
                }
            }
            bar.set_position(0);
            bar.set_message("encoding");
        }
        // The bar advances per chunk of each object, and the mapped pages
        // the encoder has read are released, so memory holds one copy of
        // an object, not the array and its encoding (`spec/pipeline.md` §6.7).
        let progress = EncodeProgress::new(bar.clone());
        let opts = opts.clone().progress(progress.hook());
        let write_all =
            |put: &mut dyn FnMut(&ObjectDescriptor, &[u8]) -> tgm::Result<()>| -> CliResult {
                for ((d, arr), path) in descs.iter().zip(&arrays).zip(&plan.files) {
                    let data = arr.data();
                    progress.start(bar.position(), arr.releaser());
                    put(d, &data).at(path)?;
                }
                Ok(())
            };
        match &mut target {
            // A local file gets the message length written back into its
            // preamble; a remote object, written front to back, keeps the
            // streaming length 0 (`spec/remote.md` §7).
            // An object the pipeline leaves as it is goes out in steps,
            // its mapped pages released behind them (`spec/pipeline.md`
            // §6.10): the output is abandoned on any error.
            Target::New(f) => match f.seekable() {
                Some(file) => {
                    let mut enc = StreamingEncoder::new(file, &meta, &opts)?;
                    write_all(&mut |d, x| enc.write_object_streaming(d, x))?;
                    enc.finish_with_backfill()?;
                }
                None => {
                    let mut enc = StreamingEncoder::new(f.writer(), &meta, &opts)?;
                    write_all(&mut |d, x| enc.write_object_streaming(d, x))?;
                    enc.finish()?;
                }
            },
            Target::Append(app) => {
                let mut s = app.stream(&meta, &opts).at(&a.output)?;
                write_all(&mut |d, x| s.write_object(d, x))?;
                s.finish().at(&a.output)?;
            }
            Target::Stdout => {
                let pairs: Vec<_> = arrays.iter().map(|x| x.data()).collect();
                let objs: Vec<_> = descs.iter().zip(&pairs).map(|(d, x)| (d, &x[..])).collect();
                let mut out = std::io::stdout().lock();
                // Every object is encoded before any is written: the bar
                // follows each in turn; the mapped pages of a lone array
                // are released as it is read.
                if let [one] = &arrays[..] {
                    progress.start(0, one.releaser());
                }
                tgm::encode_to(&meta, &objs, &opts, &mut out)?;
                out.flush()?;
                bar.set_position(total);
            }
        }
        bar.finish_and_clear();
        objects += arrays.len();
    }
    match target {
        Target::New(f) => drop(f.commit()?),
        Target::Append(app) => {
            app.finish().at(&a.output)?;
        }
        Target::Stdout => {}
    }
    note!(
        "{} {} message(s), {objects} object(s) to {}",
        if a.append { "appended" } else { "wrote" },
        plans.len(),
        a.output.display()
    );
    if a.json {
        let doc = serde_json::json!({
            "messages": plans.len(),
            "objects": objects,
            "appended": a.append,
            "outputs": crate::output::committed_json(),
        });
        let mut out = crate::output::stdout();
        writeln!(out, "{doc}")?;
        out.flush()?;
    }
    Ok(())
}
