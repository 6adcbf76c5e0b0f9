//! Shared test helpers (each integration test includes what it needs).
pub mod server;
