//! `tgm`: command-line tool for Tensogram v3 files.

#[macro_use]
mod diag;
mod catalogue_input;
mod cli_reference;
mod cmd;
#[cfg(feature = "dicom")]
mod convert_dicom;
#[cfg(feature = "grib")]
mod convert_grib;
#[cfg(feature = "netcdf")]
mod convert_netcdf;
#[cfg(feature = "nifti")]
mod convert_nifti;
mod error;
mod features;
mod fmt;
mod input;
mod interrupt;
#[cfg(any(feature = "nifti", feature = "dicom"))]
mod medical_args;
mod meta_args;
mod npy_input;
mod output;
mod pipeline_args;
mod plot;
mod progress;
mod remote_append;
mod remote_input;
mod rewrite;
mod sidecar;
mod spool;
mod tally;
#[cfg(feature = "grib")]
mod to_grib;
#[cfg(feature = "netcdf")]
mod to_netcdf;
mod view;
mod weather_keys;
mod where_clause;

use clap::{CommandFactory, Parser, Subcommand};

use error::{CliError, CliResult};
use pipeline_args::{EncodeFlags, GlobalArgs, ThreadArgs};

/// Read, write, inspect and repair Tensogram v3 (.tgm) files.
#[derive(Parser)]
#[command(name = "tgm", version, about)]
struct Cli {
    #[command(flatten)]
    threads: ThreadArgs,
    #[command(flatten)]
    remote: remote_input::RemoteArgs,
    #[command(flatten)]
    catalogue: catalogue_input::CatalogueArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Summarise files: size, messages, objects, damage.
    Info(cmd::info::Args),
    /// List objects: one row per object (table or NDJSON with metadata).
    Ls(cmd::ls::Args),
    /// Print metadata and descriptors (text, or one JSON document with -j).
    Dump(cmd::dump::Args),
    /// Print values of metadata keys; a missing key is an error.
    Get(cmd::get::Args),
    /// Per object min, max, mean, standard deviation and NaN/Inf counts.
    Stats(cmd::stats::Args),
    /// Draw one object (a field, a slice, a volume's mid-slices) as a PNG.
    Plot(cmd::plot::Args),
    /// Change metadata keys, writing a new file.
    Set(cmd::set::Args),
    /// Copy messages, optionally selected and split into files by key value.
    Copy(cmd::copy::Args),
    /// Merge all messages of the inputs into one message.
    Merge(cmd::merge::Args),
    /// Split every object into its own single-object file.
    Split(cmd::split::Args),
    /// Rewrite messages with index and hashes in the header.
    Reshuffle(cmd::reshuffle::Args),
    /// Check files for correctness and integrity (exit 1 when invalid).
    Validate(cmd::validate::Args),
    /// Import .npy files (or an export's sidecars) as messages.
    Import(cmd::import::Args),
    /// Export every object as .npy plus a JSON metadata sidecar per message.
    Export(cmd::export::Args),
    /// Report and recover the intact messages of a damaged file.
    Salvage(cmd::salvage::Args),
    /// Rewrite every object with a new pipeline, reporting sizes and error.
    Recompress(cmd::recompress::Args),
    /// Write kerchunk (fsspec reference) JSON: zarr reads the objects in place.
    Refs(cmd::refs::Args),
    /// Write a catalogue file (.tgmc) of archives, so they open without a scan.
    #[command(visible_alias = "catalogue")]
    Index(cmd::index::Args),
    /// Run the whole import/export cycle on a built-in example tensor set.
    Demo(cmd::demo::Args),
    /// Browse archives in the browser: a viewer page on 127.0.0.1 or a static site.
    View(cmd::view::Args),
    /// Convert GRIB files to Tensogram (through ecCodes).
    #[cfg(feature = "grib")]
    ConvertGrib(convert_grib::Args),
    /// Write a .tgm file made by convert-grib back as GRIB2.
    #[cfg(feature = "grib")]
    ToGrib(to_grib::Args),
    /// Convert NetCDF-3/NetCDF-4 files to Tensogram (through netCDF-C).
    #[cfg(feature = "netcdf")]
    ConvertNetcdf(convert_netcdf::Args),
    /// Write a .tgm file made by convert-netcdf back as NetCDF-4.
    #[cfg(feature = "netcdf")]
    ToNetcdf(to_netcdf::Args),
    /// Convert NIfTI-1 volumes (and a segmentation mask) into one message.
    #[cfg(feature = "nifti")]
    ConvertNifti(convert_nifti::ConvertArgs),
    /// Write one object as a NIfTI-1 image (.nii or .nii.gz).
    #[cfg(feature = "nifti")]
    ToNifti(convert_nifti::ToArgs),
    /// Convert DICOM series (files or directories) into one message per series.
    #[cfg(feature = "dicom")]
    ConvertDicom(convert_dicom::Args),
    /// Write one 3-D or 4-D object as a DICOM series (one file per slice and time point).
    #[cfg(feature = "dicom")]
    ToDicom(convert_dicom::ToArgs),
    /// Print a shell completion script.
    #[command(
        after_help = "Example:\n  tgm completions bash > ~/.local/share/bash-completion/completions/tgm"
    )]
    Completions {
        /// Shell.
        shell: clap_complete::Shell,
    },
    /// Write the book's command-line reference (docs/src/cli) from this help.
    #[command(
        hide = true,
        after_help = "Example:\n  tgm cli-reference --check docs/src"
    )]
    CliReference(cli_reference::Args),
}

