//! Merging a snapshot into the tables. Rows of the tables always win: a source only adds
//! releases the tables lack (and variants for a torch line that names none). Added rows
//! carry their origin and state no fact their source does not give.

use std::collections::BTreeMap;

use super::{Section, Snapshot};
use crate::compat::{
    CudnnArchive, CudnnCuda, CudnnRelease, FreeThreaded, IndexStyle, Installer, Origin, Os,
    Refreshed, TableError, Tables, ToolkitRelease, TorchRelease, utc,
};
use crate::version::Version;

fn origin<T>(s: &Section<T>, file: &str) -> Origin {
    Origin::Fetched {
        file: file.to_string(),
        fetched_at: s.fetched_at,
        live: s.live,
    }
}

/// `base` plus what `snap` knows that it does not, validated like a table file.
pub fn apply(base: &Tables, snap: &Snapshot) -> Result<Tables, TableError> {
    let mut t = base.clone();
    if let Some(s) = &snap.cuda {
        toolkits(&mut t, s);
    }
    if let Some(s) = &snap.cudnn {
        cudnn(&mut t, s);
    }
    if let Some(s) = &snap.torch {
        torch(&mut t, s);
    }
    if let Some(s) = &snap.pypi_torch {
        pypi_torch(&mut t, s, snap.torch.as_ref());
    }
    if let Some(s) = &snap.gpu_packages {
        gpu_packages(&mut t, s);
    }
    if let Some(s) = &snap.pypi {
        t.live.packages = s
            .items
            .iter()
            .filter_map(|p| Some((p.name.clone(), p.newest.clone()?)))
            .collect();
    }
    let sections = [
        snap.cuda.as_ref().map(|s| (s.fetched_at, s.live)),
        snap.cudnn.as_ref().map(|s| (s.fetched_at, s.live)),
        snap.torch.as_ref().map(|s| (s.fetched_at, s.live)),
        snap.pypi.as_ref().map(|s| (s.fetched_at, s.live)),
        snap.pypi_torch.as_ref().map(|s| (s.fetched_at, s.live)),
        snap.gpu_packages.as_ref().map(|s| (s.fetched_at, s.live)),
    ];
    if let Some((fetched_at, _)) = sections.iter().flatten().max_by_key(|(at, _)| *at) {
        t.live.refreshed = Some(Refreshed {
            fetched_at: *fetched_at,
            at: utc(*fetched_at),
            live: sections.iter().flatten().any(|(_, live)| *live),
        });
    }
    t.validate()?;
    Ok(t)
}

/// The Windows local installer's name by NVIDIA's pattern: 13.0 – 13.3 `cuda_V_windows.exe`,
/// 13.4 on `cuda_V_windows_x86_64.exe`. Before 13 the name holds a driver number no
/// manifest gives, so there is none. The MD5 comes from NVIDIA's md5sum.txt at download.
fn windows_installer(v: &Version) -> Option<String> {
    if v.major() < 13 {
        return None;
    }
    Some(if v.major_minor() >= Version::new(&[13, 4]) {
        format!("cuda_{v}_windows_x86_64.exe")
    } else {
        format!("cuda_{v}_windows.exe")
    })
}

fn installer(file: String) -> Installer {
    Installer {
        file,
        size: None,
        md5: None,
        sha256: None,
        url: None,
    }
}

/// An installer as NVIDIA's md5sum.txt lists it.
fn listed(f: &super::nvidia::LiveFile) -> Installer {
    Installer {
        md5: Some(f.md5.clone()),
        ..installer(f.file.clone())
    }
}

