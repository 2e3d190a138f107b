//! `lws-sim serve` from the outside: the binary on an ephemeral port, paused, driven by the real
//! kubectl and by raw HTTP. Every test bounds its time and stops its server (kill on drop).

mod common;

use common::Scratch;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_lws-sim");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

struct Server {
    child: Child,
    addr: String,
}

impl Server {
    /// Start `serve SCENARIO --paused` on 127.0.0.1:0 (`--reconciler latest` unless `extra`
    /// names one) and read the bound address from stdout.
    fn start(scenario: &str, extra: &[&str]) -> Server {
        let default = if extra.contains(&"--reconciler") {
            &[][..]
        } else {
            &["--reconciler", "latest"][..]
        };
        let mut child = Command::new(BIN)
            .arg("serve")
            .arg(repo().join(scenario))
            .args(["--addr", "127.0.0.1:0", "--paused"])
            .args(default)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("lws-sim starts");
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the server prints its address");
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        Server { child, addr }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// One HTTP/1.1 request; returns (status code, body as text, chunk framing included).
    fn http(&self, method: &str, path: &str, ctype: &str, body: &str) -> (u16, String) {
        let headers = format!(
            "Content-Type: {ctype}\r\nContent-Length: {}\r\n",
            body.len()
        );
        self.request(method, path, &headers, body)
    }

    /// A GET with an `Accept` header: (status, body).
    fn get_as(&self, path: &str, accept: &str) -> (u16, String) {
        self.request("GET", path, &format!("Accept: {accept}\r\n"), "")
    }

    /// `method path` with the given header lines (each ending in CRLF) and body.
    fn request(&self, method: &str, path: &str, headers: &str, body: &str) -> (u16, String) {
        let mut s = TcpStream::connect(&self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\n{headers}Connection: close\r\n\r\n{body}",
            self.addr
        );
        s.write_all(req.as_bytes()).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        let code = out
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let body = out.split_once("\r\n\r\n").map_or("", |b| b.1).to_string();
        (code, body)
    }

    fn step(&self, d: &str) {
        let (code, body) = self.http("POST", &format!("/lws-sim/step?for={d}"), "", "");
        assert_eq!(code, 200, "{body}");
    }

    /// `kubectl patch RESOURCE NAME --type=merge -p BODY`.
    fn merge_patch(&self, resource: &str, name: &str, body: &str) -> (bool, String) {
        self.kubectl(&["patch", resource, name, "--type=merge", "-p", body])
    }

    fn kubectl(&self, args: &[&str]) -> (bool, String) {
        let out = Command::new(kubectl())
            .arg("--server")
            .arg(self.url())
            .args(["--request-timeout", "30s"])
            .args(args)
            .output()
            .expect("kubectl runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }

    /// `kubectl get KIND NAME -o jsonpath=PATH`, trimmed.
    fn jsonpath(&self, kind: &str, name: &str, path: &str) -> String {
        let arg = format!("jsonpath={path}");
        self.ok(&["get", kind, name, "-o", &arg]).trim().to_string()
    }

    fn ok(&self, args: &[&str]) -> String {
        let (ok, text) = self.kubectl(args);
        assert!(ok, "kubectl {args:?} failed:\n{text}");
        text
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// kubectl 1.32: `$KUBECTL`, else the Cloud SDK's pinned 1.32 (its `kubectl` dispatches on the
/// server's version), else `kubectl` on PATH (CI installs it).
fn kubectl() -> String {
    if let Ok(k) = std::env::var("KUBECTL") {
        return k;
    }
    let pinned = "/usr/lib/google-cloud-sdk/bin/kubectl.1.32";
    if Path::new(pinned).exists() {
        return pinned.into();
    }
    "kubectl".into()
}

fn temp_dir(name: &str) -> Scratch {
    Scratch::new(&format!("serve-{name}"))
}

/// Write `text` to `dir/name` (a manifest for `kubectl -f`); its path.
fn write_file(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// `kubectl ARGS` left running against the server (a `-w` watch): the lines it prints, as
/// they come. Killed on drop.
struct Streaming {
    child: Child,
    rx: mpsc::Receiver<String>,
    lines: Vec<String>,
}

impl Streaming {
    fn start(s: &Server, args: &[&str]) -> Streaming {
        let mut child = Command::new(kubectl())
            .args(["--server", &s.url()])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl runs");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Streaming {
            child,
            rx,
            lines: Vec::new(),
        }
    }

    /// Read until `done` holds for every line printed so far, or `deadline`; those lines.
    fn read_until(&mut self, deadline: Instant, done: impl Fn(&[String]) -> bool) -> &[String] {
        while !done(&self.lines) && Instant::now() < deadline {
            if let Ok(l) = self.rx.recv_timeout(Duration::from_millis(200)) {
                self.lines.push(l);
            }
        }
        &self.lines
    }
}

impl Drop for Streaming {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn kubectl_gets_scales_deletes_and_applies_and_the_recording_replays() {
    let dir = temp_dir("kubectl");
    let record = dir.join("session.yaml");
    let s = Server::start(
        "scenarios/rollout.yaml",
        &["--record", record.to_str().unwrap()],
    );
    let out = s.ok(&["get", "lws,sts,pods", "-o", "wide"]);
    for want in [
        "leaderworkerset.leaderworkerset.x-k8s.io/vllm",
        "statefulset.apps/vllm-3",
        "pod/vllm-0-1",
        "Running",
        "node-",
        "READY",
    ] {
        assert!(out.contains(want), "no {want:?} in:\n{out}");
    }
    s.step("30s");
    // Node writes (`kubectl cordon`, `uncordon`, `label`) are recorded as patches of the node.
    assert!(s.ok(&["cordon", "node-1"]).contains("cordoned"));
    s.step("5s");
    assert!(s.ok(&["uncordon", "node-1"]).contains("uncordoned"));
    assert!(s
        .ok(&["label", "node", "node-2", "tier=gold"])
        .contains("labeled"));
    assert!(s
        .ok(&["scale", "lws", "vllm", "--replicas", "6"])
        .contains("scaled"));
    s.step("3m");
    let yaml = s.ok(&["get", "lws", "vllm", "-o", "yaml"]);
    assert!(yaml.contains("replicas: 6"), "{yaml}");
    let pods = s.ok(&["get", "pods"]);
    assert!(pods.contains("vllm-5-2"), "{pods}");
    assert!(s
        .ok(&["delete", "pod", "vllm-1-1", "--wait=false"])
        .contains("deleted"));
    s.step("10s");
    // A new template: kubectl's client-side apply (a JSON merge patch for a custom resource).
    let v2 = std::fs::read_to_string(repo().join("scenarios/manifests/vllm-lws-v2.yaml")).unwrap();
    let v3 = dir.join("vllm-v3.yaml");
    std::fs::write(
        &v3,
        v2.replace("v0.6.0", "v0.6.1")
            .replace("replicas: 4", "replicas: 6"),
    )
    .unwrap();
    let applied = s.ok(&["apply", "-f", v3.to_str().unwrap()]);
    assert!(applied.contains("configured"), "{applied}");
    s.step("30m");
    let yaml = s.ok(&["get", "lws", "vllm", "-o", "yaml"]);
    assert!(yaml.contains("vllm/vllm-openai:v0.6.1"), "{yaml}");
    let sts = s.ok(&["get", "sts", "vllm-5", "-o", "wide"]);
    assert!(sts.contains("v0.6.1"), "{sts}");
    // The LWS's resourceVersion and status now, as a `check` step the replay must pass.
    let (code, body) = s.http("POST", "/lws-sim/checkpoint", "", "");
    assert_eq!(code, 200, "{body}");
    drop(s);

    let rec = std::fs::read_to_string(&record).unwrap();
    for want in [
        "scale:",
        "deletePod:",
        "wait: 30000ms",
        "v0.6.1",
        "check:",
        "kind: Node",
        "unschedulable: true",
        "tier: gold",
    ] {
        assert!(rec.contains(want), "no {want:?} in the recording:\n{rec}");
    }
    assert!(!rec.contains("unrecorded"), "{rec}");
    let replay = |_: ()| {
        Command::new(BIN)
            .arg("run")
            .arg(&record)
            .output()
            .expect("run")
    };
    let a = replay(());
    let text = String::from_utf8_lossy(&a.stdout).to_string();
    assert_eq!(
        a.status.code(),
        Some(0),
        "the recording does not replay to the same state:\n{text}{}",
        String::from_utf8_lossy(&a.stderr)
    );
    let b = replay(());
    let hash = |t: &str| t.split("trace ").nth(1).map(str::trim).map(str::to_string);
    assert_eq!(
        hash(&text),
        hash(&String::from_utf8_lossy(&b.stdout)),
        "replays differ"
    );
}

#[test]
fn kubectl_watch_streams_the_pods_a_scale_up_creates() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let mut w = Streaming::start(&s, &["get", "pods", "-w"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    // The initial list: 12 pods and a header.
    let lines = w.read_until(deadline, |lines| lines.len() >= 13);
    assert!(lines[0].starts_with("NAME"), "{lines:?}");
    s.ok(&["scale", "lws", "vllm", "--replicas", "5"]);
    s.step("2m");
    let running = |l: &String| l.contains("vllm-4-2") && l.contains("Running");
    let lines = w.read_until(deadline, |lines| lines.iter().any(running));
    assert!(lines.iter().any(running), "{lines:#?}");
    assert!(lines
        .iter()
        .any(|l| l.contains("vllm-4 ") && l.contains("Pending")));
}

#[test]
fn bad_requests_get_a_status() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let (ok, text) = s.kubectl(&["get", "widgets"]);
    assert!(
        !ok && text.contains("doesn't have a resource type"),
        "{text}"
    );
    let (ok, text) = s.kubectl(&["get", "pods", "-l", "app in (x"]);
    assert!(!ok && text.contains("BadRequest"), "{text}");

    let status = |code: u16, reason: &str, r: (u16, String)| {
        assert_eq!(r.0, code, "{}", r.1);
        assert!(r.1.contains("\"kind\":\"Status\""), "{}", r.1);
        assert!(r.1.contains(&format!("\"reason\":\"{reason}\"")), "{}", r.1);
    };
    let pods = "/api/v1/namespaces/default/pods";
    status(
        404,
        "NotFound",
        s.http("GET", "/api/v1/namespaces/default/widgets", "", ""),
    );
    status(
        404,
        "NotFound",
        s.http("GET", &format!("{pods}/nope"), "", ""),
    );
    // A path nothing serves (`kubectl debug`'s ephemeralcontainers): details are there, empty,
    // as kube-apiserver sends them; kubectl dereferences them without a nil check.
    let (code, body) = s.http(
        "PATCH",
        &format!("{pods}/vllm-0/ephemeralcontainers"),
        "application/strategic-merge-patch+json",
        "{}",
    );
    assert_eq!(code, 404, "{body}");
    assert!(body.contains("\"details\":{}"), "{body}");
    status(
        400,
        "BadRequest",
        s.http("POST", pods, "application/json", "{bad"),
    );
    status(
        400,
        "BadRequest",
        s.http("GET", &format!("{pods}?labelSelector=a%3D("), "", ""),
    );
    status(
        400,
        "BadRequest",
        s.http(
            "GET",
            &format!("{pods}?fieldSelector=spec.bogus%3Dx"),
            "",
            "",
        ),
    );
    let svc = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"vllm"}}"#;
    status(
        409,
        "AlreadyExists",
        s.http(
            "POST",
            "/api/v1/namespaces/default/services",
            "application/json",
            svc,
        ),
    );
    let lws = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets/vllm";
    let bad = r#"{"spec":{"leaderWorkerTemplate":{"size":0}}}"#;
    let r = s.http("PATCH", lws, "application/merge-patch+json", bad);
    assert!(r.1.contains("admission webhook"), "{}", r.1);
    // An LWS webhook refusal: 403, as controller-runtime's Denied.
    status(403, "Forbidden", r);
    let stale = r#"{"metadata":{"resourceVersion":"1"},"spec":{"replicas":2}}"#;
    status(
        409,
        "Conflict",
        s.http("PATCH", lws, "application/merge-patch+json", stale),
    );
    status(
        415,
        "UnsupportedMediaType",
        s.http("PATCH", lws, "text/plain", "{}"),
    );
    // A watch from a compacted resourceVersion: one ERROR event with a 410 Expired Status.
    s.step("11m");
    let (code, body) = s.http(
        "GET",
        &format!("{pods}?watch=true&resourceVersion=1&timeoutSeconds=1"),
        "",
        "",
    );
    assert_eq!(code, 200);
    assert!(
        body.contains("\"type\":\"ERROR\"") && body.contains("\"code\":410"),
        "{body}"
    );
    // The server is still up.
    assert!(s.ok(&["get", "lws"]).contains("vllm"));
}

#[test]
fn scale_status_and_server_side_apply_over_http() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let lws = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets/vllm";
    let (code, body) = s.http("GET", &format!("{lws}/scale"), "", "");
    assert_eq!(code, 200, "{body}");
    assert!(
        body.contains("\"kind\":\"Scale\"") && body.contains("\"replicas\":4"),
        "{body}"
    );
    // kubectl's User-Agent and no fieldManager: the manager is the User-Agent's product.
    let patch = r#"{"spec":{"replicas":2}}"#;
    let headers = format!(
        "User-Agent: kubectl/v1.33.0 (linux/amd64) kubernetes/abc\r\nContent-Type: application/merge-patch+json\r\nContent-Length: {}\r\n",
        patch.len()
    );
    let (code, body) = s.request("PATCH", &format!("{lws}/scale"), &headers, patch);
    assert_eq!(code, 200, "{body}");
    let (_, body) = s.http("GET", lws, "", "");
    assert!(body.contains("\"replicas\":2"), "{body}");
    // A /scale body decodes as an autoscaling/v1 Scale: another kind, or replicas of the
    // wrong type, is a 400 (it scaled, or read as "Required").
    let pod_kind =
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"vllm"},"spec":{"replicas":1}}"#;
    let (code, body) = s.http("PUT", &format!("{lws}/scale"), "application/json", pod_kind);
    assert_eq!(code, 400, "{body}");
    let quoted = r#"{"spec":{"replicas":"2"}}"#;
    let merge = "application/merge-patch+json";
    let (code, body) = s.http("PATCH", &format!("{lws}/scale"), merge, quoted);
    assert_eq!(code, 400, "{body}");
    // Server-side apply with a field manager, then a conflicting one without force. The
    // `/scale` write above made its manager own spec.replicas: the first apply conflicts with
    // it (an Update owner, named with its subresource and version) unless forced.
    let intent = r#"{"apiVersion":"leaderworkerset.x-k8s.io/v1","kind":"LeaderWorkerSet","metadata":{"name":"vllm","labels":{"team":"a"}},"spec":{"replicas":3,"leaderWorkerTemplate":{"size":3,"workerTemplate":{"spec":{"containers":[{"name":"vllm-worker","image":"vllm/vllm-openai:v0.6.0"}]}}}}}"#;
    let (code, body) = s.http(
        "PATCH",
        &format!("{lws}?fieldManager=me"),
        "application/apply-patch+yaml",
        intent,
    );
    assert_eq!(code, 409, "{body}");
    assert!(
        body.contains(
            r#"conflict with \"kubectl\" with subresource \"scale\" using leaderworkerset.x-k8s.io/v1: .spec.replicas"#
        ),
        "{body}"
    );
    let (code, body) = s.http(
        "PATCH",
        &format!("{lws}?fieldManager=me&force=true"),
        "application/apply-patch+yaml",
        intent,
    );
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"team\":\"a\""), "{body}");
    let other = intent.replace("\"replicas\":3", "\"replicas\":5");
    let (code, body) = s.http(
        "PATCH",
        &format!("{lws}?fieldManager=you"),
        "application/apply-patch+yaml",
        &other,
    );
    assert_eq!(code, 409, "{body}");
    // As the apiserver words it (internal.NewConflictError): the message kubectl prints, and
    // one FieldManagerConflict cause per field.
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        v["message"], r#"Apply failed with 1 conflict: conflict with "me": .spec.replicas"#,
        "{body}"
    );
    let cause = &v["details"]["causes"][0];
    assert_eq!(
        (&cause["reason"], &cause["field"], &cause["message"]),
        (
            &serde_json::json!("FieldManagerConflict"),
            &serde_json::json!(".spec.replicas"),
            &serde_json::json!("conflict with \"me\"")
        ),
        "{body}"
    );
    let (code, _) = s.http(
        "PATCH",
        &format!("{lws}?fieldManager=you&force=true"),
        "application/apply-patch+yaml",
        &other,
    );
    assert_eq!(code, 200);
    // Status subresource: a merge patch of status only.
    let (code, body) = s.http(
        "PATCH",
        &format!("{lws}/status"),
        "application/merge-patch+json",
        r#"{"status":{"hpaPodSelector":"x=y"},"spec":{"replicas":9}}"#,
    );
    assert_eq!(code, 200, "{body}");
    assert!(
        body.contains("\"hpaPodSelector\":\"x=y\"") && !body.contains("\"replicas\":9"),
        "{body}"
    );
    // Time control.
    let (_, before) = s.http("GET", "/lws-sim/status", "", "");
    s.step("90s");
    let (_, after) = s.http("GET", "/lws-sim/status", "", "");
    let now = |t: &str| -> u64 {
        let i = t.find("\"nowMs\":").unwrap() + 8;
        t[i..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(now(&after), now(&before) + 90_000);
}

/// Two managers apply to one container of an LWS's template: the container and its env merge
/// by name (the CRD's `x-kubernetes-list-map-keys`), each manager owning what it set; a
/// change to the other's field conflicts naming the item.
#[test]
fn server_side_apply_merges_containers_and_env_by_name() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let dir = temp_dir("serve-ssa-keyed");
    // `manager` applies an LWS whose worker template holds `containers` (file `file`).
    let apply = |manager: &str, file: &str, containers: &str| {
        let text = format!("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {{name: keyed}}\nspec: {{leaderWorkerTemplate: {{workerTemplate: {{spec: {{containers: [{containers}]}}}}}}}}\n");
        let path = write_file(&dir, file, &text);
        let manager = format!("--field-manager={manager}");
        s.kubectl(&["apply", "--server-side", &manager, "-f", &path])
    };
    let applied = |manager: &str, file: &str, containers: &str| {
        let (ok, out) = apply(manager, file, containers);
        assert!(ok, "{manager} applying {containers}: {out}");
    };
    let a = "{name: w, image: busybox, env: [{name: A, value: '1'}]}";
    applied("a", "a.yaml", a);
    applied("b", "b.yaml", "{name: w, env: [{name: B, value: '2'}]}");
    let containers = ".spec.leaderWorkerTemplate.workerTemplate.spec.containers";
    let got = s.jsonpath(
        "lws",
        "keyed",
        &format!("{{{containers}[0].image}} {{{containers}[0].env[*].name}}"),
    );
    assert_eq!(got, "busybox A B");
    let (ok, out) = apply(
        "b",
        "c.yaml",
        "{name: w, image: alpine, env: [{name: B, value: '2'}]}",
    );
    assert!(!ok, "{out}");
    assert!(
        out.contains(r#"conflict with "a": .spec.leaderWorkerTemplate.workerTemplate.spec.containers[name="w"].image"#),
        "{out}"
    );
    // b lets go of B: its env var goes, a's stays.
    applied("b", "d.yaml", "{name: w}");
    let got = s.jsonpath("lws", "keyed", &format!("{{{containers}[0].env[*].name}}"));
    assert_eq!(got, "A");
    // A container a lets go of goes whole, its volume mounts too (its key was released
    // before the mounts' and the item stayed as {name: m}).
    let mounted = "{name: m, image: x, volumeMounts: [{name: v, mountPath: /data}]}";
    applied("a", "e.yaml", &format!("{a}, {mounted}"));
    applied("a", "a.yaml", a);
    let got = s.jsonpath("lws", "keyed", &format!("{{{containers}[*].name}}"));
    assert_eq!(got, "w");
    // An empty map a applied and b filled is b's too: a dropping it leaves b's fields.
    applied(
        "a",
        "f.yaml",
        "{name: w, image: busybox, env: [{name: A, value: '1'}], resources: {}}",
    );
    applied("b", "g.yaml", "{name: w, resources: {limits: {cpu: '1'}}}");
    applied("a", "a.yaml", a);
    let got = s.jsonpath(
        "lws",
        "keyed",
        &format!("{{{containers}[0].resources.limits.cpu}}"),
    );
    assert_eq!(got, "1");
}

#[test]
fn server_side_apply_owns_only_the_fields_the_intent_sets() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let lws = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets/vllm";
    let apply = |manager: &str, body: &str| {
        s.http(
            "PATCH",
            &format!("{lws}?fieldManager={manager}"),
            "application/apply-patch+yaml",
            body,
        )
    };
    // A whole object from one manager, without a startupPolicy.
    let whole = r#"{"apiVersion":"leaderworkerset.x-k8s.io/v1","kind":"LeaderWorkerSet","metadata":{"name":"vllm"},"spec":{"replicas":4,"leaderWorkerTemplate":{"size":3,"workerTemplate":{"spec":{"containers":[{"name":"vllm-worker","image":"vllm/vllm-openai:v0.6.0"}]}}}}}"#;
    let (code, body) = apply("owner", whole);
    assert_eq!(code, 200, "{body}");
    // A second manager sets only a label: a partial intent, no spec.
    let label = r#"{"apiVersion":"leaderworkerset.x-k8s.io/v1","kind":"LeaderWorkerSet","metadata":{"name":"vllm","labels":{"team":"b"}}}"#;
    let (code, body) = apply("labeller", label);
    assert_eq!(code, 200, "{body}");
    assert!(
        body.contains("\"team\":\"b\"") && body.contains("\"replicas\":4"),
        "{body}"
    );
    // The first manager never set startupPolicy, so a third may, without force.
    let policy = r#"{"apiVersion":"leaderworkerset.x-k8s.io/v1","kind":"LeaderWorkerSet","metadata":{"name":"vllm"},"spec":{"startupPolicy":"LeaderReady"}}"#;
    let (code, body) = apply("starter", policy);
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"startupPolicy\":\"LeaderReady\""), "{body}");
    // The first manager does own replicas: a different value from another manager conflicts.
    let scale = r#"{"apiVersion":"leaderworkerset.x-k8s.io/v1","kind":"LeaderWorkerSet","metadata":{"name":"vllm"},"spec":{"replicas":2}}"#;
    let (code, body) = apply("scaler", scale);
    assert_eq!(code, 409, "{body}");
    assert!(
        body.contains("spec.replicas") || body.contains(".spec.replicas"),
        "{body}"
    );
    // The labeller drops its label by applying an intent without it: the field is released.
    let bare = r#"{"apiVersion":"leaderworkerset.x-k8s.io/v1","kind":"LeaderWorkerSet","metadata":{"name":"vllm"}}"#;
    let (code, body) = apply("labeller", bare);
    assert_eq!(code, 200, "{body}");
    assert!(!body.contains("\"team\""), "{body}");
    // An unknown field of the custom resource is pruned (fieldValidation Warn, the default),
    // and refused under Strict, naming it; a partial intent for an object that does not exist
    // cannot create it.
    let unknown = r#"{"apiVersion":"leaderworkerset.x-k8s.io/v1","kind":"LeaderWorkerSet","metadata":{"name":"vllm"},"spec":{"replicaz":2}}"#;
    let (code, body) = apply("typo", unknown);
    assert_eq!(code, 200, "{body}");
    assert!(!body.contains("replicaz"), "{body}");
    let (code, body) = apply("typo&fieldValidation=Strict", unknown);
    assert_eq!(code, 400, "{body}");
    assert!(
        body.contains("strict decoding error: unknown field \\\"spec.replicaz\\\""),
        "{body}"
    );
    // The same for a merge patch.
    let (code, body) = s.http(
        "PATCH",
        lws,
        "application/merge-patch+json",
        r#"{"spec":{"bogus":1}}"#,
    );
    assert_eq!(code, 200, "{body}");
    assert!(!body.contains("bogus"), "{body}");
    let (code, body) = s.http(
        "PATCH",
        &format!("{lws}?fieldValidation=Strict"),
        "application/merge-patch+json",
        r#"{"spec":{"bogus":1}}"#,
    );
    assert_eq!(code, 400, "{body}");
    let other = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets/new";
    let (code, body) = s.http(
        "PATCH",
        &format!("{other}?fieldManager=me"),
        "application/apply-patch+yaml",
        r#"{"apiVersion":"leaderworkerset.x-k8s.io/v1","kind":"LeaderWorkerSet","metadata":{"name":"new"}}"#,
    );
    // Schema validation, not a decoder's failure: a 422 naming the field.
    assert_eq!(code, 422, "{body}");
    assert!(body.contains("spec: Required value"), "{body}");
    assert!(s.http("GET", other, "", "").0 == 404);
}

