// Test data below (the catalogue's check reads Chinese here as sample data).
#[cfg(test)]
use super::*;
use crate::compat::Os;
use crate::i18n::{Lang, render};

fn rec(prefix: &Path, python: &Path) -> Record {
    Record {
        python: python.to_path_buf(),
        prefix: prefix.to_path_buf(),
        env: EnvKind::Venv,
        torch: "2.7.1+cu118".into(),
        version: "2.7.1".into(),
        local: Some("cu118".into()),
        variant: "cu118".into(),
        index_url: Some("https://download.pytorch.org/whl/cu118".into()),
        wheel: None,
        companions: [("torchvision".to_string(), "0.22.1+cu118".to_string())].into(),
        verified_at: 1_764_835_200,
        by: VerifiedBy::Install,
        lifted: false,
    }
}

const OURS: &str = "/v/cuda-setup-constraints.txt";

/// The interpreter of `r` with torch `torch` and torchvision `vision` installed.
fn env_with(r: &Record, torch: Option<&str>, vision: &str) -> Env {
    Env {
        python: r.python.clone(),
        executable: String::new(),
        prefix: r.prefix.clone(),
        kind: EnvKind::Venv,
        torch: torch.map(Into::into),
        torch_installed_at: None,
        companions: [("torchvision".to_string(), vision.to_string())].into(),
    }
}

/// Our lines go in and come out; the user's file is what it was, byte for byte, in every
/// shape pip.conf comes in.
#[test]
fn pip_conf_merge_and_removal_keep_the_users_lines() {
    let cases: &[&[u8]] = &[
        b"",
        b"[global]\nindex-url = https://pypi.tuna.tsinghua.edu.cn/simple\n",
        b"[global]\ntimeout = 60\n[install]\nno-cache-dir = true\n\n[list]\nformat = columns\n",
        b"[install]\nconstraint = /home/u/mine.txt\n    /home/u/more.txt\nuser = false\n",
        b"[global]\r\ntimeout = 60\r\n[install]\r\nconstraint=C:\\mine.txt\r\n",
        // No newline at the end, and bytes that are not UTF-8 (a GBK comment).
        b"; \xc4\xe3\xba\xc3\n[install]\ntrusted-host = mirrors.aliyun.com",
    ];
    for &conf in cases {
        let with = pin::add_ours(conf, OURS);
        assert!(pin::has_ours(&with), "{}", String::from_utf8_lossy(&with));
        assert!(!pin::has_ours(conf));
        // Every line of the user's is still there.
        for l in conf
            .split(|&b| b == b'\n')
            .filter(|l| !l.trim_ascii().is_empty())
        {
            assert!(
                with.windows(l.len()).any(|w| w == l),
                "lost {:?} in {}",
                String::from_utf8_lossy(l),
                String::from_utf8_lossy(&with)
            );
        }
        // What pip would read as constraint files: the user's, then ours.
        let mut want = pin::others(conf);
        want.push(OURS.into());
        let mut got = pin::others(&with);
        got.push(OURS.into());
        assert_eq!(got, want);
        // Twice is once.
        assert_eq!(pin::add_ours(&with, OURS), with);
        let back = pin::remove_ours(&with);
        let norm = |b: &[u8]| {
            let mut v = b.to_vec();
            if !v.is_empty() && !v.ends_with(b"\n") {
                v.extend_from_slice(b"\n");
            }
            v
        };
        // As it was (a last line we appended after gains its newline).
        assert!(
            back == conf || back == norm(conf),
            "after removal: {:?} for {:?}",
            String::from_utf8_lossy(&back),
            String::from_utf8_lossy(conf)
        );
    }
    let with = pin::add_ours(cases[3], OURS);
    assert_eq!(
        pin::others(&with),
        ["/home/u/mine.txt", "/home/u/more.txt"],
        "the user's constraint files stay in effect"
    );
    let crlf = pin::add_ours(cases[4], OURS);
    assert!(
        String::from_utf8_lossy(&crlf).contains("\r\n    /v/cuda-setup-constraints.txt\r\n"),
        "{}",
        String::from_utf8_lossy(&crlf)
    );
    assert!(
        crlf.is_ascii() || cases[4].is_ascii(),
        "what we add is ASCII"
    );
}

