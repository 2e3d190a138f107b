//! The scheduler (kube-scheduler, reduced to the filters LWS pods meet; docs/fidelity.md): binds each pending pod to a schedulable node that matches
//! its nodeSelector, passes the required inter-pod affinity and anti-affinity filter, and has a
//! free pod slot, least-loaded first, ties by name. A pod that fits nowhere gets
//! `PodScheduled=False/Unschedulable` and stays Pending until a node or pod changes.
//! A tainted or cordoned node takes only pods that tolerate its NoSchedule and NoExecute
//! taints (the TaintToleration and NodeUnschedulable filters).
//! Simplification (docs/fidelity.md): capacity is a pod count; preferred affinity, node affinity
//! and topology spread are not evaluated.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Node, Pod, PodAffinityTerm, Taint, Toleration};
use lws::k8s;

use crate::api::{set_pod_condition, ApiServer, EventType, Key, Selector};
use crate::informer::Informer;
use crate::lookup::LookupMap;

mod gang;

pub const ACTOR: &str = "default-scheduler";

pub struct Scheduler {
    pods: Informer<Pod>,
    nodes: Informer<Node>,
    dirty: bool,
    /// Pods waiting for a node, kept in step with the pod deltas.
    pending: BTreeSet<Key>,
    /// Pods counted against a node's slots, and the slots used per node.
    placed: BTreeMap<Key, String>,
    used: LookupMap<String, u32>,
    /// Schedulable nodes ordered by (slots used, name): the least-loaded candidate first, so a
    /// placement costs the nodes it skips, not the cluster size.
    ranked: BTreeSet<(u32, String)>,
    /// Pod slots of each schedulable node.
    capacity: LookupMap<String, u32>,
    /// The taints a pod must tolerate to be placed on each schedulable node that has any: its
    /// NoSchedule and NoExecute taints, and `node.kubernetes.io/unschedulable` when cordoned.
    taints: LookupMap<String, Vec<Taint>>,
    /// Placed pods with required pod anti-affinity terms, which every placement must respect.
    anti_placed: BTreeSet<Key>,
    /// While Volcano's pods wait for their gang: when the failed cycle ran, and the API's
    /// resourceVersion after it (`GangWait::due_ms`).
    gang_wait: Option<GangWait>,
}

/// Volcano runs a scheduling cycle every `schedulePeriod`; a cycle that starts from what the
/// last failed one saw places nothing and writes nothing, so only the cycles after a change
/// are run: the first period boundary (counted from the failed cycle) at or after the moment
/// the API's resourceVersion moved (a pod, node or PodGroup written; the scheduler's own
/// informer deliveries run a cycle at once anyway). A gang that waits for nothing that will
/// change costs no events, however long the scenario waits.
#[derive(Clone, Copy, Debug)]
struct GangWait {
    failed_at_ms: u64,
    seen_rv: u64,
}

impl GangWait {
    /// The next cycle that could place something: none while nothing changed.
    fn due_ms(&self, api: &ApiServer) -> Option<u64> {
        if api.resource_version() == self.seen_rv {
            return None;
        }
        let period = gang::SCHEDULE_PERIOD_MS;
        let since = api.now_ms().saturating_sub(self.failed_at_ms);
        let periods = since.div_ceil(period).max(1);
        Some(crate::time::after(
            self.failed_at_ms,
            periods.saturating_mul(period),
        ))
    }
}

impl Scheduler {
    /// `lags_ms`: the pod and node informers' watch lags.
    pub fn new(api: &ApiServer, lags_ms: [u64; 2]) -> Scheduler {
        let mut s = Scheduler {
            pods: Informer::start(api, lags_ms[0]),
            nodes: Informer::start(api, lags_ms[1]),
            dirty: true,
            pending: BTreeSet::new(),
            placed: BTreeMap::new(),
            used: LookupMap::default(),
            ranked: BTreeSet::new(),
            capacity: LookupMap::default(),
            taints: LookupMap::default(),
            anti_placed: BTreeSet::new(),
            gang_wait: None,
        };
        let nodes: Vec<std::sync::Arc<Node>> = s.nodes.all().cloned().collect();
        for n in &nodes {
            s.node_changed(k8s::name(&n.metadata), Some(n));
        }
        for d in s.pods.initial_deltas() {
            s.account(&d.obj);
        }
        s
    }