#[test]
fn a_non_loopback_address_is_refused() {
    let out = Command::new(BIN)
        .args(["serve", "scenarios/rollout.yaml", "--addr", "0.0.0.0:0"])
        .current_dir(repo())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--insecure-bind"));
}

/// kube-rs against the server: list with a label selector, a watcher (list, then watch with
/// bookmarks), a merge patch, server-side apply, all on the dynamic LWS type.
#[test]
fn kube_rs_lists_watches_patches_and_applies() {
    use futures_util::StreamExt;
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{
        Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
    };
    use kube::runtime::watcher;

    let s = Server::start("scenarios/rollout.yaml", &[]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut config = kube::Config::new(s.url().parse().unwrap());
        config.default_namespace = "default".into();
        let client = kube::Client::try_from(config).unwrap();
        let pods: Api<Pod> = Api::default_namespaced(client.clone());
        let listed = pods
            .list(&ListParams::default().labels("leaderworkerset.sigs.k8s.io/name=vllm"))
            .await
            .unwrap();
        assert_eq!(listed.items.len(), 12);

        let gvk = GroupVersionKind::gvk("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet");
        let ar = ApiResource::from_gvk_with_plural(&gvk, "leaderworkersets");
        let lws: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);

        let mut events = watcher(pods.clone(), watcher::Config::default()).boxed();
        let mut init = 0;
        loop {
            match tokio::time::timeout(Duration::from_secs(30), events.next()).await {
                Ok(Some(Ok(watcher::Event::InitApply(_)))) => init += 1,
                Ok(Some(Ok(watcher::Event::InitDone))) => break,
                Ok(Some(Ok(_))) => {}
                other => panic!("watcher: {other:?}"),
            }
        }
        assert_eq!(init, 12);

        let patched = lws
            .patch("vllm", &PatchParams::default(), &Patch::Merge(serde_json::json!({"spec": {"replicas": 5}})))
            .await
            .unwrap();
        assert_eq!(patched.data["spec"]["replicas"], 5);
        s.step("2m");
        let mut seen_new = false;
        while !seen_new {
            match tokio::time::timeout(Duration::from_secs(30), events.next()).await {
                Ok(Some(Ok(watcher::Event::Apply(p)))) => {
                    seen_new = p.metadata.name.as_deref() == Some("vllm-4-2");
                }
                Ok(Some(Ok(_))) => {}
                other => panic!("watcher: {other:?}"),
            }
        }

        let intent = serde_json::json!({
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": "vllm", "labels": {"owner": "kube-rs"}},
            "spec": {"replicas": 3, "leaderWorkerTemplate": {"size": 3, "workerTemplate": {"spec": {"containers": [{"name": "vllm-worker", "image": "vllm/vllm-openai:v0.6.0"}]}}}},
        });
        let applied = lws
            .patch("vllm", &PatchParams::apply("kube-rs-test").force(), &Patch::Apply(intent))
            .await
            .unwrap();
        assert_eq!(applied.data["spec"]["replicas"], 3);
        assert_eq!(applied.metadata.labels.unwrap()["owner"], "kube-rs");
        let missing = lws.get("nope").await.unwrap_err();
        assert!(matches!(missing, kube::Error::Api(ref e) if e.code == 404), "{missing:?}");
    });
}

#[test]
fn kubectl_gets_and_describes_the_events_the_controllers_recorded() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    s.step("3m");
    let events = s.ok(&["get", "events"]);
    for want in ["LAST SEEN", "REASON", "leaderworkerset/vllm", "Normal"] {
        assert!(events.contains(want), "no {want:?} in:\n{events}");
    }
    let selected = s.ok(&[
        "get",
        "events",
        "--field-selector",
        "involvedObject.kind=LeaderWorkerSet,type=Normal",
        "-o",
        "jsonpath={.items[*].involvedObject.name}",
    ]);
    assert!(
        selected.split_whitespace().all(|n| n == "vllm"),
        "{selected}"
    );
    assert!(!selected.is_empty());
    let described = s.ok(&["describe", "lws", "vllm"]);
    // `kubectl describe` lists the LWS's events by field selector (involvedObject.*).
    let listed = described.split("Events:").nth(1).unwrap_or("");
    assert!(
        listed.contains("GroupsProgressing") && listed.contains("Created leader statefulset vllm"),
        "describe lists the LWS's events:\n{described}"
    );
    let (ok, text) = s.kubectl(&["get", "events", "--field-selector", "spec.x=1"]);
    assert!(!ok && text.contains("not a known field selector"), "{text}");
    let (code, body) = s.http(
        "POST",
        "/api/v1/namespaces/default/events",
        "application/json",
        "{}",
    );
    assert_eq!(code, 405, "{body}");
}

