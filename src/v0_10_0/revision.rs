//! `pkg/utils/revision/revision_utils.go` at v0.10.0: the LWS's templates stored as
//! ControllerRevisions, the revision key that labels every object of a group, and the
//! history truncation once a rollout is done.
//!
//! Simplifications (docs/fidelity.md): `ApplyRevision` replaces `leaderWorkerTemplate` and
//! `networkConfig` directly instead of running a strategic merge patch (the stored patch marks
//! both `$patch: replace`, so the result is the same); the revision's raw bytes are our JSON
//! encoding, not Go's (the key is still FNV-1 32 over those bytes, safe-encoded as upstream);
//! `SetMatchesRevision` has no LRU cache: upstream keys it by (LWS UID, generation, revision
//! resourceVersion), and the proposed revision is a function of the LWS spec, which changes only
//! with the generation, so a hit returns what the computation returns (upstream's unit test
//! that mutates the proposed revision under a fixed generation is the one difference).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use serde_json::{json, Map, Value};

use crate::api::{keys, LeaderWorkerSet, NetworkConfig};
use crate::client::{Client, Error, Result};
use crate::k8s;

/// `NewRevision`: a revision numbered one above the highest owned one, named
/// `<lws>-<hash>-<number>`, labelled with `revision_key` or, when that is empty, its own hash.
pub async fn new_revision<C: Client>(
    c: &C,
    lws: &LeaderWorkerSet,
    revision_key: &str,
) -> Result<ControllerRevision> {
    let revisions = list_revisions(c, lws, &[(keys::SET_NAME, lws.name())]).await?;
    let revision = get_highest_revision(&revisions).map_or(1, |r| r.revision.unwrap_or(0) + 1);
    let patch = get_patch(lws);
    let hash = hash_revision(&patch);
    let key = if revision_key.is_empty() {
        hash.clone()
    } else {
        revision_key.to_string()
    };
    Ok(ControllerRevision {
        metadata: ObjectMeta {
            name: Some(revision_name(lws.name(), &hash, revision)),
            namespace: Some(lws.namespace().to_string()),
            labels: Some(
                [
                    (keys::SET_NAME.to_string(), lws.name().to_string()),
                    (keys::TEMPLATE_REVISION_HASH.to_string(), key),
                ]
                .into(),
            ),
            owner_references: Some(vec![k8s::controller_ref(
                crate::api::API_VERSION,
                crate::api::KIND,
                &lws.metadata,
            )]),
            ..Default::default()
        },
        data: RawExtension(patch),
        revision: Some(revision),
    })
}

/// The key `NewRevision(lws, "")` labels a revision of the current templates with: the hash
/// of the stored patch. Not an upstream function: the lookup of `revision-at-creation=reuse`
/// (Z07's proposed fix).
pub fn current_revision_key(lws: &LeaderWorkerSet) -> String {
    hash_revision(&get_patch(lws))
}

/// `CreateRevision`.
pub async fn create_revision<C: Client>(
    c: &C,
    revision: ControllerRevision,
) -> Result<Arc<ControllerRevision>> {
    c.create(revision).await
}

/// `GetRevisionKey`: the template-revision-hash label, or "".
pub fn get_revision_key(meta: &ObjectMeta) -> &str {
    k8s::label(meta, keys::TEMPLATE_REVISION_HASH).unwrap_or("")
}

/// `GetRevision`: the owned revision labelled `revision_key` (the highest if several), or None
/// for an empty key or no match.
pub async fn get_revision<C: Client>(
    c: &C,
    lws: &LeaderWorkerSet,
    revision_key: &str,
) -> Result<Option<Arc<ControllerRevision>>> {
    if revision_key.is_empty() {
        return Ok(None);
    }
    let selector = [
        (keys::SET_NAME, lws.name()),
        (keys::TEMPLATE_REVISION_HASH, revision_key),
    ];
    let revisions = list_revisions(c, lws, &selector).await?;
    Ok(get_highest_revision(&revisions).cloned())
}

