//! Virtual time. The simulation clock is `u64` milliseconds since the run began; timestamps in
//! objects are that clock offset from a fixed epoch, never the wall clock.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

/// 2024-01-01T00:00:00Z: an arbitrary, fixed origin so object timestamps look real.
const EPOCH_MS: i64 = 1_704_067_200_000;

pub fn to_time(now_ms: u64) -> Time {
    let ms = EPOCH_MS + i64::try_from(now_ms).expect("sim time fits i64");
    Time(Timestamp::from_millisecond(ms).expect("sim time is a valid timestamp"))
}

pub fn from_time(t: &Time) -> u64 {
    u64::try_from(t.0.as_millisecond() - EPOCH_MS).unwrap_or(0)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_round_trips() {
        for ms in [0, 1, 1500, 36_000_000] {
            assert_eq!(from_time(&to_time(ms)), ms);
        }
        assert_eq!(fmt_ms(36_000_000), "10h");
        assert_eq!(fmt_ms(1500), "1.500s");
    }
}
