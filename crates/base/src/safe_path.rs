//! Names and paths that come from outside (a package index, a URL, a server header, a
//! manifest, our own state files on disk) are input, never paths we trust. This module is
//! the one checker: a *name* must be one file-name component that is the same file on
//! Windows and Linux; a *relative path* is made of such components; a path *inside* a
//! root must not leave it, also not through a symbolic link already on disk.

use std::path::{Component, Path, PathBuf};

/// Why a name or path from outside was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum Unsafe {
    #[error("{:?} is empty", crate::shown::value(.name))]
    Empty { name: String },
    #[error("{:?} is longer than {max} bytes", crate::shown::value(.name))]
    TooLong { name: String, max: usize },
    #[error("{:?} contains a path separator", crate::shown::value(.name))]
    Separator { name: String },
    #[error("{:?} is `.` or `..`", crate::shown::value(.name))]
    Dots { name: String },
    #[error("{:?} names a drive or a Windows device path", crate::shown::value(.name))]
    Drive { name: String },
    #[error("{:?} contains a character Windows does not allow in file names", crate::shown::value(.name))]
    BadChar { name: String },
    #[error("{:?} is a name Windows reserves for a device", crate::shown::value(.name))]
    Reserved { name: String },
    #[error(
        "{:?} has the shape of a Windows short name (8.3), which can stand for another file",
        crate::shown::value(.name)
    )]
    ShortName { name: String },
    #[error(
        "{:?} names an alternate data stream (`:`), a hidden part of another file on Windows",
        crate::shown::value(.name)
    )]
    Stream { name: String },
    #[error("{:?} ends with a dot or a space, which Windows drops", crate::shown::value(.name))]
    TrailingDot { name: String },
    #[error("{:?} is absolute", crate::shown::value(.path))]
    Absolute { path: String },
    #[error("{:?} leaves {root:?}", crate::shown::value(.path))]
    Outside { path: String, root: String },
    #[error("{:?} passes through a symbolic link ({link:?})", crate::shown::value(.path))]
    Link { path: String, link: String },
}

/// The longest file-name component we accept (NTFS and ext4 allow 255).
pub const MAX_NAME: usize = 255;

/// Windows' reserved device names, refused with any extension (`CON.txt`, `nul.whl`).
/// `COM`/`LPT` take a digit 0–9 or the superscripts ¹ ² ³ (Windows reads `COM¹` as a
/// port too): see [`is_reserved`].
const RESERVED: &[&str] = &["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"];

/// Whether Windows opens a device for a name whose part before the first dot is `stem`
/// (`aux.h`, `AUX .h`, `aux.tar.gz`, `com¹.h` all name one). Trailing spaces before the
/// dot are dropped by Windows, so by us too.
fn is_reserved(stem: &str) -> bool {
    let stem = stem.trim_end_matches(' ');
    if RESERVED.iter().any(|r| r.eq_ignore_ascii_case(stem)) {
        return true;
    }
    let mut chars = stem.chars();
    let head: String = chars.by_ref().take(3).collect();
    let digit = chars.next();
    (head.eq_ignore_ascii_case("COM") || head.eq_ignore_ascii_case("LPT"))
        && matches!(digit, Some('0'..='9' | '¹' | '²' | '³'))
        && chars.next().is_none()
}

/// Whether `stem` (the part before the first dot) has a `~` followed by a digit, the mark
/// of an 8.3 alias (`PROGRA~1`, `CUDNN6~1.DLL`): on a volume with short names on, writing
/// it could open the long-named file it stands for.
fn is_short_name(stem: &str) -> bool {
    let b = stem.as_bytes();
    b.windows(2).any(|w| w[0] == b'~' && w[1].is_ascii_digit())
}

