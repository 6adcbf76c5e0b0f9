//! The package manifests (#35): winget's (packaging/winget/, schema 1.10.0) and Scoop's
//! (packaging/scoop/cuda-setup.json) read as their clients read them, held against the
//! schemas' shape (required fields, known keys, enums, patterns, copied below with their
//! sources), against Cargo.toml's version and the CLI's exit codes; the release script
//! that fills them in (scripts/update-manifests.sh) and the signing script's answer when no
//! certificate is given (scripts/sign.sh).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::schema_shape::shape;
use sha2::{Digest, Sha256};

use crate::support::cli;

// winget's schema 1.10.0, copied from
// https://github.com/microsoft/winget-cli/blob/master/schemas/JSON/manifests/v1.10.0/manifest.installer.1.10.0.json
// https://github.com/microsoft/winget-cli/blob/master/schemas/JSON/manifests/v1.10.0/manifest.defaultLocale.1.10.0.json
// https://github.com/microsoft/winget-cli/blob/master/schemas/JSON/manifests/v1.10.0/manifest.version.1.10.0.json
const MANIFEST_VERSION: &str = "1.10.0";
const VERSION_KEYS: &[&str] = &[
    "PackageIdentifier",
    "PackageVersion",
    "DefaultLocale",
    "ManifestType",
    "ManifestVersion",
];
/// The version manifest requires every key it has.
const VERSION_REQUIRED: &[&str] = VERSION_KEYS;
const LOCALE_REQUIRED: &[&str] = &[
    "PackageIdentifier",
    "PackageVersion",
    "PackageLocale",
    "Publisher",
    "PackageName",
    "License",
    "ShortDescription",
    "ManifestType",
    "ManifestVersion",
];
const LOCALE_KEYS: &[&str] = &[
    "PackageIdentifier",
    "PackageVersion",
    "PackageLocale",
    "Publisher",
    "PublisherUrl",
    "PublisherSupportUrl",
    "PrivacyUrl",
    "Author",
    "PackageName",
    "PackageUrl",
    "License",
    "LicenseUrl",
    "Copyright",
    "CopyrightUrl",
    "ShortDescription",
    "Description",
    "Moniker",
    "Tags",
    "Agreements",
    "ReleaseNotes",
    "ReleaseNotesUrl",
    "PurchaseUrl",
    "InstallationNotes",
    "Documentations",
    "Icons",
    "ManifestType",
    "ManifestVersion",
];
const INSTALLER_REQUIRED: &[&str] = &[
    "PackageIdentifier",
    "PackageVersion",
    "Installers",
    "ManifestType",
    "ManifestVersion",
];
/// The installer manifest's root keys. An entry of `Installers` takes the same, less the
/// package's identity and the manifest's own fields, plus its URL and hashes.
const INSTALLER_KEYS: &[&str] = &[
    "PackageIdentifier",
    "PackageVersion",
    "Channel",
    "InstallerLocale",
    "Platform",
    "MinimumOSVersion",
    "InstallerType",
    "NestedInstallerType",
    "NestedInstallerFiles",
    "Scope",
    "InstallModes",
    "InstallerSwitches",
    "InstallerSuccessCodes",
    "ExpectedReturnCodes",
    "UpgradeBehavior",
    "Commands",
    "Protocols",
    "FileExtensions",
    "Dependencies",
    "PackageFamilyName",
    "ProductCode",
    "Capabilities",
    "RestrictedCapabilities",
    "Markets",
    "InstallerAbortsTerminal",
    "ReleaseDate",
    "InstallLocationRequired",
    "RequireExplicitUpgrade",
    "DisplayInstallWarnings",
    "UnsupportedOSArchitectures",
    "UnsupportedArguments",
    "AppsAndFeaturesEntries",
    "ElevationRequirement",
    "InstallationMetadata",
    "DownloadCommandProhibited",
    "RepairBehavior",
    "ArchiveBinariesDependOnPath",
    "Installers",
    "ManifestType",
    "ManifestVersion",
];
const ROOT_ONLY_KEYS: &[&str] = &[
    "PackageIdentifier",
    "PackageVersion",
    "Channel",
    "Installers",
    "ManifestType",
    "ManifestVersion",
];
const ENTRY_ONLY_KEYS: &[&str] = &[
    "Architecture",
    "InstallerUrl",
    "InstallerSha256",
    "SignatureSha256",
];
const ENTRY_REQUIRED: &[&str] = &["Architecture", "InstallerUrl", "InstallerSha256"];
const INSTALLER_TYPES: &[&str] = &[
    "msix",
    "msi",
    "appx",
    "exe",
    "zip",
    "inno",
    "nullsoft",
    "wix",
    "burn",
    "pwa",
    "portable",
    "advinstExe",
    "advinstMsi",
];
const ARCHITECTURES: &[&str] = &["x86", "x64", "arm", "arm64", "neutral"];
const INSTALL_MODES: &[&str] = &["interactive", "silent", "silentWithProgress"];
const UPGRADE_BEHAVIORS: &[&str] = &["install", "uninstallPrevious", "deny"];
const SWITCHES: &[&str] = &[
    "Silent",
    "SilentWithProgress",
    "Interactive",
    "InstallLocation",
    "Log",
    "Upgrade",
    "Custom",
    "Repair",
];
const RETURN_RESPONSES: &[&str] = &[
    "packageInUse",
    "packageInUseByApplication",
    "installInProgress",
    "fileInUse",
    "missingDependency",
    "diskFull",
    "insufficientMemory",
    "invalidParameter",
    "noNetwork",
    "contactSupport",
    "rebootRequiredToFinish",
    "rebootRequiredForInstall",
    "rebootInitiated",
    "cancelledByUser",
    "alreadyInstalled",
    "downgrade",
    "blockedByPolicy",
    "systemNotSupported",
    "custom",
];

