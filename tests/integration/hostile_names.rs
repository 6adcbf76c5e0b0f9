//! Issue 30, class 6: entry names Windows cannot hold as the file they say — a device
//! (`aux.h`, `CON.dll`, `COM¹.h`), an 8.3 alias (`CUDNN6~1.DLL`), a stream (`a.h:x`), a
//! trailing dot or space — are refused on every OS, in NVIDIA's cuDNN zip, its cuDNN
//! wheel, its Linux tarball and the toolkit's wheels, before anything is written. The
//! archives are real (NVIDIA's layouts, built here), the command is the real binary.

use crate::support;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::Output;

use support::cudnn_zip::{Spec, toolkit, write_zip};

/// The names of the issue and their kin, each as (folder under the archive's top, file).
const BAD: &[(&str, &str)] = &[
    ("include", "aux.h"),
    ("bin", "CON.dll"),
    ("include", "COM¹.h"),
    ("bin", "CUDNN6~1.DLL"),
    ("include", "AUX .h"),
    ("include", "lpt0.h"),
    ("include", "cudnn_x.h."),
    ("include", "cudnn_x.h "),
    ("include", "cudnn.h:evil.h"),
];

const SPEC: Spec = Spec {
    version: "9.10.2.21",
    cuda_major: 12,
    dll_size: 20_000,
};

