//! Windows only: the icon, version information and application manifest
//! (assets/windows/). Other targets get nothing.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=assets/windows");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("windows") {
        return;
    }
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let mut parts: Vec<String> = version
        .split(['.', '-', '+'])
        .take(3)
        .map(|p| p.parse::<u16>().unwrap_or(0).to_string())
        .collect();
    parts.resize(3, "0".into());
    parts.push("0".into());
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("assets")
        .join("windows");
    // Forward slashes: both windres and rc.exe take them, and they need no escaping.
    let dir_text = dir.display().to_string().replace('\\', "/");
    let template = match std::fs::read_to_string(dir.join("cuda-setup.rc")) {
        Ok(t) => t,
        Err(e) => {
            println!("cargo:warning=assets/windows/cuda-setup.rc: {e}");
            return;
        }
    };
    let rc = template
        .replace("@DIR@", &dir_text)
        .replace("@VERSION_COMMAS@", &parts.join(","))
        .replace("@VERSION@", &version);
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("cuda-setup.rc");
    if let Err(e) = std::fs::write(&out, rc) {
        println!("cargo:warning={}: {e}", out.display());
        return;
    }
    // A missing resource compiler (windres / rc.exe) must not stop a build: the .exe then
    // lacks its icon, manifest and version block, which the warning says.
    if let Err(e) = embed_resource::compile(&out, embed_resource::NONE).manifest_optional() {
        println!("cargo:warning=Windows resources not embedded (icon, manifest, version): {e}");
    }
}