// Scoop's schema, copied from https://github.com/ScoopInstaller/Scoop/blob/master/schema.json
// (its root has "additionalProperties": false, and requires only "version").
const SCOOP_KEYS: &[&str] = &[
    "_comment",
    "##",
    "architecture",
    "autoupdate",
    "bin",
    "persist",
    "checkver",
    "cookie",
    "depends",
    "description",
    "env_add_path",
    "env_set",
    "extract_dir",
    "extract_to",
    "hash",
    "homepage",
    "innosetup",
    "installer",
    "license",
    "msi",
    "notes",
    "post_install",
    "pre_install",
    "psmodule",
    "shortcuts",
    "suggest",
    "uninstaller",
    "url",
    "version",
];
const SCOOP_ARCH_KEYS: &[&str] = &[
    "bin",
    "checkver",
    "extract_dir",
    "hash",
    "installer",
    "msi",
    "post_install",
    "pre_install",
    "shortcuts",
    "uninstaller",
    "url",
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn packaging() -> PathBuf {
    repo().join("packaging")
}

fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The version, installer and default-locale manifests under `dir/winget`.
fn winget(dir: &Path) -> [Value; 3] {
    let d = dir.join("winget");
    [
        yaml(&d.join("CudaSetup.CudaSetup.yaml")),
        yaml(&d.join("CudaSetup.CudaSetup.installer.yaml")),
        yaml(&d.join("CudaSetup.CudaSetup.locale.en-US.yaml")),
    ]
}

fn scoop(dir: &Path) -> Value {
    let p = dir.join("scoop/cuda-setup.json");
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key}: not a string in {v}"))
}

fn one_of(what: &str, value: &str, allowed: &[&str]) {
    assert!(
        allowed.contains(&value),
        "{what}: {value} not one of {allowed:?}"
    );
}

/// The schema's PackageIdentifier pattern: 2 to 8 dot-separated parts of 1 to 32
/// characters, none of `\ / : * ? " < > |`, whitespace or control characters.
fn package_identifier_ok(id: &str) -> bool {
    let parts: Vec<&str> = id.split('.').collect();
    id.len() <= 128
        && (2..=8).contains(&parts.len())
        && parts.iter().all(|p| {
            (1..=32).contains(&p.chars().count())
                && p.chars()
                    .all(|c| !c.is_whitespace() && !c.is_control() && !"\\/:*?\"<>|".contains(c))
        })
}