/// `ListRevisions`: revisions matching the labels whose controller is `lws` or nobody (the
/// leader StatefulSet's own revisions carry the LWS name label too, but are controlled by it).
pub async fn list_revisions<C: Client>(
    c: &C,
    lws: &LeaderWorkerSet,
    labels: &[(&str, &str)],
) -> Result<Vec<Arc<ControllerRevision>>> {
    let all = c
        .list::<ControllerRevision>(lws.namespace(), labels)
        .await?;
    Ok(all
        .into_iter()
        .filter(|r| {
            k8s::controller_of(&r.metadata).is_none_or(|o| o.uid == k8s::uid(&lws.metadata))
        })
        .collect())
}

/// `ApplyRevision`: the LWS with the revision's `leaderWorkerTemplate` and `networkConfig`.
pub fn apply_revision(
    lws: &LeaderWorkerSet,
    revision: &ControllerRevision,
) -> Result<LeaderWorkerSet> {
    let mut out = lws.clone();
    let spec = revision.data.0.get("spec");
    let field = |name: &str| -> Option<Value> {
        let mut v = spec?.get(name)?.clone();
        if let Value::Object(m) = &mut v {
            m.remove("$patch");
        }
        Some(v)
    };
    let undecodable = |e: serde_json::Error| {
        Error::internal(format!(
            "revision {} does not decode: {e}",
            k8s::name(&revision.metadata)
        ))
    };
    if let Some(t) = field("leaderWorkerTemplate") {
        out.spec.leader_worker_template = serde_json::from_value(t).map_err(undecodable)?;
    }
    if let Some(n) = field("networkConfig") {
        out.spec.network_config = Some(serde_json::from_value(n).map_err(undecodable)?);
    }
    Ok(out)
}

/// `EqualRevision`: both absent, or the same stored bytes.
pub fn equal_revision(lhs: Option<&ControllerRevision>, rhs: Option<&ControllerRevision>) -> bool {
    match (lhs, rhs) {
        (Some(l), Some(r)) => l.data.0 == r.data.0,
        (l, r) => l.is_none() && r.is_none(),
    }
}

/// `SetMatchesRevision`: the existing revision applied back to the LWS gives the proposed
/// revision's bytes (a serialization drift is not a template change).
pub fn set_matches_revision(
    lws: &LeaderWorkerSet,
    proposed: &ControllerRevision,
    existing: &ControllerRevision,
) -> bool {
    match apply_revision(lws, existing) {
        Ok(latest) => get_patch(&latest) == proposed.data.0,
        Err(_) => false,
    }
}

/// `TruncateRevisions`: delete every owned revision whose key is not `revision_key`.
pub async fn truncate_revisions<C: Client>(
    c: &C,
    lws: &LeaderWorkerSet,
    revision_key: &str,
) -> Result<()> {
    let revisions = list_revisions(c, lws, &[(keys::SET_NAME, lws.name())]).await?;
    for r in revisions {
        if get_revision_key(&r.metadata) != revision_key {
            c.delete::<ControllerRevision>(lws.namespace(), k8s::name(&r.metadata), None)
                .await?;
        }
    }
    Ok(())
}

