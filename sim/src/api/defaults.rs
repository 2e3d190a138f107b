//! Built-in defaulting, feature-gate field drops and the validation that matters to the
//! controllers we run (kubernetes pkg/apis/apps/v1/defaults.go,
//! pkg/apis/apps/validation/validation.go, pkg/registry/apps/statefulset/strategy.go). Admission webhooks are separate (`Hooks`).

use std::any::Any;

use k8s_openapi::api::apps::v1::{
    RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetSpec, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, Service};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use lws::api::LeaderWorkerSet;

use super::selector::Selector;
use super::{names, pod_defaults, podspec, quantity, service, FeatureGates, Kind};

pub fn on_create<K: Kind>(obj: &mut K, gates: FeatureGates) {
    let any = obj as &mut dyn Any;
    if let Some(sts) = any.downcast_mut::<StatefulSet>() {
        default_statefulset(sts, None, gates);
    } else if let Some(pod) = any.downcast_mut::<Pod>() {
        pod_defaults::default_pod(pod);
        // Pod create sets status.phase = Pending (pod strategy PrepareForCreate).
        pod.status = Some(k8s_openapi::api::core::v1::PodStatus {
            phase: Some("Pending".to_string()),
            ..Default::default()
        });
        pod_defaults::admit_pod_create(pod);
    } else if let Some(svc) = any.downcast_mut::<Service>() {
        service::default_service(svc);
    } else if let Some(pdb) = any.downcast_mut::<PodDisruptionBudget>() {
        drop_disabled_pdb_fields(pdb, gates);
        // PDB strategy `PrepareForCreate` resets the status to its zero value, whose four
        // counts are not `omitempty`: a new budget reads 0 of 0 until the disruption
        // controller writes it.
        pdb.status = Some(PodDisruptionBudgetStatus {
            current_healthy: Some(0),
            desired_healthy: Some(0),
            disruptions_allowed: Some(0),
            expected_pods: Some(0),
            ..Default::default()
        });
    }
}

pub fn on_update<K: Kind>(obj: &mut K, old: &K, gates: FeatureGates) {
    let old = old as &dyn Any;
    let any = obj as &mut dyn Any;
    if let Some(sts) = any.downcast_mut::<StatefulSet>() {
        default_statefulset(sts, old.downcast_ref::<StatefulSet>(), gates);
    } else if let Some(pod) = any.downcast_mut::<Pod>() {
        pod_defaults::default_pod(pod);
    } else if let Some(svc) = any.downcast_mut::<Service>() {
        service::default_service(svc);
        if let Some(old) = old.downcast_ref::<Service>() {
            service::keep_allocated(svc, old);
        }
    } else if let Some(pdb) = any.downcast_mut::<PodDisruptionBudget>() {
        drop_disabled_pdb_fields(pdb, gates);
    }
}

/// `dropDisabledFields` of the PDB strategy: without `PDBUnhealthyPodEvictionPolicy` (before
/// 1.27) a budget's `unhealthyPodEvictionPolicy` is dropped.
fn drop_disabled_pdb_fields(pdb: &mut PodDisruptionBudget, gates: FeatureGates) {
    if !gates.pdb_unhealthy_pod_eviction_policy {
        if let Some(spec) = pdb.spec.as_mut() {
            spec.unhealthy_pod_eviction_policy = None;
        }
    }
}

