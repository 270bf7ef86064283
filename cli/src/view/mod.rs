//! `tgm view`: the viewer page (`wasm/viewer`, using the WebAssembly
//! reader of `wasm/pkg`) served on 127.0.0.1 with the archives it shows,
//! or written as static files (`spec/wasm.md` §3).

pub mod archives;
pub mod assets;
mod conn;
mod guard;
pub mod http;
mod ranges;
mod request;
mod response;
pub mod server;
pub mod site;
mod target;
