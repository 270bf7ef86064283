//! Typed tensors: owned `Tensor<T>` and borrowed `TensorView<'a, T>`.
//! See `spec/tensor-model.md` §4.

use std::borrow::Cow;

use super::element::{cast, Element};
use crate::decode::DecodedObject;
use crate::descriptor::ObjectDescriptor;
use crate::dtype::Dtype;
use crate::error::{Error, Result};

fn count(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| Error::invalid_argument(format!("shape {shape:?} element count overflows")))
}

fn offset(shape: &[usize], index: &[usize]) -> Option<usize> {
    if index.len() != shape.len() {
        return None;
    }
    let mut off = 0usize;
    for (&i, &d) in index.iter().zip(shape) {
        if i >= d {
            return None;
        }
        off = off * d + i;
    }
    Some(off)
}

fn row_major(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

fn check_dtype<T: Element>(d: &ObjectDescriptor) -> Result<Vec<usize>> {
    if d.dtype != T::DTYPE {
        return Err(Error::invalid_argument(format!(
            "object holds {}, not {}",
            d.dtype,
            T::DTYPE
        )));
    }
    d.shape
        .iter()
        .map(|&x| usize::try_from(x).map_err(|_| Error::invalid_argument("extent exceeds usize")))
        .collect()
}

/// An owned, row-major tensor of `T`.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor<T: Element> {
    shape: Vec<usize>,
    data: Vec<T>,
}

impl<T: Element> Tensor<T> {
    /// Wraps `data` with `shape`; the element count must match.
    pub fn from_vec(shape: Vec<usize>, data: Vec<T>) -> Result<Self> {
        let n = count(&shape)?;
        if n != data.len() {
            return Err(Error::invalid_argument(format!(
                "shape {shape:?} needs {n} elements, got {}",
                data.len()
            )));
        }
        Ok(Tensor { shape, data })
    }

    /// Copies `data` with `shape`.
    pub fn from_slice(shape: Vec<usize>, data: &[T]) -> Result<Self> {
        Self::from_vec(shape, data.to_vec())
    }

    /// Extents.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Row-major strides in elements.
    pub fn strides(&self) -> Vec<usize> {
        row_major(&self.shape)
    }

    /// The tgm dtype of `T`.
    pub fn dtype(&self) -> Dtype {
        T::DTYPE
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Element at a multi-index (bounds-checked).
    pub fn get(&self, index: &[usize]) -> Option<&T> {
        offset(&self.shape, index).and_then(|o| self.data.get(o))
    }

    /// Mutable element at a multi-index (bounds-checked).
    pub fn get_mut(&mut self, index: &[usize]) -> Option<&mut T> {
        offset(&self.shape, index).and_then(move |o| self.data.get_mut(o))
    }

    /// The same elements under another shape with the same count; no copy.
    pub fn reshape(self, shape: Vec<usize>) -> Result<Self> {
        Self::from_vec(shape, self.data)
    }

    /// The elements in row-major order.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// Copies the elements out.
    pub fn to_vec(&self) -> Vec<T> {
        self.data.clone()
    }

    /// Gives the elements up.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }

    /// A borrowed view.
    pub fn view(&self) -> TensorView<'_, T> {
        TensorView {
            shape: self.shape.clone(),
            data: Cow::Borrowed(&self.data),
        }
    }

    /// A `none`-pipeline descriptor and the native-order bytes, ready for `encode`.
    pub fn to_object(&self) -> (ObjectDescriptor, Vec<u8>) {
        let d = ObjectDescriptor::new(
            T::DTYPE,
            self.shape.iter().map(|&x| x as u64).collect::<Vec<_>>(),
        );
        let mut bytes = Vec::with_capacity(self.data.len() * std::mem::size_of::<T>());
        for &x in &self.data {
            x.put_ne(&mut bytes);
        }
        (d, bytes)
    }

    /// Builds a tensor from a decoded object (native byte order, as `decode` returns by default).
    pub fn from_decoded(o: &DecodedObject) -> Result<Self> {
        Ok(TensorView::<T>::from_bytes(&o.data, &o.descriptor)?.to_tensor())
    }
}

/// A borrowed (or, when unaligned, copied) row-major tensor of `T`.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorView<'a, T: Element> {
    shape: Vec<usize>,
    data: Cow<'a, [T]>,
}