/// `SetDefaults_StatefulSet` (kubernetes `pkg/apis/apps/v1/defaults.go`) plus
/// `dropStatefulSetDisabledFields` (`pkg/registry/apps/statefulset/strategy.go`).
fn default_statefulset(sts: &mut StatefulSet, old: Option<&StatefulSet>, gates: FeatureGates) {
    let spec = &mut sts.spec;
    spec.replicas.get_or_insert(1);
    spec.pod_management_policy
        .get_or_insert_with(|| "OrderedReady".to_string());
    spec.revision_history_limit.get_or_insert(10);
    if gates.statefulset_auto_delete_pvc {
        let policy = spec
            .persistent_volume_claim_retention_policy
            .get_or_insert_with(Default::default);
        for when in [&mut policy.when_deleted, &mut policy.when_scaled] {
            if when.as_deref().is_none_or(str::is_empty) {
                *when = Some("Retain".to_string());
            }
        }
    }
    let strategy = spec
        .update_strategy
        .get_or_insert_with(StatefulSetUpdateStrategy::default);
    let ty = strategy
        .type_
        .get_or_insert_with(|| "RollingUpdate".to_string());
    if ty == "RollingUpdate" {
        let ru = strategy
            .rolling_update
            .get_or_insert_with(RollingUpdateStatefulSetStrategy::default);
        ru.partition.get_or_insert(0);
        let old_had_max_unavailable = old
            .and_then(|o| o.spec.update_strategy.as_ref())
            .and_then(|s| s.rolling_update.as_ref())
            .is_some_and(|r| r.max_unavailable.is_some());
        if gates.max_unavailable_statefulset {
            ru.max_unavailable.get_or_insert(IntOrString::Int(1));
        } else if !old_had_max_unavailable {
            ru.max_unavailable = None;
        }
    }
}

/// A validation's field errors (`field.ErrorList`), each `<field>: <type>: ...` as
/// `field.Error` prints it; the API server answers them as one 422 with a cause each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldErrors(pub Vec<String>);

impl From<String> for FieldErrors {
    fn from(e: String) -> FieldErrors {
        FieldErrors(vec![e])
    }
}

impl From<&str> for FieldErrors {
    fn from(e: &str) -> FieldErrors {
        FieldErrors(vec![e.to_string()])
    }
}

impl FieldErrors {
    /// `field.ErrorList.ToAggregate()`'s text: one error as is, several in brackets.
    pub fn aggregate(&self) -> String {
        match self.0.as_slice() {
            [one] => one.clone(),
            all => format!("[{}]", all.join(", ")),
        }
    }
}

pub fn validate<K: Kind>(obj: &K, old: Option<&K>, gates: FeatureGates) -> Result<(), FieldErrors> {
    let any = obj as &dyn Any;
    let old = old.map(|o| o as &dyn Any);
    if let Some(sts) = any.downcast_ref::<StatefulSet>() {
        return validate_statefulset(sts, old.and_then(|o| o.downcast_ref()), gates);
    }
    if let Some(pdb) = any.downcast_ref::<PodDisruptionBudget>() {
        return validate_pdb(pdb);
    }
    if let Some(lease) = any.downcast_ref::<k8s_openapi::api::coordination::v1::Lease>() {
        return validate_lease(lease);
    }
    if let Some(lws) = any.downcast_ref::<LeaderWorkerSet>() {
        return validate_lws_quantities(lws);
    }
    if let Some(svc) = any.downcast_ref::<Service>() {
        return found(service::validate(svc, old.and_then(|o| o.downcast_ref())));
    }
    if let Some(pod) = any.downcast_ref::<Pod>() {
        let rules = podspec::Rules {
            relaxed_env_names: gates.relaxed_env_var_names,
            resize_policy: gates.in_place_pod_resize,
        };
        let empty = PodSpec::default();
        found(podspec::validate(
            "spec",
            pod.spec.as_ref().unwrap_or(&empty),
            rules,
        ))?;
        let old: Option<&Pod> = old.and_then(|o| o.downcast_ref());
        let node = |p: &Pod| {
            p.spec
                .as_ref()
                .and_then(|s| s.node_name.clone())
                .unwrap_or_default()
        };
        if let Some(old) = old {
            if !node(old).is_empty() && node(old) != node(pod) {
                return Err("spec.nodeName: Forbidden: pod updates may not change nodeName".into());
            }
            return validate_pod_update(pod, old);
        }
    }
    Ok(())
}

