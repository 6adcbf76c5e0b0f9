//! Many PCs kept alike (#36): the lab profile, the machine's state in its terms, the
//! report each PC writes, and the table of every PC collected from those reports.

pub mod collect;
