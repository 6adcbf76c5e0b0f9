//! Shared test helpers: `tests/integration` and `tests/fuzz.rs` include them, and the
//! benchmarks include single files by path.
#[allow(dead_code)]
pub mod cli;
pub mod cudnn_tar;
pub mod cudnn_zip;
pub mod elf;
#[allow(dead_code)]
pub mod machine;
pub mod pe;
pub mod pe_imports;
pub mod proxy;
#[cfg(unix)]
pub mod python;
#[allow(dead_code)]
pub mod schema_shape;
pub mod server;
pub mod standin;
pub mod tls;
pub mod tree;
pub mod wheels;
#[allow(dead_code)]
pub mod words;

/// The newest torch the embedded tables vouch for (release and variants confirmed), by its
/// newest patch, as a recommendation names it: a test that sees the recommended torch
/// compares with this, never with a number that the next table update changes.
#[allow(dead_code)]
pub fn newest_torch() -> String {
    let tables = cuda_setup_core::compat::Tables::embedded().unwrap();
    let r = tables
        .pytorch
        .releases
        .iter()
        .rfind(|r| r.confirmed && r.variants_confirmed)
        .unwrap();
    r.patches.last().unwrap().to_string()
}
