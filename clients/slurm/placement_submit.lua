-- placement_submit: places opted-in Slurm jobs where PlacePlan says they
-- should run. Loaded by job_submit.lua (or by a site's own job_submit.lua:
-- `local placement = require("placement_submit")` and call
-- `placement.submit(job_desc, part_list, submit_uid)` from slurm_job_submit).
--
-- Runs inside slurmctld under the job_submit/lua plugin's global lock, so a
-- slow call here delays every submission, sinfo and scontrol on the cluster.
-- Hence: one external call under a hard deadline (timeout -s KILL), and on
-- any trouble the job is accepted as it came, with one log line.
--
-- Lua 5.1 (Slurm links liblua5.1); JSON through lua-cjson.

local M = {}

-- Settings (placement_submit.conf beside slurm.conf overrides them; see
-- docs/SLURM.md).
M.defaults = {
  -- The placectl binary and how it reaches placementd.
  placectl = "/usr/local/bin/placectl",
  server = "127.0.0.1:50051",
  token_file = "/etc/slurm/placement.token", -- planner role; "" for none
  -- TLS to placementd: the CA that signed its certificate (TLS on when
  -- set), and a client certificate and key for mutual TLS.
  ca_file = "",
  client_cert = "",
  client_key = "",
  -- Folders recipes may be read from, separated by ':' (the shared project
  -- file systems). Required: the hook reads files as SlurmUser on the
  -- submitter's word, so a recipe elsewhere is refused without a call.
  -- placectl checks the file again with symlinks and ".." resolved.
  recipe_roots = "",
  -- Larger recipe files are refused (recipes are a few hundred bytes).
  recipe_max_bytes = 65536,
  -- The whole call, fork to exit, is killed after this many seconds.
  deadline_s = 0.5,
  -- placectl's own deadline for each RPC: below deadline_s, so that a slow
  -- server is reported as such instead of killed.
  rpc_timeout = "400ms",
  -- A pool label naming its Slurm partition; the pool's name when absent.
  partition_label = "slurm-partition",
  -- When no pool can take the recipe: accept the job unchanged (false) or
  -- reject it with the plan's reasons (true).
  reject_no_candidate = false,
  -- How long the pools' GPUs per node and partitions are reused before they
  -- are read again (one more RPC on the submission that reads them).
  pools_ttl_s = 300,
  timeout = "/usr/bin/timeout",
  -- Circuit breaker: after this many consecutive calls that got no answer
  -- (killed at the deadline, UNAVAILABLE, DEADLINE_EXCEEDED), jobs are left
  -- unchanged without a call for breaker_open_s seconds; then one call is
  -- tried again. 0 turns the breaker off.
  breaker_failures = 3,
  breaker_open_s = 30,
}

local cjson_ok, cjson = pcall(require, "cjson.safe")
if not cjson_ok then cjson_ok, cjson = pcall(require, "cjson") end

local settings = {}
for k, v in pairs(M.defaults) do settings[k] = v end

