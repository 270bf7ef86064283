//! `tgm`: command-line tool for Tensogram v3 files.

#[cfg(feature = "grib")]
mod convert_grib;
mod demo;
mod export;
mod import;
mod inspect;
mod salvage;
#[cfg(feature = "grib")]
mod to_grib;
mod util;
#[cfg(feature = "grib")]
mod weather;

use clap::{Parser, Subcommand};

/// Read, write and inspect Tensogram v3 (.tgm) files.
#[derive(Parser)]
#[command(name = "tgm", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Import .npy files as one message (one object per file).
    Import(import::Args),
    /// Export every object of every message as .npy files.
    Export(export::Args),
    /// Summarise files: messages, size, version.
    Info(inspect::InfoArgs),
    /// List objects: one row per object.
    Ls(inspect::LsArgs),
    /// Print metadata and descriptors.
    Dump(inspect::DumpArgs),
    /// Report and recover the intact messages of a damaged file.
    Salvage(salvage::Args),
    /// Run the whole import/export cycle on a built-in example tensor set.
    Demo(demo::Args),
    /// Convert GRIB files to Tensogram (through ecCodes).
    #[cfg(feature = "grib")]
    ConvertGrib(convert_grib::Args),
    /// Write a .tgm file made by convert-grib back as GRIB2.
    #[cfg(feature = "grib")]
    ToGrib(to_grib::Args),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Import(a) => import::run(a),
        Command::Export(a) => export::run(a),
        Command::Info(a) => inspect::info(a),
        Command::Ls(a) => inspect::ls(a),
        Command::Dump(a) => inspect::dump(a),
        Command::Salvage(a) => salvage::run(a),
        Command::Demo(a) => demo::run(a),
        #[cfg(feature = "grib")]
        Command::ConvertGrib(a) => convert_grib::run(a),
        #[cfg(feature = "grib")]
        Command::ToGrib(a) => to_grib::run(a),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        let mut src = std::error::Error::source(&*e);
        while let Some(s) = src {
            eprintln!("caused by: {s}");
            src = s.source();
        }
        std::process::exit(1);
    }
}
