//! Resource quantities (`"500m"`, `"8Gi"`, `"1e3"`) as apimachinery reads, adds and prints them
//! (`pkg/api/resource/quantity.go` and `suffix.go` at v0.35.0): `ParseQuantity`
//! (`parseQuantityString`, then `suffixHandler.interpret`), `Add`, `Cmp` and the canonical
//! `String` (`CanonicalizeBytes`). The API server reads a built-in kind's quantities with it;
//! the v0.10.0 volcano scheduler provider sums pod requests into a `PodGroup`'s `minResources`.
//!
//! The value is kept exactly in thousandths (`SetDefaults_ResourceList` rounds a pod's
//! quantities up to milli scale; apimachinery itself keeps nanos: a sum of sub-milli quantities
//! differs, docs/fidelity.md).

use std::cmp::Ordering;
use std::fmt;

/// `resource.Format`: how a quantity prints, kept from the quantity a sum started with
/// (`Quantity.Add` keeps the receiver's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `1e3`
    DecimalExponent,
    /// `1Ki`
    BinarySi,
    /// `1k`
    DecimalSi,
}

/// A parsed quantity: its value in thousandths and its format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity {
    pub milli: i128,
    pub format: Format,
}

impl Quantity {
    pub const ZERO: Quantity = Quantity {
        milli: 0,
        format: Format::DecimalSi,
    };

    /// `ParseQuantity` after `Quantity.UnmarshalJSON`'s trim of surrounding spaces.
    pub fn parse(s: &str) -> Result<Quantity, &'static str> {
        parse(s)
    }

    /// `Quantity.Cmp`.
    pub fn cmp_value(&self, other: &Quantity) -> Ordering {
        self.milli.cmp(&other.milli)
    }
}

/// `Quantity.Add`: the sum, in the left quantity's format unless it is zero (saturating past
/// `i128`).
impl std::ops::Add for Quantity {
    type Output = Quantity;

    fn add(self, other: Quantity) -> Quantity {
        // A zero receiver takes the format of what is added to it.
        let format = if self.milli == 0 {
            other.format
        } else {
            self.format
        };
        Quantity {
            milli: self.milli.saturating_add(other.milli),
            format,
        }
    }
}

/// `Quantity.String`, which is `CanonicalizeBytes`: binary SI only for a whole number of at
/// least 1024 in magnitude (else decimal SI), decimal forms with the exponent a multiple of 3.
impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.milli == 0 {
            return f.write_str("0");
        }
        let binary = self.format == Format::BinarySi
            && self.milli.unsigned_abs() >= 1_024_000
            && self.milli % 1000 == 0;
        if binary {
            // `AsCanonicalBase1024Bytes`: every factor of 1024 out of the whole value.
            let (mut n, mut exponent) = (self.milli / 1000, 0);
            while n % 1024 == 0 {
                n /= 1024;
                exponent += 1;
            }
            // No suffix past `Ei` (as past `E`): the bare mantissa.
            let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
                .get(exponent)
                .unwrap_or(&"");
            return write!(f, "{n}{suffix}");
        }
        // `AsCanonicalBytes`: every factor of 10 out, then the exponent down to a multiple of 3.
        let (mut n, mut exponent) = (self.milli, -3i32);
        while n % 10 == 0 {
            n /= 10;
            exponent += 1;
        }
        match exponent.rem_euclid(3) {
            1 => (n, exponent) = (n * 10, exponent - 1),
            2 => (n, exponent) = (n * 100, exponent - 2),
            _ => {}
        }
        if self.format == Format::DecimalExponent {
            return match exponent {
                0 => write!(f, "{n}"),
                e => write!(f, "{n}e{e}"),
            };
        }
        // Past `E` `constructBytes` finds no suffix and apimachinery prints the bare mantissa
        // (a quirk: 1e21 prints as "1"), as here.
        let suffix = match exponent {
            -3 => "m",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            18 => "E",
            _ => "",
        };
        write!(f, "{n}{suffix}")
    }
}

