//! Source headers stored once per message (`spec/convert.md` "GRIB
//! metadata layout"): when the header of one field, with another field's
//! MARS keys set over it as `to-grib` sets them, is byte for byte that
//! field's own header, the message keeps it once in `_extra_` under
//! [`SHARED_PREFIX`] and its 16-digit XXH3 digest, and each such field's
//! `base[i].grib` names it by [`TEMPLATE_REF_KEY`] instead of holding
//! `template`. A field whose header differs from a shared one of the same
//! length in a few bytes that are not MARS keys (a lagged ensemble
//! member's start time, a monthly mean's day) names it too and records the
//! bytes that differ under [`TEMPLATE_PATCH_KEY`].

use tgm::cbor::{encode_canonical, Value};
use tgm::Map;

use super::convert::{TEMPLATE_KEY, TEMPLATE_PL_KEY};
use super::export::template_with_mars;
use super::GribError;

/// The prefix of the `_extra_` keys holding shared headers.
pub const SHARED_PREFIX: &str = "grib_template_";

/// The key of `base[i].grib` naming its shared header (the digest after
/// [`SHARED_PREFIX`]).
pub const TEMPLATE_REF_KEY: &str = "template_ref";

/// The key of `base[i].grib` holding the runs of bytes by which its own
/// header differs from the shared one [`TEMPLATE_REF_KEY`] names:
/// `[[offset, bytes], ...]`, each run inside the header and starting at or
/// after the previous one's end.
pub const TEMPLATE_PATCH_KEY: &str = "template_patch";

/// Most headers a message shares: each field is tried against each.
const MAX_SHARED: usize = 8;

/// The bytes a field's `template_ref` takes unless every field names the
/// same header, which the shared layout then stores once (`spec/format.md`
/// §7.3).
const REF_COST: usize = 1 + TEMPLATE_REF_KEY.len() + 1 + 16;

/// Equal bytes between two differing ones that a run of a patch takes in
/// rather than starting another run (which costs at least 3 bytes more).
const BRIDGED: usize = 3;

/// A header candidate for sharing and the entries it serves, each with the
/// patch that makes it the entry's own (none when the header with the
/// entry's MARS keys set over it is already).
struct Shared {
    header: Vec<u8>,
    users: Vec<(usize, Option<Patch>)>,
}

/// The runs of bytes by which a header differs from a shared one.
type Patch = Vec<(usize, Vec<u8>)>;

/// The runs by which `own` differs from `base`, runs closer than
/// [`BRIDGED`] equal bytes joined; `None` when the lengths differ.
fn patch(base: &[u8], own: &[u8]) -> Option<Patch> {
    if base.len() != own.len() {
        return None;
    }
    let mut runs: Patch = Vec::new();
    let mut i = 0;
    while i < own.len() {
        if base[i] == own[i] {
            i += 1;
            continue;
        }
        let mut end = i + 1;
        let mut last = i;
        while end < own.len() && end - last <= BRIDGED + 1 {
            if base[end] != own[end] {
                last = end;
            }
            end += 1;
        }
        runs.push((i, own[i..=last].to_vec()));
        i = last + 1;
    }
    Some(runs)
}

/// The encoded size of `patch` under its key, in bytes.
fn patch_cost(patch: &Patch) -> usize {
    let key = Value::Text(TEMPLATE_PATCH_KEY.into());
    encode_canonical(&key).len() + encode_canonical(&patch_value(patch)).len()
}

/// The header (its index among `shared`, of those `eligible`) that `own`
/// is but for the cheapest patch, when that patch costs less than `limit`
/// bytes.
fn cheapest_patch(
    shared: &[Shared],
    own: &[u8],
    eligible: impl Fn(usize) -> bool,
    limit: usize,
) -> Option<(usize, Patch)> {
    shared
        .iter()
        .enumerate()
        .filter(|(k, _)| eligible(*k))
        .filter_map(|(k, s)| patch(&s.header, own).map(|p| (patch_cost(&p), k, p)))
        .min_by_key(|(cost, k, _)| (*cost, *k))
        .filter(|(cost, _, _)| *cost < limit)
        .map(|(_, k, p)| (k, p))
}

