//! Releases as named sets of behaviour flags. A reconciler is named `PROFILE[,flag=value...]`,
//! for example `v0.3.0,worker-update-strategy=OnDelete`. Every flag names the upstream change that
//! introduced it (kubernetes-sigs/lws; docs/fidelity.md).
//!
//! v0.3.0 and v0.4.1 share one flag-parametrised port (`lws_controller`, `pod_controller`);
//! v0.10.0 is its own port (`v0_10_0`), on which only the flags with a code path at that tag
//! may be overridden (`FlagSpec::at_v0_10_0`). Names a person can type: `latest` (the newest
//! release) and `all-fixed` (v0.4.1 with every known fix, what the campaigns of docs/bug-zoo.md
//! measured against).

use std::fmt;

/// How the pod controller writes a group's worker StatefulSet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkerStsWrite {
    /// v0.3.0: forced server-side apply on every leader-pod reconcile (the seed bug, #225).
    Apply,
    /// v0.4.1: create only when missing (PR #229, commit 84da957, cherry-picked as 58c0ac6).
    Create,
}

/// What counts as a "ready" worker StatefulSet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkerStsReady {
    /// v0.3.0..v0.8: `spec.replicas == status.replicas` (pods merely exist; bug B14).
    Exists,
    /// v0.9.0+: `spec.replicas == status.availableReplicas` (PR #705, commit 7a4e3c1).
    Available,
}

/// Which objects `updateConditions` iterates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusSource {
    /// v0.3.0: worker StatefulSets; a missing leader pod is an error (lwsc:337-424).
    WorkerSts,
    /// v0.4.0+: leader pods; a missing worker StatefulSet is an error (FX lwsc:315-400).
    LeaderPods,
}

/// How Case 5 of `rollingUpdateParameters` lowers the partition (V3 lwsc:215-297, FX lwsc:193-275, HD lwsc:286-379 and 649-714;
/// abbreviations as in docs/fidelity.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionFormula {
    /// v0.3.0..v0.6: `min(P, max0(S - step - C))`, counting only the ready-and-updated tail `C`;
    /// groups already down below it are ignored (bug B10).
    Tail,
    /// 6dd31e2 (#488, v0.7.0-dev): count the unready groups below the base, then slide down over
    /// unready groups only; stuck when a ready surge group sits at the top (bug B11).
    UnreadyBelow,
    /// b088493 (#568): the slide also passes updated groups (HD lwsc:649-679).
    Hd,
    /// Not upstream: a proposed fix for Z03 (docs/bug-zoo.md). `Hd`, but the
    /// base is raised by every unready group below the *partition*, to a fixed point, so unready
    /// groups between the base and the partition are counted too.
    AllUnready,
}

/// What `updateConditions` does with a leader pod whose worker StatefulSet does not exist yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissingWorkerSts {
    /// v0.4.0/v0.4.1: `Get` returns NotFound, the reconcile fails, no status is written
    /// (FX lwsc:342-348).
    Error,
    /// v0.5.0..v0.6.0: the group was counted as current before the lookup and then skipped, so
    /// it looks not-updated: UpgradeInProgress on a fresh LWS (bug B18).
    Count,
    /// cb41374 (#490): count it only after the lookup succeeds (`updateConditions`,
    /// leaderworkerset_controller.go at v0.10.0).
    Skip,
}