/// `name` as one safe file-name component, or why not. Checked as both Windows and Linux
/// would read it, so a name accepted on Linux is the same single file on Windows.
pub fn file_name(name: &str) -> Result<&str, Unsafe> {
    let n = || name.to_string();
    if name.is_empty() {
        return Err(Unsafe::Empty { name: n() });
    }
    if name.len() > MAX_NAME {
        return Err(Unsafe::TooLong {
            name: n(),
            max: MAX_NAME,
        });
    }
    if name == "." || name == ".." {
        return Err(Unsafe::Dots { name: n() });
    }
    if name.contains(['/', '\\']) {
        return Err(Unsafe::Separator { name: n() });
    }
    if name.contains(':') {
        // `C:x` is relative to drive C's current folder; `a.h:x` a stream of `a.h`.
        let drive =
            name.as_bytes()[0].is_ascii_alphabetic() && name.as_bytes().get(1) == Some(&b':');
        return Err(if drive {
            Unsafe::Drive { name: n() }
        } else {
            Unsafe::Stream { name: n() }
        });
    }
    if name
        .chars()
        .any(|c| c.is_control() || matches!(c, '<' | '>' | '"' | '|' | '?' | '*'))
    {
        return Err(Unsafe::BadChar { name: n() });
    }
    if name.ends_with('.') || name.ends_with(' ') {
        return Err(Unsafe::TrailingDot { name: n() });
    }
    let stem = name.split('.').next().unwrap_or(name);
    if is_reserved(stem) {
        return Err(Unsafe::Reserved { name: n() });
    }
    if is_short_name(stem) {
        return Err(Unsafe::ShortName { name: n() });
    }
    Ok(name)
}

/// A path inside an archive or a wheel (`top/include/cudnn.h`, a folder's `top/include/`):
/// every component must be a [`file_name`], so the same archive is safe to unpack on
/// Windows whatever OS checks it. Empty components (`a//b`, the trailing `/` of a folder)
/// are skipped; `\`, absolute paths and `..` are refused as part of a component.
pub fn entry_path(path: &str) -> Result<(), Unsafe> {
    if path.starts_with('/') {
        return Err(Unsafe::Absolute {
            path: path.to_string(),
        });
    }
    let mut any = false;
    for part in path.split('/').filter(|p| !p.is_empty()) {
        file_name(part)?;
        any = true;
    }
    if !any {
        return Err(Unsafe::Empty {
            name: path.to_string(),
        });
    }
    Ok(())
}

/// The last segment of a URL's path (query and fragment dropped, percent-decoding
/// applied), checked with [`file_name`].
pub fn file_name_from_url(url: &str) -> Result<String, Unsafe> {
    let no_frag = url.split('#').next().unwrap_or(url);
    let no_query = no_frag.split('?').next().unwrap_or(no_frag);
    let last = no_query.rsplit('/').next().unwrap_or("");
    let decoded = percent_decode(last);
    file_name(&decoded)?;
    Ok(decoded)
}

/// `%XX` decoded; anything malformed is kept as it is (and then judged as a name).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A relative path (separators `/` or `\`) whose every component is a safe name.
pub fn relative(path: &str) -> Result<PathBuf, Unsafe> {
    if path.starts_with(['/', '\\']) || Path::new(path).is_absolute() {
        return Err(Unsafe::Absolute {
            path: path.to_string(),
        });
    }
    let mut out = PathBuf::new();
    for part in path.split(['/', '\\']) {
        if part.is_empty() {
            continue; // `a//b`, a trailing slash
        }
        out.push(file_name(part)?);
    }
    if out.as_os_str().is_empty() {
        return Err(Unsafe::Empty {
            name: path.to_string(),
        });
    }
    Ok(out)
}

/// `root` joined with `rel`, refused if `rel` is absolute, climbs out with `..`, or passes
/// through a symbolic link that exists on disk (a link could lead anywhere). The final
/// component may itself be a link (our cuDNN manifest records links as links); only the
/// folders on the way must be real folders.
pub fn inside(root: &Path, rel: &Path) -> Result<PathBuf, Unsafe> {
    let shown = || rel.display().to_string();
    let mut out = root.to_path_buf();
    let comps: Vec<Component> = rel.components().collect();
    if comps.is_empty() {
        return Err(Unsafe::Empty { name: shown() });
    }
    for (i, c) in comps.iter().enumerate() {
        match c {
            Component::Normal(part) => {
                let s = part.to_string_lossy();
                file_name(&s)?;
                out.push(part);
                let last = i + 1 == comps.len();
                if !last
                    && std::fs::symlink_metadata(&out).is_ok_and(|m| m.file_type().is_symlink())
                {
                    return Err(Unsafe::Link {
                        path: shown(),
                        link: out.display().to_string(),
                    });
                }
            }
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(Unsafe::Outside {
                    path: shown(),
                    root: root.display().to_string(),
                });
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(Unsafe::Absolute { path: shown() });
            }
        }
    }
    Ok(out)
}

/// Like [`inside`] for a path stored as text (`a/b\c`), as our state files keep them.
pub fn inside_str(root: &Path, rel: &str) -> Result<PathBuf, Unsafe> {
    let r = relative(rel)?;
    inside(root, &r)
}

