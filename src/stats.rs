//! Summary statistics of decoded elements: count, minimum, maximum, mean,
//! standard deviation and NaN/±Inf counts, in one pass over the values on
//! the thread budget (`spec/stats.md`).
//!
//! The values are cut into runs of `RUN` bytes (1 MiB) whatever the budget;
//! each run is summarised (chunks of `CHUNK` elements, each read once into a
//! small buffer that stays in cache, their partials combined by the
//! pairwise formula of Chan, Golub and LeVeque, on values less a common
//! shift) and the runs' partials are combined in element order. The split
//! never depends on the number of threads, so every budget gives the same
//! bits (`spec/stats.md` §2).

use crate::dtype::{ByteOrder, Dtype};
use crate::error::{Error, Result};

/// Bytes per run: the unit of parallel work, a multiple of every width.
pub(crate) const RUN: usize = 1 << 20;

/// Elements per chunk inside a run.
const CHUNK: usize = 512;

/// An extreme value, exact in the element's own type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// Of an integer or bitmask dtype (every int64 and uint64 value fits).
    Int(i128),
    /// Of a float dtype (or one part of a complex one), as float64.
    Float(f64),
}

/// Statistics of one real-valued sequence (`spec/stats.md` §1).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Summary {
    /// Elements looked at, non-finite ones included.
    pub count: u64,
    /// NaN elements.
    pub nan: u64,
    /// +Inf elements.
    pub pos_inf: u64,
    /// −Inf elements.
    pub neg_inf: u64,
    /// Smallest finite value; `None` when there is none.
    pub min: Option<Value>,
    /// Largest finite value.
    pub max: Option<Value>,
    /// Mean of the finite values.
    pub mean: Option<f64>,
    /// Population standard deviation (divisor `n`) of the finite values.
    pub std: Option<f64>,
}

impl Summary {
    /// Elements that entered min, max, mean and standard deviation.
    pub fn finite(&self) -> u64 {
        self.count - self.nan - self.pos_inf - self.neg_inf
    }
}

/// Statistics of one object.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stats {
    /// Integer and float dtypes.
    Real(Summary),
    /// Complex dtypes: the real and the imaginary parts, each on its own.
    Complex {
        /// Of the real parts.
        real: Summary,
        /// Of the imaginary parts.
        imag: Summary,
    },
    /// Bitmask: the bits as 0 and 1, and how many are set.
    Bits {
        /// Of the bits as integers 0 and 1.
        summary: Summary,
        /// Bits set.
        ones: u64,
    },
}

/// How to read the components of one dtype: `load` and `int` are the
/// closures themselves, so the loops are compiled for each dtype.
struct Kind<L, I> {
    /// Bytes per element.
    width: usize,
    /// Components per element (2 for complex).
    parts: usize,
    /// Reads one component as float64.
    load: L,
    /// Reads one component exactly, for integer dtypes.
    int: Option<I>,
}

macro_rules! reader {
    ($t:ty, $n:expr) => {
        |c: &[u8], o: ByteOrder| {
            let mut a = [0u8; $n];
            a.copy_from_slice(&c[..$n]);
            match o {
                ByteOrder::Little => <$t>::from_le_bytes(a),
                ByteOrder::Big => <$t>::from_be_bytes(a),
            }
        }
    };
}

macro_rules! int_kind {
    ($t:ty, $n:expr) => {
        Kind {
            width: $n,
            parts: 1,
            load: |c: &[u8], o| reader!($t, $n)(c, o) as f64,
            int: Some(|c: &[u8], o| i128::from(reader!($t, $n)(c, o))),
        }
    };
}