/// Everything under `dir`, folders and links included (path → bytes, `<dir>`, `-> to`):
/// "nothing written" means this is unchanged.
fn everything(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            let t = e.file_type().unwrap();
            if t.is_symlink() {
                let to = std::fs::read_link(&p).unwrap();
                out.insert(rel, format!("-> {}", to.display()).into_bytes());
            } else if t.is_dir() {
                out.insert(rel, b"<dir>".to_vec());
                stack.push(p);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn cli(args: &[&str]) -> Output {
    support::cli::run(args)
}

use support::cli::text;

/// `cuda-setup cudnn install --archive ARCHIVE --cuda-dir DIR` must refuse, name the
/// entry and say why, and leave DIR exactly as it was.
fn refused_untouched(archive: &Path, dir: &Path, entry: &str) {
    let before = everything(dir);
    let out = cli(&[
        "cudnn",
        "install",
        "--archive",
        archive.to_str().unwrap(),
        "--cuda-dir",
        dir.to_str().unwrap(),
    ]);
    let t = text(&out);
    assert_ne!(out.status.code(), Some(0), "{entry:?} installed: {t}");
    assert!(
        t.contains(entry),
        "the message does not name {entry:?}: {t}"
    );
    assert!(t.contains("cannot be a file on Windows"), "{entry:?}: {t}");
    assert!(t.contains("hint: "), "{t}");
    assert_eq!(
        everything(dir),
        before,
        "{entry:?}: the toolkit folder changed"
    );
}

/// A zip's members: (name, bytes).
fn members(path: &Path) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    (0..z.len())
        .map(|i| {
            let mut e = z.by_index(i).unwrap();
            let mut b = Vec::new();
            e.read_to_end(&mut b).unwrap();
            (String::from_utf8_lossy(e.name_raw()).into_owned(), b)
        })
        .collect()
}

#[test]
fn a_cudnn_zip_with_a_name_windows_cannot_hold_is_refused_and_writes_nothing() {
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "12.4.1");
    let top = SPEC.top();
    for (i, (folder, file)) in BAD.iter().enumerate() {
        let mut files = SPEC.files();
        let entry = format!("{top}/{folder}/{file}");
        files.push((entry.clone(), b"planted".to_vec()));
        let zip = w.path().join(format!("bad-{i}.zip"));
        write_zip(&zip, &files, true);
        refused_untouched(&zip, &dir, &entry);
    }
    // A folder on the way counts too: `include/nul/` is the device on Windows.
    let mut files = SPEC.files();
    files.push((format!("{top}/include/nul/cudnn_x.h"), b"x".to_vec()));
    let zip = w.path().join("folder.zip");
    write_zip(&zip, &files, true);
    refused_untouched(&zip, &dir, &format!("{top}/include/nul/"));
    // The same archive without them installs (the rule refuses only what it says).
    let good = w.path().join("good.zip");
    SPEC.write(&good);
    let out = cli(&[
        "cudnn",
        "install",
        "--archive",
        good.to_str().unwrap(),
        "--cuda-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn a_cudnn_wheel_with_a_name_windows_cannot_hold_is_refused_and_writes_nothing() {
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "13.0.2");
    let made = w.path().join("made");
    std::fs::create_dir_all(&made).unwrap();
    let name = support::cudnn_zip::write_cudnn_wheel(&made, "9.27.0.42", 13, true);
    let real = members(&made.join(&name));
    for (i, (folder, file)) in BAD.iter().enumerate() {
        let mut files = real.clone();
        let entry = format!("nvidia/cudnn/{folder}/{file}");
        files.push((entry.clone(), b"planted".to_vec()));
        let sub = w.path().join(format!("w{i}"));
        std::fs::create_dir_all(&sub).unwrap();
        let wheel = sub.join(&name);
        write_zip(&wheel, &files, false);
        refused_untouched(&wheel, &dir, &entry);
    }
}

/// A name we make from an entry's is judged as an entry's: NVIDIA's cuDNN wheel gets an
/// import library per DLL (`cudnn_ops64_9.dll` → `cudnn_ops.lib`); a DLL `con64_9.dll`
/// (a fine name) must not get `con.lib` (a device on Windows). The rest installs.
#[test]
fn no_import_library_is_made_under_a_device_name() {
    let w = tempfile::tempdir().unwrap();
    let dir = toolkit(w.path(), "13.0.2");
    let made = w.path().join("made");
    std::fs::create_dir_all(&made).unwrap();
    let name = support::cudnn_zip::write_cudnn_wheel(&made, "9.27.0.42", 13, true);
    let mut files = members(&made.join(&name));
    files.push((
        "nvidia/cudnn/bin/con64_9.dll".into(),
        support::cudnn_zip::wheel_dll("con64_9.dll", 7),
    ));
    let wheel = w.path().join(&name);
    write_zip(&wheel, &files, false);
    let out = cli(&[
        "cudnn",
        "install",
        "--archive",
        wheel.to_str().unwrap(),
        "--cuda-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let libs: Vec<String> = std::fs::read_dir(dir.join("lib/x64"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(libs.iter().any(|l| l == "cudnn_ops.lib"), "{libs:?}");
    assert!(
        !libs.iter().any(|l| l.eq_ignore_ascii_case("con.lib")),
        "a device name was made: {libs:?}"
    );
    assert!(dir.join("bin/x64/con64_9.dll").exists() || dir.join("bin/con64_9.dll").exists());
}

#[cfg(unix)]
#[test]
fn a_linux_cudnn_tarball_with_a_name_windows_cannot_hold_is_refused_and_writes_nothing() {
    use support::cudnn_tar::{Item, LinuxSpec, linux_toolkit, write_tar_xz};
    let spec = LinuxSpec {
        version: "9.10.2.21",
        cuda_major: 12,
        lib_size: 10_000,
    };
    let w = tempfile::tempdir().unwrap();
    let dir = linux_toolkit(w.path(), "12.4.1");
    let top = spec.top();
    let mut cases: Vec<(Item, String)> = BAD
        .iter()
        .filter(|(folder, _)| *folder == "include")
        .map(|(_, file)| {
            let entry = format!("{top}/include/{file}");
            (Item::File(entry.clone(), b"planted".to_vec()), entry)
        })
        .collect();
    // Shared libraries named as devices or aliases, and a link to one.
    for lib in ["lib/libcudnn~1.so", "lib/libcudnn_x.so.9 "] {
        let entry = format!("{top}/{lib}");
        cases.push((Item::File(entry.clone(), b"planted".to_vec()), entry));
    }
    let link = format!("{top}/lib/libcudnn_y.so");
    cases.push((
        Item::Symlink(link.clone(), "CON.so".into()),
        link.to_string(),
    ));
    for (i, (item, entry)) in cases.into_iter().enumerate() {
        let mut items = spec.items();
        items.push(item);
        let file = w.path().join(format!("bad-{i}.tar.xz"));
        write_tar_xz(&file, &items);
        let before = everything(&dir);
        let out = cli(&[
            "cudnn",
            "install",
            "--archive",
            file.to_str().unwrap(),
            "--cuda-dir",
            dir.to_str().unwrap(),
        ]);
        let t = text(&out);
        assert_ne!(out.status.code(), Some(0), "{entry:?} installed: {t}");
        assert!(t.contains(&entry), "{entry:?} not named: {t}");
        assert!(
            t.contains("cannot be a file on Windows") || t.contains("Windows cannot hold"),
            "{entry:?}: {t}"
        );
        assert_eq!(everything(&dir), before, "{entry:?}: the toolkit changed");
    }
}

/// The toolkit's own wheels: a runtime wheel carrying one more header whose name Windows
/// cannot hold. The install stops before the toolkit folder exists.
#[cfg(unix)]
#[test]
fn a_toolkit_wheel_with_a_name_windows_cannot_hold_is_refused_and_writes_nothing() {
    for (i, file) in ["aux.h", "CON.dll", "COM¹.h", "CUDNN6~1.DLL", "x.h:s"]
        .iter()
        .enumerate()
    {
        let tmp = tempfile::tempdir().unwrap();
        let wheels = tmp.path().join("wheels");
        support::wheels::standin(&wheels, "13.5.37", true);
        // Re-made with the planted entry beside the real ones (METADATA and RECORD kept
        // as a wheel builder writes them).
        let runtime = std::fs::read_dir(&wheels)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("nvidia_cuda_runtime-")
            })
            .unwrap();
        let entry = format!("nvidia/cu13/include/{file}");
        let mut files: Vec<(String, Vec<u8>)> = members(&runtime)
            .into_iter()
            .filter(|(n, _)| !n.contains(".dist-info/"))
            .collect();
        files.push((entry.clone(), b"planted".to_vec()));
        let list: Vec<(&str, &[u8], bool)> = files
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice(), false))
            .collect();
        support::wheels::write_wheel(
            &runtime,
            "Metadata-Version: 2.4\nName: nvidia-cuda-runtime\nVersion: 13.5.37\n",
            &list,
        );
        let server = support::wheels::serve(&support::wheels::files(&[&wheels]));
        let root = tmp.path().join("root");
        std::fs::create_dir_all(&root).unwrap();
        let index = server.url("/simple");
        let out = cli(&[
            "install",
            "--unattended",
            "--goal",
            "developer",
            "--cuda",
            "13.5",
            "--method",
            "wheels",
            "--pypi-mirror",
            &index,
            "--components",
            "nvcc,cudart",
            "--driver",
            "600.00",
            "--gpu-cc",
            "8.6",
            "--os",
            "linux",
            "--root",
            root.to_str().unwrap(),
            "--connections",
            "2",
            "--no-cudnn",
        ]);
        let t = text(&out);
        assert_ne!(out.status.code(), Some(0), "{i}: {entry:?} installed: {t}");
        assert!(t.contains(&entry), "{entry:?} not named: {t}");
        assert!(t.contains("cannot be a file on Windows"), "{t}");
        let local = root.join("usr/local");
        assert!(
            !local.join("cuda-13.5").exists(),
            "{entry:?}: a toolkit folder was made"
        );
        let left: Vec<String> = std::fs::read_dir(&local)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        assert!(left.is_empty(), "{entry:?}: left in usr/local: {left:?}");
    }
}

