//! Rust element types of typed tensors. See `spec/tensor-model.md` §4.

use crate::dtype::Dtype;
use crate::file::Pod;

/// A complex number of two f32 (real, imaginary), laid out like `complex64`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C)]
pub struct Complex32 {
    /// Real part.
    pub re: f32,
    /// Imaginary part.
    pub im: f32,
}

/// A complex number of two f64, laid out like `complex128`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C)]
pub struct Complex64 {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

mod sealed {
    pub trait Sealed {}
}

impl crate::file::pod::sealed::Sealed for Complex32 {}
impl crate::file::pod::sealed::Sealed for Complex64 {}
// SAFETY: `#[repr(C)]` pairs of one float type: no padding, and every bit
// pattern is a valid value.
#[allow(unsafe_code)]
unsafe impl Pod for Complex32 {}
// SAFETY: as for `Complex32`.
#[allow(unsafe_code)]
unsafe impl Pod for Complex64 {}

/// An element type with a tgm dtype. Sealed.
pub trait Element: sealed::Sealed + Pod + Send + Sync {
    /// The tgm dtype.
    const DTYPE: Dtype;
    /// Reads one element from native-order bytes.
    fn from_ne(b: &[u8]) -> Self;
    /// Appends the native-order bytes of `self`.
    fn put_ne(self, out: &mut Vec<u8>);
}

macro_rules! prim {
    ($($t:ty => $d:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: Dtype = Dtype::$d;
            fn from_ne(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..std::mem::size_of::<$t>()]);
                <$t>::from_ne_bytes(a)
            }
            fn put_ne(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_ne_bytes());
            }
        }
    )*};
}
prim!(u8 => Uint8, u16 => Uint16, u32 => Uint32, u64 => Uint64, i8 => Int8, i16 => Int16, i32 => Int32,
      i64 => Int64, f32 => Float32, f64 => Float64, half::f16 => Float16, half::bf16 => Bfloat16);

impl sealed::Sealed for Complex32 {}
impl Element for Complex32 {
    const DTYPE: Dtype = Dtype::Complex64;
    fn from_ne(b: &[u8]) -> Self {
        Complex32 {
            re: f32::from_ne(b),
            im: f32::from_ne(&b[4..]),
        }
    }
    fn put_ne(self, out: &mut Vec<u8>) {
        self.re.put_ne(out);
        self.im.put_ne(out);
    }
}

impl sealed::Sealed for Complex64 {}
impl Element for Complex64 {
    const DTYPE: Dtype = Dtype::Complex128;
    fn from_ne(b: &[u8]) -> Self {
        Complex64 {
            re: f64::from_ne(b),
            im: f64::from_ne(&b[8..]),
        }
    }
    fn put_ne(self, out: &mut Vec<u8>) {
        self.re.put_ne(out);
        self.im.put_ne(out);
    }
}

/// Views bytes as elements without copying when they are aligned.
pub(crate) fn cast<T: Element>(b: &[u8]) -> Option<&[T]> {
    crate::file::try_cast::<T>(b)
}
