"""Seeds a fresh placementd through its public API, as a fleet would fill
it: three adapter pools, runs of two background recipes on them over the
last days (succeeded, and failed for each pool cause), a plan whose bake-off
is carried out by runs naming it (so that accuracy has outcomes), a standard
written from it and one retired, and plans of other teams. The console's
browser test and its render bench (bench/console_bench.sh) read what it
made back through the same API.
"""

import datetime
import uuid

import grpc

from google.protobuf import timestamp_pb2
from placement.v1 import catalog_pb2
from placement.v1 import catalog_pb2_grpc
from placement.v1 import cost_pb2_grpc
from placement.v1 import placement_pb2
from placement.v1 import placement_pb2_grpc
from placement.v1 import recipe_pb2
from placement.v1 import telemetry_pb2
from placement.v1 import telemetry_pb2_grpc

RPC_TIMEOUT_S = 30


class Api:
    """The four services' stubs, as one token."""

    def __init__(self, channel, token):
        intercepted = grpc.intercept_channel(channel, _Details(token))
        self.catalog = catalog_pb2_grpc.CatalogServiceStub(intercepted)
        self.telemetry = telemetry_pb2_grpc.TelemetryServiceStub(intercepted)
        self.placement = placement_pb2_grpc.PlacementServiceStub(intercepted)
        self.cost = cost_pb2_grpc.CostServiceStub(intercepted)


class _Details(grpc.UnaryUnaryClientInterceptor):
    def __init__(self, token):
        self._token = token

    def intercept_unary_unary(self, continuation, details, request):
        metadata = tuple(details.metadata or ()) + (
            ("authorization", f"Bearer {self._token}"),)
        return continuation(_CallDetails(details, metadata), request)


class _CallDetails(grpc.ClientCallDetails):
    def __init__(self, details, metadata):
        self.method = details.method
        self.timeout = details.timeout
        self.metadata = metadata
        self.credentials = details.credentials
        self.wait_for_ready = details.wait_for_ready
        self.compression = details.compression


POOLS = [
    # name, SKU, fabric, rate, list price, team
    ("a100-adapters", "A100-SXM4-80GB", catalog_pb2.FABRIC_NVLINK, 990_000,
     4_100_000, "nlp"),
    ("h100-adapters", "H100-SXM5-80GB", catalog_pb2.FABRIC_NVLINK, 2_700_000,
     None, "vision"),
    ("l40s-adapters", "L40S-PCIE-48GB", catalog_pb2.FABRIC_PCIE, 900_000,
     1_900_000, "ml-platform"),
]
SKU_OF = {name: sku for name, sku, *_ in POOLS}

# Per pool, the outcomes of the background runs, cycled over the days: each
# pool fails in its own ways (node, fabric, memory).
FAILURES = {
    "a100-adapters": [telemetry_pb2.RUN_OUTCOME_PREEMPTED,
                      telemetry_pb2.RUN_OUTCOME_COLLECTIVE_TIMEOUT],
    "h100-adapters": [telemetry_pb2.RUN_OUTCOME_HARDWARE_ERROR,
                      telemetry_pb2.RUN_OUTCOME_FAILED],
    "l40s-adapters": [telemetry_pb2.RUN_OUTCOME_OUT_OF_MEMORY,
                      telemetry_pb2.RUN_OUTCOME_PREEMPTED],
}


def _time(t):
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(t)
    return stamp


def _background_recipe(gpus):
    return recipe_pb2.Recipe(
        model="Mistral-7B", method=recipe_pb2.FINE_TUNE_METHOD_LORA,
        lora_rank=8, target_modules=["q", "v"], sequence_length=1024,
        micro_batch_size=2, precision=recipe_pb2.PRECISION_BF16,
        gpu_count=gpus,
        parallelism=(recipe_pb2.PARALLELISM_SINGLE if gpus == 1
                     else recipe_pb2.PARALLELISM_DDP))


