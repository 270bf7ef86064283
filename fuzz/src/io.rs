//! Encode → decode round trips of arbitrary tensors, and the `.npy` reader.

use tgm::cbor::Value;
use tgm::pipeline::{MaskMethod, PipelineOptions};
use tgm::PipelineBuilder;
use tgm::{
    ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, Message, ObjectDescriptor,
    StreamingEncoder,
};

const MASK_METHODS: [MaskMethod; 5] = [
    MaskMethod::None,
    MaskMethod::Rle,
    MaskMethod::Roaring,
    MaskMethod::Lz4,
    MaskMethod::Zstd,
];

/// Header bytes: dtype, byte order + streaming + hashing, compression,
/// shuffle + mask method + small-mask threshold, row count; the rest is
/// element bytes.
pub fn roundtrip(data: &[u8]) {
    let Some((h, body)) = data.split_first_chunk::<5>() else {
        return;
    };
    let dtype = Dtype::ALL[h[0] as usize % Dtype::ALL.len()];
    if dtype == Dtype::Bitmask {
        return;
    }
    let w = dtype.width();
    let n = body.len() / w;
    let bytes = &body[..n * w];
    let rows = (h[4] as usize % 4) + 1;
    let shape = if n.is_multiple_of(rows) && n > 0 {
        vec![rows as u64, (n / rows) as u64]
    } else {
        vec![n as u64]
    };
    let order = if h[1] & 1 == 0 {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    };
    let builder = match h[2] % 3 {
        0 => PipelineBuilder::new(),
        1 => PipelineBuilder::new().zstd(),
        _ => PipelineBuilder::new().lz4(),
    };
    let builder = if h[3] & 1 == 1 {
        builder.shuffle_element_size(w)
    } else {
        builder
    };
    let d = ObjectDescriptor::new(dtype, shape)
        .with_byte_order(order)
        .with_pipeline(&builder);
    let mut popts = PipelineOptions::default();
    popts.allow_nan = true;
    popts.allow_inf = true;
    let method = MASK_METHODS[(h[3] as usize >> 1) % MASK_METHODS.len()];
    popts.masks.nan = method;
    popts.masks.pos_inf = method;
    popts.masks.neg_inf = method;
    popts.masks.small_mask_threshold = (h[3] as usize >> 4) % 3;
    let opts = EncodeOptions::new().hashing(h[1] & 4 == 0).pipeline(popts);
    let mut entry = tgm::Map::new();
    entry.insert("k".into(), Value::Uint(h[4] as u64));
    let meta = GlobalMetadata::with_base(vec![entry]);
    let msg = if h[1] & 2 == 0 {
        tgm::encode(&meta, &[(&d, bytes)], &opts).expect("valid tensors encode")
    } else {
        let mut s = StreamingEncoder::new(Vec::new(), &meta, &opts).expect("stream starts");
        s.write_object(&d, bytes).expect("valid tensors stream");
        s.finish().expect("stream finishes").0
    };
    let stored = DecodeOptions::default().native_byte_order(false);
    let back =
        tgm::decode(&msg, &stored.clone().restore_non_finite(false)).expect("own output decodes");
    assert_eq!(
        back.metadata.base[0].get("k"),
        Some(&Value::Uint(h[4] as u64))
    );
    let obj = &back.objects[0];
    let masks = Message::parse(&msg)
        .expect("own output parses")
        .object(0)
        .expect("object 0 exists")
        .masks(&tgm::Limits::default())
        .expect("own masks decode");
    // Non-finite elements come back zeroed (restoration off); the rest exactly.
    for (i, (a, b)) in bytes
        .chunks_exact(w)
        .zip(obj.data.chunks_exact(w))
        .enumerate()
    {
        let flagged = masks
            .iter()
            .any(|(_, bits)| bits[i / 8] & (0x80 >> (i % 8)) != 0);
        if flagged {
            assert!(b.iter().all(|&x| x == 0), "element {i} not zeroed");
        } else {
            assert_eq!(a, b, "element {i} changed");
        }
    }
    // With restoration, flagged elements are non-finite again.
    let restored = tgm::decode(&msg, &stored).expect("own output decodes");
    assert_eq!(restored.objects[0].data.len(), bytes.len());
    let ranged = tgm::decode_range(&msg, 0, &[(0, n as u64)], &stored);
    if let Ok(r) = ranged {
        assert_eq!(r[0], restored.objects[0].data, "range decode of everything");
    }
}

/// The `.npy` reader: what it accepts re-writes and reads back identically.
pub fn npy(data: &[u8]) {
    let Ok(a) = tgm::npy::read_npy(data) else {
        return;
    };
    assert_eq!(a.data.len() as u64, a.descriptor().decoded_len().unwrap());
    let layout = tgm::npy::npy_layout(a.dtype, &a.shape, a.byte_order);
    let again = tgm::npy::read_npy(&tgm::npy::write_npy(&layout, &a.data))
        .expect("written .npy reads back");
    assert_eq!(again.data, a.data);
    assert_eq!(again.shape, a.shape);
}
