//! The lab profile (#36): `install --write-profile` writes the profile of today's flags,
//! which the core reads back as the same install runs; a bad profile is refused naming
//! its file and key (exit 2), in both languages.

use std::path::{Path, PathBuf};
use std::process::Output;

use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::fleet::profile::{
    self, CudnnWant, DriverRule, DriverWant, Problem, Profile, PythonAt, SourcesWant, Wanted,
};
use cuda_setup_core::i18n::{Lang, render};
use cuda_setup_core::recommend::{DriverPref, Goal, Method};

use crate::support::cli;

fn v(s: &str) -> cuda_setup_core::version::Version {
    s.parse().unwrap()
}

/// `install ARGS --write-profile DIR/lab.toml` with its own cache and home.
fn write(dir: &Path, args: &[&str]) -> (Output, PathBuf) {
    let file = dir.join("lab.toml");
    let mut all = vec!["install"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--write-profile", file.to_str().unwrap()]);
    let out = cli::with_cache(&dir.join("home"), &all).output().unwrap();
    (out, file)
}

fn read_back(file: &Path) -> Profile {
    profile::load(file, &Tables::embedded().unwrap(), Os::current())
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_developer_flags_become_a_profile_that_reads_back_as_the_same_install() {
    let dir = tempfile::tempdir().unwrap();
    let (out, file) = write(
        dir.path(),
        &[
            "--goal",
            "developer",
            "--cuda",
            "12.4",
            "--cudnn",
            "9",
            "--method",
            "wheels",
            "--components",
            "nvcc,cudart",
            "--mirror",
            "https://mirror.lab.example/nvidia",
            "--bundle",
            "/srv/cuda-bundle",
            "--pypi-mirror",
            "tsinghua",
            "--keep-driver",
            "--report",
            "/srv/reports/%COMPUTERNAME%.json",
            "--lang",
            "zh",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", cli::text(&out));
    assert!(
        cli::text(&out).contains(&file.display().to_string()),
        "{}",
        cli::text(&out)
    );
    // Nothing was installed: the profile is the only thing written (besides the home).
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "home")
        .collect();
    names.sort();
    assert_eq!(names, ["lab.toml"]);
    let p = read_back(&file);
    assert_eq!(p.lang, Some(Lang::Zh));
    assert_eq!(
        p.report.as_ref().map(|r| r.path.as_str()),
        Some("/srv/reports/%COMPUTERNAME%.json")
    );
    assert_eq!(
        p.plans(),
        vec![Wanted {
            goal: Goal::Developer,
            cuda: Some(v("12.4")),
            method: Method::Wheels,
            components: vec!["nvcc".into(), "cudart".into()],
            cudnn: Some(CudnnWant::Version(v("9"))),
            torch_version: None,
            torch_variant: None,
            python: PythonAt::Default,
            guard: false,
            driver: Some(DriverWant {
                rule: DriverRule::Needed,
                install: true,
                when_old: DriverPref::Keep,
                cuda_installer: false,
            }),
            sources: SourcesWant {
                mirrors: vec!["https://mirror.lab.example/nvidia".into()],
                bundle: Some(PathBuf::from("/srv/cuda-bundle")),
                pypi_mirror: Some("tsinghua".into()),
                torch_index: None,
            },
        }]
    );
}

#[test]
fn the_pytorch_flags_become_a_profile_with_the_release_build_and_python() {
    let dir = tempfile::tempdir().unwrap();
    let (out, file) = write(
        dir.path(),
        &[
            "--goal",
            "pytorch",
            "--torch-version",
            "2.5",
            "--torch-variant",
            "cu124",
            "--python-exe",
            "/opt/lab/bin/python3",
            "--torch-index",
            "official",
            "--skip-driver",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", cli::text(&out));
    let p = read_back(&file);
    let plans = p.plans();
    assert_eq!(plans.len(), 1);
    let w = &plans[0];
    assert_eq!(w.goal, Goal::Pytorch);
    assert_eq!(
        (w.torch_version.clone(), w.torch_variant.as_deref()),
        (Some(v("2.5")), Some("cu124"))
    );
    assert_eq!(
        w.python,
        PythonAt::Interpreter(PathBuf::from("/opt/lab/bin/python3"))
    );
    assert!(w.guard);
    assert!(
        w.skip_driver(),
        "--skip-driver: the driver is tested, never installed"
    );
    assert_eq!(w.sources.torch_index.as_deref(), Some("official"));
    assert!(p.toolkit.is_none() && p.cudnn.is_none());
    // No --lang, no --report: neither is written.
    assert_eq!((p.lang, p.report), (None, None));
}

#[test]
fn flags_the_tables_cannot_give_write_no_profile_and_exit_2_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    for (lang, words) in [
        ("en", "no CUDA release the tables know"),
        ("zh", "版本表里没有"),
    ] {
        let (out, file) = write(
            dir.path(),
            &["--goal", "developer", "--cuda", "12.99", "--lang", lang],
        );
        let text = cli::text(&out);
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(text.contains("[toolkit] version"), "{text}");
        assert!(text.contains("12.99") && text.contains(words), "{text}");
        assert!(!file.exists());
    }
    // A developer profile names its toolkit: "the recommended one" differs per PC.
    let (out, file) = write(dir.path(), &["--goal", "developer"]);
    let text = cli::text(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("--cuda"), "{text}");
    assert!(!file.exists());
}

#[test]
fn a_bad_profile_names_its_file_and_key_in_both_languages() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lab.toml");
    std::fs::write(
        &file,
        "schema = 1\n[toolkit]\nversion = \"12.4\"\n[pytorch]\nvarient = \"cu124\"\n",
    )
    .unwrap();
    let e = profile::load(&file, &Tables::embedded().unwrap(), Os::Windows).unwrap_err();
    assert_eq!(e.key, "[pytorch] varient");
    assert!(matches!(&e.problem, Problem::UnknownKey { known } if known.contains("variant")));
    for lang in [Lang::En, Lang::Zh] {
        let said = render(&e.message(), lang);
        assert!(
            said.contains("lab.toml")
                && said.contains("[pytorch] varient")
                && said.contains("variant"),
            "{said}"
        );
    }
}
