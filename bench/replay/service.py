"""One placementd on its own fresh database, reached only through the
public gRPC API: pools, plans and run uploads, as a platform team's tooling
would call them."""

import hashlib
import uuid

import grpc
from google.protobuf import duration_pb2  # noqa: F401  (stub dependency)

from placement.v1 import catalog_pb2
from placement.v1 import catalog_pb2_grpc
from placement.v1 import placement_pb2
from placement.v1 import placement_pb2_grpc
from placement.v1 import pool_state_pb2
from placement.v1 import pool_state_pb2_grpc
from placement.v1 import telemetry_pb2
from placement.v1 import telemetry_pb2_grpc

from placementd_launcher import Placementd

MICROS = 1_000_000
TIMEOUT_S = 30
_FABRIC = {"nvlink": catalog_pb2.FABRIC_NVLINK, "pcie": catalog_pb2.FABRIC_PCIE}
_INTER_NODE = {
    "none": catalog_pb2.INTER_NODE_FABRIC_NONE,
    "ethernet": catalog_pb2.INTER_NODE_FABRIC_ETHERNET,
    "roce": catalog_pb2.INTER_NODE_FABRIC_ROCE,
    "infiniband": catalog_pb2.INTER_NODE_FABRIC_INFINIBAND,
}
_OBJECTIVE = {"cost": placement_pb2.OBJECTIVE_LOWEST_COST,
              "time": placement_pb2.OBJECTIVE_SHORTEST_TIME,
              "deadline": placement_pb2.OBJECTIVE_FINISH_BY_DEADLINE,
              "delay": placement_pb2.OBJECTIVE_COST_OF_DELAY}


def _recipe(job, gpu_count):
    """The job's recipe, its GPU count pinned when `gpu_count` is given."""
    if gpu_count is None:
        return job.recipe
    recipe = type(job.recipe)()
    recipe.CopyFrom(job.recipe)
    recipe.gpu_count = gpu_count
    return recipe


