//! The book under `docs/` and the README's links into it: every page is in
//! `docs/src/SUMMARY.md` and every entry has its page; every link of the
//! README to a file of the repository resolves; every generated block of a
//! page is well formed and names a command that exists, and
//! `docs/generated.py` rewrites a block from its command's output only
//! when the command succeeds.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn pages(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            pages(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

/// The targets of the Markdown links `](target)` of `text`, anchors cut.
fn links(text: &str) -> Vec<&str> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .map(|t| t.split('#').next().unwrap_or(t))
        .filter(|t| !t.is_empty() && !t.contains("://"))
        .collect()
}

#[test]
fn every_page_is_in_the_summary_and_every_entry_has_its_page() {
    let src = root().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: Vec<&str> = links(&summary);
    for l in &listed {
        assert!(
            src.join(l).is_file(),
            "SUMMARY.md lists {l}, which does not exist"
        );
    }
    let mut all = Vec::new();
    pages(&src, &mut all);
    for p in all {
        let rel = p.strip_prefix(&src).unwrap().to_str().unwrap().to_string();
        if rel != "SUMMARY.md" {
            assert!(
                listed.contains(&rel.as_str()),
                "docs/src/{rel} is not in SUMMARY.md"
            );
        }
    }
}

#[test]
fn the_readme_links_resolve() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let targets = links(&readme);
    assert!(targets.len() >= 10, "{targets:?}");
    for t in targets {
        assert!(
            root().join(t).exists(),
            "README.md links to {t}, which does not exist"
        );
    }
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines; the book is for the rest"
    );
}

fn python() -> bool {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: python3 is not installed");
    }
    ok
}

fn generated(args: &[&str]) -> std::process::Output {
    Command::new("python3")
        .arg(root().join("docs/generated.py"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn every_generated_block_names_a_command_that_exists() {
    if !python() {
        return;
    }
    let mut all = Vec::new();
    pages(&root().join("docs/src"), &mut all);
    let mut blocks = 0;
    for p in all {
        let o = generated(&["--list", p.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{}: {err}", p.display());
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            blocks += 1;
            let (name, command) = line.split_once('\t').unwrap();
            // A script the command runs, or the package it runs with `-p`.
            let words: Vec<&str> = command.split_whitespace().collect();
            let scripts = words
                .iter()
                .filter(|w| w.ends_with(".sh") || w.ends_with(".py"));
            let packages = words.windows(2).filter(|w| w[0] == "-p").map(|w| w[1]);
            let mut named = 0;
            for s in scripts {
                assert!(
                    root().join(s).is_file(),
                    "{}: block {name}: no file {s}",
                    p.display()
                );
                named += 1;
            }
            for pkg in packages {
                let found = ["tools", "."]
                    .iter()
                    .any(|d| root().join(d).join(pkg.trim_start_matches("tgm-")).is_dir())
                    || pkg == "tgm-cli";
                assert!(found, "{}: block {name}: no package {pkg}", p.display());
                named += 1;
            }
            assert!(
                named > 0,
                "{}: block {name} runs nothing of this repository",
                p.display()
            );
        }
    }
    assert!(blocks >= 8, "only {blocks} generated blocks");
}

#[test]
fn a_block_is_rewritten_only_by_a_command_that_succeeds() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("p.md");
    let text = "# P\n\n<!-- generated: t; command: printf '| a |\\n| b |\\n' -->\n| old |\n\
                <!-- end generated: t -->\n\n<!-- generated: f; command: echo '| new |'; false -->\n\
                | kept |\n<!-- end generated: f -->\ntail\n";
    std::fs::write(&page, text).unwrap();
    let o = generated(&[page.to_str().unwrap(), "t"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let now = std::fs::read_to_string(&page).unwrap();
    assert_eq!(now, text.replace("| old |\n", "| a |\n| b |\n"));
    let o = generated(&[page.to_str().unwrap(), "f"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unchanged"));
    assert_eq!(std::fs::read_to_string(&page).unwrap(), now);
    let o = generated(&[page.to_str().unwrap(), "missing"]);
    assert_eq!(o.status.code(), Some(1));
    std::fs::write(&page, "<!-- generated: x; command: true -->\n| open |\n").unwrap();
    let o = generated(&["--list", page.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("has no line"));
}
