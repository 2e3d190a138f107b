//! Label selectors (apimachinery `pkg/apis/meta/v1/helpers.go` `LabelSelectorAsSelector`): `matchLabels` and `matchExpressions` are ANDed; a nil
//! selector matches nothing and an empty one matches everything.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
    /// `key>n` or `key<n` (apimachinery `labels.Parse` only; a `LabelSelector` has no such
    /// operator): the label is an integer above (below) `n`.
    Compare(String, std::cmp::Ordering, i64),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    /// `None` is the nil selector, which matches nothing.
    requirements: Option<Vec<Requirement>>,
}

impl Selector {
    pub fn everything() -> Selector {
        Selector {
            requirements: Some(Vec::new()),
        }
    }

    /// Whether this is `everything()`: no requirement, so every object matches.
    pub fn is_everything(&self) -> bool {
        self.requirements.as_ref().is_some_and(Vec::is_empty)
    }

    pub fn nothing() -> Selector {
        Selector { requirements: None }
    }

    /// Equality on every given label, like `client.MatchingLabels`.
    pub fn labels<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Selector {
        let reqs = pairs
            .into_iter()
            .map(|(k, v)| Requirement::Equals(k.to_string(), v.to_string()))
            .collect();
        Selector {
            requirements: Some(reqs),
        }
    }

    /// Only that the label exists, like `client.HasLabels`.
    pub fn has_label(key: &str) -> Selector {
        Selector {
            requirements: Some(vec![Requirement::Exists(key.to_string())]),
        }
    }

    /// `metav1.LabelSelectorAsSelector`. An unknown operator is an error, as in the API server.
    pub fn from_label_selector(sel: Option<&LabelSelector>) -> Result<Selector, String> {
        let Some(sel) = sel else {
            return Ok(Selector::nothing());
        };
        let mut reqs = Vec::new();
        for (k, v) in sel.match_labels.iter().flatten() {
            reqs.push(Requirement::Equals(k.clone(), v.clone()));
        }
        for e in sel.match_expressions.iter().flatten() {
            let values = e.values.clone().unwrap_or_default();
            let r = match e.operator.as_str() {
                "In" => Requirement::In(e.key.clone(), values),
                "NotIn" => Requirement::NotIn(e.key.clone(), values),
                "Exists" => Requirement::Exists(e.key.clone()),
                "DoesNotExist" => Requirement::DoesNotExist(e.key.clone()),
                op => return Err(format!("{op:?} is not a valid label selector operator")),
            };
            reqs.push(r);
        }
        Ok(Selector {
            requirements: Some(reqs),
        })
    }

    /// This selector and `key>n` (`Ordering::Greater`) or `key<n` (`Less`), as
    /// apimachinery's `labels.Parse` reads `>` and `<`.
    pub fn and_compare(mut self, key: &str, ord: std::cmp::Ordering, n: i64) -> Selector {
        if let Some(reqs) = self.requirements.as_mut() {
            reqs.push(Requirement::Compare(key.to_string(), ord, n));
        }
        self
    }

    /// The `key=value` pairs when the selector is nothing but equalities (at least one).
    pub fn equalities(&self) -> Option<Vec<(&str, &str)>> {
        let reqs = self.requirements.as_ref()?;
        if reqs.is_empty() {
            return None;
        }
        reqs.iter()
            .map(|r| match r {
                Requirement::Equals(k, v) => Some((k.as_str(), v.as_str())),
                _ => None,
            })
            .collect()
    }

    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        let Some(reqs) = &self.requirements else {
            return false;
        };
        let get = |k: &str| labels.and_then(|l| l.get(k));
        reqs.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.contains(x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| !vs.contains(x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
            // labels.Requirement.Matches: a value that is not an integer does not match.
            Requirement::Compare(k, ord, n) => get(k)
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x.cmp(n) == *ord),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn nil_matches_nothing_and_empty_matches_everything() {
        // LabelSelectorAsSelector: nil -> Nothing(), empty -> Everything() (apimachinery helpers.go).
        let l = labels(&[("a", "1")]);
        assert!(!Selector::from_label_selector(None)
            .unwrap()
            .matches(Some(&l)));
        let empty = LabelSelector::default();
        assert!(Selector::from_label_selector(Some(&empty))
            .unwrap()
            .matches(Some(&l)));
        assert!(Selector::from_label_selector(Some(&empty))
            .unwrap()
            .matches(None));
    }

    #[test]
    fn expressions_are_anded_and_not_in_matches_missing_keys() {
        let sel = LabelSelector {
            match_labels: Some(labels(&[("app", "web")])),
            match_expressions: Some(vec![
                LabelSelectorRequirement {
                    key: "tier".into(),
                    operator: "NotIn".into(),
                    values: Some(vec!["db".into()]),
                },
                LabelSelectorRequirement {
                    key: "gone".into(),
                    operator: "DoesNotExist".into(),
                    values: None,
                },
            ]),
        };
        let s = Selector::from_label_selector(Some(&sel)).unwrap();
        assert!(s.matches(Some(&labels(&[("app", "web")]))));
        assert!(!s.matches(Some(&labels(&[("app", "web"), ("tier", "db")]))));
        assert!(!s.matches(Some(&labels(&[("app", "web"), ("gone", "x")]))));
        assert!(!s.matches(Some(&labels(&[("app", "api")]))));
    }

    #[test]
    fn unknown_operator_is_rejected() {
        let sel = LabelSelector {
            match_labels: None,
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "a".into(),
                operator: "Like".into(),
                values: None,
            }]),
        };
        assert!(Selector::from_label_selector(Some(&sel)).is_err());
    }
}
