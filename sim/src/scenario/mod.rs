//! Scenarios: build a scenario from its spec (read from a file by `load.rs`, or held in memory
//! by fuzz and explore), run it against a reconciler in the world with the invariants checked
//! after every event, and judge the run against the file's `expect`.

mod error;
pub mod limits;
mod load;
pub mod manifest;
pub mod spec;
mod step;
pub mod targets;
pub(crate) mod yaml;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use lws::api::LeaderWorkerSet;
use lws::k8s;
use lws::profile::Profile;
use serde_json::Value;

use crate::api::{with_kind, ApiServer, DeleteOptions, Kind, KindId, Propagation};
use crate::controller::{ControllerConfig, Trigger};
use crate::invariants::{
    self, Checker, FaultEffect, InvariantId, ObjectRef, RolloutState, Violation,
};
use crate::trace::Trace;
use crate::world::{ClusterConfig, Event, World};
pub use limits::SpecLines;
pub use load::{check_output, dir_of, read_text, same_file, ManifestDir};
pub use manifest::{LoadError, Manifest};
use spec::{Expectation, InvariantSelection, ScenarioSpec, StepSpec};
pub use step::{is_inline_block, NodeSel, ObjectMatch, Step, WaitTarget};

/// A bound on events per run: a runaway loop is reported, never a hang.
pub const EVENT_COUNT_MAX: u64 = 20_000_000;
pub const DEFAULT_CONVERGE_MS: u64 = 3_600_000;

/// Where the manifest files a scenario names come from: the directory beside its file
/// (`ManifestDir`), or memory (a map from the name the scenario uses to the file's text).
pub trait ManifestFiles {
    /// The manifests in the file the scenario calls `name`, and the name to report them by.
    fn read(&self, name: &str) -> Result<(String, Manifests), LoadError>;

    /// The manifests a step writes inline as a block (`apply: |`), reported as `source`. The
    /// loader (`ReadOnce`) gives the blocks of one scenario one budget of expanded text
    /// (`EXPANDED_BYTES_MAX`) and decodes a block repeated (a YAML alias) once.
    fn inline(
        &self,
        source: &str,
        text: &str,
        counts: manifest::Counts,
    ) -> Result<Manifests, LoadError> {
        InlineBlocks::default().decode(source, text, counts)
    }
}

/// Inline blocks already decoded by this loader, by their text, and the expanded bytes they
/// have taken of the scenario's budget.
#[derive(Default)]
struct InlineBlocks {
    decoded: std::cell::RefCell<BTreeMap<(String, bool), Manifests>>,
    used: std::cell::Cell<usize>,
}

impl InlineBlocks {
    fn decode(
        &self,
        source: &str,
        text: &str,
        counts: manifest::Counts,
    ) -> Result<Manifests, LoadError> {
        let key = (text.to_string(), counts == manifest::Counts::Checked);
        if let Some(m) = self.decoded.borrow().get(&key) {
            return Ok(m.clone());
        }
        let budget = manifest::EXPANDED_BYTES_MAX.saturating_sub(self.used.get());
        let (objects, bytes) = manifest::parse_inline(source, text, counts, budget)?;
        self.used.set(self.used.get() + bytes);
        let objects: Manifests = objects.into();
        self.decoded.borrow_mut().insert(key, objects.clone());
        Ok(objects)
    }
}

/// The objects of one manifest file, decoded once and shared by every step applying it.
pub type Manifests = Arc<[Manifest]>;

impl ManifestFiles for BTreeMap<String, String> {
    fn read(&self, name: &str) -> Result<(String, Manifests), LoadError> {
        let text = self
            .get(name)
            .ok_or_else(|| err(name, "no such manifest in this scenario"))?;
        Ok((name.to_string(), manifest::parse(name, text)?.into()))
    }
}

/// Manifests already decoded, by file name: what a generator that builds its objects in memory
/// (fuzz cases) hands the loader instead of text to parse.
pub struct DecodedManifests(pub BTreeMap<String, Vec<Manifest>>);

impl ManifestFiles for DecodedManifests {
    fn read(&self, name: &str) -> Result<(String, Manifests), LoadError> {
        let m = self
            .0
            .get(name)
            .ok_or_else(|| err(name, "no such manifest in this scenario"))?;
        Ok((name.to_string(), m.as_slice().into()))
    }
}

/// Each file read once: a scenario applying one manifest many times holds its objects once
/// (memory follows the files, not the steps).
/// Its inline blocks likewise, within one budget of expanded text for them all.
struct ReadOnce<'a> {
    files: &'a dyn ManifestFiles,
    read: std::cell::RefCell<BTreeMap<String, (String, Manifests)>>,
    inline: InlineBlocks,
}

impl ManifestFiles for ReadOnce<'_> {
    fn read(&self, name: &str) -> Result<(String, Manifests), LoadError> {
        if let Some((source, m)) = self.read.borrow().get(name) {
            return Ok((source.clone(), m.clone()));
        }
        let got = self.files.read(name)?;
        self.read.borrow_mut().insert(name.to_string(), got.clone());
        Ok(got)
    }

    fn inline(
        &self,
        source: &str,
        text: &str,
        counts: manifest::Counts,
    ) -> Result<Manifests, LoadError> {
        self.inline.decode(source, text, counts)
    }
}

/// A scenario held in memory: its spec and the text of every manifest file it names, by the
/// name it uses. `main.rs` writes it out as files (`yaml` beside the manifests).
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioFiles {
    pub spec: ScenarioSpec,
    pub manifests: BTreeMap<String, String>,
}

impl ScenarioFiles {
    /// The scenario file's text.
    pub fn yaml(&self) -> String {
        spec_yaml(&self.spec)
    }

    /// The runnable scenario; `path` only names it (in errors and replay lines).
    pub fn scenario(&self, path: &Path) -> Result<Scenario, LoadError> {
        Scenario::from_spec(path, self.spec.clone(), &self.manifests)
    }
}

/// A spec as a scenario file's text.
pub fn spec_yaml(spec: &ScenarioSpec) -> String {
    serde_saphyr::to_string(spec).expect("a scenario spec encodes")
}

#[derive(Clone, Debug)]
pub struct Scenario {
    pub path: PathBuf,
    pub spec: ScenarioSpec,
    pub manifests: Vec<(String, Manifests)>,
    /// `spec.steps`, resolved, one for one.
    pub steps: Vec<Step>,
    pub invariants: Vec<String>,
    /// `controller.reconciler`, parsed.
    pub reconciler: Option<Profile>,
    /// The keys of `expect`, parsed, with what each expects.
    pub expect: Vec<(Profile, Expectation)>,
    /// Where the parts of the file are, for messages (empty for a spec held in memory).
    pub lines: SpecLines,
}

pub(crate) fn err(file: &str, message: impl Into<String>) -> LoadError {
    err_at(file, None, message)
}

fn err_at(file: &str, line: Option<usize>, message: impl Into<String>) -> LoadError {
    LoadError {
        file: file.into(),
        line,
        message: message.into(),
    }
}

pub(crate) use yaml::yaml_options;

/// The invariants a scenario selects, checked against the known ones.
fn selected_invariants(
    file: &str,
    line: Option<usize>,
    sel: &Option<InvariantSelection>,
) -> Result<Vec<String>, LoadError> {
    let all = || invariants::ALL.iter().map(|s| s.to_string()).collect();
    match sel {
        None => Ok(all()),
        Some(InvariantSelection::Named(s)) if s == "all" => Ok(all()),
        Some(InvariantSelection::Named(s)) => Err(err_at(
            file,
            line,
            format!("invariants: expected `all` or a list, got {s:?}"),
        )),
        Some(InvariantSelection::List(l)) => {
            if let Some(n) = l.iter().find(|n| !invariants::ALL.contains(&n.as_str())) {
                return Err(err_at(
                    file,
                    line,
                    format!(
                        "invariants: unknown invariant {n:?}; valid: {}",
                        invariants::ALL.join(", ")
                    ),
                ));
            }
            Ok(l.clone())
        }
    }
}

/// The `expect` map with its reconcilers parsed and its invariant names checked.
fn expectations(
    file: &str,
    lines: &SpecLines,
    expect: &BTreeMap<String, Expectation>,
) -> Result<Vec<(Profile, Expectation)>, LoadError> {
    let mut out = Vec::new();
    for (reconciler, e) in expect {
        let line = lines.expect.get(reconciler).copied();
        let profile = Profile::parse(reconciler)
            .map_err(|m| err_at(file, line, format!("expect.{reconciler}: {m}")))?;
        {
            let v = e.invariants();
            let known = |n: &String| InvariantId::parse(n).is_some();
            if let Some(n) = v.iter().find(|n| !known(n)) {
                let valid: Vec<&str> = InvariantId::ALL.iter().map(|i| i.as_str()).collect();
                return Err(err_at(
                    file,
                    line,
                    format!(
                        "expect.{reconciler}.violates: unknown invariant {n:?}; valid: {}",
                        valid.join(", ")
                    ),
                ));
            }
        }
        // Two spellings of one reconciler (an alias and its expansion, flags in another
        // order) asking for different outcomes: one of them must fail, whatever the run does.
        let same = out
            .iter()
            .find(|(p, x): &&(Profile, Expectation)| same_reconciler(p, &profile) && x != e);
        if let Some((other, _)) = same {
            return Err(err_at(
                file,
                line,
                format!(
                    "expect.{reconciler}: the same reconciler as expect.{} with another \
                     expectation; keep one",
                    other.name
                ),
            ));
        }
        out.push((profile, e.clone()));
    }
    Ok(out)
}