/// Like [`inside_str`], but a folder on the way may be a symbolic link that resolves
/// inside `root` (NVIDIA's Linux toolkit: `lib64 -> targets/x86_64-linux/lib`); one
/// that leads out, or nowhere, is refused. The final component may be a link (it is
/// moved or removed as a link, never followed).
pub fn resolves_inside(root: &Path, rel: &str) -> Result<PathBuf, Unsafe> {
    let out = root.join(relative(rel)?);
    let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    // The deepest folder on the way that exists decides: below it nothing exists, so
    // nothing can be a link.
    let mut at = out.parent();
    while let Some(p) = at.filter(|p| p.starts_with(root)) {
        if std::fs::symlink_metadata(p).is_ok() {
            let leads_out = std::fs::canonicalize(p).map_or(true, |r| !r.starts_with(&real_root));
            if leads_out {
                return Err(Unsafe::Link {
                    path: rel.to_string(),
                    link: p.display().to_string(),
                });
            }
            break;
        }
        at = p.parent();
    }
    Ok(out)
}

/// An absolute path read from a state file must lie under `root` (checked by components,
/// not by string prefix, so `/a/bc` is not inside `/a/b`), with no `..` on the way.
pub fn under(root: &Path, path: &Path) -> Result<PathBuf, Unsafe> {
    let outside = || Unsafe::Outside {
        path: path.display().to_string(),
        root: root.display().to_string(),
    };
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(outside());
    }
    let rel = path.strip_prefix(root).map_err(|_| outside())?;
    inside(root, rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in [
            "cuda_toolkit-13.5.0-py3-none-any.whl",
            "cudnn_ops64_9.dll",
            "libcudnn.so.9",
            "张三.txt",
            ".part.json",
            "console.log",
        ] {
            assert_eq!(file_name(ok), Ok(ok), "{ok}");
        }
        for bad in [
            "", ".", "..", "a/b", "..\\x", "C:x", "x\0y", "nul", "CON.txt", "com1.whl", "lpt9",
            "name.", "name ", "a|b", "a*b", "a?b",
        ] {
            assert!(file_name(bad).is_err(), "{bad:?} accepted");
        }
        assert!(file_name(&"a".repeat(256)).is_err());
    }

    /// Issue 30: what Windows cannot hold as the file it says, refused on every OS.
    #[test]
    fn names_windows_cannot_hold() {
        let why = |n: &str| file_name(n).map(|_| ()).map_err(|e| format!("{e:?}"));
        for dev in [
            "aux.h",
            "AUX",
            "Aux.tar.gz",
            "AUX .h",
            "aux  .h",
            "CON.dll",
            "con",
            "prn.txt",
            "NUL.whl",
            "COM0",
            "com9.h",
            "LPT0.x",
            "lpt5",
            "COM¹.h",
            "com².h",
            "LPT³",
            "lpt¹.dll",
            "CONIN$",
            "conout$.txt",
        ] {
            assert!(
                matches!(file_name(dev), Err(Unsafe::Reserved { .. })),
                "{dev:?}: {:?}",
                why(dev)
            );
        }
        for short in [
            "CUDNN6~1.DLL",
            "PROGRA~1",
            "progra~12",
            "a~1.h",
            "LIBCUD~1.SO",
            "x~9z.h",
        ] {
            assert!(
                matches!(file_name(short), Err(Unsafe::ShortName { .. })),
                "{short:?}: {:?}",
                why(short)
            );
        }
        for stream in ["a.h:evil", "cudnn.h:$DATA", "dir::$INDEX_ALLOCATION"] {
            assert!(
                matches!(file_name(stream), Err(Unsafe::Stream { .. })),
                "{stream:?}"
            );
        }
        assert!(matches!(file_name("C:x"), Err(Unsafe::Drive { .. })));
        for trailing in ["cudnn.h.", "cudnn.h ", "bin ", "x.."] {
            assert!(
                matches!(file_name(trailing), Err(Unsafe::TrailingDot { .. })),
                "{trailing:?}"
            );
        }
        // NVIDIA's real names, and near misses of the rules above.
        for ok in [
            "cudnn_ops64_9.dll",
            "libcudnn.so.9.1.0",
            "cublasLt64_12.dll",
            "nvrtc-builtins64_124.dll",
            "__cccl",
            "auxiliary.h",
            "aux_.h",
            "console.h",
            "com10.h",
            "COM",
            "lpt",
            "COM1x.h",
            "LPT⁴.h",
            "x.aux",
            "file~.h",
            "a~b.h",
            "x.~1",
            "backup.h~",
            "nul_device.cpp",
        ] {
            assert_eq!(file_name(ok), Ok(ok), "{ok}");
        }
    }

    #[test]
    fn entry_paths() {
        for ok in [
            "cudnn-windows-x86_64-9.10.2.21_cuda12-archive/bin/cudnn64_9.dll",
            "nvidia/cu13/include/cuda/std/__cccl/config.h",
            "nvidia_cudnn_cu12-9.1.0.70.dist-info/RECORD",
            "top/include/",
        ] {
            assert_eq!(entry_path(ok), Ok(()), "{ok}");
        }
        for bad in [
            "top/include/aux.h",
            "top/bin/CON.dll",
            "top/include/COM¹.h",
            "top/bin/CUDNN6~1.DLL",
            "top/PROGRA~1/x.h",
            "top/nul/x.h",
            "top/include./x.h",
            "top/include /x.h",
            "top/include/cudnn.h:s",
            "top/../x",
            "/etc/passwd",
            "a\\b",
            "",
            "/",
        ] {
            assert!(entry_path(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn url_names() {
        assert_eq!(
            file_name_from_url("https://x/y/cuda_12.4.1_551.78_windows.exe?token=1#f").unwrap(),
            "cuda_12.4.1_551.78_windows.exe"
        );
        assert!(file_name_from_url("https://x/a/..%2F..%2Fevil.whl").is_err());
        assert!(file_name_from_url("https://x/a/%2e%2e").is_err());
        assert!(file_name_from_url("https://x/dir/").is_err());
        assert_eq!(
            file_name_from_url("https://x/a%20b.zip").unwrap(),
            "a b.zip"
        );
    }

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative("bin/x64/a.dll").unwrap(),
            Path::new("bin/x64/a.dll")
        );
        assert_eq!(
            relative("lib\\x64\\a.lib").unwrap(),
            Path::new("lib/x64/a.lib")
        );
        for bad in [
            "../victim.txt",
            "/etc/passwd",
            "\\x",
            "a/../../b",
            "C:/x",
            "a/CON/b",
            "",
        ] {
            assert!(relative(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn inside_a_root() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("root");
        std::fs::create_dir_all(root.join("lib")).unwrap();
        assert_eq!(
            inside(&root, Path::new("lib/a.so")).unwrap(),
            root.join("lib/a.so")
        );
        assert!(inside(&root, Path::new("../x")).is_err());
        assert!(inside(&root, Path::new("/x")).is_err());
        assert!(under(&root, &root.join("lib/a")).is_ok());
        assert!(under(&root, &d.path().join("rootx/a")).is_err());
        assert!(under(&root, &root.join("lib/../../x")).is_err());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(d.path(), root.join("out")).unwrap();
            assert!(matches!(
                inside(&root, Path::new("out/victim")),
                Err(Unsafe::Link { .. })
            ));
            // A link as the last component is the file itself (cuDNN's lib links).
            assert!(inside(&root, Path::new("out")).is_ok());
            // A link that stays inside (NVIDIA's lib64 -> targets/…/lib) is fine when
            // resolved; one that leads out, or nowhere, is not.
            std::fs::create_dir_all(root.join("targets/lib")).unwrap();
            std::os::unix::fs::symlink("targets/lib", root.join("lib64")).unwrap();
            assert_eq!(
                resolves_inside(&root, "lib64/libcudnn.so.9").unwrap(),
                root.join("lib64/libcudnn.so.9")
            );
            assert!(resolves_inside(&root, "lib64/new/dir/x").is_ok());
            assert!(matches!(
                resolves_inside(&root, "out/victim"),
                Err(Unsafe::Link { .. })
            ));
            assert!(matches!(
                resolves_inside(&root, "out/a/b"),
                Err(Unsafe::Link { .. })
            ));
            std::os::unix::fs::symlink("nowhere", root.join("dangling")).unwrap();
            assert!(resolves_inside(&root, "dangling/x").is_err());
            assert!(resolves_inside(&root, "out").is_ok());
            assert!(resolves_inside(&root, "../x").is_err());
            assert!(resolves_inside(&root, "/x").is_err());
            assert!(resolves_inside(&d.path().join("none"), "a/b").is_ok());
        }
    }
}
