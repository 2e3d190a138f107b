//! A run as a Chrome trace-event JSON file, which ui.perfetto.dev and chrome://tracing open:
//! one track per actor (each controller, the StatefulSet controller, kubelets, the garbage
//! collector, the scheduler, ...), reconciles as slices in virtual time, every API write as an
//! instant event carrying kind, name and resourceVersion, counter tracks for available groups,
//! partition and replicas, and violations as instant events on their own track.
//!
//! Format: the "JSON Object Format" of the Trace Event Format (Google, "Trace Event Format",
//! docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU): `ts` and `dur`
//! in microseconds; `ph` `X` (complete slice), `i` (instant), `C` (counter), `M` (metadata).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::timeline::Timeline;
use crate::trace::TraceEntry;

/// A reconcile as a slice on its controller's track.
#[derive(Clone, Debug)]
pub struct Slice {
    pub actor: String,
    pub name: String,
    pub start_ms: u64,
    pub end_ms: u64,
    pub detail: String,
}

/// The controller actors as the trace names them: the two controllers' own writes, and `lws`,
/// the field manager their server-side applies carry (upstream `fieldOwner`, "lws").
pub const CONTROLLER_ACTORS: [&str; 3] = ["lws-controller", "pod-controller", "lws"];

/// Reconciles as the trace shows them. The controller model keeps no start and end times, so a
/// slice is a burst of one controller actor's writes: consecutive writes at most `gap_ms`
/// apart (a reconcile issues its writes one after another, each after the API latency), from
/// the first to the last. Approximate: two reconciles back to back make one slice, and a
/// reconcile that only reads leaves none.
pub fn write_bursts(entries: &[TraceEntry], actors: &[&str], gap_ms: u64) -> Vec<Slice> {
    let mut open: BTreeMap<&str, (u64, u64, Vec<String>)> = BTreeMap::new();
    let mut out = Vec::new();
    let close = |actor: &str, (t0, t1, writes): (u64, u64, Vec<String>), out: &mut Vec<Slice>| {
        out.push(Slice {
            actor: actor.to_string(),
            name: format!(
                "{} write{}",
                writes.len(),
                if writes.len() == 1 { "" } else { "s" }
            ),
            start_ms: t0,
            end_ms: t1,
            detail: writes.join(", "),
        });
    };
    for e in entries.iter().filter(|e| actors.contains(&&*e.actor)) {
        let what = format!("{} {} {}", e.verb, e.kind, e.name);
        let actor = actors.iter().find(|a| **a == &*e.actor).expect("filtered");
        match open.get_mut(actor) {
            Some((_, t1, writes)) if e.at_ms <= t1.saturating_add(gap_ms) => {
                *t1 = e.at_ms;
                writes.push(what);
            }
            _ => {
                if let Some(done) = open.insert(actor, (e.at_ms, e.at_ms, vec![what])) {
                    close(actor, done, &mut out);
                }
            }
        }
    }
    for (actor, burst) in open {
        close(actor, burst, &mut out);
    }
    out.sort_by(|a, b| (a.start_ms, &a.actor).cmp(&(b.start_ms, &b.actor)));
    out
}

const PID: u32 = 1;
const VIOLATIONS: &str = "violations";
const FAULTS: &str = "faults";

/// Thread ids in order of first appearance, so the file is the same on every run.
#[derive(Default)]
struct Tracks {
    ids: BTreeMap<String, u32>,
    order: Vec<String>,
}

impl Tracks {
    fn id(&mut self, actor: &str) -> u32 {
        if let Some(&id) = self.ids.get(actor) {
            return id;
        }
        let id = self.order.len() as u32 + 1;
        self.ids.insert(actor.to_string(), id);
        self.order.push(actor.to_string());
        id
    }
}

fn us(ms: u64) -> u64 {
    ms.saturating_mul(1000)
}

