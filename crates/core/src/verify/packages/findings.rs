//! The packages' findings, computed purely from the probe, the offer and the table.
//!
//! What a version needs comes, in this order, from the package itself (the CUDA it
//! records of its build: onnxruntime-gpu's `build_and_package_info`, paddle's and
//! TensorFlow's build info; JAX's plugin name), from its own metadata (the nvidia-*
//! wheels its `Requires-Dist` names, `tensorflow[and-cuda]`), else from
//! `gpu-packages.toml`. A version none of them covers gets no rule: the finding says
//! cuda-setup does not know what it needs. A GPU path that loads is fine whatever the
//! table says.

use std::path::Path;

use serde::Serialize;

use super::super::doctor::{Fix, Severity};
use super::super::verdict::Layer;
use super::{GpuLoad, Installed, Offer, PackagesProbe, pip};
use crate::compat::Os;
use crate::compat::gpu_packages::{GpuPackagesFile, release_of};
use crate::message::Message;
use crate::msg;
use crate::version::Version;

/// What a package finding is about, as a type (its `kind` in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PackageFindingKind {
    /// The GPU path loads.
    GpuOk,
    /// No NVIDIA GPU works on this machine: the package runs on the CPU.
    NoGpu,
    /// The package has no GPU on this OS (TensorFlow ≥ 2.11, JAX on native Windows).
    NoGpuOnOs,
    /// The CPU-only build of a package that has a GPU build.
    CpuPackage,
    /// The nvidia-* wheels the package's own extra names are not installed.
    WheelsMissing,
    /// Neither the package nor the tables say what this version needs.
    UnknownVersion,
    /// The driver runs an older CUDA major than the package needs.
    DriverTooOld,
    /// The CUDA major it needs is nowhere this Python looks.
    CudaMissing,
    /// The cuDNN major it needs is nowhere this Python looks.
    CudnnMissing,
    /// What it needs is there, and still the GPU path does not load.
    GpuFailed,
    /// Its GPU path (or the package itself) cannot load: the walk of its native files
    /// names the library missing (`missing_library`).
    LibraryMissing,
    /// A note beside a finding judged on what this version needs: that need was learned
    /// from the release's wheel metadata on PyPI (`tables --refresh`), not from a row a
    /// person checked.
    NeedLearned,
}

