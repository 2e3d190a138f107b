//! A Pod's row in a server-side Table: kubernetes `pkg/printers/internalversion/printers.go`
//! `printPod` (kubernetes commit 51652d1c), what `kubectl get pods [-o wide]` prints. The API
//! server prints with `Wide: true` and kubectl hides the priority-1 columns without `-o wide`.

use serde_json::{json, Value};

use crate::time::{from_time, human_duration};

/// What `printPod` reads of one container status.
struct ContainerStatus<'a>(&'a Value);

impl<'a> ContainerStatus<'a> {
    fn name(&self) -> &'a str {
        str_at(self.0, "/name")
    }
    fn restarts(&self) -> i64 {
        self.0
            .pointer("/restartCount")
            .and_then(Value::as_i64)
            .unwrap_or(0)
    }
    fn ready(&self) -> bool {
        self.0.get("ready") == Some(&Value::Bool(true))
    }
    fn started(&self) -> bool {
        self.0.get("started") == Some(&Value::Bool(true))
    }
    fn running(&self) -> bool {
        self.0
            .pointer("/state/running")
            .is_some_and(Value::is_object)
    }
    fn waiting_reason(&self) -> Option<&'a str> {
        self.0
            .pointer("/state/waiting")
            .filter(|w| w.is_object())
            .map(|w| str_at(w, "/reason"))
    }
    fn terminated(&self) -> Option<&'a Value> {
        self.0
            .pointer("/state/terminated")
            .filter(|t| t.is_object())
    }
    /// When the previous run ended (`lastState.terminated.finishedAt`), in simulated ms.
    fn last_finished_ms(&self) -> Option<u64> {
        let t = self
            .0
            .pointer("/lastState/terminated")
            .filter(|t| t.is_object())?;
        time_at(t, "/finishedAt")
    }
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

fn int_at(v: &Value, ptr: &str) -> i64 {
    v.pointer(ptr).and_then(Value::as_i64).unwrap_or(0)
}

fn time_at(v: &Value, ptr: &str) -> Option<u64> {
    let t = serde_json::from_value(v.pointer(ptr)?.clone()).ok()?;
    Some(from_time(&t))
}

fn list<'a>(v: &'a Value, ptr: &str) -> &'a [Value] {
    v.pointer(ptr)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// A terminated state's reason as `printPod` words it: its reason, else `Signal:N` or
/// `ExitCode:N`.
fn terminated_reason(t: &Value) -> String {
    match str_at(t, "/reason") {
        "" if int_at(t, "/signal") != 0 => format!("Signal:{}", int_at(t, "/signal")),
        "" => format!("ExitCode:{}", int_at(t, "/exitCode")),
        r => r.to_string(),
    }
}

fn condition_true(pod: &Value, ty: &str) -> bool {
    list(pod, "/status/conditions")
        .iter()
        .any(|c| str_at(c, "/type") == ty && str_at(c, "/status") == "True")
}

/// Restarts and the latest restart seen so far, as `printPod` sums them.
#[derive(Default, Clone, Copy)]
struct Restarts {
    count: i64,
    last_ms: Option<u64>,
}

impl Restarts {
    fn add(&mut self, c: &ContainerStatus) {
        self.count += c.restarts();
        if let Some(t) = c.last_finished_ms() {
            self.last_ms = Some(self.last_ms.map_or(t, |l| l.max(t)));
        }
    }
}

/// What the containers say: ready count, the status word, restarts (`printPod`'s loops).
struct Progress {
    ready: usize,
    reason: String,
    restarts: Restarts,
}

