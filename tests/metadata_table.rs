//! The table of metadata rules (`testdata/metadata_lookup.json`,
//! `spec/format.md` §7.1, §7.2) through the library:
//! `GlobalMetadata::from_caller`, then `get` in every scope on the
//! metadata read back from the encoded message. The C API, Python and
//! `tgm get` run the same table (see the table's `about`).

#[path = "common/metadata_table.rs"]
mod table;

use table::Outcome;
use tgm::metadata::Scope;

#[test]
fn every_case_of_the_table_holds_through_the_library() {
    let cases = table::cases();
    let mut scopes = [0usize; 3];
    let mut errors = 0;
    for case in &cases {
        let name = &case.name;
        match &case.outcome {
            Outcome::Error { kind, mentions } => {
                errors += 1;
                let e = case
                    .read_by_caller_rule()
                    .err()
                    .unwrap_or_else(|| panic!("{name}: from_caller accepted the map"));
                assert_eq!(kind, "metadata", "{name}: the table names another kind");
                assert_eq!(e.kind(), &tgm::ErrorKind::Metadata, "{name}: {e}");
                assert!(e.to_string().contains(mentions), "{name}: {e}");
            }
            Outcome::Lookups(lookups) => {
                let bytes = case.encode();
                let meta = tgm::decode_metadata(&bytes, &Default::default()).unwrap();
                for l in lookups {
                    scopes[match l.scope {
                        Scope::Message => 0,
                        Scope::Object(_) => 1,
                        Scope::ObjectThenExtra(_) => 2,
                    }] += 1;
                    let got = meta.get(l.scope, &l.path).map(|v| v.to_json_value());
                    assert_eq!(got, l.expect, "{name}: {:?} {:?}", l.scope, l.path);
                }
            }
        }
    }
    assert!(
        scopes.iter().all(|&n| n > 0) && errors > 0,
        "the table covers every scope and caller errors: {scopes:?}, {errors}"
    );
}

#[test]
fn lookup_keeps_its_scopes() {
    // `lookup` is `get` in ObjectThenExtra for an object, Message for none.
    for case in table::cases() {
        let Outcome::Lookups(lookups) = &case.outcome else {
            continue;
        };
        let meta = tgm::decode_metadata(&case.encode(), &Default::default()).unwrap();
        for l in lookups {
            let object = match l.scope {
                Scope::Message => None,
                Scope::ObjectThenExtra(i) => Some(i),
                Scope::Object(_) => continue,
            };
            assert_eq!(meta.lookup(object, &l.path), meta.get(l.scope, &l.path));
        }
    }
}

#[test]
fn keys_follow_the_search_order() {
    let meta = tgm::GlobalMetadata::from_json_value(&serde_json::json!({
        "base": [{"b": 1, "a": 2}, {"c": 3, "a": 4}],
        "_extra_": {"d": 5, "b": 6},
    }))
    .unwrap();
    let bytes = tgm::encode(
        &meta,
        &[
            (
                &tgm::ObjectDescriptor::new(tgm::Dtype::Uint8, vec![1]),
                &[1u8][..],
            ),
            (
                &tgm::ObjectDescriptor::new(tgm::Dtype::Uint8, vec![1]),
                &[2u8][..],
            ),
        ],
        &Default::default(),
    )
    .unwrap();
    let meta = tgm::decode_metadata(&bytes, &Default::default()).unwrap();
    assert_eq!(meta.keys(Scope::Message), ["a", "b", "c", "d"]);
    assert_eq!(meta.keys(Scope::Object(1)), ["a", "c"]);
    assert_eq!(meta.keys(Scope::ObjectThenExtra(0)), ["a", "b", "d"]);
    assert!(meta.keys(Scope::Object(2)).is_empty());
}

#[test]
fn caller_owned_drops_only_what_the_encoder_writes() {
    let case = table::cases()
        .into_iter()
        .find(|c| c.name.starts_with("dotted paths"))
        .unwrap();
    let meta = tgm::decode_metadata(&case.encode(), &Default::default()).unwrap();
    assert!(!meta.reserved.is_empty() && meta.base[0].contains_key("_reserved_"));
    let owned = meta.caller_owned();
    assert!(owned.reserved.is_empty());
    assert!(!owned.base[0].contains_key("_reserved_"));
    assert_eq!(owned.base[0].len(), meta.base[0].len() - 1);
    assert_eq!(owned.extra, meta.extra);
    assert_eq!(owned.base[0], meta.caller_entry(0));
    assert!(meta.caller_entry(9).is_empty());
    // What a rewriting command hands back is what a caller may give.
    owned.check_caller_owned(1).unwrap();
}
