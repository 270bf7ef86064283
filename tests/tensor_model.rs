//! The tensor model against messages: DLPack types (including those the
//! format lacks) and ROS ExperimentalTensor messages survive tgm and the
//! reference.

use tgm::tensor::{DLDataType, DLDataTypeCode, ExperimentalTensor, Tensor, TensorView};
use tgm::{DecodeOptions, EncodeOptions, GlobalMetadata};

fn all_types() -> Vec<DLDataType> {
    use DLDataTypeCode::*;
    let mut v = Vec::new();
    for (code, bits) in [
        (Int, 8),
        (Int, 16),
        (Int, 32),
        (Int, 64),
        (UInt, 8),
        (UInt, 16),
        (UInt, 32),
        (UInt, 64),
        (Float, 16),
        (Float, 32),
        (Float, 64),
        (Bfloat, 16),
        (Complex, 64),
        (Complex, 128),
        (Bool, 8),
        (Float8E3M4, 8),
        (Float8E4M3, 8),
        (Float8E4M3B11Fnuz, 8),
        (Float8E4M3Fn, 8),
        (Float8E4M3Fnuz, 8),
        (Float8E5M2, 8),
        (Float8E5M2Fnuz, 8),
        (Float8E8M0Fnu, 8),
        (Float6E2M3Fn, 6),
        (Float6E3M2Fn, 6),
        (Float4E2M1Fn, 4),
    ] {
        for lanes in [1u16, 2, 4] {
            v.push(DLDataType::new(code, bits, lanes).unwrap());
        }
    }
    v
}

fn ros(t: DLDataType, shape: &[i64]) -> ExperimentalTensor {
    let n: i64 = shape.iter().product();
    let eb = t.element_bytes();
    // Data larger than the tensor, with a leading offset.
    // Byte values below 0x3d keep every float exponent finite.
    let data: Vec<u8> = (0..(n as usize * eb + 7))
        .map(|i| (i * 7 % 61) as u8)
        .collect();
    ExperimentalTensor {
        dtype_code: t.code,
        dtype_bits: t.bits,
        dtype_lanes: t.lanes,
        shape: shape.to_vec(),
        strides: Vec::new(),
        byte_offset: 3,
        data,
    }
}

#[test]
fn every_dlpack_type_round_trips_through_tgm_and_the_reference() {
    for t in all_types() {
        let msg_in = ros(t, &[2, 3]);
        let (desc, bytes) = msg_in.to_object().unwrap();
        let enc = tgm::encode(
            &GlobalMetadata::default(),
            &[(&desc, &bytes)],
            &EncodeOptions::new(),
        )
        .unwrap();
        let dec = tgm::decode(&enc, &DecodeOptions::default()).unwrap();
        let back =
            ExperimentalTensor::from_object(&dec.objects[0].descriptor, &dec.objects[0].data)
                .unwrap();
        assert_eq!(back.dtype(), t);
        assert_eq!(back.shape, vec![2, 3]);
        let eb = t.element_bytes();
        assert_eq!(back.data, msg_in.data[3..3 + 6 * eb].to_vec(), "{t:?}");
        // The reference reads the message and keeps the annotation.
        let (_, objs) = tensogram::decode(&enc, &Default::default()).unwrap();
        assert_eq!(objs[0].1, bytes);
        let rdesc = &objs[0].0;
        assert_eq!(
            rdesc.params.contains_key("dlpack"),
            desc.annotations().contains_key("dlpack")
        );
        // Re-encoded by the reference, tgm still recovers the exact type.
        let re = tensogram::encode(
            &Default::default(),
            &[(rdesc, &objs[0].1[..])],
            &Default::default(),
        )
        .unwrap();
        let d2 = tgm::decode(&re, &DecodeOptions::default()).unwrap();
        let (t2, shape2) = DLDataType::of_descriptor(&d2.objects[0].descriptor).unwrap();
        assert_eq!((t2, shape2), (t, vec![2, 3]));
    }
}

#[test]
fn ros_strided_views_store_exactly_the_view() {
    let t = DLDataType::new(DLDataTypeCode::Float, 32, 1).unwrap();
    let vals: Vec<f32> = (0..12).map(|v| v as f32).collect();
    let data: Vec<u8> = vals.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let transposed = ExperimentalTensor {
        dtype_code: t.code,
        dtype_bits: t.bits,
        dtype_lanes: t.lanes,
        shape: vec![4, 3],
        strides: vec![1, 4],
        byte_offset: 0,
        data,
    };
    let (d, bytes) = transposed.to_object().unwrap();
    let v = TensorView::<f32>::from_bytes(&bytes, &d).unwrap();
    assert_eq!(
        v.to_vec(),
        vec![0., 4., 8., 1., 5., 9., 2., 6., 10., 3., 7., 11.]
    );
    let mut bad = transposed.clone();
    bad.byte_offset = 8;
    assert!(
        bad.to_object().is_err(),
        "a view reaching past the data is refused"
    );
    let mut bad = transposed.clone();
    bad.dtype_lanes = 0;
    assert!(bad.to_object().is_err());
    let mut bad = transposed;
    bad.dtype_code = 99;
    assert!(bad.to_object().is_err());
}

#[test]
fn medical_message_reads_back_zero_copy() {
    let volume = Tensor::<i16>::from_vec(
        vec![4, 6, 5, 2],
        (0..240).map(|v| (v * 7 - 800) as i16).collect(),
    )
    .unwrap();
    let mask = Tensor::<u8>::from_vec(vec![6, 5, 2], (0..60).map(|v| (v % 3 == 0) as u8).collect())
        .unwrap();
    let times = Tensor::<f64>::from_vec(vec![4], vec![0.0, 1.5, 3.0, 4.5]).unwrap();
    let objs = [volume.to_object(), mask.to_object(), times.to_object()];
    let pairs: Vec<_> = objs.iter().map(|(d, b)| (d, &b[..])).collect();
    let bytes = tgm::encode(&GlobalMetadata::default(), &pairs, &EncodeOptions::new()).unwrap();
    let m = tgm::Message::parse(&bytes).unwrap();
    let o = m.object(0).unwrap();
    let data = o.decode(&DecodeOptions::default()).unwrap();
    let v = TensorView::<i16>::from_bytes(&data, o.descriptor()).unwrap();
    assert!(
        v.is_borrowed(),
        "aligned native payload views without copying"
    );
    assert_eq!(v.to_tensor(), volume);
    let o2 = m.object(2).unwrap();
    let t = TensorView::<f64>::from_bytes(
        &o2.decode(&DecodeOptions::default()).unwrap(),
        o2.descriptor(),
    )
    .unwrap()
    .to_tensor();
    assert_eq!(t, times);
}

#[cfg(feature = "ndarray")]
#[test]
fn ndarray_conversion_round_trips() {
    let t = Tensor::<f32>::from_vec(vec![2, 3], (0..6).map(|v| v as f32).collect()).unwrap();
    let a: ndarray::ArrayD<f32> = t.clone().into();
    assert_eq!(a.shape(), &[2, 3]);
    assert_eq!(a[[1, 2]], 5.0);
    let back: Tensor<f32> = a.reversed_axes().into();
    assert_eq!(back.shape(), &[3, 2]);
    assert_eq!(back.get(&[2, 1]), Some(&5.0));
}
