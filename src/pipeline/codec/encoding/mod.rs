//! The encoding stages (`spec/pipeline.md` §2): `none` is the identity
//! ([`super::none`]).

pub(crate) mod simple_packing;
