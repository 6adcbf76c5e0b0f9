//! PyPI's simple API (or a mirror's): the newest release of `nvidia-cudnn-cu13` and
//! friends, and torch releases newer than the tables. JSON (PEP 691) when the server
//! offers it, else the PEP 503 HTML page.
//!
//! A torch release is learned from PyPI alone when PyTorch's own index cannot be read
//! (from many networks in China): the `torch` page lists its wheels (CPython tags,
//! platforms, `requires-python`) and, with PEP 658/714, each wheel's core metadata as
//! `<wheel URL>.metadata`, whose `Requires-Dist` pins name the CUDA the Linux wheel is
//! built for and show whether the Windows wheel needs CUDA at all (PyPI's is a CPU
//! build). Which CUDA variants PyTorch's index carries is not on PyPI.

use serde::{Deserialize, Serialize};

use crate::pypi::index::DistFile;
use crate::version::Version;

/// The projects whose newest release is reported.
pub const PACKAGES: [&str; 3] = ["nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "nvidia-cuda-nvcc"];

pub const ACCEPT: &str = "application/vnd.pypi.simple.v1+json, text/html;q=0.1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LivePackage {
    pub name: String,
    /// The newest final release (pre-releases and odd versions are skipped).
    pub newest: Option<Version>,
}

/// The newest final release among a project page's wheels. The page is read by the
/// wheels method's index client (PEP 691 JSON or PEP 503 HTML).
pub fn newest(body: &str, project: &str) -> Result<Option<Version>, String> {
    let files = crate::pypi::index::parse_page("http://index.invalid/", "", body)?;
    let want = crate::pypi::index::normalize(project);
    // PEP 700's `versions` list names releases even when `files` is trimmed.
    let listed: Vec<String> = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["versions"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect();
    Ok(files
        .iter()
        .filter_map(|f| crate::pypi::index::WheelName::parse(&f.filename))
        .filter(|w| w.dist == want)
        .map(|w| w.version.to_string())
        .chain(listed)
        // Pre-releases and versions past four parts are not ours to recommend.
        .filter_map(|v| v.parse::<Version>().ok())
        .max())
}

/// The project PyPI publishes PyTorch as.
pub const TORCH: &str = "torch";
/// At most this many torch lines newer than the tables are learned per run.
pub const MAX_TORCH_LINES: usize = 3;

/// What PyPI says about one torch line (`2.16`) the tables do not have.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveTorch {
    /// The line, `MAJOR.MINOR`.
    pub version: Version,
    /// Its final releases with x86-64 wheels, ascending (`2.16.0`, `2.16.1`).
    pub patches: Vec<Version>,
    /// CPython versions (`MAJOR.MINOR`) with an x86-64 wheel of the newest patch that its
    /// `Requires-Python` allows; free-threaded builds aside.
    pub pythons: Vec<Version>,
    /// The platform tags of those wheels (`manylinux_2_28_x86_64`, `win_amd64`).
    pub platforms: Vec<String>,
    /// Free-threaded CPythons with an x86-64 wheel (`cp314t`), each with the patches
    /// that have one: that ABI's wheels are a set apart (#32). Absent in older caches.
    #[serde(default)]
    pub free_threaded: Vec<FreeThreadedWheels>,
    /// The newest patch's `Requires-Python` (its metadata's, else the page's).
    pub requires_python: Option<String>,
    /// The newest patch's Linux x86-64 wheel's metadata; None: not offered or not read.
    pub linux: Option<WheelMetadata>,
    /// The same for its win_amd64 wheel.
    pub windows: Option<WheelMetadata>,
}

/// The patches of a torch line with wheels for one free-threaded CPython.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FreeThreadedWheels {
    /// `MAJOR.MINOR` (`3.14`: the `cp314t` wheels).
    pub python: Version,
    /// Ascending.
    pub patches: Vec<Version>,
}