/// pip splits a configuration value at whitespace and reads the file in the locale's
/// encoding: a path with a space or Chinese goes as a percent-encoded file URL.
#[test]
fn paths_pip_can_read_from_its_configuration() {
    assert_eq!(
        pin::pip_value(Path::new("/home/u/venv/cuda-setup-constraints.txt")),
        "/home/u/venv/cuda-setup-constraints.txt"
    );
    assert_eq!(
        pin::pip_value(Path::new("/tmp/v 张/cuda-setup-constraints.txt")),
        "file:///tmp/v%20%E5%BC%A0/cuda-setup-constraints.txt"
    );
    assert_eq!(
        pin::pip_value(Path::new(
            r"C:\Users\Zhang San\venv\cuda-setup-constraints.txt"
        )),
        "file:///C:/Users/Zhang%20San/venv/cuda-setup-constraints.txt"
    );
}

/// The constraints file says what it is and how to lift it, in English and Chinese.
#[test]
fn the_constraints_file_explains_itself_in_both_languages() {
    let d = tempfile::tempdir().unwrap();
    let py = d.path().join("bin/python");
    let text = pin::constraints_text(&rec(d.path(), &py), &py);
    assert!(text.starts_with("# -*- coding: utf-8 -*-\n"));
    let command = format!("cuda-setup guard off --python {}", py.display());
    assert_eq!(text.matches(&command).count(), 2, "{text}");
    assert!(text.contains("本文件由 cuda-setup 写入"), "{text}");
    assert!(text.ends_with("torch==2.7.1+cu118\ntorchvision==0.22.1+cu118\n"));
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        assert!(l.contains("=="), "{l}");
    }
}

/// The record is written into the state folder and read back; a damaged one is set
/// aside, not acted on.
#[test]
fn the_record_round_trips_and_a_bad_one_is_set_aside() {
    let root = tempfile::tempdir().unwrap();
    let target = Target::rooted(Os::Linux, root.path());
    let py = root.path().join("venv/bin/python");
    assert_eq!(record::find(&target, &py).unwrap(), None);
    record::put(&target, rec(&root.path().join("venv"), &py)).unwrap();
    let mut other = rec(root.path(), Path::new("/other/python"));
    other.torch = "2.8.0+cu126".into();
    record::put(&target, other).unwrap();
    assert_eq!(
        record::find(&target, &py).unwrap().unwrap(),
        rec(&root.path().join("venv"), &py)
    );
    assert_eq!(record::all(&target).unwrap().len(), 2);
    let file = target.state_dir().join("guard/verified-torch.json");
    std::fs::write(&file, b"{\"format\": 1, \"records\": [{\"python\": 3}]}").unwrap();
    assert!(matches!(
        record::find(&target, &py),
        Err(GuardError::Record(_))
    ));
    assert!(!file.exists(), "set aside");
    assert_eq!(record::find(&target, &py).unwrap(), None);
}

/// A link someone planted at pip.conf stops the pin before anything is written; one at
/// the constraints file is replaced, never written through.
#[cfg(unix)]
#[test]
fn links_in_the_prefix_are_never_followed() {
    let d = tempfile::tempdir().unwrap();
    let prefix = d.path().join("venv");
    std::fs::create_dir_all(&prefix).unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, b"victim").unwrap();
    let py = prefix.join("bin/python");
    let r = rec(&prefix, &py);
    std::os::unix::fs::symlink(&victim, prefix.join("pip.conf")).unwrap();
    assert!(matches!(
        pin::write(Os::Linux, &r, &py, &Default::default()),
        Err(GuardError::Link { .. })
    ));
    assert!(!prefix.join(pin::CONSTRAINTS).exists());
    assert!(matches!(
        pin::remove(Os::Linux, &prefix),
        Err(GuardError::Link { .. })
    ));
    assert_eq!(std::fs::read(&victim).unwrap(), b"victim");

    std::fs::remove_file(prefix.join("pip.conf")).unwrap();
    std::os::unix::fs::symlink(&victim, prefix.join(pin::CONSTRAINTS)).unwrap();
    pin::write(Os::Linux, &r, &py, &Default::default()).unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"victim");
    let c = prefix.join(pin::CONSTRAINTS);
    assert!(!c.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(pin::state(Os::Linux, &r), PinState::On);
    // Off removes the names, never what a link there points at.
    std::fs::remove_file(&c).unwrap();
    std::os::unix::fs::symlink(&victim, &c).unwrap();
    assert!(pin::remove(Os::Linux, &prefix).unwrap());
    assert!(c.symlink_metadata().is_err() && victim.is_file());
    assert!(
        !prefix.join("pip.conf").exists(),
        "nothing but ours was in it"
    );
    assert_eq!(pin::state(Os::Linux, &r), PinState::Off);
}

