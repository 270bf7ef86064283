//! The two files measured: many small indexed messages, and one message
//! holding a large simple_packing + szip field.

use std::collections::BTreeMap;

/// Sizes of the generated files.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    /// Messages in the many-message file.
    pub messages: usize,
    /// float64 values of the szip field.
    pub field_values: u64,
}

/// The full run (the book's tables, docs/src/performance/remote.md) and the quick one (CI).
pub const FULL: Sizes = Sizes {
    messages: 1000,
    field_values: 16 << 20,
};
pub const QUICK: Sizes = Sizes {
    messages: 100,
    field_values: 1 << 20,
};

/// Shape of each of the two float32 objects of every small message.
pub const SMALL_SHAPE: [u64; 2] = [64, 64];

/// Bits per value of the szip field's simple_packing.
pub const PACKING_BITS: u32 = 24;

/// Values of object `o` of message `m`: distinct per message and object.
pub fn small_values(m: usize, o: usize) -> Vec<u8> {
    let n = SMALL_SHAPE.iter().product::<u64>() as usize;
    (0..n)
        .map(|k| (m * 10_000 + o * 1_000) as f32 + k as f32 * 0.25)
        .flat_map(f32::to_le_bytes)
        .collect()
}

/// `messages` messages of two float32 objects each, encoded by tgm (header
/// index and hashes, as tgm writes a message it holds whole).
pub fn many_messages(messages: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for m in 0..messages {
        let d = tgm::ObjectDescriptor::new(tgm::Dtype::Float32, SMALL_SHAPE.to_vec())
            .with_byte_order(tgm::ByteOrder::Little);
        let a = small_values(m, 0);
        let b = small_values(m, 1);
        let bytes = tgm::encode(
            &tgm::GlobalMetadata::default(),
            &[(&d, &a), (&d, &b)],
            &tgm::EncodeOptions::new(),
        )
        .expect("encode a small message");
        out.extend_from_slice(&bytes);
    }
    out
}

/// `plain` ended with its catalogue, as every tgm writer ends a file
/// (`spec/files.md` §9.4).
pub fn with_catalogue(plain: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut w = tgm::file::CataloguingWriter::new(Vec::new(), &tgm::Limits::default());
    w.write_all(plain).expect("write to memory");
    let (bytes, n) = w.finish().expect("write to memory");
    assert!(n > 0, "a file of whole messages gets a catalogue");
    bytes
}

/// A smooth float64 field with a little deterministic noise.
pub fn field_values(n: u64) -> Vec<f64> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|k| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let noise = (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            let x = k as f64;
            250.0
                + 30.0 * (x * std::f64::consts::TAU / 4096.0).sin()
                + 5.0 * (x / 777.0).cos()
                + 0.01 * noise
        })
        .collect()
}

/// One message holding `values` as float64 with simple_packing at
/// [`PACKING_BITS`] and szip at the reference's defaults for that width,
/// encoded by the reference; and the values per szip RSI (reference
/// interval: `szip_rsi` blocks of `szip_block_size` samples).
pub fn szip_field(values: &[f64]) -> (Vec<u8>, u64) {
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut d = tensogram::DataObjectDescriptor {
        obj_type: "ntensor".into(),
        ndim: 1,
        shape: vec![values.len() as u64],
        strides: vec![1],
        dtype: tensogram::Dtype::Float64,
        byte_order: tensogram::ByteOrder::Little,
        encoding: "none".into(),
        filter: "none".into(),
        compression: "none".into(),
        masks: None,
        params: BTreeMap::new(),
    };
    let pipeline = tensogram::DataPipeline {
        encoding: "simple_packing".into(),
        bits: Some(PACKING_BITS),
        filter: "none".into(),
        compression: "szip".into(),
        compression_level: None,
    };
    tensogram::apply_pipeline(&mut d, Some(values), &pipeline, "field")
        .expect("reference accepts simple_packing + szip");
    let param = |k: &str| -> u64 {
        let v = d
            .params
            .get(k)
            .unwrap_or_else(|| panic!("reference sets {k}"));
        let i = v
            .as_integer()
            .unwrap_or_else(|| panic!("{k} is an integer"));
        u64::try_from(i).unwrap_or_else(|_| panic!("{k} is positive"))
    };
    let rsi_values = param("szip_rsi") * param("szip_block_size");
    let bytes = tensogram::encode(&Default::default(), &[(&d, &raw)], &Default::default())
        .expect("reference encodes the field");
    (bytes, rsi_values)
}

/// `first .. first + count` cut at multiples of `rsi_values`, as
/// `(first, count)` ranges: the reference's pure-Rust szip decodes a range
/// from a single RSI only, so both readers are asked for these pieces.
pub fn per_rsi_ranges(first: u64, count: u64, rsi_values: u64) -> Vec<(u64, u64)> {
    let end = first + count;
    let mut out = Vec::new();
    let mut at = first;
    while at < end {
        let next = ((at / rsi_values + 1) * rsi_values).min(end);
        out.push((at, next - at));
        at = next;
    }
    out
}