/// What one wheel's core metadata says about CUDA.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WheelMetadata {
    /// The `.metadata` file read.
    pub url: String,
    /// Requirements on CUDA packages (`nvidia-*`, `cuda-*`) that apply to the wheel's
    /// OS, markers left off (`cuda-toolkit[cublas,cudart]==13.2.2`). Empty: the wheel
    /// needs no CUDA, a CPU build.
    pub cuda_packages: Vec<String>,
    /// The CUDA the wheel is built for, from its pin of `cuda-toolkit` or of the CUDA
    /// runtime (`13.2.2` → 13.2); None when it pins neither.
    pub cuda: Option<Version>,
}

impl WheelMetadata {
    /// From a metadata file's `Requires-Dist` lines, for `os`.
    pub fn from_requires(url: &str, requires: &[String], os: crate::compat::Os) -> WheelMetadata {
        let mut cuda_packages = Vec::new();
        let mut toolkit = None;
        let mut runtime = None;
        for r in requires {
            let (req, marker) = r.split_once(';').unwrap_or((r, ""));
            if !marker_applies(marker, os) {
                continue;
            }
            let req = req.trim();
            let end = req
                .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
                .unwrap_or(req.len());
            let name = crate::pypi::index::normalize(&req[..end]);
            if !(name.starts_with("nvidia-") || name.starts_with("cuda-")) {
                continue;
            }
            cuda_packages.push(req.to_string());
            let pinned = pin(req).map(|v| v.major_minor());
            if name == "cuda-toolkit" {
                toolkit = toolkit.or(pinned);
            } else if name == "nvidia-cuda-runtime" || name.starts_with("nvidia-cuda-runtime-cu") {
                runtime = runtime.or(pinned);
            }
        }
        WheelMetadata {
            url: url.to_string(),
            cuda_packages,
            cuda: toolkit.or(runtime),
        }
    }
}

/// `X==13.2.2` → 13.2.2 (`===` and wildcards are no pin).
fn pin(req: &str) -> Option<Version> {
    let (_, rest) = req.split_once("==")?;
    if rest.starts_with('=') {
        return None;
    }
    let v: String = rest
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let after = rest.trim()[v.len()..].trim_start();
    if !(after.is_empty() || after.starts_with(',') || after.starts_with(')')) {
        return None;
    }
    v.trim_end_matches('.').parse().ok()
}

/// Whether a PEP 508 marker can hold on `os` x86-64. Only the OS tests are read
/// (`platform_system`, `sys_platform`, `os_name`); anything else is taken to hold.
pub(super) fn marker_applies(marker: &str, os: crate::compat::Os) -> bool {
    use crate::compat::Os;
    let m = marker.replace('\'', "\"").to_ascii_lowercase();
    let (mine, others): (&[&str], &[&str]) = match os {
        Os::Linux => (
            &["platform_system==\"linux\"", "sys_platform==\"linux\""],
            &[
                "platform_system==\"windows\"",
                "sys_platform==\"win32\"",
                "os_name==\"nt\"",
                "platform_system==\"darwin\"",
                "sys_platform==\"darwin\"",
                "platform_system!=\"linux\"",
                "sys_platform!=\"linux\"",
            ],
        ),
        Os::Windows => (
            &[
                "platform_system==\"windows\"",
                "sys_platform==\"win32\"",
                "os_name==\"nt\"",
            ],
            &[
                "platform_system==\"linux\"",
                "sys_platform==\"linux\"",
                "platform_system==\"darwin\"",
                "sys_platform==\"darwin\"",
                "os_name==\"posix\"",
                "platform_system!=\"windows\"",
                "sys_platform!=\"win32\"",
            ],
        ),
    };
    // `A or B`: holds when either side can; an OS test for another OS rules out the
    // side it is in.
    m.split(" or ").any(|side| {
        let side: String = side.chars().filter(|c| !c.is_whitespace()).collect();
        mine.iter().any(|t| side.contains(t)) || !others.iter().any(|t| side.contains(t))
    })
}

/// The files a `torch` project page lists (PEP 691 JSON or PEP 503 HTML), read by the
/// wheels method's index client with the attributes pip reads: `requires-python`, core
/// metadata (its [`DistFile::metadata_url`]), yanked. A link that is not http(s) refuses
/// the page.
pub fn page_files(page_url: &str, body: &str) -> Result<Vec<DistFile>, String> {
    let files = crate::pypi::index::parse_any(page_url, "", body)?;
    if let Some(f) = files
        .iter()
        .find(|f| !(f.url.starts_with("http://") || f.url.starts_with("https://")))
    {
        return Err(format!("{}: not an http(s) address", f.url));
    }
    Ok(files)
}

