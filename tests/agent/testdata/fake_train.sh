#!/bin/sh
# A stand-in for a training command: prints one step record per step (the
# protocol of docs/AGENT.md) and fails the way real jobs fail.
#
#   FAKE_STEPS=N          steps of a successful attempt (default 5)
#   FAKE_OOM_ATTEMPTS=K   attempts 1..K print 3 steps, then die of CUDA OOM
#   FAKE_OOM_AT_START_FROM=K  attempts K, K+1, ... die of CUDA OOM before
#                         their first step
#   FAKE_NCCL=1           every attempt dies of an NCCL watchdog timeout
#   FAKE_PAUSE_AT=S       after step S-1, touch $FAKE_MIDWAY and wait (at most
#   FAKE_MIDWAY=FILE      30 s) until $FAKE_GO exists
#   FAKE_GO=FILE
#   FAKE_STEP_SLEEP=SEC   pause per step (default 0.02)
#   FAKE_CHECKPOINT=1     attempt K resumes at step 2(K-1); an OOM attempt
#                         saves a checkpoint after its second step (printing
#                         a malformed and a backwards checkpoint record too)
# The agent sets PLACEMENT_ATTEMPT (1, 2, ...).
steps=${FAKE_STEPS:-5}
sleep_s=${FAKE_STEP_SLEEP:-0.02}
attempt=${PLACEMENT_ATTEMPT:-1}
first=0
if [ -n "${FAKE_CHECKPOINT:-}" ]; then first=$((2 * (attempt - 1))); fi
record() {
  echo "{\"step\": $1, \"step_time_s\": 0.015, \"tokens\": 4096, \"memory_allocated_gb\": $2, \"loss\": 2.5}"
}
echo "loading Llama-3.1-8B (attempt ${PLACEMENT_ATTEMPT:-?}, run ${PLACEMENT_RUN_ID:-?})"
oom() {
  echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 44.39 GiB of which 1.12 GiB is free." >&2
  exit 1
}
if [ -n "${FAKE_OOM_AT_START_FROM:-}" ] && [ "$attempt" -ge "$FAKE_OOM_AT_START_FROM" ]; then
  oom
fi
if [ "$attempt" -le "${FAKE_OOM_ATTEMPTS:-0}" ]; then
  for i in $first $((first + 1)) $((first + 2)); do
    record $i 44.5
    if [ -n "${FAKE_CHECKPOINT:-}" ] && [ "$i" -eq $((first + 1)) ]; then
      echo "{\"checkpoint_step\": $((i + 1))}"
      echo "{\"checkpoint_step\": \"soon\"}"
      echo "{\"checkpoint_step\": 1}"
    fi
    sleep "$sleep_s"
  done
  oom
fi
if [ -n "${FAKE_NCCL:-}" ]; then
  record 0 20.0
  echo "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600012 milliseconds before timing out." >&2
  exit 134
fi
i=$first
while [ "$i" -lt "$steps" ]; do
  if [ -n "${FAKE_PAUSE_AT:-}" ] && [ "$i" -eq "$FAKE_PAUSE_AT" ]; then
    touch "$FAKE_MIDWAY"
    waited=0
    while [ ! -e "$FAKE_GO" ] && [ "$waited" -lt 300 ]; do
      sleep 0.1
      waited=$((waited + 1))
    done
  fi
  record "$i" 31.25
  i=$((i + 1))
  sleep "$sleep_s"
done
echo "training done"
