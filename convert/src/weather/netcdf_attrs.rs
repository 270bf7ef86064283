//! NetCDF attribute values ↔ CBOR values, with the CDL type name that lets
//! `to-netcdf` write each attribute back with its original type.
//!
//! Scalars become CBOR scalars and arrays CBOR arrays; `char` text becomes
//! a text string and a `string` attribute an array of text strings.

use netcdf::AttributeValue;
use tgm::cbor::Value;

/// The CBOR value and CDL type name of an attribute.
pub fn to_cbor(v: &AttributeValue) -> (Value, &'static str) {
    fn ints<T: Copy + Into<i64>>(v: &[T]) -> Value {
        Value::Array(v.iter().map(|&x| Value::from(x.into())).collect())
    }
    fn uints<T: Copy + Into<u64>>(v: &[T]) -> Value {
        Value::Array(v.iter().map(|&x| Value::from(x.into())).collect())
    }
    match v {
        AttributeValue::Schar(x) => (Value::from(i64::from(*x)), "byte"),
        AttributeValue::Schars(x) => (ints(x), "byte"),
        AttributeValue::Uchar(x) => (Value::from(u64::from(*x)), "ubyte"),
        AttributeValue::Uchars(x) => (uints(x), "ubyte"),
        AttributeValue::Short(x) => (Value::from(i64::from(*x)), "short"),
        AttributeValue::Shorts(x) => (ints(x), "short"),
        AttributeValue::Ushort(x) => (Value::from(u64::from(*x)), "ushort"),
        AttributeValue::Ushorts(x) => (uints(x), "ushort"),
        AttributeValue::Int(x) => (Value::from(i64::from(*x)), "int"),
        AttributeValue::Ints(x) => (ints(x), "int"),
        AttributeValue::Uint(x) => (Value::from(u64::from(*x)), "uint"),
        AttributeValue::Uints(x) => (uints(x), "uint"),
        AttributeValue::Longlong(x) => (Value::from(*x), "int64"),
        AttributeValue::Longlongs(x) => (ints(x), "int64"),
        AttributeValue::Ulonglong(x) => (Value::from(*x), "uint64"),
        AttributeValue::Ulonglongs(x) => (uints(x), "uint64"),
        AttributeValue::Float(x) => (Value::Float(f64::from(*x)), "float"),
        AttributeValue::Floats(x) => (
            Value::Array(x.iter().map(|&f| Value::Float(f64::from(f))).collect()),
            "float",
        ),
        AttributeValue::Double(x) => (Value::Float(*x), "double"),
        AttributeValue::Doubles(x) => (
            Value::Array(x.iter().map(|&f| Value::Float(f)).collect()),
            "double",
        ),
        AttributeValue::Str(s) => (Value::Text(s.clone()), "char"),
        AttributeValue::Strs(s) => (
            Value::Array(s.iter().map(|t| Value::Text(t.clone())).collect()),
            "string",
        ),
    }
}

/// The attribute holding the native-endian integers `bytes` of netCDF
/// base type `base` (`NC_BYTE` … `NC_UINT64`): a scalar for one value;
/// `None` for another base type.
pub fn from_native(base: netcdf_sys::nc_type, bytes: &[u8]) -> Option<AttributeValue> {
    macro_rules! ints {
        ($t:ty, $one:ident, $many:ident) => {{
            let v: Vec<$t> = bytes
                .chunks_exact(std::mem::size_of::<$t>())
                .map(|c| <$t>::from_ne_bytes(c.try_into().expect("chunk width")))
                .collect();
            Some(match v.as_slice() {
                [x] => AttributeValue::$one(*x),
                _ => AttributeValue::$many(v),
            })
        }};
    }
    match base {
        netcdf_sys::NC_BYTE => ints!(i8, Schar, Schars),
        netcdf_sys::NC_UBYTE => ints!(u8, Uchar, Uchars),
        netcdf_sys::NC_SHORT => ints!(i16, Short, Shorts),
        netcdf_sys::NC_USHORT => ints!(u16, Ushort, Ushorts),
        netcdf_sys::NC_INT => ints!(i32, Int, Ints),
        netcdf_sys::NC_UINT => ints!(u32, Uint, Uints),
        netcdf_sys::NC_INT64 => ints!(i64, Longlong, Longlongs),
        netcdf_sys::NC_UINT64 => ints!(u64, Ulonglong, Ulonglongs),
        _ => None,
    }
}