/// The manager's `gangSchedulingManagement.schedulerProvider` (api/config/v1alpha1 at v0.10.0;
/// the scheduler provider came in v0.7.0, PR #498, 2d0e76b): unset, or volcano.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GangScheduling {
    Off,
    Volcano,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flags {
    pub worker_sts_write: WorkerStsWrite,
    /// The workaround proposed in #225: `OnDelete` on worker StatefulSets. Not an upstream release.
    pub worker_update_strategy_on_delete: bool,
    pub worker_sts_ready: WorkerStsReady,
    pub status_source: StatusSource,
    /// v0.4.0 (PR #190, bfb54f8): no worker StatefulSet for size 1; v0.3.0 creates one with 0
    /// replicas.
    pub size_one_skips_worker_sts: bool,
    /// Where the pod controller takes a group's worker template from: the live LWS spec
    /// (v0.3.0, v0.4.1: bug B02, an old group rebuilt mid-rollout gets the new worker template)
    /// or the stored revision named by the leader's hash label (ControllerRevisions, c03d4c9,
    /// v0.5.0).
    pub worker_template_from_revision: bool,
    /// B12 (PR #778, d275e0a): surge groups are released while fewer than maxUnavailable
    /// groups are unready (not one at a time), and a scale-up never bursts.
    pub surge_release_by_max_unavailable: bool,
    /// B03/B08 (PR #277 e9d6131, PR #805 8b6ef0c): a worker restarts its group only if it
    /// belongs to the current leader (revision key and ownership chain), not merely by name.
    pub restart_check_ownership: bool,
    /// B16 (PR #38, 0948240, before v0.3.0): setting a condition True sets its exclusive
    /// partner (Available against Progressing and UpgradeInProgress) to False. The buggy
    /// value wrote the False to a loop copy, so both stayed True.
    pub exclusive_conditions_flip: bool,
    /// B10/B11: the Case-5 partition formula.
    pub partition: PartitionFormula,
    /// B18: a leader pod without its worker StatefulSet in the status loop (leader-pods source).
    pub missing_worker_sts: MissingWorkerSts,
    /// Z01: the LWS controller also watches leader pods (d275e0a, PR #778, 2026-03-21; removed
    /// as redundant by 02e43b0, PR #791, 2026-03-24). Without it a leader pod's readiness reaches
    /// the LWS controller only through StatefulSet status events.
    pub leader_pod_watch: bool,
    /// B13 (PR #781, d4d6b17): the leader StatefulSet's maxUnavailable is `max(1, MU + MS)`
    /// instead of the LWS value copied verbatim.
    pub leader_max_unavailable_budget: bool,
    /// B09 (PR #999, dcbd8f0): pod delete events reach the pod reconciler with the deleted pod
    /// (a tombstone), instead of only its name, which may already name a replacement.
    pub pod_delete_tombstones: bool,
    /// Not upstream: a proposed fix for Z02 (docs/bug-zoo.md). Upstream counts a terminating
    /// leader that is still Ready as ready, and a worker StatefulSet whose terminating pods are
    /// still Ready as available; with this set, neither is (leader `deletionTimestamp`, worker
    /// `status.updatedReplicas`, which counts only non-terminating pods).
    pub terminating_not_ready: bool,
    /// v0.4.0 (PR #214, 3892afa): default restartPolicy `RecreateGroupOnPodRestart`, `Default`
    /// becomes `None`.
    pub restart_policy_default_recreate: bool,
    /// v0.4.0 (PR #197, 39f4dd3; PR #208, 44d877b): `networkConfig.subdomainPolicy` defaulted to
    /// `Shared` and part of the template hash; `LWS_GROUP_SIZE` env; LWS env values override the
    /// user's.
    pub network_config: bool,
    /// B22 (PR #523, 75103b8; leaderworkerset_controller.go v0.10.0:118-120): the LWS
    /// reconciler returns at once for an LWS being deleted.
    /// Without it a foreground deletion never ends: the reconciler re-creates the leader
    /// StatefulSet and headless Service the garbage collector deletes.
    pub deleting_lws_returns: bool,
    /// Not upstream: a proposed fix for Z07 (docs/findings/Z07.md). When the leader StatefulSet
    /// is not in the cache, `getOrCreateRevisionIfNonExist` (v0.10.0) asks for no key and
    /// creates a revision; a reconcile whose StatefulSet cache lags its own create so makes a
    /// second revision of the same key. With this set, it first looks for a revision under the
    /// key `NewRevision` would give the current templates and reuses it. Only the v0.10.0 port
    /// reads it: the shared port names a revision by its hash alone, so a duplicate is refused
    /// there (AlreadyExists).
    pub revision_reuse_at_creation: bool,
    /// B23 (PR #963, d014d0f, after v0.10.0; at main 060ab4d): a worker StatefulSet rebuilt
    /// for a leader on an old revision takes its size, subgroup policy, subdomain policy and
    /// volume claim templates from the revision-applied spec, not only the worker template.
    /// v0.10.0 reads them from the live LWS: an old group rebuilt mid-rollout that changes the
    /// size gets the old template with the new size. Only the v0.10.0 port reads it.
    pub worker_sts_spec_from_revision: bool,
    /// Not upstream: a proposed fix for Z11 (docs/findings/Z11.md). An LWS created again
    /// before the garbage collector removed its predecessor's leader StatefulSet finds that
    /// StatefulSet, controlled by the predecessor, with the predecessor's revision key; v0.10.0
    /// stores the current templates under that key as a "missing revision", sees no update and
    /// applies them at partition 0, so every leader is replaced without the group budget and
    /// the status claims every group updated. With this set, the reconciler leaves a leader
    /// StatefulSet controlled by another object alone and requeues until the garbage collector
    /// has removed it, as it waits for a terminating one. Only the v0.10.0 port reads it.
    pub foreign_leader_sts_waits: bool,
    /// Not upstream: a proposed fix for Z05 (docs/findings/Z05.md, `crate::restart_guard`).
    /// Under a group-recreating restart policy, worker pods carry a finalizer the pod
    /// reconciler removes only after applying the restart policy to the deleted pod, so a
    /// worker deleted while no controller runs is still seen by the next one.
    pub worker_finalizer: bool,
    /// Not upstream: a proposed fix for Z08 (docs/findings/Z08.md). A scale-up while the leader
    /// StatefulSet still has groups to replace (partition above 0, or pods of an older
    /// revision) keeps the surge (`replicas + maxSurge`) instead of turning the surge groups
    /// into ordinary ones, so the groups still to replace keep their spare.
    pub scale_up_keeps_surge: bool,
    /// Not upstream: a proposed fix for Z04 (docs/findings/Z04.md). When the replicas change
    /// mid-rollout (Case 4), the partition is raised over the pods still on the old revision
    /// (at most the new replicas), so a partition lowered under the old budget releases no
    /// further group; Case 5 lowers it again under the new budget.
    pub rescale_holds_old: bool,
    /// Not upstream: a proposed fix for Z06 (docs/findings/Z06.md). The LWS reconciler reads
    /// the leader StatefulSet it computes the partition from with a live GET (controller-
    /// runtime's API reader) instead of from its cache, which may not yet hold its own last
    /// write: `min(wanted, current)` then bounds by the partition actually written.
    pub leader_sts_read_live: bool,
    /// Not upstream: a proposed fix for Z09 (docs/findings/Z09.md). The DisaggregatedSet
    /// controller completes a new revision whose LWSs were only partly created (a crash or an
    /// API error between two creates) instead of waiting for it forever. Only v0.10.0 has a
    /// DisaggregatedSet.
    pub ds_complete_partial_revision: bool,
    /// Not upstream: a proposed fix for Z10 (docs/findings/Z10.md). The DisaggregatedSet
    /// controller counts an old revision's replicas over every role it has, not only the
    /// spec's, so a removed role whose drain was interrupted is still drained.
    pub ds_count_removed_roles: bool,
    /// The scheduler provider (`crate::v0_10_0::scheduler_provider`): PodGroups for gang
    /// scheduling, created by the pod controller, named in every LWS pod by the pod webhook.
    /// Only the v0.10.0 port has it; unset in a default install.
    pub gang_scheduling: GangScheduling,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// The spec as given (`all-fixed`, `v0.10.0,partition=all-unready`, ...): what replay
    /// commands print.
    pub name: String,
    pub release: Release,
    pub flags: Flags,
}

