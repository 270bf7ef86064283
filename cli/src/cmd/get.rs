//! `tgm get`: values of named keys, one row per object naming its file,
//! message and object; a missing key is an error.

use std::io::Write;
use std::path::PathBuf;

use crate::error::{CliError, CliResult};
use crate::fmt::cell;
use crate::input::{finish_read, open_all_readable};
use crate::output::stdout;
use crate::where_clause::Where;

/// Arguments of `tgm get`.
#[derive(clap::Args)]
#[command(after_help = "Rows: FILE, MESSAGE, OBJECT, then one value per key, \
tab-separated (with -j, one JSON object per line).\n\n\
Examples:\n  tgm get -p mars.param,step out.tgm\n  tgm get -j -p mars.param -w step=6 out.tgm")]
pub struct Args {
    /// Comma-separated keys to print (required).
    #[arg(short = 'p', long = "keys", value_name = "KEYS", required = true)]
    pub keys: String,
    /// Selects objects: only those matching (see `tgm ls --help`).
    #[arg(short = 'w', long = "where", value_name = "CLAUSE")]
    pub where_clause: Vec<String>,
    /// One JSON object per line (NDJSON): file, message, object and keys.
    #[arg(short, long)]
    pub json: bool,
    /// Files to read (`-` for stdin).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Runs `tgm get`: exits 1 naming the first missing key.
pub fn run(a: Args) -> CliResult {
    let filter = Where::parse(&a.where_clause)?;
    let keys: Vec<&str> = a.keys.split(',').map(str::trim).collect();
    for k in &keys {
        crate::meta_args::key_path(k)?;
    }
    let archives = open_all_readable(&a.files)?;
    let mut out = stdout();
    for f in &archives {
        let label = f.label().display().to_string();
        for mi in 0..f.len() {
            let (meta, descs) = f.header(mi)?;
            for oi in 0..descs.len() {
                if !filter.matches_object(&meta, oi) {
                    continue;
                }
                let mut values = Vec::with_capacity(keys.len());
                for k in &keys {
                    let v = meta.lookup(Some(oi), k).ok_or_else(|| {
                        CliError::Failed(format!(
                            "{label}: key {k:?} not found in message {mi}, object {oi}"
                        ))
                    })?;
                    values.push(v);
                }
                if a.json {
                    let sel: serde_json::Map<String, serde_json::Value> = keys
                        .iter()
                        .zip(&values)
                        .map(|(k, v)| (k.to_string(), crate::meta_args::to_json(v)))
                        .collect();
                    let row = serde_json::json!({
                        "file": label,
                        "message": mi,
                        "object": oi,
                        "keys": sel,
                    });
                    writeln!(out, "{row}")?;
                } else {
                    let cells: Vec<String> = values.into_iter().map(cell).collect();
                    writeln!(out, "{label}\t{mi}\t{oi}\t{}", cells.join("\t"))?;
                }
            }
        }
    }
    finish_read(&mut out, &archives)
}