impl PackageFindingKind {
    pub fn layer(self) -> Layer {
        use PackageFindingKind::*;
        match self {
            GpuOk => Layer::GpuTest,
            NoGpu | DriverTooOld => Layer::Driver,
            CudaMissing | WheelsMissing => Layer::Toolkit,
            CudnnMissing => Layer::Cudnn,
            NoGpuOnOs | CpuPackage | UnknownVersion | GpuFailed | LibraryMissing | NeedLearned => {
                Layer::Env
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PackageFinding {
    /// The distribution examined (`onnxruntime-gpu`).
    pub package: String,
    pub version: String,
    pub kind: PackageFindingKind,
    pub layer: Layer,
    pub severity: Severity,
    #[serde(flatten)]
    pub message: Message,
    pub fix: Option<Fix>,
    /// The DLL or shared object a failed load misses, when the walk of the package's
    /// native files names it (`libraries.rs`; the chain is in the details).
    pub missing_library: Option<String>,
}

/// Everything the findings are computed from.
pub struct Context<'a> {
    pub os: Os,
    pub python: &'a Path,
    pub probe: &'a PackagesProbe,
    pub offer: &'a Offer,
    pub table: &'a GpuPackagesFile,
    /// The highest CUDA the driver runs (NVML's figure).
    pub driver_cuda: Option<&'a Version>,
    /// An NVIDIA GPU works on this machine.
    pub has_gpu: bool,
}

/// What one version needs, and whether that is sure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Need {
    cuda: Option<u32>,
    cudnn: Option<u32>,
    /// False only for an unconfirmed table row: its findings are notes, not problems.
    confirmed: bool,
}

/// The first run of digits after `from` in `s`.
fn digits_after(s: &str, from: usize) -> Option<u32> {
    let rest = &s[from..];
    let start = rest.find(|c: char| c.is_ascii_digit())?;
    let d: String = rest[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    d.parse().ok()
}

/// The nvidia-* wheel a `Requires-Dist` line names (`nvidia-cudnn-cu12==9.3.0.75; extra
/// == "and-cuda"`): its name, the extra it belongs to, and the CUDA and cuDNN majors it
/// pins.
struct Requirement {
    name: String,
    extra: Option<String>,
    cuda: Option<u32>,
    cudnn: Option<u32>,
}

fn requirement(line: &str) -> Option<Requirement> {
    let (spec, marker) = line.split_once(';').unwrap_or((line, ""));
    let spec = spec.trim();
    let end = spec
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'))
        .unwrap_or(spec.len());
    let name = spec[..end].to_ascii_lowercase().replace('_', "-");
    if !name.starts_with("nvidia-") {
        return None;
    }
    let extra = marker.split_once("extra").and_then(|(_, r)| {
        let q = r.find(['"', '\''])?;
        let r = &r[q + 1..];
        Some(r[..r.find(['"', '\''])?].to_string())
    });
    let pinned = digits_after(spec, end);
    let (base, suffix) = super::offer::split_cu(&name);
    let (cuda, cudnn) = if base == "nvidia-cudnn" {
        (suffix, pinned)
    } else if base == "nvidia-cublas" || base == "nvidia-cuda-runtime" {
        (suffix.or(pinned), None)
    } else {
        (suffix, None)
    };
    Some(Requirement {
        name,
        extra,
        cuda,
        cudnn,
    })
}

#[cfg(test)]
pub(super) type RequirementMajors = (String, Option<String>, Option<u32>, Option<u32>);

/// [`requirement`] as plain values, for tests: (name, extra, CUDA, cuDNN).
#[cfg(test)]
pub(super) fn requirement_majors(line: &str) -> Option<RequirementMajors> {
    requirement(line).map(|r| (r.name, r.extra, r.cuda, r.cudnn))
}

fn major_of(s: Option<&str>) -> Option<u32> {
    s.and_then(release_of).map(|v| v.major())
}

/// What `p` needs: the package's own word first, then the table's.
fn need(cx: &Context, p: &Installed, rule_name: &str, check: Option<&GpuLoad>) -> Need {
    let reqs: Vec<Requirement> = p.requires.iter().filter_map(|l| requirement(l)).collect();
    let meta_cuda = reqs.iter().find_map(|r| r.cuda);
    let meta_cudnn = reqs.iter().find_map(|r| r.cudnn);
    let build_cuda = p
        .build
        .as_ref()
        .and_then(|b| major_of(b.cuda_version.as_deref()))
        .or_else(|| check.and_then(|c| major_of(c.build_cuda.as_deref())));
    let build_cudnn = check.and_then(|c| major_of(c.build_cudnn.as_deref()));
    let row = release_of(&p.version).and_then(|v| cx.table.needs(rule_name, &v, cx.os));
    let cuda = build_cuda.or(meta_cuda);
    let cudnn = build_cudnn.or(meta_cudnn);
    match row {
        // The row only fills what the package leaves unsaid, and only for its own CUDA.
        // A row learned from this release's wheel metadata is the package's own word.
        Some(r) if cuda.is_none_or(|c| c == r.cuda) => Need {
            cuda: Some(r.cuda),
            cudnn: cudnn.or(r.cudnn),
            confirmed: r.confirmed || r.fetched() || cuda.is_some(),
        },
        _ => Need {
            cuda,
            cudnn,
            confirmed: true,
        },
    }
}

fn finding(
    p: &Installed,
    kind: PackageFindingKind,
    severity: Severity,
    message: Message,
    fix: Option<Fix>,
) -> PackageFinding {
    PackageFinding {
        package: p.name.clone(),
        version: p.version.clone(),
        kind,
        layer: kind.layer(),
        severity,
        message,
        fix,
        missing_library: None,
    }
}

fn fix(message: Message, commands: Vec<String>) -> Option<Fix> {
    Some(Fix { message, commands })
}

/// The GPU check's own words, for the details.
fn error_text(check: Option<&GpuLoad>) -> String {
    match check {
        None => "no answer from the GPU check".into(),
        Some(c) => {
            let mut parts: Vec<&str> = Vec::new();
            if let Some(e) = &c.error {
                parts.push(e);
            }
            if let Some(d) = &c.detail {
                parts.push(d);
            }
            if let Some(o) = &c.output {
                parts.push(o);
            }
            if parts.is_empty() {
                "the GPU check gave no reason".into()
            } else {
                parts.join("\n")
            }
        }
    }
}

/// How the GPU path showed it works (API names: technical tokens).
fn how(check_name: &str, c: &GpuLoad) -> String {
    let n = c.devices.unwrap_or(0);
    match check_name {
        "onnxruntime" => "CUDAExecutionProvider".into(),
        "ctranslate2" => match c.loaded.as_deref() {
            Some(names) if !names.is_empty() => format!(
                "ctranslate2.get_cuda_device_count() = {n}; {} loaded",
                names.join(", ")
            ),
            _ => format!("ctranslate2.get_cuda_device_count() = {n}"),
        },
        "paddle" => "paddle.utils.run_check()".into(),
        "tensorflow" => format!("tf.config.list_physical_devices('GPU') = {n}"),
        _ => format!("jax.devices(): {n} gpu"),
    }
}

/// One GPU package: `p` installed, judged under the table's `rule_name`, its GPU path
/// tried as `check_name`.
fn gpu_package(
    cx: &Context,
    out: &mut Vec<PackageFinding>,
    p: &Installed,
    rule_name: &str,
    check_name: &str,
    forced: Option<Need>,
) {
    use PackageFindingKind::*;
    use Severity::{Info, Ok as Good, Problem};
    if !cx.has_gpu {
        out.push(finding(
            p,
            NoGpu,
            Info,
            msg!("pkg_no_gpu", package = &p.name, version = &p.version),
            None,
        ));
        return;
    }
    let version = release_of(&p.version);
    if let Some(v) = &version
        && cx.table.no_gpu(rule_name, v, cx.os).is_some()
    {
        // A version made for this OS with a GPU, when the table has one.
        let older = cx
            .table
            .needs
            .iter()
            .filter(|n| n.package == rule_name && n.confirmed && n.os == Some(cx.os))
            .max_by(|a, b| a.versions.lower.cmp(&b.versions.lower));
        let f = match older {
            Some(r) => fix(
                msg!(
                    "fix_pkg_wsl2_or_version",
                    package = rule_name,
                    spec = &r.versions,
                    cuda = r.cuda,
                    cudnn = r.cudnn.map_or("?".into(), |c| c.to_string())
                ),
                vec![pip(
                    cx.python,
                    &format!("install \"{rule_name}{}\"", r.versions.pip_spec()),
                )],
            ),
            None => fix(msg!("fix_pkg_wsl2"), Vec::new()),
        };
        out.push(finding(
            p,
            NoGpuOnOs,
            Problem,
            msg!(
                "pkg_no_gpu_on_windows",
                package = &p.name,
                version = &p.version
            ),
            f,
        ));
        return;
    }
    let check = cx.probe.checks.get(check_name);
    if let Some(c) = check.filter(|c| c.ok) {
        out.push(finding(
            p,
            GpuOk,
            Good,
            msg!(
                "pkg_gpu_ok",
                package = &p.name,
                version = &p.version,
                how = how(check_name, c)
            ),
            None,
        ));
        return;
    }
    let detail = error_text(check);
    // The nvidia-* wheels the package's own extras name, not installed.
    let installed = |name: &str| cx.probe.nvidia.iter().any(|w| w.name == name);
    let missing: Vec<Requirement> = p
        .requires
        .iter()
        .filter_map(|l| requirement(l))
        .filter(|r| r.extra.is_some() && !installed(&r.name))
        .collect();
    if !missing.is_empty() {
        let mut extras: Vec<&str> = missing.iter().filter_map(|r| r.extra.as_deref()).collect();
        extras.dedup();
        let names: Vec<&str> = missing.iter().map(|r| r.name.as_str()).collect();
        out.push(finding(
            p,
            WheelsMissing,
            Problem,
            msg!(
                "pkg_wheels_missing",
                package = &p.name,
                version = &p.version,
                missing = names.join(", ")
            )
            .with("detail", &detail),
            fix(
                msg!("fix_pkg_install_extra", package = &p.name),
                vec![pip(
                    cx.python,
                    &format!(
                        "install \"{}[{}]=={}\"",
                        p.name,
                        extras.join(","),
                        p.version
                    ),
                )],
            ),
        ));
        return;
    }
    let need = forced.unwrap_or_else(|| need(cx, p, rule_name, check));
    let Some(cuda) = need.cuda else {
        out.push(finding(
            p,
            UnknownVersion,
            Problem,
            msg!(
                "pkg_unknown_version",
                package = &p.name,
                version = &p.version
            )
            .with("detail", &detail),
            None,
        ));
        return;
    };
    let severity = if need.confirmed { Problem } else { Info };
    if let Some(d) = cx.driver_cuda
        && d.major() < cuda
    {
        out.push(finding(
            p,
            DriverTooOld,
            severity,
            msg!(
                "pkg_driver_too_old",
                package = &p.name,
                version = &p.version,
                cuda = cuda,
                driver_cuda = d
            )
            .with("detail", &detail),
            fix(msg!("fix_pkg_driver", cuda = cuda), Vec::new()),
        ));
        return;
    }
    if !cx.offer.has_cuda(cuda) {
        let offered: Vec<String> = cx.offer.cuda.iter().map(|o| o.describe()).collect();
        let message = if offered.is_empty() {
            msg!(
                "pkg_cuda_none",
                package = &p.name,
                version = &p.version,
                cuda = cuda
            )
        } else {
            msg!(
                "pkg_cuda_missing",
                package = &p.name,
                version = &p.version,
                cuda = cuda,
                offered = offered.join(", ")
            )
        };
        // The version of this package made for a CUDA the machine has, newest CUDA first.
        let mut majors: Vec<u32> = cx.offer.cuda.iter().map(|o| o.major).collect();
        majors.sort_unstable_by(|a, b| b.cmp(a));
        let other = majors.iter().find_map(|m| {
            cx.table
                .for_cuda(rule_name, cx.os, *m, None)
                .map(|r| (*m, r))
        });
        let f = match other {
            Some((m, r)) => fix(
                msg!(
                    "fix_pkg_version_for_cuda",
                    package = &p.name,
                    have = m,
                    spec = &r.versions,
                    cuda = cuda
                ),
                vec![pip(
                    cx.python,
                    &format!("install \"{}{}\"", p.name, r.versions.pip_spec()),
                )],
            ),
            None => fix(msg!("fix_pkg_install_cuda", cuda = cuda), Vec::new()),
        };
        out.push(finding(
            p,
            CudaMissing,
            severity,
            message.with("detail", &detail),
            f,
        ));
        return;
    }
    if let Some(cudnn) = need.cudnn
        && !cx.offer.has_cudnn(cudnn, cuda)
    {
        let offered: Vec<String> = cx.offer.cudnn.iter().map(|o| o.describe()).collect();
        let message = if offered.is_empty() {
            msg!(
                "pkg_cudnn_none",
                package = &p.name,
                version = &p.version,
                cuda = cuda,
                cudnn = cudnn
            )
        } else {
            msg!(
                "pkg_cudnn_missing",
                package = &p.name,
                version = &p.version,
                cuda = cuda,
                cudnn = cudnn,
                offered = offered.join(", ")
            )
        };
        out.push(finding(
            p,
            CudnnMissing,
            severity,
            message.with("detail", &detail),
            fix(
                msg!("fix_pkg_cudnn", cuda = cuda, cudnn = cudnn),
                vec![pip(
                    cx.python,
                    &format!("install \"nvidia-cudnn-cu{cuda}=={cudnn}.*\""),
                )],
            ),
        ));
        return;
    }
    out.push(gpu_failed(p, need, cuda, &detail));
}

/// Everything it needs is there and the GPU path still does not load.
fn gpu_failed(p: &Installed, need: Need, cuda: u32, detail: &str) -> PackageFinding {
    finding(
        p,
        PackageFindingKind::GpuFailed,
        Severity::Problem,
        msg!(
            "pkg_gpu_failed",
            package = &p.name,
            version = &p.version,
            cuda = cuda,
            cudnn = need.cudnn.map_or("-".into(), |c| c.to_string())
        )
        .with("detail", detail),
        None,
    )
}

/// A CPU-only build: say so, and what the GPU build is.
fn cpu_package(cx: &Context, out: &mut Vec<PackageFinding>, p: &Installed, gpu_name: &str) {
    let commands = match gpu_name {
        "onnxruntime-gpu" => vec![
            pip(cx.python, "uninstall -y onnxruntime"),
            pip(cx.python, "install onnxruntime-gpu"),
        ],
        _ => Vec::new(),
    };
    out.push(finding(
        p,
        PackageFindingKind::CpuPackage,
        Severity::Info,
        msg!("pkg_cpu_package", package = &p.name, version = &p.version),
        fix(
            msg!("fix_pkg_gpu_package", gpu_package = gpu_name),
            commands,
        ),
    ));
}

/// The findings, one or more per GPU package installed, in a fixed order.
pub fn findings(cx: &Context) -> Vec<PackageFinding> {
    let mut out = Vec::new();
    let probe = cx.probe;
    let get = |n: &str| probe.installed(n);

    // onnxruntime: the GPU wheel, else the CPU one.
    if let Some(p) = get("onnxruntime-gpu") {
        gpu_package(cx, &mut out, p, "onnxruntime-gpu", "onnxruntime", None);
    } else if let Some(p) = get("onnxruntime") {
        cpu_package(cx, &mut out, p, "onnxruntime-gpu");
    }
    if let Some(p) = get("onnxruntime-gpu") {
        learned_note(cx, &mut out, p, "onnxruntime-gpu", "onnxruntime");
    }
    // CTranslate2 (faster-whisper's engine): one wheel for CPU and GPU.
    if let Some(p) = get("ctranslate2") {
        gpu_package(cx, &mut out, p, "ctranslate2", "ctranslate2", None);
        learned_note(cx, &mut out, p, "ctranslate2", "ctranslate2");
    }
    // PaddlePaddle: its build says what it needs (paddle.version.cuda()).
    if let Some(p) = get("paddlepaddle-gpu") {
        gpu_package(cx, &mut out, p, "paddlepaddle-gpu", "paddle", None);
    } else if let Some(p) = get("paddlepaddle") {
        cpu_package(cx, &mut out, p, "paddlepaddle-gpu");
    }
    // TensorFlow: `tensorflow` (on Windows it pulls `tensorflow-intel`), or the CPU one.
    if let Some(p) = get("tensorflow").or_else(|| get("tensorflow-intel")) {
        gpu_package(cx, &mut out, p, "tensorflow", "tensorflow", None);
    } else if let Some(p) = get("tensorflow-cpu") {
        cpu_package(cx, &mut out, p, "tensorflow");
    }
    // JAX: the GPU comes with a `jax-cudaNN-plugin` wheel, whose name is its CUDA major.
    if let Some(p) = get("jaxlib") {
        let plugin = jax_plugin(probe);
        let on_windows =
            release_of(&p.version).is_some_and(|v| cx.table.no_gpu("jaxlib", &v, cx.os).is_some());
        match plugin {
            Some(cuda) if !on_windows => gpu_package(
                cx,
                &mut out,
                p,
                "jaxlib",
                "jax",
                Some(Need {
                    cuda: Some(cuda),
                    cudnn: None,
                    confirmed: true,
                }),
            ),
            _ if on_windows => gpu_package(cx, &mut out, p, "jaxlib", "jax", None),
            _ => cpu_package(cx, &mut out, p, "jax[cuda12] / jax[cuda13]"),
        }
    }
    out
}

/// After the finding for `p`: when it was judged on what this version needs and that
/// need is a row `refresh` learned from PyPI's wheel metadata, a note saying so, with the
/// metadata file and when it was read.
fn learned_note(
    cx: &Context,
    out: &mut Vec<PackageFinding>,
    p: &Installed,
    rule_name: &str,
    check_name: &str,
) {
    use PackageFindingKind::*;
    let judged = out.last().is_some_and(|f| {
        f.package == p.name
            && matches!(
                f.kind,
                DriverTooOld | CudaMissing | CudnnMissing | GpuFailed
            )
    });
    let Some(row) = release_of(&p.version).and_then(|v| cx.table.needs(rule_name, &v, cx.os))
    else {
        return;
    };
    let crate::compat::Origin::Fetched { fetched_at, .. } = &row.origin else {
        return;
    };
    // The row counted only where it agreed with what the package says of itself.
    if !judged || need(cx, p, rule_name, cx.probe.checks.get(check_name)).cuda != Some(row.cuda) {
        return;
    }
    out.push(finding(
        p,
        NeedLearned,
        Severity::Info,
        msg!(
            "pkg_need_from_pypi",
            package = &p.name,
            version = &p.version,
            cuda = row.cuda,
            cudnn = row.cudnn.map_or("?".into(), |c| c.to_string()),
            at = crate::compat::utc(*fetched_at)
        )
        .with("source", &row.source),
        None,
    ));
}

/// The CUDA major of the `jax-cudaNN-plugin` wheel installed, if any.
fn jax_plugin(probe: &PackagesProbe) -> Option<u32> {
    probe.packages.iter().find_map(|q| {
        let n = q.name.strip_prefix("jax-cuda")?;
        let (major, kind) = n.split_once('-')?;
        (kind == "plugin").then(|| major.parse::<u32>().ok())?
    })
}

/// The table's rule and the probe's check for a GPU distribution.
pub(super) fn rule_and_check(package: &str) -> Option<(&'static str, &'static str)> {
    Some(match package {
        "onnxruntime-gpu" => ("onnxruntime-gpu", "onnxruntime"),
        "ctranslate2" => ("ctranslate2", "ctranslate2"),
        "paddlepaddle-gpu" => ("paddlepaddle-gpu", "paddle"),
        "tensorflow" | "tensorflow-intel" => ("tensorflow", "tensorflow"),
        "jaxlib" => ("jaxlib", "jax"),
        _ => return None,
    })
}

/// The CUDA and cuDNN majors `p` needs, as its findings judge it (None: unknown).
pub(super) fn needs_of(cx: &Context, p: &Installed) -> (Option<u32>, Option<u32>) {
    let Some((rule, check)) = rule_and_check(&p.name) else {
        return (None, None);
    };
    let n = need(cx, p, rule, cx.probe.checks.get(check));
    (n.cuda, n.cudnn)
}

/// The CUDA major `p` needs, as its findings judged it (None: unknown).
pub(super) fn cuda_needed(cx: &Context, p: &Installed) -> Option<u32> {
    let (rule, check) = rule_and_check(&p.name)?;
    if rule == "jaxlib"
        && let Some(cuda) = jax_plugin(cx.probe)
    {
        return Some(cuda);
    }
    need(cx, p, rule, cx.probe.checks.get(check)).cuda
}