/// `printPod`'s walk of the init containers: the first that has not finished names the
/// status (`Init:N/M`, `Init:<reason>`); started sidecars count as ready. Whether the pod is
/// still initializing, and the restarts of its sidecars.
fn init_containers(pod: &Value, p: &mut Progress) -> (bool, Restarts) {
    let specs = list(pod, "/spec/initContainers");
    let sidecar = |name: &str| {
        specs
            .iter()
            .any(|c| str_at(c, "/name") == name && str_at(c, "/restartPolicy") == "Always")
    };
    let mut sidecar_restarts = Restarts::default();
    for (i, status) in list(pod, "/status/initContainerStatuses")
        .iter()
        .enumerate()
    {
        let c = ContainerStatus(status);
        p.restarts.add(&c);
        let is_sidecar = sidecar(c.name());
        if is_sidecar {
            sidecar_restarts.add(&c);
        }
        let terminated = c.terminated();
        if terminated.is_some_and(|t| int_at(t, "/exitCode") == 0) {
            continue;
        }
        if is_sidecar && c.started() {
            p.ready += usize::from(c.ready());
            continue;
        }
        p.reason = match (terminated, c.waiting_reason()) {
            (Some(t), _) => format!("Init:{}", terminated_reason(t)),
            (None, Some(w)) if !w.is_empty() && w != "PodInitializing" => format!("Init:{w}"),
            _ => format!("Init:{i}/{}", specs.len()),
        };
        return (true, sidecar_restarts);
    }
    (false, sidecar_restarts)
}

/// `printPod`'s walk of the containers, last to first: a waiting or terminated one names
/// the status; running and ready ones count. A `Completed` pod with a container still running
/// is `Running` or `NotReady`.
fn containers(pod: &Value, p: &mut Progress) {
    let mut has_running = false;
    for status in list(pod, "/status/containerStatuses").iter().rev() {
        let c = ContainerStatus(status);
        p.restarts.add(&c);
        match (c.waiting_reason(), c.terminated()) {
            (Some(w), _) if !w.is_empty() => p.reason = w.to_string(),
            (_, Some(t)) => p.reason = terminated_reason(t),
            _ if c.ready() && c.running() => {
                has_running = true;
                p.ready += 1;
            }
            _ => {}
        }
    }
    if p.reason == "Completed" && has_running {
        p.reason = if condition_true(pod, "Ready") {
            "Running"
        } else {
            "NotReady"
        }
        .into();
    }
}

/// The status word before the containers are read: the phase, the pod's reason, or
/// `SchedulingGated`.
fn first_reason(pod: &Value) -> String {
    let gated = list(pod, "/status/conditions")
        .iter()
        .any(|c| str_at(c, "/type") == "PodScheduled" && str_at(c, "/reason") == "SchedulingGated");
    match str_at(pod, "/status/reason") {
        _ if gated => "SchedulingGated".into(),
        "" => str_at(pod, "/status/phase").to_string(),
        r => r.to_string(),
    }
}

/// The cells of a Pod's row: name, ready, status, restarts, age, IP, node, nominated node,
/// readiness gates.
pub fn cells(pod: &Value, name: &str, age: String, now_ms: u64) -> Vec<Value> {
    let specs = list(pod, "/spec/initContainers");
    let sidecars = specs
        .iter()
        .filter(|c| str_at(c, "/restartPolicy") == "Always")
        .count();
    let total = list(pod, "/spec/containers").len() + sidecars;
    let mut p = Progress {
        ready: 0,
        reason: first_reason(pod),
        restarts: Restarts::default(),
    };
    let (initializing, sidecar_restarts) = init_containers(pod, &mut p);
    if !initializing || condition_true(pod, "Initialized") {
        p.restarts = sidecar_restarts;
        containers(pod, &mut p);
    }
    let phase = str_at(pod, "/status/phase");
    let deleting = pod.pointer("/metadata/deletionTimestamp").is_some();
    if deleting && str_at(pod, "/status/reason") == "NodeLost" {
        p.reason = "Unknown".into();
    } else if deleting && phase != "Succeeded" && phase != "Failed" {
        p.reason = "Terminating".into();
    }
    let restarts = match p.restarts.last_ms {
        Some(t) if p.restarts.count != 0 => format!(
            "{} ({} ago)",
            p.restarts.count,
            human_duration(now_ms.saturating_sub(t))
        ),
        _ => p.restarts.count.to_string(),
    };
    let or_none = |s: &str| if s.is_empty() { "<none>" } else { s }.to_string();
    let ip = list(pod, "/status/podIPs")
        .first()
        .map_or("", |p| str_at(p, "/ip"));
    vec![
        json!(name),
        json!(format!("{}/{total}", p.ready)),
        json!(p.reason),
        json!(restarts),
        json!(age),
        json!(or_none(ip)),
        json!(or_none(str_at(pod, "/spec/nodeName"))),
        json!(or_none(str_at(pod, "/status/nominatedNodeName"))),
        json!(readiness_gates(pod)),
    ]
}

