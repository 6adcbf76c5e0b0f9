//! Sandbox roots with real os-release files and efivars, read through `Host`.

use std::collections::BTreeMap;
use std::path::Path;

use super::*;
use crate::compat::Os;

const UBUNTU_2404: &str = "PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\nID=ubuntu\nID_LIKE=debian\n";
const DEBIAN_12: &str = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION_CODENAME=bookworm\nID=debian\n";
const FEDORA_41: &str = "NAME=\"Fedora Linux\"\nVERSION=\"41 (Workstation Edition)\"\nID=fedora\nVERSION_ID=41\nPRETTY_NAME=\"Fedora Linux 41 (Workstation Edition)\"\n";
const ROCKY_9: &str = "NAME=\"Rocky Linux\"\nID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.4\"\nPRETTY_NAME=\"Rocky Linux 9.4 (Blue Onyx)\"\n";
const MINT_22: &str = "NAME=\"Linux Mint\"\nID=linuxmint\nID_LIKE=\"ubuntu debian\"\nVERSION_ID=\"22\"\nPRETTY_NAME=\"Linux Mint 22\"\n";
const ARCH: &str = "NAME=\"Arch Linux\"\nPRETTY_NAME=\"Arch Linux\"\nID=arch\nBUILD_ID=rolling\n";

enum Sb {
    On,
    Off,
    LegacyBios,
    NotMounted,
    Malformed,
}

fn root(os_release: Option<&[u8]>, sb: Sb) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    if let Some(text) = os_release {
        std::fs::create_dir_all(d.path().join("etc")).unwrap();
        std::fs::write(d.path().join("etc/os-release"), text).unwrap();
    }
    let efi = d.path().join("sys/firmware/efi");
    let vars = efi.join("efivars");
    let var = vars.join("SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c");
    match sb {
        Sb::LegacyBios => {}
        Sb::NotMounted => std::fs::create_dir_all(&vars).unwrap(),
        Sb::On | Sb::Off | Sb::Malformed => {
            std::fs::create_dir_all(&vars).unwrap();
            let bytes: &[u8] = match sb {
                Sb::On => &[6, 0, 0, 0, 1],
                Sb::Off => &[6, 0, 0, 0, 0],
                _ => &[6, 0, 0],
            };
            std::fs::write(&var, bytes).unwrap();
        }
    }
    d
}

fn host(root: &Path) -> Host {
    Host::sandbox(Os::Linux, root, BTreeMap::new())
}

fn v(s: &str) -> Version {
    s.parse().unwrap()
}

fn advice_for(os_release: &str, sb: Sb, minimum: Option<&str>) -> LinuxDriverAdvice {
    let d = root(Some(os_release.as_bytes()), sb);
    advice(&host(d.path()), minimum.map(v).as_ref()).unwrap()
}

#[test]
fn ubuntu_2404_gets_the_branch_its_archive_ships() {
    let a = advice_for(UBUNTU_2404, Sb::Off, Some("550.54.15"));
    assert_eq!(a.distro.as_deref(), Some("Ubuntu 24.04.1 LTS"));
    assert_eq!(a.family.as_deref(), Some("ubuntu"));
    assert_eq!(a.package.as_deref(), Some("nvidia-driver-580"));
    assert_eq!(
        a.commands,
        ["sudo apt update", "sudo apt install nvidia-driver-580"]
    );
    assert!(a.confirmed);
    assert_eq!(a.secure_boot, Some(false));
    assert_eq!(a.intro().key, "linux_driver_commands_package");
    let keys: Vec<_> = a.notes().iter().map(|m| m.key).collect();
    assert_eq!(
        keys,
        ["linux_driver_secure_boot_off", "linux_driver_restart"]
    );
}

#[test]
fn a_minimum_above_every_known_branch_gets_the_generic_command() {
    let a = advice_for(UBUNTU_2404, Sb::On, Some("600.10"));
    assert_eq!(a.commands, ["sudo ubuntu-drivers install"]);
    assert_eq!(a.package, None);
    assert!(
        !a.confirmed,
        "ubuntu-drivers install is unconfirmed in the table"
    );
    assert_eq!(a.secure_boot, Some(true));
    let keys: Vec<_> = a.notes().iter().map(|m| m.key).collect();
    assert_eq!(
        keys,
        [
            "linux_driver_unconfirmed",
            "linux_driver_secure_boot_on",
            "linux_driver_restart"
        ]
    );
}

