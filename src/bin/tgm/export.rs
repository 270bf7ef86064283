//! `tgm export`: every object as a .npy file.

use std::path::PathBuf;

use tgm::npy::{npy_layout, write_npy};
use tgm::{ByteOrder, DecodeOptions, Message, Verify};

use crate::util::{progress, read_file, CliResult};

#[derive(clap::Args)]
pub struct Args {
    /// Input .tgm file.
    pub input: PathBuf,
    /// Output directory (created if missing).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Skip frame-hash verification (for salvaging damaged files).
    #[arg(long)]
    pub no_verify: bool,
}

pub fn run(a: Args) -> CliResult {
    let buf = read_file(&a.input)?;
    let spans = tgm::scan(&buf);
    if spans.is_empty() {
        return Err(format!("{}: no Tensogram message found", a.input.display()).into());
    }
    std::fs::create_dir_all(&a.output)?;
    let opts = DecodeOptions::default().verify(if a.no_verify {
        Verify::Off
    } else {
        Verify::IfPresent
    });
    let mut total_objects = 0u64;
    let mut parsed = Vec::with_capacity(spans.len());
    for (mi, span) in spans.iter().enumerate() {
        let m = Message::parse_with(&buf[span.range()], span.offset, &opts.limits)
            .map_err(|e| e.in_message(mi))?;
        total_objects += m.num_objects() as u64;
        parsed.push(m);
    }
    let pb = progress(total_objects, "exporting");
    let mut written = 0;
    for (mi, m) in parsed.iter().enumerate() {
        m.verify(opts.verify).map_err(|e| e.in_message(mi))?;
        for oi in 0..m.num_objects() {
            let obj = m.object(oi).map_err(|e| e.in_message(mi))?;
            let data = obj
                .decode(&opts.clone().verify(Verify::Off))
                .map_err(|e| e.in_message(mi))?;
            let d = obj.descriptor();
            let layout = npy_layout(d.dtype, &d.shape, ByteOrder::native());
            let path = a.output.join(format!("m{mi}_o{oi}.npy"));
            std::fs::write(&path, write_npy(&layout, &data))?;
            if let Some(note) = layout.note {
                pb.suspend(|| eprintln!("note: {}: {note}", path.display()));
            }
            written += 1;
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    eprintln!(
        "exported {written} object(s) from {} message(s) to {}",
        parsed.len(),
        a.output.display()
    );
    Ok(())
}
