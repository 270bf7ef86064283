//! `tgm get`: values of named keys, one row per object naming its file,
//! message and object; a missing key is an error.

use std::io::Write;
use std::path::PathBuf;

use crate::error::{usage, CliError, CliResult};
use crate::fmt::cell;
use crate::input::{finish_read, open_all_readable};
use crate::output::stdout;
use crate::tally::Tally;
use crate::where_clause::Where;

/// Arguments of `tgm get`.
#[derive(clap::Args)]
#[command(after_help = "Rows: FILE, MESSAGE, OBJECT, then one value per key, \
tab-separated (with -j, one JSON object per line). The keys come from -p, or without it from \
the last argument: `tgm get FILE KEYS`.\n\n\
Examples:\n  tgm get out.tgm mars.param\n  tgm get -p mars.param,step out.tgm\n  \
tgm get -j -p mars.param -w step=6 out.tgm")]
pub struct Args {
    /// Comma-separated keys to print (without -p: the last argument).
    #[arg(short = 'p', long = "keys", value_name = "KEYS")]
    pub keys: Option<String>,
    /// Selects objects: only those matching (see `tgm ls --help`).
    #[arg(short = 'w', long = "where", value_name = "CLAUSE")]
    pub where_clause: Vec<String>,
    /// One JSON object per line (NDJSON): file, message, object and keys.
    #[arg(short, long)]
    pub json: bool,
    /// Files to read (`-` for stdin), then the keys when -p is not given.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// The keys and the files of `tgm get`: `-p KEYS FILE…`, or `FILE… KEYS`.
fn keys_and_files(a: Args) -> CliResult<(String, Vec<PathBuf>)> {
    if let Some(k) = a.keys {
        return Ok((k, a.files));
    }
    let mut files = a.files;
    let last = files.pop().filter(|_| !files.is_empty()).ok_or_else(|| {
        usage("name the keys to print: tgm get FILE KEY[,KEY…] or tgm get -p KEYS FILE")
    })?;
    if last.is_file() {
        return Err(usage(format!(
            "{} is a file: name the keys to print after the files, or with -p KEYS",
            last.display()
        )));
    }
    let keys = last
        .to_str()
        .ok_or_else(|| usage(format!("{} is not a key", last.display())))?
        .to_string();
    Ok((keys, files))
}

/// Runs `tgm get`: exits 1 naming the first missing key.
pub fn run(a: Args) -> CliResult {
    let filter = Where::parse(&a.where_clause)?;
    let (json, clauses) = (a.json, a.where_clause.clone());
    let (keys, files) = keys_and_files(a)?;
    let keys: Vec<&str> = keys.split(',').map(str::trim).collect();
    for k in &keys {
        crate::meta_args::key_path(k)?;
    }
    let archives = open_all_readable(&files)?;
    let mut out = stdout();
    let tally = Tally::default();
    for f in &archives {
        let label = f.label().display().to_string();
        for mi in 0..f.len() {
            let (meta, descs) = f.header(mi)?;
            let matching: Vec<usize> = (0..descs.len())
                .filter(|&oi| filter.matches_object(&meta, oi))
                .collect();
            tally.message(descs.len(), matching.len(), 0);
            for oi in matching {
                let mut values = Vec::with_capacity(keys.len());
                for k in &keys {
                    let v = meta.lookup(Some(oi), k).ok_or_else(|| {
                        CliError::Failed(format!(
                            "{label}: key {k:?} not found in message {mi}, object {oi}"
                        ))
                    })?;
                    values.push(v);
                }
                if json {
                    let sel: serde_json::Map<String, serde_json::Value> = keys
                        .iter()
                        .zip(&values)
                        .map(|(k, v)| (k.to_string(), crate::meta_args::to_shown_json(v)))
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
    tally.report("get", &clauses);
    finish_read(&mut out, &archives)
}
