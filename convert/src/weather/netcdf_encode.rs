//! How converted NetCDF messages are encoded: the stages a caller chose
//! ([`tgm::pipeline::StageRequest`]) quantise float64 variables only, the
//! others get the same filter and compression without the encoding, and a
//! variable with missing values (NaN) is packed with parameters computed
//! from its present values, its NaN kept in a mask (`spec/convert.md`
//! "NetCDF encoding", `spec/pipeline.md` §3). `tgm convert-netcdf` and
//! Python's `convert_netcdf` both encode through [`NetcdfEncoder`].

use std::io::Write;

use tgm::cbor::Value;
use tgm::pipeline::StageChoice;
use tgm::{ByteOrder, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

use super::netcdf::{NcMessage, NetcdfError};

/// Encodes converted messages with one stage choice.
pub struct NetcdfEncoder {
    packed: StageChoice,
    plain: StageChoice,
    opts: EncodeOptions,
}

impl NetcdfEncoder {
    /// An encoder applying `stages` with `opts`; missing values are kept
    /// as NaN masks whatever `opts` says of NaN.
    pub fn new(stages: StageChoice, mut opts: EncodeOptions) -> Self {
        opts.pipeline.allow_nan = true;
        if stages.szip_libaec_exact() {
            opts.pipeline.szip_profile = tgm::szip::SzipProfile::Libaec;
        }
        NetcdfEncoder {
            plain: stages.without_encoding(),
            packed: stages,
            opts,
        }
    }

    /// Encodes `msg` straight into `out` (payloads are borrowed, never
    /// gathered into a message buffer); returns the message's length.
    pub fn encode_to(&self, mut msg: NcMessage, out: &mut dyn Write) -> Result<u64, NetcdfError> {
        for o in &mut msg.objects {
            if o.descriptor.dtype == Dtype::Float64 {
                self.packed
                    .apply(&mut o.descriptor, &o.data)
                    .map_err(NetcdfError::Stages)?;
                packing_params_without_nan(&mut o.descriptor, &o.data)?;
            } else {
                self.plain
                    .apply(&mut o.descriptor, &o.data)
                    .map_err(NetcdfError::Stages)?;
            }
        }
        let mut meta =
            GlobalMetadata::with_base(msg.objects.iter().map(|o| o.metadata.clone()).collect());
        meta.extra = msg.extra;
        let pairs: Vec<_> = msg
            .objects
            .iter()
            .map(|o| (&o.descriptor, &o.data[..]))
            .collect();
        Ok(tgm::encode_to(&meta, &pairs, &self.opts, out)?)
    }

    /// [`NetcdfEncoder::encode_to`] into a new buffer.
    pub fn encode(&self, msg: NcMessage) -> Result<Vec<u8>, NetcdfError> {
        let mut out = Vec::new();
        self.encode_to(msg, &mut out)?;
        Ok(out)
    }
}

/// simple_packing of float64 values holding NaN (missing values): the
/// encoder needs explicit parameters, computed here from the present
/// values alone, so that the NaN, masked, do not widen the range.
fn packing_params_without_nan(d: &mut ObjectDescriptor, data: &[u8]) -> Result<(), NetcdfError> {
    if d.encoding() != "simple_packing" {
        return Ok(());
    }
    let is_nan = |c: &[u8]| c.try_into().is_ok_and(|b| f64::from_ne_bytes(b).is_nan());
    if !data.chunks_exact(8).any(is_nan) {
        return Ok(());
    }
    let present: Vec<u8> = data
        .chunks_exact(8)
        .filter(|c| !is_nan(c))
        .flatten()
        .copied()
        .collect();
    let bits = d
        .pipeline()
        .param("sp_bits_per_value")
        .and_then(Value::as_u64)
        .unwrap_or(16) as u32;
    let (reference, binary) = if present.is_empty() {
        (0.0, 0)
    } else {
        let p = tgm::pipeline::compute_packing_params(&present, ByteOrder::native(), bits, 0)?;
        (p.reference_value, p.binary_scale_factor)
    };
    let mut params = d.pipeline().params().clone();
    params.insert("sp_reference_value".into(), Value::Float(reference));
    params.insert(
        "sp_binary_scale_factor".into(),
        Value::from_i64(i64::from(binary)),
    );
    params.insert("sp_decimal_scale_factor".into(), Value::from_i64(0));
    let [encoding, filter, compression] = d.pipeline().names();
    let (encoding, filter, compression) = (
        encoding.to_owned(),
        filter.to_owned(),
        compression.to_owned(),
    );
    *d = d
        .clone()
        .with_raw_pipeline(&encoding, &filter, &compression, params)?;
    Ok(())
}
