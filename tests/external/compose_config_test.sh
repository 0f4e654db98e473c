#!/usr/bin/env bash
# Validates the container deployment without a Docker engine:
#   - docker-compose.yml parses and resolves (`docker-compose config`), with
#     the services, wiring and mounts placementd needs;
#   - deploy/prometheus.yml is a valid Prometheus config scraping placementd;
#   - the Dockerfile builds on Debian 12 with scripts/install-deps, the same
#     install script as the quick start.
#
#   tests/external/compose_config_test.sh [REPO_ROOT]
set -uo pipefail
root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
compose_file="$root/docker-compose.yml"
dockerfile="$root/Dockerfile"
prom_config="$root/deploy/prometheus.yml"

failures=0
checks=0
pass() { checks=$((checks + 1)); echo "ok   $1"; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "FAIL $1" >&2; }
check() {  # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}

if ! command -v docker-compose >/dev/null; then
  echo "FAIL docker-compose is not installed (scripts/install-deps installs it)" >&2
  exit 1
fi
for f in "$compose_file" "$dockerfile" "$prom_config" "$root/.dockerignore" \
         "$root/scripts/install-deps"; do
  [ -f "$f" ] || { echo "FAIL missing $f" >&2; exit 1; }
done

# `config` only reads files: no engine is contacted. Run from a neutral
# directory with no .env so that nothing but the file itself is validated.
compose() {
  (cd / && env -u COMPOSE_FILE -u COMPOSE_PROJECT_NAME -u DOCKER_HOST \
     docker-compose -f "$compose_file" --project-directory "$root" "$@")
}

check "docker-compose config -q accepts docker-compose.yml" compose config -q

resolved=$(compose config 2>/dev/null)
services=$(compose config --services 2>/dev/null | sort | tr '\n' ' ')
check "services are placementd, postgres, prometheus (got: $services)" \
  test "$services" = "placementd postgres prometheus "
volumes=$(compose config --volumes 2>/dev/null | tr '\n' ' ')
check "named volume pgdata (got: $volumes)" test "$volumes" = "pgdata "

# Resolved placementd settings (docker-compose normalises the YAML, so these
# greps see one layout whatever the source style).
# The YAML dump wraps long strings, so the command is matched whitespace-flat.
flat=$(tr -s '[:space:]' ' ' <<<"$resolved")
contains() { grep -qF -- "$1" <<<"$resolved"; }
contains_flat() { grep -qF -- "$1" <<<"$flat"; }
check "postgres runs postgres:15" contains "image: postgres:15"
check "postgres has a pg_isready healthcheck" contains "- pg_isready"
check "placementd is built from the Dockerfile" contains "dockerfile: Dockerfile"
check "placementd migrates, then serves" \
  contains_flat "placementd migrate up && exec placementd"
check "placementd serves gRPC on 0.0.0.0:50051" \
  contains_flat "--listen 0.0.0.0:50051"
check "placementd serves /metrics on 0.0.0.0:9464" \
  contains_flat "--metrics_listen 0.0.0.0:9464"
check "placementd reaches postgres through DATABASE_URL" \
  grep -qE 'DATABASE_URL: postgres(ql)?://[^@]+@postgres:5432/' <<<"$resolved"
check "placementd waits for postgres to be healthy" \
  contains "condition: service_healthy"
check "placementd publishes 50051" contains "published: 50051"
check "placementd publishes 9464" contains "published: 9464"
check "prometheus mounts deploy/prometheus.yml" \
  contains "$root/deploy/prometheus.yml:/etc/prometheus/prometheus.yml"

# Prometheus config.
check "prometheus.yml scrapes placementd:9464" \
  grep -qE "targets:.*['\"]placementd:9464['\"]" "$prom_config"
if command -v promtool >/dev/null; then
  promtool_ok() { promtool check config "$prom_config" >/dev/null; }
  check "promtool check config deploy/prometheus.yml" promtool_ok
else
  echo "note promtool not installed; prometheus.yml only grepped"
fi

# Dockerfile: the same install script as the quick start.
instructions=$(sed -e 's/#.*//' "$dockerfile")
check "Dockerfile builds FROM debian:bookworm" \
  grep -qE '^FROM[[:space:]]+debian:bookworm([[:space:]]|$)' <<<"$instructions"
check "Dockerfile RUNs scripts/install-deps" \
  grep -qE '^RUN[[:space:]].*/scripts/install-deps' <<<"$instructions"
check "Dockerfile copies the sources" \
  grep -qE '^COPY[[:space:]]+\.[[:space:]]+/src' <<<"$instructions"
check "Dockerfile builds Release without tests and benchmarks" \
  grep -qE 'CMAKE_BUILD_TYPE=Release.*-DBUILD_TESTING=OFF.*-DPLACEMENT_BUILD_BENCH=OFF' \
    <<<"$(tr -d '\\\n' <<<"$instructions")"
check "Dockerfile installs placementd" grep -q 'placementd' <<<"$instructions"
check "install-deps is executable" test -x "$root/scripts/install-deps"
for d in build/ .tools/ .data/; do
  check ".dockerignore excludes $d" grep -qxF "$d" "$root/.dockerignore"
done

echo "compose_config_test: $((checks - failures)) of $checks checks passed"
[ "$failures" = 0 ]
