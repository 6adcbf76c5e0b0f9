//! `cuda-setup dsc get|test|set` (#36): the DSC v3 resource `CudaSetup/LabProfile`
//! (packaging/dsc/cuda-setup.dsc.resource.json). DSC passes the instance's properties as
//! one line of JSON on standard input (`{"profile": PATH}`) and takes every exit code but
//! 0 as an error (https://learn.microsoft.com/en-us/powershell/dsc/reference/schemas/resource/manifest/root?view=dsc-3.0),
//! so this runs `cuda-setup state VERB --profile PATH --json` as a child and answers on
//! one line in DSC's terms: `_inDesiredState` (test; drift is exit 0), `_rebootRequested`
//! (set; a pending restart is exit 0), with `state` and `drift` beside them. Nothing is
//! decided here: the child's JSON is the contract (`state test --json`), reshaped. `get`
//! gets the profile too, only for the Python it names: the one `test` and `set` look at.

use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Map, Value, json};

use super::{CliError, exit, install};
use cuda_setup_core::i18n::{Lang, t, tf};

/// DSC sends one compressed JSON object; a profile's path is short.
const MAX_INPUT: u64 = 1 << 20;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What DSC asks: get (the PC's state), test (does it match the profile?), set (make it so)
    #[arg(value_enum)]
    pub verb: Verb,
    /// More arguments for `cuda-setup state VERB` (a sandbox: --root DIR --os linux …)
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    pub rest: Vec<OsString>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Verb {
    Get,
    Test,
    Set,
}

impl Verb {
    fn name(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::Test => "test",
            Verb::Set => "set",
        }
    }
}

/// What is wrong with DSC's input.
#[derive(Debug, PartialEq, Eq)]
enum BadInput {
    NotAnObject,
    NoProfile,
    Unknown(String),
}

/// The lab profile's path from DSC's input. The read-only properties DSC may hand back
/// (`state`, `drift`, `_inDesiredState`, …) are ignored; any other property is refused,
/// as the instance schema (additionalProperties: false) says.
fn profile_of(input: &str) -> Result<String, BadInput> {
    let map: Map<String, Value> = serde_json::from_str(input).map_err(|_| BadInput::NotAnObject)?;
    if let Some(k) = map
        .keys()
        .find(|k| !matches!(k.as_str(), "profile" | "state" | "drift") && !k.starts_with('_'))
    {
        return Err(BadInput::Unknown(k.clone()));
    }
    match map.get("profile").and_then(Value::as_str) {
        Some(p) if !p.trim().is_empty() => Ok(p.to_string()),
        _ => Err(BadInput::NoProfile),
    }
}

/// DSC's answer from `state VERB --json`'s: None when the child's code is a failure.
fn answer(verb: Verb, profile: &str, child: &Value, code: i32) -> Option<Value> {
    match verb {
        Verb::Get => (code == exit::OK).then(|| json!({ "profile": profile, "state": child })),
        Verb::Test => (code == exit::OK || code == 1).then(|| {
            json!({
                "profile": profile,
                "_inDesiredState": child["in_desired_state"],
                "state": child["state"],
                "drift": child["drift"],
            })
        }),
        Verb::Set => {
            // The JSON's own code: a Unix shell sees 3010 as 194.
            let code = child["exit_code"].as_i64().unwrap_or(i64::from(code));
            (code == i64::from(install::SUCCESS) || code == i64::from(install::REBOOT_REQUIRED))
                .then(|| {
                    json!({
                        "profile": profile,
                        "_rebootRequested": child["reboot_required"].as_bool().unwrap_or(code == 3010),
                        "changed": child["changed"],
                        "state": child["state"],
                        "drift": child["drift"],
                    })
                })
        }
    }
}

fn bad_input(b: &BadInput, lang: Lang) -> CliError {
    let message = match b {
        BadInput::NotAnObject => t(lang, "cli_err_dsc_not_object"),
        BadInput::NoProfile => t(lang, "cli_err_dsc_no_profile"),
        BadInput::Unknown(name) => tf(lang, "cli_err_dsc_unknown", &[("name", name)]),
    };
    CliError::Usage {
        message,
        hint: t(lang, "cli_hint_dsc_input"),
    }
}