/// The sentence a swap is told with, in both languages.
#[test]
fn a_swap_is_told_in_plain_words() {
    let r = rec(Path::new("/v"), Path::new("/v/bin/python"));
    let env = Env {
        python: "/v/bin/python".into(),
        executable: String::new(),
        prefix: "/v".into(),
        kind: EnvKind::Venv,
        torch: Some("2.8.0+cpu".into()),
        // 2025-12-04 12:00 UTC: the same date in every time zone from UTC−12 to UTC+11.
        torch_installed_at: Some(1_764_849_600),
        companions: [("torchvision".to_string(), "0.22.1+cu118".to_string())].into(),
    };
    let s = swapped(&r, &env).unwrap();
    assert_eq!(s.messages(), [s.message()]);
    assert_eq!(
        render(&s.message(), Lang::En),
        "torch 2.7.1+cu118 was replaced by 2.8.0+cpu on 2025-12-04 by another install."
    );
    assert_eq!(
        render(&s.message(), Lang::Zh),
        "torch 2.7.1+cu118 在 2025-12-04 被另一次安装换成了 2.8.0+cpu。"
    );
    assert_eq!(
        s.command(),
        "cuda-setup guard restore --python /v/bin/python"
    );
    let same = Env {
        torch: Some("2.7.1+cu118".into()),
        ..env.clone()
    };
    assert!(swapped(&r, &same).is_none());
    let gone = Env { torch: None, ..env };
    assert_eq!(
        render(&swapped(&r, &gone).unwrap().message(), Lang::En),
        "torch 2.7.1+cu118, the build verified on the GPU, is no longer installed."
    );
}

/// The cached wheel is used only while its bytes hash to the recorded SHA-256; pip gets
/// it with `--no-deps --force-reinstall`. Otherwise: the recorded version from its index.
#[test]
fn restore_uses_the_cached_wheel_only_when_its_hash_holds() {
    let root = tempfile::tempdir().unwrap();
    let target = Target::rooted(Os::Linux, root.path());
    let name = "torch-2.7.1+cu118-cp311-cp311-manylinux_2_28_x86_64.whl";
    let bytes = b"a stand-in torch wheel";
    let mut h = crate::download::Hasher::new(false);
    h.update(bytes);
    let sha = h.finish().sha256;
    let mut r = rec(root.path(), Path::new("/v/bin/python"));
    let cpu = env_with(&r, Some("2.8.0+cpu"), "0.22.1+cu118");
    let swap = swapped(&r, &cpu);
    let swap = swap.as_ref();
    assert_eq!(
        restore::plan(&target, &r, swap),
        Restore::Index {
            args: vec![
                "torch==2.7.1+cu118".into(),
                "torchvision==0.22.1+cu118".into(),
                "--index-url".into(),
                "https://download.pytorch.org/whl/cu118".into()
            ],
            cache: CacheState::NotOurs
        }
    );
    r.wheel = Some(Wheel {
        file: name.into(),
        sha256: sha.clone(),
    });
    assert!(matches!(
        restore::plan(&target, &r, swap),
        Restore::Index {
            cache: CacheState::Missing,
            ..
        }
    ));
    let downloads = target.downloads_dir();
    std::fs::create_dir_all(&downloads).unwrap();
    let wheel = downloads.join(name);
    std::fs::write(&wheel, bytes).unwrap();
    let plan = restore::plan(&target, &r, swap);
    assert_eq!(
        plan,
        Restore::Cache {
            wheel: wheel.clone(),
            args: vec![
                "--no-deps".into(),
                "--force-reinstall".into(),
                wheel.display().to_string()
            ],
            companions: Vec::new(),
        }
    );
    assert_eq!(restore::plan(&target, &r, None), Restore::NothingToDo);
    restore::check_args(&r, plan.args().unwrap()).unwrap();
    // Changed after the plan: pip never gets it.
    std::fs::write(&wheel, b"something else").unwrap();
    assert!(matches!(
        restore::check_args(&r, plan.args().unwrap()),
        Err(GuardError::WheelHash { .. })
    ));
    assert!(matches!(
        restore::plan(&target, &r, swap),
        Restore::Index {
            cache: CacheState::Mismatch { .. },
            ..
        }
    ));
}

