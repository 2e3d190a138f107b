//! A run as a picture: one self-contained SVG (no scripts, no external fonts) with simulated
//! time across and one row per group, so a rollout can be read at a glance — which group was on
//! which revision, when each was down, where the controller was killed, when the partition
//! moved, and where the availability floor was crossed.
//!
//! The runner records change points into a [`Timeline`] (only when a picture is asked for);
//! [`Timeline::svg`] draws it. Every drawn element that a reader (or a test) may want to
//! check carries its data as attributes: `data-group`, `data-t0`/`data-t1` (ms),
//! `data-invariant`, `data-fault`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::time::fmt_ms;
use crate::trace::TraceEntry;

/// Which template a group's pods run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rev {
    /// No pods.
    Empty,
    Old,
    New,
    /// Leader and workers on different revisions.
    Mixed,
}

impl Rev {
    pub fn as_str(self) -> &'static str {
        match self {
            Rev::Empty => "empty",
            Rev::Old => "old",
            Rev::New => "new",
            Rev::Mixed => "mixed",
        }
    }

    fn colour(self) -> &'static str {
        match self {
            Rev::Empty => "#f4f4f4",
            Rev::Old => "#8fa8c8",
            Rev::New => "#6cbf84",
            Rev::Mixed => "#e0b050",
        }
    }
}

/// A group as drawn at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupState {
    pub rev: Rev,
    pub ready: bool,
    /// Some pod of the group is terminating (the group is being rebuilt).
    pub terminating: bool,
}

/// What happened during a run, as change points in simulated time (ms).
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    pub end_ms: u64,
    /// The availability floor (replicas - maxUnavailable), as last known.
    pub floor: i32,
    pub groups: BTreeMap<i32, Vec<(u64, GroupState)>>,
    pub available: Vec<(u64, i32)>,
    pub partition: Vec<(u64, i32)>,
    pub replicas: Vec<(u64, i32)>,
    /// Injected faults and external steps: (at, label).
    pub faults: Vec<(u64, String)>,
    /// Controller down: from a kill to the next lease acquisition (open-ended if never).
    pub controller_down: Vec<(u64, Option<u64>)>,
    /// (at, invariant, message).
    pub violations: Vec<(u64, String, String)>,
}

fn push_change<T: PartialEq>(v: &mut Vec<(u64, T)>, at: u64, x: T) {
    if v.last().is_some_and(|(_, last)| *last == x) {
        return;
    }
    if v.last().is_some_and(|(t, _)| *t == at) {
        v.pop();
        if v.last().is_some_and(|(_, last)| *last == x) {
            return;
        }
    }
    v.push((at, x));
}

impl Timeline {
    pub fn group(&mut self, at: u64, group: i32, state: GroupState) {
        push_change(self.groups.entry(group).or_default(), at, state);
    }

    pub fn available(&mut self, at: u64, n: i32) {
        push_change(&mut self.available, at, n);
    }

    pub fn partition(&mut self, at: u64, n: i32) {
        push_change(&mut self.partition, at, n);
    }

    pub fn replicas(&mut self, at: u64, n: i32) {
        push_change(&mut self.replicas, at, n);
    }

    pub fn fault(&mut self, at: u64, label: impl Into<String>) {
        self.faults.push((at, label.into()));
    }

    pub fn controller_killed(&mut self, at: u64) {
        if self
            .controller_down
            .last()
            .is_some_and(|(_, e)| e.is_none())
        {
            return;
        }
        self.controller_down.push((at, None));
    }

    pub fn controller_leading(&mut self, at: u64) {
        if let Some((_, end @ None)) = self.controller_down.last_mut() {
            *end = Some(at);
        }
    }

    pub fn violation(&mut self, at: u64, invariant: &str, message: &str) {
        self.violations
            .push((at, invariant.to_string(), message.to_string()));
    }