#[test]
fn the_events_are_served_as_events_k8s_io_v1_too() {
    // v0.10.0 (`latest`) records through the events.k8s.io/v1 recorder.
    let s = Server::start("scenarios/rollout.yaml", &[]);
    s.step("3m");
    let resources = s.ok(&["api-resources", "--api-group", "events.k8s.io"]);
    assert!(resources.contains("events.k8s.io/v1"), "{resources}");
    let table = s.ok(&["get", "events.v1.events.k8s.io"]);
    for want in [
        "LAST SEEN",
        "leaderworkerset/vllm",
        "Created leader statefulset vllm",
    ] {
        assert!(table.contains(want), "no {want:?} in:\n{table}");
    }
    let notes = s.ok(&[
        "get",
        "events.v1.events.k8s.io",
        "--field-selector",
        "regarding.kind=LeaderWorkerSet,reason=GroupsProgressing",
        "-o",
        "jsonpath={range .items[*]}{.reportingController}/{.action}/{.note}{\"\\n\"}{end}",
    ]);
    assert!(
        notes.contains("leaderworkerset/Create/Created leader statefulset vllm"),
        "{notes}"
    );
    // The same event through core/v1 has the recorder's fields and no count.
    let core = s.ok(&[
        "get",
        "events",
        "--field-selector",
        "reason=GroupsProgressing",
        "-o",
        "jsonpath={range .items[*]}{.reportingComponent}/{.action}/{.count}/{.message}{\"\\n\"}{end}",
    ]);
    assert!(
        core.contains("leaderworkerset/Create//Created leader statefulset vllm"),
        "{core}"
    );
    let (ok, text) = s.kubectl(&[
        "get",
        "events.v1.events.k8s.io",
        "--field-selector",
        "involvedObject.name=vllm",
    ]);
    assert!(!ok && text.contains("not a known field selector"), "{text}");
    // `source` is the reporting controller when there is no source component; the reporting
    // component is selectable too.
    for selector in [
        "source=leaderworkerset",
        "reportingComponent=leaderworkerset",
    ] {
        let found = s.ok(&["get", "events", "--field-selector", selector, "-o", "name"]);
        assert!(found.lines().count() >= 2, "{selector}: {found}");
    }
}

/// A LeaderWorkerSet body is checked against its CRD's schema as the apiserver checks it: a
/// template without containers or a container without a name is a 422 `Required value` (it
/// was created, and its controllers failed at every reconcile), a wrong type a 422 in the
/// schema's words, on create and on a patch.
#[test]
fn kubectl_gets_the_crd_schemas_required_and_type_errors() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let dir = temp_dir("serve-crd-required");
    let lws = |name: &str, spec: &str| {
        format!("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {{name: {name}}}\nspec: {spec}\n")
    };
    let file = write_file(
        &dir,
        "nocont.yaml",
        &lws(
            "nocont",
            "{leaderWorkerTemplate: {workerTemplate: {spec: {}}}}",
        ),
    );
    let (ok, out) = s.kubectl(&["create", "-f", &file]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("spec.leaderWorkerTemplate.workerTemplate.spec.containers: Required value"),
        "{out}"
    );
    let file = write_file(
        &dir,
        "noname.yaml",
        &lws(
            "noname",
            "{leaderWorkerTemplate: {workerTemplate: {spec: {containers: [{image: x}]}}}}",
        ),
    );
    let (ok, out) = s.kubectl(&["create", "-f", &file]);
    assert!(
        !ok && out.contains("containers[0].name: Required value"),
        "{out}"
    );
    let file = write_file(&dir, "two.yaml", &lws("two", "{replicas: two, leaderWorkerTemplate: {workerTemplate: {spec: {containers: [{name: w, image: x}]}}}}"));
    let (ok, out) = s.kubectl(&["create", "-f", &file]);
    assert!(!ok, "{out}");
    assert!(
        out.contains(r#"The LeaderWorkerSet "two" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#),
        "{out}"
    );
    let (ok, out) = s.merge_patch("lws", "vllm", r#"{"spec":{"replicas":"3"}}"#);
    assert!(!ok, "{out}");
    assert!(
        out.contains(r#"is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#),
        "{out}"
    );
}

/// `fieldValidation=Strict` (kubectl's default) lists every unknown field of a body, in the
/// decoder's words, not only the first.
#[test]
fn strict_validation_names_every_unknown_field() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"typos"},"spec":{"containers":[{"name":"c","image":"i","imagePullPolicyy":"Always"}],"foo":1}}"#;
    let pods = "/api/v1/namespaces/default/pods?fieldValidation=Strict";
    let (code, body) = s.http("POST", pods, "application/json", pod);
    assert_eq!(code, 400, "{body}");
    assert!(
        body.contains(r#"Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field \"spec.containers[0].imagePullPolicyy\", unknown field \"spec.foo\""#),
        "{body}"
    );
}

/// The Accept header negotiates the reply's media type as the apiserver's does: YAML when
/// asked (`curl -H 'Accept: application/yaml'`), errors too; a header naming nothing the
/// server writes is 406 NotAcceptable; a browser's header (`*/*` last) gets JSON.
#[test]
fn accept_negotiates_yaml_json_or_406() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    s.step("10s");
    let lws = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets";
    let (code, body) = s.get_as(&format!("{lws}/vllm"), "application/yaml");
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("kind: LeaderWorkerSet"), "{body}");
    let (code, body) = s.get_as(&format!("{lws}/nothing"), "application/yaml");
    assert_eq!(code, 404, "{body}");
    assert!(body.contains("reason: NotFound"), "{body}");
    let (code, body) = s.get_as("/api/v1/namespaces/default/pods", "text/html");
    assert_eq!(code, 406, "{body}");
    assert!(
        body.contains("only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"),
        "{body}"
    );
    let (code, body) = s.get_as(lws, "text/html,application/xhtml+xml,*/*;q=0.8");
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"kind\":\"LeaderWorkerSetList\""), "{body}");
    // Outside the API groups nothing is negotiated.
    let (code, body) = s.get_as("/version", "text/html");
    assert_eq!(code, 200, "{body}");
}

/// client-go's metadata client (controller-runtime's `OnlyMetadata`) asks for
/// `PartialObjectMetadata`: a list, a get and a watch answer with metadata only.
#[test]
fn a_metadata_only_client_gets_partial_object_metadata() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    s.step("1m");
    let pods = "/api/v1/namespaces/default/pods";
    let list = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
    let (code, body) = s.get_as(pods, list);
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["kind"], "PartialObjectMetadataList");
    assert_eq!(v["items"][0]["kind"], "PartialObjectMetadata");
    assert!(v["items"][0].get("spec").is_none(), "{body}");
    let one = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
    let (_, body) = s.get_as(&format!("{pods}/vllm-0"), one);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["kind"], "PartialObjectMetadata");
    assert_eq!(v["metadata"]["name"], "vllm-0");
    let (_, body) = s.get_as(&format!("{pods}?watch=true&timeoutSeconds=1"), one);
    // The watch is chunked: the first line that is an event.
    let line = body.lines().find(|l| l.starts_with('{')).expect("an event");
    let first: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(first["object"]["kind"], "PartialObjectMetadata", "{body}");
    // A bookmark too (the initial-events-end one of a watch-list).
    let wl = "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1";
    let (_, body) = s.get_as(&format!("{pods}?{wl}"), one);
    let bookmark = body
        .lines()
        .find(|l| l.contains("\"BOOKMARK\""))
        .expect("a bookmark");
    let bookmark: serde_json::Value = serde_json::from_str(bookmark).unwrap();
    assert_eq!(
        bookmark["object"]["kind"], "PartialObjectMetadata",
        "{body}"
    );
}

/// Watch-list options as apimachinery validates them, `sendInitialEvents=false` from now, and
/// the `initial-events-end` bookmark only to a client that allows bookmarks; a resourceVersion
/// the server has not reached is the 504 whose cause client-go's reflector looks for.
#[test]
fn watch_list_options_and_too_large_versions_are_answered_as_the_apiserver_does() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    s.step("1m");
    let pods = "/api/v1/namespaces/default/pods";
    let (code, body) = s.http(
        "GET",
        &format!("{pods}?watch=true&sendInitialEvents=true"),
        "",
        "",
    );
    assert_eq!(code, 422, "{body}");
    assert!(
        body.contains("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"),
        "{body}"
    );
    let (code, body) = s.http("GET", &format!("{pods}?sendInitialEvents=true"), "", "");
    assert_eq!(code, 422, "{body}");
    assert!(
        body.contains("sendInitialEvents is forbidden for list"),
        "{body}"
    );
    let wl = "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1";
    let (_, body) = s.http("GET", &format!("{pods}?{wl}"), "", "");
    assert!(
        body.contains("\"ADDED\"") && !body.contains("initial-events-end"),
        "{body}"
    );
    let (_, body) = s.http(
        "GET",
        &format!("{pods}?{wl}&allowWatchBookmarks=true"),
        "",
        "",
    );
    assert!(body.contains("initial-events-end"), "{body}");
    let from_now =
        "watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&timeoutSeconds=1";
    let (_, body) = s.http("GET", &format!("{pods}?{from_now}"), "", "");
    assert!(!body.contains("\"ADDED\""), "{body}");
    // Watch-list from a version not reached: an ERROR event with the 504, no state.
    let ahead = format!("{pods}?{wl}&allowWatchBookmarks=true&resourceVersion=99999999");
    let (_, body) = s.http("GET", &ahead, "", "");
    assert!(
        body.contains("\"ERROR\"") && body.contains("ResourceVersionTooLarge"),
        "{body}"
    );
    assert!(!body.contains("\"ADDED\""), "{body}");
    for path in [
        format!("{pods}?resourceVersion=99999999"),
        format!("{pods}/vllm-0?resourceVersion=99999999"),
    ] {
        let (code, body) = s.http("GET", &path, "", "");
        assert_eq!(code, 504, "{path}: {body}");
        assert!(
            body.contains("\"reason\":\"ResourceVersionTooLarge\""),
            "{body}"
        );
        assert!(body.contains("\"retryAfterSeconds\":1"), "{body}");
    }
    let (code, body) = s.http(
        "GET",
        &format!("{pods}?limit=1&continue=default/vllm-0&resourceVersion=5"),
        "",
        "",
    );
    assert_eq!(code, 400, "{body}");
    // The remaining count only for an unfiltered list.
    let (_, body) = s.http("GET", &format!("{pods}?limit=1"), "", "");
    assert!(body.contains("\"remainingItemCount\""), "{body}");
    let selected = format!("{pods}?limit=1&labelSelector=role%3Dleader");
    let (_, body) = s.http("GET", &selected, "", "");
    assert!(
        body.contains("\"continue\"") && !body.contains("remainingItemCount"),
        "{body}"
    );
}

/// Every page of a list, following its continue tokens: the names, and each page's
/// `remainingItemCount` (if any).
fn pages(s: &Server, path: &str, limit: usize) -> (Vec<String>, Vec<Option<u64>>) {
    let (mut names, mut counts, mut token) = (Vec::new(), Vec::new(), String::new());
    loop {
        let sep = if path.contains('?') { '&' } else { '?' };
        let url = format!("{path}{sep}limit={limit}&continue={token}");
        let (code, body) = s.http("GET", &url, "", "");
        assert_eq!(code, 200, "{url}: {body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        let items = v["items"].as_array().unwrap();
        assert!(items.len() <= limit, "{body}");
        names.extend(
            items
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap().to_string()),
        );
        counts.push(v["metadata"]["remainingItemCount"].as_u64());
        match v["metadata"]["continue"].as_str() {
            Some(t) if !t.is_empty() => token = t.to_string(),
            _ => return (names, counts),
        }
    }
}

#[test]
fn paging_a_list_returns_each_object_once_with_or_without_a_field_selector() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    s.step("2m");
    let pods = "/api/v1/namespaces/default/pods";
    let all = |path: &str| {
        let (_, body) = s.http("GET", path, "", "");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        let names: Vec<String> = v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
            .collect();
        names
    };
    let every = all(pods);
    assert!(every.len() > 5, "{every:?}");
    let (names, counts) = pages(&s, pods, 3);
    assert_eq!(names, every);
    // Unfiltered: each page but the last says how many follow it.
    let want: Vec<Option<u64>> = (1..=every.len().div_ceil(3))
        .map(|p| {
            every
                .len()
                .checked_sub(p * 3)
                .filter(|r| *r > 0)
                .map(|r| r as u64)
        })
        .collect();
    assert_eq!(counts, want);
    // A field selector is matched on each object: pages hold matches only, no count.
    let running = format!("{pods}?fieldSelector=status.phase%3DRunning");
    let matching = all(&running);
    assert!(!matching.is_empty() && matching.len() < every.len() + 1);
    let (names, counts) = pages(&s, &running, 2);
    assert_eq!(names, matching);
    assert!(counts.iter().all(Option::is_none), "{counts:?}");
    // A token past the last object is an empty page.
    let last = every.last().unwrap();
    let (code, body) = s.http(
        "GET",
        &format!("{pods}?limit=2&continue=default/{last}"),
        "",
        "",
    );
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"items\":[]"), "{body}");
}

#[test]
fn media_types_are_case_insensitive_and_names_the_storage_cannot_key_are_400() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let pods = "/api/v1/namespaces/default/pods";
    let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"upper"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}"#;
    let (code, body) = s.http("POST", pods, "APPLICATION/JSON", pod);
    assert_eq!(code, 201, "{body}");
    for (name, why) in [("..", "may not be '..'"), ("a%25b", "may not contain '%'")] {
        let (code, body) = s.http("GET", &format!("{pods}/{name}"), "", "");
        assert_eq!(code, 400, "{name}: {body}");
        assert!(
            body.contains("Name parameter invalid") && body.contains(why),
            "{body}"
        );
    }
}

#[test]
fn a_watch_from_before_the_kept_history_gets_410_instead_of_a_gap() {
    // The scenario brought the LWS up before serving: those pod writes were read by every
    // reader and dropped from the pods' watch log, although the apiserver's own 5-minute
    // compaction has not run. A watch from resourceVersion 1 cannot be served without a gap.
    let s = Server::start("scenarios/rollout.yaml", &[]);
    s.step("2m");
    let pods = "/api/v1/namespaces/default/pods";
    let (code, body) = s.http(
        "GET",
        &format!("{pods}?watch=true&resourceVersion=1&timeoutSeconds=1"),
        "",
        "",
    );
    assert_eq!(code, 200);
    assert!(
        body.contains("\"type\":\"ERROR\"") && body.contains("\"code\":410"),
        "{body}"
    );
    assert!(
        !body.contains("\"type\":\"ADDED\""),
        "no partial history before the 410: {body}"
    );
}