/// An `expect` that names an invariant the scenario does not check (`invariants:
/// [availability]` expecting `groupRestart`) can never be met: refused at its line.
fn unselected_expectation(
    file: &str,
    lines: &SpecLines,
    expect: &BTreeMap<String, Expectation>,
    selected: &[String],
) -> Result<(), LoadError> {
    for (reconciler, e) in expect {
        let off = e
            .invariants()
            .iter()
            .find(|n| invariants::ALL.contains(&n.as_str()) && !selected.iter().any(|s| s == *n));
        if let Some(n) = off {
            return Err(err_at(
                file,
                lines.expect.get(reconciler).copied(),
                format!(
                    "expect.{reconciler}.violates: {n:?} is not among the scenario's invariants ({}); the run never checks it, so it cannot break",
                    selected.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// Whether two profiles run the same code: one release, every flag the same.
fn same_reconciler(a: &Profile, b: &Profile) -> bool {
    a.release == b.release && a.flags == b.flags
}

/// A scenario file's text as a spec; errors name `file` and, where known, the line and field.
pub fn parse_spec(file: &str, text: &str) -> Result<ScenarioSpec, LoadError> {
    let mut options = yaml_options();
    // Our own format has no use for application tags (`!foo`): one is a typo or a file meant
    // for another tool, not something to ignore. Manifest files are parsed without this (a
    // scalar's unknown tag is ignored there).
    options.reject_unsupported_tags = true;
    if let Some((line, message)) = limits::too_many_steps(text) {
        return Err(LoadError {
            file: file.into(),
            line: Some(line),
            message,
        });
    }
    let spec: ScenarioSpec = serde_saphyr::from_str_with_options(text, options)
        .map_err(|e| yaml::load_error(file, 1, text, &e))?;
    refuse_quoted_scalars(file, text, &spec)?;
    Ok(spec)
}

/// A number or boolean written in quotes (`seed: "7"`, `replace: "true"`) is refused, as a
/// manifest's is: the parser would take the string as the number, so a file that means
/// something else (a name, a label) reads as if it were fine. Found by comparing the file's
/// untyped reading (where a quoted scalar stays a string) with the spec written back (where
/// the field's type made it a number); the line is the first that writes the field's key.
fn refuse_quoted_scalars(file: &str, text: &str, spec: &ScenarioSpec) -> Result<(), LoadError> {
    let Ok(raw) = serde_saphyr::from_str_with_options::<Value>(text, yaml_options()) else {
        return Ok(());
    };
    let Ok(back) = serde_json::to_value(spec) else {
        return Ok(());
    };
    let Some((path, what)) = quoted_scalar(&raw, &back, String::new()) else {
        return Ok(());
    };
    Err(LoadError {
        file: file.into(),
        line: Some(line_of_path(text, &path)),
        message: format!("{path}: expected {what}, got a string (unquote it)"),
    })
}

/// The first place where `raw` holds a string and `back` a number or a boolean.
fn quoted_scalar(raw: &Value, back: &Value, path: String) -> Option<(String, &'static str)> {
    match (raw, back) {
        (Value::String(_), Value::Number(_)) => Some((path, "a number")),
        (Value::String(_), Value::Bool(_)) => Some((path, "a boolean")),
        (Value::Object(r), Value::Object(b)) => r.iter().find_map(|(k, v)| {
            let at = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            quoted_scalar(v, b.get(k)?, at)
        }),
        (Value::Array(r), Value::Array(b)) => r
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (v, w))| quoted_scalar(v, w, format!("{path}[{i}]"))),
        _ => None,
    }
}

/// The field an API error names first: its first cause's, else (a CRD schema's errors, given
/// as `field.ErrorList` text without causes) the field its message starts with.
fn first_field(e: &crate::api::ApiError) -> Option<&str> {
    if let Some(c) = e.causes.first().filter(|c| !c.field.is_empty()) {
        return Some(&c.field);
    }
    let (field, _) = e.message.trim_start_matches('[').split_once(": ")?;
    let plausible = !field.is_empty() && !field.contains(char::is_whitespace) && field != "<nil>";
    plausible.then_some(field)
}

/// The line (1-based) where `path` (`steps[2].deletePod.gracePeriodSeconds`) is written: each
/// key in turn, searched from where the previous one was found (a list index moves past that
/// many items of the list). Line 1 when a key is not found.
fn line_of_path(text: &str, path: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let mut at = 0;
    for seg in path.split('.') {
        let (key, index) = match seg.split_once('[') {
            Some((k, i)) => (k, i.trim_end_matches(']').parse::<usize>().ok()),
            None => (seg, None),
        };
        let written = |l: &str| {
            l.match_indices(key).any(|(i, _)| {
                let before = l[..i].chars().last();
                let after = l[i + key.len()..].trim_start().starts_with(':');
                after && before.is_none_or(|c| " \t{,-\"'".contains(c))
            })
        };
        // A comment (a whole line, or after ` #`) writes no key.
        let code = |l: &'_ str| -> String {
            let l = if l.trim_start().starts_with('#') {
                ""
            } else {
                l
            };
            l.split(" #").next().unwrap_or("").to_string()
        };
        let Some(found) = (at..lines.len()).find(|&n| written(&code(lines[n]))) else {
            return 1;
        };
        at = found;
        if let Some(n) = index {
            // Past the key to its n-th `- ` item (a block list).
            let items = (at + 1..lines.len()).filter(|&l| lines[l].trim_start().starts_with("- "));
            at = items.clone().nth(n).unwrap_or(at);
        }
    }
    at + 1
}

/// The minor of a `kubernetesVersion` of the form `1.N` (N in decimal digits, no sign or
/// leading zero), within `KUBERNETES_MINORS`; else what is wrong with it.
pub(crate) fn kubernetes_minor(v: &str) -> Result<u32, String> {
    let form = || format!("{v:?} is not of the form \"1.N\" (e.g. \"1.29\")");
    let digits = v.strip_prefix("1.").ok_or_else(form)?;
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    let minor: u32 = match digits.parse() {
        Ok(n) if canonical => n,
        _ => return Err(form()),
    };
    let range = limits::KUBERNETES_MINORS;
    if !range.contains(&minor) {
        return Err(format!(
            "{v:?} is outside the versions modelled, 1.{} to 1.{} (LWS needs 1.26 or later; \
             1.{} is the newest the simulator encodes)",
            range.start(),
            range.end(),
            range.end()
        ));
    }
    Ok(minor)
}

/// Reads nothing: for steps that name no file (explore's perturbations).
struct NoFiles;

impl ManifestFiles for NoFiles {
    fn read(&self, name: &str) -> Result<(String, Manifests), LoadError> {
        Err(err(name, "this step cannot read manifest files"))
    }
}

impl Scenario {
    /// Validate a spec and resolve everything it references through `files`.
    pub fn from_spec(
        path: &Path,
        spec: ScenarioSpec,
        files: &dyn ManifestFiles,
    ) -> Result<Scenario, LoadError> {
        Scenario::from_spec_at(path, spec, SpecLines::default(), files)
    }

    /// `from_spec` for a spec read from a file whose parts are at `lines`.
    pub fn from_spec_at(
        path: &Path,
        spec: ScenarioSpec,
        lines: SpecLines,
        files: &dyn ManifestFiles,
    ) -> Result<Scenario, LoadError> {
        let file = path.display().to_string();
        let files = &ReadOnce {
            files,
            read: Default::default(),
            inline: InlineBlocks::default(),
        };
        let mut manifests = Vec::new();
        for (i, m) in spec.manifests.iter().enumerate() {
            if step::is_inline_block(m) {
                let m = format!("manifests[{i}]: a file's name, not a manifest; write a manifest inline in an `apply` step (`apply: |`)");
                return Err(err_at(&file, lines.manifest(i), m));
            }
            // A fault of the file as a whole (unreadable, empty) is reported where the
            // scenario names it; one inside it keeps the manifest's own file and line.
            let read = files.read(m).map_err(|e| match e.line {
                Some(_) => e,
                None => err_at(
                    &file,
                    lines.manifest(i),
                    format!("manifests[{i}]: {}: {}", e.file, e.message),
                ),
            })?;
            manifests.push(read);
        }
        let mut steps = Vec::new();
        for (i, s) in spec.steps.iter().enumerate() {
            // `ctx` also names inline manifests in the trace: its form is part of trace hashes.
            let ctx = format!("{file}: steps[{i}]");
            let key = s.key();
            let inline = step::inline_source(&ctx);
            let step = Step::resolve(&ctx, s, files).map_err(|e| match e.file == ctx {
                // A line of an inline block (`apply: |`): the file's line under the `apply`.
                false if e.file == inline => {
                    let applied = match s {
                        StepSpec::Rejected { step, .. } => &**step,
                        s => s,
                    };
                    let blank = match applied {
                        StepSpec::Apply(serde_json::Value::String(t)) => {
                            t.chars().take_while(|c| *c == '\n').count()
                        }
                        _ => 0,
                    };
                    let at = e.line.and_then(|k| lines.apply_block_line(i, k, blank));
                    let at = at.or(lines.step(i));
                    err_at(&file, at, format!("steps[{i}]: apply: {}", e.message))
                }
                true if e.message.starts_with(key) => {
                    err_at(&file, lines.step(i), format!("steps[{i}]: {}", e.message))
                }
                true => err_at(
                    &file,
                    lines.step(i),
                    format!("steps[{i}]: {key}: {}", e.message),
                ),
                // A file the step names that cannot be read at all: reported at the step.
                false if e.line.is_none() => err_at(
                    &file,
                    lines.step(i),
                    format!("steps[{i}]: {key}: {}: {}", e.file, e.message),
                ),
                false => e,
            })?;
            steps.push(step);
        }
        targets::check_scenario(&file, &lines, &spec, &manifests, &steps)?;
        let invariants = selected_invariants(&file, lines.invariants, &spec.invariants)?;
        let expect = expectations(&file, &lines, &spec.expect)?;
        unselected_expectation(&file, &lines, &spec.expect, &invariants)?;
        let reconciler = match &spec.controller.reconciler {
            Some(r) => Some(Profile::parse(r).map_err(|m| {
                err_at(
                    &file,
                    lines.reconciler,
                    format!("controller.reconciler: {m}"),
                )
            })?),
            None => None,
        };
        Ok(Scenario {
            path: path.to_path_buf(),
            spec,
            manifests,
            steps,
            invariants,
            reconciler,
            expect,
            lines,
        })
    }

    /// The file this scenario reads that `output` would overwrite, if any: the scenario
    /// itself, a manifest or a file an `apply` step names.
    pub fn reads(&self, output: &Path) -> Option<PathBuf> {
        self.input_files()
            .into_iter()
            .find(|i| same_file(i, output))
    }

    /// The files this scenario was read from: itself, its manifests and the files its
    /// `apply` steps name.
    fn input_files(&self) -> Vec<PathBuf> {
        let dir = dir_of(&self.path);
        let applied = self.spec.steps.iter().filter_map(|s| {
            let s = match s {
                StepSpec::Rejected { step, .. } => step,
                s => s,
            };
            match s {
                StepSpec::Apply(serde_json::Value::String(p)) if !step::is_inline_block(p) => {
                    Some(p.as_str())
                }
                _ => None,
            }
        });
        let mut v = vec![self.path.clone()];
        v.extend(
            self.spec
                .manifests
                .iter()
                .map(String::as_str)
                .chain(applied)
                .map(|n| dir.join(n)),
        );
        v
    }

    /// A manifest refused when it was applied, reported where the scenario names the file
    /// (`FILE:LINE: manifests[i]: ...`), as a manifest that cannot be read is.
    pub fn at_manifest(&self, i: usize, halt: Halt) -> Halt {
        match halt {
            Halt::Bad(RunError(m)) => {
                let at = match self.lines.manifest(i) {
                    Some(l) => format!("{}:{l}", self.path.display()),
                    None => self.path.display().to_string(),
                };
                Halt::Bad(RunError(format!("{at}: manifests[{i}]: {m}")))
            }
            limit => limit,
        }
    }

    /// Step `i` for messages: `steps[i] (key, file:line)`.
    pub fn step_context(&self, i: usize) -> String {
        let key = self.spec.steps.get(i).map_or("?", StepSpec::key);
        match self.lines.step(i) {
            Some(l) => format!("steps[{i}] ({key}, {}:{l})", self.path.display()),
            None => format!("steps[{i}] ({key})"),
        }
    }

    /// Insert a step that names no file (a fault, a wait) before step `at`, in the spec and
    /// resolved.
    pub fn insert_step(&mut self, at: usize, s: StepSpec) -> Result<(), LoadError> {
        let ctx = format!("{}: steps[{at}]", self.path.display());
        self.steps.insert(at, Step::resolve(&ctx, &s, &NoFiles)?);
        self.spec.steps.insert(at, s);
        if !self.lines.steps.is_empty() {
            // 0: an inserted step has no line.
            let at = at.min(self.lines.steps.len());
            self.lines.steps.insert(at, 0);
        }
        Ok(())
    }

    /// Keep only the steps at `keep` (indices, ascending), in the spec and resolved.
    pub fn keep_steps(&mut self, keep: &[usize]) {
        let (spec, steps) = (&self.spec.steps, &self.steps);
        let kept: Vec<(StepSpec, Step)> = keep
            .iter()
            .map(|&i| (spec[i].clone(), steps[i].clone()))
            .collect();
        (self.spec.steps, self.steps) = kept.into_iter().unzip();
        if !self.lines.steps.is_empty() {
            let lines = &self.lines.steps;
            self.lines.steps = keep
                .iter()
                .map(|&i| lines.get(i).copied().unwrap_or(0))
                .collect();
        }
    }

    /// The reconciler to use: the override, else the file's.
    pub fn reconciler(&self, over: Option<&str>) -> Result<Profile, String> {
        match (over, &self.reconciler) {
            (Some(spec), _) => Profile::parse(spec),
            (None, Some(p)) => Ok(p.clone()),
            (None, None) => Err(format!(
                "{}: no reconciler: set controller.reconciler or pass --reconciler",
                self.path.display()
            )),
        }
    }

    pub fn cluster_config(&self) -> Result<ClusterConfig, String> {
        let c = &self.spec.cluster;
        let mut cfg = ClusterConfig::default();
        if let Some(v) = &c.kubernetes_version {
            cfg.kubernetes_minor = kubernetes_minor(v)
                .map_err(|m| format!("{}: cluster.kubernetesVersion: {m}", self.path.display()))?;
        }
        cfg.max_unavailable_statefulset = c.max_unavailable_stateful_set;
        if let Some(n) = &c.nodes {
            cfg.node_count = n.count.unwrap_or(cfg.node_count);
            cfg.pods_per_node = n.pods_per_node.unwrap_or(cfg.pods_per_node);
            cfg.node_labels = n.labels.clone();
            cfg.node_domains = n
                .domains
                .iter()
                .map(|d| (d.key.clone(), d.nodes_per_domain))
                .collect();
        }
        let range = |r: Option<spec::Range>, d: (u64, u64)| r.map(|r| (r.0, r.1)).unwrap_or(d);
        cfg.pod_startup_ms = range(c.pod_startup, cfg.pod_startup_ms);
        cfg.pod_termination_ms = range(c.pod_termination, cfg.pod_termination_ms);
        cfg.watch_lag_ms = range(c.watch_lag, cfg.watch_lag_ms);
        cfg.gc_lag_ms = range(c.gc_lag, cfg.gc_lag_ms);
        cfg.node_delete_delay_ms = c
            .node_delete_delay
            .map(|d| d.0)
            .unwrap_or(cfg.node_delete_delay_ms);
        cfg.node_join_delay_ms = c
            .node_join_delay
            .map(|d| d.0)
            .unwrap_or(cfg.node_join_delay_ms);
        cfg.unpullable_images = c.unpullable_images.iter().cloned().collect();
        Ok(cfg)
    }
}

/// The outcome of one run.
#[derive(Debug)]
pub struct RunReport {
    pub scenario: String,
    pub reconciler: String,
    pub seed: u64,
    pub violations: Vec<Violation>,
    pub min_available: Option<i32>,
    pub floor: i32,
    pub trace_hash: u64,
    pub sim_ms: u64,
    pub events: u64,
    pub trace: Trace,
    /// Kubernetes Events and reconcile errors from the controller, "at_ms text".
    pub controller_log: Vec<String>,
    /// API writes the controller made and reconciles it ran (explore's perturbation points).
    pub controller_writes: u64,
    pub controller_reconciles: u64,
    /// Watch events delivered to the controller's caches.
    pub controller_events: u64,
    /// The run as change points for a picture, when [`RunOptions::timeline`] asked for it.
    pub timeline: Option<crate::timeline::Timeline>,
    /// What the run did not do that the scenario asked for, not a verdict: a countdown fault
    /// that never fired (`FILE:LINE: steps[i]: killController.afterWrites never fired: ...`).
    pub notes: Vec<String>,
}

/// How to run a scenario, beyond the reconciler.
#[derive(Clone, Default)]
pub struct RunOptions {
    /// Overrides the file's seed (default 1).
    pub seed: Option<u64>,
    /// Record the run's change points into [`RunReport::timeline`]. Observation only: the
    /// trace, and so its hash, is the same either way.
    pub timeline: bool,
    /// Told where the run is every `PROGRESS_EVERY` events (a long run's progress bar).
    /// Observation only.
    pub progress: Option<ProgressHook>,
}

/// What a run's progress hook is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The step running (0-based), or `steps` once the steps are done (convergence).
    pub step: usize,
    pub steps: usize,
    pub now_ms: u64,
    pub events: u64,
}

pub type ProgressHook = Arc<dyn Fn(&Progress) + Send + Sync>;

/// How often (in events) a run's progress hook is called.
pub const PROGRESS_EVERY: u64 = 1 << 10;

impl RunReport {
    /// The distinct invariants that broke, sorted.
    pub fn violated(&self) -> BTreeSet<String> {
        self.violations
            .iter()
            .map(|v| v.invariant.to_string())
            .collect()
    }

    /// The command that replays this run, each argument quoted for a POSIX shell where it
    /// needs it (a file name or reconciler spec with spaces, `;`, `$` or quotes is pasted as
    /// one word and never runs anything).
    pub fn replay_command(&self, path: &Path) -> String {
        format!(
            "lws-sim run {} --seed {} --reconciler {}",
            shell_word(&path.display().to_string()),
            self.seed,
            shell_word(&self.reconciler)
        )
    }
}

/// `s` as one word of a POSIX shell: as it is when it holds only characters no shell treats
/// specially, else in single quotes (a `'` inside written `'\''`).
pub fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./:=,@%+-".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Why a run could not be carried out: bad input discovered while running (exit status 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError(pub String);

/// Why a run ended before its last step: bad input (`RunError`, exit 2), or a run limit, already
/// recorded as a `liveness` violation (the run still reports, exit 1).
pub enum Halt {
    Bad(RunError),
    Limit,
}

impl Halt {
    /// In words, for a front end that keeps running after the world stopped (`serve`).
    pub fn message(&self) -> String {
        match self {
            Halt::Bad(e) => e.0.clone(),
            Halt::Limit => "a run limit stopped the world (see the liveness violation)".into(),
        }
    }
}

impl From<RunError> for Halt {
    fn from(e: RunError) -> Halt {
        Halt::Bad(e)
    }
}

/// Where a run is, for its progress hook.
#[derive(Default)]
struct RunAt {
    /// The step running, or the number of steps once they are done.
    step: usize,
    steps: usize,
    /// The event count the hook was last told.
    told: u64,
}

/// A scenario being run: the world and the invariant checker (`serve` drives one too).
pub struct Runner {
    pub world: World,
    pub checker: Checker,
    /// The run limits on events and pods (`Caps::DEFAULT` unless a test lowers them).
    caps: Caps,
    progress: Option<ProgressHook>,
    /// Where the run is, for `progress`.
    at: RunAt,
    /// What the run is doing, for a `liveness` report: the manifests, a step, convergence.
    doing: String,
    /// The step running, as `file:line: steps[i]`, for rejections it meets.
    step_at: Option<String>,
    /// The rejection the running step's `expectError` asks for, and whether it came.
    expecting: Option<ExpectedError>,
    /// The UID each object had when a `delete` or `deletePod` step last deleted it, or (its
    /// namespace's pods and StatefulSets) when a `crashContainer` step last crashed a container
    /// there: what `recreated: true` compares with.
    deleted_uids: BTreeMap<(KindId, String, String), String>,
    /// The step (`file:line: steps[i]`) that last armed each countdown fault.
    armed: BTreeMap<Trigger, String>,
}

/// An `expectError`: the code and message substring a write must be rejected with.
struct ExpectedError {
    code: Option<u16>,
    message: String,
    /// The write was refused (as expected or not, which `kubectl_result` reports).
    met: bool,
}

impl ExpectedError {
    fn matches(&self, e: &crate::api::ApiError) -> bool {
        self.code.is_none_or(|c| c == e.code) && e.to_string().contains(&self.message)
    }

    fn text(&self) -> String {
        let code = self.code.map_or("an error".to_string(), |c| c.to_string());
        match self.message.is_empty() {
            true => code,
            false => format!("{code} containing {:?}", self.message),
        }
    }
}

impl Runner {
    /// A runner over `world` with the scenario's invariants, judged as `profile`'s release
    /// hashes revisions.
    pub fn new(s: &Scenario, profile: &Profile, world: World) -> Runner {
        Runner {
            world,
            checker: Checker::new(s.invariants.iter().cloned()).for_profile(profile),
            caps: Caps::DEFAULT,
            progress: None,
            at: RunAt {
                steps: s.steps.len(),
                ..RunAt::default()
            },
            doing: "the controller was starting".into(),
            step_at: None,
            expecting: None,
            deleted_uids: BTreeMap::new(),
            armed: BTreeMap::new(),
        }
    }

    /// Every `PROGRESS_EVERY` events, tell the progress hook where the run is (once per count:
    /// `limits` may be asked again before the next event).
    fn tell_progress(&mut self) {
        let events = self.world.event_count;
        let Some(hook) = &self.progress else { return };
        if !events.is_multiple_of(PROGRESS_EVERY) || events == self.at.told {
            return;
        }
        self.at.told = events;
        hook(&Progress {
            step: self.at.step,
            steps: self.at.steps,
            now_ms: self.world.now_ms,
            events,
        });
    }

    /// A run limit hit: the world stopped (livelock, horizon) or the event cap passed. Records
    /// the `liveness` violation and ends the run (README, "Limits").
    fn limits(&mut self) -> Result<(), Halt> {
        self.tell_progress();
        let why = match self.world.stopped() {
            Some(stop) => stop.to_string(),
            None if self.world.event_count > self.caps.events => format!(
                "more than {} events (the event cap): a runaway loop",
                self.caps.events
            ),
            None if self.world.api.pods.len() > self.caps.pods => format!(
                "more than {} pods in the world (the simulator's limit on all pods at once)",
                self.caps.pods
            ),
            None => return Ok(()),
        };
        let msg = format!(
            "the run hit a run limit at t={}: {why}; while {}",
            crate::time::fmt_ms(self.world.now_ms),
            self.doing
        );
        self.checker
            .external(&self.world.api, invariants::LIVENESS, msg);
        Err(Halt::Limit)
    }

    /// Step the world to `deadline`, checking the invariants after every event.
    pub fn advance_to(&mut self, deadline: u64) -> Result<(), Halt> {
        self.advance_to_within(deadline, u64::MAX).map(|_| ())
    }

    /// `advance_to`, but at most `max_steps` steps: `Ok(false)` when it stopped short of
    /// `deadline` (the clock at the last step), so a caller serving clients can answer them
    /// between slices of a long catch-up.
    pub fn advance_to_within(&mut self, deadline: u64, max_steps: u64) -> Result<bool, Halt> {
        // Writes made by a step itself are observed before anything else happens.
        self.checker.observe(&self.world.api);
        let mut steps = 0;
        while self.world.step(deadline) {
            self.checker.observe(&self.world.api);
            self.limits()?;
            steps += 1;
            if steps >= max_steps {
                return Ok(false);
            }
        }
        self.world.run_until(deadline);
        self.limits().map(|()| true)
    }

    /// Step until `done` holds or `timeout_ms` passes.
    fn advance_until(
        &mut self,
        timeout_ms: u64,
        done: impl Fn(&World, &Checker) -> bool,
    ) -> Result<bool, Halt> {
        let deadline = self.world.now_ms.saturating_add(timeout_ms);
        self.checker.observe(&self.world.api);
        // Every condition a step waits on is a function of the API's objects and Events (and
        // of the checker's model of them): asked again only once a write or an Event has
        // changed them, so a large `match` costs O(writes), not O(events).
        let mut asked_at = None;
        loop {
            let rv = (
                self.world.api.resource_version(),
                self.world.api.events.version(),
            );
            if asked_at != Some(rv) {
                if done(&self.world, &self.checker) {
                    return Ok(true);
                }
                asked_at = Some(rv);
            }
            if !self.world.step(deadline) {
                self.world.run_until(deadline);
                self.limits()?;
                return Ok(done(&self.world, &self.checker));
            }
            self.checker.observe(&self.world.api);
            self.limits()?;
        }
    }

    /// Run one external event now.
    fn fire(&mut self, e: Event) -> Result<(), Halt> {
        let now = self.world.now_ms;
        self.world.schedule(now, e);
        self.advance_to(now)
    }

    /// The highest container restart count of a pod (0 if it does not exist).
    fn restart_count(&self, namespace: &str, pod: &str) -> i32 {
        let Some(p) = self.world.api.try_get::<Pod>(namespace, pod) else {
            return 0;
        };
        let statuses = p
            .status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref());
        statuses
            .into_iter()
            .flatten()
            .map(|c| c.restart_count)
            .max()
            .unwrap_or(0)
    }

    fn node_of(&self, sel: &NodeSel) -> Result<String, String> {
        match sel {
            NodeSel::Node(n) => Ok(n.clone()),
            NodeSel::NodeOf { namespace, pod: p } => {
                let pod = self
                    .world
                    .api
                    .try_get::<Pod>(namespace, p)
                    .ok_or_else(|| format!("nodeOf: pod {p} does not exist"))?;
                let node = k8s::node_name(&pod);
                if node.is_empty() {
                    return Err(format!("nodeOf: pod {p} is not scheduled"));
                }
                Ok(node.to_string())
            }
        }
    }

    /// A fault aimed at a pod that is not there (deleted, or not yet scheduled) does nothing;
    /// the trace says so. Faults are timing-dependent, so this is not a scenario error.
    fn skipped(&mut self, step: &str, why: &str) {
        self.world
            .api
            .trace_external("step", step, "", "", format!("skipped: {why}"));
    }

    fn pods_on(&self, node: &str) -> Vec<ObjectRef> {
        self.world
            .api
            .list::<Pod>(None, &crate::api::Selector::everything())
            .iter()
            .filter(|p| k8s::node_name(p) == node)
            .map(|p| ObjectRef::of(&p.metadata))
            .collect()
    }

    /// Apply one manifest. While the LWS webhook is unreachable (its controller pod is down)
    /// the apply is retried every second, as a deploy pipeline would, for up to two minutes.
    pub fn apply_manifest(&mut self, source: &str, m: &Manifest) -> Result<(), Halt> {
        let mut attempts = 0;
        let r = loop {
            let api = &mut self.world.api;
            let r = match m {
                Manifest::LeaderWorkerSet(o) => kubectl_apply(api, (**o).clone()),
                Manifest::StatefulSet(o) => kubectl_apply(api, (**o).clone()),
                Manifest::Service(o) => kubectl_apply(api, (**o).clone()),
                Manifest::Pod(o) => kubectl_apply(api, (**o).clone()),
                Manifest::PodDisruptionBudget(o) => kubectl_apply(api, (**o).clone()),
                Manifest::DisaggregatedSet(o) => kubectl_apply(api, (**o).clone()),
                Manifest::PodGroup(o) => kubectl_apply(api, (**o).clone()),
            };
            let webhook_down = r
                .as_ref()
                .is_err_and(|e| e.message.contains("failed calling webhook"));
            if !webhook_down || attempts >= 120 {
                break r;
            }
            attempts += 1;
            let t = self.world.now_ms + 1_000;
            self.advance_to(t)?;
        };
        if let Err(e) = &r {
            self.limits_refusal(e, &format!("apply {} {:?}", m.kind(), m.name()))?;
        }
        if let (Err(e), Some(x)) = (&r, self.expecting.as_mut()) {
            x.met = true;
            if x.matches(e) {
                let what = format!("{} {}: rejected as expected: {e}", m.kind(), m.name());
                self.world
                    .api
                    .trace_external("step", "expectError", "", "", what);
                return Ok(());
            }
            // Refused, if not as expected: a `check` violation, as for `patch` and `scale`.
            let what = format!(
                "apply {} {:?}: {e} (expected a rejection with {})",
                m.kind(),
                m.name(),
                x.text()
            );
            let message = self.at_step(what);
            self.checker
                .external(&self.world.api, invariants::CHECK, message);
            return Ok(());
        }
        r.map_err(|e| {
            let what = format!("{} {:?} was rejected: {e}", m.kind(), m.name());
            // The manifest's own line of the first field the API server named, if it has one.
            let line = first_field(&e).and_then(|f| {
                let text = load::read_again(source)?;
                manifest::rejected_line(&text, m.kind(), &m.name(), f)
            });
            let source = match line {
                Some(l) => format!("{source}:{l}"),
                None => source.to_string(),
            };
            Halt::Bad(RunError(match &self.step_at {
                Some(at) => format!("{at}: apply {source}: {what}"),
                None => format!("{source}: {what}"),
            }))
        })
    }

    /// Run one step: the handler of each step and fault.
    pub fn run_step(&mut self, step: &Step) -> Result<(), Halt> {
        if !step.is_passive() {
            self.checker.close_quiet_window();
        }
        let now = self.world.now_ms;
        match step {
            Step::Apply { source, objects } => self.apply(source, objects),
            Step::Patch {
                kind,
                namespace,
                name,
                merge,
                status,
            } => self.patch(*kind, namespace, name, merge, *status),
            Step::Scale {
                kind,
                namespace,
                name,
                replicas,
            } => self.scale(*kind, namespace, name, *replicas),
            Step::Delete {
                kind,
                namespace,
                name,
                propagation,
            } => self.delete(*kind, namespace, name, *propagation),
            Step::Wait(ms) => self.advance_to(now.saturating_add(*ms)),
            Step::WaitFor { target, timeout_ms } => self.wait_for(target, *timeout_ms),
            Step::Check { what, holds_ms } => self.check(what, *holds_ms),
            Step::KillController { after_writes } => {
                self.checker.open_quiet_window(now);
                match after_writes {
                    Some(n) => self.arm(
                        Trigger::KillAfterWrites,
                        Event::KillControllerAfterWrites(*n),
                    ),
                    None => self.fire(Event::KillController),
                }
            }
            Step::Resync { after_reconciles } => {
                self.checker.open_quiet_window(now);
                match after_reconciles {
                    Some(n) => self.arm(
                        Trigger::ResyncAfterReconciles,
                        Event::ResyncAfterReconciles(*n),
                    ),
                    None => self.fire(Event::Resync),
                }
            }
            Step::HoldWatchEvent(n) => self.arm(Trigger::HoldWatchEvent, Event::HoldWatchEvent(*n)),
            Step::StaleRead(n) => self.arm(Trigger::StaleRead, Event::StaleRead(*n)),
            Step::DrainNode { node, replace } => self.drain_node(node, *replace, now),
            Step::FailNode(node) => self.fail_node(node, now),
            Step::Cordon(node) => self.cordon(node, Event::Cordon),
            Step::Uncordon(node) => self.cordon(node, Event::Uncordon),
            Step::CrashContainer { namespace, pod } => self.crash_container(namespace, pod, now),
            Step::DeletePod {
                namespace,
                pod,
                grace_period_seconds,
            } => self.delete_pod(namespace, pod, *grace_period_seconds, now),
            Step::Fault(f) => self.fire(Event::Fault(f.clone())),
            Step::Rejected {
                step,
                code,
                message,
            } => self.rejected(step, *code, message),
        }
    }

    /// A write with `expectError`: run it; success is a `check` violation naming the step.
    fn rejected(&mut self, step: &Step, code: Option<u16>, message: &str) -> Result<(), Halt> {
        self.expecting = Some(ExpectedError {
            code,
            message: message.to_string(),
            met: false,
        });
        let r = self.run_step(step);
        let x = self.expecting.take().expect("set above");
        if r.is_ok() && !x.met {
            let message = self.at_step(format!(
                "expected a rejection with {}, but the write succeeded",
                x.text()
            ));
            self.checker
                .external(&self.world.api, invariants::CHECK, message);
        }
        r
    }

    /// `kubectl patch --type merge`.
    fn patch(
        &mut self,
        kind: KindId,
        namespace: &str,
        name: &str,
        merge: &Value,
        status: bool,
    ) -> Result<(), Halt> {
        let now = self.world.now_ms;
        let api = &mut self.world.api;
        let r = if status {
            with_kind!(kind, K => api.merge_patch_status::<K>("kubectl", namespace, name, merge).map(|_| ()))
        } else {
            with_kind!(kind, K => api.merge_patch::<K>("kubectl", namespace, name, merge).map(|_| ()))
        };
        self.kubectl_result(r, || format!("patch {kind} {name} failed"))?;
        self.advance_to(now)
    }

    /// `kubectl scale lws`: a write of the `/scale` subresource, which the webhooks never see.
    fn scale(
        &mut self,
        kind: KindId,
        namespace: &str,
        name: &str,
        replicas: i32,
    ) -> Result<(), Halt> {
        let now = self.world.now_ms;
        let api = &mut self.world.api;
        let replicas = i64::from(replicas);
        let r = with_kind!(kind, K => api
            .scale::<K>("kubectl", namespace, name, replicas, None)
            .map(|_| ()));
        self.kubectl_result(r, || format!("scale {kind}/{name} failed"))?;
        self.advance_to(now)
    }

    /// `kubectl delete`, with `--cascade` as given.
    fn delete(
        &mut self,
        kind: KindId,
        namespace: &str,
        name: &str,
        propagation: Option<Propagation>,
    ) -> Result<(), Halt> {
        let now = self.world.now_ms;
        if kind == KindId::Node {
            // A deleted Node's pods are lost (PodGC deletes them): to the checker, a fault on
            // them, as `failNode` is.
            let pods = self.pods_on(name);
            self.checker
                .on_fault(&FaultEffect::NodeFailed { pods }, now);
        }
        // A deleted pod, or the pods a deleted StatefulSet takes with it, are disrupted as by
        // `deletePod`: a group restart they cause is owed.
        let cascades = propagation != Some(Propagation::Orphan);
        let pods = match kind {
            KindId::Pod => vec![ObjectRef::new(namespace, name)],
            KindId::StatefulSet if cascades => self.pods_of_statefulset(namespace, name),
            _ => Vec::new(),
        };
        if !pods.is_empty() {
            self.checker
                .on_fault(&FaultEffect::PodsDisrupted { pods }, now);
        }
        self.remember_uid(kind, namespace, name);
        let opts = DeleteOptions {
            propagation,
            ..Default::default()
        };
        let r = with_kind!(kind, K => self.world.api.delete::<K>("kubectl", namespace, name, &opts).map(|_| ()));
        self.kubectl_result(r, || format!("delete {kind} {name} failed"))?;
        self.advance_to(now)
    }

    /// `kubectl apply -f`: each object in turn.
    fn apply(&mut self, source: &str, objects: &[Manifest]) -> Result<(), Halt> {
        let now = self.world.now_ms;
        // The file name only: a trace must not depend on where the scenario lives.
        let file = Path::new(source)
            .file_name()
            .map(|f| f.to_string_lossy().to_string());
        let file = file.unwrap_or_else(|| source.to_string());
        self.world
            .api
            .trace_external("step", "apply", "", &file, String::new());
        for m in objects {
            self.apply_manifest(source, m)?;
        }
        self.advance_to(now)
    }

    /// A kubectl command that failed is a `check` violation, not a scenario error, unless the
    /// step's `expectError` asked for this rejection, or the simulator's own limits refused it
    /// (bad input: `limits_refusal`).
    fn kubectl_result(
        &mut self,
        r: Result<(), crate::api::ApiError>,
        what: impl FnOnce() -> String,
    ) -> Result<(), Halt> {
        // (`what` is only built for a failure.)
        let Err(e) = r else {
            return Ok(());
        };
        let what = what();
        self.limits_refusal(&e, &what)?;
        if let Some(x) = self.expecting.as_mut().filter(|x| x.matches(&e)) {
            x.met = true;
            let what = format!("{what}: rejected as expected: {e}");
            self.world
                .api
                .trace_external("step", "expectError", "", "", what);
            return Ok(());
        }
        let mut message = format!("{what}: {e}");
        if let Some(x) = self.expecting.as_mut() {
            // Refused, if not as expected: reported here, not again as a success.
            x.met = true;
            message.push_str(&format!(" (expected a rejection with {})", x.text()));
        }
        let message = self.at_step(message);
        self.checker
            .external(&self.world.api, invariants::CHECK, message);
        Ok(())
    }

    /// A write the simulator's limits refused (`limits::install_limits`): only a step that
    /// expects a rejection gets one past the load-time checks. It is bad input, not the
    /// rejection the step expects: the simulator cannot tell what the API server would answer.
    fn limits_refusal(&self, e: &crate::api::ApiError, what: &str) -> Result<(), Halt> {
        if !e.message.contains(limits::LIMITS_HOOK) {
            return Ok(());
        }
        let at = self.step_at.clone().unwrap_or_default();
        Err(Halt::Bad(RunError(format!("{at}: {what}: {e}"))))
    }

    /// Fire the event that arms a countdown fault, remembering the step that armed it.
    fn arm(&mut self, trigger: Trigger, event: Event) -> Result<(), Halt> {
        let at = self.at_step(String::new());
        let at = at.trim_end_matches([':', ' ']).to_string();
        self.armed.insert(trigger, at);
        self.fire(event)
    }

    /// A note for each countdown fault that never fired, naming the step that armed it.
    fn unfired_notes(&self) -> Vec<String> {
        let Some(c) = &self.world.controller else {
            return Vec::new();
        };
        c.unfired()
            .into_iter()
            .map(|(t, left)| {
                let (step, counts) = t.describe();
                let at = self.armed.get(&t).map_or("", String::as_str);
                format!("{at}: {step} never fired: the run ended {left} {counts} short of it")
            })
            .collect()
    }

    /// `message` prefixed with the running step's `FILE:LINE: steps[i]`, so a failed `check` or
    /// `waitFor` says which one it was. Only the file's name: a violation's text is part of the
    /// run's report and picture, which must not depend on the directory the file was run from
    /// (fuzz's shards and their merge).
    fn at_step(&self, message: String) -> String {
        match &self.step_at {
            Some(at) => {
                let at = at.rsplit(['/', '\\']).next().unwrap_or(at);
                format!("{at}: {message}")
            }
            None => message,
        }
    }

    fn wait_for(&mut self, target: &WaitTarget, timeout_ms: u64) -> Result<(), Halt> {
        let resolved = match target {
            WaitTarget::Object(m) => match self.resolve_recreated(m, true) {
                Ok(m) => WaitTarget::Object(m),
                Err(message) => {
                    let message = self.at_step(message);
                    self.checker
                        .external(&self.world.api, invariants::CHECK, message);
                    return Ok(());
                }
            },
            other => other.clone(),
        };
        let target = &resolved;
        if self.advance_until(timeout_ms, |w, c| wait_target_met(w, c, target))? {
            return Ok(());
        }
        let what = match target {
            WaitTarget::Available => "the LeaderWorkerSet to be Available".to_string(),
            WaitTarget::RolloutComplete => "the rollout to complete".to_string(),
            WaitTarget::Object(m) => format!("{} {}", m.describe(), m.wanted()),
        };
        let msg = self.at_step(format!(
            "waited {} for {what}; state: {}",
            crate::time::fmt_ms(timeout_ms),
            match target {
                // What a check would say of it now: the count found, the first field that differs.
                WaitTarget::Object(m) => {
                    let why = m.matching(&self.world.api).err().unwrap_or_default();
                    let named = format!("{}: ", m.describe());
                    why.strip_prefix(&named).unwrap_or(&why).to_string()
                }
                _ => stuck_state(&self.world, &self.checker),
            }
        ));
        self.checker
            .external(&self.world.api, invariants::TIMEOUT, msg);
        Ok(())
    }

    /// `check`: the condition holds now, and with `holds` after every event for that long.
    fn check(&mut self, m: &ObjectMatch, holds_ms: u64) -> Result<(), Halt> {
        let m = &match self.resolve_recreated(m, false) {
            Ok(m) => m,
            Err(message) => {
                let message = self.at_step(message);
                self.checker
                    .external(&self.world.api, invariants::CHECK, message);
                return Ok(());
            }
        };
        if let Err(message) = m.matching(&self.world.api) {
            let message = self.at_step(message);
            self.checker
                .external(&self.world.api, invariants::CHECK, message);
            return Ok(());
        }
        if holds_ms == 0 {
            return Ok(());
        }
        let broke = self.advance_until(holds_ms, |w, _| m.matching(&w.api).is_err())?;
        if broke {
            let why = m.matching(&self.world.api).err().unwrap_or_default();
            let message = self.at_step(format!(
                "held for less than {}: {why}",
                crate::time::fmt_ms(holds_ms)
            ));
            self.checker
                .external(&self.world.api, invariants::CHECK, message);
        }
        Ok(())
    }

    fn drain_node(&mut self, node: &NodeSel, replace: bool, now: u64) -> Result<(), Halt> {
        let n = match self.node_of(node) {
            Ok(n) => n,
            Err(m) => {
                self.skipped("drainNode", &m);
                return Ok(());
            }
        };
        let pods = self.pods_on(&n);
        self.checker
            .on_fault(&FaultEffect::PodsDisrupted { pods }, now);
        self.fire(Event::DrainNode { node: n, replace })
    }

    fn fail_node(&mut self, node: &NodeSel, now: u64) -> Result<(), Halt> {
        let n = match self.node_of(node) {
            Ok(n) => n,
            Err(m) => {
                self.skipped("failNode", &m);
                return Ok(());
            }
        };
        let pods = self.pods_on(&n);
        self.checker
            .on_fault(&FaultEffect::NodeFailed { pods }, now);
        self.fire(Event::FailNode(n))
    }

    /// `cordon` and `uncordon` (a skipped one is traced as `cordon` either way).
    fn cordon(&mut self, node: &NodeSel, event: fn(String) -> Event) -> Result<(), Halt> {
        match self.node_of(node) {
            Ok(n) => self.fire(event(n)),
            Err(m) => {
                self.skipped("cordon", &m);
                Ok(())
            }
        }
    }

    fn crash_container(&mut self, namespace: &str, pod: &str, now: u64) -> Result<(), Halt> {
        // A crash may recreate the whole group (RecreateGroupOnPodRestart): what was there
        // before it is what `recreated: true` asks to be replaced.
        self.remember_uids_in::<Pod>(namespace);
        self.remember_uids_in::<StatefulSet>(namespace);
        let target = ObjectRef::new(namespace, pod);
        let crash = FaultEffect::ContainerCrashing {
            pod: target.clone(),
        };
        self.checker.on_fault(&crash, now);
        let before = self.restart_count(namespace, pod);
        self.fire(Event::CrashContainer {
            namespace: namespace.to_string(),
            pod: pod.to_string(),
        })?;
        // A crash only counts if a container did restart (the pod was Running).
        if self.restart_count(namespace, pod) > before {
            let restarted = FaultEffect::ContainerRestarted { pod: target };
            self.checker.on_fault(&restarted, now);
        }
        Ok(())
    }

    fn remember_uid(&mut self, kind: KindId, namespace: &str, name: &str) {
        let ns = if kind.namespaced() { namespace } else { "" };
        if let Some(o) = object_json(&self.world.api, kind, ns, name) {
            let uid = o["metadata"]["uid"].as_str().unwrap_or("").to_string();
            self.deleted_uids
                .insert((kind, ns.to_string(), name.to_string()), uid);
        }
    }

    /// `remember_uid` for every object of kind `K` in `namespace`.
    fn remember_uids_in<K: crate::api::Kind>(&mut self, namespace: &str) {
        let all = self
            .world
            .api
            .list::<K>(Some(namespace), &crate::api::Selector::everything());
        for o in all {
            let meta = o.meta();
            let name = meta.name.clone().unwrap_or_default();
            let uid = meta.uid.clone().unwrap_or_default();
            self.deleted_uids
                .insert((K::ID, namespace.to_string(), name), uid);
        }
    }

    /// `m` as it is checked now: with `recreated`, the UID a step deleted filled in (no step
    /// deleted the object: an error, reported as the step's failure).
    /// `recreated: true` as a UID to differ from: the one the object had when a step last
    /// deleted it; for a `waitFor` (`waiting`) without such a step, the one it has now (the
    /// wait is for a replacement), and if there is none now, any object is new.
    fn resolve_recreated(&self, m: &ObjectMatch, waiting: bool) -> Result<ObjectMatch, String> {
        let (step::MatchKind::Api(kind), step::Target::Named(name)) = (m.kind, &m.target) else {
            return Ok(m.clone());
        };
        if !m.recreated {
            return Ok(m.clone());
        }
        let key = (kind, m.namespace.clone(), name.clone());
        if let Some(uid) = self.deleted_uids.get(&key) {
            return Ok(m.recreated_since(uid));
        }
        if !waiting {
            return Err(format!(
                "{kind} {name}: `recreated` but no earlier step deleted it (or crashed a container in its namespace)"
            ));
        }
        let now = m.kind.find(&self.world.api, &m.namespace, name);
        let uid = now
            .as_ref()
            .and_then(|o| o.pointer("/metadata/uid")?.as_str());
        Ok(m.recreated_since(uid.unwrap_or("")))
    }

    /// The pods a StatefulSet controls (by owner UID), in name order.
    fn pods_of_statefulset(&self, namespace: &str, name: &str) -> Vec<ObjectRef> {
        let Some(sts) = self.world.api.try_get::<StatefulSet>(namespace, name) else {
            return Vec::new();
        };
        let uid = sts.metadata.uid.clone();
        self.world
            .api
            .list::<Pod>(Some(namespace), &crate::api::Selector::everything())
            .iter()
            .filter(|p| {
                p.metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|o| Some(&o.uid) == uid.as_ref())
            })
            .map(|p| ObjectRef::of(&p.metadata))
            .collect()
    }

    fn delete_pod(
        &mut self,
        namespace: &str,
        pod: &str,
        grace_period_seconds: Option<i64>,
        now: u64,
    ) -> Result<(), Halt> {
        let pods = vec![ObjectRef::new(namespace, pod)];
        self.checker
            .on_fault(&FaultEffect::PodsDisrupted { pods }, now);
        self.remember_uid(KindId::Pod, namespace, pod);
        self.fire(Event::DeletePod {
            namespace: namespace.to_string(),
            pod: pod.to_string(),
            grace_period_seconds,
        })
    }
}

