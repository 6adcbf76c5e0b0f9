//! What a live table's facts rest on, in words: why a torch line learned from PyPI has the
//! CUDA variants it has. The recommender quotes it as a reason; `tables --refresh` lists it.

use super::Tables;
use crate::version::Version;

fn cudas(t: &Tables, variants: &[String]) -> String {
    let list: Vec<String> = variants
        .iter()
        .map(|n| t.variant(n).map_or(n.clone(), |v| v.cuda.to_string()))
        .collect();
    if list.is_empty() {
        "-".into()
    } else {
        list.join(", ")
    }
}

/// Why a torch line learned from PyPI has the CUDA variants it has: the index's, or
/// assumed (the index unreachable, or not listing it yet).
pub fn variants_message(t: &Tables, p: &crate::compat::PypiTorch) -> crate::message::Message {
    let torch = p.patches.last().unwrap_or(&p.version).to_string();
    let previous = p
        .variants_from
        .as_ref()
        .map_or("-".to_string(), ToString::to_string);
    let cudas = cudas(t, &p.variants);
    match &p.index {
        crate::compat::IndexSeen::Lists => {
            crate::msg!("refresh_torch_variants_index", torch = torch, cudas = cudas)
        }
        crate::compat::IndexSeen::Unreachable => crate::msg!(
            "refresh_torch_variants_unreachable",
            torch = torch,
            cudas = cudas,
            previous = previous
        ),
        crate::compat::IndexSeen::NotListed { at } => crate::msg!(
            "refresh_torch_variants_unlisted",
            torch = torch,
            cudas = cudas,
            previous = previous,
            at = at
        ),
    }
}

/// For a recommendation of torch `line`: when its row was learned from PyPI, why its
/// CUDA variant is (not) confirmed. Empty for rows of the tables and the index.
pub fn torch_reasons(t: &Tables, line: &Version) -> Vec<crate::message::Message> {
    t.live
        .torch_pypi
        .iter()
        .filter(|p| p.version == line.major_minor())
        .map(|p| variants_message(t, p))
        .collect()
}
