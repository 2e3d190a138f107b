//! Generates one `#[test]` per (scenario file, reconciler in its `expect`), so `cargo test`
//! runs every scenario under `scenarios/` and names each test after both.
//!
//! The `expect` keys are read line by line (a top-level `expect:` map of `KEY: value` lines) to
//! keep the YAML parser out of the build script; the test itself loads the file properly and
//! fails on any mismatch.

use std::fmt::Write as _;
use std::path::Path;

fn expect_keys(text: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("expect:") {
            inside = true;
            continue;
        }
        if !inside || line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if !line.starts_with(' ') {
            break;
        }
        let body = line.trim_start();
        if line.len() - body.len() != 2 {
            continue;
        }
        let key = match body.strip_prefix('"') {
            Some(rest) => rest.split('"').next().unwrap_or(""),
            None => body.split(": ").next().unwrap_or("").trim_end_matches(':'),
        };
        if !key.is_empty() {
            keys.push(key.to_string());
        }
    }
    keys
}

fn ident(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    while out.contains("__") {
        out = out.replace("__", "_");
    }
    out.trim_matches('_').to_string()
}

fn main() {
    // Read at run time, not `env!`: a build script binary reused from another checkout must
    // still list this checkout's scenarios.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let root = Path::new(&manifest_dir).join("../scenarios");
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    for dir in [
        root.clone(),
        root.join("zoo"),
        root.join("defects"),
        root.join("conformance"),
    ] {
        println!("cargo:rerun-if-changed={}", dir.display());
        if let Ok(d) = std::fs::read_dir(&dir) {
            files.extend(d.filter_map(|e| e.ok().map(|e| e.path())));
        }
    }
    files.retain(|p| p.extension().is_some_and(|x| x == "yaml"));
    files.sort();
    let mut out = String::new();
    for f in files {
        println!("cargo:rerun-if-changed={}", f.display());
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        let keys = expect_keys(&text);
        if keys.is_empty() {
            let _ = writeln!(
                out,
                "#[test]\nfn {}() {{ check_loads({:?}); }}\n",
                ident(&stem),
                f.display().to_string()
            );
        }
        for key in keys {
            let name = ident(&format!("{stem}-{key}"));
            let _ = writeln!(
                out,
                "#[test]\nfn {name}() {{ check({:?}, {:?}); }}\n",
                f.display().to_string(),
                key
            );
        }
    }
    let path = Path::new(&std::env::var("OUT_DIR").unwrap()).join("scenario_tests.rs");
    std::fs::write(path, out).unwrap();
}