#[test]
fn debian_12_uses_non_free_then_nvidias_repository_beyond_its_branch() {
    let a = advice_for(DEBIAN_12, Sb::LegacyBios, Some("525.60.13"));
    assert_eq!(a.package.as_deref(), Some("nvidia-driver"));
    assert_eq!(
        a.commands,
        ["sudo apt update", "sudo apt install nvidia-driver"]
    );
    assert!(a.non_free && a.confirmed);
    assert_eq!(
        a.secure_boot,
        Some(false),
        "no /sys/firmware/efi: a legacy BIOS"
    );
    assert!(a.notes().iter().any(|m| m.key == "linux_driver_non_free"));

    let a = advice_for(DEBIAN_12, Sb::Off, Some("570.86.10"));
    assert_eq!(a.package.as_deref(), Some("cuda-drivers"));
    assert!(
        a.commands[0].contains("/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb"),
        "{:?}",
        a.commands
    );
    assert_eq!(a.commands.last().unwrap(), "sudo apt install cuda-drivers");
}

#[test]
fn fedora_41_gets_rpm_fusion_and_the_akmods_key_step() {
    let a = advice_for(FEDORA_41, Sb::On, Some("550.54.15"));
    assert_eq!(a.family.as_deref(), Some("fedora"));
    assert_eq!(a.package.as_deref(), Some("akmod-nvidia"));
    assert!(a.commands.iter().any(|c| c.contains("akmod-nvidia")));
    assert!(!a.confirmed);
    let notes = a.notes();
    let sb = notes
        .iter()
        .find(|m| m.key == "linux_driver_secure_boot_command")
        .unwrap();
    assert!(sb.param("command").unwrap().contains("mokutil --import"));
}

#[test]
fn rocky_9_point_release_gets_nvidias_rhel9_repository() {
    let a = advice_for(ROCKY_9, Sb::NotMounted, None);
    assert_eq!(a.family.as_deref(), Some("rhel"));
    assert_eq!(a.commands.len(), 3);
    assert!(a.commands[0].ends_with("epel-release-latest-9.noarch.rpm"));
    assert!(a.commands[1].ends_with("/repos/rhel9/x86_64/cuda-rhel9.repo"));
    assert_eq!(
        a.commands[2],
        "sudo dnf module install nvidia-driver:latest-dkms"
    );
    assert!(a.confirmed);
    assert_eq!(a.secure_boot, None, "efivarfs not mounted: cannot tell");
    assert!(
        a.notes()
            .iter()
            .any(|m| m.key == "linux_driver_secure_boot_unknown")
    );
}

#[test]
fn a_derivative_gets_its_parents_generic_commands_unconfirmed() {
    let a = advice_for(MINT_22, Sb::Off, Some("550.54.15"));
    assert_eq!(a.family.as_deref(), Some("ubuntu"));
    assert_eq!(a.commands, ["sudo ubuntu-drivers install"]);
    assert!(!a.confirmed);
}

#[test]
fn an_unknown_distribution_gets_no_invented_commands() {
    let a = advice_for(ARCH, Sb::Off, Some("550.54.15"));
    assert_eq!(a.family, None);
    assert!(a.commands.is_empty() && a.package.is_none());
    assert_eq!(a.distro.as_deref(), Some("Arch Linux"));
    let intro = a.intro();
    assert_eq!(intro.key, "linux_driver_unknown");
    assert_eq!(intro.param("distro"), Some("Arch Linux"));
    assert!(
        !a.notes()
            .iter()
            .any(|m| m.key == "linux_driver_unconfirmed")
    );
}