#[test]
fn json_patch_is_applied_to_the_stored_object_and_written_as_an_update() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    s.ok(&[
        "patch",
        "lws",
        "vllm",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/replicas","value":2},{"op":"add","path":"/metadata/labels","value":{"team":"a"}}]"#,
    ]);
    let got = s.jsonpath("lws", "vllm", "{.spec.replicas} {.metadata.labels.team}");
    assert_eq!(got, "2 a");
    // A failed `test` operation changes nothing: 422.
    let (ok, text) = s.kubectl(&[
        "patch",
        "lws",
        "vllm",
        "--type=json",
        "-p",
        r#"[{"op":"test","path":"/spec/replicas","value":7},{"op":"replace","path":"/spec/replicas","value":9}]"#,
    ]);
    assert!(!ok && text.contains("rejected our request"), "{text}");
    let lws = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets/vllm";
    let ct = "application/json-patch+json";
    // The result goes through the admission webhooks like any update.
    let bad = r#"[{"op":"replace","path":"/spec/leaderWorkerTemplate/size","value":0}]"#;
    let (code, body) = s.http("PATCH", lws, ct, bad);
    assert_eq!(code, 403, "{body}");
    assert!(body.contains("admission webhook"), "{body}");
    // On /scale, the operations apply to the Scale object.
    let scale = r#"[{"op":"replace","path":"/spec/replicas","value":3}]"#;
    let (code, body) = s.http("PATCH", &format!("{lws}/scale"), ct, scale);
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"replicas\":3"), "{body}");
    let (code, body) = s.http("PATCH", lws, ct, r#"{"op":"replace"}"#);
    assert_eq!(code, 400, "not a list of operations: {body}");
    assert_eq!(s.jsonpath("lws", "vllm", "{.spec.replicas}"), "3");
}

#[test]
fn dry_run_answers_like_the_write_and_changes_nothing() {
    let dir = temp_dir("dry-run");
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let rv = |s: &Server| s.jsonpath("lws", "vllm", "{.metadata.resourceVersion}");
    let before = rv(&s);
    let out = s.ok(&[
        "scale",
        "lws",
        "vllm",
        "--replicas",
        "6",
        "--dry-run=server",
    ]);
    assert!(out.contains("scaled (server dry run)"), "{out}");
    let v2 = std::fs::read_to_string(repo().join("scenarios/manifests/vllm-lws-v2.yaml")).unwrap();
    let v3 = dir.join("vllm-v3.yaml");
    std::fs::write(&v3, v2.replace("v0.6.0", "v0.6.1")).unwrap();
    let out = s.ok(&["apply", "-f", v3.to_str().unwrap(), "--dry-run=server"]);
    assert!(out.contains("(server dry run)"), "{out}");
    let out = s.ok(&[
        "apply",
        "--server-side",
        "-f",
        v3.to_str().unwrap(),
        "--dry-run=server",
    ]);
    assert!(out.contains("(server dry run)"), "{out}");
    // kubectl diff is a dry-run apply: exit 1 and the change, nothing written.
    let (ok, text) = s.kubectl(&["diff", "-f", v3.to_str().unwrap()]);
    assert!(
        !ok && text.contains("+          image: vllm/vllm-openai:v0.6.1"),
        "{text}"
    );
    // Admission still runs: an invalid change is refused as the real write would be.
    let (ok, text) = s.kubectl(&[
        "patch",
        "lws",
        "vllm",
        "--type=merge",
        "-p",
        r#"{"spec":{"leaderWorkerTemplate":{"size":0}}}"#,
        "--dry-run=server",
    ]);
    assert!(!ok && text.contains("denied the request"), "{text}");
    let pod_state = |s: &Server| {
        let path = "{.metadata.resourceVersion} {.metadata.deletionTimestamp}";
        s.jsonpath("pod", "vllm-1-1", path)
    };
    let pod_before = pod_state(&s);
    let out = s.ok(&[
        "delete",
        "pod",
        "vllm-1-1",
        "--dry-run=server",
        "--wait=false",
    ]);
    assert!(out.contains("(server dry run)"), "{out}");
    // A create answers with the object it would have made, and stores nothing.
    let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"probe"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}"#;
    let pods = "/api/v1/namespaces/default/pods";
    let (code, body) = s.http(
        "POST",
        &format!("{pods}?dryRun=All"),
        "application/json",
        pod,
    );
    assert_eq!(code, 201, "{body}");
    assert!(body.contains("\"uid\""), "{body}");
    assert_eq!(s.http("GET", &format!("{pods}/probe"), "", "").0, 404);
    // Each dry run's UID is fresh, and none is the one the real create then gets.
    let uid = |body: &str| {
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        v["metadata"]["uid"].as_str().unwrap().to_string()
    };
    let (_, again) = s.http(
        "POST",
        &format!("{pods}?dryRun=All"),
        "application/json",
        pod,
    );
    let dry_uids = [uid(&body), uid(&again)];
    assert_ne!(dry_uids[0], dry_uids[1]);
    let (code, body) = s.http(
        "POST",
        &format!("{pods}?dryRun=Some"),
        "application/json",
        pod,
    );
    assert_eq!(code, 422, "{body}");
    // Nothing was written: the LWS, the pod and every resourceVersion are as they were.
    assert_eq!(rv(&s), before);
    let spec = s.jsonpath(
        "lws",
        "vllm",
        "{.spec.replicas} {.spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].image}",
    );
    assert_eq!(spec, "4 vllm/vllm-openai:v0.6.0");
    assert_eq!(pod_state(&s), pod_before, "the pod is as it was");
    // And a real write after the dry runs works as ever.
    assert!(s
        .ok(&["scale", "lws", "vllm", "--replicas", "5"])
        .contains("scaled"));
    assert_ne!(rv(&s), before);
    let (code, real) = s.http("POST", pods, "application/json", pod);
    assert_eq!(code, 201, "{real}");
    assert!(!dry_uids.contains(&uid(&real)), "{real}");
}

#[test]
fn hostile_parameters_and_patches_are_refused_not_obeyed() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let pods = "/api/v1/namespaces/default/pods";
    // A timeout beyond what the clock can add is no timeout: the watch opens (and the server
    // lives on), where it once panicked adding the duration.
    let huge = format!("{pods}?watch=true&timeoutSeconds=9223372036854775807");
    let mut w = TcpStream::connect(&s.addr).expect("connect");
    let req = format!("GET {huge} HTTP/1.1\r\nHost: {}\r\n\r\n", s.addr);
    w.write_all(req.as_bytes()).unwrap();
    w.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut first = [0u8; 12];
    w.read_exact(&mut first).expect("the watch answers");
    assert_eq!(&first, b"HTTP/1.1 200");
    drop(w);
    let (code, body) = s.http(
        "GET",
        &format!("{pods}?watch=true&timeoutSeconds=x"),
        "",
        "",
    );
    assert_eq!(code, 400, "{body}");
    // Controls that would overflow virtual time or its speed are 400, not silently ignored.
    let (code, body) = s.http("POST", "/lws-sim/step?for=18446744073709551615ms", "", "");
    assert_eq!(code, 400, "{body}");
    // A grace period past the simulated horizon is refused (an lws-sim limit every scenario
    // is held to), so that a recorded session replays.
    let (code, body) = s.http(
        "DELETE",
        &format!("{pods}/vllm-0?gracePeriodSeconds=9223372036854775807"),
        "",
        "",
    );
    assert_eq!(code, 422, "{body}");
    assert!(body.contains("an lws-sim limit"), "{body}");
    let long_grace = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"slow"},"spec":{"terminationGracePeriodSeconds":9223372036854775807,"containers":[{"name":"c","image":"app"}]}}"#;
    let (code, body) = s.http("POST", pods, "application/json", long_grace);
    assert_eq!(code, 422, "{body}");
    // Past the simulated horizon (a year) the world would stop for good: refused too, and the
    // world still steps after.
    for past in ["/lws-sim/step?for=8761h", "/lws-sim/until?t=8761h"] {
        let (code, body) = s.http("POST", past, "", "");
        assert_eq!(code, 400, "{past}: {body}");
        assert!(body.contains("horizon"), "{body}");
    }
    s.step("1s");
    let (code, body) = s.http("POST", "/lws-sim/resume?speed=1e308", "", "");
    assert_eq!(code, 400, "{body}");
    let (code, _) = s.http("GET", "/lws-sim/step", "", "");
    assert_eq!(code, 405);
    // A client that shuts its write side once its request is sent still gets the answer.
    let mut half = TcpStream::connect(&s.addr).unwrap();
    half.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    half.write_all(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    half.shutdown(std::net::Shutdown::Write).unwrap();
    let mut out = String::new();
    let _ = half.read_to_string(&mut out);
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    let (code, _) = s.http("DELETE", "/api", "", "");
    assert_eq!(code, 405);
    // A JSON patch whose copies of copies would grow the object exponentially: 413, at once.
    let lws = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets/vllm";
    let big = "x".repeat(1024);
    let mut ops = vec![format!(
        r#"{{"op":"add","path":"/metadata/annotations","value":{{"a":"{big}"}}}}"#
    )];
    for i in 0..40 {
        ops.push(format!(
            r#"{{"op":"copy","from":"/metadata/annotations","path":"/metadata/annotations/c{i}"}}"#
        ));
    }
    let patch = format!("[{}]", ops.join(","));
    let (code, body) = s.http("PATCH", lws, "application/json-patch+json", &patch);
    assert_eq!(code, 413, "{body}");
    let too_many = format!(
        "[{}]",
        vec![r#"{"op":"test","path":"/kind","value":"LeaderWorkerSet"}"#; 10_001].join(",")
    );
    let (code, body) = s.http("PATCH", lws, "application/json-patch+json", &too_many);
    assert_eq!(code, 413, "{body}");
    // A body over kube-apiserver's 3 MiB (a pod of 100,000 containers held the server for
    // half a minute under the old 16 MiB): 413 before it is decoded.
    let big = format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"big"}},"spec":{{"containers":[{{"name":"c","image":"{}"}}]}}}}"#,
        "x".repeat(3 << 20)
    );
    let (code, body) = s.http(
        "POST",
        "/api/v1/namespaces/default/pods",
        "application/json",
        &big,
    );
    assert_eq!(code, 413, "{body}");
    // `metadata` that is not an object (it panicked the handler: a 500): a 400 decoding
    // error, by create, JSON patch and strategic merge patch alike.
    let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":"x","spec":{"containers":[{"name":"c","image":"i"}]}}"#;
    let (code, body) = s.http("POST", pods, "application/json", pod);
    assert_eq!(code, 400, "{body}");
    assert!(body.contains("metadata: invalid type: string"), "{body}");
    let replace = r#"[{"op":"replace","path":"/metadata","value":"x"}]"#;
    let (code, body) = s.http(
        "PATCH",
        &format!("{pods}/vllm-0"),
        "application/json-patch+json",
        replace,
    );
    assert_eq!(code, 400, "{body}");
    let (code, body) = s.http(
        "PATCH",
        &format!("{pods}/vllm-0"),
        "application/strategic-merge-patch+json",
        r#"{"metadata":{"namespace":5}}"#,
    );
    assert_eq!(code, 400, "{body}");
    // The server still answers.
    assert_eq!(s.jsonpath("lws", "vllm", "{.metadata.name}"), "vllm");
}

#[test]
fn health_checks_answer_ok() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    for path in ["/healthz", "/livez", "/readyz", "/readyz/ping"] {
        let (code, body) = s.http("GET", path, "", "");
        assert_eq!((code, body.as_str()), (200, "ok"), "{path}");
    }
    assert_eq!(s.ok(&["get", "--raw", "/readyz"]).trim(), "ok");
}

