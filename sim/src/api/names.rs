//! Object names and namespaces as the API server validates them (apimachinery
//! `pkg/api/validation/objectmeta.go` `ValidateObjectMeta`, `pkg/util/validation/validation.go`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::KindId;

/// A DNS-1123 subdomain: lowercase letters, digits, `-` and `.`, starting and ending with a
/// letter or digit, at most 253 characters.
pub fn is_dns_subdomain(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !s.is_empty()
        && s.len() <= 253
        && s.chars().all(|c| alnum(c) || c == '-' || c == '.')
        && s.starts_with(alnum)
        && s.ends_with(alnum)
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
pub fn validate(kind: KindId, meta: &ObjectMeta) -> Result<(), String> {
    let name = meta.name.as_deref().unwrap_or("");
    let (ok, rule) = match kind {
        KindId::Service => (is_dns1035_label(name), DNS1035),
        _ => (is_dns_subdomain(name), SUBDOMAIN),
    };
    if !ok {
        return Err(format!("metadata.name: Invalid value: {name:?}: {rule}"));
    }
    match meta.namespace.as_deref() {
        Some(ns) if !is_dns_label(ns) => Err(format!(
            "metadata.namespace: Invalid value: {ns:?}: {LABEL}"
        )),
        _ => Ok(()),
    }
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
        assert!(validate(KindId::Pod, &meta("vllm-0.a", Some("default"))).is_ok());
        for bad in ["UPPER", "héllo", "a/b", "-a", "a-", &"x".repeat(254)] {
            let e = validate(KindId::Pod, &meta(bad, None)).unwrap_err();
            assert!(e.starts_with("metadata.name: Invalid value"), "{bad}: {e}");
        }
        assert!(validate(KindId::Service, &meta("1abc", None)).is_err());
        assert!(validate(KindId::Pod, &meta("1abc", None)).is_ok());
        let e = validate(KindId::Pod, &meta("ok", Some("BAD_NS"))).unwrap_err();
        assert!(e.starts_with("metadata.namespace"), "{e}");
    }
}
