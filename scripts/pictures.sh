#!/usr/bin/env bash
# Regenerate the timeline pictures in docs/pictures/ (shown in README, "Seeing a run"): the seed
# outage (scenarios/controller-restart-mid-rollout.yaml) under v0.3.0, and the same scenario
# under the v0.4.1 profile with the fixes its `expect` lists as holding. With rsvg-convert on
# PATH, also a 1200 px PNG of each for a quick look (not committed).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p lws-sim --locked -q
bin="${CARGO_TARGET_DIR:-target}/release/lws-sim"
scenario=scenarios/controller-restart-mid-rollout.yaml
mkdir -p docs/pictures
render() { # reconciler, output name
  # Exit 1 is a run that broke an invariant, which is what the first picture shows.
  "$bin" run "$scenario" --reconciler "$1" --timeline "docs/pictures/$2.svg" || [ $? -eq 1 ]
  if command -v rsvg-convert >/dev/null; then
    rsvg-convert -w 1200 -b white "docs/pictures/$2.svg" -o "${TMPDIR:-/tmp}/$2.png"
    echo "look: ${TMPDIR:-/tmp}/$2.png"
  fi
}
render v0.3.0 v0.3.0-restart-outage
render v0.4.1,worker-sts-ready=available,restart-check=ownership v0.4.1-restart-fixed
