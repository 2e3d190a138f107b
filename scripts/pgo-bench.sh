#!/usr/bin/env bash
# Run criterion's benches against the profile-guided build of scripts/pgo-build.sh: the same
# `dist` profile, the same RUSTFLAGS and target directory, so Cargo links the bench to the very
# lws-sim and lws crates the campaign binary is built from (the benches are a package of their
# own, whose dependencies have the binary's features; see sim/Cargo.toml's zerocopy line) and
# compiles only the bench itself. Run scripts/pgo-build.sh first.
# Usage: scripts/pgo-bench.sh [cargo bench arguments, e.g. --bench fuzz]
set -euo pipefail
cd "$(dirname "$0")/.."
work=$PWD/target/pgo
if [ ! -f "$work/merged.profdata" ]; then
    echo "pgo-bench: $work/merged.profdata is missing; run scripts/pgo-build.sh first" >&2
    exit 2
fi
RUSTFLAGS="-Cprofile-use=$work/merged.profdata" CARGO_TARGET_DIR="$work/use" \
    cargo bench -p lws-sim-benches --profile dist --locked "$@"
