//! `tgm demo`: builds a small example tensor set, imports it, lists it,
//! exports it, and checks that every array came back unchanged.

use std::io::Write;
use std::path::{Path, PathBuf};

use tgm::npy::{npy_layout, read_npy, write_npy};
use tgm::{ByteOrder, Dtype};

use crate::error::{CliResult, WithPath};
use crate::pipeline_args::{GlobalArgs, PipelineArgs};

/// Arguments of `tgm demo`.
#[derive(clap::Args)]
#[command(
    after_help = "Without --dir the example files go to a temporary directory that is \
removed at the end. With --dir they stay there (input/*.npy, example.tgm, export/), and a \
file already there is not overwritten unless --force is given. The demo ends with the commands \
to try next on its archive.\n\nExamples:\n  tgm demo\n  tgm demo -d tgm-demo\n  \
tgm demo -d tgm-demo --force"
)]
pub struct Args {
    /// Folder for the example files, kept after the demo (default: a
    /// fresh temporary directory, removed at the end).
    #[arg(short, long)]
    pub dir: Option<PathBuf>,
    /// With --dir: overwrite the demo's files already in the folder.
    #[arg(long, requires = "dir")]
    pub force: bool,
    #[command(flatten)]
    pub encode: crate::pipeline_args::EncodeFlags,
}

struct Example {
    name: &'static str,
    dtype: Dtype,
    order: ByteOrder,
    shape: Vec<u64>,
    data: Vec<u8>,
}

fn examples() -> Vec<Example> {
    let (ny, nx) = (6u64, 12u64);
    let mut temperature = Vec::new();
    for j in 0..ny {
        for i in 0..nx {
            let v = 273.15 + 15.0 * (j as f64 * 0.5).cos() + 3.0 * (i as f64 * 0.4).sin();
            temperature.extend_from_slice(&v.to_le_bytes());
        }
    }
    let pressure: Vec<u8> = (0..8)
        .flat_map(|k| (1000.0f32 - 12.5 * k as f32).to_be_bytes())
        .collect();
    let volume: Vec<u8> = (0..2 * 3 * 4i16)
        .flat_map(|v| (v * 37 - 300).to_le_bytes())
        .collect();
    let mask: Vec<u8> = (0..ny * nx).map(|k| u8::from(k % 5 == 0)).collect();
    vec![
        Example {
            name: "temperature",
            dtype: Dtype::Float64,
            order: ByteOrder::Little,
            shape: vec![ny, nx],
            data: temperature,
        },
        Example {
            name: "pressure",
            dtype: Dtype::Float32,
            order: ByteOrder::Big,
            shape: vec![8],
            data: pressure,
        },
        Example {
            name: "volume",
            dtype: Dtype::Int16,
            order: ByteOrder::Little,
            shape: vec![2, 3, 4],
            data: volume,
        },
        Example {
            name: "landmask",
            dtype: Dtype::Uint8,
            order: ByteOrder::Little,
            shape: vec![ny, nx],
            data: mask,
        },
    ]
}

/// One line on stdout, flushed so that it precedes the output of the
/// commands the demo runs.
fn say(args: std::fmt::Arguments<'_>) -> CliResult {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)?;
    out.write_all(b"\n")?;
    Ok(out.flush()?)
}

/// The files and folders the demo writes under `dir`.
fn targets(dir: &Path, exs: &[Example]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = exs
        .iter()
        .map(|e| dir.join("input").join(format!("{}.npy", e.name)))
        .collect();
    v.push(dir.join("example.tgm"));
    v.push(dir.join("export"));
    v
}

/// The commands to try next on the demo's archive `tgm_path`.
fn next_commands(tgm_path: &Path) -> Vec<String> {
    let p = tgm_path.display();
    vec![
        format!("tgm info {p}"),
        format!("tgm ls -p name,shape {p}"),
        format!("tgm get {p} name"),
        format!("tgm stats --objects name=temperature {p}"),
        format!("tgm dump -w name=pressure {p}"),
        format!("tgm plot {p} --objects name=temperature -o temperature.png"),
    ]
}

