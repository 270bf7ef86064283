//! `tgm info`, `tgm ls` and `tgm dump`.

use std::path::PathBuf;

use tgm::cbor::Value;

use crate::util::{open_file, pipeline_str, shape_str, CliResult};

#[derive(clap::Args)]
pub struct InfoArgs {
    /// Files to summarise.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

#[derive(clap::Args)]
pub struct LsArgs {
    /// Files to list.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// One JSON object per line instead of a table.
    #[arg(short, long)]
    pub json: bool,
    /// Only objects whose metadata matches key=value (dotted keys, e.g. mars.param=2t).
    #[arg(short, long = "where", value_name = "KEY=VALUE")]
    pub filter: Option<String>,
}

#[derive(clap::Args)]
pub struct DumpArgs {
    /// Files to dump.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

pub fn info(a: InfoArgs) -> CliResult {
    for path in &a.files {
        let f = open_file(path)?;
        let mut objects = 0usize;
        let mut streaming = 0usize;
        for mi in 0..f.num_messages() {
            f.with_message(mi, |m| {
                objects += m.num_objects();
                if m.layout().preamble.total_length == 0 {
                    streaming += 1;
                }
                Ok(())
            })?;
        }
        let covered: u64 = f.spans().iter().map(|s| s.len).sum();
        println!("File: {}", path.display());
        println!("Size: {} bytes", f.size());
        println!("Messages: {}", f.num_messages());
        println!("Objects: {objects}");
        if streaming > 0 {
            println!("Streaming messages (no length): {streaming}");
        }
        if covered != f.size() {
            println!("Unaccounted bytes: {}", f.size() - covered);
        }
        if let Some(t) = f.torn_tail() {
            println!(
                "Torn tail: {} bytes at offset {} ({})",
                t.len, t.offset, t.reason
            );
        }
        println!("Version: 3");
    }
    Ok(())
}

pub fn ls(a: LsArgs) -> CliResult {
    if !a.json {
        println!("file\tmessage\tobject\tdtype\tshape\tpipeline\tstored_bytes");
    }
    let filter = match &a.filter {
        Some(kv) => Some(
            kv.split_once('=')
                .ok_or_else(|| format!("--where {kv:?} is not key=value"))?,
        ),
        None => None,
    };
    for path in &a.files {
        let f = open_file(path)?;
        for mi in 0..f.num_messages() {
            f.with_message(mi, |m| list_message(path, mi, m, filter, a.json))?;
        }
    }
    Ok(())
}

fn list_message(
    path: &std::path::Path,
    mi: usize,
    m: &tgm::Message<'_>,
    filter: Option<(&str, &str)>,
    json: bool,
) -> tgm::Result<()> {
    let meta = match filter {
        Some(_) => Some(m.metadata()?),
        None => None,
    };
    for oi in 0..m.num_objects() {
        if let (Some((k, v)), Some(meta)) = (filter, &meta) {
            if !meta
                .lookup(Some(oi), k)
                .is_some_and(|x| tgm::file::value_matches(x, v))
            {
                continue;
            }
        }
        let o = m.object(oi)?;
        let d = o.descriptor();
        if json {
            let v = Value::text_map([
                ("file", Value::Text(path.display().to_string())),
                ("message", Value::Uint(mi as u64)),
                ("object", Value::Uint(oi as u64)),
                ("dtype", d.dtype.name().into()),
                (
                    "shape",
                    Value::Array(d.shape.iter().map(|&x| Value::Uint(x)).collect()),
                ),
                ("byte_order", d.byte_order.name().into()),
                ("pipeline", Value::Text(pipeline_str(d))),
                ("stored_bytes", Value::Uint(o.payload_region().len() as u64)),
            ]);
            println!("{}", v.to_json());
        } else {
            println!(
                "{}\t{mi}\t{oi}\t{}\t{}\t{}\t{}",
                path.display(),
                d.dtype,
                shape_str(&d.shape),
                pipeline_str(d),
                o.payload_region().len()
            );
        }
    }
    Ok(())
}

pub fn dump(a: DumpArgs) -> CliResult {
    for path in &a.files {
        let f = open_file(path)?;
        for (mi, s) in f.spans().iter().enumerate() {
            f.with_message(mi, |m| {
                let meta = m.metadata()?;
                println!(
                    "=== {} message {mi} (offset {}, {} bytes) ===",
                    path.display(),
                    s.offset,
                    s.len
                );
                println!("metadata: {}", meta.to_value().to_json());
                for oi in 0..m.num_objects() {
                    println!(
                        "object[{oi}]: {}",
                        m.object(oi)?.descriptor().to_value().to_json()
                    );
                }
                Ok(())
            })?;
        }
    }
    Ok(())
}
