//! The `tgm …` command lines that the README and the book show, read from
//! the pages themselves so that the tests run what a reader copies.

/// The `tgm` lines of the ```sh blocks between the line `heading` of
/// `page` and the next heading of the same or a higher level (the whole
/// page for its `# ` title), each cut before a trailing ` #` comment.
pub fn tgm_lines(page: &str, heading: &str) -> Vec<String> {
    let level = heading.chars().take_while(|&c| c == '#').count();
    let mut lines = page.lines();
    assert!(
        lines.any(|l| l == heading),
        "the page has no line {heading:?}"
    );
    let mut in_sh = false;
    let mut fenced = false;
    let mut out = Vec::new();
    for line in lines {
        if line.starts_with("```") {
            fenced = !fenced;
            in_sh = fenced && line.trim() == "```sh";
            continue;
        }
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !fenced && hashes > 0 && hashes <= level && line[hashes..].starts_with(' ') {
            break;
        }
        if in_sh && line.starts_with("tgm ") {
            out.push(
                line.split(" #")
                    .next()
                    .unwrap_or(line)
                    .trim_end()
                    .to_string(),
            );
        }
    }
    out
}

/// Runs `line` with `sh` in `dir`, the folder of the `tgm` executable
/// `tgm` first on the path, as a reader runs an example.
#[allow(dead_code)] // the remote examples are run word by word instead
pub fn sh(line: &str, dir: &std::path::Path, tgm: &std::path::Path) -> std::process::Output {
    let path = format!(
        "{}:{}",
        tgm.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::process::Command::new("sh")
        .args(["-c", line])
        .current_dir(dir)
        .env("PATH", &path)
        .output()
        .unwrap()
}