/// Create, or replace labels, annotations and spec of the live object (simplified
/// `kubectl apply`; docs/fidelity.md).
fn kubectl_apply<K: Kind>(api: &mut ApiServer, obj: K) -> Result<(), crate::api::ApiError> {
    let ns = obj
        .meta()
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let name = obj.meta().name.clone().unwrap_or_default();
    match api.try_get::<K>(&ns, &name) {
        None => api.create("kubectl", obj).map(|_| ()),
        Some(live) => {
            let mut v = serde_json::to_value(&obj).expect("objects encode");
            let mut merged = serde_json::to_value(&*live).expect("objects encode");
            if let Some(m) = merged.as_object_mut() {
                if let Some(spec) = v.get_mut("spec").map(Value::take) {
                    m.insert("spec".into(), spec);
                }
            }
            for key in ["labels", "annotations"] {
                if let Some(x) = v.pointer(&format!("/metadata/{key}")) {
                    merged["metadata"][key] = x.clone();
                }
            }
            let updated: K = serde_json::from_value(merged).expect("a merged object decodes");
            api.update("kubectl", updated).map(|_| ())
        }
    }
}

fn object_json(api: &ApiServer, kind: KindId, ns: &str, name: &str) -> Option<Value> {
    let ns = if kind.namespaced() { ns } else { "" };
    with_kind!(kind, K => api.try_get::<K>(ns, name).map(|o| serde_json::to_value(&*o).expect("objects encode")))
}

