//! Jetson (Tegra) boards (#32, dossier §13.3): JetPack provides their driver, CUDA and
//! cuDNN, so the recommender must know it is on one. Two files say so: Jetson Linux's
//! release file (`/etc/nv_tegra_release`) and the device tree's board name. Both are read
//! as hostile input: regular files only, never through a link at the last component,
//! bounded, and parsed without trusting their shape.

use crate::compat::Os;
use crate::platform::Host;
use crate::recommend::HostKind;

/// Jetson Linux's release file: `# R36 (release), REVISION: 4.0, GCID: …`.
pub const TEGRA_RELEASE: &str = "/etc/nv_tegra_release";
/// The board's name from the device tree, NUL-terminated.
pub const DEVICE_TREE_MODEL: &str = "/proc/device-tree/model";

/// The most read of either file (the real ones are under 300 bytes).
const MAX_BYTES: u64 = 4096;
/// A board name longer than this is cut.
const MAX_MODEL_CHARS: usize = 120;

/// `HostKind::Jetson` when the host's files say it is a Jetson board: the release file
/// parses, or the device tree names a Jetson. None elsewhere (Windows, a PC, another Arm
/// board whose device tree names something else).
pub fn probe(host: &Host) -> Option<HostKind> {
    if host.os != Os::Linux {
        return None;
    }
    let read = |p: &str| {
        let path = host.system_path(p);
        match crate::place::read_regular(&path, MAX_BYTES) {
            Ok(bytes) => bytes,
            Err(e) => {
                tracing::debug!(error = %e, "detect: jetson file not read");
                None
            }
        }
    };
    let l4t = read(TEGRA_RELEASE).and_then(|b| parse_tegra_release(&String::from_utf8_lossy(&b)));
    let model = read(DEVICE_TREE_MODEL).and_then(|b| parse_model(&b));
    let named_jetson = model
        .as_deref()
        .is_some_and(|m| m.to_ascii_lowercase().contains("jetson"));
    (l4t.is_some() || named_jetson).then_some(HostKind::Jetson { model, l4t })
}

/// The L4T release in Jetson Linux's release file: `# R36 (release), REVISION: 4.0` →
/// `36.4.0`. None when its first line does not have that shape.
pub fn parse_tegra_release(text: &str) -> Option<String> {
    let line = text.lines().next()?.trim();
    let rest = line.strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix('R')?;
    let major: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let (_, after) = rest.split_once("REVISION:")?;
    let revision: String = after
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let revision = revision.trim_end_matches('.');
    let version = format!("{major}.{revision}");
    // Digits and dots in the shape of a version (1–4 numbers), nothing longer.
    let parts: Vec<&str> = version.split('.').collect();
    let ok = (2..=4).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 4 && p.bytes().all(|b| b.is_ascii_digit()));
    ok.then_some(version)
}

