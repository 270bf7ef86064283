//! Subcommands that a cargo feature leaves out of a build: asked for in a
//! build without them, they name the feature and the install command
//! instead of clap's "unrecognized subcommand".

/// (subcommand, cargo feature, system library it needs).
const OPTIONAL: [(&str, &str, &str); 8] = [
    ("convert-grib", "grib", "ecCodes: libeccodes-dev"),
    ("to-grib", "grib", "ecCodes: libeccodes-dev"),
    ("convert-netcdf", "netcdf", "netCDF-C: libnetcdf-dev"),
    ("to-netcdf", "netcdf", "netCDF-C: libnetcdf-dev"),
    ("convert-nifti", "nifti", ""),
    ("to-nifti", "nifti", ""),
    ("convert-dicom", "dicom", ""),
    ("to-dicom", "dicom", ""),
];

/// The subcommands a cargo feature can leave out of a build.
pub fn optional_subcommands() -> impl Iterator<Item = &'static str> {
    OPTIONAL.iter().map(|(name, _, _)| *name)
}

/// Whether cargo feature `name` is in this build.
fn built_with(name: &str) -> bool {
    let built = [
        ("grib", cfg!(feature = "grib")),
        ("netcdf", cfg!(feature = "netcdf")),
        ("nifti", cfg!(feature = "nifti")),
        ("dicom", cfg!(feature = "dicom")),
    ];
    built.iter().any(|&(n, on)| n == name && on)
}

/// The message for `subcommand` when this build left it out, else none.
pub fn left_out(subcommand: &str) -> Option<String> {
    let (name, feature, library) = OPTIONAL
        .iter()
        .find(|(name, feature, _)| *name == subcommand && !built_with(feature))?;
    let needs = if library.is_empty() {
        String::new()
    } else {
        format!(" (it needs {library} to build)")
    };
    Some(format!(
        "`tgm {name}` is not in this build: it comes with the cargo feature `{feature}`{needs}; \
         install it with\n  cargo install --locked --path cli --features {feature}"
    ))
}

/// The subcommand clap found unrecognised in `e`, if that is the error.
pub fn unrecognised(e: &clap::Error) -> Option<String> {
    if e.kind() != clap::error::ErrorKind::InvalidSubcommand {
        return None;
    }
    match e.get(clap::error::ContextKind::InvalidSubcommand)? {
        clap::error::ContextValue::String(s) => Some(s.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_commands_left_out_are_named_with_their_feature() {
        for (name, feature, _) in OPTIONAL {
            match left_out(name) {
                Some(m) => {
                    assert!(!built_with(feature), "{name}");
                    assert!(m.contains(&format!("--features {feature}")), "{m}");
                    assert!(m.contains("cargo install --locked --path cli"), "{m}");
                }
                None => assert!(built_with(feature), "{name}"),
            }
        }
        assert_eq!(left_out("ls"), None);
        assert_eq!(left_out("convert-gribx"), None);
    }
}