/// The objects of `kind` in `ns` (every one, for a cluster-scoped kind) carrying `labels`, in
/// name order.
fn objects_json(
    api: &ApiServer,
    kind: KindId,
    ns: &str,
    labels: &std::collections::BTreeMap<String, String>,
) -> Vec<Value> {
    let ns = kind.namespaced().then_some(ns);
    let sel = crate::api::Selector::labels(labels.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    with_kind!(kind, K => api
        .list::<K>(ns, &sel)
        .iter()
        .map(|o| serde_json::to_value(&**o).expect("objects encode"))
        .collect())
}

/// A pattern value that asks only whether a field is there: `null` (absent, or null) and
/// `{$exists: true|false}` (any value / absent). `Some(true)`: present.
fn field_rule(v: &Value) -> Option<bool> {
    match v {
        Value::Null => Some(false),
        Value::Object(m) if m.len() == 1 => m.get("$exists").and_then(Value::as_bool),
        _ => None,
    }
}

/// A zero value (`0`, `false`, `""`) in a pattern also matches an absent field: the API server
/// stores no `omitempty` field at its zero value (an LWS's `status.readyReplicas: 0` is not
/// there), and a Go client reads an absent field as zero. `null` asks for absence alone.
fn go_zero(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

/// Whether an absent field satisfies pattern `v`: a zero value (`go_zero`), or a map (not an
/// operator) each of whose keys asks for absence (`null`, `{$exists: false}`) or is itself
/// satisfied by absence: `annotations: {note: null}` holds where there are no annotations.
fn absent_ok(v: &Value) -> bool {
    match v {
        Value::Object(m) if !m.keys().any(|k| k.starts_with('$')) => m
            .values()
            .all(|x| field_rule(x) == Some(false) || absent_ok(x)),
        _ => go_zero(v),
    }
}

/// The key a pattern list is matched by, as Kubernetes merges such lists: `type` when every
/// item is an object with one (conditions), else `name` (containers, env, ports). Such a list
/// matches when each of its items matches the object's item with the same key, in any order,
/// other items ignored; any other list must match whole and in order.
fn list_key(items: &[Value]) -> Option<&'static str> {
    ["type", "name"]
        .into_iter()
        .find(|k| !items.is_empty() && items.iter().all(|i| i.get(k).is_some()))
}

/// The item of `list` whose `key` is `value`.
fn keyed<'a>(list: &'a [Value], key: &str, value: &Value) -> Option<&'a Value> {
    list.iter().find(|x| x.get(key) == Some(value))
}