    pub fn next_wakeup_ms(&self, api: &ApiServer) -> Option<u64> {
        let dirty = self.dirty.then_some(api.now_ms());
        [
            self.pods.next_due_ms(api),
            self.nodes.next_due_ms(api),
            dirty,
            self.gang_wait.and_then(|w| w.due_ms(api)),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn used_of(&self, node: &str) -> u32 {
        self.used.get(node).copied().unwrap_or(0)
    }

    /// Re-rank a node after its Node object or its load changed.
    fn node_changed(&mut self, name: &str, node: Option<&Node>) {
        let used = self.used_of(name);
        self.ranked.remove(&(used, name.to_string()));
        self.capacity.remove(name);
        self.taints.remove(name);
        if let Some(n) = node.filter(|n| ready(n)) {
            self.capacity.insert(name.to_string(), capacity(n));
            self.ranked.insert((used, name.to_string()));
            let taints = filter_taints(n);
            if !taints.is_empty() {
                self.taints.insert(name.to_string(), taints);
            }
        }
    }

    fn add_used(&mut self, node: &str, delta: i64) {
        let before = self.used_of(node);
        let after = (i64::from(before) + delta).max(0) as u32;
        self.used.insert(node.to_string(), after);
        if self.ranked.remove(&(before, node.to_string())) {
            self.ranked.insert((after, node.to_string()));
        }
    }

    fn unaccount(&mut self, key: &Key) {
        self.pending.remove(key);
        self.anti_placed.remove(key);
        if let Some(node) = self.placed.remove(key) {
            self.add_used(&node, -1);
        }
    }

    /// Count a pod against its node, or remember it as pending.
    fn account(&mut self, pod: &Pod) {
        let key = crate::api::key_of(pod);
        let node = k8s::node_name(pod);
        let counted = !node.is_empty() && !matches!(k8s::phase(pod), "Succeeded" | "Failed");
        if counted && self.placed.get(&key).is_some_and(|n| n == node) {
            // Still counted on the same node (a status change): the load is as it was; only
            // the anti-affinity membership can change.
            if required_terms(pod).1.is_empty() {
                self.anti_placed.remove(&key);
            } else {
                self.anti_placed.insert(key);
            }
            return;
        }
        self.unaccount(&key);
        if node.is_empty() {
            if !k8s::is_terminating(&pod.metadata) {
                self.pending.insert(key);
            }
        } else if counted {
            self.add_used(node, 1);
            if !required_terms(pod).1.is_empty() {
                self.anti_placed.insert(key.clone());
            }
            self.placed.insert(key, node.to_string());
        }
    }

    fn node_labels(&self, name: &str) -> Option<&BTreeMap<String, String>> {
        self.nodes
            .get("", name)
            .and_then(|n| n.metadata.labels.as_ref())
    }

    /// The first of `node`'s taints the pod does not tolerate, if any.
    fn untolerated<'a>(&'a self, node: &str, tolerations: &[Toleration]) -> Option<&'a Taint> {
        self.taints.get(node)?.iter().find(|t| {
            !tolerations
                .iter()
                .any(|tol| super::nodes::tolerates(tol, t))
        })
    }

    /// The least-loaded schedulable node whose taints the pod tolerates, with a free slot,
    /// whose labels match `selector` and pass the inter-pod affinity filter.
    fn pick(
        &self,
        selector: &BTreeMap<String, String>,
        affinity: Option<&InterPodAffinity>,
        tolerations: &[Toleration],
    ) -> Option<String> {
        let empty = BTreeMap::new();
        self.ranked
            .iter()
            .filter(|(used, name)| *used < self.capacity.get(name).copied().unwrap_or(0))
            .filter(|(_, name)| self.untolerated(name, tolerations).is_none())
            .find(|(_, name)| {
                let labels = self.node_labels(name).unwrap_or(&empty);
                selector.iter().all(|(k, v)| labels.get(k) == Some(v))
                    && affinity.is_none_or(|a| a.fits(labels))
            })
            .map(|(_, name)| name.clone())
    }

