//! The fleet engines' files (#36): the DSC v3 resource manifest
//! (packaging/dsc/cuda-setup.dsc.resource.json) held against the published manifest
//! schema's shape (required keys, known keys, enums, patterns, copied below with their
//! sources), its embedded instance schema, the WinGet Configuration example, the Intune
//! scripts' command lines, and the Ansible module's exit codes against the CLI's; then
//! `cuda-setup dsc` run as DSC runs it (JSON on stdin, one JSON line back, drift as exit
//! 0). The Ansible module itself runs for real in tests/fleet/ansible-module.sh.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::support::schema_shape::shape;

use crate::support::cli;

// DSC v3's resource manifest schema, copied from
// https://github.com/PowerShell/DSC/blob/main/schemas/v3/resource/manifest.json
// (bundled: https://aka.ms/dsc/schemas/v3/bundled/resource/manifest.json).
const MANIFEST_REQUIRED: &[&str] = &["$schema", "type", "version"];
const MANIFEST_KEYS: &[&str] = &[
    "$schema",
    "type",
    "version",
    "description",
    "kind",
    "tags",
    "get",
    "set",
    "whatIf",
    "test",
    "delete",
    "export",
    "validate",
    "resolve",
    "adapter",
    "exitCodes",
    "schema",
];
/// The manifest's `$schema` enum (the v3 and v3.0.x URLs, GitHub's and aka.ms's).
const MANIFEST_SCHEMAS: &[&str] = &[
    "https://raw.githubusercontent.com/PowerShell/DSC/main/schemas/v3/resource/manifest.json",
    "https://raw.githubusercontent.com/PowerShell/DSC/main/schemas/v3/bundled/resource/manifest.json",
    "https://raw.githubusercontent.com/PowerShell/DSC/main/schemas/v3.0/resource/manifest.json",
    "https://raw.githubusercontent.com/PowerShell/DSC/main/schemas/v3.0/bundled/resource/manifest.json",
    "https://aka.ms/dsc/schemas/v3/resource/manifest.json",
    "https://aka.ms/dsc/schemas/v3/bundled/resource/manifest.json",
    "https://aka.ms/dsc/schemas/v3.0/resource/manifest.json",
    "https://aka.ms/dsc/schemas/v3.0/bundled/resource/manifest.json",
];
// schemas/v3/resource/manifest.{get,test,set}.json: `executable` required, and these keys.
const GET_KEYS: &[&str] = &["executable", "args", "input"];
const TEST_KEYS: &[&str] = &["executable", "args", "input", "return"];
const SET_KEYS: &[&str] = &[
    "executable",
    "args",
    "input",
    "implementsPretest",
    "handlesExist",
    "return",
];
// schemas/v3/definitions/inputKind.json and returnKind.json.
const INPUT_KINDS: &[&str] = &["env", "stdin"];
const RETURN_KINDS: &[&str] = &["state", "stateAndDiff"];
// schemas/v3/resource/manifest.schema.json: the embedded instance schema's dialects, and
// the `$ref`s that declare the canonical properties (`_inDesiredState` is mandatory when
// the manifest defines `test`).
const INSTANCE_DIALECTS: &[&str] = &[
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft-07/schema#",
];
const IN_DESIRED_STATE_REFS: &[&str] = &[
    "https://aka.ms/dsc/schemas/v3/resource/properties/inDesiredState.json",
    "https://raw.githubusercontent.com/PowerShell/DSC/main/schemas/v3/resource/properties/inDesiredState.json",
];
const REBOOT_REQUESTED_REFS: &[&str] = &[
    "https://aka.ms/dsc/schemas/v3/resource/properties/rebootRequested.json",
    "https://raw.githubusercontent.com/PowerShell/DSC/main/schemas/v3/resource/properties/rebootRequested.json",
];
// DSC's configuration document schema ($schema enum): the 2023/08 one WinGet's v3
// configuration files name (https://learn.microsoft.com/en-us/windows/package-manager/configuration/create-v3)
// and the v3 ones (https://github.com/PowerShell/DSC/blob/main/schemas/v3/config/document.json).
const CONFIG_SCHEMAS: &[&str] = &[
    "https://raw.githubusercontent.com/PowerShell/DSC/main/schemas/2023/08/config/document.json",
    "https://raw.githubusercontent.com/PowerShell/DSC/main/schemas/v3/config/document.json",
    "https://raw.githubusercontent.com/PowerShell/DSC/main/schemas/v3/bundled/config/document.json",
    "https://aka.ms/dsc/schemas/v3/config/document.json",
    "https://aka.ms/dsc/schemas/v3/bundled/config/document.json",
];
/// JSON Schema's simple types (draft 2020-12, validation §6.1.1).
const JSON_TYPES: &[&str] = &[
    "null", "boolean", "object", "array", "number", "string", "integer",
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    let p = repo().join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn json(rel: &str) -> Value {
    serde_json::from_str(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn manifest() -> Value {
    json("packaging/dsc/cuda-setup.dsc.resource.json")
}

fn one_of(what: &str, v: &Value, allowed: &[&str]) {
    let s = v
        .as_str()
        .unwrap_or_else(|| panic!("{what}: not a string: {v}"));
    assert!(allowed.contains(&s), "{what}: {s} not one of {allowed:?}");
}

fn word(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// resourceType.json: `^\w+(\.\w+){0,2}\/\w+$`.
fn resource_type_ok(t: &str) -> bool {
    let Some((owner, name)) = t.split_once('/') else {
        return false;
    };
    let parts: Vec<&str> = owner.split('.').collect();
    (1..=3).contains(&parts.len()) && parts.iter().all(|p| word(p)) && word(name)
}

/// semver.json, without pre-release or build: three numbers, no leading zeros.
fn semver_ok(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'))
        })
}

/// `pub const NAME: i32 = N;` from install's source: the MSI codes `state set` shares.
fn install_exit_codes() -> BTreeMap<String, i64> {
    read("src/cli/install.rs")
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("pub const ")?;
            let (name, value) = rest.split_once(": i32 = ")?;
            Some((name.to_string(), value.trim_end_matches(';').parse().ok()?))
        })
        .collect()
}

