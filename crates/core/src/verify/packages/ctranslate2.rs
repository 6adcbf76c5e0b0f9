//! CTranslate2's GPU check, second part (#33): `get_cuda_device_count()` asks only the
//! CUDA runtime (statically linked) and the driver, so it answers 1 on a machine without
//! cuBLAS. CTranslate2 loads cuBLAS by name when a model first runs — `dlopen` of
//! `libcublas.so.N` on Linux, `LoadLibraryA` of `cublas64_N.dll` on Windows
//! (src/cuda/cublas_stub.cc, built with `CUDA_DYNAMIC_LOADING`; CONTRIBUTING.md, "CUDA
//! support in Python wheels": https://github.com/OpenNMT/CTranslate2/blob/master/CONTRIBUTING.md)
//! — and links cuDNN's `libcudnn.so.N` / `cudnn64_N.dll` (CMakeLists.txt: "libcudnn.so is a
//! shim layer that dynamically loads the correct library at runtime, so we explicitly link
//! against it even with CUDA_DYNAMIC_LOADING").
//!
//! So when the count is not 0, the core names the libraries the installed version will
//! load — by the CUDA and cuDNN majors its findings judge it by (`gpu-packages.toml`) —
//! and the probe runs a second time, loading each by name the way CTranslate2 does, in a
//! child that imported ctranslate2 first. A failure comes back in CTranslate2's own words
//! (`Library cublas64_12.dll is not found or cannot be loaded`), which `libraries.rs`
//! walks to the missing file.

use std::path::Path;
use std::time::Duration;

use super::findings::{Context, needs_of};
use super::{PackagesProbe, parse_probe_output};
use crate::platform::Host;
use crate::verify::loader;

/// The probe's argument that asks for this check alone, followed by the library names.
pub const LOAD_ARG: &str = "--load-ctranslate2";

/// The libraries ctranslate2 at the version installed will load, for the interpreter's
/// OS: cuBLAS of its CUDA major, then cuDNN of its cuDNN major. None when it is not
/// installed, its GPU count was not positive (nothing to add), or its CUDA major is not
/// known (no rule: nothing is guessed).
pub fn libraries_to_load(cx: &Context) -> Option<Vec<String>> {
    let p = cx.probe.installed("ctranslate2")?;
    let check = cx.probe.checks.get("ctranslate2")?;
    if !(check.ok && check.devices.unwrap_or(0) > 0) {
        return None;
    }
    let os = cx.probe.interpreter(cx.os, cx.python).os;
    let (cuda, cudnn) = needs_of(cx, p);
    let mut names = vec![loader::library_file(os, "cublas", cuda?)];
    names.extend(cudnn.map(|c| loader::library_file(os, "cudnn", c)));
    Some(names)
}

/// Runs the probe's library loads for ctranslate2 and puts its answer in `probe` in
/// place of the device count's. A second run that gives no answer leaves the first, with
/// why in its detail.
pub fn load(
    host: &Host,
    python: &Path,
    check: Duration,
    names: &[String],
    probe: &mut PackagesProbe,
) {
    let secs = check.as_secs().max(1).to_string();
    let mut args: Vec<&str> = vec!["-c", super::PROBE_SCRIPT, &secs, LOAD_ARG];
    args.extend(names.iter().map(String::as_str));
    let answer = host
        .run(python, &args, check + Duration::from_secs(30))
        .map_err(|e| e.to_string())
        .and_then(|out| {
            parse_probe_output(&out.stdout)
                .and_then(|mut p| p.checks.remove("ctranslate2"))
                .ok_or_else(|| format!("no answer (exit {:?})", out.status))
        });
    let Some(first) = probe.checks.get_mut("ctranslate2") else {
        return;
    };
    match answer {
        Ok(mut c) => {
            // The count is the first run's, when the second did not say.
            c.devices = c.devices.or(first.devices);
            *first = c;
        }
        Err(why) => {
            first.detail = Some(format!(
                "loading {} as CTranslate2 does was not checked: {why}",
                names.join(", ")
            ));
        }
    }
}