/// `ErrFormatWrong`'s text (quantity.go: `"quantities must match the regular expression '" +
/// splitREString + "'"`).
pub const FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// `ErrSuffix`'s text.
pub const SUFFIX_WRONG: &str = "unable to parse quantity's suffix";

/// `ParseQuantity` after `Quantity.UnmarshalJSON`'s trim of surrounding spaces, then
/// `SetDefaults_ResourceList`'s `RoundUp` to milli scale: the value in thousandths, exact (an
/// integer; a value past `i128` saturates), or the error apimachinery returns.
pub fn parse_milli(s: &str) -> Result<i128, &'static str> {
    Quantity::parse(s).map(|q| q.milli)
}

/// Whether a decoded quantity is rounded up to thousandths before it is stored: a built-in
/// kind's `ResourceList` is (`SetDefaults_ResourceList`: `RoundUp(resource.Milli)`, kubernetes
/// `pkg/apis/core/v1/defaults.go`); a bare quantity (`emptyDir.sizeLimit`), or one a Go webhook
/// decodes and re-encodes, is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    Milli,
    None,
}

/// How the API server stores a quantity it decoded (`ParseQuantity`, the defaulting `rounding`,
/// then `MarshalJSON`): as written when `ParseQuantity` kept the string and nothing rounded it,
/// else `Quantity.String`. `None` when `s` does not parse, or when the canonical form would
/// need more than thousandths (`0.0001` not rounded: kept as written, where apimachinery keeps
/// nanos; docs/fidelity.md) or a value past this type's range.
pub fn stored(s: &str, rounding: Rounding) -> Option<String> {
    let s = s.trim();
    let (q, exact) = parse_exact(s).ok()?;
    match (kept_as_written(s), rounding) {
        (Some(_), Rounding::None) => return Some(s.to_string()),
        // `RoundUp` keeps the string of a quantity already at milli scale or coarser.
        (Some(scale), Rounding::Milli) if scale >= -3 => return Some(s.to_string()),
        _ => {}
    }
    match exact {
        Exactness::Exact => Some(q.to_string()),
        Exactness::RoundedToMilli if rounding == Rounding::Milli => Some(q.to_string()),
        Exactness::RoundedToMilli | Exactness::OutOfRange => None,
    }
}

/// `ParseQuantity`'s fast path: "if the number is in canonical form, reuse the string" (the
/// quantity keeps `s` and prints it as written: `+1`, `01Gi`, `1e3`, `100u`). The quantity's
/// decimal scale when the string is kept, else `None`. `s` parses.
fn kept_as_written(s: &str) -> Option<i32> {
    if s == "0" {
        return Some(0);
    }
    let parts = split(s.as_bytes()).ok()?;
    let (base, exponent) = interpret(parts.suffix)?;
    let digits = (parts.num.len() + parts.denom.len()) as i32;
    let (mut scale, precision, shift) = match base {
        10 => (exponent, 18 - digits, 0),
        _ if exponent >= 0 && parts.denom.is_empty() => {
            // Go's `int32(float32(exponent)*3/10)`: exact for the binary suffixes' 10..60.
            let decimal_digits = exponent * 3 / 10;
            (
                0,
                15 - parts.num.len() as i32 - decimal_digits - 1,
                exponent,
            )
        }
        _ => (0, -1, 0),
    };
    if precision < 0 {
        return None;
    }
    scale -= parts.denom.len() as i32;
    if scale < -9 {
        return None;
    }
    let shifted = format!("{}{}", parts.num, parts.denom);
    let value: i64 = shifted.parse().ok()?;
    // `int64Multiply(value, mantissa)`: no reuse past int64.
    value.checked_mul(1i64.checked_shl(shift as u32)?)?;
    let kept = if base == 2 {
        exponent % 10 == 0 && value & 0x07 != 0
    } else {
        scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0')
    };
    kept.then_some(scale)
}

fn parse(s: &str) -> Result<Quantity, &'static str> {
    parse_exact(s).map(|(q, _)| q)
}