fn cargo_version() -> String {
    read("Cargo.toml")
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .map(|v| v.trim_end_matches('"').to_string())
        .expect("the workspace version")
}

/// A method (get/test/set): the schema's keys, and its `oneOf`: `input` with no JSON
/// input argument, or exactly one JSON input argument (with or without `input`).
fn method(what: &str, m: &Value, known: &[&str]) {
    shape(what, m, &["executable"], known);
    assert!(m["executable"].is_string(), "{what}: executable");
    let args = m["args"].as_array().cloned().unwrap_or_default();
    let json_args: Vec<&Value> = args.iter().filter(|a| a.is_object()).collect();
    for a in &args {
        if let Some(o) = a.as_object() {
            shape(
                &format!("{what} JSON input argument"),
                a,
                &["jsonInputArg"],
                &["jsonInputArg", "mandatory"],
            );
            assert!(o["jsonInputArg"].is_string());
        } else {
            assert!(
                a.is_string(),
                "{what}: an argument is a string or an object"
            );
        }
    }
    if let Some(input) = m.get("input") {
        one_of(&format!("{what}.input"), input, INPUT_KINDS);
    }
    let with_input = m.get("input").is_some() && json_args.is_empty();
    let with_arg = json_args.len() == 1;
    assert!(
        with_input ^ with_arg,
        "{what}: DSC needs `input` or exactly one JSON input argument"
    );
    if let Some(r) = m.get("return") {
        one_of(&format!("{what}.return"), r, RETURN_KINDS);
    }
    for k in ["implementsPretest", "handlesExist"] {
        if let Some(b) = m.get(k) {
            assert!(b.is_boolean(), "{what}.{k}");
        }
    }
}