/// A torch line to learn: what the page says, and the wheels whose metadata to read.
#[derive(Debug, Clone)]
pub struct TorchPlan {
    pub live: LiveTorch,
    /// The newest patch's Linux x86-64 wheel offering core metadata.
    pub linux_wheel: Option<DistFile>,
    pub windows_wheel: Option<DistFile>,
}

/// The torch lines above `newest` that the page lists final x86-64 wheels of, the
/// newest [`MAX_TORCH_LINES`]. A page with no torch wheel at all is not a torch page.
pub fn torch_plan(files: &[DistFile], newest: Option<&Version>) -> Result<Vec<TorchPlan>, String> {
    use std::collections::BTreeMap;
    let wheels: Vec<(&DistFile, crate::compat::Wheel)> = files
        .iter()
        .filter(|f| f.filename.starts_with("torch-") && f.filename.ends_with(".whl"))
        .filter_map(|f| Some((f, super::torch_index::wheel(&f.filename, "")?)))
        .collect();
    if !files
        .iter()
        .any(|f| f.filename.starts_with("torch-") && f.filename.ends_with(".whl"))
    {
        return Err("lists no torch wheels (not the torch project page?)".into());
    }
    let mut lines: BTreeMap<Version, Vec<&(&DistFile, crate::compat::Wheel)>> = BTreeMap::new();
    for w in &wheels {
        // Versions past three parts (`2.16.0.1`) are no torch release of ours.
        if w.0.yanked || w.1.version.parts().len() > 3 {
            continue;
        }
        let line = w.1.version.major_minor();
        if newest.is_none_or(|n| line > *n) {
            lines.entry(line).or_default().push(w);
        }
    }
    let skip = lines.len().saturating_sub(MAX_TORCH_LINES);
    let mut plans = Vec::new();
    for (line, ws) in lines.into_iter().skip(skip) {
        let mut patches: Vec<Version> = ws.iter().map(|w| w.1.version.clone()).collect();
        patches.sort();
        patches.dedup();
        let newest_patch = patches.last().expect("a line has a wheel").clone();
        let of_newest: Vec<_> = ws.iter().filter(|w| w.1.version == newest_patch).collect();
        let requires_python = of_newest.iter().find_map(|w| w.0.requires_python.clone());
        // The `cpXYt` wheels, read from the file names: which patches each ABI has.
        let mut free: BTreeMap<Version, Vec<Version>> = BTreeMap::new();
        for w in ws.iter().filter(|w| w.1.freethreaded) {
            free.entry(w.1.python.clone())
                .or_default()
                .push(w.1.version.clone());
        }
        let free_threaded = free
            .into_iter()
            .map(|(python, mut patches)| {
                patches.sort();
                patches.dedup();
                FreeThreadedWheels { python, patches }
            })
            .collect();
        let mut plan = TorchPlan {
            live: LiveTorch {
                version: line,
                patches,
                pythons: Vec::new(),
                platforms: Vec::new(),
                free_threaded,
                requires_python,
                linux: None,
                windows: None,
            },
            linux_wheel: None,
            windows_wheel: None,
        };
        for os in [crate::compat::Os::Linux, crate::compat::Os::Windows] {
            let pick = of_newest
                .iter()
                .filter(|w| w.1.for_os(os) && !w.1.freethreaded && w.0.metadata.is_some())
                .max_by_key(|w| w.1.python.clone())
                .map(|w| w.0.clone());
            match os {
                crate::compat::Os::Linux => plan.linux_wheel = pick,
                crate::compat::Os::Windows => plan.windows_wheel = pick,
            }
        }
        settle_pythons(&mut plan.live, of_newest.iter().map(|w| &w.1));
        plans.push(plan);
    }
    Ok(plans)
}

