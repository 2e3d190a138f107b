//! Object names and namespaces as the API server validates them (apimachinery
//! `pkg/api/validation/objectmeta.go` `ValidateObjectMeta`, `pkg/util/validation/validation.go`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::KindId;
use crate::lookup::LookupMap;

/// A DNS-1123 subdomain: at most 253 characters, `.`-separated parts of lowercase letters,
/// digits and `-`, each starting and ending with a letter or digit (`a..b` and `a-.b` are not
/// one: `IsDNS1123Subdomain`'s regex).
pub fn is_dns_subdomain(s: &str) -> bool {
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let part = |p: &str| {
        let b = p.as_bytes();
        b.first().is_some_and(alnum)
            && b.last().is_some_and(alnum)
            && b.iter().all(|c| alnum(c) || *c == b'-')
    };
    s.len() <= 253 && s.split('.').all(part)
}

/// A DNS-1123 label (namespaces): as a subdomain without `.`, at most 63 characters.
pub fn is_dns_label(s: &str) -> bool {
    is_dns_subdomain(s) && s.len() <= 63 && !s.contains('.')
}

/// A DNS-1035 label (Service names): a DNS-1123 label that starts with a letter.
pub fn is_dns1035_label(s: &str) -> bool {
    is_dns_label(s) && s.starts_with(|c: char| c.is_ascii_lowercase())
}

const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// `ValidateObjectMeta` on a create: the name by the kind's rule (a Service's is a DNS-1035
/// label, every other kind's here a DNS-1123 subdomain), the namespace a DNS-1123 label. The
/// message is the API server's field error.
pub fn validate(kind: KindId, meta: &ObjectMeta, known: &mut KnownKeys) -> Result<(), String> {
    let name = meta.name.as_deref().unwrap_or("");
    let (ok, rule) = match kind {
        KindId::Service => (is_dns1035_label(name), DNS1035),
        _ => (is_dns_subdomain(name), SUBDOMAIN),
    };
    if !ok {
        return Err(format!("metadata.name: Invalid value: {name:?}: {rule}"));
    }
    if let Some(ns) = meta.namespace.as_deref().filter(|ns| !is_dns_label(ns)) {
        return Err(format!(
            "metadata.namespace: Invalid value: {ns:?}: {LABEL}"
        ));
    }
    validate_finalizers(kind, meta)?;
    validate_labels_and_annotations(meta, known)
}

/// Finalizers: each a qualified name (apimachinery `ValidateFinalizerName`), and on a built-in
/// kind one without a `/` must be a standard one (kubernetes pkg/apis/core/validation
/// `validateKubeFinalizerName`: `kubernetes`, `orphan`, `foregroundDeletion`).
fn validate_finalizers(kind: KindId, meta: &ObjectMeta) -> Result<(), String> {
    let custom = matches!(
        kind,
        KindId::LeaderWorkerSet | KindId::DisaggregatedSet | KindId::DisaggregatedSetRoleScaler
    );
    for (i, f) in meta.finalizers.iter().flatten().enumerate() {
        let at = || format!("metadata.finalizers[{i}]: Invalid value: {f:?}");
        qualified_name(f).map_err(|m| format!("{}: {m}", at()))?;
        let standard = ["kubernetes", "orphan", "foregroundDeletion"].contains(&f.as_str());
        if !custom && !f.contains('/') && !standard {
            return Err(format!(
                "{}: name is neither a standard finalizer name nor is it fully qualified",
                at()
            ));
        }
    }
    Ok(())
}

/// `ValidateOwnerReferences` (apimachinery `pkg/api/validation/objectmeta.go`): each reference
/// names its owner fully (apiVersion, kind, name, uid), and at most one is the controller.
pub fn validate_owner_references(meta: &ObjectMeta) -> Result<(), String> {
    let refs = meta.owner_references.as_deref().unwrap_or(&[]);
    for (i, r) in refs.iter().enumerate() {
        for (field, v) in [
            ("apiVersion", &r.api_version),
            ("kind", &r.kind),
            ("name", &r.name),
            ("uid", &r.uid),
        ] {
            if v.is_empty() {
                return Err(format!(
                    "metadata.ownerReferences[{i}].{field}: Invalid value: \"\": {field} must not be empty"
                ));
            }
        }
    }
    if refs.iter().filter(|r| r.controller == Some(true)).count() > 1 {
        return Err(
            "metadata.ownerReferences: Invalid value: only one reference can have Controller set to true".into(),
        );
    }
    Ok(())
}

