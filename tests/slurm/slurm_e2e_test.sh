#!/usr/bin/env bash
# The Slurm plugin (clients/slurm/) against a real Slurm 22.05: a private
# munged, slurmctld and two slurmd (one node per pool, typed fake GPUs on
# character devices), a placementd on its own database, everything under one
# temp folder on free loopback ports, every process stopped by PID at exit.
#
#   slurm_e2e_test.sh PLACECTL PLACEMENTD PLACEMENT_AGENT SOURCE_DIR
#
# Needs root (munged runs as the munge user, slurmd as root), mknod, the
# packages scripts/install-test-deps installs, and PLACEMENT_TEST_DATABASE_URL.
# Where it cannot run it exits 77 (ctest SKIP_RETURN_CODE) saying why.
set -uo pipefail

placectl=${1:?usage: slurm_e2e_test.sh PLACECTL PLACEMENTD PLACEMENT_AGENT SOURCE_DIR}
placementd=${2:?}
agent=${3:?}
source_dir=${4:?}
export LC_ALL=C

skip() { echo "SKIPPED: $*"; exit 77; }
fail() {
  echo "FAILED: $*"
  for log in slurmctld.log slurmd-a100-node.log slurmd-l40s-node.log placementd.log; do
    [ -f "$work/$log" ] && { echo "--- $log (tail)"; tail -25 "$work/$log"; }
  done
  exit 1
}
check() {  # check DESCRIPTION COMMAND...: runs it, fails the test if it fails
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else fail "$what"; fi
}

# ---- can this machine run it? ------------------------------------------
[ "$(id -u)" = 0 ] || skip "needs root: munged runs as the munge user and slurmd as root"
for tool in slurmctld slurmd munged sbatch scontrol squeue scancel sinfo setpriv mknod timeout psql python3 openssl; do
  command -v "$tool" >/dev/null 2>&1 ||
    skip "$tool is not installed (scripts/install-test-deps installs the Slurm packages)"
done
plugin_dir=$(dirname "$(find /usr/lib -name job_submit_lua.so -path '*slurm*' 2>/dev/null | head -1)")
[ -f "$plugin_dir/job_submit_lua.so" ] || skip "job_submit_lua.so not found (slurm-wlm-basic-plugins)"
[ -n "$(find /usr/lib -path '*lua/5.1/cjson.so' 2>/dev/null | head -1)" ] ||
  skip "lua-cjson for Lua 5.1 is not installed"
id munge >/dev/null 2>&1 || skip "no munge user (the munge package makes it)"
[ -n "${PLACEMENT_TEST_DATABASE_URL:-}" ] ||
  fail "PLACEMENT_TEST_DATABASE_URL is not set (scripts/test sets it)"

work=$(mktemp -d /tmp/placement-slurm.XXXXXX)
chmod 755 "$work"
mkdir -p "$work/dev"
mknod "$work/dev/probe" c 1 3 2>/dev/null ||
  { rm -rf "$work"; skip "mknod is not permitted here (fake GPUs need character devices)"; }
rm -f "$work/dev/probe"

