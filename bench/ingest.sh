#!/usr/bin/env bash
# Telemetry ingestion against its baseline, on one private PostgreSQL:
#   1. N step samples through StreamStepSamples (placementd, gRPC, COPY);
#   2. the same number of rows with plain COPY through psql (CSV) into the
#      same table;
#   3. UploadBenchmarkRun with 8 concurrent clients.
# Prints samples/s of both paths, their ratio, and runs/s.
#
#   bench/ingest.sh [SAMPLES] [RUNS]      (defaults 1000000 and 4000)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
samples=${1:-1000000}
runs=${2:-4000}
build=${PLACEMENT_BUILD:-build/release}  # an existing build: skip building
if [ -z "${PLACEMENT_BUILD:-}" ]; then
  scripts/build "$build" -DPLACEMENT_BUILD_BENCH=ON >/dev/null
fi

source bench/lib.sh
start_placementd

now() { date +%s.%N; }
# One stream is the like-for-like comparison with one psql COPY session;
# four streams show what a fleet of agents gets.
for streams in 1 4; do
  echo "== $samples samples through StreamStepSamples ($streams stream(s), 2000 a message)"
  "$build/bench/ingest_load" samples --server "$server" --samples "$samples" \
    --streams "$streams" --batch 2000 | tee "$work/stream$streams.txt"
done
rate_of() { sed -n 's/.*samples_per_s=\([0-9]*\).*/\1/p' "$1"; }

echo "== the same rows with plain COPY (psql, CSV) into step_samples"
"$build/bench/ingest_load" csv --samples "$samples" --streams 4 --out "$work/samples.csv"
start=$(now)
psql "$db" -qc "\\copy step_samples (run_id, partition_time, step, sample_time, step_time_s, memory_allocated_gb, memory_reserved_gb, tokens, loss) FROM '$work/samples.csv' WITH (FORMAT csv)"
end=$(now)
copy_rate=$(echo "$samples / ($end - $start)" | bc -l)
printf 'plain_copy samples=%d seconds=%.3f samples_per_s=%.0f\n' "$samples" \
  "$(echo "$end - $start" | bc -l)" "$copy_rate"
for streams in 1 4; do
  printf 'ratio stream(%d)/plain_copy = %.2f (target >= 1.0)\n' "$streams" \
    "$(echo "$(rate_of "$work/stream$streams.txt") / $copy_rate" | bc -l)"
done

echo "== $runs runs through UploadBenchmarkRun, 8 concurrent clients"
"$build/bench/ingest_load" runs --server "$server" --runs "$runs" --clients 8
