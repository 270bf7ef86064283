//! The tensor layer on untrusted input: ROS 2 `ExperimentalTensor`
//! messages with arbitrary types, shapes, strides and offsets, and decoded
//! objects read back through DLPack annotations and typed views.

use tgm::tensor::{Complex32, Complex64, DLDataType, Element, ExperimentalTensor, TensorView};
use tgm::{DecodeOptions, EncodeOptions, GlobalMetadata, Message, ObjectDescriptor};

use super::common::{fuzz_limits, options};

/// Selector byte, then either a ROS message or a tgm message.
pub fn tensor(data: &[u8]) {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    if sel & 1 == 0 {
        ros(sel, rest);
    } else {
        decoded(sel, rest);
    }
}

/// code, bits, lanes (u16), ndim, then per dimension an extent (i16, or
/// 2^k with the selector's bit 1) and, with bit 2, a stride (i16, so 0 and
/// negatives occur); then a u16 byte offset; the rest is the data.
fn ros(sel: u8, b: &[u8]) {
    let mut p = 0usize;
    let mut take = |n: usize| -> Option<&[u8]> {
        let s = b.get(p..p + n)?;
        p += n;
        Some(s)
    };
    let Some(h) = take(5) else {
        return;
    };
    let ndim = h[4] as usize % 6;
    let mut t = ExperimentalTensor {
        dtype_code: h[0],
        dtype_bits: h[1],
        dtype_lanes: u16::from_le_bytes([h[2], h[3]]),
        ..Default::default()
    };
    for _ in 0..ndim {
        let Some(e) = take(2) else {
            return;
        };
        t.shape.push(if sel & 2 != 0 {
            1i64 << (e[0] % 63)
        } else {
            i16::from_le_bytes([e[0], e[1]]) as i64
        });
    }
    if sel & 4 != 0 {
        for _ in 0..ndim {
            let Some(s) = take(2) else {
                return;
            };
            t.strides.push(i16::from_le_bytes([s[0], s[1]]) as i64);
        }
    }
    let Some(o) = take(2) else {
        return;
    };
    t.byte_offset = u16::from_le_bytes([o[0], o[1]]) as u64;
    t.data = b[p..].to_vec();

    let limits = fuzz_limits();
    let Ok((desc, bytes)) = t.to_object_with(&limits) else {
        return;
    };
    let shape: Vec<u64> = t.shape.iter().map(|&d| d as u64).collect();
    assert_eq!(
        t.dtype().size_of(&shape).ok(),
        Some(bytes.len() as u64),
        "gathered size differs from the type's size of the shape"
    );
    assert_eq!(desc.decoded_len().ok(), Some(bytes.len() as u64));
    // Back to a ROS message: the same type and shape, contiguous.
    let back = ExperimentalTensor::from_object(&desc, &bytes).expect("converts back");
    assert_eq!(back.dtype(), t.dtype());
    assert_eq!(back.shape, t.shape);
    assert!(back.strides.is_empty() && back.byte_offset == 0);
    assert_eq!(back.data, bytes);
    // Through a message, unless NaN or infinities would need masks.
    match tgm::encode(
        &GlobalMetadata::default(),
        &[(&desc, &bytes)],
        &EncodeOptions::new(),
    ) {
        Ok(msg) => {
            let dec = tgm::decode(&msg, &DecodeOptions::default().limits(limits)).expect("decodes");
            let o = &dec.objects[0];
            assert_eq!(o.data, bytes, "message round trip changed the bytes");
            let (dt, sh) = DLDataType::of_descriptor(&o.descriptor).expect("annotation");
            assert_eq!((dt, sh), (t.dtype(), shape));
        }
        Err(e) => assert_eq!(e.kind(), &tgm::ErrorKind::NonFinite, "{e}"),
    }
}

/// Typed views of every element type: only the object's own dtype views,
/// and a view holds exactly the shape's element count.
fn views(bytes: &[u8], d: &ObjectDescriptor) {
    fn bits<T: Element>(s: &[T]) -> Vec<u8> {
        let mut out = Vec::with_capacity(std::mem::size_of_val(s));
        s.iter().for_each(|&x| x.put_ne(&mut out));
        out
    }
    fn one<T: Element>(bytes: &[u8], d: &ObjectDescriptor) {
        let Ok(v) = TensorView::<T>::from_bytes(bytes, d) else {
            return;
        };
        assert_eq!(T::DTYPE, d.dtype, "a view of the wrong element type");
        let n: usize = v.shape().iter().product();
        assert_eq!(v.as_slice().len(), n);
        let zero = vec![0usize; v.shape().len()];
        assert_eq!(
            v.get(&zero).map(|r| r as *const T),
            v.as_slice().first().map(|r| r as *const T),
            "element [0, ...] is not the first"
        );
        assert_eq!(bits(v.as_slice()), bytes, "the view changed the bytes");
        let mut past = zero;
        if let Some(first) = past.first_mut() {
            *first = v.shape()[0];
            assert!(v.get(&past).is_none(), "index past the first extent");
        }
        let flat = v
            .clone()
            .reshape(vec![n])
            .expect("reshape to one dimension");
        assert_eq!(bits(flat.as_slice()), bytes);
    }
    one::<u8>(bytes, d);
    one::<u16>(bytes, d);
    one::<u32>(bytes, d);
    one::<u64>(bytes, d);
    one::<i8>(bytes, d);
    one::<i16>(bytes, d);
    one::<i32>(bytes, d);
    one::<i64>(bytes, d);
    one::<f32>(bytes, d);
    one::<f64>(bytes, d);
    one::<half::f16>(bytes, d);
    one::<half::bf16>(bytes, d);
    one::<Complex32>(bytes, d);
    one::<Complex64>(bytes, d);
}

fn decoded(sel: u8, b: &[u8]) {
    let opts = options(sel >> 1).native_byte_order(true);
    let Ok(m) = Message::parse_with(b, 0, &opts.limits) else {
        return;
    };
    for i in 0..m.num_objects().min(4) {
        let Ok(o) = m.object(i) else {
            continue;
        };
        let d = o.descriptor();
        let _ = DLDataType::of_descriptor(d);
        let Ok(data) = o.decode(&opts) else {
            continue;
        };
        views(&data, d);
        if let Ok(t) = ExperimentalTensor::from_object(d, &data) {
            let (d2, bytes) = t
                .to_object_with(&opts.limits)
                .expect("a tensor made from an object converts back");
            assert_eq!(bytes, &data[..], "ROS round trip changed the bytes");
            assert_eq!(d2.dtype, d.dtype);
            assert_eq!(
                DLDataType::of_descriptor(&d2).ok(),
                DLDataType::of_descriptor(d).ok()
            );
        }
    }
}
