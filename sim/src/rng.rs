//! The run's randomness: ChaCha8 seeded from the run seed. Every random choice in a run draws
//! from a `SimRng`; independent streams are labelled sub-seeds of the same run seed, so adding a
//! draw in one actor does not shift the draws of another.

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

#[derive(Clone)]
pub struct SimRng {
    inner: ChaCha8Rng,
}

impl SimRng {
    pub fn new(seed: u64) -> SimRng {
        SimRng {
            inner: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// A stream for one purpose, derived from the run seed and a fixed label.
    pub fn labelled(seed: u64, label: &str) -> SimRng {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
        for b in label.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        SimRng::new(h)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// Uniform in `[lo, hi]` (both inclusive); `lo` when the range is empty.
    pub fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A random RFC 4122-shaped UID (`metadata.uid`): `a >> 32`, `(a >> 16) & 0xffff`,
    /// `4` and `a & 0xfff`, `(b >> 48) & 0x3fff | 0x8000`, `b & 0xffff_ffff_ffff` in hex,
    /// written digit by digit (one per create; `format!` was 0.5% of a fuzz campaign).
    pub fn uid(&mut self) -> String {
        let a = self.next_u64();
        let b = self.next_u64();
        let mut out = String::with_capacity(36);
        push_hex(&mut out, a >> 32, 8);
        out.push('-');
        push_hex(&mut out, (a >> 16) & 0xffff, 4);
        out.push_str("-4");
        push_hex(&mut out, a & 0xfff, 3);
        out.push('-');
        push_hex(&mut out, (b >> 48) & 0x3fff | 0x8000, 4);
        out.push('-');
        push_hex(&mut out, b & 0xffff_ffff_ffff, 12);
        out
    }

    /// Five lowercase alphanumerics, as `generateName` appends (apiserver `names/generate.go`).
    pub fn name_suffix(&mut self) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..5)
            .map(|_| ALPHABET[(self.next_u64() % ALPHABET.len() as u64) as usize] as char)
            .collect()
    }
}

/// The low `digits` hex digits of `v`, lowercase, most significant first.
fn push_hex(out: &mut String, v: u64, digits: u32) {
    for i in (0..digits).rev() {
        let d = ((v >> (4 * i)) & 0xf) as u8;
        out.push(char::from(if d < 10 { b'0' + d } else { b'a' + d - 10 }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_labels_differ() {
        let mut a = SimRng::new(7);
        let mut b = SimRng::new(7);
        assert_eq!(a.next_u64(), b.next_u64());
        let mut x = SimRng::labelled(7, "kubelet");
        let mut y = SimRng::labelled(7, "scheduler");
        assert_ne!(x.next_u64(), y.next_u64());
        for _ in 0..100 {
            let v = a.range_inclusive(10, 20);
            assert!((10..=20).contains(&v));
        }
    }

    #[test]
    fn uids_are_the_rfc_4122_shape_of_two_draws() {
        let mut r = SimRng::new(3);
        let mut twin = SimRng::new(3);
        for _ in 0..1000 {
            let (a, b) = (twin.next_u64(), twin.next_u64());
            let want = format!(
                "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
                a >> 32,
                (a >> 16) & 0xffff,
                a & 0xfff,
                (b >> 48) & 0x3fff | 0x8000,
                b & 0xffff_ffff_ffff
            );
            assert_eq!(r.uid(), want);
        }
    }
}