class Service:
    """A started placementd with an admin token; stop() drops everything."""

    def __init__(self, name):
        # The fleet model re-fitted whenever the evidence changed: a
        # server re-fits it every 10 s, far less than the time between two
        # jobs of a fleet, and a replay plays those hours in milliseconds,
        # so at 10 s its plans would read a model several jobs old (and
        # which one would depend on the machine's speed).
        self.daemon = Placementd(name, auth=True,
                                 extra_flags=["--fleet_refit_seconds=0"])
        self.evidence_version = 0

    def __enter__(self):
        self.daemon.start()
        channel = self.daemon.channel
        self.metadata = (("authorization", "Bearer " + self.daemon.token),)
        self.catalog = catalog_pb2_grpc.CatalogServiceStub(channel)
        self.placement = placement_pb2_grpc.PlacementServiceStub(channel)
        self.telemetry = telemetry_pb2_grpc.TelemetryServiceStub(channel)
        self.pool_states = pool_state_pb2_grpc.PoolStateServiceStub(channel)
        return self

    def __exit__(self, *exc):
        self.daemon.stop()

    def create_pools(self, pools):
        for p in pools:
            pool = catalog_pb2.Pool(
                name=p["name"], sku=p["sku"], node_count=p["nodes"],
                gpus_per_node=p["gpus_per_node"], fabric=_FABRIC[p["fabric"]],
                purpose=catalog_pb2.POOL_PURPOSE_TRAINING, exclusive=True,
                gpu_quota=p["nodes"] * p["gpus_per_node"],
                internal_rate_micros_per_gpu_hour=round(
                    p["rate_per_gpu_hour"] * MICROS))
            if "list_price_per_gpu_hour" in p:
                pool.list_price_micros_per_gpu_hour = round(
                    p["list_price_per_gpu_hour"] * MICROS)
            if "inter_node_fabric" in p:
                pool.inter_node_fabric = _INTER_NODE[p["inter_node_fabric"]]
            if "inter_node_gb_s" in p:
                pool.inter_node_bandwidth_gb_s_per_gpu = p["inter_node_gb_s"]
            self.catalog.CreatePool(catalog_pb2.CreatePoolRequest(pool=pool),
                                    timeout=TIMEOUT_S, metadata=self.metadata)

    def sku_memory_gb(self, sku):
        reply = self.catalog.GetSku(catalog_pb2.GetSkuRequest(name=sku),
                                    timeout=TIMEOUT_S, metadata=self.metadata)
        return reply.sku.memory_gb

    def plan(self, job, gpu_count=None):
        """PlacePlan for the job; `gpu_count` pins the recipe's GPU count
        (the rest of its layout left as the job has it)."""
        request = placement_pb2.PlacePlanRequest(
            recipe=_recipe(job, gpu_count), total_steps=job.steps,
            team=job.team,
            min_evidence_version=self.evidence_version,
            constraints=placement_pb2.PlanConstraints(
                objective=_OBJECTIVE[job.objective]))
        return self.placement.PlacePlan(request, timeout=TIMEOUT_S,
                                        metadata=self.metadata)

    def upload(self, record, epoch_s, plan_id, team, run_name):
        """Uploads one run record (execution.RunRecord) as an agent would,
        its times on the replay's clock from `epoch_s` (seconds since the
        Unix epoch), its id derived from `run_name`. Returns False when the
        service refuses it as invalid (INVALID_ARGUMENT), as an agent's
        rejected/ would keep it; any other error raises."""
        run_id = str(uuid.UUID(bytes=hashlib.sha256(
            run_name.encode()).digest()[:16], version=4))
        run = record.message(epoch_s, plan_id, team, run_id)
        try:
            reply = self.telemetry.UploadBenchmarkRun(
                telemetry_pb2.UploadBenchmarkRunRequest(run=run),
                timeout=TIMEOUT_S, metadata=self.metadata)
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.INVALID_ARGUMENT:
                return False
            raise
        self.evidence_version = max(self.evidence_version,
                                    reply.evidence_version)
        return True

    def plan_with(self, job, objective, deadline_s=None, delay_per_hour=None,
                  gpu_count=None):
        """A plan with `objective` ("cost", "time", "deadline", "delay"), a
        deadline in seconds and a cost of delay per hour when given, the
        GPU count pinned when given."""
        constraints = placement_pb2.PlanConstraints(
            objective=_OBJECTIVE[objective])
        if deadline_s is not None:
            constraints.deadline.FromNanoseconds(int(deadline_s * 1e9))
        if delay_per_hour is not None:
            constraints.delay_cost_micros_per_hour = round(
                delay_per_hour * MICROS)
        request = placement_pb2.PlacePlanRequest(
            recipe=_recipe(job, gpu_count), total_steps=job.steps,
            team=job.team, min_evidence_version=self.evidence_version,
            constraints=constraints)
        return self.placement.PlacePlan(request, timeout=TIMEOUT_S,
                                        metadata=self.metadata)

    def report(self, state):
        """Reports a pool's state (a PoolState message)."""
        reply = self.pool_states.ReportPoolState(
            pool_state_pb2.ReportPoolStateRequest(state=state),
            timeout=TIMEOUT_S, metadata=self.metadata)
        self.evidence_version = max(self.evidence_version,
                                    reply.evidence_version)
        return reply

    def upload_attempt(self, attempt, start_s, plan_id, team, run_name,
                       submit_s=None):
        """Uploads one attempt as its own run record, its times on the
        simulated clock (seconds since the epoch), with the job's submission
        time when given (the queue worlds)."""
        layout = attempt.layout
        recipe = layout.recipe
        tokens = (recipe.sequence_length * recipe.micro_batch_size *
                  max(1, recipe.data_parallel_degree) *
                  max(1, recipe.gradient_accumulation_steps))
        multi = layout.gpu_count > 1
        run = telemetry_pb2.BenchmarkRun(
            run_id=str(uuid.UUID(bytes=hashlib.sha256(
                run_name.encode()).digest()[:16], version=4)),
            agent_id="fleet-replay", pool=layout.pool, sku=layout.sku,
            gpu_count=layout.gpu_count, recipe=recipe,
            steps_attempted=attempt.steps_attempted,
            steps_succeeded=attempt.steps_kept,
            step_time_mean_seconds=attempt.step_mean_s,
            step_time_p50_seconds=attempt.step_p50_s,
            step_time_p95_seconds=attempt.step_p95_s,
            tokens_per_second=tokens / attempt.step_mean_s,
            peak_memory_gb=attempt.peak_gb,
            offload=telemetry_pb2.OFFLOAD_NONE,
            interconnect=(
                (telemetry_pb2.INTERCONNECT_NVLINK if layout.fabric == "nvlink"
                 else telemetry_pb2.INTERCONNECT_PCIE) if multi
                else telemetry_pb2.INTERCONNECT_NONE),
            collectives_opened=multi, retries=0, outcome=attempt.outcome,
            failure_reason=attempt.failure_reason, exclusive=True,
            plan_id=plan_id, team=team)
        run.start_time.FromNanoseconds(int(start_s * 1e9))
        run.end_time.FromNanoseconds(int((start_s + attempt.seconds) * 1e9))
        if submit_s is not None:
            run.submit_time.FromNanoseconds(int(submit_s * 1e9))
        reply = self.telemetry.UploadBenchmarkRun(
            telemetry_pb2.UploadBenchmarkRunRequest(run=run),
            timeout=TIMEOUT_S, metadata=self.metadata)
        self.evidence_version = max(self.evidence_version,
                                    reply.evidence_version)