fn toolkits(t: &mut Tables, s: &Section<super::LiveToolkit>) {
    for live in &s.items {
        if t.toolkit(&live.version).is_some() || t.toolkit_line(live.version.major()).is_none() {
            continue;
        }
        // nvcc's SM range changes only with a major line (dossier §4.1): the newest known
        // release of the same line lends its range.
        let Some(like) = t
            .toolkits
            .releases
            .iter()
            .rfind(|r| r.version.major() == live.version.major() && !r.preview)
            .cloned()
        else {
            continue;
        };
        let v = &live.version;
        let runfile = match &live.bundled_driver {
            Some(d) => format!("cuda_{v}_{d}_linux.run"),
            None => format!("cuda_{v}_linux.run"),
        };
        let bundled = live.bundled_driver.as_ref().map_or(String::new(), |d| {
            format!(" The runfile bundles driver {d} (not a minimum).")
        });
        t.toolkits.releases.push(ToolkitRelease {
            version: v.clone(),
            label: format!("{}.{} from NVIDIA's manifest", v.major(), v.minor()),
            driver_linux: None,
            driver_windows: None,
            driver_confirmed: false,
            carried_driver_linux: None,
            carried_driver_windows: None,
            sm_min: like.sm_min,
            sm_max: like.sm_max,
            sm: like.sm.clone(),
            confirmed: true,
            preview: false,
            note: Some(format!(
                "Learned from NVIDIA's {} (released {}). Minimum driver not published there: unknown. SM range as CUDA {}.{bundled}",
                live.manifest,
                live.release_date.as_deref().unwrap_or("?"),
                like.version
            )),
            // NVIDIA's md5sum.txt names them, with hashes; else NVIDIA's pattern.
            windows_local: match &live.installers {
                Some(i) => i.windows_local.as_ref().map(listed),
                None => windows_installer(v)
                    .filter(|_| live.windows)
                    .map(installer),
            },
            windows_network: live
                .installers
                .as_ref()
                .and_then(|i| i.windows_network.as_ref())
                .map(listed),
            linux_runfile: match &live.installers {
                Some(i) => i.linux_runfile.as_ref().map(listed),
                None => live.linux.then(|| installer(runfile)),
            },
            origin: origin(s, &live.manifest),
        }
        .with_carried_from_names());
    }
    t.toolkits
        .releases
        .sort_by(|a, b| a.version.cmp(&b.version));
}

fn cudnn(t: &mut Tables, s: &Section<super::LiveCudnn>) {
    for live in &s.items {
        if t.cudnn.releases.iter().any(|r| r.version == live.version) {
            continue;
        }
        let mut archives = Vec::new();
        let mut majors: Vec<u32> = Vec::new();
        for a in &live.archives {
            if t.toolkit_line(a.cuda_major).is_none() {
                continue;
            }
            let platform = match a.os {
                Os::Windows => "windows-x86_64",
                Os::Linux => "linux-x86_64",
            };
            let file = a.relative_path.rsplit('/').next().unwrap_or_default();
            // Only the public layout, so the URL derived from the file name is the one
            // the manifest means.
            if a.relative_path != format!("cudnn/{platform}/{file}") {
                continue;
            }
            archives.push(CudnnArchive {
                os: a.os,
                cuda_major: a.cuda_major,
                file: file.to_string(),
                sha256: Some(a.sha256.clone()),
                md5: a.md5.clone(),
                size: a.size,
                url: None,
            });
            majors.push(a.cuda_major);
        }
        majors.sort();
        majors.dedup();
        if majors.is_empty() {
            continue;
        }
        t.cudnn.releases.push(CudnnRelease {
            version: live.version.clone(),
            confirmed: true,
            sm_min: None,
            sm_max: None,
            // The zip layout changed at 9.18 (dossier §5.3); the installer checks it anyway.
            windows_dll_dir: if live.version >= Version::new(&[9, 18]) {
                "bin/x64".into()
            } else {
                "bin".into()
            },
            note: Some(format!("Learned from NVIDIA's cuDNN {}.", live.manifest)),
            cuda: majors
                .into_iter()
                .map(|major| CudnnCuda {
                    major,
                    toolkit_min: None,
                    toolkit_max: None,
                })
                .collect(),
            archives,
            origin: origin(s, &live.manifest),
        });
    }
    t.cudnn.releases.sort_by(|a, b| a.version.cmp(&b.version));
}

/// One torch line as the index shows it: variants with wheels, patches, Pythons.
type Line = (Vec<String>, Vec<Version>, Vec<Version>);

fn torch(t: &mut Tables, s: &Section<super::LiveVariant>) {
    let known: Vec<String> = t.pytorch.variants.iter().map(|v| v.name.clone()).collect();
    for v in &s.items {
        if known.contains(&v.name) {
            t.live.wheels.insert(v.name.clone(), v.wheels.clone());
        }
    }
    t.live.wheels_origin = origin(s, &s.url);
    // Per torch line: the variants with wheels of it, its patches and Pythons.
    let mut lines: BTreeMap<Version, Line> = BTreeMap::new();
    for name in &known {
        for w in t.live.wheels.get(name).into_iter().flatten() {
            let e = lines.entry(w.version.major_minor()).or_default();
            if !e.0.contains(name) {
                e.0.push(name.clone());
            }
            e.1.push(Version::new(
                &w.version.parts()[..3.min(w.version.parts().len())],
            ));
            if !w.freethreaded {
                e.2.push(w.python.clone());
            }
        }
    }
    let newest = t.pytorch.releases.iter().map(|r| r.version.clone()).max();
    for (line, (variants, mut patches, pythons)) in lines {
        patches.sort();
        patches.dedup();
        let (Some(py_min), Some(py_max)) = (pythons.iter().min(), pythons.iter().max()) else {
            continue;
        };
        let file = format!("{}/<variant>/torch/", s.url.trim_end_matches('/'));
        if let Some(r) = t.pytorch.releases.iter_mut().find(|r| r.version == line) {
            // A line the tables know without its variants, or with variants only assumed
            // (torch 2.14/2.15: PyPI-confirmed, variants not): the index says which exist.
            if r.variants.is_empty() || !r.variants_confirmed {
                r.variants = variants;
                r.variants_confirmed = true;
                r.origin = origin(s, &file);
            }
            continue;
        }
        if newest.as_ref().is_some_and(|n| line < *n) {
            continue;
        }
        t.pytorch.releases.push(TorchRelease {
            version: line.clone(),
            patches,
            python_min: py_min.clone(),
            python_max: py_max.clone(),
            variants,
            variants_confirmed: true,
            linux_pypi_default: None,
            windows_pypi_default: None,
            torchvision: None,
            torchvision_confirmed: false,
            index_style: IndexStyle::IndexUrl,
            // Which GPUs the wheels build for is not in the index.
            confirmed: false,
            note: Some(
                "Learned from the PyTorch wheel index; torchvision and the SM list unknown.".into(),
            ),
            origin: origin(s, &file),
        });
    }
    t.pytorch.releases.sort_by(|a, b| a.version.cmp(&b.version));
}

