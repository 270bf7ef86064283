//! `tgm convert-dicom`: DICOM series into one Tensogram message each, in
//! one file (docs/src/guide/medical.md).

use std::path::PathBuf;

use crate::error::{CliError, CliResult};
use crate::medical_args::{ObjectPick, PipelineArgs, RetainOptions};
use crate::output::Sink;
use crate::spool::{no_suffix, Inputs};
use tgm_convert::medical::deid::Deidentify;
use tgm_convert::medical::deid_uid::UidKey;
use tgm_convert::medical::dicom::{dicom_to_messages, Reading};
use tgm_convert::medical::dicom_conform::Conformance;
use tgm_convert::medical::dicom_stream::DicomStream;
use tgm_convert::medical::dicom_write::DicomWriter;
use tgm_convert::medical::{MedicalError, MedicalErrorKind, MedicalResult};

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  tgm convert-dicom series/ -o ct.tgm\n  tgm convert-dicom - -o slice.tgm < slice.dcm\n  tgm convert-dicom -r study/ -o study.tgm\n  tgm convert-dicom series/ -o ct.tgm --deidentify --retain-full-dates --deid-key deid.key"
)]
pub struct Args {
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
    /// DICOM files, or directories of them (hidden files, DICOMDIR,
    /// non-DICOM and non-image files in a directory are skipped with a
    /// note); `-` reads one DICOM file from stdin.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Also read the sub-directories of directories given, depth-first in
    /// name order (each directory once, so symbolic-link loops end).
    #[arg(short, long)]
    pub recursive: bool,
    /// Leave out the files found in a directory that cannot be converted
    /// (colour images, unsupported transfer syntaxes, files tgm cannot
    /// read), listing each with the reason on stderr and in the -j report,
    /// and convert the rest. Without it the first such file stops the run.
    #[arg(long)]
    pub skip_unsupported: bool,
    /// Output .tgm file.
    #[arg(short, long)]
    pub output: PathBuf,
    /// De-identify by DICOM PS3.15 Annex E, the Basic Application Level
    /// Confidentiality Profile (docs/src/guide/medical.md: what it removes).
    #[arg(long)]
    pub deidentify: bool,
    #[command(flatten)]
    pub retain: RetainOptions,
    /// Key file (32 to 4096 secret bytes) for the replacement UIDs: the
    /// same key gives the same UIDs on every run. Without it a fresh
    /// random key is used and forgotten.
    #[arg(long, value_name = "FILE", requires = "deidentify")]
    pub deid_key: Option<PathBuf>,
    /// Convert images whose BurnedInAnnotation is YES even when
    /// de-identifying (text in the pixels is not removed).
    #[arg(long, requires = "deidentify")]
    pub allow_burned_in: bool,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

/// Converts; the `-j` report's own fields: the paths left out, each with
/// its reason.
pub fn run(a: Args) -> CliResult<serde_json::Map<String, serde_json::Value>> {
    let pipeline = a.pipeline.choice()?;
    let deid = if a.deidentify {
        Some(Deidentify {
            retain: a.retain.into(),
            key: match &a.deid_key {
                Some(p) => UidKey::from_file(p)?,
                None => UidKey::random()?,
            },
            allow_burned_in: a.allow_burned_in,
        })
    } else {
        None
    };
    let spooled = Inputs::new(&a.inputs, no_suffix)?;
    let reading = Reading {
        recursive: a.recursive,
        skip_unsupported: a.skip_unsupported,
    };
    let conv = dicom_to_messages(spooled.paths(), reading, &pipeline, deid.as_ref()).map_err(
        |e| match e.is_skippable() {
            true => spooled.relabel(format!(
                "{e} (--skip-unsupported leaves such files out and converts the rest)"
            )),
            false => spooled.relabel(e.to_string()),
        },
    )?;
    let mut skipped = Vec::with_capacity(conv.skipped.len());
    for s in &conv.skipped {
        let path = spooled.relabel(s.path.display().to_string());
        note!("skipped {path}: {}", s.reason);
        skipped.push(serde_json::json!({"path": path, "reason": s.reason.to_string()}));
    }
    // Each message is encoded straight into the output, its volume read
    // from the files then (docs/src/performance/memory.md); a file appears only once it is
    // whole.
    let inputs: Vec<&std::path::Path> = a.inputs.iter().map(|p| p.as_path()).collect();
    let mut sink = Sink::open(&a.output, &inputs, a.force)?;
    let opts = tgm_convert::medical::pipeline::encode_options()
        .progress(crate::progress::object_hook("encoding"));
    let mut len = 0;
    for i in 0..conv.len() {
        len += conv
            .write_message(i, &opts, &mut sink.writer())
            .map_err(|e| spooled.relabel(e.to_string()))?;
    }
    let len = sink.finish_sized()?.unwrap_or(len);
    if a.deidentify {
        let report = &conv.deidentified;
        note!(
            "de-identified (PS3.15 Annex E basic profile): removed [{}], emptied [{}], \
             dummy values [{}], UIDs replaced [{}]",
            report.removed.join(", "),
            report.emptied.join(", "),
            report.dummied.join(", "),
            report.replaced.join(", ")
        );
    }
    note!(
        "wrote {} series ({}), one message each, {} bytes, to {}",
        conv.len(),
        conv.series.join(", "),
        len,
        a.output.display()
    );
    let mut report = serde_json::Map::new();
    report.insert("skipped".into(), serde_json::Value::Array(skipped));
    Ok(report)
}

#[derive(clap::Args)]
#[command(
    after_help = "Picks one object: --message/--object, or -w/--objects clauses that must \
match exactly one object of the file.\n\n\
Examples:\n  tgm to-dicom ct.tgm -o slices/\n  tgm to-dicom study.tgm -w dicom.attributes.Modality=CT -o slices/"
)]
pub struct ToArgs {
    #[command(flatten)]
    pub report: crate::output::ReportArgs,
    #[command(flatten)]
    pub pick: ObjectPick,
    #[command(flatten)]
    pub select: crate::where_clause::SelectArgs,
    /// Output directory (not `-`); slice files are named slice_NNNNN.dcm
    /// (an RT Dose grid is one multi-frame file, slice_00000.dcm).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Replace slice files that exist.
    #[arg(long)]
    pub force: bool,
    /// Refuse a value the archive holds that its VR's rules reject (a UID
    /// with a leading zero, a string too long), before any file is kept.
    /// Without it such a value is written as the source held it, with a
    /// warning naming the attribute.
    #[arg(long)]
    pub strict: bool,
}

