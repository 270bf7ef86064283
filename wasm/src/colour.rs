//! Colour maps for the viewer, from the `colorous` crate: 256 entries of
//! red, green, blue (`spec/wasm.md` §4).

/// Entries in a colour table.
pub const ENTRIES: usize = 256;

/// The named map's table, `ENTRIES` × 3 bytes; `None` for an unknown name.
pub fn table(name: &str) -> Option<Vec<u8>> {
    let g = match name {
        "viridis" => colorous::VIRIDIS,
        "cividis" => colorous::CIVIDIS,
        "rdbu" => colorous::RED_BLUE,
        _ => return None,
    };
    Some(
        (0..ENTRIES)
            .flat_map(|i| g.eval_rational(i, ENTRIES).as_array())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viridis_runs_from_purple_to_yellow() {
        let t = table("viridis").unwrap();
        assert_eq!(t.len(), ENTRIES * 3);
        assert_eq!(&t[..3], &[0x44, 0x01, 0x54]);
        assert_eq!(&t[t.len() - 3..], &[0xfd, 0xe7, 0x25]);
        assert!(table("jet").is_none());
    }
}
