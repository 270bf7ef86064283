//! The table of metadata rules (`testdata/metadata_lookup.json`,
//! `spec/format.md` §7.1) through `tgm get`, which answers in the scope
//! `ObjectThenExtra`: each case's message is written by the library and
//! every lookup in that scope is asked of `tgm get -j`. Caller errors and
//! the other scopes have no `tgm get` form; the library, C and Python
//! runners check them.

#[path = "../../tests/common/metadata_table.rs"]
mod table;

use std::process::Command;

use table::Outcome;
use tgm::metadata::Scope;

#[test]
fn tgm_get_answers_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let mut asked = 0;
    for (ci, case) in table::cases().iter().enumerate() {
        let Outcome::Lookups(lookups) = &case.outcome else {
            continue;
        };
        let file = dir.path().join(format!("case{ci}.tgm"));
        std::fs::write(&file, case.encode()).unwrap();
        for l in lookups {
            let Scope::ObjectThenExtra(object) = l.scope else {
                continue;
            };
            asked += 1;
            let name = format!("{}: object {object} {:?}", case.name, l.path);
            let out = Command::new(env!("CARGO_BIN_EXE_tgm"))
                .args(["get", "-j", "-p", &l.path])
                .arg(&file)
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            match &l.expect {
                None => {
                    assert_eq!(out.status.code(), Some(1), "{name}: {stdout}{stderr}");
                    // `tgm get` stops at the first object without the key:
                    // the table asks only where that is the object named.
                    let at = format!("not found in message 0, object {object}");
                    assert!(stderr.contains(&at), "{name}: {stderr}");
                }
                Some(want) => {
                    assert!(out.status.success(), "{name}: {stderr}");
                    let row: serde_json::Value = stdout
                        .lines()
                        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
                        .find(|row| row["object"] == object as u64)
                        .unwrap_or_else(|| panic!("{name}: no row for the object: {stdout}"));
                    assert_eq!(&row["keys"][&l.path], want, "{name}");
                }
            }
        }
    }
    assert!(asked > 0, "the table has lookups in tgm get's scope");
}