/// `ValidateLeaseSpec` (kubernetes `pkg/apis/coordination/validation/validation.go`): a lease
/// lasts more than 0 s and has not changed hands a negative number of times.
fn validate_lease(lease: &k8s_openapi::api::coordination::v1::Lease) -> Result<(), FieldErrors> {
    let spec = lease.spec.as_ref();
    let mut errs = Vec::new();
    if let Some(d) = spec
        .and_then(|s| s.lease_duration_seconds)
        .filter(|d| *d <= 0)
    {
        errs.push(format!(
            "spec.leaseDurationSeconds: Invalid value: {d}: must be greater than 0"
        ));
    }
    if let Some(t) = spec.and_then(|s| s.lease_transitions).filter(|t| *t < 0) {
        errs.push(format!(
            "spec.leaseTransitions: Invalid value: {t}: must be greater than or equal to 0"
        ));
    }
    found(errs)
}

/// The LeaderWorkerSet CRD's quantity pattern over both pod templates (`podspec::crd_quantities`)
/// and the claim templates.
fn validate_lws_quantities(lws: &LeaderWorkerSet) -> Result<(), FieldErrors> {
    let t = &lws.spec.leader_worker_template;
    let mut errs = Vec::new();
    let base = "spec.leaderWorkerTemplate";
    if let Some(leader) = &t.leader_template {
        podspec::crd_quantities(
            &mut errs,
            &format!("{base}.leaderTemplate.spec"),
            leader.spec.as_ref(),
        );
    }
    podspec::crd_quantities(
        &mut errs,
        &format!("{base}.workerTemplate.spec"),
        t.worker_template.spec.as_ref(),
    );
    for (i, claim) in t.volume_claim_templates.iter().flatten().enumerate() {
        let Some(r) = claim.spec.as_ref().and_then(|s| s.resources.as_ref()) else {
            continue;
        };
        let at = || format!("{base}.volumeClaimTemplates[{i}].spec.resources");
        for (field, map) in [("limits", &r.limits), ("requests", &r.requests)] {
            let here = || format!("{}.{field}", at());
            quantity::each_in_map(map.as_ref(), &here, &mut |q_at, q| {
                podspec::crd_quantity(&mut errs, q_at, q)
            });
        }
    }
    found(errs)
}

/// The errors found, if any, each once (`ToAggregate` drops a repeated message).
fn found(errs: Vec<String>) -> Result<(), FieldErrors> {
    let mut seen = std::collections::BTreeSet::new();
    let errs: Vec<String> = errs
        .into_iter()
        .filter(|e| seen.insert(e.clone()))
        .collect();
    if errs.is_empty() {
        Ok(())
    } else {
        Err(FieldErrors(errs))
    }
}

