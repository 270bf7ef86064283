//! PALETTE COLOR lookup tables (PS3.3 C.7.6.3.1.5–6) kept under
//! `base[i].dicom.palette` and written back, and applied to give RGB.
//!
//! Each of `red`, `green`, `blue` holds `descriptor` (number of entries, 0
//! meaning 65536; first stored value mapped; bits per entry) and `data`,
//! the table's bytes as stored (little-endian 16-bit words). Segmented
//! tables are refused: they would be lost.

use dicom_core::value::{PrimitiveValue, Value as DicomValue};
use dicom_core::{DataElement, Tag, VR};
use dicom_dictionary_std::tags;
use dicom_object::InMemDicomObject;
use tgm::cbor::Value;
use tgm::{Dtype, Map};

/// The three channels: name, descriptor tag, data tag, segmented data tag.
const CHANNELS: [(&str, Tag, Tag, Tag); 3] = [
    (
        "red",
        tags::RED_PALETTE_COLOR_LOOKUP_TABLE_DESCRIPTOR,
        tags::RED_PALETTE_COLOR_LOOKUP_TABLE_DATA,
        tags::SEGMENTED_RED_PALETTE_COLOR_LOOKUP_TABLE_DATA,
    ),
    (
        "green",
        tags::GREEN_PALETTE_COLOR_LOOKUP_TABLE_DESCRIPTOR,
        tags::GREEN_PALETTE_COLOR_LOOKUP_TABLE_DATA,
        tags::SEGMENTED_GREEN_PALETTE_COLOR_LOOKUP_TABLE_DATA,
    ),
    (
        "blue",
        tags::BLUE_PALETTE_COLOR_LOOKUP_TABLE_DESCRIPTOR,
        tags::BLUE_PALETTE_COLOR_LOOKUP_TABLE_DATA,
        tags::SEGMENTED_BLUE_PALETTE_COLOR_LOOKUP_TABLE_DATA,
    ),
];

/// One channel's table, checked.
struct Table {
    entries: usize,
    first: i64,
    bits: u32,
    data: Vec<u8>,
}

impl Table {
    fn check(descriptor: &[i64], data: Vec<u8>, name: &str) -> Result<Table, String> {
        let [n, first, bits] = <[i64; 3]>::try_from(descriptor).map_err(|_| {
            format!(
                "{name} palette descriptor has {} values, not 3",
                descriptor.len()
            )
        })?;
        let entries = match n {
            0 => 65536,
            1..=65535 => n as usize,
            _ => return Err(format!("{name} palette descriptor claims {n} entries")),
        };
        if bits != 8 && bits != 16 {
            return Err(format!(
                "{name} palette has {bits} bits per entry, not 8 or 16"
            ));
        }
        // 8-bit entries come one per byte or one per 16-bit word.
        let fits = data.len() == 2 * entries || (bits == 8 && data.len() == entries + entries % 2);
        if !fits {
            return Err(format!(
                "{name} palette data has {} bytes for {entries} entries of {bits} bits",
                data.len()
            ));
        }
        Ok(Table {
            entries,
            first,
            bits: bits as u32,
            data,
        })
    }

    fn of(palette: &Value, name: &str) -> Result<Table, String> {
        let ch = palette
            .get(name)
            .ok_or_else(|| format!("palette has no {name} table"))?;
        let descriptor: Option<Vec<i64>> = ch
            .get("descriptor")
            .and_then(Value::as_array)
            .and_then(|a| a.iter().map(Value::as_i64).collect());
        let descriptor =
            descriptor.ok_or_else(|| format!("palette {name} descriptor is malformed"))?;
        let Some(Value::Bytes(data)) = ch.get("data") else {
            return Err(format!("palette {name} data is not bytes"));
        };
        Table::check(&descriptor, data.clone(), name)
    }

    /// Entry `k` (0-based, clamped).
    fn entry(&self, k: usize) -> u16 {
        let k = k.min(self.entries - 1);
        if self.data.len() == 2 * self.entries {
            u16::from_le_bytes([self.data[2 * k], self.data[2 * k + 1]])
        } else {
            u16::from(self.data[k])
        }
    }
}

fn le_bytes(e: &DataElement<InMemDicomObject>) -> Option<Vec<u8>> {
    match e.value() {
        DicomValue::Primitive(p) => Some(match p {
            PrimitiveValue::U8(v) => v.to_vec(),
            PrimitiveValue::U16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            PrimitiveValue::I16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            _ => return None,
        }),
        _ => None,
    }
}

/// The lookup tables of a PALETTE COLOR image as metadata; `None` for
/// other photometric interpretations.
pub fn read(obj: &InMemDicomObject) -> Result<Option<Value>, String> {
    let photometric = obj
        .get(tags::PHOTOMETRIC_INTERPRETATION)
        .and_then(|e| e.to_str().ok())
        .map(|s| s.trim_end_matches(['\0', ' ']).to_string());
    if photometric.as_deref() != Some("PALETTE COLOR") {
        return Ok(None);
    }
    let mut out = Map::new();
    for (name, desc_tag, data_tag, segmented) in CHANNELS {
        if obj.get(segmented).is_some() {
            return Err(format!(
                "segmented {name} palette lookup tables are not supported (they would be lost)"
            ));
        }
        let descriptor = obj
            .get(desc_tag)
            .ok_or_else(|| format!("PALETTE COLOR image without a {name} palette descriptor"))?
            .to_multi_int::<i64>()
            .map_err(|e| format!("{name} palette descriptor: {e}"))?;
        let data = obj
            .get(data_tag)
            .and_then(le_bytes)
            .ok_or_else(|| format!("PALETTE COLOR image without {name} palette data"))?;
        let t = Table::check(&descriptor, data, name)?;
        let mut ch = Map::new();
        ch.insert(
            "descriptor".into(),
            Value::Array(descriptor.iter().map(|&x| Value::from_i64(x)).collect()),
        );
        ch.insert("data".into(), Value::Bytes(t.data));
        out.insert(name.to_string(), Value::from(ch));
    }
    Ok(Some(Value::from(out)))
}