/// Statistics of `elements` decoded elements of `dtype` in `order` held in
/// `data`, on up to `threads` workers (0 and 1: the calling thread). The
/// result does not depend on `threads`. A `data` whose length is not the
/// payload length of `elements` is an invalid-argument error.
pub fn stats(
    dtype: Dtype,
    order: ByteOrder,
    elements: u64,
    data: &[u8],
    threads: usize,
) -> Result<Stats> {
    let want = dtype.payload_len(elements)?;
    if want != data.len() as u64 {
        return Err(Error::invalid_argument(format!(
            "{} bytes hold no {elements} {dtype} elements ({want} bytes)",
            data.len()
        )));
    }
    if dtype == Dtype::Bitmask {
        return Ok(bits(elements, data));
    }
    Ok(match dtype {
        Dtype::Float16 => float(2, 1, |c, o| {
            half::f16::from_bits(reader!(u16, 2)(c, o)).to_f64()
        })
        .stats(data, order, threads),
        Dtype::Bfloat16 => float(2, 1, |c, o| {
            half::bf16::from_bits(reader!(u16, 2)(c, o)).to_f64()
        })
        .stats(data, order, threads),
        Dtype::Float32 => {
            float(4, 1, |c, o| f64::from(reader!(f32, 4)(c, o))).stats(data, order, threads)
        }
        Dtype::Complex64 => {
            float(8, 2, |c, o| f64::from(reader!(f32, 4)(c, o))).stats(data, order, threads)
        }
        Dtype::Float64 => float(8, 1, reader!(f64, 8)).stats(data, order, threads),
        Dtype::Complex128 => float(16, 2, reader!(f64, 8)).stats(data, order, threads),
        Dtype::Int8 => int_kind!(i8, 1).stats(data, order, threads),
        Dtype::Int16 => int_kind!(i16, 2).stats(data, order, threads),
        Dtype::Int32 => int_kind!(i32, 4).stats(data, order, threads),
        Dtype::Int64 => int_kind!(i64, 8).stats(data, order, threads),
        Dtype::Uint8 => int_kind!(u8, 1).stats(data, order, threads),
        Dtype::Uint16 => int_kind!(u16, 2).stats(data, order, threads),
        Dtype::Uint32 => int_kind!(u32, 4).stats(data, order, threads),
        // Bitmask returned above; uint64 and anything newer read as uint64.
        _ => int_kind!(u64, 8).stats(data, order, threads),
    })
}

/// A float dtype of `width` bytes and `parts` components read by `load`.
fn float<L: Fn(&[u8], ByteOrder) -> f64>(width: usize, parts: usize, load: L) -> Kind<L, IntLoad> {
    Kind {
        width,
        parts,
        load,
        int: None,
    }
}

/// The exact reader of integer components.
type IntLoad = fn(&[u8], ByteOrder) -> i128;

impl<L, I> Kind<L, I>
where
    L: Fn(&[u8], ByteOrder) -> f64 + Sync,
    I: Fn(&[u8], ByteOrder) -> i128 + Sync,
{
    fn stats(&self, data: &[u8], order: ByteOrder, threads: usize) -> Stats {
        let shift = [0, 1].map(|p| self.first_finite(data, order, p));
        let runs = map_runs(data, threads, |run| self.run(run, order, shift));
        let mut total = [Partial::default(); 2];
        for r in runs {
            for (t, p) in total.iter_mut().zip(r) {
                *t = t.combine(&p);
            }
        }
        let int = self.int.is_some();
        match self.parts {
            2 => Stats::Complex {
                real: total[0].summary(int, shift[0]),
                imag: total[1].summary(int, shift[1]),
            },
            _ => Stats::Real(total[0].summary(int, shift[0])),
        }
    }
    /// The first finite value of component `p` in `data`, 0 if none: the
    /// shift that keeps the partial means small, and so exact enough for
    /// the deviations between them (`spec/stats.md` §2).
    fn first_finite(&self, data: &[u8], order: ByteOrder, p: usize) -> f64 {
        let comp = self.width / self.parts;
        if p >= self.parts {
            return 0.0;
        }
        data.chunks_exact(self.width)
            .map(|e| (self.load)(&e[p * comp..(p + 1) * comp], order))
            .find(|v| v.is_finite())
            .unwrap_or(0.0)
    }

    /// The partials of one run, per component, of the values less `shift`.
    fn run(&self, run: &[u8], order: ByteOrder, shift: [f64; 2]) -> [Partial; 2] {
        let comp = self.width / self.parts;
        let mut out = [Partial::default(); 2];
        let mut buf = [0f64; CHUNK];
        for chunk in run.chunks(CHUNK * self.width) {
            for (p, acc) in out.iter_mut().enumerate().take(self.parts) {
                let mut c = Partial::default();
                let mut k = 0;
                for e in chunk.chunks_exact(self.width) {
                    let e = &e[p * comp..(p + 1) * comp];
                    c.count += 1;
                    if let Some(int) = &self.int {
                        let v = int(e, order);
                        c.imin = c.imin.min(v);
                        c.imax = c.imax.max(v);
                    }
                    let v = (self.load)(e, order);
                    if v.is_nan() {
                        c.nan += 1;
                    } else if v == f64::INFINITY {
                        c.pos_inf += 1;
                    } else if v == f64::NEG_INFINITY {
                        c.neg_inf += 1;
                    } else {
                        c.min = c.min.min(v);
                        c.max = c.max.max(v);
                        buf[k] = v - shift[p];
                        k += 1;
                    }
                }
                c.moments(&buf[..k]);
                *acc = acc.combine(&c);
            }
        }
        out
    }
}

