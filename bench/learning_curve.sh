#!/usr/bin/env bash
# The learning curve: the published fine-tuning measurements replayed as
# uploaded runs, in a random order, through the public API against a
# placementd on a private PostgreSQL (re-fitting its fleet model on every
# snapshot, so that each prediction sees every upload before it); after every
# K runs, the rows not yet uploaded are predicted and the median errors of
# the planner and of the analytic prior printed against the runs seen.
#
#   bench/learning_curve.sh [CSV] [K] [SEEDS]
#       defaults: ../shared/data/published_finetune_measurements.csv, 5,
#       "1 2 3" (one curve per seed); each curve is bounded by
#       --max_seconds 300
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
csv=${1:-../shared/data/published_finetune_measurements.csv}
k=${2:-5}
seeds=${3:-1 2 3}
build=${PLACEMENT_BUILD:-build/release}  # an existing build: skip building
if [ -z "${PLACEMENT_BUILD:-}" ]; then
  scripts/build "$build" -DPLACEMENT_BUILD_BENCH=ON >/dev/null
fi
csv=$(cd "$(dirname "$csv")" && pwd)/$(basename "$csv")

source bench/lib.sh
for seed in $seeds; do
  # A fresh database per curve: each starts from the prior alone.
  if [ -n "$pid" ]; then
    kill "$pid" && wait "$pid" 2>/dev/null || true
    pid=
    scripts/pg destroy "$work/pg"
  fi
  start_placementd --fleet_refit_seconds 0
  echo "== seed $seed: median |error| of the rows not yet uploaded (memory %, step time factor)"
  "$build/bench/learning_curve" --server "$server" --csv "$csv" --k "$k" \
    --seed "$seed" --max_seconds 300 ${LEARNING_CURVE_FLAGS:-}
done
