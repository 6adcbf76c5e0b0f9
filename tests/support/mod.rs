//! Shared test helpers (each integration test includes what it needs).
pub mod cudnn_tar;
pub mod cudnn_zip;
pub mod server;
pub mod standin;
pub mod tree;
pub mod wheels;
