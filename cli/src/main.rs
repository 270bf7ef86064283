//! `tgm`: command-line tool for Tensogram v3 files.

#[cfg(feature = "grib")]
mod convert_grib;
#[cfg(feature = "dicom")]
mod convert_dicom;
#[cfg(feature = "nifti")]
mod convert_nifti;
mod demo;
mod export;
mod import;
mod inspect;
#[cfg(any(feature = "nifti", feature = "dicom"))]
mod medical;
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
    /// Convert NIfTI-1 volumes (and a segmentation mask) into one message.
    #[cfg(feature = "nifti")]
    ConvertNifti(convert_nifti::ConvertArgs),
    /// Write one object as a NIfTI-1 image (.nii or .nii.gz).
    #[cfg(feature = "nifti")]
    ToNifti(convert_nifti::ToArgs),
    /// Convert DICOM series (files or directories) into one message.
    #[cfg(feature = "dicom")]
    ConvertDicom(convert_dicom::Args),
    /// Write one 3-D object as a DICOM series (one file per slice).
    #[cfg(feature = "dicom")]
    ToDicom(convert_dicom::ToArgs),
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
        #[cfg(feature = "nifti")]
        Command::ConvertNifti(a) => convert_nifti::convert(a),
        #[cfg(feature = "nifti")]
        Command::ToNifti(a) => convert_nifti::to_nifti(a),
        #[cfg(feature = "dicom")]
        Command::ConvertDicom(a) => convert_dicom::run(a),
        #[cfg(feature = "dicom")]
        Command::ToDicom(a) => convert_dicom::to_dicom(a),
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
