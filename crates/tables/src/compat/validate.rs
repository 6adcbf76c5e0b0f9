//! Checks a parsed set of tables beyond what serde can: order, duplicates, ranges,
//! formats and cross-references. The first problem found is returned, naming file and key.

use std::collections::HashSet;

use super::*;

type Check = Result<(), TableError>;

fn bad(file: &str, key: impl Into<String>, problem: impl Into<String>) -> TableError {
    TableError::Invalid {
        file: file.to_string(),
        key: key.into(),
        problem: problem.into(),
    }
}

pub(super) fn all(t: &Tables) -> Check {
    meta(FILES[0], &t.toolkits.meta)?;
    meta(FILES[1], &t.cudnn.meta)?;
    meta(FILES[2], &t.pytorch.meta)?;
    meta(FILES[3], &t.gpus.meta)?;
    toolkits(t)?;
    cudnn(t)?;
    pytorch(t)?;
    gpus(t)?;
    gpu_lookup::validate(t)?;
    meta(DRIVERS_FILE, &t.drivers.meta)?;
    drivers(t)?;
    meta(super::GPU_PACKAGES_FILE, &t.gpu_packages.meta)?;
    super::gpu_packages::validate(&t.gpu_packages)
}

fn meta(file: &str, m: &Meta) -> Check {
    if m.subject.trim().is_empty() {
        return Err(bad(file, "meta.subject", "is empty"));
    }
    if m.sources.is_empty() || m.sources.iter().any(|s| s.trim().is_empty()) {
        return Err(bad(
            file,
            "meta.sources",
            "must name at least one source, none empty",
        ));
    }
    Ok(())
}

/// `items` must be strictly ascending by `key` (which also rules out duplicates).
fn ascending<T, K: Ord + std::fmt::Display>(
    file: &str,
    table: &str,
    items: &[T],
    key: impl Fn(&T) -> K,
) -> Check {
    for pair in items.windows(2) {
        let (a, b) = (key(&pair[0]), key(&pair[1]));
        if a == b {
            return Err(bad(file, format!("{table} \"{b}\""), "appears twice"));
        }
        if a > b {
            return Err(bad(
                file,
                format!("{table} \"{b}\""),
                format!("is out of order: it must come before \"{a}\" (rows are sorted ascending)"),
            ));
        }
    }
    Ok(())
}

fn parts(file: &str, key: &str, v: &Version, n: usize) -> Check {
    if v.parts().len() != n {
        return Err(bad(
            file,
            key,
            format!("\"{v}\" must have exactly {n} dot-separated numbers"),
        ));
    }
    Ok(())
}

fn hex(file: &str, key: &str, value: &Option<String>, len: usize) -> Check {
    if let Some(h) = value
        && (h.len() != len || !h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
    {
        return Err(bad(
            file,
            key,
            format!("must be {len} lowercase hex digits, got \"{h}\""),
        ));
    }
    Ok(())
}

fn file_name(file: &str, key: &str, name: &str) -> Check {
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        return Err(bad(
            file,
            key,
            format!("\"{name}\" is not a plain file name"),
        ));
    }
    Ok(())
}

fn https(file: &str, key: &str, url: &Option<String>) -> Check {
    if let Some(u) = url
        && !u.starts_with("https://")
    {
        return Err(bad(
            file,
            key,
            format!("built-in URLs must be https, got \"{u}\""),
        ));
    }
    Ok(())
}