/// `ValidatePodDisruptionBudgetSpec`'s budget rules (kubernetes
/// `pkg/apis/policy/validation/validation.go` and `pkg/apis/apps/validation/validation.go`
/// `ValidatePositiveIntOrPercent`, `IsNotMoreThan100Percent`, v1.33): not both `minAvailable`
/// and `maxUnavailable`; each a non-negative integer or a percentage `[0-9]+%` of at most 100%.
/// A budget the simulator's eviction cannot read (`"abc"`) is refused, not taken as blocking.
fn validate_pdb(pdb: &PodDisruptionBudget) -> Result<(), FieldErrors> {
    let Some(spec) = pdb.spec.as_ref() else {
        return Ok(());
    };
    let mut errors = Vec::new();
    if spec.min_available.is_some() && spec.max_unavailable.is_some() {
        errors.push(
            "spec: Invalid value: minAvailable and maxUnavailable cannot be both set".to_string(),
        );
    }
    for (field, v) in [
        ("spec.minAvailable", &spec.min_available),
        ("spec.maxUnavailable", &spec.max_unavailable),
    ] {
        match v {
            Some(IntOrString::Int(n)) if *n < 0 => errors.push(format!(
                "{field}: Invalid value: {n}: must be greater than or equal to 0"
            )),
            Some(IntOrString::String(p)) => {
                let digits = p.strip_suffix('%').unwrap_or("");
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    errors.push(format!("{field}: Invalid value: {p:?}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"));
                } else if digits.parse::<u64>().map_or(true, |n| n > 100) {
                    errors.push(format!(
                        "{field}: Invalid value: {p:?}: must not be greater than 100%"
                    ));
                }
            }
            _ => {}
        }
    }
    if let Some(sel) = &spec.selector {
        validate_label_selector(&mut errors, "spec.selector", sel);
    }
    if let Some(p) = spec.unhealthy_pod_eviction_policy.as_deref() {
        // `supportedUnhealthyPodEvictionPolicies` (kubernetes pkg/apis/policy/validation),
        // listed sorted as `field.NotSupported` is given them.
        let allowed = ["AlwaysAllow", "IfHealthyBudget"];
        lws::crd::check_enum(&mut errors, "spec.unhealthyPodEvictionPolicy", p, &allowed);
    }
    found(errors)
}

/// apimachinery `metav1validation.ValidateLabelSelector`: `matchLabels`' keys and values, then
/// each expression's key, operator and values (`In`/`NotIn` need values, `Exists`/`DoesNotExist`
/// take none).
fn validate_label_selector(errs: &mut Vec<String>, path: &str, sel: &LabelSelector) {
    for (k, v) in sel.match_labels.iter().flatten() {
        if let Err(m) = names::label(k, v) {
            errs.push(format!("{path}.matchLabels: {m}"));
        }
    }
    for (i, e) in sel.match_expressions.iter().flatten().enumerate() {
        let at = format!("{path}.matchExpressions[{i}]");
        let values = e.values.as_deref().unwrap_or_default();
        match e.operator.as_str() {
            "In" | "NotIn" if values.is_empty() => errs.push(format!(
                "{at}.values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(format!(
                "{at}.values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            op => errs.push(format!(
                "{at}.operator: Invalid value: {op:?}: not a valid selector operator"
            )),
        }
        if let Err(m) = names::qualified_name(&e.key) {
            errs.push(format!("{at}.key: Invalid value: {:?}: {m}", e.key));
        }
        for (j, v) in values.iter().enumerate() {
            if let Err(m) = names::label_value(v) {
                errs.push(format!("{at}.values[{j}]: Invalid value: {v:?}: {m}"));
            }
        }
    }
}