/// Fills `pythons` and `platforms` from the newest patch's wheels, keeping the CPython
/// versions `requires_python` allows.
pub fn settle_pythons<'a>(
    live: &mut LiveTorch,
    wheels: impl Iterator<Item = &'a crate::compat::Wheel>,
) {
    let allowed = |py: &Version| {
        live.requires_python
            .as_deref()
            .is_none_or(|spec| python_allowed(spec, py))
    };
    let mut pythons = Vec::new();
    let mut platforms = Vec::new();
    for w in wheels {
        if w.freethreaded || !allowed(&w.python) {
            continue;
        }
        pythons.push(w.python.clone());
        platforms.push(w.platform.clone());
    }
    pythons.sort();
    pythons.dedup();
    platforms.sort();
    platforms.dedup();
    live.pythons = pythons;
    live.platforms = platforms;
}

/// Whether CPython `py` (`MAJOR.MINOR`) meets a `Requires-Python` specifier
/// (`>=3.11`, `>=3.10,<3.16`, `~=3.11`). Clauses not understood are taken to hold.
pub fn python_allowed(spec: &str, py: &Version) -> bool {
    spec.split(',').all(|clause| {
        let c = clause.trim();
        let (op, v) = match ["~=", ">=", "<=", "==", "!=", ">", "<"]
            .iter()
            .find(|op| c.starts_with(**op))
        {
            Some(op) => (*op, c[op.len()..].trim()),
            None => return true,
        };
        let wildcard = v.ends_with(".*");
        let Ok(v) = v.trim_end_matches(".*").parse::<Version>() else {
            return true;
        };
        // CPython is named by MAJOR.MINOR; `3.11.2` compares as its MAJOR.MINOR for `>=`
        // (3.11 wheels serve 3.11.2), and any later patch for `<`.
        let vm = v.major_minor();
        match op {
            ">=" | "~=" => *py >= vm,
            ">" => *py > v || (*py == vm && v.parts().len() > 2),
            "<" => *py < vm || (*py == vm && v.parts().iter().skip(2).any(|p| *p > 0)),
            "<=" => *py <= vm,
            "==" if wildcard => *py == vm,
            "==" => *py == vm,
            "!=" if wildcard => *py != vm,
            _ => true,
        }
    })
}

/// A core metadata file's `Requires-Python` and `Requires-Dist` lines. It must name
/// project `torch` at `version`, or it is not the file asked for.
pub fn parse_metadata(
    text: &str,
    version: &Version,
) -> Result<(Option<String>, Vec<String>), String> {
    parse_metadata_of(text, TORCH, version)
}

/// [`parse_metadata`] for project `project` (as PyPI normalises it).
pub fn parse_metadata_of(
    text: &str,
    project: &str,
    version: &Version,
) -> Result<(Option<String>, Vec<String>), String> {
    let mut fields: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            // The body (the long description) follows the first blank line.
            break;
        }
        if line.starts_with([' ', '\t']) {
            if let Some(last) = fields.last_mut() {
                last.1.push(' ');
                last.1.push_str(line.trim());
                continue;
            }
            return Err("starts with a continuation line (not a core metadata file)".into());
        }
        let Some((k, v)) = line.split_once(':') else {
            return Err(format!("line `{}` is not `Field: value`", short(line)));
        };
        fields.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let get = |k: &str| fields.iter().find(|f| f.0 == k).map(|f| f.1.as_str());
    if get("metadata-version").is_none() {
        return Err("has no Metadata-Version (not a core metadata file)".into());
    }
    let name = get("name").unwrap_or_default();
    if crate::pypi::index::normalize(name) != project {
        return Err(format!(
            "is the metadata of `{}`, not {project}",
            short(name)
        ));
    }
    let v = get("version").unwrap_or_default();
    if v.parse::<Version>().ok().as_ref() != Some(version) {
        return Err(format!(
            "is the metadata of {project} {}, not {version}",
            short(v)
        ));
    }
    let requires = fields
        .iter()
        .filter(|f| f.0 == "requires-dist")
        .map(|f| f.1.clone())
        .collect();
    Ok((get("requires-python").map(str::to_string), requires))
}

