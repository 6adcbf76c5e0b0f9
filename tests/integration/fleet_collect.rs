//! `cuda-setup fleet collect DIR` (#36) on a folder of reports as PCs leave them on a
//! share: good ones, a drifted one, a corrupt one, an old `install --report` (no
//! `schema`), one from a newer cuda-setup, a link, one too big, one from the future.
//! Each is a row (the unreadable ones with their reason), sorted by computer name; the
//! exit code alerts on drift and unreadable reports; the CSV is quoted and defused for
//! Excel; the HTML page escapes what the PCs wrote.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::support::cli;

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A PC's state in the contract's terms (`state get --json`).
fn state(computer: &str, driver: &str) -> Value {
    json!({
        "schema": "cuda-setup/state", "schema_version": 1, "cuda_setup_version": "0.1.0",
        "computer": computer, "taken_at": now() - 3600, "os": "windows", "root": null,
        "gpus": [{"name": "NVIDIA GeForce RTX 3060", "compute_capability": "8.6"}],
        "driver": {"version": driver, "cuda": "12.7"},
        "toolkits": [
            {"version": "11.8.0", "path": "C:\\CUDA\\v11.8", "method": "installer", "active": false},
            {"version": "12.4.1", "path": "C:\\CUDA\\v12.4", "method": "installer", "active": true}
        ],
        "cudnn": [{"version": "9.1.0", "toolkit_path": "C:\\CUDA\\v12.4"}],
        "pytorch": {"python": "C:\\Python312\\python.exe", "version": "2.5.1", "variant": "cu124", "cuda": "12.4"},
        "guard": {"on": true, "verified_at": now() - 7200},
        "last_check": {"at": now() - 7200, "works": true, "speedup": 23.4}
    })
}

/// The report envelope a PC writes with `--report`, `age` seconds ago.
fn report(computer: &str, driver: &str, drift: Value, age: i64) -> Value {
    json!({
        "schema": "cuda-setup/report", "schema_version": 1,
        "written_at": (now() as i64 - age) as u64, "cuda_setup_version": "0.1.0",
        "state": state(computer, driver), "drift": drift, "profile": "lab.toml"
    })
}

fn driver_drift() -> Value {
    json!([{"layer": "driver", "is": "550.54", "should": ">= 560.94",
            "fix": "install the driver", "fix_step": "install_driver"}])
}