/// A release with its own port, or its own flag set on the shared port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Release {
    V0_3_0,
    V0_4_1,
    /// Tag v0.10.0 (commit 2161f38), ported in `crate::v0_10_0`.
    V0_10_0,
}

impl Release {
    pub fn name(self) -> &'static str {
        match self {
            Release::V0_3_0 => "v0.3.0",
            Release::V0_4_1 => "v0.4.1",
            Release::V0_10_0 => "v0.10.0",
        }
    }

    pub fn flags(self) -> Flags {
        match self {
            Release::V0_3_0 => Flags::v0_3_0(),
            Release::V0_4_1 => Flags::v0_4_1(),
            Release::V0_10_0 => Flags::v0_10_0(),
        }
    }

    fn parse(name: &str) -> Option<Release> {
        [Release::V0_3_0, Release::V0_4_1, Release::V0_10_0]
            .into_iter()
            .find(|r| r.name() == name)
    }
}

pub const RELEASES: [&str; 3] = ["v0.3.0", "v0.4.1", "v0.10.0"];

/// `--reconciler latest`: the newest release profile.
pub const LATEST: &str = "v0.10.0";

/// `--reconciler all-fixed`: v0.4.1 with every known upstream fix and the proposed fixes for
/// our findings Z01-Z06, Z08 and Z11 (docs/bug-zoo.md). No release ships it; the campaigns of
/// the bug zoo measured against it before v0.10.0 was ported. Z05's fix (`worker-finalizer=on`)
/// joined in session 14; Z08's (`scale-up-surge=keep`), Z04's (`rescale-partition=hold-old`)
/// and Z06's (`leader-sts-read=live`) in session 15; Z11's (`adopted-leader-sts=wait`) in
/// session 23, so an all-fixed campaign reports only what has no fix yet.
pub const ALL_FIXED: &str = "v0.4.1,worker-sts-ready=available,worker-template=revision,surge-release=max-unavailable,restart-check=ownership,missing-worker-sts=skip,leader-pod-watch=on,terminating-pods=not-ready,partition=all-unready,pod-delete-events=tombstone,leader-max-unavailable=budget,deleting-lws=return,worker-finalizer=on,scale-up-surge=keep,rescale-partition=hold-old,leader-sts-read=live,adopted-leader-sts=wait";

