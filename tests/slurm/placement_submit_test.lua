-- The Slurm plugin's decisions without Slurm: clients/slurm/placement_submit.lua
-- in plain Lua 5.1 (the version slurmctld links), the `slurm` table and the
-- job descriptor stood in for, placectl replaced by a script that answers
-- what each case puts in its folder. Runs where the Slurm end-to-end test
-- cannot (no root, no mknod), and covers what it does not: jobs over several
-- nodes, unsafe recipe paths, recipe roots, TLS flags, the circuit breaker,
-- errors inside the hook.
--
--   lua5.1 placement_submit_test.lua SOURCE_DIR
-- Needs lua-cjson; exits 77 (skipped) without it.

local source_dir = assert(arg[1], "usage: lua5.1 placement_submit_test.lua SOURCE_DIR")
if not pcall(require, "cjson") then
  print("SKIPPED: lua-cjson for Lua 5.1 is not installed")
  os.exit(77)
end

local logged, user_msgs = {}, {}
slurm = {
  SUCCESS = 0, ERROR = -1,
  log_info = function(format, ...) logged[#logged + 1] = string.format(format, ...) end,
  user_msg = function(text) user_msgs[#user_msgs + 1] = text end,
}
package.path = source_dir .. "/clients/slurm/?.lua;" .. package.path
local placement = require("placement_submit")

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -m 700 " .. dir) == 0)

local function write(name, text)
  local file = assert(io.open(dir .. "/" .. name, "w"))
  file:write(text)
  file:close()
end

-- The stand-in placectl: prints plan.json / pools.json, exits with
-- plan.exit; sleeps first when the file `hang` exists; counts pools calls;
-- keeps its arguments and recipe environment in args.last; prints
-- plan.stderr to stderr when it exists.
write("placectl", [[#!/bin/sh
dir=$(dirname "$0")
echo "$* roots=$PLACEMENT_RECIPE_ROOTS max=$PLACEMENT_RECIPE_MAX_BYTES" >"$dir/args.last"
case " $* " in
  *" pools list "*) echo x >>"$dir/pools.calls"; cat "$dir/pools.json"; exit 0;;
esac
[ -e "$dir/hang" ] && sleep 30
[ -e "$dir/plan.stderr" ] && cat "$dir/plan.stderr" >&2
cat "$dir/plan.json"
exit "$(cat "$dir/plan.exit")"
]])
os.execute("chmod 755 " .. dir .. "/placectl")

local function settings(extra)
  write("placement_submit.conf", table.concat({
    "# test settings",
    "placectl = " .. dir .. "/placectl",
    "token_file =",
    "recipe_roots = " .. dir,
    extra or "",
  }, "\n"))
  placement.configure(dir .. "/placement_submit.conf")
end

local function pools_calls()
  local file = io.open(dir .. "/pools.calls", "r")
  if file == nil then return 0 end
  local n = 0
  for _ in file:lines() do n = n + 1 end
  file:close()
  return n
end

local function plan(json, exit_code)
  write("plan.json", json)
  write("plan.exit", tostring(exit_code or 0))
end

-- A job descriptor as slurmctld hands it over: a batch job, environment
-- table, no partition unless given.
local function job(comment, partition)
  return {comment = comment, partition = partition, script = "#!/bin/sh\n",
          environment = {}, min_nodes = 4294967294, max_nodes = 4294967294}
end

local failures = 0
local function expect(what, condition)
  if condition then
    print("ok: " .. what)
  else
    failures = failures + 1
    print("FAILED: " .. what)
    for _, line in ipairs(logged) do print("    log: " .. line) end
  end
end

local function submit(j)
  logged, user_msgs = {}, {}
  return placement.submit(j, {}, 1000)
end

write("pools.json", [[{"pools": [
  {"name": "a100-train", "gpus_per_node": 8, "labels": {"slurm-partition": "gpu-a100"}},
  {"name": "l40s-train", "gpus_per_node": 4, "labels": {}}
]}]])
local recipe = "placement:recipe=" .. dir .. "/job.yaml"
settings("pools_ttl_s = 300")

-- 16 GPUs on 8-GPU nodes: two nodes of 8; the partition from the label.
plan([[{"plan_id": "p-16", "candidates": [{"pool": "a100-train", "gpu_count": 16, "basis": "EVIDENCE_BASIS_MEASURED"}]}]])
local j = job("team x; " .. recipe .. ", more")
expect("placed job: SUCCESS", submit(j) == slurm.SUCCESS)
expect("partition from the pool's label", j.partition == "gpu-a100")
expect("8 GPUs per node", j.tres_per_node == "gres:gpu:8")
expect("over 2 nodes", j.min_nodes == 2 and j.max_nodes == 2)
expect("plan id in the admin comment", j.admin_comment == "placement:plan=p-16")
expect("plan id and pool in the environment",
       j.environment.PLACEMENT_PLAN_ID == "p-16" and j.environment.PLACEMENT_POOL == "a100-train")
expect("one log line", #logged == 1 and logged[1]:find("2 node%(s%) x 8 GPU%(s%)") ~= nil)

-- A pool without the label: its name is the partition; the pools are reused.
plan([[{"plan_id": "p-2", "candidates": [{"pool": "l40s-train", "gpu_count": 2}]}]])
j = job(recipe)
j.admin_comment = "site note"
submit(j)
expect("partition named after the pool", j.partition == "l40s-train")
expect("2 GPUs on one node", j.tres_per_node == "gres:gpu:2" and j.min_nodes == 1)
expect("an existing admin comment is kept", j.admin_comment == "site note placement:plan=p-2")
expect("the pools were read once for both jobs", pools_calls() == 1)

-- 6 GPUs on 4-GPU nodes: 3 on each of 2. 5 cannot be split evenly: left alone.
plan([[{"plan_id": "p-6", "candidates": [{"pool": "l40s-train", "gpu_count": 6}]}]])
j = job(recipe)
submit(j)
expect("6 GPUs on 4-GPU nodes: 2 nodes x 3", j.tres_per_node == "gres:gpu:3" and j.min_nodes == 2)
plan([[{"plan_id": "p-5", "candidates": [{"pool": "l40s-train", "gpu_count": 5}]}]])
j = job(recipe)
submit(j)
expect("uneven split: left alone", j.partition == nil and j.tres_per_node == nil)
expect("  and logged", #logged == 1 and logged[1]:find("do not split evenly") ~= nil)

-- Not opted in, or a partition of its own: no call at all.
os.execute("rm -f " .. dir .. "/plan.json")
j = job("just a comment")
expect("no recipe: SUCCESS, untouched, silent",
       submit(j) == slurm.SUCCESS and j.partition == nil and #logged == 0)
j = job(recipe, "debug")
expect("own partition: untouched, silent",
       submit(j) == slurm.SUCCESS and j.partition == "debug" and j.tres_per_node == nil and #logged == 0)

-- A path that would reach the shell unquoted is refused, no call made.
write("pools.calls", "")
j = job("placement:recipe=/tmp/x';touch${IFS}" .. dir .. "/owned;'")
submit(j)
expect("unsafe recipe path: untouched", j.partition == nil)
expect("  nothing ran", io.open(dir .. "/owned", "r") == nil)
j = job("placement:recipe=relative/job.yaml")
submit(j)
expect("relative recipe path: refused", j.partition == nil and logged[1]:find("refused") ~= nil)

-- No candidate: accepted unchanged, or refused with the reasons when asked.
plan([[{"plan_id": "p-none", "candidates": [], "rejections": [
  {"pool": "a100-train", "reason": "does not fit"}, {"pool": "l40s-train", "reason": "PCIe-only"}]}]], 3)
j = job(recipe)
expect("no candidate: SUCCESS", submit(j) == slurm.SUCCESS and j.partition == nil)
settings("reject_no_candidate = true")
j = job(recipe)
expect("no candidate with reject_no_candidate: ERROR", submit(j) == slurm.ERROR)
expect("  the user is told the reasons",
       #user_msgs == 1 and user_msgs[1]:find("a100%-train: does not fit; l40s%-train: PCIe%-only") ~= nil)
settings("reject_no_candidate = false")

-- Fail open: refused, garbage, hung past the deadline, an error in the hook.
plan("", 1)
j = job(recipe)
expect("placectl exit 1: SUCCESS, untouched", submit(j) == slurm.SUCCESS and j.partition == nil)
plan([[{"plan_id": "p-x", "candidates": [{"pool": ]], 0)
j = job(recipe)
expect("garbage: SUCCESS, untouched", submit(j) == slurm.SUCCESS and j.partition == nil)
expect("  one log line", #logged == 1)
plan([[{"plan_id": "p-h", "candidates": [{"pool": "a100-train", "gpu_count": 8}]}]])
write("hang", "")
settings("deadline_s = 0.3")
j = job(recipe)
local started = os.time()
expect("hung placectl: SUCCESS, untouched", submit(j) == slurm.SUCCESS and j.partition == nil)
expect("  killed at the deadline", logged[1]:find("within 0.3 s %(exit 137%)") ~= nil)
expect("  (and not waited for: under 5 s)", os.time() - started < 5)
os.remove(dir .. "/hang")
settings("deadline_s = 0.5")
j = job(recipe)
setmetatable(j.environment, {__newindex = function() error("environment is read-only") end})
expect("an error while placing: SUCCESS", submit(j) == slurm.SUCCESS)
expect("  nothing half-placed", j.partition == "" or j.partition == nil)
expect("  and logged", logged[#logged]:find("environment is read%-only") ~= nil)

-- Recipes only under recipe_roots: elsewhere refused without a call.
plan([[{"plan_id": "p-r", "candidates": [{"pool": "a100-train", "gpu_count": 8}]}]])
os.remove(dir .. "/args.last")
j = job("placement:recipe=/dev/zero")
submit(j)
expect("a recipe outside recipe_roots: untouched", j.partition == nil)
expect("  refused, saying why", logged[1] ~= nil and logged[1]:find("not under recipe_roots") ~= nil)
expect("  no call made", io.open(dir .. "/args.last", "r") == nil)
j = job("placement:recipe=" .. dir .. "-sibling/job.yaml")
submit(j)
expect("a folder sharing the root's prefix is not under it", j.partition == nil and io.open(dir .. "/args.last", "r") == nil)
j = job(recipe)
submit(j)
local args_file = io.open(dir .. "/args.last", "r")
local args = args_file ~= nil and args_file:read("*a") or ""
if args_file ~= nil then args_file:close() end
expect("placectl gets the roots and the size cap",
       args:find("roots=" .. dir:gsub("%p", "%%%0") .. " max=65536", 1) ~= nil)
expect("  and no TLS flags when none are set", args:find("--ca_file", 1, true) == nil)

-- TLS settings become placectl's flags.
settings("ca_file = /etc/slurm/ca.pem\nclient_cert = /etc/slurm/c.pem\nclient_key = /etc/slurm/c.key")
j = job(recipe)
submit(j)
args_file = io.open(dir .. "/args.last", "r")
args = args_file:read("*a")
args_file:close()
expect("TLS: --ca_file, --client_cert, --client_key passed",
       args:find("--ca_file /etc/slurm/ca.pem --client_cert /etc/slurm/c.pem --client_key /etc/slurm/c.key", 1, true) ~= nil)
expect("  and the job placed", j.partition == "gpu-a100")
settings("ca_file =\nclient_cert =\nclient_key =")

-- The circuit breaker: two calls without an answer open it; while open no
-- call is made; after breaker_open_s one call is tried, and an answer
-- closes it.
settings("breaker_failures = 2\nbreaker_open_s = 2")
plan("", 1)
write("plan.stderr", "UNAVAILABLE: failed to connect to all addresses\n")
submit(job(recipe))
expect("one UNAVAILABLE: breaker still closed", (placement.breaker_state()) == 1)
submit(job(recipe))
expect("two: breaker open", logged[1]:find("calls skipped for 2 s") ~= nil)
os.remove(dir .. "/args.last")
j = job(recipe)
expect("while open: SUCCESS, untouched", submit(j) == slurm.SUCCESS and j.partition == nil)
expect("  no call made", io.open(dir .. "/args.last", "r") == nil)
expect("  logged", logged[1]:find("breaker open") ~= nil and logged[1]:find("job left unchanged") ~= nil)
os.remove(dir .. "/plan.stderr")
plan([[{"plan_id": "p-b", "candidates": [{"pool": "a100-train", "gpu_count": 8}]}]])
os.execute("sleep 3")
j = job(recipe)
submit(j)
expect("after breaker_open_s a call is tried and places the job", j.partition == "gpu-a100")
expect("  the breaker is closed again", (placement.breaker_state()) == 0)
-- A server that answers with an error is an answer: the breaker stays shut.
plan("", 1)
write("plan.stderr", "INVALID_ARGUMENT: recipe.model\n")
for _ = 1, 3 do submit(job(recipe)) end
expect("refusals by the server do not open it", (placement.breaker_state()) == 0)
os.remove(dir .. "/plan.stderr")
settings("breaker_failures = 3\nbreaker_open_s = 30")

-- A pool created after the pools were read: left alone this once, then placed.
plan([[{"plan_id": "p-new", "candidates": [{"pool": "h100-train", "gpu_count": 8}]}]])
j = job(recipe)
submit(j)
expect("unknown pool: left alone", j.partition == nil)
write("pools.json", [[{"pools": [{"name": "h100-train", "gpus_per_node": 8, "labels": {}}]}]])
j = job(recipe)
submit(j)
expect("  the next submission re-reads the pools and places it", j.partition == "h100-train")

os.execute("rm -rf " .. dir)
if failures > 0 then
  print(failures .. " FAILED")
  os.exit(1)
end
print("PASSED")
