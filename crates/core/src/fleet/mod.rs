//! A lab's fleet (#36): the desired state of every PC (the lab profile), the machine's
//! state in the profile's terms, the drift between them, and the reports PCs leave on a
//! share for one table of the whole lab.

pub mod apply;
pub mod collect;
pub mod drift;
pub mod profile;
pub mod report;
pub mod state;
pub mod venv;