/// The longest a `match` pattern is quoted in a report, in bytes.
const SHOWN_MAX: usize = 240;

/// A pattern as JSON for a report: whole up to `SHOWN_MAX` bytes, else cut there with its size,
/// so a huge pattern does not make a huge report.
pub(crate) fn shown(p: &Value) -> String {
    let text = p.to_string();
    if text.len() <= SHOWN_MAX {
        return text;
    }
    let cut = (0..=SHOWN_MAX)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    format!("{}… ({} bytes)", &text[..cut], text.len())
}

/// Where `obj` first fails `subset_match(pattern, obj)`: the field path (`.status.conditions[1]
/// .status`), what the pattern wants there and what the object has.
pub fn first_mismatch(pattern: &Value, obj: &Value, path: &str) -> Option<String> {
    if let Some(sub) = contained(pattern) {
        let at = if path.is_empty() { "." } else { path };
        return (!subset_match(pattern, obj)).then(|| {
            format!(
                "{at}: expected a string containing {sub:?}, found {}",
                shown(obj)
            )
        });
    }
    match (pattern, obj) {
        (Value::Object(p), Value::Object(o)) => p.iter().find_map(|(k, v)| {
            let at = format!("{path}.{k}");
            let found = o.get(k).filter(|x| !x.is_null());
            match (field_rule(v), found) {
                (Some(true), None) => Some(format!("{at}: expected a value, the field is absent")),
                (Some(false), Some(x)) => {
                    Some(format!("{at}: expected no field, found {}", shown(x)))
                }
                (Some(_), _) => None,
                (None, None) if absent_ok(v) => None,
                (None, None) => Some(format!("{at}: expected {}, the field is absent", shown(v))),
                (None, Some(x)) => match negated(v) {
                    Some(n) if subset_match(n, x) => Some(format!(
                        "{at}: expected anything but {}, found {}",
                        shown(n),
                        shown(x)
                    )),
                    Some(_) => None,
                    None => first_mismatch(v, x, &at),
                },
            }
        }),
        (Value::Array(p), Value::Array(o)) if list_key(p).is_some() => {
            let key = list_key(p)?;
            p.iter().find_map(|item| {
                let at = format!("{path}[{key}={}]", item[key]);
                match keyed(o, key, &item[key]) {
                    None => Some(format!("{at}: expected {}, no such item", shown(item))),
                    Some(x) => first_mismatch(item, x, &at),
                }
            })
        }
        (Value::Array(p), Value::Array(o)) if p.len() != o.len() => Some(format!(
            "{path}: expected a list of {} items, found {}: {}",
            p.len(),
            o.len(),
            shown(obj)
        )),
        (Value::Array(p), Value::Array(o)) => p
            .iter()
            .zip(o)
            .enumerate()
            .find_map(|(i, (a, b))| first_mismatch(a, b, &format!("{path}[{i}]"))),
        _ if subset_match(pattern, obj) => None,
        _ => Some(format!(
            "{}: expected {}, found {}",
            if path.is_empty() { "." } else { path },
            shown(pattern),
            shown(obj)
        )),
    }
}

