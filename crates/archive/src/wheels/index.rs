//! A PyPI "simple" index client: the page readers live with the other fetchers
//! (`cuda_setup_fetch::pypi::index`, which the tables' refresh uses too); fetching a
//! project's page for the wheels method, with its typed error, is here.

pub use cuda_setup_fetch::pypi::index::*;

use super::WheelError;
use crate::download::{self, Options};

/// Fetches and parses one project page.
pub fn fetch_project(
    index: &str,
    project: &str,
    opts: &Options,
) -> Result<Vec<DistFile>, WheelError> {
    let url = project_url(index, project);
    let page = download::get_page(std::slice::from_ref(&url), Some(ACCEPT), opts).map_err(|e| {
        WheelError::Index {
            url: url.clone(),
            source: crate::error::cause(e),
        }
    })?;
    let files = parse_any(&page.url, &page.content_type, &page.text).map_err(|detail| {
        WheelError::Index {
            url: url.clone(),
            source: crate::error::text(detail),
        }
    })?;
    // A listed name becomes a file in our downloads folder: one plain name, or the whole
    // page is refused (a mirror that lists `../x` is not one to take anything from).
    for f in &files {
        crate::safe_path::file_name(&f.filename).map_err(|why| WheelError::UnsafeName {
            origin: url.clone(),
            why,
        })?;
    }
    Ok(files)
}
