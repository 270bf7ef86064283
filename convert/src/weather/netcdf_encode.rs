//! How converted NetCDF messages are encoded: the stages a caller chose
//! ([`tgm::pipeline::StageRequest`]) quantise float64 variables only, the
//! others get the same filter and compression without the encoding, and
//! missing values (NaN) are kept in a mask whatever the encode options
//! say, the packing's range taken from the present values
//! (`spec/pipeline.md` §10). `tgm convert-netcdf` and
//! Python's `convert_netcdf` both encode through [`NetcdfEncoder`].

use std::io::Write;

use tgm::pipeline::StageChoice;
use tgm::{Dtype, EncodeOptions, GlobalMetadata};

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