/// `{$not: X}`: a field that is there and does not match X.
/// `{$contains: "text"}`: a string field that contains `text`.
fn contained(v: &Value) -> Option<&str> {
    match v {
        Value::Object(m) if m.len() == 1 => m.get("$contains").and_then(Value::as_str),
        _ => None,
    }
}

fn negated(v: &Value) -> Option<&Value> {
    match v {
        Value::Object(m) if m.len() == 1 => m.get("$not"),
        _ => None,
    }
}

/// Subset match: every key of the pattern matches (`null` and `{$exists: ..}` ask only whether
/// the field is there, `{$not: X}` that it is there and does not match X, `{$contains: "t"}`
/// that it is a string containing `t`); scalars equal; lists keyed by `type` or `name` item by item, any
/// other list element-wise with the same length.
pub fn subset_match(pattern: &Value, obj: &Value) -> bool {
    if let Some(sub) = contained(pattern) {
        return obj.as_str().is_some_and(|s| s.contains(sub));
    }
    match (pattern, obj) {
        (Value::Object(p), Value::Object(o)) => p.iter().all(|(k, v)| match field_rule(v) {
            Some(present) => present == o.get(k).is_some_and(|x| !x.is_null()),
            None => match negated(v) {
                Some(n) => o.get(k).is_some_and(|x| !subset_match(n, x)),
                None => match o.get(k).filter(|x| !x.is_null()) {
                    Some(x) => subset_match(v, x),
                    None => absent_ok(v),
                },
            },
        }),
        (Value::Array(p), Value::Array(o)) => match list_key(p) {
            Some(key) => p
                .iter()
                .all(|item| keyed(o, key, &item[key]).is_some_and(|x| subset_match(item, x))),
            None => p.len() == o.len() && p.iter().zip(o).all(|(a, b)| subset_match(a, b)),
        },
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (a, b) => a == b,
    }
}