/// Torch lines PyPI knows and the tables do not: a row with PyPI's facts (releases,
/// Pythons, the Linux and Windows wheels' CUDA) whose CUDA variants are assumed from the
/// release before (PyPI does not say which the PyTorch index carries), marked
/// unconfirmed. A row the PyTorch index taught gets PyPI's facts it lacks; a row of the
/// tables is left as it is.
fn pypi_torch(
    t: &mut Tables,
    s: &Section<super::LiveTorch>,
    index: Option<&Section<super::LiveVariant>>,
) {
    use crate::compat::{IndexSeen, PypiTorch};
    let newest = t.pytorch.releases.iter().map(|r| r.version.clone()).max();
    let variant_for = |t: &Tables, cuda: &Option<Version>| {
        let cuda = cuda.as_ref()?;
        t.pytorch
            .variants
            .iter()
            .find(|v| v.cuda.major_minor() == cuda.major_minor())
            .map(|v| v.name.clone())
    };
    // Read since PyPI was: the index lists no wheel of a line it did not teach.
    let index_seen = match index {
        Some(i) if i.fetched_at >= s.fetched_at => IndexSeen::NotListed {
            at: utc(i.fetched_at),
        },
        _ => IndexSeen::Unreachable,
    };
    for live in &s.items {
        let (Some(py_min), Some(py_max)) = (live.pythons.iter().min(), live.pythons.iter().max())
        else {
            continue;
        };
        // A wheel requiring no CUDA package is a CPU build; else its pin names the variant.
        let default = |m: &Option<super::pypi::WheelMetadata>| {
            m.as_ref().and_then(|m| {
                if m.cuda_packages.is_empty() {
                    Some("cpu".to_string())
                } else {
                    variant_for(t, &m.cuda)
                }
            })
        };
        let (linux_default, windows_default) = (default(&live.linux), default(&live.windows));
        let mut facts = PypiTorch {
            version: live.version.clone(),
            patches: live.patches.clone(),
            python_min: py_min.clone(),
            python_max: py_max.clone(),
            platforms: live.platforms.clone(),
            requires_python: live.requires_python.clone(),
            source: origin(s, &s.url),
            linux_cuda: live.linux.as_ref().and_then(|m| m.cuda.clone()),
            linux_requires: live
                .linux
                .as_ref()
                .map(|m| m.cuda_packages.clone())
                .unwrap_or_default(),
            linux_metadata: live.linux.as_ref().map(|m| m.url.clone()),
            windows_cpu: live.windows.as_ref().map(|m| m.cuda_packages.is_empty()),
            windows_requires: live
                .windows
                .as_ref()
                .map(|m| m.cuda_packages.clone())
                .unwrap_or_default(),
            windows_metadata: live.windows.as_ref().map(|m| m.url.clone()),
            variants: Vec::new(),
            variants_confirmed: false,
            variants_from: None,
            index: index_seen.clone(),
        };
        if let Some(r) = t
            .pytorch
            .releases
            .iter_mut()
            .find(|r| r.version == live.version)
        {
            // The index taught it in this merge: PyPI adds the defaults it cannot know.
            if matches!(r.origin, Origin::Fetched { .. }) && r.variants_confirmed {
                r.linux_pypi_default = r.linux_pypi_default.take().or(linux_default);
                r.windows_pypi_default = r.windows_pypi_default.take().or(windows_default);
                facts.variants = r.variants.clone();
                facts.variants_confirmed = true;
                facts.index = IndexSeen::Lists;
                t.live.torch_pypi.push(facts);
                free_threaded(t, live, s);
            }
            continue;
        }
        // Below the tables' newest line: the tables changed since it was read.
        if newest.as_ref().is_some_and(|n| live.version < *n) {
            continue;
        }
        let previous = t
            .pytorch
            .releases
            .iter()
            .rfind(|r| r.version < live.version && !r.variants.is_empty());
        let mut variants = previous.map(|r| r.variants.clone()).unwrap_or_default();
        // PyPI's Linux wheel is one of the index's builds: its variant is assumed too.
        if let Some(d) = &linux_default
            && d != "cpu"
            && !variants.contains(d)
        {
            variants.push(d.clone());
        }
        variants.sort_by_key(|n| t.variant(n).map(|v| v.cuda.clone()));
        let cuda = |n: &Option<Version>| n.as_ref().map_or("?".to_string(), ToString::to_string);
        let note = format!(
            "Learned from PyPI's torch page {} (Requires-Python {}; Linux wheel CUDA {}). The CUDA variants on PyTorch's index are not on PyPI: assumed {} as for torch {} (UNCONFIRMED); torchvision and the SM list unknown.",
            s.url,
            live.requires_python.as_deref().unwrap_or("?"),
            cuda(&facts.linux_cuda),
            variants.join(", "),
            previous.map_or("?".to_string(), |r| r.version.to_string()),
        );
        facts.variants_from = previous.map(|r| r.version.clone());
        facts.variants = variants.clone();
        t.pytorch.releases.push(TorchRelease {
            version: live.version.clone(),
            patches: live.patches.clone(),
            python_min: py_min.clone(),
            python_max: py_max.clone(),
            variants,
            variants_confirmed: false,
            linux_pypi_default: linux_default,
            windows_pypi_default: windows_default,
            torchvision: None,
            torchvision_confirmed: false,
            index_style: IndexStyle::IndexUrl,
            confirmed: false,
            note: Some(note),
            origin: origin(s, &s.url),
        });
        t.live.torch_pypi.push(facts);
        free_threaded(t, live, s);
    }
    t.pytorch.releases.sort_by(|a, b| a.version.cmp(&b.version));
    t.pytorch
        .free_threaded
        .sort_by(|a, b| (&a.python, &a.torch_from).cmp(&(&b.python, &b.torch_from)));
}