/// A JSON Schema's own shape, recursively: types are JSON's, `required` names declared
/// properties, enums are non-empty, `$ref`s are absolute URLs or local pointers.
fn schema_shape(path: &str, s: &Value) {
    let o = s
        .as_object()
        .unwrap_or_else(|| panic!("{path}: a schema is an object"));
    match o.get("type") {
        None => {}
        Some(Value::String(t)) => assert!(JSON_TYPES.contains(&t.as_str()), "{path}: type {t}"),
        Some(Value::Array(ts)) => {
            assert!(!ts.is_empty(), "{path}: empty type list");
            for t in ts {
                one_of(&format!("{path}: type"), t, JSON_TYPES);
            }
        }
        Some(t) => panic!("{path}: type {t}"),
    }
    if let Some(e) = o.get("enum") {
        assert!(e.as_array().is_some_and(|a| !a.is_empty()), "{path}: enum");
    }
    if let Some(r) = o.get("$ref") {
        let r = r.as_str().unwrap_or_else(|| panic!("{path}: $ref"));
        assert!(
            r.starts_with("https://") || r.starts_with("#/"),
            "{path}: $ref {r}"
        );
    }
    let props = o.get("properties").map(|p| {
        p.as_object()
            .unwrap_or_else(|| panic!("{path}: properties is an object"))
    });
    if let Some(req) = o.get("required") {
        for k in req.as_array().expect("required is a list") {
            let k = k.as_str().expect("required names are strings");
            assert!(
                props.is_some_and(|p| p.contains_key(k)),
                "{path}: required {k} is no property"
            );
        }
    }
    for (k, sub) in props.into_iter().flatten() {
        schema_shape(&format!("{path}.{k}"), sub);
    }
    if let Some(items) = o.get("items") {
        schema_shape(&format!("{path}[]"), items);
    }
    for k in ["readOnly", "additionalProperties"] {
        if let Some(v) = o.get(k) {
            assert!(v.is_boolean() || v.is_object(), "{path}: {k}");
        }
    }
}

#[test]
fn dsc_manifest_has_the_published_schema_shape() {
    let m = manifest();
    shape("manifest", &m, MANIFEST_REQUIRED, MANIFEST_KEYS);
    one_of("$schema", &m["$schema"], MANIFEST_SCHEMAS);
    let t = m["type"].as_str().unwrap();
    assert!(resource_type_ok(t), "type {t}");
    assert!(!resource_type_ok("CudaSetup-LabProfile") && !resource_type_ok("a.b.c.d/e"));
    let v = m["version"].as_str().unwrap();
    assert!(semver_ok(v), "version {v}");
    assert!(!semver_ok("0.1") && !semver_ok("01.0.0"));
    let tags: Vec<&str> = m["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(tags.iter().all(|t| word(t)), "tags: {tags:?}");
    let mut unique = tags.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), tags.len(), "tags are unique");
    // No `kind`: a plain resource; not an importer, so `get` is required.
    assert!(m.get("kind").is_none());
    method("get", &m["get"], GET_KEYS);
    method("test", &m["test"], TEST_KEYS);
    method("set", &m["set"], SET_KEYS);
    for (code, meaning) in m["exitCodes"].as_object().unwrap() {
        let digits = code.strip_prefix('-').unwrap_or(code);
        assert!(
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()),
            "exitCodes key {code}"
        );
        assert!(meaning.is_string(), "exitCodes {code}");
    }

    // The instance schema: embedded (not a command), with its dialect, an object type,
    // at least one property, and `_inDesiredState` declared by its canonical $ref
    // because the manifest defines `test`.
    let schema = m["schema"].as_object().unwrap();
    assert_eq!(
        schema.len(),
        1,
        "schema is `command` or `embedded`, not both"
    );
    let e = &m["schema"]["embedded"];
    shape(
        "embedded schema",
        e,
        &["$schema", "type", "properties"],
        &[
            "$schema",
            "$id",
            "title",
            "description",
            "type",
            "required",
            "additionalProperties",
            "properties",
        ],
    );
    one_of("embedded $schema", &e["$schema"], INSTANCE_DIALECTS);
    assert_eq!(e["type"], "object");
    let props = e["properties"].as_object().unwrap();
    assert!(!props.is_empty());
    one_of(
        "_inDesiredState",
        &e["properties"]["_inDesiredState"]["$ref"],
        IN_DESIRED_STATE_REFS,
    );
    one_of(
        "_rebootRequested",
        &e["properties"]["_rebootRequested"]["$ref"],
        REBOOT_REQUESTED_REFS,
    );
}

