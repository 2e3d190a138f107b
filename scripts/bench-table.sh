#!/usr/bin/env bash
# Run every criterion bench (profile `dist`: release with whole-program optimisation, as the
# Dockerfile builds) and print the README's results table (medians),
# the per-scenario notes the benches print, and the scale bench's growth table (16 to 4,096
# groups, one timed run per size above 128; the 4,096-group run takes several minutes).
# Then `lws-sim fuzz --time 60s --jobs 1`'s own count of cases per second, for the `dist` build
# and for the profile-guided one of scripts/pgo-build.sh, whose crates the fuzz bench is then
# linked to as well (scripts/pgo-bench.sh; about 20 minutes more; skipped with LWS_SIM_BENCH_PGO=0).
# Usage: scripts/bench-table.sh [criterion filter]
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
cargo bench -p lws-sim-benches --profile dist --locked -- "$@" >"$out" 2>&1
python3 - "$out" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
print(f"Machine: {open('/proc/cpuinfo').read().count('processor')} cores, "
      + next((l.split(':',1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), '?'))
print()
print("| bench | median | throughput |")
print("|---|---|---|")
name = None
for line in text.splitlines():
    m = re.match(r'^([\w./,=-]+)\s*$', line.strip()) if not line.startswith(' ') else None
    if m and '/' in line:
        name = m.group(1)
    t = re.search(r'time:\s+\[\S+ \S+ (\S+ \S+) \S+ \S+\]', line)
    if t:
        if name is None:
            name = line.split('time:')[0].strip()
        thr = ''
        pending = name
    th = re.search(r'thrpt:\s+\[\S+\s+\S+\s+(\S+\s+\S+)\s+\S+\s+\S+\]', line)
    if t:
        row = [pending or line.split('time:')[0].strip(), t.group(1)]
        rows = globals().setdefault('rows', [])
        rows.append(row)
        name = None
    if th and globals().get('rows'):
        rows[-1].append(th.group(1))
for r in globals().get('rows', []):
    print(f"| {r[0]} | {r[1]} | {r[2] if len(r) > 2 else ''} |")
print()
for line in text.splitlines():
    if line.startswith(('calls ', 'scenario ')):
        print('    ' + line)
# The scale bench's timed runs (one per size) as the README's growth table.
scale = {}
for line in text.splitlines():
    m = re.match(r'scale groups=(\d+)[^:]*: events=(\d+) wall=([\d.]+)s reconcilers=([\d.]+)s \((\d+)%\) '
                 r'sts-syncs=([\d.]+)s \((\d+)%\) simulator=([\d.]+)us/event peak-rss=(\S+)', line)
    if m:
        scale[int(m.group(1))] = m.groups()
if scale:
    print()
    print("| groups of 8 | events | wall | ported reconcilers | StatefulSet syncs | simulator per event | peak RSS |")
    print("|---|---|---|---|---|---|---|")
    for n in sorted(scale):
        g = scale[n]
        print(f"| {n:,} | {int(g[1]):,} | {float(g[2]):.1f} s | {g[4]}% | {g[6]}% | {g[7]} µs | {g[8]} |")
PY

# Fuzz throughput by the campaign's own count (one core, all-fixed, the default distribution).
campaign() { # campaign LABEL BINARY
    local dir
    dir=$(mktemp -d)
    local rc=0
    "$2" fuzz --reconciler all-fixed --time 60s --jobs 1 --seed 7 --out "$dir" >"$dir/log" 2>&1 || rc=$?
    [ "$rc" -le 1 ] || { cat "$dir/log" >&2; exit 1; }
    echo "fuzz --time 60s --jobs 1 ($1): $(grep -E '^[0-9]+ cases in' "$dir/log")"
}
echo
cargo build --profile dist --locked -p lws-sim --bin lws-sim >/dev/null 2>&1
target=${CARGO_TARGET_DIR:-target}
campaign dist "$target/dist/lws-sim"
if [ "${LWS_SIM_BENCH_PGO:-1}" != 0 ]; then
    scripts/pgo-build.sh >/dev/null
    campaign pgo target/pgo/lws-sim
    # Criterion's fuzz bench linked to the same profile-guided crates (scripts/pgo-bench.sh).
    pgo_out=$(mktemp)
    scripts/pgo-bench.sh --bench fuzz >"$pgo_out" 2>&1 || { cat "$pgo_out" >&2; exit 1; }
    echo "criterion fuzz bench (pgo):"
    grep -E '^fuzz/|time:|thrpt:' "$pgo_out" | sed 's/^/    /'
fi