/// The board's name from the device tree's `model`: up to its NUL, printable characters
/// only, trimmed and cut. None when nothing printable is left.
pub fn parse_model(bytes: &[u8]) -> Option<String> {
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    let text = String::from_utf8_lossy(&bytes[..end]);
    let clean: String = text
        .chars()
        .filter(|c| !c.is_control() && *c != '\u{fffd}')
        .take(MAX_MODEL_CHARS)
        .collect();
    let clean = clean.trim();
    (!clean.is_empty()).then(|| clean.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_with(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Host) {
        let dir = tempfile::tempdir().unwrap();
        for (path, bytes) in files {
            let p = dir.path().join(path.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
        let host = Host::sandbox(Os::Linux, dir.path(), Default::default());
        (dir, host)
    }

    const ORIN_RELEASE: &str = "# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64, DATE: Fri Sep 13 04:36:44 UTC 2024\n# KERNEL_VARIANT: oot\nTARGET_USERSPACE_LIB_DIR=nvidia\n";

    #[test]
    fn the_release_file_gives_the_l4t_release() {
        assert_eq!(parse_tegra_release(ORIN_RELEASE).as_deref(), Some("36.4.0"));
        assert_eq!(
            parse_tegra_release("# R32 (release), REVISION: 7.1, GCID: 29818004").as_deref(),
            Some("32.7.1")
        );
        assert_eq!(
            parse_tegra_release("# R35 (release), REVISION: 4.1\n").as_deref(),
            Some("35.4.1")
        );
    }

    #[test]
    fn a_release_file_of_another_shape_gives_nothing() {
        for bad in [
            "",
            "\n# R36 (release), REVISION: 4.0",
            "R36 (release), REVISION: 4.0",
            "# R (release), REVISION: 4.0",
            "# R36 (release)",
            "# R36 (release), REVISION: ",
            "# R36 (release), REVISION: x.y",
            "# R36 (release), REVISION: 1.2.3.4.5",
            "# R123456 (release), REVISION: 4.0",
            "\u{0}\u{1}garbage\u{ff}",
        ] {
            assert_eq!(parse_tegra_release(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_model_stops_at_its_nul_and_keeps_printable_text() {
        assert_eq!(
            parse_model(b"NVIDIA Jetson AGX Orin Developer Kit\0").as_deref(),
            Some("NVIDIA Jetson AGX Orin Developer Kit")
        );
        // No NUL: the whole (bounded) text.
        assert_eq!(
            parse_model(b"NVIDIA Jetson Xavier NX Developer Kit").as_deref(),
            Some("NVIDIA Jetson Xavier NX Developer Kit")
        );
        // Control characters and invalid UTF-8 are dropped, what follows the NUL ignored.
        assert_eq!(
            parse_model(b"Jet\x1b[31mson\xff Orin\0\x1b[2Jrest").as_deref(),
            Some("Jet[31mson Orin")
        );
        assert_eq!(parse_model(b"\0NVIDIA Jetson"), None);
        assert_eq!(parse_model(b"\x01\x02 \xfe"), None);
        let long = vec![b'J'; 10_000];
        assert_eq!(parse_model(&long).unwrap().chars().count(), MAX_MODEL_CHARS);
    }

    #[test]
    fn a_jetson_root_is_a_jetson_host() {
        let (_d, host) = root_with(&[
            (TEGRA_RELEASE, ORIN_RELEASE.as_bytes()),
            (DEVICE_TREE_MODEL, b"NVIDIA Jetson AGX Orin Developer Kit\0"),
        ]);
        assert_eq!(
            probe(&host),
            Some(HostKind::Jetson {
                model: Some("NVIDIA Jetson AGX Orin Developer Kit".into()),
                l4t: Some("36.4.0".into()),
            })
        );
        // Either file alone says so.
        let (_d, host) = root_with(&[(TEGRA_RELEASE, ORIN_RELEASE.as_bytes())]);
        assert_eq!(
            probe(&host),
            Some(HostKind::Jetson {
                model: None,
                l4t: Some("36.4.0".into())
            })
        );
        let (_d, host) = root_with(&[(DEVICE_TREE_MODEL, b"NVIDIA Jetson Xavier NX\0")]);
        assert!(matches!(
            probe(&host),
            Some(HostKind::Jetson { l4t: None, .. })
        ));
    }

    #[test]
    fn other_roots_are_not_jetson() {
        let (_d, host) = root_with(&[]);
        assert_eq!(probe(&host), None);
        // Another Arm board's device tree.
        let (_d, host) = root_with(&[(DEVICE_TREE_MODEL, b"Raspberry Pi 4 Model B Rev 1.4\0")]);
        assert_eq!(probe(&host), None);
        // Garbage in the release file, no model.
        let (_d, host) = root_with(&[(TEGRA_RELEASE, b"\xff\xfe garbage\n")]);
        assert_eq!(probe(&host), None);
        // The same files seen from Windows say nothing.
        let (d, _) = root_with(&[(TEGRA_RELEASE, ORIN_RELEASE.as_bytes())]);
        let win = Host::sandbox(Os::Windows, d.path(), Default::default());
        assert_eq!(probe(&win), None);
    }

    #[test]
    fn a_huge_or_strange_file_is_not_read() {
        // Over the bound: refused before it is read; the model still says Jetson.
        let mut huge = ORIN_RELEASE.as_bytes().to_vec();
        huge.resize(8 << 20, b'x');
        let (_d, host) = root_with(&[
            (TEGRA_RELEASE, &huge),
            (DEVICE_TREE_MODEL, b"NVIDIA Jetson AGX Orin Developer Kit\0"),
        ]);
        assert!(matches!(
            probe(&host),
            Some(HostKind::Jetson { l4t: None, .. })
        ));
        // A directory where the file should be, and a link to a real release file.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("etc/nv_tegra_release")).unwrap();
        let host = Host::sandbox(Os::Linux, dir.path(), Default::default());
        assert_eq!(probe(&host), None);
        #[cfg(unix)]
        {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("etc")).unwrap();
            let real = dir.path().join("real");
            std::fs::write(&real, ORIN_RELEASE).unwrap();
            std::os::unix::fs::symlink(&real, dir.path().join("etc/nv_tegra_release")).unwrap();
            let host = Host::sandbox(Os::Linux, dir.path(), Default::default());
            assert_eq!(probe(&host), None);
        }
    }
}
