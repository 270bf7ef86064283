//! The tensor model: DLPack data types and strided views, the ROS 2
//! `ExperimentalTensor` message, and a typed `Tensor<T>` API.
//! See `spec/tensor-model.md`.
//!
//! A medical-style message built with the typed API and read back zero-copy:
//!
//! ```
//! use tgm::tensor::{Tensor, TensorView};
//! use tgm::{DecodeOptions, EncodeOptions, GlobalMetadata, Message};
//!
//! let volume = Tensor::<i16>::from_vec(vec![2, 3, 4, 5], (0..120).map(|v| v as i16 - 60).collect())?;
//! let mask = Tensor::<u8>::from_vec(vec![3, 4, 5], (0..60).map(|v| (v % 2) as u8).collect())?;
//! let times = Tensor::<f64>::from_vec(vec![2], vec![0.0, 2.5])?;
//! let objects = [volume.to_object(), mask.to_object(), times.to_object()];
//! let pairs: Vec<_> = objects.iter().map(|(d, b)| (d, &b[..])).collect();
//! let bytes = tgm::encode(&GlobalMetadata::default(), &pairs, &EncodeOptions::new())?;
//!
//! let msg = Message::parse(&bytes)?;
//! let obj = msg.object(0)?;
//! let data = obj.decode(&DecodeOptions::default())?; // borrowed: no copy
//! let view = TensorView::<i16>::from_bytes(&data, obj.descriptor())?;
//! assert_eq!(view.get(&[1, 2, 3, 4]), Some(&59));
//! assert_eq!(view.shape(), &[2, 3, 4, 5]);
//! # Ok::<(), tgm::Error>(())
//! ```

mod dlpack;
mod element;
mod ffi;
mod ros;
mod typed;
mod view;

pub use dlpack::{DLDataType, DLDataTypeCode, DLPACK_ANNOTATION};
pub use element::{Complex32, Complex64, Element};
pub use ffi::{
    export_dlpack, export_dlpack_shared, import_dlpack, DLDevice, DLManagedTensorVersioned,
    DLPackVersion, DLTensor,
};
pub use ros::ExperimentalTensor;
pub use typed::{Tensor, TensorView};
pub use view::{gather, gather_with, StridedView};
