//! Helpers shared by the subcommands.

use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};
use tgm::cbor::Value;

pub type CliResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Opens and indexes a .tgm file through a memory map.
pub fn open_file(path: &Path) -> CliResult<tgm::TgmFile> {
    Ok(tgm::TgmFile::open(path)?)
}

/// Reads a whole file, naming it in the error.
pub fn read_file(path: &Path) -> CliResult<Vec<u8>> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()).into())
}

/// A progress bar on stderr, hidden when stderr is not a terminal or the work is small.
pub fn progress(len: u64, what: &str) -> ProgressBar {
    if len < 2 {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} ({eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

/// Parses a `--meta` value: integer, float, bool, or text.
pub fn parse_meta_value(s: &str) -> Value {
    if let Ok(i) = s.parse::<i64>() {
        return Value::from_i64(i);
    }
    if let Ok(u) = s.parse::<u64>() {
        return Value::Uint(u);
    }
    match s {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        _ => {}
    }
    if let Ok(f) = s.parse::<f64>() {
        if s.contains(['.', 'e', 'E']) {
            return Value::Float(f);
        }
    }
    Value::Text(s.to_string())
}

/// Inserts `value` at a dotted key (`mars.param`) into a map, creating nested maps.
pub fn insert_dotted(map: &mut tgm::Map, key: &str, value: Value) -> CliResult {
    let mut parts = key.split('.');
    let first = parts
        .next()
        .filter(|s| !s.is_empty())
        .ok_or("empty metadata key")?;
    let rest: Vec<&str> = parts.collect();
    if rest.is_empty() {
        map.insert(first.to_string(), value);
        return Ok(());
    }
    let slot = map
        .entry(first.to_string())
        .or_insert_with(|| Value::Map(Vec::new()));
    insert_value(slot, &rest, value, key)
}

fn insert_value(slot: &mut Value, path: &[&str], value: Value, key: &str) -> CliResult {
    let Value::Map(entries) = slot else {
        return Err(format!("metadata key {key:?} descends into a non-map value").into());
    };
    let (head, tail) = (path[0], &path[1..]);
    let pos = entries.iter().position(|(k, _)| k.as_text() == Some(head));
    if tail.is_empty() {
        match pos {
            Some(i) => entries[i].1 = value,
            None => entries.push((Value::Text(head.into()), value)),
        }
        return Ok(());
    }
    let i = match pos {
        Some(i) => i,
        None => {
            entries.push((Value::Text(head.into()), Value::Map(Vec::new())));
            entries.len() - 1
        }
    };
    insert_value(&mut entries[i].1, tail, value, key)
}

/// Renders a shape as `[2, 3]`.
pub fn shape_str(shape: &[u64]) -> String {
    format!(
        "[{}]",
        shape
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// `encoding/filter/compression`, or `none`.
pub fn pipeline_str(d: &tgm::ObjectDescriptor) -> String {
    if d.is_raw() {
        "none".into()
    } else {
        let parts: Vec<&str> = [
            d.encoding.as_str(),
            d.filter.as_str(),
            d.compression.as_str(),
        ]
        .into_iter()
        .filter(|s| *s != "none")
        .collect();
        parts.join("+")
    }
}