#[test]
fn dsc_methods_run_the_state_commands_and_name_every_exit_code() {
    let m = manifest();
    for verb in ["get", "test", "set"] {
        assert_eq!(m[verb]["executable"], "cuda-setup", "{verb}");
        assert_eq!(
            m[verb]["args"],
            serde_json::json!(["dsc", verb]),
            "{verb}: `cuda-setup dsc VERB` reads the instance's JSON on stdin"
        );
        assert_eq!(m[verb]["input"], "stdin", "{verb}");
    }
    // `state set` tests before it changes anything (it runs the same plan as install,
    // whose steps report `changed: false` when done), so DSC need not test first.
    assert_eq!(m["set"]["implementsPretest"], true);
    assert_eq!(m["version"].as_str().unwrap(), cargo_version());

    // DSC reads every code but 0 as an error, so each one `state` can end with has a
    // meaning: install's MSI codes (3010 is 0 with `_rebootRequested` from `dsc set`) and
    // the command line's.
    let codes: Vec<String> = m["exitCodes"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let install = install_exit_codes();
    assert!(install.contains_key("FAILED"), "{install:?}");
    for (name, code) in &install {
        if *code == 3010 {
            continue;
        }
        assert!(
            codes.contains(&code.to_string()),
            "exitCodes lacks {code} ({name})"
        );
    }
    assert!(codes.contains(&cuda_setup_core::exit::USAGE.to_string()));
}

#[test]
fn dsc_instance_schema_is_the_checked_in_one_and_a_json_schema() {
    let file = json("packaging/dsc/lab-profile.schema.json");
    assert_eq!(
        manifest()["schema"]["embedded"],
        file,
        "the manifest embeds packaging/dsc/lab-profile.schema.json as it is"
    );
    schema_shape("lab-profile.schema.json", &file);
    // The desired state is the profile's path; the rest is what the PC answers.
    assert_eq!(file["required"], serde_json::json!(["profile"]));
    assert_eq!(file["properties"]["profile"]["type"], "string");
    assert_eq!(file["additionalProperties"], false);
    for (k, p) in file["properties"].as_object().unwrap() {
        if k != "profile" {
            assert!(
                p["readOnly"] == true || p.get("$ref").is_some(),
                "{k}: only `profile` is set by the user"
            );
        }
    }
    // The drift layers are the contract's (state test --json).
    assert_eq!(
        file["properties"]["drift"]["items"]["properties"]["layer"]["enum"],
        serde_json::json!(["driver", "toolkit", "cudnn", "pytorch", "guard"])
    );
}

#[test]
fn winget_configuration_uses_the_resource_and_is_the_one_in_the_docs() {
    let text = read("packaging/dsc/configuration.dsc.yaml");
    let doc: Value = serde_norway::from_str(&text).expect("configuration.dsc.yaml is YAML");
    shape(
        "configuration",
        &doc,
        &["$schema", "resources"],
        &[
            "$schema",
            "metadata",
            "parameters",
            "variables",
            "resources",
        ],
    );
    one_of("configuration $schema", &doc["$schema"], CONFIG_SCHEMAS);
    assert_eq!(
        doc["metadata"]["winget"]["processor"]["identifier"],
        "dscv3"
    );
    let resources = doc["resources"].as_array().unwrap();
    assert!(!resources.is_empty());
    let m = manifest();
    let schema = &m["schema"]["embedded"];
    let ours: Vec<&Value> = resources
        .iter()
        .filter(|r| r["type"] == m["type"])
        .collect();
    assert_eq!(ours.len(), 1, "one CudaSetup/LabProfile resource");
    for r in resources {
        shape(
            "resource",
            r,
            &["name", "type"],
            &["name", "type", "properties", "dependsOn", "metadata"],
        );
    }
    // Its properties are what the instance schema accepts: the required ones, no other
    // (additionalProperties: false), nothing read-only.
    let props = ours[0]["properties"].as_object().unwrap();
    for k in schema["required"].as_array().unwrap() {
        assert!(props.contains_key(k.as_str().unwrap()), "{k} missing");
    }
    for (k, v) in props {
        let decl = &schema["properties"][k];
        assert!(decl.is_object(), "{k} is not in the instance schema");
        assert_ne!(decl["readOnly"], true, "{k} is read-only");
        assert_eq!(decl["type"], "string");
        assert!(v.is_string());
    }
    assert!(props["profile"].as_str().unwrap().ends_with(".toml"));

    // docs/fleet.md shows the same document (comments aside).
    let body: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .collect();
    let docs = read("docs/fleet.md");
    assert!(
        docs.contains(&body.join("\n")),
        "docs/fleet.md's WinGet Configuration differs from packaging/dsc/configuration.dsc.yaml"
    );
}

/// The line of a script that runs cuda-setup (`& $exe …`).
fn call(script: &str) -> String {
    let text = read(&format!("packaging/intune/{script}"));
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("& $exe ")).collect();
    assert_eq!(lines.len(), 1, "{script}: one call of cuda-setup");
    lines[0].to_string()
}