#[test]
fn kubectl_prints_why_a_write_is_invalid() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let (ok, text) = s.merge_patch(
        "lws",
        "vllm",
        r#"{"spec":{"rolloutStrategy":{"rollingUpdateConfiguration":{"maxUnavailable":"200%"}}}}"#,
    );
    assert!(!ok, "{text}");
    assert!(
        text.contains("Error from server (Forbidden): admission webhook \"vleaderworkerset.kb.io\" denied the request: spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable"),
        "the webhook's refusal and its reason are shown: {text}"
    );
    // The CRD schema's own check is the API server's 422, with its cause.
    let (ok, text) = s.merge_patch("lws", "vllm", r#"{"spec":{"startupPolicy":"Sometimes"}}"#);
    assert!(!ok, "{text}");
    assert!(
        text.contains(
            "The LeaderWorkerSet \"vllm\" is invalid: spec.startupPolicy: Unsupported value"
        ),
        "{text}"
    );
    assert!(!text.contains("admission webhook"), "{text}");
    // A pod's spec is immutable but for images (ValidatePodUpdate): kubectl set image works,
    // an edit of anything else is the API server's 422 naming what may change.
    s.ok(&["set", "image", "pod/vllm-0", "vllm-leader=vllm:v9"]);
    assert_eq!(
        s.jsonpath("pod", "vllm-0", "{.spec.containers[0].image}"),
        "vllm:v9"
    );
    // The kubelet restarts the container on the new image (restartCount 1, NotReady), and the
    // LWS's RecreateGroupOnPodRestart policy answers that restart by recreating the group: the
    // pod comes back from its StatefulSet's template, on the old image.
    let uid = s.jsonpath("pod", "vllm-0", "{.metadata.uid}");
    s.step("1s");
    let status = "{.status.containerStatuses[0].restartCount} {.status.containerStatuses[0].ready}";
    assert_eq!(s.jsonpath("pod", "vllm-0", status), "1 false");
    s.step("2m");
    assert_ne!(s.jsonpath("pod", "vllm-0", "{.metadata.uid}"), uid);
    let status = "{.spec.containers[0].image} {.status.containerStatuses[0].restartCount}";
    assert_eq!(
        s.jsonpath("pod", "vllm-0", status),
        "vllm/vllm-openai:v0.6.0 0"
    );
    let (ok, text) = s.merge_patch("pod", "vllm-0", r#"{"spec":{"restartPolicy":"Never"}}"#);
    assert!(!ok, "{text}");
    assert!(
        text.contains("The Pod \"vllm-0\" is invalid: spec: Forbidden: pod updates may not change fields other than"),
        "{text}"
    );
}

#[test]
fn a_selective_watch_sees_objects_start_and_stop_matching() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let pods = "/api/v1/namespaces/default/pods";
    let mut w = TcpStream::connect(&s.addr).expect("connect");
    let req = format!(
        "GET {pods}?watch=true&labelSelector=sel%3Dyes&timeoutSeconds=5 HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        s.addr
    );
    w.write_all(req.as_bytes()).unwrap();
    w.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let label = |v: &str| {
        let arg = if v == "-" {
            "sel-".to_string()
        } else {
            format!("sel={v}")
        };
        s.ok(&["label", "pod", "vllm-0", &arg, "--overwrite"]);
    };
    // Give the watch a moment to register before the writes.
    std::thread::sleep(Duration::from_millis(300));
    label("yes");
    label("no");
    label("yes");
    label("-");
    let mut out = String::new();
    let _ = w.read_to_string(&mut out);
    // The events' own types (the pods' conditions have a "type" too).
    let types: Vec<&str> = out
        .match_indices("\"type\":\"")
        .map(|(i, m)| {
            let rest = &out[i + m.len()..];
            &rest[..rest.find('"').unwrap_or(0)]
        })
        .filter(|t| ["ADDED", "MODIFIED", "DELETED"].contains(t))
        .collect();
    assert_eq!(types, ["ADDED", "DELETED", "ADDED", "DELETED"], "{out}");
    // The DELETED of an object that stopped matching carries its previous state (the cacher's
    // PrevObject), which still matched.
    let deleted = out
        .lines()
        .find(|l| l.contains(r#""type":"DELETED""#))
        .expect("a DELETED line");
    assert!(deleted.contains(r#""sel":"yes""#), "{deleted}");
}

#[test]
fn a_client_cannot_take_an_lws_past_the_simulators_limits() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    // 40,000 groups: past the 10,000-group limit. The real webhooks admit it (up to
    // 1,000,000 at v0.10.0); the simulator refuses it (422) instead of trying to run it.
    s.ok(&["scale", "lws", "vllm", "--replicas", "4"]);
    let (ok, text) = s.merge_patch("lws", "vllm", r#"{"spec":{"replicas":40000}}"#);
    assert!(!ok && text.contains("the simulator's limit"), "{text}");
    assert_eq!(s.jsonpath("lws", "vllm", "{.spec.replicas}"), "4");
}

#[test]
fn strategic_merge_patches_merge_lists_by_key() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let dir = temp_dir("strategic");
    let sts = |image: &str| {
        format!(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: two}}\nspec:\n  replicas: 0\n  serviceName: two\n  selector: {{matchLabels: {{app: two}}}}\n  template:\n    metadata: {{labels: {{app: two}}}}\n    spec:\n      containers:\n      - {{name: a, image: {image}, command: [sleep, '1']}}\n      - {{name: b, image: b1}}\n"
        )
    };
    let file = dir.join("sts.yaml");
    std::fs::write(&file, sts("a1")).unwrap();
    let f = file.to_str().unwrap();
    s.ok(&["apply", "-f", f]);
    // A second client-side apply sends a strategic merge patch naming container a only by
    // its changed image: b and a's command stay.
    std::fs::write(&file, sts("a2")).unwrap();
    s.ok(&["apply", "-f", f]);
    let got = s.jsonpath(
        "sts",
        "two",
        "{.spec.template.spec.containers[*].name} {.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].command[0]}",
    );
    assert_eq!(got, "a b a2 sleep");
    s.ok(&["set", "image", "sts/two", "b=b2"]);
    let got = s.jsonpath("sts", "two", "{.spec.template.spec.containers[*].image}");
    assert_eq!(got, "a2 b2");
}

#[test]
fn kubectl_drain_evicts_through_the_eviction_api_and_honours_budgets() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let dir = temp_dir("drain");
    let pdb = write_file(
        &dir,
        "pdb.yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: leaders}\nspec:\n  maxUnavailable: 0\n  selector: {matchLabels: {role: leader}}\n",
    );
    s.ok(&["apply", "-f", &pdb]);
    // kubectl's columns for budgets and revisions (printers.go).
    let table = s.ok(&["get", "pdb", "leaders"]);
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap()
        .split("  ")
        .filter(|c| !c.is_empty())
        .map(str::trim)
        .collect();
    assert_eq!(
        header,
        [
            "NAME",
            "MIN AVAILABLE",
            "MAX UNAVAILABLE",
            "ALLOWED DISRUPTIONS",
            "AGE"
        ]
    );
    assert!(table.contains("N/A"), "{table}");
    let revisions = s.ok(&["get", "controllerrevisions"]);
    assert!(revisions.contains("statefulset.apps/vllm"), "{revisions}");
    let node = s.jsonpath("pod", "vllm-0", "{.spec.nodeName}");
    let (ok, text) = s.kubectl(&[
        "drain",
        &node,
        "--ignore-daemonsets",
        "--timeout=3s",
        "--pod-selector=role=leader",
    ]);
    assert!(!ok, "{text}");
    assert!(text.contains("disruption budget"), "{text}");
    assert_eq!(s.jsonpath("pod", "vllm-0", "{.metadata.name}"), "vllm-0");
    // The 429 names the budget in a DisruptionBudget cause, and no object (`NewTooManyRequests`).
    let body = r#"{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"vllm-0","namespace":"default"}}"#;
    let eviction = "/api/v1/namespaces/default/pods/vllm-0/eviction";
    let (code, reply) = s.http("POST", eviction, "application/json", body);
    assert_eq!(code, 429, "{reply}");
    let v: serde_json::Value = serde_json::from_str(&reply).unwrap();
    let cause = &v["details"]["causes"][0];
    assert_eq!(cause["reason"], "DisruptionBudget", "{reply}");
    let says = cause["message"].as_str().unwrap_or_default();
    assert!(
        says.starts_with("The disruption budget leaders needs "),
        "{reply}"
    );
    assert!(v["details"].get("name").is_none(), "{reply}");
    // Without a budget in the way the eviction is a delete: 201.
    s.ok(&["delete", "pdb", "leaders"]);
    let (code, reply) = s.http(
        "POST",
        "/api/v1/namespaces/default/pods/vllm-0/eviction",
        "application/json",
        body,
    );
    assert_eq!(code, 201, "{reply}");
    let ts = s.jsonpath("pod", "vllm-0", "{.metadata.deletionTimestamp}");
    assert!(!ts.is_empty(), "the pod is terminating");
}

#[test]
fn names_are_validated_and_paths_percent_decoded() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let pods = "/api/v1/namespaces/default/pods";
    let pod = |name: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}"}},"spec":{{"containers":[{{"name":"c","image":"x"}}]}}}}"#
        )
    };
    for bad in ["UPPER", "a/b", "h\u{e9}llo"] {
        let (code, body) = s.http("POST", pods, "application/json", &pod(bad));
        assert_eq!(code, 422, "{bad}: {body}");
        assert!(body.contains("RFC 1123 subdomain"), "{body}");
    }
    let (code, body) = s.http("POST", pods, "application/json", &pod("fine.name"));
    assert_eq!(code, 201, "{body}");
    // `%2E` is '.': the segment is decoded before the name is looked up.
    let (code, body) = s.http("GET", &format!("{pods}/fine%2Ename"), "", "");
    assert_eq!(code, 200, "{body}");
}

#[test]
fn strict_field_validation_refuses_unknown_fields_of_built_in_kinds() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let dir = temp_dir("strict");
    let f = &write_file(
        &dir,
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: typo}\nspec:\n  containers:\n  - {name: c, image: app, imagee: x}\n",
    );
    // kubectl validates strictly by default: the typo is an error, not silently dropped.
    let (ok, text) = s.kubectl(&["create", "-f", f]);
    assert!(!ok, "{text}");
    assert!(
        text.contains(r#"unknown field "spec.containers[0].imagee""#),
        "{text}"
    );
    let (ok, text) = s.kubectl(&["get", "pod", "typo"]);
    assert!(!ok && text.contains("not found"), "{text}");
    // --validate=false (fieldValidation=Ignore) drops it, as a real server does.
    s.ok(&["create", "-f", f, "--validate=false"]);
    assert_eq!(s.jsonpath("pod", "typo", "{.spec.containers[0].name}"), "c");
}

/// A protobuf length-delimited field of small number and length, as text (every byte is
/// below 0x80, so `Server::http` can send it).
fn pb(number: u8, bytes: &str) -> String {
    assert!(number < 16 && bytes.len() < 128);
    format!(
        "{}{}{bytes}",
        char::from(number << 3 | 2),
        char::from(bytes.len() as u8)
    )
}

fn pb_body(api_version: &str, kind: &str, object: &str) -> String {
    let type_meta = pb(1, &(pb(1, api_version) + &pb(2, kind)));
    format!("k8s\0{type_meta}{}", pb(2, object))
}

#[test]
fn typed_clients_protobuf_bodies_are_read_as_their_json() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let pb_type = "application/vnd.kubernetes.protobuf";
    // kubectl's generators from 1.32 on send these (any kubectl works here).
    s.ok(&["create", "service", "clusterip", "front", "--tcp=80:8080"]);
    assert_eq!(
        s.jsonpath("svc", "front", "{.spec.ports[0].targetPort}"),
        "8080"
    );
    s.ok(&[
        "create",
        "pdb",
        "leaders",
        "--selector=role=leader",
        "--min-available=50%",
    ]);
    assert_eq!(s.jsonpath("pdb", "leaders", "{.spec.minAvailable}"), "50%");
    // A Namespace with a label, by hand: metadata {name, labels {team: a}}.
    let meta = pb(1, "team-p")
        + &char::from(11 << 3 | 2).to_string()
        + &char::from(9u8).to_string()
        + &pb(1, "team")
        + &pb(2, "a");
    let ns = pb_body("v1", "Namespace", &pb(1, &meta));
    let (code, body) = s.http("POST", "/api/v1/namespaces", pb_type, &ns);
    assert_eq!(code, 201, "{body}");
    assert_eq!(s.jsonpath("ns", "team-p", "{.metadata.labels.team}"), "a");
    // Cut short: a 400 naming the decoding; a kind this server does not read: its 415 where
    // the resource is served, the 404 of a resource that is not.
    let (code, body) = s.http("POST", "/api/v1/namespaces", pb_type, &ns[..ns.len() - 3]);
    assert_eq!(code, 400, "{body}");
    assert!(
        body.contains("error decoding the request body as protobuf"),
        "{body}"
    );
    let map = pb_body("v1", "ConfigMap", &pb(1, &pb(1, "c")));
    let (code, body) = s.http("POST", "/api/v1/namespaces/default/pods", pb_type, &map);
    assert_eq!(code, 415, "{body}");
    assert!(
        body.contains("does not decode \\\"ConfigMap\\\" (v1)"),
        "{body}"
    );
    let (code, _) = s.http(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        pb_type,
        &map,
    );
    assert_eq!(code, 404);
}

#[test]
fn namespaces_are_listed_and_created() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let out = s.ok(&["get", "namespaces"]);
    assert!(
        out.contains("default") && out.contains("kube-system"),
        "{out}"
    );
    assert!(out.contains("Active"), "{out}");
    // `kubectl create namespace` (protobuf from kubectl 1.32 on, JSON before).
    s.ok(&["create", "namespace", "team-c"]);
    assert_eq!(s.jsonpath("ns", "team-c", "{.status.phase}"), "Active");
    let dir = temp_dir("ns");
    let file = dir.join("ns.yaml");
    let ns = |name: &str| format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n");
    std::fs::write(&file, ns("team-a")).unwrap();
    let f = file.to_str().unwrap();
    s.ok(&["create", "-f", f]);
    assert_eq!(s.jsonpath("ns", "team-a", "{.status.phase}"), "Active");
    let (ok, text) = s.kubectl(&["create", "-f", f]);
    assert!(!ok && text.contains("already exists"), "{text}");
    std::fs::write(&file, ns("bad.ns")).unwrap();
    let (ok, text) = s.kubectl(&["create", "-f", f]);
    assert!(!ok && text.contains("RFC 1123 label"), "{text}");
    // A pod in the new namespace lists there.
    let pod = write_file(
        &dir,
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team-a}\nspec:\n  containers: [{name: c, image: x}]\n",
    );
    s.ok(&["create", "-f", &pod]);
    let out = s.ok(&["get", "pods", "-n", "team-a", "-o", "name"]);
    assert_eq!(out.trim(), "pod/p");
    // A body that is not a Namespace, or a patch that would break or rename one: 400, and
    // nothing created or changed.
    let namespaces = "/api/v1/namespaces";
    let pod_kind = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"team-b"}}"#;
    let (code, body) = s.http("POST", namespaces, "application/json", pod_kind);
    assert_eq!(code, 400, "{body}");
    let merge = "application/merge-patch+json";
    for patch in [
        r#"{"metadata":{"labels":"x"}}"#,
        r#"{"metadata":{"name":"other"}}"#,
    ] {
        let (code, body) = s.http("PATCH", &format!("{namespaces}/team-a"), merge, patch);
        assert_eq!(code, 400, "{patch}: {body}");
    }
    let (ok, _) = s.kubectl(&["get", "ns", "team-b"]);
    assert!(!ok, "team-b was created");
    // Each patch type is its own (a JSON patch is a list of operations); a media type that is
    // no patch type is a 415; labels and annotations are validated as every object's are.
    let team_a = format!("{namespaces}/team-a");
    let add = r#"[{"op":"add","path":"/metadata/labels","value":{"tier":"gold"}}]"#;
    let (code, body) = s.http("PATCH", &team_a, "application/json-patch+json", add);
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        s.jsonpath("ns", "team-a", "{.metadata.labels.tier}"),
        "gold"
    );
    let (code, body) = s.http("PATCH", &team_a, "application/bogus", "{}");
    assert_eq!(code, 415, "{body}");
    let bad = r#"{"metadata":{"labels":{"bad key!":"v"}}}"#;
    let (code, body) = s.http("PATCH", &team_a, merge, bad);
    assert_eq!(code, 422, "{body}");
    assert!(
        body.contains("metadata.labels: Invalid value: \\\"bad key!\\\""),
        "{body}"
    );
    // Server-side apply creates a namespace that does not exist yet.
    let apply = "application/apply-patch+yaml";
    let team_e = r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-e"}}"#;
    let at = format!("{namespaces}/team-e?fieldManager=me");
    let (code, body) = s.http("PATCH", &at, apply, team_e);
    assert_eq!(code, 201, "{body}");
    assert_eq!(s.jsonpath("ns", "team-e", "{.status.phase}"), "Active");
    let unnamed =
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-d","labels":{"":"x"}}}"#;
    let (code, body) = s.http("POST", namespaces, "application/json", unnamed);
    assert_eq!(code, 422, "{body}");
}

