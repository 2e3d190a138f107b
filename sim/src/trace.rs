//! The run's trace: every API write and every external event, one line each, and a running
//! FNV-1a 64 hash of those lines that is the run's fingerprint.

use std::fmt::Write as _;
use std::sync::Arc;

use crate::lookup::LookupMap;

/// One trace line as written to a `--trace` file (JSON lines): a boundary type.
#[derive(serde::Serialize)]
pub struct TraceLine<'a> {
    pub at_ms: u64,
    pub actor: &'a str,
    pub verb: &'a str,
    pub kind: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub rv: u64,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub detail: &'a str,
}

impl TraceEntry {
    pub fn json_line(&self) -> TraceLine<'_> {
        TraceLine {
            at_ms: self.at_ms,
            actor: &self.actor,
            verb: &self.verb,
            kind: &self.kind,
            namespace: &self.namespace,
            name: &self.name,
            rv: self.rv,
            detail: &self.detail,
        }
    }
}

/// A shared string of a trace entry: compares with and reads as a `str`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Word(Arc<str>);

/// Hashes as its `str` (`Arc<str>`'s `Hash` is the `str`'s), so `Trace::word` finds it by one.
impl std::borrow::Borrow<str> for Word {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Word {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Word {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Word {
    fn from(s: &str) -> Word {
        Word(Arc::from(s))
    }
}

impl PartialEq<str> for Word {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for Word {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

/// One traced happening. `verb` is an API verb (`create`, `update`, `delete`, ...) or the name
/// of an external event (`fault:drainNode`, `step:apply`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEntry {
    pub at_ms: u64,
    /// Actor, verb, kind and namespace come from small sets: `Trace::word` shares one copy of
    /// each among all entries.
    pub actor: Word,
    pub verb: Word,
    pub kind: Word,
    pub namespace: Word,
    pub name: String,
    /// The resourceVersion the write produced; 0 for external events and failed calls.
    pub rv: u64,
    pub detail: String,
}

impl TraceEntry {
    pub fn line(&self) -> String {
        let mut s = String::with_capacity(96);
        let _ = write!(
            s,
            "{} {} {} {} {}/{} rv={}",
            self.at_ms, self.actor, self.verb, self.kind, self.namespace, self.name, self.rv
        );
        if !self.detail.is_empty() {
            let _ = write!(s, " {}", self.detail);
        }
        s
    }
}

#[derive(Debug)]
pub struct Trace {
    pub entries: Vec<TraceEntry>,
    hash: u64,
    /// Interned actors, verbs, kinds and namespaces (at most `WORDS_MAX`), each its own value.
    words: LookupMap<Word, Word>,
}

/// Past this many distinct words, `Trace::word` stops sharing and allocates each one.
const WORDS_MAX: usize = 256;

const FNV64_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV64_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a 64, fed bytes in order.
struct Fnv(u64);

impl Fnv {
    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(FNV64_PRIME);
        }
    }

    /// The bytes `{n}` formats to.
    fn decimal(&mut self, n: u64) {
        self.bytes(itoa::Buffer::new().format(n).as_bytes());
    }
}

/// FNV-1a 64 of `text`: a fingerprint that is the same on every build and machine.
pub fn fnv64(text: &str) -> u64 {
    let mut h = Fnv(FNV64_OFFSET);
    h.bytes(text.as_bytes());
    h.0
}

impl Default for Trace {
    fn default() -> Self {
        Trace {
            entries: Vec::new(),
            hash: FNV64_OFFSET,
            words: LookupMap::default(),
        }
    }
}

impl Trace {
    /// Append `entry`; the hash takes the bytes of `entry.line()` and a newline, fed field by
    /// field without building the line or going through `fmt`.
    pub fn push(&mut self, entry: TraceEntry) {
        let mut h = Fnv(self.hash);
        let e = &entry;
        h.decimal(e.at_ms);
        for (sep, text) in [
            (" ", &*e.actor),
            (" ", &*e.verb),
            (" ", &*e.kind),
            (" ", &*e.namespace),
            ("/", e.name.as_str()),
        ] {
            h.bytes(sep.as_bytes());
            h.bytes(text.as_bytes());
        }
        h.bytes(b" rv=");
        h.decimal(e.rv);
        if !e.detail.is_empty() {
            h.bytes(b" ");
            h.bytes(e.detail.as_bytes());
        }
        h.bytes(b"\n");
        self.hash = h.0;
        self.entries.push(entry);
    }

    /// The shared copy of `s`, found by hash (four per traced write).
    pub fn word(&mut self, s: &str) -> Word {
        if let Some(w) = self.words.get(s) {
            return w.clone();
        }
        let w = Word::from(s);
        if self.words.len() < WORDS_MAX {
            self.words.insert(w.clone(), w.clone());
        }
        w
    }

    /// The fingerprint of everything traced so far.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Successful writes by one verb on one kind, for tests that assert order and timing.
    pub fn filter<'a>(
        &'a self,
        verb: &'a str,
        kind: &'a str,
    ) -> impl Iterator<Item = &'a TraceEntry> + 'a {
        self.entries
            .iter()
            .filter(move |e| e.verb == verb && e.kind == kind && e.rv != 0)
    }

    /// Index of the first line where two traces differ, for determinism reports.
    pub fn first_divergence(&self, other: &Trace) -> Option<usize> {
        let n = self.entries.len().min(other.entries.len());
        (0..n)
            .find(|&i| self.entries[i] != other.entries[i])
            .or((self.entries.len() != other.entries.len()).then_some(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_fnv_over_each_line_and_a_newline() {
        let mut t = Trace::default();
        let mut expected = FNV64_OFFSET;
        let at = [0, 1_000, 1_234_567_890, u64::MAX];
        for (i, detail) in ["", "gone", "error=Conflict", ""].into_iter().enumerate() {
            let e = TraceEntry {
                at_ms: at[i],
                actor: "a".into(),
                verb: "update".into(),
                kind: "Pod".into(),
                namespace: "default".into(),
                name: format!("p-{i}"),
                rv: if i == 3 { u64::MAX } else { 7 * i as u64 },
                detail: detail.into(),
            };
            for b in e.line().bytes().chain(std::iter::once(b'\n')) {
                expected = (expected ^ u64::from(b)).wrapping_mul(FNV64_PRIME);
            }
            t.push(e);
            assert_eq!(t.hash(), expected);
        }
    }
}