# ---- cleanup: every process this test started, by PID ------------------
pids=()
database=""
cleanup() {
  if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ]; then
    # Jobs first, while the daemons can still end them.
    timeout 10 scancel --quiet --full --signal=KILL --user=root >/dev/null 2>&1 || true
    for _ in $(seq 50); do
      [ -z "$(timeout 5 squeue -h -t running,completing 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  local pid
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid=${pids[i]}
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ -n "$database" ]; then
    psql "$PLACEMENT_TEST_DATABASE_URL" -qAtX -c "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local seconds=$1 what=$2; shift 2
  local end=$(( $(date +%s) + seconds ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || fail "$what (waited ${seconds}s)"
    sleep 0.2
  done
}

# ---- placementd on its own database, with tokens per role ----------------
database="slurm_e2e_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
psql "$PLACEMENT_TEST_DATABASE_URL" -qAtX -v ON_ERROR_STOP=1 -c "CREATE DATABASE $database" >/dev/null ||
  fail "cannot create a database on PLACEMENT_TEST_DATABASE_URL"
db_url=$(python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/" + sys.argv[2])))' \
  "$PLACEMENT_TEST_DATABASE_URL" "$database")
sql() { psql "$db_url" -qAtX -v ON_ERROR_STOP=1 -c "$1"; }
"$placementd" migrate up --database_url "$db_url" >"$work/migrate.log" 2>&1 || fail "migrate up"
for role in admin planner agent; do
  "$placementd" tokens create --role "$role" --name "slurm-e2e-$role" --database_url "$db_url" \
    >"$work/$role.token" 2>"$work/tokens.log" || fail "tokens create --role $role"
  chmod 600 "$work/$role.token"
done

start_placementd() {
  rm -f "$work/placementd.ports"
  "$placementd" --database_url "$db_url" --listen 127.0.0.1:0 --metrics_listen 127.0.0.1:0 \
    --port_file "$work/placementd.ports" >>"$work/placementd.log" 2>&1 &
  placementd_pid=$!
  pids+=("$placementd_pid")
  wait_for 30 "placementd writes its ports" test -s "$work/placementd.ports"
  placementd_port=$(awk "{ print \$1; exit }" "$work/placementd.ports")
  server="127.0.0.1:$placementd_port"
  wait_for 30 "placementd answers" admin skus
}
admin() { "$placectl" --server "$server" --token_file "$work/admin.token" "$@"; }
start_placementd

# Two training pools; the label names each pool's partition. At 1.90 an
# hour the L40S is dear enough that the 8B full fine-tune, BORDERLINE there
# (a 78% chance of running out of memory), is not worth trying on it first,
# so the two jobs below land on two partitions.
admin pools create --name a100-train --sku A100-SXM4-80GB --nodes 1 --gpus_per_node 8 \
  --fabric nvlink --purpose training --rate 2.50 --labels slurm-partition=a100 >/dev/null ||
  fail "pools create a100-train"
admin pools create --name l40s-train --sku L40S-PCIE-48GB --nodes 1 --gpus_per_node 8 \
  --fabric pcie --purpose training --rate 1.90 --labels slurm-partition=l40s >/dev/null ||
  fail "pools create l40s-train"

# ---- a second placementd on the same database, mutual TLS only --------------
mkdir -p "$work/tls"
(
  set -e
  cd "$work/tls"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj '/CN=slurm-e2e-ca' \
    -keyout ca.key -out ca.pem 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >san.ext
  for name in server slurmctld; do
    openssl req -newkey rsa:2048 -nodes -subj "/CN=$name" -keyout $name.key -out $name.csr 2>/dev/null
    openssl x509 -req -in $name.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
      -extfile san.ext -out $name.pem 2>/dev/null
  done
  chmod 600 ./*.key
) || fail "openssl: the test certificates"
"$placementd" --database_url "$db_url" --listen 127.0.0.1:0 --metrics_listen 127.0.0.1:0 \
  --tls_cert "$work/tls/server.pem" --tls_key "$work/tls/server.key" \
  --tls_client_ca "$work/tls/ca.pem" --port_file "$work/placementd-tls.ports" \
  >>"$work/placementd-tls.log" 2>&1 &
pids+=($!)
wait_for 30 "the TLS placementd writes its ports" test -s "$work/placementd-tls.ports"
tls_server="127.0.0.1:$(awk "{ print \$1; exit }" "$work/placementd-tls.ports")"
tls_flags=(--ca_file "$work/tls/ca.pem" --client_cert "$work/tls/slurmctld.pem" --client_key "$work/tls/slurmctld.key")
wait_for 30 "the TLS placementd answers" "$placectl" --server "$tls_server" \
  --token_file "$work/admin.token" "${tls_flags[@]}" skus
# The same through placectl's environment.
check "placectl takes TLS from PLACEMENT_CA_FILE, PLACEMENT_CLIENT_CERT, PLACEMENT_CLIENT_KEY" \
  env PLACEMENT_CA_FILE="$work/tls/ca.pem" PLACEMENT_CLIENT_CERT="$work/tls/slurmctld.pem" \
  PLACEMENT_CLIENT_KEY="$work/tls/slurmctld.key" \
  "$placectl" --server "$tls_server" --token_file "$work/admin.token" skus

# Recipes, each with an explicit GPU count.
mkdir -p "$work/recipes" "$work/out"
chmod 755 "$work/recipes" "$work/out"
cat >"$work/recipes/full-8b.yaml" <<'EOF'
recipe:
  model: Llama-3.1-8B
  method: full
  sequence_length: 4096
  micro_batch_size: 4
  precision: bf16
  optimizer: adamw
  activation_checkpointing: true
  flash_attention: true
  gpu_count: 8
  parallelism: fsdp
total_steps: 2000
team: ml-platform
EOF
cat >"$work/recipes/lora-8b.yaml" <<'EOF'
recipe:
  model: Llama-3.1-8B
  method: lora
  lora_rank: 16
  target_modules: [q, k, v, o]
  sequence_length: 2048
  micro_batch_size: 2
  precision: bf16
  optimizer: adamw
  activation_checkpointing: true
  flash_attention: true
  gpu_count: 1
  parallelism: single
total_steps: 10000
team: ml-platform
EOF
cat >"$work/recipes/full-70b.yaml" <<'EOF'
recipe:
  model: Llama-3.1-70B
  method: full
  sequence_length: 4096
  activation_checkpointing: true
  flash_attention: true
  fp32_master_weights: true
  gpu_count: 8
  parallelism: fsdp
total_steps: 1000
team: ml-platform
EOF

# ---- munged -------------------------------------------------------------
mkdir -p "$work/munge"
chown munge: "$work/munge"
chmod 0711 "$work/munge"  # 0700 is refused: clients need to reach the socket
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chown munge: "$work/munge/munge.key"
chmod 0400 "$work/munge/munge.key"
munge_socket="$work/munge/munge.socket"
setpriv --reuid=munge --regid=munge --clear-groups munged --foreground \
  --socket="$munge_socket" --key-file="$work/munge/munge.key" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" \
  --seed-file="$work/munge/munged.seed" >"$work/munged.out" 2>&1 &
pids+=($!)
wait_for 10 "munged listens" test -S "$munge_socket"

# ---- slurm.conf, gres.conf, the plugin ------------------------------------
ctld_port=$(free_port)
a100_port=$(free_port)
l40s_port=$(free_port)
mkdir -p "$work/etc" "$work/state" "$work/spool/a100-node" "$work/spool/l40s-node"
for i in 0 1 2 3 4 5 6 7; do
  mknod "$work/dev/a100-gpu$i" c 1 3
  mknod "$work/dev/l40s-gpu$i" c 1 3
done
export SLURM_CONF="$work/etc/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=placement-e2e
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool/%n
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd-%n.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
GresTypes=gpu
JobSubmitPlugins=lua
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=600
DebugFlags=NO_CONF_HASH
NodeName=a100-node NodeHostname=localhost NodeAddr=127.0.0.1 Port=$a100_port CPUs=8 RealMemory=4000 Gres=gpu:a100:8 State=UNKNOWN
NodeName=l40s-node NodeHostname=localhost NodeAddr=127.0.0.1 Port=$l40s_port CPUs=8 RealMemory=4000 Gres=gpu:l40s:8 State=UNKNOWN
PartitionName=batch Nodes=a100-node,l40s-node Default=YES State=UP
PartitionName=a100 Nodes=a100-node State=UP
PartitionName=l40s Nodes=l40s-node State=UP
EOF
cat >"$work/etc/gres.conf" <<EOF
AutoDetect=off
NodeName=a100-node Name=gpu Type=a100 File=$work/dev/a100-gpu[0-7]
NodeName=l40s-node Name=gpu Type=l40s File=$work/dev/l40s-gpu[0-7]
EOF
cp "$source_dir/clients/slurm/job_submit.lua" "$source_dir/clients/slurm/placement_submit.lua" "$work/etc/"

# The plugin's settings; rewritten for the fault cases below. slurmctld
# reloads job_submit.lua when its mtime moves forward, and the settings with it.
conf_generation=$(date +%s)
hook_extra=""  # more settings lines, for the TLS and breaker cases
hook_settings() {  # hook_settings SERVER [PLACECTL] [REJECT]
  cat >"$work/etc/placement_submit.conf" <<EOF
# written by slurm_e2e_test.sh
placectl = ${2:-$placectl}
server = $1
token_file = $work/planner.token
reject_no_candidate = ${3:-false}
recipe_roots = $work/recipes
recipe_max_bytes = 4096
$hook_extra
EOF
  conf_generation=$((conf_generation + 1))
  touch -d "@$conf_generation" "$work/etc/job_submit.lua"
}
hook_settings "$server"

# ---- slurmctld and one slurmd per pool ------------------------------------
slurmctld -D -c -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
wait_for 30 "slurmctld answers" scontrol ping
for node in a100-node l40s-node; do
  slurmd -D -N "$node" -f "$SLURM_CONF" >"$work/slurmd-$node.out" 2>&1 &
  pids+=($!)
done
node_idle() { [ "$(sinfo -h -N -n "$1" -o %t | head -1)" = idle ]; }
wait_for 60 "a100-node is idle" node_idle a100-node
wait_for 60 "l40s-node is idle" node_idle l40s-node
echo "ok: slurmctld and two slurmd up (nodes idle with 8 typed fake GPUs each)"

# ---- helpers ------------------------------------------------------------
# The job script: records the environment the job ran with; with a recipe
# argument it runs the benchmark agent around a fake training command.
cat >"$work/fake_train.sh" <<'EOF'
#!/bin/sh
for step in 0 1 2 3 4 5 6 7 8 9; do
  echo "{\"step\": $step, \"step_time_s\": 0.5, \"tokens\": 4096, \"memory_allocated_gb\": 30.5}"
done
EOF
cat >"$work/job.sh" <<EOF
#!/bin/sh
env | grep -E '^(PLACEMENT_|SLURM_JOB_PARTITION=|CUDA_VISIBLE_DEVICES=|SLURM_JOB_NUM_NODES=)' | sort >"$work/out/\$SLURM_JOB_ID.env"
if [ -n "\${1:-}" ]; then
  exec "$agent" --server "$server" --token_file "$work/agent.token" --spool_dir "$work/agent-spool" \\
    run --sku "\$2" --recipe "\$1" -- "$work/fake_train.sh"
fi
EOF
chmod 755 "$work/fake_train.sh" "$work/job.sh"

submit_ms=0
job_id=""
fillers=()
submit() {  # submit SBATCH_ARGS...: job_id = the job, submit_ms = sbatch's wall time
  local start out
  start=$(now_ms)
  out=$(sbatch --parsable --output="$work/out/%j.out" "$@" 2>"$work/sbatch.err") || return 1
  submit_ms=$(( $(now_ms) - start ))
  job_id=${out%%;*}
}
job_field() {  # job_field JOB_ID FIELD: from scontrol show job
  scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}
job_done() {
  case "$(job_field "$1" JobState)" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL) return 0;; esac
  return 1
}
env_of() { sed -n "s/^$2=//p" "$work/out/$1.env" 2>/dev/null; }
plans_recorded() { sql "SELECT count(*) FROM placements"; }
plan_json() {
  "$placectl" --server "$server" --token_file "$work/planner.token" plan --json --recipe "$1"
}

# ---- placed: full fine-tune on the A100 partition, LoRA on the L40S ---------
full_plan=$(plan_json "$work/recipes/full-8b.yaml") || fail "plan for the full fine-tune"
full_pool=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["candidates"][0]["pool"])' <<<"$full_plan")
full_gpus=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["candidates"][0]["gpu_count"])' <<<"$full_plan")
lora_plan=$(plan_json "$work/recipes/lora-8b.yaml") || fail "plan for the LoRA"
lora_pool=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["candidates"][0]["pool"])' <<<"$lora_plan")
lora_gpus=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["candidates"][0]["gpu_count"])' <<<"$lora_plan")
check "the planner puts the 8B full fine-tune on a100-train ($full_pool x$full_gpus)" [ "$full_pool" = a100-train ]
check "the planner puts the 8B LoRA on l40s-train ($lora_pool x$lora_gpus)" [ "$lora_pool" = l40s-train ]

submit --comment="placement:recipe=$work/recipes/full-8b.yaml" "$work/job.sh" ||
  fail "sbatch of the full fine-tune: $(cat "$work/sbatch.err")"
full_job=$job_id
submit --comment="placement:recipe=$work/recipes/lora-8b.yaml" "$work/job.sh" \
  "$work/recipes/lora-8b.yaml" L40S-PCIE-48GB || fail "sbatch of the LoRA: $(cat "$work/sbatch.err")"
lora_job=$job_id
wait_for 90 "the full fine-tune job ends" job_done "$full_job"
wait_for 90 "the LoRA job ends" job_done "$lora_job"

check "full fine-tune job $full_job is in partition a100" [ "$(job_field "$full_job" Partition)" = a100 ]
check "  with gres:gpu:$full_gpus per node" [ "$(job_field "$full_job" TresPerNode)" = "gres:gpu:$full_gpus" ]
check "  on 1 node" [ "$(job_field "$full_job" NumNodes)" = 1 ]
check "  and saw $full_gpus GPUs" [ "$(env_of "$full_job" CUDA_VISIBLE_DEVICES | tr ',' '\n' | wc -l)" = "$full_gpus" ]
check "LoRA job $lora_job is in partition l40s" [ "$(job_field "$lora_job" Partition)" = l40s ]
check "  with gres:gpu:$lora_gpus per node" [ "$(job_field "$lora_job" TresPerNode)" = "gres:gpu:$lora_gpus" ]
check "  and saw $lora_gpus GPU(s)" [ "$(env_of "$lora_job" CUDA_VISIBLE_DEVICES | tr ',' '\n' | wc -l)" = "$lora_gpus" ]
for job in "$full_job" "$lora_job"; do
  plan_id=$(env_of "$job" PLACEMENT_PLAN_ID)
  check "job $job has PLACEMENT_PLAN_ID ($plan_id)" [ -n "$plan_id" ]
  check "  the same plan id in its admin comment" \
    grep -q "placement:plan=$plan_id" <<<"$(scontrol show job "$job")"
  check "  placectl plans get finds it" grep -q "^plan $plan_id " <<<"$(admin plans get "$plan_id")"
done
check "the full job's plan is for the A100 pool" \
  grep -q '"pool": "a100-train"' <<<"$(admin plans get "$(env_of "$full_job" PLACEMENT_PLAN_ID)" --json)"
check "the LoRA job ran with PLACEMENT_POOL=l40s-train" [ "$(env_of "$lora_job" PLACEMENT_POOL)" = l40s-train ]

# ---- the agent in the job closed the loop -----------------------------------
lora_plan_id=$(env_of "$lora_job" PLACEMENT_PLAN_ID)
check "the LoRA job's agent uploaded its run" grep -q "uploaded" "$work/out/$lora_job.out"
check "  the run carries the plan id and the pool" \
  [ "$(sql "SELECT count(*) FROM benchmark_runs WHERE plan_id = '$lora_plan_id' AND pool_name = 'l40s-train' AND outcome = 'SUCCEEDED'")" = 1 ]
measured() {
  plan_json "$work/recipes/lora-8b.yaml" | python3 -c '
import json, sys
c = [c for c in json.load(sys.stdin)["candidates"] if c["pool"] == "l40s-train"]
sys.exit(0 if c and c[0]["basis"] == "EVIDENCE_BASIS_MEASURED" else 1)'
}
wait_for 30 "the next plan for the LoRA recipe counts the run as MEASURED" measured
echo "ok: the next plan for the LoRA recipe is MEASURED on l40s-train"

# ---- pool state: a full partition reported, the wait in the plan --------------
# The L40S partition (the LoRA's cheapest pool) is filled: one job holding
# its 8 GPUs for up to a day, two more waiting behind it. The reporter reads
# scontrol and sinfo and reports each pool's partition with an agent's token.
for i in 1 2 3; do
  submit -p l40s --gres=gpu:8 --time=1-00:00:00 --wrap "sleep 3000" ||
    fail "sbatch of filler job $i: $(cat "$work/sbatch.err")"
  fillers+=("$job_id")
done
filler_state() { [ "$(job_field "${fillers[0]}" JobState)" = RUNNING ] &&
  [ "$(job_field "${fillers[1]}" JobState)" = PENDING ] &&
  [ "$(job_field "${fillers[2]}" JobState)" = PENDING ]; }
wait_for 30 "the first filler runs and two wait" filler_state
reporter() { "$placectl" --server "$server" --token_file "$work/agent.token" "$@"; }
report_out=$(reporter slurm report) || fail "placectl slurm report: $report_out"
echo "$report_out" | sed 's/^/    /'
check "the reporter reports the full L40S partition: 8 of 8 GPUs, 1 running, 2 waiting" \
  grep -q "pool l40s-train: 8 of 8 GPUs allocated, 1 running, 2 waiting (16 GPUs)" <<<"$report_out"
check "  and the free A100 partition" \
  grep -q "pool a100-train: 0 of 8 GPUs allocated, 0 running, 0 waiting" <<<"$report_out"
denied=$("$placectl" --server "$server" --token_file "$work/planner.token" slurm report 2>&1)
check "a planner's token may not report (PERMISSION_DENIED)" grep -q PERMISSION_DENIED <<<"$denied"
state_json=$(admin pools state l40s-train --json) || fail "pools state l40s-train"
check "  pools state shows its running and waiting jobs with their time limits" python3 -c '
import json, sys
s = json.loads(sys.argv[1])["state"]
assert len(s["running"]) == 1 and len(s["pending"]) == 2, s
assert all(j["gpus"] == 8 and j["time_limit"] == "86400s" for j in s["running"] + s["pending"]), s
' "$state_json"

# No deadline: the cheapest pool is still first, its wait shown.
lora_plan=$(plan_json "$work/recipes/lora-8b.yaml") || fail "plan for the LoRA with pool state"
timing_of() {  # timing_of PLAN_JSON POOL FIELD: seconds, or the status
  python3 -c '
import json, sys
plan, pool, field = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
c = [c for c in plan["candidates"] if c["pool"] == pool][0]["timing"]
if field == "status": print(c["status"]); sys.exit()
v = c
for part in field.split("."): v = v[part]
print(float(v.rstrip("s")))' "$@"
}
check "without a deadline the busy l40s-train is still first" \
  [ "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["candidates"][0]["pool"])' <<<"$lora_plan")" = l40s-train ]
check "  with its wait known" [ "$(timing_of "$lora_plan" l40s-train status)" = START_STATUS_KNOWN ]
busy_p50=$(timing_of "$lora_plan" l40s-train expected_start)
check "  and shown: start p50 in ${busy_p50}s, behind the running job and two waiting" \
  python3 -c "import sys; sys.exit(0 if $busy_p50 > 3600 else 1)"
check "  while a100-train starts at once" [ "$(timing_of "$lora_plan" a100-train start_band.high)" = 0.0 ]
lora_text=$("$placectl" --server "$server" --token_file "$work/planner.token" plan --recipe "$work/recipes/lora-8b.yaml") ||
  fail "placectl plan (text) with pool state"
check "placectl plan shows the start and finish columns" \
  grep -q "START P50 \[P90\]  *FINISH P50 \[P90\]" <<<"$lora_text"
check "  and each candidate's wait" grep -q "wait: *start p50 in" <<<"$lora_text"
grep -E "^(RANK|[ ]*1 )|time:|wait:" <<<"$lora_text" | head -6 | cut -c1-220 | sed 's/^/    /'

# A deadline the busy pool cannot meet (between the two pools' finish at
# p90): the free pool first, and the busy one says why.
free_p90=$(timing_of "$lora_plan" a100-train finish_band.high)
busy_p90=$(timing_of "$lora_plan" l40s-train finish_band.high)
check "the free pool finishes first at p90 (${free_p90}s < ${busy_p90}s)" \
  python3 -c "import sys; sys.exit(0 if $free_p90 < $busy_p90 else 1)"
deadline_s=$(python3 -c "print(int(($free_p90 + $busy_p90) / 2))")
deadline_plan=$("$placectl" --server "$server" --token_file "$work/planner.token" plan --json \
  --recipe "$work/recipes/lora-8b.yaml" --objective deadline --deadline "${deadline_s}s") ||
  fail "plan with a deadline of ${deadline_s}s"
check "with a deadline of ${deadline_s}s the free a100-train is first" \
  [ "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["candidates"][0]["pool"])' <<<"$deadline_plan")" = a100-train ]
check "  the plan says the deadline is met there" python3 -c '
import json, sys
d = json.loads(sys.argv[1])["deadline"]
assert d["met"] and d["pool"] == "a100-train" and d["candidates_meeting"] == 1, d
print("    " + d["reason"])' "$deadline_plan"
check "  and l40s-train says why not" python3 -c '
import json, sys
c = [c for c in json.loads(sys.argv[1])["candidates"] if c["pool"] == "l40s-train"][0]
w = [w for w in c["warnings"] if w.startswith("deadline:")]
assert w and "after the deadline" in w[0], c["warnings"]
print("    " + w[0])' "$deadline_plan"
scancel --quiet "${fillers[@]}" >/dev/null 2>&1 || true

# ---- TLS: placed through the mutual-TLS placementd ----------------------------
unchanged_expected=0  # the jobs below that are left unchanged, each one log line
hook_extra="ca_file = $work/tls/ca.pem
client_cert = $work/tls/slurmctld.pem
client_key = $work/tls/slurmctld.key"
hook_settings "$tls_server"
submit --hold --comment="placement:recipe=$work/recipes/full-8b.yaml" "$work/job.sh" ||
  fail "sbatch through the TLS placementd: $(cat "$work/sbatch.err")"
check "over mutual TLS: job $job_id is placed in partition a100" [ "$(job_field "$job_id" Partition)" = a100 ]
check "  with a plan id in its admin comment" \
  grep -q "placement:plan=" <<<"$(job_field "$job_id" AdminComment)"
hook_extra="ca_file = $work/tls/ca.pem"
hook_settings "$tls_server"
submit --hold --comment="placement:recipe=$work/recipes/full-8b.yaml" "$work/job.sh" ||
  fail "sbatch through the TLS placementd without a client certificate"
check "without a client certificate: left on the default partition" \
  [ "$(job_field "$job_id" Partition)" = batch ]
unchanged_expected=$((unchanged_expected + 1))
hook_extra=""
hook_settings "$server"

# ---- recipes: regular files under recipe_roots, at most recipe_max_bytes -------
refused_recipe() {  # refused_recipe WHAT PATH LOG_PATTERN
  submit --hold --comment="placement:recipe=$2" "$work/job.sh" || fail "$1: sbatch refused"
  check "$1: left on the default partition" [ "$(job_field "$job_id" Partition)" = batch ]
  check "  logged: $3" grep -q "placement: .*$3" "$work/slurmctld.log"
  unchanged_expected=$((unchanged_expected + 1))
}
refused_recipe "/dev/zero as a recipe" /dev/zero "recipe path '/dev/zero' refused (not under recipe_roots"
ln -s "$work/etc/slurm.conf" "$work/recipes/escape.yaml"
refused_recipe "a symlink out of recipe_roots" "$work/recipes/escape.yaml" "outside the recipe folders"
{ cat "$work/recipes/lora-8b.yaml"; printf '# %05000d\n' 0; } >"$work/recipes/big.yaml"
refused_recipe "a recipe over recipe_max_bytes" "$work/recipes/big.yaml" "4096-byte limit"
mkfifo "$work/recipes/fifo.yaml"
refused_recipe "a FIFO under recipe_roots" "$work/recipes/fifo.yaml" "not a regular file"

# ---- left alone: -p, no recipe ------------------------------------------------
before=$(plans_recorded)
submit -p l40s --comment="placement:recipe=$work/recipes/full-8b.yaml" --hold "$work/job.sh" ||
  fail "sbatch -p l40s"
own_job=$job_id
submit --hold "$work/job.sh" || fail "plain sbatch"
plain_job=$job_id
check "a job with -p l40s stays in l40s" [ "$(job_field "$own_job" Partition)" = l40s ]
check "  without a GPU request added" [ "$(job_field "$own_job" TresPerNode)" = "" ]
check "a job without a recipe stays in the default partition" [ "$(job_field "$plain_job" Partition)" = batch ]
check "  without an admin comment" [ "$(job_field "$plain_job" AdminComment)" = "" ]
check "no plan was recorded for either" [ "$(plans_recorded)" = "$before" ]

# ---- no candidate: accepted unchanged; rejected when the admin asks -----------
submit --hold --comment="placement:recipe=$work/recipes/full-70b.yaml" "$work/job.sh" ||
  fail "sbatch of a recipe no pool can take"
none_job=$job_id
check "a recipe no pool can take is accepted unchanged (default partition)" \
  [ "$(job_field "$none_job" Partition)" = batch ]
hook_settings "$server" "$placectl" true
if submit --hold --comment="placement:recipe=$work/recipes/full-70b.yaml" "$work/job.sh"; then
  fail "with reject_no_candidate the job should be refused"
fi
check "with reject_no_candidate = true it is refused with the plan's reasons" \
  grep -q "found no pool" "$work/sbatch.err"
head -2 "$work/sbatch.err"
hook_settings "$server"

# ---- p95 of the hook over 50 submissions --------------------------------------
placed=()
plain=()
for i in $(seq 50); do
  submit --hold --comment="placement:recipe=$work/recipes/lora-8b.yaml" "$work/job.sh" ||
    fail "placed submission $i"
  placed+=("$submit_ms")
  submit --hold "$work/job.sh" || fail "plain submission $i"
  plain+=("$submit_ms")
done
percentiles() { sort -n | awk '{ v[NR] = $1 } END { printf "p50 %d ms, p95 %d ms, max %d ms", v[int(NR * 0.5 + 0.5)], v[int(NR * 0.95 + 0.5)], v[NR] }'; }
placed_stats=$(printf '%s\n' "${placed[@]}" | percentiles)
plain_stats=$(printf '%s\n' "${plain[@]}" | percentiles)
echo "sbatch with the hook placing the job (50): $placed_stats"
echo "sbatch of a job the hook leaves alone (50): $plain_stats"
hook_log_lines=$(grep -c "placement: plan .*: partition l40s" "$work/slurmctld.log")
check "every placed LoRA submission logged its placement ($hook_log_lines lines)" [ "$hook_log_lines" = 51 ]
scancel --quiet --user=root --state=PENDING >/dev/null 2>&1 || true

# ---- fail open: server down, hung, garbage --------------------------------------
fail_open() {  # fail_open WHAT: a placed-style submission is accepted unchanged within 1 s
  local job
  submit --hold --comment="placement:recipe=$work/recipes/full-8b.yaml" "$work/job.sh" ||
    fail "$1: sbatch refused: $(cat "$work/sbatch.err")"
  job=$job_id
  check "$1: accepted on the default partition in ${submit_ms} ms" \
    [ "$(job_field "$job" Partition)" = batch ]
  check "$1: within 1 s" [ "$submit_ms" -lt 1000 ]
  check "$1: no admin comment, no GPU request" \
    [ "$(job_field "$job" AdminComment)$(job_field "$job" TresPerNode)" = "" ]
}
kill -TERM "$placementd_pid"; wait "$placementd_pid" 2>/dev/null
fail_open "placementd stopped"

python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(16)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
held = []
while True:
    held.append(s.accept()[0])  # accepts, never answers
    open(sys.argv[1] + ".accepted", "w").write(str(len(held)))
' "$work/hung.port" &
pids+=($!)
wait_for 10 "the hung server listens" test -s "$work/hung.port"
hook_settings "127.0.0.1:$(cat "$work/hung.port")"
fail_open "a server that accepts and never answers"

cat >"$work/garbage-placectl" <<'EOF'
#!/bin/sh
echo '{"plan_id": "not-a-plan", "candidates": [{"pool": 7'
echo 'garbage'
EOF
chmod 755 "$work/garbage-placectl"
hook_settings "$server" "$work/garbage-placectl"
fail_open "garbage output"

# A client that hangs itself (past its own --rpc_timeout): killed at the
# hook's deadline.
printf '#!/bin/sh\nsleep 30\n' >"$work/hanging-placectl"
chmod 755 "$work/hanging-placectl"
hook_settings "$server" "$work/hanging-placectl"
fail_open "a client that hangs"
check "  it was killed at the deadline" grep -q "placement: no answer from .* within 0.5 s (exit 137)" "$work/slurmctld.log"

# ---- the circuit breaker: a blackholed server costs two calls, not every one ---
hook_extra="breaker_failures = 2
breaker_open_s = 120"
hook_settings "127.0.0.1:$(cat "$work/hung.port")"
fail_open "breaker: first call to the hung server"
fail_open "breaker: second call to the hung server"
check "  the breaker opened" grep -q "placement: 2 calls in a row without an answer .* calls skipped for 120 s" "$work/slurmctld.log"
sleep 0.5  # the hung server records the connections of the calls above
accepted=$(cat "$work/hung.port.accepted")
fail_open "breaker: while open"
check "  no connection was made while it was open" [ "$(cat "$work/hung.port.accepted")" = "$accepted" ]
check "  the skipped call was logged" grep -q "placement: no call: .* (breaker open for .*job left unchanged" "$work/slurmctld.log"
echo "breaker: the skipped submission took ${submit_ms} ms"
unchanged_expected=$((unchanged_expected + 3))
hook_extra=""

# One line per job left unchanged: the TLS and recipe cases, the recipe with
# no candidate, the four faults, the breaker's three.
unchanged_expected=$((unchanged_expected + 5))
fail_log_lines=$(grep -c "placement: .*job left unchanged" "$work/slurmctld.log")
echo "slurmctld log, the lines of jobs left unchanged:"
grep "placement: .*job left unchanged" "$work/slurmctld.log" | sed 's/^/    /'
check "one log line for each job left unchanged ($unchanged_expected)" [ "$fail_log_lines" = "$unchanged_expected" ]

echo "PASSED (hook p95: placed $placed_stats; plain $plain_stats)"
