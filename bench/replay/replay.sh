#!/usr/bin/env bash
# Fleet replay (docs/DECISIONS.md): every policy over each world's job trace,
# each on its own placementd and database, driven through the public API.
#
#   bench/replay/replay.sh [--json] [--jobs N] [--luck K] [--tenant-luck K] [--policies a,b]
#                          [--queue-policies ideal-forecasts] WORLD.json...
#
# Builds build/release if placementd or the Python stubs are missing. With
# PLACEMENT_TEST_DATABASE_URL set (scripts/test), databases are created on
# that server; otherwise a throwaway PostgreSQL is started (scripts/pg) and
# destroyed on exit. PLACEMENT_BUILD_DIR names another build folder;
# PLACEMENTD and PLACEMENT_PYTHON_STUBS, when set, the binary and the stubs.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${PLACEMENT_BUILD_DIR:-$root/build/release}
placementd=${PLACEMENTD:-$build/services/placementd}
stubs=${PLACEMENT_PYTHON_STUBS:-$build/proto/python}
if [ ! -x "$placementd" ] || [ ! -d "$stubs/placement" ]; then
  (cd "$root" && scripts/build "$build" -DPLACEMENT_BUILD_BENCH=ON)
fi

pg_dir=
cleanup() {
  if [ -n "$pg_dir" ]; then
    "$root/scripts/pg" destroy "$pg_dir/cluster" >/dev/null 2>&1 || true
    rm -rf "$pg_dir"
  fi
}
trap cleanup EXIT
if [ -z "${PLACEMENT_TEST_DATABASE_URL:-}" ]; then
  pg_dir=$(mktemp -d /tmp/placement-replay-pg.XXXXXX)
  chmod 755 "$pg_dir"
  PLACEMENT_PG_OPTIONS="${PLACEMENT_PG_OPTIONS:--c fsync=off -c synchronous_commit=off}" \
    "$root/scripts/pg" create "$pg_dir/cluster"
  PLACEMENT_TEST_DATABASE_URL=$("$root/scripts/pg" start "$pg_dir/cluster")
  export PLACEMENT_TEST_DATABASE_URL
fi

export PLACEMENTD=$placementd
export PYTHONPATH=$stubs:$root/tests/support:$root/bench/replay
export PYTHONDONTWRITEBYTECODE=1
/usr/bin/python3 "$root/bench/replay/replay.py" "$@"