/// Every LWS's status says Available.
fn lws_available(w: &World) -> bool {
    w.api
        .list::<LeaderWorkerSet>(None, &crate::api::Selector::everything())
        .iter()
        .all(|l| says_available(l))
}

/// The LWS's status has the condition Available=True.
fn says_available(l: &LeaderWorkerSet) -> bool {
    l.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == "Available" && c.status == "True")
    })
}

/// Rollout complete: for every LWS, every group on the latest revision and ready, no surge
/// group, and the status, written since the spec last changed, says Available with counts
/// equal to `replicas`. An LWS being deleted: its deletion has completed.
pub fn rollout_complete(w: &World, c: &Checker) -> bool {
    match c.rollout_state() {
        RolloutState::Incomplete => return false,
        RolloutState::Gone => return true,
        RolloutState::GroupsDone => {}
    }
    lws_available(w)
        && w.api
            .list::<LeaderWorkerSet>(None, &crate::api::Selector::everything())
            .iter()
            .all(|l| {
                let s = l.status.clone().unwrap_or_default();
                // Groups below the LWS's own partition (v0.7.0+) stay on their revision.
                let kept = l
                    .rolling_update()
                    .partition
                    .unwrap_or(0)
                    .clamp(0, l.replicas());
                s.ready_replicas == l.replicas() && s.updated_replicas >= l.replicas() - kept
            })
}