pub fn to_dicom(a: ToArgs) -> CliResult {
    crate::output::refuse_dash_dir(&a.output)?;
    let mut pick = tgm_convert::medical::ObjectPick::from(a.pick);
    let file = crate::input::Archive::open_local(&pick.input)?;
    crate::where_clause::pick_selected(&a.select, &mut pick, &file)?;
    // Each slice is written as soon as the decode has given its pixels
    // (docs/src/performance/memory.md), and every one before any is
    // renamed into place. The directory is made with the first slice, and
    // removed again if this made it and the conversion then fails.
    // A URL is a prefix: the slices are `URL/slice_NNNNN.dcm`, uploaded
    // together.
    let local = crate::output::remote_url(&a.output).is_none();
    let made_dir = local && !a.output.exists();
    let mut set = crate::output::FileSet::default();
    let mode = if a.strict {
        Conformance::Strict
    } else {
        Conformance::Verbatim
    };
    let describe = pick.describe();
    // An error writing a slice is the command's own, not the object's: it
    // is kept here while the decode stops.
    let mut write_error: Option<CliError> = None;
    let written = {
        let mut write = |i: usize, bytes: &[u8]| -> CliResult {
            if i == 0 && local {
                std::fs::create_dir_all(&a.output)
                    .map_err(|e| format!("cannot create {}: {e}", a.output.display()))?;
            }
            let target = a.output.join(format!("slice_{i:05}.dcm"));
            std::io::Write::write_all(set.create(&target, &[&pick.input], a.force)?, bytes)
                .map_err(|e| format!("{}: {e}", target.display()))?;
            Ok(())
        };
        let mut piece = |stream: &mut DicomStream, bytes: &[u8]| -> MedicalResult {
            stream
                .push(bytes, &mut |i, file| {
                    write(i, &file).map_err(|e| {
                        let stop = MedicalError::new(MedicalErrorKind::Io, e.to_string());
                        write_error = Some(e);
                        stop
                    })
                })
                .map_err(|e| e.context(&describe))
        };
        pick.stream_reporting(
            &file,
            crate::progress::object_hook("decoding"),
            |d, entry| match DicomWriter::new(d, entry.clone(), mode) {
                Ok(w) => Ok(DicomStream::new(w)),
                Err(e) => Err(e.context(&describe)),
            },
            &mut piece,
        )
        .and_then(|stream| stream.finish().map_err(|e| e.context(&describe)))
    };
    let emitted = match written {
        Ok(e) => e,
        Err(e) => {
            drop(set);
            if made_dir {
                let _ = std::fs::remove_dir(&a.output);
            }
            return Err(write_error.unwrap_or_else(|| CliError::from(e)));
        }
    };
    set.commit()?;
    for v in &emitted.nonconforming {
        note!("warning: {v}: written as the source held it (--strict refuses it)");
    }
    note!("wrote {} slice(s) to {}", emitted.files, a.output.display());
    Ok(())
}