/// Decides which candidate headers are stored: from the most used down,
/// a header is stored unless the fields it serves take fewer bytes as a
/// patch each (the same one, from which their MARS keys make each its own)
/// over a header already stored, counting for each field the reference
/// that naming a header of its own would add; those fields then name that
/// header.
fn patch_groups(shared: &mut [Shared]) {
    let mut order: Vec<usize> = (0..shared.len()).collect();
    order.sort_by_key(|&k| (std::cmp::Reverse(shared[k].users.len()), k));
    let mut stored = vec![false; shared.len()];
    for k in order {
        let users = shared[k].users.len();
        let limit = shared[k].header.len().div_ceil(users) + REF_COST;
        match cheapest_patch(shared, &shared[k].header, |j| stored[j], limit) {
            Some((j, p)) => {
                let moved = std::mem::take(&mut shared[k].users);
                shared[j]
                    .users
                    .extend(moved.into_iter().map(|(i, _)| (i, Some(p.clone()))));
            }
            None => stored[k] = true,
        }
    }
}

/// `patch` as the value of [`TEMPLATE_PATCH_KEY`].
fn patch_value(patch: &Patch) -> Value {
    Value::Array(
        patch
            .iter()
            .map(|(at, b)| Value::Array(vec![Value::Uint(*at as u64), Value::Bytes(b.clone())]))
            .collect(),
    )
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
    let mut left = Vec::new();
    if entries.len() > 1 {
        for (i, entry) in entries.iter().enumerate() {
            let Some((own, mars)) = parts(entry) else {
                continue;
            };
            match shared.iter().position(|s| reproduces(&s.header, mars, own)) {
                Some(k) => shared[k].users.push((i, None)),
                None if shared.len() < MAX_SHARED => shared.push(Shared {
                    header: own.to_vec(),
                    users: vec![(i, None)],
                }),
                None => left.push(i),
            }
        }
        patch_groups(&mut shared);
        // The fields no header reproduces: patched when that saves bytes.
        for i in left {
            let Some((own, _)) = parts(&entries[i]) else {
                continue;
            };
            let stored = |k: usize| !shared[k].users.is_empty();
            if let Some((k, p)) = cheapest_patch(&shared, own, stored, own.len()) {
                shared[k].users.push((i, Some(p)));
            }
        }
    }
    let mut extra = Map::new();
    for s in shared.into_iter().filter(|s| s.users.len() > 1) {
        let key = shared_key(&s.header);
        let digest = key[SHARED_PREFIX.len()..].to_string();
        for (i, p) in s.users {
            if let Some(Value::Map(grib)) = entries[i].get_mut("grib") {
                grib.retain(|(k, _)| k.as_text() != Some(TEMPLATE_KEY));
                grib.push((
                    Value::Text(TEMPLATE_REF_KEY.into()),
                    Value::Text(digest.clone()),
                ));
                if let Some(p) = p {
                    grib.push((Value::Text(TEMPLATE_PATCH_KEY.into()), patch_value(&p)));
                }
            }
        }
        extra.insert(key, Value::Bytes(s.header));
    }
    extra
}

