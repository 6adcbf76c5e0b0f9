//! Shared test helpers: `tests/integration` and `tests/fuzz.rs` include them, and the
//! benchmarks include single files by path.
pub mod cudnn_tar;
pub mod cudnn_zip;
pub mod server;
pub mod standin;
pub mod tree;
pub mod wheels;