    /// Why no node fits, as kube-scheduler words its `FitError` ("0/8 nodes are available: 2
    /// Too many pods, 6 node(s) didn't match pod affinity rules."): each node's first failing
    /// filter, counted, reasons sorted (kubernetes `pkg/scheduler/framework/types.go`
    /// `FitError.Error`; no preemption modelled, so no preemption clause).
    fn unschedulable_message(
        &self,
        selector: &BTreeMap<String, String>,
        affinity: Option<&InterPodAffinity>,
        tolerations: &[Toleration],
    ) -> String {
        let mut reasons: BTreeMap<Cow<'_, str>, u32> = BTreeMap::new();
        let mut total = 0;
        let empty = BTreeMap::new();
        for n in self.nodes.all() {
            total += 1;
            let name = k8s::name(&n.metadata);
            let labels = n.metadata.labels.as_ref().unwrap_or(&empty);
            let untolerated = self.untolerated(name, tolerations);
            let reason: Cow<'_, str> = match (self.capacity.get(name), untolerated) {
                (None, _) if n.spec.as_ref().and_then(|s| s.unschedulable) == Some(true) => {
                    "node(s) were unschedulable".into()
                }
                (None, _) => "node(s) had untolerated taint(s) or were not ready".into(),
                // NodeUnschedulable, then TaintToleration (`node(s) had untolerated taint
                // {key: value}`, pkg/scheduler/framework/plugins/tainttoleration).
                (Some(_), Some(t)) if t.key == UNSCHEDULABLE => "node(s) were unschedulable".into(),
                (Some(_), Some(t)) => format!(
                    "node(s) had untolerated taint {{{}: {}}}",
                    t.key,
                    t.value.as_deref().unwrap_or("")
                )
                .into(),
                // NodeAffinity runs before NodeResourcesFit (the default plugins' filter order).
                (Some(_), None) if !selector.iter().all(|(k, v)| labels.get(k) == Some(v)) => {
                    "node(s) didn't match Pod's node affinity/selector".into()
                }
                (Some(cap), None) if self.used_of(name) >= *cap => "Too many pods".into(),
                (Some(_), None) => match affinity.map(|a| a.verdict(labels)) {
                    Some(Err(r)) => r.into(),
                    _ => continue,
                },
            };
            *reasons.entry(reason).or_default() += 1;
        }
        let parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
        format!("0/{total} nodes are available: {}.", parts.join(", "))
    }

    /// `PreFilter` of the InterPodAffinity plugin for `pod`: `None` when neither the pod nor any
    /// placed pod has a required term, so nothing is to be filtered.
    fn inter_pod_affinity(&self, pod: &Pod) -> Option<InterPodAffinity> {
        let (affinity, anti) = required_terms(pod);
        if affinity.is_empty() && anti.is_empty() && self.anti_placed.is_empty() {
            return None;
        }
        let mut state = InterPodAffinity {
            self_match: affinity.iter().all(|t| t.matches(pod)),
            affinity,
            anti,
            ..InterPodAffinity::default()
        };
        let existing: Vec<&Key> = if state.affinity.is_empty() && state.anti.is_empty() {
            self.anti_placed.iter().collect()
        } else {
            self.placed.keys().collect()
        };
        for key in existing {
            let (Some(node), Some(other)) = (self.placed.get(key), self.pods.get(&key.0, &key.1))
            else {
                continue;
            };
            let Some(labels) = self.node_labels(node) else {
                continue;
            };
            state.count_existing(other, labels, pod);
        }
        Some(state)
    }

    pub fn step(&mut self, api: &mut ApiServer, now_ms: u64) {
        let pod_deltas = self.pods.poll(api, now_ms);
        let node_deltas = self.nodes.poll(api, now_ms);
        for d in &node_deltas {
            let name = k8s::name(&d.obj.metadata).to_string();
            let node = (d.ty != EventType::Deleted).then(|| (*d.obj).clone());
            self.node_changed(&name, node.as_ref());
        }
        for d in &pod_deltas {
            match d.ty {
                EventType::Deleted => self.unaccount(&crate::api::key_of(&*d.obj)),
                _ => self.account(&d.obj),
            }
        }
        if self
            .gang_wait
            .and_then(|w| w.due_ms(api))
            .is_some_and(|t| t <= now_ms)
        {
            self.gang_wait = None;
            self.dirty = true;
        }
        if pod_deltas.is_empty() && node_deltas.is_empty() && !self.dirty {
            return;
        }
        self.dirty = false;
        let pending: Vec<Key> = self.pending.iter().cloned().collect();
        // Volcano's pods, by (namespace, PodGroup): placed as gangs after the default
        // scheduler's own.
        let mut gangs: BTreeMap<(String, String), Vec<Key>> = BTreeMap::new();
        for key in pending {
            let Some(pod) = self.pods.get(&key.0, &key.1).cloned() else {
                continue;
            };
            match scheduler_name(&pod) {
                DEFAULT_SCHEDULER => {
                    self.schedule_one(api, &key, &pod, ACTOR, now_ms);
                }
                // Volcano runs only where it is installed (`gang-scheduling=volcano`).
                gang::VOLCANO if api.volcano_crds => match gang::group_of(&pod) {
                    Some(group) => {
                        let group = (key.0.clone(), group.to_string());
                        gangs.entry(group).or_default().push(key);
                    }
                    None => {
                        self.schedule_one(api, &key, &pod, gang::VOLCANO, now_ms);
                    }
                },
                // No scheduler of that name runs (Volcano included, in a cluster without it):
                // the pod stays Pending, untouched.
                _ => {}
            }
        }
        let mut waiting = false;
        for ((namespace, group), keys) in gangs {
            waiting |= !self.schedule_gang(api, &namespace, &group, &keys, now_ms);
        }
        if waiting {
            self.gang_wait = Some(GangWait {
                failed_at_ms: now_ms,
                seen_rv: api.resource_version(),
            });
        }
    }

    /// Filter the nodes for one pod and bind it to the best (as `actor`), or mark it
    /// unschedulable with kube-scheduler's reasons. Whether it was bound.
    fn schedule_one(
        &mut self,
        api: &mut ApiServer,
        key: &Key,
        pod: &Pod,
        actor: &str,
        now_ms: u64,
    ) -> bool {
        match self.fit(pod) {
            Some(node) => {
                if let Ok(bound) = api.bind(actor, &key.0, &key.1, &node) {
                    self.account(&bound);
                }
                true
            }
            None => {
                let why = || self.why_unschedulable(pod);
                mark_unschedulable(api, key, pod, actor, why, now_ms);
                false
            }
        }
    }

    /// The node `pod` would be bound to now, if any (no write).
    fn fit(&self, pod: &Pod) -> Option<String> {
        let (selector, tolerations) = placement_terms(pod);
        let affinity = self.inter_pod_affinity(pod);
        self.pick(selector, affinity.as_ref(), tolerations)
    }

    /// Why `fit` found no node (kube-scheduler's `FitError` text).
    fn why_unschedulable(&self, pod: &Pod) -> String {
        let (selector, tolerations) = placement_terms(pod);
        let affinity = self.inter_pod_affinity(pod);
        self.unschedulable_message(selector, affinity.as_ref(), tolerations)
    }
}