/// Why the rollout is not complete: the groups' state, and, once every group is done, where the
/// LWS status disagrees with the world (the status counts and conditions rollout-complete needs).
fn stuck_state(w: &World, c: &Checker) -> String {
    let mut s = c.stuck_state();
    for l in w
        .api
        .list::<LeaderWorkerSet>(None, &crate::api::Selector::everything())
    {
        if !says_available(&l) {
            let ready = l.status.as_ref().map_or(0, |s| s.ready_replicas);
            s.push_str(&format!(
                "; LWS {}/{} is not Available ({ready} of {} groups ready)",
                lws::k8s::namespace(&l.metadata),
                lws::k8s::name(&l.metadata),
                l.replicas()
            ));
        }
    }
    let last_error = w
        .controller
        .as_ref()
        .and_then(|ctl| ctl.outcomes.last_failure.as_ref());
    if let Some(e) = last_error {
        let at = crate::time::fmt_ms(e.at_ms);
        s.push_str(&format!("; last controller error (t={at}): {e}"));
    }
    let refused = w
        .statefulsets
        .as_ref()
        .and_then(|c| c.last_failed_create.as_ref());
    if let Some((at_ms, m)) = refused {
        let at = crate::time::fmt_ms(*at_ms);
        s.push_str(&format!(
            "; the StatefulSet controller's last pod creation failed (t={at}): {m}"
        ));
    }
    if !c.rollout_complete_groups() {
        return s;
    }
    for l in w
        .api
        .list::<LeaderWorkerSet>(None, &crate::api::Selector::everything())
    {
        let st = l.status.clone().unwrap_or_default();
        let conditions: Vec<String> = st
            .conditions
            .iter()
            .filter(|c| c.status == "True")
            .map(|c| c.type_.clone())
            .collect();
        s.push_str(&format!(
            "; but the status of LWS {} disagrees: readyReplicas {}, updatedReplicas {} of {} groups, True conditions {conditions:?}",
            lws::k8s::name(&l.metadata),
            st.ready_replicas,
            st.updated_replicas,
            l.replicas()
        ));
    }
    s
}

fn wait_target_met(w: &World, c: &Checker, t: &WaitTarget) -> bool {
    match t {
        WaitTarget::Available => lws_available(w) && c.all_available(),
        WaitTarget::RolloutComplete => rollout_complete(w, c),
        WaitTarget::Object(m) => m.matching(&w.api).is_ok(),
    }
}

/// Run a scenario against a reconciler: `reconciler` (a spec to parse) or the file's.
pub fn run(
    s: &Scenario,
    reconciler: Option<&str>,
    seed: Option<u64>,
) -> Result<RunReport, RunError> {
    let profile = s.reconciler(reconciler).map_err(RunError)?;
    run_with(s, &profile, seed)
}

/// The controller's configuration for a scenario.
fn controller_config(s: &Scenario, profile: &Profile) -> ControllerConfig {
    let mut cc = ControllerConfig::new(profile.clone());
    let c = &s.spec.controller;
    if let Some(p) = c.sync_period {
        cc.sync_period_ms = p.0;
    }
    let range = |r: Option<spec::Range>, d: (u64, u64)| r.map(|r| (r.0, r.1)).unwrap_or(d);
    cc.api_latency_ms = range(c.api_latency, cc.api_latency_ms);
    cc.watch_lag_ms = range(c.watch_lag, cc.watch_lag_ms);
    cc.restart_delay_ms = range(c.restart_delay, cc.restart_delay_ms);
    cc.track_previous = s.steps.iter().any(|st| matches!(st, Step::StaleRead(_)));
    cc
}

/// Run a scenario against a parsed reconciler; `seed` overrides the file's (default 1).
pub fn run_with(s: &Scenario, profile: &Profile, seed: Option<u64>) -> Result<RunReport, RunError> {
    run_with_options(
        s,
        profile,
        RunOptions {
            seed,
            timeline: false,
            progress: None,
        },
    )
}

/// Run a scenario against a parsed reconciler, with options.
pub fn run_with_options(
    s: &Scenario,
    profile: &Profile,
    opts: RunOptions,
) -> Result<RunReport, RunError> {
    run_limited_with(s, profile, opts, Caps::DEFAULT)
}

/// The run limits a world is held to: events per run and pods at once.
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    pub events: u64,
    pub pods: usize,
}

impl Caps {
    /// `EVENT_COUNT_MAX` and `WORLD_PODS_MAX`.
    pub const DEFAULT: Caps = Caps {
        events: EVENT_COUNT_MAX,
        pods: limits::WORLD_PODS_MAX,
    };
}

/// `run_with` under lower run limits than `Caps::DEFAULT` (tests).
pub fn run_limited(
    s: &Scenario,
    profile: &Profile,
    seed: Option<u64>,
    caps: Caps,
) -> Result<RunReport, RunError> {
    let opts = RunOptions {
        seed,
        timeline: false,
        progress: None,
    };
    run_limited_with(s, profile, opts, caps)
}

fn run_limited_with(
    s: &Scenario,
    profile: &Profile,
    opts: RunOptions,
    caps: Caps,
) -> Result<RunReport, RunError> {
    let seed = opts.seed.or(s.spec.seed).unwrap_or(1);
    let mut world = World::new(seed, s.cluster_config().map_err(RunError)?);
    world.install_controller(controller_config(s, profile));
    limits::install_limits(&mut world.api);
    let mut runner = Runner::new(s, profile, world);
    runner.caps = caps;
    runner.progress = opts.progress;
    if opts.timeline {
        runner.checker.record_timeline();
    }
    match runner.run_all(s) {
        Ok(()) => runner.checker.finish(&runner.world.api),
        // The limit is the verdict: nothing after it is judged.
        Err(Halt::Limit) => {}
        Err(Halt::Bad(e)) => return Err(e),
    }
    Ok(runner.report(s, profile, seed))
}

impl Runner {
    /// The manifests, the steps, then the healed phase.
    fn run_all(&mut self, s: &Scenario) -> Result<(), Halt> {
        // Let the controller come up before the manifests are applied, as a user would.
        self.advance_to(0)?;
        self.doing = "the scenario's manifests were being applied".into();
        for (i, (file, objects)) in s.manifests.iter().enumerate() {
            for m in objects.iter() {
                self.apply_manifest(file, m)
                    .map_err(|h| s.at_manifest(i, h))?;
            }
        }
        for (i, step) in s.steps.iter().enumerate() {
            self.at.step = i;
            self.doing = s.step_context(i);
            self.step_at = Some(match s.lines.step(i) {
                Some(l) => format!("{}:{l}: steps[{i}]", s.path.display()),
                None => format!("{}: steps[{i}]", s.path.display()),
            });
            self.run_step(step)?;
        }
        self.step_at = None;
        self.at.step = s.steps.len();
        self.checker.close_quiet_window();
        if self.checker.is_enabled(invariants::CONVERGENCE) {
            let within = s.spec.converge_within.map_or(DEFAULT_CONVERGE_MS, |d| d.0);
            self.doing = format!(
                "the rollout was converging after the last step (convergeWithin {})",
                crate::time::fmt_ms(within)
            );
            self.converge(within)?;
        }
        Ok(())
    }
}

impl Runner {
    /// The healed phase: the rollout must complete within `within`.
    fn converge(&mut self, within: u64) -> Result<(), Halt> {
        if !self.advance_until(within, rollout_complete)? {
            let msg = format!(
                "the rollout did not complete within {} after the last step: {}",
                crate::time::fmt_ms(within),
                stuck_state(&self.world, &self.checker)
            );
            self.checker
                .external(&self.world.api, invariants::CONVERGENCE, msg);
        }
        Ok(())
    }

    fn report(self, s: &Scenario, profile: &Profile, seed: u64) -> RunReport {
        let notes = self.unfired_notes();
        let Runner {
            mut world,
            mut checker,
            ..
        } = self;
        let timeline = checker.take_timeline().map(|mut tl| {
            tl.end_ms = world.now_ms;
            tl.annotate(&world.api.trace.entries);
            for v in &checker.violations {
                tl.violation(v.at_ms, v.invariant.as_str(), &v.message);
            }
            tl
        });
        let controller_log = world
            .controller
            .as_mut()
            .map(|c| std::mem::take(&mut c.events))
            .unwrap_or_default();
        let controller_writes = world.controller.as_ref().map_or(0, |c| c.writes);
        let controller_reconciles = world
            .controller
            .as_ref()
            .map_or(0, |c| c.reconciles.iter().sum());
        let controller_events = world.controller.as_ref().map_or(0, |c| c.events_delivered);
        RunReport {
            scenario: s.spec.name.clone(),
            reconciler: profile.name.clone(),
            seed,
            min_available: checker.min_available(),
            floor: checker.floor(),
            violations: checker.violations,
            trace_hash: world.api.trace.hash(),
            sim_ms: world.now_ms,
            events: world.event_count,
            trace: world.api.trace,
            controller_log,
            controller_writes,
            controller_reconciles,
            controller_events,
            timeline,
            notes,
        }
    }
}

/// Does a run meet its expectation? `Err` says how it did not.
pub fn judge(report: &RunReport, expected: &Expectation) -> Result<(), String> {
    let got = report.violated();
    let want: BTreeSet<String> = expected.invariants().iter().cloned().collect();
    // One run of a rate: holds, or breaks exactly the set, as the range allows.
    let met = match expected {
        Expectation::Rate(_, lo, hi) => (got.is_empty() && *lo == 0) || (got == want && *hi > 0),
        _ => got == want,
    };
    if met {
        return Ok(());
    }
    let mut msg = format!(
        "{} under {}: expected {:?}, got {:?}",
        report.scenario, report.reconciler, want, got
    );
    for v in &report.violations {
        msg.push_str(&format!("\n{}", v.report()));
    }
    Err(msg)
}

/// Kinds a manifest can create, for `--help` and errors.
pub fn manifest_kinds() -> [&'static str; 6] {
    [
        LeaderWorkerSet::ID.as_str(),
        StatefulSet::ID.as_str(),
        Service::ID.as_str(),
        Pod::ID.as_str(),
        PodDisruptionBudget::ID.as_str(),
        lws::disagg::api::DisaggregatedSet::ID.as_str(),
    ]
}
