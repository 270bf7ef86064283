//! Source headers stored once per message (`spec/convert.md` "GRIB
//! metadata layout"): when the header of one field, with another field's
//! MARS keys set over it as `to-grib` sets them, is byte for byte that
//! field's own header, the message keeps it once in `_extra_` under
//! [`SHARED_PREFIX`] and its 16-digit XXH3 digest, and each such field's
//! `base[i].grib` names it by [`TEMPLATE_REF_KEY`] instead of holding
//! `template`.

use tgm::cbor::Value;
use tgm::Map;

use super::convert::{TEMPLATE_KEY, TEMPLATE_PL_KEY};
use super::export::template_with_mars;
use super::GribError;

/// The prefix of the `_extra_` keys holding shared headers.
pub const SHARED_PREFIX: &str = "grib_template_";

/// The key of `base[i].grib` naming its shared header (the digest after
/// [`SHARED_PREFIX`]).
pub const TEMPLATE_REF_KEY: &str = "template_ref";

/// Most headers a message shares: each field is tried against each.
const MAX_SHARED: usize = 8;

/// A header candidate for sharing and the entries it reproduces.
struct Shared {
    header: Vec<u8>,
    users: Vec<usize>,
}

/// A CBOR map's (key, value) pairs.
type Pairs = [(Value, Value)];

/// The header bytes and MARS map of an entry whose header can be shared
/// (a whole header, not one whose `pl` octets were taken out).
fn parts(entry: &Map) -> Option<(&[u8], &Pairs)> {
    let grib = entry.get("grib")?.as_map()?;
    let find = |k: &str| grib.iter().find(|(n, _)| n.as_text() == Some(k));
    if find(TEMPLATE_PL_KEY).is_some() || find(super::grib_zeros::TEMPLATE_ZEROS_KEY).is_some() {
        return None;
    }
    let header = match find(TEMPLATE_KEY)? {
        (_, Value::Bytes(b)) => b.as_slice(),
        _ => return None,
    };
    Some((header, entry.get("mars")?.as_map()?))
}

/// Whether `header` with `mars` set over it is `own`, byte for byte; a
/// header ecCodes cannot edit so is not shared.
fn reproduces(header: &[u8], mars: &[(Value, Value)], own: &[u8]) -> bool {
    header == own || template_with_mars(header, mars).is_ok_and(|b| b == own)
}

/// The `_extra_` key of a shared header.
pub fn shared_key(header: &[u8]) -> String {
    format!("{SHARED_PREFIX}{:016x}", tgm::hash::xxh3(header))
}

/// Moves the headers of `entries` that two or more fields share into the
/// returned `_extra_` entries, each field naming its header by digest.
pub fn share(entries: &mut [Map]) -> Map {
    let mut shared: Vec<Shared> = Vec::new();
    if entries.len() > 1 {
        for (i, entry) in entries.iter().enumerate() {
            let Some((own, mars)) = parts(entry) else {
                continue;
            };
            match shared.iter().position(|s| reproduces(&s.header, mars, own)) {
                Some(k) => shared[k].users.push(i),
                None if shared.len() < MAX_SHARED => shared.push(Shared {
                    header: own.to_vec(),
                    users: vec![i],
                }),
                None => {}
            }
        }
    }
    let mut extra = Map::new();
    for s in shared.into_iter().filter(|s| s.users.len() > 1) {
        let key = shared_key(&s.header);
        let digest = key[SHARED_PREFIX.len()..].to_string();
        for &i in &s.users {
            if let Some(Value::Map(grib)) = entries[i].get_mut("grib") {
                grib.retain(|(k, _)| k.as_text() != Some(TEMPLATE_KEY));
                grib.push((
                    Value::Text(TEMPLATE_REF_KEY.into()),
                    Value::Text(digest.clone()),
                ));
            }
        }
        extra.insert(key, Value::Bytes(s.header));
    }
    extra
}