/// The names `Profile::parse` accepts besides the releases, with what they stand for.
pub const ALIASES: [(&str, &str); 2] = [("latest", LATEST), ("all-fixed", ALL_FIXED)];

/// A flag: its values, its upstream source, and the field it reads and writes as an index into
/// `values` (a bool is index 1 when true; an enum declares its variants in `values` order, which
/// the round-trip test checks).
struct FlagSpec {
    name: &'static str,
    values: &'static [&'static str],
    upstream: &'static str,
    /// The values accepted on the v0.10.0 port: the tag's own value, plus the alternatives
    /// that have a code path there (a re-enabled bug, a later upstream fix, a proposed fix).
    at_v0_10_0: &'static [&'static str],
    get: fn(&Flags) -> usize,
    set: fn(&mut Flags, usize),
}

/// Flag values with a code path only in the v0.10.0 port (the scheduler provider; the
/// DisaggregatedSet controller's proposed fixes: no older release runs that controller).
const ONLY_AT_V0_10_0: &[(&str, &str)] = &[
    ("gang-scheduling", "volcano"),
    ("ds-partial-revision", "complete"),
    ("ds-old-replicas", "all-roles"),
];

const FLAGS: &[FlagSpec] = &[
    FlagSpec {
        name: "worker-sts-write",
        values: &["apply", "create"],
        upstream: "PR #229 (84da957)",
        at_v0_10_0: &["create"],
        get: |f| f.worker_sts_write as usize,
        set: |f, i| f.worker_sts_write = [WorkerStsWrite::Apply, WorkerStsWrite::Create][i],
    },
    FlagSpec {
        name: "worker-update-strategy",
        values: &["RollingUpdate", "OnDelete"],
        upstream: "workaround in issue #225",
        at_v0_10_0: &["RollingUpdate", "OnDelete"],
        get: |f| usize::from(f.worker_update_strategy_on_delete),
        set: |f, i| f.worker_update_strategy_on_delete = i == 1,
    },
    FlagSpec {
        name: "worker-sts-ready",
        values: &["exists", "available"],
        upstream: "PR #705 (7a4e3c1)",
        at_v0_10_0: &["available", "exists"],
        get: |f| f.worker_sts_ready as usize,
        set: |f, i| f.worker_sts_ready = [WorkerStsReady::Exists, WorkerStsReady::Available][i],
    },
    FlagSpec {
        name: "status-source",
        values: &["worker-sts", "leader-pods"],
        upstream: "v0.4.0, leaderworkerset_controller.go updateConditions",
        at_v0_10_0: &["leader-pods"],
        get: |f| f.status_source as usize,
        set: |f, i| f.status_source = [StatusSource::WorkerSts, StatusSource::LeaderPods][i],
    },
    FlagSpec {
        name: "size-one-worker-sts",
        values: &["create", "skip"],
        upstream: "v0.4.0, PR #190 (bfb54f8)",
        at_v0_10_0: &["skip"],
        get: |f| usize::from(f.size_one_skips_worker_sts),
        set: |f, i| f.size_one_skips_worker_sts = i == 1,
    },
    FlagSpec {
        name: "restart-policy-default",
        values: &["Default", "RecreateGroupOnPodRestart"],
        upstream: "v0.4.0, PR #214 (3892afa)",
        at_v0_10_0: &["RecreateGroupOnPodRestart"],
        get: |f| usize::from(f.restart_policy_default_recreate),
        set: |f, i| f.restart_policy_default_recreate = i == 1,
    },
    FlagSpec {
        name: "network-config",
        values: &["off", "on"],
        upstream: "v0.4.0, PR #197 (39f4dd3), PR #208 (44d877b)",
        at_v0_10_0: &["on"],
        get: |f| usize::from(f.network_config),
        set: |f, i| f.network_config = i == 1,
    },
    FlagSpec {
        name: "worker-template",
        values: &["live", "revision"],
        upstream: "B02, PR #277 (c03d4c9)",
        at_v0_10_0: &["revision"],
        get: |f| usize::from(f.worker_template_from_revision),
        set: |f, i| f.worker_template_from_revision = i == 1,
    },
    FlagSpec {
        name: "surge-release",
        values: &["one-at-a-time", "max-unavailable"],
        upstream: "B12, PR #778 (d275e0a)",
        at_v0_10_0: &["max-unavailable"],
        get: |f| usize::from(f.surge_release_by_max_unavailable),
        set: |f, i| f.surge_release_by_max_unavailable = i == 1,
    },
    FlagSpec {
        name: "restart-check",
        values: &["name", "ownership"],
        upstream: "B03/B08, PR #277 (e9d6131), PR #805 (8b6ef0c)",
        at_v0_10_0: &["ownership"],
        get: |f| usize::from(f.restart_check_ownership),
        set: |f, i| f.restart_check_ownership = i == 1,
    },
    FlagSpec {
        name: "condition-flip",
        values: &["copy", "in-place"],
        upstream: "B16, PR #38 (0948240)",
        at_v0_10_0: &["in-place"],
        get: |f| usize::from(f.exclusive_conditions_flip),
        set: |f, i| f.exclusive_conditions_flip = i == 1,
    },
    FlagSpec {
        name: "partition",
        values: &["tail", "unready-below", "hd", "all-unready"],
        upstream: "B10 PR #488 (6dd31e2), B11 PR #568 (b088493); all-unready: proposed fix for Z03",
        at_v0_10_0: &["hd", "all-unready"],
        get: |f| f.partition as usize,
        set: |f, i| {
            f.partition = [
                PartitionFormula::Tail,
                PartitionFormula::UnreadyBelow,
                PartitionFormula::Hd,
                PartitionFormula::AllUnready,
            ][i]
        },
    },
    FlagSpec {
        name: "leader-pod-watch",
        values: &["off", "on"],
        upstream: "Z01: on in d275e0a (PR #778) .. 02e43b0 (PR #791)",
        at_v0_10_0: &["off", "on"],
        get: |f| usize::from(f.leader_pod_watch),
        set: |f, i| f.leader_pod_watch = i == 1,
    },
    FlagSpec {
        name: "leader-max-unavailable",
        values: &["copy", "budget"],
        upstream: "B13, PR #781 (d4d6b17)",
        at_v0_10_0: &["budget"],
        get: |f| usize::from(f.leader_max_unavailable_budget),
        set: |f, i| f.leader_max_unavailable_budget = i == 1,
    },
    FlagSpec {
        name: "pod-delete-events",
        values: &["read-live", "tombstone"],
        upstream: "B09, PR #999 (dcbd8f0)",
        at_v0_10_0: &["read-live", "tombstone"],
        get: |f| usize::from(f.pod_delete_tombstones),
        set: |f, i| f.pod_delete_tombstones = i == 1,
    },
    FlagSpec {
        name: "deleting-lws",
        values: &["reconcile", "return"],
        upstream: "B22, PR #523 (75103b8)",
        at_v0_10_0: &["return"],
        get: |f| usize::from(f.deleting_lws_returns),
        set: |f, i| f.deleting_lws_returns = i == 1,
    },
    FlagSpec {
        name: "revision-at-creation",
        values: &["create", "reuse"],
        upstream: "proposed fix for Z07 (not upstream)",
        at_v0_10_0: &["create", "reuse"],
        get: |f| usize::from(f.revision_reuse_at_creation),
        set: |f, i| f.revision_reuse_at_creation = i == 1,
    },
    FlagSpec {
        name: "worker-sts-spec",
        values: &["live", "revision"],
        upstream: "B23, PR #963 (d014d0f, after v0.10.0)",
        at_v0_10_0: &["live", "revision"],
        get: |f| usize::from(f.worker_sts_spec_from_revision),
        set: |f, i| f.worker_sts_spec_from_revision = i == 1,
    },
    FlagSpec {
        name: "adopted-leader-sts",
        values: &["take-over", "wait"],
        upstream: "proposed fix for Z11 (not upstream)",
        at_v0_10_0: &["take-over", "wait"],
        get: |f| usize::from(f.foreign_leader_sts_waits),
        set: |f, i| f.foreign_leader_sts_waits = i == 1,
    },
    FlagSpec {
        name: "scale-up-surge",
        values: &["spend", "keep"],
        upstream: "proposed fix for Z08 (not upstream)",
        at_v0_10_0: &["spend", "keep"],
        get: |f| usize::from(f.scale_up_keeps_surge),
        set: |f, i| f.scale_up_keeps_surge = i == 1,
    },
    FlagSpec {
        name: "rescale-partition",
        values: &["keep", "hold-old"],
        upstream: "proposed fix for Z04 (not upstream)",
        at_v0_10_0: &["keep", "hold-old"],
        get: |f| usize::from(f.rescale_holds_old),
        set: |f, i| f.rescale_holds_old = i == 1,
    },
    FlagSpec {
        name: "leader-sts-read",
        values: &["cache", "live"],
        upstream: "proposed fix for Z06 (not upstream)",
        at_v0_10_0: &["cache", "live"],
        get: |f| usize::from(f.leader_sts_read_live),
        set: |f, i| f.leader_sts_read_live = i == 1,
    },
    FlagSpec {
        name: "ds-partial-revision",
        values: &["stall", "complete"],
        upstream: "proposed fix for Z09 (not upstream; DisaggregatedSet, v0.10.0)",
        at_v0_10_0: &["stall", "complete"],
        get: |f| usize::from(f.ds_complete_partial_revision),
        set: |f, i| f.ds_complete_partial_revision = i == 1,
    },
    FlagSpec {
        name: "gang-scheduling",
        values: &["off", "volcano"],
        upstream:
            "v0.7.0, PR #498 (2d0e76b): Configuration gangSchedulingManagement.schedulerProvider",
        at_v0_10_0: &["off", "volcano"],
        get: |f| f.gang_scheduling as usize,
        set: |f, i| f.gang_scheduling = [GangScheduling::Off, GangScheduling::Volcano][i],
    },
    FlagSpec {
        name: "ds-old-replicas",
        values: &["spec-roles", "all-roles"],
        upstream: "proposed fix for Z10 (not upstream; DisaggregatedSet, v0.10.0)",
        at_v0_10_0: &["spec-roles", "all-roles"],
        get: |f| usize::from(f.ds_count_removed_roles),
        set: |f, i| f.ds_count_removed_roles = i == 1,
    },
    FlagSpec {
        name: "worker-finalizer",
        values: &["off", "on"],
        upstream: "proposed fix for Z05 (not upstream)",
        at_v0_10_0: &["off", "on"],
        get: |f| usize::from(f.worker_finalizer),
        set: |f, i| f.worker_finalizer = i == 1,
    },
    FlagSpec {
        name: "terminating-pods",
        values: &["ready", "not-ready"],
        upstream: "proposed fix for Z02 (not upstream)",
        at_v0_10_0: &["ready", "not-ready"],
        get: |f| usize::from(f.terminating_not_ready),
        set: |f, i| f.terminating_not_ready = i == 1,
    },
    FlagSpec {
        name: "missing-worker-sts",
        values: &["error", "count", "skip"],
        upstream: "B18, PR #490 (cb41374)",
        at_v0_10_0: &["skip"],
        get: |f| f.missing_worker_sts as usize,
        set: |f, i| {
            f.missing_worker_sts = [
                MissingWorkerSts::Error,
                MissingWorkerSts::Count,
                MissingWorkerSts::Skip,
            ][i]
        },
    },
];

