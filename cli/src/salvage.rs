//! `tgm salvage`: report and recover the intact messages of a damaged file.

use std::io::Write;
use std::path::PathBuf;

use tgm::file::salvage;

use crate::util::CliResult;

#[derive(clap::Args)]
pub struct Args {
    /// The damaged file.
    pub input: PathBuf,
    /// Write the intact messages to this new file.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

pub fn run(a: Args) -> CliResult {
    let file = std::fs::File::open(&a.input)
        .map_err(|e| format!("cannot open {}: {e}", a.input.display()))?;
    let buf =
        std::fs::read(&a.input).map_err(|e| format!("cannot read {}: {e}", a.input.display()))?;
    drop(file);
    let rep = salvage(&buf, &tgm::Limits::default());
    for s in &rep.skipped {
        println!("skipped\t{}\t{}\t{}", s.offset, s.len, s.reason);
    }
    let kept: u64 = rep.messages.iter().map(|m| m.len).sum();
    println!(
        "intact\t{} message(s), {kept} of {} bytes; {} range(s) skipped",
        rep.messages.len(),
        buf.len(),
        rep.skipped.len()
    );
    if let Some(out) = a.output {
        let tmp = out.with_extension("tgm.tmp");
        {
            let mut f = std::fs::File::create(&tmp)?;
            for m in &rep.messages {
                f.write_all(&buf[m.range()])?;
            }
            f.sync_data()?;
        }
        std::fs::rename(&tmp, &out)?;
        eprintln!(
            "wrote {} intact message(s) to {}",
            rep.messages.len(),
            out.display()
        );
    }
    Ok(())
}