/// `getPatch`: `{"spec": {"leaderWorkerTemplate": ..., "networkConfig": ...}}`, both marked
/// `$patch: replace`; a nil networkConfig is stored as `Shared`, as the webhook would default it.
pub fn get_patch(lws: &LeaderWorkerSet) -> Value {
    let network_config = lws.spec.network_config.clone().unwrap_or(NetworkConfig {
        subdomain_policy: Some("Shared".into()),
    });
    let replace = |v: Value| -> Value {
        let mut m = match v {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        m.insert("$patch".into(), Value::String("replace".into()));
        Value::Object(m)
    };
    let encode = |v: serde_json::Result<Value>| v.expect("LWS fields encode");
    json!({
        "spec": {
            "leaderWorkerTemplate": replace(encode(serde_json::to_value(&lws.spec.leader_worker_template))),
            "networkConfig": replace(encode(serde_json::to_value(&network_config))),
        }
    })
}

/// `getHighestRevision`: the last one with the highest number.
fn get_highest_revision(revisions: &[Arc<ControllerRevision>]) -> Option<&Arc<ControllerRevision>> {
    let mut max = 0;
    let mut out = None;
    for r in revisions {
        let number = r.revision.unwrap_or(0);
        if max <= number {
            max = number;
            out = Some(r);
        }
    }
    out
}

/// `revisionName`: `<prefix>-<hash>-<number>`, the prefix cut to 220 bytes.
fn revision_name(prefix: &str, hash: &str, number: i64) -> String {
    let mut cut = prefix.len().min(220);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{hash}-{number}", &prefix[..cut])
}

/// `hashRevision`: FNV-1 (not 1a) 32 over the stored bytes, printed in decimal and passed
/// through `rand.SafeEncodeString`.
pub fn hash_revision(data: &Value) -> String {
    let bytes = serde_json::to_vec(data).expect("values encode");
    safe_encode_string(&fnv1_32(&bytes).to_string())
}

/// Go's `hash/fnv.New32`: multiply, then xor.
fn fnv1_32(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in bytes {
        h = h.wrapping_mul(0x0100_0193);
        h ^= u32::from(b);
    }
    h
}

/// `k8s.io/apimachinery/pkg/util/rand.SafeEncodeString`: each byte mapped onto an alphabet
/// without vowels (so no words form) and without the look-alikes 0, 1 and 3.
fn safe_encode_string(s: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    s.bytes()
        .map(|b| char::from(ALPHANUMS[usize::from(b) % ALPHANUMS.len()]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lws(size: i32) -> LeaderWorkerSet {
        let mut l = LeaderWorkerSet::default();
        l.metadata.name = Some("x".into());
        l.spec.leader_worker_template.size = Some(size);
        l
    }

    #[test]
    fn safe_encoding_matches_apimachinery() {
        // "0" is byte 48, 48 % 27 = 21 -> "4"; "9" is 57 % 27 = 3 -> "f".
        assert_eq!(safe_encode_string("09"), "4f");
    }

    #[test]
    fn fnv1_32_matches_the_reference_vectors() {
        // FNV-1 32 test vectors (draft-eastlake-fnv): "" and "a".
        assert_eq!(fnv1_32(b""), 0x811c_9dc5);
        assert_eq!(fnv1_32(b"a"), 0x050c_5d7e);
    }

    #[test]
    fn apply_revision_restores_templates_and_network_config() {
        let a = lws(3);
        let patch = get_patch(&a);
        assert_eq!(patch["spec"]["networkConfig"]["subdomainPolicy"], "Shared");
        let rev = ControllerRevision {
            data: RawExtension(patch),
            ..Default::default()
        };
        let mut b = lws(5);
        b.spec.network_config = Some(NetworkConfig {
            subdomain_policy: Some("UniquePerReplica".into()),
        });
        let restored = apply_revision(&b, &rev).unwrap();
        assert_eq!(restored.spec.leader_worker_template.size, Some(3));
        assert_eq!(
            restored
                .spec
                .network_config
                .unwrap()
                .subdomain_policy
                .as_deref(),
            Some("Shared")
        );
        assert!(set_matches_revision(&a, &rev, &rev));
        assert!(equal_revision(None, None));
        assert!(!equal_revision(Some(&rev), None));
    }

    #[test]
    fn names_are_prefix_hash_number() {
        assert_eq!(revision_name("lws", "abc", 2), "lws-abc-2");
        assert_eq!(revision_name(&"a".repeat(300), "h", 1).len(), 220 + 4);
    }
}