#[test]
fn a_malformed_huge_or_missing_os_release_is_an_unknown_distribution() {
    for text in [
        &b"\x00\xff\xfe garbage \x01=\x02\n===\nID\n"[..],
        &vec![b'#'; 1 << 20][..],
    ] {
        let d = root(Some(text), Sb::Off);
        let a = advice(&host(d.path()), Some(&v("550.54.15"))).unwrap();
        assert_eq!(a.family, None, "{}", String::from_utf8_lossy(&text[..8]));
        assert_eq!(a.distro, None);
        assert!(a.commands.is_empty());
    }
    // A huge file whose tail would say ubuntu is not read at all.
    let mut huge = vec![b'#'; 70 * 1024];
    huge.extend_from_slice(b"\nID=ubuntu\nVERSION_ID=\"24.04\"\n");
    let d = root(Some(&huge), Sb::Off);
    assert_eq!(advice(&host(d.path()), None).unwrap().family, None);
    let d = root(None, Sb::Off);
    assert_eq!(advice(&host(d.path()), None).unwrap().family, None);
    // /usr/lib/os-release stands in for a missing /etc/os-release.
    std::fs::create_dir_all(d.path().join("usr/lib")).unwrap();
    std::fs::write(d.path().join("usr/lib/os-release"), DEBIAN_12).unwrap();
    assert_eq!(
        advice(&host(d.path()), None).unwrap().family.as_deref(),
        Some("debian")
    );
}

#[test]
fn secure_boot_states() {
    let state = |sb| {
        let d = root(Some(UBUNTU_2404.as_bytes()), sb);
        secure_boot::state(&host(d.path()))
    };
    assert_eq!(state(Sb::On), Some(true));
    assert_eq!(state(Sb::Off), Some(false));
    assert_eq!(state(Sb::LegacyBios), Some(false));
    assert_eq!(state(Sb::NotMounted), None);
    assert_eq!(state(Sb::Malformed), None);
    // UEFI with efivarfs mounted, but no SecureBoot variable: firmware without it.
    let d = root(None, Sb::NotMounted);
    std::fs::write(
        d.path()
            .join("sys/firmware/efi/efivars/BootOrder-8be4df61-93ca-11d2-aa0d-00e098032b8c"),
        [6, 0, 0, 0, 1, 0],
    )
    .unwrap();
    assert_eq!(secure_boot::state(&host(d.path())), Some(false));
}

#[test]
fn only_linux_hosts_get_linux_advice() {
    let d = root(Some(UBUNTU_2404.as_bytes()), Sb::Off);
    let win = Host::sandbox(Os::Windows, d.path(), BTreeMap::new());
    assert_eq!(advice(&win, None), None);
}

#[test]
fn any_driver_means_the_newest_known_branch() {
    let a = advice_for(UBUNTU_2404, Sb::Off, None);
    assert_eq!(a.package.as_deref(), Some("nvidia-driver-580"));
}

/// #20: GPUs on a stopped branch (Kepler: R470; Pascal: R580) get only a distribution
/// branch at or below it; a route that installs the newest driver is never given.
#[test]
fn a_last_branch_keeps_the_commands_within_it() {
    let within = |os_release: &str, minimum: Option<&str>, last: u32| {
        let d = root(Some(os_release.as_bytes()), Sb::LegacyBios);
        advice_within(&host(d.path()), minimum.map(v).as_ref(), Some(last)).unwrap()
    };
    let ubuntu = "ID=ubuntu\nVERSION_ID=\"24.04\"\nPRETTY_NAME=\"Ubuntu 24.04 LTS\"\n";
    let debian = "ID=debian\nVERSION_ID=\"12\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
    // Pascal (R580) on Ubuntu 24.04, whose archive ships 580: that branch.
    let a = within(ubuntu, Some("525.60.13"), 580);
    assert_eq!(a.package.as_deref(), Some("nvidia-driver-580"));
    assert_eq!(a.last_branch, None);
    // Kepler (R470) on Ubuntu 24.04 and Debian 12 (535): nothing the archives ship runs
    // it, and NVIDIA's repository installs the newest driver.
    for os in [ubuntu, debian] {
        let a = within(os, Some("450.80.02"), 470);
        assert!(a.commands.is_empty(), "{:?}", a.commands);
        assert_eq!(a.last_branch, Some(470));
        assert!(a.family.is_some());
        let text = crate::i18n::render(&a.intro(), crate::i18n::Lang::En);
        assert!(text.contains("R470"), "{text}");
    }
    // Pascal on Debian 12 with a minimum above its 535: not cuda-drivers (the newest).
    let a = within(debian, Some("580.65.06"), 580);
    assert!(
        a.commands.iter().all(|c| !c.contains("cuda-drivers")),
        "{:?}",
        a.commands
    );
    assert_eq!(a.last_branch, Some(580));
}