def _run(pool, gpus, end, hours, steps, kept, outcome, step_s, peak,
         plan_id="", recipe=None, evals=(), team=""):
    start = end - datetime.timedelta(hours=hours)
    return telemetry_pb2.BenchmarkRun(
        run_id=str(uuid.uuid4()), agent_id="console-seed", pool=pool,
        sku=SKU_OF[pool], gpu_count=gpus,
        recipe=recipe or _background_recipe(gpus),
        start_time=_time(start), end_time=_time(end),
        steps_attempted=steps, steps_succeeded=kept,
        step_time_mean_seconds=step_s, step_time_p50_seconds=step_s,
        step_time_p95_seconds=step_s * 1.1, tokens_per_second=3000,
        peak_memory_gb=peak, offload=telemetry_pb2.OFFLOAD_NONE,
        interconnect=(telemetry_pb2.INTERCONNECT_NONE if gpus == 1
                      else telemetry_pb2.INTERCONNECT_NVLINK),
        collectives_opened=gpus > 1, outcome=outcome, exclusive=True,
        failure_reason=("" if outcome == telemetry_pb2.RUN_OUTCOME_SUCCEEDED
                        else "seeded failure"),
        plan_id=plan_id, evals=list(evals), team=team)


def _upload(api, run):
    api.telemetry.UploadBenchmarkRun(
        telemetry_pb2.UploadBenchmarkRunRequest(run=run),
        timeout=RPC_TIMEOUT_S)


def seed_pools(api):
    for name, sku, fabric, rate, list_price, team in POOLS:
        pool = catalog_pb2.Pool(
            name=name, sku=sku, node_count=1, gpus_per_node=4, fabric=fabric,
            purpose=catalog_pb2.POOL_PURPOSE_TRAINING, exclusive=True,
            gpu_quota=4, internal_rate_micros_per_gpu_hour=rate,
            labels={"team": team})
        if list_price:
            pool.list_price_micros_per_gpu_hour = list_price
        api.catalog.CreatePool(
            catalog_pb2.CreatePoolRequest(pool=pool, request_id=f"seed-{name}"),
            timeout=RPC_TIMEOUT_S)


