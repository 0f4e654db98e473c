# Shared by the bench/ scripts: a private PostgreSQL and a placementd on
# loopback, stopped on exit. Source it after setting `build`.
#   start_placementd [placementd flags...]   sets $server, $db, $pid, $work
#   restart_placementd [placementd flags...] the same database, new flags
work=$(mktemp -d /tmp/placement-bench.XXXXXX)
chmod 755 "$work"
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  scripts/pg destroy "$work/pg" || true
  rm -rf "$work"
}
trap cleanup EXIT

start_placementd() {
  scripts/pg create "$work/pg"
  local admin
  admin=$(scripts/pg start "$work/pg")
  psql "$admin" -qc "CREATE DATABASE bench"
  db="${admin%/postgres}/bench"
  "$build/services/placementd" migrate up --database_url "$db" >/dev/null
  launch_placementd "$@"
}

# Stops placementd and starts it again on the same database with `flags...`.
restart_placementd() {
  kill "$pid" && wait "$pid" 2>/dev/null || true
  pid=
  launch_placementd "$@"
}

launch_placementd() {
  rm -f "$work/ports"
  # PostgreSQL is on this machine: placementd reaches it through its Unix
  # socket, as a one-machine deployment would (loopback TCP costs both ends
  # a TCP stack per round trip). Tokens are not what the benchmarks measure.
  "$build/services/placementd" \
    --database_url "$(scripts/pg socket-url "$work/pg" bench)" --auth=false \
    --listen 127.0.0.1:0 --metrics_listen 127.0.0.1:0 \
    --port_file "$work/ports" "$@" 2>"$work/placementd.log" &
  pid=$!
  for _ in $(seq 100); do [ -s "$work/ports" ] && break; sleep 0.1; done
  server="127.0.0.1:$(cut -d' ' -f1 "$work/ports")"
  sleep 1.5  # health SERVING
}

# Resident memory (kB) and open file descriptors of placementd, and the
# database connections it holds.
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$pid/status"; }
open_fds() { ls "/proc/$pid/fd" | wc -l; }
db_connections() {
  psql "$db" -qtAc "SELECT count(*) FROM pg_stat_activity WHERE datname = 'bench' AND pid <> pg_backend_pid()"
}
