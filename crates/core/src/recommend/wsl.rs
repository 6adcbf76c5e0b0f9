//! WSL2 (#32, compat dossier §13.2): Linux inside Windows, whose GPU driver is the Windows
//! host's. Two things change, and nothing else:
//!
//! - **Driver numbers are Windows numbers.** NVML inside WSL2 reports the Windows driver's
//!   version (`512.95`), so every minimum, floor and branch is read from the tables'
//!   Windows columns ([`Facts::driver_os`]); the advice is "update the driver on Windows",
//!   with the Windows driver the Windows path would pick shown as a link, never run. No
//!   Linux driver package, command or `.run` is ever offered: NVIDIA says one installed
//!   inside WSL2 breaks the stub `/usr/lib/wsl/lib/libcuda.so.1`.
//! - **The toolkit has no driver in it.** NVIDIA's `wsl-ubuntu` repository's
//!   `cuda-toolkit-X-Y` (no driver dependency) is what the advice prints; the plan runs the
//!   runfile toolkit-only (`--silent --toolkit`, the step's only flags) or the wheels
//!   method. Never the `cuda`/`cuda-drivers` meta-packages, never the runfile's driver.

use serde::Serialize;

use super::{DriverAction, DriverInstall, Facts, Goal, HostKind, Recommendation};
use crate::compat::Os;
use crate::msg;

/// NVIDIA's CUDA repository for WSL2's Ubuntu, in the pattern of its other repositories
/// (`repos/<distro>/x86_64`, `cuda-keyring_1.1-1_all.deb`: `compat-tables/drivers-linux.toml`'s
/// sources; the `wsl-ubuntu` name: dossier §13.2).
pub const WSL_UBUNTU_REPO: &str =
    "https://developer.download.nvidia.com/compute/cuda/repos/wsl-ubuntu/x86_64";
/// The keyring package that adds the repository.
const KEYRING: &str = "cuda-keyring_1.1-1_all.deb";

/// What a WSL2 machine is told besides the usual picks.
#[derive(Debug, Clone, Serialize)]
pub struct WslAdvice {
    /// With the driver to install or update: the driver the Windows wizard would install
    /// (package, version, download), to be installed *on Windows*. Shown, never run.
    pub windows_driver: Option<DriverInstall>,
    /// Developer goal: the toolkit as NVIDIA's `wsl-ubuntu` repository has it.
    pub toolkit: Option<WslToolkit>,
}

/// The developer toolkit from NVIDIA's `wsl-ubuntu` repository.
#[derive(Debug, Clone, Serialize)]
pub struct WslToolkit {
    /// `cuda-toolkit-12-4`: the toolkit alone, no driver dependency.
    pub package: String,
    /// The exact commands, in order.
    pub commands: Vec<String>,
}

impl Facts {
    /// Whose numbers the driver has: Windows' inside WSL2 (the host's driver, as NVML
    /// reports it there), else this OS's.
    pub fn driver_os(&self) -> Os {
        if self.wsl2() { Os::Windows } else { self.os }
    }

    /// Linux inside WSL2.
    pub fn wsl2(&self) -> bool {
        self.host_kind == HostKind::Wsl2 && self.os == Os::Linux
    }
}

/// The catalogue key that says "install the driver" (no driver found).
pub(super) fn driver_install_key(facts: &Facts) -> &'static str {
    match facts.os {
        _ if facts.wsl2() => "wsl_driver_install",
        // GeForce Experience and NVIDIA App are Windows programs.
        Os::Windows => "driver_install",
        Os::Linux => "driver_install_linux",
    }
}

/// The `wsl-ubuntu` package for toolkit `version` (`12.4.1` → `cuda-toolkit-12-4`).
pub fn toolkit_package(version: &crate::version::Version) -> String {
    let p = version.parts();
    format!(
        "cuda-toolkit-{}-{}",
        p.first().copied().unwrap_or(0),
        p.get(1).copied().unwrap_or(0)
    )
}

/// The commands that install `package` from NVIDIA's `wsl-ubuntu` repository.
pub fn toolkit_commands(package: &str) -> Vec<String> {
    vec![
        format!("wget {WSL_UBUNTU_REPO}/{KEYRING}"),
        format!("sudo dpkg -i {KEYRING}"),
        "sudo apt-get update".into(),
        format!("sudo apt-get -y install {package}"),
    ]
}

