#!/usr/bin/env bash
# A private two-node Patroni cluster (one etcd member, a primary and a
# synchronous standby) on loopback and free ports, for the failover test.
# The nodes use deploy/patroni/node1.yml and node2.yml with only the ports,
# folders and socket directory replaced, so the test runs the shipped
# configuration.
#
#   patroni_cluster.sh check               exit 77 with the reason if patroni
#                                          or etcd is not installed
#   patroni_cluster.sh start DIR           start it; prints the multi-host URL
#                                          of its "postgres" database
#   patroni_cluster.sh url DIR             that URL again
#   patroni_cluster.sh wait-healthy DIR S  wait up to S seconds for a running
#                                          leader and a running sync standby
#   patroni_cluster.sh leader DIR          the leader's name (node1, node2)
#   patroni_cluster.sh wait-new-leader DIR OLD S
#                                          wait up to S seconds for a running
#                                          leader other than OLD
#   patroni_cluster.sh kill-primary DIR    kill -9 the leader's postmaster;
#                                          prints the leader's name
#   patroni_cluster.sh failover-log DIR    Patroni's lines on why it failed
#                                          over after a crash, or did not
#   patroni_cluster.sh switchover DIR      planned switchover to the standby
#   patroni_cluster.sh sync DIR on|off     synchronous replication on or off
#   patroni_cluster.sh stop DIR            stop every daemon (by pid), remove DIR
#
# PostgreSQL refuses root: as root, everything runs as the unprivileged user
# scripts/pg uses ("placement-pg").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
pg_user=placement-pg

as_pg() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u "$pg_user" -- "$@"
  else
    "$@"
  fi
}

free_port() {
  local port low high
  read -r low high </proc/sys/net/ipv4/ip_local_port_range
  for _ in $(seq 1 200); do
    port=$((10000 + RANDOM % (low - 10000)))
    grep -qx "$port" "$dir/ports" 2>/dev/null && continue
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port" >>"$dir/ports"
      echo "$port"
      return 0
    fi
  done
  echo "patroni_cluster: no free port found" >&2
  return 1
}