-- Reads `key = value` lines (# comments) into the settings; unknown keys
-- are logged and ignored.
function M.configure(path)
  local file = io.open(path, "r")
  if file == nil then return end
  for line in file:lines() do
    local key, value = line:match("^%s*([%w_]+)%s*=%s*(.-)%s*$")
    if key ~= nil and not line:match("^%s*#") then
      local default = M.defaults[key]
      if default == nil then
        M.log("unknown setting '" .. key .. "' in " .. path .. " (ignored)")
      elseif type(default) == "number" then
        settings[key] = tonumber(value) or default
      elseif type(default) == "boolean" then
        settings[key] = (value == "true" or value == "yes" or value == "1")
      else
        settings[key] = value
      end
    end
  end
  file:close()
end

function M.setting(key) return settings[key] end

function M.log(text)
  if slurm ~= nil and slurm.log_info ~= nil then
    slurm.log_info("placement: %s", text)
  else
    io.stderr:write("placement: ", text, "\n")
  end
end

local function now() return os.time() end

-- The recipe a job opts in with: --comment=placement:recipe=/path/job.yaml
-- (anywhere in the comment, ended by whitespace, ',' or ';'). nil when the
-- job did not opt in.
function M.recipe_of(job_desc)
  local comment = job_desc.comment
  if type(comment) ~= "string" then return nil end
  return comment:match("placement:recipe=([^%s,;]+)")
end

-- Paths are passed to a shell: only plain path characters are accepted.
local function safe_path(path)
  return path:match("^/[%w%._/%-]+$") ~= nil and path:find("%.%.") == nil
end

-- The folders of recipe_roots, each without a trailing '/'.
local function recipe_roots()
  local roots = {}
  for root in settings.recipe_roots:gmatch("[^:%s]+") do
    roots[#roots + 1] = root:gsub("/+$", "")
  end
  return roots
end

-- Whether `path` (already a safe_path) names a file under one of the roots.
-- placectl checks again after resolving symlinks, on the open file.
local function under_roots(path)
  for _, root in ipairs(recipe_roots()) do
    if path:sub(1, #root + 1) == root .. "/" then return true end
  end
  return false
end

-- The circuit breaker's state: consecutive calls without an answer, and
-- until when calls are skipped. Kept in this Lua state, so a reload of the
-- script (scontrol reconfigure, a new job_submit.lua) closes it.
local breaker = {failures = 0, open_until = 0}

local function breaker_open()
  return settings.breaker_failures > 0 and now() < breaker.open_until
end

local function note_call(answered)
  if answered then
    if breaker.failures >= settings.breaker_failures and settings.breaker_failures > 0 then
      M.log("placementd answers again; calls resume")
    end
    breaker.failures = 0
    return
  end
  breaker.failures = breaker.failures + 1
  if settings.breaker_failures > 0 and breaker.failures >= settings.breaker_failures then
    breaker.open_until = now() + settings.breaker_open_s
    M.log(breaker.failures .. " calls in a row without an answer from " .. settings.server ..
          "; calls skipped for " .. settings.breaker_open_s .. " s")
  end
end

function M.breaker_state() return breaker.failures, breaker.open_until end

local function shquote(text)
  return "'" .. text:gsub("'", "'\\''") .. "'"
end

-- pool name -> {gpus_per_node = N, partition = "name"}, and when it was read.
local pools = nil
local pools_read_at = 0
local pools_stale = true

local function placectl_command(args)
  -- The recipe limits reach placectl through its environment.
  local parts = {"PLACEMENT_RECIPE_ROOTS=" .. shquote(settings.recipe_roots),
                 "PLACEMENT_RECIPE_MAX_BYTES=" .. shquote(tostring(settings.recipe_max_bytes)),
                 shquote(settings.placectl), "--server", shquote(settings.server),
                 "--rpc_timeout", shquote(settings.rpc_timeout)}
  for _, flag in ipairs({{"token_file", "token_file"}, {"ca_file", "ca_file"},
                         {"client_cert", "client_cert"}, {"client_key", "client_key"}}) do
    local value = settings[flag[1]]
    if value ~= "" then
      parts[#parts + 1] = "--" .. flag[2]
      parts[#parts + 1] = shquote(value)
    end
  end
  return table.concat(parts, " ") .. " " .. args
end

-- One shell, killed whole at the deadline (timeout signals its process
-- group): the plan, then (when the pools are due to be read) the pools.
-- Markers after each part carry its exit status; the plan's stderr goes to
-- `stderr_path` (for the log line), the rest of stderr is dropped.
local function run_placectl(recipe, read_pools, stderr_path)
  local script = placectl_command("plan --json --recipe " .. shquote(recipe)) ..
                 " 2>" .. shquote(stderr_path) .. "; e=$?; echo; echo @@plan-exit $e"
  if read_pools then
    script = script .. "; " .. placectl_command("pools list --json") ..
             "; e=$?; echo; echo @@pools-exit $e"
  end
  local command = table.concat({shquote(settings.timeout), "-s", "KILL",
                                tostring(settings.deadline_s), "/bin/sh", "-c",
                                shquote(script)}, " ") ..
                  " 2>/dev/null; echo @@exit $?"
  local pipe = io.popen(command, "r")
  if pipe == nil then return nil end
  local output = pipe:read("*a")
  pipe:close()
  return output
end

-- The first line placectl wrote to stderr (why it failed), at most 200
-- characters; the file is removed.
local function first_line(path)
  if path == "/dev/null" then return "" end
  local file = io.open(path, "r")
  local line = file ~= nil and file:read("*l") or nil
  if file ~= nil then file:close() end
  os.remove(path)
  return line ~= nil and line:sub(1, 200) or ""
end

-- Splits run_placectl's output into its parts.
local function split_output(output)
  local result = {}
  result.plan_json, result.plan_exit = output:match("^(.-)\n@@plan%-exit (%d+)\n")
  result.pools_json, result.pools_exit =
    output:match("\n@@plan%-exit %d+\n(.-)\n@@pools%-exit (%d+)\n")
  result.exit = output:match("@@exit (%d+)%s*$")
  result.plan_exit = tonumber(result.plan_exit)
  result.pools_exit = tonumber(result.pools_exit)
  result.exit = tonumber(result.exit)
  return result
end

local function read_pools(json)
  local decoded = cjson.decode(json)
  if type(decoded) ~= "table" or type(decoded.pools) ~= "table" then return false end
  local table_ = {}
  for _, pool in ipairs(decoded.pools) do
    if type(pool) == "table" and type(pool.name) == "string" then
      local labels = type(pool.labels) == "table" and pool.labels or {}
      local partition = labels[settings.partition_label]
      if type(partition) ~= "string" or partition == "" then partition = pool.name end
      table_[pool.name] = {gpus_per_node = tonumber(pool.gpus_per_node) or 0,
                           partition = partition}
    end
  end
  pools = table_
  pools_read_at = now()
  pools_stale = false
  return true
end

local function reasons_of(plan)
  local reasons = {}
  if type(plan.rejections) == "table" then
    for _, r in ipairs(plan.rejections) do
      if type(r) == "table" then
        reasons[#reasons + 1] = tostring(r.pool) .. ": " .. tostring(r.reason)
      end
    end
  end
  if #reasons == 0 then reasons[1] = "no pool can take this recipe" end
  return table.concat(reasons, "; ")
end

-- What the plan asks of the job, or nil and why not.
local function placement_of(plan)
  local best = type(plan.candidates) == "table" and plan.candidates[1] or nil
  if type(best) ~= "table" or type(best.pool) ~= "string" then
    return nil, "the plan has no candidate"
  end
  local gpus = tonumber(best.gpu_count) or 0
  local pool = pools ~= nil and pools[best.pool] or nil
  if pool == nil then
    pools_stale = true
    return nil, "pool " .. best.pool .. " is not among the pools read (they are re-read on the next submission)"
  end
  if gpus < 1 or pool.gpus_per_node < 1 then
    return nil, "pool " .. best.pool .. ": " .. gpus .. " GPUs, " .. pool.gpus_per_node .. " per node"
  end
  local nodes = math.ceil(gpus / pool.gpus_per_node)
  if gpus % nodes ~= 0 then
    return nil, gpus .. " GPUs do not split evenly over " .. nodes .. " nodes"
  end
  return {plan_id = plan.plan_id, pool = best.pool, partition = pool.partition,
          gpus = gpus, nodes = nodes, gpus_per_node = gpus / nodes,
          basis = type(best.basis) == "string" and best.basis or "unknown"}
end

local function apply(job_desc, p)
  job_desc.partition = p.partition
  job_desc.tres_per_job = ""
  job_desc.tres_per_node = "gres:gpu:" .. p.gpus_per_node
  job_desc.min_nodes = p.nodes
  job_desc.max_nodes = p.nodes
  local note = "placement:plan=" .. p.plan_id
  local admin = job_desc.admin_comment
  job_desc.admin_comment = (type(admin) == "string" and admin ~= "") and
                           (admin .. " " .. note) or note
  -- Batch jobs only: srun/salloc requests carry no environment here.
  if job_desc.script ~= nil then
    job_desc.environment.PLACEMENT_PLAN_ID = p.plan_id
    job_desc.environment.PLACEMENT_POOL = p.pool
  end
end

-- The decision for one submission. Returns slurm.SUCCESS or slurm.ERROR.
local function decide(job_desc)
  local recipe = M.recipe_of(job_desc)
  if recipe == nil then return slurm.SUCCESS end  -- not opted in
  if job_desc.partition ~= nil and job_desc.partition ~= "" then
    return slurm.SUCCESS  -- the user chose; no call
  end
  if not safe_path(recipe) then
    M.log("recipe path '" .. recipe .. "' refused (an absolute path of letters, digits, . _ - /); job left unchanged")
    return slurm.SUCCESS
  end
  if not under_roots(recipe) then
    local why = settings.recipe_roots == "" and
                "recipe_roots is not set in placement_submit.conf" or
                ("not under recipe_roots " .. settings.recipe_roots)
    M.log("recipe path '" .. recipe .. "' refused (" .. why .. "); job left unchanged")
    return slurm.SUCCESS
  end
  if not cjson_ok then
    M.log("lua-cjson is not installed; job left unchanged")
    return slurm.SUCCESS
  end
  if breaker_open() then
    M.log("no call: " .. settings.server .. " did not answer the last " ..
          breaker.failures .. " calls (breaker open for " ..
          (breaker.open_until - now()) .. " s more); job left unchanged")
    return slurm.SUCCESS
  end
  local want_pools = pools == nil or pools_stale or
                     now() - pools_read_at >= settings.pools_ttl_s
  local have_tmp, stderr_path = pcall(os.tmpname)
  if not have_tmp then stderr_path = "/dev/null" end
  local output = run_placectl(recipe, want_pools, stderr_path)
  local stderr_line = first_line(stderr_path)
  if output == nil then
    M.log("could not run placectl; job left unchanged")
    return slurm.SUCCESS
  end
  local parts = split_output(output)
  -- No answer: killed at the deadline, or placectl's own call ran out of
  -- time or found no server.
  note_call(parts.plan_exit ~= nil and
            not (parts.plan_exit == 1 and
                 (stderr_line:find("UNAVAILABLE", 1, true) or
                  stderr_line:find("DEADLINE_EXCEEDED", 1, true))))
  if parts.plan_exit == nil then
    M.log("no answer from " .. settings.server .. " within " .. settings.deadline_s .. " s (exit " .. tostring(parts.exit) .. "); job left unchanged")
    return slurm.SUCCESS
  end
  if parts.pools_exit == 0 and parts.pools_json ~= nil then
    read_pools(parts.pools_json)  -- unreadable: placement_of says so below
  end
  if parts.plan_exit ~= 0 and parts.plan_exit ~= 3 then
    M.log("placectl exit " .. parts.plan_exit .. " (" .. stderr_line .. ") from " ..
          settings.server .. " for " .. recipe .. "; job left unchanged")
    return slurm.SUCCESS
  end
  local plan = cjson.decode(parts.plan_json)
  if type(plan) ~= "table" or type(plan.plan_id) ~= "string" then
    M.log("placectl printed no plan for recipe " .. recipe .. "; job left unchanged")
    return slurm.SUCCESS
  end
  local p, why = placement_of(plan)
  if p == nil then
    if parts.plan_exit == 3 and settings.reject_no_candidate then
      M.log("plan " .. plan.plan_id .. ": no candidate; job rejected")
      slurm.user_msg("placement: plan " .. plan.plan_id .. " found no pool for " .. recipe .. ": " .. reasons_of(plan))
      return slurm.ERROR
    end
    M.log("plan " .. plan.plan_id .. ": " .. why .. "; job left unchanged")
    return slurm.SUCCESS
  end
  -- All or nothing: a job half placed (a partition without its GPUs) would
  -- be worse than one left alone.
  local fields = {"partition", "tres_per_job", "tres_per_node", "min_nodes",
                  "max_nodes", "admin_comment"}
  local before = {}
  for _, field in ipairs(fields) do before[field] = job_desc[field] end
  local applied, err = pcall(apply, job_desc, p)
  if not applied then
    for _, field in ipairs(fields) do
      local value = before[field]
      if value == nil then value = "" end
      pcall(function() job_desc[field] = value end)
    end
    error(err, 0)
  end
  M.log(string.format("plan %s: partition %s, %d node(s) x %d GPU(s), evidence %s",
                      p.plan_id, p.partition, p.nodes, p.gpus_per_node, p.basis))
  return slurm.SUCCESS
end

-- slurm_job_submit's body: never raises, never waits past the deadline.
function M.submit(job_desc, part_list, submit_uid)
  local ok, result = pcall(decide, job_desc)
  if not ok then
    M.log("error (" .. tostring(result) .. "); job left unchanged")
    return slurm.SUCCESS
  end
  return result
end

return M