/// `f` on every run of `data`, in order, on the budget's pool.
fn map_runs<T: Send>(data: &[u8], threads: usize, f: impl Fn(&[u8]) -> T + Sync) -> Vec<T> {
    if threads >= 2 && data.len() > RUN {
        let par = crate::exec::install(threads, || {
            use rayon::prelude::*;
            data.par_chunks(RUN).map(&f).collect::<Vec<_>>()
        });
        if let Ok(v) = par {
            return v;
        }
    }
    data.chunks(RUN).map(f).collect()
}

/// Bitmask statistics: bits MSB first, the padding of the last byte ignored.
fn bits(elements: u64, data: &[u8]) -> Stats {
    let full = (elements / 8) as usize;
    let mut ones: u64 = data[..full].iter().map(|b| u64::from(b.count_ones())).sum();
    let rest = (elements % 8) as u32;
    if rest > 0 {
        let mask = !(0xffu8 >> rest);
        ones += u64::from((data[full] & mask).count_ones());
    }
    let mut summary = Summary {
        count: elements,
        ..Summary::default()
    };
    if elements > 0 {
        let n = elements as f64;
        let p = ones as f64 / n;
        summary.min = Some(Value::Int(i128::from(ones == elements)));
        summary.max = Some(Value::Int(i128::from(ones > 0)));
        summary.mean = Some(p);
        summary.std = Some((p * (1.0 - p)).sqrt());
    }
    Stats::Bits { summary, ones }
}

/// What a stretch of values contributes.
#[derive(Debug, Clone, Copy)]
struct Partial {
    count: u64,
    nan: u64,
    pos_inf: u64,
    neg_inf: u64,
    /// Finite values.
    n: u64,
    min: f64,
    max: f64,
    mean: f64,
    /// Sum of squared deviations from `mean`.
    m2: f64,
    imin: i128,
    imax: i128,
}

impl Default for Partial {
    fn default() -> Self {
        Partial {
            count: 0,
            nan: 0,
            pos_inf: 0,
            neg_inf: 0,
            n: 0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            mean: 0.0,
            m2: 0.0,
            imin: i128::MAX,
            imax: i128::MIN,
        }
    }
}

impl Partial {
    /// Sets the moments of the shifted finite values `v` (at most a chunk): the
    /// mean, then the squared deviations from it, both over data in cache.
    /// When the sum overflows, Welford's update, which does not.
    fn moments(&mut self, v: &[f64]) {
        self.n = v.len() as u64;
        if v.is_empty() {
            return;
        }
        let n = v.len() as f64;
        let sum: f64 = v.iter().sum();
        if sum.is_finite() {
            self.mean = sum / n;
            self.m2 = v.iter().map(|x| (x - self.mean) * (x - self.mean)).sum();
        } else {
            let (mut mean, mut m2) = (0.0f64, 0.0f64);
            for (i, &x) in v.iter().enumerate() {
                let d = x - mean;
                mean += d / (i + 1) as f64;
                m2 += d * (x - mean);
            }
            (self.mean, self.m2) = (mean, m2);
        }
    }

    /// The partial of `self` followed by `b`.
    fn combine(&self, b: &Partial) -> Partial {
        let (na, nb) = (self.n as f64, b.n as f64);
        let (mean, m2) = match (self.n, b.n) {
            (_, 0) => (self.mean, self.m2),
            (0, _) => (b.mean, b.m2),
            _ => {
                let n = na + nb;
                let d = b.mean - self.mean;
                (
                    self.mean + d * (nb / n),
                    self.m2 + b.m2 + d * d * (na / n) * nb,
                )
            }
        };
        Partial {
            count: self.count + b.count,
            nan: self.nan + b.nan,
            pos_inf: self.pos_inf + b.pos_inf,
            neg_inf: self.neg_inf + b.neg_inf,
            n: self.n + b.n,
            min: self.min.min(b.min),
            max: self.max.max(b.max),
            mean,
            m2,
            imin: self.imin.min(b.imin),
            imax: self.imax.max(b.imax),
        }
    }

    /// The summary, the shift of the values added back to the mean.
    fn summary(&self, int: bool, shift: f64) -> Summary {
        let mut s = Summary {
            count: self.count,
            nan: self.nan,
            pos_inf: self.pos_inf,
            neg_inf: self.neg_inf,
            ..Summary::default()
        };
        if self.n > 0 {
            (s.min, s.max) = match int {
                true => (Some(Value::Int(self.imin)), Some(Value::Int(self.imax))),
                false => (Some(Value::Float(self.min)), Some(Value::Float(self.max))),
            };
            s.mean = Some(shift + self.mean);
            s.std = Some((self.m2 / self.n as f64).sqrt());
        }
        s
    }
}
