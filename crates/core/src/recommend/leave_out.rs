//! GPUs a pick cannot serve (#20 class 1): when nothing covers every GPU, the pick serves
//! the GPUs it keeps and says which it leaves out, and `CUDA_VISIBLE_DEVICES` (with
//! `CUDA_DEVICE_ORDER=PCI_BUS_ID`) shows programs only the kept ones.

use super::{Facts, GpuFact, LeftOut, Part};
use crate::message::Message;
use crate::msg;

/// The indices (into `gpus`) of the GPUs to keep: all of them when `covers` accepts them
/// all; else the set holding the GPU of the highest compute capability (the newest card
/// is the one a user bought to use), grown by each other GPU, newest first, that `covers`
/// still accepts. Empty when `covers` accepts no GPU on its own. Sorted ascending.
pub(super) fn kept(gpus: &[GpuFact], covers: impl Fn(&[&GpuFact]) -> bool) -> Vec<usize> {
    let all: Vec<&GpuFact> = gpus.iter().collect();
    if gpus.is_empty() || covers(&all) {
        return (0..gpus.len()).collect();
    }
    let mut order: Vec<usize> = (0..gpus.len()).collect();
    // Highest compute capability first; ties in PCI order.
    order.sort_by(|a, b| {
        gpus[*b]
            .compute_capability
            .cmp(&gpus[*a].compute_capability)
            .then(a.cmp(b))
    });
    let mut keep: Vec<usize> = Vec::new();
    for i in order {
        let mut with: Vec<&GpuFact> = keep.iter().map(|k| &gpus[*k]).collect();
        with.push(&gpus[i]);
        if covers(&with) {
            keep.push(i);
        }
    }
    keep.sort_unstable();
    keep
}

/// The `CUDA_VISIBLE_DEVICES` value for the GPUs kept: their indices, comma-separated.
pub(super) fn visible(kept: &[usize]) -> String {
    kept.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Records the GPUs of `facts` that `part` (named `what` in the message, e.g.
/// "CUDA 12.9.1") leaves out, given the indices it keeps: a `LeftOut` entry and a
/// `gpu_left_out` reason each.
pub(super) fn record(
    facts: &Facts,
    part: Part,
    what: &str,
    kept: &[usize],
    left_out: &mut Vec<LeftOut>,
    reasons: &mut Vec<Message>,
) {
    let kept_labels: Vec<String> = kept.iter().map(|i| facts.gpus[*i].label()).collect();
    for (index, gpu) in facts.gpus.iter().enumerate() {
        if kept.contains(&index) {
            continue;
        }
        reasons.push(msg!(
            "gpu_left_out",
            gpu = gpu.label(),
            part = what,
            kept = kept_labels.join(", "),
            visible_devices = visible(kept)
        ));
        left_out.push(LeftOut {
            part,
            index,
            gpu: gpu.clone(),
        });
    }
}

/// The `CUDA_VISIBLE_DEVICES` value for the GPUs every pick keeps (the intersection of
/// what each keeps), or None when no GPU is left out.
pub(super) fn visible_devices(facts: &Facts, left_out: &[LeftOut]) -> Option<String> {
    if left_out.is_empty() {
        return None;
    }
    Some(visible(&kept_by_all(facts, left_out)))
}

/// The indices of the GPUs no pick leaves out.
fn kept_by_all(facts: &Facts, left_out: &[LeftOut]) -> Vec<usize> {
    (0..facts.gpus.len())
        .filter(|i| !left_out.iter().any(|l| l.index == *i))
        .collect()
}

/// The indices of the GPUs at least one pick serves (a GPU every pick made leaves out is
/// served by none). With no pick, every GPU.
pub(super) fn served(rec: &super::Recommendation) -> Vec<usize> {
    let mut parts = Vec::new();
    if rec.torch.is_some() {
        parts.push(Part::Torch);
    }
    if rec.toolkit.is_some() {
        parts.push(Part::Toolkit);
    }
    (0..rec.gpus.len())
        .filter(|i| {
            parts.is_empty()
                || parts
                    .iter()
                    .any(|p| !rec.left_out.iter().any(|l| l.part == *p && l.index == *i))
        })
        .collect()
}

/// `facts` without the GPUs any pick left out.
pub(super) fn kept_facts(facts: &Facts, left_out: &[LeftOut]) -> Facts {
    only(facts, &kept_by_all(facts, left_out))
}

/// `facts` with only the GPUs at `kept`.
pub(super) fn only(facts: &Facts, kept: &[usize]) -> Facts {
    Facts {
        gpus: kept.iter().map(|i| facts.gpus[*i].clone()).collect(),
        ..facts.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::ComputeCapability;

    fn g(cc: &str) -> GpuFact {
        GpuFact {
            name: None,
            compute_capability: cc.parse::<ComputeCapability>().unwrap(),
        }
    }

    #[test]
    fn the_newest_gpu_is_kept_and_others_join_when_covered() {
        let gpus = [g("3.5"), g("12.0"), g("8.6")];
        // A "toolkit" covering 5.0 – 12.0.
        let covers = |s: &[&GpuFact]| {
            s.iter().all(|x| {
                x.compute_capability >= "5.0".parse().unwrap()
                    && x.compute_capability <= "12.0".parse().unwrap()
            })
        };
        assert_eq!(kept(&gpus, covers), vec![1, 2]);
        assert_eq!(visible(&[1, 2]), "1,2");
        // Everything covered: all kept.
        assert_eq!(kept(&gpus, |_| true), vec![0, 1, 2]);
        // Nothing covers anything: none kept.
        assert!(kept(&gpus, |_| false).is_empty());
    }
}
