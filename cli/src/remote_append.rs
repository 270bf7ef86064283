//! `tgm import --append --force` to a remote archive: an object store
//! cannot append to an object, so the archive is rewritten whole as a new
//! object at the same key (`spec/remote.md` §7.3).

use std::path::Path;

use crate::error::{CliError, CliResult};
use crate::output::AtomicFile;

/// Starts `tgm import --append --force` to the remote archive `out`: an
/// object store cannot append, so a new object is written holding the old
/// one's messages (streamed through, its catalogue left out), to which the
/// caller adds the new messages; committing ends it with the catalogue of
/// all and replaces the old object whole (`spec/remote.md` §7.3). A missing
/// object is a new archive; a damaged one is refused.
#[cfg(feature = "remote")]
pub fn append_by_rewrite(out: &Path, inputs: &[&Path]) -> CliResult<AtomicFile> {
    use crate::error::WithPath;
    crate::output::check_output(out, inputs, true)?;
    let url = crate::output::remote_url(out).unwrap_or_default();
    let opts = crate::remote_input::remote_options()?;
    let old = match tgm::remote::RemoteSource::open(url, &opts) {
        Ok(src) => Some(tgm::TgmFile::from_source(src, &tgm::Limits::default()).at(out)?),
        Err(e) if e.kind() == &tgm::ErrorKind::NotFound => None,
        Err(e) => return Err(crate::error::at_path(out, e)),
    };
    if let Some(f) = &old {
        if f.check_intact().is_err() || (f.size() > 0 && f.num_messages() == 0) {
            return Err(CliError::Failed(format!(
                "{url}: not a complete Tensogram archive; refusing to append to it \
                 (`tgm salvage` keeps its intact messages)"
            )));
        }
    }
    let mut file = AtomicFile::create(out, true)?;
    if let Some(f) = old {
        let n = f.copy_messages_to(file.writer(), 8 << 20).at(out)?;
        note!(
            "note: {url}: an object store cannot append; copied its {} message(s) ({n} bytes) into the new object that replaces it",
            f.num_messages()
        );
    }
    Ok(file)
}

/// Without the `remote` feature a URL is refused with the reason.
#[cfg(not(feature = "remote"))]
pub fn append_by_rewrite(out: &Path, _: &[&Path]) -> CliResult<AtomicFile> {
    Err(CliError::Failed(format!(
        "{}: this tgm was built without the `remote` feature; rebuild with --features remote",
        out.display()
    )))
}