def seed_background_runs(api, days, now):
    """Per pool and day: a 1-GPU and a 2-GPU run that succeed, and on every
    other day a failure of the pool's kinds. Figures vary by day, so that
    daily cost per successful step has a band."""
    count = 0
    for index, (pool, *_rest) in enumerate(POOLS):
        for day in range(days):
            end = now - datetime.timedelta(days=day, hours=1 + index)
            slow = 1 + 0.1 * ((day + index) % 3)
            for gpus in (1, 2):
                _upload(api, _run(pool, gpus, end, 1.0 * slow, 3000, 3000,
                                  telemetry_pb2.RUN_OUTCOME_SUCCEEDED,
                                  1.1 * slow / gpus, 20 + gpus))
                count += 1
            if day % 2 == 0:
                outcome = FAILURES[pool][(day // 2) % 2]
                gpus = 2 if outcome == telemetry_pb2.RUN_OUTCOME_COLLECTIVE_TIMEOUT else 1
                _upload(api, _run(pool, gpus, end - datetime.timedelta(hours=2),
                                  0.5, 1500, 600, outcome, 1.2, 21))
                count += 1
    return count


BAKE_OFF_REQUEST = dict(
    recipe=recipe_pb2.Recipe(
        model="Llama-3.1-8B", method=recipe_pb2.FINE_TUNE_METHOD_LORA,
        lora_rank=16, sequence_length=2048, gpu_count=1),
    total_steps=200000,
    serving=placement_pb2.ServingTarget(sku="L40S-PCIE-48GB",
                                        precision=recipe_pb2.PRECISION_FP8))


def seed_bake_off(api, planner, team, now):
    """A plan with a bake-off, carried out: each proposed run (and the first
    choice, which the job itself measures) uploaded naming the plan, with an
    eval on the serving SKU. Returns the plan's id."""
    request = placement_pb2.PlacePlanRequest(
        team=team, constraints=placement_pb2.PlanConstraints(
            allowed_pools=[name for name, *_ in POOLS]),
        **BAKE_OFF_REQUEST)
    plan = planner.placement.PlacePlan(request, timeout=RPC_TIMEOUT_S)
    wanted = {run.pool for run in plan.bake_off.runs}
    wanted.add(plan.candidates[0].pool)
    end = now - datetime.timedelta(minutes=5)
    for c in plan.candidates:
        if c.pool not in wanted:
            continue
        evals = []
        if plan.eval_requirement:
            evals = [telemetry_pb2.EvalResult(
                serving_sku=plan.eval_status.serving_sku,
                serving_precision=plan.eval_status.serving_precision,
                metric_name="exact_match", score=0.71)]
        # Observed a little off the prediction, so accuracy has errors.
        _upload(api, _run(c.pool, c.gpu_count, end,
                          (120 + 200 * c.step_time_s * 1.05) / 3600, 200, 200,
                          telemetry_pb2.RUN_OUTCOME_SUCCEEDED,
                          c.step_time_s * 1.05, c.peak_memory_gb * 0.97,
                          plan_id=plan.plan_id, recipe=c.recipe, evals=evals,
                          team=team))
    return plan.plan_id


def seed_standards(admin, plan_id):
    """A standard from the bake-off's winner, and an earlier one retired.
    Returns (in force, retired) ids."""
    status = admin.placement.GetBakeOffStatus(
        placement_pb2.GetBakeOffStatusRequest(plan_id=plan_id),
        timeout=RPC_TIMEOUT_S)
    plan = admin.placement.GetPlan(
        placement_pb2.GetPlanRequest(plan_id=plan_id), timeout=RPC_TIMEOUT_S)
    pool = status.verdict.winner_pool or plan.plan.candidates[0].pool
    retired = admin.placement.WriteStandard(placement_pb2.WriteStandardRequest(
        request_id="seed-standard-first", plan_id=plan_id, pool=pool,
        reason="first reading of the bake-off"), timeout=RPC_TIMEOUT_S)
    admin.placement.RetireStandard(placement_pb2.RetireStandardRequest(
        standard_id=retired.standard.standard_id,
        reason="superseded once the eval passed"), timeout=RPC_TIMEOUT_S)
    active = admin.placement.WriteStandard(placement_pb2.WriteStandardRequest(
        request_id="seed-standard", plan_id=plan_id, pool=pool,
        reason="won the equal-settings bake-off; FP8 eval passed on the L40S"),
        timeout=RPC_TIMEOUT_S)
    return active.standard.standard_id, retired.standard.standard_id


def seed_other_plans(planner):
    """Plans of other teams: one that fits on every pool, one (a 70B full
    fine-tune) that every pool rejects."""
    ids = []
    for team, recipe in (
            ("vision", recipe_pb2.Recipe(
                model="Qwen2.5-7B", method=recipe_pb2.FINE_TUNE_METHOD_QLORA,
                lora_rank=16, sequence_length=4096)),
            ("research", recipe_pb2.Recipe(
                model="Llama-3.1-70B", method=recipe_pb2.FINE_TUNE_METHOD_FULL,
                sequence_length=4096))):
        plan = planner.placement.PlacePlan(placement_pb2.PlacePlanRequest(
            recipe=recipe, total_steps=5000, team=team),
            timeout=RPC_TIMEOUT_S)
        ids.append(plan.plan_id)
    return ids


def make_token(admin, role, name):
    created = admin.catalog.CreateToken(
        catalog_pb2.CreateTokenRequest(name=name, role=role),
        timeout=RPC_TIMEOUT_S)
    return created.secret


def seed(channel, admin_token, days=6):
    """Seeds everything; returns what the test reads back."""
    now = datetime.datetime.now(datetime.timezone.utc)
    admin = Api(channel, admin_token)
    tokens = {
        "planner": make_token(admin, catalog_pb2.ROLE_PLANNER, "console-planner"),
        "finance": make_token(admin, catalog_pb2.ROLE_FINANCE, "console-finance"),
        "agent": make_token(admin, catalog_pb2.ROLE_AGENT, "console-agent"),
    }
    planner = Api(channel, tokens["planner"])
    seed_pools(admin)
    runs = seed_background_runs(admin, days, now)
    bake_off_plan = seed_bake_off(admin, planner, "ml-platform", now)
    active, retired = seed_standards(admin, bake_off_plan)
    other_plans = seed_other_plans(planner)
    return {
        "tokens": tokens,
        "runs": runs,
        "bake_off_plan": bake_off_plan,
        "other_plans": other_plans,
        "standard": active,
        "retired_standard": retired,
    }