/// Whether a parsed quantity is its value exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exactness {
    Exact,
    /// Below a milli somewhere: rounded up to thousandths.
    RoundedToMilli,
    /// Saturated or capped, or near it.
    OutOfRange,
}

/// The quantity, and whether it is exact: not rounded to the milli, not saturated or capped.
fn parse_exact(s: &str) -> Result<(Quantity, Exactness), &'static str> {
    let s = s.trim();
    if s.is_empty() {
        return Err(FORMAT_WRONG);
    }
    if s == "0" {
        return Ok((Quantity::ZERO, Exactness::Exact));
    }
    let parts = split(s.as_bytes())?;
    let (base, exponent) = interpret(parts.suffix).ok_or(SUFFIX_WRONG)?;
    // The suffix tables first: a bare `E` is exa (decimal SI), `E3` an exponent.
    let format = if base == 2 {
        Format::BinarySi
    } else if KNOWN.iter().any(|(known, _, _)| *known == parts.suffix) {
        Format::DecimalSi
    } else {
        Format::DecimalExponent
    };
    // digits * 10^-len(denom) * base^exponent * 1000, rounded away from zero.
    let digits = format!("{}{}", parts.num, parts.denom);
    let mut value: u128 = 0;
    for d in digits.bytes() {
        value = value
            .saturating_mul(10)
            .saturating_add(u128::from(d - b'0'));
    }
    let mut scale10 = 3 - parts.denom.len() as i64;
    if base == 2 {
        for _ in 0..exponent {
            value = value.saturating_mul(2);
        }
    } else {
        scale10 += i64::from(exponent);
    }
    let (magnitude, rounded) = if scale10 >= 0 {
        let m = (0..scale10.min(40)).fold(value, |v, _| v.saturating_mul(10));
        (m, false)
    } else {
        let divisor = (0..(-scale10).min(40)).fold(1u128, |d, _| d.saturating_mul(10));
        (value.div_ceil(divisor), !value.is_multiple_of(divisor))
    };
    let magnitude = i128::try_from(magnitude).unwrap_or(i128::MAX);
    // `maxAllowed`: binary SI is capped at 2^63-1.
    let magnitude = if format == Format::BinarySi {
        magnitude.min(BINARY_MAX_MILLI)
    } else {
        magnitude
    };
    // Far below any saturation or cap.
    let exact = if magnitude >= 1_000_000_000_000_000_000_000_000 {
        Exactness::OutOfRange
    } else if rounded {
        Exactness::RoundedToMilli
    } else {
        Exactness::Exact
    };
    // A binary SI value below one is decimal SI ("This avoids rounding").
    let format = if format == Format::BinarySi && magnitude > 0 && magnitude < 1000 {
        Format::DecimalSi
    } else {
        format
    };
    let milli = if parts.positive {
        magnitude
    } else {
        -magnitude
    };
    Ok((Quantity { milli, format }, exact))
}

/// What `parseQuantityString` splits a quantity into (its `value` is not needed here).
struct Parts<'a> {
    positive: bool,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