check() {
  local missing=()
  for b in patroni patronictl etcd etcdctl; do
    command -v "$b" >/dev/null 2>&1 || missing+=("$b")
  done
  [ -x /usr/lib/postgresql/15/bin/postgres ] || missing+=(postgresql-15)
  if ((${#missing[@]})); then
    echo "SKIPPED: ${missing[*]} not installed (scripts/install-test-deps)"
    exit 77
  fi
  if [ "$(id -u)" = 0 ] && ! id -u "$pg_user" >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin "$pg_user"
  fi
}

# The deploy/ file of node $1 with this cluster's ports and folders.
write_config() {
  local node=$1 rest=$2 pg=$3
  /usr/bin/python3 - "$root/deploy/patroni/$node.yml" "$dir/$node.yml" \
    "$rest" "$pg" "$dir" "$node" "$etcd_client" <<'EOF'
import sys, yaml
src, dst, rest, pg, folder, node, etcd = sys.argv[1:]
c = yaml.safe_load(open(src))
c["restapi"]["listen"] = c["restapi"]["connect_address"] = f"127.0.0.1:{rest}"
c["etcd3"]["hosts"] = f"127.0.0.1:{etcd}"
p = c["postgresql"]
p["listen"] = p["connect_address"] = f"127.0.0.1:{pg}"
p["data_dir"] = f"{folder}/{node}/data"
p["pgpass"] = f"{folder}/{node}/pgpass"
p.setdefault("parameters", {})["unix_socket_directories"] = f"{folder}/{node}"
c["log"] = {"level": "INFO"}
yaml.safe_dump(c, open(dst, "w"), sort_keys=False)
EOF
}

rest_port() { sed -n "s/^$1_rest=//p" "$dir/env"; }

# GET /cluster from whichever node answers.
cluster_json() {
  local port
  for node in node1 node2; do
    port=$(rest_port "$node")
    curl -fsS --max-time 2 "http://127.0.0.1:$port/cluster" 2>/dev/null && return 0
  done
  return 1
}

# "name role state" per member.
members() {
  cluster_json | /usr/bin/python3 -c '
import json, sys
for m in json.load(sys.stdin).get("members", []):
    print(m["name"], m.get("role", ""), m.get("state", ""))'
}

leader() { members 2>/dev/null | awk '$2 == "leader" && $3 == "running" {print $1}'; }

wait_healthy() {
  local timeout=$1 deadline m
  deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    m=$(members 2>/dev/null || true)
    if echo "$m" | grep -Eq ' leader running$' &&
       echo "$m" | grep -Eq ' sync_standby (running|streaming)$'; then
      return 0
    fi
    sleep 0.3
  done
  echo "patroni_cluster: not healthy after ${timeout}s:" >&2
  echo "${m:-no answer}" >&2
  return 1
}

wait_new_leader() {
  local old=$1 deadline=$((SECONDS + $2)) now
  while ((SECONDS < deadline)); do
    now=$(leader)
    if [ -n "$now" ] && [ "$now" != "$old" ]; then
      echo "$now"
      return 0
    fi
    sleep 0.2
  done
  echo "patroni_cluster: $old is still the leader, or none is" >&2
  return 1
}

start_daemon() {  # name, command...: started as $pg_user, pid in DIR/name.pid
  local name=$1
  shift
  # The daemon writes its own pid (runuser's would be the wrong one).
  as_pg /bin/sh -c 'echo $$ >"$0"; exec "$@"' "$dir/$name.pid" "$@" \
    >"$dir/$name.log" 2>&1 </dev/null &
  local deadline=$((SECONDS + 5))
  until [ -s "$dir/$name.pid" ] || ((SECONDS > deadline)); do sleep 0.05; done
}

start() {
  check
  mkdir -p "$dir"
  chmod 755 "$dir"
  : >"$dir/ports"
  etcd_client=$(free_port)
  local etcd_peer n1_rest n2_rest n1_pg n2_pg
  etcd_peer=$(free_port)
  n1_rest=$(free_port)
  n2_rest=$(free_port)
  n1_pg=$(free_port)
  n2_pg=$(free_port)
  mkdir -p "$dir/etcd" "$dir/node1" "$dir/node2"
  [ "$(id -u)" = 0 ] && chown -R "$pg_user" "$dir"
  chmod 700 "$dir/etcd" "$dir/node1" "$dir/node2"
  cat >"$dir/env" <<EOF
etcd_client=$etcd_client
node1_rest=$n1_rest
node2_rest=$n2_rest
node1_pg=$n1_pg
node2_pg=$n2_pg
EOF
  write_config node1 "$n1_rest" "$n1_pg"
  write_config node2 "$n2_rest" "$n2_pg"
  [ "$(id -u)" = 0 ] && chown "$pg_user" "$dir"/*.yml

  start_daemon etcd etcd --name etcd1 --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_client" \
    --advertise-client-urls "http://127.0.0.1:$etcd_client" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-cluster "etcd1=http://127.0.0.1:$etcd_peer" \
    --listen-metrics-urls "" --log-level warn
  local deadline=$((SECONDS + 30))
  until ETCDCTL_API=3 etcdctl --endpoints="127.0.0.1:$etcd_client" \
          --dial-timeout=1s endpoint health >/dev/null 2>&1; do
    if ((SECONDS > deadline)); then
      echo "patroni_cluster: etcd did not start:" >&2
      tail -20 "$dir/etcd.log" >&2
      exit 1
    fi
    sleep 0.2
  done
  # node1 bootstraps the cluster; node2 joins as its standby.
  start_daemon patroni-node1 patroni "$dir/node1.yml"
  deadline=$((SECONDS + 60))
  until [ "$(leader)" = node1 ]; do
    if ((SECONDS > deadline)); then
      echo "patroni_cluster: node1 did not become the leader:" >&2
      tail -30 "$dir/patroni-node1.log" >&2
      exit 1
    fi
    sleep 0.3
  done
  start_daemon patroni-node2 patroni "$dir/node2.yml"
  if ! wait_healthy 90; then
    tail -30 "$dir/patroni-node2.log" >&2
    exit 1
  fi
  url
}

url() {
  local password
  password=$(/usr/bin/python3 -c '
import sys, yaml
print(yaml.safe_load(open(sys.argv[1]))["postgresql"]["authentication"]["superuser"]["password"])' \
    "$dir/node1.yml")
  echo "postgresql://postgres:$password@127.0.0.1:$(sed -n 's/^node1_pg=//p' "$dir/env"),127.0.0.1:$(sed -n 's/^node2_pg=//p' "$dir/env")/postgres?target_session_attrs=read-write"
}

patronictl_() { as_pg patronictl -c "$dir/node1.yml" "$@"; }

kill_primary() {
  local name pid
  name=$(leader)
  [ -n "$name" ] || { echo "patroni_cluster: no leader" >&2; exit 1; }
  pid=$(head -1 "$dir/$name/data/postmaster.pid")
  kill -9 "$pid"
  echo "$name"
}

switchover() {
  local from to
  from=$(leader)
  to=$(members | awk '$2 == "sync_standby" {print $1}')
  [ -n "$from" ] && [ -n "$to" ] || { echo "patroni_cluster: no leader or standby" >&2; exit 1; }
  patronictl_ switchover --leader "$from" --candidate "$to" --force >"$dir/switchover.log" 2>&1 ||
    { cat "$dir/switchover.log" >&2; exit 1; }
  echo "$from"
}

sync_mode() {
  local on=true
  [ "$1" = on ] || on=false
  patronictl_ edit-config --force -s "synchronous_mode=$on" \
    -s "synchronous_mode_strict=$on" >/dev/null
  # Patroni applies it on its next loop: wait until the primary says so.
  local deadline=$((SECONDS + 30)) got port
  while ((SECONDS < deadline)); do
    for node in node1 node2; do
      port=$(sed -n "s/^${node}_pg=//p" "$dir/env")
      got=$(psql "$(url | sed "s/127.0.0.1:[0-9]*,127.0.0.1:[0-9]*/127.0.0.1:$port/")" \
              -qtAc "SELECT CASE WHEN pg_is_in_recovery() THEN 'standby' ELSE 'primary:' || current_setting('synchronous_standby_names') END" 2>/dev/null || true)
      case "$got" in
        primary:*)
          if [ "$on" = true ] && [ "$got" != "primary:" ]; then return 0; fi
          if [ "$on" = false ] && [ "$got" = "primary:" ]; then return 0; fi
          ;;
      esac
    done
    sleep 0.3
  done
  echo "patroni_cluster: synchronous replication did not turn $1" >&2
  exit 1
}

# Sends $1 to the pids in the files named after it, waits up to 20 s for
# them to exit, then SIGKILLs what is left.
stop_pids() {
  local signal=$1 file pid pids=()
  shift
  for file in "$@"; do
    [ -f "$file" ] || continue
    pid=$(cat "$file")
    kill "-$signal" "$pid" 2>/dev/null && pids+=("$pid")
  done
  for _ in $(seq 1 200); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && return 0
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}

stop() {
  [ -d "$dir" ] || return 0
  # Patroni stops its PostgreSQL on SIGTERM; a postmaster left behind (its
  # Patroni killed) is stopped through its own pid file.
  stop_pids TERM "$dir/patroni-node1.pid" "$dir/patroni-node2.pid"
  local left=()
  for node in node1 node2; do
    if [ -f "$dir/$node/data/postmaster.pid" ]; then
      head -1 "$dir/$node/data/postmaster.pid" >"$dir/$node.postmaster.pid"
      left+=("$dir/$node.postmaster.pid")
    fi
  done
  ((${#left[@]} == 0)) || stop_pids QUIT "${left[@]}"
  stop_pids TERM "$dir/etcd.pid"
  # PLACEMENT_FAILOVER_LOGS=FOLDER keeps the daemons' logs there.
  if [ -n "${PLACEMENT_FAILOVER_LOGS:-}" ]; then
    mkdir -p "$PLACEMENT_FAILOVER_LOGS"
    cp "$dir"/*.log "$PLACEMENT_FAILOVER_LOGS"/ 2>/dev/null || true
  fi
  rm -rf "$dir"
}

cmd=${1:?usage: patroni_cluster.sh check|start|wait-healthy|leader|kill-primary|switchover|sync|stop DIR}
[ "$cmd" = check ] && { check; exit 0; }
dir=${2:?usage: patroni_cluster.sh $cmd DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
case "$cmd" in
  start) start ;;
  url) url ;;
  wait-healthy) wait_healthy "${3:-60}" ;;
  leader) leader ;;
  wait-new-leader) wait_new_leader "${3:?old leader}" "${4:-60}" ;;
  kill-primary) kill_primary ;;
  switchover) switchover ;;
  failover-log)
    grep -hE 'crashed|Failing over|Request failed|maximum replication lag|Member .* is |failover' \
      "$dir"/patroni-node*.log | tail -20
    ;;
  sync) sync_mode "${3:?on or off}" ;;
  stop) stop ;;
  *)
    echo "patroni_cluster: unknown command $cmd" >&2
    exit 2
    ;;
esac