/// The `cpXYt` wheels PyPI lists of a line learned here, as `[[free_threaded]]` rows:
/// one per run of that line's patches with the ABI's wheels (a patch without them is
/// never inside a row). Only CPythons that have a free-threaded build (3.13 on) and that
/// the line supports.
fn free_threaded(t: &mut Tables, live: &super::LiveTorch, s: &Section<super::LiveTorch>) {
    let Some(release) = t
        .pytorch
        .releases
        .iter()
        .find(|r| r.version == live.version)
    else {
        return;
    };
    let (py_min, py_max) = (release.python_min.clone(), release.python_max.clone());
    let mut rows = Vec::new();
    for ft in &live.free_threaded {
        let py = ft.python.major_minor();
        if py < Version::new(&[3, 13]) || py < py_min || py > py_max {
            continue;
        }
        // Runs over the line's own patches (`live.patches`, ascending).
        let mut run: Option<(Version, Version)> = None;
        for p in &live.patches {
            match (ft.patches.contains(p), &mut run) {
                (true, Some((_, to))) => *to = p.clone(),
                (true, None) => run = Some((p.clone(), p.clone())),
                (false, Some(_)) => rows.extend(run.take().map(|r| (py.clone(), r))),
                (false, None) => {}
            }
        }
        rows.extend(run.map(|r| (py.clone(), r)));
    }
    for (python, (torch_from, torch_to)) in rows {
        t.pytorch.free_threaded.push(FreeThreaded {
            source: format!(
                "PyPI's torch page {} (wheels tagged cp{}{}t)",
                s.url,
                python.major(),
                python.minor()
            ),
            note: None,
            python,
            torch_from,
            torch_to,
            confirmed: true,
            origin: origin(s, &s.url),
        });
    }
}