#[test]
fn intune_scripts_run_state_test_and_set_with_the_remediations_exit_codes() {
    for script in ["detect.ps1", "remediate.ps1", "detect-app.ps1"] {
        let text = read(&format!("packaging/intune/{script}"));
        // Windows PowerShell 5.1 reads a file without a BOM in the ANSI code page.
        assert!(text.is_ascii(), "{script}: ASCII only");
        // Intune takes anything on stderr as a script error, whatever the exit code.
        for noisy in ["Write-Error", "Write-Warning", "Write-Host", "throw "] {
            assert!(!text.contains(noisy), "{script}: {noisy}");
        }
        assert!(
            text.contains("$labProfile = '"),
            "{script}: the profile is set at the top"
        );
        // cuda-setup writes UTF-8: PowerShell must decode it so (not in code page 936),
        // before cuda-setup runs, quietly where there is no console.
        let utf8 = "try { [Console]::OutputEncoding = [Text.Encoding]::UTF8 } catch { }";
        let at = text
            .find(utf8)
            .unwrap_or_else(|| panic!("{script}: no UTF-8 line"));
        assert!(at < text.find("& $exe ").unwrap(), "{script}: UTF-8 first");
    }

    let detect = call("detect.ps1");
    assert!(
        detect.contains("state test --profile $labProfile"),
        "{detect}"
    );
    assert!(
        detect.contains("--report $report") && detect.contains("--json"),
        "{detect}"
    );
    let text = read("packaging/intune/detect.ps1");
    assert!(text.contains("if ($code -eq 0) { Write-Output 'in the desired state'; exit 0 }"));
    assert!(text.contains("if ($code -eq 1 -and $result) {") && text.contains("    exit 1\n"));

    let remediate = call("remediate.ps1");
    assert!(
        remediate.contains("state set --profile $labProfile"),
        "{remediate}"
    );
    assert!(
        remediate.contains("--wait") && remediate.contains("--report $report"),
        "{remediate}"
    );
    let text = read("packaging/intune/remediate.ps1");
    assert!(text.contains("if ($code -eq 3010) {") && text.contains("restart"));
    assert!(text.contains("if ($code -eq 3010) { Write-Output 'done; restart the PC to finish the driver update'; exit 0 }"));
    // `state set --json` has no top-level failure: a failed run is the last of `runs`.
    assert!(
        !text.contains("$result.failure"),
        "remediate.ps1 reads a failure state set never writes"
    );
    assert!(text.contains("$runs = @($result.runs | Where-Object { $_ })"));
    assert!(text.contains("$failure = if ($runs.Count) { $runs[-1].failure } else { $null }"));
    assert!(text.contains("$($failure.error) ($($failure.hint))"));

    // The app detection rule always exits 0 and prints only when the PC matches.
    let app = call("detect-app.ps1");
    assert!(app.contains("state test --profile $labProfile"), "{app}");
    let text = read("packaging/intune/detect-app.ps1");
    let exits: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("exit "))
        .map(|l| l.trim())
        .collect();
    assert!(exits.iter().all(|l| l.contains("exit 0")), "{exits:?}");
    assert!(text.contains("if ($LASTEXITCODE -eq 0) { Write-Output 'in the desired state' }"));
}