#[test]
fn a_watch_without_a_selector_sees_deletions() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let pods = "/api/v1/namespaces/default/pods";
    let mut w = TcpStream::connect(&s.addr).expect("connect");
    let req = format!(
        "GET {pods}?watch=true&resourceVersion={}&timeoutSeconds=3 HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        s.jsonpath("pod", "vllm-0", "{.metadata.resourceVersion}"),
        s.addr
    );
    w.write_all(req.as_bytes()).unwrap();
    w.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    s.ok(&[
        "delete",
        "pod",
        "vllm-0",
        "--grace-period=0",
        "--force",
        "--wait=false",
    ]);
    let mut out = String::new();
    let _ = w.read_to_string(&mut out);
    assert!(out.contains(r#""type":"DELETED""#), "{out}");
}

#[test]
fn reapplies_of_atomic_lists_namespaces_and_dry_run_drains_change_nothing_twice() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let dir = temp_dir("reapply");
    // volumeClaimTemplates has no merge key: kubectl re-sends the list, which replaces it.
    let sts = |image: &str| {
        format!("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: db}}\nspec:\n  replicas: 0\n  serviceName: db\n  selector: {{matchLabels: {{app: db}}}}\n  template:\n    metadata: {{labels: {{app: db}}}}\n    spec:\n      containers: [{{name: c, image: {image}}}]\n  volumeClaimTemplates:\n  - metadata: {{name: data}}\n    spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}}}\n")
    };
    for image in ["a1", "a2", "a3"] {
        s.ok(&["apply", "-f", &write_file(&dir, "sts.yaml", &sts(image))]);
    }
    let names = s.jsonpath("sts", "db", "{.spec.volumeClaimTemplates[*].metadata.name}");
    assert_eq!(names, "data");
    // A Namespace applied twice, its labels kept.
    let ns = write_file(
        &dir,
        "ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-b, labels: {env: prod}}\n",
    );
    s.ok(&["apply", "-f", &ns]);
    s.ok(&["apply", "-f", &ns]);
    assert_eq!(s.jsonpath("ns", "team-b", "{.metadata.labels.env}"), "prod");
    s.ok(&["label", "ns", "default", "x=y"]);
    assert_eq!(s.jsonpath("ns", "default", "{.metadata.labels.x}"), "y");
    // A server-side dry-run drain evicts nothing.
    let node = s.jsonpath("pod", "vllm-0", "{.spec.nodeName}");
    s.ok(&[
        "drain",
        &node,
        "--dry-run=server",
        "--ignore-daemonsets",
        "--timeout=5s",
    ]);
    let ts = s.jsonpath("pod", "vllm-0", "{.metadata.deletionTimestamp}");
    assert!(ts.is_empty(), "dry run evicted vllm-0: {ts}");
    // A strategic merge patch of a custom resource is 415, as the apiserver answers.
    let lws = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets/vllm";
    let (code, body) = s.http(
        "PATCH",
        lws,
        "application/strategic-merge-patch+json",
        r#"{"metadata":{"labels":{"a":"b"}}}"#,
    );
    assert_eq!(code, 415, "{body}");
}

#[test]
fn a_selective_watch_resumed_from_a_list_sees_what_changed_in_between() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let pods = "/api/v1/namespaces/default/pods";
    // List the leaders, as an informer does, then relabel one before the watch starts.
    let (code, body) = s.http(
        "GET",
        &format!("{pods}?labelSelector=role%3Dleader"),
        "",
        "",
    );
    assert_eq!(code, 200, "{body}");
    let list: serde_json::Value = serde_json::from_str(&body).expect("a JSON list");
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("a list resourceVersion")
        .to_string();
    s.ok(&["label", "pod", "vllm-0", "role=gone", "--overwrite"]);
    let (code, out) = s.http(
        "GET",
        &format!(
            "{pods}?watch=true&labelSelector=role%3Dleader&resourceVersion={rv}&timeoutSeconds=1"
        ),
        "",
        "",
    );
    assert_eq!(code, 200);
    assert!(out.contains(r#""type":"DELETED""#), "{out}");
    assert!(out.contains(r#""name":"vllm-0""#), "{out}");
}

/// kubectl `--sort-by` asks for `includeObject=Object` and sorts on the rows' objects; with
/// metadata only it printed "No resources found". `kubectl apply -f` of a `List` (the output of
/// `kubectl get -o yaml`) fetches `/openapi/v2` to validate it on the client; a 404 stopped it.
#[test]
fn sort_by_and_applying_a_list_work_with_kubectl() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let names = s.ok(&[
        "get",
        "pods",
        "--sort-by=.spec.nodeName",
        "-o",
        "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName",
        "--no-headers",
    ]);
    let nodes: Vec<&str> = names
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert!(nodes.len() >= 8, "{names}");
    let mut sorted = nodes.clone();
    sorted.sort();
    assert_eq!(nodes, sorted, "{names}");
    let events = s.ok(&["get", "events", "--sort-by=.lastTimestamp"]);
    assert!(!events.contains("No resources found"), "{events}");
    // A backup taken with kubectl, applied back as a List.
    let backup = s.ok(&["get", "lws", "-o", "yaml"]);
    assert!(backup.contains("kind: List"), "{backup}");
    let dir = temp_dir("list");
    let path = write_file(&dir, "backup.yaml", &backup);
    let out = s.ok(&["apply", "-f", &path]);
    assert!(out.contains("leaderworkerset.x-k8s.io/vllm"), "{out}");
}

/// A create in a namespace that does not exist is 404 (NamespaceLifecycle); one a client
/// created, or one the scenario's objects live in, takes it, and stays after its last object.
#[test]
fn creates_need_an_existing_namespace() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let dir = temp_dir("ns404");
    let svc =
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n";
    let path = write_file(&dir, "svc.yaml", svc);
    let (ok, text) = s.kubectl(&["apply", "-f", &path, "-n", "team-c"]);
    assert!(
        !ok && text.contains("namespaces \"team-c\" not found"),
        "{text}"
    );
    let (ok, text) = s.kubectl(&["apply", "--server-side", "-f", &path, "-n", "team-c"]);
    assert!(
        !ok && text.contains("namespaces \"team-c\" not found"),
        "{text}"
    );
    let ns = write_file(
        &dir,
        "ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-c\n",
    );
    s.ok(&["apply", "-f", &ns]);
    s.ok(&["apply", "-f", &path, "-n", "team-c"]);
    // The scenario's own namespace stays after its last object of a kind is gone.
    s.ok(&["apply", "-f", &path]);
    s.ok(&["delete", "-f", &path]);
    s.ok(&["apply", "-f", &path]);
}

/// Errors name the resource as the API server does (`pods "x" not found`,
/// `leaderworkersets.leaderworkerset.x-k8s.io "x" already exists`), not the Kind.
#[test]
fn errors_name_the_resource_as_kubectl_shows_it() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let (ok, text) = s.kubectl(&["get", "pod", "nope"]);
    assert!(!ok && text.contains("pods \"nope\" not found"), "{text}");
    let (ok, text) = s.kubectl(&["get", "sts", "nope"]);
    assert!(
        !ok && text.contains("statefulsets.apps \"nope\" not found"),
        "{text}"
    );
    let (ok, text) = s.kubectl(&["get", "lws", "nope"]);
    assert!(
        !ok && text.contains("leaderworkersets.leaderworkerset.x-k8s.io \"nope\" not found"),
        "{text}"
    );
    let lws = s.ok(&["get", "lws", "vllm", "-o", "json"]);
    let dir = temp_dir("names");
    let path = write_file(&dir, "lws.json", &lws);
    let (ok, text) = s.kubectl(&["create", "-f", &path]);
    assert!(
        !ok && text.contains("leaderworkersets.leaderworkerset.x-k8s.io \"vllm\" already exists"),
        "{text}"
    );
}

/// An update that is not an apply (`kubectl scale`, `kubectl patch`) takes over the fields it
/// changed: the applier re-applying its old value conflicts (the HPA-vs-GitOps case) instead of
/// silently reverting the scale.
#[test]
fn an_update_takes_over_the_fields_it_changed_from_an_applier() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let dir = temp_dir("owner");
    let lws = s.ok(&["get", "lws", "vllm", "-o", "json"]);
    let mut v: serde_json::Value = serde_json::from_str(&lws).unwrap();
    v["metadata"] = serde_json::json!({"name": "vllm", "namespace": "default"});
    v.as_object_mut().unwrap().remove("status");
    v["spec"]["replicas"] = serde_json::json!(3);
    let path = write_file(&dir, "lws.json", &v.to_string());
    let apply = [
        "apply",
        "--server-side",
        "--field-manager=gitops",
        "-f",
        &path,
    ];
    s.ok(&apply);
    s.ok(&["scale", "lws", "vllm", "--replicas=5"]);
    let (ok, text) = s.kubectl(&apply);
    assert!(!ok && text.contains("conflict"), "{text}");
    assert!(text.contains("spec.replicas"), "{text}");
    assert_eq!(s.jsonpath("lws", "vllm", "{.spec.replicas}"), "5");
    // A merge patch takes a field over the same way; forcing the apply takes it back.
    s.ok(&[
        "patch",
        "lws",
        "vllm",
        "--type=merge",
        "-p",
        r#"{"metadata":{"labels":{"team":"x"}}}"#,
    ]);
    let mut forced = apply.to_vec();
    forced.push("--force-conflicts");
    s.ok(&forced);
    assert_eq!(s.jsonpath("lws", "vllm", "{.spec.replicas}"), "3");
    // Untouched fields stayed the applier's: applying them again is no conflict.
    s.ok(&apply);
}

#[test]
fn kubectl_applies_a_disaggregated_set_and_scales_its_role_scaler() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let manifest = repo().join("scenarios/conformance/manifests/ds-test-hpa.yaml");
    s.ok(&["apply", "-f", manifest.to_str().unwrap()]);
    s.step("2m");
    // The controller made the External role's scaler; its printer columns come from the CRD.
    let table = s.ok(&["get", "dsrs"]);
    assert!(
        table.contains("DESIRED") && table.contains("CURRENT"),
        "{table}"
    );
    assert!(table.contains("test-hpa-prefill"), "{table}");
    // `kubectl scale` writes the scaler's /scale; the prefill LWS follows.
    s.ok(&[
        "scale",
        "disaggregatedsetrolescaler/test-hpa-prefill",
        "--replicas=2",
    ]);
    s.step("2m");
    let replicas = s.ok(&[
        "get",
        "lws",
        "-l",
        "disaggregatedset.x-k8s.io/role=prefill",
        "-o",
        "jsonpath={.items[*].spec.replicas}",
    ]);
    assert_eq!(replicas.trim(), "2");
    let sets = s.ok(&["get", "disaggregatedsets"]);
    assert!(sets.contains("test-hpa"), "{sets}");
    // The webhook refuses a partition, and kubectl shows why.
    let dir = temp_dir("ds-partition");
    let bad = write_file(
        &dir,
        "bad.yaml",
        &std::fs::read_to_string(&manifest)
            .unwrap()
            .replace("name: test-hpa\n", "name: test-bad\n")
            .replace(
                "      replicas: 1\n",
                "      replicas: 1\n      rolloutStrategy: {rollingUpdateConfiguration: {partition: 1}}\n",
            ),
    );
    let (ok, text) = s.kubectl(&["apply", "-f", &bad]);
    assert!(!ok, "{text}");
    assert!(text.contains("partition is not supported"), "{text}");
}

#[test]
fn a_release_without_the_disaggregated_set_crds_does_not_serve_them() {
    let s = Server::start("scenarios/rollout.yaml", &["--reconciler", "v0.4.1"]);
    let resources = s.ok(&["api-resources"]);
    assert!(resources.contains("leaderworkersets"), "{resources}");
    assert!(!resources.contains("disaggregatedsets"), "{resources}");
    let (ok, text) = s.kubectl(&["get", "disaggregatedsets"]);
    assert!(!ok, "{text}");
    assert!(text.contains("doesn't have a resource type"), "{text}");
    let (code, _) = s.http(
        "GET",
        "/apis/disaggregatedset.x-k8s.io/v1/namespaces/default/disaggregatedsets",
        "",
        "",
    );
    assert_eq!(code, 404);
}

/// A merge patch rewrote a LeaderWorkerSet's stored `apiVersion` and `kind` (kubectl could no
/// longer read it); a `DeleteOptions` body field of the wrong type was dropped and the delete
/// went ahead. Both are refused now, and nothing changes.
#[test]
fn a_patch_cannot_change_the_kind_and_a_mistyped_delete_body_deletes_nothing() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let lws = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets/vllm";
    for patch in [r#"{"apiVersion":"nothing"}"#, r#"{"kind":"Pod"}"#] {
        let (code, body) = s.http("PATCH", lws, "application/merge-patch+json", patch);
        assert_eq!(code, 422, "{patch}: {body}");
    }
    assert_eq!(s.jsonpath("lws", "vllm", "{.kind}"), "LeaderWorkerSet");
    let pod = "/api/v1/namespaces/default/pods/vllm-0";
    for body in [
        r#"{"dryRun":"All"}"#,
        r#"{"gracePeriodSeconds":"abc"}"#,
        r#"{"preconditions":{"resourceVersion":1}}"#,
        r#"{"kind":"Pod"}"#,
        "[1]",
    ] {
        let (code, reply) = s.http("DELETE", pod, "application/json", body);
        assert_eq!(code, 400, "{body}: {reply}");
    }
    assert_eq!(
        s.jsonpath("pod", "vllm-0", "{.metadata.deletionTimestamp}"),
        ""
    );
    // A create's body is JSON or YAML by its Content-Type; another media type is a 415.
    let pods = "/api/v1/namespaces/default/pods";
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: c, image: app}]\n";
    let (code, body) = s.http("POST", pods, "text/plain", yaml);
    assert_eq!(code, 415, "{body}");
    let (code, body) = s.http("POST", pods, "application/yaml", yaml);
    assert_eq!(code, 201, "{body}");
    // Query parameters are decoded and validated, not ignored; a boolean is false only when
    // absent, `0` or `false` (so these lists are lists, not watches).
    let long_manager = format!("?fieldManager={}", "m".repeat(129));
    for (query, want) in [
        ("?limit=abc", 400),
        ("?watch=0", 200),
        ("?watch=FALSE", 200),
        // A read has no field manager: not decoded, so not refused.
        (long_manager.as_str(), 200),
    ] {
        let (code, body) = s.http("GET", &format!("{pods}{query}"), "", "");
        assert_eq!(code, want, "{query}: {body}");
    }
    // A write's options: its manager and field validation are validated (422), a list's
    // `limit` is not one of them (ignored).
    let bogus = "?fieldValidation=Bogus";
    for (query, want) in [
        (long_manager.as_str(), 422),
        (bogus, 422),
        ("?limit=x", 409),
    ] {
        let (code, body) = s.http("POST", &format!("{pods}{query}"), "application/yaml", yaml);
        assert_eq!(code, want, "{query}: {body}");
    }
    let (code, body) = s.http(
        "DELETE",
        &format!("{pods}/web?propagationPolicy=Bogus"),
        "",
        "",
    );
    assert_eq!(code, 422, "{body}");
    assert!(body.contains("Unsupported value"), "{body}");
    let (code, body) = s.http(
        "PATCH",
        &format!("{lws}?force=true"),
        "application/merge-patch+json",
        "{}",
    );
    assert_eq!(code, 422, "{body}");
}