/// The whole file.
pub fn render(entries: &[TraceEntry], slices: &[Slice], tl: &Timeline, title: &str) -> Value {
    let mut tracks = Tracks::default();
    let mut events = Vec::new();
    for s in slices {
        let tid = tracks.id(&s.actor);
        events.push(json!({
            "name": s.name, "cat": "reconcile", "ph": "X", "pid": PID, "tid": tid,
            "ts": us(s.start_ms), "dur": us(s.end_ms.saturating_sub(s.start_ms)).max(1),
            "args": {"result": s.detail},
        }));
    }
    for e in entries {
        let (track, cat) = if matches!(&*e.actor, "fault" | "step") {
            (FAULTS, "fault")
        } else {
            (&*e.actor, "api")
        };
        let tid = tracks.id(track);
        let name = if cat == "fault" {
            format!("{} {}", e.verb, e.name)
        } else {
            format!("{} {}", e.verb, e.kind)
        };
        events.push(json!({
            "name": name, "cat": cat, "ph": "i", "s": "t", "pid": PID, "tid": tid,
            "ts": us(e.at_ms),
            "args": {"kind": &*e.kind, "namespace": &*e.namespace, "name": e.name, "rv": e.rv, "detail": e.detail},
        }));
    }
    let tid = tracks.id(VIOLATIONS);
    for (at, inv, msg) in &tl.violations {
        events.push(json!({
            "name": inv, "cat": "violation", "ph": "i", "s": "g", "pid": PID, "tid": tid,
            "ts": us(*at), "args": {"message": msg},
        }));
    }
    counters(&mut events, "available groups", &tl.available);
    counters(&mut events, "partition", &tl.partition);
    counters(&mut events, "replicas", &tl.replicas);
    let mut meta = vec![json!({
        "name": "process_name", "ph": "M", "pid": PID, "args": {"name": title},
    })];
    for (i, actor) in tracks.order.iter().enumerate() {
        meta.push(json!({
            "name": "thread_name", "ph": "M", "pid": PID, "tid": i as u32 + 1,
            "args": {"name": actor},
        }));
        meta.push(json!({
            "name": "thread_sort_index", "ph": "M", "pid": PID, "tid": i as u32 + 1,
            "args": {"sort_index": i},
        }));
    }
    meta.extend(events);
    json!({ "traceEvents": meta, "displayTimeUnit": "ms" })
}

fn counters(events: &mut Vec<Value>, name: &str, points: &[(u64, i32)]) {
    for &(at, n) in points {
        events.push(json!({
            "name": name, "ph": "C", "pid": PID, "tid": 0, "ts": us(at), "args": {"value": n},
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(at: u64, actor: &str, verb: &str) -> TraceEntry {
        TraceEntry {
            at_ms: at,
            actor: actor.into(),
            verb: verb.into(),
            kind: "Pod".into(),
            namespace: "default".into(),
            name: "vllm-0".into(),
            rv: 7,
            detail: String::new(),
        }
    }

    #[test]
    fn write_bursts_split_at_gaps_per_actor() {
        let entries = [
            entry(10, "lws-controller", "create"),
            entry(15, "lws", "apply"),
            entry(20, "lws-controller", "update"),
            entry(100, "lws-controller", "update"),
            entry(101, "kubelet", "update-status"),
        ];
        let s = write_bursts(&entries, &CONTROLLER_ACTORS, 30);
        let got: Vec<(&str, u64, u64, &str)> = s
            .iter()
            .map(|s| (s.actor.as_str(), s.start_ms, s.end_ms, s.name.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("lws-controller", 10, 20, "2 writes"),
                ("lws", 15, 15, "1 write"),
                ("lws-controller", 100, 100, "1 write"),
            ]
        );
    }

    #[test]
    fn tracks_are_named_and_events_are_in_microseconds() {
        let mut tl = Timeline::default();
        tl.available(5, 3);
        tl.violation(9, "availability", "2 of 4");
        let slices = [Slice {
            actor: "lws".into(),
            name: "reconcile default/vllm".into(),
            start_ms: 2,
            end_ms: 4,
            detail: "ok".into(),
        }];
        let v = render(&[entry(3, "kubelet", "update-status")], &slices, &tl, "t");
        let ev = v["traceEvents"].as_array().unwrap();
        let names: Vec<&str> = ev
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["lws", "kubelet", VIOLATIONS]);
        let slice = ev.iter().find(|e| e["ph"] == "X").unwrap();
        assert_eq!(
            (slice["ts"].as_u64(), slice["dur"].as_u64()),
            (Some(2000), Some(2000))
        );
        let write = ev.iter().find(|e| e["cat"] == "api").unwrap();
        assert_eq!(write["args"]["rv"], 7);
        assert!(ev.iter().any(|e| e["ph"] == "C" && e["args"]["value"] == 3));
        assert!(ev
            .iter()
            .any(|e| e["cat"] == "violation" && e["ts"] == 9000));
    }
}