#[test]
fn ansible_module_and_docs_know_the_clis_exit_codes() {
    // The module maps what a Unix shell sees (the low 8 bits) back to the MSI code.
    let module = read("ansible/ansible_collections/cuda_setup/lab/plugins/modules/cuda_setup.py");
    let line = module
        .lines()
        .find(|l| l.starts_with("WINDOWS_CODE = {"))
        .expect("WINDOWS_CODE in the module");
    let pairs: BTreeMap<i64, i64> = line
        .trim_start_matches("WINDOWS_CODE = {")
        .trim_end_matches('}')
        .split(',')
        .map(|p| {
            let (a, b) = p.split_once(':').unwrap();
            (a.trim().parse().unwrap(), b.trim().parse().unwrap())
        })
        .collect();
    let docs = read("docs/fleet.md");
    for (name, code) in install_exit_codes() {
        if code == 0 {
            continue;
        }
        assert_eq!(
            pairs.get(&(code % 256)),
            Some(&code),
            "the module should read {} as {code} ({name})",
            code % 256
        );
        assert!(
            docs.contains(&format!("| {code} | {} |", code % 256)),
            "docs/fleet.md's exit code table lacks {code} ({name})"
        );
    }
    assert!(module.contains("OK_TEST = (0, 1)") && module.contains("OK_SET = (0, 3010)"));

    // The collection is released with cuda-setup: Galaxy's namespace.name and our version.
    let galaxy: Value = serde_norway::from_str(&read(
        "ansible/ansible_collections/cuda_setup/lab/galaxy.yml",
    ))
    .unwrap();
    assert_eq!(galaxy["namespace"], "cuda_setup");
    assert_eq!(galaxy["name"], "lab");
    assert_eq!(galaxy["version"].as_str().unwrap(), cargo_version());
}

/// `cuda-setup dsc VERB REST…` with `input` on standard input, as DSC runs it.
fn dsc(verb: &str, input: &str, rest: &[&OsStr]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(["dsc", verb])
        .args(rest)
        .env("LANG", "C")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// The answer is one JSON line whose every property the instance schema declares, typed
/// as it says (DSC validates instances against it).
fn one_instance(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "one JSON line for DSC: {stdout}\n{}",
        cli::text(out)
    );
    let v: Value = serde_json::from_str(lines[0]).unwrap();
    let schema = json("packaging/dsc/lab-profile.schema.json");
    for (k, value) in v.as_object().unwrap() {
        let decl = &schema["properties"][k];
        assert!(decl.is_object(), "{k} is not in the instance schema");
        let types: Vec<&str> = match &decl["type"] {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().map(|t| t.as_str().unwrap()).collect(),
            // The canonical properties ($ref): boolean or null.
            _ => vec!["boolean", "null"],
        };
        let ty = match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
            Value::Number(_) => "number",
        };
        assert!(types.contains(&ty), "{k}: {ty} is not {types:?}");
    }
    v
}

#[test]
fn dsc_refuses_input_that_is_not_the_resources_properties() {
    let cases = [
        ("not json", "not a JSON object"),
        ("{}", "names no lab profile"),
        (
            r#"{"profile":"lab.toml","cuda":"12.4"}"#,
            "does not take: cuda",
        ),
    ];
    for (input, says) in cases {
        for verb in ["get", "test", "set"] {
            let out = dsc(verb, input, &[]);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{verb} {input}: {}",
                cli::text(&out)
            );
            assert!(out.stdout.is_empty(), "DSC reads stdout as the answer");
            assert!(cli::text(&out).contains(says), "{}", cli::text(&out));
        }
    }
}