/// A `/status` write's new status (the `ValidateStatusUpdate` of each kind's strategy): for a
/// StatefulSet, kubernetes `pkg/apis/apps/validation/validation.go`
/// `ValidateStatefulSetStatus` (counts not negative, none above `replicas`, available not
/// above ready) and `ValidateStatefulSetStatusUpdate` (`collisionCount` never decremented).
/// Other kinds' statuses are taken as written.
pub fn validate_status<K: Kind>(obj: &K, old: &K) -> Result<(), String> {
    let (Some(sts), Some(old)) = (
        (obj as &dyn Any).downcast_ref::<StatefulSet>(),
        (old as &dyn Any).downcast_ref::<StatefulSet>(),
    ) else {
        return Ok(());
    };
    let collisions = |s: &StatefulSet| s.status.as_ref().and_then(|s| s.collision_count);
    let (now, was) = (collisions(sts), collisions(old));
    // apimachinery `IsDecremented`: removed, or lower.
    if was.is_some() && now.is_none_or(|n| Some(n) < was) {
        return Err(format!(
            "status.collisionCount: Invalid value: {}: cannot be decremented",
            now.unwrap_or(0)
        ));
    }
    let Some(st) = &sts.status else {
        return Ok(());
    };
    let counts = [
        ("replicas", Some(st.replicas as i64)),
        ("readyReplicas", st.ready_replicas.map(i64::from)),
        ("currentReplicas", st.current_replicas.map(i64::from)),
        ("updatedReplicas", st.updated_replicas.map(i64::from)),
        ("availableReplicas", st.available_replicas.map(i64::from)),
        ("observedGeneration", st.observed_generation),
        ("collisionCount", st.collision_count.map(i64::from)),
    ];
    let mut errors = Vec::new();
    for (field, n) in counts {
        if let Some(n) = n.filter(|n| *n < 0) {
            errors.push(format!(
                "status.{field}: Invalid value: {n}: must be greater than or equal to 0"
            ));
        }
    }
    let n = |v: Option<i32>| v.unwrap_or(0);
    for (field, v) in [
        ("readyReplicas", n(st.ready_replicas)),
        ("currentReplicas", n(st.current_replicas)),
        ("updatedReplicas", n(st.updated_replicas)),
        ("availableReplicas", n(st.available_replicas)),
    ] {
        if v > st.replicas {
            errors.push(format!(
                "status.{field}: Invalid value: {v}: cannot be greater than status.replicas"
            ));
        }
    }
    let available = n(st.available_replicas);
    if available > n(st.ready_replicas) {
        errors.push(format!(
            "status.availableReplicas: Invalid value: {available}: cannot be greater than status.readyReplicas"
        ));
    }
    match errors.len() {
        0 => Ok(()),
        1 => Err(errors.remove(0)),
        _ => Err(format!("[{}]", errors.join(", "))),
    }
}

/// `ValidatePodUpdate`'s spec rule (kubernetes `pkg/apis/core/validation/validation.go`): a
/// pod's spec is immutable but for container and init container images,
/// `activeDeadlineSeconds`, added tolerations and removed scheduling gates (nodeName is
/// checked above, with its own message).
fn validate_pod_update(pod: &Pod, old: &Pod) -> Result<(), FieldErrors> {
    let (Some(new), Some(before)) = (pod.spec.as_ref(), old.spec.as_ref()) else {
        return Ok(());
    };
    let mut mutable = before.clone();
    let take_images = |to: &mut Vec<Container>, from: &[Container]| {
        if to.len() == from.len() {
            for (t, f) in to.iter_mut().zip(from) {
                t.image.clone_from(&f.image);
            }
        }
    };
    take_images(&mut mutable.containers, &new.containers);
    if let (Some(to), Some(from)) = (mutable.init_containers.as_mut(), &new.init_containers) {
        take_images(to, from);
    }
    mutable.active_deadline_seconds = new.active_deadline_seconds;
    fn kept<T: PartialEq>(old: &Option<Vec<T>>, new: &Option<Vec<T>>) -> bool {
        old.iter()
            .flatten()
            .all(|t| new.iter().flatten().any(|n| n == t))
    }
    if kept(&before.tolerations, &new.tolerations) {
        mutable.tolerations.clone_from(&new.tolerations);
    }
    if kept(&new.scheduling_gates, &before.scheduling_gates) {
        mutable.scheduling_gates.clone_from(&new.scheduling_gates);
    }
    mutable.node_name.clone_from(&new.node_name);
    if &mutable == new {
        return Ok(());
    }
    Err("spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)".into())
}

/// The most replicas a StatefulSet may ask for here. The real API server takes any `int32`; the
/// simulator keeps one slot per replica in each StatefulSet sync, so it rejects more, naming
/// the field, as validation does.
pub const STATEFULSET_REPLICAS_MAX: i32 = 10_000;

/// `ValidateStatefulSetUpdate`: whether `new` differs from `old` only in the fields an update
/// may change (kubernetes `pkg/apis/apps/validation/validation.go`).
fn only_mutable_changed(old: &StatefulSetSpec, new: &StatefulSetSpec) -> bool {
    if old.selector != new.selector
        || old.service_name != new.service_name
        || old.pod_management_policy != new.pod_management_policy
    {
        return false;
    }
    old.volume_claim_templates == new.volume_claim_templates
}

