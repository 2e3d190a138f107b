//! The printer columns each custom resource's CRD declares (`additionalPrinterColumns`): the
//! CRDs `crds.rs` serves carry them, and `table.rs` prints custom resources by them, as the
//! apiextensions server does.

use crate::api::KindId;

/// One of a CRD's `additionalPrinterColumns`.
pub struct PrinterColumn {
    pub name: &'static str,
    /// A simple `.a.b` path (every one declared here is).
    pub json_path: &'static str,
    pub ty: &'static str,
    pub priority: u8,
}

const fn column(name: &'static str, json_path: &'static str, ty: &'static str) -> PrinterColumn {
    PrinterColumn {
        name,
        json_path,
        ty,
        priority: 0,
    }
}

const AGE: PrinterColumn = column("Age", ".metadata.creationTimestamp", "date");

/// config/crd/bases at lws v0.10.0.
const LWS_COLUMNS: &[PrinterColumn] = &[
    column("Ready", ".status.readyReplicas", "integer"),
    column("Desired", ".spec.replicas", "integer"),
    column("Up-to-date", ".status.updatedReplicas", "integer"),
    AGE,
];

const ROLE_SCALER_COLUMNS: &[PrinterColumn] = &[
    column("Desired", ".spec.replicas", "integer"),
    column("Current", ".status.replicas", "integer"),
    AGE,
];

/// volcano config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml (v1.12).
const POD_GROUP_COLUMNS: &[PrinterColumn] = &[
    column("STATUS", ".status.phase", "string"),
    column("minMember", ".spec.minMember", "integer"),
    column("RUNNINGS", ".status.running", "integer"),
    column("AGE", ".metadata.creationTimestamp", "date"),
    PrinterColumn {
        priority: 1,
        ..column("QUEUE", ".spec.queue", "string")
    },
];

/// The printer columns each CRD declares at the tag (the LeaderWorkerSet's only when the
/// release's CRD has them, `ApiServer::lws_printer_columns`); without any the API server prints
/// a custom resource's name and age. `serve`'s tables are made from them, as the apiextensions
/// server makes a custom resource's.
pub fn printer_columns(kind: KindId, lws_printer_columns: bool) -> &'static [PrinterColumn] {
    match kind {
        KindId::LeaderWorkerSet if lws_printer_columns => LWS_COLUMNS,
        KindId::DisaggregatedSetRoleScaler => ROLE_SCALER_COLUMNS,
        KindId::PodGroup => POD_GROUP_COLUMNS,
        _ => &[],
    }
}