/// `ValidateLabels` and `ValidateAnnotations` (apimachinery
/// `pkg/apis/meta/v1/validation/validation.go`, `pkg/api/validation/objectmeta.go`): every
/// label key and annotation key a qualified name, every label value a label value, the
/// annotations at most 256 KiB together.
pub fn validate_labels_and_annotations(
    meta: &ObjectMeta,
    known: &mut KnownKeys,
) -> Result<(), String> {
    for (k, v) in meta.labels.iter().flatten() {
        known
            .qualified_name(k)
            .map_err(|m| format!("Invalid value: {k:?}: {m}"))
            .and_then(|()| label_value(v).map_err(|m| format!("Invalid value: {v:?}: {m}")))
            .map_err(|m| format!("metadata.labels: {m}"))?;
    }
    for k in meta.annotations.iter().flatten().map(|(k, _)| k) {
        let lower = if k.bytes().any(|b| b.is_ascii_uppercase()) {
            std::borrow::Cow::Owned(k.to_ascii_lowercase())
        } else {
            std::borrow::Cow::Borrowed(k.as_str())
        };
        known
            .qualified_name(&lower)
            .map_err(|m| format!("metadata.annotations: Invalid value: {k:?}: {m}"))?;
    }
    let size: usize = meta
        .annotations
        .iter()
        .flatten()
        .map(|(k, v)| k.len() + v.len())
        .sum();
    if size > ANNOTATIONS_SIZE_MAX {
        return Err(format!(
            "metadata.annotations: Too long: may not be more than {ANNOTATIONS_SIZE_MAX} bytes"
        ));
    }
    Ok(())
}

/// `TotalAnnotationSizeLimitB` (apimachinery `pkg/api/validation/objectmeta.go`): the keys and
/// values of an object's annotations together.
pub const ANNOTATIONS_SIZE_MAX: usize = 256 * 1024;

/// How many keys [`KnownKeys`] remembers.
pub const KNOWN_KEYS_MAX: usize = 1024;

/// Label and annotation keys already found to be qualified names, so the keys every object of a
/// run repeats are checked once (a key's verdict depends on the key alone). Bounded: past
/// `KNOWN_KEYS_MAX` keys a new one is checked every time and not remembered, so no input grows
/// it without limit.
#[derive(Default)]
pub struct KnownKeys {
    keys: LookupMap<String, ()>,
}

impl KnownKeys {
    /// `qualified_name(key)`, remembered when it holds.
    pub fn qualified_name(&mut self, key: &str) -> Result<(), String> {
        if self.keys.contains_key(key) {
            return Ok(());
        }
        qualified_name(key)?;
        if self.keys.len() < KNOWN_KEYS_MAX {
            self.keys.insert(key.to_string(), ());
        }
        Ok(())
    }
}