fn toolkits(t: &Tables) -> Check {
    let f = FILES[0];
    let tk = &t.toolkits;
    ascending(f, "line", &tk.lines, |l| l.major)?;
    branches(t)?;
    if tk.releases.is_empty() {
        return Err(bad(f, "release", "no releases"));
    }
    ascending(f, "release", &tk.releases, |r| r.version.clone())?;
    for r in &tk.releases {
        let k = format!("release \"{}\"", r.version);
        parts(f, &k, &r.version, 3)?;
        if t.toolkit_line(r.version.major()).is_none() {
            return Err(bad(
                f,
                &k,
                format!("major {} has no [[line]]", r.version.major()),
            ));
        }
        if r.sm_min > r.sm_max {
            return Err(bad(f, format!("{k}.sm_min"), "is above sm_max"));
        }
        sm_list(f, &k, r)?;
        carried(f, &k, r)?;
        for (kind, inst) in [
            ("windows_local", &r.windows_local),
            ("windows_network", &r.windows_network),
            ("linux_runfile", &r.linux_runfile),
        ] {
            if let Some(i) = inst {
                let ik = format!("{k}.{kind}");
                file_name(f, &format!("{ik}.file"), &i.file)?;
                hex(f, &format!("{ik}.sha256"), &i.sha256, 64)?;
                hex(f, &format!("{ik}.md5"), &i.md5, 32)?;
                https(f, &format!("{ik}.url"), &i.url)?;
                if i.size == Some(0) {
                    return Err(bad(f, format!("{ik}.size"), "is zero"));
                }
                if i.url.is_none() && !i.file.contains(&r.version.to_string()) {
                    return Err(bad(
                        f,
                        format!("{ik}.file"),
                        "does not contain the release version",
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The branch table (#32): one row per CUDA minor, ascending, of a known major line; a
/// branch never below its line's floor nor below an earlier minor's branch.
fn branches(t: &Tables) -> Check {
    let f = FILES[0];
    let rows = &t.toolkits.branches;
    ascending(f, "branch", rows, |b| b.cuda.clone())?;
    for (i, b) in rows.iter().enumerate() {
        let k = format!("branch \"{}\"", b.cuda);
        parts(f, &k, &b.cuda, 2)?;
        let Some(line) = t.toolkit_line(b.cuda.major()) else {
            return Err(bad(
                f,
                &k,
                format!("major {} has no [[line]]", b.cuda.major()),
            ));
        };
        let floor = line
            .driver_floor_linux
            .major()
            .min(line.driver_floor_windows.major());
        if b.branch < floor {
            return Err(bad(
                f,
                format!("{k}.branch"),
                format!("is below the line's driver floor ({floor})"),
            ));
        }
        if i > 0 && rows[i - 1].branch > b.branch {
            return Err(bad(
                f,
                format!("{k}.branch"),
                "is below an earlier minor's branch",
            ));
        }
    }
    Ok(())
}

/// The exact list (#20 class 5): ascending without repeats, and the range its ends.
fn sm_list(f: &str, k: &str, r: &ToolkitRelease) -> Check {
    if r.sm.is_empty() {
        return Ok(());
    }
    if r.sm.windows(2).any(|w| w[0] >= w[1]) {
        return Err(bad(
            f,
            format!("{k}.sm"),
            "must be in ascending order, each once",
        ));
    }
    if r.sm.first() != Some(&r.sm_min) || r.sm.last() != Some(&r.sm_max) {
        return Err(bad(
            f,
            format!("{k}.sm"),
            "must start at sm_min and end at sm_max",
        ));
    }
    Ok(())
}

/// The driver an installer carries apart from the published minimum (#20 class 3): the
/// carried one is the one its file name names (none when the name names none); a row
/// its note flags as "not in Table 3" has no minimum; and no installer carries a driver
/// below its own release's minimum.
fn carried(f: &str, k: &str, r: &ToolkitRelease) -> Check {
    for (os, inst) in [
        (Os::Linux, &r.linux_runfile),
        (Os::Windows, &r.windows_local),
    ] {
        let key = match os {
            Os::Linux => "carried_driver_linux",
            Os::Windows => "carried_driver_windows",
        };
        let have = r.carried_driver(os);
        if let Some(inst) = inst {
            let named = ToolkitRelease::driver_in_file_name(&r.version, &inst.file);
            if named.as_ref() != have {
                return Err(bad(
                    f,
                    format!("{k}.{key}"),
                    format!(
                        "must be the driver the installer's file name {} carries ({})",
                        inst.file,
                        named.map_or("none".to_string(), |v| v.to_string())
                    ),
                ));
            }
        }
        if let (Some(c), Some(m)) = (have, r.driver_min(os))
            && c < m
        {
            return Err(bad(
                f,
                format!("{k}.{key}"),
                format!("{c} is below the release's own minimum {m}"),
            ));
        }
    }
    if r.note
        .as_deref()
        .is_some_and(|n| n.to_ascii_lowercase().contains("not in table 3"))
        && (r.driver_linux.is_some() || r.driver_windows.is_some())
    {
        return Err(bad(
            f,
            format!("{k}.driver_linux"),
            "the note says the release is not in Table 3, so no minimum is published: put the installer's driver in carried_driver_linux/_windows",
        ));
    }
    Ok(())
}

fn cudnn(t: &Tables) -> Check {
    let f = FILES[1];
    ascending(f, "release", &t.cudnn.releases, |r| r.version.clone())?;
    for r in &t.cudnn.releases {
        let k = format!("release \"{}\"", r.version);
        parts(f, &k, &r.version, 4)?;
        if !matches!(r.windows_dll_dir.as_str(), "bin" | "bin/x64") {
            return Err(bad(
                f,
                format!("{k}.windows_dll_dir"),
                "must be \"bin\" or \"bin/x64\"",
            ));
        }
        if let (Some(lo), Some(hi)) = (r.sm_min, r.sm_max)
            && lo > hi
        {
            return Err(bad(f, format!("{k}.sm_min"), "is above sm_max"));
        }
        if r.cuda.is_empty() {
            return Err(bad(f, format!("{k}.cuda"), "lists no CUDA major"));
        }
        ascending(f, &format!("{k}.cuda"), &r.cuda, |c| c.major)?;
        for c in &r.cuda {
            let ck = format!("{k}.cuda {}", c.major);
            if t.toolkit_line(c.major).is_none() {
                return Err(bad(
                    f,
                    ck,
                    "names a CUDA major with no line in toolkits.toml",
                ));
            }
            for v in [&c.toolkit_min, &c.toolkit_max].into_iter().flatten() {
                if v.major() != c.major {
                    return Err(bad(
                        f,
                        &ck,
                        format!("toolkit range {v} is not in CUDA {}", c.major),
                    ));
                }
            }
            if let (Some(lo), Some(hi)) = (&c.toolkit_min, &c.toolkit_max)
                && lo > hi
            {
                return Err(bad(f, ck, "toolkit_min is above toolkit_max"));
            }
        }
        let mut seen = HashSet::new();
        for a in &r.archives {
            let ak = format!("{k}.archive {} cuda{}", a.os.as_str(), a.cuda_major);
            if !seen.insert((a.os, a.cuda_major)) {
                return Err(bad(f, ak, "appears twice"));
            }
            if r.cuda(a.cuda_major).is_none() {
                return Err(bad(
                    f,
                    ak,
                    "is for a CUDA major the release does not list in cuda",
                ));
            }
            file_name(f, &format!("{ak}.file"), &a.file)?;
            hex(f, &format!("{ak}.sha256"), &a.sha256, 64)?;
            hex(f, &format!("{ak}.md5"), &a.md5, 32)?;
            https(f, &format!("{ak}.url"), &a.url)?;
            let expect = format!("{}_cuda{}", r.version, a.cuda_major);
            if !a.file.contains(&expect) {
                return Err(bad(
                    f,
                    format!("{ak}.file"),
                    format!("does not contain \"{expect}\""),
                ));
            }
        }
    }
    Ok(())
}

fn pytorch(t: &Tables) -> Check {
    let f = FILES[2];
    let p = &t.pytorch;
    let mut names = HashSet::new();
    for v in &p.variants {
        let k = format!("variant \"{}\"", v.name);
        if !names.insert(v.name.as_str()) {
            return Err(bad(f, k, "appears twice"));
        }
        let expect = format!("cu{}{}", v.cuda.major(), v.cuda.minor());
        if v.name != expect {
            return Err(bad(
                f,
                k,
                format!("name must be \"{expect}\" for CUDA {}", v.cuda),
            ));
        }
        if t.toolkit_line(v.cuda.major()).is_none() {
            return Err(bad(f, k, "CUDA major has no line in toolkits.toml"));
        }
        for a in &v.arch {
            let ak = format!("{k}.arch {}–{}", a.torch_from, a.torch_to);
            if a.torch_from > a.torch_to {
                return Err(bad(f, ak, "torch_from is above torch_to"));
            }
            if a.sm.is_empty() {
                return Err(bad(f, ak, "sm is empty"));
            }
            ascending(f, &format!("{ak}.sm"), &a.sm, |s| *s)?;
        }
        for pair in v.arch.windows(2) {
            if pair[1].torch_from <= pair[0].torch_to {
                return Err(bad(
                    f,
                    format!("{k}.arch"),
                    "torch ranges overlap or are out of order",
                ));
            }
        }
    }
    let mut mirrors = HashSet::new();
    for m in &p.mirrors {
        let k = format!("mirror \"{}\"", m.name);
        if !mirrors.insert(m.name.as_str()) {
            return Err(bad(f, k, "appears twice"));
        }
        if !m.base.starts_with("https://") || m.base.ends_with('/') {
            return Err(bad(
                f,
                format!("{k}.base"),
                "must be an https:// address without a trailing slash",
            ));
        }
    }
    ascending(f, "release", &p.releases, |r| r.version.clone())?;
    for r in &p.releases {
        let k = format!("release \"{}\"", r.version);
        parts(f, &k, &r.version, 2)?;
        if r.patches.is_empty() {
            return Err(bad(f, format!("{k}.patches"), "is empty"));
        }
        ascending(f, &format!("{k}.patches"), &r.patches, |v| v.clone())?;
        for pv in &r.patches {
            if pv.major_minor() != r.version {
                return Err(bad(
                    f,
                    format!("{k}.patches"),
                    format!("{pv} is not a {} release", r.version),
                ));
            }
        }
        if r.python_min > r.python_max {
            return Err(bad(f, format!("{k}.python_min"), "is above python_max"));
        }
        for v in &r.variants {
            if !names.contains(v.as_str()) {
                return Err(bad(
                    f,
                    format!("{k}.variants"),
                    format!("\"{v}\" has no [[variant]]"),
                ));
            }
        }
        for (field, d) in [
            ("linux_pypi_default", &r.linux_pypi_default),
            ("windows_pypi_default", &r.windows_pypi_default),
        ] {
            if let Some(d) = d
                && d != "cpu"
                && !names.contains(d.as_str())
            {
                return Err(bad(
                    f,
                    format!("{k}.{field}"),
                    format!("\"{d}\" is neither cpu nor a [[variant]]"),
                ));
            }
        }
    }
    free_threaded(t)
}

/// Free-threaded rows: a CPython that has a free-threaded build (3.13 on), a range of
/// torch releases the tables list that support that Python, with its source; the rows of
/// one Python sorted and apart.
fn free_threaded(t: &Tables) -> Check {
    let f = FILES[2];
    let rows = &t.pytorch.free_threaded;
    for (i, r) in rows.iter().enumerate() {
        let k = format!("free_threaded[{i}] ({})", r.abi());
        parts(f, &format!("{k}.python"), &r.python, 2)?;
        if r.python.major() != 3 || r.python.minor() < 13 {
            return Err(bad(
                f,
                format!("{k}.python"),
                "free-threaded CPython begins with 3.13",
            ));
        }
        parts(f, &format!("{k}.torch_from"), &r.torch_from, 3)?;
        parts(f, &format!("{k}.torch_to"), &r.torch_to, 3)?;
        if r.torch_from > r.torch_to {
            return Err(bad(f, k, "torch_from is above torch_to"));
        }
        if r.source.trim().is_empty() {
            return Err(bad(f, format!("{k}.source"), "is empty"));
        }
        for (field, v) in [("torch_from", &r.torch_from), ("torch_to", &r.torch_to)] {
            let release = t
                .pytorch
                .releases
                .iter()
                .find(|rel| rel.version == v.major_minor() && rel.patches.contains(v));
            match release {
                None => {
                    return Err(bad(
                        f,
                        format!("{k}.{field}"),
                        format!("{v} is not a patch of any [[release]]"),
                    ));
                }
                Some(rel) if !(rel.python_min <= r.python && r.python <= rel.python_max) => {
                    return Err(bad(
                        f,
                        format!("{k}.{field}"),
                        format!(
                            "torch {} supports Python {} to {}, not {}",
                            rel.version, rel.python_min, rel.python_max, r.python
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
    }
    for pair in rows.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if (&a.python, &a.torch_from) >= (&b.python, &b.torch_from)
            || (a.python == b.python && b.torch_from <= a.torch_to)
        {
            return Err(bad(
                f,
                format!("free_threaded ({})", b.abi()),
                "rows must be sorted by python, then torch_from, and the torch ranges of one Python must not overlap",
            ));
        }
    }
    Ok(())
}

fn gpus(t: &Tables) -> Check {
    let f = FILES[3];
    let g = &t.gpus;
    let mut ccs = HashSet::new();
    for a in &g.architectures {
        if a.last_branch.is_some() && a.last_branch_source.is_none() {
            return Err(bad(
                f,
                format!("architecture \"{}\".last_branch_source", a.name),
                "a last driver branch needs its source",
            ));
        }
        for cc in &a.compute_capabilities {
            if !ccs.insert(*cc) {
                return Err(bad(
                    f,
                    format!("architecture \"{}\"", a.name),
                    format!("compute capability {cc} is listed twice"),
                ));
            }
        }
    }
    if g.gpus.is_empty() {
        return Err(bad(f, "gpu", "no GPUs"));
    }
    ascending(f, "gpu", &g.gpus, |m| {
        GpuKey(m.cc, m.name.to_ascii_lowercase())
    })?;
    let mut ids = HashSet::new();
    let mut names = HashSet::new();
    for m in &g.gpus {
        let k = format!("gpu \"{}\"", m.name);
        if !names.insert(m.name.to_ascii_lowercase()) {
            return Err(bad(f, k, "appears twice"));
        }
        if !ccs.contains(&m.cc) {
            return Err(bad(
                f,
                k,
                format!("compute capability {} belongs to no architecture", m.cc),
            ));
        }
        for id in &m.pci_ids {
            if normalise_pci_id(id).as_deref() != Some(id.as_str()) {
                return Err(bad(
                    f,
                    format!("{k}.pci_ids"),
                    format!("\"{id}\" must be 0x + 4 lowercase hex digits"),
                ));
            }
            if !ids.insert(id.as_str()) {
                return Err(bad(
                    f,
                    format!("{k}.pci_ids"),
                    format!("{id} is used by another GPU too"),
                ));
            }
        }
        for a in &m.aliases {
            if a.trim().is_empty() {
                return Err(bad(f, format!("{k}.aliases"), "an alias is empty"));
            }
        }
    }
    ascending(f, "jetpack", &g.jetpacks, |r| r.l4t.clone())?;
    for r in &g.jetpacks {
        if r.jetpack.trim().is_empty() {
            return Err(bad(
                f,
                format!("jetpack \"{}\"", r.l4t),
                "names no JetPack release",
            ));
        }
    }
    Ok(())
}

/// Sort key for GPUs: compute capability, then name.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct GpuKey(ComputeCapability, String);

impl std::fmt::Display for GpuKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.1, self.0)
    }
}

/// A base URL we fetch from: https, a host, no path beyond `/`.
fn https_base(f: &str, key: &str, url: &str) -> Check {
    let host = url.strip_prefix("https://").unwrap_or_default();
    if host.is_empty() || host.contains(['/', '?', '#', ' ', '{']) {
        return Err(bad(
            f,
            key,
            format!("\"{url}\" must be https://HOST with nothing after the host"),
        ));
    }
    Ok(())
}

fn drivers(t: &Tables) -> Check {
    let f = DRIVERS_FILE;
    let d = &t.drivers;
    https_base(f, "hosts.canonical", &d.hosts.canonical)?;
    let mut hosts = HashSet::new();
    for m in &d.hosts.mirrors {
        https_base(f, "hosts.mirrors", m)?;
        if *m == d.hosts.canonical || !hosts.insert(m) {
            return Err(bad(f, "hosts.mirrors", format!("{m} is listed twice")));
        }
    }
    if d.silent.args.is_empty() || d.silent.args.iter().any(|a| a.trim().is_empty()) {
        return Err(bad(
            f,
            "silent.args",
            "must name the silent flags, none empty",
        ));
    }
    let mut seen = HashSet::new();
    for p in &d.packages {
        let k = format!("package \"{}\"", p.name.as_str());
        if !seen.insert(p.name) {
            return Err(bad(f, k, "appears twice"));
        }
        if !p.url.contains("{v}") {
            return Err(bad(f, format!("{k}.url"), "must contain {v} (the version)"));
        }
        let Some(rest) = p.url.strip_prefix(&format!("{}/", d.hosts.canonical)) else {
            return Err(bad(
                f,
                format!("{k}.url"),
                format!("must start with hosts.canonical ({}/)", d.hosts.canonical),
            ));
        };
        let file = rest.rsplit('/').next().unwrap_or_default();
        if file.is_empty() || !file.contains("{v}") || rest.contains(['?', '#', ' ', '\\']) {
            return Err(bad(
                f,
                format!("{k}.url"),
                "must end in a file name holding {v}, with no query",
            ));
        }
        if p.versions.is_empty() {
            return Err(bad(f, k, "no versions"));
        }
        ascending(f, &format!("{k}: version"), &p.versions, |v| {
            v.version.clone()
        })?;
        for v in &p.versions {
            parts(f, &format!("{k}: version \"{}\"", v.version), &v.version, 2)?;
            if v.size == Some(0) {
                return Err(bad(
                    f,
                    format!("{k}: version \"{}\".size", v.version),
                    "is 0",
                ));
            }
        }
    }
    for want in DriverPackage::ALL {
        if !seen.contains(&want) {
            return Err(bad(
                f,
                "package",
                format!("\"{}\" is missing", want.as_str()),
            ));
        }
    }
    for (i, r) in d.choose.rules.iter().enumerate() {
        let word_ok = |w: &String| {
            let w = w.strip_suffix('*').unwrap_or(w);
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        };
        if r.words.is_empty() || !r.words.iter().all(word_ok) {
            return Err(bad(
                f,
                format!("choose.rule[{i}].words"),
                "each must be lowercase letters and digits (a trailing * for a prefix), at least one",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(v: &str, change: impl FnOnce(&mut ToolkitRelease)) -> Result<(), TableError> {
        let mut t = Tables::embedded().unwrap();
        let r = t
            .toolkits
            .releases
            .iter_mut()
            .find(|r| r.version.to_string() == v)
            .unwrap();
        change(r);
        all(&t)
    }

    fn problem(e: Result<(), TableError>) -> String {
        e.expect_err("should be refused").to_string()
    }

    /// #20 class 3: the driver an installer carries and the published minimum stay apart.
    #[test]
    fn carried_drivers_and_minimums_are_kept_apart() {
        let v = |s: &str| Some(s.parse::<Version>().unwrap());
        // 12.8.2 is not in Table 3: its runfile's driver back in the minimum slot.
        let e = problem(with("12.8.2", |r| r.driver_linux = v("570.211.01")));
        assert!(e.contains("not in Table 3"), "{e}");
        // A carried figure the file name does not carry.
        let e = problem(with("12.8.0", |r| r.carried_driver_linux = v("570.26")));
        assert!(e.contains("cuda_12.8.0_570.86.10_linux.run"), "{e}");
        // 13.x Windows installers carry none.
        let e = problem(with("13.0.0", |r| r.carried_driver_windows = v("580.88")));
        assert!(e.contains("(none)"), "{e}");
        // A minimum above what the installer carries.
        let e = problem(with("12.8.1", |r| r.driver_windows = v("572.62")));
        assert!(e.contains("below the release's own minimum"), "{e}");
        // A minimum equal to the carried driver is fine (12.8.1: 572.61 both).
        with("12.8.1", |_| {}).unwrap();
    }

    /// #20 class 5: the exact lists are sorted, once each, and span sm_min..sm_max.
    #[test]
    fn sm_lists_are_sorted_and_span_the_range() {
        let cc = |s: &str| s.parse::<ComputeCapability>().unwrap();
        let e = problem(with("12.8.0", |r| r.sm.swap(0, 1)));
        assert!(e.contains("ascending"), "{e}");
        let e = problem(with("12.8.0", |r| r.sm.push(cc("12.0"))));
        assert!(e.contains("ascending"), "{e}");
        let e = problem(with("12.8.0", |r| r.sm_max = cc("12.1")));
        assert!(e.contains("sm_max"), "{e}");
        with("12.8.0", |r| {
            r.sm.clear();
        })
        .unwrap();
    }

    /// #32: the free-threaded ABIs of dossier §13.4, and rows that cannot be right.
    #[test]
    fn free_threaded_rows_hold_the_dossier_ranges_and_bad_ones_are_refused() {
        let t = Tables::embedded().unwrap();
        let v = |s: &str| s.parse::<Version>().unwrap();
        let ranges: Vec<(String, String, String)> = t
            .pytorch
            .free_threaded
            .iter()
            .map(|r| (r.abi(), r.torch_from.to_string(), r.torch_to.to_string()))
            .collect();
        let want = |a: &str, f: &str, to: &str| (a.to_string(), f.to_string(), to.to_string());
        assert_eq!(
            ranges,
            [
                want("cp313t", "2.7.0", "2.12.0"),
                want("cp314t", "2.9.0", "2.15.0")
            ]
        );
        assert!(t.free_threaded_has(&v("3.13"), &v("2.12.0")));
        assert!(!t.free_threaded_has(&v("3.13"), &v("2.12.1")));
        assert!(!t.free_threaded_has(&v("3.13"), &v("2.13.0")));
        assert!(t.free_threaded_has(&v("3.14"), &v("2.15.0")));
        assert!(!t.free_threaded_has(&v("3.15"), &v("2.15.0")));
        assert!(t.pytorch.free_threaded.iter().all(|r| !r.source.is_empty()));

        let with_ft = |change: &dyn Fn(&mut Vec<FreeThreaded>)| {
            let mut t = Tables::embedded().unwrap();
            change(&mut t.pytorch.free_threaded);
            all(&t)
        };
        let e = problem(with_ft(&|r| r[0].python = v("3.12")));
        assert!(e.contains("begins with 3.13"), "{e}");
        let e = problem(with_ft(&|r| r[0].torch_to = v("2.6.0")));
        assert!(e.contains("above torch_to"), "{e}");
        let e = problem(with_ft(&|r| r[0].torch_to = v("2.12.9")));
        assert!(e.contains("not a patch"), "{e}");
        let e = problem(with_ft(&|r| r[0].torch_to = v("2.12")));
        assert!(e.contains("torch_to"), "{e}");
        // torch 2.7 supports Python 3.9 to 3.13: no cp314t wheel can be of it.
        let e = problem(with_ft(&|r| r[1].torch_from = v("2.7.0")));
        assert!(e.contains("not 3.14"), "{e}");
        let e = problem(with_ft(&|r| r[1].source = " ".into()));
        assert!(e.contains("source"), "{e}");
        let e = problem(with_ft(&|r| r.swap(0, 1)));
        assert!(e.contains("sorted"), "{e}");
        let e = problem(with_ft(&|r| {
            let mut again = r[0].clone();
            again.torch_from = v("2.10.0");
            again.torch_to = v("2.12.0");
            r.insert(1, again);
        }));
        assert!(e.contains("overlap"), "{e}");
    }

    /// The figures of dossier §1.2/§2: minimums apart from what the installers carry.
    #[test]
    fn the_tables_hold_the_dossier_figures() {
        let t = Tables::embedded().unwrap();
        let r = |s: &str| t.toolkit(&s.parse().unwrap()).unwrap();
        let s = |v: Option<&Version>| v.map(ToString::to_string);
        let o = |x: &str| Some(x.to_string());
        assert_eq!(s(r("12.8.0").driver_min(Os::Linux)), o("570.26"));
        assert_eq!(s(r("12.8.0").carried_driver(Os::Linux)), o("570.86.10"));
        assert_eq!(s(r("12.8.0").driver_min(Os::Windows)), o("570.65"));
        assert_eq!(s(r("12.8.0").carried_driver(Os::Windows)), o("571.96"));
        for v in ["12.3.2", "12.8.2", "12.9.2", "13.0.3", "13.1.2"] {
            assert_eq!(r(v).driver_min(Os::Linux), None, "{v}");
            assert!(r(v).carried_driver(Os::Linux).is_some(), "{v}");
        }
        assert_eq!(s(r("13.0.3").carried_driver(Os::Linux)), o("580.126.20"));
        for rel in &t.toolkits.releases {
            if rel.version.major() >= 13 {
                assert_eq!(rel.carried_driver(Os::Windows), None, "{}", rel.version);
            }
            if rel.version >= "13.4.1".parse().unwrap() {
                assert_eq!(rel.carried_driver(Os::Linux), None, "{}", rel.version);
            }
            assert!(!rel.sm.is_empty(), "{}: no exact list", rel.version);
        }
        let arch = |n: &str| t.gpus.architectures.iter().find(|a| a.name == n).unwrap();
        assert_eq!(arch("Kepler").last_branch, Some(470));
        for n in ["Maxwell", "Pascal", "Volta"] {
            assert_eq!(arch(n).last_branch, Some(580), "{n}");
        }
        assert_eq!(arch("Turing").last_branch, None);
    }
}