fn run(cli: Cli) -> CliResult {
    remote_input::configure(cli.remote);
    catalogue_input::configure(cli.catalogue);
    let threads = cli.threads.threads;
    // An encoding command runs with the threads and its own encode flags.
    macro_rules! encoding {
        ($run:path, $a:expr) => {{
            let g = GlobalArgs {
                threads,
                flags: EncodeFlags::clone(&$a.encode),
            };
            $run($a, &g)
        }};
    }
    match cli.command {
        Command::Info(a) => cmd::info::run(a),
        Command::Ls(a) => cmd::ls::run(a),
        Command::Dump(a) => cmd::dump::run(a),
        Command::Get(a) => cmd::get::run(a),
        Command::Stats(a) => cmd::stats::run(a, threads),
        Command::Plot(a) => cmd::plot::run(a, threads),
        Command::View(a) => cmd::view::run(a),
        Command::Set(a) => output::reported(a.report, || encoding!(cmd::set::run, a)),
        Command::Copy(a) => output::reported(a.report, || {
            cmd::copy::run(
                a,
                &GlobalArgs {
                    threads,
                    flags: EncodeFlags::default(),
                },
            )
        }),
        Command::Merge(a) => output::reported(a.report, || encoding!(cmd::merge::run, a)),
        Command::Split(a) => output::reported(a.report, || encoding!(cmd::split::run, a)),
        Command::Reshuffle(a) => output::reported(a.report, || encoding!(cmd::reshuffle::run, a)),
        Command::Validate(a) => cmd::validate::run(a),
        Command::Import(a) => encoding!(cmd::import::run, a),
        Command::Export(a) => output::reported(a.report, || cmd::export::run(a)),
        Command::Salvage(a) => cmd::salvage::run(a),
        Command::Recompress(a) => output::reported(a.report, || encoding!(cmd::recompress::run, a)),
        Command::Refs(a) => output::reported(a.report, || cmd::refs::run(a)),
        Command::Index(a) => output::reported(a.report, || cmd::index::run(a)),
        Command::Demo(a) => encoding!(cmd::demo::run, a),
        #[cfg(feature = "grib")]
        Command::ConvertGrib(a) => output::reported(a.report, || convert_grib::run(a)),
        #[cfg(feature = "grib")]
        Command::ToGrib(a) => output::reported(a.report, || to_grib::run(a)),
        #[cfg(feature = "netcdf")]
        Command::ConvertNetcdf(a) => {
            output::reported(a.report, || Ok(encoding!(convert_netcdf::run, a)?))
        }
        #[cfg(feature = "netcdf")]
        Command::ToNetcdf(a) => output::reported(a.report, || to_netcdf::run(a)),
        #[cfg(feature = "nifti")]
        Command::ConvertNifti(a) => output::reported(a.report, || convert_nifti::convert(a)),
        #[cfg(feature = "nifti")]
        Command::ToNifti(a) => output::reported(a.report, || convert_nifti::to_nifti(a)),
        #[cfg(feature = "dicom")]
        Command::ConvertDicom(a) => output::reported_with(a.report, || convert_dicom::run(a)),
        #[cfg(feature = "dicom")]
        Command::ToDicom(a) => output::reported(a.report, || convert_dicom::to_dicom(a)),
        Command::CliReference(a) => cli_reference::run(a),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "tgm", &mut script);
            let mut out = std::io::stdout().lock();
            std::io::Write::write_all(&mut out, &script)?;
            Ok(std::io::Write::flush(&mut out)?)
        }
    }
}

