#!/usr/bin/env bash
# The learning curve, out of sample: the published fine-tuning measurements
# replayed as uploaded runs through the public API, one publication at a
# time, against a placementd whose prior has never seen that publication.
#
# For each seed and each publication (source group, as the leave-one-source-
# out cross-validation holds them out): the model constants are fitted on
# every OTHER publication (learning_curve --write_constants, core/fitting/model_fit.h),
# placementd starts from them on a fresh database
# (--model_constants_file, re-fitting its fleet model on every snapshot so
# that each prediction sees every upload before it), the publication's rows
# are uploaded in a random order and, after every K runs, its rows not yet
# uploaded are predicted. The curve is then aggregated over publications
# and seeds: at each number of runs seen, the median errors over the rows
# not yet uploaded of every replay that still had some, the planner's
# beside the same server's prior (a "<" marks the planner below it).
#
#   bench/learning_curve.sh [CSV] [K] [SEEDS]
#       defaults: ../shared/data/published_finetune_measurements.csv, 5,
#       "1 2 3"; LEARNING_CURVE_FLAGS adds flags to each replay (--verbose),
#       LEARNING_CURVE_ERRORS keeps the scored predictions in that file
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
curve="$build/bench/learning_curve"

source bench/lib.sh
# Every scored prediction, one a line (kept where LEARNING_CURVE_ERRORS says).
errors=${LEARNING_CURVE_ERRORS:-$work/errors}
: >"$errors"
mapfile -t groups < <("$curve" --csv "$csv" --list_groups)
first=1
for seed in $seeds; do
  for i in "${!groups[@]}"; do
    group=${groups[$i]}
    constants="$work/constants.$i"
    if [ ! -s "$constants" ]; then
      "$curve" --csv "$csv" --hold_out "$group" --write_constants "$constants"
    fi
    # A fresh database per replay: each starts from its prior alone.
    if [ -n "$first" ]; then
      start_placementd --fleet_refit_seconds 0 --model_constants_file "$constants"
      first=
    else
      stop_placementd
      admin="${db%/bench}/postgres"
      psql "$admin" -qc "DROP DATABASE bench" -c "CREATE DATABASE bench"
      "$build/services/placementd" migrate up --database_url "$db" >/dev/null
      launch_placementd --fleet_refit_seconds 0 --model_constants_file "$constants"
    fi
    echo "== seed $seed, held out: $group"
    "$curve" --server "$server" --csv "$csv" --group "$group" \
      --model_constants_file "$constants" --errors_out "$errors" --k "$k" \
      --seed "$seed" --max_seconds 300 ${LEARNING_CURVE_FLAGS:-}
  done
done
echo "== over ${#groups[@]} publications x seeds $seeds: median |error| of the" \
  "rows not yet uploaded (memory %, step time factor); < : below the prior"
"$curve" --aggregate "$errors"
