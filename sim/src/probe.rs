//! Timing probes for benches: a hook called when the run enters and leaves a section whose cost
//! is an upstream algorithm rather than the simulator's own machinery, so a bench can report the
//! simulator's cost per event apart from them. The simulator reads no clock; without a hook
//! installed a section costs one thread-local check.

use std::cell::RefCell;

/// A section of a run a bench may want to time apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// One poll of a ported LWS reconciler (its cache reads included; its writes are performed
    /// by the runtime outside the poll).
    Reconcile,
    /// One sync of one StatefulSet by the StatefulSet controller (kubernetes' per-set
    /// algorithm: it walks every pod of the set, and writes what it decides).
    StatefulSetSync,
}

/// Called with `(section, true)` on entry and `(section, false)` on exit.
pub type Probe = Box<dyn FnMut(Section, bool)>;

thread_local! {
    static PROBE: RefCell<Option<Probe>> = const { RefCell::new(None) };
}

/// Install (or with `None`, remove) this thread's probe.
pub fn set_probe(probe: Option<Probe>) {
    PROBE.with(|p| *p.borrow_mut() = probe);
}

/// Run `f` as `section`, telling the probe (if any) before and after.
pub fn timed<R>(section: Section, f: impl FnOnce() -> R) -> R {
    PROBE.with(|p| p.borrow_mut().as_mut().map(|h| h(section, true)));
    let r = f();
    PROBE.with(|p| p.borrow_mut().as_mut().map(|h| h(section, false)));
    r
}