/// #32: a driver for a toolkit of branch R615: Ubuntu 24.04 packages none, so the newest
/// it has (580, which still runs 13.x) with a note; Debian 12 has NVIDIA's repository.
#[test]
fn a_branch_no_release_packages_gives_the_newest_known_and_says_so() {
    let d = root(Some(UBUNTU_2404.as_bytes()), Sb::Off);
    let a = advice_for_branch(&host(d.path()), Some(&v("580.65.06")), Some(615), None).unwrap();
    assert_eq!(a.package.as_deref(), Some("nvidia-driver-580"));
    assert_eq!(a.short_of, Some(615));
    let note = a
        .notes()
        .into_iter()
        .find(|m| m.key == "linux_driver_branch_not_packaged")
        .expect("the note");
    let text = crate::i18n::render(&note, crate::i18n::Lang::En);
    assert!(
        text.contains("R615") && text.contains("nvidia-driver-580"),
        "{text}"
    );
    assert!(packaged(
        &distro::read(&host(d.path())).unwrap(),
        Some(&v("580.65.06")),
        Some(615),
        None
    ));
    let d = root(Some(DEBIAN_12.as_bytes()), Sb::Off);
    let a = advice_for_branch(&host(d.path()), Some(&v("580.65.06")), Some(615), None).unwrap();
    assert_eq!(a.package.as_deref(), Some("cuda-drivers"));
    assert_eq!(a.short_of, None);
    // Arch: nothing known, nothing packaged.
    let arch = distro::parse(ARCH);
    assert!(!packaged(&arch, Some(&v("580.65.06")), Some(615), None));
}

fn advice_for_branch(
    host: &Host,
    minimum: Option<&Version>,
    branch: Option<u32>,
    last: Option<u32>,
) -> Option<LinuxDriverAdvice> {
    super::advice_for(host, minimum, branch, last)
}

/// The rebuild commands after a kernel change (#33): the family's `rebuild` route with the
/// kernel filled in; Fedora's marked unconfirmed, a derivative too; a distribution with no
/// sourced route, or a kernel release that is not one token, gets no command.
#[test]
fn rebuild_commands_per_distribution() {
    let k = "6.8.0-50-generic";
    let d = root(Some(UBUNTU_2404.as_bytes()), Sb::On);
    let a = rebuild(&host(d.path()), k).unwrap();
    assert_eq!(
        a.commands,
        [
            "sudo apt install linux-headers-6.8.0-50-generic",
            "sudo dkms autoinstall -k 6.8.0-50-generic"
        ]
    );
    assert!(a.confirmed);
    assert_eq!(a.secure_boot, Some(true));
    let d = root(Some(DEBIAN_12.as_bytes()), Sb::Off);
    assert!(
        rebuild(&host(d.path()), "6.1.0-18-amd64")
            .unwrap()
            .confirmed
    );
    let d = root(Some(FEDORA_41.as_bytes()), Sb::Off);
    let a = rebuild(&host(d.path()), "6.11.4-301.fc41.x86_64").unwrap();
    assert_eq!(
        a.commands,
        [
            "sudo dnf install kernel-devel-6.11.4-301.fc41.x86_64",
            "sudo akmods --kernels 6.11.4-301.fc41.x86_64"
        ]
    );
    assert!(!a.confirmed);
    assert!(a.mok_command.is_some());
    let d = root(Some(MINT_22.as_bytes()), Sb::Off);
    let a = rebuild(&host(d.path()), k).unwrap();
    assert!(
        !a.commands.is_empty() && !a.confirmed,
        "a derivative: unconfirmed"
    );
    for os in [ROCKY_9, ARCH] {
        let d = root(Some(os.as_bytes()), Sb::Off);
        assert!(
            rebuild(&host(d.path()), k).unwrap().commands.is_empty(),
            "{os}"
        );
    }
    let d = root(Some(UBUNTU_2404.as_bytes()), Sb::Off);
    assert!(
        rebuild(&host(d.path()), "6.8; rm -rf /")
            .unwrap()
            .commands
            .is_empty()
    );
}