fn short(s: &str) -> String {
    s.chars().take(60).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn json_and_html_pages() {
        let json = r#"{"meta":{"api-version":"1.1"},"name":"nvidia-cudnn-cu13","versions":["9.26.0.51","9.27.0.42"],
          "files":[{"filename":"nvidia_cudnn_cu13-9.27.0.42-py3-none-win_amd64.whl","url":"x","hashes":{}},
                   {"filename":"nvidia_cudnn_cu13-9.26.0.51-py3-none-manylinux_2_27_x86_64.whl","url":"x","hashes":{}}]}"#;
        assert_eq!(
            newest(json, "nvidia-cudnn-cu13")
                .unwrap()
                .unwrap()
                .to_string(),
            "9.27.0.42"
        );
        let html = r#"<html><body><a href="https://x/nvidia_cudnn_cu13-9.26.0.51-py3-none-win_amd64.whl#sha256=1">nvidia_cudnn_cu13-9.26.0.51-py3-none-win_amd64.whl</a>
<a href="https://x/nvidia_cudnn_cu13-9.27.0.42-py3-none-manylinux_2_27_x86_64.whl#sha256=2">x</a>
<a href="https://x/nvidia_cudnn_cu13-9.28.0.1rc1-py3-none-win_amd64.whl">rc</a></body></html>"#;
        assert_eq!(
            newest(html, "nvidia-cudnn-cu13")
                .unwrap()
                .unwrap()
                .to_string(),
            "9.27.0.42"
        );
        assert!(newest("garbage", "nvidia-cudnn-cu13").is_err());
    }

    /// torch 2.16.0's Linux wheel metadata as PyPI serves it (dossier §11's 2.15.0 pins,
    /// the version made up).
    pub(crate) const LINUX_216: &str = "Metadata-Version: 2.4
Name: torch
Version: 2.16.0
Summary: Tensors and Dynamic neural networks in Python with strong GPU acceleration
Requires-Python: >=3.11
Requires-Dist: filelock
Requires-Dist: typing-extensions>=4.10.0
Requires-Dist: cuda-toolkit[cublas,cudart,cufft,nvrtc]==13.2.2; platform_system == \"Linux\"
Requires-Dist: nvidia-cudnn-cu13==9.26.0.51; platform_system == \"Linux\"
Requires-Dist: triton==3.7.0; platform_system == \"Linux\" and platform_machine == \"x86_64\"
Provides-Extra: opt-einsum
Requires-Dist: opt-einsum>=3.3; extra == \"opt-einsum\"