/// The parts of `ValidateStatefulSet` / `ValidateStatefulSetUpdate` the controllers can trip.
fn validate_statefulset(
    sts: &StatefulSet,
    old: Option<&StatefulSet>,
    gates: FeatureGates,
) -> Result<(), FieldErrors> {
    let spec = &sts.spec;
    if spec.replicas.unwrap_or(1) < 0 {
        return Err("spec.replicas: Invalid value: must be greater than or equal to 0".into());
    }
    if let Some(n) = spec.replicas.filter(|n| *n > STATEFULSET_REPLICAS_MAX) {
        return Err(format!(
            "spec.replicas: Invalid value: {n}: must be less than or equal to {STATEFULSET_REPLICAS_MAX} (the simulator's STATEFULSET_REPLICAS_MAX)"
        )
        .into());
    }
    let empty = PodSpec::default();
    let template = spec.template.spec.as_ref().unwrap_or(&empty);
    let mut errs = podspec::names_and_images("spec.template.spec", template);
    // ValidateStatefulSetSpec's own rules for the template.
    if let Some(p) = template
        .restart_policy
        .as_deref()
        .filter(|p| *p != "Always")
    {
        errs.push(format!(
            "spec.template.spec.restartPolicy: Unsupported value: {p:?}: supported values: \"Always\""
        ));
    }
    if template.active_deadline_seconds.is_some() {
        errs.push("spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported".into());
    }
    // ValidatePersistentVolumeClaimRetentionPolicyType (kubernetes
    // pkg/apis/apps/validation/validation.go): after defaulting, Retain or Delete.
    let retention = spec.persistent_volume_claim_retention_policy.as_ref();
    if let Some(p) = retention.filter(|_| gates.statefulset_auto_delete_pvc) {
        for (field, value) in [
            ("whenDeleted", &p.when_deleted),
            ("whenScaled", &p.when_scaled),
        ] {
            if let Some(v) = value
                .as_deref()
                .filter(|v| !matches!(*v, "Retain" | "Delete"))
            {
                errs.push(format!(
                    "spec.persistentVolumeClaimRetentionPolicy.{field}: Unsupported value: {v:?}: supported values: \"Retain\", \"Delete\""
                ));
            }
        }
    }
    // `ValidateStatefulSetSpec` validates the selector strictly, as a PDB's.
    validate_label_selector(&mut errs, "spec.selector", &spec.selector);
    found(errs)?;
    let selector = Selector::from_label_selector(Some(&spec.selector))?;
    let labels = spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.as_ref());
    if !selector.matches(labels) {
        return Err(
            "spec.template.metadata.labels: Invalid value: `selector` does not match template `labels`"
                .into(),
        );
    }
    if old.is_some_and(|old| !only_mutable_changed(&old.spec, spec)) {
        return Err("spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden".into());
    }
    let strategy = spec.update_strategy.as_ref();
    let rolling = strategy.and_then(|s| s.rolling_update.as_ref());
    if strategy.and_then(|s| s.type_.as_deref()) == Some("OnDelete") && rolling.is_some() {
        return Err("spec.updateStrategy.rollingUpdate: Invalid value: only allowed for updateStrategy 'RollingUpdate'".into());
    }
    if gates.max_unavailable_statefulset {
        // LWS #776: a copied maxUnavailable of 0 is rejected where the field is honoured.
        let zero = match rolling.and_then(|r| r.max_unavailable.as_ref()) {
            Some(IntOrString::Int(0)) => true,
            Some(IntOrString::String(s)) => s.trim_end_matches('%') == "0",
            _ => false,
        };
        if zero {
            return Err("spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: must be greater than 0".into());
        }
    }
    Ok(())
}
