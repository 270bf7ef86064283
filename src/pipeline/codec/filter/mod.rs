//! The filter stages (`spec/pipeline.md` §3): `none` is the identity
//! ([`super::none`]).

pub(crate) mod shuffle;
