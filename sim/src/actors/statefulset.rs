//! The StatefulSet controller (kubernetes `pkg/controller/statefulset`:
//! `stateful_set.go` and `stateful_set_control.go` @0004b149, ~v1.35; docs/fidelity.md).
//!
//! One sync per due key, reading pods, sets and revisions from its own lagging caches and writing
//! through the API server. No creation expectations: a stale cache leads to AlreadyExists and a
//! rate-limited retry, as upstream.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{
    ControllerRevision, RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetStatus,
};
use k8s_openapi::api::core::v1::{
    PersistentVolumeClaimVolumeSource, Pod, PodSpec, PodTemplateSpec, Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use lws::k8s;
use serde_json::{json, Value};

use crate::api::selector::Selector;
use crate::api::{
    ApiServer, DeleteOptions, EventType, Key, Reason, Shared, STATEFULSET_REPLICAS_MAX,
};
use crate::informer::Informer;
use crate::queue::WorkQueue;
use crate::time::{after, from_time, secs_to_ms};

pub const ACTOR: &str = "statefulset-controller";
pub const REVISION_LABEL: &str = "controller-revision-hash";
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
const HASH_LABEL: &str = "controller.kubernetes.io/hash";

pub struct StatefulSetController {
    sets: Informer<StatefulSet>,
    pods: Informer<Pod>,
    revisions: Informer<ControllerRevision>,
    queue: WorkQueue,
    /// Template hash per (set uid, generation): a template is hashed once, not every sync.
    hashes: BTreeMap<String, NewRevision>,
    /// Decoded templates of stored revisions, each held with the revision it was decoded from
    /// (an unchanged revision is the same `Shared` in the cache, and one held here is never
    /// freed and reused): a revision is decoded once, not on every sync of a rollout.
    templates: Vec<(Shared<ControllerRevision>, Option<Arc<PodTemplateSpec>>)>,
    /// Whether `MaxUnavailableStatefulSet` is on (cluster setting).
    max_unavailable_gate: bool,
    /// 1.37+: replace unavailable old pods first (see `FeatureGates`).
    unavailable_first: bool,
    /// The last pod creation the API server refused: when, and the `FailedCreate` event's
    /// message. A stuck rollout's report quotes it (a template the pod validation refuses
    /// leaves the set without pods, and only this says why).
    pub last_failed_create: Option<(u64, String)>,
}

impl StatefulSetController {
    /// `lags_ms`: one watch lag per informer (sets, pods, revisions): caches of different
    /// kinds are skewed against each other, as in a real controller (each is its own client-go
    /// informer; `stateful_set.go` `NewStatefulSetController`).
    pub fn new(api: &ApiServer, lags_ms: [u64; 3]) -> StatefulSetController {
        let sets = Informer::start(api, lags_ms[0]);
        let mut queue = WorkQueue::default();
        for d in sets.initial_deltas() {
            queue.add(crate::api::key_of(&*d.obj), api.now_ms());
        }
        StatefulSetController {
            sets,
            pods: Informer::start(api, lags_ms[1]),
            revisions: Informer::start(api, lags_ms[2]),
            queue,
            hashes: BTreeMap::new(),
            templates: Vec::new(),
            max_unavailable_gate: api.gates.max_unavailable_statefulset,
            unavailable_first: api.gates.statefulset_replaces_unavailable_first,
            last_failed_create: None,
        }
    }

    pub fn next_wakeup_ms(&self, api: &ApiServer) -> Option<u64> {
        [
            self.sets.next_due_ms(api),
            self.pods.next_due_ms(api),
            self.revisions.next_due_ms(api),
            self.queue.next_due_ms(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    pub fn step(&mut self, api: &mut ApiServer, now_ms: u64) {
        self.handle_events(api, now_ms);
        let mut synced = BTreeSet::new();
        while let Some(key) = self.queue.pop_due(now_ms) {
            if !synced.insert(key.clone()) {
                // Already synced in this step against the same cache; try again next step.
                self.queue.add_after(key, after(now_ms, 1));
                continue;
            }
            let result = crate::probe::timed(crate::probe::Section::StatefulSetSync, || {
                self.sync(api, &key, now_ms)
            });
            match result {
                Ok(()) => self.queue.forget(&key),
                Err(()) => self.queue.add_rate_limited(key, now_ms),
            }
        }
    }

    fn handle_events(&mut self, api: &ApiServer, now_ms: u64) {
        for d in self.sets.poll(api, now_ms) {
            self.queue.add(crate::api::key_of(&*d.obj), now_ms);
        }
        for d in self.revisions.poll(api, now_ms) {
            if let Some(owner) = k8s::controller_of(&d.obj.metadata) {
                self.queue.add(
                    (
                        k8s::namespace(&d.obj.metadata).to_string(),
                        owner.name.clone(),
                    ),
                    now_ms,
                );
            }
        }
        for d in self.pods.poll(api, now_ms) {
            let meta = &d.obj.metadata;
            let Some(owner) = k8s::controller_of(meta).filter(|o| o.kind == "StatefulSet") else {
                continue;
            };
            let key = (k8s::namespace(meta).to_string(), owner.name.clone());
            // updatePod: ignore resyncs (same RV). On NotReady -> Ready with minReadySeconds,
            // also check availability after minReadySeconds + 1 s (stateful_set.go).
            if d.ty == EventType::Modified {
                let became_ready =
                    d.old.as_ref().is_some_and(|o| !k8s::is_ready(o)) && k8s::is_ready(&d.obj);
                let min_ready = self
                    .sets
                    .get(&key.0, &key.1)
                    .and_then(|s| s.spec.min_ready_seconds)
                    .unwrap_or(0);
                if became_ready && min_ready > 0 {
                    self.queue.add_after(
                        key.clone(),
                        after(now_ms, secs_to_ms(i64::from(min_ready) + 1)),
                    );
                }
            }
            self.queue.add(key, now_ms);
        }
    }

    /// `sync` + `UpdateStatefulSet` → `performUpdate` (kubernetes
    /// pkg/controller/statefulset/stateful_set.go and stateful_set_control.go @0004b149):
    /// revisions, `updateStatefulSet`, `updateStatefulSetStatus`, `truncateHistory`, then the
    /// `minReadySeconds` requeue of `sync`. `Err` requeues with backoff.
    fn sync(&mut self, api: &mut ApiServer, key: &Key, now_ms: u64) -> Result<(), ()> {
        let Some(set) = self.sets.get(&key.0, &key.1).cloned() else {
            return Ok(());
        };
        let adopted = self.adopt_orphans(api, &set)?;
        let (current_rev, update_rev) = self.revisions(api, &set)?;
        let mut s = self.set_sync(set, current_rev, update_rev, &adopted, now_ms);
        let mut status = compute_status(
            &s.set,
            s.slots
                .iter()
                .flatten()
                .chain(s.condemned.iter().map(|c| &c.1)),
            &s.current_rev,
            &s.update_rev,
            s.min_ready_s,
            now_ms,
        );
        if s.set.metadata.deletion_timestamp.is_none() {
            self.update_stateful_set(api, &mut s, &mut status)?;
        }
        complete_rolling_update(&s, &mut status);
        if !self.update_status(api, &s.set, &status)? {
            return Ok(());
        }
        self.truncate_history(api, &s.set, &status, &s.slots, &s.condemned)?;
        if s.min_ready_s > 0 && status.available_replicas.unwrap_or(0) != s.replicas {
            self.queue
                .add_after(key.clone(), after(now_ms, secs_to_ms(s.min_ready_s.into())));
        }
        Ok(())
    }

    /// The spec values one sync reads, and `updateStatefulSet`'s first step: the pods split into
    /// `replicas` (ordinals in `[start, start + spec.replicas)`) and `condemned` (the rest,
    /// highest ordinal first).
    fn set_sync(
        &self,
        set: Shared<StatefulSet>,
        current_rev: Revision,
        update_rev: Revision,
        adopted: &[Shared<Pod>],
        now_ms: u64,
    ) -> SetSync {
        let spec = &set.spec;
        let start = spec.ordinals.as_ref().and_then(|o| o.start).unwrap_or(0);
        let replicas = spec.replicas.unwrap_or(1);
        let strategy = spec.update_strategy.clone().unwrap_or_default();
        let strategy_type = strategy
            .type_
            .clone()
            .unwrap_or_else(|| "RollingUpdate".into());
        let rolling = strategy.rolling_update.clone();
        let partition = rolling.as_ref().and_then(|r| r.partition).unwrap_or(0);
        let set_uid = k8s::uid(&set.metadata).to_string();
        let name = k8s::name(&set.metadata).to_string();

        // Pods that belong to this set: controller ref UID (the cache's owner index, and the
        // pods this sync adopted, which the cache sees only when their watch events arrive)
        // and a `<set>-<ordinal>` name. Upstream lists the namespace and claims
        // (`getPodsForStatefulSet`); a pod whose labels stop matching is not released
        // (docs/fidelity.md).
        // The API server's validation keeps `replicas` at most `STATEFULSET_REPLICAS_MAX`; the
        // bound here only makes sure nothing allocates by an unvalidated number.
        let slot_count = replicas.clamp(0, STATEFULSET_REPLICAS_MAX) as usize;
        let mut slots: Vec<Option<Shared<Pod>>> = vec![None; slot_count];
        let mut condemned: Vec<(i32, Shared<Pod>)> = Vec::new();
        for pod in self.pods.owned_by(&set_uid).into_iter().chain(adopted) {
            let owned = k8s::controller_of(&pod.metadata).is_some_and(|o| o.uid == set_uid);
            let Some((parent, ord)) = k8s::parent_and_ordinal(k8s::name(&pod.metadata)) else {
                continue;
            };
            if !owned || parent != name {
                continue;
            }
            if ord >= start && ord < start.saturating_add(slot_count as i32) {
                slots[(ord - start) as usize] = Some(pod.clone());
            } else {
                condemned.push((ord, pod.clone()));
            }
        }
        condemned.sort_by_key(|c| std::cmp::Reverse(c.0));
        SetSync {
            start,
            replicas,
            min_ready_s: spec.min_ready_seconds.unwrap_or(0),
            monotonic: spec.pod_management_policy.as_deref() != Some("Parallel"),
            strategy_type,
            rolling,
            partition,
            now_ms,
            current_rev,
            update_rev,
            slots,
            condemned,
            set,
        }
    }

    /// `updateStatefulSet` after the pods are split: `processReplica` over the replicas, then
    /// `processCondemned`, then (RollingUpdate only, and only if neither stopped the sync) the
    /// update step, gated by `MaxUnavailableStatefulSet`.
    fn update_stateful_set(
        &mut self,
        api: &mut ApiServer,
        s: &mut SetSync,
        status: &mut StatefulSetStatus,
    ) -> Result<(), ()> {
        let first_unavailable = s
            .slots
            .iter()
            .flatten()
            .chain(s.condemned.iter().map(|c| &c.1))
            .find(|p| !s.available(p) || k8s::is_terminating(&p.metadata))
            .map(|p| k8s::name(&p.metadata).to_string());
        let stopped = self.process_replicas(api, s)?
            || self.process_condemned(api, s, first_unavailable.as_deref())?;
        if stopped || s.strategy_type != "RollingUpdate" {
            return Ok(());
        }
        if self.max_unavailable_gate {
            self.update_after_invariant_established(api, s, status)
        } else {
            self.legacy_rolling_update(api, s, status)
        }
    }

    /// `processReplica` for each slot in ordinal order: delete Failed/Succeeded pods, create
    /// missing ones at the revision `newVersionedStatefulSetPod` picks; in monotonic
    /// (OrderedReady) mode stop at the first of those or at an unhealthy pod. Returns whether
    /// the sync stops here.
    fn process_replicas(&mut self, api: &mut ApiServer, s: &mut SetSync) -> Result<bool, ()> {
        let (min_ready_s, now_ms, monotonic) = (s.min_ready_s, s.now_ms, s.monotonic);
        let available = |p: &Pod| is_available(p, min_ready_s, now_ms);
        for (i, slot) in s.slots.iter_mut().enumerate() {
            let ord = s.start.saturating_add(i as i32);
            if let Some(pod) = slot.as_ref() {
                let ph = k8s::phase(pod);
                if (ph == "Failed" || ph == "Succeeded") && !k8s::is_terminating(&pod.metadata) {
                    self.delete_pod(api, pod)?;
                    if monotonic {
                        return Ok(true);
                    }
                    continue;
                }
            } else {
                let use_current = s.strategy_type == "RollingUpdate"
                    && s.rolling.is_some()
                    && ord < s.start.saturating_add(s.partition);
                let rev = if use_current {
                    &s.current_rev
                } else {
                    &s.update_rev
                };
                let pod = new_pod(&s.set, ord, rev);
                let pod_name = k8s::name(&pod.metadata).to_string();
                match api.create(ACTOR, pod) {
                    Ok(p) => {
                        // A refusal that a later create got past no longer explains anything.
                        self.last_failed_create = None;
                        *slot = Some(p);
                    }
                    Err(e) if e.is(Reason::AlreadyExists) => return Err(()),
                    Err(e) => {
                        self.failed_create(api, &s.set, &pod_name, &e, now_ms);
                        return Err(());
                    }
                }
                if monotonic {
                    return Ok(true);
                }
                continue;
            }
            let pod = slot.as_ref().expect("slot filled above");
            if monotonic
                && (k8s::is_terminating(&pod.metadata)
                    || !k8s::is_running_and_ready(pod)
                    || !available(pod))
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `processCondemned`, highest ordinal first: delete each; in monotonic mode one per sync,
    /// waiting for terminating pods and for unhealthy ones other than `firstUnavailablePod`.
    /// Returns whether the sync stops here.
    fn process_condemned(
        &mut self,
        api: &mut ApiServer,
        s: &SetSync,
        first_unavailable: Option<&str>,
    ) -> Result<bool, ()> {
        for (_, pod) in &s.condemned {
            if k8s::is_terminating(&pod.metadata) {
                if s.monotonic {
                    return Ok(true);
                }
                continue;
            }
            let healthy = k8s::is_running_and_ready(pod) && s.available(pod);
            if s.monotonic && !healthy && first_unavailable != Some(k8s::name(&pod.metadata)) {
                return Ok(true);
            }
            self.delete_pod(api, pod)?;
            if s.monotonic {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `updateStatefulSetAfterInvariantEstablished` (gate `MaxUnavailableStatefulSet` on,
    /// 1.35/1.36): delete old pods from the highest ordinal down to the partition, up to
    /// `maxUnavailable` minus the replicas already unavailable.
    fn update_after_invariant_established(
        &mut self,
        api: &mut ApiServer,
        s: &SetSync,
        status: &mut StatefulSetStatus,
    ) -> Result<(), ()> {
        let max_u = s
            .rolling
            .as_ref()
            .and_then(|r| r.max_unavailable.as_ref())
            .map(|v| k8s::scaled_value(v, s.replicas, false).unwrap_or(1))
            .unwrap_or(1)
            .max(1);
        let unavailable_count = s.slots.iter().filter(|p| s.unavailable(p)).count() as i32;
        let mut budget = max_u - unavailable_count;
        if self.unavailable_first && !s.monotonic {
            // 1.37+ (PR #137666), phase 1: old pods already unavailable are
            // replaced at once; they cost no availability and no budget.
            for target in (s.lowest()..s.slots.len()).rev() {
                let Some(pod) = s.slots[target].clone() else {
                    continue;
                };
                let stale = s.is_old(&pod) && !k8s::is_terminating(&pod.metadata);
                if stale && s.unavailable(&s.slots[target]) {
                    self.delete_pod(api, &pod)?;
                    status.current_replicas = Some(status.current_replicas.unwrap_or(0) - 1);
                }
            }
        }
        // Then (every version) available old pods, up to the budget left.
        for target in (s.lowest()..s.slots.len()).rev() {
            if budget <= 0 {
                break;
            }
            let Some(pod) = s.slots[target].clone() else {
                continue;
            };
            if s.is_old(&pod) && !k8s::is_terminating(&pod.metadata) {
                self.delete_pod(api, &pod)?;
                status.current_replicas = Some(status.current_replicas.unwrap_or(0) - 1);
                budget -= 1;
            }
        }
        Ok(())
    }

    /// The update step with the gate off (`updateStatefulSet`'s legacy loop): one pod at a time,
    /// highest ordinal first, each waiting for the pods above it to be available.
    fn legacy_rolling_update(
        &mut self,
        api: &mut ApiServer,
        s: &SetSync,
        status: &mut StatefulSetStatus,
    ) -> Result<(), ()> {
        for target in (s.lowest()..s.slots.len()).rev() {
            let Some(pod) = s.slots[target].clone() else {
                break;
            };
            if s.is_old(&pod) && !k8s::is_terminating(&pod.metadata) {
                self.delete_pod(api, &pod)?;
                status.current_replicas = Some(status.current_replicas.unwrap_or(0) - 1);
                break;
            }
            if s.unavailable(&s.slots[target]) {
                break;
            }
        }
        Ok(())
    }

    /// `updateStatefulSetStatus`'s write: only if `inconsistentStatus`. Returns `false` when the
    /// set is gone (the sync ends quietly).
    fn update_status(
        &mut self,
        api: &mut ApiServer,
        set: &Shared<StatefulSet>,
        status: &StatefulSetStatus,
    ) -> Result<bool, ()> {
        if !inconsistent_status(set.status.as_ref(), status) {
            return Ok(true);
        }
        match api.update_status_of(ACTOR, set, |s| s.status = Some(status.clone())) {
            Ok(_) => Ok(true),
            Err(e) if e.is(Reason::NotFound) => Ok(false),
            Err(_) => Err(()),
        }
    }

    /// `recordPodEvent` for a failed create (kubernetes
    /// `pkg/controller/statefulset/stateful_pod_control.go`): a Warning `FailedCreate` event on
    /// the set, `create Pod <pod> in StatefulSet <set> failed error: <err>`. An injected API
    /// error is recorded too, as the real controller records any failure. (The
    /// `SuccessfulCreate` and `SuccessfulDelete` events are not recorded: docs/fidelity.md.)
    fn failed_create(
        &mut self,
        api: &mut ApiServer,
        set: &StatefulSet,
        pod: &str,
        e: &crate::api::ApiError,
        now_ms: u64,
    ) {
        let message = format!(
            "create Pod {pod} in StatefulSet {} failed error: {}",
            k8s::name(&set.metadata),
            e.message
        );
        let recorded = crate::api::events::Recorded {
            kind: "StatefulSet",
            api_version: "apps/v1",
            object: set.metadata.clone(),
            type_: "Warning".into(),
            reason: "FailedCreate".into(),
            message: message.clone(),
            controller: ACTOR,
            v1: None,
        };
        api.events.record(recorded, "", now_ms);
        self.last_failed_create = Some((now_ms, message));
    }

    /// The adoption half of `getPodsForStatefulSet`'s `ClaimPods` (kubernetes
    /// `pkg/controller/statefulset/stateful_set.go`, `pkg/controller/controller_ref_manager.go`):
    /// a pod of the namespace without a controller, named `<set>-<ordinal>` and matching the
    /// selector, is taken by a patch of its owner references (with its UID as a precondition),
    /// once a fresh read of the set shows it is the same set and not being deleted
    /// (`RecheckDeletionTimestamp`). A pod gone meanwhile is skipped; another error fails the
    /// sync. This is how a StatefulSet re-created after `kubectl delete --cascade=orphan`
    /// takes its pods back.
    fn adopt_orphans(
        &mut self,
        api: &mut ApiServer,
        set: &StatefulSet,
    ) -> Result<Vec<Shared<Pod>>, ()> {
        let meta = &set.metadata;
        if meta.deletion_timestamp.is_some() {
            return Ok(Vec::new());
        }
        let (ns, name, uid) = (k8s::namespace(meta), k8s::name(meta), k8s::uid(meta));
        let orphans = self.pods.orphans_in(ns);
        // No orphan, nothing to claim: the selector (copied out of the set) is built only
        // when there is one to match.
        if orphans.is_empty() {
            return Ok(Vec::new());
        }
        let Ok(selector) = Selector::from_label_selector(Some(&set.spec.selector)) else {
            return Ok(Vec::new());
        };
        let candidates: Vec<Shared<Pod>> = orphans
            .into_iter()
            .filter(|p| {
                let member = k8s::parent_and_ordinal(k8s::name(&p.metadata))
                    .is_some_and(|(parent, _)| parent == name);
                member
                    && !k8s::is_terminating(&p.metadata)
                    && selector.matches(p.metadata.labels.as_ref())
            })
            .cloned()
            .collect();
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let fresh = api.try_get::<StatefulSet>(ns, name);
        let same = fresh.as_ref().is_some_and(|f| {
            k8s::uid(&f.metadata) == uid && f.metadata.deletion_timestamp.is_none()
        });
        if !same {
            return Err(());
        }
        let mut adopted = Vec::new();
        for pod in candidates {
            let mut refs = pod.metadata.owner_references.clone().unwrap_or_default();
            refs.push(OwnerReference {
                api_version: "apps/v1".into(),
                kind: "StatefulSet".into(),
                name: name.to_string(),
                uid: uid.to_string(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            });
            let patch =
                json!({"metadata": {"ownerReferences": refs, "uid": k8s::uid(&pod.metadata)}});
            let pod_name = k8s::name(&pod.metadata);
            match api.merge_patch::<Pod>(ACTOR, ns, pod_name, &patch) {
                Ok(p) => adopted.push(p),
                Err(e) if e.is(Reason::NotFound) => {}
                Err(_) => return Err(()),
            }
        }
        Ok(adopted)
    }

    fn delete_pod(&mut self, api: &mut ApiServer, pod: &Pod) -> Result<(), ()> {
        let meta = &pod.metadata;
        match api.delete::<Pod>(
            ACTOR,
            k8s::namespace(meta),
            k8s::name(meta),
            &DeleteOptions::default(),
        ) {
            Ok(_) => Ok(()),
            Err(e) if e.is(Reason::NotFound) => Ok(()),
            Err(_) => Err(()),
        }
    }

    /// `getStatefulSetRevisions` (kubernetes pkg/controller/statefulset/stateful_set_control.go
    /// @0004b149): returns (current, update).
    fn revisions(
        &mut self,
        api: &mut ApiServer,
        set: &Shared<StatefulSet>,
    ) -> Result<(Revision, Revision), ()> {
        let uid = k8s::uid(&set.metadata);
        let mut owned: Vec<Shared<ControllerRevision>> =
            self.revisions.owned_by(uid).into_iter().cloned().collect();
        owned.sort_by(|a, b| {
            (a.revision.unwrap_or(0), k8s::name(&a.metadata))
                .cmp(&(b.revision.unwrap_or(0), k8s::name(&b.metadata)))
        });
        let new = self.new_revision(set);
        let update = update_revision(api, set, &owned, new)?;
        Ok((
            current_revision(set, &owned, &update, &mut self.templates),
            update,
        ))
    }

    /// `newRevision`'s name and data for the set's template, hashed once per generation.
    fn new_revision(&mut self, set: &StatefulSet) -> &mut NewRevision {
        let uid = k8s::uid(&set.metadata);
        let generation = set.metadata.generation.unwrap_or(0);
        let fresh = || {
            let data = revision_data(&set.spec.template);
            let collisions = set
                .status
                .as_ref()
                .and_then(|s| s.collision_count)
                .unwrap_or(0);
            let name = format!(
                "{}-{}",
                k8s::name(&set.metadata),
                template_hash(&data, collisions)
            );
            NewRevision {
                generation,
                name,
                data,
                equal: Vec::new(),
            }
        };
        if self
            .hashes
            .get(uid)
            .is_none_or(|e| e.generation != generation)
        {
            self.hashes.insert(uid.to_string(), fresh());
        }
        self.hashes.get_mut(uid).expect("inserted above")
    }

    fn truncate_history(
        &mut self,
        api: &mut ApiServer,
        set: &StatefulSet,
        status: &StatefulSetStatus,
        slots: &[Option<Shared<Pod>>],
        condemned: &[(i32, Shared<Pod>)],
    ) -> Result<(), ()> {
        let limit = set.spec.revision_history_limit.unwrap_or(10).max(0) as usize;
        let uid = k8s::uid(&set.metadata);
        let mut live: BTreeSet<String> = [
            status.current_revision.clone(),
            status.update_revision.clone(),
        ]
        .into_iter()
        .flatten()
        .collect();
        for p in slots.iter().flatten().chain(condemned.iter().map(|c| &c.1)) {
            if let Some(h) = k8s::label(&p.metadata, REVISION_LABEL) {
                live.insert(h.to_string());
            }
        }
        let mut history: Vec<Shared<ControllerRevision>> = self
            .revisions
            .owned_by(uid)
            .into_iter()
            .filter(|r| !live.contains(k8s::name(&r.metadata)))
            .cloned()
            .collect();
        history.sort_by_key(|r| r.revision.unwrap_or(0));
        while history.len() > limit {
            let r = history.remove(0);
            let m = &r.metadata;
            match api.delete::<ControllerRevision>(
                ACTOR,
                k8s::namespace(m),
                k8s::name(m),
                &DeleteOptions::default(),
            ) {
                Ok(_) => {}
                Err(e) if e.is(Reason::NotFound) => {}
                Err(_) => return Err(()),
            }
        }
        Ok(())
    }
}

/// One sync of one set: the spec values it reads, its two revisions, and its pods split by
/// ordinal (`updateStatefulSet`'s `replicas` and `condemned`).
struct SetSync {
    set: Shared<StatefulSet>,
    start: i32,
    replicas: i32,
    min_ready_s: i32,
    /// Not `Parallel`: OrderedReady's one-step-per-sync rules.
    monotonic: bool,
    strategy_type: String,
    rolling: Option<RollingUpdateStatefulSetStrategy>,
    partition: i32,
    now_ms: u64,
    current_rev: Revision,
    update_rev: Revision,
    /// `replicas[ord - start]`; `None` where no pod exists yet.
    slots: Vec<Option<Shared<Pod>>>,
    /// Pods outside the ordinal range, highest ordinal first.
    condemned: Vec<(i32, Shared<Pod>)>,
}

impl SetSync {
    fn available(&self, p: &Pod) -> bool {
        is_available(p, self.min_ready_s, self.now_ms)
    }

    fn unavailable(&self, p: &Option<Shared<Pod>>) -> bool {
        p.as_ref()
            .is_none_or(|p| !self.available(p) || k8s::is_terminating(&p.metadata))
    }

    /// Not at the update revision.
    fn is_old(&self, p: &Pod) -> bool {
        k8s::label(&p.metadata, REVISION_LABEL) != Some(rev_name(&self.update_rev))
    }

    /// The lowest slot the update step may touch: the partition.
    fn lowest(&self) -> usize {
        self.partition.clamp(0, self.replicas) as usize
    }
}

/// `completeRollingUpdate`: readiness only, never availability (upstream #136831).
fn complete_rolling_update(s: &SetSync, status: &mut StatefulSetStatus) {
    if s.strategy_type == "RollingUpdate"
        && status.updated_replicas == Some(s.replicas)
        && status.ready_replicas == Some(s.replicas)
        && status.replicas == s.replicas
    {
        status.current_revision = status.update_revision.clone();
        status.current_replicas = status.updated_replicas;
    }
}

/// A revision as the sync uses it: its name, and the template when it is not the live one.
#[derive(Clone, Debug)]
struct Revision {
    name: String,
    template: Option<Arc<PodTemplateSpec>>,
}

fn rev_name(r: &Revision) -> &str {
    &r.name
}

/// `getStatefulSetRevisions`' update revision: the newest revision if it equals the template;
/// else an older equal one, renumbered (a rollback); else a new one.
fn update_revision(
    api: &mut ApiServer,
    set: &StatefulSet,
    owned: &[Shared<ControllerRevision>],
    new: &mut NewRevision,
) -> Result<Revision, ()> {
    let max_rev = owned.last().map(|r| r.revision.unwrap_or(0)).unwrap_or(0);
    let name = new.name.clone();
    let equal: Vec<&Shared<ControllerRevision>> =
        owned.iter().filter(|r| new.is_equal(r)).collect();
    Ok(match equal.last() {
        Some(last)
            if owned.last().map(|o| k8s::name(&o.metadata)) == Some(k8s::name(&last.metadata)) =>
        {
            Revision {
                name: k8s::name(&last.metadata).to_string(),
                template: None,
            }
        }
        Some(older) => {
            // Rollback: reuse the equal revision with the next revision number.
            let mut r = (***older).clone();
            r.revision = Some(max_rev + 1);
            api.update(ACTOR, r).map_err(|_| ())?;
            Revision {
                name: k8s::name(&older.metadata).to_string(),
                template: None,
            }
        }
        None => {
            create_revision(api, set, &name, &new.data, max_rev + 1)?;
            Revision {
                name,
                template: None,
            }
        }
    })
}

/// `newRevision`'s result for one generation of a set, and the stored revisions already found
/// equal to it.
struct NewRevision {
    generation: i64,
    name: String,
    data: Value,
    /// Revisions compared equal to `data`, held so that each is compared once: an unchanged
    /// revision is the same `Shared` in the cache (and one held here is never freed and reused).
    equal: Vec<Shared<ControllerRevision>>,
}

impl NewRevision {
    /// `history.EqualRevision`: the hash label, when present, must match; then the data.
    fn is_equal(&mut self, r: &Shared<ControllerRevision>) -> bool {
        if self.equal.iter().any(|e| Arc::ptr_eq(e, r)) {
            return true;
        }
        let hash = self.name.rsplit('-').next().unwrap_or("");
        let equal = match k8s::label(&r.metadata, HASH_LABEL) {
            Some(h) if h != hash => false,
            _ => r.data.0 == self.data,
        };
        if equal {
            self.equal.push(r.clone());
        }
        equal
    }
}

/// `newRevision` + `createControllerRevision`: an existing revision of the same name and data
/// is fine; other data is a hash collision (upstream bumps `collisionCount`; here, a retry).
fn create_revision(
    api: &mut ApiServer,
    set: &StatefulSet,
    name: &str,
    data: &Value,
    revision: i64,
) -> Result<(), ()> {
    let ns = k8s::namespace(&set.metadata).to_string();
    let mut labels = set
        .spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(
        HASH_LABEL.to_string(),
        name.rsplit('-').next().unwrap_or("").to_string(),
    );
    let rev = ControllerRevision {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(ns.clone()),
            labels: Some(labels),
            owner_references: Some(vec![k8s::controller_ref(
                "apps/v1",
                "StatefulSet",
                &set.metadata,
            )]),
            ..Default::default()
        },
        data: RawExtension(data.clone()),
        revision: Some(revision),
    };
    match api.create(ACTOR, rev) {
        Ok(_) => Ok(()),
        Err(e) if e.is(Reason::AlreadyExists) => {
            let existing = api.try_get::<ControllerRevision>(&ns, name).ok_or(())?;
            if existing.data.0 != *data {
                return Err(()); // hash collision: upstream bumps collisionCount
            }
            Ok(())
        }
        Err(_) => Err(()),
    }
}

/// `getStatefulSetRevisions`' current revision: the one `status.currentRevision` names, with
/// its template, or the update revision when none is named or found (bootstrap).
fn current_revision(
    set: &StatefulSet,
    owned: &[Shared<ControllerRevision>],
    update: &Revision,
    templates: &mut Vec<(Shared<ControllerRevision>, Option<Arc<PodTemplateSpec>>)>,
) -> Revision {
    let current_name = set
        .status
        .as_ref()
        .and_then(|s| s.current_revision.clone())
        .unwrap_or_default();
    match owned
        .iter()
        .find(|r| k8s::name(&r.metadata) == current_name)
    {
        Some(r) if current_name != update.name => {
            let known = templates.iter().find(|(held, _)| Arc::ptr_eq(held, r));
            let template = match known {
                Some((_, t)) => t.clone(),
                None => {
                    if templates.len() >= 64 {
                        templates.clear(); // bounded: only the revisions of live rollouts matter
                    }
                    let t = r
                        .data
                        .0
                        .pointer("/spec/template")
                        .cloned()
                        .and_then(|t| serde_json::from_value(t).ok())
                        .map(Arc::new);
                    templates.push((r.clone(), t.clone()));
                    t
                }
            };
            Revision {
                name: current_name,
                template,
            }
        }
        _ => update.clone(),
    }
}

/// `ControllerRevision.data`: the strategic-merge patch `{"spec":{"template":...,"$patch":"replace"}}`.
pub fn revision_data(template: &PodTemplateSpec) -> Value {
    let mut t = serde_json::to_value(template).expect("templates serialize");
    if let Value::Object(m) = &mut t {
        m.insert("$patch".into(), Value::String("replace".into()));
    }
    json!({ "spec": { "template": t } })
}

/// `HashControllerRevision`: FNV-1a 32 over the data (plus the collision count), safe-encoded.
/// The bytes differ from Go's JSON, so names differ from a real cluster's; equality does not.
pub fn template_hash(data: &Value, collision_count: i32) -> String {
    use std::io::Write as _;
    let mut h = Fnv32(0x811c_9dc5);
    serde_json::to_writer(&mut h, data).expect("values serialize");
    if collision_count > 0 {
        h.write_all(collision_count.to_string().as_bytes())
            .expect("a hash takes every byte");
    }
    safe_encode(&h.0.to_string())
}

/// FNV-1a 32 fed the bytes written to it: `template_hash` hashes the JSON as it is written
/// instead of building it.
struct Fnv32(u32);

impl std::io::Write for Fnv32 {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        for &b in bytes {
            self.0 = (self.0 ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `rand.SafeEncodeString`: map each byte onto an alphabet without vowels.
pub fn safe_encode(s: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    s.bytes()
        .map(|c| ALPHABET[c as usize % ALPHABET.len()] as char)
        .collect()
}

/// `newVersionedStatefulSetPod`: the pod for one ordinal at one revision. Labels, annotations
/// and finalizers come from the template (`GetPodFromTemplate`, kubernetes
/// pkg/controller/controller_utils.go @0004b149).
fn new_pod(set: &StatefulSet, ordinal: i32, rev: &Revision) -> Pod {
    let template = rev.template.as_deref().unwrap_or(&set.spec.template);
    let name = format!("{}-{}", k8s::name(&set.metadata), ordinal);
    let tmeta = template.metadata.clone().unwrap_or_default();
    let mut labels = tmeta.labels.unwrap_or_default();
    labels.insert(REVISION_LABEL.to_string(), rev.name.clone());
    labels.insert(POD_NAME_LABEL.to_string(), name.clone());
    labels.insert(POD_INDEX_LABEL.to_string(), ordinal.to_string());
    let mut spec = template.spec.clone().unwrap_or_default();
    spec.hostname = Some(name.clone());
    spec.subdomain = set.spec.service_name.clone();
    update_storage(set, &mut spec, &name);
    Pod {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: set.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: tmeta.annotations,
            finalizers: tmeta.finalizers,
            owner_references: Some(vec![k8s::controller_ref(
                "apps/v1",
                "StatefulSet",
                &set.metadata,
            )]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    }
}

/// `updateStorage` (pkg/controller/statefulset/stateful_set_utils.go @0004b149): a volume per
/// volume claim template, named after it, on the claim `<template>-<pod>`
/// (`getPersistentVolumeClaimName`: `<template>-<set>-<ordinal>`), in place of a template
/// volume of that name; the template's other volumes after them. Upstream ranges over a Go map
/// (random order); here the claims come in name order. The claims themselves are not created
/// (docs/fidelity.md).
fn update_storage(set: &StatefulSet, spec: &mut PodSpec, pod_name: &str) {
    let Some(templates) = set.spec.volume_claim_templates.as_ref() else {
        return;
    };
    let claims: BTreeSet<&str> = templates
        .iter()
        .filter_map(|t| t.metadata.name.as_deref())
        .collect();
    if claims.is_empty() {
        return;
    }
    let mut volumes: Vec<Volume> = claims
        .iter()
        .map(|c| Volume {
            name: c.to_string(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: format!("{c}-{pod_name}"),
                read_only: None,
            }),
            ..Default::default()
        })
        .collect();
    let others = spec.volumes.take().unwrap_or_default();
    volumes.extend(
        others
            .into_iter()
            .filter(|v| !claims.contains(v.name.as_str())),
    );
    spec.volumes = Some(volumes);
}

/// `podutil.IsPodAvailable` on the controller's clock.
pub fn is_available(pod: &Pod, min_ready_s: i32, now_ms: u64) -> bool {
    if !k8s::is_running_and_ready(pod) {
        return false;
    }
    if min_ready_s <= 0 {
        return true;
    }
    k8s::ready_since(pod)
        .is_some_and(|t| after(from_time(t), secs_to_ms(min_ready_s.into())) <= now_ms)
}

/// `computeReplicaStatus` (kubernetes pkg/controller/statefulset/stateful_set_control.go
/// @0004b149).
fn compute_status<'a>(
    set: &StatefulSet,
    pods: impl Iterator<Item = &'a Shared<Pod>>,
    current: &Revision,
    update: &Revision,
    min_ready_s: i32,
    now_ms: u64,
) -> StatefulSetStatus {
    let mut s = StatefulSetStatus {
        observed_generation: set.metadata.generation,
        current_revision: Some(current.name.clone()),
        update_revision: Some(update.name.clone()),
        collision_count: set.status.as_ref().and_then(|s| s.collision_count),
        ..Default::default()
    };
    let (mut ready, mut available, mut cur, mut upd) = (0, 0, 0, 0);
    for p in pods {
        let created = !k8s::phase(p).is_empty();
        if created {
            s.replicas += 1;
        }
        if k8s::is_running_and_ready(p) {
            ready += 1;
            if is_available(p, min_ready_s, now_ms) {
                available += 1;
            }
        }
        if created && !k8s::is_terminating(&p.metadata) {
            let h = k8s::label(&p.metadata, REVISION_LABEL);
            if h == Some(current.name.as_str()) {
                cur += 1;
            }
            if h == Some(update.name.as_str()) {
                upd += 1;
            }
        }
    }
    s.ready_replicas = Some(ready);
    s.available_replicas = Some(available);
    s.current_replicas = Some(cur);
    s.updated_replicas = Some(upd);
    s.conditions = set.status.as_ref().and_then(|s| s.conditions.clone());
    s
}

/// `inconsistentStatus`: write only when something the controller owns differs.
fn inconsistent_status(old: Option<&StatefulSetStatus>, new: &StatefulSetStatus) -> bool {
    let Some(old) = old else { return true };
    new.observed_generation.unwrap_or(0) > old.observed_generation.unwrap_or(0)
        || old.replicas != new.replicas
        || old.current_replicas.unwrap_or(0) != new.current_replicas.unwrap_or(0)
        || old.ready_replicas.unwrap_or(0) != new.ready_replicas.unwrap_or(0)
        || old.updated_replicas.unwrap_or(0) != new.updated_replicas.unwrap_or(0)
        || old.current_revision != new.current_revision
        || old.available_replicas.unwrap_or(0) != new.available_replicas.unwrap_or(0)
        || old.update_revision != new.update_revision
}