/// Runs `tgm demo`. Without `--dir`, its files go to a fresh temporary
/// directory removed at the end (also on failure); with `--dir` they stay,
/// and files already there are refused unless `--force`.
pub fn run(a: Args, g: &GlobalArgs) -> CliResult {
    let exs = examples();
    let temp;
    let dir = match &a.dir {
        Some(d) => {
            let there: Vec<String> = targets(d, &exs)
                .into_iter()
                .filter(|p| p.symlink_metadata().is_ok())
                .map(|p| p.display().to_string())
                .collect();
            if !there.is_empty() && !a.force {
                return Err(crate::error::usage(format!(
                    "{} already exist{}: tgm demo -d does not overwrite them; \
                     give --force or another folder",
                    there.join(", "),
                    if there.len() == 1 { "s" } else { "" }
                )));
            }
            d.clone()
        }
        None => {
            temp = tempfile::Builder::new().prefix("tgm-demo-").tempdir()?;
            temp.path().to_path_buf()
        }
    };
    let input_dir = dir.join("input");
    let export_dir = dir.join("export");
    std::fs::create_dir_all(&input_dir).at(&input_dir)?;
    let mut inputs = Vec::new();
    for e in &exs {
        let path = input_dir.join(format!("{}.npy", e.name));
        std::fs::write(
            &path,
            write_npy(&npy_layout(e.dtype, &e.shape, e.order), &e.data),
        )
        .at(&path)?;
        inputs.push(path);
    }
    say(format_args!(
        "1. wrote {} example arrays to {}",
        exs.len(),
        input_dir.display()
    ))?;
    let tgm_path = dir.join("example.tgm");
    crate::cmd::import::run(
        crate::cmd::import::Args {
            inputs: inputs.clone(),
            output: tgm_path.clone(),
            meta: vec!["mars.class=od".into(), "source=tgm-demo".into()],
            append: false,
            force: true,
            json: false,
            pipeline: PipelineArgs::default(),
            encode: g.flags.clone(),
        },
        g,
    )?;
    say(format_args!("2. imported them into {}", tgm_path.display()))?;
    crate::cmd::ls::run(crate::cmd::ls::Args {
        files: vec![tgm_path.clone()],
        where_clause: Vec::new(),
        keys: None,
        json: false,
    })?;
    crate::cmd::export::run(crate::cmd::export::Args {
        input: tgm_path.clone(),
        output: export_dir.clone(),
        force: true,
        no_verify: false,
        apply_lut: false,
        select: Default::default(),
        report: Default::default(),
    })?;
    say(format_args!(
        "3. exported every object to {}",
        export_dir.display()
    ))?;
    for e in &exs {
        let path = export_dir.join(format!("m0_{}.npy", e.name));
        let back = read_npy(&std::fs::read(&path).at(&path)?).at(&path)?;
        let mut expected = e.data.clone();
        if e.order != ByteOrder::native() {
            tgm::dtype::swap_in_place(&mut expected, e.dtype.swap_unit());
        }
        if back.data != expected || back.shape != e.shape || back.dtype != e.dtype {
            return Err(format!("round trip changed {}", e.name).into());
        }
    }
    say(format_args!(
        "4. all {} arrays came back bit-identical (in native byte order)",
        exs.len()
    ))?;
    match &a.dir {
        Some(_) => say(format_args!(
            "\nThe files stay in {}. Next, try:",
            dir.display()
        ))?,
        None => say(format_args!(
            "\nThe files were in a temporary folder, removed now; keep them with \
             `tgm demo -d tgm-demo`, then try:"
        ))?,
    }
    let kept = a.dir.as_ref().map_or_else(
        || Path::new("tgm-demo").join("example.tgm"),
        |_| tgm_path.clone(),
    );
    for c in next_commands(&kept) {
        say(format_args!("  {c}"))?;
    }
    Ok(())
}