fn sha256_ok(h: &str) -> bool {
    h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The schema's ManifestVersion pattern: three dotted numbers of at most 65535.
fn manifest_version_ok(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3 && parts.iter().all(|p| p.parse::<u16>().is_ok())
}

#[test]
fn winget_manifests_parse_and_have_the_schema_shape() {
    let [version, installer, locale] = winget(&packaging());
    shape("version manifest", &version, VERSION_REQUIRED, VERSION_KEYS);
    shape("locale manifest", &locale, LOCALE_REQUIRED, LOCALE_KEYS);
    shape(
        "installer manifest",
        &installer,
        INSTALLER_REQUIRED,
        INSTALLER_KEYS,
    );
    assert_eq!(s(&version, "ManifestType"), "version");
    assert_eq!(s(&installer, "ManifestType"), "installer");
    assert_eq!(s(&locale, "ManifestType"), "defaultLocale");
    for m in [&version, &installer, &locale] {
        assert_eq!(s(m, "ManifestVersion"), MANIFEST_VERSION);
        assert!(manifest_version_ok(s(m, "ManifestVersion")));
        let id = s(m, "PackageIdentifier");
        assert!(package_identifier_ok(id), "{id}");
        assert_eq!(
            id,
            s(&version, "PackageIdentifier"),
            "one package in all three"
        );
    }
    assert_eq!(s(&version, "DefaultLocale"), s(&locale, "PackageLocale"));
    // The locale's lengths (Publisher and PackageName ≥ 2, License and ShortDescription ≥ 3).
    assert!(s(&locale, "Publisher").chars().count() >= 2);
    assert!(s(&locale, "PackageName").chars().count() >= 2);
    assert!((3..=512).contains(&s(&locale, "License").chars().count()));
    assert!((3..=256).contains(&s(&locale, "ShortDescription").chars().count()));
    for tag in locale["Tags"].as_array().unwrap() {
        assert!((1..=40).contains(&tag.as_str().unwrap().len()), "{tag}");
    }

    // A portable .exe with one command and no Scope, as winget's spec for portable
    // packages allows (winget-cli doc/specs/#182, "Manifest Validation").
    one_of(
        "InstallerType",
        s(&installer, "InstallerType"),
        INSTALLER_TYPES,
    );
    assert_eq!(s(&installer, "InstallerType"), "portable");
    assert!(
        installer.get("Scope").is_none(),
        "winget refuses Scope for portable"
    );
    assert_eq!(installer["Commands"], serde_json::json!(["cuda-setup"]));
    for m in installer["InstallModes"].as_array().unwrap() {
        one_of("InstallModes", m.as_str().unwrap(), INSTALL_MODES);
    }
    one_of(
        "UpgradeBehavior",
        s(&installer, "UpgradeBehavior"),
        UPGRADE_BEHAVIORS,
    );
    for (k, v) in installer["InstallerSwitches"].as_object().unwrap() {
        one_of("InstallerSwitches", k, SWITCHES);
        assert!((1..=512).contains(&v.as_str().unwrap().len()));
    }
    for code in installer
        .get("InstallerSuccessCodes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        assert_ne!(code.as_i64(), Some(0), "the schema forbids 0 here");
    }
    for e in installer["ExpectedReturnCodes"].as_array().unwrap() {
        assert_ne!(e["InstallerReturnCode"].as_i64().unwrap(), 0);
        one_of("ReturnResponse", s(e, "ReturnResponse"), RETURN_RESPONSES);
    }
    let entries = installer["Installers"].as_array().unwrap();
    assert!(!entries.is_empty());
    let entry_keys: Vec<&str> = INSTALLER_KEYS
        .iter()
        .filter(|k| !ROOT_ONLY_KEYS.contains(k))
        .chain(ENTRY_ONLY_KEYS)
        .copied()
        .collect();
    for e in entries {
        shape("installer entry", e, ENTRY_REQUIRED, &entry_keys);
        one_of("Architecture", s(e, "Architecture"), ARCHITECTURES);
        let url = s(e, "InstallerUrl");
        assert!(
            url.starts_with("https://") && url.len() <= 2048,
            "InstallerUrl {url}"
        );
        assert!(sha256_ok(s(e, "InstallerSha256")));
    }
}

#[test]
fn scoop_manifest_parses_and_has_version_url_hash_bin() {
    let m = scoop(&packaging());
    shape("scoop manifest", &m, &["version"], SCOOP_KEYS);
    let version = s(&m, "version");
    // The schema's pattern ^[\w\-.+_]+$.
    assert!(
        !version.is_empty()
            && version
                .chars()
                .all(|c| c.is_alphanumeric() || "-.+_".contains(c)),
        "{version}"
    );
    let x64 = &m["architecture"]["64bit"];
    shape("scoop 64bit", x64, &["url", "hash"], SCOOP_ARCH_KEYS);
    let url = s(x64, "url");
    assert!(url.starts_with("https://") && !url.contains('$'), "{url}");
    assert!(sha256_ok(s(x64, "hash")));
    assert_eq!(s(&m, "bin"), "cuda-setup.exe");
    assert!(
        url.ends_with("/cuda-setup.exe"),
        "bin is the downloaded file: {url}"
    );
    let auto = s(&m["autoupdate"]["architecture"]["64bit"], "url");
    assert_eq!(
        auto.replace("$version", version),
        url,
        "autoupdate derives this release's URL"
    );
    assert!(m["checkver"].is_object());

    // The same file in both package managers.
    let [_, installer, _] = winget(&packaging());
    let entry = &installer["Installers"][0];
    assert_eq!(s(entry, "InstallerUrl"), url);
    assert_eq!(
        s(entry, "InstallerSha256").to_ascii_lowercase(),
        s(x64, "hash").to_ascii_lowercase()
    );
}

#[test]
fn manifest_versions_are_cargo_tomls() {
    let cargo = env!("CARGO_PKG_VERSION");
    for m in winget(&packaging()) {
        assert_eq!(s(&m, "PackageVersion"), cargo);
    }
    assert_eq!(s(&scoop(&packaging()), "version"), cargo);
}

/// `pub const NAME: i32 = N;` from the CLI's source: the integration tests cannot name the
/// CLI's private module, and these are the numbers fleet tools read (docs/fleet.md).
fn cli_exit_codes() -> BTreeMap<String, i64> {
    let src = std::fs::read_to_string(repo().join("src/cli/install.rs")).unwrap();
    src.lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("pub const ")?;
            let (name, value) = rest.split_once(": i32 = ")?;
            Some((name.to_string(), value.trim_end_matches(';').parse().ok()?))
        })
        .collect()
}