#[test]
fn a_write_names_the_object_of_its_url_and_keeps_its_uid() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let pods = "/api/v1/namespaces/default/pods";
    let reply = |r: (u16, String), code: u16, text: &str| {
        assert_eq!(r.0, code, "{}", r.1);
        assert!(r.1.contains(text), "{}", r.1);
    };
    // kubernetes eviction.go `Create`: the Eviction must name the URL's pod.
    let nameless =
        r#"{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"namespace":"default"}}"#;
    let evict = format!("{pods}/vllm-0/eviction");
    reply(
        s.http("POST", &evict, "application/json", nameless),
        400,
        "name in URL does not match name in Eviction object",
    );
    // The body is decoded as an Eviction: another kind or group is a 400, and nothing is
    // evicted.
    let set = r#"{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"vllm-0"}}"#;
    reply(
        s.http("POST", &evict, "application/json", set),
        400,
        "the kind in the data (StatefulSet) does not match the expected kind (Eviction)",
    );
    let v2 = r#"{"apiVersion":"policy/v2","kind":"Eviction","metadata":{"name":"vllm-0"}}"#;
    reply(
        s.http("POST", &evict, "application/json", v2),
        400,
        "the API version in the data (policy/v2) does not match",
    );
    reply(
        s.http("GET", &format!("{pods}/vllm-0"), "", ""),
        200,
        "vllm-0",
    );
    // handlers `checkName`: a PUT of a Scale, or a merge patch renaming the object.
    let sts = "/apis/apps/v1/namespaces/default/statefulsets/vllm/scale";
    let scale = r#"{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"other","namespace":"default"},"spec":{"replicas":3}}"#;
    reply(
        s.http("PUT", sts, "application/json", scale),
        400,
        "the name of the object (other) does not match the name on the URL (vllm)",
    );
    let lws = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets/vllm";
    reply(
        s.http(
            "PATCH",
            lws,
            "application/merge-patch+json",
            r#"{"metadata":{"name":"x"}}"#,
        ),
        400,
        "the name of the object (x) does not match the name on the URL (vllm)",
    );
    // A UID in an update's body is a precondition; a patch may not change it.
    let (code, pod) = s.http("GET", &format!("{pods}/vllm-0"), "", "");
    assert_eq!(code, 200, "{pod}");
    let mut pod: serde_json::Value = serde_json::from_str(&pod).unwrap();
    pod["metadata"]["uid"] = "not-the-uid".into();
    reply(
        s.http(
            "PUT",
            &format!("{pods}/vllm-0"),
            "application/json",
            &pod.to_string(),
        ),
        409,
        "Precondition failed: UID in precondition: not-the-uid",
    );
    reply(
        s.http(
            "PATCH",
            &format!("{pods}/vllm-0"),
            "application/merge-patch+json",
            r#"{"metadata":{"uid":"x"}}"#,
        ),
        422,
        "field is immutable",
    );
    assert_eq!(s.jsonpath("lws", "vllm", "{.spec.replicas}"), "4");
}

#[test]
fn a_list_s_resource_version_match_is_validated_and_answered() {
    // apimachinery ValidateListOptions: 422 naming resourceVersionMatch.
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let pods = "/api/v1/namespaces/default/pods";
    let get = |q: &str| s.http("GET", &format!("{pods}?{q}"), "", "");
    let expect = |r: (u16, String), code: u16, text: &str| {
        assert_eq!(r.0, code, "{}", r.1);
        assert!(r.1.contains(text), "{}", r.1);
    };
    expect(
        get("resourceVersionMatch=NotOlderThan"),
        422,
        "resourceVersionMatch is forbidden unless resourceVersion is provided",
    );
    expect(
        get("resourceVersionMatch=Sometimes&resourceVersion=1"),
        422,
        "Unsupported value: \\\"Sometimes\\\"",
    );
    expect(
        get("resourceVersionMatch=Exact&resourceVersion=0"),
        422,
        "forbidden for resourceVersion",
    );
    // What a reflector or kube-rs sends: answered from the current state.
    expect(
        get("resourceVersionMatch=NotOlderThan&resourceVersion=0"),
        200,
        "\"kind\":\"PodList\"",
    );
    // A version the server has not reached, and an exact one it no longer has.
    expect(
        get("resourceVersionMatch=NotOlderThan&resourceVersion=99999999"),
        504,
        "Too large resource version",
    );
    expect(
        get("resourceVersionMatch=Exact&resourceVersion=1"),
        410,
        "too old resource version",
    );
    // Any resourceVersion given is parsed, with or without a match (it was ignored without).
    expect(get("resourceVersion=abc"), 400, "invalid resourceVersion");
}

#[test]
fn a_half_sent_request_times_out_and_cannot_hold_the_server_at_shutdown() {
    let mut s = Server::start("scenarios/rollout.yaml", &["--request-timeout", "1s"]);
    // Headers that never end, and a body that stops short of its Content-Length.
    let mut headers = TcpStream::connect(&s.addr).expect("connect");
    headers
        .write_all(b"GET /api/v1/pods HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let mut body = TcpStream::connect(&s.addr).expect("connect");
    body.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    body.write_all(
        b"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":",
    )
    .unwrap();
    let mut answer = [0u8; 4096];
    let n = body
        .read(&mut answer)
        .expect("an answer before the read timeout");
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 504"), "{answer}");
    assert!(answer.contains("\"reason\":\"Timeout\""), "{answer}");
    // Others are served meanwhile, and a shutdown ends the process although both
    // connections are still open.
    let (code, _) = s.http("GET", "/version", "", "");
    assert_eq!(code, 200);
    let status = shut_down(&mut s);
    assert!(status.success(), "{status}");
    drop(headers);
}

/// `POST /lws-sim/shutdown`, then the process's exit status (within a minute).
fn shut_down(s: &mut Server) -> std::process::ExitStatus {
    let (code, text) = s.http("POST", "/lws-sim/shutdown", "", "");
    assert_eq!(code, 200, "{text}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = s.child.try_wait().expect("wait") {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "the server still runs a minute after its shutdown"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_session_that_broke_an_invariant_exits_1_as_run_does() {
    // v0.3.0 breaks the plain rollout (B01); `run` exits 1 for it, and so does `serve` once
    // shut down (it exited 0 whatever the session saw).
    let mut s = Server::start("scenarios/rollout.yaml", &["--reconciler", "v0.3.0"]);
    let (code, text) = s.http("POST", "/lws-sim/until?t=30m", "", "");
    assert_eq!(code, 200, "{text}");
    let (_, status) = s.http("GET", "/lws-sim/status", "", "");
    assert!(status.contains("groupConsistency"), "{status}");
    assert_eq!(shut_down(&mut s).code(), Some(1));
}

#[test]
fn a_bad_request_timeout_is_a_usage_error() {
    for bad in ["0s", "500ms", "2h", "soon"] {
        let out = Command::new(BIN)
            .args(["serve", "scenarios/rollout.yaml", "--request-timeout", bad])
            .current_dir(repo())
            .output()
            .expect("lws-sim runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains("--request-timeout"), "{bad}: {err}");
    }
}

#[test]
fn kubectl_auth_sees_an_allow_all_anonymous_server() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    assert_eq!(s.ok(&["auth", "can-i", "create", "pods"]).trim(), "yes");
    assert_eq!(
        s.ok(&["auth", "can-i", "delete", "leaderworkersets", "-A"])
            .trim(),
        "yes"
    );
    let rules = s.ok(&["auth", "can-i", "--list"]);
    assert!(rules.contains("*.*"), "{rules}");
    let who = s.ok(&[
        "auth",
        "whoami",
        "-o",
        "jsonpath={.status.userInfo.username}",
    ]);
    assert_eq!(who.trim(), "system:anonymous");
    let resources = s.ok(&["api-resources", "--api-group", "authorization.k8s.io"]);
    assert!(
        resources.contains("selfsubjectaccessreviews"),
        "{resources}"
    );
    // A review is created, never stored: a GET of the collection is refused.
    let path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    assert_eq!(s.http("GET", path, "", "").0, 405);
    let (code, body) = s.http("POST", path, "application/json", r#"{"spec":{}}"#);
    assert_eq!(code, 422, "{body}");
    assert!(body.contains("exactly one of"), "{body}");
}

/// `kubectl get lws` prints the release's CRD printer columns (v0.10.0: Ready, Desired,
/// Up-to-date, Age; v0.4.1's CRD declares none), and `kubectl get all` leaves LWS out (the
/// CRD declares no `all` category).
#[test]
fn kubectl_get_lws_prints_the_release_s_printer_columns() {
    let s = Server::start("scenarios/rollout.yaml", &["--reconciler", "v0.10.0"]);
    let out = s.ok(&["get", "lws"]);
    let header = header_of(&out);
    assert_eq!(
        header,
        ["NAME", "READY", "DESIRED", "UP-TO-DATE", "AGE"],
        "{out}"
    );
    assert!(!s.ok(&["get", "all"]).contains("leaderworkerset"));
    drop(s);
    let s = Server::start("scenarios/rollout.yaml", &["--reconciler", "v0.4.1"]);
    let out = s.ok(&["get", "lws"]);
    let header = header_of(&out);
    assert_eq!(header, ["NAME", "AGE"], "{out}");
}

/// `kubectl logs` and `exec` got "the server could not find the requested resource", which
/// reads as a missing pod: the 404 now says no kubelet serves them.
#[test]
fn kubectl_logs_and_exec_say_there_is_no_kubelet() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    for args in [&["logs", "vllm-0"][..], &["exec", "vllm-0", "--", "ls"][..]] {
        let (ok, text) = s.kubectl(args);
        assert!(!ok, "{args:?}: {text}");
        assert!(
            text.contains("has no kubelet to serve logs, exec"),
            "{text}"
        );
    }
}

/// The column names of kubectl's table output.
fn header_of(out: &str) -> Vec<&str> {
    out.lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect()
}

/// The DisaggregatedSet webhook's admission warning reaches the client as a `Warning` header,
/// which kubectl prints (it was dropped).
#[test]
fn kubectl_prints_the_disaggregated_set_webhook_s_warning() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let manifest = repo().join("scenarios/conformance/manifests/ds-test-hpa.yaml");
    let text = std::fs::read_to_string(manifest)
        .unwrap()
        .replacen("replicas: 0", "replicas: 3", 1);
    let dir = temp_dir("warn");
    let path = write_file(&dir, "ds.yaml", &text);
    let out = s.ok(&["apply", "-f", &path]);
    assert!(
        out.contains("Warning: role \"prefill\" sets scaling.mode: External and spec.replicas: 3"),
        "{out}"
    );
    // Admitted: a warning is not a refusal.
    assert!(s.ok(&["get", "disaggregatedsets"]).contains("test-hpa"));
    // A custom resource has no patch strategies: a strategic merge patch is a 415, for the
    // DisaggregatedSet as for the LeaderWorkerSet.
    let ds = "/apis/disaggregatedset.x-k8s.io/v1/namespaces/default/disaggregatedsets/test-hpa";
    let (code, body) = s.http(
        "PATCH",
        ds,
        "application/strategic-merge-patch+json",
        r#"{"metadata":{"labels":{"smp":"yes"}}}"#,
    );
    assert_eq!(code, 415, "{body}");
    assert!(body.contains("UnsupportedMediaType"), "{body}");
}

#[test]
fn a_collection_delete_deletes_what_its_selectors_pick() {
    // DELETE on a collection (`deletecollection`, apiserver store.go `DeleteCollection`):
    // client-go's and kube-rs's `delete_collection`.
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let pods = "/api/v1/namespaces/default/pods";
    for name in ["web-a", "web-b", "other"] {
        let app = if name == "other" { "other" } else { "web" };
        let pod = format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}","labels":{{"app":"{app}"}}}},"spec":{{"containers":[{{"name":"c","image":"app"}}]}}}}"#
        );
        let (code, body) = s.http("POST", pods, "application/json", &pod);
        assert_eq!(code, 201, "{body}");
    }
    let (code, body) = s.http(
        "DELETE",
        &format!("{pods}?labelSelector=app%3Dweb"),
        "application/json",
        r#"{"gracePeriodSeconds":0}"#,
    );
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["kind"], "PodList", "{body}");
    let names: Vec<&str> = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["web-a", "web-b"]);
    let (code, _) = s.http("GET", &format!("{pods}/web-a"), "", "");
    assert_eq!(code, 404);
    let (code, _) = s.http("GET", &format!("{pods}/other"), "", "");
    assert_eq!(code, 200);
    // A bad selector deletes nothing; services have no deletecollection.
    let (code, _) = s.http("DELETE", &format!("{pods}?labelSelector=%3D%3D"), "", "");
    assert_eq!(code, 400);
    let (code, _) = s.http("DELETE", "/api/v1/namespaces/default/services", "", "");
    assert_eq!(code, 405);
    // Across namespaces a collection is only listed and watched.
    let (code, _) = s.http("DELETE", "/api/v1/pods", "", "");
    assert_eq!(code, 405);
    // An apply names its version.
    let (code, body) = s.http(
        "PATCH",
        &format!("{pods}/nameless?fieldManager=me"),
        "application/apply-patch+yaml",
        "metadata:\n  name: nameless\n",
    );
    assert_eq!(code, 400, "{body}");
    assert!(
        body.contains("Incorrect version specified in apply patch"),
        "{body}"
    );
    let (_, discovery) = s.http("GET", "/api/v1", "", "");
    let d: serde_json::Value = serde_json::from_str(&discovery).unwrap();
    let verbs = |name: &str| {
        d["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .map(|r| r["verbs"].to_string())
            .unwrap()
    };
    assert!(verbs("pods").contains("deletecollection"));
    assert!(!verbs("services").contains("deletecollection"));
    // A create's manager owns what it set: an apply of another value conflicts with it, named
    // with the version it wrote (an Update entry, `printManager`).
    let owned = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"owned","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"app"}]}}"#;
    let (code, body) = s.http(
        "POST",
        &format!("{pods}?fieldManager=kubectl-create"),
        "application/json",
        owned,
    );
    assert_eq!(code, 201, "{body}");
    let (code, body) = s.http(
        "PATCH",
        &format!("{pods}/owned?fieldManager=me"),
        "application/apply-patch+yaml",
        &owned.replace(r#""app":"web""#, r#""app":"other""#),
    );
    assert_eq!(code, 409, "{body}");
    assert!(
        body.contains(r#"Apply failed with 1 conflict: conflict with \"kubectl-create\" using v1: .metadata.labels.app"#),
        "{body}"
    );
    // An apply that creates answers 201, as a create does; applying it again, 200.
    let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"applied"},"spec":{"containers":[{"name":"c","image":"app"}]}}"#;
    for want in [201, 200] {
        let (code, body) = s.http(
            "PATCH",
            &format!("{pods}/applied?fieldManager=me"),
            "application/apply-patch+yaml",
            pod,
        );
        assert_eq!(code, want, "{body}");
    }
}

