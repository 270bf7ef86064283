//! `tgm view`: the archive viewer in the browser, served on 127.0.0.1 or
//! written as a static site (`spec/wasm.md` §3).

use std::io::Write;
use std::path::PathBuf;

use crate::error::CliResult;
use crate::view::{archives, assets::Assets, http, server, site};

/// Arguments of `tgm view`.
#[derive(clap::Args)]
#[command(
    after_help = "The page decodes in the browser (WebAssembly) and reads each archive by \
HTTP range requests: a remote URL must answer them and, being another origin, allow CORS.\n\
The page and its WebAssembly reader are built into tgm; --assets DIR (or TGM_VIEWER_ASSETS) \
serves DIR/viewer and DIR/pkg instead, for working on the viewer.\n\
Only files that start as Tensogram archives are served, and in a directory only those whose real \
path is inside it (the others are named on stderr). Requests must name the viewer's own Host \
(127.0.0.1 or localhost with its port, else 403), requests for data from a page must come from \
that same origin, and paths with .. or encoded traversals are refused; no folder is listed.\n\n\
Examples:\n  tgm view era5.tgm\n  tgm view era5.tgm forecast.tgm\n  tgm view archives/ --port 8000\n  \
tgm view https://example.org/era5.tgm\n  tgm view era5.tgm --site public/"
)]
pub struct Args {
    /// .tgm files, directories of .tgm files, or http(s):// URLs; the
    /// page lists every archive they name, in this order.
    #[arg(required = true, num_args = 1..)]
    pub input: Vec<String>,
    /// Port on 127.0.0.1 (0: any free port, printed).
    #[arg(long, default_value_t = 8735)]
    pub port: u16,
    /// Write the page, the reader, the archive list and copies of local
    /// archives into DIR (new or empty) instead of serving them.
    #[arg(long, value_name = "DIR")]
    pub site: Option<PathBuf>,
    /// Serve the page (DIR/viewer) and the reader (DIR/pkg) from DIR
    /// instead of the copies built into tgm.
    #[arg(long, value_name = "DIR", env = "TGM_VIEWER_ASSETS")]
    pub assets: Option<PathBuf>,
}

/// Runs `tgm view`.
pub fn run(a: Args) -> CliResult {
    let collected = archives::collect_all(&a.input)?;
    for s in &collected.skipped {
        eprintln!("tgm view: {s}");
    }
    let list = collected.archives;
    let assets = Assets::find(a.assets.as_deref())?;
    if let Some(dir) = &a.site {
        let n = site::write(dir, &assets, &list)?;
        println!("tgm view: wrote {n} files to {}", dir.display());
        return Ok(());
    }
    let listener = server::bind(a.port)?;
    let port = listener.local_addr().map_or(a.port, |s| s.port());
    let mut out = std::io::stdout();
    writeln!(
        out,
        "tgm view: http://127.0.0.1:{port}/ ({} archive{}; Ctrl-C stops)",
        list.len(),
        if list.len() == 1 { "" } else { "s" }
    )?;
    out.flush()?;
    server::serve(
        listener,
        http::Site {
            assets,
            archives: list,
        },
        server::Limits::default(),
    );
    Ok(())
}