const DEFAULT_SCHEDULER: &str = "default-scheduler";

/// A pod's nodeSelector and tolerations (none when unset).
fn placement_terms(pod: &Pod) -> (&BTreeMap<String, String>, &[Toleration]) {
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    let spec = pod.spec.as_ref();
    let selector = spec
        .and_then(|s| s.node_selector.as_ref())
        .unwrap_or(&EMPTY);
    let tolerations = spec
        .and_then(|s| s.tolerations.as_deref())
        .unwrap_or_default();
    (selector, tolerations)
}

/// `spec.schedulerName`, defaulted.
fn scheduler_name(pod: &Pod) -> &str {
    match pod.spec.as_ref().and_then(|s| s.scheduler_name.as_deref()) {
        None | Some("") => DEFAULT_SCHEDULER,
        Some(n) => n,
    }
}

/// `PodScheduled=False/Unschedulable` with the message `why` gives, written once: a pod that
/// already has it is left as it is.
fn mark_unschedulable(
    api: &mut ApiServer,
    key: &Key,
    pod: &Pod,
    actor: &str,
    why: impl FnOnce() -> String,
    now_ms: u64,
) {
    let already = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| {
            c.iter()
                .any(|c| c.type_ == "PodScheduled" && c.status == "False")
        });
    if already {
        return;
    }
    let Some(live) = api.try_get::<Pod>(&key.0, &key.1) else {
        return;
    };
    let mut p = (*live).clone();
    set_pod_condition(
        &mut p,
        "PodScheduled",
        "False",
        Some("Unschedulable"),
        now_ms,
    );
    let conditions = p.status.as_mut().and_then(|s| s.conditions.as_mut());
    if let Some(c) = conditions.and_then(|c| c.iter_mut().find(|c| c.type_ == "PodScheduled")) {
        c.message = Some(why());
    }
    let _ = api.update_status(actor, p);
}