#[test]
fn install_scripts_find_the_crds_established() {
    // `kubectl wait --for=condition=Established crd/...` is what an install script runs before
    // it creates a LeaderWorkerSet; `kubectl get crd` lists what the cluster has.
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let crd = "crd/leaderworkersets.leaderworkerset.x-k8s.io";
    let out = s.ok(&["wait", "--for=condition=Established", crd, "--timeout=10s"]);
    assert!(out.contains("condition met"), "{out}");
    let out = s.ok(&["get", "crd"]);
    for want in [
        "CREATED AT",
        "leaderworkersets.leaderworkerset.x-k8s.io",
        "disaggregatedsets.disaggregatedset.x-k8s.io",
        "disaggregatedsetrolescalers.disaggregatedset.x-k8s.io",
    ] {
        assert!(out.contains(want), "no {want:?} in:\n{out}");
    }
    let kind = s.ok(&[
        "get",
        crd,
        "-o",
        "jsonpath={.spec.names.kind} {.spec.versions[0].subresources.scale.labelSelectorPath}",
    ]);
    assert_eq!(kind, "LeaderWorkerSet .status.hpaPodSelector");
    let (code, _) = s.http(
        "GET",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
        "",
        "",
    );
    assert_eq!(code, 404);
    // A watch of the CRDs stays open, quiet, until its timeout (kubectl wait and get -w).
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let (code, body) = s.http("GET", &format!("{crds}?watch=1&timeoutSeconds=1"), "", "");
    assert_eq!(code, 200, "{body}");
    // Before v0.10.0 the DisaggregatedSet CRDs are not installed.
    let old = Server::start("scenarios/rollout.yaml", &["--reconciler", "v0.4.1"]);
    let out = old.ok(&["get", "crd", "-o", "name"]);
    assert_eq!(
        out.trim(),
        "customresourcedefinition.apiextensions.k8s.io/leaderworkersets.leaderworkerset.x-k8s.io"
    );
}

/// Services as `kubectl create service` and `kubectl get svc -o wide` see them on a real
/// cluster: a cluster IP and node ports allocated, the printer's External-IP, Port(s) and
/// Selector columns, a `kubectl replace` of the file without the allocated values keeping
/// them, and a bad port refused with every error (kubernetes `ValidateService`).
#[test]
fn kubectl_creates_services_with_addresses_and_refuses_bad_ports() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let dir = temp_dir("svc");
    let web = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{name: http, port: 80, targetPort: 8080}]\n";
    let web = write_file(&dir, "web.yaml", web);
    let np = "apiVersion: v1\nkind: Service\nmetadata: {name: np}\nspec:\n  type: NodePort\n  selector: {app: np}\n  ports: [{port: 80, targetPort: 8080}]\n";
    s.ok(&["create", "-f", &web]);
    s.ok(&["create", "-f", &write_file(&dir, "np.yaml", np)]);
    let ip = s.jsonpath("svc", "web", "{.spec.clusterIP}");
    assert!(ip.starts_with("10.9"), "{ip}");
    assert_ne!(ip, s.jsonpath("svc", "np", "{.spec.clusterIP}"));
    let wide = s.ok(&["get", "svc", "np", "-o", "wide"]);
    let header = wide.lines().next().unwrap_or("");
    for col in ["TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "SELECTOR"] {
        assert!(header.contains(col), "{wide}");
    }
    assert!(
        wide.contains("80:30000/TCP") && wide.contains("app=np"),
        "{wide}"
    );
    s.ok(&["replace", "-f", &web]);
    assert_eq!(s.jsonpath("svc", "web", "{.spec.clusterIP}"), ip);
    let bad = write_file(
        &dir,
        "bad.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: bad}\nspec:\n  ports: [{port: 70000}, {port: 80, protocol: FOO}]\n",
    );
    let (ok, text) = s.kubectl(&["create", "-f", &bad]);
    assert!(!ok, "{text}");
    for want in [
        "spec.ports[0].name: Required value",
        "spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
        r#"spec.ports[1].protocol: Unsupported value: "FOO": supported values: "SCTP", "TCP", "UDP""#,
    ] {
        assert!(text.contains(want), "missing {want:?}:\n{text}");
    }
}

/// Pods and nodes carry what a real cluster fills in, so clients that read it find it: the
/// API server's pod defaults and admission additions (`restartPolicy`, `schedulerName`, the
/// 300 s tolerations, `qosClass`), the addresses the kubelet reports (`podIP`, `hostIP`), field
/// selectors on them, and the node's version and InternalIP in `kubectl get nodes -o wide`.
#[test]
fn pods_and_nodes_carry_the_defaults_and_addresses_a_cluster_fills_in() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let pod = |path: &str| s.jsonpath("pod", "vllm-0", path);
    assert_eq!(pod("{.spec.restartPolicy}"), "Always");
    assert_eq!(pod("{.spec.schedulerName}"), "default-scheduler");
    assert_eq!(pod("{.spec.serviceAccountName}"), "default");
    assert_eq!(pod("{.status.qosClass}"), "BestEffort");
    assert_eq!(
        pod("{.spec.tolerations[*].key}"),
        "node.kubernetes.io/not-ready node.kubernetes.io/unreachable"
    );
    let ip = pod("{.status.podIP}");
    assert!(ip.starts_with("10.24"), "{ip}");
    let node = pod("{.spec.nodeName}");
    let host = pod("{.status.hostIP}");
    assert_eq!(
        host,
        s.jsonpath("node", &node, "{.status.addresses[0].address}")
    );
    let selected = s.ok(&[
        "get",
        "pods",
        "--field-selector",
        "spec.restartPolicy=Always,status.podIP=",
        "-o",
        "name",
    ]);
    assert!(!selected.contains("pod/vllm-0\n"), "{selected}");
    let always = s.ok(&[
        "get",
        "pods",
        "--field-selector",
        "spec.restartPolicy=Always",
        "-o",
        "name",
    ]);
    assert!(always.contains("pod/vllm-0\n"), "{always}");
    let by_ip = format!("status.podIP={ip}");
    let found = s.ok(&["get", "pods", "--field-selector", &by_ip, "-o", "name"]);
    assert_eq!(found.trim(), "pod/vllm-0");
    let wide = s.ok(&["get", "nodes", "-o", "wide"]);
    let header = wide.lines().next().unwrap_or("");
    for col in [
        "ROLES",
        "VERSION",
        "INTERNAL-IP",
        "OS-IMAGE",
        "CONTAINER-RUNTIME",
    ] {
        assert!(header.contains(col), "{wide}");
    }
    assert!(wide.contains(&host) && wide.contains("v1.29.0"), "{wide}");
}

/// `kubectl get events -w` lists the events recorded so far, then streams the ones the
/// controllers record after (a scale-up's `GroupsAreProgressing`), from the events list's
/// own resourceVersion; a bad field selector on the watch is a 400 as on a list.
#[test]
fn kubectl_watches_the_events_the_controllers_record() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let before = s.ok(&["get", "events", "-o", "name"]).lines().count();
    let mut w = Streaming::start(&s, &["get", "events", "-w"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    let lines = w.read_until(deadline, |lines| lines.len() > before);
    assert!(lines[0].starts_with("LAST SEEN"), "{lines:?}");
    s.ok(&["scale", "lws", "vllm", "--replicas", "5"]);
    s.step("2m");
    let progressing = |l: &String| l.contains("with 4 groups ready of total 5 groups");
    let lines = w.read_until(deadline, |lines| lines.iter().any(progressing));
    assert!(lines.iter().any(progressing), "{lines:#?}");
    let (code, body) = s.http("GET", "/api/v1/events?watch=1&fieldSelector=nope=1", "", "");
    assert_eq!(code, 400, "{body}");
}

/// `kubectl delete namespace`: the namespace is Terminating while its objects are deleted, a
/// create in it is refused as `NamespaceLifecycle` refuses it, and once the last object is
/// gone so is the namespace; the immortal ones cannot be deleted.
#[test]
fn kubectl_deletes_a_namespace_and_everything_in_it() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let dir = temp_dir("ns");
    let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: scratch}\n";
    s.ok(&["create", "-f", &write_file(&dir, "ns.yaml", ns)]);
    let pod = |name: &str| {
        format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: scratch}}\nspec:\n  containers: [{{name: c, image: app:v1}}]\n")
    };
    s.ok(&["create", "-f", &write_file(&dir, "a.yaml", &pod("a"))]);
    s.step("2m");
    let phase = |s: &Server| {
        s.ok(&[
            "get",
            "pod",
            "a",
            "-n",
            "scratch",
            "-o",
            "jsonpath={.status.phase}",
        ])
    };
    assert_eq!(phase(&s).trim(), "Running");
    s.ok(&["delete", "namespace", "scratch", "--wait=false"]);
    let ns_phase = s.ok(&[
        "get",
        "namespace",
        "scratch",
        "-o",
        "jsonpath={.status.phase}",
    ]);
    assert_eq!(ns_phase.trim(), "Terminating");
    let (ok, text) = s.kubectl(&["delete", "namespace", "scratch", "--wait=false"]);
    let again = "The system is ensuring all content is removed from this namespace";
    assert!(!ok && text.contains(again), "{text}");
    let (ok, text) = s.kubectl(&["create", "-f", &write_file(&dir, "b.yaml", &pod("b"))]);
    assert!(!ok, "{text}");
    assert!(
        text.contains(r#"pods "b" is forbidden: unable to create new content in namespace scratch because it is being terminated"#),
        "{text}"
    );
    s.step("1m");
    let (ok, text) = s.kubectl(&["get", "namespace", "scratch"]);
    assert!(
        !ok && text.contains(r#"namespaces "scratch" not found"#),
        "{text}"
    );
    let (ok, text) = s.kubectl(&["delete", "namespace", "default"]);
    assert!(
        !ok && text.contains("this namespace may not be deleted"),
        "{text}"
    );
}

/// Gang scheduling (`gang-scheduling=volcano`): kubectl finds Volcano's PodGroups by kind and
/// short name, with the CRD's printer columns; without the flag the resource is not served.
#[test]
fn kubectl_gets_the_podgroups_of_gang_scheduling() {
    let scenario = "scenarios/conformance/gang-e2e-leader-created.yaml";
    let s = Server::start(
        scenario,
        &["--reconciler", "v0.10.0,gang-scheduling=volcano"],
    );
    s.step("2m");
    let out = s.ok(&["get", "pg", "-o", "name"]);
    let names: Vec<&str> = out.lines().collect();
    assert_eq!(names.len(), 2, "{out}");
    assert!(
        names[0].starts_with("podgroup.scheduling.volcano.sh/test-sample-0-"),
        "{out}"
    );
    let table = s.ok(&["get", "podgroups"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "STATUS", "MINMEMBER", "RUNNINGS", "AGE"],
        "{table}"
    );
    assert!(table.lines().nth(1).unwrap().contains(" 4 "), "{table}");
    let owner = s.ok(&[
        "get",
        names[0],
        "-o",
        "jsonpath={.metadata.ownerReferences[0].name} {.spec.queue} {.spec.minMember}",
    ]);
    assert_eq!(owner, "test-sample-0 default 4");
    let plain = Server::start(scenario, &["--reconciler", "v0.10.0"]);
    let (ok, out) = plain.kubectl(&["get", "podgroups"]);
    assert!(
        !ok && out.contains("the server doesn't have a resource type"),
        "{out}"
    );
}

#[test]
fn endpoints_are_each_service_s_ready_pods_computed_when_asked() {
    let s = Server::start("scenarios/rollout.yaml", &[]);
    let (code, text) = s.http("POST", "/lws-sim/until?t=10m", "", "");
    assert_eq!(code, 200, "{text}");
    // The LWS's headless Service: every pod of the LWS, ready, by IP, no ports.
    let (code, text) = s.http("GET", "/api/v1/namespaces/default/endpoints/vllm", "", "");
    assert_eq!(code, 200, "{text}");
    let ep: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(ep["kind"], "Endpoints");
    let addresses = ep["subsets"][0]["addresses"].as_array().expect("addresses");
    assert_eq!(addresses.len(), 12, "4 groups of 3: {text}");
    assert!(addresses.iter().all(|a| a["targetRef"]["kind"] == "Pod"));
    assert!(ep["subsets"][0].get("ports").is_none(), "{text}");
    // A Service with a port: the target port of the leaders, as `kubectl get ep` prints it.
    let svc = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"api"},"spec":{"selector":{"role":"leader"},"ports":[{"name":"http","port":80,"targetPort":8080}]}}"#;
    let (code, text) = s.http(
        "POST",
        "/api/v1/namespaces/default/services",
        "application/json",
        svc,
    );
    assert_eq!(code, 201, "{text}");
    let (code, text) = s.http("GET", "/api/v1/namespaces/default/endpoints/api", "", "");
    assert_eq!(code, 200, "{text}");
    let ep: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(ep["subsets"][0]["ports"][0]["port"], 8080, "{text}");
    assert_eq!(
        ep["subsets"][0]["addresses"].as_array().map(Vec::len),
        Some(4)
    );
    let (code, text) = s.http("GET", "/api/v1/namespaces/default/endpoints", "", "");
    assert_eq!(code, 200, "{text}");
    assert!(text.contains("\"EndpointsList\""), "{text}");
    // None for a Service that is not there, and no writes.
    let (code, _) = s.http("GET", "/api/v1/namespaces/default/endpoints/nope", "", "");
    assert_eq!(code, 404);
    let (code, _) = s.http("DELETE", "/api/v1/namespaces/default/endpoints/api", "", "");
    assert_eq!(code, 405);
}
