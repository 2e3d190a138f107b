#!/usr/bin/env bash
# Rewrite scenarios/trace-hashes.tsv from the current code: every scenario file against every
# reconciler in its `expect` (needs python3-yaml). Review the diff: each moved hash needs a named reason.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p lws-sim --locked -q
bin="${CARGO_TARGET_DIR:-target}/release/lws-sim"
out=scenarios/trace-hashes.tsv
{
  head -2 "$out"
  for f in scenarios/*.yaml scenarios/zoo/*.yaml scenarios/defects/*.yaml scenarios/conformance/*.yaml; do
    python3 -c 'import sys,yaml; print("\n".join((yaml.safe_load(open(sys.argv[1])).get("expect") or {}).keys()))' "$f" |
    while IFS= read -r r; do
      # `run` exits 1 when an invariant broke (an expected violation): not an error here.
      h=$({ "$bin" run "$f" --reconciler "$r" --json || [ $? -eq 1 ]; } | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d[0] if isinstance(d,list) else d; print(d["trace_hash"])')
      printf '%s\t%s\t%s\n' "$f" "$r" "$h"
    done
  done
} > "$out.new"
mv "$out.new" "$out"
git diff --stat -- "$out"