#[test]
fn winget_return_codes_are_the_clis_exit_codes() {
    let codes = cli_exit_codes();
    let code = |name: &str| {
        *codes
            .get(name)
            .unwrap_or_else(|| panic!("{name} in {codes:?}"))
    };
    assert_eq!(code("SUCCESS"), 0);
    let [_, installer, _] = winget(&packaging());
    let success: Vec<i64> = installer
        .get("InstallerSuccessCodes")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|c| c.as_i64().unwrap()).collect())
        .unwrap_or_default();
    let expected: Vec<(i64, &str)> = installer["ExpectedReturnCodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["InstallerReturnCode"].as_i64().unwrap(),
                s(e, "ReturnResponse"),
            )
        })
        .collect();
    // `winget validate` refuses a code listed twice, or both as a success and as expected
    // (DuplicateReturnCodeEntry in winget-cli's ManifestValidation.cpp).
    let mut all: Vec<i64> = success
        .iter()
        .copied()
        .chain(expected.iter().map(|e| e.0))
        .collect();
    all.sort();
    all.dedup();
    assert_eq!(
        all.len(),
        success.len() + expected.len(),
        "a code listed twice"
    );
    // As winget maps MSI's own codes (GetDefaultKnownReturnCodes in winget-cli's
    // ManifestCommon.cpp); rebootRequiredToFinish is a success to winget (InstallFlow.cpp).
    let want: BTreeMap<i64, &str> = [
        (code("REBOOT_REQUIRED"), "rebootRequiredToFinish"),
        (code("CANCELLED"), "cancelledByUser"),
        (code("ALREADY_RUNNING"), "installInProgress"),
        (code("PLATFORM_UNSUPPORTED"), "systemNotSupported"),
    ]
    .into();
    assert_eq!(expected.into_iter().collect::<BTreeMap<_, _>>(), want);
    assert!(success.is_empty(), "{success:?}");
    // A fatal error stays a failure: neither a success code nor mapped to a response.
    assert!(!want.contains_key(&code("FAILED")));
}

/// The silent switches are the real command line: `install` takes `--unattended`.
#[test]
fn winget_silent_switches_are_real_flags() {
    let [_, installer, _] = winget(&packaging());
    let help = cli::text(&cli::run(&["install", "--help"]));
    for (k, v) in installer["InstallerSwitches"].as_object().unwrap() {
        let words: Vec<&str> = v.as_str().unwrap().split_whitespace().collect();
        assert_eq!(words[0], "install", "{k}: {v}");
        for flag in &words[1..] {
            assert!(
                help.lines()
                    .any(|l| l.split_whitespace().next() == Some(flag)),
                "{k}: `install {flag}` is not in `cuda-setup install --help`:\n{help}"
            );
        }
    }
}