#[test]
fn dsc_test_answers_drift_as_dsc_reads_it_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let profile = dir.path().join("lab.toml");
    std::fs::write(
        &profile,
        "schema = 1\n\n[toolkit]\nversion = \"11.4\"\nmethod = \"installer\"\n",
    )
    .unwrap();
    let input = serde_json::json!({ "profile": profile }).to_string();
    let sandbox: Vec<&OsStr> = [
        "--root".as_ref(),
        root.as_os_str(),
        "--os".as_ref(),
        "linux".as_ref(),
        "--gpu-cc".as_ref(),
        "8.6".as_ref(),
        "--driver".as_ref(),
        "470.82.01".as_ref(),
    ]
    .to_vec();

    // An empty sandbox lacks the toolkit: drift, and for DSC that is an answer (exit 0).
    let out = dsc("test", &input, &sandbox);
    assert_eq!(out.status.code(), Some(0), "{}", cli::text(&out));
    let a = one_instance(&out);
    assert_eq!(a["_inDesiredState"], false);
    assert_eq!(a["profile"], profile.display().to_string());
    let layers: Vec<&str> = a["drift"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["layer"].as_str().unwrap())
        .collect();
    assert_eq!(layers, ["toolkit"], "{a}");
    assert_eq!(a["state"]["os"], "linux");
    assert_eq!(
        std::fs::read_dir(&root).unwrap().count(),
        0,
        "test changes nothing"
    );

    // get: the state, no judgement.
    let out = dsc("get", &input, &sandbox);
    assert_eq!(out.status.code(), Some(0), "{}", cli::text(&out));
    let a = one_instance(&out);
    assert!(
        a["state"].is_object() && a.get("_inDesiredState").is_none(),
        "{a}"
    );

    // A profile cuda-setup refuses keeps state's exit code (2) and says why, not on stdout.
    std::fs::write(&profile, "schema = 99\n").unwrap();
    let out = dsc("test", &input, &sandbox);
    assert_eq!(out.status.code(), Some(2), "{}", cli::text(&out));
    assert!(out.stdout.is_empty());
    assert!(cli::text(&out).contains("lab.toml"), "{}", cli::text(&out));
}

/// The `"fix_step": "…"` values a text shows.
fn fix_steps(text: &str) -> Vec<String> {
    text.split("fix_step")
        .skip(1)
        .filter_map(|rest| {
            let v = rest.trim_start_matches(['"', ':', ' ']);
            let end = v.find(|c: char| !(c.is_ascii_lowercase() || c == '_'))?;
            Some(v[..end].to_string())
        })
        .filter(|v| !v.is_empty())
        .collect()
}

