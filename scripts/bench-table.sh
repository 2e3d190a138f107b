#!/usr/bin/env bash
# Run every criterion bench in release mode and print the README's results table (medians),
# followed by the per-scenario and per-size notes the benches print.
# Usage: scripts/bench-table.sh [criterion filter]
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
cargo bench -p lws-sim --locked -- "$@" >"$out" 2>&1
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
    th = re.search(r'thrpt:\s+\[\S+ \S+ (\S+ \S+) \S+ \S+\]', line)
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
    if line.startswith(('calls ', 'scenario ', 'scale ')):
        print('    ' + line)
PY
