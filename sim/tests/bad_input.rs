//! Hostile input, generated: proptest mutates the shipped scenarios and their manifests (numbers
//! at the edges of their types, values of the wrong type, keys removed or invented, deep nesting,
//! truncated text) and runs the real binary on each mutant. The contract (README, "Limits"):
//! every input ends with exit 0 (holds), 1 (an invariant broke) or 2 (bad input, with a message),
//! never a panic, an abort, a hang or unbounded memory. The binary runs under a memory limit
//! and a wall-clock guard; both are far above what any accepted input needs, so tripping one is
//! a failure of the contract, not a slow machine. Failing mutants are replayed first from
//! `sim/proptest-regressions/bad_input.txt`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, RngSeed};
use serde_json::Value;

/// Far above the slowest accepted mutant in a debug build; a hang is caught, not waited out.
const GUARD: Duration = Duration::from_secs(120);
/// Address-space limit for the binary, in KiB (4 GiB).
const MEMORY_KIB: u64 = 4 << 20;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The scenario files the mutants start from: every shipped one.
fn seeds() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for dir in ["scenarios", "scenarios/zoo"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join(dir))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        files.sort();
        v.extend(files);
    }
    assert!(!v.is_empty(), "no scenario files under scenarios/");
    v
}

/// Numbers at the edges of the types the format uses (i32, u32, u64, i64, f64).
const EDGES: &[&str] = &[
    "-1",
    "0",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "1e308",
    "-0.5",
    ".nan",
];

const DURATIONS: &[&str] = &[
    "0ms",
    "1ms",
    "99999999h",
    "18446744073709551615ms",
    "5124095576030431h",
    "0s..0s",
    "1ms..99999999h",
];

/// One edit of a YAML tree, addressed by a path of child choices.
#[derive(Clone, Debug)]
enum Edit {
    Number(usize),
    Duration(usize),
    WrongType(usize),
    Remove,
    InventKey,
    Nest(usize),
    Empty,
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (0..EDGES.len()).prop_map(Edit::Number),
        (0..DURATIONS.len()).prop_map(Edit::Duration),
        (0usize..4).prop_map(Edit::WrongType),
        Just(Edit::Remove),
        Just(Edit::InventKey),
        (1usize..200).prop_map(Edit::Nest),
        Just(Edit::Empty),
    ]
}

/// A mutant: which file, which manifest or the scenario itself, where, and what.
#[derive(Clone, Debug)]
struct Mutant {
    seed: usize,
    /// Mutate the scenario's first manifest instead of the scenario.
    manifest: bool,
    path: Vec<usize>,
    edit: Edit,
    /// Truncate the mutated text to this fraction (per mille) of its length; 1000 keeps it.
    keep: u16,
}

fn mutant(seeds: usize) -> impl Strategy<Value = Mutant> {
    (
        0..seeds,
        prop::bool::weighted(0.3),
        prop::collection::vec(0usize..64, 0..6),
        edit(),
        prop_oneof![4 => Just(1000u16), 1 => 0u16..1000],
    )
        .prop_map(|(seed, manifest, path, edit, keep)| Mutant {
            seed,
            manifest,
            path,
            edit,
            keep,
        })
}

fn yaml_value(text: &str) -> Value {
    serde_saphyr::from_str(text).expect("a shipped file parses")
}

fn replace(v: &mut Value, e: &Edit, parent_is_map: bool) {
    *v = match e {
        Edit::Number(i) => serde_saphyr::from_str(EDGES[*i]).unwrap_or(Value::Null),
        Edit::Duration(i) => Value::String(DURATIONS[*i].into()),
        Edit::WrongType(0) => Value::Array(vec![v.clone()]),
        Edit::WrongType(1) => serde_json::json!({ "x": v.clone() }),
        Edit::WrongType(2) => Value::Bool(true),
        Edit::WrongType(_) => Value::String(format!("{v}x")),
        Edit::Nest(depth) => {
            let mut n = v.clone();
            for _ in 0..*depth {
                n = if parent_is_map {
                    serde_json::json!({ "k": n })
                } else {
                    Value::Array(vec![n])
                };
            }
            n
        }
        Edit::Empty => Value::String(String::new()),
        Edit::Remove | Edit::InventKey => return,
    };
}