pub fn run(
    args: &Args,
    given_lang: Option<Lang>,
    compat_dir: Option<&Path>,
    lang: Lang,
) -> Result<i32, CliError> {
    let mut input = String::new();
    std::io::stdin()
        .take(MAX_INPUT)
        .read_to_string(&mut input)
        .map_err(|_| bad_input(&BadInput::NotAnObject, lang))?;
    let profile = profile_of(&input).map_err(|b| bad_input(&b, lang))?;

    let verb = args.verb.name();
    let mut child =
        Command::new(std::env::current_exe().map_err(|e| child_failed(verb, &e, lang))?);
    // get too: the profile names the Python whose PyTorch test and set look at.
    child
        .arg("state")
        .arg(verb)
        .arg("--profile")
        .arg(&profile)
        .arg("--json");
    if let Some(l) = given_lang {
        child.arg("--lang").arg(match l {
            Lang::En => "en",
            Lang::Zh => "zh",
        });
    }
    if let Some(d) = compat_dir {
        child.arg("--compat-dir").arg(d);
    }
    // Its progress and errors go to DSC's trace as they come; its JSON is ours to answer with.
    let out = child
        .args(&args.rest)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| child_failed(verb, &e, lang))?;
    let code = out.status.code().unwrap_or(exit::ERROR);
    let parsed: Option<Value> = serde_json::from_slice(&out.stdout).ok();
    match parsed
        .as_ref()
        .and_then(|v| answer(args.verb, &profile, v, code))
    {
        Some(a) => {
            println!("{a}");
            Ok(exit::OK)
        }
        None => {
            // A failure: what the child said goes to DSC's error stream, its code stays.
            eprint!("{}", String::from_utf8_lossy(&out.stdout));
            if code == exit::OK || code == 1 {
                return Err(CliError::Failed {
                    message: tf(lang, "cli_err_dsc_child", &[("verb", &verb)]),
                    hint: tf(lang, "cli_hint_dsc_child", &[("verb", &verb)]),
                    details: None,
                    code: exit::ERROR,
                });
            }
            Ok(code)
        }
    }
}

fn child_failed(verb: &str, e: &std::io::Error, lang: Lang) -> CliError {
    CliError::Failed {
        message: tf(lang, "cli_err_dsc_child", &[("verb", &verb)]),
        hint: tf(lang, "cli_hint_dsc_child", &[("verb", &verb)]),
        details: Some(e.to_string()),
        code: exit::ERROR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsc_input_is_the_profile_path_and_nothing_else() {
        assert_eq!(
            profile_of(r#"{"profile":"\\\\srv\\lab\\lab.toml"}"#),
            Ok(r"\\srv\lab\lab.toml".to_string())
        );
        // Read-only properties handed back are ignored.
        assert_eq!(
            profile_of(r#"{"profile":"lab.toml","_inDesiredState":false,"drift":[]}"#),
            Ok("lab.toml".to_string())
        );
        assert_eq!(profile_of("[]"), Err(BadInput::NotAnObject));
        assert_eq!(profile_of(""), Err(BadInput::NotAnObject));
        assert_eq!(profile_of("{}"), Err(BadInput::NoProfile));
        assert_eq!(profile_of(r#"{"profile":"  "}"#), Err(BadInput::NoProfile));
        assert_eq!(profile_of(r#"{"profile":7}"#), Err(BadInput::NoProfile));
        assert_eq!(
            profile_of(r#"{"profile":"lab.toml","toolkit":"12.4"}"#),
            Err(BadInput::Unknown("toolkit".into()))
        );
    }

    #[test]
    fn drift_and_a_pending_restart_are_answers_not_errors() {
        let tested = json!({"in_desired_state": false, "state": {"os": "linux"},
            "drift": [{"layer": "toolkit", "is": null, "should": "12.4"}]});
        let a = answer(Verb::Test, "lab.toml", &tested, 1).unwrap();
        assert_eq!(a["_inDesiredState"], false);
        assert_eq!(a["drift"][0]["layer"], "toolkit");
        assert_eq!(a["profile"], "lab.toml");
        assert!(answer(Verb::Test, "lab.toml", &tested, 2).is_none());

        let set = json!({"in_desired_state": true, "state": {}, "drift": [], "changed": true,
            "reboot_required": true, "exit_code": 3010});
        // 194: what a Unix parent sees of 3010; the JSON's own code decides.
        let a = answer(Verb::Set, "lab.toml", &set, 194).unwrap();
        assert_eq!(a["_rebootRequested"], true);
        assert_eq!(a["changed"], true);
        assert!(a.get("_inDesiredState").is_none(), "test's property only");
        let failed = json!({"exit_code": 1603, "changed": false});
        assert!(answer(Verb::Set, "lab.toml", &failed, 67).is_none());

        let got = answer(Verb::Get, "lab.toml", &json!({"os": "windows"}), 0).unwrap();
        assert_eq!(got["state"]["os"], "windows");
    }
}
