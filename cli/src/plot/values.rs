//! The decoded elements of one object read one at a time as float64, so a
//! picture needs no copy of the object (`spec/plot.md` §1).

use tgm::{Dtype, ObjectDescriptor};

/// Elements of one decoded object in native byte order.
#[derive(Debug)]
pub struct Elements<'a> {
    dtype: Dtype,
    data: &'a [u8],
    len: u64,
}

impl<'a> Elements<'a> {
    /// The elements of `data`, decoded from an object described by `d`.
    /// Complex objects are refused: a picture has one value per point.
    pub fn new(d: &ObjectDescriptor, data: &'a [u8]) -> Result<Self, String> {
        if matches!(d.dtype, Dtype::Complex64 | Dtype::Complex128) {
            return Err(format!(
                "the object is {}: plot draws real values, and a complex object has two per point",
                d.dtype
            ));
        }
        let len = d.num_elements().map_err(|e| e.to_string())?;
        let want = d.dtype.payload_len(len).map_err(|e| e.to_string())?;
        if want != data.len() as u64 {
            return Err(format!(
                "decoded {} bytes for {len} {} elements",
                data.len(),
                d.dtype
            ));
        }
        Ok(Elements {
            dtype: d.dtype,
            data,
            len,
        })
    }

    /// Number of elements.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `i` as float64 (NaN past the end); a bitmask's bits are 0
    /// and 1 ([`Dtype::element_f64`]).
    pub fn get(&self, i: u64) -> f64 {
        if i >= self.len {
            return f64::NAN;
        }
        let i = usize::try_from(i).unwrap_or(usize::MAX);
        self.dtype
            .element_f64(self.data, tgm::ByteOrder::native(), i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_real_dtype_reads_back() {
        let d = |t, n| ObjectDescriptor::new(t, vec![n]);
        let f: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let e = Elements::new(&d(Dtype::Float32, 2), &f).unwrap();
        assert_eq!((e.get(0), e.get(1)), (1.5, -2.0));
        let h: Vec<u8> = [half::f16::from_f64(0.25).to_bits()]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(
            Elements::new(&d(Dtype::Float16, 1), &h).unwrap().get(0),
            0.25
        );
        let i: Vec<u8> = (-3i16).to_ne_bytes().to_vec();
        assert_eq!(Elements::new(&d(Dtype::Int16, 1), &i).unwrap().get(0), -3.0);
        let m = Elements::new(&d(Dtype::Bitmask, 10), &[0b0100_0000, 0b0100_0000]).unwrap();
        let bits: Vec<f64> = (0..10).map(|k| m.get(k)).collect();
        assert_eq!(bits, [0., 1., 0., 0., 0., 0., 0., 0., 0., 1.]);
        assert!(m.get(10).is_nan());
    }

    #[test]
    fn complex_and_short_buffers_are_refused() {
        let c = ObjectDescriptor::new(Dtype::Complex64, vec![1]);
        assert!(Elements::new(&c, &[0; 8]).unwrap_err().contains("complex"));
        let f = ObjectDescriptor::new(Dtype::Float64, vec![2]);
        assert!(Elements::new(&f, &[0; 8]).is_err());
    }
}