/// Releases in `merged` that `base` lacks (`CUDA 13.6.0`, `cuDNN 9.28.0.1`, `torch 2.16`).
pub fn new_rows(base: &Tables, merged: &Tables) -> Vec<String> {
    let mut out = Vec::new();
    for r in &merged.toolkits.releases {
        if base.toolkit(&r.version).is_none() {
            out.push(format!("CUDA {}", r.version));
        }
    }
    for r in &merged.cudnn.releases {
        if !base.cudnn.releases.iter().any(|b| b.version == r.version) {
            out.push(format!("cuDNN {}", r.version));
        }
    }
    for r in &merged.pytorch.releases {
        if !base.pytorch.releases.iter().any(|b| b.version == r.version) {
            out.push(format!("torch {}", r.version));
        }
    }
    for n in merged.gpu_packages.needs.iter().filter(|n| n.fetched()) {
        let name = format!(
            "{} {}",
            n.package,
            n.versions.lower.as_ref().expect("a lower bound")
        );
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Rows for the GPU packages' releases PyPI's metadata taught: one per release (`>=v,
/// <next`), for both OSes when their wheels state the same, else one per OS whose wheel
/// states a CUDA major. A wheel naming no nvidia-* wheel states nothing: no row. A
/// version a row of the table covers keeps that row.
fn gpu_packages(t: &mut Tables, s: &Section<super::LiveGpuRelease>) {
    use crate::compat::gpu_packages::{PackageNeeds, VersionRange};
    for live in &s.items {
        let stated = |m: &Option<super::GpuWheelNeeds>| {
            m.as_ref()
                .and_then(|m| Some((m.cuda?, m.cudnn, m.metadata.clone(), m.requires.clone())))
        };
        let rows = match (stated(&live.linux), stated(&live.windows)) {
            (Some(l), Some(w)) if (l.0, l.1) == (w.0, w.1) => vec![(None, l)],
            (l, w) => [(Some(Os::Linux), l), (Some(Os::Windows), w)]
                .into_iter()
                .filter_map(|(os, x)| Some((os, x?)))
                .collect(),
        };
        for (os, (cuda, cudnn, metadata, requires)) in rows {
            let covered = t.gpu_packages.needs.iter().any(|n| {
                n.package == live.package
                    && (n.os.is_none() || os.is_none() || n.os == os)
                    && n.versions.contains(&live.version)
            });
            if covered {
                continue;
            }
            t.gpu_packages.needs.push(PackageNeeds {
                package: live.package.clone(),
                os,
                versions: VersionRange {
                    lower: Some(live.version.clone()),
                    upper: Some(super::gpu_packages::next_release(&live.version)),
                },
                cuda,
                cudnn,
                // Stated by the wheel, not checked by a person.
                confirmed: false,
                source: metadata.clone(),
                note: Some(format!(
                    "Learned from PyPI: {} {}'s wheel metadata requires {}.",
                    live.package,
                    live.version,
                    requires.join(", ")
                )),
                origin: origin(s, &metadata),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{LiveToolkit, LiveVariant, Snapshot};
    use super::*;
    use crate::compat::Wheel;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn section<T>(items: Vec<T>, live: bool) -> Option<Section<T>> {
        Some(Section {
            url: "https://example.invalid/".into(),
            fetched_at: 1_796_220_180,
            items,
            live,
        })
    }

    fn toolkit(version: &str, driver: Option<&str>) -> LiveToolkit {
        LiveToolkit {
            version: v(version),
            release_date: None,
            manifest: format!("redistrib_{version}.json"),
            bundled_driver: driver.map(v),
            windows: true,
            linux: true,
            installers: None,
        }
    }

    #[test]
    fn installers_named_by_the_md5_list_win_over_the_pattern() {
        let base = Tables::embedded().unwrap();
        let list = "\
0123456789abcdef0123456789ABCDEF  local_installers/cuda_13.6.0_windows_x86_64_v2.exe
11111111111111111111111111111111  local_installers/cuda_13.6.0_windows_arm64.exe
22222222222222222222222222222222  network_installers/cuda_13.6.0_windows_x86_64_network.exe
33333333333333333333333333333333  local_installers/cuda_13.6.0_linux.run
44444444444444444444444444444444  local_installers/cuda_13.6.0_linux_sbsa.run
55555555555555555555555555555555  local_installers/cuda_13.5.0_linux.run
not-a-hash  local_installers/cuda_13.6.0_windows.exe
";
        let found = super::super::nvidia::installers_from_md5sum(list, &v("13.6.0"));
        let mut tk = toolkit("13.6.0", None);
        tk.installers = Some(found);
        let snap = Snapshot {
            format: 1,
            cuda: section(vec![tk], true),
            ..Default::default()
        };
        let t = apply(&base, &snap).unwrap();
        let r = t.toolkit(&v("13.6.0")).unwrap();
        let local = r.windows_local.as_ref().unwrap();
        assert_eq!(local.file, "cuda_13.6.0_windows_x86_64_v2.exe");
        assert_eq!(
            local.md5.as_deref(),
            Some("0123456789abcdef0123456789abcdef")
        );
        let net = r.windows_network.as_ref().unwrap();
        assert_eq!(net.file, "cuda_13.6.0_windows_x86_64_network.exe");
        assert_eq!(
            r.installer_url(crate::compat::InstallerKind::WindowsNetwork)
                .unwrap(),
            "https://developer.download.nvidia.com/compute/cuda/13.6.0/network_installers/cuda_13.6.0_windows_x86_64_network.exe"
        );
        let run = r.linux_runfile.as_ref().unwrap();
        assert_eq!(
            (run.file.as_str(), run.md5.as_deref()),
            (
                "cuda_13.6.0_linux.run",
                Some("33333333333333333333333333333333")
            )
        );
    }

    #[test]
    fn tables_win_and_nothing_is_inferred() {
        let base = Tables::embedded().unwrap();
        let known = base.toolkit(&v("12.4.1")).unwrap().clone();
        let snap = Snapshot {
            format: 1,
            fetched_at: 1_796_220_180,
            cuda: section(
                vec![
                    // Known: the table's row stays as it is.
                    toolkit("12.4.1", Some("999.1")),
                    toolkit("13.6.0", None),
                    toolkit("13.6.1", Some("620.10.01")),
                    // A major with no line (no driver floor): not used.
                    toolkit("14.0.0", None),
                ],
                true,
            ),
            ..Default::default()
        };
        let t = apply(&base, &snap).unwrap();
        let r = t.toolkit(&v("12.4.1")).unwrap();
        assert_eq!(r.driver_linux, known.driver_linux);
        assert_eq!(r.origin, Origin::Table);
        assert!(t.toolkit(&v("14.0.0")).is_none());

        let new = t.toolkit(&v("13.6.0")).unwrap();
        assert_eq!(
            (new.driver_linux.as_ref(), new.driver_windows.as_ref()),
            (None, None)
        );
        assert!(!new.driver_confirmed);
        assert_eq!(
            new.windows_local.as_ref().unwrap().file,
            "cuda_13.6.0_windows_x86_64.exe"
        );
        assert_eq!(
            new.linux_runfile.as_ref().unwrap().file,
            "cuda_13.6.0_linux.run"
        );
        assert!(matches!(new.origin, Origin::Fetched { live: true, .. }));
        // The bundled driver names the runfile but is no minimum.
        let bundled = t.toolkit(&v("13.6.1")).unwrap();
        assert_eq!(
            bundled.linux_runfile.as_ref().unwrap().file,
            "cuda_13.6.1_620.10.01_linux.run"
        );
        assert_eq!(bundled.driver_linux, None);
        assert_eq!(t.toolkits.releases.last().unwrap().version, v("13.6.1"));
        assert_eq!(new_rows(&base, &t), vec!["CUDA 13.6.0", "CUDA 13.6.1"]);
        assert_eq!(
            t.live.refreshed.as_ref().unwrap().at,
            "2026-12-02 14:03 UTC"
        );
    }

    #[test]
    fn the_index_fills_a_torch_line_without_variants_and_learns_a_new_one() {
        let mut base = Tables::embedded().unwrap();
        // Not relying on the tables' rows of the day: the newest line loses its variants
        // (as 2.15 had none when written), and the next line is new.
        let newest = base.pytorch.releases.last_mut().unwrap();
        newest.variants.clear();
        newest.variants_confirmed = false;
        let known = newest.version.clone();
        let next = Version::new(&[known.major(), known.minor() + 1]);
        let patch = |line: &Version, p: u32| Version::new(&[line.major(), line.minor(), p]);
        let wheel = |ver: Version, py: &str, platform: &str| Wheel {
            version: ver,
            python: v(py),
            freethreaded: false,
            platform: platform.into(),
        };
        let snap = Snapshot {
            format: 1,
            torch: section(
                vec![LiveVariant {
                    name: "cu130".into(),
                    wheels: vec![
                        wheel(patch(&known, 0), "3.11", "win_amd64"),
                        wheel(patch(&next, 0), "3.11", "win_amd64"),
                        wheel(patch(&next, 1), "3.15", "manylinux_2_28_x86_64"),
                    ],
                }],
                false,
            ),
            ..Default::default()
        };
        let t = apply(&base, &snap).unwrap();
        let filled = t
            .pytorch
            .releases
            .iter()
            .find(|r| r.version == known)
            .unwrap();
        assert_eq!(filled.variants, vec!["cu130"]);
        assert!(filled.variants_confirmed);
        let learned = t.pytorch.releases.last().unwrap();
        assert_eq!(learned.version, next);
        assert_eq!(learned.patches, vec![patch(&next, 0), patch(&next, 1)]);
        assert_eq!(
            (learned.python_min.clone(), learned.python_max.clone()),
            (v("3.11"), v("3.15"))
        );
        assert!(!learned.confirmed && learned.torchvision.is_none());
        assert!(matches!(
            learned.origin,
            Origin::Fetched { live: false, .. }
        ));
        assert_eq!(t.live.wheels["cu130"].len(), 3);
    }

    fn torch_216(linux: bool) -> super::super::LiveTorch {
        use super::super::pypi::WheelMetadata;
        let (_, req) =
            super::super::pypi::parse_metadata(super::super::pypi::tests::LINUX_216, &v("2.16.0"))
                .unwrap();
        super::super::LiveTorch {
            version: v("2.16"),
            patches: vec![v("2.16.0")],
            pythons: ["3.11", "3.12", "3.13", "3.14", "3.15"].map(v).to_vec(),
            platforms: vec!["manylinux_2_28_x86_64".into(), "win_amd64".into()],
            free_threaded: Vec::new(),
            requires_python: Some(">=3.11".into()),
            linux: linux.then(|| {
                WheelMetadata::from_requires("https://pypi.example/l.metadata", &req, Os::Linux)
            }),
            windows: Some(WheelMetadata::from_requires(
                "https://pypi.example/w.metadata",
                &req,
                Os::Windows,
            )),
        }
    }

    #[test]
    fn pypi_teaches_a_new_torch_line_with_its_variants_assumed_and_unconfirmed() {
        use crate::compat::IndexSeen;
        let base = Tables::embedded().unwrap();
        let snap = Snapshot {
            format: 1,
            pypi_torch: Some(Section {
                url: "https://pypi.org/simple/torch/".into(),
                fetched_at: 1_796_220_180,
                items: vec![torch_216(true)],
                live: true,
            }),
            ..Default::default()
        };
        let t = apply(&base, &snap).unwrap();
        let r = t.pytorch.releases.last().unwrap();
        assert_eq!(r.version, v("2.16"));
        assert_eq!(
            (r.python_min.clone(), r.python_max.clone()),
            (v("3.11"), v("3.15"))
        );
        assert_eq!(r.linux_pypi_default.as_deref(), Some("cu132"));
        assert_eq!(r.windows_pypi_default.as_deref(), Some("cpu"));
        assert!(!r.variants_confirmed && !r.confirmed);
        // The variants of the newest earlier release that names any, plus PyPI's Linux one.
        let previous = base
            .pytorch
            .releases
            .iter()
            .rfind(|r| !r.variants.is_empty())
            .unwrap();
        for name in &previous.variants {
            assert!(r.variants.contains(name), "{:?}", r.variants);
        }
        assert!(r.variants.contains(&"cu132".to_string()));
        assert!(
            matches!(&r.origin, Origin::Fetched { file, live: true, .. } if file == "https://pypi.org/simple/torch/")
        );
        let facts = &t.live.torch_pypi[0];
        assert_eq!(facts.index, IndexSeen::Unreachable);
        assert_eq!(facts.variants_from.as_ref(), Some(&previous.version));
        assert_eq!(facts.linux_cuda, Some(v("13.2")));
        assert_eq!(facts.windows_cpu, Some(true));
        assert_eq!(new_rows(&base, &t), vec!["torch 2.16"]);

        // The index read in the same run lists no 2.16 wheel: said so, with its date.
        let mut read = snap.clone();
        read.torch = Some(Section {
            url: "https://download.pytorch.org/whl".into(),
            fetched_at: 1_796_220_180,
            items: vec![],
            live: true,
        });
        let t = apply(&base, &read).unwrap();
        assert!(matches!(
            t.live.torch_pypi[0].index,
            IndexSeen::NotListed { .. }
        ));

        // Without the Linux metadata its CUDA is unknown, not guessed.
        let mut no_meta = snap.clone();
        no_meta.pypi_torch.as_mut().unwrap().items = vec![torch_216(false)];
        let t = apply(&base, &no_meta).unwrap();
        let r = t.pytorch.releases.last().unwrap();
        assert_eq!(r.linux_pypi_default, None);
        assert_eq!(t.live.torch_pypi[0].linux_cuda, None);
    }

    #[test]
    fn the_index_wins_over_pypi_for_variants_and_pypi_adds_the_defaults() {
        use crate::compat::IndexSeen;
        let base = Tables::embedded().unwrap();
        let wheel = |py: &str, platform: &str| Wheel {
            version: v("2.16.0"),
            python: v(py),
            freethreaded: false,
            platform: platform.into(),
        };
        let snap = Snapshot {
            format: 1,
            torch: section(
                vec![LiveVariant {
                    name: "cu130".into(),
                    wheels: vec![
                        wheel("3.11", "win_amd64"),
                        wheel("3.15", "manylinux_2_28_x86_64"),
                    ],
                }],
                true,
            ),
            pypi_torch: section(vec![torch_216(true)], true),
            ..Default::default()
        };
        let t = apply(&base, &snap).unwrap();
        let r = t.pytorch.releases.last().unwrap();
        assert_eq!(r.variants, vec!["cu130"]);
        assert!(r.variants_confirmed);
        assert_eq!(r.linux_pypi_default.as_deref(), Some("cu132"));
        assert_eq!(r.windows_pypi_default.as_deref(), Some("cpu"));
        assert_eq!(t.live.torch_pypi[0].index, IndexSeen::Lists);
        // A line the tables have is never touched by PyPI.
        let mut old = torch_216(true);
        old.version = base.pytorch.releases[0].version.clone();
        let snap = Snapshot {
            format: 1,
            pypi_torch: section(vec![old], true),
            ..Default::default()
        };
        let t = apply(&base, &snap).unwrap();
        assert_eq!(t.pytorch.releases.len(), base.pytorch.releases.len());
        assert!(t.live.torch_pypi.is_empty());
    }

    fn needs(cuda: Option<u32>, cudnn: Option<u32>, os: &str) -> super::super::GpuWheelNeeds {
        super::super::GpuWheelNeeds {
            metadata: format!("http://127.0.0.1:9/packages/ort-{os}.whl.metadata"),
            requires: vec!["nvidia-cudnn-cu12~=9.0; extra == \"cudnn\"".into()],
            cuda,
            cudnn,
        }
    }

    #[test]
    fn gpu_package_releases_become_fetched_rows_and_table_rows_win() {
        use super::super::LiveGpuRelease;
        let base = Tables::embedded().unwrap();
        let release = |v: &str, linux, windows| LiveGpuRelease {
            package: "onnxruntime-gpu".into(),
            version: v.parse().unwrap(),
            linux,
            windows,
        };
        let snap = Snapshot {
            format: 1,
            gpu_packages: section(
                vec![
                    // Both wheels agree: one row for every OS.
                    release(
                        "1.26.0",
                        Some(needs(Some(12), Some(9), "linux")),
                        Some(needs(Some(12), Some(9), "win")),
                    ),
                    // Only the Linux wheel names nvidia-* wheels: a Linux row only.
                    release(
                        "1.27.0",
                        Some(needs(Some(13), Some(9), "linux")),
                        Some(needs(None, None, "win")),
                    ),
                    // Nothing stated: no row.
                    release("1.28.0", Some(needs(None, None, "linux")), None),
                    // A version the table covers keeps the table's row.
                    release("1.20.1", Some(needs(Some(13), Some(9), "linux")), None),
                ],
                false,
            ),
            ..Default::default()
        };
        let t = apply(&base, &snap).unwrap();
        let learned: Vec<_> = t
            .gpu_packages
            .needs
            .iter()
            .filter(|n| n.fetched())
            .collect();
        assert_eq!(learned.len(), 2, "{learned:#?}");
        let r = t
            .gpu_packages
            .needs("onnxruntime-gpu", &v("1.26.0"), Os::Windows)
            .unwrap();
        assert_eq!(
            (r.cuda, r.cudnn, r.os, r.confirmed),
            (12, Some(9), None, false)
        );
        assert!(matches!(r.origin, Origin::Fetched { live: false, .. }));
        assert!(r.source.ends_with("ort-linux.whl.metadata"));
        // Exactly that release: 1.26.1 is not learned.
        assert!(
            t.gpu_packages
                .needs("onnxruntime-gpu", &v("1.26.1"), Os::Linux)
                .is_none()
        );
        assert_eq!(
            t.gpu_packages
                .needs("onnxruntime-gpu", &v("1.27.0"), Os::Linux)
                .unwrap()
                .cuda,
            13
        );
        assert!(
            t.gpu_packages
                .needs("onnxruntime-gpu", &v("1.27.0"), Os::Windows)
                .is_none()
        );
        assert!(
            t.gpu_packages
                .needs("onnxruntime-gpu", &v("1.28.0"), Os::Linux)
                .is_none()
        );
        let old = t
            .gpu_packages
            .needs("onnxruntime-gpu", &v("1.20.1"), Os::Linux)
            .unwrap();
        assert_eq!((old.cuda, old.fetched()), (12, false));
        // The fix for a CUDA 13 machine may name the learned release.
        let for13 = t
            .gpu_packages
            .for_cuda("onnxruntime-gpu", Os::Linux, 13, None)
            .unwrap();
        assert_eq!(for13.versions.pip_spec(), ">=1.27.0,<1.27.1");
        assert!(
            new_rows(&base, &t).contains(&"onnxruntime-gpu 1.26.0".to_string()),
            "{:?}",
            new_rows(&base, &t)
        );
    }
}
