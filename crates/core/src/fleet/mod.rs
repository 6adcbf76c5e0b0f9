//! Labs and schools (#36): a lab profile states what every PC must have; `state`
//! reads a PC in the profile's terms, tests it for drift and makes it so; the report a
//! PC writes is what `fleet collect` turns into one table of every PC.

pub mod drift;
pub mod profile;
pub mod report;
pub mod state;
