//! `tgm export`: every object as a .npy file.

use std::path::PathBuf;

use tgm::npy::{npy_layout, write_npy};
use tgm::{ByteOrder, DecodeOptions, Verify};

use crate::util::{open_file, progress, CliResult};

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
    let file = open_file(&a.input)?;
    if file.num_messages() == 0 {
        return Err(format!("{}: no Tensogram message found", a.input.display()).into());
    }
    if let Some(t) = file.torn_tail() {
        eprintln!(
            "warning: {} trailing bytes at offset {} form no complete message ({})",
            t.len, t.offset, t.reason
        );
    }
    std::fs::create_dir_all(&a.output)?;
    let opts = DecodeOptions::default().verify(if a.no_verify {
        Verify::Off
    } else {
        Verify::IfPresent
    });
    let mut total_objects = 0u64;
    for mi in 0..file.num_messages() {
        file.with_message(mi, |m| {
            total_objects += m.num_objects() as u64;
            Ok(())
        })?;
    }
    let pb = progress(total_objects, "exporting");
    let mut written = 0;
    for mi in 0..file.num_messages() {
        file.with_message(mi, |m| {
            m.verify(opts.verify)?;
            let unverified = opts.clone().verify(Verify::Off);
            for oi in 0..m.num_objects() {
                let obj = m.object(oi)?;
                let data = obj.decode(&unverified)?;
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
            Ok(())
        })?;
    }
    pb.finish_and_clear();
    eprintln!(
        "exported {written} object(s) from {} message(s) to {}",
        file.num_messages(),
        a.output.display()
    );
    Ok(())
}
