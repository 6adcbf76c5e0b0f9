use super::*;

fn v(s: &str) -> Version {
    s.parse().unwrap()
}

fn passed(d: &str) -> Passed {
    Passed {
        driver: v(d),
        gpu: GpuId {
            name: Some("NVIDIA GeForce RTX 3060".into()),
            ..Default::default()
        },
        installed_by_us: false,
        check: PassedCheck::Doctor,
    }
}

/// The record follows the driver up, never down: an older one that passes keeps the
/// newer record (the replacement stays a finding), and "ours" stays with the same driver.
#[test]
fn the_record_follows_the_driver_up_only() {
    let d = tempfile::tempdir().unwrap();
    let t = Target::rooted(Os::Windows, d.path());
    assert!(read(&t).is_none());
    let mut p = passed("617.14");
    p.installed_by_us = true;
    assert_eq!(record_pass(&t, &p).unwrap(), Recorded::Written);
    let r = read(&t).unwrap();
    assert_eq!(r.driver, v("617.14"));
    assert!(r.installed_by_us);
    assert_eq!(r.os, Os::Windows);
    assert_eq!(r.kernel, None);
    assert_eq!(
        record_pass(&t, &passed("566.36")).unwrap(),
        Recorded::KeptNewer
    );
    assert_eq!(read(&t).unwrap().driver, v("617.14"));
    // The same driver passing again, by a check that did not install it: still ours.
    assert_eq!(
        record_pass(&t, &passed("617.14")).unwrap(),
        Recorded::Written
    );
    assert!(read(&t).unwrap().installed_by_us);
    assert_eq!(
        record_pass(&t, &passed("620.01")).unwrap(),
        Recorded::Written
    );
    let r = read(&t).unwrap();
    assert_eq!(r.driver, v("620.01"));
    assert!(!r.installed_by_us);
}

