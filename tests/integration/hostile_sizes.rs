//! Issue 30, class 9: bounded work on hostile sizes. A package index page listing 50,000
//! versions is resolved in linear time (it was quadratic: minutes of CPU), a page past
//! the bound is that source's failure, and a value of 120 KB on the command line comes
//! back in an error as a couple of hundred characters, not whole.

use crate::support;

use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::server::Body;

fn cli(args: &[&str]) -> Output {
    support::cli::run(args)
}

use support::cli::text;

/// `install --method wheels --dry-run` for CUDA 13.5 from `index` (it resolves every
/// wheel: the metapackage's page, its METADATA, each component's page).
fn dry_run(index: &str, root: &Path) -> Output {
    cli(&[
        "install",
        "--unattended",
        "--goal",
        "developer",
        "--cuda",
        "13.5",
        "--method",
        "wheels",
        "--pypi-mirror",
        index,
        "--components",
        "nvcc,cudart",
        "--driver",
        "600.00",
        "--gpu-cc",
        "8.6",
        "--os",
        "linux",
        "--root",
        root.to_str().unwrap(),
        "--no-cudnn",
        "--dry-run",
    ])
}

const VERSIONS: u32 = 50_000;

/// The stand-in index with `cuda-toolkit`'s page (JSON and HTML) listing 50,000 other
/// versions beside the real 13.5.0: about 12 MB of HTML.
fn long_index(dir: &Path) -> (support::server::Server, usize) {
    let files = support::wheels::standin(dir, "13.5.37", true);
    let server = support::wheels::serve(&files);
    let meta = files.iter().find(|f| f.project == "cuda-toolkit").unwrap();
    let mut json = Vec::with_capacity(VERSIONS as usize + 1);
    let mut html = String::from("<!DOCTYPE html>\n<html><body><h1>Links for cuda-toolkit</h1>\n");
    for i in 0..=VERSIONS {
        let (name, sha, size) = if i == VERSIONS {
            (meta.filename.clone(), meta.sha256.clone(), meta.size)
        } else {
            let v = format!("0.{}.{}", i / 1000, i % 1000);
            (
                format!("cuda_toolkit-{v}-py2.py3-none-any.whl"),
                format!("{i:064x}"),
                2706,
            )
        };
        html += &format!(
            "    <a href=\"/files/{name}#sha256={sha}\" data-requires-python=\"&gt;=3.8\">{name}</a><br/>\n"
        );
        json.push(serde_json::json!({
            "filename": name,
            "url": format!("../../files/{name}"),
            "hashes": {"sha256": sha},
            "size": size,
            "requires-python": ">=3.8",
            "yanked": false,
        }));
    }
    html += "</body></html>\n";
    let json = serde_json::to_vec(&serde_json::json!({
        "meta": {"api-version": "1.1"},
        "name": "cuda-toolkit",
        "files": json,
    }))
    .unwrap();
    let size = html.len();
    server.add_typed(
        "/simple/cuda-toolkit/",
        Body::Bytes(Arc::new(json)),
        "application/vnd.pypi.simple.v1+json",
    );
    server.add_typed(
        "/html/cuda-toolkit/",
        Body::Bytes(Arc::new(html.into_bytes())),
        "text/html",
    );
    (server, size)
}

/// Before: the JSON page took 34 s and the HTML page 42 s of CPU in `pick` alone (debug
/// build; a list searched per file); now both resolve in a few seconds.
#[test]
fn an_index_page_of_50000_versions_resolves_in_linear_time() {
    let tmp = tempfile::tempdir().unwrap();
    let (server, html_size) = long_index(&tmp.path().join("wheels"));
    assert!(html_size > 10 << 20, "{html_size}");
    for flavour in ["/simple", "/html"] {
        let root = tmp.path().join(flavour.trim_start_matches('/'));
        std::fs::create_dir_all(&root).unwrap();
        let t0 = Instant::now();
        let out = dry_run(&server.url(flavour), &root);
        let took = t0.elapsed();
        eprintln!("{flavour}: {VERSIONS} versions resolved in {took:.2?}");
        let t = text(&out);
        assert_eq!(out.status.code(), Some(0), "{flavour}: {t}");
        assert!(t.contains("Plan: CUDA 13.5.0"), "{flavour}: {t}");
        // Generous: a debug build on a loaded machine; the quadratic search took minutes.
        assert!(
            took < Duration::from_secs(20),
            "{flavour}: resolving took {took:?}"
        );
    }
}

/// A page past the bound (32 MiB) is that source's failure, said in words, read no
/// further than the bound.
#[test]
fn an_index_page_past_the_bound_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let files = support::wheels::standin(&tmp.path().join("wheels"), "13.5.37", true);
    let server = support::wheels::serve(&files);
    let mut page = b"<!DOCTYPE html>\n<html><body>\n".to_vec();
    page.resize(33 << 20, b' ');
    server.add_typed(
        "/html/cuda-toolkit/",
        Body::Bytes(Arc::new(page)),
        "text/html",
    );
    let root = tmp.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    let out = dry_run(&server.url("/html"), &root);
    let t = text(&out);
    assert_ne!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("sent more than the 33554432 bytes"), "{t}");
    assert!(t.contains("cuda-toolkit"), "{t}");
}

/// 120 KB: Linux takes no single argument longer than 128 KiB (MAX_ARG_STRLEN); the
/// issue's 1.2 MB was the same flaw at a larger size.
const LONG: usize = 120_000;

fn long_value(prefix: &str) -> String {
    format!("{prefix}{}", "a".repeat(LONG))
}

/// Each command's error for a huge value is short and still says what is wrong.
#[test]
fn a_huge_value_is_not_echoed_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = long_value(&format!("{}/", tmp.path().display()));
    let url = long_value("https://127.0.0.1:9/");
    let junk = long_value("");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--compat-dir", &dir, "detect"], "cannot read it"),
        (
            vec![
                "download",
                "--url",
                "https://127.0.0.1:9/a.zip",
                "--mirror",
                &junk,
                "--out",
                "x",
            ],
            "is not an http(s) URL",
        ),
        (
            vec!["cudnn", "install", "--archive", "a.zip", "--cuda-dir", &dir],
            "is not a CUDA toolkit folder",
        ),
        (
            vec!["install", "--cuda", &junk, "--dry-run"],
            "is not a version",
        ),
        (
            vec!["install", "--method", "wheels", "--pypi-mirror", &junk],
            "is not a PyPI mirror",
        ),
        (vec!["recommend", "--gpu", &junk], "unknown GPU"),
        (vec![&junk], "unrecognized subcommand"),
        (
            vec![
                "install",
                "--goal",
                "developer",
                "--unattended",
                "--method",
                "wheels",
                "--pypi-mirror",
                &url,
                "--cuda",
                "13.5",
                "--driver",
                "600.00",
                "--gpu-cc",
                "8.6",
                "--os",
                "linux",
                "--root",
                tmp.path().to_str().unwrap(),
                "--dry-run",
            ],
            "every source failed",
        ),
    ];
    for (args, says) in cases {
        let out = cli(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        let shown: Vec<&str> = args.iter().map(|a| &a[..a.len().min(40)]).collect();
        assert_ne!(out.status.code(), Some(0), "{shown:?}");
        assert!(
            err.len() < 4096 && out.stdout.len() < 4096,
            "{shown:?}: {} bytes on stderr, {} on stdout",
            err.len(),
            out.stdout.len()
        );
        assert!(err.contains(says), "{shown:?}: {err}");
        // The value's head is shown, shortened.
        assert!(err.contains("aaaa…aaaa"), "{shown:?}: {err}");
    }
}
