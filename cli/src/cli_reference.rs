//! The book's command-line reference (`docs/src/cli/`, listed in
//! `docs/src/SUMMARY.md`), rendered from clap's own long help, so each page
//! says what `tgm SUBCOMMAND --help` says. `tgm cli-reference DIR` (hidden)
//! writes the pages into the book's source folder `DIR`; with `--check` it
//! writes nothing and fails naming every page that differs.
//!
//! A build without a cargo feature lacks that feature's subcommands
//! (`features::left_out`): their pages are left as they are, and the index
//! and the book's contents, which list every subcommand, are rendered and
//! checked only by a build with all of them.

use std::path::{Path, PathBuf};

use crate::error::{CliError, CliResult};

#[derive(clap::Args)]
pub struct Args {
    /// The book's source folder (docs/src): pages go to DIR/cli, their
    /// entries to DIR/SUMMARY.md.
    dir: PathBuf,
    /// Write nothing; fail when a page differs from what this build renders.
    #[arg(long)]
    check: bool,
}

/// The line of SUMMARY.md under which the subcommands' pages are listed.
const SUMMARY_PARENT: &str = "- [Command-line reference](cli/tgm.md)";

/// One file of the reference: its path below the book's source folder.
struct Page {
    file: String,
    text: String,
}

fn subcommand_page(name: &str, sub: &mut clap::Command) -> Page {
    let help = sub.render_long_help().to_string();
    Page {
        file: format!("cli/{name}.md"),
        text: format!(
            "# tgm {name}\n\n<!-- Written by `tgm cli-reference docs/src` from the command's \
             help; edit the help, not this page. -->\n\n```text\n{}\n```\n",
            help.trim_end()
        ),
    }
}

/// Whether this build has every subcommand a cargo feature can leave out.
fn complete_build(root: &clap::Command) -> bool {
    crate::features::optional_subcommands()
        .all(|name| root.get_subcommands().any(|s| s.get_name() == name))
}

/// The visible subcommands, in the order of `tgm --help`.
fn visible(root: &mut clap::Command) -> Vec<&mut clap::Command> {
    root.get_subcommands_mut()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .collect()
}

fn index_page(root: &mut clap::Command, names: &[(String, String)]) -> Page {
    let help = root.render_long_help().to_string();
    let mut text = String::from(
        "# Command-line reference\n\n<!-- Written by `tgm cli-reference docs/src` from the \
         commands' help; edit the help, not this page. -->\n\nEvery page is `tgm SUBCOMMAND \
         --help` of a build with the `grib` and `netcdf` features \
         (`cargo install --locked --path cli --features grib,netcdf`); \
         `cargo test -p tgm-cli --features grib,netcdf --test cli_reference` fails when a \
         page differs from what the build prints.\n\n",
    );
    for (name, about) in names {
        text.push_str(&format!("- [`tgm {name}`]({name}.md): {about}\n"));
    }
    text.push_str(&format!("\n```text\n{}\n```\n", help.trim_end()));
    Page {
        file: "cli/tgm.md".into(),
        text,
    }
}

/// SUMMARY.md with the subcommands' entries under [`SUMMARY_PARENT`].
fn summary(current: &str, names: &[(String, String)]) -> Result<String, String> {
    let mut lines: Vec<&str> = current.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == SUMMARY_PARENT)
        .ok_or_else(|| format!("has no line {SUMMARY_PARENT:?}"))?;
    let end = lines[at + 1..]
        .iter()
        .position(|l| !l.starts_with("    - [tgm "))
        .map_or(lines.len(), |i| at + 1 + i);
    let entries: Vec<String> = names
        .iter()
        .map(|(name, _)| format!("    - [tgm {name}](cli/{name}.md)"))
        .collect();
    lines.splice(at + 1..end, entries.iter().map(String::as_str));
    Ok(lines.join("\n") + "\n")
}

/// Every file this build renders, with the SUMMARY.md it implies when
/// the build has every subcommand.
fn render(book: &Path) -> CliResult<Vec<Page>> {
    // Environment values would make the pages depend on who renders them.
    let hide = |a: clap::Arg| a.hide_env_values(true);
    let mut root = <crate::Cli as clap::CommandFactory>::command()
        .mut_args(hide)
        .mut_subcommands(|s| s.mut_args(hide));
    root.build();
    let complete = complete_build(&root);
    let mut pages = Vec::new();
    let mut names = Vec::new();
    for sub in visible(&mut root) {
        let name = sub.get_name().to_string();
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        pages.push(subcommand_page(&name, sub));
        names.push((name, about));
    }
    if complete {
        pages.push(index_page(&mut root, &names));
        let path = book.join("SUMMARY.md");
        let current = std::fs::read_to_string(&path)
            .map_err(|e| CliError::Failed(format!("{}: {e}", path.display())))?;
        let text = summary(&current, &names)
            .map_err(|e| CliError::Failed(format!("{}: {e}", path.display())))?;
        pages.push(Page {
            file: "SUMMARY.md".into(),
            text,
        });
    }
    Ok(pages)
}

pub fn run(a: Args) -> CliResult {
    let pages = render(&a.dir)?;
    let mut stale = 0;
    for page in &pages {
        let path = a.dir.join(&page.file);
        let current = std::fs::read_to_string(&path).ok();
        if current.as_deref() == Some(page.text.as_str()) {
            continue;
        }
        if a.check {
            let why = if current.is_none() {
                "missing"
            } else {
                "differs from the help this build prints"
            };
            note!("{}: {why}", path.display());
            stale += 1;
            continue;
        }
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder)
                .map_err(|e| CliError::Failed(format!("{}: {e}", folder.display())))?;
        }
        let mut file = crate::output::AtomicFile::create(&path, true)?;
        file.writer()
            .write_all(page.text.as_bytes())
            .map_err(|e| CliError::Failed(format!("{}: {e}", path.display())))?;
        file.commit()?;
        note!("wrote {}", path.display());
    }
    if stale > 0 {
        note!(
            "{stale} page(s) of the command-line reference are stale: run \
             `cargo run -p tgm-cli --features grib,netcdf -- cli-reference {}`",
            a.dir.display()
        );
        return Err(CliError::Reported);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_entries_replace_the_old_ones_under_the_reference() {
        let current = format!(
            "# Summary\n\n{SUMMARY_PARENT}\n    - [tgm old](cli/old.md)\n- [Next](next.md)\n"
        );
        let names = [
            ("ls".to_string(), String::new()),
            ("info".into(), String::new()),
        ];
        let out = summary(&current, &names).unwrap();
        assert_eq!(
            out,
            format!(
                "# Summary\n\n{SUMMARY_PARENT}\n    - [tgm ls](cli/ls.md)\n    \
                 - [tgm info](cli/info.md)\n- [Next](next.md)\n"
            )
        );
        assert!(summary("# Summary\n", &names).is_err());
    }
}