impl Flags {
    pub fn v0_3_0() -> Flags {
        Flags {
            worker_sts_write: WorkerStsWrite::Apply,
            worker_update_strategy_on_delete: false,
            worker_sts_ready: WorkerStsReady::Exists,
            status_source: StatusSource::WorkerSts,
            size_one_skips_worker_sts: false,
            worker_template_from_revision: false,
            surge_release_by_max_unavailable: false,
            restart_check_ownership: false,
            exclusive_conditions_flip: true,
            partition: PartitionFormula::Tail,
            missing_worker_sts: MissingWorkerSts::Error,
            terminating_not_ready: false,
            leader_pod_watch: false,
            pod_delete_tombstones: false,
            leader_max_unavailable_budget: false,
            restart_policy_default_recreate: false,
            network_config: false,
            deleting_lws_returns: false,
            revision_reuse_at_creation: false,
            worker_sts_spec_from_revision: false,
            foreign_leader_sts_waits: false,
            worker_finalizer: false,
            scale_up_keeps_surge: false,
            rescale_holds_old: false,
            leader_sts_read_live: false,
            ds_complete_partial_revision: false,
            ds_count_removed_roles: false,
            gang_scheduling: GangScheduling::Off,
        }
    }

    /// v0.4.1 (tag v0.4.1): v0.3.0 with the seed fix (PR #229), leader pods as the status
    /// source, no worker StatefulSet for size 1, the new restart-policy default and networkConfig.
    pub fn v0_4_1() -> Flags {
        Flags {
            worker_sts_write: WorkerStsWrite::Create,
            status_source: StatusSource::LeaderPods,
            size_one_skips_worker_sts: true,
            restart_policy_default_recreate: true,
            network_config: true,
            ..Flags::v0_3_0()
        }
    }