/// Every entry name of NVIDIA's real wheels (the toolkit's, cached by
/// `support::wheels::cached`, and any `.whl`/`.zip` under the folders in
/// `CUDA_SETUP_SCAN_ARCHIVES`, `:`-separated) passes the name check: the rule refuses
/// no real name. Prints how many were checked.
#[test]
#[ignore = "needs PyPI: NVIDIA's real wheels; scripts/real-artifacts.sh runs it"]
fn real_nvidia_wheels_every_entry_name_passes_the_windows_name_check() {
    use support::wheels::{Platform, cached};
    let mut dirs = vec![cached(Platform::Linux), cached(Platform::Windows)];
    if let Ok(more) = std::env::var("CUDA_SETUP_SCAN_ARCHIVES") {
        dirs.extend(more.split(':').filter(|d| !d.is_empty()).map(Into::into));
    }
    let (mut archives, mut names, mut bad) = (0, 0, Vec::new());
    for d in &dirs {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            let n = p.to_string_lossy();
            if !(n.ends_with(".whl") || n.ends_with(".zip")) {
                continue;
            }
            archives += 1;
            let mut z = zip::ZipArchive::new(std::fs::File::open(&p).unwrap()).unwrap();
            for i in 0..z.len() {
                let name =
                    String::from_utf8_lossy(z.by_index_raw(i).unwrap().name_raw()).into_owned();
                names += 1;
                if let Err(why) = cuda_setup_core::safe_path::entry_path(&name) {
                    bad.push(format!("{}: {name}: {why}", p.display()));
                }
            }
        }
    }
    eprintln!("checked {names} entry names of {archives} real archives");
    assert!(
        archives >= 12 && names > 1000,
        "{archives} archives, {names} names"
    );
    assert!(bad.is_empty(), "real names refused:\n{}", bad.join("\n"));
}
