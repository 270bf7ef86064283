//! `tgm dump`: every message's metadata and descriptors, as text or as
//! one JSON document.

use std::io::Write;
use std::path::PathBuf;

use crate::error::{CliError, CliResult};
use crate::fmt::{descriptor_json, object_meta_json};
use crate::input::{finish_read, open_all_readable};
use crate::meta_args::{map_to_shown_json, to_shown_json};
use crate::output::stdout;
use crate::tally::Tally;
use crate::where_clause::Where;

/// Arguments of `tgm dump`.
#[derive(clap::Args)]
#[command(
    after_help = "Byte strings in metadata (a GRIB template, say) are written as \
{\"base64\": \"…\", \"bytes\": N}: standard base64 with padding (RFC 4648 §4) and their length, \
in the text and in -j.\n\n\
Examples:\n  tgm dump out.tgm\n  tgm dump -j out.tgm > out.json\n  tgm dump -w mars.param=2t -p mars.param out.tgm"
)]
pub struct Args {
    /// Files to dump (`-` for stdin).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Selects whole messages: those with an object matching (see `tgm ls --help`).
    #[arg(short = 'w', long = "where", value_name = "CLAUSE")]
    pub where_clause: Vec<String>,
    /// Comma-separated metadata keys: show only these per object.
    #[arg(short = 'p', long = "keys", value_name = "KEYS")]
    pub keys: Option<String>,
    /// One JSON document: an array with one entry per message.
    #[arg(short, long)]
    pub json: bool,
}

/// Runs `tgm dump`.
pub fn run(a: Args) -> CliResult {
    let filter = Where::parse(&a.where_clause)?;
    let keys: Option<Vec<String>> = a
        .keys
        .as_ref()
        .map(|k| k.split(',').map(|s| s.trim().to_string()).collect());
    let mut docs = Vec::new();
    let mut out = stdout();
    let archives = open_all_readable(&a.files)?;
    let tally = Tally::default();
    for f in &archives {
        let label = f.label().display().to_string();
        for mi in 0..f.len() {
            let (meta, descs) = f.header(mi)?;
            let selected = filter.matches_message(&meta, descs.len());
            tally.message(descs.len(), usize::from(selected), 0);
            if !selected {
                continue;
            }
            let span = f.spans()[mi];
            let objects: Vec<serde_json::Value> = descs
                .iter()
                .enumerate()
                .map(|(oi, d)| {
                    let metadata = match &keys {
                        Some(ks) => serde_json::Value::Object(
                            ks.iter()
                                .map(|k| {
                                    let v = meta
                                        .lookup(Some(oi), k)
                                        .map_or(serde_json::Value::Null, to_shown_json);
                                    (k.clone(), v)
                                })
                                .collect(),
                        ),
                        None => object_meta_json(&meta, oi),
                    };
                    serde_json::json!({
                        "object": oi,
                        "metadata": metadata,
                        "descriptor": descriptor_json(d),
                    })
                })
                .collect();
            let doc = serde_json::json!({
                "file": label,
                "message": mi,
                "offset": span.offset,
                "length": span.len,
                "extra": map_to_shown_json(&meta.extra),
                "provenance": map_to_shown_json(&meta.reserved),
                "objects": objects,
            });
            if a.json {
                docs.push(doc);
            } else {
                writeln!(
                    out,
                    "=== {label} message {mi} (offset {}, {} bytes) ===",
                    span.offset, span.len
                )?;
                if !meta.extra.is_empty() {
                    writeln!(out, "extra: {}", doc["extra"])?;
                }
                for o in &objects {
                    writeln!(out, "object {}: metadata {}", o["object"], o["metadata"])?;
                    writeln!(
                        out,
                        "object {}: descriptor {}",
                        o["object"], o["descriptor"]
                    )?;
                }
            }
        }
    }
    tally.report("dump", &a.where_clause);
    if a.json {
        serde_json::to_writer_pretty(&mut out, &docs)
            .map_err(|e| CliError::from(std::io::Error::from(e)))?;
        writeln!(out)?;
    }
    finish_read(&mut out, &archives)
}
