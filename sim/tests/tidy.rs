//! House rules that would otherwise live only in review (ARCHITECTURE.md, "Invariants").

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn offenders(dir: &str, banned: &[&str], skip: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut bad = Vec::new();
    for f in files {
        if skip.iter().any(|s| f.ends_with(s)) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for b in banned {
                if code.contains(b) {
                    bad.push(format!("{}:{}: {b}", f.display(), i + 1));
                }
            }
        }
    }
    bad
}

#[test]
fn the_production_side_knows_nothing_of_the_simulator_clock_threads_or_files() {
    let banned = [
        "lws_sim",
        "std::time",
        "std::thread",
        "std::fs",
        "rand",
        "tokio",
        "Instant::now",
        "SystemTime",
    ];
    let bad = offenders("../src", &banned, &[]);
    assert!(
        bad.is_empty(),
        "src/ must stay sans-IO:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_simulator_uses_no_wall_clock_threads_or_unordered_maps() {
    // Only the CLI touches the wall clock; ordered containers keep runs deterministic.
    let banned = [
        "HashMap",
        "HashSet",
        "Instant::now",
        "SystemTime",
        "std::thread",
        "thread_rng",
    ];
    // `serve` is a network front on the deterministic core: its clock, thread and socket files
    // are the other exceptions.
    let bad = offenders(
        "src",
        &banned,
        &["main.rs", "serve/mod.rs", "serve/clock.rs", "serve/http.rs"],
    );
    assert!(
        bad.is_empty(),
        "sim/ must stay deterministic:\n{}",
        bad.join("\n")
    );
}