/// `parseQuantityString`: sign, leading zeros stripped, numerator digits, `.` and denominator
/// digits, then a suffix of `eEinumkKMGTP` letters, an optional sign and digits.
fn split(b: &[u8]) -> Result<Parts<'_>, &'static str> {
    let text = |from: usize, to: usize| std::str::from_utf8(&b[from..to]).unwrap_or("");
    let end = b.len();
    let mut pos = 0;
    let mut positive = true;
    match b.first() {
        Some(b'-') => {
            positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    let digits = |from: usize| from + b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let num_end = digits(pos);
    let mut parts = Parts {
        positive,
        num: text(pos, num_end),
        denom: "",
        suffix: "",
    };
    if parts.num.is_empty() {
        parts.num = "0";
    }
    pos = num_end;
    if pos < end && b[pos] == b'.' {
        let denom_end = digits(pos + 1);
        parts.denom = text(pos + 1, denom_end);
        pos = denom_end;
    }
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && (b[pos] == b'-' || b[pos] == b'+') {
        pos += 1;
    }
    pos = digits(pos);
    if pos < end {
        // A character no part of a quantity may hold.
        return Err(FORMAT_WRONG);
    }
    parts.suffix = text(suffix_start, end);
    Ok(parts)
}

/// `suffixHandler.interpret`: the base and exponent of a suffix (decimal SI, binary SI, or an
/// `e`/`E` exponent that parses as an `int64`).
fn interpret(suffix: &str) -> Option<(i32, i32)> {
    if let Some((_, base, e)) = KNOWN.iter().find(|(s, _, _)| *s == suffix) {
        return Some((*base, *e));
    }
    let rest = suffix.strip_prefix(['e', 'E']).filter(|r| !r.is_empty())?;
    let exponent: i64 = rest.parse().ok()?;
    // Far past i128 either way: the value saturates (or rounds up to one milli) all the same.
    Some((10, exponent.clamp(-400, 400) as i32))
}

/// `maxAllowed` (2^63-1) in thousandths.
const BINARY_MAX_MILLI: i128 = (i64::MAX as i128) * 1000;

/// The suffix tables, (suffix, base, exponent): decimal SI, then binary SI.
const KNOWN: [(&str, i32, i32); 16] = [
    ("n", 10, -9),
    ("u", 10, -6),
    ("m", 10, -3),
    ("", 10, 0),
    ("k", 10, 3),
    ("M", 10, 6),
    ("G", 10, 9),
    ("T", 10, 12),
    ("P", 10, 15),
    ("E", 10, 18),
    ("Ki", 2, 10),
    ("Mi", 2, 20),
    ("Gi", 2, 30),
    ("Ti", 2, 40),
    ("Pi", 2, 50),
    ("Ei", 2, 60),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_parse_as_apimachinery_parses_them() {
        assert_eq!(parse_milli("500m"), Ok(500));
        assert_eq!(parse_milli("8"), Ok(8000));
        assert_eq!(parse_milli("1Gi"), Ok(1_073_741_824_000));
        assert_eq!(parse_milli("1.5k"), Ok(1_500_000));
        assert_eq!(parse_milli("1e3"), Ok(1_000_000));
        assert_eq!(parse_milli("-2"), Ok(-2000));
        assert_eq!(parse_milli(".5"), Ok(500));
        // Exact: 700m and 0.7 are one value; below a milli rounds up to one.
        assert_eq!(parse_milli("0.7"), parse_milli("700m"));
        assert_eq!(parse_milli("2.3"), parse_milli("2300m"));
        assert_eq!(parse_milli("100u"), Ok(1));
        assert_eq!(parse_milli("1n"), Ok(1));
        // UnmarshalJSON trims spaces.
        assert_eq!(parse_milli(" 1Gi "), parse_milli("1Gi"));
        // parseQuantityString's leniencies: a bare sign is zero, `1.G` is one giga.
        assert_eq!(parse_milli("+"), Ok(0));
        assert_eq!(parse_milli("1.G"), Ok(1_000_000_000_000));
        assert_eq!(parse_milli("1e40"), Ok(i128::MAX));
        assert_eq!(parse_milli(""), Err(FORMAT_WRONG));
        assert_eq!(parse_milli("eight"), Err(FORMAT_WRONG));
        assert_eq!(parse_milli("1 Gi"), Err(FORMAT_WRONG));
        assert_eq!(parse_milli("1Gb"), Err(FORMAT_WRONG));
        assert_eq!(parse_milli("1Mm"), Err(SUFFIX_WRONG));
        assert_eq!(parse_milli("1e"), Err(SUFFIX_WRONG));
    }

    fn printed(s: &str) -> String {
        Quantity::parse(s).unwrap().to_string()
    }

    #[test]
    fn quantities_print_canonically_as_apimachinery_does() {
        // quantity_test.go TestQuantityCanonicalize / TestQuantityString, milli-exact cases.
        let cases = [
            ("0", "0"),
            ("1", "1"),
            ("1000m", "1"),
            ("1500m", "1500m"),
            ("1.5", "1500m"),
            ("4000", "4k"),
            ("1500", "1500"),
            ("1e3", "1e3"),
            ("1000e-3", "1"),
            ("1E6", "1e6"),
            ("1024", "1024"),
            ("1Ki", "1Ki"),
            ("1536Mi", "1536Mi"),
            ("1024Mi", "1Gi"),
            ("512Mi", "512Mi"),
            ("1023", "1023"),
            ("0.5Gi", "512Mi"),
            ("1.5Ki", "1536"),
            ("100m", "100m"),
            ("-1500m", "-1500m"),
            ("1G", "1G"),
        ];
        for (input, want) in cases {
            assert_eq!(printed(input), want, "{input}");
        }
    }

    #[test]
    fn the_stored_form_is_canonical_unless_parsing_kept_the_string() {
        let stored = |s, r| super::stored(s, r);
        let milli = |s| stored(s, Rounding::Milli);
        assert_eq!(milli("0.5").as_deref(), Some("500m"));
        assert_eq!(milli("1.5Ki").as_deref(), Some("1536"));
        assert_eq!(milli("2048Mi").as_deref(), Some("2Gi"));
        assert_eq!(milli("1000m").as_deref(), Some("1"));
        assert_eq!(milli("1000").as_deref(), Some("1k"));
        assert_eq!(milli("0.500").as_deref(), Some("500m"));
        assert_eq!(milli("8").as_deref(), Some("8"));
        assert_eq!(milli(" 8 ").as_deref(), Some("8"));
        // ParseQuantity's fast path keeps a string it finds canonical (quantity.go "reuse the
        // string"): a sign, leading zeros of a binary quantity, an exponent, a sub-milli scale.
        assert_eq!(milli("+1").as_deref(), Some("+1"));
        assert_eq!(milli("01Gi").as_deref(), Some("01Gi"));
        assert_eq!(milli("+2Gi").as_deref(), Some("+2Gi"));
        assert_eq!(milli("1e3").as_deref(), Some("1e3"));
        assert_eq!(milli("1E3").as_deref(), Some("1E3"));
        assert_eq!(milli("1e-3").as_deref(), Some("1e-3"));
        // `RoundUp(Milli)` drops a kept string finer than a milli, and rounds up.
        assert_eq!(milli("100u").as_deref(), Some("1m"));
        assert_eq!(milli("1500u").as_deref(), Some("2m"));
        assert_eq!(milli("0.0001").as_deref(), Some("1m"));
        assert_eq!(stored("100u", Rounding::None).as_deref(), Some("100u"));
        assert_eq!(stored("+1", Rounding::None).as_deref(), Some("+1"));
        // Not kept, and finer than a milli with nothing rounding it: left as written.
        assert_eq!(stored("0.0001", Rounding::None), None);
        assert_eq!(milli("eight"), None);
        assert_eq!(milli("1e999"), None);
    }

    #[test]
    fn a_sum_keeps_the_first_quantitys_format() {
        let q = |s| Quantity::parse(s).unwrap();
        assert_eq!((q("1Gi") + q("1Gi")).to_string(), "2Gi");
        assert_eq!((q("1Gi") + q("1G")).to_string(), "2073741824");
        assert_eq!((q("1G") + q("1Gi")).to_string(), "2073741824");
        assert_eq!((q("500m") + q("500m")).to_string(), "1");
        assert_eq!((q("2") + q("2") + q("2")).to_string(), "6");
        assert_eq!((q("1e3") + q("1e3")).to_string(), "2e3");
        // A zero takes the format of what is added to it (quantity.go `Add`).
        assert_eq!((q("0") + q("1Gi") + q("1Gi")).to_string(), "2Gi");
        // A bare E is exa, not an exponent; binary SI below one is decimal SI.
        assert_eq!((q("1E") + q("1E")).to_string(), "2E");
        assert_eq!((q("0.0005Ki") + q("1023488m")).to_string(), "1024");
        // Binary SI is capped at 2^63-1.
        assert_eq!((q("8Ei") + q("8Ei")).to_string(), "18446744073709551614");
    }
}