Description: Requires-Dist: nvidia-fake==1.0
";

    #[test]
    fn metadata_pins_name_the_linux_cuda_and_the_windows_wheel_is_cpu() {
        let v: Version = "2.16.0".parse().unwrap();
        let (rp, req) = parse_metadata(LINUX_216, &v).unwrap();
        assert_eq!(rp.as_deref(), Some(">=3.11"));
        assert_eq!(req.len(), 6, "the body is not read: {req:?}");
        let linux = WheelMetadata::from_requires("u", &req, crate::compat::Os::Linux);
        assert_eq!(linux.cuda, Some("13.2".parse().unwrap()));
        assert_eq!(
            linux.cuda_packages,
            vec![
                "cuda-toolkit[cublas,cudart,cufft,nvrtc]==13.2.2",
                "nvidia-cudnn-cu13==9.26.0.51"
            ]
        );
        // The same requirements seen from Windows: none applies, a CPU build.
        let win = WheelMetadata::from_requires("u", &req, crate::compat::Os::Windows);
        assert!(win.cuda_packages.is_empty() && win.cuda.is_none());
        // Older torch pinned the runtime instead of cuda-toolkit.
        let old = WheelMetadata::from_requires(
            "u",
            &["nvidia-cuda-runtime-cu12==12.8.90; platform_system == \"Linux\" and platform_machine == \"x86_64\"".into()],
            crate::compat::Os::Linux,
        );
        assert_eq!(old.cuda, Some("12.8".parse().unwrap()));
        // Not the file asked for.
        assert!(
            parse_metadata(LINUX_216, &"2.16.1".parse().unwrap())
                .unwrap_err()
                .contains("2.16.0")
        );
        assert!(parse_metadata(&LINUX_216.replace("Name: torch", "Name: evil"), &v).is_err());
        assert!(parse_metadata("<html>hello</html>", &v).is_err());
        assert!(parse_metadata("{\"files\": []}", &v).is_err());
    }

    #[test]
    fn markers_and_pins() {
        use crate::compat::Os;
        assert!(marker_applies("", Os::Windows));
        assert!(marker_applies(" sys_platform == 'linux'", Os::Linux));
        assert!(!marker_applies(" sys_platform == 'linux'", Os::Windows));
        assert!(marker_applies(
            "platform_system == \"Windows\" or platform_system == \"Linux\"",
            Os::Linux
        ));
        assert!(!marker_applies(
            "platform_system != \"Windows\"",
            Os::Windows
        ));
        assert!(marker_applies("python_version >= \"3.12\"", Os::Windows));
        assert_eq!(pin("a==13.2.2").unwrap().to_string(), "13.2.2");
        assert_eq!(pin("a==13.2.2, !=1").unwrap().to_string(), "13.2.2");
        assert!(pin("a===13.2.2").is_none());
        assert!(pin("a==13.*").is_none());
        assert!(pin("a>=13.2").is_none());
    }

    #[test]
    fn requires_python() {
        let py = |s: &str| s.parse::<Version>().unwrap();
        assert!(python_allowed(">=3.11", &py("3.11")));
        assert!(!python_allowed(">=3.11", &py("3.10")));
        assert!(python_allowed(">=3.10.2", &py("3.10")));
        assert!(!python_allowed(">=3.10,<3.15", &py("3.15")));
        assert!(python_allowed(">=3.10,<3.15", &py("3.14")));
        assert!(python_allowed("!=3.12.1", &py("3.12")));
        assert!(!python_allowed("!=3.12.*", &py("3.12")));
        assert!(python_allowed("whatever", &py("3.12")));
    }

    fn torch_page_json(extra: &str) -> String {
        let mut files = Vec::new();
        for py in ["310", "311", "312", "313", "314", "315"] {
            for plat in [
                "win_amd64",
                "manylinux_2_28_x86_64",
                "manylinux_2_28_aarch64",
            ] {
                files.push(format!(
                    r#"{{"filename":"torch-2.16.0-cp{py}-cp{py}-{plat}.whl","url":"../../packages/t/torch-2.16.0-cp{py}-cp{py}-{plat}.whl","hashes":{{"sha256":"00"}},"requires-python":">=3.11","core-metadata":{{"sha256":"AB"}}}}"#
                ));
            }
        }
        files.push(r#"{"filename":"torch-2.16.0-cp314-cp314t-manylinux_2_28_x86_64.whl","url":"https://files.example/torch-2.16.0-cp314-cp314t-manylinux_2_28_x86_64.whl","hashes":{}}"#.into());
        files.push(
            r#"{"filename":"torch-2.17.0rc1-cp312-cp312-win_amd64.whl","url":"x.whl","hashes":{}}"#
                .into(),
        );
        files.push(r#"{"filename":"torch-2.13.0-cp312-cp312-win_amd64.whl","url":"x.whl","hashes":{},"data-dist-info-metadata":true}"#.into());
        files.push(r#"{"filename":"torch-2.16.1-cp312-cp312-win_amd64.whl","url":"y.whl","hashes":{},"yanked":"broken"}"#.into());
        files.push(r#"{"filename":"torch-2.16.0.tar.gz","url":"z.tar.gz","hashes":{}}"#.into());
        format!(
            r#"{{"meta":{{"api-version":"1.1"}},"name":"torch","files":[{}{extra}]}}"#,
            files.join(",")
        )
    }

    #[test]
    fn the_torch_page_plans_what_to_learn() {
        let page = "https://mirror.example/simple/torch/";
        let files = page_files(page, &torch_page_json("")).unwrap();
        let two_15: Version = "2.15".parse().unwrap();
        let plans = torch_plan(&files, Some(&two_15)).unwrap();
        assert_eq!(
            plans.len(),
            1,
            "2.13 is older, 2.17rc1 a pre-release, 2.16.1 yanked"
        );
        let p = &plans[0];
        assert_eq!(p.live.version.to_string(), "2.16");
        assert_eq!(p.live.patches, vec!["2.16.0".parse::<Version>().unwrap()]);
        // cp310 wheels exist but Requires-Python >=3.11 rules them out; 3.14t aside.
        let pys: Vec<String> = p.live.pythons.iter().map(ToString::to_string).collect();
        assert_eq!(pys, ["3.11", "3.12", "3.13", "3.14", "3.15"]);
        // The cp314t wheel, apart.
        assert_eq!(
            p.live.free_threaded,
            [FreeThreadedWheels {
                python: "3.14".parse().unwrap(),
                patches: vec!["2.16.0".parse().unwrap()]
            }]
        );
        assert_eq!(p.live.platforms, ["manylinux_2_28_x86_64", "win_amd64"]);
        let lw = p.linux_wheel.as_ref().unwrap();
        assert_eq!(
            lw.metadata_url(),
            "https://mirror.example/packages/t/torch-2.16.0-cp315-cp315-manylinux_2_28_x86_64.whl.metadata"
        );
        assert_eq!(lw.metadata, Some(Some("ab".into())));
        assert!(
            p.windows_wheel
                .as_ref()
                .unwrap()
                .filename
                .ends_with("cp315-win_amd64.whl")
        );
        // Nothing newer: nothing to learn; a page without torch wheels is not torch's.
        assert!(
            torch_plan(&files, Some(&"2.16".parse().unwrap()))
                .unwrap()
                .is_empty()
        );
        let other = page_files(
            page,
            r#"{"files":[{"filename":"numpy-2.0-cp312-cp312-win_amd64.whl","url":"x"}]}"#,
        )
        .unwrap();
        assert!(torch_plan(&other, None).is_err());
        // Hostile pages: clear errors, no panic.
        assert!(
            page_files(page, "{\"files\": 3}")
                .unwrap_err()
                .contains("PEP 691")
        );
        assert!(page_files(page, "{ not json").is_err());
        assert!(page_files(page, "plain text").is_err());
        let bad_link = torch_page_json(
            r#",{"filename":"torch-2.16.0-cp312-cp312-win_amd64.whl","url":"file:///etc/passwd","hashes":{}}"#,
        );
        assert!(page_files(page, &bad_link).unwrap_err().contains("http"));
    }

    #[test]
    fn an_html_mirror_page_offers_the_same() {
        let html = r#"<!DOCTYPE html><html><body><h1>Links for torch</h1>
<a href="../../packages/t/torch-2.16.0-cp311-cp311-manylinux_2_28_x86_64.whl#sha256=00" data-requires-python="&gt;=3.11" data-core-metadata="sha256=CD">torch-2.16.0-cp311-cp311-manylinux_2_28_x86_64.whl</a><br/>
<a href="../../packages/t/torch-2.16.0-cp312-cp312-win_amd64.whl#sha256=00" data-requires-python="&gt;=3.11" data-dist-info-metadata="true">torch-2.16.0-cp312-cp312-win_amd64.whl</a><br/>
<a href="../../packages/t/torch-2.16.0-cp313-cp313-win_amd64.whl#sha256=00" data-requires-python="&gt;=3.11">torch-2.16.0-cp313-cp313-win_amd64.whl</a><br/>
</body></html>"#;
        let files = page_files("https://pypi.tuna.tsinghua.edu.cn/simple/torch/", html).unwrap();
        assert_eq!(files.len(), 3);
        assert_eq!(files[0].requires_python.as_deref(), Some(">=3.11"));
        assert_eq!(files[0].metadata, Some(Some("cd".into())));
        assert_eq!(files[1].metadata, Some(None));
        assert_eq!(files[2].metadata, None);
        let plans = torch_plan(&files, Some(&"2.15".parse().unwrap())).unwrap();
        let p = &plans[0];
        // cp313's Windows wheel offers no metadata: cp312's is read.
        assert!(p.windows_wheel.as_ref().unwrap().filename.contains("cp312"));
        assert_eq!(
            p.linux_wheel.as_ref().unwrap().url,
            "https://pypi.tuna.tsinghua.edu.cn/packages/t/torch-2.16.0-cp311-cp311-manylinux_2_28_x86_64.whl"
        );
    }
}
