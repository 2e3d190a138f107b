//! The invariants by name: the closed list a scenario can enable (`invariants:`) and expect
//! broken (`expect: {violates: [...]}`), plus the run-level verdicts `timeout`, `check` and `liveness`.

use std::fmt;
use std::str::FromStr;

/// One invariant, or one of the run-level verdicts reported like one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InvariantId {
    Availability,
    GroupConsistency,
    UpdateOrder,
    SurgeBound,
    Convergence,
    Quiescence,
    GroupRestart,
    StatusConditions,
    PartitionBudget,
    RequiredRestart,
    WriteStorm,
    /// A `waitFor` step that timed out (always on).
    Timeout,
    /// A `check` step that did not match, or a kubectl-style step that failed (always on).
    Check,
    /// The run hit a run limit (README, "Limits"): a livelock, the simulated horizon or the
    /// event cap. Always on: a run that cannot make progress is a verdict, not bad input.
    Liveness,
}

impl InvariantId {
    /// Every id, the selectable invariants first, in the order reports have always listed them.
    pub const ALL: [InvariantId; 14] = [
        InvariantId::Availability,
        InvariantId::GroupConsistency,
        InvariantId::UpdateOrder,
        InvariantId::SurgeBound,
        InvariantId::Convergence,
        InvariantId::Quiescence,
        InvariantId::GroupRestart,
        InvariantId::StatusConditions,
        InvariantId::PartitionBudget,
        InvariantId::RequiredRestart,
        InvariantId::WriteStorm,
        InvariantId::Timeout,
        InvariantId::Check,
        InvariantId::Liveness,
    ];

    /// The invariants a scenario can enable by name (`timeout` and `check` are always on).
    pub const SELECTABLE: [InvariantId; 11] = {
        let mut out = [InvariantId::Timeout; 11];
        let mut i = 0;
        while i < out.len() {
            out[i] = InvariantId::ALL[i];
            i += 1;
        }
        out
    };

    /// The name scenario files and reports use.
    pub const fn as_str(self) -> &'static str {
        match self {
            InvariantId::Availability => "availability",
            InvariantId::GroupConsistency => "groupConsistency",
            InvariantId::UpdateOrder => "updateOrder",
            InvariantId::SurgeBound => "surgeBound",
            InvariantId::Convergence => "convergence",
            InvariantId::Quiescence => "quiescence",
            InvariantId::GroupRestart => "groupRestart",
            InvariantId::StatusConditions => "statusConditions",
            InvariantId::PartitionBudget => "partitionBudget",
            InvariantId::RequiredRestart => "requiredRestart",
            InvariantId::WriteStorm => "writeStorm",
            InvariantId::Timeout => "timeout",
            InvariantId::Check => "check",
            InvariantId::Liveness => "liveness",
        }
    }

    /// The id of a name, exactly as `as_str` spells it.
    pub fn parse(name: &str) -> Option<InvariantId> {
        InvariantId::ALL.into_iter().find(|i| i.as_str() == name)
    }

    /// `timeout`, `check` and `liveness`: verdicts of the run, recorded whatever is enabled.
    pub const fn always_on(self) -> bool {
        matches!(
            self,
            InvariantId::Timeout | InvariantId::Check | InvariantId::Liveness
        )
    }
}

impl fmt::Display for InvariantId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for InvariantId {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        InvariantId::parse(s).ok_or_else(|| format!("unknown invariant {s:?}"))
    }
}

impl serde::Serialize for InvariantId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for InvariantId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        InvariantId::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown invariant {s:?}")))
    }
}

impl PartialEq<str> for InvariantId {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for InvariantId {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<InvariantId> for &str {
    fn eq(&self, other: &InvariantId) -> bool {
        *self == other.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::InvariantId;

    #[test]
    fn names_round_trip_and_keep_their_spelling() {
        for id in InvariantId::ALL {
            assert_eq!(InvariantId::parse(id.as_str()), Some(id));
            assert_eq!(id.to_string(), id.as_str());
            let json = serde_json::to_string(&id).unwrap();
            assert_eq!(json, format!("\"{id}\""));
            assert_eq!(serde_json::from_str::<InvariantId>(&json).unwrap(), id);
        }
        assert_eq!(InvariantId::parse("Availability"), None);
        assert!(InvariantId::SELECTABLE.iter().all(|i| !i.always_on()));
        assert_eq!(InvariantId::ALL.iter().filter(|i| i.always_on()).count(), 3);
    }
}