    /// Faults, steps and the controller's down time, read from the run's trace: every
    /// `fault` and `step` entry is a marker; a killed controller is down until the next
    /// leader-election write of its Lease.
    pub fn annotate(&mut self, entries: &[TraceEntry]) {
        for e in entries {
            match &*e.actor {
                "fault" | "step" => {
                    let label = match (e.name.is_empty(), e.detail.is_empty()) {
                        (true, true) => e.verb.to_string(),
                        (true, false) => format!("{} {}", e.verb, e.detail),
                        (false, _) => format!("{} {}", e.verb, e.name),
                    };
                    if e.verb == "killController" {
                        self.controller_killed(e.at_ms);
                    }
                    self.fault(e.at_ms, label);
                }
                "leader-election" if e.rv != 0 => self.controller_leading(e.at_ms),
                _ => {}
            }
        }
    }

    /// Intervals (t0, t1) where fewer groups were available than the floor, from the first
    /// time the floor was reached on (a group set being brought up is not owed availability,
    /// as the availability check in `invariants/groups.rs` arms only once the LWS has been up).
    pub fn below_floor(&self) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = Vec::new();
        let mut armed = false;
        for (i, &(t, n)) in self.available.iter().enumerate() {
            armed |= n >= self.floor;
            let t1 = self
                .available
                .get(i + 1)
                .map_or(self.end_ms, |&(next, _)| next);
            if armed && n < self.floor && t1 > t {
                match out.last_mut() {
                    Some((_, end)) if *end == t => *end = t1,
                    _ => out.push((t, t1)),
                }
            }
        }
        out
    }

    pub fn svg(&self, title: &str) -> String {
        let axis = Axis::new(self);
        let rows = self.groups.len().max(1) as f64;
        let height = TOP + STRIP + GAP + rows * ROW + GAP + LINES + BOTTOM;
        let mut s = String::with_capacity(16 * 1024);
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">"#
        );
        s.push_str(DEFS);
        let _ = write!(
            s,
            r#"<text x="{LEFT}" y="16" font-size="13" font-weight="bold">{}</text>"#,
            esc(title)
        );
        self.draw_strip(&mut s, &axis);
        self.draw_groups(&mut s, &axis);
        self.draw_lines(&mut s, &axis, TOP + STRIP + GAP + rows * ROW + GAP);
        self.draw_controller(&mut s, &axis, height);
        self.draw_faults(&mut s, &axis, height);
        self.draw_violations(&mut s, &axis, height);
        axis.draw(&mut s, height - BOTTOM);
        s.push_str(LEGEND_OPEN);
        let _ = write!(s, r#"<g transform="translate({LEFT},{})">"#, height - 14.0);
        legend(&mut s);
        s.push_str("</g></g></svg>\n");
        s
    }

    fn draw_strip(&self, s: &mut String, axis: &Axis) {
        let y0 = TOP;
        let max = self
            .available
            .iter()
            .map(|&(_, n)| n)
            .chain(self.groups.len().try_into().ok())
            .max()
            .unwrap_or(1)
            .max(self.floor)
            .max(1);
        let y = |n: i32| y0 + STRIP - STRIP * f64::from(n) / f64::from(max);
        let _ = write!(
            s,
            r#"<g class="strip"><text x="4" y="{}">available</text>"#,
            y0 + STRIP / 2.0
        );
        for (t0, t1) in self.below_floor() {
            let (x0, x1) = (axis.x(t0), axis.x(t1));
            let _ = write!(
                s,
                r##"<rect class="below-floor" data-t0="{t0}" data-t1="{t1}" x="{x0:.1}" y="{y0}" width="{:.1}" height="{STRIP}" fill="#e53935" fill-opacity="0.25"/>"##,
                (x1 - x0).max(1.0)
            );
        }
        let _ = write!(
            s,
            r##"<line class="floor" data-floor="{}" x1="{LEFT}" x2="{}" y1="{2:.1}" y2="{2:.1}" stroke="#e53935" stroke-dasharray="4 3"/>"##,
            self.floor,
            WIDTH - RIGHT,
            y(self.floor)
        );
        step_line(s, axis, &self.available, y, "#333", "available");
        s.push_str("</g>");
    }

    fn draw_groups(&self, s: &mut String, axis: &Axis) {
        let top = TOP + STRIP + GAP;
        for (row, (group, changes)) in self.groups.iter().enumerate() {
            let y = top + row as f64 * ROW;
            let _ = write!(
                s,
                r#"<g class="group" data-group="{group}"><text x="4" y="{:.1}">group {group}</text>"#,
                y + ROW * 0.7
            );
            for (i, &(t0, st)) in changes.iter().enumerate() {
                let t1 = changes.get(i + 1).map_or(self.end_ms, |&(t, _)| t);
                if st.rev == Rev::Empty || t1 <= t0 {
                    continue;
                }
                group_span(s, axis, y, t0, t1, st);
            }
            s.push_str("</g>");
        }
    }

    fn draw_lines(&self, s: &mut String, axis: &Axis, y0: f64) {
        let max = self
            .partition
            .iter()
            .chain(&self.replicas)
            .map(|&(_, n)| n)
            .max()
            .unwrap_or(1)
            .max(1);
        let y = |n: i32| y0 + LINES - LINES * f64::from(n) / f64::from(max);
        let _ = write!(
            s,
            r##"<g class="leader-sts"><text x="4" y="{:.1}">partition</text><text x="4" y="{:.1}" fill="#777">replicas</text>"##,
            y0 + 14.0,
            y0 + 28.0
        );
        step_line(s, axis, &self.replicas, y, "#777", "replicas");
        step_line(s, axis, &self.partition, y, "#6a1b9a", "partition");
        s.push_str("</g>");
    }

    fn draw_controller(&self, s: &mut String, axis: &Axis, height: f64) {
        for &(t0, t1) in &self.controller_down {
            let t1 = t1.unwrap_or(self.end_ms);
            let (x0, x1) = (axis.x(t0), axis.x(t1));
            let _ = write!(
                s,
                r##"<rect class="controller-down" data-t0="{t0}" data-t1="{t1}" x="{x0:.1}" y="{TOP}" width="{:.1}" height="{:.1}" fill="#555" fill-opacity="0.12"><title>controller down {} .. {}</title></rect>"##,
                (x1 - x0).max(1.0),
                height - TOP - BOTTOM,
                fmt_ms(t0),
                fmt_ms(t1)
            );
        }
    }

    fn draw_faults(&self, s: &mut String, axis: &Axis, height: f64) {
        let mut lanes = Lanes::new(2);
        for (at, label) in &self.faults {
            let x = axis.x(*at);
            let _ = write!(
                s,
                r##"<g class="fault" data-fault="{l}" data-t0="{at}"><line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{:.1}" stroke="#1565c0" stroke-width="1"/><path d="M{x:.1} {TOP} l-4 -7 h8 z" fill="#1565c0"/>"##,
                height - BOTTOM,
                l = esc(label),
            );
            if let Some(lane) = lanes.place(x + 6.0, label) {
                let _ = write!(
                    s,
                    r##"<text x="{:.1}" y="{:.1}" fill="#1565c0">{}</text>"##,
                    x + 6.0,
                    TOP - 2.0 - 12.0 * lane as f64,
                    esc(label)
                );
            }
            let _ = write!(s, "<title>{} at {}</title></g>", esc(label), fmt_ms(*at));
        }
    }

    /// A thin red line per violation, a dot on the axis, and the invariant's name where it
    /// fits (up to three lanes; the rest keep their name in the tooltip and `data-invariant`).
    fn draw_violations(&self, s: &mut String, axis: &Axis, height: f64) {
        let mut lanes = Lanes::new(3);
        for (at, inv, msg) in &self.violations {
            let x = axis.x(*at);
            let _ = write!(
                s,
                r##"<g class="violation" data-invariant="{i}" data-t0="{at}"><line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{:.1}" stroke="#c62828" stroke-width="1.2" stroke-opacity="0.8"/><circle cx="{x:.1}" cy="{:.1}" r="4" fill="#c62828"/>"##,
                height - BOTTOM,
                height - BOTTOM,
                i = esc(inv),
            );
            if let Some(lane) = lanes.place(x + 5.0, inv) {
                let _ = write!(
                    s,
                    r##"<text x="{:.1}" y="{:.1}" fill="#c62828" stroke="#fff" stroke-width="3" paint-order="stroke">{}</text>"##,
                    x + 5.0,
                    height - BOTTOM - 6.0 - 12.0 * lane as f64,
                    esc(inv)
                );
            }
            let _ = write!(
                s,
                "<title>{} at {}: {}</title></g>",
                esc(inv),
                fmt_ms(*at),
                esc(msg)
            );
        }
    }
}