fn put(dir: &Path, name: &str, v: &Value) {
    std::fs::write(dir.join(name), serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

fn collect(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["fleet", "collect", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    cli::run(&args)
}

/// The folder of the issue: two good, a drifted, a corrupt, an old-schema and a newer
/// report, a link, plus what is not read at all (another file type, a subfolder's report).
fn lab(dir: &Path) {
    put(
        dir,
        "LAB-PC-10.json",
        &report("LAB-PC-10", "566.36", json!([]), 3600),
    );
    put(
        dir,
        "LAB-PC-2.json",
        &report("LAB-PC-2", "566.36", json!([]), 120),
    );
    put(
        dir,
        "LAB-PC-7.json",
        &report("LAB-PC-7", "550.54", driver_drift(), 3 * 86_400),
    );
    // Torn mid-write by a PC that lost power.
    std::fs::write(
        dir.join("LAB-PC-3.json"),
        br#"{"schema": "cuda-setup/report", "sche"#,
    )
    .unwrap();
    // What `install --report` wrote before the fleet reports: a run report, no `schema`.
    put(
        dir,
        "LAB-PC-4.json",
        &json!({"ok": true, "changed": true, "reboot_required": false, "cancelled": false,
                "steps": [{"name": "preflight", "ok": true, "changed": false}], "failure": null}),
    );
    let mut newer = report("LAB-PC-5", "566.36", json!([]), 60);
    newer["schema_version"] = json!(2);
    put(dir, "LAB-PC-5.json", &newer);
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.join("LAB-PC-2.json"), dir.join("LAB-PC-6.json")).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a report").unwrap();
    std::fs::create_dir(dir.join("old")).unwrap();
    put(
        &dir.join("old"),
        "LAB-PC-99.json",
        &report("LAB-PC-99", "566.36", json!([]), 60),
    );
}

#[cfg(unix)]
#[test]
fn every_report_is_a_row_and_the_unreadable_ones_say_why() {
    let d = tempfile::tempdir().unwrap();
    lab(d.path());
    let out = collect(d.path(), &["--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", cli::text(&out));
    let v = cli::json(&out);
    let rows = v["table"]["rows"].as_array().unwrap();
    let seen: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["computer"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
                r["reason"]["kind"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("LAB-PC-2", "read", ""),
            ("LAB-PC-3", "unreadable", "not_json"),
            ("LAB-PC-4", "unreadable", "not_report"),
            ("LAB-PC-5", "unreadable", "newer"),
            ("LAB-PC-6", "unreadable", "link"),
            ("LAB-PC-7", "read", ""),
            ("LAB-PC-10", "read", ""),
        ]
    );
    assert_eq!(rows[3]["reason"]["schema_version"], 2);
    let pc7 = &rows[5];
    assert_eq!(pc7["drift"][0]["layer"], "driver");
    assert_eq!(pc7["driver"], "550.54");
    assert_eq!(
        pc7["toolkits"],
        json!(["12.4.1", "11.8.0"]),
        "the active one first"
    );
    assert_eq!(pc7["last_check"]["speedup"], 23.4);
    assert_eq!(pc7["from_future"], false);
    assert_eq!(
        v["summary"],
        json!({"pcs": 7, "drifted": 1, "unreadable": 4, "not_tested": 0, "cannot_judge": 0, "from_future": 0, "left_out": 0})
    );

    let out = collect(d.path(), &[]);
    assert_eq!(out.status.code(), Some(1));
    let text = cli::text(&out);
    for line in [
        "7 PC(s): 1 drifted, 4 unreadable",
        "LAB-PC-3 (LAB-PC-3.json): Not a report: the file is not JSON",
        "LAB-PC-4 (LAB-PC-4.json): Not a cuda-setup fleet report",
        "LAB-PC-5 (LAB-PC-5.json): Written by a newer cuda-setup (report schema 2)",
        "LAB-PC-6 (LAB-PC-6.json): A symbolic link or junction: links are not followed",
        "LAB-PC-7: driver",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }
    assert!(!text.contains("LAB-PC-10:"), "{text}");
    assert!(!text.contains("LAB-PC-99"), "not recursive: {text}");
}

#[test]
fn a_lab_in_the_desired_state_exits_0() {
    let d = tempfile::tempdir().unwrap();
    put(d.path(), "A.json", &report("A", "566.36", json!([]), 60));
    put(d.path(), "B.json", &report("B", "566.36", json!([]), 60));
    let out = collect(d.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", cli::text(&out));
    assert!(cli::text(&out).contains("2 PC(s): 0 drifted, 0 unreadable"));
}

#[test]
fn odd_reports_are_named_never_guessed() {
    let d = tempfile::tempdir().unwrap();
    // From a PC whose clock runs a day ahead: read, but flagged.
    put(
        d.path(),
        "AHEAD.json",
        &report("AHEAD", "566.36", json!([]), -86_400),
    );
    // A `state get` report: never tested.
    put(
        d.path(),
        "GOT.json",
        &report("GOT", "566.36", Value::Null, 60),
    );
    // Our schema, but no state in it.
    put(
        d.path(),
        "HALF.json",
        &json!({"schema": "cuda-setup/report", "schema_version": 1, "written_at": now()}),
    );
    // Over the limit: refused before it is read.
    let big = vec![b' '; (1 << 20) + 1];
    std::fs::write(d.path().join("BIG.json"), big).unwrap();
    let out = collect(d.path(), &["--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", cli::text(&out));
    let v = cli::json(&out);
    let rows = v["table"]["rows"].as_array().unwrap();
    let by = |c: &str| rows.iter().find(|r| r["computer"] == c).unwrap().clone();
    assert_eq!(by("AHEAD")["from_future"], true);
    assert!(by("AHEAD")["age_secs"].as_i64().unwrap() < 0);
    assert_eq!(by("GOT")["drift"], Value::Null);
    assert_eq!(by("HALF")["reason"]["kind"], "invalid");
    assert_eq!(by("BIG")["reason"]["kind"], "too_big");
    assert_eq!(v["summary"]["from_future"], 1);
    assert_eq!(v["summary"]["not_tested"], 1);
    let text = v["text"].as_array().unwrap();
    let text: Vec<&str> = text.iter().map(|l| l.as_str().unwrap()).collect();
    let text = text.join("\n");
    assert!(
        text.contains("AHEAD: in the future: check the clock"),
        "{text}"
    );
    assert!(text.contains("Dated in the future: 1"), "{text}");
    assert!(text.contains("Not tested for drift: 1"), "{text}");
}

#[test]
fn a_missing_folder_is_a_usage_error() {
    let d = tempfile::tempdir().unwrap();
    let out = collect(&d.path().join("nowhere"), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", cli::text(&out));
    assert!(cli::text(&out).contains("could not be read"));
}

#[test]
fn the_csv_is_quoted_and_defused_for_excel() {
    let d = tempfile::tempdir().unwrap();
    let reports = d.path().join("reports");
    std::fs::create_dir(&reports).unwrap();
    put(
        &reports,
        "a.json",
        &report("=HYPERLINK(\"http://x\",\"y\")", "566.36", json!([]), 60),
    );
    put(
        &reports,
        "b.json",
        &report("Lab, \"north\" room", "550.54", driver_drift(), 60),
    );
    put(&reports, "c.json", &report("-2+3", "566.36", json!([]), 60));
    let csv = d.path().join("out.csv");
    let out = collect(&reports, &["--csv", csv.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", cli::text(&out));
    let bytes = std::fs::read(&csv).unwrap();
    assert!(bytes.starts_with(b"\xEF\xBB\xBF"), "UTF-8 with a BOM");
    let text = String::from_utf8(bytes[3..].to_vec()).unwrap();
    let lines: Vec<&str> = text.split("\r\n").collect();
    assert_eq!(lines.len(), 5, "header, 3 rows, the empty end: {text:?}");
    assert!(
        lines[0].starts_with("Computer,GPU,Driver,CUDA toolkit,cuDNN,PyTorch,Guard,"),
        "{}",
        lines[0]
    );
    // Sorted by name: `'-2+3`, `'=HYPERLINK…`, `Lab, …`.
    assert!(lines[1].starts_with("'-2+3,"), "{}", lines[1]);
    assert!(
        lines[2].starts_with("\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\","),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].starts_with(
            "\"Lab, \"\"north\"\" room\",NVIDIA GeForce RTX 3060,550.54,\"12.4.1, 11.8.0\","
        ),
        "{}",
        lines[3]
    );
    assert!(
        lines[3].contains(",23.4,driver,"),
        "speed-up as a number: {}",
        lines[3]
    );

    // The header in the user's language.
    let out = cli::run(&[
        "--lang",
        "zh",
        "fleet",
        "collect",
        reports.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(std::fs::read(&csv).unwrap()).unwrap();
    assert!(text.starts_with("\u{feff}电脑,显卡,显卡驱动,"), "{text}");
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("共 3 台电脑：1 台与要求不符，0 份报告无法读取"),
        "{}",
        cli::text(&out)
    );
}

#[test]
fn the_html_page_escapes_what_pcs_wrote_and_needs_no_network() {
    let d = tempfile::tempdir().unwrap();
    let reports = d.path().join("reports");
    std::fs::create_dir(&reports).unwrap();
    put(
        &reports,
        "evil.json",
        &report("<script>alert('pc')</script>", "550.54", driver_drift(), 60),
    );
    put(
        &reports,
        "ok.json",
        &report("LAB-PC-1", "566.36", json!([]), 60),
    );
    std::fs::write(reports.join("broken.json"), "{").unwrap();
    let html = d.path().join("lab.html");
    let out = collect(&reports, &["--html", html.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", cli::text(&out));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("<script>alert"), "{page}");
    assert!(page.contains("&lt;script&gt;alert(&#39;pc&#39;)&lt;/script&gt;"));
    assert_eq!(
        page.matches("<script").count(),
        1,
        "only the page's own script"
    );
    // Nothing to fetch: no links, sources or addresses anywhere in the page.
    for s in ["src=", "href=", "http://", "https://", "@import", "url("] {
        assert!(!page.contains(s), "{s} in the page");
    }
    assert!(page.contains("<tr class=\"unreadable\">"));
    assert!(page.contains("<td class=\"bad wrap\" title=\"driver: is 550.54, should be &gt;= 560.94. install the driver\">driver</td>"), "{page}");
    assert!(page.contains("<p class=\"summary bad\">3 PC(s): 1 drifted, 1 unreadable</p>"));
    assert!(page.contains("position:sticky"));
}

/// `state test|get --report` as a PC runs it (a sandbox root, the share path with
/// `%COMPUTERNAME%`).
fn pc_writes(work: &Path, computer: &str, command: &str, driver: &str) {
    let root = work.join(computer);
    std::fs::create_dir_all(&root).unwrap();
    let report = work.join("share").join("%COMPUTERNAME%.json");
    let mut args = vec!["state", command];
    let profile = work.join("lab.toml");
    let profile = profile.to_str().unwrap();
    if command != "get" {
        args.extend(["--profile", profile]);
    }
    let root = root.to_str().unwrap();
    let report = report.to_str().unwrap();
    args.extend([
        "--root", root, "--os", "linux", "--gpu-cc", "8.6", "--driver", driver, "--report", report,
    ]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cuda-setup"))
        .args(&args)
        .env("LANG", "C")
        .env("COMPUTERNAME", computer)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        cli::text(&out)
    );
}

#[test]
fn reports_of_state_are_read_and_judged_again_against_a_profile() {
    let d = tempfile::tempdir().unwrap();
    let w = d.path();
    std::fs::write(
        w.join("lab.toml"),
        "schema = 1\n\n[driver]\nmin = \"560.94\"\n",
    )
    .unwrap();
    pc_writes(w, "LAB-PC-1", "test", "566.36");
    pc_writes(w, "LAB-PC-2", "test", "550.54");
    pc_writes(w, "LAB-PC-3", "get", "550.54");
    let share = w.join("share");

    // As each PC tested itself: PC 2 drifted, PC 3 never tested.
    let out = collect(&share, &["--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", cli::text(&out));
    let v = cli::json(&out);
    let rows = v["table"]["rows"].as_array().unwrap();
    let drift: Vec<&Value> = rows.iter().map(|r| &r["drift"]).collect();
    assert_eq!(drift[0], &json!([]));
    assert_eq!(drift[1][0]["layer"], "driver");
    assert_eq!(drift[1][0]["should"], ">= 560.94");
    assert_eq!(drift[2], &Value::Null);
    assert_eq!(v["table"]["judged"]["by"], "reports");

    // Judged here against another profile: every PC, the untested one too.
    std::fs::write(
        w.join("lab550.toml"),
        "schema = 1\n\n[driver]\nmin = \"550\"\n",
    )
    .unwrap();
    let lab550 = w.join("lab550.toml");
    let out = collect(&share, &["--json", "--profile", lab550.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", cli::text(&out));
    let v = cli::json(&out);
    assert_eq!(v["summary"]["drifted"], 0);
    assert_eq!(v["summary"]["not_tested"], 0);
    assert_eq!(v["table"]["judged"]["by"], "profile");
    let out = collect(&share, &["--profile", w.join("lab.toml").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = cli::text(&out);
    assert!(text.contains("LAB-PC-2: driver\n"), "{text}");
    assert!(text.contains("LAB-PC-3: driver\n"), "judged now: {text}");
    assert!(text.contains("3 PC(s): 2 drifted, 0 unreadable"), "{text}");

    // A wrong profile is the command line's error, named by file and key.
    std::fs::write(
        w.join("bad.toml"),
        "schema = 1\n\n[driver]\nmin = \"abc\"\n",
    )
    .unwrap();
    let out = collect(&share, &["--profile", w.join("bad.toml").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", cli::text(&out));
    assert!(cli::text(&out).contains("bad.toml"), "{}", cli::text(&out));
}

#[test]
fn past_ten_thousand_reports_the_rest_is_counted_not_read() {
    let d = tempfile::tempdir().unwrap();
    let one = serde_json::to_vec(&report("PC", "566.36", json!([]), 60)).unwrap();
    for i in 0..10_002 {
        std::fs::write(d.path().join(format!("PC-{i}.json")), &one).unwrap();
    }
    let out = collect(d.path(), &["--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", cli::text(&out));
    let v = cli::json(&out);
    assert_eq!(v["summary"]["pcs"], 10_000);
    assert_eq!(v["summary"]["left_out"], 2);
    assert_eq!(v["summary"]["drifted"], 0);
    let text = v["text"].to_string();
    assert!(
        text.contains("Not read: 2 more reports (at most 10000"),
        "{text}"
    );
}

/// #36 review 10: a profile that does not validate for one report's OS (an exact driver
/// below what cu124 needs on Windows, enough on Linux) leaves those rows unjudged, said
/// in the drift cell and the summary; the rest of the table is judged.
#[test]
fn a_profile_that_does_not_fit_one_os_leaves_those_rows_unjudged() {
    let d = tempfile::tempdir().unwrap();
    let share = d.path().join("share");
    std::fs::create_dir(&share).unwrap();
    put(
        &share,
        "WIN-1.json",
        &report("WIN-1", "566.36", json!([]), 60),
    );
    let mut linux = report("LINUX-1", "566.36", json!([]), 60);
    linux["state"]["os"] = "linux".into();
    put(&share, "LINUX-1.json", &linux);
    let lab = d.path().join("lab.toml");
    std::fs::write(
        &lab,
        "schema = 1\n[driver]\nexact = \"526.47\"\n[pytorch]\nvariant = \"cu124\"\n",
    )
    .unwrap();
    let out = collect(&share, &["--json", "--profile", lab.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", cli::text(&out));
    let v = cli::json(&out);
    assert_eq!(v["summary"]["cannot_judge"], 1, "{v}");
    assert_eq!(v["summary"]["drifted"], 1, "{v}");
    let rows = v["table"]["rows"].as_array().unwrap();
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["computer"] == name)
            .unwrap_or_else(|| panic!("{name}: {v}"))
    };
    let win = row("WIN-1");
    assert_eq!(win["drift"], Value::Null, "{win}");
    assert!(
        win["cannot_judge"]
            .as_str()
            .is_some_and(|s| s.contains("cu124")),
        "{win}"
    );
    assert_eq!(row("LINUX-1")["drift"][0]["layer"], "driver");
    let text = cli::text(&collect(&share, &["--profile", lab.to_str().unwrap()]));
    assert!(text.contains("Not judged: 1"), "{text}");
    assert!(text.contains("WIN-1: cannot judge: "), "{text}");
}