/// One label: a qualified-name key and a label value (`Invalid value: "<which>": why`).
pub fn label(k: &str, v: &str) -> Result<(), String> {
    qualified_name(k).map_err(|m| format!("Invalid value: {k:?}: {m}"))?;
    label_value(v).map_err(|m| format!("Invalid value: {v:?}: {m}"))
}

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`: a qualified name's name part, a label value.
fn is_label_token(s: &str) -> bool {
    let b = s.as_bytes();
    b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

const NAME_PART: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/// `IsQualifiedName`: an optional DNS-subdomain prefix and `/`, then a name part of at most 63
/// characters. The message is the first of apimachinery's for the key.
pub fn qualified_name(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if name.is_empty() {
        return Err("name part must be non-empty".into());
    }
    if name.len() > 63 {
        return Err("name part must be no more than 63 characters".into());
    }
    if !is_label_token(name) {
        return Err(NAME_PART.into());
    }
    match prefix {
        Some("") => Err("prefix part must be non-empty".into()),
        Some(p) if !is_dns_subdomain(p) => Err(format!("prefix part {SUBDOMAIN}")),
        _ => Ok(()),
    }
}

/// `IsValidLabelValue`: empty, or a label token of at most 63 characters.
pub fn label_value(v: &str) -> Result<(), String> {
    if v.len() > 63 {
        return Err("must be no more than 63 characters".into());
    }
    if !v.is_empty() && !is_label_token(v) {
        return Err("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(name: &str, ns: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.into()),
            namespace: ns.map(str::to_string),
            ..Default::default()
        }
    }

    #[test]
    fn names_follow_the_kinds_rule() {
        assert!(validate(
            KindId::Pod,
            &meta("vllm-0.a", Some("default")),
            &mut KnownKeys::default()
        )
        .is_ok());
        let bad_names = [
            "UPPER",
            "héllo",
            "a/b",
            "-a",
            "a-",
            "a..b",
            "a.-b",
            "a-.b",
            ".a",
            &"x".repeat(254),
        ];
        for bad in bad_names {
            let e = validate(KindId::Pod, &meta(bad, None), &mut KnownKeys::default()).unwrap_err();
            assert!(e.starts_with("metadata.name: Invalid value"), "{bad}: {e}");
        }
        assert!(validate(
            KindId::Service,
            &meta("1abc", None),
            &mut KnownKeys::default()
        )
        .is_err());
        assert!(validate(KindId::Pod, &meta("1abc", None), &mut KnownKeys::default()).is_ok());
        let e = validate(
            KindId::Pod,
            &meta("ok", Some("BAD_NS")),
            &mut KnownKeys::default(),
        )
        .unwrap_err();
        assert!(e.starts_with("metadata.namespace"), "{e}");
    }

    #[test]
    fn finalizers_are_qualified_names_and_standard_when_unprefixed() {
        let with = |kind, f: &str| {
            let mut m = meta("x", None);
            m.finalizers = Some(vec![f.to_string()]);
            validate(kind, &m, &mut KnownKeys::default())
        };
        assert!(with(KindId::Pod, "leaderworkerset.sigs.k8s.io/group-restart").is_ok());
        assert!(with(KindId::Pod, "foregroundDeletion").is_ok());
        let e = with(KindId::Pod, "bad finalizer").unwrap_err();
        assert!(
            e.starts_with("metadata.finalizers[0]: Invalid value"),
            "{e}"
        );
        let e = with(KindId::Pod, "mine").unwrap_err();
        assert!(e.contains("neither a standard finalizer name"), "{e}");
        assert!(with(KindId::LeaderWorkerSet, "mine").is_ok());
    }

    #[test]
    fn labels_and_annotation_keys_are_qualified_names() {
        // One memo for every call: good keys are remembered, bad ones never are.
        let mut known = KnownKeys::default();
        let mut with = |labels: &[(&str, &str)], annotations: &[(&str, &str)]| {
            let mut m = meta("ok", None);
            let map = |kv: &[(&str, &str)]| {
                Some(
                    kv.iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                )
            };
            m.labels = map(labels);
            m.annotations = map(annotations);
            validate(KindId::Pod, &m, &mut known)
        };
        let long = "x".repeat(64);
        let good = [("a", ""), ("leaderworkerset.sigs.k8s.io/group-index", "0")];
        assert!(with(&good, &[("Some.Domain/Key_1", "any value at all")]).is_ok());
        for (k, v, says) in [
            ("a b", "x", "name part must consist"),
            ("x/", "x", "name part must be non-empty"),
            ("/x", "x", "prefix part must be non-empty"),
            ("Bad_Prefix/x", "x", "prefix part a lowercase RFC 1123"),
            (long.as_str(), "x", "no more than 63"),
            ("k", "-x", "a valid label must be"),
            ("k", long.as_str(), "no more than 63"),
        ] {
            let e = with(&[(k, v)], &[]).unwrap_err();
            assert!(
                e.starts_with("metadata.labels: Invalid value") && e.contains(says),
                "{k}={v}: {e}"
            );
        }
        let e = with(&[], &[("a b", "v")]).unwrap_err();
        assert!(
            e.starts_with("metadata.annotations: Invalid value: \"a b\""),
            "{e}"
        );
        // The annotations' keys and values together are at most 256 KiB.
        let full = "v".repeat(ANNOTATIONS_SIZE_MAX - 1);
        assert!(with(&[], &[("a", &full)]).is_ok());
        let over = "v".repeat(ANNOTATIONS_SIZE_MAX);
        let e = with(&[], &[("a", &over)]).unwrap_err();
        assert_eq!(
            e,
            "metadata.annotations: Too long: may not be more than 262144 bytes"
        );
        // Remembered keys still pass, and their values are still checked.
        assert!(with(&good, &[]).is_ok());
        let e = with(&[("a", "-x")], &[]).unwrap_err();
        assert!(e.contains("a valid label must be"), "{e}");
    }

    #[test]
    fn known_keys_are_bounded_and_never_remember_a_bad_key() {
        let mut known = KnownKeys::default();
        for i in 0..KNOWN_KEYS_MAX + 10 {
            assert!(known.qualified_name(&format!("example.com/k{i}")).is_ok());
        }
        assert_eq!(known.keys.len(), KNOWN_KEYS_MAX);
        assert!(known.qualified_name("example.com/k0").is_ok());
        assert!(known
            .qualified_name(&format!("example.com/k{KNOWN_KEYS_MAX}"))
            .is_ok());
        for _ in 0..2 {
            assert!(known.qualified_name("a b").is_err());
        }
    }
}