fn main() {
    // sz3 decodes run in a child: this executable again (spec/pipeline.md §4.7).
    #[cfg(feature = "sz3")]
    tgm::sz3_child::run_child_if_requested();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            if let Some(message) = features::unrecognised(&e).and_then(|s| features::left_out(&s)) {
                note!("error: {message}");
                std::process::exit(2);
            }
            e.exit()
        }
    };
    let result = run(cli);
    if let Some((name, sig)) = interrupt::received() {
        match result {
            Err(e) if e.to_string().contains("interrupted") => note!("error: {e}"),
            Err(e) => note!("error: interrupted by {name}: {e}"),
            Ok(()) => note!("error: interrupted by {name} (outputs completed before it were kept)"),
        }
        std::process::exit(128 + sig);
    }
    let code = match result {
        Ok(()) | Err(CliError::BrokenPipe) => 0,
        Err(CliError::Reported) => 1,
        Err(e @ CliError::Usage(_)) => {
            note!("error: {e}");
            2
        }
        Err(e) => {
            note!("error: {e}");
            1
        }
    };
    std::process::exit(code);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits a shell command line into words (single and double quotes).
    fn words(line: &str) -> Vec<String> {
        let (mut out, mut cur, mut quote, mut any) = (Vec::new(), String::new(), None, false);
        for c in line.chars() {
            match (quote, c) {
                (None, '\'' | '"') => (quote, any) = (Some(c), true),
                (Some(q), c) if c == q => quote = None,
                (None, c) if c.is_whitespace() => {
                    if any {
                        out.push(std::mem::take(&mut cur));
                    }
                    any = false;
                }
                (_, c) => (cur, any) = (cur + &c.to_string(), true),
            }
        }
        if any {
            out.push(cur);
        }
        out
    }

    /// The `tgm …` command lines of a help text's example section, each up
    /// to a pipe, a redirection or a comment.
    fn examples(after_help: &str) -> Vec<Vec<String>> {
        let Some(at) = after_help.rfind("Example") else {
            return Vec::new();
        };
        after_help[at..]
            .lines()
            .skip(1)
            .filter_map(|l| {
                let cmd = &l[l.find("tgm ")?..];
                let end = cmd.find(['|', '<', '>', '#']).unwrap_or(cmd.len());
                Some(words(&cmd[..end]))
            })
            .collect()
    }

    #[test]
    fn words_follow_shell_quoting() {
        assert_eq!(
            words("tgm copy in.tgm 'p_[a b].tgm' \"x\"y -w k=1"),
            ["tgm", "copy", "in.tgm", "p_[a b].tgm", "xy", "-w", "k=1"]
        );
    }

    #[test]
    fn every_command_help_ends_with_examples_that_parse() {
        let mut cmd = Cli::command();
        cmd.build();
        let mut checked = 0;
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let name = sub.get_name();
            let help = sub
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            let last = help.lines().rev().find(|l| !l.trim().is_empty());
            assert!(
                last.is_some_and(|l| l.trim_start().starts_with("tgm ") || l.contains("| tgm ")),
                "{name}: help does not end with an example:\n{help}"
            );
            let ex = examples(&help);
            assert!(!ex.is_empty(), "{name}: no example");
            for args in ex {
                assert_eq!(args.get(1).map(String::as_str), Some(name), "{args:?}");
                if let Err(e) = Cli::try_parse_from(&args) {
                    panic!("{name}: example {args:?} does not parse: {e}");
                }
                checked += 1;
            }
        }
        assert!(checked >= 20, "{checked}");
    }
}