/// Walk `path` into `v` (each index taken modulo the children there) and apply the edit.
fn apply(v: &mut Value, path: &[usize], e: &Edit) {
    let Some((&step, rest)) = path.split_first() else {
        return replace(v, e, true);
    };
    match v {
        Value::Object(m) if !m.is_empty() => {
            let key = m.keys().nth(step % m.len()).unwrap().clone();
            match e {
                Edit::Remove if rest.is_empty() => {
                    m.remove(&key);
                }
                Edit::InventKey if rest.is_empty() => {
                    m.insert(format!("{key}Typo"), Value::from(1));
                }
                _ => apply(m.get_mut(&key).unwrap(), rest, e),
            }
        }
        Value::Array(a) if !a.is_empty() => {
            let i = step % a.len();
            match e {
                Edit::Remove if rest.is_empty() => {
                    a.remove(i);
                }
                _ => apply(&mut a[i], rest, e),
            }
        }
        leaf => replace(leaf, e, false),
    }
}

/// The first manifest a scenario names, relative to the scenario's directory.
fn first_manifest(scenario: &Value) -> Option<String> {
    scenario
        .get("manifests")?
        .get(0)?
        .as_str()
        .map(String::from)
}

/// Copy the scenario's directory (the scenario and its manifests) to `dir/s` and the shipped
/// manifests to `dir/manifests` (zoo scenarios name `../manifests/...`), and write the mutant.
fn materialize(m: &Mutant, seeds: &[PathBuf], root: &Path) -> PathBuf {
    let src = &seeds[m.seed];
    let src_dir = src.parent().unwrap();
    let dir = root.join("s");
    for (from, to) in [
        (src_dir.join("manifests"), dir.join("manifests")),
        (repo().join("scenarios/manifests"), root.join("manifests")),
    ] {
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(from).unwrap().flatten() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
    let scenario_text = std::fs::read_to_string(src).unwrap();
    let scenario = yaml_value(&scenario_text);
    let (target, text) = match first_manifest(&scenario).filter(|_| m.manifest) {
        Some(rel) => {
            let t = std::fs::read_to_string(src_dir.join(&rel)).unwrap();
            (dir.join(&rel), t)
        }
        None => (dir.join("scenario.yaml"), scenario_text.clone()),
    };
    // A manifest file may hold several documents: mutate the first.
    let first_doc = text.split("\n---").next().unwrap_or("").to_string();
    let mut v = yaml_value(&first_doc);
    apply(&mut v, &m.path, &m.edit);
    let mut out = serde_json::to_string_pretty(&v).unwrap();
    if m.keep < 1000 {
        let cut = out.len() * usize::from(m.keep) / 1000;
        let cut = (0..=cut).rev().find(|&i| out.is_char_boundary(i)).unwrap();
        out.truncate(cut);
    }
    std::fs::write(&target, out).unwrap();
    if target != dir.join("scenario.yaml") {
        std::fs::write(dir.join("scenario.yaml"), scenario_text).unwrap();
    }
    dir.join("scenario.yaml")
}

struct Outcome {
    code: Option<i32>,
    stderr: String,
    stdout: String,
}

/// Run the binary under the memory limit; kill it at the guard.
fn run(scenario: &Path) -> Result<Outcome, String> {
    let bin = env!("CARGO_BIN_EXE_lws-sim");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {MEMORY_KIB}; exec \"$0\" run \"$1\""))
        .arg(bin)
        .arg(scenario)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if start.elapsed() > GUARD {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {GUARD:?}: a hang"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    let mut stdout = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .ok();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .ok();
    Ok(Outcome {
        code: status.code(),
        stderr,
        stdout,
    })
}

fn judge(o: &Outcome) -> Result<(), String> {
    let panicked = o.stderr.contains("panicked") || o.stderr.contains("RUST_BACKTRACE");
    match o.code {
        _ if panicked => Err(format!("a panic:\n{}", o.stderr)),
        Some(0) | Some(1) => Ok(()),
        Some(2) if o.stderr.trim().is_empty() => Err("exit 2 without a message".into()),
        Some(2) => Ok(()),
        other => Err(format!(
            "exit {other:?} (a signal or an abort):\n{}\n{}",
            o.stderr, o.stdout
        )),
    }
}

proptest! {
    #![proptest_config(Config {
        cases: 40,
        rng_seed: RngSeed::Fixed(0x006c_7773_5f62_6164),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/bad_input.txt",
        ))),
        max_shrink_iters: 64,
        ..Config::default()
    })]

    #[test]
    fn a_mutated_scenario_or_manifest_ends_in_a_verdict_or_a_message(m in mutant(seeds().len())) {
        let seeds = seeds();
        let dir = std::env::temp_dir().join(format!("lws-sim-bad-input-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let scenario = materialize(&m, &seeds, &dir);
        let outcome = run(&scenario);
        let verdict = outcome.and_then(|o| judge(&o));
        let _ = std::fs::remove_dir_all(&dir);
        prop_assert!(verdict.is_ok(), "{:?} from {}: {}", m, seeds[m.seed].display(), verdict.unwrap_err());
    }
}