/// `header` with `patch` (the value of `grib.template_patch`) applied;
/// refused, naming the key, unless it is runs `[offset, bytes]` of at
/// least one byte, each inside the header and starting at or after the
/// previous one's end.
pub fn patched(header: &[u8], patch: &Value) -> Result<Vec<u8>, GribError> {
    let bad = |what: &str| {
        GribError::Invalid(format!(
            "grib.{TEMPLATE_PATCH_KEY} is not runs [offset, bytes] in order inside \
             the {}-byte shared header: {what}",
            header.len()
        ))
    };
    let runs = patch.as_array().ok_or_else(|| bad("not an array"))?;
    let mut out = header.to_vec();
    let mut free = 0usize;
    for run in runs {
        let (at, bytes) = match run.as_array() {
            Some([at, Value::Bytes(b)]) => (
                at.as_u64()
                    .ok_or_else(|| bad("an offset is not an unsigned integer"))?,
                b,
            ),
            _ => return Err(bad("a run is not [offset, bytes]")),
        };
        let at = usize::try_from(at).map_err(|_| bad("an offset is too large"))?;
        if bytes.is_empty() {
            return Err(bad("a run is empty"));
        }
        if at < free {
            return Err(bad("runs overlap or are out of order"));
        }
        let end = at
            .checked_add(bytes.len())
            .filter(|&e| e <= out.len())
            .ok_or_else(|| bad("a run passes the header's end"))?;
        out[at..end].copy_from_slice(bytes);
        free = end;
    }
    Ok(out)
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
        // A header of another length: no patch makes it another's.
        let gaussian = sample("reduced_gg_pl_32_grib2");
        assert_ne!(gaussian.len(), t2m.len());
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

    #[test]
    fn headers_differing_in_other_bytes_share_one_with_a_patch() {
        let t2m = sample("regular_ll_sfc_grib2");
        // Another start minute: not a MARS key, so no edit reproduces it.
        let mut h = Handle::from_message(&t2m).unwrap();
        h.set_long("minute", 6).unwrap();
        let later = h.message().unwrap();
        assert_eq!(later.len(), t2m.len());
        assert!(!reproduces(&t2m, &[], &later));
        let mut entries = vec![entry(&t2m, 167), entry(&later, 167), entry(&later, 167)];
        let own = [&t2m, &later, &later];
        let extra = share(&mut entries);
        assert_eq!(extra.len(), 1, "one shared header");
        // The most used header is stored; the other field's is a patch of
        // one run over it.
        assert_eq!(
            extra.get(&shared_key(&later)),
            Some(&Value::Bytes(later.clone()))
        );
        let p = grib_key(&entries[0], TEMPLATE_PATCH_KEY).expect("a patch");
        assert_eq!(p.as_array().unwrap().len(), 1, "{p:?}");
        assert!(patch_cost(&patch(&later, &t2m).unwrap()) < t2m.len() / 4);
        for (e, own) in entries.iter().zip(own) {
            assert!(grib_key(e, TEMPLATE_KEY).is_none());
            let back = with_header(e, &extra).unwrap();
            let Some(Value::Bytes(b)) = grib_key(&back, TEMPLATE_KEY) else {
                panic!("no header")
            };
            assert_eq!(b, own);
            assert!(grib_key(&back, TEMPLATE_PATCH_KEY).is_none());
            assert!(grib_key(&back, TEMPLATE_REF_KEY).is_none());
        }
    }

    #[test]
    fn a_patch_out_of_order_or_outside_its_header_is_refused_by_name() {
        let header = [0u8; 16];
        let run = |at: u64, b: &[u8]| Value::Array(vec![Value::Uint(at), Value::Bytes(b.to_vec())]);
        let ok = Value::Array(vec![run(1, &[7]), run(3, &[8, 9])]);
        let mut want = header.to_vec();
        want[1] = 7;
        want[3..5].copy_from_slice(&[8, 9]);
        assert_eq!(patched(&header, &ok).unwrap(), want);
        for (bad, why) in [
            (Value::Uint(3), "not an array"),
            (Value::Array(vec![Value::Uint(1)]), "not [offset, bytes]"),
            (
                Value::Array(vec![run(15, &[1, 2])]),
                "passes the header's end",
            ),
            (
                Value::Array(vec![run(u64::MAX, &[1])]),
                "passes the header's end",
            ),
            (
                Value::Array(vec![run(4, &[1]), run(2, &[1])]),
                "out of order",
            ),
            (Value::Array(vec![run(2, &[1, 2]), run(3, &[1])]), "overlap"),
            (Value::Array(vec![run(2, &[])]), "empty"),
        ] {
            let e = patched(&header, &bad).unwrap_err().to_string();
            assert!(e.contains("grib.template_patch") && e.contains(why), "{e}");
        }
        // A patch with no shared header to apply to.
        let mut e = entry(&header, 167);
        if let Some(Value::Map(g)) = e.get_mut("grib") {
            g.push((Value::Text(TEMPLATE_PATCH_KEY.into()), ok));
        }
        let err = with_header(&e, &Map::new()).unwrap_err().to_string();
        assert!(err.contains("without grib.template_ref"), "{err}");
        // A header of its own and a shared one named besides.
        let mut both = entry(&header, 167);
        if let Some(Value::Map(g)) = both.get_mut("grib") {
            g.push((
                Value::Text(TEMPLATE_REF_KEY.into()),
                Value::Text("0".repeat(16)),
            ));
        }
        let err = with_header(&both, &Map::new()).unwrap_err().to_string();
        assert!(err.contains("both given"), "{err}");
    }
}