/// `n/m`: of the pod's readiness gates, how many have their condition True; `<none>`.
fn readiness_gates(pod: &Value) -> String {
    let gates = list(pod, "/spec/readinessGates");
    if gates.is_empty() {
        return "<none>".into();
    }
    let conditions = list(pod, "/status/conditions");
    let met = gates
        .iter()
        .filter(|g| {
            let ty = str_at(g, "/conditionType");
            conditions
                .iter()
                .find(|c| str_at(c, "/type") == ty)
                .is_some_and(|c| str_at(c, "/status") == "True")
        })
        .count();
    format!("{met}/{}", gates.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pod: Value, now_ms: u64) -> Vec<String> {
        cells(&pod, "p", "1m".into(), now_ms)
            .into_iter()
            .map(|c| c.as_str().expect("string cells").to_string())
            .collect()
    }

    #[test]
    fn a_running_pod_prints_ready_and_its_placement() {
        let pod = json!({
            "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
            "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.7"}],
                "containerStatuses": [
                    {"name": "a", "ready": true, "restartCount": 0, "state": {"running": {}}},
                    {"name": "b", "ready": false, "restartCount": 0, "state": {"running": {}}}]}
        });
        assert_eq!(
            row(pod, 0),
            ["p", "1/2", "Running", "0", "1m", "10.0.0.7", "n1", "<none>", "<none>"]
        );
    }

    #[test]
    fn a_waiting_container_names_the_status_and_restarts_say_when() {
        // Restarted twice, the last run finished 90 s before now (2024-01-01T00:00:00Z is 0).
        let pod = json!({
            "metadata": {},
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Running", "nominatedNodeName": "n2",
                "containerStatuses": [{"name": "a", "ready": false, "restartCount": 2,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"exitCode": 1,
                        "finishedAt": "2024-01-01T00:00:30Z"}}}]}
        });
        let r = row(pod, 120_000);
        assert_eq!(r[1..4], ["0/1", "CrashLoopBackOff", "2 (90s ago)"]);
        assert_eq!(r[7], "n2");
    }

    #[test]
    fn init_containers_show_progress_and_sidecars_count() {
        let pod = json!({
            "spec": {"containers": [{"name": "a"}],
                "initContainers": [{"name": "side", "restartPolicy": "Always"}, {"name": "i"}]},
            "status": {"phase": "Pending",
                "initContainerStatuses": [
                    {"name": "side", "ready": true, "started": true, "restartCount": 0,
                        "state": {"running": {}}},
                    {"name": "i", "ready": false, "restartCount": 0,
                        "state": {"waiting": {"reason": "PodInitializing"}}}],
                "containerStatuses": [{"name": "a", "ready": false, "restartCount": 0,
                    "state": {"waiting": {"reason": "PodInitializing"}}}]}
        });
        let r = row(pod, 0);
        assert_eq!(r[1..3], ["1/2", "Init:1/2"]);
    }

    #[test]
    fn terminated_containers_and_deletion_print_as_kubectl_does() {
        let failed = json!({
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Failed", "containerStatuses": [{"name": "a", "restartCount": 0,
                "state": {"terminated": {"exitCode": 137, "signal": 0}}}]}
        });
        assert_eq!(row(failed, 0)[2], "ExitCode:137");
        let deleting = json!({
            "metadata": {"deletionTimestamp": "2024-01-01T00:00:00Z"},
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Running"}
        });
        assert_eq!(row(deleting, 0)[2], "Terminating");
        let gated = json!({
            "spec": {"containers": [{"name": "a"}], "readinessGates": [{"conditionType": "x"}]},
            "status": {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"},
                {"type": "x", "status": "True"}]}
        });
        let r = row(gated, 0);
        assert_eq!((r[2].as_str(), r[8].as_str()), ("SchedulingGated", "1/1"));
    }
}
