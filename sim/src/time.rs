//! Virtual time. The simulation clock is `u64` milliseconds since the run began; timestamps in
//! objects are that clock offset from a fixed epoch, never the wall clock.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

/// 2024-01-01T00:00:00Z: an arbitrary, fixed origin so object timestamps look real.
const EPOCH_MS: i64 = 1_704_067_200_000;

/// The simulated horizon: one year (365 days) after the run starts. The world never runs past
/// it (`world::Stop::Horizon`), timestamps saturate at it, and the scenario loader can reject
/// waits and timeouts beyond it. A year of 10 h resyncs is still cheap to simulate, and it is
/// far below year 9999, where timestamps end.
pub const HORIZON_MS: u64 = 365 * 86_400_000;

/// An object timestamp for the simulated instant `now_ms`; instants past `HORIZON_MS` read as
/// the horizon.
pub fn to_time(now_ms: u64) -> Time {
    let ms = EPOCH_MS + now_ms.min(HORIZON_MS) as i64;
    Time(Timestamp::from_millisecond(ms).expect("the horizon is a valid timestamp"))
}

/// `now_ms + delay_ms`, saturating: a timer due past the end of `u64` never fires, and simulated
/// time never wraps around.
pub fn after(now_ms: u64, delay_ms: u64) -> u64 {
    now_ms.saturating_add(delay_ms)
}

/// A Kubernetes `...Seconds` field as milliseconds, saturating; negative counts as zero.
pub fn secs_to_ms(seconds: i64) -> u64 {
    u64::try_from(seconds).unwrap_or(0).saturating_mul(1000)
}

pub fn from_time(t: &Time) -> u64 {
    u64::try_from(t.0.as_millisecond() - EPOCH_MS).unwrap_or(0)
}

/// An age as kubectl prints it (apimachinery `pkg/util/duration/duration.go` `HumanDuration`).
pub fn human_duration(ms: u64) -> String {
    let s = ms / 1000;
    let (m, h) = (s / 60, s / 3600);
    let (d, y) = (h / 24, h / (24 * 365));
    let unless_zero = |n: u64, unit: &str| {
        if n == 0 {
            String::new()
        } else {
            format!("{n}{unit}")
        }
    };
    if s < 120 {
        format!("{s}s")
    } else if m < 10 {
        format!("{m}m{}", unless_zero(s % 60, "s"))
    } else if h < 3 {
        format!("{m}m")
    } else if h < 8 {
        format!("{h}h{}", unless_zero(m % 60, "m"))
    } else if h < 48 {
        format!("{h}h")
    } else if h < 24 * 8 {
        format!("{d}d{}", unless_zero(h % 24, "h"))
    } else if h < 24 * 365 * 2 {
        format!("{d}d")
    } else if h < 24 * 365 * 8 {
        format!("{y}y{}", unless_zero(d % 365, "d"))
    } else {
        format!("{y}y")
    }
}

/// `1500ms`, `30s`, `5m`, `10h` style, for messages.
pub fn fmt_ms(ms: u64) -> String {
    if ms.is_multiple_of(3_600_000) && ms > 0 {
        format!("{}h", ms / 3_600_000)
    } else if ms.is_multiple_of(60_000) && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{}.{:03}s", ms / 1000, ms % 1000)
    }
}

/// A duration in milliseconds, written `1500ms`, `30s`, `5m` or `10h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub u64);

pub fn parse_duration(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().map_err(|_| {
        format!("invalid duration {s:?}: expected a number followed by ms, s, m or h")
    })?;
    let scale = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        // `1.5s`, `1e3s`: the number stops at the `.` or the `e`.
        _ if unit.starts_with(['.', 'e', 'E']) => {
            return Err(format!(
                "invalid duration {s:?}: a duration is a whole number followed by ms, s, m or h (1500ms, not 1.5s)"
            ))
        }
        _ => {
            return Err(format!(
                "invalid duration {s:?}: the unit must be ms, s, m or h"
            ))
        }
    };
    n.checked_mul(scale)
        .ok_or_else(|| format!("duration {s:?} is too large"))
}

/// A duration a scenario may write: at most the simulated horizon (README, "Limits").
pub fn within_horizon(s: &str, ms: u64) -> Result<u64, String> {
    if ms > HORIZON_MS {
        return Err(format!(
            "duration {s:?} is past the simulated horizon ({}, {HORIZON_MS}ms)",
            fmt_ms(HORIZON_MS)
        ));
    }
    Ok(ms)
}

impl<'de> serde::Deserialize<'de> for Duration {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <String as serde::Deserialize>::deserialize(d)?;
        let ms = parse_duration(&s).and_then(|ms| within_horizon(&s, ms));
        ms.map(Duration).map_err(serde::de::Error::custom)
    }
}

/// A duration as the file writes it: the largest whole unit, so `parse_duration` reads it back.
pub fn duration_text(ms: u64) -> String {
    match ms {
        0 => "0s".into(),
        ms if ms.is_multiple_of(3_600_000) => format!("{}h", ms / 3_600_000),
        ms if ms.is_multiple_of(60_000) => format!("{}m", ms / 60_000),
        ms if ms.is_multiple_of(1000) => format!("{}s", ms / 1000),
        ms => format!("{ms}ms"),
    }
}

impl serde::Serialize for Duration {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&duration_text(self.0))
    }
}

impl std::fmt::Display for Duration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&fmt_ms(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_print_like_kubectl() {
        assert_eq!(human_duration(59_000), "59s");
        assert_eq!(human_duration(150_000), "2m30s");
        assert_eq!(human_duration(180_000), "3m");
        assert_eq!(human_duration(3_600_000), "60m");
        assert_eq!(human_duration(5 * 3_600_000 + 60_000), "5h1m");
        assert_eq!(human_duration(50 * 3_600_000), "2d2h");
        assert_eq!(human_duration(10 * 86_400_000), "10d");
        assert_eq!(human_duration(800 * 86_400_000), "2y70d");
        assert_eq!(human_duration(9 * 365 * 86_400_000), "9y");
    }

    #[test]
    fn time_round_trips() {
        for ms in [0, 1, 1500, 36_000_000] {
            assert_eq!(from_time(&to_time(ms)), ms);
        }
        assert_eq!(fmt_ms(36_000_000), "10h");
        assert_eq!(fmt_ms(1500), "1.500s");
    }

    #[test]
    fn time_saturates_instead_of_wrapping_or_panicking() {
        for ms in [HORIZON_MS, HORIZON_MS + 1, 99_999_999 * 3_600_000, u64::MAX] {
            assert_eq!(from_time(&to_time(ms)), HORIZON_MS);
        }
        assert_eq!(after(u64::MAX - 1, 10), u64::MAX);
        assert_eq!(secs_to_ms(1_000_000_000_000), 1_000_000_000_000_000);
        assert_eq!(secs_to_ms(i64::MAX), u64::MAX);
        assert_eq!(secs_to_ms(-5), 0);
    }

    #[test]
    fn a_fractional_duration_is_told_to_be_whole() {
        assert_eq!(parse_duration("1500ms"), Ok(1500));
        for s in ["1.5s", "1e30s"] {
            let e = parse_duration(s).unwrap_err();
            assert!(e.contains("a whole number followed by"), "{e}");
        }
        assert!(parse_duration("5d")
            .unwrap_err()
            .contains("the unit must be"));
    }
}
