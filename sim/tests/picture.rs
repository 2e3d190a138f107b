//! `lws-sim run --timeline` and `--perfetto` on the seed outage (scenarios/
//! controller-restart-mid-rollout.yaml under v0.3.0): the SVG shows what the run's `--json`
//! reports, and the Chrome trace-event file carries every API write and violation.

mod common;

use common::Scratch;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

const SCENARIO: &str = "controller-restart-mid-rollout.yaml";

fn scenarios_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

/// The files one run wrote, and its `--json` line.
struct Run {
    json: Value,
    svg: String,
    perfetto: Value,
    trace: Vec<Value>,
}

fn run_seed_outage(name: &str) -> Run {
    let dir = Scratch::new(&format!("picture-{name}"));
    let (svg, pf, trace) = (dir.join("t.svg"), dir.join("t.json"), dir.join("t.jsonl"));
    let out = Command::new(env!("CARGO_BIN_EXE_lws-sim"))
        .arg("run")
        .arg(scenarios_dir().join(SCENARIO))
        .args(["--reconciler", "v0.3.0", "--json"])
        .arg("--timeline")
        .arg(&svg)
        .arg("--perfetto")
        .arg(&pf)
        .arg("--trace")
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |p: &PathBuf| std::fs::read_to_string(p).unwrap();
    Run {
        json: serde_json::from_slice(&out.stdout).unwrap(),
        svg: read(&svg),
        perfetto: serde_json::from_str(&read(&pf)).unwrap(),
        trace: read(&trace)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    }
}

/// An SVG element's attributes, from a small hand parser: enough for the renderer's own
/// output (attribute values in double quotes, `&quot;` for quotes inside).
#[derive(Debug)]
struct Element {
    attrs: Vec<(String, String)>,
}

impl Element {
    fn get(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn num(&self, name: &str) -> u64 {
        self.get(name)
            .unwrap_or_else(|| panic!("no {name} in {self:?}"))
            .parse()
            .unwrap()
    }
}

fn elements(svg: &str) -> Vec<Element> {
    let mut out = Vec::new();
    for tag in svg.split('<').skip(1) {
        if tag.starts_with('/') || tag.starts_with('!') || tag.starts_with('?') {
            continue;
        }
        let body = tag.split('>').next().unwrap_or("");
        let mut attrs = Vec::new();
        let mut rest = body.split_once(char::is_whitespace).map_or("", |x| x.1);
        while let Some((key, after)) = rest.split_once("=\"") {
            let (value, tail) = after.split_once('"').expect("closing quote");
            attrs.push((key.trim().to_string(), value.replace("&quot;", "\"")));
            rest = tail;
        }
        out.push(Element { attrs });
    }
    out
}

fn of_class<'a>(els: &'a [Element], class: &str) -> Vec<&'a Element> {
    els.iter()
        .filter(|e| e.get("class") == Some(class))
        .collect()
}

#[test]
fn the_timeline_shows_the_seed_outage_as_the_run_reports_it() {
    let run = run_seed_outage("svg");
    let els = elements(&run.svg);
    assert!(run.svg.starts_with("<svg"), "{}", &run.svg[..80]);

    // One row per group of the LWS (replicas: 4 in manifests/vllm-lws.yaml).
    let rows: Vec<u64> = of_class(&els, "group")
        .iter()
        .map(|e| e.num("data-group"))
        .collect();
    assert_eq!(rows, [0, 1, 2, 3]);

    // A violation marker per violation, with the same invariant and time.
    let want: Vec<(String, u64)> = run.json["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["invariant"].as_str().unwrap().to_string(),
                v["at_ms"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(!want.is_empty());
    let got: Vec<(String, u64)> = of_class(&els, "violation")
        .iter()
        .map(|e| {
            (
                e.get("data-invariant").unwrap().to_string(),
                e.num("data-t0"),
            )
        })
        .collect();
    assert_eq!(got, want);

    // The below-floor regions cover every availability violation.
    let below: Vec<(u64, u64)> = of_class(&els, "below-floor")
        .iter()
        .map(|e| (e.num("data-t0"), e.num("data-t1")))
        .collect();
    for (_, at) in want.iter().filter(|(i, _)| i == "availability") {
        assert!(
            below.iter().any(|(t0, t1)| t0 <= at && at <= t1),
            "availability at {at} not inside {below:?}"
        );
    }

    // The killController step as a fault marker, and the controller down from then on.
    let kill = run
        .trace
        .iter()
        .find(|e| e["verb"] == "killController")
        .expect("the scenario kills the controller");
    let kill_at = kill["at_ms"].as_u64().unwrap();
    let faults = of_class(&els, "fault");
    assert!(
        faults.iter().any(
            |f| f.get("data-fault").unwrap().starts_with("killController")
                && f.num("data-t0") == kill_at
        ),
        "{faults:?}"
    );
    let down = of_class(&els, "controller-down");
    assert_eq!(down.len(), 1, "{down:?}");
    assert_eq!(down[0].num("data-t0"), kill_at);
    assert!(down[0].num("data-t1") > kill_at);
}

#[test]
fn the_perfetto_file_is_trace_event_json_with_every_write_and_violation() {
    let run = run_seed_outage("perfetto");
    let events = run.perfetto["traceEvents"].as_array().expect("traceEvents");
    for e in events {
        let ph = e["ph"].as_str().unwrap_or_else(|| panic!("no ph: {e}"));
        let mut required = vec!["name", "pid"];
        match ph {
            "M" => {}
            "X" => required.extend(["ts", "tid", "dur"]),
            "i" | "C" => required.extend(["ts", "tid"]),
            other => panic!("unexpected ph {other}: {e}"),
        }
        for field in required {
            assert!(e.get(field).is_some(), "{ph} event without {field}: {e}");
        }
        if ph == "C" {
            assert!(e["args"]["value"].is_number(), "{e}");
        }
    }
    let count = |cat: &str| events.iter().filter(|e| e["cat"] == cat).count();
    let external = |e: &&Value| e["actor"] == "fault" || e["actor"] == "step";
    let writes = run.trace.iter().filter(|e| !external(e)).count();
    assert_eq!(count("api"), writes);
    assert_eq!(count("fault"), run.trace.iter().filter(external).count());
    assert_eq!(
        count("violation"),
        run.json["violations"].as_array().unwrap().len()
    );
    // Reconcile slices sit on controller tracks, within the run.
    let sim_us = run.json["sim_ms"].as_u64().unwrap() * 1000;
    let slices: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert!(!slices.is_empty());
    for s in &slices {
        assert!(s["ts"].as_u64().unwrap() + s["dur"].as_u64().unwrap() <= sim_us + 1);
    }
    let tracks: BTreeSet<&str> = events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    for t in [
        "lws-controller",
        "statefulset-controller",
        "violations",
        "faults",
    ] {
        assert!(tracks.contains(t), "no {t} track in {tracks:?}");
    }
}

#[test]
fn recording_the_picture_leaves_the_trace_unchanged() {
    let plain = Command::new(env!("CARGO_BIN_EXE_lws-sim"))
        .arg("run")
        .arg(scenarios_dir().join(SCENARIO))
        .args(["--reconciler", "v0.3.0", "--json"])
        .output()
        .unwrap();
    let plain: Value = serde_json::from_slice(&plain.stdout).unwrap();
    let pictured = run_seed_outage("hash");
    assert_eq!(plain["trace_hash"], pictured.json["trace_hash"]);
    assert_eq!(plain["violations"], pictured.json["violations"]);
}