/// The shared header `base[i].grib.template_ref` names, from the message's
/// `_extra_`; refused, naming the key, when it is not there.
pub fn shared_header<'m>(reference: &Value, extra: &'m Map) -> Result<&'m [u8], GribError> {
    let digest = reference.as_text().ok_or_else(|| {
        GribError::Invalid(format!(
            "grib.{TEMPLATE_REF_KEY} is a {}, not text",
            reference.type_name()
        ))
    })?;
    let key = format!("{SHARED_PREFIX}{digest}");
    match extra.get(&key) {
        Some(Value::Bytes(b)) => Ok(b),
        Some(other) => Err(GribError::Invalid(format!(
            "_extra_.{key} is a {}, not a byte string",
            other.type_name()
        ))),
        None => Err(GribError::Invalid(format!(
            "grib.{TEMPLATE_REF_KEY} names _extra_.{key}, which the message lacks"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::super::export::with_header;
    use super::super::ffi::Handle;
    use super::*;

    fn sample(name: &str) -> Vec<u8> {
        Handle::from_sample(name).unwrap().message().unwrap()
    }

    fn entry(header: &[u8], param: u64) -> Map {
        let grib = Value::Map(vec![(
            Value::Text(TEMPLATE_KEY.into()),
            Value::Bytes(header.to_vec()),
        )]);
        let mars = Value::Map(vec![(Value::Text("param".into()), Value::Uint(param))]);
        Map::from([("grib".into(), grib), ("mars".into(), mars)])
    }

    fn grib_key<'a>(e: &'a Map, key: &str) -> Option<&'a Value> {
        e["grib"].get(key)
    }

    #[test]
    fn headers_differing_in_mars_keys_are_stored_once() {
        let t2m = sample("regular_ll_sfc_grib2");
        let mars = |p: u64| vec![(Value::Text("param".into()), Value::Uint(p))];
        let d2m = template_with_mars(&t2m, &mars(168)).unwrap();
        assert_ne!(t2m, d2m);
        let gaussian = sample("regular_gg_sfc_grib2");
        let mut entries = vec![entry(&t2m, 167), entry(&d2m, 168), entry(&gaussian, 168)];
        let extra = share(&mut entries);
        // One shared header, the first field's, named by both fields.
        assert_eq!(extra.len(), 1);
        let key = shared_key(&t2m);
        assert_eq!(extra.get(&key), Some(&Value::Bytes(t2m.clone())));
        for e in &entries[..2] {
            assert!(grib_key(e, TEMPLATE_KEY).is_none());
            let digest = grib_key(e, TEMPLATE_REF_KEY).unwrap().as_text().unwrap();
            assert_eq!(format!("{SHARED_PREFIX}{digest}"), key);
        }
        // The header another grid needs stays in its own entry.
        assert_eq!(
            grib_key(&entries[2], TEMPLATE_KEY),
            Some(&Value::Bytes(gaussian))
        );
        // Written back: the shared header, with the field's MARS keys set
        // over it, is the field's own.
        let second = with_header(&entries[1], &extra).unwrap();
        let Some(Value::Bytes(h)) = grib_key(&second, TEMPLATE_KEY) else {
            panic!("no header")
        };
        assert_eq!(template_with_mars(h, &mars(168)).unwrap(), d2m);
        assert!(grib_key(&second, TEMPLATE_REF_KEY).is_none());
    }

    #[test]
    fn a_lone_field_keeps_its_header_and_a_missing_shared_one_is_named() {
        let t2m = sample("regular_ll_sfc_grib2");
        let mut one = vec![entry(&t2m, 167)];
        assert!(share(&mut one).is_empty());
        assert_eq!(one[0], entry(&t2m, 167));
        let mut two = vec![entry(&t2m, 167), entry(&t2m, 167)];
        let extra = share(&mut two);
        let e = with_header(&two[0], &Map::new()).unwrap_err().to_string();
        assert!(e.contains(&shared_key(&t2m)), "{e}");
        let mut wrong = extra.clone();
        for v in wrong.values_mut() {
            *v = Value::Text("not a header".into());
        }
        let e = with_header(&two[0], &wrong).unwrap_err().to_string();
        assert!(e.contains("not a byte string"), "{e}");
    }
}
