//! `tgm info`, `tgm ls` and `tgm dump`.

use std::path::PathBuf;

use tgm::cbor::Value;
use tgm::Message;

use crate::util::{pipeline_str, read_file, shape_str, CliResult};

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
}

#[derive(clap::Args)]
pub struct DumpArgs {
    /// Files to dump.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

pub fn info(a: InfoArgs) -> CliResult {
    for path in &a.files {
        let buf = read_file(path)?;
        let spans = tgm::scan(&buf);
        let mut objects = 0usize;
        let mut streaming = 0usize;
        for (mi, s) in spans.iter().enumerate() {
            let m = Message::parse_with(&buf[s.range()], s.offset, &Default::default())
                .map_err(|e| e.in_message(mi))?;
            objects += m.num_objects();
            if m.layout().preamble.total_length == 0 {
                streaming += 1;
            }
        }
        let covered: u64 = spans.iter().map(|s| s.len).sum();
        println!("File: {}", path.display());
        println!("Size: {} bytes", buf.len());
        println!("Messages: {}", spans.len());
        println!("Objects: {objects}");
        if streaming > 0 {
            println!("Streaming messages (no length): {streaming}");
        }
        if covered != buf.len() as u64 {
            println!("Unaccounted bytes: {}", buf.len() as u64 - covered);
        }
        println!("Version: 3");
    }
    Ok(())
}

pub fn ls(a: LsArgs) -> CliResult {
    if !a.json {
        println!("file\tmessage\tobject\tdtype\tshape\tpipeline\tstored_bytes");
    }
    for path in &a.files {
        let buf = read_file(path)?;
        for (mi, s) in tgm::scan(&buf).iter().enumerate() {
            let m = Message::parse_with(&buf[s.range()], s.offset, &Default::default())
                .map_err(|e| e.in_message(mi))?;
            for oi in 0..m.num_objects() {
                let o = m.object(oi).map_err(|e| e.in_message(mi))?;
                let d = o.descriptor();
                if a.json {
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
        }
    }
    Ok(())
}

pub fn dump(a: DumpArgs) -> CliResult {
    for path in &a.files {
        let buf = read_file(path)?;
        for (mi, s) in tgm::scan(&buf).iter().enumerate() {
            let m = Message::parse_with(&buf[s.range()], s.offset, &Default::default())
                .map_err(|e| e.in_message(mi))?;
            let meta = m.metadata().map_err(|e| e.in_message(mi))?;
            println!(
                "=== {} message {mi} (offset {}, {} bytes) ===",
                path.display(),
                s.offset,
                s.len
            );
            println!("metadata: {}", meta.to_value().to_json());
            for oi in 0..m.num_objects() {
                let o = m.object(oi).map_err(|e| e.in_message(mi))?;
                println!("object[{oi}]: {}", o.descriptor().to_value().to_json());
            }
        }
    }
    Ok(())
}