/// The netCDF type, value count and native-endian bytes of a numeric or
/// `char` attribute (`None` for a `string` one).
pub fn to_native(v: &AttributeValue) -> Option<(netcdf_sys::nc_type, usize, usize, Vec<u8>)> {
    macro_rules! one {
        ($x:expr, $t:expr) => {{
            let b = $x.to_ne_bytes().to_vec();
            Some(($t, 1, b.len(), b))
        }};
    }
    macro_rules! many {
        ($x:expr, $t:expr, $w:expr) => {
            Some((
                $t,
                $x.len(),
                $w,
                $x.iter().flat_map(|v| v.to_ne_bytes()).collect(),
            ))
        };
    }
    use netcdf_sys as n;
    match v {
        AttributeValue::Schar(x) => one!(x, n::NC_BYTE),
        AttributeValue::Schars(x) => many!(x, n::NC_BYTE, 1),
        AttributeValue::Uchar(x) => one!(x, n::NC_UBYTE),
        AttributeValue::Uchars(x) => many!(x, n::NC_UBYTE, 1),
        AttributeValue::Short(x) => one!(x, n::NC_SHORT),
        AttributeValue::Shorts(x) => many!(x, n::NC_SHORT, 2),
        AttributeValue::Ushort(x) => one!(x, n::NC_USHORT),
        AttributeValue::Ushorts(x) => many!(x, n::NC_USHORT, 2),
        AttributeValue::Int(x) => one!(x, n::NC_INT),
        AttributeValue::Ints(x) => many!(x, n::NC_INT, 4),
        AttributeValue::Uint(x) => one!(x, n::NC_UINT),
        AttributeValue::Uints(x) => many!(x, n::NC_UINT, 4),
        AttributeValue::Longlong(x) => one!(x, n::NC_INT64),
        AttributeValue::Longlongs(x) => many!(x, n::NC_INT64, 8),
        AttributeValue::Ulonglong(x) => one!(x, n::NC_UINT64),
        AttributeValue::Ulonglongs(x) => many!(x, n::NC_UINT64, 8),
        AttributeValue::Float(x) => one!(x, n::NC_FLOAT),
        AttributeValue::Floats(x) => many!(x, n::NC_FLOAT, 4),
        AttributeValue::Double(x) => one!(x, n::NC_DOUBLE),
        AttributeValue::Doubles(x) => many!(x, n::NC_DOUBLE, 8),
        AttributeValue::Str(s) => Some((n::NC_CHAR, s.len(), 1, s.as_bytes().to_vec())),
        AttributeValue::Strs(_) => None,
    }
}

/// Every element of a numeric attribute as f64 (empty for text).
pub fn numbers(v: &AttributeValue) -> Vec<f64> {
    fn all<T: Copy + Into<f64>>(v: &[T]) -> Vec<f64> {
        v.iter().map(|&x| x.into()).collect()
    }
    match v {
        AttributeValue::Schar(x) => vec![f64::from(*x)],
        AttributeValue::Schars(x) => all(x),
        AttributeValue::Uchar(x) => vec![f64::from(*x)],
        AttributeValue::Uchars(x) => all(x),
        AttributeValue::Short(x) => vec![f64::from(*x)],
        AttributeValue::Shorts(x) => all(x),
        AttributeValue::Ushort(x) => vec![f64::from(*x)],
        AttributeValue::Ushorts(x) => all(x),
        AttributeValue::Int(x) => vec![f64::from(*x)],
        AttributeValue::Ints(x) => all(x),
        AttributeValue::Uint(x) => vec![f64::from(*x)],
        AttributeValue::Uints(x) => all(x),
        AttributeValue::Longlong(x) => vec![*x as f64],
        AttributeValue::Longlongs(x) => x.iter().map(|&v| v as f64).collect(),
        AttributeValue::Ulonglong(x) => vec![*x as f64],
        AttributeValue::Ulonglongs(x) => x.iter().map(|&v| v as f64).collect(),
        AttributeValue::Float(x) => vec![f64::from(*x)],
        AttributeValue::Floats(x) => all(x),
        AttributeValue::Double(x) => vec![*x],
        AttributeValue::Doubles(x) => x.clone(),
        AttributeValue::Str(_) | AttributeValue::Strs(_) => Vec::new(),
    }
}

