//! `tgm ls`: one row per object, as a table or NDJSON with metadata.

use std::io::Write;
use std::path::PathBuf;

use crate::error::CliResult;
use crate::fmt::{cell, descriptor_json, object_meta_json, pipeline_str, shape_str};
use crate::input::{finish_read, open_all_readable};
use crate::output::stdout;
use crate::tally::Tally;
use crate::weather_keys::{mark_distinguishing, DISTINGUISHING};
use crate::where_clause::Where;

/// Arguments of `tgm ls`.
#[derive(clap::Args)]
#[command(
    after_help = "Without -p the table shows, after the object, the keys that tell fields \
apart when the first message of a file has them: name, mars.param, mars.levtype, \
mars.levelist, mars.date, mars.time, mars.step, mars.number.\n\
A clause on the parameter (param, mars.param, shortName, paramId) matches any name \
convert-grib stored for it, and 130 matches GRIB1's 130.128. When no object matches, \
stderr says so and how many were searched.\n\n\
Examples:\n  tgm ls out.tgm\n  tgm ls -j -w mars.class=od out.tgm\n  tgm ls -w mars.param=2t/10u -p mars.param,step out.tgm"
)]
pub struct Args {
    /// Files to list (`-` for stdin).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Selects objects: only those matching KEY=V1/V2 or KEY!=V; several
    /// clauses comma-separated or repeated must all match.
    #[arg(short = 'w', long = "where", value_name = "CLAUSE")]
    pub where_clause: Vec<String>,
    /// Comma-separated metadata keys to show as columns.
    #[arg(short = 'p', long = "keys", value_name = "KEYS")]
    pub keys: Option<String>,
    /// One JSON object per line (NDJSON), with the object's metadata.
    #[arg(short, long)]
    pub json: bool,
}

/// Runs `tgm ls`. The file index locates messages; only metadata and
/// descriptors are parsed, so memory does not grow with the file.
pub fn run(a: Args) -> CliResult {
    let filter = Where::parse(&a.where_clause)?;
    let keys: Vec<String> = match &a.keys {
        Some(k) => k.split(',').map(|s| s.trim().to_string()).collect(),
        None => Vec::new(),
    };
    for k in &keys {
        crate::meta_args::key_path(k)?;
    }
    let archives = open_all_readable(&a.files)?;
    let mut out = stdout();
    // The table without -p shows the keys that tell fields apart, as the
    // first message of each file has them; those headers are kept.
    let mut firsts = Vec::with_capacity(archives.len());
    let mut shown = [false; DISTINGUISHING.len()];
    for f in &archives {
        let first = if !a.json && keys.is_empty() && f.len() > 0 {
            let (meta, descs) = f.header(0)?;
            mark_distinguishing(&meta, descs.len(), &mut shown);
            Some((meta, descs))
        } else {
            None
        };
        firsts.push(first);
    }
    let distinguishing: Vec<&str> = DISTINGUISHING
        .iter()
        .zip(shown)
        .filter_map(|(k, s)| s.then_some(*k))
        .collect();
    let columns: String = distinguishing.iter().map(|k| format!("{k}\t")).collect();
    if !a.json {
        if keys.is_empty() {
            writeln!(
                out,
                "file\tmessage\tobject\t{columns}dtype\tshape\tpipeline\tstored_bytes"
            )?;
        } else {
            writeln!(out, "file\tmessage\tobject\t{}", keys.join("\t"))?;
        }
    }
    let tally = Tally::default();
    for (f, mut first) in archives.iter().zip(firsts) {
        let label = f.label().display().to_string();
        for mi in 0..f.len() {
            let (meta, descs) = match first.take() {
                Some(h) => h,
                None => f.header(mi)?,
            };
            let sizes = f.stored_sizes(mi)?;
            let matching: Vec<usize> = (0..descs.len())
                .filter(|&oi| filter.matches_object(&meta, oi))
                .collect();
            tally.message(descs.len(), matching.len(), 0);
            for oi in matching {
                let d = &descs[oi];
                if a.json {
                    let mut row = serde_json::json!({
                        "file": label,
                        "message": mi,
                        "object": oi,
                        "dtype": d.dtype.name(),
                        "shape": d.shape,
                        "byte_order": d.byte_order.name(),
                        "pipeline": pipeline_str(d),
                        "stored_bytes": sizes[oi],
                        "metadata": object_meta_json(&meta, oi),
                        "descriptor": descriptor_json(d),
                    });
                    if !keys.is_empty() {
                        let sel: serde_json::Map<String, serde_json::Value> = keys
                            .iter()
                            .map(|k| {
                                let v = meta.lookup(Some(oi), k).map_or(
                                    serde_json::Value::Null,
                                    crate::meta_args::to_shown_json,
                                );
                                (k.clone(), v)
                            })
                            .collect();
                        row["keys"] = serde_json::Value::Object(sel);
                    }
                    writeln!(out, "{row}")?;
                } else if keys.is_empty() {
                    let cells: String = distinguishing
                        .iter()
                        .map(|k| meta.lookup(Some(oi), k).map_or("-".into(), cell) + "\t")
                        .collect();
                    writeln!(
                        out,
                        "{label}\t{mi}\t{oi}\t{cells}{}\t{}\t{}\t{}",
                        d.dtype,
                        shape_str(&d.shape),
                        pipeline_str(d),
                        sizes[oi]
                    )?;
                } else {
                    let cells: Vec<String> = keys
                        .iter()
                        .map(|k| meta.lookup(Some(oi), k).map_or("-".into(), cell))
                        .collect();
                    writeln!(out, "{label}\t{mi}\t{oi}\t{}", cells.join("\t"))?;
                }
            }
        }
    }
    tally.report("ls", &a.where_clause);
    finish_read(&mut out, &archives)
}