/// Rows of text labels that must not overlap: a label goes in the first lane whose last label
/// ends left of it.
struct Lanes {
    ends: Vec<f64>,
}

impl Lanes {
    fn new(n: usize) -> Lanes {
        Lanes {
            ends: vec![f64::MIN; n],
        }
    }

    /// The lane for a label starting at `x`, if one has room (about 6.2 px per character at
    /// the picture's 11 px font).
    fn place(&mut self, x: f64, label: &str) -> Option<usize> {
        let lane = self.ends.iter().position(|&end| x >= end + 4.0)?;
        self.ends[lane] = x + 6.2 * label.chars().count() as f64;
        Some(lane)
    }
}

const WIDTH: f64 = 1200.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 46.0;
const STRIP: f64 = 50.0;
const GAP: f64 = 10.0;
const ROW: f64 = 16.0;
const LINES: f64 = 50.0;
const BOTTOM: f64 = 44.0;
/// Width of a compressed quiet stretch.
const BREAK: f64 = 18.0;

const DEFS: &str = r##"<defs><pattern id="unready" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="#ffffff" fill-opacity="0.6"/></pattern></defs>"##;
const LEGEND_OPEN: &str = r#"<g class="legend">"#;

fn legend(s: &mut String) {
    let swatch = |c: &str| format!(r#"<rect width="12" height="10" y="-9" fill="{c}"/>"#);
    let items = [
        (swatch(Rev::Old.colour()), "older revision"),
        (swatch(Rev::New.colour()), "current revision"),
        (swatch(Rev::Mixed.colour()), "mixed (leader and workers differ)"),
        (
            format!(
                r#"{}<rect width="12" height="10" y="-9" fill="url(#unready)"/>"#,
                swatch("#888")
            ),
            "not ready",
        ),
        (
            r##"<rect width="12" height="10" y="-9" fill="none" stroke="#000" stroke-dasharray="2 2"/>"##.to_string(),
            "terminating",
        ),
        (
            r##"<rect width="12" height="10" y="-9" fill="#555" fill-opacity="0.25"/>"##.to_string(),
            "controller down",
        ),
        (
            r##"<rect width="12" height="10" y="-9" fill="#e53935" fill-opacity="0.25"/>"##.to_string(),
            "below the floor",
        ),
        (
            r##"<path d="M6 -9 v10" stroke="#1565c0"/>"##.to_string(),
            "fault or step",
        ),
        (
            r##"<path d="M6 -9 v10" stroke="#c62828" stroke-width="1.5"/>"##.to_string(),
            "violation",
        ),
    ];
    let mut x = 0.0;
    for (mark, label) in items {
        let _ = write!(
            s,
            r#"<g transform="translate({x:.1},0)">{mark}<text x="16" y="0">{label}</text></g>"#
        );
        x += 28.0 + 6.2 * label.len() as f64;
    }
}

fn group_span(s: &mut String, axis: &Axis, y: f64, t0: u64, t1: u64, st: GroupState) {
    let (x0, x1) = (axis.x(t0), axis.x(t1));
    let w = (x1 - x0).max(0.5);
    let (y, h) = (y + 2.0, ROW - 4.0);
    let _ = write!(
        s,
        r#"<rect class="span" data-rev="{}" data-ready="{}" data-terminating="{}" data-t0="{t0}" data-t1="{t1}" x="{x0:.1}" y="{y:.1}" width="{w:.1}" height="{h}" fill="{}"/>"#,
        st.rev.as_str(),
        st.ready,
        st.terminating,
        st.rev.colour()
    );
    if !st.ready {
        let _ = write!(
            s,
            r#"<rect x="{x0:.1}" y="{y:.1}" width="{w:.1}" height="{h}" fill="url(#unready)"/>"#
        );
    }
    if st.terminating {
        let _ = write!(
            s,
            r##"<rect x="{x0:.1}" y="{y:.1}" width="{w:.1}" height="{h}" fill="none" stroke="#000" stroke-dasharray="2 2"/>"##
        );
    }
}

fn step_line(
    s: &mut String,
    axis: &Axis,
    points: &[(u64, i32)],
    y: impl Fn(i32) -> f64,
    colour: &str,
    class: &str,
) {
    if points.is_empty() {
        return;
    }
    let mut d = String::new();
    for (i, &(t, n)) in points.iter().enumerate() {
        let x = axis.x(t);
        if i == 0 {
            let _ = write!(d, "M{x:.1} {:.1}", y(n));
        } else {
            let _ = write!(d, " H{x:.1} V{:.1}", y(n));
        }
    }
    let _ = write!(d, " H{:.1}", axis.x(axis.end));
    let _ = write!(
        s,
        r#"<path class="{class}" d="{d}" fill="none" stroke="{colour}" stroke-width="1.5"/>"#
    );
}

/// Simulated time to x, with long quiet stretches compressed to a drawn break.
struct Axis {
    end: u64,
    /// (t0, t1, x0, x1) pieces; a break is a piece whose width is [`BREAK`].
    pieces: Vec<(u64, u64, f64, f64)>,
}

impl Axis {
    fn new(tl: &Timeline) -> Axis {
        let mut times: Vec<u64> = Vec::new();
        times.push(0);
        times.push(tl.end_ms);
        for ch in tl.groups.values() {
            times.extend(ch.iter().map(|(t, _)| *t));
        }
        times.extend(tl.available.iter().map(|(t, _)| *t));
        times.extend(tl.partition.iter().map(|(t, _)| *t));
        times.extend(tl.faults.iter().map(|(t, _)| *t));
        times.extend(tl.violations.iter().map(|(t, _, _)| *t));
        times.sort_unstable();
        times.dedup();
        let end = tl.end_ms.max(1);
        // A quiet stretch is a gap longer than a fifth of the run and than ten minutes.
        let quiet = (end / 5).max(600_000);
        let mut active: Vec<(u64, u64)> = Vec::new();
        let mut breaks: Vec<(u64, u64)> = Vec::new();
        let mut start = times[0];
        for w in times.windows(2) {
            if w[1] - w[0] > quiet {
                active.push((start, w[0]));
                breaks.push((w[0], w[1]));
                start = w[1];
            }
        }
        active.push((start, *times.last().unwrap()));
        let active_ms: u64 = active.iter().map(|(a, b)| b - a).sum::<u64>().max(1);
        let room = WIDTH - LEFT - RIGHT - BREAK * breaks.len() as f64;
        let mut pieces = Vec::new();
        let mut x = LEFT;
        for (i, &(a, b)) in active.iter().enumerate() {
            let w = room * (b - a) as f64 / active_ms as f64;
            pieces.push((a, b, x, x + w));
            x += w;
            if let Some(&(g0, g1)) = breaks.get(i) {
                pieces.push((g0, g1, x, x + BREAK));
                x += BREAK;
            }
        }
        Axis { end, pieces }
    }

    fn x(&self, t: u64) -> f64 {
        for &(t0, t1, x0, x1) in &self.pieces {
            if t <= t1 {
                if t1 == t0 {
                    return x0;
                }
                let f = (t.saturating_sub(t0)) as f64 / (t1 - t0) as f64;
                return x0 + f * (x1 - x0);
            }
        }
        WIDTH - RIGHT
    }

    fn is_break(&self, i: usize) -> bool {
        i % 2 == 1
    }

    fn draw(&self, s: &mut String, y: f64) {
        let _ = write!(
            s,
            r##"<g class="axis"><line x1="{LEFT}" x2="{}" y1="{y}" y2="{y}" stroke="#000"/>"##,
            WIDTH - RIGHT
        );
        for (i, &(t0, t1, x0, x1)) in self.pieces.iter().enumerate() {
            if self.is_break(i) {
                let _ = write!(
                    s,
                    r##"<g class="break" data-t0="{t0}" data-t1="{t1}"><rect x="{x0:.1}" y="{TOP}" width="{:.1}" height="{:.1}" fill="#fff"/><path d="M{:.1} {:.1} l4 -8 M{:.1} {:.1} l4 -8" stroke="#000"/><title>{} of quiet time left out</title></g>"##,
                    x1 - x0,
                    y - TOP,
                    x0 + 4.0,
                    y + 4.0,
                    x0 + 10.0,
                    y + 4.0,
                    fmt_ms(t1 - t0)
                );
                continue;
            }
            for t in ticks(t0, t1, x1 - x0) {
                let x = self.x(t);
                let _ = write!(
                    s,
                    r##"<line x1="{x:.1}" x2="{x:.1}" y1="{y}" y2="{}" stroke="#000"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
                    y + 4.0,
                    y + 15.0,
                    tick_label(t)
                );
            }
        }
        s.push_str("</g>");
    }
}

/// Round tick times inside [t0, t1], about one per 90 px.
fn ticks(t0: u64, t1: u64, width: f64) -> Vec<u64> {
    const STEPS: [u64; 14] = [
        100, 500, 1_000, 5_000, 10_000, 30_000, 60_000, 300_000, 600_000, 1_800_000, 3_600_000,
        7_200_000, 21_600_000, 86_400_000,
    ];
    let want = (width / 90.0).floor().max(1.0) as u64;
    let span = t1 - t0;
    let step = STEPS
        .iter()
        .copied()
        .find(|s| span / s <= want)
        .unwrap_or(86_400_000);
    let first = t0.div_ceil(step) * step;
    (0..)
        .map(|i| first + i * step)
        .take_while(|t| *t <= t1)
        .collect()
}

fn tick_label(t: u64) -> String {
    match t {
        t if t >= 3_600_000 && t % 3_600_000 == 0 => format!("{}h", t / 3_600_000),
        t if t >= 3_600_000 => format!("{}h{}m", t / 3_600_000, t % 3_600_000 / 60_000),
        t if t >= 60_000 && t % 60_000 == 0 => format!("{}min", t / 60_000),
        t if t >= 60_000 => format!("{}min{}s", t / 60_000, t % 60_000 / 1000),
        t if t % 1000 == 0 => format!("{}s", t / 1000),
        t => format!("{}ms", t),
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(rev: Rev, ready: bool) -> GroupState {
        GroupState {
            rev,
            ready,
            terminating: false,
        }
    }

    #[test]
    fn below_floor_merges_adjacent_intervals_ends_at_the_run_end_and_skips_bring_up() {
        let mut tl = Timeline {
            end_ms: 100,
            floor: 3,
            ..Timeline::default()
        };
        tl.available(0, 0);
        tl.available(10, 2);
        tl.available(20, 4);
        tl.available(50, 1);
        tl.available(60, 2);
        tl.available(70, 3);
        tl.available(80, 2);
        // Bringing the groups up (0..20) is not below the floor; 50..70 is one interval.
        assert_eq!(tl.below_floor(), vec![(50, 70), (80, 100)]);
    }

    #[test]
    fn a_long_quiet_stretch_is_drawn_as_a_break() {
        let mut tl = Timeline {
            end_ms: 10 * 3_600_000 + 120_000,
            floor: 1,
            ..Timeline::default()
        };
        tl.group(0, 0, st(Rev::Old, true));
        tl.group(60_000, 0, st(Rev::New, false));
        tl.group(10 * 3_600_000 + 60_000, 0, st(Rev::New, true));
        let svg = tl.svg("t");
        assert_eq!(svg.matches(r#"class="break""#).count(), 1);
        let axis = Axis::new(&tl);
        // The minute before the break takes far more room than the ten quiet hours.
        assert!(axis.x(60_000) - axis.x(0) > 10.0 * BREAK);
    }

    #[test]
    fn repeated_states_are_one_span() {
        let mut tl = Timeline::default();
        tl.group(0, 1, st(Rev::Old, true));
        tl.group(5, 1, st(Rev::Old, true));
        tl.group(5, 1, st(Rev::New, true));
        tl.group(5, 1, st(Rev::Old, true));
        assert_eq!(tl.groups[&1].len(), 1);
    }

    #[test]
    fn labels_name_units() {
        assert_eq!(tick_label(30_000), "30s");
        assert_eq!(tick_label(120_000), "2min");
        assert_eq!(tick_label(36_000_000), "10h");
        assert_eq!(tick_label(500), "500ms");
    }
}