impl<'a, T: Element> TensorView<'a, T> {
    /// Views decoded native-order bytes of an object described by `d`.
    /// Borrows when the bytes are aligned for `T`; copies otherwise.
    pub fn from_bytes(bytes: &'a [u8], d: &ObjectDescriptor) -> Result<Self> {
        let shape = check_dtype::<T>(d)?;
        let n = count(&shape)?;
        let size = std::mem::size_of::<T>();
        if n.checked_mul(size) != Some(bytes.len()) {
            return Err(Error::invalid_argument(format!(
                "{} bytes do not hold {n} elements of {}",
                bytes.len(),
                T::DTYPE
            )));
        }
        let data = match cast::<T>(bytes) {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(bytes.chunks_exact(size).map(T::from_ne).collect()),
        };
        Ok(TensorView { shape, data })
    }

    /// True when no copy was made.
    pub fn is_borrowed(&self) -> bool {
        matches!(self.data, Cow::Borrowed(_))
    }

    /// Extents.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Row-major strides in elements.
    pub fn strides(&self) -> Vec<usize> {
        row_major(&self.shape)
    }

    /// Element at a multi-index (bounds-checked).
    pub fn get(&self, index: &[usize]) -> Option<&T> {
        offset(&self.shape, index).and_then(|o| self.data.get(o))
    }

    /// The same elements under another shape; no copy.
    pub fn reshape(self, shape: Vec<usize>) -> Result<Self> {
        let n = count(&shape)?;
        if n != self.data.len() {
            return Err(Error::invalid_argument(format!(
                "cannot reshape {} elements to {shape:?}",
                self.data.len()
            )));
        }
        Ok(TensorView {
            shape,
            data: self.data,
        })
    }

    /// The elements in row-major order.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// Copies the elements out.
    pub fn to_vec(&self) -> Vec<T> {
        self.data.to_vec()
    }

    /// An owned tensor.
    pub fn to_tensor(&self) -> Tensor<T> {
        Tensor {
            shape: self.shape.clone(),
            data: self.data.to_vec(),
        }
    }
}

#[cfg(feature = "ndarray")]
impl<T: Element> From<Tensor<T>> for ndarray::ArrayD<T> {
    fn from(t: Tensor<T>) -> Self {
        let shape = t.shape.clone();
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), t.data)
            .expect("shape matches element count")
    }
}

#[cfg(feature = "ndarray")]
impl<T: Element> From<ndarray::ArrayD<T>> for Tensor<T> {
    fn from(a: ndarray::ArrayD<T>) -> Self {
        let shape = a.shape().to_vec();
        let data = a.iter().copied().collect();
        Tensor { shape, data }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexing_reshape_and_objects() {
        let t = Tensor::<i32>::from_vec(vec![2, 3], (0..6).collect()).unwrap();
        assert_eq!(t.get(&[1, 2]), Some(&5));
        assert_eq!(t.get(&[2, 0]), None);
        assert_eq!(t.get(&[0]), None);
        assert_eq!(t.strides(), vec![3, 1]);
        let r = t.clone().reshape(vec![3, 2]).unwrap();
        assert_eq!(r.get(&[2, 1]), Some(&5));
        assert!(t.clone().reshape(vec![4]).is_err());
        assert!(Tensor::<u8>::from_vec(vec![usize::MAX, 2], vec![]).is_err());
        let (d, bytes) = t.to_object();
        let v = TensorView::<i32>::from_bytes(&bytes, &d).unwrap();
        assert_eq!(v.to_vec(), t.to_vec());
        assert!(TensorView::<u32>::from_bytes(&bytes, &d).is_err());
        assert!(TensorView::<i32>::from_bytes(&bytes[1..], &d).is_err());
    }

    #[test]
    fn half_and_complex_elements() {
        let h = Tensor::<half::bf16>::from_vec(
            vec![2],
            vec![half::bf16::from_f32(1.5), half::bf16::from_f32(-2.0)],
        )
        .unwrap();
        let (d, b) = h.to_object();
        assert_eq!(d.dtype, Dtype::Bfloat16);
        assert_eq!(
            TensorView::<half::bf16>::from_bytes(&b, &d)
                .unwrap()
                .to_vec(),
            h.to_vec()
        );
        let c = Tensor::<super::super::Complex64>::from_vec(
            vec![1],
            vec![super::super::Complex64 { re: 1.0, im: -1.0 }],
        )
        .unwrap();
        let (d, b) = c.to_object();
        assert_eq!(d.dtype, Dtype::Complex128);
        assert_eq!(
            TensorView::<super::super::Complex64>::from_bytes(&b, &d)
                .unwrap()
                .get(&[0])
                .unwrap()
                .im,
            -1.0
        );
    }
}
