//! `tgm get`: values of named keys, one row per object; a missing key is an error.

use std::io::Write;
use std::path::PathBuf;

use crate::error::{CliError, CliResult};
use crate::fmt::cell;
use crate::input::Archive;
use crate::output::stdout;
use crate::where_clause::Where;

/// Arguments of `tgm get`.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  tgm get -p mars.param,step out.tgm")]
pub struct Args {
    /// Comma-separated keys to print (required).
    #[arg(short = 'p', long = "keys", value_name = "KEYS", required = true)]
    pub keys: String,
    /// Only objects matching (see `tgm ls --help`).
    #[arg(short = 'w', long = "where", value_name = "CLAUSE")]
    pub where_clause: Vec<String>,
    /// Files to read (`-` for stdin).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Runs `tgm get`: tab-separated values; exits 1 naming the first missing key.
pub fn run(a: Args) -> CliResult {
    let filter = Where::parse(&a.where_clause)?;
    let keys: Vec<&str> = a.keys.split(',').map(str::trim).collect();
    for k in &keys {
        crate::meta_args::key_path(k)?;
    }
    let mut out = stdout();
    for path in &a.files {
        let f = Archive::open(path)?;
        for mi in 0..f.len() {
            let (meta, descs) = f.header(mi)?;
            for oi in 0..descs.len() {
                if !filter.matches_object(&meta, oi) {
                    continue;
                }
                let mut cells = Vec::with_capacity(keys.len());
                for k in &keys {
                    let v = meta.lookup(Some(oi), k).ok_or_else(|| {
                        CliError::Failed(format!(
                            "{}: key {k:?} not found in message {mi}, object {oi}",
                            f.label().display()
                        ))
                    })?;
                    cells.push(cell(v));
                }
                writeln!(out, "{}", cells.join("\t"))?;
            }
        }
    }
    out.flush().map_err(CliError::from)
}