/// A required pod affinity term resolved against its pod (kube-scheduler `framework.AffinityTerm`).
struct Term {
    selector: Selector,
    /// `None`: every namespace (an empty `namespaceSelector`).
    namespaces: Option<Vec<String>>,
    /// Namespaces picked by a non-empty `namespaceSelector`, judged on the label every namespace
    /// carries, `kubernetes.io/metadata.name`.
    namespace_selector: Option<Selector>,
    topology_key: String,
}

impl Term {
    /// `newAffinityTerm` (pkg/scheduler/framework/types.go): no namespaces and no namespace
    /// selector mean the pod's own namespace.
    fn new(t: &PodAffinityTerm, owner_namespace: &str) -> Term {
        let selector = Selector::from_label_selector(t.label_selector.as_ref())
            .unwrap_or_else(|_| Selector::nothing());
        let listed = t.namespaces.clone().unwrap_or_default();
        let ns_selector = t.namespace_selector.as_ref().map(|s| {
            Selector::from_label_selector(Some(s)).unwrap_or_else(|_| Selector::nothing())
        });
        let (namespaces, namespace_selector) = match ns_selector {
            None if listed.is_empty() => (Some(vec![owner_namespace.to_string()]), None),
            None => (Some(listed), None),
            Some(s) if s == Selector::everything() => (None, None),
            Some(s) => (Some(listed), Some(s)),
        };
        Term {
            selector,
            namespaces,
            namespace_selector,
            topology_key: t.topology_key.clone(),
        }
    }

    /// `AffinityTerm.Matches`: the pod's namespace is one of the term's, and its labels match.
    fn matches(&self, pod: &Pod) -> bool {
        let ns = k8s::namespace(&pod.metadata);
        let in_namespaces = match &self.namespaces {
            None => true,
            Some(list) => {
                list.iter().any(|n| n == ns)
                    || self.namespace_selector.as_ref().is_some_and(|s| {
                        let labels = [("kubernetes.io/metadata.name".to_string(), ns.to_string())];
                        s.matches(Some(&labels.into()))
                    })
            }
        };
        in_namespaces && self.selector.matches(pod.metadata.labels.as_ref())
    }
}

/// The pod's required pod affinity and anti-affinity terms (`requiredDuringScheduling...`).
fn required_terms(pod: &Pod) -> (Vec<Term>, Vec<Term>) {
    let ns = k8s::namespace(&pod.metadata);
    let affinity = pod.spec.as_ref().and_then(|s| s.affinity.as_ref());
    let resolve = |terms: Option<&Vec<PodAffinityTerm>>| -> Vec<Term> {
        terms
            .into_iter()
            .flatten()
            .map(|t| Term::new(t, ns))
            .collect()
    };
    (
        resolve(
            affinity
                .and_then(|a| a.pod_affinity.as_ref())
                .and_then(|a| {
                    a.required_during_scheduling_ignored_during_execution
                        .as_ref()
                }),
        ),
        resolve(
            affinity
                .and_then(|a| a.pod_anti_affinity.as_ref())
                .and_then(|a| {
                    a.required_during_scheduling_ignored_during_execution
                        .as_ref()
                }),
        ),
    )
}

/// A topology domain: (topology key, the node label's value).
type Domain = (String, String);

/// The InterPodAffinity filter's pre-filter state for one pod (kubernetes
/// `pkg/scheduler/framework/plugins/interpodaffinity/filtering.go`): placed pods matching all
/// the pod's affinity terms, placed pods matching each anti-affinity term, and placed pods whose
/// own anti-affinity terms match the pod, counted per topology domain.
#[derive(Default)]
struct InterPodAffinity {
    affinity: Vec<Term>,
    anti: Vec<Term>,
    /// The pod matches all its own affinity terms (the first pod of a group may go anywhere).
    self_match: bool,
    affinity_counts: BTreeMap<Domain, u32>,
    anti_affinity_counts: BTreeMap<Domain, u32>,
    existing_anti_affinity_counts: BTreeMap<Domain, u32>,
}