/// A record that is a link, or not ours, is set aside and counts as none; the link's
/// target is never read or written.
#[cfg(unix)]
#[test]
fn a_bad_record_is_set_aside() {
    let d = tempfile::tempdir().unwrap();
    let t = Target::rooted(Os::Windows, d.path());
    let state = d.path().join(".cuda-setup");
    std::fs::create_dir_all(&state).unwrap();
    let elsewhere = d.path().join("elsewhere.json");
    std::fs::write(&elsewhere, br#"{"format":1}"#).unwrap();
    std::os::unix::fs::symlink(&elsewhere, state.join(FILE)).unwrap();
    assert!(read(&t).is_none());
    assert!(
        std::fs::symlink_metadata(state.join(FILE)).is_err(),
        "set aside"
    );
    record_pass(&t, &passed("617.14")).unwrap();
    assert_eq!(std::fs::read(&elsewhere).unwrap(), br#"{"format":1}"#);
    std::fs::write(state.join(FILE), b"not json").unwrap();
    assert!(read(&t).is_none());
    assert!(
        std::fs::read_dir(&state)
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().contains(".rejected-"))
    );
}

fn observed(os: Os, driver: &str, kernel: Option<&str>) -> Observed {
    Observed {
        record: Some(DriverRecord {
            format: 1,
            driver: v(driver),
            gpu: GpuId::default(),
            os,
            kernel: kernel.map(str::to_string),
            at: 1_764_806_400,
            installed_by_us: true,
            check: PassedCheck::Doctor,
        }),
        at: 1_764_979_200,
        ..Default::default()
    }
}

#[test]
fn older_is_a_finding_equal_or_newer_is_not() {
    let o = observed(Os::Windows, "617.14", None);
    let d = judge(Os::Windows, &o, Some(&v("566.36")), None).unwrap();
    assert_eq!(d.id(), "driverwatch_replaced_windows");
    assert_eq!(d.reinstall(), Some(&v("617.14")));
    let m = d.message();
    assert_eq!(m.param("recorded"), Some("617.14"));
    assert_eq!(m.param("found"), Some("566.36"));
    assert!(m.param("recorded_on").unwrap().starts_with("2025-12-0"));
    let text = crate::i18n::render(&m, crate::i18n::Lang::En);
    assert!(
        text.starts_with(
            "Windows Update has likely replaced NVIDIA driver 617.14 with the older 566.36"
        ),
        "{text}"
    );
    assert_eq!(judge(Os::Windows, &o, Some(&v("617.14")), None), None);
    assert_eq!(judge(Os::Windows, &o, Some(&v("620.01")), None), None);
    // A record of another OS layout says nothing here.
    assert_eq!(judge(Os::Linux, &o, Some(&v("566.36")), None), None);
    // No record, nothing to say.
    assert_eq!(
        judge(Os::Windows, &Observed::default(), Some(&v("1.0")), None),
        None
    );
    // None at all on Windows: gone, with Device Manager's code when known.
    let g = judge(Os::Windows, &o, None, Some(43)).unwrap();
    assert_eq!(g.id(), "driverwatch_gone_code");
    assert_eq!(g.message().param("code"), Some("43"));
    assert_eq!(g.reinstall(), Some(&v("617.14")));
    // Linux older: the manual advice, nothing planned.
    let l = observed(Os::Linux, "580.95.05", Some("6.8.0-45-generic"));
    let d = judge(Os::Linux, &l, Some(&v("570.1")), None).unwrap();
    assert_eq!(d.id(), "driverwatch_replaced_linux");
    assert_eq!(d.reinstall(), None);
    assert!(d.manual().is_some());
}

/// DKMS: only a changed kernel, no loaded module, a package still there and no module
/// built for the new kernel together make the finding.
#[test]
fn not_rebuilt_needs_every_sign() {
    let mut o = observed(Os::Linux, "580.95.05", Some("6.8.0-45-generic"));
    o.kernel = Some("6.8.0-50-generic".into());
    o.package_installed = true;
    o.rebuild = Some(RebuildAdvice {
        distro: Some("Ubuntu 24.04.1 LTS".into()),
        commands: vec!["sudo dkms autoinstall -k 6.8.0-50-generic".into()],
        confirmed: true,
        secure_boot: Some(true),
        mok_command: None,
    });
    let d = judge(Os::Linux, &o, None, None).unwrap();
    assert_eq!(d.id(), "driverwatch_not_rebuilt");
    let how = d.manual().unwrap();
    assert_eq!(how.key, "driverwatch_fix_rebuild_secure_boot");
    assert_eq!(
        how.param("commands"),
        Some("sudo dkms autoinstall -k 6.8.0-50-generic")
    );
    for change in [
        |o: &mut Observed| o.kernel = Some("6.8.0-45-generic".into()),
        |o: &mut Observed| o.module_loaded = true,
        |o: &mut Observed| o.package_installed = false,
        |o: &mut Observed| o.module_for_kernel = true,
    ] {
        let mut o = o.clone();
        change(&mut o);
        assert_eq!(judge(Os::Linux, &o, None, None), None, "{o:?}");
    }
    // A distribution with no sourced command: none invented.
    o.rebuild = None;
    let how = judge(Os::Linux, &o, None, None).unwrap().manual().unwrap();
    assert_eq!(how.key, "driverwatch_fix_rebuild_unknown");
}

/// `observe` reads the Linux signs from the root: kernel release, the DKMS tree, the
/// modules of each kernel.
#[test]
fn observe_reads_the_linux_root() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let w = |rel: &str, text: &str| {
        let p = r.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w("proc/sys/kernel/osrelease", "6.8.0-50-generic\n");
    w("etc/os-release", "ID=ubuntu\nVERSION_ID=\"24.04\"\n");
    w("var/lib/dkms/nvidia/580.95.05/source/dkms.conf", "");
    w(
        "lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko.zst",
        "",
    );
    let t = Target::rooted(Os::Linux, r);
    let o = observe(&t);
    assert!(
        o.record.is_none() && o.kernel.is_none(),
        "no record: nothing read"
    );
    record_pass(&t, &passed("580.95.05")).unwrap();
    assert_eq!(
        read(&t).unwrap().kernel.as_deref(),
        Some("6.8.0-50-generic")
    );
    let mut rec = read(&t).unwrap();
    rec.kernel = Some("6.8.0-45-generic".into());
    std::fs::write(
        r.join(".cuda-setup").join(FILE),
        serde_json::to_vec(&rec).unwrap(),
    )
    .unwrap();
    let o = observe(&t);
    assert_eq!(o.kernel.as_deref(), Some("6.8.0-50-generic"));
    assert!(o.package_installed && !o.module_loaded && !o.module_for_kernel);
    let a = o.rebuild.clone().unwrap();
    assert_eq!(
        a.commands,
        [
            "sudo apt install linux-headers-6.8.0-50-generic",
            "sudo dkms autoinstall -k 6.8.0-50-generic"
        ]
    );
    assert!(judge(Os::Linux, &o, None, None).is_some());
    w(
        "lib/modules/6.8.0-50-generic/updates/dkms/nvidia.ko.zst",
        "",
    );
    assert!(observe(&t).module_for_kernel);
}

mod policy_sandbox {
    use super::super::policy::{self, Change};
    use super::*;

    fn registry(root: &std::path::Path) -> Option<serde_json::Value> {
        std::fs::read(root.join(".cuda-setup").join(policy::SANDBOX_REGISTRY))
            .ok()
            .map(|b| serde_json::from_slice(&b).unwrap())
    }

    fn value(root: &std::path::Path) -> Option<u64> {
        registry(root)?
            .get(r"HKLM\SOFTWARE\Policies\Microsoft\Windows\WindowsUpdate")?
            .get("ExcludeWUDriversInQualityUpdate")?
            .as_u64()
    }

    /// On then off puts back exactly what was there: nothing, 0, or another number.
    #[test]
    fn on_then_off_restores_the_previous_value() {
        for previous in [None, Some(0u32), Some(7)] {
            let d = tempfile::tempdir().unwrap();
            let t = Target::rooted(Os::Windows, d.path());
            if let Some(p) = previous {
                let state = d.path().join(".cuda-setup");
                std::fs::create_dir_all(&state).unwrap();
                std::fs::write(
                    state.join(policy::SANDBOX_REGISTRY),
                    format!(
                        r#"{{"HKLM\\SOFTWARE\\Policies\\Microsoft\\Windows\\WindowsUpdate": {{"ExcludeWUDriversInQualityUpdate": {p}, "Other": 3}}}}"#
                    ),
                )
                .unwrap();
            }
            let s = policy::status(&t).unwrap();
            assert!(!s.on && s.ours.is_none());
            assert_eq!(s.value, previous);
            assert_eq!(policy::on(&t).unwrap(), Change::TurnedOn { previous });
            assert_eq!(value(d.path()), Some(1));
            let s = policy::status(&t).unwrap();
            assert!(s.on);
            assert_eq!(s.ours.as_ref().unwrap().previous, previous);
            assert_eq!(policy::on(&t).unwrap(), Change::AlreadyOn);
            assert_eq!(policy::off(&t).unwrap(), Change::Restored { to: previous });
            assert_eq!(value(d.path()), previous.map(u64::from));
            if previous.is_some() {
                // Other values under the key are left as they were.
                assert_eq!(
                    registry(d.path()).unwrap()[r"HKLM\SOFTWARE\Policies\Microsoft\Windows\WindowsUpdate"]
                        ["Other"],
                    3
                );
            }
            assert!(policy::status(&t).unwrap().ours.is_none());
            assert_eq!(policy::off(&t).unwrap(), Change::NotOurs);
        }
    }

    /// A value someone else set to 1 is left alone by `off`.
    #[test]
    fn a_policy_not_ours_is_left_alone() {
        let d = tempfile::tempdir().unwrap();
        let t = Target::rooted(Os::Windows, d.path());
        let state = d.path().join(".cuda-setup");
        std::fs::create_dir_all(&state).unwrap();
        std::fs::write(
            state.join(policy::SANDBOX_REGISTRY),
            r#"{"HKLM\\SOFTWARE\\Policies\\Microsoft\\Windows\\WindowsUpdate": {"ExcludeWUDriversInQualityUpdate": 1}}"#,
        )
        .unwrap();
        assert_eq!(policy::on(&t).unwrap(), Change::AlreadyOn);
        assert_eq!(policy::off(&t).unwrap(), Change::NotOurs);
        assert_eq!(value(d.path()), Some(1));
        assert_eq!(
            policy::describe(&policy::status(&t).unwrap()).key,
            "driverwatch_policy_status_on_other"
        );
    }

    /// A link planted at our record is never followed: refused, set aside, its target
    /// unchanged, and nothing is switched.
    #[cfg(unix)]
    #[test]
    fn a_link_at_the_record_is_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let t = Target::rooted(Os::Windows, d.path());
        let state = d.path().join(".cuda-setup");
        std::fs::create_dir_all(&state).unwrap();
        let elsewhere = d.path().join("elsewhere.json");
        std::fs::write(&elsewhere, br#"{"format":1,"previous":1,"at":0}"#).unwrap();
        std::os::unix::fs::symlink(&elsewhere, state.join(policy::RECORD)).unwrap();
        assert!(matches!(
            policy::on(&t),
            Err(policy::PolicyError::Rejected(_))
        ));
        assert_eq!(value(d.path()), None, "nothing switched");
        assert_eq!(
            std::fs::read(&elsewhere).unwrap(),
            br#"{"format":1,"previous":1,"at":0}"#
        );
        assert!(std::fs::symlink_metadata(state.join(policy::RECORD)).is_err());
    }

    /// `on` runs elevated and records in the machine's folder; the user's run (the
    /// wizard's Repair page) still says cuda-setup set it, reads the machine's registry,
    /// and cannot switch it.
    #[test]
    fn the_users_status_sees_the_elevated_runs_record() {
        let d = tempfile::tempdir().unwrap();
        let admin = Target::rooted(Os::Windows, d.path());
        assert_eq!(
            policy::on(&admin).unwrap(),
            Change::TurnedOn { previous: None }
        );
        // What an elevated run makes, whatever this test's umask.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let m = std::fs::Permissions::from_mode(0o755);
            std::fs::set_permissions(admin.state_dir(), m).unwrap();
        }
        let mut user = admin.clone();
        user.elevated = false;
        let s = policy::status(&user).unwrap();
        assert!(s.on, "{s:?}");
        assert_eq!(s.ours.as_ref().map(|o| o.previous), Some(None));
        assert_eq!(
            policy::describe(&s).key,
            "driverwatch_policy_status_on_ours"
        );
        assert!(matches!(
            policy::off(&user),
            Err(policy::PolicyError::NeedsAdmin)
        ));
        assert!(
            !d.path().join(".cuda-setup-user").exists(),
            "nothing written"
        );
    }

    #[test]
    fn only_windows_has_the_policy() {
        let d = tempfile::tempdir().unwrap();
        let t = Target::rooted(Os::Linux, d.path());
        assert!(matches!(
            policy::status(&t),
            Err(policy::PolicyError::NotWindows)
        ));
    }
}