    /// v0.10.0 (tag v0.10.0, 2161f38): every upstream fix of the zoo merged by then. Only the
    /// sim-side watch wiring and the flags overridable at the tag are read from this set; the
    /// rest describe what the `v0_10_0` port does.
    pub fn v0_10_0() -> Flags {
        Flags {
            worker_sts_ready: WorkerStsReady::Available,
            worker_template_from_revision: true,
            surge_release_by_max_unavailable: true,
            restart_check_ownership: true,
            partition: PartitionFormula::Hd,
            missing_worker_sts: MissingWorkerSts::Skip,
            leader_max_unavailable_budget: true,
            deleting_lws_returns: true,
            ..Flags::v0_4_1()
        }
    }

    fn set(&mut self, release: Release, name: &str, value: &str) -> Result<(), String> {
        let spec = FLAGS.iter().find(|f| f.name == name).ok_or_else(|| {
            let names: Vec<&str> = FLAGS.iter().map(|f| f.name).collect();
            format!("unknown flag {name:?}; valid flags: {}", names.join(", "))
        })?;
        if release != Release::V0_10_0 && ONLY_AT_V0_10_0.contains(&(name, value)) {
            return Err(format!(
                "flag {name}={value} has no code path before v0.10.0 (only the v0.10.0 port has it)"
            ));
        }
        if release == Release::V0_10_0 && !spec.at_v0_10_0.contains(&value) {
            return Err(format!(
                "flag {name}={value} has no code path at v0.10.0; valid there: {}",
                spec.at_v0_10_0
                    .iter()
                    .map(|v| format!("{name}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let index = spec
            .values
            .iter()
            .position(|v| *v == value)
            .ok_or_else(|| {
                format!(
                    "invalid value {value:?} for flag {name}; valid values: {}",
                    spec.values.join(", ")
                )
            })?;
        (spec.set)(self, index);
        Ok(())
    }

    /// One line per flag for `lws-sim help`: name, values (v0.10.0's in brackets), upstream.
    pub fn help() -> Vec<String> {
        FLAGS
            .iter()
            .map(|s| {
                format!(
                    "{}={}  [v0.10.0: {}]  {}",
                    s.name,
                    s.values.join("|"),
                    s.at_v0_10_0.join("|"),
                    s.upstream
                )
            })
            .collect()
    }

    /// `flag=value` pairs, in `FLAGS` order: a canonical spelling of the flag set.
    pub fn describe(&self) -> Vec<String> {
        FLAGS
            .iter()
            .map(|spec| {
                let value = spec.values[(spec.get)(self)];
                format!("{}={value}  ({})", spec.name, spec.upstream)
            })
            .collect()
    }
}

impl Profile {
    /// Parse `PROFILE[,flag=value...]`, where PROFILE is a release or an alias. Errors list the
    /// valid profiles or flags.
    pub fn parse(spec: &str) -> Result<Profile, String> {
        let (head, rest) = match spec.split_once(',') {
            Some((h, r)) => (h.trim(), Some(r)),
            None => (spec.trim(), None),
        };
        let expanded = ALIASES.iter().find(|(a, _)| *a == head).map(|(_, s)| *s);
        let base = expanded.unwrap_or(head);
        let mut parts = base.split(',').map(str::trim);
        let release_name = parts.next().unwrap_or("");
        let Some(release) = Release::parse(release_name) else {
            let aliases: Vec<&str> = ALIASES.iter().map(|(a, _)| *a).collect();
            return Err(format!(
                "unknown reconciler profile {release_name:?}; valid profiles: {}, {}",
                RELEASES.join(", "),
                aliases.join(", ")
            ));
        };
        let mut flags = release.flags();
        let overrides = rest.into_iter().flat_map(|r| r.split(',')).map(str::trim);
        let mut given: Vec<&str> = Vec::new();
        // The alias's own flags first, then the ones written after it, each at most once.
        let parts = parts
            .map(|p| (p, false))
            .chain(overrides.map(|p| (p, true)));
        for (part, written) in parts {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| format!("expected flag=value, got {part:?}"))?;
            let name = name.trim();
            // A second value would silently win.
            if written && given.contains(&name) {
                return Err(format!("flag {name:?} is given twice in {spec:?}"));
            }
            if written {
                given.push(name);
            }
            flags.set(release, name, value.trim())?;
        }
        Ok(Profile {
            name: spec.to_string(),
            release,
            flags,
        })
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_differ_in_the_worker_sts_write() {
        let old = Profile::parse("v0.3.0").unwrap();
        let new = Profile::parse("v0.4.1").unwrap();
        assert_eq!(old.flags.worker_sts_write, WorkerStsWrite::Apply);
        assert_eq!(new.flags.worker_sts_write, WorkerStsWrite::Create);
    }

    #[test]
    fn flags_override_the_release() {
        let p = Profile::parse("v0.3.0, worker-update-strategy=OnDelete").unwrap();
        assert!(p.flags.worker_update_strategy_on_delete);
        assert_eq!(p.flags.worker_sts_write, WorkerStsWrite::Apply);
        let p = Profile::parse("v0.4.1,worker-sts-ready=available").unwrap();
        assert_eq!(p.flags.worker_sts_ready, WorkerStsReady::Available);
    }

    #[test]
    fn every_flag_value_set_reads_back_and_touches_only_its_flag() {
        for release in RELEASES {
            let base = Profile::parse(release).unwrap().flags;
            for spec in FLAGS {
                let values = if release == "v0.10.0" {
                    spec.at_v0_10_0
                } else {
                    spec.values
                };
                let older_port = |v: &&&str| {
                    release == "v0.10.0" || !ONLY_AT_V0_10_0.contains(&(spec.name, **v))
                };
                for &value in values.iter().filter(older_port) {
                    let p = Profile::parse(&format!("{release},{}={value}", spec.name)).unwrap();
                    let want = |s: &FlagSpec| {
                        if s.name == spec.name {
                            value
                        } else {
                            s.values[(s.get)(&base)]
                        }
                    };
                    for (line, s) in p.flags.describe().iter().zip(FLAGS) {
                        assert!(
                            line.starts_with(&format!("{}={} ", s.name, want(s))),
                            "{release},{}={value}: {line}",
                            spec.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn gang_scheduling_exists_only_in_the_v0_10_0_port() {
        let p = Profile::parse("v0.10.0,gang-scheduling=volcano").unwrap();
        assert_eq!(p.flags.gang_scheduling, GangScheduling::Volcano);
        assert_eq!(Flags::v0_10_0().gang_scheduling, GangScheduling::Off);
        for release in ["v0.3.0", "v0.4.1", "all-fixed"] {
            let e = Profile::parse(&format!("{release},gang-scheduling=volcano")).unwrap_err();
            assert!(e.contains("no code path before v0.10.0"), "{release}: {e}");
            assert!(Profile::parse(&format!("{release},gang-scheduling=off")).is_ok());
        }
    }

    #[test]
    fn the_disaggregated_set_fixes_exist_only_in_the_v0_10_0_port() {
        for fix in ["ds-partial-revision=complete", "ds-old-replicas=all-roles"] {
            assert!(Profile::parse(&format!("v0.10.0,{fix}")).is_ok());
            for release in ["v0.3.0", "v0.4.1", "all-fixed"] {
                let e = Profile::parse(&format!("{release},{fix}")).unwrap_err();
                assert!(e.contains("no code path before v0.10.0"), "{release}: {e}");
            }
        }
        assert!(Profile::parse("v0.4.1,ds-partial-revision=stall").is_ok());
    }

    #[test]
    fn v0_10_0_values_are_valid_values_and_include_the_tag_default() {
        let tag = Flags::v0_10_0();
        for spec in FLAGS {
            assert!(
                spec.at_v0_10_0.iter().all(|v| spec.values.contains(v)),
                "{}",
                spec.name
            );
            let default = spec.values[(spec.get)(&tag)];
            assert!(
                spec.at_v0_10_0.contains(&default),
                "{}={default}",
                spec.name
            );
        }
    }

    #[test]
    fn aliases_expand_and_take_overrides() {
        let latest = Profile::parse("latest").unwrap();
        assert_eq!(latest.release, Release::V0_10_0);
        assert_eq!(latest.flags, Flags::v0_10_0());
        let fixed = Profile::parse("all-fixed").unwrap();
        assert_eq!(fixed.flags, Profile::parse(ALL_FIXED).unwrap().flags);
        assert_eq!(fixed.name, "all-fixed");
        let p = Profile::parse("all-fixed,partition=hd").unwrap();
        assert_eq!(p.flags.partition, PartitionFormula::Hd);
        assert!(p.flags.terminating_not_ready);
    }

    #[test]
    fn a_flag_without_a_code_path_at_v0_10_0_is_an_error() {
        let e = Profile::parse("v0.10.0,worker-sts-write=apply").unwrap_err();
        assert!(e.contains("no code path at v0.10.0"), "{e}");
        assert!(e.contains("worker-sts-write=create"), "{e}");
        let p = Profile::parse("v0.10.0,partition=all-unready,terminating-pods=not-ready").unwrap();
        assert_eq!(p.flags.partition, PartitionFormula::AllUnready);
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let e = Profile::parse("v9").unwrap_err();
        assert!(e.contains("v0.3.0, v0.4.1"), "{e}");
        let e = Profile::parse("v0.3.0,nope=1").unwrap_err();
        assert!(e.contains("worker-sts-write"), "{e}");
        let e = Profile::parse("v0.3.0,worker-sts-write=maybe").unwrap_err();
        assert!(e.contains("apply, create"), "{e}");
        assert!(Profile::parse("v0.3.0,worker-sts-write").is_err());
    }
}