#[test]
fn versions_and_indexes() {
    assert_eq!(
        record::split_version("2.7.1+cu118"),
        ("2.7.1".into(), Some("cu118".into()))
    );
    assert_eq!(
        record::index_for(Some("cu118")).as_deref(),
        Some("https://download.pytorch.org/whl/cu118")
    );
    assert_eq!(record::index_for(Some("local-build")), None);
    assert_eq!(record::index_for(None), None);
    let noted = Installed {
        python: "/p".into(),
        version: "2.7.1".into(),
        index_url: "https://download.pytorch.org/whl/cu118/".into(),
        wheel: None,
        at: 0,
    };
    assert!(is_ours(&noted, "2.7.1+cu118"));
    assert!(!is_ours(&noted, "2.7.1+cpu"));
    assert!(!is_ours(&noted, "2.8.0+cu118"));
}

/// What an earlier write left at `<name>.tmp` (a crash between `write_atomic`'s create
/// and its rename, or something planted): a plain file or a link is removed (the link
/// itself, never followed) and the pin written; a folder, which is not ours to remove,
/// would refuse every later write — a typed error names it and says to delete it.
#[cfg(unix)]
#[test]
fn a_leftover_tmp_never_blocks_the_pin_silently() {
    let d = tempfile::tempdir().unwrap();
    let prefix = d.path().join("venv");
    std::fs::create_dir_all(&prefix).unwrap();
    let py = prefix.join("bin/python");
    let r = rec(&prefix, &py);
    let users = "[global]\ntimeout = 60\n";
    std::fs::write(prefix.join("pip.conf"), users).unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    std::fs::write(prefix.join("pip.conf.tmp"), "torn").unwrap();
    std::os::unix::fs::symlink(&victim, prefix.join("cuda-setup-constraints.txt.tmp")).unwrap();
    pin::write(Os::Linux, &r, &py, &Default::default()).unwrap();
    assert_eq!(pin::state(Os::Linux, &r), PinState::On);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    for name in ["pip.conf.tmp", "cuda-setup-constraints.txt.tmp"] {
        assert!(prefix.join(name).symlink_metadata().is_err(), "{name} left");
    }

    // A folder there: named, with what to do; nothing inside it touched.
    let tmp = prefix.join("cuda-setup-constraints.txt.tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::write(tmp.join("inside"), "x").unwrap();
    let e = pin::write(Os::Linux, &r, &py, &Default::default()).unwrap_err();
    match &e {
        GuardError::Leftover { path } => {
            assert!(
                path.ends_with("venv/cuda-setup-constraints.txt.tmp"),
                "{path:?}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(tmp.join("inside").is_file());
    let said = render(&e.message(), Lang::En);
    assert!(
        said.ends_with("cuda-setup-constraints.txt.tmp was left by an earlier write and is not a plain file (a folder, for one), so cuda-setup does not remove it."),
        "{said}"
    );
    let hint = render(&e.hint(&py), Lang::En);
    assert!(
        hint.starts_with("Delete ")
            && hint
                .ends_with("cuda-setup-constraints.txt.tmp yourself, then run the command again."),
        "{hint}"
    );
    assert!(render(&e.hint(&py), Lang::Zh).starts_with("请自己删掉 "));
    // Lifting it when pip.conf keeps the user's lines (rewritten, not removed).
    std::fs::remove_file(tmp.join("inside")).unwrap();
    std::fs::remove_dir(&tmp).unwrap();
    std::fs::create_dir(prefix.join("pip.conf.tmp")).unwrap();
    assert!(matches!(
        pin::remove(Os::Linux, &prefix),
        Err(GuardError::Leftover { .. })
    ));
    std::fs::remove_dir(prefix.join("pip.conf.tmp")).unwrap();
    assert!(pin::remove(Os::Linux, &prefix).unwrap());
    assert_eq!(
        std::fs::read_to_string(prefix.join("pip.conf")).unwrap(),
        users
    );
}

/// torchvision or torchaudio recorded with the verified torch and replaced since is a
/// swap too (torchvision fails at import beside another torch), told in words; one the
/// record does not name is not.
#[test]
fn a_replaced_companion_is_a_swap() {
    let r = rec(Path::new("/v"), Path::new("/v/bin/python"));
    let intact = env_with(&r, Some("2.7.1+cu118"), "0.22.1+cu118");
    assert_eq!(swapped(&r, &intact), None);
    let mut more = intact.clone();
    more.companions.insert("torchaudio".into(), "2.8.0".into());
    assert_eq!(swapped(&r, &more), None, "not recorded: not ours to judge");

    let s = swapped(&r, &env_with(&r, Some("2.7.1+cu118"), "0.23.0")).unwrap();
    assert!(!s.torch_changed());
    assert_eq!(
        render(&s.message(), Lang::En),
        "torchvision 0.22.1+cu118, installed with the verified torch, was replaced by 0.23.0."
    );
    assert_eq!(
        render(&s.message(), Lang::Zh),
        "和验证过的 torch 一起装的 torchvision 0.22.1+cu118 被换成了 0.23.0。"
    );
    let mut gone = intact.clone();
    gone.companions.clear();
    assert_eq!(
        render(&swapped(&r, &gone).unwrap().message(), Lang::En),
        "torchvision 0.22.1+cu118, installed with the verified torch, is no longer installed."
    );
    // Both: torch's sentence first, then the companion's.
    let both = swapped(&r, &env_with(&r, Some("2.8.0+cpu"), "0.23.0+cpu")).unwrap();
    let said: Vec<String> = both
        .messages()
        .iter()
        .map(|m| render(m, Lang::En))
        .collect();
    assert_eq!(
        said,
        [
            "torch 2.7.1+cu118 was replaced by 2.8.0+cpu by another install.",
            "torchvision 0.22.1+cu118, installed with the verified torch, was replaced by 0.23.0+cpu."
        ]
    );
}

/// The restore puts the changed companions back with torch: from the cached wheel, the
/// companions from the recorded index in the same pip call; with torch intact, the
/// companions alone (no torch wheel fetched again).
#[test]
fn the_restore_puts_the_companions_back_too() {
    let root = tempfile::tempdir().unwrap();
    let target = Target::rooted(Os::Linux, root.path());
    let name = "torch-2.7.1+cu118-cp311-cp311-manylinux_2_28_x86_64.whl";
    let bytes = b"a stand-in torch wheel";
    let mut h = crate::download::Hasher::new(false);
    h.update(bytes);
    let mut r = rec(root.path(), Path::new("/v/bin/python"));
    r.wheel = Some(Wheel {
        file: name.into(),
        sha256: h.finish().sha256,
    });
    let index = "https://download.pytorch.org/whl/cu118".to_string();

    let only = swapped(&r, &env_with(&r, Some("2.7.1+cu118"), "0.23.0")).unwrap();
    assert_eq!(
        restore::plan(&target, &r, Some(&only)),
        Restore::Index {
            args: vec![
                "torchvision==0.22.1+cu118".into(),
                "--index-url".into(),
                index.clone()
            ],
            cache: CacheState::NotNeeded
        }
    );
    let both = swapped(&r, &env_with(&r, Some("2.8.0+cpu"), "0.23.0+cpu")).unwrap();
    // No saved wheel: everything from the index, as before.
    assert_eq!(
        restore::plan(&target, &r, Some(&both)).args().unwrap(),
        [
            "torch==2.7.1+cu118",
            "torchvision==0.22.1+cu118",
            "--index-url",
            &index
        ]
    );
    let wheel = target.downloads_dir().join(name);
    std::fs::create_dir_all(wheel.parent().unwrap()).unwrap();
    std::fs::write(&wheel, bytes).unwrap();
    assert_eq!(
        restore::plan(&target, &r, Some(&both)),
        Restore::Cache {
            wheel: wheel.clone(),
            args: vec![
                "--no-deps".into(),
                "--force-reinstall".into(),
                wheel.display().to_string(),
                "torchvision==0.22.1+cu118".into(),
                "--index-url".into(),
                index.clone()
            ],
            companions: vec!["torchvision==0.22.1+cu118".into()],
        }
    );
}

fn sandbox_host(root: &Path, home: &Path) -> crate::platform::Host {
    crate::platform::Host::sandbox(
        Os::Linux,
        root,
        [("HOME".to_string(), home.display().to_string())].into(),
    )
}

/// pip's site `[install] constraint` hides a `constraint` the user set under `[global]`
/// in the same file or in the user's own pip.conf: the pin carries those files beside
/// ours, our pip step's PIP_CONSTRAINT names them, and `off` takes the copies away.
#[test]
fn the_pin_keeps_the_users_constraints_set_elsewhere() {
    let d = tempfile::tempdir().unwrap();
    let home = d.path().join("home");
    let user_conf = home.join(".config/pip/pip.conf");
    std::fs::create_dir_all(user_conf.parent().unwrap()).unwrap();
    std::fs::write(&user_conf, "[global]\nconstraint = /u/mine.txt\n").unwrap();
    let prefix = d.path().join("venv");
    std::fs::create_dir_all(&prefix).unwrap();
    let py = prefix.join("bin/python");
    let mut target = Target::rooted(Os::Linux, &d.path().join("root"));
    target.host = sandbox_host(d.path(), &home);
    let outside = pipconf::Outside::read(&target.host, Os::Linux);
    let r = rec(&prefix, &py);
    let ours = prefix.join(pin::CONSTRAINTS).display().to_string();

    pin::write(Os::Linux, &r, &py, &outside).unwrap();
    let conf = std::fs::read(prefix.join("pip.conf")).unwrap();
    let text = String::from_utf8_lossy(&conf);
    assert!(text.contains("[install]\n# cuda-setup guard: "), "{text}");
    assert!(
        text.ends_with(&format!("\nconstraint = /u/mine.txt {ours}\n")),
        "{text}"
    );
    // The copy is ours, not the user's: pip without ours would use the user's file.
    assert_eq!(outside.user_value(&conf), ["/u/mine.txt"]);
    record::put(&target, r.clone()).unwrap();
    let lifted = lift_for_pip(&target, &py);
    let empty = target.state_dir().join("guard/no-constraints.txt");
    assert_eq!(
        lifted,
        [(
            "PIP_CONSTRAINT".to_string(),
            format!("/u/mine.txt {}", empty.display())
        )]
    );
    assert!(pin::remove(Os::Linux, &prefix).unwrap());
    assert!(
        !prefix.join("pip.conf").exists(),
        "nothing of the user's was there"
    );

    // The same file's [global]: kept, and beside ours.
    let site = "[global]\ntimeout = 60\nconstraint = /s/site.txt\n";
    std::fs::write(prefix.join("pip.conf"), site).unwrap();
    pin::write(Os::Linux, &r, &py, &outside).unwrap();
    let text = std::fs::read_to_string(prefix.join("pip.conf")).unwrap();
    assert!(text.starts_with(site), "{text}");
    assert!(
        text.ends_with(&format!("\nconstraint = /s/site.txt {ours}\n")),
        "{text}"
    );
    assert_eq!(
        lift_for_pip(&target, &py)[0].1,
        format!("/s/site.txt {}", empty.display())
    );
    pin::remove(Os::Linux, &prefix).unwrap();
    assert_eq!(
        std::fs::read_to_string(prefix.join("pip.conf")).unwrap(),
        site
    );

    // The user's own [install] value in the site file: ours joins it, nothing copied.
    let site = "[install]\nconstraint = /s/install.txt\n";
    std::fs::write(prefix.join("pip.conf"), site).unwrap();
    pin::write(Os::Linux, &r, &py, &outside).unwrap();
    let text = std::fs::read_to_string(prefix.join("pip.conf")).unwrap();
    assert!(!text.contains("/u/mine.txt"), "{text}");
    assert_eq!(
        lift_for_pip(&target, &py)[0].1,
        format!("/s/install.txt {}", empty.display())
    );
}