/// The attribute value of CDL type `type_name` held by `v`, or why not.
pub fn from_cbor(v: &Value, type_name: &str) -> Result<AttributeValue, String> {
    let items: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    let scalar = !matches!(v, Value::Array(_));
    macro_rules! num {
        ($t:ty, $get:ident, $one:ident, $many:ident) => {{
            let vals = items
                .iter()
                .map(|x| {
                    x.$get()
                        .and_then(|n| <$t>::try_from(n).ok())
                        .ok_or_else(|| format!("{} is not a {type_name}", x.to_json()))
                })
                .collect::<Result<Vec<$t>, String>>()?;
            if scalar {
                AttributeValue::$one(vals[0])
            } else {
                AttributeValue::$many(vals)
            }
        }};
    }
    let float = |x: &&Value| {
        x.as_f64()
            .ok_or_else(|| format!("{} is not a number", x.to_json()))
    };
    Ok(match type_name {
        "byte" => num!(i8, as_i64, Schar, Schars),
        "ubyte" => num!(u8, as_u64, Uchar, Uchars),
        "short" => num!(i16, as_i64, Short, Shorts),
        "ushort" => num!(u16, as_u64, Ushort, Ushorts),
        "int" => num!(i32, as_i64, Int, Ints),
        "uint" => num!(u32, as_u64, Uint, Uints),
        "int64" => num!(i64, as_i64, Longlong, Longlongs),
        "uint64" => num!(u64, as_u64, Ulonglong, Ulonglongs),
        "float" => {
            let vals = items
                .iter()
                .map(|x| float(x).map(|f| f as f32))
                .collect::<Result<Vec<f32>, String>>()?;
            if scalar {
                AttributeValue::Float(vals[0])
            } else {
                AttributeValue::Floats(vals)
            }
        }
        "double" => {
            let vals = items
                .iter()
                .map(float)
                .collect::<Result<Vec<f64>, String>>()?;
            if scalar {
                AttributeValue::Double(vals[0])
            } else {
                AttributeValue::Doubles(vals)
            }
        }
        "char" => match v {
            Value::Text(s) => AttributeValue::Str(s.clone()),
            other => return Err(format!("{} is not text", other.to_json())),
        },
        "string" => AttributeValue::Strs(
            items
                .iter()
                .map(|x| {
                    x.as_text()
                        .map(str::to_string)
                        .ok_or_else(|| format!("{} is not text", x.to_json()))
                })
                .collect::<Result<_, _>>()?,
        ),
        other => return Err(format!("unknown attribute type {other:?}")),
    })
}

/// The CDL type a CBOR value is written as when no type was recorded.
pub fn default_type(v: &Value) -> &'static str {
    match v {
        Value::Text(_) => "char",
        Value::Float(_) => "double",
        Value::Array(a) if a.iter().all(|x| x.as_text().is_some()) && !a.is_empty() => "string",
        Value::Array(a) if a.iter().any(|x| matches!(x, Value::Float(_))) => "double",
        _ => "int64",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_round_trips() {
        let values = [
            AttributeValue::Schar(-3),
            AttributeValue::Schars(vec![-1, 2]),
            AttributeValue::Uchar(250),
            AttributeValue::Short(-32768),
            AttributeValue::Ushorts(vec![1, 65535]),
            AttributeValue::Int(7),
            AttributeValue::Uint(4_000_000_000),
            AttributeValue::Longlong(i64::MIN),
            AttributeValue::Ulonglongs(vec![0, u64::MAX]),
            AttributeValue::Float(0.1),
            AttributeValue::Doubles(vec![1.5, -2.25]),
            AttributeValue::Str("K".into()),
            AttributeValue::Strs(vec!["a".into(), "b".into()]),
        ];
        for v in values {
            let (c, t) = to_cbor(&v);
            assert_eq!(from_cbor(&c, t).unwrap(), v, "{t}");
        }
    }

    #[test]
    fn out_of_range_is_refused() {
        assert!(from_cbor(&Value::from(300i64), "byte").is_err());
        assert!(from_cbor(&Value::Text("x".into()), "int").is_err());
        assert!(from_cbor(&Value::from(1i64), "complex").is_err());
    }
}