/// WSL2's part of the recommendation, once everything else is decided: the Windows
/// driver moves out of the plan's reach into [`WslAdvice`], the toolkit's own driver is
/// never one to lean on, and the reasons say where the driver comes from.
pub(super) fn finish(facts: &Facts, rec: &mut Recommendation) {
    if !facts.wsl2() {
        return;
    }
    // First among the reasons: everything below reads differently once it is known.
    rec.reasons.insert(0, msg!("wsl_detected"));
    let windows_driver = rec.driver.install.take();
    // The Windows path's "the first step installs driver X": here no step does.
    rec.reasons.retain(|m| m.key != "driver_package_chosen");
    if let Some(m) = &rec.driver.upgrade_minimum {
        rec.reasons
            .push(msg!("wsl_driver_offer_on_windows", minimum = m));
    }
    if rec.driver.action != DriverAction::None {
        let minimum = rec
            .driver
            .minimum
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        rec.reasons.push(match &windows_driver {
            Some(d) => msg!(
                "wsl_driver_on_windows",
                minimum = &minimum,
                version = &d.version,
                url = &d.download.url
            ),
            None => msg!("wsl_driver_on_windows_any", minimum = &minimum),
        });
    }
    let toolkit = match (&rec.goal, rec.toolkit.as_mut()) {
        (Goal::Developer, Some(tk)) => {
            // The runfile's bundled driver must never be installed inside WSL2.
            tk.carried_driver = None;
            let package = toolkit_package(&tk.version);
            rec.reasons
                .push(msg!("wsl_toolkit_repo", package = &package));
            Some(WslToolkit {
                commands: toolkit_commands(&package),
                package,
            })
        }
        _ => None,
    };
    rec.wsl = Some(WslAdvice {
        windows_driver,
        toolkit,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::Tables;
    use crate::recommend::{GpuFact, Method, Request, recommend};
    use crate::version::Version;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn facts(kind: HostKind, driver: Option<&str>) -> Facts {
        Facts {
            os: Os::Linux,
            gpus: vec![GpuFact {
                name: Some("NVIDIA GeForce RTX 3060".into()),
                compute_capability: "8.6".parse().unwrap(),
            }],
            driver: driver.map(v),
            driver_cuda: None,
            python: Some(v("3.12")),
            installed_toolkits: vec![],
            unidentified_gpus: vec![],
            notes: vec![],
            host_kind: kind,
            free_threaded: false,
        }
    }

    fn rec(f: &Facts, goal: Goal) -> Recommendation {
        recommend(
            &Tables::embedded().unwrap(),
            f,
            &Request {
                goal,
                cuda: None,
                method: Method::Installer,
                driver: Default::default(),
                distro: None,
                ..Default::default()
            },
        )
    }

    fn keys(r: &Recommendation) -> Vec<&str> {
        r.reasons.iter().map(|m| m.key).collect()
    }

    /// The same facts on a Linux PC and inside WSL2: the floor is Linux's there and
    /// Windows' here, the advice names the Windows driver, and nothing Linux-driver-ish.
    #[test]
    fn wsl2_reads_driver_numbers_as_windows_ones() {
        let tables = Tables::embedded().unwrap();
        // 526.0 meets 12.x's Linux floor (525.60.13) but not Windows' (527.41, §1.1).
        let linux = rec(&facts(HostKind::Native, Some("526.0")), Goal::Pytorch);
        let wsl = rec(&facts(HostKind::Wsl2, Some("526.0")), Goal::Pytorch);
        assert!(linux.wsl.is_none());
        assert_eq!(torch_major(&linux), 12);
        assert_eq!(linux.driver.action, DriverAction::None);
        assert!(
            torch_major(&wsl) < 12 || wsl.driver.action != DriverAction::None,
            "{:?} {:?}",
            wsl.torch,
            wsl.driver
        );
        assert!(wsl.wsl.is_some());
        assert_eq!(keys(&wsl)[0], "wsl_detected");

        // No driver: installed on Windows, with the Windows wizard's package.
        let none = rec(&facts(HostKind::Wsl2, None), Goal::Pytorch);
        assert_eq!(none.driver.action, DriverAction::Install);
        assert!(none.driver.install.is_none(), "nothing the plan could run");
        let d = none.wsl.as_ref().unwrap().windows_driver.as_ref().unwrap();
        assert!(d.download.url.ends_with(".exe"), "{}", d.download.url);
        let k = keys(&none);
        assert!(k.contains(&"wsl_driver_install") && k.contains(&"wsl_driver_on_windows"));
        // The first line says where: on Windows (a plain "install the driver" sends a
        // beginner inside Ubuntu to apt).
        let headline = none.driver_headline().unwrap();
        assert_eq!(headline.key, "wsl_driver_install");

        assert!(
            !k.contains(&"driver_install_linux") && !k.contains(&"driver_install"),
            "{k:?}"
        );
        // The minimum is a Windows number: at least the Windows floor of the wheel's major.
        let min = none.driver.minimum.clone().unwrap();
        let floor = tables
            .toolkit_line(torch_major(&none))
            .unwrap()
            .driver_floor(Os::Windows)
            .clone();
        assert!(min >= floor, "{min} < {floor}");
        assert!(d.version >= min);
    }

    fn torch_major(r: &Recommendation) -> u32 {
        r.torch.as_ref().unwrap().cuda.major()
    }

    /// Developer goal: the toolkit's package from `wsl-ubuntu`, its driver never leaned on.
    #[test]
    fn wsl2_developer_gets_the_wsl_ubuntu_toolkit_and_no_carried_driver() {
        let r = rec(&facts(HostKind::Wsl2, Some("512.95")), Goal::Developer);
        let tk = r.toolkit.as_ref().unwrap();
        assert_eq!(tk.carried_driver, None);
        let w = r.wsl.as_ref().unwrap().toolkit.as_ref().unwrap();
        assert_eq!(w.package, toolkit_package(&tk.version));
        assert!(w.package.starts_with("cuda-toolkit-"), "{}", w.package);
        let last = w.commands.last().unwrap();
        assert_eq!(last, &format!("sudo apt-get -y install {}", w.package));
        assert!(
            w.commands
                .iter()
                .all(|c| !c.contains("cuda-drivers") && !c.ends_with(" cuda")),
            "{:?}",
            w.commands
        );
        assert!(w.commands[0].contains("/repos/wsl-ubuntu/x86_64/"));
    }

    #[test]
    fn the_toolkit_package_name() {
        assert_eq!(toolkit_package(&v("12.4.1")), "cuda-toolkit-12-4");
        assert_eq!(toolkit_package(&v("13.0")), "cuda-toolkit-13-0");
    }
}
