#!/usr/bin/env bash
# Build lws-sim for campaigns with profile-guided optimisation: the `dist` profile (fat LTO,
# one codegen unit) instrumented, trained on fuzz campaigns and scenario runs, then built again
# with the profile. About 30% more fuzz cases per second than `dist` alone (README,
# "Performance"). Results never depend on the build: a run's trace is a function of scenario,
# seed and reconciler, and every binary gives the same summary.json.
#
# Needs `llvm-profdata` of the toolchain's own LLVM: `rustup component add llvm-tools`.
# Two cold `dist` builds: about 20 minutes on 2 cores.
# Usage: scripts/pgo-build.sh [OUT]   (default OUT: target/pgo/lws-sim)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/target/pgo
out=${1:-$work/lws-sim}
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
    echo "pgo-build: $profdata is missing; run: rustup component add llvm-tools" >&2
    exit 2
fi

build() { # build FLAGS TARGET_DIR
    RUSTFLAGS="$1" CARGO_TARGET_DIR="$2" cargo build --profile dist --locked -p lws-sim --bin lws-sim
}

rm -rf "$work/raw" "$work/train"
mkdir -p "$work/raw" "$work/train"
build "-Cprofile-generate=$work/raw" "$work/gen"
gen=$work/gen/dist/lws-sim

# The training runs: exit 1 (an invariant broke, expected of the buggy releases) is fine,
# anything else is not. Seeds differ from the measurement's (bench-table.sh uses 7).
train() {
    local rc=0
    "$gen" "$@" >/dev/null 2>&1 || rc=$?
    if [ "$rc" -gt 1 ]; then
        echo "pgo-build: training run failed (exit $rc): lws-sim $*" >&2
        exit 1
    fi
}
train fuzz --reconciler all-fixed --cases 400 --seed 99 --out "$work/train/all-fixed"
train fuzz --reconciler v0.4.1 --cases 100 --seed 98 --out "$work/train/v0.4.1"
train fuzz --reconciler v0.10.0 --cases 100 --seed 97 --out "$work/train/v0.10.0"
train fuzz --reconciler v0.10.0 --workload disaggregated --cases 50 --seed 96 \
    --out "$work/train/disaggregated"
# Every seed scenario, against each reconciler its `expect` names (some name no default one).
train check scenarios

"$profdata" merge -o "$work/merged.profdata" "$work/raw"
build "-Cprofile-use=$work/merged.profdata" "$work/use"
mkdir -p "$(dirname "$out")"
cp "$work/use/dist/lws-sim" "$out"
echo "pgo-build: $out"