/// Writes the tables of `palette` into `obj` (descriptor as US, or SS when
/// the first mapped value is negative; data as OW).
pub fn write(obj: &mut InMemDicomObject, palette: &Value) -> Result<(), String> {
    for (name, desc_tag, data_tag, _) in CHANNELS {
        let t = Table::of(palette, name)?;
        let n = if t.entries == 65536 { 0 } else { t.entries };
        let descriptor = if t.first < 0 {
            let first = i16::try_from(t.first)
                .map_err(|_| format!("{name} palette first value {} out of range", t.first))?;
            DataElement::new(
                desc_tag,
                VR::SS,
                PrimitiveValue::I16(vec![n as u16 as i16, first, t.bits as i16].into()),
            )
        } else {
            let first = u16::try_from(t.first)
                .map_err(|_| format!("{name} palette first value {} out of range", t.first))?;
            DataElement::new(
                desc_tag,
                VR::US,
                PrimitiveValue::U16(vec![n as u16, first, t.bits as u16].into()),
            )
        };
        obj.put(descriptor);
        let mut data = t.data;
        if data.len() % 2 == 1 {
            data.push(0);
        }
        let words: Vec<u16> = data
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        obj.put(DataElement::new(
            data_tag,
            VR::OW,
            PrimitiveValue::U16(words.into()),
        ));
    }
    Ok(())
}

/// The RGB image of stored indices `data` (native byte order, `dtype`) through
/// the tables: `(dtype, bytes)` with 3 samples per index, uint8 when every
/// table has 8-bit entries, else uint16, native byte order. Indices below
/// the first mapped value take the first entry, above the last the last
/// (PS3.3 C.7.6.3.1.5).
pub fn apply(palette: &Value, dtype: Dtype, data: &[u8]) -> Result<(Dtype, Vec<u8>), String> {
    let tables = [
        Table::of(palette, "red")?,
        Table::of(palette, "green")?,
        Table::of(palette, "blue")?,
    ];
    let width = dtype.width();
    let index = |c: &[u8]| -> Option<i64> {
        Some(match dtype {
            Dtype::Uint8 => i64::from(c[0]),
            Dtype::Int8 => i64::from(c[0] as i8),
            Dtype::Uint16 => i64::from(u16::from_ne_bytes([c[0], c[1]])),
            Dtype::Int16 => i64::from(i16::from_ne_bytes([c[0], c[1]])),
            _ => return None,
        })
    };
    if index(&[0, 0]).is_none() {
        return Err(format!(
            "palette indices must be 8- or 16-bit integers, not {}",
            dtype.name()
        ));
    }
    let eight = tables.iter().all(|t| t.bits == 8);
    let out_width = if eight { 1 } else { 2 };
    let mut out = Vec::with_capacity(data.len() / width * 3 * out_width);
    for c in data.chunks_exact(width) {
        let v = index(c).unwrap_or(0);
        for t in &tables {
            let k = (v - t.first).max(0) as usize;
            let e = t.entry(k);
            if eight {
                out.push(e as u8);
            } else {
                out.extend_from_slice(&e.to_ne_bytes());
            }
        }
    }
    Ok((if eight { Dtype::Uint8 } else { Dtype::Uint16 }, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn palette(bits: i64) -> Value {
        let mut m = Map::new();
        for (i, name) in ["red", "green", "blue"].iter().enumerate() {
            let words: Vec<u8> = (0..4u16)
                .flat_map(|k| (k * 10 + i as u16).to_le_bytes())
                .collect();
            let mut ch = Map::new();
            ch.insert(
                "descriptor".into(),
                Value::Array(vec![4u64.into(), 2u64.into(), Value::from_i64(bits)]),
            );
            ch.insert("data".into(), Value::Bytes(words));
            m.insert(name.to_string(), Value::from(ch));
        }
        Value::from(m)
    }

    #[test]
    fn indices_map_through_each_table_and_clamp() {
        let (dt, rgb) = apply(&palette(8), Dtype::Uint8, &[0, 2, 3, 5, 9]).unwrap();
        assert_eq!(dt, Dtype::Uint8);
        assert_eq!(rgb, [0, 1, 2, 0, 1, 2, 10, 11, 12, 30, 31, 32, 30, 31, 32]);
        let (dt, rgb) = apply(&palette(16), Dtype::Uint8, &[4]).unwrap();
        assert_eq!(dt, Dtype::Uint16);
        let words: Vec<u16> = rgb
            .chunks(2)
            .map(|c| u16::from_ne_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(words, [20, 21, 22]);
    }

    #[test]
    fn written_tables_read_back_the_same() {
        let p = palette(16);
        let mut obj = InMemDicomObject::new_empty();
        obj.put(DataElement::new(
            tags::PHOTOMETRIC_INTERPRETATION,
            VR::CS,
            "PALETTE COLOR",
        ));
        write(&mut obj, &p).unwrap();
        assert_eq!(read(&obj).unwrap(), Some(p));
    }

    #[test]
    fn malformed_tables_are_refused() {
        assert!(Table::check(&[4, 0, 12], vec![0; 8], "red").is_err());
        assert!(Table::check(&[4, 0, 16], vec![0; 6], "red").is_err());
        assert!(Table::check(&[4, 0], vec![0; 8], "red").is_err());
        assert!(Table::check(&[70000, 0, 16], vec![0; 8], "red").is_err());
    }
}