impl InterPodAffinity {
    /// `getIncomingAffinityAntiAffinityCounts` and `getExistingAntiAffinityCounts` for one
    /// placed pod on a node with `labels`.
    fn count_existing(&mut self, other: &Pod, labels: &BTreeMap<String, String>, pod: &Pod) {
        let add = |counts: &mut BTreeMap<Domain, u32>, key: &str| {
            if let Some(v) = labels.get(key) {
                *counts.entry((key.to_string(), v.clone())).or_insert(0) += 1;
            }
        };
        // updateWithAffinityTerms: only a pod matching every term counts, for every term.
        if !self.affinity.is_empty() && self.affinity.iter().all(|t| t.matches(other)) {
            for t in &self.affinity {
                add(&mut self.affinity_counts, &t.topology_key);
            }
        }
        // updateWithAntiAffinityTerms: each term on its own.
        for t in &self.anti {
            if t.matches(other) {
                add(&mut self.anti_affinity_counts, &t.topology_key);
            }
        }
        for t in required_terms(other).1 {
            if t.matches(pod) {
                add(&mut self.existing_anti_affinity_counts, &t.topology_key);
            }
        }
    }

    /// `Filter`: `satisfyExistingPodsAntiAffinity`, `satisfyPodAntiAffinity`,
    /// `satisfyPodAffinity` on a node with `labels`.
    fn fits(&self, labels: &BTreeMap<String, String>) -> bool {
        self.verdict(labels).is_ok()
    }

    /// As `fits`, with the filter's reason for a node that does not pass.
    fn verdict(&self, labels: &BTreeMap<String, String>) -> Result<(), &'static str> {
        const EXISTING_ANTI: &str = "node(s) didn't satisfy existing pods anti-affinity rules";
        const ANTI: &str = "node(s) didn't match pod anti-affinity rules";
        const AFFINITY: &str = "node(s) didn't match pod affinity rules";
        let count = |counts: &BTreeMap<Domain, u32>, key: &str| {
            labels
                .get(key)
                .and_then(|v| counts.get(&(key.to_string(), v.clone())))
                .copied()
                .unwrap_or(0)
        };
        let existing_anti = self
            .existing_anti_affinity_counts
            .keys()
            .any(|(k, _)| count(&self.existing_anti_affinity_counts, k) > 0);
        if existing_anti {
            return Err(EXISTING_ANTI);
        }
        if self
            .anti
            .iter()
            .any(|t| count(&self.anti_affinity_counts, &t.topology_key) > 0)
        {
            return Err(ANTI);
        }
        let mut pods_exist = true;
        for t in &self.affinity {
            if !labels.contains_key(&t.topology_key) {
                return Err(AFFINITY); // all topology labels must exist on the node
            }
            if count(&self.affinity_counts, &t.topology_key) == 0 {
                pods_exist = false;
            }
        }
        // The first pod of a series with affinity to itself: no pod anywhere matches, and the
        // pod matches its own terms.
        if pods_exist || (self.affinity_counts.is_empty() && self.self_match) {
            Ok(())
        } else {
            Err(AFFINITY)
        }
    }
}

/// The taint a cordoned node carries for the NodeUnschedulable filter
/// (`v1.TaintNodeUnschedulable`).
const UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// A node that is Ready: one that is not takes no pod (the node lifecycle controller's
/// `not-ready`/`unreachable` NoSchedule taints; a simplification: a pod tolerating them, as
/// `operator: Exists` with no key does, would be placed there upstream).
fn ready(n: &Node) -> bool {
    n.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
        .is_none_or(|c| c.status == "True")
}

/// The taints a pod must tolerate to be placed on `n`: `node.kubernetes.io/unschedulable`
/// (NoSchedule) when it is cordoned (the NodeUnschedulable filter), then its NoSchedule and
/// NoExecute taints (TaintToleration; PreferNoSchedule only scores).
fn filter_taints(n: &Node) -> Vec<Taint> {
    let spec = n.spec.as_ref();
    let cordoned = spec.and_then(|s| s.unschedulable).unwrap_or(false);
    let cordon = cordoned.then(|| Taint {
        key: UNSCHEDULABLE.into(),
        effect: "NoSchedule".into(),
        ..Default::default()
    });
    let own = spec
        .and_then(|s| s.taints.as_ref())
        .into_iter()
        .flatten()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .cloned();
    cordon.into_iter().chain(own).collect()
}

/// `status.allocatable.pods`, the node's pod slots.
pub fn capacity(n: &Node) -> u32 {
    n.status
        .as_ref()
        .and_then(|s| s.allocatable.as_ref())
        .and_then(|a| a.get("pods"))
        .and_then(|q| q.0.parse().ok())
        .unwrap_or(110)
}
