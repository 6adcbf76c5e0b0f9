//! PyPI's side of the wire: index pages (PEP 503 HTML, PEP 691 JSON) and wheel versions
//! (PEP 440). Both the wheels method and the tables' refresh read them.

pub mod index;
pub mod version;