fn copy_packaging() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for sub in ["winget", "scoop"] {
        let to = t.path().join(sub);
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(packaging().join(sub)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
    t
}

fn update_manifests(dir: &Path, exe: &Path, version: &str, url: &str) -> Output {
    Command::new("bash")
        .arg(repo().join("scripts/update-manifests.sh"))
        .arg(exe)
        .args([version, url])
        .env("PACKAGING_DIR", dir)
        .output()
        .unwrap()
}

#[test]
fn update_manifests_writes_the_hash_url_and_version() {
    let t = copy_packaging();
    let exe = t.path().join("cuda-setup.exe");
    std::fs::write(&exe, b"MZ a release").unwrap();
    let sha: String = Sha256::digest(b"MZ a release")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let version = env!("CARGO_PKG_VERSION");
    let url = format!(
        "https://github.com/someone/cuda-setup/releases/download/v{version}/cuda-setup.exe"
    );

    let out = update_manifests(t.path(), &exe, version, &url);
    assert!(out.status.success(), "{}", cli::text(&out));
    let [v, installer, locale] = winget(t.path());
    for m in [&v, &installer, &locale] {
        assert_eq!(s(m, "PackageVersion"), version);
    }
    let entry = &installer["Installers"][0];
    assert_eq!(s(entry, "InstallerUrl"), url);
    assert_eq!(s(entry, "InstallerSha256"), sha.to_ascii_uppercase());
    // Nothing else in the installer manifest changed, its comments included.
    let name = "winget/CudaSetup.CudaSetup.installer.yaml";
    let before = std::fs::read_to_string(packaging().join(name)).unwrap();
    let after = std::fs::read_to_string(t.path().join(name)).unwrap();
    assert_eq!(before.lines().count(), after.lines().count());
    let changed: Vec<&str> = before
        .lines()
        .zip(after.lines())
        .filter(|(a, b)| a != b)
        .map(|(_, b)| b.trim().split(':').next().unwrap())
        .collect();
    assert_eq!(changed, ["InstallerUrl", "InstallerSha256"]);

    let m = scoop(t.path());
    shape("scoop manifest", &m, &["version"], SCOOP_KEYS);
    assert_eq!(s(&m, "version"), version);
    assert_eq!(s(&m["architecture"]["64bit"], "url"), url);
    assert_eq!(s(&m["architecture"]["64bit"], "hash"), sha);
    assert_eq!(
        s(&m["autoupdate"]["architecture"]["64bit"], "url"),
        "https://github.com/someone/cuda-setup/releases/download/v$version/cuda-setup.exe"
    );
    assert_eq!(
        m["checkver"],
        serde_json::json!({"github": "https://github.com/someone/cuda-setup"})
    );
    assert_eq!(s(&m, "homepage"), "https://github.com/someone/cuda-setup");
}

#[test]
fn update_manifests_refuses_a_wrong_version_or_url_and_touches_nothing() {
    let t = copy_packaging();
    let exe = t.path().join("cuda-setup.exe");
    std::fs::write(&exe, b"MZ").unwrap();
    let snapshot = |p: &Path| {
        [
            "winget/CudaSetup.CudaSetup.yaml",
            "winget/CudaSetup.CudaSetup.installer.yaml",
            "scoop/cuda-setup.json",
        ]
        .map(|f| std::fs::read(p.join(f)).unwrap())
    };
    let before = snapshot(t.path());
    let v = env!("CARGO_PKG_VERSION");
    for (version, url) in [
        // Not Cargo.toml's version.
        (
            "99.0.0",
            "https://example.org/99.0.0/cuda-setup.exe".to_string(),
        ),
        // Not https.
        (v, format!("http://example.org/{v}/cuda-setup.exe")),
        // No version in the URL: Scoop's autoupdate could not derive the next one.
        (v, "https://example.org/latest/cuda-setup.exe".to_string()),
    ] {
        let out = update_manifests(t.path(), &exe, version, &url);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{version} {url}: {}",
            cli::text(&out)
        );
        assert!(
            snapshot(t.path()) == before,
            "{version} {url} changed a file"
        );
    }
}

#[test]
fn sign_without_a_certificate_says_so_and_leaves_the_exe_unsigned() {
    let t = tempfile::tempdir().unwrap();
    let exe = t.path().join("cuda-setup.exe");
    std::fs::write(&exe, b"MZ not signed").unwrap();
    let copy = t.path().join("copy.exe");
    let mut c = Command::new("bash");
    c.arg(repo().join("scripts/sign.sh")).arg(&exe).arg(&copy);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("CUDA_SETUP_SIGN_") {
            c.env_remove(k);
        }
    }
    let out = c.output().unwrap();
    let text = cli::text(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("no certificate given") && text.contains("NOT signed"),
        "{text}"
    );
    assert_eq!(std::fs::read(&exe).unwrap(), b"MZ not signed");
    assert_eq!(std::fs::read(&copy).unwrap(), b"MZ not signed");
}