#[test]
fn docs_and_the_module_show_what_the_commands_print() {
    let docs = read("docs/fleet.md");
    let module = read("ansible/ansible_collections/cuda_setup/lab/plugins/modules/cuda_setup.py");
    // The sample drift is what `state test --json` prints for it (an empty sandbox, a
    // profile wanting CUDA 12.4).
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("lab.toml");
    std::fs::write(
        &profile,
        "schema = 1\n\n[toolkit]\nversion = \"12.4\"\nmethod = \"installer\"\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(["state", "test", "--json", "--lang", "en", "--profile"])
        .arg(&profile)
        .arg("--root")
        .arg(dir.path())
        .args(["--os", "linux", "--gpu-cc", "8.6", "--driver", "550.54.14"])
        .env("LANG", "C")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", cli::text(&out));
    let tested: Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &tested["drift"][0];
    assert_eq!(d["layer"], "toolkit", "{tested}");
    for (k, v) in d.as_object().unwrap() {
        assert!(
            docs.contains(&format!("\"{k}\": {v}")),
            "docs/fleet.md: {k}: {v}"
        );
        let yaml = match v {
            Value::String(s) if k == "fix" => format!("\"{s}\""),
            Value::String(s) if k == "should" => format!("\"{s}\""),
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        assert!(
            module.contains(&format!("{k}: {yaml}\n")),
            "RETURN: {k}: {yaml}"
        );
    }

    // Every fix_step shown is a plan step's name as the JSON spells it.
    for (what, text) in [("docs/fleet.md", &docs), ("cuda_setup.py", &module)] {
        let steps = fix_steps(text);
        assert!(!steps.is_empty(), "{what} shows no fix_step");
        for s in steps {
            let parsed: Result<cuda_setup_core::steps::StepKind, _> =
                serde_json::from_value(Value::String(s.clone()));
            assert!(parsed.is_ok(), "{what}: fix_step {s} is no step");
        }
    }

    // `--write-profile` conflicts with `--json` (clap, exit 2): no command shows both.
    for span in docs.split('`').skip(1).step_by(2) {
        assert!(
            !(span.contains("--write-profile") && span.contains("--json")),
            "{span}"
        );
    }
    assert!(!docs.contains("on that same line"));

    // The Windows play reads set's JSON only when set printed it (a failure may not).
    assert!(
        docs.contains("changed_when: cuda.rc in [0, 3010] and (cuda.stdout | from_json).changed"),
        "the Windows play's changed_when"
    );
    assert!(!docs.contains("changed_when: (cuda.stdout | from_json)"));

    // `dsc resource test`'s example works in Windows PowerShell 5.1: the setting in a file.
    assert!(docs.contains("--path lab-instance.yaml"));

    // fleet collect's exit codes, as a scheduled task reads them.
    let collect = docs
        .split("`fleet collect`'s exit codes")
        .nth(1)
        .expect("docs/fleet.md names fleet collect's exit codes");
    for row in [
        "| 0 | every report read",
        "| 1 | a PC drifted",
        "| 2 | the folder",
    ] {
        assert!(collect.contains(row), "{row}");
    }
}

// The stand-in Python is a shell script (tests/support/python.rs is Unix-only).
#[cfg(unix)]
#[test]
fn dsc_get_looks_at_the_python_the_profile_names_as_test_does() {
    use crate::support::python;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    // A Python that only the profile names: no guard record, nothing on a PATH.
    let py = python::interpreter(
        &dir.path().join("venv/bin"),
        Some(&python::Torch::new("2.5.1+cu124", Some("12.4"), "sm_86")),
    );
    let profile = dir.path().join("lab.toml");
    std::fs::write(
        &profile,
        format!(
            "schema = 1\n\n[pytorch]\nversion = \"2.5\"\nvariant = \"cu124\"\npython = '{}'\nguard = false\n",
            py.display()
        ),
    )
    .unwrap();
    let input = serde_json::json!({ "profile": profile }).to_string();
    let sandbox: Vec<&OsStr> = [
        "--root".as_ref(),
        root.as_os_str(),
        "--os".as_ref(),
        "linux".as_ref(),
        "--gpu-cc".as_ref(),
        "8.6".as_ref(),
        "--driver".as_ref(),
        "550.54.14".as_ref(),
    ]
    .to_vec();

    let tested = one_instance(&dsc("test", &input, &sandbox));
    let got = one_instance(&dsc("get", &input, &sandbox));
    assert_eq!(
        tested["state"]["pytorch"]["python"],
        py.display().to_string(),
        "{tested}"
    );
    assert_eq!(
        got["state"]["pytorch"], tested["state"]["pytorch"],
        "get and test look at the same Python"
    );

    // `state get --profile` itself: the profile names the Python, nothing is judged.
    let out = Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(["state", "get", "--json", "--profile"])
        .arg(&profile)
        .args(&sandbox)
        .env("LANG", "C")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", cli::text(&out));
    let state: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        state["pytorch"]["version"],
        tested["state"]["pytorch"]["version"]
    );
    assert!(state.get("drift").is_none(), "{state}");
}

#[test]
fn a_failed_state_set_names_its_failure_where_remediate_reads_it() {
    // NVIDIA's installer as a normal user on a Linux sandbox: its pre-flight fails, at once
    // and offline (every source points at a closed port on loopback).
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let profile = dir.path().join("lab.toml");
    std::fs::write(
        &profile,
        "schema = 1\n\n[toolkit]\nversion = \"12.4\"\nmethod = \"installer\"\n",
    )
    .unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_cuda-setup"));
    c.args(["state", "set", "--json", "--profile"])
        .arg(&profile)
        .arg("--root")
        .arg(&root)
        .args(["--os", "linux", "--gpu-cc", "8.6", "--driver", "550.54.14"])
        .env("LANG", "C")
        .env("HOME", dir.path().join("home"))
        .env("CUDA_SETUP_TEST_NOT_ELEVATED", "1");
    cli::sources(&mut c, "http://127.0.0.1:9", "http://127.0.0.1:9");
    let out = c.output().unwrap();
    let v: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", cli::text(&out)));
    assert_eq!(v["exit_code"], 1603, "{v}");
    // remediate.ps1: `$runs[-1].failure`, its error and hint; nothing at the top.
    assert!(v.get("failure").is_none(), "{v}");
    let failure = &v["runs"].as_array().unwrap().last().unwrap()["failure"];
    assert!(
        failure["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{v}"
    );
    assert!(
        failure["hint"].as_str().is_some_and(|h| !h.is_empty()),
        "{v}"
    );
    let remediate = read("packaging/intune/remediate.ps1");
    assert!(remediate.contains("$runs[-1].failure"));
}
